//! The analysis tab's tables: the election timeline and the coordinator map of
//! an [`Analysis`], flattened into rows that each name the message they jump
//! to; which table has the keyboard and what is selected in each; their keys;
//! their rendering.

use super::layout::{Areas, fit};
use super::scroll::Scroll;
use super::theme::{self, DIM, ERROR, WARNING, WON};
use crate::analysis::{
    Analysis, At, CoordinatorKey, Epoch, Outcome, PartitionElections, error_label, key_type_name,
};
use crate::proto::{FIND_COORDINATOR, Kind, VOTE};
use crate::view::escape::escape;
use crossterm::event::KeyCode;
use ratatui::Frame;
use ratatui::layout::{Constraint, Rect};
use std::ops::Range;
use ratatui::style::Style;
use ratatui::text::Line;
use ratatui::widgets::{self, Paragraph, Row, TableState};

/// Which table of the analysis tab has the keyboard.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Table {
    Elections,
    Coordinators,
}

/// The message an entry jumps to: completed by packet `frame`, of this API and kind.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Target {
    pub packet: u64,
    pub api_key: i16,
    pub kind: Kind,
    /// What it is, for the status bar.
    pub what: String,
}

/// One epoch of one partition.
#[derive(Clone, Debug, PartialEq)]
pub struct ElectionRow {
    /// Index of its partition in the analysis's elections.
    pub part: usize,
    /// `topic-partition`, with the cluster when several clusters are seen.
    pub partition: String,
    pub epoch: i32,
    pub outcome: Outcome,
    pub leader: Option<i32>,
    /// Candidates in order of their first request, `pre` for a PreVote round.
    pub candidates: String,
    /// Ballots granted, denied and unanswered over every round.
    pub ballots: (usize, usize, usize),
    pub began: Option<At>,
    pub duration_ns: Option<i64>,
    pub target: Option<Target>,
}

/// One key of the coordinator map.
#[derive(Clone, Debug, PartialEq)]
pub struct CoordinatorRow {
    pub key_type: String,
    pub key: String,
    /// The last answer: `node N host:port`, an error name, or `-` when none was captured.
    pub answer: String,
    pub answer_is_error: bool,
    /// The last answer's time.
    pub when: Option<At>,
    pub requests: u64,
    pub answers: u64,
    pub changes: usize,
    pub errors: u64,
    pub target: Option<Target>,
}

/// The election rows of every partition, in the analysis's order.
pub fn election_rows(a: &Analysis) -> Vec<ElectionRow> {
    let clusters = {
        let mut c: Vec<_> = a.elections.iter().map(|p| &p.cluster_id).collect();
        c.sort();
        c.dedup();
        c.len()
    };
    let mut rows = Vec::new();
    for (part, p) in a.elections.iter().enumerate() {
        for e in &p.epochs {
            rows.push(election_row(part, p, e, clusters > 1));
        }
    }
    rows
}

fn election_row(part: usize, p: &PartitionElections, e: &Epoch, show_cluster: bool) -> ElectionRow {
    let mut partition = format!("{}-{}", p.topic, p.partition);
    if show_cluster {
        let c = p.cluster_id.as_deref().unwrap_or("?");
        partition = format!("{c}/{partition}");
    }
    let candidates = e
        .candidacies
        .iter()
        .map(|c| {
            if c.pre_vote {
                format!("{} pre", c.candidate)
            } else {
                format!("{} vote", c.candidate)
            }
        })
        .collect::<Vec<_>>()
        .join(", ");
    let ballots = e.candidacies.iter().fold((0, 0, 0), |(g, d, u), c| {
        (g + c.granted(), d + c.denied(), u + c.unanswered())
    });
    let target = match (e.began, e.reported) {
        (Some(b), _) => Some(Target {
            packet: b.packet,
            api_key: VOTE,
            kind: Kind::Request,
            what: format!("epoch {}: its first Vote request", e.epoch),
        }),
        (None, Some(r)) => Some(Target {
            packet: r.packet,
            api_key: VOTE,
            kind: Kind::Response,
            what: format!("epoch {}: the first response reporting its leader", e.epoch),
        }),
        (None, None) => None,
    };
    ElectionRow {
        part,
        partition,
        epoch: e.epoch,
        outcome: e.outcome,
        leader: e.leader,
        candidates,
        ballots,
        began: e.began,
        duration_ns: e.duration_ns(),
        target,
    }
}

/// One row per key of the coordinator map.
pub fn coordinator_rows(a: &Analysis) -> Vec<CoordinatorRow> {
    a.coordinators.iter().map(coordinator_row).collect()
}

fn coordinator_row(k: &CoordinatorKey) -> CoordinatorRow {
    let key_type = key_type_name(k.key_type);
    let last = k.answers.last();
    let (answer, answer_is_error) = match last {
        Some(a) => match &a.coordinator {
            Some(c) => (format!("node {} {}:{}", c.node, c.host, c.port), false),
            None => (error_label(a.error), true),
        },
        None => ("-".to_string(), false),
    };
    let target = k.answers.first().map(|a| Target {
        packet: a.at.packet,
        api_key: FIND_COORDINATOR,
        kind: Kind::Response,
        what: format!("{key_type} {}: its first FindCoordinator answer", k.key),
    });
    CoordinatorRow {
        key_type,
        key: k.key.clone(),
        answer,
        answer_is_error,
        when: last.map(|a| a.at),
        requests: k.requests,
        answers: k.answers.len() as u64 + k.answers_not_kept,
        changes: k.changes.len() + k.changes_not_kept as usize,
        errors: k.errors.iter().map(|(_, n)| n).sum(),
        target,
    }
}

/// The analysis tab's state: the latest analysis, its rows, and the selection in each table.
#[derive(Debug)]
pub struct Tables {
    /// The latest analysis, without its coordinator keys and groups (the rows have
    /// what is shown of them).
    pub analysis: Analysis,
    pub elections: Vec<ElectionRow>,
    pub coordinators: Vec<CoordinatorRow>,
    /// The table with the keyboard.
    pub focus: Table,
    pub election: Scroll,
    pub coordinator: Scroll,
}

impl Default for Tables {
    fn default() -> Tables {
        Tables {
            analysis: Analysis::default(),
            elections: Vec::new(),
            coordinators: Vec::new(),
            focus: Table::Elections,
            election: Scroll::default(),
            coordinator: Scroll::default(),
        }
    }
}

impl Tables {
    /// Takes a new analysis, keeping the selections where they can stay.
    pub fn set(&mut self, mut a: Analysis, areas: &Areas) {
        self.elections = election_rows(&a);
        self.coordinators = coordinator_rows(&a);
        // The rows have what is shown of these: the answers need not stay in memory.
        a.coordinators = Vec::new();
        a.groups = Vec::new();
        self.analysis = a;
        self.keep_in_view(areas);
    }

    /// Keeps each table's selection in range and on screen.
    pub fn keep_in_view(&mut self, areas: &Areas) {
        self.election
            .fit(self.elections.len(), areas.election_rows());
        self.coordinator
            .fit(self.coordinators.len(), areas.coordinator_rows());
    }

    /// Rows of the focused table.
    pub fn len(&self) -> usize {
        match self.focus {
            Table::Elections => self.elections.len(),
            Table::Coordinators => self.coordinators.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The focused table's selection.
    pub fn scroll(&self) -> Scroll {
        match self.focus {
            Table::Elections => self.election,
            Table::Coordinators => self.coordinator,
        }
    }

    /// Moves the focused table's selection by `delta` rows.
    pub fn move_by(&mut self, delta: isize, areas: &Areas) {
        let last = self.len().saturating_sub(1);
        let s = match self.focus {
            Table::Elections => &mut self.election,
            Table::Coordinators => &mut self.coordinator,
        };
        s.sel = s.sel.saturating_add_signed(delta).min(last);
        self.keep_in_view(areas);
    }

    /// Gives the keyboard to the other table.
    pub fn switch(&mut self) {
        self.focus = match self.focus {
            Table::Elections => Table::Coordinators,
            Table::Coordinators => Table::Elections,
        }
    }

    /// The message the selected entry jumps to.
    pub fn target(&self) -> Option<&Target> {
        match self.focus {
            Table::Elections => self.elections.get(self.election.sel)?.target.as_ref(),
            Table::Coordinators => self.coordinators.get(self.coordinator.sel)?.target.as_ref(),
        }
    }

    /// Why the selected entry has no message to jump to.
    pub fn no_target(&self) -> &'static str {
        match self.focus {
            Table::Elections if self.elections.is_empty() => "no election to jump to",
            Table::Coordinators if self.coordinators.is_empty() => "no coordinator to jump to",
            _ => "no message of this entry was captured",
        }
    }

    /// The table and row under screen row `y`, or just the table when over its title.
    pub fn at(&self, areas: &Areas, x: u16, y: u16) -> Option<(Table, Option<usize>)> {
        let (table, area, top) = if areas.elections.contains((x, y).into()) {
            (Table::Elections, areas.elections, self.election.top)
        } else if areas.coordinators.contains((x, y).into()) {
            (
                Table::Coordinators,
                areas.coordinators,
                self.coordinator.top,
            )
        } else {
            return None;
        };
        // Under the title and the column heads.
        let first = area.y + 2;
        Some((table, (y >= first).then(|| top + usize::from(y - first))))
    }
}

/// What a key does on the analysis tab.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    Move(isize),
    /// The other table.
    Switch,
    /// List the selected entry's message.
    Jump,
}

pub fn key(code: KeyCode, page: usize) -> Option<Action> {
    let page = page.max(1) as isize;
    Some(match code {
        KeyCode::Up | KeyCode::Char('k') => Action::Move(-1),
        KeyCode::Down | KeyCode::Char('j') => Action::Move(1),
        KeyCode::PageUp => Action::Move(-page),
        KeyCode::PageDown => Action::Move(page),
        KeyCode::Home | KeyCode::Char('g') => Action::Move(isize::MIN / 2),
        KeyCode::End | KeyCode::Char('G') => Action::Move(isize::MAX / 2),
        KeyCode::Tab | KeyCode::BackTab => Action::Switch,
        KeyCode::Enter | KeyCode::Char(' ') => Action::Jump,
        _ => return None,
    })
}

/// Where the loader is, for what an empty table or chart says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Loading {
    pub done: bool,
    pub live: bool,
    /// The list has loaded and the analysis is being made.
    pub analysing: bool,
    /// The analysis could not be made (the status bar says why).
    pub failed: bool,
}

pub(super) fn empty_note(l: Loading, what: &str) -> Line<'static> {
    let text = if l.failed {
        "no analysis (see the status bar)".to_string()
    } else if l.analysing {
        "analysing…".to_string()
    } else if l.done {
        format!("no {what} traffic in this capture")
    } else if l.live {
        format!("waiting for {what} traffic…")
    } else {
        "loading…".to_string()
    };
    Line::styled(text, Style::new().fg(DIM))
}

/// Seconds from the capture's first packet.
pub(super) fn secs(a: &Analysis, at: At) -> f64 {
    (at.ts_ns - a.first_ts_ns.unwrap_or(at.ts_ns)) as f64 / 1e9
}

fn time_cell(a: &Analysis, at: Option<At>) -> String {
    at.map_or_else(|| "-".to_string(), |t| format!("{:.6}", secs(a, t)))
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

/// The rows of a table, its scroll position, and whether it has the keyboard.
struct Shown<'t, T> {
    items: &'t [T],
    scroll: Scroll,
    focused: bool,
}

/// Draws a table of `shown.items`, each made into cells by `row`, with its column heads
/// and which columns are right-aligned. The widths fit every row, but only the rows on
/// screen are kept as cells: a table can have thousands (one per coordinator key).
fn draw_table<T>(
    f: &mut Frame<'_>,
    inner: Rect,
    (heads, right): (&[&str], &[bool]),
    shown: Shown<'_, T>,
    row: impl Fn(&T) -> (Vec<String>, Style),
) {
    let mut w: Vec<usize> = heads.iter().map(|h| h.chars().count()).collect();
    for item in shown.items {
        for (i, c) in row(item).0.iter().enumerate() {
            if let Some(x) = w.get_mut(i) {
                *x = (*x).max(c.chars().count()).min(MAX_COLUMN);
            }
        }
    }
    let range = window(shown.scroll, shown.items.len(), inner.height);
    draw_rows(f, inner, (heads, right, &w), shown, row, range);
}

/// From the first row on screen (or the selection, which the table scrolls to) to a
/// screenful past the last of them.
fn window(s: Scroll, len: usize, height: u16) -> Range<usize> {
    let start = s.top.min(s.sel).min(len);
    let end = s
        .top
        .max(s.sel)
        .saturating_add(usize::from(height) + 1)
        .min(len);
    start..end.max(start)
}

/// Draws the rows `range` of a table as if they were all there.
fn draw_rows<T>(
    f: &mut Frame<'_>,
    inner: Rect,
    (heads, right, w): (&[&str], &[bool], &[usize]),
    shown: Shown<'_, T>,
    row: impl Fn(&T) -> (Vec<String>, Style),
    range: Range<usize>,
) {
    let Scroll { top, sel } = shown.scroll;
    let start = range.start;
    let rows = shown.items.get(range).unwrap_or_default();
    let table = table(heads, w, rows.iter().map(row).collect(), right);
    let mut state = TableState::new()
        .with_offset(top.saturating_sub(start))
        .with_selected(Some(sel.saturating_sub(start)));
    f.render_stateful_widget(
        table.row_highlight_style(theme::selected_style(shown.focused)),
        inner,
        &mut state,
    );
}

/// A table with column heads, `w` wide columns and `rows` of cells.
fn table<'a>(
    heads: &[&'a str],
    w: &[usize],
    rows: Vec<(Vec<String>, Style)>,
    right: &[bool],
) -> widgets::Table<'a> {
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
    .style(theme::HEADS);
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
    widgets::Table::new(body, widths)
        .header(head)
        .column_spacing(1)
}

pub fn draw_elections(f: &mut Frame<'_>, area: Rect, t: &Tables, l: Loading) {
    let focused = t.focus == Table::Elections;
    let title = format!(
        " Elections: {} epochs (Enter: first message) ",
        t.elections.len()
    );
    let block = theme::pane_block(title, focused);
    let inner = block.inner(area);
    f.render_widget(block, area);
    if t.elections.is_empty() {
        f.render_widget(Paragraph::new(empty_note(l, "Vote")), inner);
        return;
    }
    let a = &t.analysis;
    let parts = a.elections.len() > 1;
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
    let row = |r: &ElectionRow| {
            let mut cells = vec![
                r.epoch.to_string(),
                r.outcome.as_str().to_string(),
                r.leader.map_or_else(|| "-".into(), |l| l.to_string()),
                time_cell(a, r.began),
                duration_cell(r.duration_ns),
                format!("{}/{}/{}", r.ballots.0, r.ballots.1, r.ballots.2),
                r.target
                    .as_ref()
                    .map_or_else(|| "-".into(), |t| t.packet.to_string()),
            ];
            if parts {
                cells.insert(0, escape(&r.partition).into_owned());
            }
            cells.push(r.candidates.clone());
            let style = match r.outcome {
                Outcome::Won => Style::new().fg(WON),
                Outcome::Failed => theme::ALARM,
                Outcome::Undecided => Style::new().fg(WARNING),
                Outcome::NoVote | Outcome::NotCaptured => Style::new(),
            };
            (cells, style)
        };
    let shown = Shown {
        items: &t.elections,
        scroll: t.election,
        focused,
    };
    draw_table(f, inner, (&heads, &right), shown, row);
}

pub fn draw_coordinators(f: &mut Frame<'_>, area: Rect, t: &Tables, l: Loading) {
    let focused = t.focus == Table::Coordinators;
    let mut title = format!(" Coordinators: {} keys ", t.coordinators.len());
    let a = &t.analysis;
    if a.coordinator_answers_without_key > 0 {
        title.push_str(&format!(
            "({} answers without their key) ",
            a.coordinator_answers_without_key
        ));
    }
    let block = theme::pane_block(title, focused);
    let inner = block.inner(area);
    f.render_widget(block, area);
    if t.coordinators.is_empty() {
        f.render_widget(Paragraph::new(empty_note(l, "FindCoordinator")), inner);
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
    let row = |r: &CoordinatorRow| {
            let cells = vec![
                r.key_type.clone(),
                escape(&r.key).into_owned(),
                escape(&r.answer).into_owned(),
                time_cell(a, r.when),
                r.changes.to_string(),
                r.requests.to_string(),
                r.answers.to_string(),
                r.errors.to_string(),
                r.target
                    .as_ref()
                    .map_or_else(|| "-".into(), |t| t.packet.to_string()),
            ];
            let style = if r.answer_is_error {
                Style::new().fg(ERROR)
            } else if r.changes > 0 {
                Style::new().fg(WARNING)
            } else {
                Style::new()
            };
            (cells, style)
        };
    let shown = Shown {
        items: &t.coordinators,
        scroll: t.coordinator,
        focused,
    };
    draw_table(f, inner, (&heads, &right), shown, row);
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing)]
mod tests {
    use super::*;
    use ratatui::Terminal;
    use ratatui::backend::TestBackend;

    fn rows() -> Vec<CoordinatorRow> {
        (0..500u64)
            .map(|i| CoordinatorRow {
                key_type: "group".into(),
                // Widths come from every row: the widest is far from the screen.
                key: "k".repeat(1 + (i as usize * 7) % 45),
                answer: format!("node {i} host:9092"),
                answer_is_error: i % 3 == 0,
                when: None,
                requests: i * 1000,
                answers: i,
                changes: (i % 2) as usize,
                errors: 0,
                target: None,
            })
            .collect()
    }

    #[test]
    fn drawing_only_the_rows_on_screen_draws_what_all_rows_drew() {
        let items = rows();
        let row = |r: &CoordinatorRow| {
            let cells = vec![r.key.clone(), r.answer.clone(), r.requests.to_string()];
            let style = if r.answer_is_error {
                Style::new().fg(ERROR)
            } else {
                Style::new()
            };
            (cells, style)
        };
        let heads = ["Key", "Last answer", "Asked"];
        let right = [false, false, true];
        let mut w = vec![3, 11, 5];
        for r in &items {
            for (i, c) in row(r).0.iter().enumerate() {
                w[i] = w[i].max(c.chars().count()).min(MAX_COLUMN);
            }
        }
        let draw = |scroll: Scroll, all: bool| {
            let mut t = Terminal::new(TestBackend::new(100, 12)).unwrap();
            t.draw(|f| {
                let area = f.area();
                let range = if all {
                    0..items.len()
                } else {
                    window(scroll, items.len(), area.height)
                };
                let shown = Shown {
                    items: &items,
                    scroll,
                    focused: true,
                };
                draw_rows(f, area, (&heads, &right, &w), shown, row, range);
            })
            .unwrap();
            t.backend().buffer().clone()
        };
        for (top, sel) in [(0, 0), (0, 5), (100, 105), (100, 100), (488, 499), (3, 400), (300, 2)] {
            let s = Scroll { sel, top };
            assert_eq!(draw(s, false), draw(s, true), "top {top} sel {sel}");
        }
    }
}
