//! The syntax tree and a recursive-descent parser over the tokens.
//!
//! Precedence, loosest first: `or`/`||`; `and`/`&&` (two terms side by side
//! are joined by `and` too, as in today's `-Y vote response`); `not`/`!`;
//! then a test: a comparison, a bare word, a quoted string, or parentheses.
//! `and` and `or` group to the left.

use super::error::FilterError;
use super::lexer::{Tok, Token};
use std::fmt;
use std::ops::Range;

/// A word as written, with its place in the filter.
#[derive(Clone, Debug, PartialEq)]
pub struct Name {
    pub text: String,
    pub span: Range<usize>,
}

/// A literal as written (quoted or not); its meaning depends on the field it meets.
#[derive(Clone, Debug, PartialEq)]
pub struct Lit {
    pub text: String,
    pub quoted: bool,
    pub span: Range<usize>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    Contains,
    Matches,
}

impl Op {
    pub fn as_str(self) -> &'static str {
        match self {
            Op::Eq => "==",
            Op::Ne => "!=",
            Op::Lt => "<",
            Op::Le => "<=",
            Op::Gt => ">",
            Op::Ge => ">=",
            Op::Contains => "contains",
            Op::Matches => "matches",
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum Item {
    One(Lit),
    /// Both ends included.
    Range(Lit, Lit),
}

#[derive(Clone, Debug, PartialEq)]
pub enum Expr {
    Or(Box<Expr>, Box<Expr>),
    And(Box<Expr>, Box<Expr>),
    Not(Box<Expr>),
    /// A word alone: a shorthand, an API name, a field (presence), or free text.
    Word(Name),
    /// A quoted string alone: free text.
    Text(Lit),
    Cmp {
        field: Name,
        op: Op,
        op_span: Range<usize>,
        lit: Lit,
    },
    In {
        field: Name,
        op_span: Range<usize>,
        items: Vec<Item>,
    },
}

/// Fully parenthesised, for tests: `(and a (or b c))`.
impl fmt::Display for Expr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let lit = |l: &Lit| {
            if l.quoted {
                format!("{:?}", l.text)
            } else {
                l.text.clone()
            }
        };
        match self {
            Expr::Or(a, b) => write!(f, "(or {a} {b})"),
            Expr::And(a, b) => write!(f, "(and {a} {b})"),
            Expr::Not(a) => write!(f, "(not {a})"),
            Expr::Word(n) => f.write_str(&n.text),
            Expr::Text(l) => write!(f, "(text {})", lit(l)),
            Expr::Cmp {
                field, op, lit: l, ..
            } => {
                write!(f, "({} {} {})", op.as_str(), field.text, lit(l))
            }
            Expr::In { field, items, .. } => {
                write!(f, "(in {}", field.text)?;
                for i in items {
                    match i {
                        Item::One(l) => write!(f, " {}", lit(l))?,
                        Item::Range(a, b) => write!(f, " {}..{}", lit(a), lit(b))?,
                    }
                }
                f.write_str(")")
            }
        }
    }
}

const KEYWORDS: [&str; 6] = ["and", "or", "not", "in", "contains", "matches"];

struct Parser<'s> {
    src: &'s str,
    toks: Vec<Token>,
    pos: usize,
}

/// Parses a filter; `Ok(None)` for an empty one.
pub fn parse(src: &str) -> Result<Option<Expr>, FilterError> {
    let toks = super::lexer::lex(src)?;
    if toks.is_empty() {
        return Ok(None);
    }
    let mut p = Parser { src, toks, pos: 0 };
    let e = p.or()?;
    match p.peek() {
        None => Ok(Some(e)),
        Some(t) if t.tok == Tok::RParen => Err(p.err(
            t.span.clone(),
            "this \")\" has no \"(\"",
            "remove it, or add \"(\" where the group starts",
        )),
        Some(t) => Err(p.err(
            t.span.clone(),
            &format!("{} cannot follow a complete test here", describe(&t.tok)),
            "join tests with and, or, && or ||; a comparison is FIELD OP VALUE",
        )),
    }
}

fn describe(t: &Tok) -> String {
    match t {
        Tok::Word(w) => format!("{w:?}"),
        Tok::Str(s) => format!("the string {s:?}"),
        other => format!("{:?}", token_text(other)),
    }
}

fn token_text(t: &Tok) -> &'static str {
    match t {
        Tok::LParen => "(",
        Tok::RParen => ")",
        Tok::LBrace => "{",
        Tok::RBrace => "}",
        Tok::Comma => ",",
        Tok::DotDot => "..",
        Tok::Eq => "==",
        Tok::Ne => "!=",
        Tok::Lt => "<",
        Tok::Le => "<=",
        Tok::Gt => ">",
        Tok::Ge => ">=",
        Tok::Tilde => "~",
        Tok::AndAnd => "&&",
        Tok::OrOr => "||",
        Tok::Bang => "!",
        Tok::Word(_) | Tok::Str(_) => "",
    }
}

fn is_word(t: &Tok, w: &str) -> bool {
    matches!(t, Tok::Word(x) if x == w)
}

impl Parser<'_> {
    fn peek(&self) -> Option<&Token> {
        self.toks.get(self.pos)
    }

    fn next(&mut self) -> Option<Token> {
        let t = self.toks.get(self.pos).cloned();
        self.pos += 1;
        t
    }

    fn end_span(&self) -> Range<usize> {
        self.src.len()..self.src.len()
    }

    fn err(&self, span: Range<usize>, msg: &str, hint: &str) -> FilterError {
        FilterError::new(self.src, span, msg, hint)
    }

    fn or(&mut self) -> Result<Expr, FilterError> {
        let mut left = self.and()?;
        while let Some(t) = self.peek() {
            if t.tok == Tok::OrOr || is_word(&t.tok, "or") {
                self.pos += 1;
                let right = self.and()?;
                left = Expr::Or(Box::new(left), Box::new(right));
            } else {
                break;
            }
        }
        Ok(left)
    }

    fn and(&mut self) -> Result<Expr, FilterError> {
        let mut left = self.unary()?;
        while let Some(t) = self.peek() {
            let explicit = t.tok == Tok::AndAnd || is_word(&t.tok, "and");
            let starts_test = match &t.tok {
                Tok::Word(w) => !matches!(w.as_str(), "or" | "in" | "contains" | "matches"),
                Tok::Str(_) | Tok::LParen | Tok::Bang => true,
                _ => false,
            };
            if explicit {
                self.pos += 1;
            } else if !starts_test {
                break;
            }
            let right = self.unary()?;
            left = Expr::And(Box::new(left), Box::new(right));
        }
        Ok(left)
    }

    fn unary(&mut self) -> Result<Expr, FilterError> {
        match self.peek() {
            Some(t) if t.tok == Tok::Bang || is_word(&t.tok, "not") => {
                self.pos += 1;
                Ok(Expr::Not(Box::new(self.unary()?)))
            }
            _ => self.primary(),
        }
    }

    fn primary(&mut self) -> Result<Expr, FilterError> {
        let Some(t) = self.next() else {
            let what = match self.toks.get(self.pos.wrapping_sub(2)) {
                Some(prev) => format!("the filter ends after {}", describe(&prev.tok)),
                None => "the filter ends too early".to_string(),
            };
            return Err(self.err(
                self.end_span(),
                &what,
                "finish it with a test, e.g. latency_us > 10000 or ErrorCode",
            ));
        };
        match t.tok {
            Tok::LParen => {
                let e = self.or()?;
                match self.next() {
                    Some(c) if c.tok == Tok::RParen => Ok(e),
                    Some(c) => Err(self.err(
                        c.span,
                        &format!("expected \")\", found {}", describe(&c.tok)),
                        "close the group that starts at the \"(\" before it",
                    )),
                    None => Err(self.err(
                        t.span,
                        "this \"(\" is not closed",
                        "add \")\" at the end of the group",
                    )),
                }
            }
            Tok::Str(s) => {
                let lit = Lit {
                    text: s,
                    quoted: true,
                    span: t.span.clone(),
                };
                if let Some(op) = self.peek().filter(|n| comparison(&n.tok).is_some()) {
                    return Err(self.err(
                        op.span.clone(),
                        "a comparison needs a field on its left, not a string",
                        "write FIELD OP VALUE, e.g. client_id == \"app\"",
                    ));
                }
                Ok(Expr::Text(lit))
            }
            Tok::Word(w) => {
                if KEYWORDS.contains(&w.as_str()) {
                    return Err(self.err(
                        t.span,
                        &format!("expected a test, found the keyword {w:?}"),
                        "a test is a field, a comparison, a shorthand such as vote or error, or text; quote text that is a keyword",
                    ));
                }
                let field = Name {
                    text: w,
                    span: t.span,
                };
                self.after_field(field)
            }
            other => Err(self.err(
                t.span,
                &format!("expected a test, found {}", describe(&other)),
                if matches!(
                    other,
                    Tok::Eq | Tok::Ne | Tok::Lt | Tok::Le | Tok::Gt | Tok::Ge
                ) {
                    "a comparison starts with the field, e.g. api_version >= 2"
                } else {
                    "a test is a field, a comparison, a shorthand such as vote or error, or text"
                },
            )),
        }
    }

    /// A field name was read: a comparison follows, or it stands alone.
    fn after_field(&mut self, field: Name) -> Result<Expr, FilterError> {
        let Some(t) = self.peek().cloned() else {
            return Ok(Expr::Word(field));
        };
        if is_word(&t.tok, "in") {
            self.pos += 1;
            let items = self.set(&t)?;
            return Ok(Expr::In {
                field,
                op_span: t.span,
                items,
            });
        }
        let Some(op) = comparison(&t.tok) else {
            return Ok(Expr::Word(field));
        };
        self.pos += 1;
        let lit = self.value(&t)?;
        Ok(Expr::Cmp {
            field,
            op,
            op_span: t.span,
            lit,
        })
    }

    /// The value after operator `op`.
    fn value(&mut self, op: &Token) -> Result<Lit, FilterError> {
        let shown = match &op.tok {
            Tok::Word(w) => w.clone(),
            other => token_text(other).to_string(),
        };
        match self.next() {
            Some(Token {
                tok: Tok::Word(w),
                span,
            }) if !KEYWORDS.contains(&w.as_str()) => Ok(Lit {
                text: w,
                quoted: false,
                span,
            }),
            Some(Token {
                tok: Tok::Str(s),
                span,
            }) => Ok(Lit {
                text: s,
                quoted: true,
                span,
            }),
            Some(t) => Err(self.err(
                t.span,
                &format!("expected a value after {shown:?}, found {}", describe(&t.tok)),
                "a value is a number, a quoted string, true or false, an address, or an API or error name",
            )),
            None => Err(self.err(
                self.end_span(),
                &format!("expected a value after {shown:?}"),
                "a value is a number, a quoted string, true or false, an address, or an API or error name",
            )),
        }
    }

    /// After `in`: `{a, b, c..d}` (commas optional), or one value (`src.ip in 10.0.0.0/8`).
    fn set(&mut self, in_tok: &Token) -> Result<Vec<Item>, FilterError> {
        let brace = match self.peek() {
            Some(t) if t.tok == Tok::LBrace => t.clone(),
            _ => return Ok(vec![self.item(in_tok)?]),
        };
        self.pos += 1;
        let mut items = Vec::new();
        loop {
            match self.peek() {
                Some(t) if t.tok == Tok::RBrace => {
                    let span = t.span.clone();
                    self.pos += 1;
                    if items.is_empty() {
                        return Err(self.err(
                            brace.span.start..span.end,
                            "this set is empty",
                            "list values: in {1, 2, 5..9}",
                        ));
                    }
                    return Ok(items);
                }
                Some(t) if t.tok == Tok::Comma && !items.is_empty() => self.pos += 1,
                None => {
                    return Err(self.err(
                        brace.span,
                        "this \"{\" is not closed",
                        "end the set with \"}\"",
                    ));
                }
                _ => {}
            }
            items.push(self.item(in_tok)?);
        }
    }

    fn item(&mut self, in_tok: &Token) -> Result<Item, FilterError> {
        let lo = self.value(in_tok)?;
        match self.peek() {
            Some(t) if t.tok == Tok::DotDot => {
                let dots = t.clone();
                self.pos += 1;
                Ok(Item::Range(lo, self.value(&dots)?))
            }
            _ => Ok(Item::One(lo)),
        }
    }
}

fn comparison(t: &Tok) -> Option<Op> {
    Some(match t {
        Tok::Eq => Op::Eq,
        Tok::Ne => Op::Ne,
        Tok::Lt => Op::Lt,
        Tok::Le => Op::Le,
        Tok::Gt => Op::Gt,
        Tok::Ge => Op::Ge,
        Tok::Tilde => Op::Matches,
        Tok::Word(w) if w == "contains" => Op::Contains,
        Tok::Word(w) if w == "matches" => Op::Matches,
        _ => return None,
    })
}
