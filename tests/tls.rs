//! Kafka over TLS, through the whole program: the recorded TLS captures
//! (`captures/tls-*.pcap` with their key logs) give the same Kafka requests,
//! responses and correlation ids as tshark decrypting with the same key log
//! (`captures/tls-*.tshark.tsv`); the messages inside decode exactly as the
//! same bytes do over plaintext; and damaged, hostile or keyless inputs give
//! nothing invented, counted by reason.

mod common;

use common::*;
use kwire::capture::Source;
use kwire::capture::writer::{PcapWriter, TsPrecision};
use kwire::pipeline::{self, Config};
use kwire::proto::Kind;
use kwire::synth::Flow;
use kwire::tls::{KeyConfig, Outcome};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use std::process::Command;

const CAPTURES: [&str; 3] = ["tls-kafka-python", "tls-kraft-election", "tls-resumption"];

fn cap(name: &str, ext: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("captures")
        .join(format!("{name}.{ext}"))
}

/// tshark's requests (frame, key, version, correlation id) and responses (frame, correlation id).
type Lists = (BTreeSet<(u64, i64, i64, i64)>, BTreeSet<(u64, i64)>);

fn tshark(name: &str) -> Lists {
    let text = std::fs::read_to_string(cap(name, "tshark.tsv")).unwrap();
    let (mut req, mut resp) = (BTreeSet::new(), BTreeSet::new());
    for line in text.lines() {
        let f: Vec<&str> = line.split('\t').collect();
        let n = |i: usize| f[i].parse::<i64>().unwrap();
        if f[2].is_empty() {
            resp.insert((n(0) as u64, n(4)));
        } else {
            req.insert((n(0) as u64, n(2), n(3), n(4)));
        }
    }
    (req, resp)
}

fn lists(objs: &[Value]) -> Lists {
    let (mut req, mut resp) = (BTreeSet::new(), BTreeSet::new());
    for o in objs {
        let frame = o["frame"].as_u64().unwrap();
        let corr = o["correlation_id"].as_i64().unwrap();
        if o["kind"] == "request" {
            let key = o["api_key"].as_i64().unwrap();
            req.insert((frame, key, o["api_version"].as_i64().unwrap(), corr));
        } else {
            resp.insert((frame, corr));
        }
    }
    (req, resp)
}

/// The binary's NDJSON for a file with `--tls-keylog KEYS` (when given), and its stderr.
fn ndjson(file: &Path, keys: Option<&Path>) -> (Vec<Value>, String) {
    let mut args = vec!["read", file.to_str().unwrap(), "--format", "json"];
    if let Some(k) = keys {
        args.extend(["--tls-keylog", k.to_str().unwrap()]);
    }
    let out = kwire(&args);
    assert_eq!(out.code, 0, "{args:?}: {}", out.stderr);
    (json_lines(&out.stdout), out.stderr)
}

fn config(keys: Option<&Path>) -> Config {
    Config {
        keys: KeyConfig {
            keylog: keys.map(Path::to_path_buf),
            ..KeyConfig::default()
        },
        ..Config::default()
    }
}

#[test]
fn same_requests_and_correlation_ids_as_tshark() {
    for name in CAPTURES {
        let (objs, stderr) = ndjson(&cap(name, "pcap"), Some(&cap(name, "keys")));
        let want = tshark(name);
        let got = lists(&objs);
        assert_eq!(got.0, want.0, "{name}: requests");
        assert_eq!(got.1, want.1, "{name}: responses");
        for o in &objs {
            let v = o["tls"].as_str().unwrap_or_default();
            assert!(v == "TLSv1.2" || v == "TLSv1.3", "{name}: {o}");
            assert!(o.get("error").is_none(), "{name}: malformed {o}");
        }
        assert!(stderr.contains(" 0 failed authentication"), "{stderr}");
        assert!(stderr.contains("0 malformed"), "{stderr}");
    }
}

#[test]
fn every_suite_of_the_recording_is_decrypted() {
    let r = run_lib(
        &cap("tls-kafka-python", "pcap"),
        config(Some(&cap("tls-kafka-python", "keys"))),
    );
    let t = &r.stats.tls;
    assert_eq!(t.outcomes.get(&Outcome::Decrypted), Some(&30));
    assert_eq!(t.versions.get("TLSv1.3"), Some(&15));
    assert_eq!(t.versions.get("TLSv1.2"), Some(&15));
    for suite in [
        "TLS_AES_128_GCM_SHA256",
        "TLS_AES_256_GCM_SHA384",
        "TLS_CHACHA20_POLY1305_SHA256",
        "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
        "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256",
        "TLS_RSA_WITH_AES_256_GCM_SHA384",
    ] {
        assert_eq!(t.suites.get(suite), Some(&5), "{suite}");
    }
    assert_eq!((t.failed_records, t.undecrypted_records), (0, 0));
    // Resumption: TLS 1.2 by ticket, TLS 1.3 by PSK, each after a full handshake.
    let r = run_lib(
        &cap("tls-resumption", "pcap"),
        config(Some(&cap("tls-resumption", "keys"))),
    );
    assert_eq!(r.stats.tls.outcomes.get(&Outcome::Decrypted), Some(&4));
    assert_eq!(
        r.stats
            .tls
            .suites
            .get("TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384"),
        Some(&2)
    );
    assert_eq!(r.json.len(), 8);
}

/// Each message of one connection, in order: (kind, bytes).
type Conversation = Vec<(Kind, Vec<u8>)>;

/// The decrypted messages, written again as plaintext TCP flows (one per
/// connection, same endpoints), dissect to the same JSON but for the packet
/// numbers, times and the `tls` key.
#[test]
fn messages_inside_tls_decode_as_over_plaintext() {
    for name in ["tls-kraft-election", "tls-kafka-python"] {
        let mut src = Source::open_file(cap(name, "pcap")).unwrap();
        let mut convs: BTreeMap<(String, String), Conversation> = BTreeMap::new();
        let mut tls_json = Vec::new();
        pipeline::run(&mut src, config(Some(&cap(name, "keys"))), &mut |r| {
            let (c, s) = match r.msg.kind {
                Kind::Request => (r.src, r.dst),
                Kind::Response => (r.dst, r.src),
            };
            convs
                .entry((c.to_string(), s.to_string()))
                .or_default()
                .push((r.msg.kind, r.data.to_vec()));
            let mut buf = Vec::new();
            kwire::view::json::write_record(&mut buf, r);
            tls_json.push(serde_json::from_slice::<Value>(&buf).unwrap());
            ControlFlow::Continue(())
        });
        let mut flows = Vec::new();
        for (i, ((c, s), msgs)) in convs.iter().enumerate() {
            let mut f =
                flow_between(c, s).with_start(1_000_000_000 + i as i64 * 1_000_000_000, 1000);
            f.syn_handshake();
            for (kind, data) in msgs {
                match kind {
                    Kind::Request => f.client_send(data),
                    Kind::Response => f.server_send(data),
                };
            }
            f.fin();
            flows.push(f);
        }
        let refs: Vec<&Flow> = flows.iter().collect();
        let file = pcap(&refs);
        let plain = run_lib(file.path(), Config::default());
        let strip = |o: &Value| {
            let mut o = o.clone();
            for k in ["frame", "ts", "request_frame", "latency_us", "tls"] {
                o.as_object_mut().unwrap().remove(k);
            }
            o.to_string()
        };
        let mut a: Vec<String> = tls_json.iter().map(strip).collect();
        let mut b: Vec<String> = plain.json.iter().map(strip).collect();
        a.sort();
        b.sort();
        assert_eq!(a.len(), b.len(), "{name}");
        assert_eq!(a, b, "{name}");
        let votes = tls_json.iter().filter(|o| o["api_key"] == 52).count();
        let fcs = tls_json.iter().filter(|o| o["api_key"] == 10).count();
        assert!(votes + fcs > 0, "{name}");
    }
}

#[test]
fn without_keys_nothing_is_dissected_and_the_reason_is_given() {
    let (objs, stderr) = ndjson(&cap("tls-kafka-python", "pcap"), None);
    assert!(objs.is_empty());
    assert!(
        stderr.contains("TLS: 30 connections: 30 no key in the key log"),
        "{stderr}"
    );
}

#[test]
fn sslkeylogfile_is_used_when_the_flag_is_absent() {
    let out = Command::new(env!("CARGO_BIN_EXE_kwire"))
        .args([
            "read",
            cap("tls-resumption", "pcap").to_str().unwrap(),
            "-q",
        ])
        .env("SSLKEYLOGFILE", cap("tls-resumption", "keys"))
        .env("KWIRE_SCHEMAS", "")
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(text.lines().count(), 8, "{text}");
    assert!(
        text.lines().all(|l| l.contains(" tls ApiVersions")),
        "{text}"
    );
}

#[test]
fn an_unreadable_key_log_is_an_error() {
    let out = kwire(&[
        "read",
        cap("tls-resumption", "pcap").to_str().unwrap(),
        "--tls-keylog",
        "/nonexistent/keys.log",
    ]);
    assert_eq!(out.code, 1);
    assert!(
        out.stderr.contains("cannot read the TLS key log"),
        "{}",
        out.stderr
    );
}

#[test]
fn a_key_log_missing_one_session_leaves_only_that_connection_out() {
    let keys = std::fs::read_to_string(cap("tls-kafka-python", "keys")).unwrap();
    let first = keys
        .lines()
        .find(|l| l.starts_with("CLIENT_RANDOM"))
        .unwrap()
        .split(' ')
        .nth(1)
        .unwrap()
        .to_string();
    let fewer: String = keys
        .lines()
        .filter(|l| !l.contains(&first))
        .map(|l| format!("{l}\n"))
        .collect();
    let file = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(file.path(), fewer).unwrap();
    let r = run_lib(&cap("tls-kafka-python", "pcap"), config(Some(file.path())));
    let t = &r.stats.tls;
    assert_eq!(t.outcomes.get(&Outcome::Decrypted), Some(&29));
    assert_eq!(t.outcomes.get(&Outcome::NoKey), Some(&1));
    let want = tshark("tls-kafka-python");
    let got = lists(&r.json);
    assert!(got.0.is_subset(&want.0) && got.1.is_subset(&want.1));
    assert!(got.0.len() < want.0.len());
}

#[test]
fn wrong_keys_fail_authentication_and_show_nothing() {
    let keys = std::fs::read_to_string(cap("tls-kafka-python", "keys")).unwrap();
    // Every secret changed in its last hex digit.
    let wrong: String = keys
        .lines()
        .map(|l| {
            let mut l = l.to_string();
            if let Some(c) = l.pop() {
                l.push(if c == '0' { '1' } else { '0' });
            }
            l + "\n"
        })
        .collect();
    let file = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(file.path(), wrong).unwrap();
    let (objs, stderr) = ndjson(&cap("tls-kafka-python", "pcap"), Some(file.path()));
    assert!(objs.is_empty(), "{objs:?}");
    assert!(
        stderr.contains("30 records failed authentication"),
        "{stderr}"
    );
}

#[test]
fn pcapng_decryption_secrets_are_used() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("with-secrets.pcapng");
    let made = Command::new("editcap")
        .arg("--inject-secrets")
        .arg(format!("tls,{}", cap("tls-resumption", "keys").display()))
        .arg(cap("tls-resumption", "pcap"))
        .arg(&out)
        .status()
        .is_ok_and(|s| s.success());
    if !made {
        eprintln!("skipped: editcap is missing");
        return;
    }
    let (objs, _) = ndjson(&out, None);
    assert_eq!(objs.len(), 8);
}

// ---- damaged and hostile inputs -------------------------------------------

/// The packets of a capture, for rewriting.
fn packets(path: &Path) -> (u32, Vec<(i64, Vec<u8>)>) {
    let mut src = Source::open_file(path).unwrap();
    let mut out = Vec::new();
    let mut link = 1;
    while let Some(Ok(p)) = src.next_packet() {
        link = p.linktype as u32;
        out.push((p.ts_ns(), p.data.to_vec()));
    }
    (link, out)
}

fn write(link: u32, pkts: &[(i64, Vec<u8>)]) -> tempfile::NamedTempFile {
    let file = tempfile::NamedTempFile::new().unwrap();
    let mut w = PcapWriter::new(file.as_file(), link, TsPrecision::Nano, 262_144).unwrap();
    for (ts, d) in pkts {
        w.write_packet(*ts, d).unwrap();
    }
    file
}

/// TCP payload range of an Ethernet/IPv4 packet.
fn payload(p: &[u8]) -> std::ops::Range<usize> {
    let ip = 14 + usize::from(p[14] & 0x0f) * 4;
    let tcp = ip + usize::from(p[ip + 12] >> 4) * 4;
    tcp..p.len()
}

/// Messages as comparable across copies whose packet numbers differ:
/// requests with their body, responses by connection and correlation id.
fn idents(objs: &[Value]) -> BTreeSet<String> {
    objs.iter()
        .map(|o| match o["kind"].as_str() {
            Some("request") => format!(
                "{} {} {} {} {} {}",
                o["src"], o["dst"], o["api_key"], o["api_version"], o["correlation_id"], o["body"]
            ),
            _ => format!("{} {} {}", o["src"], o["dst"], o["correlation_id"]),
        })
        .collect()
}

/// Whatever kwire shows of a damaged copy, the intact file has too (and the
/// intact file's messages are tshark's, as tested above); nothing is malformed.
fn nothing_invented(file: &Path, keys: &Path) -> (kwire::tls::TlsStats, usize) {
    let intact = run_lib(&cap("tls-kafka-python", "pcap"), config(Some(keys)));
    let want = idents(&intact.json);
    let r = run_lib(file, config(Some(keys)));
    let got = idents(&r.json);
    assert!(got.is_subset(&want), "{:?}", got.difference(&want));
    assert_eq!(r.stats.malformed, 0);
    (r.stats.tls, got.len())
}

#[test]
fn damaged_copies_invent_nothing() {
    let (link, pkts) = packets(&cap("tls-kafka-python", "pcap"));
    let keys = cap("tls-kafka-python", "keys");
    let with_data: Vec<usize> = (0..pkts.len())
        .filter(|&i| !payload(&pkts[i].1).is_empty())
        .collect();
    // A flipped bit in each of 20 records: authentication fails there only.
    let mut flipped = pkts.clone();
    for &i in with_data.iter().step_by(with_data.len() / 20) {
        let r = payload(&flipped[i].1);
        flipped[i].1[r.end - 1] ^= 0x01;
    }
    let (t, n) = nothing_invented(write(link, &flipped).path(), &keys);
    assert!(t.failed_records >= 15, "{t:?}");
    assert!(n > 200, "{n}");
    // Every 7th packet with data lost: gaps, resyncs, and still nothing invented.
    let lossy: Vec<(i64, Vec<u8>)> = pkts
        .iter()
        .enumerate()
        .filter(|(i, _)| !with_data.contains(i) || i % 7 != 0)
        .map(|(_, p)| p.clone())
        .collect();
    let (t, n) = nothing_invented(write(link, &lossy).path(), &keys);
    assert!(t.gaps > 0 && t.resyncs > 0, "{t:?}");
    assert!(n > 100, "{n}: decryption goes on after the holes");
    // Cut short at several points, mid-record included.
    for n in [100, 333, 600] {
        let mut short = pkts[..n].to_vec();
        let last = short.last_mut().unwrap();
        let r = payload(&last.1);
        let keep = r.start + (r.end - r.start) / 2;
        last.1.truncate(keep);
        nothing_invented(write(link, &short).path(), &keys);
    }
    // Joined mid-stream: TLS 1.3 is found again from the key log; nothing invented.
    let (t, n) = nothing_invented(write(link, &pkts[300..]).path(), &keys);
    assert!(t.outcomes.contains_key(&Outcome::Decrypted));
    assert!(n > 100, "{n}");
}

fn rfc_handshake_flow() -> Flow {
    let mut f = flow();
    f.syn_handshake();
    // A ClientHello that is real enough: version, random, one suite.
    let mut ch = vec![1, 0, 0, 41, 3, 3];
    ch.extend([0x11; 32]);
    ch.extend([0, 0, 2, 0x13, 0x01, 1, 0]);
    let mut rec = vec![22, 3, 1, 0, ch.len() as u8];
    rec.extend(ch);
    f.client_send(&rec);
    f
}

#[test]
fn record_longer_than_the_cap_and_garbage_like_a_handshake() {
    // 2^14 + 1000 bytes declared: not a TLS record; nothing shown, no panic.
    let mut f = rfc_handshake_flow();
    let len = (1u32 << 14) + 1000;
    let mut big = vec![23, 3, 3, (len >> 8) as u8, len as u8];
    big.extend(vec![0x42; len as usize]);
    f.client_send(&big);
    f.fin();
    let out = kwire(&["read", pcap(&[&f]).path().to_str().unwrap()]);
    assert_eq!(out.code, 0);
    assert_eq!(out.stdout, "");
    assert!(out.stderr.contains("TLS: 1 connections"), "{}", out.stderr);
    // A stream that starts like a ClientHello and then is noise, both ways.
    let mut g = flow();
    g.syn_handshake();
    let mut x: u64 = 0x2545_F491_4F6C_DD1D;
    let mut noise = vec![22, 3, 1, 0, 60, 1];
    for _ in 0..300_000 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        noise.push(x as u8);
    }
    g.client_send(&noise);
    g.server_send(&noise);
    g.fin();
    let out = kwire(&[
        "read",
        pcap(&[&g]).path().to_str().unwrap(),
        "--tls-keylog",
        cap("tls-kafka-python", "keys").to_str().unwrap(),
    ]);
    assert_eq!(out.code, 0);
    assert_eq!(out.stdout, "");
}

#[test]
fn the_tui_status_bar_counts_decrypted_connections() {
    use kwire::tui::{App, Input, load_all, ui};
    use ratatui::{Terminal, backend::TestBackend, layout::Rect};
    let path = cap("tls-resumption", "pcap");
    let path = path.to_str().unwrap();
    let mut app = App::new(path, false);
    for u in load_all(
        Input::file(path).unwrap(),
        config(Some(&cap("tls-resumption", "keys"))),
    ) {
        app.update(u);
    }
    app.resize(Rect::new(0, 0, 160, 30));
    app.settle();
    let mut t = Terminal::new(TestBackend::new(160, 30)).unwrap();
    t.draw(|f| ui::draw(&app, f)).unwrap();
    let b = t.backend().buffer().clone();
    let screen: String = (0..b.area.height)
        .map(|y| {
            (0..b.area.width)
                .map(|x| b[(x, y)].symbol())
                .collect::<String>()
                + "\n"
        })
        .collect();
    assert!(screen.contains("8/8 msgs"), "{screen}");
    assert!(
        screen.contains("TLS: 4/4 connections decrypted"),
        "{screen}"
    );
}

/// The filter's `tls` field is the NDJSON's `tls`: `-Y 'tls == "TLSv1.3"'` keeps exactly
/// the messages whose object says so, a bare `tls` those carried in TLS, and `-e tls`
/// prints the version.
#[test]
fn the_tls_field_filters_and_prints_as_the_ndjson_says() {
    for name in CAPTURES {
        let (file, keys) = (cap(name, "pcap"), cap(name, "keys"));
        let (objs, _) = ndjson(&file, Some(&keys));
        let frames = |keep: &dyn Fn(&Value) -> bool| -> Vec<u64> {
            objs.iter()
                .filter(|o| keep(o))
                .map(|o| o["frame"].as_u64().unwrap())
                .collect()
        };
        let shown = |filter: &str| -> Vec<u64> {
            let (f, k) = (file.to_str().unwrap(), keys.to_str().unwrap());
            let out = kwire(&[
                "read",
                f,
                "--tls-keylog",
                k,
                "-q",
                "--format",
                "json",
                "-Y",
                filter,
            ]);
            assert_eq!(out.code, 0, "{filter}: {}", out.stderr);
            json_lines(&out.stdout)
                .iter()
                .map(|o| o["frame"].as_u64().unwrap())
                .collect()
        };
        let carried = frames(&|o| o.get("tls").is_some());
        assert!(!carried.is_empty(), "{name}: nothing decrypted");
        assert_eq!(shown("tls"), carried, "{name}: -Y tls");
        assert_eq!(shown("!tls"), frames(&|o| o.get("tls").is_none()), "{name}");
        for v in ["TLSv1.2", "TLSv1.3"] {
            assert_eq!(
                shown(&format!("tls == \"{v}\"")),
                frames(&|o| o["tls"] == v),
                "{name}: -Y tls == {v}"
            );
        }
        let out = kwire(&[
            "read",
            file.to_str().unwrap(),
            "--tls-keylog",
            keys.to_str().unwrap(),
            "-q",
            "--format",
            "fields",
            "-e",
            "frame",
            "-e",
            "tls",
        ]);
        let want: Vec<String> = objs
            .iter()
            .map(|o| format!("{}\t{}", o["frame"], o["tls"].as_str().unwrap_or("")))
            .collect();
        assert_eq!(
            out.stdout.lines().collect::<Vec<_>>(),
            want,
            "{name}: -e tls"
        );
    }
}
