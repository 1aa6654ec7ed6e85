//! What a `records` field holds, from batch headers alone: no decompression,
//! no record decoding, no allocation.
#![cfg_attr(
    not(test),
    deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)
)]

use super::{Compression, MIN_LENGTH};

/// What kind of item a summary line stands for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A magic 2 batch.
    Batch,
    /// A magic 0 or 1 message (a compressed one is a wrapper).
    Message,
    /// Cut off at the end of the field.
    Partial,
    /// Undecodable framing.
    Error,
}

/// One batch, from its header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BatchSummary {
    pub kind: Kind,
    pub at: usize,
    pub bytes: usize,
    pub magic: i8,
    pub base_offset: i64,
    /// The header's record count; `None` for a magic 0/1 wrapper, whose count
    /// only decompression tells.
    pub records: Option<u64>,
    pub compression: Compression,
    pub is_transactional: bool,
    pub is_control: bool,
}

/// The batches of a field, from their headers.
pub fn summaries(field: &[u8]) -> Summaries<'_> {
    Summaries {
        field,
        pos: 0,
        done: false,
    }
}

pub struct Summaries<'a> {
    field: &'a [u8],
    pos: usize,
    done: bool,
}

fn be<const N: usize>(b: &[u8], at: usize) -> Option<[u8; N]> {
    b.get(at..at.checked_add(N)?)?.try_into().ok()
}

impl Iterator for Summaries<'_> {
    type Item = BatchSummary;
    fn next(&mut self) -> Option<BatchSummary> {
        let f = self.field;
        let at = self.pos;
        if self.done || at >= f.len() {
            return None;
        }
        let rem = f.len() - at;
        let mut s = BatchSummary {
            kind: Kind::Partial,
            at,
            bytes: rem,
            magic: -1,
            base_offset: be::<8>(f, at).map_or(-1, i64::from_be_bytes),
            records: None,
            compression: Compression::None,
            is_transactional: false,
            is_control: false,
        };
        let Some(length) = be::<4>(f, at + 8).map(i32::from_be_bytes) else {
            self.done = true;
            return Some(s);
        };
        if length < MIN_LENGTH {
            self.done = true;
            s.kind = Kind::Error;
            return Some(s);
        }
        let total = 12 + length as usize;
        if total > rem {
            self.done = true;
            return Some(s);
        }
        self.pos = at + total;
        s.bytes = total;
        s.magic = f.get(at + 16).map_or(-1, |&m| m as i8);
        match s.magic {
            2 => match (be::<2>(f, at + 21), be::<4>(f, at + 57)) {
                (Some(a), Some(n)) if total >= super::BatchHeader::SIZE => {
                    let a = i16::from_be_bytes(a);
                    s.kind = Kind::Batch;
                    s.compression = Compression::from_attributes(a);
                    s.is_transactional = a & 0x10 != 0;
                    s.is_control = a & 0x20 != 0;
                    s.records = u64::try_from(i32::from_be_bytes(n)).ok();
                }
                _ => s.kind = Kind::Error,
            },
            0 | 1 => {
                s.kind = Kind::Message;
                s.compression = f.get(at + 17).map_or(Compression::None, |&a| {
                    Compression::from_attributes(a.into())
                });
                s.records = (s.compression == Compression::None).then_some(1);
            }
            _ => s.kind = Kind::Error,
        }
        Some(s)
    }
}

/// Totals over a field (or several, by [`Totals::add`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Totals {
    /// Magic 2 batches and magic 0/1 messages.
    pub batches: u64,
    /// Records counted from headers (an uncompressed magic 0/1 message is one).
    pub records: u64,
    /// Magic 0/1 messages, wrappers included.
    pub messages: u64,
    /// Magic 0/1 wrappers whose record count is not in a header.
    pub wrappers: u64,
    pub bytes: u64,
    pub partial: u64,
    pub errors: u64,
    /// Batches per codec id (0 none .. 4 zstd, 5 unknown).
    pub codecs: [u64; 6],
}

impl Totals {
    pub fn of(field: &[u8]) -> Totals {
        let mut t = Totals::default();
        t.add(field);
        t
    }

    pub fn add(&mut self, field: &[u8]) {
        for s in summaries(field) {
            self.bytes += s.bytes as u64;
            match s.kind {
                Kind::Partial => self.partial += 1,
                Kind::Error => self.errors += 1,
                Kind::Batch | Kind::Message => {
                    self.batches += 1;
                    if s.kind == Kind::Message {
                        self.messages += 1;
                    }
                    match s.records {
                        Some(n) => self.records += n,
                        None => self.wrappers += 1,
                    }
                    let i = usize::from(s.compression.id()).min(5);
                    if let Some(c) = self.codecs.get_mut(i) {
                        *c += 1;
                    }
                }
            }
        }
    }

    /// The codecs the batches use, in id order (`none` included).
    pub fn codec_names(&self) -> Vec<&'static str> {
        const NAMES: [&str; 6] = ["none", "gzip", "snappy", "lz4", "zstd", "unknown"];
        NAMES
            .iter()
            .zip(self.codecs)
            .filter(|(_, n)| *n > 0)
            .map(|(name, _)| *name)
            .collect()
    }

    /// Records in magic 2 batches, and those batches.
    pub fn v2(&self) -> (u64, u64) {
        let plain = self.messages.saturating_sub(self.wrappers);
        (
            self.records.saturating_sub(plain),
            self.batches.saturating_sub(self.messages),
        )
    }

    /// `3 records in 1 batch, 120 B, gzip` and the like.
    pub fn describe(&self) -> String {
        let mut out = String::new();
        self.push_description(&mut out);
        out
    }

    /// Appends [`Totals::describe`]'s text, without the formatter.
    pub fn push_description(&self, out: &mut String) {
        const NAMES: [&str; 6] = ["none", "gzip", "snappy", "lz4", "zstd", "unknown"];
        let mut num = itoa::Buffer::new();
        match self.records {
            1 => out.push_str("1 record"),
            n => {
                out.push_str(num.format(n));
                out.push_str(" records");
            }
        }
        match self.batches {
            1 => out.push_str(" in 1 batch, "),
            n => {
                out.push_str(" in ");
                out.push_str(num.format(n));
                out.push_str(" batches, ");
            }
        }
        out.push_str(num.format(self.bytes));
        out.push_str(" B");
        if self.wrappers > 0 {
            out.push_str(" (+");
            out.push_str(num.format(self.wrappers));
            out.push_str(" compressed message sets)");
        }
        let mut first = true;
        for (name, n) in NAMES.iter().zip(self.codecs) {
            if n > 0 {
                out.push_str(if first { ", " } else { "+" });
                out.push_str(name);
                first = false;
            }
        }
        if self.partial > 0 {
            out.push_str(", partial batch at end");
        }
        if self.errors > 0 {
            out.push_str(", ");
            out.push_str(num.format(self.errors));
            out.push_str(" undecodable");
        }
    }
}
