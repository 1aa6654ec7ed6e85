//! Capture reading throughput: our pcap/pcapng reader against libpcap on the
//! same file, and the cost of reading it compressed.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use kwire::capture::Source;
use kwire::capture::writer::{PcapWriter, PcapngWriter, TsPrecision};
use std::hint::black_box;
use std::io::Write;

const PACKETS: usize = 20_000;

fn packet(i: usize) -> Vec<u8> {
    (0..1000).map(|k| (i + k) as u8).collect()
}

fn files() -> (
    tempfile::NamedTempFile,
    tempfile::NamedTempFile,
    tempfile::NamedTempFile,
) {
    let classic = tempfile::NamedTempFile::new().unwrap();
    let mut w = PcapWriter::new(classic.as_file(), 1, TsPrecision::Micro, 65535).unwrap();
    for i in 0..PACKETS {
        w.write_packet(i as i64 * 1000, &packet(i)).unwrap();
    }
    let ng = tempfile::NamedTempFile::new().unwrap();
    let mut w = PcapngWriter::new(ng.as_file()).unwrap();
    let a = w.add_interface(1, 65535, TsPrecision::Micro).unwrap();
    let b = w.add_interface(101, 65535, TsPrecision::Nano).unwrap();
    for i in 0..PACKETS {
        w.write_packet(if i % 2 == 0 { a } else { b }, i as i64 * 1000, &packet(i))
            .unwrap();
    }
    let gz = tempfile::NamedTempFile::new().unwrap();
    let mut e = flate2::write::GzEncoder::new(gz.as_file(), flate2::Compression::fast());
    e.write_all(&std::fs::read(classic.path()).unwrap())
        .unwrap();
    e.finish().unwrap();
    (classic, ng, gz)
}

fn ours(path: &std::path::Path) -> u64 {
    let mut src = Source::open_file(path).unwrap();
    let mut bytes = 0u64;
    while let Some(p) = src.next_packet() {
        bytes += black_box(p.unwrap().data).len() as u64;
    }
    bytes
}

fn libpcap(path: &std::path::Path) -> u64 {
    let mut cap = pcap::Capture::from_file(path).unwrap();
    let mut bytes = 0u64;
    while let Ok(p) = cap.next_packet() {
        bytes += black_box(p.data).len() as u64;
    }
    bytes
}

fn bench(c: &mut Criterion) {
    let (classic, ng, gz) = files();
    let size = std::fs::metadata(classic.path()).unwrap().len();
    let mut g = c.benchmark_group("capture_read");
    g.throughput(Throughput::Bytes(size));
    g.sample_size(20);
    g.bench_function("ours_pcap", |b| b.iter(|| ours(classic.path())));
    g.bench_function("libpcap_pcap", |b| b.iter(|| libpcap(classic.path())));
    g.bench_function("ours_pcapng_two_interfaces", |b| b.iter(|| ours(ng.path())));
    g.bench_function("ours_pcap_gzip", |b| b.iter(|| ours(gz.path())));
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
