//! One direction of a Kafka connection: cuts its byte stream into frames at
//! their size prefixes, keeps only the head of a frame too large to buffer, and
//! passes over holes.

use crate::proto::{Kind, peek_size};

use super::pairing::Pairing;
use super::{KafkaConfig, KafkaMessage, KafkaStats};
use crate::tcp::{ConnId, Dir};
use std::net::SocketAddr;

/// Where a direction's framing stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum State {
    /// At a frame boundary, or inside a frame being buffered whole.
    Framing,
    /// Passing over the rest of a frame of which only the head is kept (in `buf`).
    Skipping {
        /// Bytes still to pass over.
        left: u64,
        /// The frame's wire size.
        total: u64,
        /// Bytes are missing from it, not just too many to keep.
        damaged: bool,
    },
    /// Looking for a frame boundary after lost bytes (`buf` holds a tail that
    /// may start one).
    Hunting {
        /// Bytes thrown away since hunting began, over every packet, for the resync note.
        skipped: u64,
        /// The stream's start was not captured, so its first boundary is looked for, not assumed.
        unseen_start: bool,
    },
}

/// The limits a framer works within, from `KafkaConfig`.
#[derive(Debug, Clone, Copy)]
pub(super) struct Limits {
    pub(super) max_frame: u32,
    max_buffered: usize,
    oversized_head: usize,
}

/// One direction's framing state.
#[derive(Debug)]
pub(super) struct Framer {
    conn: ConnId,
    /// Requests flow from the client, responses to it.
    pub(super) kind: Kind,
    src: SocketAddr,
    dst: SocketAddr,
    pub(super) limits: Limits,
    /// The partial frame (or, skipping, its head; hunting, a tail).
    pub(super) buf: Vec<u8>,
    pub(super) state: State,
    /// Warnings for the next frame completed in this direction.
    pub(super) notes: Vec<String>,
}

impl Framer {
    /// Both directions' framers, once `client` is known.
    pub(super) fn pair(
        conn: ConnId,
        a: SocketAddr,
        b: SocketAddr,
        client: Dir,
        syn_seen: bool,
        cfg: &KafkaConfig,
    ) -> [Framer; 2] {
        let limits = Limits {
            max_frame: cfg.max_frame,
            max_buffered: cfg.max_buffered_per_direction,
            oversized_head: cfg.oversized_head,
        };
        let make = |dir: Dir, src, dst| {
            let kind = if dir == client {
                Kind::Request
            } else {
                Kind::Response
            };
            // Without the SYN the first byte may fall inside a request, and a size
            // read there can swallow the frames after it. Requests carry a header to
            // check, so that direction hunts for one; a response has nothing to check
            // until its request is seen, so its first boundary is still assumed.
            let state = if kind == Kind::Request && !syn_seen {
                State::Hunting {
                    skipped: 0,
                    unseen_start: true,
                }
            } else {
                State::Framing
            };
            Framer {
                conn,
                kind,
                src,
                dst,
                limits,
                buf: Vec::new(),
                state,
                notes: Vec::new(),
            }
        };
        [make(Dir::AtoB, a, b), make(Dir::BtoA, b, a)]
    }

    /// A frame seen in this direction, completed by packet `frame`.
    fn message<'a>(
        &self,
        data: &'a [u8],
        wire_size: u64,
        cut: bool,
        warnings: Vec<String>,
        packet: u64,
        ts_ns: i64,
    ) -> KafkaMessage<'a> {
        KafkaMessage {
            conn: self.conn,
            packet,
            ts_ns,
            src: self.src,
            dst: self.dst,
            kind: self.kind,
            data,
            wire_size,
            cut,
            api: None,
            request_packet: None,
            latency_ns: None,
            warnings,
        }
    }

    fn oversize_note(&self, total: u64) -> String {
        format!(
            "message of {total} bytes is larger than the {} bytes kept per direction; only its head was decoded",
            self.limits.max_buffered
        )
    }

    /// Appends `data` from packet `frame` and emits every frame it completes.
    pub(super) fn feed(
        &mut self,
        data: &[u8],
        packet: u64,
        ts_ns: i64,
        pairing: &mut Pairing,
        stats: &mut KafkaStats,
        out: &mut dyn FnMut(&KafkaMessage<'_>),
    ) {
        let mut data = data;
        // Pass over the rest of a frame kept only in part, then report it.
        if let State::Skipping {
            left,
            total,
            damaged,
        } = &mut self.state
        {
            let n = ((*left).min(data.len() as u64)) as usize;
            *left -= n as u64;
            data = data.get(n..).unwrap_or_default();
            if *left > 0 {
                return;
            }
            let (total, damaged) = (*total, *damaged);
            self.state = State::Framing;
            let head = std::mem::take(&mut self.buf);
            if damaged {
                stats.cut_frames += 1;
            }
            let mut notes = std::mem::take(&mut self.notes);
            if !damaged {
                notes.push(self.oversize_note(total));
            }
            pairing.emit(
                self.message(&head, total, true, notes, packet, ts_ns),
                stats,
                out,
            );
        }
        // Work on the data in place when nothing is buffered: no copy in the common case.
        let owned = if self.buf.is_empty() {
            None
        } else {
            self.buf.extend_from_slice(data);
            Some(std::mem::take(&mut self.buf))
        };
        let view: &[u8] = owned.as_deref().unwrap_or(data);
        let mut pos = 0usize;
        loop {
            let rest = view.get(pos..).unwrap_or_default();
            if let State::Hunting { .. } = self.state {
                match self.hunt_step(rest, pairing, stats) {
                    super::resync::Hunted::Found(at) => {
                        pos += at;
                        continue;
                    }
                    super::resync::Hunted::Passed(n) => {
                        pos += n;
                        break;
                    }
                }
            }
            let Some(size) = peek_size(rest) else { break };
            let min = match self.kind {
                Kind::Request => 8,
                Kind::Response => 4,
            };
            if size < min || size as u32 > self.limits.max_frame {
                stats.desyncs += 1;
                self.notes.push(format!(
                    "size prefix {size} makes no sense here; framing was lost"
                ));
                // The byte the bad prefix started at is passed over.
                self.state = State::Hunting {
                    skipped: 1,
                    unseen_start: false,
                };
                stats.skipped_bytes += 1;
                pos += 1;
                continue;
            }
            let total = size as usize + 4;
            if total > self.limits.max_buffered {
                // Keep the head for its header; pass over the rest as it arrives.
                stats.oversized_frames += 1;
                let keep = self.limits.oversized_head.min(rest.len());
                let head = rest.get(..keep).unwrap_or_default().to_vec();
                let have = rest.len().min(total);
                let left = (total - have) as u64;
                pos += have;
                if left == 0 {
                    let mut notes = std::mem::take(&mut self.notes);
                    notes.push(self.oversize_note(total as u64));
                    pairing.emit(
                        self.message(&head, total as u64, true, notes, packet, ts_ns),
                        stats,
                        out,
                    );
                } else {
                    self.buf = head;
                    self.state = State::Skipping {
                        left,
                        total: total as u64,
                        damaged: false,
                    };
                }
                continue;
            }
            let Some(whole) = rest.get(..total) else {
                break;
            };
            let notes = std::mem::take(&mut self.notes);
            pairing.emit(
                self.message(whole, total as u64, false, notes, packet, ts_ns),
                stats,
                out,
            );
            pos += total;
        }
        if matches!(self.state, State::Skipping { .. }) {
            return;
        }
        match owned {
            // The buffer goes back with only what was consumed removed: copying the
            // rest into a new one made a large frame cost its size again with every
            // packet, quadratic time in the frame's size.
            Some(mut b) if self.buf.is_empty() => {
                b.drain(..pos.min(b.len()));
                // Mostly consumed: keep the rest in a right-sized buffer, so a connection
                // that once carried a large frame does not hold its capacity (held() counts
                // lengths). Only frames completing get here, so this copy stays linear.
                if b.len() < b.capacity() / 4 {
                    b = b.as_slice().to_vec();
                }
                self.buf = b;
            }
            _ => {
                let left = view.get(pos..).unwrap_or_default();
                if !left.is_empty() {
                    if self.buf.capacity() == 0 {
                        self.buf = Vec::with_capacity(left.len());
                    }
                    self.buf.extend_from_slice(left);
                }
            }
        }
    }

    /// `len` bytes of this direction were not captured.
    pub(super) fn gap(&mut self, len: u64, stats: &mut KafkaStats) {
        match &mut self.state {
            State::Hunting { skipped, .. } => {
                *skipped += self.buf.len() as u64;
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
                    if have + len <= total {
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
        self.state = State::Hunting {
            skipped: 0,
            unseen_start: false,
        };
        self.notes
            .push(format!("{len} bytes were not captured before this message"));
    }

    /// At close, a frame still partial is reported as cut.
    pub(super) fn flush(
        &mut self,
        packet: u64,
        ts_ns: i64,
        pairing: &mut Pairing,
        stats: &mut KafkaStats,
        out: &mut dyn FnMut(&KafkaMessage<'_>),
    ) {
        if let State::Hunting { .. } = self.state {
            // The tail kept in case a frame started in it was never one: it is skipped too.
            stats.skipped_bytes += self.buf.len() as u64;
            self.buf.clear();
            return;
        }
        if self.buf.is_empty() {
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
            self.message(&buf, wire, true, notes, packet, ts_ns),
            stats,
            out,
        );
    }
}
