//! kwire's record batches against Kafka's own reading of them.
//!
//! `captures/records/truth/*.txt` is what kafka-clients 4.4.0's MemoryRecords
//! makes of every records field in a capture (`record/record.sh records-truth`,
//! Verify.java `--records`): batch headers, CRC verdicts, and every record's
//! offset, timestamp, key, value and headers. This test finds each field in
//! kwire's own reassembly of the same capture, decodes it, and asserts that
//! everything equals. `public-*.txt` are for ../shared/captures-public (only
//! lengths and CRC-32s of values); those are skipped when the folder is missing.

use kwire::capture::Source;
use kwire::pipeline::{self, Config};
use kwire::records::{self, Batch, Compression, Entry, Message, Options, Span};
use std::collections::{BTreeMap, HashMap};
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `key=value` pairs of one truth line.
fn kv(line: &str) -> HashMap<&str, &str> {
    line.split(' ')
        .skip(1)
        .filter_map(|p| p.split_once('='))
        .collect()
}

/// Kafka's truth for one records field.
#[derive(Default, Debug)]
struct Field {
    line: String,
    batches: Vec<(String, Vec<String>)>,
    partial: Option<usize>,
}

fn parse_truth(text: &str) -> Vec<Field> {
    let mut out: Vec<Field> = Vec::new();
    for line in text.lines() {
        let tag = line.split(' ').next().unwrap_or("");
        match tag {
            "FIELD" => out.push(Field {
                line: line.to_string(),
                ..Default::default()
            }),
            "BATCH" => out
                .last_mut()
                .unwrap()
                .batches
                .push((line.to_string(), Vec::new())),
            // Kafka's own reading of a LeaderChangeMessage: checked with its record.
            "REC" | "LEADERCHANGE" => out
                .last_mut()
                .unwrap()
                .batches
                .last_mut()
                .unwrap()
                .1
                .push(line.to_string()),
            "PARTIAL" => out.last_mut().unwrap().partial = Some(kv(line)["bytes"].parse().unwrap()),
            "UNPARSED" => panic!("Kafka could not parse a frame: {line}"),
            _ => {}
        }
    }
    out
}

/// The way Verify.java prints bytes: hex, or `#LEN:CRC32` when long or digesting.
fn show(b: &[u8], digest: bool) -> String {
    if digest || b.len() > 64 {
        format!("#{}:{:08x}", b.len(), crc32fast::hash(b))
    } else {
        b.iter().map(|x| format!("{x:02x}")).collect()
    }
}

fn show_opt(data: &[u8], s: Option<Span>, digest: bool) -> String {
    s.map_or_else(|| "null".into(), |s| show(s.of(data), digest))
}

/// Kafka's CompressionType names.
fn codec(c: Compression) -> &'static str {
    match c {
        Compression::Unknown(_) => "?",
        c => c.name(),
    }
}

#[derive(Default)]
struct Tally {
    fields: usize,
    /// Per codec: batches and records checked.
    per_codec: BTreeMap<String, (usize, usize)>,
    control: usize,
    leader_changes: usize,
    partial: usize,
}

fn check_v2(b: &Batch, field: &[u8], line: &str, recs: &[String], digest: bool, t: &mut Tally) {
    let k = kv(line);
    let h = &b.header;
    let ts_type = if h.attributes & 0x08 != 0 {
        "LogAppendTime"
    } else {
        "CreateTime"
    };
    let count = if h.record_count >= 0 {
        h.record_count.to_string()
    } else {
        "null".into()
    };
    let got = [
        ("magic", h.magic.to_string()),
        ("base", h.base_offset.to_string()),
        (
            "last",
            (h.base_offset + i64::from(h.last_offset_delta)).to_string(),
        ),
        ("crc", h.crc.to_string()),
        ("valid", b.crc_valid.to_string()),
        ("codec", codec(h.compression()).to_string()),
        ("tstype", ts_type.to_string()),
        ("maxts", h.max_timestamp.to_string()),
        ("txn", h.is_transactional().to_string()),
        ("control", h.is_control().to_string()),
        ("pid", h.producer_id.to_string()),
        ("pepoch", h.producer_epoch.to_string()),
        ("seq", h.base_sequence.to_string()),
        ("count", count),
        ("ple", h.partition_leader_epoch.to_string()),
        ("size", b.bytes.to_string()),
    ];
    for (key, v) in &got {
        assert_eq!(k[key], v, "{key} of {line}");
    }
    assert_eq!(b.error, None, "{line}");
    let data = b.data(field);
    let leader_changes: Vec<&String> = recs
        .iter()
        .filter(|l| l.starts_with("LEADERCHANGE"))
        .collect();
    let recs: Vec<String> = recs
        .iter()
        .filter(|l| l.starts_with("REC"))
        .cloned()
        .collect();
    let mut lc_seen = 0;
    assert_eq!(b.records.len(), recs.len(), "{line}");
    for (r, want) in b.records.iter().zip(&recs) {
        let ts = if ts_type == "LogAppendTime" {
            h.max_timestamp
        } else {
            h.base_timestamp + r.timestamp_delta
        };
        let headers: Vec<String> = r
            .headers
            .iter()
            .map(|x| {
                format!(
                    "{}={}",
                    show(x.key.of(data), false),
                    show_opt(data, x.value, digest)
                )
            })
            .collect();
        let mine = format!(
            "REC offset={} ts={} key={} value={} headers={}",
            h.base_offset + i64::from(r.offset_delta),
            ts,
            show_opt(data, r.key, digest),
            show_opt(data, r.value, digest),
            if headers.is_empty() {
                "-".into()
            } else {
                headers.join(",")
            }
        );
        assert_eq!(&mine, want);
        if h.is_control() {
            match &r.control {
                Some(Ok(c)) if c.type_id >= 2 => {
                    // KRaft records decode whole with the built-in schemas.
                    let records::ControlBody::Data(d) = &c.body else {
                        panic!("{mine}: {c:?}")
                    };
                    if c.type_id == 2 {
                        let ids = |k: &str| {
                            d[k].as_array()
                                .unwrap()
                                .iter()
                                .map(|v| v["VoterId"].to_string())
                                .collect::<Vec<_>>()
                                .join(",")
                        };
                        let lc = format!(
                            "LEADERCHANGE leader={} voters={} granting={}",
                            d["LeaderId"],
                            ids("Voters"),
                            ids("GrantingVoters")
                        );
                        assert_eq!(Some(&&lc), leader_changes.get(lc_seen), "{line}");
                        lc_seen += 1;
                        t.leader_changes += 1;
                    }
                }
                Some(Ok(_)) => {}
                other => panic!("{mine}: {other:?}"),
            }
            t.control += 1;
        }
    }
    assert_eq!(lc_seen, leader_changes.len(), "{line}");
    // Which snappy framing the client sent: snappy-java's (xerial) or raw blocks.
    let name = match h.compression() {
        Compression::Snappy if field[b.at + 61..].starts_with(&records::XERIAL_MAGIC) => {
            "snappy (xerial)"
        }
        Compression::Snappy => "snappy (raw)",
        c => codec(c),
    };
    let e = t.per_codec.entry(name.into()).or_default();
    e.0 += 1;
    e.1 += recs.len();
}

fn check_legacy(m: &Message, buf: &[u8], line: &str, recs: &[String], digest: bool, t: &mut Tally) {
    let k = kv(line);
    assert_eq!(k["magic"], m.magic.to_string(), "{line}");
    assert_eq!(k["last"], m.offset.to_string(), "{line}");
    assert_eq!(k["crc"], m.crc.to_string(), "{line}");
    assert_eq!(k["valid"], m.crc_valid.to_string(), "{line}");
    assert_eq!(k["codec"], codec(m.compression()), "{line}");
    assert_eq!(k["size"], m.bytes.to_string(), "{line}");
    assert_eq!(m.error, None, "{line}");
    let log_append = m.attributes & 0x08 != 0;
    let ts = |own: Option<i64>| match (m.magic, log_append) {
        (0, _) => -1,
        (_, true) => m.timestamp.unwrap_or(-1),
        _ => own.unwrap_or(-1),
    };
    let mut mine = Vec::new();
    match &m.inner {
        None => mine.push(format!(
            "REC offset={} ts={} key={} value={} headers=-",
            m.offset,
            ts(m.timestamp),
            show_opt(buf, m.key, digest),
            show_opt(buf, m.value, digest)
        )),
        Some(inner) => {
            let payload = m.payload.as_deref().unwrap();
            let msgs: Vec<&Message> = inner
                .iter()
                .map(|e| match e {
                    Entry::Message(i) => i,
                    other => panic!("inner entry {other:?} in {line}"),
                })
                .collect();
            let last = msgs.last().map_or(0, |i| i.offset);
            for i in &msgs {
                let offset = if m.magic == 0 {
                    i.offset
                } else {
                    m.offset - last + i.offset
                };
                mine.push(format!(
                    "REC offset={} ts={} key={} value={} headers=-",
                    offset,
                    ts(i.timestamp),
                    show_opt(payload, i.key, digest),
                    show_opt(payload, i.value, digest)
                ));
            }
        }
    }
    let recs: Vec<&String> = recs.iter().filter(|l| l.starts_with("REC")).collect();
    assert_eq!(mine.iter().collect::<Vec<_>>(), recs, "{line}");
    let e = t
        .per_codec
        .entry(format!("{} (magic {})", codec(m.compression()), m.magic))
        .or_default();
    e.0 += 1;
    e.1 += recs.len();
}

/// Every Kafka frame of a capture by (client port, server port, direction, correlation id).
fn frames(pcap: &Path) -> HashMap<(u16, u16, &'static str, i32), Vec<u8>> {
    let mut cfg = Config::default();
    cfg.kafka.ports.extend([19301, 19302, 19303, 19392, 36333]);
    let mut src = Source::open_file(pcap).unwrap();
    let mut out = HashMap::new();
    let _ = pipeline::run(&mut src, cfg, &mut |r| {
        let f = r;
        let (dir, client, server) = match f.msg.kind {
            kwire::codec::Kind::Request => ("req", f.src.port(), f.dst.port()),
            kwire::codec::Kind::Response => ("rsp", f.dst.port(), f.src.port()),
        };
        if let Some(c) = r.msg.correlation_id {
            assert!(!f.cut, "packet {} was cut", f.packet);
            out.insert((client, server, dir, c), f.data.to_vec());
        }
        ControlFlow::Continue(())
    });
    out
}

fn check_file(truth: &Path, pcap: &Path, digest: bool, t: &mut Tally) {
    let text = std::fs::read_to_string(truth).unwrap();
    let frames = frames(pcap);
    for fld in parse_truth(&text) {
        let k = kv(&fld.line);
        let key = (
            k["client"].parse().unwrap(),
            k["server"].parse().unwrap(),
            if k["dir"] == "req" { "req" } else { "rsp" },
            k["corr"].parse().unwrap(),
        );
        let frame = frames
            .get(&key)
            .unwrap_or_else(|| panic!("kwire has no frame for {}", fld.line));
        let at: usize = k["at"].parse().unwrap();
        let len: usize = k["len"].parse().unwrap();
        let field = &frame[4 + at..4 + at + len];
        check_field(&fld, field, digest, t);
    }
}

fn check_field(fld: &Field, field: &[u8], digest: bool, t: &mut Tally) {
    {
        let opts = Options {
            schemas: Some(&records::kraft::Kraft),
            ..Options::default()
        };
        let entries = records::decode(field, &opts);
        let mut it = entries.iter();
        for (line, recs) in &fld.batches {
            match it.next() {
                Some(Entry::Batch(b)) => check_v2(b, field, line, recs, digest, t),
                Some(Entry::Message(m)) => check_legacy(m, field, line, recs, digest, t),
                other => panic!("{}: kwire has {other:?} for {line}", fld.line),
            }
        }
        match (it.next(), fld.partial) {
            (None, None) => {}
            (Some(Entry::Partial { bytes, .. }), Some(n)) => {
                assert_eq!(*bytes, n);
                t.partial += 1;
            }
            (e, p) => panic!(
                "{}: kwire ends with {e:?}, Kafka with partial {p:?}",
                fld.line
            ),
        }
        assert!(it.next().is_none());
        // The JSON view decodes the same field without trouble.
        let v = records::json::value(Some(field), &Options::default());
        assert_eq!(v.as_array().unwrap().len(), entries.len());
        t.fields += 1;
    }
}

#[test]
fn records_equal_kafkas_in_bundled_captures() {
    let dir = root().join("captures/records/truth");
    let mut t = Tally::default();
    let mut files = 0;
    for e in std::fs::read_dir(&dir).unwrap() {
        let p = e.unwrap().path();
        let name = p.file_stem().unwrap().to_str().unwrap().to_string();
        if name.starts_with("public-")
            || name == "fixtures"
            || p.extension().is_some_and(|x| x != "txt")
        {
            continue;
        }
        let pcap = ["captures", "captures/records"]
            .iter()
            .map(|d| root().join(d).join(format!("{name}.pcap")))
            .find(|p| p.exists())
            .unwrap();
        check_file(&p, &pcap, false, &mut t);
        files += 1;
    }
    eprintln!(
        "{files} captures, {} fields, {} control records ({} LeaderChangeMessage), {} partial batches; per codec (batches, records): {:?}",
        t.fields, t.control, t.leader_changes, t.partial, t.per_codec
    );
    assert!(t.leader_changes > 0);
    assert!(files >= 8);
    assert!(t.control > 0);
    // Real clients' batches in every codec, snappy in both framings.
    for c in [
        "none",
        "gzip",
        "snappy (xerial)",
        "snappy (raw)",
        "lz4",
        "zstd",
    ] {
        assert!(
            t.per_codec.get(c).is_some_and(|n| n.1 >= 3),
            "no {c} records"
        );
    }
}

#[test]
fn records_equal_kafkas_in_public_captures() {
    let public = ["../shared/captures-public", "../../shared/captures-public"]
        .iter()
        .map(|p| root().join(p))
        .find(|p| p.is_dir());
    let Some(public) = public else {
        eprintln!("skipped: ../shared/captures-public is missing");
        return;
    };
    let mut t = Tally::default();
    for e in std::fs::read_dir(root().join("captures/records/truth")).unwrap() {
        let p = e.unwrap().path();
        let name = p.file_stem().unwrap().to_str().unwrap().to_string();
        let Some(name) = name.strip_prefix("public-") else {
            continue;
        };
        let pcap = ["pcap", "pcapng"]
            .iter()
            .map(|x| public.join(format!("{name}.{x}")))
            .find(|p| p.exists())
            .unwrap();
        check_file(&p, &pcap, true, &mut t);
    }
    eprintln!(
        "public: {} fields; per codec (batches, records): {:?}",
        t.fields, t.per_codec
    );
}

#[test]
fn records_equal_kafkas_in_builder_fixtures() {
    let dir = root().join("captures/records/truth");
    let bin = std::fs::read(dir.join("fixtures.bin")).unwrap();
    let text = std::fs::read_to_string(dir.join("fixtures.txt")).unwrap();
    let mut t = Tally::default();
    for fld in parse_truth(&text) {
        let k = kv(&fld.line);
        let at: usize = k["at"].parse().unwrap();
        let field = &bin[at..at + k["len"].parse::<usize>().unwrap()];
        check_field(&fld, field, false, &mut t);
    }
    eprintln!(
        "fixtures: {} fields, {} control records; per codec (batches, records): {:?}",
        t.fields, t.control, t.per_codec
    );
    // Every codec but zstd for magic 0 and 1, and every codec for magic 2.
    assert_eq!(t.per_codec.len(), 4 * 2 + 5);
}
