//! Loads a capture the way `kwire tui` does (the loader thread feeding an
//! `App`), without a terminal, and prints when the first rows arrived, when
//! loading finished, the store's own bytes and the peak RSS (VmHWM).
//!
//! usage: cargo run --release --example tui_load -- FILE
//! scripts/bench-tui.sh measures the real TUI in tmux; this isolates the
//! loader and store from drawing, for profiling (perf, heaptrack).

use kwire::pipeline::Config;
use kwire::tui::{App, Input, Loader};
use ratatui::layout::Rect;
use std::time::Instant;

fn status(key: &str) -> String {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with(key))
                .map(|l| l.trim_start_matches(key).trim().to_string())
        })
        .unwrap_or_else(|| "?".into())
}

fn main() {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: tui_load FILE");
        std::process::exit(2);
    };
    let t0 = Instant::now();
    let input = match Input::file(&path) {
        Ok(i) => i,
        Err(e) => {
            eprintln!("tui_load: {e}");
            std::process::exit(1);
        }
    };
    let mut app = App::new(&path, false);
    app.resize(Rect::new(0, 0, 150, 45));
    let loader = match Loader::spawn(input, Config::default()) {
        Ok(l) => l,
        Err(e) => {
            eprintln!("tui_load: {e}");
            std::process::exit(1);
        }
    };
    let mut first = None;
    while let Ok(u) = loader.updates.recv() {
        app.update(u);
        if first.is_none() && app.shown() > 0 {
            first = Some(t0.elapsed());
        }
        if app.done() {
            break;
        }
    }
    let done = t0.elapsed();
    println!(
        "{} messages: first rows {:.3} s, loaded {:.3} s, store {} MiB, VmRSS {}, VmHWM {}",
        app.store().len(),
        first.map_or(f64::NAN, |d| d.as_secs_f64()),
        done.as_secs_f64(),
        app.store().memory() >> 20,
        status("VmRSS:"),
        status("VmHWM:"),
    );
    loader.stop();
}
