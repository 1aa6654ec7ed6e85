//! Fetch (key 1): what a consumer or follower asks for, and the bytes, high
//! watermarks and errors the leader answers.

use super::fmt::{Body, join, kv};
use super::{Api, Fields, Track};
use crate::codec::Kind;

/// The body fields its summary line reads (each with what is inside it), at any depth.
const SUMMARY: Fields = Fields::Names(&["CurrentLeader", "ErrorCode", "FetchOffset", "HighWatermark", "IsolationLevel", "LeaderEpoch", "LeaderId", "MaxWaitMs", "Name", "Partition", "PartitionIndex", "Partitions", "Records", "ReplicaId", "ReplicaState", "Responses", "SessionEpoch", "SessionId", "ThrottleTimeMs", "Topic", "TopicId", "TopicName", "Topics"]);

pub(crate) const API: Api = Api {
    key: 1,
    details: |b, out| out.push_str(&details(b)),
    summary: SUMMARY,
    track: Track::SummaryOnly,
};

fn details(b: &Body<'_, '_>) -> String {
    match b.kind {
        Kind::Request => request(b),
        Kind::Response => response(b),
    }
}

/// `replica=2 maxwait=500ms session=7/3 orders[p0@1234, p1@56]`.
fn request(b: &Body<'_, '_>) -> String {
    // A follower says who it is: ReplicaId before v15, ReplicaState (tagged) after.
    let replica = b
        .int(b.at, "ReplicaId")
        .or_else(|| {
            let s = b.tree.field(b.at, "ReplicaState")?;
            b.int(s, "ReplicaId")
        })
        .filter(|&r| r >= 0);
    let session = match (b.int(b.at, "SessionId"), b.int(b.at, "SessionEpoch")) {
        (Some(0), Some(-1)) | (None, _) | (_, None) => None,
        (Some(id), Some(e)) => Some(format!("session={id}/{e}")),
    };
    let isolation = b.int(b.at, "IsolationLevel").filter(|&i| i == 1);
    let topics = b.topics(b.at, "Topics", "Partitions", |p| {
        format!(
            "p{}@{}",
            b.int(p, "Partition").unwrap_or(-1),
            b.int(p, "FetchOffset").unwrap_or(-1)
        )
    });
    join([
        kv("replica", replica),
        kv(
            "maxwait",
            b.int(b.at, "MaxWaitMs").map(|m| format!("{m}ms")),
        ),
        isolation.map(|_| "read_committed".to_string()),
        session,
        Some(topics),
    ])
}

/// `orders[p0 5 records 312B hw=1234, p1 OFFSET_OUT_OF_RANGE hw=-1]`.
fn response(b: &Body<'_, '_>) -> String {
    let topics = b.topics(b.at, "Responses", "Partitions", |p| {
        let leader = b.tree.field(p, "CurrentLeader").map(|l| {
            format!(
                "leader={} epoch={}",
                b.int(l, "LeaderId").unwrap_or(-1),
                b.int(l, "LeaderEpoch").unwrap_or(-1)
            )
        });
        join([
            b.int(p, "PartitionIndex").map(|i| format!("p{i}")),
            b.error(p, "ErrorCode"),
            b.records(p, "Records").map(|r| r.words()),
            kv("hw", b.int(p, "HighWatermark")),
            leader,
        ])
    });
    let session = b.int(b.at, "SessionId").filter(|&s| s != 0);
    join([
        b.error(b.at, "ErrorCode"),
        kv("session", session),
        Some(topics),
        super::fmt::throttle(b),
    ])
}
