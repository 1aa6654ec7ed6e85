//! Record batches through the whole program: `kwire read` with the record
//! limits, the summary line's header-only counts, and the leader's
//! LeaderChangeMessage in `kwire stats`. Needs the kafka-clients jar for the
//! Produce and Fetch schemas (as tests/schemas.rs does).

use serde_json::Value;
use std::path::PathBuf;
use std::process::Command;

/// Runs kwire as a user would, finding Kafka's schemas in the usual places.
fn kwire(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_kwire"))
        .env_remove("KWIRE_SCHEMAS")
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Whether Produce decodes here (a kafka-clients jar was found); SKIP otherwise.
fn have_schemas() -> bool {
    let path = capture("records/records.pcap");
    let (_, out, _) = kwire(&[
        "read",
        path.to_str().unwrap(),
        "-q",
        "--api",
        "produce",
        "-c",
        "1",
    ]);
    if out.contains("kwire-records[p0 ") {
        return true;
    }
    let msg = "SKIP: no kafka-clients jar, so Produce and Fetch are not decoded";
    assert!(
        std::env::var("CI").map_or(true, |v| v != "true"),
        "{msg} (CI=true)"
    );
    eprintln!("\n*** {msg} ***\n");
    false
}

fn capture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("captures")
        .join(name)
}

/// `kwire read FILE -q ARGS`, or None (with a SKIP) when no schemas decode Produce.
fn read(file: &str, args: &[&str]) -> Option<String> {
    if !have_schemas() {
        return None;
    }
    let path = capture(file);
    let mut all = vec!["read", path.to_str().unwrap(), "-q"];
    all.extend_from_slice(args);
    let (code, out, err) = kwire(&all);
    assert_eq!(code, 0, "{err}");
    Some(out)
}

/// Every batch object of every records field in an NDJSON stream.
fn batches(ndjson: &str) -> Vec<Value> {
    let mut out = Vec::new();
    fn walk(v: &Value, out: &mut Vec<Value>) {
        match v {
            Value::Object(m) => {
                for (k, x) in m {
                    if k == "Records"
                        && x.as_array()
                            .is_some_and(|a| a.iter().all(|b| b.get("RecordCount").is_some()))
                    {
                        out.extend(x.as_array().unwrap().iter().cloned());
                    } else {
                        walk(x, out);
                    }
                }
            }
            Value::Array(a) => a.iter().for_each(|x| walk(x, out)),
            _ => {}
        }
    }
    for line in ndjson.lines() {
        walk(
            &serde_json::from_str::<Value>(line).unwrap()["body"],
            &mut out,
        );
    }
    out
}

#[test]
fn max_records_limits_what_is_shown() {
    let Some(all) = read("records/records.pcap", &["--format", "json"]) else {
        return;
    };
    let all = batches(&all);
    // 26 batches (Kafka's count for this capture: captures/records/truth/records.txt).
    assert_eq!(all.len(), 26);
    let total: i64 = all.iter().map(|b| b["RecordCount"].as_i64().unwrap()).sum();
    assert_eq!(
        total,
        all.iter()
            .map(|b| b["Records"].as_array().unwrap().len() as i64)
            .sum::<i64>()
    );
    for (n, args) in [(1, "1"), (0, "0")] {
        let some = batches(
            &read(
                "records/records.pcap",
                &["--format", "json", "--max-records", args],
            )
            .unwrap(),
        );
        assert_eq!(some.len(), all.len());
        for (b, full) in some.iter().zip(&all) {
            let count = b["RecordCount"].as_i64().unwrap();
            assert_eq!(count, full["RecordCount"].as_i64().unwrap());
            let shown = b["Records"].as_array().unwrap().len() as i64;
            assert_eq!(shown, count.min(n));
            assert_eq!(
                b.get("RecordsOmitted").and_then(Value::as_i64).unwrap_or(0),
                count - shown
            );
            assert_eq!(
                b["Records"].as_array().unwrap()[..],
                full["Records"].as_array().unwrap()[..shown as usize]
            );
        }
    }
}

#[test]
fn summary_counts_from_headers() {
    let Some(out) = read("records/records.pcap", &["--api", "fetch"]) else {
        return;
    };
    // 34 records and the 2 transaction markers, in 14 batches of every codec,
    // said once (in the partition's words, not again in a `records:` part).
    assert!(
        out.contains(
            "kwire-records[p0 36 records in 14 batches 2128B none+gzip+snappy+lz4+zstd hw=36]"
        ),
        "{out}"
    );
    assert!(!out.contains("records: "), "{out}");
    let tree = read(
        "records/records-large.pcap",
        &["--api", "produce", "--format", "tree", "-c", "1"],
    )
    .unwrap();
    assert!(tree.contains("Value bytes = 6162636465"), "{tree}");
}

#[test]
fn stats_show_the_leaders_record() {
    if !have_schemas() {
        return;
    }
    let path = capture("kraft-initial-election.pcap");
    let (code, out, err) = kwire(&["stats", path.to_str().unwrap(), "-q"]);
    assert_eq!(code, 0, "{err}");
    // Kafka's ControlRecordUtils reads the same (captures/records/truth/kraft-initial-election.txt).
    assert!(
        out.contains("leader's record at 1.376751 [250]: node 2 voted in by 1, 2 (voters 1, 2, 3)"),
        "{out}"
    );
}
