//! The analysis tab's rows: the election timeline and the coordinator map of
//! an [`Analysis`], flattened into table rows, each with the message it jumps to.

use crate::analysis::{
    Analysis, At, CoordinatorKey, Epoch, Outcome, PartitionElections, error_label, key_type_name,
};
use crate::codec::Kind;

/// Which tab is shown.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tab {
    Messages,
    Analysis,
}

/// Which table of the analysis tab has the keyboard.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Table {
    Elections,
    Coordinators,
}

/// The message an entry jumps to: completed by packet `frame`, of this API and kind.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Target {
    pub frame: u64,
    pub api_key: i16,
    pub kind: Kind,
    /// What it is, for the status bar.
    pub what: String,
}

/// One epoch of one partition.
#[derive(Clone, Debug, PartialEq)]
pub struct ElectionRow {
    /// Index of its partition in the analysis's elections.
    pub part: usize,
    /// `topic-partition`, with the cluster when several clusters are seen.
    pub partition: String,
    pub epoch: i32,
    pub outcome: Outcome,
    pub leader: Option<i32>,
    /// Candidates in order of their first request, `pre` for a PreVote round.
    pub candidates: String,
    /// Ballots granted, denied and unanswered over every round.
    pub ballots: (usize, usize, usize),
    pub began: Option<At>,
    pub duration_ns: Option<i64>,
    pub target: Option<Target>,
}

/// One key of the coordinator map.
#[derive(Clone, Debug, PartialEq)]
pub struct CoordinatorRow {
    pub key_type: String,
    pub key: String,
    /// The last answer: `node N host:port`, an error name, or `-` when none was captured.
    pub answer: String,
    pub answer_is_error: bool,
    /// The last answer's time.
    pub when: Option<At>,
    pub requests: u64,
    pub answers: u64,
    pub changes: usize,
    pub errors: u64,
    pub target: Option<Target>,
}

/// The election rows of every partition, in the analysis's order.
pub fn election_rows(a: &Analysis) -> Vec<ElectionRow> {
    let clusters = {
        let mut c: Vec<_> = a.elections.iter().map(|p| &p.cluster_id).collect();
        c.sort();
        c.dedup();
        c.len()
    };
    let mut rows = Vec::new();
    for (part, p) in a.elections.iter().enumerate() {
        for e in &p.epochs {
            rows.push(election_row(part, p, e, clusters > 1));
        }
    }
    rows
}

fn election_row(part: usize, p: &PartitionElections, e: &Epoch, show_cluster: bool) -> ElectionRow {
    let mut partition = format!("{}-{}", p.topic, p.partition);
    if show_cluster {
        let c = p.cluster_id.as_deref().unwrap_or("?");
        partition = format!("{c}/{partition}");
    }
    let candidates = e
        .candidacies
        .iter()
        .map(|c| {
            if c.pre_vote {
                format!("{} pre", c.candidate)
            } else {
                format!("{} vote", c.candidate)
            }
        })
        .collect::<Vec<_>>()
        .join(", ");
    let ballots = e.candidacies.iter().fold((0, 0, 0), |(g, d, u), c| {
        (g + c.granted(), d + c.denied(), u + c.unanswered())
    });
    let target = match (e.began, e.reported) {
        (Some(b), _) => Some(Target {
            frame: b.frame,
            api_key: 52,
            kind: Kind::Request,
            what: format!("epoch {}: its first Vote request", e.epoch),
        }),
        (None, Some(r)) => Some(Target {
            frame: r.frame,
            api_key: 52,
            kind: Kind::Response,
            what: format!("epoch {}: the first response reporting its leader", e.epoch),
        }),
        (None, None) => None,
    };
    ElectionRow {
        part,
        partition,
        epoch: e.epoch,
        outcome: e.outcome,
        leader: e.leader,
        candidates,
        ballots,
        began: e.began,
        duration_ns: e.duration_ns(),
        target,
    }
}

/// One row per key of the coordinator map.
pub fn coordinator_rows(a: &Analysis) -> Vec<CoordinatorRow> {
    a.coordinators.iter().map(coordinator_row).collect()
}

fn coordinator_row(k: &CoordinatorKey) -> CoordinatorRow {
    let key_type = key_type_name(k.key_type);
    let last = k.answers.last();
    let (answer, answer_is_error) = match last {
        Some(a) => match &a.coordinator {
            Some(c) => (format!("node {} {}:{}", c.node, c.host, c.port), false),
            None => (error_label(a.error), true),
        },
        None => ("-".to_string(), false),
    };
    let target = k.answers.first().map(|a| Target {
        frame: a.at.frame,
        api_key: 10,
        kind: Kind::Response,
        what: format!("{key_type} {}: its first FindCoordinator answer", k.key),
    });
    CoordinatorRow {
        key_type,
        key: k.key.clone(),
        answer,
        answer_is_error,
        when: last.map(|a| a.at),
        requests: k.requests,
        answers: k.answers.len() as u64 + k.answers_not_kept,
        changes: k.changes.len(),
        errors: k.errors.iter().map(|(_, n)| n).sum(),
        target,
    }
}
