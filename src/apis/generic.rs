//! The summary of an API without a file of its own: its top-level scalar fields, the
//! length of its top-level arrays, then every non-zero error code deeper in the body,
//! by name and count.

use super::fmt::{Body, show};
use crate::codec::{Role, Value};
use crate::view::labels;
use std::collections::BTreeMap;

/// `Field=value … Array[N] …`, error codes by name, then `errors=[NAME×N, …]` for
/// nested ones.
pub(crate) fn details(b: &Body<'_, '_>) -> String {
    let mut parts = Vec::new();
    for (_, name, v) in scalars(b) {
        let text = match v {
            Value::Int(c) if name.ends_with("ErrorCode") => labels::error(c),
            Value::Int(n) => n.to_string(),
            Value::Float(f) => f.to_string(),
            Value::Bool(x) => x.to_string(),
            Value::Str(s) => show(s),
            Value::Uuid(u) => {
                let id = uuid::Uuid::from_bytes(u).hyphenated().to_string();
                match b.names.get(&u).filter(|_| name == "TopicId") {
                    Some(n) => format!("{id} ({})", show(Some(n))),
                    None => id,
                }
            }
            _ => continue,
        };
        parts.push(format!("{name}={text}"));
    }
    // Top-level arrays by their length: `Markers[2]`.
    for c in b.tree.children(b.at) {
        if let Some(n) = b.tree.nodes.get(c) {
            if let (Role::Field, Value::Array(Some(len))) = (n.role, n.value) {
                parts.push(format!("{}[{len}]", n.name));
            }
        }
    }
    // Nested error codes (the top-level ones are above), counted by name.
    let mut errors: BTreeMap<String, u64> = BTreeMap::new();
    let end = b.tree.nodes.get(b.at).map_or(b.at, |n| n.next as usize);
    let top = b.tree.nodes.get(b.at).map_or(0, |n| n.depth);
    for n in b.tree.nodes.get(b.at + 1..end).unwrap_or_default() {
        if let (Role::Field, Value::Int(c)) = (n.role, n.value) {
            if n.name.ends_with("ErrorCode") && c != 0 && n.depth > top + 1 {
                *errors.entry(labels::error(c)).or_default() += 1;
            }
        }
    }
    if !errors.is_empty() {
        let list: Vec<(String, u64)> = errors.into_iter().collect();
        parts.push(format!(
            "errors=[{}]",
            labels::list_of(&list, |(e, n)| if *n == 1 {
                e.clone()
            } else {
                format!("{e}×{n}")
            })
        ));
    }
    parts.join(" ")
}

/// The scalar fields directly under the body (known tagged ones too), in wire order.
fn scalars<'a>(b: &Body<'_, 'a>) -> Vec<(usize, &'static str, Value<'a>)> {
    let t = b.tree;
    let mut out = Vec::new();
    let mut push = |i: usize| {
        if let Some(n) = t.nodes.get(i) {
            if n.role == Role::Field
                && matches!(
                    n.value,
                    Value::Int(_)
                        | Value::Float(_)
                        | Value::Bool(_)
                        | Value::Uuid(_)
                        | Value::Str(_)
                )
            {
                out.push((i, n.name, n.value));
            }
        }
    };
    for c in t.children(b.at) {
        match t.nodes.get(c).map(|n| n.role) {
            Some(Role::Field) => push(c),
            Some(Role::TaggedFields) => {
                for tag in t.children(c) {
                    if let Some(f) = t.child_with_role(tag, Role::Field) {
                        push(f);
                    }
                }
            }
            _ => {}
        }
    }
    out
}
