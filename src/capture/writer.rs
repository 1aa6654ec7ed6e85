//! Minimal pcap and pcapng writers, for the TUI's export and for tests and
//! synthetic fixtures. The pcap crate can only write through a libpcap handle
//! (classic pcap, µs or ns, no pcapng), and fixtures need control over magic,
//! precision and odd blocks, so these are written by hand.
//! Classic pcap is little-endian; pcapng sections may be either byte order.

use std::io::{self, Write};

/// Timestamp precision of a classic pcap file (chosen by its magic number).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TsPrecision {
    Micro,
    Nano,
}

impl TsPrecision {
    fn split(self, ts_ns: i64) -> (u32, u32) {
        let secs = ts_ns.div_euclid(1_000_000_000);
        let nanos = ts_ns.rem_euclid(1_000_000_000);
        let frac = match self {
            TsPrecision::Micro => nanos / 1000,
            TsPrecision::Nano => nanos,
        };
        // pcap stores 32-bit seconds; out-of-range test times wrap, as in files.
        (secs as u32, frac as u32)
    }
}

/// Writes a classic (libpcap) capture file.
#[derive(Debug)]
pub struct PcapWriter<W: Write> {
    out: W,
    precision: TsPrecision,
    snaplen: u32,
}

impl<W: Write> PcapWriter<W> {
    /// Writes the file header. `snaplen` is only advertised; packets are
    /// truncated with `write_packet_truncated`.
    pub fn new(
        mut out: W,
        linktype: u32,
        precision: TsPrecision,
        snaplen: u32,
    ) -> io::Result<Self> {
        let magic: u32 = match precision {
            TsPrecision::Micro => 0xa1b2_c3d4,
            TsPrecision::Nano => 0xa1b2_3c4d,
        };
        out.write_all(&magic.to_le_bytes())?;
        out.write_all(&2u16.to_le_bytes())?;
        out.write_all(&4u16.to_le_bytes())?;
        out.write_all(&0i32.to_le_bytes())?; // thiszone
        out.write_all(&0u32.to_le_bytes())?; // sigfigs
        out.write_all(&snaplen.to_le_bytes())?;
        out.write_all(&linktype.to_le_bytes())?;
        Ok(PcapWriter {
            out,
            precision,
            snaplen,
        })
    }

    /// Writes one full packet.
    pub fn write_packet(&mut self, ts_ns: i64, data: &[u8]) -> io::Result<()> {
        self.write_packet_truncated(ts_ns, data, self.snaplen as usize)
    }

    /// Writes at most `caplen` bytes of `data`, recording the full length as
    /// the original length (what a capture with a small snaplen looks like).
    pub fn write_packet_truncated(
        &mut self,
        ts_ns: i64,
        data: &[u8],
        caplen: usize,
    ) -> io::Result<()> {
        let cut = data.get(..caplen).unwrap_or(data);
        let (sec, frac) = self.precision.split(ts_ns);
        self.out.write_all(&sec.to_le_bytes())?;
        self.out.write_all(&frac.to_le_bytes())?;
        self.out.write_all(&len32(cut.len())?.to_le_bytes())?;
        self.out.write_all(&len32(data.len())?.to_le_bytes())?;
        self.out.write_all(cut)
    }

    /// Writes one packet as it was captured: `data` is what was kept of
    /// `origlen` bytes on the wire (TUI export keeps the original lengths).
    pub fn write_captured(&mut self, ts_ns: i64, data: &[u8], origlen: u32) -> io::Result<()> {
        let (sec, frac) = self.precision.split(ts_ns);
        self.out.write_all(&sec.to_le_bytes())?;
        self.out.write_all(&frac.to_le_bytes())?;
        self.out.write_all(&len32(data.len())?.to_le_bytes())?;
        self.out
            .write_all(&origlen.max(len32(data.len())?).to_le_bytes())?;
        self.out.write_all(data)
    }

    pub fn into_inner(self) -> W {
        self.out
    }
}

/// Byte order of a pcapng section.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ByteOrder {
    Little,
    Big,
}

/// How one pcapng interface stamps time: `if_tsresol` as on the wire (bit 7
/// set: a power of 2, else a power of 10) and `if_tsoffset` in seconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IfaceTime {
    pub tsresol: u8,
    pub tsoffset: i64,
}

impl IfaceTime {
    /// Units per second, or `None` for a resolution that does not fit in a u64.
    pub fn units_per_sec(self) -> Option<u64> {
        if self.tsresol & 0x80 != 0 {
            1u64.checked_shl(u32::from(self.tsresol & 0x7f))
        } else {
            10u64.checked_pow(u32::from(self.tsresol))
        }
    }

    /// The on-wire timestamp for `ts_ns` (truncated to the resolution).
    pub fn units(self, ts_ns: i64) -> io::Result<u64> {
        let per_sec = self
            .units_per_sec()
            .ok_or_else(|| invalid("bad if_tsresol"))?;
        let rel = i128::from(ts_ns) - i128::from(self.tsoffset) * 1_000_000_000;
        let rel = u128::try_from(rel).map_err(|_| invalid("time before if_tsoffset"))?;
        let secs = rel / 1_000_000_000;
        let frac = rel % 1_000_000_000;
        // Truncated, as capture tools do.
        let units = secs * u128::from(per_sec) + frac * u128::from(per_sec) / 1_000_000_000;
        u64::try_from(units).map_err(|_| invalid("timestamp overflows 64 bits"))
    }
}

/// Writes a pcapng file: sections, interfaces with any link type and time
/// resolution, enhanced, simple and obsolete packet blocks, in either byte
/// order.
#[derive(Debug)]
pub struct PcapngWriter<W: Write> {
    out: W,
    order: ByteOrder,
    /// Time stamping of each interface of the current section, by index.
    ifaces: Vec<IfaceTime>,
}

const SHB: u32 = 0x0A0D_0D0A;
const IDB: u32 = 0x0000_0001;
const OPB: u32 = 0x0000_0002;
const SPB: u32 = 0x0000_0003;
const EPB: u32 = 0x0000_0006;

impl<W: Write> PcapngWriter<W> {
    /// Writes a little-endian section header block.
    pub fn new(out: W) -> io::Result<Self> {
        Self::with_order(out, ByteOrder::Little)
    }

    /// Writes a section header block in the given byte order.
    pub fn with_order(out: W, order: ByteOrder) -> io::Result<Self> {
        let mut w = PcapngWriter {
            out,
            order,
            ifaces: Vec::new(),
        };
        w.write_shb()?;
        Ok(w)
    }

    /// Starts a new section (its interfaces start again at 0), possibly in
    /// another byte order.
    pub fn new_section(&mut self, order: ByteOrder) -> io::Result<()> {
        self.order = order;
        self.ifaces.clear();
        self.write_shb()
    }

    fn write_shb(&mut self) -> io::Result<()> {
        let mut body = Vec::with_capacity(16);
        self.put32(&mut body, 0x1A2B_3C4D);
        self.put16(&mut body, 1);
        self.put16(&mut body, 0);
        self.put64(&mut body, u64::MAX); // section length unknown
        self.block(SHB, &body)
    }

    fn put16(&self, v: &mut Vec<u8>, x: u16) {
        match self.order {
            ByteOrder::Little => v.extend_from_slice(&x.to_le_bytes()),
            ByteOrder::Big => v.extend_from_slice(&x.to_be_bytes()),
        }
    }

    fn put32(&self, v: &mut Vec<u8>, x: u32) {
        match self.order {
            ByteOrder::Little => v.extend_from_slice(&x.to_le_bytes()),
            ByteOrder::Big => v.extend_from_slice(&x.to_be_bytes()),
        }
    }

    fn put64(&self, v: &mut Vec<u8>, x: u64) {
        match self.order {
            ByteOrder::Little => v.extend_from_slice(&x.to_le_bytes()),
            ByteOrder::Big => v.extend_from_slice(&x.to_be_bytes()),
        }
    }

    /// Adds an interface description block; returns its interface id.
    pub fn add_interface(
        &mut self,
        linktype: u16,
        snaplen: u32,
        precision: TsPrecision,
    ) -> io::Result<u32> {
        let tsresol = match precision {
            TsPrecision::Micro => 6,
            TsPrecision::Nano => 9,
        };
        self.add_interface_with(
            linktype,
            snaplen,
            IfaceTime {
                tsresol,
                tsoffset: 0,
            },
        )
    }

    /// Adds an interface with any `if_tsresol` and `if_tsoffset`.
    pub fn add_interface_with(
        &mut self,
        linktype: u16,
        snaplen: u32,
        time: IfaceTime,
    ) -> io::Result<u32> {
        let mut body = Vec::with_capacity(32);
        self.put16(&mut body, linktype);
        self.put16(&mut body, 0);
        self.put32(&mut body, snaplen);
        self.put16(&mut body, 9); // if_tsresol
        self.put16(&mut body, 1);
        body.extend_from_slice(&[time.tsresol, 0, 0, 0]);
        if time.tsoffset != 0 {
            self.put16(&mut body, 14); // if_tsoffset
            self.put16(&mut body, 8);
            self.put64(&mut body, time.tsoffset as u64);
        }
        body.extend_from_slice(&[0, 0, 0, 0]); // opt_endofopt
        self.block(IDB, &body)?;
        let id = len32(self.ifaces.len())?;
        self.ifaces.push(time);
        Ok(id)
    }

    fn units(&self, iface: u32, ts_ns: i64) -> io::Result<u64> {
        let time = self
            .ifaces
            .get(iface as usize)
            .copied()
            .ok_or_else(|| invalid("unknown interface id"))?;
        time.units(ts_ns)
    }

    /// Writes an enhanced packet block with the full packet.
    pub fn write_packet(&mut self, iface: u32, ts_ns: i64, data: &[u8]) -> io::Result<()> {
        self.write_packet_truncated(iface, ts_ns, data, data.len())
    }

    /// Writes an enhanced packet block holding at most `caplen` bytes.
    pub fn write_packet_truncated(
        &mut self,
        iface: u32,
        ts_ns: i64,
        data: &[u8],
        caplen: usize,
    ) -> io::Result<()> {
        let cut = data.get(..caplen).unwrap_or(data);
        self.write_captured(iface, ts_ns, cut, len32(data.len())?)
    }

    /// Writes an enhanced packet block as captured: `data` is what was kept
    /// of `origlen` bytes on the wire (TUI export keeps the original lengths).
    pub fn write_captured(
        &mut self,
        iface: u32,
        ts_ns: i64,
        data: &[u8],
        origlen: u32,
    ) -> io::Result<()> {
        let units = self.units(iface, ts_ns)?;
        let mut body = Vec::with_capacity(20 + data.len() + 3);
        self.put32(&mut body, iface);
        self.put32(&mut body, (units >> 32) as u32);
        self.put32(&mut body, units as u32);
        self.put32(&mut body, len32(data.len())?);
        self.put32(&mut body, origlen.max(len32(data.len())?));
        body.extend_from_slice(data);
        self.block(EPB, &body)
    }

    /// Writes a simple packet block (interface 0, no timestamp): at most
    /// `caplen` bytes of `data`.
    pub fn write_simple_packet(&mut self, data: &[u8], caplen: usize) -> io::Result<()> {
        let cut = data.get(..caplen).unwrap_or(data);
        let mut body = Vec::with_capacity(4 + cut.len() + 3);
        self.put32(&mut body, len32(data.len())?);
        body.extend_from_slice(cut);
        self.block(SPB, &body)
    }

    /// Writes an obsolete packet block (type 2, 16-bit interface id).
    pub fn write_obsolete_packet(&mut self, iface: u16, ts_ns: i64, data: &[u8]) -> io::Result<()> {
        let units = self.units(u32::from(iface), ts_ns)?;
        let mut body = Vec::with_capacity(20 + data.len() + 3);
        self.put16(&mut body, iface);
        self.put16(&mut body, 0); // drops count
        self.put32(&mut body, (units >> 32) as u32);
        self.put32(&mut body, units as u32);
        self.put32(&mut body, len32(data.len())?);
        self.put32(&mut body, len32(data.len())?);
        body.extend_from_slice(data);
        self.block(OPB, &body)
    }

    /// Writes a block of a type readers should skip (robustness fixtures).
    pub fn write_custom_block(&mut self, block_type: u32, body: &[u8]) -> io::Result<()> {
        self.block(block_type, body)
    }

    fn block(&mut self, block_type: u32, body: &[u8]) -> io::Result<()> {
        write_block(&mut self.out, self.order, block_type, body)
    }

    pub fn into_inner(self) -> W {
        self.out
    }
}

fn invalid(what: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, what.to_string())
}

/// Block = type, total length, body padded to 32 bits, total length again.
fn write_block<W: Write>(
    out: &mut W,
    order: ByteOrder,
    block_type: u32,
    body: &[u8],
) -> io::Result<()> {
    let pad = (4 - body.len() % 4) % 4;
    let total = len32(12 + body.len() + pad)?;
    let word = |x: u32| match order {
        ByteOrder::Little => x.to_le_bytes(),
        ByteOrder::Big => x.to_be_bytes(),
    };
    out.write_all(&word(block_type))?;
    out.write_all(&word(total))?;
    out.write_all(body)?;
    out.write_all([0u8; 3].get(..pad).unwrap_or_default())?;
    out.write_all(&word(total))
}

fn len32(n: usize) -> io::Result<u32> {
    u32::try_from(n)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "length exceeds 32 bits"))
}
