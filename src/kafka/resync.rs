//! Hunting: after lost bytes (or a capture that began mid-stream), looking for
//! the next offset where a frame plausibly starts.

use crate::codec::Kind;

use super::detect::{VERSION_SLACK, request_start};
use super::frame_size;
use super::pairing::Pending;
use std::collections::{HashSet, VecDeque};

/// Bytes a response needs before its correlation id can be checked.
const RESPONSE_PEEK: usize = 8;

/// Bytes kept while hunting, enough to test a header that straddles packets.
pub(super) fn hunt_keep(kind: Kind) -> usize {
    match kind {
        Kind::Request => 14 + 255,
        Kind::Response => RESPONSE_PEEK - 1,
    }
}

/// The first offset where a plausible frame starts.
pub(super) fn hunt(
    b: &[u8],
    kind: Kind,
    pending: &VecDeque<Pending>,
    max_frame: u32,
) -> Option<usize> {
    let last = b.len().checked_sub(match kind {
        Kind::Request => 14,
        Kind::Response => RESPONSE_PEEK,
    })?;
    // The correlation ids asked, as a set made at the first plausible size: scanning
    // the pending list at each offset cost up to max_pending steps per byte.
    let mut asked: Option<HashSet<i32>> = None;
    (0..=last).find(|&at| {
        let s = b.get(at..).unwrap_or_default();
        match kind {
            // Newer clients send versions past the table; detection admits them, so must this.
            Kind::Request => request_start(s, max_frame, VERSION_SLACK) == Some(true),
            Kind::Response => {
                let Some(size) = frame_size(s) else {
                    return false;
                };
                let Some(corr) = s
                    .get(4..8)
                    .and_then(|c| c.try_into().ok())
                    .map(i32::from_be_bytes)
                else {
                    return false;
                };
                size >= 4
                    && (size as u32) <= max_frame
                    && asked
                        .get_or_insert_with(|| pending.iter().map(|p| p.correlation_id).collect())
                        .contains(&corr)
            }
        }
    })
}
