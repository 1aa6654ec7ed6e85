//! One readable line per message, in the manner of tshark's packet list.

use super::escape::escape;
use crate::codec::apis;
use crate::codec::errors::error_name;
use crate::codec::{Kind, Message, Tree, Value};
use crate::pipeline::{Record, VersionSource};
use std::fmt::Write;
use std::net::SocketAddr;

/// `ip:port`, IPv6 in brackets (as the contract writes addresses).
pub fn addr(a: &SocketAddr) -> String {
    let mut s = String::with_capacity(24);
    push_addr(&mut s, a);
    s
}

/// Appends `ip:port`; IPv4 is written by hand because std's Display is a hot spot on big files.
pub fn push_addr(out: &mut String, a: &SocketAddr) {
    match a {
        SocketAddr::V4(v4) => {
            for (i, o) in v4.ip().octets().iter().enumerate() {
                if i > 0 {
                    out.push('.');
                }
                push_u64(out, u64::from(*o));
            }
            out.push(':');
            push_u64(out, u64::from(v4.port()));
        }
        SocketAddr::V6(_) => {
            let _ = write!(out, "{a}");
        }
    }
}

fn push_u64(out: &mut String, mut n: u64) {
    let mut digits = [0u8; 20];
    let mut i = digits.len();
    loop {
        i -= 1;
        if let Some(d) = digits.get_mut(i) {
            *d = b'0' + (n % 10) as u8;
        }
        n /= 10;
        if n == 0 || i == 0 {
            break;
        }
    }
    for d in digits.iter().skip(i) {
        out.push(char::from(*d));
    }
}

/// A duration in µs, as people read it.
pub fn latency(us: i64) -> String {
    match us {
        us if us < 10_000 => format!("{us}µs"),
        us if us < 10_000_000 => format!("{:.1}ms", us as f64 / 1000.0),
        us => format!("{:.2}s", us as f64 / 1_000_000.0),
    }
}

/// Appends the API and version label: `FindCoordinator v6`, `Produce v9`, `?`.
fn push_api_version(out: &mut String, msg: &Message<'_>) {
    match (msg.api_key.map(|k| (k, apis::api_name(k))), msg.api_version) {
        (Some((_, Some(name))), v) => {
            out.push_str(name);
            if let Some(v) = v {
                let _ = write!(out, " v{v}");
            }
        }
        (Some((k, None)), v) => {
            let _ = write!(out, "Unknown({k})");
            if let Some(v) = v {
                let _ = write!(out, " v{v}");
            }
        }
        (None, _) => out.push('?'),
    }
}

/// The API and version label: `FindCoordinator v6`, `Produce v9`, `?`.
pub fn api_version(msg: &Message<'_>) -> String {
    let mut s = String::new();
    push_api_version(&mut s, msg);
    s
}

/// The whole summary line.
pub fn line(r: &Record<'_, '_>) -> String {
    let mut out = String::with_capacity(160);
    write_line(&mut out, r);
    out
}

/// Appends the summary line (without a newline) to `out`.
pub fn write_line(out: &mut String, r: &Record<'_, '_>) {
    let f = r.frame;
    let m = &r.msg;
    let rel = (f.ts_ns - r.first_ts_ns) as f64 / 1e9;
    let _ = write!(out, "{:>5}  {rel:.6}  ", f.frame);
    push_addr(out, &f.src);
    out.push_str(" → ");
    push_addr(out, &f.dst);
    out.push_str("  ");
    push_api_version(out, m);
    let _ = write!(out, " {:<8} corr=", m.kind.as_str());
    match m.correlation_id {
        Some(c) => {
            let _ = write!(out, "{c}");
        }
        None => out.push('?'),
    }
    write_tail(out, r, f.latency_ns);
}

/// Appends what the summary line says after `corr=N`, except the latency: the
/// version source, the details, a decode error and the warnings, each after
/// its separator as in the line. The TUI's Info column shows this.
pub fn write_info(out: &mut String, r: &Record<'_, '_>) {
    write_tail(out, r, None);
}

fn write_tail(out: &mut String, r: &Record<'_, '_>, latency_ns: Option<i64>) {
    let f = r.frame;
    let m = &r.msg;
    if r.version_source == Some(VersionSource::Inferred) {
        out.push_str(" (version inferred)");
    }
    let detail = details(m);
    if !detail.is_empty() {
        out.push_str("  ");
        out.push_str(&detail);
    }
    if let Some(ns) = latency_ns {
        out.push_str("  ");
        out.push_str(&latency(ns / 1000));
    }
    if let Some(e) = &m.error {
        let _ = write!(out, "  !! malformed: {e}");
    }
    let mut warnings = f.warnings.iter().chain(m.warnings.iter());
    if let Some(w) = warnings.next() {
        let _ = write!(out, "  ! {}", escape(w));
        let more = warnings.count();
        if more > 0 {
            let _ = write!(out, " (+{more} more)");
        }
    }
}

/// What the message says, in a few words.
fn details(m: &Message<'_>) -> String {
    let Some(body) = m.body else {
        return match (m.kind, m.client_id) {
            (Kind::Request, Some("")) => "client=\"\"".to_string(),
            (Kind::Request, Some(c)) => format!("client={}", escape(c)),
            _ => String::new(),
        };
    };
    let t = &m.tree;
    match (m.api_key, m.kind) {
        (Some(10), Kind::Request) => find_coordinator_request(t, body),
        (Some(10), Kind::Response) => find_coordinator_response(t, body),
        (Some(52), Kind::Request) => vote_request(t, body),
        (Some(52), Kind::Response) => vote_response(t, body),
        _ => String::new(),
    }
}

/// A string field, escaped for the terminal; `null` when the wire says null.
fn string(t: &Tree<'_>, parent: usize, name: &str) -> Option<String> {
    Some(
        t.str(parent, name)?
            .map_or_else(|| "null".into(), |s| escape(s).into_owned()),
    )
}

fn error(code: i64) -> String {
    i16::try_from(code)
        .ok()
        .and_then(error_name)
        .map_or_else(|| format!("error {code}"), str::to_string)
}

fn key_type(t: i64) -> String {
    match t {
        0 => "group".into(),
        1 => "transaction".into(),
        2 => "share".into(),
        n => format!("keytype={n}"),
    }
}

fn find_coordinator_request(t: &Tree<'_>, body: usize) -> String {
    let kt = key_type(t.int(body, "KeyType").unwrap_or(0));
    if let Some(key) = string(t, body, "Key") {
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
        let mut s = error(code);
        if let Some(msg) = string(t, at, "ErrorMessage").filter(|m| m != "null" && !m.is_empty()) {
            let _ = write!(s, " ({msg})");
        }
        return s;
    }
    format!(
        "node {} ({}:{})",
        t.int(at, "NodeId").unwrap_or(-1),
        string(t, at, "Host").unwrap_or_default(),
        t.int(at, "Port").unwrap_or(0)
    )
}

fn find_coordinator_response(t: &Tree<'_>, body: usize) -> String {
    if t.field(body, "Coordinators").is_none() {
        return format!("→ {}", coordinator(t, body));
    }
    t.elements(body, "Coordinators")
        .into_iter()
        .map(|c| {
            format!(
                "{} → {}",
                string(t, c, "Key").unwrap_or_default(),
                coordinator(t, c)
            )
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The partitions of every topic in a Vote message.
fn vote_partitions(t: &Tree<'_>, body: usize) -> Vec<usize> {
    t.elements(body, "Topics")
        .into_iter()
        .flat_map(|topic| t.elements(topic, "Partitions"))
        .collect()
}

fn vote_request(t: &Tree<'_>, body: usize) -> String {
    let mut parts = Vec::new();
    for p in vote_partitions(t, body) {
        let pre = t.bool(p, "PreVote") == Some(true);
        parts.push(format!(
            "{}replica={} epoch={} last={}@{}",
            if pre { "prevote " } else { "" },
            t.int(p, "ReplicaId").unwrap_or(-1),
            t.int(p, "ReplicaEpoch").unwrap_or(-1),
            t.int(p, "LastOffset").unwrap_or(-1),
            t.int(p, "LastOffsetEpoch").unwrap_or(-1),
        ));
    }
    let mut s = parts.join(", ");
    if let Some(v) = t.int(body, "VoterId") {
        let _ = write!(s, " → voter {v}");
    }
    s
}

fn vote_response(t: &Tree<'_>, body: usize) -> String {
    let mut parts = Vec::new();
    for p in vote_partitions(t, body) {
        let mut s = format!(
            "granted={} leader={} epoch={}",
            if t.bool(p, "VoteGranted") == Some(true) {
                "yes"
            } else {
                "no"
            },
            t.int(p, "LeaderId").unwrap_or(-1),
            t.int(p, "LeaderEpoch").unwrap_or(-1),
        );
        let code = t.int(p, "ErrorCode").unwrap_or(0);
        if code != 0 {
            let _ = write!(s, " {}", error(code));
        }
        parts.push(s);
    }
    let top = t.int(body, "ErrorCode").unwrap_or(0);
    if top != 0 {
        parts.push(error(top));
    }
    parts.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_print_as_std_does() {
        for a in [
            "0.0.0.0:0",
            "255.255.255.255:65535",
            "10.0.0.1:9092",
            "[::1]:9093",
            "[fe80::1]:1",
        ] {
            let sa: SocketAddr = a.parse().unwrap();
            assert_eq!(addr(&sa), sa.to_string());
        }
    }
}
