//! Jumps: from a request to its response, and from an analysis entry to its
//! message in the list.

use super::{App, Pane, Tab};
use crate::proto::Kind;
use crate::tui::list::View;
use crate::tui::tables::Target;

impl App {
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
            Some(p) => match self.list.view.position(&self.store, p) {
                Some(pos) => {
                    self.list.follow = false;
                    self.select(pos);
                    self.notice = None;
                }
                None => {
                    let frame = self.store.row(p).map_or(0, |x| x.packet);
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

    /// The message the selected analysis entry jumps to.
    pub fn entry_target(&self) -> Option<&Target> {
        self.tables.target()
    }

    /// Enter on the analysis tab: shows the selected entry's first message in the list.
    pub fn jump_to_entry(&mut self) {
        match self.tables.target().cloned() {
            Some(t) => self.jump_to(&t),
            None => self.notice = Some((self.tables.no_target().to_string(), true)),
        }
    }

    /// The store row of the message `t` names: completed by its packet, of its
    /// API and kind (a packet can complete several messages).
    fn find_target(&self, t: &Target) -> Option<usize> {
        let in_frame = |i: &usize| self.store.row(*i).is_some_and(|r| r.packet == t.packet);
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
                format!("frame {} is not in the message list", t.packet),
                true,
            ));
            return;
        };
        self.tab = Tab::Messages;
        self.focus = Pane::List;
        self.list.follow = false;
        let here = format!("frame {}: {}", t.packet, t.what);
        if let Some(pos) = self.list.view.position(&self.store, row) {
            self.list.anchor = None;
            self.select(pos);
            self.notice = Some((here, false));
            return;
        }
        let unscanned = row >= self.list.view.scanned();
        if unscanned && self.list.view.matches(&self.store, row) {
            // The filter lets it through but has not got that far: select it once it has.
            self.list.anchor = Some(row);
            self.grown();
            self.notice = Some((here, false));
        } else {
            let old = self.list.view.filter().as_str().to_string();
            self.list.view = View::default();
            self.list.anchor = None;
            let pos = self.list.view.position(&self.store, row).unwrap_or(0);
            self.select(pos);
            self.notice = Some((
                format!("{here} (filter \"{old}\" cleared: it hid this message)"),
                false,
            ));
        }
    }
}
