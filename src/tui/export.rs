//! `w`: writes the packets of the shown messages to a pcap (or pcapng) file, like
//! Wireshark's "Export Specified Packets" with the packets they depend on.
//!
//! The store keeps each message's completing packet, connection and
//! direction, not its packets. A message's bytes arrived in its direction of
//! its connection after the previous message there was completed (that packet
//! included, as it may carry this message's start): so the packets exported
//! are those of the message's direction numbered from the previous message's
//! packet to its own. The first message of a direction takes every earlier
//! packet of its 4-tuple (the handshake too). Those packets are read again
//! from the capture by number and written as they were captured.

use super::list::View;
use super::store::Store;
use crate::capture::writer::{PcapWriter, PcapngWriter, TsPrecision};
use crate::capture::{CaptureError, Packet, Source};
use crate::net::{self, NetStats};
use std::collections::HashMap;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::net::SocketAddr;
use std::path::Path;

/// Opens the capture again, from its start, numbering packets as the loader did.
pub type Reopen = dyn Fn() -> Result<Source, CaptureError> + Send + Sync;

type Dir = (SocketAddr, SocketAddr);

/// The packets to write: per direction, sorted and disjoint packet ranges.
#[derive(Debug, Default, Clone)]
pub struct Selection {
    ranges: HashMap<Dir, Vec<(u64, u64)>>,
    /// Messages the ranges cover.
    pub messages: usize,
    /// The last packet any range reaches: reading stops there.
    last: u64,
}

impl Selection {
    /// The packets of the messages `view` shows.
    pub fn of(store: &Store, view: &View) -> Selection {
        let n = store.len();
        let mut shown = vec![view.is_all(); n];
        if !view.is_all() {
            for pos in 0..view.len(store) {
                if let Some(s) = view.row_at(store, pos).and_then(|r| shown.get_mut(r)) {
                    *s = true;
                }
            }
        }
        let mut sel = Selection::default();
        // The packet that completed the previous message, per connection and direction.
        let mut prev: HashMap<(u32, Dir), u64> = HashMap::new();
        for (i, &show) in shown.iter().enumerate() {
            let Some(r) = store.row(i) else { continue };
            let Some(dir) = store.endpoints(r) else {
                continue;
            };
            let from = prev.insert((r.conn(), dir), r.packet).unwrap_or(0);
            if show {
                sel.messages += 1;
                sel.last = sel.last.max(r.packet);
                sel.ranges
                    .entry(dir)
                    .or_default()
                    .push((from.min(r.packet), r.packet));
            }
        }
        for v in sel.ranges.values_mut() {
            v.sort_unstable();
            let mut merged: Vec<(u64, u64)> = Vec::with_capacity(v.len());
            for &(lo, hi) in v.iter() {
                match merged.last_mut() {
                    Some(last) if lo <= last.1.saturating_add(1) => last.1 = last.1.max(hi),
                    _ => merged.push((lo, hi)),
                }
            }
            *v = merged;
        }
        sel
    }

    pub fn is_empty(&self) -> bool {
        self.messages == 0
    }
}

/// What an export wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Written {
    pub packets: u64,
    pub messages: usize,
}

/// Reads `source` from its start and writes the selected packets to `path`:
/// pcapng when the name ends in `.pcapng` (any link types), else pcap (one).
/// A partly written file is removed on error.
pub fn write(sel: &Selection, mut source: Source, path: &Path) -> Result<Written, String> {
    let file = File::create(path).map_err(|e| format!("cannot create {}: {e}", path.display()))?;
    let ng = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("pcapng"));
    let result = copy(sel, &mut source, Out::new(BufWriter::new(file), ng));
    if result.is_err() {
        let _ = std::fs::remove_file(path);
    }
    result.map(|packets| Written {
        packets,
        messages: sel.messages,
    })
}

type Sink = BufWriter<File>;

/// The file being written; its header waits for the first packet's link type.
enum Out {
    Start(Sink, bool),
    Pcap(PcapWriter<Sink>, i32),
    Pcapng(PcapngWriter<Sink>, HashMap<i32, u32>),
    Failed,
}

impl Out {
    fn new(sink: Sink, ng: bool) -> Out {
        Out::Start(sink, ng)
    }

    fn write(&mut self, number: u64, p: &Packet<'_>) -> Result<(), String> {
        let err = |e: std::io::Error| format!("writing: {e}");
        if let Out::Start(..) = self {
            let Out::Start(sink, ng) = std::mem::replace(self, Out::Failed) else {
                return Err("internal: writer lost".into());
            };
            *self = if ng {
                Out::Pcapng(PcapngWriter::new(sink).map_err(err)?, HashMap::new())
            } else {
                let w = PcapWriter::new(sink, p.linktype as u32, TsPrecision::Nano, SNAPLEN)
                    .map_err(err)?;
                Out::Pcap(w, p.linktype)
            };
        }
        match self {
            Out::Pcap(w, linktype) if *linktype == p.linktype => {
                w.write_captured(p.ts_ns(), p.data, p.origlen).map_err(err)
            }
            Out::Pcap(_, linktype) => Err(format!(
                "packet {number} has link type {}, the others {linktype}: a pcap file holds one; name a .pcapng file",
                p.linktype
            )),
            Out::Pcapng(w, ifaces) => {
                let iface = match ifaces.get(&p.linktype) {
                    Some(&i) => i,
                    None => {
                        let lt = u16::try_from(p.linktype)
                            .map_err(|_| format!("link type {} out of range", p.linktype))?;
                        let i = w
                            .add_interface(lt, SNAPLEN, TsPrecision::Nano)
                            .map_err(err)?;
                        ifaces.insert(p.linktype, i);
                        i
                    }
                };
                w.write_captured(iface, p.ts_ns(), p.data, p.origlen)
                    .map_err(err)
            }
            Out::Start(..) | Out::Failed => Err("internal: writer lost".into()),
        }
    }

    fn finish(self) -> Result<(), String> {
        let sink = match self {
            Out::Pcap(w, _) => w.into_inner(),
            Out::Pcapng(w, _) => w.into_inner(),
            Out::Start(..) | Out::Failed => {
                return Err("none of the packets was found in the capture again".into());
            }
        };
        let mut sink = sink;
        sink.flush().map_err(|e| format!("writing: {e}"))
    }
}

/// What the header advertises; packets are written as long as they were captured.
const SNAPLEN: u32 = 262_144;

fn copy(sel: &Selection, source: &mut Source, mut out: Out) -> Result<u64, String> {
    let mut cursors: HashMap<Dir, usize> = HashMap::new();
    let mut stats = NetStats::default();
    let mut number = 0u64;
    let mut written = 0u64;
    while number < sel.last {
        let p = match source.next_packet() {
            None => break,
            Some(Ok(p)) => p,
            Some(Err(CaptureError::Idle)) => continue,
            Some(Err(e)) => return Err(format!("reading the capture again: {e}")),
        };
        number += 1;
        let Some(seg) = net::decode(p.linktype, p.data, p.origlen, &mut stats) else {
            continue;
        };
        let dir = (seg.src, seg.dst);
        let Some(ranges) = sel.ranges.get(&dir) else {
            continue;
        };
        let at = cursors.entry(dir).or_insert(0);
        while ranges.get(*at).is_some_and(|&(_, hi)| hi < number) {
            *at += 1;
        }
        if ranges.get(*at).is_none_or(|&(lo, _)| lo > number) {
            continue;
        }
        out.write(number, &p)?;
        written += 1;
    }
    out.finish()?;
    Ok(written)
}
