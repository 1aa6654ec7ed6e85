//! The commands' bodies: main.rs parses the command line and calls one of these.

mod files;
mod live;

pub(crate) use files::{read, stats};
pub(crate) use live::{live, tui};

use kwire::CaptureError;
use kwire::{End, RunStats};
use std::process::ExitCode;

/// One line per capture problem, with a hint at the fix; exit status 1.
pub(crate) fn open_failed(what: &str, e: CaptureError) -> ExitCode {
    let (message, hint) = e.explain(what);
    eprintln!("kwire: {message}");
    if let Some(h) = hint {
        eprintln!("hint: {h}");
    }
    ExitCode::from(1)
}

/// Exit status 2 when the capture ended damaged.
pub(crate) fn ended(end: End) -> ExitCode {
    match end {
        End::Complete => ExitCode::SUCCESS,
        End::Damaged(e) => {
            eprintln!("kwire: {e}");
            ExitCode::from(2)
        }
    }
}

/// The end-of-run statistics, on stderr.
pub(crate) fn report(s: &RunStats) {
    eprint!("{}", kwire::report_text(s));
}

pub(crate) fn interfaces() -> ExitCode {
    let devices = match pcap::Device::list() {
        Ok(d) => d,
        Err(e) => {
            eprintln!("kwire: cannot list interfaces: {e}");
            return ExitCode::from(1);
        }
    };
    for d in devices {
        let mut flags = Vec::new();
        if d.flags.is_up() {
            flags.push("up");
        }
        if d.flags.is_running() {
            flags.push("running");
        }
        if d.flags.is_loopback() {
            flags.push("loopback");
        }
        if d.flags.is_wireless() {
            flags.push("wireless");
        }
        let addrs: Vec<String> = d.addresses.iter().map(|a| a.addr.to_string()).collect();
        println!(
            "{:<16} {:<28} [{}]{}",
            d.name,
            if addrs.is_empty() {
                "-".to_string()
            } else {
                addrs.join(", ")
            },
            flags.join(", "),
            d.desc.map(|s| format!("  {s}")).unwrap_or_default()
        );
    }
    ExitCode::SUCCESS
}
