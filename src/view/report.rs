//! The end-of-run report: what a run counted, as text for stderr.
#![cfg_attr(
    not(test),
    deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)
)]

use super::labels::api_label;
use crate::pipeline::RunStats;

/// The end-of-run statistics as text, one line per topic.
pub fn render(s: &RunStats) -> String {
    let k = &s.kafka;
    let t = &s.tcp;
    let n = &s.net;
    let total: u64 = s.messages.values().sum();
    let mut e = String::new();
    let _ = (|| -> std::fmt::Result {
        use std::fmt::Write;
        writeln!(
            e,
            "kwire: {} packets, {} TCP connections ({} Kafka, {} not Kafka), {total} Kafka messages",
            s.packets, t.connections, k.connections, k.not_kafka
        )?;
        if k.tls > 0 {
            writeln!(
                e,
                "  {} connections are TLS-encrypted: kwire cannot see inside them",
                k.tls
            )?;
        }
        let mut apis: Vec<String> = Vec::new();
        let mut last = String::new();
        for ((api, kind), count) in &s.messages {
            if *api == last {
                if let Some(l) = apis.last_mut() {
                    let _ = write!(l, ", {count} {kind}s");
                }
            } else {
                apis.push(format!("{api}: {count} {kind}s"));
                last.clone_from(api);
            }
        }
        if !apis.is_empty() {
            writeln!(e, "  messages: {}", apis.join("; "))?;
        }
        writeln!(
            e,
            "  pairing: {} paired, {} responses without their request ({} inferred), {} requests unanswered",
            k.paired,
            k.unpaired_responses,
            s.inferred,
            k.unanswered.values().sum::<u64>()
        )?;
        if !k.unanswered.is_empty() {
            let list: Vec<String> = k
                .unanswered
                .iter()
                .map(|((key, v), c)| format!("{} v{v} ×{c}", api_label(*key)))
                .collect();
            let frames: Vec<String> = k.unanswered_packets.iter().map(u64::to_string).collect();
            writeln!(
                e,
                "  unanswered: {} (frames {}{})",
                list.join(", "),
                frames.join(", "),
                if k.unanswered.values().sum::<u64>() > frames.len() as u64 {
                    ", …"
                } else {
                    ""
                }
            )?;
        }
        writeln!(
            e,
            "  problems: {} malformed, {} with warnings, {} gaps ({} bytes), {} resyncs ({} bytes skipped, {} hunted through, {} candidates rejected), {} desyncs, {} cut messages, {} oversized, {} conflicting retransmissions",
            s.malformed,
            s.warned,
            t.gaps,
            t.gap_bytes,
            k.resyncs,
            k.skipped_bytes,
            k.hunted_bytes,
            k.rejected_candidates,
            k.desyncs,
            k.cut_frames,
            k.oversized_frames,
            t.conflicts
        )?;
        writeln!(
            e,
            "  limits: {} connections evicted, {} pending requests dropped, {} holes skipped at a buffer cap, {} frame bytes dropped at the overall cap, peak {} out-of-order and {} partial-frame bytes buffered",
            t.evicted,
            k.pending_evicted,
            t.buffer_limit_skips,
            k.shed_bytes,
            t.peak_buffered,
            k.peak_buffered
        )?;
        writeln!(
            e,
            "  link/IP: {} non-TCP, {} IP fragments, {} truncated by snaplen, {} unknown link type, {} malformed",
            n.non_tcp, n.ip_fragments, n.truncated, n.unknown_linktype, n.malformed
        )
    })();
    e
}
