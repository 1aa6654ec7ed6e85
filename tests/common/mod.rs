//! Shared helpers for the whole-program tests: Kafka frames from the encoder,
//! synthetic flows written to temporary capture files, and ways to run them
//! through the real binary or the library pipeline.
#![allow(dead_code)]

use kwire::capture::Source;
use kwire::capture::writer::{PcapWriter, PcapngWriter, TsPrecision};
use kwire::codec::{encode_request, encode_response};
use kwire::pipeline::{self, Config, End, RunStats};
use kwire::synth::{Flow, Link};
use kwire::view::{json, summary};
use serde_json::{Value, json};
use std::io::Write;
use std::ops::ControlFlow;
use std::path::Path;
use std::process::{Command, Stdio};
use tempfile::NamedTempFile;

pub const CLIENT: &str = "10.0.0.1:50000";
pub const SERVER: &str = "10.0.0.2:9092";

/// A client/server flow over Ethernet on the default Kafka port.
pub fn flow() -> Flow {
    flow_between(CLIENT, SERVER)
}

pub fn flow_between(client: &str, server: &str) -> Flow {
    Flow::new(client.parse().unwrap(), server.parse().unwrap())
}

// ---- Kafka frames -------------------------------------------------------

/// A FindCoordinator request for one group key, in the shape its version has.
pub fn fc_req(version: i16, corr: i32, client: &str, key: &str) -> Vec<u8> {
    let body = match version {
        0 => json!({"Key": key}),
        1..=3 => json!({"Key": key, "KeyType": 0}),
        _ => json!({"KeyType": 0, "CoordinatorKeys": [key]}),
    };
    encode_request(10, version, corr, Some(client), &body).unwrap()
}

/// A FindCoordinator response naming one coordinator, or an error when `error != 0`.
pub fn fc_resp(
    version: i16,
    corr: i32,
    key: &str,
    node: i32,
    host: &str,
    port: i32,
    error: i16,
) -> Vec<u8> {
    let msg = if error == 0 {
        Value::Null
    } else {
        json!("not here")
    };
    let body = match version {
        0 => json!({"ErrorCode": error, "NodeId": node, "Host": host, "Port": port}),
        1..=3 => json!({"ThrottleTimeMs": 0, "ErrorCode": error, "ErrorMessage": msg,
                        "NodeId": node, "Host": host, "Port": port}),
        _ => json!({"ThrottleTimeMs": 0, "Coordinators": [{"Key": key, "NodeId": node,
                    "Host": host, "Port": port, "ErrorCode": error, "ErrorMessage": msg}]}),
    };
    encode_response(10, version, corr, &body).unwrap()
}

const DIR_A: &str = "0f0e0d0c-0b0a-4908-8706-050403020100";
const DIR_B: &str = "11111111-2222-4333-8444-555555555555";

/// A Vote request from replica 1 (epoch 5, last offset 100@4) to voter 2.
pub fn vote_req(version: i16, corr: i32, client: &str, prevote: bool) -> Vec<u8> {
    let mut part = json!({"PartitionIndex": 0, "ReplicaEpoch": 5, "ReplicaId": 1,
                          "LastOffsetEpoch": 4, "LastOffset": 100});
    let mut body = json!({"ClusterId": "kRaft-cluster", "Topics": [{"TopicName": "__cluster_metadata",
                          "Partitions": []}]});
    if version >= 1 {
        part["ReplicaDirectoryId"] = json!(DIR_A);
        part["VoterDirectoryId"] = json!(DIR_B);
        body["VoterId"] = json!(2);
    }
    if version >= 2 {
        part["PreVote"] = json!(prevote);
    }
    body["Topics"][0]["Partitions"] = json!([part]);
    encode_request(52, version, corr, Some(client), &body).unwrap()
}

/// A Vote response: granted or not, leader 2 at epoch 5, with a partition error code.
pub fn vote_resp(version: i16, corr: i32, granted: bool, error: i16) -> Vec<u8> {
    let mut body = json!({"ErrorCode": 0, "Topics": [{"TopicName": "__cluster_metadata",
        "Partitions": [{"PartitionIndex": 0, "ErrorCode": error, "LeaderId": 2,
                        "LeaderEpoch": 5, "VoteGranted": granted}]}]});
    if version >= 1 {
        body["NodeEndpoints"] = json!([{"NodeId": 2, "Host": "ctrl-2", "Port": 9093}]);
    }
    encode_response(52, version, corr, &body).unwrap()
}

/// A request for an API kwire has no schema for: header plus raw body bytes.
pub fn raw_req(key: i16, version: i16, corr: i32, client: &str, hex: &str) -> Vec<u8> {
    encode_request(key, version, corr, Some(client), &json!(hex)).unwrap()
}

pub fn raw_resp(key: i16, version: i16, corr: i32, hex: &str) -> Vec<u8> {
    encode_response(key, version, corr, &json!(hex)).unwrap()
}

// ---- capture files ------------------------------------------------------

/// All packets of several flows, merged by timestamp (stable, so each flow keeps its order).
pub fn merged(flows: &[&Flow]) -> Vec<(i64, Vec<u8>)> {
    let mut all: Vec<(i64, Vec<u8>)> = flows
        .iter()
        .flat_map(|f| f.packets().iter().cloned())
        .collect();
    all.sort_by_key(|p| p.0);
    all
}

/// Writes packets to a temporary classic pcap (µs) file.
pub fn pcap_packets(link: Link, packets: &[(i64, Vec<u8>)]) -> NamedTempFile {
    let file = NamedTempFile::new().unwrap();
    let mut w = PcapWriter::new(
        file.as_file(),
        link.linktype() as u32,
        TsPrecision::Micro,
        65535,
    )
    .unwrap();
    for (ts, data) in packets {
        w.write_packet(*ts, data).unwrap();
    }
    file
}

/// Writes flows (all with the same link type) to a temporary pcap file.
pub fn pcap(flows: &[&Flow]) -> NamedTempFile {
    pcap_packets(flows[0].link(), &merged(flows))
}

/// Writes flows to a temporary pcapng file with one interface.
pub fn pcapng(flows: &[&Flow]) -> NamedTempFile {
    let file = NamedTempFile::new().unwrap();
    let mut w = PcapngWriter::new(file.as_file()).unwrap();
    let iface = w
        .add_interface(flows[0].link().linktype() as u16, 65535, TsPrecision::Micro)
        .unwrap();
    for (ts, data) in merged(flows) {
        w.write_packet(iface, ts, &data).unwrap();
    }
    file
}

// ---- running kwire ------------------------------------------------------

/// What one run of the binary left behind.
#[derive(Debug)]
pub struct Out {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

/// Runs `kwire` with these arguments, optionally feeding `stdin`.
pub fn kwire_with_stdin(args: &[&str], stdin: Option<&[u8]>) -> Out {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_kwire"));
    // A key log in the environment would change what TLS captures show.
    cmd.env_remove("SSLKEYLOGFILE");
    // No Kafka schemas from jars: these tests pin the built-in output (Vote, FindCoordinator).
    cmd.env("KWIRE_SCHEMAS", "");
    cmd.args(args)
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    if let Some(bytes) = stdin {
        let mut pipe = child.stdin.take().unwrap();
        let bytes = bytes.to_vec();
        // A thread, so a full stdout pipe cannot deadlock against our write.
        let writer = std::thread::spawn(move || {
            let _ = pipe.write_all(&bytes);
        });
        let out = child.wait_with_output().unwrap();
        writer.join().unwrap();
        return to_out(out);
    }
    to_out(child.wait_with_output().unwrap())
}

fn to_out(out: std::process::Output) -> Out {
    Out {
        code: out.status.code().expect("kwire was killed by a signal"),
        stdout: String::from_utf8(out.stdout).expect("stdout is UTF-8"),
        stderr: String::from_utf8(out.stderr).expect("stderr is UTF-8"),
    }
}

pub fn kwire(args: &[&str]) -> Out {
    kwire_with_stdin(args, None)
}

/// `kwire read FILE -q [extra...]`, which must succeed with nothing on stderr; returns stdout.
pub fn read(file: &Path, extra: &[&str]) -> String {
    let path = file.to_str().unwrap();
    let mut args = vec!["read", path, "-q"];
    args.extend_from_slice(extra);
    let out = kwire(&args);
    assert_eq!(out.code, 0, "kwire {args:?} failed: {}", out.stderr);
    assert_eq!(out.stderr, "", "kwire {args:?} wrote to stderr");
    out.stdout
}

/// Summary and NDJSON of a file, each checked for the invariants every output keeps.
pub fn summary_and_json(file: &Path, extra: &[&str]) -> (String, String) {
    let s = read(file, extra);
    let mut jargs = vec!["--format", "json"];
    jargs.extend_from_slice(extra);
    let j = read(file, &jargs);
    assert_eq!(
        s.lines().count(),
        j.lines().count(),
        "summary and json disagree on the number of messages"
    );
    for line in j.lines() {
        let v: Value = serde_json::from_str(line).expect("every json line parses");
        assert!(v.is_object());
    }
    (s, j)
}

/// The NDJSON lines as values.
pub fn json_lines(j: &str) -> Vec<Value> {
    j.lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// A run through the library, with the stats the CLI summarises.
pub struct LibRun {
    pub summary: Vec<String>,
    pub json: Vec<Value>,
    pub stats: RunStats,
    pub end: End,
}

pub fn run_lib(file: &Path, cfg: Config) -> LibRun {
    let mut src = Source::open_file(file).unwrap();
    let mut lines = Vec::new();
    let mut objs = Vec::new();
    let (stats, end) = pipeline::run(&mut src, cfg, &mut |r| {
        lines.push(summary::line(r));
        let mut buf = Vec::new();
        json::write_record(&mut buf, r);
        objs.push(serde_json::from_slice(&buf).unwrap());
        ControlFlow::Continue(())
    });
    LibRun {
        summary: lines,
        json: objs,
        stats,
        end,
    }
}

// ---- Kafka's schemas from the jars ---------------------------------------

/// Says a jar-dependent test is skipped; under `CI=true` the jars are required, so it fails.
pub fn skip(why: &str) {
    let msg = format!(
        "SKIP: {why}; get one with `mvn dependency:get -Dartifact=org.apache.kafka:kafka-clients:4.4.0`"
    );
    assert!(
        std::env::var("CI").as_deref() != Ok("true"),
        "{msg} (CI=true: the jars are required)"
    );
    eprintln!("\n*** {msg} ***\n");
}

/// Installs the jars' schemas once for this test binary (secrets redacted, as by default);
/// false when no jar is found.
pub fn loaded() -> bool {
    static LOADED: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *LOADED.get_or_init(|| {
        let l = kwire::codec::Search::from_env(Vec::new()).load();
        if l.schemas.sources().is_empty() {
            return false;
        }
        let codec = kwire::codec::Codec::new(l.schemas, kwire::codec::DecodeOptions::default());
        kwire::codec::install(codec).is_ok()
    })
}
