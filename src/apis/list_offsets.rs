//! ListOffsets (key 2): offsets looked up by time, `latest` and `earliest` included.

use super::fmt::{Body, join, kv, throttle};
use super::{Api, Fields, Track};
use crate::codec::Kind;

/// The body fields its summary line reads (each with what is inside it), at any depth.
const SUMMARY: Fields = Fields::Names(&["ErrorCode", "IsolationLevel", "Name", "Offset", "PartitionIndex", "Partitions", "ReplicaId", "ThrottleTimeMs", "Timestamp", "Topic", "TopicId", "TopicName", "Topics"]);

pub(crate) const API: Api = Api {
    key: 2,
    details: |b, out| out.push_str(&details(b)),
    summary: SUMMARY,
    track: Track::SummaryOnly,
};

/// Kafka's special timestamps in a ListOffsets request.
fn when(ts: i64) -> String {
    match ts {
        -1 => "latest".into(),
        -2 => "earliest".into(),
        -3 => "max-timestamp".into(),
        -4 => "earliest-local".into(),
        -5 => "latest-tiered".into(),
        -6 => "earliest-pending-upload".into(),
        t => format!("ts {t}"),
    }
}

fn details(b: &Body<'_, '_>) -> String {
    match b.kind {
        Kind::Request => join([
            kv("replica", b.int(b.at, "ReplicaId").filter(|&r| r >= 0)),
            b.int(b.at, "IsolationLevel")
                .filter(|&i| i == 1)
                .map(|_| "read_committed".to_string()),
            Some(b.topics(b.at, "Topics", "Partitions", |p| {
                format!(
                    "p{}@{}",
                    b.int(p, "PartitionIndex").unwrap_or(-1),
                    when(b.int(p, "Timestamp").unwrap_or(-1))
                )
            })),
        ]),
        Kind::Response => join([
            Some(b.topics(b.at, "Topics", "Partitions", |p| {
                let part = b.int(p, "PartitionIndex").unwrap_or(-1);
                match (b.error(p, "ErrorCode"), b.int(p, "Offset")) {
                    (Some(e), _) => format!("p{part} {e}"),
                    (None, Some(o)) => format!("p{part}→{o}"),
                    // v0 answers a list of offsets.
                    (None, None) => format!("p{part}"),
                }
            })),
            throttle(b),
        ]),
    }
}
