//! Fetch (key 1): what a consumer or follower asks for, and the bytes, high
//! watermarks and errors the leader answers.

use super::fmt::{Body, part};
use crate::view::labels;
use super::{Api, Fields, Track};
use crate::codec::Kind;

/// The body fields its summary line reads (each with what is inside it), at any depth.
const SUMMARY: Fields = Fields::Names(&["CurrentLeader", "ErrorCode", "FetchOffset", "HighWatermark", "IsolationLevel", "LeaderEpoch", "LeaderId", "MaxWaitMs", "Name", "Partition", "PartitionIndex", "Partitions", "Records", "ReplicaId", "ReplicaState", "Responses", "SessionEpoch", "SessionId", "ThrottleTimeMs", "Topic", "TopicId", "TopicName", "Topics"]);

pub(crate) const API: Api = Api {
    key: 1,
    details,
    summary: SUMMARY,
    track: Track::SummaryOnly,
};

fn details(b: &Body<'_, '_>, out: &mut String) {
    match b.kind {
        Kind::Request => request(b, out),
        Kind::Response => response(b, out),
    }
}

/// `key=N`.
fn kv(out: &mut String, key: &str, v: i64) {
    out.push_str(key);
    out.push('=');
    labels::push_int(out, v);
}

/// `replica=2 maxwait=500ms session=7/3 orders[p0@1234, p1@56]`.
fn request(b: &Body<'_, '_>, out: &mut String) {
    let start = out.len();
    // A follower says who it is: ReplicaId before v15, ReplicaState (tagged) after.
    let replica = b
        .int(b.at, "ReplicaId")
        .or_else(|| {
            let s = b.tree.field(b.at, "ReplicaState")?;
            b.int(s, "ReplicaId")
        })
        .filter(|&r| r >= 0);
    if let Some(r) = replica {
        part(out, start, |out| kv(out, "replica", r));
    }
    if let Some(m) = b.int(b.at, "MaxWaitMs") {
        part(out, start, |out| {
            kv(out, "maxwait", m);
            out.push_str("ms");
        });
    }
    if b.int(b.at, "IsolationLevel") == Some(1) {
        part(out, start, |out| out.push_str("read_committed"));
    }
    match (b.int(b.at, "SessionId"), b.int(b.at, "SessionEpoch")) {
        (Some(0), Some(-1)) | (None, _) | (_, None) => {}
        (Some(id), Some(e)) => part(out, start, |out| {
            kv(out, "session", id);
            out.push('/');
            labels::push_int(out, e);
        }),
    }
    part(out, start, |out| {
        b.push_topics(out, b.at, "Topics", "Partitions", |out, p| {
            out.push('p');
            labels::push_int(out, b.int(p, "Partition").unwrap_or(-1));
            out.push('@');
            labels::push_int(out, b.int(p, "FetchOffset").unwrap_or(-1));
        })
    });
}

/// `orders[p0 5 records 312B hw=1234, p1 OFFSET_OUT_OF_RANGE hw=-1]`.
fn response(b: &Body<'_, '_>, out: &mut String) {
    let start = out.len();
    if let Some(code) = b.int(b.at, "ErrorCode").filter(|&c| c != 0) {
        part(out, start, |out| labels::push_error(out, code));
    }
    if let Some(s) = b.int(b.at, "SessionId").filter(|&s| s != 0) {
        part(out, start, |out| kv(out, "session", s));
    }
    part(out, start, |out| {
        b.push_topics(out, b.at, "Responses", "Partitions", |out, p| {
            let from = out.len();
            if let Some(i) = b.int(p, "PartitionIndex") {
                part(out, from, |out| {
                    out.push('p');
                    labels::push_int(out, i);
                });
            }
            if let Some(code) = b.int(p, "ErrorCode").filter(|&c| c != 0) {
                part(out, from, |out| labels::push_error(out, code));
            }
            if let Some(r) = b.records(p, "Records") {
                part(out, from, |out| r.push_words(out));
            }
            if let Some(hw) = b.int(p, "HighWatermark") {
                part(out, from, |out| kv(out, "hw", hw));
            }
            if let Some(l) = b.tree.field(p, "CurrentLeader") {
                part(out, from, |out| {
                    kv(out, "leader", b.int(l, "LeaderId").unwrap_or(-1));
                    out.push(' ');
                    kv(out, "epoch", b.int(l, "LeaderEpoch").unwrap_or(-1));
                });
            }
        })
    });
    if let Some(t) = super::fmt::throttle(b) {
        part(out, start, |out| out.push_str(&t));
    }
}
