//! Stage 4: Kafka framing and sessions.
//!
//! Turns each connection's ordered byte streams into Kafka frames, tells the
//! client from the server, and pairs every response with its request by
//! correlation id (a response header names neither API nor version).
//!
//! - `detect`: which side is the client, TLS, replay of bytes held meanwhile.
//! - `framer`: one per direction, cutting the stream at size prefixes.
//! - `resync`: hunting for a frame boundary after lost bytes.
//! - `pairing`: pending requests, pairing, unanswered requests, and tentative
//!   frames a hunt passed over, confirmed by Kafka's answer order.
//! - `order`: each connection's messages printed in capture order.
//! - `budget`: the cap on partial-frame bytes over all connections.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

mod budget;
mod detect;
mod framer;
mod order;
mod pairing;
mod ports;
mod resync;
#[cfg(test)]
mod scenarios;
#[cfg(test)]
mod tests;

use crate::proto::Kind;
use crate::tcp::{CloseReason, ConnId, Dir, StreamEvent};
use budget::Budget;
use detect::{Held, Role};
use framer::Framer;
use pairing::Pairing;
pub use ports::PortCounts;
pub use resync::Confirm;
use rustc_hash::FxHashMap as HashMap;
use std::collections::BTreeMap;
use std::net::SocketAddr;

/// Limits and choices for framing and pairing.
#[derive(Clone, Debug)]
pub struct KafkaConfig {
    /// Ports always treated as Kafka (servers listen there).
    pub ports: Vec<u16>,
    /// Recognise Kafka on other ports from the first bytes of a connection.
    pub detect: bool,
    /// Largest size prefix taken as plausible.
    pub max_frame: u32,
    /// Bytes of one partial frame kept per direction; a larger frame keeps only its head.
    pub max_buffered_per_direction: usize,
    /// Bytes kept of a frame too large to buffer, for its header.
    pub oversized_head: usize,
    /// Requests awaiting a response, per connection; the oldest is dropped past this.
    pub max_pending_per_connection: usize,
    /// Bytes looked at to recognise Kafka on an unknown port before giving up.
    pub detect_window: usize,
    /// Partial-frame bytes held over all connections; past it, the connection
    /// that grew drops what it holds and resynchronises.
    pub max_buffered_total: usize,
    /// Bytes of messages held back over all connections so that each
    /// connection's messages come out in capture order while an earlier one may
    /// still be confirmed; past it, the connection that grew prints what it holds.
    pub max_reorder: usize,
}

impl Default for KafkaConfig {
    fn default() -> Self {
        KafkaConfig {
            ports: vec![9092, 9093],
            detect: true,
            max_frame: 128 << 20,
            max_buffered_per_direction: 16 << 20,
            oversized_head: 64 << 10,
            max_pending_per_connection: 4096,
            detect_window: 64 << 10,
            max_buffered_total: 256 << 20,
            max_reorder: 64 << 20,
        }
    }
}

/// One complete (or, at a gap or close, cut) Kafka frame, ready to decode.
#[derive(Debug)]
pub struct KafkaMessage<'a> {
    pub conn: ConnId,
    /// Packet that completed the frame.
    pub packet: u64,
    pub ts_ns: i64,
    pub src: SocketAddr,
    pub dst: SocketAddr,
    pub kind: Kind,
    /// The frame from its size prefix; only the head when `cut`.
    pub data: &'a [u8],
    /// Bytes on the wire, size prefix included.
    pub wire_size: u64,
    /// Not all of the frame is in `data` (too large to keep, or bytes missing).
    pub cut: bool,
    /// Request: from its header. Response: from the paired request.
    pub api: Option<(i16, i16)>,
    pub request_packet: Option<u64>,
    pub latency_ns: Option<i64>,
    pub warnings: Vec<String>,
    /// Offset just past its last byte seen in its direction's stream (bytes
    /// delivered, holes not counted): where it lies among TLS records.
    pub stream_end: u64,
}

/// Counters for the end-of-run report.
#[derive(Clone, Debug, Default)]
pub struct KafkaStats {
    /// Bytes of partial frames dropped because `max_buffered_total` was reached.
    pub shed_bytes: u64,
    /// Highest partial-frame bytes held at once, all connections.
    pub peak_buffered: usize,
    pub connections: u64,
    pub not_kafka: u64,
    /// Connections whose first bytes are a TLS record (Kafka over TLS cannot be dissected).
    pub tls: u64,
    pub requests: u64,
    pub responses: u64,
    pub paired: u64,
    pub unpaired_responses: u64,
    /// Frames that ended where a gap began, or at close, without all their bytes.
    pub cut_frames: u64,
    pub oversized_frames: u64,
    /// Size prefixes that made no sense, so framing was lost.
    pub desyncs: u64,
    /// Times a frame boundary was found again.
    pub resyncs: u64,
    /// Bytes thrown away while looking for a frame boundary.
    pub skipped_bytes: u64,
    /// Bytes the hunt for a frame boundary looked through and passed over.
    pub hunted_bytes: u64,
    /// Plausible frame starts found while hunting but not confirmed, so not taken.
    pub rejected_candidates: u64,
    pub gaps: u64,
    pub conflicts: u64,
    pub pending_evicted: u64,
    /// Requests never answered, by (API key, version).
    pub unanswered: BTreeMap<(i16, i16), u64>,
    /// The first few unanswered requests' packet numbers.
    pub unanswered_packets: Vec<u64>,
    /// Requests passed over by a hunt, just before the frame it took, then
    /// confirmed by an answer to their correlation id (in Kafka's answer order).
    pub tentative_confirmed: u64,
    /// Such requests never answered in their turn, so not printed.
    pub tentative_dropped: u64,
    /// Messages printed after a later one of their connection (held back past
    /// `max_reorder`, or released late by TCP).
    pub out_of_order: u64,
    /// Every TCP connection by server port (bounded), for the "no Kafka traffic" hint.
    pub ports: PortCounts,
}

/// Where a connection stands.
#[derive(Debug)]
enum Stage {
    /// Not yet known which side is the client: each direction's bytes are held.
    Undecided([Held; 2]),
    /// `client` sends requests; one framer per direction (boxed, so connections
    /// that are not Kafka stay small).
    Kafka {
        client: Dir,
        framers: Box<[Framer; 2]>,
    },
    NotKafka,
}

#[derive(Debug)]
struct Conn {
    id: ConnId,
    a: SocketAddr,
    b: SocketAddr,
    syn_seen: bool,
    /// No byte seen yet.
    fresh: bool,
    stage: Stage,
    pairing: Pairing,
}

/// A stream event within a connection (see [`Sessions::within`]), without the
/// connection and the packet.
enum Within<'a> {
    Data {
        dir: Dir,
        data: &'a [u8],
    },
    Gap {
        dir: Dir,
        len: u64,
    },
    Conflict {
        dir: Dir,
        stream_offset: u64,
        len: u64,
    },
}

/// The element of a per-direction pair that belongs to `d`.
fn pick<T>(pair: &mut [T; 2], d: Dir) -> &mut T {
    let [ab, ba] = pair;
    match d {
        Dir::AtoB => ab,
        Dir::BtoA => ba,
    }
}

/// Frames and pairs the Kafka traffic of every connection.
pub struct Sessions {
    cfg: KafkaConfig,
    /// Each connection, with its messages held back (apart, so that taking a stream
    /// event borrows both without moving the queue).
    conns: HashMap<ConnId, (Conn, order::Queue)>,
    stats: KafkaStats,
    budget: Budget,
    /// Schema check for hunted candidates, if the caller gave one.
    confirm: Option<Confirm>,
    /// Bytes of messages held back over all connections.
    queued: usize,
}

impl Sessions {
    pub fn new(cfg: KafkaConfig) -> Self {
        Sessions {
            budget: Budget::new(cfg.max_buffered_total),
            cfg,
            conns: HashMap::default(),
            stats: KafkaStats::default(),
            confirm: None,
            queued: 0,
        }
    }

    /// Lets hunting also confirm a candidate frame that decodes completely under its
    /// schema (see [`Confirm`]); applies to connections opened from now on.
    pub fn set_confirm(&mut self, confirm: Confirm) {
        self.confirm = Some(confirm);
    }

    pub fn stats(&self) -> &KafkaStats {
        &self.stats
    }

    /// Feeds one stream event from packet `frame`; completed frames go to `out`.
    pub fn on_event(
        &mut self,
        frame: u64,
        ts_ns: i64,
        ev: StreamEvent<'_>,
        out: &mut dyn FnMut(&KafkaMessage<'_>),
    ) {
        let id = match ev {
            StreamEvent::Data {
                conn, dir, data, ..
            } => return self.within(conn, frame, ts_ns, Within::Data { dir, data }, out),
            StreamEvent::Gap { conn, dir, len } => {
                return self.within(conn, frame, ts_ns, Within::Gap { dir, len }, out);
            }
            StreamEvent::Conflict {
                conn,
                dir,
                stream_offset,
                len,
            } => {
                let ev = Within::Conflict {
                    dir,
                    stream_offset,
                    len,
                };
                return self.within(conn, frame, ts_ns, ev, out);
            }
            StreamEvent::Opened { conn, .. } | StreamEvent::Closed { conn, .. } => conn,
        };
        let (before, after) = self.ordered(id, out, |s, out| s.dispatch(frame, ts_ns, ev, out));
        if self.budget.account(before, after) {
            if let Some((conn, _)) = self.conns.get_mut(&id) {
                let shed = conn.shed(&mut self.stats);
                self.budget.release(shed);
            }
        }
        self.stats.peak_buffered = self.stats.peak_buffered.max(self.budget.held());
    }

    /// [`Sessions::on_event`] of [`StreamEvent::Data`]: bytes of connection `id`'s
    /// direction `dir`, from packet `frame` (the common event, handed over without the rest
    /// of the event).
    #[inline]
    pub fn on_data(
        &mut self,
        id: ConnId,
        dir: Dir,
        data: &[u8],
        frame: u64,
        ts_ns: i64,
        out: &mut dyn FnMut(&KafkaMessage<'_>),
    ) {
        self.within(id, frame, ts_ns, Within::Data { dir, data }, out);
    }

    /// [`Sessions::on_event`] for an event within connection `id` (bytes, a gap or a
    /// conflict), which neither adds nor removes a connection: the steps of
    /// [`Sessions::ordered`] and the budget, with one look-up of the connection.
    fn within(
        &mut self,
        id: ConnId,
        frame: u64,
        ts_ns: i64,
        ev: Within<'_>,
        out: &mut dyn FnMut(&KafkaMessage<'_>),
    ) {
        let Sessions {
            cfg,
            conns,
            stats,
            budget,
            confirm,
            queued,
        } = self;
        // No connection: nothing to do, and nothing held changes.
        let Some((c, queue)) = conns.get_mut(&id) else {
            return;
        };
        let (before, hold) = c.held_and_hold();
        let others = *queued - queue.bytes();
        {
            let out = &mut |m: &KafkaMessage<'_>| queue.offer(m, hold, out);
            let confirm = confirm.as_ref();
            match ev {
                Within::Data { dir, data } => {
                    c.data(cfg, confirm, stats, dir, data, frame, ts_ns, out);
                }
                Within::Gap { dir, len } => c.gap(stats, dir, len, frame, ts_ns, out),
                Within::Conflict {
                    dir,
                    stream_offset,
                    len,
                } => c.conflict(stats, dir, stream_offset, len),
            }
        }
        if !queue.is_empty() {
            let over = others + queue.bytes() > cfg.max_reorder;
            queue.release(c.hold().filter(|_| !over), out);
        }
        stats.out_of_order += queue.take_late();
        *queued = others + queue.bytes();
        if budget.account(before, c.held()) {
            let shed = c.shed(stats);
            budget.release(shed);
        }
        stats.peak_buffered = stats.peak_buffered.max(budget.held());
    }

    /// Runs `f` on connection `id`'s messages, printing them in capture order
    /// (see `order`). The bytes the connection holds before and after (see `budget`).
    fn ordered(
        &mut self,
        id: ConnId,
        out: &mut dyn FnMut(&KafkaMessage<'_>),
        f: impl FnOnce(&mut Self, &mut dyn FnMut(&KafkaMessage<'_>)),
    ) -> (usize, usize) {
        let (before, hold, mut queue) = match self.conns.get_mut(&id) {
            Some((c, q)) => (c.held(), c.hold(), std::mem::take(q)),
            None => (0, None, Default::default()),
        };
        let others = self.queued - queue.bytes();
        f(self, &mut |m| queue.offer(m, hold, out));
        let over = others + queue.bytes() > self.cfg.max_reorder;
        let conn = self.conns.get_mut(&id);
        // Closed: nothing more can come before what it holds.
        let hold = conn.as_ref().and_then(|(c, _)| c.hold());
        queue.release(hold.filter(|_| !over), out);
        self.stats.out_of_order += queue.take_late();
        self.queued = others + queue.bytes();
        match conn {
            Some((c, q)) => {
                *q = queue;
                (before, c.held())
            }
            None => (before, 0),
        }
    }

    fn dispatch(
        &mut self,
        frame: u64,
        ts_ns: i64,
        ev: StreamEvent<'_>,
        out: &mut dyn FnMut(&KafkaMessage<'_>),
    ) {
        match ev {
            StreamEvent::Opened {
                conn,
                a,
                b,
                syn_seen,
                ..
            } => {
                self.stats.ports.add(a, b, syn_seen);
                let stage = match detect::port_role(&self.cfg, a, b, syn_seen) {
                    Role::Client(client) => {
                        self.stats.connections += 1;
                        Stage::Kafka {
                            client,
                            framers: Box::new(Framer::pair(
                                conn,
                                a,
                                b,
                                client,
                                syn_seen,
                                &self.cfg,
                                self.confirm.as_ref(),
                            )),
                        }
                    }
                    Role::Undecided => Stage::Undecided(Default::default()),
                    Role::NotKafka => Stage::NotKafka,
                };
                let c = Conn {
                    id: conn,
                    a,
                    b,
                    syn_seen,
                    fresh: true,
                    stage,
                    pairing: Pairing::new(self.cfg.max_pending_per_connection),
                };
                self.conns.insert(conn, (c, order::Queue::default()));
            }
            // Handled by `within`.
            StreamEvent::Data { .. } | StreamEvent::Gap { .. } | StreamEvent::Conflict { .. } => {}
            StreamEvent::Closed { conn, reason } => self.close(conn, reason, frame, ts_ns, out),
        }
    }

    fn close(
        &mut self,
        id: ConnId,
        _reason: CloseReason,
        frame: u64,
        ts_ns: i64,
        out: &mut dyn FnMut(&KafkaMessage<'_>),
    ) {
        let Some((mut conn, _)) = self.conns.remove(&id) else {
            return;
        };
        if matches!(conn.stage, Stage::Undecided(_)) {
            detect::detect(
                &mut conn,
                &self.cfg,
                self.confirm.as_ref(),
                true,
                &mut self.stats,
                out,
            );
        }
        // The connection is over, so its pending list no longer needs a cap.
        conn.pairing.uncap();
        if let Stage::Kafka { client, framers } = &mut conn.stage {
            for d in [*client, client.reverse()] {
                pick(framers, d).flush(frame, ts_ns, &mut conn.pairing, &mut self.stats, out);
            }
        }
        conn.pairing.close(&mut self.stats);
    }

    /// End of input: every connection still open is closed.
    pub fn finish(&mut self, frame: u64, ts_ns: i64, out: &mut dyn FnMut(&KafkaMessage<'_>)) {
        let mut ids: Vec<ConnId> = self.conns.keys().copied().collect();
        ids.sort_by_key(|c| c.0);
        for id in ids {
            self.ordered(id, out, |s, out| {
                s.close(id, CloseReason::EndOfCapture, frame, ts_ns, out);
            });
        }
    }
}

impl Conn {
    /// In-order bytes of direction `dir`, from packet `frame`.
    #[allow(clippy::too_many_arguments)]
    fn data(
        &mut self,
        cfg: &KafkaConfig,
        confirm: Option<&Confirm>,
        stats: &mut KafkaStats,
        dir: Dir,
        data: &[u8],
        frame: u64,
        ts_ns: i64,
        out: &mut dyn FnMut(&KafkaMessage<'_>),
    ) {
        let conn = self;
        if std::mem::take(&mut conn.fresh) && detect::is_tls(data) {
            // Kafka over TLS: nothing to dissect, but say so instead of reporting lost framing.
            if matches!(conn.stage, Stage::Kafka { .. }) {
                stats.connections = stats.connections.saturating_sub(1);
            }
            conn.stage = Stage::NotKafka;
            stats.tls += 1;
            return;
        }
        match &mut conn.stage {
            Stage::NotKafka => {}
            Stage::Undecided(held) => {
                pick(held, dir).push(data, frame, ts_ns);
                detect::detect(conn, cfg, confirm, false, stats, out);
            }
            Stage::Kafka { client, framers } => {
                let client = *client;
                if dir != client && pick(framers, client).waits() {
                    // Answers about to be framed may confirm requests found by hunting.
                    let corrs = pick(framers, dir).upcoming_corrs(data);
                    if !corrs.is_empty() {
                        let q = pick(framers, client);
                        q.echo(&corrs, frame, ts_ns, &mut conn.pairing, stats, out);
                    }
                }
                let f = pick(framers, dir);
                f.feed(data, frame, ts_ns, &mut conn.pairing, stats, out);
                let server = pick(framers, client.reverse());
                if dir == client && server.first_waits() && !server.buf.is_empty() {
                    // The client spoke: the server's first bytes held can be judged.
                    server.feed(&[], frame, ts_ns, &mut conn.pairing, stats, out);
                }
            }
        }
    }

    /// `len` bytes of direction `dir` were lost.
    fn gap(
        &mut self,
        stats: &mut KafkaStats,
        dir: Dir,
        len: u64,
        frame: u64,
        ts_ns: i64,
        out: &mut dyn FnMut(&KafkaMessage<'_>),
    ) {
        let conn = self;
        match &mut conn.stage {
            Stage::NotKafka => {}
            Stage::Undecided(_) => {
                // Undecided streams with a hole cannot be recognised reliably.
                conn.stage = Stage::NotKafka;
                stats.not_kafka += 1;
            }
            Stage::Kafka { client, framers } => {
                stats.gaps += 1;
                let f = pick(framers, dir);
                f.gap(len, frame, ts_ns, &mut conn.pairing, stats, out);
                if dir == *client {
                    let server = pick(framers, client.reverse());
                    server.peer_lost_bytes();
                    // Its first bytes held may be answers to requests lost.
                    server.feed(&[], frame, ts_ns, &mut conn.pairing, stats, out);
                }
            }
        }
    }

    /// A retransmission carried other bytes than those delivered: noted on the next
    /// message of that direction.
    fn conflict(&mut self, stats: &mut KafkaStats, dir: Dir, stream_offset: u64, len: u64) {
        stats.conflicts += 1;
        let note = format!(
            "a retransmission carried different bytes for {len} bytes at stream offset {stream_offset}; the first copy was used"
        );
        match &mut self.stage {
            Stage::Undecided(held) => pick(held, dir).notes.push(note),
            Stage::Kafka { framers, .. } => pick(framers, dir).notes.push(note),
            Stage::NotKafka => {}
        }
    }
}
