//! Kafka codec: schemas as data, one walker that decodes, one that encodes.

pub mod apis;
pub mod errors;
