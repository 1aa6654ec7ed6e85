//! The TUI keeps no message bytes in memory: it writes them to a spill file
//! and reads them back for the list, the filter, the tree and the hex pane.
//! What it reads back must be what the pipeline delivered, and the tree built
//! from it what `kwire read --format tree` prints for the same message.

use kwire::capture::Source;
use kwire::pipeline::{self, Config};
use kwire::tui::detail::Detail;
use kwire::tui::store::MAX_STORED;
use kwire::tui::{App, Input, load_all};
use ratatui::layout::Rect;
use std::ops::ControlFlow;
use std::process::Command;

const CAPTURES: [&str; 2] = [
    "captures/kraft-initial-election.pcap",
    "captures/produce-fetch-topic-ids.pcap",
];

fn loaded(path: &str) -> App {
    let mut app = App::new(path, false);
    for u in load_all(Input::file(path).unwrap(), Config::default()) {
        app.update(u);
    }
    app.resize(Rect::new(0, 0, 120, 40));
    app
}

type Delivered = (u64, Vec<u8>, Option<u64>, Option<i64>);

/// Every message's packet, bytes, request packet and latency, in the order the
/// pipeline delivers them.
fn delivered(path: &str) -> Vec<Delivered> {
    let mut src = Source::open_file(path).unwrap();
    let mut out = Vec::new();
    pipeline::run(&mut src, Config::default(), &mut |r| {
        out.push((r.packet, r.data.to_vec(), r.request_packet, r.latency_ns));
        ControlFlow::Continue(())
    });
    out
}

#[test]
fn every_message_reads_back_as_the_pipeline_delivered_it() {
    for path in CAPTURES {
        if !std::path::Path::new(path).exists() {
            eprintln!("skip: {path} is missing");
            continue;
        }
        let want = delivered(path);
        let app = loaded(path);
        let store = app.store();
        assert_eq!(store.len(), want.len(), "{path}");
        assert!(!want.is_empty(), "{path}");
        let mut paired = 0;
        for (i, (packet, data, req, lat)) in want.iter().enumerate() {
            let kept = &data[..data.len().min(MAX_STORED)];
            let r = store.row(i).unwrap();
            assert_eq!(r.packet, *packet, "{path} row {i}");
            // Not kept in the row: rebuilt from the paired request's row.
            assert_eq!(store.request_packet(i, r), *req, "{path} row {i}");
            assert_eq!(store.latency_ns(i, r), *lat, "{path} row {i}");
            paired += usize::from(req.is_some());
            assert_eq!(store.data(i).unwrap(), kept, "{path} row {i}");
            let d = Detail::build(store, i).unwrap();
            assert_eq!(d.bytes, kept, "{path} row {i}: the hex pane's bytes");
        }
        assert!(paired > 0, "{path}");
        // The bytes went to the spill file, not to memory.
        assert!(store.spilled() > 0);
        assert_eq!(store.spill_error(), None);
        // The filter reads them back too: every row is looked at and some match.
        let mut app = app;
        app.apply_filter("request").unwrap();
        app.settle();
        let requests = (0..app.store().len())
            .filter(|&i| app.store().row(i).unwrap().kind() == kwire::codec::Kind::Request)
            .count();
        assert_eq!(app.shown(), requests, "{path}");
    }
}

#[test]
fn the_tree_pane_shows_what_kwire_read_prints() {
    for path in CAPTURES {
        tree_matches_read(path);
    }
}

fn tree_matches_read(path: &str) {
    // Built-in decoding on both sides: this test binary installs no jar schemas.
    let out = Command::new(env!("CARGO_BIN_EXE_kwire"))
        .env("KWIRE_SCHEMAS", "")
        .env_remove("SSLKEYLOGFILE")
        .args(["read", "--format", "tree", path])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    // One block per message, in the order messages complete, as the store keeps rows.
    let mut blocks: Vec<Vec<&str>> = Vec::new();
    for line in text.lines() {
        if line.starts_with("Frame ") {
            blocks.push(Vec::new());
        }
        if let Some(b) = blocks.last_mut() {
            b.push(line);
        }
    }
    let app = loaded(path);
    let store = app.store();
    assert_eq!(blocks.len(), store.len());
    for (i, block) in blocks.iter().enumerate() {
        let d = Detail::build(store, i).unwrap();
        let r = store.row(i).unwrap();
        assert!(
            block[0].starts_with(&format!("Frame {}: ", r.packet)),
            "row {i}: {}",
            block[0]
        );
        assert!(!d.lines.is_empty(), "row {i}");
        // Each tree line under the root (which the pane words as its own title), with
        // its bytes, in the same order as `read` prints them.
        let mut at = 2;
        for l in &d.lines[1..] {
            let want = format!("{} [0x{:04x}, {}B]", l.label, l.offset, l.len);
            let found = block[at..].iter().position(|x| x.contains(&want));
            assert!(
                found.is_some(),
                "row {i}: no `{want}` in\n{}",
                block.join("\n")
            );
            at += found.unwrap() + 1;
        }
        // And the hex pane's bytes are the ones the tree's offsets point into.
        assert_eq!(d.lines[0].len, d.bytes.len(), "row {i}");
    }
}
