//! Writes record batches and message sets, for tests, fixtures and benches:
//! the truth a decoding test checks against comes from here.
#![cfg_attr(
    not(test),
    deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)
)]

use super::codec::{self, Compression, SnappyForm};
use super::wire::{put_varint, put_varlong};

/// One record of a magic 2 batch.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RecordSpec {
    pub attributes: i8,
    pub timestamp_delta: i64,
    pub offset_delta: i32,
    pub key: Option<Vec<u8>>,
    pub value: Option<Vec<u8>>,
    pub headers: Vec<(Vec<u8>, Option<Vec<u8>>)>,
}

impl RecordSpec {
    pub fn new(offset_delta: i32, key: Option<&[u8]>, value: Option<&[u8]>) -> Self {
        RecordSpec {
            offset_delta,
            timestamp_delta: i64::from(offset_delta),
            key: key.map(<[u8]>::to_vec),
            value: value.map(<[u8]>::to_vec),
            ..Default::default()
        }
    }

    pub fn header(mut self, key: &str, value: Option<&[u8]>) -> Self {
        self.headers
            .push((key.as_bytes().to_vec(), value.map(<[u8]>::to_vec)));
        self
    }

    /// A COMMIT (or ABORT) marker, as a transaction coordinator writes it.
    pub fn marker(commit: bool, coordinator_epoch: i32) -> Self {
        let mut key = 0i16.to_be_bytes().to_vec();
        key.extend_from_slice(&i16::from(commit).to_be_bytes());
        let mut value = 0i16.to_be_bytes().to_vec();
        value.extend_from_slice(&coordinator_epoch.to_be_bytes());
        RecordSpec {
            key: Some(key),
            value: Some(value),
            ..Default::default()
        }
    }

    /// The record's bytes, length varint first.
    pub fn encode(&self, out: &mut Vec<u8>) {
        let mut body = vec![self.attributes as u8];
        put_varlong(&mut body, self.timestamp_delta);
        put_varint(&mut body, self.offset_delta);
        put_bytes(&mut body, self.key.as_deref());
        put_bytes(&mut body, self.value.as_deref());
        put_varint(&mut body, self.headers.len() as i32);
        for (k, v) in &self.headers {
            put_bytes(&mut body, Some(k));
            put_bytes(&mut body, v.as_deref());
        }
        put_varint(out, body.len() as i32);
        out.extend_from_slice(&body);
    }
}

fn put_bytes(out: &mut Vec<u8>, b: Option<&[u8]>) {
    match b {
        Some(b) => {
            put_varint(out, b.len() as i32);
            out.extend_from_slice(b);
        }
        None => put_varint(out, -1),
    }
}

/// A magic 2 batch; the defaults are a producer's (no producer id, create time).
#[derive(Clone, Debug, PartialEq)]
pub struct BatchSpec {
    pub base_offset: i64,
    pub partition_leader_epoch: i32,
    pub compression: Compression,
    pub snappy: SnappyForm,
    pub log_append_time: bool,
    pub transactional: bool,
    pub control: bool,
    /// Defaults to the last record's offset delta.
    pub last_offset_delta: Option<i32>,
    pub base_timestamp: i64,
    /// Defaults to the base timestamp plus the largest delta.
    pub max_timestamp: Option<i64>,
    pub producer_id: i64,
    pub producer_epoch: i16,
    pub base_sequence: i32,
    /// Defaults to the number of records.
    pub record_count: Option<i32>,
    pub records: Vec<RecordSpec>,
    /// Writes a CRC that does not match.
    pub bad_crc: bool,
}

impl Default for BatchSpec {
    fn default() -> Self {
        BatchSpec {
            base_offset: 0,
            partition_leader_epoch: -1,
            compression: Compression::None,
            snappy: SnappyForm::Xerial,
            log_append_time: false,
            transactional: false,
            control: false,
            last_offset_delta: None,
            base_timestamp: 1_700_000_000_000,
            max_timestamp: None,
            producer_id: -1,
            producer_epoch: -1,
            base_sequence: -1,
            record_count: None,
            records: Vec::new(),
            bad_crc: false,
        }
    }
}

impl BatchSpec {
    pub fn attributes(&self) -> i16 {
        i16::from(self.compression.id())
            | if self.log_append_time { 0x08 } else { 0 }
            | if self.transactional { 0x10 } else { 0 }
            | if self.control { 0x20 } else { 0 }
    }

    /// The records, uncompressed, as the batch's payload holds them.
    pub fn raw_records(&self) -> Vec<u8> {
        let mut out = Vec::new();
        for r in &self.records {
            r.encode(&mut out);
        }
        out
    }

    /// The whole batch.
    pub fn encode(&self) -> Vec<u8> {
        let data = codec::compress(self.compression, &self.raw_records(), 2, self.snappy);
        self.encode_with(&data)
    }

    /// The batch around `data` as its (already compressed) records area.
    pub fn encode_with(&self, data: &[u8]) -> Vec<u8> {
        let last = self.records.last().map_or(0, |r| r.offset_delta);
        let max_delta = self
            .records
            .iter()
            .map(|r| r.timestamp_delta)
            .max()
            .unwrap_or(0);
        let mut out = Vec::with_capacity(61 + data.len());
        out.extend_from_slice(&self.base_offset.to_be_bytes());
        out.extend_from_slice(&((49 + data.len()) as i32).to_be_bytes());
        out.extend_from_slice(&self.partition_leader_epoch.to_be_bytes());
        out.push(2);
        let crc_at = out.len();
        out.extend_from_slice(&[0; 4]);
        out.extend_from_slice(&self.attributes().to_be_bytes());
        out.extend_from_slice(&self.last_offset_delta.unwrap_or(last).to_be_bytes());
        out.extend_from_slice(&self.base_timestamp.to_be_bytes());
        let max = self
            .max_timestamp
            .unwrap_or(self.base_timestamp.wrapping_add(max_delta));
        out.extend_from_slice(&max.to_be_bytes());
        out.extend_from_slice(&self.producer_id.to_be_bytes());
        out.extend_from_slice(&self.producer_epoch.to_be_bytes());
        out.extend_from_slice(&self.base_sequence.to_be_bytes());
        let count = self.record_count.unwrap_or(self.records.len() as i32);
        out.extend_from_slice(&count.to_be_bytes());
        out.extend_from_slice(data);
        let crc =
            crc32c::crc32c(out.get(crc_at + 4..).unwrap_or_default()) ^ u32::from(self.bad_crc);
        if let Some(slot) = out.get_mut(crc_at..crc_at + 4) {
            slot.copy_from_slice(&crc.to_be_bytes());
        }
        out
    }
}

/// A magic 0 or 1 message.
#[derive(Clone, Debug, PartialEq)]
pub struct MessageSpec {
    pub magic: i8,
    pub offset: i64,
    /// Attributes other than the codec bits (bit 3: log-append time, magic 1).
    pub attributes: i8,
    pub compression: Compression,
    pub timestamp: i64,
    pub key: Option<Vec<u8>>,
    pub value: Option<Vec<u8>>,
    pub bad_crc: bool,
}

impl MessageSpec {
    pub fn new(magic: i8, offset: i64, key: Option<&[u8]>, value: Option<&[u8]>) -> Self {
        MessageSpec {
            magic,
            offset,
            attributes: 0,
            compression: Compression::None,
            timestamp: 1_700_000_000_000 + offset,
            key: key.map(<[u8]>::to_vec),
            value: value.map(<[u8]>::to_vec),
            bad_crc: false,
        }
    }

    pub fn encode(&self, out: &mut Vec<u8>) {
        let mut body = vec![
            self.magic as u8,
            (self.attributes & !0x07) as u8 | self.compression.id(),
        ];
        if self.magic >= 1 {
            body.extend_from_slice(&self.timestamp.to_be_bytes());
        }
        for b in [&self.key, &self.value] {
            match b {
                Some(b) => {
                    body.extend_from_slice(&(b.len() as i32).to_be_bytes());
                    body.extend_from_slice(b);
                }
                None => body.extend_from_slice(&(-1i32).to_be_bytes()),
            }
        }
        let crc = crc32fast::hash(&body) ^ u32::from(self.bad_crc);
        out.extend_from_slice(&self.offset.to_be_bytes());
        out.extend_from_slice(&((body.len() + 4) as i32).to_be_bytes());
        out.extend_from_slice(&crc.to_be_bytes());
        out.extend_from_slice(&body);
    }

    /// A compressed wrapper holding `inner`, as old producers wrote it: for
    /// magic 1, inner offsets are relative and the wrapper has the last one.
    pub fn wrapper(
        magic: i8,
        codec: Compression,
        snappy: SnappyForm,
        offset: i64,
        inner: &[MessageSpec],
    ) -> Self {
        let mut set = Vec::new();
        for m in inner {
            m.encode(&mut set);
        }
        let mut w = MessageSpec::new(magic, offset, None, None);
        w.compression = codec;
        w.value = Some(codec::compress(codec, &set, magic, snappy));
        w
    }
}

/// `data` compressed as a Java producer would for a magic 2 batch.
pub fn compress(codec: Compression, data: &[u8]) -> Vec<u8> {
    codec::compress(codec, data, 2, SnappyForm::Xerial)
}

/// The bytes of several entries, one after another, as a `records` field holds them.
pub fn concat(parts: &[Vec<u8>]) -> Vec<u8> {
    parts.concat()
}
