//! kwire: a dissector for Apache Kafka traffic.
//!
//! Packets flow one way, one module per stage:
//! [`capture`] → [`net`] → [`tcp`] → [`kafka`] → [`mod@dissect`] (with [`codec`]) → a
//! [`pipeline`] hook, which hands each [`Record`] to [`view`], [`analysis`] or [`tui`].
//! Protocol facts shared by every layer live in [`proto`]; what one API says beyond its
//! schema lives in [`apis`]; which messages to show is [`select`]. docs/architecture.md
//! has the whole map.
//!
//! The usual entry points are re-exported here: open a [`Source`], [`run`] it with a
//! [`Config`] (or [`run_with`] and your own [`Hooks`]), and render each [`Record`] with
//! [`view`] or feed it to an [`Analyzer`].
#![forbid(unsafe_code)]

pub mod analysis;
pub mod apis;
pub mod capture;
pub mod codec;
pub mod dissect;
pub mod kafka;
pub mod net;
pub mod pipeline;
pub mod proto;
pub mod select;
#[cfg(any(test, feature = "testkit"))]
pub mod synth;
pub mod tcp;
pub mod tui;
pub mod view;

pub use analysis::{Analysis, Analyzer};
pub use capture::{CaptureError, Source};
pub use dissect::{Record, VersionSource, dissect};
pub use pipeline::{Config, End, Hooks, Limits, RunStats, run, run_with};
pub use select::{Filter, Selection};
