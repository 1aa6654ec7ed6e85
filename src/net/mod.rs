//! Stage 2: link, IP and TCP header decoding (with etherparse) of one packet
//! into an optional TCP segment. Anything odd is counted, never fatal.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use etherparse::{
    EtherType, LaxNetSlice, LaxSlicedPacket, TcpSlice, TransportSlice,
    VlanSlice, err::packet::SliceError,
};
use std::net::{IpAddr, SocketAddr};

mod defrag;
pub use defrag::{Decoder, DefragConfig};

/// LINKTYPE_* values this stage understands.
pub mod linktype {
    /// BSD loopback: 4-byte address family in the capturing host's byte order.
    pub const NULL: i32 = 0;
    pub const ETHERNET: i32 = 1;
    /// DLT_RAW as numbered on some BSDs.
    pub const RAW_12: i32 = 12;
    /// DLT_RAW as numbered on OpenBSD.
    pub const RAW_14: i32 = 14;
    pub const RAW: i32 = 101;
    /// OpenBSD loopback: like NULL but the family is in network byte order.
    pub const LOOP: i32 = 108;
    pub const LINUX_SLL: i32 = 113;
    pub const IPV4: i32 = 228;
    pub const IPV6: i32 = 229;
    pub const LINUX_SLL2: i32 = 276;
}

/// 802.1Q VLAN ids of a frame: the outer tag, then the inner one (QinQ);
/// 0 where there is no tag (id 0 only ever marks priority, never a VLAN).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, PartialOrd, Ord)]
pub struct Vlan {
    pub outer: u16,
    pub inner: u16,
}

/// A TCP segment borrowed from the packet it was decoded from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TcpSegment<'a> {
    pub src: SocketAddr,
    pub dst: SocketAddr,
    /// VLAN tags: part of the connection's identity, so the same endpoints
    /// on two VLANs are two connections.
    pub vlan: Vlan,
    pub seq: u32,
    pub ack: u32,
    pub syn: bool,
    pub fin: bool,
    pub rst: bool,
    pub ack_flag: bool,
    /// The captured payload bytes.
    pub payload: &'a [u8],
    /// The snaplen (or a lying IP length) cut the payload: `payload` is
    /// shorter than the headers say.
    pub payload_truncated: bool,
    /// Payload length the IP header declares; equals `payload.len()` unless
    /// `payload_truncated`, so reassembly knows how many sequence numbers the
    /// segment really covers.
    pub payload_len: u32,
}

impl<'a> TcpSegment<'a> {
    /// The segment `tcp` holds, between these addresses; `payload_len` is what the IP
    /// header declares (more than the payload captured when `payload_truncated`).
    pub(crate) fn of(
        tcp: &TcpSlice<'a>,
        (src, dst): (IpAddr, IpAddr),
        vlan: Vlan,
        payload_truncated: bool,
        payload_len: usize,
    ) -> Self {
        TcpSegment {
            src: SocketAddr::new(src, tcp.source_port()),
            dst: SocketAddr::new(dst, tcp.destination_port()),
            vlan,
            seq: tcp.sequence_number(),
            ack: tcp.acknowledgment_number(),
            syn: tcp.syn(),
            fin: tcp.fin(),
            rst: tcp.rst(),
            ack_flag: tcp.ack(),
            payload: tcp.payload(),
            payload_truncated,
            payload_len: u32::try_from(payload_len).unwrap_or(u32::MAX),
        }
    }
}

/// Per-run counters. `packets` counts every call to `decode`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NetStats {
    pub packets: u64,
    pub tcp: u64,
    pub non_tcp: u64,
    /// Packets holding an IP fragment.
    pub ip_fragments: u64,
    /// Fragmented TCP datagrams put back together ([`Decoder`] only).
    pub fragments_reassembled: u64,
    /// Datagrams given up: not complete within the timeout or by the end.
    pub fragments_timed_out: u64,
    /// Datagrams given up to stay within the memory limits.
    pub fragments_evicted: u64,
    /// Datagrams given up on a fragment that does not fit (misaligned,
    /// conflicting end, past 64 KiB).
    pub fragments_bad: u64,
    pub unknown_linktype: u64,
    pub malformed: u64,
    /// Packets whose headers or TCP payload were cut by the snaplen (TCP
    /// segments with a cut payload are still returned, and counted here too).
    pub truncated: u64,
}

impl NetStats {
    /// Adds `other`'s counts to these.
    pub fn add(&mut self, other: &NetStats) {
        let NetStats {
            packets,
            tcp,
            non_tcp,
            ip_fragments,
            fragments_reassembled,
            fragments_timed_out,
            fragments_evicted,
            fragments_bad,
            unknown_linktype,
            malformed,
            truncated,
        } = other;
        self.packets += packets;
        self.tcp += tcp;
        self.non_tcp += non_tcp;
        self.ip_fragments += ip_fragments;
        self.fragments_reassembled += fragments_reassembled;
        self.fragments_timed_out += fragments_timed_out;
        self.fragments_evicted += fragments_evicted;
        self.fragments_bad += fragments_bad;
        self.unknown_linktype += unknown_linktype;
        self.malformed += malformed;
        self.truncated += truncated;
    }
}

const ETH_IPV4: u16 = 0x0800;
const ETH_IPV6: u16 = 0x86DD;

/// Decodes one packet. Returns `None` for anything that is not a usable TCP
/// segment; the reason is counted in `stats`. IP fragments are only counted
/// here: [`Decoder`] reassembles them.
pub fn decode<'a>(
    linktype: i32,
    data: &'a [u8],
    origlen: u32,
    stats: &mut NetStats,
) -> Option<TcpSegment<'a>> {
    match decode_any(linktype, data, origlen, stats) {
        Decoded::Segment(s) => Some(s),
        Decoded::Fragment(_) | Decoded::Nothing => None,
    }
}

/// What one packet holds, for the decoders.
enum Decoded<'a> {
    Segment(TcpSegment<'a>),
    Fragment(defrag::Fragment<'a>),
    Nothing,
}

fn decode_any<'a>(
    linktype: i32,
    data: &'a [u8],
    origlen: u32,
    stats: &mut NetStats,
) -> Decoded<'a> {
    match decode_inner(linktype, data, origlen, stats) {
        Some(d) => d,
        None => Decoded::Nothing,
    }
}

fn decode_inner<'a>(
    linktype: i32,
    data: &'a [u8],
    origlen: u32,
    stats: &mut NetStats,
) -> Option<Decoded<'a>> {
    if let Some(seg) = common(linktype, data, stats) {
        return Some(Decoded::Segment(seg));
    }
    stats.packets += 1;
    decode_lax(linktype, data, origlen, stats)
}

/// The common packet (see [`ipv4_tcp`]), counted; `None` (counting nothing) for any other.
// Inlined, so the segment is built where the caller keeps it, not copied out level by level.
#[inline(always)]
fn common<'a>(linktype: i32, data: &'a [u8], stats: &mut NetStats) -> Option<TcpSegment<'a>> {
    let seg = match linktype {
        // Ethernet II carrying IPv4 (the header has no FCS here).
        linktype::ETHERNET => match data.get(12..) {
            Some([0x08, 0x00, ip @ ..]) => ipv4_tcp(ip),
            _ => None,
        },
        linktype::RAW | linktype::RAW_12 | linktype::RAW_14 | linktype::IPV4 | linktype::IPV6 => {
            ipv4_tcp(data)
        }
        _ => None,
    }?;
    stats.packets += 1;
    stats.tcp += 1;
    Some(seg)
}

/// The common packet, a whole unfragmented IPv4 datagram holding a TCP segment, read
/// straight from its fixed fields (no option is looked at). `None` for anything else, which
/// [`decode_lax`] then decodes and counts; what this returns is what etherparse's strict
/// slices return for the same bytes (see the test `fast_path_agrees_with_etherparse`).
#[inline(always)]
fn ipv4_tcp(ip: &[u8]) -> Option<TcpSegment<'_>> {
    let head: [u8; 20] = ip.get(..20)?.try_into().ok()?;
    let [vihl, _, l0, l1, _, _, f0, f1, _, proto, _, _, s0, s1, s2, s3, d0, d1, d2, d3] = head;
    let hlen = usize::from(vihl & 0x0f) * 4;
    let total = usize::from(u16::from_be_bytes([l0, l1]));
    // Version 4; the header, then the datagram, fit; not a fragment (MF, offset); TCP.
    if vihl >> 4 != 4
        || hlen < 20
        || total < hlen
        || ip.len() < total
        || f0 & 0x3f != 0
        || f1 != 0
        || proto != 6
    {
        return None;
    }
    let tcp = ip.get(hlen..total)?;
    let th: [u8; 20] = tcp.get(..20)?.try_into().ok()?;
    let [p0, p1, q0, q1, n0, n1, n2, n3, a0, a1, a2, a3, off, flags, ..] = th;
    let thlen = usize::from(off & 0xf0) >> 2;
    if thlen < 20 {
        return None;
    }
    let payload = tcp.get(thlen..)?;
    let src = IpAddr::V4(std::net::Ipv4Addr::new(s0, s1, s2, s3));
    let dst = IpAddr::V4(std::net::Ipv4Addr::new(d0, d1, d2, d3));
    Some(TcpSegment {
        src: SocketAddr::new(src, u16::from_be_bytes([p0, p1])),
        dst: SocketAddr::new(dst, u16::from_be_bytes([q0, q1])),
        vlan: Vlan::default(),
        seq: u32::from_be_bytes([n0, n1, n2, n3]),
        ack: u32::from_be_bytes([a0, a1, a2, a3]),
        syn: flags & 0x02 != 0,
        fin: flags & 0x01 != 0,
        rst: flags & 0x04 != 0,
        ack_flag: flags & 0x10 != 0,
        payload,
        payload_truncated: false,
        payload_len: u32::try_from(payload.len()).unwrap_or(u32::MAX),
    })
}

/// Any packet, with etherparse's lax slicing: every link type, VLANs, IPv6, fragments, and
/// what is cut or malformed (counted).
fn decode_lax<'a>(
    linktype: i32,
    data: &'a [u8],
    origlen: u32,
    stats: &mut NetStats,
) -> Option<Decoded<'a>> {
    // Captured fewer bytes than were on the wire: length errors are the
    // snaplen's doing rather than a malformed packet.
    let cut = (data.len() as u64) < u64::from(origlen);
    let short = |stats: &mut NetStats| {
        if cut {
            stats.truncated += 1;
        } else {
            stats.malformed += 1;
        }
    };

    let sliced = match linktype {
        linktype::ETHERNET => match LaxSlicedPacket::from_ethernet(data) {
            Ok(p) => p,
            Err(_) => {
                short(stats);
                return None;
            }
        },
        linktype::LINUX_SLL | linktype::LINUX_SLL2 => {
            // SLL: 16-byte header, protocol at 14, ARPHRD type at 2.
            // SLL2: 20-byte header, protocol at 0, ARPHRD type at 8.
            let (proto_at, hatype_at, hdr_len) = if linktype == linktype::LINUX_SLL {
                (14, 2, 16)
            } else {
                (0, 8, 20)
            };
            let (Some(proto), Some(hatype), Some(rest)) = (
                be16(data, proto_at),
                be16(data, hatype_at),
                data.get(hdr_len..),
            ) else {
                short(stats);
                return None;
            };
            // Netlink captures carry a netlink family, and values below
            // 0x0600 are 802.2/802.3 markers: neither is an Ethertype.
            const ARPHRD_NETLINK: u16 = 824;
            if hatype == ARPHRD_NETLINK || proto < 0x0600 {
                stats.non_tcp += 1;
                return None;
            }
            LaxSlicedPacket::from_ether_type(EtherType(proto), rest)
        }
        linktype::NULL | linktype::LOOP => {
            let (Some(fam), Some(rest)) = (data.get(..4), data.get(4..)) else {
                short(stats);
                return None;
            };
            let fam: [u8; 4] = fam.try_into().ok()?;
            // NULL uses the writer's byte order, LOOP network order; values
            // are small, so whichever reading fits in 16 bits is right.
            let le = u32::from_le_bytes(fam);
            let family = if le <= 0xFFFF {
                le
            } else {
                u32::from_be_bytes(fam)
            };
            let ethertype = match family {
                2 => ETH_IPV4,
                // AF_INET6 differs: Linux 10, NetBSD/OpenBSD 24, FreeBSD 28, macOS 30.
                10 | 24 | 28 | 30 => ETH_IPV6,
                _ => {
                    stats.non_tcp += 1;
                    return None;
                }
            };
            LaxSlicedPacket::from_ether_type(EtherType(ethertype), rest)
        }
        linktype::RAW | linktype::RAW_12 | linktype::RAW_14 | linktype::IPV4 | linktype::IPV6 => {
            match LaxSlicedPacket::from_ip(data) {
                Ok(p) => p,
                Err(etherparse::err::ip::LaxHeaderSliceError::Len(_)) => {
                    short(stats);
                    return None;
                }
                Err(etherparse::err::ip::LaxHeaderSliceError::Content(_)) => {
                    stats.malformed += 1;
                    return None;
                }
            }
        }
        _ => {
            stats.unknown_linktype += 1;
            return None;
        }
    };

    let Some(net) = sliced.net.as_ref() else {
        match &sliced.stop_err {
            Some(_) => short(stats),
            // A non-IP Ethertype (ARP, LLDP, ...).
            None => stats.non_tcp += 1,
        }
        return None;
    };
    let ip_payload = match net {
        LaxNetSlice::Ipv4(v) => v.payload(),
        LaxNetSlice::Ipv6(v) => v.payload(),
    };
    let vlan = match &sliced.vlan {
        Some(VlanSlice::SingleVlan(v)) => Vlan {
            outer: v.vlan_identifier().value(),
            inner: 0,
        },
        Some(VlanSlice::DoubleVlan(v)) => Vlan {
            outer: v.outer().vlan_identifier().value(),
            inner: v.inner().vlan_identifier().value(),
        },
        None => Vlan::default(),
    };
    let fragmented = match net {
        LaxNetSlice::Ipv4(_) => ip_payload.fragmented,
        // Read the fragment header ourselves (see defrag::v6_fragment).
        LaxNetSlice::Ipv6(v) => {
            defrag::v6_fragment(v).is_some_and(|(off, more, _)| off != 0 || more)
        }
    };
    if fragmented {
        stats.ip_fragments += 1;
        if ip_payload.ip_number != etherparse::IpNumber::TCP {
            stats.non_tcp += 1;
            return None;
        }
        if ip_payload.incomplete {
            // A fragment cut by the snaplen (or lying) cannot be put back together.
            if cut {
                stats.truncated += 1;
            } else {
                stats.malformed += 1;
            }
            return None;
        }
        return defrag::Fragment::of(net, vlan, ip_payload.payload).map(Decoded::Fragment);
    }
    if let Some((err, _layer)) = &sliced.stop_err {
        match err {
            SliceError::Len(_) => short(stats),
            _ => stats.malformed += 1,
        }
        return None;
    }
    let Some(TransportSlice::Tcp(tcp)) = &sliced.transport else {
        stats.non_tcp += 1;
        return None;
    };

    let (src_ip, dst_ip, declared_ip_payload): (IpAddr, IpAddr, usize) = match net {
        LaxNetSlice::Ipv4(v) => {
            let h = v.header();
            let auth_len = v.extensions().auth.map_or(0, |a| a.slice().len());
            let declared = usize::from(h.total_len())
                .saturating_sub(h.slice().len())
                .saturating_sub(auth_len);
            (
                h.source_addr().into(),
                h.destination_addr().into(),
                declared,
            )
        }
        LaxNetSlice::Ipv6(v) => {
            let h = v.header();
            let declared =
                usize::from(h.payload_length()).saturating_sub(v.extensions().slice().len());
            (
                h.source_addr().into(),
                h.destination_addr().into(),
                declared,
            )
        }
    };
    let payload = tcp.payload();
    let (payload_truncated, payload_len) = if ip_payload.incomplete {
        if cut {
            stats.truncated += 1;
        } else {
            // Not the snaplen: the IP header claims more than the frame has.
            stats.malformed += 1;
        }
        let missing = declared_ip_payload.saturating_sub(ip_payload.payload.len());
        (true, payload.len().saturating_add(missing))
    } else {
        (false, payload.len())
    };

    stats.tcp += 1;
    Some(Decoded::Segment(TcpSegment::of(
        tcp,
        (src_ip, dst_ip),
        vlan,
        payload_truncated,
        payload_len,
    )))
}

fn be16(data: &[u8], at: usize) -> Option<u16> {
    let b = data.get(at..at.checked_add(2)?)?;
    Some(u16::from_be_bytes(b.try_into().ok()?))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]
mod tests {
    use super::*;
    use crate::synth::{Flags, Flow, Link, wrap_link};
    use proptest::prelude::*;

    const LINKS: [Link; 8] = [
        Link::Ethernet,
        Link::Vlan(42),
        Link::QinQ(100, 200),
        Link::LinuxSll,
        Link::LinuxSll2,
        Link::Raw,
        Link::Null,
        Link::Loop,
    ];

    fn v4() -> (SocketAddr, SocketAddr) {
        (
            "10.0.0.1:40000".parse().unwrap(),
            "10.0.0.2:9092".parse().unwrap(),
        )
    }

    fn v6() -> (SocketAddr, SocketAddr) {
        (
            "[2001:db8::1]:40000".parse().unwrap(),
            "[2001:db8::2]:9092".parse().unwrap(),
        )
    }

    fn data_flags() -> Flags {
        Flags {
            ack: true,
            ..Flags::default()
        }
    }

    fn decode_one(lt: i32, pkt: &[u8]) -> (Option<TcpSegment<'_>>, NetStats) {
        let mut st = NetStats::default();
        let seg = decode(lt, pkt, pkt.len() as u32, &mut st);
        (seg, st)
    }

    #[test]
    fn every_link_type_decodes() {
        for link in LINKS {
            for (c, s) in [v4(), v6()] {
                let flow = Flow::new(c, s).with_link(link);
                let pkt = flow.build(false, 77, 1234, data_flags(), b"hello kafka");
                let (seg, st) = decode_one(link.linktype(), &pkt);
                let seg = seg.unwrap_or_else(|| panic!("{link:?} {c}: {st:?}"));
                assert_eq!((seg.src, seg.dst), (s, c), "{link:?}");
                assert_eq!((seg.seq, seg.ack), (77, 1234));
                assert!(seg.ack_flag && !seg.syn && !seg.fin && !seg.rst);
                assert_eq!(seg.payload, b"hello kafka", "{link:?} {c}");
                assert!(!seg.payload_truncated);
                assert_eq!(seg.payload_len, 11);
                assert_eq!((st.packets, st.tcp), (1, 1));
            }
        }
    }

    #[test]
    fn vlan_tags_are_reported() {
        let (c, s) = v4();
        for (link, want) in [
            (Link::Ethernet, (0, 0)),
            (Link::Vlan(42), (42, 0)),
            (Link::QinQ(100, 200), (100, 200)),
        ] {
            let pkt = Flow::new(c, s)
                .with_link(link)
                .build(true, 1, 2, data_flags(), b"x");
            let seg = decode_one(link.linktype(), &pkt).0.unwrap();
            assert_eq!((seg.vlan.outer, seg.vlan.inner), want, "{link:?}");
        }
    }

    #[test]
    fn raw_ip_linktype_aliases() {
        for (lt, (c, s)) in [
            (linktype::RAW_12, v4()),
            (linktype::RAW_14, v6()),
            (linktype::IPV4, v4()),
            (linktype::IPV6, v6()),
        ] {
            let pkt = Flow::new(c, s)
                .with_link(Link::Raw)
                .build(true, 1, 2, data_flags(), b"x");
            let (seg, _) = decode_one(lt, &pkt);
            assert_eq!(seg.unwrap().src, c, "linktype {lt}");
        }
    }

    #[test]
    fn loopback_family_in_either_byte_order() {
        let (c, s) = v6();
        let ip = Flow::new(c, s)
            .with_link(Link::Raw)
            .build(true, 1, 2, data_flags(), b"x");
        for (lt, fam) in [
            (linktype::NULL, 10u32.to_be_bytes()),
            (linktype::NULL, 28u32.to_le_bytes()),
            (linktype::LOOP, 24u32.to_be_bytes()),
            (linktype::LOOP, 30u32.to_be_bytes()),
        ] {
            let mut pkt = fam.to_vec();
            pkt.extend_from_slice(&ip);
            assert!(decode_one(lt, &pkt).0.is_some(), "{lt} {fam:?}");
        }
        // An unknown family is simply not TCP.
        let mut pkt = 99u32.to_le_bytes().to_vec();
        pkt.extend_from_slice(&ip);
        let (seg, st) = decode_one(linktype::NULL, &pkt);
        assert!(seg.is_none());
        assert_eq!(st.non_tcp, 1);
    }

    #[test]
    fn flags_are_mapped() {
        let (c, s) = v4();
        let flow = Flow::new(c, s);
        for flags in [
            Flags {
                syn: true,
                ..Flags::default()
            },
            Flags {
                syn: true,
                ack: true,
                ..Flags::default()
            },
            Flags {
                fin: true,
                ack: true,
                ..Flags::default()
            },
            Flags {
                rst: true,
                ..Flags::default()
            },
        ] {
            let pkt = flow.build(true, 9, 8, flags, &[]);
            let seg = decode_one(1, &pkt).0.unwrap();
            assert_eq!(
                (seg.syn, seg.ack_flag, seg.fin, seg.rst),
                (flags.syn, flags.ack, flags.fin, flags.rst)
            );
            // The Ethernet minimum-size padding is not payload.
            assert!(seg.payload.is_empty());
        }
    }

    #[test]
    fn ipv6_extension_headers_are_skipped() {
        let (c, s) = v6();
        let mut ip =
            Flow::new(c, s)
                .with_link(Link::Raw)
                .build(true, 5, 6, data_flags(), b"payload");
        // Insert a hop-by-hop header (8 bytes, PadN) before TCP.
        ip[6] = 0; // next header: hop-by-hop
        let plen = u16::from_be_bytes([ip[4], ip[5]]) + 8;
        ip[4..6].copy_from_slice(&plen.to_be_bytes());
        ip.splice(40..40, [6u8, 0, 1, 4, 0, 0, 0, 0]);
        // And a destination-options header after it.
        ip[40] = 60;
        ip.splice(48..48, [6u8, 0, 1, 4, 0, 0, 0, 0]);
        let plen = plen + 8;
        ip[4..6].copy_from_slice(&plen.to_be_bytes());
        let seg = decode_one(linktype::RAW, &ip).0.unwrap();
        assert_eq!(seg.payload, b"payload");
        assert_eq!(seg.seq, 5);
    }

    #[test]
    fn fragments_are_counted_not_decoded() {
        let (c, s) = v4();
        let flow = Flow::new(c, s).with_link(Link::Raw);
        let ip = flow.build(true, 1, 1, data_flags(), b"fragmented?");
        // More-fragments flag, offset 0 (first fragment).
        let mut first = ip.clone();
        first[6] |= 0x20;
        // Offset 8 bytes, no more fragments (last fragment).
        let mut last = ip.clone();
        last[7] = 1;
        for pkt in [first, last] {
            let (seg, st) = decode_one(linktype::RAW, &pkt);
            assert!(seg.is_none());
            assert_eq!(st.ip_fragments, 1);
        }
        // IPv6 fragment header with the M flag.
        let (c, s) = v6();
        let mut ip = Flow::new(c, s)
            .with_link(Link::Raw)
            .build(true, 1, 1, data_flags(), b"frag6");
        ip[6] = 44;
        let plen = u16::from_be_bytes([ip[4], ip[5]]) + 8;
        ip[4..6].copy_from_slice(&plen.to_be_bytes());
        ip.splice(40..40, [6u8, 0, 0, 1, 0, 0, 0, 7]);
        let (seg, st) = decode_one(linktype::RAW, &ip);
        assert!(seg.is_none());
        assert_eq!(st.ip_fragments, 1);
    }

    #[test]
    fn non_tcp_is_counted() {
        let udp = {
            let b = etherparse::PacketBuilder::ethernet2([1; 6], [2; 6])
                .ipv4([1, 1, 1, 1], [2, 2, 2, 2], 64)
                .udp(53, 53);
            let mut v = Vec::new();
            b.write(&mut v, b"dns").unwrap();
            v
        };
        let mut arp = vec![0xff; 12];
        arp.extend_from_slice(&[0x08, 0x06]);
        arp.extend_from_slice(&[0; 28]);
        let mut st = NetStats::default();
        for pkt in [&udp, &arp] {
            assert!(decode(linktype::ETHERNET, pkt, pkt.len() as u32, &mut st).is_none());
        }
        assert_eq!((st.packets, st.non_tcp, st.malformed), (2, 2, 0));
    }

    #[test]
    fn snaplen_truncation() {
        let (c, s) = v4();
        let pkt = Flow::new(c, s).build(true, 100, 1, data_flags(), &[0xab; 200]);
        let full = pkt.len() as u32;
        // Cut inside the payload: still a segment, flagged, with its length.
        let mut st = NetStats::default();
        let seg = decode(1, &pkt[..64], full, &mut st).unwrap();
        assert!(seg.payload_truncated);
        assert_eq!(seg.payload.len(), 64 - 14 - 20 - 20);
        assert_eq!(seg.payload_len, 200);
        assert_eq!((st.tcp, st.truncated, st.malformed), (1, 1, 0));
        // Cut inside the TCP header, the IP header, the Ethernet header.
        for cut in [40, 20, 10] {
            let mut st = NetStats::default();
            assert!(decode(1, &pkt[..cut], full, &mut st).is_none());
            assert_eq!((st.truncated, st.malformed), (1, 0), "cut at {cut}");
        }
        // IPv6 too.
        let (c, s) = v6();
        let pkt =
            Flow::new(c, s)
                .with_link(Link::LinuxSll2)
                .build(true, 1, 1, data_flags(), &[1; 100]);
        let mut st = NetStats::default();
        let seg = decode(linktype::LINUX_SLL2, &pkt[..100], pkt.len() as u32, &mut st).unwrap();
        assert_eq!(seg.payload.len(), 100 - 20 - 40 - 20);
        assert_eq!(seg.payload_len, 100);
    }

    #[test]
    fn malformed_and_unknown() {
        let (c, s) = v4();
        let ip = Flow::new(c, s)
            .with_link(Link::Raw)
            .build(true, 1, 1, data_flags(), b"abc");
        // IP version 5.
        let mut bad = ip.clone();
        bad[0] = 0x55;
        let (seg, st) = decode_one(linktype::RAW, &bad);
        assert!(seg.is_none());
        assert_eq!(st.malformed, 1);
        // TCP data offset below the minimum.
        let mut bad = ip.clone();
        bad[20 + 12] = 0x20;
        let (seg, st) = decode_one(linktype::RAW, &bad);
        assert!(seg.is_none());
        assert_eq!(st.malformed, 1);
        // The IP length claims more than the full frame holds: a lie, not
        // the snaplen, so malformed, but the bytes present are kept.
        let mut bad = ip.clone();
        bad[2..4].copy_from_slice(&100u16.to_be_bytes());
        let (seg, st) = decode_one(linktype::RAW, &bad);
        let seg = seg.unwrap();
        assert!(seg.payload_truncated);
        assert_eq!(seg.payload, b"abc");
        assert_eq!(seg.payload_len, 60);
        assert_eq!((st.malformed, st.truncated), (1, 0));
        // Unknown link type; SLL carrying a non-Ethertype protocol.
        let (seg, st) = decode_one(147, &ip);
        assert!(seg.is_none());
        assert_eq!(st.unknown_linktype, 1);
        let mut sll = wrap_link(Link::LinuxSll, true, true, &ip);
        sll[14..16].copy_from_slice(&4u16.to_be_bytes());
        let (seg, st) = decode_one(linktype::LINUX_SLL, &sll);
        assert!(seg.is_none());
        assert_eq!(st.non_tcp, 1);
    }

    proptest! {
        #[test]
        fn never_panics(lt in prop::sample::select(vec![0, 1, 12, 14, 101, 108, 113, 228, 229, 276, 9999]),
                        data in prop::collection::vec(any::<u8>(), 0..200),
                        extra in 0u32..100) {
            let mut st = NetStats::default();
            let _ = decode(lt, &data, data.len() as u32 + extra, &mut st);
            prop_assert_eq!(st.packets, 1);
        }

        #[test]
        fn any_prefix_of_a_valid_packet_is_safe(cut in 0usize..120, v6 in any::<bool>(), link in 0usize..8) {
            let (c, s) = if v6 { super::tests::v6() } else { v4() };
            let link = LINKS[link];
            let pkt = Flow::new(c, s).with_link(link).build(true, 1, 1, data_flags(), &[3; 40]);
            let cut = cut.min(pkt.len());
            let mut st = NetStats::default();
            if let Some(seg) = decode(link.linktype(), &pkt[..cut], pkt.len() as u32, &mut st) {
                prop_assert_eq!(seg.payload_len, 40);
                prop_assert_eq!(seg.payload_truncated, seg.payload.len() < 40);
            }
        }

        /// The common-packet path takes only what the lax path decodes the same way.
        #[test]
        fn common_path_agrees_with_lax(v6 in any::<bool>(), link in 0usize..8,
                                       cut in 0usize..140, pad in 0usize..8,
                                       edits in prop::collection::vec((0usize..80, any::<u8>()), 0..3)) {
            let (c, s) = if v6 { super::tests::v6() } else { v4() };
            let link = LINKS[link];
            let mut pkt = Flow::new(c, s).with_link(link).build(true, 9, 7, data_flags(), &[5; 40]);
            // Ethernet padding, header bytes changed, the tail cut.
            pkt.extend(std::iter::repeat_n(0, pad));
            for (at, b) in edits {
                if let Some(x) = pkt.get_mut(at) {
                    *x = b;
                }
            }
            pkt.truncate(cut.max(1));
            let lt = link.linktype();
            let mut fast = NetStats::default();
            let mut lax = NetStats::default();
            lax.packets += 1;
            let want = match decode_lax(lt, &pkt, pkt.len() as u32 + 3, &mut lax) {
                Some(Decoded::Segment(s)) => Some(s),
                _ => None,
            };
            if let Some(got) = common(lt, &pkt, &mut fast) {
                prop_assert_eq!(Some(got), want);
                prop_assert_eq!(fast, lax);
            }
        }

        /// The hand-read fields are what etherparse's strict slices read, and the same
        /// packets are taken.
        #[test]
        fn fast_path_agrees_with_etherparse(cut in 0usize..140, pad in 0usize..8, opts in 0u8..3,
                                            edits in prop::collection::vec((0usize..60, any::<u8>()), 0..4)) {
            let (c, s) = v4();
            let mut pkt = Flow::new(c, s).with_link(Link::Raw).build(true, 9, 7, data_flags(), &[5; 40]);
            pkt.extend(std::iter::repeat_n(0, pad));
            if opts > 0 {
                // IP header options (IHL 6 or 7), so the TCP header moves.
                let n = usize::from(opts) * 4;
                pkt.splice(20..20, std::iter::repeat_n(1u8, n));
                pkt[0] = 0x45 + opts;
                let total = u16::from_be_bytes([pkt[2], pkt[3]]) + n as u16;
                pkt[2..4].copy_from_slice(&total.to_be_bytes());
            }
            for (at, b) in edits {
                if let Some(x) = pkt.get_mut(at) {
                    *x = b;
                }
            }
            pkt.truncate(cut.max(1));
            prop_assert_eq!(ipv4_tcp(&pkt), strict(&pkt));
        }
    }

    /// The common packet through etherparse's strict slices: what `ipv4_tcp` must match.
    fn strict(ip: &[u8]) -> Option<TcpSegment<'_>> {
        let ip = etherparse::Ipv4Slice::from_slice(ip).ok()?;
        let h = ip.header();
        if h.is_fragmenting_payload() || h.protocol() != etherparse::IpNumber::TCP {
            return None;
        }
        let tcp = TcpSlice::from_slice(ip.payload().payload).ok()?;
        let addrs = (h.source_addr().into(), h.destination_addr().into());
        Some(TcpSegment::of(&tcp, addrs, Vlan::default(), false, tcp.payload().len()))
    }

    #[test]
    fn fast_path_reads_every_flag() {
        let (c, s) = v4();
        for bits in 0u8..=0xff {
            let mut pkt = Flow::new(c, s).with_link(Link::Raw).build(true, 9, 7, data_flags(), b"x");
            pkt[20 + 13] = bits;
            assert_eq!(ipv4_tcp(&pkt), strict(&pkt), "{bits:#x}");
        }
    }
}
