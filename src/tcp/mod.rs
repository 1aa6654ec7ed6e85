//! Stage 3: TCP reassembly. Turns decoded segments into ordered byte-stream
//! events per connection and direction, with bounded memory.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

mod half;

use crate::net::{TcpSegment, Vlan};
use half::{Ctx, HalfStream};
use rustc_hash::FxHashMap as HashMap;
use std::collections::BTreeMap;
use std::net::SocketAddr;

/// Connection identity, assigned in the order connections are first seen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ConnId(pub u64);

/// Direction within a connection. A is the client (SYN sender) when the
/// handshake was seen, otherwise the sender of the first packet seen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Dir {
    AtoB,
    BtoA,
}

impl Dir {
    pub fn reverse(self) -> Dir {
        match self {
            Dir::AtoB => Dir::BtoA,
            Dir::BtoA => Dir::AtoB,
        }
    }
}

/// Why a connection's stream ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CloseReason {
    /// Both directions delivered everything up to their FIN.
    Fin,
    Rst,
    /// Pushed out of the table to make room (max_connections).
    Evicted,
    /// No packet for longer than idle_timeout_ns.
    Idle,
    /// A new SYN reused the endpoints; the new connection gets a new id.
    Reused,
    EndOfCapture,
}

/// What the reassembler reports, per connection and direction, in stream order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StreamEvent<'a> {
    Opened {
        conn: ConnId,
        a: SocketAddr,
        b: SocketAddr,
        syn_seen: bool,
        /// Packet number of the packet that opened it.
        packet: u64,
    },
    /// In-order bytes; `stream_offset` counts delivered bytes and gaps since
    /// the stream start. `packet` and `ts_ns` are those of the packet that
    /// carried these bytes, which is not the packet being pushed when they
    /// were buffered out of order (delivered after reordering resolves, a
    /// hole is skipped, or at close).
    Data {
        conn: ConnId,
        dir: Dir,
        data: &'a [u8],
        stream_offset: u64,
        packet: u64,
        ts_ns: i64,
        /// Input file of that packet (see [`Stamp`]).
        file: u32,
    },
    /// `len` bytes never seen were skipped.
    Gap {
        conn: ConnId,
        dir: Dir,
        len: u64,
    },
    /// A retransmission carried different bytes for this range; the bytes
    /// seen first are (or were) delivered, the later ones dropped.
    Conflict {
        conn: ConnId,
        dir: Dir,
        stream_offset: u64,
        len: u64,
    },
    Closed {
        conn: ConnId,
        reason: CloseReason,
    },
}

impl<'a> StreamEvent<'a> {
    /// Bytes: their event without them, and the bytes, to keep the event small past the
    /// buffer they are in; any other event as it is.
    #[inline]
    pub fn split(self) -> Result<(DataHead, &'a [u8]), StreamEvent<'static>> {
        match self {
            StreamEvent::Data {
                conn,
                dir,
                data,
                stream_offset,
                packet,
                ts_ns,
                file,
            } => {
                let at = Stamp {
                    packet,
                    ts_ns,
                    file,
                };
                let head = DataHead {
                    conn,
                    dir,
                    stream_offset,
                    at,
                };
                Ok((head, data))
            }
            other => Err(other.attach(&[])),
        }
    }

    /// The event without its bytes, and the bytes: to keep the event past the buffer
    /// they are in (the bytes copied elsewhere, then [`StreamEvent::attach`]ed).
    #[inline]
    pub fn detach(self) -> (StreamEvent<'static>, &'a [u8]) {
        match self.split() {
            Ok((head, data)) => (head.event(&[]), data),
            Err(ev) => (ev, &[]),
        }
    }

    /// This event with `data` as its bytes (only `Data` carries any).
    #[inline]
    pub fn attach<'b>(&self, data: &'b [u8]) -> StreamEvent<'b> {
        match *self {
            StreamEvent::Data {
                conn,
                dir,
                stream_offset,
                packet,
                ts_ns,
                file,
                ..
            } => StreamEvent::Data {
                conn,
                dir,
                data,
                stream_offset,
                packet,
                ts_ns,
                file,
            },
            StreamEvent::Opened {
                conn,
                a,
                b,
                syn_seen,
                packet,
            } => StreamEvent::Opened {
                conn,
                a,
                b,
                syn_seen,
                packet,
            },
            StreamEvent::Gap { conn, dir, len } => StreamEvent::Gap { conn, dir, len },
            StreamEvent::Conflict {
                conn,
                dir,
                stream_offset,
                len,
            } => StreamEvent::Conflict {
                conn,
                dir,
                stream_offset,
                len,
            },
            StreamEvent::Closed { conn, reason } => StreamEvent::Closed { conn, reason },
        }
    }
}

/// A [`StreamEvent::Data`] without its bytes (see [`StreamEvent::split`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DataHead {
    pub conn: ConnId,
    pub dir: Dir,
    pub stream_offset: u64,
    /// The packet that carried the bytes.
    pub at: Stamp,
}

impl DataHead {
    /// The event, with `data` as its bytes.
    #[inline]
    pub fn event(self, data: &[u8]) -> StreamEvent<'_> {
        StreamEvent::Data {
            conn: self.conn,
            dir: self.dir,
            data,
            stream_offset: self.stream_offset,
            packet: self.at.packet,
            ts_ns: self.at.ts_ns,
            file: self.at.file,
        }
    }
}

/// Where some bytes were captured: the packet's number, time and input file
/// (its index among merged inputs; 0 for a single input).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Stamp {
    pub packet: u64,
    pub ts_ns: i64,
    pub file: u32,
}

/// Limits. Memory held is at most `max_buffered_total` of out-of-order
/// bytes, plus `2 × overlap_history` per open connection, plus a small
/// fixed record per tracked connection (at most `max_connections`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TcpConfig {
    /// Out-of-order bytes buffered per direction before the oldest hole is
    /// given up on.
    pub max_buffered_per_direction: usize,
    /// The same limit over all connections together.
    pub max_buffered_total: usize,
    /// Connections (open or recently closed) tracked at once; the least
    /// recently used is evicted beyond that.
    pub max_connections: usize,
    /// A hole is given up on once buffered data reaches this far past it.
    pub gap_window: usize,
    /// Connections idle this long are closed (`None`: never).
    pub idle_timeout_ns: Option<u64>,
    /// Delivered bytes kept per direction to compare retransmissions with, at most: only
    /// those the peer has not acknowledged are kept.
    pub overlap_history: usize,
}

impl Default for TcpConfig {
    fn default() -> Self {
        TcpConfig {
            max_buffered_per_direction: 16 << 20,
            max_buffered_total: 1 << 30,
            max_connections: 65536,
            gap_window: 8 << 20,
            idle_timeout_ns: None,
            overlap_history: 16 << 10,
        }
    }
}

/// Counters; every drop, skip and eviction lands in one of them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TcpStats {
    pub segments: u64,
    pub connections: u64,
    pub closed_fin: u64,
    pub closed_rst: u64,
    pub evicted: u64,
    pub idle_closed: u64,
    pub reused: u64,
    pub delivered_bytes: u64,
    pub gaps: u64,
    pub gap_bytes: u64,
    /// Retransmitted ranges whose bytes matched what was seen before.
    pub identical_overlaps: u64,
    pub identical_overlap_bytes: u64,
    pub conflicts: u64,
    pub conflict_bytes: u64,
    /// Bytes of segments that overlapped data already seen.
    pub retransmitted_bytes: u64,
    /// Retransmitted bytes not compared: acknowledged by the peer already, or more than
    /// overlap_history back.
    pub unchecked_bytes: u64,
    pub out_of_order_bytes: u64,
    /// Bytes cut by the snaplen at the delivery point, reported as gaps.
    pub truncated_bytes: u64,
    /// Segments for an unknown connection that cannot open one (pure ACK,
    /// FIN or RST without data).
    pub no_connection: u64,
    /// Segments for a connection that already closed.
    pub after_close: u64,
    /// Segments too far ahead of the stream to be plausible.
    pub out_of_window: u64,
    pub duplicate_syns: u64,
    /// Holes given up on because a buffer limit was reached.
    pub buffer_limit_skips: u64,
    /// Holes given up on because the peer acknowledged past them.
    pub ack_skips: u64,
    /// Highest out-of-order bytes buffered at once, all connections.
    pub peak_buffered: usize,
}

/// Unordered endpoint pair on one VLAN: both directions map to one key, and
/// the same endpoints on another VLAN are another connection. Packed into plain words,
/// as it is looked up for every packet: each address as 128 bits (`x` before `y`), and
/// in `rest` both ports, both VLAN ids and whether each address is IPv6.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct FlowKey {
    x: u128,
    y: u128,
    /// x's port, y's port, the outer and the inner VLAN id, 16 bits each.
    rest: u64,
    /// Bit 0: x is IPv6; bit 1: y is.
    v6: u8,
}

/// Two words per key (the addresses folded). Equal keys hash alike; what is folded
/// away only makes collisions.
impl std::hash::Hash for FlowKey {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        fn fold(a: u128) -> u64 {
            (a as u64) ^ ((a >> 64) as u64).rotate_left(17)
        }
        h.write_u64(fold(self.x).rotate_left(16) ^ self.rest);
        h.write_u64(fold(self.y) ^ u64::from(self.v6));
    }
}

impl FlowKey {
    #[inline]
    fn new(x: SocketAddr, y: SocketAddr, vlan: Vlan) -> FlowKey {
        let vlans = (u64::from(vlan.outer) << 32) | (u64::from(vlan.inner) << 48);
        if let (SocketAddr::V4(a), SocketAddr::V4(b)) = (x, y) {
            // The common case: (address, port) ordered as one 48-bit number each, which
            // orders them as the general path's (false, address, port) does.
            let word = |v: std::net::SocketAddrV4| (u64::from(v.ip().to_bits()) << 16) | u64::from(v.port());
            let (a, b) = (word(a), word(b));
            let (x, y) = if a <= b { (a, b) } else { (b, a) };
            return FlowKey {
                x: u128::from(x >> 16),
                y: u128::from(y >> 16),
                rest: (x & 0xffff) | ((y & 0xffff) << 16) | vlans,
                v6: 0,
            };
        }
        FlowKey::general(x, y, vlan)
    }

    /// [`FlowKey::new`] for any addresses.
    fn general(x: SocketAddr, y: SocketAddr, vlan: Vlan) -> FlowKey {
        fn end(a: SocketAddr) -> (bool, u128, u16) {
            match a {
                SocketAddr::V4(v) => (false, u128::from(v.ip().to_bits()), v.port()),
                SocketAddr::V6(v) => (true, v.ip().to_bits(), v.port()),
            }
        }
        let (x, y) = (end(x), end(y));
        let (x, y) = if x <= y { (x, y) } else { (y, x) };
        FlowKey {
            x: x.1,
            y: y.1,
            rest: u64::from(x.2)
                | (u64::from(y.2) << 16)
                | (u64::from(vlan.outer) << 32)
                | (u64::from(vlan.inner) << 48),
            v6: u8::from(x.0) | (u8::from(y.0) << 1),
        }
    }
}

#[derive(Debug)]
struct TcpConn {
    id: ConnId,
    a: SocketAddr,
    b: SocketAddr,
    ab: HalfStream,
    ba: HalfStream,
    /// Closed connections stay as tombstones so late retransmissions and
    /// final ACKs do not open phantom connections.
    closed: bool,
    last_ts: i64,
    /// When last used (open) or closed, for the LRU order.
    tick: u64,
    /// Its key in `live` (open) or `dead` (closed). An open connection's entry in `live`
    /// is moved up to `tick` only when it reaches the front (see [`Reassembler::pop_lru`]),
    /// so a packet costs no tree update.
    queued: u64,
}

impl TcpConn {
    fn halves(&mut self, dir: Dir) -> (&mut HalfStream, &mut HalfStream) {
        match dir {
            Dir::AtoB => (&mut self.ab, &mut self.ba),
            Dir::BtoA => (&mut self.ba, &mut self.ab),
        }
    }
}

/// Reassembles every TCP connection in a capture.
#[derive(Debug)]
pub struct Reassembler {
    cfg: TcpConfig,
    stats: TcpStats,
    conns: HashMap<FlowKey, TcpConn>,
    /// Open connections, one entry each, keyed at or before their last use: the first
    /// whose key is its last use is the least recently used.
    live: BTreeMap<u64, FlowKey>,
    /// Tombstones by time of closing, oldest first.
    dead: BTreeMap<u64, FlowKey>,
    tick: u64,
    next_id: u64,
    total_buffered: usize,
    scratch: Vec<(u64, u64)>,
    /// Whether common segments take their shortcut (see [`segment`]); off only to test
    /// that it does what the general steps do.
    shortcuts: bool,
}

type Out<'o> = &'o mut dyn FnMut(StreamEvent<'_>);

impl Reassembler {
    pub fn new(cfg: TcpConfig) -> Self {
        Reassembler {
            cfg,
            stats: TcpStats::default(),
            conns: HashMap::default(),
            live: BTreeMap::new(),
            dead: BTreeMap::new(),
            tick: 0,
            next_id: 0,
            total_buffered: 0,
            scratch: Vec::new(),
            shortcuts: true,
        }
    }

    /// Turns the shortcut for common segments off, to compare it with the general steps.
    #[cfg(test)]
    fn without_shortcuts(mut self) -> Self {
        self.shortcuts = false;
        self
    }

    pub fn stats(&self) -> &TcpStats {
        &self.stats
    }

    pub fn config(&self) -> &TcpConfig {
        &self.cfg
    }

    /// Open connections currently tracked.
    pub fn open_connections(&self) -> usize {
        self.live.len()
    }

    /// Out-of-order bytes buffered right now, over all connections.
    pub fn buffered_bytes(&self) -> usize {
        self.total_buffered
    }

    /// Feeds one segment. `packet` is the 1-based packet number, `ts_ns` the
    /// packet time; events for bytes this packet completes are emitted now.
    pub fn push(&mut self, packet: u64, ts_ns: i64, seg: &TcpSegment<'_>, out: Out<'_>) {
        let at = Stamp {
            packet,
            ts_ns,
            file: 0,
        };
        self.push_at(at, seg, out);
    }

    /// [`Reassembler::push`] for a packet of input `at.file` (merged inputs).
    pub fn push_at(&mut self, at: Stamp, seg: &TcpSegment<'_>, out: Out<'_>) {
        let ts_ns = at.ts_ns;
        self.stats.segments += 1;
        if let Some(timeout) = self.cfg.idle_timeout_ns {
            self.expire_idle(ts_ns, timeout, out);
        }
        let key = FlowKey::new(seg.src, seg.dst, seg.vlan);
        let pure_syn = seg.syn && !seg.ack_flag;

        let Reassembler {
            cfg,
            stats,
            conns,
            total_buffered,
            scratch,
            tick,
            shortcuts,
            ..
        } = self;
        let both_done = match conns.get_mut(&key) {
            // The common case, with one lookup: more of an open connection.
            Some(conn) if !conn.closed && !pure_syn => {
                *tick += 1;
                conn.tick = *tick;
                conn.last_ts = conn.last_ts.max(ts_ns);
                let mut ctx = Ctx {
                    conn: conn.id,
                    dir: Dir::AtoB,
                    cfg,
                    stats,
                    total_buffered,
                    out,
                    scratch,
                    at,
                    shortcuts: *shortcuts,
                };
                segment(conn, &mut ctx, seg)
            }
            _ => {
                if !self.open_for(key, at, seg, out) {
                    return;
                }
                let Reassembler {
                    cfg,
                    stats,
                    conns,
                    total_buffered,
                    scratch,
                    shortcuts,
                    ..
                } = self;
                let Some(conn) = conns.get_mut(&key) else {
                    return;
                };
                let mut ctx = Ctx {
                    conn: conn.id,
                    dir: Dir::AtoB,
                    cfg,
                    stats,
                    total_buffered,
                    out,
                    scratch,
                    at,
                    shortcuts: *shortcuts,
                };
                segment(conn, &mut ctx, seg)
            }
        };
        if seg.rst {
            self.stats.closed_rst += 1;
            self.close(key, CloseReason::Rst, out);
        } else if both_done {
            self.stats.closed_fin += 1;
            self.close(key, CloseReason::Fin, out);
        }
    }

    /// A segment of no open connection, or a SYN: opens (or reopens) the connection it
    /// starts, or counts why it starts none. Whether the segment goes on to its connection.
    fn open_for(&mut self, key: FlowKey, at: Stamp, seg: &TcpSegment<'_>, out: Out<'_>) -> bool {
        let Stamp { packet, ts_ns, .. } = at;
        let has_data = seg.payload_len > 0;
        let pure_syn = seg.syn && !seg.ack_flag;
        let state = self.conns.get(&key).map(|c| {
            let from_a = seg.src == c.a;
            let a_isn = c.ab.isn;
            (c.closed, from_a, a_isn)
        });
        match state {
            None | Some((true, _, _)) => {
                if !(seg.syn || has_data) || seg.rst {
                    if state.is_some() {
                        self.stats.after_close += 1;
                    } else {
                        self.stats.no_connection += 1;
                    }
                    return false;
                }
                if state.is_some() && !seg.syn {
                    // Data after close with no new handshake: a late
                    // retransmission, not a new conversation.
                    self.stats.after_close += 1;
                    return false;
                }
                self.open(key, packet, ts_ns, seg, out);
            }
            Some((false, from_a, a_isn)) if pure_syn => {
                if from_a && a_isn == Some(seg.seq) {
                    self.stats.duplicate_syns += 1;
                    self.touch(key, ts_ns);
                    return false;
                }
                // A new SYN with another ISN: the endpoints are being reused.
                self.stats.reused += 1;
                self.close(key, CloseReason::Reused, out);
                self.open(key, packet, ts_ns, seg, out);
            }
            Some((false, _, _)) => self.touch(key, ts_ns),
        }
        true
    }

    /// End of capture: flush every open connection (holes become gaps) and
    /// close it, in connection-id order.
    pub fn finish(&mut self, out: Out<'_>) {
        let mut open: Vec<(ConnId, FlowKey)> = self
            .conns
            .iter()
            .filter(|(_, c)| !c.closed)
            .map(|(k, c)| (c.id, *k))
            .collect();
        open.sort_unstable_by_key(|(id, _)| *id);
        for (_, key) in open {
            self.close(key, CloseReason::EndOfCapture, out);
        }
        self.conns.clear();
        self.live.clear();
        self.dead.clear();
    }

    fn open(&mut self, key: FlowKey, packet: u64, ts_ns: i64, seg: &TcpSegment<'_>, out: Out<'_>) {
        if self.conns.contains_key(&key) {
            // Replacing a tombstone.
            self.forget(key);
        }
        while self.conns.len() >= self.cfg.max_connections.max(1) {
            if let Some((_, old)) = self.dead.pop_first() {
                self.conns.remove(&old);
            } else if let Some((_, old)) = self.pop_lru() {
                // Popped first so a broken invariant cannot loop forever.
                self.stats.evicted += 1;
                self.close(old, CloseReason::Evicted, out);
                self.forget(old);
            } else {
                break;
            }
        }
        // A lone SYN-ACK means the server is the source.
        let (a, b) = if seg.syn && seg.ack_flag {
            (seg.dst, seg.src)
        } else {
            (seg.src, seg.dst)
        };
        let id = ConnId(self.next_id);
        self.next_id += 1;
        self.stats.connections += 1;
        self.tick += 1;
        self.live.insert(self.tick, key);
        self.conns.insert(
            key,
            TcpConn {
                id,
                a,
                b,
                ab: HalfStream::default(),
                ba: HalfStream::default(),
                closed: false,
                last_ts: ts_ns,
                tick: self.tick,
                queued: self.tick,
            },
        );
        out(StreamEvent::Opened {
            conn: id,
            a,
            b,
            syn_seen: seg.syn,
            packet,
        });
    }

    fn touch(&mut self, key: FlowKey, ts_ns: i64) {
        self.tick += 1;
        if let Some(c) = self.conns.get_mut(&key) {
            c.tick = self.tick;
            c.last_ts = c.last_ts.max(ts_ns);
        }
    }

    /// Flushes both directions, emits Closed and leaves a tombstone.
    fn close(&mut self, key: FlowKey, reason: CloseReason, out: Out<'_>) {
        let Reassembler {
            cfg,
            stats,
            conns,
            live,
            dead,
            tick,
            total_buffered,
            scratch,
            ..
        } = self;
        let Some(conn) = conns.get_mut(&key) else {
            return;
        };
        if conn.closed {
            return;
        }
        for dir in [Dir::AtoB, Dir::BtoA] {
            // Closing delivers only buffered bytes, each with its own stamp.
            let mut ctx = Ctx {
                conn: conn.id,
                dir,
                cfg,
                stats,
                total_buffered,
                out,
                scratch,
                at: Stamp {
                    packet: 0,
                    ts_ns: conn.last_ts,
                    file: 0,
                },
                shortcuts: false,
            };
            conn.halves(dir).0.flush(&mut ctx);
        }
        // Free buffers; keep only what identifies the tombstone.
        conn.ab = HalfStream::default();
        conn.ba = HalfStream::default();
        conn.closed = true;
        live.remove(&conn.queued);
        *tick += 1;
        conn.tick = *tick;
        conn.queued = *tick;
        dead.insert(*tick, key);
        out(StreamEvent::Closed {
            conn: conn.id,
            reason,
        });
    }

    /// Drops a connection from the table entirely (it must be closed).
    fn forget(&mut self, key: FlowKey) {
        if let Some(c) = self.conns.remove(&key) {
            self.live.remove(&c.queued);
            self.dead.remove(&c.queued);
        }
    }

    /// Takes the least recently used open connection out of `live` (its tick and key).
    /// Entries of connections used since they were queued move up to their last use on
    /// the way, so the first one left in place is the true least recently used: every
    /// other entry's key is at most its connection's last use, and ticks are unique.
    fn pop_lru(&mut self) -> Option<(u64, FlowKey)> {
        loop {
            let (queued, key) = self.live.pop_first()?;
            match self.conns.get_mut(&key) {
                Some(c) if c.tick != queued && !c.closed => {
                    c.queued = c.tick;
                    self.live.insert(c.tick, key);
                }
                _ => return Some((queued, key)),
            }
        }
    }

    fn expire_idle(&mut self, now: i64, timeout: u64, out: Out<'_>) {
        let timeout = i64::try_from(timeout).unwrap_or(i64::MAX);
        while let Some((tick, key)) = self.pop_lru() {
            let Some(conn) = self.conns.get(&key) else {
                continue;
            };
            if now.saturating_sub(conn.last_ts) <= timeout {
                self.live.insert(tick, key);
                break;
            }
            self.stats.idle_closed += 1;
            self.close(key, CloseReason::Idle, out);
        }
    }
}

/// One segment of an open connection: its SYN or first bytes set the stream's start, its
/// ACK releases the other direction, its data goes to its own. Whether both directions
/// are now finished.
fn segment(conn: &mut TcpConn, ctx: &mut Ctx<'_>, seg: &TcpSegment<'_>) -> bool {
    let has_data = seg.payload_len > 0;
    let dir = if seg.src == conn.a && seg.dst == conn.b {
        Dir::AtoB
    } else {
        Dir::BtoA
    };
    let (this, other) = conn.halves(dir);
    // The common segment (the next bytes of a started direction, no SYN or FIN, nothing
    // buffered on either side) takes the shortcut: what the steps below do for it.
    if ctx.shortcuts
        && !seg.syn
        && !seg.fin
        && (!seg.ack_flag || other.ack_changes_nothing())
    {
        ctx.dir = dir;
        if this.accept_next(ctx, seg.seq, seg.payload, u64::from(seg.payload_len)) {
            // The ACK trims only the other side's history (it releases nothing there).
            if seg.ack_flag {
                other.forget_acked(seg.ack);
            }
            // No FIN: this direction is not finished.
            return false;
        }
    }
    if seg.syn {
        if this.isn.is_some_and(|isn| isn != seg.seq) {
            // A SYN-ACK with a different ISN: keep the first.
            ctx.stats.duplicate_syns += 1;
        } else if !this.is_init() {
            this.start_syn(seg.seq);
        }
    } else if !this.is_init() && (has_data || seg.fin) {
        // Mid-stream pickup: the first segment seen sets the start.
        this.start(seg.seq);
    }
    let data_seq = seg.seq.wrapping_add(u32::from(seg.syn));
    // What this ACK releases on the other side was sent before this
    // segment's own data, so it is delivered first (a response must not
    // overtake the request it answers).
    if seg.ack_flag {
        ctx.dir = dir.reverse();
        other.on_peer_ack(ctx, seg.ack);
        // After the holes it skipped: bytes it delivered below the ACK are acknowledged too.
        other.forget_acked(seg.ack);
    }
    ctx.dir = dir;
    this.accept(
        ctx,
        data_seq,
        seg.payload,
        u64::from(seg.payload_len),
        seg.fin,
    );
    conn.ab.finished() && conn.ba.finished()
}

#[cfg(test)]
mod tests;
