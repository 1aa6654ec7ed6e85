//! Hunting: after lost bytes (or a capture that began mid-stream), looking for
//! the next offset where a frame starts.
//!
//! A plausible header is not enough: payloads carry bytes that look like
//! headers (zero runs read as "Produce v0, correlation id 0"). A candidate is
//! taken only when confirmed:
//! - surely, when the other direction answers its correlation id, when it
//!   decodes under its schema (the caller's [`Confirm`]), or when it carries on
//!   the connection's last request (same named client, correlation id +1..64);
//! - when the frame after it is the same client's next request (two of them
//!   for a client without a name), or, for a response that answers a pending
//!   request, the conversation's next answer;
//! - when it ends exactly where the data really ends (a hole, the close) and
//!   began a packet; where a stream's unseen start is, when its first frame
//!   fills its first packets exactly.
//!
//! A packet boundary alone is no evidence: a large message crosses hundreds.
//! A response is a candidate only if it answers a pending request, except at
//! the capture's start, where the frames after it are followed until one does.
//! An unconfirmed candidate is rejected and hunting goes on one byte later;
//! candidates waiting for the bytes that decide them are held at most up to
//! the per-direction buffer limit, so memory stays bounded while hunting.

use crate::proto::{Kind, peek_size};

use super::KafkaStats;
use super::detect::{VERSION_SLACK, request_ident, request_start};
use super::framer::{Framer, State};
use super::pairing::Pairing;
use std::collections::HashMap;

mod confirm;
mod passed;
pub use confirm::Confirm;
use passed::{between, tentatives};

/// How far a client's next correlation id may be from its last, when frames are
/// matched as one conversation.
const CORR_STEP: i32 = 64;

/// Whether `next` comes after `prev` from the same client: the same client id
/// field, and a correlation id 1 to CORR_STEP further on (wrapping). Responses
/// carry no client id.
fn follows(prev: (i32, &[u8]), next: (i32, &[u8])) -> bool {
    prev.1 == next.1 && (1..=CORR_STEP).contains(&next.0.wrapping_sub(prev.0))
}

/// Whether a client id field names a client. An empty, null or absent one is
/// what zero runs in a payload look like, so it says little on its own.
fn named(field: &[u8]) -> bool {
    field.len() > 2
}

/// Bytes a response needs before its correlation id can be checked.
const RESPONSE_PEEK: usize = 8;
/// Frames followed to confirm a response where the capture began.
const CHAIN: usize = 64;
/// Candidates kept waiting at once; past it one from the middle is rejected.
const WAITING: usize = 256;
/// Bytes a response hunt keeps after scanning them (at most half the
/// per-direction limit).
const LOOK_BACK: usize = 1 << 20;
/// Echoed correlation ids remembered while hunting.
const ECHOES: usize = 256;

/// What one hunting step did with the bytes it was shown.
pub(super) enum Hunted {
    /// A confirmed frame starts this many bytes in; hunting is over.
    Found(usize),
    /// This many bytes were passed over; the rest is kept for the next packet.
    Passed(usize),
}

/// Whether a candidate is taken.
enum Verdict {
    /// Echoed by the other direction, or decoded under its schema: taken even
    /// over an earlier candidate still waiting.
    Sure,
    Confirmed,
    Rejected,
    /// Its confirmation lies in bytes not seen yet.
    Wait,
}

/// Whether a frame may start at some offset.
enum Start {
    Yes,
    No,
    /// Too few bytes to tell.
    Unknown,
}

/// What hunting checks a candidate against.
struct Hunter<'a> {
    kind: Kind,
    max_frame: u32,
    max_buffered: usize,
    pairing: &'a Pairing,
    confirm: Option<&'a Confirm>,
    /// Nothing more will come after these bytes (a hole or the close).
    ending: bool,
    /// Correlation ids the other direction answered while this one hunts.
    echoes: &'a [i32],
    /// Hunting from a stream's unseen start, before anything was passed over.
    from_start: bool,
    /// The last request this direction framed: correlation id, client id field.
    last: Option<(i32, &'a [u8])>,
    /// Correlation ids awaiting a response and their order, made once per step.
    asked: Option<HashMap<i32, usize>>,
}

impl Hunter<'_> {
    fn asked(&mut self) -> &HashMap<i32, usize> {
        let pairing = self.pairing;
        self.asked.get_or_insert_with(|| pairing.asked())
    }

    /// Whether a frame starts at the front of `s`. A response must answer a
    /// request seen on the other direction, unless `echo` is not required.
    fn starts(&mut self, s: &[u8], echo: bool) -> Start {
        let yes = |b: bool| if b { Start::Yes } else { Start::No };
        match self.kind {
            // Newer clients send versions past the table; detection admits them, so must this.
            Kind::Request => match request_start(s, self.max_frame, VERSION_SLACK) {
                Some(b) => yes(b),
                None => Start::Unknown,
            },
            Kind::Response => {
                let Some(size) = peek_size(s) else {
                    return Start::Unknown;
                };
                if size < 4 || size as u32 > self.max_frame {
                    return Start::No;
                }
                if !echo {
                    return Start::Yes;
                }
                let Some(corr) = s
                    .get(4..RESPONSE_PEEK)
                    .and_then(|c| c.try_into().ok())
                    .map(i32::from_be_bytes)
                else {
                    return Start::Unknown;
                };
                yes(self.asked().contains_key(&corr))
            }
        }
    }

    /// Correlation id and (requests) client id field of the frame at the front of `s`.
    fn ident<'s>(&self, s: &'s [u8]) -> Option<(i32, &'s [u8])> {
        match self.kind {
            Kind::Request => request_ident(s),
            Kind::Response => {
                let corr = s.get(4..8)?.try_into().ok().map(i32::from_be_bytes)?;
                Some((corr, &[]))
            }
        }
    }

    /// Whether the candidate at the front of `s` is taken; `aligned` when it
    /// begins a packet. Without `echo` (a response where the capture began) the
    /// frames after it are followed until one is echoed or the data ends.
    ///
    /// Frames followed from a candidate must follow one another as one client's
    /// do: the same client id, the correlation id a little further on. Plausible
    /// headers alone are common in payloads (zero runs read as Produce v0).
    fn verdict(&mut self, s: &[u8], echo: bool, aligned: bool) -> Verdict {
        let mut off = 0usize;
        let mut prev: Option<(i32, &[u8])> = None;
        // Which pending request the first frame answers, in their order.
        let mut first_answers = None;
        for _ in 0..CHAIN {
            let cur = s.get(off..).unwrap_or_default();
            let Some(size) = peek_size(cur) else {
                return Verdict::Wait;
            };
            let total = size as usize + 4;
            if off + total > self.max_buffered {
                // Confirming it would mean holding more than a direction may.
                return Verdict::Rejected;
            }
            let id = self.ident(cur);
            // A frame after the first needs only its header to be judged.
            let whole = match cur.get(..total) {
                Some(w) => w,
                None if prev.is_some() && id.is_some() => &[],
                None => return Verdict::Wait,
            };
            if let Some(p) = prev {
                let kind = self.kind;
                let answers = id.and_then(|(c, _)| self.asked().get(&c).copied());
                if let (Kind::Response, Some(i)) = (kind, answers) {
                    // The chain reached a response the other direction asked for:
                    // taken if it answers a later request than the first did, as
                    // Kafka answers in order (payload bytes rarely keep to it).
                    return if first_answers.is_none_or(|f| i > f) {
                        Verdict::Confirmed
                    } else {
                        Verdict::Rejected
                    };
                }
                if !id.is_some_and(|id| follows(p, id)) {
                    return Verdict::Rejected;
                }
            } else if self.echoed(whole) || self.decodes(whole) || self.continues(id) {
                return Verdict::Sure;
            } else if self.kind == Kind::Response && echo {
                first_answers = id.and_then(|(c, _)| self.asked().get(&c).copied());
            }
            if whole.is_empty() {
                return Verdict::Wait;
            }
            prev = id;
            let next = cur.get(total..).unwrap_or_default();
            if next.is_empty() {
                // It ends exactly where the data ends: really (a hole, the close) for
                // a frame that began a packet, a chain, or an answer to a pending
                // request; or, for the first bytes of a stream, where its first
                // packets end.
                let ending = aligned || off > 0 || (echo && self.kind == Kind::Response);
                let first = self.from_start && aligned && off == 0;
                return if (self.ending && ending) || first {
                    Verdict::Confirmed
                } else {
                    Verdict::Wait
                };
            }
            match self.starts(next, false) {
                Start::Yes => {}
                Start::Unknown => return Verdict::Wait,
                Start::No => return Verdict::Rejected,
            }
            // A request needs the next one to follow it; a response, a later
            // answer to a pending request (the frames between carrying on the
            // conversation), so the next is looked at in the next round.
            let next_id = self.ident(next);
            let joined = next_id.is_some_and(|n| id.is_some_and(|c| follows(c, n)));
            if self.kind == Kind::Request {
                if !joined {
                    // Not this client's next request: perhaps an echo will still come.
                    return Verdict::Wait;
                }
                // A named client's next request is enough; without a name, two.
                if off > 0 || id.is_some_and(|(_, f)| named(f)) {
                    return Verdict::Confirmed;
                }
                off += total;
                continue;
            }
            off += total;
        }
        Verdict::Rejected
    }

    /// Whether a request carries on from the last one this direction framed.
    fn continues(&self, id: Option<(i32, &[u8])>) -> bool {
        self.kind == Kind::Request
            && self
                .last
                .zip(id)
                .is_some_and(|(last, id)| named(last.1) && follows(last, id))
    }

    /// Whether the other direction has answered this request candidate.
    fn echoed(&self, whole: &[u8]) -> bool {
        self.kind == Kind::Request
            && whole
                .get(8..12)
                .and_then(|c| c.try_into().ok())
                .map(i32::from_be_bytes)
                .is_some_and(|c| self.echoes.contains(&c))
    }

    /// Whether the frames from the confirmed candidate at the front of `s` follow
    /// one another to the end of the data: what a later candidate needs to win
    /// over an earlier one still waiting, whose span would cover it.
    fn explains_the_rest(&mut self, s: &[u8]) -> bool {
        let mut off = 0usize;
        for _ in 0..CHAIN {
            let cur = s.get(off..).unwrap_or_default();
            let Some(total) = peek_size(cur).and_then(|n| usize::try_from(n).ok()) else {
                return true;
            };
            let total = total + 4;
            if cur.len() <= total {
                return true;
            }
            let id = self.ident(cur);
            off += total;
            let next = s.get(off..).unwrap_or_default();
            let linked = match self.kind {
                // Any plausible request: clients without a name cannot be told apart.
                Kind::Request => true,
                // An answer to a pending request, or the conversation's next one.
                Kind::Response => {
                    let n = self.ident(next);
                    n.is_some_and(|(c, _)| self.asked().contains_key(&c))
                        || n.zip(id).is_some_and(|(n, c)| follows(c, n))
                }
            };
            match self.starts(next, false) {
                Start::Yes if linked => {}
                Start::Yes | Start::No => return false,
                Start::Unknown => return true,
            }
        }
        true
    }

    /// Whether the caller's schemas decode `whole` completely.
    fn decodes(&self, whole: &[u8]) -> bool {
        let Some(confirm) = self.confirm else {
            return false;
        };
        let api = match self.kind {
            Kind::Request => {
                let h = |at: usize| {
                    whole
                        .get(at..at + 2)
                        .and_then(|b| b.try_into().ok())
                        .map(i16::from_be_bytes)
                };
                h(4).zip(h(6))
            }
            Kind::Response => whole
                .get(4..8)
                .and_then(|c| c.try_into().ok())
                .map(i32::from_be_bytes)
                .and_then(|c| self.pairing.api_of(c)),
        };
        api.is_some_and(|api| (confirm.0)(self.kind, api, whole))
    }
}

/// A hunt's progress over the bytes its framer holds (offsets count from the first).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct Hunt {
    /// Bytes thrown away since hunting began, over every packet, for the resync note.
    pub(super) skipped: u64,
    /// The stream's start was not captured, so its first boundary is looked for, not assumed.
    unseen_start: bool,
    /// Candidates rejected since hunting began, for the resync note.
    rejected: u64,
    /// Every offset below this was looked at.
    scanned: usize,
    /// Candidates waiting for the bytes that confirm or reject them, in order.
    waiting: Vec<usize>,
    /// The data ends where the held bytes do (a hole or the close): nothing more will come.
    pub(super) ending: bool,
    /// Correlation ids of responses the other direction framed while this one
    /// (the requests) hunts: the echo that confirms a request candidate.
    echoes: Vec<i32>,
    /// (Responses) requests seen when the held bytes were last scanned.
    requests_seen: u64,
}

impl Hunt {
    /// Hunting after lost bytes, `skipped` of them already passed over.
    pub(super) fn after_loss(skipped: u64) -> Self {
        Hunt {
            skipped,
            ..Hunt::default()
        }
    }

    /// Hunting for the first boundary of a stream whose start was not captured.
    pub(super) fn from_start() -> Self {
        Hunt {
            unseen_start: true,
            ..Hunt::default()
        }
    }

    /// The other direction is about to frame responses with these correlation ids.
    pub(super) fn echo(&mut self, corrs: &[i32]) {
        self.echoes.extend_from_slice(corrs);
        let over = self.echoes.len().saturating_sub(ECHOES);
        self.echoes.drain(..over);
    }

    /// Whether candidates wait that an echo could confirm.
    pub(super) fn waits(&self) -> bool {
        !self.waiting.is_empty()
    }

    /// The held bytes are gone: start looking afresh.
    pub(super) fn forget(&mut self) {
        self.scanned = 0;
        self.waiting.clear();
    }
}

impl Framer {
    /// Hunts through `rest`, the bytes held and just arrived.
    pub(super) fn hunt_step(
        &mut self,
        rest: &[u8],
        rest_start: u64,
        pairing: &mut Pairing,
        stats: &mut KafkaStats,
    ) -> Hunted {
        let State::Hunting(h) = &mut self.state else {
            return Hunted::Found(0);
        };
        let mut hunter = Hunter {
            kind: self.kind,
            max_frame: self.limits.max_frame,
            max_buffered: self.limits.max_buffered,
            pairing,
            confirm: self.confirm.as_ref(),
            ending: h.ending,
            echoes: &h.echoes,
            from_start: h.unseen_start && h.skipped == 0,
            last: self.last.as_ref().map(|(c, f)| (*c, f.as_slice())),
            asked: None,
        };
        let marks = &self.marks;
        // Marks are in stream order.
        let aligned = |at: usize| {
            let at = rest_start + at as u64;
            marks.binary_search_by_key(&at, |m| m.start).is_ok()
        };
        // Where the capture began, the first boundary may be right there: a response
        // to a request sent before the capture is taken if the structure confirms it.
        let from_start = h.unseen_start && h.skipped == 0;
        let echo = |at: usize| !(from_start && at == 0);
        let ending = h.ending;
        let mut rejected_now = 0u64;
        let mut cut = Vec::new();
        let whole = |s: &[u8]| {
            peek_size(s)
                .and_then(|n| usize::try_from(n).ok())
                .is_some_and(|n| n + 4 <= s.len())
        };
        let mut waiting = Vec::new();
        let mut taken = None;
        // An offset's fate: a confirmed candidate is taken unless an earlier one
        // still waits, when it must account for all the bytes up to the data's end.
        // A header that cannot be judged yet (a long client id still to come)
        // waits like a candidate, and the scan goes on past it.
        let mut judge = |hunter: &mut Hunter<'_>, at: usize, waiting: &mut Vec<usize>| {
            let s = rest.get(at..).unwrap_or_default();
            let verdict = match hunter.starts(s, echo(at)) {
                Start::No => return false,
                Start::Unknown => Verdict::Wait,
                Start::Yes => {
                    let v = hunter.verdict(s, echo(at), aligned(at));
                    if matches!(v, Verdict::Rejected) {
                        rejected_now += 1;
                    }
                    v
                }
            };
            match verdict {
                Verdict::Sure => {
                    rejected_now += waiting.len() as u64;
                    return true;
                }
                Verdict::Confirmed if waiting.is_empty() || hunter.explains_the_rest(s) => {
                    rejected_now += waiting.len() as u64;
                    return true;
                }
                // Nothing more will come: the frames ending where a cut one begins may
                // still be confirmed by their answers.
                Verdict::Wait if ending => {
                    rejected_now += 1;
                    if !whole(s) {
                        cut.push(at);
                    }
                }
                // Waiting would hold more than a direction may.
                Verdict::Wait if s.len() > hunter.max_buffered => rejected_now += 1,
                Verdict::Confirmed | Verdict::Wait => {
                    // Full: the earliest stay (if true, the later ones lie inside them)
                    // and so do the newest (the true boundary may come after many).
                    if waiting.len() >= WAITING {
                        waiting.remove(WAITING / 2);
                        rejected_now += 1;
                    }
                    waiting.push(at);
                }
                Verdict::Rejected => {}
            }
            false
        };
        if self.kind == Kind::Response && pairing.seen() != h.requests_seen {
            // New requests are pending: answers already passed over may be theirs.
            // The scan from the start finds the waiting ones again.
            h.requests_seen = pairing.seen();
            h.scanned = 0;
            h.waiting.clear();
        }
        for &at in &h.waiting {
            if judge(&mut hunter, at, &mut waiting) {
                taken = Some(at);
                break;
            }
        }
        // Offsets this close to the end cannot show a whole header yet.
        let tail = match self.kind {
            Kind::Request => 14,
            Kind::Response => RESPONSE_PEEK,
        };
        let mut at = h.scanned;
        while taken.is_none() {
            let Some(s) = rest.get(at..).filter(|s| !s.is_empty()) else {
                break;
            };
            if s.len() < tail && !ending {
                break;
            }
            if judge(&mut hunter, at, &mut waiting) {
                taken = Some(at);
            }
            at += 1;
        }
        stats.rejected_candidates += rejected_now;
        h.rejected += rejected_now;
        let me = (self.conn, self.src, self.dst, self.kind);
        if taken.is_none() && ending && self.kind == Kind::Request {
            // The data ends (a hole): the frames ending where it ends, or where a
            // frame it cuts begins, may still be answered.
            cut.push(rest.len());
            let found = tentatives(rest, &cut, rest_start, &self.marks, me, self.limits);
            pairing.add_tentative(self.kind, found);
        }
        if let Some(t) = taken {
            let mut found = tentatives(rest, &[t], rest_start, &self.marks, me, self.limits);
            if self.kind == Kind::Response {
                let next = rest
                    .get(t + 4..t + 8)
                    .and_then(|c| c.try_into().ok())
                    .map(i32::from_be_bytes);
                between(&mut found, rest_start + t as u64, self.last_answer, next);
            }
            pairing.add_tentative(self.kind, found);
            stats.skipped_bytes += t as u64;
            stats.hunted_bytes += t as u64;
            // Earlier packets may have been passed over too, not just `t` bytes of this one.
            let skipped = h.skipped + t as u64;
            // A capture that simply starts at a boundary has lost nothing.
            if skipped > 0 || !h.unseen_start {
                stats.resyncs += 1;
            }
            if skipped > 0 {
                let also = match h.rejected {
                    0 => String::new(),
                    1 => " and rejecting 1 unconfirmed candidate".to_string(),
                    n => format!(" and rejecting {n} unconfirmed candidates"),
                };
                self.notes.push(format!(
                    "resynchronised after skipping {skipped} bytes of no recognisable frame{also}"
                ));
            }
            self.state = State::Framing;
            return Hunted::Found(t);
        }
        // Bytes before the first that may still matter are passed over. A
        // response hunt keeps a look-back: the requests these bytes answer may be
        // confirmed only later (a client without a name needs two more requests,
        // a tentative one its answer). It is trimmed in steps, so that keeping it
        // costs linear time.
        let look_back = match self.kind {
            Kind::Response => {
                let keep = LOOK_BACK.min(self.limits.max_buffered / 2);
                let over = rest.len().saturating_sub(keep);
                let from = if over > keep / 2 { over } else { 0 };
                // It starts where a response could: bytes before are of no use.
                let max = self.limits.max_frame;
                (from..at)
                    .find(|&o| {
                        rest.get(o..)
                            .and_then(peek_size)
                            .is_some_and(|n| n >= 4 && n as u32 <= max)
                    })
                    .unwrap_or(at)
            }
            _ => at,
        };
        let keep = waiting
            .iter()
            .min()
            .map_or(at, |&w| w.min(at))
            .min(look_back);
        stats.skipped_bytes += keep as u64;
        stats.hunted_bytes += keep as u64;
        h.skipped += keep as u64;
        h.scanned = at.saturating_sub(keep);
        h.waiting = waiting
            .into_iter()
            .map(|w| w.saturating_sub(keep))
            .collect();
        Hunted::Passed(keep)
    }
}
