//! `kwire stats --format json`: the analysis as one JSON object (see docs/contract.md).

use super::coordinators::{Endpoint, key_type_name};
use super::elections::{Ballot, Candidacy, Epoch, PartitionElections, Voter};
use super::{Analysis, ApiStats, At, CoordinatorKey, error_label};
use crate::view::labels::api_label;
use serde_json::{Map, Value, json};

/// Seconds since the epoch with µs precision, as the NDJSON `ts`.
fn ts(ns: i64) -> Value {
    let secs = ns.div_euclid(1_000_000_000);
    let micros = ns.rem_euclid(1_000_000_000) / 1000;
    json!(secs as f64 + micros as f64 / 1e6)
}

fn at(a: Option<At>) -> Value {
    match a {
        Some(a) => json!({"frame": a.packet, "ts": ts(a.ts_ns)}),
        None => Value::Null,
    }
}

fn voter(v: Voter) -> Value {
    match v {
        Voter::Node(n) => json!(n),
        Voter::Addr(a) => json!(a.to_string()),
    }
}

fn error(code: i16) -> Value {
    if code == 0 {
        Value::Null
    } else {
        json!(error_label(code))
    }
}

fn ballot(b: &Ballot) -> Value {
    let response = match &b.answer {
        Some(a) => json!({
            "frame": a.at.packet, "ts": ts(a.at.ts_ns),
            "latency_us": a.latency_ns.map(|n| n / 1000),
            "granted": a.granted, "error": error(a.error), "top_error": error(a.top_error),
            "leader_id": a.leader_id, "leader_epoch": a.leader_epoch,
        }),
        None => Value::Null,
    };
    json!({"voter": voter(b.voter), "version": b.version, "request": at(Some(b.request)),
           "response": response})
}

fn candidacy(c: &Candidacy) -> Value {
    json!({
        "candidate": c.candidate, "pre_vote": c.pre_vote, "replica_epoch": c.replica_epoch,
        "last_offset": c.last_offset, "last_offset_epoch": c.last_offset_epoch,
        "granted": c.granted(), "denied": c.denied(), "unanswered": c.unanswered(),
        "ballots": c.ballots.iter().map(ballot).collect::<Vec<_>>(),
    })
}

fn epoch(e: &Epoch) -> Value {
    let mut v = json!({
        "epoch": e.epoch, "outcome": e.outcome.as_str(), "leader": e.leader,
        "began": at(e.began), "majority": at(e.majority), "reported": at(e.reported),
        "duration_us": e.duration_ns().map(|n| n / 1000),
        "announced": e.announced.map(|(l, a)| json!({"leader": l, "frame": a.packet, "ts": ts(a.ts_ns)})),
        "resigned": e.resigned.as_ref().map(|r| json!({"leader": r.leader, "frame": r.at.packet,
            "ts": ts(r.at.ts_ns), "preferred": r.preferred})),
        "known_from": e.known_from.map(|(l, a, n)| json!({"leader": l, "frame": a.packet,
            "ts": ts(a.ts_ns), "responses": n})),
        "candidacies": e.candidacies.iter().map(candidacy).collect::<Vec<_>>(),
        "notes": e.notes,
    });
    // Only where a Fetch response carried the leader's LeaderChangeMessage.
    if let (Some(r), Some(o)) = (&e.leader_record, v.as_object_mut()) {
        o.insert(
            "leader_record".into(),
            json!({"at": at(Some(r.at)), "leader": r.leader, "voters": r.voters, "granting": r.granting}),
        );
    }
    v
}

fn partition(p: &PartitionElections) -> Value {
    json!({
        "cluster_id": p.cluster_id, "topic": p.topic, "partition": p.partition,
        "voters_seen": p.voters_seen.iter().map(|v| voter(*v)).collect::<Vec<_>>(),
        "majority": p.majority,
        "epochs": p.epochs.iter().map(epoch).collect::<Vec<_>>(),
        "repeat_candidates": p.repeat_candidates.iter().map(|r| json!({
            "node": r.node, "rounds": r.rounds, "lost": r.lost, "won_epochs": r.won_epochs,
        })).collect::<Vec<_>>(),
    })
}

fn endpoint(e: &Endpoint) -> Value {
    json!({"node": e.node, "host": e.host, "port": e.port})
}

fn by_name<'a>(codes: impl Iterator<Item = (&'a i16, &'a u64)>) -> Value {
    let mut m = Map::new();
    for (c, n) in codes {
        m.insert(error_label(*c), json!(n));
    }
    Value::Object(m)
}

fn coordinator(k: &CoordinatorKey) -> Value {
    let answers: Vec<Value> = k
        .answers
        .iter()
        .map(|a| {
            let (node, host, port) = match &a.coordinator {
                Some(e) => (json!(e.node), json!(e.host), json!(e.port)),
                None => (Value::Null, Value::Null, Value::Null),
            };
            json!({
                "frame": a.at.packet, "ts": ts(a.at.ts_ns), "version": a.version,
                "client_id": a.client_id, "client": a.client.to_string(),
                "broker": a.broker.to_string(), "latency_us": a.latency_ns.map(|n| n / 1000),
                "node": node, "host": host, "port": port,
                "error": error(a.error), "error_message": a.error_message,
            })
        })
        .collect();
    json!({
        "key_type": key_type_name(k.key_type), "key": k.key,
        "requests": k.requests, "unanswered": k.unanswered,
        "answers": answers, "answers_not_kept": k.answers_not_kept,
        "changes": k.changes.iter().map(|c| json!({
            "frame": c.at.packet, "ts": ts(c.at.ts_ns),
            "from": endpoint(&c.from), "to": endpoint(&c.to),
        })).collect::<Vec<_>>(),
        "errors": by_name(k.errors.iter().map(|(c, n)| (c, n))),
        "repeat_askers": k.repeat_askers.iter().map(|a| json!({
            "client_id": a.client_id, "ip": a.ip.to_string(),
            "requests": a.requests, "errors": a.errors,
        })).collect::<Vec<_>>(),
    })
}

fn api(s: &ApiStats) -> Value {
    let mut versions = Map::new();
    for (v, n) in &s.requests {
        versions.insert(v.to_string(), json!(n));
    }
    let latency = match s.latency.percentiles() {
        Some(p) => json!({"count": s.latency.count, "p50": p.p50, "p90": p.p90,
                          "p99": p.p99, "max": p.max, "exact": p.exact}),
        None => Value::Null,
    };
    let errors = if s.decoded_responses == 0 {
        Value::Null
    } else {
        by_name(s.errors.iter())
    };
    json!({
        "api_key": s.api_key, "api_name": s.api_key.map(api_label),
        "requests": versions, "requests_total": s.total_requests(),
        "responses": s.responses, "paired": s.paired,
        "unpaired_responses": s.unpaired_responses, "unanswered": s.unanswered(),
        "latency_us": latency, "decoded_responses": s.decoded_responses,
        "errors": errors, "malformed": s.malformed,
    })
}

/// The analysis as JSON, keys as docs/contract.md lists them.
pub fn to_json(a: &Analysis) -> Value {
    json!({
        "capture": {
            "first_ts": a.first_ts_ns.map(ts), "last_ts": a.last_ts_ns.map(ts),
            "messages": a.messages,
        },
        "elections": a.elections.iter().map(partition).collect::<Vec<_>>(),
        "votes_not_kept": a.votes_not_kept,
        "coordinators": a.coordinators.iter().map(coordinator).collect::<Vec<_>>(),
        "coordinator_answers_without_key": a.coordinator_answers_without_key,
        "coordinator_keys_not_kept": a.coordinator_keys_not_kept,
        "apis": a.apis.iter().map(api).collect::<Vec<_>>(),
        "groups": a.groups.iter().map(super::groups_text::group_json).collect::<Vec<_>>(),
        "groups_not_kept": a.groups_not_kept,
        "group_requests_forgotten": a.group_requests_forgotten,
        "group_responses_without_request": a.group_responses_without_request,
    })
}
