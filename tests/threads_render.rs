//! `kwire::run_rendered` on worker threads hands the caller's thread exactly what one
//! thread does: the same bytes in the same order, the same counters, the same stop. The
//! captures here make the one state a message's output reads from earlier ones, topic
//! names, change all the time: Metadata responses name (and rename) topic ids, Fetch
//! requests and responses carry only the ids, over many batches, with eviction. Needs a
//! kafka-clients jar (the encoder and the decoder read its schemas): without one these
//! tests SKIP loudly, and fail under `CI=true`.

mod common;

use common::{loaded, skip};

use common::pcap_packets;
use kwire::codec::{self, Search};
use kwire::synth::kafka::Rng;
use kwire::synth::{Flow, Link};
use kwire::{Config, Hooks, Record, Render, Rendered, RunStats, Source};
use serde_json::json;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::ops::ControlFlow;
use std::path::Path;

const IDS: usize = 60;

fn id(i: usize) -> String {
    format!("6a2f3b4c-5d6e-4f70-8192-{:012x}", 0xa3b4c5d6e700 + i)
}

/// Metadata responses naming a few ids each (names change every 2,000 exchanges),
/// Fetch v13 requests and responses carrying ids only, on many connections.
fn capture(exchanges: usize) -> Vec<(i64, Vec<u8>)> {
    let c = codec::current();
    let mut rng = Rng::new(11);
    let mut flows: Vec<Flow> = (0..40u16)
        .map(|i| {
            let client =
                SocketAddr::new(IpAddr::V4(Ipv4Addr::new(10, 1, 0, i as u8 + 1)), 41000 + i);
            let server = SocketAddr::new(IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1)), 9092);
            Flow::new(client, server)
        })
        .collect();
    let mut ts: i64 = 1_764_441_600_000_000_000;
    let mut out = Vec::new();
    let mut take = |flow: &mut Flow, out: &mut Vec<(i64, Vec<u8>)>| {
        for (_, p) in flow.drain_packets() {
            ts += 3_000;
            out.push((ts, p));
        }
    };
    for f in flows.iter_mut() {
        f.syn_handshake();
        take(f, &mut out);
    }
    for n in 0..exchanges {
        let Some(flow) = flows.get_mut(rng.below(40) as usize) else {
            continue;
        };
        let corr = n as i32;
        let generation = n / 2000;
        let picked: Vec<usize> = (0..1 + rng.below(3))
            .map(|_| rng.below(IDS as u64) as usize)
            .collect();
        if rng.below(6) == 0 {
            let topics: Vec<_> = picked
                .iter()
                .map(|&i| {
                    json!({"ErrorCode": 0, "Name": format!("topic-{i}-g{generation}"), "TopicId": id(i),
                        "Partitions": []})
                })
                .collect();
            flow.client_send(
                &c.encode_request(3, 12, corr, Some("c"), &json!({"Topics": null}))
                    .unwrap(),
            );
            flow.server_send(
                &c.encode_response(
                    3,
                    12,
                    corr,
                    &json!({"Brokers": [], "ControllerId": 1, "Topics": topics}),
                )
                .unwrap(),
            );
        } else {
            let topics: Vec<_> = picked
                .iter()
                .map(|&i| json!({"TopicId": id(i), "Partitions": [{"Partition": 0, "FetchOffset": n}]}))
                .collect();
            let answers: Vec<_> = picked
                .iter()
                .map(|&i| json!({"TopicId": id(i), "Partitions": [{"PartitionIndex": 0, "HighWatermark": n}]}))
                .collect();
            flow.client_send(
                &c.encode_request(
                    1,
                    13,
                    corr,
                    Some("c"),
                    &json!({"MaxWaitMs": 500, "Topics": topics}),
                )
                .unwrap(),
            );
            flow.server_send(
                &c.encode_response(1, 13, corr, &json!({"Responses": answers}))
                    .unwrap(),
            );
        }
        take(flow, &mut out);
    }
    out
}

/// Every view of a message, as the bytes a run hands over.
struct AllViews;

/// Messages this long are "too long to render whole" here, as a printer says of one
/// whose output would be.
const LONG: usize = 1 << 20;

impl Render for AllViews {
    fn render(&self, r: &Record<'_>, out: &mut Vec<u8>) -> Option<Rendered> {
        // Something appended first: what was appended must be dropped.
        out.extend_from_slice(b"partial");
        if r.data.len() > LONG {
            return None;
        }
        out.truncate(out.len() - b"partial".len());
        let mut text = kwire::view::summary::line(r);
        text.push('\n');
        text.push_str(&kwire::view::tree::record(r));
        out.extend_from_slice(text.as_bytes());
        kwire::view::json::write_record(out, r);
        Some(Rendered {
            shown: true,
            note: None,
        })
    }
}

/// [`AllViews`] written as text (see [`Render::text`]): the same bytes.
struct AllViewsAsText;

impl Render for AllViewsAsText {
    fn render(&self, _: &Record<'_>, _: &mut Vec<u8>) -> Option<Rendered> {
        unreachable!("a text renderer is asked for text")
    }

    fn text(&self) -> bool {
        true
    }

    fn render_text(&self, r: &Record<'_>, out: &mut String) -> Option<Rendered> {
        // Something appended first: what was appended must be dropped.
        out.push_str("partial");
        if r.data.len() > LONG {
            return None;
        }
        out.truncate(out.len() - "partial".len());
        let mut bytes = Vec::new();
        AllViews.render(r, &mut bytes)?;
        out.push_str(std::str::from_utf8(&bytes).unwrap());
        Some(Rendered {
            shown: true,
            note: None,
        })
    }
}

/// What the caller's thread was handed, in order.
#[derive(Default)]
struct Taken {
    bytes: Vec<u8>,
    messages: u64,
    /// Handed whole rather than rendered (longer than `RENDER_MAX`).
    whole: u64,
    stop_after: Option<u64>,
    /// Takes runs of messages at once ([`Hooks::rendered_all`]) when no stop is set.
    runs: bool,
    /// Runs so taken.
    taken_runs: u64,
}

impl Taken {
    fn counted(&mut self) -> ControlFlow<()> {
        self.messages += 1;
        if self.stop_after.is_some_and(|n| self.messages >= n) {
            return ControlFlow::Break(());
        }
        ControlFlow::Continue(())
    }
}

impl Hooks for Taken {
    fn message(&mut self, r: &Record<'_>) -> ControlFlow<()> {
        self.whole += u64::from(r.data.len() > LONG);
        let mut text = kwire::view::summary::line(r);
        text.push('\n');
        text.push_str(&kwire::view::tree::record(r));
        self.bytes.extend_from_slice(text.as_bytes());
        kwire::view::json::write_record(&mut self.bytes, r);
        self.counted()
    }

    fn rendered(&mut self, bytes: &[u8], r: &Rendered) -> ControlFlow<()> {
        assert!(r.shown);
        self.bytes.extend_from_slice(bytes);
        self.counted()
    }

    fn rendered_all(&mut self, bytes: &[u8], messages: u64) -> Option<ControlFlow<()>> {
        if !self.runs || self.stop_after.is_some() {
            return None;
        }
        self.bytes.extend_from_slice(bytes);
        self.messages += messages;
        self.taken_runs += 1;
        Some(ControlFlow::Continue(()))
    }
}

fn config(threads: usize) -> Config {
    let mut cfg = Config {
        threads,
        ..Config::default()
    };
    // Fewer ids than the capture names: names are forgotten and learned again.
    cfg.topics.max_ids = 25;
    cfg
}

fn rendered(path: &Path, threads: usize, stop_after: Option<u64>) -> (Taken, RunStats) {
    rendered_by(&AllViews, path, threads, stop_after)
}

fn rendered_by(
    render: &dyn Render,
    path: &Path,
    threads: usize,
    stop_after: Option<u64>,
) -> (Taken, RunStats) {
    taken_by(render, path, threads, stop_after, false)
}

fn taken_by(
    render: &dyn Render,
    path: &Path,
    threads: usize,
    stop_after: Option<u64>,
    runs: bool,
) -> (Taken, RunStats) {
    let mut source = Source::open_file(path).unwrap();
    let mut taken = Taken {
        stop_after,
        runs,
        ..Taken::default()
    };
    let (stats, end) = kwire::run_rendered(&mut source, config(threads), &mut taken, render);
    assert!(matches!(end, kwire::End::Complete), "{end:?}");
    (taken, stats)
}

/// The reference: one thread, each record handed to `message` and rendered there.
fn plain(path: &Path) -> (Taken, RunStats) {
    let mut source = Source::open_file(path).unwrap();
    let mut taken = Taken::default();
    let (stats, _) = kwire::run_with(&mut source, config(1), &mut taken);
    (taken, stats)
}

#[test]
fn topic_names_come_out_the_same_on_workers() {
    if !loaded() {
        return skip("no kafka-clients jar found");
    }
    let file = pcap_packets(Link::Ethernet, &capture(12_000));
    let (want, want_stats) = plain(file.path());
    assert_eq!(want.messages, 24_000);
    let text = String::from_utf8_lossy(&want.bytes);
    // Names were learned, renamed and forgotten along the way, and shown.
    let t = want_stats.topics;
    assert!(t.learned > 100 && t.evicted > 50, "{t:?}");
    assert!(text.contains("(topic \"topic-") && text.contains("-g5\")"));
    // Taken one by one, and in runs where the hooks can (on workers, where a message
    // that waited for the names was rendered after the batch's others).
    for (threads, render, runs) in [1, 2, 3].into_iter().flat_map(|t| {
        let renders: [&dyn Render; 2] = [&AllViews, &AllViewsAsText];
        renders
            .into_iter()
            .flat_map(move |r| [(t, r, false), (t, r, true)])
    }) {
        let (got, stats) = taken_by(render, file.path(), threads, None, runs);
        let as_text = render.text();
        assert_eq!(got.whole, 0);
        assert_eq!(got.taken_runs > 0, runs && threads > 1, "{threads} threads");
        assert_eq!(got.messages, want.messages, "{threads} threads, {as_text}");
        assert!(
            got.bytes == want.bytes,
            "{threads} threads, {as_text}, {runs}: the bytes differ"
        );
        assert_eq!(stats.topics, want_stats.topics, "{threads} threads");
        assert_eq!(kwire::report_text(&stats), kwire::report_text(&want_stats));
    }
}

#[test]
fn a_stop_on_workers_stops_where_one_thread_does() {
    if !loaded() {
        return skip("no kafka-clients jar found");
    }
    let file = pcap_packets(Link::Ethernet, &capture(6_000));
    for n in [1, 2_500, 7_001] {
        let (one, s1) = rendered(file.path(), 1, Some(n));
        let (two, s2) = rendered(file.path(), 2, Some(n));
        assert_eq!((one.messages, two.messages), (n, n));
        assert!(one.bytes == two.bytes, "stop at {n}: the bytes differ");
        assert_eq!(s1.messages, s2.messages, "stop at {n}");
        assert_eq!(s1.topics, s2.topics, "stop at {n}");
    }
}

/// A message the renderer finds too long to render whole is handed to `message` on the
/// caller's thread, in its place among the others; `kwire read` does that with a record
/// batch whose NDJSON is longer than it holds, and prints the same as on one thread.
#[test]
fn a_long_message_is_rendered_on_the_callers_thread() {
    if !loaded() {
        return skip("no kafka-clients jar found");
    }
    use kwire::records::encode::{BatchSpec, RecordSpec};
    let c = codec::current();
    let value = vec![b'x'; LONG + 1000];
    let batch = BatchSpec {
        records: vec![RecordSpec::new(0, Some(b"k"), Some(&value))],
        ..BatchSpec::default()
    }
    .encode();
    let hex: String = batch.iter().map(|b| format!("{b:02x}")).collect();
    let mut f = common::flow();
    for corr in 0..3 {
        let produce = json!({"TransactionalId": null, "Acks": 1, "TimeoutMs": 1000,
            "TopicData": [{"Name": "big", "PartitionData": [{"Index": 0, "Records": hex}]}]});
        f.client_send(&c.encode_request(0, 9, corr, Some("p"), &produce).unwrap());
        f.client_send(
            &c.encode_request(3, 12, 100 + corr, Some("p"), &json!({"Topics": null}))
                .unwrap(),
        );
    }
    let file = common::pcap(&[&f]);
    let (want, _) = plain(file.path());
    assert_eq!(want.messages, 6);
    for (threads, render, runs) in [
        (1, &AllViews as &dyn Render, false),
        (2, &AllViews, false),
        (2, &AllViews, true),
        (1, &AllViewsAsText, false),
        (2, &AllViewsAsText, false),
        (2, &AllViewsAsText, true),
    ] {
        let (got, _) = taken_by(render, file.path(), threads, None, runs);
        assert_eq!((got.messages, got.whole), (6, 3), "{threads} threads");
        assert!(
            got.bytes == want.bytes,
            "{threads} threads: the bytes differ"
        );
    }
    let jar = Search::from_env(Vec::new())
        .paths()
        .0
        .into_iter()
        .next()
        .unwrap();
    let jar = jar.to_str().unwrap();
    let path = file.path().to_str().unwrap();
    for format in ["json", "tree", "summary"] {
        let run = |threads| {
            let args = [
                "read",
                "-q",
                "--schemas",
                jar,
                "--format",
                format,
                "--threads",
                threads,
                path,
            ];
            let out = std::process::Command::new(env!("CARGO_BIN_EXE_kwire"))
                .args(args)
                .output()
                .unwrap();
            assert!(out.status.success(), "{args:?}");
            out.stdout
        };
        let one = run("1");
        assert!(one == run("2"), "{format}: the output differs");
        // The printer's own choice: the big batches' NDJSON is too long to hold whole.
        let printer = kwire::Printer::new(
            if format == "json" {
                kwire::Format::Json
            } else {
                kwire::Format::Tree
            },
            kwire::Selection::default(),
            None,
            false,
        );
        let mut said = Vec::new();
        let mut source = Source::open_file(file.path()).unwrap();
        kwire::run(&mut source, config(1), &mut |r| {
            said.push(printer.look().render(r, &mut Vec::new()));
            ControlFlow::Continue(())
        });
        let long = if format == "json" { None } else { Some(true) };
        assert_eq!(
            said,
            [long, Some(true), long, Some(true), long, Some(true)],
            "{format}"
        );
        if format == "json" {
            assert!(one.len() > 3 * LONG, "{format}: {} bytes", one.len());
        }
    }
}

/// A printer's text render ([`kwire::Look::render_text`], what `kwire read` writes in
/// place) says and appends exactly what its bytes render does, after other text too,
/// for each text format, in colour, and with a choice of messages.
#[test]
fn a_looks_text_is_its_bytes() {
    if !loaded() {
        return skip("no kafka-clients jar found");
    }
    let file = pcap_packets(Link::Ethernet, &capture(300));
    let chosen = || kwire::Selection::new(&["Fetch".to_string()], None).unwrap();
    let all = Default::default;
    let printers = [
        (kwire::Format::Summary, all(), false, false),
        (kwire::Format::Summary, all(), true, false),
        (kwire::Format::Summary, chosen(), false, true),
        (kwire::Format::Tree, all(), false, false),
        (kwire::Format::Tree, chosen(), false, true),
    ];
    for (format, select, color, chooses) in printers {
        let printer = kwire::Printer::new(format, select, None, false).with_color(color);
        let look = printer.look();
        assert!(look.is_text());
        let mut source = Source::open_file(file.path()).unwrap();
        let (mut shown, mut left_out) = (0, 0);
        kwire::run_with(
            &mut source,
            config(1),
            &mut TextIsBytes {
                look,
                need: printer.need(),
                shown: &mut shown,
                left_out: &mut left_out,
            },
        );
        assert!(shown > 100, "{format:?} {color} {chooses}: {shown}");
        assert_eq!(left_out > 10, chooses, "{format:?} {color}: {left_out}");
    }
}

struct TextIsBytes<'a> {
    look: &'a kwire::Look,
    need: kwire::Need,
    shown: &'a mut u32,
    left_out: &'a mut u32,
}

impl Hooks for TextIsBytes<'_> {
    fn message(&mut self, r: &Record<'_>) -> ControlFlow<()> {
        let mut bytes = b"before\n".to_vec();
        let said = self.look.render(r, &mut bytes);
        let mut text = "before\n".to_string();
        assert_eq!(self.look.render_text(r, &mut text), said);
        assert!(text.as_bytes() == bytes, "{text}");
        *self.shown += u32::from(said == Some(true));
        *self.left_out += u32::from(said == Some(false));
        ControlFlow::Continue(())
    }

    fn need(&self) -> kwire::Need {
        self.need.clone()
    }
}
