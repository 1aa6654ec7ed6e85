//! FindCoordinator (key 10): which broker coordinates a group, a transaction or a share
//! group. Its summary details and the names of its key types.

use super::{Api, Track};
use crate::apis;
use crate::codec::{Kind, Tree, Value};
use crate::proto::FIND_COORDINATOR;
use crate::view::escape::escape;
use crate::view::labels;
use std::fmt::Write;

pub(crate) const API: Api = Api {
    key: FIND_COORDINATOR,
    details,
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

fn details(kind: Kind, t: &Tree<'_>, body: usize) -> String {
    match kind {
        Kind::Request => request(t, body),
        Kind::Response => response(t, body),
    }
}

fn request(t: &Tree<'_>, body: usize) -> String {
    let kt = labels::key_type(t.int(body, "KeyType").unwrap_or(0));
    if let Some(key) = apis::string(t, body, "Key") {
        return format!("{kt} key={key}");
    }
    let keys: Vec<String> = t
        .elements(body, "CoordinatorKeys")
        .into_iter()
        .filter_map(|e| match t.nodes.get(e)?.value {
            Value::Str(Some(s)) => Some(escape(s).into_owned()),
            _ => None,
        })
        .collect();
    format!("{kt} keys=[{}]", keys.join(", "))
}

/// `→ node 2 (host:port)`, or the error.
fn coordinator(t: &Tree<'_>, at: usize) -> String {
    let code = t.int(at, "ErrorCode").unwrap_or(0);
    if code != 0 {
        let mut s = labels::error(code);
        if let Some(msg) =
            apis::string(t, at, "ErrorMessage").filter(|m| m != "null" && !m.is_empty())
        {
            let _ = write!(s, " ({msg})");
        }
        return s;
    }
    format!(
        "node {} ({}:{})",
        t.int(at, "NodeId").unwrap_or(-1),
        apis::string(t, at, "Host").unwrap_or_default(),
        t.int(at, "Port").unwrap_or(0)
    )
}

fn response(t: &Tree<'_>, body: usize) -> String {
    if t.field(body, "Coordinators").is_none() {
        return format!("→ {}", coordinator(t, body));
    }
    t.elements(body, "Coordinators")
        .into_iter()
        .map(|c| {
            format!(
                "{} → {}",
                apis::string(t, c, "Key").unwrap_or_default(),
                coordinator(t, c)
            )
        })
        .collect::<Vec<_>>()
        .join(", ")
}
