//! A record's key and value (and header values) in the tree pane: as text when
//! they are UTF-8, as pretty-printed JSON when they are a JSON object or array,
//! as hex otherwise; `v` switches between automatic, text, JSON and hex.
//! Every form is escaped: no control character reaches the terminal raw.

use crate::view::escape::escape;
use std::fmt::Write;

/// Characters of a value shown on its tree line; the rest is cut with `…`.
const INLINE_MAX: usize = 160;
/// Lines of pretty-printed JSON shown under the selected value.
pub const PRETTY_MAX: usize = 200;

/// The form the user asked for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Form {
    /// JSON for an object or array, else text when UTF-8, else hex.
    #[default]
    Auto,
    Text,
    Json,
    Hex,
}

impl Form {
    /// The next form `v` switches to.
    pub fn next(self) -> Form {
        match self {
            Form::Auto => Form::Text,
            Form::Text => Form::Json,
            Form::Json => Form::Hex,
            Form::Hex => Form::Auto,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Form::Auto => "auto (JSON, text or hex)",
            Form::Text => "text",
            Form::Json => "JSON",
            Form::Hex => "hex",
        }
    }
}

/// How one value is shown.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Shown {
    /// `text`, `JSON` or `hex`: the form used (a value that is not valid
    /// UTF-8, or not JSON, falls back).
    pub form: &'static str,
    /// One escaped line for the tree line, cut at [`INLINE_MAX`] characters.
    pub inline: String,
    /// Pretty-printed JSON, one escaped line each, at most [`PRETTY_MAX`] and a
    /// last line saying how many more; empty for text and hex.
    pub pretty: Vec<String>,
}

/// `b` shown in form `want`, or the one it falls back to.
pub fn show(b: &[u8], want: Form) -> Shown {
    let json = || {
        serde_json::from_slice::<serde_json::Value>(b)
            .ok()
            .filter(|_| !b.is_empty())
    };
    let text = || std::str::from_utf8(b).ok();
    let parsed = match want {
        Form::Auto => json().filter(|v| v.is_object() || v.is_array()),
        Form::Json => json(),
        Form::Text | Form::Hex => None,
    };
    if let Some(v) = parsed {
        let compact = serde_json::to_string(&v).unwrap_or_default();
        let pretty = serde_json::to_string_pretty(&v).unwrap_or_default();
        let all: Vec<&str> = pretty.lines().collect();
        let mut lines: Vec<String> = all
            .iter()
            .take(PRETTY_MAX)
            .map(|l| json_safe(l))
            .collect();
        if all.len() > PRETTY_MAX {
            lines.push(format!("… {} more lines", all.len() - PRETTY_MAX));
        }
        return Shown {
            form: "JSON",
            inline: cut(&json_safe(&compact)),
            pretty: lines,
        };
    }
    match (want, text()) {
        (Form::Auto | Form::Text | Form::Json, Some(s)) => Shown {
            form: "text",
            // Only the start is escaped: the line shows no more.
            inline: format!(
                "\"{}\"",
                cut(&escape(&s.chars().take(INLINE_MAX + 1).collect::<String>()))
            ),
            pretty: Vec::new(),
        },
        _ => {
            let mut inline = String::new();
            for x in b.iter().take(INLINE_MAX / 2) {
                let _ = write!(inline, "{x:02x}");
            }
            if b.len() > INLINE_MAX / 2 {
                inline.push('…');
            }
            Shown {
                form: "hex",
                inline,
                pretty: Vec::new(),
            }
        }
    }
}

/// The whole value in form `want`, for copying: the pretty JSON, the escaped
/// text, or all of the hex.
pub fn copy(b: &[u8], want: Form) -> String {
    let s = show(b, want);
    match s.form {
        "JSON" => serde_json::from_slice::<serde_json::Value>(b)
            .ok()
            .and_then(|v| serde_json::to_string_pretty(&v).ok())
            .map(|p| p.lines().map(json_safe).collect::<Vec<_>>().join("\n"))
            .unwrap_or_default(),
        "text" => escape(&String::from_utf8_lossy(b)).into_owned(),
        _ => b.iter().fold(String::new(), |mut out, x| {
            let _ = write!(out, "{x:02x}");
            out
        }),
    }
}

/// The tree line of a value: `Value bytes = "text" (text, 5 B)`, from the
/// line's label (`Value bytes = …`, whose part before ` = ` is kept).
pub fn label_of(label: &str, s: &Shown, len: usize) -> String {
    let name = label.split(" = ").next().unwrap_or(label);
    format!("{name} = {} ({}, {len} B)", s.inline, s.form)
}

/// JSON as serde writes it, with the characters it leaves raw that a terminal
/// must not get (DEL, C1 controls, bidirectional overrides) as `\uXXXX`, which
/// keeps it valid JSON.
fn json_safe(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        let hostile = c.is_control()
            || matches!(c,
                '\u{061c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}');
        if hostile {
            let _ = write!(out, "\\u{:04x}", c as u32);
        } else {
            out.push(c);
        }
    }
    out
}

fn cut(s: &str) -> String {
    if s.chars().count() > INLINE_MAX {
        let mut out: String = s.chars().take(INLINE_MAX - 1).collect();
        out.push('…');
        out
    } else {
        s.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn picks_json_then_text_then_hex() {
        let j = show(br#"{"a":[1,2]}"#, Form::Auto);
        assert_eq!(j.form, "JSON");
        assert_eq!(j.inline, r#"{"a":[1,2]}"#);
        assert_eq!(j.pretty.len(), 6, "{:?}", j.pretty);
        // A JSON scalar reads the same as text: text it is, unless JSON is asked for.
        assert_eq!(show(b"42", Form::Auto).form, "text");
        assert_eq!(show(b"42", Form::Json).form, "JSON");
        assert_eq!(show(b"hello", Form::Auto).inline, "\"hello\"");
        assert_eq!(show(&[0xff, 0x00], Form::Auto).inline, "ff00");
        // Forced forms fall back when the bytes are not that.
        assert_eq!(show(&[0xff], Form::Text).form, "hex");
        assert_eq!(show(b"hello", Form::Json).form, "text");
        assert_eq!(show(br#"{"a":1}"#, Form::Hex).inline, "7b2261223a317d");
        assert_eq!(show(br#"{"a":1}"#, Form::Text).inline, r#""{\"a\":1}""#);
        assert_eq!(show(b"", Form::Auto).form, "text");
    }

    #[test]
    fn control_characters_are_escaped_in_every_form() {
        let t = show(b"a\x1b[31mb\n\xe2\x80\xae", Form::Auto);
        assert_eq!(t.form, "text");
        assert!(!t.inline.chars().any(|c| c.is_control() || c == '\u{202e}'), "{t:?}");
        // Raw U+202E and U+0085 are valid in JSON strings; a raw ESC is not.
        let j = show("{\"k\":\"\u{202e}x\\u001b\u{85}\"}".as_bytes(), Form::Auto);
        assert_eq!(j.form, "JSON");
        assert_eq!(j.inline, r#"{"k":"\u202ex\u001b\u0085"}"#);
        for l in j.pretty.iter().chain([&j.inline]) {
            assert!(!l.chars().any(|c| c.is_control() || c == '\u{202e}'), "{l:?}");
        }
        assert!(!copy(b"\x1b]52;c;x\x07", Form::Text).contains('\x1b'));
    }

    #[test]
    fn long_values_are_cut() {
        let big = vec![b'x'; 10_000];
        assert_eq!(show(&big, Form::Auto).inline.chars().count(), INLINE_MAX + 2);
        assert!(show(&big, Form::Hex).inline.ends_with('…'));
        let arr = format!("[{}]", vec!["1"; 1000].join(","));
        let p = show(arr.as_bytes(), Form::Auto).pretty;
        assert_eq!(p.len(), PRETTY_MAX + 1);
        assert_eq!(p.last().map(String::as_str), Some("… 802 more lines"));
        assert_eq!(copy(&[0xff, 2], Form::Auto), "ff02");
        // Control characters are UTF-8: text, escaped.
        assert_eq!(copy(&[1, 2], Form::Auto), "\\x01\\x02");
    }
}
