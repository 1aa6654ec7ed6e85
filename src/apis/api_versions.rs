//! ApiVersions (key 18): the client's software, and the version ranges the broker
//! supports.

use super::fmt::{Body, join, throttle};
use super::{Api, Fields, Track};
use crate::codec::Kind;
use crate::view::labels;

/// The body fields its summary line reads (each with what is inside it), at any depth.
const SUMMARY: Fields = Fields::Names(&["ApiKey", "ApiKeys", "ClientSoftwareName", "ClientSoftwareVersion", "ErrorCode", "MaxVersion", "MinVersion", "NodeId", "ThrottleTimeMs"]);

pub(crate) const API: Api = Api {
    key: 18,
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

/// `software=apache-kafka-java 4.4.0` (v3+; earlier versions have no body fields).
fn request(b: &Body<'_, '_>) -> String {
    let software = b.text(b.at, "ClientSoftwareName").map(|n| {
        format!(
            "software={n} {}",
            b.text(b.at, "ClientSoftwareVersion").unwrap_or_default()
        )
    });
    join([software, b.int(b.at, "NodeId").map(|n| format!("node={n}"))])
}

/// `81 APIs: Produce v3-13, Fetch v4-18, ListOffsets v1-11 +78 more`.
fn response(b: &Body<'_, '_>) -> String {
    let keys = b.elements(b.at, "ApiKeys");
    let ranges = labels::list_of(&keys, |&k| {
        let key = b.int(k, "ApiKey").unwrap_or(-1);
        let name = i16::try_from(key).map_or_else(|_| format!("Unknown({key})"), labels::api_label);
        format!(
            "{name} v{}-{}",
            b.int(k, "MinVersion").unwrap_or(-1),
            b.int(k, "MaxVersion").unwrap_or(-1)
        )
    });
    let apis = (!keys.is_empty()).then(|| {
        format!(
            "{} API{}: {ranges}",
            keys.len(),
            if keys.len() == 1 { "" } else { "s" }
        )
    });
    join([b.error(b.at, "ErrorCode"), apis, throttle(b)])
}
