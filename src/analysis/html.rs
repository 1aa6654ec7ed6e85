//! `kwire stats --html`: the analysis as one self-contained HTML file to
//! share: the election timeline as SVG with its table, the coordinator map,
//! per-API latency histograms as SVG, and the error tables.
//!
//! Nothing is loaded from anywhere: no script, font, image or link leaves the
//! file, and a Content-Security-Policy says so to the browser too. Wire
//! strings are escaped twice: visibly, as in the text views (controls and
//! bidirectional overrides cannot disguise a name), then for HTML.

use super::coordinators::{CoordinatorAnswer, Endpoint, key_type_name};
use super::elections::{Epoch, Outcome, PartitionElections, Voter};
use super::{Analysis, ApiStats, At, CoordinatorKey, error_label};
use crate::view::escape::escape;
use crate::view::labels::api_label;
use crate::view::summary::latency;
use std::fmt::Write;

/// Chart width in SVG units (the page scales it).
const W: f64 = 960.0;
/// Room left of a timeline for the epoch labels, and below for the time axis.
const LEFT: f64 = 70.0;
const RIGHT: f64 = 150.0;
const BOTTOM: f64 = 30.0;
/// Epoch rows drawn at most per timeline; the table lists them all.
const MAX_ROWS: usize = 60;

/// Renders the report. `title` names the capture (it is escaped).
pub fn render_html(a: &Analysis, title: &str) -> String {
    let mut out = String::with_capacity(64 << 10);
    let first = a.first_ts_ns.unwrap_or(0);
    let t = html(title);
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>kwire report: {t}</title>\n<style>{CSS}</style>\n</head>\n<body>\n\
         <header><h1>kwire report: <span class=\"capture\">{t}</span></h1>\n<p>{} messages",
        a.messages
    );
    if let (Some(f), Some(l)) = (a.first_ts_ns, a.last_ts_ns) {
        let _ = write!(out, " over {:.6} s", (l - f) as f64 / 1e9);
    }
    out.push_str(
        ". Times are seconds from the capture's first packet; [N] is a packet number.</p>\n\
         <nav><a href=\"#elections\">Elections</a> · <a href=\"#coordinators\">Coordinators</a> · \
         <a href=\"#latency\">Latency</a> · <a href=\"#errors\">Errors</a> · \
         <a href=\"#rebalances\">Rebalances</a></nav></header>\n<main>\n",
    );
    elections(&mut out, a, first);
    coordinators(&mut out, a, first);
    latencies(&mut out, a);
    errors(&mut out, a, first);
    rebalances(&mut out, a);
    let _ = write!(
        out,
        "</main>\n<footer>Written by kwire {}.</footer>\n</body>\n</html>\n",
        env!("CARGO_PKG_VERSION")
    );
    out
}

const CSS: &str = "
body{font:14px/1.4 system-ui,sans-serif;margin:0 auto;max-width:1100px;padding:0 16px;color:#1b1f24;background:#fff}
h1{font-size:20px}h2{font-size:17px;border-bottom:1px solid #ccd;padding-bottom:2px;margin-top:28px}h3{font-size:15px}
nav a{color:#0550ae}.capture{font-family:monospace}
table{border-collapse:collapse;margin:8px 0;font-size:13px}
th,td{border:1px solid #d0d7de;padding:2px 6px;text-align:left;vertical-align:top}
th{background:#f3f5f7}td.n{text-align:right;font-variant-numeric:tabular-nums}
.won{fill:#2da44e}.failed{fill:#cf222e}.undecided,.no_vote,.not_captured{fill:#8c959f}
tr.failed td:nth-child(2){color:#cf222e}tr.won td:nth-child(2){color:#1a7f37}
svg{display:block;max-width:100%;height:auto;margin:8px 0}
svg text{font:11px system-ui,sans-serif;fill:#57606a}
.axis{stroke:#8c959f;stroke-width:1}.grid{stroke:#eaeef2;stroke-width:1}
.leader{fill:none;stroke:#57606a;stroke-width:1.5}
circle.vote{fill:#0969da}circle.prevote{fill:#fff;stroke:#0969da;stroke-width:1.5}
rect.bar{fill:#0969da}.muted{color:#57606a}.err{color:#cf222e}
footer{margin:32px 0 16px;color:#57606a;font-size:12px}
";

/// A wire string for HTML: visibly escaped as in the text views, then HTML-escaped.
fn html(s: &str) -> String {
    let visible = escape(s);
    let mut out = String::with_capacity(visible.len());
    for c in visible.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

fn rel(at: At, first: i64) -> String {
    format!("{:.6}", (at.ts_ns - first) as f64 / 1e9)
}

fn at_cell(at: Option<At>, first: i64) -> String {
    at.map_or_else(
        || "<td class=\"muted\">-</td>".to_string(),
        |a| format!("<td class=\"n\">{} [{}]</td>", rel(a, first), a.packet),
    )
}

fn voter(v: Voter) -> String {
    match v {
        Voter::Node(n) => format!("node {n}"),
        Voter::Addr(a) => a.to_string(),
    }
}

fn endpoint(e: &Endpoint) -> String {
    format!("node {} ({}:{})", e.node, html(&e.host), e.port)
}

// ---- elections --------------------------------------------------------------

fn elections(out: &mut String, a: &Analysis, first: i64) {
    out.push_str("<section id=\"elections\">\n<h2>Elections (Vote)</h2>\n");
    if a.elections.is_empty() {
        out.push_str("<p class=\"muted\">No Vote traffic in the capture.</p>\n");
    }
    for (i, p) in a.elections.iter().enumerate() {
        partition(out, p, i, a, first);
    }
    if a.votes_not_kept > 0 {
        let _ = writeln!(
            out,
            "<p>{} Vote requests beyond the cap were not analysed.</p>",
            a.votes_not_kept
        );
    }
    out.push_str("</section>\n");
}

fn partition(out: &mut String, p: &PartitionElections, i: usize, a: &Analysis, first: i64) {
    let cluster = match &p.cluster_id {
        Some(c) => format!("cluster {}", html(c)),
        None => "cluster unknown (answers whose request was not captured)".to_string(),
    };
    let voters: Vec<String> = p.voters_seen.iter().map(|v| voter(*v)).collect();
    let _ = writeln!(
        out,
        "<h3>{cluster}, {}-{}</h3>\n<p>Voters seen: {} (majority {}).</p>",
        html(&p.topic),
        p.partition,
        voters.join(", "),
        p.majority
    );
    timeline(out, p, i, a, first);
    out.push_str(
        "<table class=\"elections\"><thead><tr><th>Epoch</th><th>Outcome</th><th>Leader</th>\
         <th>Began</th><th>Majority</th><th>Time to majority</th><th>Reported</th>\
         <th>Candidates (granted/denied/unanswered)</th><th>Notes</th></tr></thead><tbody>\n",
    );
    for e in &p.epochs {
        let cands: Vec<String> = e
            .candidacies
            .iter()
            .map(|c| {
                format!(
                    "node {} {} {}/{}/{}",
                    c.candidate,
                    if c.pre_vote { "pre-vote" } else { "vote" },
                    c.granted(),
                    c.denied(),
                    c.unanswered()
                )
            })
            .collect();
        let notes: Vec<String> = e.notes.iter().map(|n| html(n)).collect();
        let _ = writeln!(
            out,
            "<tr class=\"{o}\"><td class=\"n\">{}</td><td>{o}</td><td>{}</td>{}{}<td class=\"n\">{}</td>{}<td>{}</td><td>{}</td></tr>",
            e.epoch,
            e.leader
                .map_or_else(|| "-".to_string(), |l| format!("node {l}")),
            at_cell(e.began, first),
            at_cell(e.majority, first),
            e.duration_ns()
                .map_or_else(|| "-".to_string(), |d| latency(d / 1000)),
            at_cell(e.reported, first),
            cands.join("<br>"),
            notes.join("<br>"),
            o = e.outcome.as_str(),
        );
    }
    out.push_str("</tbody></table>\n");
    for r in &p.repeat_candidates {
        let won: Vec<String> = r.won_epochs.iter().map(i32::to_string).collect();
        let _ = writeln!(
            out,
            "<p>Stood repeatedly without winning: node {} lost {} of {} rounds (won: {}).</p>",
            r.node,
            r.lost,
            r.rounds,
            if won.is_empty() {
                "none".to_string()
            } else {
                won.join(", ")
            }
        );
    }
}

/// Where an epoch's block starts and ends.
fn epoch_span(e: &Epoch) -> Option<(At, At)> {
    let start = e.began.or(e.reported)?;
    let end = e.majority.or(e.reported).unwrap_or_else(|| {
        e.candidacies
            .iter()
            .flat_map(|c| c.ballots.iter())
            .flat_map(|b| [Some(b.request), b.answer.as_ref().map(|a| a.at)])
            .flatten()
            .max()
            .unwrap_or(start)
    });
    Some((start, end.max(start)))
}

/// The election timeline: time across, epoch up; a block per epoch (green
/// won, red failed, grey otherwise), a dot where each candidate stood (filled
/// for Vote, hollow for PreVote), and a step line for the leader's epoch.
fn timeline(out: &mut String, p: &PartitionElections, i: usize, a: &Analysis, first: i64) {
    let epochs: Vec<&Epoch> = p.epochs.iter().rev().take(MAX_ROWS).rev().collect();
    if epochs.is_empty() {
        return;
    }
    let row = 28.0;
    let h = 20.0 + row * epochs.len() as f64 + BOTTOM;
    let t0 = first;
    let t1 = a.last_ts_ns.unwrap_or(first).max(first + 1);
    let x = |ts: i64| LEFT + (ts - t0) as f64 / (t1 - t0) as f64 * (W - LEFT - RIGHT);
    // Oldest epoch at the bottom.
    let y = |k: usize| 10.0 + row * (epochs.len() - 1 - k) as f64 + row / 2.0;
    let _ = writeln!(
        out,
        "<svg class=\"timeline\" id=\"timeline-{i}\" viewBox=\"0 0 {W} {h}\" width=\"{W}\" height=\"{h}\" role=\"img\" aria-label=\"Election timeline of {}-{}\">",
        html(&p.topic),
        p.partition
    );
    // Time axis with five ticks.
    let base = h - BOTTOM;
    let _ = writeln!(
        out,
        "<line class=\"axis\" x1=\"{LEFT}\" y1=\"{base}\" x2=\"{}\" y2=\"{base}\"/>",
        W - RIGHT
    );
    for k in 0..=4 {
        let ts = t0 + (t1 - t0) * k / 4;
        let tx = x(ts);
        let _ = writeln!(
            out,
            "<line class=\"grid\" x1=\"{tx:.1}\" y1=\"10\" x2=\"{tx:.1}\" y2=\"{base}\"/><text x=\"{tx:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{:.3} s</text>",
            base + 16.0,
            (ts - t0) as f64 / 1e9
        );
    }
    let mut leader_pts = Vec::new();
    for (k, e) in epochs.iter().enumerate() {
        let ey = y(k);
        let _ = writeln!(
            out,
            "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">epoch {}</text>",
            LEFT - 6.0,
            ey + 4.0,
            e.epoch
        );
        if let Some((s, end)) = epoch_span(e) {
            let (sx, ex) = (x(s.ts_ns), x(end.ts_ns));
            let w = (ex - sx).max(6.0);
            let what = match (e.outcome, e.leader) {
                (Outcome::Won, Some(l)) => format!(
                    "node {l} won{}",
                    e.duration_ns()
                        .map_or_else(String::new, |d| format!(" in {}", latency(d / 1000)))
                ),
                (_, Some(l)) => format!("leader node {l} ({})", e.outcome.as_str()),
                (o, None) => o.as_str().replace('_', " "),
            };
            let _ = writeln!(
                out,
                "<rect class=\"epoch {o}\" x=\"{sx:.1}\" y=\"{:.1}\" width=\"{w:.1}\" height=\"{:.1}\" rx=\"2\"><title>epoch {}: {what}</title></rect>\
                 <text class=\"outcome\" x=\"{:.1}\" y=\"{:.1}\">{what}</text>",
                ey - row * 0.3,
                row * 0.6,
                e.epoch,
                sx + w + 8.0,
                ey + 4.0,
                o = e.outcome.as_str(),
            );
        }
        if let (Some(_), Some(at)) = (e.leader, e.majority.or(e.reported)) {
            // Along the bottom of the row, clear of the block's label.
            leader_pts.push((x(at.ts_ns), ey + row * 0.4));
        }
        for c in &e.candidacies {
            let Some(start) = c.ballots.iter().map(|b| b.request).min() else {
                continue;
            };
            let _ = writeln!(
                out,
                "<circle class=\"candidate {}\" cx=\"{:.1}\" cy=\"{ey:.1}\" r=\"4\"><title>node {} {} at {} s [{}]: {}/{}/{} granted/denied/unanswered</title></circle>",
                if c.pre_vote { "prevote" } else { "vote" },
                x(start.ts_ns),
                c.candidate,
                if c.pre_vote { "pre-vote" } else { "vote" },
                rel(start, first),
                start.packet,
                c.granted(),
                c.denied(),
                c.unanswered()
            );
        }
    }
    if !leader_pts.is_empty() {
        // A step line: the leader's epoch holds until the next one is won.
        let mut pts = String::new();
        let mut prev_y: Option<f64> = None;
        for (px, py) in &leader_pts {
            if let Some(pyv) = prev_y {
                let _ = write!(pts, "{px:.1},{pyv:.1} ");
            }
            let _ = write!(pts, "{px:.1},{py:.1} ");
            prev_y = Some(*py);
        }
        if let (Some(py), Some(last)) = (prev_y, a.last_ts_ns) {
            let _ = write!(pts, "{:.1},{py:.1}", x(last));
        }
        let _ = writeln!(
            out,
            "<polyline class=\"leader\" points=\"{}\"><title>leader epoch</title></polyline>",
            pts.trim_end()
        );
    }
    if p.epochs.len() > epochs.len() {
        let _ = writeln!(
            out,
            "<text x=\"{LEFT}\" y=\"8\">the last {} of {} epochs</text>",
            epochs.len(),
            p.epochs.len()
        );
    }
    out.push_str("</svg>\n");
}

// ---- coordinators -----------------------------------------------------------

fn coordinators(out: &mut String, a: &Analysis, first: i64) {
    out.push_str("<section id=\"coordinators\">\n<h2>Coordinators (FindCoordinator)</h2>\n");
    if a.coordinators.is_empty() {
        out.push_str("<p class=\"muted\">No FindCoordinator traffic in the capture.</p>\n");
    } else {
        out.push_str(
            "<table class=\"coordinators\"><thead><tr><th>Key type</th><th>Key</th><th>Coordinator (last answer)</th>\
             <th>At</th><th>Changes</th><th>Requests</th><th>Answers</th><th>Unanswered</th><th>Errors</th><th>Keeps asking</th></tr></thead><tbody>\n",
        );
        for k in &a.coordinators {
            key_row(out, k, first);
        }
        out.push_str("</tbody></table>\n");
    }
    if a.coordinator_answers_without_key > 0 {
        let _ = writeln!(
            out,
            "<p>{} answers (v0-v3) whose request, and so whose key, was not captured.</p>",
            a.coordinator_answers_without_key
        );
    }
    if a.coordinator_keys_not_kept > 0 {
        let _ = writeln!(
            out,
            "<p>{} requests or answers for keys beyond the cap were not analysed.</p>",
            a.coordinator_keys_not_kept
        );
    }
    out.push_str("</section>\n");
}

fn answer_text(a: &CoordinatorAnswer) -> String {
    match &a.coordinator {
        Some(e) => endpoint(e),
        None => {
            let mut s = format!("<span class=\"err\">{}</span>", error_label(a.error));
            if let Some(m) = a.error_message.as_deref().filter(|m| !m.is_empty()) {
                let _ = write!(s, " ({})", html(m));
            }
            s
        }
    }
}

fn key_row(out: &mut String, k: &CoordinatorKey, first: i64) {
    let last = k.answers.last();
    let changes: Vec<String> = k
        .changes
        .iter()
        .map(|c| {
            format!(
                "{} [{}]: {} → {}",
                rel(c.at, first),
                c.at.packet,
                endpoint(&c.from),
                endpoint(&c.to)
            )
        })
        .collect();
    let errors: Vec<String> = k
        .errors
        .iter()
        .map(|(c, n)| format!("{} ×{n}", error_label(*c)))
        .collect();
    let askers: Vec<String> = k
        .repeat_askers
        .iter()
        .map(|r| {
            format!(
                "{} from {}: {} requests, {} errors",
                r.client_id
                    .as_deref()
                    .map_or_else(|| "(no client id)".to_string(), html),
                r.ip,
                r.requests,
                r.errors
            )
        })
        .collect();
    let _ = writeln!(
        out,
        "<tr><td>{}</td><td>{}</td><td>{}</td>{}<td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td>{}</td><td>{}</td></tr>",
        key_type_name(k.key_type),
        html(&k.key),
        last.map_or_else(|| "-".to_string(), answer_text),
        at_cell(last.map(|a| a.at), first),
        if changes.is_empty() {
            "none".to_string()
        } else {
            changes.join("<br>")
        },
        k.requests,
        k.answers.len() as u64 + k.answers_not_kept,
        k.unanswered,
        if errors.is_empty() {
            "none".to_string()
        } else {
            errors.join(", ")
        },
        askers.join("<br>")
    );
}

// ---- latency ----------------------------------------------------------------

fn api_name(s: &ApiStats) -> String {
    s.api_key
        .map_or_else(|| "unknown API".to_string(), api_label)
}

fn latencies(out: &mut String, a: &Analysis) {
    out.push_str(
        "<section id=\"latency\">\n<h2>APIs and latency</h2>\n\
         <table class=\"apis\"><thead><tr><th>API</th><th>Versions</th><th>Requests</th><th>Responses</th>\
         <th>Unanswered</th><th>p50</th><th>p90</th><th>p99</th><th>max</th></tr></thead><tbody>\n",
    );
    for s in &a.apis {
        let versions: Vec<String> = s
            .requests
            .iter()
            .map(|(v, n)| format!("v{v}×{n}"))
            .collect();
        let p = s.latency.percentiles();
        let cell = |f: fn(&super::Percentiles) -> i64| match &p {
            Some(p) => format!("{}{}", if p.exact { "" } else { "≤" }, latency(f(p))),
            None => "-".to_string(),
        };
        let _ = writeln!(
            out,
            "<tr><td>{}</td><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td></tr>",
            api_name(s),
            versions.join(" "),
            s.total_requests(),
            s.responses,
            s.unanswered(),
            cell(|p| p.p50),
            cell(|p| p.p90),
            cell(|p| p.p99),
            p.map_or_else(|| "-".to_string(), |p| latency(p.max)),
        );
    }
    out.push_str(
        "</tbody></table>\n<p class=\"muted\">Latency of paired responses, request to response; \
         ≤ marks a bound from the histogram once more were seen than kept. Each bar of a \
         histogram counts one doubling, from the latency under it to twice that.</p>\n",
    );
    for s in a.apis.iter().filter(|s| s.latency.count > 0) {
        histogram(out, s);
    }
    out.push_str("</section>\n");
}

/// Responses per power of two of latency, as bars.
fn histogram(out: &mut String, s: &ApiStats) {
    let rows = s.latency.octaves();
    let top = rows.iter().map(|r| r.2).max().unwrap_or(1).max(1);
    let n = rows.len().max(1) as f64;
    let h = 180.0;
    let plot = h - 50.0;
    let bw = ((W - LEFT - 20.0) / n).min(90.0);
    let id = s
        .api_key
        .map_or_else(|| "unknown".to_string(), |k| k.to_string());
    let name = api_name(s);
    let _ = writeln!(
        out,
        "<h3>Latency of {name} ({} responses)</h3>\n<svg class=\"histogram\" id=\"histogram-{id}\" viewBox=\"0 0 {W} {h}\" width=\"{W}\" height=\"{h}\" role=\"img\" aria-label=\"Latency histogram of {name}\">",
        s.latency.count
    );
    let base = 20.0 + plot;
    let _ = writeln!(
        out,
        "<line class=\"axis\" x1=\"{LEFT}\" y1=\"{base}\" x2=\"{:.1}\" y2=\"{base}\"/><text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">responses</text>",
        LEFT + bw * n,
        LEFT - 6.0,
        base
    );
    for (k, (lo, hi, count)) in rows.iter().enumerate() {
        let bh = plot * *count as f64 / top as f64;
        let bx = LEFT + bw * k as f64;
        let _ = writeln!(
            out,
            "<rect class=\"bar\" x=\"{:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{bh:.1}\"><title>{} – {}: {count}</title></rect>\
             <text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{count}</text>\
             <text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>",
            bx + 2.0,
            base - bh,
            (bw - 4.0).max(1.0),
            latency(*lo),
            latency(*hi),
            bx + bw / 2.0,
            base - bh - 4.0,
            bx + bw / 2.0,
            base + 14.0,
            latency(*lo),
        );
    }
    out.push_str("</svg>\n");
}

// ---- errors -----------------------------------------------------------------

fn errors(out: &mut String, a: &Analysis, first: i64) {
    out.push_str(
        "<section id=\"errors\">\n<h2>Errors</h2>\n<h3>Error codes in responses, by API</h3>\n",
    );
    let rows: Vec<(String, i16, u64)> = a
        .apis
        .iter()
        .flat_map(|s| s.errors.iter().map(move |(c, n)| (api_name(s), *c, *n)))
        .collect();
    if rows.is_empty() {
        out.push_str("<p class=\"muted\">No response carried an error code.</p>\n");
    } else {
        out.push_str("<table class=\"api-errors\"><thead><tr><th>API</th><th>Code</th><th>Error</th><th>Count</th></tr></thead><tbody>\n");
        for (api, code, n) in rows {
            let _ = writeln!(
                out,
                "<tr><td>{api}</td><td class=\"n\">{code}</td><td class=\"err\">{}</td><td class=\"n\">{n}</td></tr>",
                error_label(code)
            );
        }
        out.push_str("</tbody></table>\n");
    }
    let malformed: Vec<&ApiStats> = a.apis.iter().filter(|s| s.malformed > 0).collect();
    if !malformed.is_empty() {
        out.push_str("<h3>Malformed messages</h3>\n<table class=\"malformed\"><thead><tr><th>API</th><th>Messages</th></tr></thead><tbody>\n");
        for s in malformed {
            let _ = writeln!(
                out,
                "<tr><td>{}</td><td class=\"n\">{}</td></tr>",
                api_name(s),
                s.malformed
            );
        }
        out.push_str("</tbody></table>\n");
    }
    // Vote answers that refused with an error, and FindCoordinator error answers.
    let mut votes = String::new();
    for p in &a.elections {
        for e in &p.epochs {
            for c in &e.candidacies {
                for b in &c.ballots {
                    let Some(ans) = b
                        .answer
                        .as_ref()
                        .filter(|x| x.error != 0 || x.top_error != 0)
                    else {
                        continue;
                    };
                    let code = if ans.error != 0 {
                        ans.error
                    } else {
                        ans.top_error
                    };
                    let _ = writeln!(
                        votes,
                        "<tr><td>{}-{}</td><td class=\"n\">{}</td><td>node {}</td><td>{}</td><td class=\"err\">{}</td>{}</tr>",
                        html(&p.topic),
                        p.partition,
                        e.epoch,
                        c.candidate,
                        voter(b.voter),
                        error_label(code),
                        at_cell(Some(ans.at), first)
                    );
                }
            }
        }
    }
    if !votes.is_empty() {
        out.push_str("<h3>Vote answers with an error</h3>\n<table class=\"vote-errors\"><thead><tr><th>Partition</th><th>Epoch</th><th>Candidate</th><th>Voter</th><th>Error</th><th>At</th></tr></thead><tbody>\n");
        out.push_str(&votes);
        out.push_str("</tbody></table>\n");
    }
    let mut coords = String::new();
    for k in &a.coordinators {
        for ans in k.answers.iter().filter(|x| x.coordinator.is_none()) {
            let _ = writeln!(
                coords,
                "<tr><td>{} {}</td><td>{}</td><td>{}</td>{}</tr>",
                key_type_name(k.key_type),
                html(&k.key),
                answer_text(ans),
                ans.client_id.as_deref().map_or_else(
                    || ans.client.to_string(),
                    |c| format!("{} at {}", html(c), ans.client)
                ),
                at_cell(Some(ans.at), first)
            );
        }
    }
    if !coords.is_empty() {
        out.push_str("<h3>FindCoordinator error answers</h3>\n<table class=\"coordinator-errors\"><thead><tr><th>Key</th><th>Error</th><th>Client</th><th>At</th></tr></thead><tbody>\n");
        out.push_str(&coords);
        out.push_str("</tbody></table>\n");
    }
    out.push_str("</section>\n");
}

// ---- rebalances -------------------------------------------------------------

/// Consumer-group rebalances: the place for their section once the analysis
/// exists (JoinGroup, SyncGroup, Heartbeat, LeaveGroup); it says so until then.
fn rebalances(out: &mut String, _a: &Analysis) {
    out.push_str(
        "<section id=\"rebalances\">\n<h2>Consumer-group rebalances</h2>\n\
         <p class=\"muted\">Not analysed by this version of kwire.</p>\n</section>\n",
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wire_strings_are_escaped_visibly_then_for_html() {
        assert_eq!(html("a<b>&\"'"), "a&lt;b&gt;&amp;\\&quot;&#39;");
        assert_eq!(html("x\u{1b}[2J\u{202e}y"), "x\\x1b[2J\\u{202e}y");
    }

    #[test]
    fn an_empty_analysis_is_a_whole_page() {
        let s = render_html(&Analysis::default(), "<none>");
        assert!(s.starts_with("<!DOCTYPE html>"));
        assert!(s.contains("kwire report: &lt;none&gt;"));
        assert!(s.contains("No Vote traffic"));
        assert!(s.ends_with("</html>\n"));
    }
}
