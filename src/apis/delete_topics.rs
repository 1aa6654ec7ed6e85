//! DeleteTopics (key 20): topics to delete, by name (v0-5) or by name or id (v6+).

use super::fmt::{Body, join, throttle};
use super::{Api, Fields, Track};
use crate::codec::Kind;
use crate::view::labels;

/// The body fields its summary line reads (each with what is inside it), at any depth.
const SUMMARY: Fields = Fields::Names(&["ErrorCode", "Name", "Responses", "ThrottleTimeMs", "Topic", "TopicId", "TopicName", "TopicNames", "Topics"]);

pub(crate) const API: Api = Api {
    key: 20,
    details: |b, out| out.push_str(&details(b)),
    summary: SUMMARY,
    track: Track::SummaryOnly,
};

fn details(b: &Body<'_, '_>) -> String {
    match b.kind {
        Kind::Request if b.has(b.at, "TopicNames") => {
            format!(
                "topics=[{}]",
                labels::list_strings(b.texts(b.at, "TopicNames"))
            )
        }
        Kind::Request => format!(
            "topics=[{}]",
            labels::list_of(&b.elements(b.at, "Topics"), |&t| b.topic(t))
        ),
        Kind::Response => join([
            Some(labels::list_of(&b.elements(b.at, "Responses"), |&t| {
                join([Some(b.topic(t)), b.error(t, "ErrorCode")])
            })),
            throttle(b),
        ]),
    }
}
