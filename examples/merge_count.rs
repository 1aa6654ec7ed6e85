//! Reads one or more captures (merged by time when several, decompressed
//! when compressed) and prints the packet and byte counts: a way to measure
//! the reader's speed and memory, e.g.
//! `/usr/bin/time -v cargo run --release --example merge_count -- a.pcap b.pcapng.gz`.

use kwire::capture::Source;

fn main() -> std::process::ExitCode {
    let paths: Vec<String> = std::env::args().skip(1).collect();
    let mut src = match Source::open_files(&paths) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("{e}");
            return std::process::ExitCode::from(1);
        }
    };
    let (mut packets, mut bytes, mut last, mut disorder) = (0u64, 0u64, i64::MIN, 0u64);
    while let Some(p) = src.next_packet() {
        match p {
            Ok(p) => {
                packets += 1;
                bytes += p.data.len() as u64;
                disorder += u64::from(p.ts_ns() < last);
                last = p.ts_ns();
            }
            Err(e) => {
                eprintln!("{e}");
                return std::process::ExitCode::from(2);
            }
        }
    }
    println!("{packets} packets, {bytes} bytes, {disorder} out of time order");
    std::process::ExitCode::SUCCESS
}
