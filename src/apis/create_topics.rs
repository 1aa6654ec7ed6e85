//! CreateTopics (key 19): topics asked for, with partitions and replication, and
//! what became of each.

use super::fmt::{Body, join, kv, throttle};
use super::{Api, Fields, Track};
use crate::codec::Kind;
use crate::view::labels;

/// The body fields its summary line reads (each with what is inside it), at any depth.
const SUMMARY: Fields = Fields::Names(&["ErrorCode", "Name", "NumPartitions", "ReplicationFactor", "ThrottleTimeMs", "Topic", "TopicId", "TopicName", "Topics", "validateOnly"]);

pub(crate) const API: Api = Api {
    key: 19,
    details: |b, out| out.push_str(&details(b)),
    summary: SUMMARY,
    track: Track::SummaryOnly,
};

/// `orders(partitions=3 rf=1)`; -1 is the broker's default.
fn shape(b: &Body<'_, '_>, t: usize) -> String {
    let n = |f: &str| {
        b.int(t, f).map(|v| {
            if v == -1 {
                "default".into()
            } else {
                v.to_string()
            }
        })
    };
    let s = join([
        kv("partitions", n("NumPartitions")),
        kv("rf", n("ReplicationFactor")),
    ]);
    if s.is_empty() {
        b.topic(t)
    } else {
        format!("{}({s})", b.topic(t))
    }
}

fn details(b: &Body<'_, '_>) -> String {
    match b.kind {
        Kind::Request => join([
            Some(labels::list_of(&b.elements(b.at, "Topics"), |&t| {
                shape(b, t)
            })),
            b.bool(b.at, "validateOnly")
                .filter(|&v| v)
                .map(|_| "validate-only".to_string()),
        ]),
        Kind::Response => join([
            Some(labels::list_of(&b.elements(b.at, "Topics"), |&t| {
                match b.error(t, "ErrorCode") {
                    Some(e) => format!("{} {e}", b.topic(t)),
                    None => shape(b, t),
                }
            })),
            throttle(b),
        ]),
    }
}
