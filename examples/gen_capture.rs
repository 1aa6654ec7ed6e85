//! Writes a large synthetic capture for benchmarks: many connections, a mix of
//! Vote and FindCoordinator at every version, some with split segments.
//!
//! Run: `cargo run --release --example gen_capture -- --messages 1000000 OUT.pcap`
//! (`--connections N`, default 256; `--seed S`). Messages counts requests and
//! responses together.

use kwire::capture::writer::{PcapWriter, TsPrecision};
use kwire::synth::kafka::{
    Coordinator, Rng, Vote, find_coordinator_request, find_coordinator_response, vote_request,
    vote_response,
};
use kwire::synth::{Flow, Link};
use std::fs::File;
use std::io::BufWriter;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};

fn usage() -> ! {
    eprintln!("usage: gen_capture [--messages N] [--connections N] [--seed S] OUT.pcap");
    std::process::exit(2)
}

fn main() -> std::io::Result<()> {
    let mut messages = 1_000_000u64;
    let mut connections = 256usize;
    let mut seed = 1u64;
    let mut out = None;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut num = || {
            args.next()
                .and_then(|v| v.parse::<u64>().ok())
                .unwrap_or_else(|| usage())
        };
        match a.as_str() {
            "--messages" => messages = num(),
            "--connections" => connections = num().max(1) as usize,
            "--seed" => seed = num(),
            _ if out.is_none() && !a.starts_with('-') => out = Some(a),
            _ => usage(),
        }
    }
    let Some(out) = out else { usage() };
    let mut rng = Rng::new(seed);
    let mut w = PcapWriter::new(
        BufWriter::with_capacity(1 << 20, File::create(&out)?),
        Link::Ethernet.linktype() as u32,
        TsPrecision::Micro,
        65535,
    )?;
    // Connections open in turn; each carries one kind of traffic, as real ones do.
    let mut flows: Vec<(Flow, bool)> = (0..connections)
        .map(|i| {
            let vote = i % 4 == 0;
            let client = SocketAddr::new(
                IpAddr::V4(Ipv4Addr::new(10, 1, (i / 250) as u8, (i % 250) as u8 + 1)),
                40000 + (i % 20000) as u16,
            );
            let server = SocketAddr::new(
                IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1 + (i % 3) as u8)),
                if vote { 9093 } else { 9092 },
            );
            // One connection in eight splits its messages into small segments.
            let mss = if i % 8 == 7 { 40 } else { 1460 };
            (Flow::new(client, server).with_mss(mss), vote)
        })
        .collect();
    let mut ts: i64 = 1_764_441_600_000_000_000;
    let write_all = |flow: &mut Flow, w: &mut PcapWriter<_>, ts: &mut i64| -> std::io::Result<()> {
        for (_, p) in flow.drain_packets() {
            *ts += 5_000;
            w.write_packet(*ts, &p)?;
        }
        Ok(())
    };
    for (f, _) in flows.iter_mut() {
        f.syn_handshake();
        write_all(f, &mut w, &mut ts)?;
    }
    let pairs = messages / 2;
    for n in 0..pairs {
        let i = rng.below(connections as u64) as usize;
        let Some((flow, vote)) = flows.get_mut(i) else {
            continue;
        };
        let corr = n as i32;
        if *vote {
            let v = rng.below(3) as i16;
            let cand = 1 + rng.below(3) as i32;
            let x = Vote {
                cluster_id: "Wq2jvLJQR5eQ7kmDX0hSTA".into(),
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
            flow.server_send(&vote_response(v, corr, &x));
        } else {
            let v = rng.below(7) as i16;
            let group = format!("group-{}", rng.below(1000));
            let node = rng.below(3) as i32;
            let error = if rng.below(20) == 0 { 16 } else { 0 };
            let c = Coordinator {
                key: group.clone(),
                node,
                host: format!("broker-{node}.kafka.local"),
                port: 9092,
                error,
                message: None,
            };
            flow.client_send(&find_coordinator_request(
                v,
                corr,
                "consumer-1",
                0,
                &[group.as_str()],
            ));
            flow.server_send(&find_coordinator_response(v, corr, &[c]));
        }
        write_all(flow, &mut w, &mut ts)?;
    }
    for (f, _) in flows.iter_mut() {
        f.fin();
        write_all(f, &mut w, &mut ts)?;
    }
    eprintln!(
        "wrote {out}: {} messages on {connections} connections",
        pairs * 2
    );
    Ok(())
}
