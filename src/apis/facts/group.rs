//! JoinGroup (11), SyncGroup (14), Heartbeat (12) and LeaveGroup (13): what the
//! rebalance analysis takes from each message.

use super::{HEARTBEAT, JOIN_GROUP, LEAVE_GROUP, SYNC_GROUP, raw_str};
use crate::apis::{int16, int32};
use crate::codec::Tree;

/// One group-membership request: who asks what of which group.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct GroupRequest<'a> {
    pub api: i16,
    pub group: &'a str,
    /// The asking member ("" for a first JoinGroup). LeaveGroup v3+ may name several,
    /// in `leaving`; this is then "".
    pub member: &'a str,
    /// The generation the member believes in (SyncGroup, Heartbeat), else -1.
    pub generation: i32,
    /// JoinGroup: the protocol type ("consumer", "connect", …) and the protocols offered.
    pub protocol_type: Option<&'a str>,
    pub protocols: Vec<&'a str>,
    /// JoinGroup: the session timeout in ms, else -1.
    pub session_timeout_ms: i32,
    /// LeaveGroup: the members leaving.
    pub leaving: Vec<&'a str>,
}

/// One group-membership response. It does not name its group: the analysis pairs it
/// with its request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct GroupResponse<'a> {
    pub api: i16,
    pub error: i16,
    /// JoinGroup: the generation, protocol, leader and the member id given to the asker.
    pub generation: i32,
    pub protocol: Option<&'a str>,
    pub leader: Option<&'a str>,
    pub member: Option<&'a str>,
    /// JoinGroup: the members listed to the leader (empty for the others).
    pub members: Vec<&'a str>,
    /// LeaveGroup v3+: per-member errors.
    pub member_errors: Vec<(&'a str, i16)>,
}

pub(crate) fn request_facts<'a>(api: i16, t: &Tree<'a>, body: usize) -> Option<GroupRequest<'a>> {
    if !matches!(api, JOIN_GROUP | SYNC_GROUP | HEARTBEAT | LEAVE_GROUP) {
        return None;
    }
    let mut leaving = Vec::new();
    if api == LEAVE_GROUP {
        for m in t.elements(body, "Members") {
            leaving.push(raw_str(t, m, "MemberId").unwrap_or(""));
        }
        if let Some(m) = raw_str(t, body, "MemberId") {
            leaving.push(m);
        }
    }
    let protocols = t
        .elements(body, "Protocols")
        .into_iter()
        .map(|p| raw_str(t, p, "Name").unwrap_or(""))
        .collect();
    Some(GroupRequest {
        api,
        group: raw_str(t, body, "GroupId")?,
        member: if api == LEAVE_GROUP {
            ""
        } else {
            raw_str(t, body, "MemberId").unwrap_or("")
        },
        generation: int32(t, body, "GenerationId").unwrap_or(-1),
        protocol_type: raw_str(t, body, "ProtocolType"),
        protocols,
        session_timeout_ms: int32(t, body, "SessionTimeoutMs").unwrap_or(-1),
        leaving,
    })
}

pub(crate) fn response_facts<'a>(api: i16, t: &Tree<'a>, body: usize) -> Option<GroupResponse<'a>> {
    if !matches!(api, JOIN_GROUP | SYNC_GROUP | HEARTBEAT | LEAVE_GROUP) {
        return None;
    }
    let members = if api == JOIN_GROUP {
        t.elements(body, "Members")
            .into_iter()
            .map(|m| raw_str(t, m, "MemberId").unwrap_or(""))
            .collect()
    } else {
        Vec::new()
    };
    let member_errors = if api == LEAVE_GROUP {
        t.elements(body, "Members")
            .into_iter()
            .map(|m| {
                (
                    raw_str(t, m, "MemberId").unwrap_or(""),
                    int16(t, m, "ErrorCode").unwrap_or(0),
                )
            })
            .collect()
    } else {
        Vec::new()
    };
    Some(GroupResponse {
        api,
        error: int16(t, body, "ErrorCode").unwrap_or(0),
        generation: int32(t, body, "GenerationId").unwrap_or(-1),
        protocol: raw_str(t, body, "ProtocolName"),
        leader: raw_str(t, body, "Leader"),
        member: if api == JOIN_GROUP {
            raw_str(t, body, "MemberId")
        } else {
            None
        },
        members,
        member_errors,
    })
}
