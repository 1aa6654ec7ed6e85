//! AddPartitionsToTxn (key 24): partitions a transaction will write to. v0-3 carry one
//! transaction; v4+ (brokers verifying for each other) carry several.

use super::fmt::{Body, join, kv, throttle};
use super::{Api, Fields, Track};
use crate::codec::Kind;
use crate::view::labels;

/// The body fields its summary line reads (each with what is inside it), at any depth.
const SUMMARY: Fields = Fields::Names(&["ErrorCode", "Name", "PartitionErrorCode", "PartitionIndex", "Partitions", "ProducerEpoch", "ProducerId", "ResultsByPartition", "ResultsByTopicV3AndBelow", "ResultsByTransaction", "ThrottleTimeMs", "Topic", "TopicId", "TopicName", "TopicResults", "Topics", "TransactionalId", "Transactions", "V3AndBelowProducerEpoch", "V3AndBelowProducerId", "V3AndBelowTopics", "V3AndBelowTransactionalId", "VerifyOnly"]);

pub(crate) const API: Api = Api {
    key: 24,
    details: |b, out| out.push_str(&details(b)),
    summary: SUMMARY,
    track: Track::SummaryOnly,
};

/// `orders[p0, p1]` from `Name` and an array of partition numbers.
fn asked(b: &Body<'_, '_>, at: usize, topics: &str) -> String {
    labels::list_of(&b.elements(at, topics), |&t| {
        b.with_parts(t, &b.ints(t, "Partitions"), |p| format!("p{p}"))
    })
}

/// `orders[p0, p1 CONCURRENT_TRANSACTIONS]`.
fn results(b: &Body<'_, '_>, at: usize, topics: &str) -> String {
    b.topics(at, topics, "ResultsByPartition", |p| {
        join([
            b.int(p, "PartitionIndex").map(|i| format!("p{i}")),
            b.error(p, "PartitionErrorCode"),
        ])
    })
}

fn details(b: &Body<'_, '_>) -> String {
    match b.kind {
        Kind::Request if b.has(b.at, "Transactions") => {
            labels::list_of(&b.elements(b.at, "Transactions"), |&t| {
                join([
                    kv("txn", b.text(t, "TransactionalId")),
                    kv("pid", b.int(t, "ProducerId")),
                    kv("epoch", b.int(t, "ProducerEpoch")),
                    b.bool(t, "VerifyOnly")
                        .filter(|&v| v)
                        .map(|_| "verify-only".to_string()),
                    Some(asked(b, t, "Topics")),
                ])
            })
        }
        Kind::Request => join([
            kv("txn", b.text(b.at, "V3AndBelowTransactionalId")),
            kv("pid", b.int(b.at, "V3AndBelowProducerId")),
            kv("epoch", b.int(b.at, "V3AndBelowProducerEpoch")),
            Some(asked(b, b.at, "V3AndBelowTopics")),
        ]),
        Kind::Response if b.has(b.at, "ResultsByTransaction") => join([
            b.error(b.at, "ErrorCode"),
            Some(labels::list_of(
                &b.elements(b.at, "ResultsByTransaction"),
                |&t| {
                    join([
                        kv("txn", b.text(t, "TransactionalId")),
                        Some(results(b, t, "TopicResults")),
                    ])
                },
            )),
            throttle(b),
        ]),
        Kind::Response => join([
            Some(results(b, b.at, "ResultsByTopicV3AndBelow")),
            throttle(b),
        ]),
    }
}
