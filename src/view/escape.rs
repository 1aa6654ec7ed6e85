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

/// Escapes a wire string for text views; `"` and `\` are escaped too, so quoting stays unambiguous.
pub fn escape(s: &str) -> Cow<'_, str> {
    if !s.chars().any(|c| is_hostile(c) || c == '"' || c == '\\') {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
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
    Cow::Owned(out)
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
    }

    #[test]
    fn invalid_utf8_is_visible() {
        assert_eq!(escape_bytes(b"ok\xff\x1b"), "ok\\xff\\x1b");
    }
}
