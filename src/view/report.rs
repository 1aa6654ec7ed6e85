//! The end-of-run report: what a run counted, as text for stderr.
#![cfg_attr(
    not(test),
    deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)
)]

use super::labels::{api_label, count};
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
        if s.tls.connections > 0 {
            e.push_str(&tls_line(&s.tls));
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
        if t.unchecked_bytes > 0 {
            writeln!(
                e,
                "  retransmissions: {} bytes seen again, {} of them not compared with the first copy (the peer had acknowledged them, or they lay beyond the overlap history)",
                t.retransmitted_bytes, t.unchecked_bytes
            )?;
        }
        if k.tentative_confirmed + k.tentative_dropped + k.out_of_order > 0 {
            writeln!(
                e,
                "  resync: {} passed-over requests confirmed by their answers, {} never confirmed (not printed); {} messages printed after a later one of their connection",
                k.tentative_confirmed, k.tentative_dropped, k.out_of_order
            )?;
        }
        let names = &s.topics;
        if names.evicted > 0 || names.too_long > 0 {
            writeln!(
                e,
                "  topic ids: {} named, {} forgotten at --max-topic-ids, {} names too long to keep",
                names.learned, names.evicted, names.too_long
            )?;
        }
        writeln!(
            e,
            "  link/IP: {} non-TCP, {} IP fragments, {} truncated by snaplen, {} unknown link type, {} malformed",
            n.non_tcp, n.ip_fragments, n.truncated, n.unknown_linktype, n.malformed
        )?;
        if n.ip_fragments > 0 {
            writeln!(
                e,
                "  IP fragments: {} TCP datagrams reassembled, given up: {} timed out, {} at the memory limit, {} with a fragment that did not fit",
                n.fragments_reassembled,
                n.fragments_timed_out,
                n.fragments_evicted,
                n.fragments_bad
            )?;
        }
        if let Some(c) = &s.capture {
            let skipped = c.other_blocks + c.custom_blocks + c.unknown_blocks + c.orphan_packets;
            if skipped > 0 || c.interfaces > 1 || c.sections > 1 {
                writeln!(
                    e,
                    "  capture file: {} sections, {} interfaces; skipped {} custom, {} unknown and {} other non-packet blocks, {} packets of undescribed interfaces",
                    c.sections,
                    c.interfaces,
                    c.custom_blocks,
                    c.unknown_blocks,
                    c.other_blocks,
                    c.orphan_packets
                )?;
            }
        }
        Ok(())
    })();
    e
}

/// The TLS line: connections by outcome, what was decrypted, and the layer's counters.
fn tls_line(t: &crate::tls::TlsStats) -> String {
    use crate::tls::Outcome;
    let mut parts: Vec<String> = Vec::new();
    for (o, n) in &t.outcomes {
        let mut p = format!("{n} {}", o.reason());
        if *o == Outcome::Decrypted {
            let mut detail: Vec<String> = t
                .versions
                .iter()
                .map(|(v, c)| format!("{v} ×{c}"))
                .collect();
            detail.extend(t.suites.iter().map(|(s, c)| format!("{s} ×{c}")));
            p.push_str(&format!(" ({})", detail.join(", ")));
        }
        if *o == Outcome::NoKey {
            p.push_str(" (give one with --tls-keylog FILE or SSLKEYLOGFILE)");
        }
        parts.push(p);
    }
    let mut line = format!(
        "  TLS: {} connections: {}; records: {} decrypted, {} failed authentication, {} without a key",
        t.connections,
        parts.join(", "),
        t.decrypted_records,
        t.failed_records,
        t.undecrypted_records
    );
    if t.gaps
        + t.resyncs
        + t.desyncs
        + t.skipped_bytes
        + t.key_updates
        + t.midstream_recovered
        + t.shed
        > 0
    {
        line.push_str(&format!(
            "; {} gaps, {} resyncs, {} desyncs, {} bytes skipped, {} key updates, {} joined mid-stream and decrypted, {} times partial records dropped at the overall cap (peak {} bytes)",
            t.gaps,
            t.resyncs,
            t.desyncs,
            t.skipped_bytes,
            t.key_updates,
            t.midstream_recovered,
            t.shed,
            t.peak_buffered
        ));
    }
    line.push('\n');
    line
}

/// Ports the "no Kafka traffic" line names.
const BUSIEST: usize = 3;

/// Why nothing was found, when no Kafka message was: one line for stderr, naming the
/// busiest server ports and suggesting `--port` for the busiest one not already taken as
/// Kafka (`kafka_ports`). `None` when there was a Kafka message.
pub fn nothing_found(s: &RunStats, kafka_ports: &[u16]) -> Option<String> {
    if !s.messages.is_empty() {
        return None;
    }
    let conns = s.tcp.connections;
    if conns == 0 {
        return Some(format!(
            "kwire: no Kafka traffic found: no TCP connections in {} packets\n",
            count(s.packets)
        ));
    }
    let plural =
        |n: u64, word: &str| format!("{} {word}{}", count(n), if n == 1 { "" } else { "s" });
    let mut line = format!(
        "kwire: no Kafka traffic found in {}",
        plural(conns, "TCP connection")
    );
    let top = s.kafka.ports.top(BUSIEST);
    if let Some(((port, n), rest)) = top.split_first() {
        line.push_str(if rest.is_empty() {
            "; the busiest port was "
        } else {
            "; the busiest ports were "
        });
        line.push_str(&format!("{port} ({})", plural(*n, "connection")));
        for (port, n) in rest {
            line.push_str(&format!(", {port} ({})", count(*n)));
        }
    }
    if let Some((port, _)) = top.iter().find(|(p, _)| !kafka_ports.contains(p)) {
        line.push_str(&format!("; try --port {port}"));
    }
    line.push('\n');
    Some(line)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::SocketAddr;

    fn with_ports(ports: &[(u16, u64)]) -> RunStats {
        let mut s = RunStats::default();
        for (port, n) in ports {
            for i in 0..*n {
                let client = SocketAddr::from(([10, 0, 0, 1], 40000 + i as u16));
                s.kafka
                    .ports
                    .add(client, SocketAddr::from(([10, 0, 0, 2], *port)), true);
                s.tcp.connections += 1;
            }
        }
        s
    }

    #[test]
    fn nothing_found_names_the_busiest_ports() {
        let s = with_ports(&[(443, 3), (9094, 12), (22, 1), (80, 1)]);
        assert_eq!(
            nothing_found(&s, &[9092, 9093]).unwrap(),
            "kwire: no Kafka traffic found in 17 TCP connections; the busiest ports were 9094 (12 connections), 443 (3), 22 (1); try --port 9094\n"
        );
        // The busiest port already taken as Kafka is not suggested again.
        let s = with_ports(&[(9092, 2), (8080, 1)]);
        assert_eq!(
            nothing_found(&s, &[9092, 9093]).unwrap(),
            "kwire: no Kafka traffic found in 3 TCP connections; the busiest ports were 9092 (2 connections), 8080 (1); try --port 8080\n"
        );
        let s = with_ports(&[(9092, 1)]);
        assert_eq!(
            nothing_found(&s, &[9092, 9093]).unwrap(),
            "kwire: no Kafka traffic found in 1 TCP connection; the busiest port was 9092 (1 connection)\n"
        );
        let mut s = RunStats {
            packets: 1234,
            ..RunStats::default()
        };
        assert_eq!(
            nothing_found(&s, &[]).unwrap(),
            "kwire: no Kafka traffic found: no TCP connections in 1,234 packets\n"
        );
        s.messages.insert(("Vote".into(), "request"), 1);
        assert_eq!(nothing_found(&s, &[]), None);
    }
}
