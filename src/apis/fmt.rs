//! The words the API files share: a decoded body with its topic names, and how
//! topics, partitions, errors, strings and record bytes read in a summary line.

use crate::codec::{Kind, Prefix, Tree, Value};
use crate::topics::IdNames;
use crate::view::escape::escape;
use crate::view::labels;

/// Longest wire string shown in a summary; longer ones end in `…`.
const TEXT_MAX: usize = 64;

/// A decoded body as the summary line reads it.
pub struct Body<'r, 'a> {
    pub kind: Kind,
    pub tree: &'r Tree<'a>,
    /// The Body node.
    pub at: usize,
    /// Names of the topic ids the message carries, as the run knew them.
    pub names: &'r IdNames,
    /// A request's client id (only the generic line shows it).
    pub client: Option<&'a str>,
}

impl<'a> Body<'_, 'a> {
    pub fn int(&self, at: usize, name: &str) -> Option<i64> {
        self.tree.int(at, name)
    }

    pub fn bool(&self, at: usize, name: &str) -> Option<bool> {
        self.tree.bool(at, name)
    }

    pub fn elements(&self, at: usize, name: &str) -> Vec<usize> {
        self.tree.elements(at, name)
    }

    /// Whether field `name` is present at this version.
    pub fn has(&self, at: usize, name: &str) -> bool {
        self.tree.field(at, name).is_some()
    }

    /// A string field as a summary shows it: escaped, `""` when empty, `null` when
    /// the wire says null, cut at [`TEXT_MAX`] characters.
    pub fn text(&self, at: usize, name: &str) -> Option<String> {
        self.tree.str(at, name).map(show)
    }

    /// A string field that is present, not null and not empty, as [`Body::text`].
    pub fn text_set(&self, at: usize, name: &str) -> Option<String> {
        self.tree
            .str(at, name)
            .flatten()
            .filter(|s| !s.is_empty())
            .map(|s| show(Some(s)))
    }

    /// The name of a non-zero error code in field `name`.
    pub fn error(&self, at: usize, name: &str) -> Option<String> {
        self.int(at, name).filter(|&c| c != 0).map(labels::error)
    }

    /// The error code in field `name` by name, `NONE` included.
    pub fn error_always(&self, at: usize, name: &str) -> Option<String> {
        self.int(at, name).map(labels::error)
    }

    /// The topic a struct is about: its name on the wire (`Name`, `TopicName` or
    /// `Topic`), else the name learned for its `TopicId`, else the id itself.
    pub fn topic(&self, at: usize) -> String {
        for f in ["Name", "TopicName", "Topic"] {
            if let Some(Some(s)) = self.tree.str(at, f) {
                return show(Some(s));
            }
        }
        match self.uuid(at, "TopicId") {
            Some(id) => match self.names.get(&id) {
                Some(n) => show(Some(n)),
                None => uuid::Uuid::from_bytes(id).hyphenated().to_string(),
            },
            None => "null".into(),
        }
    }

    pub fn uuid(&self, at: usize, name: &str) -> Option<[u8; 16]> {
        match self.tree.nodes.get(self.tree.field(at, name)?)?.value {
            Value::Uuid(u) => Some(u),
            _ => None,
        }
    }

    /// The integers of an array-of-integers field.
    pub fn ints(&self, at: usize, name: &str) -> Vec<i64> {
        self.elements(at, name)
            .into_iter()
            .filter_map(|e| match self.tree.nodes.get(e)?.value {
                Value::Int(v) => Some(v),
                _ => None,
            })
            .collect()
    }

    /// The strings of an array-of-strings field, as [`Body::text`] shows them.
    pub fn texts(&self, at: usize, name: &str) -> Vec<String> {
        self.elements(at, name)
            .into_iter()
            .filter_map(|e| match self.tree.nodes.get(e)?.value {
                Value::Str(s) => Some(show(s)),
                _ => None,
            })
            .collect()
    }

    /// Whether array field `name` is present and null.
    pub fn null_array(&self, at: usize, name: &str) -> bool {
        self.tree
            .field(at, name)
            .and_then(|f| self.tree.nodes.get(f))
            .is_some_and(|n| n.value == Value::Array(None))
    }

    /// `topic[p0 …, p1 …]` for each topic element of array `topics`, its partitions
    /// in array `partitions`, each partition written by `part`; lists cut at three.
    pub fn topics(
        &self,
        at: usize,
        topics: &str,
        partitions: &str,
        part: impl Fn(usize) -> String,
    ) -> String {
        labels::list_of(&self.elements(at, topics), |&t| {
            self.with_parts(t, &self.elements(t, partitions), |&p| part(p))
        })
    }

    /// `topic[a, b]`, or the bare topic when there are no parts.
    pub fn with_parts<T>(&self, t: usize, parts: &[T], f: impl FnMut(&T) -> String) -> String {
        if parts.is_empty() {
            return self.topic(t);
        }
        format!("{}[{}]", self.topic(t), labels::list_of(parts, f))
    }

    /// The size and record count of a `records` field (see [`Records`]).
    pub fn records(&self, at: usize, name: &str) -> Option<Records> {
        let n = self.tree.nodes.get(self.tree.field(at, name)?)?;
        match n.value {
            Value::Bytes(None) | Value::Array(None) => Some(Records::default()),
            Value::Bytes(Some(b)) => Some(Records::peek(b)),
            // Batches decoded into the tree: count what they say.
            Value::Array(Some(_)) => {
                let mut r = Records {
                    present: true,
                    bytes: match n.prefix {
                        Prefix::Compact(c) => u64::from(c.saturating_sub(1)),
                        Prefix::Int32(c) => u64::try_from(c).unwrap_or(0),
                        _ => 0,
                    },
                    ..Records::default()
                };
                let field = self.tree.field(at, name)?;
                for e in self.tree.children(field) {
                    if self.bool(e, "Partial") == Some(true) {
                        r.partial = true;
                    } else if let Some(c) = self.int(e, "RecordCount") {
                        r.records += u64::try_from(c).unwrap_or(0);
                    } else if self.has(e, "Magic") {
                        r.legacy += 1;
                    }
                }
                Some(r)
            }
            _ => None,
        }
    }
}

/// A wire string for a summary line.
pub(crate) fn show(s: Option<&str>) -> String {
    match s {
        None => "null".into(),
        Some("") => "\"\"".into(),
        Some(s) if s.chars().count() > TEXT_MAX => {
            let cut: String = s.chars().take(TEXT_MAX - 1).collect();
            format!("{}…", escape(&cut))
        }
        Some(s) => escape(s).into_owned(),
    }
}

/// What a `records` field holds, read from its batch headers without decoding them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Records {
    /// Not null on the wire.
    pub present: bool,
    pub bytes: u64,
    /// Records in whole magic-2 batches (their `RecordCount`).
    pub records: u64,
    /// Whole magic-0/1 messages (a compressed one holds more, unseen here).
    pub legacy: u64,
    /// The field ends inside a batch (brokers cut Fetch answers at the size limit).
    pub partial: bool,
}

/// Offsets in a record batch header (magic 2) and a message set entry.
const LENGTH_AT: usize = 8;
const MAGIC_AT: usize = 16;
const COUNT_AT: usize = 57;
const LOG_OVERHEAD: usize = 12;

impl Records {
    /// Walks the batch headers in `b`: each batch is 12 bytes of offset and length,
    /// then `length` bytes, of which magic 2 keeps `RecordCount` at byte 57.
    pub fn peek(b: &[u8]) -> Records {
        let mut r = Records {
            present: true,
            bytes: b.len() as u64,
            ..Records::default()
        };
        let mut rest = b;
        while !rest.is_empty() {
            let len = be_i32(rest, LENGTH_AT).and_then(|l| usize::try_from(l).ok());
            let Some(total) = len.and_then(|l| l.checked_add(LOG_OVERHEAD)) else {
                r.partial = true;
                break;
            };
            let Some(batch) = rest.get(..total) else {
                r.partial = true;
                break;
            };
            match batch.get(MAGIC_AT) {
                Some(2) => match be_i32(batch, COUNT_AT).and_then(|c| u64::try_from(c).ok()) {
                    Some(c) => r.records += c,
                    None => r.partial = true,
                },
                Some(0 | 1) => r.legacy += 1,
                _ => r.partial = true,
            }
            rest = rest.get(total..).unwrap_or_default();
        }
        r
    }

    /// `5 records 312B`, `3 messages 210B`, `no records`, with `+partial` for a cut batch;
    /// empty when null.
    pub fn words(&self) -> String {
        if !self.present {
            return String::new();
        }
        if self.bytes == 0 {
            return "no records".into();
        }
        let mut parts = Vec::new();
        if self.records > 0 || self.legacy == 0 {
            parts.push(format!(
                "{} record{}",
                self.records,
                if self.records == 1 { "" } else { "s" }
            ));
        }
        if self.legacy > 0 {
            parts.push(format!(
                "{} message{}",
                self.legacy,
                if self.legacy == 1 { "" } else { "s" }
            ));
        }
        parts.push(labels::bytes(self.bytes));
        if self.partial {
            parts.push("+partial".into());
        }
        parts.join(" ")
    }
}

fn be_i32(b: &[u8], at: usize) -> Option<i32> {
    let s: [u8; 4] = b.get(at..at.checked_add(4)?)?.try_into().ok()?;
    Some(i32::from_be_bytes(s))
}

/// Joins the non-empty parts with spaces.
pub(crate) fn join(parts: impl IntoIterator<Item = Option<String>>) -> String {
    parts
        .into_iter()
        .flatten()
        .filter(|s| !s.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

/// `key=value` when the value is there.
pub(crate) fn kv(key: &str, v: Option<impl std::fmt::Display>) -> Option<String> {
    v.map(|v| format!("{key}={v}"))
}

/// `throttle=100ms` when the broker throttled the client.
pub(crate) fn throttle(b: &Body<'_, '_>) -> Option<String> {
    b.int(b.at, "ThrottleTimeMs")
        .filter(|&t| t > 0)
        .map(|t| format!("throttle={t}ms"))
}

/// A response whose only news is its error code: the name, `NONE` included.
pub(crate) fn error_only(b: &Body<'_, '_>) -> String {
    join([b.error_always(b.at, "ErrorCode"), throttle(b)])
}
