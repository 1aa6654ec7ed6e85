//! A direction's data ending (a hole, the close) and the other direction's
//! losses: what a framer does with what it holds.

use super::{Framer, State};
use crate::kafka::pairing::Pairing;
use crate::kafka::resync::Hunt;
use crate::kafka::{KafkaMessage, KafkaStats};
use crate::proto::{Kind, peek_size};

impl Framer {
    /// The other direction (the client) lost bytes to a capture gap: its
    /// requests may be missing, so this side's first frame needs no answer to one.
    pub(in crate::kafka) fn peer_lost_bytes(&mut self) {
        if self.kind == Kind::Response {
            self.check_first = false;
        }
    }

    /// A server's first bytes are held until its client's side says whether
    /// they answer something (see `first_plausible`).
    pub(in crate::kafka) fn first_waits(&self) -> bool {
        self.kind == Kind::Response && self.check_first && self.state == State::Framing
    }

    /// Drops the bytes held (at a hole or the overall cap); returns how many.
    pub(in crate::kafka) fn drop_held(&mut self) -> usize {
        self.marks.clear();
        std::mem::take(&mut self.buf).len()
    }

    /// The data ends here (a hole or the close): a hunt still waiting for bytes
    /// decides with what it has, and frames what it then finds.
    fn settle_hunt(
        &mut self,
        frame: u64,
        ts_ns: i64,
        pairing: &mut Pairing,
        stats: &mut KafkaStats,
        out: &mut dyn FnMut(&KafkaMessage<'_>),
    ) {
        if let State::Hunting(h) = &mut self.state {
            h.ending = true;
            self.feed(&[], frame, ts_ns, pairing, stats, out);
            if let State::Hunting(h) = &mut self.state {
                h.ending = false;
            }
        }
    }

    /// `len` bytes of this direction were not captured, noticed at packet `frame`.
    pub(in crate::kafka) fn gap(
        &mut self,
        len: u64,
        frame: u64,
        ts_ns: i64,
        pairing: &mut Pairing,
        stats: &mut KafkaStats,
        out: &mut dyn FnMut(&KafkaMessage<'_>),
    ) {
        self.settle_hunt(frame, ts_ns, pairing, stats, out);
        self.marks.clear();
        match &mut self.state {
            State::Hunting(h) => {
                h.skipped += self.buf.len() as u64;
                h.forget();
                stats.skipped_bytes += self.buf.len() as u64;
                self.buf.clear();
                return;
            }
            State::Skipping { left, damaged, .. } => {
                // The hole falls inside a frame already being passed over: framing survives.
                if len <= *left {
                    *left -= len;
                    *damaged = true;
                    return;
                }
            }
            State::Framing => {
                if let Some(size) = peek_size(&self.buf) {
                    let total = size as u64 + 4;
                    let have = self.buf.len() as u64;
                    if have.saturating_add(len) <= total {
                        // The hole lies inside this frame: keep its head, pass over the rest.
                        self.state = State::Skipping {
                            left: total - have - len,
                            total,
                            damaged: true,
                        };
                        self.notes
                            .push(format!("{len} bytes of this message were not captured"));
                        return;
                    }
                }
            }
        }
        self.buf.clear();
        self.state = State::Hunting(Hunt::after_loss(0));
        self.notes.push(if len == u64::MAX {
            // From the TLS layer: records lost or not decrypted, plaintext length unknown.
            "bytes of unknown length were lost before this message (TLS records not captured or not decrypted)".to_string()
        } else {
            format!("{len} bytes were not captured before this message")
        });
    }

    /// At close, a frame still partial is reported as cut.
    pub(in crate::kafka) fn flush(
        &mut self,
        frame: u64,
        ts_ns: i64,
        pairing: &mut Pairing,
        stats: &mut KafkaStats,
        out: &mut dyn FnMut(&KafkaMessage<'_>),
    ) {
        self.settle_hunt(frame, ts_ns, pairing, stats, out);
        if let State::Hunting(_) = self.state {
            // The tail kept in case a frame started in it was never one: it is skipped too.
            stats.skipped_bytes += self.buf.len() as u64;
            self.buf.clear();
            return;
        }
        if self.buf.is_empty() {
            return;
        }
        if self.first_waits() && pairing.seen() > 0 {
            // The client's last bytes were a request: the held answers can be framed.
            self.feed(&[], frame, ts_ns, pairing, stats, out);
        }
        if self.buf.is_empty() {
            return;
        }
        if self.first_waits() && pairing.seen() == 0 {
            // A server's first bytes that nothing showed to be an answer.
            stats.desyncs += 1;
            stats.skipped_bytes += self.buf.len() as u64;
            self.buf.clear();
            return;
        }
        let buf = std::mem::take(&mut self.buf);
        let wire = match self.state {
            State::Skipping { total, .. } => total,
            _ => peek_size(&buf).map_or(buf.len() as u64, |s| (s.max(0) as u64) + 4),
        };
        let mut notes = std::mem::take(&mut self.notes);
        notes.push(format!(
            "the connection ended {} bytes into this {wire}-byte message",
            buf.len()
        ));
        stats.cut_frames += 1;
        pairing.emit(
            self.message(&buf, wire, true, notes, frame, ts_ns, self.seen),
            stats,
            out,
        );
    }
}
