//! `records` fields in the views: the header-only summary per partition, and
//! the record batches' nodes under the field in the tree.

use super::escape::escape;
use crate::codec::{Node, Role, Tree, Value};
use crate::records::summary::Totals;
use crate::records::{Options, tree::decode_tree};

/// Partitions listed by name in a summary line; the rest are counted.
const SUMMARY_PARTITIONS: usize = 4;

/// Whether node `n` is a `records` field holding bytes.
pub fn is_records(n: &Node<'_>) -> bool {
    n.ty() == "records" && matches!(n.value, Value::Bytes(_))
}

/// The bytes of a `records` node's data (after its length prefix).
pub fn data<'a>(n: &Node<'a>) -> Option<&'a [u8]> {
    match n.value {
        Value::Bytes(b) if n.ty() == "records" => b,
        _ => None,
    }
}

/// `records: t[0] 3 records in 1 batch, 120 B, gzip; …`, from batch headers
/// only (nothing is decompressed); empty when the message has no records.
pub fn summary(tree: &Tree<'_>) -> String {
    let mut out = String::new();
    push_summary(&mut out, tree);
    out
}

/// Appends [`summary`]'s text; whether there was any.
pub fn push_summary(out: &mut String, tree: &Tree<'_>) -> bool {
    push_summary_in(out, tree, 0, tree.nodes.len())
}

/// [`push_summary`] of the records under node `at` (the body: a header has none).
pub fn push_summary_under(out: &mut String, tree: &Tree<'_>, at: usize) -> bool {
    let end = tree.nodes.get(at).map_or(at, |n| n.next as usize);
    push_summary_in(out, tree, at, end)
}

/// [`push_summary`] of the nodes from `at` up to `end`.
fn push_summary_in(out: &mut String, tree: &Tree<'_>, at: usize, end: usize) -> bool {
    let nodes = tree.nodes.get(at..end).unwrap_or_default();
    // Most messages carry no records: one pass over the nodes says so.
    if !nodes.iter().any(|n| data(n).is_some_and(|b| !b.is_empty())) {
        return false;
    }
    let mut parts: Vec<(String, Totals)> = Vec::new();
    let mut all = Totals::default();
    // Element ancestors of the current node, as (depth, index).
    let mut elements: Vec<(u16, usize)> = Vec::new();
    for (i, n) in (at..).zip(nodes) {
        while elements.last().is_some_and(|&(d, _)| d >= n.depth) {
            elements.pop();
        }
        if n.role == Role::Element {
            elements.push((n.depth, i));
        }
        let Some(b) = data(n) else { continue };
        if b.is_empty() {
            continue;
        }
        let t = Totals::of(b);
        all.add(b);
        if parts.len() < SUMMARY_PARTITIONS {
            let partition = elements.last().map(|&(_, e)| e);
            let topic = elements
                .len()
                .checked_sub(2)
                .and_then(|k| elements.get(k))
                .map(|&(_, e)| e);
            parts.push((place(tree, topic, partition), t));
        }
    }
    if all.batches + all.partial + all.errors == 0 {
        return false;
    }
    out.push_str("records:");
    for (name, t) in &parts {
        out.push(' ');
        out.push_str(name);
        out.push(' ');
        t.push_description(out);
        out.push(';');
    }
    let shown: u64 = parts.iter().map(|(_, t)| t.records).sum();
    if all.records > shown || parts.len() >= SUMMARY_PARTITIONS {
        out.push_str(" all: ");
        all.push_description(out);
        out.push(';');
    }
    out.pop();
    true
}

/// `topic[partition]` from the element nodes around a records field.
fn place(tree: &Tree<'_>, topic: Option<usize>, partition: Option<usize>) -> String {
    let mut out = String::new();
    if let Some(t) = topic {
        let name = ["Name", "Topic", "TopicName"]
            .iter()
            .find_map(|f| tree.str(t, f).flatten());
        match name {
            Some(n) if !n.is_empty() => out.push_str(&escape(n)),
            _ => {
                let id = tree
                    .field(t, "TopicId")
                    .and_then(|i| tree.nodes.get(i))
                    .and_then(|n| match n.value {
                        Value::Uuid(u) => Some(u),
                        _ => None,
                    });
                if let Some(u) = id {
                    let s = uuid::Uuid::from_bytes(u).simple().to_string();
                    out.push_str(s.get(..8).unwrap_or(&s));
                    out.push('…');
                }
            }
        }
    }
    if let Some(p) = partition {
        let idx = ["Index", "PartitionIndex", "Partition"]
            .iter()
            .find_map(|f| tree.int(p, f));
        if let Some(i) = idx {
            out.push('[');
            out.push_str(itoa::Buffer::new().format(i));
            out.push(']');
        }
    }
    out
}

/// The record batches under a `records` node, as `(node, decompressed)` in
/// pre-order, with depths from `depth` and offsets in the message; the caller
/// renders them. Decoded with the process-wide limits.
pub fn nodes<'b>(
    t: &'b crate::records::tree::RecordsTree,
    n: &Node<'b>,
    data: &'b [u8],
) -> Vec<crate::records::tree::RecNode<'b>> {
    // The data sits at the end of the field's range, after its length prefix.
    let base = n
        .offset
        .saturating_add(n.len)
        .saturating_sub(data.len() as u32);
    t.nodes(data, base, n.depth.saturating_add(1), 0)
}

/// Decodes a records field for the tree view.
pub fn decode(data: &[u8]) -> crate::records::tree::RecordsTree {
    decode_tree(data, &Options::current())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::Prefix;
    use crate::records::encode::{BatchSpec, RecordSpec};
    use crate::records::{Compression, json as rjson};

    #[allow(clippy::too_many_arguments)]
    fn node<'a>(
        name: &'static str,
        index: Option<u32>,
        ty: &'static str,
        value: Value<'a>,
        role: Role,
        depth: u16,
        next: u32,
        offset: u32,
        len: u32,
    ) -> Node<'a> {
        Node {
            label: crate::codec::label(name, ty, ""),
            index,
            value,
            prefix: Prefix::None,
            offset,
            len,
            role,
            depth,
            next,
        }
    }

    /// A Produce-like body: Topics[0] {Name "t", Partitions[0] {Index 3, Records}}.
    fn tree(batch: &[u8]) -> Tree<'_> {
        let n = batch.len() as u32;
        let rec = 40;
        Tree {
            nodes: vec![
                node(
                    "body",
                    None,
                    "struct",
                    Value::None,
                    Role::Body,
                    0,
                    8,
                    0,
                    rec + 4 + n,
                ),
                node(
                    "Topics",
                    None,
                    "[]TopicData",
                    Value::Array(Some(1)),
                    Role::Field,
                    1,
                    8,
                    20,
                    rec + 4 + n - 20,
                ),
                node(
                    "TopicData",
                    Some(0),
                    "TopicData",
                    Value::None,
                    Role::Element,
                    2,
                    8,
                    24,
                    rec + 4 + n - 24,
                ),
                node(
                    "Name",
                    None,
                    "string",
                    Value::Str(Some("t")),
                    Role::Field,
                    3,
                    4,
                    24,
                    3,
                ),
                node(
                    "Partitions",
                    None,
                    "[]PartitionData",
                    Value::Array(Some(1)),
                    Role::Field,
                    3,
                    8,
                    28,
                    rec + 4 + n - 28,
                ),
                node(
                    "PartitionData",
                    Some(0),
                    "PartitionData",
                    Value::None,
                    Role::Element,
                    4,
                    8,
                    32,
                    rec + 4 + n - 32,
                ),
                node(
                    "Index",
                    None,
                    "int32",
                    Value::Int(3),
                    Role::Field,
                    5,
                    7,
                    32,
                    4,
                ),
                node(
                    "Records",
                    None,
                    "records",
                    Value::Bytes(Some(batch)),
                    Role::Field,
                    5,
                    8,
                    rec,
                    4 + n,
                ),
            ],
        }
    }

    #[test]
    fn views_show_the_batches() {
        let spec = BatchSpec {
            compression: Compression::Gzip,
            records: vec![
                RecordSpec::new(0, Some(b"k"), Some(b"v")),
                RecordSpec::new(1, None, None),
            ],
            ..Default::default()
        };
        let b = spec.encode();
        let t = tree(&b);
        assert_eq!(
            summary(&t),
            format!("records: t[3] 2 records in 1 batch, {} B, gzip", b.len())
        );
        // JSON: the field's value is the contract's array.
        let v = crate::view::json::body_value(&t, 0);
        assert_eq!(
            v["Topics"][0]["Partitions"][0]["Records"],
            rjson::value(Some(&b), &Options::default())
        );
        // Tree: the batch hangs under the field, at the data's offset in the message.
        let r = crate::view::tree::render(&t);
        assert!(
            r.contains(&format!(
                "Records records = 2 records in 1 batch, {} B, gzip [0x0028, {}B]",
                b.len(),
                b.len() + 4
            )),
            "{r}"
        );
        assert!(
            r.contains("RecordBatch[0] RecordBatch = struct [0x002c, "),
            "{r}"
        );
        assert!(
            r.contains("Record[1] Record = struct [0x0009, 7B] offsets here are within"),
            "{r}"
        );
        // No records, no summary.
        assert_eq!(summary(&tree(&[])), "");
    }
}
