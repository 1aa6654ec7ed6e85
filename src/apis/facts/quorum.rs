//! BeginQuorumEpoch (53), EndQuorumEpoch (54) and KRaft Fetch (1): what the election
//! timeline takes from each. A new leader announces its epoch with BeginQuorumEpoch; a
//! resigning leader sends EndQuorumEpoch; a Fetch response names the leader it knows.

use super::{BEGIN_QUORUM_EPOCH, END_QUORUM_EPOCH, FETCH, raw_str, uuid};
use crate::apis::{int16, int32};
use crate::codec::Tree;

/// The id of KRaft's metadata topic, `__cluster_metadata`, in Fetch v13+.
const METADATA_TOPIC_ID: [u8; 16] = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1];
pub(crate) const METADATA_TOPIC: &str = "__cluster_metadata";

/// One partition's leader and epoch, as a message states them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct LeaderFact<'a> {
    pub topic: &'a str,
    pub partition: i32,
    pub leader_id: i32,
    pub leader_epoch: i32,
    /// The partition's error code (0 for none).
    pub error: i16,
    /// EndQuorumEpoch: the successors the resigning leader prefers, in order.
    pub preferred: Vec<i32>,
}

/// A quorum request: Begin (a leader announces its epoch), End (a leader resigns), or a
/// KRaft Fetch (a follower fetching the metadata log; only its cluster id matters here).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct QuorumRequest<'a> {
    pub api: i16,
    pub cluster_id: Option<&'a str>,
    /// Begin v1+: the voter addressed.
    pub voter_id: Option<i32>,
    pub partitions: Vec<LeaderFact<'a>>,
}

/// A quorum response: each partition's leader as the responder knows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct QuorumResponse<'a> {
    pub api: i16,
    pub top_error: i16,
    pub partitions: Vec<LeaderFact<'a>>,
}

/// The request's facts. A Fetch without a cluster id is not KRaft's (brokers and
/// consumers send none) and gives `None`.
pub(crate) fn request_facts<'a>(api: i16, t: &Tree<'a>, body: usize) -> Option<QuorumRequest<'a>> {
    let cluster_id = raw_str(t, body, "ClusterId");
    let mut partitions = Vec::new();
    match api {
        BEGIN_QUORUM_EPOCH | END_QUORUM_EPOCH => {
            for topic in t.elements(body, "Topics") {
                let name = raw_str(t, topic, "TopicName").unwrap_or("");
                for p in t.elements(topic, "Partitions") {
                    let mut preferred: Vec<i32> = t
                        .elements(p, "PreferredCandidates")
                        .into_iter()
                        .filter_map(|c| int32(t, c, "CandidateId"))
                        .collect();
                    // v0 lists the successors as a plain int32 array.
                    preferred.extend(t.elements(p, "PreferredSuccessors").into_iter().filter_map(
                        |c| match t.nodes.get(c).map(|n| n.value) {
                            Some(crate::codec::Value::Int(v)) => i32::try_from(v).ok(),
                            _ => None,
                        },
                    ));
                    partitions.push(LeaderFact {
                        topic: name,
                        partition: int32(t, p, "PartitionIndex").unwrap_or(0),
                        leader_id: int32(t, p, "LeaderId").unwrap_or(-1),
                        leader_epoch: int32(t, p, "LeaderEpoch").unwrap_or(-1),
                        error: 0,
                        preferred,
                    });
                }
            }
        }
        FETCH => {
            cluster_id?;
        }
        _ => return None,
    };
    Some(QuorumRequest {
        api,
        cluster_id,
        voter_id: int32(t, body, "VoterId"),
        partitions,
    })
}

/// The response's facts: Begin and End responses carry each partition's leader; a Fetch
/// response its `CurrentLeader` (v12+), kept only for the metadata topic.
pub(crate) fn response_facts<'a>(
    api: i16,
    t: &Tree<'a>,
    body: usize,
) -> Option<QuorumResponse<'a>> {
    let mut partitions = Vec::new();
    match api {
        BEGIN_QUORUM_EPOCH | END_QUORUM_EPOCH => {
            for topic in t.elements(body, "Topics") {
                let name = raw_str(t, topic, "TopicName").unwrap_or("");
                for p in t.elements(topic, "Partitions") {
                    partitions.push(LeaderFact {
                        topic: name,
                        partition: int32(t, p, "PartitionIndex").unwrap_or(0),
                        leader_id: int32(t, p, "LeaderId").unwrap_or(-1),
                        leader_epoch: int32(t, p, "LeaderEpoch").unwrap_or(-1),
                        error: int16(t, p, "ErrorCode").unwrap_or(0),
                        preferred: Vec::new(),
                    });
                }
            }
        }
        FETCH => {
            for topic in t.elements(body, "Responses") {
                let by_name = raw_str(t, topic, "Topic") == Some(METADATA_TOPIC);
                let by_id = uuid(t, topic, "TopicId") == Some(METADATA_TOPIC_ID);
                if !(by_name || by_id) {
                    continue;
                }
                for p in t.elements(topic, "Partitions") {
                    let Some(cl) = t.field(p, "CurrentLeader") else {
                        continue;
                    };
                    partitions.push(LeaderFact {
                        topic: METADATA_TOPIC,
                        partition: int32(t, p, "PartitionIndex").unwrap_or(0),
                        leader_id: int32(t, cl, "LeaderId").unwrap_or(-1),
                        leader_epoch: int32(t, cl, "LeaderEpoch").unwrap_or(-1),
                        error: int16(t, p, "ErrorCode").unwrap_or(0),
                        preferred: Vec::new(),
                    });
                }
            }
        }
        _ => return None,
    }
    Some(QuorumResponse {
        api,
        top_error: int16(t, body, "ErrorCode").unwrap_or(0),
        partitions,
    })
}
