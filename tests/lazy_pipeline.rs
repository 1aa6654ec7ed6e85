//! Decoding only what the consumer reads (`Hooks::need`) changes nothing it sees: over
//! every bundled capture (and the public ones, when present), with the jars' schemas,
//! the summary lines, the messages each filter keeps, `-e` fields and the run's counters
//! are those of a full decode.
//!
//! Without a jar this prints SKIP and passes, except under `CI=true`.

use kwire::codec::{self, Codec, DecodeOptions, Search};
use kwire::filter::Columns;
use kwire::pipeline::{Config, Hooks, run_with};
use kwire::tls::KeyConfig;
use kwire::view::summary;
use kwire::{Filter, Need, Record, Source};
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

fn jars() -> bool {
    static OK: OnceLock<bool> = OnceLock::new();
    *OK.get_or_init(|| {
        let loaded = Search::from_env(Vec::new()).load();
        if loaded.schemas.sources().is_empty() {
            let msg = "SKIP: no kafka-clients jar found";
            if std::env::var("CI").is_ok_and(|v| v == "true") {
                panic!("{msg} (CI=true: the jars are required)");
            }
            eprintln!("\n*** {msg} ***\n");
            return false;
        }
        codec::install(Codec::new(loaded.schemas, DecodeOptions::default())).is_ok()
    })
}

/// Every capture with its key log (for the TLS ones).
fn captures() -> Vec<(PathBuf, Option<PathBuf>)> {
    let mut out = Vec::new();
    let mut dirs = vec![
        PathBuf::from("captures"),
        PathBuf::from("captures/synthetic"),
        PathBuf::from("captures/records"),
    ];
    let public = Path::new("../shared/captures-public");
    if public.is_dir() {
        dirs.push(public.to_path_buf());
    } else {
        eprintln!("SKIP: ../shared/captures-public is missing; bundled captures only");
    }
    for d in dirs {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        let mut files: Vec<PathBuf> = entries
            .flatten()
            .map(|e| e.path())
            .filter(|p| {
                p.extension()
                    .is_some_and(|x| x == "pcap" || x == "pcapng" || x == "gz")
            })
            .collect();
        files.sort();
        for f in files {
            let keys = f.with_extension("keys");
            out.push((f, keys.is_file().then_some(keys)));
        }
    }
    assert!(out.len() >= 10, "captures found: {out:?}");
    out
}

/// What a consumer saw of a run.
struct Seen {
    need: Need,
    filter: Filter,
    columns: Option<Columns>,
    lines: Vec<String>,
}

impl Hooks for Seen {
    fn message(&mut self, r: &Record<'_>) -> ControlFlow<()> {
        if self.filter.matches(r) {
            let mut l = String::new();
            summary::write_line_colored(&mut l, r);
            self.lines.push(l);
            if let Some(c) = &self.columns {
                self.lines.push(c.line(r));
            }
        }
        ControlFlow::Continue(())
    }

    fn need(&self) -> Need {
        self.need.clone()
    }
}

fn run(file: &Path, keys: Option<&Path>, seen: &mut Seen) -> String {
    let Ok(mut source) = Source::open_file(file) else {
        return String::new();
    };
    let cfg = Config {
        keys: KeyConfig {
            keylog: keys.map(Path::to_path_buf),
            ..KeyConfig::default()
        },
        ..Config::default()
    };
    let (stats, _) = run_with(&mut source, cfg, seen);
    format!(
        "{:?} {} {} {} {:?}",
        stats.messages, stats.malformed, stats.warned, stats.inferred, stats.topics
    )
}

const FILTERS: [&str; 10] = [
    "",
    "vote",
    "error",
    "ErrorCode != 0",
    "Topics.Partitions.VoteGranted == false",
    "Coordinators.Host contains \"b\" || Host",
    "latency_us > 100 && response",
    "kafka.topic_name",
    "\"node\"",
    "malformed || warn",
];

#[test]
fn what_the_consumer_reads_is_what_a_full_decode_gives() {
    if !jars() {
        return;
    }
    let columns = || {
        Columns::new(
            &[
                "api_name".to_string(),
                "ErrorCode".to_string(),
                "kafka.topic_name".to_string(),
                "PartitionIndex".to_string(),
            ],
            &[],
        )
        .unwrap()
    };
    for (file, keys) in captures() {
        for f in FILTERS {
            let filter = Filter::parse(f).unwrap();
            let lean_need = filter
                .need()
                .union(&kwire::apis::summary_need())
                .union(&columns().need());
            let mut full = Seen {
                need: Need::all(),
                filter: filter.clone(),
                columns: Some(columns()),
                lines: Vec::new(),
            };
            let mut lean = Seen {
                need: lean_need,
                filter,
                columns: Some(columns()),
                lines: Vec::new(),
            };
            let a = run(&file, keys.as_deref(), &mut full);
            let b = run(&file, keys.as_deref(), &mut lean);
            assert_eq!(a, b, "{}: counters with -Y {f:?}", file.display());
            assert_eq!(
                full.lines,
                lean.lines,
                "{}: lines with -Y {f:?}",
                file.display()
            );
        }
        // Header only: the counters still come from a full check of every body.
        let mut header = Seen {
            need: Need::header(),
            filter: Filter::default(),
            columns: None,
            lines: Vec::new(),
        };
        let mut full = Seen {
            need: Need::all(),
            filter: Filter::default(),
            columns: None,
            lines: Vec::new(),
        };
        assert_eq!(
            run(&file, keys.as_deref(), &mut header),
            run(&file, keys.as_deref(), &mut full),
            "{}: counters, header only",
            file.display()
        );
    }
}
