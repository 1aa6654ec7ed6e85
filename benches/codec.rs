//! Codec throughput: decoding each message kind to a value tree, and to a JSON body; and
//! decoding lazily (`decode_lazy`): what a summary line reads, and the header and verdict
//! only (a filter on header fields), against the full tree of `decode_tree`.

use criterion::{Criterion, criterion_group, criterion_main};
use kwire::codec::{
    Need, decode_request, decode_request_with, decode_response, decode_response_with,
    encode_request, encode_response,
};
use kwire::view::json::write_body;
use serde_json::json;
use std::hint::black_box;

const ZERO_UUID: &str = "00000000-0000-0000-0000-000000000000";

/// A benchmark name, a frame, and for responses the API of their request.
type Case = (&'static str, Vec<u8>, Option<(i16, i16)>);

/// The seed pages' smallest messages, plus a busier FindCoordinator v3 pair.
fn frames() -> Vec<Case> {
    let vote_req = json!({"ClusterId": "", "VoterId": 0, "Topics": [{"TopicName": "", "Partitions": [{
        "PartitionIndex": 0, "ReplicaEpoch": 0, "ReplicaId": 0, "ReplicaDirectoryId": ZERO_UUID,
        "VoterDirectoryId": ZERO_UUID, "LastOffsetEpoch": 0, "LastOffset": 0, "PreVote": false}]}]});
    let vote_resp = json!({"ErrorCode": 0, "Topics": [{"TopicName": "", "Partitions": [{
        "PartitionIndex": 0, "ErrorCode": 0, "LeaderId": 0, "LeaderEpoch": 0, "VoteGranted": false}]}]});
    let fc_resp = json!({"ThrottleTimeMs": 0, "Coordinators": [{"Key": "", "NodeId": 0, "Host": "",
        "Port": 0, "ErrorCode": 0, "ErrorMessage": ""}]});
    let fc3_resp = json!({"ThrottleTimeMs": 0, "ErrorCode": 0, "ErrorMessage": null, "NodeId": 2,
        "Host": "broker-2.example", "Port": 9092});
    vec![
        (
            "vote_request_v2",
            encode_request(52, 2, 0, Some(""), &vote_req).unwrap(),
            None,
        ),
        (
            "vote_response_v2",
            encode_response(52, 2, 0, &vote_resp).unwrap(),
            Some((52, 2)),
        ),
        (
            "find_coordinator_request_v6",
            encode_request(
                10,
                6,
                0,
                Some(""),
                &json!({"KeyType": 0, "CoordinatorKeys": [""]}),
            )
            .unwrap(),
            None,
        ),
        (
            "find_coordinator_response_v6",
            encode_response(10, 6, 0, &fc_resp).unwrap(),
            Some((10, 6)),
        ),
        (
            "find_coordinator_request_v3",
            encode_request(
                10,
                3,
                7,
                Some("consumer-orders-1"),
                &json!({"Key": "orders-app", "KeyType": 0}),
            )
            .unwrap(),
            None,
        ),
        (
            "find_coordinator_response_v3",
            encode_response(10, 3, 7, &fc3_resp).unwrap(),
            Some((10, 3)),
        ),
    ]
}

fn bench(c: &mut Criterion) {
    let mut tree = c.benchmark_group("decode_tree");
    for (name, frame, api) in frames() {
        tree.bench_function(name, |b| {
            b.iter(|| match api {
                None => black_box(decode_request(black_box(&frame)))
                    .tree
                    .nodes
                    .len(),
                Some(a) => black_box(decode_response(black_box(&frame), Some(a)))
                    .tree
                    .nodes
                    .len(),
            })
        });
    }
    tree.finish();
    let mut to_json = c.benchmark_group("decode_json");
    for (name, frame, api) in frames() {
        let mut out = Vec::with_capacity(512);
        to_json.bench_function(name, |b| {
            b.iter(|| {
                let m = match api {
                    None => decode_request(black_box(&frame)),
                    Some(a) => decode_response(black_box(&frame), Some(a)),
                };
                out.clear();
                if let Some(body) = m.body {
                    write_body(&mut out, &m.tree, body);
                }
                black_box(out.len())
            })
        });
    }
    to_json.finish();
    let mut lazy = c.benchmark_group("decode_lazy");
    let needs = [
        ("full", Need::all()),
        ("summary", kwire::apis::summary_need()),
        ("header", Need::header()),
    ];
    for (name, frame, api) in frames() {
        for (what, need) in &needs {
            lazy.bench_function(format!("{name}/{what}"), |b| {
                b.iter(|| {
                    let m = match api {
                        None => decode_request_with(black_box(&frame), need),
                        Some(a) => decode_response_with(black_box(&frame), Some(a), need),
                    };
                    black_box((m.tree.nodes.len(), m.error.is_none()))
                })
            });
        }
    }
    lazy.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
