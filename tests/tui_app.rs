//! Key sequences on the TUI's state, without rendering: the request/response
//! jump, the filter, expand/collapse, the hex pane selecting fields, movement
//! and the mouse.

mod common;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers, MouseButton, MouseEvent, MouseEventKind};
use kwire::codec::Kind;
use kwire::pipeline::Config;
use kwire::tui::app::TreeItem;
use kwire::tui::{App, Input, Pane, load_all};
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

fn press(app: &mut App, keys: &str) {
    for c in keys.chars() {
        app.on_key(KeyEvent::from(KeyCode::Char(c)));
    }
}

fn code(app: &mut App, c: KeyCode) {
    app.on_key(KeyEvent::from(c));
}

/// Types a filter after `/` and applies it.
fn filter(app: &mut App, f: &str) {
    press(app, "/");
    app.on_key(KeyEvent::new(KeyCode::Char('u'), KeyModifiers::CONTROL));
    for c in f.chars() {
        code(app, KeyCode::Char(c));
    }
    code(app, KeyCode::Enter);
    app.settle();
}

/// (frame, kind, corr) of the selected message.
fn selected(app: &App) -> (u64, Kind, Option<i32>) {
    let r = app.store().row(app.selected_row().unwrap()).unwrap();
    (r.packet, r.kind(), r.correlation_id())
}

fn tree_label(app: &App) -> String {
    app.detail().unwrap().lines[app.tree_sel()].label.clone()
}

#[test]
fn loading_keeps_every_message() {
    let app = loaded(ELECTION);
    // As many as `kwire read` prints for this capture.
    assert_eq!(app.store().len(), 248);
    assert_eq!(app.shown(), 248);
    assert!(app.done());
    assert_eq!(app.progress().fraction, Some(1.0));
    assert_eq!(selected(&app).0, 25);
}

#[test]
fn r_jumps_between_a_request_and_its_response() {
    let mut app = loaded(ELECTION);
    filter(&mut app, "vote");
    // The first Vote request (frame 201, corr 26) is answered in frame 214.
    assert_eq!(selected(&app), (201, Kind::Request, Some(26)));
    press(&mut app, "r");
    assert_eq!(selected(&app), (214, Kind::Response, Some(26)));
    press(&mut app, "r");
    assert_eq!(selected(&app), (201, Kind::Request, Some(26)));
    // With only responses shown, the request is named but not reachable.
    filter(&mut app, "vote response");
    assert_eq!(selected(&app), (214, Kind::Response, Some(26)));
    press(&mut app, "r");
    assert_eq!(selected(&app).0, 214);
    let (notice, is_error) = app.notice().cloned().unwrap();
    assert!(is_error);
    assert_eq!(notice, "the request (frame 201) is hidden by the filter");
}

#[test]
fn r_on_a_message_without_its_partner_says_so() {
    let mut app = loaded("captures/kraft-reelection.pcap");
    // Frame 3 answers a request sent before the capture began.
    filter(&mut app, "corr=62");
    assert_eq!(selected(&app), (3, Kind::Response, Some(62)));
    press(&mut app, "r");
    assert_eq!(
        app.notice().cloned().unwrap().0,
        "no request was captured for this message"
    );
}

#[test]
fn the_filter_narrows_keeps_the_selection_and_reports_errors() {
    let mut app = loaded(ELECTION);
    filter(&mut app, "vote error");
    assert_eq!(app.shown(), 1);
    assert_eq!(selected(&app).0, 224);
    assert_eq!(app.view().filter().as_str(), "vote error");
    // Clearing the filter keeps frame 224 selected among all messages.
    filter(&mut app, "");
    assert_eq!(app.shown(), 248);
    assert_eq!(selected(&app).0, 224);
    // Free text matches the summary line.
    filter(&mut app, "prevote");
    assert!(app.shown() > 0);
    for p in 0..app.shown() {
        let r = app
            .store()
            .row(app.view().row_at(app.store(), p).unwrap())
            .unwrap();
        assert_eq!((r.api_key(), r.kind()), (Some(52), Kind::Request));
    }
    // An unparsable filter leaves the prompt open with the reason; Esc closes it.
    press(&mut app, "/");
    app.on_key(KeyEvent::new(KeyCode::Char('u'), KeyModifiers::CONTROL));
    press(&mut app, "corr=x");
    code(&mut app, KeyCode::Enter);
    assert_eq!(app.input(), Some("corr=x"));
    assert!(app.notice().unwrap().0.contains("not a number"));
    code(&mut app, KeyCode::Esc);
    assert_eq!(app.input(), None);
    assert_eq!(app.view().filter().as_str(), "prevote");
    // version_source=inferred: nothing in this capture was inferred.
    filter(&mut app, "version_source=inferred");
    assert_eq!(app.shown(), 0);
    assert_eq!(app.selected_row(), None);
    assert!(app.detail().is_none());
}

#[test]
fn the_filter_runs_incrementally() {
    let mut app = loaded(ELECTION);
    app.apply_filter("response").unwrap();
    // Nothing is looked at until the filter is given time.
    assert_eq!(app.view().unscanned(app.store()), 248);
    assert_eq!(app.shown(), 0);
    app.settle();
    assert_eq!(app.view().unscanned(app.store()), 0);
    assert!(app.shown() > 100);
}

#[test]
fn enter_collapses_and_expands_and_the_choice_is_kept() {
    let mut app = loaded(ELECTION);
    filter(&mut app, "vote");
    code(&mut app, KeyCode::Tab);
    assert_eq!(app.focus(), Pane::Tree);
    let all = app.tree_items().len();
    // Root, Frame, size, RequestHeader.
    press(&mut app, "jjj");
    assert!(tree_label(&app).starts_with("RequestHeader"));
    code(&mut app, KeyCode::Enter);
    let fewer = app.tree_items().len();
    assert_eq!(fewer, all - 5, "the header's five fields are hidden");
    assert!(app.is_collapsed(app.tree_sel()));
    // The next message shows its header collapsed too.
    code(&mut app, KeyCode::BackTab);
    press(&mut app, "j");
    assert_eq!(app.tree_items().len(), fewer);
    assert!(tree_label(&app).starts_with("RequestHeader"));
    code(&mut app, KeyCode::Tab);
    code(&mut app, KeyCode::Char(' '));
    assert_eq!(app.tree_items().len(), all);
    // Right steps into the children; Left on a leaf goes back to the parent; Left again collapses.
    code(&mut app, KeyCode::Right);
    assert!(tree_label(&app).starts_with("request_api_key"));
    code(&mut app, KeyCode::Left);
    assert!(tree_label(&app).starts_with("RequestHeader"));
    code(&mut app, KeyCode::Left);
    assert!(app.is_collapsed(app.tree_sel()));
    code(&mut app, KeyCode::Right);
    assert!(!app.is_collapsed(app.tree_sel()));
}

#[test]
fn the_hex_pane_selects_the_field_under_the_cursor() {
    let mut app = loaded(ELECTION);
    filter(&mut app, "vote");
    code(&mut app, KeyCode::BackTab);
    assert_eq!(app.focus(), Pane::Hex);
    press(&mut app, "g");
    assert_eq!(app.hex_cursor(), 0);
    assert!(tree_label(&app).starts_with("size int32"));
    // Byte 4 starts the header: the deepest field there is request_api_key.
    press(&mut app, "llll");
    assert_eq!(app.hex_cursor(), 4);
    assert!(tree_label(&app).starts_with("request_api_key int16 = 52 (Vote)"));
    // A collapsed parent opens to show the field selected from the hex pane.
    code(&mut app, KeyCode::BackTab);
    assert_eq!(app.focus(), Pane::Tree);
    code(&mut app, KeyCode::Left);
    assert!(tree_label(&app).starts_with("RequestHeader"));
    code(&mut app, KeyCode::Enter);
    assert!(app.is_collapsed(app.tree_sel()));
    code(&mut app, KeyCode::Tab);
    assert_eq!(app.focus(), Pane::Hex);
    press(&mut app, "j");
    assert_eq!(app.hex_cursor(), 20);
    let d = app.detail().unwrap();
    let l = &d.lines[app.tree_sel()];
    assert!(l.offset <= 20 && 20 < l.offset + l.len);
    assert!(app.tree_items().contains(&TreeItem::Line(app.tree_sel())));
}

#[test]
fn moving_paging_and_following() {
    let mut app = loaded(ELECTION);
    let page = app.areas().list_rows();
    press(&mut app, "jjj");
    assert_eq!(app.sel(), 3);
    press(&mut app, "k");
    assert_eq!(app.sel(), 2);
    code(&mut app, KeyCode::PageDown);
    assert_eq!(app.sel(), 2 + page);
    assert!(app.top() <= app.sel() && app.sel() < app.top() + page);
    press(&mut app, "G");
    assert_eq!(app.sel(), 247);
    assert_eq!(app.top(), 248 - page);
    code(&mut app, KeyCode::PageUp);
    assert_eq!(app.sel(), 247 - page);
    press(&mut app, "g");
    assert_eq!((app.sel(), app.top()), (0, 0));
    press(&mut app, "F");
    assert!(app.follow());
    assert_eq!(app.sel(), 247);
    press(&mut app, "k");
    assert!(!app.follow());
    press(&mut app, "?");
    assert!(app.help());
    press(&mut app, "j");
    assert!(!app.help(), "any key closes the help");
    assert_eq!(app.sel(), 246, "and does nothing else");
    press(&mut app, "q");
    assert!(app.quit());
}

#[test]
fn clicks_select_rows_fields_and_bytes() {
    let mut app = loaded(ELECTION);
    let click = |app: &mut App, column: u16, row: u16| {
        app.on_mouse(MouseEvent {
            kind: MouseEventKind::Down(MouseButton::Left),
            column,
            row,
            modifiers: KeyModifiers::NONE,
        })
    };
    let a = app.areas();
    // The list's second message row (under the title and the column heads): frame 27.
    click(&mut app, 5, a.list.y + 2 + 1);
    assert_eq!(app.sel(), 1);
    assert_eq!(selected(&app), (27, Kind::Request, Some(12)));
    assert_eq!(app.focus(), Pane::List);
    // The tree's fourth line: RequestHeader.
    click(&mut app, 10, a.tree.y + 1 + 3);
    assert_eq!(app.focus(), Pane::Tree);
    assert!(tree_label(&app).starts_with("RequestHeader"));
    // Byte 0x0c, in the first hex row's hex digits, then in its ASCII column.
    let g = kwire::tui::ui::HexGeom::new(a.hex.width, app.detail().unwrap().bytes.len());
    click(&mut app, a.hex.x + g.byte_col(12) as u16 + 1, a.hex.y + 1);
    assert_eq!(app.focus(), Pane::Hex);
    assert_eq!(app.hex_cursor(), 12);
    assert!(tree_label(&app).starts_with("client_id string"));
    click(&mut app, a.hex.x + g.ascii_col(5) as u16, a.hex.y + 1);
    assert_eq!(app.hex_cursor(), 5);
    // Wheel down in the list moves three rows.
    app.on_mouse(MouseEvent {
        kind: MouseEventKind::ScrollDown,
        column: 5,
        row: a.list.y + 3,
        modifiers: KeyModifiers::NONE,
    });
    assert_eq!(app.sel(), 4);
}

#[test]
fn rows_arriving_while_following_keep_the_newest_selected() {
    let path = ELECTION;
    let mut app = App::new(path, true);
    app.resize(Rect::new(0, 0, 80, 24));
    assert!(app.follow(), "live views follow the tail from the start");
    let updates = load_all(Input::file(path).unwrap(), Config::default());
    let mut last = 0;
    for u in updates {
        app.update(u);
        if app.shown() > 0 {
            assert_eq!(app.sel(), app.shown() - 1);
            last = app.sel();
        }
    }
    assert_eq!(last, 247);
}

#[test]
fn a_giant_frame_keeps_only_its_head() {
    // A 100 000-byte Produce request: the store keeps 64 KiB and says so.
    let mut f = common::flow();
    f.syn_handshake()
        .client_send(&common::raw_req(0, 9, 7, "big", &"ab".repeat(100_000)))
        .server_send(&common::raw_resp(0, 9, 7, "00000000"));
    let file = common::pcap(&[&f]);
    let path = file.path().to_str().unwrap();
    let mut app = App::new(path, false);
    for u in load_all(Input::file(path).unwrap(), Config::default()) {
        app.update(u);
    }
    app.resize(Rect::new(0, 0, 80, 24));
    assert_eq!(app.shown(), 2);
    let r = *app.store().row(0).unwrap();
    assert!(r.is_capped());
    assert!(r.wire_size > 100_000);
    assert_eq!(
        app.store().data(0).unwrap().len(),
        kwire::tui::store::MAX_STORED
    );
    let d = app.detail().unwrap();
    assert_eq!(d.bytes.len(), kwire::tui::store::MAX_STORED);
    assert!(d.notes.contains(&kwire::tui::detail::Note::Info(format!(
        "only the first 65536 of {} bytes are kept for display",
        r.wire_size
    ))));
    // The header still decodes from the head, and the pair is intact.
    assert!(
        d.lines
            .iter()
            .any(|l| l.label == "client_id string = \"big\" (int16 len=3)")
    );
    press(&mut app, "r");
    let (_, kind, corr) = selected(&app);
    assert_eq!((kind, corr), (Kind::Response, Some(7)));
}

const REELECTION: &str = "captures/kraft-reelection.pcap";
const JAVA_GROUP: &str = "captures/consumer-group-java.pcap";

#[test]
fn t_and_1_2_switch_tabs_and_tab_switches_tables() {
    use kwire::tui::{Tab, Table};
    let mut app = loaded(REELECTION);
    assert_eq!(app.tab(), Tab::Messages);
    press(&mut app, "t");
    assert_eq!(app.tab(), Tab::Analysis);
    press(&mut app, "t");
    assert_eq!(app.tab(), Tab::Messages);
    press(&mut app, "2");
    assert_eq!(app.tab(), Tab::Analysis);
    assert_eq!(app.table(), Table::Elections);
    code(&mut app, KeyCode::Tab);
    assert_eq!(app.table(), Table::Coordinators);
    code(&mut app, KeyCode::BackTab);
    assert_eq!(app.table(), Table::Elections);
    // The message panes keep their focus meanwhile.
    assert_eq!(app.focus(), Pane::List);
    press(&mut app, "1");
    assert_eq!(app.tab(), Tab::Messages);
}

#[test]
fn the_elections_table_matches_kwire_stats() {
    let mut app = loaded(REELECTION);
    press(&mut app, "t");
    // As `kwire stats captures/kraft-reelection.pcap` reports: epoch 1 only
    // reported (frame 591), epochs 2 to 4 won by nodes 1, 2, 3 from frames 590, 1032, 1297.
    let rows: Vec<_> = app
        .elections()
        .iter()
        .map(|r| {
            (
                r.epoch,
                r.outcome.as_str(),
                r.leader,
                r.target.as_ref().map(|t| t.packet),
            )
        })
        .collect();
    assert_eq!(
        rows,
        [
            (1, "not_captured", Some(2), Some(591)),
            (2, "won", Some(1), Some(590)),
            (3, "won", Some(2), Some(1032)),
            (4, "won", Some(3), Some(1297)),
        ]
    );
    assert_eq!(app.elections()[2].candidates, "2 pre, 2 vote");
    assert!(app.coordinators().is_empty());
}

#[test]
fn moving_in_the_elections_table_stays_in_range() {
    let mut app = loaded(REELECTION);
    let before = selected(&app);
    press(&mut app, "t");
    assert_eq!(app.election_sel(), 0);
    press(&mut app, "jj");
    assert_eq!(app.election_sel(), 2);
    code(&mut app, KeyCode::Down);
    code(&mut app, KeyCode::Down);
    assert_eq!(app.election_sel(), 3);
    press(&mut app, "k");
    assert_eq!(app.election_sel(), 2);
    press(&mut app, "g");
    assert_eq!(app.election_sel(), 0);
    press(&mut app, "G");
    assert_eq!(app.election_sel(), 3);
    // Moving in the table leaves the message list alone.
    assert_eq!(selected(&app), before);
}

#[test]
fn enter_jumps_to_the_first_vote_request_of_an_epoch() {
    use kwire::tui::Tab;
    let mut app = loaded(REELECTION);
    press(&mut app, "tjj");
    code(&mut app, KeyCode::Enter);
    assert_eq!(app.tab(), Tab::Messages);
    assert_eq!(app.focus(), Pane::List);
    // Epoch 3 began with node 2's pre-vote in frame 1032.
    let (frame, kind, _) = selected(&app);
    assert_eq!((frame, kind), (1032, Kind::Request));
    let r = app.store().row(app.selected_row().unwrap()).unwrap();
    assert_eq!(r.api_key(), Some(52));
    let (notice, err) = app.notice().cloned().unwrap();
    assert!(!err && notice.contains("frame 1032"), "{notice}");
    // Epoch 1's election is not captured: it jumps to the response reporting its leader.
    press(&mut app, "tg");
    code(&mut app, KeyCode::Enter);
    assert_eq!(selected(&app).0, 591);
    assert_eq!(selected(&app).1, Kind::Response);
}

#[test]
fn enter_keeps_a_filter_that_shows_the_message_and_clears_one_that_hides_it() {
    let mut app = loaded(REELECTION);
    filter(&mut app, "vote");
    press(&mut app, "tG");
    code(&mut app, KeyCode::Enter);
    assert_eq!(selected(&app).0, 1297);
    assert_eq!(app.view().filter().as_str(), "vote");
    // Only responses shown: the request of epoch 4 is hidden, so the filter goes.
    filter(&mut app, "vote response");
    press(&mut app, "t");
    code(&mut app, KeyCode::Enter);
    assert_eq!(selected(&app), (1297, Kind::Request, selected(&app).2));
    assert!(app.view().filter().is_empty());
    assert_eq!(app.shown(), app.store().len());
    let (notice, _) = app.notice().cloned().unwrap();
    assert!(notice.contains("cleared"), "{notice}");
}

#[test]
fn enter_on_a_coordinator_jumps_to_its_first_answer() {
    use kwire::tui::{Tab, Table};
    let mut app = loaded(JAVA_GROUP);
    press(&mut app, "t");
    assert!(app.elections().is_empty());
    // Enter on the empty elections table says so and stays.
    code(&mut app, KeyCode::Enter);
    assert_eq!(app.tab(), Tab::Analysis);
    assert!(app.notice().unwrap().1);
    code(&mut app, KeyCode::Tab);
    assert_eq!(app.table(), Table::Coordinators);
    // As `kwire stats` reports: group kwire-java-group answered in frames 63 (an error) and 75.
    let c = &app.coordinators()[0];
    assert_eq!(
        (c.key_type.as_str(), c.key.as_str()),
        ("group", "kwire-java-group")
    );
    assert_eq!(c.answer, "node 4 127.0.0.1:19392");
    assert_eq!((c.answers, c.changes, c.errors), (2, 0, 1));
    code(&mut app, KeyCode::Enter);
    assert_eq!(app.tab(), Tab::Messages);
    let (frame, kind, _) = selected(&app);
    assert_eq!((frame, kind), (63, Kind::Response));
    assert_eq!(
        app.store()
            .row(app.selected_row().unwrap())
            .unwrap()
            .api_key(),
        Some(10)
    );
}
