//! kwire: a dissector for Apache Kafka traffic.
//!
//! Packets flow one way, one module per stage:
//! `capture` → `net` → `tcp` → `kafka` → `dissect` (with `codec`) → a
//! [`pipeline`] hook, which hands each [`Record`] to [`view`], [`analysis`] or [`tui`].
//! Protocol facts shared by every layer live in `proto`; what one API says beyond its
//! schema lives in `apis`; which messages to show is [`select`]. docs/architecture.md
//! has the whole map. The stages are internal; the `testkit` feature makes them public
//! for kwire's own tests, examples and fuzz targets.
//!
//! The usual entry points are re-exported here: open a [`Source`], [`run`] it with a
//! [`Config`] (or [`run_with`] and your own [`Hooks`]), and render each [`Record`] with
//! [`view`] or feed it to an [`Analyzer`].
#![forbid(unsafe_code)]

// Internal stages: public only with the `testkit` feature (tests, examples, fuzz
// targets). Without it, the parts only those use are expected to be unused.

pub mod analysis;
#[cfg(feature = "testkit")]
pub mod apis;
#[cfg(not(feature = "testkit"))]
#[allow(dead_code, unused_imports)]
pub(crate) mod apis;
pub mod capture;
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
pub mod pipeline;
#[cfg(feature = "testkit")]
pub mod proto;
#[cfg(not(feature = "testkit"))]
#[allow(dead_code, unused_imports)]
pub(crate) mod proto;
pub mod select;
#[cfg(any(test, feature = "testkit"))]
pub mod synth;
#[cfg(feature = "testkit")]
pub mod tcp;
#[cfg(not(feature = "testkit"))]
#[allow(dead_code, unused_imports)]
pub(crate) mod tcp;
pub mod tui;
pub mod view;

pub use analysis::{Analysis, Analyzer};
pub use capture::{CaptureError, Source};
pub use dissect::{Record, VersionSource, dissect};
pub use pipeline::{Config, End, Hooks, Limits, RunStats, run, run_with};
pub use select::{Filter, Selection};
