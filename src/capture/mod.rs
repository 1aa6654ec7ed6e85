//! Stage 1: capture sources. Files (pcap and pcapng, also on stdin) are read
//! by our own reader ([`file`]); live capture and `-w` go through libpcap.
#![cfg_attr(
    not(test),
    deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)
)]

pub mod compress;
pub mod file;
pub mod merge;
// The TUI's export (`w`) writes with it, as do tests and fixtures.
pub mod writer;

pub use compress::Compression;
pub use file::{FileStats, Interface};

use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
use pcap::{Active, Capture, Precision, Savefile};
use std::os::fd::AsFd;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// One captured packet, borrowed from the source until the next call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Packet<'a> {
    pub ts_sec: i64,
    /// Always nanoseconds, whatever the file's precision.
    pub ts_nsec: u32,
    pub linktype: i32,
    pub caplen: u32,
    pub origlen: u32,
    pub data: &'a [u8],
    /// Interface it was captured on: an index into [`Source::interfaces`]
    /// (over all pcapng sections); 0 for classic pcap and live captures.
    pub interface: u32,
    /// Index of the input file it came from when several are merged, else 0.
    pub file: u32,
}

impl Packet<'_> {
    /// Timestamp as nanoseconds since the epoch (saturating).
    pub fn ts_ns(&self) -> i64 {
        self.ts_sec
            .saturating_mul(1_000_000_000)
            .saturating_add(i64::from(self.ts_nsec))
    }
}

/// Why a capture could not be opened or read.
#[derive(Debug, thiserror::Error)]
pub enum CaptureError {
    /// The file is missing, unreadable or not a pcap or pcapng capture.
    #[error("cannot open capture: {reason}")]
    Open { reason: String },
    /// The input ended in the middle of a record or block.
    #[error("capture truncated at packet {packet}")]
    Truncated { packet: u64 },
    /// Any other error while reading (a malformed block, an I/O error).
    #[error("error reading packet {packet}: {reason}")]
    Read { packet: u64, reason: String },
    /// Capturing needs privileges this process lacks.
    #[error("no permission to capture on {iface}: {reason}")]
    Permission { iface: String, reason: String },
    /// The interface does not exist; `available` names those that do.
    #[error("no interface {iface:?} (interfaces: {})", available.join(", "))]
    NoSuchInterface {
        iface: String,
        available: Vec<String>,
    },
    /// libpcap rejected the capture filter.
    #[error("invalid capture filter {filter:?}: {reason}")]
    Filter { filter: String, reason: String },
    /// Live only: no packet within the poll interval. Not a failure: it hands
    /// control back so a stop request is noticed; call `next_packet` again.
    #[error("no packet yet")]
    Idle,
    /// The file to write packets to (`-w`) could not be created.
    #[error("cannot write {path}: {reason}")]
    Write { path: String, reason: String },
    /// One of several merged inputs failed; `error` counts its own packets.
    #[error("{file}: {error}")]
    InFile {
        file: String,
        error: Box<CaptureError>,
    },
}

impl CaptureError {
    /// The command line's words for this error, and a hint at the fix when there is one.
    /// `what` names the file or interface being opened.
    pub fn explain(&self, what: &str) -> (String, Option<String>) {
        match self {
            CaptureError::Permission { iface, reason } => (
                format!("no permission to capture on {iface}: {reason}"),
                Some("run as root, or grant the binary the capability: sudo setcap cap_net_raw,cap_net_admin=eip $(command -v kwire)".into()),
            ),
            CaptureError::NoSuchInterface { iface, available } => (
                format!("there is no interface {iface:?}"),
                Some(format!("interfaces here: {}", available.join(", "))),
            ),
            CaptureError::Filter { filter, reason } => (
                format!("libpcap rejects the capture filter {filter:?}: {reason}"),
                Some("-f takes tcpdump's filter syntax, e.g. -f 'tcp port 9092'".into()),
            ),
            CaptureError::Open { reason } => {
                // libpcap often starts its message with the path already.
                let prefix = format!("{what}: ");
                let reason = reason.strip_prefix(&prefix).unwrap_or(reason);
                (
                    format!("cannot read {what}: {reason}"),
                    Some("kwire reads pcap and pcapng files (or - for standard input)".into()),
                )
            }
            other => (other.to_string(), None),
        }
    }
}

/// How to open a live capture.
#[derive(Clone, Debug)]
pub struct LiveOptions {
    pub iface: String,
    /// A BPF expression, as for tcpdump.
    pub filter: String,
    pub snaplen: i32,
    /// Kernel buffer in bytes: bursts beyond it are dropped by the kernel.
    pub buffer_size: i32,
    /// Hand each packet over as it arrives. On Linux this costs a slot of about the
    /// snaplen (or the MTU) per packet, so the buffer holds few small packets and high
    /// rates are dropped; off, packets are packed into blocks handed over when full or
    /// after `latency`.
    pub immediate: bool,
    /// Without `immediate`: the longest a packet waits in the kernel before kwire sees it.
    pub latency: Duration,
    pub promisc: bool,
    /// Also write every captured packet to this pcap file.
    pub write: Option<std::path::PathBuf>,
}

impl LiveOptions {
    pub fn new(iface: &str) -> LiveOptions {
        LiveOptions {
            iface: iface.to_string(),
            filter: "tcp".to_string(),
            snaplen: 262_144,
            buffer_size: 64 << 20,
            immediate: false,
            latency: Duration::from_millis(50),
            promisc: true,
            write: None,
        }
    }
}

/// libpcap's own counters for a live capture.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LiveStats {
    pub received: u32,
    pub dropped_by_kernel: u32,
    pub dropped_by_interface: u32,
}

/// How long a live read waits before giving the caller a chance to stop.
const LIVE_POLL: Duration = Duration::from_millis(100);

/// Where packets come from: a file (or stdin) or a live interface, behind one
/// `next_packet` API, so the pipeline runs the same way on both.
pub struct Source {
    cap: Cap,
    /// Live only: the handle's link type.
    linktype: i32,
    /// Packets returned so far, so errors can name the packet they hit.
    count: u64,
    done: bool,
    /// Live only: where `-w` writes each packet.
    savefile: Option<Savefile>,
    /// Live only: set (e.g. by Ctrl-C) to end the capture.
    stop: Option<Arc<AtomicBool>>,
    /// Live only: the capture ends at this instant.
    deadline: Option<Instant>,
    /// Live only: the last read found nothing, so the next one polls first.
    drained: bool,
}

/// A file goes through our reader; a live handle is non-blocking and polled,
/// because a blocking read on an idle Linux interface may never return.
enum Cap {
    File(Box<file::FileReader>),
    Merge(Box<merge::Merge>),
    Live(Capture<Active>),
}

/// The next packet libpcap holds. Only when the last read found none (`drained`) is the
/// descriptor polled first, for at most `wait`, so a busy capture reads back to back and an
/// idle one still hands back control.
fn live_next(
    c: &mut Capture<Active>,
    drained: bool,
    wait: Duration,
) -> Result<pcap::Packet<'_>, pcap::Error> {
    if drained {
        let ready = {
            let mut fds = [PollFd::new(c.as_fd(), PollFlags::POLLIN)];
            let ms = u16::try_from(wait.as_millis()).unwrap_or(u16::MAX);
            poll(&mut fds, PollTimeout::from(ms))
        };
        match ready {
            Ok(0) => return Err(pcap::Error::TimeoutExpired),
            // A signal (Ctrl-C) interrupts poll: report idle so the stop flag is seen.
            Err(nix::errno::Errno::EINTR) => return Err(pcap::Error::TimeoutExpired),
            _ => {}
        }
    }
    c.next_packet()
}

impl std::fmt::Debug for Source {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Source")
            .field("live", &matches!(self.cap, Cap::Live(_)))
            .field("merged", &matches!(self.cap, Cap::Merge(_)))
            .field("linktype", &self.linktype())
            .field("count", &self.count)
            .finish()
    }
}

impl Source {
    /// Opens a pcap or pcapng file, compressed or not (gzip, zstd, lz4,
    /// recognised by their magic bytes); `-` reads standard input, streaming:
    /// packets come out as the bytes arrive.
    pub fn open_file(path: impl AsRef<std::path::Path>) -> Result<Source, CaptureError> {
        let reader = open_reader(path.as_ref())?;
        Ok(Source::with_cap(Cap::File(Box::new(reader))))
    }

    /// Opens several captures and merges their packets by time, as mergecap
    /// does: one packet of look-ahead per file, so memory does not grow with
    /// the files. Each packet's `file` is its input's index in `paths`. One
    /// path is the same as [`Source::open_file`].
    pub fn open_files<P: AsRef<std::path::Path>>(paths: &[P]) -> Result<Source, CaptureError> {
        if let [one] = paths {
            return Source::open_file(one);
        }
        let mut readers = Vec::with_capacity(paths.len());
        for p in paths {
            let p = p.as_ref();
            let r = open_reader(p).map_err(|e| match e {
                // Name the file; a missing file's reason names it already.
                CaptureError::Open { reason } if !reason.starts_with(&p.display().to_string()) => {
                    CaptureError::Open {
                        reason: format!("{}: {reason}", p.display()),
                    }
                }
                other => other,
            })?;
            readers.push((p.display().to_string(), r));
        }
        Ok(Source::with_cap(Cap::Merge(Box::new(merge::Merge::new(
            readers,
        )))))
    }

    /// Reads a pcap or pcapng capture (compressed or not) from any byte stream.
    pub fn from_reader(input: Box<dyn std::io::Read + Send>) -> Result<Source, CaptureError> {
        let reader = reader_from(input)?;
        Ok(Source::with_cap(Cap::File(Box::new(reader))))
    }

    fn with_cap(cap: Cap) -> Source {
        Source {
            cap,
            linktype: 0,
            count: 0,
            done: false,
            savefile: None,
            stop: None,
            deadline: None,
            drained: true,
        }
    }

    /// Opens an interface for live capture with a BPF filter, optionally writing a pcap file.
    pub fn open_live(opts: &LiveOptions) -> Result<Source, CaptureError> {
        let iface = opts.iface.clone();
        let classify = |e: pcap::Error| {
            let reason = pcap_reason(&e);
            let lower = reason.to_lowercase();
            if lower.contains("permission") || lower.contains("not permitted") {
                CaptureError::Permission {
                    iface: iface.clone(),
                    reason,
                }
            } else if lower.contains("no such device") || lower.contains("doesn't exist") {
                CaptureError::NoSuchInterface {
                    iface: iface.clone(),
                    available: interface_names(),
                }
            } else {
                CaptureError::Open { reason }
            }
        };
        let mut cap = Capture::from_device(opts.iface.as_str())
            .map_err(classify)?
            .promisc(opts.promisc)
            .snaplen(opts.snaplen)
            .buffer_size(opts.buffer_size)
            .timeout(if opts.immediate {
                LIVE_POLL.as_millis() as i32
            } else {
                // 0 would mean "wait until a block fills".
                i32::try_from(opts.latency.as_millis()).unwrap_or(i32::MAX).max(1)
            })
            .immediate_mode(opts.immediate)
            .precision(Precision::Nano)
            .open()
            .map_err(classify)?
            .setnonblock()
            .map_err(classify)?;
        cap.filter(&opts.filter, true)
            .map_err(|e| CaptureError::Filter {
                filter: opts.filter.clone(),
                reason: pcap_reason(&e),
            })?;
        let savefile = match &opts.write {
            Some(path) => Some(cap.savefile(path).map_err(|e| CaptureError::Write {
                path: path.display().to_string(),
                reason: pcap_reason(&e),
            })?),
            None => None,
        };
        let linktype = cap.get_datalink().0;
        Ok(Source {
            cap: Cap::Live(cap),
            linktype,
            count: 0,
            done: false,
            savefile,
            stop: None,
            deadline: None,
            drained: true,
        })
    }

    /// Ends a live capture when `flag` is set (checked at least every 100 ms).
    pub fn stop_when(&mut self, flag: Arc<AtomicBool>) {
        self.stop = Some(flag);
    }

    /// Ends a live capture after `d`.
    pub fn stop_after(&mut self, d: Duration) {
        self.deadline = Some(Instant::now() + d);
    }

    /// libpcap's counters, for live captures.
    pub fn live_stats(&mut self) -> Option<LiveStats> {
        let Cap::Live(cap) = &mut self.cap else {
            return None;
        };
        let s = cap.stats().ok()?;
        Some(LiveStats {
            received: s.received,
            dropped_by_kernel: s.dropped,
            dropped_by_interface: s.if_dropped,
        })
    }

    /// Flushes the `-w` file, if any.
    pub fn flush(&mut self) -> Result<(), CaptureError> {
        match &mut self.savefile {
            Some(f) => f.flush().map_err(|e| CaptureError::Write {
                path: "-w file".into(),
                reason: pcap_reason(&e),
            }),
            None => Ok(()),
        }
    }

    /// Link-layer type of the capture (LINKTYPE_* value): for a file, that of
    /// its first interface (each packet carries its own).
    pub fn linktype(&self) -> i32 {
        match &self.cap {
            Cap::Live(_) => self.linktype,
            _ => self.interfaces().first().map_or(0, |i| i.linktype),
        }
    }

    /// The (first) file's interfaces so far, over all pcapng sections: a
    /// packet's `interface` indexes this list; empty when live.
    pub fn interfaces(&self) -> &[Interface] {
        self.interfaces_of(0)
    }

    /// The interfaces of input `file` (see [`Source::open_files`]).
    pub fn interfaces_of(&self, file: usize) -> &[Interface] {
        match &self.cap {
            Cap::File(r) if file == 0 => r.interfaces(),
            Cap::Merge(m) => m.reader(file).map_or(&[], |r| r.interfaces()),
            _ => &[],
        }
    }

    /// Number of inputs: 1 for a file or a live capture, N when merging.
    pub fn inputs(&self) -> usize {
        match &self.cap {
            Cap::Merge(m) => m.len(),
            _ => 1,
        }
    }

    /// What the file readers skipped and counted, summed over the inputs;
    /// `None` when live.
    pub fn file_stats(&self) -> Option<FileStats> {
        match &self.cap {
            Cap::File(r) => Some(r.stats().clone()),
            Cap::Merge(m) => Some(m.stats()),
            Cap::Live(_) => None,
        }
    }

    /// Bytes read from the input files as stored (compressed or not), for
    /// progress against their sizes; 0 when live.
    pub fn bytes_read(&self) -> u64 {
        match &self.cap {
            Cap::File(r) => r.raw_bytes(),
            Cap::Merge(m) => m.raw_bytes(),
            Cap::Live(_) => 0,
        }
    }

    /// Number of packets returned so far.
    pub fn packets_read(&self) -> u64 {
        self.count
    }

    /// The next packet, `None` at the end. After an error, returns `None`. Live, it waits
    /// up to 100 ms for one, else returns [`CaptureError::Idle`].
    pub fn next_packet(&mut self) -> Option<Result<Packet<'_>, CaptureError>> {
        self.next_packet_within(LIVE_POLL)
    }

    /// As [`Source::next_packet`], waiting at most `wait` for a live packet (a file never
    /// waits). What libpcap holds is read back to back; [`CaptureError::Idle`] says there
    /// is nothing more for now.
    #[inline]
    pub fn next_packet_within(
        &mut self,
        wait: Duration,
    ) -> Option<Result<Packet<'_>, CaptureError>> {
        if self.done {
            return None;
        }
        // Files first, without the live path's setup.
        if matches!(self.cap, Cap::Live(_)) {
            return self.live_packet(wait);
        }
        let next = match &mut self.cap {
            Cap::File(r) => r.next_packet(),
            Cap::Merge(m) => m.next_packet(),
            Cap::Live(_) => None,
        };
        match &next {
            Some(Ok(_)) => self.count += 1,
            Some(Err(_)) | None => self.done = true,
        }
        next
    }

    /// [`Source::next_packet_within`] of a live capture.
    // time_t and suseconds_t are not i64 on every platform.
    #[allow(clippy::useless_conversion)]
    #[inline(never)]
    fn live_packet(&mut self, wait: Duration) -> Option<Result<Packet<'_>, CaptureError>> {
        let Source {
            cap,
            savefile,
            count,
            done,
            linktype,
            stop,
            deadline,
            drained,
        } = self;
        let Cap::Live(c) = cap else {
            return None;
        };
        let stopping = || {
            stop.as_ref().is_some_and(|f| f.load(Ordering::Relaxed))
                || deadline.is_some_and(|d| Instant::now() >= d)
        };
        if stopping() {
            *done = true;
            return None;
        }
        match live_next(c, *drained, wait) {
            Err(pcap::Error::TimeoutExpired) => {
                *drained = true;
                Some(Err(CaptureError::Idle))
            }
            Ok(p) => {
                *drained = false;
                if let Some(f) = savefile {
                    f.write(&p);
                }
                *count += 1;
                let ts_sec = i64::from(p.header.ts.tv_sec);
                // With Precision::Nano the "usec" field carries nanoseconds.
                let frac = i64::from(p.header.ts.tv_usec);
                let ts_nsec = u32::try_from(frac.clamp(0, 999_999_999)).unwrap_or(0);
                Some(Ok(Packet {
                    ts_sec,
                    ts_nsec,
                    linktype: *linktype,
                    caplen: p.header.caplen,
                    origlen: p.header.len,
                    data: p.data,
                    interface: 0,
                    file: 0,
                }))
            }
            Err(pcap::Error::NoMorePackets) => {
                *done = true;
                None
            }
            Err(e) => {
                *done = true;
                let packet = *count + 1;
                let reason = pcap_reason(&e);
                Some(Err(CaptureError::Read { packet, reason }))
            }
        }
    }
}

/// Opens a file (or `-`, standard input), decompressing it if need be.
fn open_reader(path: &std::path::Path) -> Result<file::FileReader, CaptureError> {
    let input: Box<dyn std::io::Read + Send> = if path == std::path::Path::new("-") {
        Box::new(std::io::stdin())
    } else {
        let f = std::fs::File::open(path).map_err(|e| CaptureError::Open {
            reason: format!("{}: {e}", path.display()),
        })?;
        Box::new(f)
    };
    reader_from(input)
}

fn reader_from(input: Box<dyn std::io::Read + Send>) -> Result<file::FileReader, CaptureError> {
    let input = compress::open(input).map_err(|e| CaptureError::Open {
        reason: e.to_string(),
    })?;
    let what = input.compression;
    let mut r = file::FileReader::new(input.reader).map_err(|e| match (e, what) {
        (CaptureError::Open { reason }, Some(c)) if !reason.contains(c.name()) => {
            CaptureError::Open {
                reason: format!("{reason} (after {} decompression)", c.name()),
            }
        }
        (e, _) => e,
    })?;
    r.set_origin(what, input.raw_bytes);
    Ok(r)
}

/// Names of the interfaces libpcap can capture on.
pub fn interface_names() -> Vec<String> {
    pcap::Device::list()
        .map(|l| l.into_iter().map(|d| d.name).collect())
        .unwrap_or_default()
}

fn pcap_reason(e: &pcap::Error) -> String {
    match e {
        pcap::Error::PcapError(s) => s.clone(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::writer::{PcapWriter, PcapngWriter, TsPrecision};
    use super::*;
    use std::io::Write;

    type Read = (i32, Vec<(i64, u32, u32, Vec<u8>)>, Option<CaptureError>);

    fn read_all(path: &std::path::Path) -> Read {
        let mut src = Source::open_file(path).unwrap();
        let lt = src.linktype();
        let mut pkts = Vec::new();
        let mut err = None;
        while let Some(r) = src.next_packet() {
            match r {
                Ok(p) => {
                    assert_eq!(p.linktype, lt);
                    assert_eq!(p.caplen as usize, p.data.len());
                    pkts.push((p.ts_ns(), p.caplen, p.origlen, p.data.to_vec()));
                }
                Err(e) => err = Some(e),
            }
        }
        (lt, pkts, err)
    }

    fn sample() -> Vec<(i64, Vec<u8>)> {
        vec![
            (1_700_000_000_123_456_789, vec![1, 2, 3, 4, 5]),
            (1_700_000_001_000_000_001, (0..=255).collect()),
            (1_700_000_002_999_999_999, vec![]),
        ]
    }

    #[test]
    fn pcap_roundtrip_ns_and_us() {
        for (prec, lt) in [(TsPrecision::Nano, 1u32), (TsPrecision::Micro, 276)] {
            let mut f = tempfile::NamedTempFile::new().unwrap();
            let mut w = PcapWriter::new(f.as_file_mut(), lt, prec, 65535).unwrap();
            for (ts, d) in sample() {
                w.write_packet(ts, &d).unwrap();
            }
            w.write_packet_truncated(5_000_000_000, &[9; 100], 10)
                .unwrap();
            w.into_inner();
            f.flush().unwrap();
            let (got_lt, pkts, err) = read_all(f.path());
            assert!(err.is_none(), "{err:?}");
            assert_eq!(got_lt, lt as i32);
            assert_eq!(pkts.len(), 4);
            for ((ts, d), (gts, caplen, origlen, gd)) in sample().iter().zip(&pkts) {
                let want_ts = match prec {
                    TsPrecision::Nano => *ts,
                    TsPrecision::Micro => ts - ts % 1000,
                };
                assert_eq!(*gts, want_ts);
                assert_eq!(*caplen as usize, d.len());
                assert_eq!(*origlen as usize, d.len());
                assert_eq!(gd, d);
            }
            assert_eq!(pkts[3].1, 10);
            assert_eq!(pkts[3].2, 100);
        }
    }

    #[test]
    fn pcapng_roundtrip_with_unknown_block() {
        let mut f = tempfile::NamedTempFile::new().unwrap();
        let mut w = PcapngWriter::new(f.as_file_mut()).unwrap();
        let ns = w.add_interface(1, 65535, TsPrecision::Nano).unwrap();
        let us = w.add_interface(1, 65535, TsPrecision::Micro).unwrap();
        let s = sample();
        w.write_packet(ns, s[0].0, &s[0].1).unwrap();
        w.write_custom_block(0x0000_0BAD, b"not a packet").unwrap();
        w.write_packet(us, s[1].0, &s[1].1).unwrap();
        w.write_packet_truncated(ns, s[2].0, &[7; 40], 3).unwrap();
        w.into_inner();
        f.flush().unwrap();
        let (lt, pkts, err) = read_all(f.path());
        assert!(err.is_none(), "{err:?}");
        assert_eq!(lt, 1);
        assert_eq!(pkts.len(), 3);
        assert_eq!(pkts[0].0, s[0].0);
        assert_eq!(pkts[0].3, s[0].1);
        assert_eq!(pkts[1].0, s[1].0 - s[1].0 % 1000);
        assert_eq!(pkts[1].3, s[1].1);
        assert_eq!((pkts[2].0, pkts[2].1, pkts[2].2), (s[2].0, 3, 40));
    }

    #[test]
    fn truncated_file_reports_packet_number() {
        let mut buf = Vec::new();
        let mut w = PcapWriter::new(&mut buf, 1, TsPrecision::Micro, 65535).unwrap();
        for i in 0..3 {
            w.write_packet(i * 1000, &[i as u8; 50]).unwrap();
        }
        w.into_inner();
        // Cut the third record's data short.
        buf.truncate(buf.len() - 20);
        let mut f = tempfile::NamedTempFile::new().unwrap();
        f.write_all(&buf).unwrap();
        f.flush().unwrap();
        let (_, pkts, err) = read_all(f.path());
        assert_eq!(pkts.len(), 2);
        match err {
            Some(CaptureError::Truncated { packet }) => assert_eq!(packet, 3),
            other => panic!("expected Truncated, got {other:?}"),
        }
    }

    #[test]
    fn truncated_pcapng_and_cut_record_header() {
        let mut ng = Vec::new();
        let mut w = PcapngWriter::new(&mut ng).unwrap();
        let i = w.add_interface(1, 65535, TsPrecision::Nano).unwrap();
        for k in 0..3 {
            w.write_packet(i, k * 1000, &[k as u8; 50]).unwrap();
        }
        w.into_inner();
        ng.truncate(ng.len() - 30);
        let mut classic = Vec::new();
        let mut w = PcapWriter::new(&mut classic, 1, TsPrecision::Nano, 65535).unwrap();
        for k in 0..3 {
            w.write_packet(k * 1000, &[k as u8; 50]).unwrap();
        }
        w.into_inner();
        // Leave only 6 bytes of the third record's 16-byte header.
        classic.truncate(24 + 2 * (16 + 50) + 6);
        for buf in [ng, classic] {
            let mut f = tempfile::NamedTempFile::new().unwrap();
            f.write_all(&buf).unwrap();
            f.flush().unwrap();
            let (_, pkts, err) = read_all(f.path());
            assert_eq!(pkts.len(), 2);
            assert!(
                matches!(err, Some(CaptureError::Truncated { packet: 3 })),
                "{err:?}"
            );
        }
    }

    #[test]
    fn open_errors() {
        let missing = Source::open_file("/nonexistent/dir/x.pcap").unwrap_err();
        assert!(matches!(missing, CaptureError::Open { .. }), "{missing:?}");
        let mut f = tempfile::NamedTempFile::new().unwrap();
        f.write_all(b"this is not a capture file at all").unwrap();
        f.flush().unwrap();
        let junk = Source::open_file(f.path()).unwrap_err();
        assert!(matches!(junk, CaptureError::Open { .. }), "{junk:?}");
        // One line, suitable for the CLI.
        assert!(!junk.to_string().contains('\n'));
    }
}
