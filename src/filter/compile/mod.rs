//! Resolves field names against the catalogue and type-checks literals, once.

use super::error::FilterError;
use super::parser::{Expr, Item, Lit, Name, Op};
use super::{BodyPath, Catalogue, FieldType, Flag, Header, Subject, Value};
use regex::{Regex, RegexBuilder};
use std::net::IpAddr;
use std::ops::{ControlFlow, Range};

mod literal;
mod resolve;

/// What a field holds, as far as literals are concerned.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Ty {
    /// An integer; `names` says which words stand for numbers.
    Int(Names),
    Float,
    Bool,
    Text(TextKind),
    Bytes,
    Uuid,
    Ip,
    Struct,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Names {
    None,
    /// API names (`Vote`) stand for their keys.
    Api,
    /// Error names (`NOT_COORDINATOR`) stand for their codes.
    Error,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum TextKind {
    Free,
    /// Only these values occur (`kind`, `version_source`, `tls`).
    OneOf(&'static [&'static str]),
    /// An API name: an unquoted name in any spelling means Kafka's spelling.
    ApiName,
}

impl Ty {
    fn describe(self) -> String {
        match self {
            Ty::Int(_) => "an integer".into(),
            Ty::Float => "a number".into(),
            Ty::Bool => "a bool".into(),
            Ty::Text(TextKind::OneOf(v)) => format!("one of {}", v.join(", ")),
            Ty::Text(_) => "text".into(),
            Ty::Bytes => "bytes".into(),
            Ty::Uuid => "a uuid".into(),
            Ty::Ip => "an IP address".into(),
            Ty::Struct => "a struct (or a list of structs)".into(),
        }
    }

    fn textual(self) -> bool {
        matches!(self, Ty::Text(_) | Ty::Bytes | Ty::Uuid)
    }

    fn ordered(self) -> bool {
        !matches!(self, Ty::Bool | Ty::Struct)
    }
}

fn header_ty(h: Header) -> Ty {
    match h {
        Header::Frame
        | Header::ApiVersion
        | Header::CorrelationId
        | Header::Size
        | Header::RequestFrame
        | Header::LatencyUs
        | Header::SrcPort
        | Header::DstPort => Ty::Int(Names::None),
        Header::ApiKey => Ty::Int(Names::Api),
        Header::Ts => Ty::Float,
        Header::Src | Header::Dst | Header::ClientId => Ty::Text(TextKind::Free),
        Header::ApiName => Ty::Text(TextKind::ApiName),
        Header::Kind => Ty::Text(TextKind::OneOf(&["request", "response"])),
        Header::VersionSource => Ty::Text(TextKind::OneOf(&["header", "request", "inferred"])),
        Header::Tls => Ty::Text(TextKind::OneOf(&["TLSv1.2", "TLSv1.3"])),
        Header::SrcIp | Header::DstIp => Ty::Ip,
    }
}

/// Names that stand for header fields besides the NDJSON keys.
const HEADER_ALIASES: [(&str, Header); 5] = [
    ("api", Header::ApiKey),
    ("kafka.api_key", Header::ApiKey),
    ("kafka.api_version", Header::ApiVersion),
    ("kafka.correlation_id", Header::CorrelationId),
    ("kafka.client_id", Header::ClientId),
];

/// Today's `-Y` spellings, accepted before an operator (`corr=7`, `v=2`).
const LEGACY: [(&str, Header); 3] = [
    ("corr", Header::CorrelationId),
    ("v", Header::ApiVersion),
    ("version", Header::ApiVersion),
];

/// Wireshark's `kafka.` names for body fields: the schema field names they stand for,
/// at any depth, and the type they must have.
const BODY_ALIASES: [(&str, &[&[&str]], FieldType); 3] = [
    ("kafka.error", &[&["ErrorCode"]], FieldType::Int),
    (
        "kafka.topic_name",
        &[&["TopicName"], &["Topics", "Name"], &["Topics", "Topic"]],
        FieldType::Text,
    ),
    (
        "kafka.partition_id",
        &[&["PartitionIndex"], &["Partition"], &["PartitionId"]],
        FieldType::Int,
    ),
];

#[derive(Clone, Debug, PartialEq)]
pub(super) enum Source {
    Header(Header),
    Body(BodyPath),
}

/// A resolved field: where its occurrences come from and what they hold.
#[derive(Clone, Debug)]
pub struct Field {
    name: String,
    pub(super) sources: Vec<Source>,
    pub(super) types: Vec<Ty>,
}

impl Field {
    /// Resolves a field name as `-e` takes it (`--format fields`).
    pub fn new(name: &str, cat: &Catalogue) -> Result<Field, FilterError> {
        let n = Name {
            text: name.trim().to_string(),
            span: 0..name.trim().len(),
        };
        let c = Compiler::new(name.trim(), cat);
        c.lookup(&n, false)
            .ok_or_else(|| c.unknown_field(&n, "-e takes a field name as -Y does"))
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn body_paths(&self) -> impl Iterator<Item = &BodyPath> {
        self.sources.iter().filter_map(|s| match s {
            Source::Body(p) => Some(p),
            Source::Header(_) => None,
        })
    }

    /// Calls `each` with every occurrence in `s`, until it breaks.
    pub fn each(&self, s: &dyn Subject, each: &mut dyn FnMut(Value<'_>) -> ControlFlow<()>) {
        for src in &self.sources {
            match src {
                Source::Header(h) => {
                    if let Some(v) = s.header(*h) {
                        if each(v).is_break() {
                            return;
                        }
                    }
                }
                Source::Body(p) => {
                    let mut stopped = false;
                    s.body(p, &mut |v| {
                        let r = each(v);
                        stopped = r.is_break();
                        r
                    });
                    if stopped {
                        return;
                    }
                }
            }
        }
    }

    fn describe(&self) -> String {
        let mut d: Vec<String> = Vec::new();
        for t in &self.types {
            let s = t.describe();
            if !d.contains(&s) {
                d.push(s);
            }
        }
        d.join(" or ")
    }
}

/// A literal read for every type of the field it meets.
#[derive(Clone, Debug, Default)]
pub(super) struct CLit {
    pub int: Option<i64>,
    pub float: Option<f64>,
    pub bool: Option<bool>,
    pub text: Option<String>,
    pub bytes: Option<Vec<u8>>,
    pub uuid: Option<[u8; 16]>,
    /// An address and prefix length (a plain address has the full length).
    pub net: Option<(IpAddr, u8)>,
}

#[derive(Clone, Debug)]
pub(super) enum CItem {
    One(CLit),
    Range(CLit, CLit),
}

#[derive(Clone, Debug)]
pub(super) enum Node {
    And(Box<Node>, Box<Node>),
    Or(Box<Node>, Box<Node>),
    Not(Box<Node>),
    Flag(Flag),
    /// Free text, lower-cased.
    Text(String),
    Present(Field),
    Cmp(Field, Op, CLit),
    Matches(Field, Box<Regex>),
    In(Field, Vec<CItem>),
}

pub(super) struct Compiler<'a> {
    src: &'a str,
    cat: &'a Catalogue,
    pub paths: Vec<BodyPath>,
    pub needs_decode: bool,
    pub needs_summary: bool,
    /// The `error` shorthand: every error code in the body is read.
    pub needs_errors: bool,
}

fn is_ident(s: &str) -> bool {
    let mut c = s.chars();
    c.next()
        .is_some_and(|f| f.is_ascii_alphabetic() || f == '_')
        && c.all(|x| x.is_ascii_alphanumeric() || x == '_')
}

/// Shaped like a field path: identifiers joined by dots.
fn looks_like_path(s: &str) -> bool {
    s.contains('.') && s.split('.').all(is_ident)
}

impl<'a> Compiler<'a> {
    pub fn new(src: &'a str, cat: &'a Catalogue) -> Self {
        Compiler {
            src,
            cat,
            paths: Vec::new(),
            needs_decode: false,
            needs_summary: false,
            needs_errors: false,
        }
    }

    fn err(&self, span: Range<usize>, msg: &str, hint: &str) -> FilterError {
        FilterError::new(self.src, span, msg, hint)
    }

    pub fn expr(&mut self, e: &Expr) -> Result<Node, FilterError> {
        Ok(match e {
            Expr::Or(a, b) => Node::Or(Box::new(self.expr(a)?), Box::new(self.expr(b)?)),
            Expr::And(a, b) => Node::And(Box::new(self.expr(a)?), Box::new(self.expr(b)?)),
            Expr::Not(a) => Node::Not(Box::new(self.expr(a)?)),
            Expr::Text(l) => self.text(&l.text),
            Expr::Word(n) => self.word(n)?,
            Expr::Cmp {
                field,
                op,
                op_span,
                lit,
            } => self.cmp(field, *op, op_span, lit)?,
            Expr::In {
                field,
                op_span,
                items,
            } => self.set(field, op_span, items)?,
        })
    }

    fn text(&mut self, t: &str) -> Node {
        self.needs_summary = true;
        Node::Text(t.to_lowercase())
    }

    fn header_is(&self, h: Header, text: &str) -> Node {
        let f = self.header_field(h.name(), h);
        Node::Cmp(
            f,
            Op::Eq,
            CLit {
                text: Some(text.to_string()),
                ..CLit::default()
            },
        )
    }

    fn api_is(&self, key: i16) -> Node {
        let f = self.header_field("api", Header::ApiKey);
        Node::Cmp(
            f,
            Op::Eq,
            CLit {
                int: Some(key.into()),
                float: Some(key.into()),
                ..CLit::default()
            },
        )
    }

    fn flag(&mut self, f: Flag) -> Node {
        self.needs_decode = true;
        self.needs_errors |= f == Flag::Error;
        Node::Flag(f)
    }

    /// A word alone: shorthand, API name, field, or free text.
    fn word(&mut self, n: &Name) -> Result<Node, FilterError> {
        Ok(match n.text.as_str() {
            "request" | "requests" => self.header_is(Header::Kind, "request"),
            "response" | "responses" => self.header_is(Header::Kind, "response"),
            "error" | "errors" => self.flag(Flag::Error),
            "warn" | "warning" | "warnings" => self.flag(Flag::Warn),
            "malformed" => self.flag(Flag::Malformed),
            w => {
                if let Some((key, _)) = self.cat.api(w) {
                    self.api_is(key)
                } else if let Some(f) = self.lookup(n, false) {
                    self.note_paths(&f);
                    Node::Present(f)
                } else if looks_like_path(w) {
                    return Err(self.unknown_field(
                        n,
                        &format!("to search the summary text instead, quote it: \"{w}\""),
                    ));
                } else {
                    self.text(w)
                }
            }
        })
    }

    fn note_paths(&mut self, f: &Field) {
        for p in f.body_paths() {
            if !self.paths.contains(p) {
                self.paths.push(p.clone());
            }
        }
    }
}

fn body_ty(t: FieldType, last: &str) -> Ty {
    match t {
        FieldType::Int if last.ends_with("ErrorCode") => Ty::Int(Names::Error),
        FieldType::Int => Ty::Int(Names::None),
        FieldType::Float => Ty::Float,
        FieldType::Bool => Ty::Bool,
        FieldType::Text => Ty::Text(TextKind::Free),
        FieldType::Bytes => Ty::Bytes,
        FieldType::Uuid => Ty::Uuid,
        FieldType::Struct => Ty::Struct,
    }
}

/// `did you mean X?` when a candidate is close, else `otherwise`.
fn nearest<'n>(word: &str, candidates: impl Iterator<Item = &'n str>, otherwise: &str) -> String {
    let w = word.to_lowercase();
    let limit = (word.chars().count() / 3).max(2);
    candidates
        .map(|c| {
            let l = c.to_lowercase();
            // A prefix (`req` for `request`) is as good as a one-letter slip.
            let d = if l.starts_with(&w) {
                1
            } else {
                strsim::levenshtein(&l, &w)
            };
            (d, c)
        })
        .filter(|(d, _)| *d <= limit)
        .min_by_key(|(d, _)| *d)
        .map_or_else(
            || otherwise.to_string(),
            |(_, c)| format!("did you mean {c}?"),
        )
}

/// Decimal or `0x` hex, with an optional sign.
pub(super) fn parse_int(s: &str) -> Option<i64> {
    let (neg, digits) = match s.strip_prefix('-') {
        Some(d) => (true, d),
        None => (false, s.strip_prefix('+').unwrap_or(s)),
    };
    let v = match digits
        .strip_prefix("0x")
        .or_else(|| digits.strip_prefix("0X"))
    {
        Some(h) if !h.is_empty() && h.chars().all(|c| c.is_ascii_hexdigit()) => {
            i128::from_str_radix(h, 16).ok()?
        }
        Some(_) => return None,
        None if !digits.is_empty() && digits.chars().all(|c| c.is_ascii_digit()) => {
            digits.parse::<i128>().ok()?
        }
        None => return None,
    };
    i64::try_from(if neg { -v } else { v }).ok()
}

fn parse_float(s: &str) -> Option<f64> {
    let ok = s.chars().any(|c| c.is_ascii_digit())
        && s.chars()
            .all(|c| c.is_ascii_digit() || matches!(c, '.' | '-' | '+' | 'e' | 'E'));
    s.parse::<f64>().ok().filter(|x| ok && x.is_finite())
}

/// `0102ff`, `01:02:ff`, `01-02-ff` or `01.02.ff`.
fn parse_hex(s: &str) -> Option<Vec<u8>> {
    let digits: String = if s.contains([':', '-', '.']) {
        let parts: Vec<&str> = s.split([':', '-', '.']).collect();
        if parts.iter().any(|p| p.len() != 2) {
            return None;
        }
        parts.concat()
    } else {
        s.to_string()
    };
    if digits.is_empty() || digits.len() % 2 != 0 {
        return None;
    }
    (0..digits.len())
        .step_by(2)
        .map(|i| {
            digits
                .get(i..i + 2)
                .and_then(|h| u8::from_str_radix(h, 16).ok())
        })
        .collect()
}

fn full_bits(a: IpAddr) -> u8 {
    if a.is_ipv4() { 32 } else { 128 }
}

/// An address, or an address with a prefix length.
fn parse_net(s: &str) -> Option<(IpAddr, u8)> {
    let s = s.trim_start_matches('[').trim_end_matches(']');
    match s.split_once('/') {
        None => s.parse::<IpAddr>().ok().map(|a| (a, full_bits(a))),
        Some((a, bits)) => {
            let a: IpAddr = a.parse().ok()?;
            let bits: u8 = bits.parse().ok()?;
            (bits <= full_bits(a)).then_some((a, bits))
        }
    }
}
