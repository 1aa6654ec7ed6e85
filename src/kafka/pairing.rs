//! Pairing: requests wait for their response by correlation id (a response
//! header names neither API nor version, so it takes both from its request).

use crate::proto::{Kind, peek_request_header, peek_response_correlation};

use super::{KafkaMessage, KafkaStats};
use crate::tcp::ConnId;
use std::collections::{HashMap, VecDeque};
use std::net::SocketAddr;

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

/// A frame a hunt passed over that ends exactly where a confirmed frame
/// begins (or, for a request, where the data ended), not confirmed itself.
/// A request is printed (before its answer) only if an answer to its
/// correlation id comes before any answer to a later request: a framed answer,
/// or a tentative one, itself ending where the answers' footing was found.
#[derive(Debug)]
pub(super) struct Tentative {
    pub(super) conn: ConnId,
    pub(super) src: SocketAddr,
    pub(super) dst: SocketAddr,
    pub(super) correlation_id: i32,
    pub(super) data: Vec<u8>,
    pub(super) packet: u64,
    pub(super) ts_ns: i64,
    pub(super) stream_end: u64,
    pub(super) warnings: Vec<String>,
    /// Requests seen before it (set when it is added).
    pub(super) seq: u64,
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

    /// Frames a hunt passed over, in stream order, after those already kept
    /// (requests), or instead of them (responses, which only a tentative
    /// request can confirm).
    pub(super) fn add_tentative(&mut self, kind: Kind, t: Vec<Tentative>) {
        match kind {
            Kind::Request => {
                for mut t in t {
                    t.seq = self.seen;
                    self.tentative.push_back(t);
                }
            }
            Kind::Response => self.answers = t.into(),
        }
    }

    /// Whether tentative requests are kept.
    pub(super) fn has_tentative(&self) -> bool {
        !self.tentative.is_empty()
    }

    /// Bytes the tentative frames hold.
    pub(super) fn tentative_bytes(&self) -> usize {
        self.tentative
            .iter()
            .chain(&self.answers)
            .map(|t| t.data.len())
            .sum()
    }

    /// The oldest packet a tentative frame ends in: it may still be printed.
    pub(super) fn tentative_packet(&self) -> Option<u64> {
        self.tentative.iter().chain(&self.answers).map(|t| t.packet).min()
    }

    /// The tentative frames can no longer be confirmed (or the memory is needed).
    pub(super) fn drop_tentative(&mut self, stats: &mut KafkaStats) {
        stats.tentative_dropped += (self.tentative.len() + self.answers.len()) as u64;
        self.tentative.clear();
        self.answers.clear();
    }

    /// Tentative requests and responses with the same correlation id confirm
    /// each other, both having ended where their direction's footing was found
    /// (in Kafka's answer order): each such request is printed, then its answer.
    pub(super) fn match_tentative(
        &mut self,
        stats: &mut KafkaStats,
        out: &mut dyn FnMut(&KafkaMessage<'_>),
    ) {
        loop {
            let Some(j) = self.answers.iter().position(|a| {
                self.tentative
                    .iter()
                    .any(|t| t.correlation_id == a.correlation_id)
            }) else {
                // The rest answer nothing kept: they were not answers, or not ours.
                stats.tentative_dropped += self.answers.len() as u64;
                self.answers.clear();
                return;
            };
            // Answers before it had no tentative request: not frames, or not ours.
            stats.tentative_dropped += j as u64;
            let mut rest = self.answers.split_off(j);
            let Some(a) = rest.pop_front() else {
                return;
            };
            self.answers = rest;
            self.answers
                .retain(|o| o.stream_end - o.data.len() as u64 >= a.stream_end);
            stats.tentative_confirmed += 1;
            stats.skipped_bytes = stats.skipped_bytes.saturating_sub(a.data.len() as u64);
            let resp = message(&a, Kind::Response);
            self.emit(resp, stats, out);
        }
    }

    /// Pairs one frame (a request waits; a response finds its request) and emits it.
    pub(super) fn emit(
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
                let found =
                    corr.and_then(|c| self.pending.iter().position(|p| p.correlation_id == c));
                if let Some(c) = corr.filter(|_| !self.tentative.is_empty()) {
                    self.answer_tentative(c, found, stats, out);
                }
                let found =
                    corr.and_then(|c| self.pending.iter().position(|p| p.correlation_id == c));
                match found.and_then(|i| self.pending.remove(i)) {
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

    /// A response with correlation id `corr` is about to be paired (`found`: with
    /// that pending request). Kafka answers a connection's requests in order, so
    /// an answer to a tentative request confirms it (it is printed now, its
    /// answer next), and an answer to a later request means the tentative
    /// ones before it will never be answered.
    fn answer_tentative(
        &mut self,
        corr: i32,
        found: Option<usize>,
        stats: &mut KafkaStats,
        out: &mut dyn FnMut(&KafkaMessage<'_>),
    ) {
        if let Some(p) = found.and_then(|i| self.pending.get(i)) {
            // Answers come in order: the tentative requests before this one were
            // never answered, so were not requests.
            let seq = p.seq;
            let before = self.tentative.len();
            self.tentative.retain(|t| t.seq >= seq);
            stats.tentative_dropped += (before - self.tentative.len()) as u64;
            return;
        }
        let Some(i) = self.tentative.iter().position(|t| t.correlation_id == corr) else {
            return;
        };
        // Those before it were not answered in their turn, and those overlapping
        // it were not frames; those after it stay tentative.
        let Some(t) = self.tentative.remove(i) else {
            return;
        };
        let seq = t.seq;
        let before = self.tentative.len();
        self.tentative
            .retain(|o| o.stream_end - o.data.len() as u64 >= t.stream_end);
        stats.tentative_dropped += (before - self.tentative.len()) as u64;
        stats.tentative_confirmed += 1;
        stats.skipped_bytes = stats.skipped_bytes.saturating_sub(t.data.len() as u64);
        let req = message(&t, Kind::Request);
        self.emit(req, stats, out);
        // Its place is before the requests that followed the tentative ones.
        if let Some(p) = self.pending.back_mut() {
            p.seq = seq;
        }
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

/// The message a tentative frame is, once confirmed.
fn message(t: &Tentative, kind: Kind) -> KafkaMessage<'_> {
    KafkaMessage {
        conn: t.conn,
        packet: t.packet,
        ts_ns: t.ts_ns,
        src: t.src,
        dst: t.dst,
        kind,
        data: &t.data,
        wire_size: t.data.len() as u64,
        cut: false,
        api: None,
        request_packet: None,
        latency_ns: None,
        warnings: t.warnings.clone(),
        stream_end: t.stream_end,
    }
}
