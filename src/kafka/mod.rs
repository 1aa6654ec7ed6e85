//! Stage 4: Kafka framing and sessions.
//!
//! Turns each connection's ordered byte streams into Kafka frames, tells the
//! client from the server, and pairs every response with its request by
//! correlation id (a response header names neither API nor version).
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

mod budget;
mod detect;
mod pairing;
mod resync;

use crate::codec::Kind;
use crate::tcp::{CloseReason, ConnId, Dir, StreamEvent};
use pairing::Pending;
use std::collections::{BTreeMap, HashMap, VecDeque};
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
        }
    }
}

/// One complete (or, at a gap or close, cut) Kafka frame, ready to decode.
#[derive(Debug)]
pub struct KafkaFrame<'a> {
    pub conn: ConnId,
    /// Packet that completed the frame.
    pub frame: u64,
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
    pub request_frame: Option<u64>,
    pub latency_ns: Option<i64>,
    pub warnings: Vec<String>,
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
    pub gaps: u64,
    pub conflicts: u64,
    pub pending_evicted: u64,
    /// Requests never answered, by (API key, version).
    pub unanswered: BTreeMap<(i16, i16), u64>,
    /// The first few unanswered requests' packet numbers.
    pub unanswered_frames: Vec<u64>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Role {
    Undecided,
    /// The side that sends requests.
    Client(Dir),
    NotKafka,
}

/// One direction's framing state.
#[derive(Debug, Default)]
struct Half {
    buf: Vec<u8>,
    /// Bytes still to pass over of a frame kept only in part.
    skip: u64,
    /// Wire size of the frame being skipped.
    skip_total: u64,
    /// Whether the skipped frame is missing bytes, not just too big to keep.
    skip_damaged: bool,
    /// Looking for a frame boundary after lost bytes.
    hunting: bool,
    /// The stream's start was not captured, so its first boundary is looked for, not assumed.
    unseen_start: bool,
    /// Bytes thrown away since hunting began, over every packet, for the resync note.
    hunt_skipped: u64,
    /// Warnings for the next frame completed in this direction.
    notes: Vec<String>,
    /// While undecided: (bytes, packet number, time) of each chunk in `buf`.
    arrivals: Vec<(usize, u64, i64)>,
}

#[derive(Debug)]
struct Conn {
    id: ConnId,
    syn_seen: bool,
    /// No byte seen yet.
    fresh: bool,
    a: SocketAddr,
    b: SocketAddr,
    role: Role,
    halves: [Half; 2],
    pending: VecDeque<Pending>,
}

fn idx(d: Dir) -> usize {
    match d {
        Dir::AtoB => 0,
        Dir::BtoA => 1,
    }
}

/// Frames and pairs the Kafka traffic of every connection.
pub struct Sessions {
    cfg: KafkaConfig,
    conns: HashMap<ConnId, Conn>,
    stats: KafkaStats,
    /// Partial-frame bytes held over all connections.
    buffered: usize,
}

impl Sessions {
    pub fn new(cfg: KafkaConfig) -> Self {
        Sessions {
            cfg,
            conns: HashMap::new(),
            stats: KafkaStats::default(),
            buffered: 0,
        }
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
        out: &mut dyn FnMut(&KafkaFrame<'_>),
    ) {
        let id = match ev {
            StreamEvent::Opened { conn, .. }
            | StreamEvent::Data { conn, .. }
            | StreamEvent::Gap { conn, .. }
            | StreamEvent::Conflict { conn, .. }
            | StreamEvent::Closed { conn, .. } => conn,
        };
        let before = self.held(id);
        self.dispatch(frame, ts_ns, ev, out);
        self.buffered = self.buffered.saturating_sub(before) + self.held(id);
        if self.buffered > self.cfg.max_buffered_total {
            self.shed(id);
        }
        self.stats.peak_buffered = self.stats.peak_buffered.max(self.buffered);
    }

    fn dispatch(
        &mut self,
        frame: u64,
        ts_ns: i64,
        ev: StreamEvent<'_>,
        out: &mut dyn FnMut(&KafkaFrame<'_>),
    ) {
        match ev {
            StreamEvent::Opened {
                conn,
                a,
                b,
                syn_seen,
                ..
            } => {
                let role = detect::port_role(&self.cfg, a, b, syn_seen);
                let mut halves: [Half; 2] = Default::default();
                // Without the SYN the first byte may fall inside a request, and a size
                // read there can swallow the frames after it. Requests carry a header to
                // check, so that direction hunts for one; a response has nothing to check
                // until its request is seen, so its first boundary is still assumed.
                if let (Role::Client(d), false) = (role, syn_seen) {
                    if let Some(h) = halves.get_mut(idx(d)) {
                        h.hunting = true;
                        h.unseen_start = true;
                    }
                }
                self.conns.insert(
                    conn,
                    Conn {
                        id: conn,
                        syn_seen,
                        fresh: true,
                        a,
                        b,
                        role,
                        halves,
                        pending: VecDeque::new(),
                    },
                );
                if matches!(role, Role::Client(_)) {
                    self.stats.connections += 1;
                }
            }
            StreamEvent::Data {
                conn, dir, data, ..
            } => {
                self.data(conn, dir, data, frame, ts_ns, out);
            }
            StreamEvent::Gap { conn, dir, len } => self.gap(conn, dir, len),
            StreamEvent::Conflict {
                conn,
                dir,
                stream_offset,
                len,
            } => {
                if let Some(half) = self
                    .conns
                    .get_mut(&conn)
                    .and_then(|c| c.halves.get_mut(idx(dir)))
                {
                    self.stats.conflicts += 1;
                    half.notes.push(format!(
                        "a retransmission carried different bytes for {len} bytes at stream offset {stream_offset}; the first copy was used"
                    ));
                }
            }
            StreamEvent::Closed { conn, reason } => self.close(conn, reason, frame, ts_ns, out),
        }
    }

    fn data(
        &mut self,
        id: ConnId,
        dir: Dir,
        data: &[u8],
        frame: u64,
        ts_ns: i64,
        out: &mut dyn FnMut(&KafkaFrame<'_>),
    ) {
        let Some(conn) = self.conns.get_mut(&id) else {
            return;
        };
        if std::mem::take(&mut conn.fresh) && detect::is_tls(data) {
            // Kafka over TLS: nothing to dissect, but say so instead of reporting lost framing.
            if matches!(conn.role, Role::Client(_)) {
                self.stats.connections = self.stats.connections.saturating_sub(1);
            }
            conn.role = Role::NotKafka;
            self.stats.tls += 1;
            return;
        }
        match conn.role {
            Role::NotKafka => return,
            Role::Undecided => {
                if let Some(h) = conn.halves.get_mut(idx(dir)) {
                    h.buf.extend_from_slice(data);
                    h.arrivals.push((data.len(), frame, ts_ns));
                }
                detect::decide(conn, &self.cfg, false);
                detect::settle(conn, &self.cfg, &mut self.stats, out);
                return;
            }
            Role::Client(_) => {}
        }
        feed(
            conn,
            dir,
            data,
            frame,
            ts_ns,
            &self.cfg,
            &mut self.stats,
            out,
        );
    }

    fn gap(&mut self, id: ConnId, dir: Dir, len: u64) {
        let Some(conn) = self.conns.get_mut(&id) else {
            return;
        };
        if !matches!(conn.role, Role::Client(_)) {
            // Undecided streams with a hole cannot be recognised reliably.
            if conn.role == Role::Undecided {
                conn.role = Role::NotKafka;
                conn.halves = Default::default();
                self.stats.not_kafka += 1;
            }
            return;
        }
        self.stats.gaps += 1;
        let Some(h) = conn.halves.get_mut(idx(dir)) else {
            return;
        };
        if h.hunting {
            h.hunt_skipped += h.buf.len() as u64;
            self.stats.skipped_bytes += h.buf.len() as u64;
            h.buf.clear();
            return;
        }
        if h.skip > 0 {
            // The hole falls inside a frame already being passed over: framing survives.
            if len <= h.skip {
                h.skip -= len;
                h.skip_damaged = true;
                return;
            }
        } else if let Some(size) = frame_size(&h.buf) {
            let total = size as u64 + 4;
            let have = h.buf.len() as u64;
            if have + len <= total {
                // The hole lies inside this frame: keep its head, pass over the rest.
                h.skip = total - have - len;
                h.skip_total = total;
                h.skip_damaged = true;
                h.notes
                    .push(format!("{len} bytes of this message were not captured"));
                return;
            }
        }
        h.buf.clear();
        h.skip = 0;
        h.hunting = true;
        h.notes
            .push(format!("{len} bytes were not captured before this message"));
    }

    fn close(
        &mut self,
        id: ConnId,
        _reason: CloseReason,
        frame: u64,
        ts_ns: i64,
        out: &mut dyn FnMut(&KafkaFrame<'_>),
    ) {
        let Some(mut conn) = self.conns.remove(&id) else {
            return;
        };
        if conn.role == Role::Undecided {
            detect::decide(&mut conn, &self.cfg, true);
            detect::settle(&mut conn, &self.cfg, &mut self.stats, out);
        }
        if let Role::Client(cd) = conn.role {
            for d in [cd, cd.reverse()] {
                flush_cut(&mut conn, d, frame, ts_ns, &mut self.stats, out);
            }
        }
        for p in conn.pending {
            pairing::record_unanswered(&mut self.stats, &p);
        }
    }

    /// End of input: every connection still open is closed.
    pub fn finish(&mut self, frame: u64, ts_ns: i64, out: &mut dyn FnMut(&KafkaFrame<'_>)) {
        let mut ids: Vec<ConnId> = self.conns.keys().copied().collect();
        ids.sort_by_key(|c| c.0);
        for id in ids {
            self.close(id, CloseReason::EndOfCapture, frame, ts_ns, out);
        }
    }
}

fn frame_size(buf: &[u8]) -> Option<i32> {
    Some(i32::from_be_bytes(buf.get(..4)?.try_into().ok()?))
}

/// Where a frame was seen: its connection and direction, and the packet that completed it.
#[derive(Clone, Copy)]
struct Origin {
    conn: ConnId,
    kind: Kind,
    src: SocketAddr,
    dst: SocketAddr,
    frame: u64,
    ts_ns: i64,
}

/// What travels in `dir` (requests from the client), and from where to where.
fn side(conn: &Conn, dir: Dir) -> Option<(Kind, SocketAddr, SocketAddr)> {
    let Role::Client(client) = conn.role else {
        return None;
    };
    let kind = if dir == client {
        Kind::Request
    } else {
        Kind::Response
    };
    Some(match dir {
        Dir::AtoB => (kind, conn.a, conn.b),
        Dir::BtoA => (kind, conn.b, conn.a),
    })
}

/// Appends `data` to a direction and emits every frame it completes.
#[allow(clippy::too_many_arguments)]
fn feed(
    conn: &mut Conn,
    dir: Dir,
    data: &[u8],
    frame: u64,
    ts_ns: i64,
    cfg: &KafkaConfig,
    stats: &mut KafkaStats,
    out: &mut dyn FnMut(&KafkaFrame<'_>),
) {
    let Some((kind, src, dst)) = side(conn, dir) else {
        return;
    };
    let origin = Origin {
        conn: conn.id,
        kind,
        src,
        dst,
        frame,
        ts_ns,
    };
    let max_pending = cfg.max_pending_per_connection;
    let Conn {
        halves, pending, ..
    } = conn;
    let Some(h) = halves.get_mut(idx(dir)) else {
        return;
    };
    let mut data = data;
    // Pass over the rest of a frame kept only in part, then report it.
    if h.skip > 0 {
        let n = (h.skip.min(data.len() as u64)) as usize;
        h.skip -= n as u64;
        data = data.get(n..).unwrap_or_default();
        if h.skip > 0 {
            return;
        }
        let head = std::mem::take(&mut h.buf);
        let total = h.skip_total;
        let damaged = std::mem::take(&mut h.skip_damaged);
        if damaged {
            stats.cut_frames += 1;
        }
        let mut notes = std::mem::take(&mut h.notes);
        if !damaged {
            notes.push(format!(
                "message of {total} bytes is larger than the {} bytes kept per direction; only its head was decoded",
                cfg.max_buffered_per_direction
            ));
        }
        pairing::emit(
            &origin,
            &head,
            total,
            true,
            notes,
            pending,
            max_pending,
            stats,
            out,
        );
    }
    // Work on the data in place when nothing is buffered: no copy in the common case.
    let owned = if h.buf.is_empty() {
        None
    } else {
        h.buf.extend_from_slice(data);
        Some(std::mem::take(&mut h.buf))
    };
    let view: &[u8] = owned.as_deref().unwrap_or(data);
    let mut pos = 0usize;
    loop {
        let rest = view.get(pos..).unwrap_or_default();
        if h.hunting {
            match resync::hunt(rest, kind, pending, cfg.max_frame) {
                Some(at) => {
                    stats.skipped_bytes += at as u64;
                    // Earlier packets may have been passed over too, not just `at` bytes of this one.
                    let skipped = std::mem::take(&mut h.hunt_skipped) + at as u64;
                    // A capture that simply starts at a boundary has lost nothing.
                    let fresh = std::mem::take(&mut h.unseen_start);
                    if skipped > 0 || !fresh {
                        stats.resyncs += 1;
                    }
                    if skipped > 0 {
                        h.notes.push(format!(
                            "resynchronised after skipping {skipped} bytes of no recognisable frame"
                        ));
                    }
                    pos += at;
                    h.hunting = false;
                    continue;
                }
                None => {
                    // Keep a tail that may hold the start of the next frame.
                    let keep = rest.len().min(resync::hunt_keep(kind));
                    let drop = rest.len() - keep;
                    stats.skipped_bytes += drop as u64;
                    h.hunt_skipped += drop as u64;
                    pos += drop;
                    break;
                }
            }
        }
        let Some(size) = frame_size(rest) else { break };
        let min = match kind {
            Kind::Request => 8,
            Kind::Response => 4,
        };
        if size < min || size as u32 > cfg.max_frame {
            stats.desyncs += 1;
            h.notes.push(format!(
                "size prefix {size} makes no sense here; framing was lost"
            ));
            h.hunting = true;
            // The byte the bad prefix started at is passed over.
            stats.skipped_bytes += 1;
            h.hunt_skipped += 1;
            pos += 1;
            continue;
        }
        let total = size as usize + 4;
        if total > cfg.max_buffered_per_direction {
            // Keep the head for its header; pass over the rest as it arrives.
            stats.oversized_frames += 1;
            let keep = cfg.oversized_head.min(rest.len());
            let head = rest.get(..keep).unwrap_or_default().to_vec();
            let have = rest.len().min(total);
            h.skip = (total - have) as u64;
            h.skip_total = total as u64;
            pos += have;
            if h.skip == 0 {
                let mut notes = std::mem::take(&mut h.notes);
                notes.push(format!(
                    "message of {total} bytes is larger than the {} bytes kept per direction; only its head was decoded",
                    cfg.max_buffered_per_direction
                ));
                pairing::emit(
                    &origin,
                    &head,
                    total as u64,
                    true,
                    notes,
                    pending,
                    max_pending,
                    stats,
                    out,
                );
            } else {
                h.buf = head;
            }
            continue;
        }
        let Some(whole) = rest.get(..total) else {
            break;
        };
        let notes = std::mem::take(&mut h.notes);
        pairing::emit(
            &origin,
            whole,
            total as u64,
            false,
            notes,
            pending,
            max_pending,
            stats,
            out,
        );
        pos += total;
    }
    if h.skip == 0 {
        match owned {
            // The buffer goes back with only what was consumed removed: copying the
            // rest into a new one made a large frame cost its size again with every
            // packet, quadratic time in the frame's size.
            Some(mut b) if h.buf.is_empty() => {
                b.drain(..pos.min(b.len()));
                // Mostly consumed: keep the rest in a right-sized buffer, so a connection
                // that once carried a large frame does not hold its capacity (held() counts
                // lengths). Only frames completing get here, so this copy stays linear.
                if b.len() < b.capacity() / 4 {
                    b = b.as_slice().to_vec();
                }
                h.buf = b;
            }
            _ => {
                let left = view.get(pos..).unwrap_or_default();
                if !left.is_empty() {
                    if h.buf.capacity() == 0 {
                        h.buf = Vec::with_capacity(left.len());
                    }
                    h.buf.extend_from_slice(left);
                }
            }
        }
    }
}

/// At close, a frame still partial is reported as cut.
fn flush_cut(
    conn: &mut Conn,
    dir: Dir,
    frame: u64,
    ts_ns: i64,
    stats: &mut KafkaStats,
    out: &mut dyn FnMut(&KafkaFrame<'_>),
) {
    let Some((kind, src, dst)) = side(conn, dir) else {
        return;
    };
    let origin = Origin {
        conn: conn.id,
        kind,
        src,
        dst,
        frame,
        ts_ns,
    };
    let Conn {
        halves, pending, ..
    } = conn;
    let Some(h) = halves.get_mut(idx(dir)) else {
        return;
    };
    if h.hunting {
        // The tail kept in case a frame started in it was never one: it is skipped too.
        stats.skipped_bytes += h.buf.len() as u64;
        h.buf.clear();
        return;
    }
    if h.buf.is_empty() {
        return;
    }
    let buf = std::mem::take(&mut h.buf);
    let wire = if h.skip > 0 {
        h.skip_total
    } else {
        frame_size(&buf).map_or(buf.len() as u64, |s| (s.max(0) as u64) + 4)
    };
    let mut notes = std::mem::take(&mut h.notes);
    notes.push(format!(
        "the connection ended {} bytes into this {wire}-byte message",
        buf.len()
    ));
    stats.cut_frames += 1;
    // The connection is over, so its pending list no longer needs a cap.
    pairing::emit(
        &origin,
        &buf,
        wire,
        true,
        notes,
        pending,
        usize::MAX,
        stats,
        out,
    );
}

#[cfg(test)]
mod tests;
