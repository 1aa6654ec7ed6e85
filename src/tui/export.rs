//! `w`: writes the packets of the shown messages to a pcap file, like
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
use crate::capture::writer::{PcapWriter, TsPrecision};
use crate::capture::{CaptureError, Source};
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
            let from = prev.insert((r.conn(), dir), r.frame).unwrap_or(0);
            if show {
                sel.messages += 1;
                sel.last = sel.last.max(r.frame);
                sel.ranges
                    .entry(dir)
                    .or_default()
                    .push((from.min(r.frame), r.frame));
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

/// Reads `source` from its start and writes the selected packets to `path`.
/// A partly written file is removed on error.
pub fn write(sel: &Selection, mut source: Source, path: &Path) -> Result<Written, String> {
    let file = File::create(path).map_err(|e| format!("cannot create {}: {e}", path.display()))?;
    let result = copy(sel, &mut source, BufWriter::new(file));
    if result.is_err() {
        let _ = std::fs::remove_file(path);
    }
    result.map(|packets| Written {
        packets,
        messages: sel.messages,
    })
}

fn copy(sel: &Selection, source: &mut Source, out: BufWriter<File>) -> Result<u64, String> {
    let mut cursors: HashMap<Dir, usize> = HashMap::new();
    let mut stats = NetStats::default();
    let mut writer: Option<(PcapWriter<BufWriter<File>>, i32)> = None;
    let mut out = Some(out);
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
        if writer.is_none() {
            let o = out.take().ok_or("internal: writer lost")?;
            let w = PcapWriter::new(o, p.linktype as u32, TsPrecision::Nano, 262_144)
                .map_err(|e| format!("writing: {e}"))?;
            writer = Some((w, p.linktype));
        }
        let Some((w, linktype)) = writer.as_mut() else {
            continue;
        };
        if *linktype != p.linktype {
            return Err(format!(
                "packet {number} has link type {}, the file {}: a pcap file holds one",
                p.linktype, linktype
            ));
        }
        w.write_captured(p.ts_ns(), p.data, p.origlen)
            .map_err(|e| format!("writing: {e}"))?;
        written += 1;
    }
    match writer {
        Some((w, _)) => w
            .into_inner()
            .flush()
            .map_err(|e| format!("writing: {e}"))?,
        None => return Err("none of the packets was found in the capture again".into()),
    }
    Ok(written)
}
