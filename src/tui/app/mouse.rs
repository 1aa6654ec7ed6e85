//! The mouse: a click selects what is under it, the wheel scrolls.

use super::{App, Pane, Tab};
use crate::tui::{list, tree};
use crossterm::event::{MouseButton, MouseEvent, MouseEventKind};

impl App {
    /// A click on a table row selects it (a click on the selected row jumps); the wheel scrolls.
    fn on_analysis_mouse(&mut self, m: MouseEvent) {
        let Some((table, pos)) = self.tables.at(&self.areas, m.column, m.row) else {
            return;
        };
        match m.kind {
            MouseEventKind::ScrollUp | MouseEventKind::ScrollDown => {
                self.tables.focus = table;
                let d = if m.kind == MouseEventKind::ScrollUp {
                    -3
                } else {
                    3
                };
                self.tables.move_by(d, &self.areas);
            }
            MouseEventKind::Down(MouseButton::Left) => {
                self.tables.focus = table;
                let Some(pos) = pos else { return };
                let sel = self.tables.scroll().sel;
                if pos >= self.tables.len() {
                    return;
                }
                if pos == sel {
                    self.jump_to_entry();
                } else {
                    self.tables
                        .move_by(pos as isize - sel as isize, &self.areas);
                }
            }
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
                        if let Some(pos) = list::position_at(&self.list, a.list, y) {
                            self.list.follow = false;
                            if pos < self.shown() {
                                self.select(pos);
                            }
                        }
                    }
                    Pane::Tree => {
                        let d = self.detail.as_ref();
                        let Some(i) = self.tree.line_at(d, a.tree, y) else {
                            return;
                        };
                        // A click on the selected line's marker (or the line again) toggles it.
                        let marker = tree::marker_x(d, a.tree, i);
                        let was = self.tree.scroll.sel;
                        self.tree.scroll.sel = i;
                        self.field_selected();
                        if was == i || x == marker {
                            self.toggle();
                        }
                    }
                    Pane::Hex => {
                        let len = self.detail.as_ref().map_or(0, |d| d.bytes.len());
                        if let Some(b) = self.hex.byte_at(a.hex, len, x, y) {
                            self.select_byte(b);
                        }
                    }
                }
            }
            _ => {}
        }
    }
}
