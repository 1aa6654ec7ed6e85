//! Hunting: after lost bytes (or a capture that began mid-stream), looking for
//! the next offset where a frame plausibly starts.

use crate::proto::{Kind, peek_response_correlation, peek_size};

use super::KafkaStats;
use super::detect::{VERSION_SLACK, request_start};
use super::framer::{Framer, State};
use super::pairing::Pairing;
use std::collections::HashSet;

/// Bytes a response needs before its correlation id can be checked.
const RESPONSE_PEEK: usize = 8;

/// What one hunting step did with the bytes it was shown.
pub(super) enum Hunted {
    /// A frame starts this many bytes in; hunting is over.
    Found(usize),
    /// This many bytes were passed over; the rest is kept for the next packet.
    Passed(usize),
}

impl Framer {
    /// Hunts through `rest`, the bytes not yet framed.
    pub(super) fn hunt_step(
        &mut self,
        rest: &[u8],
        pairing: &Pairing,
        stats: &mut KafkaStats,
    ) -> Hunted {
        let State::Hunting {
            skipped,
            unseen_start,
        } = self.state
        else {
            return Hunted::Found(0);
        };
        match hunt(rest, self.kind, pairing, self.limits.max_frame) {
            Some(at) => {
                stats.skipped_bytes += at as u64;
                // Earlier packets may have been passed over too, not just `at` bytes of this one.
                let skipped = skipped + at as u64;
                // A capture that simply starts at a boundary has lost nothing.
                if skipped > 0 || !unseen_start {
                    stats.resyncs += 1;
                }
                if skipped > 0 {
                    self.notes.push(format!(
                        "resynchronised after skipping {skipped} bytes of no recognisable frame"
                    ));
                }
                self.state = State::Framing;
                Hunted::Found(at)
            }
            None => {
                // Keep a tail that may hold the start of the next frame.
                let keep = rest.len().min(hunt_keep(self.kind));
                let drop = rest.len() - keep;
                stats.skipped_bytes += drop as u64;
                self.state = State::Hunting {
                    skipped: skipped + drop as u64,
                    unseen_start,
                };
                Hunted::Passed(drop)
            }
        }
    }
}

/// Bytes kept while hunting, enough to test a header that straddles packets.
fn hunt_keep(kind: Kind) -> usize {
    match kind {
        Kind::Request => 14 + 255,
        Kind::Response => RESPONSE_PEEK - 1,
    }
}

/// The first offset where a plausible frame starts.
fn hunt(b: &[u8], kind: Kind, pairing: &Pairing, max_frame: u32) -> Option<usize> {
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
                let Some(size) = peek_size(s) else {
                    return false;
                };
                let Some(corr) = peek_response_correlation(s) else {
                    return false;
                };
                size >= 4
                    && (size as u32) <= max_frame
                    && asked.get_or_insert_with(|| pairing.asked()).contains(&corr)
            }
        }
    })
}
