//! Minimal pcap and pcapng writers, for the TUI's export and for tests and
//! synthetic fixtures. The pcap crate can only write through a libpcap handle
//! (classic pcap, µs or ns, no pcapng), and fixtures need control over magic,
//! precision and odd blocks, so these are written by hand.
//! Everything is little-endian; readers detect byte order from the magic.

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

/// Writes a pcapng file with one section and any number of interfaces.
#[derive(Debug)]
pub struct PcapngWriter<W: Write> {
    out: W,
    /// Timestamp resolution (ns or µs) of each interface, by index.
    ifaces: Vec<TsPrecision>,
}

const SHB: u32 = 0x0A0D_0D0A;
const IDB: u32 = 0x0000_0001;
const EPB: u32 = 0x0000_0006;

impl<W: Write> PcapngWriter<W> {
    /// Writes the section header block.
    pub fn new(mut out: W) -> io::Result<Self> {
        let mut body = Vec::with_capacity(16);
        body.extend_from_slice(&0x1A2B_3C4Du32.to_le_bytes());
        body.extend_from_slice(&1u16.to_le_bytes());
        body.extend_from_slice(&0u16.to_le_bytes());
        body.extend_from_slice(&(-1i64).to_le_bytes()); // section length unknown
        write_block(&mut out, SHB, &body)?;
        Ok(PcapngWriter {
            out,
            ifaces: Vec::new(),
        })
    }

    /// Adds an interface description block; returns its interface id.
    pub fn add_interface(
        &mut self,
        linktype: u16,
        snaplen: u32,
        precision: TsPrecision,
    ) -> io::Result<u32> {
        let mut body = Vec::with_capacity(20);
        body.extend_from_slice(&linktype.to_le_bytes());
        body.extend_from_slice(&0u16.to_le_bytes());
        body.extend_from_slice(&snaplen.to_le_bytes());
        // if_tsresol: 10^-9 or 10^-6 (the latter is also the default).
        let resol: u8 = match precision {
            TsPrecision::Micro => 6,
            TsPrecision::Nano => 9,
        };
        body.extend_from_slice(&9u16.to_le_bytes());
        body.extend_from_slice(&1u16.to_le_bytes());
        body.extend_from_slice(&[resol, 0, 0, 0]);
        body.extend_from_slice(&[0, 0, 0, 0]); // opt_endofopt
        write_block(&mut self.out, IDB, &body)?;
        let id = len32(self.ifaces.len())?;
        self.ifaces.push(precision);
        Ok(id)
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
        let precision =
            self.ifaces.get(iface as usize).copied().ok_or_else(|| {
                io::Error::new(io::ErrorKind::InvalidInput, "unknown interface id")
            })?;
        let units: u64 = match precision {
            TsPrecision::Micro => (ts_ns / 1000) as u64,
            TsPrecision::Nano => ts_ns as u64,
        };
        let mut body = Vec::with_capacity(20 + data.len() + 3);
        body.extend_from_slice(&iface.to_le_bytes());
        body.extend_from_slice(&((units >> 32) as u32).to_le_bytes());
        body.extend_from_slice(&(units as u32).to_le_bytes());
        body.extend_from_slice(&len32(data.len())?.to_le_bytes());
        body.extend_from_slice(&origlen.max(len32(data.len())?).to_le_bytes());
        body.extend_from_slice(data);
        write_block(&mut self.out, EPB, &body)
    }

    /// Writes a block of a type readers should skip (robustness fixtures).
    pub fn write_custom_block(&mut self, block_type: u32, body: &[u8]) -> io::Result<()> {
        write_block(&mut self.out, block_type, body)
    }

    pub fn into_inner(self) -> W {
        self.out
    }
}

/// Block = type, total length, body padded to 32 bits, total length again.
fn write_block<W: Write>(out: &mut W, block_type: u32, body: &[u8]) -> io::Result<()> {
    let pad = (4 - body.len() % 4) % 4;
    let total = len32(12 + body.len() + pad)?;
    out.write_all(&block_type.to_le_bytes())?;
    out.write_all(&total.to_le_bytes())?;
    out.write_all(body)?;
    out.write_all([0u8; 3].get(..pad).unwrap_or_default())?;
    out.write_all(&total.to_le_bytes())
}

fn len32(n: usize) -> io::Result<u32> {
    u32::try_from(n)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "length exceeds 32 bits"))
}
