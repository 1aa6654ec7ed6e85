//! `kwire stats` with Kafka's schemas loaded: the consumer-group rebalances and the
//! election timeline's BeginQuorumEpoch, EndQuorumEpoch and KRaft Fetch facts, on the
//! stories `group-rebalance.pcap` and `quorum-handover.pcap` (written by
//! `examples/gen_stories.rs`, whose code is the truth the assertions restate) and on
//! the bundled Kafka 4.4 captures. Every fact asserted was checked against
//! `kwire read --format json` of the same frames.
//!
//! These tests need kafka-clients-4.4.0.jar: without it they say SKIP, and fail under
//! `CI=true`.

mod common;

use common::*;
use kwire::Search;
use serde_json::Value;
use std::io::Write;
use std::path::{Path, PathBuf};

fn skip(why: &str) {
    let msg = format!(
        "SKIP stats_groups: {why}; get one with `mvn dependency:get -Dartifact=org.apache.kafka:kafka-clients:4.4.0`"
    );
    if std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!("{msg} (CI=true: the jars are required)");
    }
    // Past libtest's output capture, so a skipped run is visible in a plain `cargo test`.
    let _ = writeln!(std::io::stderr(), "\n*** {msg} ***\n");
}

fn jar() -> Option<PathBuf> {
    Search::from_env(Vec::new())
        .paths()
        .0
        .into_iter()
        .find(|p| p.to_string_lossy().ends_with("kafka-clients-4.4.0.jar"))
}

fn capture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("captures")
        .join(name)
}

/// `kwire stats FILE -q --schemas JAR [extra]`: stdout, with the one stderr line
/// saying what was loaded.
fn stats(jar: &Path, file: &str, extra: &[&str]) -> String {
    let path = capture(file);
    let mut args = vec![
        "stats",
        path.to_str().unwrap(),
        "-q",
        "--schemas",
        jar.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    let out = kwire(&args);
    assert_eq!(out.code, 0, "kwire {args:?} failed: {}", out.stderr);
    assert_eq!(out.stderr.lines().count(), 1, "{}", out.stderr);
    out.stdout
}

fn stats_json(jar: &Path, file: &str) -> Value {
    serde_json::from_str(&stats(jar, file, &["--format", "json"])).unwrap()
}

fn strs(v: &Value) -> Vec<&str> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap())
        .collect()
}

/// (api, error, count, members) of a rebalance's or group's errors.
fn errors(v: &Value) -> Vec<(String, String, u64, Vec<&str>)> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["api"].as_str().unwrap().to_string(),
                e["error"].as_str().unwrap().to_string(),
                e["count"].as_u64().unwrap(),
                strs(&e["members"]),
            )
        })
        .collect()
}

/// (generation, first JoinGroup request frame, last successful SyncGroup response frame,
/// duration µs, members, joined, left, dropped)
type Gen = (
    i64,
    u64,
    u64,
    i64,
    Vec<&'static str>,
    Vec<&'static str>,
    Vec<&'static str>,
    Vec<&'static str>,
);

#[test]
fn group_rebalance_story() {
    let Some(jar) = jar() else {
        return skip("no kafka-clients-4.4.0.jar found");
    };
    let file = "synthetic/stories/group-rebalance.pcap";
    let text = stats(&jar, file, &[]);
    insta::assert_snapshot!("group_rebalance_story_text", text);
    let j = stats_json(&jar, file);
    let groups = j["groups"].as_array().unwrap();
    assert_eq!(groups.len(), 1);
    let g = &groups[0];
    assert_eq!(g["group_id"], "payments");
    assert_eq!(g["heartbeats"], 9);
    assert_eq!(g["leaves"][0]["member"], "b-2222-member");
    assert_eq!(g["leaves"][0]["frame"], 48);
    let r = g["rebalances"].as_array().unwrap();
    let (a, b, c) = ("a-1111-member", "b-2222-member", "c-3333-member");
    let want: [Gen; 5] = [
        (1, 4, 9, 22_000, vec![a], vec![a], vec![], vec![]),
        (2, 15, 26, 1_033_000, vec![a, b], vec![b], vec![], vec![]),
        (3, 30, 47, 622_000, vec![a, b, c], vec![c], vec![], vec![]),
        (4, 52, 61, 212_000, vec![a, c], vec![], vec![b], vec![]),
        (5, 66, 69, 22_000, vec![a], vec![], vec![], vec![c]),
    ];
    assert_eq!(r.len(), want.len());
    // The first successful SyncGroup response of each generation.
    let completed: Vec<u64> = r
        .iter()
        .map(|r| r["completed"]["frame"].as_u64().unwrap())
        .collect();
    assert_eq!(completed, [9, 25, 43, 59, 69]);
    for (r, w) in r.iter().zip(&want) {
        assert_eq!(r["generation"], w.0, "{r}");
        assert_eq!(r["began"]["frame"], w.1, "{r}");
        assert_eq!(r["last_sync"]["frame"], w.2, "{r}");
        assert_eq!(r["duration_us"], w.3, "{r}");
        assert_eq!(strs(&r["members"]), w.4, "{r}");
        assert_eq!(strs(&r["joined"]), w.5, "{r}");
        assert_eq!(strs(&r["left"]), w.6, "{r}");
        assert_eq!(strs(&r["dropped"]), w.7, "{r}");
        assert_eq!(r["leader"], a);
        assert_eq!(r["protocol_type"], "consumer");
        assert_eq!(r["protocol"], "range");
    }
    let e = |i: usize| errors(&r[i]["errors"]);
    let row = |api: &str, err: &str, n: u64, m: Vec<&'static str>| {
        (api.to_string(), err.to_string(), n, m)
    };
    assert_eq!(
        e(1),
        [
            row("JoinGroup", "MEMBER_ID_REQUIRED", 1, vec![b]),
            row("Heartbeat", "REBALANCE_IN_PROGRESS", 1, vec![a]),
        ]
    );
    assert_eq!(
        e(3),
        [row("Heartbeat", "REBALANCE_IN_PROGRESS", 2, vec![a, c])]
    );
    assert_eq!(
        e(4),
        [
            row("Heartbeat", "UNKNOWN_MEMBER_ID", 1, vec![c]),
            row("Heartbeat", "REBALANCE_IN_PROGRESS", 1, vec![a]),
        ]
    );
    insta::assert_json_snapshot!("group_rebalance_story_json", j["groups"]);
}

#[test]
fn quorum_handover_story() {
    let Some(jar) = jar() else {
        return skip("no kafka-clients-4.4.0.jar found");
    };
    let file = "synthetic/stories/quorum-handover.pcap";
    let text = stats(&jar, file, &[]);
    insta::assert_snapshot!("quorum_handover_story_text", text);
    let j = stats_json(&jar, file);
    let parts = j["elections"].as_array().unwrap();
    // The consumer's Fetch (no cluster id) names leader 9 at epoch 99: not KRaft's.
    assert_eq!(parts.len(), 1, "{parts:?}");
    assert_eq!(parts[0]["cluster_id"], "QuorumStoryCluster000");
    let ep = parts[0]["epochs"].as_array().unwrap();
    assert_eq!(ep.len(), 2);
    assert_eq!(ep[0]["epoch"], 5);
    assert_eq!(ep[0]["leader"], 1);
    assert_eq!(ep[0]["outcome"], "not_captured");
    assert_eq!(ep[0]["announced"]["leader"], 1);
    assert_eq!(ep[0]["announced"]["frame"], 4);
    assert_eq!(ep[0]["resigned"]["leader"], 1);
    assert_eq!(ep[0]["resigned"]["frame"], 21);
    assert_eq!(ep[0]["resigned"]["preferred"], serde_json::json!([3, 2]));
    // Two Begin, two End and two Fetch responses name node 1 at epoch 5.
    assert_eq!(ep[0]["known_from"]["responses"], 6);
    assert_eq!(ep[1]["epoch"], 6);
    assert_eq!(ep[1]["leader"], 3);
    assert_eq!(ep[1]["outcome"], "won");
    assert_eq!(ep[1]["majority"]["frame"], 30);
    assert_eq!(ep[1]["announced"]["frame"], 32);
    assert_eq!(ep[1]["resigned"], Value::Null);
    // Two Begin and two Fetch responses name node 3 at epoch 6.
    assert_eq!(ep[1]["known_from"]["responses"], 4);
    insta::assert_json_snapshot!("quorum_handover_story_json", j["elections"]);
}

#[test]
fn kraft_reelection_with_quorum_apis() {
    let Some(jar) = jar() else {
        return skip("no kafka-clients-4.4.0.jar found");
    };
    let file = "kraft-reelection.pcap";
    let text = stats(&jar, file, &[]);
    insta::assert_snapshot!("kraft_reelection_jar_text", text);
    let j = stats_json(&jar, file);
    let ep = j["elections"][0]["epochs"].as_array().unwrap();
    // (epoch, leader, BeginQuorumEpoch frame, EndQuorumEpoch frame, preferred), per
    // `kwire read --api BeginQuorumEpoch,EndQuorumEpoch`.
    let want = [
        (1, 2, None, Some(735), vec![]),
        (2, 1, Some(611), Some(889), vec![2, 3]),
        (3, 2, Some(1056), Some(1287), vec![]),
        (4, 3, Some(1302), None, vec![]),
    ];
    assert_eq!(ep.len(), want.len());
    for (e, w) in ep.iter().zip(&want) {
        assert_eq!(e["epoch"], w.0, "{e}");
        assert_eq!(e["leader"], w.1, "{e}");
        assert_eq!(e["announced"]["frame"].as_u64(), w.2, "{e}");
        assert_eq!(e["resigned"]["frame"].as_u64(), w.3, "{e}");
        if w.3.is_some() {
            assert_eq!(e["resigned"]["preferred"], serde_json::json!(w.4), "{e}");
        }
    }
    // Every decoded response's errors are named.
    assert!(!text.contains("not decoded\n"), "{text}");
    assert!(text.contains("FENCED_LEADER_EPOCH ×3"), "{text}");
    insta::assert_json_snapshot!("kraft_reelection_jar_json", j);
}

#[test]
fn consumer_group_captures() {
    let Some(jar) = jar() else {
        return skip("no kafka-clients-4.4.0.jar found");
    };
    // (file, group, generations, first JoinGroup frame, last SyncGroup response frame)
    let want = [
        (
            "consumer-group-java.pcap",
            "kwire-java-group",
            vec![1],
            83,
            89,
        ),
        (
            "consumer-group-kafka-python.pcap",
            "kwire-kafka-python-group",
            vec![1, 2],
            29,
            44,
        ),
        (
            "consumer-group-librdkafka.pcap",
            "kwire-librdkafka-group",
            vec![1],
            39,
            46,
        ),
    ];
    for (file, group, gens, first, last) in want {
        let text = stats(&jar, file, &[]);
        insta::assert_snapshot!(format!("{file}_jar_text"), text);
        let j = stats_json(&jar, file);
        let g = &j["groups"][0];
        assert_eq!(g["group_id"], group);
        let r = g["rebalances"].as_array().unwrap();
        let got: Vec<i64> = r
            .iter()
            .map(|r| r["generation"].as_i64().unwrap())
            .collect();
        assert_eq!(got, gens, "{file}");
        assert_eq!(r[0]["began"]["frame"], first, "{file}");
        assert_eq!(r.last().unwrap()["last_sync"]["frame"], last, "{file}");
        // The first JoinGroup of each client is told MEMBER_ID_REQUIRED.
        assert_eq!(r[0]["errors"][0]["error"], "MEMBER_ID_REQUIRED", "{file}");
        assert_eq!(g["leaves"].as_array().unwrap().len(), 1, "{file}");
        insta::assert_json_snapshot!(format!("{file}_jar_json"), j);
    }
}

#[test]
fn html_report_lists_the_rebalances() {
    let Some(jar) = jar() else {
        return skip("no kafka-clients-4.4.0.jar found");
    };
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("report.html");
    stats(
        &jar,
        "synthetic/stories/group-rebalance.pcap",
        &["--html", page.to_str().unwrap()],
    );
    let s = std::fs::read_to_string(&page).unwrap();
    let start = s.find("<section id=\"rebalances\">").unwrap();
    let section = &s[start..start + s[start..].find("</section>").unwrap()];
    assert!(
        section.contains("<h3>Group <code>payments</code></h3>"),
        "{section}"
    );
    // One row per generation, each with its first JoinGroup and first successful sync.
    assert_eq!(
        section.matches("<tr><td class=\"n\">").count(),
        5,
        "{section}"
    );
    for (began, completed) in [(4, 9), (15, 25), (30, 43), (52, 59), (66, 69)] {
        assert!(section.contains(&format!("[{began}]</td>")), "{began}");
        assert!(
            section.contains(&format!("[{completed}]</td>")),
            "{completed}"
        );
    }
    assert!(section.contains("<span class=\"err\">UNKNOWN_MEMBER_ID</span> ×1 (c-3333-member)"));
    assert_eq!(section.matches("REBALANCE_IN_PROGRESS").count(), 4);
    assert!(!section.contains("Not analysed"));
}

#[test]
fn html_report_shows_who_announced_and_resigned() {
    let Some(jar) = jar() else {
        return skip("no kafka-clients-4.4.0.jar found");
    };
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("report.html");
    stats(
        &jar,
        "synthetic/stories/quorum-handover.pcap",
        &["--html", page.to_str().unwrap()],
    );
    let s = std::fs::read_to_string(&page).unwrap();
    assert!(s.contains("node 1 announced itself leader (BeginQuorumEpoch) at 0.000300 [4]"));
    assert!(
        s.contains("node 1 resigned (EndQuorumEpoch) at 2.000300 [21], preferring node 3, node 2")
    );
    assert!(s.contains("node 3 announced itself leader (BeginQuorumEpoch) at 2.200300 [32]"));
    assert!(!s.contains("<td class=\"n\">99</td>"));
}
