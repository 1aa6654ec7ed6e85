//! The TUI's state and how keys and the mouse change it. Nothing here draws:
//! `ui::draw` reads an `App` and renders it.

use super::detail::Detail;
use super::layout::{self, Areas};
use super::loader::{Progress, Update};
use super::store::Store;
use super::tab::{self, CoordinatorRow, ElectionRow, Tab, Table, Target};
use super::ui;
use crate::analysis::Analysis;
use crate::codec::Kind;
use crate::pipeline::RunStats;
use crate::view::filter::Filter;
use crate::view::summary;
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers, MouseButton, MouseEvent, MouseEventKind};
use ratatui::layout::Rect;
use std::collections::HashSet;
use std::time::{Duration, Instant};

/// Which pane has the keyboard.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pane {
    List,
    Tree,
    Hex,
}

/// The messages the filter lets through.
#[derive(Debug, Default)]
pub struct View {
    filter: Filter,
    /// Matching rows in order; `None` when the filter is empty (every row matches).
    rows: Option<Vec<u32>>,
    /// Rows of the store looked at so far.
    scanned: usize,
}

impl View {
    fn new(filter: Filter) -> View {
        let rows = (!filter.is_empty()).then(Vec::new);
        View {
            filter,
            rows,
            scanned: 0,
        }
    }

    pub fn filter(&self) -> &Filter {
        &self.filter
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
            None => (pos < store.len()).then_some(pos),
            Some(v) => v.get(pos).map(|&r| r as usize),
        }
    }

    /// Where row `row` is shown, if it is.
    pub fn position(&self, store: &Store, row: usize) -> Option<usize> {
        match &self.rows {
            None => (row < store.len()).then_some(row),
            Some(v) => v.binary_search(&(row as u32)).ok(),
        }
    }

    /// The first position showing `row` or a later row.
    fn position_from(&self, row: usize) -> usize {
        match &self.rows {
            None => row,
            Some(v) => v.partition_point(|&r| (r as usize) < row),
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

    /// Filters up to `max` more rows.
    fn scan(&mut self, store: &Store, max: usize) {
        let Some(rows) = &mut self.rows else {
            return;
        };
        let end = store.len().min(self.scanned.saturating_add(max));
        for i in self.scanned..end {
            let hit = store
                .with_record(i, |r| self.filter.matches(r, &mut || summary::line(r)))
                .unwrap_or(false);
            if hit {
                rows.push(i as u32);
            }
        }
        self.scanned = end;
    }
}

/// What the tree pane lists: tree lines, then the notes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TreeItem {
    Line(usize),
    Note(usize),
}

/// The whole state of the TUI.
pub struct App {
    pub store: Store,
    /// The capture source, as the status bar names it.
    pub label: String,
    pub live: bool,
    pub progress: Progress,
    pub done: bool,
    pub load_error: Option<String>,
    pub stats: Option<Box<RunStats>>,
    pub view: View,
    /// Selected position in the view.
    pub sel: usize,
    /// First view position on screen.
    pub top: usize,
    /// Keep the last message selected as more arrive.
    pub follow: bool,
    pub focus: Pane,
    /// The selected message, decoded.
    pub detail: Option<Detail>,
    /// Tree paths the user collapsed (everything else is expanded).
    pub collapsed: HashSet<String>,
    /// Selected tree line.
    pub tree_sel: usize,
    /// First tree item on screen.
    pub tree_top: usize,
    /// Selected byte in the hex pane.
    pub hex_cursor: usize,
    /// First hex row on screen.
    pub hex_top: usize,
    /// The filter being typed after `/`.
    pub input: Option<String>,
    /// A one-off message for the status bar; `true` for an error.
    pub notice: Option<(String, bool)>,
    pub help: bool,
    pub quit: bool,
    pub areas: Areas,
    /// The tab shown: the message panes or the analysis.
    pub tab: Tab,
    /// The analysis tab's table with the keyboard.
    pub table: Table,
    /// The latest analysis the loader sent, and its tables' rows.
    pub analysis: Analysis,
    pub elections: Vec<ElectionRow>,
    pub coordinators: Vec<CoordinatorRow>,
    /// Selected and first shown row of each table.
    pub election_sel: usize,
    pub election_top: usize,
    pub coordinator_sel: usize,
    pub coordinator_top: usize,
    /// The row to select again once the filter has looked that far.
    anchor: Option<usize>,
    /// The selected tree path while no message is shown, to select it again.
    field_path: Option<String>,
}

impl App {
    pub fn new(label: &str, live: bool) -> App {
        App {
            store: Store::default(),
            label: label.to_string(),
            live,
            progress: Progress::default(),
            done: false,
            load_error: None,
            stats: None,
            view: View::default(),
            sel: 0,
            top: 0,
            follow: live,
            focus: Pane::List,
            detail: None,
            collapsed: HashSet::new(),
            tree_sel: 0,
            tree_top: 0,
            hex_cursor: 0,
            hex_top: 0,
            input: None,
            notice: None,
            help: false,
            quit: false,
            areas: layout::areas(Rect::new(0, 0, 80, 24)),
            tab: Tab::Messages,
            table: Table::Elections,
            analysis: Analysis::default(),
            elections: Vec::new(),
            coordinators: Vec::new(),
            election_sel: 0,
            election_top: 0,
            coordinator_sel: 0,
            coordinator_top: 0,
            anchor: None,
            field_path: None,
        }
    }

    /// Messages shown.
    pub fn shown(&self) -> usize {
        self.view.len(&self.store)
    }

    /// The selected message's store row.
    pub fn selected_row(&self) -> Option<usize> {
        self.view.row_at(&self.store, self.sel)
    }

    /// Takes what the loader sent.
    pub fn update(&mut self, u: Update) {
        match u {
            Update::Batch(b, p) => {
                self.store.push_batch(b);
                self.progress = p;
            }
            Update::Analysis(a) => {
                self.elections = tab::election_rows(&a);
                self.coordinators = tab::coordinator_rows(&a);
                self.analysis = *a;
                self.scroll_tables();
                return;
            }
            Update::Done {
                progress,
                stats,
                error,
            } => {
                self.progress = progress;
                self.stats = Some(stats);
                self.load_error = error;
                self.done = true;
            }
        }
        self.grown();
    }

    /// After more rows arrived or the filter let more through.
    fn grown(&mut self) {
        if let Some(row) = self.anchor {
            if self.view.unscanned(&self.store) == 0 || self.view.scanned > row {
                self.anchor = None;
                let pos = self.view.position_from(row);
                self.select(pos);
                return;
            }
        }
        let n = self.shown();
        if self.follow && n > 0 {
            self.select(n - 1);
        } else if self.detail.is_none() && n > 0 {
            self.select(self.sel);
        }
    }

    /// Filters more rows, for about `budget`; returns whether any were left.
    pub fn scan_filter(&mut self, budget: Duration) -> bool {
        if self.view.unscanned(&self.store) == 0 {
            return false;
        }
        let start = Instant::now();
        while self.view.unscanned(&self.store) > 0 && start.elapsed() < budget {
            self.view.scan(&self.store, 2048);
        }
        self.grown();
        true
    }

    /// Filters every row not yet looked at.
    pub fn settle(&mut self) {
        self.view.scan(&self.store, usize::MAX);
        self.grown();
    }

    /// The terminal has this size now.
    pub fn resize(&mut self, area: Rect) {
        self.areas = layout::areas(area);
        self.scroll_list();
        self.scroll_tree();
        self.scroll_hex();
        self.scroll_tables();
    }

    /// Selects view position `pos` (clamped) and decodes its message.
    pub fn select(&mut self, pos: usize) {
        let n = self.shown();
        self.sel = pos.min(n.saturating_sub(1));
        self.scroll_list();
        let row = self.selected_row();
        if row == self.detail.as_ref().map(|d| d.row) {
            return;
        }
        let old_path = self
            .detail
            .as_ref()
            .and_then(|d| d.lines.get(self.tree_sel))
            .map(|l| l.path.clone())
            .or_else(|| self.field_path.take());
        self.detail = row.and_then(|r| Detail::build(&self.store, r));
        if self.detail.is_none() {
            self.field_path = old_path.clone();
        }
        // Keep the same field selected when the new message has it, as Wireshark does.
        self.tree_sel = match (&self.detail, old_path) {
            (Some(d), Some(p)) => d.lines.iter().position(|l| l.path == p).unwrap_or(0),
            _ => 0,
        };
        self.tree_top = 0;
        self.hex_top = 0;
        self.expose(self.tree_sel);
        self.field_selected();
    }

    fn scroll_list(&mut self) {
        let h = self.areas.list_rows().max(1);
        if self.sel < self.top {
            self.top = self.sel;
        } else if self.sel >= self.top + h {
            self.top = self.sel + 1 - h;
        }
        let n = self.shown();
        // No empty space below the last row when there are enough rows to fill the pane.
        if n >= h && self.top + h > n {
            self.top = n - h;
        }
    }

    /// The tree pane's items: the expanded lines, then the notes.
    pub fn tree_items(&self) -> Vec<TreeItem> {
        let Some(d) = &self.detail else {
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

    /// Whether tree line `i` has children and they are hidden.
    pub fn is_collapsed(&self, i: usize) -> bool {
        self.detail
            .as_ref()
            .and_then(|d| {
                d.lines
                    .get(i)
                    .map(|l| l.has_children(i) && self.collapsed.contains(&l.path))
            })
            .unwrap_or(false)
    }

    fn scroll_tree(&mut self) {
        // One row is kept below the selection for its description, when that wraps.
        let h = self.areas.tree_rows().saturating_sub(1).max(1);
        let items = self.tree_items();
        let at = items
            .iter()
            .position(|&t| t == TreeItem::Line(self.tree_sel))
            .unwrap_or(0);
        if at < self.tree_top {
            self.tree_top = at;
        } else if at >= self.tree_top + h {
            self.tree_top = at + 1 - h;
        }
        if items.len() >= h && self.tree_top + h > items.len() {
            self.tree_top = items.len() - h;
        }
    }

    fn hex_width(&self) -> usize {
        let len = self.detail.as_ref().map_or(0, |d| d.bytes.len());
        ui::HexGeom::new(self.areas.hex.width, len).per_row
    }

    fn scroll_hex(&mut self) {
        let h = self.areas.hex_rows().max(1);
        let per = self.hex_width().max(1);
        let row = self.hex_cursor / per;
        // Show the start of the selected field, and the cursor.
        let (first, last) = match self.selected_line_range() {
            Some((off, len)) if len > 0 => (off / per, (off + len - 1) / per),
            _ => (row, row),
        };
        let want_top = if last + 1 - first.min(last) <= h {
            // The whole field fits: keep it on screen.
            if first < self.hex_top {
                first
            } else if last >= self.hex_top + h {
                last + 1 - h
            } else {
                self.hex_top
            }
        } else {
            first
        };
        self.hex_top = want_top;
        if row < self.hex_top {
            self.hex_top = row;
        } else if row >= self.hex_top + h {
            self.hex_top = row + 1 - h;
        }
    }

    fn selected_line_range(&self) -> Option<(usize, usize)> {
        let l = self.detail.as_ref()?.lines.get(self.tree_sel)?;
        Some((l.offset, l.len))
    }

    /// Expands every ancestor of tree line `i`, so it is shown.
    fn expose(&mut self, i: usize) {
        if let Some(d) = &self.detail {
            for a in d.ancestors(i) {
                if let Some(l) = d.lines.get(a) {
                    self.collapsed.remove(&l.path);
                }
            }
        }
    }

    /// A tree line was selected: the hex cursor goes to its first byte.
    fn field_selected(&mut self) {
        if let Some((off, _)) = self.selected_line_range() {
            self.hex_cursor = off;
        }
        self.scroll_tree();
        self.scroll_hex();
    }

    /// Moves the tree selection by `delta` visible lines.
    fn move_tree(&mut self, delta: isize) {
        let lines: Vec<usize> = self
            .tree_items()
            .into_iter()
            .filter_map(|t| match t {
                TreeItem::Line(i) => Some(i),
                TreeItem::Note(_) => None,
            })
            .collect();
        if lines.is_empty() {
            return;
        }
        let at = lines.iter().position(|&i| i == self.tree_sel).unwrap_or(0);
        let to = at.saturating_add_signed(delta).min(lines.len() - 1);
        self.tree_sel = lines.get(to).copied().unwrap_or(0);
        self.field_selected();
    }

    /// Expands or collapses the selected tree line.
    pub fn toggle(&mut self) {
        let Some(l) = self
            .detail
            .as_ref()
            .and_then(|d| d.lines.get(self.tree_sel))
        else {
            return;
        };
        if !l.has_children(self.tree_sel) {
            return;
        }
        let path = l.path.clone();
        if !self.collapsed.remove(&path) {
            self.collapsed.insert(path);
        }
        self.scroll_tree();
    }

    fn set_collapsed(&mut self, collapse: bool) {
        let Some(l) = self
            .detail
            .as_ref()
            .and_then(|d| d.lines.get(self.tree_sel))
        else {
            return;
        };
        let has = l.has_children(self.tree_sel);
        let collapsed = self.collapsed.contains(&l.path);
        let path = l.path.clone();
        match (collapse, has, collapsed) {
            (true, true, false) => {
                self.collapsed.insert(path);
            }
            (true, _, _) => {
                // Already closed, or a leaf: go to the parent.
                let parent = self
                    .detail
                    .as_ref()
                    .and_then(|d| d.ancestors(self.tree_sel).last().copied());
                if let Some(p) = parent {
                    self.tree_sel = p;
                    self.field_selected();
                }
            }
            (false, true, true) => {
                self.collapsed.remove(&path);
            }
            (false, true, false) => self.move_tree(1),
            (false, false, _) => {}
        }
        self.scroll_tree();
    }

    /// Puts the hex cursor on byte `b` and selects the field holding it.
    pub fn select_byte(&mut self, b: usize) {
        let Some(d) = &self.detail else { return };
        if d.bytes.is_empty() {
            return;
        }
        self.hex_cursor = b.min(d.bytes.len() - 1);
        if let Some(i) = d.line_at_byte(self.hex_cursor) {
            self.tree_sel = i;
            self.expose(i);
        }
        self.scroll_tree();
        self.scroll_hex();
    }

    fn move_hex(&mut self, delta: isize) {
        self.select_byte(self.hex_cursor.saturating_add_signed(delta));
    }

    fn move_list(&mut self, delta: isize) {
        self.follow = false;
        self.select(self.sel.saturating_add_signed(delta));
    }

    /// Jumps from a request to its response or back.
    pub fn jump_pair(&mut self) {
        let Some(row) = self.selected_row() else {
            return;
        };
        let Some(r) = self.store.row(row).copied() else {
            return;
        };
        let other = match r.kind() {
            Kind::Request => "response",
            Kind::Response => "request",
        };
        match r.pair() {
            Some(p) => match self.view.position(&self.store, p) {
                Some(pos) => {
                    self.follow = false;
                    self.select(pos);
                    self.notice = None;
                }
                None => {
                    let frame = self.store.row(p).map_or(0, |x| x.frame);
                    self.notice = Some((
                        format!("the {other} (frame {frame}) is hidden by the filter"),
                        true,
                    ));
                }
            },
            None => {
                self.notice = Some((format!("no {other} was captured for this message"), true));
            }
        }
    }

    /// Applies a filter typed after `/`; an unparsable one leaves the prompt open.
    pub fn apply_filter(&mut self, text: &str) -> Result<(), String> {
        let f = Filter::parse(text)?;
        let keep = self.selected_row();
        self.view = View::new(f);
        self.notice = None;
        match keep {
            Some(row) if self.view.rows.is_some() => {
                self.anchor = Some(row);
                self.select(0);
            }
            Some(row) => {
                self.anchor = None;
                self.select(row);
            }
            None => self.select(0),
        }
        self.grown();
        Ok(())
    }

    /// Handles one key press.
    pub fn on_key(&mut self, k: KeyEvent) {
        if let Some(text) = &mut self.input {
            match k.code {
                KeyCode::Enter => {
                    let t = text.clone();
                    match self.apply_filter(&t) {
                        Ok(()) => self.input = None,
                        Err(e) => self.notice = Some((e, true)),
                    }
                }
                KeyCode::Esc => {
                    self.input = None;
                    self.notice = None;
                }
                KeyCode::Backspace => {
                    text.pop();
                }
                KeyCode::Char('u') if k.modifiers.contains(KeyModifiers::CONTROL) => text.clear(),
                KeyCode::Char(c) if !c.is_control() => text.push(c),
                _ => {}
            }
            return;
        }
        if self.help {
            self.help = false;
            if k.code == KeyCode::Char('q') {
                self.quit = true;
            }
            return;
        }
        let ctrl = k.modifiers.contains(KeyModifiers::CONTROL);
        match k.code {
            KeyCode::Char('q') => self.quit = true,
            KeyCode::Char('c') if ctrl => self.quit = true,
            KeyCode::Char('?') => self.help = true,
            KeyCode::Char('/') => {
                self.input = Some(self.view.filter().as_str().to_string());
            }
            KeyCode::Char('t') => {
                self.tab = match self.tab {
                    Tab::Messages => Tab::Analysis,
                    Tab::Analysis => Tab::Messages,
                }
            }
            KeyCode::Char('1') => self.tab = Tab::Messages,
            KeyCode::Char('2') => self.tab = Tab::Analysis,
            KeyCode::Esc => self.notice = None,
            _ if self.tab == Tab::Analysis => self.analysis_key(k.code),
            KeyCode::Tab => {
                self.focus = match self.focus {
                    Pane::List => Pane::Tree,
                    Pane::Tree => Pane::Hex,
                    Pane::Hex => Pane::List,
                }
            }
            KeyCode::BackTab => {
                self.focus = match self.focus {
                    Pane::List => Pane::Hex,
                    Pane::Tree => Pane::List,
                    Pane::Hex => Pane::Tree,
                }
            }
            KeyCode::Char('r') => self.jump_pair(),
            KeyCode::Char('f') => {
                self.follow = !self.follow;
                if self.follow {
                    let n = self.shown();
                    self.select(n.saturating_sub(1));
                }
            }
            _ => match self.focus {
                Pane::List => self.list_key(k.code),
                Pane::Tree => self.tree_key(k.code),
                Pane::Hex => self.hex_key(k.code),
            },
        }
    }

    fn list_key(&mut self, code: KeyCode) {
        let page = self.areas.list_rows().max(1) as isize;
        match code {
            KeyCode::Up | KeyCode::Char('k') => self.move_list(-1),
            KeyCode::Down | KeyCode::Char('j') => self.move_list(1),
            KeyCode::PageUp => self.move_list(-page),
            KeyCode::PageDown => self.move_list(page),
            KeyCode::Home | KeyCode::Char('g') => {
                self.follow = false;
                self.select(0);
            }
            KeyCode::End | KeyCode::Char('G') => {
                let n = self.shown();
                self.select(n.saturating_sub(1));
            }
            KeyCode::Enter | KeyCode::Char(' ') => self.focus = Pane::Tree,
            _ => {}
        }
    }

    /// A click on a table row selects it (a click on the selected row jumps); the wheel scrolls.
    fn on_analysis_mouse(&mut self, m: MouseEvent) {
        let a = self.areas;
        let at = (m.column, m.row).into();
        let (table, area, top) = if a.elections.contains(at) {
            (Table::Elections, a.elections, self.election_top)
        } else if a.coordinators.contains(at) {
            (Table::Coordinators, a.coordinators, self.coordinator_top)
        } else {
            return;
        };
        match m.kind {
            MouseEventKind::ScrollUp | MouseEventKind::ScrollDown => {
                self.table = table;
                let d = if m.kind == MouseEventKind::ScrollUp {
                    -3
                } else {
                    3
                };
                self.move_table(d);
            }
            MouseEventKind::Down(MouseButton::Left) => {
                self.table = table;
                // Under the title and the column heads.
                let first = area.y + 2;
                if m.row < first {
                    return;
                }
                let pos = top + usize::from(m.row - first);
                let (sel, n) = match table {
                    Table::Elections => (self.election_sel, self.elections.len()),
                    Table::Coordinators => (self.coordinator_sel, self.coordinators.len()),
                };
                if pos >= n {
                    return;
                }
                if pos == sel {
                    self.jump_to_entry();
                } else {
                    self.move_table(pos as isize - sel as isize);
                }
            }
            _ => {}
        }
    }

    /// Keys on the analysis tab: move in a table, switch tables, jump to a message.
    fn analysis_key(&mut self, code: KeyCode) {
        let rows = match self.table {
            Table::Elections => self.areas.election_rows(),
            Table::Coordinators => self.areas.coordinator_rows(),
        };
        let page = rows.max(1) as isize;
        match code {
            KeyCode::Up | KeyCode::Char('k') => self.move_table(-1),
            KeyCode::Down | KeyCode::Char('j') => self.move_table(1),
            KeyCode::PageUp => self.move_table(-page),
            KeyCode::PageDown => self.move_table(page),
            KeyCode::Home | KeyCode::Char('g') => self.move_table(isize::MIN / 2),
            KeyCode::End | KeyCode::Char('G') => self.move_table(isize::MAX / 2),
            KeyCode::Tab | KeyCode::BackTab => {
                self.table = match self.table {
                    Table::Elections => Table::Coordinators,
                    Table::Coordinators => Table::Elections,
                }
            }
            KeyCode::Enter | KeyCode::Char(' ') => self.jump_to_entry(),
            _ => {}
        }
    }

    fn move_table(&mut self, delta: isize) {
        match self.table {
            Table::Elections => {
                let last = self.elections.len().saturating_sub(1);
                self.election_sel = self.election_sel.saturating_add_signed(delta).min(last);
            }
            Table::Coordinators => {
                let last = self.coordinators.len().saturating_sub(1);
                self.coordinator_sel = self.coordinator_sel.saturating_add_signed(delta).min(last);
            }
        }
        self.scroll_tables();
    }

    /// Keeps each table's selection in range and on screen.
    fn scroll_tables(&mut self) {
        fn fit(sel: &mut usize, top: &mut usize, n: usize, h: usize) {
            let h = h.max(1);
            *sel = (*sel).min(n.saturating_sub(1));
            if *sel < *top {
                *top = *sel;
            } else if *sel >= *top + h {
                *top = *sel + 1 - h;
            }
            if *top + h > n {
                *top = n.saturating_sub(h);
            }
        }
        let (eh, ch) = (self.areas.election_rows(), self.areas.coordinator_rows());
        fit(
            &mut self.election_sel,
            &mut self.election_top,
            self.elections.len(),
            eh,
        );
        fit(
            &mut self.coordinator_sel,
            &mut self.coordinator_top,
            self.coordinators.len(),
            ch,
        );
    }

    /// The message the selected analysis entry jumps to.
    pub fn entry_target(&self) -> Option<&Target> {
        match self.table {
            Table::Elections => self.elections.get(self.election_sel)?.target.as_ref(),
            Table::Coordinators => self.coordinators.get(self.coordinator_sel)?.target.as_ref(),
        }
    }

    /// Enter on the analysis tab: shows the selected entry's first message in the list.
    pub fn jump_to_entry(&mut self) {
        match self.entry_target().cloned() {
            Some(t) => self.jump_to(&t),
            None => {
                let what = match self.table {
                    Table::Elections if self.elections.is_empty() => "no election to jump to",
                    Table::Coordinators if self.coordinators.is_empty() => {
                        "no coordinator to jump to"
                    }
                    _ => "no message of this entry was captured",
                };
                self.notice = Some((what.to_string(), true));
            }
        }
    }

    /// The store row of the message `t` names: completed by its packet, of its
    /// API and kind (a packet can complete several messages).
    fn find_target(&self, t: &Target) -> Option<usize> {
        let in_frame = |i: &usize| self.store.row(*i).is_some_and(|r| r.frame == t.frame);
        let exact = (0..self.store.len()).filter(in_frame).find(|&i| {
            self.store
                .row(i)
                .is_some_and(|r| r.api_key() == Some(t.api_key) && r.kind() == t.kind)
        });
        exact.or_else(|| (0..self.store.len()).find(in_frame))
    }

    /// Switches to the message list with `t`'s message selected. A filter that
    /// hides it is cleared, and the status bar says so.
    pub fn jump_to(&mut self, t: &Target) {
        let Some(row) = self.find_target(t) else {
            self.notice = Some((
                format!("frame {} is not in the message list", t.frame),
                true,
            ));
            return;
        };
        self.tab = Tab::Messages;
        self.focus = Pane::List;
        self.follow = false;
        let here = format!("frame {}: {}", t.frame, t.what);
        if let Some(pos) = self.view.position(&self.store, row) {
            self.anchor = None;
            self.select(pos);
            self.notice = Some((here, false));
            return;
        }
        let unscanned = row >= self.view.scanned;
        let matches = unscanned
            && self
                .store
                .with_record(row, |r| {
                    self.view.filter.matches(r, &mut || summary::line(r))
                })
                .unwrap_or(false);
        if matches {
            // The filter lets it through but has not got that far: select it once it has.
            self.anchor = Some(row);
            self.grown();
            self.notice = Some((here, false));
        } else {
            let old = self.view.filter().as_str().to_string();
            self.view = View::default();
            self.anchor = None;
            self.select(row);
            self.notice = Some((
                format!("{here} (filter \"{old}\" cleared: it hid this message)"),
                false,
            ));
        }
    }

    fn tree_key(&mut self, code: KeyCode) {
        let page = self.areas.tree_rows().max(1) as isize;
        match code {
            KeyCode::Up | KeyCode::Char('k') => self.move_tree(-1),
            KeyCode::Down | KeyCode::Char('j') => self.move_tree(1),
            KeyCode::PageUp => self.move_tree(-page),
            KeyCode::PageDown => self.move_tree(page),
            KeyCode::Home | KeyCode::Char('g') => self.move_tree(isize::MIN / 2),
            KeyCode::End | KeyCode::Char('G') => self.move_tree(isize::MAX / 2),
            KeyCode::Enter | KeyCode::Char(' ') => self.toggle(),
            KeyCode::Left | KeyCode::Char('h') => self.set_collapsed(true),
            KeyCode::Right | KeyCode::Char('l') => self.set_collapsed(false),
            _ => {}
        }
    }

    fn hex_key(&mut self, code: KeyCode) {
        let per = self.hex_width().max(1) as isize;
        let page = per * self.areas.hex_rows().max(1) as isize;
        match code {
            KeyCode::Left | KeyCode::Char('h') => self.move_hex(-1),
            KeyCode::Right | KeyCode::Char('l') => self.move_hex(1),
            KeyCode::Up | KeyCode::Char('k') => self.move_hex(-per),
            KeyCode::Down | KeyCode::Char('j') => self.move_hex(per),
            KeyCode::PageUp => self.move_hex(-page),
            KeyCode::PageDown => self.move_hex(page),
            KeyCode::Home | KeyCode::Char('g') => self.select_byte(0),
            KeyCode::End | KeyCode::Char('G') => self.select_byte(usize::MAX),
            KeyCode::Enter | KeyCode::Char(' ') => self.focus = Pane::Tree,
            _ => {}
        }
    }

    /// Handles a mouse event: a click selects what is under it, the wheel scrolls.
    pub fn on_mouse(&mut self, m: MouseEvent) {
        let (x, y) = (m.column, m.row);
        let a = self.areas;
        if self.tab == Tab::Analysis {
            self.on_analysis_mouse(m);
            return;
        }
        let pane = [
            (a.list, Pane::List),
            (a.tree, Pane::Tree),
            (a.hex, Pane::Hex),
        ]
        .into_iter()
        .find(|(r, _)| r.contains((x, y).into()))
        .map(|(_, p)| p);
        let Some(pane) = pane else { return };
        match m.kind {
            MouseEventKind::ScrollUp | MouseEventKind::ScrollDown => {
                let d = if m.kind == MouseEventKind::ScrollUp {
                    -3
                } else {
                    3
                };
                match pane {
                    Pane::List => self.move_list(d),
                    Pane::Tree => self.move_tree(d),
                    Pane::Hex => self.move_hex(d * self.hex_width() as isize),
                }
            }
            MouseEventKind::Down(MouseButton::Left) => {
                self.focus = pane;
                match pane {
                    Pane::List => {
                        let first = a.list.y + 2;
                        if y >= first {
                            self.follow = false;
                            let pos = self.top + usize::from(y - first);
                            if pos < self.shown() {
                                self.select(pos);
                            }
                        }
                    }
                    Pane::Tree => {
                        let first = a.tree.y + 1;
                        if y < first {
                            return;
                        }
                        let items = self.tree_items();
                        let at = self.tree_top + usize::from(y - first);
                        if let Some(TreeItem::Line(i)) = items.get(at).copied() {
                            let was = self.tree_sel;
                            self.tree_sel = i;
                            self.field_selected();
                            // A click on the selected line's marker (or the line again) toggles it.
                            let depth = self
                                .detail
                                .as_ref()
                                .and_then(|d| d.lines.get(i))
                                .map_or(0, |l| l.depth);
                            let marker = a.tree.x + 2 * depth as u16;
                            if was == i || x == marker {
                                self.toggle();
                            }
                        }
                    }
                    Pane::Hex => {
                        let first = a.hex.y + 1;
                        if y < first {
                            return;
                        }
                        let len = self.detail.as_ref().map_or(0, |d| d.bytes.len());
                        let g = ui::HexGeom::new(a.hex.width, len);
                        let row = self.hex_top + usize::from(y - first);
                        if let Some(col) = g.byte_at(x.saturating_sub(a.hex.x)) {
                            let b = row * g.per_row + col;
                            if b < len {
                                self.select_byte(b);
                            }
                        }
                    }
                }
            }
            _ => {}
        }
    }
}
