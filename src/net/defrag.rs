//! IPv4 and IPv6 fragment reassembly for TCP, with bounded memory and a
//! timeout. Each datagram is put together in an etherparse `IpDefragBuf`;
//! the table around them (limits, ages, evictions) is ours, because
//! etherparse's pool has no bound.

use super::{Decoded, NetStats, TcpSegment, Vlan, common, decode_any};
use etherparse::defrag::IpDefragBuf;
use etherparse::{IpFragOffset, IpNumber, Ipv6ExtensionSlice, LaxIpv6Slice, LaxNetSlice, TcpSlice};
use rustc_hash::FxHashMap as HashMap;
use std::collections::BTreeMap;
use std::net::IpAddr;

/// Limits of the fragment table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DefragConfig {
    /// Datagrams being put together at once; the oldest is given up beyond.
    pub max_datagrams: usize,
    /// Bytes held over all datagrams (each holds up to its highest fragment
    /// end, at most 64 KiB); the oldest is given up beyond.
    pub max_bytes: usize,
    /// A datagram not completed this long after its first fragment is given
    /// up (Linux waits 30 s).
    pub timeout_ns: i64,
}

impl Default for DefragConfig {
    fn default() -> Self {
        DefragConfig {
            max_datagrams: 4096,
            max_bytes: 32 << 20,
            timeout_ns: 30_000_000_000,
        }
    }
}

/// Identity of a datagram: RFC 791 / 8200 fields, plus the VLAN.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct Key {
    src: IpAddr,
    dst: IpAddr,
    id: u32,
    vlan: Vlan,
}

/// One TCP-carrying fragment, borrowed from its packet.
#[derive(Debug, Clone, Copy)]
pub(super) struct Fragment<'a> {
    key: Key,
    offset: IpFragOffset,
    more: bool,
    payload: &'a [u8],
}

impl<'a> Fragment<'a> {
    pub(super) fn of(net: &LaxNetSlice<'a>, vlan: Vlan, payload: &'a [u8]) -> Option<Fragment<'a>> {
        match net {
            LaxNetSlice::Ipv4(v) => {
                let h = v.header();
                Some(Fragment {
                    key: Key {
                        src: h.source_addr().into(),
                        dst: h.destination_addr().into(),
                        id: u32::from(h.identification()),
                        vlan,
                    },
                    offset: h.fragments_offset(),
                    more: h.more_fragments(),
                    payload,
                })
            }
            LaxNetSlice::Ipv6(v) => {
                let (offset, more, id) = v6_fragment(v)?;
                let h = v.header();
                Some(Fragment {
                    key: Key {
                        src: h.source_addr().into(),
                        dst: h.destination_addr().into(),
                        id,
                        vlan,
                    },
                    offset: IpFragOffset::try_new(offset).ok()?,
                    more,
                    payload,
                })
            }
        }
    }
}

/// An IPv6 packet's fragment header: offset in 8-byte units, M flag and
/// identification, read from its bytes per RFC 8200 (etherparse 0.16 has
/// the bit positions of offset and M wrong, fixed in its 0.20).
pub(super) fn v6_fragment(v: &LaxIpv6Slice<'_>) -> Option<(u16, bool, u32)> {
    let frag = v.extensions().clone().into_iter().find_map(|e| match e {
        Ipv6ExtensionSlice::Fragment(f) => Some(f.slice()),
        _ => None,
    })?;
    let word = u16::from_be_bytes(frag.get(2..4)?.try_into().ok()?);
    let id = u32::from_be_bytes(frag.get(4..8)?.try_into().ok()?);
    Some((word >> 3, word & 1 == 1, id))
}

#[derive(Debug)]
struct Pending {
    buf: IpDefragBuf,
    first_ts: i64,
    /// Position in the age order.
    seq: u64,
    bytes: usize,
}

/// Decodes packets like [`super::decode`], and also puts fragmented TCP
/// datagrams back together: the segment of a completed datagram is returned
/// with the packet of its last fragment.
#[derive(Debug, Default)]
pub struct Decoder {
    cfg: DefragConfig,
    pub stats: NetStats,
    pending: HashMap<Key, Pending>,
    /// Keys by age (first fragment), oldest first.
    ages: BTreeMap<u64, Key>,
    seq: u64,
    held: usize,
    /// The last completed datagram (TCP header and payload).
    done: Vec<u8>,
}

impl Decoder {
    pub fn new(cfg: DefragConfig) -> Decoder {
        Decoder {
            cfg,
            ..Decoder::default()
        }
    }

    /// Bytes held for incomplete datagrams.
    pub fn held_bytes(&self) -> usize {
        self.held
    }

    /// Decodes one packet captured at `ts_ns`.
    #[inline]
    pub fn decode<'a>(
        &'a mut self,
        linktype: i32,
        data: &'a [u8],
        origlen: u32,
        ts_ns: i64,
    ) -> Option<TcpSegment<'a>> {
        if !self.ages.is_empty() {
            self.expire(ts_ns);
        }
        if let Some(seg) = common(linktype, data, &mut self.stats) {
            return Some(seg);
        }
        match decode_any(linktype, data, origlen, &mut self.stats) {
            Decoded::Segment(s) => Some(s),
            Decoded::Nothing => None,
            Decoded::Fragment(f) => {
                let key = f.key;
                if !self.add(f, ts_ns) {
                    return None;
                }
                self.segment(key)
            }
        }
    }

    /// Gives up on every incomplete datagram (end of capture), counting them.
    pub fn finish(&mut self) {
        self.stats.fragments_timed_out += self.pending.len() as u64;
        self.pending.clear();
        self.ages.clear();
        self.held = 0;
    }

    fn drop_key(&mut self, key: &Key) {
        if let Some(p) = self.pending.remove(key) {
            self.ages.remove(&p.seq);
            self.held -= p.bytes;
        }
    }

    fn expire(&mut self, now: i64) {
        while let Some((_, key)) = self.ages.first_key_value() {
            let key = *key;
            let old = self
                .pending
                .get(&key)
                .is_none_or(|p| now.saturating_sub(p.first_ts) > self.cfg.timeout_ns);
            if !old {
                break;
            }
            self.stats.fragments_timed_out += 1;
            self.drop_key(&key);
        }
    }

    /// Adds a fragment; true when its datagram is now complete (in `done`).
    fn add(&mut self, f: Fragment<'_>, ts_ns: i64) -> bool {
        if !self.pending.contains_key(&f.key) {
            while self.pending.len() >= self.cfg.max_datagrams.max(1) {
                if !self.evict_oldest() {
                    break;
                }
            }
            self.seq += 1;
            self.ages.insert(self.seq, f.key);
            self.pending.insert(
                f.key,
                Pending {
                    buf: IpDefragBuf::new(IpNumber::TCP, Vec::new(), Vec::new()),
                    first_ts: ts_ns,
                    seq: self.seq,
                    bytes: 0,
                },
            );
        }
        let Some(p) = self.pending.get_mut(&f.key) else {
            return false;
        };
        if p.buf.add(f.offset, f.more, f.payload).is_err() {
            // Misaligned, overlapping ends, or past 64 KiB: the datagram is lost.
            self.stats.fragments_bad += 1;
            self.drop_key(&f.key);
            return false;
        }
        let bytes = p.buf.data().len();
        let grew = bytes.saturating_sub(p.bytes);
        p.bytes = bytes;
        self.held += grew;
        if p.buf.is_complete() {
            let seq = p.seq;
            if let Some(p) = self.pending.remove(&f.key) {
                self.held -= p.bytes;
                self.ages.remove(&seq);
                let (data, _) = p.buf.take_bufs();
                self.done = data;
            }
            self.stats.fragments_reassembled += 1;
            return true;
        }
        while self.held > self.cfg.max_bytes {
            if !self.evict_oldest() {
                break;
            }
        }
        false
    }

    fn evict_oldest(&mut self) -> bool {
        let Some((_, key)) = self.ages.pop_first() else {
            return false;
        };
        if let Some(p) = self.pending.remove(&key) {
            self.held -= p.bytes;
        }
        self.stats.fragments_evicted += 1;
        true
    }

    /// The TCP segment of the datagram just completed.
    fn segment(&mut self, key: Key) -> Option<TcpSegment<'_>> {
        let Ok(tcp) = TcpSlice::from_slice(&self.done) else {
            self.stats.malformed += 1;
            return None;
        };
        self.stats.tcp += 1;
        let len = tcp.payload().len();
        Some(TcpSegment::of(&tcp, (key.src, key.dst), key.vlan, false, len))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]
mod tests {
    use super::*;
    use crate::net::linktype;
    use crate::synth::{Flags, Flow, Link, frag_v4, wrap_link};
    use proptest::prelude::*;

    const ACK: Flags = Flags {
        syn: false,
        ack: true,
        fin: false,
        rst: false,
    };

    fn v4_packet(payload: &[u8]) -> Vec<u8> {
        Flow::new(
            "10.0.0.1:40000".parse().unwrap(),
            "10.0.0.2:9092".parse().unwrap(),
        )
        .with_link(Link::Raw)
        .build(true, 1000, 2000, ACK, payload)
    }

    fn v6_packet(payload: &[u8]) -> Vec<u8> {
        Flow::new(
            "[2001:db8::1]:40000".parse().unwrap(),
            "[2001:db8::2]:9092".parse().unwrap(),
        )
        .with_link(Link::Raw)
        .build(true, 1000, 2000, ACK, payload)
    }

    /// Splits a raw IPv6 packet (no extension headers) with fragment headers.
    fn frag_v6(ip: &[u8], size: usize, id: u32) -> Vec<Vec<u8>> {
        let body = &ip[40..];
        let next = ip[6];
        body.chunks(size)
            .enumerate()
            .map(|(i, chunk)| {
                let mut p = ip[..40].to_vec();
                p[6] = 44;
                let plen = (8 + chunk.len()) as u16;
                p[4..6].copy_from_slice(&plen.to_be_bytes());
                let more = (i + 1) * size < body.len();
                let off = ((i * size / 8) as u16) << 3 | u16::from(more);
                p.extend_from_slice(&[next, 0]);
                p.extend_from_slice(&off.to_be_bytes());
                p.extend_from_slice(&id.to_be_bytes());
                p.extend_from_slice(chunk);
                p
            })
            .collect()
    }

    fn payload() -> Vec<u8> {
        (0..3000u32).map(|i| (i * 7) as u8).collect()
    }

    #[test]
    fn v4_and_v6_fragments_in_any_order() {
        for v6 in [false, true] {
            for order in [[0usize, 1, 2], [2, 0, 1], [1, 2, 0]] {
                let ip = if v6 {
                    v6_packet(&payload())
                } else {
                    v4_packet(&payload())
                };
                let frags = if v6 {
                    frag_v6(&ip, 1232, 7)
                } else {
                    frag_v4(&ip, 1480, 7)
                };
                assert_eq!(frags.len(), 3);
                let mut d = Decoder::new(DefragConfig::default());
                for (n, &i) in order.iter().enumerate() {
                    let f = &frags[i];
                    let seg = d.decode(linktype::RAW, f, f.len() as u32, n as i64);
                    if n < 2 {
                        assert!(seg.is_none());
                    } else {
                        let seg = seg.unwrap_or_else(|| panic!("v6 {v6} {order:?}"));
                        assert_eq!(seg.payload, &payload()[..]);
                        assert_eq!((seg.seq, seg.ack, seg.payload_len), (1000, 2000, 3000));
                        assert_eq!(seg.dst.port(), 9092);
                    }
                }
                assert_eq!(d.stats.ip_fragments, 3);
                assert_eq!(d.stats.fragments_reassembled, 1);
                assert_eq!(d.stats.tcp, 1);
                assert_eq!(d.held_bytes(), 0);
            }
        }
    }

    #[test]
    fn fragments_on_a_vlan_over_ethernet() {
        let ip = v4_packet(&payload());
        let mut d = Decoder::new(DefragConfig::default());
        let mut got = None;
        for f in frag_v4(&ip, 1480, 9) {
            let eth = wrap_link(Link::Vlan(5), true, true, &f);
            if let Some(seg) = d.decode(linktype::ETHERNET, &eth, eth.len() as u32, 0) {
                got = Some((seg.vlan, seg.payload.to_vec()));
            }
        }
        let (vlan, data) = got.unwrap();
        assert_eq!(vlan.outer, 5);
        assert_eq!(data, payload());
    }

    #[test]
    fn timeouts_memory_limits_and_bad_fragments_are_counted() {
        let ip = v4_packet(&payload());
        let frags = frag_v4(&ip, 1480, 1);
        // The rest arrives after the timeout.
        let mut d = Decoder::new(DefragConfig {
            timeout_ns: 1_000,
            ..DefragConfig::default()
        });
        assert!(d.decode(linktype::RAW, &frags[0], 9999, 0).is_none());
        assert!(d.held_bytes() > 0);
        assert!(d.decode(linktype::RAW, &frags[1], 9999, 5_000).is_none());
        assert!(d.decode(linktype::RAW, &frags[2], 9999, 5_001).is_none());
        assert_eq!(d.stats.fragments_timed_out, 1);
        assert_eq!(d.stats.fragments_reassembled, 0);
        d.finish();
        assert_eq!(d.stats.fragments_timed_out, 2);
        assert_eq!(d.held_bytes(), 0);
        // Three datagrams at once with room for two: the oldest goes.
        let mut d = Decoder::new(DefragConfig {
            max_datagrams: 2,
            ..DefragConfig::default()
        });
        for id in 1..=3 {
            let f = &frag_v4(&ip, 1480, id)[0];
            assert!(d.decode(linktype::RAW, f, f.len() as u32, 0).is_none());
        }
        assert_eq!(d.stats.fragments_evicted, 1);
        // A byte limit below one datagram's size.
        let mut d = Decoder::new(DefragConfig {
            max_bytes: 1000,
            ..DefragConfig::default()
        });
        let f = &frag_v4(&ip, 1480, 4)[1];
        assert!(d.decode(linktype::RAW, f, f.len() as u32, 0).is_none());
        assert_eq!(d.stats.fragments_evicted, 1);
        assert_eq!(d.held_bytes(), 0);
        // A middle fragment whose length is not a multiple of 8.
        let mut d = Decoder::new(DefragConfig::default());
        let bad = frag_v4(&ip, 1481, 5);
        let odd = &bad[0];
        assert!(d.decode(linktype::RAW, odd, odd.len() as u32, 0).is_none());
        assert_eq!(d.stats.fragments_bad, 1);
    }

    #[test]
    fn non_tcp_and_cut_fragments_are_not_held() {
        let ip = v4_packet(&payload());
        let mut udp = frag_v4(&ip, 1480, 3)[0].clone();
        udp[9] = 17;
        let mut d = Decoder::new(DefragConfig::default());
        assert!(d.decode(linktype::RAW, &udp, udp.len() as u32, 0).is_none());
        assert_eq!(d.stats.non_tcp, 1);
        let f = &frag_v4(&ip, 1480, 3)[0];
        assert!(
            d.decode(linktype::RAW, &f[..100], f.len() as u32, 0)
                .is_none()
        );
        assert_eq!(d.stats.truncated, 1);
        assert_eq!(d.held_bytes(), 0);
        // The stateless decoder only counts fragments.
        let mut st = NetStats::default();
        assert!(crate::net::decode(linktype::RAW, f, f.len() as u32, &mut st).is_none());
        assert_eq!(st.ip_fragments, 1);
    }

    proptest! {
        #[test]
        fn random_fragments_never_panic_and_stay_bounded(
            frags in prop::collection::vec((0u16..8192, any::<bool>(), 0usize..64, 0u16..4), 1..60),
        ) {
            let ip = v4_packet(&[1; 8]);
            let mut d = Decoder::new(DefragConfig { max_bytes: 100_000, ..DefragConfig::default() });
            for (i, (off, more, len, id)) in frags.into_iter().enumerate() {
                let mut p = ip[..20].to_vec();
                let total = (20 + len) as u16;
                p[2..4].copy_from_slice(&total.to_be_bytes());
                p[4..6].copy_from_slice(&id.to_be_bytes());
                let flags = off | if more { 0x2000 } else { 0 };
                p[6..8].copy_from_slice(&flags.to_be_bytes());
                p.extend(std::iter::repeat_n(0xAB, len));
                let _ = d.decode(linktype::RAW, &p, p.len() as u32, i as i64);
                prop_assert!(d.held_bytes() <= 100_000 + 65_535);
            }
        }
    }
}
