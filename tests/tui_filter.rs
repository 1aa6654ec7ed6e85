//! The TUI's `/` prompt: the filter language, errors that keep the old filter,
//! and the history on Up and Down.

mod common;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use kwire::pipeline::Config;
use kwire::tui::{App, Input, load_all};
use ratatui::layout::Rect;

const ELECTION: &str = "captures/kraft-initial-election.pcap";

fn loaded(path: &str) -> App {
    let mut app = App::new(path, false);
    for u in load_all(Input::file(path).unwrap(), Config::default()) {
        app.update(u);
    }
    app.resize(Rect::new(0, 0, 120, 40));
    app.settle();
    app
}

fn key(app: &mut App, c: KeyCode) {
    app.on_key(KeyEvent::from(c));
}

fn typed(app: &mut App, s: &str) {
    for c in s.chars() {
        key(app, KeyCode::Char(c));
    }
}

/// Opens the prompt, clears it, types `f` and presses Enter.
fn filter(app: &mut App, f: &str) {
    key(app, KeyCode::Char('/'));
    app.on_key(KeyEvent::new(KeyCode::Char('u'), KeyModifiers::CONTROL));
    typed(app, f);
    key(app, KeyCode::Enter);
    app.settle();
}

#[test]
fn the_prompt_takes_the_filter_language() {
    let mut app = loaded(ELECTION);
    filter(
        &mut app,
        "Topics.Partitions.VoteGranted == true && latency_us > 20000",
    );
    assert_eq!(app.input(), None, "{:?}", app.notice());
    let granted = app.shown();
    assert!(granted > 0 && granted < 248);
    filter(&mut app, "vote response VoteGranted latency_us > 20000");
    assert_eq!(app.shown(), granted);
    filter(&mut app, "vote or find-coordinator");
    assert!(app.shown() > granted);
}

#[test]
fn a_bad_filter_shows_its_error_and_keeps_the_old_one() {
    let mut app = loaded(ELECTION);
    filter(&mut app, "vote response");
    let shown = app.shown();
    filter(&mut app, "VoteGrantd == false");
    // The prompt stays open with the text, the reason is in the status bar.
    assert_eq!(app.input(), Some("VoteGrantd == false"));
    let (why, error) = app.notice().unwrap();
    assert!(error);
    assert_eq!(
        why,
        "unknown field \"VoteGrantd\" at column 1; did you mean VoteGranted?"
    );
    assert_eq!(app.view().filter().as_str(), "vote response");
    assert_eq!(app.shown(), shown);
    assert_eq!(app.history(), ["vote response"]);
    key(&mut app, KeyCode::Esc);
    assert_eq!((app.input(), app.notice()), (None, None));
    assert_eq!(app.shown(), shown);
}

#[test]
fn up_and_down_walk_the_history() {
    let mut app = loaded(ELECTION);
    // Nothing to recall yet: Up changes nothing.
    key(&mut app, KeyCode::Char('/'));
    typed(&mut app, "vo");
    key(&mut app, KeyCode::Up);
    assert_eq!(app.input(), Some("vo"));
    key(&mut app, KeyCode::Esc);
    for f in ["vote", "response", "vote", "error"] {
        filter(&mut app, f);
    }
    // An unusable filter and a repeat of the last one are not kept.
    filter(&mut app, "corr=x");
    key(&mut app, KeyCode::Esc);
    filter(&mut app, "error");
    assert_eq!(app.history(), ["vote", "response", "vote", "error"]);
    // The prompt opens with the filter in force; Up goes to the one before it.
    key(&mut app, KeyCode::Char('/'));
    assert_eq!(app.input(), Some("error"));
    key(&mut app, KeyCode::Up);
    assert_eq!(app.input(), Some("vote"));
    key(&mut app, KeyCode::Up);
    assert_eq!(app.input(), Some("response"));
    key(&mut app, KeyCode::Up);
    key(&mut app, KeyCode::Up);
    assert_eq!(app.input(), Some("vote"), "the oldest stays");
    key(&mut app, KeyCode::Down);
    assert_eq!(app.input(), Some("response"));
    key(&mut app, KeyCode::Down);
    key(&mut app, KeyCode::Down);
    assert_eq!(app.input(), Some("error"));
    // Past the newest: back to what was typed.
    key(&mut app, KeyCode::Down);
    assert_eq!(app.input(), Some("error"));
    // A recalled filter can be edited, then applied.
    key(&mut app, KeyCode::Up);
    key(&mut app, KeyCode::Up);
    typed(&mut app, " request");
    assert_eq!(app.input(), Some("response request"));
    key(&mut app, KeyCode::Enter);
    app.settle();
    assert_eq!(app.view().filter().as_str(), "response request");
    assert_eq!(app.shown(), 0);
    assert_eq!(app.history().last().unwrap(), "response request");
    // Down with nothing recalled keeps the text.
    key(&mut app, KeyCode::Char('/'));
    app.on_key(KeyEvent::new(KeyCode::Char('u'), KeyModifiers::CONTROL));
    typed(&mut app, "draft");
    key(&mut app, KeyCode::Down);
    assert_eq!(app.input(), Some("draft"));
    key(&mut app, KeyCode::Up);
    assert_eq!(app.input(), Some("response request"));
    key(&mut app, KeyCode::Down);
    assert_eq!(app.input(), Some("draft"));
}
