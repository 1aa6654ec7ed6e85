//! The `kwire read` command as a program: exit codes and stderr for bad
//! input, standard input, damaged captures, hostile strings, and the
//! end-of-run statistics.

mod common;

use common::*;
use kwire::synth::Link;
use serde_json::json;

/// A short FindCoordinator and Vote exchange.
fn small_flow() -> kwire::synth::Flow {
    let mut f = flow();
    f.syn_handshake()
        .client_send(&fc_req(1, 1, "app", "orders"))
        .server_send(&fc_resp(1, 1, "orders", 2, "b2", 9092, 0))
        .client_send(&vote_req(2, 2, "ctrl", false))
        .server_send(&vote_resp(2, 2, true, 0))
        .fin();
    f
}

/// Checks an unusable-input failure: exit 1, nothing on stdout, a reason and a hint.
fn assert_unusable(out: &Out, reason_has: &str) {
    assert_eq!(out.code, 1, "{out:?}");
    assert_eq!(out.stdout, "");
    let lines: Vec<&str> = out.stderr.lines().collect();
    assert_eq!(lines.len(), 2, "a reason and a hint: {:?}", out.stderr);
    assert!(lines[0].starts_with("kwire: cannot read "), "{}", lines[0]);
    assert!(lines[0].contains(reason_has), "{}", lines[0]);
    assert!(lines[1].starts_with("hint: "), "{}", lines[1]);
}

#[test]
fn missing_file_exits_1() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("nope.pcap");
    let out = kwire(&["read", path.to_str().unwrap()]);
    assert_unusable(&out, "No such file");
}

#[test]
fn a_file_that_is_not_a_capture_exits_1() {
    let file = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(file.path(), "GET / HTTP/1.1\r\nHost: example\r\n\r\n").unwrap();
    let out = kwire(&["read", file.path().to_str().unwrap()]);
    assert_unusable(&out, "format");
    // An empty file is not a capture either.
    std::fs::write(file.path(), "").unwrap();
    let out = kwire(&["read", file.path().to_str().unwrap()]);
    assert_eq!(out.code, 1, "{out:?}");
    assert_eq!(out.stdout, "");
}

#[test]
fn a_bad_option_value_is_refused_before_reading() {
    let file = pcap(&[&small_flow()]);
    let out = kwire(&[
        "read",
        file.path().to_str().unwrap(),
        "--api",
        "no-such-api",
    ]);
    assert_eq!(out.code, 1, "{out:?}");
    assert_eq!(out.stdout, "");
    assert_eq!(out.stderr, "kwire: unknown API \"no-such-api\"\n");
    let out = kwire(&["read", file.path().to_str().unwrap(), "-Y", "corr=x"]);
    assert_eq!(out.code, 1, "{out:?}");
    // One line with the column, the filter with a caret under it, a hint.
    assert_eq!(
        out.stderr,
        "kwire: corr is an integer, but x is not a number at column 6\n  corr=x\n       ^\nhint: write a decimal or 0x hex integer\n"
    );
}

#[test]
fn a_capture_cut_mid_record_prints_what_came_before_and_exits_2() {
    let f = small_flow();
    let file = pcap(&[&f]);
    let whole = std::fs::read(file.path()).unwrap();
    let full = read(file.path(), &[]);
    // Cut 10 bytes into the data of packet 7 (the Vote response): its record
    // header promises more bytes than the file holds.
    let mut off = 24;
    for (_, data) in &f.packets()[..6] {
        off += 16 + data.len();
    }
    let cut = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(cut.path(), &whole[..off + 16 + 10]).unwrap();
    let out = kwire(&["read", cut.path().to_str().unwrap()]);
    assert_eq!(out.code, 2, "{out:?}");
    // The first three messages completed before packet 7.
    let before: String = full.lines().take(3).map(|l| format!("{l}\n")).collect();
    assert_eq!(out.stdout, before);
    assert_eq!(
        out.stderr.lines().last(),
        Some("kwire: capture truncated at packet 7")
    );
    // The statistics still come first, counting the 6 packets read.
    assert!(
        out.stderr
            .starts_with("kwire: 6 packets, 1 TCP connections"),
        "{}",
        out.stderr
    );
    // Cut inside a record header instead.
    std::fs::write(cut.path(), &whole[..off + 5]).unwrap();
    let out = kwire(&["read", cut.path().to_str().unwrap(), "-q"]);
    assert_eq!(out.code, 2, "{out:?}");
    assert_eq!(out.stdout, before);
    assert_eq!(out.stderr, "kwire: capture truncated at packet 7\n");
}

#[test]
fn standard_input() {
    let f = small_flow();
    let file = pcap(&[&f]);
    let bytes = std::fs::read(file.path()).unwrap();
    let out = kwire_with_stdin(&["read", "-", "-q"], Some(&bytes));
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(out.stdout, read(file.path(), &[]));
    insta::assert_snapshot!(out.stdout);
    // pcapng through a pipe too, and JSON.
    let ng = std::fs::read(pcapng(&[&f]).path()).unwrap();
    let out = kwire_with_stdin(&["read", "-", "-q", "--format", "json"], Some(&ng));
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(out.stdout, read(file.path(), &["--format", "json"]));
    // Garbage on stdin is unusable input.
    let out = kwire_with_stdin(&["read", "-"], Some(b"definitely not a capture"));
    assert_eq!(out.code, 1, "{out:?}");
    assert!(
        out.stderr.starts_with("kwire: cannot read -: "),
        "{}",
        out.stderr
    );
}

const HOSTILE: &str = "\x1b]0;pwned\x07\x1b[2J";

#[test]
fn hostile_strings_are_escaped_in_text_and_exact_in_json() {
    let client = format!("app{HOSTILE}");
    let host = format!("evil{HOSTILE}.example");
    let key = format!("grp{HOSTILE}");
    let mut f = flow();
    f.syn_handshake()
        .client_send(&fc_req(4, 1, &client, &key))
        .server_send(&fc_resp(4, 1, &key, 7, &host, 9092, 0))
        .client_send(&fc_req(2, 2, &client, &key))
        .server_send(&fc_resp(2, 2, &key, 7, &host, 9092, 0))
        // A request kwire has no schema for shows its client id in the summary.
        .client_send(&raw_req(3, 1, 3, &client, "00000000"))
        .server_send(&raw_resp(3, 1, 3, "0000000000000000"));
    let file = pcap(&[&f]);
    let (s, j) = summary_and_json(file.path(), &[]);
    let tree = read(file.path(), &["--format", "tree"]);
    for text in [&s, &tree] {
        assert!(!text.contains('\x1b') && !text.contains('\x07'), "{text}");
        assert!(text.contains("\\x1b]0;pwned\\x07\\x1b[2J"));
    }
    insta::assert_snapshot!("hostile_summary", s);
    insta::assert_snapshot!("hostile_tree", tree);
    // JSON keeps the exact strings (escaped only as JSON requires).
    let v = json_lines(&j);
    assert_eq!(v[0]["client_id"], json!(client));
    assert_eq!(v[0]["body"]["CoordinatorKeys"], json!([key]));
    assert_eq!(v[1]["body"]["Coordinators"][0]["Host"], json!(host));
    assert_eq!(v[3]["body"]["Host"], json!(host));
    assert_eq!(v[4]["client_id"], json!(client));
    assert!(j.contains(r#""client_id":"app\u001b]0;pwned\u0007\u001b[2J""#));
    assert!(!j.contains('\x1b'));
}

#[test]
fn end_of_run_statistics_on_stderr() {
    // Two connections: a clean one and one with a lost segment and a conflicting
    // retransmission; plus a non-Kafka conversation on an odd port.
    let clean = small_flow();
    let mut rough = flow_between("10.0.0.5:40000", "10.0.0.2:9092")
        .with_mss(20)
        .with_start(2_000_000_000, 1_000_000);
    let req = vote_req(1, 7, "ctrl", false);
    rough
        .syn_handshake()
        .client_send(&req)
        .server_send(&vote_resp(1, 7, false, 0))
        .client_send(&fc_req(0, 8, "app", "g")) // never answered
        .fin();
    let mut forged = req[20..40].to_vec();
    forged[0] ^= 1;
    let forged = rough.build(
        true,
        1001 + 20,
        5001,
        kwire::synth::Flags {
            ack: true,
            ..Default::default()
        },
        &forged,
    );
    rough.drop_packet(5); // bytes 40..60 of the Vote request
    let mut packets = rough.packets().to_vec();
    packets.insert(5, (packets[4].0 + 1, forged));
    let mut other =
        flow_between("10.0.0.1:50001", "10.0.0.3:8080").with_start(3_000_000_000, 1_000_000);
    other
        .syn_handshake()
        .client_send(b"hello, not kafka")
        .server_send(b"bye");
    let mut all = merged(&[&clean, &other]);
    all.extend(packets);
    all.sort_by_key(|p| p.0);
    let file = pcap_packets(Link::Ethernet, &all);
    let path = file.path().to_str().unwrap();
    let out = kwire(&["read", path]);
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(out.stdout, read(file.path(), &[]), "-q changes only stderr");
    let err = &out.stderr;
    insta::assert_snapshot!(err);
    assert!(err.starts_with(&format!(
        "kwire: {} packets, 3 TCP connections (2 Kafka, 1 not Kafka), 7 Kafka messages\n",
        all.len()
    )));
    assert!(err.contains(
        "  messages: FindCoordinator: 2 requests, 1 responses; Vote: 2 requests, 2 responses\n"
    ));
    assert!(err.contains("  pairing: 3 paired, 0 responses without their request (0 inferred), 1 requests unanswered\n"));
    assert!(err.contains("1 gaps (20 bytes)"));
    assert!(err.contains("1 conflicting retransmissions"));
    assert!(err.contains("1 cut messages"));
    // -c stops early; the statistics cover what was read.
    let out = kwire(&["read", path, "-c", "1"]);
    assert_eq!(out.code, 0);
    assert_eq!(out.stdout.lines().count(), 1);
    assert!(out.stderr.contains("1 Kafka messages"), "{}", out.stderr);
}

/// A retransmission of bytes the peer had acknowledged is not compared with the first
/// copy; the end-of-run report says how many such bytes there were.
#[test]
fn acknowledged_retransmissions_are_reported_as_not_compared() {
    let mut f = flow().with_mss(10);
    f.syn_handshake()
        .client_send(&fc_req(1, 1, "app", "orders"))
        .server_send(&fc_resp(1, 1, "orders", 2, "b2", 9092, 0));
    // The request's first segment again, after the response acknowledged it.
    f.retransmit(3);
    let file = pcap(&[&f]);
    let out = kwire(&["read", file.path().to_str().unwrap()]);
    assert_eq!(out.code, 0, "{out:?}");
    assert!(
        out.stderr.contains(
            "  retransmissions: 10 bytes seen again, 10 of them not compared with the first copy"
        ),
        "{}",
        out.stderr
    );
    // Without such bytes, no such line.
    let clean = pcap(&[&small_flow()]);
    let out = kwire(&["read", clean.path().to_str().unwrap()]);
    assert!(!out.stderr.contains("retransmissions:"), "{}", out.stderr);
}

/// A stderr whose reader has gone (`kwire read F 2>&1 >/dev/null | head -1`): the notes
/// and the end-of-run report are dropped, not a panic (exit 101).
#[test]
fn a_closed_stderr_is_not_a_crash() {
    use std::process::{Command, Stdio};
    let f = pcap_packets(Link::Ethernet, &merged(&[&flow()]));
    let mut child = Command::new(env!("CARGO_BIN_EXE_kwire"))
        .arg("read")
        .arg(f.path())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Close the read end before kwire writes anything.
    drop(child.stderr.take());
    let status = child.wait().unwrap();
    assert_eq!(
        status.code(),
        Some(0),
        "kwire read with stderr closed: {status}"
    );
}
