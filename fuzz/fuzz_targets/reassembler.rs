//! Structure-aware TCP: segments for a few connections with any sequence
//! numbers (near the stream or anywhere, wrapping), flags, overlaps and
//! payload-length lies, under small limits, through `tcp::Reassembler` and
//! then `kafka::Sessions`. Checks the documented memory bounds after every
//! segment.
#![no_main]

use arbitrary::Arbitrary;
use kwire::kafka::{KafkaConfig, Sessions};
use kwire::net::TcpSegment;
use kwire::tcp::{Reassembler, TcpConfig};
use libfuzzer_sys::fuzz_target;
use std::net::SocketAddr;

#[derive(Arbitrary, Debug)]
struct Input {
    /// Limits, each scaled into a small range so they are reached.
    max_buf: u16,
    max_buf_total: u16,
    max_conns: u8,
    gap_window: u16,
    idle: Option<u16>,
    overlap: u16,
    max_frame: u16,
    max_pending: u8,
    detect: bool,
    frames_total: u16,
    /// Initial sequence numbers of each side, so wraparound is near.
    isn: [u32; 2],
    segs: Vec<Seg>,
}

#[derive(Arbitrary, Debug)]
struct Seg {
    /// Which of 4 connections (two on a Kafka port, two not).
    conn: u8,
    from_client: bool,
    seq: Seq,
    ack: Seq,
    syn: bool,
    fin: bool,
    rst: bool,
    ack_flag: bool,
    /// Sequence numbers the segment claims beyond the payload captured.
    cut: Option<u16>,
    /// Nanoseconds since the previous segment.
    dt: u32,
    payload: Payload,
}

#[derive(Arbitrary, Debug)]
enum Seq {
    /// Relative to the next sequence number this side would send in order.
    Near(i16),
    /// Anywhere.
    Abs(u32),
}

#[derive(Arbitrary, Debug)]
enum Payload {
    Bytes(Vec<u8>),
    /// A Kafka-looking frame: size prefix, API key, version, correlation id, filler.
    Frame {
        size: i32,
        key: i16,
        version: i16,
        corr: i32,
        fill: u8,
        len: u8,
    },
    /// A run of one byte, for long streams cheaply.
    Run(u8, u16),
    /// A real Vote or FindCoordinator request or response (by index into
    /// [`known`]), or a slice of one, so pairing and decoding are reached.
    Known {
        which: u8,
        from: u16,
        to: u16,
    },
}

/// Every version of a Vote and FindCoordinator exchange, requests and
/// responses, each pair with its own correlation id.
fn known() -> &'static [Vec<u8>] {
    use kwire::synth::kafka::*;
    static FRAMES: std::sync::OnceLock<Vec<Vec<u8>>> = std::sync::OnceLock::new();
    FRAMES.get_or_init(|| {
        let vote = Vote {
            cluster_id: "cluster".into(),
            candidate: 1,
            voter: 2,
            epoch: 3,
            last_offset: 40,
            last_epoch: 2,
            pre_vote: true,
            granted: true,
            leader: 1,
            error: 0,
            leader_endpoint: Some(("ctrl-1".into(), 9093)),
        };
        let c = Coordinator {
            key: "group".into(),
            node: 1,
            host: "broker-1".into(),
            port: 9092,
            error: 0,
            message: None,
        };
        let mut out = Vec::new();
        for v in 0..=2 {
            out.push(vote_request(v, i32::from(v), "ctrl-1", &vote));
            out.push(vote_response(v, i32::from(v), &vote));
        }
        for v in 0..=6 {
            let corr = 10 + i32::from(v);
            out.push(find_coordinator_request(
                v,
                corr,
                "app",
                0,
                &["group", "g2"],
            ));
            out.push(find_coordinator_response(v, corr, std::slice::from_ref(&c)));
        }
        out
    })
}

impl Payload {
    fn bytes(&self) -> Vec<u8> {
        match self {
            Payload::Bytes(b) => b.clone(),
            Payload::Frame {
                size,
                key,
                version,
                corr,
                fill,
                len,
            } => {
                let mut b = size.to_be_bytes().to_vec();
                b.extend_from_slice(&key.to_be_bytes());
                b.extend_from_slice(&version.to_be_bytes());
                b.extend_from_slice(&corr.to_be_bytes());
                b.resize(b.len() + usize::from(*len), *fill);
                b
            }
            Payload::Run(byte, n) => vec![*byte; usize::from(*n)],
            Payload::Known { which, from, to } => {
                let all = known();
                let f = &all[usize::from(*which) % all.len()];
                let from = usize::from(*from).min(f.len());
                // 0 means to the end of the frame.
                let to = match usize::from(*to) {
                    0 => f.len(),
                    t => t.clamp(from, f.len()),
                };
                f[from..to].to_vec()
            }
        }
    }
}

const CLIENTS: [&str; 4] = [
    "10.0.0.1:50000",
    "10.0.0.1:50001",
    "[fd00::1]:40000",
    "10.0.0.3:50002",
];
const SERVERS: [&str; 4] = [
    "10.0.0.2:9092",
    "10.0.0.2:9093",
    "[fd00::2]:7777",
    "10.0.0.4:8080",
];

fuzz_target!(|input: Input| {
    let tcp = TcpConfig {
        max_buffered_per_direction: usize::from(input.max_buf % 8192) + 1,
        max_buffered_total: usize::from(input.max_buf_total % 16384) + 1,
        max_connections: usize::from(input.max_conns % 6) + 1,
        gap_window: usize::from(input.gap_window % 8192),
        idle_timeout_ns: input.idle.map(|t| u64::from(t) * 1000),
        overlap_history: usize::from(input.overlap % 2048),
    };
    let kafka = KafkaConfig {
        detect: input.detect,
        max_frame: u32::from(input.max_frame) + 1,
        max_buffered_per_direction: usize::from(input.max_buf % 8192) + 1,
        oversized_head: 64,
        max_pending_per_connection: usize::from(input.max_pending % 16) + 1,
        detect_window: 256,
        max_buffered_total: usize::from(input.frames_total % 16384) + 1,
        ..KafkaConfig::default()
    };
    let mut reasm = Reassembler::new(tcp.clone());
    let mut sessions = Sessions::new(kafka);
    let clients: Vec<SocketAddr> = CLIENTS.iter().map(|s| s.parse().unwrap()).collect();
    let servers: Vec<SocketAddr> = SERVERS.iter().map(|s| s.parse().unwrap()).collect();
    // Next in-order sequence number per connection and side.
    let mut next = [[input.isn[0], input.isn[1]]; 4];
    let mut ts: i64 = 1_000_000_000;
    let mut sink = |f: &kwire::kafka::KafkaMessage<'_>| {
        let _ = kwire::dissect::dissect(f, 0);
    };
    for (i, s) in input.segs.iter().enumerate() {
        let c = usize::from(s.conn % 4);
        let side = usize::from(!s.from_client);
        let (src, dst) = if s.from_client {
            (clients[c], servers[c])
        } else {
            (servers[c], clients[c])
        };
        let at = |q: &Seq, base: u32| match *q {
            Seq::Near(d) => base.wrapping_add_signed(i32::from(d)),
            Seq::Abs(a) => a,
        };
        let seq = at(&s.seq, next[c][side]);
        let ack = at(&s.ack, next[c][1 - side]);
        let payload = s.payload.bytes();
        let payload_len = payload.len() as u32 + u32::from(s.cut.unwrap_or(0));
        let seg = TcpSegment {
            src,
            dst,
            vlan: Default::default(),
            seq,
            ack,
            syn: s.syn,
            fin: s.fin,
            rst: s.rst,
            ack_flag: s.ack_flag,
            payload: &payload,
            payload_truncated: s.cut.is_some_and(|n| n > 0),
            payload_len,
        };
        next[c][side] = seq
            .wrapping_add(payload_len)
            .wrapping_add(u32::from(s.syn) + u32::from(s.fin));
        ts = ts.saturating_add(i64::from(s.dt));
        let number = i as u64 + 1;
        reasm.push(number, ts, &seg, &mut |ev| {
            sessions.on_event(number, ts, ev, &mut sink);
        });
        assert!(
            reasm.buffered_bytes() <= tcp.max_buffered_total,
            "{} out-of-order bytes held, limit {}",
            reasm.buffered_bytes(),
            tcp.max_buffered_total
        );
        assert!(reasm.open_connections() <= tcp.max_connections);
    }
    let number = input.segs.len() as u64;
    reasm.finish(&mut |ev| sessions.on_event(number, ts, ev, &mut sink));
    sessions.finish(number, ts, &mut sink);
});
