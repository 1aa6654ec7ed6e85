//! Writes `fuzz/corpus/records/`: the records fields of every capture that
//! Kafka's parser read (`captures/records/truth/*.txt`, fields up to 64 KiB),
//! the batches of `fixtures.bin`, and encoder-made batches in every codec.
//!
//! Run: `cargo run --example gen_records_seeds` (deterministic; names are content hashes).

use kwire::capture::Source;
use kwire::pipeline::{self, Config};
use kwire::records::encode::{BatchSpec, RecordSpec};
use kwire::records::{Compression, SnappyForm};
use std::collections::HashMap;
use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::ops::ControlFlow;
use std::path::Path;

const MAX_SEED: usize = 64 << 10;

fn save(dir: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut h = DefaultHasher::new();
    bytes.hash(&mut h);
    std::fs::write(dir.join(format!("{:016x}", h.finish())), bytes)
}

fn kv(line: &str) -> HashMap<&str, &str> {
    line.split(' ').filter_map(|p| p.split_once('=')).collect()
}

fn main() -> std::io::Result<()> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = root.join("fuzz/corpus/records");
    std::fs::create_dir_all(&out)?;
    let truth = root.join("captures/records/truth");
    let mut n = 0;
    for e in std::fs::read_dir(&truth)? {
        let p = e?.path();
        let name = p
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or("")
            .to_string();
        if p.extension().is_none_or(|x| x != "txt")
            || name.starts_with("public-")
            || name == "fixtures"
        {
            continue;
        }
        let pcap = ["captures", "captures/records"]
            .iter()
            .map(|d| root.join(d).join(format!("{name}.pcap")))
            .find(|p| p.exists());
        let Some(pcap) = pcap else { continue };
        let mut frames = HashMap::new();
        let mut src = Source::open_file(&pcap).map_err(std::io::Error::other)?;
        let mut cfg = Config::default();
        cfg.kafka.ports.extend([19301, 19302, 19303, 19392]);
        let _ = pipeline::run(&mut src, cfg, &mut |r| {
            let f = r;
            let key = match f.msg.kind {
                kwire::codec::Kind::Request => (f.src.port(), "req"),
                kwire::codec::Kind::Response => (f.dst.port(), "rsp"),
            };
            if let Some(c) = r.msg.correlation_id {
                frames.insert((key.0, key.1, c), f.data.to_vec());
            }
            ControlFlow::Continue(())
        });
        for line in std::fs::read_to_string(&p)?
            .lines()
            .filter(|l| l.starts_with("FIELD"))
        {
            let k = kv(line);
            let (Some(c), Some(d), Some(corr), Some(at), Some(len)) = (
                k.get("client"),
                k.get("dir"),
                k.get("corr"),
                k.get("at"),
                k.get("len"),
            ) else {
                continue;
            };
            let (Ok(c), Ok(corr), Ok(at), Ok(len)) = (
                c.parse::<u16>(),
                corr.parse::<i32>(),
                at.parse::<usize>(),
                len.parse::<usize>(),
            ) else {
                continue;
            };
            let d = if *d == "req" { "req" } else { "rsp" };
            if let Some(f) = frames.get(&(c, d, corr)) {
                if let Some(field) = f.get(4 + at..4 + at + len) {
                    if !field.is_empty() && field.len() <= MAX_SEED {
                        save(&out, field)?;
                        n += 1;
                    }
                }
            }
        }
    }
    let bin = std::fs::read(truth.join("fixtures.bin"))?;
    for line in std::fs::read_to_string(truth.join("fixtures.txt"))?.lines() {
        let k = kv(line);
        if let (Some(at), Some(len)) = (k.get("at"), k.get("len")) {
            let (at, len): (usize, usize) = (at.parse().unwrap_or(0), len.parse().unwrap_or(0));
            if let Some(field) = bin.get(at..at + len) {
                save(&out, field)?;
                n += 1;
            }
        }
    }
    for codec in [
        Compression::None,
        Compression::Gzip,
        Compression::Snappy,
        Compression::Lz4,
        Compression::Zstd,
    ] {
        for snappy in [SnappyForm::Xerial, SnappyForm::Raw] {
            let spec = BatchSpec {
                compression: codec,
                snappy,
                control: codec == Compression::None && snappy == SnappyForm::Raw,
                records: vec![
                    RecordSpec::new(0, Some(b"k"), Some(b"v")).header("h", None),
                    RecordSpec::marker(true, 1),
                ],
                ..Default::default()
            };
            save(&out, &spec.encode())?;
            n += 1;
        }
    }
    println!("wrote {n} seeds to {}", out.display());
    Ok(())
}
