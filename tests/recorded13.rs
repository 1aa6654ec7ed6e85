//! The issue-13 recordings from a real Kafka 4.4 (`captures/record/record.sh`): topic
//! admin, SASL PLAIN and SCRAM-SHA-256, a rebalancing group, and Produce/Fetch with
//! topic ids. With Kafka's schemas found as users find them (discovery of the
//! kafka-clients jars), every message decodes, and the per-API/version counts and
//! error names equal what Kafka's own parsers print (`captures/verify/<name>.txt`,
//! written by `Verify.java`). SASL secrets stay redacted unless `--show-secrets`.
//!
//! Without a kafka-clients jar these tests say SKIP, and fail under `CI=true`.

use kwire::Search;
use serde_json::Value as Json;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The new captures and the Kafka ports Verify was given for each.
const CAPTURES: &[&str] = &[
    "topic-admin",
    "sasl-plain-scram",
    "group-rebalance",
    "produce-fetch-topic-ids",
];

/// The test passwords of `record.sh sasl-plain-scram`.
const SECRETS: &[&str] = &["kwire-plain-test-secret", "kwire-scram-test-secret"];

fn skip(why: &str) {
    let msg = format!(
        "SKIP: {why}; get one with `mvn dependency:get -Dartifact=org.apache.kafka:kafka-clients:4.4.0`"
    );
    if std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!("{msg} (CI=true: the jars are required)");
    }
    eprintln!("\n*** {msg} ***\n");
}

fn jar() -> Option<PathBuf> {
    Search::from_env(Vec::new())
        .paths()
        .0
        .into_iter()
        .find(|p| p.to_string_lossy().ends_with("kafka-clients-4.4.0.jar"))
}

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn pcap(name: &str) -> String {
    root()
        .join("captures")
        .join(format!("{name}.pcap"))
        .to_str()
        .unwrap()
        .to_owned()
}

/// kwire with the environment as a user has it: schemas by discovery.
fn kwire(args: &[&str]) -> (String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_kwire"))
        .env_remove("KWIRE_SCHEMAS")
        .args(args)
        .output()
        .unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(0), "{args:?}: {stderr}");
    (stdout, stderr)
}

fn json_lines(s: &str) -> Vec<Json> {
    s.lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

// ---- what Kafka's parsers said ---------------------------------------------

/// One `captures/verify/<name>.txt`.
#[derive(Debug)]
struct Truth {
    /// "Metadata v13" -> requests.
    requests: BTreeMap<String, u64>,
    /// "Metadata" -> responses matched (all versions).
    responses: BTreeMap<String, u64>,
    /// "Metadata UNKNOWN_TOPIC_OR_PARTITION" -> count.
    errors: BTreeMap<String, u64>,
    /// The per-message lines, e.g. `#11 SaslAuthenticate v2 req corr=… authBytes=36 bytes`.
    details: Vec<String>,
}

/// "A v1: 2, B v3: 4" as a map.
fn counts(list: &str) -> BTreeMap<String, u64> {
    if list == "none" {
        return BTreeMap::new();
    }
    list.split(", ")
        .map(|kv| {
            let (k, v) = kv.rsplit_once(": ").unwrap();
            (k.to_owned(), v.parse().unwrap())
        })
        .collect()
}

fn truth(name: &str) -> Truth {
    let path = root().join("captures/verify").join(format!("{name}.txt"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
    let field = |label: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(label))
            .unwrap_or_else(|| panic!("{name}: no `{label}` line"))
    };
    assert_eq!(field("file: "), format!("{name}.pcap"));
    let unparsed = field("unparsed frames: ");
    assert!(
        unparsed.starts_with("0,") && unparsed.contains("request in the capture: 0,"),
        "{name}: Kafka's parsers left frames: {unparsed}"
    );
    let mut responses = BTreeMap::new();
    for (k, v) in counts(field("responses matched: ")) {
        let api = k.rsplit_once(' ').unwrap().0.to_owned();
        *responses.entry(api).or_default() += v;
    }
    Truth {
        requests: counts(field("requests (api vN: count): ")),
        responses,
        errors: counts(field("errors in responses: ")),
        details: text
            .lines()
            .filter_map(|l| l.strip_prefix("  #"))
            .map(str::to_owned)
            .collect(),
    }
}

/// kwire's view in the same shape, from `kwire stats --format json`.
fn kwire_counts(name: &str) -> Truth {
    let (out, _) = kwire(&["stats", "-q", "--format", "json", &pcap(name)]);
    let stats: Json = serde_json::from_str(&out).unwrap();
    let mut t = Truth {
        requests: BTreeMap::new(),
        responses: BTreeMap::new(),
        errors: BTreeMap::new(),
        details: Vec::new(),
    };
    for api in stats["apis"].as_array().unwrap() {
        let n = api["api_name"].as_str().unwrap();
        assert_eq!(api["malformed"], 0, "{name}: {api}");
        assert_eq!(api["unanswered"], 0, "{name}: {api}");
        assert_eq!(
            api["decoded_responses"], api["responses"],
            "{name}: {n}: every response body decoded"
        );
        for (v, c) in api["requests"].as_object().unwrap() {
            t.requests.insert(format!("{n} v{v}"), c.as_u64().unwrap());
        }
        t.responses
            .insert(n.to_owned(), api["paired"].as_u64().unwrap());
        for (e, c) in api["errors"].as_object().unwrap() {
            t.errors.insert(format!("{n} {e}"), c.as_u64().unwrap());
        }
    }
    t
}

// ---- the tests --------------------------------------------------------------

#[test]
fn every_message_decodes_and_counts_equal_kafkas_parsers() {
    if jar().is_none() {
        return skip("no kafka-clients-4.4.0.jar found");
    }
    let mut report = Vec::new();
    for name in CAPTURES {
        let (out, err) = kwire(&["read", "--format", "json", &pcap(name)]);
        assert!(err.starts_with("kwire: Kafka schemas from "), "{err}");
        assert!(
            err.contains("problems: 0 malformed, 0 with warnings,"),
            "{name}: {err}"
        );
        assert!(err.contains(" 0 desyncs,"), "{name}: {err}");
        assert!(!err.contains("not decoded"), "{name}: {err}");
        let msgs = json_lines(&out);
        for m in &msgs {
            assert!(m["body"].is_object(), "{name}: {m}");
            assert!(m.get("error").is_none(), "{name}: {m}");
        }
        let want = truth(name);
        let got = kwire_counts(name);
        assert_eq!(
            got.requests, want.requests,
            "{name}: requests per API and version"
        );
        assert_eq!(got.responses, want.responses, "{name}: responses per API");
        assert_eq!(got.errors, want.errors, "{name}: errors per API");
        let total: u64 = want.requests.values().sum::<u64>() + want.responses.values().sum::<u64>();
        assert_eq!(msgs.len() as u64, total, "{name}: messages");
        report.push(format!(
            "{name}: {} messages, 0 malformed, {} error kinds",
            msgs.len(),
            want.errors.len()
        ));
    }
    eprintln!("equal to Kafka's parsers:\n  {}", report.join("\n  "));
}

#[test]
fn group_membership_matches_kafkas_parsers_frame_by_frame() {
    if jar().is_none() {
        return skip("no kafka-clients-4.4.0.jar found");
    }
    let (out, _) = kwire(&["read", "-q", "--format", "json", &pcap("group-rebalance")]);
    let msgs = json_lines(&out);
    let want = truth("group-rebalance");
    let mut seen = 0;
    for d in &want.details {
        // "227 Heartbeat v4 rsp corr=31 error=REBALANCE_IN_PROGRESS"
        let mut w = d.split(' ');
        let frame: u64 = w.next().unwrap().parse().unwrap();
        let api = w.next().unwrap();
        let m = msgs
            .iter()
            .find(|m| m["frame"] == frame && m["api_name"] == api)
            .unwrap_or_else(|| panic!("no {api} at frame {frame}"));
        let field = |k: &str| {
            d.split(' ')
                .find_map(|x| x.strip_prefix(&format!("{k}=")))
                .map(str::to_owned)
        };
        if let Some(e) = field("error") {
            if m["kind"] == "response" && api != "FindCoordinator" {
                let code = m["body"]["ErrorCode"].as_i64().unwrap();
                let name = match code {
                    0 => "NONE",
                    27 => "REBALANCE_IN_PROGRESS",
                    79 => "MEMBER_ID_REQUIRED",
                    25 => "UNKNOWN_MEMBER_ID",
                    _ => "other",
                };
                assert_eq!(name, e, "frame {frame}: {m}");
            }
        }
        if let Some(g) = field("generation") {
            assert_eq!(m["body"]["GenerationId"].to_string(), g, "frame {frame}");
        }
        if let Some(id) = field("memberId") {
            assert_eq!(m["body"]["MemberId"].as_str().unwrap(), id, "frame {frame}");
        }
        seen += 1;
    }
    assert!(seen >= 60, "{seen} group lines compared");
}

#[test]
fn sasl_shows_mechanism_and_user_only_unless_show_secrets() {
    let Some(jar) = jar() else {
        return skip("no kafka-clients-4.4.0.jar found");
    };
    let jar = jar.to_str().unwrap();
    let file = pcap("sasl-plain-scram");
    let want = truth("sasl-plain-scram");
    let (json, _) = kwire(&["read", "-q", "--format", "json", &file]);
    let (summary, _) = kwire(&["read", "-q", &file]);
    let (tree, _) = kwire(&["read", "-q", "--format", "tree", &file]);
    for out in [&json, &summary, &tree] {
        for s in SECRETS {
            assert!(!out.contains(s), "a password is shown");
        }
    }
    let msgs = json_lines(&json);
    let mut users = BTreeMap::new();
    let mut auths = 0;
    for d in want.details.iter().filter(|d| d.contains("authBytes=")) {
        // "60 SaslAuthenticate v2 req corr=… authBytes=44 bytes"
        let frame: u64 = d.split(' ').next().unwrap().parse().unwrap();
        let n = d
            .split("authBytes=")
            .nth(1)
            .unwrap()
            .split(' ')
            .next()
            .unwrap();
        let redacted = format!("<redacted {n} bytes>");
        let m = msgs.iter().find(|m| m["frame"] == frame).unwrap();
        assert_eq!(
            m["body"]["AuthBytes"],
            redacted.as_str(),
            "frame {frame}: {m}"
        );
        let line = summary
            .lines()
            .find(|l| l.split_whitespace().next() == Some(&frame.to_string()))
            .unwrap();
        // The summary names the count of auth bytes, never the bytes.
        assert!(line.contains(&format!(" {n} auth bytes")), "{line}");
        assert!(tree.contains(&redacted), "frame {frame}: tree");
        if let Some(user) = m["body"]["_sasl_user"].as_str() {
            let mech = m["body"]["_sasl_mechanism"].as_str().unwrap().to_owned();
            users.insert(user.to_owned(), mech);
        }
        auths += 1;
    }
    assert_eq!(auths, 12, "SaslAuthenticate requests and responses");
    assert_eq!(users.len(), 2, "{users:?}");
    assert_eq!(users["kwire-plain"], "PLAIN");
    assert!(users["kwire-scram"].starts_with("SCRAM"), "{users:?}");
    let mechs: Vec<&str> = msgs
        .iter()
        .filter(|m| m["api_name"] == "SaslHandshake" && m["kind"] == "request")
        .map(|m| m["body"]["Mechanism"].as_str().unwrap())
        .collect();
    assert_eq!(mechs, ["PLAIN", "PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-256"]);

    // --show-secrets: the bytes themselves (hex), the PLAIN password among them.
    let secret_hex: String = SECRETS[0].bytes().map(|b| format!("{b:02x}")).collect();
    let (shown, _) = kwire(&[
        "read",
        "-q",
        "--schemas",
        jar,
        "--format",
        "json",
        "--show-secrets",
        &file,
    ]);
    assert!(
        !shown.contains("<redacted"),
        "--show-secrets redacts nothing"
    );
    assert!(shown.contains(&secret_hex), "the PLAIN AuthBytes are shown");
}

#[test]
fn snapshots_with_kafkas_schemas() {
    if jar().is_none() {
        return skip("no kafka-clients-4.4.0.jar found");
    }
    for name in CAPTURES {
        let file = format!("captures/{name}.pcap");
        for (what, args) in [("summary", vec![]), ("json", vec!["--format", "json"])] {
            let mut all = vec!["read", "-q", file.as_str()];
            all.extend(args);
            let (out, _) = kwire(&all);
            let desc = format!(
                "kwire {} (schemas by discovery), checked against captures/verify/{name}.txt",
                all.join(" ")
            );
            insta::with_settings!({description => desc, omit_expression => true}, {
                insta::assert_snapshot!(format!("{name}__{what}"), out);
            });
        }
    }
}

/// `id/name,…` of a Produce, Fetch or Metadata body, as Verify prints it.
fn topic_ids(body: &Json) -> String {
    let list = ["TopicData", "Responses", "Topics"]
        .iter()
        .find_map(|k| body[k].as_array())
        .unwrap_or_else(|| panic!("no topic list in {body}"));
    list.iter()
        .map(|t| {
            let name = t.get("Name").or(t.get("Topic")).and_then(Json::as_str);
            format!("{}/{}", t["TopicId"].as_str().unwrap(), name.unwrap_or(""))
        })
        .collect::<Vec<_>>()
        .join(",")
}

#[test]
fn topic_ids_of_produce_fetch_and_metadata_equal_kafkas_parsers() {
    if jar().is_none() {
        return skip("no kafka-clients-4.4.0.jar found");
    }
    let mut compared = 0;
    for name in CAPTURES {
        let (out, _) = kwire(&["read", "-q", "--format", "json", &pcap(name)]);
        let msgs = json_lines(&out);
        for d in truth(name)
            .details
            .iter()
            .filter(|d| d.contains(" topics="))
        {
            // "26 Produce v13 req corr=7 client=… topics=<uuid>/"
            let mut w = d.split(' ');
            let frame: u64 = w.next().unwrap().parse().unwrap();
            let api = w.next().unwrap();
            let m = msgs
                .iter()
                .find(|m| m["frame"] == frame && m["api_name"] == api)
                .unwrap_or_else(|| panic!("{name}: no {api} at frame {frame}"));
            let want = d.split(" topics=").nth(1).unwrap();
            assert_eq!(topic_ids(&m["body"]), want, "{name}: frame {frame}");
            compared += 1;
        }
    }
    // Produce v13 and Fetch v18 name topics by id only; Metadata gives both.
    let t = truth("produce-fetch-topic-ids");
    let id = "4634eb09-dbdb-4b9d-acc0-be26a8099b2b";
    assert!(t.details.iter().any(|d| d.contains(&format!(
        "Metadata v13 rsp corr=6 topics={id}/kwire-topic-ids"
    ))));
    assert!(t.details.iter().any(|d| d.contains(&format!(
        "Produce v13 req corr=7 client=kwire-topic-ids-producer topics={id}/"
    ))));
    assert!(t.details.iter().any(|d| d.contains(&format!(
        "Fetch v18 req corr=5 client=kwire-topic-ids-consumer topics={id}/"
    ))));
    assert!(compared >= 40, "{compared} topic lists compared");
    eprintln!("{compared} Produce/Fetch/Metadata topic lists equal Kafka's parsers");
}
