//! `kwire live` on the loopback interface, against real kernel TCP sockets: a
//! peer speaks Vote and FindCoordinator at every version, kwire must decode
//! each message, pair it, write a pcap that `read` decodes identically, and
//! stop on -c, --duration and SIGINT. Needs CAP_NET_RAW (CI runs as root);
//! without it the tests say SKIP and return.

use kwire::proto::peek_request_header;
use kwire::synth::kafka::{
    Coordinator, Vote, find_coordinator_request, find_coordinator_response, vote_request,
    vote_response,
};
use serde_json::Value;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const KWIRE: &str = env!("CARGO_BIN_EXE_kwire");

/// Whether this process may capture on `lo`; prints why not.
fn can_capture() -> bool {
    match pcap::Capture::from_device("lo").and_then(|c| c.open()) {
        Ok(_) => true,
        Err(e) => {
            eprintln!("SKIP: cannot capture on lo ({e}); run as root or with CAP_NET_RAW");
            false
        }
    }
}

/// Starts `kwire live` and waits until it says it is capturing.
fn start(args: &[&str]) -> Child {
    let mut child = Command::new(KWIRE)
        .env("KWIRE_SCHEMAS", "")
        .arg("live")
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("kwire runs");
    let stderr = child.stderr.take().expect("stderr");
    let mut lines = BufReader::new(stderr).lines();
    let ready = lines.next().and_then(Result::ok).unwrap_or_default();
    assert!(ready.contains("capturing on lo"), "kwire said: {ready}");
    // Keep draining stderr so kwire never blocks on it; hand the rest back at the end.
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let rest: Vec<String> = lines.map_while(Result::ok).collect();
        let _ = tx.send(rest.join("\n"));
    });
    STDERR.with(|s| *s.borrow_mut() = Some(rx));
    child
}

thread_local! {
    static STDERR: std::cell::RefCell<Option<std::sync::mpsc::Receiver<String>>> =
        const { std::cell::RefCell::new(None) };
}

/// Waits (bounded) for kwire to exit; returns (status code, stdout, stderr).
fn finish(mut child: Child, limit: Duration) -> (Option<i32>, String, String) {
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().expect("wait") {
            break s;
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            panic!("kwire live did not stop within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut out = String::new();
    child
        .stdout
        .take()
        .expect("stdout")
        .read_to_string(&mut out)
        .expect("utf-8");
    let err = STDERR
        .with(|s| s.borrow_mut().take())
        .and_then(|rx| rx.recv_timeout(Duration::from_secs(5)).ok())
        .unwrap_or_default();
    (status.code(), out, err)
}

/// Reads one whole Kafka frame from a socket.
fn read_frame(s: &mut TcpStream) -> Option<Vec<u8>> {
    let mut size = [0u8; 4];
    s.read_exact(&mut size).ok()?;
    let mut f = size.to_vec();
    f.resize(4 + i32::from_be_bytes(size) as usize, 0);
    s.read_exact(&mut f[4..]).ok()?;
    Some(f)
}

fn vote(v: i16) -> Vote {
    Vote {
        cluster_id: "live-test-cluster".into(),
        candidate: 1,
        voter: 2,
        epoch: 10 + i32::from(v),
        last_offset: 500,
        last_epoch: 9,
        pre_vote: v == 2,
        granted: v != 1,
        leader: if v == 1 { 3 } else { -1 },
        error: 0,
        leader_endpoint: (v == 1).then(|| ("controller-3".to_string(), 9093)),
    }
}

fn coordinator(v: i16) -> Coordinator {
    Coordinator {
        key: format!("group-v{v}"),
        node: 2,
        host: "broker-2".into(),
        port: 9092,
        error: if v == 2 { 16 } else { 0 },
        message: None,
    }
}

/// Answers every request on one connection, splitting some writes in two.
fn serve(mut s: TcpStream) {
    s.set_nodelay(true).expect("nodelay");
    let mut n = 0;
    while let Some(req) = read_frame(&mut s) {
        let h = peek_request_header(&req).expect("a request header");
        let resp = match h.api_key {
            52 => vote_response(h.api_version, h.correlation_id, &vote(h.api_version)),
            _ => find_coordinator_response(
                h.api_version,
                h.correlation_id,
                &[coordinator(h.api_version)],
            ),
        };
        n += 1;
        if n % 2 == 0 {
            let (a, b) = resp.split_at(resp.len() / 2);
            s.write_all(a).expect("write");
            s.flush().expect("flush");
            std::thread::sleep(Duration::from_millis(2));
            s.write_all(b).expect("write");
        } else {
            s.write_all(&resp).expect("write");
        }
    }
}

/// A consumer asking FindCoordinator v0–6 and a controller asking Vote v0–2.
fn talk(port: u16) {
    let listener_port = port;
    let mut fc = TcpStream::connect(("127.0.0.1", listener_port)).expect("connect");
    fc.set_nodelay(true).expect("nodelay");
    for v in 0..=6i16 {
        let key_type = if v == 1 { 1 } else { 0 };
        let name = format!("group-v{v}");
        let req = find_coordinator_request(v, i32::from(v), "live-consumer", key_type, &[&name]);
        if v == 5 {
            // Coalesced: v5 and v6 leave in one write.
            let mut both = req;
            let next = find_coordinator_request(6, 6, "live-consumer", 0, &["group-v6"]);
            both.extend_from_slice(&next);
            fc.write_all(&both).expect("write");
            read_frame(&mut fc).expect("v5 response");
            read_frame(&mut fc).expect("v6 response");
            break;
        }
        fc.write_all(&req).expect("write");
        read_frame(&mut fc).expect("response");
    }
    let mut ctl = TcpStream::connect(("127.0.0.1", listener_port)).expect("connect");
    ctl.set_nodelay(true).expect("nodelay");
    for v in 0..=2i16 {
        let req = vote_request(v, 100 + i32::from(v), "raft-client-1", &vote(v));
        let (a, b) = req.split_at(7);
        ctl.write_all(a).expect("write");
        ctl.flush().expect("flush");
        std::thread::sleep(Duration::from_millis(2));
        ctl.write_all(b).expect("write");
        read_frame(&mut ctl).expect("vote response");
    }
}

fn json_lines(out: &str) -> Vec<Value> {
    out.lines()
        .map(|l| serde_json::from_str(l).expect("NDJSON"))
        .collect()
}

#[test]
fn live_decodes_pairs_and_writes_a_replayable_pcap() {
    if !can_capture() {
        return;
    }
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let dir = tempfile::tempdir().expect("tempdir");
    let pcap = dir.path().join("live.pcap");
    let filter = format!("tcp port {port}");
    let child = start(&[
        "-i",
        "lo",
        "-f",
        &filter,
        "--port",
        &port.to_string(),
        "--format",
        "json",
        "-w",
        pcap.to_str().expect("utf-8 path"),
        "-c",
        "20",
    ]);
    let server = std::thread::spawn(move || {
        for s in listener.incoming().take(2) {
            let s = s.expect("accept");
            std::thread::spawn(move || serve(s));
        }
    });
    talk(port);
    let (code, out, err) = finish(child, Duration::from_secs(60));
    server.join().expect("server");
    assert_eq!(code, Some(0), "stderr: {err}");
    let msgs = json_lines(&out);
    assert_eq!(msgs.len(), 20, "{out}");
    let mut versions = Vec::new();
    for m in &msgs {
        assert!(m.get("error").is_none(), "{m}");
        assert!(m["body"].is_object(), "{m}");
        if m["kind"] == "response" {
            assert_eq!(m["version_source"], "request", "{m}");
            assert!(
                m["request_frame"].is_u64() && m["latency_us"].is_i64(),
                "{m}"
            );
        } else {
            assert_eq!(m["version_source"], "header");
        }
        versions.push((
            m["api_key"].as_i64().expect("key"),
            m["api_version"].as_i64().expect("version"),
            m["kind"].as_str().expect("kind").to_string(),
        ));
    }
    for v in 0..=6 {
        for kind in ["request", "response"] {
            assert!(
                versions.contains(&(10, v, kind.into())),
                "FindCoordinator v{v} {kind}"
            );
        }
    }
    for v in 0..=2 {
        for kind in ["request", "response"] {
            assert!(versions.contains(&(52, v, kind.into())), "Vote v{v} {kind}");
        }
    }
    // Bodies are what the peer sent.
    let v2 = msgs
        .iter()
        .find(|m| m["api_key"] == 10 && m["api_version"] == 2 && m["kind"] == "response")
        .expect("FindCoordinator v2 response");
    assert_eq!(v2["body"]["ErrorCode"], 16);
    let v1 = msgs
        .iter()
        .find(|m| m["api_key"] == 52 && m["api_version"] == 1 && m["kind"] == "response")
        .expect("Vote v1 response");
    assert_eq!(
        v1["body"]["NodeEndpoints"][0]["Host"], "controller-3",
        "{v1}"
    );
    let pre = msgs
        .iter()
        .find(|m| m["api_key"] == 52 && m["api_version"] == 2 && m["kind"] == "request")
        .expect("Vote v2 request");
    assert_eq!(pre["body"]["Topics"][0]["Partitions"][0]["PreVote"], true);
    assert!(
        err.contains("libpcap:"),
        "stats name libpcap's counters: {err}"
    );

    // The written file decodes to exactly the same messages.
    let replay = Command::new(KWIRE)
        .env("KWIRE_SCHEMAS", "")
        .args([
            "read",
            "--format",
            "json",
            "-q",
            "--port",
            &port.to_string(),
        ])
        .arg(&pcap)
        .output()
        .expect("kwire read");
    assert!(replay.status.success());
    assert_eq!(String::from_utf8_lossy(&replay.stdout), out);
}

#[test]
fn duration_and_sigint_stop_cleanly() {
    if !can_capture() {
        return;
    }
    // Nothing listens on this port: the capture is idle and must still stop on time.
    let port = TcpListener::bind("127.0.0.1:0")
        .expect("bind")
        .local_addr()
        .expect("addr")
        .port();
    let filter = format!("tcp port {port}");
    let child = start(&["-i", "lo", "-f", &filter, "--duration", "1"]);
    let (code, out, err) = finish(child, Duration::from_secs(20));
    assert_eq!(code, Some(0), "{err}");
    assert!(out.is_empty());
    assert!(err.contains("0 Kafka messages"), "{err}");

    let child = start(&["-i", "lo", "-f", &filter]);
    let pid = child.id().to_string();
    let sent = Command::new("kill")
        .args(["-INT", &pid])
        .status()
        .expect("kill");
    assert!(sent.success());
    let (code, _, err) = finish(child, Duration::from_secs(20));
    assert_eq!(code, Some(0), "{err}");
    assert!(err.contains("libpcap:"), "{err}");
}

#[test]
fn capture_errors_are_one_line_with_a_hint() {
    let out = Command::new(KWIRE)
        .env("KWIRE_SCHEMAS", "")
        .args(["live", "-i", "no-such-iface0"])
        .output()
        .expect("kwire");
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no interface \"no-such-iface0\""), "{err}");
    assert!(
        err.contains("hint: interfaces here:") && err.contains("lo"),
        "{err}"
    );
    if !can_capture() {
        return;
    }
    let out = Command::new(KWIRE)
        .env("KWIRE_SCHEMAS", "")
        .args(["live", "-i", "lo", "-f", "tcp port"])
        .output()
        .expect("kwire");
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("libpcap rejects the capture filter"), "{err}");
    assert!(err.contains("syntax error"), "{err}");
}
