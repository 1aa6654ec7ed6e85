//! The TUI's record display (issue 14): a Produce request's batches and records
//! under its `Records` field, keys and values as text, pretty-printed JSON or
//! hex, and `v` switching between them. Needs the kafka-clients jar for the
//! Produce schema (SKIP without it, a failure under CI=true).

mod common;

use common::*;
use crossterm::event::{KeyCode, KeyEvent};
use kwire::codec::{self, Codec, DecodeOptions, Search};
use kwire::pipeline::Config;
use kwire::records::Compression;
use kwire::records::encode::{BatchSpec, RecordSpec};
use kwire::tui::{App, Input, Pane, load_all, ui};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::layout::Rect;
use std::sync::OnceLock;

const JSON: &[u8] = br#"{"id":7,"tags":["a","b"]}"#;
const HOSTILE: &[u8] = b"k\x1b]0;pwned\x07\xe2\x80\xae";
const BINARY: &[u8] = &[0xff, 0x00, 0x01];

/// A Produce v3 request for topic `t` partition 0 carrying `records`.
fn produce_v3(corr: i32, records: &[u8]) -> Vec<u8> {
    let mut b = Vec::new();
    b.extend_from_slice(&0i16.to_be_bytes());
    b.extend_from_slice(&3i16.to_be_bytes());
    b.extend_from_slice(&corr.to_be_bytes());
    b.extend_from_slice(&[0, 1, b'c']);
    b.extend_from_slice(&(-1i16).to_be_bytes());
    b.extend_from_slice(&1i16.to_be_bytes());
    b.extend_from_slice(&1000i32.to_be_bytes());
    b.extend_from_slice(&1i32.to_be_bytes());
    b.extend_from_slice(&[0, 1, b't']);
    b.extend_from_slice(&1i32.to_be_bytes());
    b.extend_from_slice(&0i32.to_be_bytes());
    b.extend_from_slice(&(records.len() as i32).to_be_bytes());
    b.extend_from_slice(records);
    let mut frame = (b.len() as i32).to_be_bytes().to_vec();
    frame.extend_from_slice(&b);
    frame
}

/// Installs the jars' schemas once for this test binary.
fn schemas() -> bool {
    static LOADED: OnceLock<bool> = OnceLock::new();
    *LOADED.get_or_init(|| {
        let l = Search::from_env(Vec::new()).load();
        !l.schemas.sources().is_empty()
            && codec::install(Codec::new(l.schemas, DecodeOptions::default())).is_ok()
    })
}

/// The app on a capture of one gzip batch: a JSON value with a hostile key,
/// then a binary value.
fn app() -> Option<App> {
    schemas();
    let batch = BatchSpec {
        compression: Compression::Gzip,
        records: vec![
            RecordSpec::new(0, Some(HOSTILE), Some(JSON)),
            RecordSpec::new(1, None, Some(BINARY)),
        ],
        ..Default::default()
    }
    .encode();
    let mut f = flow();
    f.syn_handshake().client_send(&produce_v3(1, &batch)).fin();
    let file = pcap(&[&f]);
    let path = file.path().to_str().unwrap();
    let mut app = App::new(path, false);
    for u in load_all(Input::file(path).unwrap(), Config::default()) {
        app.update(u);
    }
    app.resize(Rect::new(0, 0, 140, 50));
    app.settle();
    app.select(0);
    let decoded = schemas()
        && app
            .detail()
            .is_some_and(|d| d.lines.iter().any(|l| l.label.starts_with("RecordBatch")));
    if !decoded {
        let msg = "SKIP: no kafka-clients jar, so Produce is not decoded";
        assert!(
            std::env::var("CI").map_or(true, |v| v != "true"),
            "{msg} (CI=true)"
        );
        eprintln!("\n*** {msg} ***\n");
        return None;
    }
    Some(app)
}

fn press(app: &mut App, c: char) {
    app.on_key(KeyEvent::from(KeyCode::Char(c)));
}

/// Selects the first tree line whose path ends with `tail`.
fn select(app: &mut App, tail: &str) -> usize {
    app.set_focus(Pane::Tree);
    let at = app
        .detail()
        .unwrap()
        .lines
        .iter()
        .position(|l| l.path.ends_with(tail))
        .unwrap_or_else(|| panic!("no line {tail}"));
    while app.tree_sel() != at {
        let key = if app.tree_sel() < at {
            KeyCode::Down
        } else {
            KeyCode::Up
        };
        app.on_key(KeyEvent::from(key));
    }
    at
}

fn render(app: &App) -> String {
    let a = app.areas();
    let mut t = Terminal::new(TestBackend::new(a.list.width, a.status.y + 1)).unwrap();
    t.draw(|f| ui::draw(app, f)).unwrap();
    let b = t.backend().buffer().clone();
    let mut out = String::new();
    for y in 0..b.area.height {
        for x in 0..b.area.width {
            out.push_str(b[(x, y)].symbol());
        }
        out.push('\n');
    }
    out
}

#[test]
fn records_hang_under_their_field_with_paths_and_ranges() {
    let Some(app) = app() else { return };
    let d = app.detail().unwrap();
    let field = d
        .lines
        .iter()
        .position(|l| l.label.starts_with("Records records ="))
        .unwrap();
    // The batch and its records are inside the field's subtree.
    let batch = field + 1;
    assert!(d.lines[batch].label.starts_with("RecordBatch[0]"));
    assert!(d.lines[field].next > batch);
    let rec = d
        .lines
        .iter()
        .position(|l| l.path.ends_with("/RecordBatch[0]/Records/Record[1]"))
        .unwrap();
    assert!(rec < d.lines[field].next);
    // Decompressed records have no range in the message's bytes: a byte never selects them.
    assert_eq!(d.lines[rec].len, 0);
    assert!(d.line_at_byte(d.lines[rec].offset) < Some(rec));
    // Every line's `next` stays inside its parent's.
    for (i, l) in d.lines.iter().enumerate() {
        for a in d.ancestors(i) {
            assert!(
                l.next <= d.lines[a].next,
                "{} in {}",
                l.path,
                d.lines[a].path
            );
        }
    }
}

#[test]
fn v_switches_keys_and_values_between_json_text_and_hex() {
    let Some(mut app) = app() else { return };
    let value = select(&mut app, "/Record[0]/Value");
    let label = |app: &App| {
        let s = render(app);
        s.lines()
            .find(|l| l.contains("Value bytes = "))
            .unwrap()
            .to_string()
    };
    // Automatic: the JSON object, and pretty-printed under the selected line.
    let screen = render(&app);
    assert!(
        label(&app).contains(r#"Value bytes = {"id":7,"tags":["a","b"]} (JSON, 25 B)"#),
        "{screen}"
    );
    assert!(screen.contains("\"tags\": ["), "{screen}");
    assert!(screen.contains("    \"a\","), "{screen}");
    // The key is text, escaped.
    assert!(
        screen.contains(r#"Key bytes = "k\x1b]0;pwned\x07\u{202e}" (text, 14 B)"#),
        "{screen}"
    );
    press(&mut app, 'v');
    assert!(
        app.notice()
            .unwrap()
            .0
            .contains("record keys and values: text")
    );
    assert!(
        label(&app).contains(r#"Value bytes = "{\"id\":7,\"tags\":[\"a\",\"b\"]}" (text, 25 B)"#),
        "{}",
        label(&app)
    );
    assert!(!render(&app).contains("\"tags\": ["));
    press(&mut app, 'v');
    assert!(app.notice().unwrap().0.contains("JSON"));
    assert!(label(&app).contains("(JSON, 25 B)"));
    press(&mut app, 'v');
    assert!(
        label(&app).contains(
            "Value bytes = 7b226964223a372c2274616773223a5b2261222c2262225d7d (hex, 25 B)"
        ),
        "{}",
        label(&app)
    );
    // `c` copies the value in the form shown.
    press(&mut app, 'c');
    assert_eq!(
        app.take_clipboard().unwrap(),
        "7b226964223a372c2274616773223a5b2261222c2262225d7d"
    );
    press(&mut app, 'v');
    assert!(app.notice().unwrap().0.contains("auto"));
    press(&mut app, 'c');
    assert_eq!(
        app.take_clipboard().unwrap(),
        "{\n  \"id\": 7,\n  \"tags\": [\n    \"a\",\n    \"b\"\n  ]\n}"
    );
    assert_eq!(app.tree_sel(), value);
    // A binary value is hex in every form.
    select(&mut app, "/Record[1]/Value");
    for _ in 0..4 {
        assert!(
            render(&app).contains("Value bytes = ff0001 (hex, 3 B)"),
            "{}",
            render(&app)
        );
        press(&mut app, 'v');
    }
    // No raw control character reaches the screen.
    let s = render(&app);
    assert!(
        !s.chars()
            .any(|c| c == '\x1b' || c == '\x07' || c == '\u{202e}')
    );
}

#[test]
fn help_names_the_v_key() {
    let Some(mut app) = app() else { return };
    press(&mut app, '?');
    let s = render(&app);
    assert!(s.contains("record keys, values: auto/text/JSON/hex"), "{s}");
}

#[test]
fn a_real_one_megabyte_record_is_not_invented_past_what_the_tui_stores() {
    if app().is_none() {
        return;
    }
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/captures/records/records-large.pcap"
    );
    let mut app = App::new(path, false);
    for u in load_all(Input::file(path).unwrap(), Config::default()) {
        app.update(u);
    }
    app.resize(Rect::new(0, 0, 140, 50));
    app.settle();
    // The TUI keeps the first 64 KiB of a message: the 1 MB Produce says so
    // and shows no record from bytes it does not have.
    let mut capped = 0;
    for pos in 0..app.shown() {
        app.select(pos);
        let d = app.detail().unwrap();
        let said = d
            .notes
            .iter()
            .any(|n| format!("{n:?}").contains("kept for display"));
        if said && d.title.contains("Produce v13 request") {
            assert!(d.lines.iter().all(|l| l.raw.is_none()));
            capped += 1;
        }
        render(&app);
    }
    assert!(capped > 0);
}
