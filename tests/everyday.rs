//! Everyday use (issue 18): short summary lines, colour, completions and the man page,
//! and saying why nothing was found.

mod common;

use common::*;
use kwire::codec::{encode_request, encode_response};
use serde_json::{Value, json};

// ---- summary lines stay readable ------------------------------------------------

/// A Vote request over 9 partitions, its response, and a FindCoordinator v6 exchange with
/// 5 keys, one of them 60 characters long.
fn long_lists() -> kwire::synth::Flow {
    let parts: Vec<Value> = (0..9)
        .map(|i| {
            json!({"PartitionIndex": i, "ReplicaEpoch": 5, "ReplicaId": i + 1,
                   "LastOffsetEpoch": 4, "LastOffset": 100 + i, "PreVote": false,
                   "ReplicaDirectoryId": "00000000-0000-4000-8000-000000000001",
                   "VoterDirectoryId": "00000000-0000-4000-8000-000000000002"})
        })
        .collect();
    let vote_req = json!({"ClusterId": "c", "VoterId": 2,
        "Topics": [{"TopicName": "__cluster_metadata", "Partitions": parts}]});
    let answers: Vec<Value> = (0..9)
        .map(|i| {
            json!({"PartitionIndex": i, "ErrorCode": 0, "LeaderId": -1,
                   "LeaderEpoch": 5, "VoteGranted": i % 2 == 0})
        })
        .collect();
    let vote_resp = json!({"ErrorCode": 0,
        "Topics": [{"TopicName": "__cluster_metadata", "Partitions": answers}]});
    let long = "k".repeat(60);
    let keys = [long.as_str(), "a", "b", "c", "d"];
    let fc_req = json!({"KeyType": 0, "CoordinatorKeys": keys});
    let coords: Vec<Value> = keys
        .iter()
        .map(|k| {
            json!({"Key": k, "NodeId": 1, "Host": "b1", "Port": 9092,
                        "ErrorCode": 0, "ErrorMessage": null})
        })
        .collect();
    let fc_resp = json!({"ThrottleTimeMs": 0, "Coordinators": coords});
    let frame = |r: Result<Vec<u8>, _>| -> Vec<u8> { r.unwrap() };
    let mut f = flow();
    f.syn_handshake()
        .client_send(&frame(encode_request(52, 2, 1, Some("ctl"), &vote_req)))
        .server_send(&frame(encode_response(52, 2, 1, &vote_resp)))
        .client_send(&frame(encode_request(10, 6, 2, Some("app"), &fc_req)))
        .server_send(&frame(encode_response(10, 6, 2, &fc_resp)));
    f
}

#[test]
fn summary_lists_show_three_items_and_cut_long_strings() {
    let file = pcap(&[&long_lists()]);
    let (s, j) = summary_and_json(file.path(), &[]);
    let lines: Vec<&str> = s.lines().collect();
    let v = json_lines(&j);
    // Each shown item is the JSON's item at the same place; the count says how many are left.
    let parts = &v[0]["body"]["Topics"][0]["Partitions"];
    let shown: Vec<String> = (0..3)
        .map(|i| {
            let p = &parts[i];
            format!(
                "replica={} epoch={} last={}@{}",
                p["ReplicaId"], p["ReplicaEpoch"], p["LastOffset"], p["LastOffsetEpoch"]
            )
        })
        .collect();
    let more = parts.as_array().unwrap().len() - 3;
    assert!(
        lines[0].ends_with(&format!("  {}, +{more} more → voter 2", shown.join(", "))),
        "{}",
        lines[0]
    );
    let answers = &v[1]["body"]["Topics"][0]["Partitions"];
    let granted = |i: usize| {
        if answers[i]["VoteGranted"] == json!(true) {
            "yes"
        } else {
            "no"
        }
    };
    assert!(
        lines[1].contains(&format!(
            "  granted={} leader=-1 epoch=5, granted={} leader=-1 epoch=5, granted={} leader=-1 epoch=5, +6 more  ",
            granted(0),
            granted(1),
            granted(2)
        )),
        "{}",
        lines[1]
    );
    // The 60-character key is cut to 40 and `…`; the JSON keeps it whole.
    let key = v[2]["body"]["CoordinatorKeys"][0].as_str().unwrap();
    assert_eq!(key.len(), 60);
    let cut = format!("{}…", &key[..40]);
    assert!(
        lines[2].ends_with(&format!("group keys=[{cut}, a, b, +2 more]")),
        "{}",
        lines[2]
    );
    assert!(
        lines[3].contains(&format!(
            "  {cut} → node 1 (b1:9092), a → node 1 (b1:9092), b → node 1 (b1:9092), +2 more  "
        )),
        "{}",
        lines[3]
    );
    assert_eq!(v[3]["body"]["Coordinators"].as_array().unwrap().len(), 5);
    // The tree keeps everything.
    let tree = read(file.path(), &["--format", "tree"]);
    assert!(tree.contains(key));
    assert_eq!(tree.matches("ReplicaId").count(), 9, "{tree}");
}
