//! Compressed captures, recognised by their magic bytes (not their name):
//! gzip, zstd and lz4 frames, decompressed as a stream, from files and stdin.

use std::io::{self, Cursor, Read};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// How a capture's bytes were compressed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compression {
    Gzip,
    Zstd,
    Lz4,
}

impl Compression {
    pub fn name(self) -> &'static str {
        match self {
            Compression::Gzip => "gzip",
            Compression::Zstd => "zstd",
            Compression::Lz4 => "lz4",
        }
    }

    /// Recognises a compressed stream from its first bytes.
    pub fn sniff(head: &[u8]) -> Option<Compression> {
        match head {
            [0x1f, 0x8b, ..] => Some(Compression::Gzip),
            [0x28, 0xb5, 0x2f, 0xfd, ..] => Some(Compression::Zstd),
            // A zstd skippable frame (0x184D2A50..5F) may come first.
            [0x50..=0x5f, 0x2a, 0x4d, 0x18, ..] => Some(Compression::Zstd),
            [0x04, 0x22, 0x4d, 0x18, ..] => Some(Compression::Lz4),
            _ => None,
        }
    }
}

/// Counts the bytes taken from the underlying input (compressed bytes, for
/// progress against the file's size).
struct Counting<R> {
    inner: R,
    count: Arc<AtomicU64>,
}

impl<R: Read> Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.count.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }
}

/// Names the decompressor in its errors, so a corrupt stream says what it is.
struct Labeled<R> {
    inner: R,
    what: Compression,
}

impl<R: Read> Read for Labeled<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.inner.read(buf).map_err(|e| {
            io::Error::new(
                e.kind(),
                format!("corrupt {} stream: {e}", self.what.name()),
            )
        })
    }
}

/// A capture's byte stream, decompressed if its magic says so.
pub struct Input {
    pub reader: Box<dyn Read + Send>,
    pub compression: Option<Compression>,
    /// Bytes read from the underlying input so far.
    pub raw_bytes: Arc<AtomicU64>,
}

/// Wraps `raw` in the decompressor its first bytes call for.
pub fn open(raw: Box<dyn Read + Send>) -> io::Result<Input> {
    let count = Arc::new(AtomicU64::new(0));
    let mut raw = Counting {
        inner: raw,
        count: count.clone(),
    };
    // Up to 4 bytes, however the input hands them over (a pipe may be slow).
    let mut head = [0u8; 4];
    let mut got = 0;
    while got < head.len() {
        let Some(space) = head.get_mut(got..) else {
            break;
        };
        match raw.read(space) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    let head = head.get(..got).unwrap_or_default().to_vec();
    let compression = Compression::sniff(&head);
    let whole = Cursor::new(head).chain(raw);
    let reader: Box<dyn Read + Send> = match compression {
        None => Box::new(whole),
        Some(c @ Compression::Gzip) => Box::new(Labeled {
            // Multi-member: `cat a.gz b.gz` is one stream, as gzip -d sees it.
            inner: flate2::read::MultiGzDecoder::new(whole),
            what: c,
        }),
        Some(c @ Compression::Zstd) => Box::new(Labeled {
            inner: zstd::stream::read::Decoder::new(whole)?,
            what: c,
        }),
        Some(c @ Compression::Lz4) => Box::new(Labeled {
            inner: lz4_flex::frame::FrameDecoder::new(whole),
            what: c,
        }),
    };
    Ok(Input {
        reader,
        compression,
        raw_bytes: count,
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]
pub(crate) mod tests {
    use super::*;
    use std::io::Write;

    /// `data` compressed with `c`.
    pub(crate) fn compress(c: Compression, data: &[u8]) -> Vec<u8> {
        match c {
            Compression::Gzip => {
                let mut e =
                    flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
                e.write_all(data).unwrap();
                e.finish().unwrap()
            }
            Compression::Zstd => zstd::stream::encode_all(data, 3).unwrap(),
            Compression::Lz4 => {
                let mut e = lz4_flex::frame::FrameEncoder::new(Vec::new());
                e.write_all(data).unwrap();
                e.finish().unwrap()
            }
        }
    }

    fn read_all(bytes: Vec<u8>) -> (Option<Compression>, io::Result<Vec<u8>>) {
        let mut input = open(Box::new(Cursor::new(bytes))).unwrap();
        let mut out = Vec::new();
        let r = input.reader.read_to_end(&mut out).map(|_| out);
        (input.compression, r)
    }

    #[test]
    fn each_format_round_trips_and_plain_passes_through() {
        let data: Vec<u8> = (0..100_000u32).map(|i| (i % 251) as u8).collect();
        for c in [Compression::Gzip, Compression::Zstd, Compression::Lz4] {
            let (got, out) = read_all(compress(c, &data));
            assert_eq!(got, Some(c));
            assert_eq!(out.unwrap(), data);
        }
        let (got, out) = read_all(data.clone());
        assert_eq!(got, None);
        assert_eq!(out.unwrap(), data);
        for short in [&b""[..], b"\x1f"] {
            let (_, out) = read_all(short.to_vec());
            assert_eq!(out.unwrap(), short);
        }
        // Two gzip members one after the other are one stream.
        let mut two = compress(Compression::Gzip, b"first ");
        two.extend(compress(Compression::Gzip, b"second"));
        assert_eq!(read_all(two).1.unwrap(), b"first second");
    }

    #[test]
    fn corrupt_streams_are_errors_that_name_the_format() {
        let data: Vec<u8> = (0..50_000u32).map(|i| (i * 31 % 256) as u8).collect();
        for c in [Compression::Gzip, Compression::Zstd, Compression::Lz4] {
            // Cut short: every format knows its frame is incomplete.
            let z = compress(c, &data);
            let (_, out) = read_all(z[..z.len() / 2].to_vec());
            let e = out.map(|v| v.len()).unwrap_err();
            assert!(e.to_string().contains(c.name()), "{c:?}: {e}");
        }
        // Flipped bits: gzip's CRC catches them.
        let mut z = compress(Compression::Gzip, &data);
        let mid = z.len() / 2;
        z[mid] ^= 0xff;
        let (_, out) = read_all(z);
        let e = out.map(|v| v.len()).unwrap_err();
        assert!(e.to_string().contains("corrupt gzip stream"), "{e}");
    }
}
