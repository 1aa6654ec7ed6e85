//! The words the API files share: a decoded body with its topic names, and how
//! topics, partitions, errors, strings and record bytes read in a summary line.

use crate::codec::{Kind, Tree, Value};
use crate::records::summary::Totals;
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
    /// Set once a `records` field has been put into the line.
    pub records_shown: std::cell::Cell<bool>,
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

    /// Appends [`Body::topic`]'s text.
    pub fn push_topic(&self, out: &mut String, at: usize) {
        for f in ["Name", "TopicName", "Topic"] {
            if let Some(Some(s)) = self.tree.str(at, f) {
                return push_show(out, Some(s));
            }
        }
        match self.uuid(at, "TopicId") {
            Some(id) => match self.names.get(&id) {
                Some(n) => push_show(out, Some(n)),
                None => {
                    let mut buf = uuid::Uuid::encode_buffer();
                    out.push_str(uuid::Uuid::from_bytes(id).hyphenated().encode_lower(&mut buf));
                }
            },
            None => out.push_str("null"),
        }
    }

    /// Appends [`Body::topics`]'s text, each partition written in place by `part`.
    pub fn push_topics(
        &self,
        out: &mut String,
        at: usize,
        topics: &str,
        partitions: &str,
        part: impl Fn(&mut String, usize),
    ) {
        labels::push_list(out, self.tree.elems(at, topics), |out, t| {
            self.push_topic(out, t);
            let mut parts = self.tree.elems(t, partitions).peekable();
            if parts.peek().is_some() {
                out.push('[');
                labels::push_list(out, parts, &part);
                out.push(']');
            }
        });
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

    /// What a `records` field holds, from its batch headers (see [`Records`]).
    /// Marks the message's records as shown, so the line does not repeat them.
    pub fn records(&self, at: usize, name: &str) -> Option<Records> {
        let n = self.tree.nodes.get(self.tree.field(at, name)?)?;
        let r = match n.value {
            Value::Bytes(None) | Value::Array(None) => Records(None),
            Value::Bytes(Some(b)) => Records(Some(Totals::of(b))),
            _ => return None,
        };
        self.records_shown.set(true);
        Some(r)
    }
}

/// Appends [`show`]'s text.
pub(crate) fn push_show(out: &mut String, s: Option<&str>) {
    match s {
        None => out.push_str("null"),
        Some("") => out.push_str("\"\""),
        // Fewer bytes than the limit's characters: nothing to cut, no need to count.
        Some(s) if s.len() <= TEXT_MAX || s.chars().count() <= TEXT_MAX => {
            crate::view::escape::push_escaped(out, s)
        }
        Some(s) => {
            let cut = s.char_indices().nth(TEXT_MAX - 1).map_or(s.len(), |(at, _)| at);
            crate::view::escape::push_escaped(out, s.get(..cut).unwrap_or(s));
            out.push('…');
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

/// What a `records` field holds, from its batch headers only ([`Totals`]: nothing
/// is decompressed); `None` when the field is null.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Records(pub Option<Totals>);

impl Records {
    /// The field's size in bytes.
    pub fn bytes(&self) -> u64 {
        self.0.map_or(0, |t| t.bytes)
    }

    /// `5 records 312B`, `7 records in 2 batches 170B gzip`, `3 messages 210B`,
    /// `no records`, with the codecs unless all are none, `+partial` for a cut
    /// batch and `+N undecodable`; empty when null.
    pub fn words(&self) -> String {
        let mut out = String::new();
        self.push_words(&mut out);
        out
    }

    /// Appends [`Records::words`]'s text.
    pub fn push_words(&self, out: &mut String) {
        let Some(t) = self.0 else { return };
        if t.bytes == 0 {
            out.push_str("no records");
            return;
        }
        let start = out.len();
        let plural = |out: &mut String, n: u64, what: &str| {
            part(out, start, |out| {
                labels::push_int(out, n);
                out.push(' ');
                out.push_str(what);
                if n != 1 {
                    out.push('s');
                }
            })
        };
        let (records, batches) = t.v2();
        if records > 0 || t.messages == 0 {
            plural(out, records, "record");
            if batches > 1 {
                part(out, start, |out| {
                    out.push_str("in ");
                    labels::push_int(out, batches);
                    out.push_str(" batches");
                });
            }
        }
        if t.messages > 0 {
            plural(out, t.messages, "message");
        }
        part(out, start, |out| labels::push_bytes(out, t.bytes));
        // Codecs besides `none`: the names are listed (the common case needs none).
        if t.codecs.iter().skip(1).any(|&n| n > 0) {
            let codecs = t.codec_names();
            part(out, start, |out| {
                for (i, c) in codecs.iter().enumerate() {
                    if i > 0 {
                        out.push('+');
                    }
                    out.push_str(c);
                }
            });
        }
        if t.partial > 0 {
            part(out, start, |out| out.push_str("+partial"));
        }
        if t.errors > 0 {
            part(out, start, |out| {
                out.push('+');
                labels::push_int(out, t.errors);
                out.push_str(" undecodable");
            });
        }
    }
}

/// Appends one of the parts [`join`] joins, written by `f`: after a space when the
/// parts begun at `start` are not empty, and nothing at all when `f` writes nothing.
pub(crate) fn part(out: &mut String, start: usize, f: impl FnOnce(&mut String)) {
    let mark = out.len();
    if mark > start {
        out.push(' ');
    }
    let at = out.len();
    f(out);
    if out.len() == at {
        out.truncate(mark);
    }
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
