//! The fixture captures: real Kafka 4.4.0 traffic in `captures/` and the
//! encoder-made Vote and FindCoordinator fixtures in `captures/synthetic/`.
//! Every file in both folders is covered without being named here:
//!
//! - snapshots of the binary's `summary` and `json` output, and a `tree`
//!   snapshot of the first Vote and FindCoordinator message of each
//!   (API, version, kind);
//! - every Vote and FindCoordinator frame decoded again by the kafka-protocol
//!   crate, and every field value compared with kwire's JSON;
//! - every FindCoordinator v0-v3 message compared with tshark's dissector.
//!
//! What `captures/README.md` states about the real files is checked in
//! `readme_facts_hold`, and `problem_checks_see_damage` shows that the
//! malformed and desync checks fire on a damaged copy.

mod common;

use bytes::{Buf, Bytes};
use common::*;
use kafka_protocol::messages::{
    FindCoordinatorRequest, FindCoordinatorResponse, RequestHeader, ResponseHeader, VoteRequest,
    VoteResponse,
};
use kafka_protocol::protocol::{Decodable, HeaderVersion, StrBytes};
use kwire::capture::Source;
use kwire::codec::Kind;
use kwire::pipeline::{self, Config, End, RunStats};
use kwire::view::{json as kjson, summary, tree};
use serde_json::{Map, Value as Json, json};
use std::collections::{BTreeMap, BTreeSet};
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use std::process::Command;

const FIND_COORDINATOR: i16 = 10;
const VOTE: i16 = 52;

// ---- the files ----------------------------------------------------------

/// A capture file and the name its snapshots carry.
struct Capture {
    path: PathBuf,
    /// `kraft-reelection.pcap`, or `synthetic__vote-v0-v2.pcap` for the subfolder.
    name: String,
}

/// Every pcap and pcapng file in `captures/` and `captures/synthetic/`, sorted.
fn captures() -> Vec<Capture> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("captures");
    let mut out = Vec::new();
    for (dir, prefix) in [(root.clone(), ""), (root.join("synthetic"), "synthetic__")] {
        let mut paths: Vec<PathBuf> = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "pcap" || e == "pcapng"))
            .collect();
        paths.sort();
        for path in paths {
            let file = path.file_name().unwrap().to_str().unwrap();
            let name = format!("{prefix}{file}");
            out.push(Capture { path, name });
        }
    }
    assert!(
        out.len() >= 8,
        "the six real captures and two synthetic ones"
    );
    out
}

// ---- the library's view of a file ----------------------------------------

/// One message as the library pipeline delivered it.
struct Msg {
    frame: u64,
    kind: Kind,
    /// The NDJSON object, parsed.
    json: Json,
    /// The Kafka frame's bytes, size prefix included.
    data: Vec<u8>,
    /// `(api key, version)`: a request's header, a response's paired request.
    api: Option<(i16, i16)>,
    /// The tree rendering, kept for Vote and FindCoordinator only.
    tree: Option<String>,
    summary: String,
}

impl Msg {
    fn is_vote_or_fc(&self) -> bool {
        self.api
            .is_some_and(|(k, _)| k == VOTE || k == FIND_COORDINATOR)
    }
}

struct Run {
    msgs: Vec<Msg>,
    stats: RunStats,
    end: End,
}

fn run(path: &Path) -> Run {
    let mut src = Source::open_file(path).unwrap();
    let mut msgs = Vec::new();
    let (stats, end) = pipeline::run(&mut src, Config::default(), &mut |r| {
        let mut buf = Vec::new();
        kjson::write_record(&mut buf, r);
        let api = match r.msg.kind {
            Kind::Request => r.msg.api_key.zip(r.msg.api_version),
            Kind::Response => r.api,
        };
        let keep_tree = api.is_some_and(|(k, _)| k == VOTE || k == FIND_COORDINATOR);
        msgs.push(Msg {
            frame: r.packet,
            kind: r.msg.kind,
            json: serde_json::from_slice(&buf).unwrap(),
            data: r.data.to_vec(),
            api,
            tree: keep_tree.then(|| tree::record(r)),
            summary: summary::line(r),
        });
        ControlFlow::Continue(())
    });
    Run { msgs, stats, end }
}

fn api_name(key: i16) -> &'static str {
    match key {
        VOTE => "Vote",
        FIND_COORDINATOR => "FindCoordinator",
        _ => unreachable!(),
    }
}

/// Parses a `problems:` count such as `0 malformed` out of the end-of-run statistics.
fn stat(stderr: &str, label: &str) -> u64 {
    let line = stderr
        .lines()
        .find(|l| l.trim_start().starts_with("problems:"))
        .unwrap_or_else(|| panic!("no problems line in {stderr}"));
    line.trim_start()
        .trim_start_matches("problems:")
        .split(',')
        .map(str::trim)
        .find_map(|item| {
            let (n, rest) = item.split_once(' ')?;
            (rest == label).then(|| n.parse().unwrap())
        })
        .unwrap_or_else(|| panic!("no `{label}` in {line}"))
}

// ---- 1. snapshots ---------------------------------------------------------

/// The binary's stdout, run with statistics on; checks them and its exit status.
fn binary(cap: &Capture, args: &[&str]) -> String {
    let mut all = vec!["read", cap.path.to_str().unwrap()];
    all.extend_from_slice(args);
    let out = kwire(&all);
    assert_eq!(out.code, 0, "{}: {all:?}: {}", cap.name, out.stderr);
    assert_eq!(
        stat(&out.stderr, "malformed"),
        0,
        "{}: {}",
        cap.name,
        out.stderr
    );
    assert_eq!(
        stat(&out.stderr, "desyncs"),
        0,
        "{}: {}",
        cap.name,
        out.stderr
    );
    out.stdout
}

#[test]
fn snapshots_of_every_capture() {
    for cap in captures() {
        let run = run(&cap.path);
        assert!(matches!(run.end, End::Complete), "{}", cap.name);
        assert_eq!(run.stats.malformed, 0, "{}: malformed", cap.name);
        assert_eq!(run.stats.kafka.desyncs, 0, "{}: desyncs", cap.name);

        let summary = binary(&cap, &[]);
        let ndjson = binary(&cap, &["--format", "json"]);
        // The binary prints what the library delivers.
        let lib_summary: Vec<&str> = run.msgs.iter().map(|m| m.summary.as_str()).collect();
        assert_eq!(
            summary.lines().collect::<Vec<_>>(),
            lib_summary,
            "{}",
            cap.name
        );
        let lib_json: Vec<&Json> = run.msgs.iter().map(|m| &m.json).collect();
        let bin_json: Vec<Json> = json_lines(&ndjson);
        assert_eq!(
            bin_json.iter().collect::<Vec<_>>(),
            lib_json,
            "{}",
            cap.name
        );

        // The first Vote or FindCoordinator message of each (API, version, kind).
        let trees = binary(
            &cap,
            &["--format", "tree", "--api", "vote,find-coordinator"],
        );
        let blocks: Vec<&str> = trees.split_inclusive("\n\n").collect();
        let mut seen = BTreeSet::new();
        let mut firsts = Vec::new();
        for m in run.msgs.iter().filter(|m| m.is_vote_or_fc()) {
            let (key, v) = m.api.unwrap();
            if seen.insert((key, v, m.kind.as_str())) {
                firsts.push(m);
            }
        }
        assert_eq!(
            blocks.len(),
            run.msgs.iter().filter(|m| m.is_vote_or_fc()).count(),
            "{}: one tree per Vote and FindCoordinator message",
            cap.name
        );

        let file = cap.path.strip_prefix(env!("CARGO_MANIFEST_DIR")).unwrap();
        let file = file.to_str().unwrap();
        snapshot(
            &cap.name,
            "summary",
            &format!("kwire read {file}"),
            &summary,
        );
        snapshot(
            &cap.name,
            "json",
            &format!("kwire read {file} --format json"),
            &ndjson,
        );
        for m in firsts {
            let (key, v) = m.api.unwrap();
            let kind = m.kind.as_str();
            let lib = m.tree.as_deref().unwrap();
            let heading = lib.lines().next().unwrap();
            let block = blocks
                .iter()
                .find(|b| b.lines().next() == Some(heading))
                .unwrap_or_else(|| panic!("{}: no tree for {heading}", cap.name));
            assert_eq!(*block, lib, "{}: binary and library trees differ", cap.name);
            assert!(
                heading.starts_with(&format!("Frame {}: ", m.frame))
                    && heading.contains(&format!(", {} v{v} {kind} corr=", api_name(key))),
                "{heading}"
            );
            let name = api_name(key);
            snapshot(
                &cap.name,
                &format!("tree__{name}-v{v}-{kind}"),
                &format!("kwire read {file} --format tree: the first {name} v{v} {kind}"),
                lib,
            );
        }
    }
}

/// A named snapshot, `captures__<file>__<what>.snap`, saying how it was made.
fn snapshot(file: &str, what: &str, description: &str, value: &str) {
    insta::with_settings!({description => description, omit_expression => true}, {
        insta::assert_snapshot!(format!("{file}__{what}"), value);
    });
}

// ---- 2. kafka-protocol ----------------------------------------------------

fn s(x: &StrBytes) -> Json {
    json!(x.as_str())
}

fn ns(x: &Option<StrBytes>) -> Json {
    x.as_ref().map_or(Json::Null, s)
}

/// Ends an object, with the unknown tagged fields as kwire's contract writes them.
fn obj(mut o: Map<String, Json>, tagged: &BTreeMap<i32, Bytes>) -> Json {
    if !tagged.is_empty() {
        let list: Vec<Json> = tagged
            .iter()
            .map(|(tag, data)| {
                let hex: String = data.iter().map(|b| format!("{b:02x}")).collect();
                json!({"tag": tag, "data": hex})
            })
            .collect();
        o.insert("_unknown_tagged_fields".into(), Json::Array(list));
    }
    Json::Object(o)
}

macro_rules! fields {
    ($($k:expr => $v:expr),* $(,)?) => {{
        let mut o = Map::new();
        $(o.insert($k.to_string(), json!($v));)*
        o
    }};
}

/// Kafka's VoteRequest schema, field by field, at version `v`.
fn vote_request(m: &VoteRequest, v: i16) -> Json {
    let mut o = fields! {"ClusterId" => ns(&m.cluster_id)};
    if v >= 1 {
        o.insert("VoterId".into(), json!(m.voter_id.0));
    }
    let topics: Vec<Json> = m
        .topics
        .iter()
        .map(|t| {
            let parts: Vec<Json> = t
                .partitions
                .iter()
                .map(|p| {
                    let mut o = fields! {
                        "PartitionIndex" => p.partition_index,
                        "ReplicaEpoch" => p.replica_epoch,
                        "ReplicaId" => p.replica_id.0,
                    };
                    if v >= 1 {
                        o.insert(
                            "ReplicaDirectoryId".into(),
                            json!(p.replica_directory_id.hyphenated().to_string()),
                        );
                        o.insert(
                            "VoterDirectoryId".into(),
                            json!(p.voter_directory_id.hyphenated().to_string()),
                        );
                    }
                    o.insert("LastOffsetEpoch".into(), json!(p.last_offset_epoch));
                    o.insert("LastOffset".into(), json!(p.last_offset));
                    if v >= 2 {
                        o.insert("PreVote".into(), json!(p.pre_vote));
                    }
                    obj(o, &p.unknown_tagged_fields)
                })
                .collect();
            obj(
                fields! {"TopicName" => s(&t.topic_name.0), "Partitions" => parts},
                &t.unknown_tagged_fields,
            )
        })
        .collect();
    o.insert("Topics".into(), json!(topics));
    obj(o, &m.unknown_tagged_fields)
}

/// Kafka's VoteResponse schema at version `v`. NodeEndpoints is a tagged
/// field (tag 0, v1+): Kafka writes it only when non-empty, and kwire shows
/// it only when it is on the wire.
fn vote_response(m: &VoteResponse, v: i16) -> Json {
    let topics: Vec<Json> = m
        .topics
        .iter()
        .map(|t| {
            let parts: Vec<Json> = t
                .partitions
                .iter()
                .map(|p| {
                    obj(
                        fields! {
                            "PartitionIndex" => p.partition_index,
                            "ErrorCode" => p.error_code,
                            "LeaderId" => p.leader_id.0,
                            "LeaderEpoch" => p.leader_epoch,
                            "VoteGranted" => p.vote_granted,
                        },
                        &p.unknown_tagged_fields,
                    )
                })
                .collect();
            obj(
                fields! {"TopicName" => s(&t.topic_name.0), "Partitions" => parts},
                &t.unknown_tagged_fields,
            )
        })
        .collect();
    let mut o = fields! {"ErrorCode" => m.error_code, "Topics" => topics};
    if v >= 1 && !m.node_endpoints.is_empty() {
        let eps: Vec<Json> = m
            .node_endpoints
            .iter()
            .map(|e| {
                obj(
                    fields! {"NodeId" => e.node_id.0, "Host" => s(&e.host), "Port" => e.port},
                    &e.unknown_tagged_fields,
                )
            })
            .collect();
        o.insert("NodeEndpoints".into(), json!(eps));
    }
    obj(o, &m.unknown_tagged_fields)
}

/// Kafka's FindCoordinatorRequest schema at version `v`.
fn fc_request(m: &FindCoordinatorRequest, v: i16) -> Json {
    let mut o = Map::new();
    if v <= 3 {
        o.insert("Key".into(), s(&m.key));
    }
    if v >= 1 {
        o.insert("KeyType".into(), json!(m.key_type));
    }
    if v >= 4 {
        let keys: Vec<Json> = m.coordinator_keys.iter().map(s).collect();
        o.insert("CoordinatorKeys".into(), json!(keys));
    }
    obj(o, &m.unknown_tagged_fields)
}

/// Kafka's FindCoordinatorResponse schema at version `v`.
fn fc_response(m: &FindCoordinatorResponse, v: i16) -> Json {
    let mut o = Map::new();
    if v >= 1 {
        o.insert("ThrottleTimeMs".into(), json!(m.throttle_time_ms));
    }
    if v <= 3 {
        o.insert("ErrorCode".into(), json!(m.error_code));
        if v >= 1 {
            o.insert("ErrorMessage".into(), ns(&m.error_message));
        }
        o.insert("NodeId".into(), json!(m.node_id.0));
        o.insert("Host".into(), s(&m.host));
        o.insert("Port".into(), json!(m.port));
    } else {
        let coords: Vec<Json> = m
            .coordinators
            .iter()
            .map(|c| {
                obj(
                    fields! {
                        "Key" => s(&c.key),
                        "NodeId" => c.node_id.0,
                        "Host" => s(&c.host),
                        "Port" => c.port,
                        "ErrorCode" => c.error_code,
                        "ErrorMessage" => ns(&c.error_message),
                    },
                    &c.unknown_tagged_fields,
                )
            })
            .collect();
        o.insert("Coordinators".into(), json!(coords));
    }
    obj(o, &m.unknown_tagged_fields)
}

/// The first flexible version of each API, from Kafka's schemas.
fn flexible(key: i16, v: i16) -> bool {
    match key {
        VOTE => v >= 0,
        FIND_COORDINATOR => v >= 3,
        _ => unreachable!(),
    }
}

/// Decodes `T` at version `v` from the rest of `buf`, which it must use up.
fn body<T: Decodable>(buf: &mut Bytes, v: i16, what: &str) -> T {
    let m = T::decode(buf, v).unwrap_or_else(|e| panic!("{what}: kafka-protocol: {e}"));
    assert_eq!(buf.remaining(), 0, "{what}: bytes left after the body");
    m
}

/// The header fields and body kafka-protocol reads from one frame, in the
/// shape of kwire's NDJSON object.
fn kafka_protocol_view(data: &[u8], kind: Kind, api: (i16, i16), what: &str) -> Json {
    let (key, v) = api;
    let mut buf = Bytes::copy_from_slice(data);
    let size = buf.get_i32();
    assert_eq!(size as usize, buf.remaining(), "{what}: size prefix");
    match kind {
        Kind::Request => {
            let hv = if flexible(key, v) { 2 } else { 1 };
            let kp_hv = match key {
                VOTE => VoteRequest::header_version(v),
                _ => FindCoordinatorRequest::header_version(v),
            };
            assert_eq!(hv, kp_hv, "{what}: request header version");
            let h = RequestHeader::decode(&mut buf, hv).unwrap();
            assert!(h.unknown_tagged_fields.is_empty(), "{what}: header tags");
            let b = match key {
                VOTE => vote_request(&body(&mut buf, v, what), v),
                _ => fc_request(&body(&mut buf, v, what), v),
            };
            json!({
                "api_key": h.request_api_key,
                "api_version": h.request_api_version,
                "correlation_id": h.correlation_id,
                "client_id": ns(&h.client_id),
                "body": b,
            })
        }
        Kind::Response => {
            let hv = if flexible(key, v) { 1 } else { 0 };
            let kp_hv = match key {
                VOTE => VoteResponse::header_version(v),
                _ => FindCoordinatorResponse::header_version(v),
            };
            assert_eq!(hv, kp_hv, "{what}: response header version");
            let h = ResponseHeader::decode(&mut buf, hv).unwrap();
            assert!(h.unknown_tagged_fields.is_empty(), "{what}: header tags");
            let b = match key {
                VOTE => vote_response(&body(&mut buf, v, what), v),
                _ => fc_response(&body(&mut buf, v, what), v),
            };
            json!({
                "api_key": key,
                "api_version": v,
                "correlation_id": h.correlation_id,
                "body": b,
            })
        }
    }
}

/// Scalar values in a JSON tree (an empty array or object counts as one).
fn leaves(v: &Json) -> usize {
    match v {
        Json::Array(a) if !a.is_empty() => a.iter().map(leaves).sum(),
        Json::Object(o) if !o.is_empty() => o.values().map(leaves).sum(),
        _ => 1,
    }
}

/// Frames and field values compared for one capture.
#[derive(Debug, Default, PartialEq)]
struct Compared {
    frames: usize,
    fields: usize,
}

fn compare_with_kafka_protocol(cap: &Capture) -> Compared {
    let run = run(&cap.path);
    let mut done = Compared::default();
    // Request frame and correlation id -> (key, version), as kafka-protocol read them.
    let mut requests: BTreeMap<(u64, i64), (i16, i16)> = BTreeMap::new();
    for m in &run.msgs {
        let what = format!("{} frame {} {}", cap.name, m.frame, m.kind.as_str());
        let api = match m.kind {
            // Key and version from the raw header bytes, not from kwire.
            Kind::Request => {
                let key = i16::from_be_bytes([m.data[4], m.data[5]]);
                let v = i16::from_be_bytes([m.data[6], m.data[7]]);
                if key != VOTE && key != FIND_COORDINATOR {
                    continue;
                }
                (key, v)
            }
            // The paired request's, and it must be a request kafka-protocol read.
            Kind::Response => {
                let Some(api) = m.api.filter(|_| m.is_vote_or_fc()) else {
                    continue;
                };
                let req = (
                    m.json["request_frame"].as_u64().expect("paired"),
                    m.json["correlation_id"].as_i64().unwrap(),
                );
                assert_eq!(requests.get(&req), Some(&api), "{what}: pairing");
                api
            }
        };
        let kp = kafka_protocol_view(&m.data, m.kind, api, &what);
        if m.kind == Kind::Request {
            let corr = kp["correlation_id"].as_i64().unwrap();
            requests.insert((m.frame, corr), api);
        }
        let mut ours = Map::new();
        for k in kp.as_object().unwrap().keys() {
            ours.insert(k.clone(), m.json[k.as_str()].clone());
        }
        assert_eq!(
            Json::Object(ours),
            kp,
            "{what}: kwire and kafka-protocol disagree"
        );
        assert!(m.json.get("error").is_none(), "{what}: {}", m.json);
        assert!(m.json.get("warnings").is_none(), "{what}: {}", m.json);
        done.frames += 1;
        done.fields += leaves(&kp);
    }
    // Every Vote and FindCoordinator message kwire showed was compared.
    let shown = run
        .msgs
        .iter()
        .filter(|m| {
            m.json["api_key"] == json!(VOTE) || m.json["api_key"] == json!(FIND_COORDINATOR)
        })
        .count();
    assert_eq!(done.frames, shown, "{}: messages not compared", cap.name);
    done
}

#[test]
fn vote_and_find_coordinator_match_kafka_protocol() {
    let mut report = Vec::new();
    for cap in captures() {
        let done = compare_with_kafka_protocol(&cap);
        if let Some(r) = README.iter().find(|r| cap.name == r.file) {
            let requests: usize = r.requests.iter().map(|(_, _, n)| n).sum();
            assert_eq!(done.frames, 2 * requests, "{}: frames compared", cap.name);
        }
        if cap.name.starts_with("synthetic__") {
            assert!(done.frames > 0, "{}: nothing compared", cap.name);
        }
        report.push(format!(
            "{}: {} frames, {} field values",
            cap.name, done.frames, done.fields
        ));
    }
    eprintln!("compared with kafka-protocol:\n  {}", report.join("\n  "));
}

// ---- 3. tshark ------------------------------------------------------------

const TSHARK_FIELDS: &[&str] = &[
    "frame.number",
    "kafka.request_key",
    "kafka.response_key",
    "kafka.request.version",
    "kafka.response.version",
    "kafka.correlation_id",
    "kafka.client_id",
    "kafka.consumer_group",
    "kafka.coordinator_key",
    "kafka.coordinator_type",
    "kafka.throttle_time",
    "kafka.error",
    "kafka.error_message",
    "kafka.node_id",
    "kafka.host",
    "kafka.port",
];

fn tshark_installed() -> bool {
    Command::new("tshark")
        .arg("-v")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// tshark's fields for each Kafka packet, by frame number.
fn tshark(path: &Path, ports: &BTreeSet<u16>) -> BTreeMap<u64, BTreeMap<&'static str, String>> {
    let mut cmd = Command::new("tshark");
    cmd.arg("-n").arg("-r").arg(path);
    for p in ports {
        cmd.arg("-d").arg(format!("tcp.port=={p},kafka"));
    }
    cmd.args(["-Y", "kafka", "-T", "fields", "-E", "separator=/t"]);
    for f in TSHARK_FIELDS {
        cmd.args(["-e", f]);
    }
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "tshark: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    text.lines()
        .map(|line| {
            let row: BTreeMap<&'static str, String> = TSHARK_FIELDS
                .iter()
                .copied()
                .zip(line.split('\t').map(str::to_string))
                .collect();
            (row["frame.number"].parse().unwrap(), row)
        })
        .collect()
}

/// kwire's value as tshark prints it: null strings as `[ Null ]`, absent as empty.
fn as_tshark(v: &Json) -> String {
    match v {
        Json::Null => "[ Null ]".into(),
        Json::String(s) => s.clone(),
        Json::Bool(b) => b.to_string(),
        Json::Number(n) => n.to_string(),
        other => panic!("not a scalar: {other}"),
    }
}

#[test]
fn find_coordinator_v0_to_v3_match_tshark() {
    if !tshark_installed() {
        eprintln!("SKIP: tshark is not installed; FindCoordinator was not compared with it");
        return;
    }
    let mut report = Vec::new();
    let mut total = 0;
    for cap in captures() {
        let run = run(&cap.path);
        let msgs: Vec<&Msg> = run
            .msgs
            .iter()
            .filter(|m| matches!(m.api, Some((FIND_COORDINATOR, 0..=3))))
            .collect();
        if msgs.is_empty() {
            continue;
        }
        // The broker's ports, so tshark decodes them as Kafka.
        let ports: BTreeSet<u16> = msgs
            .iter()
            .map(|m| {
                let server = if m.kind == Kind::Request {
                    "dst"
                } else {
                    "src"
                };
                let addr = m.json[server].as_str().unwrap();
                addr.rsplit(':').next().unwrap().parse().unwrap()
            })
            .collect();
        let rows = tshark(&cap.path, &ports);
        // tshark finds no FindCoordinator v0-v3 message that kwire missed.
        for (frame, row) in &rows {
            for (key, version) in [
                ("kafka.request_key", "kafka.request.version"),
                ("kafka.response_key", "kafka.response.version"),
            ] {
                let keys = row[key].split(',');
                for (k, v) in keys.zip(row[version].split(',')) {
                    if k == "10" && v.parse::<i16>().is_ok_and(|v| v <= 3) {
                        assert!(
                            msgs.iter().any(|m| m.frame == *frame),
                            "{}: tshark sees FindCoordinator v{v} in frame {frame}",
                            cap.name
                        );
                    }
                }
            }
        }
        let mut fields = 0;
        for m in &msgs {
            let what = format!("{} frame {} {}", cap.name, m.frame, m.kind.as_str());
            let row = rows
                .get(&m.frame)
                .unwrap_or_else(|| panic!("{what}: tshark shows no Kafka here"));
            assert!(
                !row["kafka.correlation_id"].contains(','),
                "{what}: several Kafka messages in one packet: {row:?}"
            );
            let (_, v) = m.api.unwrap();
            let b = &m.json["body"];
            let mut want: Vec<(&str, String)> =
                vec![("kafka.correlation_id", as_tshark(&m.json["correlation_id"]))];
            match m.kind {
                Kind::Request => {
                    want.push(("kafka.request_key", "10".into()));
                    want.push(("kafka.request.version", v.to_string()));
                    want.push(("kafka.client_id", as_tshark(&m.json["client_id"])));
                    // tshark files a v0 key under the older name.
                    let (key_field, other) = if v == 0 {
                        ("kafka.consumer_group", "kafka.coordinator_key")
                    } else {
                        ("kafka.coordinator_key", "kafka.consumer_group")
                    };
                    want.push((key_field, as_tshark(&b["Key"])));
                    want.push((other, String::new()));
                    let key_type = if v >= 1 {
                        as_tshark(&b["KeyType"])
                    } else {
                        String::new()
                    };
                    want.push(("kafka.coordinator_type", key_type));
                }
                Kind::Response => {
                    want.push(("kafka.response_key", "10".into()));
                    want.push(("kafka.response.version", v.to_string()));
                    let (throttle, message) = if v >= 1 {
                        (
                            as_tshark(&b["ThrottleTimeMs"]),
                            as_tshark(&b["ErrorMessage"]),
                        )
                    } else {
                        (String::new(), String::new())
                    };
                    want.push(("kafka.throttle_time", throttle));
                    want.push(("kafka.error", as_tshark(&b["ErrorCode"])));
                    want.push(("kafka.error_message", message));
                    want.push(("kafka.node_id", as_tshark(&b["NodeId"])));
                    want.push(("kafka.host", as_tshark(&b["Host"])));
                    want.push(("kafka.port", as_tshark(&b["Port"])));
                }
            }
            for (field, value) in want {
                assert_eq!(row[field], value, "{what}: {field}");
                fields += 1;
            }
        }
        total += msgs.len();
        report.push(format!(
            "{}: {} messages, {fields} field values",
            cap.name,
            msgs.len()
        ));
    }
    assert!(
        total > 0,
        "no FindCoordinator v0-v3 message in the captures"
    );
    eprintln!("compared with tshark:\n  {}", report.join("\n  "));
}

// ---- what captures/README.md says ------------------------------------------

/// The README's Vote and FindCoordinator facts for one real capture.
struct Readme {
    file: &'static str,
    /// Requests per (API, version).
    requests: &'static [(i16, i16, usize)],
    /// Responses with a non-zero error code: (frame, name).
    errors: &'static [(u64, &'static str)],
    /// Vote responses that deny the vote, by frame.
    denied: &'static [u64],
}

const README: &[Readme] = &[
    Readme {
        file: "kraft-initial-election.pcap",
        requests: &[(VOTE, 2, 5)],
        errors: &[(224, "FENCED_LEADER_EPOCH")],
        denied: &[224],
    },
    // 3 denials with FENCED_LEADER_EPOCH (the README gives no frames) and 2
    // without an error, frames 1035 and 1384.
    Readme {
        file: "kraft-reelection.pcap",
        requests: &[(VOTE, 2, 12)],
        errors: &[
            (595, "FENCED_LEADER_EPOCH"),
            (1364, "FENCED_LEADER_EPOCH"),
            (1381, "FENCED_LEADER_EPOCH"),
        ],
        denied: &[595, 1035, 1364, 1381, 1384],
    },
    Readme {
        file: "consumer-group-java.pcap",
        requests: &[(FIND_COORDINATOR, 6, 2)],
        errors: &[(63, "COORDINATOR_NOT_AVAILABLE")],
        denied: &[],
    },
    Readme {
        file: "transactional-producer.pcap",
        requests: &[(FIND_COORDINATOR, 6, 3)],
        errors: &[(12, "COORDINATOR_NOT_AVAILABLE")],
        denied: &[],
    },
    Readme {
        file: "consumer-group-kafka-python.pcap",
        requests: &[(FIND_COORDINATOR, 6, 1)],
        errors: &[],
        denied: &[],
    },
    Readme {
        file: "consumer-group-librdkafka.pcap",
        requests: &[(FIND_COORDINATOR, 2, 3)],
        errors: &[],
        denied: &[],
    },
];

/// Every `ErrorCode` in a body that is not 0.
fn error_codes(v: &Json, out: &mut Vec<i64>) {
    match v {
        Json::Object(o) => {
            for (k, x) in o {
                match x.as_i64() {
                    Some(code) if k == "ErrorCode" && code != 0 => out.push(code),
                    _ => error_codes(x, out),
                }
            }
        }
        Json::Array(a) => a.iter().for_each(|x| error_codes(x, out)),
        _ => {}
    }
}

#[test]
fn readme_facts_hold() {
    let names = captures();
    for r in README {
        let cap = names
            .iter()
            .find(|c| c.name == r.file)
            .unwrap_or_else(|| panic!("{} is missing", r.file));
        let run = run(&cap.path);
        let vfc: Vec<&Msg> = run.msgs.iter().filter(|m| m.is_vote_or_fc()).collect();

        let mut requests: BTreeMap<(i16, i16), usize> = BTreeMap::new();
        for m in vfc.iter().filter(|m| m.kind == Kind::Request) {
            *requests.entry(m.api.unwrap()).or_default() += 1;
        }
        let want: BTreeMap<(i16, i16), usize> =
            r.requests.iter().map(|&(k, v, n)| ((k, v), n)).collect();
        assert_eq!(requests, want, "{}: requests", r.file);
        // Every one is answered.
        let responses = vfc.iter().filter(|m| m.kind == Kind::Response).count();
        assert_eq!(responses, want.values().sum::<usize>(), "{}", r.file);

        let mut errors = Vec::new();
        let mut denied = Vec::new();
        for m in vfc.iter().filter(|m| m.kind == Kind::Response) {
            let mut codes = Vec::new();
            error_codes(&m.json["body"], &mut codes);
            for code in codes {
                let name = kwire::proto::errors::error_name(code as i16).unwrap_or("?");
                errors.push((m.frame, name));
            }
            let granted = &m.json["body"]["Topics"][0]["Partitions"][0]["VoteGranted"];
            if granted == &json!(false) {
                denied.push(m.frame);
            }
        }
        assert_eq!(errors, r.errors, "{}: error answers", r.file);
        assert_eq!(denied, r.denied, "{}: denied votes", r.file);
    }
}

/// The malformed and desync checks are not vacuous: a copy of a synthetic
/// capture with a broken string length, and one with a broken size prefix,
/// show up in the binary's statistics and in the library's counts.
#[test]
fn problem_checks_see_damage() {
    let cap = captures()
        .into_iter()
        .find(|c| c.name == "synthetic__vote-v0-v2.pcap")
        .unwrap();
    let pcap = std::fs::read(&cap.path).unwrap();
    let first = run(&cap.path)
        .msgs
        .into_iter()
        .find(|m| m.kind == Kind::Request)
        .unwrap();
    let at = pcap
        .windows(first.data.len())
        .position(|w| w == first.data)
        .expect("the first request lies in one packet");
    // Vote is flexible from v0: after the v2 request header comes ClusterId's compact length.
    let client_len = usize::from(u16::from_be_bytes([first.data[12], first.data[13]]));
    let cluster_len = at + 4 + 8 + 2 + client_len + 1;
    // A first request that is not Kafka (its size prefix destroyed) also leaves
    // its server's first frame untrusted after the handshake: two desyncs.
    for (what, offset, bytes, label, count) in [
        ("string length", cluster_len, &[0x7f][..], "malformed", 1),
        ("size prefix", at, &[0xff; 4][..], "desyncs", 2),
    ] {
        let mut damaged = pcap.clone();
        damaged[offset..offset + bytes.len()].copy_from_slice(bytes);
        let file = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(file.path(), &damaged).unwrap();
        let out = kwire(&["read", file.path().to_str().unwrap()]);
        assert_eq!(out.code, 0, "{what}: {}", out.stderr);
        assert_eq!(stat(&out.stderr, label), count, "{what}: {}", out.stderr);
        let stats = run(file.path()).stats;
        let n = match label {
            "malformed" => stats.malformed,
            _ => stats.kafka.desyncs,
        };
        assert_eq!(n, count, "{what}");
    }
}
