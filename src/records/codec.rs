//! Compression codecs of record batches: capped streaming decompression, and
//! compression for the encoder.
//!
//! Every decoder is a `Read` that the caller drains in chunks up to the cap, so
//! a header's claimed size never drives an allocation beyond the cap.
#![cfg_attr(
    not(test),
    deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)
)]

use std::borrow::Cow;
use std::io::{self, Read, Write};

mod pool;

/// The codec named by attribute bits 0-2.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Compression {
    None,
    Gzip,
    Snappy,
    Lz4,
    Zstd,
    /// Ids 5-7, which Kafka does not define.
    Unknown(u8),
}

impl Compression {
    pub fn from_attributes(attributes: i16) -> Compression {
        match attributes & 0x07 {
            0 => Compression::None,
            1 => Compression::Gzip,
            2 => Compression::Snappy,
            3 => Compression::Lz4,
            4 => Compression::Zstd,
            n => Compression::Unknown(n as u8),
        }
    }

    pub fn id(self) -> u8 {
        match self {
            Compression::None => 0,
            Compression::Gzip => 1,
            Compression::Snappy => 2,
            Compression::Lz4 => 3,
            Compression::Zstd => 4,
            Compression::Unknown(n) => n & 0x07,
        }
    }

    /// The name the contract uses.
    pub fn name(self) -> &'static str {
        match self {
            Compression::None => "none",
            Compression::Gzip => "gzip",
            Compression::Snappy => "snappy",
            Compression::Lz4 => "lz4",
            Compression::Zstd => "zstd",
            Compression::Unknown(_) => "unknown",
        }
    }
}

/// Raised inside a decoder when a block claims more than the cap allows.
#[derive(Debug)]
pub(crate) struct OverCap;

impl std::fmt::Display for OverCap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("decompressed size over the cap")
    }
}
impl std::error::Error for OverCap {}

fn over_cap() -> io::Error {
    io::Error::other(OverCap)
}

pub(crate) fn is_over_cap(e: &io::Error) -> bool {
    e.get_ref().is_some_and(|inner| inner.is::<OverCap>())
}

/// xerial snappy-java's stream header: magic, then version and compatible version.
pub const XERIAL_MAGIC: [u8; 8] = [0x82, b'S', b'N', b'A', b'P', b'P', b'Y', 0];
const XERIAL_HEADER: usize = 16;

/// A streaming decoder for `data` compressed with `codec`. `magic` selects the
/// old LZ4 framing of magic 0 messages; `cap` bounds every block it allocates.
///
/// gzip, zstd and LZ4 decoders keep their contexts and buffers in a per-thread
/// pool between batches ([`pool`]): setting them up again for every batch of a
/// few hundred bytes cost more than decompressing it.
pub(crate) fn reader<'a>(
    codec: Compression,
    data: &'a [u8],
    magic: i8,
    cap: usize,
) -> io::Result<Box<dyn Read + 'a>> {
    match codec {
        Compression::None => Ok(Box::new(data)),
        Compression::Gzip => Ok(Box::new(pool::Gz::new(data))),
        Compression::Snappy => {
            if data.starts_with(&XERIAL_MAGIC) {
                Ok(Box::new(Xerial {
                    data: data.get(XERIAL_HEADER..).unwrap_or_default(),
                    block: Vec::new(),
                    at: 0,
                    budget: cap.saturating_add(1),
                }))
            } else {
                // A raw block: its length header is checked against the cap first.
                Ok(Box::new(io::Cursor::new(raw_snappy(
                    data,
                    cap.saturating_add(1),
                )?)))
            }
        }
        Compression::Lz4 => {
            let data = if magic == 0 {
                Cow::Owned(fix_lz4_header_checksum(data))
            } else {
                Cow::Borrowed(data)
            };
            Ok(Box::new(pool::Lz4::new(data)))
        }
        Compression::Zstd => {
            // The window a frame may claim: twice the cap, at least the 8 MiB that
            // streaming compressors (which do not know the size) ask for at
            // common levels, at most zstd's own default limit of 2^27.
            let log = (usize::BITS - cap.leading_zeros() + 1).clamp(23, 27);
            let op = pool::Zstd::new(log)?;
            Ok(Box::new(zstd::stream::zio::Reader::new(data, op)))
        }
        Compression::Unknown(n) => Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("unknown compression codec {n}"),
        )),
    }
}

fn raw_snappy(data: &[u8], budget: usize) -> io::Result<Vec<u8>> {
    let len = snap::raw::decompress_len(data).map_err(invalid)?;
    if len > budget {
        return Err(over_cap());
    }
    snap::raw::Decoder::new()
        .decompress_vec(data)
        .map_err(invalid)
}

fn invalid(e: impl std::fmt::Display) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, e.to_string())
}

/// snappy-java's framing: after the header, blocks of int32 length + raw snappy.
struct Xerial<'a> {
    data: &'a [u8],
    block: Vec<u8>,
    at: usize,
    /// Bytes still allowed out; a block claiming more stops with [`OverCap`].
    budget: usize,
}

impl Read for Xerial<'_> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        while self.at >= self.block.len() {
            if self.data.is_empty() {
                return Ok(0);
            }
            // Concatenated streams repeat the header at a block boundary.
            if self.data.starts_with(&XERIAL_MAGIC) {
                self.data = self.data.get(XERIAL_HEADER..).unwrap_or_default();
                continue;
            }
            let (len, rest) = match self.data.split_first_chunk::<4>() {
                Some((l, rest)) => (i32::from_be_bytes(*l), rest),
                None => return Err(invalid("snappy block length cut short")),
            };
            let len = usize::try_from(len).map_err(|_| invalid("negative snappy block length"))?;
            let Some(block) = rest.get(..len) else {
                return Err(invalid("snappy block past the end of the data"));
            };
            self.data = rest.get(len..).unwrap_or_default();
            self.block = raw_snappy(block, self.budget)?;
            self.budget = self.budget.saturating_sub(self.block.len());
            self.at = 0;
        }
        let rest = self.block.get(self.at..).unwrap_or_default();
        let n = rest.len().min(out.len());
        if let (Some(dst), Some(src)) = (out.get_mut(..n), rest.get(..n)) {
            dst.copy_from_slice(src);
        }
        self.at += n;
        Ok(n)
    }
}

/// Where an LZ4 frame's header checksum byte sits, from its flags.
fn lz4_hc_index(data: &[u8]) -> Option<usize> {
    if data.get(..4)? != [0x04, 0x22, 0x4d, 0x18] {
        return None;
    }
    let flg = *data.get(4)?;
    let mut i = 6;
    if flg & 0x08 != 0 {
        i += 8;
    }
    if flg & 0x01 != 0 {
        i += 4;
    }
    (i < data.len()).then_some(i)
}

/// Magic 0 messages carry Kafka's old LZ4 header checksum, taken over the magic
/// number too; Kafka ignores it for them, so the right one is put in its place.
fn fix_lz4_header_checksum(data: &[u8]) -> Vec<u8> {
    let mut v = data.to_vec();
    if let Some(i) = lz4_hc_index(&v) {
        let hc = v
            .get(4..i)
            .map(|d| (twox_hash::XxHash32::oneshot(0, d) >> 8) as u8);
        if let (Some(hc), Some(b)) = (hc, v.get_mut(i)) {
            *b = hc;
        }
    }
    v
}

/// How to write snappy: Java clients use the xerial framing, librdkafka raw blocks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum SnappyForm {
    #[default]
    Xerial,
    Raw,
}

/// Compresses `data` as a Kafka client would for this codec and magic.
pub fn compress(codec: Compression, data: &[u8], magic: i8, snappy: SnappyForm) -> Vec<u8> {
    match codec {
        Compression::None | Compression::Unknown(_) => data.to_vec(),
        Compression::Gzip => {
            let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
            let _ = e.write_all(data);
            e.finish().unwrap_or_default()
        }
        Compression::Snappy => match snappy {
            SnappyForm::Raw => snap::raw::Encoder::new()
                .compress_vec(data)
                .unwrap_or_default(),
            SnappyForm::Xerial => {
                let mut out = XERIAL_MAGIC.to_vec();
                out.extend_from_slice(&1i32.to_be_bytes());
                out.extend_from_slice(&1i32.to_be_bytes());
                // snappy-java's default block size.
                for chunk in data.chunks(32 * 1024) {
                    let b = snap::raw::Encoder::new()
                        .compress_vec(chunk)
                        .unwrap_or_default();
                    out.extend_from_slice(&(b.len() as i32).to_be_bytes());
                    out.extend_from_slice(&b);
                }
                out
            }
        },
        Compression::Lz4 => {
            use lz4_flex::frame::{BlockMode, BlockSize, FrameEncoder, FrameInfo};
            let info = FrameInfo::new()
                .block_size(BlockSize::Max64KB)
                .block_mode(BlockMode::Independent);
            let mut e = FrameEncoder::with_frame_info(info, Vec::new());
            let _ = e.write_all(data);
            let mut out = e.finish().unwrap_or_default();
            if magic == 0 {
                // Kafka 0.8/0.9's checksum, over the magic number as well.
                if let Some(i) = lz4_hc_index(&out) {
                    let hc = out
                        .get(..i)
                        .map(|d| (twox_hash::XxHash32::oneshot(0, d) >> 8) as u8);
                    if let (Some(hc), Some(b)) = (hc, out.get_mut(i)) {
                        *b = hc;
                    }
                }
            }
            out
        }
        Compression::Zstd => zstd::stream::encode_all(data, 3).unwrap_or_default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(codec: Compression, data: &[u8], magic: i8) -> Vec<u8> {
        let mut out = Vec::new();
        reader(codec, data, magic, 1 << 20)
            .unwrap()
            .read_to_end(&mut out)
            .unwrap();
        out
    }

    #[test]
    fn every_codec_round_trips() {
        let text: Vec<u8> = (0..100_000u32)
            .flat_map(|i| (i % 251).to_le_bytes())
            .collect();
        for codec in [
            Compression::None,
            Compression::Gzip,
            Compression::Snappy,
            Compression::Lz4,
            Compression::Zstd,
        ] {
            for magic in [0, 1, 2] {
                for form in [SnappyForm::Xerial, SnappyForm::Raw] {
                    let c = compress(codec, &text, magic, form);
                    assert_eq!(all(codec, &c, magic), text, "{codec:?} magic {magic}");
                }
            }
        }
    }

    #[test]
    fn magic0_lz4_checksum_is_the_old_one() {
        let c0 = compress(
            Compression::Lz4,
            b"hello hello hello",
            0,
            SnappyForm::Xerial,
        );
        let c1 = compress(
            Compression::Lz4,
            b"hello hello hello",
            1,
            SnappyForm::Xerial,
        );
        assert_ne!(c0, c1, "the header checksum byte differs");
        // Strict framing rejects the old checksum; magic 0 reading accepts it.
        let mut out = Vec::new();
        assert!(
            reader(Compression::Lz4, &c0, 1, 1 << 20)
                .unwrap()
                .read_to_end(&mut out)
                .is_err()
        );
        assert_eq!(all(Compression::Lz4, &c0, 0), b"hello hello hello");
    }

    #[test]
    fn raw_snappy_claiming_too_much_is_over_cap() {
        // A raw block whose length header claims 2^31 bytes.
        let data = [0x80, 0x80, 0x80, 0x80, 0x08, 0x00];
        let e = reader(Compression::Snappy, &data, 2, 1 << 20)
            .err()
            .unwrap();
        assert!(is_over_cap(&e));
    }
}
