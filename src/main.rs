//! The `kwire` command line.
#![forbid(unsafe_code)]

/// `eprintln!`, except that a stderr closed early (a pipe whose reader left) drops the
/// message instead of panicking: kwire's messages and report are not worth a crash.
macro_rules! errln {
    ($($t:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($t)*);
    }};
}

/// `eprint!`, as [`errln!`].
macro_rules! err {
    ($($t:tt)*) => {{
        use std::io::Write as _;
        let _ = write!(std::io::stderr(), $($t)*);
    }};
}

mod cli;

use clap::{Args, Parser, Subcommand, ValueEnum};
use kwire::Selection;
use kwire::{Columns, Format, Printer};
use kwire::{Config, Limits, parse_size};
use std::process::ExitCode;

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
    /// Print a shell completion script on stdout (see README for where to put it).
    Completions {
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print the man page (roff) on stdout: `kwire man | man -l -`.
    Man,
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
    /// Bytes kept of each packet; a longer packet's tail is lost (a gap).
    #[arg(long, default_value_t = 262_144, value_name = "BYTES")]
    snaplen: i32,
    /// Have the kernel hand over each packet at once, rather than in blocks at most
    /// --latency apart: lower latency, but at high rates the kernel drops packets.
    #[arg(long)]
    immediate: bool,
    /// Without --immediate, the longest a packet waits in the kernel, in milliseconds.
    #[arg(long, default_value_t = 50, value_name = "MS")]
    latency: u64,
    #[command(flatten)]
    out: OutputArgs,
}

#[derive(Args)]
struct TuiArgs {
    /// Capture files to browse (several are merged by time); they load in the background.
    #[arg(
        required_unless_present = "iface",
        conflicts_with = "iface",
        value_name = "FILE"
    )]
    file: Vec<String>,
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
        let color = self
            .color
            .enabled(std::io::IsTerminal::is_terminal(&std::io::stdout()));
        let printer = Printer::new(self.format, select, self.count, line_flush).with_color(color);
        match self.format {
            Format::Fields => {
                Ok(printer.with_columns(Columns::new(&self.field, &self.field_option)?))
            }
            _ if !self.field.is_empty() || !self.field_option.is_empty() => {
                Err("-e and -E go with --format fields".into())
            }
            _ => Ok(printer),
        }
    }
}

#[derive(Args)]
struct ReadArgs {
    /// Capture files (pcap or pcapng, plain or gzip/zstd/lz4), or `-` for standard
    /// input; several are merged by time.
    #[arg(required = true, value_name = "FILE")]
    files: Vec<String>,
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
    /// Capture files, or `-` for standard input; several are merged by time.
    #[arg(required = true, value_name = "FILE")]
    files: Vec<String>,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    format: StatsFormat,
    /// Analyse only the messages this display filter keeps (see docs/contract.md).
    #[arg(short = 'Y', long = "filter", value_name = "FILTER")]
    filter: Option<String>,
    /// Also write the analysis as one self-contained HTML file (SVG charts, no scripts).
    #[arg(long, value_name = "FILE")]
    html: Option<std::path::PathBuf>,
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
    /// Display filter, e.g. `-Y 'VoteGranted == false && latency_us > 10000'` (see docs/contract.md).
    #[arg(short = 'Y', long = "filter", value_name = "FILTER")]
    filter: Option<String>,
    /// A field for --format fields (repeatable), named as -Y names it.
    #[arg(short = 'e', value_name = "FIELD")]
    field: Vec<String>,
    /// An option for --format fields: header=y, separator=C, aggregator=C.
    #[arg(short = 'E', value_name = "NAME=VALUE")]
    field_option: Vec<String>,
    /// Stop after N messages.
    #[arg(short = 'c', long = "count", value_name = "N")]
    count: Option<u64>,
    /// Do not print the end-of-run statistics on stderr.
    #[arg(short, long)]
    quiet: bool,
    /// Colour summary lines: `auto` on a terminal unless NO_COLOR is set.
    #[arg(long, value_enum, default_value = "auto", value_name = "WHEN")]
    color: Color,
    #[command(flatten)]
    common: Common,
}

#[derive(Clone, Copy, ValueEnum)]
enum Color {
    Auto,
    Always,
    Never,
}

impl Color {
    /// `auto` colours a terminal unless `NO_COLOR` is set and not empty (no-color.org).
    fn enabled(self, terminal: bool) -> bool {
        match self {
            Color::Always => true,
            Color::Never => false,
            Color::Auto => terminal && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()),
        }
    }
}

/// Ports, limits and schemas, the same for every command that reads packets.
#[derive(Args)]
struct Common {
    /// More ports always treated as Kafka (9092 and 9093 always are).
    #[arg(long, value_delimiter = ',', value_name = "P")]
    port: Vec<u16>,
    /// Decrypt Kafka over TLS with this NSS key log (the SSLKEYLOGFILE format);
    /// without the flag, $SSLKEYLOGFILE is used when set. A key log is a secret.
    #[arg(long, value_name = "FILE")]
    tls_keylog: Option<std::path::PathBuf>,
    /// Kafka's message schemas: a kafka-clients jar, a directory of its
    /// common/message/*.json, or one such file; repeatable. Without it: KWIRE_SCHEMAS
    /// (`:`-separated; set empty for none), else kafka-clients jars in $KAFKA_HOME/libs
    /// and ~/.m2/repository, newest first.
    #[arg(long = "schemas", value_name = "PATH")]
    schemas: Vec<std::path::PathBuf>,
    /// Show credentials (SASL auth bytes, passwords, salts, HMACs) instead of
    /// "<redacted N bytes>".
    #[arg(long)]
    show_secrets: bool,
    /// Threads to use: 1 runs everything on one. With N of 2 or more, one thread
    /// reassembles and frames; `read` decodes and formats on N more (the main thread reads
    /// and prints), the other commands decode on the main one. Default: 2 when the machine
    /// has 2 cores or more, else 1.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    threads: Option<u16>,
    #[command(flatten)]
    limits: Limits,
}

impl Common {
    /// Loads the schemas and sets the process-wide codec; see [`cli::load_schemas`].
    fn schemas(&self) -> cli::Notes {
        cli::load_schemas(&self.schemas, self.show_secrets)
    }

    /// The pipeline's configuration; `live` sources forget idle connections (default 300 s)
    /// and reread the key log when a TLS client random is not in it yet.
    fn config(&self, live: bool) -> Config {
        let mut c = self.limits.config(&self.port, live);
        c.keys = kwire::KeyConfig::from_flag_or_env(self.tls_keylog.clone(), live);
        c.threads = self.threads.map_or_else(
            || std::thread::available_parallelism().map_or(1, |n| n.get().min(2)),
            usize::from,
        );
        c
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.cmd {
        Cmd::Read(args) => cli::read(&args),
        Cmd::Live(args) => cli::live(&args),
        Cmd::Stats(args) => cli::stats(&args),
        Cmd::Tui(args) => cli::tui(&args),
        Cmd::Interfaces => cli::interfaces(),
        Cmd::Completions { shell } => cli::completions(shell),
        Cmd::Man => cli::man(),
    }
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
