//! kwire: a dissector for Apache Kafka traffic.
//!
//! Packets flow one way, one module per stage:
//! `capture` → `net` → `tcp` → `kafka` → `dissect` (with `codec`) → a `pipeline`
//! hook, which hands each [`Record`] to `view`, `analysis` or `tui`. Protocol facts
//! shared by every layer live in `proto`; what one API says beyond its schema lives in
//! `apis`; which messages to show is `select`. docs/architecture.md has the whole map.
//! The modules are internal; the `testkit` feature makes them public for kwire's own
//! tests, examples and fuzz targets.
//!
//! The public API is the list below: open a [`Source`] (a file, or live with
//! [`LiveOptions`]), [`run`] it with a [`Config`] (or [`run_with`] and your own
//! [`Hooks`]), and print each [`Record`] with a [`Printer`], feed it to an [`Analyzer`],
//! or browse a capture with [`run_tui`].
//!
//! # Example: who granted a KRaft vote
//!
//! Each [`Record`] is one Kafka message; its `msg.tree` holds the decoded fields by
//! their schema names. Vote is API key 52, and each partition of a Vote response says
//! whether the vote was granted (`examples/library.rs` is the same as a program).
//!
//! ```
//! use kwire::{Config, End, Kind, Source};
//! use std::ops::ControlFlow;
//!
//! # fn main() -> Result<(), kwire::CaptureError> {
//! let mut source = Source::open_file("captures/kraft-initial-election.pcap")?;
//! let mut grants = 0;
//! let (stats, end) = kwire::run(&mut source, Config::default(), &mut |r| {
//!     if r.msg.api_key == Some(52) && r.msg.kind == Kind::Response {
//!         let t = &r.msg.tree;
//!         for topic in r.msg.body.map(|b| t.elements(b, "Topics")).unwrap_or_default() {
//!             for p in t.elements(topic, "Partitions") {
//!                 if t.bool(p, "VoteGranted") == Some(true) {
//!                     let epoch = t.int(p, "LeaderEpoch").unwrap_or(-1);
//!                     println!("packet {}: {} granted {} (epoch {epoch})", r.packet, r.src, r.dst);
//!                     grants += 1;
//!                 }
//!             }
//!         }
//!     }
//!     ControlFlow::Continue(())
//! });
//! if let End::Damaged(e) = end {
//!     return Err(e);
//! }
//! assert!(grants > 0 && stats.packets > 0);
//! # Ok(())
//! # }
//! ```
#![forbid(unsafe_code)]

/// Every stage is public to tests, examples and fuzz targets (the `testkit` feature) and
/// crate-private otherwise (where the parts only those use are expected to be unused): the
/// library's API is the list of re-exports below.
macro_rules! stages {
    ($($m:ident),* $(,)?) => {$(
        #[cfg(feature = "testkit")]
        pub mod $m;
        #[cfg(not(feature = "testkit"))]
        #[allow(dead_code, unused_imports)]
        pub(crate) mod $m;
    )*};
}

stages!(
    analysis, apis, capture, codec, dissect, filter, kafka, net, pipeline, proto, records, select,
    tcp, tls, topics, tui, view
);
#[cfg(any(test, feature = "testkit"))]
pub mod synth;

/// Capture-wide analysis: elections, coordinators, per-API latency and errors.
pub use analysis::{
    Analysis, Analyzer, render_html as analysis_html, render_text as analysis_text,
    to_json as analysis_json,
};
/// Packet sources: capture files and live interfaces.
pub use capture::{CaptureError, LiveOptions, Packet, Source};
/// Kafka's message schemas, loaded from kafka-clients jars, and the process-wide codec.
pub use codec::{Codec, DecodeOptions, Loaded, Schemas, Search, install as install_codec};
/// One decoded Kafka message, and its value tree (a [`Record`]'s `msg`).
pub use codec::{Kind, Message, Tree};
/// What a consumer reads of each message body ([`Hooks::need`]).
pub use codec::{Need, NeedPath};
pub use dissect::{Record, VersionSource, dissect};
/// The chosen fields of `--format fields`.
pub use filter::Columns;
/// The read loop, its configuration and its end-of-run counters.
pub use pipeline::{
    Config, End, Hooks, Limits, Render, Rendered, RunStats, parse_size, run, run_rendered, run_with,
};
/// Which messages to show: API selection and the display filter.
pub use select::{Filter, Selection};
/// TLS session keys: a key log file, `SSLKEYLOGFILE`, a pcapng's secrets.
pub use tls::KeyConfig;
/// The terminal UI.
pub use tui::{Input as TuiInput, Options as TuiOptions, run as run_tui};
/// Printing records (summary, tree, hex, NDJSON) and the end-of-run report.
pub use view::{
    printer::{Format, Look, Printer},
    report::{nothing_found as nothing_found_text, render as report_text},
};
