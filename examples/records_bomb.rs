//! Decompression bombs for `scripts`-style memory checks: a batch of 10 240
//! records of 1 MiB (10 GiB decompressed) in gzip, zstd or lz4, decoded with
//! the default 64 MiB cap as the JSON view does. Run under `/usr/bin/time -v`
//! to see the peak RSS: `cargo run --release --example records_bomb -- zstd`;
//! add `decode` to decode without writing JSON (whose hex is twice the payload).

use kwire::records::encode::{BatchSpec, RecordSpec};
use kwire::records::{Compression, Options, SnappyForm, json};
use std::time::Instant;

fn main() {
    let codec = match std::env::args().nth(1).as_deref() {
        Some("gzip") => Compression::Gzip,
        Some("lz4") => Compression::Lz4,
        _ => Compression::Zstd,
    };
    let n = 10 * 1024;
    let mut rec = Vec::new();
    RecordSpec::new(0, None, Some(&vec![0u8; 1 << 20])).encode(&mut rec);
    let one = kwire::records::encode::compress(codec, &rec);
    let data = if codec == Compression::Lz4 {
        // One LZ4 frame (Kafka reads one), its blocks repeated.
        let (head, rest) = one.split_at(7);
        [head.to_vec(), rest[..rest.len() - 4].repeat(n), vec![0; 4]].concat()
    } else {
        one.repeat(n)
    };
    let spec = BatchSpec {
        compression: codec,
        snappy: SnappyForm::Xerial,
        record_count: Some(n as i32),
        ..Default::default()
    };
    let field = spec.encode_with(&data);
    let start = Instant::now();
    if std::env::args().nth(2).as_deref() == Some("decode") {
        drop(data);
        let e = kwire::records::decode(&field, &Options::default());
        if let Some(kwire::records::Entry::Batch(b)) = e.first() {
            println!(
                "{}: {} records decoded in {:.2} s; {:?}",
                codec.name(),
                b.records.len(),
                start.elapsed().as_secs_f64(),
                b.error
            );
        }
        return;
    }
    let mut out = Vec::new();
    json::write(&mut out, Some(&field), &Options::default());
    let v: serde_json::Value = serde_json::from_slice(&out).unwrap_or_default();
    println!(
        "{}: {} compressed bytes claiming {} records of 1 MiB; {} records shown in {:.2} s; {}",
        codec.name(),
        field.len(),
        n,
        v[0]["Records"].as_array().map_or(0, Vec::len),
        start.elapsed().as_secs_f64(),
        v[0]["Error"]
    );
}
