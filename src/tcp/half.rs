//! One direction of a connection: maps sequence numbers to 64-bit stream
//! offsets, delivers in-order bytes, buffers out-of-order ones, checks
//! overlaps and skips holes that will not fill.

use super::{ConnId, Dir, Stamp, StreamEvent, TcpConfig, TcpStats};
use std::collections::BTreeMap;

/// Segments further than this ahead of the delivery point cannot belong to
/// the stream (TCP's largest scaled window is 1 GiB): they are dropped.
const MAX_AHEAD: u64 = 1 << 30;
/// Bytes of history room a direction starts with.
const HISTORY_START: usize = 4096;

/// What a half needs from its surroundings while it works.
pub(super) struct Ctx<'c> {
    pub conn: ConnId,
    pub dir: Dir,
    pub cfg: &'c TcpConfig,
    pub stats: &'c mut TcpStats,
    /// Out-of-order bytes buffered over all connections.
    pub total_buffered: &'c mut usize,
    pub out: &'c mut dyn FnMut(StreamEvent<'_>),
    /// Reusable list of byte ranges, to avoid allocating per segment.
    pub scratch: &'c mut Vec<(u64, u64)>,
    /// The packet being handled: the stamp of the bytes it carries.
    pub at: Stamp,
    /// Whether common segments take their shortcut (off only to test it).
    pub shortcuts: bool,
}

impl Ctx<'_> {
    fn data(&mut self, stream_offset: u64, data: &[u8], at: Stamp) {
        (self.out)(StreamEvent::Data {
            conn: self.conn,
            dir: self.dir,
            data,
            stream_offset,
            packet: at.packet,
            ts_ns: at.ts_ns,
            file: at.file,
        });
    }

    fn conflict(&mut self, stream_offset: u64, len: u64) {
        self.stats.conflicts += 1;
        self.stats.conflict_bytes += len;
        (self.out)(StreamEvent::Conflict {
            conn: self.conn,
            dir: self.dir,
            stream_offset,
            len,
        });
    }
}

/// Out-of-order bytes, with the packet that carried them.
#[derive(Debug)]
struct Piece {
    data: Vec<u8>,
    stamp: Stamp,
}

impl Piece {
    fn len(&self) -> usize {
        self.data.len()
    }
}

#[derive(Debug, Default)]
pub(super) struct HalfStream {
    /// Set once the stream start is known (from a SYN or the first segment).
    init: bool,
    /// Sequence number of the SYN, if one was seen.
    pub isn: Option<u32>,
    /// Sequence number of stream offset 0.
    base: u32,
    /// Next offset to deliver: everything before it was delivered or gapped.
    next_off: u64,
    /// Out-of-order pieces keyed by start offset; disjoint, all after next_off.
    pending: BTreeMap<u64, Piece>,
    pending_bytes: usize,
    /// Highest offset any segment claimed to reach (truncated ones included).
    max_end: u64,
    /// Offset of the FIN, once seen.
    fin_off: Option<u64>,
    /// The delivered bytes the peer has not acknowledged (at most the last
    /// `overlap_history` of them), ending at next_off, kept to tell identical
    /// retransmissions from conflicting ones.
    history: Ring,
}

/// The last bytes delivered, at most a cap of them, in a buffer that wraps around: taking
/// more bytes copies them once, and drops the oldest by moving an index.
#[derive(Debug, Default)]
struct Ring {
    /// Filled up to `room` by appending (from `start` 0, unwrapped), then written around.
    buf: Vec<u8>,
    /// The bytes it holds at most for now (grown as [`Ring::push`] says).
    room: usize,
    /// Where the oldest byte is.
    start: usize,
    len: usize,
}

impl Ring {
    fn len(&self) -> usize {
        self.len
    }

    fn clear(&mut self) {
        self.buf.clear();
        self.start = 0;
        self.len = 0;
    }

    /// Drops the `n` oldest bytes. Emptied, it starts again at the front of its room, so
    /// a direction whose bytes are acknowledged as they go reuses the same few bytes of
    /// memory rather than walking through all of its room.
    fn drop_oldest(&mut self, n: usize) {
        if n >= self.len {
            self.clear();
            return;
        }
        self.len -= n;
        // Filling or wrapped, the bytes lie within `room` (never 0 while it holds bytes).
        self.start = (self.start + n) % self.room.max(1);
    }

    fn free(&mut self) {
        *self = Ring::default();
    }

    /// The bytes, oldest first, as two slices.
    fn slices(&self) -> (&[u8], &[u8]) {
        let first_end = self.start.saturating_add(self.len).min(self.buf.len());
        let a = self.buf.get(self.start..first_end).unwrap_or_default();
        let b = self.buf.get(..self.len - a.len()).unwrap_or_default();
        (a, b)
    }

    /// The bytes from the `from`th on.
    fn iter_from(&self, from: usize) -> impl Iterator<Item = &u8> {
        let (a, b) = self.slices();
        let skip_b = from.saturating_sub(a.len());
        a.get(from..)
            .unwrap_or_default()
            .iter()
            .chain(b.get(skip_b..).unwrap_or_default())
    }

    /// Appends `bytes`, keeping the last `cap`. The room grows in two steps rather than
    /// many small ones: some, then all of `cap`.
    fn push(&mut self, cap: usize, bytes: &[u8]) {
        let want = (self.len + bytes.len()).min(cap);
        if want > self.room {
            let room = if self.room == 0 {
                cap.min(HISTORY_START).max(want)
            } else {
                cap
            };
            if self.start == 0 {
                // Not wrapped and from the front: the bytes are in order already.
                self.buf.truncate(self.len);
                self.buf.reserve_exact(room - self.buf.len());
            } else {
                let mut grown = Vec::with_capacity(room);
                let (a, b) = self.slices();
                grown.extend_from_slice(a);
                grown.extend_from_slice(b);
                self.buf = grown;
            }
            self.start = 0;
            self.room = room;
        }
        let size = self.room;
        if size == 0 {
            return;
        }
        // Only the last `size` bytes can stay.
        let mut bytes = bytes.get(bytes.len().saturating_sub(size)..).unwrap_or_default();
        if self.buf.len() < size {
            // Still filling: append what fits.
            let (fits, rest) = bytes.split_at(bytes.len().min(size - self.buf.len()));
            self.buf.extend_from_slice(fits);
            self.len += fits.len();
            bytes = rest;
            if bytes.is_empty() {
                return;
            }
        }
        let at = (self.start + self.len) % size;
        let (head, tail) = bytes.split_at(bytes.len().min(size - at));
        if let Some(dst) = self.buf.get_mut(at..at + head.len()) {
            dst.copy_from_slice(head);
        }
        if let Some(dst) = self.buf.get_mut(..tail.len()) {
            dst.copy_from_slice(tail);
        }
        self.len += bytes.len();
        if self.len > size {
            self.start = (self.start + (self.len - size)) % size;
            self.len = size;
        }
    }
}

impl HalfStream {
    pub fn is_init(&self) -> bool {
        self.init
    }

    /// Starts the stream at a SYN: data begins one past its sequence number.
    pub fn start_syn(&mut self, isn: u32) {
        self.isn = Some(isn);
        self.start(isn.wrapping_add(1));
    }

    /// Starts the stream at `seq` (mid-stream pickup).
    pub fn start(&mut self, seq: u32) {
        self.init = true;
        self.base = seq;
    }

    /// All bytes up to the FIN were delivered.
    pub fn finished(&self) -> bool {
        self.fin_off.is_some_and(|f| self.next_off >= f)
    }

    fn next_seq(&self) -> u32 {
        // Truncation is the point: sequence numbers are offsets mod 2^32.
        self.base.wrapping_add(self.next_off as u32)
    }

    /// Stream offset of `seq`, taking the nearest one to the delivery point
    /// (serial-number arithmetic, RFC 1982), so wraparound is transparent.
    fn offset_of(&self, seq: u32) -> i64 {
        let delta = i64::from(seq.wrapping_sub(self.next_seq()) as i32);
        // next_off < 2^63 in any real capture; saturate rather than wrap.
        i64::try_from(self.next_off)
            .unwrap_or(i64::MAX)
            .saturating_add(delta)
    }

    /// Takes one segment: `payload` holds the captured bytes starting at
    /// `seq`, `claimed` the length the headers declared (longer if the
    /// snaplen cut it), `fin` whether it carries a FIN.
    pub fn accept(&mut self, ctx: &mut Ctx<'_>, seq: u32, payload: &[u8], claimed: u64, fin: bool) {
        if !self.init {
            return;
        }
        let start = self.offset_of(seq);
        let claimed = claimed.max(payload.len() as u64);
        let end = start.saturating_add(i64::try_from(claimed).unwrap_or(i64::MAX));
        if end > 0 && (end as u64) > self.next_off.saturating_add(MAX_AHEAD) {
            ctx.stats.out_of_window += 1;
            return;
        }
        if fin && end >= 0 {
            // The first FIN wins, like the first bytes do.
            self.fin_off.get_or_insert(end as u64);
        }
        if end <= 0 || claimed == 0 {
            self.after_change(ctx);
            return;
        }
        let end = end as u64;
        self.max_end = self.max_end.max(end);

        // Bytes at negative offsets predate the stream start: drop them.
        let (start, payload) = if start < 0 {
            let skip = usize::try_from(start.unsigned_abs()).unwrap_or(usize::MAX);
            (0u64, payload.get(skip..).unwrap_or(&[]))
        } else {
            (start as u64, payload)
        };
        // Nothing past the FIN belongs to the stream.
        let payload = match self.fin_off {
            Some(f) if f > start => {
                let keep = usize::try_from(f - start).unwrap_or(usize::MAX);
                payload.get(..keep).unwrap_or(payload)
            }
            Some(_) => &[],
            None => payload,
        };

        // Part already delivered: a retransmission; compare what we kept.
        let mut start = start;
        let mut payload = payload;
        if start < self.next_off && !payload.is_empty() {
            let old = usize::try_from(self.next_off - start).unwrap_or(usize::MAX);
            let (before, after) = payload.split_at(old.min(payload.len()));
            self.check_history(ctx, start, before);
            start += before.len() as u64;
            payload = after;
        }

        if !payload.is_empty() {
            self.take_new(ctx, start, payload);
        }

        // The snaplen cut this segment's tail: if it was next in line, those
        // bytes are gone for good, so record the gap now.
        let data_end = start + payload.len() as u64;
        if end > data_end && self.next_off == data_end {
            let limit = match self.pending.keys().next() {
                Some(&p) => p.min(end),
                None => end,
            };
            ctx.stats.truncated_bytes += limit - self.next_off;
            self.skip_holes_until(ctx, limit);
        }
        self.after_change(ctx);
    }

    /// [`HalfStream::accept`] of the common segment, without its general steps: the next
    /// bytes in order, all captured (`claimed` is their length), no FIN, with nothing
    /// buffered and no FIN seen before. False, having done nothing, for any other segment.
    #[inline]
    pub fn accept_next(&mut self, ctx: &mut Ctx<'_>, seq: u32, payload: &[u8], claimed: u64) -> bool {
        let len = payload.len() as u64;
        if !self.init
            || len == 0
            || claimed != len
            || len > MAX_AHEAD
            || self.next_off >= 1 << 62
            || seq != self.next_seq()
            || self.fin_off.is_some()
            || !self.pending.is_empty()
        {
            return false;
        }
        // What `accept` does with it: no window, FIN, retransmission, overlap or cut
        // tail to see to, so the bytes are delivered.
        self.max_end = self.max_end.max(self.next_off + len);
        self.deliver(ctx, payload, ctx.at);
        true
    }

    /// The peer acknowledged the bytes before `ack`, so they leave the history (as in
    /// Zeek's and Suricata's reassembly). No later copy of them can matter: the receiver
    /// had them when it acknowledged, every copy that came before was compared, and a
    /// receiver drops what arrives again below its acknowledgement. A retransmission of
    /// them is counted, not compared. An acknowledgement too far ahead to be of this
    /// stream changes nothing.
    #[inline]
    pub fn forget_acked(&mut self, ack: u32) {
        let len = self.history.len() as u64;
        if len == 0 || !self.init {
            return;
        }
        let acked = self.offset_of(ack);
        let hist_start = self.next_off - len;
        if acked <= 0 || (acked as u64) <= hist_start {
            return;
        }
        let acked = acked as u64;
        if acked > self.next_off.saturating_add(MAX_AHEAD) {
            return;
        }
        let n = acked.min(self.next_off) - hist_start;
        self.history.drop_oldest(usize::try_from(n).unwrap_or(usize::MAX));
    }

    /// An ACK from the peer changes nothing here (see [`HalfStream::on_peer_ack`]).
    #[inline]
    pub fn ack_changes_nothing(&self) -> bool {
        !self.init || (self.pending.is_empty() && self.fin_off.is_none())
    }

    /// Compares a retransmitted `bytes` (at `start`, all before next_off)
    /// with the delivered history.
    fn check_history(&self, ctx: &mut Ctx<'_>, start: u64, bytes: &[u8]) {
        let hist_start = self.next_off - self.history.len() as u64;
        let skip = usize::try_from(hist_start.saturating_sub(start)).unwrap_or(usize::MAX);
        let unchecked = skip.min(bytes.len());
        ctx.stats.retransmitted_bytes += bytes.len() as u64;
        ctx.stats.unchecked_bytes += unchecked as u64;
        let Some(checked) = bytes.get(unchecked..) else {
            return;
        };
        if checked.is_empty() {
            return;
        }
        let from = start + unchecked as u64;
        let hist_from = usize::try_from(from - hist_start).unwrap_or(usize::MAX);
        let old = self.history.iter_from(hist_from);
        match diff_span(old, checked) {
            Some((first, last)) => ctx.conflict(from + first as u64, (last - first + 1) as u64),
            None => {
                ctx.stats.identical_overlaps += 1;
                ctx.stats.identical_overlap_bytes += checked.len() as u64;
            }
        }
    }

    /// Handles `payload` at `start` >= next_off: overlaps with buffered
    /// pieces are checked (first arrival wins), the rest is delivered or
    /// buffered.
    fn take_new(&mut self, ctx: &mut Ctx<'_>, start: u64, payload: &[u8]) {
        if start == self.next_off && self.pending.is_empty() {
            // In order with nothing buffered, the common case: no overlap to look for.
            self.deliver(ctx, payload, ctx.at);
            return;
        }
        let end = start + payload.len() as u64;
        ctx.scratch.clear();
        // Pieces overlapping [start, end): possibly one starting before.
        let before = self
            .pending
            .range(..start)
            .next_back()
            .filter(|(s, v)| *s + v.len() as u64 > start);
        let mut cursor = start;
        let mut overlapped = false;
        for (&ps, piece) in before.into_iter().chain(self.pending.range(start..end)) {
            let pe = ps + piece.len() as u64;
            let (is, ie) = (ps.max(start), pe.min(end));
            let new = slice_at(payload, is - start, ie - start);
            let old = slice_at(&piece.data, is - ps, ie - ps);
            match diff_span(old.iter(), new) {
                Some((first, last)) => ctx.conflict(is + first as u64, (last - first + 1) as u64),
                None => {
                    ctx.stats.identical_overlaps += 1;
                    ctx.stats.identical_overlap_bytes += ie - is;
                }
            }
            overlapped = true;
            if ps > cursor {
                ctx.scratch.push((cursor, ps));
            }
            cursor = cursor.max(pe);
        }
        if cursor < end {
            ctx.scratch.push((cursor, end));
        }
        if overlapped {
            ctx.stats.retransmitted_bytes += payload.len() as u64;
        }

        let ranges = std::mem::take(ctx.scratch);
        for &(rs, re) in &ranges {
            let bytes = slice_at(payload, rs - start, re - start);
            if rs == self.next_off {
                self.deliver(ctx, bytes, ctx.at);
                self.drain(ctx);
            } else {
                ctx.stats.out_of_order_bytes += bytes.len() as u64;
                self.pending_bytes += bytes.len();
                *ctx.total_buffered += bytes.len();
                self.pending.insert(
                    rs,
                    Piece {
                        data: bytes.to_vec(),
                        stamp: ctx.at,
                    },
                );
            }
        }
        *ctx.scratch = ranges;
        let buffered = *ctx.total_buffered;
        ctx.stats.peak_buffered = ctx.stats.peak_buffered.max(buffered);
    }

    fn deliver(&mut self, ctx: &mut Ctx<'_>, bytes: &[u8], stamp: Stamp) {
        if bytes.is_empty() {
            return;
        }
        ctx.data(self.next_off, bytes, stamp);
        self.next_off += bytes.len() as u64;
        ctx.stats.delivered_bytes += bytes.len() as u64;
        self.remember(ctx.cfg.overlap_history, bytes);
    }

    fn remember(&mut self, cap: usize, bytes: &[u8]) {
        self.history.push(cap, bytes);
    }

    /// Delivers buffered pieces that now start at next_off.
    fn drain(&mut self, ctx: &mut Ctx<'_>) {
        while let Some(entry) = self.pending.first_entry() {
            if *entry.key() != self.next_off {
                break;
            }
            let piece = entry.remove();
            self.pending_bytes -= piece.len();
            *ctx.total_buffered -= piece.len();
            self.deliver(ctx, &piece.data, piece.stamp);
        }
    }

    /// Declares everything missing before `limit` lost: each hole becomes a
    /// Gap event, and buffered data in between is delivered.
    fn skip_holes_until(&mut self, ctx: &mut Ctx<'_>, limit: u64) {
        loop {
            self.drain(ctx);
            if self.next_off >= limit {
                break;
            }
            let target = match self.pending.keys().next() {
                Some(&p) => p.min(limit),
                None => limit,
            };
            let len = target - self.next_off;
            ctx.stats.gaps += 1;
            ctx.stats.gap_bytes += len;
            (ctx.out)(StreamEvent::Gap {
                conn: ctx.conn,
                dir: ctx.dir,
                len,
            });
            self.next_off = target;
            // History must end at next_off; after a hole it cannot.
            self.history.clear();
        }
    }

    /// Enforces the window and memory limits after buffering.
    fn after_change(&mut self, ctx: &mut Ctx<'_>) {
        // Mostly nothing is buffered: no limit to check.
        if self.pending.is_empty() {
            return;
        }
        while let Some((&first, _)) = self.pending.first_key_value() {
            let last_end = self
                .pending
                .last_key_value()
                .map_or(first, |(s, v)| s + v.len() as u64);
            let over_window = last_end - self.next_off > ctx.cfg.gap_window as u64;
            let over_dir = self.pending_bytes > ctx.cfg.max_buffered_per_direction;
            let over_total = *ctx.total_buffered > ctx.cfg.max_buffered_total;
            if !(over_window || over_dir || over_total) {
                break;
            }
            if over_dir || over_total {
                ctx.stats.buffer_limit_skips += 1;
            }
            self.skip_holes_until(ctx, first);
        }
    }

    /// The peer acknowledged up to `ack`: the receiver has every byte
    /// before it, so holes there are capture losses. Only acted on when
    /// data or a FIN after such a hole is waiting, to stay conservative
    /// about captures whose directions are slightly out of order.
    pub fn on_peer_ack(&mut self, ctx: &mut Ctx<'_>, ack: u32) {
        // Nothing buffered and no FIN: nothing the ACK could release (the common case).
        if self.ack_changes_nothing() {
            return;
        }
        let ack_off = self.offset_of(ack);
        if ack_off <= 0 || (ack_off as u64) > self.next_off.saturating_add(MAX_AHEAD) {
            return;
        }
        let ack_off = ack_off as u64;
        let waiting = self.pending.keys().next().is_some_and(|&p| p < ack_off)
            || self
                .fin_off
                .is_some_and(|f| f < ack_off && f > self.next_off);
        if waiting {
            ctx.stats.ack_skips += 1;
            // The FIN takes a sequence number but no stream byte.
            let limit = self.fin_off.map_or(ack_off, |f| ack_off.min(f));
            self.skip_holes_until(ctx, limit);
        }
    }

    /// Closing: skip every remaining hole and deliver everything buffered.
    pub fn flush(&mut self, ctx: &mut Ctx<'_>) {
        let last = self
            .pending
            .last_key_value()
            .map_or(0, |(s, v)| s + v.len() as u64);
        let limit = last.max(self.max_end).max(self.fin_off.unwrap_or(0));
        self.skip_holes_until(ctx, limit);
        self.history.free();
    }
}

/// `bytes[from..to]` for offsets known to be in range; empty otherwise.
fn slice_at(bytes: &[u8], from: u64, to: u64) -> &[u8] {
    let (Ok(from), Ok(to)) = (usize::try_from(from), usize::try_from(to)) else {
        return &[];
    };
    bytes.get(from..to).unwrap_or(&[])
}

/// Index of the first and last differing byte, if any. Compares the common
/// length only.
fn diff_span<'x>(old: impl Iterator<Item = &'x u8>, new: &[u8]) -> Option<(usize, usize)> {
    let mut span: Option<(usize, usize)> = None;
    for (i, (a, b)) in old.zip(new).enumerate() {
        if a != b {
            span = Some(span.map_or((i, i), |(f, _)| (f, i)));
        }
    }
    span
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing)]
mod ring_tests {
    use super::Ring;
    use proptest::prelude::*;

    proptest! {
        /// The ring holds what a plain list of the last `cap` bytes holds, its oldest
        /// bytes dropped as acknowledgements say.
        #[test]
        fn ring_keeps_the_last_bytes(cap in 0usize..9000,
                                     ops in prop::collection::vec((0usize..7000, any::<u8>(), 0u8..4), 0..16),
                                     from in 0usize..9000) {
            let mut ring = Ring::default();
            let mut model: Vec<u8> = Vec::new();
            for (n, b, op) in ops {
                match op {
                    0 if n % 5 == 0 => {
                        ring.clear();
                        model.clear();
                    }
                    1 => {
                        // Some of the bytes, all of them, or more than it holds.
                        let n = n % (model.len() + 2);
                        ring.drop_oldest(n);
                        model.drain(..n.min(model.len()));
                    }
                    _ => {
                        let bytes: Vec<u8> = (0..n).map(|i| b.wrapping_add(i as u8)).collect();
                        ring.push(cap, &bytes);
                        model.extend_from_slice(&bytes);
                        let keep = model.len().saturating_sub(cap);
                        model.drain(..keep);
                    }
                }
                prop_assert_eq!(ring.len(), model.len());
                prop_assert!(ring.buf.capacity() <= cap);
                let (a, b) = ring.slices();
                prop_assert_eq!([a, b].concat(), model.clone());
                let got: Vec<u8> = ring.iter_from(from).copied().collect();
                prop_assert_eq!(got, model.get(from..).unwrap_or_default().to_vec());
            }
        }
    }
}
