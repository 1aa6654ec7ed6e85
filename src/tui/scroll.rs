//! A pane's selection and the first item it shows, kept together so that
//! every pane scrolls the same way.

/// The selected item and the first one on screen.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Scroll {
    pub sel: usize,
    pub top: usize,
}

impl Scroll {
    /// Moves `top` the least so that item `at` is among the `h` shown.
    pub fn show(&mut self, at: usize, h: usize) {
        if at < self.top {
            self.top = at;
        } else if at >= self.top + h {
            self.top = at + 1 - h;
        }
    }

    /// No empty rows below the last of `n` items when they are enough to fill `h` rows.
    pub fn fill(&mut self, n: usize, h: usize) {
        if n >= h && self.top + h > n {
            self.top = n - h;
        }
    }

    /// Keeps the selection among `n` items and on screen in `h` rows, the last
    /// item on the last row when there are not enough to fill them.
    pub fn fit(&mut self, n: usize, h: usize) {
        let h = h.max(1);
        self.sel = self.sel.min(n.saturating_sub(1));
        self.show(self.sel, h);
        if self.top + h > n {
            self.top = n.saturating_sub(h);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_selection_stays_on_screen() {
        let mut s = Scroll { sel: 12, top: 0 };
        s.show(s.sel, 5);
        assert_eq!(s.top, 8);
        s.show(3, 5);
        assert_eq!(s.top, 3);
        s.fill(6, 5);
        assert_eq!(s.top, 1);
        let mut t = Scroll { sel: 9, top: 4 };
        t.fit(3, 5);
        assert_eq!(t, Scroll { sel: 2, top: 0 });
    }
}
