//! Pairing: requests wait for their response by correlation id (a response
//! header names neither API nor version, so it takes both from its request).

use crate::proto::{Kind, peek_request_header, peek_response_correlation};

use super::{KafkaMessage, KafkaStats};
use std::collections::{HashMap, VecDeque};

mod tentative;
pub(super) use tentative::Tentative;

/// Unanswered requests whose packet numbers the report lists.
const UNANSWERED_LISTED: usize = 20;

#[derive(Debug)]
struct Pending {
    correlation_id: i32,
    api: (i16, i16),
    packet: u64,
    ts_ns: i64,
    /// Requests seen when it was: its place among the tentative ones.
    seq: u64,
}

/// One connection's requests awaiting a response.
#[derive(Debug)]
pub(super) struct Pairing {
    pending: VecDeque<Pending>,
    /// Requests kept; the oldest is dropped past this.
    max: usize,
    /// Requests ever seen, so a hunt for responses knows when to look again.
    seen: u64,
    /// Tentative requests, in stream order.
    tentative: VecDeque<Tentative>,
    /// Tentative responses, in stream order.
    answers: VecDeque<Tentative>,
}

impl Pairing {
    pub(super) fn new(max: usize) -> Self {
        Pairing {
            pending: VecDeque::new(),
            max,
            seen: 0,
            tentative: VecDeque::new(),
            answers: VecDeque::new(),
        }
    }

    /// No more eviction: the connection is closing.
    pub(super) fn uncap(&mut self) {
        self.max = usize::MAX;
    }

    /// How many requests were ever seen: it changes when a new one is pending.
    pub(super) fn seen(&self) -> u64 {
        self.seen
    }

    /// A request too large to keep has begun: it is emitted when it ends.
    pub(super) fn saw_request(&mut self) {
        self.seen += 1;
    }

    /// The correlation ids of the requests awaiting an answer, with the place of
    /// the first with each among them (not tentative ones:
    /// a payload read as a tentative request must not make payload bytes answers).
    pub(super) fn asked(&self) -> HashMap<i32, usize> {
        let mut asked = HashMap::with_capacity(self.pending.len());
        for (i, p) in self.pending.iter().enumerate() {
            asked.entry(p.correlation_id).or_insert(i);
        }
        asked
    }

    /// The API and version of the pending request with this correlation id.
    pub(super) fn api_of(&self, corr: i32) -> Option<(i16, i16)> {
        self.pending
            .iter()
            .find(|p| p.correlation_id == corr)
            .map(|p| p.api)
    }

    /// Pairs one frame (a request waits; a response finds its request) and emits it.
    pub(super) fn emit(
        &mut self,
        f: KafkaMessage<'_>,
        stats: &mut KafkaStats,
        out: &mut dyn FnMut(&KafkaMessage<'_>),
    ) {
        self.emit_inline(f, stats, out);
    }

    /// [`Pairing::emit`] in line, for the framer's per-frame paths (its call and the
    /// message passed by value cost ~20 Ir a frame).
    #[inline(always)]
    pub(super) fn emit_inline(
        &mut self,
        mut f: KafkaMessage<'_>,
        stats: &mut KafkaStats,
        out: &mut dyn FnMut(&KafkaMessage<'_>),
    ) {
        match f.kind {
            Kind::Request => {
                stats.requests += 1;
                self.seen += 1;
                if let Some(h) = peek_request_header(f.data) {
                    f.api = Some((h.api_key, h.api_version));
                    self.pending.push_back(Pending {
                        correlation_id: h.correlation_id,
                        api: (h.api_key, h.api_version),
                        packet: f.packet,
                        ts_ns: f.ts_ns,
                        seq: self.seen,
                    });
                    if self.pending.len() > self.max {
                        if let Some(old) = self.pending.pop_front() {
                            stats.pending_evicted += 1;
                            record_unanswered(stats, &old);
                        }
                    }
                }
            }
            Kind::Response => {
                stats.responses += 1;
                let corr = peek_response_correlation(f.data);
                // Mostly the oldest request is the one answered: looked at first.
                let find = |pending: &VecDeque<Pending>| {
                    let c = corr?;
                    match pending.front() {
                        Some(p) if p.correlation_id == c => Some(0),
                        _ => pending.iter().position(|p| p.correlation_id == c),
                    }
                };
                let mut found = find(&self.pending);
                if let Some(c) = corr.filter(|_| !self.tentative.is_empty()) {
                    self.answer_tentative(c, found, stats, out);
                    // It may have taken requests into the pending list.
                    found = find(&self.pending);
                }
                // Mostly the oldest request is the one answered.
                let taken = found.and_then(|i| match i {
                    0 => self.pending.pop_front(),
                    _ => self.pending.remove(i),
                });
                match taken {
                    Some(p) => {
                        stats.paired += 1;
                        f.api = Some(p.api);
                        f.request_packet = Some(p.packet);
                        f.latency_ns = Some(f.ts_ns - p.ts_ns);
                    }
                    None => stats.unpaired_responses += 1,
                }
            }
        }
        out(&f);
    }

    /// The connection is gone: whatever is still pending was never answered.
    pub(super) fn close(&mut self, stats: &mut KafkaStats) {
        self.drop_tentative(stats);
        for p in std::mem::take(&mut self.pending) {
            record_unanswered(stats, &p);
        }
    }
}

fn record_unanswered(stats: &mut KafkaStats, p: &Pending) {
    *stats.unanswered.entry(p.api).or_default() += 1;
    if stats.unanswered_packets.len() < UNANSWERED_LISTED {
        stats.unanswered_packets.push(p.packet);
    }
}
