//! A struct's fields at one (version, flexibility), resolved from the schema once per
//! thread, so the walk of each message does no version-range checks.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use super::super::schema::{Field, FieldType, Prim};
use rustc_hash::FxHashMap;
use std::cell::RefCell;
use std::rc::Rc;

/// How one field is read, resolved for a version.
#[derive(Debug)]
pub(crate) enum Op {
    /// A primitive of fixed size (its size).
    Fixed(Prim, usize),
    /// A length-prefixed primitive.
    Var {
        p: Prim,
        compact: bool,
        nullable: bool,
    },
    Struct {
        nullable: bool,
        sub: Rc<Layout>,
    },
    /// `min` is the fewest bytes one element takes, to check a count against.
    ArrayOfPrim {
        p: Prim,
        compact: bool,
        nullable: bool,
        min: usize,
    },
    ArrayOfStruct {
        compact: bool,
        nullable: bool,
        min: usize,
        sub: Rc<Layout>,
    },
}

/// One field present at the layout's version.
#[derive(Debug)]
pub(crate) struct Step {
    /// The field's index in its struct (where a plan has its act).
    pub k: usize,
    pub f: &'static Field,
    pub op: Op,
    /// From this field on, the bytes and number of the fixed-size fields in a row (0, 0
    /// when this one is not of fixed size): an unbuilt run needs one length check.
    pub run: (usize, usize),
}

/// A struct's fields as read at one (version, flexibility).
#[derive(Debug)]
pub(crate) struct Layout {
    /// The fields outside the tagged section, in wire order.
    pub steps: Box<[Step]>,
    /// The tagged fields known at this version, in schema order (flexible only).
    pub tagged: Box<[Step]>,
    pub flexible: bool,
}

impl Layout {
    /// Whether a field named `name` is among these fields or those of any struct in
    /// them, tagged ones too.
    pub fn has_field(&self, name: &str) -> bool {
        self.steps.iter().chain(self.tagged.iter()).any(|s| {
            s.f.name == name
                || match &s.op {
                    Op::Struct { sub, .. } | Op::ArrayOfStruct { sub, .. } => sub.has_field(name),
                    _ => false,
                }
        })
    }

    fn compile(fields: &'static [Field], version: i16, flexible: bool) -> Layout {
        let step = |(k, f): (usize, &'static Field)| Step {
            k,
            f,
            op: op(f, version, flexible),
            run: (0, 0),
        };
        let mut steps: Box<[Step]> = fields
            .iter()
            .enumerate()
            .filter(|(_, f)| f.versions.contains(version) && !(flexible && f.is_tagged_at(version)))
            .map(step)
            .collect();
        let mut after = (0, 0);
        for s in steps.iter_mut().rev() {
            after = match s.op {
                Op::Fixed(_, n) => (after.0 + n, after.1 + 1),
                _ => (0, 0),
            };
            s.run = after;
        }
        let tagged = if flexible {
            fields
                .iter()
                .enumerate()
                .filter(|(_, f)| f.is_tagged_at(version) && f.versions.contains(version))
                .map(step)
                .collect()
        } else {
            Box::default()
        };
        Layout {
            steps,
            tagged,
            flexible,
        }
    }
}

fn op(f: &'static Field, version: i16, flexible: bool) -> Op {
    let compact = flexible && f.flexible.is_none_or(|fv| fv.contains(version));
    let nullable = f.nullable.contains(version);
    match &f.ty {
        FieldType::Prim(p) => match p.fixed_size() {
            Some(n) => Op::Fixed(*p, n),
            None => Op::Var {
                p: *p,
                compact,
                nullable,
            },
        },
        FieldType::Struct(sub) => Op::Struct {
            nullable,
            sub: layout_of(sub, version, flexible),
        },
        FieldType::ArrayOfPrim(p) => Op::ArrayOfPrim {
            p: *p,
            compact,
            nullable,
            min: min_size(&f.ty, version, flexible, compact),
        },
        FieldType::ArrayOfStruct(sub) => Op::ArrayOfStruct {
            compact,
            nullable,
            min: min_size(&f.ty, version, flexible, compact),
            sub: layout_of(sub, version, flexible),
        },
    }
}

/// Layouts kept per thread at most: versions come off the wire (though only those a
/// schema has reach here). Past it, the table starts again.
const LAYOUTS_MAX: usize = 4096;

type LayoutKey = (usize, usize, i16, bool);

thread_local! {
    static LAYOUTS: RefCell<FxHashMap<LayoutKey, Rc<Layout>>> = RefCell::new(FxHashMap::default());
}

/// The layout of `fields` at `version`. Schemas live for the whole process (see
/// [`crate::codec::Codec`]), so a field list's address names it for good.
pub(crate) fn layout_of(fields: &'static [Field], version: i16, flexible: bool) -> Rc<Layout> {
    let key = (fields.as_ptr() as usize, fields.len(), version, flexible);
    let found = LAYOUTS.with(|t| t.try_borrow().ok().and_then(|t| t.get(&key).cloned()));
    if let Some(l) = found {
        return l;
    }
    // Compiled without the table borrowed: a struct's fields compile theirs first.
    let l = Rc::new(Layout::compile(fields, version, flexible));
    LAYOUTS.with(|t| {
        if let Ok(mut t) = t.try_borrow_mut() {
            if t.len() >= LAYOUTS_MAX {
                t.clear();
            }
            t.insert(key, Rc::clone(&l));
        }
    });
    l
}

/// The fewest bytes one value of `ty` can take on the wire.
pub(crate) fn min_size(ty: &FieldType, version: i16, flexible: bool, compact: bool) -> usize {
    let prim = |p: Prim| match p.fixed_size() {
        Some(n) => n,
        None if compact => 1,
        None if p == Prim::String => 2,
        None => 4,
    };
    match ty {
        FieldType::Prim(p) | FieldType::ArrayOfPrim(p) => prim(*p),
        FieldType::Struct(fields) | FieldType::ArrayOfStruct(fields) => {
            let mut n = usize::from(flexible);
            for f in fields {
                if f.versions.contains(version) && !(flexible && f.is_tagged_at(version)) {
                    let c = flexible && f.flexible.is_none_or(|fv| fv.contains(version));
                    n += match &f.ty {
                        FieldType::Prim(p) => prim(*p),
                        // A nullable struct may be just its marker byte.
                        FieldType::Struct(_) if f.nullable.contains(version) => 1,
                        FieldType::Struct(_) => min_size(&f.ty, version, flexible, c),
                        FieldType::ArrayOfPrim(_) | FieldType::ArrayOfStruct(_) => {
                            if c {
                                1
                            } else {
                                4
                            }
                        }
                    };
                }
            }
            n
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing)]
mod tests {
    use super::*;
    use crate::codec::registry;

    /// The steps of `Topics.Partitions` in VoteRequest at `version`: (name, run).
    fn partitions(version: i16) -> Vec<(&'static str, (usize, usize))> {
        let s = registry()
            .messages
            .iter()
            .find(|m| m.name == "VoteRequest")
            .unwrap();
        // Registry schemas live for the whole process.
        let l = layout_of(&s.fields, version, s.is_flexible(version));
        let Op::ArrayOfStruct { sub: topics, .. } = &l.steps.last().unwrap().op else {
            panic!("Topics")
        };
        let Op::ArrayOfStruct { sub, min, .. } = &topics.steps.last().unwrap().op else {
            panic!("Partitions")
        };
        // Fixed fields, then the empty tagged section's one byte.
        let fixed: usize = sub
            .steps
            .iter()
            .map(|s| match s.op {
                Op::Fixed(_, n) => n,
                _ => 0,
            })
            .sum();
        assert_eq!(*min, fixed + 1);
        sub.steps.iter().map(|s| (s.f.name.as_str(), s.run)).collect()
    }

    #[test]
    fn layouts_keep_the_fields_of_their_version_with_fixed_runs() {
        assert_eq!(
            partitions(0),
            [
                ("PartitionIndex", (24, 5)),
                ("ReplicaEpoch", (20, 4)),
                ("ReplicaId", (16, 3)),
                ("LastOffsetEpoch", (12, 2)),
                ("LastOffset", (8, 1)),
            ]
        );
        let v2 = partitions(2);
        assert_eq!(v2.len(), 8);
        assert_eq!(v2[0], ("PartitionIndex", (4 * 3 + 16 * 2 + 4 + 8 + 1, 8)));
        assert_eq!(v2[7], ("PreVote", (1, 1)));
    }

    #[test]
    fn a_layout_is_made_once_per_thread() {
        let s = &registry().request_header;
        let a = layout_of(&s.fields, 2, true);
        let b = layout_of(&s.fields, 2, true);
        assert!(Rc::ptr_eq(&a, &b));
        assert!(!Rc::ptr_eq(&a, &layout_of(&s.fields, 1, false)));
        // Version 1 has no tagged section; the last field is client_id, a string.
        let v1 = layout_of(&s.fields, 1, false);
        assert!(v1.tagged.is_empty() && !v1.flexible);
        assert!(matches!(v1.steps.last().unwrap().op, Op::Var { nullable: true, .. }));
    }
}
