//! The tree pane: the selected message's decoded fields, which of them are
//! collapsed, the selected line, the keys that move and fold it, and its
//! rendering.

use super::detail::{Detail, Note};
use super::scroll::Scroll;
use super::theme::{self, DIM, WARNING};
use super::values::{self, Form};
use crossterm::event::KeyCode;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use std::collections::HashSet;

/// What the tree pane lists: tree lines, then the notes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TreeItem {
    Line(usize),
    Note(usize),
}

/// The tree pane's state. It outlives the message shown, so that a field stays
/// folded, and selected, from one message to the next.
#[derive(Debug, Default)]
pub struct Tree {
    /// Tree paths the user collapsed (everything else is expanded).
    pub collapsed: HashSet<String>,
    /// `sel` is the selected tree line; `top` the first item on screen.
    pub scroll: Scroll,
    /// How records' keys and values are shown (`v` switches).
    pub values: Form,
}

impl Tree {
    /// The items shown for `d`: its expanded lines, then its notes.
    pub fn items(&self, d: Option<&Detail>) -> Vec<TreeItem> {
        let Some(d) = d else {
            return Vec::new();
        };
        let mut items = Vec::with_capacity(d.lines.len() + d.notes.len());
        let mut i = 0;
        while let Some(l) = d.lines.get(i) {
            items.push(TreeItem::Line(i));
            i = if l.has_children(i) && self.collapsed.contains(&l.path) {
                l.next
            } else {
                i + 1
            };
        }
        items.extend((0..d.notes.len()).map(TreeItem::Note));
        items
    }

    /// Whether line `i` of `d` has children and they are hidden.
    pub fn is_collapsed(&self, d: Option<&Detail>, i: usize) -> bool {
        d.and_then(|d| {
            d.lines
                .get(i)
                .map(|l| l.has_children(i) && self.collapsed.contains(&l.path))
        })
        .unwrap_or(false)
    }

    /// The selected line's bytes: offset and length.
    pub fn field(&self, d: Option<&Detail>) -> Option<(usize, usize)> {
        let l = d?.lines.get(self.scroll.sel)?;
        Some((l.offset, l.len))
    }

    /// Keeps the selected line on screen in `rows` rows.
    pub fn keep_in_view(&mut self, d: Option<&Detail>, rows: usize) {
        // One row is kept below the selection for its description, when that wraps.
        // So are the selected value's pretty-printed JSON rows, as many as fit.
        let extra = self.pretty_rows(d).min(rows.saturating_sub(3));
        let h = rows.saturating_sub(1 + extra).max(1);
        let items = self.items(d);
        let at = items
            .iter()
            .position(|&t| t == TreeItem::Line(self.scroll.sel))
            .unwrap_or(0);
        self.scroll.show(at, h);
        self.scroll.fill(items.len(), h);
    }

    /// Expands every ancestor of line `i`, so it is shown.
    pub fn expose(&mut self, d: Option<&Detail>, i: usize) {
        if let Some(d) = d {
            for a in d.ancestors(i) {
                if let Some(l) = d.lines.get(a) {
                    self.collapsed.remove(&l.path);
                }
            }
        }
    }

    /// Moves the selection by `delta` visible lines; false when there is none.
    pub fn move_by(&mut self, d: Option<&Detail>, delta: isize) -> bool {
        let lines: Vec<usize> = self
            .items(d)
            .into_iter()
            .filter_map(|t| match t {
                TreeItem::Line(i) => Some(i),
                TreeItem::Note(_) => None,
            })
            .collect();
        if lines.is_empty() {
            return false;
        }
        let at = lines
            .iter()
            .position(|&i| i == self.scroll.sel)
            .unwrap_or(0);
        let to = at.saturating_add_signed(delta).min(lines.len() - 1);
        self.scroll.sel = lines.get(to).copied().unwrap_or(0);
        true
    }

    /// Expands or collapses the selected line.
    pub fn toggle(&mut self, d: Option<&Detail>) {
        let sel = self.scroll.sel;
        let Some(l) = d.and_then(|d| d.lines.get(sel)) else {
            return;
        };
        if !l.has_children(sel) {
            return;
        }
        if !self.collapsed.remove(&l.path) {
            self.collapsed.insert(l.path.clone());
        }
    }

    /// Left (`collapse`) or Right on the selected line: fold or unfold it, or
    /// step to its parent or first child. Returns whether the selection moved.
    pub fn set_collapsed(&mut self, d: Option<&Detail>, collapse: bool) -> bool {
        let sel = self.scroll.sel;
        let Some(l) = d.and_then(|d| d.lines.get(sel)) else {
            return false;
        };
        let has = l.has_children(sel);
        let collapsed = self.collapsed.contains(&l.path);
        match (collapse, has, collapsed) {
            (true, true, false) => {
                self.collapsed.insert(l.path.clone());
                false
            }
            (true, _, _) => {
                // Already closed, or a leaf: go to the parent.
                let parent = d.and_then(|d| d.ancestors(sel).last().copied());
                match parent {
                    Some(p) => {
                        self.scroll.sel = p;
                        true
                    }
                    None => false,
                }
            }
            (false, true, true) => {
                self.collapsed.remove(&l.path);
                false
            }
            (false, true, false) => self.move_by(d, 1),
            (false, false, _) => false,
        }
    }

    /// The line under screen row `y` of a tree drawn in `area`.
    pub fn line_at(&self, d: Option<&Detail>, area: Rect, y: u16) -> Option<usize> {
        let first = area.y + 1;
        if y < first {
            return None;
        }
        let mut at = self.scroll.top + usize::from(y - first);
        let items = self.items(d);
        // Rows under the selected value hold its pretty-printed JSON.
        let sel = items
            .iter()
            .position(|&t| t == TreeItem::Line(self.scroll.sel));
        if let Some(s) = sel.filter(|&s| s >= self.scroll.top && at > s) {
            let extra = self.pretty_rows(d);
            if at <= s + extra {
                return None;
            }
            at -= extra;
        }
        match items.get(at).copied() {
            Some(TreeItem::Line(i)) => Some(i),
            _ => None,
        }
    }
}

impl Tree {
    /// Rows of pretty-printed JSON drawn under the selected line.
    pub fn pretty_rows(&self, d: Option<&Detail>) -> usize {
        d.and_then(|d| d.lines.get(self.scroll.sel))
            .and_then(|l| l.raw.as_deref())
            .map(|b| values::show(b, self.values).pretty.len())
            .filter(|&n| n > 1)
            .unwrap_or(0)
    }
}

/// The column of line `i`'s fold marker in a tree drawn in `area`.
pub fn marker_x(d: Option<&Detail>, area: Rect, i: usize) -> u16 {
    let depth = d.and_then(|d| d.lines.get(i)).map_or(0, |l| l.depth);
    area.x + 2 * depth as u16
}

/// What a key does in the tree.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    Move(isize),
    Toggle,
    /// Left (true) or Right (false).
    Collapse(bool),
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
        KeyCode::Enter | KeyCode::Char(' ') => Action::Toggle,
        KeyCode::Left | KeyCode::Char('h') => Action::Collapse(true),
        KeyCode::Right | KeyCode::Char('l') => Action::Collapse(false),
        _ => return None,
    })
}

pub fn draw(f: &mut Frame<'_>, area: Rect, d: Option<&Detail>, tree: &Tree, focused: bool) {
    let title = match d {
        Some(d) => format!(" {} ", d.title),
        None => " Detail ".to_string(),
    };
    let block = theme::pane_block(title, focused);
    let inner = block.inner(area);
    f.render_widget(block, area);
    let Some(det) = d else { return };
    let items = tree.items(d);
    let mut lines = Vec::new();
    for item in items
        .iter()
        .skip(tree.scroll.top)
        .take(usize::from(inner.height))
    {
        match *item {
            TreeItem::Line(i) => {
                let Some(l) = det.lines.get(i) else { continue };
                let marker = match (l.has_children(i), tree.is_collapsed(d, i)) {
                    (false, _) => "  ",
                    (true, true) => "▸ ",
                    (true, false) => "▾ ",
                };
                let shown = l.raw.as_deref().map(|b| values::show(b, tree.values));
                let label = match (&shown, &l.raw) {
                    (Some(v), Some(b)) => values::label_of(&l.label, v, b.len()),
                    _ => l.label.clone(),
                };
                let text = format!(
                    "{}{marker}{label} [0x{:04x}, {}B]",
                    "  ".repeat(l.depth),
                    l.offset,
                    l.len
                );
                let mut style = if l.alarming {
                    theme::ALARM
                } else if l.depth <= 1 {
                    Style::new().add_modifier(Modifier::BOLD)
                } else {
                    Style::new()
                };
                let selected = i == tree.scroll.sel;
                if selected {
                    style = style.patch(theme::selected_style(focused));
                }
                let width = text.chars().count() + 2 + l.about.chars().count();
                if selected && !l.about.is_empty() && width > usize::from(inner.width) {
                    // Too long for one row: the description goes on the row below, under the label.
                    lines.push(Line::styled(text, style));
                    lines.push(Line::styled(
                        format!("{}    {}", "  ".repeat(l.depth), l.about),
                        theme::ABOUT,
                    ));
                } else if selected && !l.about.is_empty() {
                    lines.push(Line::from(vec![
                        Span::styled(text, style),
                        Span::styled(format!("  {}", l.about), theme::ABOUT),
                    ]));
                } else {
                    lines.push(Line::styled(text, style));
                }
                // The selected value's JSON, pretty-printed under it.
                if let Some(v) = shown.filter(|v| selected && v.pretty.len() > 1) {
                    let pad = "  ".repeat(l.depth + 2);
                    lines.extend(
                        v.pretty
                            .into_iter()
                            .map(|p| Line::styled(format!("{pad}{p}"), theme::ABOUT)),
                    );
                }
            }
            TreeItem::Note(n) => {
                let line = match det.notes.get(n) {
                    Some(Note::Error(t)) => Line::styled(format!("!! {t}"), theme::ALARM),
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
