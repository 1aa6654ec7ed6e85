//! Drawing the analysis tab: the election timeline as a chart (time across,
//! epoch up), the elections table and the coordinator map.

use super::app::App;
use super::layout::{Areas, fit};
use super::tab::{Tab, Table as Which};
use super::theme::{
    ALARM, DIM, ERROR, HEADS, NODES, SELECTED, WARNING, WON, pane_block, selected_style,
};
use crate::analysis::{At, Outcome, PartitionElections};
use crate::view::escape::escape;
use ratatui::Frame;
use ratatui::layout::{Constraint, Rect};
use ratatui::style::{Color, Style};
use ratatui::symbols::Marker;
use ratatui::text::Line;
use ratatui::widgets::{
    Axis, Chart, Dataset, GraphType, LegendPosition, Paragraph, Row, Table, TableState,
};

/// Draws the analysis tab into the areas of `a`.
pub fn draw(app: &App, f: &mut Frame<'_>, a: &Areas) {
    debug_assert_eq!(app.tab, Tab::Analysis);
    draw_chart(app, f, a.chart);
    draw_elections(app, f, a.elections);
    draw_coordinators(app, f, a.coordinators);
}

fn empty_note(app: &App, what: &str) -> Line<'static> {
    let text = if app.done {
        format!("no {what} traffic in this capture")
    } else if app.live {
        format!("waiting for {what} traffic…")
    } else {
        "loading…".to_string()
    };
    Line::styled(text, Style::new().fg(DIM))
}

/// Seconds from the capture's first packet.
fn secs(app: &App, at: At) -> f64 {
    (at.ts_ns - app.analysis.first_ts_ns.unwrap_or(at.ts_ns)) as f64 / 1e9
}

fn draw_chart(app: &App, f: &mut Frame<'_>, area: Rect) {
    // The partition of the selected election (KRaft has one: __cluster_metadata-0).
    let sel = app.elections.get(app.election_sel);
    let part = sel.and_then(|r| app.analysis.elections.get(r.part));
    let title = match part {
        Some(p) => format!(
            " Elections of {}-{}: epoch over time (s) ",
            p.topic, p.partition
        ),
        None => " Elections: epoch over time ".to_string(),
    };
    let block = pane_block(title, false);
    let Some(p) = part else {
        let inner = block.inner(area);
        f.render_widget(block, area);
        f.render_widget(Paragraph::new(empty_note(app, "Vote")), inner);
        return;
    };
    let end = app
        .analysis
        .last_ts_ns
        .zip(app.analysis.first_ts_ns)
        .map_or(0.0, |(l, s)| (l - s) as f64 / 1e9)
        .max(0.001);
    let series = Series::of(app, p, end);
    let selected: Vec<(f64, f64)> = sel
        .and_then(|r| {
            let e = p.epochs.iter().find(|e| e.epoch == r.epoch)?;
            let at = e.began.or(e.reported)?;
            Some(vec![(secs(app, at), f64::from(e.epoch))])
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
    fn of(app: &App, p: &PartitionElections, end: f64) -> Series {
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
                let pt = (secs(app, first), y);
                match candidates.iter_mut().find(|(n, _)| *n == c.candidate) {
                    Some((_, v)) => v.push(pt),
                    None => candidates.push((c.candidate, vec![pt])),
                }
            }
            if let Some(at) = e.majority.or(e.reported).filter(|_| e.leader.is_some()) {
                let pt = (secs(app, at), y);
                known.push(pt);
                if e.outcome == Outcome::Won {
                    won.push(pt);
                }
            }
            if matches!(e.outcome, Outcome::Failed | Outcome::Undecided) {
                if let Some(at) = e.began {
                    failed.push((secs(app, at), y));
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

fn time_cell(app: &App, at: Option<At>) -> String {
    at.map_or_else(|| "-".to_string(), |a| format!("{:.6}", secs(app, a)))
}

fn duration_cell(ns: Option<i64>) -> String {
    match ns {
        Some(ns) if ns < 1_000_000 => format!("{}µs", ns / 1000),
        Some(ns) => format!("{:.1}ms", ns as f64 / 1e6),
        None => "-".to_string(),
    }
}

/// Columns wider than this are cut, with `…`.
const MAX_COLUMN: usize = 40;

/// A table with column heads and `rows` of cells, widths fitted to the content.
fn table<'a>(heads: &[&'a str], rows: Vec<(Vec<String>, Style)>, right: &[bool]) -> Table<'a> {
    let mut w: Vec<usize> = heads.iter().map(|h| h.chars().count()).collect();
    for (cells, _) in &rows {
        for (i, c) in cells.iter().enumerate() {
            if let Some(x) = w.get_mut(i) {
                *x = (*x).max(c.chars().count()).min(MAX_COLUMN);
            }
        }
    }
    let cell = |i: usize, s: &str| {
        let wi = w.get(i).copied().unwrap_or(1);
        fit(s, wi, right.get(i).copied().unwrap_or(false))
    };
    let head = Row::new(
        heads
            .iter()
            .enumerate()
            .map(|(i, h)| cell(i, h))
            .collect::<Vec<_>>(),
    )
    .style(HEADS);
    let body: Vec<Row<'a>> = rows
        .into_iter()
        .map(|(cells, style)| {
            Row::new(
                cells
                    .iter()
                    .enumerate()
                    .map(|(i, c)| cell(i, c))
                    .collect::<Vec<_>>(),
            )
            .style(style)
        })
        .collect();
    // The last column takes what is left, so it is the one cut on a narrow terminal.
    let n = w.len();
    let widths: Vec<Constraint> = w
        .iter()
        .enumerate()
        .map(|(i, &x)| match u16::try_from(x).unwrap_or(u16::MAX) {
            x if i + 1 == n => Constraint::Min(x.min(8)),
            x => Constraint::Length(x),
        })
        .collect();
    Table::new(body, widths).header(head).column_spacing(1)
}

fn draw_elections(app: &App, f: &mut Frame<'_>, area: Rect) {
    let focused = app.table == Which::Elections;
    let title = format!(
        " Elections: {} epochs (Enter: first message) ",
        app.elections.len()
    );
    let block = pane_block(title, focused);
    let inner = block.inner(area);
    f.render_widget(block, area);
    if app.elections.is_empty() {
        f.render_widget(Paragraph::new(empty_note(app, "Vote")), inner);
        return;
    }
    let parts = app.analysis.elections.len() > 1;
    let mut heads = vec![
        "Epoch",
        "Outcome",
        "Leader",
        "Began",
        "Duration",
        "Votes +/-/?",
        "Frame",
    ];
    let mut right = vec![true, false, true, true, true, false, true];
    if parts {
        heads.insert(0, "Partition");
        right.insert(0, false);
    }
    heads.push("Candidates");
    right.push(false);
    let rows = app
        .elections
        .iter()
        .map(|r| {
            let mut cells = vec![
                r.epoch.to_string(),
                r.outcome.as_str().to_string(),
                r.leader.map_or_else(|| "-".into(), |l| l.to_string()),
                time_cell(app, r.began),
                duration_cell(r.duration_ns),
                format!("{}/{}/{}", r.ballots.0, r.ballots.1, r.ballots.2),
                r.target
                    .as_ref()
                    .map_or_else(|| "-".into(), |t| t.frame.to_string()),
            ];
            if parts {
                cells.insert(0, escape(&r.partition).into_owned());
            }
            cells.push(r.candidates.clone());
            let style = match r.outcome {
                Outcome::Won => Style::new().fg(WON),
                Outcome::Failed => ALARM,
                Outcome::Undecided => Style::new().fg(WARNING),
                Outcome::NoVote | Outcome::NotCaptured => Style::new(),
            };
            (cells, style)
        })
        .collect();
    let t = table(&heads, rows, &right);
    let mut state = TableState::new()
        .with_offset(app.election_top)
        .with_selected(Some(app.election_sel));
    f.render_stateful_widget(
        t.row_highlight_style(selected_style(focused)),
        inner,
        &mut state,
    );
}

fn draw_coordinators(app: &App, f: &mut Frame<'_>, area: Rect) {
    let focused = app.table == Which::Coordinators;
    let mut title = format!(" Coordinators: {} keys ", app.coordinators.len());
    let a = &app.analysis;
    if a.coordinator_answers_without_key > 0 {
        title.push_str(&format!(
            "({} answers without their key) ",
            a.coordinator_answers_without_key
        ));
    }
    let block = pane_block(title, focused);
    let inner = block.inner(area);
    f.render_widget(block, area);
    if app.coordinators.is_empty() {
        f.render_widget(Paragraph::new(empty_note(app, "FindCoordinator")), inner);
        return;
    }
    let heads = [
        "Type",
        "Key",
        "Last answer",
        "At",
        "Changes",
        "Asked",
        "Answers",
        "Errors",
        "Frame",
    ];
    let right = [false, false, false, true, true, true, true, true, true];
    let rows = app
        .coordinators
        .iter()
        .map(|r| {
            let cells = vec![
                r.key_type.clone(),
                escape(&r.key).into_owned(),
                escape(&r.answer).into_owned(),
                time_cell(app, r.when),
                r.changes.to_string(),
                r.requests.to_string(),
                r.answers.to_string(),
                r.errors.to_string(),
                r.target
                    .as_ref()
                    .map_or_else(|| "-".into(), |t| t.frame.to_string()),
            ];
            let style = if r.answer_is_error {
                Style::new().fg(ERROR)
            } else if r.changes > 0 {
                Style::new().fg(WARNING)
            } else {
                Style::new()
            };
            (cells, style)
        })
        .collect();
    let t = table(&heads, rows, &right);
    let mut state = TableState::new()
        .with_offset(app.coordinator_top)
        .with_selected(Some(app.coordinator_sel));
    f.render_stateful_widget(
        t.row_highlight_style(selected_style(focused)),
        inner,
        &mut state,
    );
}
