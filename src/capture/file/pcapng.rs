//! pcapng blocks: section headers (each with its byte order), interface
//! descriptions, the packet blocks, and every other block skipped and counted.

use super::*;

impl FileReader {
    pub(super) fn pcapng_block(&mut self, be: bool, first: usize) -> Result<Step, CaptureError> {
        self.require(8)?;
        let is_shb = self.avail().get(..4) == Some(&SHB_BYTES[..]);
        let be = if is_shb {
            self.require(12)?;
            match self.avail().get(8..12) {
                Some([0x1A, 0x2B, 0x3C, 0x4D]) => true,
                Some([0x4D, 0x3C, 0x2B, 0x1A]) => false,
                _ => {
                    return Err(self.damage(format!(
                        "pcapng section header with a bad byte-order magic at byte {}",
                        self.stats.bytes
                    )));
                }
            }
        } else {
            be
        };
        let b = self.avail();
        let (Some(btype), Some(len)) = (u32_at(b, 0, be), u32_at(b, 4, be)) else {
            return Err(self.truncated());
        };
        let len = usize::try_from(len).unwrap_or(usize::MAX);
        if len < 12 || len % 4 != 0 || len > MAX_BLOCK {
            return Err(self.damage(format!(
                "pcapng block of type {btype:#x} at byte {} has an invalid length {len}",
                self.stats.bytes
            )));
        }
        self.require(len)?;
        let at = self.stats.bytes;
        let packets = self.packets;
        // Field borrows, so counters can change while the block is read.
        let block = self
            .buf
            .get(self.start..self.end)
            .and_then(|b| b.get(..len))
            .unwrap_or_default();
        if u32_at(block, len - 4, be) != u32_at(block, 4, be) {
            return Err(self.damage(format!(
                "pcapng block of type {btype:#x} at byte {at}: trailing length differs"
            )));
        }
        let bad = |what: &str| CaptureError::Read {
            packet: packets + 1,
            reason: format!("malformed pcapng {what} block at byte {at}"),
        };
        let last_ts = self.last_ts;
        let ifaces = &mut self.ifaces;
        let stats = &mut self.stats;
        let section_iface = |ifaces: &[Interface], id: usize| {
            let g = first.checked_add(id)?;
            ifaces.get(g).map(|i| (g, i.clone()))
        };
        let step = match btype {
            _ if is_shb => {
                parse_sectionheaderblock(block).map_err(|_| bad("section header"))?;
                stats.sections += 1;
                self.format = Format::Pcapng {
                    be,
                    first: ifaces.len(),
                };
                Step::Skip
            }
            IDB => {
                let parsed = if be {
                    parse_interfacedescriptionblock_be(block)
                } else {
                    parse_interfacedescriptionblock_le(block)
                };
                let (_, idb) = parsed.map_err(|_| bad("interface description"))?;
                let Some(per_sec) = units_per_sec(idb.if_tsresol) else {
                    return Err(bad("interface description (if_tsresol)"));
                };
                let section = u32::try_from(stats.sections.saturating_sub(1)).unwrap_or(0);
                // pcap-parser reads if_tsoffset as little-endian whatever the
                // section's order, so take it from the option's bytes.
                let tsoffset = idb
                    .options
                    .iter()
                    .find(|o| o.code == pcap_parser::pcapng::OptionCode::IfTsoffset)
                    .and_then(|o| o.value.get(..8))
                    .and_then(|v| <[u8; 8]>::try_from(v).ok())
                    .map_or(0, |v| {
                        if be {
                            i64::from_be_bytes(v)
                        } else {
                            i64::from_le_bytes(v)
                        }
                    });
                ifaces.push(Interface {
                    linktype: idb.linktype.0,
                    snaplen: idb.snaplen,
                    tsresol: idb.if_tsresol,
                    tsoffset,
                    section,
                    id: u32::try_from(ifaces.len().saturating_sub(first)).unwrap_or(u32::MAX),
                    units_per_sec: per_sec,
                });
                stats.interfaces += 1;
                Step::Skip
            }
            EPB => {
                let parsed = if be {
                    parse_enhancedpacketblock_be(block)
                } else {
                    parse_enhancedpacketblock_le(block)
                };
                let (_, epb) = parsed.map_err(|_| bad("enhanced packet"))?;
                stats.enhanced_packets += 1;
                let caplen = usize::try_from(epb.caplen).unwrap_or(usize::MAX);
                if caplen > epb.data.len() {
                    return Err(bad("enhanced packet"));
                }
                let units = (u64::from(epb.ts_high) << 32) | u64::from(epb.ts_low);
                match section_iface(ifaces, usize::try_from(epb.if_id).unwrap_or(usize::MAX)) {
                    Some((g, i)) => Step::Packet(PacketAt {
                        ts: split_ts(units, i.units_per_sec, i.tsoffset),
                        iface: g,
                        data_at: 28,
                        caplen,
                        origlen: epb.origlen,
                        linktype: i.linktype,
                    }),
                    None => {
                        stats.orphan_packets += 1;
                        Step::Skip
                    }
                }
            }
            SPB => {
                let parsed = if be {
                    parse_simplepacketblock_be(block)
                } else {
                    parse_simplepacketblock_le(block)
                };
                let (_, spb) = parsed.map_err(|_| bad("simple packet"))?;
                stats.simple_packets += 1;
                match section_iface(ifaces, 0) {
                    Some((g, i)) => {
                        let mut caplen = usize::try_from(spb.origlen).unwrap_or(usize::MAX);
                        caplen = caplen.min(spb.data.len());
                        if i.snaplen > 0 {
                            caplen = caplen.min(usize::try_from(i.snaplen).unwrap_or(usize::MAX));
                        }
                        // No timestamp on the wire: the last one seen stands in.
                        Step::Packet(PacketAt {
                            ts: last_ts,
                            iface: g,
                            data_at: 12,
                            caplen,
                            origlen: spb.origlen,
                            linktype: i.linktype,
                        })
                    }
                    None => {
                        stats.orphan_packets += 1;
                        Step::Skip
                    }
                }
            }
            OPB => {
                // Obsolete packet block: 16-bit interface id, 16-bit drop
                // count, then the same fields as an enhanced packet block.
                let (Some(id), Some(hi), Some(lo), Some(caplen), Some(origlen)) = (
                    u16_at(block, 8, be),
                    u32_at(block, 12, be),
                    u32_at(block, 16, be),
                    u32_at(block, 20, be),
                    u32_at(block, 24, be),
                ) else {
                    return Err(bad("packet"));
                };
                let caplen = usize::try_from(caplen).unwrap_or(usize::MAX);
                if caplen > len.saturating_sub(32) {
                    return Err(bad("packet"));
                }
                stats.obsolete_packets += 1;
                let units = (u64::from(hi) << 32) | u64::from(lo);
                match section_iface(ifaces, usize::from(id)) {
                    Some((g, i)) => Step::Packet(PacketAt {
                        ts: split_ts(units, i.units_per_sec, i.tsoffset),
                        iface: g,
                        data_at: 28,
                        caplen,
                        origlen,
                        linktype: i.linktype,
                    }),
                    None => {
                        stats.orphan_packets += 1;
                        Step::Skip
                    }
                }
            }
            CB | DCB => {
                stats.custom_blocks += 1;
                Step::Skip
            }
            NRB | ISB | SJE | DSB => {
                stats.other_blocks += 1;
                Step::Skip
            }
            _ => {
                stats.unknown_blocks += 1;
                Step::Skip
            }
        };
        match step {
            Step::Packet(p) => {
                self.last_ts = p.ts;
                self.consume = len;
                Ok(Step::Packet(p))
            }
            other => {
                self.advance_by(len);
                Ok(other)
            }
        }
    }
}
