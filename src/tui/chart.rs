//! The analysis tab's chart: the election timeline of the selected election's
//! partition, time across and epoch up. It has no state of its own: it follows
//! the selection in the elections table.

use super::tables::{Loading, Tables, empty_note, secs};
use super::theme::{self, DIM, ERROR, NODES, SELECTED, WON};
use crate::analysis::{Analysis, Outcome, PartitionElections};
use ratatui::Frame;
use ratatui::layout::{Constraint, Rect};
use ratatui::style::{Color, Style};
use ratatui::symbols::Marker;
use ratatui::widgets::{Axis, Chart, Dataset, GraphType, LegendPosition, Paragraph};

/// Draws the chart of the partition of the election selected in `t`.
pub fn draw(f: &mut Frame<'_>, area: Rect, t: &Tables, l: Loading) {
    let a = &t.analysis;
    // The partition of the selected election (KRaft has one: __cluster_metadata-0).
    let sel = t.elections.get(t.election.sel);
    let part = sel.and_then(|r| a.elections.get(r.part));
    let title = match part {
        Some(p) => format!(
            " Elections of {}-{}: epoch over time (s) ",
            p.topic, p.partition
        ),
        None => " Elections: epoch over time ".to_string(),
    };
    let block = theme::pane_block(title, false);
    let Some(p) = part else {
        let inner = block.inner(area);
        f.render_widget(block, area);
        f.render_widget(Paragraph::new(empty_note(l, "Vote")), inner);
        return;
    };
    let end = a
        .last_ts_ns
        .zip(a.first_ts_ns)
        .map_or(0.0, |(l, s)| (l - s) as f64 / 1e9)
        .max(0.001);
    let series = Series::of(a, p, end);
    let selected: Vec<(f64, f64)> = sel
        .and_then(|r| {
            let e = p.epochs.iter().find(|e| e.epoch == r.epoch)?;
            let at = e.began.or(e.reported)?;
            Some(vec![(secs(a, at), f64::from(e.epoch))])
        })
        .unwrap_or_default();
    let mut datasets = vec![
        Dataset::default()
            .name("leader epoch")
            .marker(Marker::Braille)
            .graph_type(GraphType::Line)
            .style(Style::new().fg(DIM))
            .data(&series.leader),
    ];
    for (node, pts) in &series.candidates {
        let colour = NODES
            .get(node.unsigned_abs() as usize % NODES.len())
            .copied()
            .unwrap_or(Color::White);
        datasets.push(
            Dataset::default()
                .name(format!("node {node} stands"))
                .marker(Marker::Dot)
                .graph_type(GraphType::Scatter)
                .style(Style::new().fg(colour))
                .data(pts),
        );
    }
    datasets.push(
        Dataset::default()
            .name("won")
            .marker(Marker::Block)
            .graph_type(GraphType::Scatter)
            .style(Style::new().fg(WON))
            .data(&series.won),
    );
    datasets.push(
        Dataset::default()
            .name("failed")
            .marker(Marker::Block)
            .graph_type(GraphType::Scatter)
            .style(Style::new().fg(ERROR))
            .data(&series.failed),
    );
    datasets.push(
        Dataset::default()
            .name("selected")
            .marker(Marker::HalfBlock)
            .graph_type(GraphType::Scatter)
            .style(Style::new().fg(SELECTED))
            .data(&selected),
    );
    let mut counts = vec![series.leader.len()];
    counts.extend(series.candidates.iter().map(|(_, v)| v.len()));
    counts.extend([series.won.len(), series.failed.len(), selected.len()]);
    let (lo, hi) = series.epochs;
    let (y0, y1, y_labels) = y_axis(lo, hi, area.height.saturating_sub(3));
    let x_labels = vec![
        "0".to_string(),
        format!("{:.1}", end / 2.0),
        format!("{end:.1}"),
    ];
    // Only what the chart shows gets a legend entry.
    let datasets: Vec<Dataset<'_>> = datasets
        .into_iter()
        .zip(counts)
        .filter(|(_, n)| *n > 0)
        .map(|(d, _)| d)
        .collect();
    let chart = Chart::new(datasets)
        .block(block)
        .legend_position(Some(LegendPosition::BottomRight))
        .hidden_legend_constraints((Constraint::Percentage(50), Constraint::Percentage(80)))
        .x_axis(
            Axis::default()
                .bounds([0.0, end])
                .labels(x_labels)
                .style(Style::new().fg(DIM)),
        )
        .y_axis(
            Axis::default()
                .bounds([y0, y1])
                .labels(y_labels)
                .style(Style::new().fg(DIM)),
        );
    f.render_widget(chart, area);
}

/// The epoch axis: bounds and labels. When every epoch gets a row or more,
/// each is drawn on the row its label is on: the bounds are chosen so that an
/// epoch falls exactly on a row (ratatui truncates, it does not round), and
/// there is one label, perhaps blank, per row.
fn y_axis(lo: i32, hi: i32, rows: u16) -> (f64, f64, Vec<String>) {
    let (lo, hi) = (i64::from(lo) - 1, i64::from(hi) + 1);
    let span = hi - lo;
    let rows = i64::from(rows);
    if rows < 2 || span > rows - 1 {
        let (y0, y1) = (lo as f64, hi as f64);
        let mid = format!("{:.1}", (y0 + y1) / 2.0);
        return (y0, y1, vec![lo.to_string(), mid, hi.to_string()]);
    }
    // Rows per epoch.
    let k = (rows - 1) / span;
    // A hair above the top epoch, so that truncation lands on the row and not the one above.
    let y1 = hi as f64 + 1e-6;
    let y0 = y1 - (rows - 1) as f64 / k as f64;
    let labels = (0..rows)
        .rev()
        .map(|r| {
            // Row r from the top shows epoch hi - r/k, labelled on whole epochs.
            let e = hi - r / k;
            if r % k == 0 && e >= lo {
                e.to_string()
            } else {
                String::new()
            }
        })
        .collect();
    (y0, y1, labels)
}

/// The chart's points for one partition.
struct Series {
    /// The leader epoch as a step line: it steps up when an epoch's leader becomes known.
    leader: Vec<(f64, f64)>,
    /// Per candidate node: the start of each round it stood in.
    candidates: Vec<(i32, Vec<(f64, f64)>)>,
    /// Each won epoch at its majority (or first report of its leader).
    won: Vec<(f64, f64)>,
    /// Each failed or undecided epoch at its first request.
    failed: Vec<(f64, f64)>,
    /// The lowest and highest epoch.
    epochs: (i32, i32),
}

impl Series {
    fn of(a: &Analysis, p: &PartitionElections, end: f64) -> Series {
        let mut known: Vec<(f64, f64)> = Vec::new();
        let mut candidates: Vec<(i32, Vec<(f64, f64)>)> = Vec::new();
        let mut won = Vec::new();
        let mut failed = Vec::new();
        let mut lo = i32::MAX;
        let mut hi = i32::MIN;
        for e in &p.epochs {
            let y = f64::from(e.epoch);
            lo = lo.min(e.epoch);
            hi = hi.max(e.epoch);
            for c in &e.candidacies {
                let Some(first) = c.ballots.iter().map(|b| b.request).min() else {
                    continue;
                };
                let pt = (secs(a, first), y);
                match candidates.iter_mut().find(|(n, _)| *n == c.candidate) {
                    Some((_, v)) => v.push(pt),
                    None => candidates.push((c.candidate, vec![pt])),
                }
            }
            if let Some(at) = e.majority.or(e.reported).filter(|_| e.leader.is_some()) {
                let pt = (secs(a, at), y);
                known.push(pt);
                if e.outcome == Outcome::Won {
                    won.push(pt);
                }
            }
            if matches!(e.outcome, Outcome::Failed | Outcome::Undecided) {
                if let Some(at) = e.began {
                    failed.push((secs(a, at), y));
                }
            }
        }
        candidates.sort_by_key(|(n, _)| *n);
        known.sort_by(|a, b| a.0.total_cmp(&b.0));
        // A step line: flat until the next epoch's leader is known, then up.
        let mut leader = Vec::new();
        for (t, e) in known {
            if let Some(&(_, prev)) = leader.last() {
                leader.push((t, prev));
            }
            leader.push((t, e));
        }
        if let Some(&(_, last)) = leader.last() {
            leader.push((end, last));
        }
        if lo > hi {
            (lo, hi) = (0, 0);
        }
        Series {
            leader,
            candidates,
            won,
            failed,
            epochs: (lo, hi),
        }
    }
}
