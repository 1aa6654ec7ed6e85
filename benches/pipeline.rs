//! The pipeline stage by stage, on the benchmark traffic of `kwire::synth::corpus`:
//! reading the pcap, IP + TCP, Kafka framing + pairing, decoding (whole, and lazily as a
//! summary line asks), and each output format, each fed the previous stage's output held
//! in memory, so each number is that stage's alone. Throughput is per Kafka message: criterion's `elem/s`, and
//! ns/message is one second over it.
//!
//! `mixed` is Vote and FindCoordinator at every version (built-in schemas); `records`
//! is Produce and Fetch with record batches, and runs only when a kafka-clients jar is
//! found (as `kwire` finds it). `cargo bench --bench pipeline -- mixed/` runs one.

use criterion::{BenchmarkGroup, Criterion, Throughput, criterion_group, criterion_main};
use kwire::capture::Source;
use kwire::capture::writer::{PcapWriter, TsPrecision};
use kwire::dissect::{Record, dissect, dissect_with};
use kwire::kafka::{KafkaConfig, KafkaMessage, Sessions};
use kwire::net::{Decoder, DefragConfig};
use kwire::synth::corpus::{self, Spec};
use kwire::tcp::{Reassembler, Stamp, StreamEvent, TcpConfig};
use kwire::view::{json, summary, tree};
use kwire::{Codec, DecodeOptions, Search};
use std::hint::black_box;
use std::time::Duration;

const MESSAGES: u64 = 20_000;

/// A stream event, owning its bytes.
struct Event {
    packet: u64,
    ts_ns: i64,
    ev: StreamEvent<'static>,
    data: Vec<u8>,
}

impl Event {
    fn get(&self) -> StreamEvent<'_> {
        self.ev.attach(&self.data)
    }
}

fn own(packet: u64, ts_ns: i64, ev: StreamEvent<'_>) -> Event {
    let (ev, data) = ev.detach();
    let data = data.to_vec();
    Event {
        packet,
        ts_ns,
        ev,
        data,
    }
}

/// A framed message, owning its bytes.
struct Framed {
    msg: KafkaMessage<'static>,
    data: Vec<u8>,
}

impl Framed {
    fn get(&self) -> KafkaMessage<'_> {
        copy(&self.msg, &self.data)
    }
}

/// `m` over other bytes.
fn copy<'a>(m: &KafkaMessage<'_>, data: &'a [u8]) -> KafkaMessage<'a> {
    KafkaMessage {
        conn: m.conn,
        packet: m.packet,
        ts_ns: m.ts_ns,
        src: m.src,
        dst: m.dst,
        kind: m.kind,
        data,
        wire_size: m.wire_size,
        cut: m.cut,
        api: m.api,
        request_packet: m.request_packet,
        latency_ns: m.latency_ns,
        warnings: m.warnings.clone(),
        stream_end: m.stream_end,
    }
}

/// One corpus, held at every stage's input.
struct Corpus {
    pcap: tempfile::NamedTempFile,
    packets: Vec<(i64, Vec<u8>)>,
    events: Vec<Event>,
    framed: Vec<Framed>,
    first_ts: i64,
}

fn net_tcp(packets: &[(i64, Vec<u8>)], mut each: impl FnMut(u64, i64, StreamEvent<'_>)) {
    let mut net = Decoder::new(DefragConfig::default());
    let mut reasm = Reassembler::new(TcpConfig::default());
    let link = corpus::LINK.linktype();
    let mut last = (0, 0);
    for (k, (ts, p)) in packets.iter().enumerate() {
        let number = k as u64 + 1;
        last = (number, *ts);
        let Some(seg) = net.decode(link, p, p.len() as u32, *ts) else {
            continue;
        };
        let at = Stamp {
            packet: number,
            ts_ns: *ts,
            file: 0,
        };
        reasm.push_at(at, &seg, &mut |ev| each(number, *ts, ev));
    }
    reasm.finish(&mut |ev| each(last.0, last.1, ev));
}

fn framing(events: &[Event], mut each: impl FnMut(&KafkaMessage<'_>)) {
    let mut s = Sessions::new(KafkaConfig::default());
    let mut last = (0, 0);
    for e in events {
        last = (e.packet, e.ts_ns);
        s.on_event(e.packet, e.ts_ns, e.get(), &mut each);
    }
    s.finish(last.0, last.1, &mut each);
}

impl Corpus {
    fn new(generate: impl FnOnce(&mut corpus::Sink<'_>) -> std::io::Result<u64>) -> Corpus {
        let mut packets = Vec::new();
        generate(&mut |ts, p| {
            packets.push((ts, p.to_vec()));
            Ok(())
        })
        .unwrap();
        let pcap = tempfile::NamedTempFile::new().unwrap();
        let mut w = PcapWriter::new(
            std::io::BufWriter::new(pcap.as_file()),
            corpus::LINK.linktype() as u32,
            TsPrecision::Micro,
            65535,
        )
        .unwrap();
        for (ts, p) in &packets {
            w.write_packet(*ts, p).unwrap();
        }
        drop(w);
        let mut events = Vec::new();
        net_tcp(&packets, |n, ts, ev| events.push(own(n, ts, ev)));
        let mut framed = Vec::new();
        framing(&events, |m| {
            framed.push(Framed {
                msg: copy(m, &[]),
                data: m.data.to_vec(),
            })
        });
        let first_ts = packets.first().map_or(0, |p| p.0);
        Corpus {
            pcap,
            packets,
            events,
            framed,
            first_ts,
        }
    }

    fn records(&self) -> Vec<Record<'_>> {
        self.framed
            .iter()
            .map(|f| dissect(&f.get(), self.first_ts))
            .collect()
    }
}

fn stages(g: &mut BenchmarkGroup<'_, criterion::measurement::WallTime>, c: &Corpus) {
    let n = c.framed.len() as u64;
    g.throughput(Throughput::Elements(n));
    g.bench_function("read_pcap", |b| {
        b.iter(|| {
            let mut src = Source::open_file(c.pcap.path()).unwrap();
            let mut bytes = 0usize;
            while let Some(p) = src.next_packet() {
                bytes += black_box(p.unwrap().data).len();
            }
            bytes
        })
    });
    g.bench_function("net_tcp", |b| {
        b.iter(|| {
            let mut events = 0usize;
            net_tcp(&c.packets, |_, _, ev| {
                black_box(&ev);
                events += 1;
            });
            events
        })
    });
    g.bench_function("framing_pairing", |b| {
        b.iter(|| {
            let mut msgs = 0usize;
            framing(&c.events, |m| {
                black_box(m);
                msgs += 1;
            });
            msgs
        })
    });
    g.bench_function("decode_full", |b| {
        b.iter(|| {
            let mut nodes = 0usize;
            for f in &c.framed {
                nodes += black_box(dissect(&f.get(), c.first_ts))
                    .msg
                    .tree
                    .nodes
                    .len();
            }
            nodes
        })
    });
    // The lazy decode a summary line asks for: its fields built, the rest walked and checked.
    let need = kwire::apis::summary_need();
    g.bench_function("decode_summary", |b| {
        b.iter(|| {
            let mut nodes = 0usize;
            for f in &c.framed {
                nodes += black_box(dissect_with(&f.get(), c.first_ts, &need))
                    .msg
                    .tree
                    .nodes
                    .len();
            }
            nodes
        })
    });
    let records = c.records();
    let mut out: Vec<u8> = Vec::with_capacity(1 << 20);
    g.bench_function("format_summary", |b| {
        b.iter(|| {
            out.clear();
            let mut line = String::new();
            for r in &records {
                line.clear();
                summary::write_line(&mut line, r);
                line.push('\n');
                out.extend_from_slice(line.as_bytes());
            }
            out.len()
        })
    });
    g.bench_function("format_json", |b| {
        b.iter(|| {
            out.clear();
            for r in &records {
                json::write_record(&mut out, r);
            }
            out.len()
        })
    });
    g.bench_function("format_tree", |b| {
        b.iter(|| {
            out.clear();
            let mut text = String::new();
            for r in &records {
                text.clear();
                tree::write_record(&mut text, r);
                out.extend_from_slice(text.as_bytes());
            }
            out.len()
        })
    });
}

fn bench(cr: &mut Criterion) {
    let spec = Spec {
        messages: MESSAGES,
        connections: 256,
        seed: 1,
    };
    // Kafka's schemas, as `kwire` loads them, for Produce and Fetch.
    let loaded = Search::from_env(Vec::new()).load();
    let have_jars = !loaded.schemas.sources().is_empty();
    let codec = Codec::new(loaded.schemas, DecodeOptions::default());
    let _ = kwire::install_codec(codec);

    let mixed = Corpus::new(|sink| corpus::mixed(spec, sink));
    let mut g = cr.benchmark_group("mixed");
    g.sample_size(10).measurement_time(Duration::from_secs(3));
    stages(&mut g, &mixed);
    g.finish();
    drop(mixed);

    if !have_jars {
        eprintln!("SKIP records: no kafka-clients jar found");
        return;
    }
    let records = Corpus::new(|sink| corpus::records(&codec, spec, sink));
    let mut g = cr.benchmark_group("records");
    g.sample_size(10).measurement_time(Duration::from_secs(3));
    stages(&mut g, &records);
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
