//! The schema walker: one decoder for any (schema, version).
//!
//! It records every field as a [`Node`] with its byte range. Declared lengths
//! are checked against the bytes present before anything is taken, and counts
//! never drive allocation.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use super::error::{DecodeError, ErrorKind};
use super::need::{Act, Plan, act_at};
use super::redact;
use super::schema::{Field, Prim};
use super::tree::{Label, Node, Prefix, Role, Value};
use super::{Codec, DecodeOptions};
use crate::proto::Kind;

mod envelope;
mod layout;
mod sasl;
mod tagged;

pub(crate) use envelope::ENVELOPE;
pub(crate) use layout::{Layout, Op, Step, layout_of};

/// A walk's result. The error is boxed: errors are rare, and a small `Err` keeps every
/// `Res` small enough to come back in registers.
pub(crate) type Res<'a, T> = Result<(&'a [u8], T), Box<DecodeError>>;

/// The label of a struct's tagged section, and of the header's.
pub(crate) const TAGS_IN_STRUCT: &Label = &Label::new(
    "tagged_fields",
    "uvarint",
    "number of tagged fields in this struct",
);
pub(crate) const TAGS_IN_HEADER: &Label = &Label::new(
    "tagged_fields",
    "uvarint",
    "number of tagged fields in the header",
);
pub(crate) const SIZE_GROUP: &str = "Frame";
pub(crate) const SIZE_GROUP_ABOUT: &str = "length-delimited framing";
pub(crate) const SIZE_GROUP_LABEL: &Label = &Label::new(SIZE_GROUP, "", SIZE_GROUP_ABOUT);

/// Builds the flat node list while walking a frame.
pub(crate) struct Walker<'a> {
    frame: &'a [u8],
    pub nodes: Vec<Node<'a>>,
    /// How many containers are open (the depth of the next node).
    depth: u16,
    /// The innermost container not yet closed (its node's index + 1; 0 for none), so an
    /// error can close them where it struck. While open, a container's `next` holds the
    /// one around it: the open ones form a chain through the nodes, with no stack to keep.
    top: u32,
    options: DecodeOptions,
    codec: Codec,
    /// The API whose body is being walked, for fields with a meaning beyond their
    /// type (Envelope's embedded message).
    pub api_key: Option<i16>,
    /// Inside an Envelope's embedded message: envelopes do not nest.
    in_envelope: bool,
    /// Nodes are built; when false, fields are walked and checked only (see [`super::Need`]).
    pub build: bool,
    /// A projected decode: the nodes no field reader looks at (lengths, tag metadata,
    /// unknown tags) are left out.
    pub lean: bool,
}

impl<'a> Walker<'a> {
    pub fn new(frame: &'a [u8], codec: Codec) -> Self {
        Walker {
            options: codec.options,
            codec,
            api_key: None,
            in_envelope: false,
            build: true,
            lean: false,
            frame,
            nodes: super::tree::spare_nodes(),
            depth: 0,
            top: 0,
        }
    }

    /// Offset of `rest` from the start of the frame (`rest` is always a sub-slice).
    pub fn off(&self, rest: &[u8]) -> usize {
        (rest.as_ptr() as usize).wrapping_sub(self.frame.as_ptr() as usize)
    }

    /// An error at `rest`. Its field path is added on the way out, by each struct and
    /// list the error passes through ([`DecodeError::within`]): the walk keeps no path.
    #[cold]
    #[inline(never)]
    pub fn err(&self, rest: &[u8], kind: ErrorKind) -> Box<DecodeError> {
        Box::new(DecodeError {
            kind,
            path: String::new(),
            offset: self.off(rest),
        })
    }

    #[cold]
    #[inline(never)]
    fn truncated(&self, rest: &[u8], need: usize) -> Box<DecodeError> {
        self.err(
            rest,
            ErrorKind::Truncated {
                need: need as u64,
                have: rest.len() as u64,
            },
        )
    }

    /// Starts a container node at `at`; children follow until [`Walker::close`].
    #[allow(clippy::too_many_arguments)]
    #[inline]
    pub fn open(
        &mut self,
        at: &[u8],
        label: &'static Label,
        index: Option<u32>,
        value: Value<'a>,
        role: Role,
    ) -> usize {
        let idx = self.nodes.len();
        if !self.build {
            return idx;
        }
        self.nodes.push(Node {
            label,
            index,
            value,
            prefix: Prefix::None,
            offset: self.off(at) as u32,
            len: 0,
            role,
            depth: self.depth,
            // The chain of open containers, until `close` sets it.
            next: self.top,
        });
        self.depth += 1;
        self.top = idx as u32 + 1;
        idx
    }

    /// Ends the innermost open container at `rest`.
    pub fn close(&mut self, rest: &[u8]) {
        if !self.build || self.depth == 0 {
            return;
        }
        let end = self.off(rest) as u32;
        self.pop(end);
    }

    /// Closes the innermost open container, ending at offset `end`.
    #[inline]
    fn pop(&mut self, end: u32) {
        let next = self.nodes.len() as u32;
        self.depth = self.depth.saturating_sub(1);
        let at = self.top.checked_sub(1).map(|i| i as usize);
        match at.and_then(|i| self.nodes.get_mut(i)) {
            Some(n) => {
                n.len = end.saturating_sub(n.offset);
                self.top = n.next;
                n.next = next;
            }
            None => self.top = 0,
        }
    }

    /// After an error, closes open containers at `offset` until `keep` remain open.
    pub fn close_to(&mut self, keep: usize, offset: usize) {
        while usize::from(self.depth) > keep {
            self.pop(offset as u32);
        }
    }

    /// Records a leaf spanning `from` up to `to`.
    #[allow(clippy::too_many_arguments)]
    #[inline]
    pub fn leaf(
        &mut self,
        from: &[u8],
        to: &[u8],
        label: &'static Label,
        index: Option<u32>,
        value: Value<'a>,
        prefix: Prefix,
        role: Role,
    ) {
        if !self.build
            || (self.lean
                && matches!(
                    role,
                    Role::Length
                        | Role::TagCount
                        | Role::TagMeta
                        | Role::TaggedFields
                        | Role::UnknownTagged(_)
                ))
        {
            return;
        }
        self.push_leaf(from, to, label, index, value, prefix, role);
    }

    /// [`Walker::leaf`] once it is known to be built.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn push_leaf(
        &mut self,
        from: &[u8],
        to: &[u8],
        label: &'static Label,
        index: Option<u32>,
        value: Value<'a>,
        prefix: Prefix,
        role: Role,
    ) {
        let offset = self.off(from) as u32;
        let end = self.off(to) as u32;
        let next = self.nodes.len() as u32 + 1;
        self.nodes.push(Node {
            label,
            index,
            value,
            prefix,
            offset,
            len: end.saturating_sub(offset),
            role,
            depth: self.depth,
            next,
        });
    }

    /// The size prefix's Frame group and its int32 `size` leaf, from `from` up to `to`,
    /// as [`Walker::open`], [`Walker::leaf`] and [`Walker::close`] build them, at once.
    /// A projected (lean) tree has neither: no reader of fields looks at them.
    pub fn size_prefix_nodes(&mut self, from: &[u8], to: &[u8], size: i32) {
        if !self.build || self.lean {
            return;
        }
        let offset = self.off(from) as u32;
        let len = (self.off(to) as u32).saturating_sub(offset);
        let next = self.nodes.len() as u32 + 2;
        let depth = self.depth;
        self.nodes.push(Node {
            label: SIZE_GROUP_LABEL,
            index: None,
            value: Value::None,
            prefix: Prefix::None,
            offset,
            len,
            role: Role::Frame,
            depth,
            next,
        });
        self.nodes.push(Node {
            label: const { &Label::new("size", "int32", "number of bytes that follow") },
            index: None,
            value: Value::Int(size.into()),
            prefix: Prefix::None,
            offset,
            len,
            role: Role::Size,
            depth: depth.saturating_add(1),
            next,
        });
    }

    // ---- primitives ----
    // Read with `split_first_chunk` / `split_at_checked`: a length check and a load, and
    // the error built out of line, so the hot path stays small.

    pub fn take(&self, i: &'a [u8], n: usize) -> Res<'a, &'a [u8]> {
        match i.split_at_checked(n) {
            Some((data, rest)) => Ok((rest, data)),
            None => Err(self.truncated(i, n)),
        }
    }

    /// The next `N` bytes.
    #[inline(always)]
    fn bytes<const N: usize>(&self, i: &'a [u8]) -> Res<'a, [u8; N]> {
        match i.split_first_chunk::<N>() {
            Some((b, rest)) => Ok((rest, *b)),
            None => Err(self.truncated(i, N)),
        }
    }

    pub fn i16(&self, i: &'a [u8]) -> Res<'a, i16> {
        self.bytes::<2>(i).map(|(r, b)| (r, i16::from_be_bytes(b)))
    }

    pub fn i32(&self, i: &'a [u8]) -> Res<'a, i32> {
        self.bytes::<4>(i).map(|(r, b)| (r, i32::from_be_bytes(b)))
    }

    /// Unsigned LEB128 varint, at most 5 bytes, as Kafka writes lengths and tags.
    pub fn uvarint(&self, i: &'a [u8]) -> Res<'a, u32> {
        // Most lengths and counts are below 128: one byte.
        if let Some((&b, rest)) = i.split_first() {
            if b & 0x80 == 0 {
                return Ok((rest, u32::from(b)));
            }
        }
        self.uvarint_long(i)
    }

    #[inline(never)]
    fn uvarint_long(&self, i: &'a [u8]) -> Res<'a, u32> {
        let mut value: u64 = 0;
        let mut rest = i;
        for shift in (0..35).step_by(7) {
            let Some((&b, r)) = rest.split_first() else {
                return Err(self.truncated(rest, 1));
            };
            rest = r;
            value |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return u32::try_from(value)
                    .map(|v| (rest, v))
                    .map_err(|_| self.err(i, ErrorKind::LengthOverflow(value)));
            }
        }
        Err(self.err(i, ErrorKind::VarintTooLong))
    }

    /// Reads one primitive value; `compact` selects the flexible length encodings.
    /// Inlined whole: the value then goes straight into its node.
    #[inline(always)]
    fn prim(
        &self,
        i: &'a [u8],
        p: Prim,
        compact: bool,
        nullable: bool,
    ) -> Res<'a, (Value<'a>, Prefix)> {
        let v = match p {
            Prim::Bool => self.bytes::<1>(i).map(|(r, b)| (r, Value::Bool(b != [0]))),
            Prim::Int8 => self
                .bytes::<1>(i)
                .map(|(r, b)| (r, Value::Int(i8::from_be_bytes(b).into()))),
            Prim::Int16 => self
                .bytes::<2>(i)
                .map(|(r, b)| (r, Value::Int(i16::from_be_bytes(b).into()))),
            Prim::Uint16 => self
                .bytes::<2>(i)
                .map(|(r, b)| (r, Value::Int(u16::from_be_bytes(b).into()))),
            Prim::Int32 => self
                .bytes::<4>(i)
                .map(|(r, b)| (r, Value::Int(i32::from_be_bytes(b).into()))),
            Prim::Int64 => self
                .bytes::<8>(i)
                .map(|(r, b)| (r, Value::Int(i64::from_be_bytes(b)))),
            Prim::Float64 => self
                .bytes::<8>(i)
                .map(|(r, b)| (r, Value::Float(f64::from_be_bytes(b)))),
            Prim::Uuid => self.bytes::<16>(i).map(|(r, b)| (r, Value::Uuid(b))),
            Prim::String | Prim::Bytes | Prim::Records => {
                return self.prim_var(i, p, compact, nullable);
            }
        };
        v.map(|(rest, v)| (rest, (v, Prefix::None)))
    }

    /// [`Walker::prim`]'s length-prefixed types, out of line.
    #[inline(never)]
    fn prim_var(
        &self,
        i: &'a [u8],
        p: Prim,
        compact: bool,
        nullable: bool,
    ) -> Res<'a, (Value<'a>, Prefix)> {
        if p == Prim::String {
            let (rest, (data, prefix)) = self.length_prefixed(i, compact, true, nullable)?;
            let s = match data {
                // Unbuilt, the string is only checked (its value goes nowhere): most are
                // ASCII, which a word-at-a-time test settles.
                Some(d) if !self.build => {
                    if !d.is_ascii() && std::str::from_utf8(d).is_err() {
                        return Err(self.err(i, ErrorKind::InvalidUtf8));
                    }
                    None
                }
                Some(d) => {
                    Some(std::str::from_utf8(d).map_err(|_| self.err(i, ErrorKind::InvalidUtf8))?)
                }
                None => None,
            };
            Ok((rest, (Value::Str(s), prefix)))
        } else {
            let (rest, (data, prefix)) = self.length_prefixed(i, compact, false, nullable)?;
            Ok((rest, (Value::Bytes(data), prefix)))
        }
    }

    /// A length (compact uvarint, or int16 for strings / int32 for bytes) then the data.
    #[inline(always)]
    fn length_prefixed(
        &self,
        i: &'a [u8],
        compact: bool,
        short: bool,
        nullable: bool,
    ) -> Res<'a, (Option<&'a [u8]>, Prefix)> {
        let (rest, len, prefix) = if compact {
            let (rest, n) = self.uvarint(i)?;
            let len = i64::from(n) - 1;
            (rest, len, Prefix::Compact(n))
        } else if short {
            let (rest, n) = self.i16(i)?;
            (rest, i64::from(n), Prefix::Int16(n))
        } else {
            let (rest, n) = self.i32(i)?;
            (rest, i64::from(n), Prefix::Int32(n))
        };
        match len {
            -1 if nullable => Ok((rest, (None, prefix))),
            -1 => Err(self.err(i, ErrorKind::UnexpectedNull)),
            n if n < 0 => Err(self.err(i, ErrorKind::NegativeLength(n))),
            n => {
                // Checked against the bytes present before taking: no allocation either way.
                let n = usize::try_from(n)
                    .map_err(|_| self.err(i, ErrorKind::LengthOverflow(n as u64)))?;
                let (rest, data) = self.take(rest, n)?;
                Ok((rest, (Some(data), prefix)))
            }
        }
    }

    /// The string at the start of `i` (length-prefixed as `compact` says; `None` when
    /// null) and the bytes after it, when it decodes as the walk decodes it.
    pub fn string(
        &self,
        i: &'a [u8],
        compact: bool,
        nullable: bool,
    ) -> Option<(&'a [u8], Option<&'a str>)> {
        let (rest, (data, _)) = self.length_prefixed(i, compact, true, nullable).ok()?;
        match data {
            Some(d) => Some((rest, Some(std::str::from_utf8(d).ok()?))),
            None => Some((rest, None)),
        }
    }

    /// An array's count: `None` for null.
    fn array_count(
        &self,
        i: &'a [u8],
        compact: bool,
        nullable: bool,
    ) -> Res<'a, (Option<u32>, Prefix)> {
        let (rest, count, prefix) = if compact {
            let (rest, n) = self.uvarint(i)?;
            (rest, i64::from(n) - 1, Prefix::Compact(n))
        } else {
            let (rest, n) = self.i32(i)?;
            (rest, i64::from(n), Prefix::Int32(n))
        };
        match count {
            -1 if nullable => Ok((rest, (None, prefix))),
            -1 => Err(self.err(i, ErrorKind::UnexpectedNull)),
            n if n < 0 => Err(self.err(i, ErrorKind::NegativeLength(n))),
            n => Ok((rest, (Some(n as u32), prefix))),
        }
    }

    // ---- structure ----

    /// Decodes the non-tagged fields of a struct, then its tagged section when flexible.
    pub fn fields(
        &mut self,
        mut i: &'a [u8],
        l: &Layout,
        tags: &'static Label,
        plan: Plan<'_>,
    ) -> Res<'a, ()> {
        let mut steps = l.steps.iter();
        while let Some(s) = steps.next() {
            // Unbuilt, fixed-size fields in a row need only their bytes: one check for
            // all (short of them, field by field finds the error a full decode finds).
            if let (false, (n, count @ 2..)) = (self.build, s.run) {
                if let Some(rest) = i.get(n..) {
                    i = rest;
                    // `s` is the run's first: past the other `count - 1`.
                    steps.nth(count - 2);
                    continue;
                }
            }
            // Most fields are primitives: those are read here, without `field`'s frame.
            // A skipped one is walked unbuilt, as `field_as` does.
            let r = match &s.op {
                Op::Fixed(p, n) => {
                    let build = self.build && builds(plan, s.k);
                    self.fixed(i, s.f, *p, *n, build)
                }
                Op::Var {
                    p,
                    compact,
                    nullable,
                } => {
                    let build = self.build && builds(plan, s.k);
                    self.var(i, s.f, *p, (*compact, *nullable), build)
                }
                _ if plan.is_none() => self.field(i, s, None, false),
                _ => self.field_as(i, s, act_at(plan, s.k)),
            };
            i = r.map_err(|e| e.within(&s.f.name))?.0;
        }
        if l.flexible {
            i = match i.split_first() {
                // Most sections are empty: one zero byte, with no node unbuilt or lean.
                Some((0, rest)) if !self.build || self.lean => rest,
                _ => self.tagged_section(i, l, tags, plan)?.0,
            };
        }
        Ok((i, ()))
    }

    /// The bytes after `i` when `l` has no fields and, when flexible, its tagged section
    /// is empty, walked unbuilt (no node) as [`Walker::fields`] walks it; else `None`.
    #[inline(always)]
    pub fn past_empty(&self, i: &'a [u8], l: &Layout) -> Option<&'a [u8]> {
        // A built, full walk has a node for the section.
        if !l.steps.is_empty() || (self.build && !self.lean) {
            return None;
        }
        match (l.flexible, i.split_first()) {
            (false, _) => Some(i),
            (true, Some((0, rest))) => Some(rest),
            _ => None,
        }
    }

    /// One field as `act` says: skipped fields are walked all the same, unbuilt, so
    /// that their errors are the errors a full decode finds.
    #[inline]
    pub fn field_as(&mut self, i: &'a [u8], s: &Step, act: &Act) -> Res<'a, ()> {
        match act {
            Act::Build => self.field(i, s, None, false),
            Act::Node => self.field(i, s, None, true),
            Act::Into(sub) => self.field(i, s, Some(sub), false),
            Act::Skip if !self.build => self.field(i, s, None, false),
            Act::Skip => {
                self.build = false;
                let r = self.field(i, s, None, false);
                // After an error the decode ends, and `finish` builds again.
                self.build = true;
                r
            }
        }
    }

    /// Decodes one field's value (whatever its type) as a node named after the field;
    /// a struct's fields (or a list's elements' fields) as `plan` says, and with `bare`
    /// none of them, only the field's node.
    pub fn field(&mut self, i: &'a [u8], s: &Step, plan: Plan<'_>, bare: bool) -> Res<'a, ()> {
        let f = s.f;
        match &s.op {
            Op::Fixed(p, n) => self.fixed(i, f, *p, *n, self.build),
            Op::Var {
                p,
                compact,
                nullable,
            } => self.var(i, f, *p, (*compact, *nullable), self.build),
            Op::Struct { nullable, sub } => {
                let mut at = i;
                if *nullable {
                    // A nullable struct starts with a marker byte: negative for null.
                    let (rest, (marker, _)) = self.prim(i, Prim::Int8, false, false)?;
                    if matches!(marker, Value::Int(m) if m < 0) {
                        self.leaf(
                            i,
                            rest,
                            &f.labels().node,
                            None,
                            Value::Str(None),
                            Prefix::None,
                            Role::Field,
                        );
                        return Ok((rest, ()));
                    }
                    at = rest;
                }
                self.open(i, &f.labels().node, None, Value::None, Role::Field);
                if *nullable {
                    self.leaf(
                        i,
                        at,
                        const { &Label::new("present", "int8", "nullable struct marker: not null") },
                        None,
                        Value::Int(1),
                        Prefix::None,
                        Role::TagMeta,
                    );
                }
                let built = self.build;
                self.build &= !bare;
                let (rest, ()) = self.fields(at, sub, TAGS_IN_STRUCT, plan)?;
                self.build = built;
                self.close(rest);
                Ok((rest, ()))
            }
            Op::ArrayOfPrim { .. } | Op::ArrayOfStruct { .. } => self.array(i, s, plan, bare),
        }
    }

    /// A field of fixed size, as [`Walker::field`] decodes it: built when `build`.
    #[inline(always)]
    fn fixed(
        &mut self,
        i: &'a [u8],
        f: &'static Field,
        p: Prim,
        n: usize,
        build: bool,
    ) -> Res<'a, ()> {
        // `prim`'s check, and its value read straight off the bytes.
        let Some((data, rest)) = i.split_at_checked(n) else {
            return Err(self.truncated(i, n));
        };
        if build {
            let value = fixed_value(p, data);
            self.field_leaf(i, rest, f, value, Prefix::None);
        }
        Ok((rest, ()))
    }

    /// A length-prefixed field, as [`Walker::field`] decodes it: built when `build`.
    #[inline(always)]
    fn var(
        &mut self,
        i: &'a [u8],
        f: &'static Field,
        p: Prim,
        (compact, nullable): (bool, bool),
        build: bool,
    ) -> Res<'a, ()> {
        let string = p == Prim::String;
        let (rest, (data, prefix)) = self.length_prefixed(i, compact, string, nullable)?;
        let value = match data {
            // Unbuilt, a string is only checked: most are ASCII, which a word-at-a-time
            // test settles.
            Some(d) if string && !build => {
                if !d.is_ascii() && std::str::from_utf8(d).is_err() {
                    return Err(self.err(i, ErrorKind::InvalidUtf8));
                }
                return Ok((rest, ()));
            }
            Some(d) if string => Value::Str(Some(
                std::str::from_utf8(d).map_err(|_| self.err(i, ErrorKind::InvalidUtf8))?,
            )),
            None if string => Value::Str(None),
            data => Value::Bytes(data),
        };
        if !build {
            return Ok((rest, ()));
        }
        self.field_leaf(i, rest, f, value, prefix);
        Ok((rest, ()))
    }

    /// A built field's node: a secret or an Envelope's message out of line, else a leaf.
    #[inline(always)]
    fn field_leaf(
        &mut self,
        i: &'a [u8],
        rest: &'a [u8],
        f: &'static Field,
        value: Value<'a>,
        prefix: Prefix,
    ) {
        if f.secret || self.api_key == Some(envelope::ENVELOPE) {
            self.special_leaf(i, rest, f, value, prefix);
        } else {
            // Built (the callers' `build`), and a field's node is in every tree.
            self.push_leaf(
                i,
                rest,
                &f.labels().node,
                None,
                value,
                prefix,
                Role::Field,
            );
        }
    }

    /// A built value with a meaning beyond its type: a secret (redacted, and SASL's user
    /// read from it) or an Envelope's embedded message. Out of line: rare.
    #[inline(never)]
    fn special_leaf(
        &mut self,
        i: &'a [u8],
        rest: &'a [u8],
        f: &'static Field,
        mut value: Value<'a>,
        prefix: Prefix,
    ) {
        let data = match value {
            Value::Bytes(Some(b)) => Some(b),
            Value::Str(Some(s)) => Some(s.as_bytes()),
            _ => None,
        };
        if let (true, false, Some(d)) = (f.secret, self.options.show_secrets, data) {
            value = Value::Str(Some(redact::redacted(d.len())));
        }
        self.leaf(
            i,
            rest,
            &f.labels().node,
            None,
            value,
            prefix,
            Role::Field,
        );
        // `AuthBytes` is always a secret: the flag spares a name compare per field.
        if f.secret && f.name == "AuthBytes" {
            self.sasl_user(rest, data.unwrap_or_default());
        }
        if self.api_key == Some(envelope::ENVELOPE) && !self.in_envelope {
            match (f.name.as_str(), data) {
                ("RequestData", Some(d)) => self.envelope_inner(d, Kind::Request),
                ("ResponseData", Some(d)) => self.envelope_inner(d, Kind::Response),
                _ => {}
            }
        }
    }

    fn array(&mut self, i: &'a [u8], s: &Step, plan: Plan<'_>, bare: bool) -> Res<'a, ()> {
        let f = s.f;
        let (compact, nullable, min) = match s.op {
            Op::ArrayOfPrim {
                compact,
                nullable,
                min,
                ..
            }
            | Op::ArrayOfStruct {
                compact,
                nullable,
                min,
                ..
            } => (compact, nullable, min),
            _ => (false, false, 1),
        };
        let (mut rest, (count, prefix)) = self.array_count(i, compact, nullable)?;
        if let Some(n) = count {
            // A claimed count must fit in what remains, so it cannot drive work or memory.
            let need = u64::from(n).saturating_mul(min.max(1) as u64);
            if need > rest.len() as u64 {
                return Err(self.err(
                    i,
                    ErrorKind::ImplausibleCount {
                        count: u64::from(n),
                        remaining: rest.len() as u64,
                    },
                ));
            }
        }
        let labels = f.labels();
        self.open(i, &labels.node, None, Value::Array(count), Role::Field);
        let length = if compact {
            const { &Label::new("length", "uvarint", "") }
        } else {
            const { &Label::new("length", "int32", "") }
        };
        self.leaf(
            i,
            rest,
            length,
            None,
            Value::Array(count),
            prefix,
            Role::Length,
        );
        let built = self.build;
        self.build &= !bare;
        for idx in 0..count.unwrap_or(0) {
            rest = match &s.op {
                Op::ArrayOfPrim { p, .. } => {
                    let (r, (value, prefix)) = self
                        .prim(rest, *p, compact, false)
                        .map_err(|e| e.at_index(idx))?;
                    self.leaf(
                        rest,
                        r,
                        &labels.elem,
                        Some(idx),
                        value,
                        prefix,
                        Role::Element,
                    );
                    r
                }
                Op::ArrayOfStruct { sub, .. } => {
                    self.open(rest, &labels.elem, Some(idx), Value::None, Role::Element);
                    let (r, ()) = self
                        .fields(rest, sub, TAGS_IN_STRUCT, plan)
                        .map_err(|e| e.at_index(idx))?;
                    self.close(r);
                    r
                }
                _ => rest,
            };
        }
        self.build = built;
        self.close(rest);
        Ok((rest, ()))
    }
}

/// Whether `plan` builds field `k` (of a primitive: anything but [`Act::Skip`]), as
/// [`act_at`] says, without a default act to compare with.
#[inline(always)]
fn builds(plan: Plan<'_>, k: usize) -> bool {
    match plan {
        None => true,
        Some(p) => !matches!(p.get(k), None | Some(Act::Skip)),
    }
}

/// The value of a fixed-size primitive from its `p.fixed_size()` bytes, as [`Walker::prim`]
/// reads it.
#[inline(always)]
fn fixed_value<'a>(p: Prim, data: &[u8]) -> Value<'a> {
    fn be<const N: usize>(data: &[u8]) -> [u8; N] {
        data.first_chunk::<N>().copied().unwrap_or([0; N])
    }
    match p {
        Prim::Bool => Value::Bool(be::<1>(data) != [0]),
        Prim::Int8 => Value::Int(i8::from_be_bytes(be(data)).into()),
        Prim::Int16 => Value::Int(i16::from_be_bytes(be(data)).into()),
        Prim::Uint16 => Value::Int(u16::from_be_bytes(be(data)).into()),
        Prim::Int32 => Value::Int(i32::from_be_bytes(be(data)).into()),
        Prim::Int64 => Value::Int(i64::from_be_bytes(be(data))),
        Prim::Float64 => Value::Float(f64::from_be_bytes(be(data))),
        Prim::Uuid => Value::Uuid(be(data)),
        Prim::String | Prim::Bytes | Prim::Records => Value::None,
    }
}
