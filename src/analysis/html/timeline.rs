//! The elections section: per partition, the SVG timeline and its epoch table.

use super::*;

pub(super) fn elections(out: &mut String, a: &Analysis, first: i64) {
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
        let mut notes: Vec<String> = Vec::new();
        if let Some((l, at)) = e.announced {
            notes.push(format!(
                "node {l} announced itself leader (BeginQuorumEpoch) at {} [{}]",
                rel(at, first),
                at.packet
            ));
        }
        if let Some(r) = &e.resigned {
            let mut s = format!(
                "node {} resigned (EndQuorumEpoch) at {} [{}]",
                r.leader,
                rel(r.at, first),
                r.at.packet
            );
            if !r.preferred.is_empty() {
                let list: Vec<String> = r.preferred.iter().map(|n| format!("node {n}")).collect();
                let _ = write!(s, ", preferring {}", list.join(", "));
            }
            notes.push(s);
        }
        if let Some((l, at, n)) = e.known_from {
            notes.push(format!(
                "node {l} named leader by {n} BeginQuorumEpoch/EndQuorumEpoch/Fetch response{}, first at {} [{}]",
                if n == 1 { "" } else { "s" },
                rel(at, first),
                at.packet
            ));
        }
        notes.extend(e.notes.iter().map(|n| html(n)));
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
