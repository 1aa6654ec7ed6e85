//! The one place that writes the short labels every view shares: API and version, error
//! names, key types, latencies and addresses. Each output keeps its exact wording.
#![cfg_attr(
    not(test),
    deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)
)]

use crate::codec::{Kind, Message};
use crate::proto::{api_name, error_name};
use std::fmt::Write;
use std::net::SocketAddr;

pub use crate::proto::api_label;

/// `ip:port`, IPv6 in brackets (as the contract writes addresses).
pub fn addr(a: &SocketAddr) -> String {
    let mut s = String::with_capacity(24);
    push_addr(&mut s, a);
    s
}

/// Appends `ip:port`; IPv4 is written by hand because std's Display is a hot spot on big files.
pub fn push_addr(out: &mut String, a: &SocketAddr) {
    match a {
        SocketAddr::V4(v4) => with_v4_text(v4, |t| out.push_str(t)),
        SocketAddr::V6(_) => write_addr(out, a),
    }
}

/// IPv4 addresses' text kept, in slots by a hash of the address: a capture's lines name
/// the same endpoints again and again, and a copy of the text costs far less than writing it.
const ADDR_SLOTS: usize = 256;

thread_local! {
    static ADDR_TEXT: std::cell::RefCell<Vec<(std::net::SocketAddrV4, String)>> =
        const { std::cell::RefCell::new(Vec::new()) };
}

/// Calls `f` with the text of `a`, as [`write_addr`] writes it.
fn with_v4_text<R>(a: &std::net::SocketAddrV4, f: impl FnOnce(&str) -> R) -> R {
    let port = u32::from(a.port());
    let key = u32::from(*a.ip()) ^ port ^ port.rotate_left(16);
    // The top eight bits of a multiplicative hash: one of the 256 slots.
    let slot = (key.wrapping_mul(0x9E37_79B9) >> 24) as usize;
    let unset = std::net::SocketAddrV4::new(std::net::Ipv4Addr::UNSPECIFIED, 0);
    let write = |text: &mut String| write_addr(text, &SocketAddr::V4(*a));
    with_kept_text(&ADDR_TEXT, (ADDR_SLOTS, slot), (unset, *a), write, f)
}

/// Calls `f` with the text `write` makes for `key`, kept in slot `at` of `cell`'s `n`
/// slots (made on first use, all `unset`): written again only when another key took the
/// slot. Shared by the address and the address-pair texts.
fn with_kept_text<K: Copy + PartialEq, R>(
    cell: &'static std::thread::LocalKey<std::cell::RefCell<Vec<(K, String)>>>,
    (n, at): (usize, usize),
    (unset, key): (K, K),
    write: impl Fn(&mut String),
    f: impl FnOnce(&str) -> R,
) -> R {
    cell.with(|cell| {
        let Ok(mut slots) = cell.try_borrow_mut() else {
            let mut text = String::with_capacity(48);
            write(&mut text);
            return f(&text);
        };
        if slots.is_empty() {
            slots.resize(n, (unset, String::new()));
        }
        match slots.get_mut(at) {
            Some((kept, text)) => {
                // An empty text is an unset slot, whatever its key.
                if *kept != key || text.is_empty() {
                    *kept = key;
                    text.clear();
                    // Room for the longest IPv4 pair at once, not grown a step at a time.
                    text.reserve(48);
                    write(text);
                }
                f(text)
            }
            None => {
                let mut text = String::with_capacity(48);
                write(&mut text);
                f(&text)
            }
        }
    })
}

/// Appends `src → dst`, as [`push_addr`] writes each.
#[inline]
pub fn push_addr_pair(out: &mut String, src: &SocketAddr, dst: &SocketAddr) {
    let (SocketAddr::V4(s), SocketAddr::V4(d)) = (src, dst) else {
        push_addr(out, src);
        out.push_str(" → ");
        push_addr(out, dst);
        return;
    };
    with_pair_text(s, d, |t| out.push_str(t));
}

/// Slots of [`with_pair_text`]: a connection's two directions each take one.
const PAIR_SLOTS: usize = 4096;

type PairSlot = ((std::net::SocketAddrV4, std::net::SocketAddrV4), String);

thread_local! {
    static PAIR_TEXT: std::cell::RefCell<Vec<PairSlot>> =
        const { std::cell::RefCell::new(Vec::new()) };
}

/// Calls `f` with `src → dst`, kept as [`with_v4_text`] keeps one address: a line
/// takes the pair's text in one piece.
fn with_pair_text<R>(
    s: &std::net::SocketAddrV4,
    d: &std::net::SocketAddrV4,
    f: impl FnOnce(&str) -> R,
) -> R {
    let write = |text: &mut String| {
        push_addr(text, &SocketAddr::V4(*s));
        text.push_str(" → ");
        push_addr(text, &SocketAddr::V4(*d));
    };
    let (sp, dp) = (u32::from(s.port()), u32::from(d.port()));
    let key = (u32::from(*s.ip()) ^ sp.rotate_left(16))
        .wrapping_mul(0x9E37_79B9)
        .wrapping_add(u32::from(*d.ip()) ^ dp.rotate_left(7));
    // The top twelve bits of a multiplicative hash: one of the 4096 slots.
    let slot = (key.wrapping_mul(0x85EB_CA6B) >> 20) as usize;
    let unset = std::net::SocketAddrV4::new(std::net::Ipv4Addr::UNSPECIFIED, 0);
    with_kept_text(&PAIR_TEXT, (PAIR_SLOTS, slot), ((unset, unset), (*s, *d)), write, f)
}

/// Writes `ip:port` (what [`push_addr`] appends), with nothing kept.
fn write_addr(out: &mut String, a: &SocketAddr) {
    match a {
        SocketAddr::V4(v4) => {
            for (i, o) in v4.ip().octets().into_iter().enumerate() {
                if i > 0 {
                    out.push('.');
                }
                push_octet(out, o);
            }
            out.push(':');
            push_int(out, v4.port());
        }
        SocketAddr::V6(_) => {
            let _ = write!(out, "{a}");
        }
    }
}

/// Appends a byte in decimal, a digit at a time (cheaper than a formatter for three).
fn push_octet(out: &mut String, o: u8) {
    let digit = |d: u8| char::from(b'0' + d);
    if o >= 100 {
        out.push(digit(o / 100));
    }
    if o >= 10 {
        out.push(digit(o / 10 % 10));
    }
    out.push(digit(o % 10));
}

/// [`push_addr`] into bytes (the NDJSON writer's buffer).
pub fn push_addr_bytes(out: &mut Vec<u8>, a: &SocketAddr) {
    match a {
        SocketAddr::V4(v4) => with_v4_text(v4, |t| out.extend_from_slice(t.as_bytes())),
        SocketAddr::V6(_) => {
            let _ = std::io::Write::write_fmt(out, format_args!("{a}"));
        }
    }
}

/// Appends an integer in decimal, as `{}` writes it, without the formatter. Most are
/// small (ids, counts, versions): up to two digits go in as characters.
#[inline]
pub fn push_int<N: itoa::Integer + TryInto<u16> + Copy>(out: &mut String, n: N) {
    match n.try_into() {
        Ok(small) if small < 100 => push_small(out, small),
        _ => out.push_str(itoa::Buffer::new().format(n)),
    }
}

/// [`push_int`] for the summary line's few numbers (packet numbers, correlation ids),
/// mostly four to six digits: those are written two digits at a time, with no copy of
/// a formatter's buffer. (The tree's many small numbers are cheaper through itoa.)
#[inline]
pub fn push_count<N: itoa::Integer + TryInto<u32> + Copy>(out: &mut String, n: N) {
    match n.try_into() {
        Ok(small) if small < 100 => push_small(out, small as u16),
        Ok(mid) if mid < 1_000_000 => push_mid(out, mid),
        _ => out.push_str(itoa::Buffer::new().format(n)),
    }
}

/// Every two-digit decimal, `00` to `99`, in order.
const PAIRS: &str = "00010203040506070809101112131415161718192021222324252627282930313233343536373839404142434445464748495051525354555657585960616263646566676869707172737475767778798081828384858687888990919293949596979899";

/// Appends `n` (below 100) as two digits, a leading zero included.
#[inline]
pub fn push_pair(out: &mut String, n: u32) {
    let at = (n as usize) * 2;
    if let Some(p) = PAIRS.get(at..at + 2) {
        out.push_str(p);
    }
}

/// Appends `n` (100 up to 999 999) in decimal.
#[inline(always)]
fn push_mid(out: &mut String, n: u32) {
    if n < 10_000 {
        push_small(out, (n / 100) as u16);
    } else {
        push_small(out, (n / 10_000) as u16);
        push_pair(out, n / 100 % 100);
    }
    push_pair(out, n % 100);
}

/// The last decimal digit of `n`, as a character. Computed, not looked up, so the
/// compiler sees an ASCII character and appends it as one byte.
#[inline]
fn digit(n: u32) -> char {
    char::from(b'0' + (n % 10) as u8)
}

/// Appends `n` (below 100) in decimal.
#[inline]
fn push_small(out: &mut String, n: u16) {
    let n = u32::from(n);
    if n >= 10 {
        out.push(digit(n / 10));
    }
    out.push(digit(n));
}

/// Both lowercase hex digits of every byte value, for every hex writer.
// Evaluated at compile time: an index out of range would fail the build, not a run.
#[allow(clippy::indexing_slicing)]
pub(crate) const HEX_PAIRS: [[u8; 2]; 256] = {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut t = [[0u8; 2]; 256];
    let mut i = 0;
    while i < 256 {
        t[i] = [DIGITS[i >> 4], DIGITS[i & 0x0f]];
        i += 1;
    }
    t
};

/// [`HEX_PAIRS`] as text, `000102…ff`, so a pair can be pushed as a `&str`.
#[allow(clippy::indexing_slicing)]
const HEX_TEXT: &str = {
    const FLAT: [u8; 512] = {
        let mut t = [0u8; 512];
        let mut i = 0;
        while i < 256 {
            t[2 * i] = HEX_PAIRS[i][0];
            t[2 * i + 1] = HEX_PAIRS[i][1];
            i += 1;
        }
        t
    };
    match std::str::from_utf8(&FLAT) {
        Ok(s) => s,
        Err(_) => panic!("hex digits are ASCII"),
    }
};

/// The two hex digits of a byte.
#[inline]
fn hex_pair(x: u8) -> &'static str {
    let at = 2 * usize::from(x);
    HEX_TEXT.get(at..at + 2).unwrap_or("??")
}

/// The last hex digit of `n`, as a character (computed: the compiler sees ASCII).
#[inline]
fn hex_digit(n: u32) -> char {
    let d = (n & 0xf) as u8;
    char::from(if d < 10 { b'0' + d } else { b'a' - 10 + d })
}

/// Appends `{:04x}` of `v`, without the formatter: the low 16 bits as two pairs from
/// the table (copied whole), any higher digits one at a time.
pub(crate) fn push_hex4(out: &mut String, v: u32) {
    let hi = v >> 16;
    if hi != 0 {
        for k in (0..(32 - hi.leading_zeros()).div_ceil(4)).rev() {
            out.push(hex_digit(hi >> (4 * k)));
        }
    }
    let [a, b] = (v as u16).to_be_bytes();
    out.push_str(hex_pair(a));
    out.push_str(hex_pair(b));
}

/// ` [0x{offset:04x}, {len}B]`: where a tree node lies.
pub(crate) fn push_place(out: &mut String, offset: u32, len: u32) {
    out.push_str(" [0x");
    push_hex4(out, offset);
    out.push_str(", ");
    push_int(out, len);
    out.push_str("B]");
}


/// Items of a list a summary line shows before `+N more` (tree and JSON show all).
pub const SUMMARY_ITEMS: usize = 3;
/// Characters of a wire string a summary line shows before `…` (tree and JSON show all).
pub const SUMMARY_CHARS: usize = 40;

/// A wire string for a summary line: escaped, and cut after [`SUMMARY_CHARS`] characters
/// with `…`. The cut is made before escaping, so an escape is never split.
pub fn short(s: &str) -> String {
    let mut out = String::new();
    push_short(&mut out, s);
    out
}

/// Appends [`short`]'s text.
pub fn push_short(out: &mut String, s: &str) {
    // Fewer bytes than the limit's characters: nothing to cut, no need to count.
    let cut = if s.len() <= SUMMARY_CHARS {
        None
    } else {
        s.char_indices().nth(SUMMARY_CHARS).map(|(at, _)| at)
    };
    match cut {
        Some(at) => {
            super::escape::push_escaped(out, s.get(..at).unwrap_or(s));
            out.push('…');
        }
        None => super::escape::push_escaped(out, s),
    }
}

/// A list for a summary line: the first [`SUMMARY_ITEMS`] items written by `item`, joined
/// by `, `, then `, +N more`. Items past the limit are counted, never formatted.
pub fn list<T: Copy>(items: &[T], mut item: impl FnMut(T) -> String) -> String {
    let mut out = String::new();
    push_list(&mut out, items.iter().copied(), |out, x| {
        out.push_str(&item(x))
    });
    out
}

/// Appends [`list`]'s text, each item written in place by `item`.
pub fn push_list<T>(
    out: &mut String,
    items: impl IntoIterator<Item = T>,
    mut item: impl FnMut(&mut String, T),
) {
    let mut items = items.into_iter();
    for i in 0..SUMMARY_ITEMS {
        // Fewer items than the limit: nothing more to count.
        let Some(x) = items.next() else { return };
        if i > 0 {
            out.push_str(", ");
        }
        item(out, x);
    }
    let more = items.count();
    if more > 0 {
        out.push_str(", +");
        push_int(out, more);
        out.push_str(" more");
    }
}

/// [`push_list`]'s text for items met one at a time (from nested loops, say): each
/// [`List::item`] is written while fewer than [`SUMMARY_ITEMS`] were, the rest counted;
/// [`List::end`] writes `, +N more`.
#[derive(Default)]
pub struct List {
    seen: usize,
}

impl List {
    /// One more item, written by `item` if the line still shows it.
    #[inline]
    pub fn item(&mut self, out: &mut String, item: impl FnOnce(&mut String)) {
        if self.seen < SUMMARY_ITEMS {
            if self.seen > 0 {
                out.push_str(", ");
            }
            item(out);
        }
        self.seen += 1;
    }

    /// Appends how many items were left out, if any.
    pub fn end(self, out: &mut String) {
        let more = self.seen.saturating_sub(SUMMARY_ITEMS);
        if more > 0 {
            out.push_str(", +");
            push_int(out, more);
            out.push_str(" more");
        }
    }
}

/// A count with thousands separators: `1,234`.
pub fn count(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A duration in µs, as people read it.
pub fn latency(us: i64) -> String {
    let mut s = String::new();
    push_latency(&mut s, us);
    s
}

/// Appends [`latency`]'s text.
pub fn push_latency(out: &mut String, us: i64) {
    match us {
        us if us < 10_000 => {
            push_int(out, us);
            out.push_str("µs");
        }
        us if us < 10_000_000 => {
            if !push_rounded(out, us, 100, "ms") {
                let _ = write!(out, "{:.1}ms", us as f64 / 1000.0);
            }
        }
        us => {
            if !(us < 1_000_000_000_000_000 && push_rounded(out, us, 10_000, "s")) {
                let _ = write!(out, "{:.2}s", us as f64 / 1_000_000.0);
            }
        }
    }
}

/// Appends `us` (from 0) in units of `unit * 10` µs with one decimal (`unit` 100: ms)
/// or in units of `unit * 100` with two (`unit` 10 000: s), rounded as the float
/// formatter rounds the quotient, then `suffix`; false, and nothing appended, at a
/// tie. Off a tie the exact quotient is at least 1 µs from the rounding boundary, and
/// the float's error is far below that (below 10^15 µs), so both round the same way;
/// at a tie only the float's own error decides, so it is left to the formatter.
fn push_rounded(out: &mut String, us: i64, unit: i64, suffix: &str) -> bool {
    let (q, rem) = (us / unit, us % unit);
    let q = match (2 * rem).cmp(&unit) {
        std::cmp::Ordering::Less => q,
        std::cmp::Ordering::Greater => q + 1,
        std::cmp::Ordering::Equal => return false,
    };
    let (whole, places) = if unit == 100 { (10, 1) } else { (100, 2) };
    push_int(out, q / whole);
    out.push('.');
    let frac = (q % whole) as u32;
    if places == 1 {
        out.push(char::from(b'0' + frac as u8));
    } else {
        push_pair(out, frac);
    }
    out.push_str(suffix);
    true
}

/// Appends the API and version label: `FindCoordinator v6`, `Produce v9`, `?`.
#[inline]
pub fn push_api_version(out: &mut String, msg: &Message<'_>) {
    match (msg.api_key.map(|k| (k, api_name(k))), msg.api_version) {
        (Some((_, Some(name))), v) => {
            out.push_str(name);
            match v {
                // Most versions are one digit: written without the formatter.
                Some(v @ 0..10) => {
                    out.push_str(" v");
                    out.push(char::from(b'0' + v as u8));
                }
                Some(v) => {
                    out.push_str(" v");
                    push_int(out, v);
                }
                None => {}
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

/// Slots of [`push_api_kind`]'s texts.
const API_KIND_SLOTS: usize = 256;

type ApiKindSlot = ((Option<i16>, Option<i16>, Kind), String);

thread_local! {
    static API_KIND_TEXT: std::cell::RefCell<Vec<ApiKindSlot>> =
        const { std::cell::RefCell::new(Vec::new()) };
}

/// Appends [`push_api_version`]'s label, then the kind padded to 8 characters and
/// ` corr=`, as the summary line has them: the text of each API, version and kind is
/// kept (as addresses are), so a line takes it in one piece.
#[inline]
pub fn push_api_kind(out: &mut String, msg: &Message<'_>) {
    let key = (msg.api_key, msg.api_version, msg.kind);
    let write = |text: &mut String| {
        push_api_version(text, msg);
        text.push_str(match msg.kind {
            Kind::Request => " request  corr=",
            Kind::Response => " response corr=",
        });
    };
    let k = msg.api_key.map_or(0xffff, |k| u32::from(k as u16));
    let v = msg.api_version.map_or(0xffff, |v| u32::from(v as u16));
    let h = (k << 17 ^ v << 1 ^ u32::from(msg.kind == Kind::Response)).wrapping_mul(0x9E37_79B9);
    // The top eight bits of a multiplicative hash: one of the 256 slots.
    let slot = (h >> 24) as usize;
    let unset = (None, None, Kind::Request);
    with_kept_text(&API_KIND_TEXT, (API_KIND_SLOTS, slot), (unset, key), write, |t| {
        out.push_str(t)
    });
}

/// The API and version label: `FindCoordinator v6`, `Produce v9`, `?`.
pub fn api_version(msg: &Message<'_>) -> String {
    let mut s = String::new();
    push_api_version(&mut s, msg);
    s
}

/// As [`list`], for strings already made.
pub fn list_strings(items: impl IntoIterator<Item = String>) -> String {
    let items: Vec<String> = items.into_iter().collect();
    list_of(&items, |s: &String| s.clone())
}

/// As [`list`], with items taken by reference.
pub fn list_of<T>(items: &[T], f: impl FnMut(&T) -> String) -> String {
    let refs: Vec<&T> = items.iter().collect();
    list(&refs, f)
}

/// A byte count as people read it: `312B`, `12.5KiB`, `3.0MiB`.
pub fn bytes(n: u64) -> String {
    let mut s = String::new();
    push_bytes(&mut s, n);
    s
}

/// Appends [`bytes`]'s text.
pub fn push_bytes(out: &mut String, n: u64) {
    match n {
        n if n < 10 * 1024 => {
            push_int(out, n);
            out.push('B');
        }
        n if n < 10 * 1024 * 1024 => {
            let _ = write!(out, "{:.1}KiB", n as f64 / 1024.0);
        }
        n => {
            let _ = write!(out, "{:.1}MiB", n as f64 / (1024.0 * 1024.0));
        }
    }
}

/// Kafka's name for an error code, or `error N`.
pub fn error(code: i64) -> String {
    let mut s = String::new();
    push_error(&mut s, code);
    s
}

/// Appends [`error`]'s text.
pub fn push_error(out: &mut String, code: i64) {
    match i16::try_from(code).ok().and_then(error_name) {
        Some(name) => out.push_str(name),
        None => {
            out.push_str("error ");
            push_int(out, code);
        }
    }
}

/// A FindCoordinator key type as the summary line writes it: `group`, or `keytype=N`.
pub fn key_type(t: i64) -> String {
    let mut s = String::new();
    push_key_type(&mut s, t);
    s
}

/// Appends [`key_type`]'s text.
pub fn push_key_type(out: &mut String, t: i64) {
    match crate::apis::find_coordinator::key_type_name(t) {
        Some(name) => out.push_str(name),
        None => {
            out.push_str("keytype=");
            push_int(out, t);
        }
    }
}

/// A key type as the analysis writes it: `group`, `keytype N`, or `unknown` when no
/// request said.
pub fn key_type_words(t: Option<i8>) -> String {
    match t {
        Some(n) => crate::apis::find_coordinator::key_type_name(i64::from(n))
            .map_or_else(|| format!("keytype {n}"), str::to_string),
        None => "unknown".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kept_address_text_is_the_address_written() {
        // More addresses than slots, twice over: every one reads as std writes it.
        for round in 0..2 {
            for i in 0..600u32 {
                let ip = std::net::Ipv4Addr::from(0x0a00_0000 + i * 7 + round);
                let sa = SocketAddr::V4(std::net::SocketAddrV4::new(ip, (i * 131) as u16));
                let mut s = String::new();
                push_addr(&mut s, &sa);
                assert_eq!(s, sa.to_string());
                let mut b = Vec::new();
                push_addr_bytes(&mut b, &sa);
                assert_eq!(String::from_utf8(b).unwrap(), sa.to_string());
                let back = SocketAddr::V4(std::net::SocketAddrV4::new(ip, 9092));
                let mut p = String::new();
                push_addr_pair(&mut p, &sa, &back);
                push_addr_pair(&mut p, &back, &sa);
                assert_eq!(p, format!("{sa} → {back}{back} → {sa}"));
            }
        }
        let v6: SocketAddr = "[::1]:9093".parse().unwrap();
        let v4: SocketAddr = "10.0.0.1:9092".parse().unwrap();
        let mut p = String::new();
        push_addr_pair(&mut p, &v6, &v4);
        assert_eq!(p, "[::1]:9093 → 10.0.0.1:9092");
    }

    #[test]
    fn latencies_read_as_the_float_formatter_writes_them() {
        let float = |us: i64| match us {
            us if us < 10_000 => format!("{us}µs"),
            us if us < 10_000_000 => format!("{:.1}ms", us as f64 / 1000.0),
            us => format!("{:.2}s", us as f64 / 1_000_000.0),
        };
        let mut cases: Vec<i64> = (-100..200_000).collect();
        cases.extend((9_990_000..10_010_000).step_by(7));
        cases.extend([i64::MAX, i64::MAX - 1, 999_999_999_999_995_000, 1_000_000_000_000_005_000]);
        let mut x: i64 = 99;
        for _ in 0..200_000 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            // Every scale, ties (…50, …5000) included.
            let us = (x >> 1) >> (x as u64 % 62);
            cases.extend([us, us / 100 * 100 + 50, us / 10_000 * 10_000 + 5_000]);
        }
        for us in cases {
            assert_eq!(latency(us), float(us), "{us}");
        }
    }

    #[test]
    fn kept_api_kind_text_is_the_label_written() {
        // More keys than slots, twice over, unknown and missing keys and versions too:
        // each reads as the label and the padded kind written afresh.
        let keys = [None, Some(-1), Some(0), Some(1), Some(10), Some(52), Some(999)];
        let versions = [None, Some(-3), Some(0), Some(9), Some(10), Some(17), Some(i16::MAX)];
        for _ in 0..2 {
            for k in keys.into_iter().chain((0..80).map(Some)) {
                for v in versions {
                    for kind in [Kind::Request, Kind::Response] {
                        let mut m = Message::new(kind);
                        (m.api_key, m.api_version) = (k, v);
                        let mut kept = String::from("x");
                        push_api_kind(&mut kept, &m);
                        let mut want = String::from("x");
                        push_api_version(&mut want, &m);
                        want.push_str(&format!(" {:<8} corr=", kind.as_str()));
                        assert_eq!(kept, want, "{k:?} {v:?} {kind:?}");
                    }
                }
            }
        }
    }

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
            let mut b = Vec::new();
            push_addr_bytes(&mut b, &sa);
            assert_eq!(String::from_utf8(b).unwrap(), sa.to_string());
        }
    }

    #[test]
    fn summary_lists_and_strings_are_bounded() {
        let n = |k: usize| (0..k).collect::<Vec<_>>();
        assert_eq!(list(&n(0), |i| i.to_string()), "");
        assert_eq!(list(&n(3), |i| i.to_string()), "0, 1, 2");
        assert_eq!(list(&n(4), |i| i.to_string()), "0, 1, 2, +1 more");
        let mut formatted = 0;
        assert_eq!(
            list(&n(9), |i| {
                formatted += 1;
                i.to_string()
            }),
            "0, 1, 2, +6 more"
        );
        assert_eq!(formatted, 3);
        for k in 0..9 {
            let mut out = String::new();
            let mut l = List::default();
            for i in 0..k {
                l.item(&mut out, |out| push_int(out, i));
            }
            l.end(&mut out);
            assert_eq!(out, list(&n(k), |i| i.to_string()));
        }
        let exact = "x".repeat(SUMMARY_CHARS);
        assert_eq!(short(&exact), exact);
        assert_eq!(short(&format!("{exact}y")), format!("{exact}…"));
        // Characters, not bytes; and an escape is never cut in two.
        let wide = "é".repeat(SUMMARY_CHARS + 5);
        assert_eq!(short(&wide), format!("{}…", "é".repeat(SUMMARY_CHARS)));
        let raw = format!("{}\u{1b}[2J", "a".repeat(SUMMARY_CHARS - 1));
        assert_eq!(
            short(&raw),
            format!("{}\\x1b…", "a".repeat(SUMMARY_CHARS - 1))
        );
        assert_eq!(short(""), "");
    }

    #[test]
    fn integers_read_as_the_formatter_writes_them() {
        // Each writer against `Display`, signed and unsigned, after text already there.
        fn check(signed: &[i64], unsigned: &[u64], i: fn(&mut String, i64), u: fn(&mut String, u64)) {
            for &n in signed {
                let mut out = String::from(">");
                i(&mut out, n);
                assert_eq!(out, format!(">{n}"));
            }
            for &n in unsigned {
                let mut out = String::new();
                u(&mut out, n);
                assert_eq!(out, n.to_string());
            }
        }
        let mut ints: Vec<i64> = (-1000..20_000).collect();
        ints.extend([i64::MIN, i64::MAX, 999_999, 1_000_000, u32::MAX.into(), 1 << 40]);
        check(&ints, &[0, 99, 100, 99_999, 100_000, u64::MAX], push_int, push_int);
        let mut counts: Vec<i64> = (-1000..120_000).collect();
        counts.extend([999_999, 1_000_000, i64::from(i32::MAX), i64::MIN, i64::MAX]);
        counts.extend((0..64).map(|k| 1i64 << k));
        let unsigned = [0, 99, 100, 999_999, 1_000_000, u64::MAX];
        check(&counts, &unsigned, push_count, push_count);
    }

    #[test]
    fn places_read_as_the_formatter_writes_them() {
        for v in [0, 1, 0xf, 0x10, 0xfff, 0x1000, 0xffff, 0x1_0000, 0xabcde, u32::MAX] {
            for len in [0, 1, 9, 10, 42, 99, 100, 65_535, u32::MAX] {
                let mut out = String::new();
                push_place(&mut out, v, len);
                assert_eq!(out, format!(" [0x{v:04x}, {len}B]"));
            }
        }
    }

    #[test]
    fn counts_have_separators() {
        assert_eq!(count(0), "0");
        assert_eq!(count(999), "999");
        assert_eq!(count(1234), "1,234");
        assert_eq!(count(1_000_000), "1,000,000");
        assert_eq!(count(u64::MAX), "18,446,744,073,709,551,615");
    }

    #[test]
    fn byte_counts_read_as_people_read_them() {
        assert_eq!(bytes(312), "312B");
        for n in [0, 1, 10 * 1024 - 1, 10 * 1024, 12_800, 10 * 1024 * 1024 - 1, 10 << 20, u64::MAX] {
            let old = match n {
                n if n < 10 * 1024 => format!("{n}B"),
                n if n < 10 * 1024 * 1024 => format!("{:.1}KiB", n as f64 / 1024.0),
                n => format!("{:.1}MiB", n as f64 / (1024.0 * 1024.0)),
            };
            assert_eq!(bytes(n), old);
        }
        assert_eq!(bytes(20 * 1024), "20.0KiB");
    }

    #[test]
    fn key_types_keep_each_wording() {
        assert_eq!(key_type(1), "transaction");
        assert_eq!(key_type(7), "keytype=7");
        assert_eq!(key_type_words(Some(2)), "share");
        assert_eq!(key_type_words(Some(7)), "keytype 7");
        assert_eq!(key_type_words(None), "unknown");
        assert_eq!(error(16), "NOT_COORDINATOR");
        assert_eq!(error(40000), "error 40000");
    }
}
