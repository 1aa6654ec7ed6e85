//! The overall cap on partial-frame bytes: past it, the connection that grew
//! drops what it holds and resynchronises.

use super::framer::State;
use super::resync::Hunt;
use super::{Conn, KafkaStats, Stage};

/// Partial-frame bytes held over all connections, against the cap; and the room the
/// framers' buffers keep beyond their bytes, so the next partial frame need not allocate
/// again, against a cap of its own.
#[derive(Debug)]
pub(super) struct Budget {
    held: usize,
    cap: usize,
    room: usize,
    room_cap: usize,
}

impl Budget {
    pub(super) fn new(cap: usize) -> Self {
        Budget {
            held: 0,
            cap,
            room: 0,
            room_cap: cap / 4,
        }
    }

    /// Room kept over all connections.
    #[cfg(test)]
    pub(super) fn room(&self) -> usize {
        self.room
    }

    /// Counts the room connection `c` keeps now, `after` (it kept `before`; `None`: it is
    /// gone). Past the room's cap, `c` keeps none.
    #[inline]
    pub(super) fn keep_room(&mut self, before: usize, after: usize, c: Option<&mut Conn>) {
        self.room = self.room.saturating_sub(before) + after;
        if self.room > self.room_cap {
            self.trim(after, c);
        }
    }

    #[cold]
    fn trim(&mut self, after: usize, c: Option<&mut Conn>) {
        if let Some(c) = c {
            c.trim();
            self.room = self.room.saturating_sub(after) + c.held_room().1;
        }
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
        self.held_room().0
    }

    /// Partial-frame bytes this connection holds, and the room its framers' buffers keep
    /// beyond their bytes.
    #[inline]
    pub(super) fn held_room(&self) -> (usize, usize) {
        match &self.stage {
            Stage::Undecided(held) => (held.iter().map(|h| h.buf.len()).sum(), 0),
            Stage::Kafka { framers, .. } => {
                let [x, y] = &**framers;
                let bytes = x.buf.len() + y.buf.len();
                let room = (x.buf.capacity() - x.buf.len()) + (y.buf.capacity() - y.buf.len());
                (bytes + self.pairing.tentative_bytes(), room)
            }
            Stage::NotKafka => (0, 0),
        }
    }

    /// Over the room's cap: the framers' buffers keep no room.
    pub(super) fn trim(&mut self) {
        if let Stage::Kafka { framers, .. } = &mut self.stage {
            for f in framers.iter_mut() {
                if f.buf.is_empty() {
                    f.buf = Vec::new();
                } else {
                    f.buf.shrink_to_fit();
                }
            }
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
