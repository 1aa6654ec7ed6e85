//! Escaping wire strings for terminals: control bytes, C1 controls and
//! bidirectional overrides are shown as visible escapes, never passed through.

use std::borrow::Cow;
use std::fmt::Write;

/// Whether a character must not reach a terminal as itself.
fn is_hostile(c: char) -> bool {
    c.is_control()
        || matches!(c,
            '\u{061c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// Whether `s` passes to a terminal unchanged. Printable ASCII (most wire strings) is
/// checked eight bytes at a time; from the first word with a non-ASCII byte on, the
/// bytes are matched against the UTF-8 encodings of the hostile characters.
fn is_clean(s: &str) -> bool {
    let b = s.as_bytes();
    let mut words = b.chunks_exact(8);
    for (k, w) in words.by_ref().enumerate() {
        let w = u64::from_le_bytes(w.try_into().unwrap_or([0; 8]));
        if ascii_stops(w) != 0 {
            if w & HIGHS != 0 {
                // `k * 8` follows ASCII bytes only.
                return clean_utf8(b.get(k * 8..).unwrap_or_default());
            }
            return false;
        }
    }
    let rest = words.remainder();
    // The last eight bytes as one word (overlapping clean ASCII) when they are ASCII.
    if let (false, Some(w)) = (rest.is_empty(), b.last_chunk::<8>()) {
        let w = u64::from_le_bytes(*w);
        if w & HIGHS == 0 {
            return ascii_stops(w) == 0;
        }
    }
    clean_utf8(rest)
}

/// The bytes of `w` that end a run of plain ASCII: a byte not ASCII, or an ASCII
/// byte to escape (controls, DEL, `"`, `\`), each marked by its high bit. Exact as a
/// whole, and the lowest marked byte is exact (a borrow only ever runs upwards, from
/// a byte that is marked rightly).
#[inline]
fn ascii_stops(w: u64) -> u64 {
    let zero = |x: u64| x.wrapping_sub(ONES) & !x;
    let below_space = w.wrapping_sub(ONES * 0x20) & !w;
    (below_space
        | zero(w ^ (ONES * 0x7f))
        | zero(w ^ (ONES * u64::from(b'"')))
        | zero(w ^ (ONES * u64::from(b'\\')))
        | w)
        & HIGHS
}

/// [`is_clean`] on the bytes of valid UTF-8: besides the ASCII controls, `"` and `\`,
/// the hostile characters are C1 controls (`C2 80`-`C2 9F`), U+061C (`D8 9C`), U+200E/F
/// and U+202A-E (`E2 80 ..`) and U+2066-9 (`E2 81 A6`-`A9`). Those lead bytes only ever
/// start a character, so matching them is exact. Each byte is looked up in [`STOP`]
/// (text that is not ASCII is mostly short, where a table costs less than words): with
/// no stop, clean; with an ASCII one, not; with a lead byte only, the bytes after it say.
fn clean_utf8(b: &[u8]) -> bool {
    match b.iter().fold(0, |seen, &x| seen | stop(x)) {
        0 => true,
        LEAD => first_hostile(b).is_none(),
        _ => false,
    }
}

/// [`STOP`] of an ASCII byte to escape.
const ASCII: u8 = 1;
/// [`STOP`] of a lead byte of a character that may be hostile.
const LEAD: u8 = 2;

/// Per byte value: [`ASCII`] for a byte to escape (controls, DEL, `"`, `\`), [`LEAD`]
/// for `C2`, `D8` and `E2` (see [`clean_utf8`]), 0 for the rest.
// Evaluated at compile time: an index out of range would fail the build, not a run.
#[allow(clippy::indexing_slicing)]
const STOP: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut i = 0;
    while i < 0x20 {
        t[i] = ASCII;
        i += 1;
    }
    t[0x7f] = ASCII;
    t[b'"' as usize] = ASCII;
    t[b'\\' as usize] = ASCII;
    t[0xc2] = LEAD;
    t[0xd8] = LEAD;
    t[0xe2] = LEAD;
    t
};

#[inline]
fn stop(x: u8) -> u8 {
    STOP.get(usize::from(x)).copied().unwrap_or(ASCII)
}

/// Where the first character [`clean_utf8`] rejects starts, a byte at a time (always a character boundary).
fn first_hostile(b: &[u8]) -> Option<usize> {
    // Words of plain ASCII are passed over whole; from the first byte that ends
    // such a run (a character's start, as the bytes before it are ASCII), a byte at a time.
    let mut at = 0;
    while let Some(w) = b.get(at..).and_then(|r| r.first_chunk::<8>()) {
        let stops = ascii_stops(u64::from_le_bytes(*w));
        if stops != 0 {
            at += (stops.trailing_zeros() / 8) as usize;
            break;
        }
        at += 8;
    }
    let mut rest = b.get(at..).unwrap_or_default();
    while let Some((&c, tail)) = rest.split_first() {
        let hostile = match c {
            0x00..=0x1f | 0x7f | b'"' | b'\\' => true,
            0xc2 => matches!(tail.first(), Some(0x80..=0x9f)),
            0xd8 => tail.first() == Some(&0x9c),
            0xe2 => matches!(
                (tail.first(), tail.get(1)),
                (Some(0x80), Some(0x8e | 0x8f | 0xaa..=0xae)) | (Some(0x81), Some(0xa6..=0xa9))
            ),
            _ => false,
        };
        if hostile {
            return Some(at);
        }
        rest = tail;
        at += 1;
    }
    None
}

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGHS: u64 = 0x8080_8080_8080_8080;

/// Whether a byte of `w` is below `n` (`n` at most 128; exact, as a whole).
#[inline]
fn has_less(w: u64, n: u8) -> bool {
    w.wrapping_sub(ONES * u64::from(n)) & !w & HIGHS != 0
}

/// Whether a byte of `w` is `b`.
#[inline]
fn has_byte(w: u64, b: u8) -> bool {
    has_less(w ^ (ONES * u64::from(b)), 1)
}

/// Whether JSON takes `s` as it is between quotes: no control byte, `"` or `\`
/// (any other byte, UTF-8 included, is kept as serde_json keeps it).
pub(crate) fn is_json_plain(s: &str) -> bool {
    let mut words = s.as_bytes().chunks_exact(8);
    for w in words.by_ref() {
        let w = u64::from_le_bytes(w.try_into().unwrap_or([0; 8]));
        if has_less(w, 0x20) || has_byte(w, b'"') || has_byte(w, b'\\') {
            return false;
        }
    }
    let rest = words.remainder();
    // The last eight bytes as one word, overlapping bytes already checked.
    if let (false, Some(w)) = (rest.is_empty(), s.as_bytes().last_chunk::<8>()) {
        let w = u64::from_le_bytes(*w);
        return !(has_less(w, 0x20) || has_byte(w, b'"') || has_byte(w, b'\\'));
    }
    rest.iter().all(|&b| b >= 0x20 && b != b'"' && b != b'\\')
}

/// Escapes a wire string for text views; `"` and `\` are escaped too, so quoting stays unambiguous.
pub fn escape(s: &str) -> Cow<'_, str> {
    if is_clean(s) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    push_escaped_slow(&mut out, s);
    Cow::Owned(out)
}

/// Appends `s` escaped as [`escape`] does, without an allocation of its own.
pub fn push_escaped(out: &mut String, s: &str) {
    if is_clean(s) {
        out.push_str(s);
    } else {
        push_escaped_slow(out, s);
    }
}

/// Clean runs are copied whole; only the characters that need it are escaped. One
/// pass over the bytes: a byte [`STOP`] marks starts a character (continuation bytes
/// are never marked), which is escaped when ASCII or hostile.
fn push_escaped_slow(out: &mut String, s: &str) {
    let b = s.as_bytes();
    // The start of the run not yet copied, and the byte looked at.
    let (mut run, mut at) = (0, 0);
    while let Some(&x) = b.get(at) {
        if stop(x) == 0 {
            at += 1;
            continue;
        }
        let Some(c) = s.get(at..).and_then(|r| r.chars().next()) else {
            break;
        };
        let next = at + c.len_utf8();
        if x < 0x80 || is_hostile(c) {
            out.push_str(s.get(run..at).unwrap_or_default());
            push_char_escaped(out, c);
            run = next;
        }
        at = next;
    }
    out.push_str(s.get(run..).unwrap_or_default());
}

fn push_char_escaped(out: &mut String, c: char) {
    match c {
        '"' => out.push_str("\\\""),
        '\\' => out.push_str("\\\\"),
        '\n' => out.push_str("\\n"),
        '\r' => out.push_str("\\r"),
        '\t' => out.push_str("\\t"),
        c if (c as u32) < 0x80 && is_hostile(c) => {
            out.push_str("\\x");
            push_hex(out, c as u32, 2);
        }
        c if is_hostile(c) => {
            out.push_str("\\u{");
            push_hex(out, c as u32, 1);
            out.push('}');
        }
        c => out.push(c),
    }
}

/// Appends `n` in lowercase hex, at least `min` digits (as `{:0min$x}` writes it).
fn push_hex(out: &mut String, n: u32, min: u32) {
    let digits = (32 - n.leading_zeros()).div_ceil(4).max(min);
    for k in (0..digits).rev() {
        let d = (n >> (4 * k)) & 0xf;
        out.push(char::from_digit(d, 16).unwrap_or('?'));
    }
}

/// Escapes bytes that may not be UTF-8: valid runs as [`escape`], invalid bytes as `\xNN`.
pub fn escape_bytes(b: &[u8]) -> Cow<'_, str> {
    match std::str::from_utf8(b) {
        Ok(s) => escape(s),
        Err(_) => {
            let mut out = String::new();
            for chunk in b.utf8_chunks() {
                out.push_str(&escape(chunk.valid()));
                for byte in chunk.invalid() {
                    let _ = write!(out, "\\x{byte:02x}");
                }
            }
            Cow::Owned(out)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn terminal_attack_is_neutralised() {
        let s = "\x1b]0;pwned\x07\x1b[2J";
        assert_eq!(escape(s), "\\x1b]0;pwned\\x07\\x1b[2J");
    }

    #[test]
    fn c1_and_bidi_are_escaped_plain_text_is_borrowed() {
        assert_eq!(escape("a\u{9b}b\u{202e}c"), "a\\u{9b}b\\u{202e}c");
        assert!(matches!(escape("orders-app é"), Cow::Borrowed(_)));
        assert_eq!(escape("q\"\\"), "q\\\"\\\\");
        assert!(matches!(escape("plain ascii ~"), Cow::Borrowed(_)));
        assert_eq!(escape("del\u{7f}"), "del\\x7f");
    }

    #[test]
    fn push_escaped_matches_escape() {
        for s in ["", "abc", "a\"b", "\u{1b}[2J", "é\u{202e}", "tab\there", "\u{7f}"] {
            let mut out = String::from(">");
            push_escaped(&mut out, s);
            assert_eq!(out, format!(">{}", escape(s)));
        }
    }

    #[test]
    fn clean_is_exactly_no_hostile_char() {
        let old = |s: &str| !s.chars().any(|c| is_hostile(c) || c == '"' || c == '\\');
        for c in (0..=0x10ffff).filter_map(char::from_u32) {
            // Alone, and after a word of ASCII, so both the word and byte paths see it.
            let s = c.to_string();
            assert_eq!(is_clean(&s), old(&s), "{c:?}");
            let s = format!("abcdefgh{c}xyz");
            assert_eq!(is_clean(&s), old(&s), "{c:?}");
        }
        for s in ["", "abcdefgh", "abcdefg\u{7f}", "abcdefgh\"", "a\\bcdefghijklmnop", "\u{1f}"] {
            assert_eq!(is_clean(s), old(s), "{s:?}");
        }
    }

    #[test]
    fn ascii_stops_marks_the_first_stop_exactly() {
        let stops = |b: u8| !(0x20..0x80).contains(&b) || b == 0x7f || b == b'"' || b == b'\\';
        // Every byte value at every place, over fills of clean bytes and of stops.
        for fill in [b'a', b' ', b'~', 0x21, 0x7e, 0x00, 0x1f, 0x80, 0xff, b'"'] {
            for at in 0..8 {
                for x in 0..=255u8 {
                    let mut w = [fill; 8];
                    w[at] = x;
                    let m = ascii_stops(u64::from_le_bytes(w));
                    let first = w.iter().position(|&b| stops(b));
                    assert_eq!(m != 0, first.is_some(), "{w:?}");
                    if let Some(k) = first {
                        assert_eq!(m.trailing_zeros() / 8, k as u32, "{w:?}");
                    }
                }
            }
        }
    }

    #[test]
    fn stop_table_marks_what_the_byte_tests_name() {
        for x in 0..=255u8 {
            let ascii = x < 0x80 && (is_hostile(char::from(x)) || x == b'"' || x == b'\\');
            let lead = matches!(x, 0xc2 | 0xd8 | 0xe2);
            let want = if ascii { ASCII } else if lead { LEAD } else { 0 };
            assert_eq!(stop(x), want, "{x:#x}");
        }
        // Every hostile character starts with a byte marked.
        for c in (0..=0x10ffff).filter_map(char::from_u32) {
            if is_hostile(c) || c == '"' || c == '\\' {
                let mut b = [0; 4];
                assert_ne!(stop(c.encode_utf8(&mut b).as_bytes()[0]), 0, "{c:?}");
            }
        }
    }

    #[test]
    fn json_plain_is_exactly_no_control_quote_or_backslash() {
        let old = |s: &str| s.bytes().all(|b| b >= 0x20 && b != b'"' && b != b'\\');
        let base = "ok-plain-text-é!";
        for b in 0..=0x7fu8 {
            for at in (0..=base.len()).filter(|&at| base.is_char_boundary(at)) {
                let s = format!("{}{}{}", &base[..at], b as char, &base[at..]);
                assert_eq!(is_json_plain(&s), old(&s), "{s:?}");
            }
        }
    }

    #[test]
    fn runs_escape_as_each_character_would() {
        let old = |s: &str| {
            let mut out = String::new();
            s.chars().for_each(|c| push_char_escaped(&mut out, c));
            out
        };
        for c in (0..=0x10ffff).step_by(7).chain(0..0x300).filter_map(char::from_u32) {
            for s in [format!("{c}"), format!("ab{c}é{c}\tx\"z"), format!("{c}\u{202e}q")] {
                let mut out = String::new();
                push_escaped(&mut out, &s);
                assert_eq!(out, old(&s), "{s:?}");
            }
        }
    }

    #[test]
    fn first_hostile_is_found_at_every_offset() {
        let reference = |s: &str| {
            s.char_indices()
                .find(|&(_, c)| is_hostile(c) || c == '"' || c == '\\')
                .map(|(at, _)| at)
        };
        let probes = [
            '\u{80}', '\u{9f}', '\u{a0}', '\u{61b}', '\u{61c}', '\u{200d}', '\u{200e}',
            '\u{202a}', '\u{202e}', '\u{202f}', '\u{2065}', '\u{2066}', '\u{2069}', '\u{206a}',
            'é', '"', '\\', '\u{7f}', '\u{1f}', ' ', '注',
        ];
        let fills = ["a", "é", "注", "\u{2000}", "\u{c2}"];
        for fill in fills {
            for before in 0..20 {
                for after in 0..12 {
                    for p in probes {
                        let s = format!("{}{p}{}", fill.repeat(before), fill.repeat(after));
                        assert_eq!(first_hostile(s.as_bytes()), reference(&s), "{s:?}");
                        assert_eq!(is_clean(&s), reference(&s).is_none(), "{s:?}");
                        let mut out = String::new();
                        push_escaped(&mut out, &s);
                        let mut one = String::new();
                        s.chars().for_each(|c| push_char_escaped(&mut one, c));
                        assert_eq!(out, one, "{s:?}");
                        // The one-pass writer alone, on clean text too.
                        let mut slow = String::new();
                        push_escaped_slow(&mut slow, &s);
                        assert_eq!(slow, one, "{s:?}");
                    }
                }
            }
        }
    }

    #[test]
    fn hex_reads_as_the_formatter_writes_it() {
        for n in (0..0x300).chain([0xfff, 0x1000, 0x202e, 0xffff, 0x10ffff, u32::MAX]) {
            for min in [1, 2] {
                let mut out = String::new();
                push_hex(&mut out, n, min);
                assert_eq!(out, format!("{n:0w$x}", w = min as usize));
            }
        }
    }

    #[test]
    fn invalid_utf8_is_visible() {
        assert_eq!(escape_bytes(b"ok\xff\x1b"), "ok\\xff\\x1b");
    }
}
