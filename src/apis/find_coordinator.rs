//! FindCoordinator (key 10): which broker coordinates a group, a transaction or a share
//! group. Its summary details and the names of its key types.

use super::{Api, Fields, Track, int16, int32};
use crate::apis;
use crate::codec::{FieldCursor, Kind, Tree, Value};
use crate::proto::FIND_COORDINATOR;
use crate::view::labels;

/// The body fields its summary line reads, from the body's root: a key (v0-3) or keys
/// (v4+), and one answer (v0-3) or one per key (v4+).
const SUMMARY: Fields = Fields::Paths(&[
    "KeyType",
    "Key",
    "CoordinatorKeys",
    "ErrorCode",
    "ErrorMessage",
    "NodeId",
    "Host",
    "Port",
    "Coordinators.Key",
    "Coordinators.ErrorCode",
    "Coordinators.ErrorMessage",
    "Coordinators.NodeId",
    "Coordinators.Host",
    "Coordinators.Port",
]);

pub(crate) const API: Api = Api {
    key: FIND_COORDINATOR,
    details,
    summary: SUMMARY,
    track: Track::Coordinators,
};

/// Kafka's name for a `KeyType` (`CoordinatorType` in Kafka: 0 group, 1 transaction, 2 share).
pub fn key_type_name(t: i64) -> Option<&'static str> {
    match t {
        0 => Some("group"),
        1 => Some("transaction"),
        2 => Some("share"),
        _ => None,
    }
}

fn details(b: &super::Body<'_, '_>, out: &mut String) {
    match b.kind {
        Kind::Request => request(b.tree, b.at, out),
        Kind::Response => response(b.tree, b.at, out),
    }
}

fn request(t: &Tree<'_>, body: usize, out: &mut String) {
    // In wire order.
    let b = t.fields(body);
    let key = b.str("Key");
    labels::push_key_type(out, b.int("KeyType").unwrap_or(0));
    if let Some(key) = key {
        out.push_str(" key=");
        apis::push_string(out, key);
        return;
    }
    out.push_str(" keys=[");
    let keys = t
        .elems_at(b.get("CoordinatorKeys"))
        .filter_map(|e| match t.nodes.get(e)?.value {
            Value::Str(Some(s)) => Some(s),
            _ => None,
        });
    labels::push_list(out, keys, labels::push_short);
    out.push(']');
}

/// `→ node 2 (host:port)`, or the error, from an answer's fields (a v4+ coordinator
/// after its key, or a v0-3 body), read in wire order: the error code comes first in a
/// v0-3 body (`code_first`), last in a v4+ coordinator.
fn coordinator(t: &Tree<'_>, f: &FieldCursor<'_, '_>, out: &mut String, code_first: bool) {
    let first = code_first.then(|| f.get("ErrorCode"));
    let node = f.get("NodeId");
    let host = f.get("Host");
    let port = f.get("Port");
    let code = match first {
        Some(at) => t.int_at(at),
        None => f.int("ErrorCode"),
    }
    .unwrap_or(0);
    if code != 0 {
        labels::push_error(out, code);
        // A null or empty message is left out.
        if let Some(Some(msg)) = f.str("ErrorMessage").filter(|m| *m != Some("")) {
            let mark = out.len();
            out.push_str(" (");
            labels::push_short(out, msg);
            if out.get(mark + 2..) == Some("null") {
                // The words the wire sent are `null`: shown as none, as before.
                out.truncate(mark);
            } else {
                out.push(')');
            }
        }
        return;
    }
    let (node, port) = (t.int_at(node).unwrap_or(-1), t.int_at(port).unwrap_or(0));
    match t.str_at(host) {
        Some(Some(host)) => push_answer(out, node, host, port),
        host => write_answer(out, node, host, port),
    }
}

/// `node 2 (host:port)`; no host when the field is absent, `null` when the wire says so.
fn write_answer(out: &mut String, node: i64, host: Option<Option<&str>>, port: i64) {
    out.push_str("node ");
    labels::push_int(out, node);
    out.push_str(" (");
    if let Some(host) = host {
        apis::push_string(out, host);
    }
    out.push(':');
    labels::push_int(out, port);
    out.push(')');
}

/// Answers' texts kept, in slots by a hash of node, port and host: a capture names the
/// same few coordinators again and again, and copying the text costs far less than
/// escaping the host and writing the numbers. Hosts longer than this are written anew.
const ANSWER_SLOTS: usize = 256;
const KEPT_HOST_MAX: usize = 128;

/// One kept answer: its inputs, compared whole before the text is used.
#[derive(Clone, Default)]
struct KeptAnswer {
    node: i64,
    port: i64,
    host: String,
    /// Empty in an unset slot.
    text: String,
}

thread_local! {
    static ANSWERS: std::cell::RefCell<Vec<KeptAnswer>> =
        const { std::cell::RefCell::new(Vec::new()) };
}

/// [`write_answer`] of a host the wire sent, from [`ANSWERS`] when kept there.
fn push_answer(out: &mut String, node: i64, host: &str, port: i64) {
    if host.len() > KEPT_HOST_MAX {
        return write_answer(out, node, Some(Some(host)), port);
    }
    let b = host.as_bytes();
    let word = |w: Option<&[u8; 8]>| w.map_or(0, |w| u64::from_le_bytes(*w));
    let key = (node as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)
        ^ (port as u64).rotate_left(17)
        ^ (b.len() as u64).rotate_left(40)
        ^ word(b.first_chunk::<8>())
        ^ word(b.last_chunk::<8>()).rotate_left(29);
    // The top eight bits of a multiplicative hash: one of the 256 slots.
    let slot = (key.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 56) as usize;
    ANSWERS.with(|cell| {
        let Ok(mut slots) = cell.try_borrow_mut() else {
            return write_answer(out, node, Some(Some(host)), port);
        };
        if slots.is_empty() {
            slots.resize(ANSWER_SLOTS, KeptAnswer::default());
        }
        let Some(kept) = slots.get_mut(slot) else {
            return write_answer(out, node, Some(Some(host)), port);
        };
        if kept.text.is_empty() || kept.node != node || kept.port != port || kept.host != host {
            kept.node = node;
            kept.port = port;
            kept.host.clear();
            kept.host.push_str(host);
            kept.text.clear();
            write_answer(&mut kept.text, node, Some(Some(host)), port);
        }
        out.push_str(&kept.text);
    })
}

fn response(t: &Tree<'_>, body: usize, out: &mut String) {
    let b = t.fields(body);
    let Some(coordinators) = b.get("Coordinators") else {
        out.push_str("→ ");
        coordinator(t, &b, out, true);
        return;
    };
    labels::push_list(out, t.elems_at(Some(coordinators)), |out, c| {
        let f = t.fields(c);
        if let Some(key) = f.str("Key") {
            apis::push_string(out, key);
        }
        out.push_str(" → ");
        coordinator(t, &f, out, false);
    });
}

/// What the coordinator map needs from a FindCoordinator request.
pub(crate) struct RequestFacts {
    /// 0 (group) when absent, as in versions before 1.
    pub key_type: i8,
    /// `Key` (before v4) or `CoordinatorKeys` (v4+); a null key reads as "".
    pub keys: Vec<String>,
}

pub(crate) fn request_facts(t: &Tree<'_>, body: usize) -> RequestFacts {
    let key_type = t
        .int(body, "KeyType")
        .and_then(|v| i8::try_from(v).ok())
        .unwrap_or(0);
    let mut keys: Vec<String> = Vec::new();
    if let Some(k) = t.str(body, "Key") {
        keys.push(k.unwrap_or("").to_string());
    }
    for e in t.elements(body, "CoordinatorKeys") {
        if let Some(Value::Str(s)) = t.nodes.get(e).map(|n| n.value) {
            keys.push(s.unwrap_or("").to_string());
        }
    }
    RequestFacts { key_type, keys }
}

/// What the coordinator map needs from a FindCoordinator response.
pub(crate) struct ResponseFacts<'a> {
    /// v4+: one answer per key, each naming its key. Before: one answer for the request's key.
    pub batched: bool,
    pub answers: Vec<AnswerFacts<'a>>,
}

/// One answer; absent fields read as -1 (0 for the error, "" for host and key).
pub(crate) struct AnswerFacts<'a> {
    pub key: &'a str,
    pub error: i16,
    pub node: i32,
    pub host: &'a str,
    pub port: i32,
    pub error_message: Option<&'a str>,
}

pub(crate) fn response_facts<'a>(t: &Tree<'a>, body: usize) -> ResponseFacts<'a> {
    let answer = |at: usize| AnswerFacts {
        key: t.str(at, "Key").flatten().unwrap_or(""),
        error: int16(t, at, "ErrorCode").unwrap_or(0),
        node: int32(t, at, "NodeId").unwrap_or(-1),
        host: t.str(at, "Host").flatten().unwrap_or(""),
        port: int32(t, at, "Port").unwrap_or(-1),
        error_message: t.str(at, "ErrorMessage").flatten(),
    };
    let batched = t.field(body, "Coordinators").is_some();
    let answers = if batched {
        t.elements(body, "Coordinators")
            .into_iter()
            .map(answer)
            .collect()
    } else {
        vec![answer(body)]
    };
    ResponseFacts { batched, answers }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kept_answers_read_as_written() {
        // More answers than slots, twice over, with hosts that need escaping, are
        // long, or are cut: each reads as written anew.
        let hosts = [
            "broker-1.kafka.local".to_string(),
            "b".into(),
            "".into(),
            "h\u{1b}[2J\"q".into(),
            "注文サービス.example".into(),
            "x".repeat(45),
            "y".repeat(KEPT_HOST_MAX + 1),
            "null".into(),
        ];
        for round in 0..2 {
            for i in 0..400i64 {
                for host in &hosts {
                    let (node, port) = (i % 7 - 1 + round, 9000 + i);
                    let mut kept = String::from(">");
                    push_answer(&mut kept, node, host, port);
                    let mut fresh = String::from(">");
                    write_answer(&mut fresh, node, Some(Some(host)), port);
                    assert_eq!(kept, fresh);
                }
            }
        }
    }
}
