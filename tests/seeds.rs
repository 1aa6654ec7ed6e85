//! The seed pages' smallest messages: exact sizes, decode, and byte-exact trees.

use kwire::codec::{Message, decode_request, decode_response, encode_request, encode_response};
use kwire::view::{json, tree};
use serde_json::json;

const ZERO_UUID: &str = "00000000-0000-0000-0000-000000000000";

fn vote_request() -> Vec<u8> {
    let body = json!({
        "ClusterId": "", "VoterId": 0,
        "Topics": [{"TopicName": "", "Partitions": [{
            "PartitionIndex": 0, "ReplicaEpoch": 0, "ReplicaId": 0,
            "ReplicaDirectoryId": ZERO_UUID, "VoterDirectoryId": ZERO_UUID,
            "LastOffsetEpoch": 0, "LastOffset": 0, "PreVote": false}]}]
    });
    encode_request(52, 2, 0, Some(""), &body).unwrap()
}

fn vote_response() -> Vec<u8> {
    let body = json!({
        "ErrorCode": 0,
        "Topics": [{"TopicName": "", "Partitions": [{
            "PartitionIndex": 0, "ErrorCode": 0, "LeaderId": 0, "LeaderEpoch": 0,
            "VoteGranted": false}]}]
    });
    encode_response(52, 2, 0, &body).unwrap()
}

fn find_coordinator_request() -> Vec<u8> {
    encode_request(
        10,
        6,
        0,
        Some(""),
        &json!({"KeyType": 0, "CoordinatorKeys": [""]}),
    )
    .unwrap()
}

fn find_coordinator_response() -> Vec<u8> {
    let body = json!({
        "ThrottleTimeMs": 0,
        "Coordinators": [{"Key": "", "NodeId": 0, "Host": "", "Port": 0, "ErrorCode": 0,
                          "ErrorMessage": ""}]
    });
    encode_response(10, 6, 0, &body).unwrap()
}

fn clean(m: &Message<'_>) {
    assert_eq!(m.error, None);
    assert!(m.warnings.is_empty());
    assert!(m.body.is_some());
}

#[test]
fn seed_sizes() {
    assert_eq!(vote_request().len(), 83);
    assert_eq!(vote_response().len(), 32);
    assert_eq!(find_coordinator_request().len(), 19);
    assert_eq!(find_coordinator_response().len(), 29);
}

#[test]
fn vote_request_tree() {
    let f = vote_request();
    let m = decode_request(&f);
    clean(&m);
    insta::assert_snapshot!(tree::render(&m.tree));
}

#[test]
fn vote_response_tree() {
    let f = vote_response();
    let m = decode_response(&f, Some((52, 2)));
    clean(&m);
    insta::assert_snapshot!(tree::render(&m.tree));
}

#[test]
fn find_coordinator_request_tree() {
    let f = find_coordinator_request();
    let m = decode_request(&f);
    clean(&m);
    insta::assert_snapshot!(tree::render(&m.tree));
}

#[test]
fn find_coordinator_response_tree() {
    let f = find_coordinator_response();
    let m = decode_response(&f, Some((10, 6)));
    clean(&m);
    insta::assert_snapshot!(tree::render(&m.tree));
}

#[test]
fn contract_example_body() {
    let f = find_coordinator_request();
    let m = decode_request(&f);
    let body = json::body_value(&m.tree, m.body.unwrap());
    assert_eq!(body, json!({"KeyType": 0, "CoordinatorKeys": [""]}));
    assert_eq!(m.client_id, Some(""));
    assert_eq!(m.correlation_id, Some(0));
}

/// (name, offset, size) for each node of a tree, as written in text.
fn ranges(text: &str) -> Vec<(String, u32, u32)> {
    let mut out = Vec::new();
    for node in text.split("+-- ").flat_map(|s| s.split('\n')) {
        let node = node.trim_start_matches(['|', ' ']);
        let Some(open) = node.find("[0x") else {
            continue;
        };
        let inner = &node[open + 3..];
        let Some((off, rest)) = inner.split_once(", ") else {
            continue;
        };
        let Some((len, _)) = rest.split_once("B]") else {
            continue;
        };
        let name = node.split_whitespace().next().unwrap_or("").to_string();
        out.push((
            name,
            u32::from_str_radix(off, 16).unwrap(),
            len.parse().unwrap(),
        ));
    }
    out
}

/// The seed page's object trees (request first, then response), when ../shared is present.
fn seed_trees(file: &str) -> Option<(String, String)> {
    let path = format!("{}/../shared/seeds/{file}", env!("CARGO_MANIFEST_DIR"));
    let Ok(text) = std::fs::read_to_string(&path) else {
        eprintln!("SKIP: seed page {path} is not present");
        return None;
    };
    let mut trees = text.split("object tree").skip(1).map(|t| {
        t.split("kafka message schema")
            .next()
            .unwrap_or("")
            .to_string()
    });
    Some((trees.next()?, trees.next()?))
}

#[test]
fn trees_match_seed_pages_offsets_and_sizes() {
    for (file, req, resp) in [
        ("vote.txt", vote_request(), (vote_response(), (52, 2))),
        (
            "find-coordinator.txt",
            find_coordinator_request(),
            (find_coordinator_response(), (10, 6)),
        ),
    ] {
        let Some((seed_req, seed_resp)) = seed_trees(file) else {
            return;
        };
        let ours = tree::render(&decode_request(&req).tree);
        assert_eq!(ranges(&ours), ranges(&seed_req), "{file} request");
        let ours = tree::render(&decode_response(&resp.0, Some(resp.1)).tree);
        assert_eq!(ranges(&ours), ranges(&seed_resp), "{file} response");
        assert!(ranges(&seed_req).len() > 8);
    }
}
