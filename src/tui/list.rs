//! The message list: which messages the filter lets through, the selection
//! and following the tail, the keys that move it, and its rendering. Only the
//! rows on screen are decoded, for their Info column.

use super::layout::fit;
use super::order;
use super::scroll::Scroll;
use super::store::{Row, Store};
use super::theme::{self, DIM, REQUEST, RESPONSE, WARNING};
use crate::dissect::Record;
use crate::proto::Kind;
use crate::select::Filter;
use crate::view::labels::api_label;
use crate::view::summary::{self, addr, latency};
use crossterm::event::KeyCode;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::Line;
use ratatui::widgets::Paragraph;

/// The messages the filter (and the followed connection) let through, in
/// packet order.
#[derive(Debug, Default)]
pub struct View {
    filter: Filter,
    /// Only this connection's messages (`f`, "Follow TCP Stream").
    conn: Option<u32>,
    /// Matching rows in packet order; `None` when every row matches.
    rows: Option<Vec<u32>>,
    /// Rows of the store looked at so far (in arrival order).
    scanned: usize,
}

impl View {
    pub(super) fn new(filter: Filter) -> View {
        let rows = (!filter.is_empty()).then(Vec::new);
        View {
            filter,
            conn: None,
            rows,
            scanned: 0,
        }
    }

    /// The same view, narrowed to connection `conn` (or not, for `None`).
    pub(super) fn following(mut self, conn: Option<u32>) -> View {
        self.conn = conn;
        self.rows = (!self.filter.is_empty() || conn.is_some()).then(Vec::new);
        self.scanned = 0;
        self
    }

    pub fn filter(&self) -> &Filter {
        &self.filter
    }

    /// The connection followed, if one is.
    pub fn conn(&self) -> Option<u32> {
        self.conn
    }

    /// Whether every row is shown without being looked at.
    pub(super) fn is_all(&self) -> bool {
        self.rows.is_none()
    }

    /// Rows of the store looked at so far.
    pub(super) fn scanned(&self) -> usize {
        self.scanned
    }

    /// Messages shown.
    pub fn len(&self, store: &Store) -> usize {
        match &self.rows {
            None => store.len(),
            Some(v) => v.len(),
        }
    }

    /// The store row at view position `pos`.
    pub fn row_at(&self, store: &Store, pos: usize) -> Option<usize> {
        match &self.rows {
            None => store.by_frame(pos),
            Some(v) => v.get(pos).map(|&r| r as usize),
        }
    }

    /// Where row `row` is shown, if it is.
    pub fn position(&self, store: &Store, row: usize) -> Option<usize> {
        match &self.rows {
            None => store.frame_position(row),
            Some(v) => {
                let k = store.sort_key(row);
                v.binary_search_by(|&r| store.sort_key(r as usize).cmp(&k))
                    .ok()
            }
        }
    }

    /// The first position showing `row` or a message after it.
    pub(super) fn position_from(&self, store: &Store, row: usize) -> usize {
        let k = store.sort_key(row);
        match &self.rows {
            None => store.frame_position(row).unwrap_or(0),
            Some(v) => v.partition_point(|&r| store.sort_key(r as usize) < k),
        }
    }

    /// Rows still to be looked at by the filter.
    pub fn unscanned(&self, store: &Store) -> usize {
        match &self.rows {
            None => 0,
            Some(_) => store.len().saturating_sub(self.scanned),
        }
    }

    /// Share of the store the filter has looked at.
    pub fn scanned_fraction(&self, store: &Store) -> f64 {
        if store.is_empty() {
            1.0
        } else {
            self.scanned.min(store.len()) as f64 / store.len() as f64
        }
    }

    /// Whether the filter lets row `row` through, looked at now.
    pub(super) fn matches(&self, store: &Store, row: usize) -> bool {
        let Some(r) = store.row(row) else {
            return false;
        };
        if self.conn.is_some_and(|c| c != r.conn()) {
            return false;
        }
        self.filter.is_empty()
            || store
                .with_record(row, |r| self.filter.matches(r))
                .unwrap_or(false)
    }

    /// Filters up to `max` more rows.
    pub(super) fn scan(&mut self, store: &Store, max: usize) {
        if self.rows.is_none() {
            return;
        }
        let end = store.len().min(self.scanned.saturating_add(max));
        let mut hits: Vec<u32> = Vec::new();
        let in_conn = |r: &Row| self.conn.is_none_or(|c| c == r.conn());
        if self.filter.is_empty() {
            hits.extend(
                (self.scanned..end)
                    .filter(|&i| store.row(i).is_some_and(in_conn))
                    .map(|i| i as u32),
            );
        } else {
            // Rows whose bytes cannot be read back do not match.
            store.scan(self.scanned..end, in_conn, |i, rec| {
                if rec.is_ok_and(|r| self.filter.matches(r)) {
                    hits.push(i as u32);
                }
            });
        }
        if let Some(rows) = &mut self.rows {
            order::merge(rows, hits, |i| store.sort_key(i));
        }
        self.scanned = end;
    }
}

/// The list pane's state.
#[derive(Debug, Default)]
pub struct List {
    pub view: View,
    /// Selected view position and the first one on screen.
    pub scroll: Scroll,
    /// Keep the last message selected as more arrive.
    pub follow: bool,
    /// The row to select again once the filter has looked that far.
    pub anchor: Option<usize>,
}

impl List {
    /// Selects view position `pos`, clamped to the `n` shown, and keeps it among `h` rows.
    pub fn select(&mut self, pos: usize, n: usize, h: usize) {
        self.scroll.sel = pos.min(n.saturating_sub(1));
        self.keep_in_view(n, h);
    }

    pub fn keep_in_view(&mut self, n: usize, h: usize) {
        let h = h.max(1);
        self.scroll.show(self.scroll.sel, h);
        self.scroll.fill(n, h);
    }

    /// The selected message's store row.
    pub fn selected_row(&self, store: &Store) -> Option<usize> {
        self.view.row_at(store, self.scroll.sel)
    }
}

/// What a key does in the list.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    Move(isize),
    First,
    Last,
    /// Go to the tree.
    Open,
}

pub fn key(code: KeyCode, page: usize) -> Option<Action> {
    let page = page.max(1) as isize;
    Some(match code {
        KeyCode::Up | KeyCode::Char('k') => Action::Move(-1),
        KeyCode::Down | KeyCode::Char('j') => Action::Move(1),
        KeyCode::PageUp => Action::Move(-page),
        KeyCode::PageDown => Action::Move(page),
        KeyCode::Home | KeyCode::Char('g') => Action::First,
        KeyCode::End | KeyCode::Char('G') => Action::Last,
        KeyCode::Enter | KeyCode::Char(' ') => Action::Open,
        _ => return None,
    })
}

/// The view position under screen row `y` of a list drawn in `area`.
pub fn position_at(list: &List, area: Rect, y: u16) -> Option<usize> {
    // Under the title and the column heads.
    let first = area.y + 2;
    (y >= first).then(|| list.scroll.top + usize::from(y - first))
}

/// The Info column: what the summary line says after the fixed facts the
/// other columns show (latency included), without its leading separator.
pub fn info(r: &Record<'_>) -> String {
    let mut s = String::new();
    summary::write_info(&mut s, r);
    s.trim_start().to_string()
}

struct Cells {
    no: String,
    time: String,
    ends: String,
    api: String,
    kind: &'static str,
    corr: String,
    lat: String,
    info: String,
    style: Style,
}

fn cells(store: &Store, row: usize) -> Option<Cells> {
    let r = store.row(row)?;
    let (src, dst) = store.endpoints(r)?;
    let rel = (r.ts_ns - store.first_ts_ns()) as f64 / 1e9;
    let api = match (r.api_key(), r.api_version()) {
        (Some(k), Some(v)) => format!("{} v{v}", api_label(k)),
        (Some(k), None) => api_label(k),
        _ => "?".to_string(),
    };
    let style = if r.is_error() {
        theme::ALARM
    } else if r.has_warnings() {
        Style::new().fg(WARNING)
    } else {
        match r.kind() {
            Kind::Request => Style::new().fg(REQUEST),
            Kind::Response => Style::new().fg(RESPONSE),
        }
    };
    Some(Cells {
        no: r.packet.to_string(),
        time: format!("{rel:.6}"),
        ends: format!("{} → {}", addr(&src), addr(&dst)),
        api,
        kind: r.kind().as_str(),
        corr: r
            .correlation_id()
            .map_or_else(|| "?".into(), |c| c.to_string()),
        lat: store
            .latency_ns(row, r)
            .map_or_else(String::new, |ns| latency(ns / 1000)),
        info: store
            .with_record(row, info)
            .unwrap_or_else(|e| format!("[{e}]")),
        style,
    })
}

/// What the list shows and how.
pub struct Props {
    pub focused: bool,
    /// Message rows at most, whatever the area.
    pub rows: usize,
    /// The loader is done.
    pub done: bool,
    pub live: bool,
    /// The connection followed (`f`), as `client ↔ server`.
    pub stream: Option<String>,
}

pub fn draw(f: &mut Frame<'_>, area: Rect, list: &List, store: &Store, p: &Props) {
    let mut title = " Messages ".to_string();
    if let Some(s) = &p.stream {
        title.push_str(&format!("[connection {s}] "));
    }
    if list.follow {
        title.push_str("[newest] ");
    }
    let block = theme::pane_block(title, p.focused);
    let inner = block.inner(area);
    f.render_widget(block, area);
    let h = p.rows.min(usize::from(inner.height.saturating_sub(1)));
    let top = list.scroll.top;
    let rows: Vec<Cells> = (top..top + h)
        .filter_map(|pos| list.view.row_at(store, pos))
        .filter_map(|row| cells(store, row))
        .collect();
    let width = |get: &dyn Fn(&Cells) -> usize, head: &str| {
        rows.iter()
            .map(get)
            .max()
            .unwrap_or(0)
            .max(head.chars().count())
    };
    let no_w = width(&|c| c.no.len(), "No.");
    let time_w = width(&|c| c.time.len(), "Time");
    let ends_w = width(&|c| c.ends.chars().count(), "Source → Destination");
    let api_w = width(&|c| c.api.len(), "API");
    let kind_w = width(&|c| c.kind.len(), "Kind");
    let corr_w = width(&|c| c.corr.len(), "Corr");
    let lat_w = width(&|c| c.lat.chars().count(), "Latency");
    // Columns that go first when the terminal is narrow: endpoints, then time, then latency.
    const INFO_MIN: usize = 20;
    let total = usize::from(inner.width);
    let mut used = no_w + 1 + api_w + 1 + kind_w + 1 + corr_w + 1;
    let mut keep = |w: usize| {
        if used + w + 1 + INFO_MIN <= total {
            used += w + 1;
            true
        } else {
            false
        }
    };
    let show_lat = keep(lat_w);
    let show_time = keep(time_w);
    let show_ends = keep(ends_w);
    let line = |[no, time, ends, api, kind, corr, lat, info]: [&str; 8]| -> Vec<String> {
        let mut v = vec![fit(no, no_w, true)];
        if show_time {
            v.push(fit(time, time_w, true));
        }
        if show_ends {
            v.push(fit(ends, ends_w, false));
        }
        v.push(fit(api, api_w, false));
        v.push(fit(kind, kind_w, false));
        v.push(fit(corr, corr_w, true));
        if show_lat {
            v.push(fit(lat, lat_w, true));
        }
        v.push(info.to_string());
        v
    };
    let mut lines = vec![Line::styled(
        line([
            "No.",
            "Time",
            "Source → Destination",
            "API",
            "Kind",
            "Corr",
            "Latency",
            "Info",
        ])
        .join(" "),
        theme::HEADS,
    )];
    let sel_row = list.selected_row(store);
    for (k, c) in rows.iter().enumerate() {
        let text = line([
            &c.no, &c.time, &c.ends, &c.api, c.kind, &c.corr, &c.lat, &c.info,
        ])
        .join(" ");
        let pos = top + k;
        let mut style = c.style;
        if pos == list.scroll.sel && sel_row.is_some() {
            style = style.patch(theme::selected_style(p.focused));
        }
        let pad = usize::from(inner.width).saturating_sub(text.chars().count());
        lines.push(Line::styled(format!("{text}{}", " ".repeat(pad)), style));
    }
    if rows.is_empty() {
        let why = if !list.view.filter().is_empty() && !store.is_empty() {
            if list.view.unscanned(store) > 0 {
                "filtering…"
            } else {
                "no message matches the filter"
            }
        } else if p.done {
            "no Kafka messages in this capture"
        } else if p.live {
            "waiting for Kafka traffic…"
        } else {
            "loading…"
        };
        lines.push(Line::styled(why, Style::new().fg(DIM)));
    }
    f.render_widget(Paragraph::new(lines), inner);
}
