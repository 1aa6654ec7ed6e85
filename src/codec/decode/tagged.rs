//! Tagged fields (flexible versions): the section after a struct's fields.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use super::*;

impl<'a> Walker<'a> {
    /// The tagged-field section: a count, then (tag, size, data) triples; its node
    /// labelled `label` (a struct's section or the header's).
    pub fn tagged_section(
        &mut self,
        i: &'a [u8],
        l: &Layout,
        label: &'static Label,
        plan: Plan<'_>,
    ) -> Res<'a, ()> {
        let (mut rest, count) = self.uvarint(i)?;
        if count == 0 {
            self.leaf(
                i,
                rest,
                label,
                None,
                Value::Int(0),
                Prefix::None,
                Role::TaggedFields,
            );
            return Ok((rest, ()));
        }
        // Each tagged field takes at least two bytes (tag and size).
        if u64::from(count) * 2 > rest.len() as u64 {
            return Err(self.err(
                i,
                ErrorKind::ImplausibleCount {
                    count: count.into(),
                    remaining: rest.len() as u64,
                },
            ));
        }
        // A section none of whose fields is wanted is checked and not built.
        let built = self.build;
        self.build &= plan.is_none_or(|p| l.tagged.iter().any(|s| *act_at(Some(p), s.k) != Act::Skip));
        self.open(
            i,
            label,
            None,
            Value::Int(count.into()),
            Role::TaggedFields,
        );
        self.leaf(
            i,
            rest,
            const { &Label::new("count", "uvarint", "") },
            None,
            Value::Int(count.into()),
            Prefix::None,
            Role::TagCount,
        );
        for _ in 0..count {
            let start = rest;
            let (r, tag) = self.uvarint(rest)?;
            let (r2, size) = self.uvarint(r)?;
            let (after, data) = self.take(r2, size as usize)?;
            match l.tagged.iter().find(|s| s.f.tag == Some(tag)) {
                Some(s) => {
                    let (act, f) = (act_at(plan, s.k), s.f);
                    let outer = self.build;
                    self.build &= *act != Act::Skip;
                    self.open(
                        start,
                        &f.labels().tagged,
                        None,
                        Value::Int(tag.into()),
                        Role::Tagged(tag),
                    );
                    self.leaf(
                        start,
                        r,
                        const { &Label::new("tag", "uvarint", "") },
                        None,
                        Value::Int(tag.into()),
                        Prefix::None,
                        Role::TagMeta,
                    );
                    self.leaf(
                        r,
                        r2,
                        const { &Label::new("size", "uvarint", "") },
                        None,
                        Value::Int(size.into()),
                        Prefix::None,
                        Role::TagMeta,
                    );
                    let (left, ()) = self
                        .field_as(data, s, act)
                        .map_err(|e| e.within(&f.name))?;
                    if !left.is_empty() {
                        let e = self.err(left, ErrorKind::TrailingBytes(left.len() as u64));
                        return Err(e.within(&f.name));
                    }
                    self.close(after);
                    self.build = outer;
                }
                None => self.leaf(
                    start,
                    after,
                    const { &Label::new("unknown_tag", "tagged_field", "") },
                    None,
                    Value::Bytes(Some(data)),
                    Prefix::None,
                    Role::UnknownTagged(tag),
                ),
            }
            rest = after;
        }
        self.close(rest);
        self.build = built;
        Ok((rest, ()))
    }
}

