//! One direction of a Kafka connection: cuts its byte stream into frames at
//! their size prefixes, keeps only the head of a frame too large to buffer, and
//! passes over holes.

use crate::proto::{Kind, peek_size};

use super::detect::{VERSION_SLACK, request_ident, request_shape};
use super::pairing::Pairing;
use super::resync::{Confirm, Hunt, Hunted};
use super::{KafkaConfig, KafkaMessage, KafkaStats};

mod ends;
use crate::tcp::{ConnId, Dir};
use std::collections::VecDeque;
use std::net::SocketAddr;

/// Packets remembered for the bytes a framer holds.
const MARKS: usize = 1024;
/// Bytes of room a partial frame's buffer starts with, and keeps once empty.
const PARTIAL_ROOM: usize = 1024;

/// Where a packet's bytes lie in a framer's stream, and the packet.
#[derive(Debug, Clone, Copy)]
pub(super) struct Mark {
    /// Stream offsets of its first byte and just past its last.
    pub(super) start: u64,
    pub(super) end: u64,
    pub(super) frame: u64,
    pub(super) ts_ns: i64,
}

/// Where a direction's framing stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum State {
    /// At a frame boundary, or inside a frame being buffered whole.
    Framing,
    /// Passing over the rest of a frame of which only the head is kept (in `buf`).
    Skipping {
        /// Bytes still to pass over.
        left: u64,
        /// The frame's wire size.
        total: u64,
        /// Bytes are missing from it, not just too many to keep.
        damaged: bool,
    },
    /// Looking for a frame boundary after lost bytes (`buf` holds what may
    /// still start or confirm one).
    Hunting(Hunt),
}

/// The limits a framer works within, from `KafkaConfig`.
#[derive(Debug, Clone, Copy)]
pub(super) struct Limits {
    pub(super) max_frame: u32,
    pub(super) max_buffered: usize,
    pub(super) oversized_head: usize,
    /// Bytes a server's first frame is held while the client's side is silent.
    detect_window: usize,
}

/// One direction's framing state.
#[derive(Debug)]
pub(super) struct Framer {
    pub(super) conn: ConnId,
    /// Requests flow from the client, responses to it.
    pub(super) kind: Kind,
    pub(super) src: SocketAddr,
    pub(super) dst: SocketAddr,
    pub(super) limits: Limits,
    /// The partial frame (or, skipping, its head; hunting, a tail).
    pub(super) buf: Vec<u8>,
    pub(super) state: State,
    /// Warnings for the next frame completed in this direction.
    pub(super) notes: Vec<String>,
    /// Bytes fed so far: the stream offset just past the newest byte.
    seen: u64,
    /// Each packet whose bytes are held since hunting: a frame confirmed later
    /// still gets the packet that carried its last byte, and hunting knows
    /// where packets begin.
    pub(super) marks: VecDeque<Mark>,
    /// The caller's schema check for hunted candidates.
    pub(super) confirm: Option<Confirm>,
    /// The last request framed: correlation id and client id field, which a
    /// request found by hunting after a loss can be checked against.
    pub(super) last: Option<(i32, Vec<u8>)>,
    /// (Responses) the correlation id of the last whole answer framed.
    pub(super) last_answer: Option<i32>,
    /// The first frame after the handshake is still to be checked.
    check_first: bool,
}

#[cfg(test)]
thread_local! {
    /// Turns [`Framer::feed`]'s shortcut off on this thread, to test it against the
    /// general steps.
    pub(super) static GENERAL_ONLY: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Whether [`Framer::feed`] takes its shortcut (always, but in a test of it).
#[inline(always)]
fn shortcuts() -> bool {
    #[cfg(test)]
    return !GENERAL_ONLY.with(|g| g.get());
    #[cfg(not(test))]
    true
}

impl Framer {
    /// Both directions' framers, once `client` is known.
    pub(super) fn pair(
        conn: ConnId,
        a: SocketAddr,
        b: SocketAddr,
        client: Dir,
        syn_seen: bool,
        cfg: &KafkaConfig,
        confirm: Option<&Confirm>,
    ) -> [Framer; 2] {
        let limits = Limits {
            max_frame: cfg.max_frame,
            max_buffered: cfg.max_buffered_per_direction,
            oversized_head: cfg.oversized_head,
            detect_window: cfg.detect_window,
        };
        let make = |dir: Dir, src, dst| {
            let kind = if dir == client {
                Kind::Request
            } else {
                Kind::Response
            };
            // Without the SYN the first byte may fall inside a message, and a size
            // read there can swallow the frames after it: both directions look for
            // their first boundary, and take it only when it is confirmed.
            let state = if !syn_seen {
                State::Hunting(Hunt::from_start())
            } else {
                State::Framing
            };
            Framer {
                conn,
                kind,
                src,
                dst,
                limits,
                buf: Vec::new(),
                state,
                notes: Vec::new(),
                seen: 0,
                marks: VecDeque::new(),
                confirm: confirm.cloned(),
                last: None,
                last_answer: None,
                check_first: syn_seen,
            }
        };
        [make(Dir::AtoB, a, b), make(Dir::BtoA, b, a)]
    }

    /// A frame seen in this direction, completed by packet `frame`, ending at `stream_end`.
    #[allow(clippy::too_many_arguments)]
    // Once per frame: out of line its call and returned struct cost ~15 Ir a frame.
    #[inline(always)]
    fn message<'a>(
        &mut self,
        data: &'a [u8],
        wire_size: u64,
        cut: bool,
        warnings: Vec<String>,
        frame: u64,
        ts_ns: i64,
        stream_end: u64,
    ) -> KafkaMessage<'a> {
        if self.kind == Kind::Response && !cut {
            self.last_answer = data
                .get(4..8)
                .and_then(|c| c.try_into().ok())
                .map(i32::from_be_bytes);
        }
        if self.kind == Kind::Request && !cut {
            if let Some((corr, field)) = request_ident(data) {
                match &mut self.last {
                    Some((c, f)) => {
                        *c = corr;
                        // Another client id: its buffer is reused, not freed and made again
                        // (clients that alternate ids did both for most requests).
                        if f.as_slice() != field {
                            f.clear();
                            f.extend_from_slice(field);
                        }
                    }
                    None => self.last = Some((corr, field.to_vec())),
                }
            }
        }
        KafkaMessage {
            conn: self.conn,
            packet: frame,
            ts_ns,
            src: self.src,
            dst: self.dst,
            kind: self.kind,
            data,
            wire_size,
            cut,
            api: None,
            request_packet: None,
            latency_ns: None,
            warnings,
            stream_end,
        }
    }

    fn oversize_note(&self, total: u64) -> String {
        format!(
            "message of {total} bytes is larger than the {} bytes kept per direction; only its head was decoded",
            self.limits.max_buffered
        )
    }

    /// Appends `data` from packet `frame` and emits every frame it completes.
    pub(super) fn feed(
        &mut self,
        data: &[u8],
        frame: u64,
        ts_ns: i64,
        pairing: &mut Pairing,
        stats: &mut KafkaStats,
        out: &mut dyn FnMut(&KafkaMessage<'_>),
    ) {
        let Some(data) = self.whole_frames(data, frame, ts_ns, pairing, stats, out) else {
            return;
        };
        let end = self.seen + data.len() as u64;
        self.seen = end;
        if !data.is_empty()
            && (matches!(self.state, State::Hunting(_))
                || !self.marks.is_empty()
                || self.first_waits())
        {
            self.marks.push_back(Mark {
                start: end - data.len() as u64,
                end,
                frame,
                ts_ns,
            });
            if self.marks.len() > MARKS {
                // Very many small packets: their bytes are dated a little late.
                self.marks.pop_front();
            }
        }
        let mut data = data;
        // Pass over the rest of a frame kept only in part, then report it.
        if let State::Skipping {
            left,
            total,
            damaged,
        } = &mut self.state
        {
            let n = ((*left).min(data.len() as u64)) as usize;
            *left -= n as u64;
            data = data.get(n..).unwrap_or_default();
            if *left > 0 {
                return;
            }
            let (total, damaged) = (*total, *damaged);
            self.state = State::Framing;
            let head = std::mem::take(&mut self.buf);
            if damaged {
                stats.cut_frames += 1;
            }
            let mut notes = std::mem::take(&mut self.notes);
            if !damaged {
                notes.push(self.oversize_note(total));
            }
            pairing.emit(
                self.message(
                    &head,
                    total,
                    true,
                    notes,
                    frame,
                    ts_ns,
                    end - data.len() as u64,
                ),
                stats,
                out,
            );
        }
        // Work on the data in place when nothing is buffered: no copy in the common case.
        let owned = if self.buf.is_empty() {
            None
        } else {
            self.buf.extend_from_slice(data);
            Some(std::mem::take(&mut self.buf))
        };
        let view: &[u8] = owned.as_deref().unwrap_or(data);
        let view_start = end - view.len() as u64;
        let mut pos = 0usize;
        loop {
            let rest = view.get(pos..).unwrap_or_default();
            if let State::Hunting(_) = self.state {
                let rest_start = end - (view.len() - pos) as u64;
                match self.hunt_step(rest, rest_start, pairing, stats) {
                    Hunted::Found(at) => {
                        // What was passed over just before it may confirm, or be
                        // confirmed by, the other direction's.
                        pairing.match_tentative(stats, out);
                        pos += at;
                        continue;
                    }
                    Hunted::Passed(n) => {
                        pos += n;
                        break;
                    }
                }
            }
            let Some(size) = peek_size(rest) else { break };
            let min = match self.kind {
                Kind::Request => 8,
                Kind::Response => 4,
            };
            let sane = size >= min && size as u32 <= self.limits.max_frame;
            // After the handshake the first frame starts at byte 0, but a port says
            // little: it must also look like Kafka (a request header, or an answer).
            let first = match (sane, self.check_first) {
                (true, true) => self.first_plausible(rest, pairing),
                _ => Some(sane),
            };
            let Some(plausible) = first else { break };
            self.check_first = false;
            if !plausible {
                stats.desyncs += 1;
                self.notes.push(if sane {
                    format!(
                        "the stream does not start with a Kafka {}; framing was lost",
                        self.kind_name()
                    )
                } else {
                    format!("size prefix {size} makes no sense here; framing was lost")
                });
                // The byte the bad prefix started at is passed over.
                self.state = State::Hunting(Hunt::after_loss(1));
                stats.skipped_bytes += 1;
                pos += 1;
                continue;
            }
            let total = size as usize + 4;
            if total > self.limits.max_buffered {
                // Keep the head for its header; pass over the rest as it arrives.
                stats.oversized_frames += 1;
                let keep = self.limits.oversized_head.min(rest.len());
                let head = rest.get(..keep).unwrap_or_default().to_vec();
                let have = rest.len().min(total);
                let left = (total - have) as u64;
                pos += have;
                if left == 0 {
                    let mut notes = std::mem::take(&mut self.notes);
                    notes.push(self.oversize_note(total as u64));
                    pairing.emit(
                        self.message(
                            &head,
                            total as u64,
                            true,
                            notes,
                            frame,
                            ts_ns,
                            view_start + pos as u64,
                        ),
                        stats,
                        out,
                    );
                } else {
                    if self.kind == Kind::Request {
                        // It is reported when it ends; meanwhile it counts as seen.
                        pairing.saw_request();
                    }
                    self.buf = head;
                    self.state = State::Skipping {
                        left,
                        total: total as u64,
                        damaged: false,
                    };
                }
                continue;
            }
            let Some(whole) = rest.get(..total) else {
                break;
            };
            let notes = std::mem::take(&mut self.notes);
            // Held since hunting, it may have ended in an earlier packet.
            let whole_end = view_start + (pos + total) as u64;
            let (f, t) = self.packet_of(whole_end, frame, ts_ns);
            pairing.emit_inline(
                self.message(whole, total as u64, false, notes, f, t, whole_end),
                stats,
                out,
            );
            pos += total;
        }
        let consumed = view_start + pos as u64;
        while self.marks.front().is_some_and(|m| m.end <= consumed) {
            self.marks.pop_front();
        }
        if matches!(self.state, State::Skipping { .. }) {
            self.marks.clear();
            return;
        }
        match owned {
            // The buffer goes back with only what was consumed removed: copying the
            // rest into a new one made a large frame cost its size again with every
            // packet, quadratic time in the frame's size.
            Some(mut b) if self.buf.is_empty() => {
                b.drain(..pos.min(b.len()));
                // Mostly consumed: keep the rest in a right-sized buffer, so a connection
                // that once carried a large frame does not hold its capacity (held() counts
                // lengths). Only frames completing get here, so this copy stays linear.
                // A small buffer is kept as it is, for the next frame split over packets.
                if b.len() < b.capacity() / 4 && b.capacity() > PARTIAL_ROOM {
                    b = b.as_slice().to_vec();
                }
                self.buf = b;
            }
            _ => {
                let left = view.get(pos..).unwrap_or_default();
                if !left.is_empty() {
                    if self.buf.capacity() == 0 {
                        // Room for the rest of a small frame too, so it completes without
                        // growing the buffer (a few hundred bytes at most; not the size
                        // prefix's claim).
                        self.buf = Vec::with_capacity(left.len().max(PARTIAL_ROOM));
                    }
                    self.buf.extend_from_slice(left);
                }
            }
        }
    }

    /// [`Framer::feed`]'s shortcut for the common case, framing with nothing held: the
    /// whole frames at the front of `data`, each sane (not past the limits), are handed
    /// on as the general steps hand them on; what is left goes to those (None when
    /// nothing is: the general steps do nothing with no bytes while framing).
    #[inline]
    fn whole_frames<'d>(
        &mut self,
        data: &'d [u8],
        frame: u64,
        ts_ns: i64,
        pairing: &mut Pairing,
        stats: &mut KafkaStats,
        out: &mut dyn FnMut(&KafkaMessage<'_>),
    ) -> Option<&'d [u8]> {
        if !shortcuts()
            || !matches!(self.state, State::Framing)
            || self.check_first
            || !self.buf.is_empty()
            || !self.marks.is_empty()
        {
            return Some(data);
        }
        let min = match self.kind {
            Kind::Request => 8,
            Kind::Response => 4,
        };
        let mut rest = data;
        while let Some(size) = peek_size(rest) {
            // Anything else (a size that makes no sense, a frame too large to hold) is
            // for the general steps.
            if size < min || size as u32 > self.limits.max_frame {
                break;
            }
            let total = size as usize + 4;
            if total > self.limits.max_buffered {
                break;
            }
            let Some((whole, after)) = rest.split_at_checked(total) else {
                break;
            };
            let notes = std::mem::take(&mut self.notes);
            self.seen += total as u64;
            let m = self.message(whole, total as u64, false, notes, frame, ts_ns, self.seen);
            pairing.emit_inline(m, stats, out);
            rest = after;
        }
        (!rest.is_empty()).then_some(rest)
    }

    fn kind_name(&self) -> &'static str {
        match self.kind {
            Kind::Request => "request header",
            Kind::Response => "response to a request seen",
        }
    }

    /// Whether the frame at the front of `rest` (its size already sane) looks
    /// like Kafka: `None` while too few bytes are there to tell.
    fn first_plausible(&self, rest: &[u8], pairing: &Pairing) -> Option<bool> {
        match self.kind {
            Kind::Request => request_shape(rest, self.limits.max_frame, VERSION_SLACK),
            // An answer to a pending request, or a server once its client sent any
            // request (one cut or too large to keep leaves nothing pending). Until
            // the client's side says something (a request, or bytes lost: its
            // first request may be in them), the answer is held, within the
            // detection window.
            Kind::Response => {
                let corr = i32::from_be_bytes(rest.get(4..8)?.try_into().ok()?);
                if pairing.api_of(corr).is_some() || pairing.seen() > 0 {
                    Some(true)
                } else if rest.len() <= self.limits.detect_window {
                    None
                } else {
                    Some(false)
                }
            }
        }
    }

    /// The packet that carried the byte just before stream offset `end`: the
    /// oldest remembered packet reaching that far, or else the current one.
    fn packet_of(&self, end: u64, frame: u64, ts_ns: i64) -> (u64, i64) {
        if self.marks.is_empty() {
            return (frame, ts_ns);
        }
        self.marks
            .iter()
            .find(|m| m.end >= end)
            .map_or((frame, ts_ns), |m| (m.frame, m.ts_ns))
    }

    /// Correlation ids of the responses this framer is about to complete with
    /// `data` (only while framing: a hunt does not know where frames start).
    pub(super) fn upcoming_corrs(&self, data: &[u8]) -> Vec<i32> {
        let mut out = Vec::new();
        if self.state != State::Framing || self.kind != Kind::Response {
            return out;
        }
        // The frame in `buf` and those starting in `data`, read across the two.
        let byte = |i: usize| {
            self.buf
                .get(i)
                .or_else(|| data.get(i.checked_sub(self.buf.len())?))
                .copied()
        };
        let read = |i: usize| -> Option<i32> {
            Some(i32::from_be_bytes([
                byte(i)?,
                byte(i + 1)?,
                byte(i + 2)?,
                byte(i + 3)?,
            ]))
        };
        let mut at = 0usize;
        while out.len() < 64 {
            let (Some(size), Some(corr)) = (read(at), read(at + 4)) else {
                break;
            };
            if size < 4 || size as u32 > self.limits.max_frame {
                break;
            }
            out.push(corr);
            at += size as usize + 4;
        }
        out
    }

    /// Whether hunting here has candidates an answer could confirm.
    pub(super) fn waits(&self) -> bool {
        matches!(&self.state, State::Hunting(h) if h.waits())
    }

    /// The other direction is about to answer these correlation ids: a request
    /// candidate waiting for confirmation may be taken now, before its answer.
    pub(super) fn echo(
        &mut self,
        corrs: &[i32],
        frame: u64,
        ts_ns: i64,
        pairing: &mut Pairing,
        stats: &mut KafkaStats,
        out: &mut dyn FnMut(&KafkaMessage<'_>),
    ) {
        let State::Hunting(h) = &mut self.state else {
            return;
        };
        h.echo(corrs);
        self.feed(&[], frame, ts_ns, pairing, stats, out);
    }
}
