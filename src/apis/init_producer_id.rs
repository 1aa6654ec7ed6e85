//! InitProducerId (key 22): a producer's id and epoch, for idempotence and transactions.

use super::fmt::{Body, join, kv, throttle};
use super::{Api, Fields, Track};
use crate::codec::Kind;

/// The body fields its summary line reads (each with what is inside it), at any depth.
const SUMMARY: Fields = Fields::Names(&["ErrorCode", "ProducerEpoch", "ProducerId", "ThrottleTimeMs", "TransactionTimeoutMs", "TransactionalId"]);

pub(crate) const API: Api = Api {
    key: 22,
    details: |b, out| out.push_str(&details(b)),
    summary: SUMMARY,
    track: Track::SummaryOnly,
};

fn details(b: &Body<'_, '_>) -> String {
    match b.kind {
        Kind::Request => join([
            Some(match b.tree.str(b.at, "TransactionalId").flatten() {
                Some(_) => format!(
                    "txn={}",
                    b.text(b.at, "TransactionalId").unwrap_or_default()
                ),
                None => "idempotent".into(),
            }),
            kv(
                "timeout",
                b.int(b.at, "TransactionTimeoutMs")
                    .map(|t| format!("{t}ms")),
            ),
            kv("pid", b.int(b.at, "ProducerId").filter(|&p| p >= 0)),
            kv("epoch", b.int(b.at, "ProducerEpoch").filter(|&e| e >= 0)),
        ]),
        Kind::Response => join([
            b.error(b.at, "ErrorCode"),
            kv("pid", b.int(b.at, "ProducerId")),
            kv("epoch", b.int(b.at, "ProducerEpoch")),
            throttle(b),
        ]),
    }
}
