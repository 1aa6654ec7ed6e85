//! Consumer-group rebalances, from JoinGroup, SyncGroup, Heartbeat and LeaveGroup.
//!
//! A rebalance starts with the first JoinGroup request after the previous one
//! completed (or the first seen for the group). JoinGroup responses give it its
//! generation, protocol, leader and members; it completes with the first
//! successful SyncGroup response of that generation, and lasts until the last one.
//! Errors of responses are counted against the rebalance that was current when
//! they arrived; REBALANCE_IN_PROGRESS after a rebalance completed, against the next. Responses do not name their group: they are tied to it through
//! their captured request.

use super::At;
use crate::apis::facts::group::{GroupRequest, GroupResponse};
use crate::apis::facts::{HEARTBEAT, JOIN_GROUP, LEAVE_GROUP, SYNC_GROUP};
use crate::dissect::Record;
use crate::tcp::ConnId;
use std::collections::{BTreeMap, BTreeSet, HashMap};

const REBALANCE_IN_PROGRESS: i16 = 27;

/// Groups tracked; later groups are only counted.
const MAX_GROUPS: usize = 10_000;
/// Rebalances kept per group; past this the oldest is dropped (and counted).
const MAX_REBALANCES: usize = 1_000;
/// Member ids kept per rebalance (and per error); past this they are counted.
const MAX_MEMBERS: usize = 1_000;
/// Requests awaiting their response; past this the oldest half is forgotten (and counted).
const MAX_PENDING: usize = 65_536;

/// One error code seen in the responses of one API, and the members it was told to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GroupError {
    pub api: i16,
    pub code: i16,
    pub count: u64,
    /// The members whose requests got it (as their requests named them), up to a cap.
    pub members: Vec<String>,
}

/// A member's LeaveGroup.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Leave {
    pub at: At,
    pub member: String,
}

/// One rebalance of one group.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rebalance {
    /// The first JoinGroup request.
    pub began: At,
    /// The generation the JoinGroup responses gave, if one succeeded.
    pub generation: Option<i32>,
    pub protocol_type: Option<String>,
    pub protocol: Option<String>,
    pub leader: Option<String>,
    /// The members of the generation (the leader's member list, and every member
    /// that got a successful JoinGroup response), sorted.
    pub members: Vec<String>,
    /// Members beyond the cap, counted only.
    pub members_not_kept: u64,
    /// Members of this generation absent from the previous rebalance's.
    pub joined: Vec<String>,
    /// Members of the previous rebalance's generation absent from this one, having sent
    /// a LeaveGroup since it began.
    pub left: Vec<String>,
    /// Members of the previous generation absent from this one, with no LeaveGroup in
    /// the capture (timed out, or left unseen).
    pub dropped: Vec<String>,
    pub join_requests: u64,
    pub sync_requests: u64,
    /// The first successful SyncGroup response of the generation.
    pub completed: Option<At>,
    /// The last successful SyncGroup response of the generation.
    pub last_sync: Option<At>,
    /// Error codes of responses while this rebalance was the current one.
    pub errors: Vec<GroupError>,
}

impl Rebalance {
    /// From the first JoinGroup request to the last successful SyncGroup response.
    pub fn duration_ns(&self) -> Option<i64> {
        Some(self.last_sync?.ts_ns - self.began.ts_ns)
    }
}

/// Everything seen of one group.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Group {
    pub group_id: String,
    pub rebalances: Vec<Rebalance>,
    /// Older rebalances dropped to keep memory bounded.
    pub rebalances_not_kept: u64,
    pub heartbeats: u64,
    pub leaves: Vec<Leave>,
    /// LeaveGroup members past the cap, counted only.
    pub leaves_not_kept: u64,
    /// Errors before the first rebalance seen.
    pub errors_before: Vec<GroupError>,
    /// REBALANCE_IN_PROGRESS after the last rebalance completed, with no JoinGroup after.
    pub errors_after: Vec<GroupError>,
}

#[derive(Clone, Default)]
struct ErrorState {
    count: u64,
    members: BTreeSet<String>,
}

type Errors = BTreeMap<(i16, i16), ErrorState>;

#[derive(Clone)]
struct RebalanceState {
    r: Rebalance,
    members: BTreeSet<String>,
    errors: Errors,
}

#[derive(Default)]
struct GroupState {
    rebalances: Vec<RebalanceState>,
    not_kept: u64,
    heartbeats: u64,
    leaves: Vec<Leave>,
    leaves_not_kept: u64,
    errors_before: Errors,
    /// REBALANCE_IN_PROGRESS told after the current rebalance completed: it belongs to
    /// the next one, which its JoinGroup requests have not opened yet.
    carry: Errors,
}

struct Pending {
    packet: u64,
    group: String,
    member: String,
}

/// The tracker's caps (the constants above; smaller in tests).
struct Caps {
    groups: usize,
    rebalances: usize,
    pending: usize,
}

impl Default for Caps {
    fn default() -> Self {
        Caps {
            groups: MAX_GROUPS,
            rebalances: MAX_REBALANCES,
            pending: MAX_PENDING,
        }
    }
}

/// The rebalance tracker.
#[derive(Default)]
pub(super) struct Groups {
    caps: Caps,
    groups: BTreeMap<String, GroupState>,
    pending: HashMap<(ConnId, i32), Pending>,
    groups_not_kept: u64,
    pending_forgotten: u64,
    unpaired_responses: u64,
}

/// What the tracker reports.
pub(super) struct Built {
    pub groups: Vec<Group>,
    pub groups_not_kept: u64,
    pub pending_forgotten: u64,
    pub unpaired_responses: u64,
}

fn add_member(set: &mut BTreeSet<String>, not_kept: &mut u64, m: &str) {
    if m.is_empty() || set.contains(m) {
        return;
    }
    if set.len() >= MAX_MEMBERS {
        *not_kept += 1;
    } else {
        set.insert(m.to_string());
    }
}

fn count_error(errors: &mut Errors, api: i16, code: i16, member: &str) {
    let e = errors.entry((api, code)).or_default();
    e.count += 1;
    if !member.is_empty() && e.members.len() < MAX_MEMBERS {
        e.members.insert(member.to_string());
    }
}

fn errors_out(errors: &Errors) -> Vec<GroupError> {
    errors
        .iter()
        .map(|((api, code), e)| GroupError {
            api: *api,
            code: *code,
            count: e.count,
            members: e.members.iter().cloned().collect(),
        })
        .collect()
}

impl GroupState {
    /// The rebalance a JoinGroup request belongs to: the open one, or a new one.
    fn join(
        &mut self,
        at: At,
        protocol_type: Option<&str>,
        cap: usize,
    ) -> Option<&mut RebalanceState> {
        let open = self
            .rebalances
            .last()
            .is_some_and(|r| r.r.completed.is_none());
        if !open {
            if self.rebalances.len() >= cap {
                self.rebalances.remove(0);
                self.not_kept += 1;
            }
            self.rebalances.push(RebalanceState {
                r: Rebalance {
                    began: at,
                    generation: None,
                    protocol_type: None,
                    protocol: None,
                    leader: None,
                    members: Vec::new(),
                    members_not_kept: 0,
                    joined: Vec::new(),
                    left: Vec::new(),
                    dropped: Vec::new(),
                    join_requests: 0,
                    sync_requests: 0,
                    completed: None,
                    last_sync: None,
                    errors: Vec::new(),
                },
                members: BTreeSet::new(),
                errors: std::mem::take(&mut self.carry),
            });
        }
        let r = self.rebalances.last_mut()?;
        r.r.join_requests += 1;
        if let (None, Some(p)) = (&r.r.protocol_type, protocol_type) {
            r.r.protocol_type = Some(p.to_string());
        }
        Some(r)
    }
}

impl Groups {
    pub(super) fn request(&mut self, r: &Record<'_>, f: &GroupRequest<'_>) {
        let at = At::of(r);
        if !self.groups.contains_key(f.group) && self.groups.len() >= self.caps.groups {
            self.groups_not_kept += 1;
            return;
        }
        let g = self.groups.entry(f.group.to_string()).or_default();
        match f.api {
            JOIN_GROUP => {
                g.join(at, f.protocol_type, self.caps.rebalances);
            }
            SYNC_GROUP => {
                if let Some(reb) = g.rebalances.last_mut() {
                    reb.r.sync_requests += 1;
                }
            }
            HEARTBEAT => g.heartbeats += 1,
            LEAVE_GROUP => {
                for m in &f.leaving {
                    if g.leaves.len() >= MAX_MEMBERS * 10 {
                        g.leaves_not_kept += 1;
                        continue;
                    }
                    g.leaves.push(Leave {
                        at,
                        member: (*m).to_string(),
                    });
                }
            }
            _ => return,
        }
        if let Some(corr) = r.msg.correlation_id {
            if self.pending.len() >= self.caps.pending {
                self.forget_oldest();
            }
            self.pending.insert(
                (r.conn, corr),
                Pending {
                    packet: at.packet,
                    group: f.group.to_string(),
                    member: if f.api == LEAVE_GROUP {
                        f.leaving.join(",")
                    } else {
                        f.member.to_string()
                    },
                },
            );
        }
    }

    pub(super) fn response(&mut self, r: &Record<'_>, f: &GroupResponse<'_>) {
        let at = At::of(r);
        let pending = match (r.request_packet, r.msg.correlation_id) {
            (Some(rf), Some(corr)) => self
                .pending
                .remove(&(r.conn, corr))
                .filter(|p| p.packet == rf),
            _ => None,
        };
        let Some(p) = pending else {
            self.unpaired_responses += 1;
            return;
        };
        let Some(g) = self.groups.get_mut(&p.group) else {
            return;
        };
        let asker = f.member.filter(|m| !m.is_empty()).unwrap_or(&p.member);
        let mut errors: Vec<(i16, &str)> = Vec::new();
        if f.error != 0 {
            errors.push((f.error, asker));
        }
        for (m, code) in &f.member_errors {
            if *code != 0 {
                errors.push((*code, m));
            }
        }
        let cur = g.rebalances.last_mut();
        match cur {
            Some(reb) => {
                for (code, m) in &errors {
                    let next = *code == REBALANCE_IN_PROGRESS && reb.r.completed.is_some();
                    let to = if next { &mut g.carry } else { &mut reb.errors };
                    count_error(to, f.api, *code, m);
                }
                let rb = &mut reb.r;
                match f.api {
                    JOIN_GROUP if f.error == 0 => {
                        if rb.generation.is_some_and(|g| g != f.generation) {
                            // A newer generation supersedes the one this round began with.
                            reb.members.clear();
                        }
                        rb.generation = Some(f.generation);
                        if let Some(p) = f.protocol {
                            rb.protocol = Some(p.to_string());
                        }
                        if let Some(l) = f.leader.filter(|l| !l.is_empty()) {
                            rb.leader = Some(l.to_string());
                        }
                        add_member(&mut reb.members, &mut rb.members_not_kept, asker);
                        for m in &f.members {
                            add_member(&mut reb.members, &mut rb.members_not_kept, m);
                        }
                    }
                    SYNC_GROUP if f.error == 0 && rb.generation.is_some() => {
                        rb.completed.get_or_insert(at);
                        rb.last_sync = Some(at);
                    }
                    _ => {}
                }
            }
            None => {
                for (code, m) in &errors {
                    count_error(&mut g.errors_before, f.api, *code, m);
                }
            }
        }
    }

    fn forget_oldest(&mut self) {
        let mut frames: Vec<u64> = self.pending.values().map(|p| p.packet).collect();
        frames.sort_unstable();
        let cut = frames.get(frames.len() / 2).copied().unwrap_or(0);
        let before = self.pending.len();
        self.pending.retain(|_, p| p.packet >= cut);
        self.pending_forgotten += (before - self.pending.len()) as u64;
    }

    pub(super) fn build(&self) -> Built {
        let groups =
            self.groups
                .iter()
                .map(|(id, g)| {
                    let mut out: Vec<Rebalance> = Vec::new();
                    let mut prev: Option<(&BTreeSet<String>, At)> = None;
                    for s in &g.rebalances {
                        let mut r = s.r.clone();
                        r.members = s.members.iter().cloned().collect();
                        r.errors = errors_out(&s.errors);
                        if let Some((pm, _)) = prev {
                            r.joined = s.members.difference(pm).cloned().collect();
                            for m in pm.difference(&s.members) {
                                let left = g.leaves.iter().any(|l| {
                                    l.member == *m && l.at >= prev.map_or(r.began, |p| p.1)
                                });
                                if left {
                                    r.left.push(m.clone());
                                } else {
                                    r.dropped.push(m.clone());
                                }
                            }
                        } else {
                            r.joined = r.members.clone();
                        }
                        if !s.members.is_empty() {
                            prev = Some((&s.members, s.r.began));
                        }
                        out.push(r);
                    }
                    Group {
                        group_id: id.clone(),
                        rebalances: out,
                        rebalances_not_kept: g.not_kept,
                        heartbeats: g.heartbeats,
                        leaves: g.leaves.clone(),
                        leaves_not_kept: g.leaves_not_kept,
                        errors_before: errors_out(&g.errors_before),
                        errors_after: errors_out(&g.carry),
                    }
                })
                .collect();
        Built {
            groups,
            groups_not_kept: self.groups_not_kept,
            pending_forgotten: self.pending_forgotten,
            unpaired_responses: self.unpaired_responses,
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing)]
mod tests {
    use super::*;
    use crate::codec;

    fn record(packet: u64, corr: i32, request_packet: Option<u64>) -> Record<'static> {
        let mut msg = codec::decode_request(&[]);
        msg.correlation_id = Some(corr);
        let a = "10.0.0.1:1".parse().unwrap();
        Record {
            packet,
            ts_ns: packet as i64 * 1_000_000,
            first_ts_ns: 0,
            conn: ConnId(1),
            src: a,
            dst: a,
            data: &[],
            wire_size: 0,
            cut: false,
            api: None,
            request_packet,
            latency_ns: None,
            warnings: Vec::new(),
            msg,
            version_source: None,
            file: 0,
            topic_names: crate::topics::IdNames::default(),
            tls: None,
        }
    }

    fn join<'a>(group: &'a str, member: &'a str) -> GroupRequest<'a> {
        GroupRequest {
            api: JOIN_GROUP,
            group,
            member,
            generation: -1,
            protocol_type: Some("consumer"),
            protocols: vec!["range"],
            session_timeout_ms: 10_000,
            leaving: Vec::new(),
        }
    }

    fn joined(generation: i32, member: &str) -> GroupResponse<'_> {
        GroupResponse {
            api: JOIN_GROUP,
            error: 0,
            generation,
            protocol: Some("range"),
            leader: Some(member),
            member: Some(member),
            members: vec![member],
            member_errors: Vec::new(),
        }
    }

    fn synced() -> GroupResponse<'static> {
        GroupResponse {
            api: SYNC_GROUP,
            error: 0,
            generation: -1,
            protocol: None,
            leader: None,
            member: None,
            members: Vec::new(),
            member_errors: Vec::new(),
        }
    }

    #[test]
    fn caps_evict_and_count() {
        let mut g = Groups {
            caps: Caps {
                groups: 1,
                rebalances: 2,
                pending: 4,
            },
            ..Groups::default()
        };
        let mut packet = 0;
        let mut corr = 0;
        // Three rebalances of one group: the oldest is dropped and counted.
        for generation in 1..=3 {
            packet += 1;
            corr += 1;
            g.request(&record(packet, corr, None), &join("g", "m"));
            let asked = packet;
            packet += 1;
            g.response(&record(packet, corr, Some(asked)), &joined(generation, "m"));
            packet += 1;
            corr += 1;
            let mut sync = join("g", "m");
            sync.api = SYNC_GROUP;
            g.request(&record(packet, corr, None), &sync);
            let asked = packet;
            packet += 1;
            g.response(&record(packet, corr, Some(asked)), &synced());
        }
        // A second group is past the cap: counted, not kept.
        g.request(&record(100, 100, None), &join("other", "x"));
        // Unanswered requests past the pending cap: the oldest half is forgotten.
        for i in 0..6 {
            g.request(&record(200 + i, 200 + i as i32, None), &join("g", "m"));
        }
        // A response whose request was never seen.
        g.response(&record(300, 999, Some(299)), &synced());
        let b = g.build();
        assert_eq!(b.groups.len(), 1);
        assert_eq!(b.groups_not_kept, 1);
        let gr = &b.groups[0];
        assert_eq!(gr.rebalances_not_kept, 2);
        let gens: Vec<Option<i32>> = gr.rebalances.iter().map(|r| r.generation).collect();
        assert_eq!(gens, [Some(3), None]);
        assert!(b.pending_forgotten >= 2, "{}", b.pending_forgotten);
        assert_eq!(b.unpaired_responses, 1);
    }
}
