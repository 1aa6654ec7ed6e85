//! Our own pcap and pcapng reader (libpcap's refuses pcapng files whose
//! interfaces differ in link type). Blocks are parsed in place in one growing
//! buffer with `pcap-parser`; a packet borrows the buffer until the next call.
//!
//! Handles several sections (each with its own byte order), interfaces with
//! their own link type, snaplen, `if_tsresol` (powers of 10 and of 2) and
//! `if_tsoffset`, enhanced, simple and obsolete packet blocks, and skips (and
//! counts) every other block.

use super::{CaptureError, Compression, Packet};
use pcap_parser::pcapng::{
    parse_enhancedpacketblock_be, parse_enhancedpacketblock_le, parse_interfacedescriptionblock_be,
    parse_interfacedescriptionblock_le, parse_sectionheaderblock, parse_simplepacketblock_be,
    parse_simplepacketblock_le,
};
use std::io::{self, Read};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

mod pcap;
mod pcapng;

/// A block (or classic pcap record) larger than this is damage, not data: it
/// bounds the buffer whatever a length field claims.
pub const MAX_BLOCK: usize = 64 << 20;
/// Bytes asked of the input per read (and the buffer's first size). Small enough that the
/// bytes read are still in the core's cache (1 MiB of L2 here, shared with the rest of
/// the reading) when they are parsed and copied on: 1 MiB read at once evicted it all.
const READ_CHUNK: usize = 128 << 10;

const SHB_BYTES: [u8; 4] = [0x0A, 0x0D, 0x0D, 0x0A];
const IDB: u32 = 1;
const OPB: u32 = 2;
const SPB: u32 = 3;
const NRB: u32 = 4;
const ISB: u32 = 5;
const EPB: u32 = 6;
const SJE: u32 = 9;
const DSB: u32 = 0x0A;
const CB: u32 = 0x0000_0BAD;
const DCB: u32 = 0x4000_0BAD;

/// One capture interface. A classic pcap file has exactly one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Interface {
    /// LINKTYPE_* value.
    pub linktype: i32,
    pub snaplen: u32,
    /// `if_tsresol` as in the file (6 for classic µs pcap, 9 for ns).
    pub tsresol: u8,
    /// `if_tsoffset`, seconds added to every timestamp.
    pub tsoffset: i64,
    /// 0-based pcapng section the interface belongs to.
    pub section: u32,
    /// Its id within that section (what the section's packet blocks name).
    pub id: u32,
    units_per_sec: u64,
}

/// What the reader met besides packets; every skip is counted.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FileStats {
    /// Bytes taken from the (decompressed) input.
    pub bytes: u64,
    pub sections: u64,
    pub interfaces: u64,
    pub enhanced_packets: u64,
    pub simple_packets: u64,
    pub obsolete_packets: u64,
    /// Known blocks that carry no packet (name resolution, statistics, ...).
    pub other_blocks: u64,
    pub custom_blocks: u64,
    pub unknown_blocks: u64,
    /// Packet blocks naming an interface the section did not describe.
    pub orphan_packets: u64,
}

#[derive(Debug, Clone, Copy)]
enum Format {
    Pcap {
        be: bool,
        nano: bool,
        modified: bool,
    },
    /// `first`: global index of the current section's interface 0.
    Pcapng { be: bool, first: usize },
}

/// Streams packets from a pcap or pcapng byte stream.
pub struct FileReader {
    input: Box<dyn Read + Send>,
    buf: Vec<u8>,
    start: usize,
    end: usize,
    eof: bool,
    /// Length of the block last returned, dropped on the next call.
    consume: usize,
    format: Format,
    ifaces: Vec<Interface>,
    stats: FileStats,
    /// Packets returned so far.
    packets: u64,
    /// Time of the last timestamped packet, for simple packet blocks.
    last_ts: (i64, u32),
    done: bool,
    /// The packet last read, still in the buffer.
    current: Option<PacketAt>,
    compression: Option<Compression>,
    /// Bytes taken from the input as stored (before decompression).
    raw_bytes: Option<Arc<AtomicU64>>,
}

impl std::fmt::Debug for FileReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FileReader")
            .field("format", &self.format)
            .field("ifaces", &self.ifaces)
            .field("stats", &self.stats)
            .finish()
    }
}

fn open_err(reason: impl Into<String>) -> CaptureError {
    CaptureError::Open {
        reason: reason.into(),
    }
}

fn u16_at(b: &[u8], at: usize, be: bool) -> Option<u16> {
    let x: [u8; 2] = b.get(at..at.checked_add(2)?)?.try_into().ok()?;
    Some(if be {
        u16::from_be_bytes(x)
    } else {
        u16::from_le_bytes(x)
    })
}

fn u32_at(b: &[u8], at: usize, be: bool) -> Option<u32> {
    let x: [u8; 4] = b.get(at..at.checked_add(4)?)?.try_into().ok()?;
    Some(if be {
        u32::from_be_bytes(x)
    } else {
        u32::from_le_bytes(x)
    })
}

/// Units per second for an `if_tsresol`, `None` when it does not fit.
fn units_per_sec(tsresol: u8) -> Option<u64> {
    if tsresol & 0x80 != 0 {
        1u64.checked_shl(u32::from(tsresol & 0x7f))
    } else {
        10u64.checked_pow(u32::from(tsresol))
    }
}

/// Splits a timestamp in interface units into seconds and nanoseconds
/// (truncated, as Wireshark does).
fn split_ts(units: u64, per_sec: u64, offset: i64) -> (i64, u32) {
    let per_sec = per_sec.max(1);
    let secs = i64::try_from(units / per_sec).unwrap_or(i64::MAX);
    let frac = u128::from(units % per_sec) * 1_000_000_000 / u128::from(per_sec);
    (
        secs.saturating_add(offset),
        u32::try_from(frac).unwrap_or(999_999_999),
    )
}

enum Step {
    /// A packet block is at `start`; fields describe it.
    Packet(PacketAt),
    /// A non-packet block was handled; go on.
    Skip,
    End,
}

struct PacketAt {
    ts: (i64, u32),
    iface: usize,
    /// Packet bytes: offset from `start` and length.
    data_at: usize,
    caplen: usize,
    origlen: u32,
    linktype: i32,
}

impl FileReader {
    /// Reads the file header (classic pcap) or first section header (pcapng)
    /// and the interface descriptions that precede the first packet.
    pub fn new(input: Box<dyn Read + Send>) -> Result<FileReader, CaptureError> {
        let mut r = FileReader {
            input,
            buf: vec![0; READ_CHUNK],
            start: 0,
            end: 0,
            eof: false,
            consume: 0,
            format: Format::Pcap {
                be: false,
                nano: false,
                modified: false,
            },
            ifaces: Vec::new(),
            stats: FileStats::default(),
            packets: 0,
            last_ts: (0, 0),
            done: false,
            current: None,
            compression: None,
            raw_bytes: None,
        };
        let io_err = |e: io::Error| open_err(e.to_string());
        if !r.fill(4).map_err(io_err)? {
            return Err(open_err(if r.avail().is_empty() {
                "empty file: unknown file format"
            } else {
                "too short: unknown file format"
            }));
        }
        let head = r.avail().get(..4).unwrap_or_default();
        if head == SHB_BYTES {
            r.format = Format::Pcapng {
                be: false,
                first: 0,
            };
            match r.step() {
                Ok(Step::Skip) => {}
                Ok(_) | Err(_) => return Err(open_err("bad pcapng section header block")),
            }
        } else {
            let magic = u32_at(head, 0, false).unwrap_or(0);
            let (be, nano, modified) = match magic {
                0xa1b2_c3d4 => (false, false, false),
                0xa1b2_3c4d => (false, true, false),
                0xa1b2_cd34 => (false, false, true),
                0xd4c3_b2a1 => (true, false, false),
                0x4d3c_b2a1 => (true, true, false),
                0x34cd_b2a1 => (true, false, true),
                _ => return Err(open_err("unknown file format")),
            };
            if !r.fill(24).map_err(io_err)? {
                return Err(open_err(format!(
                    "truncated dump file; tried to read 24 file header bytes, only got {}",
                    r.avail().len()
                )));
            }
            let hdr = match pcap_parser::parse_pcap_header(r.avail()) {
                Ok((_, h)) => h,
                Err(_) => return Err(open_err("unknown file format")),
            };
            r.ifaces.push(Interface {
                // The top bits hold FCS information, not the link type.
                linktype: hdr.network.0 & 0x03FF_FFFF,
                snaplen: hdr.snaplen,
                tsresol: if nano { 9 } else { 6 },
                tsoffset: 0,
                section: 0,
                id: 0,
                units_per_sec: if nano { 1_000_000_000 } else { 1_000_000 },
            });
            r.stats.interfaces = 1;
            r.format = Format::Pcap { be, nano, modified };
            r.advance_by(24);
        }
        // Take the blocks before the first packet now, so the interfaces
        // (and `linktype()`) are known before it.
        while matches!(r.format, Format::Pcapng { .. }) {
            match r.peek_type() {
                Some(t) if ![EPB, SPB, OPB].contains(&t) => match r.step() {
                    Ok(Step::Skip) => {}
                    _ => break,
                },
                _ => break,
            }
        }
        Ok(r)
    }

    /// The interfaces described so far, over all sections (a packet's
    /// `interface` indexes this list).
    pub fn interfaces(&self) -> &[Interface] {
        &self.ifaces
    }

    pub fn stats(&self) -> &FileStats {
        &self.stats
    }

    /// Records how the input was stored: its compression, and a counter of
    /// the bytes read from it as stored.
    pub fn set_origin(&mut self, compression: Option<Compression>, raw_bytes: Arc<AtomicU64>) {
        self.compression = compression;
        self.raw_bytes = Some(raw_bytes);
    }

    /// The input's compression, if it was compressed.
    pub fn compression(&self) -> Option<Compression> {
        self.compression
    }

    /// Bytes read from the input as stored (compressed bytes when compressed).
    pub fn raw_bytes(&self) -> u64 {
        self.raw_bytes
            .as_ref()
            .map_or(self.stats.bytes, |c| c.load(Ordering::Relaxed))
    }

    fn avail(&self) -> &[u8] {
        self.buf.get(self.start..self.end).unwrap_or_default()
    }

    fn advance_by(&mut self, n: usize) {
        let n = n.min(self.end - self.start);
        self.start += n;
        self.stats.bytes += n as u64;
    }

    /// Block type of the next pcapng block, if 8 bytes are there.
    fn peek_type(&mut self) -> Option<u32> {
        let Format::Pcapng { be, .. } = self.format else {
            return None;
        };
        if !self.fill(8).ok()? {
            return None;
        }
        u32_at(self.avail(), 0, be)
    }

    /// Makes at least `need` bytes available from `start`; false at the end
    /// of input with fewer. The buffer only grows once full of real data, so
    /// memory follows the bytes actually read, never a declared length.
    #[inline]
    fn fill(&mut self, need: usize) -> io::Result<bool> {
        // Mostly the bytes are there already: no call for them.
        if self.end - self.start >= need {
            return Ok(true);
        }
        self.fill_more(need)
    }

    #[inline(never)]
    fn fill_more(&mut self, need: usize) -> io::Result<bool> {
        while self.end - self.start < need {
            if self.eof {
                return Ok(false);
            }
            if self.buf.len() - self.start < need && self.start > 0 {
                self.buf.copy_within(self.start..self.end, 0);
                self.end -= self.start;
                self.start = 0;
            }
            if self.end == self.buf.len() {
                let grown = self.buf.len().saturating_mul(2).min(need.max(READ_CHUNK));
                self.buf.resize(grown.max(self.end + 1), 0);
            }
            let Some(space) = self.buf.get_mut(self.end..) else {
                return Ok(false);
            };
            match self.input.read(space) {
                Ok(0) => self.eof = true,
                Ok(n) => self.end += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(true)
    }

    /// The next packet; `None` at the end; after an error, `None` again.
    #[inline]
    pub fn next_packet(&mut self) -> Option<Result<Packet<'_>, CaptureError>> {
        if self.pcap_whole() {
            return self.current().map(Ok);
        }
        match self.advance()? {
            Ok(()) => self.current().map(Ok),
            Err(e) => Some(Err(e)),
        }
    }

    /// Reads the next packet and holds it as [`FileReader::current`] (the
    /// one packet of look-ahead a merge needs); `None` at the end.
    pub fn advance(&mut self) -> Option<Result<(), CaptureError>> {
        self.current = None;
        if self.done {
            return None;
        }
        let c = std::mem::take(&mut self.consume);
        self.advance_by(c);
        loop {
            match self.step() {
                Ok(Step::Skip) => continue,
                Ok(Step::End) => {
                    self.done = true;
                    return None;
                }
                Ok(Step::Packet(p)) => {
                    self.packets += 1;
                    self.current = Some(p);
                    return Some(Ok(()));
                }
                Err(e) => {
                    self.done = true;
                    return Some(Err(e));
                }
            }
        }
    }

    /// [`FileReader::advance`] for the common case, a classic pcap record whose bytes are
    /// all in the buffer already: the same packet, without the general path's steps. False
    /// (having changed nothing) for any other case.
    #[inline]
    fn pcap_whole(&mut self) -> bool {
        let Format::Pcap { be, nano, modified } = self.format else {
            return false;
        };
        if self.done {
            return false;
        }
        let hdr = if modified { 24 } else { 16 };
        let Some(b) = self
            .start
            .checked_add(self.consume)
            .and_then(|at| self.buf.get(at..self.end))
        else {
            return false;
        };
        let Some(head) = b.get(..16).and_then(|h| <[u8; 16]>::try_from(h).ok()) else {
            return false;
        };
        let [s0, s1, s2, s3, f0, f1, f2, f3, c0, c1, c2, c3, o0, o1, o2, o3] = head;
        // One swap for the byte order, rather than a choice per field.
        let word = |x: [u8; 4]| {
            let v = u32::from_le_bytes(x);
            if be { v.swap_bytes() } else { v }
        };
        let caplen = word([c0, c1, c2, c3]) as usize;
        if caplen > MAX_BLOCK || b.len() < hdr + caplen {
            return false;
        }
        let (sec, frac, origlen) = (word([s0, s1, s2, s3]), word([f0, f1, f2, f3]), word([o0, o1, o2, o3]));
        let c = std::mem::take(&mut self.consume);
        self.advance_by(c);
        let nsec = if nano { frac } else { frac.saturating_mul(1000) };
        self.consume = hdr + caplen;
        self.packets += 1;
        self.current = Some(PacketAt {
            ts: (i64::from(sec), nsec.min(999_999_999)),
            iface: 0,
            data_at: hdr,
            caplen,
            origlen,
            linktype: self.ifaces.first().map_or(0, |i| i.linktype),
        });
        true
    }

    /// The packet the last [`FileReader::advance`] read, if any.
    #[inline]
    pub fn current(&self) -> Option<Packet<'_>> {
        let p = self.current.as_ref()?;
        let data = self
            .avail()
            .get(p.data_at..)
            .and_then(|d| d.get(..p.caplen))
            .unwrap_or_default();
        Some(Packet {
            ts_sec: p.ts.0,
            ts_nsec: p.ts.1,
            linktype: p.linktype,
            caplen: u32::try_from(data.len()).unwrap_or(u32::MAX),
            origlen: p.origlen,
            data,
            interface: u32::try_from(p.iface).unwrap_or(u32::MAX),
            file: 0,
        })
    }

    /// Time of the current packet, in ns.
    pub fn current_ts_ns(&self) -> Option<i64> {
        let p = self.current.as_ref()?;
        Some(
            p.ts.0
                .saturating_mul(1_000_000_000)
                .saturating_add(i64::from(p.ts.1)),
        )
    }

    /// Packets read so far.
    pub fn packets_read(&self) -> u64 {
        self.packets
    }

    fn damage(&self, reason: String) -> CaptureError {
        CaptureError::Read {
            packet: self.packets + 1,
            reason,
        }
    }

    fn truncated(&self) -> CaptureError {
        CaptureError::Truncated {
            packet: self.packets + 1,
        }
    }

    /// Makes `need` bytes available, or says why not.
    #[inline]
    fn require(&mut self, need: usize) -> Result<(), CaptureError> {
        if self.end - self.start >= need {
            return Ok(());
        }
        self.require_more(need)
    }

    #[inline(never)]
    fn require_more(&mut self, need: usize) -> Result<(), CaptureError> {
        match self.fill_more(need) {
            Ok(true) => Ok(()),
            Ok(false) => Err(self.truncated()),
            Err(e) => Err(self.damage(e.to_string())),
        }
    }

    /// Handles one record or block at `start`.
    fn step(&mut self) -> Result<Step, CaptureError> {
        // Nothing left at all is a clean end; part of a header is damage.
        match self.fill(1) {
            Ok(true) => {}
            Ok(false) => return Ok(Step::End),
            Err(e) => return Err(self.damage(e.to_string())),
        }
        match self.format {
            Format::Pcap { be, nano, modified } => self.pcap_record(be, nano, modified),
            Format::Pcapng { be, first } => self.pcapng_block(be, first),
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]
mod tests {
    use super::*;
    use crate::capture::writer::{ByteOrder, IfaceTime, PcapWriter, PcapngWriter, TsPrecision};
    use std::io::Cursor;

    type Got = (i64, u32, i32, Vec<u8>, u32);

    fn read(bytes: Vec<u8>) -> (Vec<Got>, Option<CaptureError>, FileStats) {
        let mut r = FileReader::new(Box::new(Cursor::new(bytes))).unwrap();
        let mut out = Vec::new();
        let mut err = None;
        while let Some(p) = r.next_packet() {
            match p {
                Ok(p) => {
                    assert_eq!(p.caplen as usize, p.data.len());
                    out.push((
                        p.ts_ns(),
                        p.interface,
                        p.linktype,
                        p.data.to_vec(),
                        p.origlen,
                    ));
                }
                Err(e) => err = Some(e),
            }
        }
        (out, err, r.stats().clone())
    }

    const T0: i64 = 1_764_441_600_123_456_789;

    fn t(resol: u8, offset: i64) -> IfaceTime {
        IfaceTime {
            tsresol: resol,
            tsoffset: offset,
        }
    }

    /// Three interfaces of different link types and resolutions, a custom and
    /// an unknown block, then a big-endian second section.
    fn multi() -> Vec<u8> {
        let mut w = PcapngWriter::new(Vec::new()).unwrap();
        let eth = w.add_interface_with(1, 65535, t(6, 0)).unwrap();
        let raw = w.add_interface_with(101, 1500, t(9, 0)).unwrap();
        let sll = w.add_interface_with(113, 262144, t(0x80 | 20, 0)).unwrap();
        w.write_packet(eth, T0, b"eth").unwrap();
        w.write_custom_block(0x0000_0BAD, b"\0\0\x7f\xffcustom")
            .unwrap();
        w.write_packet(raw, T0 + 1, b"raw-ip").unwrap();
        w.write_custom_block(0x0000_0777, b"who knows").unwrap();
        w.write_packet_truncated(sll, T0 + 2, &[7; 80], 20).unwrap();
        w.write_custom_block(5, &[0; 12]).unwrap(); // interface statistics
        w.new_section(ByteOrder::Big).unwrap();
        let raw2 = w.add_interface_with(101, 65535, t(3, 1_000)).unwrap();
        w.write_packet(raw2, T0 + 5_000_000, b"section 2").unwrap();
        w.write_obsolete_packet(0, T0 + 6_000_000, b"obsolete")
            .unwrap();
        w.write_simple_packet(b"simple!", 100).unwrap();
        w.into_inner()
    }

    #[test]
    fn interfaces_resolutions_sections_and_skipped_blocks() {
        let bytes = multi();
        let mut r = FileReader::new(Box::new(Cursor::new(bytes.clone()))).unwrap();
        // The first section's interfaces are known before any packet.
        assert_eq!(r.interfaces().len(), 3);
        assert_eq!(r.interfaces()[1].snaplen, 1500);
        while r.next_packet().is_some() {}
        assert_eq!(r.interfaces().len(), 4);
        assert_eq!(r.interfaces()[3].section, 1);
        assert_eq!(r.interfaces()[3].tsoffset, 1_000);
        let (got, err, st) = read(bytes);
        assert!(err.is_none(), "{err:?}");
        let base = T0 - T0 % 1_000_000_000;
        let frac = T0 % 1_000_000_000;
        // 2^-20 s units, truncated on write and on read.
        let units = (frac as u128 * (1 << 20) / 1_000_000_000) as u64;
        let sll_ns = base + (units as u128 * 1_000_000_000 / (1 << 20)) as i64;
        let ms = |ts: i64| ts - ts % 1_000_000;
        let want: Vec<Got> = vec![
            (T0 - T0 % 1000, 0, 1, b"eth".to_vec(), 3),
            (T0 + 1, 1, 101, b"raw-ip".to_vec(), 6),
            (sll_ns, 2, 113, vec![7; 20], 80),
            (ms(T0 + 5_000_000), 3, 101, b"section 2".to_vec(), 9),
            (ms(T0 + 6_000_000), 3, 101, b"obsolete".to_vec(), 8),
            // A simple packet has no time: the previous packet's stands in.
            (ms(T0 + 6_000_000), 3, 101, b"simple!".to_vec(), 7),
        ];
        assert_eq!(got, want);
        assert_eq!(
            st,
            FileStats {
                bytes: st.bytes,
                sections: 2,
                interfaces: 4,
                enhanced_packets: 4,
                simple_packets: 1,
                obsolete_packets: 1,
                other_blocks: 1,
                custom_blocks: 1,
                unknown_blocks: 1,
                orphan_packets: 0,
            }
        );
        assert_eq!(st.bytes, multi().len() as u64);
    }

    #[test]
    fn both_byte_orders_read_alike() {
        let mut le = PcapngWriter::with_order(Vec::new(), ByteOrder::Little).unwrap();
        let mut be = PcapngWriter::with_order(Vec::new(), ByteOrder::Big).unwrap();
        for w in [&mut le, &mut be] {
            let i = w.add_interface_with(228, 65535, t(0x80 | 30, 0)).unwrap();
            w.write_packet(i, T0, &[1, 2, 3, 4, 5]).unwrap();
            w.write_packet(i, T0 + 999, &[9; 33]).unwrap();
        }
        let (a, ea, _) = read(le.into_inner());
        let (b, eb, _) = read(be.into_inner());
        assert!(ea.is_none() && eb.is_none());
        assert_eq!(a.len(), 2);
        assert_eq!(a, b);
        // Big-endian classic pcap, µs and ns.
        for (magic, nano) in [(0xa1b2_c3d4u32, false), (0xa1b2_3c4d, true)] {
            let mut f = Vec::new();
            f.extend_from_slice(&magic.to_be_bytes());
            f.extend_from_slice(&2u16.to_be_bytes());
            f.extend_from_slice(&4u16.to_be_bytes());
            f.extend_from_slice(&[0; 8]);
            f.extend_from_slice(&65535u32.to_be_bytes());
            f.extend_from_slice(&(1u32 | 0x1000_0000).to_be_bytes()); // FCS bits set
            f.extend_from_slice(&1_700_000_000u32.to_be_bytes());
            f.extend_from_slice(&123u32.to_be_bytes());
            f.extend_from_slice(&3u32.to_be_bytes());
            f.extend_from_slice(&60u32.to_be_bytes());
            f.extend_from_slice(b"abc");
            let (got, err, _) = read(f);
            assert!(err.is_none());
            let frac = if nano { 123 } else { 123_000 };
            assert_eq!(
                got,
                vec![(1_700_000_000_000_000_000 + frac, 0, 1, b"abc".to_vec(), 60)]
            );
        }
    }

    #[test]
    fn orphan_packets_are_counted_and_skipped() {
        let mut w = PcapngWriter::new(Vec::new()).unwrap();
        let i = w.add_interface(1, 65535, TsPrecision::Nano).unwrap();
        w.write_packet(i, T0, b"a").unwrap();
        let mut bytes = w.into_inner();
        // A packet naming interface 5, of a section that described one.
        let mut body = 5u32.to_le_bytes().to_vec();
        body.extend_from_slice(&[0; 8]);
        body.extend_from_slice(&1u32.to_le_bytes());
        body.extend_from_slice(&1u32.to_le_bytes());
        body.extend_from_slice(&[b'x', 0, 0, 0]);
        let total = (12 + body.len()) as u32;
        bytes.extend_from_slice(&6u32.to_le_bytes());
        bytes.extend_from_slice(&total.to_le_bytes());
        bytes.extend_from_slice(&body);
        bytes.extend_from_slice(&total.to_le_bytes());
        let (got, err, st) = read(bytes);
        assert!(err.is_none());
        assert_eq!(got.len(), 1);
        assert_eq!(st.orphan_packets, 1);
    }

    #[test]
    fn a_cut_last_block_is_truncation_after_every_earlier_packet() {
        let whole = multi();
        let (all, _, _) = read(whole.clone());
        // Block boundaries: walk the length fields (the second section is big-endian).
        let mut bounds = vec![0usize];
        let mut be = false;
        while *bounds.last().unwrap() < whole.len() {
            let at = *bounds.last().unwrap();
            if whole[at..at + 4] == SHB_BYTES {
                be = whole[at + 8] == 0x1A;
            }
            let len = u32_at(&whole, at + 4, be).unwrap() as usize;
            bounds.push(at + len);
        }
        let first_packet = bounds[4];
        for cut in first_packet..whole.len() {
            let (got, err, _) = read(whole[..cut].to_vec());
            if bounds.contains(&cut) {
                assert!(err.is_none(), "cut {cut}: {err:?}");
            } else {
                assert!(
                    matches!(err, Some(CaptureError::Truncated { packet }) if packet == got.len() as u64 + 1),
                    "cut {cut}: {err:?}"
                );
            }
            assert_eq!(got[..], all[..got.len()], "cut {cut}");
        }
    }

    #[test]
    fn bad_lengths_are_damage_not_allocations() {
        let mut w = PcapngWriter::new(Vec::new()).unwrap();
        let i = w.add_interface(1, 65535, TsPrecision::Nano).unwrap();
        w.write_packet(i, T0, b"ok").unwrap();
        let good = w.into_inner();
        for (len, trailer) in [(u32::MAX, 0u32), (13, 13), (8, 8), (64, 60)] {
            let mut bytes = good.clone();
            bytes.extend_from_slice(&6u32.to_le_bytes());
            bytes.extend_from_slice(&len.to_le_bytes());
            bytes.extend_from_slice(&[0; 52]);
            bytes.extend_from_slice(&trailer.to_le_bytes());
            let (got, err, _) = read(bytes);
            assert_eq!(got.len(), 1);
            assert!(
                matches!(err, Some(CaptureError::Read { packet: 2, .. })),
                "{len}: {err:?}"
            );
        }
        // A classic record claiming 4 GB.
        let mut p = PcapWriter::new(Vec::new(), 1, TsPrecision::Micro, 65535).unwrap();
        p.write_packet(0, b"x").unwrap();
        let mut bytes = p.into_inner();
        bytes.extend_from_slice(&[0; 8]);
        bytes.extend_from_slice(&u32::MAX.to_le_bytes());
        bytes.extend_from_slice(&[0; 4]);
        let (got, err, _) = read(bytes);
        assert_eq!(got.len(), 1);
        assert!(
            matches!(err, Some(CaptureError::Read { packet: 2, .. })),
            "{err:?}"
        );
    }

    #[test]
    fn blocks_larger_than_the_buffer() {
        let big: Vec<u8> = (0..3 * READ_CHUNK + 5).map(|i| i as u8).collect();
        let mut w = PcapngWriter::new(Vec::new()).unwrap();
        let i = w.add_interface(1, 0, TsPrecision::Nano).unwrap();
        w.write_packet(i, T0, &big).unwrap();
        w.write_packet(i, T0 + 1, b"after").unwrap();
        let (got, err, _) = read(w.into_inner());
        assert!(err.is_none());
        assert_eq!(got[0].3, big);
        assert_eq!(got[1].3, b"after");
    }

    /// Hands out a few bytes per read and records how many it gave.
    struct Trickle {
        data: Vec<u8>,
        pos: std::sync::Arc<std::sync::atomic::AtomicUsize>,
    }

    impl Read for Trickle {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            use std::sync::atomic::Ordering;
            let at = self.pos.load(Ordering::SeqCst);
            let n = buf.len().min(7).min(self.data.len() - at);
            buf[..n].copy_from_slice(&self.data[at..at + n]);
            self.pos.store(at + n, Ordering::SeqCst);
            Ok(n)
        }
    }

    #[test]
    fn streams_packets_as_bytes_arrive() {
        let bytes = multi();
        let total = bytes.len();
        let pos = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let mut r = FileReader::new(Box::new(Trickle {
            data: bytes,
            pos: pos.clone(),
        }))
        .unwrap();
        let p = r.next_packet().unwrap().unwrap();
        assert_eq!(p.data, b"eth");
        // Only a little past the first packet was read, not the whole input.
        let read_so_far = pos.load(std::sync::atomic::Ordering::SeqCst);
        assert!(read_so_far < total / 2, "{read_so_far} of {total}");
        let mut n = 1;
        while let Some(p) = r.next_packet() {
            p.unwrap();
            n += 1;
        }
        assert_eq!(n, 6);
    }

    #[test]
    fn not_a_capture() {
        for bytes in [
            &b""[..],
            b"ab",
            b"GET / HTTP/1.1\r\n",
            &[0xd4, 0xc3, 0xb2, 0xa1, 0, 0],
        ] {
            let e = FileReader::new(Box::new(Cursor::new(bytes.to_vec()))).unwrap_err();
            assert!(matches!(e, CaptureError::Open { .. }), "{e:?}");
        }
        // A pcapng section header cut short cannot be opened either.
        let ng = PcapngWriter::new(Vec::new()).unwrap().into_inner();
        for cut in 4..ng.len() {
            let e = FileReader::new(Box::new(Cursor::new(ng[..cut].to_vec()))).unwrap_err();
            assert!(matches!(e, CaptureError::Open { .. }), "{cut}: {e:?}");
        }
    }

    proptest::proptest! {
        #[test]
        fn damaged_files_never_panic(
            flips in proptest::collection::vec((0usize..4000, proptest::prelude::any::<u8>()), 0..12),
            cut in 0usize..4000,
            classic in proptest::prelude::any::<bool>(),
        ) {
            let mut bytes = if classic {
                let mut w = PcapWriter::new(Vec::new(), 1, TsPrecision::Nano, 65535).unwrap();
                for k in 0..20 {
                    w.write_packet(T0 + k, &[k as u8; 100]).unwrap();
                }
                w.into_inner()
            } else {
                multi()
            };
            for (at, x) in flips {
                if let Some(b) = bytes.get_mut(at) {
                    *b ^= x;
                }
            }
            bytes.truncate(cut.max(4));
            if let Ok(mut r) = FileReader::new(Box::new(Cursor::new(bytes))) {
                let mut n = 0;
                while let Some(p) = r.next_packet() {
                    if let Ok(p) = p {
                        proptest::prop_assert_eq!(p.caplen as usize, p.data.len());
                    }
                    n += 1;
                    proptest::prop_assert!(n < 100);
                }
                proptest::prop_assert!(r.buf.len() <= 2 * READ_CHUNK);
            }
        }
    }
}
