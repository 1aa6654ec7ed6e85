//! Output in capture order, per connection: a message is placed by the packet
//! that carried its last byte, but some are known only later (a hunt's
//! candidate confirmed, a tentative request answered). While a connection holds
//! bytes that may still become such a message, its later messages wait here,
//! within a limit over all connections.

use super::framer::State;
use super::{Conn, KafkaMessage, Stage};
use crate::proto::Kind;
use crate::tcp::ConnId;
use std::net::SocketAddr;

/// A message held back, with its bytes.
#[derive(Debug)]
struct Owned {
    /// Sort key: packet, requests before responses (both flushed at a close),
    /// stream offset, arrival.
    key: (u64, u8, u64, u64),
    conn: ConnId,
    ts_ns: i64,
    src: SocketAddr,
    dst: SocketAddr,
    kind: Kind,
    data: Vec<u8>,
    wire_size: u64,
    cut: bool,
    api: Option<(i16, i16)>,
    request_packet: Option<u64>,
    latency_ns: Option<i64>,
    warnings: Vec<String>,
}

/// One connection's messages held back.
#[derive(Debug, Default)]
pub(super) struct Queue {
    items: Vec<Owned>,
    bytes: usize,
    arrivals: u64,
    /// Highest packet printed so far.
    last_out: u64,
    /// Messages printed after a later one of this connection, not yet counted.
    late: u64,
}

impl Queue {
    pub(super) fn bytes(&self) -> usize {
        self.bytes
    }

    /// Nothing is held back.
    pub(super) fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// A message completed: printed now if nothing before it can still come
    /// (`hold`: the oldest packet whose bytes may still end one), else held.
    // Once per message, mostly straight to `out`: not worth a call of its own.
    #[inline(always)]
    pub(super) fn offer(
        &mut self,
        m: &KafkaMessage<'_>,
        hold: Option<u64>,
        out: &mut dyn FnMut(&KafkaMessage<'_>),
    ) {
        if self.items.is_empty() && hold.is_none_or(|w| m.packet < w) {
            self.print(m, out);
            return;
        }
        self.arrivals += 1;
        self.bytes += m.data.len();
        let kind = u8::from(m.kind == Kind::Response);
        self.items.push(Owned {
            key: (m.packet, kind, m.stream_end, self.arrivals),
            conn: m.conn,
            ts_ns: m.ts_ns,
            src: m.src,
            dst: m.dst,
            kind: m.kind,
            data: m.data.to_vec(),
            wire_size: m.wire_size,
            cut: m.cut,
            api: m.api,
            request_packet: m.request_packet,
            latency_ns: m.latency_ns,
            warnings: m.warnings.clone(),
        });
    }

    /// Prints, in order, the messages nothing can come before any more (all of
    /// them when `hold` is `None`).
    pub(super) fn release(
        &mut self,
        hold: Option<u64>,
        out: &mut dyn FnMut(&KafkaMessage<'_>),
    ) {
        if self.items.is_empty() {
            return;
        }
        self.items.sort_unstable_by_key(|o| std::cmp::Reverse(o.key));
        while let Some(o) = self.items.pop() {
            if hold.is_some_and(|w| o.key.0 >= w) {
                self.items.push(o);
                break;
            }
            self.bytes -= o.data.len();
            let m = KafkaMessage {
                conn: o.conn,
                packet: o.key.0,
                ts_ns: o.ts_ns,
                src: o.src,
                dst: o.dst,
                kind: o.kind,
                data: &o.data,
                wire_size: o.wire_size,
                cut: o.cut,
                api: o.api,
                request_packet: o.request_packet,
                latency_ns: o.latency_ns,
                warnings: o.warnings,
                stream_end: o.key.2,
            };
            self.print(&m, out);
        }
    }

    /// Messages printed after a later one since last asked.
    pub(super) fn take_late(&mut self) -> u64 {
        std::mem::take(&mut self.late)
    }

    #[inline(always)]
    fn print(&mut self, m: &KafkaMessage<'_>, out: &mut dyn FnMut(&KafkaMessage<'_>)) {
        if m.packet < self.last_out {
            self.late += 1;
        }
        self.last_out = self.last_out.max(m.packet);
        out(m);
    }
}

impl Conn {
    /// [`Conn::held`] and [`Conn::hold`], asked together before each stream event: the
    /// common case (framing, nothing held, nothing tentative) looks at each framer once.
    pub(super) fn held_and_hold(&self) -> (usize, Option<u64>) {
        if let Stage::Kafka { framers, .. } = &self.stage {
            let [f, g] = &**framers;
            let framing = |f: &super::framer::Framer| !matches!(f.state, State::Hunting(_));
            if f.buf.is_empty()
                && g.buf.is_empty()
                && framing(f)
                && framing(g)
                && !self.pairing.has_tentative()
            {
                return (0, None);
            }
        }
        (self.held(), self.hold())
    }

    /// The oldest packet whose bytes this connection holds and may still turn
    /// into a message: a hunt's held bytes, tentative frames.
    pub(super) fn hold(&self) -> Option<u64> {
        let Stage::Kafka { framers, .. } = &self.stage else {
            return None;
        };
        // Asked twice per stream event: the common case (framing, nothing tentative) is
        // answered without building the iterator below.
        let hunting = |f: &super::framer::Framer| matches!(f.state, State::Hunting(_));
        if !framers.iter().any(hunting) && !self.pairing.has_tentative() {
            return None;
        }
        framers
            .iter()
            .filter(|f| hunting(f))
            .filter_map(|f| f.marks.front().map(|m| m.frame))
            .chain(self.pairing.tentative_packet())
            .min()
    }
}
