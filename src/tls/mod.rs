//! Stage between TCP reassembly and Kafka framing: TLS.
//!
//! [`TlsConn`] takes the reassembled byte streams of one connection, cuts
//! them into TLS records, follows the handshake far enough to learn the client
//! random, version and cipher suite, takes the session secrets from a key log
//! ([`KeySource`]) and hands on the plaintext of application-data records.
//! A record that fails authentication is never handed on. Every connection
//! ends in one [`Outcome`], counted by reason in [`TlsStats`].
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

pub mod crypto;
pub mod dsb;
pub mod handshake;
pub mod keylog;
pub mod layer;

#[cfg(test)]
mod tests;

use crypto::{RecordKey, Suite};
pub use keylog::{KeyConfig, KeyLog, KeySource, Keys, SessionSecrets, WatchedKeyLog};
use std::collections::BTreeMap;

const CT_CCS: u8 = 20;
const CT_ALERT: u8 = 21;
const CT_HANDSHAKE: u8 = 22;
const CT_APPDATA: u8 = 23;
const CT_HEARTBEAT: u8 = 24;
const HEADER: usize = 5;
/// Key-log lookups per connection before it counts as having no key.
const MAX_LOOKUPS: u32 = 4;

/// Which peer sent the bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Side {
    Client,
    Server,
}

impl Side {
    fn idx(self) -> usize {
        match self {
            Side::Client => 0,
            Side::Server => 1,
        }
    }
    pub fn other(self) -> Side {
        match self {
            Side::Client => Side::Server,
            Side::Server => Side::Client,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Version {
    Tls12,
    Tls13,
}

impl Version {
    /// The name used in NDJSON (`"tls": "TLSv1.3"`).
    pub fn as_str(self) -> &'static str {
        match self {
            Version::Tls12 => "TLSv1.2",
            Version::Tls13 => "TLSv1.3",
        }
    }
}

/// Limits for one connection's TLS layer.
#[derive(Clone, Debug)]
pub struct TlsConfig {
    /// Largest record body accepted (RFC 8446 section 5.2: 2^14 + 256 for
    /// ciphertext); a longer one means the stream is not (or no longer) TLS.
    pub max_record_len: usize,
    /// Largest ClientHello / ServerHello body kept.
    pub max_handshake_message: usize,
    /// Sequence numbers tried past the expected one when resynchronising after lost bytes.
    pub resync_window: u64,
    /// Ciphertext bytes one connection may trial-decrypt while resynchronising
    /// or searching a mid-stream connection's keys; past it, it gives up.
    pub trial_budget_bytes: u64,
    /// Key-log sessions tried for a TLS 1.3 connection whose handshake was not captured.
    pub midstream_candidates: usize,
    /// Highest record sequence number tried for such a connection.
    pub midstream_max_seq: u64,
    /// Only records up to this size are used to search keys mid-stream.
    pub midstream_probe_len: usize,
}

impl Default for TlsConfig {
    fn default() -> Self {
        TlsConfig {
            max_record_len: (1 << 14) + 256,
            max_handshake_message: 64 << 10,
            resync_window: 1024,
            trial_budget_bytes: 64 << 20,
            midstream_candidates: 64,
            midstream_max_seq: 256,
            midstream_probe_len: 2048,
        }
    }
}

/// Where a record sits, for views that show record boundaries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RecordInfo {
    /// Stream offset of the record header in its direction.
    pub stream_offset: u64,
    /// Record length on the wire, header included.
    pub wire_len: usize,
    /// Record sequence number under its key.
    pub seq: u64,
}

/// What the TLS layer hands on.
#[derive(Debug)]
pub enum TlsEvent<'a> {
    /// The application data of one authenticated record.
    Plaintext {
        side: Side,
        data: &'a [u8],
        /// Packet number and time of the record's last byte.
        frame: u64,
        ts_ns: i64,
        record: RecordInfo,
        version: Version,
        suite: u16,
    },
    /// Plaintext was lost (bytes missing, or a record that could not be
    /// decrypted after decryption had begun); its length when known.
    Lost { side: Side, bytes: Option<u64> },
}

/// How a connection ended up, for the statistics.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Outcome {
    /// Records were decrypted.
    Decrypted,
    /// The key log has no secrets for its client random.
    NoKey,
    /// The suite is not one kwire decrypts (named).
    UnsupportedCipher(String),
    /// A protocol version other than TLS 1.2 and 1.3 (named).
    UnsupportedVersion(String),
    /// Records failed authentication (wrong key, or damaged bytes).
    AuthFailure,
    /// The capture started after the handshake; for TLS 1.3 no key-log
    /// secret and sequence number within the search limits decrypted it.
    HandshakeMissing,
    /// No application data yet (handshake only, or too little captured).
    Incomplete,
    /// Bytes that are not TLS records.
    NotTls,
}

impl Outcome {
    /// A short reason for the end-of-run report.
    pub fn reason(&self) -> String {
        match self {
            Outcome::Decrypted => "decrypted".into(),
            Outcome::NoKey => "no key in the key log".into(),
            Outcome::UnsupportedCipher(n) => format!("unsupported cipher suite {n}"),
            Outcome::UnsupportedVersion(n) => format!("unsupported version {n}"),
            Outcome::AuthFailure => "records failed authentication (wrong key?)".into(),
            Outcome::HandshakeMissing => {
                "handshake not captured (joined mid-stream; no key-log secret and record sequence found)"
                    .into()
            }
            Outcome::Incomplete => "no application data captured".into(),
            Outcome::NotTls => "not TLS records".into(),
        }
    }
}

/// Counters of one connection.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ConnStats {
    pub records: u64,
    pub decrypted_records: u64,
    /// Records that failed authentication.
    pub failed_records: u64,
    /// Encrypted records passed over without a key.
    pub undecrypted_records: u64,
    pub plaintext_bytes: u64,
    pub gaps: u64,
    /// Invalid record headers met while in step.
    pub desyncs: u64,
    /// Times the record sequence was found again after lost bytes.
    pub resyncs: u64,
    /// Bytes passed over while looking for a record boundary.
    pub skipped_bytes: u64,
    pub key_updates: u64,
    /// Ciphertext bytes trial-decrypted to resynchronise or search keys.
    pub trial_bytes: u64,
    /// The record sequence of a mid-stream TLS 1.3 connection was found.
    pub midstream_recovered: bool,
}

/// Counters over all connections, by outcome, for the end-of-run report.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TlsStats {
    pub connections: u64,
    /// Connections per outcome.
    pub outcomes: BTreeMap<Outcome, u64>,
    /// Decrypted connections per version.
    pub versions: BTreeMap<&'static str, u64>,
    /// Decrypted connections per cipher suite name.
    pub suites: BTreeMap<String, u64>,
    pub records: u64,
    pub decrypted_records: u64,
    pub failed_records: u64,
    pub undecrypted_records: u64,
    pub plaintext_bytes: u64,
    pub gaps: u64,
    pub desyncs: u64,
    pub resyncs: u64,
    pub skipped_bytes: u64,
    pub key_updates: u64,
    pub midstream_recovered: u64,
    /// Times the layer's overall cap made a connection drop partial records.
    pub shed: u64,
    /// Highest partial-record bytes held at once.
    pub peak_buffered: usize,
}

impl TlsStats {
    /// Adds a finished (or still open, at the end of the run) connection.
    pub fn add(&mut self, c: &TlsConn) {
        let s = &c.stats;
        self.connections += 1;
        let outcome = c.outcome();
        if outcome == Outcome::Decrypted {
            if let Some(v) = c.version {
                *self.versions.entry(v.as_str()).or_default() += 1;
            }
            if let Some(id) = c.suite_id {
                *self.suites.entry(crypto::suite_name(id)).or_default() += 1;
            }
        }
        *self.outcomes.entry(outcome).or_default() += 1;
        self.records += s.records;
        self.decrypted_records += s.decrypted_records;
        self.failed_records += s.failed_records;
        self.undecrypted_records += s.undecrypted_records;
        self.plaintext_bytes += s.plaintext_bytes;
        self.gaps += s.gaps;
        self.desyncs += s.desyncs;
        self.resyncs += s.resyncs;
        self.skipped_bytes += s.skipped_bytes;
        self.key_updates += s.key_updates;
        self.midstream_recovered += u64::from(s.midstream_recovered);
    }
}

/// Where a direction is in the protocol.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    /// Before encryption (TLS 1.2 before ChangeCipherSpec; TLS 1.3 handshake records of type 22).
    Plain,
    /// TLS 1.3 records under the handshake traffic key.
    Handshake13,
    /// Application traffic keys (TLS 1.3), or after ChangeCipherSpec (TLS 1.2).
    App,
}

/// Looking for the record boundary and sequence number after lost bytes.
#[derive(Clone, Copy, Debug)]
struct Hunt {
    seq_lo: u64,
    seq_hi: u64,
}

#[derive(Debug)]
struct Half {
    /// The record being assembled (header first); at most header + max record.
    buf: Vec<u8>,
    /// Stream offset of `buf`'s first byte.
    buf_offset: u64,
    /// Bytes of a lost record still to pass over.
    skip: u64,
    phase: Phase,
    key: Option<RecordKey>,
    /// TLS 1.3: the application traffic secret in use (for KeyUpdate).
    app_secret: Option<Vec<u8>>,
    seq: u64,
    plain_hs: handshake::Reassembler,
    enc_hs: handshake::Reassembler,
    hunt: Option<Hunt>,
    /// Whether the first bytes looked like the start of a TLS stream.
    started: bool,
    /// Nothing more can be done with this direction.
    dead: bool,
}

impl Half {
    fn new() -> Half {
        Half {
            buf: Vec::new(),
            buf_offset: 0,
            skip: 0,
            phase: Phase::Plain,
            key: None,
            app_secret: None,
            seq: 0,
            plain_hs: Default::default(),
            enc_hs: Default::default(),
            hunt: None,
            started: false,
            dead: false,
        }
    }
}

/// Key state of the connection.
#[derive(Clone, Debug, PartialEq, Eq)]
enum KeyState {
    /// Not looked up yet.
    Pending,
    Ready,
    NoKey,
    Unsupported(Outcome),
}

/// The TLS layer of one TCP connection.
#[derive(Debug)]
pub struct TlsConn {
    client_random: Option<[u8; 32]>,
    server_random: Option<[u8; 32]>,
    /// Negotiated version, from the ServerHello (or a mid-stream key search).
    pub version: Option<Version>,
    pub suite_id: Option<u16>,
    suite: Option<Suite>,
    secrets: Option<SessionSecrets>,
    keys: KeyState,
    halves: [Half; 2],
    /// The stream did not begin with a handshake.
    midstream: bool,
    not_tls: bool,
    /// Key-log lookups made (a live key log may gain the line a little later).
    lookups: u32,
    pub stats: ConnStats,
}

impl Default for TlsConn {
    fn default() -> Self {
        TlsConn::new()
    }
}

/// A plausible record header: known type, version 3.x, length within the cap.
fn header_ok(h: &[u8], max_len: usize) -> Option<(u8, usize)> {
    let (&[t, major, minor, l0, l1], _) = h.split_first_chunk::<5>()?;
    let len = usize::from(u16::from_be_bytes([l0, l1]));
    ((CT_CCS..=CT_HEARTBEAT).contains(&t) && major == 3 && minor <= 4 && len <= max_len && len > 0)
        .then_some((t, len))
}

fn half_mut(halves: &mut [Half; 2], side: Side) -> &mut Half {
    let [c, s] = halves;
    if side.idx() == 0 { c } else { s }
}

impl TlsConn {
    pub fn new() -> TlsConn {
        TlsConn {
            client_random: None,
            server_random: None,
            version: None,
            suite_id: None,
            suite: None,
            secrets: None,
            keys: KeyState::Pending,
            halves: [Half::new(), Half::new()],
            midstream: false,
            not_tls: false,
            lookups: 0,
            stats: ConnStats::default(),
        }
    }

    /// The connection's outcome so far.
    pub fn outcome(&self) -> Outcome {
        if self.stats.decrypted_records > 0 {
            return Outcome::Decrypted;
        }
        match &self.keys {
            KeyState::Unsupported(o) => return o.clone(),
            KeyState::NoKey => return Outcome::NoKey,
            _ => {}
        }
        if self.stats.failed_records > 0 {
            return Outcome::AuthFailure;
        }
        if self.not_tls {
            return Outcome::NotTls;
        }
        // Records without the ClientHello that begins every TLS stream.
        if self.midstream || (self.client_random.is_none() && self.stats.records > 0) {
            return Outcome::HandshakeMissing;
        }
        Outcome::Incomplete
    }

    /// The plaintext a lost record body of `len` bytes held, when that is
    /// exact: TLS 1.2 AEAD. TLS 1.3 may pad, so its length is not known.
    fn lost_plaintext(&self, len: usize) -> Option<u64> {
        let overhead = match (self.version?, self.suite?.aead) {
            (Version::Tls13, _) => return None,
            (_, crypto::AeadKind::ChaCha20Poly1305) => crypto::TAG_LEN,
            _ => crypto::TAG_LEN + 8,
        };
        Some(len.saturating_sub(overhead) as u64)
    }

    /// Whether records are being decrypted.
    pub fn decrypting(&self) -> bool {
        self.stats.decrypted_records > 0
    }

    /// In-order bytes of one direction, sent by `side`, that arrived in packet `frame`.
    #[allow(clippy::too_many_arguments)]
    pub fn data(
        &mut self,
        cfg: &TlsConfig,
        side: Side,
        mut data: &[u8],
        frame: u64,
        ts_ns: i64,
        keys: &mut dyn KeySource,
        out: &mut dyn FnMut(TlsEvent<'_>),
    ) {
        while !data.is_empty() {
            let h = half_mut(&mut self.halves, side);
            if h.dead {
                return;
            }
            if h.skip > 0 {
                let n = usize::try_from(h.skip)
                    .unwrap_or(usize::MAX)
                    .min(data.len());
                h.skip -= n as u64;
                h.buf_offset += n as u64;
                data = data.get(n..).unwrap_or_default();
                continue;
            }
            if !h.started {
                h.started = true;
                // A stream that does not open with a handshake record was joined mid-stream.
                let first = data.first().copied();
                if first != Some(CT_HANDSHAKE) {
                    self.midstream = true;
                    self.start_hunt(side, 0, cfg.midstream_max_seq);
                    continue;
                }
            }
            let h = half_mut(&mut self.halves, side);
            if h.hunt.is_some() {
                // Take what fits in two records' worth, then look for a boundary.
                let room = 2 * (HEADER + cfg.max_record_len);
                let n = room.saturating_sub(h.buf.len()).min(data.len()).max(1);
                let (take, rest) = data.split_at(n.min(data.len()));
                h.buf.extend_from_slice(take);
                data = rest;
                self.hunt_step(cfg, side, frame, ts_ns, keys, out);
                continue;
            }
            // In step: fill the header, then the body.
            let need = if h.buf.len() < HEADER {
                HEADER - h.buf.len()
            } else {
                match header_ok(&h.buf, cfg.max_record_len) {
                    Some((_, len)) => HEADER + len - h.buf.len(),
                    None => 0,
                }
            };
            let n = need.min(data.len());
            let (take, rest) = data.split_at(n);
            h.buf.extend_from_slice(take);
            data = rest;
            if h.buf.len() < HEADER {
                continue;
            }
            match header_ok(&h.buf, cfg.max_record_len) {
                None => {
                    self.stats.desyncs += 1;
                    self.desync(cfg, side, out);
                }
                Some((_, len)) if h.buf.len() == HEADER + len => {
                    let rec = std::mem::take(&mut h.buf);
                    let offset = h.buf_offset;
                    h.buf_offset += rec.len() as u64;
                    self.record(cfg, side, &rec, offset, frame, ts_ns, keys, out);
                }
                Some(_) => {}
            }
        }
    }

    /// `len` bytes of this direction were never captured.
    pub fn gap(
        &mut self,
        cfg: &TlsConfig,
        side: Side,
        len: u64,
        out: &mut dyn FnMut(TlsEvent<'_>),
    ) {
        self.stats.gaps += 1;
        let decrypting = self.keys == KeyState::Ready;
        let h = half_mut(&mut self.halves, side);
        if !h.started {
            // The stream's start is missing: it will be joined mid-stream.
            h.buf_offset += len;
            return;
        }
        if h.dead {
            return;
        }
        if h.phase == Phase::Plain && h.hunt.is_none() {
            // A hole in the handshake: the keys cannot be followed.
            h.dead = true;
            h.buf = Vec::new();
            if decrypting {
                out(TlsEvent::Lost { side, bytes: None });
            }
            return;
        }
        if let Some(hunt) = &mut h.hunt {
            hunt.seq_hi = hunt
                .seq_hi
                .saturating_add(len / 17 + 1)
                .min(hunt.seq_lo.saturating_add(cfg.resync_window));
            self.stats.skipped_bytes += h.buf.len() as u64;
            h.buf_offset += h.buf.len() as u64 + len;
            h.buf = Vec::new();
            return;
        }
        if h.skip > 0 {
            // The hole lies in a record already being passed over.
            if len <= h.skip {
                h.skip -= len;
                h.buf_offset += len;
                return;
            }
        }
        if let Some((_, rlen)) = header_ok(&h.buf, cfg.max_record_len) {
            let total = (HEADER + rlen) as u64;
            let have = h.buf.len() as u64;
            if have + len <= total {
                // The hole is inside this record: it is lost, the next one is in step.
                h.skip = total - have - len;
                h.buf_offset += have + len;
                h.buf = Vec::new();
                h.seq += 1;
                let bytes = self.lost_plaintext(rlen);
                out(TlsEvent::Lost { side, bytes });
                return;
            }
        }
        let had_header = h.buf.len() >= HEADER;
        let lo = h.seq + u64::from(had_header);
        h.buf_offset += h.buf.len() as u64 + len;
        h.buf = Vec::new();
        h.skip = 0;
        out(TlsEvent::Lost { side, bytes: None });
        let hi = lo.saturating_add((len / 17 + 1).min(cfg.resync_window));
        self.start_hunt(side, lo, hi);
    }

    fn start_hunt(&mut self, side: Side, seq_lo: u64, seq_hi: u64) {
        let h = half_mut(&mut self.halves, side);
        h.hunt = Some(Hunt { seq_lo, seq_hi });
    }

    /// An invalid header while in step: the stream is lost until a boundary is found again.
    fn desync(&mut self, cfg: &TlsConfig, side: Side, out: &mut dyn FnMut(TlsEvent<'_>)) {
        let ready = self.keys == KeyState::Ready;
        let h = half_mut(&mut self.halves, side);
        if h.phase == Phase::Plain || !ready {
            // Nothing to resynchronise against: stop reading this direction.
            if h.phase == Phase::Plain && self.client_random.is_none() && self.version.is_none() {
                self.not_tls = true;
            }
            let h = half_mut(&mut self.halves, side);
            h.dead = true;
            self.stats.skipped_bytes += h.buf.len() as u64;
            h.buf = Vec::new();
            return;
        }
        let lo = h.seq;
        out(TlsEvent::Lost { side, bytes: None });
        self.start_hunt(side, lo, lo.saturating_add(cfg.resync_window.min(64)));
    }

    /// Looks for a record boundary in the hunt buffer and, when keys are known,
    /// the sequence number that authenticates it.
    #[allow(clippy::too_many_arguments)]
    fn hunt_step(
        &mut self,
        cfg: &TlsConfig,
        side: Side,
        frame: u64,
        ts_ns: i64,
        keys: &mut dyn KeySource,
        out: &mut dyn FnMut(TlsEvent<'_>),
    ) {
        loop {
            let h = half_mut(&mut self.halves, side);
            let Some(hunt) = h.hunt else {
                return;
            };
            // The first plausible encrypted-record header.
            let pos = (0..h.buf.len()).find(|&i| {
                h.buf
                    .get(i..)
                    .and_then(|b| header_ok(b, cfg.max_record_len))
                    .is_some_and(|(t, len)| {
                        matches!(t, CT_APPDATA | CT_ALERT | CT_HANDSHAKE) && len > crypto::TAG_LEN
                    })
                    || h.buf.len() - i < HEADER
            });
            let Some(pos) = pos else {
                // No candidate: everything is skipped.
                self.stats.skipped_bytes += h.buf.len() as u64;
                h.buf_offset += h.buf.len() as u64;
                h.buf = Vec::new();
                return;
            };
            if pos > 0 {
                h.buf.drain(..pos);
                h.buf_offset += pos as u64;
                self.stats.skipped_bytes += pos as u64;
            }
            let h = half_mut(&mut self.halves, side);
            let Some((_, len)) = header_ok(&h.buf, cfg.max_record_len) else {
                return; // fewer than 5 bytes left
            };
            if h.buf.len() < HEADER + len {
                return; // wait for the whole record
            }
            let rec: Vec<u8> = h.buf.get(..HEADER + len).unwrap_or_default().to_vec();
            match self.try_sync(cfg, side, &rec, hunt, keys) {
                Some(seq) => {
                    let h = half_mut(&mut self.halves, side);
                    h.hunt = None;
                    h.seq = seq;
                    let offset = h.buf_offset;
                    let rest: Vec<u8> = h.buf.get(HEADER + len..).unwrap_or_default().to_vec();
                    h.buf = Vec::new();
                    h.buf_offset += rec.len() as u64;
                    self.stats.resyncs += 1;
                    self.record(cfg, side, &rec, offset, frame, ts_ns, keys, out);
                    // Bytes after it go through the in-step path again.
                    if !rest.is_empty() {
                        self.data(cfg, side, &rest, frame, ts_ns, keys, out);
                    }
                    return;
                }
                None => {
                    let h = half_mut(&mut self.halves, side);
                    if h.dead {
                        return;
                    }
                    h.buf.drain(..1);
                    h.buf_offset += 1;
                    self.stats.skipped_bytes += 1;
                }
            }
        }
    }

    /// Trial decryption of a candidate record; the sequence number it has.
    fn try_sync(
        &mut self,
        cfg: &TlsConfig,
        side: Side,
        rec: &[u8],
        hunt: Hunt,
        keys: &mut dyn KeySource,
    ) -> Option<u64> {
        let (header, body) = rec.split_first_chunk::<HEADER>()?;
        if self.stats.trial_bytes > cfg.trial_budget_bytes {
            let h = half_mut(&mut self.halves, side);
            h.dead = true;
            return None;
        }
        if self.keys == KeyState::Ready && half_mut(&mut self.halves, side).key.is_some() {
            for seq in hunt.seq_lo..=hunt.seq_hi {
                self.stats.trial_bytes += body.len() as u64;
                let h = half_mut(&mut self.halves, side);
                if h.key.as_ref()?.open(seq, header, body).is_some() {
                    return Some(seq);
                }
                if self.stats.trial_bytes > cfg.trial_budget_bytes {
                    return None;
                }
            }
            return None;
        }
        // Mid-stream without a handshake: only TLS 1.3 can be tried, from the
        // application traffic secrets in the key log.
        if !self.midstream || body.len() > cfg.midstream_probe_len || header[0] != CT_APPDATA {
            return None;
        }
        let candidates = keys.traffic_candidates(cfg.midstream_candidates);
        if candidates.is_empty() {
            // Nothing could ever decrypt it: stop looking.
            half_mut(&mut self.halves, side).dead = true;
            return None;
        }
        for sess in candidates {
            for (mine, theirs) in [
                (&sess.client_traffic, &sess.server_traffic),
                (&sess.server_traffic, &sess.client_traffic),
            ] {
                let Some(secret) = mine else { continue };
                let ids: &[u16] = if secret.len() == 48 {
                    &[0x1302]
                } else {
                    &[0x1301, 0x1303]
                };
                for &id in ids {
                    let Some(suite) = crypto::suite(id) else {
                        continue;
                    };
                    let Some(key) = RecordKey::tls13(suite, secret) else {
                        continue;
                    };
                    for seq in hunt.seq_lo..=hunt.seq_hi {
                        self.stats.trial_bytes += body.len() as u64;
                        if self.stats.trial_bytes > cfg.trial_budget_bytes {
                            return None;
                        }
                        if key.open(seq, header, body).is_none() {
                            continue;
                        }
                        // Found: this direction's secret, the suite and the session.
                        self.version = Some(Version::Tls13);
                        self.suite_id = Some(id);
                        self.suite = Some(suite);
                        self.keys = KeyState::Ready;
                        self.stats.midstream_recovered = true;
                        let h = half_mut(&mut self.halves, side);
                        h.phase = Phase::App;
                        h.key = Some(key);
                        h.app_secret = Some(secret.clone());
                        let other_key = theirs.as_ref().and_then(|s| RecordKey::tls13(suite, s));
                        let other_secret = theirs.clone();
                        let o = half_mut(&mut self.halves, side.other());
                        o.phase = Phase::App;
                        o.key = other_key;
                        o.app_secret = other_secret;
                        if let Some(hh) = &mut o.hunt {
                            hh.seq_hi = hh.seq_hi.max(cfg.midstream_max_seq);
                        }
                        self.secrets = Some(sess.clone());
                        return Some(seq);
                    }
                }
            }
        }
        None
    }

    /// Looks the session up once the ServerHello is known.
    fn setup_keys(&mut self, keys: &mut dyn KeySource) {
        if self.keys != KeyState::Pending {
            return;
        }
        let (Some(cr), Some(version), Some(id)) = (self.client_random, self.version, self.suite_id)
        else {
            return;
        };
        let Some(suite) = crypto::suite(id).filter(|s| s.tls13 == (version == Version::Tls13))
        else {
            self.keys = KeyState::Unsupported(Outcome::UnsupportedCipher(crypto::suite_name(id)));
            return;
        };
        self.lookups += 1;
        let Some(secrets) = keys.lookup(&cr) else {
            self.keys = KeyState::NoKey;
            return;
        };
        self.suite = Some(suite);
        match version {
            Version::Tls13 => {
                let (Some(ct), Some(st)) = (&secrets.client_traffic, &secrets.server_traffic)
                else {
                    self.keys = KeyState::NoKey;
                    return;
                };
                let hs = [&secrets.client_handshake, &secrets.server_handshake];
                let ap = [ct.clone(), st.clone()];
                for (i, h) in self.halves.iter_mut().enumerate() {
                    let hs_secret = hs.get(i).and_then(|s| s.as_ref());
                    // Without a handshake secret the key stays empty, and the
                    // application key is tried on each record until one opens.
                    h.key = hs_secret.and_then(|s| RecordKey::tls13(suite, s));
                    h.app_secret = ap.get(i).cloned();
                    h.phase = Phase::Handshake13;
                }
            }
            Version::Tls12 => {
                let (Some(master), Some(sr)) = (&secrets.master, self.server_random) else {
                    self.keys = KeyState::NoKey;
                    return;
                };
                let Some((ck, sk)) = RecordKey::tls12_pair(suite, master, &cr, &sr) else {
                    self.keys = KeyState::NoKey;
                    return;
                };
                let [c, s] = &mut self.halves;
                c.key = Some(ck);
                s.key = Some(sk);
            }
        }
        self.secrets = Some(secrets);
        self.keys = KeyState::Ready;
    }

    /// One whole record of `side`.
    #[allow(clippy::too_many_arguments)]
    fn record(
        &mut self,
        cfg: &TlsConfig,
        side: Side,
        rec: &[u8],
        offset: u64,
        frame: u64,
        ts_ns: i64,
        keys: &mut dyn KeySource,
        out: &mut dyn FnMut(TlsEvent<'_>),
    ) {
        let Some((header, body)) = rec.split_first_chunk::<HEADER>() else {
            return;
        };
        let ctype = header[0];
        self.stats.records += 1;
        let tls13 = self.version == Some(Version::Tls13);
        let h = half_mut(&mut self.halves, side);
        // TLS 1.3 encrypts exactly the records of outer type 23; TLS 1.2 all after ChangeCipherSpec.
        let encrypted = if tls13 {
            ctype == CT_APPDATA
        } else {
            h.phase == Phase::App
        };
        if !encrypted {
            match ctype {
                CT_HANDSHAKE => self.plain_handshake(cfg, side, body, keys),
                CT_CCS if !tls13 && self.version.is_some() => {
                    let h = half_mut(&mut self.halves, side);
                    h.phase = Phase::App;
                    h.seq = 0;
                    self.setup_keys(keys);
                }
                _ => {}
            }
            return;
        }
        if self.keys == KeyState::Pending && self.client_random.is_none() {
            // The ClientHello was not captured: search the key log (TLS 1.3
            // only) from this record on, as for a connection joined mid-stream.
            self.midstream = true;
            let h = half_mut(&mut self.halves, side);
            if tls13 && !h.dead {
                h.buf = rec.to_vec();
                h.buf_offset = offset;
                h.hunt = Some(Hunt {
                    seq_lo: 0,
                    seq_hi: cfg.midstream_max_seq,
                });
            } else {
                self.stats.undecrypted_records += 1;
            }
            return;
        }
        if self.keys == KeyState::NoKey && self.lookups < MAX_LOOKUPS {
            self.keys = KeyState::Pending;
        }
        if self.keys == KeyState::Pending {
            self.setup_keys(keys);
        }
        if self.keys != KeyState::Ready {
            self.stats.undecrypted_records += 1;
            half_mut(&mut self.halves, side).seq += 1;
            return;
        }
        let info = |seq| RecordInfo {
            stream_offset: offset,
            wire_len: rec.len(),
            seq,
        };
        let h = half_mut(&mut self.halves, side);
        let seq = h.seq;
        let opened = h.key.as_ref().and_then(|k| k.open(seq, header, body));
        let (content_type, content, seq) = match opened {
            Some(p) if tls13 => {
                h.seq += 1;
                match crypto::inner_plaintext(p) {
                    Some((t, c)) => (t, c, seq),
                    None => return, // all padding: nothing inside
                }
            }
            Some(p) => {
                h.seq += 1;
                (ctype, p, seq)
            }
            None if tls13 && h.phase == Phase::Handshake13 => {
                // The handshake ended unseen (its secrets missing, or records
                // skipped before the key log had them): try the application key
                // from sequence 0 up to the records seen so far.
                let had_hs_key = h.key.is_some();
                let app = h
                    .app_secret
                    .as_ref()
                    .zip(self.suite)
                    .and_then(|(s, suite)| RecordKey::tls13(suite, s));
                let tries = h.seq.min(64);
                let opened = app.as_ref().and_then(|k| {
                    (0..=tries).find_map(|n| k.open(n, header, body).map(|p| (n, p)))
                });
                let h = half_mut(&mut self.halves, side);
                match opened.and_then(|(n, p)| crypto::inner_plaintext(p).map(|(t, c)| (n, t, c))) {
                    Some((n, t, c)) => {
                        h.phase = Phase::App;
                        h.key = app;
                        h.seq = n + 1;
                        (t, c, n)
                    }
                    None => {
                        h.seq += 1;
                        if had_hs_key {
                            self.stats.failed_records += 1;
                        } else {
                            self.stats.undecrypted_records += 1;
                        }
                        return;
                    }
                }
            }
            None => {
                h.seq += 1;
                self.stats.failed_records += 1;
                if self.stats.decrypted_records > 0 {
                    out(TlsEvent::Lost {
                        side,
                        bytes: self.lost_plaintext(body.len()),
                    });
                }
                return;
            }
        };
        self.stats.decrypted_records += 1;
        match content_type {
            CT_APPDATA => {
                self.stats.plaintext_bytes += content.len() as u64;
                let (Some(version), Some(suite)) = (self.version, self.suite_id) else {
                    return; // keys are only ready once both are known
                };
                out(TlsEvent::Plaintext {
                    side,
                    data: &content,
                    frame,
                    ts_ns,
                    record: info(seq),
                    version,
                    suite,
                });
            }
            CT_HANDSHAKE if tls13 => self.encrypted_handshake(cfg, side, &content),
            _ => {} // alerts, TLS 1.2 Finished, heartbeats: nothing for Kafka
        }
    }

    /// TLS 1.3 handshake messages under encryption: Finished ends the handshake
    /// keys, KeyUpdate moves the sender to its next traffic secret.
    fn encrypted_handshake(&mut self, cfg: &TlsConfig, side: Side, content: &[u8]) {
        let mut msgs = Vec::new();
        let h = half_mut(&mut self.halves, side);
        h.enc_hs
            .feed(content, cfg.max_handshake_message, |_| false, &mut msgs);
        let suite = self.suite;
        let mut updates = 0;
        let h = half_mut(&mut self.halves, side);
        for (typ, _) in msgs {
            match typ {
                handshake::FINISHED if h.phase == Phase::Handshake13 => {
                    h.phase = Phase::App;
                    h.key = h
                        .app_secret
                        .as_ref()
                        .zip(suite)
                        .and_then(|(s, suite)| RecordKey::tls13(suite, s));
                    h.seq = 0;
                }
                handshake::KEY_UPDATE if h.phase == Phase::App => {
                    let next = h
                        .app_secret
                        .as_ref()
                        .zip(suite)
                        .and_then(|(s, suite)| crypto::next_traffic_secret(suite.hash, s));
                    h.key = next
                        .as_ref()
                        .zip(suite)
                        .and_then(|(s, suite)| RecordKey::tls13(suite, s));
                    h.app_secret = next;
                    h.seq = 0;
                    updates += 1;
                }
                _ => {}
            }
        }
        self.stats.key_updates += updates;
    }

    /// Plaintext handshake: ClientHello and ServerHello.
    fn plain_handshake(
        &mut self,
        cfg: &TlsConfig,
        side: Side,
        body: &[u8],
        keys: &mut dyn KeySource,
    ) {
        let mut msgs = Vec::new();
        let want = match side {
            Side::Client => handshake::CLIENT_HELLO,
            Side::Server => handshake::SERVER_HELLO,
        };
        let h = half_mut(&mut self.halves, side);
        h.plain_hs
            .feed(body, cfg.max_handshake_message, |t| t == want, &mut msgs);
        for (typ, body) in msgs {
            match typ {
                // A second ClientHello (after HelloRetryRequest) keeps the random.
                handshake::CLIENT_HELLO if side == Side::Client && self.client_random.is_none() => {
                    self.client_random = handshake::client_hello_random(&body);
                }
                handshake::SERVER_HELLO if side == Side::Server => {
                    let Some(sh) = handshake::server_hello(&body) else {
                        continue;
                    };
                    if sh.retry_request {
                        continue;
                    }
                    self.server_random = Some(sh.random);
                    self.suite_id = Some(sh.suite);
                    self.version = match sh.version {
                        0x0303 => Some(Version::Tls12),
                        0x0304 => Some(Version::Tls13),
                        v => {
                            self.keys = KeyState::Unsupported(Outcome::UnsupportedVersion(
                                format!("0x{v:04X}"),
                            ));
                            None
                        }
                    };
                    if self.version == Some(Version::Tls13) {
                        self.setup_keys(keys);
                    }
                }
                _ => {}
            }
        }
    }
}

impl TlsConn {
    /// Bytes of partial records held, both directions.
    pub fn buffered(&self) -> usize {
        // Capacity, not length: what is held is what the allocator gave.
        self.halves.iter().map(|h| h.buf.capacity()).sum()
    }

    /// Gives up the partial records held (over a memory cap): what they carried
    /// is lost, and each direction looks for its next record.
    pub fn shed(&mut self, cfg: &TlsConfig, out: &mut dyn FnMut(TlsEvent<'_>)) {
        for side in [Side::Client, Side::Server] {
            let h = half_mut(&mut self.halves, side);
            let n = h.buf.len();
            if n == 0 {
                continue;
            }
            h.buf = Vec::new();
            h.buf_offset += n as u64;
            self.stats.skipped_bytes += n as u64;
            if h.hunt.is_some() || h.dead {
                continue;
            }
            if h.phase == Phase::Plain {
                h.dead = true;
                continue;
            }
            // The record being assembled is lost; the next one is looked for.
            let lo = h.seq + u64::from(n >= HEADER);
            h.hunt = Some(Hunt {
                seq_lo: lo,
                seq_hi: lo.saturating_add(cfg.resync_window.min(64)),
            });
            out(TlsEvent::Lost { side, bytes: None });
        }
    }
}
