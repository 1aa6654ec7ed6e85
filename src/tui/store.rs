//! The message index: one fixed-size [`Row`] (64 bytes) per message, the
//! messages' bytes appended once to a spill file, and endpoints interned per
//! connection.
//!
//! Nothing derived (summary text, tree, hex) is kept, and neither are the
//! bytes in memory: they are read back from the spill file and decoded again
//! on demand, for the rows on screen, the selection and the filter.
//!
//! Why a spill file rather than rereading the capture by packet offsets, as
//! Wireshark does: a message is what TCP reassembly (and perhaps TLS
//! decryption) made of several segments, so rereading the capture would mean
//! replaying the connection's state up to that point; and standard input and
//! live capture have no file to reread. The spill file holds each message as
//! it was delivered, so one read gives it back; it is an anonymous temporary
//! file (unlinked at once, so it goes when kwire exits, however it exits).

use super::order::{self, Order};
use crate::codec::{self, Kind};
use crate::dissect::{Record, VersionSource};
use crate::select;
use crate::tcp::ConnId;
use crate::topics::IdNames;
// Keys are row and connection numbers the store assigns, and correlation ids per connection.
use rustc_hash::FxHashMap as HashMap;
use std::fs::File;
use std::net::SocketAddr;
use std::ops::Range;
use std::os::unix::fs::FileExt;

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
/// Writing the bytes to the spill file failed: they were not kept.
const LOST: u16 = 1 << 12;

/// Bits of [`Row::loc`] that hold the flags; the spill offset is above them.
const FLAG_BITS: u32 = 16;
/// Spill offsets at or past this (256 TiB) do not fit a row: such bytes count as lost.
const MAX_SPILL: u64 = 1 << (64 - FLAG_BITS);
/// The request's packet and the latency are the paired request row's packet
/// and the time since it (as nearly always); otherwise the side table has them.
const FROM_PAIR: u16 = 1 << 13;

/// The fixed facts of one message (48 bytes). Its bytes' length is not kept:
/// they run in the spill file up to the next row's; nor are its request's
/// packet and its latency, which the paired request row gives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Row {
    /// Packet that completed the message (several messages may share one).
    pub packet: u64,
    pub ts_ns: i64,
    /// Where its bytes start in the spill file (high 48 bits) and the flags (low 16).
    loc: u64,
    /// Bytes on the wire (a Kafka frame is at most 4 + `i32::MAX` bytes).
    pub wire_size: u32,
    conn: u32,
    /// Index of the paired request or response row; `NONE` when unpaired.
    pair: u32,
    corr: i32,
    api_key: i16,
    api_version: i16,
}
impl Row {
    fn flags(&self) -> u16 {
        self.loc as u16
    }
    fn set(&mut self, bit: u16) {
        self.loc |= u64::from(bit);
    }
    fn data_at(&self) -> u64 {
        self.loc >> FLAG_BITS
    }
    pub fn kind(&self) -> Kind {
        if self.flags() & REQUEST != 0 {
            Kind::Request
        } else {
            Kind::Response
        }
    }
    pub fn api_key(&self) -> Option<i16> {
        (self.flags() & HAS_KEY != 0).then_some(self.api_key)
    }
    pub fn api_version(&self) -> Option<i16> {
        (self.flags() & HAS_VERSION != 0).then_some(self.api_version)
    }
    pub fn api(&self) -> Option<(i16, i16)> {
        Some((self.api_key()?, self.api_version()?))
    }
    pub fn correlation_id(&self) -> Option<i32> {
        (self.flags() & HAS_CORR != 0).then_some(self.corr)
    }
    /// Malformed, or an error code that is not NONE.
    pub fn is_error(&self) -> bool {
        self.flags() & ERROR != 0
    }
    pub fn has_warnings(&self) -> bool {
        self.flags() & WARN != 0
    }
    /// Only the head of the frame is stored.
    pub fn is_capped(&self) -> bool {
        self.flags() & CAPPED != 0
    }
    pub fn version_source(&self) -> Option<VersionSource> {
        match (self.flags() & VS_MASK) >> VS_SHIFT {
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
    /// The paired request's packet and the time since it, kept by the store.
    request_packet: Option<u64>,
    latency_ns: Option<i64>,
    conn: ConnId,
    src: SocketAddr,
    dst: SocketAddr,
    warnings: Vec<String>,
    topic_names: IdNames,
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
    /// An empty batch with room for `rows` rows and `bytes` bytes.
    pub fn with_capacity(rows: usize, bytes: usize) -> Batch {
        Batch {
            rows: Vec::with_capacity(rows),
            bytes: Vec::with_capacity(bytes),
            first_ts_ns: None,
        }
    }

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
            // The offset in the batch; the store adds where the batch goes.
            loc: ((self.bytes.len() as u64) << FLAG_BITS) | u64::from(flags),
            // A Kafka frame's size fits; saturating keeps a bogus one from wrapping.
            wire_size: u32::try_from(f.wire_size).unwrap_or(u32::MAX),
            conn: 0,
            pair: NONE,
            corr: m.correlation_id.unwrap_or(0),
            api_key: m.api_key.unwrap_or(0),
            api_version: m.api_version.unwrap_or(0),
        };
        self.bytes.extend_from_slice(keep);
        self.rows.push(NewRow {
            row,
            request_packet: f.request_packet,
            latency_ns: f.latency_ns,
            conn: f.conn,
            src: f.src,
            dst: f.dst,
            warnings: f.warnings.clone(),
            topic_names: r.topic_names.clone(),
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

/// Rows per chunk of [`Rows`] (4 MiB).
const CHUNK: usize = 1 << 16;

/// The rows in fixed-size chunks: growing never copies them, so the peak is
/// the rows themselves, not twice as many while a vector doubles.
#[derive(Debug, Default)]
pub struct Rows {
    chunks: Vec<Vec<Row>>,
    len: usize,
}

impl Rows {
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn get(&self, i: usize) -> Option<&Row> {
        self.chunks.get(i / CHUNK)?.get(i % CHUNK)
    }

    fn get_mut(&mut self, i: usize) -> Option<&mut Row> {
        self.chunks.get_mut(i / CHUNK)?.get_mut(i % CHUNK)
    }

    fn push(&mut self, r: Row) {
        match self.chunks.last_mut() {
            Some(c) if c.len() < CHUNK => c.push(r),
            _ => {
                let mut c = Vec::with_capacity(CHUNK);
                c.push(r);
                self.chunks.push(c);
            }
        }
        self.len += 1;
    }

    fn memory(&self) -> usize {
        self.chunks.len() * CHUNK * std::mem::size_of::<Row>()
            + self.chunks.capacity() * std::mem::size_of::<Vec<Row>>()
    }
}

/// Where the messages' bytes go: an anonymous temporary file, or memory when
/// none can be made.
#[derive(Debug, Default)]
struct Spill {
    file: Option<File>,
    /// Bytes written so far.
    len: u64,
    /// The bytes, when there is no file.
    mem: Vec<u8>,
    /// Whether a file was tried for.
    opened: bool,
    /// Why the bytes are in memory, or why some were lost.
    error: Option<String>,
}

impl Spill {
    /// Appends `bytes`; returns where they start, or why they were not kept.
    fn append(&mut self, bytes: &[u8]) -> Result<u64, String> {
        if !self.opened {
            self.opened = true;
            match tempfile::tempfile() {
                Ok(f) => self.file = Some(f),
                Err(e) => self.error = Some(format!("no temporary file ({e}): bytes kept in memory")),
            }
        }
        let at = self.len;
        match &mut self.file {
            Some(f) => {
                // The file is only appended to, so a failed write leaves the end where it was.
                if let Err(e) = f.write_all_at(bytes, at) {
                    let why = format!("writing the temporary file failed: {e}");
                    self.error = Some(why.clone());
                    return Err(why);
                }
            }
            None => self.mem.extend_from_slice(bytes),
        }
        self.len += bytes.len() as u64;
        Ok(at)
    }

    /// Reads `len` bytes at `at` into `buf` (replacing what it held).
    fn read(&self, at: u64, len: usize, buf: &mut Vec<u8>) -> Result<(), String> {
        buf.clear();
        let fail = |e: &dyn std::fmt::Display| format!("cannot read the message's bytes back: {e}");
        match &self.file {
            Some(f) => {
                buf.resize(len, 0);
                f.read_exact_at(buf, at).map_err(|e| fail(&e))
            }
            None => {
                let slice = usize::try_from(at)
                    .ok()
                    .and_then(|s| self.mem.get(s..s.checked_add(len)?))
                    .ok_or_else(|| fail(&"out of range"))?;
                buf.extend_from_slice(slice);
                Ok(())
            }
        }
    }
}

/// How many bytes one read of [`Store::scan`] takes at most.
const SCAN_READ: u64 = 4 << 20;

/// Every message seen so far.
#[derive(Debug, Default)]
pub struct Store {
    rows: Rows,
    spill: Spill,
    conns: Vec<Ends>,
    conn_ids: HashMap<ConnId, u32>,
    /// Requests awaiting their response: (connection, correlation id) → row.
    pending: HashMap<(u32, i32), u32>,
    /// Framing warnings, for the few rows that have them.
    frame_warnings: HashMap<u32, Vec<String>>,
    /// Topic names the run knew for a row's topic ids, for the rows that have any.
    topic_names: HashMap<u32, IdNames>,
    /// The request's packet and latency of responses without [`FROM_PAIR`] that have either.
    unpaired: HashMap<u32, (Option<u64>, Option<i64>)>,
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

    /// Bytes held in memory: rows, order and tables (for measurements).
    pub fn memory(&self) -> usize {
        self.rows.memory()
            + self.order.memory()
            + self.spill.mem.capacity()
            + self.conns.capacity() * std::mem::size_of::<Ends>()
    }

    /// Bytes written to the spill file (or kept in memory without one).
    pub fn spilled(&self) -> u64 {
        self.spill.len
    }

    /// Why the bytes are not (all) in the spill file, if they are not.
    pub fn spill_error(&self) -> Option<&str> {
        self.spill.error.as_deref()
    }

    /// Appends a batch: bytes to the spill file, endpoints interned, responses paired.
    pub fn push_batch(&mut self, batch: Batch) {
        if self.first_ts_ns.is_none() {
            self.first_ts_ns = batch.first_ts_ns;
        }
        let (base, lost) = match self.spill.append(&batch.bytes) {
            Ok(at) if at.saturating_add(batch.bytes.len() as u64) < MAX_SPILL => (at, false),
            Ok(_) => {
                self.spill.error =
                    Some("the temporary file is too large to say where the bytes are".into());
                (self.spill.len, true)
            }
            // `append` kept the reason.
            Err(_) => (self.spill.len, true),
        };
        let base = base.min(MAX_SPILL - 1);
        let from = self.rows.len();
        for mut n in batch.rows {
            if lost {
                // At the spill file's end (`base`), with nothing written.
                n.row.loc = u64::from(n.row.flags()) | u64::from(LOST);
            }
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
        row.loc += base << FLAG_BITS;
        let (conn, src_is_a) = self.intern(n.conn, n.src, n.dst);
        row.conn = conn;
        if src_is_a {
            row.set(SRC_IS_A);
        }
        let at = self.rows.len() as u32;
        if let (Some(corr), Some(req_packet)) = (row.correlation_id(), n.request_packet) {
            if row.kind() == Kind::Response {
                if let Some(req) = self.pending.remove(&(conn, corr)) {
                    if let Some(r) = self.rows.get_mut(req as usize) {
                        if r.packet == req_packet {
                            r.pair = at;
                            row.pair = req;
                            if n.latency_ns == Some(row.ts_ns.wrapping_sub(r.ts_ns)) {
                                row.set(FROM_PAIR);
                            }
                        }
                    }
                }
            }
        }
        if row.correlation_id().is_some() && row.kind() == Kind::Request {
            self.pending.insert((conn, row.corr), at);
        }
        if row.flags() & FROM_PAIR == 0 && (n.request_packet.is_some() || n.latency_ns.is_some()) {
            self.unpaired.insert(at, (n.request_packet, n.latency_ns));
        }
        if !n.warnings.is_empty() {
            self.frame_warnings.insert(at, n.warnings);
        }
        if !n.topic_names.is_empty() {
            self.topic_names.insert(at, n.topic_names);
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
        Some(if row.flags() & SRC_IS_A != 0 {
            (c.a, c.b)
        } else {
            (c.b, c.a)
        })
    }

    /// Where row `i`'s bytes are in the spill file: they end where the next row's start.
    fn span(&self, i: usize) -> Result<Range<u64>, String> {
        let r = self.rows.get(i).ok_or("no such message")?;
        if r.flags() & LOST != 0 {
            return Err(self
                .spill
                .error
                .clone()
                .unwrap_or_else(|| "the message's bytes were not kept".into()));
        }
        // A row whose bytes were lost starts where the spill file ended then, so it ends its
        // predecessor's span as well as any.
        let end = self.rows.get(i + 1).map_or(self.spill.len, Row::data_at);
        Ok(r.data_at()..end.max(r.data_at()))
    }

    /// The stored bytes of row `i` (the frame from its size prefix, perhaps
    /// only its head), read back from the spill file.
    pub fn data(&self, i: usize) -> Result<Vec<u8>, String> {
        let mut buf = Vec::new();
        let s = self.span(i)?;
        self.spill.read(s.start, len(&s), &mut buf)?;
        Ok(buf)
    }

    /// The packet of row `i`'s paired request, if the pipeline paired it.
    pub fn request_packet(&self, i: usize, r: &Row) -> Option<u64> {
        if r.flags() & FROM_PAIR != 0 {
            return self.rows.get(r.pair()?).map(|q| q.packet);
        }
        self.unpaired.get(&(i as u32)).and_then(|u| u.0)
    }

    /// The time from row `i`'s paired request to it, if the pipeline paired it.
    pub fn latency_ns(&self, i: usize, r: &Row) -> Option<i64> {
        if r.flags() & FROM_PAIR != 0 {
            return self.rows.get(r.pair()?).map(|q| r.ts_ns.wrapping_sub(q.ts_ns));
        }
        self.unpaired.get(&(i as u32)).and_then(|u| u.1)
    }

    /// The framing warnings of row `i`, kept in a sparse side table.
    fn warnings(&self, i: usize, r: &Row) -> Vec<String> {
        if r.flags() & FRAME_WARNINGS == 0 {
            return Vec::new();
        }
        self.frame_warnings
            .get(&(i as u32))
            .cloned()
            .unwrap_or_default()
    }

    /// Decodes row `i` again from its bytes (read back) and hands the record to `f`.
    pub fn with_record<T>(&self, i: usize, f: impl FnOnce(&Record<'_>) -> T) -> Result<T, String> {
        let data = self.data(i)?;
        self.decode(i, &data, f)
    }

    /// Decodes rows `range` (those `want` keeps) and hands each record to `f`,
    /// reading their bytes back in large reads; a row whose bytes cannot be read
    /// goes to `f` as the reason.
    pub fn scan(
        &self,
        range: Range<usize>,
        want: impl Fn(&Row) -> bool,
        mut f: impl FnMut(usize, Result<&Record<'_>, &str>),
    ) {
        let mut buf = Vec::new();
        let mut i = range.start;
        let end = range.end.min(self.rows.len());
        while i < end {
            // Rows i..j whose bytes lie together, up to SCAN_READ bytes (at least one row).
            let first = self.span(i);
            let Ok(start) = first.as_ref().map(|s| s.start) else {
                if let (Some(r), Err(e)) = (self.rows.get(i), &first) {
                    if want(r) {
                        f(i, Err(e));
                    }
                }
                i += 1;
                continue;
            };
            let mut j = i + 1;
            let mut stop = first.map_or(start, |s| s.end);
            while j < end {
                match self.span(j) {
                    Ok(s) if s.start == stop && s.end - start <= SCAN_READ => stop = s.end,
                    _ => break,
                }
                j += 1;
            }
            if let Err(e) = self.spill.read(start, len(&(start..stop)), &mut buf) {
                for k in i..j {
                    if self.rows.get(k).is_some_and(&want) {
                        f(k, Err(&e));
                    }
                }
                i = j;
                continue;
            }
            for k in i..j {
                let Some(r) = self.rows.get(k) else { break };
                if !want(r) {
                    continue;
                }
                let data = self
                    .span(k)
                    .ok()
                    .and_then(|s| buf.get(len(&(start..s.start))..len(&(start..s.end))))
                    .unwrap_or_default();
                let _ = self.decode(k, data, |rec| f(k, Ok(rec)));
            }
            i = j;
        }
    }

    /// Decodes `data`, row `i`'s bytes as [`Store::data`] read them, and hands the record to `f`.
    pub fn decode<T>(
        &self,
        i: usize,
        data: &[u8],
        f: impl FnOnce(&Record<'_>) -> T,
    ) -> Result<T, String> {
        let r = self.rows.get(i).ok_or("no such message")?;
        let (src, dst) = self.endpoints(r).ok_or("no such connection")?;
        let conn = self.conns.get(r.conn as usize).ok_or("no such connection")?.id;
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
            wire_size: u64::from(r.wire_size),
            cut: r.flags() & (CUT | CAPPED) != 0,
            api: r.api(),
            request_packet: self.request_packet(i, r),
            latency_ns: self.latency_ns(i, r),
            warnings: self.warnings(i, r),
            msg,
            version_source: r.version_source(),
            file: 0,
            topic_names: self
                .topic_names
                .get(&(i as u32))
                .cloned()
                .unwrap_or_default(),
            // Rows keep no TLS details; the status bar counts decrypted connections.
            tls: None,
        };
        Ok(f(&rec))
    }
}

/// The length of a span of the spill file; a message's span is at most
/// [`MAX_STORED`] and a scan's at most [`SCAN_READ`], so it fits.
fn len(s: &Range<u64>) -> usize {
    usize::try_from(s.end.saturating_sub(s.start)).unwrap_or(usize::MAX)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing)]
mod tests {
    use super::super::detail::{Detail, Note};
    use super::super::loader::{Input, Update, load_all};
    use super::*;
    use crate::pipeline::Config;

    const ELECTION: &str = "captures/kraft-initial-election.pcap";

    /// The loader's batches.
    fn batches() -> Vec<Batch> {
        load_all(Input::file(ELECTION).unwrap(), Config::default())
            .into_iter()
            .filter_map(|u| match u {
                Update::Batch(b, _) => Some(b),
                _ => None,
            })
            .collect()
    }

    /// One batch per message.
    fn singles() -> Vec<Batch> {
        let mut src = crate::capture::Source::open_file(ELECTION).unwrap();
        let mut out = Vec::new();
        crate::pipeline::run(&mut src, Config::default(), &mut |r| {
            let mut b = Batch::default();
            b.push(r);
            out.push(b);
            std::ops::ControlFlow::Continue(())
        });
        out
    }

    fn loaded() -> Store {
        let mut s = Store::default();
        for b in batches() {
            s.push_batch(b);
        }
        assert_eq!(s.len(), 248);
        s
    }

    #[test]
    fn a_failed_reread_says_why_and_never_panics() {
        let mut s = loaded();
        let good = Detail::build(&s, 5).unwrap();
        assert!(!good.lines.is_empty());
        // The spill file is gone (here: swapped for an empty one).
        s.spill.file = Some(tempfile::tempfile().unwrap());
        let e = s.data(5).unwrap_err();
        assert!(e.starts_with("cannot read the message's bytes back"), "{e}");
        assert!(s.with_record(5, |_| ()).is_err());
        let d = Detail::build(&s, 5).unwrap();
        assert!(d.lines.is_empty() && d.bytes.is_empty());
        assert_eq!(d.notes, [Note::Error(e)]);
        // The title still has the row's own facts.
        assert!(d.title.starts_with(&good.title[..good.title.find(" corr=").unwrap()]));
        let mut failed = 0;
        s.scan(0..s.len(), |_| true, |_, r| failed += usize::from(r.is_err()));
        assert_eq!(failed, s.len());
    }

    #[test]
    fn bytes_that_cannot_be_written_are_counted_lost_not_invented() {
        let mut all = singles().into_iter();
        let mut s = Store::default();
        for b in all.by_ref().take(100) {
            s.push_batch(b);
        }
        let before = s.len();
        // Writes now fail: a read-only handle on a copy of what was written.
        let mut copy = Vec::new();
        s.spill.read(0, len(&(0..s.spill.len)), &mut copy).unwrap();
        let path = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(path.path(), &copy).unwrap();
        s.spill.file = Some(File::open(path.path()).unwrap());
        for b in all {
            s.push_batch(b);
        }
        assert_eq!(s.len(), 248);
        assert!(s.data(before - 1).is_ok(), "rows written before stay readable");
        let e = s.data(before).unwrap_err();
        assert!(e.starts_with("writing the temporary file failed"), "{e}");
        assert_eq!(s.spill_error(), Some(e.as_str()));
        let d = Detail::build(&s, s.len() - 1).unwrap();
        assert!(matches!(&d.notes[..], [Note::Error(_)]));
    }

    #[test]
    fn scan_reads_back_what_data_does() {
        let s = loaded();
        let mut n = 0;
        s.scan(0..s.len(), |r| r.kind() == Kind::Request, |i, r| {
            let r = r.unwrap();
            assert_eq!(r.data, s.data(i).unwrap());
            assert_eq!(r.msg.kind, Kind::Request);
            n += 1;
        });
        assert!(n > 100);
    }

    #[test]
    fn rows_stay_small() {
        assert_eq!(std::mem::size_of::<Row>(), 48);
    }
}
