//! Capture-wide analysis for `kwire stats`: the KRaft election timeline (from
//! Vote), the coordinator map (from FindCoordinator), and per-API counts,
//! latencies and errors.
//!
//! An [`Analyzer`] is fed every [`Record`] in capture order, so a file, a live
//! capture and the TUI use it alike; [`Analyzer::analysis`] builds a plain
//! [`Analysis`] at any point, which [`render_text`] and [`to_json`] render.
//! Memory is bounded: every list kept grows only up to a fixed cap, beyond
//! which items are counted, not kept.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

mod apis;
mod coordinators;
mod elections;
mod groups;
mod groups_text;
mod html;
mod json;
mod text;

pub use apis::{ApiStats, Latency, Percentiles};

pub use coordinators::{
    Asker, CoordinatorAnswer, CoordinatorChange, CoordinatorKey, Endpoint, key_type_name,
};
pub use elections::{
    Ballot, Candidacy, Epoch, LeaderRecord, Outcome, PartitionElections, RepeatCandidate,
    Resignation, Voter,
};
pub use groups::{Group, GroupError, Leave, Rebalance};
pub use html::render_html;
pub use json::to_json;
pub use text::render_text;

use crate::apis::facts::{self, Feed};
use crate::apis::{self as api_table, Track};
use crate::codec::Kind;
use crate::dissect::Record;

/// Where in the capture something happened: the packet that completed the message, and its time.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct At {
    pub packet: u64,
    pub ts_ns: i64,
}

impl At {
    fn of(r: &Record<'_>) -> At {
        At {
            packet: r.packet,
            ts_ns: r.ts_ns,
        }
    }
}

/// Everything `kwire stats` reports, as plain data.
#[derive(Clone, Debug, Default)]
pub struct Analysis {
    /// Timestamp of the capture's first packet (times in the text are relative to it).
    pub first_ts_ns: Option<i64>,
    /// Timestamp of the last message seen.
    pub last_ts_ns: Option<i64>,
    pub messages: u64,
    /// One entry per cluster and topic partition that Vote traffic names.
    pub elections: Vec<PartitionElections>,
    /// Vote requests not analysed because the election cap was reached.
    pub votes_not_kept: u64,
    /// One entry per (key type, key) that FindCoordinator asks or answers.
    pub coordinators: Vec<CoordinatorKey>,
    /// FindCoordinator v0–v3 answers whose request (and so whose key) was not captured.
    pub coordinator_answers_without_key: u64,
    /// FindCoordinator keys not tracked because the key cap was reached.
    pub coordinator_keys_not_kept: u64,
    /// Per API key, in key order; `api_key` None collects responses whose API is unknown.
    pub apis: Vec<ApiStats>,
    /// One entry per consumer group that JoinGroup, SyncGroup, Heartbeat or LeaveGroup names.
    pub groups: Vec<Group>,
    /// Groups not tracked because the group cap was reached.
    pub groups_not_kept: u64,
    /// Group requests forgotten before their response (the pending cap was reached).
    pub group_requests_forgotten: u64,
    /// Group responses whose request was not captured (they do not name their group).
    pub group_responses_without_request: u64,
}

/// Builds an [`Analysis`] from records fed in capture order.
#[derive(Default)]
pub struct Analyzer {
    first_ts_ns: Option<i64>,
    last_ts_ns: Option<i64>,
    messages: u64,
    elections: elections::Elections,
    coordinators: coordinators::Coordinators,
    apis: apis::Apis,
    groups: groups::Groups,
}

/// How much the analysis keeps; beyond these, entries are counted, not kept.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// FindCoordinator answers listed per key, and as many of its latest coordinator changes.
    pub answers_per_key: usize,
    /// Once a key's list is full, its last slot holds the latest answer (for a
    /// view that shows the first and the latest) instead of keeping the first ones.
    pub latest_answer: bool,
    /// Vote ballots (one per partition of a Vote request) over all partitions.
    pub ballots: usize,
    /// Whether clients that keep asking for a coordinator are tracked (per key and client).
    pub repeat_askers: bool,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            answers_per_key: coordinators::MAX_ANSWERS,
            latest_answer: false,
            ballots: elections::MAX_BALLOTS,
            repeat_askers: true,
        }
    }
}

impl Limits {
    /// What a view of the first and latest answer and the election timeline
    /// needs, for a process that must stay small whatever the capture's size
    /// (the TUI).
    pub fn compact() -> Limits {
        Limits {
            answers_per_key: 2,
            latest_answer: true,
            ballots: 10_000,
            repeat_askers: false,
        }
    }
}

impl Analyzer {
    pub fn new() -> Analyzer {
        Analyzer::default()
    }

    /// An analyzer that keeps at most what `limits` says.
    pub fn with_limits(limits: Limits) -> Analyzer {
        let mut a = Analyzer::default();
        a.coordinators
            .limit(limits.answers_per_key, limits.latest_answer, limits.repeat_askers);
        a.elections.limit(limits.ballots);
        a
    }

    /// Takes in one record.
    pub fn record(&mut self, r: &Record<'_>) {
        self.first_ts_ns.get_or_insert(r.first_ts_ns);
        self.last_ts_ns = Some(r.ts_ns);
        self.messages += 1;
        self.apis.record(r);
        let m = &r.msg;
        let Some(body) = m.body.filter(|_| m.error.is_none()) else {
            // Undecodable: a pending request it answers stays unanswered.
            return;
        };
        if let Some(key) = m.api_key {
            self.facts(r, key, body);
        }
        if m.api_key == Some(1) && m.kind == Kind::Response {
            self.leader_changes(r);
        }
        let Some(api) = m.api_key.and_then(api_table::get) else {
            return;
        };
        match (api.track, m.kind) {
            (Track::Elections, Kind::Request) => {
                let f = api_table::vote::request_facts(&m.tree, body);
                self.elections.request(r, &f);
            }
            (Track::Elections, Kind::Response) => {
                let f = api_table::vote::response_facts(&m.tree, body);
                self.elections.response(r, &f);
            }
            (Track::Coordinators, Kind::Request) => {
                let f = api_table::find_coordinator::request_facts(&m.tree, body);
                self.coordinators.request(r, f);
            }
            (Track::Coordinators, Kind::Response) => {
                let f = api_table::find_coordinator::response_facts(&m.tree, body);
                self.coordinators.response(r, &f);
            }
            (Track::SummaryOnly, _) => {}
        }
    }

    /// The analyses fed by `apis::facts`.
    fn facts(&mut self, r: &Record<'_>, key: i16, body: usize) {
        let m = &r.msg;
        match (facts::feed(key), m.kind) {
            (Some(Feed::Groups), Kind::Request) => {
                if let Some(f) = facts::group::request_facts(key, &m.tree, body) {
                    self.groups.request(r, &f);
                }
            }
            (Some(Feed::Groups), Kind::Response) => {
                if let Some(f) = facts::group::response_facts(key, &m.tree, body) {
                    self.groups.response(r, &f);
                }
            }
            (Some(Feed::Quorum), Kind::Request) => {
                if let Some(f) = facts::quorum::request_facts(key, &m.tree, body) {
                    self.elections.quorum_request(r, &f);
                }
            }
            (Some(Feed::Quorum), Kind::Response) => {
                if let Some(f) = facts::quorum::response_facts(key, &m.tree, body) {
                    self.elections.quorum_response(r, &f);
                }
            }
            (None, _) => {}
        }
    }

    /// LeaderChangeMessages in a Fetch response's control batches (read from
    /// batch headers first, so only control batches are decoded).
    fn leader_changes(&mut self, r: &Record<'_>) {
        use crate::records::{self, ControlBody, Entry, Options};
        let opts = Options {
            schemas: Some(&records::kraft::Kraft),
            ..Options::current()
        };
        for n in &r.msg.tree.nodes {
            let Some(data) = crate::view::records::data(n) else {
                continue;
            };
            for s in records::summary::summaries(data).filter(|s| s.is_control) {
                let Some(batch) = data.get(s.at..s.at + s.bytes) else {
                    continue;
                };
                for e in records::batches(batch, &opts) {
                    let Entry::Batch(b) = e else { continue };
                    for rec in &b.records {
                        let Some(Ok(c)) = &rec.control else { continue };
                        let ControlBody::Data(d) = &c.body else {
                            continue;
                        };
                        if c.type_id != 2 {
                            continue;
                        }
                        let ids = |k: &str| -> Vec<i32> {
                            d[k].as_array()
                                .map(|a| {
                                    a.iter()
                                        .filter_map(|v| v["VoterId"].as_i64())
                                        .filter_map(|v| i32::try_from(v).ok())
                                        .collect()
                                })
                                .unwrap_or_default()
                        };
                        let Some(leader) =
                            d["LeaderId"].as_i64().and_then(|v| i32::try_from(v).ok())
                        else {
                            continue;
                        };
                        let lr = elections::LeaderRecord {
                            at: At::of(r),
                            leader,
                            voters: ids("Voters"),
                            granting: ids("GrantingVoters"),
                        };
                        self.elections
                            .leader_change(b.header.partition_leader_epoch, lr);
                    }
                }
            }
        }
    }

    /// The analysis so far (it can be taken again after more records).
    pub fn analysis(&self) -> Analysis {
        let (elections, votes_not_kept) = self.elections.build();
        let c = self.coordinators.build();
        let g = self.groups.build();
        Analysis {
            first_ts_ns: self.first_ts_ns,
            last_ts_ns: self.last_ts_ns,
            messages: self.messages,
            elections,
            votes_not_kept,
            coordinators: c.keys,
            coordinator_answers_without_key: c.without_key,
            coordinator_keys_not_kept: c.keys_not_kept,
            apis: self.apis.build(),
            groups: g.groups,
            groups_not_kept: g.groups_not_kept,
            group_requests_forgotten: g.pending_forgotten,
            group_responses_without_request: g.unpaired_responses,
        }
    }
}

/// Kafka's name for an error code, or `error N`.
pub fn error_label(code: i16) -> String {
    crate::view::labels::error(i64::from(code))
}
