//! Which messages to show, shared by the CLI and the TUI: the `--api` selection and the
//! display filter.
//!
//! Display filters (`-Y`, and `/` in the TUI): whitespace-separated terms that
//! must all match. A term is `request`/`response`, `error`, `warn`,
//! `corr=N`, `frame=N`, `v=N`, `api=NAME|KEY` (or a bare API name),
//! `version_source=header|request|inferred|none`, or free text matched
//! case-insensitively against the summary line. `!term` negates a term.

use crate::codec::{Kind, Role, Value};
use crate::dissect::{Record, VersionSource};
use crate::proto::apis;
use crate::view::summary;

#[derive(Clone, Debug, PartialEq)]
enum Term {
    Kind(Kind),
    Error,
    Warn,
    Corr(i32),
    Frame(u64),
    Version(i16),
    Api(i16),
    Source(Option<VersionSource>),
    Text(String),
}

/// A parsed filter; the empty filter matches everything.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Filter {
    terms: Vec<(bool, Term)>,
    source: String,
}

impl Filter {
    pub fn parse(s: &str) -> Result<Filter, String> {
        let mut terms = Vec::new();
        for word in s.split_whitespace() {
            let (neg, word) = match word.strip_prefix('!') {
                Some(w) => (true, w),
                None => (false, word),
            };
            let num = |v: &str| {
                v.parse::<i64>()
                    .map_err(|_| format!("{word}: not a number"))
            };
            let term = match word.split_once('=') {
                Some(("corr" | "correlation_id", v)) => Term::Corr(num(v)? as i32),
                Some(("frame", v)) => Term::Frame(num(v)? as u64),
                Some(("v" | "version" | "api_version", v)) => Term::Version(num(v)? as i16),
                Some(("kind", "request")) => Term::Kind(Kind::Request),
                Some(("kind", "response")) => Term::Kind(Kind::Response),
                Some(("api" | "api_name" | "api_key", v)) => Term::Api(api_key(v)?),
                Some(("version_source", v)) => Term::Source(match v {
                    "header" => Some(VersionSource::Header),
                    "request" => Some(VersionSource::Request),
                    "inferred" => Some(VersionSource::Inferred),
                    "none" | "null" => None,
                    _ => return Err(format!("{word}: header, request, inferred or none")),
                }),
                Some((k, _)) => return Err(format!("{word}: unknown field {k:?}")),
                None => match word {
                    "request" | "requests" => Term::Kind(Kind::Request),
                    "response" | "responses" => Term::Kind(Kind::Response),
                    "error" | "errors" => Term::Error,
                    "warn" | "warning" | "warnings" => Term::Warn,
                    w => match apis::api_by_name(w) {
                        Some(a) => Term::Api(a.key),
                        None => Term::Text(w.to_lowercase()),
                    },
                },
            };
            terms.push((neg, term));
        }
        Ok(Filter {
            terms,
            source: s.trim().to_string(),
        })
    }

    pub fn is_empty(&self) -> bool {
        self.terms.is_empty()
    }

    /// The text the filter was parsed from.
    pub fn as_str(&self) -> &str {
        &self.source
    }

    /// Whether a record matches; `summary` gives its summary line when free text needs it.
    pub fn matches(&self, r: &Record<'_>, summary: &mut dyn FnMut() -> String) -> bool {
        let mut line: Option<String> = None;
        self.terms.iter().all(|(neg, t)| {
            let hit = match t {
                Term::Kind(k) => r.msg.kind == *k,
                Term::Error => has_error(r),
                Term::Warn => !r.warnings.is_empty() || !r.msg.warnings.is_empty(),
                Term::Corr(c) => r.msg.correlation_id == Some(*c),
                Term::Frame(f) => r.packet == *f,
                Term::Version(v) => r.msg.api_version == Some(*v),
                Term::Api(k) => r.msg.api_key == Some(*k),
                Term::Source(s) => r.version_source == *s,
                Term::Text(w) => line
                    .get_or_insert_with(|| summary().to_lowercase())
                    .contains(w.as_str()),
            };
            hit != *neg
        })
    }
}

/// The CLI's choice of messages: `--api` names, then the display filter.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Selection {
    /// Keep only these API keys; empty keeps every API.
    apis: Vec<i16>,
    pub filter: Filter,
}

impl Selection {
    /// From `--api` words (names or keys) and a `-Y` filter.
    pub fn new(apis: &[String], filter: Option<&str>) -> Result<Selection, String> {
        Ok(Selection {
            apis: apis
                .iter()
                .map(|a| api_key(a))
                .collect::<Result<Vec<_>, _>>()?,
            filter: Filter::parse(filter.unwrap_or(""))?,
        })
    }

    /// Whether a message is shown.
    pub fn matches(&self, r: &Record<'_>) -> bool {
        if !self.apis.is_empty() && !r.msg.api_key.is_some_and(|k| self.apis.contains(&k)) {
            return false;
        }
        self.filter.is_empty() || self.filter.matches(r, &mut || summary::line(r))
    }
}

/// An API by name (any spelling kwire accepts) or number.
pub fn api_key(v: &str) -> Result<i16, String> {
    if let Ok(k) = v.parse::<i16>() {
        return Ok(k);
    }
    apis::api_by_name(v)
        .map(|a| a.key)
        .ok_or_else(|| format!("unknown API {v:?}"))
}

/// Malformed, or any error code in the body that is not NONE.
pub fn has_error(r: &Record<'_>) -> bool {
    r.msg.error.is_some()
        || r.msg.tree.nodes.iter().any(|n| {
            n.role == Role::Field
                && n.name.ends_with("ErrorCode")
                && matches!(n.value, Value::Int(c) if c != 0)
        })
}
