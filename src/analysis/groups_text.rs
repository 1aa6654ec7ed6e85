//! The consumer-group section of `kwire stats`, as text and as JSON.

use super::groups::{Group, GroupError, Rebalance};
use super::{Analysis, At, error_label};
use crate::view::escape::escape;
use crate::view::labels::{api_label, latency};
use serde_json::{Value, json};
use std::fmt::Write;

fn ts(ns: i64) -> Value {
    let secs = ns.div_euclid(1_000_000_000);
    let micros = ns.rem_euclid(1_000_000_000) / 1000;
    json!(secs as f64 + micros as f64 / 1e6)
}

fn at(a: Option<At>) -> Value {
    match a {
        Some(a) => json!({"frame": a.packet, "ts": ts(a.ts_ns)}),
        None => Value::Null,
    }
}

/// Member ids as the text shows them: escaped, comma-separated.
fn list(ms: &[String]) -> String {
    ms.iter()
        .map(|m| escape(m).into_owned())
        .collect::<Vec<_>>()
        .join(", ")
}

fn error_text(e: &GroupError) -> String {
    let mut s = format!("{} {} ×{}", api_label(e.api), error_label(e.code), e.count);
    if !e.members.is_empty() {
        let _ = write!(s, " ({})", list(&e.members));
    }
    s
}

pub(super) fn groups(out: &mut String, a: &Analysis, rel: &dyn Fn(At) -> String) {
    out.push_str("Consumer groups (JoinGroup, SyncGroup, Heartbeat, LeaveGroup)\n");
    for g in &a.groups {
        group(out, g, rel);
    }
    if a.groups_not_kept > 0 {
        let _ = writeln!(
            out,
            "  {} group requests not analysed: group cap reached",
            a.groups_not_kept
        );
    }
    if a.group_requests_forgotten > 0 {
        let _ = writeln!(
            out,
            "  {} group requests forgotten before their response (pending cap)",
            a.group_requests_forgotten
        );
    }
    if a.group_responses_without_request > 0 {
        let _ = writeln!(
            out,
            "  {} group responses without their request (their group is unknown)",
            a.group_responses_without_request
        );
    }
}

fn group(out: &mut String, g: &Group, rel: &dyn Fn(At) -> String) {
    let _ = writeln!(
        out,
        "  group {}: {} rebalance{}, {} heartbeat{}, {} LeaveGroup member{}",
        escape(&g.group_id),
        g.rebalances.len() as u64 + g.rebalances_not_kept,
        if g.rebalances.len() as u64 + g.rebalances_not_kept == 1 {
            ""
        } else {
            "s"
        },
        g.heartbeats,
        if g.heartbeats == 1 { "" } else { "s" },
        g.leaves.len() as u64 + g.leaves_not_kept,
        if g.leaves.len() as u64 + g.leaves_not_kept == 1 {
            ""
        } else {
            "s"
        },
    );
    if g.rebalances_not_kept > 0 {
        let _ = writeln!(
            out,
            "    {} older rebalances not kept",
            g.rebalances_not_kept
        );
    }
    for e in &g.errors_before {
        let _ = writeln!(out, "    before the first rebalance: {}", error_text(e));
    }
    for r in &g.rebalances {
        rebalance(out, r, rel);
    }
    for e in &g.errors_after {
        let _ = writeln!(
            out,
            "    after the last rebalance, no JoinGroup followed: {}",
            error_text(e)
        );
    }
    for l in &g.leaves {
        let _ = writeln!(
            out,
            "    {} left at {} [{}]",
            escape(&l.member),
            rel(l.at),
            l.at.packet
        );
    }
}

fn rebalance(out: &mut String, r: &Rebalance, rel: &dyn Fn(At) -> String) {
    let _ = write!(
        out,
        "    rebalance from {} [{}]",
        rel(r.began),
        r.began.packet
    );
    match r.generation {
        Some(g) => {
            let _ = write!(out, ": generation {g}");
        }
        None => out.push_str(": no generation in the capture"),
    }
    if let Some(p) = &r.protocol_type {
        let _ = write!(out, ", {}", escape(p));
    }
    if let Some(p) = &r.protocol {
        let _ = write!(out, "/{}", escape(p));
    }
    match (r.completed, r.duration_ns()) {
        (Some(c), Some(d)) => {
            let _ = write!(
                out,
                ", synced at {} [{}], {} from first join to last sync",
                rel(c),
                c.packet,
                latency(d / 1000)
            );
        }
        _ => out.push_str(", not synced in the capture"),
    }
    let _ = writeln!(
        out,
        " ({} JoinGroup, {} SyncGroup requests)",
        r.join_requests, r.sync_requests
    );
    if let Some(l) = &r.leader {
        let _ = writeln!(out, "      leader {}", escape(l));
    }
    if !r.members.is_empty() {
        let _ = write!(out, "      members {}", list(&r.members));
        if r.members_not_kept > 0 {
            let _ = write!(out, " and {} more", r.members_not_kept);
        }
        out.push('\n');
    }
    if !r.joined.is_empty() {
        let _ = writeln!(out, "      joined {}", list(&r.joined));
    }
    if !r.left.is_empty() {
        let _ = writeln!(out, "      left (LeaveGroup) {}", list(&r.left));
    }
    if !r.dropped.is_empty() {
        let _ = writeln!(
            out,
            "      dropped without a LeaveGroup (timed out?) {}",
            list(&r.dropped)
        );
    }
    for e in &r.errors {
        let _ = writeln!(out, "      error {}", error_text(e));
    }
}

fn error_json(e: &GroupError) -> Value {
    json!({"api": api_label(e.api), "error": error_label(e.code), "count": e.count,
           "members": e.members})
}

pub(super) fn group_json(g: &Group) -> Value {
    json!({
        "group_id": g.group_id,
        "heartbeats": g.heartbeats,
        "leaves": g.leaves.iter().map(|l| json!({
            "member": l.member, "frame": l.at.packet, "ts": ts(l.at.ts_ns),
        })).collect::<Vec<_>>(),
        "leaves_not_kept": g.leaves_not_kept,
        "errors_before": g.errors_before.iter().map(error_json).collect::<Vec<_>>(),
        "errors_after": g.errors_after.iter().map(error_json).collect::<Vec<_>>(),
        "rebalances_not_kept": g.rebalances_not_kept,
        "rebalances": g.rebalances.iter().map(|r| json!({
            "began": at(Some(r.began)), "generation": r.generation,
            "protocol_type": r.protocol_type, "protocol": r.protocol, "leader": r.leader,
            "members": r.members, "members_not_kept": r.members_not_kept,
            "joined": r.joined, "left": r.left, "dropped": r.dropped,
            "join_requests": r.join_requests, "sync_requests": r.sync_requests,
            "completed": at(r.completed), "last_sync": at(r.last_sync),
            "duration_us": r.duration_ns().map(|n| n / 1000),
            "errors": r.errors.iter().map(error_json).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
    })
}
