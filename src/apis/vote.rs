//! Vote (key 52): KRaft leader elections. Its summary details.

use super::{Api, Track};
use crate::codec::{Kind, Tree};
use crate::proto::VOTE;
use crate::view::labels;
use std::fmt::Write;

pub(crate) const API: Api = Api {
    key: VOTE,
    details,
    track: Track::Elections,
};

fn details(kind: Kind, t: &Tree<'_>, body: usize) -> String {
    match kind {
        Kind::Request => request(t, body),
        Kind::Response => response(t, body),
    }
}

/// The partitions of every topic in a Vote message.
fn partitions(t: &Tree<'_>, body: usize) -> Vec<usize> {
    t.elements(body, "Topics")
        .into_iter()
        .flat_map(|topic| t.elements(topic, "Partitions"))
        .collect()
}

fn request(t: &Tree<'_>, body: usize) -> String {
    let mut parts = Vec::new();
    for p in partitions(t, body) {
        let pre = t.bool(p, "PreVote") == Some(true);
        parts.push(format!(
            "{}replica={} epoch={} last={}@{}",
            if pre { "prevote " } else { "" },
            t.int(p, "ReplicaId").unwrap_or(-1),
            t.int(p, "ReplicaEpoch").unwrap_or(-1),
            t.int(p, "LastOffset").unwrap_or(-1),
            t.int(p, "LastOffsetEpoch").unwrap_or(-1),
        ));
    }
    let mut s = parts.join(", ");
    if let Some(v) = t.int(body, "VoterId") {
        let _ = write!(s, " → voter {v}");
    }
    s
}

fn response(t: &Tree<'_>, body: usize) -> String {
    let mut parts = Vec::new();
    for p in partitions(t, body) {
        let mut s = format!(
            "granted={} leader={} epoch={}",
            if t.bool(p, "VoteGranted") == Some(true) {
                "yes"
            } else {
                "no"
            },
            t.int(p, "LeaderId").unwrap_or(-1),
            t.int(p, "LeaderEpoch").unwrap_or(-1),
        );
        let code = t.int(p, "ErrorCode").unwrap_or(0);
        if code != 0 {
            let _ = write!(s, " {}", labels::error(code));
        }
        parts.push(s);
    }
    let top = t.int(body, "ErrorCode").unwrap_or(0);
    if top != 0 {
        parts.push(labels::error(top));
    }
    parts.join(", ")
}
