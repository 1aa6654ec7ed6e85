//! The run on two threads. The caller's thread reads the source and runs the hooks
//! (`poll`, `packet`, `message`) and [`deliver`] (dissect, topic names, counters); a
//! second thread runs the [`Front`] (IP, TCP, TLS, Kafka framing and pairing).
//!
//! The source and the hooks stay together because `Hooks::poll` takes the source, and a
//! sink's stop must end the reading at once. Packets go to the front in batches (their
//! bytes copied into one buffer per batch), and each batch comes back as one batch of the
//! Kafka frames it finished (bytes copied likewise), in order, so messages are delivered
//! in the order they complete, as on one thread. Buffers go back and forth and are reused.
//! At most [`IN_FLIGHT`] batches are out at once, so memory stays flat and neither thread
//! can block the other.

use super::{Back, Carried, Config, Emit, End, Front, Hooks, RunStats, deliver};
use crate::capture::{CaptureError, Packet, Source};
use crate::kafka::KafkaMessage;
use crate::proto::Kind;
use crate::tcp::ConnId;
use crossbeam_channel::{Receiver, Sender, bounded};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// Batches sent to the front and not yet back.
const IN_FLIGHT: usize = 4;
/// A batch of packets is sent when it holds this many packets or bytes.
const BATCH_PACKETS: usize = 1024;
const BATCH_BYTES: usize = 256 << 10;
/// A buffer that grew past this (a huge frame) is not kept for reuse.
const KEEP_BYTES: usize = 4 << 20;
/// How long a live read may wait when nothing is pending (as on one thread).
const LIVE_WAIT: Duration = Duration::from_millis(100);

/// Packets read, in order, their bytes in one buffer.
#[derive(Default)]
struct Packets {
    bytes: Vec<u8>,
    items: Vec<Held>,
}

/// One packet of a [`Packets`] batch: its header, and where its bytes are.
struct Held {
    number: u64,
    ts_sec: i64,
    ts_nsec: u32,
    linktype: i32,
    caplen: u32,
    origlen: u32,
    interface: u32,
    file: u32,
    start: usize,
    end: usize,
}

impl Packets {
    fn push(&mut self, number: u64, p: &Packet<'_>) {
        let start = self.bytes.len();
        self.bytes.extend_from_slice(p.data);
        self.items.push(Held {
            number,
            ts_sec: p.ts_sec,
            ts_nsec: p.ts_nsec,
            linktype: p.linktype,
            caplen: p.caplen,
            origlen: p.origlen,
            interface: p.interface,
            file: p.file,
            start,
            end: self.bytes.len(),
        });
    }

    fn full(&self) -> bool {
        self.items.len() >= BATCH_PACKETS || self.bytes.len() >= BATCH_BYTES
    }

    fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    fn clear(&mut self) {
        self.items.clear();
        self.bytes.clear();
        if self.bytes.capacity() > KEEP_BYTES {
            self.bytes = Vec::new();
        }
    }
}

/// The Kafka frames one batch of packets finished, in order, their bytes in one buffer.
#[derive(Default)]
struct Frames {
    bytes: Vec<u8>,
    items: Vec<Frame>,
}

/// A [`KafkaMessage`] with its bytes in [`Frames::bytes`], and what carried it.
struct Frame {
    conn: ConnId,
    packet: u64,
    ts_ns: i64,
    src: SocketAddr,
    dst: SocketAddr,
    kind: Kind,
    start: usize,
    end: usize,
    wire_size: u64,
    cut: bool,
    api: Option<(i16, i16)>,
    request_packet: Option<u64>,
    latency_ns: Option<i64>,
    warnings: Vec<String>,
    stream_end: u64,
    carried: Carried,
    first: i64,
}

impl Frames {
    fn push(&mut self, f: &KafkaMessage<'_>, carried: Carried, first: i64) {
        let start = self.bytes.len();
        self.bytes.extend_from_slice(f.data);
        self.items.push(Frame {
            conn: f.conn,
            packet: f.packet,
            ts_ns: f.ts_ns,
            src: f.src,
            dst: f.dst,
            kind: f.kind,
            start,
            end: self.bytes.len(),
            wire_size: f.wire_size,
            cut: f.cut,
            api: f.api,
            request_packet: f.request_packet,
            latency_ns: f.latency_ns,
            warnings: f.warnings.clone(),
            stream_end: f.stream_end,
            carried,
            first,
        });
    }

    /// Delivers every frame, in order, and empties the batch for reuse.
    fn deliver(&mut self, back: &mut Back, hooks: &mut dyn Hooks) {
        for item in self.items.drain(..) {
            let f = KafkaMessage {
                conn: item.conn,
                packet: item.packet,
                ts_ns: item.ts_ns,
                src: item.src,
                dst: item.dst,
                kind: item.kind,
                data: self.bytes.get(item.start..item.end).unwrap_or_default(),
                wire_size: item.wire_size,
                cut: item.cut,
                api: item.api,
                request_packet: item.request_packet,
                latency_ns: item.latency_ns,
                warnings: item.warnings,
                stream_end: item.stream_end,
            };
            deliver(&f, item.carried, item.first, back, &mut |r| {
                hooks.message(r)
            });
        }
        self.bytes.clear();
        if self.bytes.capacity() > KEEP_BYTES {
            self.bytes = Vec::new();
        }
    }
}

/// The front's thread: each batch of packets in, one batch of frames out; when the
/// packets end, the flush as one last batch, then the counters.
fn front_thread(
    cfg: &Config,
    packets: Receiver<Packets>,
    frames: Sender<Frames>,
    spare: Receiver<Frames>,
    used: Sender<Packets>,
    skip: &AtomicBool,
) -> RunStats {
    // Made here: the TLS key source need not move between threads.
    let mut front = Front::new(cfg);
    for mut batch in packets {
        let mut out = spare.try_recv().unwrap_or_default();
        // Once the sink stopped, what was read past that point is not looked at, as on one
        // thread; the batch still comes back, so the reader's count stays right.
        if !skip.load(Ordering::Relaxed) {
            let emit: Emit<'_> = &mut |f, carried, first| out.push(f, carried, first);
            for h in &batch.items {
                let p = Packet {
                    ts_sec: h.ts_sec,
                    ts_nsec: h.ts_nsec,
                    linktype: h.linktype,
                    caplen: h.caplen,
                    origlen: h.origlen,
                    data: batch.bytes.get(h.start..h.end).unwrap_or_default(),
                    interface: h.interface,
                    file: h.file,
                };
                front.packet(h.number, &p, emit);
            }
        }
        batch.clear();
        let _ = used.try_send(batch);
        if frames.send(out).is_err() {
            break;
        }
    }
    let mut out = spare.try_recv().unwrap_or_default();
    let stats = front.finish(&mut |f, carried, first| out.push(f, carried, first));
    let _ = frames.send(out);
    stats
}

/// [`super::run_with`] on two threads; see the module's comment.
pub(super) fn run(source: &mut Source, cfg: Config, hooks: &mut dyn Hooks) -> (RunStats, End) {
    let mut back = Back::new(&cfg);
    back.need = hooks.need();
    let (to_front, packets) = bounded::<Packets>(IN_FLIGHT);
    // One more than the batches in flight: the flush at the end.
    let (frames_tx, frames) = bounded::<Frames>(IN_FLIGHT + 1);
    let (spare_tx, spare) = bounded::<Frames>(IN_FLIGHT + 1);
    let (used_tx, used) = bounded::<Packets>(IN_FLIGHT + 1);
    let skip = AtomicBool::new(false);
    let skip = &skip;
    let cfg = &cfg;
    // The channels move in, so a panic here drops them and the front's thread ends.
    std::thread::scope(move |s| {
        let worker = std::thread::Builder::new()
            .name("kwire-front".into())
            .spawn_scoped(s, move || front_thread(cfg, packets, frames_tx, spare, used_tx, skip));
        let Ok(worker) = worker else {
            // No thread to be had: run on this one.
            return super::run_single(source, cfg.clone(), hooks);
        };
        let mut end = End::Complete;
        let mut number = 0u64;
        let mut batch = Packets::default();
        let mut in_flight = 0usize;
        // Delivers one batch of frames back from the front, and hands its buffer back.
        let take = |mut f: Frames, back: &mut Back, hooks: &mut dyn Hooks| {
            f.deliver(back, hooks);
            let _ = spare_tx.try_send(f);
        };
        loop {
            while let Ok(f) = frames.try_recv() {
                in_flight -= 1;
                take(f, &mut back, hooks);
            }
            if back.stopped {
                break;
            }
            if hooks.poll(source).is_break() {
                back.stopped = true;
                break;
            }
            // A live read waits only when nothing is pending, so a quiet capture still
            // delivers what it read at once.
            let wait = if batch.is_empty() && in_flight == 0 {
                LIVE_WAIT
            } else {
                Duration::ZERO
            };
            let idle = match source.next_packet_within(wait) {
                None => break,
                Some(Ok(p)) => {
                    number += 1;
                    hooks.packet(number, &p);
                    batch.push(number, &p);
                    batch.full()
                }
                Some(Err(CaptureError::Idle)) => true,
                Some(Err(e)) => {
                    end = End::Damaged(e);
                    break;
                }
            };
            if idle && !batch.is_empty() {
                // Never more than IN_FLIGHT out: wait for the oldest first.
                while in_flight >= IN_FLIGHT {
                    match frames.recv() {
                        Ok(f) => {
                            in_flight -= 1;
                            take(f, &mut back, hooks);
                        }
                        Err(_) => break,
                    }
                }
                if back.stopped {
                    break;
                }
                let next = used.try_recv().unwrap_or_default();
                if to_front.send(std::mem::replace(&mut batch, next)).is_err() {
                    break;
                }
                in_flight += 1;
            } else if idle && in_flight > 0 {
                // Nothing to read now: wait for what the front holds.
                if let Ok(f) = frames.recv() {
                    in_flight -= 1;
                    take(f, &mut back, hooks);
                }
            }
        }
        if back.stopped {
            skip.store(true, Ordering::Relaxed);
        } else if !batch.is_empty() {
            let _ = to_front.send(batch);
        }
        drop(to_front);
        // Everything still out, then the flush. Once stopped, it only counts.
        for f in &frames {
            take(f, &mut back, hooks);
        }
        let front = match worker.join() {
            Ok(stats) => stats,
            Err(panic) => std::panic::resume_unwind(panic),
        };
        let mut stats = back.finish(front);
        stats.capture = source.file_stats();
        (stats, end)
    })
}
