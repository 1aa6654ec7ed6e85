//! The frames a hunt passed over that end where it found its footing: kept
//! as tentative (see `pairing`), as an answer may still confirm them.

use super::{CHAIN, CORR_STEP, VERSION_SLACK, request_start};
use crate::kafka::framer::{Limits, Mark};
use crate::kafka::pairing::Tentative;
use crate::proto::{Kind, peek_size};
use crate::tcp::ConnId;
use std::collections::{HashMap, HashSet, VecDeque};
use std::net::SocketAddr;

/// The frames passed over in `rest` that end exactly at one of `ends` (where
/// a confirmed frame begins, or a cut one, or the data ends), and those ending
/// where one of them begins, and so on: in stream order, at most the
/// per-direction limit of bytes. They may overlap; an answer decides.
pub(super) fn tentatives(
    rest: &[u8],
    ends: &[usize],
    rest_start: u64,
    marks: &VecDeque<Mark>,
    me: (ConnId, SocketAddr, SocketAddr, Kind),
    limits: Limits,
) -> Vec<Tentative> {
    let Some(&last) = ends.iter().max() else {
        return Vec::new();
    };
    let Some(before) = rest.get(..last) else {
        return Vec::new();
    };
    let (kind, max) = (me.3, limits.max_frame);
    // The plausible frames ending at each offset. Several may: a true frame, and
    // a payload's size field reaching to the same place from further back.
    let mut starts: HashMap<usize, Vec<usize>> = HashMap::new();
    for o in 0..before.len() {
        let s = before.get(o..).unwrap_or_default();
        let Some(size) = peek_size(s).and_then(|n| usize::try_from(n).ok()) else {
            continue;
        };
        let end = o + 4 + size;
        if end > last || !plausible(kind, s, max) {
            continue;
        }
        starts.entry(end).or_default().push(o);
    }
    // Every frame on a chain back from an end, breadth first, a bounded number.
    let mut found: Vec<(usize, usize)> = Vec::new();
    let mut todo: VecDeque<usize> = ends.iter().copied().collect();
    let mut seen: HashSet<usize> = HashSet::new();
    while let Some(end) = todo.pop_front() {
        if found.len() >= 4 * CHAIN || !seen.insert(end) {
            continue;
        }
        for &o in starts.get(&end).map(Vec::as_slice).unwrap_or_default() {
            found.push((o, end));
            todo.push_back(o);
        }
    }
    found.sort_unstable();
    found.dedup();
    let mut held = 0usize;
    let mut out = Vec::new();
    for (o, end) in found {
        held += end - o;
        if held > limits.max_buffered {
            break;
        }
        let Some(w) = before.get(o..end) else { continue };
        let stream_end = rest_start + end as u64;
        let Some(mark) = marks.iter().find(|m| m.end >= stream_end) else {
            continue;
        };
        let at = match kind {
            Kind::Request => 8,
            Kind::Response => 4,
        };
        let Some(correlation_id) = w
            .get(at..at + 4)
            .and_then(|c| c.try_into().ok())
            .map(i32::from_be_bytes)
        else {
            continue;
        };
        out.push(Tentative {
            conn: me.0,
            src: me.1,
            dst: me.2,
            correlation_id,
            data: w.to_vec(),
            packet: mark.frame,
            ts_ns: mark.ts_ns,
            stream_end,
            warnings: Vec::new(),
            seq: 0,
            sure: false,
        });
    }
    out
}

/// Whether a frame of this kind may start at the front of `s`.
fn plausible(kind: Kind, s: &[u8], max_frame: u32) -> bool {
    match kind {
        Kind::Request => request_start(s, max_frame, VERSION_SLACK) == Some(true),
        Kind::Response => peek_size(s).is_some_and(|n| n >= 4 && n as u32 <= max_frame),
    }
}

/// Marks `sure` the answers passed over that lie, one after another, between
/// the last answer framed (correlation id `before`) and the one taken at stream
/// offset `end` (`after`): each ends where the next begins, the last exactly at
/// `end`, and their correlation ids count up from `before` to `after` as one
/// conversation's do. Their requests were lost; they are printed unpaired.
pub(super) fn between(found: &mut [Tentative], end: u64, before: Option<i32>, after: Option<i32>) {
    let (Some(before), Some(mut after)) = (before, after) else {
        return;
    };
    let step = |a: i32, b: i32| (1..=CORR_STEP).contains(&b.wrapping_sub(a));
    let mut end = end;
    loop {
        let start = |t: &Tentative| t.stream_end - t.data.len() as u64;
        // The one ending here that carries on the count (the latest start: the nearest frame).
        let Some(t) = found
            .iter_mut()
            .filter(|t| t.stream_end == end)
            .filter(|t| step(before, t.correlation_id) && step(t.correlation_id, after))
            .max_by_key(|t| start(t))
        else {
            return;
        };
        t.sure = true;
        after = t.correlation_id;
        end = start(t);
    }
}
