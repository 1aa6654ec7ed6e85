//! The classic consumer-group protocol: JoinGroup (11), Heartbeat (12), LeaveGroup
//! (13) and SyncGroup (14). Who is in which group, at which generation, and why not.

use super::fmt::{Body, error_only, join, kv, throttle};
use super::{Api, Fields, Track};
use crate::codec::Kind;
use crate::view::labels;

/// The body fields its summary line reads (each with what is inside it), at any depth.
const SUMMARY: Fields = Fields::Names(&["Assignment", "Assignments", "ErrorCode", "GenerationId", "GroupId", "GroupInstanceId", "Leader", "MemberId", "Members", "Name", "ProtocolName", "ProtocolType", "Protocols", "Reason", "RebalanceTimeoutMs", "SessionTimeoutMs", "ThrottleTimeMs"]);

pub(crate) const JOIN: Api = Api {
    key: 11,
    details: |b, out| out.push_str(&join_group(b)),
    summary: SUMMARY,
    track: Track::SummaryOnly,
};
pub(crate) const HEARTBEAT: Api = Api {
    key: 12,
    details: |b, out| out.push_str(&heartbeat(b)),
    summary: SUMMARY,
    track: Track::SummaryOnly,
};
pub(crate) const LEAVE: Api = Api {
    key: 13,
    details: |b, out| out.push_str(&leave_group(b)),
    summary: SUMMARY,
    track: Track::SummaryOnly,
};
pub(crate) const SYNC: Api = Api {
    key: 14,
    details: |b, out| out.push_str(&sync_group(b)),
    summary: SUMMARY,
    track: Track::SummaryOnly,
};

/// `group=G gen=5 member=M` (the fields each request has).
fn who(b: &Body<'_, '_>) -> Vec<Option<String>> {
    vec![
        kv("group", b.text(b.at, "GroupId")),
        kv("gen", b.int(b.at, "GenerationId")),
        kv("member", b.text(b.at, "MemberId")),
        kv("instance", b.text_set(b.at, "GroupInstanceId")),
    ]
}

fn join_group(b: &Body<'_, '_>) -> String {
    match b.kind {
        Kind::Request => {
            let protocols = labels::list_of(&b.elements(b.at, "Protocols"), |&p| {
                b.text(p, "Name").unwrap_or_default()
            });
            let mut parts = who(b);
            parts.extend([
                b.text(b.at, "ProtocolType")
                    .map(|t| format!("{t}=[{protocols}]")),
                kv(
                    "session",
                    b.int(b.at, "SessionTimeoutMs").map(|m| format!("{m}ms")),
                ),
                kv(
                    "rebalance",
                    b.int(b.at, "RebalanceTimeoutMs").map(|m| format!("{m}ms")),
                ),
                kv("reason", b.text_set(b.at, "Reason")),
            ]);
            join(parts)
        }
        Kind::Response => {
            let member = b.text(b.at, "MemberId");
            let leader = b.text(b.at, "Leader");
            let is_leader = member.is_some() && member == leader;
            let members = b.elements(b.at, "Members").len();
            join([
                b.error(b.at, "ErrorCode"),
                kv("gen", b.int(b.at, "GenerationId")),
                kv("protocol", b.text_set(b.at, "ProtocolName")),
                kv("member", member),
                if is_leader {
                    Some("(leader)".into())
                } else {
                    kv("leader", leader)
                },
                (members > 0).then(|| format!("members={members}")),
                throttle(b),
            ])
        }
    }
}

fn sync_group(b: &Body<'_, '_>) -> String {
    match b.kind {
        Kind::Request => {
            let n = b.elements(b.at, "Assignments").len();
            let mut parts = who(b);
            parts.push((n > 0).then(|| format!("assignments={n}")));
            join(parts)
        }
        Kind::Response => {
            let assignment = b
                .tree
                .field(b.at, "Assignment")
                .and_then(|f| b.tree.nodes.get(f))
                .and_then(|n| match n.value {
                    crate::codec::Value::Bytes(Some(a)) => Some(a.len()),
                    _ => None,
                });
            join([
                b.error_always(b.at, "ErrorCode"),
                kv("protocol", b.text_set(b.at, "ProtocolName")),
                assignment.map(|n| format!("assignment {}", labels::bytes(n as u64))),
                throttle(b),
            ])
        }
    }
}

fn heartbeat(b: &Body<'_, '_>) -> String {
    match b.kind {
        Kind::Request => join(who(b)),
        Kind::Response => error_only(b),
    }
}

fn leave_group(b: &Body<'_, '_>) -> String {
    match b.kind {
        Kind::Request => {
            let members = b.elements(b.at, "Members");
            let list = (!members.is_empty()).then(|| {
                format!(
                    "members=[{}]",
                    labels::list_of(&members, |&m| {
                        join([b.text(m, "MemberId"), kv("reason", b.text_set(m, "Reason"))])
                    })
                )
            });
            join([
                kv("group", b.text(b.at, "GroupId")),
                kv("member", b.text(b.at, "MemberId")),
                list,
            ])
        }
        Kind::Response => {
            let members = b.elements(b.at, "Members");
            let list = (!members.is_empty()).then(|| {
                format!(
                    "members=[{}]",
                    labels::list_of(&members, |&m| {
                        join([b.text(m, "MemberId"), b.error(m, "ErrorCode")])
                    })
                )
            });
            join([b.error_always(b.at, "ErrorCode"), list, throttle(b)])
        }
    }
}
