//! Kafka's own schemas, loaded from the kafka-clients jars the way users get them
//! (`KWIRE_SCHEMAS`, `$KAFKA_HOME/libs`, `~/.m2`): all of them load, and every
//! message of every bundled and public capture decodes, with each decoded value
//! cross-checked against the kafka-protocol crate where it can parse the message.
//!
//! Without a jar these tests print SKIP and pass, except under `CI=true`.

use bytes::{Bytes, BytesMut};
use kafka_protocol::messages::{ApiKey, RequestKind, ResponseKind};
use kwire::capture::Source;
use kwire::codec::{self, Codec, DecodeOptions, Kind, Search, read_source};
use kwire::pipeline::{self, Config, End};
use kwire::view::json::{body_value, body_value_wire};
use std::collections::BTreeMap;
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// Skips loudly, or fails under CI where the jars must be present.
fn skip(why: &str) {
    let msg = format!(
        "SKIP: {why}; get one with `mvn dependency:get -Dartifact=org.apache.kafka:kafka-clients:4.4.0`"
    );
    if std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!("{msg} (CI=true: the jars are required)");
    }
    eprintln!("\n*** {msg} ***\n");
}

/// The jars discovered as a user's kwire discovers them, newest first.
fn discovered() -> Vec<PathBuf> {
    Search::from_env(Vec::new()).paths().0
}

/// The process-wide codec over every discovered jar (secrets shown: values are compared).
fn codec() -> Option<Codec> {
    static CODEC: OnceLock<Option<Codec>> = OnceLock::new();
    *CODEC.get_or_init(|| {
        let loaded = Search::from_env(Vec::new()).load();
        eprintln!("{}", loaded.description);
        assert!(loaded.problems.is_empty(), "{:?}", loaded.problems);
        if loaded.schemas.sources().is_empty() {
            return None;
        }
        let c = Codec::new(loaded.schemas, DecodeOptions { show_secrets: true });
        codec::install(c).expect("installed once");
        Some(c)
    })
}

#[test]
fn all_203_schemas_of_kafka_4_4_0_load() {
    let Some(jar) = discovered()
        .into_iter()
        .find(|p| p.to_string_lossy().ends_with("kafka-clients-4.4.0.jar"))
    else {
        return skip("no kafka-clients-4.4.0.jar found");
    };
    let (schemas, problems) = read_source(&jar).unwrap();
    assert_eq!(problems, Vec::<String>::new());
    assert_eq!(schemas.len(), 203);
    let count = |k: codec::SchemaKind| schemas.iter().filter(|s| s.kind == k).count();
    assert_eq!(count(codec::SchemaKind::Request), 95);
    assert_eq!(count(codec::SchemaKind::Response), 95);
    assert_eq!(count(codec::SchemaKind::Header), 2);
    assert_eq!(count(codec::SchemaKind::Data), 11);

    let mut s = codec::Schemas::builtin();
    s.add("4.4.0", schemas);
    assert_eq!(s.api_count(), 95);
    // Kafka 4 removed Produce v0-2; the built-in Vote (0-2) stays as the jar has no more.
    assert_eq!(s.versions(0, Kind::Request), (3..=13).collect::<Vec<_>>());
    assert_eq!(s.newest(52, Kind::Request).unwrap().valid.hi, 2);
    assert!(s.data("LeaderChangeMessage").is_some() && s.data("VotersRecord").is_some());
}

#[test]
fn older_jars_bring_back_removed_versions() {
    let jars = discovered();
    let has = |v: &str| {
        jars.iter().any(|p| {
            p.to_string_lossy()
                .ends_with(&format!("kafka-clients-{v}.jar"))
        })
    };
    if !has("4.4.0") || !has("3.9.1") {
        return skip("kafka-clients 4.4.0 and 3.9.1 are not both found");
    }
    let c = codec().unwrap();
    // Produce v0-2 come from 3.9 (or 2.8); v3+ from 4.4.
    assert_eq!(c.schemas.versions(0, Kind::Request).first(), Some(&0));
    assert!(c.schemas.message(0, Kind::Request, 13).is_some());
    // Every jar loads without a problem (2.8's DescribeProducersRequest.json has a stray `]}`,
    // which Kafka's own reader ignores too).
    for jar in &jars {
        let (list, problems) = read_source(jar).unwrap();
        assert!(problems.is_empty(), "{}: {problems:?}", jar.display());
        assert!(list.len() > 100, "{}", jar.display());
    }
}

/// Per API: messages, decoded bodies, and kafka-protocol cross-checks (agreed, not parsed).
#[derive(Default, Debug)]
struct Counts {
    messages: u64,
    decoded: u64,
    kp_agreed: u64,
    kp_unparsed: u64,
}

fn captures() -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut add = |dir: &Path| {
        if let Ok(rd) = std::fs::read_dir(dir) {
            let mut v: Vec<PathBuf> = rd
                .flatten()
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|x| x == "pcap" || x == "pcapng"))
                .collect();
            v.sort();
            files.extend(v);
        }
    };
    add(Path::new("captures"));
    add(Path::new("captures/synthetic"));
    // ../shared from the main checkout; ../../shared from a worktree under wt/.
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    match ["../shared/captures-public", "../../shared/captures-public"]
        .iter()
        .map(|p| root.join(p))
        .find(|p| p.is_dir())
    {
        Some(public) => add(&public),
        None => eprintln!("SKIP: ../shared/captures-public is missing; public captures not read"),
    }
    files
}

/// kafka-protocol's reading of a body, written back: equal to the wire bytes when it
/// read every value as it was sent. `None` when it cannot parse this API or version.
fn kafka_protocol_roundtrip(kind: Kind, key: i16, version: i16, body: &[u8]) -> Option<Vec<u8>> {
    let api = ApiKey::try_from(key).ok()?;
    let mut bytes = Bytes::copy_from_slice(body);
    let mut out = BytesMut::new();
    let ok = std::panic::catch_unwind(move || match kind {
        Kind::Request => {
            let m = RequestKind::decode(api, &mut bytes, version).ok()?;
            m.encode(&mut out, version).ok()?;
            Some(out.to_vec())
        }
        Kind::Response => {
            let m = ResponseKind::decode(api, &mut bytes, version).ok()?;
            m.encode(&mut out, version).ok()?;
            Some(out.to_vec())
        }
    });
    ok.ok().flatten()
}

#[test]
fn every_captured_message_decodes_and_agrees_with_kafka_protocol() {
    let Some(c) = codec() else {
        return skip("no kafka-clients jar found");
    };
    let mut per_api: BTreeMap<String, Counts> = BTreeMap::new();
    let mut problems = Vec::new();
    let mut total = Counts::default();
    for path in captures() {
        let mut src = Source::open_file(&path).unwrap();
        let name = path.display().to_string();
        let (stats, end) = pipeline::run(&mut src, Config::default(), &mut |r| {
            let m = &r.msg;
            let api = format!("{} {}", m.api_name().unwrap_or("?"), m.kind.as_str());
            let e = per_api.entry(api).or_default();
            e.messages += 1;
            total.messages += 1;
            if let Some(err) = &m.error {
                problems.push(format!("{name} frame {}: {err}", r.packet));
                return ControlFlow::Continue(());
            }
            let (Some(b), Some(key), Some(v)) = (m.body, m.api_key, m.api_version) else {
                if m.api_key.is_some() {
                    problems.push(format!(
                        "{name} frame {}: no body for {:?}",
                        r.packet,
                        m.api_name()
                    ));
                }
                return ControlFlow::Continue(());
            };
            e.decoded += 1;
            total.decoded += 1;
            let node = &m.tree.nodes[b];
            let wire = &r.data[node.offset as usize..(node.offset + node.len) as usize];
            // kwire's values written back by kwire's encoder give the wire bytes again
            // (records as their bytes: tests/records_kafka.rs checks their decoding)...
            let value = body_value_wire(&m.tree, b);
            let again = match m.kind {
                Kind::Request => c.encode_request(key, v, 0, None, &value),
                Kind::Response => c.encode_response(key, v, 0, &value),
            };
            let again = again.map(|f| {
                let tail_len = wire.len();
                f[f.len() - tail_len.min(f.len())..].to_vec()
            });
            if again.as_deref() != Ok(wire) {
                problems.push(format!(
                    "{name} frame {}: kwire's values do not re-encode to the wire bytes",
                    r.packet
                ));
            }
            // ...and kafka-protocol reads the same values (its writing them back agrees).
            if std::env::var_os("KWIRE_SHOW_KP_NA").is_some()
                && kafka_protocol_roundtrip(m.kind, key, v, wire).is_none()
            {
                eprintln!("kp n/a: {name} {:?} v{v} {}", m.api_name(), m.kind.as_str());
            }
            match kafka_protocol_roundtrip(m.kind, key, v, wire) {
                Some(kp) if kp == wire => {
                    e.kp_agreed += 1;
                    total.kp_agreed += 1;
                }
                Some(_) => problems.push(format!(
                    "{name} frame {}: kafka-protocol reads {} v{v} differently",
                    r.packet,
                    m.api_name().unwrap_or("?")
                )),
                None => {
                    e.kp_unparsed += 1;
                    total.kp_unparsed += 1;
                }
            }
            ControlFlow::Continue(())
        });
        assert!(matches!(end, End::Complete), "{name}");
        if stats.malformed != 0 {
            problems.push(format!("{name}: {} malformed", stats.malformed));
        }
    }
    eprintln!(
        "{:<32} {:>8} {:>8} {:>8} {:>8}",
        "api", "messages", "decoded", "kp-agree", "kp-n/a"
    );
    for (api, n) in &per_api {
        eprintln!(
            "{api:<32} {:>8} {:>8} {:>8} {:>8}",
            n.messages, n.decoded, n.kp_agreed, n.kp_unparsed
        );
    }
    eprintln!(
        "{:<32} {:>8} {:>8} {:>8} {:>8}",
        "total", total.messages, total.decoded, total.kp_agreed, total.kp_unparsed
    );
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    assert!(total.decoded > 0);
}

#[test]
fn secrets_are_redacted_unless_asked() {
    if codec().is_none() {
        return skip("no kafka-clients jar found");
    }
    let loaded = Search::from_env(Vec::new()).load();
    let hidden = Codec::new(loaded.schemas, DecodeOptions::default());
    let shown = codec().unwrap();
    let body = |c: &Codec, f: &[u8], resp: Option<(i16, i16)>| {
        let m = match resp {
            None => c.decode_request(f),
            Some(api) => c.decode_response(f, Some(api)),
        };
        assert_eq!(m.error, None);
        body_value(&m.tree, m.body.unwrap())
    };

    // SASL/PLAIN: authzid NUL user NUL password.
    let plain = hex(b"\0alice\0alice-secret");
    let f = shown
        .encode_request(
            36,
            2,
            7,
            Some("c"),
            &serde_json::json!({"AuthBytes": plain}),
        )
        .unwrap();
    let b = body(&hidden, &f, None);
    assert_eq!(b["AuthBytes"], "<redacted 19 bytes>");
    // A view of the raw bytes knows what to mask: exactly the 19 secret bytes.
    let m = hidden.decode_request(&f);
    let ranges = m.tree.redacted_ranges();
    assert_eq!(ranges.len(), 1);
    let (at, n) = ranges[0];
    assert_eq!(&f[at..at + n], b"\0alice\0alice-secret");
    assert_eq!(b["_sasl_mechanism"], "PLAIN");
    assert_eq!(b["_sasl_user"], "alice");
    assert!(!b.to_string().contains("secret") && !b.to_string().contains(&hex(b"secret")));
    assert_eq!(body(&shown, &f, None)["AuthBytes"], plain);

    // SCRAM client-first: the user name only; the server's answer (salt) all hidden.
    let first = hex(b"n,,n=bob,r=rOprNGfwEbeRWgbNEkqO");
    let f = shown
        .encode_request(
            36,
            1,
            8,
            Some("c"),
            &serde_json::json!({"AuthBytes": first}),
        )
        .unwrap();
    let b = body(&hidden, &f, None);
    assert_eq!(
        (b["_sasl_mechanism"].as_str(), b["_sasl_user"].as_str()),
        (Some("SCRAM"), Some("bob"))
    );
    let server =
        hex(b"r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096");
    let f = shown
        .encode_response(36, 1, 8, &serde_json::json!({"ErrorCode": 0, "ErrorMessage": null, "AuthBytes": server, "SessionLifetimeMs": 0}))
        .unwrap();
    let b = body(&hidden, &f, Some((36, 1)));
    assert!(b["AuthBytes"].as_str().unwrap().starts_with("<redacted "));
    assert!(b.get("_sasl_user").is_none());

    // SCRAM credentials and delegation-token HMACs.
    let f = shown
        .encode_request(51, 0, 9, Some("c"), &serde_json::json!({"Deletions": [], "Upsertions": [{
            "Name": "bob", "Mechanism": 1, "Iterations": 4096, "Salt": "0102", "SaltedPassword": "0a0b0c"}]}))
        .unwrap();
    let b = body(&hidden, &f, None);
    assert_eq!(b["Upsertions"][0]["Salt"], "<redacted 2 bytes>");
    assert_eq!(b["Upsertions"][0]["SaltedPassword"], "<redacted 3 bytes>");
    assert_eq!(b["Upsertions"][0]["Name"], "bob");
    let f = shown
        .encode_request(
            39,
            2,
            10,
            Some("c"),
            &serde_json::json!({"Hmac": "deadbeef", "RenewPeriodMs": 1}),
        )
        .unwrap();
    assert_eq!(body(&hidden, &f, None)["Hmac"], "<redacted 4 bytes>");
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

#[test]
fn envelope_carries_a_decoded_message() {
    let Some(c) = codec() else {
        return skip("no kafka-clients jar found");
    };
    // A broker forwards an admin client's CreateTopics v7 to the controller.
    let inner = c
        .encode_request(
            19,
            7,
            42,
            Some("adminclient-1"),
            &serde_json::json!({
            "Topics": [{"Name": "orders", "NumPartitions": 3, "ReplicationFactor": 1,
                        "Assignments": [], "Configs": []}],
            "TimeoutMs": 30000, "ValidateOnly": false}),
        )
        .unwrap();
    let f = c
        .encode_request(58, 0, 7, Some("broker-1"), &serde_json::json!({
            "RequestData": hex(&inner[4..]), "RequestPrincipal": null, "ClientHostAddress": "7f000001"}))
        .unwrap();
    let m = c.decode_request(&f);
    assert_eq!(m.error, None);
    let b = body_value(&m.tree, m.body.unwrap());
    assert_eq!(b["_inner"]["api_name"], "CreateTopics");
    assert_eq!(b["_inner"]["header"]["correlation_id"], 42);
    assert_eq!(b["_inner"]["header"]["client_id"], "adminclient-1");
    assert_eq!(b["_inner"]["body"]["Topics"][0]["Name"], "orders");
    assert_eq!(b["RequestData"], hex(&inner[4..]));

    // A response names no API: `_inner` only when exactly one candidate decodes it whole.
    let inner = c
        .encode_response(60, 2, 42, &serde_json::json!({"ThrottleTimeMs": 0, "ErrorCode": 0,
            "ErrorMessage": null, "EndpointType": 1, "ClusterId": "c1", "ControllerId": 1,
            "Brokers": [{"BrokerId": 1, "Host": "h", "Port": 9092, "Rack": null, "IsFenced": false}],
            "ClusterAuthorizedOperations": -2147483648}))
        .unwrap();
    let f = c
        .encode_response(
            58,
            0,
            7,
            &serde_json::json!({"ResponseData": hex(&inner[4..]), "ErrorCode": 0}),
        )
        .unwrap();
    let m = c.decode_response(&f, Some((58, 0)));
    assert_eq!(m.error, None);
    let b = body_value(&m.tree, m.body.unwrap());
    eprintln!(
        "envelope response: _inner {}",
        if b.get("_inner").is_some() {
            "decoded"
        } else {
            "ambiguous, left as bytes"
        }
    );
    if let Some(i) = b.get("_inner") {
        assert_eq!(i["api_name"], "DescribeCluster", "{b}");
    }
    // Garbage inside an envelope leaves the bytes as they are.
    let f = c
        .encode_request(
            58,
            0,
            8,
            Some("b"),
            &serde_json::json!({
            "RequestData": "0013000700", "RequestPrincipal": null, "ClientHostAddress": ""}),
        )
        .unwrap();
    let m = c.decode_request(&f);
    assert_eq!(m.error, None);
    assert!(body_value(&m.tree, m.body.unwrap()).get("_inner").is_none());
}
