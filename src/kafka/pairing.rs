//! Pairing: requests wait for their response by correlation id (a response
//! header names neither API nor version, so it takes both from its request).

use crate::codec::{Kind, peek_request_header};

use super::{KafkaFrame, KafkaStats, Origin};
use std::collections::VecDeque;

const UNANSWERED_LISTED: usize = 20;
#[derive(Debug)]
pub(super) struct Pending {
    pub(super) correlation_id: i32,
    pub(super) api: (i16, i16),
    pub(super) frame: u64,
    pub(super) ts_ns: i64,
}

/// Pairs and emits one frame.
#[allow(clippy::too_many_arguments)]
pub(super) fn emit(
    o: &Origin,
    data: &[u8],
    wire_size: u64,
    cut: bool,
    warnings: Vec<String>,
    pending: &mut VecDeque<Pending>,
    max_pending: usize,
    stats: &mut KafkaStats,
    out: &mut dyn FnMut(&KafkaFrame<'_>),
) {
    let Origin {
        conn,
        kind,
        src,
        dst,
        frame,
        ts_ns,
    } = *o;
    let mut f = KafkaFrame {
        conn,
        frame,
        ts_ns,
        src,
        dst,
        kind,
        data,
        wire_size,
        cut,
        api: None,
        request_frame: None,
        latency_ns: None,
        warnings,
    };
    match kind {
        Kind::Request => {
            stats.requests += 1;
            if let Some(h) = peek_request_header(data) {
                f.api = Some((h.api_key, h.api_version));
                pending.push_back(Pending {
                    correlation_id: h.correlation_id,
                    api: (h.api_key, h.api_version),
                    frame,
                    ts_ns,
                });
                if pending.len() > max_pending {
                    if let Some(old) = pending.pop_front() {
                        stats.pending_evicted += 1;
                        record_unanswered(stats, &old);
                    }
                }
            }
        }
        Kind::Response => {
            stats.responses += 1;
            let corr = data
                .get(4..8)
                .and_then(|c| c.try_into().ok())
                .map(i32::from_be_bytes);
            let found = corr.and_then(|c| pending.iter().position(|p| p.correlation_id == c));
            match found.and_then(|i| pending.remove(i)) {
                Some(p) => {
                    stats.paired += 1;
                    f.api = Some(p.api);
                    f.request_frame = Some(p.frame);
                    f.latency_ns = Some(ts_ns - p.ts_ns);
                }
                None => stats.unpaired_responses += 1,
            }
        }
    }
    out(&f);
}

pub(super) fn record_unanswered(stats: &mut KafkaStats, p: &Pending) {
    *stats.unanswered.entry(p.api).or_default() += 1;
    if stats.unanswered_frames.len() < UNANSWERED_LISTED {
        stats.unanswered_frames.push(p.frame);
    }
}
