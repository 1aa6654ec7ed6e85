//! The `kwire` command line.
#![forbid(unsafe_code)]

use clap::{Args, Parser, Subcommand, ValueEnum};
use kwire::capture::{CaptureError, LiveOptions, Source};
use kwire::pipeline::{self, Config, End, Limits, RunStats, parse_size};
use kwire::select::{Filter, Selection};
use kwire::view::printer::{Format, Printer};
use std::io::{self, Write};
use std::ops::ControlFlow;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

#[derive(Parser)]
#[command(
    name = "kwire",
    version,
    about = "Dissects Apache Kafka traffic from captures"
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Read a pcap or pcapng file (`-` for standard input) and print every Kafka message.
    Read(ReadArgs),
    /// Capture live from an interface and print Kafka messages as they complete.
    Live(LiveArgs),
    /// Read a capture and report elections, coordinators, and per-API latency and errors.
    Stats(StatsArgs),
    /// Browse a capture file, or live traffic (-i), in a three-pane terminal UI.
    Tui(TuiArgs),
    /// List the interfaces kwire can capture on.
    Interfaces,
}

#[derive(Args)]
struct LiveArgs {
    /// Interface to capture on (see `kwire interfaces`).
    #[arg(short = 'i', long = "interface", value_name = "IFACE")]
    iface: String,
    /// Capture filter (BPF, as for tcpdump); Kafka is found within it by detection.
    #[arg(short = 'f', long = "bpf", default_value = "tcp", value_name = "BPF")]
    bpf: String,
    /// Also write the captured packets to this pcap file.
    #[arg(short = 'w', long = "write", value_name = "OUT.pcap")]
    write: Option<std::path::PathBuf>,
    /// Stop after this many seconds.
    #[arg(long, value_name = "SECS")]
    duration: Option<f64>,
    /// Kernel capture buffer.
    #[arg(long, default_value = "64M", value_parser = parse_size)]
    kernel_buffer: usize,
    #[command(flatten)]
    out: OutputArgs,
}

#[derive(Args)]
struct TuiArgs {
    /// Capture file to browse; it loads in the background.
    #[arg(required_unless_present = "iface", conflicts_with = "iface")]
    file: Option<String>,
    /// Show live traffic from this interface instead.
    #[arg(short = 'i', long = "interface", value_name = "IFACE")]
    iface: Option<String>,
    /// Capture filter for -i (BPF, as for tcpdump).
    #[arg(short = 'f', long = "bpf", default_value = "tcp", value_name = "BPF")]
    bpf: String,
    /// Display filter to start with (as `/` in the TUI).
    #[arg(short = 'Y', long = "filter", value_name = "FILTER")]
    filter: Option<String>,
    #[command(flatten)]
    common: Common,
}

impl OutputArgs {
    fn printer(&self, line_flush: bool) -> Result<Printer, String> {
        let select = Selection::new(&self.api, self.filter.as_deref())?;
        Ok(Printer::new(self.format, select, self.count, line_flush))
    }
}

#[derive(Args)]
struct ReadArgs {
    /// Capture file, or `-` for standard input.
    file: String,
    #[command(flatten)]
    out: OutputArgs,
}

#[derive(Clone, Copy, ValueEnum)]
enum StatsFormat {
    /// Readable text; latency histograms too when stdout is a terminal.
    Text,
    /// One JSON object (see docs/contract.md).
    Json,
}

#[derive(Args)]
struct StatsArgs {
    /// Capture file, or `-` for standard input.
    file: String,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    format: StatsFormat,
    /// Do not print the end-of-run statistics on stderr.
    #[arg(short, long)]
    quiet: bool,
    #[command(flatten)]
    common: Common,
}

#[derive(Args)]
struct OutputArgs {
    /// Output format.
    #[arg(long, value_enum, default_value = "summary")]
    format: Format,
    /// Keep only these APIs (names such as vote or find-coordinator, or keys).
    #[arg(long, value_delimiter = ',', value_name = "NAME|KEY")]
    api: Vec<String>,
    /// Display filter, e.g. `-Y 'vote response error'` (see docs/contract.md).
    #[arg(short = 'Y', long = "filter", value_name = "FILTER")]
    filter: Option<String>,
    /// Stop after N messages.
    #[arg(short = 'c', long = "count", value_name = "N")]
    count: Option<u64>,
    /// Do not print the end-of-run statistics on stderr.
    #[arg(short, long)]
    quiet: bool,
    #[command(flatten)]
    common: Common,
}

/// Ports and limits, the same for every command that reads packets.
#[derive(Args)]
struct Common {
    /// More ports always treated as Kafka (9092 and 9093 always are).
    #[arg(long, value_delimiter = ',', value_name = "P")]
    port: Vec<u16>,
    #[command(flatten)]
    limits: Limits,
}

impl Common {
    /// The pipeline's configuration; `live` sources forget idle connections (default 300 s).
    fn config(&self, live: bool) -> Config {
        self.limits.config(&self.port, live)
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.cmd {
        Cmd::Read(args) => read(&args),
        Cmd::Live(args) => live(&args),
        Cmd::Stats(args) => stats(&args),
        Cmd::Tui(args) => tui(&args),
        Cmd::Interfaces => interfaces(),
    }
}

/// One line per capture problem, with a hint at the fix; exit status 1.
fn open_failed(what: &str, e: CaptureError) -> ExitCode {
    match e {
        CaptureError::Permission { iface, reason } => {
            eprintln!("kwire: no permission to capture on {iface}: {reason}");
            eprintln!(
                "hint: run as root, or grant the binary the capability: sudo setcap cap_net_raw,cap_net_admin=eip $(command -v kwire)"
            );
        }
        CaptureError::NoSuchInterface { iface, available } => {
            eprintln!("kwire: there is no interface {iface:?}");
            eprintln!("hint: interfaces here: {}", available.join(", "));
        }
        CaptureError::Filter { filter, reason } => {
            eprintln!("kwire: libpcap rejects the capture filter {filter:?}: {reason}");
            eprintln!("hint: -f takes tcpdump's filter syntax, e.g. -f 'tcp port 9092'");
        }
        CaptureError::Open { reason } => {
            // libpcap often starts its message with the path already.
            let prefix = format!("{what}: ");
            let reason = reason.strip_prefix(&prefix).unwrap_or(&reason);
            eprintln!("kwire: cannot read {what}: {reason}");
            eprintln!("hint: kwire reads pcap and pcapng files (or - for standard input)");
        }
        other => eprintln!("kwire: {other}"),
    }
    ExitCode::from(1)
}

fn live(args: &LiveArgs) -> ExitCode {
    let mut printer = match args.out.printer(true) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("kwire: {e}");
            return ExitCode::from(1);
        }
    };
    let mut opts = LiveOptions::new(&args.iface);
    opts.filter.clone_from(&args.bpf);
    opts.write.clone_from(&args.write);
    opts.buffer_size = i32::try_from(args.kernel_buffer).unwrap_or(i32::MAX);
    let mut source = match Source::open_live(&opts) {
        Ok(s) => s,
        Err(e) => return open_failed(&args.iface, e),
    };
    let stop = Arc::new(AtomicBool::new(false));
    let flag = stop.clone();
    if let Err(e) = ctrlc::set_handler(move || flag.store(true, Ordering::Relaxed)) {
        eprintln!("kwire: cannot catch Ctrl-C ({e}); stop with -c or --duration");
    }
    source.stop_when(stop);
    if let Some(secs) = args.duration {
        source.stop_after(Duration::from_secs_f64(secs.max(0.0)));
    }
    let cfg = args.out.common.config(true);
    eprintln!("kwire: capturing on {} (filter: {})", args.iface, args.bpf);
    let (stats, end) = pipeline::run(&mut source, cfg, &mut |r| printer.print(r));
    printer.finish();
    let flushed = source.flush();
    let pcap_stats = source.live_stats();
    if !args.out.quiet {
        report(&stats);
        if let Some(p) = pcap_stats {
            eprintln!(
                "  libpcap: {} packets received, {} dropped by the kernel, {} dropped by the interface",
                p.received, p.dropped_by_kernel, p.dropped_by_interface
            );
        }
    }
    match (end, flushed) {
        (End::Damaged(e), _) | (End::Complete, Err(e)) => {
            eprintln!("kwire: {e}");
            ExitCode::from(2)
        }
        (End::Complete, Ok(())) => ExitCode::SUCCESS,
    }
}

fn tui(args: &TuiArgs) -> ExitCode {
    use kwire::tui;
    if let Err(e) = Filter::parse(args.filter.as_deref().unwrap_or("")) {
        eprintln!("kwire: {e}");
        return ExitCode::from(1);
    }
    let input = match (&args.iface, &args.file) {
        (Some(iface), _) => match tui::Input::live(iface, &args.bpf) {
            Ok(i) => i,
            Err(e) => return open_failed(iface, e),
        },
        (None, Some(file)) => match tui::Input::file(file) {
            Ok(i) => i,
            Err(e) => return open_failed(file, e),
        },
        (None, None) => {
            eprintln!("kwire: name a capture file, or an interface with -i");
            return ExitCode::from(1);
        }
    };
    let opts = tui::Options {
        config: args.common.config(args.iface.is_some()),
        filter: args.filter.clone(),
    };
    match tui::run(input, opts) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("kwire: terminal: {e}");
            ExitCode::from(1)
        }
    }
}

fn interfaces() -> ExitCode {
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

fn read(args: &ReadArgs) -> ExitCode {
    let mut printer = match args.out.printer(false) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("kwire: {e}");
            return ExitCode::from(1);
        }
    };
    let mut source = match Source::open_file(&args.file) {
        Ok(s) => s,
        Err(e) => return open_failed(&args.file, e),
    };
    let (stats, end) = pipeline::run(&mut source, args.out.common.config(false), &mut |r| {
        printer.print(r)
    });
    printer.finish();
    if !args.out.quiet {
        report(&stats);
    }
    match end {
        End::Complete => ExitCode::SUCCESS,
        End::Damaged(e) => {
            eprintln!("kwire: {e}");
            ExitCode::from(2)
        }
    }
}

fn stats(args: &StatsArgs) -> ExitCode {
    let mut source = match Source::open_file(&args.file) {
        Ok(s) => s,
        Err(e) => return open_failed(&args.file, e),
    };
    let mut analyzer = kwire::analysis::Analyzer::new();
    let (run, end) = pipeline::run(&mut source, args.common.config(false), &mut |r| {
        analyzer.record(r);
        ControlFlow::Continue(())
    });
    let a = analyzer.analysis();
    let text = match args.format {
        StatsFormat::Text => {
            kwire::analysis::render_text(&a, io::IsTerminal::is_terminal(&io::stdout()))
        }
        StatsFormat::Json => {
            let mut s = kwire::analysis::to_json(&a).to_string();
            s.push('\n');
            s
        }
    };
    // A reader that went away (e.g. `| head`) is not an error.
    let _ = io::stdout().lock().write_all(text.as_bytes());
    if !args.quiet {
        report(&run);
    }
    match end {
        End::Complete => ExitCode::SUCCESS,
        End::Damaged(e) => {
            eprintln!("kwire: {e}");
            ExitCode::from(2)
        }
    }
}

/// The end-of-run statistics, on stderr.
fn report(s: &RunStats) {
    eprint!("{}", kwire::view::report::render(s));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse() {
        assert_eq!(parse_size("16M"), Ok(16 << 20));
        assert_eq!(parse_size("64k"), Ok(64 << 10));
        assert_eq!(parse_size("100"), Ok(100));
        assert!(parse_size("x").is_err());
    }

    #[test]
    fn cli_is_consistent() {
        use clap::CommandFactory;
        Cli::command().debug_assert();
    }
}
