//! Record batch throughput: decoding a 1 MiB batch uncompressed and in each
//! codec (records and JSON), and the header-only summary per batch.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use kwire::records::encode::{BatchSpec, RecordSpec};
use kwire::records::summary::Totals;
use kwire::records::{Compression, Options, decode, json};
use std::hint::black_box;

/// 1024 records of 1 KiB text values with a key and a header: 1 MiB of records.
fn batch(codec: Compression) -> (Vec<u8>, usize) {
    let records: Vec<RecordSpec> = (0..1024)
        .map(|i| {
            let value: Vec<u8> = format!("record {i:05} ")
                .bytes()
                .cycle()
                .take(1000)
                .collect();
            RecordSpec::new(i, Some(format!("key-{i}").as_bytes()), Some(&value))
                .header("trace", Some(b"0123456789abcdef"))
        })
        .collect();
    let spec = BatchSpec {
        compression: codec,
        records,
        ..Default::default()
    };
    let raw = spec.raw_records().len();
    (spec.encode(), raw)
}

fn records(c: &mut Criterion) {
    let opts = Options::default();
    let mut g = c.benchmark_group("records");
    for (name, codec) in [
        ("none", Compression::None),
        ("zstd", Compression::Zstd),
        ("gzip", Compression::Gzip),
        ("snappy", Compression::Snappy),
        ("lz4", Compression::Lz4),
    ] {
        let (field, raw) = batch(codec);
        // Throughput counts the uncompressed records, so the two compare.
        g.throughput(Throughput::Bytes(raw as u64));
        g.bench_function(format!("decode_1mib_{name}"), |b| {
            b.iter(|| decode(black_box(&field), &opts))
        });
        let mut out = Vec::with_capacity(4 * raw);
        g.bench_function(format!("json_1mib_{name}"), |b| {
            b.iter(|| {
                out.clear();
                json::write(&mut out, Some(black_box(&field)), &opts);
                out.len()
            })
        });
        g.throughput(Throughput::Elements(1));
        g.bench_function(format!("summary_per_batch_{name}"), |b| {
            b.iter(|| Totals::of(black_box(&field)))
        });
    }
    g.finish();
}

criterion_group!(benches, records);
criterion_main!(benches);
