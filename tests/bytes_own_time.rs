//! Time and place are the bytes' own (issue 12): a message is placed at the
//! packet that carried its last byte, even when TCP releases it later (after
//! a hole is skipped, or at close), and latency is measured between those.

mod common;

use common::*;
use serde_json::Value;

/// One message per NDJSON line: (kind, correlation id, frame, ts, latency).
fn rows(j: &str) -> Vec<(String, i64, u64, f64, Option<i64>)> {
    json_lines(j)
        .iter()
        .map(|m: &Value| {
            (
                m["kind"].as_str().unwrap().to_string(),
                m["correlation_id"].as_i64().unwrap(),
                m["frame"].as_u64().unwrap(),
                m["ts"].as_f64().unwrap(),
                m["latency_us"].as_i64(),
            )
        })
        .collect()
}

#[test]
fn a_request_after_a_lost_segment_keeps_its_own_packet() {
    let mut f = flow().with_start(1_700_000_000_000_000_000, 1_000_000);
    f.syn_handshake()
        .client_send(&fc_req(4, 1, "app", "lost"))
        .client_send(&fc_req(4, 2, "app", "kept"))
        .server_send(&fc_resp(4, 1, "lost", 2, "b2", 9092, 0))
        .server_send(&fc_resp(4, 2, "kept", 2, "b2", 9092, 0))
        .fin();
    // Packets: 0-2 handshake, 3 request 1 (lost), 4 request 2, 5 and 6 the answers.
    let ts = |i: usize| f.packets()[i].0 as f64 / 1e9;
    let (t4, t6) = (ts(4), ts(6));
    f.drop_packet(3);
    let file = pcap(&[&f]);
    let got = rows(&read(file.path(), &["--format", "json"]));
    // Request 2 sat out of order until the server's answer acknowledged past
    // the hole (frame 5); it is shown at frame 4, where it was captured.
    let req2 = got.iter().find(|r| r.0 == "request" && r.1 == 2).unwrap();
    assert_eq!(req2.2, 4, "{got:?}");
    assert!((req2.3 - t4).abs() < 1e-6);
    let resp2 = got.iter().find(|r| r.0 == "response" && r.1 == 2).unwrap();
    assert_eq!(resp2.2, 6);
    assert_eq!(resp2.4, Some(((t6 - t4) * 1e6).round() as i64));
}
