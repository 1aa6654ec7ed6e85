//! Occurrences of a body path in a decoded value tree, as the NDJSON `body` shows them.

use super::{BodyPath, Value};
use crate::codec::{Role, Tree, Value as V};
use std::ops::ControlFlow;

/// Calls `each` with every occurrence of `path` under the body of `tree`
/// (lists flattened, nulls left out), descending only where the path can lead.
pub fn body_occurrences(
    tree: &Tree<'_>,
    path: &BodyPath,
    each: &mut dyn FnMut(Value<'_>) -> ControlFlow<()>,
) {
    if let Some(body) = tree.body() {
        let _ = fields(tree, body, &mut Vec::new(), path, each);
    }
}

/// The named fields under node `i` (its field children and its known tagged fields),
/// each checked against `path` and descended into where the path can lead.
fn fields(
    tree: &Tree<'_>,
    i: usize,
    chain: &mut Vec<&'static str>,
    path: &BodyPath,
    each: &mut dyn FnMut(Value<'_>) -> ControlFlow<()>,
) -> ControlFlow<()> {
    for c in tree.children(i) {
        match tree.nodes.get(c).map(|n| n.role) {
            Some(Role::Field) => field(tree, c, chain, path, each)?,
            Some(Role::TaggedFields) => {
                for t in tree.children(c) {
                    if matches!(tree.nodes.get(t).map(|n| n.role), Some(Role::Tagged(_))) {
                        if let Some(f) = tree.child_with_role(t, Role::Field) {
                            field(tree, f, chain, path, each)?;
                        }
                    }
                }
            }
            _ => {}
        }
    }
    ControlFlow::Continue(())
}

fn field(
    tree: &Tree<'_>,
    c: usize,
    chain: &mut Vec<&'static str>,
    path: &BodyPath,
    each: &mut dyn FnMut(Value<'_>) -> ControlFlow<()>,
) -> ControlFlow<()> {
    let Some(n) = tree.nodes.get(c) else {
        return ControlFlow::Continue(());
    };
    chain.push(n.name());
    let mut flow = ControlFlow::Continue(());
    if path.matches(chain) {
        flow = emit(tree, c, each);
    }
    if flow.is_continue() && path.may_lead_to(chain) {
        flow = inside(tree, c, chain, path, each);
    }
    chain.pop();
    flow
}

/// Descends into a struct field, or into each struct element of a list.
fn inside(
    tree: &Tree<'_>,
    i: usize,
    chain: &mut Vec<&'static str>,
    path: &BodyPath,
    each: &mut dyn FnMut(Value<'_>) -> ControlFlow<()>,
) -> ControlFlow<()> {
    match tree.nodes.get(i).map(|n| n.value) {
        Some(V::None) => fields(tree, i, chain, path, each),
        Some(V::Array(Some(_))) => {
            for e in elements(tree, i) {
                inside(tree, e, chain, path, each)?;
            }
            ControlFlow::Continue(())
        }
        _ => ControlFlow::Continue(()),
    }
}

fn elements<'t>(tree: &'t Tree<'_>, i: usize) -> impl Iterator<Item = usize> + 't {
    tree.children(i)
        .filter(move |&c| tree.nodes.get(c).is_some_and(|n| n.role == Role::Element))
}

fn emit(
    tree: &Tree<'_>,
    i: usize,
    each: &mut dyn FnMut(Value<'_>) -> ControlFlow<()>,
) -> ControlFlow<()> {
    let Some(n) = tree.nodes.get(i) else {
        return ControlFlow::Continue(());
    };
    match n.value {
        V::None => each(Value::Present),
        V::Array(None) | V::Str(None) | V::Bytes(None) => ControlFlow::Continue(()),
        V::Array(Some(_)) => {
            for e in elements(tree, i) {
                emit(tree, e, each)?;
            }
            ControlFlow::Continue(())
        }
        V::Int(v) => each(Value::Int(v)),
        V::Float(v) => each(Value::Float(v)),
        V::Bool(b) => each(Value::Bool(b)),
        V::Uuid(u) => each(Value::Uuid(u)),
        V::Str(Some(s)) => each(Value::Str(s.into())),
        V::Bytes(Some(b)) => each(Value::Bytes(b.into())),
    }
}
