//! BrokerRegistration (key 62): a broker joins the KRaft cluster and gets its epoch.

use super::fmt::{Body, join, kv, throttle};
use super::{Api, Fields, Track};
use crate::codec::Kind;

/// The body fields its summary line reads (each with what is inside it), at any depth.
const SUMMARY: Fields = Fields::Names(&["BrokerEpoch", "BrokerId", "ErrorCode", "Host", "Listeners", "Name", "Port", "PreviousBrokerEpoch", "Rack", "ThrottleTimeMs"]);

pub(crate) const API: Api = Api {
    key: 62,
    details: |b, out| out.push_str(&details(b)),
    summary: SUMMARY,
    track: Track::SummaryOnly,
};

fn details(b: &Body<'_, '_>) -> String {
    match b.kind {
        Kind::Request => join([
            kv("broker", b.int(b.at, "BrokerId")),
            super::raft_voters::listeners(b, b.at),
            kv("rack", b.text_set(b.at, "Rack")),
            kv(
                "previous-epoch",
                b.int(b.at, "PreviousBrokerEpoch").filter(|&e| e >= 0),
            ),
        ]),
        Kind::Response => join([
            b.error(b.at, "ErrorCode"),
            kv("epoch", b.int(b.at, "BrokerEpoch")),
            throttle(b),
        ]),
    }
}
