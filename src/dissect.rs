//! One Kafka message, decoded, with the facts of its capture: what views, the analysis and
//! the TUI consume. Nothing here drives the capture (that is [`crate::pipeline`]).
#![cfg_attr(
    not(test),
    deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)
)]

use crate::codec::{self, Message, Need};
use crate::kafka::KafkaMessage;
use crate::proto::Kind;
use crate::tcp::ConnId;
use crate::topics::IdNames;
use std::net::SocketAddr;

/// Where a message's API version came from (the contract's `version_source`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VersionSource {
    /// A request's own header.
    Header,
    /// A response paired with its captured request.
    Request,
    /// A response whose request was not captured; exactly one schema fit.
    Inferred,
}

impl VersionSource {
    pub fn as_str(self) -> &'static str {
        match self {
            VersionSource::Header => "header",
            VersionSource::Request => "request",
            VersionSource::Inferred => "inferred",
        }
    }
}

/// A decoded Kafka message with the facts of its capture. It owns everything but the bytes,
/// so a consumer that keeps only a compact row (the TUI) can build one again without the
/// Kafka layer's types.
#[derive(Clone, Debug)]
pub struct Record<'a> {
    /// Number of the packet that completed the message (from 1).
    pub packet: u64,
    pub ts_ns: i64,
    /// Timestamp of the capture's first packet, for relative times.
    pub first_ts_ns: i64,
    pub conn: ConnId,
    pub src: SocketAddr,
    pub dst: SocketAddr,
    /// The message from its size prefix; only the head when `cut`.
    pub data: &'a [u8],
    /// Bytes on the wire, size prefix included.
    pub wire_size: u64,
    /// Not all of the message is in `data`.
    pub cut: bool,
    /// (API key, version): a request's from its header, a response's from its paired request.
    pub api: Option<(i16, i16)>,
    /// A response: the packet of its paired request.
    pub request_packet: Option<u64>,
    pub latency_ns: Option<i64>,
    /// Warnings from framing and transport (the decoder's are in `msg`).
    pub warnings: Vec<String>,
    pub msg: Message<'a>,
    pub version_source: Option<VersionSource>,
    /// Index of the input file whose packet carried the message's last byte
    /// (0 when a single input is read).
    pub file: u32,
    /// Names of the topic ids the message carries without their names, as the run
    /// knew them before this message (see `crate::topics`).
    pub topic_names: IdNames,
    /// Carried inside TLS, decrypted: the version, suite and records.
    pub tls: Option<TlsTag>,
}

/// The TLS a message was carried in (its bytes are the decrypted plaintext).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TlsTag {
    /// `TLSv1.2` or `TLSv1.3`.
    pub version: &'static str,
    /// The cipher suite's IANA name.
    pub suite: String,
    /// The records that carried the message's bytes, in order, as far as remembered.
    pub records: Vec<TlsRecord>,
}

/// One TLS record under a message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TlsRecord {
    /// Record sequence number under its key.
    pub seq: u64,
    /// Offset of the record header in its direction's TCP stream.
    pub stream_offset: u64,
    /// Record length on the wire, header included.
    pub wire_len: usize,
    /// Where its plaintext lies relative to the message's first byte (negative:
    /// it began before the message), and how long it is.
    pub plain_start: i64,
    pub plain_len: usize,
}

impl Record<'_> {
    /// Any warning, from framing or from decoding.
    pub fn has_warnings(&self) -> bool {
        !self.warnings.is_empty() || !self.msg.warnings.is_empty()
    }
}

/// Decodes one message, inferring a response's API when its request is unknown.
pub fn dissect<'a>(f: &KafkaMessage<'a>, first_ts_ns: i64) -> Record<'a> {
    dissect_with(f, first_ts_ns, &Need::all())
}

/// As [`dissect`], building of the body only what `need` asks for (the verdict is the same).
pub fn dissect_with<'a>(f: &KafkaMessage<'a>, first_ts_ns: i64, need: &Need) -> Record<'a> {
    let mut r = Record::undecoded(f, first_ts_ns, 0, None);
    r.decode(need);
    r
}

impl<'a> Record<'a> {
    /// The record of `f`, read from file `file` and carried in `tls`, its message not
    /// decoded yet (see [`Record::decode`]). Made where it is kept, then decoded there,
    /// the record is not copied on its way (it is large): the per-message path.
    #[inline]
    pub fn undecoded(
        f: &KafkaMessage<'a>,
        first_ts_ns: i64,
        file: u32,
        tls: Option<TlsTag>,
    ) -> Record<'a> {
        Record {
            packet: f.packet,
            ts_ns: f.ts_ns,
            first_ts_ns,
            conn: f.conn,
            src: f.src,
            dst: f.dst,
            data: f.data,
            wire_size: f.wire_size,
            cut: f.cut,
            api: f.api,
            request_packet: f.request_packet,
            latency_ns: f.latency_ns,
            // Most messages have none: an empty list costs nothing to make.
            warnings: if f.warnings.is_empty() {
                Vec::new()
            } else {
                f.warnings.clone()
            },
            msg: Message::new(f.kind),
            version_source: None,
            file,
            topic_names: IdNames::default(),
            tls,
        }
    }

    /// Decodes the message of a [`Record::undecoded`] in place, building of the body
    /// only what `need` asks for, inferring a response's API when its request is unknown.
    #[inline]
    pub fn decode(&mut self, need: &Need) {
        let (api, source) = version_of(self.msg.kind, self.data, self.api);
        self.version_source = source;
        codec::decode_into(self.data, api, need, &mut self.msg);
    }
}

/// Decodes `data` as a `kind` message with the (key, version) [`version_of`] gave.
/// Decoded into its place, the message is not copied on its way (it is large).
#[inline]
fn decode_as<'a>(kind: Kind, data: &'a [u8], api: Option<(i16, i16)>, need: &Need) -> Message<'a> {
    let mut m = Message::new(kind);
    codec::decode_into(data, api, need, &mut m);
    m
}

/// The (key, version) to decode a `kind` message as, and where it came from: a request's
/// header, a response's request, else the one response schema that fits.
fn version_of(
    kind: Kind,
    data: &[u8],
    api: Option<(i16, i16)>,
) -> (Option<(i16, i16)>, Option<VersionSource>) {
    match (kind, api) {
        (Kind::Request, _) => (None, Some(VersionSource::Header)),
        (Kind::Response, Some(api)) => (Some(api), Some(VersionSource::Request)),
        (Kind::Response, None) => match codec::infer_response(data) {
            Some(api) => (Some(api), Some(VersionSource::Inferred)),
            None => (None, None),
        },
    }
}

/// Decodes `data` as a `kind` message; `api` is a response's (key, version) from its request.
pub fn decode(
    kind: Kind,
    data: &[u8],
    api: Option<(i16, i16)>,
) -> (Message<'_>, Option<VersionSource>) {
    decode_with(kind, data, api, &Need::all())
}

/// As [`decode`], building of the body only what `need` asks for.
pub fn decode_with<'a>(
    kind: Kind,
    data: &'a [u8],
    api: Option<(i16, i16)>,
    need: &Need,
) -> (Message<'a>, Option<VersionSource>) {
    let (api, source) = version_of(kind, data, api);
    (decode_as(kind, data, api, need), source)
}

impl<'a> Record<'a> {
    /// A copy with the message decoded again for `need`.
    pub fn redecoded(&self, need: &Need) -> Record<'a> {
        let mut r = self.clone();
        r.redecode(need);
        r
    }

    /// Decodes the message again, building what `need` asks for (the verdict and every
    /// other fact of the record stay as they are).
    pub fn redecode(&mut self, need: &Need) {
        let api = match self.msg.kind {
            Kind::Request => None,
            Kind::Response => self.msg.api_key.zip(self.msg.api_version),
        };
        self.msg = match self.msg.kind {
            Kind::Request => codec::decode_request_with(self.data, need),
            Kind::Response => codec::decode_response_with(self.data, api, need),
        };
    }
}
