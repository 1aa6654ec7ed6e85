//! One readable line per message, in the manner of tshark's packet list.

use super::escape::escape;
use crate::apis;
use crate::codec::{Kind, Message};
use crate::dissect::{Record, VersionSource};
use std::fmt::Write;

// Kept where the TUI and older callers look for them; they live in `labels`.
use super::labels::push_api_version;
pub use super::labels::{addr, api_version, latency, push_addr};

/// The whole summary line.
pub fn line(r: &Record<'_>) -> String {
    let mut out = String::with_capacity(160);
    write_line(&mut out, r);
    out
}

/// Appends the summary line (without a newline) to `out`.
pub fn write_line(out: &mut String, r: &Record<'_>) {
    let f = r;
    let m = &r.msg;
    let rel = (f.ts_ns - r.first_ts_ns) as f64 / 1e9;
    let _ = write!(out, "{:>5}  {rel:.6}  ", f.packet);
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
pub fn write_info(out: &mut String, r: &Record<'_>) {
    write_tail(out, r, None);
}

fn write_tail(out: &mut String, r: &Record<'_>, latency_ns: Option<i64>) {
    let f = r;
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
    let mut d = match m.api_key.and_then(apis::get) {
        Some(api) => (api.details)(m.kind, &m.tree, body),
        None => apis::generic::details(m.kind, &m.tree, body, m.client_id),
    };
    let records = super::records::summary(&m.tree);
    if !records.is_empty() {
        if !d.is_empty() {
            d.push_str("  ");
        }
        d.push_str(&records);
    }
    d
}
