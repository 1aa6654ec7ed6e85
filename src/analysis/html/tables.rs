//! The coordinator map, latency histograms, error tables and rebalances.

use super::*;

// ---- coordinators -----------------------------------------------------------

pub(super) fn coordinators(out: &mut String, a: &Analysis, first: i64) {
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

pub(super) fn latencies(out: &mut String, a: &Analysis) {
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
        let cell = |f: fn(&crate::analysis::Percentiles) -> i64| match &p {
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

pub(super) fn errors(out: &mut String, a: &Analysis, first: i64) {
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
pub(super) fn rebalances(out: &mut String, a: &Analysis, first: i64) {
    out.push_str("<section id=\"rebalances\">\n<h2>Consumer-group rebalances</h2>\n");
    if a.groups.is_empty() {
        out.push_str(
            "<p class=\"muted\">No JoinGroup, SyncGroup, Heartbeat or LeaveGroup traffic decoded \
             (their schemas come from Kafka's jar; see --schemas).</p>\n",
        );
    }
    let names =
        |ms: &[String]| -> String { ms.iter().map(|m| html(m)).collect::<Vec<_>>().join(", ") };
    for g in &a.groups {
        let _ = writeln!(
            out,
            "<h3>Group <code>{}</code></h3>\n<p>{} rebalances, {} heartbeats, {} LeaveGroup members.</p>",
            html(&g.group_id),
            g.rebalances.len() as u64 + g.rebalances_not_kept,
            g.heartbeats,
            g.leaves.len() as u64 + g.leaves_not_kept
        );
        if g.rebalances_not_kept > 0 {
            let _ = writeln!(
                out,
                "<p class=\"muted\">{} older rebalances not kept.</p>",
                g.rebalances_not_kept
            );
        }
        out.push_str(
            "<table class=\"rebalances\"><thead><tr><th>Began</th><th>Generation</th><th>Protocol</th>\
             <th>Leader</th><th>Members</th><th>Joined</th><th>Left</th><th>Dropped</th>\
             <th>Completed</th><th>Duration</th><th>Errors</th></tr></thead><tbody>\n",
        );
        for r in &g.rebalances {
            let protocol = format!(
                "{}/{}",
                html(r.protocol_type.as_deref().unwrap_or("-")),
                html(r.protocol.as_deref().unwrap_or("-"))
            );
            let mut members = names(&r.members);
            if r.members_not_kept > 0 {
                let _ = write!(members, " and {} more", r.members_not_kept);
            }
            let errors: Vec<String> = r
                .errors
                .iter()
                .map(|e| {
                    format!(
                        "{} <span class=\"err\">{}</span> ×{} ({})",
                        api_label(e.api),
                        error_label(e.code),
                        e.count,
                        names(&e.members)
                    )
                })
                .collect();
            let _ = writeln!(
                out,
                "<tr>{}<td class=\"n\">{}</td><td>{protocol}</td><td>{}</td><td>{members}</td>\
                 <td>{}</td><td>{}</td><td>{}</td>{}<td class=\"n\">{}</td><td>{}</td></tr>",
                at_cell(Some(r.began), first),
                r.generation
                    .map_or_else(|| "-".to_string(), |g| g.to_string()),
                html(r.leader.as_deref().unwrap_or("-")),
                names(&r.joined),
                names(&r.left),
                names(&r.dropped),
                at_cell(r.completed, first),
                r.duration_ns()
                    .map_or_else(|| "-".to_string(), |d| latency(d / 1000)),
                errors.join("<br>")
            );
        }
        out.push_str("</tbody></table>\n");
    }
    if a.group_responses_without_request > 0 {
        let _ = writeln!(
            out,
            "<p class=\"muted\">{} group responses without their request (their group is unknown).</p>",
            a.group_responses_without_request
        );
    }
    out.push_str("</section>\n");
}
