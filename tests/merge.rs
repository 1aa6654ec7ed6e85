//! Several captures merged by time: a bundled KRaft recording split by host
//! (each controller "recorded" the connections to its own listener), with
//! clock offsets, merged back and analysed.

mod common;

use kwire::analysis::{Analyzer, to_json};
use kwire::capture::Source;
use kwire::capture::writer::{PcapWriter, TsPrecision};
use kwire::net::{self, NetStats};
use kwire::pipeline::{self, Config, End};
use serde_json::Value;
use std::collections::BTreeSet;
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use tempfile::NamedTempFile;

fn capture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("captures")
        .join(name)
}

/// The controllers' listener ports, node 1 to 3.
const PORTS: [u16; 3] = [19301, 19302, 19303];

/// Splits a recording into one file per controller: every packet of a
/// connection to node N's listener goes to file N, its time moved by
/// `offsets_ns[N]` (that host's clock error).
fn split(path: &Path, offsets_ns: [i64; 3]) -> Vec<NamedTempFile> {
    let files: Vec<NamedTempFile> = (0..3).map(|_| NamedTempFile::new().unwrap()).collect();
    let mut writers: Vec<_> = files
        .iter()
        .map(|f| PcapWriter::new(f.as_file(), 1, TsPrecision::Micro, 262_144).unwrap())
        .collect();
    let mut src = Source::open_file(path).unwrap();
    let mut st = NetStats::default();
    while let Some(p) = src.next_packet() {
        let p = p.unwrap();
        let seg = net::decode(p.linktype, p.data, p.origlen, &mut st).expect("TCP only");
        let host = PORTS
            .iter()
            .position(|&port| seg.dst.port() == port || seg.src.port() == port)
            .expect("every connection goes to a controller");
        writers[host]
            .write_packet(p.ts_ns() + offsets_ns[host], p.data)
            .unwrap();
    }
    for w in writers {
        w.into_inner();
    }
    files
}

/// `kwire stats --format json` as the library computes it, over several files.
fn analyse(paths: &[&Path]) -> (Value, u64) {
    let mut src = Source::open_files(paths).unwrap();
    let mut a = Analyzer::new();
    let (run, end) = pipeline::run(&mut src, Config::default(), &mut |r| {
        a.record(r);
        ControlFlow::Continue(())
    });
    assert!(matches!(end, End::Complete));
    (to_json(&a.analysis()), run.packets)
}

/// Per epoch: leader, outcome and each candidacy's ballots (voter, granted,
/// error, latency), in a form that does not depend on frame numbers or times.
fn timeline(j: &Value) -> Vec<String> {
    let mut out = Vec::new();
    for e in j["elections"][0]["epochs"].as_array().unwrap() {
        let mut cands = BTreeSet::new();
        for c in e["candidacies"].as_array().unwrap() {
            let ballots: Vec<String> = c["ballots"]
                .as_array()
                .unwrap()
                .iter()
                .map(|b| {
                    let r = &b["response"];
                    format!(
                        "{}:{}:{}:{}",
                        b["voter"], r["granted"], r["error"], r["latency_us"]
                    )
                })
                .collect();
            cands.insert(format!(
                "cand {} pre {} [{}]",
                c["candidate"],
                c["pre_vote"],
                ballots.join(" ")
            ));
        }
        out.push(format!(
            "epoch {} leader {} {} {:?}",
            e["epoch"], e["leader"], e["outcome"], cands
        ));
    }
    out
}

#[test]
fn a_recording_split_by_host_merges_back_to_the_same_analysis() {
    let orig = capture("kraft-reelection.pcap");
    let (want, packets) = analyse(&[&orig]);
    let parts = split(&orig, [0; 3]);
    let paths: Vec<&Path> = parts.iter().map(|f| f.path()).collect();
    let (got, merged_packets) = analyse(&paths);
    assert_eq!(merged_packets, packets);
    // Same clocks: the merge restores the recording's order, frames included.
    assert_eq!(got, want);
}

#[test]
fn merged_hosts_with_clock_offsets_keep_the_election_timeline() {
    let orig = capture("kraft-reelection.pcap");
    let (want, _) = analyse(&[&orig]);
    // Node 1's clock 3 ms behind, node 3's 2 ms ahead.
    let offsets = [-3_000_000, 0, 2_000_000];
    let parts = split(&orig, offsets);
    let paths: Vec<&Path> = parts.iter().map(|f| f.path()).collect();
    let (got, _) = analyse(&paths);
    assert_eq!(timeline(&got), timeline(&want));
    assert_eq!(timeline(&want).len(), 4);
    // Every ballot's request moved by its listener's clock error: a voter's
    // listener receives the Vote, so the voter's offset applies.
    let ballots = |j: &Value| -> Vec<(i64, f64)> {
        let mut v = Vec::new();
        for e in j["elections"][0]["epochs"].as_array().unwrap() {
            for c in e["candidacies"].as_array().unwrap() {
                for b in c["ballots"].as_array().unwrap() {
                    v.push((
                        b["voter"].as_i64().unwrap(),
                        b["request"]["ts"].as_f64().unwrap(),
                    ));
                }
            }
        }
        v.sort_by(|a, b| a.partial_cmp(b).unwrap());
        v
    };
    let (w, g) = (ballots(&want), ballots(&got));
    assert_eq!(w.len(), 12);
    let mut shifted: Vec<(i64, f64)> = w
        .iter()
        .map(|&(voter, ts)| (voter, ts + offsets[voter as usize - 1] as f64 / 1e9))
        .collect();
    shifted.sort_by(|a, b| a.partial_cmp(b).unwrap());
    for ((v1, t1), (v2, t2)) in shifted.iter().zip(&g) {
        assert_eq!(v1, v2);
        assert!((t1 - t2).abs() < 2e-6, "{t1} vs {t2}");
    }
}
