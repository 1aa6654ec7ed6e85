//! Kafka-shaped load over loopback for `scripts/bench-live.sh`: a tiny server
//! answers FindCoordinator and Vote requests that client connections send at a
//! fixed total rate. Messages count requests and responses together.
//!
//! Run: `cargo run --release --example loadgen -- --port P --rate 100000 --seconds 10`
//! (`--connections N`, default 8). Prints the messages exchanged.

use kwire::synth::kafka::{
    Coordinator, Vote, find_coordinator_request, find_coordinator_response, vote_request,
    vote_response,
};
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

fn usage() -> ! {
    eprintln!("usage: loadgen --port P [--rate MSGS_PER_S] [--seconds S] [--connections N]");
    std::process::exit(2)
}

fn vote() -> Vote {
    Vote {
        cluster_id: "loadgen".into(),
        candidate: 1,
        voter: 2,
        epoch: 7,
        last_offset: 1234,
        last_epoch: 6,
        pre_vote: false,
        granted: true,
        leader: -1,
        error: 0,
        leader_endpoint: None,
    }
}

fn coordinator() -> Coordinator {
    Coordinator {
        key: "orders-app".into(),
        node: 1,
        host: "broker-1".into(),
        port: 9092,
        error: 0,
        message: None,
    }
}

/// Writes `corr` into a frame's correlation id (request: bytes 8..12; response: 4..8).
fn with_corr(frame: &[u8], at: usize, corr: i32) -> Vec<u8> {
    let mut f = frame.to_vec();
    f[at..at + 4].copy_from_slice(&corr.to_be_bytes());
    f
}

fn read_frame(s: &mut TcpStream, buf: &mut Vec<u8>) -> bool {
    let mut size = [0u8; 4];
    if s.read_exact(&mut size).is_err() {
        return false;
    }
    buf.clear();
    buf.extend_from_slice(&size);
    buf.resize(4 + i32::from_be_bytes(size).max(0) as usize, 0);
    s.read_exact(&mut buf[4..]).is_ok()
}

fn serve(mut s: TcpStream, count: Arc<AtomicU64>) {
    let _ = s.set_nodelay(true);
    let fc = find_coordinator_response(6, 0, &[coordinator()]);
    let vo = vote_response(2, 0, &vote());
    let mut buf = Vec::new();
    while read_frame(&mut s, &mut buf) {
        let key = i16::from_be_bytes([buf[4], buf[5]]);
        let corr = i32::from_be_bytes([buf[8], buf[9], buf[10], buf[11]]);
        let resp = with_corr(if key == 52 { &vo } else { &fc }, 4, corr);
        if s.write_all(&resp).is_err() {
            return;
        }
        count.fetch_add(1, Ordering::Relaxed);
    }
}

fn main() {
    let (mut port, mut rate, mut seconds, mut conns) = (0u16, 10_000u64, 10u64, 8u64);
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let v = args
            .next()
            .and_then(|v| v.parse::<u64>().ok())
            .unwrap_or_else(|| usage());
        match a.as_str() {
            "--port" => port = v as u16,
            "--rate" => rate = v.max(2),
            "--seconds" => seconds = v,
            "--connections" => conns = v.max(1),
            _ => usage(),
        }
    }
    let listener = TcpListener::bind(("127.0.0.1", port)).expect("bind the port");
    let served = Arc::new(AtomicU64::new(0));
    let count = served.clone();
    std::thread::spawn(move || {
        for s in listener.incoming().flatten() {
            let c = count.clone();
            std::thread::spawn(move || serve(s, c));
        }
    });
    let sent = Arc::new(AtomicU64::new(0));
    let fc = find_coordinator_request(6, 0, "loadgen", 0, &["orders-app"]);
    let vo = vote_request(2, 0, "raft-client-1", &vote());
    // Each connection sends rate/2/conns requests a second, in small batches every millisecond.
    let per_conn = rate as f64 / 2.0 / conns as f64;
    let deadline = Instant::now() + Duration::from_secs(seconds);
    let workers: Vec<_> = (0..conns)
        .map(|i| {
            let (fc, vo, sent) = (fc.clone(), vo.clone(), sent.clone());
            std::thread::spawn(move || {
                let mut s = TcpStream::connect(("127.0.0.1", port)).expect("connect");
                let _ = s.set_nodelay(true);
                let mut reader = s.try_clone().expect("clone");
                let answers = std::thread::spawn(move || {
                    let mut buf = Vec::new();
                    while read_frame(&mut reader, &mut buf) {}
                });
                let template = if i % 4 == 0 { vo } else { fc };
                let start = Instant::now();
                let mut done = 0u64;
                let mut corr = 0i32;
                while Instant::now() < deadline {
                    let due = (start.elapsed().as_secs_f64() * per_conn) as u64;
                    while done < due {
                        corr = corr.wrapping_add(1);
                        if s.write_all(&with_corr(&template, 8, corr)).is_err() {
                            return;
                        }
                        done += 1;
                    }
                    std::thread::sleep(Duration::from_micros(500));
                }
                sent.fetch_add(done, Ordering::Relaxed);
                // Let the last answers arrive, then close.
                std::thread::sleep(Duration::from_millis(300));
                let _ = s.shutdown(std::net::Shutdown::Both);
                let _ = answers.join();
            })
        })
        .collect();
    for w in workers {
        let _ = w.join();
    }
    let (req, resp) = (sent.load(Ordering::Relaxed), served.load(Ordering::Relaxed));
    println!("{} messages ({req} requests, {resp} responses)", req + resp);
}
