//! The contract's JSON for a `records` field: an array of batches, or null.
#![cfg_attr(
    not(test),
    deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)
)]

use super::control::{ControlBody, type_name};
use super::{Batch, Entry, Ev, Message, Options, Record, Span, batches, record_count};
use std::cell::RefCell;
use std::io::Write;
use std::rc::Rc;

/// Where the printer's output goes: a line longer than [`SPILL_AT`] is passed
/// on there while its records are written, so that a batch of large records
/// (up to `--max-decompressed`, twice that in hex) is never held whole.
pub type Spill = Rc<RefCell<dyn Write>>;

/// Bytes of a line held before they are passed on.
pub const SPILL_AT: usize = 1 << 20;

thread_local! {
    static SPILL: RefCell<Option<Spill>> = const { RefCell::new(None) };
}

/// Sets (or clears) where [`write`] passes on what it has written so far of a
/// long line: the buffer given to [`write`] must then be the line being
/// printed from its start, and go to the same place afterwards.
pub fn set_spill(to: Option<Spill>) {
    SPILL.with(|s| *s.borrow_mut() = to);
}

/// Passes `out` on (and empties it) once it holds [`SPILL_AT`] bytes, if a
/// spill is set. A failed write drops the bytes: the printer's next write
/// fails too, and it stops there.
fn spill(out: &mut Vec<u8>) {
    if out.len() < SPILL_AT {
        return;
    }
    SPILL.with(|s| {
        let Ok(s) = s.try_borrow() else { return };
        let Some(w) = s.as_ref() else { return };
        if let Ok(mut w) = w.try_borrow_mut() {
            let _ = w.write_all(out);
            out.clear();
        }
    });
}

/// Writes the field's JSON; `None` is a null field. Batches are decoded one at
/// a time, and a magic 2 batch's records are written as they are decoded, so
/// neither its records nor the decompressed bytes already written are held.
pub fn write(out: &mut Vec<u8>, field: Option<&[u8]>, opts: &Options<'_>) {
    let Some(field) = field else {
        out.extend_from_slice(b"null");
        return;
    };
    out.push(b'[');
    let mut it = batches(field, opts);
    let mut i = 0;
    loop {
        let mut head = false;
        let mut first = true;
        let mut emit = |ev: Ev<'_>| match ev {
            Ev::Head(b) => {
                if i > 0 {
                    out.push(b',');
                }
                batch_head(out, b);
                head = true;
            }
            Ev::Record(data, r) => {
                if !first {
                    out.push(b',');
                }
                first = false;
                record(out, data, r);
                spill(out);
            }
        };
        let Some(e) = it.next_streamed(&mut emit) else {
            break;
        };
        match (&e, head) {
            (Entry::Batch(b), true) => batch_tail(out, b),
            _ => {
                if i > 0 {
                    out.push(b',');
                }
                entry(out, field, &e);
            }
        }
        spill(out);
        i += 1;
    }
    out.push(b']');
}

/// The field's JSON as a value, for tests and tools.
pub fn value(field: Option<&[u8]>, opts: &Options<'_>) -> serde_json::Value {
    let mut out = Vec::new();
    write(&mut out, field, opts);
    serde_json::from_slice(&out).unwrap_or(serde_json::Value::Null)
}

/// One entry; `buf` is the buffer its spans point into.
pub fn entry(out: &mut Vec<u8>, buf: &[u8], e: &Entry) {
    match e {
        Entry::Batch(b) => batch(out, buf, b),
        Entry::Message(m) => message(out, buf, m),
        Entry::Partial { bytes, .. } => {
            let _ = write!(out, "{{\"Partial\":true,\"Bytes\":{bytes}}}");
        }
        Entry::Error { error, bytes, .. } => {
            out.extend_from_slice(b"{\"Error\":");
            string(out, error);
            let _ = write!(out, ",\"Bytes\":{bytes}}}");
        }
    }
}

fn batch(out: &mut Vec<u8>, field: &[u8], b: &Batch) {
    batch_head(out, b);
    let data = b.data(field);
    for (i, r) in b.records.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        record(out, data, r);
        spill(out);
    }
    batch_tail(out, b);
}

/// A batch's header fields, up to the opening of `Records`.
fn batch_head(out: &mut Vec<u8>, b: &Batch) {
    let h = &b.header;
    let _ = write!(
        out,
        "{{\"BaseOffset\":{},\"BatchLength\":{},\"PartitionLeaderEpoch\":{},\"Magic\":{},\
         \"Crc\":{},\"CrcValid\":{},\"Attributes\":{},\"Compression\":\"{}\",\
         \"TimestampType\":\"{}\",\"IsTransactional\":{},\"IsControl\":{},\
         \"LastOffsetDelta\":{},\"BaseTimestamp\":{},\"MaxTimestamp\":{},\"ProducerId\":{},\
         \"ProducerEpoch\":{},\"BaseSequence\":{},\"RecordCount\":{},\"Records\":[",
        h.base_offset,
        h.batch_length,
        h.partition_leader_epoch,
        h.magic,
        h.crc,
        b.crc_valid,
        h.attributes,
        h.compression().name(),
        h.timestamp_type(),
        h.is_transactional(),
        h.is_control(),
        h.last_offset_delta,
        h.base_timestamp,
        h.max_timestamp,
        h.producer_id,
        h.producer_epoch,
        h.base_sequence,
        h.record_count,
    );
}

/// What follows a batch's records.
fn batch_tail(out: &mut Vec<u8>, b: &Batch) {
    let h = &b.header;
    out.push(b']');
    if b.limited {
        let shown = b.records.len().saturating_add(b.streamed);
        let omitted = i64::from(h.record_count).saturating_sub(shown as i64);
        let _ = write!(out, ",\"RecordsOmitted\":{omitted}");
    }
    trailer(out, b.error.as_deref(), b.bytes);
    out.push(b'}');
}

fn trailer(out: &mut Vec<u8>, error: Option<&str>, bytes: usize) {
    if let Some(e) = error {
        out.extend_from_slice(b",\"Error\":");
        string(out, e);
        let _ = write!(out, ",\"Bytes\":{bytes}");
    }
}

fn record(out: &mut Vec<u8>, data: &[u8], r: &Record) {
    // Per record: numbers without the formatter.
    let mut num = itoa::Buffer::new();
    out.extend_from_slice(b"{\"Attributes\":");
    out.extend_from_slice(num.format(r.attributes).as_bytes());
    out.extend_from_slice(b",\"TimestampDelta\":");
    out.extend_from_slice(num.format(r.timestamp_delta).as_bytes());
    out.extend_from_slice(b",\"OffsetDelta\":");
    out.extend_from_slice(num.format(r.offset_delta).as_bytes());
    out.extend_from_slice(b",\"Key\":");
    hex_or_null(out, data, r.key);
    out.extend_from_slice(b",\"Value\":");
    hex_or_null(out, data, r.value);
    out.extend_from_slice(b",\"Headers\":[");
    for (i, h) in r.headers.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        out.extend_from_slice(b"{\"Key\":");
        match std::str::from_utf8(h.key.of(data)) {
            // Most header keys are plain: copied as serde_json would write them.
            Ok(k) if crate::view::escape::is_json_plain(k) => {
                out.push(b'"');
                out.extend_from_slice(k.as_bytes());
                out.push(b'"');
            }
            _ => string(out, &String::from_utf8_lossy(h.key.of(data))),
        }
        out.extend_from_slice(b",\"Value\":");
        hex_or_null(out, data, h.value);
        out.push(b'}');
    }
    out.push(b']');
    match &r.control {
        Some(Ok(c)) => {
            let _ = write!(
                out,
                ",\"Control\":{{\"KeyVersion\":{},\"Type\":\"{}\",\"TypeId\":{}",
                c.key_version,
                type_name(c.type_id),
                c.type_id
            );
            match &c.body {
                ControlBody::Marker {
                    version,
                    coordinator_epoch,
                } => {
                    let _ = write!(
                        out,
                        ",\"MarkerVersion\":{version},\"CoordinatorEpoch\":{coordinator_epoch}"
                    );
                }
                ControlBody::Data(j) => {
                    out.extend_from_slice(b",\"Data\":");
                    let _ = serde_json::to_writer(&mut *out, j);
                }
                ControlBody::Undecoded => {}
                ControlBody::Error(e) => {
                    out.extend_from_slice(b",\"Error\":");
                    string(out, e);
                }
            }
            out.push(b'}');
        }
        Some(Err(e)) => {
            out.extend_from_slice(b",\"Control\":{\"Error\":");
            string(out, e);
            out.push(b'}');
        }
        None => {}
    }
    out.push(b'}');
}

fn message(out: &mut Vec<u8>, buf: &[u8], m: &Message) {
    let _ = write!(
        out,
        "{{\"Offset\":{},\"MessageSize\":{},\"Crc\":{},\"CrcValid\":{},\"Magic\":{},\
         \"Attributes\":{},\"Compression\":\"{}\"",
        m.offset,
        m.message_size,
        m.crc,
        m.crc_valid,
        m.magic,
        m.attributes,
        m.compression().name()
    );
    if let Some(ts) = m.timestamp {
        let _ = write!(out, ",\"Timestamp\":{ts}");
    }
    out.extend_from_slice(b",\"Key\":");
    hex_or_null(out, buf, m.key);
    out.extend_from_slice(b",\"Value\":");
    hex_or_null(out, buf, m.value);
    if let Some(inner) = &m.inner {
        out.extend_from_slice(b",\"Messages\":[");
        let payload = m.payload.as_deref().unwrap_or_default();
        for (i, e) in inner.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            entry(out, payload, e);
            spill(out);
        }
        out.push(b']');
    }
    if m.limited {
        out.extend_from_slice(b",\"MessagesLimited\":true");
    }
    trailer(out, m.error.as_deref(), m.bytes);
    out.push(b'}');
}

fn hex_or_null(out: &mut Vec<u8>, buf: &[u8], s: Option<Span>) {
    match s {
        Some(s) => {
            out.push(b'"');
            hex(out, s.of(buf));
            out.push(b'"');
        }
        None => out.extend_from_slice(b"null"),
    }
}

/// Lowercase hex, appended.
pub fn hex(out: &mut Vec<u8>, b: &[u8]) {
    // Into room made at the end: no per-byte pushes, no buffer to clear first; each
    // byte's two digits in one lookup and one store.
    let start = out.len();
    out.resize(start + b.len() * 2, 0);
    if let Some(dst) = out.get_mut(start..) {
        for (pair, &x) in dst.chunks_exact_mut(2).zip(b) {
            pair.copy_from_slice(&crate::view::labels::HEX_PAIRS.get(usize::from(x)).copied().unwrap_or([b'?'; 2]));
        }
    }
}

fn string(out: &mut Vec<u8>, s: &str) {
    let _ = serde_json::to_writer(&mut *out, s);
}

/// Total records the entries hold, by their headers (exact even when limited).
pub fn total_records(entries: &[Entry]) -> u64 {
    entries.iter().filter_map(record_count).sum()
}
