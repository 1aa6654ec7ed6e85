//! Resolves field names against the catalogue and type-checks literals, once.

use super::error::FilterError;
use super::parser::{Expr, Item, Lit, Name, Op};
use super::{BodyPath, Catalogue, FieldType, Flag, Header, Subject, Value};
use regex::{Regex, RegexBuilder};
use std::net::IpAddr;
use std::ops::{ControlFlow, Range};

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

    fn header_field(&self, name: &str, h: Header) -> Field {
        Field {
            name: name.to_string(),
            sources: vec![Source::Header(h)],
            types: vec![header_ty(h)],
        }
    }

    /// Resolves a field name; `legacy` admits today's `corr`/`v` spellings.
    fn lookup(&self, n: &Name, legacy: bool) -> Option<Field> {
        let name = n.text.as_str();
        if let Some(h) = Header::by_name(name) {
            return Some(self.header_field(name, h));
        }
        let alias = HEADER_ALIASES
            .iter()
            .chain(LEGACY.iter().filter(|_| legacy))
            .find(|(a, _)| *a == name);
        if let Some((_, h)) = alias {
            return Some(self.header_field(name, *h));
        }
        if let Some((_, paths, ty)) = BODY_ALIASES.iter().find(|(a, _, _)| *a == name) {
            let mut f = Field {
                name: name.to_string(),
                sources: Vec::new(),
                types: Vec::new(),
            };
            for segs in paths.iter() {
                let p = BodyPath {
                    segments: segs.iter().map(|s| s.to_string()).collect(),
                    anchored: false,
                };
                if self.body_types(&p).contains(ty) {
                    f.sources.push(Source::Body(p));
                }
            }
            if f.sources.is_empty() {
                return None;
            }
            let last = paths.first().and_then(|p| p.last()).copied().unwrap_or("");
            f.types.push(body_ty(*ty, last));
            return Some(f);
        }
        if !name.split('.').all(is_ident) {
            return None;
        }
        let p = BodyPath {
            segments: name.split('.').map(str::to_string).collect(),
            anchored: name.contains('.'),
        };
        let types = self.body_types(&p);
        if types.is_empty() {
            return None;
        }
        let last = p.segments.last().map_or("", String::as_str);
        Some(Field {
            name: name.to_string(),
            types: types.iter().map(|t| body_ty(*t, last)).collect(),
            sources: vec![Source::Body(p)],
        })
    }

    /// The types of the catalogue's fields that `p` names.
    fn body_types(&self, p: &BodyPath) -> Vec<FieldType> {
        let mut out = Vec::new();
        for (key, types) in &self.cat.fields {
            let chain: Vec<&str> = key.split('.').collect();
            if p.matches(&chain) {
                for t in types {
                    if !out.contains(t) {
                        out.push(*t);
                    }
                }
            }
        }
        out
    }

    pub fn unknown_field(&self, n: &Name, otherwise: &str) -> FilterError {
        let hint = match self.nearest_field(&n.text) {
            Some(s) => format!("did you mean {s}?"),
            None => format!(
                "fields are the NDJSON keys (frame, api_key, latency_us, …), src.ip, dst.port, api, \
                 kafka.* aliases and the body fields of the loaded schemas; {otherwise}"
            ),
        };
        self.err(
            n.span.clone(),
            &format!("unknown field {:?}", n.text),
            &hint,
        )
    }

    fn nearest_field(&self, name: &str) -> Option<String> {
        let mut names: Vec<String> = Header::ALL.iter().map(|h| h.name().to_string()).collect();
        names.extend(HEADER_ALIASES.iter().map(|(a, _)| a.to_string()));
        names.extend(BODY_ALIASES.iter().map(|(a, _, _)| a.to_string()));
        let dotted = name.contains('.');
        let last = name.rsplit('.').next().unwrap_or(name);
        let mut full = Vec::new();
        for key in self.cat.fields.keys() {
            full.push(key.clone());
            if let Some(l) = key.rsplit('.').next() {
                if !dotted && !names.iter().any(|n| n == l) {
                    names.push(l.to_string());
                }
            }
        }
        if dotted {
            names.extend(full.iter().cloned());
        }
        if let Some(n) = names.iter().find(|n| n.eq_ignore_ascii_case(name)) {
            return Some(n.clone());
        }
        // `Partitions.VoteGranted` for `Topics.Partitions.VoteGranted`.
        let suffix = format!(".{name}");
        if let Some(f) = full
            .iter()
            .filter(|f| f.ends_with(&suffix))
            .min_by_key(|f| f.len())
        {
            return Some(f.clone());
        }
        // The right last name under the wrong parents.
        if dotted {
            let tail = format!(".{last}");
            if let Some(f) = full
                .iter()
                .filter(|f| f.ends_with(&tail) || *f == last)
                .min_by_key(|f| strsim::levenshtein(f, name))
            {
                return Some(f.clone());
            }
        }
        let limit = (name.chars().count() / 4).max(2);
        names
            .iter()
            .map(|n| {
                (
                    strsim::levenshtein(&n.to_lowercase(), &name.to_lowercase()),
                    n,
                )
            })
            .filter(|(d, _)| *d <= limit)
            .min_by_key(|(d, _)| *d)
            .map(|(_, n)| n.clone())
    }

    fn field(&mut self, n: &Name) -> Result<Field, FilterError> {
        let f = self
            .lookup(n, true)
            .ok_or_else(|| self.unknown_field(n, "see docs/contract.md, \"Display filters\""))?;
        self.note_paths(&f);
        Ok(f)
    }

    fn cmp(
        &mut self,
        n: &Name,
        op: Op,
        op_span: &Range<usize>,
        lit: &Lit,
    ) -> Result<Node, FilterError> {
        let f = self.field(n)?;
        // Today's `version_source=none`: the version came from nowhere.
        if f.sources == [Source::Header(Header::VersionSource)]
            && !lit.quoted
            && matches!(lit.text.as_str(), "none" | "null")
            && matches!(op, Op::Eq | Op::Ne)
        {
            let present = Node::Present(f);
            return Ok(if op == Op::Eq {
                Node::Not(Box::new(present))
            } else {
                present
            });
        }
        let fits: Vec<Ty> = f
            .types
            .iter()
            .copied()
            .filter(|t| match op {
                Op::Contains | Op::Matches => t.textual(),
                Op::Lt | Op::Le | Op::Gt | Op::Ge => t.ordered(),
                Op::Eq | Op::Ne => *t != Ty::Struct,
            })
            .collect();
        if fits.is_empty() {
            return Err(self.op_error(&f, op, op_span));
        }
        if op == Op::Matches {
            let re = RegexBuilder::new(&lit.text)
                .size_limit(1 << 20)
                .build()
                .map_err(|e| {
                    let why = e.to_string();
                    let last = why.lines().last().unwrap_or("").trim();
                    let last = last.strip_prefix("error: ").unwrap_or(last).to_string();
                    self.err(
                        lit.span.clone(),
                        &format!("this regular expression does not compile: {last}"),
                        "matches takes the regex crate's syntax; (?i) makes it case-insensitive",
                    )
                })?;
            return Ok(Node::Matches(f, Box::new(re)));
        }
        let c = self.literal(&f, &fits, op, lit)?;
        Ok(Node::Cmp(f, op, c))
    }

    fn set(
        &mut self,
        n: &Name,
        op_span: &Range<usize>,
        items: &[Item],
    ) -> Result<Node, FilterError> {
        let f = self.field(n)?;
        let eq: Vec<Ty> = f
            .types
            .iter()
            .copied()
            .filter(|t| *t != Ty::Struct)
            .collect();
        if eq.is_empty() {
            return Err(self.op_error(&f, Op::Eq, op_span));
        }
        let mut out = Vec::new();
        for i in items {
            out.push(match i {
                Item::One(l) => CItem::One(self.literal(&f, &eq, Op::Eq, l)?),
                Item::Range(a, b) => {
                    let ord: Vec<Ty> = eq.iter().copied().filter(|t| t.ordered()).collect();
                    if ord.is_empty() {
                        return Err(self.err(
                            a.span.start..b.span.end,
                            &format!("a range needs an order, but {} is {}", f.name, f.describe()),
                            "list the values instead: in {true, false}",
                        ));
                    }
                    CItem::Range(
                        self.literal(&f, &ord, Op::Ge, a)?,
                        self.literal(&f, &ord, Op::Le, b)?,
                    )
                }
            });
        }
        Ok(Node::In(f, out))
    }

    fn op_error(&self, f: &Field, op: Op, span: &Range<usize>) -> FilterError {
        let (needs, hint) = match op {
            Op::Contains | Op::Matches => (
                "text or bytes",
                if f.types.iter().any(|t| matches!(t, Ty::Int(_) | Ty::Float)) {
                    format!(
                        "compare numbers with ==, !=, <, <=, >, >= or in {{…}}, e.g. {} == 3",
                        f.name
                    )
                } else {
                    format!("compare with == or !=, e.g. {} == …", f.name)
                },
            ),
            Op::Eq | Op::Ne => (
                "a value",
                format!(
                    "test {} alone for presence, or compare one of its fields{}",
                    f.name,
                    self.children_hint(f)
                ),
            ),
            _ => ("an order", format!("use == or != with {}", f.name)),
        };
        self.err(
            span.clone(),
            &format!(
                "{:?} needs {needs}, but {} is {}",
                op.as_str(),
                f.name,
                f.describe()
            ),
            &hint,
        )
    }

    /// `: Topics.Name, Topics.Partitions` for a struct field.
    fn children_hint(&self, f: &Field) -> String {
        let mut kids: Vec<String> = Vec::new();
        for p in f.body_paths() {
            for key in self.cat.fields.keys() {
                let chain: Vec<&str> = key.split('.').collect();
                if let Some((_, parent)) = chain.split_last() {
                    if p.matches(parent) && kids.len() < 4 {
                        let shown = format!("{}.{}", f.name, chain.last().unwrap_or(&""));
                        if !kids.contains(&shown) {
                            kids.push(shown);
                        }
                    }
                }
            }
        }
        if kids.is_empty() {
            String::new()
        } else {
            format!(", e.g. {}", kids.join(", "))
        }
    }

    /// Reads `lit` for every type in `types`; an error when it fits none.
    fn literal(&self, f: &Field, types: &[Ty], op: Op, lit: &Lit) -> Result<CLit, FilterError> {
        let mut c = CLit::default();
        let mut first_err: Option<(String, String)> = None;
        let mut read = false;
        // Read it for every type that fits: a field may hold several.
        for t in types {
            match self.read_as(*t, op, lit, &mut c) {
                Ok(()) => read = true,
                Err(e) => {
                    first_err.get_or_insert(e);
                }
            }
        }
        if read {
            return Ok(c);
        }
        let (why, hint) = first_err.unwrap_or_default();
        let shown = if lit.quoted {
            format!("{:?}", lit.text)
        } else {
            lit.text.clone()
        };
        Err(self.err(
            lit.span.clone(),
            &format!("{} is {}, but {shown} {why}", f.name, f.describe()),
            &hint,
        ))
    }

    /// Reads `lit` as type `t` into `c`; else (what the literal is not, a hint).
    fn read_as(&self, t: Ty, op: Op, lit: &Lit, c: &mut CLit) -> Result<(), (String, String)> {
        let text = lit.text.as_str();
        let quoted_number = || {
            (
                "is quoted text".to_string(),
                format!("drop the quotes: {text}"),
            )
        };
        match t {
            Ty::Int(names) => {
                if lit.quoted {
                    return Err(quoted_number());
                }
                if let Some(i) = parse_int(text) {
                    c.int = Some(i);
                    c.float = Some(i as f64);
                    return Ok(());
                }
                if let Some(x) = parse_float(text) {
                    c.float = Some(x);
                    return Ok(());
                }
                match names {
                    Names::Api => match self.cat.api(text) {
                        Some((k, _)) => {
                            c.int = Some(k.into());
                            c.float = Some(k.into());
                            Ok(())
                        }
                        None => Err((
                            "is not a number or an API name".into(),
                            nearest(
                                text,
                                self.cat.apis.iter().map(|(_, n)| n.as_str()),
                                "write an API key or Kafka's name for the API, e.g. Vote or 52",
                            ),
                        )),
                    },
                    Names::Error => match self.cat.error_code(text) {
                        Some(code) => {
                            c.int = Some(code.into());
                            c.float = Some(code.into());
                            Ok(())
                        }
                        None => Err((
                            "is not a number or an error name".into(),
                            nearest(
                                text,
                                self.cat.errors.iter().map(|(_, n)| n.as_str()),
                                "write a number (decimal or 0x hex) or an error name such as NOT_COORDINATOR",
                            ),
                        )),
                    },
                    Names::None => Err((
                        "is not a number".into(),
                        "write a decimal or 0x hex integer".into(),
                    )),
                }
            }
            Ty::Float => {
                if lit.quoted {
                    return Err(quoted_number());
                }
                match parse_int(text)
                    .map(|i| i as f64)
                    .or_else(|| parse_float(text))
                {
                    Some(x) => {
                        c.float = Some(x);
                        Ok(())
                    }
                    None => Err((
                        "is not a number".into(),
                        "write a number such as 1764441600.5".into(),
                    )),
                }
            }
            Ty::Bool => {
                let b = match text {
                    "true" | "True" | "TRUE" | "1" if !lit.quoted => true,
                    "false" | "False" | "FALSE" | "0" if !lit.quoted => false,
                    _ => {
                        return Err((
                            "is not true or false".into(),
                            "write true or false; the field alone tests for true".into(),
                        ));
                    }
                };
                c.bool = Some(b);
                Ok(())
            }
            Ty::Text(kind) => {
                let v = match kind {
                    TextKind::ApiName if !lit.quoted => self
                        .cat
                        .api(text)
                        .map_or(text.to_string(), |(_, n)| n.to_string()),
                    TextKind::OneOf(values) if matches!(op, Op::Eq | Op::Ne) => {
                        match values.iter().find(|v| v.eq_ignore_ascii_case(text)) {
                            Some(v) => v.to_string(),
                            None => {
                                return Err((
                                    "is none of them".into(),
                                    nearest(
                                        text,
                                        values.iter().copied(),
                                        &format!("write one of {}", values.join(", ")),
                                    ),
                                ));
                            }
                        }
                    }
                    _ => text.to_string(),
                };
                c.text = Some(v);
                Ok(())
            }
            Ty::Bytes => {
                let b = if lit.quoted {
                    Some(text.as_bytes().to_vec())
                } else {
                    parse_hex(text)
                };
                match b {
                    Some(b) => {
                        c.bytes = Some(b);
                        Ok(())
                    }
                    None => Err((
                        "is neither hex nor a quoted string".into(),
                        "write hex such as 01:02:ff or 0102ff, or a quoted string for its UTF-8 bytes"
                            .into(),
                    )),
                }
            }
            Ty::Uuid => match uuid::Uuid::parse_str(text) {
                Ok(u) => {
                    c.uuid = Some(*u.as_bytes());
                    c.text = Some(u.hyphenated().to_string());
                    Ok(())
                }
                Err(_) if matches!(op, Op::Contains) => {
                    c.text = Some(text.to_lowercase());
                    Ok(())
                }
                Err(_) => Err((
                    "is not a uuid".into(),
                    "write it as xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx".into(),
                )),
            },
            Ty::Ip => {
                let net = parse_net(text);
                match net {
                    Some((a, bits)) if bits == full_bits(a) || matches!(op, Op::Eq | Op::Ne) => {
                        c.net = Some((a, bits));
                        Ok(())
                    }
                    Some(_) => Err((
                        "is a CIDR block, which has no order".into(),
                        "use == or in with a block, e.g. src.ip in 10.0.0.0/8".into(),
                    )),
                    None => Err((
                        "is neither an address nor a CIDR block".into(),
                        "write e.g. 10.0.0.1, 10.0.0.0/8, ::1 or fd00::/8".into(),
                    )),
                }
            }
            Ty::Struct => Err((
                "cannot be compared with it".into(),
                "compare one of its fields".into(),
            )),
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
