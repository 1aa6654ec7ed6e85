//! The run on several threads. The caller's thread reads the source, decodes IP and
//! reassembles TCP, and runs the hooks (`poll`, `packet`, `message`, `rendered`); a second
//! thread runs the rest of the [`Front`] (TLS, Kafka framing and pairing). The split is where
//! the two threads' work comes out about even. Without a renderer, the caller's thread also
//! runs [`deliver`] (dissect, topic names, counters). With one ([`super::run_rendered`]),
//! worker threads dissect and render whole batches of frames, and the caller's thread
//! hands their bytes to the hooks in order.
//!
//! The source and the hooks stay together because `Hooks::poll` takes the source, and a
//! sink's stop must end the reading at once. The stream events of each batch of packets go
//! to the front together (their bytes copied into one buffer, with the batch's link/IP and
//! TCP counters), and each batch comes back as one numbered batch of the Kafka frames it
//! finished (a frame lying whole in the batch's bytes is not copied: those bytes come along;
//! any other is copied likewise), so messages are delivered in the order they complete,
//! as on one thread. Buffers go back and forth and are reused. At most [`IN_FLIGHT`] batches
//! are out at once, so memory stays flat. Once a sink stops, the batches read past that
//! point are not looked at (nor counted), as on one thread.
//!
//! Topic names are the one state that earlier messages change and a message's output
//! reads. A worker dissects its batch; only if a message of it carries a topic id does it
//! wait for its turn (every earlier batch has seen the names), and render those after.

use super::{
    Back, Carried, Config, Counted, End, Front, Hooks, Render, RenderBuf, Rendered,
    RunStats, deliver,
};
use crate::capture::{CaptureError, Source};
use crate::codec::{self, Message, Need};
use crate::dissect::{Record, TlsTag, dissect_with};
use crate::kafka::KafkaMessage;
use crate::net::{Decoder, NetStats};
use crate::proto::Kind;
use crate::tcp::{ConnId, DataHead, Reassembler, Stamp, StreamEvent, TcpStats};
use crate::topics::{IdNames, TopicNames, TopicNamesStats};
use crossbeam_channel::{Receiver, Sender, bounded};
use std::collections::{BTreeMap, BTreeSet};
use std::net::SocketAddr;
use std::ops::ControlFlow;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::Duration;

/// Batches sent to the front and not yet back.
const IN_FLIGHT: usize = 4;
/// A batch of packets is sent when it holds this many packets or bytes. Its rendered
/// output is held until its turn (a tree is some 20 times its record batches' bytes), so
/// the bytes stay small enough for peak memory to stay flat.
const BATCH_PACKETS: usize = 1024;
const BATCH_BYTES: usize = 64 << 10;
/// A buffer that grew past this (a huge frame) is not kept for reuse.
const KEEP_BYTES: usize = 4 << 20;
/// How long a live read may wait when nothing is pending (as on one thread).
const LIVE_WAIT: Duration = Duration::from_millis(100);

/// Packets read, in order, taken through IP and TCP on the caller's thread (which has
/// more room than the front's): the stream events they released, their bytes in one buffer.
#[derive(Default)]
struct Packets {
    bytes: Vec<u8>,
    items: Vec<Held>,
    /// Packets read into this batch.
    read: u64,
    /// The last of them: its number, time and input.
    last: Stamp,
    /// The time of the run's first packet.
    first: i64,
    /// What decoding them counted.
    net: NetStats,
    /// TCP's counters once these packets were taken (the whole run's so far).
    tcp: Option<TcpStats>,
}

/// One stream event of a [`Packets`] batch. Bytes, the common case, are kept small (their
/// stamp is their own); any other event is kept (boxed: they are few) with the packet
/// `at` that released it.
enum Held {
    /// [`StreamEvent::Data`] without its bytes, which are at `start..end` of the batch's.
    Data {
        head: DataHead,
        start: usize,
        end: usize,
    },
    Other(Box<(Stamp, StreamEvent<'static>)>),
}

impl Packets {
    /// An empty batch with room for a full one, so the first batches do not grow step by step.
    fn with_room() -> Packets {
        Packets {
            bytes: Vec::with_capacity(BATCH_BYTES + 2048),
            items: Vec::with_capacity(BATCH_PACKETS),
            ..Packets::default()
        }
    }

    /// Counts packet `at` (the run's first at `first`).
    fn note(&mut self, at: Stamp, first: i64) {
        self.read += 1;
        self.last = at;
        self.first = first;
    }

    /// Keeps an event released while packet `at` was handled.
    fn event(&mut self, at: Stamp, ev: StreamEvent<'_>) {
        let held = match ev.split() {
            Ok((head, data)) => {
                let start = self.bytes.len();
                self.bytes.extend_from_slice(data);
                Held::Data {
                    head,
                    start,
                    end: self.bytes.len(),
                }
            }
            Err(other) => Held::Other(Box::new((at, other))),
        };
        self.items.push(held);
    }

    fn full(&self) -> bool {
        self.read >= BATCH_PACKETS as u64 || self.bytes.len() >= BATCH_BYTES
    }

    fn is_empty(&self) -> bool {
        self.read == 0 && self.items.is_empty()
    }

    fn clear(&mut self) {
        self.items.clear();
        self.bytes.clear();
        self.read = 0;
        self.net = NetStats::default();
        self.tcp = None;
        if self.bytes.capacity() > KEEP_BYTES {
            self.bytes = Vec::new();
        }
    }
}

impl Held {
    /// The event, its bytes (if any) in `bytes`, and the packet it goes with (for bytes,
    /// their own).
    fn event<'b>(&self, bytes: &'b [u8]) -> (Stamp, StreamEvent<'b>) {
        match self {
            Held::Data { head, start, end } => {
                (head.at, head.event(bytes.get(*start..*end).unwrap_or_default()))
            }
            Held::Other(b) => (b.0, b.1.attach(&[])),
        }
    }
}

/// The Kafka frames one batch of packets finished, in order. Most lie whole in the
/// batch's own bytes, which come along (moved, not copied); the others' bytes are copied
/// into one buffer.
#[derive(Default)]
struct Frames {
    /// The batch's place in the run, from 0.
    seq: u64,
    bytes: Vec<u8>,
    /// The bytes of the batch of packets (see [`Packets::bytes`]).
    shared: Vec<u8>,
    items: Vec<Frame>,
}

/// A [`KafkaMessage`] with its bytes in [`Frames::shared`] or [`Frames::bytes`], and what
/// carried it.
struct Frame {
    /// The bytes are in [`Frames::shared`].
    in_shared: bool,
    conn: ConnId,
    packet: u64,
    ts_ns: i64,
    src: SocketAddr,
    dst: SocketAddr,
    kind: Kind,
    start: usize,
    end: usize,
    wire_size: u64,
    cut: bool,
    api: Option<(i16, i16)>,
    request_packet: Option<u64>,
    latency_ns: Option<i64>,
    stream_end: u64,
    /// The input file it came from.
    file: u32,
    first: i64,
    /// Its warnings and TLS tag, when it has any (rarely: kept out of line so a frame
    /// stays small to push and move).
    extra: Option<Box<Extra>>,
}

/// What few frames carry besides the common fields.
#[derive(Default)]
struct Extra {
    warnings: Vec<String>,
    tls: Option<TlsTag>,
}

impl Frames {
    /// An empty batch with room for what a batch of packets mostly finishes.
    fn with_room() -> Frames {
        Frames {
            seq: 0,
            bytes: Vec::new(),
            // Swapped with the batch of packets' bytes, so it goes back to the reader
            // with the room a batch needs.
            shared: Vec::with_capacity(BATCH_BYTES + 2048),
            // A batch of packets mostly finishes fewer frames than it has packets.
            items: Vec::with_capacity(BATCH_PACKETS),
        }
    }

    /// Adds a frame; its bytes are not copied when they lie in `shared` (the batch of
    /// packets' bytes, which become [`Frames::shared`]).
    // Once per frame, from one closure: in line it saves the call's register saves.
    #[inline(always)]
    fn push(&mut self, f: &KafkaMessage<'_>, carried: Carried, first: i64, shared: &[u8]) {
        let (in_shared, start, end) = match offset_in(shared, f.data) {
            Some(at) => (true, at, at + f.data.len()),
            None => {
                let start = self.bytes.len();
                self.bytes.extend_from_slice(f.data);
                (false, start, self.bytes.len())
            }
        };
        self.items.push(Frame {
            in_shared,
            conn: f.conn,
            packet: f.packet,
            ts_ns: f.ts_ns,
            src: f.src,
            dst: f.dst,
            kind: f.kind,
            start,
            end,
            wire_size: f.wire_size,
            cut: f.cut,
            api: f.api,
            request_packet: f.request_packet,
            latency_ns: f.latency_ns,
            extra: (!f.warnings.is_empty() || carried.tls.is_some()).then(|| {
                Box::new(Extra {
                    warnings: f.warnings.clone(),
                    tls: carried.tls,
                })
            }),
            file: carried.file,
            stream_end: f.stream_end,
            first,
        });
    }

    /// Delivers every frame to `sink`, in order, and empties the batch for reuse.
    fn deliver(&mut self, back: &mut Back, sink: &mut dyn FnMut(&Record<'_>) -> ControlFlow<()>) {
        for mut item in self.items.drain(..) {
            let f = item.message(&self.bytes, &self.shared);
            deliver(&f, item.carried(), item.first, back, sink);
        }
        self.clear();
    }

    fn clear(&mut self) {
        self.items.clear();
        for b in [&mut self.bytes, &mut self.shared] {
            b.clear();
            if b.capacity() > KEEP_BYTES {
                *b = Vec::new();
            }
        }
    }
}

/// Where `part` starts in `whole`, if it lies there.
fn offset_in(whole: &[u8], part: &[u8]) -> Option<usize> {
    let at = (part.as_ptr() as usize).checked_sub(whole.as_ptr() as usize)?;
    let end = at.checked_add(part.len())?;
    (!part.is_empty() && end <= whole.len()).then_some(at)
}

impl Frame {
    /// Its TLS tag, taken.
    fn take_tls(&mut self) -> Option<TlsTag> {
        self.extra.as_mut().and_then(|e| e.tls.take())
    }

    /// What carried it, the TLS tag taken.
    fn carried(&mut self) -> Carried {
        Carried {
            tls: self.take_tls(),
            file: self.file,
        }
    }

    /// The frame as the front handed it over, its bytes in `bytes` or `shared`; the
    /// warnings move into it.
    fn message<'b>(&mut self, bytes: &'b [u8], shared: &'b [u8]) -> KafkaMessage<'b> {
        let bytes = if self.in_shared { shared } else { bytes };
        KafkaMessage {
            conn: self.conn,
            packet: self.packet,
            ts_ns: self.ts_ns,
            src: self.src,
            dst: self.dst,
            kind: self.kind,
            data: bytes.get(self.start..self.end).unwrap_or_default(),
            wire_size: self.wire_size,
            cut: self.cut,
            api: self.api,
            request_packet: self.request_packet,
            latency_ns: self.latency_ns,
            warnings: self
                .extra
                .as_mut()
                .map(|e| std::mem::take(&mut e.warnings))
                .unwrap_or_default(),
            stream_end: self.stream_end,
        }
    }
}

impl Frame {
    /// [`Record::undecoded`] of [`Frame::message`], made straight from the frame (a
    /// worker's per-message path): its warnings are copied, and stay in the frame for
    /// the caller's thread, should it dissect the message again.
    #[inline]
    fn record<'b>(&self, bytes: &'b [u8], shared: &'b [u8]) -> Record<'b> {
        let bytes = if self.in_shared { shared } else { bytes };
        Record {
            packet: self.packet,
            ts_ns: self.ts_ns,
            first_ts_ns: self.first,
            conn: self.conn,
            src: self.src,
            dst: self.dst,
            data: bytes.get(self.start..self.end).unwrap_or_default(),
            wire_size: self.wire_size,
            cut: self.cut,
            api: self.api,
            request_packet: self.request_packet,
            latency_ns: self.latency_ns,
            warnings: match &self.extra {
                Some(e) if !e.warnings.is_empty() => e.warnings.clone(),
                _ => Vec::new(),
            },
            msg: Message::new(self.kind),
            version_source: None,
            file: self.file,
            topic_names: IdNames::default(),
            tls: None,
        }
    }
}

/// One batch of frames after a worker: each message's bytes, in order.
#[derive(Default)]
struct Output {
    /// The frames: for those rendered on the caller's thread, then back to the front.
    frames: Frames,
    /// The messages' output, written there directly (text when [`Render::text`]).
    out: RenderBuf,
    /// One per frame, in order.
    items: Vec<Done>,
}

/// What a worker did with one frame.
#[derive(Default)]
struct Done {
    start: usize,
    end: usize,
    rendered: Rendered,
    /// None: too long to render whole on a worker; dissected again on the caller's thread.
    counted: Option<Counted>,
    /// For one rendered on the caller's thread: the names it was given in its turn.
    names: IdNames,
    /// What learning from it counted.
    topics: TopicNamesStats,
}

impl Output {
    /// Hands every message to the hooks, in order, as [`deliver`] does (nothing once
    /// stopped), and empties the batch for reuse.
    fn take(&mut self, back: &mut Back, hooks: &mut dyn Hooks) {
        let Output {
            frames,
            out: buf,
            items,
        } = self;
        let out = buf.as_bytes();
        // Messages whose bytes lie in a row go to the hooks at once, while they take them.
        let mut runs = true;
        let mut i = 0;
        while i < items.len() && !back.stopped {
            let n = if runs { in_a_row(items.get(i..).unwrap_or_default()) } else { 0 };
            if n > 1 {
                let run = items.get(i..i + n).unwrap_or_default();
                let bytes = match (run.first(), run.last()) {
                    (Some(a), Some(z)) => out.get(a.start..z.end).unwrap_or_default(),
                    _ => &[],
                };
                if let Some(flow) = hooks.rendered_all(bytes, n as u64) {
                    for d in run {
                        add_topics(&mut back.worker_topics, &d.topics);
                        if let Some(c) = d.counted {
                            back.count(c);
                        }
                    }
                    back.stopped = flow.is_break();
                    i += n;
                    continue;
                }
                runs = false;
            }
            let Some(d) = items.get_mut(i) else {
                break;
            };
            let d = std::mem::take(d);
            add_topics(&mut back.worker_topics, &d.topics);
            let flow = match d.counted {
                Some(c) => {
                    back.count(c);
                    hooks.rendered(out.get(d.start..d.end).unwrap_or_default(), &d.rendered)
                }
                None => {
                    let Some(item) = frames.items.get_mut(i) else {
                        i += 1;
                        continue;
                    };
                    let f = item.message(&frames.bytes, &frames.shared);
                    let mut r = dissect_with(&f, item.first, &back.need);
                    r.file = item.file;
                    r.topic_names = d.names;
                    r.tls = item.take_tls();
                    back.count(Counted::of(&r));
                    let flow = hooks.message(&r);
                    codec::recycle(std::mem::take(&mut r.msg.tree.nodes));
                    flow
                }
            };
            if flow.is_break() {
                back.stopped = true;
            }
            i += 1;
        }
        items.clear();
        frames.clear();
        buf.clear(KEEP_BYTES);
    }
}

/// Adds what a worker's learning counted.
fn add_topics(t: &mut TopicNamesStats, d: &TopicNamesStats) {
    t.learned += d.learned;
    t.evicted += d.evicted;
    t.too_long += d.too_long;
}

/// How many of `items`, from the first, can go to [`Hooks::rendered_all`] together: each
/// rendered on its worker, shown (or empty) and without a note, their bytes one after the
/// other (a message that waited for the topic names was rendered after its batch's others).
fn in_a_row(items: &[Done]) -> usize {
    let mut at = items.first().map_or(0, |d| d.start);
    items
        .iter()
        .take_while(|d| {
            let ok = d.counted.is_some()
                && d.rendered.note.is_none()
                && d.start == at
                && (d.rendered.shown || d.end == d.start);
            at = d.end;
            ok
        })
        .count()
}

/// Whose turn it is to see the topic names: batches pass in order.
struct Turns {
    state: Mutex<TurnState>,
    turn: Condvar,
}

struct TurnState {
    /// The batch whose turn it is.
    next: u64,
    /// Later batches that had nothing to see and went on.
    passed: BTreeSet<u64>,
    names: TopicNames,
    /// A worker failed: nobody waits any more.
    broken: bool,
}

impl Turns {
    fn new(names: TopicNames) -> Turns {
        Turns {
            state: Mutex::new(TurnState {
                next: 0,
                passed: BTreeSet::new(),
                names,
                broken: false,
            }),
            turn: Condvar::new(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, TurnState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Batch `seq`'s turn: `see` runs once every earlier batch has had its turn; without
    /// it the batch goes by without waiting. False if a worker failed and `see` did not run.
    fn pass(&self, seq: u64, see: Option<&mut dyn FnMut(&mut TopicNames)>) -> bool {
        let mut s = self.lock();
        match see {
            None if s.next != seq => {
                s.passed.insert(seq);
                return true;
            }
            None => {}
            Some(see) => {
                while s.next != seq && !s.broken {
                    s = self.turn.wait(s).unwrap_or_else(|e| e.into_inner());
                }
                if s.broken {
                    return false;
                }
                see(&mut s.names);
            }
        }
        s.next += 1;
        loop {
            let next = s.next;
            if !s.passed.remove(&next) {
                break;
            }
            s.next += 1;
        }
        self.turn.notify_all();
        true
    }
}

/// If a worker unwinds: ends every wait for a turn, stops the run, and sends an empty
/// batch in place of the one it held, so the caller's thread does not wait for it.
struct Unwinding<'u> {
    turns: &'u Turns,
    skip: &'u AtomicBool,
    outputs: Sender<Output>,
    seq: Option<u64>,
}

impl Drop for Unwinding<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.skip.store(true, Ordering::Relaxed);
            self.turns.lock().broken = true;
            self.turns.turn.notify_all();
            if let Some(seq) = self.seq {
                let mut out = Output::default();
                out.frames.seq = seq;
                let _ = self.outputs.try_send(out);
            }
        }
    }
}

/// What every worker shares.
struct Work<'w> {
    need: &'w Need,
    render: &'w dyn Render,
    /// [`Render::text`], asked once.
    text: bool,
    turns: &'w Turns,
    skip: &'w AtomicBool,
}

/// A worker: batches of frames in, each rendered into one [`Output`].
fn worker_thread(
    w: &Work<'_>,
    frames: Receiver<Frames>,
    outputs: Sender<Output>,
    spare: Receiver<Output>,
) {
    let mut unwinding = Unwinding {
        turns: w.turns,
        skip: w.skip,
        outputs: outputs.clone(),
        seq: None,
    };
    for mut batch in frames {
        unwinding.seq = Some(batch.seq);
        let mut out = spare.try_recv().unwrap_or_default();
        if w.skip.load(Ordering::Relaxed) {
            // Nothing more is delivered; the batch still comes back, and passes its turn.
            w.turns.pass(batch.seq, None);
        } else {
            render_batch(w, &mut batch, &mut out);
        }
        out.frames = batch;
        unwinding.seq = None;
        if outputs.send(out).is_err() {
            break;
        }
    }
}

/// Dissects and renders one batch: a message that carries a topic id after the batch's
/// turn, with the names known by then; every other one at once.
fn render_batch(w: &Work<'_>, batch: &mut Frames, out: &mut Output) {
    let Frames {
        seq,
        bytes,
        shared,
        items,
    } = batch;
    let mut waiting: Vec<(usize, Record<'_>)> = Vec::new();
    // Room for the batch's output at once, not grown (and copied) as it fills; a summary
    // line is mostly under this.
    const LINE: usize = 160;
    out.out.reserve(w.text, items.len() * LINE);
    out.items.reserve(items.len());
    for (i, item) in items.iter_mut().enumerate() {
        // Made and decoded in place: the record is large.
        let mut r = item.record(bytes, shared);
        r.decode(w.need);
        out.items.push(Done::default());
        if TopicNames::carries_ids(&r.msg) {
            waiting.push((i, r));
        } else {
            let done = out.items.last_mut();
            finish(w, item, &mut r, done, &mut out.out);
        }
    }
    let seen = if waiting.is_empty() {
        w.turns.pass(*seq, None)
    } else {
        let done = &mut out.items;
        w.turns.pass(
            *seq,
            Some(&mut |names: &mut TopicNames| {
                for (i, r) in waiting.iter_mut() {
                    let before = names.stats();
                    r.topic_names = names.see(&r.msg);
                    let after = names.stats();
                    if let Some(d) = done.get_mut(*i) {
                        d.topics = TopicNamesStats {
                            learned: after.learned - before.learned,
                            evicted: after.evicted - before.evicted,
                            too_long: after.too_long - before.too_long,
                        };
                    }
                }
            }),
        )
    };
    if !seen {
        // A worker failed: the run is ending.
        return;
    }
    for (i, mut r) in waiting {
        if let Some(item) = items.get_mut(i) {
            let done = out.items.get_mut(i);
            finish(w, item, &mut r, done, &mut out.out);
        }
    }
}

/// Renders one dissected message into `out`, or leaves it to the caller's thread when its
/// output is too long to hold whole.
/// The record is borrowed, not moved: it is large.
fn finish(
    w: &Work<'_>,
    item: &mut Frame,
    r: &mut Record<'_>,
    done: Option<&mut Done>,
    out: &mut RenderBuf,
) {
    if let Some(d) = done {
        // Taken for rendering; put back if the caller's thread renders it.
        r.tls = item.take_tls();
        let start = out.len();
        match out.push(w.render, w.text, r) {
            Some(rendered) => {
                d.counted = Some(Counted::of(r));
                (d.start, d.end, d.rendered) = (start, out.len(), rendered);
            }
            None => {
                d.names = std::mem::take(&mut r.topic_names);
                if let Some(tls) = r.tls.take() {
                    item.extra.get_or_insert_default().tls = Some(tls);
                }
            }
        }
    }
    codec::recycle(std::mem::take(&mut r.msg.tree.nodes));
}

/// The front's thread: each batch of packets in, one numbered batch of frames out; when
/// the packets end, the flush as one last batch, then the counters.
fn front_thread(
    cfg: &Config,
    packets: Receiver<Packets>,
    frames: Sender<Frames>,
    spare: Receiver<Frames>,
    used: Sender<Packets>,
    skip: &AtomicBool,
) -> RunStats {
    // Made here: the TLS key source need not move between threads.
    let mut front = Front::new(cfg);
    // TCP runs on the caller's thread: its counters come with the batches.
    let mut tcp = None;
    let mut seq = 0u64;
    for mut batch in packets {
        let mut out = spare.try_recv().unwrap_or_else(|_| Frames::with_room());
        out.seq = seq;
        seq += 1;
        // Once the sink stopped, what was read past that point is not looked at, as on one
        // thread; the batch still comes back, so the reader's count stays right.
        if !skip.load(Ordering::Relaxed) {
            let shared = &batch.bytes;
            let push = &mut |f: &KafkaMessage<'_>, carried, first| {
                out.push(f, carried, first, shared)
            };
            let Front {
                tls,
                sessions,
                net,
                packets,
                first_ts_ns,
                last,
                last_file,
                ..
            } = &mut front;
            if batch.read > 0 {
                first_ts_ns.get_or_insert(batch.first);
                *packets += batch.read;
                *last = (batch.last.packet, batch.last.ts_ns);
                *last_file = batch.last.file;
            }
            net.stats.add(&batch.net);
            if let Some(t) = batch.tcp.take() {
                tcp = Some(t);
            }
            for h in &batch.items {
                if let Held::Data { head, start, end } = h {
                    if tls.is_known_plain(head.conn) {
                        // A plain connection's bytes, straight to Kafka (as `Front::event`
                        // hands them on), without the stream event around them.
                        let data = shared.get(*start..*end).unwrap_or_default();
                        let first = first_ts_ns.unwrap_or(head.at.ts_ns);
                        let ev = (head.conn, head.dir, data);
                        Front::plain_data(sessions, first, ev, head.at, push);
                        continue;
                    }
                }
                let (at, ev) = h.event(shared);
                let first = first_ts_ns.unwrap_or(at.ts_ns);
                Front::event(tls, sessions, first, at, ev, push);
            }
            // The frames' bytes that lie in the batch's go with them; the reader gets the
            // (empty) buffer they had.
            std::mem::swap(&mut out.shared, &mut batch.bytes);
        }
        batch.clear();
        let _ = used.try_send(batch);
        if frames.send(out).is_err() {
            break;
        }
    }
    let mut out = spare.try_recv().unwrap_or_default();
    out.seq = seq;
    let mut stats = front.finish(&mut |f, carried, first| out.push(f, carried, first, &[]));
    let _ = frames.send(out);
    if let Some(tcp) = tcp {
        stats.tcp = tcp;
    }
    stats
}

/// Where finished batches come back to the caller's thread from: the front itself, or
/// the workers (in any order, so they wait in `early` for their turn).
enum Returns<'r> {
    /// Delivered on the caller's thread, rendered there when there is a renderer.
    Front(Receiver<Frames>, Option<&'r dyn Render>),
    Workers {
        outputs: Receiver<Output>,
        early: BTreeMap<u64, Output>,
        next: u64,
        spare: Sender<Output>,
    },
}

impl Returns<'_> {
    /// Takes every batch that is back and next in order; with `wait`, waits for one
    /// at least. The number taken; None once nothing more can come back.
    fn take(
        &mut self,
        wait: bool,
        back: &mut Back,
        hooks: &mut dyn Hooks,
        spare_frames: &Sender<Frames>,
    ) -> Option<usize> {
        let mut taken = 0;
        let mut buf = RenderBuf::default();
        match self {
            Returns::Front(frames, render) => loop {
                let f = if wait && taken == 0 {
                    frames.recv().ok()
                } else {
                    frames.try_recv().ok()
                };
                let Some(mut f) = f else {
                    return (taken > 0 || !wait).then_some(taken);
                };
                match render {
                    Some(render) => {
                        f.deliver(back, &mut super::rendered_sink(hooks, *render, &mut buf))
                    }
                    None => f.deliver(back, &mut |r| hooks.message(r)),
                }
                let _ = spare_frames.try_send(f);
                taken += 1;
            },
            Returns::Workers {
                outputs,
                early,
                next,
                spare,
            } => loop {
                while let Some(mut out) = early.remove(next) {
                    out.take(back, hooks);
                    let frames = std::mem::take(&mut out.frames);
                    let _ = spare_frames.try_send(frames);
                    let _ = spare.try_send(out);
                    *next += 1;
                    taken += 1;
                }
                let out = if wait && taken == 0 {
                    outputs.recv().ok()
                } else {
                    outputs.try_recv().ok()
                };
                let Some(out) = out else {
                    return (taken > 0 || !wait).then_some(taken);
                };
                early.insert(out.frames.seq, out);
            },
        }
    }

    /// Takes everything still to come back.
    fn take_rest(&mut self, back: &mut Back, hooks: &mut dyn Hooks, spare_frames: &Sender<Frames>) {
        while self.take(true, back, hooks, spare_frames).is_some() {}
    }
}

/// [`super::run_with`] and [`super::run_rendered`] on several threads; see the module's
/// comment.
pub(super) fn run(
    source: &mut Source,
    cfg: Config,
    hooks: &mut dyn Hooks,
    render: Option<&dyn Render>,
) -> (RunStats, End) {
    let mut back = Back::new(&cfg);
    back.need = hooks.need();
    let (to_front, packets) = bounded::<Packets>(IN_FLIGHT);
    // One more than the batches in flight: the flush at the end.
    let (frames_tx, frames) = bounded::<Frames>(IN_FLIGHT + 1);
    let (spare_tx, spare) = bounded::<Frames>(IN_FLIGHT + 1);
    let (used_tx, used) = bounded::<Packets>(IN_FLIGHT + 1);
    let (outputs_tx, outputs) = bounded::<Output>(IN_FLIGHT + 1);
    let (spare_out_tx, spare_out) = bounded::<Output>(IN_FLIGHT + 1);
    let skip = AtomicBool::new(false);
    let skip = &skip;
    let turns = Turns::new(TopicNames::new(cfg.topics));
    let need = back.need.clone();
    let cfg = &cfg;
    let work = render.map(|render| Work {
        need: &need,
        render,
        text: render.text(),
        turns: &turns,
        skip,
    });
    let work = work.as_ref();
    // The channels move in, so a panic here drops them and the other threads end.
    std::thread::scope(move |s| {
        let front = std::thread::Builder::new()
            .name("kwire-front".into())
            .spawn_scoped(s, move || front_thread(cfg, packets, frames_tx, spare, used_tx, skip));
        let Ok(front) = front else {
            // No thread to be had: run on this one.
            return super::run_single(source, cfg.clone(), hooks, render);
        };
        let mut workers = 0;
        if let Some(w) = work {
            for n in 0..cfg.threads {
                let (frames, outputs, spare) =
                    (frames.clone(), outputs_tx.clone(), spare_out.clone());
                let made = std::thread::Builder::new()
                    .name(format!("kwire-work-{n}"))
                    .spawn_scoped(s, move || worker_thread(w, frames, outputs, spare));
                workers += usize::from(made.is_ok());
            }
        }
        // Without a worker, the caller's thread renders (or delivers) as with one front.
        let mut returns = if workers == 0 {
            Returns::Front(frames, render)
        } else {
            drop(frames);
            Returns::Workers {
                outputs,
                early: BTreeMap::new(),
                next: 0,
                spare: spare_out_tx,
            }
        };
        drop(outputs_tx);
        let mut end = End::Complete;
        let mut number = 0u64;
        let mut batch = Packets::with_room();
        // IP is decoded here: the counts go with each batch, so the front counts only the
        // packets it looks at, as on one thread.
        let mut net = Decoder::new(cfg.defrag.clone());
        let mut reasm = Reassembler::new(cfg.tcp.clone());
        let mut first_ts = None;
        let mut last_at = Stamp::default();
        let mut in_flight = 0usize;
        loop {
            // What came back is taken once per batch, not per packet: a stop is seen at
            // most one batch of reading later, and that reading is not looked at.
            if batch.is_empty() {
                if let Some(n) = returns.take(false, &mut back, hooks, &spare_tx) {
                    in_flight -= n;
                }
            }
            // Set by a worker that failed, too.
            if back.stopped || skip.load(Ordering::Relaxed) {
                break;
            }
            if hooks.poll(source).is_break() {
                back.stopped = true;
                break;
            }
            // A live read waits only when nothing is pending, so a quiet capture still
            // delivers what it read at once.
            let wait = if batch.is_empty() && in_flight == 0 {
                LIVE_WAIT
            } else {
                Duration::ZERO
            };
            let idle = match source.next_packet_within(wait) {
                None => break,
                Some(Ok(p)) => {
                    number += 1;
                    hooks.packet(number, &p);
                    let ts = p.ts_ns();
                    let first = *first_ts.get_or_insert(ts);
                    let at = Stamp {
                        packet: number,
                        ts_ns: ts,
                        file: p.file,
                    };
                    batch.note(at, first);
                    last_at = at;
                    if let Some(seg) = net.decode(p.linktype, p.data, p.origlen, ts) {
                        reasm.push_at(at, &seg, &mut |ev| batch.event(at, ev));
                    }
                    batch.full()
                }
                Some(Err(CaptureError::Idle)) => true,
                Some(Err(e)) => {
                    end = End::Damaged(e);
                    break;
                }
            };
            if idle && !batch.is_empty() {
                // Never more than IN_FLIGHT out: wait for the oldest first.
                while in_flight >= IN_FLIGHT {
                    match returns.take(true, &mut back, hooks, &spare_tx) {
                        Some(n) => in_flight -= n,
                        None => break,
                    }
                }
                if back.stopped {
                    break;
                }
                batch.net = std::mem::take(&mut net.stats);
                batch.tcp = Some(reasm.stats().clone());
                let next = used.try_recv().unwrap_or_else(|_| Packets::with_room());
                if to_front.send(std::mem::replace(&mut batch, next)).is_err() {
                    break;
                }
                in_flight += 1;
            } else if idle && in_flight > 0 {
                // Nothing to read now: wait for what the front holds.
                if let Some(n) = returns.take(true, &mut back, hooks, &spare_tx) {
                    in_flight -= n;
                }
            }
        }
        if back.stopped {
            skip.store(true, Ordering::Relaxed);
            // What was read past the stop is not looked at.
            net.stats = NetStats::default();
        } else {
            // Every connection is flushed, its events stamped with the last packet, as on
            // one thread; the front then flushes Kafka's.
            reasm.finish(&mut |ev| batch.event(last_at, ev));
            if !batch.is_empty() {
                batch.net = std::mem::take(&mut net.stats);
                batch.tcp = Some(reasm.stats().clone());
                let _ = to_front.send(batch);
            }
        }
        // Datagrams still incomplete are given up on (counted), as on one thread.
        net.finish();
        drop(to_front);
        // Everything still out, then the flush. Once stopped, it only counts.
        returns.take_rest(&mut back, hooks, &spare_tx);
        let front = match front.join() {
            Ok(stats) => stats,
            Err(panic) => std::panic::resume_unwind(panic),
        };
        let mut stats = back.finish(front);
        stats.net.add(&net.stats);
        stats.capture = source.file_stats();
        (stats, end)
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]
mod tests {
    use super::super::{Carried, Config, Hooks, RunStats, run_with};
    use super::Frames;
    use crate::kafka::KafkaMessage;
    use crate::proto::Kind;
    use crate::tcp::ConnId;
    use crate::capture::Source;
    use crate::capture::writer::{PcapWriter, TsPrecision};
    use crate::dissect::Record;
    use crate::net::linktype;
    use crate::synth::kafka::{Coordinator, find_coordinator_request, find_coordinator_response};
    use crate::synth::{Flow, Link, frag_v4};
    use std::ops::ControlFlow;

    #[test]
    fn a_frames_record_is_the_record_of_its_message() {
        // With warnings and without, its bytes in the batch's own or the shared buffer.
        let data = [0u8, 0, 0, 4, 0, 10, 0, 1];
        let shared = data.to_vec();
        for (warnings, in_shared) in [(vec![], false), (vec!["w".to_string()], true)] {
            let f = KafkaMessage {
                conn: ConnId(7),
                packet: 3,
                ts_ns: 5,
                src: "10.0.0.1:1".parse().unwrap(),
                dst: "10.0.0.2:9092".parse().unwrap(),
                kind: Kind::Response,
                data: if in_shared { &shared } else { &data },
                wire_size: 8,
                cut: true,
                api: Some((10, 1)),
                request_packet: Some(2),
                latency_ns: Some(9),
                warnings: warnings.clone(),
                stream_end: 8,
            };
            let mut frames = Frames::default();
            frames.push(&f, Carried { tls: None, file: 1 }, 4, &shared);
            let (bytes, shared, item) = (&frames.bytes, &frames.shared, &mut frames.items[0]);
            let mut direct = item.record(bytes, shared);
            direct.decode(&crate::codec::Need::all());
            let mut general = Record::undecoded(&item.message(bytes, shared), 4, 1, None);
            general.decode(&crate::codec::Need::all());
            assert_eq!(format!("{direct:?}"), format!("{general:?}"));
            assert_eq!(direct.warnings, warnings);
        }
    }

    /// Raw IP packets: Kafka on many connections, some requests IP-fragmented, one
    /// datagram whose last fragment never comes, a segment lost, and a UDP packet.
    fn capture() -> Vec<u8> {
        let mut packets = Vec::new();
        for c in 0..40u8 {
            let client = format!("10.1.0.{}:{}", c + 1, 40000 + u16::from(c));
            let mut flow = Flow::new(client.parse().unwrap(), "10.0.0.1:9092".parse().unwrap())
                .with_link(Link::Raw);
            flow.syn_handshake();
            for n in 0..60i32 {
                let group = "g".repeat(if n % 7 == 0 { 1500 } else { 10 });
                let v = (n % 5) as i16;
                flow.client_send(&find_coordinator_request(v, n, "c", 0, &[group.as_str()]));
                let answer = Coordinator {
                    key: group.clone(),
                    node: 1,
                    host: "broker".into(),
                    port: 9092,
                    error: 0,
                    message: None,
                };
                flow.server_send(&find_coordinator_response(v, n, &[answer]));
            }
            if c == 3 {
                flow.drop_packet(30);
            }
            flow.fin();
            for (i, (_, p)) in flow.into_packets().into_iter().enumerate() {
                if p.len() > 1000 && i % 3 == 0 {
                    let mut frags = frag_v4(&p, 512, i as u16);
                    if c == 5 && i < 60 {
                        frags.pop();
                    }
                    packets.extend(frags);
                } else {
                    packets.push(p);
                }
            }
        }
        // Not TCP: UDP.
        let mut udp = packets[0].clone();
        udp[9] = 17;
        packets.push(udp);
        let mut w = PcapWriter::new(Vec::new(), linktype::RAW as u32, TsPrecision::Nano, 65535)
            .unwrap();
        for (i, p) in packets.iter().enumerate() {
            w.write_packet(1_700_000_000_000_000_000 + i as i64 * 1000, p)
                .unwrap();
        }
        w.into_inner()
    }

    struct Seen(Vec<(u64, u64)>);

    impl Hooks for Seen {
        fn message(&mut self, r: &Record<'_>) -> ControlFlow<()> {
            self.0.push((r.packet, r.wire_size));
            ControlFlow::Continue(())
        }
    }

    fn run(bytes: &[u8], threads: usize) -> (Vec<(u64, u64)>, RunStats) {
        let mut source = Source::from_reader(Box::new(std::io::Cursor::new(bytes.to_vec()))).unwrap();
        let cfg = Config {
            threads,
            ..Config::default()
        };
        let mut seen = Seen(Vec::new());
        let (stats, _) = run_with(&mut source, cfg, &mut seen);
        (seen.0, stats)
    }

    /// IP and TCP run on the reading thread: their counters (fragments given up at the end
    /// included) and the messages are what one thread finds.
    #[test]
    fn link_ip_and_tcp_counts_are_the_same_on_two_threads() {
        let bytes = capture();
        let (one, s1) = run(&bytes, 1);
        let (two, s2) = run(&bytes, 2);
        assert!(one.len() > 4000, "{}", one.len());
        assert_eq!(one, two);
        assert!(s1.net.fragments_reassembled > 0 && s1.net.fragments_timed_out > 0);
        assert!(s1.net.non_tcp > 0 && s1.tcp.gaps > 0);
        assert_eq!(s1.net, s2.net);
        assert_eq!(s1.tcp, s2.tcp);
        assert_eq!(s1.packets, s2.packets);
        assert_eq!(crate::report_text(&s1), crate::report_text(&s2));
    }
}
