//! Colours and styles, in one place so that the panes agree.

use ratatui::style::{Color, Modifier, Style};
use ratatui::text::Span;
use ratatui::widgets::{Block, Borders};

pub const REQUEST: Color = Color::Cyan;
pub const RESPONSE: Color = Color::Green;
pub const ERROR: Color = Color::LightRed;
pub const WARNING: Color = Color::Yellow;
pub const DIM: Color = Color::DarkGray;

/// An error: a refused request, a malformed message.
pub const ALARM: Style = Style::new().fg(ERROR).add_modifier(Modifier::BOLD);
/// Column heads of the list and the tables.
pub const HEADS: Style = Style::new().add_modifier(Modifier::BOLD.union(Modifier::UNDERLINED));
/// The selected field's bytes in the hex pane.
pub const FIELD_BYTES: Style = Style::new().fg(Color::White).bg(Color::Blue);
/// The hex cursor.
pub const CURSOR: Style = Style::new().fg(Color::Black).bg(Color::Yellow);
/// A tree line's description.
pub const ABOUT: Style = Style::new().fg(Color::Gray).add_modifier(Modifier::ITALIC);
/// The status bar.
pub const BAR: Style = Style::new().fg(Color::White).bg(Color::Rgb(40, 40, 60));
/// Keys, in the help.
pub const KEY: Style = Style::new().fg(Color::Yellow);

/// Colours of election candidates, by node id.
pub const NODES: [Color; 6] = [
    Color::Cyan,
    Color::Magenta,
    Color::Blue,
    Color::LightYellow,
    Color::LightCyan,
    Color::LightMagenta,
];
/// A won election.
pub const WON: Color = Color::LightGreen;
/// The selected election in the chart.
pub const SELECTED: Color = Color::Yellow;

/// A pane's frame: a top border with the title, bright when it has the keyboard.
pub fn pane_block(title: String, focused: bool) -> Block<'static> {
    let style = if focused {
        Style::new().fg(Color::Yellow).add_modifier(Modifier::BOLD)
    } else {
        Style::new().fg(DIM)
    };
    Block::new()
        .borders(Borders::TOP)
        .border_style(style)
        .title(Span::styled(title, style))
}

/// The selected row, fainter when its pane does not have the keyboard.
pub fn selected_style(focused: bool) -> Style {
    if focused {
        Style::new().add_modifier(Modifier::REVERSED)
    } else {
        Style::new().bg(Color::DarkGray)
    }
}
