//! The hex pane: the selected message's stored bytes, the cursor, the keys
//! that move it, and its rendering. The selected field's bytes are marked.

use super::detail::Detail;
use super::scroll::Scroll;
use super::theme::{self, DIM};
use crossterm::event::KeyCode;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

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

/// The hex pane's state: `sel` is the cursor's byte, `top` the first row on screen.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Hex {
    pub scroll: Scroll,
}

impl Hex {
    /// Scrolls `rows` rows of `per` bytes to show the cursor, and the whole
    /// selected `field` (offset, length) when it fits, else its start.
    pub fn keep_in_view(&mut self, per: usize, rows: usize, field: Option<(usize, usize)>) {
        let h = rows.max(1);
        let per = per.max(1);
        let row = self.scroll.sel / per;
        let (first, last) = match field {
            Some((off, len)) if len > 0 => (off / per, (off + len - 1) / per),
            _ => (row, row),
        };
        let top = self.scroll.top;
        self.scroll.top = if last + 1 - first.min(last) <= h {
            // The whole field fits: keep it on screen.
            if first < top {
                first
            } else if last >= top + h {
                last + 1 - h
            } else {
                top
            }
        } else {
            first
        };
        self.scroll.show(row, h);
    }

    /// The byte under screen position (`x`, `y`) of `len` bytes drawn in `area`.
    pub fn byte_at(&self, area: Rect, len: usize, x: u16, y: u16) -> Option<usize> {
        let first = area.y + 1;
        if y < first {
            return None;
        }
        let g = HexGeom::new(area.width, len);
        let row = self.scroll.top + usize::from(y - first);
        let col = g.byte_at(x.saturating_sub(area.x))?;
        let b = row * g.per_row + col;
        (b < len).then_some(b)
    }
}

/// What a key does in the hex pane.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    Move(isize),
    /// Put the cursor on this byte (clamped to the last).
    Byte(usize),
    /// Go to the tree.
    Tree,
}

/// `per` bytes a row, `rows` rows a page.
pub fn key(code: KeyCode, per: usize, rows: usize) -> Option<Action> {
    let per = per.max(1) as isize;
    let page = per * rows.max(1) as isize;
    Some(match code {
        KeyCode::Left | KeyCode::Char('h') => Action::Move(-1),
        KeyCode::Right | KeyCode::Char('l') => Action::Move(1),
        KeyCode::Up | KeyCode::Char('k') => Action::Move(-per),
        KeyCode::Down | KeyCode::Char('j') => Action::Move(per),
        KeyCode::PageUp => Action::Move(-page),
        KeyCode::PageDown => Action::Move(page),
        KeyCode::Home | KeyCode::Char('g') => Action::Byte(0),
        KeyCode::End | KeyCode::Char('G') => Action::Byte(usize::MAX),
        KeyCode::Enter | KeyCode::Char(' ') => Action::Tree,
        _ => return None,
    })
}

/// Draws `d`'s bytes with the selected `field` (offset, length) marked.
pub fn draw(
    f: &mut Frame<'_>,
    area: Rect,
    d: Option<&Detail>,
    hex: &Hex,
    field: Option<(usize, usize)>,
    focused: bool,
) {
    let cursor = hex.scroll.sel;
    let title = match (d, field) {
        (Some(d), Some((off, len))) => format!(
            " Bytes: {} stored; field [0x{off:04x}, {len}B], cursor 0x{cursor:04x} ",
            d.bytes.len(),
        ),
        _ => " Bytes ".to_string(),
    };
    let block = theme::pane_block(title, focused);
    let inner = block.inner(area);
    f.render_widget(block, area);
    let Some(d) = d else { return };
    let g = HexGeom::new(area.width, d.bytes.len());
    let in_field = |b: usize| field.is_some_and(|(off, len)| b >= off && b < off + len);
    let mut lines = Vec::new();
    for r in hex.scroll.top..hex.scroll.top + usize::from(inner.height) {
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
            if focused && b == cursor {
                theme::CURSOR
            } else if in_field(b) {
                theme::FIELD_BYTES
            } else {
                Style::new()
            }
        };
        for j in 0..g.per_row {
            if j == 8 && g.per_row > 8 {
                spans.push(Span::raw(" "));
            }
            match chunk.get(j) {
                // A redacted secret's bytes are masked, never shown (`--show-secrets` shows them).
                Some(_) if d.is_hidden(start + j) => {
                    spans.push(Span::styled("**", style_of(start + j)));
                }
                Some(byte) => spans.push(Span::styled(format!("{byte:02x}"), style_of(start + j))),
                None => spans.push(Span::raw("  ")),
            }
            spans.push(Span::raw(" "));
        }
        spans.push(Span::raw(" "));
        for (j, byte) in chunk.iter().enumerate() {
            // Only printable ASCII reaches the terminal; everything else is a dot.
            let c = if d.is_hidden(start + j) {
                '*'
            } else if (0x20..0x7f).contains(byte) {
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

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use ratatui::Terminal;
    use ratatui::backend::TestBackend;

    #[test]
    fn redacted_bytes_are_masked_in_hex_and_ascii() {
        let d = Detail {
            row: 0,
            title: String::new(),
            lines: Vec::new(),
            notes: Vec::new(),
            bytes: b"\0\0\0\x0cuser\0hunter2!".to_vec(),
            hidden: vec![(9, 8)],
        };
        let mut t = Terminal::new(TestBackend::new(90, 4)).unwrap();
        t.draw(|f| draw(f, f.area(), Some(&d), &Hex::default(), None, false))
            .unwrap();
        let screen: String = t
            .backend()
            .buffer()
            .content()
            .iter()
            .map(|c| c.symbol())
            .collect();
        assert!(screen.contains("75 73 65 72  00 ** ** **"), "{screen}");
        assert!(screen.contains("....user.*******"), "{screen}");
        // Neither the secret's hex nor its text is on screen.
        assert!(!screen.contains("68 75 6e"), "{screen}");
        assert!(!screen.contains("hunter2"), "{screen}");
    }
}
