//! `kwire tui`: a three-pane terminal UI (message list, detail tree, hex) in
//! the manner of Wireshark and termshark.
//!
//! A loader thread runs the pipeline and sends compact rows ([`store`]); the
//! [`app::App`] holds the state and routes keys; [`ui::draw`] renders it.
//! The tree and hex of the selected message are decoded on demand ([`detail`]).
//!
//! Each pane has a module with its state, what its keys mean, and how it is
//! drawn: [`list`], [`tree`], [`hex`], and the analysis tab's [`tables`] and
//! chart. Imports go one way: `ui` → `app` → the panes → [`scroll`],
//! [`layout`] and the theme.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

pub mod app;
mod chart;
pub mod clipboard;
pub mod detail;
pub mod export;
pub mod hex;
pub mod layout;
pub mod list;
pub mod loader;
mod order;
pub mod scroll;
pub mod store;
pub mod tables;
mod theme;
pub mod tree;
pub mod ui;
pub mod values;

pub use app::{App, Pane, Tab};
pub use loader::{Input, Loader, Update, load_all};
pub use tables::Table;

use crate::pipeline::Config;
use crossterm::event::{self, DisableMouseCapture, EnableMouseCapture, Event, KeyEventKind};
use crossterm::execute;
use crossterm::terminal::{
    EnterAlternateScreen, LeaveAlternateScreen, disable_raw_mode, enable_raw_mode,
};
use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;
use ratatui::layout::Rect;
use std::io::{self, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::TryRecvError;
use std::sync::{Arc, Once};
use std::time::{Duration, Instant};

/// Whether the terminal is in the TUI's modes and needs restoring.
static ACTIVE: AtomicBool = AtomicBool::new(false);
static HOOK: Once = Once::new();

/// Leaves raw mode, the alternate screen and mouse capture; safe to call twice.
pub fn restore_terminal() {
    if ACTIVE.swap(false, Ordering::SeqCst) {
        let _ = execute!(
            io::stdout(),
            DisableMouseCapture,
            LeaveAlternateScreen,
            crossterm::cursor::Show
        );
        let _ = disable_raw_mode();
    }
}

/// The terminal in the TUI's modes: raw, on the alternate screen, with mouse
/// capture. Dropping it restores the terminal, and so does a panic meanwhile,
/// before the panic message is printed.
pub struct TerminalGuard {
    _private: (),
}

impl TerminalGuard {
    pub fn enter() -> io::Result<TerminalGuard> {
        HOOK.call_once(|| {
            let previous = std::panic::take_hook();
            std::panic::set_hook(Box::new(move |info| {
                // Restore first, so the panic message lands on a sane terminal.
                restore_terminal();
                previous(info);
            }));
        });
        enable_raw_mode()?;
        ACTIVE.store(true, Ordering::SeqCst);
        let guard = TerminalGuard { _private: () };
        execute!(io::stdout(), EnterAlternateScreen, EnableMouseCapture)?;
        Ok(guard)
    }
}

impl Drop for TerminalGuard {
    fn drop(&mut self) {
        restore_terminal();
    }
}

/// What the TUI shows and how.
pub struct Options {
    pub config: Config,
    /// A display filter to start with.
    pub filter: Option<String>,
}

/// Runs the TUI until the user quits.
pub fn run(input: Input, opts: Options) -> io::Result<()> {
    let mut app = App::new(&input.label, input.live);
    if let Some(f) = &opts.filter {
        app.apply_filter(f).map_err(io::Error::other)?;
    }
    // `w` reads the capture files again (merged as before, so packet numbers
    // agree); a live capture or standard input cannot be.
    let paths = input.paths.clone();
    if !input.live && !paths.is_empty() && paths.iter().all(|p| p.is_file()) {
        app.set_reopen(Arc::new(move || crate::capture::Source::open_files(&paths)));
    }
    let loader = Loader::spawn(input, opts.config)?;
    let guard = TerminalGuard::enter()?;
    let result = event_loop(&mut app, &loader);
    loader.stop();
    drop(guard);
    result
}

fn event_loop(app: &mut App, loader: &Loader) -> io::Result<()> {
    let mut term = Terminal::new(CrosstermBackend::new(io::stdout()))?;
    let size = term.size()?;
    app.resize(Rect::new(0, 0, size.width, size.height));
    let mut dirty = true;
    let mut last_draw = Instant::now() - Duration::from_secs(1);
    loop {
        // Take what the loader has, but never for so long that keys wait.
        let start = Instant::now();
        while start.elapsed() < Duration::from_millis(20) {
            match loader.updates.try_recv() {
                Ok(u) => {
                    app.update(u);
                    dirty = true;
                }
                Err(TryRecvError::Empty) => break,
                Err(TryRecvError::Disconnected) if app.done() => break,
                // The loader died without saying it was done: it panicked.
                Err(TryRecvError::Disconnected) => {
                    return Err(io::Error::other("the capture loader stopped unexpectedly"));
                }
            }
        }
        if app.scan_filter(Duration::from_millis(15)) {
            dirty = true;
        }
        loader.ui_busy(app.view().unscanned(app.store()) > 0);
        if app.poll_jobs() {
            dirty = true;
        }
        // While loading, redraw at most 20 times a second; input redraws at once.
        if dirty && last_draw.elapsed() >= Duration::from_millis(50) {
            term.draw(|f| ui::draw(app, f))?;
            last_draw = Instant::now();
            dirty = false;
        }
        let busy = dirty || app.view().unscanned(app.store()) > 0;
        // While loading, the loader waits whenever its few batches in flight are not taken.
        let wait = if !app.done() {
            Duration::from_millis(2)
        } else if busy {
            Duration::from_millis(10)
        } else {
            Duration::from_millis(100)
        };
        if event::poll(wait)? {
            // Handle every queued event before drawing again, so key repeat never lags.
            loop {
                match event::read()? {
                    Event::Key(k) if k.kind != KeyEventKind::Release => app.on_key(k),
                    Event::Mouse(m) => app.on_mouse(m),
                    Event::Resize(w, h) => app.resize(Rect::new(0, 0, w, h)),
                    _ => {}
                }
                if app.quit() || !event::poll(Duration::ZERO)? {
                    break;
                }
            }
            if app.quit() {
                return Ok(());
            }
            term.draw(|f| ui::draw(app, f))?;
            last_draw = Instant::now();
            dirty = false;
            if let Some(text) = app.take_clipboard() {
                let mut out = io::stdout();
                out.write_all(clipboard::osc52(&text).as_bytes())?;
                out.flush()?;
            }
        }
    }
}
