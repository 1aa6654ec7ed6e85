//! Everyday use (issue 18): short summary lines, colour, completions and the man page,
//! and saying why nothing was found.

mod common;

use common::*;
use kwire::codec::{encode_request, encode_response};
use serde_json::{Value, json};

// ---- summary lines stay readable ------------------------------------------------

/// A Vote request over 9 partitions, its response, and a FindCoordinator v6 exchange with
/// 5 keys, one of them 60 characters long.
fn long_lists() -> kwire::synth::Flow {
    let parts: Vec<Value> = (0..9)
        .map(|i| {
            json!({"PartitionIndex": i, "ReplicaEpoch": 5, "ReplicaId": i + 1,
                   "LastOffsetEpoch": 4, "LastOffset": 100 + i, "PreVote": false,
                   "ReplicaDirectoryId": "00000000-0000-4000-8000-000000000001",
                   "VoterDirectoryId": "00000000-0000-4000-8000-000000000002"})
        })
        .collect();
    let vote_req = json!({"ClusterId": "c", "VoterId": 2,
        "Topics": [{"TopicName": "__cluster_metadata", "Partitions": parts}]});
    let answers: Vec<Value> = (0..9)
        .map(|i| {
            json!({"PartitionIndex": i, "ErrorCode": 0, "LeaderId": -1,
                   "LeaderEpoch": 5, "VoteGranted": i % 2 == 0})
        })
        .collect();
    let vote_resp = json!({"ErrorCode": 0,
        "Topics": [{"TopicName": "__cluster_metadata", "Partitions": answers}]});
    let long = "k".repeat(60);
    let keys = [long.as_str(), "a", "b", "c", "d"];
    let fc_req = json!({"KeyType": 0, "CoordinatorKeys": keys});
    let coords: Vec<Value> = keys
        .iter()
        .map(|k| {
            json!({"Key": k, "NodeId": 1, "Host": "b1", "Port": 9092,
                        "ErrorCode": 0, "ErrorMessage": null})
        })
        .collect();
    let fc_resp = json!({"ThrottleTimeMs": 0, "Coordinators": coords});
    let frame = |r: Result<Vec<u8>, _>| -> Vec<u8> { r.unwrap() };
    let mut f = flow();
    f.syn_handshake()
        .client_send(&frame(encode_request(52, 2, 1, Some("ctl"), &vote_req)))
        .server_send(&frame(encode_response(52, 2, 1, &vote_resp)))
        .client_send(&frame(encode_request(10, 6, 2, Some("app"), &fc_req)))
        .server_send(&frame(encode_response(10, 6, 2, &fc_resp)));
    f
}

#[test]
fn summary_lists_show_three_items_and_cut_long_strings() {
    let file = pcap(&[&long_lists()]);
    let (s, j) = summary_and_json(file.path(), &[]);
    let lines: Vec<&str> = s.lines().collect();
    let v = json_lines(&j);
    // Each shown item is the JSON's item at the same place; the count says how many are left.
    let parts = &v[0]["body"]["Topics"][0]["Partitions"];
    let shown: Vec<String> = (0..3)
        .map(|i| {
            let p = &parts[i];
            format!(
                "replica={} epoch={} last={}@{}",
                p["ReplicaId"], p["ReplicaEpoch"], p["LastOffset"], p["LastOffsetEpoch"]
            )
        })
        .collect();
    let more = parts.as_array().unwrap().len() - 3;
    assert!(
        lines[0].ends_with(&format!("  {}, +{more} more → voter 2", shown.join(", "))),
        "{}",
        lines[0]
    );
    let answers = &v[1]["body"]["Topics"][0]["Partitions"];
    let granted = |i: usize| {
        if answers[i]["VoteGranted"] == json!(true) {
            "yes"
        } else {
            "no"
        }
    };
    assert!(
        lines[1].contains(&format!(
            "  granted={} leader=-1 epoch=5, granted={} leader=-1 epoch=5, granted={} leader=-1 epoch=5, +6 more  ",
            granted(0),
            granted(1),
            granted(2)
        )),
        "{}",
        lines[1]
    );
    // The 60-character key is cut to 40 and `…`; the JSON keeps it whole.
    let key = v[2]["body"]["CoordinatorKeys"][0].as_str().unwrap();
    assert_eq!(key.len(), 60);
    let cut = format!("{}…", &key[..40]);
    assert!(
        lines[2].ends_with(&format!("group keys=[{cut}, a, b, +2 more]")),
        "{}",
        lines[2]
    );
    assert!(
        lines[3].contains(&format!(
            "  {cut} → node 1 (b1:9092), a → node 1 (b1:9092), b → node 1 (b1:9092), +2 more  "
        )),
        "{}",
        lines[3]
    );
    assert_eq!(v[3]["body"]["Coordinators"].as_array().unwrap().len(), 5);
    // The tree keeps everything.
    let tree = read(file.path(), &["--format", "tree"]);
    assert!(tree.contains(key));
    assert_eq!(tree.matches("ReplicaId").count(), 9, "{tree}");
}

// ---- colour --------------------------------------------------------------------

/// Requests, responses, an error answer, a malformed message, a warning, and (on a second
/// connection with 150 ms between packets) a slow answer.
fn colourful() -> tempfile::NamedTempFile {
    let mut bad = fc_req(4, 2, "app", "orders");
    bad[19] = 81; // the key array claims 80 elements
    let mut v3 = vote_req(2, 3, "ctrl", true);
    v3[6..8].copy_from_slice(&3i16.to_be_bytes()); // beyond the schema: a warning
    let mut f = flow();
    f.syn_handshake()
        .client_send(&fc_req(4, 1, "app", "ok"))
        .server_send(&fc_resp(4, 1, "ok", 1, "b1", 9092, 15))
        .client_send(&bad)
        .client_send(&v3);
    let mut slow = flow_between("10.0.0.1:50001", SERVER).with_start(1_000_000_000, 150_000_000);
    slow.syn_handshake()
        .client_send(&vote_req(2, 4, "ctrl", false))
        .server_send(&vote_resp(2, 4, true, 0));
    pcap(&[&f, &slow])
}

/// Removes ANSI SGR sequences.
fn strip_sgr(s: &str) -> String {
    let mut out = String::new();
    let mut rest = s;
    while let Some(at) = rest.find("\x1b[") {
        out.push_str(&rest[..at]);
        let end = rest[at..].find('m').unwrap();
        rest = &rest[at + end + 1..];
    }
    out.push_str(rest);
    out
}

#[test]
fn color_always_is_pinned_and_only_adds_escapes() {
    let file = colourful();
    let plain = read(file.path(), &[]);
    let colored = read(file.path(), &["--color", "always"]);
    assert_ne!(colored, plain);
    assert_eq!(strip_sgr(&colored), plain);
    // Tree and JSON never get colour.
    for fmt in ["tree", "json"] {
        assert_eq!(
            read(file.path(), &["--format", fmt, "--color", "always"]),
            read(file.path(), &["--format", fmt])
        );
    }
    insta::assert_snapshot!(colored.replace('\x1b', "\\e"));
}

/// The body of a bundled capture's summary snapshot (today's output).
fn bundled_summary(name: &str) -> String {
    let snap = std::fs::read_to_string(format!(
        "{}/tests/snapshots/captures__{name}__summary.snap",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap();
    let body = snap.splitn(3, "---\n").nth(2).unwrap();
    body.trim_end().to_string()
}

#[test]
fn never_and_piped_output_are_todays_bytes() {
    for name in [
        "kraft-initial-election.pcap",
        "consumer-group-java.pcap",
        "synthetic/find-coordinator-v0-v6.pcap",
    ] {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("captures")
            .join(name);
        let piped = read(&path, &[]);
        let never = read(&path, &["--color", "never"]);
        assert_eq!(never, piped, "{name}");
        assert!(!piped.contains('\x1b'), "{name}");
        assert_eq!(
            piped.trim_end(),
            bundled_summary(&name.replace('/', "__")),
            "{name}"
        );
    }
}

/// `auto` colours a terminal, unless NO_COLOR is set (util-linux `script` gives a pty).
#[test]
fn auto_colours_a_terminal_unless_no_color() {
    let Ok(script) = which("script") else {
        eprintln!("SKIP: no `script` to run kwire on a pseudo-terminal");
        return;
    };
    let file = colourful();
    let cmd = format!(
        "{} read {} -q",
        env!("CARGO_BIN_EXE_kwire"),
        file.path().display()
    );
    let on_tty = |no_color: Option<&str>| {
        let mut c = std::process::Command::new(&script);
        c.args(["-qec", &cmd, "/dev/null"]);
        c.env_remove("NO_COLOR");
        if let Some(v) = no_color {
            c.env("NO_COLOR", v);
        }
        let out = c.output().unwrap();
        assert!(out.status.success(), "{out:?}");
        String::from_utf8(out.stdout).unwrap()
    };
    assert!(on_tty(None).contains("\x1b[31m"));
    assert!(!on_tty(Some("1")).contains('\x1b'));
    // An empty NO_COLOR does not count (no-color.org).
    assert!(on_tty(Some("")).contains("\x1b[31m"));
}

fn which(name: &str) -> Result<std::path::PathBuf, ()> {
    let path = std::env::var_os("PATH").ok_or(())?;
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
        .ok_or(())
}

// ---- progress ------------------------------------------------------------------

/// A pcap just over 32 MiB: 520 non-IP frames of 65,000 bytes (read fast, nothing to decode).
fn big_file() -> tempfile::NamedTempFile {
    let frame = vec![0u8; 65_000];
    let packets: Vec<(i64, Vec<u8>)> = (0..520).map(|i| (i * 1000, frame.clone())).collect();
    let file = pcap_packets(kwire::synth::Link::Ethernet, &packets);
    assert!(file.as_file().metadata().unwrap().len() > 32 << 20);
    file
}

/// Runs `kwire ARGS > /dev/null` on a pseudo-terminal and returns what it drew there.
fn on_pty(args: &str, env: &[(&str, &str)]) -> Option<String> {
    let script = which("script").ok()?;
    let mut c = std::process::Command::new(script);
    c.args([
        "-qec",
        &format!("{} {args} > /dev/null", env!("CARGO_BIN_EXE_kwire")),
        "/dev/null",
    ]);
    c.env_remove("CI").env_remove("NO_COLOR");
    for (k, v) in env {
        c.env(k, v);
    }
    let out = c.output().unwrap();
    assert!(out.status.success(), "{out:?}");
    Some(String::from_utf8_lossy(&out.stdout).into_owned())
}

#[test]
fn progress_bar_only_on_a_terminal_for_big_files() {
    let big = big_file();
    let path = big.path().to_str().unwrap();
    // Piped: never a bar, the report only.
    for cmd in ["read", "stats"] {
        let out = kwire(&[cmd, path]);
        assert_eq!(out.code, 0, "{out:?}");
        assert!(
            !out.stderr.contains("ETA") && !out.stderr.contains('\x1b'),
            "{}",
            out.stderr
        );
    }
    let Some(read_tty) = on_pty(&format!("read {path}"), &[]) else {
        eprintln!("SKIP: no `script` to run kwire on a pseudo-terminal");
        return;
    };
    assert!(
        read_tty.contains("MiB/32.") && read_tty.contains("messages, ") && read_tty.contains("ETA"),
        "{read_tty}"
    );
    let stats_tty = on_pty(&format!("stats {path}"), &[]).unwrap();
    assert!(stats_tty.contains("ETA"), "{stats_tty}");
    // Never with -q, in CI, or for a small file.
    for (args, env) in [
        (format!("read {path} -q"), vec![]),
        (format!("stats {path}"), vec![("CI", "true")]),
        (
            format!(
                "read {}/captures/kraft-reelection.pcap",
                env!("CARGO_MANIFEST_DIR")
            ),
            vec![],
        ),
    ] {
        let tty = on_pty(&args, &env).unwrap();
        assert!(!tty.contains("ETA"), "{args}: {tty}");
    }
}

// ---- completions and the man page ---------------------------------------------

#[test]
fn completion_scripts_are_generated_and_bash_accepts_its_own() {
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let out = kwire(&["completions", shell]);
        assert_eq!(out.code, 0, "{shell}: {out:?}");
        assert_eq!(out.stderr, "", "{shell}");
        for word in ["kwire", "read", "stats", "color"] {
            assert!(out.stdout.contains(word), "{shell} script lacks {word}");
        }
        if shell == "bash" {
            let mut check = std::process::Command::new("bash")
                .arg("-n")
                .stdin(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .expect("bash is needed to check the bash script");
            use std::io::Write as _;
            check
                .stdin
                .take()
                .unwrap()
                .write_all(out.stdout.as_bytes())
                .unwrap();
            let res = check.wait_with_output().unwrap();
            assert!(
                res.status.success(),
                "bash -n: {}",
                String::from_utf8_lossy(&res.stderr)
            );
        }
    }
    assert_ne!(kwire(&["completions", "tcsh"]).code, 0);
}

#[test]
fn man_page_is_roff_with_every_command() {
    let out = kwire(&["man"]);
    assert_eq!(out.code, 0, "{out:?}");
    assert!(out.stdout.contains(".TH kwire 1"), "{}", out.stdout);
    for cmd in [
        "read",
        "live",
        "stats",
        "tui",
        "interfaces",
        "completions",
        "man",
    ] {
        assert!(
            out.stdout.contains(&format!(".SS \"kwire {cmd}\"")),
            "{cmd}"
        );
    }
    // groff, when present, formats it without a warning.
    if which("groff").is_ok() {
        let mut g = std::process::Command::new("groff")
            .args(["-man", "-ww", "-z"])
            .stdin(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        use std::io::Write as _;
        g.stdin
            .take()
            .unwrap()
            .write_all(out.stdout.as_bytes())
            .unwrap();
        let res = g.wait_with_output().unwrap();
        assert!(res.status.success());
        assert_eq!(String::from_utf8_lossy(&res.stderr), "");
    }
}

// ---- saying why nothing was found ---------------------------------------------

/// Text and random bytes on ports that are not Kafka's: 3 connections to 9094, 2 to
/// 443, 1 to 22.
fn not_kafka() -> tempfile::NamedTempFile {
    let mut flows = Vec::new();
    for (i, port) in [9094, 443, 9094, 22, 9094, 443].into_iter().enumerate() {
        let mut f = flow_between(
            &format!("10.0.0.1:{}", 50000 + i),
            &format!("10.0.0.2:{port}"),
        )
        .with_start(i as i64 * 1_000_000, 1000);
        f.syn_handshake()
            .client_send(b"GET / HTTP/1.1\r\nHost: example\r\n\r\n")
            .server_send(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
            .client_send(&[0x8f, 0x11, 0xc3, 0x5a, 0x07, 0x99, 0x42, 0x10])
            .fin();
        flows.push(f);
    }
    let refs: Vec<&kwire::synth::Flow> = flows.iter().collect();
    pcap(&refs)
}

const NOTHING: &str = "kwire: no Kafka traffic found in 6 TCP connections; the busiest ports were 9094 (3 connections), 443 (2), 22 (1); try --port 9094\n";

#[test]
fn nothing_found_says_where_the_traffic_was() {
    let file = not_kafka();
    let path = file.path().to_str().unwrap();
    for cmd in ["read", "stats"] {
        let out = kwire(&[cmd, path]);
        assert_eq!(out.code, 0, "{out:?}");
        assert!(out.stderr.ends_with(NOTHING), "{cmd}: {}", out.stderr);
        assert!(
            out.stderr
                .contains("6 TCP connections (0 Kafka, 6 not Kafka)"),
            "{}",
            out.stderr
        );
        // -q silences it with the rest of the statistics.
        assert_eq!(kwire(&[cmd, path, "-q"]).stderr, "");
    }
    // A port already given is not suggested again.
    let out = kwire(&["read", path, "--port", "9094"]);
    assert!(
        out.stderr.ends_with("443 (2), 22 (1); try --port 443\n"),
        "{}",
        out.stderr
    );
    // Kafka traffic: no such line.
    let kafka = pcap(&[&long_lists()]);
    let out = kwire(&["read", kafka.path().to_str().unwrap()]);
    assert!(!out.stderr.contains("no Kafka traffic"), "{}", out.stderr);
    // No TCP at all.
    let junk = pcap_packets(
        kwire::synth::Link::Ethernet,
        &[(0, vec![0u8; 60]), (1, vec![0u8; 60])],
    );
    let out = kwire(&["read", junk.path().to_str().unwrap()]);
    assert!(
        out.stderr
            .ends_with("kwire: no Kafka traffic found: no TCP connections in 2 packets\n"),
        "{}",
        out.stderr
    );
}

/// `live` with a capture filter that matches nothing says so after 10 s, once.
#[test]
fn live_filter_matching_nothing_is_reported() {
    if let Err(e) = pcap::Capture::from_device("lo").and_then(|c| c.open()) {
        eprintln!("SKIP: cannot capture on lo ({e}); run as root or with CAP_NET_RAW");
        return;
    }
    // Port 1 (tcpmux) carries nothing on a test machine.
    let out = kwire(&[
        "live",
        "-i",
        "lo",
        "-f",
        "tcp port 1",
        "--duration",
        "11",
        "-q",
    ]);
    assert_eq!(out.code, 0, "{out:?}");
    let said = "kwire: no packet on lo has matched the capture filter \"tcp port 1\" in 10 s; still capturing (see -i and -f)\n";
    assert_eq!(out.stderr.matches(said).count(), 1, "{}", out.stderr);
    assert_eq!(out.stdout, "");
}
