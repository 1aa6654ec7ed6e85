//! The value tree: every decoded node with its value and byte range.
//!
//! Nodes live in one flat vector in pre-order, so a whole message costs a
//! single allocation; `next` points past a node's subtree.
#![cfg_attr(
    not(test),
    deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)
)]

/// A decoded value. Strings and bytes borrow from the frame.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Value<'a> {
    /// A container (message, header, struct, element struct).
    None,
    Int(i64),
    Float(f64),
    Bool(bool),
    Uuid([u8; 16]),
    Str(Option<&'a str>),
    Bytes(Option<&'a [u8]>),
    /// An array's element count; `None` for a null array.
    Array(Option<u32>),
}

/// How a length-prefixed value was framed on the wire, for display.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Prefix {
    None,
    /// Compact: uvarint holding length + 1 (0 means null).
    Compact(u32),
    /// Classic int16 length (-1 means null).
    Int16(i16),
    /// Classic int32 length (-1 means null).
    Int32(i32),
}

/// What a node stands for in the message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// The whole frame.
    Message,
    /// The 4-byte size prefix group.
    Frame,
    /// The size prefix itself.
    Size,
    /// Request or response header.
    Header,
    /// The message body struct.
    Body,
    /// A schema field (shown in JSON under its name).
    Field,
    /// An element of an array.
    Element,
    /// An array's length prefix.
    Length,
    /// The tagged-field section of a struct.
    TaggedFields,
    /// The count at the start of a non-empty tagged-field section.
    TagCount,
    /// One tagged field: tag, size, and a known field inside.
    Tagged(u32),
    /// The tag or size uvarint of a tagged field.
    TagMeta,
    /// A tagged field the schema does not name.
    UnknownTagged(u32),
    /// Bytes kwire does not dissect (unknown API or version, or undecodable).
    Raw,
}

/// A node's name, type and description. Every node of a kind (a schema field's, an
/// array's length, ...) has the same three, so nodes point at one shared label: a node
/// is smaller by five words, and a decode writes fewer bytes per node.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Label {
    pub name: &'static str,
    pub ty: &'static str,
    pub about: &'static str,
}

impl Label {
    pub const fn new(name: &'static str, ty: &'static str, about: &'static str) -> Self {
        Label { name, ty, about }
    }
}

/// The one label with these three strings, made once and kept for the process: for
/// labels put together at run time (from schema names), looked up once per schema
/// resolution or per rare node, not per common node.
pub fn label(name: &'static str, ty: &'static str, about: &'static str) -> &'static Label {
    type Labels = std::collections::HashMap<(&'static str, &'static str, &'static str), &'static Label>;
    static LABELS: std::sync::LazyLock<std::sync::Mutex<Labels>> =
        std::sync::LazyLock::new(Default::default);
    let mut labels = LABELS.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    labels
        .entry((name, ty, about))
        .or_insert_with(|| Box::leak(Box::new(Label { name, ty, about })))
}

/// One node of the tree.
#[derive(Clone, Debug, PartialEq)]
pub struct Node<'a> {
    /// Name, type and description.
    pub label: &'static Label,
    /// Element index, rendered as `name[index]`.
    pub index: Option<u32>,
    pub value: Value<'a>,
    pub prefix: Prefix,
    /// Offset from the first byte of the size prefix.
    pub offset: u32,
    pub len: u32,
    pub role: Role,
    pub depth: u16,
    /// Index of the first node after this node's subtree.
    pub next: u32,
}

impl Node<'_> {
    #[inline(always)]
    pub fn name(&self) -> &'static str {
        self.label.name
    }

    #[inline(always)]
    pub fn ty(&self) -> &'static str {
        self.label.ty
    }

    #[inline(always)]
    pub fn about(&self) -> &'static str {
        self.label.about
    }
}

/// Node lists kept for reuse beyond this many nodes are dropped instead, so one huge
/// message does not hold its memory for the rest of the run.
const SPARE_MAX: usize = 1 << 12;

thread_local! {
    /// A finished message's node list, emptied, for the next decode on this thread.
    static SPARE: std::cell::Cell<Vec<Node<'static>>> = const { std::cell::Cell::new(Vec::new()) };
}

/// Hands a message's node list back once nothing reads it, so the next decode on this
/// thread reuses its memory instead of allocating (and growing) a list per message.
pub fn recycle(mut nodes: Vec<Node<'_>>) {
    if nodes.capacity() > SPARE_MAX {
        return;
    }
    nodes.clear();
    // Emptied, the list borrows nothing: collecting it in place keeps its allocation
    // under the longer lifetime.
    // (`filter` cannot change the element type, which is the point.)
    #[allow(clippy::unnecessary_filter_map)]
    let empty: Vec<Node<'static>> = nodes.into_iter().filter_map(|_| None).collect();
    if empty.capacity() > 0 {
        SPARE.with(|s| s.set(empty));
    }
}

/// An empty node list: the one last recycled on this thread, else a new one.
pub(crate) fn spare_nodes<'a>() -> Vec<Node<'a>> {
    let v = SPARE.with(|s| s.take());
    if v.capacity() == 0 {
        Vec::with_capacity(32)
    } else {
        v
    }
}

/// A decoded message as a flat pre-order tree.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Tree<'a> {
    pub nodes: Vec<Node<'a>>,
}

impl<'a> Tree<'a> {
    pub fn root(&self) -> Option<&Node<'a>> {
        self.nodes.first()
    }

    /// Indices of the direct children of node `i`.
    pub fn children(&self, i: usize) -> Children<'_, 'a> {
        let end = self.nodes.get(i).map_or(0, |n| n.next as usize);
        Children {
            tree: self,
            at: i + 1,
            end,
        }
    }

    /// The first direct child of `i` with this role.
    pub fn child_with_role(&self, i: usize, role: Role) -> Option<usize> {
        self.children(i)
            .find(|&c| self.nodes.get(c).is_some_and(|n| n.role == role))
    }

    /// The first direct child field of `i` named `name`, looking inside known tagged fields too.
    pub fn field(&self, i: usize, name: &str) -> Option<usize> {
        let named = |c: &usize| self.nodes.get(*c).is_some_and(|n| same_name(n.name(), name));
        // The children walked by hand: each node is looked up once, not three times.
        let end = self.nodes.get(i)?.next as usize;
        let mut c = i + 1;
        while c < end {
            let n = self.nodes.get(c)?;
            match n.role {
                Role::Field if same_name(n.name(), name) => return Some(c),
                Role::TaggedFields => {
                    let inner = self
                        .children(c)
                        .filter_map(|t| self.child_with_role(t, Role::Field))
                        .find(named);
                    if inner.is_some() {
                        return inner;
                    }
                }
                _ => {}
            }
            c = n.next as usize;
        }
        None
    }

    /// The fields of struct node `i`, for reading several: see [`FieldCursor`].
    pub fn fields(&self, i: usize) -> FieldCursor<'_, 'a> {
        let end = self.nodes.get(i).map_or(0, |n| n.next as usize);
        FieldCursor {
            tree: self,
            first: i + 1,
            end,
            at: std::cell::Cell::new(i + 1),
        }
    }

    /// The first child field named `name` among the children of a struct from `c` up to
    /// `end`, looking inside known tagged fields too; with where the next lookup may start.
    fn field_between(&self, mut c: usize, end: usize, name: &str) -> Option<(usize, usize)> {
        while c < end {
            let n = self.nodes.get(c)?;
            match n.role {
                Role::Field if same_name(n.name(), name) => return Some((c, n.next as usize)),
                Role::TaggedFields => {
                    let inner = self
                        .children(c)
                        .filter_map(|t| self.child_with_role(t, Role::Field))
                        .find(|f| self.nodes.get(*f).is_some_and(|n| same_name(n.name(), name)));
                    // A tagged field may come twice: the next lookup starts at the
                    // section again, so each finds the first of its name.
                    if let Some(f) = inner {
                        return Some((f, c));
                    }
                }
                _ => {}
            }
            c = n.next as usize;
        }
        None
    }

    /// The integer of node `at`, if it is one.
    pub fn int_at(&self, at: Option<usize>) -> Option<i64> {
        match self.nodes.get(at?)?.value {
            Value::Int(v) => Some(v),
            _ => None,
        }
    }

    /// The bool of node `at`, if it is one.
    pub fn bool_at(&self, at: Option<usize>) -> Option<bool> {
        match self.nodes.get(at?)?.value {
            Value::Bool(b) => Some(b),
            _ => None,
        }
    }

    /// The string of node `at`, if it is one: `Some(None)` when the wire says null.
    pub fn str_at(&self, at: Option<usize>) -> Option<Option<&'a str>> {
        match self.nodes.get(at?)?.value {
            Value::Str(s) => Some(s),
            _ => None,
        }
    }

    /// The element nodes of array node `at` (none when `at` is None).
    pub fn elems_at(&self, at: Option<usize>) -> impl Iterator<Item = usize> + '_ {
        let children = match at {
            Some(a) => self.children(a),
            None => Children {
                tree: self,
                at: 0,
                end: 0,
            },
        };
        children.filter(|&c| self.nodes.get(c).is_some_and(|n| n.index.is_some()))
    }

    pub fn body(&self) -> Option<usize> {
        self.child_with_role(0, Role::Body)
    }

    /// The integer in field `name` under `parent`, if it is one.
    pub fn int(&self, parent: usize, name: &str) -> Option<i64> {
        match self.nodes.get(self.field(parent, name)?)?.value {
            Value::Int(v) => Some(v),
            _ => None,
        }
    }

    /// The bool in field `name` under `parent`, if it is one.
    pub fn bool(&self, parent: usize, name: &str) -> Option<bool> {
        match self.nodes.get(self.field(parent, name)?)?.value {
            Value::Bool(b) => Some(b),
            _ => None,
        }
    }

    /// The string in field `name` under `parent`: `Some(None)` when the wire says null.
    pub fn str(&self, parent: usize, name: &str) -> Option<Option<&'a str>> {
        match self.nodes.get(self.field(parent, name)?)?.value {
            Value::Str(s) => Some(s),
            _ => None,
        }
    }

    /// The element nodes of the array field `name` under `parent`.
    pub fn elements(&self, parent: usize, name: &str) -> Vec<usize> {
        self.elems(parent, name).collect()
    }

    /// As [`Tree::elements`], without collecting them.
    pub fn elems(&self, parent: usize, name: &str) -> impl Iterator<Item = usize> + '_ {
        self.elems_at(self.field(parent, name))
    }
}

impl<'a> Tree<'a> {
    /// Every error code under node `i` at any depth (fields named `ErrorCode` or
    /// `…ErrorCode`), with the field's name, in wire order.
    pub fn error_codes(&self, i: usize) -> Vec<(&'static str, i64)> {
        let end = self.nodes.get(i).map_or(0, |n| n.next as usize);
        self.nodes
            .get(i + 1..end)
            .unwrap_or_default()
            .iter()
            .filter(|n| n.role == Role::Field && n.name().ends_with("ErrorCode"))
            .filter_map(|n| match n.value {
                Value::Int(c) => Some((n.name(), c)),
                _ => None,
            })
            .collect()
    }

    /// The scalar fields directly under node `i` (known tagged ones too), in wire
    /// order: what a generic one-line summary can show.
    pub fn scalars(&self, i: usize) -> Vec<(&'static str, Value<'a>)> {
        let mut out = Vec::new();
        for c in self.children(i) {
            let Some(n) = self.nodes.get(c) else { continue };
            let field = match n.role {
                Role::Field => Some(n),
                Role::TaggedFields => {
                    for t in self.children(c) {
                        if let Some(f) = self
                            .child_with_role(t, Role::Field)
                            .and_then(|f| self.nodes.get(f))
                            .filter(|f| is_scalar(f.value))
                        {
                            out.push((f.name(), f.value));
                        }
                    }
                    None
                }
                _ => None,
            };
            if let Some(f) = field.filter(|f| is_scalar(f.value)) {
                out.push((f.name(), f.value));
            }
        }
        out
    }
}

impl Tree<'_> {
    /// The wire bytes of every redacted value (offset from the size prefix, length): what a
    /// view showing raw bytes (a hex pane) must mask too.
    pub fn redacted_ranges(&self) -> Vec<(usize, usize)> {
        self.nodes
            .iter()
            .filter_map(|n| match n.value {
                Value::Str(Some(s)) => {
                    let hidden = super::redact::redacted_len(s)?;
                    // The value is the node's last bytes, after its length prefix.
                    let end = n.offset as usize + n.len as usize;
                    Some((end.checked_sub(hidden)?, hidden))
                }
                _ => None,
            })
            .collect()
    }
}

/// The fields of one struct, looked up by name as [`Tree::field`] does, each lookup
/// starting after the field found last: fields read in wire order cost one comparison
/// each. A struct's fields have distinct names (its schema's), and a lookup that does not
/// find its name there goes on from the first field, so each finds what
/// [`Tree::field`] finds.
pub struct FieldCursor<'t, 'a> {
    tree: &'t Tree<'a>,
    first: usize,
    end: usize,
    at: std::cell::Cell<usize>,
}

impl<'a> FieldCursor<'_, 'a> {
    /// The field node named `name`.
    #[inline]
    pub fn get(&self, name: &str) -> Option<usize> {
        let at = self.at.get();
        // The field after the last one found: where a struct read in wire order is.
        if let Some(n) = self.tree.nodes.get(at)
            && at < self.end
            && n.role == Role::Field
            && same_name(n.name(), name)
        {
            self.at.set(n.next as usize);
            return Some(at);
        }
        self.find(name)
    }

    /// [`FieldCursor::get`] past the next field.
    fn find(&self, name: &str) -> Option<usize> {
        let at = self.at.get();
        let (f, next) = self
            .tree
            .field_between(at, self.end, name)
            .or_else(|| self.tree.field_between(self.first, at.min(self.end), name))?;
        self.at.set(next);
        Some(f)
    }

    /// The integer in field `name`, if it is one.
    pub fn int(&self, name: &str) -> Option<i64> {
        self.tree.int_at(self.get(name))
    }

    /// The bool in field `name`, if it is one.
    pub fn bool(&self, name: &str) -> Option<bool> {
        self.tree.bool_at(self.get(name))
    }

    /// The string in field `name`: `Some(None)` when the wire says null.
    pub fn str(&self, name: &str) -> Option<Option<&'a str>> {
        self.tree.str_at(self.get(name))
    }
}

/// Names are compared often and mostly differ: length and first byte settle most
/// without a call to `memcmp`.
#[inline]
fn same_name(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() || a.first() != b.first() {
        return false;
    }
    // Up to 16 bytes (most names): two overlapping words each, compared in place.
    if a.len() <= 16 {
        if let Some(eq) = ends_equal::<8>(a, b).or_else(|| ends_equal::<4>(a, b)) {
            return eq;
        }
        return a.iter().zip(b).all(|(x, y)| x == y);
    }
    a == b
}

/// Whether the first and last `N` bytes agree; None when shorter than `N`.
#[inline(always)]
fn ends_equal<const N: usize>(a: &[u8], b: &[u8]) -> Option<bool> {
    Some(a.first_chunk::<N>()? == b.first_chunk::<N>()? && a.last_chunk::<N>()? == b.last_chunk::<N>()?)
}

fn is_scalar(v: Value<'_>) -> bool {
    matches!(
        v,
        Value::Int(_) | Value::Float(_) | Value::Bool(_) | Value::Uuid(_) | Value::Str(_)
    )
}

/// Iterator over a node's direct children.
pub struct Children<'t, 'a> {
    tree: &'t Tree<'a>,
    at: usize,
    end: usize,
}

impl Iterator for Children<'_, '_> {
    type Item = usize;
    fn next(&mut self) -> Option<usize> {
        if self.at >= self.end {
            return None;
        }
        let i = self.at;
        self.at = self.tree.nodes.get(i).map_or(self.end, |n| n.next as usize);
        Some(i)
    }
}

#[cfg(test)]
mod spare_tests {
    use super::*;

    #[test]
    fn a_node_stays_small() {
        // Every built field pushes one: its size is stores per field on the hot path.
        assert!(std::mem::size_of::<Node<'_>>() <= 72);
    }

    #[test]
    fn names_compare_as_strings_do() {
        let names = [
            "", "a", "b", "ab", "abc", "abd", "Key", "Host", "Port", "Hosz", "NodeId",
            "NodeIe", "KeyType", "ErrorCode", "ErrorCodf", "client_id", "correlation_id",
            "correlation_ie", "xorrelation_id", "ThrottleTimeMs", "sixteen_bytes_xx",
            "sixteen_bytes_xy", "seventeen_bytes_x", "seventeen_bytes_y", "заказы",
        ];
        for a in names {
            for b in names {
                assert_eq!(same_name(a, b), a == b, "{a:?} {b:?}");
            }
        }
    }

    #[test]
    fn a_cursor_finds_what_field_finds_in_any_order() {
        let node = |name, role, depth, next| Node {
            label: label(name, "int32", ""),
            index: None,
            value: Value::Int(next as i64),
            prefix: Prefix::None,
            offset: 0,
            len: 0,
            role,
            depth,
            next,
        };
        // A struct with fields A and B, then a tagged section where tag T comes twice.
        let t = Tree {
            nodes: vec![
                node("s", Role::Body, 0, 8),
                node("A", Role::Field, 1, 2),
                node("B", Role::Field, 1, 3),
                node("_tagged", Role::TaggedFields, 1, 8),
                node("t", Role::Tagged(0), 2, 6),
                node("T", Role::Field, 3, 6),
                node("t", Role::Tagged(0), 2, 8),
                node("T", Role::Field, 3, 8),
            ],
        };
        let names = ["A", "B", "T", "X"];
        for a in names {
            for b in names {
                for c in names {
                    for d in names {
                        let f = t.fields(0);
                        for n in [a, b, c, d] {
                            assert_eq!(f.get(n), t.field(0, n), "{a} {b} {c} {d}: {n}");
                        }
                    }
                }
            }
        }
        assert_eq!(t.field(0, "T"), Some(5));
    }

    #[test]
    fn a_recycled_list_comes_back_empty_with_its_memory() {
        let text = String::from("borrowed");
        let mut nodes = spare_nodes();
        nodes.push(Node {
            label: const { &Label::new("n", "string", "") },
            index: None,
            value: Value::Str(Some(text.as_str())),
            prefix: Prefix::None,
            offset: 0,
            len: 0,
            role: Role::Field,
            depth: 0,
            next: 1,
        });
        let cap = nodes.capacity();
        recycle(nodes);
        drop(text);
        let again = spare_nodes();
        assert!(again.is_empty());
        assert_eq!(again.capacity(), cap);
        // Taken: the next one is new.
        assert!(spare_nodes().capacity() >= 32);
    }
}
