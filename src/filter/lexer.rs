//! Tokens of the filter language, with byte spans into the filter text.
//!
//! nom recognises operators and words; strings are scanned by hand so that a
//! bad escape can be pointed at exactly.

use super::error::FilterError;
use nom::Parser;
use nom::branch::alt;
use nom::bytes::complete::tag;
use nom::combinator::value;
use std::ops::Range;

#[derive(Clone, Debug, PartialEq)]
pub enum Tok {
    LParen,
    RParen,
    LBrace,
    RBrace,
    Comma,
    DotDot,
    /// `==` (also `=`, today's `corr=7` form).
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    /// `~`, a synonym for `matches`.
    Tilde,
    AndAnd,
    OrOr,
    Bang,
    /// Anything else up to white space or an operator character: field names,
    /// keywords, numbers, addresses, API and error names, free text.
    Word(String),
    /// A quoted string with its escapes resolved.
    Str(String),
}

#[derive(Clone, Debug, PartialEq)]
pub struct Token {
    pub tok: Tok,
    pub span: Range<usize>,
}

/// Characters that end a word.
fn ends_word(c: char) -> bool {
    c.is_whitespace() || "()!{},=<>&|~\"'".contains(c)
}

fn operator(i: &str) -> nom::IResult<&str, Tok> {
    alt((
        value(Tok::Eq, tag("==")),
        value(Tok::Ne, tag("!=")),
        value(Tok::Le, tag("<=")),
        value(Tok::Ge, tag(">=")),
        value(Tok::AndAnd, tag("&&")),
        value(Tok::OrOr, tag("||")),
        value(Tok::DotDot, tag("..")),
        value(Tok::Eq, tag("=")),
        value(Tok::Lt, tag("<")),
        value(Tok::Gt, tag(">")),
        value(Tok::Bang, tag("!")),
        value(Tok::Tilde, tag("~")),
        value(Tok::LParen, tag("(")),
        value(Tok::RParen, tag(")")),
        value(Tok::LBrace, tag("{")),
        value(Tok::RBrace, tag("}")),
        value(Tok::Comma, tag(",")),
    ))
    .parse(i)
}

/// A word: stops at white space, an operator character, or `..` (so `1..5` is a range).
fn word(i: &str) -> nom::IResult<&str, &str> {
    let mut end = 0;
    let mut chars = i.char_indices().peekable();
    while let Some((at, c)) = chars.next() {
        if ends_word(c) || (c == '.' && chars.peek().is_some_and(|&(_, n)| n == '.')) {
            break;
        }
        end = at + c.len_utf8();
    }
    if end == 0 {
        return Err(nom::Err::Error(nom::error::Error::new(
            i,
            nom::error::ErrorKind::TakeWhile1,
        )));
    }
    Ok((i.get(end..).unwrap_or(""), i.get(..end).unwrap_or("")))
}

/// Splits `src` into tokens.
pub fn lex(src: &str) -> Result<Vec<Token>, FilterError> {
    let mut out = Vec::new();
    let mut rest = src;
    loop {
        rest = rest.trim_start();
        let at = src.len() - rest.len();
        let Some(first) = rest.chars().next() else {
            return Ok(out);
        };
        if first == '"' || first == '\'' {
            let (s, len) = string(src, at, first)?;
            out.push(Token {
                tok: Tok::Str(s),
                span: at..at + len,
            });
            rest = rest.get(len..).unwrap_or("");
            continue;
        }
        if let Ok((r, tok)) = operator(rest) {
            out.push(Token {
                tok,
                span: at..src.len() - r.len(),
            });
            rest = r;
            continue;
        }
        if let Ok((r, w)) = word(rest) {
            out.push(Token {
                tok: Tok::Word(w.to_string()),
                span: at..at + w.len(),
            });
            rest = r;
            continue;
        }
        // Only a lone `&` or `|` is left: every other character starts a token.
        let (msg, hint) = if first == '&' {
            ("a single \"&\" is not an operator", "write && or and")
        } else {
            ("a single \"|\" is not an operator", "write || or or")
        };
        return Err(FilterError::new(src, at..at + 1, msg, hint));
    }
}

/// A string starting at byte `at` (its opening quote): the value and the length in bytes.
fn string(src: &str, at: usize, quote: char) -> Result<(String, usize), FilterError> {
    let body = src.get(at + 1..).unwrap_or("");
    let mut out = String::new();
    let mut chars = body.char_indices();
    let bad_escape = |from: usize, to: usize| {
        FilterError::new(
            src,
            at + 1 + from..at + 1 + to,
            "unknown escape in a string",
            "escapes are \\\\, \\\", \\', \\n, \\r, \\t, \\0, \\xHH and \\u{HHHH}",
        )
    };
    while let Some((i, c)) = chars.next() {
        if c == quote {
            return Ok((out, i + 2));
        }
        if c != '\\' {
            out.push(c);
            continue;
        }
        let Some((j, e)) = chars.next() else { break };
        match e {
            '\\' | '"' | '\'' => out.push(e),
            'n' => out.push('\n'),
            'r' => out.push('\r'),
            't' => out.push('\t'),
            '0' => out.push('\0'),
            'x' => {
                let hex: String = chars.by_ref().take(2).map(|(_, c)| c).collect();
                match u8::from_str_radix(&hex, 16) {
                    Ok(b) if hex.len() == 2 && b < 0x80 => out.push(char::from(b)),
                    _ => return Err(bad_escape(i, j + 1 + hex.len())),
                }
            }
            'u' => {
                let mut end = j + 1;
                let mut hex = String::new();
                let mut closed = false;
                if body.get(j + 1..).is_some_and(|r| r.starts_with('{')) {
                    chars.next();
                    end += 1;
                    for (k, c) in chars.by_ref() {
                        end = k + c.len_utf8();
                        if c == '}' {
                            closed = true;
                            break;
                        }
                        hex.push(c);
                    }
                }
                match u32::from_str_radix(&hex, 16).ok().and_then(char::from_u32) {
                    Some(c) if closed && hex.len() <= 6 => out.push(c),
                    _ => return Err(bad_escape(i, end)),
                }
            }
            _ => return Err(bad_escape(i, j + e.len_utf8())),
        }
    }
    Err(FilterError::new(
        src,
        at..at + 1,
        "this string is not closed",
        &format!("end it with {quote}"),
    ))
}
