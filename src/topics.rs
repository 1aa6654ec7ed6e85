//! Topic ids named: Produce v13+, Fetch v13+ and other messages carry a topic's id
//! instead of its name. Responses that carry both (Metadata, CreateTopics, DeleteTopics,
//! DescribeTopicPartitions, …) teach which name each id stands for.
//!
//! The state is per run and fed in message order by the pipeline: each record is
//! given the names known *before* it ([`TopicNames::names_for`]), then its own pairs
//! are learned ([`TopicNames::learn`]). A record carries its few names with it
//! ([`IdNames`]), so the views and the TUI (which decodes a message again long after
//! the run went past it) need no access to the run's state: the layering stays
//! codec → dissect/topics → pipeline → views.
#![cfg_attr(
    not(test),
    deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)
)]

use crate::codec::{Kind, Message, Role, Tree, Value};
use rustc_hash::FxHashMap as HashMap;
use std::collections::VecDeque;
use std::sync::Arc;

/// Kafka's longest topic name is 249 bytes; longer names on the wire are not kept.
const MAX_NAME: usize = 255;

/// The field a topic id is in.
const TOPIC_ID: &str = "TopicId";

/// The string fields that name the topic beside a `TopicId` in Kafka's schemas.
const NAME_FIELDS: [&str; 3] = ["Name", "TopicName", "Topic"];

/// KRaft's metadata log has a fixed id (Kafka's `Uuid.METADATA_TOPIC_ID`), which no
/// response names: KRaft Fetch requests carry it from the start.
const METADATA_TOPIC: ([u8; 16], &str) = (
    [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1],
    "__cluster_metadata",
);

/// How many ids are remembered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TopicNamesConfig {
    /// Ids remembered at once; the oldest learned is forgotten first.
    pub max_ids: usize,
}

impl Default for TopicNamesConfig {
    fn default() -> Self {
        TopicNamesConfig { max_ids: 100_000 }
    }
}

/// What learning counted, for the end-of-run report.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TopicNamesStats {
    /// Distinct ids learned (a later answer naming a known id again is not counted).
    pub learned: u64,
    /// Ids forgotten to stay within `max_ids`.
    pub evicted: u64,
    /// Pairs not kept because the name is longer than any Kafka allows.
    pub too_long: u64,
}

/// Id → name, learned from responses, bounded with first-in first-out eviction.
#[derive(Debug, Default)]
pub struct TopicNames {
    map: HashMap<[u8; 16], Arc<str>>,
    order: VecDeque<[u8; 16]>,
    max: usize,
    stats: TopicNamesStats,
}

impl TopicNames {
    pub fn new(cfg: TopicNamesConfig) -> Self {
        let mut map = HashMap::default();
        map.insert(METADATA_TOPIC.0, Arc::from(METADATA_TOPIC.1));
        TopicNames {
            map,
            max: cfg.max_ids,
            ..TopicNames::default()
        }
    }

    pub fn stats(&self) -> TopicNamesStats {
        self.stats
    }

    /// The name of `id`, if an earlier response gave it.
    pub fn get(&self, id: &[u8; 16]) -> Option<&str> {
        self.map.get(id).map(|s| &**s)
    }

    /// Learns every (id, name) pair a fully decoded response states: a struct with a
    /// non-zero `TopicId` and a non-empty name beside it. Requests are not trusted:
    /// a client may ask about an id or a name the broker does not know.
    pub fn learn(&mut self, m: &Message<'_>) {
        if m.kind != Kind::Response || m.error.is_some() {
            return;
        }
        let Some(body) = id_body(m) else { return };
        for t in topic_ids(&m.tree, body) {
            if let Some(name) = wire_name(&m.tree, t.holder) {
                self.insert(t.id, name);
            }
        }
    }

    fn insert(&mut self, id: [u8; 16], name: &str) {
        if name.len() > MAX_NAME {
            self.stats.too_long += 1;
            return;
        }
        if id == METADATA_TOPIC.0 {
            return;
        }
        if let Some(old) = self.map.get_mut(&id) {
            if **old != *name {
                *old = Arc::from(name);
            }
            return;
        }
        while self.order.len() >= self.max {
            let Some(gone) = self.order.pop_front() else {
                break;
            };
            self.map.remove(&gone);
            self.stats.evicted += 1;
        }
        if self.max == 0 {
            self.stats.evicted += 1;
            return;
        }
        self.map.insert(id, Arc::from(name));
        self.order.push_back(id);
        self.stats.learned += 1;
    }

    /// [`TopicNames::names_for`] then [`TopicNames::learn`], finding the message's
    /// topic ids once for both (what the pipeline does with every message).
    #[inline]
    pub fn see(&mut self, m: &Message<'_>) -> IdNames {
        // Most messages' schemas have no topic id: settled in line.
        match id_body(m) {
            Some(body) => self.see_body(m, body),
            None => IdNames::default(),
        }
    }

    #[inline(never)]
    fn see_body(&mut self, m: &Message<'_>, body: usize) -> IdNames {
        let ids = topic_ids(&m.tree, body);
        if ids.is_empty() {
            return IdNames::default();
        }
        let out = self.names_among(&m.tree, &ids);
        if m.kind == Kind::Response && m.error.is_none() {
            for t in &ids {
                if let Some(name) = wire_name(&m.tree, t.holder) {
                    self.insert(t.id, name);
                }
            }
        }
        out
    }

    /// Whether `m` carries a topic id: only such a message reads or changes the names
    /// (see [`TopicNames::see`]), so only it must wait for the messages before it.
    pub fn carries_ids(m: &Message<'_>) -> bool {
        id_body(m).is_some_and(|body| !topic_ids(&m.tree, body).is_empty())
    }

    /// The known names of the ids `m` carries, for its record.
    pub fn names_for(&self, m: &Message<'_>) -> IdNames {
        let Some(body) = id_body(m) else {
            return IdNames::default();
        };
        self.names_among(&m.tree, &topic_ids(&m.tree, body))
    }

    fn names_among(&self, tree: &Tree<'_>, ids: &[IdAt]) -> IdNames {
        let mut out = Vec::new();
        if self.map.is_empty() {
            return IdNames::default();
        }
        for t in ids {
            if wire_name(tree, t.holder).is_some() {
                continue;
            }
            if let Some(name) = self.map.get(&t.id) {
                if let Err(at) = out.binary_search_by(|(k, _): &IdName| k.cmp(&t.id)) {
                    out.insert(at, (t.id, Arc::clone(name)));
                }
            }
        }
        IdNames((!out.is_empty()).then(|| out.into_boxed_slice()))
    }
}

/// The body of `m` to look for topic ids in: none when its schema has no `TopicId`
/// (see [`Message::topic_ids`]), which spares most messages the search.
fn id_body(m: &Message<'_>) -> Option<usize> {
    m.body.filter(|_| m.topic_ids)
}

/// One non-zero `TopicId` field of a tree.
struct IdAt {
    id: [u8; 16],
    /// The field's node.
    node: usize,
    /// The struct that holds it.
    holder: usize,
}

/// Every non-zero `TopicId` under `body`.
fn topic_ids(tree: &Tree<'_>, body: usize) -> Vec<IdAt> {
    let end = tree.nodes.get(body).map_or(body, |n| n.next as usize);
    let mut out = Vec::new();
    for i in body + 1..end {
        let Some(n) = tree.nodes.get(i) else { break };
        // The value first: a name compare for every field is what this loop would cost.
        if let (Value::Uuid(id), Role::Field, TOPIC_ID) = (n.value, n.role, n.name()) {
            if id != [0; 16] {
                if let Some(holder) = holder(tree, i) {
                    out.push(IdAt {
                        id,
                        node: i,
                        holder,
                    });
                }
            }
        }
    }
    out
}

/// The struct a field belongs to: its parent, or for a known tagged field the struct
/// around the tagged-field section.
fn holder(tree: &Tree<'_>, i: usize) -> Option<usize> {
    let mut at = parent(tree, i)?;
    while matches!(
        tree.nodes.get(at).map(|n| n.role),
        Some(Role::Tagged(_) | Role::TaggedFields)
    ) {
        at = parent(tree, at)?;
    }
    Some(at)
}

/// The nearest node before `i` that is shallower: its parent in the pre-order tree.
fn parent(tree: &Tree<'_>, i: usize) -> Option<usize> {
    let depth = tree.nodes.get(i)?.depth;
    (0..i)
        .rev()
        .find(|&p| tree.nodes.get(p).is_some_and(|n| n.depth < depth))
}

/// The topic name the wire gives beside a `TopicId` in struct `parent`.
fn wire_name<'a>(tree: &Tree<'a>, parent: usize) -> Option<&'a str> {
    NAME_FIELDS
        .iter()
        .find_map(|f| tree.str(parent, f).flatten())
        .filter(|s| !s.is_empty())
}

/// The names a run knew, before a message, for the topic ids it carries where the
/// message does not name the topic itself. Sorted by id, one entry per id.
/// None when empty, as for most messages: a record then drops it at no cost.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct IdNames(Option<Box<[IdName]>>);

/// A topic id and its name.
type IdName = ([u8; 16], Arc<str>);

impl Drop for IdNames {
    /// In line, most records' (empty) names cost a test to drop; the others, a call.
    #[inline(always)]
    fn drop(&mut self) {
        if self.0.is_some() {
            drop_names(self.0.take());
        }
    }
}

#[inline(never)]
fn drop_names(names: Option<Box<[IdName]>>) {
    drop(names);
}

impl IdNames {
    pub fn is_empty(&self) -> bool {
        self.0.as_deref().is_none_or(<[_]>::is_empty)
    }

    pub fn get(&self, id: &[u8; 16]) -> Option<&str> {
        let names = self.0.as_deref()?;
        let at = names.binary_search_by(|(k, _)| k.cmp(id)).ok()?;
        names.get(at).map(|(_, n)| &**n)
    }

    /// The `TopicId` nodes of `tree` to show a name beside, in tree order: those with
    /// a known id whose struct does not name the topic itself.
    pub fn nodes<'s>(&'s self, tree: &Tree<'_>) -> Vec<(usize, &'s str)> {
        if self.is_empty() {
            return Vec::new();
        }
        let Some(body) = tree.body() else {
            return Vec::new();
        };
        topic_ids(tree, body)
            .into_iter()
            .filter(|t| wire_name(tree, t.holder).is_none())
            .filter_map(|t| Some((t.node, self.get(&t.id)?)))
            .collect()
    }
}
