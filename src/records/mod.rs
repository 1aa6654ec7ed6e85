//! Record batches: the bytes of a schema field of type `records`.
//!
//! [`batches`] walks a field batch by batch (magic 2 record batches, magic 0
//! and 1 message sets), checking CRCs and decompressing into a per-batch cap.
//! [`json`] writes the contract's NDJSON shape, [`tree`] makes value-tree nodes
//! with byte ranges, [`summary`] reads batch headers only, and [`encode`]
//! writes batches for tests and fixtures.
//!
//! Nothing here trusts a length: every one is checked against the bytes
//! present, record counts never size an allocation, and decompression streams
//! into `max_decompressed` and stops there.
//!
//! How the schema walker uses it, for a field of type `records` whose data
//! (after its length prefix) is `data`, starting at message offset `base`:
//! - JSON: [`json::write`]`(out, Some(data), &opts)` (or `None` for a null
//!   field) writes the field's value; batches are decoded one at a time.
//! - Tree: `let t = `[`tree::decode_tree`]`(data, &opts)`, then
//!   `t.nodes(data, base, depth + 1, first_index)` gives codec [`Node`](crate::codec::Node)s
//!   to place under the field's node (`next` already counts from
//!   `first_index`); nodes with `decompressed` set have offsets within their
//!   batch's decompressed records, not the message. `t` owns those payloads, so
//!   it must live as long as the nodes.
//! - Summary: [`summary::Totals`] reads batch headers only (no decompression).
//! - KRaft control records: [`Options::schemas`] takes a [`DataSchemas`] that
//!   decodes `LeaderChangeMessage`, `VotersRecord`, ... by name (at version 0,
//!   as Kafka reads them).
#![cfg_attr(
    not(test),
    deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)
)]

mod codec;
pub mod control;
pub mod encode;
pub mod json;
pub mod kraft;
pub mod summary;
pub mod tree;
mod wire;

#[cfg(test)]
mod tests;

pub use codec::{Compression, SnappyForm, XERIAL_MAGIC};
pub use control::{Control, ControlBody, DataSchemas};
pub use wire::Fail;

use std::io::Read;
use std::sync::atomic::{AtomicUsize, Ordering};
use tree::{Kind, TVal, Trace, kind};
use wire::Cur;

/// Default cap on the decompressed bytes of one batch: 64 MiB.
pub const DEFAULT_MAX_DECOMPRESSED: usize = 64 << 20;

/// Limits and helpers for decoding.
#[derive(Clone, Copy)]
pub struct Options<'s> {
    /// Decompressed bytes allowed per batch (or per magic 0/1 wrapper).
    pub max_decompressed: usize,
    /// Records shown per batch; the counts stay exact.
    pub max_records: usize,
    /// Decoder of KRaft control record values, by schema name.
    pub schemas: Option<&'s dyn DataSchemas>,
}

/// The process-wide limits the views use (`--max-decompressed`, `--max-records`).
static MAX_DECOMPRESSED: AtomicUsize = AtomicUsize::new(DEFAULT_MAX_DECOMPRESSED);
static MAX_RECORDS: AtomicUsize = AtomicUsize::new(usize::MAX);

/// Sets the limits every view decodes records with, from the command line.
pub fn set_limits(max_decompressed: usize, max_records: usize) {
    MAX_DECOMPRESSED.store(max_decompressed, Ordering::Relaxed);
    MAX_RECORDS.store(max_records, Ordering::Relaxed);
}

impl Options<'static> {
    /// The limits set by [`set_limits`] (the defaults until then).
    pub fn current() -> Options<'static> {
        Options {
            max_decompressed: MAX_DECOMPRESSED.load(Ordering::Relaxed),
            max_records: MAX_RECORDS.load(Ordering::Relaxed),
            schemas: Some(&kraft::Kraft),
        }
    }
}

impl Default for Options<'_> {
    fn default() -> Self {
        Options {
            max_decompressed: DEFAULT_MAX_DECOMPRESSED,
            max_records: usize::MAX,
            schemas: None,
        }
    }
}

/// A byte range in the buffer its owner says (the field, or a decompressed payload).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Span {
    pub start: usize,
    pub len: usize,
}

impl Span {
    pub fn of<'b>(&self, buf: &'b [u8]) -> &'b [u8] {
        buf.get(self.start..self.start.saturating_add(self.len))
            .unwrap_or_default()
    }
}

/// One record header: the key is UTF-8 text on the wire (shown lossily if not).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Header {
    pub key: Span,
    pub value: Option<Span>,
}

/// One record of a magic 2 batch, with values as written.
#[derive(Clone, Debug, PartialEq)]
pub struct Record {
    /// The whole record, its length varint included.
    pub span: Span,
    pub length: i32,
    pub attributes: i8,
    pub timestamp_delta: i64,
    pub offset_delta: i32,
    pub key: Option<Span>,
    pub value: Option<Span>,
    pub headers: Vec<Header>,
    /// For records of a control batch: the decoded key and value.
    pub control: Option<Result<Control, String>>,
}

/// The 61-byte header of a magic 2 batch.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct BatchHeader {
    pub base_offset: i64,
    pub batch_length: i32,
    pub partition_leader_epoch: i32,
    pub magic: i8,
    pub crc: u32,
    pub attributes: i16,
    pub last_offset_delta: i32,
    pub base_timestamp: i64,
    pub max_timestamp: i64,
    pub producer_id: i64,
    pub producer_epoch: i16,
    pub base_sequence: i32,
    pub record_count: i32,
}

impl BatchHeader {
    pub const SIZE: usize = 61;

    pub fn compression(&self) -> Compression {
        Compression::from_attributes(self.attributes)
    }
    /// `"create"` or `"log_append"` (attribute bit 3).
    pub fn timestamp_type(&self) -> &'static str {
        if self.attributes & 0x08 != 0 {
            "log_append"
        } else {
            "create"
        }
    }
    pub fn is_transactional(&self) -> bool {
        self.attributes & 0x10 != 0
    }
    pub fn is_control(&self) -> bool {
        self.attributes & 0x20 != 0
    }

    /// Reads the header at `c` (the batch's first byte); the length is not checked here.
    fn read(c: &mut Cur<'_>) -> Result<BatchHeader, Fail> {
        Ok(BatchHeader {
            base_offset: c.i64()?,
            batch_length: c.i32()?,
            partition_leader_epoch: c.i32()?,
            magic: c.i8()?,
            crc: c.u32()?,
            attributes: c.i16()?,
            last_offset_delta: c.i32()?,
            base_timestamp: c.i64()?,
            max_timestamp: c.i64()?,
            producer_id: c.i64()?,
            producer_epoch: c.i16()?,
            base_sequence: c.i32()?,
            record_count: c.i32()?,
        })
    }
}

/// A magic 2 record batch.
#[derive(Clone, Debug, PartialEq)]
pub struct Batch {
    /// Where the batch starts in its buffer, and its size (12 + BatchLength).
    pub at: usize,
    pub bytes: usize,
    pub header: BatchHeader,
    /// CRC-32C over the bytes after the CRC field.
    pub crc_valid: bool,
    /// The records decoded, at most `max_records` of them.
    pub records: Vec<Record>,
    /// Records handed over as they were decoded ([`Batches::next_streamed`])
    /// instead of kept in `records`.
    pub streamed: usize,
    /// True when `max_records` stopped decoding before the batch's end.
    pub limited: bool,
    /// The decompressed records (kept up to the last record decoded), for
    /// compressed batches; record spans point into it. Otherwise spans point
    /// into the field.
    pub payload: Option<Vec<u8>>,
    /// Why the records could not all be decoded (over the cap, bad data).
    pub error: Option<String>,
}

impl Batch {
    /// The buffer this batch's record spans point into.
    pub fn data<'b>(&'b self, field: &'b [u8]) -> &'b [u8] {
        self.payload.as_deref().unwrap_or(field)
    }
}

/// A magic 0 or 1 message; a compressed wrapper holds its inner messages.
#[derive(Clone, Debug, PartialEq)]
pub struct Message {
    pub at: usize,
    pub bytes: usize,
    pub offset: i64,
    pub message_size: i32,
    pub crc: u32,
    /// CRC-32 over the bytes from the magic byte to the end.
    pub crc_valid: bool,
    pub magic: i8,
    pub attributes: i8,
    /// Magic 1 only.
    pub timestamp: Option<i64>,
    /// Spans in the buffer holding this message.
    pub key: Option<Span>,
    pub value: Option<Span>,
    /// A wrapper's inner entries (spans into `payload`); `None` when not a
    /// wrapper or when its value could not be decompressed.
    pub inner: Option<Vec<Entry>>,
    pub payload: Option<Vec<u8>>,
    pub limited: bool,
    pub error: Option<String>,
}

impl Message {
    pub fn compression(&self) -> Compression {
        Compression::from_attributes(i16::from(self.attributes))
    }
}

/// One item of a `records` field.
#[derive(Clone, Debug, PartialEq)]
pub enum Entry {
    Batch(Batch),
    Message(Message),
    /// A batch cut off at the end of the field: `bytes` from its start to the end.
    Partial {
        at: usize,
        bytes: usize,
    },
    /// A batch that cannot be decoded; `bytes` is what was skipped.
    Error {
        at: usize,
        bytes: usize,
        error: String,
    },
}

impl Entry {
    pub fn at(&self) -> usize {
        match self {
            Entry::Batch(b) => b.at,
            Entry::Message(m) => m.at,
            Entry::Partial { at, .. } | Entry::Error { at, .. } => *at,
        }
    }
    pub fn bytes(&self) -> usize {
        match self {
            Entry::Batch(b) => b.bytes,
            Entry::Message(m) => m.bytes,
            Entry::Partial { bytes, .. } | Entry::Error { bytes, .. } => *bytes,
        }
    }
}

/// The smallest legal value of the length field (Kafka's RECORD_OVERHEAD_V0).
const MIN_LENGTH: i32 = 14;
/// Bytes of a magic 2 batch after the length field, records excluded.
const V2_AFTER_LENGTH: usize = BatchHeader::SIZE - 12;
/// Decompression reads this much at a time beyond what a record needs.
const CHUNK: usize = 64 << 10;

/// Iterates the entries of a `records` field's bytes.
pub fn batches<'a, 'o>(field: &'a [u8], opts: &'o Options<'o>) -> Batches<'a, 'o> {
    Batches {
        field,
        pos: 0,
        opts,
        index: 0,
        done: false,
        budget: None,
        record_budget: None,
    }
}

/// Decodes a whole field.
pub fn decode(field: &[u8], opts: &Options<'_>) -> Vec<Entry> {
    batches(field, opts).collect()
}

/// The iterator [`batches`] returns.
pub struct Batches<'a, 'o> {
    field: &'a [u8],
    pos: usize,
    opts: &'o Options<'o>,
    index: u32,
    done: bool,
    /// Decompressed bytes still allowed over the whole field, when the caller
    /// keeps every payload (the tree); `None` when each is dropped in turn.
    budget: Option<usize>,
    /// Records still shown over the whole field (the tree), if bounded.
    record_budget: Option<usize>,
}

impl Iterator for Batches<'_, '_> {
    type Item = Entry;
    fn next(&mut self) -> Option<Entry> {
        self.next_traced(&mut ())
    }
}

impl Batches<'_, '_> {
    pub(crate) fn next_traced<T: Trace>(&mut self, t: &mut T) -> Option<Entry> {
        self.next_with(t, None)
    }

    /// The next entry, with each magic 2 batch's header and then its records
    /// handed to `emit` as they are decoded, not kept: decompressed bytes
    /// already handed over are dropped, so a batch's payload is not held
    /// whole. The entry returned is then a batch without its records
    /// ([`Batch::streamed`] counts them) when [`Ev::Head`] was emitted for it.
    pub fn next_streamed(&mut self, emit: &mut dyn FnMut(Ev<'_>)) -> Option<Entry> {
        self.next_with(&mut (), Some(emit))
    }

    fn next_with<T: Trace>(
        &mut self,
        t: &mut T,
        emit: Option<&mut dyn FnMut(Ev<'_>)>,
    ) -> Option<Entry> {
        if self.done || self.pos >= self.field.len() {
            return None;
        }
        let cap = self.budget.map_or(self.opts.max_decompressed, |b| {
            b.min(self.opts.max_decompressed)
        });
        let ctx = Ctx {
            opts: self.opts,
            index: self.index,
            depth: 0,
            cap: Cap {
                bytes: cap,
                whole_field: cap < self.opts.max_decompressed,
            },
            max_records: self
                .opts
                .max_records
                .min(self.record_budget.unwrap_or(usize::MAX))
                .min(held(cap)),
        };
        let mut src = Wire(self.field);
        t.source(tree::Src::Wire);
        let (entry, next, stop) = next_entry(&mut src, self.pos, &ctx, t, emit);
        if let Some(b) = &mut self.budget {
            let kept = match &entry {
                Entry::Batch(x) => x.payload.as_ref().map_or(0, Vec::len),
                Entry::Message(x) => x.payload.as_ref().map_or(0, Vec::len),
                _ => 0,
            };
            *b = b.saturating_sub(kept);
        }
        if let Some(b) = &mut self.record_budget {
            let shown = match &entry {
                Entry::Batch(x) => x.records.len(),
                Entry::Message(x) => x.inner.as_ref().map_or(1, Vec::len),
                _ => 0,
            };
            *b = b.saturating_sub(shown);
        }
        self.pos = next;
        self.done = stop;
        self.index += 1;
        Some(entry)
    }
}

/// What [`Batches::next_streamed`] hands over while it decodes a batch.
pub enum Ev<'e> {
    /// A magic 2 batch's header, just before its records (`records` is empty).
    Head(&'e Batch),
    /// One record; its spans point into `data`.
    Record(&'e [u8], &'e Record),
}

/// Where an entry sits: its index among the field's entries and its nesting.
struct Ctx<'o> {
    opts: &'o Options<'o>,
    index: u32,
    depth: u8,
    cap: Cap,
    /// Records (or inner messages) decoded at most, per batch.
    max_records: usize,
}

/// Records decoded (and held) per batch at most, whatever `max_records` says:
/// a decoded record takes more memory than the 7 bytes it can be on the wire,
/// so this keeps what a capped payload can expand to in proportion to the cap.
fn held(cap: usize) -> usize {
    (cap / 256).max(4096)
}

/// Why decoding stopped at `max_records`: only the holding bound is an error.
fn limit_note(ctx: &Ctx<'_>) -> Option<String> {
    (ctx.max_records == held(ctx.cap.bytes) && ctx.max_records < ctx.opts.max_records).then(|| {
        format!(
            "more than {} records in one batch: the rest are not decoded (--max-decompressed / 256)",
            ctx.max_records
        )
    })
}

/// The decompression cap for one entry, and whether the field's total set it.
#[derive(Clone, Copy)]
struct Cap {
    bytes: usize,
    whole_field: bool,
}

/// Bytes to decode from: the field itself, or a decompressing stream.
trait Source {
    /// The buffer, holding at least `upto` bytes unless the data ends first.
    fn avail(&mut self, upto: usize) -> Result<&[u8], Fail>;
    /// The buffer as it is.
    fn held(&self) -> &[u8];
    /// Drops the bytes before `upto` when that frees enough to matter; returns
    /// how many were dropped (positions after that count from `upto`).
    fn consume(&mut self, _upto: usize) -> usize {
        0
    }
}

struct Wire<'a>(&'a [u8]);

impl Source for Wire<'_> {
    fn avail(&mut self, _upto: usize) -> Result<&[u8], Fail> {
        Ok(self.0)
    }
    fn held(&self) -> &[u8] {
        self.0
    }
}

/// Decompressed bytes, read on demand in chunks, never past `cap + 1`.
struct Payload<'r> {
    reader: Box<dyn Read + 'r>,
    /// Bytes `..filled` are decompressed; the rest is room already zeroed,
    /// kept with the buffer between batches ([`SCRATCH`]).
    buf: Vec<u8>,
    filled: usize,
    /// Bytes decompressed and dropped before `buf` ([`Source::consume`]).
    dropped: usize,
    cap: Cap,
    eof: bool,
    codec: Compression,
}

/// A payload buffer larger than this is not kept for the next batch.
const SCRATCH_KEEP: usize = 4 << 20;

thread_local! {
    /// The last payload buffer, so that each batch does not grow (and zero) a new one.
    static SCRATCH: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}

impl<'r> Payload<'r> {
    fn new(codec: Compression, data: &'r [u8], magic: i8, cap: Cap) -> Result<Self, Fail> {
        let reader =
            codec::reader(codec, data, magic, cap.bytes).map_err(|e| read_fail(codec, cap, &e))?;
        let buf = SCRATCH
            .try_with(|s| s.try_borrow_mut().map(|mut s| std::mem::take(&mut *s)).ok())
            .ok()
            .flatten()
            .unwrap_or_default();
        Ok(Payload {
            reader,
            buf,
            filled: 0,
            dropped: 0,
            cap,
            eof: false,
            codec,
        })
    }

    /// The bytes up to `end` (the last record decoded), to keep.
    fn keep(&self, end: usize) -> Vec<u8> {
        self.buf
            .get(..end.min(self.filled))
            .unwrap_or_default()
            .to_vec()
    }

    /// Reads until `want` more bytes are in or the reader gives nothing more,
    /// as `take(want).read_to_end` would; `false` when it gave nothing.
    fn fill(&mut self, want: usize) -> std::io::Result<bool> {
        let end = self.filled + want;
        if self.buf.len() < end {
            self.buf.resize(end, 0);
        }
        let mut got = 0;
        while self.filled < end {
            let Some(room) = self.buf.get_mut(self.filled..end) else {
                break;
            };
            match self.reader.read(room) {
                Ok(0) => break,
                Ok(n) => {
                    self.filled += n;
                    got += n;
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(got > 0)
    }
}

impl Drop for Payload<'_> {
    fn drop(&mut self) {
        if self.buf.len() <= SCRATCH_KEEP {
            let buf = std::mem::take(&mut self.buf);
            let _ = SCRATCH.try_with(|s| {
                if let Ok(mut s) = s.try_borrow_mut() {
                    if s.len() < buf.len() {
                        *s = buf;
                    }
                }
            });
        }
    }
}

fn over_cap(cap: Cap) -> Fail {
    let what = if cap.whole_field {
        "what remains of the cap for the whole field"
    } else {
        "the cap"
    };
    Fail::Other(format!(
        "decompressed size exceeds {what} of {} bytes (--max-decompressed)",
        cap.bytes
    ))
}

fn read_fail(codec: Compression, cap: Cap, e: &std::io::Error) -> Fail {
    if codec::is_over_cap(e) {
        over_cap(cap)
    } else {
        Fail::Other(format!("{} decompression failed: {e}", codec.name()))
    }
}

impl Source for Payload<'_> {
    fn avail(&mut self, upto: usize) -> Result<&[u8], Fail> {
        while self.filled < upto && !self.eof {
            if self.dropped + self.filled > self.cap.bytes {
                return Err(over_cap(self.cap));
            }
            let room = self.cap.bytes + 1 - self.dropped - self.filled;
            let want = (upto - self.filled).max(CHUNK).min(room);
            match self.fill(want) {
                Ok(false) => self.eof = true,
                Ok(true) => {}
                Err(e) => return Err(read_fail(self.codec, self.cap, &e)),
            }
        }
        if self.dropped + self.filled > self.cap.bytes {
            return Err(over_cap(self.cap));
        }
        Ok(self.held())
    }
    fn held(&self) -> &[u8] {
        self.buf.get(..self.filled).unwrap_or_default()
    }
    fn consume(&mut self, upto: usize) -> usize {
        if upto < CHUNK || upto > self.filled {
            return 0;
        }
        self.buf.copy_within(upto..self.filled, 0);
        self.filled -= upto;
        self.dropped += upto;
        upto
    }
}

/// Decodes the entry at `pos`: returns it, where the next one starts, and
/// whether to stop (a cut or unreadable length leaves nothing to go on with).
fn next_entry<S: Source, T: Trace>(
    s: &mut S,
    pos: usize,
    ctx: &Ctx<'_>,
    t: &mut T,
    emit: Option<&mut dyn FnMut(Ev<'_>)>,
) -> (Entry, usize, bool) {
    let inner = ctx.depth > 0;
    let buf = match s.avail(pos.saturating_add(12)) {
        Ok(b) => b,
        Err(e) => return (error_entry(pos, 0, e.to_string(), t), pos, true),
    };
    let rem = buf.len().saturating_sub(pos);
    let cut = |t: &mut T, rem: usize| {
        if inner {
            let e = "inner message set cut short".to_string();
            error_entry(pos, rem, e, t)
        } else {
            t.leaf(
                pos,
                pos + rem, kind!("Partial", "bytes"), None,
                TVal::Range(pos, rem),
                "a batch cut off at the end of the field (brokers do this at the size limit)");
            Entry::Partial {
                at: pos,
                bytes: rem,
            }
        }
    };
    let length = buf
        .get(pos + 8..pos + 12)
        .and_then(|b| b.try_into().ok())
        .map(i32::from_be_bytes);
    let Some(length) = length else {
        return (cut(t, rem), pos + rem, true);
    };
    if length < MIN_LENGTH {
        let e = format!("batch length {length} is below the minimum of {MIN_LENGTH}");
        return (error_entry(pos, rem, e, t), pos + rem, true);
    }
    let total = 12 + length as usize;
    let buf = match s.avail(pos + total) {
        Ok(b) => b,
        Err(e) => return (error_entry(pos, rem, e.to_string(), t), pos + rem, true),
    };
    let rem = buf.len().saturating_sub(pos);
    if total > rem {
        return (cut(t, rem), pos + rem, true);
    }
    let buf = buf.get(..pos + total).unwrap_or_default();
    let magic = buf.get(pos + 16).map_or(-1, |&m| m as i8);
    let entry = match magic {
        2 if total < BatchHeader::SIZE => error_entry(
            pos,
            total,
            format!("batch length {length} is below the magic 2 header size {V2_AFTER_LENGTH}"),
            t,
        ),
        2 => Entry::Batch(batch(buf, pos, ctx, t, emit)),
        0 | 1 => Entry::Message(message(buf, pos, magic, ctx, t)),
        m => error_entry(pos, total, format!("unknown magic {m}"), t),
    };
    (entry, pos + total, false)
}

fn error_entry<T: Trace>(at: usize, bytes: usize, error: String, t: &mut T) -> Entry {
    t.leaf(
        at,
        at + bytes, kind!("Error", "bytes"), None,
        TVal::Range(at, bytes),
        "bytes that do not decode as a batch");
    Entry::Error { at, bytes, error }
}

/// A magic 2 batch spanning all of `buf[at..]`, which holds at least the header.
fn batch<T: Trace>(
    buf: &[u8],
    at: usize,
    ctx: &Ctx<'_>,
    t: &mut T,
    mut emit: Option<&mut dyn FnMut(Ev<'_>)>,
) -> Batch {
    let mut c = Cur::new(buf, at);
    // The caller checked the header fits; a default header would only follow a bug.
    let h = BatchHeader::read(&mut c).unwrap_or_default();
    let crc_valid = buf
        .get(at + 21..)
        .is_some_and(|b| crc32c::crc32c(b) == h.crc);
    let codec = h.compression();
    if T::ON {
        trace_header(t, at, ctx.index, &h, crc_valid);
    }
    let mut b = Batch {
        at,
        bytes: buf.len() - at,
        header: h,
        crc_valid,
        records: Vec::new(),
        streamed: 0,
        limited: false,
        payload: None,
        error: None,
    };
    let start = at + BatchHeader::SIZE;
    if h.record_count < 0 {
        b.error = Some(format!("invalid record count {}", h.record_count));
    } else if h.record_count == 0 {
        // Kafka reads nothing past the header of an empty batch (compaction
        // leaves these, with the batch's codec in its attributes).
    } else if codec == Compression::None {
        let about = "the records";
        t.open(
            start, kind!("Records", "records"), None,
            TVal::Array(h.record_count as u32),
            about);
        if let Some(e) = emit.as_deref_mut() {
            e(Ev::Head(&b));
        }
        let r = records(&mut Wire(buf), start, &h, ctx, t, emit);
        (b.records, b.streamed, b.limited, b.error) = r;
        let end = b
            .records
            .last()
            .map_or(start, |r| r.span.start + r.span.len);
        omitted(t, &b, end, buf.len());
        t.close(buf.len());
    } else {
        let data = buf.get(start..).unwrap_or_default();
        t.open(
            start, kind!("Records", "records"), None,
            TVal::Array(h.record_count as u32),
            "the records, compressed");
        t.leaf(
            start,
            buf.len(), compressed_kind(codec), None,
            TVal::Range(start, data.len()),
            "");
        if ctx.max_records == 0 && h.record_count > 0 {
            b.limited = true;
        } else {
            match Payload::new(codec, data, 2, ctx.cap) {
                Ok(mut p) => {
                    t.source(tree::Src::Payload(ctx.index));
                    if let Some(e) = emit.as_deref_mut() {
                        e(Ev::Head(&b));
                    }
                    let r = records(&mut p, 0, &h, ctx, t, emit);
                    let end = r.0.last().map_or(0, |r| r.span.start + r.span.len);
                    (b.records, b.streamed, b.limited, b.error) = r;
                    omitted(t, &b, end, end);
                    b.payload = Some(p.keep(end));
                    t.source(tree::Src::Wire);
                }
                Err(e) => b.error = Some(e.to_string()),
            }
        }
        t.close(buf.len());
    }
    t.close(buf.len());
    b
}

/// The node of a batch's compressed records, typed by its codec's name.
fn compressed_kind(codec: Compression) -> &'static Kind {
    match codec {
        Compression::None => kind!("CompressedRecords", "none"),
        Compression::Gzip => kind!("CompressedRecords", "gzip"),
        Compression::Snappy => kind!("CompressedRecords", "snappy"),
        Compression::Lz4 => kind!("CompressedRecords", "lz4"),
        Compression::Zstd => kind!("CompressedRecords", "zstd"),
        Compression::Unknown(_) => kind!("CompressedRecords", "unknown"),
    }
}

/// A node saying how many records a limit left out, over the bytes they take.
fn omitted<T: Trace>(t: &mut T, b: &Batch, from: usize, to: usize) {
    if b.limited {
        let n = i64::from(b.header.record_count).saturating_sub(b.records.len() as i64);
        t.leaf(
            from,
            to, kind!("RecordsOmitted", "count"), None,
            TVal::Int(n),
            "records not shown (--max-records)");
    }
}

fn trace_header<T: Trace>(t: &mut T, at: usize, index: u32, h: &BatchHeader, crc_valid: bool) {
    use TVal::{Bool, Int, Name};
    t.open(
        at, kind!("RecordBatch", "RecordBatch"), Some(index),
        TVal::None,
        "a magic 2 record batch");
    let mut p = at;
    let mut f = |t: &mut T, n: usize, kind, v, about| {
        t.leaf(p, p + n, kind, None, v, about);
        p += n;
    };
    f(
        t,
        8, kind!("BaseOffset", "int64"),
        Int(h.base_offset),
        "offset of the first record");
    f(
        t,
        4, kind!("BatchLength", "int32"),
        Int(h.batch_length.into()),
        "bytes that follow this field");
    f(
        t,
        4, kind!("PartitionLeaderEpoch", "int32"),
        Int(h.partition_leader_epoch.into()),
        "");
    f(
        t,
        1, kind!("Magic", "int8"),
        Int(h.magic.into()),
        "record format version");
    let about = if crc_valid {
        "CRC-32C of the bytes after it: valid"
    } else {
        "CRC-32C of the bytes after it: MISMATCH"
    };
    t.leaf(p, p + 4, kind!("Crc", "uint32"), None, Int(h.crc.into()), about);
    t.leaf(p, p + 4, kind!("CrcValid", "bool"), None, Bool(crc_valid), "");
    p += 4;
    t.open(p, kind!("Attributes", "int16"), None, Int(h.attributes.into()), "");
    t.leaf(
        p,
        p + 2, kind!("Compression", "bits 0-2"), None,
        Name(h.compression().name()),
        "");
    t.leaf(
        p,
        p + 2, kind!("TimestampType", "bit 3"), None,
        Name(h.timestamp_type()),
        "");
    t.leaf(
        p,
        p + 2, kind!("IsTransactional", "bit 4"), None,
        Bool(h.is_transactional()),
        "");
    t.leaf(
        p,
        p + 2, kind!("IsControl", "bit 5"), None,
        Bool(h.is_control()),
        "");
    p += 2;
    t.close(p);
    let mut f = |t: &mut T, n: usize, kind, v, about| {
        t.leaf(p, p + n, kind, None, v, about);
        p += n;
    };
    f(
        t,
        4, kind!("LastOffsetDelta", "int32"),
        Int(h.last_offset_delta.into()),
        "");
    f(t, 8, kind!("BaseTimestamp", "int64"), Int(h.base_timestamp), "");
    f(t, 8, kind!("MaxTimestamp", "int64"), Int(h.max_timestamp), "");
    f(t, 8, kind!("ProducerId", "int64"), Int(h.producer_id), "");
    f(
        t,
        2, kind!("ProducerEpoch", "int16"),
        Int(h.producer_epoch.into()),
        "");
    f(
        t,
        4, kind!("BaseSequence", "int32"),
        Int(h.base_sequence.into()),
        "");
    f(t, 4, kind!("RecordCount", "int32"), Int(h.record_count.into()), "");
}

/// Decodes up to `max_records` of the batch's records from `start`: kept, or
/// handed to `emit` (and counted) when it is given. Returns the records kept,
/// the records handed over, whether `max_records` stopped it, and why the
/// records could not all be decoded.
fn records<S: Source, T: Trace>(
    s: &mut S,
    start: usize,
    h: &BatchHeader,
    ctx: &Ctx<'_>,
    t: &mut T,
    mut emit: Option<&mut dyn FnMut(Ev<'_>)>,
) -> (Vec<Record>, usize, bool, Option<String>) {
    let count = u32::try_from(h.record_count).unwrap_or(0);
    let mut out = Vec::with_capacity(if emit.is_some() {
        0
    } else {
        (count as usize).min(64)
    });
    let mut streamed = 0;
    let mut pos = start;
    // Bytes the source dropped: positions in messages count from the payload's start.
    let mut base = 0;
    for i in 0..count {
        if out.len() + streamed >= ctx.max_records {
            return (out, streamed, true, limit_note(ctx));
        }
        let keep = t.open_count();
        match record(s, pos, i, h.is_control(), ctx, t) {
            Ok(Some(r)) => {
                pos = r.span.start + r.span.len;
                match emit.as_deref_mut() {
                    Some(e) => {
                        e(Ev::Record(s.held(), &r));
                        streamed += 1;
                        let d = s.consume(pos);
                        pos -= d;
                        base += d;
                    }
                    None => out.push(r),
                }
            }
            Ok(None) => {
                let e = format!("the batch says {count} records but holds {i}");
                return (out, streamed, false, Some(e));
            }
            Err(e) => {
                t.close_to(keep);
                let e = e.shifted(base);
                return (out, streamed, false, Some(format!("record {i}: {e}")));
            }
        }
    }
    match s.avail(pos + 1) {
        Ok(b) if b.len() > pos => {
            let e = format!("bytes remain after the last of {count} records");
            (out, streamed, false, Some(e))
        }
        Ok(_) => (out, streamed, false, None),
        Err(e) => (out, streamed, false, Some(e.to_string())),
    }
}

/// One record at `pos`; `None` when the data ends exactly there.
fn record<S: Source, T: Trace>(
    s: &mut S,
    pos: usize,
    i: u32,
    is_control: bool,
    ctx: &Ctx<'_>,
    t: &mut T,
) -> Result<Option<Record>, Fail> {
    let buf = s.avail(pos + 5)?;
    if buf.len() <= pos {
        return Ok(None);
    }
    let mut c = Cur::new(buf, pos);
    let length = c.varint()?;
    if length < 0 {
        return Err(Fail::Negative {
            at: pos,
            what: "record length",
            value: length.into(),
        });
    }
    let body = c.pos;
    let end = body.saturating_add(length as usize);
    let buf = s.avail(end)?;
    let Some(buf) = buf.get(..end) else {
        return Err(Fail::Other(format!(
            "record length {length} runs past the end of the records"
        )));
    };
    let mut c = Cur::new(buf, body);
    t.open(pos, kind!("Record", "Record"), Some(i), TVal::None, "");
    t.leaf(
        pos,
        body, kind!("Length", "varint"), None,
        TVal::Int(length.into()),
        "bytes of the record after this field");
    let p = c.pos;
    let attributes = c.i8()?;
    t.leaf(
        p,
        c.pos, kind!("Attributes", "int8"), None,
        TVal::Int(attributes.into()),
        "unused");
    let p = c.pos;
    let timestamp_delta = c.varlong()?;
    t.leaf(
        p,
        c.pos, kind!("TimestampDelta", "varlong"), None,
        TVal::Int(timestamp_delta),
        "added to BaseTimestamp");
    let p = c.pos;
    let offset_delta = c.varint()?;
    t.leaf(
        p,
        c.pos, kind!("OffsetDelta", "varint"), None,
        TVal::Int(offset_delta.into()),
        "added to BaseOffset");
    let key = bytes(&mut c, kind!("Key", "bytes"), kind!("KeyLength", "varint"), Len::Varint, t)?;
    let value = bytes(&mut c, kind!("Value", "bytes"), kind!("ValueLength", "varint"), Len::Varint, t)?;
    let p = c.pos;
    let n = c.varint()?;
    if n < 0 {
        return Err(Fail::Negative {
            at: p,
            what: "header count",
            value: n.into(),
        });
    }
    // Each header takes at least two bytes, so a count cannot outrun the record.
    if (n as usize).saturating_mul(2) > c.remaining() {
        return Err(Fail::Other(format!(
            "header count {n} cannot fit in the {} bytes left",
            c.remaining()
        )));
    }
    t.open(p, kind!("Headers", "[]Header"), None, TVal::Array(n as u32), "");
    t.leaf(
        p,
        c.pos, kind!("HeadersCount", "varint"), None,
        TVal::Int(n.into()),
        "");
    let mut headers = Vec::with_capacity(n as usize);
    for j in 0..n as u32 {
        t.open(c.pos, kind!("Header", "Header"), Some(j), TVal::None, "");
        let p = c.pos;
        let klen = c.varint()?;
        t.leaf(
            p,
            c.pos, kind!("KeyLength", "varint"), None,
            TVal::Int(klen.into()),
            "");
        if klen < 0 {
            return Err(Fail::Negative {
                at: p,
                what: "header key length",
                value: klen.into(),
            });
        }
        let kstart = c.pos;
        c.take(klen as usize)?;
        let key = Span {
            start: kstart,
            len: klen as usize,
        };
        t.leaf(
            kstart,
            c.pos, kind!("Key", "string"), None,
            TVal::Text(kstart, key.len),
            "");
        let value = bytes(&mut c, kind!("Value", "bytes"), kind!("ValueLength", "varint"), Len::Varint, t)?;
        t.close(c.pos);
        headers.push(Header { key, value });
    }
    t.close(c.pos);
    if c.pos != end {
        return Err(Fail::Other(format!(
            "record length {length} leaves {} bytes unread",
            end - c.pos
        )));
    }
    let control = is_control.then(|| {
        control::decode(
            key.map(|k| k.of(buf)),
            value.map(|v| v.of(buf)),
            ctx.opts.schemas,
        )
        .map_err(|e| e.to_string())
    });
    if let Some(Ok(ctl)) = &control {
        t.leaf(
            pos,
            end, kind!("ControlType", "int16"), None,
            TVal::Name(control::type_name(ctl.type_id)),
            "the control record's type, from its key");
    }
    t.close(end);
    Ok(Some(Record {
        span: Span {
            start: pos,
            len: end - pos,
        },
        length,
        attributes,
        timestamp_delta,
        offset_delta,
        key,
        value,
        headers,
        control,
    }))
}

/// How a byte field's length is written: a varint in magic 2 records, an int32 in
/// magic 0 and 1 messages.
#[derive(Clone, Copy)]
enum Len {
    Varint,
    Int32,
}

/// A length (-1 for null) and that many bytes.
fn bytes<T: Trace>(
    c: &mut Cur<'_>,
    kind: &'static Kind,
    len_kind: &'static Kind,
    len: Len,
    t: &mut T,
) -> Result<Option<Span>, Fail> {
    let p = c.pos;
    let n = match len {
        Len::Varint => c.varint()?,
        Len::Int32 => c.i32()?,
    };
    t.leaf(
        p,
        c.pos, len_kind, None,
        TVal::Int(n.into()),
        if n == -1 { "null" } else { "" });
    if n < -1 {
        return Err(Fail::Negative {
            at: p,
            what: "length",
            value: n.into(),
        });
    }
    if n == -1 {
        return Ok(None);
    }
    let start = c.pos;
    c.take(n as usize)?;
    t.leaf(
        start,
        c.pos, kind, None,
        TVal::Range(start, n as usize),
        "");
    Ok(Some(Span {
        start,
        len: n as usize,
    }))
}

/// A magic 0 or 1 message spanning all of `buf[at..]`.
fn message<T: Trace>(buf: &[u8], at: usize, magic: i8, ctx: &Ctx<'_>, t: &mut T) -> Message {
    let mut m = Message {
        at,
        bytes: buf.len() - at,
        offset: 0,
        message_size: 0,
        crc: 0,
        crc_valid: false,
        magic,
        attributes: 0,
        timestamp: None,
        key: None,
        value: None,
        inner: None,
        payload: None,
        limited: false,
        error: None,
    };
    let index = if ctx.depth == 0 { ctx.index } else { 0 };
    t.open(
        at, kind!("Message", "Message"), Some(index),
        TVal::None,
        if magic == 0 {
            "a magic 0 message"
        } else {
            "a magic 1 message"
        });
    let keep = t.open_count();
    if let Err(e) = message_fields(buf, at, &mut m, t) {
        t.close_to(keep);
        m.error = Some(e.to_string());
        t.close(buf.len());
        return m;
    }
    let codec = m.compression();
    if codec != Compression::None {
        wrapper(buf, &mut m, codec, ctx, t);
    }
    t.close(buf.len());
    m
}

fn message_fields<T: Trace>(buf: &[u8], at: usize, m: &mut Message, t: &mut T) -> Result<(), Fail> {
    use TVal::Int;
    let mut c = Cur::new(buf, at);
    m.offset = c.i64()?;
    t.leaf(at, c.pos, kind!("Offset", "int64"), None, Int(m.offset), "");
    m.message_size = c.i32()?;
    t.leaf(
        at + 8,
        c.pos, kind!("MessageSize", "int32"), None,
        Int(m.message_size.into()),
        "bytes that follow this field");
    m.crc = c.u32()?;
    m.crc_valid = buf
        .get(at + 16..)
        .is_some_and(|b| crc32fast::hash(b) == m.crc);
    let about = if m.crc_valid {
        "CRC-32 of the bytes after it: valid"
    } else {
        "CRC-32 of the bytes after it: MISMATCH"
    };
    t.leaf(
        at + 12,
        c.pos, kind!("Crc", "uint32"), None,
        Int(m.crc.into()),
        about);
    t.leaf(
        at + 12,
        c.pos, kind!("CrcValid", "bool"), None,
        TVal::Bool(m.crc_valid),
        "");
    let magic = c.i8()?;
    t.leaf(at + 16, c.pos, kind!("Magic", "int8"), None, Int(magic.into()), "");
    m.attributes = c.i8()?;
    t.open(
        at + 17, kind!("Attributes", "int8"), None,
        Int(m.attributes.into()),
        "");
    t.leaf(
        at + 17,
        c.pos, kind!("Compression", "bits 0-2"), None,
        TVal::Name(m.compression().name()),
        "");
    t.close(c.pos);
    if m.magic == 1 {
        let p = c.pos;
        m.timestamp = Some(c.i64()?);
        t.leaf(
            p,
            c.pos, kind!("Timestamp", "int64"), None,
            Int(m.timestamp.unwrap_or_default()),
            "");
    }
    m.key = bytes(&mut c, kind!("Key", "bytes"), kind!("KeyLength", "int32"), Len::Int32, t)?;
    m.value = bytes(&mut c, kind!("Value", "bytes"), kind!("ValueLength", "int32"), Len::Int32, t)?;
    if c.remaining() > 0 {
        return Err(Fail::Other(format!(
            "{} bytes after the message value",
            c.remaining()
        )));
    }
    Ok(())
}

/// Decompresses a wrapper message's value and decodes the inner message set.
fn wrapper<T: Trace>(buf: &[u8], m: &mut Message, codec: Compression, ctx: &Ctx<'_>, t: &mut T) {
    let Some(value) = m.value.map(|v| v.of(buf)) else {
        m.error = Some("compressed message without a value".into());
        return;
    };
    if ctx.depth > 0 {
        m.error = Some("a compressed message inside a compressed message".into());
        return;
    }
    if ctx.max_records == 0 {
        m.limited = true;
        return;
    }
    let mut p = match Payload::new(codec, value, m.magic, ctx.cap) {
        Ok(p) => p,
        Err(e) => {
            m.error = Some(e.to_string());
            return;
        }
    };
    let inner_ctx = Ctx {
        opts: ctx.opts,
        index: ctx.index,
        depth: 1,
        cap: ctx.cap,
        max_records: ctx.max_records,
    };
    t.open(
        m.value.map_or(0, |v| v.start), kind!("Messages", "[]Message"), None,
        TVal::None,
        "the inner messages, decompressed");
    t.source(tree::Src::Payload(ctx.index));
    let mut inner = Vec::new();
    let mut pos = 0;
    loop {
        if inner.len() >= ctx.max_records {
            m.limited = true;
            m.error = m.error.take().or_else(|| limit_note(ctx));
            break;
        }
        match p.avail(pos + 1) {
            Ok(b) if b.len() > pos => {}
            Ok(_) => break,
            Err(e) => {
                m.error = Some(e.to_string());
                break;
            }
        }
        let (e, next, stop) = next_entry(&mut p, pos, &inner_ctx, t, None);
        if let Entry::Error { error, .. } = &e {
            m.error = Some(format!("inner message at byte {pos}: {error}"));
        }
        inner.push(e);
        pos = next;
        if stop {
            break;
        }
    }
    t.source(tree::Src::Wire);
    t.close(m.value.map_or(0, |v| v.start + v.len));
    m.payload = Some(p.keep(pos));
    m.inner = Some(inner);
}

/// Number of records a decoded entry holds or stands for, for counting.
pub fn record_count(e: &Entry) -> Option<u64> {
    match e {
        Entry::Batch(b) => u64::try_from(b.header.record_count).ok(),
        Entry::Message(m) => match &m.inner {
            Some(inner) => Some(
                inner
                    .iter()
                    .filter(|e| matches!(e, Entry::Message(_)))
                    .count() as u64,
            ),
            None if m.compression() == Compression::None => Some(1),
            None => None,
        },
        _ => Some(0),
    }
}
