//! `kwire stats`: the analysis as text.

use super::coordinators::{CoordinatorAnswer, Endpoint, REPEAT_ASKS, key_type_name};
use super::elections::{Ballot, Candidacy, Epoch, Outcome, PartitionElections, Voter};
use super::{Analysis, ApiStats, At, CoordinatorKey, error_label};
use crate::view::escape::escape;
use crate::view::labels::api_label;
use crate::view::labels::latency;
use std::fmt::Write;

/// Renders the analysis. With `terminal`, latency histograms are drawn too.
pub fn render_text(a: &Analysis, terminal: bool) -> String {
    let mut out = String::new();
    let first = a.first_ts_ns.unwrap_or(0);
    let rel = |at: At| format!("{:.6}", (at.ts_ns - first) as f64 / 1e9);
    elections(&mut out, a, &rel);
    out.push('\n');
    coordinators(&mut out, a, &rel);
    out.push('\n');
    if !a.groups.is_empty() || a.group_responses_without_request > 0 {
        super::groups_text::groups(&mut out, a, &rel);
        out.push('\n');
    }
    apis(&mut out, a);
    if terminal {
        histograms(&mut out, a);
    }
    out
}

fn voter(v: Voter) -> String {
    match v {
        Voter::Node(n) => format!("node {n}"),
        Voter::Addr(a) => a.to_string(),
    }
}

fn dur(ns: i64) -> String {
    latency(ns / 1000)
}

fn elections(out: &mut String, a: &Analysis, rel: &dyn Fn(At) -> String) {
    out.push_str("Elections (Vote); times in seconds from the first packet, [frames]\n");
    if a.elections.is_empty() {
        out.push_str("  no Vote traffic\n");
    }
    for p in &a.elections {
        partition(out, p, rel);
    }
    if a.votes_not_kept > 0 {
        let _ = writeln!(
            out,
            "  {} Vote requests beyond the cap were not analysed",
            a.votes_not_kept
        );
    }
}

fn partition(out: &mut String, p: &PartitionElections, rel: &dyn Fn(At) -> String) {
    let cluster = match &p.cluster_id {
        Some(c) => format!("cluster {}", escape(c)),
        None => "cluster unknown (answers whose request was not captured)".to_string(),
    };
    let voters: Vec<String> = p
        .voters_seen
        .iter()
        .map(|v| match v {
            Voter::Node(n) => n.to_string(),
            Voter::Addr(a) => a.to_string(),
        })
        .collect();
    let _ = writeln!(
        out,
        "{cluster}  {}-{}  voters seen: {} (majority {})",
        escape(&p.topic),
        p.partition,
        voters.join(", "),
        p.majority
    );
    for e in &p.epochs {
        epoch(out, e, rel);
    }
    if p.repeat_candidates.is_empty() {
        out.push_str("  stood repeatedly without winning: nobody\n");
    }
    for r in &p.repeat_candidates {
        let won = if r.won_epochs.is_empty() {
            "won none".to_string()
        } else {
            let list: Vec<String> = r.won_epochs.iter().map(i32::to_string).collect();
            format!("won epoch {}", list.join(", "))
        };
        let _ = writeln!(
            out,
            "  stood repeatedly without winning: node {} lost {} of {} rounds ({won})",
            r.node, r.lost, r.rounds
        );
    }
}

fn epoch(out: &mut String, e: &Epoch, rel: &dyn Fn(At) -> String) {
    let _ = write!(out, "  epoch {}  ", e.epoch);
    match (e.outcome, e.leader) {
        (Outcome::Won, Some(l)) => {
            let _ = write!(out, "node {l} won");
            if let Some(m) = e.majority {
                let _ = write!(out, ": majority at {} [{}]", rel(m), m.packet);
                if let Some(d) = e.duration_ns() {
                    let _ = write!(out, ", {} after the first request", dur(d));
                }
            }
            if let Some(r) = e.reported {
                let _ = write!(out, "; reported as leader at {} [{}]", rel(r), r.packet);
            }
        }
        (Outcome::NotCaptured, Some(l)) => {
            let _ = write!(out, "leader node {l}");
            if let Some(r) = e.reported {
                let _ = write!(out, ", reported at {} [{}]", rel(r), r.packet);
            }
            out.push_str("; its election is not in the capture");
        }
        (Outcome::Failed, _) => out.push_str("failed: no candidate reached a majority"),
        (Outcome::Undecided, _) => out.push_str("undecided in the capture"),
        (Outcome::NoVote, _) => out.push_str("no Vote, pre-vote only"),
        (_, _) => out.push_str(e.outcome.as_str()),
    }
    out.push('\n');
    if let Some((l, at)) = e.announced {
        let _ = writeln!(
            out,
            "    node {l} announced itself leader (BeginQuorumEpoch) at {} [{}]",
            rel(at),
            at.packet
        );
    }
    if let Some((l, at, n)) = e.known_from {
        let _ = writeln!(
            out,
            "    node {l} named leader by {n} BeginQuorumEpoch/EndQuorumEpoch/Fetch response{}, first at {} [{}]",
            if n == 1 { "" } else { "s" },
            rel(at),
            at.packet
        );
    }
    if let Some(r) = &e.resigned {
        let _ = write!(
            out,
            "    node {} resigned (EndQuorumEpoch) at {} [{}]",
            r.leader,
            rel(r.at),
            r.at.packet
        );
        if !r.preferred.is_empty() {
            let list: Vec<String> = r.preferred.iter().map(|n| format!("node {n}")).collect();
            let _ = write!(out, ", preferring {}", list.join(", "));
        }
        out.push('\n');
    }
    if let Some(r) = &e.leader_record {
        let ids = |v: &[i32]| {
            v.iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        };
        let _ = writeln!(
            out,
            "    leader's record at {} [{}]: node {} voted in by {} (voters {})",
            rel(r.at),
            r.at.packet,
            r.leader,
            ids(&r.granting),
            ids(&r.voters)
        );
    }
    for c in &e.candidacies {
        candidacy(out, c, rel);
    }
    for n in &e.notes {
        let _ = writeln!(out, "    note: {n}");
    }
}

fn candidacy(out: &mut String, c: &Candidacy, rel: &dyn Fn(At) -> String) {
    let start = c
        .ballots
        .iter()
        .map(|b| b.request)
        .min()
        .map_or_else(|| "?".to_string(), rel);
    let _ = write!(
        out,
        "    {start}  node {} {:<8} (epoch {}, last {}@{}) →",
        c.candidate,
        if c.pre_vote { "pre-vote" } else { "vote" },
        c.replica_epoch,
        c.last_offset,
        c.last_offset_epoch
    );
    for (i, b) in c.ballots.iter().enumerate() {
        out.push_str(if i == 0 { " " } else { ", " });
        ballot(out, b, c);
    }
    out.push('\n');
}

fn ballot(out: &mut String, b: &Ballot, c: &Candidacy) {
    out.push_str(&voter(b.voter));
    let Some(a) = &b.answer else {
        let _ = write!(out, " no answer [{}→]", b.request.packet);
        return;
    };
    out.push_str(if a.granted { " granted" } else { " denied" });
    if a.error != 0 {
        let _ = write!(out, " {}", error_label(a.error));
    }
    if a.top_error != 0 {
        let _ = write!(out, " (top-level {})", error_label(a.top_error));
    }
    if a.leader_id >= 0 {
        let _ = write!(out, " (leader {}, epoch {})", a.leader_id, a.leader_epoch);
    } else if a.leader_epoch != c.replica_epoch {
        let _ = write!(out, " (epoch {})", a.leader_epoch);
    }
    let _ = write!(out, " [{}→{}]", b.request.packet, a.at.packet);
}

fn endpoint(e: &Endpoint) -> String {
    format!("node {} ({}:{})", e.node, escape(&e.host), e.port)
}

fn coordinators(out: &mut String, a: &Analysis, rel: &dyn Fn(At) -> String) {
    out.push_str("Coordinators (FindCoordinator)\n");
    if a.coordinators.is_empty() {
        out.push_str("  no FindCoordinator traffic\n");
    }
    for k in &a.coordinators {
        key(out, k, rel);
    }
    if a.coordinator_answers_without_key > 0 {
        let _ = writeln!(
            out,
            "  {} answers (v0-v3) whose request, and so whose key, was not captured",
            a.coordinator_answers_without_key
        );
    }
    if a.coordinator_keys_not_kept > 0 {
        let _ = writeln!(
            out,
            "  {} requests or answers for keys beyond the cap were not analysed",
            a.coordinator_keys_not_kept
        );
    }
}

fn key(out: &mut String, k: &CoordinatorKey, rel: &dyn Fn(At) -> String) {
    let n = k.answers.len() as u64 + k.answers_not_kept;
    let _ = writeln!(
        out,
        "{} {}  {} request{}, {n} answer{}{}",
        key_type_name(k.key_type),
        escape(&k.key),
        k.requests,
        if k.requests == 1 { "" } else { "s" },
        if n == 1 { "" } else { "s" },
        if k.unanswered > 0 {
            format!(", {} unanswered", k.unanswered)
        } else {
            String::new()
        }
    );
    for a in &k.answers {
        answer(out, a, rel);
    }
    if k.answers_not_kept > 0 {
        let _ = writeln!(out, "    … {} more answers not listed", k.answers_not_kept);
    }
    if k.changes.is_empty() {
        out.push_str("  changes: none\n");
    }
    for c in &k.changes {
        let _ = writeln!(
            out,
            "  changed at {} [{}]: {} → {}",
            rel(c.at),
            c.at.packet,
            endpoint(&c.from),
            endpoint(&c.to)
        );
    }
    if !k.errors.is_empty() {
        let list: Vec<String> = k
            .errors
            .iter()
            .map(|(c, n)| format!("{} ×{n}", error_label(*c)))
            .collect();
        let _ = writeln!(out, "  errors: {}", list.join(", "));
    }
    for r in &k.repeat_askers {
        let _ = writeln!(
            out,
            "  keeps asking (≥{REPEAT_ASKS}): {} from {}, {} requests, {} answered with an error",
            r.client_id.as_deref().map_or_else(
                || "(no client id)".to_string(),
                |c| format!("client {}", escape(c))
            ),
            r.ip,
            r.requests,
            r.errors
        );
    }
}

fn answer(out: &mut String, a: &CoordinatorAnswer, rel: &dyn Fn(At) -> String) {
    let what = match &a.coordinator {
        Some(e) => endpoint(e),
        None => {
            let mut s = error_label(a.error);
            if let Some(m) = a.error_message.as_deref().filter(|m| !m.is_empty()) {
                let _ = write!(s, " ({})", escape(m));
            }
            s
        }
    };
    let version = a
        .version
        .map_or_else(|| "v?".to_string(), |v| format!("v{v}"));
    let client = match &a.client_id {
        Some(c) => format!("{} at {}", escape(c), a.client),
        None => a.client.to_string(),
    };
    let _ = writeln!(
        out,
        "    {} [{}]  {what}  ({version} from {} to {client})",
        rel(a.at),
        a.at.packet,
        a.broker
    );
}

fn api_name(s: &ApiStats) -> String {
    let name = s
        .api_key
        .map_or_else(|| "unknown API".to_string(), api_label);
    let versions: Vec<String> = if s.requests.len() == 1 {
        s.requests.keys().map(|v| format!("v{v}")).collect()
    } else {
        s.requests
            .iter()
            .map(|(v, n)| format!("v{v}×{n}"))
            .collect()
    };
    if versions.is_empty() {
        name
    } else {
        format!("{name} {}", versions.join(" "))
    }
}

fn apis(out: &mut String, a: &Analysis) {
    out.push_str("APIs (latency of paired responses; errors of decoded responses)\n");
    let names: Vec<String> = a.apis.iter().map(api_name).collect();
    let w = names
        .iter()
        .map(|n| n.chars().count())
        .max()
        .unwrap_or(3)
        .max(3);
    let _ = writeln!(
        out,
        "  {:<w$}  {:>8}  {:>9}  {:>10}  {:>8}  {:>8}  {:>8}  {:>8}  errors",
        "API", "requests", "responses", "unanswered", "p50", "p90", "p99", "max"
    );
    for (s, name) in a.apis.iter().zip(&names) {
        let (p50, p90, p99, max) = match s.latency.percentiles() {
            Some(p) => {
                let mark = if p.exact { "" } else { "≤" };
                (
                    format!("{mark}{}", latency(p.p50)),
                    format!("{mark}{}", latency(p.p90)),
                    format!("{mark}{}", latency(p.p99)),
                    latency(p.max),
                )
            }
            None => ("-".into(), "-".into(), "-".into(), "-".into()),
        };
        let errors = if s.decoded_responses == 0 {
            "not decoded".to_string()
        } else if s.errors.is_empty() {
            "none".to_string()
        } else {
            s.errors
                .iter()
                .map(|(c, n)| format!("{} ×{n}", error_label(*c)))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let mut extra = String::new();
        if s.unpaired_responses > 0 {
            let _ = write!(
                extra,
                "; {} responses without their request",
                s.unpaired_responses
            );
        }
        if s.malformed > 0 {
            let _ = write!(extra, "; {} malformed", s.malformed);
        }
        let _ = writeln!(
            out,
            "  {name:<w$}  {:>8}  {:>9}  {:>10}  {p50:>8}  {p90:>8}  {p99:>8}  {max:>8}  {errors}{extra}",
            s.total_requests(),
            s.responses,
            s.unanswered()
        );
    }
}

/// Latency histograms with block characters, one row per power of two.
fn histograms(out: &mut String, a: &Analysis) {
    const WIDTH: u64 = 40;
    const EIGHTHS: [&str; 8] = ["", "▏", "▎", "▍", "▌", "▋", "▊", "▉"];
    for s in a.apis.iter().filter(|s| s.latency.count > 0) {
        let _ = writeln!(
            out,
            "\nLatency of {} ({} responses)",
            s.api_key
                .map_or_else(|| "unknown API".to_string(), api_label),
            s.latency.count
        );
        let rows = s.latency.octaves();
        let top = rows.iter().map(|r| r.2).max().unwrap_or(1).max(1);
        for (lo, hi, n) in rows {
            let eighths = (n * WIDTH * 8).div_ceil(top);
            let mut bar = "█".repeat((eighths / 8) as usize);
            bar.push_str(EIGHTHS.get((eighths % 8) as usize).copied().unwrap_or(""));
            let _ = writeln!(
                out,
                "  {:>8} – {:<8} {:<40} {n}",
                latency(lo),
                latency(hi),
                bar
            );
        }
    }
}
