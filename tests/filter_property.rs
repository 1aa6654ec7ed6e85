//! `-Y` selects exactly the messages that a direct evaluation of the same
//! filter over kwire's own NDJSON selects. The evaluation here is written
//! from the documented semantics (docs/contract.md, "Display filters") on
//! serde_json values, independently of src/filter.

use proptest::prelude::*;
use serde_json::Value;
use std::net::{IpAddr, SocketAddr};
use std::process::Command;
use std::sync::OnceLock;

const CAPTURES: [&str; 4] = [
    "captures/kraft-initial-election.pcap",
    "captures/consumer-group-java.pcap",
    "captures/synthetic/find-coordinator-v0-v6.pcap",
    "captures/synthetic/vote-v0-v2.pcap",
];

fn run(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_kwire"))
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "kwire {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Each capture's NDJSON lines, parsed and as printed.
fn ndjson(i: usize) -> &'static [(Value, String)] {
    static ALL: OnceLock<Vec<Vec<(Value, String)>>> = OnceLock::new();
    let all = ALL.get_or_init(|| {
        CAPTURES
            .iter()
            .map(|c| {
                run(&["read", "-q", "--format", "json", c])
                    .lines()
                    .map(|l| (serde_json::from_str(l).unwrap(), l.to_string()))
                    .collect()
            })
            .collect()
    });
    &all[i]
}

#[derive(Clone, Copy, Debug)]
enum Op {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

const OPS: [(Op, &str); 6] = [
    (Op::Eq, "=="),
    (Op::Ne, "!="),
    (Op::Lt, "<"),
    (Op::Le, "<="),
    (Op::Gt, ">"),
    (Op::Ge, ">="),
];

#[derive(Clone, Debug)]
enum Item {
    One(i64),
    Range(i64, i64),
}

/// A test on one field; `path` is a header key, or body names (`anchored`: from the root).
#[derive(Clone, Debug)]
enum Atom {
    Int {
        field: &'static str,
        op: usize,
        n: i64,
    },
    In {
        field: &'static str,
        items: Vec<Item>,
    },
    Present {
        field: &'static str,
    },
    Str {
        field: &'static str,
        eq: bool,
        s: &'static str,
    },
    Contains {
        field: &'static str,
        s: &'static str,
    },
    Matches {
        field: &'static str,
        re: &'static str,
    },
    Cidr {
        field: &'static str,
        net: &'static str,
    },
    Kind(&'static str),
    Api {
        spelled: &'static str,
        key: i64,
    },
    ErrName {
        field: &'static str,
        name: &'static str,
        code: i64,
    },
}

#[derive(Clone, Debug)]
enum F {
    Atom(Atom),
    Not(Box<F>, bool),
    And(Box<F>, Box<F>, usize),
    Or(Box<F>, Box<F>, bool),
    Paren(Box<F>),
}

const INT_FIELDS: [&str; 20] = [
    "frame",
    "api_key",
    "api_version",
    "correlation_id",
    "size",
    "request_frame",
    "latency_us",
    "src.port",
    "dst.port",
    "ErrorCode",
    "Coordinators.ErrorCode",
    "NodeId",
    "Coordinators.NodeId",
    "Port",
    "KeyType",
    "Topics.Partitions.LeaderId",
    "LeaderEpoch",
    "ReplicaEpoch",
    "LastOffset",
    "kafka.partition_id",
];

const PRESENT_FIELDS: [&str; 12] = [
    "latency_us",
    "request_frame",
    "client_id",
    "api_version",
    "VoteGranted",
    "PreVote",
    "Topics.Partitions.VoteGranted",
    "Coordinators",
    "NodeEndpoints",
    "ErrorMessage",
    "CoordinatorKeys",
    "ClusterId",
];

fn atom() -> impl Strategy<Value = Atom> {
    let int = (
        prop::sample::select(INT_FIELDS.to_vec()),
        0..OPS.len(),
        prop::sample::select(vec![-1i64, 0, 1, 2, 3, 5, 15, 16, 52, 100, 9092, 20000]),
    )
        .prop_map(|(field, op, n)| Atom::Int { field, op, n });
    let items = prop::collection::vec(
        prop_oneof![
            prop::sample::select(vec![-1i64, 0, 1, 2, 3, 10, 52]).prop_map(Item::One),
            (-2i64..6, 0i64..60).prop_map(|(a, w)| Item::Range(a, a + w)),
        ],
        1..4,
    );
    let set = (prop::sample::select(INT_FIELDS.to_vec()), items)
        .prop_map(|(field, items)| Atom::In { field, items });
    let present =
        prop::sample::select(PRESENT_FIELDS.to_vec()).prop_map(|field| Atom::Present { field });
    let strs = (
        prop::sample::select(vec![
            ("client_id", "raft-client-1"),
            ("client_id", "kwire-java-consumer"),
            ("api_name", "Vote"),
            ("api_name", "FindCoordinator"),
            ("version_source", "request"),
            ("Host", ""),
            ("Host", "127.0.0.1"),
            ("Key", "kwire-java-group"),
            ("Topics.TopicName", "__cluster_metadata"),
            ("kafka.topic_name", "__cluster_metadata"),
            ("CoordinatorKeys", "kwire-java-group"),
        ]),
        any::<bool>(),
    )
        .prop_map(|((field, s), eq)| Atom::Str { field, eq, s });
    let contains = prop::sample::select(vec![
        ("client_id", "raft"),
        ("client_id", "java"),
        ("src", ":1930"),
        ("Key", "group"),
        ("CoordinatorKeys", "kwire"),
        ("api_name", "Coord"),
    ])
    .prop_map(|(field, s)| Atom::Contains { field, s });
    let matches = prop::sample::select(vec![
        ("client_id", "^raft-client-[12]$"),
        ("client_id", "(?i)^RAFT"),
        ("dst", ":1930[0-9]$"),
        ("Host", "^$"),
    ])
    .prop_map(|(field, re)| Atom::Matches { field, re });
    let cidr = prop::sample::select(vec![
        ("src.ip", "127.0.0.0/8"),
        ("dst.ip", "127.0.0.1"),
        ("src.ip", "10.0.0.0/8"),
        ("dst.ip", "10.0.0.2"),
    ])
    .prop_map(|(field, net)| Atom::Cidr { field, net });
    let kind = prop::sample::select(vec!["request", "response"]).prop_map(Atom::Kind);
    let api = prop::sample::select(vec![
        ("vote", 52),
        ("find-coordinator", 10),
        ("api == Vote", 52),
        ("api == 10", 10),
        ("kafka.api_key == 0x34", 52),
        ("api_key == FindCoordinator", 10),
        ("api == Fetch", 1),
    ])
    .prop_map(|(spelled, key)| Atom::Api { spelled, key });
    let errname = prop::sample::select(vec![
        ("ErrorCode", "NOT_COORDINATOR", 16),
        ("Coordinators.ErrorCode", "COORDINATOR_NOT_AVAILABLE", 15),
        ("kafka.error", "NONE", 0),
    ])
    .prop_map(|(field, name, code)| Atom::ErrName { field, name, code });
    prop_oneof![
        3 => int,
        2 => set,
        2 => present,
        2 => strs,
        1 => contains,
        1 => matches,
        1 => cidr,
        1 => kind,
        2 => api,
        1 => errname,
    ]
}

fn filter() -> impl Strategy<Value = F> {
    atom().prop_map(F::Atom).prop_recursive(4, 16, 2, |inner| {
        prop_oneof![
            (inner.clone(), any::<bool>()).prop_map(|(a, b)| F::Not(Box::new(a), b)),
            (inner.clone(), inner.clone(), 0..3usize).prop_map(|(a, b, s)| F::And(
                Box::new(a),
                Box::new(b),
                s
            )),
            (inner.clone(), inner.clone(), any::<bool>()).prop_map(|(a, b, s)| F::Or(
                Box::new(a),
                Box::new(b),
                s
            )),
            inner.prop_map(|a| F::Paren(Box::new(a))),
        ]
    })
}

fn prec(f: &F) -> u8 {
    match f {
        F::Or(..) => 1,
        F::And(..) => 2,
        F::Not(..) => 3,
        F::Atom(_) | F::Paren(_) => 4,
    }
}

/// The filter text; parentheses only where precedence needs them (and where `Paren` asks).
fn text(f: &F) -> String {
    let sub = |g: &F, min: u8| {
        if prec(g) < min {
            format!("({})", text(g))
        } else {
            text(g)
        }
    };
    match f {
        F::Atom(a) => atom_text(a),
        F::Paren(a) => format!("({})", text(a)),
        F::Not(a, bang) => format!("{}{}", if *bang { "!" } else { "not " }, sub(a, 3)),
        F::And(a, b, s) => format!("{}{}{}", sub(a, 2), [" and ", " && ", " "][*s], sub(b, 3)),
        F::Or(a, b, s) => format!(
            "{}{}{}",
            sub(a, 1),
            if *s { " or " } else { "||" },
            sub(b, 2)
        ),
    }
}

fn atom_text(a: &Atom) -> String {
    match a {
        Atom::Int { field, op, n } => format!("{field} {} {n}", OPS[*op].1),
        Atom::In { field, items } => {
            let items: Vec<String> = items
                .iter()
                .map(|i| match i {
                    Item::One(n) => n.to_string(),
                    Item::Range(a, b) => format!("{a}..{b}"),
                })
                .collect();
            format!("{field} in {{{}}}", items.join(", "))
        }
        Atom::Present { field } => field.to_string(),
        Atom::Str { field, eq, s } => {
            format!("{field} {} \"{s}\"", if *eq { "==" } else { "!=" })
        }
        Atom::Contains { field, s } => format!("{field} contains \"{s}\""),
        Atom::Matches { field, re } => format!("{field} matches \"{re}\""),
        Atom::Cidr { field, net } => format!("{field} in {net}"),
        Atom::Kind(k) => k.to_string(),
        Atom::Api { spelled, .. } => spelled.to_string(),
        Atom::ErrName { field, name, .. } => format!("{field} == {name}"),
    }
}

// ---- the documented semantics, on NDJSON ----

/// Every value at the end of a chain of object keys (lists are walked through).
fn collect<'v>(v: &'v Value, chain: &mut Vec<String>, out: &mut Vec<(Vec<String>, &'v Value)>) {
    match v {
        Value::Object(o) => {
            for (k, x) in o {
                chain.push(k.clone());
                out.push((chain.clone(), x));
                // A decoded `records` field (record batches or message sets) is a view of
                // the field's bytes; filters see the field, not inside it (contract).
                if !is_record_batches(x) {
                    collect(x, chain, out);
                }
                chain.pop();
            }
        }
        Value::Array(a) => a.iter().for_each(|x| collect(x, chain, out)),
        _ => {}
    }
}

/// Whether a body value is a decoded `records` field: an array of batches.
fn is_record_batches(v: &Value) -> bool {
    v.as_array().is_some_and(|a| {
        a.iter().any(|b| {
            b.get("Magic").is_some() || b.get("Partial").is_some() || b.get("Bytes").is_some()
        })
    })
}

/// A value's occurrences: lists give their elements, null gives none.
fn flatten<'v>(v: &'v Value, out: &mut Vec<&'v Value>) {
    match v {
        Value::Null => {}
        Value::Array(a) => a.iter().for_each(|x| flatten(x, out)),
        other => out.push(other),
    }
}

fn body_occurrences<'v>(body: &'v Value, names: &[&str], anchored: bool) -> Vec<&'v Value> {
    let mut all = Vec::new();
    collect(body, &mut Vec::new(), &mut all);
    let mut out = Vec::new();
    for (chain, v) in all {
        let hit = if anchored {
            chain == names
        } else {
            chain.len() >= names.len() && chain[chain.len() - names.len()..] == *names
        };
        if hit {
            flatten(v, &mut out);
        }
    }
    out
}

fn addr(m: &Value, key: &str) -> Option<SocketAddr> {
    m[key].as_str()?.parse().ok()
}

/// The occurrences of a field in message `m`, as JSON values.
fn occurrences(m: &Value, field: &str) -> Vec<Value> {
    let header = |k: &str| -> Vec<Value> {
        match &m[k] {
            Value::Null => vec![],
            v => vec![v.clone()],
        }
    };
    let port = |k: &str| {
        addr(m, k)
            .map(|a| Value::from(a.port()))
            .into_iter()
            .collect()
    };
    let ip = |k: &str| {
        addr(m, k)
            .map(|a| Value::from(a.ip().to_string()))
            .into_iter()
            .collect()
    };
    let body = |names: &[&str], anchored| -> Vec<Value> {
        body_occurrences(&m["body"], names, anchored)
            .into_iter()
            .cloned()
            .collect()
    };
    match field {
        "src.port" => port("src"),
        "dst.port" => port("dst"),
        "src.ip" => ip("src"),
        "dst.ip" => ip("dst"),
        "api" | "kafka.api_key" => header("api_key"),
        "kafka.error" => body(&["ErrorCode"], false),
        "kafka.partition_id" => [
            body(&["PartitionIndex"], false),
            body(&["Partition"], false),
            body(&["PartitionId"], false),
        ]
        .concat(),
        "kafka.topic_name" => [
            body(&["TopicName"], false),
            body(&["Topics", "Name"], false),
            body(&["Topics", "Topic"], false),
        ]
        .concat(),
        f if f.chars().next().unwrap().is_ascii_lowercase() => header(f),
        f => {
            let names: Vec<&str> = f.split('.').collect();
            body(&names, names.len() > 1)
        }
    }
}

fn in_net(v: &Value, net: &str) -> bool {
    let Some(a) = v.as_str().and_then(|s| s.parse::<IpAddr>().ok()) else {
        return false;
    };
    let (n, bits) = match net.split_once('/') {
        Some((n, b)) => (n.parse::<IpAddr>().unwrap(), b.parse::<u32>().unwrap()),
        None => (net.parse().unwrap(), 32),
    };
    match (a, n) {
        (IpAddr::V4(a), IpAddr::V4(n)) => {
            let mask = if bits == 0 {
                0
            } else {
                u32::MAX << (32 - bits)
            };
            u32::from(a) & mask == u32::from(n) & mask
        }
        _ => false,
    }
}

fn eval_atom(a: &Atom, m: &Value) -> bool {
    let any = |field: &str, p: &dyn Fn(&Value) -> bool| occurrences(m, field).iter().any(p);
    match a {
        Atom::Int { field, op, n } => any(field, &|v| {
            v.as_i64().is_some_and(|x| match OPS[*op].0 {
                Op::Eq => x == *n,
                Op::Ne => x != *n,
                Op::Lt => x < *n,
                Op::Le => x <= *n,
                Op::Gt => x > *n,
                Op::Ge => x >= *n,
            })
        }),
        Atom::In { field, items } => any(field, &|v| {
            v.as_i64().is_some_and(|x| {
                items.iter().any(|i| match i {
                    Item::One(n) => x == *n,
                    Item::Range(a, b) => *a <= x && x <= *b,
                })
            })
        }),
        Atom::Present { field } => any(field, &|v| *v != Value::Bool(false)),
        Atom::Str { field, eq, s } => any(field, &|v| v.as_str().is_some_and(|x| (x == *s) == *eq)),
        Atom::Contains { field, s } => any(field, &|v| v.as_str().is_some_and(|x| x.contains(s))),
        Atom::Matches { field, re } => {
            let re = regex::Regex::new(re).unwrap();
            any(field, &|v| v.as_str().is_some_and(|x| re.is_match(x)))
        }
        Atom::Cidr { field, net } => any(field, &|v| in_net(v, net)),
        Atom::Kind(k) => m["kind"] == *k,
        Atom::Api { key, .. } => m["api_key"] == *key,
        Atom::ErrName { field, code, .. } => any(field, &|v| v.as_i64() == Some(*code)),
    }
}

fn eval(f: &F, m: &Value) -> bool {
    match f {
        F::Atom(a) => eval_atom(a, m),
        F::Paren(a) => eval(a, m),
        F::Not(a, _) => !eval(a, m),
        F::And(a, b, _) => eval(a, m) && eval(b, m),
        F::Or(a, b, _) => eval(a, m) || eval(b, m),
    }
}

fn check(capture: usize, f: &F) -> Result<(), TestCaseError> {
    let filter = text(f);
    let want: String = ndjson(capture)
        .iter()
        .filter(|(v, _)| eval(f, v))
        .map(|(_, l)| format!("{l}\n"))
        .collect();
    let got = run(&[
        "read",
        "-q",
        "--format",
        "json",
        "-Y",
        &filter,
        CAPTURES[capture],
    ]);
    prop_assert_eq!(
        got.lines().count(),
        want.lines().count(),
        "{} on {}",
        filter,
        CAPTURES[capture]
    );
    prop_assert_eq!(got, want, "{} on {}", filter, CAPTURES[capture]);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, failure_persistence: None, ..ProptestConfig::default() })]
    #[test]
    fn dash_y_selects_what_the_ndjson_says(capture in 0..CAPTURES.len(), f in filter()) {
        check(capture, &f)?;
    }
}

/// The generator reaches matches and non-matches alike on these captures.
#[test]
fn the_fixed_filters_select_something_and_not_everything() {
    for (capture, f) in [
        (
            0,
            F::Atom(Atom::Present {
                field: "Topics.Partitions.VoteGranted",
            }),
        ),
        (
            1,
            F::Atom(Atom::ErrName {
                field: "Coordinators.ErrorCode",
                name: "COORDINATOR_NOT_AVAILABLE",
                code: 15,
            }),
        ),
        (
            2,
            F::Atom(Atom::Cidr {
                field: "src.ip",
                net: "10.0.0.1",
            }),
        ),
        (
            3,
            F::Atom(Atom::Int {
                field: "LastOffset",
                op: 4,
                n: 0,
            }),
        ),
    ] {
        let n = ndjson(capture).iter().filter(|(v, _)| eval(&f, v)).count();
        assert!(
            n > 0 && n < ndjson(capture).len(),
            "{} selects {n}",
            text(&f)
        );
        check(capture, &f).unwrap();
    }
}
