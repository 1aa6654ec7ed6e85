//! Produce (key 0): what a producer sends where, and where the broker put it.

use super::fmt::{Body, part, push_show};
use crate::view::labels;
use super::{Api, Fields, Track};
use crate::codec::Kind;

/// The body fields its summary line reads (each with what is inside it), at any depth.
const SUMMARY: Fields = Fields::Names(&["Acks", "BaseOffset", "ErrorCode", "Index", "Name", "PartitionData", "PartitionResponses", "Records", "Responses", "ThrottleTimeMs", "Topic", "TopicData", "TopicId", "TopicName", "TransactionalId"]);

pub(crate) const API: Api = Api {
    key: 0,
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

/// `p3`: a partition's index.
fn index(out: &mut String, b: &Body<'_, '_>, p: usize, field: &str) {
    if let Some(i) = b.int(p, field) {
        out.push('p');
        labels::push_int(out, i);
    }
}

/// `acks=all txn=T orders[p0 5 records 312B, p1 …]`.
fn request(b: &Body<'_, '_>, out: &mut String) {
    let start = out.len();
    if let Some(a) = b.int(b.at, "Acks") {
        part(out, start, |out| {
            out.push_str("acks=");
            match a {
                -1 => out.push_str("all"),
                a => labels::push_int(out, a),
            }
        });
    }
    if let Some(t) = b.tree.str(b.at, "TransactionalId").flatten() {
        if !t.is_empty() {
            part(out, start, |out| {
                out.push_str("txn=");
                push_show(out, Some(t));
            });
        }
    }
    part(out, start, |out| {
        b.push_topics(out, b.at, "TopicData", "PartitionData", |out, p| {
            let from = out.len();
            part(out, from, |out| index(out, b, p, "Index"));
            if let Some(r) = b.records(p, "Records") {
                part(out, from, |out| r.push_words(out));
            }
        })
    });
}

/// `orders[p0 base=1234, p1 NOT_LEADER_OR_FOLLOWER]`.
fn response(b: &Body<'_, '_>, out: &mut String) {
    let start = out.len();
    part(out, start, |out| {
        b.push_topics(out, b.at, "Responses", "PartitionResponses", |out, p| {
            let from = out.len();
            // Read in wire order.
            let f = b.tree.fields(p);
            let index = f.int("Index");
            let code = f.int("ErrorCode");
            part(out, from, |out| {
                if let Some(i) = index {
                    out.push('p');
                    labels::push_int(out, i);
                }
            });
            match code.filter(|&c| c != 0) {
                Some(code) => part(out, from, |out| labels::push_error(out, code)),
                None => {
                    if let Some(base) = f.int("BaseOffset") {
                        part(out, from, |out| {
                            out.push_str("base=");
                            labels::push_int(out, base);
                        });
                    }
                }
            }
        })
    });
    if let Some(t) = super::fmt::throttle(b) {
        part(out, start, |out| out.push_str(&t));
    }
}
