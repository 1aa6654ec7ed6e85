//! One file per Kafka API that needs more than the generic schema walk: the few words the
//! summary line says about a body, and which capture-wide analysis follows the API.
//!
//! Adding an API means adding its file here and a line in `APIS`; the schema walk, the
//! tree, hex and NDJSON views need nothing more.
#![cfg_attr(
    not(test),
    deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)
)]

pub mod find_coordinator;
pub mod generic;
pub mod vote;

use crate::codec::{Kind, Tree};
use crate::view::labels;

/// What kwire knows about one API beyond its schema. Summary details write their lists
/// with [`labels::list`] and their strings with [`string`] or [`labels::short`], so every
/// API's line stays short the same way.
pub struct Api {
    pub key: i16,
    /// The summary line's details of a decoded body (node `body` of the tree).
    pub details: fn(Kind, &Tree<'_>, usize) -> String,
    /// Which capture-wide analysis takes this API's messages.
    pub track: Track,
}

/// The capture-wide analyses an API can feed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Track {
    /// KRaft elections (Vote).
    Elections,
    /// The coordinator map (FindCoordinator).
    Coordinators,
}

/// The registry: one line per file above.
static APIS: &[Api] = &[vote::API, find_coordinator::API];

/// The API's own knowledge, if kwire has more than its schema.
pub fn get(key: i16) -> Option<&'static Api> {
    APIS.iter().find(|a| a.key == key)
}

/// A string field for the summary line: escaped and cut as [`labels::short`] does;
/// `null` when the wire says null.
pub(crate) fn string(t: &Tree<'_>, parent: usize, name: &str) -> Option<String> {
    Some(
        t.str(parent, name)?
            .map_or_else(|| "null".into(), labels::short),
    )
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
mod tests {
    use super::*;

    #[test]
    fn registry_has_one_row_per_key() {
        for a in APIS {
            assert_eq!(APIS.iter().filter(|b| b.key == a.key).count(), 1);
            assert!(crate::proto::api_name(a.key).is_some());
        }
        assert!(get(crate::proto::VOTE).is_some() && get(0).is_none());
    }
}
