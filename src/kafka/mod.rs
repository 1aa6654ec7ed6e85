//! Stage 4: Kafka framing and sessions.
//!
//! Turns each connection's ordered byte streams into Kafka frames, tells the
//! client from the server, and pairs every response with its request by
//! correlation id (a response header names neither API nor version).
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use crate::codec::apis;
use crate::codec::{Kind, peek_request_header};
use crate::tcp::{CloseReason, ConnId, Dir, StreamEvent};
use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
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

const UNANSWERED_LISTED: usize = 20;
/// Bytes a response needs before its correlation id can be checked.
const RESPONSE_PEEK: usize = 8;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Role {
    Undecided,
    /// The side that sends requests.
    Client(Dir),
    NotKafka,
}

#[derive(Debug)]
struct Pending {
    correlation_id: i32,
    api: (i16, i16),
    frame: u64,
    ts_ns: i64,
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

    /// Partial-frame bytes one connection holds.
    fn held(&self, id: ConnId) -> usize {
        self.conns
            .get(&id)
            .map_or(0, |c| c.halves.iter().map(|h| h.buf.len()).sum())
    }

    /// Over the overall cap: the connection that grew gives up what it holds.
    fn shed(&mut self, id: ConnId) {
        let Some(conn) = self.conns.get_mut(&id) else {
            return;
        };
        for h in conn.halves.iter_mut().filter(|h| !h.buf.is_empty()) {
            let n = h.buf.len();
            self.stats.shed_bytes += n as u64;
            self.buffered = self.buffered.saturating_sub(n);
            h.buf = Vec::new();
            h.arrivals.clear();
            h.skip = 0;
            h.hunting = true;
            h.notes.push(format!(
                "{n} bytes were dropped before this message: the overall buffer limit was reached"
            ));
        }
        if conn.role == Role::Undecided {
            conn.role = Role::NotKafka;
            self.stats.not_kafka += 1;
        }
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
                let role = self.port_role(a, b, syn_seen);
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

    /// The role a connection's ports give it, before any byte is seen.
    fn port_role(&self, a: SocketAddr, b: SocketAddr, syn_seen: bool) -> Role {
        let kafka = |s: SocketAddr| self.cfg.ports.contains(&s.port());
        match (kafka(a), kafka(b)) {
            (false, true) => Role::Client(Dir::AtoB),
            (true, false) => Role::Client(Dir::BtoA),
            // Both on Kafka ports: the SYN sender is the client.
            (true, true) if syn_seen => Role::Client(Dir::AtoB),
            (true, true) => Role::Undecided,
            (false, false) if self.cfg.detect => Role::Undecided,
            (false, false) => Role::NotKafka,
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
        if std::mem::take(&mut conn.fresh) && is_tls(data) {
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
                decide(conn, &self.cfg, false);
                settle(conn, &self.cfg, &mut self.stats, out);
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
            decide(&mut conn, &self.cfg, true);
            settle(&mut conn, &self.cfg, &mut self.stats, out);
        }
        if let Role::Client(cd) = conn.role {
            for d in [cd, cd.reverse()] {
                flush_cut(&mut conn, d, frame, ts_ns, &mut self.stats, out);
            }
        }
        for p in conn.pending {
            record_unanswered(&mut self.stats, &p);
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

/// After detection: counts the outcome and frames what was buffered meanwhile.
fn settle(
    conn: &mut Conn,
    cfg: &KafkaConfig,
    stats: &mut KafkaStats,
    out: &mut dyn FnMut(&KafkaFrame<'_>),
) {
    match conn.role {
        Role::Undecided => {}
        Role::NotKafka => {
            // A connection that carried no byte is neither Kafka nor anything else.
            if conn.halves.iter().any(|h| !h.buf.is_empty()) {
                stats.not_kafka += 1;
            }
            conn.halves = Default::default();
        }
        Role::Client(client) => {
            stats.connections += 1;
            if !conn.syn_seen {
                if let Some(h) = conn.halves.get_mut(idx(client)) {
                    h.hunting = true;
                    h.unseen_start = true;
                }
            }
            // Replay what arrived while undecided, packet by packet, so every
            // message keeps the frame and time that completed it.
            let mut replay = Vec::new();
            for d in [client, client.reverse()] {
                if let Some(h) = conn.halves.get_mut(idx(d)) {
                    let buf = std::mem::take(&mut h.buf);
                    let mut at = 0;
                    for (len, frame, ts) in std::mem::take(&mut h.arrivals) {
                        let bytes = buf.get(at..at + len).unwrap_or_default().to_vec();
                        at += len;
                        replay.push((frame, ts, d, bytes));
                    }
                }
            }
            // Stable: within one packet number, requests (pushed first) lead.
            replay.sort_by_key(|r| r.0);
            for (frame, ts, d, bytes) in replay {
                feed(conn, d, &bytes, frame, ts, cfg, stats, out);
            }
        }
    }
}

/// A TLS handshake record: content type 22, protocol major version 3.
fn is_tls(b: &[u8]) -> bool {
    matches!(b, [0x16, 0x03, minor, ..] if *minor <= 4)
}

fn record_unanswered(stats: &mut KafkaStats, p: &Pending) {
    *stats.unanswered.entry(p.api).or_default() += 1;
    if stats.unanswered_frames.len() < UNANSWERED_LISTED {
        stats.unanswered_frames.push(p.frame);
    }
}

fn frame_size(buf: &[u8]) -> Option<i32> {
    Some(i32::from_be_bytes(buf.get(..4)?.try_into().ok()?))
}

/// Versions past a table's newest still taken as Kafka when the handshake or
/// an echoed correlation id already says which side is the client.
const VERSION_SLACK: i16 = 8;
/// Requests looked at when matching the other side's first correlation id.
const ECHO_CANDIDATES: usize = 64;

/// Whether `b` starts like a request: `None` while too few bytes are there to tell.
/// `slack` admits versions that many past the newest kwire knows.
fn request_start(b: &[u8], max_frame: u32, slack: i16) -> Option<bool> {
    let size = frame_size(b)?;
    // Header v1 is at least key, version, correlation id and a client id length.
    if size < 10 || size as u32 > max_frame {
        return Some(false);
    }
    let Some(h) = peek_request_header(b) else {
        // Too short for the whole fixed header: an unknown API key already rules it out.
        let key = i16::from_be_bytes(b.get(4..6)?.try_into().ok()?);
        return apis::api_info(key).is_none().then_some(false);
    };
    let Some(info) = apis::api_info(h.api_key) else {
        return Some(false);
    };
    let newest = info.max_version.saturating_add(slack);
    if !(0..=newest).contains(&h.api_version) || h.correlation_id < 0 {
        return Some(false);
    }
    let len = i16::from_be_bytes(b.get(12..14)?.try_into().ok()?);
    if len == -1 {
        return Some(true);
    }
    if len < 0 || i32::from(len) > size - 10 {
        return Some(false);
    }
    let id = b.get(14..14 + len as usize)?;
    Some(id.iter().all(|c| (0x20..0x7f).contains(c)))
}

/// Correlation ids of the frames at the start of `b`, read at `at` (8 in a
/// request, after key and version; 4 in a response).
fn frame_corrs(b: &[u8], at: usize, max_frame: u32) -> Vec<i32> {
    let mut out = Vec::new();
    let mut rest = b;
    while out.len() < ECHO_CANDIDATES {
        let Some(size) = frame_size(rest).filter(|&s| s >= 4 && s as u32 <= max_frame) else {
            break;
        };
        let Some(corr) = rest.get(at..at + 4).and_then(|c| c.try_into().ok()) else {
            break;
        };
        out.push(i32::from_be_bytes(corr));
        let Some(next) = rest.get(size as usize + 4..) else {
            break;
        };
        rest = next;
    }
    out
}

/// Settles which side is the client from the first bytes of each direction.
///
/// With a handshake, only the SYN sender can be the client. Without one, a
/// direction is the client when a frame from the other side answers one of its
/// requests: a response alone can look like a request (correlation id 17 reads
/// as Produce v17), so one-sided evidence is not enough while the other side
/// talks. The first answers may be to requests sent before the capture began.
fn decide(conn: &mut Conn, cfg: &KafkaConfig, closing: bool) {
    let [ab, ba] = &conn.halves;
    let max = cfg.max_frame;
    if conn.syn_seen {
        conn.role = match request_start(&ab.buf, max, VERSION_SLACK) {
            Some(true) => Role::Client(Dir::AtoB),
            Some(false) => Role::NotKafka,
            None if closing || ab.buf.len() > cfg.detect_window => Role::NotKafka,
            None => Role::Undecided,
        };
        return;
    }
    let mut waiting = false;
    for (dir, me, other) in [(Dir::AtoB, ab, ba), (Dir::BtoA, ba, ab)] {
        match request_start(&me.buf, max, VERSION_SLACK) {
            Some(true) => {}
            Some(false) => continue,
            None => {
                waiting = true;
                continue;
            }
        }
        let asked = frame_corrs(&me.buf, 8, max);
        if frame_corrs(&other.buf, 4, max)
            .iter()
            .any(|c| asked.contains(c))
        {
            conn.role = Role::Client(dir);
            return;
        }
        // The other side has said nothing: one-sided, strict evidence only.
        if other.buf.is_empty()
            && (closing || me.buf.len() > cfg.detect_window)
            && request_start(&me.buf, max, 0) == Some(true)
        {
            conn.role = Role::Client(dir);
            return;
        }
        waiting = true;
    }
    let seen = ab.buf.len() + ba.buf.len();
    if closing || !waiting || seen > 2 * cfg.detect_window {
        conn.role = Role::NotKafka;
    }
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
        emit(
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
            match hunt(rest, kind, pending, cfg.max_frame) {
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
                    let keep = rest.len().min(hunt_keep(kind));
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
                emit(
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
        emit(
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

/// Bytes kept while hunting, enough to test a header that straddles packets.
fn hunt_keep(kind: Kind) -> usize {
    match kind {
        Kind::Request => 14 + 255,
        Kind::Response => RESPONSE_PEEK - 1,
    }
}

/// The first offset where a plausible frame starts.
fn hunt(b: &[u8], kind: Kind, pending: &VecDeque<Pending>, max_frame: u32) -> Option<usize> {
    let last = b.len().checked_sub(match kind {
        Kind::Request => 14,
        Kind::Response => RESPONSE_PEEK,
    })?;
    // The correlation ids asked, as a set made at the first plausible size: scanning
    // the pending list at each offset cost up to max_pending steps per byte.
    let mut asked: Option<HashSet<i32>> = None;
    (0..=last).find(|&at| {
        let s = b.get(at..).unwrap_or_default();
        match kind {
            // Newer clients send versions past the table; detection admits them, so must this.
            Kind::Request => request_start(s, max_frame, VERSION_SLACK) == Some(true),
            Kind::Response => {
                let Some(size) = frame_size(s) else {
                    return false;
                };
                let Some(corr) = s
                    .get(4..8)
                    .and_then(|c| c.try_into().ok())
                    .map(i32::from_be_bytes)
                else {
                    return false;
                };
                size >= 4
                    && (size as u32) <= max_frame
                    && asked
                        .get_or_insert_with(|| pending.iter().map(|p| p.correlation_id).collect())
                        .contains(&corr)
            }
        }
    })
}

/// Pairs and emits one frame.
#[allow(clippy::too_many_arguments)]
fn emit(
    o: &Origin,
    data: &[u8],
    wire_size: u64,
    cut: bool,
    warnings: Vec<String>,
    pending: &mut VecDeque<Pending>,
    max_pending: usize,
    stats: &mut KafkaStats,
    out: &mut dyn FnMut(&KafkaFrame<'_>),
) {
    let Origin {
        conn,
        kind,
        src,
        dst,
        frame,
        ts_ns,
    } = *o;
    let mut f = KafkaFrame {
        conn,
        frame,
        ts_ns,
        src,
        dst,
        kind,
        data,
        wire_size,
        cut,
        api: None,
        request_frame: None,
        latency_ns: None,
        warnings,
    };
    match kind {
        Kind::Request => {
            stats.requests += 1;
            if let Some(h) = peek_request_header(data) {
                f.api = Some((h.api_key, h.api_version));
                pending.push_back(Pending {
                    correlation_id: h.correlation_id,
                    api: (h.api_key, h.api_version),
                    frame,
                    ts_ns,
                });
                if pending.len() > max_pending {
                    if let Some(old) = pending.pop_front() {
                        stats.pending_evicted += 1;
                        record_unanswered(stats, &old);
                    }
                }
            }
        }
        Kind::Response => {
            stats.responses += 1;
            let corr = data
                .get(4..8)
                .and_then(|c| c.try_into().ok())
                .map(i32::from_be_bytes);
            let found = corr.and_then(|c| pending.iter().position(|p| p.correlation_id == c));
            match found.and_then(|i| pending.remove(i)) {
                Some(p) => {
                    stats.paired += 1;
                    f.api = Some(p.api);
                    f.request_frame = Some(p.frame);
                    f.latency_ns = Some(ts_ns - p.ts_ns);
                }
                None => stats.unpaired_responses += 1,
            }
        }
    }
    out(&f);
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
    emit(
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
#[allow(clippy::unwrap_used, clippy::indexing_slicing)]
mod tests {
    use super::*;
    use crate::codec::{encode_request, encode_response};
    use serde_json::json;

    fn a() -> SocketAddr {
        "10.0.0.5:50000".parse().unwrap()
    }
    fn b() -> SocketAddr {
        "10.0.0.1:19392".parse().unwrap()
    }

    /// Runs events through a session on an odd port and returns (kind, src, corr) per frame.
    fn run(
        syn: bool,
        events: &[(Dir, Vec<u8>)],
    ) -> (Vec<(Kind, SocketAddr, Option<i32>)>, KafkaStats) {
        let mut s = Sessions::new(KafkaConfig::default());
        let mut got = Vec::new();
        let mut out = |f: &KafkaFrame<'_>| {
            let corr = f
                .data
                .get(4..8)
                .map(|c| i32::from_be_bytes(c.try_into().unwrap()));
            let corr = if f.kind == Kind::Request {
                f.data
                    .get(8..12)
                    .map(|c| i32::from_be_bytes(c.try_into().unwrap()))
            } else {
                corr
            };
            got.push((f.kind, f.src, corr));
        };
        let conn = ConnId(1);
        s.on_event(
            1,
            0,
            StreamEvent::Opened {
                conn,
                a: a(),
                b: b(),
                syn_seen: syn,
                frame: 1,
            },
            &mut out,
        );
        for (i, (dir, data)) in events.iter().enumerate() {
            let ev = StreamEvent::Data {
                conn,
                dir: *dir,
                data,
                stream_offset: 0,
                frame: 0,
                ts_ns: 0,
                file: 0,
            };
            s.on_event(i as u64 + 2, 0, ev, &mut out);
        }
        s.finish(99, 0, &mut out);
        (got, s.stats().clone())
    }

    /// ApiVersions v7 (newer than kwire's table knows) and its answer, which reads like Produce v17.
    fn exchange() -> (Vec<u8>, Vec<u8>) {
        let mut req = vec![0, 0, 0, 0];
        req.extend_from_slice(&18i16.to_be_bytes());
        req.extend_from_slice(&7i16.to_be_bytes());
        req.extend_from_slice(&17i32.to_be_bytes());
        req.extend_from_slice(&[0, 3, b'c', b'l', b'i', 0, 0]);
        let n = (req.len() - 4) as i32;
        req[..4].copy_from_slice(&n.to_be_bytes());
        // Response header v0: corr 17 = 0x0000_0011, then error code 0 and an empty array.
        let mut resp = vec![0, 0, 0, 10];
        resp.extend_from_slice(&17i32.to_be_bytes());
        resp.extend_from_slice(&[0, 0, 1, 0, 0, 0, 0]);
        resp.truncate(14);
        (req, resp)
    }

    #[test]
    fn a_large_frame_in_small_pieces_is_not_copied_with_each() {
        // Found by scripts/adversarial-rss.sh: every packet of a partial frame copied
        // the whole partial frame into a new buffer, so two 15 MiB requests took 35 s.
        // The buffer now grows in place: its capacity changes O(log n) times, not per packet.
        let (mut req, _) = exchange();
        req.resize(1 << 20, 0);
        let n = (req.len() - 4) as i32;
        req[..4].copy_from_slice(&n.to_be_bytes());
        let mut s = Sessions::new(KafkaConfig::default());
        let conn = ConnId(1);
        let opened = StreamEvent::Opened {
            conn,
            a: a(),
            b: b(),
            syn_seen: true,
            frame: 1,
        };
        let mut frames = Vec::new();
        let mut out = |f: &KafkaFrame<'_>| frames.push((f.data.len(), f.cut));
        s.on_event(1, 0, opened, &mut out);
        let mut capacities = Vec::new();
        // A small piece of the next request follows the large one.
        let mut pieces: Vec<&[u8]> = req.chunks(1024).collect();
        pieces.push(&req[..10]);
        for (i, data) in pieces.into_iter().enumerate() {
            let ev = StreamEvent::Data {
                conn,
                dir: Dir::AtoB,
                data,
                stream_offset: 0,
                frame: 0,
                ts_ns: 0,
                file: 0,
            };
            s.on_event(i as u64 + 2, 0, ev, &mut out);
            let cap = s.conns[&conn].halves[0].buf.capacity();
            if capacities.last() != Some(&cap) {
                capacities.push(cap);
            }
        }
        assert!(capacities.len() < 30, "{} reallocations", capacities.len());
        // What is left after the frame completes is held in a right-sized buffer.
        assert_eq!(s.conns[&conn].halves[0].buf.len(), 10);
        assert!(s.conns[&conn].halves[0].buf.capacity() < 4096);
        assert_eq!(frames, [(1 << 20, false)]);
    }

    #[test]
    fn hunting_a_response_checks_correlation_ids_in_a_set() {
        // Found by scripts/adversarial-rss.sh (hunt-responses): each offset with a plausible
        // size scanned all pending requests, up to 4096 steps per byte (5 MB took 4.5 s, now
        // 0.06 s). The set must find the same boundary: a pending id, after sizes with others.
        let (req, resp) = exchange();
        let mut junk = (-1i32).to_be_bytes().to_vec();
        for _ in 0..16 {
            junk.extend_from_slice(&[0, 0x10, 0, 1]);
        }
        junk.extend_from_slice(&resp);
        let (got, stats) = run(true, &[(Dir::AtoB, req), (Dir::BtoA, junk)]);
        assert_eq!(
            got,
            [
                (Kind::Request, a(), Some(17)),
                (Kind::Response, b(), Some(17))
            ]
        );
        assert_eq!(
            (stats.desyncs, stats.resyncs, stats.skipped_bytes),
            (1, 1, 68)
        );
        assert_eq!(stats.paired, 1);
    }

    #[test]
    fn bytes_held_while_hunting_are_skipped_at_close() {
        // Found by tests/adversarial.rs: the tail kept in case a frame starts in it
        // was dropped at close without being counted as skipped.
        let (mut req, _) = exchange();
        req.extend_from_slice(&[b'A'; 1000]);
        let (got, stats) = run(true, &[(Dir::AtoB, req)]);
        assert_eq!(got, [(Kind::Request, a(), Some(17))]);
        assert_eq!((stats.desyncs, stats.skipped_bytes), (1, 1000));
    }

    #[test]
    fn handshake_names_the_client_even_for_newer_versions() {
        let (req, resp) = exchange();
        let (got, stats) = run(true, &[(Dir::AtoB, req), (Dir::BtoA, resp)]);
        assert_eq!(
            got,
            [
                (Kind::Request, a(), Some(17)),
                (Kind::Response, b(), Some(17))
            ]
        );
        assert_eq!((stats.connections, stats.paired), (1, 1));
    }

    #[test]
    fn without_handshake_the_echoed_correlation_id_decides() {
        // Both directions start like requests (the answer reads as Produce v17);
        // only the client's request is echoed back.
        let (req, resp) = exchange();
        let (got, stats) = run(false, &[(Dir::AtoB, req), (Dir::BtoA, resp)]);
        assert_eq!(
            got,
            [
                (Kind::Request, a(), Some(17)),
                (Kind::Response, b(), Some(17))
            ]
        );
        assert_eq!(stats.paired, 1);
    }

    #[test]
    fn mid_stream_answers_to_unseen_requests_do_not_block_detection() {
        // The first packet seen (so side A) is the server answering corr 16, asked before
        // the capture began; then B asks corr 17 and A answers it.
        let (req, resp) = exchange();
        let mut early = resp.clone();
        early[4..8].copy_from_slice(&16i32.to_be_bytes());
        let (got, stats) = run(
            false,
            &[(Dir::AtoB, early), (Dir::BtoA, req), (Dir::AtoB, resp)],
        );
        let (server, client) = (a(), b());
        assert_eq!(
            got,
            // In capture order, each at the packet that completed it.
            [
                (Kind::Response, server, Some(16)),
                (Kind::Request, client, Some(17)),
                (Kind::Response, server, Some(17))
            ]
        );
        assert_eq!((stats.paired, stats.unpaired_responses), (1, 1));
    }

    #[test]
    fn one_sided_capture_is_recognised_at_close_only_when_strictly_plausible() {
        let body = json!({"Key": "g"});
        let req = encode_request(10, 0, 3, Some("c"), &body).unwrap();
        let (got, stats) = run(false, &[(Dir::AtoB, req)]);
        assert_eq!(got, [(Kind::Request, a(), Some(3))]);
        assert_eq!(stats.unanswered.get(&(10, 0)), Some(&1));
        // A lone response is not Kafka evidence: nothing is invented.
        let resp = encode_response(
            10,
            0,
            3,
            &json!({"ErrorCode": 0, "NodeId": 1, "Host": "h", "Port": 1}),
        )
        .unwrap();
        let (got, stats) = run(false, &[(Dir::BtoA, resp)]);
        assert!(got.is_empty());
        assert_eq!(stats.not_kafka, 1);
    }

    #[test]
    fn partial_frames_are_capped_over_all_connections() {
        let cfg = KafkaConfig {
            max_buffered_total: 10_000,
            ..KafkaConfig::default()
        };
        let mut s = Sessions::new(cfg);
        let mut n = 0;
        let mut out = |_: &KafkaFrame<'_>| n += 1;
        // 100 connections, each holding the first 500 bytes of a 1000-byte request.
        let mut head = 996i32.to_be_bytes().to_vec();
        head.extend_from_slice(&[0, 10, 0, 0, 0, 0, 0, 1, 0, 1, b'c']);
        head.resize(500, 0);
        for i in 0..100u64 {
            let conn = ConnId(i);
            let server: SocketAddr = "10.0.0.1:9092".parse().unwrap();
            let client = SocketAddr::new(a().ip(), 40000 + i as u16);
            s.on_event(
                1,
                0,
                StreamEvent::Opened {
                    conn,
                    a: client,
                    b: server,
                    syn_seen: true,
                    frame: 1,
                },
                &mut out,
            );
            let ev = StreamEvent::Data {
                conn,
                dir: Dir::AtoB,
                data: &head,
                stream_offset: 0,
                frame: 0,
                ts_ns: 0,
                file: 0,
            };
            s.on_event(2, 0, ev, &mut out);
            assert!(s.buffered <= 10_000, "held {} after {i}", s.buffered);
        }
        // Twenty fit under the cap; each later one gives up its 500 bytes.
        assert_eq!(s.stats().shed_bytes, 80 * 500);
        assert!(s.stats().peak_buffered <= 10_000);
        assert_eq!(n, 0);
    }

    #[test]
    fn tls_on_a_kafka_port_is_named_not_desynced() {
        let mut s = Sessions::new(KafkaConfig::default());
        let mut n = 0;
        let mut out = |_: &KafkaFrame<'_>| n += 1;
        let conn = ConnId(1);
        let server: SocketAddr = "10.0.0.1:9093".parse().unwrap();
        s.on_event(
            1,
            0,
            StreamEvent::Opened {
                conn,
                a: a(),
                b: server,
                syn_seen: true,
                frame: 1,
            },
            &mut out,
        );
        let hello = [
            0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xfc, 0x03, 0x03,
        ];
        let ev = StreamEvent::Data {
            conn,
            dir: Dir::AtoB,
            data: &hello,
            stream_offset: 0,
            frame: 0,
            ts_ns: 0,
            file: 0,
        };
        s.on_event(2, 0, ev, &mut out);
        assert_eq!(n, 0);
        let st = s.stats();
        assert_eq!((st.tls, st.connections, st.desyncs), (1, 0, 0));
    }

    #[test]
    fn text_protocols_are_not_kafka() {
        let (got, stats) = run(
            true,
            &[(Dir::AtoB, b"GET / HTTP/1.1\r\nHost: x\r\n\r\n".to_vec())],
        );
        assert!(got.is_empty());
        assert_eq!(stats.not_kafka, 1);
    }
}
