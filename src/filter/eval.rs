//! Evaluation of a compiled filter against one message.

use super::compile::{CItem, CLit, Field, Node};
use super::parser::Op;
use super::{Subject, Value};
use std::cmp::Ordering;
use std::net::IpAddr;
use std::ops::ControlFlow;

pub(super) struct Eval<'s> {
    subject: &'s dyn Subject,
    /// The lower-cased summary line, made on first use.
    summary: Option<String>,
}

impl<'s> Eval<'s> {
    pub fn new(subject: &'s dyn Subject) -> Self {
        Eval {
            subject,
            summary: None,
        }
    }

    pub fn node(&mut self, n: &Node) -> bool {
        match n {
            Node::And(a, b) => self.node(a) && self.node(b),
            Node::Or(a, b) => self.node(a) || self.node(b),
            Node::Not(a) => !self.node(a),
            Node::Flag(f) => self.subject.flag(*f),
            Node::Text(t) => {
                let s = self.subject;
                self.summary
                    .get_or_insert_with(|| s.summary().to_lowercase())
                    .contains(t.as_str())
            }
            Node::Present(f) => self.any(f, |v| !matches!(v, Value::Bool(false))),
            Node::Cmp(f, op, lit) => self.any(f, |v| test(v, *op, lit)),
            Node::Matches(f, re) => self.any(f, |v| match v {
                Value::Str(s) => re.is_match(s),
                Value::Bytes(b) => re.is_match(&hex(b)),
                Value::Uuid(u) => re.is_match(&uuid_text(u)),
                _ => false,
            }),
            Node::In(f, items) => self.any(f, |v| {
                items.iter().any(|i| match i {
                    CItem::One(l) => test(v, Op::Eq, l),
                    CItem::Range(lo, hi) => test(v, Op::Ge, lo) && test(v, Op::Le, hi),
                })
            }),
        }
    }

    /// Whether any occurrence of `f` passes `pred`.
    fn any(&self, f: &Field, mut pred: impl FnMut(&Value<'_>) -> bool) -> bool {
        let mut hit = false;
        f.each(self.subject, &mut |v| {
            if pred(&v) {
                hit = true;
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        });
        hit
    }
}

fn test(v: &Value<'_>, op: Op, lit: &CLit) -> bool {
    match op {
        Op::Eq => equal(v, lit) == Some(true),
        Op::Ne => equal(v, lit) == Some(false),
        Op::Lt => order(v, lit) == Some(Ordering::Less),
        Op::Le => matches!(order(v, lit), Some(Ordering::Less | Ordering::Equal)),
        Op::Gt => order(v, lit) == Some(Ordering::Greater),
        Op::Ge => matches!(order(v, lit), Some(Ordering::Greater | Ordering::Equal)),
        Op::Contains => match v {
            Value::Str(s) => lit.text.as_deref().is_some_and(|t| s.contains(t)),
            Value::Bytes(b) => lit
                .bytes
                .as_deref()
                .is_some_and(|n| n.is_empty() || b.windows(n.len()).any(|w| w == n)),
            Value::Uuid(u) => lit
                .text
                .as_deref()
                .is_some_and(|t| uuid_text(u).contains(t)),
            _ => false,
        },
        Op::Matches => false,
    }
}

/// `None` when the value and the literal are of different kinds: neither `==` nor `!=` holds.
fn equal(v: &Value<'_>, lit: &CLit) -> Option<bool> {
    match (v, lit.net) {
        (Value::Ip(a), Some((net, bits))) => in_net(*a, net, bits),
        _ => order(v, lit).map(|o| o == Ordering::Equal),
    }
}

fn order(v: &Value<'_>, lit: &CLit) -> Option<Ordering> {
    match v {
        Value::Int(i) => match (lit.int, lit.float) {
            (Some(l), _) => Some(i.cmp(&l)),
            (None, Some(f)) => (*i as f64).partial_cmp(&f),
            _ => None,
        },
        Value::Float(x) => x.partial_cmp(&lit.float?),
        Value::Bool(b) => Some(b.cmp(&lit.bool?)),
        Value::Str(s) => Some(s.as_ref().cmp(lit.text.as_deref()?)),
        Value::Bytes(b) => Some(b.as_ref().cmp(lit.bytes.as_deref()?)),
        Value::Uuid(u) => Some(u.cmp(lit.uuid.as_ref()?)),
        Value::Ip(a) => {
            let (l, _) = lit.net?;
            match (a, l) {
                (IpAddr::V4(x), IpAddr::V4(y)) => Some(x.cmp(&y)),
                (IpAddr::V6(x), IpAddr::V6(y)) => Some(x.cmp(&y)),
                _ => None,
            }
        }
        Value::Present => None,
    }
}

fn in_net(a: IpAddr, net: IpAddr, bits: u8) -> Option<bool> {
    let (a, n, width) = match (a, net) {
        (IpAddr::V4(a), IpAddr::V4(n)) => (u128::from(u32::from(a)), u128::from(u32::from(n)), 32),
        (IpAddr::V6(a), IpAddr::V6(n)) => (u128::from(a), u128::from(n), 128),
        _ => return None,
    };
    let shift = width - u32::from(bits.min(width as u8));
    let mask = if shift >= 128 { 0 } else { u128::MAX << shift };
    Some(a & mask == n & mask)
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn uuid_text(u: &[u8; 16]) -> String {
    uuid::Uuid::from_bytes(*u).hyphenated().to_string()
}
