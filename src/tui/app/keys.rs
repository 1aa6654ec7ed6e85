//! Key routing: the prompt's history, global keys, then the focused pane's.

use super::{App, Pane, Tab};
use crate::tui::tables::{self, Table};
use crate::tui::{hex, list, tree};
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

impl App {
    /// Up (`older`) or Down in the filter history, while the prompt is open.
    fn recall(&mut self, older: bool) {
        let Some(text) = &mut self.input else { return };
        let at = match (&self.recall, older) {
            // The prompt opens with the filter in force, the newest entry: start before it.
            (None, true) => match self.history.split_last() {
                Some((last, rest)) if last == text && !rest.is_empty() => Some(rest.len() - 1),
                _ => self.history.len().checked_sub(1),
            },
            (None, false) => None,
            (Some((i, _)), true) => Some(i.saturating_sub(1)),
            (Some((i, _)), false) => Some(i + 1),
        };
        match at.and_then(|i| Some((i, self.history.get(i)?))) {
            Some((i, h)) => {
                let typed = match self.recall.take() {
                    Some((_, typed)) => typed,
                    None => text.clone(),
                };
                *text = h.clone();
                self.recall = Some((i, typed));
            }
            // Past the newest entry: back to what was typed.
            None if !older => {
                if let Some((_, typed)) = self.recall.take() {
                    *text = typed;
                }
            }
            None => {}
        }
    }

    /// Handles one key press.
    pub fn on_key(&mut self, k: KeyEvent) {
        if matches!(k.code, KeyCode::Up | KeyCode::Down) && self.input.is_some() {
            self.recall(k.code == KeyCode::Up);
            return;
        }
        if self.export.is_some() {
            self.export_key(k);
            return;
        }
        if let Some(text) = &mut self.input {
            // Editing a recalled filter makes it the text typed.
            self.recall = None;
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
                self.input = Some(self.list.view.filter().as_str().to_string());
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
            KeyCode::Char('f') => self.follow_stream(),
            KeyCode::Char('w') => self.start_export(),
            KeyCode::Char('c') => self.copy(),
            KeyCode::Char('v') => {
                self.tree.values = self.tree.values.next();
                self.scroll_tree();
                let what = format!("record keys and values: {}", self.tree.values.name());
                self.notice = Some((what, false));
            }
            KeyCode::Char('F') => {
                self.list.follow = !self.list.follow;
                if self.list.follow {
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
        match list::key(code, self.areas.list_rows()) {
            Some(list::Action::Move(d)) => self.move_list(d),
            Some(list::Action::First) => {
                self.list.follow = false;
                self.select(0);
            }
            Some(list::Action::Last) => {
                let n = self.shown();
                self.select(n.saturating_sub(1));
            }
            Some(list::Action::Open) => self.focus = Pane::Tree,
            None => {}
        }
    }

    fn tree_key(&mut self, code: KeyCode) {
        match tree::key(code, self.areas.tree_rows()) {
            Some(tree::Action::Move(d)) => self.move_tree(d),
            Some(tree::Action::Toggle) => self.toggle(),
            Some(tree::Action::Collapse(c)) => self.set_collapsed(c),
            None => {}
        }
    }

    fn hex_key(&mut self, code: KeyCode) {
        match hex::key(code, self.hex_width(), self.areas.hex_rows()) {
            Some(hex::Action::Move(d)) => self.move_hex(d),
            Some(hex::Action::Byte(b)) => self.select_byte(b),
            Some(hex::Action::Tree) => self.focus = Pane::Tree,
            None => {}
        }
    }

    /// Keys on the analysis tab: move in a table, switch tables, jump to a message.
    fn analysis_key(&mut self, code: KeyCode) {
        let rows = match self.tables.focus {
            Table::Elections => self.areas.election_rows(),
            Table::Coordinators => self.areas.coordinator_rows(),
        };
        match tables::key(code, rows) {
            Some(tables::Action::Move(d)) => self.tables.move_by(d, &self.areas),
            Some(tables::Action::Switch) => self.tables.switch(),
            Some(tables::Action::Jump) => self.jump_to_entry(),
            None => {}
        }
    }
}
