//! The TUI's everyday tools (issue 18): the list in packet order whatever
//! order messages completed in, `f` following a connection, `w` writing the
//! shown messages' packets to a pcap file, `c` copying through OSC 52, and
//! how the screen shows them.

mod common;

use common::*;
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use kwire::capture::Source;
use kwire::codec::Kind;
use kwire::pipeline::{self, Config};
use kwire::tui::loader::Progress;
use kwire::tui::store::Batch;
use kwire::tui::{App, Input, Pane, Update, load_all, ui};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::layout::Rect;
use std::collections::BTreeMap;
use std::ops::ControlFlow;
use std::path::Path;
use std::sync::Arc;

const ELECTION: &str = "captures/kraft-initial-election.pcap";

fn loaded(path: &str) -> App {
    let mut app = App::new(path, false);
    for u in load_all(Input::file(path).unwrap(), Config::default()) {
        app.update(u);
    }
    app.resize(Rect::new(0, 0, 120, 40));
    app.settle();
    let p = path.to_string();
    app.set_reopen(Arc::new(move || Source::open_file(&p)));
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

fn filter(app: &mut App, f: &str) {
    press(app, "/");
    app.on_key(KeyEvent::new(KeyCode::Char('u'), KeyModifiers::CONTROL));
    press(app, f);
    code(app, KeyCode::Enter);
    app.settle();
}

/// The packet numbers of the messages shown, top to bottom.
fn shown_frames(app: &App) -> Vec<u64> {
    (0..app.shown())
        .map(|p| {
            let row = app.view().row_at(app.store(), p).unwrap();
            app.store().row(row).unwrap().packet
        })
        .collect()
}

fn selected_frame(app: &App) -> u64 {
    app.store().row(app.selected_row().unwrap()).unwrap().packet
}

fn position_of_frame(app: &App, frame: u64) -> usize {
    shown_frames(app).iter().position(|&f| f == frame).unwrap()
}

fn render(app: &App) -> String {
    let a = app.areas();
    let mut t = Terminal::new(TestBackend::new(a.list.width, a.status.y + 1)).unwrap();
    t.draw(|f| ui::draw(app, f)).unwrap();
    let b = t.backend().buffer().clone();
    let mut out = String::new();
    for y in 0..b.area.height {
        let line: String = (0..b.area.width).map(|x| b[(x, y)].symbol()).collect();
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// (packet, API key, kind, correlation id, source, destination) of each
/// message `kwire` finds in `path`, through the library.
type Msg = (u64, Option<i16>, Kind, Option<i32>, String, String);

fn messages(path: &Path) -> Vec<Msg> {
    let mut src = Source::open_file(path).unwrap();
    let mut out = Vec::new();
    pipeline::run(&mut src, Config::default(), &mut |r| {
        out.push((
            r.packet,
            r.msg.api_key,
            r.msg.kind,
            r.msg.correlation_id,
            r.src.to_string(),
            r.dst.to_string(),
        ));
        ControlFlow::Continue(())
    });
    out
}

/// What identifies a message across files, whose packet numbers differ.
fn identity(m: &Msg) -> (Option<i16>, &'static str, Option<i32>, String, String) {
    (m.1, m.2.as_str(), m.3, m.4.clone(), m.5.clone())
}

// ---- packet order ---------------------------------------------------------

#[test]
fn the_list_is_in_packet_order_whatever_order_messages_arrive_in() {
    // Every message of a real capture as its own batch, handed over in a
    // scrambled order, as a loader could.
    let mut src = Source::open_file(ELECTION).unwrap();
    let mut batches = Vec::new();
    pipeline::run(&mut src, Config::default(), &mut |r| {
        let mut b = Batch::default();
        b.push(r);
        batches.push(b);
        ControlFlow::Continue(())
    });
    assert_eq!(batches.len(), 248);
    let n = batches.len();
    // A fixed permutation: stride 97 (coprime with 248) through the batches.
    let mut slots: Vec<Option<Batch>> = batches.into_iter().map(Some).collect();
    let mut app = App::new(ELECTION, false);
    app.resize(Rect::new(0, 0, 120, 40));
    let mut selected: Option<u64> = None;
    for k in 0..n {
        let b = slots[(k * 97) % n].take().unwrap();
        app.update(Update::Batch(b, Progress::default()));
        let frames = shown_frames(&app);
        assert!(frames.is_sorted(), "after {k} batches: {frames:?}");
        match selected {
            // The selected message stays selected as earlier ones go in above it.
            Some(f) => assert_eq!(selected_frame(&app), f, "after {k} batches"),
            None if k == 20 => {
                app.select(10);
                selected = Some(selected_frame(&app));
            }
            None => {}
        }
    }
    // The same order `kwire read` prints.
    let read: Vec<u64> = messages(Path::new(ELECTION)).iter().map(|m| m.0).collect();
    assert_eq!(shown_frames(&app), read);
    // And a filter keeps packet order too.
    filter(&mut app, "vote");
    let frames = shown_frames(&app);
    assert!(frames.len() > 5 && frames.is_sorted(), "{frames:?}");
}

/// A connection on ports kwire does not know, captured without its handshake,
/// is recognised only when its response answers its request: its request
/// completes at packet 1 but reaches the UI after the 9092 connection's
/// messages of later packets.
fn late_decided_capture() -> tempfile::NamedTempFile {
    // The request at 1 ms and its answer at 6 ms; the 9092 connection in between.
    let mut late =
        flow_between("10.0.0.3:40000", "10.0.0.4:30000").with_start(1_000_000, 5_000_000);
    late.client_send(&vote_req(2, 7, "ctl", false))
        .server_send(&vote_resp(2, 7, true, 0));
    let mut known = flow().with_start(2_000_000, 500_000);
    known
        .syn_handshake()
        .client_send(&fc_req(4, 1, "app", "g"))
        .server_send(&fc_resp(4, 1, "g", 7, "b", 9092, 0));
    pcap(&[&late, &known])
}

#[test]
fn a_message_decided_late_is_listed_at_its_packet() {
    let f = late_decided_capture();
    let path = f.path().to_str().unwrap().to_string();
    let read = messages(f.path());
    let frames: Vec<u64> = read.iter().map(|m| m.0).collect();
    let app = loaded(&path);
    // The store holds them in arrival order; the list in packet order.
    let arrival: Vec<u64> = (0..app.store().len())
        .map(|i| app.store().row(i).unwrap().packet)
        .collect();
    assert!(
        !arrival.is_sorted(),
        "the capture no longer exercises late arrival: {arrival:?}"
    );
    let mut sorted = frames.clone();
    sorted.sort();
    assert_eq!(shown_frames(&app), sorted);
    assert_eq!(shown_frames(&app).len(), 4);
    assert_eq!(
        shown_frames(&app)[0],
        1,
        "the late Vote request, at packet 1"
    );
}

// ---- f: follow a connection ----------------------------------------------

#[test]
fn f_follows_the_selected_messages_connection_and_f_again_clears_it() {
    let mut app = loaded(ELECTION);
    app.select(position_of_frame(&app, 201));
    let conn = app.store().row(app.selected_row().unwrap()).unwrap().conn();
    let in_conn: Vec<u64> = (0..app.store().len())
        .map(|i| *app.store().row(i).unwrap())
        .filter(|r| r.conn() == conn)
        .map(|r| r.packet)
        .collect();
    press(&mut app, "f");
    assert_eq!(app.view().conn(), Some(conn));
    assert_eq!(shown_frames(&app), in_conn);
    assert!(in_conn.len() > 1 && in_conn.len() < 248);
    assert_eq!(selected_frame(&app), 201, "the selection stays");
    let (notice, err) = app.notice().cloned().unwrap();
    assert!(!err && notice.starts_with("following "), "{notice}");
    // The filter narrows the followed connection further, and is kept.
    filter(&mut app, "response");
    assert!(app.shown() > 0);
    for p in 0..app.shown() {
        let r = app
            .store()
            .row(app.view().row_at(app.store(), p).unwrap())
            .unwrap();
        assert_eq!((r.conn(), r.kind()), (conn, Kind::Response));
    }
    press(&mut app, "f");
    assert_eq!(app.view().conn(), None);
    assert_eq!(app.view().filter().as_str(), "response");
    filter(&mut app, "");
    assert_eq!(app.shown(), 248);
    // `F` keeps the newest message selected, as `f` did before.
    press(&mut app, "F");
    assert!(app.follow());
    assert_eq!(app.sel(), 247);
}

#[test]
fn a_followed_connection_is_named_on_screen() {
    let mut app = loaded(ELECTION);
    app.select(position_of_frame(&app, 201));
    press(&mut app, "f");
    let s = render(&app);
    let title = s.lines().next().unwrap();
    assert!(
        title.contains("Messages [connection 127.0.0.1:33656 ↔ 127.0.0.1:19301]"),
        "{title}"
    );
    assert!(s.contains("following a connection (f: all)"), "{s}");
    insta::assert_snapshot!("follow_connection", s);
}

// ---- w: export ------------------------------------------------------------

fn export(app: &mut App, path: &Path) {
    press(app, "w");
    assert!(app.export_input().is_some());
    app.on_key(KeyEvent::new(KeyCode::Char('u'), KeyModifiers::CONTROL));
    press(app, path.to_str().unwrap());
    code(app, KeyCode::Enter);
    app.wait_jobs();
}

#[test]
fn w_writes_a_followed_connection_that_reads_back_the_same() {
    let mut app = loaded(ELECTION);
    app.select(position_of_frame(&app, 201));
    press(&mut app, "f");
    let shown = shown_frames(&app);
    let dir = tempfile::tempdir().unwrap();
    let all = messages(Path::new(ELECTION));
    let want: Vec<_> = all
        .iter()
        .filter(|m| shown.contains(&m.0))
        .map(identity)
        .collect();
    // pcap, or pcapng by the file's name.
    for (name, magic) in [
        ("conn.pcap", [0x4d, 0x3c, 0xb2, 0xa1]),
        ("conn.pcapng", [0x0a, 0x0d, 0x0d, 0x0a]),
    ] {
        let out = dir.path().join(name);
        export(&mut app, &out);
        let (notice, err) = app.notice().cloned().unwrap();
        assert!(!err, "{notice}");
        assert!(
            notice.contains(&format!("of {} messages", shown.len())),
            "{notice}"
        );
        assert_eq!(std::fs::read(&out).unwrap()[..4], magic, "{name}");
        // The file re-dissects to exactly the connection's messages.
        let got: Vec<_> = messages(&out).iter().map(identity).collect();
        assert_eq!(got, want, "{name}");
    }
}

#[test]
fn w_writes_the_filtered_messages_with_the_packets_they_need() {
    let mut app = loaded(ELECTION);
    filter(&mut app, "vote");
    let shown = shown_frames(&app);
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("votes.pcap");
    export(&mut app, &out);
    assert!(!app.notice().unwrap().1, "{:?}", app.notice());
    let all = messages(Path::new(ELECTION));
    let mut want: BTreeMap<_, usize> = BTreeMap::new();
    for m in all.iter().filter(|m| shown.contains(&m.0)) {
        *want.entry(identity(m)).or_default() += 1;
    }
    let mut got: BTreeMap<_, usize> = BTreeMap::new();
    for m in messages(&out) {
        *got.entry(identity(&m)).or_default() += 1;
    }
    for (k, n) in &want {
        assert_eq!(got.get(k), Some(n), "{k:?} not read back");
    }
    // Fewer packets than the capture holds.
    let written = std::fs::metadata(&out).unwrap().len();
    assert!(written < std::fs::metadata(ELECTION).unwrap().len());
}

#[test]
fn w_asks_before_overwriting_and_cannot_export_live() {
    let mut app = loaded(ELECTION);
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("x.pcap");
    std::fs::write(&out, b"keep").unwrap();
    press(&mut app, "w");
    app.on_key(KeyEvent::new(KeyCode::Char('u'), KeyModifiers::CONTROL));
    press(&mut app, out.to_str().unwrap());
    code(&mut app, KeyCode::Enter);
    assert!(app.export_input().is_some(), "the prompt stays open");
    assert!(app.notice().unwrap().0.contains("Enter again to overwrite"));
    assert_eq!(std::fs::read(&out).unwrap(), b"keep");
    code(&mut app, KeyCode::Enter);
    app.wait_jobs();
    assert!(app.export_input().is_none());
    assert!(std::fs::read(&out).unwrap().len() > 1000);
    // Esc closes the prompt and writes nothing.
    press(&mut app, "w");
    code(&mut app, KeyCode::Esc);
    assert!(app.export_input().is_none() && !app.exporting());
    // A file that cannot be created: the status bar says why.
    press(&mut app, "w");
    app.on_key(KeyEvent::new(KeyCode::Char('u'), KeyModifiers::CONTROL));
    press(
        &mut app,
        dir.path().join("no/such/dir.pcap").to_str().unwrap(),
    );
    code(&mut app, KeyCode::Enter);
    app.wait_jobs();
    let (notice, err) = app.notice().cloned().unwrap();
    assert!(
        err && notice.starts_with("export failed: cannot create"),
        "{notice}"
    );
    // Without a file to read again, `w` says why.
    let mut live = App::new("live lo (tcp)", true);
    press(&mut live, "w");
    assert!(live.export_input().is_none());
    assert!(live.notice().unwrap().1);
}

#[test]
fn the_export_prompt_is_drawn_in_the_status_bar() {
    let mut app = loaded(ELECTION);
    press(&mut app, "w");
    let s = render(&app);
    let status = s.lines().last().unwrap();
    assert_eq!(
        status,
        " write shown packets to: kwire-export.pcap█  (Enter write 248 messages as pcap, Esc cancel)"
    );
}

// ---- c: copy --------------------------------------------------------------

#[test]
fn c_copies_the_message_as_ndjson_or_the_fields_value() {
    let mut app = loaded(ELECTION);
    app.select(position_of_frame(&app, 201));
    press(&mut app, "c");
    let line = app.take_clipboard().unwrap();
    assert!(app.take_clipboard().is_none(), "sent once");
    // The same line `kwire read --format json` prints for the message.
    let json = read(Path::new(ELECTION), &["--format", "json"]);
    let want = json
        .lines()
        .find(|l| l.starts_with("{\"frame\":201,"))
        .unwrap();
    assert_eq!(line, want);
    assert!(app.notice().unwrap().0.contains("message as NDJSON"));
    // In the tree: the selected field's value alone.
    app.set_focus(Pane::Tree);
    let at = app
        .detail()
        .unwrap()
        .lines
        .iter()
        .position(|l| l.label.starts_with("client_id string"))
        .unwrap();
    let here = app.tree_sel();
    let d = at as isize - here as isize;
    let key = if d > 0 { KeyCode::Down } else { KeyCode::Up };
    for _ in 0..d.unsigned_abs() {
        code(&mut app, key);
    }
    press(&mut app, "c");
    let v = app.take_clipboard().unwrap();
    let label = &app.detail().unwrap().lines[at].label;
    assert!(label.contains(&format!("\"{v}\"")), "{v} in {label}");
    assert!(!v.is_empty());
}

#[test]
fn c_copies_hostile_strings_escaped() {
    const HOSTILE: &str = "\x1b]0;pwned\x07\x1b[2J|\u{202e}gpj.exe|\u{9b}31m";
    const SHOWN: &str = r"\x1b]0;pwned\x07\x1b[2J|\u{202e}gpj.exe|\u{9b}31m";
    let mut f = flow();
    f.syn_handshake()
        .client_send(&fc_req(4, 1, &format!("app{HOSTILE}"), "g"))
        .fin();
    let file = pcap(&[&f]);
    let mut app = loaded(file.path().to_str().unwrap());
    app.set_focus(Pane::Tree);
    while !app.detail().unwrap().lines[app.tree_sel()]
        .label
        .starts_with("client_id")
    {
        code(&mut app, KeyCode::Down);
    }
    press(&mut app, "c");
    assert_eq!(app.take_clipboard().unwrap(), format!("app{SHOWN}"));
    // The OSC 52 sequence carries it as base64: nothing in it reaches the terminal.
    let seq = kwire::tui::clipboard::osc52(&format!("app{HOSTILE}"));
    assert!(seq.starts_with("\x1b]52;c;") && seq.ends_with('\x07'));
    assert_eq!(seq.matches('\x1b').count(), 1);
}

#[test]
fn an_exported_file_is_one_tshark_reads() {
    if std::process::Command::new("tshark")
        .arg("-v")
        .output()
        .is_err()
    {
        eprintln!("SKIP: tshark is not installed");
        return;
    }
    let mut app = loaded(ELECTION);
    app.select(position_of_frame(&app, 201));
    press(&mut app, "f");
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("conn.pcap");
    export(&mut app, &out);
    let notice = app.notice().unwrap().0.clone();
    // tshark: every packet of that connection up to its last message, and
    // nothing else, with its time and length as captured.
    let fields = |file: &Path, filter: &str| -> Vec<String> {
        let t = std::process::Command::new("tshark")
            .args(["-n", "-r"])
            .arg(file)
            .args(["-Y", filter, "-T", "fields", "-e", "frame.number"])
            .args([
                "-e",
                "frame.time_epoch",
                "-e",
                "frame.len",
                "-e",
                "frame.cap_len",
            ])
            .args(["-e", "tcp.srcport", "-e", "tcp.dstport"])
            .output()
            .unwrap();
        assert!(t.status.success(), "{}", String::from_utf8_lossy(&t.stderr));
        String::from_utf8(t.stdout)
            .unwrap()
            .lines()
            .map(str::to_string)
            .collect()
    };
    let got = fields(&out, "frame");
    assert!(
        notice.contains(&format!("wrote {} packets", got.len())),
        "{notice}"
    );
    let last = *shown_frames(&app).last().unwrap();
    let want: Vec<String> = fields(Path::new(ELECTION), "tcp.port==33656")
        .into_iter()
        .filter(|l| l.split('\t').next().unwrap().parse::<u64>().unwrap() <= last)
        .collect();
    let rest = |l: &String| l.split_once('\t').unwrap().1.to_string();
    assert_eq!(
        got.iter().map(rest).collect::<Vec<_>>(),
        want.iter().map(rest).collect::<Vec<_>>()
    );
}

#[test]
fn the_status_bar_says_what_c_and_w_did() {
    let mut app = loaded(ELECTION);
    app.select(position_of_frame(&app, 201));
    press(&mut app, "c");
    let n = app.take_clipboard().unwrap().len();
    let s = render(&app);
    let status = s.lines().last().unwrap();
    assert!(
        status.contains(&format!(
            "copied the message as NDJSON ({n} bytes) to the clipboard"
        )),
        "{status}"
    );
    press(&mut app, "f");
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("c.pcap");
    export(&mut app, &out);
    let s = render(&app);
    let status = s.lines().last().unwrap();
    assert!(
        status.starts_with(" 36/248 msgs │ loaded 476 packets │ following a connection (f: all) │"),
        "{status}"
    );
    let (notice, _) = app.notice().cloned().unwrap();
    assert!(
        notice.starts_with("wrote ") && notice.contains(" packets of 36 messages to "),
        "{notice}"
    );
}

#[test]
fn a_late_message_is_drawn_in_its_place() {
    let f = late_decided_capture();
    let app = loaded(f.path().to_str().unwrap());
    let s = render(&app);
    let rows: Vec<&str> = s
        .lines()
        .skip(2)
        .take(4)
        .map(|l| l.split_whitespace().next().unwrap())
        .collect();
    assert_eq!(rows.len(), 4);
    let nums: Vec<u64> = rows.iter().map(|r| r.parse().unwrap()).collect();
    assert!(nums.is_sorted() && nums[0] == 1, "{s}");
}
