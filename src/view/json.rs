//! JSON renderings of decoded messages: the NDJSON `body` object.

use crate::codec::{Role, Tree, Value};
use std::io::Write;

/// Writes the body object rooted at node `i` (the Body node) as JSON.
pub fn write_body(out: &mut Vec<u8>, tree: &Tree<'_>, i: usize) {
    write_object(out, tree, i);
}

/// The body as a `serde_json::Value`, for tests and tools.
pub fn body_value(tree: &Tree<'_>, i: usize) -> serde_json::Value {
    let mut out = Vec::new();
    write_body(&mut out, tree, i);
    serde_json::from_slice(&out).unwrap_or(serde_json::Value::Null)
}

/// Writes the fields under node `i` as an object, known tagged fields by name
/// and unknown ones under `_unknown_tagged_fields`.
fn write_object(out: &mut Vec<u8>, tree: &Tree<'_>, i: usize) {
    out.push(b'{');
    let mut first = true;
    let mut unknown = Vec::new();
    for c in tree.children(i) {
        let Some(n) = tree.nodes.get(c) else { continue };
        match n.role {
            Role::Field => member(out, tree, c, &mut first),
            Role::TaggedFields => {
                for t in tree.children(c) {
                    match tree.nodes.get(t).map(|n| (n.role, n.value)) {
                        Some((Role::Tagged(_), _)) => {
                            if let Some(f) = tree.child_with_role(t, Role::Field) {
                                member(out, tree, f, &mut first);
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

fn member(out: &mut Vec<u8>, tree: &Tree<'_>, c: usize, first: &mut bool) {
    let Some(n) = tree.nodes.get(c) else { return };
    if !*first {
        out.push(b',');
    }
    *first = false;
    string(out, n.name);
    out.push(b':');
    write_value(out, tree, c);
}

fn write_value(out: &mut Vec<u8>, tree: &Tree<'_>, i: usize) {
    let Some(n) = tree.nodes.get(i) else { return };
    match n.value {
        Value::None => write_object(out, tree, i),
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
                    write_value(out, tree, c);
                }
            }
            out.push(b']');
        }
        Value::Int(v) => {
            let _ = write!(out, "{v}");
        }
        Value::Float(v) => {
            let _ = serde_json::to_writer(&mut *out, &v);
        }
        Value::Bool(b) => {
            let _ = write!(out, "{b}");
        }
        Value::Uuid(u) => {
            let _ = write!(out, "\"{}\"", uuid::Uuid::from_bytes(u).hyphenated());
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

/// A JSON string with serde_json's escaping (exact: valid UTF-8 is kept as is).
fn string(out: &mut Vec<u8>, s: &str) {
    let _ = serde_json::to_writer(&mut *out, s);
}

fn hex(out: &mut Vec<u8>, b: &[u8]) {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    for byte in b {
        out.push(DIGITS[usize::from(byte >> 4)]);
        out.push(DIGITS[usize::from(byte & 0xf)]);
    }
}
