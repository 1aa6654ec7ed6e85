//! Kafka codec: Kafka's JSON message schemas drive one walker that decodes
//! frames into a value tree with byte ranges, and one encoder that writes them.
//!
//! Entry points: [`decode_request`], [`decode_response`], [`encode_request`],
//! [`encode_response`].
#![cfg_attr(
    not(test),
    deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)
)]

mod decode;
mod encode;
mod error;
mod frame;
mod schema;
mod tree;

pub use crate::proto::Kind;
pub use encode::{EncodeError, encode_request, encode_response};
pub use error::{DecodeError, ErrorKind};
pub use frame::{Message, decode_request, decode_response};
pub use schema::{MessageSchema, SchemaKind, Versions};
pub use tree::{Node, Prefix, Role, Tree, Value};

use std::sync::LazyLock;

/// The schemas kwire embeds, parsed once.
pub struct Registry {
    pub request_header: MessageSchema,
    pub response_header: MessageSchema,
    pub messages: Vec<MessageSchema>,
}

const SOURCES: [&str; 4] = [
    include_str!("schemas/VoteRequest.json"),
    include_str!("schemas/VoteResponse.json"),
    include_str!("schemas/FindCoordinatorRequest.json"),
    include_str!("schemas/FindCoordinatorResponse.json"),
];

static REGISTRY: LazyLock<Registry> = LazyLock::new(|| {
    // The embedded schemas are ours and a unit test parses each, so failure here is a build defect.
    let parse = |src: &str| match MessageSchema::parse(src) {
        Ok(s) => s,
        Err(e) => panic!("embedded schema does not parse: {e}"),
    };
    Registry {
        request_header: parse(include_str!("schemas/RequestHeader.json")),
        response_header: parse(include_str!("schemas/ResponseHeader.json")),
        messages: SOURCES.iter().map(|s| parse(s)).collect(),
    }
});

/// The embedded schemas.
pub fn registry() -> &'static Registry {
    &REGISTRY
}

/// The schema for one API and direction, if kwire has it.
pub fn schema(api_key: i16, kind: Kind) -> Option<&'static MessageSchema> {
    let want = match kind {
        Kind::Request => SchemaKind::Request,
        Kind::Response => SchemaKind::Response,
    };
    registry()
        .messages
        .iter()
        .find(|s| s.api_key == Some(api_key) && s.kind == want)
}

/// Every (API key, version) that has a response schema: the candidates for inference.
pub fn response_candidates() -> impl Iterator<Item = (i16, i16)> {
    registry()
        .messages
        .iter()
        .filter(|s| s.kind == SchemaKind::Response)
        .filter_map(|s| Some((s.api_key?, s.valid)))
        .flat_map(|(k, v)| (v.lo..=v.hi).map(move |ver| (k, ver)))
}

/// The one (API key, version) whose response schema decodes the whole frame,
/// or `None` when none or several do: a guess is never made.
pub fn infer_response(frame: &[u8]) -> Option<(i16, i16)> {
    let mut found = None;
    for c in response_candidates() {
        let m = decode_response(frame, Some(c));
        if m.error.is_none() && m.body.is_some() {
            if found.is_some() {
                return None;
            }
            found = Some(c);
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_embedded_schema_parses() {
        for src in SOURCES {
            MessageSchema::parse(src).unwrap();
        }
        assert_eq!(registry().messages.len(), 4);
        assert!(schema(crate::proto::VOTE, Kind::Request).is_some());
        assert!(schema(crate::proto::FIND_COORDINATOR, Kind::Response).is_some());
        assert!(schema(0, Kind::Request).is_none());
    }

    #[test]
    fn inference_needs_exactly_one_fit() {
        use serde_json::json;
        // FindCoordinator v6 with a coordinator: nothing else fits these bytes.
        let body = json!({"ThrottleTimeMs": 0, "Coordinators": [{"Key": "g", "NodeId": 2,
            "Host": "b2", "Port": 9092, "ErrorCode": 0, "ErrorMessage": null}]});
        let f = encode_response(10, 6, 1, &body).unwrap();
        // v4, v5 and v6 share one layout, so the answer is ambiguous and stays unknown.
        assert_eq!(infer_response(&f), None);
        // Vote v0 with a partition: only Vote v0 decodes it whole.
        let body = json!({"ErrorCode": 0, "Topics": [{"TopicName": "__cluster_metadata",
            "Partitions": [{"PartitionIndex": 0, "ErrorCode": 0, "LeaderId": 1,
            "LeaderEpoch": 3, "VoteGranted": true}]}]});
        let f = encode_response(52, 0, 1, &body).unwrap();
        assert_eq!(
            infer_response(&f),
            None,
            "Vote v0, v1 and v2 share a layout too"
        );
        // FindCoordinator v0: header v0 and a non-compact body, unlike every flexible version.
        let body = json!({"ErrorCode": 0, "NodeId": 2, "Host": "b2", "Port": 9092});
        let f = encode_response(10, 0, 1, &body).unwrap();
        assert_eq!(infer_response(&f), Some((10, 0)));
    }

    #[test]
    fn candidates_cover_all_versions() {
        let c: Vec<_> = response_candidates().collect();
        assert_eq!(c.len(), 3 + 7);
        assert!(c.contains(&(52, 2)) && c.contains(&(10, 0)) && c.contains(&(10, 6)));
    }
}

#[cfg(test)]
mod malformed_tests;
