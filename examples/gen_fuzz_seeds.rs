//! Writes seed corpora for the fuzz targets in `fuzz/`:
//! - `fuzz/corpus/codec/`: every Kafka frame of every capture in `captures/`
//!   (split by kwire's own framing), and Vote/FindCoordinator at every version;
//! - `fuzz/corpus/pipeline/`: each capture's first packets in the target's
//!   pcap (mode 1) and pcapng (mode 2) encodings, and the raw file (mode 0).
//!
//! The reassembler target needs no seeds: its input can name real frames.
//!
//! Run: `cargo run --example gen_fuzz_seeds` (deterministic; adds files, names are content hashes).

use kwire::capture::Source;
use kwire::pipeline::{self, Config};
use kwire::synth::kafka::{
    Coordinator, Vote, find_coordinator_request, find_coordinator_response, vote_request,
    vote_response,
};
use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};

/// Packets per capture in a pipeline seed: enough for a few exchanges, small enough to mutate.
const SEED_PACKETS: usize = 40;

fn save(dir: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut h = DefaultHasher::new();
    bytes.hash(&mut h);
    std::fs::write(dir.join(format!("{:016x}", h.finish())), bytes)
}

fn captures(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    for e in std::fs::read_dir(dir)? {
        let p = e?.path();
        if p.is_dir() {
            captures(&p, out)?;
        } else if p.extension().is_some_and(|x| x == "pcap" || x == "pcapng") {
            out.push(p);
        }
    }
    Ok(())
}

/// `[len: u16 LE][caplen: u16 LE][bytes]` per packet, as the pipeline target reads them.
fn records(packets: &[Vec<u8>]) -> Vec<u8> {
    let mut out = Vec::new();
    for p in packets {
        let len = u16::try_from(p.len()).unwrap_or(u16::MAX);
        out.extend_from_slice(&len.to_le_bytes());
        out.extend_from_slice(&len.to_le_bytes());
        out.extend_from_slice(&p[..usize::from(len)]);
    }
    out
}

fn main() -> std::io::Result<()> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let codec = root.join("fuzz/corpus/codec");
    let pipe = root.join("fuzz/corpus/pipeline");
    std::fs::create_dir_all(&codec)?;
    std::fs::create_dir_all(&pipe)?;
    let mut files = Vec::new();
    captures(&root.join("captures"), &mut files)?;
    files.sort();
    let (mut frames, mut pipes) = (0, 0);
    for path in &files {
        let mut src = Source::open_file(path).map_err(std::io::Error::other)?;
        let linktype = src.linktype();
        let mut pkts = Vec::new();
        while let Some(Ok(p)) = src.next_packet() {
            if pkts.len() == SEED_PACKETS {
                break;
            }
            pkts.push(p.data.to_vec());
        }
        let lt = [1, 0, 12, 14, 101, 108, 113, 228, 229, 276]
            .iter()
            .position(|&l| l == linktype)
            .unwrap_or(0) as u8;
        let body = records(&pkts);
        for mode in [1u8, 2] {
            let mut seed = vec![mode, lt];
            seed.extend_from_slice(&body);
            save(&pipe, &seed)?;
            pipes += 1;
        }
        let raw = std::fs::read(path)?;
        if raw.len() <= 32 << 10 {
            let mut seed = vec![0u8];
            seed.extend_from_slice(&raw);
            save(&pipe, &seed)?;
            pipes += 1;
        }

        let mut src = Source::open_file(path).map_err(std::io::Error::other)?;
        let mut failed = None;
        pipeline::run(&mut src, Config::default(), &mut |r| {
            if let Err(e) = save(&codec, r.data) {
                failed = Some(e);
                return ControlFlow::Break(());
            }
            frames += 1;
            ControlFlow::Continue(())
        });
        if let Some(e) = failed {
            return Err(e);
        }
    }
    let vote = Vote {
        cluster_id: "cluster".into(),
        candidate: 1,
        voter: 2,
        epoch: 3,
        last_offset: 40,
        last_epoch: 2,
        pre_vote: true,
        granted: true,
        leader: 1,
        error: 0,
        leader_endpoint: Some(("ctrl-1".into(), 9093)),
    };
    let c = Coordinator {
        key: "group".into(),
        node: 1,
        host: "broker-1".into(),
        port: 9092,
        error: 15,
        message: Some("not available".into()),
    };
    for v in 0..=2 {
        save(&codec, &vote_request(v, 1, "ctrl-1", &vote))?;
        save(&codec, &vote_response(v, 1, &vote))?;
        frames += 2;
    }
    for v in 0..=6 {
        save(
            &codec,
            &find_coordinator_request(v, 1, "app", 1, &["a", "b"]),
        )?;
        save(
            &codec,
            &find_coordinator_response(v, 1, &[c.clone(), c.clone()]),
        )?;
        frames += 2;
    }
    println!(
        "{frames} frames to {}, {pipes} captures to {} (from {} files)",
        codec.display(),
        pipe.display(),
        files.len()
    );
    Ok(())
}
