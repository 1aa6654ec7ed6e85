//! Which messages to show, shared by the CLI and the TUI: the `--api` selection and the
//! display filter (the language is in [`crate::filter`]; docs/contract.md has its grammar).

use crate::codec::{Role, Value};
use crate::dissect::Record;
use crate::proto::apis;

pub use crate::filter::{Filter, FilterError};

/// The CLI's choice of messages: `--api` names, then the display filter.
#[derive(Clone, Debug, Default)]
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
            // No filter needs no catalogue: building one parses every loaded schema.
            filter: match filter.filter(|f| !f.trim().is_empty()) {
                Some(f) => Filter::parse(f).map_err(|e| e.to_string())?,
                None => Filter::default(),
            },
        })
    }

    /// Whether anything is chosen (else every message is shown).
    pub fn is_empty(&self) -> bool {
        self.apis.is_empty() && self.filter.is_empty()
    }

    /// What of a body the choice reads (the API is in the header).
    pub fn need(&self) -> crate::codec::Need {
        self.filter.need()
    }

    /// Whether a message is shown.
    pub fn matches(&self, r: &Record<'_>) -> bool {
        if !self.apis.is_empty() && !r.msg.api_key.is_some_and(|k| self.apis.contains(&k)) {
            return false;
        }
        self.filter.matches(r)
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
                && n.name().ends_with("ErrorCode")
                && matches!(n.value, Value::Int(c) if c != 0)
        })
}
