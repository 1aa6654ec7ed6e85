//! Display filters in the manner of Wireshark (`-Y`, `/` in the TUI, `stats -Y`)
//! and field extraction for `--format fields`.
//!
//! A filter is parsed ([`parser`]), then compiled against a [`Catalogue`] of
//! the fields the loaded schemas have, so that an unknown field or a literal of
//! the wrong type is an error before any message is read. The compiled
//! [`Filter`] is evaluated against anything that implements [`Subject`]; it
//! says which body paths it needs ([`Filter::body_paths`]) so that the caller
//! decodes no more than that, and nothing of the body for a header-only filter.
//!
//! Semantics (docs/contract.md has the full grammar):
//! - A field's *occurrences* are its values, lists flattened into their
//!   elements, null values left out. A comparison holds when any occurrence
//!   satisfies it (also `!=`); a field without occurrences satisfies none.
//! - A word alone is, in this order: a shorthand (`request`, `response`,
//!   `error`, `warn`, `malformed`), an API name (`vote`, `find-coordinator`),
//!   a field (presence; truth for a bool), or free text, matched
//!   case-insensitively against the summary line. A word shaped like a field
//!   path (`Topics.Name`) that names no field is an error. A quoted string
//!   alone is always free text.
#![cfg_attr(
    not(test),
    deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)
)]

mod catalogue;
mod compile;
mod error;
mod eval;
mod fields;
mod lexer;
pub mod parser;
pub mod record;
pub mod tree;

#[cfg(test)]
mod tests;

pub use compile::Field;
pub use error::FilterError;
pub use fields::Columns;

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::net::IpAddr;
use std::ops::ControlFlow;

/// A header field: the NDJSON keys, plus the address parts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Header {
    Frame,
    Ts,
    Src,
    Dst,
    Kind,
    ApiKey,
    ApiName,
    ApiVersion,
    VersionSource,
    CorrelationId,
    ClientId,
    Size,
    RequestFrame,
    LatencyUs,
    Tls,
    SrcIp,
    SrcPort,
    DstIp,
    DstPort,
}

impl Header {
    pub const ALL: [Header; 19] = [
        Header::Frame,
        Header::Ts,
        Header::Src,
        Header::Dst,
        Header::Kind,
        Header::ApiKey,
        Header::ApiName,
        Header::ApiVersion,
        Header::VersionSource,
        Header::CorrelationId,
        Header::ClientId,
        Header::Size,
        Header::RequestFrame,
        Header::LatencyUs,
        Header::Tls,
        Header::SrcIp,
        Header::SrcPort,
        Header::DstIp,
        Header::DstPort,
    ];

    /// The NDJSON key (or `src.ip` and the like).
    pub fn name(self) -> &'static str {
        match self {
            Header::Frame => "frame",
            Header::Ts => "ts",
            Header::Src => "src",
            Header::Dst => "dst",
            Header::Kind => "kind",
            Header::ApiKey => "api_key",
            Header::ApiName => "api_name",
            Header::ApiVersion => "api_version",
            Header::VersionSource => "version_source",
            Header::CorrelationId => "correlation_id",
            Header::ClientId => "client_id",
            Header::Size => "size",
            Header::RequestFrame => "request_frame",
            Header::LatencyUs => "latency_us",
            Header::Tls => "tls",
            Header::SrcIp => "src.ip",
            Header::SrcPort => "src.port",
            Header::DstIp => "dst.ip",
            Header::DstPort => "dst.port",
        }
    }

    pub fn by_name(name: &str) -> Option<Header> {
        Header::ALL.into_iter().find(|h| h.name() == name)
    }
}

/// One occurrence of a field, as the caller hands it over.
#[derive(Clone, Debug, PartialEq)]
pub enum Value<'a> {
    Int(i64),
    Float(f64),
    Bool(bool),
    Str(Cow<'a, str>),
    Bytes(Cow<'a, [u8]>),
    Uuid([u8; 16]),
    Ip(IpAddr),
    /// A struct (or a list element that is a struct): there, but no value to compare.
    Present,
}

/// A body field: a dotted path from the body's root (`Topics.Partitions.VoteGranted`),
/// or, when not anchored, the same names at any depth (`ErrorCode`, `Topics.Name`).
/// Lists are transparent: the path names fields only, never elements.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct BodyPath {
    pub segments: Vec<String>,
    pub anchored: bool,
}

impl BodyPath {
    /// Whether a field reached by `chain` (field names from the body's root) is this path.
    pub fn matches<S: AsRef<str>>(&self, chain: &[S]) -> bool {
        if self.anchored && chain.len() != self.segments.len() {
            return false;
        }
        chain.len() >= self.segments.len()
            && chain
                .iter()
                .rev()
                .zip(self.segments.iter().rev())
                .all(|(a, b)| a.as_ref() == b)
    }

    /// Whether a field reached by `chain` may lead to this path (so the caller
    /// need not descend where it cannot).
    pub fn may_lead_to<S: AsRef<str>>(&self, chain: &[S]) -> bool {
        !self.anchored
            || (chain.len() < self.segments.len()
                && chain
                    .iter()
                    .zip(&self.segments)
                    .all(|(a, b)| a.as_ref() == b))
    }
}

/// The decoder's form of a body path (the same semantics).
pub(crate) fn need_path(p: &BodyPath) -> crate::codec::NeedPath {
    crate::codec::NeedPath {
        segments: p.segments.clone(),
        anchored: p.anchored,
    }
}

impl std::fmt::Display for BodyPath {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if !self.anchored {
            f.write_str("…")?;
        }
        f.write_str(&self.segments.join("."))
    }
}

/// Facts about a message that shorthands test.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flag {
    /// The message could not be decoded (`malformed`).
    Malformed,
    /// Malformed, or an `…ErrorCode` field that is not 0 (`error`).
    Error,
    /// The message carries warnings (`warn`).
    Warn,
}

/// A message as the filter sees it. Implemented by the caller.
pub trait Subject {
    /// A header field's value; `None` when absent or null.
    fn header(&self, h: Header) -> Option<Value<'_>>;
    /// Calls `each` with every occurrence of `path` (lists flattened, nulls left out),
    /// until it breaks.
    fn body(&self, path: &BodyPath, each: &mut dyn FnMut(Value<'_>) -> ControlFlow<()>);
    fn flag(&self, f: Flag) -> bool;
    /// The summary line, for free text.
    fn summary(&self) -> String;
}

/// What a body field holds, for type checks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FieldType {
    Int,
    Float,
    Bool,
    Text,
    Bytes,
    Uuid,
    /// A struct, or a list of structs.
    Struct,
}

/// The body fields the loaded schemas have, and the API and error names.
#[derive(Clone, Debug, Default)]
pub struct Catalogue {
    /// Dotted path from the body root → the types it has in some message.
    fields: BTreeMap<String, Vec<FieldType>>,
    apis: Vec<(i16, String)>,
    errors: Vec<(i16, String)>,
}

impl Catalogue {
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a body field at `path` (field names from the body's root; for a list
    /// of scalars, the element type).
    pub fn add_field<S: AsRef<str>>(&mut self, path: &[S], ty: FieldType) {
        let key = path
            .iter()
            .map(|s| s.as_ref())
            .collect::<Vec<_>>()
            .join(".");
        let types = self.fields.entry(key).or_default();
        if !types.contains(&ty) {
            types.push(ty);
        }
    }

    pub fn add_api(&mut self, key: i16, name: &str) {
        self.apis.push((key, name.to_string()));
    }

    pub fn add_error(&mut self, code: i16, name: &str) {
        self.errors.push((code, name.to_string()));
    }

    /// An API by Kafka's name, any case, with or without `-`/`_` (`find-coordinator`).
    fn api(&self, name: &str) -> Option<(i16, &str)> {
        let squash = |s: &str| {
            s.chars()
                .filter(|c| *c != '-' && *c != '_')
                .collect::<String>()
                .to_ascii_lowercase()
        };
        let want = squash(name);
        self.apis
            .iter()
            .find(|(_, n)| squash(n) == want)
            .map(|(k, n)| (*k, n.as_str()))
    }

    fn error_code(&self, name: &str) -> Option<i16> {
        self.errors
            .iter()
            .find(|(_, n)| n.eq_ignore_ascii_case(name))
            .map(|(c, _)| *c)
    }
}

/// A compiled display filter. The empty filter matches everything.
#[derive(Clone, Debug, Default)]
pub struct Filter {
    source: String,
    root: Option<compile::Node>,
    paths: Vec<BodyPath>,
    needs_decode: bool,
    needs_summary: bool,
    needs_errors: bool,
}

impl Filter {
    /// Parses and compiles `text` against the fields in `cat`.
    pub fn new(text: &str, cat: &Catalogue) -> Result<Filter, FilterError> {
        let expr = parser::parse(text)?;
        let mut c = compile::Compiler::new(text, cat);
        let root = expr.map(|e| c.expr(&e)).transpose()?;
        Ok(Filter {
            source: text.trim().to_string(),
            root,
            paths: c.paths,
            needs_decode: c.needs_decode,
            needs_summary: c.needs_summary,
            needs_errors: c.needs_errors,
        })
    }

    /// Parses and compiles `text` against the fields of the schemas kwire knows.
    pub fn parse(text: &str) -> Result<Filter, FilterError> {
        Filter::new(text, &record::catalogue())
    }

    pub fn is_empty(&self) -> bool {
        self.root.is_none()
    }

    /// The text the filter was compiled from.
    pub fn as_str(&self) -> &str {
        &self.source
    }

    /// The body paths the filter reads; `Subject::body` is only asked for these.
    pub fn body_paths(&self) -> &[BodyPath] {
        &self.paths
    }

    /// Whether the body must be decoded at all: for body fields, for the
    /// `error`, `warn` and `malformed` shorthands (only decoding tells), and for
    /// free text (the summary line shows decoded fields).
    pub fn needs_body(&self) -> bool {
        !self.paths.is_empty() || self.needs_decode || self.needs_summary
    }

    /// Whether `Subject::summary` will be asked for (free text).
    pub fn needs_summary(&self) -> bool {
        self.needs_summary
    }

    /// What of a body the filter reads: the paths it names, every error code for
    /// `error`, the summary line's fields for free text; nothing for a filter on header
    /// fields, `warn` or `malformed` (the verdict is there whatever is decoded).
    pub fn need(&self) -> crate::codec::Need {
        let mut n = crate::codec::Need::header().with_paths(self.paths.iter().map(need_path));
        if self.needs_errors {
            n = n.with_error_codes();
        }
        if self.needs_summary {
            n = n.union(&crate::apis::summary_need());
        }
        n
    }

    pub fn matches(&self, s: &dyn Subject) -> bool {
        match &self.root {
            None => true,
            Some(n) => eval::Eval::new(s).node(n),
        }
    }
}
