//! Rendering: `draw` turns an [`App`] into a frame. Each pane's module draws
//! the state it owns; this one lays them out and draws the status bar and
//! the help. It reads the state and never changes it.

pub use super::hex::HexGeom;

use super::app::{App, Pane, Tab};
use super::layout::areas;
use super::theme::{BAR, DIM, ERROR, KEY, WARNING};
use super::{chart, hex, list, tables, tree};
use crate::view::escape::escape;
use crate::view::summary::addr;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Clear, Paragraph};

/// Draws the whole screen.
pub fn draw(app: &App, f: &mut Frame<'_>) {
    let a = areas(f.area());
    match app.tab() {
        Tab::Messages => {
            let focus = app.focus();
            let props = list::Props {
                focused: focus == Pane::List,
                rows: app.areas().list_rows(),
                done: app.done(),
                live: app.live(),
                stream: app
                    .stream()
                    .map(|(a, b)| format!("{} ↔ {}", addr(&a), addr(&b))),
            };
            list::draw(f, a.list, app.list(), app.store(), &props);
            tree::draw(f, a.tree, app.detail(), app.tree(), focus == Pane::Tree);
            hex::draw(
                f,
                a.hex,
                app.detail(),
                app.hex(),
                app.field(),
                focus == Pane::Hex,
            );
        }
        Tab::Analysis => {
            let t = app.tables();
            chart::draw(f, a.chart, t, app.loading());
            tables::draw_elections(f, a.elections, t, app.loading());
            tables::draw_coordinators(f, a.coordinators, t, app.loading());
        }
    }
    draw_status(app, f, a.status);
    if app.help() {
        draw_help(f, f.area());
    }
}

fn draw_status(app: &App, f: &mut Frame<'_>, area: Rect) {
    let bar = BAR;
    if let Some(text) = app.export_input() {
        let mut spans = vec![
            Span::styled(
                " write shown packets to: ",
                bar.add_modifier(Modifier::BOLD),
            ),
            Span::styled(format!("{}█", escape(text)), bar),
        ];
        match app.notice() {
            Some((n, _)) => spans.push(Span::styled(format!("  {n}"), bar.fg(ERROR))),
            None => spans.push(Span::styled(
                format!(
                    "  (Enter write {} messages as pcap, Esc cancel)",
                    app.shown()
                ),
                bar.fg(Color::Gray),
            )),
        }
        f.render_widget(Paragraph::new(Line::from(spans)).style(bar), area);
        return;
    }
    if let Some(text) = app.input() {
        let mut spans = vec![
            Span::styled(" filter: /", bar.add_modifier(Modifier::BOLD)),
            Span::styled(format!("{}█", escape(text)), bar),
        ];
        if let Some((n, _)) = app.notice() {
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
    let head = match app.tab() {
        Tab::Messages => format!(" {}/{} msgs", app.shown(), app.store().len()),
        Tab::Analysis => format!(
            " analysis: {} epochs, {} coordinator keys",
            app.elections().len(),
            app.coordinators().len()
        ),
    };
    let mut spans = vec![Span::styled(head, bar.add_modifier(Modifier::BOLD))];
    let unscanned = app.view().unscanned(app.store());
    if unscanned > 0 {
        spans.push(Span::styled(
            format!(
                " (filtering {:.0}%)",
                app.view().scanned_fraction(app.store()) * 100.0
            ),
            bar.fg(WARNING),
        ));
    }
    spans.push(sep.clone());
    let progress = app.progress();
    let load = match (app.done(), progress.fraction, app.load_error()) {
        (true, _, Some(e)) => Span::styled(format!("stopped: {e}"), bar.fg(ERROR)),
        (true, _, None) if app.live() => {
            Span::styled(format!("stopped, {} packets", progress.packets), bar)
        }
        (true, _, None) => Span::styled(format!("loaded {} packets", progress.packets), bar),
        (false, Some(fr), _) => Span::styled(
            format!("loading {:.0}% ({} packets)", fr * 100.0, progress.packets),
            bar.fg(WARNING),
        ),
        (false, None, _) if app.live() => {
            Span::styled(format!("capturing, {} packets", progress.packets), bar)
        }
        (false, None, _) => Span::styled(
            format!("loading… ({} packets)", progress.packets),
            bar.fg(WARNING),
        ),
    };
    spans.push(load);
    if app.analysing() {
        spans.push(Span::styled(", analysing", bar.fg(WARNING)));
    }
    if let Some(e) = app.analysis_error() {
        spans.push(sep.clone());
        spans.push(Span::styled(escape(e), bar.fg(ERROR)));
    }
    // Once loaded: how many TLS connections were decrypted.
    if let Some(t) = app.stats().map(|s| &s.tls).filter(|t| t.connections > 0) {
        let decrypted = t
            .outcomes
            .get(&crate::tls::Outcome::Decrypted)
            .copied()
            .unwrap_or(0);
        spans.push(sep.clone());
        spans.push(Span::styled(
            format!("TLS: {decrypted}/{} connections decrypted", t.connections),
            if decrypted < t.connections {
                bar.fg(WARNING)
            } else {
                bar
            },
        ));
    }
    if let Some(l) = progress.live {
        let drops = u64::from(l.dropped_by_kernel) + u64::from(l.dropped_by_interface);
        spans.push(sep.clone());
        spans.push(Span::styled(
            format!("{drops} dropped"),
            if drops > 0 { bar.fg(ERROR) } else { bar },
        ));
    }
    if app.view().conn().is_some() {
        spans.push(sep.clone());
        spans.push(Span::styled(
            "following a connection (f: all)",
            bar.fg(Color::LightCyan),
        ));
    }
    if !app.view().filter().is_empty() {
        spans.push(sep.clone());
        spans.push(Span::styled(
            format!("filter: {}", escape(app.view().filter().as_str())),
            bar.fg(Color::LightCyan),
        ));
    }
    // A notice says what a key just did: before the label, which can be long.
    if let Some((n, err)) = app.notice() {
        spans.push(sep.clone());
        spans.push(Span::styled(
            n.clone(),
            if *err { bar.fg(ERROR) } else { bar },
        ));
    }
    spans.push(sep.clone());
    spans.push(Span::styled(escape(app.label()).into_owned(), bar));
    spans.push(sep);
    if app.tab() == Tab::Analysis {
        spans.push(Span::styled("t messages  ", bar.fg(Color::Gray)));
    }
    spans.push(Span::styled("? help", bar.fg(Color::Gray)));
    f.render_widget(Paragraph::new(Line::from(spans)).style(bar), area);
}

const HELP: &[(&str, &str)] = &[
    ("↑ ↓  j k", "move in the focused pane"),
    ("PgUp PgDn  g G", "move a page; first / last"),
    ("Tab  Shift-Tab", "next / previous pane"),
    ("Enter  Space", "expand or collapse a tree node"),
    ("← →  h l", "tree: collapse / expand; hex: move a byte"),
    ("/", "filter: API name, request, response, corr=N,"),
    ("", "error, warn, version_source=inferred, text"),
    ("r", "jump between a request and its response"),
    ("f", "only the selected message's connection;"),
    ("", "f again: every connection"),
    ("F", "keep the newest message selected"),
    ("w", "write the shown messages' packets to pcap"),
    ("c", "copy the tree's field value, else the message"),
    ("", "as NDJSON (terminal clipboard, OSC 52)"),
    ("v", "record keys, values: auto/text/JSON/hex"),
    ("t  1  2", "tab: messages / analysis (elections, coords)"),
    ("", "analysis: Tab other table; Enter lists its"),
    ("", "first message (clears a filter hiding it)"),
    ("Esc", "close a prompt or a message"),
    ("mouse", "click selects a row, field or byte"),
    ("?  q", "this help / quit"),
];

fn draw_help(f: &mut Frame<'_>, full: Rect) {
    let w = 64.min(full.width);
    let h = (HELP.len() as u16 + 3).min(full.height);
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

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing)]
mod tests {
    use super::super::loader::{Input, Update, load_all};
    use super::*;
    use crate::pipeline::Config;
    use ratatui::Terminal;
    use ratatui::backend::TestBackend;

    fn screen(app: &App) -> String {
        let mut t = Terminal::new(TestBackend::new(120, 40)).unwrap();
        t.draw(|f| draw(app, f)).unwrap();
        let b = t.backend().buffer();
        (0..b.area.height)
            .map(|y| (0..b.area.width).map(|x| b[(x, y)].symbol()).collect::<String>())
            .collect::<Vec<_>>()
            .join("\n")
    }

    #[test]
    fn the_analysis_tab_says_it_is_analysing_until_the_analysis_comes() {
        let path = "captures/kraft-reelection.pcap";
        let mut app = App::new(path, false);
        app.resize(Rect::new(0, 0, 120, 40));
        let mut updates = load_all(Input::file(path).unwrap(), Config::default());
        let last = updates.pop().unwrap();
        assert!(matches!(last, Update::Analysis(_)));
        for u in updates {
            app.update(u);
        }
        app.on_key(crossterm::event::KeyEvent::from(
            crossterm::event::KeyCode::Char('t'),
        ));
        assert_eq!(app.tab(), Tab::Analysis);
        let s = screen(&app);
        assert!(s.contains(" packets, analysing │"), "{s}");
        assert!(s.contains("analysing…") && !s.contains("epochs 1"), "{s}");
        app.update(last);
        let s = screen(&app);
        assert!(!s.contains("analysing"), "{s}");
        assert!(s.contains("4 epochs"), "{s}");
    }

    #[test]
    fn the_status_bar_says_why_there_is_no_analysis() {
        let mut app = App::new("x", false);
        app.update(Update::NoAnalysis("no analysis: gone".into()));
        assert!(screen(&app).contains("no analysis: gone"));
        app.on_key(crossterm::event::KeyEvent::from(
            crossterm::event::KeyCode::Char('t'),
        ));
        assert!(screen(&app).contains("no analysis (see the status bar)"));
    }
}
