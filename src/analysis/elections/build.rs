//! Turning the ballots of one partition into epochs: outcomes, notes, repeat candidates.

use super::*;

pub(super) fn build_epoch(
    e: i32,
    candidacies: Vec<Candidacy>,
    majority: usize,
    part: &PartState,
) -> Epoch {
    let mut notes = Vec::new();
    let began = candidacies
        .iter()
        .filter_map(Candidacy::first_request)
        .min();
    // The earliest answer that gave a Vote candidate a majority (its own vote counts).
    let need = majority.saturating_sub(1);
    let mut by_majority: Option<(At, i32)> = None;
    for c in candidacies.iter().filter(|c| !c.pre_vote) {
        let mut grants: Vec<At> = c
            .ballots
            .iter()
            .filter_map(|b| b.answer.as_ref().filter(|a| a.granted).map(|a| a.at))
            .collect();
        grants.sort();
        let reached = if need == 0 {
            c.first_request()
        } else {
            grants.get(need - 1).copied()
        };
        if let Some(at) = reached {
            if by_majority.is_none_or(|(m, _)| at < m) {
                by_majority = Some((at, c.candidate));
            }
        }
    }
    let reports: Vec<(i32, At, u64)> = part
        .reports
        .iter()
        .filter(|((ep, _), _)| *ep == e)
        .map(|((_, leader), (at, n))| (*leader, *at, *n))
        .collect();
    let first_report = reports.iter().min_by_key(|(_, at, _)| *at).copied();
    if reports.len() > 1 {
        let list: Vec<String> = reports
            .iter()
            .map(|(l, at, n)| format!("node {l} ({n}×, first in frame {})", at.packet))
            .collect();
        notes.push(format!(
            "responses disagree on the leader: {}",
            list.join(", ")
        ));
    }
    let record = part.leader_records.get(&e).cloned();
    let announced = part.announced.get(&e).copied();
    let resigned = part.resigned.get(&e).cloned();
    let known: Vec<(i32, At, u64)> = part
        .known
        .iter()
        .filter(|((ep, _), _)| *ep == e)
        .map(|((_, leader), (at, n))| (*leader, *at, *n))
        .collect();
    let known_from = known.iter().min_by_key(|(_, at, _)| *at).copied();
    let leader = first_report
        .map(|r| r.0)
        .or(by_majority.map(|m| m.1))
        .or(announced.map(|a| a.0))
        .or(resigned.as_ref().map(|r| r.leader))
        .or(known_from.map(|k| k.0))
        .or(record.as_ref().map(|r| r.leader));
    let mut others: BTreeSet<i32> = known.iter().map(|k| k.0).collect();
    others.extend(announced.map(|a| a.0));
    others.extend(resigned.as_ref().map(|r| r.leader));
    if let Some(l) = leader {
        others.remove(&l);
        if !others.is_empty() {
            let list: Vec<String> = others.iter().map(|n| format!("node {n}")).collect();
            notes.push(format!(
                "BeginQuorumEpoch, EndQuorumEpoch or Fetch also name {} as leader",
                list.join(", ")
            ));
        }
    }
    if let (Some(l), Some(r)) = (leader, &record) {
        if l != r.leader {
            notes.push(format!(
                "node {}'s LeaderChangeMessage (frame {}) names itself, not node {l}",
                r.leader, r.at.packet
            ));
        }
    }
    if let (Some((_, m)), Some((r, ..))) = (by_majority, first_report) {
        if m != r {
            notes.push(format!(
                "node {m} reached a majority of the voters seen, but responses report node {r} as leader"
            ));
        }
    }
    let votes: Vec<&Candidacy> = candidacies.iter().filter(|c| !c.pre_vote).collect();
    let unanswered: usize = candidacies.iter().map(Candidacy::unanswered).sum();
    let outcome = if leader.is_some() && candidacies.is_empty() {
        Outcome::NotCaptured
    } else if leader.is_some() {
        Outcome::Won
    } else if votes.is_empty() {
        Outcome::NoVote
    } else if votes.iter().any(|c| c.unanswered() > 0) {
        Outcome::Undecided
    } else {
        Outcome::Failed
    };
    match outcome {
        Outcome::NotCaptured if first_report.is_none() => {
            notes.push("no Vote request or response for this epoch in the capture".into());
        }
        Outcome::NotCaptured => {
            notes.push("no Vote request for this epoch in the capture".into());
        }
        Outcome::Failed if votes.len() > 1 => {
            let who: Vec<String> = votes
                .iter()
                .map(|c| format!("node {}", c.candidate))
                .collect();
            notes.push(format!(
                "split vote: {} stood, none reached a majority",
                who.join(", ")
            ));
        }
        Outcome::NoVote => {
            let ahead: Vec<String> = candidacies
                .iter()
                .filter(|c| c.granted() >= need && c.unanswered() == 0)
                .map(|c| format!("node {}", c.candidate))
                .collect();
            if ahead.is_empty() {
                notes.push("pre-vote only: no candidate got a majority, no Vote followed".into());
            } else {
                notes.push(format!(
                    "pre-vote only: {} got a majority, but no Vote for this epoch is in the capture",
                    ahead.join(", ")
                ));
            }
        }
        _ => {}
    }
    if unanswered > 0 {
        notes.push(format!(
            "{unanswered} request{} unanswered in the capture",
            if unanswered == 1 { "" } else { "s" }
        ));
    }
    if leader.is_some() && by_majority.is_none() && !votes.is_empty() {
        notes.push(
            "the winning votes are not all in the capture; the leader is known from a response"
                .into(),
        );
    }
    Epoch {
        epoch: e,
        outcome,
        leader,
        began,
        // The majority is the winner's; a different candidate's is only in the notes.
        majority: by_majority.filter(|m| Some(m.1) == leader).map(|m| m.0),
        reported: first_report.map(|r| r.1),
        announced,
        resigned,
        known_from,
        candidacies,
        notes,
        leader_record: record,
    }
}

pub(super) fn repeats(epochs: &[Epoch]) -> Vec<RepeatCandidate> {
    let mut by_node: BTreeMap<i32, RepeatCandidate> = BTreeMap::new();
    for e in epochs {
        for c in &e.candidacies {
            let r = by_node.entry(c.candidate).or_insert(RepeatCandidate {
                node: c.candidate,
                rounds: 0,
                lost: 0,
                won_epochs: Vec::new(),
            });
            r.rounds += 1;
            if e.leader == Some(c.candidate) {
                if r.won_epochs.last() != Some(&e.epoch) {
                    r.won_epochs.push(e.epoch);
                }
            } else {
                r.lost += 1;
            }
        }
    }
    by_node
        .into_values()
        .filter(|r| r.lost >= REPEAT_LOSSES)
        .collect()
}
