//! End to end against a real Apache Kafka 4.4.0: `kwire live` sniffs `lo`
//! while a fresh KRaft quorum (3 controllers and 1 broker on 127.0.0.1, on
//! ports chosen free here) elects its first leader and a Java consumer joins a
//! group. The test then holds kwire's NDJSON against what the cluster itself
//! says: each controller's `quorum-state` file (leader, epoch, whom it voted
//! for) and the group's coordinator as Kafka's Admin client reports it.
//!
//! `captures/record/e2e.sh` runs the cluster and kwire, tracks every process by
//! pid and stops them all; this test bounds it in time (about a minute when
//! Kafka's jars are cached, under 5 minutes in all).
//!
//! It runs whenever this process can capture on `lo` (root or CAP_NET_RAW)
//! and Java and Maven are present, unless `KWIRE_E2E=0`. Otherwise, and when
//! Kafka cannot be fetched from Maven Central, it prints a SKIP line that
//! `cargo test` shows even without `--nocapture`.

use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::net::TcpListener;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

const KWIRE: &str = env!("CARGO_BIN_EXE_kwire");
/// How long the script may run before it is stopped, and how long its EXIT
/// trap then gets to stop what it started; together under 5 minutes.
const SCRIPT_LIMIT: Duration = Duration::from_secs(250);
const CLEANUP_LIMIT: Duration = Duration::from_secs(40);
/// Node ids, as record.sh configures them: controllers 1..=3, broker 4.
const CONTROLLERS: [i64; 3] = [1, 2, 3];
const BROKER_ID: i64 = 4;

/// Says SKIP on the real stderr, past libtest's output capture, so a skipped
/// run is visible in a plain `cargo test`.
fn skip(reason: &str) {
    let _ = writeln!(
        std::io::stderr(),
        "\n*** SKIP e2e_kafka: {reason} ***\n*** the live Kafka end-to-end test did NOT run ***\n"
    );
}

fn can_capture() -> Result<(), String> {
    pcap::Capture::from_device("lo")
        .and_then(|c| c.open())
        .map(|_| ())
        .map_err(|e| format!("cannot capture on lo ({e}); run as root or with CAP_NET_RAW"))
}

fn have(tool: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {tool}")])
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Four consecutive ports, free on 127.0.0.1 right now, below the ephemeral
/// range (so no client socket takes one meanwhile): 3 controllers, 1 broker.
fn free_ports() -> [u16; 4] {
    let start = 20_000 + (std::process::id() % 2_000) as u16 * 4;
    for i in 0..2_000u16 {
        let base = 20_000 + (start - 20_000 + i * 4) % 8_000;
        let held: Vec<_> = (0..4)
            .map_while(|k| TcpListener::bind(("127.0.0.1", base + k)).ok())
            .collect();
        if held.len() == 4 {
            return [base, base + 1, base + 2, base + 3];
        }
    }
    panic!("no 4 consecutive free ports between 20000 and 28000");
}

/// The running script. Dropping it before it finished (time-out, or a panic)
/// stops it: SIGTERM to the script, whose EXIT trap stops every process it
/// started by pid (bounded, about 30 s at most); then SIGKILL to its process
/// group, for anything that outlived the trap.
struct Script {
    child: Child,
    done: Option<ExitStatus>,
}

impl Script {
    fn wait(&mut self, limit: Duration) -> Option<ExitStatus> {
        let start = Instant::now();
        while start.elapsed() < limit {
            if let Some(s) = self.child.try_wait().expect("wait for e2e.sh") {
                self.done = Some(s);
                return Some(s);
            }
            std::thread::sleep(Duration::from_millis(200));
        }
        None
    }
}

impl Drop for Script {
    fn drop(&mut self) {
        if self.done.is_some() {
            return;
        }
        let pid = self.child.id().to_string();
        let _ = Command::new("kill").args(["-TERM", &pid]).status();
        let exited = self.wait(CLEANUP_LIMIT).is_some();
        // The script leads its own process group (process_group(0)), so this
        // reaches only what it started; usually nothing is left.
        let _ = Command::new("kill")
            .args(["-KILL", "--", &format!("-{pid}")])
            .stderr(Stdio::null())
            .status();
        if !exited {
            let _ = self.child.wait();
        }
    }
}

fn tail(path: &Path, lines: usize) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

/// result.txt: `key value...` lines.
fn read_result(path: &Path) -> BTreeMap<String, Vec<String>> {
    std::fs::read_to_string(path)
        .expect("result.txt")
        .lines()
        .filter_map(|l| {
            let mut w = l.split_whitespace().map(str::to_string);
            Some((w.next()?, w.collect()))
        })
        .collect()
}

fn num(v: &Value) -> i64 {
    v.as_i64().unwrap_or_else(|| panic!("not a number: {v}"))
}

fn port_of(addr: &Value) -> u16 {
    addr.as_str()
        .and_then(|a| a.rsplit(':').next())
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("not ip:port: {addr}"))
}

/// The only partition of a Vote body (`__cluster_metadata`, partition 0).
fn vote_partition(m: &Value) -> &Value {
    let topics = m["body"]["Topics"].as_array().expect("Vote Topics");
    assert_eq!(topics.len(), 1, "{m}");
    assert_eq!(topics[0]["TopicName"], "__cluster_metadata", "{m}");
    let parts = topics[0]["Partitions"].as_array().expect("Partitions");
    assert_eq!(parts.len(), 1, "{m}");
    &parts[0]
}

/// One Vote exchange, as decoded by kwire.
#[derive(Debug)]
struct Ballot {
    candidate: i64,
    voter: i64,
    epoch: i64,
    pre_vote: bool,
    granted: bool,
    errors: (i64, i64),
    /// Read only through Debug, in failure messages.
    #[allow(dead_code)]
    frame: i64,
}

/// Checks every Vote message and pairs each response with its request.
fn ballots(msgs: &[Value], ports: &[u16; 4]) -> Vec<Ballot> {
    let votes: Vec<&Value> = msgs.iter().filter(|m| m["api_key"] == 52).collect();
    let by_frame: BTreeMap<i64, &Value> = votes
        .iter()
        .filter(|m| m["kind"] == "request")
        .map(|m| (num(&m["frame"]), *m))
        .collect();
    assert!(!by_frame.is_empty(), "kwire saw no Vote request");
    let mut out = Vec::new();
    for m in &votes {
        assert!(m.get("error").is_none(), "Vote not decoded: {m}");
        assert!(m["body"].is_object(), "Vote without a body: {m}");
        assert_eq!(m["api_name"], "Vote", "{m}");
        if m["kind"] == "request" {
            assert_eq!(m["version_source"], "header", "{m}");
            continue;
        }
        // The capture started before the first controller: every answer has its question.
        assert_eq!(
            m["version_source"], "request",
            "unpaired Vote response: {m}"
        );
        let req = by_frame
            .get(&num(&m["request_frame"]))
            .unwrap_or_else(|| panic!("request_frame is no Vote request: {m}"));
        assert_eq!(req["correlation_id"], m["correlation_id"], "{m}");
        assert_eq!(req["api_version"], m["api_version"], "{m}");
        assert_eq!((&req["src"], &req["dst"]), (&m["dst"], &m["src"]), "{m}");
        let (q, a) = (vote_partition(req), vote_partition(m));
        let voter = num(&req["body"]["VoterId"]);
        let voter_port = ports[usize::try_from(voter - 1).expect("voter id 1..=3")];
        assert_eq!(port_of(&m["src"]), voter_port, "voter {voter} answers: {m}");
        out.push(Ballot {
            candidate: num(&q["ReplicaId"]),
            voter,
            epoch: num(&q["ReplicaEpoch"]),
            pre_vote: q["PreVote"].as_bool().expect("PreVote (v2)"),
            granted: a["VoteGranted"].as_bool().expect("VoteGranted"),
            errors: (num(&m["body"]["ErrorCode"]), num(&a["ErrorCode"])),
            frame: num(&m["frame"]),
        });
    }
    out
}

/// `(leaderId, leaderEpoch, votedId)` from a controller's quorum-state file, as
/// e2e.sh copied it while the cluster was up and agreed.
fn quorum_state(out: &Path, id: i64) -> (i64, i64, i64) {
    let f = out.join(format!("quorum-state-c{id}.json"));
    let text = std::fs::read_to_string(&f).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
    let v: Value = serde_json::from_str(&text).expect("quorum-state is JSON");
    (
        num(&v["leaderId"]),
        num(&v["leaderEpoch"]),
        num(&v["votedId"]),
    )
}

/// `(NodeId, Host, Port, ErrorCode, Key)` of every coordinator a FindCoordinator
/// response names: `Coordinators[]` from v4 on, the top-level fields before.
fn coordinators(m: &Value) -> Vec<(i64, String, i64, i64, Option<String>)> {
    let b = &m["body"];
    let one = |c: &Value, key: Option<String>| {
        (
            num(&c["NodeId"]),
            c["Host"].as_str().expect("Host").to_string(),
            num(&c["Port"]),
            num(&c["ErrorCode"]),
            key,
        )
    };
    match b["Coordinators"].as_array() {
        Some(cs) => cs
            .iter()
            .map(|c| one(c, c["Key"].as_str().map(str::to_string)))
            .collect(),
        None => vec![one(b, None)],
    }
}

#[test]
fn kwire_live_follows_a_real_kraft_election_and_group_join() {
    let started = Instant::now();
    if std::env::var("KWIRE_E2E").as_deref() == Ok("0") {
        skip("KWIRE_E2E=0 turns it off (it starts a Kafka cluster for about a minute)");
        return;
    }
    if let Err(e) = can_capture() {
        skip(&e);
        return;
    }
    for tool in ["java", "mvn"] {
        if !have(tool) {
            skip(&format!(
                "{tool} is missing; the test needs Java 17+ and Maven"
            ));
            return;
        }
    }

    let ports = free_ports();
    let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("e2e-kafka");
    let _ = std::fs::remove_dir_all(&out);
    std::fs::create_dir_all(&out).expect("output folder");
    let log = out.join("e2e.log");
    let log_file = std::fs::File::create(&log).expect("e2e.log");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("captures/record/e2e.sh");
    let child = Command::new("bash")
        .arg(&script)
        .arg(&out)
        .env("KWIRE_BIN", KWIRE)
        // The built-in schemas only: the assertions below pin their output.
        .env("KWIRE_SCHEMAS", "")
        .env(
            "KWIRE_CTRL_PORTS",
            format!("{} {} {}", ports[0], ports[1], ports[2]),
        )
        .env("KWIRE_BROKER_PORT", ports[3].to_string())
        .stdin(Stdio::null())
        .stdout(log_file.try_clone().expect("log"))
        .stderr(log_file)
        .process_group(0)
        .spawn()
        .expect("bash runs e2e.sh");
    let mut script_run = Script { child, done: None };
    let Some(status) = script_run.wait(SCRIPT_LIMIT) else {
        drop(script_run);
        panic!(
            "e2e.sh did not finish in {SCRIPT_LIMIT:?}; stopped it. Its log:\n{}",
            tail(&log, 40)
        );
    };
    if status.code() == Some(77) {
        let why = tail(&log, 40)
            .lines()
            .rev()
            .find_map(|l| l.strip_prefix("SKIP: ").map(str::to_string))
            .unwrap_or_else(|| "e2e.sh skipped".into());
        skip(&why);
        return;
    }
    assert!(
        status.success(),
        "e2e.sh failed ({status}); its log:\n{}\n(cluster logs in {})",
        tail(&log, 40),
        out.join("run").display()
    );
    let ran_for = started.elapsed();

    let result = read_result(&out.join("result.txt"));
    let field = |k: &str| -> &Vec<String> {
        result
            .get(k)
            .unwrap_or_else(|| panic!("result.txt has no {k}"))
    };
    let int = |k: &str, i: usize| -> i64 { field(k)[i].parse().expect("a number") };
    assert_eq!(field("kwire_rc")[0], "0", "kwire live exit code");
    let (leader, epoch) = (int("leader", 0), int("epoch", 0));
    let group = field("group")[0].clone();
    let ndjson = std::fs::read_to_string(out.join("kwire.ndjson")).expect("kwire.ndjson");
    let msgs: Vec<Value> = ndjson
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect();
    let kwire_err = std::fs::read_to_string(out.join("kwire.err")).unwrap_or_default();
    let dropped = kwire_err
        .lines()
        .find(|l| l.contains("libpcap:"))
        .unwrap_or("libpcap: no statistics")
        .trim()
        .to_string();
    eprintln!(
        "e2e.sh ran for {:.1} s; kwire decoded {} messages ({dropped}); leader {leader} at epoch {epoch}",
        ran_for.as_secs_f64(),
        msgs.len()
    );

    // --- Vote: decoded, paired, and granted as the cluster reports.
    let ballots = ballots(&msgs, &ports);
    assert!(!ballots.is_empty(), "kwire saw no Vote response");
    for b in &ballots {
        eprintln!("  {b:?}");
        if b.granted {
            assert_eq!(b.errors, (0, 0), "a granted vote carries no error: {b:?}");
        }
    }
    let states: BTreeMap<i64, (i64, i64, i64)> = CONTROLLERS
        .iter()
        .map(|&id| (id, quorum_state(&out, id)))
        .collect();
    for (id, (l, e, _)) in &states {
        assert_eq!(
            (*l, *e),
            (leader, epoch),
            "controller {id}'s quorum-state disagrees with the leader e2e.sh saw"
        );
    }
    let granted_in = |candidate: i64, e: i64| -> BTreeSet<i64> {
        ballots
            .iter()
            .filter(|b| !b.pre_vote && b.granted && b.candidate == candidate && b.epoch == e)
            .map(|b| b.voter)
            .collect()
    };
    // The leader's own vote plus the granted ones make a majority of the 3 voters.
    let for_leader = granted_in(leader, epoch);
    assert!(
        for_leader.len() + 1 >= 2,
        "leader {leader} won epoch {epoch}, but kwire saw it granted by {for_leader:?} only: {ballots:?}"
    );
    assert!(
        !for_leader.contains(&leader),
        "a leader does not ask itself"
    );
    for other in CONTROLLERS.iter().filter(|&&c| c != leader) {
        let votes = granted_in(*other, epoch);
        assert!(
            votes.is_empty(),
            "controller {other} lost epoch {epoch} yet kwire saw votes granted to it by {votes:?}"
        );
    }
    // Each voter's quorum-state names whom it voted for in that epoch; kwire's
    // granted (non-pre) votes at that epoch must say the same, both ways.
    for (&id, &(_, _, voted)) in &states {
        let granted_by: BTreeSet<i64> = ballots
            .iter()
            .filter(|b| !b.pre_vote && b.granted && b.voter == id && b.epoch == epoch)
            .map(|b| b.candidate)
            .collect();
        if voted != -1 && voted != id {
            assert_eq!(
                granted_by,
                BTreeSet::from([voted]),
                "controller {id} voted for {voted} in epoch {epoch} (quorum-state)"
            );
        } else {
            assert!(
                granted_by.is_empty(),
                "controller {id} voted for nobody else in epoch {epoch} (quorum-state votedId {voted}), yet granted {granted_by:?}"
            );
        }
    }

    // --- FindCoordinator: the named broker is the group's real coordinator.
    let coordinator = field("coordinator");
    let admin = (
        coordinator[0].parse::<i64>().expect("coordinator id"),
        coordinator[1].clone(),
        coordinator[2].parse::<i64>().expect("coordinator port"),
    );
    let broker = (
        int("broker", 0),
        field("broker")[1].clone(),
        int("broker", 2),
    );
    assert_eq!(broker, (BROKER_ID, "127.0.0.1".into(), i64::from(ports[3])));
    assert_eq!(
        admin, broker,
        "Admin names another coordinator than the only broker"
    );
    let finds: Vec<&Value> = msgs.iter().filter(|m| m["api_key"] == 10).collect();
    let mut answered = 0;
    for m in &finds {
        assert!(m.get("error").is_none(), "FindCoordinator not decoded: {m}");
        assert!(m["body"].is_object(), "FindCoordinator without a body: {m}");
        if m["kind"] == "request" {
            continue;
        }
        assert_eq!(m["version_source"], "request", "unpaired: {m}");
        assert_eq!(port_of(&m["src"]), ports[3], "only the broker answers: {m}");
        for (node, host, port, err, key) in coordinators(m) {
            if err != 0 {
                continue; // e.g. COORDINATOR_NOT_AVAILABLE while __consumer_offsets is created
            }
            assert_eq!(
                (node, host, port),
                admin.clone(),
                "FindCoordinator names another coordinator: {m}"
            );
            if key.as_deref().is_none_or(|k| k == group) {
                answered += 1;
            }
        }
    }
    assert!(
        finds
            .iter()
            .any(|m| m["kind"] == "request" && m["body"].to_string().contains(&group)),
        "kwire saw no FindCoordinator request for {group}"
    );
    assert!(
        answered >= 1,
        "no FindCoordinator response named a coordinator for {group}: {finds:?}"
    );
    eprintln!(
        "e2e_kafka: {} Vote exchanges (leader {leader} granted by {for_leader:?} in epoch {epoch}), \
         {answered} FindCoordinator answers naming node {} at {}:{}; {:.1} s in all",
        ballots.len(),
        admin.0,
        admin.1,
        admin.2,
        started.elapsed().as_secs_f64()
    );
}
