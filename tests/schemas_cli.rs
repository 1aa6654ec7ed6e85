//! The command line with Kafka's schemas: `--schemas`, `KWIRE_SCHEMAS`, discovery, the
//! stderr line saying what was loaded, the once-per-run note, `--show-secrets`, and
//! `stats` naming errors of every decoded response.
//!
//! The jar tests say SKIP without a kafka-clients jar, and fail under `CI=true`.

mod common;

use common::*;
use kwire::{Codec, DecodeOptions, Search};
use std::path::PathBuf;
use std::process::Command;

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

/// kwire with the environment as a user has it (no `KWIRE_SCHEMAS` unless given).
fn run(args: &[&str], env: &[(&str, &str)]) -> (i32, String, String) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_kwire"));
    cmd.env_remove("KWIRE_SCHEMAS").args(args);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

#[test]
fn schemas_flag_decodes_every_api_and_says_what_it_loaded() {
    let Some(jar) = jar() else {
        return skip("no kafka-clients-4.4.0.jar found");
    };
    let jar = jar.to_str().unwrap();
    let (code, out, err) = run(
        &[
            "read",
            "--schemas",
            jar,
            "--format",
            "json",
            "captures/consumer-group-java.pcap",
        ],
        &[("KWIRE_SCHEMAS", "/nonexistent")],
    );
    assert_eq!(code, 0, "{err}");
    let first = err.lines().next().unwrap();
    assert!(
        first.starts_with("kwire: Kafka schemas from ") && first.contains(jar),
        "{err}"
    );
    assert!(
        !err.contains("nonexistent"),
        "--schemas wins over KWIRE_SCHEMAS: {err}"
    );
    assert!(!err.contains("not decoded"), "{err}");
    let lines = json_lines(&out);
    assert_eq!(lines.len(), 56);
    for m in &lines {
        assert!(m["body"].is_object(), "{m}");
        assert!(m.get("error").is_none(), "{m}");
    }
    let produce = lines.iter().find(|m| m["api_name"] == "Produce").unwrap();
    assert_eq!(produce["body"]["Acks"], -1);
    assert_eq!(produce["body"]["TopicData"].as_array().unwrap().len(), 1);
}

#[test]
fn without_schemas_one_note_per_api_and_a_problem_line() {
    let (code, out, err) = run(
        &["read", "-q", "captures/consumer-group-java.pcap"],
        &[("KWIRE_SCHEMAS", "/nonexistent/kafka-clients.jar")],
    );
    assert_eq!(code, 0);
    assert!(!out.is_empty());
    let lines: Vec<&str> = err.lines().collect();
    assert!(lines[0].contains("/nonexistent/kafka-clients.jar"), "{err}");
    assert!(
        lines[1].starts_with("kwire: no Kafka schemas loaded"),
        "{err}"
    );
    let produce = "kwire: Produce bodies are not decoded: no schemas loaded; see --schemas";
    assert_eq!(lines.iter().filter(|l| **l == produce).count(), 1, "{err}");
    // Set but empty: the built-in schemas only, silently (what the snapshot tests use).
    let (_, _, err) = run(
        &["read", "-q", "captures/consumer-group-java.pcap"],
        &[("KWIRE_SCHEMAS", "")],
    );
    assert_eq!(err, "");
}

#[test]
fn discovery_finds_the_jars_and_stats_names_every_error() {
    if jar().is_none() {
        return skip("no kafka-clients jar found");
    }
    let (code, out, err) = run(&["stats", "-q", "captures/consumer-group-java.pcap"], &[]);
    assert_eq!(code, 0);
    assert!(err.starts_with("kwire: Kafka schemas from "), "{err}");
    assert!(err.contains("kafka-clients-4.4.0.jar"), "{err}");
    assert!(!out.contains("not decoded"), "{out}");
    assert!(out.contains("MEMBER_ID_REQUIRED ×1"), "{out}");
    assert!(out.contains("UNKNOWN_TOPIC_OR_PARTITION ×1"), "{out}");
}

#[test]
fn credentials_are_redacted_unless_show_secrets() {
    let Some(jar) = jar() else {
        return skip("no kafka-clients-4.4.0.jar found");
    };
    let loaded = Search::from_env(vec![jar.clone()]).load();
    let c = Codec::new(loaded.schemas, DecodeOptions { show_secrets: true });
    let auth: String = b"\0alice\0alice-secret"
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    let mut f = flow();
    f.syn_handshake()
        .client_send(
            &c.encode_request(
                17,
                1,
                1,
                Some("c"),
                &serde_json::json!({"Mechanism": "PLAIN"}),
            )
            .unwrap(),
        )
        .server_send(
            &c.encode_response(
                17,
                1,
                1,
                &serde_json::json!({"ErrorCode": 0, "Mechanisms": ["PLAIN"]}),
            )
            .unwrap(),
        )
        .client_send(
            &c.encode_request(36, 2, 2, Some("c"), &serde_json::json!({"AuthBytes": auth}))
                .unwrap(),
        );
    let file = pcap(&[&f]);
    let path = file.path().to_str().unwrap();
    let jar = jar.to_str().unwrap();
    for (flag, want) in [
        (None, "\"<redacted 19 bytes>\""),
        (Some("--show-secrets"), auth.as_str()),
    ] {
        let mut args = vec!["read", "-q", "--schemas", jar, "--format", "json", path];
        args.extend(flag);
        let (code, out, _) = run(&args, &[]);
        assert_eq!(code, 0);
        let auth_line = out
            .lines()
            .find(|l| l.contains("SaslAuthenticate"))
            .unwrap();
        assert!(auth_line.contains(want), "{auth_line}");
        assert!(
            auth_line.contains("\"_sasl_user\":\"alice\""),
            "{auth_line}"
        );
        assert!(out.contains("\"Mechanism\":\"PLAIN\""), "{out}");
        if flag.is_none() {
            assert!(!out.contains("secret") && !out.contains(&auth), "{out}");
            // The tree and summary views too.
            let mut args = vec!["read", "-q", "--schemas", jar, "--format", "tree", path];
            args.extend(flag);
            let (_, tree, _) = run(&args, &[]);
            assert!(
                tree.contains("<redacted 19 bytes>") && !tree.contains("secret"),
                "{tree}"
            );
        }
    }
}
