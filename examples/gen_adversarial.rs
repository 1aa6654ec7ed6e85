//! Writes the full-size hostile captures that `scripts/adversarial-rss.sh`
//! measures (tests/adversarial.rs has the small versions).
//!
//! Run: `cargo run --release --example gen_adversarial -- CASE SCALE OUT.pcap`,
//! where SCALE (a fraction, 1 for full size) shrinks the case, so the script
//! can check that time grows linearly. Cases:
//! - `prefix-2g`: a 2 GB size prefix followed by 2 GB of its "frame" (run with --max-frame 4G);
//! - `prefix-neg`: a -1 size prefix, then 1 GB without a frame boundary;
//! - `array-2g`: 100,000 requests whose array claims 2^31 elements in 20 bytes;
//! - `conns-100k`: 100,000 concurrent connections each holding a partial message;
//! - `tls-partial-20k`: 20,000 concurrent TLS connections (ClientHello, ServerHello),
//!   each leaving 6 KB of a record declared at the 16 KB cap unfinished;
//! - `hole-1g`: a hole never filled, then 1 GB of out-of-order data past it;
//! - `one-dir-1g`: 1 GB on one direction without any frame boundary;
//! - `pending-1m`: 1,000,000 requests never answered;
//! - `frames-15m`: 20 messages of 15 MiB each (just under the per-direction cap), in 1448-byte segments;
//! - `hunt-responses`: 4096 unanswered requests, then 256 MB of responses hunting for a boundary;
//! - `bomb-gzip`, `bomb-zstd`, `bomb-lz4`: one Produce request whose record batch of 10,240
//!   records of 1 MiB (10 GiB decompressed) compresses to about 1 KB per record (run with
//!   `--format json`: every record under the cap is printed).

use kwire::capture::writer::{PcapWriter, TsPrecision};
use kwire::codec::encode_request;
use kwire::records::Compression;
use kwire::records::encode::{BatchSpec, RecordSpec, compress};
use kwire::synth::{Flags, Flow, Link};
use serde_json::json;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::net::SocketAddr;

type Out = PcapWriter<BufWriter<File>>;

const ACK: Flags = Flags {
    syn: false,
    ack: true,
    fin: false,
    rst: false,
};
const GB: u64 = 1 << 30;
/// The largest payload a 64 KiB IPv4 packet carries with 40 bytes of headers.
const JUMBO: usize = 65_000;

fn addr(s: &str) -> SocketAddr {
    s.parse().expect("a literal address")
}

fn flow() -> Flow {
    Flow::new(addr("10.0.0.1:50000"), addr("10.0.0.2:9092"))
}

/// Writes and forgets what the flow recorded so far.
fn drain(f: &mut Flow, w: &mut Out) -> std::io::Result<()> {
    for (ts, p) in f.drain_packets() {
        w.write_packet(ts, &p)?;
    }
    Ok(())
}

/// Sends `total` bytes made by `fill` (given the stream offset) from one side, in `mss` chunks.
fn stream(
    f: &mut Flow,
    w: &mut Out,
    from_client: bool,
    total: u64,
    mss: usize,
    fill: &dyn Fn(u64, &mut [u8]),
) -> std::io::Result<()> {
    let mut buf = vec![0u8; mss];
    let mut sent = 0u64;
    while sent < total {
        let n = mss.min((total - sent) as usize);
        fill(sent, &mut buf[..n]);
        if from_client {
            f.client_send(&buf[..n]);
        } else {
            f.server_send(&buf[..n]);
        }
        sent += n as u64;
        drain(f, w)?;
    }
    Ok(())
}

fn vote_like_request(corr: i32) -> Vec<u8> {
    // An API without a schema: header plus a few raw bytes.
    encode_request(0, 9, corr, Some("flood"), &json!("00000000")).expect("encodes")
}

/// A batch of `n` records of 1 MiB of zeros, compressed one frame (gzip member)
/// per record so that it costs one record's compressed size to make.
fn bomb_batch(codec: Compression, n: usize) -> Vec<u8> {
    let mut rec = Vec::new();
    RecordSpec::new(0, None, Some(&vec![0u8; 1 << 20])).encode(&mut rec);
    let one = compress(codec, &rec);
    let data = if codec == Compression::Lz4 {
        // Kafka reads one LZ4 frame: repeat the blocks inside it (7-byte frame
        // header, 4-byte end mark) instead of whole frames.
        let blocks = &one[7..one.len() - 4];
        [one[..7].to_vec(), blocks.repeat(n), vec![0; 4]].concat()
    } else {
        // gzip members and zstd frames may follow one another.
        one.repeat(n)
    };
    BatchSpec {
        compression: codec,
        record_count: Some(n as i32),
        ..Default::default()
    }
    .encode_with(&data)
}

/// A Produce v3 request carrying `records` for topic `t`, partition 0.
fn produce_v3(corr: i32, records: &[u8]) -> Vec<u8> {
    let mut b = Vec::new();
    b.extend_from_slice(&0i16.to_be_bytes()); // api key
    b.extend_from_slice(&3i16.to_be_bytes()); // version
    b.extend_from_slice(&corr.to_be_bytes());
    b.extend_from_slice(&[0, 4, b'b', b'o', b'm', b'b']); // client id
    b.extend_from_slice(&(-1i16).to_be_bytes()); // transactional id: null
    b.extend_from_slice(&1i16.to_be_bytes()); // acks
    b.extend_from_slice(&30_000i32.to_be_bytes()); // timeout
    b.extend_from_slice(&1i32.to_be_bytes()); // one topic
    b.extend_from_slice(&[0, 1, b't']);
    b.extend_from_slice(&1i32.to_be_bytes()); // one partition
    b.extend_from_slice(&0i32.to_be_bytes());
    b.extend_from_slice(&(records.len() as i32).to_be_bytes());
    b.extend_from_slice(records);
    let mut frame = (b.len() as i32).to_be_bytes().to_vec();
    frame.extend_from_slice(&b);
    frame
}

fn main() -> std::io::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let (Some(case), Some(scale), Some(path)) = (args.get(1), args.get(2), args.get(3)) else {
        eprintln!("usage: gen_adversarial CASE SCALE OUT.pcap");
        std::process::exit(1);
    };
    let scale: f64 = scale.parse().expect("SCALE is a number");
    let n = |full: u64| ((full as f64 * scale) as u64).max(1);
    let out = BufWriter::with_capacity(1 << 20, File::create(path)?);
    let mut w = PcapWriter::new(
        out,
        Link::Ethernet.linktype() as u32,
        TsPrecision::Micro,
        65535,
    )?;
    match case.as_str() {
        "prefix-2g" | "prefix-neg" => {
            let (prefix, len) = if case == "prefix-2g" {
                (i32::MAX, n(2 * GB))
            } else {
                (-1, n(GB))
            };
            let mut f = flow().with_mss(JUMBO);
            f.syn_handshake().client_send(&prefix.to_be_bytes());
            stream(&mut f, &mut w, true, len, JUMBO, &|_, b| b.fill(b'x'))?;
            f.fin();
            drain(&mut f, &mut w)?;
        }
        "array-2g" => {
            let mut b = Vec::new();
            b.extend_from_slice(&10i16.to_be_bytes());
            b.extend_from_slice(&6i16.to_be_bytes());
            b.extend_from_slice(&7i32.to_be_bytes());
            b.extend_from_slice(&[0, 1, b'c', 0, 0, 0x81, 0x80, 0x80, 0x80, 0x08]);
            b.extend_from_slice(&[0u8; 20]);
            let mut frame = (b.len() as i32).to_be_bytes().to_vec();
            frame.extend_from_slice(&b);
            let mut f = flow();
            f.syn_handshake();
            for _ in 0..n(100_000) {
                f.client_send(&frame);
                drain(&mut f, &mut w)?;
            }
            f.fin();
            drain(&mut f, &mut w)?;
        }
        "conns-100k" => {
            let mut req =
                encode_request(0, 9, 1, Some("p"), &json!("00".repeat(984))).expect("encodes");
            req.truncate(100);
            for i in 0..n(100_000) {
                let client = format!(
                    "10.{}.{}.{}:{}",
                    1 + i / 62_500,
                    (i / 250) % 250,
                    i % 250 + 1,
                    20000 + i % 40_000
                );
                let mut f = Flow::new(addr(&client), addr("10.0.0.2:9092"))
                    .with_start(1_000_000_000 + i as i64 * 1000, 1);
                f.syn_handshake().client_send(&req);
                drain(&mut f, &mut w)?;
            }
        }
        "tls-partial-20k" => {
            // TLS 1.3 hellos, then a record declared at the cap of which 6000 bytes come.
            let hello = |typ: u8| {
                let mut body = vec![3, 3];
                body.extend_from_slice(&[typ; 32]);
                body.push(0);
                if typ == 1 {
                    body.extend_from_slice(&[0, 2, 0x13, 0x01, 1, 0]);
                } else {
                    body.extend_from_slice(&[0x13, 0x01, 0, 0, 6, 0, 43, 0, 2, 3, 4]);
                }
                let mut m = vec![typ, 0, 0, body.len() as u8];
                m.extend(body);
                let mut r = vec![22, 3, 3, 0, m.len() as u8];
                r.extend(m);
                r
            };
            let (ch, sh) = (hello(1), hello(2));
            let len = (1usize << 14) + 256;
            let mut partial = vec![23, 3, 3, (len >> 8) as u8, len as u8];
            partial.resize(5 + 6000, 0x5A);
            for i in 0..n(20_000) {
                let client = format!(
                    "10.{}.{}.{}:{}",
                    1 + i / 62_500,
                    (i / 250) % 250,
                    i % 250 + 1,
                    20000 + i % 40_000
                );
                let mut f = Flow::new(addr(&client), addr("10.0.0.2:9093"))
                    .with_start(1_000_000_000 + i as i64 * 1000, 1);
                f.syn_handshake().client_send(&ch).server_send(&sh);
                f.client_send(&partial);
                drain(&mut f, &mut w)?;
            }
        }
        "hole-1g" => {
            let mut f = flow().with_mss(JUMBO);
            f.syn_handshake();
            let (c, s) = f.next_seqs();
            let seg = vec![b'A'; JUMBO];
            let mut off = 1000u64;
            while off < n(GB) {
                f.push_raw(true, c.wrapping_add(off as u32), s, ACK, &seg);
                off += JUMBO as u64;
                drain(&mut f, &mut w)?;
            }
        }
        "one-dir-1g" => {
            let mut f = flow().with_mss(JUMBO);
            f.syn_handshake();
            stream(&mut f, &mut w, true, n(GB), JUMBO, &|_, b| b.fill(b'A'))?;
            f.fin();
            drain(&mut f, &mut w)?;
        }
        "pending-1m" => {
            let mut f = flow();
            f.syn_handshake();
            for corr in 0..n(1_000_000) {
                f.client_send(&vote_like_request(corr as i32));
                drain(&mut f, &mut w)?;
            }
            f.fin();
            drain(&mut f, &mut w)?;
        }
        "frames-15m" => {
            let size = 15 << 20;
            let mut f = flow().with_mss(1448);
            f.syn_handshake();
            for corr in 0..n(20) {
                let body = "00".repeat(size - 20);
                let req =
                    encode_request(0, 9, corr as i32, Some("p"), &json!(body)).expect("encodes");
                for chunk in req.chunks(1 << 20) {
                    f.client_send(chunk);
                    drain(&mut f, &mut w)?;
                }
            }
            f.fin();
            drain(&mut f, &mut w)?;
        }
        "hunt-responses" => {
            let mut f = flow().with_mss(JUMBO);
            f.syn_handshake();
            for corr in 0..4096 {
                f.client_send(&vote_like_request(corr));
            }
            drain(&mut f, &mut w)?;
            // A bad prefix loses framing; then sizes that look plausible at every offset.
            f.server_send(&(-1i32).to_be_bytes());
            stream(&mut f, &mut w, false, n(256 << 20), JUMBO, &|_, b| {
                // 00 10 00 01 repeated: at 3 offsets in 4 a plausible size, and a
                // correlation id (0x00100001, 0x00010010, 0x01001000) no request used.
                for (i, x) in b.iter_mut().enumerate() {
                    *x = [0, 0x10, 0, 1][i % 4];
                }
            })?;
            f.fin();
            drain(&mut f, &mut w)?;
        }
        "bomb-gzip" | "bomb-zstd" | "bomb-lz4" => {
            let codec = match case.as_str() {
                "bomb-gzip" => Compression::Gzip,
                "bomb-zstd" => Compression::Zstd,
                _ => Compression::Lz4,
            };
            let batch = bomb_batch(codec, n(10 * 1024) as usize);
            let mut f = flow().with_mss(JUMBO);
            f.syn_handshake();
            f.client_send(&produce_v3(1, &batch));
            f.fin();
            drain(&mut f, &mut w)?;
        }
        other => {
            eprintln!("unknown case {other}");
            std::process::exit(1);
        }
    }
    w.into_inner().flush()
}
