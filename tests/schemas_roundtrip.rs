//! Round trip for every API and version in the kafka-clients jars: a random value,
//! generated from the schema, is written by kwire's encoder; the kafka-protocol
//! crate (generated from Kafka's schemas independently of kwire) reads the body and
//! writes it back byte for byte, so it read the same values; and kwire decodes the
//! frame back to the value it was given.
//!
//! Without a jar this prints SKIP and passes, except under `CI=true`.

use bytes::{Bytes, BytesMut};
use kafka_protocol::messages::{ApiKey, RequestKind, ResponseKind};
use kwire::codec::{Codec, DecodeOptions, Kind, MessageSchema, Search};
use kwire::codec::{Field, FieldType, Prim};
use kwire::view::json::body_value_wire;
use proptest::prelude::*;
use serde_json::{Map, Value as Json, json};
use std::collections::BTreeMap;
use std::sync::OnceLock;

fn codec() -> Option<Codec> {
    static CODEC: OnceLock<Option<Codec>> = OnceLock::new();
    *CODEC.get_or_init(|| {
        let loaded = Search::from_env(Vec::new()).load();
        if loaded.schemas.sources().is_empty() {
            let msg = "SKIP: no kafka-clients jar found; get one with `mvn dependency:get -Dartifact=org.apache.kafka:kafka-clients:4.4.0`";
            if std::env::var("CI").is_ok_and(|v| v == "true") {
                panic!("{msg} (CI=true: the jars are required)");
            }
            eprintln!("\n*** {msg} ***\n");
            return None;
        }
        Some(Codec::new(
            loaded.schemas,
            DecodeOptions { show_secrets: true },
        ))
    })
}

/// splitmix64: proptest picks the seed, this spreads it over every field.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    /// Small values most of the time, the type's extremes sometimes.
    fn int(&mut self, lo: i64, hi: i64) -> i64 {
        match self.below(6) {
            0 => lo,
            1 => hi,
            2 => (-1i64).clamp(lo, hi),
            3 => (self.next() as i64).clamp(lo, hi),
            _ => (self.below(100) as i64).clamp(lo, hi),
        }
    }
}

const CHARS: &[char] = &[
    'a', 'Z', '0', '-', '_', '.', ' ', 'é', 'ß', '中', '🦀', '"', '\\',
];

/// A random value of `p`; `nondefault` keeps it away from any default (tagged fields
/// equal to their default are not written, by Kafka nor by kafka-protocol).
fn prim(r: &mut Rng, p: Prim, nondefault: bool, default: Option<&str>) -> Json {
    let int = |r: &mut Rng, lo: i64, hi: i64| loop {
        let v = r.int(lo, hi);
        let d = default.and_then(|d| d.parse::<i64>().ok());
        if !nondefault || (v != 0 && v != -1 && Some(v) != d) {
            return Json::from(v);
        }
    };
    match p {
        Prim::Bool => {
            if nondefault {
                Json::Bool(!default.is_some_and(|d| d.eq_ignore_ascii_case("true")))
            } else {
                Json::Bool(r.below(2) == 1)
            }
        }
        Prim::Int8 => int(r, i8::MIN.into(), i8::MAX.into()),
        Prim::Int16 => int(r, i16::MIN.into(), i16::MAX.into()),
        Prim::Int32 => int(r, i32::MIN.into(), i32::MAX.into()),
        Prim::Int64 => int(r, i64::MIN, i64::MAX),
        Prim::Uint16 => int(r, 0, u16::MAX.into()),
        // Eighths are exact in binary and in JSON text.
        Prim::Float64 => json!((r.int(-1_000_000, 1_000_000) as f64) / 8.0 + 0.125),
        Prim::Uuid => {
            let mut b = [0u8; 16];
            for x in &mut b {
                *x = r.below(256) as u8;
            }
            if nondefault {
                b[0] |= 1;
            }
            Json::from(uuid::Uuid::from_bytes(b).hyphenated().to_string())
        }
        Prim::String => {
            let n = r.below(6) + u64::from(nondefault);
            Json::from(
                (0..n)
                    .map(|_| CHARS[r.below(CHARS.len() as u64) as usize])
                    .collect::<String>(),
            )
        }
        Prim::Bytes | Prim::Records => {
            let n = r.below(6) + u64::from(nondefault);
            Json::from(
                (0..n)
                    .map(|_| format!("{:02x}", r.below(256)))
                    .collect::<String>(),
            )
        }
    }
}

fn value(r: &mut Rng, f: &Field, v: i16, flexible: bool, depth: u32, nondefault: bool) -> Json {
    let nullable = f.nullable.contains(v);
    let null = nullable && !nondefault && r.below(5) == 0;
    match &f.ty {
        FieldType::Prim(p) => {
            if null && matches!(p, Prim::String | Prim::Bytes | Prim::Records) {
                Json::Null
            } else {
                prim(r, *p, nondefault, f.default.as_deref())
            }
        }
        FieldType::Struct(sub) => {
            if null {
                Json::Null
            } else {
                Json::Object(fields(r, sub, v, flexible, depth + 1, nondefault))
            }
        }
        FieldType::ArrayOfPrim(_) | FieldType::ArrayOfStruct(_) if null => Json::Null,
        FieldType::ArrayOfPrim(p) => {
            let n = if depth > 3 { 0 } else { r.below(3) } + u64::from(nondefault);
            Json::Array((0..n).map(|_| prim(r, *p, false, None)).collect())
        }
        FieldType::ArrayOfStruct(sub) => {
            let n = if depth > 3 { 0 } else { r.below(3) } + u64::from(nondefault);
            Json::Array(
                (0..n)
                    .map(|_| Json::Object(fields(r, sub, v, flexible, depth + 1, false)))
                    .collect(),
            )
        }
    }
}

fn fields(
    r: &mut Rng,
    list: &[Field],
    v: i16,
    flexible: bool,
    depth: u32,
    nondefault: bool,
) -> Map<String, Json> {
    let mut out = Map::new();
    for f in list.iter().filter(|f| f.versions.contains(v)) {
        let tagged = flexible && f.is_tagged_at(v);
        if tagged && r.below(2) == 0 {
            continue;
        }
        out.insert(
            f.name.clone(),
            value(r, f, v, flexible, depth, nondefault || tagged),
        );
    }
    out
}

/// The body's bytes in a frame, as kwire's tree places them.
fn body_bytes<'a>(frame: &'a [u8], m: &kwire::codec::Message<'_>) -> &'a [u8] {
    let n = &m.tree.nodes[m.body.expect("a body")];
    &frame[n.offset as usize..(n.offset + n.len) as usize]
}

/// kafka-protocol's reading written back, or why it could not.
fn kafka_protocol(kind: Kind, api: ApiKey, v: i16, body: &[u8]) -> Result<Vec<u8>, String> {
    let mut bytes = Bytes::copy_from_slice(body);
    let mut out = BytesMut::new();
    match kind {
        Kind::Request => RequestKind::decode(api, &mut bytes, v)
            .and_then(|m| m.encode(&mut out, v))
            .map_err(|e| e.to_string())?,
        Kind::Response => ResponseKind::decode(api, &mut bytes, v)
            .and_then(|m| m.encode(&mut out, v))
            .map_err(|e| e.to_string())?,
    }
    Ok(out.to_vec())
}

/// Versions kafka-protocol 0.18 lists as valid but cannot read: Kafka 4.1 (its source)
/// marked them `latestVersionUnstable`, and its request structs stop below them.
const KP_UNSTABLE: &[(i16, i16)] = &[(8, 10), (9, 10), (22, 6)];

fn one(
    c: &Codec,
    s: &MessageSchema,
    kind: Kind,
    key: i16,
    v: i16,
    seed: u64,
) -> Result<bool, String> {
    let mut r = Rng(seed ^ ((key as u64) << 32) ^ (v as u64) << 16);
    let flexible = s.is_flexible(v);
    let body = Json::Object(fields(&mut r, &s.fields, v, flexible, 0, false));
    let corr = r.int(i32::MIN.into(), i32::MAX.into()) as i32;
    let frame = match kind {
        Kind::Request => c.encode_request(key, v, corr, Some("kwire-rt"), &body),
        Kind::Response => c.encode_response(key, v, corr, &body),
    }
    .map_err(|e| format!("kwire cannot encode {} v{v}: {e}\n{body}", s.name))?;
    let m = match kind {
        Kind::Request => c.decode_request(&frame),
        Kind::Response => c.decode_response(&frame, Some((key, v))),
    };
    if let Some(e) = &m.error {
        return Err(format!("kwire cannot decode {} v{v}: {e}\n{body}", s.name));
    }
    if m.correlation_id != Some(corr) || m.trailing != 0 {
        return Err(format!("{} v{v}: header or length wrong", s.name));
    }
    // Records as their bytes, as given (tests/records_kafka.rs checks their decoding).
    let back = body_value_wire(&m.tree, m.body.expect("a body"));
    if back != body {
        return Err(format!(
            "{} v{v}: kwire decodes\n{back}\nbut was given\n{body}",
            s.name
        ));
    }
    let Ok(api) = ApiKey::try_from(key) else {
        return Ok(false);
    };
    let range = api.valid_versions();
    if v < range.min || v > range.max || (kind == Kind::Request && KP_UNSTABLE.contains(&(key, v)))
    {
        return Ok(false);
    }
    // Header versions agree with kafka-protocol's.
    let hv = m.tree.nodes[m
        .tree
        .child_with_role(0, kwire::codec::Role::Header)
        .unwrap()]
    .value;
    let want = match kind {
        Kind::Request => api.request_header_version(v),
        Kind::Response => api.response_header_version(v),
    };
    if hv != kwire::codec::Value::Int(want.into()) {
        return Err(format!(
            "{} v{v}: header {hv:?}, kafka-protocol says {want}",
            s.name
        ));
    }
    let wire = body_bytes(&frame, &m);
    match kafka_protocol(kind, api, v, wire) {
        Ok(kp) if kp == wire => Ok(true),
        Ok(kp) => Err(format!(
            "{} v{v}: kafka-protocol writes back {} bytes for {} (values read differently)\nkwire: {}\nkp:    {}\n{body}",
            s.name,
            kp.len(),
            wire.len(),
            hex(wire),
            hex(&kp)
        )),
        Err(e) => Err(format!(
            "{} v{v}: kafka-protocol cannot read it: {e}\n{body}",
            s.name
        )),
    }
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// Every (key, version, kind) with its schema.
fn cases(c: &Codec) -> Vec<(i16, i16, Kind, &'static MessageSchema)> {
    let mut out = Vec::new();
    for key in c.schemas.api_keys() {
        for kind in [Kind::Request, Kind::Response] {
            for v in c.schemas.versions(key, kind) {
                if let Some(s) = c.schemas.message(key, kind, v) {
                    out.push((key, v, kind, s));
                }
            }
        }
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn every_api_and_version_round_trips(seed in any::<u64>()) {
        let Some(c) = codec() else { return Ok(()) };
        let mut failures = Vec::new();
        for (key, v, kind, s) in cases(&c) {
            if let Err(e) = one(&c, s, kind, key, v, seed) {
                failures.push(e);
            }
        }
        prop_assert!(failures.is_empty(), "{} failures, first:\n{}", failures.len(), failures.join("\n---\n"));
    }
}

#[test]
fn coverage_report() {
    let Some(c) = codec() else { return };
    let all = cases(&c);
    // Per (API, direction): versions tried, and those kafka-protocol also read.
    let mut tally: BTreeMap<(i16, &'static str), (u64, u64)> = BTreeMap::new();
    let mut failures = Vec::new();
    for (key, v, kind, s) in &all {
        let t = tally.entry((*key, kind.as_str())).or_default();
        t.0 += 1;
        match one(&c, s, *kind, *key, *v, 7) {
            Ok(kp) => t.1 += u64::from(kp),
            Err(e) => failures.push(e),
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n---\n")
    );
    // Inference: the response's own (API, version) is always a candidate that decodes the
    // whole frame, so a unique answer can only be the right one; count how often it is unique.
    let (mut unique, mut responses) = (0, 0);
    for (key, v, _, s) in all.iter().filter(|c| c.2 == Kind::Response) {
        let mut r = Rng(99 ^ ((*key as u64) << 32) ^ (*v as u64) << 16);
        let body = Json::Object(fields(&mut r, &s.fields, *v, s.is_flexible(*v), 0, false));
        let frame = c.encode_response(*key, *v, 1, &body).unwrap();
        responses += 1;
        if let Some(found) = c.infer_response(&frame) {
            assert_eq!(found, (*key, *v), "{}", s.name);
            unique += 1;
        }
    }
    eprintln!(
        "inference: {unique} of {responses} random responses identified uniquely, none wrongly"
    );
    // Per API: versions round-tripped (requests/responses) and how many kafka-protocol read back.
    for key in c.schemas.api_keys() {
        let get = |k: &str| tally.get(&(key, k)).copied().unwrap_or_default();
        let (rq, rs) = (get("request"), get("response"));
        eprintln!(
            "{key:>3} {:<40} versions {:>2}/{:<2} kafka-protocol {:>2}/{:<2}",
            c.schemas.api_name(key).unwrap_or("?"),
            rq.0,
            rs.0,
            rq.1,
            rs.1
        );
    }
    let tried: u64 = tally.values().map(|t| t.0).sum();
    let kp: u64 = tally.values().map(|t| t.1).sum();
    eprintln!(
        "round trip: {} APIs, {} (API, version, direction) cases, {} also read back by kafka-protocol",
        c.schemas.api_count(),
        all.len(),
        kp
    );
    assert!(tried as usize >= all.len());
    assert!(c.schemas.api_count() >= 95);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 32, ..ProptestConfig::default() })]

    /// Hostile bytes through every schema in the jars: errors, never a panic.
    #[test]
    fn random_bytes_never_panic(mut data in prop::collection::vec(any::<u8>(), 0..200)) {
        let Some(c) = codec() else { return Ok(()) };
        let _ = c.infer_response(&data);
        for (key, v, kind, _) in cases(&c) {
            match kind {
                Kind::Request => {
                    if data.len() >= 8 {
                        data[4..6].copy_from_slice(&key.to_be_bytes());
                        data[6..8].copy_from_slice(&v.to_be_bytes());
                    }
                    let _ = c.decode_request(&data);
                }
                Kind::Response => {
                    let _ = c.decode_response(&data, Some((key, v)));
                }
            }
        }
    }
}

/// A projected decode (what a summary, a filter or `-e` reads) against a full one: the
/// verdict is the same, and so is everything the projection's readers read.
fn lazy_agrees(c: &Codec, frame: &[u8], kind: Kind, api: (i16, i16)) -> Result<(), String> {
    use kwire::codec::{Need, NeedPath};
    use kwire::filter::{BodyPath, tree::body_occurrences};
    use kwire::topics::{IdNames, TopicNames, TopicNamesConfig};
    let decode = |need: &Need| match kind {
        Kind::Request => c.decode_request_with(frame, need),
        Kind::Response => c.decode_response_with(frame, Some(api), need),
    };
    let full = decode(&Need::all());
    let paths = [
        BodyPath {
            segments: vec!["ErrorCode".into()],
            anchored: false,
        },
        BodyPath {
            segments: vec!["Name".into()],
            anchored: false,
        },
        BodyPath {
            segments: vec!["Topics".into()],
            anchored: true,
        },
        BodyPath {
            segments: vec![
                "Topics".into(),
                "Partitions".into(),
                "PartitionIndex".into(),
            ],
            anchored: true,
        },
    ];
    let path_need = Need::header().with_paths(paths.iter().map(|p| NeedPath {
        segments: p.segments.clone(),
        anchored: p.anchored,
    }));
    let summary = kwire::apis::summary_need();
    let occurrences = |m: &kwire::codec::Message<'_>, p: &BodyPath| {
        let mut out = Vec::new();
        if m.error.is_none() && m.body.is_some() {
            body_occurrences(&m.tree, p, &mut |v| {
                out.push(format!("{v:?}"));
                std::ops::ControlFlow::Continue(())
            });
        }
        out
    };
    let learned = |m: &kwire::codec::Message<'_>| {
        let mut t = TopicNames::new(TopicNamesConfig::default());
        t.learn(m);
        (t.stats(), t.names_for(m))
    };
    let what = |n: &str| format!("{:?} v{} {kind:?} ({n})", api.0, api.1);
    for (name, need) in [
        ("header", Need::header()),
        ("summary", summary),
        ("paths", path_need),
    ] {
        let lean = decode(&need);
        if (
            &lean.error,
            &lean.warnings,
            lean.trailing,
            lean.body.is_some(),
            lean.correlation_id,
            lean.client_id,
        ) != (
            &full.error,
            &full.warnings,
            full.trailing,
            full.body.is_some(),
            full.correlation_id,
            full.client_id,
        ) {
            return Err(format!(
                "{}: verdict {:?} {:?}, full {:?} {:?}",
                what(name),
                lean.error,
                lean.warnings,
                full.error,
                full.warnings
            ));
        }
        if learned(&lean) != learned(&full) {
            return Err(format!("{}: topic names differ", what(name)));
        }
        let (Some(fb), Some(lb)) = (full.body, lean.body) else {
            continue;
        };
        if name == "summary" {
            let names = IdNames::default();
            let details = |m: &kwire::codec::Message<'_>, body| {
                let mut out = String::new();
                kwire::apis::write_details(&mut out, m, body, &names);
                out
            };
            let (a, b) = (details(&full, fb), details(&lean, lb));
            let ra = kwire::view::records::summary(&full.tree);
            let rb = kwire::view::records::summary(&lean.tree);
            // The summary scans for batches only where the schema has a records field.
            if !full.records && !ra.is_empty() {
                return Err(format!("{}: records without a records field", what(name)));
            }
            if (a.as_str(), ra.as_str()) != (b.as_str(), rb.as_str()) {
                return Err(format!(
                    "{}: summary\n{b} {rb}\nfull:\n{a} {ra}",
                    what(name)
                ));
            }
        }
        if name == "paths" {
            for p in &paths {
                if occurrences(&lean, p) != occurrences(&full, p) {
                    return Err(format!("{}: occurrences of {p} differ", what(name)));
                }
            }
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// Every API and version, whole, cut short and with a byte changed: a projected decode
    /// agrees with a full one.
    #[test]
    fn lazy_decoding_agrees_with_full(seed in any::<u64>()) {
        let Some(c) = codec() else { return Ok(()) };
        let mut failures = Vec::new();
        for (key, v, kind, s) in cases(&c) {
            let mut r = Rng(seed ^ ((key as u64) << 32) ^ (v as u64) << 16);
            let flexible = s.is_flexible(v);
            let body = Json::Object(fields(&mut r, &s.fields, v, flexible, 0, false));
            let frame = match kind {
                Kind::Request => c.encode_request(key, v, 7, Some("kwire-lazy"), &body),
                Kind::Response => c.encode_response(key, v, 7, &body),
            };
            let Ok(frame) = frame else { continue };
            let mut cut = frame.clone();
            cut.truncate(8 + r.below(frame.len() as u64 - 7) as usize);
            let size = (cut.len() as i32 - 4).to_be_bytes();
            cut[..4].copy_from_slice(&size);
            let mut flipped = frame.clone();
            let at = 12 + r.below(frame.len().saturating_sub(12).max(1) as u64) as usize;
            if let Some(b) = flipped.get_mut(at) {
                *b ^= 1 << r.below(8);
            }
            for f in [&frame, &cut, &flipped] {
                if let Err(e) = lazy_agrees(&c, f, kind, (key, v)) {
                    failures.push(e);
                }
            }
        }
        prop_assert!(failures.is_empty(), "{} failures, first:\n{}", failures.len(), failures.join("\n---\n"));
    }
}
