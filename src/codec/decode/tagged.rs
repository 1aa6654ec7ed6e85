//! Tagged fields (flexible versions): the section after a struct's fields.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use super::*;

impl<'a> Walker<'a> {
    /// The tagged-field section: a count, then (tag, size, data) triples.
    pub fn tagged_section(
        &mut self,
        i: &'a [u8],
        l: &Layout,
        about: &'static str,
        plan: Plan<'_>,
    ) -> Res<'a, ()> {
        let (mut rest, count) = self.uvarint(i)?;
        if count == 0 {
            self.leaf(
                i,
                rest,
                "tagged_fields",
                None,
                "uvarint",
                Value::Int(0),
                Prefix::None,
                about,
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
            "tagged_fields",
            None,
            "uvarint",
            Value::Int(count.into()),
            about,
            Role::TaggedFields,
        );
        self.leaf(
            i,
            rest,
            "count",
            None,
            "uvarint",
            Value::Int(count.into()),
            Prefix::None,
            "",
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
                        &f.name,
                        None,
                        "tagged_field",
                        Value::Int(tag.into()),
                        "",
                        Role::Tagged(tag),
                    );
                    self.leaf(
                        start,
                        r,
                        "tag",
                        None,
                        "uvarint",
                        Value::Int(tag.into()),
                        Prefix::None,
                        "",
                        Role::TagMeta,
                    );
                    self.leaf(
                        r,
                        r2,
                        "size",
                        None,
                        "uvarint",
                        Value::Int(size.into()),
                        Prefix::None,
                        "",
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
                    "unknown_tag",
                    None,
                    "tagged_field",
                    Value::Bytes(Some(data)),
                    Prefix::None,
                    "",
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
