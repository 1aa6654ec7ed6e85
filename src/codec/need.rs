//! What a consumer reads of a message body, so the walker builds that and skips the rest.
//!
//! A skipped field is still walked: its lengths, counts and strings are checked as when it
//! is built, so a message's verdict (error, warnings, trailing bytes) is the same whatever
//! is asked for. Only the nodes are left out. A projected tree also leaves out the nodes
//! no reader of fields looks at (the size prefix, array lengths, tag metadata, unknown
//! tags).
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use super::schema::{Field, FieldType, MessageSchema, Prim};
use rustc_hash::FxHashMap;
use std::cell::RefCell;
use std::rc::Rc;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};

/// A body field by its names from the body's root (`anchored`), or the same names
/// ending a chain at any depth (`ErrorCode`, `Topics.Name`). Lists are transparent.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NeedPath {
    pub segments: Vec<String>,
    pub anchored: bool,
}

impl NeedPath {
    /// `Topics.Partitions.VoteGranted`, anchored at the body's root.
    pub fn anchored(dotted: &str) -> NeedPath {
        NeedPath {
            segments: dotted.split('.').map(str::to_string).collect(),
            anchored: true,
        }
    }

    /// A name (or dotted names) at any depth.
    pub fn anywhere(dotted: &str) -> NeedPath {
        NeedPath {
            anchored: false,
            ..NeedPath::anchored(dotted)
        }
    }

    fn matches(&self, chain: &[&str]) -> bool {
        if self.anchored && chain.len() != self.segments.len() {
            return false;
        }
        chain.len() >= self.segments.len()
            && chain
                .iter()
                .rev()
                .zip(self.segments.iter().rev())
                .all(|(a, b)| *a == b)
    }
}

/// Envelope's API key: the message it carries is decoded inside it.
const ENVELOPE: i16 = 58;

/// The topic id field and the names Kafka's schemas give beside it (see `crate::topics`).
const TOPIC_FIELDS: [&str; 4] = ["TopicId", "Name", "TopicName", "Topic"];
/// Where a `records` field lies: its topic's and partition's fields (the summary's place).
const PLACE_FIELDS: [&str; 7] = [
    "Name",
    "Topic",
    "TopicName",
    "TopicId",
    "Index",
    "PartitionIndex",
    "Partition",
];

/// What to decode of a body. [`Need::all`] builds every node (the tree and NDJSON views);
/// a projection builds what its rules name, and always the topic ids with their names,
/// which the run learns from (see `crate::topics`).
#[derive(Debug, Default)]
pub struct Need {
    all: bool,
    /// Fields built whole, in every API.
    paths: Vec<NeedPath>,
    /// Fields built whole in one API only (an `apis/` file's summary fields).
    api_paths: Vec<(i16, Vec<NeedPath>)>,
    /// For an API without `api_paths`: the generic summary line's fields (top-level
    /// values, and the top-level lists and structs as nodes without their contents).
    generic: bool,
    /// Every field whose name ends in `ErrorCode`, at any depth.
    error_codes: bool,
    /// Every `records` field, and the topic and partition fields around it.
    records: bool,
    /// `TopicId` and its names, in every struct that has one.
    topics: bool,
    /// Names this need's plans in each thread's table (see [`Need::plan_for`]); given on
    /// first use, and anew by every change.
    id: OnceLock<u64>,
}

impl Clone for Need {
    fn clone(&self) -> Self {
        Need {
            all: self.all,
            paths: self.paths.clone(),
            api_paths: self.api_paths.clone(),
            generic: self.generic,
            error_codes: self.error_codes,
            records: self.records,
            topics: self.topics,
            id: OnceLock::new(),
        }
    }
}

/// What the walker does with one field of a struct.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Act {
    /// Walk it, checking everything, and build nothing.
    Skip,
    /// Build its node only: a list's count, a struct's presence.
    Node,
    /// Build it and everything in it.
    Build,
    /// Build the node, and its fields as planned (for a list, in every element).
    Into(Box<[Act]>),
}

/// Plans kept per thread at most; past it, the table starts again.
const PLANS_MAX: usize = 4096;

/// Plans by need id and schema address.
type Plans = FxHashMap<(u64, usize), Rc<[Act]>>;

/// The next need's id.
static NEXT_ID: AtomicU64 = AtomicU64::new(0);

thread_local! {
    /// Plans made on this thread, by need id and schema address, each made on first use
    /// (planning every schema up front would parse all the lazily loaded ones). Per
    /// thread: workers find them with no lock. Empty builds nothing.
    static PLANS: RefCell<Plans> = RefCell::new(FxHashMap::default());
}

/// What a struct's fields get: `None` builds them all.
pub(crate) type Plan<'p> = Option<&'p [Act]>;

impl Need {
    /// Every node: what the tree, hex and NDJSON views show.
    pub const fn all() -> Need {
        Need::of(true, false)
    }

    /// The header, the verdict (error, warnings), and the topic ids the run learns names
    /// from; no other body field is built.
    pub const fn header() -> Need {
        Need::of(false, true)
    }

    /// Only the verdict: the body is walked and checked, nothing of it built.
    pub(crate) const fn verdict() -> Need {
        Need::of(false, false)
    }

    const fn of(all: bool, topics: bool) -> Need {
        Need {
            all,
            paths: Vec::new(),
            api_paths: Vec::new(),
            generic: false,
            error_codes: false,
            records: false,
            topics,
            id: OnceLock::new(),
        }
    }

    pub fn is_all(&self) -> bool {
        self.all
    }

    /// Also these fields, in every API.
    pub fn with_paths(mut self, paths: impl IntoIterator<Item = NeedPath>) -> Need {
        for p in paths {
            if !self.paths.contains(&p) {
                self.paths.push(p);
            }
        }
        self.id = OnceLock::new();
        self
    }

    /// Also these fields of API `key` only.
    pub fn with_api_paths(mut self, key: i16, paths: impl IntoIterator<Item = NeedPath>) -> Need {
        let at = match self.api_paths.iter().position(|(k, _)| *k == key) {
            Some(at) => at,
            None => {
                self.api_paths.push((key, Vec::new()));
                self.api_paths.len() - 1
            }
        };
        if let Some((_, list)) = self.api_paths.get_mut(at) {
            for p in paths {
                if !list.contains(&p) {
                    list.push(p);
                }
            }
        }
        self.id = OnceLock::new();
        self
    }

    /// Also, for every API without its own paths, what the generic summary line shows.
    pub fn with_generic(mut self) -> Need {
        self.generic = true;
        self.id = OnceLock::new();
        self
    }

    /// Also every `…ErrorCode` field.
    pub fn with_error_codes(mut self) -> Need {
        self.error_codes = true;
        self.id = OnceLock::new();
        self
    }

    /// Also every `records` field, with its topic and partition.
    pub fn with_records(mut self) -> Need {
        self.records = true;
        self.id = OnceLock::new();
        self
    }

    /// Everything either needs.
    pub fn union(&self, other: &Need) -> Need {
        let mut n = Need {
            all: self.all || other.all,
            paths: self.paths.clone(),
            api_paths: self.api_paths.clone(),
            generic: self.generic || other.generic,
            error_codes: self.error_codes || other.error_codes,
            records: self.records || other.records,
            topics: self.topics || other.topics,
            id: OnceLock::new(),
        };
        n = n.with_paths(other.paths.iter().cloned());
        for (k, p) in &other.api_paths {
            n = n.with_api_paths(*k, p.iter().cloned());
        }
        n
    }

    /// Whether everything `other` builds, this builds too (so a message decoded for this
    /// need not be decoded again for `other`).
    pub fn covers(&self, other: &Need) -> bool {
        self.all
            || (!other.all
                && (self.generic || !other.generic)
                && (self.error_codes || !other.error_codes)
                && (self.records || !other.records)
                && (self.topics || !other.topics)
                && other.paths.iter().all(|p| self.paths.contains(p))
                && other.api_paths.iter().all(|(k, ps)| {
                    self.api_paths
                        .iter()
                        .find(|(j, _)| j == k)
                        .is_some_and(|(_, mine)| ps.iter().all(|p| mine.contains(p)))
                }))
    }

    /// This need's name in per-thread tables: `None` for [`Need::all`], which has no plan.
    pub(crate) fn plan_id(&self) -> Option<u64> {
        (!self.all).then(|| self.id())
    }

    /// The plan for a body of schema `s`: `None` builds everything. Schemas live for the
    /// whole process (see [`super::Codec`]), so an address names one schema for good.
    pub(crate) fn plan_for(&self, s: &'static MessageSchema) -> Option<Rc<[Act]>> {
        if self.all {
            return None;
        }
        let key = (self.id(), key_of(s));
        let found = PLANS.with(|t| t.try_borrow().ok().and_then(|t| t.get(&key).cloned()));
        if found.is_some() {
            return found;
        }
        let p: Rc<[Act]> = self.plan(s).map_or_else(|| Rc::from([]), Rc::from);
        PLANS.with(|t| {
            if let Ok(mut t) = t.try_borrow_mut() {
                if t.len() >= PLANS_MAX {
                    t.clear();
                }
                t.insert(key, Rc::clone(&p));
            }
        });
        Some(p)
    }

    fn id(&self) -> u64 {
        *self
            .id
            .get_or_init(|| NEXT_ID.fetch_add(1, Ordering::Relaxed))
    }

    /// The acts for a body of `s`; `None` when nothing is built.
    fn plan(&self, s: &MessageSchema) -> Option<Box<[Act]>> {
        let mut p = Planner {
            need: self,
            own: &[],
            generic: self.generic,
            envelope: false,
        };
        if let Some(key) = s.api_key {
            if let Some((_, own)) = self.api_paths.iter().find(|(k, _)| *k == key) {
                p.own = own;
                p.generic = false;
            }
            // An Envelope's message is decoded under it when its bytes are built: what is
            // read at any depth may be in there.
            p.envelope = key == ENVELOPE
                && (self.topics
                    || self.error_codes
                    || self.records
                    || self.paths.iter().chain(p.own).any(|p| !p.anchored));
        }
        p.fields(&s.fields, &mut Vec::new())
    }
}

/// Plans the fields of one message schema.
struct Planner<'n> {
    need: &'n Need,
    /// The API's own paths.
    own: &'n [NeedPath],
    generic: bool,
    /// Build an Envelope's data fields.
    envelope: bool,
}

impl Planner<'_> {
    fn fields<'f>(&self, fields: &'f [Field], chain: &mut Vec<&'f str>) -> Option<Box<[Act]>> {
        let ctx = Ctx {
            topic_id: self.need.topics && fields.iter().any(|f| f.name == "TopicId"),
            records: self.need.records && fields.iter().any(holds_records),
        };
        let mut acts = Vec::with_capacity(fields.len());
        let mut any = false;
        for f in fields {
            chain.push(&f.name);
            let act = self.act(f, chain, ctx);
            chain.pop();
            any |= act != Act::Skip;
            acts.push(act);
        }
        any.then(|| acts.into_boxed_slice())
    }

    fn act<'f>(&self, f: &'f Field, chain: &mut Vec<&'f str>, ctx: Ctx) -> Act {
        let need = self.need;
        let name = f.name.as_str();
        let top = chain.len() == 1;
        let whole = need.paths.iter().chain(self.own).any(|p| p.matches(chain))
            || (need.error_codes && name.ends_with("ErrorCode"))
            || (need.records && is_records(&f.ty))
            || (ctx.topic_id && TOPIC_FIELDS.contains(&name))
            || (ctx.records && PLACE_FIELDS.contains(&name))
            || (self.generic && top && matches!(f.ty, FieldType::Prim(_)))
            || (self.envelope && top && matches!(name, "RequestData" | "ResponseData"));
        if whole {
            return Act::Build;
        }
        let inner = match &f.ty {
            FieldType::Struct(sub) | FieldType::ArrayOfStruct(sub) => self.fields(sub, chain),
            _ => None,
        };
        match inner {
            Some(acts) => Act::Into(acts),
            None if self.generic && top => Act::Node,
            None => Act::Skip,
        }
    }
}

/// What the fields of one struct share for planning.
#[derive(Clone, Copy)]
struct Ctx {
    /// The struct has a `TopicId` (and topics are wanted).
    topic_id: bool,
    /// A `records` field is in it or below it (and records are wanted).
    records: bool,
}

fn key_of(s: &MessageSchema) -> usize {
    std::ptr::from_ref(s) as usize
}

fn is_records(t: &FieldType) -> bool {
    matches!(
        t,
        FieldType::Prim(Prim::Records) | FieldType::ArrayOfPrim(Prim::Records)
    )
}

fn holds_records(f: &Field) -> bool {
    match &f.ty {
        FieldType::Struct(sub) | FieldType::ArrayOfStruct(sub) => sub.iter().any(holds_records),
        t => is_records(t),
    }
}

/// The act for field `k` of a struct planned by `plan`.
pub(crate) fn act_at<'p>(plan: Plan<'p>, k: usize) -> &'p Act {
    match plan {
        None => &Act::Build,
        Some(p) => p.get(k).unwrap_or(&Act::Skip),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_match_as_the_filter_does() {
        let p = NeedPath::anchored("Topics.Partitions.VoteGranted");
        assert!(p.matches(&["Topics", "Partitions", "VoteGranted"]));
        assert!(!p.matches(&["Partitions", "VoteGranted"]));
        let p = NeedPath::anywhere("Partitions.ErrorCode");
        assert!(p.matches(&["Topics", "Partitions", "ErrorCode"]));
        assert!(!p.matches(&["ErrorCode"]));
    }

    #[test]
    fn covers_and_union() {
        let a = Need::header().with_paths([NeedPath::anywhere("ErrorCode")]);
        let b = Need::header().with_error_codes();
        assert!(!a.covers(&b) && !b.covers(&a));
        let u = a.union(&b);
        assert!(u.covers(&a) && u.covers(&b) && !u.covers(&Need::all()));
        assert!(Need::all().covers(&u));
        let k = Need::header().with_api_paths(52, [NeedPath::anchored("VoterId")]);
        assert!(k.covers(&Need::header()) && !Need::header().covers(&k));
    }
}
