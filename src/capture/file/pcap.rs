//! Classic pcap records: a fixed header (16 bytes, or 24 in the modified
//! format) and the packet, in the file's byte order.

use super::*;

impl FileReader {
    pub(super) fn pcap_record(
        &mut self,
        be: bool,
        nano: bool,
        modified: bool,
    ) -> Result<Step, CaptureError> {
        let hdr = if modified { 24 } else { 16 };
        self.require(hdr)?;
        let b = self.avail();
        let (Some(sec), Some(frac), Some(caplen), Some(origlen)) = (
            u32_at(b, 0, be),
            u32_at(b, 4, be),
            u32_at(b, 8, be),
            u32_at(b, 12, be),
        ) else {
            return Err(self.truncated());
        };
        let caplen = usize::try_from(caplen).unwrap_or(usize::MAX);
        if caplen > MAX_BLOCK {
            return Err(self.damage(format!(
                "invalid packet capture length {caplen}, bigger than the maximum of {MAX_BLOCK}"
            )));
        }
        self.require(hdr + caplen)?;
        let nsec = if nano {
            frac
        } else {
            frac.saturating_mul(1000)
        };
        self.consume = hdr + caplen;
        let iface = self.ifaces.first();
        Ok(Step::Packet(PacketAt {
            ts: (i64::from(sec), nsec.min(999_999_999)),
            iface: 0,
            data_at: hdr,
            caplen,
            origlen,
            linktype: iface.map_or(0, |i| i.linktype),
        }))
    }
}
