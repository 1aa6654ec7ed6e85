//! The KRaft quorum beyond Vote: BeginQuorumEpoch (53, a new leader announces itself),
//! EndQuorumEpoch (54, a leader resigns), DescribeQuorum (55) and FetchSnapshot (59).

use super::fmt::{Body, join, kv, throttle};
use super::{Api, Fields, Track};
use crate::codec::Kind;
use crate::view::labels;

/// The body fields its summary line reads (each with what is inside it), at any depth.
const SUMMARY: Fields = Fields::Names(&["CandidateId", "CurrentVoters", "EndOffset", "Epoch", "ErrorCode", "HighWatermark", "Index", "LeaderEpoch", "LeaderId", "LogEndOffset", "Name", "Observers", "Partition", "PartitionIndex", "Partitions", "Position", "PreferredCandidates", "PreferredSuccessors", "ReplicaId", "Size", "SnapshotId", "ThrottleTimeMs", "Topic", "TopicId", "TopicName", "Topics", "UnalignedRecords", "VoterId"]);

pub(crate) const BEGIN: Api = Api {
    key: 53,
    details: |b, out| out.push_str(&begin(b)),
    summary: SUMMARY,
    track: Track::SummaryOnly,
};
pub(crate) const END: Api = Api {
    key: 54,
    details: |b, out| out.push_str(&end(b)),
    summary: SUMMARY,
    track: Track::SummaryOnly,
};
pub(crate) const DESCRIBE: Api = Api {
    key: 55,
    details: |b, out| out.push_str(&describe(b)),
    summary: SUMMARY,
    track: Track::SummaryOnly,
};
pub(crate) const FETCH_SNAPSHOT: Api = Api {
    key: 59,
    details: |b, out| out.push_str(&fetch_snapshot(b)),
    summary: SUMMARY,
    track: Track::SummaryOnly,
};

/// Every partition of every topic (the quorum has one: `__cluster_metadata-0`).
fn partitions(b: &Body<'_, '_>) -> Vec<usize> {
    b.elements(b.at, "Topics")
        .into_iter()
        .flat_map(|t| b.elements(t, "Partitions"))
        .collect()
}

/// `leader=1 epoch=5`, then the partition's error.
fn leader(b: &Body<'_, '_>, p: usize) -> String {
    join([
        kv("leader", b.int(p, "LeaderId")),
        kv("epoch", b.int(p, "LeaderEpoch")),
        b.error(p, "ErrorCode"),
    ])
}

/// What a Begin/EndQuorumEpoch response says: the leader each voter knows, and errors.
fn answer(b: &Body<'_, '_>) -> String {
    join([
        Some(labels::list_of(&partitions(b), |&p| leader(b, p))),
        b.error(b.at, "ErrorCode"),
    ])
}

fn begin(b: &Body<'_, '_>) -> String {
    match b.kind {
        Kind::Request => join([
            Some(labels::list_of(&partitions(b), |&p| leader(b, p))),
            b.int(b.at, "VoterId").map(|v| format!("→ voter {v}")),
        ]),
        Kind::Response => answer(b),
    }
}

fn end(b: &Body<'_, '_>) -> String {
    match b.kind {
        Kind::Request => labels::list_of(&partitions(b), |&p| {
            // v0 names successors by id; v1 names candidates with their directories.
            let mut next: Vec<i64> = b.ints(p, "PreferredSuccessors");
            next.extend(
                b.elements(p, "PreferredCandidates")
                    .into_iter()
                    .filter_map(|c| b.int(c, "CandidateId")),
            );
            join([
                Some(leader(b, p)),
                Some("resigns".into()),
                (!next.is_empty())
                    .then(|| format!("successors=[{}]", labels::list_of(&next, i64::to_string))),
            ])
        }),
        Kind::Response => answer(b),
    }
}

fn describe(b: &Body<'_, '_>) -> String {
    match b.kind {
        Kind::Request => labels::list_of(&b.elements(b.at, "Topics"), |&t| {
            b.with_parts(t, &b.elements(t, "Partitions"), |&p| {
                format!("p{}", b.int(p, "PartitionIndex").unwrap_or(-1))
            })
        }),
        Kind::Response => {
            let replicas = |p: usize, f: &str| {
                labels::list_of(&b.elements(p, f), |&r| {
                    format!(
                        "{}@{}",
                        b.int(r, "ReplicaId").unwrap_or(-1),
                        b.int(r, "LogEndOffset").unwrap_or(-1)
                    )
                })
            };
            join([
                b.error(b.at, "ErrorCode"),
                Some(labels::list_of(&partitions(b), |&p| {
                    join([
                        Some(leader(b, p)),
                        kv("hw", b.int(p, "HighWatermark")),
                        Some(format!("voters=[{}]", replicas(p, "CurrentVoters"))),
                        Some(format!("observers=[{}]", replicas(p, "Observers"))),
                    ])
                })),
            ])
        }
    }
}

/// `snapshot=100/5` (end offset and epoch).
fn snapshot(b: &Body<'_, '_>, p: usize) -> Option<String> {
    let s = b.tree.field(p, "SnapshotId")?;
    Some(format!(
        "snapshot={}/{}",
        b.int(s, "EndOffset").unwrap_or(-1),
        b.int(s, "Epoch").unwrap_or(-1)
    ))
}

fn fetch_snapshot(b: &Body<'_, '_>) -> String {
    match b.kind {
        Kind::Request => join([
            kv("replica", b.int(b.at, "ReplicaId")),
            Some(b.topics(b.at, "Topics", "Partitions", |p| {
                join([
                    b.int(p, "Partition").map(|i| format!("p{i}")),
                    snapshot(b, p),
                    kv("position", b.int(p, "Position")),
                ])
            })),
        ]),
        Kind::Response => join([
            b.error(b.at, "ErrorCode"),
            Some(b.topics(b.at, "Topics", "Partitions", |p| {
                join([
                    b.int(p, "Index").map(|i| format!("p{i}")),
                    b.error(p, "ErrorCode"),
                    snapshot(b, p),
                    kv("size", b.int(p, "Size")),
                    kv("position", b.int(p, "Position")),
                    b.records(p, "UnalignedRecords")
                        .map(|r| labels::bytes(r.bytes())),
                ])
            })),
            throttle(b),
        ]),
    }
}
