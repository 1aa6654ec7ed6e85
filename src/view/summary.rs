//! One readable line per message, in the manner of tshark's packet list.

use super::escape::escape;
use crate::apis;
use crate::codec::{Kind, Role, Value};
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

/// Latency from this many µs up is highlighted when the line is coloured.
pub const SLOW_LATENCY_US: i64 = 100_000;

/// Colours of a summary line on a terminal (ANSI, via `anstyle`).
mod paint {
    use anstyle::{AnsiColor, Style};
    pub const REQUEST: Style = AnsiColor::Cyan.on_default();
    pub const RESPONSE: Style = AnsiColor::Green.on_default();
    pub const ERROR: Style = AnsiColor::Red.on_default();
    pub const MALFORMED: Style = AnsiColor::Red.on_default().bold();
    pub const WARNING: Style = AnsiColor::Yellow.on_default();
    pub const SLOW: Style = AnsiColor::Magenta.on_default().bold();
}

/// Appends `text` in `style` when colouring, plain otherwise.
fn styled(out: &mut String, color: bool, style: anstyle::Style, text: impl std::fmt::Display) {
    if color {
        let _ = write!(out, "{}{text}{}", style.render(), style.render_reset());
    } else {
        let _ = write!(out, "{text}");
    }
}

/// Appends the summary line (without a newline) to `out`.
pub fn write_line(out: &mut String, r: &Record<'_>) {
    write_line_with(out, r, None);
}

/// Appends the summary line in colour: the API and kind by direction, the details red
/// when an error code in the body is not 0, `!! malformed` bold red, warnings yellow,
/// latency from [`SLOW_LATENCY_US`] bold magenta. The text is the same as
/// [`write_line`]'s; only escapes are added.
pub fn write_line_colored(out: &mut String, r: &Record<'_>) {
    let error = r.msg.tree.nodes.iter().any(|n| {
        n.role == Role::Field
            && n.name.ends_with("ErrorCode")
            && matches!(n.value, Value::Int(c) if c != 0)
    });
    write_line_with(out, r, Some(error));
}

/// `paint` is `Some(error)` when colouring.
fn write_line_with(out: &mut String, r: &Record<'_>, paint: Option<bool>) {
    let f = r;
    let m = &r.msg;
    let rel = (f.ts_ns - r.first_ts_ns) as f64 / 1e9;
    let _ = write!(out, "{:>5}  {rel:.6}  ", f.packet);
    push_addr(out, &f.src);
    out.push_str(" → ");
    push_addr(out, &f.dst);
    // Carried in TLS and decrypted.
    out.push_str(if r.tls.is_some() { "  tls " } else { "  " });
    let style = match m.kind {
        Kind::Request => paint::REQUEST,
        Kind::Response => paint::RESPONSE,
    };
    let color = paint.is_some();
    if color {
        let _ = write!(out, "{}", style.render());
    }
    push_api_version(out, m);
    if color {
        let _ = write!(out, " {}{}", m.kind.as_str(), style.render_reset());
        let pad = 8usize.saturating_sub(m.kind.as_str().len());
        out.extend(std::iter::repeat_n(' ', pad));
        out.push_str(" corr=");
    } else {
        let _ = write!(out, " {:<8} corr=", m.kind.as_str());
    }
    match m.correlation_id {
        Some(c) => {
            let _ = write!(out, "{c}");
        }
        None => out.push('?'),
    }
    write_tail(out, r, f.latency_ns, paint);
}

/// Appends what the summary line says after `corr=N`, except the latency: the
/// version source, the details, a decode error and the warnings, each after
/// its separator as in the line. The TUI's Info column shows this.
pub fn write_info(out: &mut String, r: &Record<'_>) {
    write_tail(out, r, None, None);
}

fn write_tail(out: &mut String, r: &Record<'_>, latency_ns: Option<i64>, paint: Option<bool>) {
    let f = r;
    let m = &r.msg;
    let color = paint.is_some();
    if r.version_source == Some(VersionSource::Inferred) {
        out.push_str(" (version inferred)");
    }
    let detail = details(r);
    if !detail.is_empty() {
        out.push_str("  ");
        styled(out, paint == Some(true), paint::ERROR, &detail);
    }
    if let Some(ns) = latency_ns {
        out.push_str("  ");
        let us = ns / 1000;
        styled(
            out,
            color && us >= SLOW_LATENCY_US,
            paint::SLOW,
            latency(us),
        );
    }
    if let Some(e) = &m.error {
        out.push_str("  ");
        styled(
            out,
            color,
            paint::MALFORMED,
            format_args!("!! malformed: {e}"),
        );
    }
    let mut warnings = f.warnings.iter().chain(m.warnings.iter());
    if let Some(w) = warnings.next() {
        out.push_str("  ");
        let more = warnings.count();
        if more > 0 {
            styled(
                out,
                color,
                paint::WARNING,
                format_args!("! {} (+{more} more)", escape(w)),
            );
        } else {
            styled(out, color, paint::WARNING, format_args!("! {}", escape(w)));
        }
    }
}

/// What the message says, in a few words.
fn details(r: &Record<'_>) -> String {
    let m = &r.msg;
    let Some(body) = m.body else {
        return match (m.kind, m.client_id) {
            (Kind::Request, Some("")) => "client=\"\"".to_string(),
            (Kind::Request, Some(c)) => format!("client={}", super::labels::short(c)),
            _ => String::new(),
        };
    };
    apis::details(
        m.api_key,
        m.kind,
        &m.tree,
        body,
        &r.topic_names,
        m.client_id,
    )
}
