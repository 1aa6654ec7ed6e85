//! Whole frames: size prefix, header, then the body by schema or as raw bytes.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use super::need::{Act, Need};
use super::Codec;
use super::decode::{
    ENVELOPE, Layout, Op, Res, SIZE_GROUP_LABEL, Step, TAGS_IN_HEADER, TAGS_IN_STRUCT, Walker,
    layout_of,
};
use super::error::{DecodeError, ErrorKind};
use super::tree::{Label, Prefix, Role, Tree, Value, label};
use crate::proto::apis::{self, ApiInfo};
use crate::proto::{Kind, peek_request_header, peek_size};
use super::schema::{Field, MessageSchema, Prim};
use rustc_hash::{FxBuildHasher, FxHashMap};
use std::cell::RefCell;
use std::rc::Rc;

/// One decoded frame: its tree and the facts the pipeline and views need.
#[derive(Clone, Debug, PartialEq)]
pub struct Message<'a> {
    pub kind: Kind,
    pub tree: Tree<'a>,
    pub api_key: Option<i16>,
    pub api_version: Option<i16>,
    pub correlation_id: Option<i32>,
    /// Requests only; `None` for a null client id or a v0 header.
    pub client_id: Option<&'a str>,
    /// Node index of the decoded body; `None` when the body is raw or failed.
    pub body: Option<usize>,
    pub error: Option<DecodeError>,
    pub warnings: Vec<String>,
    /// Kafka's name for the API: kwire's table, else the loaded schema's.
    pub name: Option<&'static str>,
    /// Bytes left over after a body that decoded completely (a warning, not an error).
    pub trailing: usize,
    /// Whether the body's schema, at this version, has a `TopicId` field (or carries
    /// another message, as an Envelope does): only then can the tree hold a topic id
    /// (see `crate::topics`), and the others need not be searched for one.
    pub topic_ids: bool,
    /// Whether the body's schema, at this version, has a field of type `records` (or
    /// carries another message): only then can the tree hold record batches, and the
    /// others need not be searched for them.
    pub records: bool,
}

impl Message<'_> {
    /// An empty message of `kind`, to decode into (see [`super::Codec::decode_into`]).
    pub fn new(kind: Kind) -> Self {
        Message {
            kind,
            tree: Tree::default(),
            api_key: None,
            api_version: None,
            correlation_id: None,
            client_id: None,
            body: None,
            error: None,
            warnings: Vec::new(),
            name: None,
            trailing: 0,
            topic_ids: false,
            records: false,
        }
    }

    /// Kafka's name for the API, if known.
    pub fn api_name(&self) -> Option<&'static str> {
        self.name
    }
}

const RAW_NO_SCHEMA: &Label = &raw_label("not dissected: kwire has no schema for this API");
const RAW_OUT_OF_RANGE: &Label = &raw_label("not dissected: version outside the schema's range");
const RAW_NO_REQUEST: &Label = &raw_label("not dissected: the request is unknown");
const RAW_UNDECODED: &Label = &raw_label("not decoded: see the error");
const RAW_AFTER_BODY: &Label = &raw_label("bytes after the body (brokers ignore them)");

/// Decodes a request frame (starting at its 4-byte size prefix).
pub(crate) fn decode_request<'a>(codec: &Codec, frame: &'a [u8], need: &Need) -> Message<'a> {
    let mut m = Message::new(Kind::Request);
    decode_request_in(codec, frame, need, &mut m);
    m
}

/// [`decode_request`] into `m`, a [`Message::new`] of a request: decoded in place, the
/// message is not copied on its way out.
pub(crate) fn decode_request_in<'a>(
    codec: &Codec,
    frame: &'a [u8],
    need: &Need,
    m: &mut Message<'a>,
) {
    let start = peek_request_header(frame);
    m.api_key = start.map(|s| s.api_key);
    m.api_version = start.map(|s| s.api_version);
    let resolved = m
        .api_key
        .zip(m.api_version)
        .map(|(k, v)| resolve(codec, k, v, Kind::Request, need));
    let root = named(m, resolved.as_deref(), Kind::Request);
    let mut w = Walker::new(frame, *codec);
    w.lean = !need.is_all();
    w.open(
        frame,
        root,
        None,
        m.api_version.map_or(Value::None, |v| Value::Int(v.into())),
        Role::Message,
    );
    // The header's node, once opened: its fields are read from there.
    let mut header = None;
    let result = (|| -> Res<'_, Option<usize>> {
        let rest = size_prefix(&mut w, frame)?;
        // An unknown API's flexibility is unknowable: read the v1 header, which every such request starts with.
        let hs = &codec.schemas.request_header;
        let (unknown, unknown_ids);
        let (hv, head, at) = match resolved.as_deref() {
            Some(r) => (r.hv, &r.head, r.head_ids.as_ref()),
            None => {
                unknown = header_layout(codec, Kind::Request, 1);
                unknown_ids = head_ids(codec, Kind::Request, 1, &unknown);
                (1, &unknown, unknown_ids.as_ref())
            }
        };
        let ids = (&mut m.correlation_id, &mut m.client_id);
        let label = match resolved.as_deref() {
            Some(r) => r.header,
            None => header_label(hs, Kind::Request),
        };
        let node = (label, Value::Int(hv.into()));
        let rest = walk_header(&mut w, rest, (head, at), ids, node, &mut header)?;
        let api = m.api_key.zip(m.api_version);
        body(
            &mut w,
            rest,
            codec,
            (Kind::Request, resolved.as_deref()),
            api,
            m.name,
            &mut m.warnings,
        )
    })();
    finish(m, &mut w, frame, result);
    if let Some(h) = header {
        let r = resolved.as_deref();
        let corr = header_node(&m.tree, h, r.and_then(|r| r.correlation_id), "correlation_id");
        m.correlation_id = int_at(&m.tree, corr).map(|v| v as i32);
        m.client_id = header_node(&m.tree, h, r.and_then(|r| r.client_id), "client_id")
            .and_then(|c| match m.tree.nodes.get(c).map(|n| n.value) {
                Some(Value::Str(s)) => s,
                _ => None,
            });
    }
}

/// Decodes a response frame. `api` is the (key, version) of its request, when known;
/// without it only the correlation id can be read.
pub(crate) fn decode_response<'a>(
    codec: &Codec,
    frame: &'a [u8],
    api: Option<(i16, i16)>,
    need: &Need,
) -> Message<'a> {
    let mut m = Message::new(Kind::Response);
    decode_response_in(codec, frame, api, need, &mut m);
    m
}

/// [`decode_response`] into `m`, a [`Message::new`] of a response.
pub(crate) fn decode_response_in<'a>(
    codec: &Codec,
    frame: &'a [u8],
    api: Option<(i16, i16)>,
    need: &Need,
    m: &mut Message<'a>,
) {
    m.api_key = api.map(|a| a.0);
    m.api_version = api.map(|a| a.1);
    let resolved = api.map(|(k, v)| resolve(codec, k, v, Kind::Response, need));
    let root = named(m, resolved.as_deref(), Kind::Response);
    let mut w = Walker::new(frame, *codec);
    w.lean = !need.is_all();
    w.open(
        frame,
        root,
        None,
        m.api_version.map_or(Value::None, |v| Value::Int(v.into())),
        Role::Message,
    );
    let mut header = None;
    let result = (|| -> Res<'_, Option<usize>> {
        let rest = size_prefix(&mut w, frame)?;
        let hs = &codec.schemas.response_header;
        let hv = resolved.as_deref().map(|r| r.hv);
        // Without the request, whether a tagged section follows is unknown: stop at correlation_id.
        let (unpaired, unpaired_ids);
        let (head, at) = match resolved.as_deref() {
            Some(r) => (&r.head, r.head_ids.as_ref()),
            None => {
                unpaired = header_layout(codec, Kind::Response, 0);
                unpaired_ids = head_ids(codec, Kind::Response, 0, &unpaired);
                (&unpaired, unpaired_ids.as_ref())
            }
        };
        let ids = (&mut m.correlation_id, &mut None);
        let value = hv.map_or(Value::None, |v| Value::Int(v.into()));
        let label = match resolved.as_deref() {
            Some(r) => r.header,
            None => header_label(hs, Kind::Response),
        };
        let node = (label, value);
        let rest = walk_header(&mut w, rest, (head, at), ids, node, &mut header)?;
        if hv.is_none() {
            raw(&mut w, rest, RAW_NO_REQUEST);
            return Ok((end_of(rest), None));
        }
        body(
            &mut w,
            rest,
            codec,
            (Kind::Response, resolved.as_deref()),
            api,
            m.name,
            &mut m.warnings,
        )
    })();
    finish(m, &mut w, frame, result);
    if let Some(h) = header {
        let at = resolved.as_deref().and_then(|r| r.correlation_id);
        let corr = header_node(&m.tree, h, at, "correlation_id");
        m.correlation_id = int_at(&m.tree, corr).map(|v| v as i32);
    }
}

/// What a message's (API key, version) resolves to in a schema set, looked up once per
/// thread and remembered: the set's map is searched several times per message otherwise.
#[derive(Clone)]
struct Resolved {
    newest: Option<&'static MessageSchema>,
    /// The header version: the schemas' (see `Schemas::request_header_version`), else
    /// kwire's table's, else a request's v1 and a response's v0.
    hv: i16,
    /// The header's layout at `hv`.
    head: Rc<Layout>,
    /// The body's layout, with `message`.
    body: Option<Rc<Layout>>,
    /// What to build of the body (see [`Need`]); `None` builds everything.
    plan: Option<Rc<[Act]>>,
    /// Where the header's `correlation_id` and `client_id` are (see [`header_node`]).
    correlation_id: Option<(usize, &'static str)>,
    client_id: Option<(usize, &'static str)>,
    /// See [`Message::topic_ids`].
    topic_ids: bool,
    /// See [`Message::records`].
    records: bool,
    /// Where the header's ids are, for a projected decode (see [`lean_header`]).
    head_ids: Option<HeadIds>,
    /// The API's name (see [`api_name`]), and the root node's name and type.
    name: Option<&'static str>,
    root: &'static Label,
    /// The labels of the header's and the body's nodes.
    header: &'static Label,
    /// Present with `message`.
    body_label: Option<&'static Label>,
}

/// Remembered resolutions at most: keys and versions come off the wire, so the table is
/// bounded, and past it each message looks its own up.
const RESOLVED_MAX: usize = 512;

/// The schema set's address, the API key and version, and the need's id.
type ResolvedKey = (usize, i16, i16, Kind, Option<u64>);

/// Recent resolutions, by a hash of their key, in front of the table: most messages find
/// theirs in one probe.
const RECENT: usize = 256;

struct Resolutions {
    recent: Vec<Option<(ResolvedKey, Rc<Resolved>)>>,
    all: FxHashMap<ResolvedKey, Rc<Resolved>>,
}

thread_local! {
    // Made at compile time: each message's look-up then skips the lazy start's check.
    static RESOLVED: RefCell<Resolutions> = const {
        RefCell::new(Resolutions {
            recent: Vec::new(),
            all: FxHashMap::with_hasher(FxBuildHasher),
        })
    };
}

fn recent_slot(&(_, key, version, kind, need): &ResolvedKey) -> usize {
    let h = (usize::from(key as u16) << 5)
        ^ usize::from(version as u16)
        ^ (usize::from(kind == Kind::Response) << 4)
        ^ (need.unwrap_or(0) as usize).wrapping_mul(37);
    h % RECENT
}

/// What (`key`, `version`, `kind`) resolves to under `need`: most messages find it in
/// the recent table, here in line; the rest look further out of line.
#[inline(always)]
fn resolve(codec: &Codec, key: i16, version: i16, kind: Kind, need: &Need) -> Rc<Resolved> {
    // Schemas live for the whole process (see `Codec`): an address names one set for good.
    let at = (
        std::ptr::from_ref(codec.schemas) as usize,
        key,
        version,
        kind,
        need.plan_id(),
    );
    let slot = recent_slot(&at);
    let found = RESOLVED.with(|t| {
        let t = t.try_borrow().ok()?;
        match t.recent.get(slot) {
            Some(Some((k, r))) if *k == at => Some(Rc::clone(r)),
            _ => None,
        }
    });
    match found {
        Some(r) => r,
        None => resolve_further(codec, key, version, kind, need, at, slot),
    }
}

/// [`resolve`] past the recent table: the whole table, else looked up and remembered.
#[inline(never)]
fn resolve_further(
    codec: &Codec,
    key: i16,
    version: i16,
    kind: Kind,
    need: &Need,
    at: ResolvedKey,
    slot: usize,
) -> Rc<Resolved> {
    let schemas: &'static super::Schemas = codec.schemas;
    let look = || {
        let info = apis::api_info(key);
        let hv = match kind {
            Kind::Request => schemas
                .request_header_version(key, version)
                .or_else(|| info.map(|a| a.request_header_version(version)))
                .unwrap_or(1),
            Kind::Response => schemas
                .response_header_version(key, version)
                .or_else(|| info.map(|a| a.response_header_version(version)))
                // A known pairing with an API kwire knows nothing of: assume the common v0.
                .unwrap_or(0),
        };
        let message = schemas.message(key, kind, version);
        let head = header_layout(codec, kind, hv);
        let head_ids = head_ids(codec, kind, hv, &head);
        let body = message.map(|s| layout_of(&s.fields, version, s.is_flexible(version)));
        let newest = schemas.newest(key, kind);
        Rc::new(Resolved {
            name: api_name(codec, Some(key)),
            root: root_name(newest, info, kind),
            header: header_label(
                match kind {
                    Kind::Request => &schemas.request_header,
                    Kind::Response => &schemas.response_header,
                },
                kind,
            ),
            body_label: message.map(|s| label(&s.name, "struct", "")),
            newest,
            hv,
            correlation_id: header_place(&head, "correlation_id"),
            client_id: header_place(&head, "client_id"),
            head,
            topic_ids: body
                .as_ref()
                .is_some_and(|l| key == ENVELOPE || l.has_field("TopicId")),
            records: body
                .as_ref()
                .is_some_and(|l| key == ENVELOPE || has_records(l)),
            body,
            head_ids,
            plan: message.and_then(|s| need.plan_for(s)),
        })
    };
    let found = RESOLVED.with(|t| {
        let mut t = t.try_borrow_mut().ok()?;
        let r = t.all.get(&at).cloned()?;
        remember_recent(&mut t, slot, at, &r);
        Some(r)
    });
    if let Some(r) = found {
        return r;
    }
    // Looked up without the table borrowed: layouts have a table of their own.
    let r = look();
    RESOLVED.with(|t| {
        if let Ok(mut t) = t.try_borrow_mut() {
            if t.all.len() < RESOLVED_MAX {
                t.all.insert(at, Rc::clone(&r));
            }
            remember_recent(&mut t, slot, at, &r);
        }
    });
    r
}

fn remember_recent(t: &mut Resolutions, slot: usize, at: ResolvedKey, r: &Rc<Resolved>) {
    if t.recent.is_empty() {
        t.recent.resize_with(RECENT, || None);
    }
    if let Some(s) = t.recent.get_mut(slot) {
        *s = Some((at, Rc::clone(r)));
    }
}

/// Whether `l` has a field of type `records` (alone or in an array), in a struct of it
/// or among its tagged fields: the only fields whose nodes hold record batches.
fn has_records(l: &Layout) -> bool {
    l.steps.iter().chain(l.tagged.iter()).any(|s| match &s.op {
        Op::Var { p, .. } | Op::ArrayOfPrim { p, .. } => *p == Prim::Records,
        Op::Struct { sub, .. } | Op::ArrayOfStruct { sub, .. } => has_records(sub),
        Op::Fixed(..) => false,
    })
}

/// The request or response header's layout at version `hv`.
fn header_layout(codec: &Codec, kind: Kind, hv: i16) -> Rc<Layout> {
    let schemas: &'static super::Schemas = codec.schemas;
    let hs = match kind {
        Kind::Request => &schemas.request_header,
        Kind::Response => &schemas.response_header,
    };
    layout_of(&hs.fields, hv, hs.is_flexible(hv))
}

/// Where a header's ids lie: the offset of each from the header's start, as its fields
/// of fixed size before it add up. `None` when one lies after a field of varying size
/// or is of another type than Kafka's: such a header is built, as in a full decode.
#[derive(Clone, Debug)]
struct HeadIds {
    correlation_id: Option<usize>,
    /// Its offset, and whether its length is compact and it may be null.
    client_id: Option<(usize, bool, bool)>,
    /// The header after its last id (the client id when it has one, else the
    /// correlation id; `true` for the client id), when its fields after it are the
    /// header's own (see [`lean_header`]).
    tail: Option<(bool, Rc<Layout>)>,
}

fn head_ids(codec: &Codec, kind: Kind, hv: i16, head: &Layout) -> Option<HeadIds> {
    let mut ids = HeadIds {
        correlation_id: None,
        client_id: None,
        tail: None,
    };
    let mut at = Some(0);
    if head.tagged.iter().any(|s| matches!(s.f.name.as_str(), "correlation_id" | "client_id")) {
        return None;
    }
    for (j, s) in head.steps.iter().enumerate() {
        match (s.f.name.as_str(), &s.op, at) {
            ("correlation_id", Op::Fixed(Prim::Int32, _), Some(a)) => {
                ids.correlation_id = Some(a);
                ids.tail = header_tail(codec, kind, hv, head, s.f, j).map(|t| (false, t));
            }
            ("client_id", &Op::Var { p: Prim::String, compact, nullable }, Some(a)) => {
                ids.client_id = Some((a, compact, nullable));
                ids.tail = header_tail(codec, kind, hv, head, s.f, j).map(|t| (true, t));
            }
            ("correlation_id" | "client_id", ..) => return None,
            _ => {}
        }
        at = match s.op {
            Op::Fixed(_, n) => at.map(|a| a + n),
            _ => None,
        };
    }
    Some(ids)
}

/// The layout of the header's fields after `client`, its step `j` in `head`: the same
/// steps and tagged fields as `head` has after it, else `None`.
fn header_tail(
    codec: &Codec,
    kind: Kind,
    hv: i16,
    head: &Layout,
    client: &Field,
    j: usize,
) -> Option<Rc<Layout>> {
    let schemas: &'static super::Schemas = codec.schemas;
    let hs = match kind {
        Kind::Request => &schemas.request_header,
        Kind::Response => &schemas.response_header,
    };
    let at = hs.fields.iter().position(|f| std::ptr::eq(f, client))?;
    let tail = layout_of(hs.fields.get(at + 1..)?, hv, hs.is_flexible(hv));
    let same = |a: &[Step], b: &[Step]| {
        a.len() == b.len() && a.iter().zip(b).all(|(x, y)| std::ptr::eq(x.f, y.f))
    };
    (same(&tail.steps, head.steps.get(j + 1..)?) && same(&tail.tagged, &head.tagged)).then_some(tail)
}

/// The header at `rest`: in a projected decode walked unbuilt, its ids read straight into
/// `ids` ([`lean_header`]); else built as a node (named, valued and described by `node`)
/// with its fields. The node's index goes to `header` as soon as it is opened: when the
/// walk fails inside it, the ids are still read from what it holds.
#[inline(always)]
fn walk_header<'a>(
    w: &mut Walker<'a>,
    rest: &'a [u8],
    (head, at): (&Layout, Option<&HeadIds>),
    ids: (&mut Option<i32>, &mut Option<&'a str>),
    (label, value): (&'static Label, Value<'a>),
    header: &mut Option<usize>,
) -> Result<&'a [u8], Box<DecodeError>> {
    if let (true, Some(at)) = (w.lean, at) {
        return Ok(lean_header(w, rest, head, at, ids)?.0);
    }
    *header = Some(w.open(rest, label, None, value, Role::Header));
    let (rest, ()) = w.fields(rest, head, TAGS_IN_HEADER, None)?;
    w.close(rest);
    Ok(rest)
}

/// A projected decode's header: walked and checked unbuilt, as any field a projection
/// skips, its errors those of a full decode; its ids read where `at` says they are,
/// each when a full decode builds its node (its bytes decode). No reader of a
/// projected tree looks at the header: its ids are in [`Message`].
#[inline(always)]
fn lean_header<'a>(
    w: &mut Walker<'a>,
    rest: &'a [u8],
    head: &Layout,
    at: &HeadIds,
    (correlation_id, client_id): (&mut Option<i32>, &mut Option<&'a str>),
) -> Res<'a, ()> {
    let corr = at
        .correlation_id
        .and_then(|a| rest.get(a..)?.split_first_chunk::<4>());
    *correlation_id = corr.map(|(b, _)| i32::from_be_bytes(*b));
    let read = at
        .client_id
        .and_then(|(a, compact, nullable)| w.string(rest.get(a..)?, compact, nullable));
    *client_id = read.and_then(|(_, id)| id);
    let built = std::mem::replace(&mut w.build, false);
    // Where the walk goes on after the last id, when it was read: the fields before it
    // are of fixed size and present (see `head_ids`), so a walk from the start finds
    // them and it as read here (the client id is checked once).
    let after = match &at.tail {
        Some((true, tail)) => read.map(|(after, _)| (after, tail)),
        Some((false, tail)) => corr.map(|(_, after)| (after, tail)),
        None => None,
    };
    let r = match after {
        // Most headers end with their last id, or with it and an empty tagged section:
        // past them with no walk.
        Some((after, tail)) => match w.past_empty(after, tail) {
            Some(end) => Ok((end, ())),
            None => w.fields(after, tail, TAGS_IN_HEADER, None),
        },
        None => w.fields(rest, head, TAGS_IN_HEADER, None),
    };
    w.build = built;
    r
}

/// The API's name: kwire's table first (stable across jars), else the schema's.
fn api_name(codec: &Codec, key: Option<i16>) -> Option<&'static str> {
    let key = key?;
    let schemas: &'static super::Schemas = codec.schemas;
    apis::api_name(key).or_else(|| schemas.api_name(key))
}

/// Sets what `m` learns of its API from `resolved` (its name, and whether it may carry
/// topic ids); the root node's name and type.
#[inline]
fn named(
    m: &mut Message<'_>,
    resolved: Option<&Resolved>,
    kind: Kind,
) -> &'static Label {
    let Some(r) = resolved else {
        // No API: the frame is too short to name one, or a response's request is unknown.
        return root_name(None, None, kind);
    };
    m.name = r.name;
    m.topic_ids = r.topic_ids;
    m.records = r.records;
    r.root
}

fn root_name(
    newest: Option<&'static MessageSchema>,
    info: Option<&'static ApiInfo>,
    kind: Kind,
) -> &'static Label {
    match (newest, info) {
        (Some(s), _) => label(&s.name, "message", ""),
        (None, Some(a)) => label(a.name, kind.as_str(), ""),
        (None, None) => label("Kafka", kind.as_str(), ""),
    }
}

/// The header node's label, from its schema.
fn header_label(hs: &'static MessageSchema, kind: Kind) -> &'static Label {
    let about = match kind {
        Kind::Request => "common request header",
        Kind::Response => "common response header",
    };
    label(&hs.name, "header", about)
}

/// The Frame group with its int32 size.
#[inline(always)]
fn size_prefix<'a>(w: &mut Walker<'a>, frame: &'a [u8]) -> Result<&'a [u8], Box<DecodeError>> {
    let (rest, size) = match w.i32(frame) {
        Ok(r) => r,
        Err(e) => {
            // The group stays open: `finish` closes it where the error struck. A lean
            // tree has none (see `Walker::size_prefix_nodes`).
            if !w.lean {
                w.open(frame, SIZE_GROUP_LABEL, None, Value::None, Role::Frame);
            }
            return Err(e);
        }
    };
    w.size_prefix_nodes(frame, rest, size);
    let actual = rest.len() as u64;
    match u64::try_from(size) {
        // A frame cut short decodes as far as it goes; a longer one leaves trailing bytes.
        Ok(s) if s <= actual => Ok(rest.get(..s as usize).unwrap_or(rest)),
        Ok(_) => Ok(rest),
        Err(_) => Err(w.err(
            frame,
            ErrorKind::SizeMismatch {
                declared: size.into(),
                actual,
            },
        )),
    }
}

#[inline(always)]
fn body<'a>(
    w: &mut Walker<'a>,
    rest: &'a [u8],
    codec: &Codec,
    (kind, resolved): (Kind, Option<&Resolved>),
    api: Option<(i16, i16)>,
    name: Option<&'static str>,
    warnings: &mut Vec<String>,
) -> Res<'a, Option<usize>> {
    let schemas: &'static super::Schemas = codec.schemas;
    let Some((key, v)) = api else {
        raw(w, rest, RAW_NO_SCHEMA);
        return Ok((end_of(rest), None));
    };
    let Some(newest) = resolved.and_then(|r| r.newest) else {
        raw(w, rest, RAW_NO_SCHEMA);
        return Ok((end_of(rest), None));
    };
    let Some((label, l)) = resolved.and_then(|r| r.body_label.zip(r.body.as_ref())) else {
        let api = name.unwrap_or(newest.name.as_str());
        let versions = schemas.versions(key, kind);
        let range = super::schema::Versions {
            lo: versions.first().copied().unwrap_or(1),
            hi: versions.last().copied().unwrap_or(0),
        };
        warnings.push(format!("{api} v{v} is outside the known range {range}"));
        raw(w, rest, RAW_OUT_OF_RANGE);
        return Ok((end_of(rest), None));
    };
    w.api_key = Some(key);
    let idx = w.open(rest, label, None, Value::Int(v.into()), Role::Body);
    let plan = resolved.and_then(|r| r.plan.as_deref());
    let (after, ()) = w.fields(rest, l, TAGS_IN_STRUCT, plan)?;
    w.close(after);
    Ok((after, Some(idx)))
}

/// The empty slice just past `s`, so offsets stay meaningful.
fn end_of(s: &[u8]) -> &[u8] {
    s.get(s.len()..).unwrap_or_default()
}

/// The label of a node of raw bytes, described by `about`.
const fn raw_label(about: &'static str) -> Label {
    Label::new("body", "bytes", about)
}

fn raw<'a>(w: &mut Walker<'a>, rest: &'a [u8], label: &'static Label) {
    w.leaf(
        rest,
        end_of(rest),
        label,
        None,
        Value::Bytes(Some(rest)),
        Prefix::None,
        Role::Raw,
    );
}

/// Closes the tree; on error, keeps what decoded and shows the rest as raw bytes.
#[inline]
fn finish<'a>(
    m: &mut Message<'a>,
    // By reference: the walker is large, and only its nodes are kept.
    w: &mut Walker<'a>,
    frame: &'a [u8],
    result: Res<'a, Option<usize>>,
) {
    // Most messages decode whole, as long as their size prefix says, with nothing after.
    if let Ok((after, body)) = &result {
        let promised = peek_size(frame)
            .and_then(|d| u64::try_from(d).ok())
            .is_some_and(|d| d > frame.len().saturating_sub(4) as u64);
        if !promised && w.off(after) >= frame.len() {
            w.build = true;
            m.body = *body;
            w.close(end_of(frame));
            m.tree = Tree {
                nodes: std::mem::take(&mut w.nodes),
            };
            return;
        }
    }
    finish_rest(m, w, frame, result);
}

/// [`finish`] for a message that failed, was cut, or has bytes after its body.
#[inline(never)]
fn finish_rest<'a>(
    m: &mut Message<'a>,
    w: &mut Walker<'a>,
    frame: &'a [u8],
    result: Res<'a, Option<usize>>,
) {
    // An error may have struck in a field being skipped.
    w.build = true;
    let end = end_of(frame);
    match result {
        Ok((after, body)) => {
            m.body = body;
            // A request's header starts with the same size prefix.
            let declared = peek_size(frame);
            let present = frame.len().saturating_sub(4) as u64;
            if let Some(d) = declared
                .and_then(|d| u64::try_from(d).ok())
                .filter(|&d| d > present)
            {
                // Everything present decoded, but the frame promised more.
                let at = frame.get(4..).unwrap_or_default();
                m.error = Some(DecodeError {
                    kind: ErrorKind::Truncated {
                        need: d,
                        have: present,
                    },
                    path: String::new(),
                    offset: w.off(at),
                });
                m.body = None;
            }
            // Bytes past the body, or past a size prefix that declared less than the frame holds.
            let tail = frame.get(w.off(after)..).unwrap_or_default();
            if !tail.is_empty() {
                if m.body.is_some() && m.error.is_none() {
                    // The body decoded completely; brokers ignore what follows (contract).
                    m.trailing = tail.len();
                    m.warnings
                        .push(format!("{} bytes after the body", tail.len()));
                    raw(w, tail, RAW_AFTER_BODY);
                } else {
                    m.error = Some(*w.err(tail, ErrorKind::TrailingBytes(tail.len() as u64)));
                    m.body = None;
                    raw(w, tail, RAW_UNDECODED);
                }
            }
            w.close(end);
        }
        Err(e) => {
            w.close_to(1, e.offset);
            let tail = frame.get(e.offset.min(frame.len())..).unwrap_or_default();
            if !tail.is_empty() {
                raw(w, tail, RAW_UNDECODED);
            }
            w.close(end);
            m.error = Some(*e);
        }
    }
    m.tree = Tree {
        nodes: std::mem::take(&mut w.nodes),
    };
}

fn int_at(tree: &Tree<'_>, at: Option<usize>) -> Option<i64> {
    match tree.nodes.get(at?)?.value {
        Value::Int(v) => Some(v),
        _ => None,
    }
}

/// Where header field `name` is in `head`: its place among the primitives the header
/// starts with (one node each), and the name its node carries.
fn header_place(head: &Layout, name: &str) -> Option<(usize, &'static str)> {
    head.steps
        .iter()
        .take_while(|s| matches!(s.op, Op::Fixed(..) | Op::Var { .. }))
        .position(|s| s.f.name == name)
        .and_then(|j| Some((j, head.steps.get(j)?.f.name.as_str())))
}

/// The node of field `name` of the header at node `h`, as [`Tree::field`] finds it:
/// `place` (see [`header_place`]) names it when that node is the field's own, else it
/// is looked up.
fn header_node(
    tree: &Tree<'_>,
    h: usize,
    place: Option<(usize, &'static str)>,
    name: &str,
) -> Option<usize> {
    if let Some((j, field)) = place {
        let at = h + 1 + j;
        if let (Some(n), Some(head)) = (tree.nodes.get(at), tree.nodes.get(h)) {
            if std::ptr::eq(n.name(), field)
                && n.role == Role::Field
                && n.index.is_none()
                && n.depth == head.depth + 1
                && at < head.next as usize
            {
                return Some(at);
            }
        }
    }
    tree.field(h, name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::{DecodeOptions, FieldType, Search};

    /// Whether a field of `fields` present at `v` is of type `records`, read from the
    /// schema itself rather than from a layout.
    fn schema_has_records(fields: &[Field], v: i16) -> bool {
        fields
            .iter()
            .filter(|f| f.versions.contains(v))
            .any(|f| match &f.ty {
                FieldType::Prim(p) | FieldType::ArrayOfPrim(p) => *p == Prim::Records,
                FieldType::Struct(sub) | FieldType::ArrayOfStruct(sub) => {
                    schema_has_records(sub, v)
                }
            })
    }

    #[test]
    fn records_flag_is_the_schemas_own_word() {
        let loaded = Search::from_env(Vec::new()).load();
        if loaded.schemas.sources().is_empty() {
            assert!(std::env::var("CI").as_deref() != Ok("true"), "no kafka-clients jar");
            eprintln!("SKIP: no kafka-clients jar");
            return;
        }
        let codec = Codec::new(loaded.schemas, DecodeOptions::default());
        let schemas = codec.schemas;
        let mut with = Vec::new();
        for key in schemas.api_keys().collect::<Vec<_>>() {
            for kind in [Kind::Request, Kind::Response] {
                for v in schemas.versions(key, kind) {
                    let r = resolve(&codec, key, v, kind, &Need::all());
                    let want = schemas.message(key, kind, v).is_some_and(|s| {
                        key == ENVELOPE || schema_has_records(&s.fields, v)
                    });
                    assert_eq!(r.records, want, "{key} v{v} {kind:?}");
                    if want {
                        with.push((key, kind));
                    }
                }
            }
        }
        // Produce's request and Fetch's response carry batches; Vote never does.
        assert!(with.contains(&(0, Kind::Request)) && with.contains(&(1, Kind::Response)));
        assert!(!with.iter().any(|&(k, _)| k == crate::proto::VOTE));
    }
}
