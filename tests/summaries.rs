//! The summary line of every message in the bundled captures and the public ones
//! (../shared/captures-public, skipped with a message when missing), with Kafka's
//! schemas loaded from the kafka-clients jars found as users find them: without a
//! jar these tests SKIP loudly, and fail under `CI=true`.
//!
//! Each snapshot line was reviewed against the NDJSON of the same message.

mod common;

use common::{loaded, skip};

use kwire::capture::Source;
use kwire::codec;
use kwire::pipeline::{self, Config};
use kwire::view::summary;
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};

/// Every summary line of a capture, as `kwire read` prints them.
fn lines(path: &Path) -> String {
    let mut src = Source::open_file(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut out = String::new();
    let (_stats, _end) = pipeline::run(&mut src, Config::default(), &mut |r| {
        out.push_str(&summary::line(r));
        out.push('\n');
        ControlFlow::Continue(())
    });
    out
}

fn pcaps(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|d| d.filter_map(|e| Some(e.ok()?.path())).collect())
        .unwrap_or_default();
    v.retain(|p| p.extension().is_some_and(|e| e == "pcap" || e == "pcapng"));
    // TLS captures need their key logs: tests/tls.rs covers them.
    v.retain(|p| {
        !p.file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with("tls-"))
    });
    v.sort();
    v
}

fn snapshot_all(dir: &Path, prefix: &str) {
    for p in pcaps(dir) {
        let name = format!("{prefix}{}", p.file_name().unwrap().to_string_lossy());
        insta::assert_snapshot!(name, lines(&p));
    }
}

#[test]
fn bundled_captures() {
    if !loaded() {
        return skip("no kafka-clients jar found");
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("captures");
    snapshot_all(&root, "");
    snapshot_all(&root.join("synthetic"), "synthetic__");
}

#[test]
fn public_captures() {
    if !loaded() {
        return skip("no kafka-clients jar found");
    }
    // ../shared beside the checkout (a worktree one level deeper looks one further up).
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let Some(dir) = ["../shared/captures-public", "../../shared/captures-public"]
        .iter()
        .map(|d| root.join(d))
        .find(|d| d.is_dir())
    else {
        eprintln!("SKIP: ../shared/captures-public is missing; the public summaries did not run");
        return;
    };
    snapshot_all(&dir, "public__");
}

/// A Metadata response naming topic `orders` with id X, then a Fetch v13 that carries
/// only X: its summary, tree and JSON show `orders` (the capture made by the synthetic
/// flow and kwire's encoder).
#[test]
fn topic_ids_are_named_in_every_view() {
    if !loaded() {
        return skip("no kafka-clients jar found");
    }
    use serde_json::json;
    const X: &str = "6a2f3b4c-5d6e-4f70-8192-a3b4c5d6e7f8";
    let c = codec::current();
    let fetch = json!({"MaxWaitMs": 500, "Topics": [
        {"TopicId": X, "Partitions": [{"Partition": 0, "FetchOffset": 7}]}]});
    let mut f = common::flow();
    // Asked before anything named X: no name yet.
    f.client_send(&c.encode_request(1, 13, 1, Some("c"), &fetch).unwrap());
    f.client_send(
        &c.encode_request(3, 12, 2, Some("c"), &json!({"Topics": null}))
            .unwrap(),
    );
    f.server_send(
        &c.encode_response(
            3,
            12,
            2,
            &json!({"Brokers": [{"NodeId": 1, "Host": "b1", "Port": 9092}],
            "ControllerId": 1, "Topics": [{"ErrorCode": 0, "Name": "orders", "TopicId": X,
            "Partitions": [{"ErrorCode": 0, "PartitionIndex": 0, "LeaderId": 1,
                "ReplicaNodes": [1], "IsrNodes": [1]}]}]}),
        )
        .unwrap(),
    );
    f.client_send(&c.encode_request(1, 13, 3, Some("c"), &fetch).unwrap());
    let file = common::pcap(&[&f]);
    let mut src = Source::open_file(file.path()).unwrap();
    let mut seen = Vec::new();
    let _ = pipeline::run(&mut src, Config::default(), &mut |r| {
        let mut json = Vec::new();
        kwire::view::json::write_record(&mut json, r);
        let text = String::from_utf8(json).unwrap();
        seen.push((summary::line(r), kwire::view::tree::record(r), text));
        ControlFlow::Continue(())
    });
    assert_eq!(seen.len(), 4);
    let (first, _, first_json) = &seen[0];
    assert!(
        first.ends_with(&format!("maxwait=500ms {X}[p0@7]")),
        "{first}"
    );
    assert!(!first_json.contains("_topic_name"), "{first_json}");
    let (line, tree, json) = &seen[3];
    assert!(line.ends_with("maxwait=500ms orders[p0@7]"), "{line}");
    assert!(
        tree.contains(&format!("TopicId uuid = {X} (topic \"orders\")")),
        "{tree}"
    );
    // `_topic_name` follows `TopicId` directly, as the contract places it.
    let pair = format!("\"TopicId\":\"{X}\",\"_topic_name\":\"orders\"");
    assert!(json.contains(&pair), "{json}");
    // The Metadata response names its topic itself: nothing is added there.
    assert!(!seen[2].2.contains("_topic_name"), "{}", seen[2].2);
}

/// For reviewing: `KWIRE_DUMP=file.pcap cargo test --test summaries dump -- --ignored
/// --nocapture` prints each message's summary line and NDJSON, one after the other.
#[test]
#[ignore]
fn dump() {
    let Ok(file) = std::env::var("KWIRE_DUMP") else {
        return;
    };
    assert!(loaded(), "no kafka-clients jar found");
    let mut src = Source::open_file(&file).unwrap();
    let _ = pipeline::run(&mut src, Config::default(), &mut |r| {
        let mut json = Vec::new();
        kwire::view::json::write_record(&mut json, r);
        println!("{}\n{}", summary::line(r), String::from_utf8_lossy(&json));
        ControlFlow::Continue(())
    });
}
