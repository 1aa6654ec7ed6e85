//! Real Kafka captures published by other projects (../shared/captures-public,
//! not copied into this repository): every file must frame cleanly, name its
//! APIs and versions as the folder's README says, and pair every response
//! whose request was captured. Summaries were checked against tshark
//! (`-d tcp.port==9092,kafka -d tcp.port==36333,kafka`): same frames, API
//! keys, versions and correlation ids.

mod common;

use common::*;
use kwire::pipeline::{Config, End};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// Expected requests (API, version, count) and responses that stand alone.
struct Expect {
    file: &'static str,
    port: u16,
    requests: &'static [(&'static str, i64, usize)],
    unpaired_responses: u64,
}

const EXPECT: &[Expect] = &[
    Expect {
        file: "arkime_kafka.pcap",
        port: 9092,
        requests: &[("ListOffsets", 0, 1)],
        unpaired_responses: 0,
    },
    Expect {
        file: "deepflow_00-produce-v2.pcap",
        port: 9092,
        requests: &[("Produce", 2, 1)],
        unpaired_responses: 0,
    },
    Expect {
        file: "deepflow_00-produce-v7-sw8.pcap",
        port: 36333,
        requests: &[("Produce", 7, 1)],
        unpaired_responses: 0,
    },
    Expect {
        file: "deepflow_00-produce-v9.pcap",
        port: 36333,
        requests: &[("Produce", 9, 1)],
        unpaired_responses: 0,
    },
    Expect {
        file: "deepflow_01-fetch-v12-ok.pcap",
        port: 36333,
        requests: &[("Fetch", 12, 1)],
        unpaired_responses: 0,
    },
    Expect {
        file: "deepflow_01-fetch-v12-perf.pcap",
        port: 9092,
        requests: &[("Fetch", 12, 1)],
        unpaired_responses: 0,
    },
    Expect {
        file: "deepflow_01-fetch-v12-unknown.pcap",
        port: 9092,
        requests: &[("Fetch", 12, 1)],
        unpaired_responses: 0,
    },
    Expect {
        file: "deepflow_11-join-group-v7.pcap",
        port: 36333,
        requests: &[("JoinGroup", 7, 1)],
        unpaired_responses: 0,
    },
    Expect {
        file: "deepflow_13-leave-group-v4.pcap",
        port: 36333,
        requests: &[("LeaveGroup", 4, 1)],
        unpaired_responses: 0,
    },
    Expect {
        file: "deepflow_14-sync-group-v5.pcap",
        port: 36333,
        requests: &[("SyncGroup", 5, 1)],
        unpaired_responses: 0,
    },
    Expect {
        file: "deepflow_18-api-versions-v3.pcap",
        port: 9092,
        requests: &[("ApiVersions", 3, 1)],
        unpaired_responses: 0,
    },
    Expect {
        file: "deepflow_mixed-with-unsupported.pcap",
        port: 9092,
        requests: &[
            ("Fetch", 13, 1),
            ("Heartbeat", 4, 1),
            ("OffsetCommit", 8, 1),
        ],
        unpaired_responses: 0,
    },
    Expect {
        file: "go-sniffer_kafka.pcap",
        port: 9092,
        requests: &[("Metadata", 0, 1), ("Produce", 1, 1)],
        unpaired_responses: 0,
    },
    // The README counts 4 responses without a request; there are 3 (frames
    // 5, 6, 7). Frame 10 is a TCP retransmission of frame 9, and frame 37
    // answers the Produce v9 request in frame 36 (which tshark fails to
    // decode, so it lists 37 as "Request Missing").
    Expect {
        file: "nDPI_kafka.pcapng",
        port: 9092,
        requests: &[
            ("ApiVersions", 0, 4),
            ("ApiVersions", 3, 1),
            ("InitProducerId", 4, 1),
            ("Metadata", 2, 4),
            ("Metadata", 12, 1),
            ("Produce", 3, 2),
            ("Produce", 9, 1),
        ],
        unpaired_responses: 3,
    },
];

fn folder() -> Option<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/captures-public");
    if dir.is_dir() {
        Some(dir)
    } else {
        eprintln!(
            "SKIP: {} is missing; the public-capture tests did not run",
            dir.display()
        );
        None
    }
}

/// Every capture file in the folder, sorted.
fn files(dir: &PathBuf) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "pcap" || e == "pcapng"))
        .collect();
    v.sort();
    v
}

#[test]
fn every_public_capture_frames_names_and_pairs() {
    let Some(dir) = folder() else { return };
    let files = files(&dir);
    assert_eq!(files.len(), EXPECT.len(), "a capture without expectations");
    for path in files {
        let name = path.file_name().unwrap().to_str().unwrap().to_string();
        let exp = EXPECT
            .iter()
            .find(|e| e.file == name)
            .unwrap_or_else(|| panic!("no expectations for {name}"));
        let run = run_lib(&path, Config::default());
        assert!(matches!(run.end, End::Complete), "{name}");
        let k = &run.stats.kafka;
        assert_eq!(run.stats.malformed, 0, "{name}: malformed");
        assert_eq!(k.desyncs, 0, "{name}: desync");
        assert_eq!(k.resyncs, 0, "{name}: resync");
        assert_eq!(k.cut_frames, 0, "{name}: cut");
        assert_eq!(run.stats.warned, 0, "{name}: warnings");
        assert_eq!(k.not_kafka, 0, "{name}");

        // Requests: API names and versions as the README lists them.
        let mut got: BTreeMap<(String, i64), usize> = BTreeMap::new();
        for m in run.json.iter().filter(|m| m["kind"] == "request") {
            let key = (
                m["api_name"].as_str().unwrap().to_string(),
                m["api_version"].as_i64().unwrap(),
            );
            *got.entry(key).or_default() += 1;
            assert_eq!(
                m["dst"].as_str().unwrap().rsplit(':').next(),
                Some(&*exp.port.to_string())
            );
        }
        let want: BTreeMap<(String, i64), usize> = exp
            .requests
            .iter()
            .map(|(n, v, c)| ((n.to_string(), *v), *c))
            .collect();
        assert_eq!(got, want, "{name}: requests");

        // Every response whose request was captured earlier on its connection is paired with it.
        for r in run.json.iter().filter(|m| m["kind"] == "response") {
            let req = run.json.iter().find(|q| {
                q["kind"] == "request"
                    && q["correlation_id"] == r["correlation_id"]
                    && q["src"] == r["dst"]
                    && q["dst"] == r["src"]
                    && q["frame"].as_u64() <= r["frame"].as_u64()
            });
            match req {
                Some(q) => {
                    assert_eq!(r["request_frame"], q["frame"], "{name}: {r}");
                    assert_eq!(r["api_key"], q["api_key"], "{name}: {r}");
                    assert_eq!(r["api_version"], q["api_version"], "{name}: {r}");
                    assert_eq!(r["version_source"], "request", "{name}: {r}");
                }
                None => assert!(r.get("request_frame").is_none(), "{name}: {r}"),
            }
        }
        assert_eq!(k.unpaired_responses, exp.unpaired_responses, "{name}");

        // The whole-program view: the binary's summary (statistics left out).
        let summary = read(&path, &[]);
        assert_eq!(summary.lines().collect::<Vec<_>>(), run.summary, "{name}");
        insta::assert_snapshot!(name.clone(), summary);

        // The odd-port files are found by detection, and the same with --port.
        if exp.port != 9092 {
            assert_eq!(
                read(&path, &["--port", &exp.port.to_string()]),
                summary,
                "{name}"
            );
            assert_eq!(read(&path, &["--no-detect"]), "", "{name}");
        }
    }
}

#[test]
fn api_versions_response_uses_header_v0() {
    let Some(dir) = folder() else { return };
    // ApiVersions v3 is flexible, but its response header stays v0 (no tagged
    // fields) so that any client can read it.
    for (file, frame) in [
        ("deepflow_18-api-versions-v3.pcap", 2),
        ("nDPI_kafka.pcapng", 28),
    ] {
        let path = dir.join(file);
        let tree = read(
            &path,
            &["--format", "tree", "-Y", &format!("frame={frame} response")],
        );
        let mut lines = tree.lines();
        let heading = lines.next().unwrap();
        assert!(heading.contains("ApiVersions v3 response"), "{heading}");
        let header: Vec<&str> = lines
            .skip_while(|l| !l.starts_with("+-- ResponseHeader"))
            .take(3)
            .collect();
        assert!(
            header[0].starts_with("+-- ResponseHeader v0 [0x0004, 4B]"),
            "{file}: {header:?}"
        );
        assert!(
            header[1].contains("correlation_id int32"),
            "{file}: {header:?}"
        );
        assert!(!header[2].contains("tagged_fields"), "{file}: {header:?}");
    }
}
