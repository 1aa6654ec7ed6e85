//! The benchmark captures, generated: shared by `examples/gen_capture.rs`,
//! `scripts/bench-vs-tshark.sh` and `benches/pipeline.rs`, so that every
//! benchmark measures the same traffic.
//!
//! - [`mixed`]: Vote and FindCoordinator at every version, on many connections,
//!   with non-ASCII (and a few escaped) strings, one connection in eight cut into
//!   40-byte segments, and every 10th request of the others split over two.
//! - [`records`]: Produce requests and Fetch responses carrying record batches
//!   in every codec, as real clients and brokers send them (needs a codec with
//!   Kafka's Produce and Fetch schemas, from the kafka-clients jars).

use super::kafka::{
    Coordinator, Rng, Vote, find_coordinator_request, find_coordinator_response, vote_request,
    vote_response,
};
use super::{Flow, Link};
use crate::codec::{Codec, Kind};
use crate::records::Compression;
use crate::records::encode::{BatchSpec, RecordSpec};
use serde_json::json;
use std::io;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};

/// How much traffic, and its shape.
#[derive(Clone, Copy, Debug)]
pub struct Spec {
    /// Requests and responses together.
    pub messages: u64,
    pub connections: usize,
    pub seed: u64,
}

/// Where packets go: (timestamp in ns, Ethernet frame).
pub type Sink<'s> = dyn FnMut(i64, &[u8]) -> io::Result<()> + 's;

/// The link type of every generated packet.
pub const LINK: Link = Link::Ethernet;

const START_NS: i64 = 1_764_441_600_000_000_000;

/// Connections, opened in turn: client `10.1.x.y`, server `10.0.0.1-3`.
fn flows(n: usize, port: impl Fn(usize) -> u16, mss: impl Fn(usize) -> usize) -> Vec<Flow> {
    (0..n)
        .map(|i| {
            let client = SocketAddr::new(
                IpAddr::V4(Ipv4Addr::new(10, 1, (i / 250) as u8, (i % 250) as u8 + 1)),
                40000 + (i % 20000) as u16,
            );
            let server = SocketAddr::new(
                IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1 + (i % 3) as u8)),
                port(i),
            );
            Flow::new(client, server).with_mss(mss(i))
        })
        .collect()
}

/// Writes what the flow holds, 5 µs apart.
fn drain(flow: &mut Flow, ts: &mut i64, out: &mut Sink<'_>) -> io::Result<()> {
    for (_, p) in flow.drain_packets() {
        *ts += 5_000;
        out(*ts, &p)?;
    }
    Ok(())
}

/// A request as a client's writes may cut it: in two segments when `split`.
fn send_request(flow: &mut Flow, frame: &[u8], split: bool) {
    if split && frame.len() > 1 {
        let (a, b) = frame.split_at(frame.len() / 2);
        flow.client_send(a);
        flow.client_send(b);
    } else {
        flow.client_send(frame);
    }
}

/// Group names as applications choose them: many are not ASCII.
const GROUPS: [&str; 8] = [
    "orders-app",
    "zahlungsdienst-ä",
    "commandes-été",
    "заказы",
    "注文サービス",
    "δοκιμή-λ",
    "billing\tv2",
    "audit \"prod\"",
];

/// Vote and FindCoordinator at every version (see the module's note). Returns the
/// number of messages written.
pub fn mixed(spec: Spec, out: &mut Sink<'_>) -> io::Result<u64> {
    let mut rng = Rng::new(spec.seed);
    let n = spec.connections.max(1);
    // Each connection carries one kind of traffic, as real ones do; one in eight
    // cuts its messages into small segments.
    let vote = |i: usize| i % 4 == 0;
    let mut flows = flows(
        n,
        |i| if vote(i) { 9093 } else { 9092 },
        |i| if i % 8 == 7 { 40 } else { 1460 },
    );
    let mut ts = START_NS;
    for f in flows.iter_mut() {
        f.syn_handshake();
        drain(f, &mut ts, out)?;
    }
    let pairs = spec.messages / 2;
    for p in 0..pairs {
        let i = rng.below(n as u64) as usize;
        let Some(flow) = flows.get_mut(i) else {
            continue;
        };
        let corr = p as i32;
        let split = p % 10 == 9;
        if vote(i) {
            let v = rng.below(3) as i16;
            let cand = 1 + rng.below(3) as i32;
            let x = Vote {
                cluster_id: "Wq2jvLJQR5eQ7kmDX0hSTA".into(),
                candidate: cand,
                voter: 1 + (cand % 3),
                epoch: 1 + (p / 1000) as i32,
                last_offset: p as i64,
                last_epoch: (p / 1000) as i32,
                pre_vote: rng.below(2) == 0,
                granted: rng.below(3) != 0,
                leader: -1,
                error: 0,
                leader_endpoint: (rng.below(4) == 0)
                    .then(|| (format!("controller-{cand}.kafka.local"), 9093)),
            };
            send_request(flow, &vote_request(v, corr, "raft-client-ü", &x), split);
            flow.server_send(&vote_response(v, corr, &x));
        } else {
            let v = rng.below(7) as i16;
            let keys: Vec<String> = (0..1 + rng.below(3))
                .map(|_| {
                    let g = GROUPS
                        .get(rng.below(GROUPS.len() as u64) as usize)
                        .copied()
                        .unwrap_or("g");
                    format!("{g}-{}", rng.below(1000))
                })
                .collect();
            let key_refs: Vec<&str> = keys.iter().map(String::as_str).collect();
            let answers: Vec<Coordinator> = keys
                .iter()
                .map(|k| {
                    let node = rng.below(3) as i32;
                    let error = if rng.below(20) == 0 { 16 } else { 0 };
                    Coordinator {
                        key: k.clone(),
                        node,
                        host: format!("broker-{node}.kafka.local"),
                        port: 9092,
                        error,
                        message: (error != 0)
                            .then(|| "This is not the correct coordinator.".into()),
                    }
                })
                .collect();
            let client = if p % 3 == 0 {
                "consumer-Zürich-1"
            } else {
                "consumer-1"
            };
            send_request(
                flow,
                &find_coordinator_request(v, corr, client, 0, &key_refs),
                split,
            );
            flow.server_send(&find_coordinator_response(v, corr, &answers));
        }
        drain(flow, &mut ts, out)?;
    }
    for f in flows.iter_mut() {
        f.fin();
        drain(f, &mut ts, out)?;
    }
    Ok(pairs * 2)
}

const CODECS: [Compression; 5] = [
    Compression::None,
    Compression::Gzip,
    Compression::Snappy,
    Compression::Lz4,
    Compression::Zstd,
];

/// A batch of `count` JSON-ish records, as an application produces them.
fn batch(rng: &mut Rng, base_offset: i64, count: u64, codec: Compression) -> Vec<u8> {
    let records = (0..count)
        .map(|k| {
            let key = format!("customer-{}", rng.below(10_000));
            let value = format!(
                r#"{{"order":{},"customer":"{key}","items":{},"total":{}.{:02},"note":"livraison à domicile"}}"#,
                rng.next_u64() % 1_000_000,
                1 + rng.below(9),
                rng.below(500),
                rng.below(100)
            );
            RecordSpec::new(k as i32, Some(key.as_bytes()), Some(value.as_bytes()))
                .header("trace-id", Some(format!("{:016x}", rng.next_u64()).as_bytes()))
        })
        .collect();
    BatchSpec {
        base_offset,
        compression: codec,
        producer_id: 4000 + rng.below(16) as i64,
        producer_epoch: 0,
        base_sequence: base_offset as i32,
        records,
        ..BatchSpec::default()
    }
    .encode()
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// The topic id Produce v13+ and Fetch v13+ name topics by.
const TOPIC_ID: &str = "5f3a3c2e-8d1b-4c6a-9e2f-0a1b2c3d4e5f";

/// Produce and Fetch exchanges carrying record batches (see the module's note), encoded
/// with `codec` (which must hold Kafka's Produce and Fetch schemas). Returns the number
/// of messages written, or an error saying what is missing.
pub fn records(codec: &Codec, spec: Spec, out: &mut Sink<'_>) -> io::Result<u64> {
    let versions = |key: i16, lo: i16| -> Vec<i16> {
        codec
            .schemas
            .versions(key, Kind::Request)
            .into_iter()
            .filter(|v| *v >= lo)
            .collect()
    };
    // Magic-2 batches: Produce v3+, Fetch v4+.
    let produce_v = versions(0, 3);
    let fetch_v = versions(1, 4);
    if produce_v.is_empty() || fetch_v.is_empty() {
        return Err(io::Error::other(
            "no Produce or Fetch schemas loaded (needs a kafka-clients jar; see --schemas)",
        ));
    }
    let bad = |e: crate::codec::EncodeError| io::Error::other(e.to_string());
    let mut rng = Rng::new(spec.seed);
    let n = spec.connections.max(1);
    let mut flows = flows(n, |_| 9092, |_| 1460);
    let mut ts = START_NS;
    for f in flows.iter_mut() {
        f.syn_handshake();
        drain(f, &mut ts, out)?;
    }
    let topics = ["orders", "payments-eu", "clickstream", "événements"];
    let mut offsets = [0i64; 4 * 3];
    let pairs = spec.messages / 2;
    for p in 0..pairs {
        let i = rng.below(n as u64) as usize;
        let Some(flow) = flows.get_mut(i) else {
            continue;
        };
        let corr = p as i32;
        let t = rng.below(topics.len() as u64) as usize;
        let topic = topics.get(t).copied().unwrap_or("orders");
        let parts = 1 + rng.below(3);
        let compression = CODECS
            .get(rng.below(CODECS.len() as u64) as usize)
            .copied()
            .unwrap_or(Compression::None);
        let mut batches = Vec::new();
        for part in 0..parts {
            let count = 1 + rng.below(20);
            let slot = offsets.get_mut(t * 3 + part as usize);
            let base = slot.as_deref().copied().unwrap_or(0);
            if let Some(s) = slot {
                *s += count as i64;
            }
            batches.push((part, base, hex(&batch(&mut rng, base, count, compression))));
        }
        // Topics by name up to v12, by id from v13.
        let name_or_id = |v: i16, name_key: &str| {
            if v >= 13 {
                json!({"TopicId": TOPIC_ID})
            } else {
                json!({ name_key: topic })
            }
        };
        let with = |mut base: serde_json::Value, extra: serde_json::Value| {
            if let (Some(b), Some(e)) = (base.as_object_mut(), extra.as_object()) {
                b.extend(e.clone());
            }
            base
        };
        if p % 2 == 0 {
            let v = produce_v
                .get(rng.below(produce_v.len() as u64) as usize)
                .copied()
                .unwrap_or(9);
            let data: Vec<_> = batches
                .iter()
                .map(|(part, _, b)| json!({"Index": part, "Records": b}))
                .collect();
            let req = json!({"TransactionalId": null, "Acks": -1, "TimeoutMs": 30000,
                "TopicData": [with(name_or_id(v, "Name"), json!({"PartitionData": data}))]});
            let resp_parts: Vec<_> = batches
                .iter()
                .map(|(part, base, _)| {
                    json!({"Index": part, "ErrorCode": 0, "BaseOffset": base,
                        "LogAppendTimeMs": -1, "LogStartOffset": 0})
                })
                .collect();
            let resp = json!({"Responses": [with(name_or_id(v, "Name"),
                json!({"PartitionResponses": resp_parts}))], "ThrottleTimeMs": 0});
            let q = codec
                .encode_request(0, v, corr, Some("producer-1"), &req)
                .map_err(bad)?;
            let r = codec.encode_response(0, v, corr, &resp).map_err(bad)?;
            send_request(flow, &q, p % 10 == 9);
            flow.server_send(&r);
        } else {
            let v = fetch_v
                .get(rng.below(fetch_v.len() as u64) as usize)
                .copied()
                .unwrap_or(12);
            let req_parts: Vec<_> = batches
                .iter()
                .map(|(part, base, _)| {
                    json!({"Partition": part, "FetchOffset": base, "PartitionMaxBytes": 1_048_576})
                })
                .collect();
            let req = json!({"ReplicaId": -1, "MaxWaitMs": 500, "MinBytes": 1,
                "MaxBytes": 52_428_800, "IsolationLevel": 1, "SessionId": 0, "SessionEpoch": -1,
                "Topics": [with(name_or_id(v, "Topic"), json!({"Partitions": req_parts}))],
                "ForgottenTopicsData": [], "RackId": ""});
            let resp_parts: Vec<_> = batches
                .iter()
                .map(|(part, base, b)| {
                    json!({"PartitionIndex": part, "ErrorCode": 0, "HighWatermark": base + 20,
                        "LastStableOffset": base + 20, "LogStartOffset": 0,
                        "AbortedTransactions": [], "Records": b})
                })
                .collect();
            let resp = json!({"ThrottleTimeMs": 0, "ErrorCode": 0, "SessionId": 0,
                "Responses": [with(name_or_id(v, "Topic"), json!({"Partitions": resp_parts}))]});
            let q = codec
                .encode_request(1, v, corr, Some("consumer-1"), &req)
                .map_err(bad)?;
            let r = codec.encode_response(1, v, corr, &resp).map_err(bad)?;
            send_request(flow, &q, p % 10 == 9);
            flow.server_send(&r);
        }
        drain(flow, &mut ts, out)?;
    }
    for f in flows.iter_mut() {
        f.fin();
        drain(f, &mut ts, out)?;
    }
    Ok(pairs * 2)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capture::Packet;
    use crate::pipeline::{Config, Pipeline};
    use std::ops::ControlFlow;

    #[test]
    fn mixed_decodes_cleanly_in_order() {
        let mut packets = Vec::new();
        let spec = Spec {
            messages: 2_000,
            connections: 16,
            seed: 3,
        };
        let n = mixed(spec, &mut |ts, p| {
            packets.push((ts, p.to_vec()));
            Ok(())
        })
        .unwrap();
        assert_eq!(n, 2_000);
        let mut pipe = Pipeline::new(Config::default());
        let (mut seen, mut bad, mut non_ascii) = (0, 0, 0);
        for (k, (ts, data)) in packets.iter().enumerate() {
            let p = Packet {
                ts_sec: ts.div_euclid(1_000_000_000),
                ts_nsec: ts.rem_euclid(1_000_000_000) as u32,
                linktype: LINK.linktype(),
                caplen: data.len() as u32,
                origlen: data.len() as u32,
                data,
                interface: 0,
                file: 0,
            };
            pipe.packet(k as u64 + 1, &p, &mut |r| {
                seen += 1;
                bad += u32::from(r.msg.error.is_some() || r.has_warnings());
                non_ascii += u32::from(!r.data.is_ascii());
                ControlFlow::Continue(())
            });
        }
        pipe.finish(&mut |_| ControlFlow::Continue(()));
        assert_eq!((seen, bad), (2_000, 0));
        assert!(non_ascii > 100, "{non_ascii}");
    }
}
