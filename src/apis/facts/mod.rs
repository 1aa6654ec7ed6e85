//! The facts the capture-wide analysis takes from APIs that have no summary file of
//! their own here: the consumer-group rebalance APIs (`group`) and the KRaft quorum
//! APIs besides Vote (`quorum`). Kept apart from the per-API summary files so that
//! both can grow without touching each other.

pub mod group;
pub mod quorum;

use crate::codec::{Tree, Value};

pub const FETCH: i16 = 1;
pub const JOIN_GROUP: i16 = 11;
pub const HEARTBEAT: i16 = 12;
pub const LEAVE_GROUP: i16 = 13;
pub const SYNC_GROUP: i16 = 14;
pub const BEGIN_QUORUM_EPOCH: i16 = 53;
pub const END_QUORUM_EPOCH: i16 = 54;

/// The analysis an API's facts feed, beyond the registry's `Track`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Feed {
    /// Consumer-group rebalances.
    Groups,
    /// The election timeline (leaders announced, resigned, or named by Fetch).
    Quorum,
}

/// Which analysis takes this API's messages, if one of the APIs above.
pub fn feed(key: i16) -> Option<Feed> {
    match key {
        JOIN_GROUP | SYNC_GROUP | HEARTBEAT | LEAVE_GROUP => Some(Feed::Groups),
        BEGIN_QUORUM_EPOCH | END_QUORUM_EPOCH | FETCH => Some(Feed::Quorum),
        _ => None,
    }
}

/// A string field as the wire has it (unescaped; views escape); `None` when absent or null.
pub(crate) fn raw_str<'a>(t: &Tree<'a>, parent: usize, name: &str) -> Option<&'a str> {
    t.str(parent, name).flatten()
}

/// A UUID field, if present.
pub(crate) fn uuid(t: &Tree<'_>, parent: usize, name: &str) -> Option<[u8; 16]> {
    match t.nodes.get(t.field(parent, name)?)?.value {
        Value::Uuid(u) => Some(u),
        _ => None,
    }
}
