//! DescribeConfigs (key 32): the configuration of topics, brokers and other resources.

use super::fmt::{Body, join, throttle};
use super::{Api, Fields, Track};
use crate::codec::Kind;
use crate::view::labels;

/// The body fields its summary line reads (each with what is inside it), at any depth.
const SUMMARY: Fields = Fields::Names(&["Configs", "ConfigurationKeys", "ErrorCode", "ResourceName", "ResourceType", "Resources", "Results", "ThrottleTimeMs"]);

pub(crate) const API: Api = Api {
    key: 32,
    details: |b, out| out.push_str(&details(b)),
    summary: SUMMARY,
    track: Track::SummaryOnly,
};

/// Kafka's `ConfigResource.Type` codes.
fn resource(b: &Body<'_, '_>, r: usize) -> String {
    let kind = match b.int(r, "ResourceType").unwrap_or(0) {
        2 => "topic".to_string(),
        4 => "broker".to_string(),
        8 => "broker-logger".to_string(),
        16 => "client-metrics".to_string(),
        32 => "group".to_string(),
        t => format!("type={t}"),
    };
    format!("{kind} {}", b.text(r, "ResourceName").unwrap_or_default())
}

fn details(b: &Body<'_, '_>) -> String {
    match b.kind {
        Kind::Request => labels::list_of(&b.elements(b.at, "Resources"), |&r| {
            let keys = if b.null_array(r, "ConfigurationKeys") {
                None
            } else {
                Some(format!(
                    "[{}]",
                    labels::list_strings(b.texts(r, "ConfigurationKeys"))
                ))
            };
            join([Some(resource(b, r)), keys])
        }),
        Kind::Response => join([
            Some(labels::list_of(&b.elements(b.at, "Results"), |&r| {
                let n = b.elements(r, "Configs").len();
                join([
                    Some(format!("{}:", resource(b, r))),
                    b.error(r, "ErrorCode"),
                    Some(format!("{n} config{}", if n == 1 { "" } else { "s" })),
                ])
            })),
            throttle(b),
        ]),
    }
}
