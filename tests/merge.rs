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

fn kwire_ok(args: &[&str]) -> String {
    let out = common::kwire(args);
    assert_eq!(out.code, 0, "kwire {args:?}: {}", out.stderr);
    out.stdout
}

#[test]
fn kwire_stats_of_three_controllers_shows_one_election_timeline() {
    let orig = capture("kraft-reelection.pcap");
    let orig = orig.to_str().unwrap();
    let parts = split(Path::new(orig), [0; 3]);
    let p: Vec<&str> = parts.iter().map(|f| f.path().to_str().unwrap()).collect();
    // Text and JSON, merged, are the recording's own.
    assert_eq!(
        kwire_ok(&["stats", p[0], p[1], p[2], "-q"]),
        kwire_ok(&["stats", orig, "-q"])
    );
    let merged: Value = serde_json::from_str(&kwire_ok(&[
        "stats", p[0], p[1], p[2], "-q", "--format", "json",
    ]))
    .unwrap();
    let (lib, _) = analyse(&[parts[0].path(), parts[1].path(), parts[2].path()]);
    assert_eq!(merged, lib);
    // With clock errors, the same elections, winners and ballots.
    let skewed = split(Path::new(orig), [-3_000_000, 0, 2_000_000]);
    let s: Vec<&str> = skewed.iter().map(|f| f.path().to_str().unwrap()).collect();
    let merged: Value = serde_json::from_str(&kwire_ok(&[
        "stats", s[0], s[1], s[2], "-q", "--format", "json",
    ]))
    .unwrap();
    let (want, _) = analyse(&[Path::new(orig)]);
    assert_eq!(timeline(&merged), timeline(&want));
}

#[test]
fn kwire_read_of_several_files_names_each_message_s_file() {
    let orig = capture("kraft-initial-election.pcap");
    let parts = split(&orig, [0; 3]);
    let p: Vec<&str> = parts.iter().map(|f| f.path().to_str().unwrap()).collect();
    let one = common::json_lines(&kwire_ok(&[
        "read",
        orig.to_str().unwrap(),
        "-q",
        "--format",
        "json",
    ]));
    let all = common::json_lines(&kwire_ok(&[
        "read", p[0], p[1], p[2], "-q", "--format", "json",
    ]));
    assert_eq!(all.len(), one.len());
    // One input: no `file` key. Several: each message names its input, and
    // apart from that the messages (frames included) are the recording's.
    assert!(one.iter().all(|m| m.get("file").is_none()));
    for (a, b) in all.iter().zip(&one) {
        let file = a["file"].as_str().unwrap();
        let dst_port = a["dst"].as_str().unwrap().rsplit(':').next().unwrap();
        let src_port = a["src"].as_str().unwrap().rsplit(':').next().unwrap();
        let host = PORTS
            .iter()
            .position(|port| [dst_port, src_port].contains(&port.to_string().as_str()))
            .unwrap();
        assert_eq!(file, p[host]);
        let mut a = a.clone();
        a.as_object_mut().unwrap().remove("file");
        assert_eq!(&a, b);
    }
    // The keys keep the contract's order: `file` follows `ts`.
    let line = kwire_ok(&["read", p[0], p[1], "-q", "--format", "json", "-c", "1"]);
    assert!(line.starts_with("{\"frame\":"), "{line}");
    let ts_at = line.find(",\"ts\":").unwrap();
    let file_at = line.find(",\"file\":").unwrap();
    let src_at = line.find(",\"src\":").unwrap();
    assert!(ts_at < file_at && file_at < src_at, "{line}");
}

#[test]
fn compressed_inputs_merge_like_plain_ones() {
    use std::io::Write;
    let orig = capture("kraft-reelection.pcap");
    let parts = split(&orig, [0; 3]);
    // Host 2's file gzip-compressed, host 3's zstd.
    let gz = NamedTempFile::new().unwrap();
    let mut e = flate2::write::GzEncoder::new(gz.as_file(), flate2::Compression::default());
    e.write_all(&std::fs::read(parts[1].path()).unwrap())
        .unwrap();
    e.finish().unwrap();
    let zst = NamedTempFile::new().unwrap();
    std::fs::write(
        zst.path(),
        zstd::stream::encode_all(&std::fs::read(parts[2].path()).unwrap()[..], 3).unwrap(),
    )
    .unwrap();
    let p = [
        parts[0].path().to_str().unwrap(),
        gz.path().to_str().unwrap(),
        zst.path().to_str().unwrap(),
    ];
    assert_eq!(
        kwire_ok(&["stats", p[0], p[1], p[2], "-q", "--format", "json"]),
        kwire_ok(&["stats", orig.to_str().unwrap(), "-q", "--format", "json"])
    );
    // A missing input is unusable input, named in the message.
    let out = common::kwire(&["read", p[0], "/nonexistent/x.pcap"]);
    assert_eq!(out.code, 1);
    assert!(
        out.stderr
            .starts_with("kwire: cannot read /nonexistent/x.pcap: "),
        "{}",
        out.stderr
    );
}

#[test]
fn a_damaged_input_among_several_is_reported_after_the_rest() {
    let orig = capture("kraft-initial-election.pcap");
    let parts = split(&orig, [0; 3]);
    let whole = std::fs::read(parts[2].path()).unwrap();
    let cut = NamedTempFile::new().unwrap();
    std::fs::write(cut.path(), &whole[..whole.len() - 7]).unwrap();
    let p = [
        parts[0].path().to_str().unwrap(),
        parts[1].path().to_str().unwrap(),
        cut.path().to_str().unwrap(),
    ];
    let out = common::kwire(&["read", p[0], p[1], p[2], "-q"]);
    assert_eq!(out.code, 2, "{out:?}");
    assert!(
        out.stderr
            .starts_with(&format!("kwire: {}: capture truncated at packet ", p[2])),
        "{}",
        out.stderr
    );
    assert!(!out.stdout.is_empty());
}
