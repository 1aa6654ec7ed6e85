//! The driver: packets through every stage to decoded records, one at a time.
//!
//! Only per-connection state is held, never the file, so memory does not grow
//! with the capture.
#![cfg_attr(
    not(test),
    deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)
)]

use crate::capture::FileStats;
use crate::capture::{CaptureError, Packet, Source};
use crate::codec::{self, Need};
use crate::dissect::{Record, TlsRecord, TlsTag, VersionSource};
use crate::kafka::{Confirm, KafkaConfig, KafkaMessage, KafkaStats, Sessions};
use crate::net::{Decoder, DefragConfig, NetStats};
use crate::proto::Kind;
use crate::tcp::{ConnId, Dir, Reassembler, Stamp, StreamEvent, TcpConfig, TcpStats};
use crate::tls::layer::{LayerConfig, TlsLayer, TlsView};
use crate::tls::{KeyConfig, TlsStats};
use crate::topics::{TopicNames, TopicNamesConfig, TopicNamesStats};
use std::collections::BTreeMap;
use std::ops::ControlFlow;

mod threaded;

/// Everything counted in a run, for the end-of-run report.
#[derive(Clone, Debug, Default)]
pub struct RunStats {
    pub packets: u64,
    /// What the file readers skipped and counted (None when live).
    pub capture: Option<FileStats>,
    pub net: NetStats,
    pub tcp: TcpStats,
    pub kafka: KafkaStats,
    /// TLS connections by outcome, and the TLS layer's counters.
    pub tls: TlsStats,
    /// Messages per (API name, kind).
    pub messages: BTreeMap<(String, &'static str), u64>,
    pub inferred: u64,
    pub malformed: u64,
    pub warned: u64,
    /// Topic ids named from earlier responses.
    pub topics: TopicNamesStats,
}

/// Limits for every stage.
#[derive(Clone, Debug)]
pub struct Config {
    /// Threads a run uses: 1 runs every stage on the caller's thread; 2 (or more) runs TLS
    /// and Kafka framing on a second one (see [`run_with`]).
    pub threads: usize,
    pub defrag: DefragConfig,
    pub tcp: TcpConfig,
    pub kafka: KafkaConfig,
    pub topics: TopicNamesConfig,
    pub tls: LayerConfig,
    /// Where TLS session keys come from.
    pub keys: KeyConfig,
}

/// Memory and plausibility limits (see docs/limits.md).
#[derive(Clone, Debug, clap::Args)]
pub struct Limits {
    /// Connections tracked at once; the least recently used is evicted.
    #[arg(long, default_value_t = 65536)]
    pub max_connections: usize,
    /// Bytes buffered per direction (out-of-order data, and one partial frame).
    #[arg(long, default_value = "16M", value_parser = parse_size)]
    pub max_buffer: usize,
    /// Out-of-order bytes buffered over all connections.
    #[arg(long, default_value = "1G", value_parser = parse_size)]
    pub max_buffer_total: usize,
    /// Bytes of partial Kafka frames held over all connections.
    #[arg(long, default_value = "256M", value_parser = parse_size)]
    pub max_frames_total: usize,
    /// Out-of-order bytes waited for past a hole before skipping it.
    #[arg(long, default_value = "8M", value_parser = parse_size)]
    pub gap_window: usize,
    /// Requests awaiting a response per connection.
    #[arg(long, default_value_t = 4096)]
    pub max_pending: usize,
    /// Largest Kafka frame taken as plausible.
    #[arg(long, default_value = "128M", value_parser = parse_size)]
    pub max_frame: usize,
    /// Topic ids whose names are remembered (learned from earlier responses).
    #[arg(long, default_value_t = 100_000)]
    pub max_topic_ids: usize,
    /// Only treat the given ports as Kafka; do not detect it elsewhere.
    #[arg(long)]
    pub no_detect: bool,
    /// Connections silent this long are forgotten; live capture only (default 300).
    #[arg(long, value_name = "SECS")]
    pub idle_timeout: Option<f64>,
    /// Decompressed bytes allowed per record batch; decompression stops there.
    #[arg(long, default_value = "64M", value_parser = parse_size)]
    pub max_decompressed: usize,
    /// Records shown per record batch (the counts stay exact); 0 decompresses nothing.
    #[arg(long, value_name = "N")]
    pub max_records: Option<usize>,
}

/// Bytes with an optional K, M or G suffix (binary multiples).
pub fn parse_size(s: &str) -> Result<usize, String> {
    let t = s.trim().to_ascii_uppercase();
    let (num, mult) = [('K', 1usize << 10), ('M', 1 << 20), ('G', 1 << 30)]
        .into_iter()
        .find_map(|(suffix, mult)| Some((t.strip_suffix(suffix)?, mult)))
        .unwrap_or((t.as_str(), 1));
    num.parse::<usize>()
        .ok()
        .and_then(|n| n.checked_mul(mult))
        .ok_or_else(|| format!("{s:?} is not a size (e.g. 65536, 64K, 16M, 1G)"))
}

impl Limits {
    /// The pipeline's configuration: these limits, plus `ports` always taken as Kafka. A live
    /// capture forgets connections idle past `--idle-timeout`; a file keeps them to its end.
    pub fn config(&self, port: &[u16], live: bool) -> Config {
        // The views decode record batches with these, wherever they print.
        crate::records::set_limits(
            self.max_decompressed,
            self.max_records.unwrap_or(usize::MAX),
        );
        config(port, self, live)
    }
}

impl Default for Config {
    fn default() -> Self {
        Config {
            threads: 1,
            defrag: DefragConfig::default(),
            tcp: TcpConfig::default(),
            kafka: KafkaConfig::default(),
            topics: TopicNamesConfig::default(),
            tls: LayerConfig::default(),
            keys: KeyConfig::default(),
        }
    }
}

fn config(port: &[u16], l: &Limits, live: bool) -> Config {
    let mut ports = KafkaConfig::default().ports;
    ports.extend(port);
    Config {
        threads: 1,
        tcp: TcpConfig {
            max_buffered_per_direction: l.max_buffer,
            max_buffered_total: l.max_buffer_total,
            max_connections: l.max_connections.max(1),
            gap_window: l.gap_window,
            idle_timeout_ns: live.then(|| (l.idle_timeout.unwrap_or(300.0).max(0.0) * 1e9) as u64),
            ..TcpConfig::default()
        },
        defrag: DefragConfig::default(),
        tls: LayerConfig {
            server_ports: ports.clone(),
            ..LayerConfig::default()
        },
        keys: KeyConfig::default(),
        kafka: KafkaConfig {
            ports,
            detect: !l.no_detect,
            max_frame: u32::try_from(l.max_frame).unwrap_or(u32::MAX),
            max_buffered_per_direction: l.max_buffer,
            max_pending_per_connection: l.max_pending.max(1),
            max_buffered_total: l.max_frames_total,
            ..KafkaConfig::default()
        },
        topics: TopicNamesConfig {
            max_ids: l.max_topic_ids,
        },
    }
}

/// How a run ended.
#[derive(Debug)]
pub enum End {
    /// The input was read to its end (or the sink asked to stop).
    Complete,
    /// The input was damaged part-way; everything before was processed.
    Damaged(CaptureError),
}

/// Holds the stages' state between packets, so a file and a live capture run the same way.
pub struct Pipeline {
    front: Front,
    back: Back,
}

/// Stages 2 to 4 (IP, TCP, TLS, Kafka framing and pairing): packets in, finished Kafka
/// frames out. In a threaded run, TLS and Kafka run on their own thread, fed the stream
/// events that IP and TCP released on the caller's (see [`threaded`]).
struct Front {
    reasm: Reassembler,
    tls: TlsLayer,
    sessions: Sessions,
    net: Decoder,
    packets: u64,
    first_ts_ns: Option<i64>,
    last: (u64, i64),
    last_file: u32,
}

/// Where the front hands each finished frame: the frame, what carried it, and the
/// capture's first timestamp (for relative times).
type Emit<'e> = &'e mut dyn FnMut(&KafkaMessage<'_>, Carried, i64);

/// API keys counted without a hash look-up (Kafka's keys are all below it).
const TALLIED: usize = 128;

/// Stage 5 on: [`deliver`] (dissect, topic names, counters) and the caller's sink, on the
/// caller's thread.
struct Back {
    stats: RunStats,
    /// Topic id → name, learned in message order (see [`crate::topics`]).
    names: TopicNames,
    stopped: bool,
    /// What the sink reads of each body (see [`Hooks::need`]).
    need: Need,
    /// Messages per (API key, kind), named once at the end rather than per message: keys
    /// below [`TALLIED`] in `by_key` (a counter per kind), any other in `tally`.
    by_key: Vec<[u64; 2]>,
    tally: rustc_hash::FxHashMap<(Option<i16>, Kind), u64>,
    /// What learning topic names counted on worker threads, for the messages taken.
    worker_topics: TopicNamesStats,
}

/// Resync's strongest evidence: a hunted candidate that decodes completely
/// under its schema, with no bytes left over.
fn schema_confirm() -> Confirm {
    Confirm::new(|kind, api, frame| {
        let m = match kind {
            Kind::Request => codec::decode_request(frame),
            Kind::Response => codec::decode_response(frame, Some(api)),
        };
        m.error.is_none() && m.body.is_some() && m.warnings.is_empty()
    })
}

impl Front {
    fn new(cfg: &Config) -> Self {
        // An unreadable key log was reported by the caller; the run goes on without it.
        let keys = cfg.keys.open().unwrap_or_else(|_| crate::tls::Keys::none());
        Front {
            reasm: Reassembler::new(cfg.tcp.clone()),
            tls: TlsLayer::new(cfg.tls.clone(), Box::new(keys)),
            sessions: {
                let mut s = Sessions::new(cfg.kafka.clone());
                s.set_confirm(schema_confirm());
                s
            },
            net: Decoder::new(cfg.defrag.clone()),
            packets: 0,
            first_ts_ns: None,
            last: (0, 0),
            last_file: 0,
        }
    }

    /// Feeds one packet (numbered from 1); finished frames go to `out`.
    fn packet(&mut self, number: u64, p: &Packet<'_>, out: Emit<'_>) {
        let ts = p.ts_ns();
        self.note(number, ts, p.file);
        let Some(seg) = self.net.decode(p.linktype, p.data, p.origlen, ts) else {
            return;
        };
        let at = Stamp {
            packet: number,
            ts_ns: ts,
            file: p.file,
        };
        Self::segment(&mut self.reasm, &mut self.tls, &mut self.sessions, self.first_ts_ns, at, &seg, out);
    }

    /// Counts packet `number` (at `ts`, of input `file`), before it is decoded.
    fn note(&mut self, number: u64, ts: i64, file: u32) {
        self.first_ts_ns.get_or_insert(ts);
        self.packets += 1;
        self.last = (number, ts);
        self.last_file = file;
    }

    /// Feeds one decoded TCP segment, carried by the packet `at`; finished frames go to `out`.
    fn segment(
        reasm: &mut Reassembler,
        tls: &mut TlsLayer,
        sessions: &mut Sessions,
        first: Option<i64>,
        at: Stamp,
        seg: &crate::net::TcpSegment<'_>,
        out: Emit<'_>,
    ) {
        let first = first.unwrap_or(at.ts_ns);
        reasm.push_at(at, seg, &mut |ev| {
            Self::event(tls, sessions, first, at, ev, out)
        });
    }

    /// Feeds one stream event, released while packet `at` was handled, to TLS and Kafka;
    /// finished frames go to `out`.
    fn event(
        tls: &mut TlsLayer,
        sessions: &mut Sessions,
        first: i64,
        at: Stamp,
        ev: StreamEvent<'_>,
        out: Emit<'_>,
    ) {
        // Bytes carry the packet that carried them (not the one that
        // released them), so a message is placed at its last byte.
        let at = stamp(&ev, at);
        if tls.passes(&ev) {
            // A plain connection's event, handed on as the TLS layer would (without a view).
            if let StreamEvent::Data {
                conn, dir, data, ..
            } = ev
            {
                return Self::plain_data(sessions, first, (conn, dir, data), at, out);
            }
            let file = at.file;
            let out = &mut |f: &KafkaMessage<'_>| out(f, Carried { tls: None, file }, first);
            return sessions.on_event(at.packet, at.ts_ns, ev, out);
        }
        tls.on_event(at.packet, at.ts_ns, ev, &mut |ev, view| {
            let at = stamp(&ev, at);
            sessions.on_event(at.packet, at.ts_ns, ev, &mut |f| {
                let tls = view.and_then(|v| tls_tag(f, v));
                out(f, Carried { tls, file: at.file }, first);
            });
        });
    }

    /// Bytes of a connection the TLS layer knows to be plain, stamped `at`, fed to Kafka
    /// as [`Front::event`] would hand them on (with no TLS view). Generic over `out`, so
    /// the threaded front's per-frame call to it is direct, not through a second `dyn`.
    fn plain_data(
        sessions: &mut Sessions,
        first: i64,
        (conn, dir, data): (ConnId, Dir, &[u8]),
        at: Stamp,
        out: &mut (impl FnMut(&KafkaMessage<'_>, Carried, i64) + ?Sized),
    ) {
        let out = &mut |f: &KafkaMessage<'_>| out(f, Carried { tls: None, file: at.file }, first);
        sessions.on_data(conn, dir, data, at.packet, at.ts_ns, out);
    }

    /// Flushes every connection into `out` and returns the stages' counters.
    fn finish(mut self, out: Emit<'_>) -> RunStats {
        let (number, ts) = self.last;
        let file = self.last_file;
        let first = self.first_ts_ns.unwrap_or(ts);
        let Front {
            reasm,
            tls,
            sessions,
            ..
        } = &mut self;
        let at = Stamp {
            packet: number,
            ts_ns: ts,
            file,
        };
        reasm.finish(&mut |ev| Self::event(tls, sessions, first, at, ev, out));
        sessions.finish(number, ts, &mut |f| {
            out(f, Carried { tls: None, file }, first);
        });
        self.net.finish();
        RunStats {
            packets: self.packets,
            net: self.net.stats.clone(),
            tcp: self.reasm.stats().clone(),
            kafka: self.sessions.stats().clone(),
            tls: self.tls.stats(),
            ..RunStats::default()
        }
    }
}

impl Back {
    fn new(cfg: &Config) -> Self {
        Back {
            stats: RunStats::default(),
            names: TopicNames::new(cfg.topics),
            stopped: false,
            need: Need::all(),
            by_key: vec![[0; 2]; TALLIED],
            tally: Default::default(),
            worker_topics: TopicNamesStats::default(),
        }
    }

    /// Counts one delivered message. In line: it is a few additions per message.
    #[inline]
    fn count(&mut self, c: Counted) {
        let slot = c
            .api_key
            .and_then(|k| usize::try_from(k).ok())
            .and_then(|k| self.by_key.get_mut(k));
        match slot {
            Some([req, resp]) => match c.kind {
                Kind::Request => *req += 1,
                Kind::Response => *resp += 1,
            },
            None => self.tally_one(c.api_key, c.kind),
        }
        let stats = &mut self.stats;
        stats.inferred += u64::from(c.inferred);
        stats.malformed += u64::from(c.malformed);
        stats.warned += u64::from(c.warned);
    }

    /// [`Back::count`] of a message whose key has no slot of its own: rare, out of line.
    #[cold]
    #[inline(never)]
    fn tally_one(&mut self, key: Option<i16>, kind: Kind) {
        *self.tally.entry((key, kind)).or_default() += 1;
    }

    /// The front's counters with this side's (messages and topic names).
    fn finish(self, front: RunStats) -> RunStats {
        let mut messages = self.stats.messages;
        let mut tally = self.tally;
        for (key, [req, resp]) in self.by_key.into_iter().enumerate() {
            let Ok(key) = i16::try_from(key) else { break };
            for (kind, n) in [(Kind::Request, req), (Kind::Response, resp)] {
                if n > 0 {
                    *tally.entry((Some(key), kind)).or_default() += n;
                }
            }
        }
        for ((key, kind), n) in tally {
            let name = key.map_or_else(|| "unknown".to_string(), crate::proto::api_label);
            *messages.entry((name, kind.as_str())).or_default() += n;
        }
        RunStats {
            messages,
            inferred: self.stats.inferred,
            malformed: self.stats.malformed,
            warned: self.stats.warned,
            topics: {
                let (a, b) = (self.names.stats(), self.worker_topics);
                TopicNamesStats {
                    learned: a.learned + b.learned,
                    evicted: a.evicted + b.evicted,
                    too_long: a.too_long + b.too_long,
                }
            },
            ..front
        }
    }
}

impl Pipeline {
    pub fn new(cfg: Config) -> Self {
        Pipeline {
            front: Front::new(&cfg),
            back: Back::new(&cfg),
        }
    }

    /// Builds of each body only what `need` asks for; records handed to the sink have
    /// that and the verdict of a full decode (the default is everything).
    pub fn set_need(&mut self, need: Need) {
        self.back.need = need;
    }

    /// Whether the sink asked to stop.
    pub fn stopped(&self) -> bool {
        self.back.stopped
    }

    /// Feeds one packet (numbered from 1); finished records go to `sink`.
    pub fn packet(
        &mut self,
        number: u64,
        p: &Packet<'_>,
        sink: &mut dyn FnMut(&Record<'_>) -> ControlFlow<()>,
    ) {
        let Pipeline { front, back } = self;
        front.packet(number, p, &mut |f, carried, first| {
            deliver(f, carried, first, back, sink);
        });
    }

    /// Ends the run: flushes every connection and returns the counters.
    pub fn finish(self, sink: &mut dyn FnMut(&Record<'_>) -> ControlFlow<()>) -> RunStats {
        let Pipeline { front, mut back } = self;
        let front = front.finish(&mut |f, carried, first| {
            deliver(f, carried, first, &mut back, sink);
        });
        back.finish(front)
    }

    /// TLS counters so far (connections still open included).
    pub fn tls_stats(&self) -> TlsStats {
        self.front.tls.stats()
    }
}

/// What a message carried in TLS says about it: version, suite, and the
/// records its bytes came in.
fn tls_tag(f: &KafkaMessage<'_>, v: &TlsView<'_>) -> Option<TlsTag> {
    let version = v.version?;
    let dir = if f.kind == Kind::Request {
        v.client
    } else {
        v.client.reverse()
    };
    let start = f.stream_end.saturating_sub(f.wire_size);
    let records = v
        .records(dir, start, f.stream_end)
        .into_iter()
        .map(|s| TlsRecord {
            seq: s.record.seq,
            stream_offset: s.record.stream_offset,
            wire_len: s.record.wire_len,
            plain_start: s.plain_offset as i64 - start as i64,
            plain_len: s.plain_len,
        })
        .collect();
    Some(TlsTag {
        version: version.as_str(),
        suite: v
            .suite
            .map(crate::tls::crypto::suite_name)
            .unwrap_or_default(),
        records,
    })
}

/// The packet, time and file an event's bytes came in; other events take `at`.
fn stamp(ev: &StreamEvent<'_>, at: Stamp) -> Stamp {
    match ev {
        StreamEvent::Data {
            packet,
            ts_ns,
            file,
            ..
        } => Stamp {
            packet: *packet,
            ts_ns: *ts_ns,
            file: *file,
        },
        _ => at,
    }
}

/// What carried a message besides TCP: the input file, and TLS when decrypted.
struct Carried {
    tls: Option<TlsTag>,
    file: u32,
}

/// What the end-of-run counters take from one message.
#[derive(Clone, Copy, Debug)]
struct Counted {
    api_key: Option<i16>,
    kind: Kind,
    inferred: bool,
    malformed: bool,
    warned: bool,
}

impl Counted {
    fn of(r: &Record<'_>) -> Counted {
        Counted {
            api_key: r.msg.api_key,
            kind: r.msg.kind,
            inferred: r.version_source == Some(VersionSource::Inferred),
            malformed: r.msg.error.is_some(),
            warned: r.has_warnings(),
        }
    }
}

fn deliver(
    f: &KafkaMessage<'_>,
    carried: Carried,
    first: i64,
    back: &mut Back,
    sink: &mut dyn FnMut(&Record<'_>) -> ControlFlow<()>,
) {
    if back.stopped {
        return;
    }
    // Only what the sink reads is built; the verdict counted below is a full decode's.
    // Made and decoded in place: the record is large.
    let mut r = Record::undecoded(f, first, carried.file, carried.tls);
    r.decode(&back.need);
    // Names known before this message; then what it teaches, for the messages after it.
    r.topic_names = back.names.see(&r.msg);
    back.count(Counted::of(&r));
    if sink(&r).is_break() {
        back.stopped = true;
    }
    // The next message's decode reuses this one's node list.
    codec::recycle(std::mem::take(&mut r.msg.tree.nodes));
}

/// Per-message work that may run on several threads at once (see [`run_rendered`]): the
/// bytes a message prints.
pub trait Render: Sync {
    /// Appends what `r` prints to `out` (nothing when it prints nothing). None when the
    /// output is too long to hold whole: the record then goes to [`Hooks::message`] on the
    /// caller's thread (where output can stream out as it is made), and what was appended
    /// is dropped.
    fn render(&self, r: &Record<'_>, out: &mut Vec<u8>) -> Option<Rendered>;

    /// Whether what it renders is UTF-8 text: then [`Render::render_text`] is called in
    /// place of [`Render::render`], and a text is written straight into the buffer that
    /// goes to [`Hooks::rendered`], not made aside and copied there.
    fn text(&self) -> bool {
        false
    }

    /// [`Render::render`] into text (asked only when [`Render::text`] says so). Output
    /// that is not UTF-8 is not altered to fit: `None`, so the caller's thread takes the
    /// message through [`Hooks::message`].
    fn render_text(&self, r: &Record<'_>, out: &mut String) -> Option<Rendered> {
        let mut bytes = Vec::new();
        let done = self.render(r, &mut bytes)?;
        out.push_str(std::str::from_utf8(&bytes).ok()?);
        Some(done)
    }
}

/// A buffer of rendered output: bytes, or text when the renderer writes text (one of
/// the two stays empty).
#[derive(Default)]
pub(crate) struct RenderBuf {
    bytes: Vec<u8>,
    text: String,
}

impl RenderBuf {
    /// Appends `r` as `render` writes it, as text when `text` ([`Render::text`]); on
    /// `None`, what was appended is dropped.
    #[inline]
    pub(crate) fn push(
        &mut self,
        render: &dyn Render,
        text: bool,
        r: &Record<'_>,
    ) -> Option<Rendered> {
        let start = self.len();
        let done = if text {
            render.render_text(r, &mut self.text)
        } else {
            render.render(r, &mut self.bytes)
        };
        if done.is_none() {
            self.text.truncate(start);
            self.bytes.truncate(start);
        }
        done
    }

    /// Bytes held.
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.bytes.len() + self.text.len()
    }

    /// What is held, as bytes.
    #[inline]
    pub(crate) fn as_bytes(&self) -> &[u8] {
        if self.text.is_empty() {
            &self.bytes
        } else {
            self.text.as_bytes()
        }
    }

    /// Room for `n` more bytes of whichever the renderer writes.
    pub(crate) fn reserve(&mut self, text: bool, n: usize) {
        if text {
            self.text.reserve(n);
        } else {
            self.bytes.reserve(n);
        }
    }

    /// Empties it, dropping its room if that grew past `keep`.
    #[inline]
    pub(crate) fn clear(&mut self, keep: usize) {
        self.text.clear();
        self.bytes.clear();
        if self.text.capacity() > keep {
            self.text = String::new();
        }
        if self.bytes.capacity() > keep {
            self.bytes = Vec::new();
        }
    }
}

/// What [`Render::render`] says of a message besides its bytes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Rendered {
    /// Whether the message is shown (a choice may leave it out).
    pub shown: bool,
    /// A line for stderr that the caller says once per run (why a body is not decoded).
    pub note: Option<String>,
}

/// The sink of a rendered run: each message rendered where it is decoded and handed to
/// [`Hooks::rendered`], or to [`Hooks::message`] when too long to render whole.
fn rendered_sink<'h>(
    hooks: &'h mut dyn Hooks,
    render: &'h dyn Render,
    buf: &'h mut RenderBuf,
) -> impl FnMut(&Record<'_>) -> ControlFlow<()> + 'h {
    let text = render.text();
    move |r| {
        let flow = match buf.push(render, text, r) {
            Some(done) => hooks.rendered(buf.as_bytes(), &done),
            None => hooks.message(r),
        };
        // A long message's room is not kept for the next one.
        buf.clear(KEEP_RENDERED);
        flow
    }
}

/// A [`RenderBuf`] that grew past this is not kept for the next message.
const KEEP_RENDERED: usize = 4 << 20;

/// What a caller of [`run_with`] does along the way. Only `message` is required.
pub trait Hooks {
    /// Every decoded message, in the order they complete; `Break` stops the run.
    fn message(&mut self, r: &Record<'_>) -> ControlFlow<()>;

    /// Before each read from the source; `Break` stops the run at once, without flushing
    /// the connections (nothing more is delivered).
    fn poll(&mut self, _source: &mut Source) -> ControlFlow<()> {
        ControlFlow::Continue(())
    }

    /// Each packet read, numbered from 1, before the stages see it.
    fn packet(&mut self, _number: u64, _p: &Packet<'_>) {}

    /// What `message` reads of each body, asked once at the start: the rest is walked
    /// and checked but not built (verdict, warnings and topic names stay exact). The
    /// default is everything.
    fn need(&self) -> Need {
        Need::all()
    }

    /// In a [`run_rendered`]: each message's bytes and what rendering said of it, in the
    /// order they complete (one too long to render whole goes to [`Hooks::message`]
    /// instead); `Break` stops the run.
    fn rendered(&mut self, _bytes: &[u8], _r: &Rendered) -> ControlFlow<()> {
        ControlFlow::Continue(())
    }

    /// In a [`run_rendered`] on worker threads: `messages` in a row, each rendered whole,
    /// shown (or empty) and without a note, as their bytes one after the other. `Some`
    /// when taken as [`Hooks::rendered`] of each in turn would take them (`Break` stops
    /// the run: what they count is counted); `None` (the default), having done nothing,
    /// to be handed them one by one. Saves a call and a copy per message.
    fn rendered_all(&mut self, _bytes: &[u8], _messages: u64) -> Option<ControlFlow<()>> {
        None
    }
}

/// A bare function of each message is a [`Hooks`].
struct Sink<'s>(&'s mut dyn FnMut(&Record<'_>) -> ControlFlow<()>);

impl Hooks for Sink<'_> {
    fn message(&mut self, r: &Record<'_>) -> ControlFlow<()> {
        (self.0)(r)
    }
}

/// Runs a whole source through the pipeline, handing each message to `sink`.
pub fn run(
    source: &mut Source,
    cfg: Config,
    sink: &mut dyn FnMut(&Record<'_>) -> ControlFlow<()>,
) -> (RunStats, End) {
    run_with(source, cfg, &mut Sink(sink))
}

/// The one read loop: the CLI's `read`, `live` and `stats` and the TUI's loader all run on it.
/// With [`Config::threads`] above 1, TLS and Kafka framing run on a second thread
/// (`pipeline/threaded.rs`); the hooks always run on the caller's thread, and see the same calls
/// in the same order.
pub fn run_with(source: &mut Source, cfg: Config, hooks: &mut dyn Hooks) -> (RunStats, End) {
    if cfg.threads > 1 {
        threaded::run(source, cfg, hooks, None)
    } else {
        run_single(source, cfg, hooks, None)
    }
}

/// [`run_with`], with each message turned into bytes by `render`: with [`Config::threads`]
/// above 1, on that many worker threads at once (besides the front's), and the bytes
/// handed to [`Hooks::rendered`] on the caller's thread in the order the messages
/// complete, exactly as on one thread. Topic names are learned in that order too.
pub fn run_rendered(
    source: &mut Source,
    cfg: Config,
    hooks: &mut dyn Hooks,
    render: &dyn Render,
) -> (RunStats, End) {
    if cfg.threads > 1 {
        threaded::run(source, cfg, hooks, Some(render))
    } else {
        run_single(source, cfg, hooks, Some(render))
    }
}

/// Every stage on the caller's thread, one packet at a time.
fn run_single(
    source: &mut Source,
    cfg: Config,
    hooks: &mut dyn Hooks,
    render: Option<&dyn Render>,
) -> (RunStats, End) {
    let mut buf = RenderBuf::default();
    let mut pipe = Pipeline::new(cfg);
    pipe.set_need(hooks.need());
    let mut end = End::Complete;
    let mut number = 0u64;
    while !pipe.stopped() {
        if hooks.poll(source).is_break() {
            pipe.back.stopped = true;
            break;
        }
        match source.next_packet() {
            None => break,
            Some(Ok(p)) => {
                number += 1;
                hooks.packet(number, &p);
                match render {
                    Some(render) => {
                        pipe.packet(number, &p, &mut rendered_sink(hooks, render, &mut buf))
                    }
                    None => pipe.packet(number, &p, &mut |r| hooks.message(r)),
                }
            }
            // A live capture's poll interval passed: look again (stop requests are checked there).
            Some(Err(CaptureError::Idle)) => {}
            Some(Err(e)) => {
                end = End::Damaged(e);
                break;
            }
        }
    }
    // Once stopped, the flush only counts: nothing more is delivered.
    let mut stats = match render {
        Some(render) => pipe.finish(&mut rendered_sink(hooks, render, &mut buf)),
        None => pipe.finish(&mut |r| hooks.message(r)),
    };
    stats.capture = source.file_stats();
    (stats, end)
}

#[cfg(test)]
mod tests {
    use super::{Record, Render, RenderBuf, Rendered};
    use crate::kafka::KafkaMessage;
    use crate::proto::Kind;
    use crate::tcp::ConnId;

    /// Writes fixed bytes, and says it writes text without a text writer of its own.
    struct Fixed(&'static [u8]);

    impl Render for Fixed {
        fn render(&self, _: &Record<'_>, out: &mut Vec<u8>) -> Option<Rendered> {
            out.extend_from_slice(self.0);
            Some(Rendered {
                shown: true,
                note: None,
            })
        }
        fn text(&self) -> bool {
            true
        }
    }

    #[test]
    fn text_is_never_made_up_from_bytes_that_are_not_utf8() {
        let f = KafkaMessage {
            conn: ConnId(1),
            packet: 1,
            ts_ns: 0,
            src: "10.0.0.1:1".parse().unwrap(),
            dst: "10.0.0.2:9092".parse().unwrap(),
            kind: Kind::Request,
            data: &[],
            wire_size: 0,
            cut: true,
            api: None,
            request_packet: None,
            latency_ns: None,
            warnings: Vec::new(),
            stream_end: 0,
        };
        let r = Record::undecoded(&f, 0, 0, None);
        let mut buf = RenderBuf::default();
        assert!(buf.push(&Fixed("é\n".as_bytes()), true, &r).is_some());
        assert_eq!(buf.as_bytes(), "é\n".as_bytes());
        // Not UTF-8: nothing appended, and the caller's thread takes the message.
        assert!(buf.push(&Fixed(b"\xff\n"), true, &r).is_none());
        assert_eq!(buf.as_bytes(), "é\n".as_bytes());
    }
}
