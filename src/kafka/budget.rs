//! The overall cap on partial-frame bytes: past it, the connection that grew
//! drops what it holds and resynchronises.

use super::framer::State;
use super::resync::Hunt;
use super::{Conn, KafkaStats, Stage};

/// Partial-frame bytes held over all connections, against the cap.
#[derive(Debug)]
pub(super) struct Budget {
    held: usize,
    cap: usize,
}

impl Budget {
    pub(super) fn new(cap: usize) -> Self {
        Budget { held: 0, cap }
    }

    pub(super) fn held(&self) -> usize {
        self.held
    }

    /// One connection went from holding `before` bytes to `after`; whether the cap is now passed.
    pub(super) fn account(&mut self, before: usize, after: usize) -> bool {
        self.held = self.held.saturating_sub(before) + after;
        self.held > self.cap
    }

    /// Bytes given up.
    pub(super) fn release(&mut self, n: usize) {
        self.held = self.held.saturating_sub(n);
    }
}

impl Conn {
    /// Partial-frame bytes this connection holds.
    pub(super) fn held(&self) -> usize {
        match &self.stage {
            Stage::Undecided(held) => held.iter().map(|h| h.buf.len()).sum(),
            Stage::Kafka { framers, .. } => {
                framers.iter().map(|f| f.buf.len()).sum::<usize>() + self.pairing.tentative_bytes()
            }
            Stage::NotKafka => 0,
        }
    }

    /// Over the overall cap: gives up what this connection holds; returns the bytes.
    pub(super) fn shed(&mut self, stats: &mut KafkaStats) -> usize {
        let mut shed = 0;
        match &mut self.stage {
            Stage::Undecided(held) => {
                // Detection cannot go on without its bytes.
                for h in held.iter().filter(|h| !h.buf.is_empty()) {
                    shed += h.buf.len();
                }
                self.stage = Stage::NotKafka;
                stats.not_kafka += 1;
            }
            Stage::Kafka { framers, .. } => {
                shed += self.pairing.tentative_bytes();
                self.pairing.drop_tentative(stats);
                for f in framers.iter_mut().filter(|f| !f.buf.is_empty()) {
                    let n = f.drop_held();
                    shed += n;
                    if let State::Hunting(h) = &mut f.state {
                        // What it was waiting on is gone.
                        h.forget();
                    } else {
                        f.state = State::Hunting(Hunt::after_loss(0));
                    }
                    f.notes.push(format!(
                        "{n} bytes were dropped before this message: the overall buffer limit was reached"
                    ));
                }
            }
            Stage::NotKafka => {}
        }
        stats.shed_bytes += shed as u64;
        shed
    }
}
