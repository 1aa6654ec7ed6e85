//! Rendering of `kwire tui` with ratatui's TestBackend, snapshotted: the three
//! panes on a real capture, a selected field's highlighted bytes, the filter,
//! the help screen and an 80×24 terminal. Key handling is tested apart, in
//! tests/tui_app.rs.

mod common;

use common::*;
use kwire::pipeline::Config;
use kwire::tui::{App, Input, load_all, ui};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Color;

const ELECTION: &str = "captures/kraft-initial-election.pcap";

/// The app after loading `path` whole, laid out for a `w`×`h` terminal.
fn loaded(path: &str, w: u16, h: u16) -> App {
    let mut app = App::new(path, false);
    for u in load_all(Input::file(path).unwrap(), Config::default()) {
        app.update(u);
    }
    app.resize(Rect::new(0, 0, w, h));
    app.settle();
    app
}

fn render(app: &App) -> Buffer {
    let a = app.areas();
    let (w, h) = (a.list.width, a.status.y + 1);
    let mut t = Terminal::new(TestBackend::new(w, h)).unwrap();
    t.draw(|f| ui::draw(app, f)).unwrap();
    t.backend().buffer().clone()
}

/// The screen as text, trailing blanks trimmed.
fn text(b: &Buffer) -> String {
    let mut out = String::new();
    for y in 0..b.area.height {
        let line: String = (0..b.area.width).map(|x| b[(x, y)].symbol()).collect();
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// The screen as text; under each line with highlighted cells, a line marking
/// the selected field's bytes with `^` and the hex cursor with `#`.
fn text_with_marks(b: &Buffer) -> String {
    let mut out = String::new();
    for y in 0..b.area.height {
        let line: String = (0..b.area.width).map(|x| b[(x, y)].symbol()).collect();
        out.push_str(line.trim_end());
        out.push('\n');
        let marks: String = (0..b.area.width)
            .map(|x| match b[(x, y)].bg {
                Color::Blue => '^',
                Color::Yellow => '#',
                _ => ' ',
            })
            .collect();
        if !marks.trim().is_empty() {
            out.push_str(marks.trim_end());
            out.push('\n');
        }
    }
    out
}

/// The view position of the message completed by packet `frame`.
fn position_of_frame(app: &App, frame: u64) -> usize {
    (0..app.shown())
        .find(|&p| {
            app.view()
                .row_at(app.store(), p)
                .and_then(|r| app.store().row(r))
                .is_some_and(|r| r.packet == frame)
        })
        .unwrap_or_else(|| panic!("no message in frame {frame}"))
}

fn key(c: char) -> crossterm::event::KeyEvent {
    crossterm::event::KeyEvent::from(crossterm::event::KeyCode::Char(c))
}

#[test]
fn three_panes_on_a_real_capture() {
    let mut app = loaded(ELECTION, 120, 40);
    // The first Vote request of the election: a pre-vote from replica 2 to voter 1.
    let pos = position_of_frame(&app, 201);
    app.select(pos);
    let b = render(&app);
    let s = text(&b);
    assert!(s.contains("Vote v2 request"), "{s}");
    assert!(s.contains("248/248 msgs"), "{s}");
    insta::assert_snapshot!("three_panes", s);
}

#[test]
fn requests_responses_and_errors_have_their_colours() {
    let mut app = loaded(ELECTION, 120, 40);
    app.apply_filter("vote").unwrap();
    app.settle();
    app.select(0);
    let b = render(&app);
    let fg_of_line = |needle: &str| {
        let y = (0..b.area.height)
            .find(|&y| {
                let l: String = (0..b.area.width).map(|x| b[(x, y)].symbol()).collect();
                l.contains(needle)
            })
            .unwrap_or_else(|| panic!("no line with {needle}"));
        b[(0, y)].fg
    };
    // Frame 209 is a request, 214 a response, 224 the FENCED_LEADER_EPOCH refusal.
    let req = fg_of_line("209 1.227141");
    let resp = fg_of_line("214 1.245967");
    let err = fg_of_line("224 1.277865");
    assert_ne!(req, resp);
    assert_ne!(err, req);
    assert_ne!(err, resp);
}

#[test]
fn a_selected_field_highlights_its_bytes() {
    let mut app = loaded(ELECTION, 120, 40);
    app.select(position_of_frame(&app, 224));
    let d = app.detail().cloned().unwrap();
    let (i, line) = d
        .lines
        .iter()
        .enumerate()
        .find(|(_, l)| l.label.contains("FENCED_LEADER_EPOCH"))
        .unwrap();
    // Selecting the field's first byte in the hex pane selects the field.
    app.set_focus(kwire::tui::Pane::Hex);
    app.select_byte(line.offset);
    assert_eq!(app.tree_sel(), i);
    assert_eq!(line.len, 2);
    // With the hex pane focused, the cursor (#) sits on the field's first byte.
    let s = text_with_marks(&render(&app));
    assert!(
        s.contains("ErrorCode int16 = 74 (FENCED_LEADER_EPOCH)"),
        "{s}"
    );
    assert!(s.contains("## ^^"), "{s}");
    // With the tree focused, every byte of the field is marked (^).
    app.set_focus(kwire::tui::Pane::Tree);
    let s = text_with_marks(&render(&app));
    insta::assert_snapshot!("selected_field", s);
}

#[test]
fn the_filter_and_its_prompt() {
    let mut app = loaded(ELECTION, 120, 40);
    for c in "/vote response".chars() {
        app.on_key(key(c));
    }
    let prompt = text(&render(&app));
    assert!(prompt.contains("filter: /vote response█"), "{prompt}");
    app.on_key(crossterm::event::KeyCode::Enter.into());
    app.settle();
    let s = text(&render(&app));
    insta::assert_snapshot!("filtered", s);
}

#[test]
fn the_help_screen() {
    let mut app = loaded(ELECTION, 80, 24);
    app.on_key(key('?'));
    insta::assert_snapshot!("help", text(&render(&app)));
}

#[test]
fn eighty_by_twenty_four() {
    let mut app = loaded("captures/transactional-producer.pcap", 80, 24);
    // The transactional FindCoordinator request, in the second row.
    app.select(position_of_frame(&app, 9));
    let s = text(&render(&app));
    assert!(s.lines().all(|l| l.chars().count() <= 80));
    insta::assert_snapshot!("eighty_by_twenty_four", s);
}

#[test]
fn wire_strings_cannot_reach_the_terminal() {
    const HOSTILE: &str = "\x1b]0;pwned\x07\x1b[2J";
    let client = format!("app{HOSTILE}");
    let key_name = format!("grp{HOSTILE}");
    let host = format!("evil{HOSTILE}.example");
    let mut f = flow();
    f.syn_handshake()
        .client_send(&fc_req(2, 1, &client, &key_name))
        .server_send(&fc_resp(2, 1, &key_name, 7, &host, 9092, 0))
        .client_send(&raw_req(3, 1, 2, &client, "00000000"));
    let file = pcap(&[&f]);
    let path = file.path().to_str().unwrap();
    for row in 0..3 {
        let mut app = loaded(path, 120, 40);
        app.select(row);
        let b = render(&app);
        for cell in b.content() {
            assert!(
                !cell.symbol().chars().any(|c| c.is_control()),
                "a control character reached the screen: {:?}",
                cell.symbol()
            );
        }
        let s = text(&b);
        assert!(s.contains("\\x1b]0;pwned\\x07\\x1b[2J"), "{s}");
    }
}

#[test]
fn the_tree_names_error_codes_and_writes_uuids_canonically() {
    let mut app = loaded(ELECTION, 120, 40);
    app.select(position_of_frame(&app, 201));
    let d = app.detail().cloned().unwrap();
    let labels: Vec<&str> = d.lines.iter().map(|l| l.label.as_str()).collect();
    assert!(labels.contains(&"ReplicaDirectoryId uuid = 203b722c-5a96-8b95-8f12-fd2980dfdf30"));
    // Scrolled to the UUID, the selected line carries the schema's description.
    let i = labels
        .iter()
        .position(|l| l.starts_with("ReplicaDirectoryId"))
        .unwrap();
    app.select_byte(d.lines[i].offset);
    let s = text(&render(&app));
    let at = s
        .lines()
        .position(|l| {
            l.ends_with(
                "ReplicaDirectoryId uuid = 203b722c-5a96-8b95-8f12-fd2980dfdf30 [0x0058, 16B]",
            )
        })
        .unwrap_or_else(|| panic!("{s}"));
    // Too long for one row at 120 columns: the description is on the row below.
    assert_eq!(
        s.lines().nth(at + 1).unwrap().trim(),
        "The directory id of the voter sending the request"
    );
    app.select(position_of_frame(&app, 224));
    let d = app.detail().cloned().unwrap();
    assert!(
        d.lines
            .iter()
            .any(|l| l.label == "ErrorCode int16 = 74 (FENCED_LEADER_EPOCH)" && l.alarming)
    );
}

const REELECTION: &str = "captures/kraft-reelection.pcap";

#[test]
fn analysis_tab_on_a_reelection() {
    let mut app = loaded(REELECTION, 120, 40);
    app.on_key(key('t'));
    let s = text(&render(&app));
    // As `kwire stats` reports: epochs 1 to 4, leaders 2, 1, 2, 3.
    assert!(s.contains("4 epochs"), "{s}");
    insta::assert_snapshot!("analysis_tab", s);
}

#[test]
fn analysis_tab_at_eighty_by_twenty_four() {
    let mut app = loaded(REELECTION, 80, 24);
    app.on_key(key('2'));
    let s = text(&render(&app));
    insta::assert_snapshot!("analysis_tab_80x24", s);
}

#[test]
fn analysis_tab_with_a_coordinator() {
    let mut app = loaded("captures/consumer-group-java.pcap", 120, 30);
    app.on_key(key('t'));
    app.on_key(crossterm::event::KeyEvent::from(
        crossterm::event::KeyCode::Tab,
    ));
    let s = text(&render(&app));
    // As `kwire stats` reports: the group's last answer is node 4, first answered in frame 63.
    assert!(s.contains("node 4 127.0.0.1:19392"), "{s}");
    insta::assert_snapshot!("analysis_tab_coordinator", s);
}
