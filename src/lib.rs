//! kwire: a dissector for Apache Kafka traffic.
#![forbid(unsafe_code)]

pub mod capture;
pub mod codec;
pub mod net;
pub mod synth;
pub mod tcp;
