//! Arbitrary bytes as a capture file, read by `pipeline::run` (libpcap, link
//! and IP decoding, reassembly, framing, codec) with every record rendered in
//! every output format: summary, tree and NDJSON (which must parse).
//!
//! The first byte picks how the rest becomes a file:
//! - 0: the bytes are the file (libpcap's own parsing of headers and records);
//! - 1: a classic pcap of packets `[len: u16 LE][caplen: u16 LE][bytes]`;
//! - 2: a pcapng of the same packets, with a block of an unknown type between them;
//! - 3: a valid pcap file header, then the bytes as its records.
//!
//! Byte 1 picks the link type for modes 1–3. The key logs of the recorded TLS
//! captures are configured, so their seeds reach the plaintext Kafka inside.
#![no_main]

use kwire::capture::Source;
use kwire::capture::writer::{PcapWriter, PcapngWriter, TsPrecision};
use kwire::pipeline::{self, Config};
use kwire::tls::KeyLog;
use kwire::view::{json, summary, tree};
use libfuzzer_sys::fuzz_target;
use std::io::Write;
use std::ops::ControlFlow;
use std::path::PathBuf;
use std::sync::OnceLock;

const LINKTYPES: [u32; 10] = [1, 0, 12, 14, 101, 108, 113, 228, 229, 276];

/// One file per process, rewritten for every input.
fn path() -> &'static PathBuf {
    static DIR: OnceLock<tempfile::TempDir> = OnceLock::new();
    static PATH: OnceLock<PathBuf> = OnceLock::new();
    PATH.get_or_init(|| {
        let dir = DIR.get_or_init(|| tempfile::tempdir().unwrap());
        dir.path().join("input.cap")
    })
}

/// The key logs recorded with the TLS captures (test sessions only).
fn keys() -> &'static KeyLog {
    static KEYS: OnceLock<KeyLog> = OnceLock::new();
    KEYS.get_or_init(|| {
        let mut k = KeyLog::parse(include_str!("../../captures/tls-kafka-python.keys"));
        k.merge(KeyLog::parse(include_str!(
            "../../captures/tls-resumption.keys"
        )));
        k.merge(KeyLog::parse(include_str!(
            "../../captures/tls-kraft-election.keys"
        )));
        k
    })
}

/// Splits `[len][caplen][bytes]` records; a short last record takes what is left.
fn packets(mut rest: &[u8]) -> Vec<(usize, &[u8])> {
    let mut out = Vec::new();
    while rest.len() >= 4 {
        let len = usize::from(u16::from_le_bytes([rest[0], rest[1]]));
        let caplen = usize::from(u16::from_le_bytes([rest[2], rest[3]]));
        rest = &rest[4..];
        let take = len.min(rest.len());
        out.push((caplen, &rest[..take]));
        rest = &rest[take..];
    }
    out
}

fn file(data: &[u8]) -> Option<Vec<u8>> {
    let (&mode, rest) = data.split_first()?;
    let (&lt, rest) = rest.split_first().unwrap_or((&0, &[]));
    let linktype = LINKTYPES[usize::from(lt) % LINKTYPES.len()];
    let mut out = Vec::new();
    match mode % 4 {
        0 => out.extend_from_slice(&data[1..]),
        1 => {
            let mut w = PcapWriter::new(&mut out, linktype, TsPrecision::Micro, 65535).ok()?;
            for (i, (caplen, p)) in packets(rest).into_iter().enumerate() {
                let ts = 1_000_000_000 + i as i64 * 1_000_000;
                w.write_packet_truncated(ts, p, caplen).ok()?;
            }
        }
        2 => {
            let mut w = PcapngWriter::new(&mut out).ok()?;
            let iface = w
                .add_interface(linktype as u16, 65535, TsPrecision::Nano)
                .ok()?;
            for (i, (caplen, p)) in packets(rest).into_iter().enumerate() {
                if i % 3 == 1 {
                    w.write_custom_block(0x0BAD_0000 | i as u32, p).ok()?;
                }
                let ts = 1_000_000_000 + i as i64 * 1_000_000;
                w.write_packet_truncated(iface, ts, p, caplen).ok()?;
            }
        }
        _ => {
            PcapWriter::new(&mut out, linktype, TsPrecision::Nano, 65535).ok()?;
            out.extend_from_slice(rest);
        }
    }
    Some(out)
}

fuzz_target!(|data: &[u8]| {
    let Some(bytes) = file(data) else { return };
    let p = path();
    let mut f = std::fs::File::create(p).unwrap();
    f.write_all(&bytes).unwrap();
    drop(f);
    let Ok(mut src) = Source::open_file(p) else {
        return;
    };
    // Small limits, so the fuzzer reaches them.
    let mut cfg = Config::default();
    cfg.tcp.max_connections = 8;
    cfg.tcp.max_buffered_per_direction = 4096;
    cfg.tcp.gap_window = 2048;
    cfg.kafka.max_buffered_per_direction = 4096;
    cfg.kafka.max_pending_per_connection = 4;
    cfg.kafka.max_buffered_total = 16384;
    // The recorded TLS captures' keys, so their seeds (gen_fuzz_seeds takes every
    // capture) are decrypted and the mutations reach the record layer and beyond.
    cfg.keys.extra = keys().clone();
    cfg.tls.max_buffered_total = 32768;
    cfg.tls.tls.trial_budget_bytes = 1 << 20;
    let mut buf = Vec::new();
    let _ = pipeline::run(&mut src, cfg, &mut |r| {
        let _ = summary::line(r);
        let _ = tree::record(r);
        buf.clear();
        json::write_record(&mut buf, r);
        if let Err(e) = serde_json::from_slice::<serde_json::Value>(&buf) {
            panic!(
                "NDJSON line does not parse: {e}: {}",
                String::from_utf8_lossy(&buf)
            );
        }
        ControlFlow::Continue(())
    });
});
