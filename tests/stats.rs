//! `kwire stats`: the election timeline, the coordinator map and per-API
//! statistics, on the real Kafka 4.4 captures and on the synthetic stories in
//! `captures/synthetic/stories/` (see its README for what each holds).
//!
//! Every snapshot was checked by hand against `kwire read --api vote` /
//! `--api find-coordinator` and captures/README.md; the assertions next to
//! each snapshot pin the facts that were checked, so a snapshot cannot drift
//! away from them unnoticed.

mod common;

use common::*;
use kwire::analysis::{Analysis, Analyzer, Outcome, Voter, render_text, to_json};
use kwire::capture::Source;
use kwire::pipeline::{self, Config};
use serde_json::Value;
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};

fn capture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("captures")
        .join(name)
}

/// `kwire stats FILE -q [extra]`, which must succeed quietly.
fn stats(file: &Path, extra: &[&str]) -> String {
    let path = file.to_str().unwrap();
    let mut args = vec!["stats", path, "-q"];
    args.extend_from_slice(extra);
    let out = kwire(&args);
    assert_eq!(out.code, 0, "kwire {args:?} failed: {}", out.stderr);
    assert_eq!(out.stderr, "");
    out.stdout
}

fn stats_json(file: &Path) -> Value {
    serde_json::from_str(&stats(file, &["--format", "json"])).unwrap()
}

/// The analysis through the library, as the TUI will use it.
fn analyse(file: &Path) -> Analysis {
    let mut src = Source::open_file(file).unwrap();
    let mut a = Analyzer::new();
    pipeline::run(&mut src, Config::default(), &mut |r| {
        a.record(r);
        ControlFlow::Continue(())
    });
    a.analysis()
}

/// The epochs of the only partition with elections, as JSON.
fn epochs(j: &Value) -> &Vec<Value> {
    let e = j["elections"].as_array().unwrap();
    assert_eq!(e.len(), 1, "one cluster partition");
    e[0]["epochs"].as_array().unwrap()
}

/// (candidate, pre_vote, [(voter, request frame, response frame, granted, error)]) per candidacy.
type Round = (i64, bool, Vec<(i64, u64, u64, bool, Value)>);

fn rounds(epoch: &Value) -> Vec<Round> {
    epoch["candidacies"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            let ballots = c["ballots"]
                .as_array()
                .unwrap()
                .iter()
                .map(|b| {
                    (
                        b["voter"].as_i64().unwrap(),
                        b["request"]["frame"].as_u64().unwrap(),
                        b["response"]["frame"].as_u64().unwrap(),
                        b["response"]["granted"].as_bool().unwrap(),
                        b["response"]["error"].clone(),
                    )
                })
                .collect();
            (
                c["candidate"].as_i64().unwrap(),
                c["pre_vote"].as_bool().unwrap(),
                ballots,
            )
        })
        .collect()
}

const FENCED: &str = "FENCED_LEADER_EPOCH";

#[test]
fn initial_election() {
    let file = capture("kraft-initial-election.pcap");
    insta::assert_snapshot!(stats(&file, &[]));
    let j = stats_json(&file);
    let p = &j["elections"][0];
    assert_eq!(p["cluster_id"], "a3dpcmUtY2FwdHVyZXMwMQ");
    assert_eq!(p["voters_seen"], serde_json::json!([1, 2, 3]));
    let e = epochs(&j);
    assert_eq!(e.len(), 1);
    // captures/README.md: node 2 wins epoch 1; node 1's PreVote (epoch 0) is
    // answered FENCED_LEADER_EPOCH, not granted (frames 218→224).
    assert_eq!(
        (e[0]["epoch"].as_i64(), e[0]["leader"].as_i64()),
        (Some(1), Some(2))
    );
    assert_eq!(e[0]["outcome"], "won");
    assert_eq!(
        rounds(&e[0]),
        vec![
            (
                2,
                true,
                vec![
                    (1, 201, 214, true, Value::Null),
                    (3, 209, 215, true, Value::Null)
                ]
            ),
            (1, true, vec![(2, 218, 224, false, FENCED.into())]),
            (
                2,
                false,
                vec![
                    (1, 222, 228, true, Value::Null),
                    (3, 223, 229, true, Value::Null)
                ]
            ),
        ]
    );
    // Node 1's grant (frame 228) is node 2's second vote of 3; 1.294516 − 1.215187 s.
    assert_eq!(e[0]["majority"]["frame"], 228);
    assert_eq!(e[0]["duration_us"], 79_329);
    assert_eq!(p["repeat_candidates"], serde_json::json!([]));
}

#[test]
fn reelection() {
    let file = capture("kraft-reelection.pcap");
    insta::assert_snapshot!(stats(&file, &[]));
    let j = stats_json(&file);
    let e = epochs(&j);
    // Epochs go 1→2→3→4; epoch 1's election predates the capture.
    let summary: Vec<(i64, &str, i64)> = e
        .iter()
        .map(|e| {
            (
                e["epoch"].as_i64().unwrap(),
                e["outcome"].as_str().unwrap(),
                e["leader"].as_i64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        summary,
        vec![
            (1, "not_captured", 2),
            (2, "won", 1),
            (3, "won", 2),
            (4, "won", 3)
        ]
    );
    assert_eq!(e[0]["reported"]["frame"], 591);
    // 12 answers, 5 denials: 3 FENCED_LEADER_EPOCH, and no error at frames 1035 and 1384.
    let mut denied = Vec::new();
    let mut answers = 0;
    for ep in e {
        for (_, _, ballots) in rounds(ep) {
            for (_, _, resp, granted, err) in ballots {
                answers += 1;
                if !granted {
                    denied.push((resp, err));
                }
            }
        }
    }
    denied.sort_by_key(|d| d.0);
    assert_eq!(answers, 12);
    assert_eq!(
        denied,
        vec![
            (595, FENCED.into()),
            (1035, Value::Null),
            (1364, FENCED.into()),
            (1381, FENCED.into()),
            (1384, Value::Null),
        ]
    );
    // Epoch 4: node 3's PreVote and Vote, then node 1's stale PreVote at epoch 3.
    let r4 = rounds(&e[3]);
    assert_eq!(
        r4.iter().map(|r| (r.0, r.1)).collect::<Vec<_>>(),
        vec![(3, true), (3, false), (1, true)]
    );
}

#[test]
fn consumer_groups_and_transactions() {
    for name in [
        "consumer-group-java.pcap",
        "consumer-group-librdkafka.pcap",
        "transactional-producer.pcap",
    ] {
        let file = capture(name);
        insta::assert_snapshot!(name, stats(&file, &[]));
    }
    // Java: COORDINATOR_NOT_AVAILABLE (frames 61→63), then node 4 on the retry.
    let j = stats_json(&capture("consumer-group-java.pcap"));
    let k = &j["coordinators"][0];
    assert_eq!(
        (&k["key_type"], &k["key"]),
        (&"group".into(), &"kwire-java-group".into())
    );
    assert_eq!(k["answers"][0]["frame"], 63);
    assert_eq!(k["answers"][0]["error"], "COORDINATOR_NOT_AVAILABLE");
    assert_eq!(k["answers"][1]["node"], 4);
    assert_eq!(k["answers"][1]["port"], 19392);
    assert_eq!(k["changes"], serde_json::json!([]));
    // Transactional: the TRANSACTION key fails once (frames 9→12), the GROUP key does not.
    let j = stats_json(&capture("transactional-producer.pcap"));
    let keys: Vec<(&str, &str, u64)> = j["coordinators"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| {
            (
                k["key_type"].as_str().unwrap(),
                k["key"].as_str().unwrap(),
                k["requests"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        keys,
        vec![
            ("group", "kwire-txn-group", 1),
            ("transaction", "kwire-txn", 2)
        ]
    );
    assert_eq!(j["coordinators"][1]["answers"][0]["frame"], 12);
    // librdkafka: 3 requests on 2 connections, all answered node 4; the last Metadata is unanswered.
    let j = stats_json(&capture("consumer-group-librdkafka.pcap"));
    assert_eq!(j["coordinators"][0]["requests"], 3);
    let metadata = j["apis"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["api_name"] == "Metadata")
        .unwrap();
    assert_eq!(metadata["unanswered"], 1);
    assert_eq!(metadata["errors"], Value::Null, "Metadata is not decoded");
}

#[test]
fn split_vote_story() {
    let file = capture("synthetic/stories/split-vote.pcap");
    insta::assert_snapshot!(stats(&file, &[]));
    let j = stats_json(&file);
    insta::assert_snapshot!(
        "split_vote_story_json",
        serde_json::to_string_pretty(&j).unwrap()
    );
    let e = epochs(&j);
    // Epoch 7: all three stand, all six requests denied: no leader.
    assert_eq!(e[0]["outcome"], "failed");
    assert_eq!(e[0]["leader"], Value::Null);
    assert_eq!(rounds(&e[0]).len(), 3);
    assert!(rounds(&e[0]).iter().all(|r| r.2.iter().all(|b| !b.3)));
    // Epoch 8: node 1 grants node 2 (frame 35), node 2 then answers node 3 as leader (frame 38).
    assert_eq!(e[1]["leader"], 2);
    assert_eq!(e[1]["majority"]["frame"], 35);
    assert_eq!(e[1]["reported"]["frame"], 38);
    assert_eq!(e[1]["duration_us"], 3000);
    assert_eq!(
        j["elections"][0]["repeat_candidates"],
        serde_json::json!([{"node": 3, "rounds": 2, "lost": 2, "won_epochs": []}])
    );
}

#[test]
fn rejected_prevote_story() {
    let file = capture("synthetic/stories/prevote-rejected.pcap");
    insta::assert_snapshot!(stats(&file, &[]));
    let j = stats_json(&file);
    let e = epochs(&j);
    assert_eq!(
        (e[0]["epoch"].as_i64(), e[0]["outcome"].as_str()),
        (Some(4), Some("not_captured"))
    );
    assert_eq!(e[0]["leader"], 2);
    assert_eq!(
        (e[1]["epoch"].as_i64(), e[1]["outcome"].as_str()),
        (Some(5), Some("no_vote"))
    );
    let r = rounds(&e[1]);
    assert_eq!(r.len(), 2, "two rounds of PreVote");
    assert!(
        r.iter()
            .all(|r| r.0 == 3 && r.1 && r.2.iter().all(|b| !b.3))
    );
    assert_eq!(j["elections"][0]["repeat_candidates"][0]["node"], 3);
}

#[test]
fn coordinator_moves_story() {
    let file = capture("synthetic/stories/coordinator-moves.pcap");
    insta::assert_snapshot!(stats(&file, &[]));
    let j = stats_json(&file);
    let group = &j["coordinators"][0];
    assert_eq!(group["key"], "orders-app");
    assert_eq!(
        group["changes"],
        serde_json::json!([{"frame": 17, "ts": group["changes"][0]["ts"],
            "from": {"node": 1, "host": "broker-1.kafka.local", "port": 9092},
            "to": {"node": 3, "host": "broker-3.kafka.local", "port": 9092}}])
    );
    assert_eq!(
        group["errors"],
        serde_json::json!({"COORDINATOR_NOT_AVAILABLE": 1})
    );
    let txn = &j["coordinators"][1];
    assert_eq!(
        (&txn["key_type"], &txn["changes"]),
        (&"transaction".into(), &serde_json::json!([]))
    );
}

#[test]
fn not_coordinator_retries_story() {
    let file = capture("synthetic/stories/not-coordinator-retries.pcap");
    insta::assert_snapshot!(stats(&file, &[]));
    let j = stats_json(&file);
    let k = &j["coordinators"][0];
    assert_eq!(k["errors"], serde_json::json!({"NOT_COORDINATOR": 4}));
    assert_eq!(
        k["repeat_askers"],
        serde_json::json!([{"client_id": "billing-consumer", "ip": "10.0.4.50",
                            "requests": 5, "errors": 4}])
    );
    assert_eq!(k["answers"][4]["node"], 2);
}

#[test]
fn unanswered_votes_leave_the_epoch_undecided() {
    // Replica 1 asks voter 2 at epoch 5 (Vote v1); the answer never comes.
    let mut f = flow_between("10.0.0.1:50000", "10.0.0.2:9093");
    f.syn_handshake()
        .client_send(&vote_req(1, 1, "ctrl", false));
    let file = pcap(&[&f]);
    let a = analyse(file.path());
    let e = &a.elections[0].epochs[0];
    assert_eq!(
        (e.epoch, e.outcome, e.leader),
        (5, Outcome::Undecided, None)
    );
    assert!(
        e.notes
            .iter()
            .any(|n| n == "1 request unanswered in the capture"),
        "{:?}",
        e.notes
    );
    let api = a.apis.iter().find(|s| s.api_key == Some(52)).unwrap();
    assert_eq!(api.unanswered(), 1);
}

#[test]
fn a_v0_voter_is_named_by_its_address_until_learned() {
    // Vote v0 has no VoterId: the voter is the destination address ...
    let mut a = flow_between("10.0.0.1:50000", "10.0.0.9:9093");
    a.syn_handshake()
        .client_send(&vote_req(0, 1, "ctrl", false))
        .server_send(&vote_resp(0, 1, true, 0));
    let file = pcap(&[&a]);
    let an = analyse(file.path());
    let voter = an.elections[0].epochs[0].candidacies[0].ballots[0].voter;
    assert_eq!(voter, Voter::Addr("10.0.0.9:9093".parse().unwrap()));
    // ... until a v1 request to the same address names it (VoterId 2).
    let mut b = flow_between("10.0.0.1:50001", "10.0.0.9:9093");
    b.syn_handshake()
        .client_send(&vote_req(1, 2, "ctrl", false))
        .server_send(&vote_resp(1, 2, true, 0));
    let file = pcap(&[&a, &b]);
    let an = analyse(file.path());
    let c = &an.elections[0].epochs[0].candidacies;
    assert_eq!(c.len(), 2, "asking the same voter again is a new round");
    assert!(c.iter().all(|c| c.ballots[0].voter == Voter::Node(2)));
}

#[test]
fn histograms_only_for_a_terminal() {
    let a = analyse(&capture("kraft-initial-election.pcap"));
    let plain = render_text(&a, false);
    let drawn = render_text(&a, true);
    assert!(!plain.contains('█'));
    assert!(drawn.starts_with(&plain));
    assert!(drawn.contains("Latency of Vote (5 responses)"), "{drawn}");
    assert!(drawn.contains('█'));
    // The CLI writes to a pipe here, so no histogram.
    assert_eq!(stats(&capture("kraft-initial-election.pcap"), &[]), plain);
    assert_eq!(
        to_json(&a),
        stats_json(&capture("kraft-initial-election.pcap"))
    );
}

#[test]
fn stats_reads_standard_input_and_reports_bad_input() {
    let bytes = std::fs::read(capture("consumer-group-java.pcap")).unwrap();
    let out = kwire_with_stdin(&["stats", "-", "-q"], Some(&bytes));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(out.stdout, stats(&capture("consumer-group-java.pcap"), &[]));
    let out = kwire(&["stats", "/nonexistent/x.pcap"]);
    assert_eq!(out.code, 1);
    assert_eq!(out.stdout, "");
    assert!(
        out.stderr.starts_with("kwire: cannot read "),
        "{}",
        out.stderr
    );
}
