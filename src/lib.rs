//! kwire: a dissector for Apache Kafka traffic.
//!
//! The pipeline, one module per stage, each feeding the next:
//! [`capture`] → [`net`] → [`tcp`] → [`kafka`] → [`codec`] → [`view`].
#![forbid(unsafe_code)]

pub mod analysis;
pub mod capture;
pub mod codec;
pub mod kafka;
pub mod net;
pub mod pipeline;
pub mod records;
pub mod synth;
pub mod tcp;
pub mod tui;
pub mod view;
