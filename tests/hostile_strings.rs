//! Strings from the wire that attack terminals: an OSC title change and a
//! screen clear, a right-to-left override (U+202E) and a C1 control
//! sequence introducer (U+009B), in a client id and in a host name.
//! Summary and tree show them visibly escaped, exactly as pinned here;
//! NDJSON keeps them exact (serde_json gives back the original string).

mod common;

use common::*;
use serde_json::Value;

/// An OSC title change, a screen clear, a bidi override and a C1 CSI.
const HOSTILE: &str = "\x1b]0;pwned\x07\x1b[2J|\u{202e}gpj.exe|\u{9b}31m";
/// How the text views show it.
const SHOWN: &str = r"\x1b]0;pwned\x07\x1b[2J|\u{202e}gpj.exe|\u{9b}31m";

fn capture() -> tempfile::NamedTempFile {
    let client = format!("app{HOSTILE}");
    let host = format!("b{HOSTILE}");
    let mut f = flow();
    f.syn_handshake()
        .client_send(&fc_req(4, 1, &client, "g"))
        .server_send(&fc_resp(4, 1, "g", 7, &host, 9092, 0))
        // A request kwire has no schema for shows its client id in the summary.
        .client_send(&raw_req(3, 1, 2, &client, "00000000"))
        .fin();
    pcap(&[&f])
}

/// No terminal control may reach the text views as itself.
fn assert_inert(text: &str) {
    for c in ['\x1b', '\x07', '\u{202e}', '\u{9b}'] {
        assert!(!text.contains(c), "{c:?} passed through: {text}");
    }
}

#[test]
fn summary_escapes_them_visibly() {
    let s = read(capture().path(), &[]);
    assert_inert(&s);
    let lines: Vec<&str> = s.lines().collect();
    assert_eq!(
        lines,
        [
            "    4  0.003000  10.0.0.1:50000 → 10.0.0.2:9092  FindCoordinator v4 request  corr=1  group keys=[g]".to_string(),
            format!(
                "    5  0.004000  10.0.0.2:9092 → 10.0.0.1:50000  FindCoordinator v4 response corr=1  g → node 7 (b{SHOWN}:9092)  1000µs"
            ),
            format!(
                "    6  0.005000  10.0.0.1:50000 → 10.0.0.2:9092  Metadata v1 request  corr=2  client=app{SHOWN}"
            ),
        ]
    );
}

#[test]
fn tree_escapes_them_visibly() {
    let t = read(capture().path(), &["--format", "tree"]);
    assert_inert(&t);
    let client_line = t.lines().find(|l| l.contains("client_id")).unwrap();
    assert_eq!(
        client_line,
        format!(
            "|   +-- client_id string = \"app{SHOWN}\" (int16 len=34) [0x000c, 36B] always a non-flexible int16-prefixed string"
        )
    );
    let host_line = t.lines().find(|l| l.contains("Host")).unwrap();
    assert_eq!(
        host_line,
        format!(
            "    |       +-- Host string = \"b{SHOWN}\" (compact, len+1=33) [0x0014, 33B] The host name."
        )
    );
}

#[test]
fn json_keeps_them_exact() {
    let j = read(capture().path(), &["--format", "json"]);
    // C0 controls are \u escapes, as JSON requires; U+202E and U+009B are valid
    // string content, kept as UTF-8 (the contract: strings exact, JSON escaping only).
    assert!(!j.contains('\x1b') && !j.contains('\x07'), "{j}");
    let v: Vec<Value> = json_lines(&j);
    assert_eq!(v[0]["client_id"].as_str(), Some(&*format!("app{HOSTILE}")));
    assert_eq!(
        v[1]["body"]["Coordinators"][0]["Host"].as_str(),
        Some(&*format!("b{HOSTILE}"))
    );
    assert!(
        j.contains(
            "\"client_id\":\"app\\u001b]0;pwned\\u0007\\u001b[2J|\u{202e}gpj.exe|\u{9b}31m\""
        ),
        "{j}"
    );
    assert_eq!(v[2]["client_id"].as_str(), Some(&*format!("app{HOSTILE}")));
    // Every line round-trips through serde_json unchanged.
    for line in j.lines() {
        let v: Value = serde_json::from_str(line).unwrap();
        let again = serde_json::to_string(&v).unwrap();
        assert_eq!(serde_json::from_str::<Value>(&again).unwrap(), v);
    }
}
