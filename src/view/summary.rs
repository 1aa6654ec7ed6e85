//! One readable line per message, in the manner of tshark's packet list.

use super::escape::escape;
use crate::apis;
use crate::codec::{Kind, Role, Value};
use crate::dissect::{Record, VersionSource};
use std::fmt::Write;

// Kept where the TUI and older callers look for them; they live in `labels`.
use super::labels::{push_api_version, push_count, push_int, push_latency, push_pair};
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

/// Appends a time in seconds with 6 decimals, as `{:.6}` writes `ns as f64 / 1e9`.
/// Whole microseconds (every classic pcap) are written from the integer, which is
/// the same text: below 2^53 ns the float is within far less than half a
/// microsecond of the exact value. Anything else goes through the float.
#[inline]
pub fn push_seconds(out: &mut String, ns: i64) {
    if (0..1 << 53).contains(&ns) && ns % 1000 == 0 {
        let us = ns / 1000;
        match us / 1_000_000 {
            s @ 0..10 => out.push(char::from(b'0' + s as u8)),
            s => push_int(out, s),
        }
        out.push('.');
        // The fraction's six digits, zeros first.
        let frac = (us % 1_000_000) as u32;
        push_pair(out, frac / 10_000);
        push_pair(out, frac / 100 % 100);
        push_pair(out, frac % 100);
    } else {
        let _ = write!(out, "{:.6}", ns as f64 / 1e9);
    }
}

/// Spaces, cut to pad a column.
const SPACES: &str = "        ";

/// Appends the spaces that pad `len` bytes to `width` (the columns are ASCII).
#[inline]
fn pad(out: &mut String, width: usize, len: usize) {
    // Most columns are full (packet numbers from 10000 on): nothing to copy.
    if len < width {
        out.push_str(SPACES.get(..width - len).unwrap_or(SPACES));
    }
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
#[inline]
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
            && n.name().ends_with("ErrorCode")
            && matches!(n.value, Value::Int(c) if c != 0)
    });
    write_line_with(out, r, Some(error));
}

/// `paint` is `Some(error)` when colouring.
#[inline]
fn write_line_with(out: &mut String, r: &Record<'_>, paint: Option<bool>) {
    let f = r;
    let m = &r.msg;
    let digits = match f.packet {
        0..10 => 1,
        10..100 => 2,
        100..1000 => 3,
        1000..10_000 => 4,
        _ => 5,
    };
    pad(out, 5, digits);
    push_count(out, f.packet);
    out.push_str("  ");
    push_seconds(out, f.ts_ns - r.first_ts_ns);
    out.push_str("  ");
    super::labels::push_addr_pair(out, &f.src, &f.dst);
    // Carried in TLS and decrypted.
    out.push_str(if r.tls.is_some() { "  tls " } else { "  " });
    let style = match m.kind {
        Kind::Request => paint::REQUEST,
        Kind::Response => paint::RESPONSE,
    };
    let color = paint.is_some();
    if color {
        let _ = write!(out, "{}", style.render());
        push_api_version(out, m);
        let _ = write!(out, " {}{}", m.kind.as_str(), style.render_reset());
        pad(out, 8, m.kind.as_str().len());
        out.push_str(" corr=");
    } else {
        // The API, version and kind padded to 8 characters, as one piece of text.
        super::labels::push_api_kind(out, m);
    }
    match m.correlation_id {
        Some(c) => push_count(out, c),
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

#[inline]
fn write_tail(out: &mut String, r: &Record<'_>, latency_ns: Option<i64>, paint: Option<bool>) {
    let f = r;
    let m = &r.msg;
    let color = paint.is_some();
    if r.version_source == Some(VersionSource::Inferred) {
        out.push_str(" (version inferred)");
    }
    if paint == Some(true) {
        let mut detail = String::new();
        push_details(&mut detail, r);
        if !detail.is_empty() {
            out.push_str("  ");
            styled(out, true, paint::ERROR, &detail);
        }
    } else {
        // Written in place; the separator goes again when there are none.
        let mark = out.len();
        out.push_str("  ");
        push_details(out, r);
        if out.len() == mark + 2 {
            out.truncate(mark);
        }
    }
    if let Some(ns) = latency_ns {
        out.push_str("  ");
        let us = ns / 1000;
        if color && us >= SLOW_LATENCY_US {
            styled(out, true, paint::SLOW, latency(us));
        } else {
            push_latency(out, us);
        }
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

/// Appends what the message says, in a few words.
#[inline]
fn push_details(out: &mut String, r: &Record<'_>) {
    let m = &r.msg;
    let Some(body) = m.body else {
        match (m.kind, m.client_id) {
            (Kind::Request, Some("")) => out.push_str("client=\"\""),
            (Kind::Request, Some(c)) => {
                out.push_str("client=");
                super::labels::push_short(out, c);
            }
            _ => {}
        }
        return;
    };
    apis::write_details(out, m, body, &r.topic_names);
}

#[cfg(test)]
mod tests {
    use super::push_seconds;

    #[test]
    fn seconds_read_as_the_float_formatter_writes_them() {
        let mut cases = vec![0, 1, 999, 1000, 1500, 999_999_000, 1_000_000_000, -1000, -1];
        cases.extend([86_399_999_999_000, (1 << 53) - 1000, 1 << 53, i64::MAX / 2]);
        let mut x: i64 = 12345;
        for _ in 0..10_000 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let us = (x >> 20).rem_euclid(1 << 43);
            cases.push(us * 1000);
            cases.push(us * 1000 + (x & 999));
        }
        for ns in cases {
            let mut out = String::new();
            push_seconds(&mut out, ns);
            assert_eq!(out, format!("{:.6}", ns as f64 / 1e9), "{ns}");
        }
    }
}
