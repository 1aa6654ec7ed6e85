//! Writes a large synthetic capture for benchmarks (see `kwire::synth::corpus`):
//! by default Vote and FindCoordinator at every version on many connections, with
//! non-ASCII strings and split requests; with `--records`, Produce and Fetch
//! carrying record batches in every codec (needs a kafka-clients jar, found as
//! `kwire` finds it).
//!
//! Run: `cargo run --release --example gen_capture -- --messages 1000000 OUT.pcap`
//! (`--connections N`, default 256; `--seed S`; `--records`). Messages counts
//! requests and responses together.

use kwire::capture::writer::{PcapWriter, TsPrecision};
use kwire::synth::corpus::{self, Spec};
use kwire::{Codec, DecodeOptions, Search};
use std::fs::File;
use std::io::BufWriter;

fn usage() -> ! {
    eprintln!(
        "usage: gen_capture [--messages N] [--connections N] [--seed S] [--records] OUT.pcap"
    );
    std::process::exit(2)
}

fn main() -> std::io::Result<()> {
    let mut spec = Spec {
        messages: 1_000_000,
        connections: 256,
        seed: 1,
    };
    let mut records = false;
    let mut out = None;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut num = || {
            args.next()
                .and_then(|v| v.parse::<u64>().ok())
                .unwrap_or_else(|| usage())
        };
        match a.as_str() {
            "--messages" => spec.messages = num(),
            "--connections" => spec.connections = num().max(1) as usize,
            "--seed" => spec.seed = num(),
            "--records" => records = true,
            _ if out.is_none() && !a.starts_with('-') => out = Some(a),
            _ => usage(),
        }
    }
    let Some(out) = out else { usage() };
    let mut w = PcapWriter::new(
        BufWriter::with_capacity(1 << 20, File::create(&out)?),
        corpus::LINK.linktype() as u32,
        TsPrecision::Micro,
        65535,
    )?;
    let mut sink = |ts: i64, p: &[u8]| w.write_packet(ts, p);
    let n = if records {
        let loaded = Search::from_env(Vec::new()).load();
        eprintln!("{}", loaded.description);
        let codec = Codec::new(loaded.schemas, DecodeOptions::default());
        corpus::records(&codec, spec, &mut sink)?
    } else {
        corpus::mixed(spec, &mut sink)?
    };
    eprintln!(
        "wrote {out}: {n} messages on {} connections",
        spec.connections
    );
    Ok(())
}
