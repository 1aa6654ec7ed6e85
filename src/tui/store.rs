//! The message index: one fixed-size [`Row`] per message, the messages' bytes
//! appended once to a shared arena, and endpoints interned per connection.
//!
//! Nothing derived (summary text, tree, hex) is kept: it is rebuilt from the
//! stored bytes on demand, for the rows on screen and the selection only.

use super::order::{self, Order};
use crate::codec::{self, Kind};
use crate::dissect::{Record, VersionSource};
use crate::select;
use crate::tcp::ConnId;
use std::collections::HashMap;
use std::net::SocketAddr;

/// Bytes kept per message; a larger frame keeps only its head (the header and more).
pub const MAX_STORED: usize = 64 << 10;

const NONE: u32 = u32::MAX;

const REQUEST: u16 = 1 << 0;
const HAS_KEY: u16 = 1 << 1;
const HAS_VERSION: u16 = 1 << 2;
const HAS_CORR: u16 = 1 << 3;
/// Malformed, or a non-zero error code in the body.
const ERROR: u16 = 1 << 4;
/// Warnings from framing or decoding.
const WARN: u16 = 1 << 5;
/// The Kafka layer passed only part of the frame.
const CUT: u16 = 1 << 6;
/// The store kept only [`MAX_STORED`] bytes of the frame.
const CAPPED: u16 = 1 << 7;
/// The source is the connection's first-seen endpoint.
const SRC_IS_A: u16 = 1 << 8;
/// The frame had framing warnings, kept in the sparse side table.
const FRAME_WARNINGS: u16 = 1 << 9;
const VS_SHIFT: u16 = 10;
const VS_MASK: u16 = 0b11 << VS_SHIFT;

/// The fixed facts of one message (72 bytes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Row {
    /// Packet that completed the message (several messages may share one).
    pub packet: u64,
    pub ts_ns: i64,
    /// Packet of the paired request; 0 when none.
    request_packet: u64,
    /// `i64::MIN` when unknown.
    latency_ns: i64,
    pub wire_size: u64,
    data_at: u64,
    data_len: u32,
    conn: u32,
    /// Index of the paired request or response row; `NONE` when unpaired.
    pair: u32,
    corr: i32,
    api_key: i16,
    api_version: i16,
    flags: u16,
}

impl Row {
    pub fn kind(&self) -> Kind {
        if self.flags & REQUEST != 0 {
            Kind::Request
        } else {
            Kind::Response
        }
    }
    pub fn api_key(&self) -> Option<i16> {
        (self.flags & HAS_KEY != 0).then_some(self.api_key)
    }
    pub fn api_version(&self) -> Option<i16> {
        (self.flags & HAS_VERSION != 0).then_some(self.api_version)
    }
    pub fn api(&self) -> Option<(i16, i16)> {
        Some((self.api_key()?, self.api_version()?))
    }
    pub fn correlation_id(&self) -> Option<i32> {
        (self.flags & HAS_CORR != 0).then_some(self.corr)
    }
    pub fn request_packet(&self) -> Option<u64> {
        (self.request_packet != 0).then_some(self.request_packet)
    }
    pub fn latency_ns(&self) -> Option<i64> {
        (self.latency_ns != i64::MIN).then_some(self.latency_ns)
    }
    /// Malformed, or an error code that is not NONE.
    pub fn is_error(&self) -> bool {
        self.flags & ERROR != 0
    }
    pub fn has_warnings(&self) -> bool {
        self.flags & WARN != 0
    }
    /// Only the head of the frame is stored.
    pub fn is_capped(&self) -> bool {
        self.flags & CAPPED != 0
    }
    pub fn version_source(&self) -> Option<VersionSource> {
        match (self.flags & VS_MASK) >> VS_SHIFT {
            1 => Some(VersionSource::Header),
            2 => Some(VersionSource::Request),
            3 => Some(VersionSource::Inferred),
            _ => None,
        }
    }
    /// The paired request's or response's row.
    pub fn pair(&self) -> Option<usize> {
        (self.pair != NONE).then_some(self.pair as usize)
    }
    /// The store's index of the row's TCP connection.
    pub fn conn(&self) -> u32 {
        self.conn
    }
}

/// One message as the loader hands it over, before interning.
#[derive(Debug)]
pub struct NewRow {
    row: Row,
    conn: ConnId,
    src: SocketAddr,
    dst: SocketAddr,
    warnings: Vec<String>,
}

/// Messages collected on the loader thread, with their bytes in one buffer.
#[derive(Debug, Default)]
pub struct Batch {
    pub rows: Vec<NewRow>,
    pub bytes: Vec<u8>,
    /// The capture's first packet time, which relative times count from.
    pub first_ts_ns: Option<i64>,
}

impl Batch {
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// Adds a record's compact facts and (capped) bytes.
    pub fn push(&mut self, r: &Record<'_>) {
        let f = r;
        let m = &r.msg;
        self.first_ts_ns.get_or_insert(r.first_ts_ns);
        let keep = f.data.get(..MAX_STORED).unwrap_or(f.data);
        let mut flags = 0u16;
        let mut set = |cond: bool, bit: u16| {
            if cond {
                flags |= bit;
            }
        };
        set(m.kind == Kind::Request, REQUEST);
        set(m.api_key.is_some(), HAS_KEY);
        set(m.api_version.is_some(), HAS_VERSION);
        set(m.correlation_id.is_some(), HAS_CORR);
        set(select::has_error(r), ERROR);
        set(!f.warnings.is_empty() || !m.warnings.is_empty(), WARN);
        set(f.cut, CUT);
        set(keep.len() < f.data.len(), CAPPED);
        set(!f.warnings.is_empty(), FRAME_WARNINGS);
        let vs = match r.version_source {
            None => 0,
            Some(VersionSource::Header) => 1,
            Some(VersionSource::Request) => 2,
            Some(VersionSource::Inferred) => 3,
        };
        flags |= vs << VS_SHIFT;
        let row = Row {
            packet: f.packet,
            ts_ns: f.ts_ns,
            request_packet: f.request_packet.unwrap_or(0),
            latency_ns: f.latency_ns.unwrap_or(i64::MIN),
            wire_size: f.wire_size,
            data_at: self.bytes.len() as u64,
            data_len: keep.len() as u32,
            conn: 0,
            pair: NONE,
            corr: m.correlation_id.unwrap_or(0),
            api_key: m.api_key.unwrap_or(0),
            api_version: m.api_version.unwrap_or(0),
            flags,
        };
        self.bytes.extend_from_slice(keep);
        self.rows.push(NewRow {
            row,
            conn: f.conn,
            src: f.src,
            dst: f.dst,
            warnings: f.warnings.clone(),
        });
    }
}

#[derive(Clone, Copy, Debug)]
/// A connection and its two endpoints, interned once (the tcp and kafka layers have their own `Conn`).
struct Ends {
    id: ConnId,
    a: SocketAddr,
    b: SocketAddr,
}

/// Every message seen so far.
#[derive(Debug, Default)]
pub struct Store {
    rows: Vec<Row>,
    arena: Vec<u8>,
    conns: Vec<Ends>,
    conn_ids: HashMap<ConnId, u32>,
    /// Requests awaiting their response: (connection, correlation id) → row.
    pending: HashMap<(u32, i32), u32>,
    /// Framing warnings, for the few rows that have them.
    frame_warnings: HashMap<u32, Vec<String>>,
    first_ts_ns: Option<i64>,
    /// Rows by packet number, as the list shows them (rows stay in arrival order).
    order: Order,
}

impl Store {
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    pub fn row(&self, i: usize) -> Option<&Row> {
        self.rows.get(i)
    }

    /// Timestamp of the capture's first packet, for relative times.
    pub fn first_ts_ns(&self) -> i64 {
        self.first_ts_ns.unwrap_or(0)
    }

    /// Bytes held: rows, arena and tables (for the status bar and measurements).
    pub fn memory(&self) -> usize {
        self.rows.capacity() * std::mem::size_of::<Row>()
            + self.order.memory()
            + self.arena.capacity()
            + self.conns.capacity() * std::mem::size_of::<Ends>()
    }

    /// Appends a batch: bytes into the arena, endpoints interned, responses paired.
    pub fn push_batch(&mut self, batch: Batch) {
        if self.first_ts_ns.is_none() {
            self.first_ts_ns = batch.first_ts_ns;
        }
        let base = self.arena.len() as u64;
        self.arena.extend_from_slice(&batch.bytes);
        self.rows.reserve(batch.rows.len());
        let from = self.rows.len();
        for n in batch.rows {
            self.push(n, base);
        }
        self.order.add(&self.rows, from);
    }

    /// The row shown at position `pos` of the list, in packet order.
    pub fn by_frame(&self, pos: usize) -> Option<usize> {
        self.order.get(pos)
    }

    /// Where row `row` comes in packet order.
    pub fn frame_position(&self, row: usize) -> Option<usize> {
        self.order.position(&self.rows, row)
    }

    /// What the list sorts by: the packet number, then arrival.
    pub fn sort_key(&self, row: usize) -> (u64, usize) {
        order::key(&self.rows, row)
    }

    fn push(&mut self, n: NewRow, base: u64) {
        let mut row = n.row;
        row.data_at += base;
        let (conn, src_is_a) = self.intern(n.conn, n.src, n.dst);
        row.conn = conn;
        if src_is_a {
            row.flags |= SRC_IS_A;
        }
        let at = self.rows.len() as u32;
        if let Some(corr) = row.correlation_id() {
            match row.kind() {
                Kind::Request => {
                    self.pending.insert((conn, corr), at);
                }
                Kind::Response if row.request_packet != 0 => {
                    if let Some(req) = self.pending.remove(&(conn, corr)) {
                        if let Some(r) = self.rows.get_mut(req as usize) {
                            if r.packet == row.request_packet {
                                r.pair = at;
                                row.pair = req;
                            }
                        }
                    }
                }
                Kind::Response => {}
            }
        }
        if !n.warnings.is_empty() {
            self.frame_warnings.insert(at, n.warnings);
        }
        self.rows.push(row);
    }

    fn intern(&mut self, id: ConnId, src: SocketAddr, dst: SocketAddr) -> (u32, bool) {
        if let Some(&c) = self.conn_ids.get(&id) {
            if let Some(k) = self.conns.get(c as usize) {
                if (k.a, k.b) == (src, dst) {
                    return (c, true);
                }
                if (k.b, k.a) == (src, dst) {
                    return (c, false);
                }
            }
        }
        let c = self.conns.len() as u32;
        self.conns.push(Ends { id, a: src, b: dst });
        self.conn_ids.insert(id, c);
        (c, true)
    }

    /// Source and destination of a row.
    pub fn endpoints(&self, row: &Row) -> Option<(SocketAddr, SocketAddr)> {
        let c = self.conns.get(row.conn as usize)?;
        Some(if row.flags & SRC_IS_A != 0 {
            (c.a, c.b)
        } else {
            (c.b, c.a)
        })
    }

    /// The stored bytes of row `i` (the frame from its size prefix, perhaps only its head).
    pub fn data(&self, i: usize) -> &[u8] {
        let Some(r) = self.rows.get(i) else {
            return &[];
        };
        let start = r.data_at as usize;
        self.arena
            .get(start..start.saturating_add(r.data_len as usize))
            .unwrap_or(&[])
    }

    /// The framing warnings of row `i`, kept in a sparse side table.
    fn warnings(&self, i: usize, r: &Row) -> Vec<String> {
        if r.flags & FRAME_WARNINGS == 0 {
            return Vec::new();
        }
        self.frame_warnings
            .get(&(i as u32))
            .cloned()
            .unwrap_or_default()
    }

    /// Decodes row `i` again from its stored bytes and hands the record to `f`.
    pub fn with_record<T>(&self, i: usize, f: impl FnOnce(&Record<'_>) -> T) -> Option<T> {
        let r = self.rows.get(i)?;
        let (src, dst) = self.endpoints(r)?;
        let conn = self.conns.get(r.conn as usize)?.id;
        let data = self.data(i);
        // The version source is the one the pipeline found: no second inference.
        let msg = match r.kind() {
            Kind::Request => codec::decode_request(data),
            Kind::Response => codec::decode_response(data, r.api()),
        };
        let rec = Record {
            packet: r.packet,
            ts_ns: r.ts_ns,
            first_ts_ns: self.first_ts_ns(),
            conn,
            src,
            dst,
            data,
            wire_size: r.wire_size,
            cut: r.flags & (CUT | CAPPED) != 0,
            api: r.api(),
            request_packet: r.request_packet(),
            latency_ns: r.latency_ns(),
            warnings: self.warnings(i, r),
            msg,
            version_source: r.version_source(),
            file: 0,
        };
        Some(f(&rec))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_stay_small() {
        assert!(std::mem::size_of::<Row>() <= 72);
    }
}
