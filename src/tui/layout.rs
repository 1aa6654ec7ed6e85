//! Where each pane sits for a terminal size, and text fitted to columns.

use ratatui::layout::{Constraint, Layout, Rect};

/// Where each pane sits. Panes have a top border with their title.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Areas {
    pub list: Rect,
    pub tree: Rect,
    pub hex: Rect,
    pub status: Rect,
    /// The analysis tab: the election chart, the elections table and the coordinator table.
    pub chart: Rect,
    pub elections: Rect,
    pub coordinators: Rect,
}

impl Areas {
    /// Message rows that fit under the list's title and column heads.
    pub fn list_rows(&self) -> usize {
        usize::from(self.list.height.saturating_sub(2))
    }
    pub fn tree_rows(&self) -> usize {
        usize::from(self.tree.height.saturating_sub(1))
    }
    pub fn hex_rows(&self) -> usize {
        usize::from(self.hex.height.saturating_sub(1))
    }
    /// Table rows that fit under a table's title and column heads.
    pub fn election_rows(&self) -> usize {
        usize::from(self.elections.height.saturating_sub(2))
    }
    pub fn coordinator_rows(&self) -> usize {
        usize::from(self.coordinators.height.saturating_sub(2))
    }
}

/// The layout for a terminal of this size: list, tree and hex stacked, status at the bottom.
pub fn areas(full: Rect) -> Areas {
    let [main, status] = Layout::vertical([Constraint::Min(0), Constraint::Length(1)]).areas(full);
    let [list, tree, hex] = Layout::vertical([
        Constraint::Percentage(40),
        Constraint::Percentage(35),
        Constraint::Fill(1),
    ])
    .areas(main);
    let [chart, elections, coordinators] = Layout::vertical([
        Constraint::Percentage(45),
        Constraint::Percentage(30),
        Constraint::Fill(1),
    ])
    .areas(main);
    Areas {
        list,
        tree,
        hex,
        status,
        chart,
        elections,
        coordinators,
    }
}

/// Fits `s` into `w` columns, padded; `right` aligns to the right.
pub fn fit(s: &str, w: usize, right: bool) -> String {
    let n = s.chars().count();
    if n > w {
        let mut t: String = s.chars().take(w.saturating_sub(1)).collect();
        t.push('…');
        t
    } else if right {
        format!("{s:>w$}")
    } else {
        format!("{s:<w$}")
    }
}
