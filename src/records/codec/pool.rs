//! Decompressors whose contexts and buffers are kept per thread between batches.
//!
//! Each decoder takes what it needs from this thread's pool when it starts and
//! gives it back when dropped; two decoders alive at once simply make a second
//! set. Things larger than [`KEEP`] are not kept, so memory stays flat.
#![cfg_attr(
    not(test),
    deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)
)]

use std::borrow::Cow;
use std::cell::RefCell;
use std::hash::Hasher as _;
use std::io::{self, BufRead, Read};
use zstd::stream::raw::{InBuffer, Operation, OutBuffer, WriteBuf};
use zstd::zstd_safe::{self, DCtx, DParameter, ResetDirective};

/// Bytes a pooled buffer or context may hold and still be kept.
const KEEP: usize = 4 << 20;

#[derive(Default)]
struct Pool {
    gz: Option<Box<flate2::bufread::GzDecoder<Owned>>>,
    zstd: Option<DCtx<'static>>,
    /// LZ4 block output, its length initialised (zeroed once).
    lz4: Vec<u8>,
}

thread_local! {
    static POOL: RefCell<Pool> = RefCell::new(Pool::default());
}

/// Runs `f` on this thread's pool; `None` while the thread is being torn down.
fn with<R>(f: impl FnOnce(&mut Pool) -> R) -> Option<R> {
    POOL.try_with(|p| p.try_borrow_mut().ok().map(|mut p| f(&mut p)))
        .ok()
        .flatten()
}

/// A copy of the compressed bytes, so that a pooled decoder can read them.
#[derive(Default)]
struct Owned {
    data: Vec<u8>,
    pos: usize,
}

impl Read for Owned {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        let rest = self.data.get(self.pos..).unwrap_or_default();
        let n = rest.len().min(out.len());
        if let (Some(d), Some(s)) = (out.get_mut(..n), rest.get(..n)) {
            d.copy_from_slice(s);
        }
        self.pos += n;
        Ok(n)
    }
}

impl BufRead for Owned {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        Ok(self.data.get(self.pos..).unwrap_or_default())
    }
    fn consume(&mut self, n: usize) {
        self.pos = self.pos.saturating_add(n).min(self.data.len());
    }
}

/// gzip with every member decoded, as `flate2::read::MultiGzDecoder` does, on
/// a decoder reset between batches instead of made anew (its inflate state).
pub(crate) struct Gz {
    dec: Option<Box<flate2::bufread::GzDecoder<Owned>>>,
    done: bool,
}

impl Gz {
    pub fn new(data: &[u8]) -> Gz {
        let mut dec = with(|p| p.gz.take())
            .flatten()
            .unwrap_or_else(|| Box::new(flate2::bufread::GzDecoder::new(Owned::default())));
        let mut input = std::mem::take(dec.get_mut());
        input.data.clear();
        input.data.extend_from_slice(data);
        input.pos = 0;
        dec.reset(input);
        Gz {
            dec: Some(dec),
            done: false,
        }
    }
}

impl Read for Gz {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        let Some(dec) = self.dec.as_mut() else {
            return Ok(0);
        };
        if out.is_empty() || self.done {
            return Ok(0);
        }
        loop {
            match dec.read(out) {
                Ok(0) => {
                    // A member ended with its trailer checked: another may follow.
                    if dec.get_ref().pos < dec.get_ref().data.len() {
                        let input = std::mem::take(dec.get_mut());
                        dec.reset(input);
                        continue;
                    }
                    self.done = true;
                    return Ok(0);
                }
                Ok(n) => return Ok(n),
                Err(e) => {
                    // The multi-member decoder ends after an error too.
                    self.done = true;
                    return Err(e);
                }
            }
        }
    }
}

impl Drop for Gz {
    fn drop(&mut self) {
        if let Some(mut dec) = self.dec.take() {
            if dec.get_ref().data.capacity() > KEEP {
                *dec.get_mut() = Owned::default();
            }
            with(|p| p.gz = Some(dec));
        }
    }
}

/// zstd's streaming decompression on a pooled context, as
/// `zstd::stream::raw::Decoder` runs it.
pub(crate) struct Zstd {
    ctx: Option<DCtx<'static>>,
}

fn zstd_error(code: usize) -> io::Error {
    io::Error::other(ZstdError(code))
}

/// A zstd error, worded as the zstd crate words it.
#[derive(Debug)]
struct ZstdError(usize);

impl std::fmt::Display for ZstdError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(zstd_safe::get_error_name(self.0))
    }
}
impl std::error::Error for ZstdError {}

impl Zstd {
    /// A decoder accepting windows up to `2^window_log`.
    pub fn new(window_log: u32) -> io::Result<Zstd> {
        let mut ctx = match with(|p| p.zstd.take()).flatten() {
            Some(mut c) => {
                // A batch left unfinished must not leave its state to this one.
                c.reset(ResetDirective::SessionOnly).map_err(zstd_error)?;
                c
            }
            None => {
                let mut c = DCtx::try_create().ok_or_else(|| {
                    io::Error::other("zstd could not allocate a decompression context")
                })?;
                c.init().map_err(zstd_error)?;
                c
            }
        };
        ctx.set_parameter(DParameter::WindowLogMax(window_log))
            .map_err(zstd_error)?;
        Ok(Zstd { ctx: Some(ctx) })
    }

    fn ctx(&mut self) -> io::Result<&mut DCtx<'static>> {
        self.ctx
            .as_mut()
            .ok_or_else(|| io::Error::other("zstd context already returned"))
    }
}

impl Operation for Zstd {
    fn run<C: WriteBuf + ?Sized>(
        &mut self,
        input: &mut InBuffer<'_>,
        output: &mut OutBuffer<'_, C>,
    ) -> io::Result<usize> {
        self.ctx()?
            .decompress_stream(output, input)
            .map_err(zstd_error)
    }

    fn flush<C: WriteBuf + ?Sized>(&mut self, output: &mut OutBuffer<'_, C>) -> io::Result<usize> {
        self.run(&mut InBuffer::around(&[]), output)?;
        Ok(usize::from(output.pos() >= output.capacity()))
    }

    fn reinit(&mut self) -> io::Result<()> {
        self.ctx()?
            .reset(ResetDirective::SessionOnly)
            .map_err(zstd_error)?;
        Ok(())
    }

    fn finish<C: WriteBuf + ?Sized>(
        &mut self,
        _output: &mut OutBuffer<'_, C>,
        finished_frame: bool,
    ) -> io::Result<usize> {
        if finished_frame {
            Ok(0)
        } else {
            Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "incomplete frame",
            ))
        }
    }
}

impl Drop for Zstd {
    fn drop(&mut self) {
        // A context that grew a large window for one frame is not kept.
        if let Some(c) = self.ctx.take().filter(|c| c.sizeof() <= KEEP) {
            with(|p| p.zstd = Some(c));
        }
    }
}

const LZ4_MAGIC: u32 = 0x184D_2204;

/// An LZ4 frame being read: what its descriptor says, and its checks so far.
struct Frame {
    block_max: usize,
    block_checksums: bool,
    content_checksum: bool,
    content_size: Option<u64>,
    content_len: u64,
    hasher: twox_hash::XxHash32,
}

/// LZ4 frames, decoded block by block into a pooled buffer.
///
/// `lz4_flex::frame::FrameDecoder` allocates and zeroes a block buffer for every
/// frame (64 KiB for Kafka's, whatever the batch's size). This reads the common
/// frames (independent blocks, no dictionary) itself, checking what lz4_flex
/// checks, and hands anything else, or anything that fails a check, to
/// lz4_flex, which decodes from the start and skips what was already handed
/// out: lz4_flex stays the judge of odd and bad frames and words their errors.
pub(crate) struct Lz4<'a> {
    data: Cow<'a, [u8]>,
    pos: usize,
    frame: Option<Frame>,
    dst: Vec<u8>,
    start: usize,
    end: usize,
    /// Decompressed bytes handed out so far.
    produced: u64,
    /// lz4_flex decoding from the start, and the bytes it still has to skip.
    fallback: Option<(Lz4Flex<'a>, u64)>,
}

type Lz4Flex<'a> = lz4_flex::frame::FrameDecoder<io::Cursor<Cow<'a, [u8]>>>;

/// Why the fast path stops: lz4_flex takes over.
struct Defer;

impl<'a> Lz4<'a> {
    pub fn new(data: Cow<'a, [u8]>) -> Lz4<'a> {
        let dst = with(|p| std::mem::take(&mut p.lz4)).unwrap_or_default();
        Lz4 {
            data,
            pos: 0,
            frame: None,
            dst,
            start: 0,
            end: 0,
            produced: 0,
            fallback: None,
        }
    }

    fn bytes(&mut self, n: usize) -> Result<&[u8], Defer> {
        let b = self
            .data
            .get(self.pos..self.pos.saturating_add(n))
            .ok_or(Defer)?;
        self.pos += n;
        Ok(b)
    }

    fn u32(&mut self) -> Result<u32, Defer> {
        let b = self.bytes(4)?;
        let b: [u8; 4] = b.try_into().map_err(|_| Defer)?;
        Ok(u32::from_le_bytes(b))
    }

    /// Reads a frame descriptor at `pos`.
    fn header(&mut self) -> Result<Frame, Defer> {
        if self.u32()? != LZ4_MAGIC {
            return Err(Defer);
        }
        let d = self.pos;
        let flg = *self.bytes(1)?.first().ok_or(Defer)?;
        let bd = *self.bytes(1)?.first().ok_or(Defer)?;
        // Version 01, independent blocks, no dictionary, reserved bits clear.
        if flg & 0xC0 != 0x40 || flg & 0x20 == 0 || flg & 0x03 != 0 || bd & 0x8F != 0 {
            return Err(Defer);
        }
        let block_max = match (bd >> 4) & 0x07 {
            4 => 64 << 10,
            5 => 256 << 10,
            6 => 1 << 20,
            7 => 4 << 20,
            _ => return Err(Defer),
        };
        let content_size = if flg & 0x08 != 0 {
            let b: [u8; 8] = self.bytes(8)?.try_into().map_err(|_| Defer)?;
            Some(u64::from_le_bytes(b))
        } else {
            None
        };
        let descriptor = self.data.get(d..self.pos).ok_or(Defer)?;
        let hc = (twox_hash::XxHash32::oneshot(0, descriptor) >> 8) as u8;
        if *self.bytes(1)?.first().ok_or(Defer)? != hc {
            return Err(Defer);
        }
        Ok(Frame {
            block_max,
            block_checksums: flg & 0x10 != 0,
            content_checksum: flg & 0x04 != 0,
            content_size,
            content_len: 0,
            hasher: twox_hash::XxHash32::with_seed(0),
        })
    }

    /// Decodes the next block into `dst`, and says how many bytes it holds.
    /// As with lz4_flex, 0 stands for the end of the data, of a frame, or an
    /// empty block alike: each ends one `read_to_end`.
    fn block(&mut self) -> Result<usize, Defer> {
        let Some(mut f) = self.frame.take() else {
            if self.pos >= self.data.len() {
                return Ok(0);
            }
            self.frame = Some(self.header()?);
            return self.block();
        };
        let size = self.u32()?;
        if size == 0 {
            // End mark: the frame's checks; another frame may follow.
            if f.content_checksum && self.u32()? != f.hasher.finish_32() {
                return Err(Defer);
            }
            if f.content_size.is_some_and(|s| s != f.content_len) {
                return Err(Defer);
            }
            return Ok(0);
        }
        let len = (size & 0x7FFF_FFFF) as usize;
        if len > f.block_max {
            return Err(Defer);
        }
        let at = self.pos;
        self.bytes(len)?;
        if f.block_checksums {
            let sum = self.u32()?;
            let block = self.data.get(at..at + len).ok_or(Defer)?;
            if twox_hash::XxHash32::oneshot(0, block) != sum {
                return Err(Defer);
            }
        }
        if self.dst.len() < f.block_max {
            self.dst.resize(f.block_max, 0);
        }
        let block = self.data.get(at..at + len).ok_or(Defer)?;
        let out = self.dst.get_mut(..f.block_max).ok_or(Defer)?;
        let n = if size & 0x8000_0000 != 0 {
            out.get_mut(..len).ok_or(Defer)?.copy_from_slice(block);
            len
        } else {
            lz4_flex::block::decompress_into(block, out).map_err(|_| Defer)?
        };
        if f.content_checksum {
            f.hasher.write(self.dst.get(..n).ok_or(Defer)?);
        }
        f.content_len += n as u64;
        self.frame = Some(f);
        self.start = 0;
        self.end = n;
        Ok(n)
    }

    fn defer(&mut self) {
        let data = std::mem::take(&mut self.data);
        let dec = lz4_flex::frame::FrameDecoder::new(io::Cursor::new(data));
        self.fallback = Some((dec, self.produced));
    }
}

impl Read for Lz4<'_> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        if out.is_empty() {
            return Ok(0);
        }
        if let Some((dec, skip)) = &mut self.fallback {
            let mut scratch = [0u8; 4096];
            while *skip > 0 {
                let want = scratch.len().min(usize::try_from(*skip).unwrap_or(usize::MAX));
                let n = dec.read(scratch.get_mut(..want).unwrap_or_default())?;
                if n == 0 {
                    return Ok(0);
                }
                *skip -= n as u64;
            }
            return dec.read(out);
        }
        if self.start >= self.end {
            match self.block() {
                Ok(0) => return Ok(0),
                Ok(_) => {}
                Err(Defer) => {
                    self.defer();
                    return self.read(out);
                }
            }
        }
        let avail = self.dst.get(self.start..self.end).unwrap_or_default();
        let n = avail.len().min(out.len());
        if let (Some(d), Some(s)) = (out.get_mut(..n), avail.get(..n)) {
            d.copy_from_slice(s);
        }
        self.start += n;
        self.produced += n as u64;
        Ok(n)
    }
}

impl Drop for Lz4<'_> {
    fn drop(&mut self) {
        if self.dst.len() <= KEEP {
            let dst = std::mem::take(&mut self.dst);
            with(|p| {
                if p.lz4.len() < dst.len() {
                    p.lz4 = dst;
                }
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lz4_flex::frame::{BlockMode, BlockSize, FrameEncoder, FrameInfo};
    use std::io::Write;

    fn frame(info: FrameInfo, data: &[u8]) -> Vec<u8> {
        let mut e = FrameEncoder::with_frame_info(info, Vec::new());
        e.write_all(data).unwrap();
        e.finish().unwrap()
    }

    /// Everything a reader gives, read past each end-of-frame `Ok(0)`.
    fn drain(mut r: impl Read) -> io::Result<Vec<u8>> {
        let mut v = Vec::new();
        let mut zeros = 0;
        while zeros < 3 {
            match r.read_to_end(&mut v)? {
                0 => zeros += 1,
                _ => zeros = 0,
            }
        }
        Ok(v)
    }

    fn both(data: &[u8]) -> (io::Result<Vec<u8>>, io::Result<Vec<u8>>) {
        let first = |r: &mut dyn Read| {
            let mut v = Vec::new();
            r.read_to_end(&mut v).map(|_| v)
        };
        // The first frame as `read_to_end` stops after it, then everything.
        let a1 = first(&mut Lz4::new(Cow::Borrowed(data))).map_err(|e| e.to_string());
        let b1 = first(&mut lz4_flex::frame::FrameDecoder::new(data)).map_err(|e| e.to_string());
        assert_eq!(a1.as_ref().map(Vec::len), b1.as_ref().map(Vec::len));
        assert!(a1 == b1);
        (
            drain(Lz4::new(Cow::Borrowed(data))),
            drain(lz4_flex::frame::FrameDecoder::new(data)),
        )
    }

    fn same(data: &[u8]) {
        match both(data) {
            (Ok(a), Ok(b)) => assert!(a == b, "{} / {} bytes", a.len(), b.len()),
            (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string()),
            (Ok(a), Err(b)) => panic!("{} bytes / {b}", a.len()),
            (Err(a), Ok(b)) => panic!("{a} / {} bytes", b.len()),
        }
    }

    #[test]
    fn lz4_reads_as_lz4_flex_does() {
        let text: Vec<u8> = (0..300_000u32).flat_map(|i| (i % 251).to_le_bytes()).collect();
        for mode in [BlockMode::Independent, BlockMode::Linked] {
            for size in [BlockSize::Max64KB, BlockSize::Max256KB, BlockSize::Max1MB] {
                for (bc, cc, cs) in [
                    (false, false, None),
                    (true, true, Some(text.len() as u64)),
                ] {
                    let info = FrameInfo::new()
                        .block_mode(mode)
                        .block_size(size)
                        .block_checksums(bc)
                        .content_checksum(cc)
                        .content_size(cs);
                    let f = frame(info.clone(), &text);
                    same(&f);
                    // Two frames in a row, and bad bytes at every part of one.
                    let mut two = f.clone();
                    // (Same block size: lz4_flex debug-asserts its buffer keeps one size.)
                    two.extend_from_slice(&frame(info.content_size(Some(4)), b"tail"));
                    same(&two);
                    for at in [0, 4, 5, 6, 7, 12, 20, 100, f.len() - 5, f.len() - 1] {
                        let mut bad = f.clone();
                        bad[at] ^= 0x5a;
                        same(&bad);
                        same(&f[..at]);
                    }
                }
            }
        }
        // Incompressible data makes uncompressed blocks.
        let noise: Vec<u8> = (0..70_000u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8).collect();
        same(&frame(FrameInfo::new(), &noise));
        same(&frame(FrameInfo::new(), b""));
        same(b"");
        same(b"not lz4 at all");
    }

    #[test]
    fn pooled_decoders_start_clean() {
        // A decoder dropped half way must not leave state to the next one.
        let a = frame(FrameInfo::new(), &[7u8; 200_000]);
        let b = frame(FrameInfo::new(), b"second");
        let mut half = [0u8; 10];
        Lz4::new(Cow::Borrowed(&a)).read_exact(&mut half).unwrap();
        let mut out = Vec::new();
        Lz4::new(Cow::Borrowed(&b)).read_to_end(&mut out).unwrap();
        assert_eq!(out, b"second");

        let z = zstd::stream::encode_all(&[9u8; 300_000][..], 3).unwrap();
        let mut r = zstd::stream::zio::Reader::new(&z[..], Zstd::new(23).unwrap());
        r.read_exact(&mut half).unwrap();
        drop(r);
        let z2 = zstd::stream::encode_all(&b"zz"[..], 3).unwrap();
        let mut out = Vec::new();
        zstd::stream::zio::Reader::new(&z2[..], Zstd::new(23).unwrap())
            .read_to_end(&mut out)
            .unwrap();
        assert_eq!(out, b"zz");

        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        e.write_all(&[3u8; 100_000]).unwrap();
        let g = e.finish().unwrap();
        Gz::new(&g).read_exact(&mut half).unwrap();
        let mut two = g.clone();
        two.extend_from_slice(&g);
        let mut out = Vec::new();
        Gz::new(&two).read_to_end(&mut out).unwrap();
        assert_eq!(out.len(), 200_000);
    }

    #[test]
    fn gzip_reads_as_multi_gz_does() {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        e.write_all(b"hello gzip").unwrap();
        let g = e.finish().unwrap();
        let mut cases = vec![g.clone(), [g.clone(), g.clone()].concat(), b"junk".to_vec()];
        for at in [0, 3, 10, g.len() - 4, g.len() - 1] {
            let mut bad = g.clone();
            bad[at] ^= 0x33;
            cases.push(bad);
            cases.push(g[..at].to_vec());
            cases.push([g.clone(), g[..at].to_vec()].concat());
        }
        for c in cases {
            let mut a = Vec::new();
            let ra = Gz::new(&c).read_to_end(&mut a).map(|_| a);
            let mut b = Vec::new();
            let rb = flate2::read::MultiGzDecoder::new(&c[..])
                .read_to_end(&mut b)
                .map(|_| b);
            match (ra, rb) {
                (Ok(a), Ok(b)) => assert_eq!(a, b),
                (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string()),
                (a, b) => panic!("differ on {c:?}: {a:?} / {b:?}"),
            }
        }
    }
}
