//! The summary line of an API without its own file: a request's client id, the body's
//! top-level scalar fields and array sizes, and every non-zero error code by name.
#![cfg_attr(
    not(test),
    deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)
)]

use super::Body;
use crate::codec::{Kind, Role, Value};
use crate::proto::error_name;
use crate::view::escape::escape;
use std::fmt::Write;

/// Most top-level fields shown; the tree and JSON views have them all.
const MAX_FIELDS: usize = 8;
/// Longest string value shown, in characters.
const MAX_STR: usize = 40;

/// `client=c ThrottleTimeMs=0 GroupId="g" Topics[2] errors: NOT_COORDINATOR ×1`; a
/// `TopicId` whose name the run learned shows it: `TopicId=… (orders)`.
pub fn details(b: &Body<'_, '_>) -> String {
    let (t, body) = (b.tree, b.at);
    let mut out = String::new();
    match (b.kind, b.client) {
        (Kind::Request, Some("")) => out.push_str("client=\"\""),
        (Kind::Request, Some(c)) => {
            let _ = write!(out, "client={}", escape(c));
        }
        _ => {}
    }
    let mut shown = 0;
    for c in t.children(body) {
        let Some(n) = t.nodes.get(c) else { continue };
        if n.role != Role::Field || shown >= MAX_FIELDS {
            continue;
        }
        let mut field = String::new();
        let _ = match n.value {
            Value::Int(v) if n.name().ends_with("ErrorCode") => match error_name(v as i16) {
                Some(name) => write!(field, "{}={name}", n.name()),
                None => write!(field, "{}={v}", n.name()),
            },
            Value::Int(v) => write!(field, "{}={v}", n.name()),
            Value::Float(v) => write!(field, "{}={v}", n.name()),
            Value::Bool(b) => write!(field, "{}={b}", n.name()),
            Value::Uuid(u) => {
                let id = uuid::Uuid::from_bytes(u).hyphenated();
                match b.names.get(&u).filter(|_| n.name() == "TopicId") {
                    Some(name) => write!(field, "{}={id} ({})", n.name(), escape(name)),
                    None => write!(field, "{}={id}", n.name()),
                }
            }
            Value::Str(Some(s)) => {
                let cut: String = s.chars().take(MAX_STR).collect();
                let more = if cut.len() < s.len() { "…" } else { "" };
                write!(field, "{}=\"{}{more}\"", n.name(), escape(&cut))
            }
            Value::Str(None) | Value::Bytes(None) | Value::Array(None) => {
                write!(field, "{}=null", n.name())
            }
            Value::Array(Some(k)) => write!(field, "{}[{k}]", n.name()),
            Value::Bytes(Some(b)) => write!(field, "{}=<{} bytes>", n.name(), b.len()),
            // A struct: its scalars are in the tree.
            Value::None => continue,
        };
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(&field);
        shown += 1;
    }
    // Error codes inside arrays and structs (the top-level ones are shown above).
    let top = t.nodes.get(body).map_or(0, |n| n.depth) + 1;
    let end = t.nodes.get(body).map_or(0, |n| n.next as usize);
    let mut errors: Vec<(i64, u32)> = Vec::new();
    for n in t.nodes.get(body + 1..end).unwrap_or_default() {
        let code = match n.value {
            Value::Int(c) if n.role == Role::Field && n.name().ends_with("ErrorCode") => c,
            _ => continue,
        };
        if code == 0 || n.depth <= top {
            continue;
        }
        match errors.iter_mut().find(|e| e.0 == code) {
            Some(e) => e.1 += 1,
            None => errors.push((code, 1)),
        }
    }
    if !errors.is_empty() {
        out.push_str(" errors:");
        for (code, n) in errors {
            let _ = match error_name(code as i16) {
                Some(name) => write!(out, " {name} ×{n}"),
                None => write!(out, " error {code} ×{n}"),
            };
        }
    }
    out
}
