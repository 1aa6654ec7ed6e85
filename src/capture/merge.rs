//! Several captures merged into one packet stream by time, as mergecap does:
//! each input holds exactly one packet of look-ahead, the earliest goes
//! first (the earlier input on a tie), so memory does not grow with the files.

use super::file::{FileReader, FileStats};
use super::{CaptureError, Packet};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// The inputs of a merge and their heads.
pub struct Merge {
    inputs: Vec<(String, FileReader)>,
    /// Inputs with a packet waiting, by (time, input index).
    heads: BinaryHeap<Reverse<(i64, usize)>>,
    primed: bool,
    /// Input whose packet was returned last: it moves on at the next call.
    last: Option<usize>,
    /// The first input that failed; reported once the others are drained.
    error: Option<CaptureError>,
}

impl std::fmt::Debug for Merge {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Merge")
            .field(
                "inputs",
                &self.inputs.iter().map(|i| &i.0).collect::<Vec<_>>(),
            )
            .finish()
    }
}

impl Merge {
    /// `inputs`: each reader with the name its errors carry.
    pub fn new(inputs: Vec<(String, FileReader)>) -> Merge {
        Merge {
            heads: BinaryHeap::with_capacity(inputs.len()),
            inputs,
            primed: false,
            last: None,
            error: None,
        }
    }

    pub fn len(&self) -> usize {
        self.inputs.len()
    }

    pub fn is_empty(&self) -> bool {
        self.inputs.is_empty()
    }

    pub fn reader(&self, i: usize) -> Option<&FileReader> {
        self.inputs.get(i).map(|(_, r)| r)
    }

    /// The inputs' counters, summed.
    pub fn stats(&self) -> FileStats {
        let mut t = FileStats::default();
        for (_, r) in &self.inputs {
            let s = r.stats();
            t.bytes += s.bytes;
            t.sections += s.sections;
            t.interfaces += s.interfaces;
            t.enhanced_packets += s.enhanced_packets;
            t.simple_packets += s.simple_packets;
            t.obsolete_packets += s.obsolete_packets;
            t.other_blocks += s.other_blocks;
            t.custom_blocks += s.custom_blocks;
            t.unknown_blocks += s.unknown_blocks;
            t.orphan_packets += s.orphan_packets;
        }
        t
    }

    /// Bytes read from the inputs as stored.
    pub fn raw_bytes(&self) -> u64 {
        self.inputs.iter().map(|(_, r)| r.raw_bytes()).sum()
    }

    /// Reads input `i`'s next packet into its head.
    fn pull(&mut self, i: usize) {
        let Some((name, r)) = self.inputs.get_mut(i) else {
            return;
        };
        match r.advance() {
            Some(Ok(())) => {
                if let Some(ts) = r.current_ts_ns() {
                    self.heads.push(Reverse((ts, i)));
                }
            }
            Some(Err(e)) if self.error.is_none() => {
                self.error = Some(CaptureError::InFile {
                    file: name.clone(),
                    error: Box::new(e),
                });
            }
            Some(Err(_)) => {}
            None => {}
        }
    }

    /// The earliest packet over all inputs, its `file` set to the input's
    /// index. A failed input stops contributing; its error comes after every
    /// other input's packets.
    pub fn next_packet(&mut self) -> Option<Result<Packet<'_>, CaptureError>> {
        if !self.primed {
            self.primed = true;
            for i in 0..self.inputs.len() {
                self.pull(i);
            }
        }
        if let Some(i) = self.last.take() {
            self.pull(i);
        }
        let Some(Reverse((_, i))) = self.heads.pop() else {
            return self.error.take().map(Err);
        };
        self.last = Some(i);
        let (_, r) = self.inputs.get(i)?;
        let mut p = r.current()?;
        p.file = u32::try_from(i).unwrap_or(u32::MAX);
        Some(Ok(p))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]
mod tests {
    use super::*;
    use crate::capture::Source;
    use crate::capture::compress::{Compression, tests::compress};
    use crate::capture::writer::{PcapWriter, PcapngWriter, TsPrecision};
    use std::io::Cursor;

    fn pcap(times: &[i64], tag: u8) -> Vec<u8> {
        let mut w = PcapWriter::new(Vec::new(), 1, TsPrecision::Nano, 65535).unwrap();
        for (k, &t) in times.iter().enumerate() {
            w.write_packet(t, &[tag, k as u8]).unwrap();
        }
        w.into_inner()
    }

    fn reader(bytes: Vec<u8>) -> FileReader {
        FileReader::new(Box::new(Cursor::new(bytes))).unwrap()
    }

    type Drained = (Vec<(i64, u32, Vec<u8>)>, Option<CaptureError>);

    fn drain(m: &mut Merge) -> Drained {
        let mut out = Vec::new();
        while let Some(p) = m.next_packet() {
            match p {
                Ok(p) => out.push((p.ts_ns(), p.file, p.data.to_vec())),
                Err(e) => return (out, Some(e)),
            }
        }
        (out, None)
    }

    #[test]
    fn merges_by_time_earlier_input_first_on_ties() {
        let a = pcap(&[10, 20, 30, 30], b'a');
        let mut ng = PcapngWriter::new(Vec::new()).unwrap();
        let i = ng.add_interface(101, 0, TsPrecision::Nano).unwrap();
        for (k, t) in [5i64, 20, 25, 40].into_iter().enumerate() {
            ng.write_packet(i, t, &[b'b', k as u8]).unwrap();
        }
        let b = ng.into_inner();
        let c = pcap(&[], b'c');
        let mut m = Merge::new(vec![
            ("a".into(), reader(a)),
            ("b".into(), reader(b)),
            ("c".into(), reader(c)),
        ]);
        let (got, err) = drain(&mut m);
        assert!(err.is_none());
        let order: Vec<(i64, u32, u8)> = got.iter().map(|(t, f, d)| (*t, *f, d[1])).collect();
        assert_eq!(
            order,
            vec![
                (5, 1, 0),
                (10, 0, 0),
                (20, 0, 1),
                (20, 1, 1),
                (25, 1, 2),
                (30, 0, 2),
                (30, 0, 3),
                (40, 1, 3)
            ]
        );
        // Link types stay per packet.
        assert_eq!(m.reader(1).unwrap().interfaces()[0].linktype, 101);
    }

    #[test]
    fn a_damaged_input_is_reported_after_the_others() {
        let mut a = pcap(&[10, 20, 30], b'a');
        a.truncate(a.len() - 1);
        let b = pcap(&[15, 25, 35, 45], b'b');
        let mut m = Merge::new(vec![
            ("a.pcap".into(), reader(a)),
            ("b.pcap".into(), reader(b)),
        ]);
        let (got, err) = drain(&mut m);
        let times: Vec<i64> = got.iter().map(|g| g.0).collect();
        assert_eq!(times, vec![10, 15, 20, 25, 35, 45]);
        assert_eq!(
            err.unwrap().to_string(),
            "a.pcap: capture truncated at packet 3"
        );
        assert!(m.next_packet().is_none());
    }

    #[test]
    fn sources_of_several_compressed_files() {
        let dir = tempfile::tempdir().unwrap();
        let mut paths = Vec::new();
        for (n, c) in [
            None,
            Some(Compression::Gzip),
            Some(Compression::Zstd),
            Some(Compression::Lz4),
        ]
        .into_iter()
        .enumerate()
        {
            let times: Vec<i64> = (0..50).map(|k| k * 10 + n as i64).collect();
            let plain = pcap(&times, n as u8);
            let bytes = c.map_or(plain.clone(), |c| compress(c, &plain));
            let path = dir.path().join(format!("f{n}.cap"));
            std::fs::write(&path, bytes).unwrap();
            paths.push(path);
        }
        let mut src = Source::open_files(&paths).unwrap();
        assert_eq!(src.inputs(), 4);
        let mut last = i64::MIN;
        let mut per_file = [0; 4];
        while let Some(p) = src.next_packet() {
            let p = p.unwrap();
            assert!(p.ts_ns() >= last);
            last = p.ts_ns();
            assert_eq!(p.data[0] as u32, p.file);
            per_file[p.file as usize] += 1;
        }
        assert_eq!(per_file, [50; 4]);
        assert_eq!(src.packets_read(), 200);
        let sizes: u64 = paths
            .iter()
            .map(|p| std::fs::metadata(p).unwrap().len())
            .sum();
        assert_eq!(src.bytes_read(), sizes);
        // A missing input names itself.
        paths.push(dir.path().join("missing.pcap"));
        let e = Source::open_files(&paths).unwrap_err();
        assert!(e.to_string().contains("missing.pcap"), "{e}");
    }
}
