//! JSON renderings of decoded messages: the NDJSON `body` object.

use crate::codec::{Role, Tree, Value};
use std::io::Write;

/// Appends an integer in decimal, as `{}` writes it, without the formatter.
fn int(out: &mut Vec<u8>, n: impl itoa::Integer) {
    out.extend_from_slice(itoa::Buffer::new().format(n).as_bytes());
}

/// Writes the body object rooted at node `i` (the Body node) as JSON.
pub fn write_body(out: &mut Vec<u8>, tree: &Tree<'_>, i: usize) {
    write_object(out, tree, i, &[], false);
}

/// As [`write_body`], with `"_topic_name"` after each `TopicId` node in `named`
/// (sorted by node, as [`crate::topics::IdNames::nodes`] gives them).
pub fn write_body_named(out: &mut Vec<u8>, tree: &Tree<'_>, i: usize, named: &[(usize, &str)]) {
    write_object(out, tree, i, named, false);
}

/// The body as a `serde_json::Value`, for tests and tools.
pub fn body_value(tree: &Tree<'_>, i: usize) -> serde_json::Value {
    let mut out = Vec::new();
    write_body(&mut out, tree, i);
    serde_json::from_slice(&out).unwrap_or(serde_json::Value::Null)
}

/// The body with `records` fields as the hex of their bytes, as the encoder
/// takes them: for writing a message back to its wire bytes.
pub fn body_value_wire(tree: &Tree<'_>, i: usize) -> serde_json::Value {
    let mut out = Vec::new();
    write_object(&mut out, tree, i, &[], true);
    serde_json::from_slice(&out).unwrap_or(serde_json::Value::Null)
}

/// Writes the fields under node `i` as an object, known tagged fields by name
/// and unknown ones under `_unknown_tagged_fields`.
fn write_object(out: &mut Vec<u8>, tree: &Tree<'_>, i: usize, named: &[(usize, &str)], raw: bool) {
    out.push(b'{');
    let mut first = true;
    let mut unknown = Vec::new();
    for c in tree.children(i) {
        let Some(n) = tree.nodes.get(c) else { continue };
        match n.role {
            // Values kwire derives (`_sasl_user`…) are not fields the encoder takes.
            Role::Field if raw && n.name().starts_with('_') => {}
            Role::Field => member(out, tree, c, &mut first, named, raw),
            Role::TaggedFields => {
                for t in tree.children(c) {
                    match tree.nodes.get(t).map(|n| (n.role, n.value)) {
                        Some((Role::Tagged(_), _)) => {
                            if let Some(f) = tree.child_with_role(t, Role::Field) {
                                member(out, tree, f, &mut first, named, raw);
                            }
                        }
                        Some((Role::UnknownTagged(tag), Value::Bytes(Some(data)))) => {
                            unknown.push((tag, data));
                        }
                        _ => {}
                    }
                }
            }
            _ => {}
        }
    }
    if !unknown.is_empty() {
        if !first {
            out.push(b',');
        }
        out.extend_from_slice(b"\"_unknown_tagged_fields\":[");
        for (k, (tag, data)) in unknown.iter().enumerate() {
            if k > 0 {
                out.push(b',');
            }
            let _ = write!(out, "{{\"tag\":{tag},\"data\":\"");
            hex(out, data);
            out.extend_from_slice(b"\"}");
        }
        out.push(b']');
    }
    out.push(b'}');
}

fn member(
    out: &mut Vec<u8>,
    tree: &Tree<'_>,
    c: usize,
    first: &mut bool,
    named: &[(usize, &str)],
    raw: bool,
) {
    let Some(n) = tree.nodes.get(c) else { return };
    if !*first {
        out.push(b',');
    }
    *first = false;
    string(out, n.name());
    out.push(b':');
    write_value(out, tree, c, named, raw);
    // Added by kwire, not on the wire: hence the `_` (see the contract).
    if let Ok(k) = named.binary_search_by(|(i, _)| i.cmp(&c)) {
        if let Some((_, name)) = named.get(k) {
            out.extend_from_slice(b",\"_topic_name\":");
            string(out, name);
        }
    }
}

fn write_value(out: &mut Vec<u8>, tree: &Tree<'_>, i: usize, named: &[(usize, &str)], raw: bool) {
    let Some(n) = tree.nodes.get(i) else { return };
    if !raw && super::records::is_records(n) {
        let data = super::records::data(n);
        crate::records::json::write(out, data, &crate::records::Options::current());
        return;
    }
    match n.value {
        Value::None => write_object(out, tree, i, named, raw),
        Value::Array(None) => out.extend_from_slice(b"null"),
        Value::Array(Some(_)) => {
            out.push(b'[');
            let mut first = true;
            for c in tree.children(i) {
                if tree.nodes.get(c).is_some_and(|e| e.role == Role::Element) {
                    if !first {
                        out.push(b',');
                    }
                    first = false;
                    write_value(out, tree, c, named, raw);
                }
            }
            out.push(b']');
        }
        Value::Int(v) => int(out, v),
        Value::Float(v) => {
            let _ = serde_json::to_writer(&mut *out, &v);
        }
        Value::Bool(b) => out.extend_from_slice(if b { b"true" } else { b"false" }),
        Value::Uuid(u) => {
            let mut buf = uuid::Uuid::encode_buffer();
            out.push(b'"');
            out.extend_from_slice(
                uuid::Uuid::from_bytes(u)
                    .hyphenated()
                    .encode_lower(&mut buf)
                    .as_bytes(),
            );
            out.push(b'"');
        }
        Value::Str(Some(s)) => string(out, s),
        Value::Str(None) | Value::Bytes(None) => out.extend_from_slice(b"null"),
        Value::Bytes(Some(b)) => {
            out.push(b'"');
            hex(out, b);
            out.push(b'"');
        }
    }
}

/// A JSON string with serde_json's escaping (exact: valid UTF-8 is kept as is). A string
/// with no control byte, `"` or `\\` (most of them) is copied as it is, as serde_json would.
#[inline]
fn string(out: &mut Vec<u8>, s: &str) {
    if super::escape::is_json_plain(s) {
        out.reserve(s.len() + 2);
        out.push(b'"');
        out.extend_from_slice(s.as_bytes());
        out.push(b'"');
    } else {
        escaped(out, s);
    }
}

/// [`string`]'s rare case, out of line.
#[inline(never)]
fn escaped(out: &mut Vec<u8>, s: &str) {
    let _ = serde_json::to_writer(&mut *out, s);
}

fn hex(out: &mut Vec<u8>, b: &[u8]) {
    crate::records::json::hex(out, b);
}

/// Writes one NDJSON line (with its newline) for a message, keys as the contract orders them.
pub fn write_record(out: &mut Vec<u8>, r: &crate::dissect::Record<'_>) {
    write_record_in(out, r, None);
}

/// [`write_record`], with the `file` key (the input's path as given) when
/// several inputs are read.
pub fn write_record_in(out: &mut Vec<u8>, r: &crate::dissect::Record<'_>, file: Option<&str>) {
    let f = r;
    let m = &r.msg;
    let secs = f.ts_ns.div_euclid(1_000_000_000);
    let micros = f.ts_ns.rem_euclid(1_000_000_000) / 1000;
    out.extend_from_slice(b"{\"frame\":");
    int(out, f.packet);
    out.extend_from_slice(b",\"ts\":");
    int(out, secs);
    out.push(b'.');
    let mut num = itoa::Buffer::new();
    let frac = num.format(micros);
    out.extend(std::iter::repeat_n(b'0', 6usize.saturating_sub(frac.len())));
    out.extend_from_slice(frac.as_bytes());
    out.push(b',');
    if let Some(name) = file {
        out.extend_from_slice(b"\"file\":");
        string(out, name);
        out.push(b',');
    }
    // Addresses are digits, dots, colons and brackets: nothing to escape.
    out.extend_from_slice(b"\"src\":\"");
    super::labels::push_addr_bytes(out, &f.src);
    out.extend_from_slice(b"\",\"dst\":\"");
    super::labels::push_addr_bytes(out, &f.dst);
    out.extend_from_slice(b"\",\"kind\":\"");
    out.extend_from_slice(m.kind.as_str().as_bytes());
    out.extend_from_slice(b"\",\"api_key\":");
    match m.api_key {
        Some(k) => {
            int(out, k);
            out.extend_from_slice(b",\"api_name\":");
            match crate::proto::api_name(k) {
                Some(name) => string(out, name),
                None => string(out, &crate::view::labels::api_label(k)),
            }
        }
        None => out.extend_from_slice(b"null,\"api_name\":null"),
    }
    out.extend_from_slice(b",\"api_version\":");
    opt_num(out, m.api_version);
    out.extend_from_slice(b",\"version_source\":");
    match r.version_source {
        Some(s) => {
            out.push(b'"');
            out.extend_from_slice(s.as_str().as_bytes());
            out.push(b'"');
        }
        None => out.extend_from_slice(b"null"),
    }
    out.extend_from_slice(b",\"correlation_id\":");
    opt_num(out, m.correlation_id);
    if m.kind == crate::codec::Kind::Request {
        out.extend_from_slice(b",\"client_id\":");
        match m.client_id {
            Some(c) => string(out, c),
            None => out.extend_from_slice(b"null"),
        }
    }
    out.extend_from_slice(b",\"size\":");
    int(out, f.wire_size);
    if let Some(rf) = f.request_packet {
        out.extend_from_slice(b",\"request_frame\":");
        int(out, rf);
    }
    if let Some(ns) = f.latency_ns {
        out.extend_from_slice(b",\"latency_us\":");
        int(out, ns / 1000);
    }
    if let Some(t) = &r.tls {
        let _ = write!(out, ",\"tls\":\"{}\"", t.version);
    }
    out.extend_from_slice(b",\"body\":");
    match (m.body, &m.error) {
        (Some(b), None) => write_body_named(out, &m.tree, b, &r.topic_names.nodes(&m.tree)),
        _ => out.extend_from_slice(b"null"),
    }
    if let Some(e) = &m.error {
        out.extend_from_slice(b",\"error\":");
        string(out, &e.to_string());
    }
    let mut warnings = f.warnings.iter().chain(m.warnings.iter()).peekable();
    if warnings.peek().is_some() {
        out.extend_from_slice(b",\"warnings\":[");
        for (i, w) in warnings.enumerate() {
            if i > 0 {
                out.push(b',');
            }
            string(out, w);
        }
        out.push(b']');
    }
    out.extend_from_slice(b"}\n");
}

fn opt_num(out: &mut Vec<u8>, n: Option<impl itoa::Integer>) {
    match n {
        Some(n) => int(out, n),
        None => out.extend_from_slice(b"null"),
    }
}

#[cfg(test)]
mod tests {
    use super::string;

    #[test]
    fn strings_escape_as_serde_json_does() {
        for s in ["", "plain", "ünï ☃", "q\"", "b\\s", "\u{1}\n\t", "\u{7f}", "\u{202e}x"] {
            let mut out = Vec::new();
            string(&mut out, s);
            assert_eq!(out, serde_json::to_vec(s).unwrap(), "{s:?}");
        }
    }
}
