//! The display filter and `--format fields` through the binary, on the bundled captures.

mod common;

use common::kwire;
use serde_json::Value;

const ELECTION: &str = "captures/kraft-initial-election.pcap";
const GROUP: &str = "captures/consumer-group-java.pcap";

#[test]
fn a_bad_filter_exits_1_with_the_caret_message_on_every_command() {
    let want = "kwire: unknown field \"VoteGrantd\" at column 1\n  VoteGrantd == false\n  ^^^^^^^^^^\nhint: did you mean VoteGranted?\n";
    for args in [
        vec!["read", ELECTION, "-Y", "VoteGrantd == false"],
        vec!["stats", ELECTION, "-Y", "VoteGrantd == false"],
        vec!["tui", ELECTION, "-Y", "VoteGrantd == false"],
        // Refused before the interface is opened.
        vec![
            "live",
            "-i",
            "no-such-interface",
            "-Y",
            "VoteGrantd == false",
        ],
    ] {
        let out = kwire(&args);
        assert_eq!(
            (out.code, out.stdout.as_str()),
            (1, ""),
            "{args:?}: {out:?}"
        );
        assert_eq!(out.stderr, want, "{args:?}");
    }
    let out = kwire(&["read", ELECTION, "-Y", "latency_us > 10000 &&"]);
    assert_eq!(out.code, 1);
    insta::assert_snapshot!(out.stderr, @r#"
    kwire: the filter ends after "&&" at column 22
      latency_us > 10000 &&
                           ^
    hint: finish it with a test, e.g. latency_us > 10000 or ErrorCode
    "#);
}

#[test]
fn body_and_header_filters_select_the_messages() {
    let read = |f: &str| kwire(&["read", "-q", ELECTION, "-Y", f]).stdout;
    let denied = read("Topics.Partitions.VoteGranted == false");
    assert!(!denied.is_empty());
    assert!(
        denied
            .lines()
            .all(|l| l.contains("Vote v") && l.contains("granted=no")),
        "{denied}"
    );
    assert_eq!(read("vote response !VoteGranted"), denied);
    assert_eq!(
        read("response and not Topics.Partitions.VoteGranted and api == 52"),
        denied
    );
    let all = kwire(&["read", "-q", ELECTION]).stdout;
    assert_eq!(read(""), all);
    assert_eq!(read("frame > 0 or malformed"), all);
    assert_eq!(read("frame == 0"), "");
}

#[test]
fn format_fields_prints_tab_separated_columns() {
    let out = kwire(&[
        "read",
        "-q",
        GROUP,
        "--format",
        "fields",
        "-e",
        "frame",
        "-e",
        "kind",
        "-e",
        "api",
        "-e",
        "Coordinators.ErrorCode",
        "-e",
        "CoordinatorKeys",
        "-e",
        "latency_us",
        "-E",
        "header=y",
        "-Y",
        "find-coordinator",
    ]);
    assert_eq!(out.code, 0, "{out:?}");
    insta::assert_snapshot!(out.stdout, @r"
    frame	kind	api	Coordinators.ErrorCode	CoordinatorKeys	latency_us
    61	request	10		kwire-java-group	
    63	response	10	15		11259
    74	request	10		kwire-java-group	
    75	response	10	0		2727
    ");
    let out = kwire(&[
        "read",
        "-q",
        ELECTION,
        "--format",
        "fields",
        "-e",
        "frame",
        "-e",
        "ErrorCode",
        "-E",
        "separator=,",
        "-E",
        "aggregator=/",
        "-Y",
        "vote response",
        "-c",
        "2",
    ]);
    assert_eq!(out.stdout, "214,0/0\n215,0/0\n");
    let out = kwire(&[
        "read",
        "-q",
        GROUP,
        "--format",
        "fields",
        "-e",
        "Coordinators.Hots",
    ]);
    assert_eq!(out.code, 1);
    assert!(
        out.stderr.contains("hint: did you mean Coordinators.Host?"),
        "{}",
        out.stderr
    );
    let out = kwire(&[
        "read",
        "-q",
        GROUP,
        "--format",
        "fields",
        "-e",
        "api",
        "-E",
        "header=y",
        "-Y",
        "frame == 0",
    ]);
    assert_eq!(
        out.stdout, "api\n",
        "the header comes even when nothing matches"
    );
    let out = kwire(&["read", "-q", GROUP, "-e", "frame"]);
    assert_eq!(
        (out.code, out.stderr.as_str()),
        (1, "kwire: -e and -E go with --format fields\n")
    );
}

#[test]
fn stats_analyses_only_the_matching_messages() {
    let stats = |extra: &[&str]| -> Value {
        let mut args = vec!["stats", "-q", "--format", "json", GROUP];
        args.extend(extra);
        serde_json::from_str(&kwire(&args).stdout).unwrap()
    };
    let all = stats(&[]);
    let fc = stats(&["-Y", "find-coordinator"]);
    let keys = |v: &Value| -> Vec<i64> {
        v["apis"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a["api_key"].as_i64().unwrap())
            .collect()
    };
    assert!(keys(&all).len() > 1);
    assert_eq!(keys(&fc), [10]);
    assert_eq!(fc["capture"]["messages"], 4);
    assert_eq!(fc["coordinators"], all["coordinators"]);
}
