//! Loading Kafka's schemas from a kafka-clients jar (the 4.4.0 one when found the way
//! kwire finds jars): reading the zip, stripping comments, parsing all 203 files.

use criterion::{Criterion, criterion_group, criterion_main};
use kwire::capture::Source;
use kwire::codec::{self, Codec, DecodeOptions, Schemas, Search, read_source};
use kwire::pipeline::{self, Config};
use std::hint::black_box;
use std::ops::ControlFlow;

fn bench(c: &mut Criterion) {
    let jars = Search::from_env(Vec::new()).paths().0;
    let Some(jar) = jars
        .iter()
        .find(|p| p.to_string_lossy().ends_with("kafka-clients-4.4.0.jar"))
        .or(jars.first())
    else {
        eprintln!("SKIP: no kafka-clients jar found");
        return;
    };
    eprintln!("loading {}", jar.display());
    c.bench_function("load_kafka_clients_jar", |b| {
        b.iter(|| {
            let (list, problems) = read_source(black_box(jar)).unwrap();
            let mut s = Schemas::builtin();
            s.add("jar", list);
            black_box((s, problems))
        })
    });
}

/// Every message of a bundled capture (KRaft Fetch, Vote, BeginQuorumEpoch, ...) decoded with the
/// jars' schemas, through the whole pipeline.
fn decode(c: &mut Criterion) {
    let loaded = Search::from_env(Vec::new()).load();
    if loaded.schemas.sources().is_empty() {
        eprintln!("SKIP: no kafka-clients jar found");
        return;
    }
    let _ = codec::install(Codec::new(loaded.schemas, DecodeOptions::default()));
    let file = "captures/kraft-reelection.pcap";
    let mut g = c.benchmark_group("decode_with_jar_schemas");
    let mut messages = 0u64;
    g.bench_function(file, |b| {
        b.iter(|| {
            let mut src = Source::open_file(file).unwrap();
            let mut bodies = 0u64;
            let (stats, _) = pipeline::run(&mut src, Config::default(), &mut |r| {
                bodies += u64::from(r.msg.body.is_some());
                ControlFlow::Continue(())
            });
            messages = stats.messages.values().sum();
            black_box(bodies)
        })
    });
    g.finish();
    eprintln!("{file}: {messages} messages per iteration");
}

criterion_group!(benches, bench, decode);
criterion_main!(benches);
