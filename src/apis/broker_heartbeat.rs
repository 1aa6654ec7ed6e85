//! BrokerHeartbeat (key 63): a broker's liveness and metadata progress, and whether
//! the controller keeps it fenced.

use super::fmt::{Body, join, kv, throttle};
use super::{Api, Fields, Track};
use crate::codec::Kind;

/// The body fields its summary line reads (each with what is inside it), at any depth.
const SUMMARY: Fields = Fields::Names(&["BrokerEpoch", "BrokerId", "CurrentMetadataOffset", "ErrorCode", "IsCaughtUp", "IsFenced", "ShouldShutDown", "ThrottleTimeMs", "WantFence", "WantShutDown"]);

pub(crate) const API: Api = Api {
    key: 63,
    details: |b, out| out.push_str(&details(b)),
    summary: SUMMARY,
    track: Track::SummaryOnly,
};

/// The flag's name when it is set.
fn flag(b: &Body<'_, '_>, field: &str, word: &str) -> Option<String> {
    b.bool(b.at, field).filter(|&v| v).map(|_| word.to_string())
}

fn details(b: &Body<'_, '_>) -> String {
    match b.kind {
        Kind::Request => join([
            kv("broker", b.int(b.at, "BrokerId")),
            kv("epoch", b.int(b.at, "BrokerEpoch")),
            kv("offset", b.int(b.at, "CurrentMetadataOffset")),
            flag(b, "WantFence", "want-fence"),
            flag(b, "WantShutDown", "want-shutdown"),
        ]),
        Kind::Response => join([
            b.error(b.at, "ErrorCode"),
            flag(b, "IsCaughtUp", "caught-up"),
            flag(b, "IsFenced", "fenced"),
            flag(b, "ShouldShutDown", "shutdown"),
            throttle(b),
        ]),
    }
}
