//! The commands' bodies: main.rs parses the command line and calls one of these.

mod docs;
mod files;
mod live;
mod progress;

pub(crate) use docs::{completions, man};
pub(crate) use files::{read, stats};
pub(crate) use live::{live, tui};

use kwire::CaptureError;
use kwire::{Codec, DecodeOptions, Record, Search};
use kwire::{Config, End, RunStats};
use std::collections::HashSet;
use std::path::PathBuf;
use std::process::ExitCode;

/// Loads Kafka's schemas from `--schemas`, else `KWIRE_SCHEMAS`, else the kafka-clients
/// jars found in `$KAFKA_HOME/libs` and `~/.m2` (newest first), and makes them the
/// process-wide codec. One stderr line says what was loaded, and one per file skipped.
/// `KWIRE_SCHEMAS` set but empty means none and no notes (tests rely on it).
pub(crate) fn load_schemas(paths: &[PathBuf], show_secrets: bool) -> Notes {
    let search = Search::from_env(paths.to_vec());
    let opted_out = paths.is_empty() && search.env.as_ref().is_some_and(|e| e.is_empty());
    let loaded = search.load();
    for p in &loaded.problems {
        errln!("kwire: schemas: {p}");
    }
    if !opted_out {
        errln!("{}", loaded.description);
    }
    let codec = Codec::new(loaded.schemas, DecodeOptions { show_secrets });
    // Only main sets it, once, before any message is decoded.
    let _ = kwire::install_codec(codec);
    Notes {
        codec: (!opted_out).then_some(codec),
        seen: HashSet::new(),
    }
}

/// Says once per run why bodies of an API are not decoded ("Produce bodies are not
/// decoded: no schemas loaded; see --schemas").
pub(crate) struct Notes {
    codec: Option<Codec>,
    seen: HashSet<String>,
}

impl Notes {
    pub(crate) fn see(&mut self, r: &Record<'_>) {
        if let Some(note) = self.note(r) {
            self.say(&note);
        }
    }

    /// What [`Notes::see`] would say of `r`.
    pub(crate) fn note(&self, r: &Record<'_>) -> Option<String> {
        self.codec.and_then(|c| c.undecoded_note(&r.msg))
    }

    /// Says `note` unless it was said before.
    pub(crate) fn say(&mut self, note: &str) {
        // Bounded by the number of API keys and versions.
        if !self.seen.contains(note) {
            errln!("kwire: {note}");
            self.seen.insert(note.to_string());
        }
    }

    /// The part of the notes that renders on other threads: the codec.
    pub(crate) fn sayer(&self) -> Notes {
        Notes {
            codec: self.codec,
            seen: HashSet::new(),
        }
    }
}

/// One line per capture problem, with a hint at the fix; exit status 1.
pub(crate) fn open_failed(what: &str, e: CaptureError) -> ExitCode {
    let (message, hint) = e.explain(what);
    errln!("kwire: {message}");
    if let Some(h) = hint {
        errln!("hint: {h}");
    }
    ExitCode::from(1)
}

/// The configuration of a run over `file` (if any): TLS keys from the flag or
/// `SSLKEYLOGFILE`, and from the file's pcapng Decryption Secrets Blocks.
/// An unreadable key log is an error (exit status 1).
pub(crate) fn configure(
    mut cfg: kwire::Config,
    files: &[String],
) -> Result<kwire::Config, ExitCode> {
    if let Err(e) = cfg.keys.check() {
        errln!("kwire: {e}");
        return Err(ExitCode::from(1));
    }
    for f in files {
        cfg.keys.add_pcapng_secrets(std::path::Path::new(f));
    }
    Ok(cfg)
}

/// Exit status 2 when the capture ended damaged.
pub(crate) fn ended(end: End) -> ExitCode {
    match end {
        End::Complete => ExitCode::SUCCESS,
        End::Damaged(e) => {
            errln!("kwire: {e}");
            ExitCode::from(2)
        }
    }
}

/// The end-of-run statistics, on stderr.
pub(crate) fn report(s: &RunStats) {
    err!("{}", kwire::report_text(s));
}

/// When no connection was Kafka, why: the busiest ports, and a `--port` to try.
pub(crate) fn nothing_found(s: &RunStats, cfg: &Config) {
    if let Some(line) = kwire::nothing_found_text(s, &cfg.kafka.ports) {
        err!("{line}");
    }
}

pub(crate) fn interfaces() -> ExitCode {
    let devices = match pcap::Device::list() {
        Ok(d) => d,
        Err(e) => {
            errln!("kwire: cannot list interfaces: {e}");
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
