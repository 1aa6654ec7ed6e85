//! Tentative frames: passed over by a hunt just before the frame it took,
//! printed only if Kafka's answer order confirms them.

use super::Pairing;
use crate::kafka::{KafkaMessage, KafkaStats};
use crate::proto::Kind;
use crate::tcp::ConnId;
use std::net::SocketAddr;

/// A frame a hunt passed over that ends exactly where a confirmed frame
/// begins (or, for a request, where the data ended), not confirmed itself.
/// A request is printed (before its answer) only if an answer to its
/// correlation id comes before any answer to a later request: a framed answer,
/// or a tentative one, itself ending where the answers' footing was found.
#[derive(Debug)]
pub(in crate::kafka) struct Tentative {
    pub(in crate::kafka) conn: ConnId,
    pub(in crate::kafka) src: SocketAddr,
    pub(in crate::kafka) dst: SocketAddr,
    pub(in crate::kafka) correlation_id: i32,
    pub(in crate::kafka) data: Vec<u8>,
    pub(in crate::kafka) packet: u64,
    pub(in crate::kafka) ts_ns: i64,
    pub(in crate::kafka) stream_end: u64,
    pub(in crate::kafka) warnings: Vec<String>,
    /// Requests seen before it (set when it is added).
    pub(in crate::kafka) seq: u64,
    /// (Responses) confirmed by where it lies: printed even without a request.
    pub(in crate::kafka) sure: bool,
}

impl Pairing {
    /// Frames a hunt passed over, in stream order, after those already kept
    /// (requests), or instead of them (responses, which only a tentative
    /// request can confirm).
    pub(in crate::kafka) fn add_tentative(&mut self, kind: Kind, t: Vec<Tentative>) {
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

    /// Whether any frame is tentative.
    #[inline]
    pub(in crate::kafka) fn has_tentative(&self) -> bool {
        !(self.tentative.is_empty() && self.answers.is_empty())
    }

    /// Bytes the tentative frames hold.
    #[inline]
    pub(in crate::kafka) fn tentative_bytes(&self) -> usize {
        // Asked twice per stream event: the common case, none, is answered in line.
        if !self.has_tentative() {
            return 0;
        }
        self.tentative_bytes_held()
    }

    /// [`Pairing::tentative_bytes`] when there are some: out of line.
    #[inline(never)]
    fn tentative_bytes_held(&self) -> usize {
        self.tentative
            .iter()
            .chain(&self.answers)
            .map(|t| t.data.len())
            .sum()
    }

    /// The oldest packet a tentative frame ends in: it may still be printed.
    #[inline]
    pub(in crate::kafka) fn tentative_packet(&self) -> Option<u64> {
        if !self.has_tentative() {
            return None;
        }
        self.tentative_packet_held()
    }

    /// [`Pairing::tentative_packet`] when there are some: out of line.
    #[inline(never)]
    fn tentative_packet_held(&self) -> Option<u64> {
        self.tentative.iter().chain(&self.answers).map(|t| t.packet).min()
    }

    /// The tentative frames can no longer be confirmed (or the memory is needed).
    pub(in crate::kafka) fn drop_tentative(&mut self, stats: &mut KafkaStats) {
        stats.tentative_dropped += (self.tentative.len() + self.answers.len()) as u64;
        self.tentative.clear();
        self.answers.clear();
    }

    /// The answers a response hunt passed over, in stream order: each is printed
    /// when a tentative request has its correlation id (that request first, so
    /// confirmed; both ended where their direction's footing was found, in
    /// Kafka's answer order) or when it is sure by where it lies; the rest
    /// are dropped.
    pub(in crate::kafka) fn match_tentative(
        &mut self,
        stats: &mut KafkaStats,
        out: &mut dyn FnMut(&KafkaMessage<'_>),
    ) {
        let mut done = 0u64;
        for a in std::mem::take(&mut self.answers) {
            let start = a.stream_end - a.data.len() as u64;
            let asked = self
                .tentative
                .iter()
                .any(|t| t.correlation_id == a.correlation_id);
            // Overlapping one printed, or neither asked nor sure: not a frame, or not ours.
            if start < done || !(asked || a.sure) {
                stats.tentative_dropped += 1;
                continue;
            }
            done = a.stream_end;
            stats.tentative_confirmed += 1;
            stats.skipped_bytes = stats.skipped_bytes.saturating_sub(a.data.len() as u64);
            self.emit(message(&a, Kind::Response), stats, out);
        }
    }

    /// A response with correlation id `corr` is about to be paired (`found`: with
    /// that pending request). Kafka answers a connection's requests in order, so
    /// an answer to a tentative request confirms it (it is printed now, its
    /// answer next), and an answer to a later request means the tentative
    /// ones before it will never be answered.
    pub(super) fn answer_tentative(
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
