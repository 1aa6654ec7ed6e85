//! Which side of a connection is the client: from its ports, its handshake, or
//! a correlation id the other side echoes. Bytes seen before that is known are
//! held, then replayed through the framers packet by packet.

use crate::proto::apis;
use crate::proto::{peek_request_header, peek_size};
use std::collections::VecDeque;

use super::framer::Framer;
use super::{Confirm, Conn, KafkaConfig, KafkaMessage, KafkaStats, Stage};
use crate::tcp::Dir;
use std::net::SocketAddr;

/// Versions past a table's newest still taken as Kafka when the handshake or
/// an echoed correlation id already says which side is the client.
pub(super) const VERSION_SLACK: i16 = 8;
/// Requests looked at when matching the other side's first correlation id.
const ECHO_CANDIDATES: usize = 64;

/// What detection concluded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Role {
    Undecided,
    /// The side that sends requests.
    Client(Dir),
    NotKafka,
}

/// One direction's bytes while the client is not yet known.
#[derive(Debug, Default)]
pub(super) struct Held {
    pub(super) buf: Vec<u8>,
    /// (bytes, packet number, time) of each chunk in `buf`.
    arrivals: Vec<(usize, u64, i64)>,
    /// Warnings for the first frame completed in this direction.
    pub(super) notes: Vec<String>,
}

impl Held {
    pub(super) fn push(&mut self, data: &[u8], frame: u64, ts_ns: i64) {
        self.buf.extend_from_slice(data);
        self.arrivals.push((data.len(), frame, ts_ns));
    }
}

/// The role a connection's ports give it, before any byte is seen.
pub(super) fn port_role(cfg: &KafkaConfig, a: SocketAddr, b: SocketAddr, syn_seen: bool) -> Role {
    let kafka = |s: SocketAddr| cfg.ports.contains(&s.port());
    match (kafka(a), kafka(b)) {
        (false, true) => Role::Client(Dir::AtoB),
        (true, false) => Role::Client(Dir::BtoA),
        // Both on Kafka ports: the SYN sender is the client.
        (true, true) if syn_seen => Role::Client(Dir::AtoB),
        (true, true) => Role::Undecided,
        (false, false) if cfg.detect => Role::Undecided,
        (false, false) => Role::NotKafka,
    }
}

/// A TLS handshake record: content type 22, protocol major version 3.
pub(super) fn is_tls(b: &[u8]) -> bool {
    matches!(b, [0x16, 0x03, minor, ..] if *minor <= 4)
}

/// Tries to settle an undecided connection from what it holds, and frames
/// the held bytes once it is settled.
pub(super) fn detect(
    conn: &mut Conn,
    cfg: &KafkaConfig,
    confirm: Option<&Confirm>,
    closing: bool,
    stats: &mut KafkaStats,
    out: &mut dyn FnMut(&KafkaMessage<'_>),
) {
    let Stage::Undecided(held) = &conn.stage else {
        return;
    };
    let role = decide(held, conn.syn_seen, cfg, closing);
    settle(conn, role, cfg, confirm, stats, out);
}

/// Whether `b` starts like a request: `None` while too few bytes are there to tell.
/// `slack` admits versions that many past the newest kwire knows.
///
/// Anything the protocol allows passes: any correlation id (they wrap, and some
/// clients start anywhere), a null client id or any UTF-8 one without control
/// characters, and the v0 header (no client id) where an API still uses it.
pub(super) fn request_start(b: &[u8], max_frame: u32, slack: i16) -> Option<bool> {
    request_header(b, max_frame, slack, true)
}

/// Like `request_start`, but any client id bytes pass: where the stream's start
/// is known (after the handshake), only the header's shape is checked, as the
/// protocol allows any string there.
pub(super) fn request_shape(b: &[u8], max_frame: u32, slack: i16) -> Option<bool> {
    request_header(b, max_frame, slack, false)
}

fn request_header(b: &[u8], max_frame: u32, slack: i16, strict_id: bool) -> Option<bool> {
    let size = peek_size(b)?;
    // Header v0 is key, version and correlation id.
    if size < 8 || size as u32 > max_frame {
        return Some(false);
    }
    let Some(h) = peek_request_header(b) else {
        // Too short for the whole fixed header: an unknown API key already rules it out.
        let key = i16::from_be_bytes(b.get(4..6)?.try_into().ok()?);
        return apis::api_info(key).is_none().then_some(false);
    };
    let Some(info) = apis::api_info(h.api_key) else {
        return Some(false);
    };
    let newest = info.max_version.saturating_add(slack);
    if !(0..=newest).contains(&h.api_version) {
        return Some(false);
    }
    if info.request_header_version(h.api_version) == 0 {
        return Some(true);
    }
    // Header v1 and v2 add the client id's length.
    if size < 10 {
        return Some(false);
    }
    let len = i16::from_be_bytes(b.get(12..14)?.try_into().ok()?);
    if len == -1 {
        return Some(true);
    }
    if len < 0 || i32::from(len) > size - 10 {
        return Some(false);
    }
    let id = b.get(14..14 + len as usize)?;
    Some(!strict_id || client_id_ok(id))
}

/// A request's correlation id and its client id field (length included; empty
/// in a v0 header): what stays the same, or counts up, from one request of a
/// client to its next.
pub(super) fn request_ident(b: &[u8]) -> Option<(i32, &[u8])> {
    let h = peek_request_header(b)?;
    let info = apis::api_info(h.api_key)?;
    if info.request_header_version(h.api_version) == 0 {
        return Some((h.correlation_id, &[]));
    }
    let len = i16::from_be_bytes(b.get(12..14)?.try_into().ok()?);
    let field = b.get(12..14 + usize::try_from(len).unwrap_or(0))?;
    Some((h.correlation_id, field))
}

/// Valid UTF-8 with no C0 or C1 control character: any language, no binary.
fn client_id_ok(id: &[u8]) -> bool {
    std::str::from_utf8(id).is_ok_and(|s| {
        !s.chars()
            .any(|c| c < ' ' || ('\u{80}'..='\u{9f}').contains(&c))
    })
}

/// Correlation ids of the frames at the start of `b`, read at `at` (8 in a
/// request, after key and version; 4 in a response).
fn frame_corrs(b: &[u8], at: usize, max_frame: u32) -> Vec<i32> {
    let mut out = Vec::new();
    let mut rest = b;
    while out.len() < ECHO_CANDIDATES {
        let Some(size) = peek_size(rest).filter(|&s| s >= 4 && s as u32 <= max_frame) else {
            break;
        };
        let Some(corr) = rest.get(at..at + 4).and_then(|c| c.try_into().ok()) else {
            break;
        };
        out.push(i32::from_be_bytes(corr));
        let Some(next) = rest.get(size as usize + 4..) else {
            break;
        };
        rest = next;
    }
    out
}

/// Settles which side is the client from the first bytes of each direction.
///
/// With a handshake, only the SYN sender can be the client. Without one, a
/// direction is the client when a frame from the other side answers one of its
/// requests: a response alone can look like a request (correlation id 17 reads
/// as Produce v17), so one-sided evidence is not enough while the other side
/// talks. The first answers may be to requests sent before the capture began.
fn decide(held: &[Held; 2], syn_seen: bool, cfg: &KafkaConfig, closing: bool) -> Role {
    let [ab, ba] = held;
    let max = cfg.max_frame;
    if syn_seen {
        return match request_start(&ab.buf, max, VERSION_SLACK) {
            Some(true) => Role::Client(Dir::AtoB),
            Some(false) => Role::NotKafka,
            None if closing || ab.buf.len() > cfg.detect_window => Role::NotKafka,
            None => Role::Undecided,
        };
    }
    let mut waiting = false;
    for (dir, me, other) in [(Dir::AtoB, ab, ba), (Dir::BtoA, ba, ab)] {
        match request_start(&me.buf, max, VERSION_SLACK) {
            Some(true) => {}
            Some(false) => continue,
            None => {
                waiting = true;
                continue;
            }
        }
        let asked = frame_corrs(&me.buf, 8, max);
        if frame_corrs(&other.buf, 4, max)
            .iter()
            .any(|c| asked.contains(c))
        {
            return Role::Client(dir);
        }
        // The other side has said nothing: one-sided, strict evidence only.
        if other.buf.is_empty()
            && (closing || me.buf.len() > cfg.detect_window)
            && request_start(&me.buf, max, 0) == Some(true)
        {
            return Role::Client(dir);
        }
        waiting = true;
    }
    let seen = ab.buf.len() + ba.buf.len();
    if closing || !waiting || seen > 2 * cfg.detect_window {
        Role::NotKafka
    } else {
        Role::Undecided
    }
}

/// One chunk held while undecided: packet, time, direction, bytes.
type Replay = (u64, i64, Dir, Vec<u8>);

/// After detection: counts the outcome and frames what was held meanwhile.
fn settle(
    conn: &mut Conn,
    role: Role,
    cfg: &KafkaConfig,
    confirm: Option<&Confirm>,
    stats: &mut KafkaStats,
    out: &mut dyn FnMut(&KafkaMessage<'_>),
) {
    let client = match role {
        Role::Undecided => return,
        Role::NotKafka => {
            // A connection that carried no byte is neither Kafka nor anything else.
            if let Stage::Undecided(held) = &conn.stage {
                if held.iter().any(|h| !h.buf.is_empty()) {
                    stats.not_kafka += 1;
                }
            }
            conn.stage = Stage::NotKafka;
            return;
        }
        Role::Client(client) => client,
    };
    let Stage::Undecided(held) = std::mem::replace(&mut conn.stage, Stage::NotKafka) else {
        return;
    };
    stats.connections += 1;
    let mut framers = Framer::pair(conn.id, conn.a, conn.b, client, conn.syn_seen, cfg, confirm);
    // Replay what arrived while undecided, packet by packet, so every
    // message keeps the frame and time that completed it.
    let mut lanes: [VecDeque<Replay>; 2] = Default::default();
    let [ab, ba] = held;
    for ((d, h), lane) in [(Dir::AtoB, ab), (Dir::BtoA, ba)]
        .into_iter()
        .zip(&mut lanes)
    {
        super::pick(&mut framers, d).notes = h.notes;
        let mut at = 0;
        for (len, frame, ts) in h.arrivals {
            let bytes = h.buf.get(at..at + len).unwrap_or_default().to_vec();
            at += len;
            lane.push_back((frame, ts, d, bytes));
        }
    }
    // The two directions merged by packet; within one packet, requests
    // (pushed first) lead. Each direction keeps its stream order: bytes
    // delivered after reordering carry earlier packets than bytes before them.
    let [a, b] = &mut lanes;
    loop {
        let key = |l: &VecDeque<Replay>| l.front().map(|r| (r.0, r.2 != client));
        let next = match (key(a), key(b)) {
            (Some(x), Some(y)) if y < x => b.pop_front(),
            (Some(_), _) => a.pop_front(),
            (None, _) => b.pop_front(),
        };
        let Some((frame, ts, d, bytes)) = next else {
            break;
        };
        super::pick(&mut framers, d).feed(&bytes, frame, ts, &mut conn.pairing, stats, out);
    }
    conn.stage = Stage::Kafka {
        client,
        framers: Box::new(framers),
    };
}
