//! The coordinator map, from FindCoordinator (API key 10).

use super::At;
use crate::apis::find_coordinator;
use crate::dissect::Record;
use crate::tcp::ConnId;
use std::collections::{BTreeMap, HashMap};
use std::net::{IpAddr, SocketAddr};

/// Keys tracked; answers for further keys are only counted.
const MAX_KEYS: usize = 10_000;
/// Answers kept per key by default; later ones still count in the totals and changes.
pub(super) const MAX_ANSWERS: usize = 1_000;
/// Requests awaiting their response; past this the oldest half is forgotten.
const MAX_PENDING: usize = 65_536;
/// Requests for one key from one client before it is listed as asking repeatedly.
pub const REPEAT_ASKS: u64 = 3;

/// A coordinator as answered.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Endpoint {
    pub node: i32,
    pub host: String,
    pub port: i32,
}

/// One answer for one key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CoordinatorAnswer {
    pub at: At,
    pub version: Option<i16>,
    /// The asking client's id, when its request was captured.
    pub client_id: Option<String>,
    pub client: SocketAddr,
    /// The broker that answered.
    pub broker: SocketAddr,
    pub latency_ns: Option<i64>,
    /// The coordinator, when the answer is not an error.
    pub coordinator: Option<Endpoint>,
    pub error: i16,
    pub error_message: Option<String>,
}

/// The coordinator changed between two successful answers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CoordinatorChange {
    pub at: At,
    pub from: Endpoint,
    pub to: Endpoint,
}

/// A client (client id and address) asking for one key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Asker {
    pub client_id: Option<String>,
    pub ip: IpAddr,
    pub requests: u64,
    /// Answers to this client that were errors.
    pub errors: u64,
}

/// Everything captured about one key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CoordinatorKey {
    /// 0 group, 1 transaction, 2 share; None when only a v4+ answer (no request) names the key.
    pub key_type: Option<i8>,
    pub key: String,
    pub requests: u64,
    /// Requests for this key with no answer (yet).
    pub unanswered: u64,
    pub answers: Vec<CoordinatorAnswer>,
    /// Answers beyond the cap, counted but not listed.
    pub answers_not_kept: u64,
    /// The latest changes.
    pub changes: Vec<CoordinatorChange>,
    /// Earlier changes, counted but not listed.
    pub changes_not_kept: u64,
    /// Error answers by code, in code order.
    pub errors: Vec<(i16, u64)>,
    /// Clients with at least `REPEAT_ASKS` requests for this key.
    pub repeat_askers: Vec<Asker>,
}

/// The name of a key type.
pub fn key_type_name(t: Option<i8>) -> String {
    crate::view::labels::key_type_words(t)
}

type Key = (Option<i8>, String);

#[derive(Default)]
struct KeyState {
    requests: u64,
    answers: Vec<CoordinatorAnswer>,
    answers_not_kept: u64,
    last_ok: Option<Endpoint>,
    changes: Vec<CoordinatorChange>,
    changes_not_kept: u64,
    errors: BTreeMap<i16, u64>,
    askers: BTreeMap<(Option<String>, IpAddr), (u64, u64)>,
}

struct Pending {
    packet: u64,
    key_type: i8,
    keys: Vec<String>,
    client_id: Option<String>,
}

#[derive(Default)]
pub(super) struct Coordinators {
    keys: BTreeMap<Key, KeyState>,
    pending: HashMap<(ConnId, i32), Pending>,
    without_key: u64,
    keys_not_kept: u64,
    /// Answers kept per key (`MAX_ANSWERS` when 0).
    max_answers: usize,
    /// Once full, the last slot holds the latest answer.
    latest_answer: bool,
    /// Clients asking repeatedly are not tracked.
    no_askers: bool,
}

pub(super) struct Built {
    pub keys: Vec<CoordinatorKey>,
    pub without_key: u64,
    pub keys_not_kept: u64,
}

impl Coordinators {
    pub(super) fn limit(&mut self, answers: usize, latest: bool, askers: bool) {
        self.max_answers = answers.max(1);
        self.latest_answer = latest;
        self.no_askers = !askers;
    }

    fn key_state(&mut self, k: Key) -> Option<&mut KeyState> {
        if !self.keys.contains_key(&k) && self.keys.len() >= MAX_KEYS {
            self.keys_not_kept += 1;
            return None;
        }
        Some(self.keys.entry(k).or_default())
    }

    pub(super) fn request(&mut self, r: &Record<'_>, f: find_coordinator::RequestFacts) {
        let find_coordinator::RequestFacts { key_type, keys } = f;
        let client_id = r.msg.client_id.map(str::to_string);
        let ip = r.src.ip();
        let askers = !self.no_askers;
        for k in &keys {
            if let Some(s) = self.key_state((Some(key_type), k.clone())) {
                s.requests += 1;
                if askers {
                    s.askers.entry((client_id.clone(), ip)).or_default().0 += 1;
                }
            }
        }
        if let Some(corr) = r.msg.correlation_id {
            if self.pending.len() >= MAX_PENDING {
                let mut frames: Vec<u64> = self.pending.values().map(|p| p.packet).collect();
                frames.sort_unstable();
                let cut = frames.get(frames.len() / 2).copied().unwrap_or(0);
                self.pending.retain(|_, p| p.packet >= cut);
            }
            self.pending.insert(
                (r.conn, corr),
                Pending {
                    packet: r.packet,
                    key_type,
                    keys,
                    client_id,
                },
            );
        }
    }

    pub(super) fn response(&mut self, r: &Record<'_>, f: &find_coordinator::ResponseFacts<'_>) {
        let pending = match (r.request_packet, r.msg.correlation_id) {
            (Some(rf), Some(corr)) => self
                .pending
                .remove(&(r.conn, corr))
                .filter(|p| p.packet == rf),
            _ => None,
        };
        let answer = |at: &find_coordinator::AnswerFacts<'_>, key_type: Option<i8>, key: String| {
            let error = at.error;
            let coordinator = (error == 0).then(|| Endpoint {
                node: at.node,
                host: at.host.to_string(),
                port: at.port,
            });
            let a = CoordinatorAnswer {
                at: At::of(r),
                version: r.msg.api_version,
                client_id: pending.as_ref().and_then(|p| p.client_id.clone()),
                client: r.dst,
                broker: r.src,
                latency_ns: r.latency_ns,
                coordinator,
                error,
                error_message: at.error_message.map(str::to_string),
            };
            ((key_type, key), a)
        };
        let mut answers = Vec::new();
        let key_type = pending.as_ref().map(|p| p.key_type);
        if f.batched {
            for c in &f.answers {
                answers.push(answer(c, key_type, c.key.to_string()));
            }
        } else {
            match (
                pending.as_ref().and_then(|p| p.keys.first()),
                f.answers.first(),
            ) {
                (Some(k), Some(a)) => answers.push(answer(a, key_type, k.clone())),
                _ => self.without_key += 1,
            }
        }
        let max = if self.max_answers == 0 {
            MAX_ANSWERS
        } else {
            self.max_answers
        };
        let latest = self.latest_answer;
        // The latest changes are kept, as many as answers.
        let max_changes = max;
        for (key, a) in answers {
            let asker = (a.client_id.clone(), a.client.ip());
            let Some(s) = self.key_state(key) else {
                continue;
            };
            if a.error != 0 {
                *s.errors.entry(a.error).or_default() += 1;
                if let Some(x) = s.askers.get_mut(&asker) {
                    x.1 += 1;
                }
            }
            if let Some(to) = &a.coordinator {
                if let Some(from) = s.last_ok.as_ref().filter(|f| *f != to) {
                    s.changes.push(CoordinatorChange {
                        at: a.at,
                        from: from.clone(),
                        to: to.clone(),
                    });
                    if s.changes.len() > max_changes {
                        s.changes.remove(0);
                        s.changes_not_kept += 1;
                    }
                }
                s.last_ok = Some(to.clone());
            }
            if s.answers.len() < max {
                s.answers.push(a);
            } else {
                s.answers_not_kept += 1;
                if latest {
                    if let Some(last) = s.answers.last_mut() {
                        *last = a;
                    }
                }
            }
        }
    }

    pub(super) fn build(&self) -> Built {
        let mut unanswered: HashMap<Key, u64> = HashMap::new();
        for p in self.pending.values() {
            for k in &p.keys {
                *unanswered.entry((Some(p.key_type), k.clone())).or_default() += 1;
            }
        }
        let keys = self
            .keys
            .iter()
            .map(|(k, s)| CoordinatorKey {
                key_type: k.0,
                key: k.1.clone(),
                requests: s.requests,
                unanswered: unanswered.get(k).copied().unwrap_or(0),
                answers: s.answers.clone(),
                answers_not_kept: s.answers_not_kept,
                changes: s.changes.clone(),
                changes_not_kept: s.changes_not_kept,
                errors: s.errors.iter().map(|(c, n)| (*c, *n)).collect(),
                repeat_askers: s
                    .askers
                    .iter()
                    .filter(|(_, (n, _))| *n >= REPEAT_ASKS)
                    .map(|((id, ip), (n, e))| Asker {
                        client_id: id.clone(),
                        ip: *ip,
                        requests: *n,
                        errors: *e,
                    })
                    .collect(),
            })
            .collect();
        Built {
            keys,
            without_key: self.without_key,
            keys_not_kept: self.keys_not_kept,
        }
    }
}
