//! Rendering: `draw` turns an [`App`] into a frame. It reads the state and
//! never changes it; only the rows on screen are decoded, for their summaries.

use super::app::{App, Pane, TreeItem};
use super::detail::Note;
use super::layout::{areas, fit};
use super::tab::Tab;
use super::theme::{
    ABOUT, ALARM, BAR, CURSOR, DIM, ERROR, FIELD_BYTES, HEADS, KEY, REQUEST, RESPONSE, WARNING,
    pane_block, selected_style,
};
use crate::codec::Kind;
use crate::pipeline::Record;
use crate::view::escape::escape;
use crate::view::summary::{self, addr, latency};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Clear, Paragraph};

/// The hex pane's columns: `OFFSET  xx xx … xx  xx … xx  ASCII`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HexGeom {
    pub per_row: usize,
    pub off_w: usize,
}

impl HexGeom {
    pub fn new(width: u16, len: usize) -> HexGeom {
        let digits = format!("{:x}", len.saturating_sub(1)).len();
        let off_w = digits.max(4);
        let per_row = if usize::from(width) >= off_w + 2 + 16 * 3 + 1 + 1 + 16 {
            16
        } else {
            8
        };
        HexGeom { per_row, off_w }
    }

    fn gap(&self, j: usize) -> usize {
        usize::from(self.per_row > 8 && j >= 8)
    }

    /// Column of byte `j`'s first hex digit.
    pub fn byte_col(&self, j: usize) -> usize {
        self.off_w + 2 + j * 3 + self.gap(j)
    }

    /// Column of byte `j`'s ASCII character.
    pub fn ascii_col(&self, j: usize) -> usize {
        self.off_w + 2 + self.per_row * 3 + usize::from(self.per_row > 8) + 1 + j
    }

    /// Which byte of a row column `x` shows, in the hex or the ASCII part.
    pub fn byte_at(&self, x: u16) -> Option<usize> {
        let x = usize::from(x);
        (0..self.per_row).find(|&j| {
            let c = self.byte_col(j);
            (c..c + 2).contains(&x) || self.ascii_col(j) == x
        })
    }
}

/// Draws the whole screen.
pub fn draw(app: &App, f: &mut Frame<'_>) {
    let a = areas(f.area());
    match app.tab {
        Tab::Messages => {
            draw_list(app, f, a.list);
            draw_tree(app, f, a.tree);
            draw_hex(app, f, a.hex);
        }
        Tab::Analysis => super::chart::draw(app, f, &a),
    }
    draw_status(app, f, a.status);
    if app.help {
        draw_help(f, f.area());
    }
}

/// The Info column: what the summary line says after the fixed facts the
/// other columns show (latency included), without its leading separator.
pub fn info(r: &Record<'_, '_>) -> String {
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

fn cells(app: &App, row: usize) -> Option<Cells> {
    let r = app.store.row(row)?;
    let (src, dst) = app.store.endpoints(r)?;
    let rel = (r.ts_ns - app.store.first_ts_ns()) as f64 / 1e9;
    let api = match (r.api_key(), r.api_version()) {
        (Some(k), Some(v)) => format!("{} v{v}", crate::pipeline::api_label(k)),
        (Some(k), None) => crate::pipeline::api_label(k),
        _ => "?".to_string(),
    };
    let style = if r.is_error() {
        ALARM
    } else if r.has_warnings() {
        Style::new().fg(WARNING)
    } else {
        match r.kind() {
            Kind::Request => Style::new().fg(REQUEST),
            Kind::Response => Style::new().fg(RESPONSE),
        }
    };
    Some(Cells {
        no: r.frame.to_string(),
        time: format!("{rel:.6}"),
        ends: format!("{} → {}", addr(&src), addr(&dst)),
        api,
        kind: r.kind().as_str(),
        corr: r
            .correlation_id()
            .map_or_else(|| "?".into(), |c| c.to_string()),
        lat: r
            .latency_ns()
            .map_or_else(String::new, |ns| latency(ns / 1000)),
        info: app.store.with_record(row, info).unwrap_or_default(),
        style,
    })
}

fn draw_list(app: &App, f: &mut Frame<'_>, area: Rect) {
    let focused = app.focus == Pane::List;
    let mut title = " Messages ".to_string();
    if app.follow {
        title.push_str("[follow] ");
    }
    let block = pane_block(title, focused);
    let inner = block.inner(area);
    f.render_widget(block, area);
    let h = app
        .areas
        .list_rows()
        .min(usize::from(inner.height.saturating_sub(1)));
    let rows: Vec<Cells> = (app.top..app.top + h)
        .filter_map(|pos| app.view.row_at(&app.store, pos))
        .filter_map(|row| cells(app, row))
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
        HEADS,
    )];
    let sel_row = app.selected_row();
    for (k, c) in rows.iter().enumerate() {
        let text = line([
            &c.no, &c.time, &c.ends, &c.api, c.kind, &c.corr, &c.lat, &c.info,
        ])
        .join(" ");
        let pos = app.top + k;
        let mut style = c.style;
        if pos == app.sel && sel_row.is_some() {
            style = style.patch(selected_style(focused));
        }
        let pad = usize::from(inner.width).saturating_sub(text.chars().count());
        lines.push(Line::styled(format!("{text}{}", " ".repeat(pad)), style));
    }
    if rows.is_empty() {
        let why = if !app.view.filter().is_empty() && !app.store.is_empty() {
            if app.view.unscanned(&app.store) > 0 {
                "filtering…"
            } else {
                "no message matches the filter"
            }
        } else if app.done {
            "no Kafka messages in this capture"
        } else if app.live {
            "waiting for Kafka traffic…"
        } else {
            "loading…"
        };
        lines.push(Line::styled(why, Style::new().fg(DIM)));
    }
    f.render_widget(Paragraph::new(lines), inner);
}

fn draw_tree(app: &App, f: &mut Frame<'_>, area: Rect) {
    let focused = app.focus == Pane::Tree;
    let title = match &app.detail {
        Some(d) => format!(" {} ", d.title),
        None => " Detail ".to_string(),
    };
    let block = pane_block(title, focused);
    let inner = block.inner(area);
    f.render_widget(block, area);
    let Some(d) = &app.detail else { return };
    let items = app.tree_items();
    let mut lines = Vec::new();
    for item in items
        .iter()
        .skip(app.tree_top)
        .take(usize::from(inner.height))
    {
        match *item {
            TreeItem::Line(i) => {
                let Some(l) = d.lines.get(i) else { continue };
                let marker = match (l.has_children(i), app.is_collapsed(i)) {
                    (false, _) => "  ",
                    (true, true) => "▸ ",
                    (true, false) => "▾ ",
                };
                let text = format!(
                    "{}{marker}{} [0x{:04x}, {}B]",
                    "  ".repeat(l.depth),
                    l.label,
                    l.offset,
                    l.len
                );
                let mut style = if l.alarming {
                    ALARM
                } else if l.depth <= 1 {
                    Style::new().add_modifier(Modifier::BOLD)
                } else {
                    Style::new()
                };
                let selected = i == app.tree_sel;
                if selected {
                    style = style.patch(selected_style(focused));
                }
                let about = ABOUT;
                let width = text.chars().count() + 2 + l.about.chars().count();
                if selected && !l.about.is_empty() && width > usize::from(inner.width) {
                    // Too long for one row: the description goes on the row below, under the label.
                    lines.push(Line::styled(text, style));
                    lines.push(Line::styled(
                        format!("{}    {}", "  ".repeat(l.depth), l.about),
                        about,
                    ));
                } else if selected && !l.about.is_empty() {
                    lines.push(Line::from(vec![
                        Span::styled(text, style),
                        Span::styled(format!("  {}", l.about), about),
                    ]));
                } else {
                    lines.push(Line::styled(text, style));
                }
            }
            TreeItem::Note(n) => {
                let line = match d.notes.get(n) {
                    Some(Note::Error(t)) => Line::styled(format!("!! {t}"), ALARM),
                    Some(Note::Warning(t)) => {
                        Line::styled(format!("! {t}"), Style::new().fg(WARNING))
                    }
                    Some(Note::Info(t)) => Line::styled(format!("· {t}"), Style::new().fg(DIM)),
                    None => continue,
                };
                lines.push(line);
            }
        }
    }
    f.render_widget(Paragraph::new(lines), inner);
}

fn draw_hex(app: &App, f: &mut Frame<'_>, area: Rect) {
    let focused = app.focus == Pane::Hex;
    let sel = app
        .detail
        .as_ref()
        .and_then(|d| d.lines.get(app.tree_sel))
        .map(|l| (l.offset, l.len));
    let title = match (&app.detail, sel) {
        (Some(d), Some((off, len))) => format!(
            " Bytes: {} stored; field [0x{off:04x}, {len}B], cursor 0x{:04x} ",
            d.bytes.len(),
            app.hex_cursor
        ),
        _ => " Bytes ".to_string(),
    };
    let block = pane_block(title, focused);
    let inner = block.inner(area);
    f.render_widget(block, area);
    let Some(d) = &app.detail else { return };
    let g = HexGeom::new(area.width, d.bytes.len());
    let in_field = |b: usize| sel.is_some_and(|(off, len)| b >= off && b < off + len);
    let cursor = CURSOR;
    let mut lines = Vec::new();
    for r in app.hex_top..app.hex_top + usize::from(inner.height) {
        let start = r * g.per_row;
        let Some(chunk) = d.bytes.get(start..) else {
            break;
        };
        if chunk.is_empty() {
            break;
        }
        let chunk = chunk.get(..g.per_row).unwrap_or(chunk);
        let mut spans = vec![Span::styled(
            format!("{start:0w$x}  ", w = g.off_w),
            Style::new().fg(DIM),
        )];
        let style_of = |b: usize| {
            if focused && b == app.hex_cursor {
                cursor
            } else if in_field(b) {
                FIELD_BYTES
            } else {
                Style::new()
            }
        };
        for j in 0..g.per_row {
            if j == 8 && g.per_row > 8 {
                spans.push(Span::raw(" "));
            }
            match chunk.get(j) {
                Some(byte) => spans.push(Span::styled(format!("{byte:02x}"), style_of(start + j))),
                None => spans.push(Span::raw("  ")),
            }
            spans.push(Span::raw(" "));
        }
        spans.push(Span::raw(" "));
        for (j, byte) in chunk.iter().enumerate() {
            // Only printable ASCII reaches the terminal; everything else is a dot.
            let c = if (0x20..0x7f).contains(byte) {
                char::from(*byte)
            } else {
                '.'
            };
            spans.push(Span::styled(c.to_string(), style_of(start + j)));
        }
        lines.push(Line::from(spans));
    }
    f.render_widget(Paragraph::new(lines), inner);
}

fn draw_status(app: &App, f: &mut Frame<'_>, area: Rect) {
    let bar = BAR;
    if let Some(text) = &app.input {
        let mut spans = vec![
            Span::styled(" filter: /", bar.add_modifier(Modifier::BOLD)),
            Span::styled(format!("{}█", escape(text)), bar),
        ];
        if let Some((n, _)) = &app.notice {
            spans.push(Span::styled(format!("  {n}"), bar.fg(ERROR)));
        } else {
            spans.push(Span::styled(
                "  (Enter apply, Esc cancel; e.g. vote response error corr=3)",
                bar.fg(Color::Gray),
            ));
        }
        f.render_widget(Paragraph::new(Line::from(spans)).style(bar), area);
        return;
    }
    let sep = Span::styled(" │ ", bar.fg(Color::Gray));
    let head = match app.tab {
        Tab::Messages => format!(" {}/{} msgs", app.shown(), app.store.len()),
        Tab::Analysis => format!(
            " analysis: {} epochs, {} coordinator keys",
            app.elections.len(),
            app.coordinators.len()
        ),
    };
    let mut spans = vec![Span::styled(head, bar.add_modifier(Modifier::BOLD))];
    let unscanned = app.view.unscanned(&app.store);
    if unscanned > 0 {
        spans.push(Span::styled(
            format!(
                " (filtering {:.0}%)",
                app.view.scanned_fraction(&app.store) * 100.0
            ),
            bar.fg(WARNING),
        ));
    }
    spans.push(sep.clone());
    let load = match (app.done, app.progress.fraction, &app.load_error) {
        (true, _, Some(e)) => Span::styled(format!("stopped: {e}"), bar.fg(ERROR)),
        (true, _, None) if app.live => {
            Span::styled(format!("stopped, {} packets", app.progress.packets), bar)
        }
        (true, _, None) => Span::styled(format!("loaded {} packets", app.progress.packets), bar),
        (false, Some(fr), _) => Span::styled(
            format!(
                "loading {:.0}% ({} packets)",
                fr * 100.0,
                app.progress.packets
            ),
            bar.fg(WARNING),
        ),
        (false, None, _) if app.live => {
            Span::styled(format!("capturing, {} packets", app.progress.packets), bar)
        }
        (false, None, _) => Span::styled(
            format!("loading… ({} packets)", app.progress.packets),
            bar.fg(WARNING),
        ),
    };
    spans.push(load);
    if let Some(l) = app.progress.live {
        let drops = u64::from(l.dropped_by_kernel) + u64::from(l.dropped_by_interface);
        spans.push(sep.clone());
        spans.push(Span::styled(
            format!("{drops} dropped"),
            if drops > 0 { bar.fg(ERROR) } else { bar },
        ));
    }
    if !app.view.filter().is_empty() {
        spans.push(sep.clone());
        spans.push(Span::styled(
            format!("filter: {}", escape(app.view.filter().as_str())),
            bar.fg(Color::LightCyan),
        ));
    }
    spans.push(sep.clone());
    spans.push(Span::styled(escape(&app.label).into_owned(), bar));
    if let Some((n, err)) = &app.notice {
        spans.push(sep.clone());
        spans.push(Span::styled(
            n.clone(),
            if *err { bar.fg(ERROR) } else { bar },
        ));
    }
    spans.push(sep);
    if app.tab == Tab::Analysis {
        spans.push(Span::styled("t messages  ", bar.fg(Color::Gray)));
    }
    spans.push(Span::styled("? help", bar.fg(Color::Gray)));
    f.render_widget(Paragraph::new(Line::from(spans)).style(bar), area);
}

const HELP: &[(&str, &str)] = &[
    ("↑ ↓  j k", "move in the focused pane"),
    ("PgUp PgDn", "move a page"),
    ("g  G", "first / last"),
    ("Tab  Shift-Tab", "next / previous pane"),
    ("Enter  Space", "expand or collapse a tree node"),
    ("← →  h l", "tree: collapse / expand; hex: move a byte"),
    ("/", "filter: API name, request, response, corr=N,"),
    ("", "error, warn, version_source=inferred, text"),
    ("r", "jump between a request and its response"),
    ("t  1  2", "tab: messages / analysis (elections, coords)"),
    ("", "analysis: Tab other table; Enter lists its"),
    ("", "first message (clears a filter hiding it)"),
    ("f", "follow the newest message"),
    ("Esc", "close a prompt or a message"),
    ("mouse", "click selects a row, field or byte"),
    ("?", "this help"),
    ("q", "quit"),
];

fn draw_help(f: &mut Frame<'_>, full: Rect) {
    let w = 64.min(full.width);
    let h = (HELP.len() as u16 + 4).min(full.height);
    let area = Rect::new(
        full.x + (full.width - w) / 2,
        full.y + (full.height - h) / 2,
        w,
        h,
    );
    let mut lines: Vec<Line<'_>> = HELP
        .iter()
        .map(|(k, what)| {
            Line::from(vec![
                Span::styled(format!(" {k:<15}"), KEY),
                Span::raw(*what),
            ])
        })
        .collect();
    lines.push(Line::raw(""));
    lines.push(Line::styled(
        " any key closes this help",
        Style::new().fg(DIM),
    ));
    f.render_widget(Clear, area);
    f.render_widget(
        Paragraph::new(lines).block(
            Block::bordered()
                .title(" kwire tui: keys ")
                .border_style(KEY),
        ),
        area,
    );
}
