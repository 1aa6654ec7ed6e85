//! The TLS stage as a stream transformer: TCP stream events in, the same
//! events out, with the bytes of TLS connections replaced by their plaintext.
//! Connections that are not TLS pass through untouched.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use super::{KeySource, RecordInfo, Side, TlsConfig, TlsConn, TlsEvent, TlsStats, Version};
use crate::tcp::{ConnId, Dir, StreamEvent};
use rustc_hash::FxHashMap as HashMap;
use std::collections::VecDeque;
use std::net::SocketAddr;

/// Gap length handed on when the plaintext lost is unknown: longer than any
/// Kafka frame, so the next stage looks for a frame boundary again.
pub const UNKNOWN_GAP: u64 = u64::MAX;
/// Records remembered per direction, for views that show record boundaries.
const RECORDS_KEPT: usize = 256;
/// Slots of [`TlsLayer::passes`]'s memory of plain connections.
const PLAIN_SLOTS: usize = 256;

/// Limits of the stage.
#[derive(Clone, Debug)]
pub struct LayerConfig {
    pub tls: TlsConfig,
    /// Server ports, to tell the client when the handshake was not captured.
    pub server_ports: Vec<u16>,
    /// Partial-record bytes held over all connections; past it, the connection
    /// that grew drops what it holds.
    pub max_buffered_total: usize,
}

impl Default for LayerConfig {
    fn default() -> Self {
        LayerConfig {
            tls: TlsConfig::default(),
            server_ports: vec![9092, 9093],
            // A partial record is at most ~16 KiB: this holds 4096 of them.
            max_buffered_total: 64 << 20,
        }
    }
}

/// A plaintext record as it lies in the plaintext stream of its direction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PlainSpan {
    /// Offset of its first plaintext byte in the direction's plaintext stream.
    pub plain_offset: u64,
    pub plain_len: usize,
    pub record: RecordInfo,
}

/// What the next stage may know of a TLS connection as its events pass.
#[derive(Debug)]
pub struct TlsView<'a> {
    /// The version, once records are being decrypted.
    pub version: Option<Version>,
    pub suite: Option<u16>,
    /// The TLS client's direction.
    pub client: Dir,
    spans: &'a [VecDeque<PlainSpan>; 2],
}

impl TlsView<'_> {
    /// The records that carried plaintext bytes `[start, end)` of direction `dir`,
    /// as far as they are still remembered.
    pub fn records(&self, dir: Dir, start: u64, end: u64) -> Vec<PlainSpan> {
        self.spans
            .get(di(dir))
            .map(|q| {
                q.iter()
                    .filter(|s| s.plain_offset < end && s.plain_offset + s.plain_len as u64 > start)
                    .copied()
                    .collect()
            })
            .unwrap_or_default()
    }
}

/// The next stage: each event, with a view of its connection when it is TLS.
pub type Out<'o> = &'o mut dyn FnMut(StreamEvent<'_>, Option<&TlsView<'_>>);

#[derive(Debug)]
struct TlsState {
    conn: TlsConn,
    /// The direction the TLS client sends in.
    client: Dir,
    /// Version and suite, once a record was decrypted.
    version: Option<Version>,
    suite: Option<u16>,
    /// Plaintext bytes handed on per direction (A→B, B→A); holes not counted,
    /// as in the Kafka stage's offsets.
    plain_offset: [u64; 2],
    spans: [VecDeque<PlainSpan>; 2],
}

/// The parts of a TLS connection's state its events are handed on with.
struct Emit<'s> {
    conn: ConnId,
    /// The input file the bytes being decrypted came from.
    file: u32,
    client: Dir,
    version: &'s mut Option<Version>,
    suite: &'s mut Option<u16>,
    plain_offset: &'s mut [u64; 2],
    spans: &'s mut [VecDeque<PlainSpan>; 2],
}

impl Emit<'_> {
    fn view(&self) -> TlsView<'_> {
        TlsView {
            version: *self.version,
            suite: *self.suite,
            client: self.client,
            spans: self.spans,
        }
    }

    /// Hands a TLS event on as a stream event, and remembers where its record lies.
    fn event(&mut self, e: TlsEvent<'_>, out: Out<'_>) {
        let client = self.client;
        let dir_of = |s: Side| {
            if s == Side::Client {
                client
            } else {
                client.reverse()
            }
        };
        match e {
            TlsEvent::Plaintext {
                side,
                data,
                frame,
                ts_ns,
                record,
                version,
                suite,
            } => {
                *self.version = Some(version);
                *self.suite = Some(suite);
                let dir = dir_of(side);
                let Some(off) = self.plain_offset.get_mut(di(dir)) else {
                    return;
                };
                let stream_offset = *off;
                *off += data.len() as u64;
                if let Some(q) = self.spans.get_mut(di(dir)) {
                    if q.len() >= RECORDS_KEPT {
                        q.pop_front();
                    }
                    q.push_back(PlainSpan {
                        plain_offset: stream_offset,
                        plain_len: data.len(),
                        record,
                    });
                }
                if !data.is_empty() {
                    // The plaintext takes the packet of its record's last byte.
                    let ev = StreamEvent::Data {
                        conn: self.conn,
                        dir,
                        data,
                        stream_offset,
                        packet: frame,
                        ts_ns,
                        file: self.file,
                    };
                    out(ev, Some(&self.view()));
                }
            }
            TlsEvent::Lost { side, bytes } => {
                let ev = StreamEvent::Gap {
                    conn: self.conn,
                    dir: dir_of(side),
                    len: bytes.unwrap_or(UNKNOWN_GAP),
                };
                out(ev, Some(&self.view()));
            }
        }
    }
}

impl TlsState {
    fn split(&mut self, conn: ConnId, file: u32) -> (&mut TlsConn, Emit<'_>) {
        let TlsState {
            conn: tc,
            client,
            version,
            suite,
            plain_offset,
            spans,
        } = self;
        (
            tc,
            Emit {
                conn,
                file,
                client: *client,
                version,
                suite,
                plain_offset,
                spans,
            },
        )
    }
}

#[derive(Debug)]
enum State {
    Undecided { a: SocketAddr, b: SocketAddr },
    Tls(Box<TlsState>),
    Plain,
}

/// Where a connection goes in [`TlsLayer`]'s memory of plain connections.
fn plain_slot(c: ConnId) -> usize {
    (c.0 % PLAIN_SLOTS as u64) as usize
}

fn di(d: Dir) -> usize {
    match d {
        Dir::AtoB => 0,
        Dir::BtoA => 1,
    }
}

/// The start of a TLS stream: a handshake record holding a ClientHello (1)
/// or ServerHello (2); or, joined mid-stream, an application-data record.
/// Neither can be a Kafka frame: their size prefixes exceed 256 MB.
fn tls_start(b: &[u8], max_len: usize) -> Option<bool> {
    let [t, 3, minor, l0, l1, rest @ ..] = b else {
        return None;
    };
    let len = usize::from(u16::from_be_bytes([*l0, *l1]));
    if *minor > 4 || len == 0 || len > max_len {
        return None;
    }
    match (*t, rest.first()) {
        (22, Some(1 | 2)) => Some(true),
        (23, _) if *minor == 3 => Some(false),
        _ => None,
    }
}

/// The TLS stage for every connection.
pub struct TlsLayer {
    cfg: LayerConfig,
    conns: HashMap<ConnId, State>,
    keys: Box<dyn KeySource>,
    stats: TlsStats,
    buffered: usize,
    /// Highest partial-record bytes held at once.
    pub peak_buffered: usize,
    /// Times the overall cap made a connection drop what it held.
    pub shed: u64,
    /// Connections found plain (not TLS), by id modulo [`PLAIN_SLOTS`]: the id plus 1 (0
    /// for none). A connection never stops being plain, and ids are not reused, so the
    /// events [`TlsLayer::passes`] names by it are known to pass through unchanged.
    plain: Box<[u64; PLAIN_SLOTS]>,
}

impl std::fmt::Debug for TlsLayer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TlsLayer")
            .field("conns", &self.conns.len())
            .field("stats", &self.stats)
            .finish()
    }
}

impl TlsLayer {
    pub fn new(cfg: LayerConfig, keys: Box<dyn KeySource>) -> TlsLayer {
        TlsLayer {
            cfg,
            conns: HashMap::default(),
            keys,
            stats: TlsStats::default(),
            buffered: 0,
            peak_buffered: 0,
            shed: 0,
            plain: Box::new([0; PLAIN_SLOTS]),
        }
    }

    /// Whether `ev` is known, without a look-up, to pass through [`TlsLayer::on_event`]
    /// unchanged and without a view (bytes, a gap or a conflict of a plain connection): the
    /// caller may then hand it on itself. False says nothing.
    #[inline]
    pub fn passes(&self, ev: &StreamEvent<'_>) -> bool {
        let (StreamEvent::Data { conn, .. }
        | StreamEvent::Gap { conn, .. }
        | StreamEvent::Conflict { conn, .. }) = ev
        else {
            return false;
        };
        self.is_known_plain(*conn)
    }

    /// Whether connection `conn` is known, without a look-up, to be plain: its bytes, gaps
    /// and conflicts pass through unchanged (see [`TlsLayer::passes`]).
    #[inline]
    pub fn is_known_plain(&self, conn: ConnId) -> bool {
        self.plain.get(plain_slot(conn)) == Some(&conn.0.wrapping_add(1))
    }

    /// The TLS version of a connection being decrypted (for `"tls"` in NDJSON).
    pub fn version(&self, id: ConnId) -> Option<Version> {
        match self.conns.get(&id) {
            Some(State::Tls(t)) => t.conn.version.filter(|_| t.conn.decrypting()),
            _ => None,
        }
    }

    /// Whether a connection is handled as TLS.
    pub fn is_tls(&self, id: ConnId) -> bool {
        matches!(self.conns.get(&id), Some(State::Tls(_)))
    }

    /// The records that carried plaintext bytes `[start, end)` of a direction,
    /// as far as they are still remembered.
    pub fn records(&self, id: ConnId, dir: Dir, start: u64, end: u64) -> Vec<PlainSpan> {
        let Some(State::Tls(t)) = self.conns.get(&id) else {
            return Vec::new();
        };
        t.spans
            .get(di(dir))
            .map(|q| {
                q.iter()
                    .filter(|s| s.plain_offset < end && s.plain_offset + s.plain_len as u64 > start)
                    .copied()
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Counters so far, connections still open included.
    pub fn stats(&self) -> TlsStats {
        let mut st = self.stats.clone();
        for s in self.conns.values() {
            if let State::Tls(t) = s {
                st.add(&t.conn);
            }
        }
        st.shed = self.shed;
        st.peak_buffered = self.peak_buffered;
        st
    }

    /// One event from TCP reassembly; events for the Kafka stage go to `out`.
    pub fn on_event(&mut self, frame: u64, ts_ns: i64, ev: StreamEvent<'_>, out: Out<'_>) {
        match ev {
            StreamEvent::Opened { conn, a, b, .. } => {
                self.conns.insert(conn, State::Undecided { a, b });
                out(ev, None);
            }
            StreamEvent::Data {
                conn,
                dir,
                data,
                file,
                ..
            } => {
                let Some(state) = self.conns.get_mut(&conn) else {
                    out(ev, None);
                    return;
                };
                if let State::Plain = state {
                    // Not TLS, the common case: straight through.
                    if let Some(slot) = self.plain.get_mut(plain_slot(conn)) {
                        *slot = conn.0.wrapping_add(1);
                    }
                    out(ev, None);
                    return;
                }
                if let State::Undecided { a, b } = *state {
                    *state = match tls_start(data, self.cfg.tls.max_record_len) {
                        Some(handshake) => {
                            let client = if handshake {
                                // Byte 5 is the handshake type: 1 ClientHello, 2 ServerHello.
                                if data.get(5) == Some(&1) {
                                    dir
                                } else {
                                    dir.reverse()
                                }
                            } else if self.cfg.server_ports.contains(&b.port()) {
                                Dir::AtoB
                            } else if self.cfg.server_ports.contains(&a.port()) {
                                Dir::BtoA
                            } else {
                                // The lower port is more likely the server's.
                                if a.port() > b.port() {
                                    Dir::AtoB
                                } else {
                                    Dir::BtoA
                                }
                            };
                            State::Tls(Box::new(TlsState {
                                conn: TlsConn::new(),
                                client,
                                version: None,
                                suite: None,
                                plain_offset: [0; 2],
                                spans: Default::default(),
                            }))
                        }
                        None => State::Plain,
                    };
                }
                let State::Tls(t) = state else {
                    out(ev, None);
                    return;
                };
                let before = t.conn.buffered();
                let side = if dir == t.client {
                    Side::Client
                } else {
                    Side::Server
                };
                let (tc, mut em) = t.split(conn, file);
                tc.data(
                    &self.cfg.tls,
                    side,
                    data,
                    frame,
                    ts_ns,
                    &mut *self.keys,
                    &mut |e| em.event(e, out),
                );
                let after = tc.buffered();
                self.buffered = self.buffered.saturating_sub(before) + after;
                self.peak_buffered = self.peak_buffered.max(self.buffered);
                if self.buffered > self.cfg.max_buffered_total {
                    self.shed += 1;
                    tc.shed(&self.cfg.tls, &mut |e| em.event(e, out));
                    self.buffered = self.buffered.saturating_sub(after);
                }
            }
            StreamEvent::Gap { conn, dir, len } => match self.conns.get_mut(&conn) {
                Some(State::Tls(t)) => {
                    let side = if dir == t.client {
                        Side::Client
                    } else {
                        Side::Server
                    };
                    let (tc, mut em) = t.split(conn, 0);
                    tc.gap(&self.cfg.tls, side, len, &mut |e| em.event(e, out));
                }
                Some(s @ State::Undecided { .. }) => {
                    *s = State::Plain;
                    out(ev, None);
                }
                _ => out(ev, None),
            },
            StreamEvent::Conflict { conn, .. } => {
                if !self.is_tls(conn) {
                    out(ev, None);
                }
            }
            StreamEvent::Closed { conn, .. } => match self.conns.remove(&conn) {
                Some(State::Tls(mut t)) => {
                    self.buffered = self.buffered.saturating_sub(t.conn.buffered());
                    self.stats.add(&t.conn);
                    let (_, em) = t.split(conn, 0);
                    // The next stage flushes at close: its last messages still know their TLS.
                    out(ev, Some(&em.view()));
                }
                _ => out(ev, None),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::indexing_slicing)]
    use super::*;
    use crate::tls::KeyLog;
    use crate::tls::crypto::tests::*;

    #[test]
    fn rfc8448_through_the_layer_and_plain_passes_through() {
        let cr = "cb34ecb1e78163ba1c38c6dacb196a6dffa21a8d9912ec18a2ef6283024dece7";
        let keys = KeyLog::parse(&format!(
            "CLIENT_TRAFFIC_SECRET_0 {cr} {C_AP}\nSERVER_TRAFFIC_SECRET_0 {cr} {S_AP}\n"
        ));
        let mut layer = TlsLayer::new(LayerConfig::default(), Box::new(keys));
        let a: SocketAddr = "127.0.0.1:40000".parse().unwrap();
        let b: SocketAddr = "127.0.0.1:9093".parse().unwrap();
        let mut got: Vec<(u64, Dir, Vec<u8>, u64)> = Vec::new();
        let mut sink = |e: StreamEvent<'_>, _: Option<&TlsView<'_>>| {
            if let StreamEvent::Data {
                conn,
                dir,
                data,
                stream_offset,
                ..
            } = e
            {
                got.push((conn.0, dir, data.to_vec(), stream_offset));
            }
        };
        for c in [ConnId(1), ConnId(2)] {
            layer.on_event(
                1,
                0,
                StreamEvent::Opened {
                    conn: c,
                    a,
                    b,
                    syn_seen: true,
                    packet: 1,
                },
                &mut sink,
            );
        }
        let flow = [
            (Dir::AtoB, hex(RFC8448_CH)),
            (Dir::BtoA, [hex(RFC8448_SH), hex(RFC8448_S_FLIGHT)].concat()),
            (Dir::AtoB, hex(RFC8448_C_FIN)),
            (Dir::BtoA, hex(RFC8448_S_NST)),
            (Dir::AtoB, hex(RFC8448_C_DATA)),
            (Dir::BtoA, hex(RFC8448_S_DATA)),
        ];
        for (i, (dir, bytes)) in flow.iter().enumerate() {
            let ev = StreamEvent::Data {
                conn: ConnId(1),
                dir: *dir,
                data: bytes,
                stream_offset: 0,
                packet: 0,
                ts_ns: 0,
                file: 0,
            };
            layer.on_event(i as u64 + 2, 0, ev, &mut sink);
        }
        // A Kafka connection (size prefix 0) passes through as it came.
        let plain = [0u8, 0, 0, 4, 0, 18, 0, 0];
        let ev = StreamEvent::Data {
            conn: ConnId(2),
            dir: Dir::AtoB,
            data: &plain,
            stream_offset: 0,
            packet: 0,
            ts_ns: 0,
            file: 0,
        };
        layer.on_event(9, 0, ev, &mut sink);
        let want: Vec<u8> = (0..50).collect();
        assert_eq!(got[0], (1, Dir::AtoB, want.clone(), 0));
        assert_eq!(got[1], (1, Dir::BtoA, want, 0));
        assert_eq!(got[2], (2, Dir::AtoB, plain.to_vec(), 0));
        assert_eq!(layer.version(ConnId(1)), Some(Version::Tls13));
        assert_eq!(layer.version(ConnId(2)), None);
        let spans = layer.records(ConnId(1), Dir::BtoA, 0, 50);
        assert_eq!(spans.len(), 1);
        assert_eq!(spans[0].record.seq, 1);
        layer.on_event(
            10,
            0,
            StreamEvent::Closed {
                conn: ConnId(1),
                reason: crate::tcp::CloseReason::Fin,
            },
            &mut |_, _| {},
        );
        assert_eq!(layer.stats().connections, 1);
    }

    #[test]
    fn the_overall_cap_bounds_partial_records() {
        let cfg = LayerConfig {
            max_buffered_total: 100_000,
            ..LayerConfig::default()
        };
        let mut layer = TlsLayer::new(cfg, Box::new(KeyLog::new()));
        let a: SocketAddr = "127.0.0.1:40000".parse().unwrap();
        let b: SocketAddr = "127.0.0.1:9093".parse().unwrap();
        let ch = hex(RFC8448_CH);
        let sh = hex(RFC8448_SH);
        // Each connection leaves 16 KiB of a record unfinished.
        let mut partial = vec![23, 3, 3, 0x40, 0x10];
        partial.extend(std::iter::repeat_n(7u8, 0x4000));
        for i in 0..100 {
            let conn = ConnId(i);
            let mut sink = |_: StreamEvent<'_>, _: Option<&TlsView<'_>>| {};
            layer.on_event(
                1,
                0,
                StreamEvent::Opened {
                    conn,
                    a,
                    b,
                    syn_seen: true,
                    packet: 1,
                },
                &mut sink,
            );
            for (dir, d) in [(Dir::AtoB, &ch), (Dir::BtoA, &sh), (Dir::AtoB, &partial)] {
                let ev = StreamEvent::Data {
                    conn,
                    dir,
                    data: d,
                    stream_offset: 0,
                    packet: 0,
                    ts_ns: 0,
                    file: 0,
                };
                layer.on_event(2, 0, ev, &mut sink);
            }
            assert!(layer.buffered <= 100_000 + 0x4010, "{}", layer.buffered);
        }
        assert!(layer.shed > 0);
        assert!(layer.peak_buffered <= 100_000 + 0x4010);
    }
}
