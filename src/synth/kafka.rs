//! Vote and FindCoordinator messages at any version, built with the codec's
//! encoder, for synthetic fixtures and benchmarks. Only fields present at the
//! version are set, so every frame is what a real peer of that version sends.

use crate::codec::{encode_request, encode_response};
use crate::proto::{FIND_COORDINATOR, VOTE};
use serde_json::{Value, json};

/// A small deterministic generator (SplitMix64), so fixtures are reproducible.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (n > 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n.max(1)
    }
}

/// What a Vote exchange says, independent of version.
#[derive(Clone, Debug)]
pub struct Vote {
    pub cluster_id: String,
    pub candidate: i32,
    pub voter: i32,
    pub epoch: i32,
    pub last_offset: i64,
    pub last_epoch: i32,
    pub pre_vote: bool,
    pub granted: bool,
    pub leader: i32,
    pub error: i16,
    /// The leader's endpoint, sent as a tagged field from v1.
    pub leader_endpoint: Option<(String, u16)>,
}

fn dir_id(node: i32) -> String {
    format!("{:08x}-0000-4000-8000-{:012x}", node, node)
}

/// A Vote request frame at `version`.
pub fn vote_request(v: i16, corr: i32, client_id: &str, x: &Vote) -> Vec<u8> {
    let mut p = json!({"PartitionIndex": 0, "ReplicaEpoch": x.epoch, "ReplicaId": x.candidate,
        "LastOffsetEpoch": x.last_epoch, "LastOffset": x.last_offset});
    if v >= 1 {
        p["ReplicaDirectoryId"] = json!(dir_id(x.candidate));
        p["VoterDirectoryId"] = json!(dir_id(x.voter));
    }
    if v >= 2 {
        p["PreVote"] = json!(x.pre_vote);
    }
    let mut body = json!({"ClusterId": x.cluster_id,
        "Topics": [{"TopicName": "__cluster_metadata", "Partitions": [p]}]});
    if v >= 1 {
        body["VoterId"] = json!(x.voter);
    }
    frame(encode_request(VOTE, v, corr, Some(client_id), &body))
}

/// A Vote response frame at `version`.
pub fn vote_response(v: i16, corr: i32, x: &Vote) -> Vec<u8> {
    let mut body = json!({"ErrorCode": 0, "Topics": [{"TopicName": "__cluster_metadata",
        "Partitions": [{"PartitionIndex": 0, "ErrorCode": x.error, "LeaderId": x.leader,
        "LeaderEpoch": x.epoch, "VoteGranted": x.granted}]}]});
    if let (true, Some((host, port))) = (v >= 1, &x.leader_endpoint) {
        body["NodeEndpoints"] = json!([{"NodeId": x.leader, "Host": host, "Port": port}]);
    }
    frame(encode_response(VOTE, v, corr, &body))
}

/// One coordinator answer: key, node, host, port, error code, error message.
#[derive(Clone, Debug)]
pub struct Coordinator {
    pub key: String,
    pub node: i32,
    pub host: String,
    pub port: i32,
    pub error: i16,
    pub message: Option<String>,
}

/// A FindCoordinator request at `version`; before v4 only the first key is sent.
pub fn find_coordinator_request(
    v: i16,
    corr: i32,
    client_id: &str,
    key_type: i8,
    keys: &[&str],
) -> Vec<u8> {
    let mut body = serde_json::Map::new();
    if v <= 3 {
        body.insert("Key".into(), json!(keys.first().copied().unwrap_or("")));
    }
    if v >= 1 {
        body.insert("KeyType".into(), json!(key_type));
    }
    if v >= 4 {
        body.insert("CoordinatorKeys".into(), json!(keys));
    }
    frame(encode_request(
        FIND_COORDINATOR,
        v,
        corr,
        Some(client_id),
        &Value::Object(body),
    ))
}

/// A FindCoordinator response at `version`; before v4 only the first answer is sent.
pub fn find_coordinator_response(v: i16, corr: i32, answers: &[Coordinator]) -> Vec<u8> {
    let mut body = serde_json::Map::new();
    if v >= 1 {
        body.insert("ThrottleTimeMs".into(), json!(0));
    }
    if v <= 3 {
        if let Some(c) = answers.first() {
            body.insert("ErrorCode".into(), json!(c.error));
            if v >= 1 {
                body.insert("ErrorMessage".into(), json!(c.message));
            }
            body.insert("NodeId".into(), json!(c.node));
            body.insert("Host".into(), json!(c.host));
            body.insert("Port".into(), json!(c.port));
        }
    } else {
        let list: Vec<Value> = answers
            .iter()
            .map(|c| {
                json!({"Key": c.key, "NodeId": c.node, "Host": c.host, "Port": c.port,
                       "ErrorCode": c.error, "ErrorMessage": c.message})
            })
            .collect();
        body.insert("Coordinators".into(), Value::Array(list));
    }
    frame(encode_response(
        FIND_COORDINATOR,
        v,
        corr,
        &Value::Object(body),
    ))
}

/// Synthetic bodies are built from the schemas' own fields, so encoding cannot fail.
fn frame(r: Result<Vec<u8>, crate::codec::EncodeError>) -> Vec<u8> {
    match r {
        Ok(f) => f,
        Err(e) => panic!("synthetic message does not encode: {e}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::{decode_request, decode_response};

    #[test]
    fn every_version_decodes_cleanly() {
        let x = Vote {
            cluster_id: "c".into(),
            candidate: 1,
            voter: 2,
            epoch: 3,
            last_offset: 40,
            last_epoch: 2,
            pre_vote: true,
            granted: false,
            leader: 2,
            error: 0,
            leader_endpoint: Some(("localhost".into(), 9093)),
        };
        for v in 0..=2 {
            assert_eq!(decode_request(&vote_request(v, 1, "c", &x)).error, None);
            let r = vote_response(v, 1, &x);
            assert_eq!(decode_response(&r, Some((VOTE, v))).error, None);
        }
        let c = Coordinator {
            key: "g".into(),
            node: 1,
            host: "h".into(),
            port: 9092,
            error: 0,
            message: None,
        };
        for v in 0..=6 {
            let q = find_coordinator_request(v, 1, "c", 0, &["g", "h"]);
            assert_eq!(decode_request(&q).error, None);
            let r = find_coordinator_response(v, 1, std::slice::from_ref(&c));
            assert_eq!(decode_response(&r, Some((10, v))).error, None);
        }
    }
}
