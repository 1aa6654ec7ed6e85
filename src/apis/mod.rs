//! One file per Kafka API that needs more than the generic schema walk: the few words the
//! summary line says about a body, and which capture-wide analysis follows the API.
//!
//! Adding an API means adding its file here and a line in `APIS`; the schema walk, the
//! tree, hex and NDJSON views need nothing more.
#![cfg_attr(
    not(test),
    deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)
)]

pub mod facts;
pub mod find_coordinator;
pub mod generic;
pub mod vote;

mod add_partitions_to_txn;
mod api_versions;
mod broker_heartbeat;
mod broker_registration;
mod create_topics;
mod delete_topics;
mod describe_configs;
mod end_txn;
mod fetch;
pub mod fmt;
mod group;
mod init_producer_id;
mod list_offsets;
mod metadata;
mod offsets;
mod produce;
mod quorum;
mod raft_voters;
mod sasl;
#[cfg(test)]
mod tests;

pub use fmt::Body;

use crate::codec::{Message, Need, NeedPath, Tree};
use crate::topics::IdNames;
use crate::view::labels;

/// What kwire knows about one API beyond its schema. Summary details write their lists
/// with [`labels::push_list`] and their strings with [`push_string`] or [`labels::push_short`], so every
/// API's line stays short the same way.
pub struct Api {
    pub key: i16,
    /// Appends the summary line's details of a decoded body.
    pub details: fn(&Body<'_, '_>, &mut String),
    /// The body fields `details` reads: only these are decoded for a summary line.
    pub summary: Fields,
    /// Which capture-wide analysis takes this API's messages.
    pub track: Track,
}

/// Appends the summary line's details of `m`'s decoded body (node `body`) to `out`: the
/// API's own words, or the generic line (top-level scalars and error codes) for an API
/// without a file here, then `records: …` for the `records` fields those words did not show.
pub fn write_details<'a>(out: &mut String, m: &Message<'a>, body: usize, names: &IdNames) {
    let tree = &m.tree;
    let b = Body {
        kind: m.kind,
        tree,
        at: body,
        names,
        client: m.client_id,
        records_shown: Default::default(),
    };
    let start = out.len();
    match m.api_key.and_then(get) {
        Some(api) => (api.details)(&b, out),
        None => out.push_str(&generic::details(&b)),
    }
    // The batch headers' facts (records, bytes, codecs) of `records` fields the
    // API's own words left out; only a schema with such a field can have any.
    if m.records && !b.records_shown.get() {
        let mark = out.len();
        if mark > start {
            out.push_str("  ");
        }
        if !crate::view::records::push_summary_under(out, tree, body) {
            out.truncate(mark);
        }
    }
}

/// Body fields an API file names.
#[derive(Clone, Copy, Debug)]
pub enum Fields {
    /// Dotted paths from the body's root, each built with what is inside it.
    Paths(&'static [&'static str]),
    /// Names at any depth, each built with what is inside it.
    Names(&'static [&'static str]),
}

impl Fields {
    fn need_paths(self) -> Vec<NeedPath> {
        match self {
            Fields::Paths(p) => p.iter().map(|s| NeedPath::anchored(s)).collect(),
            Fields::Names(n) => n.iter().map(|s| NeedPath::anywhere(s)).collect(),
        }
    }
}

/// What a summary line reads of a body: each API file's fields, the generic line's for
/// an API without one, every error code (the `error` colour), and every `records` field
/// with its topic and partition (the batch facts).
pub fn summary_need() -> Need {
    let mut need = Need::header()
        .with_generic()
        .with_error_codes()
        .with_records();
    for a in APIS {
        need = need.with_api_paths(a.key, a.summary.need_paths());
    }
    need
}

/// The capture-wide analyses an API can feed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Track {
    /// KRaft elections (Vote).
    Elections,
    /// The coordinator map (FindCoordinator).
    Coordinators,
    /// None: the API has a summary only.
    SummaryOnly,
}

/// The registry: one line per file above.
static APIS: &[Api] = &[
    vote::API,
    find_coordinator::API,
    produce::API,
    fetch::API,
    list_offsets::API,
    metadata::API,
    offsets::COMMIT,
    offsets::FETCH,
    group::JOIN,
    group::HEARTBEAT,
    group::LEAVE,
    group::SYNC,
    sasl::HANDSHAKE,
    api_versions::API,
    create_topics::API,
    delete_topics::API,
    init_producer_id::API,
    add_partitions_to_txn::API,
    end_txn::API,
    describe_configs::API,
    sasl::AUTHENTICATE,
    quorum::BEGIN,
    quorum::END,
    quorum::DESCRIBE,
    quorum::FETCH_SNAPSHOT,
    broker_registration::API,
    broker_heartbeat::API,
    raft_voters::ADD,
    raft_voters::REMOVE,
    raft_voters::UPDATE,
];

/// The API's own knowledge, if kwire has more than its schema.
pub fn get(key: i16) -> Option<&'static Api> {
    APIS.iter().find(|a| a.key == key)
}

/// Appends a string field's value for the summary line: escaped and cut as
/// [`labels::short`] does; `null` when the wire says null.
pub(crate) fn push_string(out: &mut String, s: Option<&str>) {
    match s {
        Some(s) => labels::push_short(out, s),
        None => out.push_str("null"),
    }
}

/// An `i32` field; `None` when absent or out of range.
pub(crate) fn int32(t: &Tree<'_>, parent: usize, name: &str) -> Option<i32> {
    t.int(parent, name).and_then(|v| i32::try_from(v).ok())
}

/// An `i16` field; `None` when absent or out of range.
pub(crate) fn int16(t: &Tree<'_>, parent: usize, name: &str) -> Option<i16> {
    t.int(parent, name).and_then(|v| i16::try_from(v).ok())
}

#[cfg(test)]
mod registry_tests {
    use super::*;

    #[test]
    fn registry_has_one_row_per_key() {
        for a in APIS {
            assert_eq!(APIS.iter().filter(|b| b.key == a.key).count(), 1);
            assert!(crate::proto::api_name(a.key).is_some());
        }
        assert!(get(crate::proto::VOTE).is_some() && get(0).is_some() && get(7).is_none());
    }
}
