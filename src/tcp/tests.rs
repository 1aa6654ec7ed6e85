#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use super::*;
use crate::net::{self, NetStats};
use crate::synth::{Flags, Flow, Link};
use proptest::prelude::*;
use std::collections::HashMap;

/// Owned copy of an event, for assertions.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Ev {
    Opened(u64, SocketAddr, SocketAddr, bool),
    Data(u64, Dir, u64, Vec<u8>),
    Gap(u64, Dir, u64),
    Conflict(u64, Dir, u64, u64),
    Closed(u64, CloseReason),
}

/// Collects events and checks the stream invariants as they arrive: data
/// and gaps of each direction are contiguous, connections open before use.
#[derive(Default)]
struct Sink {
    evs: Vec<Ev>,
    /// Per data event: conn, dir, offset, length, frame and time it carries.
    stamps: Vec<(u64, Dir, u64, usize, u64, i64)>,
    next: HashMap<(u64, Dir), u64>,
    open: HashMap<u64, bool>,
}

impl Sink {
    fn take(&mut self, e: StreamEvent<'_>) {
        let ev = match e {
            StreamEvent::Opened {
                conn,
                a,
                b,
                syn_seen,
                ..
            } => {
                assert!(
                    self.open.insert(conn.0, true).is_none(),
                    "reopened {conn:?}"
                );
                Ev::Opened(conn.0, a, b, syn_seen)
            }
            StreamEvent::Data {
                conn,
                dir,
                data,
                stream_offset,
                packet: frame,
                ts_ns,
                ..
            } => {
                assert!(!data.is_empty(), "empty data event");
                self.stamps
                    .push((conn.0, dir, stream_offset, data.len(), frame, ts_ns));
                let next = self.next.entry((conn.0, dir)).or_default();
                assert_eq!(stream_offset, *next, "data not contiguous");
                *next += data.len() as u64;
                Ev::Data(conn.0, dir, stream_offset, data.to_vec())
            }
            StreamEvent::Gap { conn, dir, len } => {
                assert!(len > 0);
                *self.next.entry((conn.0, dir)).or_default() += len;
                Ev::Gap(conn.0, dir, len)
            }
            StreamEvent::Conflict {
                conn,
                dir,
                stream_offset,
                len,
            } => Ev::Conflict(conn.0, dir, stream_offset, len),
            StreamEvent::Closed { conn, reason } => {
                assert_eq!(
                    self.open.insert(conn.0, false),
                    Some(true),
                    "close of non-open {conn:?}"
                );
                Ev::Closed(conn.0, reason)
            }
        };
        assert!(
            !matches!(ev, Ev::Data(c, ..) | Ev::Gap(c, ..) | Ev::Conflict(c, ..) if self.open.get(&c) != Some(&true)),
            "event for a connection that is not open: {ev:?}"
        );
        self.evs.push(ev);
    }

    /// Bytes of one direction, gaps shown as `len` bytes of '?'.
    fn stream(&self, conn: u64, dir: Dir) -> Vec<u8> {
        let mut out = Vec::new();
        for e in &self.evs {
            match e {
                Ev::Data(c, d, _, b) if *c == conn && *d == dir => out.extend_from_slice(b),
                Ev::Gap(c, d, n) if *c == conn && *d == dir => {
                    out.extend(std::iter::repeat_n(b'?', *n as usize))
                }
                _ => {}
            }
        }
        out
    }

    fn gaps(&self) -> Vec<u64> {
        self.evs
            .iter()
            .filter_map(|e| {
                if let Ev::Gap(_, _, n) = e {
                    Some(*n)
                } else {
                    None
                }
            })
            .collect()
    }

    fn conflicts(&self) -> Vec<(u64, u64)> {
        self.evs
            .iter()
            .filter_map(|e| {
                if let Ev::Conflict(_, _, o, n) = e {
                    Some((*o, *n))
                } else {
                    None
                }
            })
            .collect()
    }

    fn closes(&self) -> Vec<(u64, CloseReason)> {
        self.evs
            .iter()
            .filter_map(|e| {
                if let Ev::Closed(c, r) = e {
                    Some((*c, *r))
                } else {
                    None
                }
            })
            .collect()
    }
}

struct Run {
    r: Reassembler,
    sink: Sink,
    frame: u64,
    net: NetStats,
}

impl Run {
    fn new(cfg: TcpConfig) -> Run {
        Run {
            r: Reassembler::new(cfg),
            sink: Sink::default(),
            frame: 0,
            net: NetStats::default(),
        }
    }

    fn feed_caplen(&mut self, link: Link, ts: i64, pkt: &[u8], caplen: usize) {
        self.frame += 1;
        let cut = &pkt[..caplen.min(pkt.len())];
        let seg = net::decode(link.linktype(), cut, pkt.len() as u32, &mut self.net)
            .expect("test packets are TCP");
        let sink = &mut self.sink;
        self.r.push(self.frame, ts, &seg, &mut |e| sink.take(e));
    }

    fn feed(&mut self, flow: &Flow) {
        for (ts, pkt) in flow.packets() {
            self.feed_caplen(flow.link(), *ts, pkt, usize::MAX);
        }
    }

    fn finish(&mut self) {
        let sink = &mut self.sink;
        self.r.finish(&mut |e| sink.take(e));
    }
}

fn addrs() -> (SocketAddr, SocketAddr) {
    (
        "192.168.1.10:50000".parse().unwrap(),
        "192.168.1.20:9092".parse().unwrap(),
    )
}

fn flow() -> Flow {
    let (c, s) = addrs();
    Flow::new(c, s)
}

fn run(flow: &Flow) -> Run {
    let mut r = Run::new(TcpConfig::default());
    r.feed(flow);
    r.finish();
    r
}

const ACK: Flags = Flags {
    syn: false,
    ack: true,
    fin: false,
    rst: false,
};

#[test]
fn in_order_conversation() {
    let (c, s) = addrs();
    let mut f = flow();
    f.syn_handshake()
        .client_send(b"request")
        .server_send(b"response")
        .fin();
    let r = run(&f);
    assert_eq!(r.sink.evs[0], Ev::Opened(0, c, s, true));
    assert_eq!(r.sink.stream(0, Dir::AtoB), b"request");
    assert_eq!(r.sink.stream(0, Dir::BtoA), b"response");
    assert_eq!(r.sink.closes(), vec![(0, CloseReason::Fin)]);
    // Closed when both FINs are delivered: the final ACK opens nothing.
    assert_eq!(r.r.stats().closed_fin, 1);
    assert_eq!(r.r.stats().after_close, 1);
    assert_eq!(r.r.stats().connections, 1);
    assert!(r.sink.gaps().is_empty());
}

#[test]
fn split_segments_and_ipv6_vlan() {
    let c: SocketAddr = "[fe80::1]:1234".parse().unwrap();
    let s: SocketAddr = "[fe80::2]:9092".parse().unwrap();
    let msg: Vec<u8> = (0..1000u32).map(|i| (i % 251) as u8).collect();
    let mut f = Flow::new(c, s).with_link(Link::Vlan(7)).with_mss(7);
    f.syn_handshake()
        .client_send(&msg)
        .server_send(&msg[..500])
        .fin();
    let r = run(&f);
    assert_eq!(r.sink.stream(0, Dir::AtoB), msg);
    assert_eq!(r.sink.stream(0, Dir::BtoA), &msg[..500]);
    // Each in-order segment is delivered as it arrives, without copying.
    let datas = r
        .sink
        .evs
        .iter()
        .filter(|e| matches!(e, Ev::Data(..)))
        .count();
    assert_eq!(datas, 1000_usize.div_ceil(7) + 500_usize.div_ceil(7));
}

#[test]
fn out_of_order_is_buffered_until_the_hole_fills() {
    let mut f = flow().with_mss(4);
    f.syn_handshake().client_send(b"aaaabbbbccccdddd");
    // Packets 3..6 are the data; deliver them as d, b, c, a.
    f.swap(3, 6).swap(4, 5).swap(5, 4);
    let mut r = Run::new(TcpConfig::default());
    let pk = f.packets().to_vec();
    for (i, (ts, p)) in pk.iter().enumerate() {
        r.feed_caplen(f.link(), *ts, p, usize::MAX);
        let got = r.sink.stream(0, Dir::AtoB);
        if i < 6 {
            assert!(
                got.is_empty(),
                "nothing before the first segment (packet {i})"
            );
        }
    }
    assert_eq!(r.r.buffered_bytes(), 0);
    assert_eq!(r.sink.stream(0, Dir::AtoB), b"aaaabbbbccccdddd");
    assert_eq!(r.r.stats().out_of_order_bytes, 12);
}

#[test]
fn identical_duplicates_are_quiet() {
    let mut f = flow().with_mss(5);
    f.syn_handshake().client_send(b"0123456789abcde");
    f.duplicate(4).retransmit(3);
    f.fin();
    let r = run(&f);
    assert_eq!(r.sink.stream(0, Dir::AtoB), b"0123456789abcde");
    assert!(r.sink.conflicts().is_empty());
    assert_eq!(r.r.stats().identical_overlaps, 2);
    assert_eq!(r.r.stats().identical_overlap_bytes, 10);
}

#[test]
fn overlapping_retransmissions() {
    let mut f = flow();
    f.syn_handshake();
    let (cseq, sseq) = f.next_seqs();
    // [0,10) then [5,15) identical on the overlap, then [12,20) with
    // different bytes at 12..14.
    f.push_raw(true, cseq, sseq, ACK, b"0123456789");
    f.push_raw(true, cseq + 5, sseq, ACK, b"56789ABCDE");
    f.push_raw(true, cseq + 12, sseq, ACK, b"xyEFGHIJ");
    let r = run(&f);
    assert_eq!(r.sink.stream(0, Dir::AtoB), b"0123456789ABCDEFGHIJ");
    assert_eq!(r.sink.conflicts(), vec![(12, 2)]);
    assert_eq!(r.r.stats().identical_overlaps, 1);
    assert_eq!(r.r.stats().conflict_bytes, 2);
}

#[test]
fn conflict_with_buffered_data_comes_before_the_data() {
    let mut f = flow();
    f.syn_handshake();
    let (cseq, sseq) = f.next_seqs();
    f.push_raw(true, cseq + 10, sseq, ACK, b"KLMNOPQRST"); // buffered
    f.push_raw(true, cseq + 5, sseq, ACK, b"FGHIJklmno"); // conflicts at 10..15
    f.push_raw(true, cseq, sseq, ACK, b"ABCDE"); // fills the hole
    let r = run(&f);
    // First-arrived bytes win.
    assert_eq!(r.sink.stream(0, Dir::AtoB), b"ABCDEFGHIJKLMNOPQRST");
    let conflict = r
        .sink
        .evs
        .iter()
        .position(|e| matches!(e, Ev::Conflict(0, Dir::AtoB, 10, 5)))
        .unwrap();
    let data_at_10 = r
        .sink
        .evs
        .iter()
        .position(|e| matches!(e, Ev::Data(_, _, o, b) if *o <= 10 && *o + b.len() as u64 > 10))
        .unwrap();
    assert!(conflict < data_at_10);
}

#[test]
fn acknowledged_bytes_are_not_compared() {
    let mut f = flow();
    f.syn_handshake();
    let (cseq, sseq) = f.next_seqs();
    f.push_raw(true, cseq, sseq, ACK, b"0123456789");
    f.push_raw(true, cseq + 10, sseq, ACK, b"ABCDEFGHIJ");
    f.push_raw(true, cseq + 20, sseq, ACK, b"klmnopqrst");
    // The server acknowledges the first 15 bytes.
    f.push_raw(false, sseq, cseq + 15, ACK, b"");
    // Bytes 0..10 again, other bytes: acknowledged, so counted and not compared.
    f.push_raw(true, cseq, sseq, ACK, b"xxxxxxxxxx");
    // Bytes 10..20 again, other bytes: 10..15 acknowledged, 15..20 compared.
    f.push_raw(true, cseq + 10, sseq, ACK, b"ABCDEfghiJ");
    // Bytes 20..30 again, the same: compared.
    f.push_raw(true, cseq + 20, sseq, ACK, b"klmnopqrst");
    let r = run(&f);
    assert_eq!(r.sink.stream(0, Dir::AtoB), b"0123456789ABCDEFGHIJklmnopqrst");
    assert_eq!(r.sink.conflicts(), vec![(15, 4)]);
    let st = r.r.stats();
    assert_eq!(st.retransmitted_bytes, 30);
    assert_eq!(st.unchecked_bytes, 15);
    assert_eq!(st.identical_overlaps, 1);
    assert_eq!(st.identical_overlap_bytes, 10);
}

#[test]
fn unacknowledged_history_is_kept_up_to_its_cap() {
    // Only one direction captured: no ACK ever trims the history, which keeps the
    // last `overlap_history` bytes.
    let cap = TcpConfig::default().overlap_history;
    let data: Vec<u8> = (0..cap + 3000).map(|i| (i % 251) as u8).collect();
    let mut f = flow().with_mss(1000);
    f.syn_handshake().client_send(&data);
    let (cseq, sseq) = f.next_seqs();
    let start = cseq.wrapping_sub(data.len() as u32);
    // The last 1000 bytes, changed: compared, so a conflict.
    let mut last = data[data.len() - 1000..].to_vec();
    last[10] ^= 1;
    f.push_raw(true, start + (data.len() - 1000) as u32, sseq, ACK, &last);
    // The first 1000 bytes, changed: beyond the cap, so not compared.
    let mut first = data[..1000].to_vec();
    first[0] ^= 1;
    f.push_raw(true, start, sseq, ACK, &first);
    let r = run(&f);
    assert_eq!(r.sink.stream(0, Dir::AtoB), data);
    assert_eq!(r.sink.conflicts(), vec![((data.len() - 990) as u64, 1)]);
    assert_eq!(r.r.stats().unchecked_bytes, 1000);
}

#[test]
fn sequence_wraparound() {
    let msg: Vec<u8> = (0..300u32).map(|i| i as u8).collect();
    let mut f = flow().with_isn(u32::MAX - 100, u32::MAX - 3).with_mss(16);
    f.syn_handshake().client_send(&msg);
    // Client bytes 96..112 (packet 9) straddle 2^32; move it earlier and
    // re-send it before the server acknowledges it, so a segment behind the
    // delivery point crosses the wrap and is compared.
    f.swap(8, 9).swap(3, 12).retransmit(8);
    f.server_send(&msg).fin();
    let r = run(&f);
    assert_eq!(r.sink.stream(0, Dir::AtoB), msg);
    assert_eq!(r.sink.stream(0, Dir::BtoA), msg);
    assert!(r.sink.gaps().is_empty());
    assert_eq!(r.r.stats().identical_overlaps, 1);
    assert_eq!(r.r.stats().out_of_window, 0);
    assert_eq!(r.sink.closes(), vec![(0, CloseReason::Fin)]);
}

#[test]
fn mid_stream_start() {
    let (c, s) = addrs();
    let mut f = flow();
    // No handshake: the server speaks first, so it becomes A.
    f.server_send(b"tail of a response")
        .client_send(b"next request");
    let r = run(&f);
    assert_eq!(r.sink.evs[0], Ev::Opened(0, s, c, false));
    assert_eq!(r.sink.stream(0, Dir::AtoB), b"tail of a response");
    assert_eq!(r.sink.stream(0, Dir::BtoA), b"next request");
    assert_eq!(r.sink.closes(), vec![(0, CloseReason::EndOfCapture)]);
}

#[test]
fn lost_segment_becomes_a_gap_at_fin() {
    let mut f = flow().with_mss(4);
    f.syn_handshake().client_send(b"aaaabbbbcccc");
    f.drop_packet(4); // "bbbb" never captured
    // The server's FIN-ACK acknowledges the client's FIN: the hole is a
    // capture loss, so it is skipped right then.
    f.fin();
    let r = run(&f);
    assert_eq!(r.sink.stream(0, Dir::AtoB), b"aaaa????cccc");
    assert_eq!(r.sink.gaps(), vec![4]);
    assert_eq!(r.sink.closes(), vec![(0, CloseReason::Fin)]);
}

#[test]
fn lost_segment_then_end_of_capture() {
    let mut f = flow().with_mss(4);
    f.syn_handshake().client_send(b"aaaabbbbcccc");
    f.drop_packet(4);
    let mut r = Run::new(TcpConfig::default());
    r.feed(&f);
    assert_eq!(r.sink.stream(0, Dir::AtoB), b"aaaa");
    assert_eq!(r.r.buffered_bytes(), 4);
    r.finish();
    assert_eq!(r.sink.stream(0, Dir::AtoB), b"aaaa????cccc");
    assert_eq!(r.sink.closes(), vec![(0, CloseReason::EndOfCapture)]);
    assert_eq!(r.r.buffered_bytes(), 0);
}

#[test]
fn lost_segment_gap_after_window() {
    let mut f = flow().with_mss(10);
    f.syn_handshake().client_send(&[b'x'; 200]);
    f.drop_packet(3);
    let mut r = Run::new(TcpConfig {
        gap_window: 50,
        ..TcpConfig::default()
    });
    r.feed(&f);
    // Skipped once buffered data reached past the window, before the end.
    assert_eq!(r.sink.gaps(), vec![10]);
    assert_eq!(r.sink.stream(0, Dir::AtoB).len(), 200);
    assert!(r.sink.closes().is_empty());
}

#[test]
fn peer_ack_past_a_hole_skips_it() {
    let mut f = flow().with_mss(4);
    f.syn_handshake().client_send(b"aaaabbbbcccc");
    f.drop_packet(3);
    f.server_send(b"ok"); // acknowledges all 12 client bytes
    let mut r = Run::new(TcpConfig::default());
    r.feed(&f);
    assert_eq!(r.sink.stream(0, Dir::AtoB), b"????bbbbcccc");
    assert_eq!(r.r.stats().ack_skips, 1);
}

#[test]
fn snaplen_cut_tail_is_a_gap() {
    let mut f = flow();
    f.syn_handshake()
        .client_send(&[b'a'; 100])
        .client_send(&[b'b'; 10]);
    let mut r = Run::new(TcpConfig::default());
    let pk = f.packets().to_vec();
    for (i, (ts, p)) in pk.iter().enumerate() {
        // Keep headers plus 30 payload bytes of the first data packet.
        let caplen = if i == 3 {
            14 + 20 + 20 + 30
        } else {
            usize::MAX
        };
        r.feed_caplen(f.link(), *ts, p, caplen);
    }
    let mut want = vec![b'a'; 30];
    want.extend_from_slice(&[b'?'; 70]);
    want.extend_from_slice(&[b'b'; 10]);
    assert_eq!(r.sink.stream(0, Dir::AtoB), want);
    assert_eq!(r.r.stats().truncated_bytes, 70);
    assert_eq!(r.net.truncated, 1);
}

#[test]
fn rst_flushes_and_closes() {
    let mut f = flow().with_mss(4);
    f.syn_handshake().client_send(b"aaaabbbb");
    f.drop_packet(3);
    f.rst(false);
    let mut r = Run::new(TcpConfig::default());
    r.feed(&f);
    assert_eq!(r.sink.stream(0, Dir::AtoB), b"????bbbb");
    assert_eq!(r.sink.closes(), vec![(0, CloseReason::Rst)]);
    assert_eq!(r.r.open_connections(), 0);
}

#[test]
fn reuse_after_close_and_while_open() {
    let (c, s) = addrs();
    let mut f = flow();
    f.syn_handshake().client_send(b"first").fin();
    let mut g = flow()
        .with_isn(777_777, 888_888)
        .with_start(2_000_000_000, 1_000_000);
    g.syn_handshake().client_send(b"second");
    let mut h = flow().with_isn(5, 6).with_start(3_000_000_000, 1_000_000);
    h.syn_handshake().client_send(b"third");
    let mut r = Run::new(TcpConfig::default());
    r.feed(&f);
    r.feed(&g);
    // A retransmitted SYN of the open connection is not a reuse.
    let syn = g.packets()[0].clone();
    r.feed_caplen(g.link(), syn.0, &syn.1, usize::MAX);
    r.feed(&h);
    r.finish();
    let opened: Vec<_> = r
        .sink
        .evs
        .iter()
        .filter(|e| matches!(e, Ev::Opened(..)))
        .cloned()
        .collect();
    assert_eq!(
        opened,
        vec![
            Ev::Opened(0, c, s, true),
            Ev::Opened(1, c, s, true),
            Ev::Opened(2, c, s, true)
        ]
    );
    assert_eq!(r.sink.stream(0, Dir::AtoB), b"first");
    assert_eq!(r.sink.stream(1, Dir::AtoB), b"second");
    assert_eq!(r.sink.stream(2, Dir::AtoB), b"third");
    assert_eq!(
        r.sink.closes(),
        vec![
            (0, CloseReason::Fin),
            (1, CloseReason::Reused),
            (2, CloseReason::EndOfCapture)
        ]
    );
    assert_eq!(r.r.stats().duplicate_syns, 1);
    assert_eq!(r.r.stats().reused, 1);
}

#[test]
fn lru_eviction_at_max_connections() {
    let server: SocketAddr = "10.1.1.1:9092".parse().unwrap();
    let flows: Vec<Flow> = (0..3)
        .map(|i| {
            let client = SocketAddr::new("10.1.1.2".parse().unwrap(), 40000 + i);
            let mut f = Flow::new(client, server).with_mss(4);
            f.syn_handshake().client_send(b"aaaabbbb");
            f
        })
        .collect();
    let mut r = Run::new(TcpConfig {
        max_connections: 2,
        ..TcpConfig::default()
    });
    // Interleave: conn 0 opens, conn 1 opens, conn 0 is used again, then
    // conn 2 needs room: conn 1 is the least recently used.
    let link = flows[0].link();
    let p = |i: usize, j: usize| flows[i].packets()[j].clone();
    for (i, j) in [
        (0, 0),
        (1, 0),
        (1, 1),
        (0, 1),
        (0, 2),
        (1, 2),
        (0, 3),
        (2, 0),
        (2, 1),
    ] {
        let (ts, pkt) = p(i, j);
        r.feed_caplen(link, ts, &pkt, usize::MAX);
    }
    assert_eq!(r.sink.closes(), vec![(1, CloseReason::Evicted)]);
    assert_eq!(r.r.stats().evicted, 1);
    assert_eq!(r.r.open_connections(), 2);
    // Later packets of the evicted connection start a mid-stream one.
    let (ts, pkt) = p(1, 4);
    r.feed_caplen(link, ts, &pkt, usize::MAX);
    assert_eq!(r.r.stats().evicted, 2);
    assert!(
        r.sink
            .evs
            .contains(&Ev::Opened(3, flows[1].client(), server, false))
    );
}

#[test]
fn per_direction_cap_bounds_buffering() {
    let mut f = flow().with_mss(20);
    f.syn_handshake().client_send(&[b'z'; 400]);
    f.drop_packet(3);
    let mut r = Run::new(TcpConfig {
        max_buffered_per_direction: 100,
        ..TcpConfig::default()
    });
    let pk = f.packets().to_vec();
    for (ts, p) in &pk {
        r.feed_caplen(f.link(), *ts, p, usize::MAX);
        assert!(r.r.buffered_bytes() <= 100);
    }
    assert_eq!(r.sink.gaps(), vec![20]);
    assert_eq!(r.r.stats().buffer_limit_skips, 1);
    assert_eq!(r.r.stats().peak_buffered, 120);
    assert_eq!(r.sink.stream(0, Dir::AtoB).len(), 400);
}

#[test]
fn total_cap_bounds_buffering() {
    let mut r = Run::new(TcpConfig {
        max_buffered_total: 150,
        ..TcpConfig::default()
    });
    let server: SocketAddr = "10.1.1.1:9092".parse().unwrap();
    for i in 0..4 {
        let client = SocketAddr::new("10.1.1.2".parse().unwrap(), 40000 + i);
        let mut f = Flow::new(client, server).with_mss(20);
        f.syn_handshake().client_send(&[b'q'; 100]);
        f.drop_packet(3);
        r.feed(&f);
        assert!(r.r.buffered_bytes() <= 150);
    }
    assert!(r.r.stats().buffer_limit_skips >= 1);
}

#[test]
fn idle_timeout_closes() {
    let mut f = flow();
    f.syn_handshake().client_send(b"early");
    let (c, _) = addrs();
    let other: SocketAddr = "192.168.1.99:9092".parse().unwrap();
    let mut g = Flow::new(c, other).with_start(100_000_000_000, 1_000_000);
    g.syn_handshake();
    let mut r = Run::new(TcpConfig {
        idle_timeout_ns: Some(10_000_000_000),
        ..TcpConfig::default()
    });
    r.feed(&f);
    r.feed(&g);
    assert_eq!(r.sink.closes(), vec![(0, CloseReason::Idle)]);
    assert_eq!(r.r.stats().idle_closed, 1);
}

#[test]
fn pure_acks_do_not_open_connections() {
    let mut f = flow();
    f.push_raw(true, 1, 1, ACK, &[]);
    f.push_raw(
        true,
        1,
        1,
        Flags {
            rst: true,
            ..Flags::default()
        },
        &[],
    );
    let r = run(&f);
    assert!(r.sink.evs.is_empty());
    assert_eq!(r.r.stats().no_connection, 2);
}

#[test]
fn absurd_sequence_jump_is_dropped() {
    let mut f = flow();
    f.syn_handshake().client_send(b"hello");
    let (cseq, sseq) = f.next_seqs();
    f.push_raw(true, cseq.wrapping_add((1 << 30) + 100), sseq, ACK, b"junk");
    f.client_send(b" world");
    let r = run(&f);
    assert_eq!(r.sink.stream(0, Dir::AtoB), b"hello world");
    assert_eq!(r.r.stats().out_of_window, 1);
}

/// A stream cut into segments, shuffled and partly duplicated or
/// re-sent with other boundaries, must come out exactly as sent.
/// (stream, ISN, segments as byte ranges, sort keys giving arrival order)
type Segmentation = (Vec<u8>, u32, Vec<(usize, usize)>, Vec<u32>);

fn segmentations() -> impl Strategy<Value = Segmentation> {
    (
        prop::collection::vec(any::<u8>(), 1..3000),
        any::<u32>(),
        1usize..300,
    )
        .prop_flat_map(|(data, isn, mss)| {
            let n = data.len();
            let mut cuts = Vec::new();
            let mut at = 0;
            while at < n {
                let end = (at + mss).min(n);
                cuts.push((at, end));
                at = end;
            }
            let extra = prop::collection::vec((0..n, 1..400usize), 0..8).prop_map(move |v| {
                v.into_iter()
                    .map(|(s, l)| (s, (s + l).min(n)))
                    .collect::<Vec<_>>()
            });
            (Just(data), Just(isn), extra, Just(cuts)).prop_flat_map(|(data, isn, extra, cuts)| {
                let mut all = cuts;
                all.extend(extra);
                let k = all.len();
                (
                    Just(data),
                    Just(isn),
                    Just(all),
                    prop::collection::vec(any::<u32>(), k),
                )
            })
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn random_segmentation_reassembles_exactly((data, isn, segs, keys) in segmentations(), handshake in any::<bool>()) {
        let mut f = flow().with_isn(isn, 42);
        if handshake {
            f.syn_handshake();
        }
        let (cseq, sseq) = f.next_seqs();
        let mut order: Vec<usize> = (0..segs.len()).collect();
        order.sort_by_key(|&i| keys[i]);
        if !handshake {
            // Mid-stream, the first segment seen defines the start: make
            // it the stream's first one.
            let first = order.iter().position(|&i| i == 0).unwrap();
            order.swap(0, first);
        }
        for i in order {
            let (s, e) = segs[i];
            f.push_raw(true, cseq.wrapping_add(s as u32), sseq, ACK, &data[s..e]);
        }
        let r = run(&f);
        prop_assert_eq!(r.sink.stream(0, Dir::AtoB), data);
        prop_assert!(r.sink.conflicts().is_empty());
        prop_assert!(r.sink.gaps().is_empty());
        prop_assert_eq!(r.r.buffered_bytes(), 0);
    }
}

#[test]
fn same_endpoints_on_two_vlans_are_two_connections() {
    let (c, s) = addrs();
    let mut r = Run::new(TcpConfig::default());
    let mut flows: Vec<Flow> = [
        Link::Vlan(10),
        Link::Vlan(20),
        Link::QinQ(10, 20),
        Link::Ethernet,
    ]
    .into_iter()
    .enumerate()
    .map(|(i, link)| {
        let mut f = Flow::new(c, s).with_link(link);
        f.syn_handshake()
            .client_send(&[b'a' + i as u8; 30])
            .server_send(&[b'A' + i as u8; 20])
            .fin();
        f
    })
    .collect();
    // Interleave them packet by packet.
    let n = flows[0].len();
    for k in 0..n {
        for f in &mut flows {
            let (ts, pkt) = f.packets()[k].clone();
            r.feed_caplen(f.link(), ts, &pkt, usize::MAX);
        }
    }
    r.finish();
    assert_eq!(r.r.stats().connections, 4);
    for i in 0..4u64 {
        assert_eq!(r.sink.stream(i, Dir::AtoB), vec![b'a' + i as u8; 30]);
        assert_eq!(r.sink.stream(i, Dir::BtoA), vec![b'A' + i as u8; 20]);
    }
    assert_eq!(
        r.sink.closes(),
        (0..4).map(|i| (i, CloseReason::Fin)).collect::<Vec<_>>()
    );
}

/// Frame and time of the packet that carried each byte of one direction.
fn byte_stamps(sink: &Sink, conn: u64, dir: Dir) -> Vec<(u64, i64)> {
    let mut out = Vec::new();
    for &(c, d, _, len, frame, ts) in &sink.stamps {
        if c == conn && d == dir {
            out.extend(std::iter::repeat_n((frame, ts), len));
        }
    }
    out
}

#[test]
fn delivered_bytes_carry_the_packet_that_carried_them() {
    // Client data in 3 segments of 10 bytes; the second is late, so the
    // third waits for it.
    let mut f = flow().with_mss(10).with_start(1_000, 1_000);
    f.syn_handshake().client_send(&[b'x'; 30]);
    // Packets: 0 SYN, 1 SYN-ACK, 2 ACK, 3..6 the data segments.
    f.swap(4, 5);
    let mut r = Run::new(TcpConfig::default());
    r.feed(&f);
    r.finish();
    let got = byte_stamps(&r.sink, 0, Dir::AtoB);
    // Frames are 1-based in feed order: data went out as frames 4, 6, 5.
    let stamp = |frame: u64| (frame, f.packets()[frame as usize - 1].0);
    let mut want = vec![stamp(4); 10];
    want.extend(vec![stamp(6); 10]);
    want.extend(vec![stamp(5); 10]);
    assert!(r.sink.gaps().is_empty());
    assert_eq!(got, want);
}

#[test]
fn stamps_survive_ack_skips_and_close() {
    // Server sends 3 segments; the first is lost. The client's ACK past the
    // hole releases the other two, each with its own packet's stamp.
    let mut f = flow().with_mss(10).with_start(5_000, 1_000);
    f.syn_handshake()
        .client_send(b"request!")
        .server_send(&[b'y'; 30]);
    // 0 SYN, 1 SYN-ACK, 2 ACK, 3 request, 4..6 the response segments.
    f.drop_packet(4);
    let (c_next, s_next) = f.next_seqs();
    f.push_raw(true, c_next, s_next, ACK, &[]);
    let mut r = Run::new(TcpConfig::default());
    r.feed(&f);
    let before_close = byte_stamps(&r.sink, 0, Dir::BtoA);
    r.finish();
    let stamp = |frame: u64| (frame, f.packets()[frame as usize - 1].0);
    let mut want = vec![stamp(5); 10];
    want.extend(vec![stamp(6); 10]);
    assert_eq!(before_close, want);
    assert_eq!(r.r.stats().ack_skips, 1);
    // Without that ACK, the same bytes come out at close with the same stamps.
    let mut g = flow().with_mss(10).with_start(5_000, 1_000);
    g.syn_handshake()
        .client_send(b"request!")
        .server_send(&[b'y'; 30]);
    g.drop_packet(4);
    let mut r = Run::new(TcpConfig::default());
    r.feed(&g);
    assert!(byte_stamps(&r.sink, 0, Dir::BtoA).is_empty());
    r.finish();
    let stamp = |frame: u64| (frame, g.packets()[frame as usize - 1].0);
    let mut want = vec![stamp(5); 10];
    want.extend(vec![stamp(6); 10]);
    assert_eq!(byte_stamps(&r.sink, 0, Dir::BtoA), want);
}

#[test]
fn bytes_keep_the_input_file_of_their_packet() {
    // Two inputs carry one connection's packets; the late one is delivered
    // with its own file.
    let mut f = flow().with_mss(10);
    f.syn_handshake().client_send(&[b'z'; 20]);
    f.swap(3, 4);
    let mut r = Reassembler::new(TcpConfig::default());
    let mut net_stats = NetStats::default();
    let mut files = Vec::new();
    for (i, (ts, pkt)) in f.packets().iter().enumerate() {
        let seg = net::decode(
            Link::Ethernet.linktype(),
            pkt,
            pkt.len() as u32,
            &mut net_stats,
        )
        .unwrap();
        let at = Stamp {
            packet: i as u64 + 1,
            ts_ns: *ts,
            file: i as u32 % 2,
        };
        r.push_at(at, &seg, &mut |e| {
            if let StreamEvent::Data { packet, file, .. } = e {
                files.push((packet, file));
            }
        });
    }
    // Frame 4 (file 1) holds the second 10 bytes, frame 5 (file 0) the first.
    assert_eq!(files, vec![(5, 0), (4, 1)]);
}

proptest! {
    /// The IPv4 shortcut of [`FlowKey::new`] makes the key the general path makes, so
    /// both directions, and the ordering of the ends, stay as they were.
    #[test]
    fn flow_key_shortcut_is_the_general_key(a in any::<u32>(), b in any::<u32>(),
                                            pa in any::<u16>(), pb in any::<u16>(),
                                            same_ip in any::<bool>(),
                                            outer in any::<u16>(), inner in any::<u16>()) {
        let b = if same_ip { a } else { b };
        let x = SocketAddr::from((std::net::Ipv4Addr::from_bits(a), pa));
        let y = SocketAddr::from((std::net::Ipv4Addr::from_bits(b), pb));
        let vlan = Vlan { outer, inner };
        prop_assert_eq!(FlowKey::new(x, y, vlan), FlowKey::general(x, y, vlan));
        prop_assert_eq!(FlowKey::new(y, x, vlan), FlowKey::general(x, y, vlan));
    }
}

/// One segment of [`shortcut_segments`]: from the client or not, where its sequence
/// number lies (0 to 3: the next in order; 4: behind; 5: ahead), its payload length and
/// how much of it was captured, flags (SYN, FIN, RST, ACK bits), and where its ACK lies.
type Step = (bool, u8, usize, usize, u8, u8);

fn shortcut_segments() -> impl Strategy<Value = Vec<Step>> {
    prop::collection::vec(
        (any::<bool>(), 0u8..6, 0usize..40, 0usize..4, any::<u8>(), 0u8..4),
        1..120,
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    /// The shortcut for common segments does exactly what the general steps do: the same
    /// events (bytes, stamps, gaps, conflicts, closes) and the same counters, whatever
    /// mix of in-order, repeated, early, cut, SYN, FIN and RST segments comes.
    #[test]
    fn shortcut_matches_the_general_steps(steps in shortcut_segments(), history in 0usize..64) {
        let cfg = TcpConfig { overlap_history: history, gap_window: 200, ..TcpConfig::default() };
        let mut fast = Reassembler::new(cfg.clone());
        let mut slow = Reassembler::new(cfg).without_shortcuts();
        let (c, s) = addrs();
        let mut next = [1000u32, 5000u32];
        let bytes: Vec<u8> = (0..=255u8).cycle().take(4096).collect();
        let (mut got_fast, mut got_slow) = (Sink::default(), Sink::default());
        for (i, &(client, place, len, cut, flags, ack_at)) in steps.iter().enumerate() {
            let d = usize::from(!client);
            let seq = match place {
                0..=3 => next[d],
                4 => next[d].wrapping_sub(len as u32 / 2 + 1),
                _ => next[d].wrapping_add(len as u32 + 3),
            };
            if place <= 3 {
                next[d] = next[d].wrapping_add(len as u32);
            }
            let from = (i * 7) % 3000;
            let captured = len.saturating_sub(if cut == 3 { len / 2 + 1 } else { 0 });
            let ack = match ack_at {
                0 => next[1 - d],
                1 => next[1 - d].wrapping_add(17),
                2 => next[1 - d].wrapping_sub(9),
                _ => 0,
            };
            let (src, dst) = if client { (c, s) } else { (s, c) };
            let seg = TcpSegment {
                src,
                dst,
                vlan: Vlan::default(),
                seq,
                ack,
                // SYNs, FINs and RSTs now and then; mostly ACKs.
                syn: flags % 23 == 0,
                fin: flags % 17 == 1,
                rst: flags == 255,
                ack_flag: flags % 5 != 0,
                payload: &bytes[from..from + captured],
                payload_truncated: captured < len,
                payload_len: len as u32,
            };
            let at = Stamp { packet: i as u64 + 1, ts_ns: i as i64 * 10, file: 0 };
            fast.push_at(at, &seg, &mut |e| got_fast.take(e));
            slow.push_at(at, &seg, &mut |e| got_slow.take(e));
        }
        fast.finish(&mut |e| got_fast.take(e));
        slow.finish(&mut |e| got_slow.take(e));
        prop_assert_eq!(&got_fast.evs, &got_slow.evs);
        prop_assert_eq!(&got_fast.stamps, &got_slow.stamps);
        prop_assert_eq!(fast.stats(), slow.stats());
    }
}
