//! Capture file formats read by kwire's own reader, checked against tshark
//! (skipped with a message when tshark is missing) and through `kwire read`.

mod common;

use common::*;
use kwire::capture::Source;
use kwire::capture::writer::{ByteOrder, IfaceTime, PcapngWriter};
use kwire::synth::{Flow, Link};
use serde_json::Value;
use std::path::Path;
use std::process::Command;

const T0: i64 = 1_764_441_600_123_456_789;

fn time(tsresol: u8, tsoffset: i64) -> IfaceTime {
    IfaceTime { tsresol, tsoffset }
}

/// Three Kafka conversations, one per link type.
fn flows() -> Vec<Flow> {
    let links = [Link::Ethernet, Link::Raw, Link::LinuxSll];
    links
        .iter()
        .enumerate()
        .map(|(i, &link)| {
            let mut f = flow_between(&format!("10.0.{i}.1:5000{i}"), &format!("10.0.{i}.2:9092"))
                .with_link(link)
                .with_start(T0 + i as i64 * 333_333, 1_000_003);
            f.syn_handshake()
                .client_send(&fc_req(4, 7 + i as i32, "app", "orders"))
                .server_send(&fc_resp(4, 7 + i as i32, "orders", 2, "b2", 9092, 0))
                .client_send(&vote_req(2, 100 + i as i32, "ctrl", false))
                .server_send(&vote_resp(2, 100 + i as i32, true, 0))
                .fin();
            f
        })
        .collect()
}

/// The three flows merged by time into a pcapng file with three interfaces
/// (Ethernet at 10^-6 s, raw IP at 10^-9 s, Linux SLL at 2^-20 s), custom,
/// unknown and statistics blocks, then a second, big-endian section that
/// describes the interfaces again (one with an `if_tsoffset`) and carries
/// the second half of the packets.
fn multi_interface_pcapng(flows: &[Flow]) -> Vec<u8> {
    let mut all: Vec<(i64, usize, &[u8])> = flows
        .iter()
        .enumerate()
        .flat_map(|(i, f)| {
            f.packets()
                .iter()
                .map(move |(ts, d)| (*ts, i, d.as_slice()))
        })
        .collect();
    all.sort_by_key(|(ts, i, _)| (*ts, *i));
    let times = [time(6, 0), time(9, 0), time(0x80 | 20, 0)];
    let mut w = PcapngWriter::new(Vec::new()).unwrap();
    let declare = |w: &mut PcapngWriter<Vec<u8>>, times: &[IfaceTime; 3]| {
        for (f, t) in flows.iter().zip(times) {
            w.add_interface_with(f.link().linktype() as u16, 262_144, *t)
                .unwrap();
        }
    };
    declare(&mut w, &times);
    let half = all.len() / 2;
    for (n, (ts, i, data)) in all.iter().enumerate() {
        if n == half {
            w.write_custom_block(5, &[0; 12]).unwrap(); // interface statistics
            w.new_section(ByteOrder::Big).unwrap();
            declare(&mut w, &[time(6, 0), time(9, 1_000), time(0x80 | 20, 0)]);
        }
        if n == 3 {
            w.write_custom_block(0x0000_0BAD, b"\0\0\x7f\xffcustom data")
                .unwrap();
            w.write_custom_block(0x0000_0777, b"a block no one knows")
                .unwrap();
        }
        w.write_packet(*i as u32, *ts, data).unwrap();
    }
    w.into_inner()
}

/// Time in ns, 1-based section, interface id in the section, caplen, origlen.
type Pkt = (i64, u32, u32, u32, u32);

/// Every packet, by our reader, and the interface index (over all sections).
fn ours(path: &Path) -> Vec<(Pkt, u32)> {
    let mut src = Source::open_file(path).unwrap();
    let mut out = Vec::new();
    loop {
        let (pkt, g) = match src.next_packet() {
            None => break,
            Some(p) => {
                let p = p.unwrap();
                ((p.ts_ns(), p.interface, p.caplen, p.origlen), p.interface)
            }
        };
        let i = &src.interfaces()[g as usize];
        out.push(((pkt.0, i.section + 1, i.id, pkt.2, pkt.3), g));
    }
    out
}

/// The same, by tshark; `None` when tshark is not installed.
fn tshark(path: &Path) -> Option<Vec<Pkt>> {
    let out = Command::new("tshark")
        .args(["-r", path.to_str().unwrap(), "-T", "fields"])
        .args(["-e", "frame.time_epoch", "-e", "frame.section_number"])
        .args(["-e", "frame.interface_id"])
        .args(["-e", "frame.cap_len", "-e", "frame.len"])
        .output()
        .ok()?;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    Some(
        text.lines()
            // tshark shows custom blocks as records without a time: not packets.
            .filter(|l| !l.starts_with('\t'))
            .map(|l| {
                let f: Vec<&str> = l.split('\t').collect();
                let (s, frac) = f[0].split_once('.').unwrap();
                let ns = format!("{frac:0<9}");
                let ts =
                    s.parse::<i64>().unwrap() * 1_000_000_000 + ns[..9].parse::<i64>().unwrap();
                let n = |k: usize| f[k].parse::<u32>().unwrap();
                (ts, n(1), n(2), n(3), n(4))
            })
            .collect(),
    )
}

#[test]
fn multi_interface_pcapng_agrees_with_tshark() {
    let flows = flows();
    let file = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(file.path(), multi_interface_pcapng(&flows)).unwrap();
    if let Ok(keep) = std::env::var("KWIRE_KEEP_CAPTURE") {
        std::fs::copy(file.path(), keep).unwrap();
    }
    let got = ours(file.path());
    let total: usize = flows.iter().map(Flow::len).sum();
    assert_eq!(got.len(), total);
    // Interfaces 3..6 are the second section's.
    assert!(got.iter().any(|p| p.1 == 5 && p.0.1 == 2 && p.0.2 == 2));
    let src = Source::open_file(file.path()).unwrap();
    assert_eq!(src.interfaces().len(), 3);
    let Some(theirs) = tshark(file.path()) else {
        eprintln!("SKIP: tshark is not installed");
        return;
    };
    assert_eq!(got.len(), theirs.len());
    for (n, ((a, _), b)) in got.iter().zip(&theirs).enumerate() {
        assert_eq!(a, b, "frame {}", n + 1);
    }
}

/// kind, api, correlation id, src and dst of each message, sorted.
fn messages(ndjson: &str) -> Vec<String> {
    let mut v: Vec<String> = json_lines(ndjson)
        .iter()
        .map(|m: &Value| {
            format!(
                "{} {} {} {} {}",
                m["kind"], m["api_name"], m["correlation_id"], m["src"], m["dst"]
            )
        })
        .collect();
    v.sort();
    v
}

#[test]
fn multi_interface_pcapng_through_kwire_read() {
    let flows = flows();
    let file = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(file.path(), multi_interface_pcapng(&flows)).unwrap();
    let together = read(file.path(), &["--format", "json"]);
    let mut apart = Vec::new();
    for f in &flows {
        let one = pcap(&[f]);
        apart.extend(messages(&read(one.path(), &["--format", "json"])));
    }
    apart.sort();
    assert_eq!(apart.len(), 12);
    assert_eq!(messages(&together), apart);
    // Frames count over the whole file, in file order.
    let frames: Vec<u64> = json_lines(&together)
        .iter()
        .map(|m| m["frame"].as_u64().unwrap())
        .collect();
    assert!(frames.windows(2).all(|w| w[0] < w[1]), "{frames:?}");
    // Standard input, through a pipe, reads the same.
    let bytes = std::fs::read(file.path()).unwrap();
    let out = kwire_with_stdin(&["read", "-", "-q", "--format", "json"], Some(&bytes));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(out.stdout, together);
}

#[test]
fn a_cut_pcapng_block_is_damage_after_everything_before_it() {
    let flows = flows();
    let whole = multi_interface_pcapng(&flows);
    let file = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(file.path(), &whole[..whole.len() - 10]).unwrap();
    let out = kwire(&["read", file.path().to_str().unwrap(), "-q"]);
    assert_eq!(out.code, 2, "{out:?}");
    let total: usize = flows.iter().map(Flow::len).sum();
    assert_eq!(
        out.stderr,
        format!("kwire: capture truncated at packet {total}\n")
    );
    // Every message before the last packet is there.
    assert_eq!(out.stdout.lines().count(), 12);
}

/// A longer conversation: 40 FindCoordinator exchanges.
fn long_flow() -> Flow {
    let mut f = flow();
    f.syn_handshake();
    for i in 0..40 {
        f.client_send(&fc_req(4, i, "app", &format!("group-{i}")))
            .server_send(&fc_resp(4, i, &format!("group-{i}"), 2, "b2", 9092, 0));
    }
    f.fin();
    f
}

fn compress(what: &str, data: &[u8]) -> Vec<u8> {
    use std::io::Write;
    match what {
        "gzip" => {
            let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
            e.write_all(data).unwrap();
            e.finish().unwrap()
        }
        "zstd" => zstd::stream::encode_all(data, 3).unwrap(),
        "lz4" => {
            // 64 KiB blocks (lz4 -B4), so a cut stream still has whole blocks.
            let info =
                lz4_flex::frame::FrameInfo::new().block_size(lz4_flex::frame::BlockSize::Max64KB);
            let mut e = lz4_flex::frame::FrameEncoder::with_frame_info(info, Vec::new());
            e.write_all(data).unwrap();
            e.finish().unwrap()
        }
        other => panic!("{other}"),
    }
}

#[test]
fn compressed_captures_read_like_plain_ones_from_files_and_stdin() {
    let f = long_flow();
    for plain in [pcap(&[&f]), pcapng(&[&f])] {
        let want = read(plain.path(), &["--format", "json"]);
        assert_eq!(json_lines(&want).len(), 80);
        let bytes = std::fs::read(plain.path()).unwrap();
        for what in ["gzip", "zstd", "lz4"] {
            // The name says nothing: the magic bytes decide.
            let file = tempfile::NamedTempFile::new().unwrap();
            let z = compress(what, &bytes);
            std::fs::write(file.path(), &z).unwrap();
            assert_eq!(read(file.path(), &["--format", "json"]), want, "{what}");
            let out = kwire_with_stdin(&["read", "-", "-q", "--format", "json"], Some(&z));
            assert_eq!(out.code, 0, "{what}: {}", out.stderr);
            assert_eq!(out.stdout, want, "{what} on stdin");
        }
    }
}

#[test]
fn a_corrupt_compressed_capture_is_damage_after_what_came_before() {
    // Large enough (about 700 KB) for several zstd blocks.
    let mut f = flow();
    f.syn_handshake();
    for i in 0..300 {
        let key = format!("group-{i}-{}", "k".repeat(1000));
        f.client_send(&fc_req(4, i, "app", &key))
            .server_send(&fc_resp(4, i, &key, 2, "b2", 9092, 0));
    }
    f.fin();
    let plain = std::fs::read(pcap(&[&f]).path()).unwrap();
    let all = {
        let file = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(file.path(), &plain).unwrap();
        read(file.path(), &[])
    };
    for what in ["gzip", "zstd", "lz4"] {
        let z = compress(what, &plain);
        let file = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(file.path(), &z[..z.len() * 2 / 3]).unwrap();
        let out = kwire(&["read", file.path().to_str().unwrap(), "-q"]);
        assert_eq!(out.code, 2, "{what}: {out:?}");
        assert!(
            out.stderr.contains(&format!("corrupt {what} stream")),
            "{what}: {}",
            out.stderr
        );
        // What came before the damage is printed, and is a prefix of the whole.
        assert!(!out.stdout.is_empty(), "{what}");
        assert!(all.starts_with(&out.stdout), "{what}");
    }
}
