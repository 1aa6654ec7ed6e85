//! kwire as a library: open a capture, run it through the pipeline, and print every
//! granted KRaft vote. Uses only the crate's public re-exports.
//!
//! cargo run --example library -- captures/kraft-initial-election.pcap

use kwire::{Config, End, Kind, Record, Source};
use std::ops::ControlFlow;
use std::process::ExitCode;

/// Vote's API key.
const VOTE: i16 = 52;

fn main() -> ExitCode {
    let path = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "captures/kraft-initial-election.pcap".into());
    let mut source = match Source::open_file(&path) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("{path}: {e}");
            return ExitCode::from(1);
        }
    };
    let mut grants = 0u64;
    let (stats, end) = kwire::run(&mut source, Config::default(), &mut |r| {
        grants += print_grants(r);
        ControlFlow::Continue(())
    });
    println!(
        "{grants} votes granted in {} Kafka messages",
        stats.messages.values().sum::<u64>()
    );
    match end {
        End::Complete => ExitCode::SUCCESS,
        End::Damaged(e) => {
            eprintln!("{path}: {e}");
            ExitCode::from(2)
        }
    }
}

/// Prints one line per granted partition of a Vote response; returns how many.
fn print_grants(r: &Record<'_>) -> u64 {
    if r.msg.api_key != Some(VOTE) || r.msg.kind != Kind::Response {
        return 0;
    }
    let (t, Some(body)) = (&r.msg.tree, r.msg.body) else {
        return 0;
    };
    let mut n = 0;
    for topic in t.elements(body, "Topics") {
        for p in t.elements(topic, "Partitions") {
            if t.bool(p, "VoteGranted") == Some(true) {
                // The responder is the voter; the request came from the candidate.
                println!(
                    "packet {:>5}: voter at {} granted the candidate at {} (leader epoch {}, {} µs)",
                    r.packet,
                    r.src,
                    r.dst,
                    t.int(p, "LeaderEpoch").unwrap_or(-1),
                    r.latency_ns.map_or(-1, |ns| ns / 1000)
                );
                n += 1;
            }
        }
    }
    n
}
