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
/// checked a byte at a time; chars are decoded only from the first non-ASCII byte on.
fn is_clean(s: &str) -> bool {
    for (i, b) in s.bytes().enumerate() {
        if b >= 0x80 {
            // `i` follows ASCII bytes only, so it is a char boundary.
            let rest = s.get(i..).unwrap_or_default();
            return !rest
                .chars()
                .any(|c| is_hostile(c) || c == '"' || c == '\\');
        }
        if b < 0x20 || b == 0x7f || b == b'"' || b == b'\\' {
            return false;
        }
    }
    true
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

fn push_escaped_slow(out: &mut String, s: &str) {
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x80 && is_hostile(c) => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c if is_hostile(c) => {
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
            c => out.push(c),
        }
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
    fn invalid_utf8_is_visible() {
        assert_eq!(escape_bytes(b"ok\xff\x1b"), "ok\\xff\\x1b");
    }
}
