//! Hostile captures, built here at small sizes, and the bounded behaviour
//! kwire owes each (docs/limits.md). `scripts/adversarial-rss.sh` runs the
//! full-size versions and measures memory and time.

mod common;

use common::*;
use kwire::capture::Packet;
use kwire::capture::writer::{PcapWriter, PcapngWriter, TsPrecision};
use kwire::pipeline::{Config, End, Pipeline, RunStats};
use kwire::synth::{Flags, Flow, Link};
use kwire::view::{json, summary};
use serde_json::Value;
use std::ops::ControlFlow;

const ACK: Flags = Flags {
    syn: false,
    ack: true,
    fin: false,
    rst: false,
};

/// What a run through the library printed and counted.
struct Run {
    summary: Vec<String>,
    json: Vec<Value>,
    stats: RunStats,
}

/// Feeds Ethernet packets straight into a `Pipeline`, no file in between.
fn run_packets(packets: &[(i64, Vec<u8>)], cfg: Config) -> Run {
    let mut pipe = Pipeline::new(cfg);
    let mut summary_lines = Vec::new();
    let mut objs = Vec::new();
    let mut sink = |r: &kwire::dissect::Record<'_>| {
        summary_lines.push(summary::line(r));
        let mut buf = Vec::new();
        json::write_record(&mut buf, r);
        objs.push(serde_json::from_slice(&buf).unwrap());
        ControlFlow::Continue(())
    };
    for (i, (ts, data)) in packets.iter().enumerate() {
        let p = Packet {
            ts_sec: ts / 1_000_000_000,
            ts_nsec: (ts % 1_000_000_000) as u32,
            linktype: Link::Ethernet.linktype(),
            caplen: data.len() as u32,
            origlen: data.len() as u32,
            data,
            ..Packet::default()
        };
        pipe.packet(i as u64 + 1, &p, &mut sink);
    }
    let stats = pipe.finish(&mut sink);
    Run {
        summary: summary_lines,
        json: objs,
        stats,
    }
}

fn run_flow(f: &Flow, cfg: Config) -> Run {
    run_packets(f.packets(), cfg)
}

fn warnings(v: &Value) -> Vec<String> {
    v["warnings"]
        .as_array()
        .map(|w| w.iter().map(|s| s.as_str().unwrap().to_string()).collect())
        .unwrap_or_default()
}

// ---- size prefixes ------------------------------------------------------

/// A size prefix, some bytes, then a real exchange.
fn bad_prefix_then_exchange(prefix: i32) -> Flow {
    let mut f = flow();
    let mut junk = prefix.to_be_bytes().to_vec();
    junk.extend_from_slice(&[b'x'; 100]);
    f.syn_handshake()
        .client_send(&junk)
        .client_send(&fc_req(3, 1, "app", "g"))
        .server_send(&fc_resp(3, 1, "g", 2, "b2", 9092, 0))
        .fin();
    f
}

#[test]
fn size_prefix_of_2gb_or_minus_one_is_lost_framing() {
    for prefix in [i32::MAX, -1] {
        let r = run_flow(&bad_prefix_then_exchange(prefix), Config::default());
        let k = &r.stats.kafka;
        assert_eq!((k.desyncs, k.resyncs), (1, 1), "prefix {prefix}");
        assert_eq!(k.skipped_bytes, 104, "prefix {prefix}");
        // Nothing was allocated for the claimed size.
        assert!(k.peak_buffered < 1024, "{}", k.peak_buffered);
        assert_eq!(r.json.len(), 2, "{:?}", r.summary);
        assert_eq!(r.json[0]["correlation_id"], 1);
        assert_eq!(r.json[1]["request_frame"], r.json[0]["frame"]);
        assert!(r.json.iter().all(|j| j["error"].is_null()));
        assert_eq!(
            warnings(&r.json[0]),
            [
                format!("size prefix {prefix} makes no sense here; framing was lost"),
                "resynchronised after skipping 104 bytes of no recognisable frame".to_string()
            ]
        );
    }
}

#[test]
fn size_prefix_of_2gb_taken_as_plausible_keeps_only_a_head() {
    // With --max-frame 4G the 2 GB prefix of a plausible request header is believed:
    // only 64 KiB of it is ever held. (Without a header after it, the first frame
    // after the handshake is not taken as Kafka at all: a desync, as above.)
    let mut cfg = Config::default();
    cfg.kafka.max_frame = u32::MAX;
    let mut junk = i32::MAX.to_be_bytes().to_vec();
    junk.extend_from_slice(&[0, 10, 0, 3, 0, 0, 0, 0, 0, 3, b'a', b'p', b'p']);
    junk.resize(104, b'x');
    let mut f = flow();
    f.syn_handshake()
        .client_send(&junk)
        .client_send(&fc_req(3, 1, "app", "g"))
        .server_send(&fc_resp(3, 1, "g", 2, "b2", 9092, 0))
        .fin();
    let r = run_flow(&f, cfg);
    let k = &r.stats.kafka;
    // It is reported, at the end, as cut where the capture ended.
    assert_eq!((k.oversized_frames, k.cut_frames, k.desyncs), (1, 1, 0));
    assert!(k.peak_buffered <= 64 << 10, "{}", k.peak_buffered);
    // The request that followed is inside the claimed 2 GB; the response is unpaired.
    assert_eq!(r.json.len(), 2, "{:?}", r.summary);
    assert_eq!(r.json[0]["kind"], "response");
    assert_eq!(r.json[0]["version_source"], "inferred");
    assert_eq!(k.unpaired_responses, 1);
    assert_eq!(r.json[1]["size"], 2_147_483_651u64);
    assert_eq!(
        warnings(&r.json[1]),
        ["the connection ended 104 bytes into this 2147483651-byte message"]
    );
}

#[test]
fn compact_array_claiming_2_pow_31_elements_in_20_bytes() {
    // FindCoordinator v6: header v2, KeyType, CoordinatorKeys = uvarint 2^31 + 1, 20 bytes.
    let mut b = Vec::new();
    b.extend_from_slice(&10i16.to_be_bytes());
    b.extend_from_slice(&6i16.to_be_bytes());
    b.extend_from_slice(&7i32.to_be_bytes());
    b.extend_from_slice(&[0, 1, b'c', 0, 0]);
    b.extend_from_slice(&[0x81, 0x80, 0x80, 0x80, 0x08]);
    b.extend_from_slice(&[0u8; 20]);
    let mut frame = (b.len() as i32).to_be_bytes().to_vec();
    frame.extend_from_slice(&b);
    let mut f = flow();
    f.syn_handshake().client_send(&frame).fin();
    let r = run_flow(&f, Config::default());
    assert_eq!(r.json.len(), 1);
    assert_eq!(r.json[0]["body"], Value::Null);
    assert_eq!(
        r.json[0]["error"],
        "array claims 2147483648 elements but only 20 bytes remain at CoordinatorKeys (offset 0x0011)"
    );
    assert_eq!(r.stats.malformed, 1);
}

// ---- many connections, holes, long streams ------------------------------

/// `n` connections on the Kafka port, each sending the first 100 bytes of a 1000-byte request.
fn partial_messages(n: u16) -> Vec<(i64, Vec<u8>)> {
    let req = raw_req(0, 9, 1, "p", &"00".repeat(1000 - 16));
    assert_eq!(req.len(), 1000);
    let mut all = Vec::new();
    for i in 0..n {
        let client = format!("10.1.{}.{}:{}", i / 250, i % 250 + 1, 20000 + i);
        let mut f = flow_between(&client, SERVER).with_start(i64::from(i) * 1000, 1);
        f.syn_handshake().client_send(&req[..100]);
        all.extend(f.into_packets());
    }
    all.sort_by_key(|p| p.0);
    all
}

#[test]
fn many_connections_each_holding_a_partial_message() {
    let n = 2000;
    let packets = partial_messages(n);
    let r = run_packets(&packets, Config::default());
    let k = &r.stats.kafka;
    assert_eq!(k.peak_buffered, usize::from(n) * 100);
    assert_eq!(k.cut_frames, u64::from(n));
    assert_eq!(r.json.len(), usize::from(n));
    assert_eq!(
        warnings(&r.json[0]),
        ["the connection ended 100 bytes into this 1000-byte message"]
    );

    // The overall cap: connections past it give up what they hold, and say so.
    let mut cfg = Config::default();
    cfg.kafka.max_buffered_total = 50_000;
    let r = run_packets(&packets, cfg);
    let k = &r.stats.kafka;
    assert!(k.peak_buffered <= 50_000, "{}", k.peak_buffered);
    assert_eq!(k.shed_bytes, (u64::from(n) - 500) * 100);
    assert_eq!(k.cut_frames, 500);

    // The connection cap: the least recently used are flushed and forgotten.
    let mut cfg = Config::default();
    cfg.tcp.max_connections = 100;
    let r = run_packets(&packets, cfg);
    assert_eq!(r.stats.tcp.evicted, u64::from(n) - 100);
    assert_eq!(r.stats.kafka.cut_frames, u64::from(n));
}

#[test]
fn out_of_order_segments_that_never_fill_the_hole() {
    let mut f = flow();
    f.syn_handshake().client_send(&fc_req(3, 1, "app", "g"));
    let (c, s) = f.next_seqs();
    // 1000 bytes are never sent; 2000 segments of 1000 bytes follow the hole.
    for i in 0..2000u32 {
        f.push_raw(true, c + 1000 + i * 1000, s, ACK, &[b'A'; 1000]);
    }
    for (per_dir, window) in [(64 << 10, 8 << 20), (16 << 20, 32 << 10)] {
        let mut cfg = Config::default();
        cfg.tcp.max_buffered_per_direction = per_dir;
        cfg.tcp.gap_window = window;
        let r = run_flow(&f, cfg);
        let t = &r.stats.tcp;
        // A segment is placed before the limit is enforced, so one may overshoot it.
        assert!(
            t.peak_buffered <= per_dir.min(window) + 1000,
            "{} with {per_dir}/{window}",
            t.peak_buffered
        );
        assert_eq!((t.gaps, t.gap_bytes), (1, 1000));
        assert_eq!(t.delivered_bytes, 22 + 2_000_000);
        // The request before the hole is decoded; the rest is junk to Kafka.
        assert_eq!(r.json.len(), 1);
        assert_eq!(r.stats.kafka.skipped_bytes, 2_000_000);
    }
}

#[test]
fn long_direction_without_a_frame_boundary() {
    let mut f = flow().with_mss(16 << 10);
    f.syn_handshake()
        .client_send(&vec![b'A'; 4 << 20])
        .server_send(&vec![b'B'; 4 << 20])
        .fin();
    let r = run_flow(&f, Config::default());
    let k = &r.stats.kafka;
    assert_eq!(r.json.len(), 0, "{:?}", r.summary);
    assert_eq!(k.desyncs, 2);
    assert_eq!(k.skipped_bytes, 8 << 20);
    // Only a header's worth is kept while looking for a boundary.
    assert!(k.peak_buffered < 1024, "{}", k.peak_buffered);
}

#[test]
fn flood_of_never_answered_requests() {
    let mut f = flow();
    f.syn_handshake();
    for corr in 0..5000 {
        f.client_send(&vote_req(2, corr, "c", false));
    }
    f.fin();
    let mut cfg = Config::default();
    cfg.kafka.max_pending_per_connection = 64;
    let r = run_flow(&f, cfg);
    let k = &r.stats.kafka;
    assert_eq!(k.requests, 5000);
    assert_eq!(k.pending_evicted, 5000 - 64);
    assert_eq!(k.unanswered.values().sum::<u64>(), 5000);
    assert_eq!(k.unanswered_packets.len(), 20);
    assert_eq!(
        k.unanswered_packets[0], 4,
        "the first request, after the handshake"
    );
}

// ---- capture files ------------------------------------------------------

/// A FindCoordinator exchange, its request split over 2 segments.
fn small_exchange() -> Flow {
    let mut f = flow().with_mss(20);
    f.syn_handshake().client_send(&fc_req(3, 1, "app", "g"));
    let mut f = f.with_mss(1460);
    f.server_send(&fc_resp(3, 1, "g", 2, "b2", 9092, 0)).fin();
    f
}

#[test]
fn records_claiming_more_than_they_hold() {
    let f = small_exchange();
    let pkts = f.packets();
    // The snaplen cut the first request segment to 60 bytes: headers and 6 of its 20 payload bytes.
    let file = tempfile::NamedTempFile::new().unwrap();
    let mut w = PcapWriter::new(file.as_file(), 1, TsPrecision::Micro, 65535).unwrap();
    for (i, (ts, data)) in pkts.iter().enumerate() {
        let caplen = if i == 3 { 60 } else { data.len() };
        w.write_packet_truncated(*ts, data, caplen).unwrap();
    }
    let r = run_lib(file.path(), Config::default());
    assert!(matches!(r.end, End::Complete));
    assert_eq!(r.stats.net.truncated, 1);
    assert_eq!(r.stats.tcp.truncated_bytes, 14);
    assert_eq!(r.json.len(), 2, "{:?}", r.summary);
    // The request is reported cut, its head decoded as far as it goes; the response pairs by inference.
    assert_eq!(r.json[0]["size"], 22);
    assert_eq!(
        r.json[0]["error"],
        "truncated: needs 2 bytes, 0 left at request_api_version (offset 0x0006)"
    );
    assert_eq!(
        warnings(&r.json[0]),
        ["14 bytes of this message were not captured"]
    );
    assert_eq!(r.json[1]["version_source"], "inferred");
    assert_eq!(r.json[1]["error"], Value::Null);

    // An IPv4 total length claiming 500 bytes more than the packet holds, with no snaplen cut.
    let mut lying: Vec<(i64, Vec<u8>)> = pkts.to_vec();
    let ip = &mut lying[3].1[14..];
    let total = u16::from_be_bytes([ip[2], ip[3]]) + 500;
    ip[2..4].copy_from_slice(&total.to_be_bytes());
    let r = run_packets(&lying, Config::default());
    // Counted as malformed, and its claimed bytes as lost; the rest of the capture decodes.
    assert_eq!((r.stats.net.malformed, r.stats.net.truncated), (1, 0));
    assert_eq!(r.stats.tcp.gap_bytes, 500);
    assert_eq!(r.json.len(), 1, "{:?}", r.summary);
    assert_eq!(r.json[0]["kind"], "response");
    assert_eq!(r.json[0]["error"], Value::Null);

    // A record header claiming more bytes than the file has left: the capture is damaged.
    let whole = std::fs::read(pcap(&[&f]).path()).unwrap();
    let mut bad = whole.clone();
    let at = 24 + 16 + pkts[0].1.len();
    bad[at + 8..at + 12].copy_from_slice(&60_000u32.to_le_bytes());
    let cut = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(cut.path(), &bad).unwrap();
    let out = kwire(&["read", cut.path().to_str().unwrap(), "-q"]);
    assert_eq!(out.code, 2, "{out:?}");
    // A record header claiming more than any snaplen allows.
    bad[at + 8..at + 12].copy_from_slice(&u32::MAX.to_le_bytes());
    std::fs::write(cut.path(), &bad).unwrap();
    let out = kwire(&["read", cut.path().to_str().unwrap(), "-q"]);
    assert_eq!(out.code, 2, "{out:?}");
}

#[test]
fn pcapng_unknown_blocks_are_passed_over() {
    let f = small_exchange();
    let file = tempfile::NamedTempFile::new().unwrap();
    let mut w = PcapngWriter::new(file.as_file()).unwrap();
    let iface = w.add_interface(1, 65535, TsPrecision::Micro).unwrap();
    for (i, (ts, data)) in f.packets().iter().enumerate() {
        // Unknown, local-use and custom block types, one empty, one large.
        let (ty, body) = match i % 4 {
            0 => (0x0BAD_0001u32, vec![]),
            1 => (0x8000_0001, vec![0xAB; 4000]),
            2 => (0x0000_0BAD, b"custom: PEN 0".to_vec()),
            _ => (0x4000_0BAD, vec![1, 2, 3]),
        };
        w.write_custom_block(ty, &body).unwrap();
        w.write_packet(iface, *ts, data).unwrap();
    }
    let ng = run_lib(file.path(), Config::default());
    let plain = run_lib(pcap(&[&f]).path(), Config::default());
    assert!(matches!(ng.end, End::Complete));
    assert_eq!(ng.summary, plain.summary);
    assert_eq!(ng.summary.len(), 2);
}

#[test]
fn capture_cut_at_every_byte_offset() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/captures/synthetic/stories/prevote-rejected.pcap"
    );
    let whole = std::fs::read(path).unwrap();
    // Record boundaries, from the classic pcap layout (24-byte header, 16-byte record headers).
    let mut bounds = vec![24usize];
    while *bounds.last().unwrap() < whole.len() {
        let at = *bounds.last().unwrap();
        let caplen = u32::from_le_bytes(whole[at + 8..at + 12].try_into().unwrap()) as usize;
        bounds.push(at + 16 + caplen);
    }
    assert_eq!(*bounds.last().unwrap(), whole.len());
    let full = run_lib(std::path::Path::new(path), Config::default());
    let file = tempfile::NamedTempFile::new().unwrap();
    for cut in 0..=whole.len() {
        std::fs::write(file.path(), &whole[..cut]).unwrap();
        let Ok(mut src) = kwire::capture::Source::open_file(file.path()) else {
            assert!(cut < 24, "a whole file header at {cut} did not open");
            continue;
        };
        assert!(cut >= 24, "opened a {cut}-byte file");
        let (stats, end) = kwire::pipeline::run(&mut src, Config::default(), &mut |r| {
            let mut buf = Vec::new();
            json::write_record(&mut buf, r);
            serde_json::from_slice::<Value>(&buf).unwrap();
            ControlFlow::Continue(())
        });
        let complete = bounds.iter().filter(|&&b| b <= cut).count() as u64 - 1;
        assert_eq!(stats.packets, complete, "cut at {cut}");
        match end {
            End::Complete => assert!(bounds.contains(&cut), "cut at {cut} read as complete"),
            End::Damaged(e) => {
                assert!(!bounds.contains(&cut), "cut at {cut}: {e}");
                assert_eq!(
                    e.to_string(),
                    format!("capture truncated at packet {}", complete + 1)
                );
            }
        }
        if cut == whole.len() {
            assert_eq!(stats.packets, full.stats.packets);
        }
    }
    // The binary's exit status, at a sample of offsets.
    for cut in (24..whole.len()).step_by(97) {
        std::fs::write(file.path(), &whole[..cut]).unwrap();
        let out = kwire(&["read", file.path().to_str().unwrap(), "-q"]);
        let want = if bounds.contains(&cut) { 0 } else { 2 };
        assert_eq!(out.code, want, "cut at {cut}: {out:?}");
    }
}
