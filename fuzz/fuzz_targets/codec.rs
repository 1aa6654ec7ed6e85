//! Arbitrary bytes as one Kafka frame (from its size prefix), decoded as every
//! (API, version, direction) kwire has a schema for, as the header-only
//! requests of an API without a schema and of an unknown key, as a response
//! whose request is unknown, and by inference; each result is rendered in
//! every view (summary, tree, NDJSON) and fed to the analysis.
#![no_main]

use kwire::analysis::Analyzer;
use kwire::codec::{self, Kind, Message, SchemaKind};
use kwire::dissect::{Record, VersionSource};
use kwire::tcp::ConnId;
use kwire::view::{json, summary, tree};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // The frame as captured: a request names its own API in its header.
    let m = codec::decode_request(data);
    views(data, m, None);

    // Every request schema, at every version and one past each end, with the
    // header's API key and version rewritten to it.
    let mut patched = data.to_vec();
    for s in &codec::registry().messages {
        let Some(key) = s.api_key else { continue };
        for v in s.valid.lo.saturating_sub(1)..=s.valid.hi.saturating_add(1) {
            match s.kind {
                SchemaKind::Request => {
                    if let Some(h) = patched.get_mut(4..8) {
                        h[..2].copy_from_slice(&key.to_be_bytes());
                        h[2..].copy_from_slice(&v.to_be_bytes());
                        let m = codec::decode_request(&patched);
                        views(&patched, m, None);
                    }
                }
                SchemaKind::Response => {
                    let m = codec::decode_response(data, Some((key, v)));
                    views(data, m, Some(VersionSource::Request));
                }
                _ => {}
            }
        }
    }

    // Header-only paths: Produce (known, no schema) and a key Kafka does not have.
    for key in [0i16, 1000] {
        if let Some(h) = patched.get_mut(4..6) {
            h.copy_from_slice(&key.to_be_bytes());
            let m = codec::decode_request(&patched);
            views(&patched, m, None);
        }
        let m = codec::decode_response(data, Some((key, 3)));
        views(data, m, Some(VersionSource::Request));
    }

    // A response whose request was not captured.
    let m = codec::decode_response(data, None);
    views(data, m, None);
    if let Some(api) = codec::infer_response(data) {
        let m = codec::decode_response(data, Some(api));
        views(data, m, Some(VersionSource::Inferred));
    }
});

/// Renders a decoded message every way kwire can; the JSON must parse.
fn views(data: &[u8], msg: Message<'_>, source: Option<VersionSource>) {
    let _ = tree::render(&msg.tree);
    if let Some(b) = msg.body {
        let mut out = Vec::new();
        json::write_body(&mut out, &msg.tree, b);
        if let Err(e) = serde_json::from_slice::<serde_json::Value>(&out) {
            panic!(
                "body JSON does not parse: {e}: {}",
                String::from_utf8_lossy(&out)
            );
        }
    }
    let r = Record {
        packet: 1,
        ts_ns: 0,
        first_ts_ns: 0,
        conn: ConnId(0),
        src: "10.0.0.1:50000".parse().unwrap(),
        dst: "10.0.0.2:9092".parse().unwrap(),
        data,
        wire_size: data.len() as u64,
        cut: false,
        api: match msg.kind {
            Kind::Request => None,
            Kind::Response => msg.api_key.zip(msg.api_version),
        },
        request_packet: None,
        latency_ns: None,
        warnings: Vec::new(),
        msg,
        version_source: source,
        file: 0,
        topic_names: Default::default(),
        tls: None,
    };
    let _ = summary::line(&r);
    let _ = tree::record(&r);
    let mut out = Vec::new();
    json::write_record(&mut out, &r);
    if let Err(e) = serde_json::from_slice::<serde_json::Value>(&out) {
        panic!(
            "NDJSON line does not parse: {e}: {}",
            String::from_utf8_lossy(&out)
        );
    }
    Analyzer::new().record(&r);
}
