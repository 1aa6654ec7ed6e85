//! Arbitrary bytes as the contents of a `records` field: decoded with a small
//! decompression cap and with a record limit, in every form kwire shows
//! (JSON, tree nodes, header summary). Seeds: `cargo run --example gen_records_seeds`.
#![no_main]

use kwire::records::summary::Totals;
use kwire::records::tree::decode_tree;
use kwire::records::{Options, json};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    for (cap, max) in [(1 << 16, usize::MAX), (1 << 20, 2), (0, 0)] {
        let o = Options {
            max_decompressed: cap,
            max_records: max,
            schemas: None,
        };
        let mut out = Vec::new();
        json::write(&mut out, Some(data), &o);
        // The JSON is always well formed.
        assert!(serde_json::from_slice::<serde_json::Value>(&out).is_ok());
        let t = decode_tree(data, &o);
        let nodes = t.nodes(data, 4, 1, 0);
        for (i, n) in nodes.iter().enumerate() {
            assert!(n.node.next as usize > i && n.node.next as usize <= nodes.len());
        }
    }
    let _ = Totals::of(data).describe();
});
