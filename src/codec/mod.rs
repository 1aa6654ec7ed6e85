//! Kafka codec: Kafka's JSON message schemas drive one walker that decodes
//! frames into a value tree with byte ranges, and one encoder that writes them.
//!
//! Entry points: [`decode_request`], [`decode_response`], [`encode_request`],
//! [`encode_response`], which use the process-wide [`Codec`] (kwire's built-in
//! schemas until [`install`] is called once at start-up with the schemas loaded
//! from kafka-clients jars, see [`load`]); and the same methods on an explicit
//! [`Codec`], for library users and tests that want several schema sets.
#![cfg_attr(
    not(test),
    deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)
)]

mod decode;
mod encode;
mod error;
mod frame;
mod load;
mod need;
mod redact;
mod schema;
mod tree;

pub use crate::proto::Kind;
pub use encode::{EncodeError, encode_request, encode_response};
pub use error::{DecodeError, ErrorKind};
pub use frame::Message;
pub use load::{Def, Loaded, Schemas, Search, read_source, scan_source};
pub use need::{Need, NeedPath};
pub use schema::{Field, FieldType, MessageSchema, Prim, SchemaKind, Versions};
pub use tree::{Label, Node, Prefix, Role, Tree, Value, label, recycle};
/// Reading several fields of one struct (the summary line's details).
pub use tree::FieldCursor;

use std::sync::{LazyLock, OnceLock};

/// How to decode, beyond the schemas.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DecodeOptions {
    /// Show credentials (SASL auth bytes, passwords, salts, HMACs) instead of
    /// `"<redacted N bytes>"` (`--show-secrets`).
    pub show_secrets: bool,
}

/// A schema set and decode options: everything decoding depends on. Cheap to copy;
/// the schemas live for the whole process because decoded trees borrow their names.
#[derive(Clone, Copy, Debug)]
pub struct Codec {
    pub schemas: &'static Schemas,
    pub options: DecodeOptions,
}

static BUILTIN: LazyLock<&'static Schemas> = LazyLock::new(|| Schemas::builtin().leak());
static INSTALLED: OnceLock<Codec> = OnceLock::new();
/// Every node of every message.
static ALL: Need = Need::all();
/// The verdict only: what inference and resync check.
static VERDICT: Need = Need::verdict();

impl Codec {
    /// kwire's built-in schemas only (headers, Vote, FindCoordinator), secrets redacted.
    pub fn builtin() -> Codec {
        Codec {
            schemas: *BUILTIN,
            options: DecodeOptions::default(),
        }
    }

    /// A codec over `schemas`, kept for the rest of the process.
    pub fn new(schemas: Schemas, options: DecodeOptions) -> Codec {
        Codec {
            schemas: schemas.leak(),
            options,
        }
    }

    pub fn decode_request<'a>(&self, frame: &'a [u8]) -> Message<'a> {
        frame::decode_request(self, frame, &ALL)
    }

    pub fn decode_response<'a>(&self, frame: &'a [u8], api: Option<(i16, i16)>) -> Message<'a> {
        frame::decode_response(self, frame, api, &ALL)
    }

    /// Decodes a request, building of its body only what `need` asks for; the header,
    /// error, warnings and trailing bytes are those of a full decode.
    pub fn decode_request_with<'a>(&self, frame: &'a [u8], need: &Need) -> Message<'a> {
        frame::decode_request(self, frame, need)
    }

    /// As [`Codec::decode_response`], building what `need` asks for.
    pub fn decode_response_with<'a>(
        &self,
        frame: &'a [u8],
        api: Option<(i16, i16)>,
        need: &Need,
    ) -> Message<'a> {
        frame::decode_response(self, frame, api, need)
    }

    /// Decodes a `m.kind` frame into `m`, a [`Message::new`], building what `need` asks
    /// for; `api` is a response's (key, version). In place, the message is not copied.
    pub fn decode_into<'a>(
        &self,
        frame: &'a [u8],
        api: Option<(i16, i16)>,
        need: &Need,
        m: &mut Message<'a>,
    ) {
        match m.kind {
            Kind::Request => frame::decode_request_in(self, frame, need, m),
            Kind::Response => frame::decode_response_in(self, frame, api, need, m),
        }
    }

    /// The one (API key, version) whose response schema decodes the whole frame
    /// (no error, no bytes left over), or `None` when none or several do.
    pub fn infer_response(&self, frame: &[u8]) -> Option<(i16, i16)> {
        let mut found = None;
        for c in self.schemas.response_candidates() {
            // Only the verdict matters here: nothing is built.
            let m = self.decode_response_with(frame, Some(c), &VERDICT);
            let fits = m.error.is_none() && m.body.is_some() && m.trailing == 0;
            recycle(m.tree.nodes);
            if fits {
                if found.is_some() {
                    return None;
                }
                found = Some(c);
            }
        }
        found
    }

    /// Why a message's body is not decoded, for a once-per-run note on stderr (the
    /// contract's "Produce bodies are not decoded: no schemas loaded; see --schemas").
    /// `None` when it is decoded, failed (the error says why), or its API is unknown.
    pub fn undecoded_note(&self, m: &Message<'_>) -> Option<String> {
        if m.body.is_some() || m.error.is_some() {
            return None;
        }
        let (key, version) = (m.api_key?, m.api_version?);
        let name = m.api_name()?;
        if self.schemas.newest(key, m.kind).is_some() {
            // A version outside the schemas: each message's warning says so.
            return self
                .schemas
                .message(key, m.kind, version)
                .is_none()
                .then(|| format!("{name} v{version} bodies are not decoded: no loaded schema has that version"));
        }
        Some(if self.schemas.sources().is_empty() {
            format!("{name} bodies are not decoded: no schemas loaded; see --schemas")
        } else {
            format!("{name} bodies are not decoded: the loaded schemas do not define it")
        })
    }

    pub fn encode_request(
        &self,
        api_key: i16,
        version: i16,
        correlation_id: i32,
        client_id: Option<&str>,
        body: &serde_json::Value,
    ) -> Result<Vec<u8>, EncodeError> {
        encode::encode_request_with(
            self.schemas,
            api_key,
            version,
            correlation_id,
            client_id,
            body,
        )
    }

    pub fn encode_response(
        &self,
        api_key: i16,
        version: i16,
        correlation_id: i32,
        body: &serde_json::Value,
    ) -> Result<Vec<u8>, EncodeError> {
        encode::encode_response_with(self.schemas, api_key, version, correlation_id, body)
    }
}

/// Sets the process-wide codec, once, at start-up. Returns it back if one was
/// already set (or already read by a decode, which fixes the built-in one).
pub fn install(codec: Codec) -> Result<(), Codec> {
    INSTALLED.set(codec)
}

/// The process-wide codec: the installed one, or the built-in schemas.
pub fn current() -> Codec {
    *INSTALLED.get_or_init(Codec::builtin)
}

/// Decodes a request frame with the process-wide codec.
pub fn decode_request(frame: &[u8]) -> Message<'_> {
    current().decode_request(frame)
}

/// Decodes a response frame with the process-wide codec. `api` is the (key, version)
/// of its request, when known; without it only the correlation id can be read.
pub fn decode_response(frame: &[u8], api: Option<(i16, i16)>) -> Message<'_> {
    current().decode_response(frame, api)
}

/// Decodes a request frame with the process-wide codec, building what `need` asks for.
pub fn decode_request_with<'a>(frame: &'a [u8], need: &Need) -> Message<'a> {
    current().decode_request_with(frame, need)
}

/// Decodes a response frame with the process-wide codec, building what `need` asks for.
pub fn decode_response_with<'a>(
    frame: &'a [u8],
    api: Option<(i16, i16)>,
    need: &Need,
) -> Message<'a> {
    current().decode_response_with(frame, api, need)
}

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

/// The schema for one API and direction in the process-wide codec, if it has one.
pub fn schema(api_key: i16, kind: Kind) -> Option<&'static MessageSchema> {
    current().schemas.newest(api_key, kind)
}

/// Every (API key, version) that has a response schema: the candidates for inference.
pub fn response_candidates() -> impl Iterator<Item = (i16, i16)> {
    current().schemas.response_candidates()
}

/// The one (API key, version) whose response schema decodes the whole frame,
/// or `None` when none or several do: a guess is never made.
/// [`Codec::decode_into`] with the process-wide codec.
pub fn decode_into<'a>(
    frame: &'a [u8],
    api: Option<(i16, i16)>,
    need: &Need,
    m: &mut Message<'a>,
) {
    current().decode_into(frame, api, need, m);
}

pub fn infer_response(frame: &[u8]) -> Option<(i16, i16)> {
    current().infer_response(frame)
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

    /// A schema written for this test, using what Kafka's own files use: a nullable
    /// struct, a tagged struct, a common struct, `"versions": "none"`, float64, uint16,
    /// arrays of primitives, and a secret.
    const FEATURES: &str = r#"{"apiKey": 300, "type": "response", "name": "TestResponse",
      "validVersions": "0-1", "flexibleVersions": "1+", "latestVersionUnstable": true,
      "fields": [
        {"name": "Gone", "type": "int32", "versions": "none"},
        {"name": "Ratio", "type": "float64", "versions": "0+"},
        {"name": "Port", "type": "uint16", "versions": "0+"},
        {"name": "Ids", "type": "[]int64", "versions": "0+", "nullableVersions": "1+"},
        {"name": "Cursor", "type": "Cursor", "versions": "0+", "nullableVersions": "0+", "default": "null"},
        {"name": "Leader", "type": "Cursor", "versions": "1+", "taggedVersions": "1+", "tag": 0},
        {"name": "Secret", "type": "bytes", "versions": "0+", "zeroCopy": true}
      ],
      "commonStructs": [{"name": "Cursor", "versions": "0+", "fields": [
        {"name": "TopicName", "type": "string", "versions": "0+"},
        {"name": "PartitionIndex", "type": "int32", "versions": "0+"}]}]}"#;

    #[test]
    fn walker_covers_the_schema_features_kafka_uses() {
        use serde_json::json;
        let mut s = Schemas::builtin();
        s.add("test", vec![MessageSchema::parse(FEATURES).unwrap()]);
        let shown = Codec::new(s, DecodeOptions { show_secrets: true });
        let hidden = Codec {
            options: DecodeOptions::default(),
            ..shown
        };
        let cursor = json!({"TopicName": "t", "PartitionIndex": 3});
        for (v, body) in [
            (
                0,
                json!({"Ratio": 0.5, "Port": 65535, "Ids": [1, -1], "Cursor": null, "Secret": "0102"}),
            ),
            (
                0,
                json!({"Ratio": -2.25, "Port": 0, "Ids": [], "Cursor": cursor, "Secret": ""}),
            ),
            (
                1,
                json!({"Ratio": 1e300, "Port": 9092, "Ids": null, "Cursor": cursor, "Leader": cursor, "Secret": "ff"}),
            ),
            (
                1,
                json!({"Ratio": 0.0, "Port": 1, "Ids": [7], "Cursor": null, "Secret": "ff"}),
            ),
        ] {
            let f = shown.encode_response(300, v, 5, &body).unwrap();
            let m = shown.decode_response(&f, Some((300, v)));
            assert_eq!(m.error, None, "v{v} {body}");
            assert_eq!(
                crate::view::json::body_value(&m.tree, m.body.unwrap()),
                body
            );
            assert_eq!(m.api_name(), Some("Test"));
            let m = hidden.decode_response(&f, Some((300, v)));
            let n = body["Secret"].as_str().unwrap().len() / 2;
            assert_eq!(
                crate::view::json::body_value(&m.tree, m.body.unwrap())["Secret"],
                format!("<redacted {n} bytes>")
            );
        }
        // The null struct is one marker byte (-1); a present one starts with 1.
        let f = shown
            .encode_response(
                300,
                0,
                5,
                &json!({"Ratio": 0.0, "Port": 0, "Ids": [], "Cursor": null, "Secret": ""}),
            )
            .unwrap();
        assert_eq!(
            &f[8..],
            [0u8; 8]
                .iter()
                .chain(&[0, 0, 0, 0, 0, 0, 0xff, 0, 0, 0, 0])
                .copied()
                .collect::<Vec<_>>()
        );
        // A response to an API kwire's table lacks: its header version follows the schema.
        assert_eq!(shown.schemas.response_header_version(300, 1), Some(1));
        assert_eq!(shown.schemas.response_header_version(300, 0), Some(0));
    }

    #[test]
    fn undecoded_note_says_why_once() {
        let f = encode_request(0, 9, 1, Some("c"), &serde_json::json!("00")).unwrap();
        let m = decode_request(&f);
        assert_eq!(
            Codec::builtin().undecoded_note(&m).as_deref(),
            Some("Produce bodies are not decoded: no schemas loaded; see --schemas")
        );
        let f = encode_request(
            10,
            6,
            1,
            Some(""),
            &serde_json::json!({"CoordinatorKeys": ["g"]}),
        )
        .unwrap();
        let m = decode_request(&f);
        assert_eq!(Codec::builtin().undecoded_note(&m), None);
        let body = m.body.unwrap();
        assert_eq!(m.tree.error_codes(body), vec![]);
        let names: Vec<_> = m.tree.scalars(body).iter().map(|s| s.0).collect();
        assert_eq!(names, ["KeyType"]);
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
