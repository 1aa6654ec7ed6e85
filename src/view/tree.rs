//! The seed-style object tree: one line per node with type, value,
//! `[0xOFFSET, NB]` and the schema's description.

use super::escape::escape;
use crate::codec::{Node, Prefix, Role, Tree, Value};
use crate::proto::{api_name, error_name};
use std::fmt::Write;

/// Longest description shown in full; longer ones are cut, as the seed pages do.
const ABOUT_MAX: usize = 78;
const ABOUT_CUT: usize = 75;
/// Raw bytes shown before eliding.
const BYTES_SHOWN: usize = 32;

/// Renders the whole tree, one node per line.
pub fn render(tree: &Tree<'_>) -> String {
    render_named(tree, &[])
}

/// As [`render`], with the topic name after each `TopicId` node in `named` (sorted by
/// node, as [`crate::topics::IdNames::nodes`] gives them).
pub fn render_named(tree: &Tree<'_>, named: &[(usize, &str)]) -> String {
    let mut out = String::new();
    if tree.nodes.is_empty() {
        return out;
    }
    let version = tree.root().and_then(|n| match n.value {
        Value::Int(v) => Some(v),
        _ => None,
    });
    let at = Ctx { version, named };
    line(&mut out, "", tree, 0, &at);
    let mut prefix = String::new();
    children(&mut out, tree, 0, &mut prefix, &at);
    out
}

/// What every line of one rendering needs.
struct Ctx<'n> {
    version: Option<i64>,
    named: &'n [(usize, &'n str)],
}

fn children(out: &mut String, tree: &Tree<'_>, i: usize, prefix: &mut String, at: &Ctx<'_>) {
    let end = tree.nodes.get(i).map_or(0, |n| n.next);
    for c in tree.children(i) {
        let last = tree.nodes.get(c).is_some_and(|n| n.next == end);
        let lead = format!("{prefix}+-- ");
        line(out, &lead, tree, c, at);
        let len = prefix.len();
        prefix.push_str(if last { "    " } else { "|   " });
        children(out, tree, c, prefix, at);
        if let Some(n) = tree.nodes.get(c) {
            if let Some(data) = super::records::data(n) {
                record_batches(out, n, data, prefix, at.version);
            }
        }
        prefix.truncate(len);
    }
}

/// The batches and records of a `records` field, under its line.
fn record_batches(
    out: &mut String,
    field: &Node<'_>,
    data: &[u8],
    prefix: &mut String,
    version: Option<i64>,
) {
    let t = super::records::decode(data);
    let nodes = super::records::nodes(&t, field, data);
    if nodes.is_empty() {
        return;
    }
    // A local tree whose root stands for the field, so the same drawing applies.
    let mut local = Tree {
        nodes: Vec::with_capacity(nodes.len() + 1),
    };
    let mut root = field.clone();
    root.value = Value::None;
    root.next = nodes.len() as u32 + 1;
    local.nodes.push(root);
    local.nodes.extend(nodes.into_iter().map(|r| {
        let mut n = r.node;
        n.next += 1;
        n
    }));
    let at = Ctx {
        version,
        named: &[],
    };
    children(out, &local, 0, prefix, &at);
}

fn line(out: &mut String, lead: &str, tree: &Tree<'_>, i: usize, at: &Ctx<'_>) {
    let version = at.version;
    let Some(n) = tree.nodes.get(i) else { return };
    out.push_str(lead);
    label(out, n);
    if let Some(name) = named(at.named, i) {
        topic_note(out, name);
    }
    let _ = write!(out, " [0x{:04x}, {}B]", n.offset, n.len);
    let about = about(n, version);
    if !about.is_empty() {
        out.push(' ');
        if about.chars().count() > ABOUT_MAX {
            out.extend(about.chars().take(ABOUT_CUT));
            out.push_str("...");
        } else {
            out.push_str(&about);
        }
    }
    out.push('\n');
}

/// The description shown for a node, as the seed trees give it.
pub fn about(n: &Node<'_>, version: Option<i64>) -> String {
    match n.role {
        Role::Body => match version {
            Some(v) => format!("message body, version {v}"),
            None => "message body".into(),
        },
        Role::Length => match n.value {
            Value::Array(Some(1)) => "1 element follows".into(),
            Value::Array(Some(c)) => format!("{c} elements follow"),
            _ => "null array".into(),
        },
        _ => n.about.to_string(),
    }
}

/// The name shown beside node `i`, from a list sorted by node.
pub fn named<'n>(named: &[(usize, &'n str)], i: usize) -> Option<&'n str> {
    let k = named.binary_search_by(|(n, _)| n.cmp(&i)).ok()?;
    named.get(k).map(|(_, s)| *s)
}

/// Appends a topic id's name as the tree shows it: ` (topic "orders")`.
pub fn topic_note(out: &mut String, name: &str) {
    let _ = write!(out, " (topic \"{}\")", escape(name));
}

/// Writes `name type = value`, or the header-style labels for containers.
pub fn label(out: &mut String, n: &Node<'_>) {
    match n.role {
        Role::Message => {
            let _ = write!(out, "{} {}", n.name, n.ty);
            if let Value::Int(v) = n.value {
                let _ = write!(out, " v{v}");
            }
            return;
        }
        Role::Frame => {
            out.push_str(n.name);
            return;
        }
        Role::Header => {
            out.push_str(n.name);
            if let Value::Int(v) = n.value {
                let _ = write!(out, " v{v}");
            }
            return;
        }
        Role::Body => {
            let _ = write!(out, "{} struct", n.name);
            return;
        }
        _ => {}
    }
    out.push_str(n.name);
    if let Some(i) = n.index {
        let _ = write!(out, "[{i}]");
    }
    let _ = write!(out, " {} = ", n.ty);
    value(out, n);
}

/// Writes a node's value as the tree shows it.
pub fn value(out: &mut String, n: &Node<'_>) {
    match (n.role, n.value) {
        (Role::Length, Value::Array(_)) => match n.prefix {
            Prefix::Compact(0) => out.push_str("0 (compact, null)"),
            Prefix::Compact(c) => {
                let _ = write!(out, "{c} (compact, n+1)");
            }
            Prefix::Int32(-1) => out.push_str("-1 (null)"),
            Prefix::Int32(c) => {
                let _ = write!(out, "{c}");
            }
            _ => {}
        },
        (Role::Tagged(tag), _) => {
            let _ = write!(out, "tag {tag}");
        }
        (Role::UnknownTagged(tag), Value::Bytes(Some(b))) => {
            let _ = write!(out, "tag {tag}, {} bytes", b.len());
            if !b.is_empty() {
                out.push_str(": ");
                hex(out, b);
            }
        }
        (Role::Raw, Value::Bytes(Some(b))) => {
            let _ = write!(out, "{} bytes", b.len());
        }
        (_, Value::None) => out.push_str("struct"),
        (_, Value::Int(v)) => {
            let _ = write!(out, "{v}");
            if let Some(note) = int_note(n, v) {
                let _ = write!(out, " ({note})");
            }
        }
        (_, Value::Float(v)) => {
            let _ = write!(out, "{v}");
        }
        (_, Value::Bool(b)) => {
            let _ = write!(out, "{b}");
        }
        (_, Value::Uuid(u)) => {
            let _ = write!(out, "{}", uuid::Uuid::from_bytes(u).hyphenated());
        }
        (_, Value::Array(None)) => out.push_str("null"),
        (_, Value::Array(Some(1))) => out.push_str("1 element"),
        (_, Value::Array(Some(c))) => {
            let _ = write!(out, "{c} elements");
        }
        (_, Value::Str(s)) => {
            match s {
                Some(s) => {
                    let _ = write!(out, "\"{}\"", escape(s));
                }
                None => out.push_str("null"),
            }
            prefix_note(out, n.prefix, s.map(str::len));
        }
        (_, Value::Bytes(Some(b))) if n.ty == "records" => {
            // What the batch headers say, without decompressing.
            out.push_str(&crate::records::summary::Totals::of(b).describe());
            prefix_note(out, n.prefix, Some(b.len()));
        }
        (_, Value::Bytes(b)) => {
            match b {
                Some(b) => hex(out, b),
                None => out.push_str("null"),
            }
            prefix_note(out, n.prefix, b.map(<[u8]>::len));
        }
    }
}

fn prefix_note(out: &mut String, p: Prefix, len: Option<usize>) {
    let _ = match (p, len) {
        (Prefix::Compact(n), Some(_)) => write!(out, " (compact, len+1={n})"),
        (Prefix::Compact(_), None) => write!(out, " (compact, 0)"),
        (Prefix::Int16(n), _) => write!(out, " (int16 len={n})"),
        (Prefix::Int32(n), _) => write!(out, " (int32 len={n})"),
        (Prefix::None, _) => Ok(()),
    };
}

fn hex(out: &mut String, b: &[u8]) {
    for byte in b.iter().take(BYTES_SHOWN) {
        let _ = write!(out, "{byte:02x}");
    }
    if b.len() > BYTES_SHOWN {
        out.push('…');
    }
}

/// Names for numbers that have them: API keys, and non-zero error codes.
fn int_note(n: &Node<'_>, v: i64) -> Option<&'static str> {
    let code = i16::try_from(v).ok()?;
    if n.name == "request_api_key" {
        return api_name(code);
    }
    if n.name.ends_with("ErrorCode") && code != 0 {
        return error_name(code);
    }
    None
}

/// One message for `--format tree`: a heading line, the tree, then any error and warnings.
pub fn record(r: &crate::dissect::Record<'_>) -> String {
    use super::labels::{addr, api_version, latency};
    let f = r;
    let m = &r.msg;
    let mut out = format!(
        "Frame {}: {} → {}, {:.6} s, {} {} corr={}, {} bytes",
        f.packet,
        addr(&f.src),
        addr(&f.dst),
        (f.ts_ns - r.first_ts_ns) as f64 / 1e9,
        api_version(m),
        m.kind.as_str(),
        m.correlation_id
            .map_or_else(|| "?".into(), |c| c.to_string()),
        f.wire_size,
    );
    if let Some(src) = r.version_source {
        let _ = write!(out, ", version from {}", src.as_str());
    }
    if let (Some(req), Some(ns)) = (f.request_packet, f.latency_ns) {
        let _ = write!(out, ", request in frame {req}, {}", latency(ns / 1000));
    }
    out.push('\n');
    if let Some(t) = &r.tls {
        push_tls(&mut out, t, f.wire_size);
    }
    out.push_str(&render_named(&m.tree, &r.topic_names.nodes(&m.tree)));
    if let Some(e) = &m.error {
        let _ = writeln!(out, "!! malformed: {e}");
    }
    for w in f.warnings.iter().chain(m.warnings.iter()) {
        let _ = writeln!(out, "! {}", escape(w));
    }
    out.push('\n');
    out
}

/// The TLS layer above a decrypted message: version, suite, and each record
/// that carried its bytes (which of them, and where the record lies).
fn push_tls(out: &mut String, t: &crate::dissect::TlsTag, wire_size: u64) {
    let _ = writeln!(out, "Transport Layer Security: {}, {}", t.version, t.suite);
    for rec in &t.records {
        let from = rec.plain_start.max(0);
        let to = (rec.plain_start + rec.plain_len as i64).min(wire_size as i64);
        let _ = writeln!(
            out,
            "  record seq {}: {} bytes at stream offset {}, message bytes {from}..{to} of {wire_size}",
            rec.seq, rec.wire_len, rec.stream_offset
        );
    }
}
