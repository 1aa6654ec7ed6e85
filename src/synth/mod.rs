//! Synthetic TCP conversations for tests and fixtures: a client/server `Flow`
//! that tracks sequence and acknowledgement numbers and records packets,
//! which can then be reordered, duplicated or dropped before being written.
//! Test tooling, not wire-facing: it panics on misuse (bad packet index,
//! mixed IP versions, payloads too large for one IP packet).

pub mod corpus;
pub mod kafka;

use crate::capture::writer::PcapWriter;
use crate::net::linktype;
use etherparse::PacketBuilder;
use std::io::{self, Write};
use std::net::{IpAddr, SocketAddr};

/// The link layer the packets are wrapped in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Link {
    Ethernet,
    /// Ethernet with one 802.1Q tag.
    Vlan(u16),
    /// Ethernet with an 802.1ad outer tag and an 802.1Q inner tag.
    QinQ(u16, u16),
    LinuxSll,
    LinuxSll2,
    /// Bare IP (LINKTYPE_RAW).
    Raw,
    /// BSD loopback, family in little-endian (a typical x86 capture).
    Null,
    /// OpenBSD loopback, family in network byte order.
    Loop,
}

impl Link {
    pub fn linktype(self) -> i32 {
        match self {
            Link::Ethernet | Link::Vlan(_) | Link::QinQ(..) => linktype::ETHERNET,
            Link::LinuxSll => linktype::LINUX_SLL,
            Link::LinuxSll2 => linktype::LINUX_SLL2,
            Link::Raw => linktype::RAW,
            Link::Null => linktype::NULL,
            Link::Loop => linktype::LOOP,
        }
    }
}

/// TCP flags of a hand-made segment.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Flags {
    pub syn: bool,
    pub ack: bool,
    pub fin: bool,
    pub rst: bool,
}

/// One client/server conversation being recorded.
#[derive(Debug, Clone)]
pub struct Flow {
    link: Link,
    client: SocketAddr,
    server: SocketAddr,
    /// Next sequence number each side will send.
    client_seq: u32,
    server_seq: u32,
    /// Largest payload per segment; longer sends are split.
    mss: usize,
    ts_ns: i64,
    step_ns: i64,
    packets: Vec<(i64, Vec<u8>)>,
}

impl Flow {
    /// A flow over Ethernet with ISNs 1000 (client) and 5000 (server),
    /// starting at t = 1 s and advancing 1 ms per packet.
    pub fn new(client: SocketAddr, server: SocketAddr) -> Flow {
        assert_eq!(
            client.is_ipv4(),
            server.is_ipv4(),
            "client and server must use the same IP version"
        );
        Flow {
            link: Link::Ethernet,
            client,
            server,
            client_seq: 1000,
            server_seq: 5000,
            mss: 1460,
            ts_ns: 1_000_000_000,
            step_ns: 1_000_000,
            packets: Vec::new(),
        }
    }

    pub fn with_link(mut self, link: Link) -> Flow {
        self.link = link;
        self
    }

    /// Initial sequence numbers (the SYNs use these; data starts one later
    /// if `syn_handshake` is called).
    pub fn with_isn(mut self, client: u32, server: u32) -> Flow {
        self.client_seq = client;
        self.server_seq = server;
        self
    }

    pub fn with_mss(mut self, mss: usize) -> Flow {
        self.mss = mss.max(1);
        self
    }

    pub fn with_start(mut self, ts_ns: i64, step_ns: i64) -> Flow {
        self.ts_ns = ts_ns;
        self.step_ns = step_ns;
        self
    }

    pub fn link(&self) -> Link {
        self.link
    }

    pub fn client(&self) -> SocketAddr {
        self.client
    }

    pub fn server(&self) -> SocketAddr {
        self.server
    }

    /// Next sequence number of the client and of the server.
    pub fn next_seqs(&self) -> (u32, u32) {
        (self.client_seq, self.server_seq)
    }

    /// SYN, SYN-ACK, ACK.
    pub fn syn_handshake(&mut self) -> &mut Flow {
        let syn = Flags {
            syn: true,
            ..Flags::default()
        };
        self.push_raw(true, self.client_seq, 0, syn, &[]);
        self.client_seq = self.client_seq.wrapping_add(1);
        let syn_ack = Flags {
            syn: true,
            ack: true,
            ..Flags::default()
        };
        self.push_raw(false, self.server_seq, self.client_seq, syn_ack, &[]);
        self.server_seq = self.server_seq.wrapping_add(1);
        self.push_raw(true, self.client_seq, self.server_seq, ack_only(), &[]);
        self
    }

    pub fn client_send(&mut self, bytes: &[u8]) -> &mut Flow {
        self.send(true, bytes)
    }

    pub fn server_send(&mut self, bytes: &[u8]) -> &mut Flow {
        self.send(false, bytes)
    }

    fn send(&mut self, from_client: bool, bytes: &[u8]) -> &mut Flow {
        for chunk in bytes.chunks(self.mss) {
            let (seq, ack) = self.seq_ack(from_client);
            self.push_raw(from_client, seq, ack, ack_only(), chunk);
            let n = chunk.len() as u32;
            if from_client {
                self.client_seq = self.client_seq.wrapping_add(n);
            } else {
                self.server_seq = self.server_seq.wrapping_add(n);
            }
        }
        self
    }

    /// Orderly close: client FIN, server FIN-ACK, client ACK.
    pub fn fin(&mut self) -> &mut Flow {
        let fin = Flags {
            fin: true,
            ack: true,
            ..Flags::default()
        };
        let (seq, ack) = self.seq_ack(true);
        self.push_raw(true, seq, ack, fin, &[]);
        self.client_seq = self.client_seq.wrapping_add(1);
        let (seq, ack) = self.seq_ack(false);
        self.push_raw(false, seq, ack, fin, &[]);
        self.server_seq = self.server_seq.wrapping_add(1);
        let (seq, ack) = self.seq_ack(true);
        self.push_raw(true, seq, ack, ack_only(), &[]);
        self
    }

    /// A reset from one side.
    pub fn rst(&mut self, from_client: bool) -> &mut Flow {
        let (seq, ack) = self.seq_ack(from_client);
        let rst = Flags {
            rst: true,
            ..Flags::default()
        };
        self.push_raw(from_client, seq, ack, rst, &[]);
        self
    }

    fn seq_ack(&self, from_client: bool) -> (u32, u32) {
        if from_client {
            (self.client_seq, self.server_seq)
        } else {
            (self.server_seq, self.client_seq)
        }
    }

    /// Records a hand-made segment without touching the sequence state
    /// (retransmissions with other bytes, odd flags, ...).
    pub fn push_raw(
        &mut self,
        from_client: bool,
        seq: u32,
        ack: u32,
        flags: Flags,
        payload: &[u8],
    ) -> &mut Flow {
        let pkt = self.build(from_client, seq, ack, flags, payload);
        self.packets.push((self.ts_ns, pkt));
        self.ts_ns += self.step_ns;
        self
    }

    /// Builds one packet, link layer included.
    pub fn build(
        &self,
        from_client: bool,
        seq: u32,
        ack: u32,
        flags: Flags,
        payload: &[u8],
    ) -> Vec<u8> {
        let (src, dst) = if from_client {
            (self.client, self.server)
        } else {
            (self.server, self.client)
        };
        let ip_builder = match (src.ip(), dst.ip()) {
            (IpAddr::V4(s), IpAddr::V4(d)) => PacketBuilder::ipv4(s.octets(), d.octets(), 64),
            (IpAddr::V6(s), IpAddr::V6(d)) => PacketBuilder::ipv6(s.octets(), d.octets(), 64),
            _ => unreachable!("checked in Flow::new"),
        };
        let mut b = ip_builder.tcp(src.port(), dst.port(), seq, 65535);
        if flags.ack {
            b = b.ack(ack);
        }
        if flags.syn {
            b = b.syn();
        }
        if flags.fin {
            b = b.fin();
        }
        if flags.rst {
            b = b.rst();
        }
        let mut ip = Vec::with_capacity(b.size(payload.len()));
        b.write(&mut ip, payload)
            .expect("etherparse can build any segment we ask for");
        wrap_link(self.link, src.is_ipv4(), from_client, &ip)
    }

    pub fn packets(&self) -> &[(i64, Vec<u8>)] {
        &self.packets
    }

    pub fn len(&self) -> usize {
        self.packets.len()
    }

    pub fn is_empty(&self) -> bool {
        self.packets.is_empty()
    }

    /// Swaps the contents of two recorded packets, keeping the time slots.
    pub fn swap(&mut self, i: usize, j: usize) -> &mut Flow {
        let a = std::mem::take(&mut self.packets[i].1);
        let b = std::mem::replace(&mut self.packets[j].1, a);
        self.packets[i].1 = b;
        self
    }

    /// Inserts a copy of packet `i` right after it.
    pub fn duplicate(&mut self, i: usize) -> &mut Flow {
        let (ts, data) = self.packets[i].clone();
        self.packets.insert(i + 1, (ts + 1, data));
        self
    }

    /// Appends a copy of packet `i` at the end (a late retransmission).
    pub fn retransmit(&mut self, i: usize) -> &mut Flow {
        let data = self.packets[i].1.clone();
        self.packets.push((self.ts_ns, data));
        self.ts_ns += self.step_ns;
        self
    }

    /// Removes packet `i` (lost before the capture point).
    pub fn drop_packet(&mut self, i: usize) -> &mut Flow {
        self.packets.remove(i);
        self
    }

    /// Takes the packets recorded so far, so a long run can stream them out.
    pub fn drain_packets(&mut self) -> Vec<(i64, Vec<u8>)> {
        std::mem::take(&mut self.packets)
    }

    pub fn into_packets(self) -> Vec<(i64, Vec<u8>)> {
        self.packets
    }

    /// Writes all packets to a pcap writer (whose linktype must match).
    pub fn write_pcap<W: Write>(&self, w: &mut PcapWriter<W>) -> io::Result<()> {
        for (ts, data) in &self.packets {
            w.write_packet(*ts, data)?;
        }
        Ok(())
    }
}

fn ack_only() -> Flags {
    Flags {
        ack: true,
        ..Flags::default()
    }
}

const CLIENT_MAC: [u8; 6] = [0x02, 0, 0, 0, 0, 0x01];
const SERVER_MAC: [u8; 6] = [0x02, 0, 0, 0, 0, 0x02];

/// Splits a raw IPv4 packet into fragments of `size` payload bytes (a multiple of 8), as
/// a sender would: each keeps the header, with its length, `id` and offset/more-fragments set.
pub fn frag_v4(ip: &[u8], size: usize, id: u16) -> Vec<Vec<u8>> {
    let hl = usize::from(ip.first().map_or(0, |b| b & 0x0f)) * 4;
    let (Some(head), Some(body)) = (ip.get(..hl), ip.get(hl..)) else {
        return Vec::new();
    };
    if hl < 20 || size == 0 {
        return Vec::new();
    }
    body.chunks(size)
        .enumerate()
        .map(|(i, chunk)| {
            let mut p = head.to_vec();
            let off = (i * size / 8) as u16;
            let more = (i + 1) * size < body.len();
            let total = (hl + chunk.len()) as u16;
            let flags = off | if more { 0x2000 } else { 0 };
            p.splice(2..4, total.to_be_bytes());
            p.splice(4..6, id.to_be_bytes());
            p.splice(6..8, flags.to_be_bytes());
            p.extend_from_slice(chunk);
            p
        })
        .collect()
}

/// Prepends the link-layer header for `link` to an IP packet.
pub fn wrap_link(link: Link, ipv4: bool, from_client: bool, ip: &[u8]) -> Vec<u8> {
    let ethertype: u16 = if ipv4 { 0x0800 } else { 0x86DD };
    let (src_mac, dst_mac) = if from_client {
        (CLIENT_MAC, SERVER_MAC)
    } else {
        (SERVER_MAC, CLIENT_MAC)
    };
    let mut out = Vec::with_capacity(ip.len() + 24);
    match link {
        Link::Ethernet | Link::Vlan(_) | Link::QinQ(..) => {
            out.extend_from_slice(&dst_mac);
            out.extend_from_slice(&src_mac);
            match link {
                Link::Vlan(id) => {
                    out.extend_from_slice(&0x8100u16.to_be_bytes());
                    out.extend_from_slice(&(id & 0x0fff).to_be_bytes());
                }
                Link::QinQ(outer, inner) => {
                    out.extend_from_slice(&0x88a8u16.to_be_bytes());
                    out.extend_from_slice(&(outer & 0x0fff).to_be_bytes());
                    out.extend_from_slice(&0x8100u16.to_be_bytes());
                    out.extend_from_slice(&(inner & 0x0fff).to_be_bytes());
                }
                _ => {}
            }
            out.extend_from_slice(&ethertype.to_be_bytes());
            out.extend_from_slice(ip);
            // Short frames are padded to the Ethernet minimum, as on the wire.
            if out.len() < 60 {
                out.resize(60, 0);
            }
        }
        Link::LinuxSll => {
            let pkttype: u16 = if from_client { 4 } else { 0 }; // outgoing / to us
            out.extend_from_slice(&pkttype.to_be_bytes());
            out.extend_from_slice(&1u16.to_be_bytes()); // ARPHRD_ETHER
            out.extend_from_slice(&6u16.to_be_bytes());
            out.extend_from_slice(&src_mac);
            out.extend_from_slice(&[0, 0]);
            out.extend_from_slice(&ethertype.to_be_bytes());
            out.extend_from_slice(ip);
        }
        Link::LinuxSll2 => {
            out.extend_from_slice(&ethertype.to_be_bytes());
            out.extend_from_slice(&[0, 0]); // reserved
            out.extend_from_slice(&2u32.to_be_bytes()); // interface index
            out.extend_from_slice(&1u16.to_be_bytes()); // ARPHRD_ETHER
            out.push(if from_client { 4 } else { 0 });
            out.push(6);
            out.extend_from_slice(&src_mac);
            out.extend_from_slice(&[0, 0]);
            out.extend_from_slice(ip);
        }
        Link::Raw => out.extend_from_slice(ip),
        Link::Null => {
            let family: u32 = if ipv4 { 2 } else { 30 };
            out.extend_from_slice(&family.to_le_bytes());
            out.extend_from_slice(ip);
        }
        Link::Loop => {
            let family: u32 = if ipv4 { 2 } else { 24 };
            out.extend_from_slice(&family.to_be_bytes());
            out.extend_from_slice(ip);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capture::Source;
    use crate::capture::writer::{PcapngWriter, TsPrecision};
    use crate::net::{self, NetStats};
    use crate::tcp::{CloseReason, Dir, Reassembler, StreamEvent, TcpConfig};

    /// Reads a capture file through every stage and returns the two
    /// directions of connection 0 and the close reasons.
    fn pipeline(path: &std::path::Path) -> (Vec<u8>, Vec<u8>, Vec<CloseReason>) {
        let mut src = Source::open_file(path).unwrap();
        let mut stats = NetStats::default();
        let mut r = Reassembler::new(TcpConfig::default());
        let (mut ab, mut ba, mut closes) = (Vec::new(), Vec::new(), Vec::new());
        let mut sink = |e: StreamEvent<'_>| match e {
            StreamEvent::Data {
                dir: Dir::AtoB,
                data,
                ..
            } => ab.extend_from_slice(data),
            StreamEvent::Data {
                dir: Dir::BtoA,
                data,
                ..
            } => ba.extend_from_slice(data),
            StreamEvent::Closed { reason, .. } => closes.push(reason),
            _ => {}
        };
        let mut frame = 0;
        while let Some(p) = src.next_packet() {
            let p = p.unwrap();
            frame += 1;
            if let Some(seg) = net::decode(p.linktype, p.data, p.origlen, &mut stats) {
                r.push(frame, p.ts_ns(), &seg, &mut sink);
            }
        }
        r.finish(&mut sink);
        assert_eq!(stats.tcp, frame);
        (ab, ba, closes)
    }

    fn conversation(link: Link) -> Flow {
        let mut f = Flow::new(
            "10.9.8.7:33333".parse().unwrap(),
            "10.9.8.6:9092".parse().unwrap(),
        )
        .with_link(link)
        .with_mss(100);
        f.syn_handshake()
            .client_send(&[b'q'; 450])
            .server_send(&[b'r'; 250])
            .fin();
        f.swap(4, 6).duplicate(5);
        f
    }

    #[test]
    fn pcap_file_through_all_stages() {
        for link in [
            Link::Ethernet,
            Link::QinQ(1, 2),
            Link::LinuxSll2,
            Link::Null,
        ] {
            let f = conversation(link);
            let file = tempfile::NamedTempFile::new().unwrap();
            let mut w = PcapWriter::new(
                file.as_file(),
                link.linktype() as u32,
                TsPrecision::Nano,
                65535,
            )
            .unwrap();
            f.write_pcap(&mut w).unwrap();
            let (ab, ba, closes) = pipeline(file.path());
            assert_eq!(ab, vec![b'q'; 450], "{link:?}");
            assert_eq!(ba, vec![b'r'; 250]);
            assert_eq!(closes, vec![CloseReason::Fin]);
        }
    }

    #[test]
    fn pcapng_file_through_all_stages() {
        let f = conversation(Link::LinuxSll);
        let file = tempfile::NamedTempFile::new().unwrap();
        let mut w = PcapngWriter::new(file.as_file()).unwrap();
        let iface = w
            .add_interface(Link::LinuxSll.linktype() as u16, 65535, TsPrecision::Micro)
            .unwrap();
        for (i, (ts, data)) in f.packets().iter().enumerate() {
            if i == 2 {
                w.write_custom_block(0x0000_0BAD, &[1, 2, 3]).unwrap();
            }
            w.write_packet(iface, *ts, data).unwrap();
        }
        let (ab, ba, closes) = pipeline(file.path());
        assert_eq!(ab, vec![b'q'; 450]);
        assert_eq!(ba, vec![b'r'; 250]);
        assert_eq!(closes, vec![CloseReason::Fin]);
    }
}
