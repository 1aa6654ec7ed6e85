//! Vote (key 52): KRaft leader elections. Its summary details, and the facts the
//! election timeline takes from each message.

use super::{Api, Fields, Track, int16, int32};
use crate::codec::{Kind, Tree};
use crate::proto::VOTE;
use crate::view::labels;
use std::net::{IpAddr, SocketAddr};

/// The body fields its summary line reads, from the body's root.
const SUMMARY: Fields = Fields::Paths(&[
    "VoterId",
    "ErrorCode",
    "Topics.Partitions.PreVote",
    "Topics.Partitions.ReplicaId",
    "Topics.Partitions.ReplicaEpoch",
    "Topics.Partitions.LastOffset",
    "Topics.Partitions.LastOffsetEpoch",
    "Topics.Partitions.VoteGranted",
    "Topics.Partitions.LeaderId",
    "Topics.Partitions.LeaderEpoch",
    "Topics.Partitions.ErrorCode",
]);

pub(crate) const API: Api = Api {
    key: VOTE,
    details,
    summary: SUMMARY,
    track: Track::Elections,
};

fn details(b: &super::Body<'_, '_>, out: &mut String) {
    match b.kind {
        Kind::Request => request(b.tree, b.at, out),
        Kind::Response => response(b.tree, b.at, out),
    }
}

/// Appends a list of the partitions of every topic in the array node `topics`, each
/// written by `item`. Loops, not a flattened iterator: counting the rest costs less.
fn push_partitions(
    t: &Tree<'_>,
    topics: Option<usize>,
    out: &mut String,
    mut item: impl FnMut(&mut String, usize),
) {
    let mut list = labels::List::default();
    for topic in t.elems_at(topics) {
        for p in t.elems(topic, "Partitions") {
            list.item(out, |out| item(out, p));
        }
    }
    list.end(out);
}

fn request(t: &Tree<'_>, body: usize, out: &mut String) {
    let b = t.fields(body);
    let voter = b.int("VoterId");
    push_partitions(t, b.get("Topics"), out, |out, p| {
        // In wire order.
        let f = t.fields(p);
        let epoch = f.int("ReplicaEpoch");
        let replica = f.int("ReplicaId");
        let last_epoch = f.int("LastOffsetEpoch");
        let last = f.int("LastOffset");
        if f.bool("PreVote") == Some(true) {
            out.push_str("prevote ");
        }
        out.push_str("replica=");
        labels::push_int(out, replica.unwrap_or(-1));
        out.push_str(" epoch=");
        labels::push_int(out, epoch.unwrap_or(-1));
        out.push_str(" last=");
        labels::push_int(out, last.unwrap_or(-1));
        out.push('@');
        labels::push_int(out, last_epoch.unwrap_or(-1));
    });
    if let Some(v) = voter {
        out.push_str(" → voter ");
        labels::push_int(out, v);
    }
}

fn response(t: &Tree<'_>, body: usize, out: &mut String) {
    let start = out.len();
    let b = t.fields(body);
    let top = b.int("ErrorCode").unwrap_or(0);
    push_partitions(t, b.get("Topics"), out, |out, p| {
        let f = t.fields(p);
        let code = f.int("ErrorCode").unwrap_or(0);
        let leader = f.int("LeaderId");
        let epoch = f.int("LeaderEpoch");
        out.push_str("granted=");
        out.push_str(if f.bool("VoteGranted") == Some(true) {
            "yes"
        } else {
            "no"
        });
        out.push_str(" leader=");
        labels::push_int(out, leader.unwrap_or(-1));
        out.push_str(" epoch=");
        labels::push_int(out, epoch.unwrap_or(-1));
        if code != 0 {
            out.push(' ');
            labels::push_error(out, code);
        }
    });
    if top != 0 {
        if out.len() > start {
            out.push_str(", ");
        }
        labels::push_error(out, top);
    }
}

/// What the election timeline needs from a Vote request.
pub(crate) struct RequestFacts<'a> {
    pub cluster_id: Option<&'a str>,
    pub voter_id: Option<i32>,
    pub partitions: Vec<RequestPartition<'a>>,
}

/// One partition of a Vote request: one ballot. Absent fields read as -1 (0 for the index).
pub(crate) struct RequestPartition<'a> {
    pub topic: &'a str,
    pub partition: i32,
    pub replica_id: i32,
    pub replica_epoch: i32,
    pub pre_vote: bool,
    pub last_offset: i64,
    pub last_offset_epoch: i32,
}

pub(crate) fn request_facts<'a>(t: &Tree<'a>, body: usize) -> RequestFacts<'a> {
    let mut partitions = Vec::new();
    for topic in t.elements(body, "Topics") {
        let name = t.str(topic, "TopicName").flatten().unwrap_or("");
        for p in t.elements(topic, "Partitions") {
            partitions.push(RequestPartition {
                topic: name,
                partition: int32(t, p, "PartitionIndex").unwrap_or(0),
                replica_id: int32(t, p, "ReplicaId").unwrap_or(-1),
                replica_epoch: int32(t, p, "ReplicaEpoch").unwrap_or(-1),
                pre_vote: t.bool(p, "PreVote").unwrap_or(false),
                last_offset: t.int(p, "LastOffset").unwrap_or(-1),
                last_offset_epoch: int32(t, p, "LastOffsetEpoch").unwrap_or(-1),
            });
        }
    }
    RequestFacts {
        cluster_id: t.str(body, "ClusterId").flatten(),
        voter_id: int32(t, body, "VoterId"),
        partitions,
    }
}

/// What the election timeline needs from a Vote response.
pub(crate) struct ResponseFacts<'a> {
    /// Listener addresses the response ties to node ids (NodeEndpoints).
    pub endpoints: Vec<(i32, SocketAddr)>,
    pub top_error: i16,
    pub partitions: Vec<ResponsePartition<'a>>,
}

/// One partition of a Vote response: one answer.
pub(crate) struct ResponsePartition<'a> {
    pub topic: &'a str,
    pub partition: i32,
    pub granted: bool,
    pub error: i16,
    pub leader_id: i32,
    pub leader_epoch: i32,
}

pub(crate) fn response_facts<'a>(t: &Tree<'a>, body: usize) -> ResponseFacts<'a> {
    let mut endpoints = Vec::new();
    for e in t.elements(body, "NodeEndpoints") {
        let host = t
            .str(e, "Host")
            .flatten()
            .and_then(|h| h.parse::<IpAddr>().ok());
        let port = t.int(e, "Port").and_then(|p| u16::try_from(p).ok());
        if let (Some(id), Some(ip), Some(port)) = (int32(t, e, "NodeId"), host, port) {
            endpoints.push((id, SocketAddr::new(ip, port)));
        }
    }
    let mut partitions = Vec::new();
    for topic in t.elements(body, "Topics") {
        let name = t.str(topic, "TopicName").flatten().unwrap_or("");
        for p in t.elements(topic, "Partitions") {
            partitions.push(ResponsePartition {
                topic: name,
                partition: int32(t, p, "PartitionIndex").unwrap_or(0),
                granted: t.bool(p, "VoteGranted").unwrap_or(false),
                error: int16(t, p, "ErrorCode").unwrap_or(0),
                leader_id: int32(t, p, "LeaderId").unwrap_or(-1),
                leader_epoch: int32(t, p, "LeaderEpoch").unwrap_or(-1),
            });
        }
    }
    ResponseFacts {
        endpoints,
        top_error: int16(t, body, "ErrorCode").unwrap_or(0),
        partitions,
    }
}
