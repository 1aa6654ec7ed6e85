//! Produce (key 0): what a producer sends where, and where the broker put it.

use super::fmt::{Body, join, kv};
use super::{Api, Fields, Track};
use crate::codec::Kind;

/// The body fields its summary line reads (each with what is inside it), at any depth.
const SUMMARY: Fields = Fields::Names(&["Acks", "BaseOffset", "ErrorCode", "Index", "Name", "PartitionData", "PartitionResponses", "Records", "Responses", "ThrottleTimeMs", "Topic", "TopicData", "TopicId", "TopicName", "TransactionalId"]);

pub(crate) const API: Api = Api {
    key: 0,
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

/// `acks=all txn=T orders[p0 5 records 312B, p1 …]`.
fn request(b: &Body<'_, '_>) -> String {
    let acks = b.int(b.at, "Acks").map(|a| match a {
        -1 => "all".to_string(),
        a => a.to_string(),
    });
    let topics = b.topics(b.at, "TopicData", "PartitionData", |p| {
        join([
            b.int(p, "Index").map(|i| format!("p{i}")),
            b.records(p, "Records").map(|r| r.words()),
        ])
    });
    join([
        kv("acks", acks),
        kv("txn", b.text_set(b.at, "TransactionalId")),
        Some(topics),
    ])
}

/// `orders[p0 base=1234, p1 NOT_LEADER_OR_FOLLOWER]`.
fn response(b: &Body<'_, '_>) -> String {
    let topics = b.topics(b.at, "Responses", "PartitionResponses", |p| {
        let err = b.error(p, "ErrorCode");
        join([
            b.int(p, "Index").map(|i| format!("p{i}")),
            match err {
                Some(e) => Some(e),
                None => kv("base", b.int(p, "BaseOffset")),
            },
        ])
    });
    join([Some(topics), super::fmt::throttle(b)])
}
