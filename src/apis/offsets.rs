//! OffsetCommit (key 8) and OffsetFetch (key 9): the offsets a group commits and
//! reads back.

use super::fmt::{Body, join, kv, throttle};
use super::{Api, Fields, Track};
use crate::codec::Kind;
use crate::view::labels;

/// The body fields its summary line reads (each with what is inside it), at any depth.
const SUMMARY: Fields = Fields::Names(&["CommittedOffset", "ErrorCode", "GenerationIdOrMemberEpoch", "GroupId", "Groups", "MemberId", "Name", "PartitionIndex", "PartitionIndexes", "Partitions", "ThrottleTimeMs", "Topic", "TopicId", "TopicName", "Topics"]);

pub(crate) const COMMIT: Api = Api {
    key: 8,
    details: |b, out| out.push_str(&commit(b)),
    summary: SUMMARY,
    track: Track::SummaryOnly,
};
pub(crate) const FETCH: Api = Api {
    key: 9,
    details: |b, out| out.push_str(&fetch(b)),
    summary: SUMMARY,
    track: Track::SummaryOnly,
};

/// `p0@123`, with the error when there is one.
fn offset(b: &Body<'_, '_>, p: usize, field: &str) -> String {
    join([
        Some(format!(
            "p{}{}",
            b.int(p, "PartitionIndex").unwrap_or(-1),
            b.int(p, field).map(|o| format!("@{o}")).unwrap_or_default()
        )),
        b.error(p, "ErrorCode"),
    ])
}

fn commit(b: &Body<'_, '_>) -> String {
    match b.kind {
        Kind::Request => join([
            kv("group", b.text(b.at, "GroupId")),
            kv("gen", b.int(b.at, "GenerationIdOrMemberEpoch")),
            kv("member", b.text_set(b.at, "MemberId")),
            Some(b.topics(b.at, "Topics", "Partitions", |p| {
                offset(b, p, "CommittedOffset")
            })),
        ]),
        Kind::Response => join([
            Some(b.topics(b.at, "Topics", "Partitions", |p| offset(b, p, "none"))),
            throttle(b),
        ]),
    }
}

/// The partitions asked for (`PartitionIndexes`), or every one when null.
fn asked(b: &Body<'_, '_>, at: usize) -> String {
    if b.null_array(at, "Topics") {
        return "all topics".into();
    }
    labels::list_of(&b.elements(at, "Topics"), |&t| {
        b.with_parts(t, &b.ints(t, "PartitionIndexes"), |p| format!("p{p}"))
    })
}

fn fetch(b: &Body<'_, '_>) -> String {
    match b.kind {
        // v8+ asks for several groups at once; before, one.
        Kind::Request if b.has(b.at, "Groups") => {
            labels::list_of(&b.elements(b.at, "Groups"), |&g| {
                join([kv("group", b.text(g, "GroupId")), Some(asked(b, g))])
            })
        }
        Kind::Request => join([kv("group", b.text(b.at, "GroupId")), Some(asked(b, b.at))]),
        Kind::Response if b.has(b.at, "Groups") => join([
            Some(labels::list_of(&b.elements(b.at, "Groups"), |&g| {
                join([
                    kv("group", b.text(g, "GroupId")),
                    b.error(g, "ErrorCode"),
                    Some(b.topics(g, "Topics", "Partitions", |p| {
                        offset(b, p, "CommittedOffset")
                    })),
                ])
            })),
            throttle(b),
        ]),
        Kind::Response => join([
            b.error(b.at, "ErrorCode"),
            Some(b.topics(b.at, "Topics", "Partitions", |p| {
                offset(b, p, "CommittedOffset")
            })),
            throttle(b),
        ]),
    }
}
