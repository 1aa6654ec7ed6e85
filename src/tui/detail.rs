//! The selected message, decoded on demand: its tree as owned lines, its
//! bytes for the hex pane, and the notes (decode error, warnings).

use super::store::{Row, Store};
use crate::codec::{Node, Role, Value};
use crate::dissect::VersionSource;
use crate::view::escape::escape;
use crate::view::labels::api_label;
use crate::view::summary::{api_version, latency};
use crate::view::tree;
use std::fmt::Write;

/// One node of the selected message's tree.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Line {
    /// `name type = value` as the seed trees write it (wire strings escaped).
    pub label: String,
    /// The value alone, for copying (`c`): numbers, strings (escaped), bytes
    /// in hex; empty for a struct or the message itself.
    pub value: String,
    /// The schema's description.
    pub about: String,
    pub offset: usize,
    pub len: usize,
    pub depth: usize,
    /// Index of the first line after this node's subtree.
    pub next: usize,
    /// Names from the root, so expansion survives moving to another message.
    pub path: String,
    /// Error code that is not NONE, or raw bytes left undecoded.
    pub alarming: bool,
    /// A record's key or value (or header value): its bytes, which the tree
    /// pane shows as text, JSON or hex ([`super::values`]).
    pub raw: Option<Vec<u8>>,
}

impl Line {
    pub fn has_children(&self, i: usize) -> bool {
        self.next > i + 1
    }

    pub fn contains(&self, byte: usize) -> bool {
        byte >= self.offset && byte < self.offset + self.len
    }
}

/// A note under the tree.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Note {
    Error(String),
    Warning(String),
    Info(String),
}

/// Everything the tree and hex panes show for one message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Detail {
    /// Row in the store.
    pub row: usize,
    /// `Frame N: src → dst, API vN kind corr=C, …`.
    pub title: String,
    pub lines: Vec<Line>,
    pub notes: Vec<Note>,
    /// The stored bytes (the frame from its size prefix), read back; empty when they cannot be.
    pub bytes: Vec<u8>,
    /// Byte ranges (offset, length) holding redacted secrets: the hex pane masks them.
    pub hidden: Vec<(usize, usize)>,
}

impl Detail {
    /// Whether byte `b` is part of a redacted secret.
    pub fn is_hidden(&self, b: usize) -> bool {
        self.hidden
            .iter()
            .any(|&(off, len)| b >= off && b - off < len)
    }
}

impl Detail {
    /// Decodes row `row` of the store.
    pub fn build(store: &Store, row: usize) -> Option<Detail> {
        let r = *store.row(row)?;
        let bytes = match store.data(row) {
            Ok(b) => b,
            Err(e) => return Some(Detail::unreadable(store, row, &r, e)),
        };
        let built = store.decode(row, &bytes, |rec| {
            let f = rec;
            let m = &rec.msg;
            let mut title = format!(
                "Frame {}: {} → {}, {} {} corr={}, {:.6} s, {} bytes",
                f.packet,
                f.src,
                f.dst,
                api_version(m),
                m.kind.as_str(),
                m.correlation_id
                    .map_or_else(|| "?".into(), |c| c.to_string()),
                (f.ts_ns - rec.first_ts_ns) as f64 / 1e9,
                f.wire_size,
            );
            if let Some(src) = rec.version_source {
                if src == VersionSource::Inferred {
                    title.push_str(", version inferred");
                }
            }
            if let (Some(req), Some(ns)) = (f.request_packet, f.latency_ns) {
                let _ = write!(title, ", request in frame {req}, {}", latency(ns / 1000));
            }
            let version = m.tree.root().and_then(|n| match n.value {
                Value::Int(v) => Some(v),
                _ => None,
            });
            let named = rec.topic_names.nodes(&m.tree);
            let mut lines = Vec::with_capacity(m.tree.nodes.len());
            // The line of each codec node (record batches add lines in between),
            // so that `next` can be mapped once all lines are known.
            let mut at_line = Vec::with_capacity(m.tree.nodes.len() + 1);
            let mut stack: Vec<(usize, String)> = Vec::new();
            for (i, n) in m.tree.nodes.iter().enumerate() {
                let depth = usize::from(n.depth);
                while stack.last().is_some_and(|(d, _)| *d >= depth) {
                    stack.pop();
                }
                let mut own = n.name().to_string();
                if let Some(i) = n.index {
                    let _ = write!(own, "[{i}]");
                }
                let path = match stack.last() {
                    Some((_, p)) => format!("{p}/{own}"),
                    None => own,
                };
                stack.push((depth, path.clone()));
                at_line.push(lines.len());
                let mut label = String::new();
                tree::label(&mut label, n);
                if let Some(name) = tree::named(&named, i) {
                    tree::topic_note(&mut label, name);
                }
                lines.push(Line {
                    label,
                    value: copy_value(n),
                    about: tree::about(n, version),
                    offset: n.offset as usize,
                    len: n.len as usize,
                    depth,
                    next: n.next as usize,
                    path: path.clone(),
                    alarming: alarming(n),
                    raw: None,
                });
                if let Some(data) = crate::view::records::data(n) {
                    record_lines(&mut lines, n, data, &path);
                }
            }
            at_line.push(lines.len());
            // Codec nodes' `next` counted codec nodes; make it count lines.
            for (i, &l) in at_line.iter().enumerate() {
                let next = m.tree.nodes.get(i).map(|n| n.next as usize);
                if let (Some(line), Some(next)) = (lines.get_mut(l), next) {
                    line.next = at_line.get(next).copied().unwrap_or(line.next);
                }
            }
            let mut notes = Vec::new();
            if let Some(e) = &m.error {
                notes.push(Note::Error(format!("malformed: {e}")));
            }
            for w in f.warnings.iter().chain(m.warnings.iter()) {
                notes.push(Note::Warning(escape(w).into_owned()));
            }
            if r.is_capped() {
                notes.push(Note::Info(format!(
                    "only the first {} of {} bytes are kept for display",
                    f.data.len(),
                    f.wire_size
                )));
            }
            Detail {
                row,
                title,
                lines,
                notes,
                bytes: Vec::new(),
                // Secrets are redacted in the tree, so their bytes are hidden here too.
                hidden: m.tree.redacted_ranges(),
            }
        });
        match built {
            Ok(mut d) => {
                d.bytes = bytes;
                Some(d)
            }
            Err(e) => Some(Detail::unreadable(store, row, &r, e)),
        }
    }

    /// What can be said of a message whose bytes cannot be read back: the
    /// row's own facts, and why.
    fn unreadable(store: &Store, row: usize, r: &Row, why: String) -> Detail {
        let ends = store
            .endpoints(r)
            .map_or_else(String::new, |(s, d)| format!(" {s} → {d},"));
        let api = match (r.api_key(), r.api_version()) {
            (Some(k), Some(v)) => format!("{} v{v}", api_label(k)),
            (Some(k), None) => api_label(k),
            _ => "?".to_string(),
        };
        let corr = r
            .correlation_id()
            .map_or_else(|| "?".into(), |c| c.to_string());
        Detail {
            row,
            title: format!(
                "Frame {}:{ends} {api} {} corr={corr}, {} bytes",
                r.packet,
                r.kind().as_str(),
                r.wire_size
            ),
            lines: Vec::new(),
            notes: vec![Note::Error(why)],
            bytes: Vec::new(),
            hidden: Vec::new(),
        }
    }

    /// The deepest line whose bytes include `byte`.
    pub fn line_at_byte(&self, byte: usize) -> Option<usize> {
        // Siblings do not overlap and children follow their parent, so the last hit is the deepest.
        self.lines.iter().rposition(|l| l.contains(byte))
    }

    /// Lines whose subtree holds line `i`, outermost first.
    pub fn ancestors(&self, i: usize) -> Vec<usize> {
        (0..i)
            .filter(|&a| self.lines.get(a).is_some_and(|l| l.next > i))
            .collect()
    }
}

/// The batches and records of a `records` field, as lines after its own.
/// Lines of decompressed bytes have the range of the wire bytes holding them
/// (`len` 0, so a byte of the hex pane never selects them).
fn record_lines(lines: &mut Vec<Line>, field: &Node<'_>, data: &[u8], field_path: &str) {
    let t = crate::view::records::decode(data);
    let first = lines.len();
    let nodes = crate::view::records::nodes(&t, field, data);
    // Paths and the wire range of the enclosing wire node, per depth.
    let mut stack: Vec<(usize, String, usize)> = Vec::new();
    for r in nodes {
        let n = &r.node;
        let depth = usize::from(n.depth);
        while stack.last().is_some_and(|(d, _, _)| *d >= depth) {
            stack.pop();
        }
        let mut own = n.name().to_string();
        if let Some(i) = n.index {
            let _ = write!(own, "[{i}]");
        }
        let parent = stack.last().map_or(field_path, |(_, p, _)| p.as_str());
        let path = format!("{parent}/{own}");
        let wire_at = if r.decompressed {
            stack.last().map_or(field.offset as usize, |(_, _, at)| *at)
        } else {
            n.offset as usize
        };
        stack.push((depth, path.clone(), wire_at));
        let raw = match n.value {
            Value::Bytes(Some(b)) if matches!(n.name(), "Key" | "Value") => Some(b.to_vec()),
            _ => None,
        };
        let mut label = String::new();
        tree::label(&mut label, n);
        lines.push(Line {
            label,
            // `c` copies a key or value from `raw`, in the form shown.
            value: if raw.is_some() {
                String::new()
            } else {
                copy_value(n)
            },
            about: if r.decompressed {
                // The range shown is the compressed bytes holding it; say where it is inside.
                let at = format!(
                    "decompressed bytes [0x{:04x}, {}B] of the batch's records",
                    n.offset, n.len
                );
                match n.about() {
                    "" | crate::records::tree::IN_PAYLOAD => at,
                    about => format!("{about}; {at}"),
                }
            } else {
                n.about().to_string()
            },
            offset: wire_at,
            len: if r.decompressed { 0 } else { n.len as usize },
            depth,
            next: (n.next as usize).saturating_add(first),
            path,
            alarming: false,
            raw,
        });
    }
}

fn alarming(n: &Node<'_>) -> bool {
    n.role == Role::Field
        && n.name().ends_with("ErrorCode")
        && matches!(n.value, Value::Int(c) if c != 0)
}

/// A field's value on its own, as `c` copies it.
fn copy_value(n: &Node<'_>) -> String {
    match (n.role, n.value) {
        (Role::Message | Role::Frame | Role::Header | Role::Body, _) | (_, Value::None) => {
            String::new()
        }
        (_, Value::Str(Some(s))) => escape(s).into_owned(),
        (_, Value::Bytes(Some(b))) => {
            let mut out = String::with_capacity(b.len() * 2);
            for byte in b {
                let _ = write!(out, "{byte:02x}");
            }
            out
        }
        (_, Value::Str(None) | Value::Bytes(None)) => "null".to_string(),
        (_, Value::Int(v)) => v.to_string(),
        _ => {
            let mut out = String::new();
            tree::value(&mut out, n);
            out
        }
    }
}
