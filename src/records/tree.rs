//! Value-tree nodes for a `records` field, in the codec's [`Node`] form.
//!
//! The decoder reports every field it reads to a `Trace`; the no-op `()`
//! costs nothing, and `Tracer` keeps the nodes. Offsets of nodes inside a
//! compressed batch are within its decompressed records, and say so.
#![cfg_attr(
    not(test),
    deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)
)]

use super::{Entry, Options, batches};
use crate::codec::{Label, Node, Prefix, Role, Value};

/// Which buffer a node's offset is in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Src {
    /// The field's bytes (offsets become message offsets).
    Wire,
    /// The decompressed payload of the field's entry with this index.
    Payload(u32),
}

/// A traced value; byte ranges are in the current source.
#[derive(Clone, Copy, Debug)]
pub(crate) enum TVal {
    None,
    Int(i64),
    Bool(bool),
    Name(&'static str),
    Range(usize, usize),
    Text(usize, usize),
    Array(u32),
}

/// What a traced node is: its name and type, with the tree line's text for
/// them put together at compile time ([`kind!`]).
#[derive(Debug)]
pub(crate) struct Kind {
    /// The node's label when it has no description (most).
    pub label: Label,
    pub name: &'static str,
    pub ty: &'static str,
    /// `+-- Name type = `, and for an indexed node `+-- Name[` and `] type = `.
    pub head: &'static str,
    pub open: &'static str,
    pub mid: &'static str,
}

/// A `&'static Kind` from a name and a type, both literals.
macro_rules! kind {
    ($name:literal, $ty:literal) => {
        &$crate::records::tree::Kind {
            label: $crate::codec::Label {
                name: $name,
                ty: $ty,
                about: "",
            },
            name: $name,
            ty: $ty,
            head: concat!("+-- ", $name, " ", $ty, " = "),
            open: concat!("+-- ", $name, "["),
            mid: concat!("] ", $ty, " = "),
        }
    };
}
pub(crate) use kind;

/// Receives the fields as the decoder reads them.
pub(crate) trait Trace {
    const ON: bool;
    fn source(&mut self, s: Src);
    fn open(
        &mut self,
        at: usize,
        kind: &'static Kind,
        index: Option<u32>,
        val: TVal,
        about: &'static str,
    );
    fn close(&mut self, at: usize);
    #[allow(clippy::too_many_arguments)]
    fn leaf(
        &mut self,
        from: usize,
        to: usize,
        kind: &'static Kind,
        index: Option<u32>,
        val: TVal,
        about: &'static str,
    );
    fn open_count(&self) -> usize;
    /// After an error: closes containers until `keep` remain, at the furthest byte read.
    fn close_to(&mut self, keep: usize);
}

impl Trace for () {
    const ON: bool = false;
    fn source(&mut self, _: Src) {}
    fn open(&mut self, _: usize, _: &'static Kind, _: Option<u32>, _: TVal, _: &'static str) {}
    fn close(&mut self, _: usize) {}
    fn leaf(
        &mut self,
        _: usize,
        _: usize,
        _: &'static Kind,
        _: Option<u32>,
        _: TVal,
        _: &'static str,
    ) {
    }
    fn open_count(&self) -> usize {
        0
    }
    fn close_to(&mut self, _: usize) {}
}

#[derive(Clone, Debug)]
struct TNode {
    kind: &'static Kind,
    index: Option<u32>,
    val: TVal,
    src: Src,
    offset: usize,
    len: usize,
    about: &'static str,
    depth: u16,
    next: u32,
}

/// Collects traced nodes in pre-order, as the codec's tree keeps them.
#[derive(Default)]
pub(crate) struct Tracer {
    nodes: Vec<TNode>,
    open: Vec<usize>,
    src: Option<Src>,
}

impl Tracer {
    fn src(&self) -> Src {
        self.src.unwrap_or(Src::Wire)
    }
    fn end(&mut self, idx: usize, at: usize) {
        let next = self.nodes.len() as u32;
        if let Some(n) = self.nodes.get_mut(idx) {
            n.len = at.saturating_sub(n.offset);
            n.next = next;
        }
    }
}

impl Trace for Tracer {
    const ON: bool = true;
    fn source(&mut self, s: Src) {
        self.src = Some(s);
    }
    fn open(
        &mut self,
        at: usize,
        kind: &'static Kind,
        index: Option<u32>,
        val: TVal,
        about: &'static str,
    ) {
        self.open.push(self.nodes.len());
        self.nodes.push(TNode {
            kind,
            index,
            val,
            src: self.src(),
            offset: at,
            len: 0,
            about,
            depth: self.open.len() as u16 - 1,
            next: 0,
        });
    }
    fn close(&mut self, at: usize) {
        if let Some(idx) = self.open.pop() {
            self.end(idx, at);
        }
    }
    fn leaf(
        &mut self,
        from: usize,
        to: usize,
        kind: &'static Kind,
        index: Option<u32>,
        val: TVal,
        about: &'static str,
    ) {
        let next = self.nodes.len() as u32 + 1;
        self.nodes.push(TNode {
            kind,
            index,
            val,
            src: self.src(),
            offset: from,
            len: to.saturating_sub(from),
            about,
            depth: self.open.len() as u16,
            next,
        });
    }
    fn open_count(&self) -> usize {
        self.open.len()
    }
    fn close_to(&mut self, keep: usize) {
        while self.open.len() > keep {
            if let Some(idx) = self.open.pop() {
                // The furthest byte read in its source: positions only grow
                // within one source, so that is the furthest its own nodes
                // reach (inner containers are closed first).
                let src = self.nodes.get(idx).map(|n| n.src);
                let at = self
                    .nodes
                    .get(idx..)
                    .unwrap_or_default()
                    .iter()
                    .filter(|n| Some(n.src) == src)
                    .map(|n| n.offset + n.len)
                    .max()
                    .unwrap_or(0);
                self.end(idx, at);
            }
        }
    }
}

/// A tree node, and whether its offset is within a decompressed payload
/// (rather than within the message).
#[derive(Clone, Debug, PartialEq)]
pub struct RecNode<'b> {
    pub node: Node<'b>,
    pub decompressed: bool,
}

/// A decoded field with its tree, ready to be turned into nodes.
pub struct RecordsTree {
    pub entries: Vec<Entry>,
    nodes: Vec<TNode>,
}

/// Records the tree shows per field at most (past `--max-records`); the rest
/// are counted in each batch's `RecordsOmitted`.
pub const TREE_MAX_RECORDS: usize = 10_000;

/// Decodes `field` and keeps every node, for the tree view.
pub fn decode_tree(field: &[u8], opts: &Options<'_>) -> RecordsTree {
    // About a node per 3 bytes on the wire; more (decompressed) grow as needed.
    let mut t = Tracer {
        nodes: Vec::with_capacity((field.len() / 3).min(1 << 16)),
        ..Tracer::default()
    };
    let mut it = batches(field, opts);
    // Every payload is kept for the nodes, so the cap holds for the field as a whole.
    it.budget = Some(opts.max_decompressed);
    // A dozen nodes per record: the tree shows this many records per field.
    it.record_budget = Some(TREE_MAX_RECORDS);
    let mut entries = Vec::new();
    while let Some(e) = it.next_traced(&mut t) {
        entries.push(e);
    }
    t.close_to(0);
    RecordsTree {
        entries,
        nodes: t.nodes,
    }
}

/// Said of the first node of each decompressed record or message.
pub const IN_PAYLOAD: &str = "offsets here are within the batch's decompressed records";

impl RecordsTree {
    /// The nodes, to be placed in a codec tree under the `records` field node:
    /// `base` is the field's data offset in the message, `depth` the depth of
    /// the first level, `first` the index the first node will have.
    pub fn nodes<'b>(
        &'b self,
        field: &'b [u8],
        base: u32,
        depth: u16,
        first: u32,
    ) -> Vec<RecNode<'b>> {
        // The labels of described nodes met so far: a batch has a few kinds of them.
        let mut labels = Vec::new();
        self.nodes
            .iter()
            .map(|n| {
                let buf: &[u8] = match n.src {
                    Src::Wire => field,
                    Src::Payload(k) => match self.entries.get(k as usize) {
                        Some(Entry::Batch(b)) => b.payload.as_deref().unwrap_or_default(),
                        Some(Entry::Message(m)) => m.payload.as_deref().unwrap_or_default(),
                        _ => &[],
                    },
                };
                let range = |s: usize, l: usize| buf.get(s..s.saturating_add(l));
                let value = match n.val {
                    TVal::None => Value::None,
                    TVal::Int(v) => Value::Int(v),
                    TVal::Bool(b) => Value::Bool(b),
                    TVal::Name(s) => Value::Str(Some(s)),
                    TVal::Range(s, l) => Value::Bytes(range(s, l)),
                    TVal::Text(s, l) => match range(s, l).map(std::str::from_utf8) {
                        Some(Ok(s)) => Value::Str(Some(s)),
                        _ => Value::Bytes(range(s, l)),
                    },
                    TVal::Array(c) => Value::Array(Some(c)),
                };
                let decompressed = n.src != Src::Wire;
                let label = if n.about.is_empty() {
                    match (decompressed, n.kind.name) {
                        (true, "Record") => const { &Label::new("Record", "Record", IN_PAYLOAD) },
                        (true, "Message") => {
                            const { &Label::new("Message", "Message", IN_PAYLOAD) }
                        }
                        _ => &n.kind.label,
                    }
                } else {
                    described(&mut labels, n.kind, n.about)
                };
                let offset = if decompressed {
                    n.offset as u32
                } else {
                    base.saturating_add(n.offset as u32)
                };
                RecNode {
                    node: Node {
                        label,
                        index: n.index,
                        value,
                        prefix: Prefix::None,
                        offset,
                        len: n.len as u32,
                        role: if n.index.is_some() {
                            Role::Element
                        } else {
                            Role::Field
                        },
                        depth: depth.saturating_add(n.depth),
                        next: first.saturating_add(n.next),
                    },
                    decompressed,
                }
            })
            .collect()
    }
}

/// The label of a `kind` node described by `about`: from `seen` (the labels made so far
/// for one field's nodes, found by address), else made once for the process.
fn described(
    seen: &mut Vec<(*const Kind, *const u8, &'static Label)>,
    kind: &'static Kind,
    about: &'static str,
) -> &'static Label {
    let key = (std::ptr::from_ref(kind), about.as_ptr());
    if let Some(&(_, _, l)) = seen.iter().find(|(k, a, l)| (*k, *a) == key && l.about.len() == about.len()) {
        return l;
    }
    let l = crate::codec::label(kind.name, kind.ty, about);
    seen.push((key.0, key.1, l));
    l
}

/// Longest description the tree shows whole, and where a longer one is cut
/// (as `view::tree` does).
const ABOUT_MAX: usize = 78;
const ABOUT_CUT: usize = 75;
/// Raw bytes shown before eliding (as `view::tree` does).
const BYTES_SHOWN: usize = 32;

impl RecordsTree {
    /// Writes the tree view's lines for the nodes under the `records` field,
    /// as `view::tree` draws them from [`RecordsTree::nodes`], straight from
    /// the traced nodes: no node list is built and nothing goes through `fmt`.
    /// `base` is the field's data offset in the message; `prefix` the drawing
    /// before the field's children (restored on return).
    pub fn render(&self, out: &mut String, field: &[u8], base: u32, prefix: &mut String) {
        let mut pen = Pen { out, field, base };
        self.render_children(&mut pen, prefix, 0, self.nodes.len());
    }

    fn render_children(&self, pen: &mut Pen<'_>, prefix: &mut String, mut at: usize, end: usize) {
        while at < end {
            let Some(n) = self.nodes.get(at) else { return };
            let next = n.next as usize;
            self.line(pen, prefix, n);
            // A leaf (most nodes) draws nothing under it: no prefix to grow, no call.
            if next > at + 1 {
                let len = prefix.len();
                prefix.push_str(if next == end { "    " } else { "|   " });
                self.render_children(pen, prefix, at + 1, next);
                prefix.truncate(len);
            }
            at = next.max(at + 1);
        }
    }

    /// The buffer a node's byte ranges are in.
    fn buf<'b>(&'b self, field: &'b [u8], src: Src) -> &'b [u8] {
        match src {
            Src::Wire => field,
            Src::Payload(k) => match self.entries.get(k as usize) {
                Some(Entry::Batch(b)) => b.payload.as_deref().unwrap_or_default(),
                Some(Entry::Message(m)) => m.payload.as_deref().unwrap_or_default(),
                _ => &[],
            },
        }
    }

    fn line(&self, pen: &mut Pen<'_>, prefix: &str, n: &TNode) {
        let decompressed = n.src != Src::Wire;
        let about = if decompressed && n.about.is_empty() && matches!(n.kind.name, "Record" | "Message")
        {
            IN_PAYLOAD
        } else {
            n.about
        };
        let out = &mut *pen.out;
        let mut num = itoa::Buffer::new();
        out.push_str(prefix);
        match n.index {
            Some(i) => {
                out.push_str(n.kind.open);
                out.push_str(num.format(i));
                out.push_str(n.kind.mid);
            }
            None => out.push_str(n.kind.head),
        }
        // Only byte values need the buffer, looked up then.
        let range = |s: usize, l: usize| {
            self.buf(pen.field, n.src)
                .get(s..s.saturating_add(l))
        };
        match n.val {
            TVal::None => out.push_str("struct"),
            // (No record field is an API key or an error code, which get a note.)
            TVal::Int(v) => out.push_str(num.format(v)),
            TVal::Bool(b) => out.push_str(if b { "true" } else { "false" }),
            TVal::Name(s) => quoted(out, s),
            TVal::Text(s, l) => match range(s, l).map(std::str::from_utf8) {
                Some(Ok(s)) => quoted(out, s),
                _ => bytes(out, range(s, l)),
            },
            TVal::Range(s, l) => bytes(out, range(s, l)),
            TVal::Array(1) => out.push_str("1 element"),
            TVal::Array(c) => {
                out.push_str(num.format(c));
                out.push_str(" elements");
            }
        }
        let offset = if decompressed {
            n.offset as u32
        } else {
            base_offset(pen.base, n.offset)
        };
        crate::view::labels::push_place(out, offset, n.len as u32);
        push_about(out, about);
        out.push('\n');
    }
}

fn base_offset(base: u32, offset: usize) -> u32 {
    base.saturating_add(offset as u32)
}

/// ` about`, cut after [`ABOUT_CUT`] characters when longer than [`ABOUT_MAX`].
fn push_about(out: &mut String, about: &str) {
    if about.is_empty() {
        return;
    }
    out.push(' ');
    let long =
        about.len() > ABOUT_MAX && (about.is_ascii() || about.chars().count() > ABOUT_MAX);
    if long {
        out.extend(about.chars().take(ABOUT_CUT));
        out.push_str("...");
    } else {
        out.push_str(about);
    }
}

/// Where [`RecordsTree::render`] writes, and what every line needs.
struct Pen<'w> {
    out: &'w mut String,
    field: &'w [u8],
    base: u32,
}

fn quoted(out: &mut String, s: &str) {
    out.push('"');
    crate::view::escape::push_escaped(out, s);
    out.push('"');
}

/// Hex of the first [`BYTES_SHOWN`] bytes, `…` after them; `null` for none.
fn bytes(out: &mut String, b: Option<&[u8]>) {
    let Some(b) = b else {
        out.push_str("null");
        return;
    };
    let shown = b.get(..BYTES_SHOWN).unwrap_or(b);
    let mut hex = [[0u8; 2]; BYTES_SHOWN];
    // Whole pairs assigned, not copied as slices (a call per byte).
    for (pair, &x) in hex.iter_mut().zip(shown) {
        *pair = crate::view::labels::HEX_PAIRS.get(usize::from(x)).copied().unwrap_or(*b"??");
    }
    let hex = hex.as_flattened();
    // Hex digits are ASCII.
    out.push_str(std::str::from_utf8(hex.get(..shown.len() * 2).unwrap_or_default()).unwrap_or_default());
    if b.len() > BYTES_SHOWN {
        out.push('…');
    }
}

