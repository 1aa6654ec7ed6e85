//! Writes the synthetic fixtures in `captures/synthetic/`: Vote and
//! FindCoordinator at every version, including those real peers do not send.
//!
//! Run: `cargo run --example gen_fixtures` (deterministic; rewrites the files).

use kwire::capture::writer::{PcapWriter, TsPrecision};
use kwire::synth::kafka::{
    Coordinator, Vote, find_coordinator_request, find_coordinator_response, vote_request,
    vote_response,
};
use kwire::synth::{Flow, Link};
use std::fs::File;
use std::io::BufWriter;
use std::net::SocketAddr;
use std::path::Path;

fn addr(s: &str) -> SocketAddr {
    s.parse().expect("a literal address")
}

fn write(path: &Path, flows: &[Flow]) -> std::io::Result<()> {
    let out = BufWriter::new(File::create(path)?);
    let mut w = PcapWriter::new(
        out,
        Link::Ethernet.linktype() as u32,
        TsPrecision::Micro,
        65535,
    )?;
    for f in flows {
        f.write_pcap(&mut w)?;
    }
    println!("wrote {}", path.display());
    Ok(())
}

fn coordinator(key: &str, node: i32, error: i16, message: Option<&str>) -> Coordinator {
    let (host, port) = if error == 0 {
        (format!("broker-{node}.kafka.local"), 9092)
    } else {
        (String::new(), -1)
    };
    Coordinator {
        key: key.into(),
        node: if error == 0 { node } else { -1 },
        host,
        port,
        error,
        message: message.map(str::to_string),
    }
}

/// One consumer asking a broker, at each version in turn.
fn find_coordinator() -> Vec<Flow> {
    let mut f = Flow::new(addr("10.0.0.5:50312"), addr("10.0.0.1:9092"))
        .with_start(1_764_441_600_000_000_000, 250_000);
    f.syn_handshake();
    let client = "consumer-orders-1";
    let not_available = Some("The coordinator is not available.");
    let not_coordinator = Some("This is not the correct coordinator.");
    let exchanges: Vec<(i16, i8, Vec<&str>, Vec<Coordinator>)> = vec![
        (
            0,
            0,
            vec!["orders-app"],
            vec![coordinator("orders-app", 0, 15, None)],
        ),
        (
            1,
            1,
            vec!["tx-orders-1"],
            vec![coordinator("tx-orders-1", 2, 0, None)],
        ),
        (
            2,
            0,
            vec!["orders-app"],
            vec![coordinator("orders-app", 0, 16, not_coordinator)],
        ),
        (
            3,
            0,
            vec!["orders-app"],
            vec![coordinator("orders-app", 2, 0, None)],
        ),
        (
            4,
            0,
            vec!["orders-app", "billing"],
            vec![
                coordinator("orders-app", 2, 0, None),
                coordinator("billing", 0, 15, not_available),
            ],
        ),
        (
            5,
            1,
            vec!["tx-orders-1"],
            vec![coordinator("tx-orders-1", 3, 0, None)],
        ),
        (
            6,
            2,
            vec!["orders-share:Tr6lNVnQRZK2cHbUymTy5A:0"],
            vec![coordinator(
                "orders-share:Tr6lNVnQRZK2cHbUymTy5A:0",
                1,
                0,
                None,
            )],
        ),
    ];
    for (i, (v, key_type, keys, answers)) in exchanges.iter().enumerate() {
        let corr = i as i32 + 1;
        f.client_send(&find_coordinator_request(*v, corr, client, *key_type, keys));
        f.server_send(&find_coordinator_response(*v, corr, answers));
    }
    f.fin();
    vec![f]
}

fn vote(
    candidate: i32,
    voter: i32,
    epoch: i32,
    pre_vote: bool,
    granted: bool,
    leader: i32,
) -> Vote {
    Vote {
        cluster_id: "Wq2jvLJQR5eQ7kmDX0hSTA".into(),
        candidate,
        voter,
        epoch,
        last_offset: 120 + i64::from(epoch),
        last_epoch: epoch - 1,
        pre_vote,
        granted,
        leader,
        error: 0,
        leader_endpoint: (leader >= 0).then(|| (format!("controller-{leader}.kafka.local"), 9093)),
    }
}

/// Three controllers electing at each Vote version in turn.
fn votes() -> Vec<Flow> {
    let mut flows = Vec::new();
    let start = 1_764_441_700_000_000_000i64;
    // (version, candidate, voter, epoch, prevote, granted, leader known to the voter)
    let rounds = [
        (0, 1, 2, 5, false, true, -1),
        (0, 1, 3, 5, false, false, -1),
        (1, 2, 3, 6, false, true, -1),
        (1, 2, 1, 6, false, false, 1),
        (2, 3, 1, 7, true, true, -1),
        (2, 3, 2, 7, true, false, 2),
        (2, 3, 1, 7, false, true, -1),
    ];
    for (i, &(v, cand, voter, epoch, pre, granted, leader)) in rounds.iter().enumerate() {
        let client = addr(&format!("10.0.0.1{cand}:{}", 40000 + i));
        let server = addr(&format!("10.0.0.1{voter}:9093"));
        let mut f = Flow::new(client, server).with_start(start + i as i64 * 10_000_000, 200_000);
        f.syn_handshake();
        let x = vote(cand, voter, epoch, pre, granted, leader);
        let id = format!("raft-client-{cand}");
        f.client_send(&vote_request(v, i as i32, &id, &x));
        f.server_send(&vote_response(v, i as i32, &x));
        f.fin();
        flows.push(f);
    }
    flows
}

fn main() -> std::io::Result<()> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("captures/synthetic");
    std::fs::create_dir_all(&dir)?;
    write(
        &dir.join("find-coordinator-v0-v6.pcap"),
        &find_coordinator(),
    )?;
    write(&dir.join("vote-v0-v2.pcap"), &votes())?;
    Ok(())
}
