//! Metadata (key 3): the topics a client asks about, and the brokers, controller and
//! partition leaders the broker answers.

use super::fmt::{Body, join, kv, throttle};
use super::{Api, Fields, Track};
use crate::codec::Kind;
use crate::view::labels;

/// The body fields its summary line reads (each with what is inside it), at any depth.
const SUMMARY: Fields = Fields::Names(&["AllowAutoTopicCreation", "Brokers", "ControllerId", "ErrorCode", "Host", "LeaderId", "Name", "NodeId", "PartitionIndex", "Partitions", "Port", "ThrottleTimeMs", "Topic", "TopicId", "TopicName", "Topics"]);

pub(crate) const API: Api = Api {
    key: 3,
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

/// `topics=[a, b]`, `all topics` or `no topics`.
fn request(b: &Body<'_, '_>) -> String {
    let topics = b.elements(b.at, "Topics");
    // Null asks for every topic (v1+); so does an empty array in v0, which has no
    // AllowAutoTopicCreation field.
    let v0 = !b.has(b.at, "AllowAutoTopicCreation");
    if b.null_array(b.at, "Topics") || (topics.is_empty() && v0) {
        return "all topics".into();
    }
    if topics.is_empty() {
        return "no topics".into();
    }
    format!("topics=[{}]", labels::list_of(&topics, |&t| b.topic(t)))
}

/// `controller=1 brokers=[1 host:9092, …] orders[p0→1, p1→2]`.
fn response(b: &Body<'_, '_>) -> String {
    let brokers = labels::list_of(&b.elements(b.at, "Brokers"), |&n| {
        format!(
            "{} {}:{}",
            b.int(n, "NodeId").unwrap_or(-1),
            b.text(n, "Host").unwrap_or_default(),
            b.int(n, "Port").unwrap_or(-1)
        )
    });
    let topics = labels::list_of(&b.elements(b.at, "Topics"), |&t| {
        let parts = b.with_parts(t, &b.elements(t, "Partitions"), |&p| {
            join([
                Some(format!(
                    "p{}→{}",
                    b.int(p, "PartitionIndex").unwrap_or(-1),
                    b.int(p, "LeaderId").unwrap_or(-1)
                )),
                b.error(p, "ErrorCode"),
            ])
        });
        join([Some(parts), b.error(t, "ErrorCode")])
    });
    join([
        b.error(b.at, "ErrorCode"),
        kv("controller", b.int(b.at, "ControllerId")),
        Some(format!("brokers=[{brokers}]")),
        Some(topics),
        throttle(b),
    ])
}
