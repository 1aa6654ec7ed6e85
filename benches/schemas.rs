//! Loading Kafka's schemas from a kafka-clients jar (the 4.4.0 one when found the way
//! kwire finds jars): reading the zip, stripping comments, parsing all 203 files.

use criterion::{Criterion, criterion_group, criterion_main};
use kwire::codec::{Schemas, Search, load};
use std::hint::black_box;

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
            let (list, problems) = load::read_source(black_box(jar)).unwrap();
            let mut s = Schemas::builtin();
            s.add("jar", list);
            black_box((s, problems))
        })
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
