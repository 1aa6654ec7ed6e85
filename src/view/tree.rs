//! The seed-style object tree: one line per node with type, value,
//! `[0xOFFSET, NB]` and the schema's description.

use super::escape::push_escaped;
use super::labels::{push_api_version, push_int, push_latency};
use crate::codec::{Node, Prefix, Role, Tree, Value};
use crate::proto::{api_name, error_name};
use std::borrow::Cow;
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
    write_named(&mut out, tree, named);
    out
}

/// Appends [`render_named`]'s text to `out`.
pub fn write_named(out: &mut String, tree: &Tree<'_>, named: &[(usize, &str)]) {
    if tree.nodes.is_empty() {
        return;
    }
    let version = tree.root().and_then(|n| match n.value {
        Value::Int(v) => Some(v),
        _ => None,
    });
    let at = Ctx { version, named };
    line(out, None, tree, 0, &at);
    let mut prefix = String::new();
    children(out, tree, 0, &mut prefix, &at);
}

/// What every line of one rendering needs.
struct Ctx<'n> {
    version: Option<i64>,
    named: &'n [(usize, &'n str)],
}

fn children(out: &mut String, tree: &Tree<'_>, i: usize, prefix: &mut String, at: &Ctx<'_>) {
    let end = tree.nodes.get(i).map_or(0, |n| n.next);
    for c in tree.children(i) {
        let Some(n) = tree.nodes.get(c) else { continue };
        line(out, Some(prefix), tree, c, at);
        // A leaf (most nodes) draws nothing under it: no prefix to grow, no call.
        let data = super::records::data(n);
        if n.next as usize <= c + 1 && data.is_none() {
            continue;
        }
        let len = prefix.len();
        prefix.push_str(if n.next == end { "    " } else { "|   " });
        children(out, tree, c, prefix, at);
        if let Some(data) = data {
            record_batches(out, n, data, prefix, at.version);
        }
        prefix.truncate(len);
    }
}

/// The batches and records of a `records` field, under its line, written
/// straight from the decoded batches ([`crate::records::tree::RecordsTree::render`]).
fn record_batches(
    out: &mut String,
    field: &Node<'_>,
    data: &[u8],
    prefix: &mut String,
    _version: Option<i64>,
) {
    let t = super::records::decode(data);
    // The data sits at the end of the field's range, after its length prefix.
    let base = field
        .offset
        .saturating_add(field.len)
        .saturating_sub(data.len() as u32);
    t.render(out, data, base, prefix);
}

/// [`record_batches`] through the generic node drawing, which it must match.
#[cfg(test)]
fn record_batches_generic(
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

/// One node's line; `prefix` is the drawing before a child's `+-- ` (None for the root).
fn line(out: &mut String, prefix: Option<&str>, tree: &Tree<'_>, i: usize, at: &Ctx<'_>) {
    let version = at.version;
    let Some(n) = tree.nodes.get(i) else { return };
    if let Some(p) = prefix {
        out.push_str(p);
        out.push_str("+-- ");
    }
    label(out, n);
    if let Some(name) = named(at.named, i) {
        topic_note(out, name);
    }
    super::labels::push_place(out, n.offset, n.len);
    match (n.role, n.value) {
        // The generated descriptions are short: written in place, never cut.
        (Role::Body, _) => {
            out.push_str(" message body");
            if let Some(v) = version {
                out.push_str(", version ");
                push_int(out, v);
            }
        }
        (Role::Length, Value::Array(Some(1))) => out.push_str(" 1 element follows"),
        (Role::Length, Value::Array(Some(c))) => {
            out.push(' ');
            push_int(out, c);
            out.push_str(" elements follow");
        }
        (Role::Length, _) => out.push_str(" null array"),
        _ => push_about(out, n.about()),
    }
    out.push('\n');
}

/// Appends ` about`, cut after [`ABOUT_CUT`] characters when longer than [`ABOUT_MAX`].
fn push_about(out: &mut String, about: &str) {
    if about.is_empty() {
        return;
    }
    out.push(' ');
    // Fewer bytes than the limit: fewer characters too. Else most are ASCII, where
    // bytes are chars.
    let long = about.len() > ABOUT_MAX
        && (about.is_ascii() || about.chars().count() > ABOUT_MAX);
    if long {
        // Copied whole up to the cut, not a character at a time.
        let at = if about.is_ascii() {
            ABOUT_CUT
        } else {
            about
                .char_indices()
                .nth(ABOUT_CUT)
                .map_or(about.len(), |(at, _)| at)
        };
        out.push_str(about.get(..at).unwrap_or(about));
        out.push_str("...");
    } else {
        out.push_str(about);
    }
}


/// The description shown for a node, as the seed trees give it.
pub fn about(n: &Node<'_>, version: Option<i64>) -> String {
    about_text(n, version).into_owned()
}

fn about_text(n: &Node<'_>, version: Option<i64>) -> Cow<'static, str> {
    match n.role {
        Role::Body => match version {
            Some(v) => format!("message body, version {v}").into(),
            None => "message body".into(),
        },
        Role::Length => match n.value {
            Value::Array(Some(1)) => "1 element follows".into(),
            Value::Array(Some(c)) => format!("{c} elements follow").into(),
            _ => "null array".into(),
        },
        _ => Cow::Borrowed(n.about()),
    }
}

/// The name shown beside node `i`, from a list sorted by node.
pub fn named<'n>(named: &[(usize, &'n str)], i: usize) -> Option<&'n str> {
    let k = named.binary_search_by(|(n, _)| n.cmp(&i)).ok()?;
    named.get(k).map(|(_, s)| *s)
}

/// Appends a topic id's name as the tree shows it: ` (topic "orders")`.
pub fn topic_note(out: &mut String, name: &str) {
    out.push_str(" (topic \"");
    push_escaped(out, name);
    out.push_str("\")");
}

/// Writes `name type = value`, or the header-style labels for containers.
pub fn label(out: &mut String, n: &Node<'_>) {
    match n.role {
        Role::Message => {
            out.push_str(n.name());
            out.push(' ');
            out.push_str(n.ty());
            if let Value::Int(v) = n.value {
                out.push_str(" v");
                push_int(out, v);
            }
            return;
        }
        Role::Frame => {
            out.push_str(n.name());
            return;
        }
        Role::Header => {
            out.push_str(n.name());
            if let Value::Int(v) = n.value {
                out.push_str(" v");
                push_int(out, v);
            }
            return;
        }
        Role::Body => {
            out.push_str(n.name());
            out.push_str(" struct");
            return;
        }
        _ => {}
    }
    out.push_str(n.name());
    if let Some(i) = n.index {
        out.push('[');
        push_int(out, i);
        out.push(']');
    }
    out.push(' ');
    out.push_str(n.ty());
    out.push_str(" = ");
    value(out, n);
}

/// Writes a node's value as the tree shows it.
pub fn value(out: &mut String, n: &Node<'_>) {
    match (n.role, n.value) {
        (Role::Length, Value::Array(_)) => match n.prefix {
            Prefix::Compact(0) => out.push_str("0 (compact, null)"),
            Prefix::Compact(c) => {
                push_int(out, c);
                out.push_str(" (compact, n+1)");
            }
            Prefix::Int32(-1) => out.push_str("-1 (null)"),
            Prefix::Int32(c) => push_int(out, c),
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
            push_int(out, v);
            if let Some(note) = int_note(n, v) {
                out.push_str(" (");
                out.push_str(note);
                out.push(')');
            }
        }
        (_, Value::Float(v)) => {
            let _ = write!(out, "{v}");
        }
        (_, Value::Bool(b)) => out.push_str(if b { "true" } else { "false" }),
        (_, Value::Uuid(u)) => {
            let mut buf = uuid::Uuid::encode_buffer();
            out.push_str(uuid::Uuid::from_bytes(u).hyphenated().encode_lower(&mut buf));
        }
        (_, Value::Array(None)) => out.push_str("null"),
        (_, Value::Array(Some(1))) => out.push_str("1 element"),
        (_, Value::Array(Some(c))) => {
            push_int(out, c);
            out.push_str(" elements");
        }
        (_, Value::Str(s)) => {
            match s {
                Some(s) => {
                    out.push('"');
                    push_escaped(out, s);
                    out.push('"');
                }
                None => out.push_str("null"),
            }
            prefix_note(out, n.prefix, s.map(str::len));
        }
        (_, Value::Bytes(Some(b))) if n.ty() == "records" => {
            // What the batch headers say, without decompressing.
            crate::records::summary::Totals::of(b).push_description(out);
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
    let (text, n) = match (p, len) {
        (Prefix::Compact(n), Some(_)) => (" (compact, len+1=", i64::from(n)),
        (Prefix::Compact(_), None) => {
            out.push_str(" (compact, 0)");
            return;
        }
        (Prefix::Int16(n), _) => (" (int16 len=", i64::from(n)),
        (Prefix::Int32(n), _) => (" (int32 len=", i64::from(n)),
        (Prefix::None, _) => return,
    };
    out.push_str(text);
    push_int(out, n);
    out.push(')');
}

fn hex(out: &mut String, b: &[u8]) {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let digit = |n: u8| char::from(DIGITS.get(usize::from(n)).copied().unwrap_or(b'?'));
    for byte in b.iter().take(BYTES_SHOWN) {
        out.push(digit(byte >> 4));
        out.push(digit(byte & 0xf));
    }
    if b.len() > BYTES_SHOWN {
        out.push('…');
    }
}

/// Names for numbers that have them: API keys, and non-zero error codes.
fn int_note(n: &Node<'_>, v: i64) -> Option<&'static str> {
    let code = i16::try_from(v).ok()?;
    if n.name() == "request_api_key" {
        return api_name(code);
    }
    if n.name().ends_with("ErrorCode") && code != 0 {
        return error_name(code);
    }
    None
}

/// One message for `--format tree`: a heading line, the tree, then any error and warnings.
pub fn record(r: &crate::dissect::Record<'_>) -> String {
    let mut out = String::new();
    write_record(&mut out, r);
    out
}

/// Appends [`record`]'s text to `out`.
pub fn write_record(out: &mut String, r: &crate::dissect::Record<'_>) {
    let f = r;
    let m = &r.msg;
    out.push_str("Frame ");
    push_int(out, f.packet);
    out.push_str(": ");
    super::labels::push_addr_pair(out, &f.src, &f.dst);
    out.push_str(", ");
    super::summary::push_seconds(out, f.ts_ns - r.first_ts_ns);
    out.push_str(" s, ");
    push_api_version(out, m);
    out.push(' ');
    out.push_str(m.kind.as_str());
    out.push_str(" corr=");
    match m.correlation_id {
        Some(c) => push_int(out, c),
        None => out.push('?'),
    }
    out.push_str(", ");
    push_int(out, f.wire_size);
    out.push_str(" bytes");
    if let Some(src) = r.version_source {
        out.push_str(", version from ");
        out.push_str(src.as_str());
    }
    if let (Some(req), Some(ns)) = (f.request_packet, f.latency_ns) {
        out.push_str(", request in frame ");
        push_int(out, req);
        out.push_str(", ");
        push_latency(out, ns / 1000);
    }
    out.push('\n');
    if let Some(t) = &r.tls {
        push_tls(out, t, f.wire_size);
    }
    write_named(out, &m.tree, &r.topic_names.nodes(&m.tree));
    if let Some(e) = &m.error {
        let _ = writeln!(out, "!! malformed: {e}");
    }
    for w in f.warnings.iter().chain(m.warnings.iter()) {
        out.push_str("! ");
        push_escaped(out, w);
        out.push('\n');
    }
    out.push('\n');
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

#[cfg(test)]
mod tests {
    use crate::codec::{Node, Prefix, Role, Value};
    use crate::records::encode::{BatchSpec, MessageSpec, RecordSpec};
    use crate::records::{Compression, SnappyForm};

    #[test]
    fn record_lines_match_the_generic_drawing() {
        let long = vec![0xabu8; 100];
        let recs = || {
            vec![
                RecordSpec::new(0, Some(b"k"), Some(&long))
                    .header("plain", Some(b"v"))
                    .header("tab\there \"q\" é", None),
                RecordSpec::new(1, None, None),
                RecordSpec::new(2, Some(&[0xff, 0xfe]), Some(b"")),
            ]
        };
        let mut fields: Vec<Vec<u8>> = Vec::new();
        for compression in [
            Compression::None,
            Compression::Gzip,
            Compression::Snappy,
            Compression::Lz4,
            Compression::Zstd,
        ] {
            let spec = BatchSpec {
                compression,
                snappy: SnappyForm::Xerial,
                records: recs(),
                ..Default::default()
            };
            let b = spec.encode();
            fields.push(b.clone());
            // Two batches, then one cut short; a bad CRC; a corrupt payload.
            let mut two = [b.clone(), b.clone()].concat();
            two.extend_from_slice(&b[..b.len() / 2]);
            fields.push(two);
            fields.push(BatchSpec { bad_crc: true, records: recs(), compression, ..Default::default() }.encode());
            let mut bad = b.clone();
            let n = bad.len();
            bad[n - 3] ^= 0x55;
            fields.push(bad);
        }
        fields.push(
            BatchSpec {
                control: true,
                transactional: true,
                records: vec![RecordSpec::marker(true, 7)],
                ..Default::default()
            }
            .encode(),
        );
        for magic in [0, 1] {
            let inner = [
                MessageSpec::new(magic, 0, Some(b"key"), Some(&long)),
                MessageSpec::new(magic, 1, None, None),
            ];
            let mut plain = Vec::new();
            inner[0].encode(&mut plain);
            fields.push(plain);
            for codec in [Compression::Gzip, Compression::Lz4] {
                let mut w = Vec::new();
                MessageSpec::wrapper(magic, codec, SnappyForm::Xerial, 1, &inner).encode(&mut w);
                fields.push(w);
            }
        }
        fields.push(vec![0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 3, 9]);
        for data in &fields {
            let field = Node {
                label: const { &crate::codec::Label::new("Records", "records", "") },
                index: None,
                value: Value::Bytes(Some(data)),
                prefix: Prefix::Int32(data.len() as i32),
                offset: 0x40,
                len: data.len() as u32 + 4,
                role: Role::Field,
                depth: 5,
                next: 6,
            };
            let (mut a, mut b) = (String::new(), String::new());
            let (mut pa, mut pb) = ("|   |   ".to_string(), "|   |   ".to_string());
            super::record_batches(&mut a, &field, data, &mut pa, Some(3));
            super::record_batches_generic(&mut b, &field, data, &mut pb, Some(3));
            assert_eq!(a, b);
            assert_eq!(pa, pb);
            assert!(!a.is_empty());
        }
    }

    #[test]
    fn offsets_read_as_the_formatter_writes_them() {
        for v in [0, 1, 0xf, 0x10, 0xfff, 0x1000, 0xffff, 0x1_0000, 0xabcde, u32::MAX] {
            let mut out = String::new();
            crate::view::labels::push_hex4(&mut out, v);
            assert_eq!(out, format!("{v:04x}"));
        }
    }
}
