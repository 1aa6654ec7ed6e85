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
#![forbid(unsafe_code)]

// Internal stages: public only with the `testkit` feature (tests, examples, fuzz
// targets). Without it, the parts only those use are expected to be unused.

#[cfg(feature = "testkit")]
pub mod analysis;
#[cfg(not(feature = "testkit"))]
#[allow(dead_code, unused_imports)]
pub(crate) mod analysis;
#[cfg(feature = "testkit")]
pub mod apis;
#[cfg(not(feature = "testkit"))]
#[allow(dead_code, unused_imports)]
pub(crate) mod apis;
#[cfg(feature = "testkit")]
pub mod capture;
#[cfg(not(feature = "testkit"))]
#[allow(dead_code, unused_imports)]
pub(crate) mod capture;
#[cfg(feature = "testkit")]
pub mod codec;
#[cfg(not(feature = "testkit"))]
#[allow(dead_code, unused_imports)]
pub(crate) mod codec;
#[cfg(feature = "testkit")]
pub mod dissect;
#[cfg(not(feature = "testkit"))]
#[allow(dead_code, unused_imports)]
pub(crate) mod dissect;
#[cfg(feature = "testkit")]
pub mod kafka;
#[cfg(not(feature = "testkit"))]
#[allow(dead_code, unused_imports)]
pub(crate) mod kafka;
#[cfg(feature = "testkit")]
pub mod net;
#[cfg(not(feature = "testkit"))]
#[allow(dead_code, unused_imports)]
pub(crate) mod net;
#[cfg(feature = "testkit")]
pub mod pipeline;
#[cfg(not(feature = "testkit"))]
#[allow(dead_code, unused_imports)]
pub(crate) mod pipeline;
#[cfg(feature = "testkit")]
pub mod proto;
#[cfg(not(feature = "testkit"))]
#[allow(dead_code, unused_imports)]
pub(crate) mod proto;
#[cfg(feature = "testkit")]
pub mod records;
#[cfg(not(feature = "testkit"))]
#[allow(dead_code, unused_imports)]
pub(crate) mod records;
#[cfg(feature = "testkit")]
pub mod select;
#[cfg(not(feature = "testkit"))]
#[allow(dead_code, unused_imports)]
pub(crate) mod select;
#[cfg(any(test, feature = "testkit"))]
pub mod synth;
#[cfg(feature = "testkit")]
pub mod tcp;
#[cfg(not(feature = "testkit"))]
#[allow(dead_code, unused_imports)]
pub(crate) mod tcp;
#[cfg(feature = "testkit")]
pub mod tui;
#[cfg(not(feature = "testkit"))]
#[allow(dead_code, unused_imports)]
pub(crate) mod tui;
#[cfg(feature = "testkit")]
pub mod view;
#[cfg(not(feature = "testkit"))]
#[allow(dead_code, unused_imports)]
pub(crate) mod view;

/// Capture-wide analysis: elections, coordinators, per-API latency and errors.
pub use analysis::{
    Analysis, Analyzer, render_html as analysis_html, render_text as analysis_text,
    to_json as analysis_json,
};
/// Packet sources: capture files and live interfaces.
pub use capture::{CaptureError, LiveOptions, Source};
/// Kafka's message schemas, loaded from kafka-clients jars, and the process-wide codec.
pub use codec::{Codec, DecodeOptions, Loaded, Schemas, Search, install as install_codec};
/// One decoded Kafka message.
pub use dissect::{Record, VersionSource, dissect};
/// The read loop, its configuration and its end-of-run counters.
pub use pipeline::{Config, End, Hooks, Limits, RunStats, parse_size, run, run_with};
/// Which messages to show: API selection and the display filter.
pub use select::{Filter, Selection};
/// The terminal UI.
pub use tui::{Input as TuiInput, Options as TuiOptions, run as run_tui};
/// Printing records (summary, tree, hex, NDJSON) and the end-of-run report.
pub use view::{
    printer::{Format, Printer},
    report::render as report_text,
};
