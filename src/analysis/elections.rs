//! The election timeline, from Vote.
//!
//! A Vote request is one ballot: a candidate asks one voter. Ballots are
//! grouped per cluster and topic partition, then per epoch. A PreVote sent at
//! epoch E is listed under E + 1, the epoch it would start (a prospective
//! candidate does not bump its epoch; its Vote then carries E + 1).

mod build;

use super::At;
use crate::apis::facts::{self, quorum};
use crate::apis::vote;
use crate::dissect::Record;
use crate::tcp::ConnId;
use build::{build_epoch, repeats};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::net::SocketAddr;

/// Ballots kept over the whole run; later Vote requests are only counted.
pub(super) const MAX_BALLOTS: usize = 100_000;
/// Requests awaiting their response; past this the oldest half is forgotten.
const MAX_PENDING: usize = 65_536;
/// Rounds lost before a node is listed as standing repeatedly without winning.
const REPEAT_LOSSES: u64 = 2;
/// KRaft's metadata topic, whose leader writes a LeaderChangeMessage per epoch.
const METADATA_TOPIC: &str = "__cluster_metadata";

/// Who a voter is: a node id, or only its address when the capture never tied the two.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Voter {
    Node(i32),
    Addr(SocketAddr),
}

/// The voter's answer to one ballot.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Answer {
    pub at: At,
    pub latency_ns: Option<i64>,
    pub granted: bool,
    /// The partition's error code (0 for none).
    pub error: i16,
    /// The response's top-level error code (0 for none).
    pub top_error: i16,
    /// The leader the voter knows, or -1.
    pub leader_id: i32,
    /// The voter's epoch.
    pub leader_epoch: i32,
}

/// One Vote request (a candidate asking one voter) and its answer, if captured.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ballot {
    pub voter: Voter,
    pub request: At,
    pub version: i16,
    pub answer: Option<Answer>,
}

/// One round of a candidate asking voters, as PreVote or as Vote.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Candidacy {
    pub candidate: i32,
    pub pre_vote: bool,
    /// The epoch the requests carry (for a PreVote, one less than the epoch it is listed under).
    pub replica_epoch: i32,
    pub last_offset: i64,
    pub last_offset_epoch: i32,
    pub ballots: Vec<Ballot>,
}

impl Candidacy {
    pub fn granted(&self) -> usize {
        self.ballots
            .iter()
            .filter(|b| b.answer.as_ref().is_some_and(|a| a.granted))
            .count()
    }
    pub fn denied(&self) -> usize {
        self.ballots
            .iter()
            .filter(|b| b.answer.as_ref().is_some_and(|a| !a.granted))
            .count()
    }
    pub fn unanswered(&self) -> usize {
        self.ballots.iter().filter(|b| b.answer.is_none()).count()
    }
    fn first_request(&self) -> Option<At> {
        self.ballots.iter().map(|b| b.request).min()
    }
}

/// How an epoch's election ended, as far as the capture shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// A leader is known: a candidate's Vote reached a majority of the voters
    /// seen, or a Vote response reports the leader of this epoch.
    Won,
    /// Every Vote request was answered, no candidate reached a majority, and
    /// no response reports a leader for this epoch.
    Failed,
    /// Vote requests went unanswered in the capture and no leader is known.
    Undecided,
    /// Only PreVote requests were seen for this epoch.
    NoVote,
    /// No Vote request for this epoch was captured; a response reports its leader.
    NotCaptured,
}

impl Outcome {
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Won => "won",
            Outcome::Failed => "failed",
            Outcome::Undecided => "undecided",
            Outcome::NoVote => "no_vote",
            Outcome::NotCaptured => "not_captured",
        }
    }
}

/// One epoch of one partition.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Epoch {
    pub epoch: i32,
    pub outcome: Outcome,
    pub leader: Option<i32>,
    /// The first Vote or PreVote request for this epoch.
    pub began: Option<At>,
    /// The answer that gave the leader a majority of the voters seen.
    pub majority: Option<At>,
    /// The first Vote response that reports this epoch's leader.
    pub reported: Option<At>,
    /// The first BeginQuorumEpoch request for this epoch: the leader announcing it.
    pub announced: Option<(i32, At)>,
    /// The first EndQuorumEpoch request for this epoch: the leader resigning it.
    pub resigned: Option<Resignation>,
    /// The first BeginQuorumEpoch, EndQuorumEpoch or KRaft Fetch response naming this
    /// epoch's leader: (leader, where, how many such responses).
    pub known_from: Option<(i32, At, u64)>,
    /// In the order of their first request.
    pub candidacies: Vec<Candidacy>,
    /// What the capture could not show, and anything that does not add up.
    pub notes: Vec<String>,
    /// The leader's own LeaderChangeMessage for this epoch, from a Fetch response.
    pub leader_record: Option<LeaderRecord>,
}

/// A KRaft leader's LeaderChangeMessage (a control record in `__cluster_metadata`):
/// who it is, the voters of its epoch, and who voted for it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LeaderRecord {
    /// The Fetch response that first carried it.
    pub at: At,
    pub leader: i32,
    pub voters: Vec<i32>,
    pub granting: Vec<i32>,
}

impl Epoch {
    /// From the first request to the majority, when both were captured.
    pub fn duration_ns(&self) -> Option<i64> {
        Some(self.majority?.ts_ns - self.began?.ts_ns)
    }
}

/// A leader's EndQuorumEpoch: it gives up its epoch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Resignation {
    pub leader: i32,
    pub at: At,
    /// The successors it prefers, in order.
    pub preferred: Vec<i32>,
}

/// A node that stood in several rounds it did not win.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RepeatCandidate {
    pub node: i32,
    /// Rounds (PreVote or Vote) it stood in.
    pub rounds: u64,
    /// Rounds in epochs whose leader is not this node (or is not known).
    pub lost: u64,
    pub won_epochs: Vec<i32>,
}

/// The elections of one cluster's topic partition.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PartitionElections {
    /// None for answers whose request was not captured (responses carry no cluster id).
    pub cluster_id: Option<String>,
    pub topic: String,
    pub partition: i32,
    /// Every node seen as candidate, voter or reported leader, then voters known only by address.
    pub voters_seen: Vec<Voter>,
    /// The Vote count a candidate needs: a majority of `voters_seen`.
    pub majority: usize,
    pub epochs: Vec<Epoch>,
    pub repeat_candidates: Vec<RepeatCandidate>,
}

type PartKey = (Option<String>, String, i32);

#[derive(Default)]
struct PartState {
    /// Epoch → candidacies in order of first request.
    epochs: BTreeMap<i32, Vec<Candidacy>>,
    nodes: BTreeSet<i32>,
    /// (epoch, leader) → the first report and how many responses said so.
    reports: BTreeMap<(i32, i32), (At, u64)>,
    /// Epoch → the first BeginQuorumEpoch (leader, where).
    announced: BTreeMap<i32, (i32, At)>,
    /// Epoch → the first EndQuorumEpoch.
    resigned: BTreeMap<i32, Resignation>,
    /// (epoch, leader) → the first Begin/End/Fetch response saying so, and how many did.
    known: BTreeMap<(i32, i32), (At, u64)>,
    /// Epoch → the first LeaderChangeMessage seen for it.
    leader_records: BTreeMap<i32, LeaderRecord>,
}

struct PendingBallot {
    key: PartKey,
    topic: String,
    partition: i32,
    epoch: i32,
    candidacy: usize,
    ballot: usize,
}

struct Pending {
    packet: u64,
    ballots: Vec<PendingBallot>,
}

#[derive(Default)]
pub(super) struct Elections {
    parts: BTreeMap<PartKey, PartState>,
    pending: HashMap<(ConnId, i32), Pending>,
    /// Listener addresses tied to node ids (by VoterId, or by NodeEndpoints).
    addr_nodes: HashMap<SocketAddr, i32>,
    ballots: usize,
    not_kept: u64,
    /// KRaft Fetch and Begin/End requests awaiting their response: their cluster id.
    quorum_pending: HashMap<(ConnId, i32), (u64, Option<String>)>,
    /// Ballots kept (`MAX_BALLOTS` when 0).
    max_ballots: usize,
}

/// Partitions tracked; quorum facts for further partitions are counted, not kept.
const MAX_PARTS: usize = 10_000;

impl Elections {
    pub(super) fn limit(&mut self, ballots: usize) {
        self.max_ballots = ballots.max(1);
    }

    pub(super) fn request(&mut self, r: &Record<'_>, f: &vote::RequestFacts<'_>) {
        let at = At::of(r);
        let version = r.msg.api_version.unwrap_or(0);
        let cluster = f.cluster_id.map(str::to_string);
        let voter_id = f.voter_id.filter(|v| *v >= 0);
        if let Some(v) = voter_id {
            self.addr_nodes.insert(r.dst, v);
        }
        let voter = voter_id.map_or(Voter::Addr(r.dst), Voter::Node);
        let mut pending = Vec::new();
        for p in &f.partitions {
            let max = if self.max_ballots == 0 {
                MAX_BALLOTS
            } else {
                self.max_ballots
            };
            if self.ballots >= max {
                self.not_kept += 1;
                continue;
            }
            let (name, partition, candidate) = (p.topic, p.partition, p.replica_id);
            let (replica_epoch, pre_vote) = (p.replica_epoch, p.pre_vote);
            let epoch = if pre_vote {
                replica_epoch.saturating_add(1)
            } else {
                replica_epoch
            };
            let key = (cluster.clone(), name.to_string(), partition);
            let nodes = &self.addr_nodes;
            let part = self.parts.entry(key.clone()).or_default();
            if candidate >= 0 {
                part.nodes.insert(candidate);
            }
            if let Voter::Node(v) = voter {
                part.nodes.insert(v);
            }
            let cands = part.epochs.entry(epoch).or_default();
            // A candidate asking a voter it already asked starts a new round.
            let open = cands.iter().rposition(|c| {
                c.candidate == candidate
                    && c.pre_vote == pre_vote
                    && c.replica_epoch == replica_epoch
            });
            let idx = match open {
                Some(i)
                    if cands.get(i).is_some_and(|c| {
                        c.ballots
                            .iter()
                            .all(|b| resolve(nodes, b.voter) != resolve(nodes, voter))
                    }) =>
                {
                    i
                }
                _ => {
                    cands.push(Candidacy {
                        candidate,
                        pre_vote,
                        replica_epoch,
                        last_offset: p.last_offset,
                        last_offset_epoch: p.last_offset_epoch,
                        ballots: Vec::new(),
                    });
                    cands.len() - 1
                }
            };
            let Some(c) = cands.get_mut(idx) else {
                continue;
            };
            c.ballots.push(Ballot {
                voter,
                request: at,
                version,
                answer: None,
            });
            self.ballots += 1;
            pending.push(PendingBallot {
                key,
                topic: name.to_string(),
                partition,
                epoch,
                candidacy: idx,
                ballot: c.ballots.len() - 1,
            });
        }
        if let (Some(corr), false) = (r.msg.correlation_id, pending.is_empty()) {
            if self.pending.len() >= MAX_PENDING {
                forget_oldest(&mut self.pending);
            }
            self.pending.insert(
                (r.conn, corr),
                Pending {
                    packet: at.packet,
                    ballots: pending,
                },
            );
        }
    }

    pub(super) fn response(&mut self, r: &Record<'_>, f: &vote::ResponseFacts<'_>) {
        let at = At::of(r);
        let pending = match (r.request_packet, r.msg.correlation_id) {
            (Some(rf), Some(corr)) => self
                .pending
                .remove(&(r.conn, corr))
                .filter(|p| p.packet == rf),
            _ => None,
        };
        for &(id, addr) in &f.endpoints {
            self.addr_nodes.insert(addr, id);
        }
        let top_error = f.top_error;
        for p in &f.partitions {
            let (name, partition) = (p.topic, p.partition);
            let answer = Answer {
                at,
                latency_ns: r.latency_ns,
                granted: p.granted,
                error: p.error,
                top_error,
                leader_id: p.leader_id,
                leader_epoch: p.leader_epoch,
            };
            let asked = pending.as_ref().and_then(|pd| {
                pd.ballots
                    .iter()
                    .find(|b| b.topic == name && b.partition == partition)
            });
            let key = match asked {
                Some(b) => b.key.clone(),
                None => (None, name.to_string(), partition),
            };
            let part = self.parts.entry(key).or_default();
            if answer.leader_id >= 0 {
                part.nodes.insert(answer.leader_id);
                part.reports
                    .entry((answer.leader_epoch, answer.leader_id))
                    .or_insert((at, 0))
                    .1 += 1;
            }
            if let Some(b) = asked {
                if let Some(ballot) = part
                    .epochs
                    .get_mut(&b.epoch)
                    .and_then(|c| c.get_mut(b.candidacy))
                    .and_then(|c| c.ballots.get_mut(b.ballot))
                {
                    ballot.answer = Some(answer);
                }
            }
        }
    }

    /// The partition state for a key, unless the partition cap is reached (then counted).
    fn part(&mut self, key: PartKey) -> Option<&mut PartState> {
        if !self.parts.contains_key(&key) && self.parts.len() >= MAX_PARTS {
            self.not_kept += 1;
            return None;
        }
        Some(self.parts.entry(key).or_default())
    }

    /// BeginQuorumEpoch (a leader announces its epoch), EndQuorumEpoch (it resigns), or a
    /// KRaft Fetch (kept only to learn the cluster id of its response).
    pub(super) fn quorum_request(&mut self, r: &Record<'_>, f: &quorum::QuorumRequest<'_>) {
        let at = At::of(r);
        let cluster = f.cluster_id.map(str::to_string);
        if let Some(v) = f.voter_id.filter(|v| *v >= 0) {
            self.addr_nodes.insert(r.dst, v);
        }
        for p in &f.partitions {
            let key = (cluster.clone(), p.topic.to_string(), p.partition);
            let Some(part) = self.part(key) else { continue };
            if p.leader_id >= 0 {
                part.nodes.insert(p.leader_id);
            }
            if f.api == facts::BEGIN_QUORUM_EPOCH {
                part.announced
                    .entry(p.leader_epoch)
                    .or_insert((p.leader_id, at));
            } else if f.api == facts::END_QUORUM_EPOCH {
                part.resigned
                    .entry(p.leader_epoch)
                    .or_insert_with(|| Resignation {
                        leader: p.leader_id,
                        at,
                        preferred: p.preferred.clone(),
                    });
            }
        }
        if let Some(corr) = r.msg.correlation_id {
            if self.quorum_pending.len() >= MAX_PENDING {
                let mut frames: Vec<u64> = self.quorum_pending.values().map(|p| p.0).collect();
                frames.sort_unstable();
                let cut = frames.get(frames.len() / 2).copied().unwrap_or(0);
                self.quorum_pending.retain(|_, p| p.0 >= cut);
            }
            self.quorum_pending
                .insert((r.conn, corr), (at.packet, cluster));
        }
    }

    /// The leader each partition of a Begin, End or KRaft Fetch response names.
    pub(super) fn quorum_response(&mut self, r: &Record<'_>, f: &quorum::QuorumResponse<'_>) {
        let at = At::of(r);
        let pending = match (r.request_packet, r.msg.correlation_id) {
            (Some(rf), Some(corr)) => self
                .quorum_pending
                .remove(&(r.conn, corr))
                .filter(|p| p.0 == rf),
            _ => None,
        };
        // A Fetch response is KRaft's only if its request carried a cluster id.
        if f.api == facts::FETCH && pending.is_none() {
            return;
        }
        let cluster = pending.and_then(|p| p.1);
        for p in &f.partitions {
            if p.leader_id < 0 || p.leader_epoch < 0 {
                continue;
            }
            let key = (cluster.clone(), p.topic.to_string(), p.partition);
            let Some(part) = self.part(key) else { continue };
            part.nodes.insert(p.leader_id);
            part.known
                .entry((p.leader_epoch, p.leader_id))
                .or_insert((at, 0))
                .1 += 1;
        }
    }

    /// The timeline so far, and how many Vote requests were not kept.
    pub(super) fn build(&self) -> (Vec<PartitionElections>, u64) {
        let out = self
            .parts
            .iter()
            .map(|(key, part)| self.build_part(key, part))
            .collect();
        (out, self.not_kept)
    }

    /// A LeaderChangeMessage for `epoch` of KRaft's metadata partition, as a
    /// Fetch response carried it (Vote traffic names that partition; a Fetch
    /// may name it by topic id only).
    pub(super) fn leader_change(&mut self, epoch: i32, rec: LeaderRecord) {
        let key = self
            .parts
            .keys()
            .find(|k| k.1 == METADATA_TOPIC && k.2 == 0)
            .cloned()
            .unwrap_or((None, METADATA_TOPIC.to_string(), 0));
        let part = self.parts.entry(key).or_default();
        part.nodes.insert(rec.leader);
        part.nodes.extend(rec.voters.iter().copied());
        part.leader_records.entry(epoch).or_insert(rec);
    }

    fn resolve(&self, v: Voter) -> Voter {
        resolve(&self.addr_nodes, v)
    }

    fn build_part(&self, key: &PartKey, part: &PartState) -> PartitionElections {
        let mut voters: BTreeSet<Voter> = part.nodes.iter().map(|n| Voter::Node(*n)).collect();
        let epochs_raw: Vec<(i32, Vec<Candidacy>)> = part
            .epochs
            .iter()
            .map(|(e, cands)| {
                let mut cands: Vec<Candidacy> = cands
                    .iter()
                    .map(|c| {
                        let mut c = c.clone();
                        for b in &mut c.ballots {
                            b.voter = self.resolve(b.voter);
                            voters.insert(b.voter);
                        }
                        c
                    })
                    .collect();
                cands.sort_by_key(Candidacy::first_request);
                (*e, cands)
            })
            .collect();
        let n = voters.len();
        let majority = n / 2 + 1;
        let unresolved: Vec<SocketAddr> = voters
            .iter()
            .filter_map(|v| match v {
                Voter::Addr(a) => Some(*a),
                Voter::Node(_) => None,
            })
            .collect();
        let mut all: BTreeSet<i32> = part.epochs.keys().copied().collect();
        all.extend(part.reports.keys().map(|(e, _)| *e).filter(|e| *e >= 0));
        all.extend(part.known.keys().map(|(e, _)| *e).filter(|e| *e >= 0));
        all.extend(part.announced.keys().copied().filter(|e| *e >= 0));
        all.extend(part.resigned.keys().copied().filter(|e| *e >= 0));
        all.extend(part.leader_records.keys().copied().filter(|e| *e >= 0));
        let mut epochs = Vec::new();
        for e in all {
            let cands = epochs_raw
                .iter()
                .find(|(x, _)| *x == e)
                .map(|(_, c)| c.clone())
                .unwrap_or_default();
            let mut ep = build_epoch(e, cands, majority, part);
            if !unresolved.is_empty() && !ep.candidacies.is_empty() {
                let list: Vec<String> = unresolved.iter().map(ToString::to_string).collect();
                ep.notes.push(format!(
                    "node id not learned for {}: the voters seen may count a node twice",
                    list.join(", ")
                ));
            }
            epochs.push(ep);
        }
        let repeat_candidates = repeats(&epochs);
        PartitionElections {
            cluster_id: key.0.clone(),
            topic: key.1.clone(),
            partition: key.2,
            voters_seen: voters.into_iter().collect(),
            majority,
            epochs,
            repeat_candidates,
        }
    }
}

/// The voter's node id, when its address has been tied to one.
fn resolve(nodes: &HashMap<SocketAddr, i32>, v: Voter) -> Voter {
    match v {
        Voter::Addr(a) => nodes.get(&a).map_or(v, |n| Voter::Node(*n)),
        n => n,
    }
}

/// Drops the older half of the pending requests (they are most likely never answered).
fn forget_oldest(pending: &mut HashMap<(ConnId, i32), Pending>) {
    let mut frames: Vec<u64> = pending.values().map(|p| p.packet).collect();
    frames.sort_unstable();
    let cut = frames.get(frames.len() / 2).copied().unwrap_or(0);
    pending.retain(|_, p| p.packet >= cut);
}
