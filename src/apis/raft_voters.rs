//! Changing the KRaft voter set: AddRaftVoter (80), RemoveRaftVoter (81) and
//! UpdateRaftVoter (82).

use super::fmt::{Body, join, kv, throttle};
use super::{Api, Fields, Track};
use crate::codec::Kind;
use crate::view::labels;

/// The body fields its summary line reads (each with what is inside it), at any depth.
const SUMMARY: Fields = Fields::Names(&["CurrentLeader", "CurrentLeaderEpoch", "ErrorCode", "ErrorMessage", "Host", "KRaftVersionFeature", "LeaderEpoch", "LeaderId", "Listeners", "MaxSupportedVersion", "MinSupportedVersion", "Name", "Port", "ThrottleTimeMs", "VoterId"]);

pub(crate) const ADD: Api = Api {
    key: 80,
    details: |b, out| out.push_str(&voter_change(b)),
    summary: SUMMARY,
    track: Track::SummaryOnly,
};
pub(crate) const REMOVE: Api = Api {
    key: 81,
    details: |b, out| out.push_str(&voter_change(b)),
    summary: SUMMARY,
    track: Track::SummaryOnly,
};
pub(crate) const UPDATE: Api = Api {
    key: 82,
    details: |b, out| out.push_str(&voter_change(b)),
    summary: SUMMARY,
    track: Track::SummaryOnly,
};

/// `[CONTROLLER host:9093]`: a node's listeners.
pub(super) fn listeners(b: &Body<'_, '_>, at: usize) -> Option<String> {
    b.has(at, "Listeners").then(|| {
        format!(
            "listeners=[{}]",
            labels::list_of(&b.elements(at, "Listeners"), |&l| {
                format!(
                    "{} {}:{}",
                    b.text(l, "Name").unwrap_or_default(),
                    b.text(l, "Host").unwrap_or_default(),
                    b.int(l, "Port").unwrap_or(-1)
                )
            })
        )
    })
}

fn voter_change(b: &Body<'_, '_>) -> String {
    match b.kind {
        Kind::Request => {
            let kraft = b.tree.field(b.at, "KRaftVersionFeature").map(|f| {
                format!(
                    "kraft.version={}-{}",
                    b.int(f, "MinSupportedVersion").unwrap_or(-1),
                    b.int(f, "MaxSupportedVersion").unwrap_or(-1)
                )
            });
            join([
                kv("voter", b.int(b.at, "VoterId")),
                kv("epoch", b.int(b.at, "CurrentLeaderEpoch")),
                listeners(b, b.at),
                kraft,
            ])
        }
        Kind::Response => {
            let leader = b.tree.field(b.at, "CurrentLeader").map(|l| {
                format!(
                    "leader={} epoch={} ({}:{})",
                    b.int(l, "LeaderId").unwrap_or(-1),
                    b.int(l, "LeaderEpoch").unwrap_or(-1),
                    b.text(l, "Host").unwrap_or_default(),
                    b.int(l, "Port").unwrap_or(-1)
                )
            });
            join([
                b.error_always(b.at, "ErrorCode"),
                b.text_set(b.at, "ErrorMessage").map(|m| format!("({m})")),
                leader,
                throttle(b),
            ])
        }
    }
}
