//! Writes the story captures in `captures/synthetic/stories/`, each built to
//! tell one story that `kwire stats` must report: a split vote, a rejected
//! PreVote, a coordinator moving between brokers, and NOT_COORDINATOR retries.
//! What each file holds, message by message, is in
//! `captures/synthetic/stories/README.md`.
//!
//! The rebalance and quorum stories use APIs whose schemas come from Kafka's
//! kafka-clients jar (found as `kwire` finds it: `--schemas` aside, `KWIRE_SCHEMAS`,
//! `$KAFKA_HOME/libs`, `~/.m2`); without it only the first four are written.
//!
//! Run: `cargo run --example gen_stories` (deterministic; rewrites the files).

use kwire::capture::writer::{PcapWriter, TsPrecision};
use kwire::synth::kafka::{
    Coordinator, Vote, find_coordinator_request, find_coordinator_response, vote_request,
    vote_response,
};
use kwire::synth::{Flow, Link};
use serde_json::json;
use std::collections::BTreeMap;
use std::fs::File;
use std::io::BufWriter;
use std::net::SocketAddr;
use std::path::Path;

const MS: i64 = 1_000_000;

fn addr(s: &str) -> SocketAddr {
    s.parse().expect("a literal address")
}

/// Connections by (client, server); each keeps its own TCP state.
#[derive(Default)]
struct Story {
    flows: BTreeMap<(SocketAddr, SocketAddr), Flow>,
}

impl Story {
    /// One request at `t` and its response `latency` later, on the connection
    /// from `client` to `server` (opened with a handshake just before first use).
    fn exchange(
        &mut self,
        client: &str,
        server: &str,
        t: i64,
        latency: i64,
        request: &[u8],
        response: &[u8],
    ) {
        let (c, s) = (addr(client), addr(server));
        let f = self.flows.entry((c, s)).or_insert_with(|| {
            let mut f = Flow::new(c, s).with_start(t - 300_000, 100_000);
            f.syn_handshake();
            f
        });
        let mut moved = std::mem::replace(f, Flow::new(c, s)).with_start(t, latency);
        moved.client_send(request).server_send(response);
        *f = moved;
    }

    fn write(self, path: &Path) -> std::io::Result<()> {
        let mut packets: Vec<(i64, Vec<u8>)> = self
            .flows
            .into_values()
            .flat_map(Flow::into_packets)
            .collect();
        packets.sort_by_key(|p| p.0);
        let out = BufWriter::new(File::create(path)?);
        let mut w = PcapWriter::new(
            out,
            Link::Ethernet.linktype() as u32,
            TsPrecision::Micro,
            65535,
        )?;
        for (ts, data) in &packets {
            w.write_packet(*ts, data)?;
        }
        println!("wrote {}", path.display());
        Ok(())
    }
}

#[allow(clippy::too_many_arguments)]
fn vote(
    cluster: &str,
    candidate: i32,
    voter: i32,
    epoch: i32,
    last: (i64, i32),
    pre_vote: bool,
    granted: bool,
    leader: i32,
    leader_endpoint: Option<(&str, u16)>,
) -> Vote {
    Vote {
        cluster_id: cluster.into(),
        candidate,
        voter,
        epoch,
        last_offset: last.0,
        last_epoch: last.1,
        pre_vote,
        granted,
        leader,
        error: 0,
        leader_endpoint: leader_endpoint.map(|(h, p)| (h.to_string(), p)),
    }
}

/// Vote v1, three controllers, no PreVote: at epoch 7 all three stand at once
/// and each denies the others, since it voted for itself. At epoch 8 node 2
/// stands first and node 1 grants it; node 3 stands too, late, and loses again.
fn split_vote() -> Story {
    let cluster = "SplitVoteStoryCluster0";
    let t0 = 1_764_500_000_000_000_000i64;
    let ctrl = |n: i32| format!("10.0.1.{n}:9093");
    let client = |c: i32, v: i32| format!("10.0.1.{c}:{}", 40000 + v);
    let mut s = Story::default();
    let mut corr = 0;
    let mut ex = |s: &mut Story, t_us: i64, lat_ms: i64, x: Vote| {
        corr += 1;
        let id = format!("raft-client-{}", x.candidate);
        s.exchange(
            &client(x.candidate, x.voter),
            &ctrl(x.voter),
            t0 + t_us * 1000,
            lat_ms * MS,
            &vote_request(1, corr, &id, &x),
            &vote_response(1, corr, &x),
        );
    };
    let last = (230, 6);
    // Epoch 7: everyone stands; everyone says no.
    for (i, (c, v)) in [(1, 2), (1, 3), (2, 1), (2, 3), (3, 1), (3, 2)]
        .into_iter()
        .enumerate()
    {
        ex(
            &mut s,
            i as i64 * 100,
            2,
            vote(cluster, c, v, 7, last, false, false, -1, None),
        );
    }
    // Epoch 8: node 2 asks 1 (granted: 2 of 3) and 3 (denied: node 3 stands too).
    ex(
        &mut s,
        350_000,
        3,
        vote(cluster, 2, 1, 8, last, false, true, -1, None),
    );
    ex(
        &mut s,
        351_000,
        3,
        vote(cluster, 2, 3, 8, last, false, false, -1, None),
    );
    // Node 3 asks 1 (already voted for 2) and 2 (now leader of epoch 8).
    ex(
        &mut s,
        352_000,
        3,
        vote(cluster, 3, 1, 8, last, false, false, -1, None),
    );
    ex(
        &mut s,
        352_100,
        4,
        vote(
            cluster,
            3,
            2,
            8,
            last,
            false,
            false,
            2,
            Some(("10.0.1.2", 9093)),
        ),
    );
    s
}

/// Vote v2: node 2 leads epoch 4. Node 3, cut off from the leader, asks twice
/// in a PreVote to start epoch 5; both voters still follow node 2 and say no,
/// so no Vote ever follows and the epoch stays 4.
fn prevote_rejected() -> Story {
    let cluster = "PreVoteStoryCluster000";
    let t0 = 1_764_500_100_000_000_000i64;
    let ctrl = |n: i32| format!("10.0.2.{n}:9093");
    let mut s = Story::default();
    let mut corr = 0;
    for round in 0..2i64 {
        for voter in [1, 2] {
            corr += 1;
            let x = vote(
                cluster,
                3,
                voter,
                4,
                (380, 4),
                true,
                false,
                2,
                Some(("10.0.2.2", 9093)),
            );
            s.exchange(
                &format!("10.0.2.3:{}", 41000 + voter),
                &ctrl(voter),
                t0 + round * 1_500 * MS + i64::from(voter) * 100_000,
                2 * MS,
                &vote_request(2, corr, "raft-client-3", &x),
                &vote_response(2, corr, &x),
            );
        }
    }
    s
}

fn answer(key: &str, node: i32, error: i16, message: Option<&str>) -> Coordinator {
    let ok = error == 0;
    Coordinator {
        key: key.into(),
        node: if ok { node } else { -1 },
        host: if ok {
            format!("broker-{node}.kafka.local")
        } else {
            String::new()
        },
        port: if ok { 9092 } else { -1 },
        error,
        message: message.map(str::to_string),
    }
}

/// FindCoordinator v4: group `orders-app` is coordinated by node 1; 30 s later
/// node 1 is gone, broker 2 first answers COORDINATOR_NOT_AVAILABLE, then
/// node 3. A transactional producer's key stays on node 2 throughout.
fn coordinator_moves() -> Story {
    let t0 = 1_764_500_200_000_000_000i64;
    let mut s = Story::default();
    let consumer = "10.0.3.50:50100";
    let consumer2 = "10.0.3.50:50200";
    let producer = "10.0.3.51:50300";
    let b = |n: i32| format!("10.0.3.{n}:9092");
    let group =
        |corr: i32| find_coordinator_request(4, corr, "orders-consumer-1", 0, &["orders-app"]);
    let txn = |corr: i32| find_coordinator_request(4, corr, "orders-producer", 1, &["orders-tx-1"]);
    s.exchange(
        consumer,
        &b(1),
        t0,
        2 * MS,
        &group(1),
        &find_coordinator_response(4, 1, &[answer("orders-app", 1, 0, None)]),
    );
    s.exchange(
        producer,
        &b(2),
        t0 + 1_000 * MS,
        3 * MS,
        &txn(1),
        &find_coordinator_response(4, 1, &[answer("orders-tx-1", 2, 0, None)]),
    );
    s.exchange(
        consumer2,
        &b(2),
        t0 + 30_000 * MS,
        2 * MS,
        &group(7),
        &find_coordinator_response(
            4,
            7,
            &[answer(
                "orders-app",
                0,
                15,
                Some("The coordinator is not available."),
            )],
        ),
    );
    s.exchange(
        consumer2,
        &b(2),
        t0 + 30_100 * MS,
        2 * MS,
        &group(8),
        &find_coordinator_response(4, 8, &[answer("orders-app", 3, 0, None)]),
    );
    s.exchange(
        producer,
        &b(2),
        t0 + 31_000 * MS,
        3 * MS,
        &txn(9),
        &find_coordinator_response(4, 9, &[answer("orders-tx-1", 2, 0, None)]),
    );
    s
}

/// FindCoordinator v3: a consumer asks broker 1 for group `billing` five
/// times, 100 ms apart; four answers are NOT_COORDINATOR, the fifth node 2.
fn not_coordinator_retries() -> Story {
    let t0 = 1_764_500_300_000_000_000i64;
    let mut s = Story::default();
    for i in 0..5i32 {
        let corr = 10 + i;
        let a = if i < 4 {
            answer(
                "billing",
                0,
                16,
                Some("This is not the correct coordinator."),
            )
        } else {
            answer("billing", 2, 0, None)
        };
        s.exchange(
            "10.0.4.50:50400",
            "10.0.4.1:9092",
            t0 + i64::from(i) * 100 * MS,
            MS,
            &find_coordinator_request(3, corr, "billing-consumer", 0, &["billing"]),
            &find_coordinator_response(3, corr, &[a]),
        );
    }
    s
}

/// A frame encoded with the installed (jar) schemas.
fn enc(r: Result<Vec<u8>, kwire::codec::EncodeError>) -> Vec<u8> {
    r.expect("the story's body fits the schema")
}

fn req(key: i16, v: i16, corr: i32, client: &str, body: serde_json::Value) -> Vec<u8> {
    enc(kwire::codec::encode_request(
        key,
        v,
        corr,
        Some(client),
        &body,
    ))
}

fn resp(key: i16, v: i16, corr: i32, body: serde_json::Value) -> Vec<u8> {
    enc(kwire::codec::encode_response(key, v, corr, &body))
}

const JOIN: i16 = 11;
const HEARTBEAT: i16 = 12;
const LEAVE: i16 = 13;
const SYNC: i16 = 14;
const UNKNOWN_MEMBER_ID: i16 = 25;
const REBALANCE_IN_PROGRESS: i16 = 27;
const MEMBER_ID_REQUIRED: i16 = 79;

/// One consumer of the rebalance story: its address, client id, member id and
/// correlation counter.
struct Member {
    addr: String,
    client: String,
    id: String,
    corr: i32,
}

impl Member {
    fn new(n: u8, name: &str) -> Member {
        Member {
            addr: format!("10.0.5.{}:{}", 10 + n, 50000 + u16::from(n)),
            client: format!("{name}-client"),
            id: format!("{name}-{n}{n}{n}{n}-member"),
            corr: 0,
        }
    }
}

/// The group-membership exchanges of one member with the coordinator.
struct Group<'a> {
    s: &'a mut Story,
    t0: i64,
}

const COORD: &str = "10.0.5.1:9092";
const GROUP: &str = "payments";

impl Group<'_> {
    #[allow(clippy::too_many_arguments)]
    fn ex(
        &mut self,
        m: &mut Member,
        t_ms: i64,
        lat_ms: i64,
        key: i16,
        v: i16,
        rq: serde_json::Value,
        rs: serde_json::Value,
    ) {
        m.corr += 1;
        let (a, b) = (req(key, v, m.corr, &m.client, rq), resp(key, v, m.corr, rs));
        self.s
            .exchange(&m.addr, COORD, self.t0 + t_ms * MS, lat_ms * MS, &a, &b);
    }

    /// JoinGroup v9: a first join (empty member id) is told MEMBER_ID_REQUIRED and its id.
    fn first_join(&mut self, m: &mut Member, t_ms: i64) {
        let rq = json!({"GroupId": GROUP, "SessionTimeoutMs": 10000, "RebalanceTimeoutMs": 30000,
            "MemberId": "", "ProtocolType": "consumer",
            "Protocols": [{"Name": "range", "Metadata": ""}]});
        let rs = json!({"ErrorCode": MEMBER_ID_REQUIRED, "GenerationId": -1, "ProtocolType": null,
            "ProtocolName": null, "Leader": "", "MemberId": m.id, "Members": []});
        self.ex(m, t_ms, 1, JOIN, 9, rq, rs);
    }

    /// JoinGroup v9 with its member id, answered `lat_ms` later with generation `gen`;
    /// the leader's answer lists `members`.
    fn join(
        &mut self,
        m: &mut Member,
        t_ms: i64,
        lat_ms: i64,
        gen_id: i32,
        leader: &str,
        members: &[&str],
    ) {
        let rq = json!({"GroupId": GROUP, "SessionTimeoutMs": 10000, "RebalanceTimeoutMs": 30000,
            "MemberId": m.id, "ProtocolType": "consumer",
            "Protocols": [{"Name": "range", "Metadata": ""}]});
        let listed: Vec<serde_json::Value> = if m.id == leader {
            members
                .iter()
                .map(|id| json!({"MemberId": id, "Metadata": ""}))
                .collect()
        } else {
            Vec::new()
        };
        let rs = json!({"ErrorCode": 0, "GenerationId": gen_id, "ProtocolType": "consumer",
            "ProtocolName": "range", "Leader": leader, "MemberId": m.id, "Members": listed});
        self.ex(m, t_ms, lat_ms, JOIN, 9, rq, rs);
    }

    /// SyncGroup v5 for generation `gen`, answered without error.
    fn sync(&mut self, m: &mut Member, t_ms: i64, gen_id: i32) {
        let rq = json!({"GroupId": GROUP, "GenerationId": gen_id, "MemberId": m.id,
            "ProtocolType": "consumer", "ProtocolName": "range", "Assignments": []});
        let rs = json!({"ErrorCode": 0, "ProtocolType": "consumer", "ProtocolName": "range",
            "Assignment": ""});
        self.ex(m, t_ms, 2, SYNC, 5, rq, rs);
    }

    /// Heartbeat v4 at generation `gen`, answered with `error`.
    fn heartbeat(&mut self, m: &mut Member, t_ms: i64, gen_id: i32, error: i16) {
        let rq = json!({"GroupId": GROUP, "GenerationId": gen_id, "MemberId": m.id});
        self.ex(m, t_ms, 1, HEARTBEAT, 4, rq, json!({"ErrorCode": error}));
    }

    /// LeaveGroup v5 for the member itself.
    fn leave(&mut self, m: &mut Member, t_ms: i64) {
        let rq =
            json!({"GroupId": GROUP, "Members": [{"MemberId": m.id, "Reason": "shutting down"}]});
        let rs = json!({"ErrorCode": 0, "Members": [{"MemberId": m.id, "ErrorCode": 0}]});
        self.ex(m, t_ms, 1, LEAVE, 5, rq, rs);
    }
}

/// Group `payments` on coordinator 10.0.5.1:9092: `a` joins alone (generation 1);
/// `b` joins (2); `c` joins (3); `b` leaves (4); `c` stops heartbeating, is dropped
/// (5), and its next heartbeat is told UNKNOWN_MEMBER_ID.
fn group_rebalance() -> Story {
    let mut s = Story::default();
    let mut g = Group {
        s: &mut s,
        t0: 1_764_500_500_000_000_000,
    };
    let (mut a, mut b, mut c) = (
        Member::new(1, "a"),
        Member::new(2, "b"),
        Member::new(3, "c"),
    );
    let (ia, ib, ic) = (a.id.clone(), b.id.clone(), c.id.clone());
    // Generation 1: a alone.
    g.first_join(&mut a, 0);
    g.join(&mut a, 10, 3, 1, &ia, &[&ia]);
    g.sync(&mut a, 20, 1);
    g.heartbeat(&mut a, 3000, 1, 0);
    // Generation 2: b joins; a learns of it from its heartbeat and rejoins.
    g.first_join(&mut b, 5000);
    g.join(&mut b, 5010, 1010, 2, &ia, &[]);
    g.heartbeat(&mut a, 6000, 1, REBALANCE_IN_PROGRESS);
    g.join(&mut a, 6010, 10, 2, &ia, &[&ia, &ib]);
    g.sync(&mut a, 6030, 2);
    g.sync(&mut b, 6031, 2);
    // Generation 3: c joins.
    g.first_join(&mut c, 9000);
    g.join(&mut c, 9010, 590, 3, &ia, &[]);
    g.heartbeat(&mut a, 9500, 2, REBALANCE_IN_PROGRESS);
    g.heartbeat(&mut b, 9505, 2, REBALANCE_IN_PROGRESS);
    g.join(&mut a, 9510, 90, 3, &ia, &[&ia, &ib, &ic]);
    g.join(&mut b, 9520, 80, 3, &ia, &[]);
    g.sync(&mut a, 9610, 3);
    g.sync(&mut b, 9615, 3);
    g.sync(&mut c, 9620, 3);
    // Generation 4: b leaves.
    g.leave(&mut b, 12000);
    g.heartbeat(&mut a, 12500, 3, REBALANCE_IN_PROGRESS);
    g.heartbeat(&mut c, 12600, 3, REBALANCE_IN_PROGRESS);
    g.join(&mut a, 12510, 190, 4, &ia, &[&ia, &ic]);
    g.join(&mut c, 12610, 90, 4, &ia, &[]);
    g.sync(&mut a, 12710, 4);
    g.sync(&mut c, 12720, 4);
    // Generation 5: c falls silent past its 10 s session timeout and is dropped.
    g.heartbeat(&mut a, 15000, 4, 0);
    g.heartbeat(&mut a, 23000, 4, REBALANCE_IN_PROGRESS);
    g.join(&mut a, 23010, 10, 5, &ia, &[&ia]);
    g.sync(&mut a, 23030, 5);
    g.heartbeat(&mut c, 24000, 4, UNKNOWN_MEMBER_ID);
    s
}

const FETCH: i16 = 1;
const BEGIN: i16 = 53;
const END: i16 = 54;
const QUORUM_CLUSTER: &str = "QuorumStoryCluster000";
const METADATA_TOPIC_ID: &str = "00000000-0000-0000-0000-000000000001";

/// Controllers 1, 2, 3 at 10.0.6.N:9093. Node 1 announces epoch 5 with
/// BeginQuorumEpoch; followers fetch from it (Fetch v17, CurrentLeader 1@5). Node 1
/// resigns with EndQuorumEpoch preferring 3 then 2; node 3 wins epoch 6 by Vote,
/// announces it, and the followers fetch from it (3@6). A consumer's Fetch of another
/// topic (no cluster id) names leader 9 at epoch 99, which is not KRaft's and must
/// not appear.
fn quorum_handover() -> Story {
    let t0 = 1_764_500_900_000_000_000i64;
    let ctrl = |n: i32| format!("10.0.6.{n}:9093");
    let client = |c: i32, v: i32| format!("10.0.6.{c}:{}", 41000 + v);
    let mut s = Story::default();
    let mut corr: BTreeMap<(i32, i32), i32> = BTreeMap::new();
    let mut next = |c: i32, v: i32| {
        let n = corr.entry((c, v)).or_insert(0);
        *n += 1;
        *n
    };
    let endpoint =
        |n: i32| json!([{"Name": "CONTROLLER", "Host": format!("10.0.6.{n}"), "Port": 9093}]);
    let node_endpoint =
        |n: i32| json!([{"NodeId": n, "Host": format!("10.0.6.{n}"), "Port": 9093}]);
    let part = |leader: i32, epoch: i32| {
        json!({"TopicName": "__cluster_metadata",
        "Partitions": [{"PartitionIndex": 0, "ErrorCode": 0, "LeaderId": leader, "LeaderEpoch": epoch}]})
    };
    let begin = |s: &mut Story,
                 t_ms: i64,
                 leader: i32,
                 voter: i32,
                 epoch: i32,
                 next: &mut dyn FnMut(i32, i32) -> i32| {
        let c = next(leader, voter);
        let rq = json!({"ClusterId": QUORUM_CLUSTER, "VoterId": voter, "Topics": [{"TopicName": "__cluster_metadata",
            "Partitions": [{"PartitionIndex": 0, "VoterDirectoryId": "00000000-0000-0000-0000-000000000000",
            "LeaderId": leader, "LeaderEpoch": epoch}]}], "LeaderEndpoints": endpoint(leader)});
        let rs = json!({"ErrorCode": 0, "Topics": [part(leader, epoch)], "NodeEndpoints": node_endpoint(leader)});
        s.exchange(
            &client(leader, voter),
            &ctrl(voter),
            t0 + t_ms * MS,
            2 * MS,
            &req(BEGIN, 1, c, &format!("raft-client-{leader}"), rq),
            &resp(BEGIN, 1, c, rs),
        );
    };
    let fetch = |s: &mut Story,
                 t_ms: i64,
                 follower: i32,
                 leader: i32,
                 epoch: i32,
                 next: &mut dyn FnMut(i32, i32) -> i32| {
        let c = next(follower, leader);
        let rq = json!({"ClusterId": QUORUM_CLUSTER, "ReplicaState": {"ReplicaId": follower, "ReplicaEpoch": -1},
            "MaxWaitMs": 500, "MinBytes": 0, "MaxBytes": 8388608,
            "Topics": [{"TopicId": METADATA_TOPIC_ID, "Partitions": [{"Partition": 0,
                "CurrentLeaderEpoch": epoch, "FetchOffset": 120, "LastFetchedEpoch": epoch, "PartitionMaxBytes": 0}]}]});
        let rs = json!({"ErrorCode": 0, "SessionId": 0, "Responses": [{"TopicId": METADATA_TOPIC_ID,
            "Partitions": [{"PartitionIndex": 0, "ErrorCode": 0, "HighWatermark": 120, "LastStableOffset": 120,
            "LogStartOffset": 0, "CurrentLeader": {"LeaderId": leader, "LeaderEpoch": epoch},
            "AbortedTransactions": [], "PreferredReadReplica": -1, "Records": null}]}]});
        s.exchange(
            &client(follower, leader),
            &ctrl(leader),
            t0 + t_ms * MS,
            3 * MS,
            &req(FETCH, 17, c, &format!("raft-client-{follower}"), rq),
            &resp(FETCH, 17, c, rs),
        );
    };
    // Epoch 5: node 1 announces itself; 2 and 3 fetch from it.
    begin(&mut s, 0, 1, 2, 5, &mut next);
    begin(&mut s, 1, 1, 3, 5, &mut next);
    fetch(&mut s, 100, 2, 1, 5, &mut next);
    fetch(&mut s, 101, 3, 1, 5, &mut next);
    // Node 1 resigns, preferring 3 then 2.
    for (i, v) in [2, 3].into_iter().enumerate() {
        let c = next(1, v);
        let rq = json!({"ClusterId": QUORUM_CLUSTER, "Topics": [{"TopicName": "__cluster_metadata",
            "Partitions": [{"PartitionIndex": 0, "LeaderId": 1, "LeaderEpoch": 5, "PreferredCandidates": [
                {"CandidateId": 3, "CandidateDirectoryId": "00000000-0000-0000-0000-000000000000"},
                {"CandidateId": 2, "CandidateDirectoryId": "00000000-0000-0000-0000-000000000000"}]}]}],
            "LeaderEndpoints": endpoint(1)});
        let rs = json!({"ErrorCode": 0, "Topics": [part(1, 5)], "NodeEndpoints": node_endpoint(1)});
        s.exchange(
            &client(1, v),
            &ctrl(v),
            t0 + (2000 + i as i64) * MS,
            2 * MS,
            &req(END, 1, c, "raft-client-1", rq),
            &resp(END, 1, c, rs),
        );
    }
    // Epoch 6: node 3 asks 2 (granted) and 1 (granted), then announces itself.
    for (i, v) in [2, 1].into_iter().enumerate() {
        let x = vote(QUORUM_CLUSTER, 3, v, 6, (120, 5), false, true, -1, None);
        let c = next(3, v);
        s.exchange(
            &client(3, v),
            &ctrl(v),
            t0 + (2100 + i as i64) * MS,
            4 * MS,
            &vote_request(2, c, "raft-client-3", &x),
            &vote_response(2, c, &x),
        );
    }
    begin(&mut s, 2200, 3, 1, 6, &mut next);
    begin(&mut s, 2201, 3, 2, 6, &mut next);
    fetch(&mut s, 2300, 1, 3, 6, &mut next);
    fetch(&mut s, 2301, 2, 3, 6, &mut next);
    // A consumer's Fetch (no cluster id) whose answer names leader 9 at epoch 99.
    let topic = "7a6b0c1d-2e3f-4051-8263-748596a7b8c9";
    let rq = json!({"ReplicaState": {"ReplicaId": -1, "ReplicaEpoch": -1}, "MaxWaitMs": 500, "MinBytes": 1,
        "MaxBytes": 52428800, "Topics": [{"TopicId": topic, "Partitions": [{"Partition": 0,
        "CurrentLeaderEpoch": 99, "FetchOffset": 0, "LastFetchedEpoch": -1, "PartitionMaxBytes": 1048576}]}]});
    let rs = json!({"ErrorCode": 0, "SessionId": 0, "Responses": [{"TopicId": topic,
        "Partitions": [{"PartitionIndex": 0, "ErrorCode": 6, "HighWatermark": -1, "LastStableOffset": -1,
        "LogStartOffset": -1, "CurrentLeader": {"LeaderId": 9, "LeaderEpoch": 99},
        "AbortedTransactions": null, "PreferredReadReplica": -1, "Records": null}]}]});
    s.exchange(
        "10.0.6.50:52000",
        "10.0.6.1:9092",
        t0 + 2400 * MS,
        MS,
        &req(FETCH, 17, 1, "shop-consumer", rq),
        &resp(FETCH, 17, 1, rs),
    );
    s
}

fn main() -> std::io::Result<()> {
    let loaded = kwire::Search::from_env(Vec::new()).load();
    let has_jar = !loaded
        .schemas
        .versions(JOIN, kwire::codec::Kind::Request)
        .is_empty();
    let _ = kwire::install_codec(kwire::Codec::new(
        loaded.schemas,
        kwire::DecodeOptions::default(),
    ));
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("captures/synthetic/stories");
    std::fs::create_dir_all(&dir)?;
    split_vote().write(&dir.join("split-vote.pcap"))?;
    prevote_rejected().write(&dir.join("prevote-rejected.pcap"))?;
    coordinator_moves().write(&dir.join("coordinator-moves.pcap"))?;
    not_coordinator_retries().write(&dir.join("not-coordinator-retries.pcap"))?;
    if has_jar {
        group_rebalance().write(&dir.join("group-rebalance.pcap"))?;
        quorum_handover().write(&dir.join("quorum-handover.pcap"))?;
    } else {
        eprintln!("no kafka-clients jar found: group-rebalance and quorum-handover not written");
    }
    Ok(())
}
