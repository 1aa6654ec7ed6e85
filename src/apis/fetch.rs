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
    // Read in wire order.
    let f = b.tree.fields(b.at);
    // A follower says who it is: ReplicaId before v15, ReplicaState (tagged) after.
    let replica = f
        .int("ReplicaId")
        .or_else(|| {
            let s = f.get("ReplicaState")?;
            b.int(s, "ReplicaId")
        })
        .filter(|&r| r >= 0);
    if let Some(r) = replica {
        part(out, start, |out| kv(out, "replica", r));
    }
    if let Some(m) = f.int("MaxWaitMs") {
        part(out, start, |out| {
            kv(out, "maxwait", m);
            out.push_str("ms");
        });
    }
    if f.int("IsolationLevel") == Some(1) {
        part(out, start, |out| out.push_str("read_committed"));
    }
    match (f.int("SessionId"), f.int("SessionEpoch")) {
        (Some(0), Some(-1)) | (None, _) | (_, None) => {}
        (Some(id), Some(e)) => part(out, start, |out| {
            kv(out, "session", id);
            out.push('/');
            labels::push_int(out, e);
        }),
    }
    part(out, start, |out| {
        b.push_topics(out, b.at, "Topics", "Partitions", |out, p| {
            let f = b.tree.fields(p);
            out.push('p');
            labels::push_int(out, f.int("Partition").unwrap_or(-1));
            out.push('@');
            labels::push_int(out, f.int("FetchOffset").unwrap_or(-1));
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
            // Read in wire order; `Records` comes last on the wire.
            let f = b.tree.fields(p);
            let index = f.int("PartitionIndex");
            let code = f.int("ErrorCode");
            let hw = f.int("HighWatermark");
            let leader = f.get("CurrentLeader");
            if let Some(i) = index {
                part(out, from, |out| {
                    out.push('p');
                    labels::push_int(out, i);
                });
            }
            if let Some(code) = code.filter(|&c| c != 0) {
                part(out, from, |out| labels::push_error(out, code));
            }
            if let Some(r) = b.records(p, "Records") {
                part(out, from, |out| r.push_words(out));
            }
            if let Some(hw) = hw {
                part(out, from, |out| kv(out, "hw", hw));
            }
            if let Some(l) = leader {
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
