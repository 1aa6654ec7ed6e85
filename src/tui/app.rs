//! The TUI's state and key routing: which tab and pane have the keyboard,
//! the prompt, the help and the status bar's notice. Each pane keeps its own
//! state and says what its keys mean ([`list`], [`tree`], [`hex`],
//! [`tables`]); this module carries out what involves several panes.
//! Nothing here draws: `ui::draw` reads an `App` and renders it.

mod actions;
mod jump;
mod keys;
mod mouse;

use super::detail::Detail;
use super::export::{Reopen, Written};
use super::hex::{Hex, HexGeom};
use super::layout::{self, Areas};
use super::list::{List, View};
use super::loader::{Progress, Update};
use super::store::Store;
use super::tables::{CoordinatorRow, ElectionRow, Loading, Table, Tables};
use super::tree::Tree;
use crate::pipeline::RunStats;
use crate::select::Filter;
use ratatui::layout::Rect;
use std::sync::Arc;
use std::sync::mpsc::Receiver;
use std::time::{Duration, Instant};

pub use super::tree::TreeItem;

/// Which tab is shown.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tab {
    Messages,
    Analysis,
}

/// Which pane has the keyboard.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pane {
    List,
    Tree,
    Hex,
}

/// What the loader has said so far.
#[derive(Debug, Default)]
struct Source {
    /// The capture source, as the status bar names it.
    label: String,
    live: bool,
    progress: Progress,
    done: bool,
    error: Option<String>,
    stats: Option<Box<RunStats>>,
    /// The analysis is being made after loading.
    analysing: bool,
    /// Why there is no analysis, if there is none.
    analysis_error: Option<String>,
}

/// The whole state of the TUI.
pub struct App {
    store: Store,
    source: Source,
    list: List,
    /// The selected message, decoded.
    detail: Option<Detail>,
    /// The selected tree path while no message is shown, to select it again.
    field_path: Option<String>,
    tree: Tree,
    hex: Hex,
    tables: Tables,
    tab: Tab,
    focus: Pane,
    /// The filter being typed after `/`.
    input: Option<String>,
    /// Filters applied from the prompt, oldest first, without repeats in a row.
    history: Vec<String>,
    /// While Up/Down walk the history: the entry shown, and the text typed before.
    recall: Option<(usize, String)>,
    /// The path being typed after `w`.
    export: Option<String>,
    /// A path that exists, which Enter again overwrites.
    overwrite: Option<String>,
    /// Opens the capture again, for `w`; `None` for a live capture or standard input.
    reopen: Option<Arc<Reopen>>,
    /// The export being written, and where.
    job: Option<(Receiver<Result<Written, String>>, String)>,
    /// Text for the terminal's clipboard, not yet sent.
    clipboard: Option<String>,
    /// The connection `f` followed last and its endpoints, the client's first.
    followed: Option<(u32, (std::net::SocketAddr, std::net::SocketAddr))>,
    /// A one-off message for the status bar; `true` for an error.
    notice: Option<(String, bool)>,
    help: bool,
    quit: bool,
    areas: Areas,
}

impl App {
    pub fn new(label: &str, live: bool) -> App {
        App {
            store: Store::default(),
            source: Source {
                label: label.to_string(),
                live,
                ..Source::default()
            },
            list: List {
                follow: live,
                ..List::default()
            },
            detail: None,
            field_path: None,
            tree: Tree::default(),
            hex: Hex::default(),
            tables: Tables::default(),
            tab: Tab::Messages,
            focus: Pane::List,
            input: None,
            history: Vec::new(),
            recall: None,
            export: None,
            overwrite: None,
            reopen: None,
            job: None,
            clipboard: None,
            followed: None,
            notice: None,
            help: false,
            quit: false,
            areas: layout::areas(Rect::new(0, 0, 80, 24)),
        }
    }

    pub fn store(&self) -> &Store {
        &self.store
    }
    /// The capture source, as the status bar names it.
    pub fn label(&self) -> &str {
        &self.source.label
    }
    pub fn live(&self) -> bool {
        self.source.live
    }
    pub fn progress(&self) -> &Progress {
        &self.source.progress
    }
    /// Whether the loader has finished.
    pub fn done(&self) -> bool {
        self.source.done
    }
    /// Why the loader stopped early, if it did.
    pub fn load_error(&self) -> Option<&str> {
        self.source.error.as_deref()
    }
    /// The run's counters, once the loader has finished.
    pub fn stats(&self) -> Option<&RunStats> {
        self.source.stats.as_deref()
    }
    pub fn loading(&self) -> Loading {
        Loading {
            done: self.source.done,
            live: self.source.live,
            analysing: self.source.analysing,
            failed: self.source.analysis_error.is_some(),
        }
    }
    /// Whether the analysis is being made (after loading).
    pub fn analysing(&self) -> bool {
        self.source.analysing
    }
    /// Why there is no analysis, if there is none.
    pub fn analysis_error(&self) -> Option<&str> {
        self.source.analysis_error.as_deref()
    }
    /// The messages the filter lets through.
    pub fn view(&self) -> &View {
        &self.list.view
    }
    pub fn list(&self) -> &List {
        &self.list
    }
    /// Selected position in the view.
    pub fn sel(&self) -> usize {
        self.list.scroll.sel
    }
    /// First view position on screen.
    pub fn top(&self) -> usize {
        self.list.scroll.top
    }
    /// Whether the last message stays selected as more arrive (`F`).
    pub fn follow(&self) -> bool {
        self.list.follow
    }
    /// The selected message, decoded.
    pub fn detail(&self) -> Option<&Detail> {
        self.detail.as_ref()
    }
    pub fn tree(&self) -> &Tree {
        &self.tree
    }
    /// Selected tree line.
    pub fn tree_sel(&self) -> usize {
        self.tree.scroll.sel
    }
    pub fn hex(&self) -> &Hex {
        &self.hex
    }
    /// Selected byte in the hex pane.
    pub fn hex_cursor(&self) -> usize {
        self.hex.scroll.sel
    }
    /// The selected tree line's bytes: offset and length.
    pub fn field(&self) -> Option<(usize, usize)> {
        self.tree.field(self.detail.as_ref())
    }
    pub fn tables(&self) -> &Tables {
        &self.tables
    }
    pub fn elections(&self) -> &[ElectionRow] {
        &self.tables.elections
    }
    pub fn coordinators(&self) -> &[CoordinatorRow] {
        &self.tables.coordinators
    }
    /// Selected row of the elections table.
    pub fn election_sel(&self) -> usize {
        self.tables.election.sel
    }
    /// The analysis tab's table with the keyboard.
    pub fn table(&self) -> Table {
        self.tables.focus
    }
    pub fn tab(&self) -> Tab {
        self.tab
    }
    pub fn focus(&self) -> Pane {
        self.focus
    }
    pub fn set_focus(&mut self, pane: Pane) {
        self.focus = pane;
    }
    /// The filter being typed after `/`.
    pub fn input(&self) -> Option<&str> {
        self.input.as_deref()
    }

    /// The filters applied so far, oldest first.
    pub fn history(&self) -> &[String] {
        &self.history
    }
    /// A one-off message for the status bar; `true` for an error.
    pub fn notice(&self) -> Option<&(String, bool)> {
        self.notice.as_ref()
    }
    pub fn help(&self) -> bool {
        self.help
    }
    /// Whether the user asked to quit.
    pub fn quit(&self) -> bool {
        self.quit
    }
    pub fn areas(&self) -> Areas {
        self.areas
    }

    /// Messages shown.
    pub fn shown(&self) -> usize {
        self.list.view.len(&self.store)
    }

    /// The selected message's store row.
    pub fn selected_row(&self) -> Option<usize> {
        self.list.selected_row(&self.store)
    }

    /// Takes what the loader sent.
    pub fn update(&mut self, u: Update) {
        match u {
            Update::Batch(b, p) => {
                let keep = self.selected_row();
                self.store.push_batch(b);
                self.source.progress = p;
                self.keep_selected(keep);
            }
            Update::Analysis(a) => {
                self.tables.set(*a, &self.areas);
                if self.source.done {
                    self.source.analysing = false;
                }
                return;
            }
            Update::NoAnalysis(why) => {
                self.source.analysing = false;
                self.source.analysis_error = Some(why);
                return;
            }
            Update::Done {
                progress,
                stats,
                error,
                analysis_follows,
            } => {
                self.source.progress = progress;
                self.source.stats = Some(stats);
                self.source.error = error;
                self.source.done = true;
                self.source.analysing = analysis_follows;
            }
        }
        self.grown();
    }

    /// After more rows arrived or the filter let more through.
    fn grown(&mut self) {
        if let Some(row) = self.list.anchor {
            let v = &self.list.view;
            if v.unscanned(&self.store) == 0 || v.scanned() > row {
                self.list.anchor = None;
                let pos = v.position_from(&self.store, row);
                self.select(pos);
                return;
            }
        }
        let n = self.shown();
        if self.list.follow && n > 0 {
            self.select(n - 1);
        } else if self.detail.is_none() && n > 0 {
            self.select(self.list.scroll.sel);
        }
    }

    /// Filters more rows, for about `budget`; returns whether any were left.
    pub fn scan_filter(&mut self, budget: Duration) -> bool {
        if self.list.view.unscanned(&self.store) == 0 {
            return false;
        }
        let start = Instant::now();
        let keep = self.selected_row();
        while self.list.view.unscanned(&self.store) > 0 && start.elapsed() < budget {
            self.list.view.scan(&self.store, 2048);
        }
        self.keep_selected(keep);
        self.grown();
        true
    }

    /// Filters every row not yet looked at.
    pub fn settle(&mut self) {
        let keep = self.selected_row();
        self.list.view.scan(&self.store, usize::MAX);
        self.keep_selected(keep);
        self.grown();
    }

    /// Messages of earlier packets can arrive late and go in above the
    /// selection: the selected message stays selected, not its position.
    fn keep_selected(&mut self, row: Option<usize>) {
        if self.list.follow {
            return;
        }
        let Some(row) = row else { return };
        if let Some(pos) = self.list.view.position(&self.store, row) {
            if pos != self.list.scroll.sel {
                self.list.scroll.sel = pos;
                self.scroll_list();
            }
        }
    }

    /// The terminal has this size now.
    pub fn resize(&mut self, area: Rect) {
        self.areas = layout::areas(area);
        self.scroll_list();
        self.scroll_tree();
        self.scroll_hex();
        self.tables.keep_in_view(&self.areas);
    }

    /// Selects view position `pos` (clamped) and decodes its message.
    pub fn select(&mut self, pos: usize) {
        let n = self.shown();
        self.list.select(pos, n, self.areas.list_rows());
        let row = self.selected_row();
        if row == self.detail.as_ref().map(|d| d.row) {
            return;
        }
        let old_path = self
            .detail
            .as_ref()
            .and_then(|d| d.lines.get(self.tree.scroll.sel))
            .map(|l| l.path.clone())
            .or_else(|| self.field_path.take());
        self.detail = row.and_then(|r| Detail::build(&self.store, r));
        if self.detail.is_none() {
            self.field_path = old_path.clone();
        }
        // Keep the same field selected when the new message has it, as Wireshark does.
        self.tree.scroll.sel = match (&self.detail, old_path) {
            (Some(d), Some(p)) => d.lines.iter().position(|l| l.path == p).unwrap_or(0),
            _ => 0,
        };
        self.tree.scroll.top = 0;
        self.hex.scroll.top = 0;
        self.tree.expose(self.detail.as_ref(), self.tree.scroll.sel);
        self.field_selected();
    }

    fn scroll_list(&mut self) {
        let n = self.shown();
        self.list.keep_in_view(n, self.areas.list_rows());
    }

    /// The tree pane's items: the expanded lines, then the notes.
    pub fn tree_items(&self) -> Vec<TreeItem> {
        self.tree.items(self.detail.as_ref())
    }

    /// Whether tree line `i` has children and they are hidden.
    pub fn is_collapsed(&self, i: usize) -> bool {
        self.tree.is_collapsed(self.detail.as_ref(), i)
    }

    fn scroll_tree(&mut self) {
        self.tree
            .keep_in_view(self.detail.as_ref(), self.areas.tree_rows());
    }

    fn hex_width(&self) -> usize {
        let len = self.detail.as_ref().map_or(0, |d| d.bytes.len());
        HexGeom::new(self.areas.hex.width, len).per_row
    }

    fn scroll_hex(&mut self) {
        let field = self.field();
        self.hex
            .keep_in_view(self.hex_width(), self.areas.hex_rows(), field);
    }

    /// A tree line was selected: the hex cursor goes to its first byte.
    fn field_selected(&mut self) {
        if let Some((off, _)) = self.field() {
            self.hex.scroll.sel = off;
        }
        self.scroll_tree();
        self.scroll_hex();
    }

    /// Moves the tree selection by `delta` visible lines.
    fn move_tree(&mut self, delta: isize) {
        if self.tree.move_by(self.detail.as_ref(), delta) {
            self.field_selected();
        }
    }

    /// Expands or collapses the selected tree line.
    pub fn toggle(&mut self) {
        self.tree.toggle(self.detail.as_ref());
        self.scroll_tree();
    }

    fn set_collapsed(&mut self, collapse: bool) {
        if self.tree.set_collapsed(self.detail.as_ref(), collapse) {
            self.field_selected();
        }
        self.scroll_tree();
    }

    /// Puts the hex cursor on byte `b` and selects the field holding it.
    pub fn select_byte(&mut self, b: usize) {
        let Some(d) = &self.detail else { return };
        if d.bytes.is_empty() {
            return;
        }
        self.hex.scroll.sel = b.min(d.bytes.len() - 1);
        if let Some(i) = d.line_at_byte(self.hex.scroll.sel) {
            self.tree.scroll.sel = i;
            self.tree.expose(Some(d), i);
        }
        self.scroll_tree();
        self.scroll_hex();
    }

    fn move_hex(&mut self, delta: isize) {
        self.select_byte(self.hex.scroll.sel.saturating_add_signed(delta));
    }

    fn move_list(&mut self, delta: isize) {
        self.list.follow = false;
        self.select(self.list.scroll.sel.saturating_add_signed(delta));
    }

    /// Applies a filter typed after `/`; an unparsable one leaves the prompt open.
    pub fn apply_filter(&mut self, text: &str) -> Result<(), String> {
        let f = Filter::parse(text).map_err(|e| e.one_line())?;
        let conn = self.list.view.conn();
        self.set_view(View::new(f).following(conn));
        self.notice = None;
        let text = text.trim();
        if !text.is_empty() && self.history.last().is_none_or(|h| h != text) {
            self.history.push(text.to_string());
        }
        Ok(())
    }

    /// Shows `view` instead, keeping the selected message selected when it is shown.
    fn set_view(&mut self, view: View) {
        let keep = self.selected_row();
        self.list.view = view;
        match keep {
            Some(row) if !self.list.view.is_all() => {
                self.list.anchor = Some(row);
                self.select(0);
            }
            Some(row) => {
                self.list.anchor = None;
                let pos = self.list.view.position(&self.store, row).unwrap_or(0);
                self.select(pos);
            }
            None => self.select(0),
        }
        self.grown();
    }
}
