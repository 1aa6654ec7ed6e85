//! Writes the story captures in `captures/synthetic/stories/`, each built to
//! tell one story that `kwire stats` must report: a split vote, a rejected
//! PreVote, a coordinator moving between brokers, and NOT_COORDINATOR retries.
//! What each file holds, message by message, is in
//! `captures/synthetic/stories/README.md`.
//!
//! Run: `cargo run --example gen_stories` (deterministic; rewrites the files).

use kwire::capture::writer::{PcapWriter, TsPrecision};
use kwire::synth::kafka::{
    Coordinator, Vote, find_coordinator_request, find_coordinator_response, vote_request,
    vote_response,
};
use kwire::synth::{Flow, Link};
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

fn main() -> std::io::Result<()> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("captures/synthetic/stories");
    std::fs::create_dir_all(&dir)?;
    split_vote().write(&dir.join("split-vote.pcap"))?;
    prevote_rejected().write(&dir.join("prevote-rejected.pcap"))?;
    coordinator_moves().write(&dir.join("coordinator-moves.pcap"))?;
    not_coordinator_retries().write(&dir.join("not-coordinator-retries.pcap"))?;
    Ok(())
}
