//! `--threads 2` prints exactly what `--threads 1` prints, byte for byte, in every format,
//! over a large generated capture (tens of thousands of messages on many connections,
//! split segments, reordering, retransmissions, lost segments, unanswered requests).

mod common;

use common::{Out, kwire, pcap_packets};
use kwire::synth::kafka::{
    Coordinator, Rng, Vote, find_coordinator_request, find_coordinator_response, vote_request,
    vote_response,
};
use kwire::synth::{Flow, Link};
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::Path;

const MESSAGES: u64 = 40_000;
const CONNECTIONS: usize = 64;

/// Vote and FindCoordinator at every version, with non-ASCII strings; one connection in
/// eight in small segments; now and then segments swapped, repeated or lost, requests
/// left unanswered; one connection that is not Kafka.
fn capture() -> Vec<(i64, Vec<u8>)> {
    let mut rng = Rng::new(7);
    let mut flows: Vec<(Flow, bool)> = (0..CONNECTIONS)
        .map(|i| {
            let client = SocketAddr::new(
                IpAddr::V4(Ipv4Addr::new(10, 1, 0, i as u8 + 1)),
                40000 + i as u16,
            );
            let vote = i % 4 == 0;
            let server = SocketAddr::new(
                IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1 + (i % 3) as u8)),
                if vote { 9093 } else { 9092 },
            );
            let mss = if i % 8 == 7 { 40 } else { 1460 };
            (Flow::new(client, server).with_mss(mss), vote)
        })
        .collect();
    let mut ts: i64 = 1_764_441_600_000_000_000;
    let mut out = Vec::new();
    let mut take = |flow: &mut Flow, out: &mut Vec<(i64, Vec<u8>)>| {
        for (_, p) in flow.drain_packets() {
            ts += 5_000;
            out.push((ts, p));
        }
    };
    for (f, _) in flows.iter_mut() {
        f.syn_handshake();
        take(f, &mut out);
    }
    let mut other = Flow::new(
        "10.2.0.1:50000".parse().expect("addr"),
        "10.2.0.2:8080".parse().expect("addr"),
    );
    other.syn_handshake();
    take(&mut other, &mut out);
    for n in 0..MESSAGES / 2 {
        let i = rng.below(CONNECTIONS as u64) as usize;
        let Some((flow, vote)) = flows.get_mut(i) else {
            continue;
        };
        let corr = n as i32;
        let answered = rng.below(50) != 0;
        if *vote {
            let v = rng.below(3) as i16;
            let cand = 1 + rng.below(3) as i32;
            let x = Vote {
                cluster_id: "Wq2jvLJQR5eQ7kmDX0hSTA-ü".into(),
                candidate: cand,
                voter: 1 + (cand % 3),
                epoch: 1 + (n / 1000) as i32,
                last_offset: n as i64,
                last_epoch: (n / 1000) as i32,
                pre_vote: rng.below(2) == 0,
                granted: rng.below(3) != 0,
                leader: -1,
                error: 0,
                leader_endpoint: None,
            };
            flow.client_send(&vote_request(v, corr, "raft-client", &x));
            if answered {
                flow.server_send(&vote_response(v, corr, &x));
            }
        } else {
            let v = rng.below(7) as i16;
            let group = format!("gruppe-ü-{}", rng.below(1000));
            let node = rng.below(3) as i32;
            let c = Coordinator {
                key: group.clone(),
                node,
                host: format!("broker-{node}.kafka.local"),
                port: 9092,
                error: if rng.below(20) == 0 { 16 } else { 0 },
                message: None,
            };
            flow.client_send(&find_coordinator_request(
                v,
                corr,
                "consumer-1",
                0,
                &[group.as_str()],
            ));
            if answered {
                flow.server_send(&find_coordinator_response(v, corr, &[c]));
            }
        }
        // Disorder on the wire now and then.
        if flow.len() >= 2 {
            match rng.below(200) {
                0 => {
                    flow.swap(0, 1);
                }
                1 => {
                    flow.duplicate(0);
                }
                2 => {
                    flow.retransmit(1);
                }
                3 => {
                    flow.drop_packet(0);
                }
                _ => {}
            }
        }
        take(flow, &mut out);
        if n % 500 == 0 {
            other.client_send(b"GET / HTTP/1.1\r\n\r\n");
            take(&mut other, &mut out);
        }
    }
    for (f, _) in flows.iter_mut() {
        f.fin();
        take(f, &mut out);
    }
    out
}

fn run(file: &Path, args: &[&str], threads: &str) -> Out {
    let mut all: Vec<&str> = args.to_vec();
    all.extend(["--threads", threads]);
    all.push(file.to_str().expect("utf-8 path"));
    let out = kwire(&all);
    assert!(
        out.code == 0 || out.code == 2,
        "{all:?}: exit {}\n{}",
        out.code,
        out.stderr
    );
    out
}

/// Both ways print the same stdout and stderr, and exit alike.
fn same(file: &Path, args: &[&str]) -> Out {
    let one = run(file, args, "1");
    let two = run(file, args, "2");
    assert_eq!(one.code, two.code, "{args:?}");
    assert!(one.stdout == two.stdout, "{args:?}: stdout differs");
    assert!(
        one.stderr == two.stderr,
        "{args:?}: stderr differs\n--- 1 thread\n{}\n--- 2 threads\n{}",
        one.stderr,
        two.stderr
    );
    one
}

#[test]
fn every_format_is_the_same_on_two_threads() {
    let file = pcap_packets(Link::Ethernet, &capture());
    let path = file.path();
    let summary = same(path, &["read"]);
    let lines = summary.stdout.lines().count() as u64;
    // Most messages are there (some are lost with their segments), and were decoded.
    assert!(lines > MESSAGES * 9 / 10, "{lines} lines");
    assert!(summary.stderr.contains("gaps"), "{}", summary.stderr);
    same(path, &["read", "--format", "json"]);
    same(path, &["read", "--format", "tree"]);
    same(
        path,
        &[
            "read",
            "--format",
            "fields",
            "-e",
            "frame",
            "-e",
            "api",
            "-e",
            "latency_us",
        ],
    );
    same(path, &["read", "-Y", "latency_us > 0 && kind == response"]);
    same(path, &["stats"]);
    same(path, &["stats", "--format", "json"]);
}

#[test]
fn count_stops_at_n_on_two_threads() {
    let file = pcap_packets(Link::Ethernet, &capture());
    for n in ["1", "999", "20000"] {
        let args = ["read", "-q", "--format", "json", "-c", n];
        let one = run(file.path(), &args, "1");
        let two = run(file.path(), &args, "2");
        assert_eq!(one.stdout.lines().count().to_string(), n);
        assert!(one.stdout == two.stdout, "-c {n}: stdout differs");
    }
}

/// Several inputs merged: each message names its file the same way.
#[test]
fn merged_inputs_are_the_same_on_two_threads() {
    let packets = capture();
    let (a, b): (Vec<_>, Vec<_>) = packets
        .into_iter()
        .enumerate()
        .partition(|(i, _)| i % 3 == 0);
    let strip = |v: Vec<(usize, (i64, Vec<u8>))>| v.into_iter().map(|(_, p)| p).collect::<Vec<_>>();
    let fa = pcap_packets(Link::Ethernet, &strip(a));
    let fb = pcap_packets(Link::Ethernet, &strip(b));
    let args = |threads| {
        vec![
            "read",
            "--format",
            "json",
            "--threads",
            threads,
            fa.path().to_str().expect("utf-8"),
            fb.path().to_str().expect("utf-8"),
        ]
    };
    let one = kwire(&args("1"));
    let two = kwire(&args("2"));
    assert_eq!(one.code, two.code);
    assert!(one.stdout == two.stdout, "merged: stdout differs");
    assert_eq!(one.stderr, two.stderr);
}

/// A delivered message: its packet, kind, and API key and version.
type Seen1 = (u64, &'static str, Option<(i16, i16)>);

/// What the hooks saw: each message's packet and kind, and the calls around them.
#[derive(Default)]
struct Seen {
    messages: Vec<Seen1>,
    packets: u64,
    polls: u64,
    /// Stop after this many messages, or at this many polls.
    stop_after: Option<usize>,
    stop_at_poll: Option<u64>,
}

impl kwire::Hooks for Seen {
    fn message(&mut self, r: &kwire::Record<'_>) -> std::ops::ControlFlow<()> {
        self.messages.push((r.packet, r.msg.kind.as_str(), r.api));
        if self.stop_after.is_some_and(|n| self.messages.len() >= n) {
            return std::ops::ControlFlow::Break(());
        }
        std::ops::ControlFlow::Continue(())
    }

    fn poll(&mut self, _source: &mut kwire::Source) -> std::ops::ControlFlow<()> {
        self.polls += 1;
        if self.stop_at_poll.is_some_and(|n| self.polls >= n) {
            return std::ops::ControlFlow::Break(());
        }
        std::ops::ControlFlow::Continue(())
    }

    fn packet(&mut self, number: u64, _p: &kwire::Packet<'_>) {
        // Numbered from 1, in order, once each.
        assert_eq!(number, self.packets + 1);
        self.packets = number;
    }
}

fn run_lib(path: &Path, threads: usize, mut seen: Seen) -> (Seen, kwire::RunStats, u64) {
    let mut source = kwire::Source::open_file(path).expect("open");
    let cfg = kwire::Config {
        threads,
        ..kwire::Config::default()
    };
    let (stats, end) = kwire::run_with(&mut source, cfg, &mut seen);
    assert!(matches!(end, kwire::End::Complete), "{end:?}");
    (seen, stats, source.packets_read())
}

/// The library's run on two threads: the same messages and counters, the same hook calls,
/// and a sink's stop ends the reading soon after (a few batches at most).
#[test]
fn hooks_see_the_same_on_two_threads() {
    let packets = capture();
    let total = packets.len() as u64;
    let file = pcap_packets(Link::Ethernet, &packets);
    let (one, s1, read1) = run_lib(file.path(), 1, Seen::default());
    let (two, s2, read2) = run_lib(file.path(), 2, Seen::default());
    assert_eq!(one.messages, two.messages);
    assert_eq!(
        (one.packets, two.packets, read1, read2),
        (total, total, total, total)
    );
    let kafka = |s: &kwire::RunStats| {
        let k = &s.kafka;
        let counts = (
            k.requests,
            k.responses,
            k.paired,
            k.gaps,
            k.resyncs,
            k.desyncs,
        );
        (counts, k.unanswered.clone(), k.unanswered_packets.clone())
    };
    assert_eq!(kafka(&s1), kafka(&s2));
    assert_eq!(s1.messages, s2.messages);
    assert_eq!(s1.packets, s2.packets);
    assert_eq!(kwire::report_text(&s1), kwire::report_text(&s2));
    let all = one.messages;

    // A sink that stops: exactly as many messages, and the reading stops soon after.
    let stop = |n| Seen {
        stop_after: Some(n),
        ..Seen::default()
    };
    let (one, _, _) = run_lib(file.path(), 1, stop(1000));
    let (two, s2, read2) = run_lib(file.path(), 2, stop(1000));
    assert_eq!(one.messages, two.messages);
    assert_eq!(s2.messages.values().sum::<u64>(), 1000);
    let last = two.messages.last().map_or(0, |m| m.0);
    // Four batches in flight and one being filled, of at most 1024 packets each.
    assert!(
        read2 <= last + 5 * 1024,
        "read {read2} packets, stop at {last}"
    );

    // A poll that stops: what was delivered is the start of the whole run's messages.
    let at_poll = Seen {
        stop_at_poll: Some(20_000),
        ..Seen::default()
    };
    let (two, _, read2) = run_lib(file.path(), 2, at_poll);
    assert!(read2 < total);
    assert!(!two.messages.is_empty() && two.messages.len() < all.len());
    assert_eq!(two.messages[..], all[..two.messages.len()]);
}
