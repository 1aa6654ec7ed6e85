//! EndTxn (key 26): a transaction committed or aborted.

use super::fmt::{Body, join, kv, throttle};
use super::{Api, Fields, Track};
use crate::codec::Kind;

/// The body fields its summary line reads (each with what is inside it), at any depth.
const SUMMARY: Fields = Fields::Names(&["Committed", "ErrorCode", "ProducerEpoch", "ProducerId", "ThrottleTimeMs", "TransactionalId"]);

pub(crate) const API: Api = Api {
    key: 26,
    details: |b, out| out.push_str(&details(b)),
    summary: SUMMARY,
    track: Track::SummaryOnly,
};

fn details(b: &Body<'_, '_>) -> String {
    match b.kind {
        Kind::Request => join([
            b.bool(b.at, "Committed")
                .map(|c| if c { "commit" } else { "abort" }.to_string()),
            kv("txn", b.text(b.at, "TransactionalId")),
            kv("pid", b.int(b.at, "ProducerId")),
            kv("epoch", b.int(b.at, "ProducerEpoch")),
        ]),
        Kind::Response => join([
            b.error_always(b.at, "ErrorCode"),
            kv("pid", b.int(b.at, "ProducerId")),
            kv("epoch", b.int(b.at, "ProducerEpoch")),
            throttle(b),
        ]),
    }
}
