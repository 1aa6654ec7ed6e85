//! Hunting: after lost bytes (or a capture that began mid-stream), looking for
//! the next offset where a frame starts.
//!
//! A plausible header is not enough: payloads carry bytes that look like
//! headers. A candidate is taken only when confirmed, by one of:
//! - the bytes right after it start a plausible frame too, or it ends exactly
//!   where the data seen so far ends;
//! - (responses) its correlation id echoes a request of the other direction;
//! - it decodes completely under its schema (the caller's [`Confirm`]).
//!
//! An unconfirmed candidate is rejected and hunting goes on one byte later.
//! A candidate is held until it can be confirmed, so one larger than the
//! per-direction buffer is rejected: memory stays bounded while hunting.

use crate::codec::Kind;

use super::KafkaStats;
use super::detect::{VERSION_SLACK, request_start};
use super::framer::{Framer, State, frame_size};
use super::pairing::Pairing;
use std::collections::HashSet;
use std::sync::Arc;

/// Bytes a response needs before its correlation id can be checked.
const RESPONSE_PEEK: usize = 8;
/// Frames followed to confirm a response where the capture began.
const CHAIN: usize = 64;
/// Candidates kept waiting at once; past it the oldest is rejected.
const WAITING: usize = 64;

/// Says whether a whole frame (from its size prefix) decodes completely, with
/// nothing left over, as a message of this kind, API key and version. The caller
/// supplies it (the schemas live above this module).
#[derive(Clone)]
pub struct Confirm(Arc<ConfirmFn>);

type ConfirmFn = dyn Fn(Kind, (i16, i16), &[u8]) -> bool + Send + Sync;

impl Confirm {
    pub fn new(f: impl Fn(Kind, (i16, i16), &[u8]) -> bool + Send + Sync + 'static) -> Self {
        Confirm(Arc::new(f))
    }
}

impl std::fmt::Debug for Confirm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Confirm(..)")
    }
}

/// What one hunting step did with the bytes it was shown.
pub(super) enum Hunted {
    /// A confirmed frame starts this many bytes in; hunting is over.
    Found(usize),
    /// This many bytes were passed over; the rest is kept for the next packet.
    Passed(usize),
}

/// Whether a candidate is taken.
enum Verdict {
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
    /// Correlation ids awaiting a response, made once per step.
    asked: Option<HashSet<i32>>,
}

impl Hunter<'_> {
    fn asked(&mut self) -> &HashSet<i32> {
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
                let Some(size) = frame_size(s) else {
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
                yes(self.asked().contains(&corr))
            }
        }
    }

    /// Whether the candidate at the front of `s` is taken. Without `echo` (a
    /// response where the capture began) the frames after it are followed until
    /// one is echoed or the chain ends exactly where the data does.
    fn verdict(&mut self, s: &[u8], echo: bool) -> Verdict {
        let mut off = 0usize;
        for _ in 0..CHAIN {
            let cur = s.get(off..).unwrap_or_default();
            let Some(size) = frame_size(cur) else {
                return Verdict::Wait;
            };
            let total = size as usize + 4;
            if off + total > self.max_buffered {
                // Confirming it would mean holding more than a direction may.
                return Verdict::Rejected;
            }
            let Some(whole) = cur.get(..total) else {
                return Verdict::Wait;
            };
            let next = cur.get(total..).unwrap_or_default();
            if next.is_empty() {
                // It ends exactly where the data seen so far ends.
                return Verdict::Confirmed;
            }
            match self.starts(next, true) {
                Start::Yes => return Verdict::Confirmed,
                _ if off == 0 && self.decodes(whole) => return Verdict::Confirmed,
                Start::Unknown => return Verdict::Wait,
                Start::No if echo => return Verdict::Rejected,
                Start::No => match self.starts(next, false) {
                    Start::Yes => off += total,
                    Start::Unknown => return Verdict::Wait,
                    Start::No => return Verdict::Rejected,
                },
            }
        }
        Verdict::Rejected
    }

    /// Whether the frames from the confirmed candidate at the front of `s` follow
    /// one another to the end of the data: what a later candidate needs to win
    /// over an earlier one still waiting, whose span would cover it.
    fn explains_the_rest(&mut self, s: &[u8]) -> bool {
        let mut off = 0usize;
        for _ in 0..CHAIN {
            let cur = s.get(off..).unwrap_or_default();
            let Some(total) = frame_size(cur).map(|n| n as usize + 4) else {
                return true;
            };
            if cur.len() <= total {
                return true;
            }
            off += total;
            match self.starts(s.get(off..).unwrap_or_default(), true) {
                Start::Yes => {}
                Start::Unknown => return true,
                Start::No => return false,
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
        pairing: &Pairing,
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
            asked: None,
        };
        // Where the capture began, the first boundary may be right there: a response
        // to a request sent before the capture is taken if the structure confirms it.
        let from_start = h.unseen_start && h.skipped == 0;
        let echo = |at: usize| !(from_start && at == 0);
        let ending = h.ending;
        let mut rejected_now = 0u64;
        let mut waiting = Vec::new();
        let mut taken = None;
        // A candidate's fate; a confirmed one is taken unless an earlier one still
        // waits, when it must account for all the bytes up to the data's end.
        let mut judge = |hunter: &mut Hunter<'_>, at: usize, waiting: &mut Vec<usize>| {
            let s = rest.get(at..).unwrap_or_default();
            match hunter.verdict(s, echo(at)) {
                Verdict::Confirmed if waiting.is_empty() || hunter.explains_the_rest(s) => {
                    rejected_now += waiting.len() as u64;
                    return true;
                }
                Verdict::Wait if ending => rejected_now += 1,
                Verdict::Confirmed | Verdict::Wait => {
                    waiting.push(at);
                    if waiting.len() > WAITING {
                        waiting.remove(0);
                        rejected_now += 1;
                    }
                }
                Verdict::Rejected => rejected_now += 1,
            }
            false
        };
        for &at in &h.waiting {
            if judge(&mut hunter, at, &mut waiting) {
                taken = Some(at);
                break;
            }
        }
        let mut at = h.scanned;
        while taken.is_none() {
            let Some(s) = rest.get(at..).filter(|s| !s.is_empty()) else {
                break;
            };
            match hunter.starts(s, echo(at)) {
                Start::No => at += 1,
                Start::Unknown if ending => at += 1,
                // Keep from here: the next packet may complete its header.
                Start::Unknown => break,
                Start::Yes => {
                    if judge(&mut hunter, at, &mut waiting) {
                        taken = Some(at);
                    }
                    at += 1;
                }
            }
        }
        stats.rejected_candidates += rejected_now;
        h.rejected += rejected_now;
        if let Some(t) = taken {
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
        // Bytes before the first that may still matter are passed over.
        let keep = waiting.first().map_or(at, |&w| w.min(at));
        stats.skipped_bytes += keep as u64;
        stats.hunted_bytes += keep as u64;
        h.skipped += keep as u64;
        h.scanned = at - keep;
        h.waiting = waiting.into_iter().map(|w| w - keep).collect();
        Hunted::Passed(keep)
    }
}
