//! Parser, compiler and evaluation tests, with a catalogue of Vote and
//! FindCoordinator fields and messages given as NDJSON objects.

use super::parser::parse;
use super::*;
use serde_json::{Value as Json, json};

/// The parse tree, fully parenthesised.
fn tree(s: &str) -> String {
    match parse(s) {
        Ok(Some(e)) => e.to_string(),
        Ok(None) => "(empty)".into(),
        Err(e) => panic!("{s:?}: {e}"),
    }
}

fn cat() -> Catalogue {
    let mut c = Catalogue::new();
    use FieldType::*;
    for (p, t) in [
        // Vote request
        ("ClusterId", Text),
        ("VoterId", Int),
        ("Topics", Struct),
        ("Topics.TopicName", Text),
        ("Topics.Partitions", Struct),
        ("Topics.Partitions.PartitionIndex", Int),
        ("Topics.Partitions.ReplicaEpoch", Int),
        ("Topics.Partitions.ReplicaId", Int),
        ("Topics.Partitions.ReplicaDirectoryId", Uuid),
        ("Topics.Partitions.LastOffset", Int),
        ("Topics.Partitions.PreVote", Bool),
        // Vote response
        ("ErrorCode", Int),
        ("Topics.Partitions.ErrorCode", Int),
        ("Topics.Partitions.LeaderId", Int),
        ("Topics.Partitions.VoteGranted", Bool),
        ("NodeEndpoints", Struct),
        ("NodeEndpoints.NodeId", Int),
        ("NodeEndpoints.Host", Text),
        ("NodeEndpoints.Port", Int),
        // FindCoordinator
        ("Key", Text),
        ("KeyType", Int),
        ("CoordinatorKeys", Text),
        ("ErrorMessage", Text),
        ("NodeId", Int),
        ("Host", Text),
        ("Port", Int),
        ("Coordinators", Struct),
        ("Coordinators.Key", Text),
        ("Coordinators.NodeId", Int),
        ("Coordinators.ErrorCode", Int),
        // Others, for types
        ("AuthBytes", Bytes),
        ("Weight", Float),
    ] {
        let segs: Vec<&str> = p.split('.').collect();
        c.add_field(&segs, t);
    }
    for (k, n) in [
        (10, "FindCoordinator"),
        (52, "Vote"),
        (0, "Produce"),
        (3, "Metadata"),
    ] {
        c.add_api(k, n);
    }
    for (code, n) in [
        (0, "NONE"),
        (15, "COORDINATOR_NOT_AVAILABLE"),
        (16, "NOT_COORDINATOR"),
        (94, "INCONSISTENT_VOTER_SET"),
    ] {
        c.add_error(code, n);
    }
    c
}

/// A message: its NDJSON object, summary line and flags.
struct Msg {
    j: Json,
    summary: String,
    flags: Vec<Flag>,
}

fn occurrences(
    v: &Json,
    key: &str,
    each: &mut dyn FnMut(Value<'_>) -> ControlFlow<()>,
) -> ControlFlow<()> {
    match v {
        Json::Null => ControlFlow::Continue(()),
        Json::Array(a) => {
            for x in a {
                occurrences(x, key, each)?;
            }
            ControlFlow::Continue(())
        }
        Json::Object(_) => each(Value::Present),
        Json::Bool(b) => each(Value::Bool(*b)),
        Json::Number(n) => each(match n.as_i64() {
            Some(i) => Value::Int(i),
            None => Value::Float(n.as_f64().unwrap()),
        }),
        Json::String(s) if key == "AuthBytes" => {
            let b: Vec<u8> = (0..s.len())
                .step_by(2)
                .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
                .collect();
            each(Value::Bytes(b.into()))
        }
        Json::String(s) if key.ends_with("DirectoryId") => {
            each(Value::Uuid(*uuid::Uuid::parse_str(s).unwrap().as_bytes()))
        }
        Json::String(s) => each(Value::Str(s.as_str().into())),
    }
}

fn walk(
    v: &Json,
    chain: &mut Vec<String>,
    p: &BodyPath,
    each: &mut dyn FnMut(Value<'_>) -> ControlFlow<()>,
) -> ControlFlow<()> {
    match v {
        Json::Array(a) => {
            for x in a {
                walk(x, chain, p, each)?;
            }
        }
        Json::Object(o) => {
            for (k, x) in o {
                chain.push(k.clone());
                if p.matches(chain) {
                    occurrences(x, k, each)?;
                }
                if p.may_lead_to(chain) {
                    walk(x, chain, p, each)?;
                }
                chain.pop();
            }
        }
        _ => {}
    }
    ControlFlow::Continue(())
}

impl Subject for Msg {
    fn header(&self, h: Header) -> Option<Value<'_>> {
        let addr = |k: &str| -> Option<std::net::SocketAddr> { self.j[k].as_str()?.parse().ok() };
        match h {
            Header::SrcIp => return addr("src").map(|a| Value::Ip(a.ip())),
            Header::DstIp => return addr("dst").map(|a| Value::Ip(a.ip())),
            Header::SrcPort => return addr("src").map(|a| Value::Int(a.port().into())),
            Header::DstPort => return addr("dst").map(|a| Value::Int(a.port().into())),
            _ => {}
        }
        match &self.j[h.name()] {
            Json::Null => None,
            Json::String(s) => Some(Value::Str(s.as_str().into())),
            Json::Number(n) if h == Header::Ts => Some(Value::Float(n.as_f64()?)),
            Json::Number(n) => Some(Value::Int(n.as_i64()?)),
            other => panic!("header {other}"),
        }
    }
    fn body(&self, path: &BodyPath, each: &mut dyn FnMut(Value<'_>) -> ControlFlow<()>) {
        let _ = walk(&self.j["body"], &mut Vec::new(), path, each);
    }
    fn flag(&self, f: Flag) -> bool {
        self.flags.contains(&f)
    }
    fn summary(&self) -> String {
        self.summary.clone()
    }
}

/// Seven messages: FindCoordinator and Vote, requests and responses.
fn msgs() -> Vec<Msg> {
    let m = |j: Json, summary: &str, flags: &[Flag]| Msg {
        j,
        summary: summary.to_string(),
        flags: flags.to_vec(),
    };
    vec![
        m(
            json!({"frame":4,"ts":1764441600.000123,"src":"127.0.0.1:54321","dst":"127.0.0.1:9092","kind":"request","api_key":10,"api_name":"FindCoordinator","api_version":6,"version_source":"header","correlation_id":0,"client_id":"app-1","size":19,"body":{"KeyType":0,"CoordinatorKeys":["grp-a","grp-b"]}}),
            "4 0.000 127.0.0.1:54321 → 127.0.0.1:9092 FindCoordinator v6 request corr=0 group grp-a, grp-b",
            &[],
        ),
        m(
            json!({"frame":6,"ts":1764441600.002,"src":"127.0.0.1:9092","dst":"127.0.0.1:54321","kind":"response","api_key":10,"api_name":"FindCoordinator","api_version":6,"version_source":"request","correlation_id":0,"client_id":null,"size":60,"request_frame":4,"latency_us":1877,"body":{"ThrottleTimeMs":0,"Coordinators":[{"Key":"grp-a","NodeId":3,"Host":"b3","Port":9092,"ErrorCode":0,"ErrorMessage":null},{"Key":"grp-b","NodeId":-1,"Host":"","Port":-1,"ErrorCode":16,"ErrorMessage":"moved"}]}}),
            "6 0.002 FindCoordinator v6 response corr=0 grp-a → node 3; grp-b NOT_COORDINATOR",
            &[Flag::Error],
        ),
        m(
            json!({"frame":8,"ts":1764441601.5,"src":"[fd00::1]:40000","dst":"[fd00::2]:9093","kind":"request","api_key":52,"api_name":"Vote","api_version":2,"version_source":"header","correlation_id":7,"client_id":"raft","size":90,"tls":"TLSv1.3","body":{"ClusterId":"c1","VoterId":2,"Topics":[{"TopicName":"__cluster_metadata","Partitions":[{"PartitionIndex":0,"ReplicaEpoch":5,"ReplicaId":1,"ReplicaDirectoryId":"0b3c1f4e-0000-4000-8000-00000000abcd","LastOffset":100,"PreVote":true}]}]}}),
            "8 1.500 Vote v2 request corr=7 pre-vote candidate 1 epoch 5",
            &[],
        ),
        m(
            json!({"frame":9,"ts":1764441601.75,"src":"[fd00::2]:9093","dst":"[fd00::1]:40000","kind":"response","api_key":52,"api_name":"Vote","api_version":2,"version_source":"request","correlation_id":7,"size":40,"request_frame":8,"latency_us":250000,"tls":"TLSv1.3","body":{"ErrorCode":0,"Topics":[{"TopicName":"__cluster_metadata","Partitions":[{"PartitionIndex":0,"ErrorCode":0,"LeaderId":-1,"LeaderEpoch":5,"VoteGranted":false}]}],"NodeEndpoints":[{"NodeId":2,"Host":"ctrl-2","Port":9093}]}}),
            "9 1.750 Vote v2 response corr=7 denied",
            &[],
        ),
        m(
            json!({"frame":11,"ts":1764441602.0,"src":"10.1.2.3:5000","dst":"10.9.0.1:9092","kind":"request","api_key":52,"api_name":"Vote","api_version":0,"version_source":"header","correlation_id":-2147483648,"client_id":"ctrl","size":70,"body":{"ClusterId":null,"Topics":[{"TopicName":"t","Partitions":[{"PartitionIndex":3,"ReplicaEpoch":6,"ReplicaId":2,"LastOffset":-1}]}]}}),
            "11 2.000 Vote v0 request corr=-2147483648",
            &[Flag::Warn],
        ),
        m(
            json!({"frame":12,"ts":1764441602.1,"src":"10.9.0.1:9092","dst":"10.1.2.3:5000","kind":"response","api_key":null,"api_name":null,"api_version":null,"version_source":null,"correlation_id":99,"size":12,"body":null}),
            "12 2.100 ? response corr=99 !! malformed: short",
            &[Flag::Malformed, Flag::Error],
        ),
        m(
            json!({"frame":13,"ts":1764441602.2,"src":"10.1.2.3:5001","dst":"10.9.0.1:9092","kind":"request","api_key":36,"api_name":"SaslAuthenticate","api_version":2,"version_source":"header","correlation_id":3,"client_id":"c\u{1b}x","size":30,"body":{"AuthBytes":"00757365720070617373","Weight":0.5}}),
            "13 2.200 SaslAuthenticate v2 request corr=3",
            &[],
        ),
    ]
}

/// Frames of the messages that `f` selects.
fn sel(f: &str) -> Vec<u64> {
    let filter = Filter::new(f, &cat()).unwrap_or_else(|e| panic!("{f:?}:\n{e}"));
    msgs()
        .iter()
        .filter(|m| filter.matches(*m))
        .map(|m| m.j["frame"].as_u64().unwrap())
        .collect()
}

fn err(f: &str) -> FilterError {
    match Filter::new(f, &cat()) {
        Ok(_) => panic!("{f:?} compiled"),
        Err(e) => e,
    }
}

#[test]
fn precedence_not_binds_tighter_than_and_tighter_than_or() {
    for (f, t) in [
        ("a or b and c", "(or a (and b c))"),
        ("a and b or c", "(or (and a b) c)"),
        ("a || b && c", "(or a (and b c))"),
        ("not a and b", "(and (not a) b)"),
        ("!a || b && !c", "(or (not a) (and b (not c)))"),
        ("not a == 1 or b", "(or (not (== a 1)) b)"),
        ("!(a or b)", "(not (or a b))"),
        ("not not a", "(not (not a))"),
        ("(a or b) and c", "(and (or a b) c)"),
        ("((a))", "a"),
    ] {
        assert_eq!(tree(f), t, "{f}");
    }
}

#[test]
fn and_and_or_group_to_the_left() {
    assert_eq!(tree("a or b or c"), "(or (or a b) c)");
    assert_eq!(tree("a and b and c"), "(and (and a b) c)");
    assert_eq!(tree("a && b and c"), "(and (and a b) c)");
    assert_eq!(tree("a or b || c or d"), "(or (or (or a b) c) d)");
}

#[test]
fn side_by_side_terms_are_joined_by_and() {
    assert_eq!(
        tree("vote response error"),
        "(and (and vote response) error)"
    );
    assert_eq!(tree("vote !request"), "(and vote (not request))");
    assert_eq!(tree("a b or c"), "(or (and a b) c)");
    assert_eq!(tree("a (b or c)"), "(and a (or b c))");
    assert_eq!(tree("corr=7 v=2"), "(and (== corr 7) (== v 2))");
    assert_eq!(tree("x == 1 y"), "(and (== x 1) y)");
    assert_eq!(
        tree("\"two words\" vote"),
        "(and (text \"two words\") vote)"
    );
}

#[test]
fn every_operator_parses() {
    for (f, t) in [
        ("f == 1", "(== f 1)"),
        ("f = 1", "(== f 1)"),
        ("f != 1", "(!= f 1)"),
        ("f < 1", "(< f 1)"),
        ("f <= 1", "(<= f 1)"),
        ("f > 1", "(> f 1)"),
        ("f >= 1", "(>= f 1)"),
        ("f==1", "(== f 1)"),
        ("f>=1&&g<2", "(and (>= f 1) (< g 2))"),
        ("f contains \"x\"", "(contains f \"x\")"),
        ("f contains x", "(contains f x)"),
        ("f matches \"^a.*\"", "(matches f \"^a.*\")"),
        ("f ~ \"a\"", "(matches f \"a\")"),
        ("f in {1, 2, 3}", "(in f 1 2 3)"),
        ("f in {1 2 3}", "(in f 1 2 3)"),
        ("f in {1..5}", "(in f 1..5)"),
        ("f in {1..5, 7, 9 .. 12}", "(in f 1..5 7 9..12)"),
        ("f in {\"a\", b}", "(in f \"a\" b)"),
        ("f in 10.0.0.0/8", "(in f 10.0.0.0/8)"),
        ("f", "f"),
        ("!f", "(not f)"),
        ("not f", "(not f)"),
    ] {
        assert_eq!(tree(f), t, "{f}");
    }
}

#[test]
fn every_literal_lexes() {
    for (f, t) in [
        ("f == 42", "(== f 42)"),
        ("f == -42", "(== f -42)"),
        ("f == 0x1F", "(== f 0x1F)"),
        ("f == 1.5", "(== f 1.5)"),
        (
            "f == \"a \\\"b\\\" \\\\ \\n \\x41 \\u{263a}\"",
            "(== f \"a \\\"b\\\" \\\\ \\n A ☺\")",
        ),
        ("f == 'single'", "(== f \"single\")"),
        ("f == true", "(== f true)"),
        ("f == false", "(== f false)"),
        ("api == Vote", "(== api Vote)"),
        ("api == find-coordinator", "(== api find-coordinator)"),
        (
            "ErrorCode == NOT_COORDINATOR",
            "(== ErrorCode NOT_COORDINATOR)",
        ),
        ("f == 10.0.0.1", "(== f 10.0.0.1)"),
        ("f == 10.0.0.0/8", "(== f 10.0.0.0/8)"),
        ("f == ::1", "(== f ::1)"),
        ("f == fe80::/10", "(== f fe80::/10)"),
        ("f == 127.0.0.1:9092", "(== f 127.0.0.1:9092)"),
        ("f == 01:02:ff", "(== f 01:02:ff)"),
        ("f == TLSv1.3", "(== f TLSv1.3)"),
        ("f == \"\"", "(== f \"\")"),
    ] {
        assert_eq!(tree(f), t, "{f}");
    }
    assert_eq!(tree("   "), "(empty)");
}

/// (filter, 1-based column, start of the message)
#[test]
fn syntax_errors_point_at_the_column() {
    for (f, col, msg) in [
        ("latency_us >", 13, "expected a value after \">\""),
        ("a == ", 6, "expected a value after \"==\""),
        ("(a or b", 1, "this \"(\" is not closed"),
        ("a or b)", 7, "this \")\" has no \"(\""),
        ("a and", 6, "the filter ends after \"and\""),
        ("a or or b", 6, "expected a test, found the keyword \"or\""),
        ("== 3", 1, "expected a test, found \"==\""),
        ("a & b", 3, "a single \"&\" is not an operator"),
        ("a | b", 3, "a single \"|\" is not an operator"),
        ("client_id == \"abc", 14, "this string is not closed"),
        ("f == \"a\\qb\"", 8, "unknown escape in a string"),
        ("f in {1, 2", 6, "this \"{\" is not closed"),
        ("f in {}", 6, "this set is empty"),
        (
            "f in {1..}",
            10,
            "expected a value after \"..\", found \"}\"",
        ),
        (
            "f == 1 == 2",
            8,
            "\"==\" cannot follow a complete test here",
        ),
        ("\"text\" == 3", 8, "a comparison needs a field on its left"),
        ("f contains", 11, "expected a value after \"contains\""),
        ("a == b)", 7, "this \")\" has no \"(\""),
        ("ünï == x == y", 10, "\"==\" cannot follow"),
    ] {
        let e = parse(f).expect_err(f);
        assert_eq!(
            (e.column(), e.message().starts_with(msg)),
            (col, true),
            "{f}: {e}"
        );
    }
}

#[test]
fn compile_errors_point_at_the_culprit() {
    for (f, col, msg) in [
        ("VoteGrantd == false", 1, "unknown field \"VoteGrantd\""),
        ("vote and Topics.Partitions.VoteGrantd", 10, "unknown field"),
        (
            "ErrorCode contains 3",
            11,
            "\"contains\" needs text or bytes, but ErrorCode is an integer",
        ),
        (
            "ErrorCode == \"3\"",
            14,
            "ErrorCode is an integer, but \"3\" is quoted text",
        ),
        (
            "ErrorCode == NOT_COORDINATR",
            14,
            "ErrorCode is an integer, but NOT_COORDINATR is not a number or an error name",
        ),
        (
            "api == Vot",
            8,
            "api is an integer, but Vot is not a number or an API name",
        ),
        ("VoteGranted == yes", 16, "VoteGranted is a bool"),
        ("VoteGranted < true", 13, "\"<\" needs an order"),
        ("kind == req", 9, "kind is one of request, response"),
        ("src.ip == 10.0.0.300", 11, "src.ip is an IP address"),
        (
            "src.ip < 10.0.0.0/8",
            10,
            "src.ip is an IP address, but 10.0.0.0/8 is a CIDR block",
        ),
        (
            "Topics == 1",
            8,
            "\"==\" needs a value, but Topics is a struct",
        ),
        (
            "client_id matches \"(\"",
            19,
            "this regular expression does not compile",
        ),
        ("corr=x", 6, "corr is an integer, but x is not a number"),
        (
            "ReplicaDirectoryId == 12",
            23,
            "ReplicaDirectoryId is a uuid",
        ),
        ("AuthBytes == 0g", 14, "AuthBytes is bytes"),
        ("VoteGranted in {false..true}", 17, "a range needs an order"),
        ("x.y", 1, "unknown field \"x.y\""),
        ("kafka.topc_name", 1, "unknown field"),
    ] {
        let e = err(f);
        assert_eq!(
            (e.column(), e.message().starts_with(msg)),
            (col, true),
            "{f}: {e}"
        );
    }
}

#[test]
fn error_messages() {
    let all: Vec<String> = [
        "Topics.Partitions.VoteGrantd == false",
        "Partitions.VoteGranted",
        "errorcode != 0",
        "Topics.VoteGranted == true",
        "ErrorCode contains 3",
        "ErrorCode == \"16\"",
        "ErrorCode == NOT_COORDINATR",
        "api == Vot",
        "kind == req",
        "Topics == 1",
        "example.com",
        "latency_us >",
        "(vote or error",
        "vote and or error",
        "a & b",
        "client_id matches \"[a-\"",
        "src.ip in {10.0.0.0/8, 300.1.1.1}",
        "latnecy_us > 5",
        "\u{1b}[31m == 1",
    ]
    .iter()
    .map(|f| format!("-Y {f:?}\n{}\n", err(f)))
    .collect();
    insta::assert_snapshot!(all.join("\n"));
}

#[test]
fn shorthands_mean_what_they_meant() {
    assert_eq!(sel("request"), [4, 8, 11, 13]);
    assert_eq!(sel("responses"), [6, 9, 12]);
    assert_eq!(sel("vote"), [8, 9, 11]);
    assert_eq!(sel("find-coordinator"), [4, 6]);
    assert_eq!(sel("FindCoordinator"), [4, 6]);
    assert_eq!(sel("error"), [6, 12]);
    assert_eq!(sel("warn"), [11]);
    assert_eq!(sel("malformed"), [12]);
    assert_eq!(sel("vote !request"), [9]);
    assert_eq!(sel("response error"), [6, 12]);
    assert_eq!(sel("corr=7"), [8, 9]);
    assert_eq!(sel("v=0"), [11]);
    assert_eq!(sel("version=2"), [8, 9, 13]);
    assert_eq!(sel("frame=9"), [9]);
    assert_eq!(sel("api=vote"), [8, 9, 11]);
    assert_eq!(sel("api=10"), [4, 6]);
    assert_eq!(sel("api_key=find-coordinator"), [4, 6]);
    assert_eq!(sel("kind=response"), [6, 9, 12]);
    assert_eq!(sel("version_source=inferred"), Vec::<u64>::new());
    assert_eq!(sel("version_source=none"), [12]);
    assert_eq!(sel("!version_source=none"), [4, 6, 8, 9, 11, 13]);
}

#[test]
fn free_text_searches_the_summary_case_insensitively() {
    assert_eq!(sel("not_coordinator"), [6]);
    assert_eq!(sel("DENIED"), [9]);
    assert_eq!(sel("pre-vote"), [8]);
    assert_eq!(sel("\"node 3;\""), [6]);
    assert_eq!(sel("\"candidate 1 epoch\" vote"), [8]);
    assert_eq!(sel("127.0.0.1:54321"), [4]);
    assert_eq!(sel("nothing-like-this"), Vec::<u64>::new());
    let f = Filter::new("denied", &cat()).unwrap();
    assert!(f.needs_summary() && f.needs_body() && f.body_paths().is_empty());
}

#[test]
fn header_fields_compare_by_type() {
    assert_eq!(sel("frame == 9"), [9]);
    assert_eq!(sel("frame >= 11 and frame < 13"), [11, 12]);
    assert_eq!(sel("ts > 1764441601.6"), [9, 11, 12, 13]);
    assert_eq!(sel("ts <= 1764441600"), Vec::<u64>::new());
    assert_eq!(sel("src == \"127.0.0.1:9092\""), [6]);
    assert_eq!(sel("dst == [fd00::2]:9093"), [8]);
    assert_eq!(sel("kind == request && api_key == 52"), [8, 11]);
    assert_eq!(sel("api_name == \"Vote\""), [8, 9, 11]);
    assert_eq!(sel("api_name == vote"), [8, 9, 11]);
    assert_eq!(sel("api_name contains \"Coord\""), [4, 6]);
    assert_eq!(sel("api_version in {0, 6}"), [4, 6, 11]);
    assert_eq!(sel("version_source == request"), [6, 9]);
    assert_eq!(sel("correlation_id < 0"), [11]);
    assert_eq!(sel("correlation_id == -2147483648"), [11]);
    assert_eq!(sel("client_id"), [4, 8, 11, 13]);
    assert_eq!(sel("client_id matches \"^APP\""), Vec::<u64>::new());
    assert_eq!(sel("client_id matches \"(?i)^APP\""), [4]);
    assert_eq!(sel("client_id ~ \"^app-[0-9]$\""), [4]);
    assert_eq!(sel("client_id contains \"\\x1b\""), [13]);
    assert_eq!(sel("size > 0x3b"), [6, 8, 11]);
    assert_eq!(sel("request_frame"), [6, 9]);
    assert_eq!(sel("latency_us > 10000"), [9]);
    assert_eq!(sel("tls == TLSv1.3"), [8, 9]);
    assert_eq!(sel("tls"), [8, 9]);
    assert_eq!(sel("!tls"), [4, 6, 11, 12, 13]);
    assert_eq!(sel("src.port == 9092"), [6, 12]);
    assert_eq!(sel("dst.port in {9090..9093}"), [4, 8, 11, 13]);
    assert_eq!(sel("src.ip == 127.0.0.1"), [4, 6]);
    assert_eq!(sel("src.ip in 10.0.0.0/8"), [11, 12, 13]);
    assert_eq!(sel("dst.ip == 10.9.0.0/16"), [11, 13]);
    assert_eq!(sel("src.ip in {fd00::/8, 10.9.0.1}"), [8, 9, 12]);
    assert_eq!(sel("src.ip > 10.1.2.3"), [4, 6, 12]);
    assert_eq!(sel("api == Vote"), [8, 9, 11]);
    assert_eq!(sel("api == 52"), [8, 9, 11]);
    assert_eq!(sel("api in {vote, 0xa}"), [4, 6, 8, 9, 11]);
    assert_eq!(sel("api != Vote"), [4, 6, 13]);
}

#[test]
fn wireshark_aliases() {
    assert_eq!(sel("kafka.api_key == 10"), [4, 6]);
    assert_eq!(sel("kafka.api_version == 2"), [8, 9, 13]);
    assert_eq!(sel("kafka.correlation_id == 7"), [8, 9]);
    assert_eq!(sel("kafka.client_id == raft"), [8]);
    assert_eq!(sel("kafka.error == NOT_COORDINATOR"), [6]);
    assert_eq!(sel("kafka.topic_name == t"), [11]);
    assert_eq!(sel("kafka.topic_name contains cluster"), [8, 9]);
    assert_eq!(sel("kafka.partition_id == 3"), [11]);
}

#[test]
fn body_fields_by_path_and_by_bare_name() {
    assert_eq!(sel("Topics.Partitions.VoteGranted == false"), [9]);
    assert_eq!(sel("Topics.Partitions.VoteGranted"), Vec::<u64>::new());
    assert_eq!(sel("!Topics.Partitions.VoteGranted && vote response"), [9]);
    assert_eq!(sel("VoteGranted == false && latency_us > 10000"), [9]);
    assert_eq!(sel("PreVote"), [8]);
    assert_eq!(sel("Coordinators.ErrorCode == NOT_COORDINATOR"), [6]);
    assert_eq!(sel("ErrorCode == 16"), [6]);
    // Any occurrence: the response with one good and one bad coordinator matches both.
    assert_eq!(sel("Coordinators.ErrorCode == 0"), [6]);
    assert_eq!(sel("Coordinators.ErrorCode != 0"), [6]);
    // An absent field satisfies no comparison, not even !=.
    assert_eq!(sel("ErrorCode != 5"), [6, 9]);
    assert_eq!(sel("!(ErrorCode == 16)"), [4, 8, 9, 11, 12, 13]);
    // ErrorCode at the top only, by its path from the root.
    assert_eq!(sel("ErrorCode == 0 and !Coordinators"), [9]);
    assert_eq!(sel("NodeId == 3"), [6]);
    assert_eq!(sel("Coordinators.NodeId < 0"), [6]);
    assert_eq!(sel("NodeEndpoints.Host == ctrl-2"), [9]);
    assert_eq!(sel("Host matches \"^b\\\\d$\""), [6]);
    assert_eq!(sel("Host == \"\""), [6]);
    assert_eq!(sel("CoordinatorKeys == grp-b"), [4]);
    assert_eq!(sel("CoordinatorKeys contains \"-a\""), [4]);
    assert_eq!(sel("Key in {grp-a, x}"), [6]);
    // A null value is no occurrence.
    assert_eq!(sel("ClusterId"), [8]);
    assert_eq!(sel("ErrorMessage"), [6]);
    assert_eq!(sel("LastOffset in {-1..0, 100}"), [8, 11]);
    assert_eq!(sel("Topics.Partitions.ReplicaEpoch >= 6"), [11]);
    assert_eq!(sel("Topics"), [8, 9, 11]);
    assert_eq!(
        sel("ReplicaDirectoryId == 0B3C1F4E-0000-4000-8000-00000000ABCD"),
        [8]
    );
    assert_eq!(sel("ReplicaDirectoryId contains abcd"), [8]);
    assert_eq!(sel("AuthBytes contains \"user\""), [13]);
    assert_eq!(sel("AuthBytes contains 00:70"), [13]);
    assert_eq!(sel("AuthBytes == 00757365720070617373"), [13]);
    assert_eq!(sel("AuthBytes matches \"^0075\""), [13]);
    assert_eq!(sel("Weight > 0.25 and Weight < 1"), [13]);
}

#[test]
fn only_the_named_body_paths_are_asked_for() {
    let f = Filter::new("vote && latency_us > 5 || src.ip in 10.0.0.0/8", &cat()).unwrap();
    assert!(!f.needs_body());
    assert!(f.body_paths().is_empty());
    let f = Filter::new(
        "Topics.Partitions.VoteGranted == false or ErrorCode or ErrorCode == 3 or kafka.topic_name == x",
        &cat(),
    )
    .unwrap();
    assert!(f.needs_body() && !f.needs_summary());
    let paths: Vec<String> = f.body_paths().iter().map(|p| p.to_string()).collect();
    assert_eq!(
        paths,
        ["Topics.Partitions.VoteGranted", "…ErrorCode", "…TopicName",]
    );
    for s in ["error", "warn", "malformed"] {
        let f = Filter::new(s, &cat()).unwrap();
        assert!(f.needs_body() && f.body_paths().is_empty(), "{s}");
    }
}

#[test]
fn body_paths_match_chains() {
    let p = |s: &str, anchored| BodyPath {
        segments: s.split('.').map(String::from).collect(),
        anchored,
    };
    assert!(p("Topics.Name", true).matches(&["Topics", "Name"]));
    assert!(!p("Topics.Name", true).matches(&["X", "Topics", "Name"]));
    assert!(p("Topics.Name", false).matches(&["X", "Topics", "Name"]));
    assert!(!p("Topics.Name", false).matches(&["Name"]));
    assert!(p("Topics.Name", true).may_lead_to(&["Topics"]));
    assert!(!p("Topics.Name", true).may_lead_to(&["Other"]));
    assert!(!p("Topics.Name", true).may_lead_to(&["Topics", "Name"]));
    assert!(p("Name", false).may_lead_to(&["Anything"]));
}

#[test]
fn the_empty_filter_matches_everything() {
    let f = Filter::new("  ", &cat()).unwrap();
    assert!(f.is_empty() && !f.needs_body());
    assert_eq!(sel(""), [4, 6, 8, 9, 11, 12, 13]);
    assert_eq!(Filter::new(" vote ", &cat()).unwrap().as_str(), "vote");
}

#[test]
fn fields_for_format_fields() {
    let c = cat();
    let f = Field::new("Coordinators.NodeId", &c).unwrap();
    let mut got = Vec::new();
    f.each(&msgs()[1], &mut |v| {
        got.push(v.clone().to_owned_debug());
        ControlFlow::Continue(())
    });
    assert_eq!(got, ["Int(3)", "Int(-1)"]);
    assert_eq!(Field::new("api", &c).unwrap().name(), "api");
    let e = Field::new("Coordinators.NodeID", &c).unwrap_err();
    assert_eq!(e.hint(), "did you mean Coordinators.NodeId?");
    assert!(
        Field::new("corr", &c).is_err(),
        "today's -Y spellings are not fields"
    );
}

impl Value<'_> {
    fn to_owned_debug(&self) -> String {
        format!("{self:?}")
    }
}

#[test]
fn numbers_parse_in_every_form() {
    use super::compile::parse_int;
    assert_eq!(parse_int("0x7fffffffffffffff"), Some(i64::MAX));
    assert_eq!(parse_int("-9223372036854775808"), Some(i64::MIN));
    assert_eq!(parse_int("9223372036854775808"), None);
    assert_eq!(parse_int("-0x10"), Some(-16));
    assert_eq!(parse_int("0x"), None);
    assert_eq!(parse_int("1e3"), None);
    assert_eq!(parse_int(""), None);
}

proptest::proptest! {
    /// Any text either compiles or gives an error whose caret lies within it (or just past it).
    #[test]
    fn any_text_compiles_or_points_inside_it(s in "[ -~ü\\t]{0,40}") {
        if let Err(e) = Filter::new(&s, &cat()) {
            proptest::prop_assert!(e.column() <= s.chars().count() + 1);
            proptest::prop_assert!(!e.hint().is_empty());
            proptest::prop_assert_eq!(e.to_string().lines().count(), 4);
        }
    }

    /// Filters made of the language's own pieces never panic while compiling or matching.
    #[test]
    fn pieces_of_the_language_never_panic(parts in proptest::collection::vec(
        proptest::sample::select(vec![
            "(", ")", "{", "}", ",", "..", "==", "!=", "<", ">=", "!", "~", "&&", "||",
            "and", "or", "not", "in", "contains", "matches", "vote", "error", "ErrorCode",
            "Topics.Partitions.VoteGranted", "src.ip", "api", "1", "0x10", "-1", "\"a\"",
            "10.0.0.0/8", "NOT_COORDINATOR", "Vote", "true", "free", "latency_us", "Host",
        ]),
        0..12,
    )) {
        let s = parts.join(" ");
        if let Ok(f) = Filter::new(&s, &cat()) {
            for m in msgs() {
                let _ = f.matches(&m);
            }
        }
    }
}

/// The catalogue of the embedded schemas, as the binary builds it.
fn schema_cat() -> Catalogue {
    let mut c = Catalogue::new();
    c.add_schemas(&crate::codec::registry().messages);
    c
}

#[test]
fn the_schema_catalogue_has_every_field_by_path() {
    let c = schema_cat();
    for f in [
        "Topics.Partitions.VoteGranted == false",
        "Coordinators.ErrorCode == 16",
        "CoordinatorKeys contains \"g\"",
        "NodeEndpoints.Port == 9093",
        "Topics.Partitions.ReplicaDirectoryId == 00000000-0000-0000-0000-000000000000",
        "PreVote",
        "ErrorCode == NOT_COORDINATOR",
    ] {
        if let Err(e) = Filter::new(f, &c) {
            // No error names in this catalogue: only the last one may fail, and for that reason.
            assert!(
                f.contains("NOT_COORDINATOR") && e.message().contains("error name"),
                "{f}: {e}"
            );
        }
    }
    let e = Filter::new("Topics.Partitions.VoteGranted == 1.5", &c).unwrap_err();
    assert!(
        e.message()
            .starts_with("Topics.Partitions.VoteGranted is a bool"),
        "{e}"
    );
    let e = Filter::new("Coordinators.Hots", &c).unwrap_err();
    assert_eq!(e.hint(), "did you mean Coordinators.Host?");
}

/// Tree occurrences agree with the NDJSON body for every path the test filters use.
#[test]
fn tree_occurrences_are_the_ndjson_occurrences() {
    use crate::codec::{decode_request, decode_response, encode_request, encode_response};
    let bodies = [
        (
            52,
            2,
            false,
            json!({"ErrorCode":0,"Topics":[{"TopicName":"a","Partitions":[{"PartitionIndex":0,"ErrorCode":0,"LeaderId":2,"LeaderEpoch":5,"VoteGranted":false},{"PartitionIndex":1,"ErrorCode":94,"LeaderId":-1,"LeaderEpoch":5,"VoteGranted":true}]},{"TopicName":"b","Partitions":[]}],"NodeEndpoints":[{"NodeId":2,"Host":"h","Port":9093}]}),
        ),
        (
            52,
            2,
            true,
            json!({"ClusterId":null,"VoterId":3,"Topics":[{"TopicName":"t","Partitions":[{"PartitionIndex":0,"ReplicaEpoch":1,"ReplicaId":1,"ReplicaDirectoryId":"9d3909c6-1424-3b45-1817-fb5a1859a765","VoterDirectoryId":"00000000-0000-0000-0000-000000000000","LastOffsetEpoch":1,"LastOffset":27,"PreVote":true}]}]}),
        ),
        (
            10,
            6,
            false,
            json!({"ThrottleTimeMs":0,"Coordinators":[{"Key":"g","NodeId":1,"Host":"x","Port":1,"ErrorCode":0,"ErrorMessage":null},{"Key":"k","NodeId":-1,"Host":"","Port":-1,"ErrorCode":15,"ErrorMessage":"m"}]}),
        ),
        (
            10,
            6,
            true,
            json!({"KeyType":0,"CoordinatorKeys":["a","b",""]}),
        ),
        (10, 0, true, json!({"Key":"g0"})),
    ];
    let paths = [
        ("ErrorCode", false),
        ("Topics.Partitions.ErrorCode", true),
        ("ErrorCode", true),
        ("Topics", true),
        ("Partitions", false),
        ("Topics.Partitions.VoteGranted", true),
        ("TopicName", false),
        ("NodeEndpoints.Host", true),
        ("ClusterId", true),
        ("ReplicaDirectoryId", false),
        ("CoordinatorKeys", true),
        ("Key", false),
        ("ErrorMessage", false),
        ("Coordinators.Port", true),
    ];
    for (key, version, request, body) in bodies {
        let frame = if request {
            encode_request(key, version, 1, Some("c"), &body).unwrap()
        } else {
            encode_response(key, version, 1, &body).unwrap()
        };
        let msg = if request {
            decode_request(&frame)
        } else {
            decode_response(&frame, Some((key, version)))
        };
        assert!(msg.error.is_none(), "{:?}", msg.error);
        let j = Msg {
            j: json!({ "body": body }),
            summary: String::new(),
            flags: vec![],
        };
        for (p, anchored) in paths {
            let path = BodyPath {
                segments: p.split('.').map(String::from).collect(),
                anchored,
            };
            let mut from_tree = Vec::new();
            tree::body_occurrences(&msg.tree, &path, &mut |v| {
                from_tree.push(format!("{v:?}"));
                ControlFlow::Continue(())
            });
            let mut from_json = Vec::new();
            j.body(&path, &mut |v| {
                from_json.push(format!("{v:?}"));
                ControlFlow::Continue(())
            });
            assert_eq!(from_tree, from_json, "{p} in {body}");
        }
    }
}

#[test]
fn columns_join_occurrences_and_escape_strings() {
    let names: Vec<String> = [
        "frame",
        "ts",
        "api",
        "Coordinators.NodeId",
        "client_id",
        "src.ip",
        "AuthBytes",
        "ReplicaDirectoryId",
        "Weight",
        "Coordinators",
    ]
    .map(String::from)
    .to_vec();
    let c = Columns::with_catalogue(&names, &["header=y".into()], &cat()).unwrap();
    assert!(c.header && c.needs_body());
    let lines: Vec<String> = msgs().iter().map(|m| c.line(m)).collect();
    insta::assert_snapshot!(format!("{}\n{}", c.header_line(), lines.join("\n")), @r"
    frame	ts	api	Coordinators.NodeId	client_id	src.ip	AuthBytes	ReplicaDirectoryId	Weight	Coordinators
    4	1764441600.000123	10		app-1	127.0.0.1				
    6	1764441600.002000	10	3,-1		127.0.0.1				
    8	1764441601.500000	52		raft	fd00::1		0b3c1f4e-0000-4000-8000-00000000abcd		
    9	1764441601.750000	52			fd00::2				
    11	1764441602.000000	52		ctrl	10.1.2.3				
    12	1764441602.100000				10.9.0.1				
    13	1764441602.200000	36		c\x1bx	10.1.2.3	00757365720070617373		0.5
    ");
    let c = Columns::with_catalogue(
        &["api_name".into(), "kafka.topic_name".into()],
        &["separator=,".into(), "aggregator=|".into()],
        &cat(),
    )
    .unwrap();
    assert_eq!(c.line(&msgs()[2]), "Vote,__cluster_metadata");
    assert!(!c.header);
    let e = Columns::with_catalogue(&["latncy_us".into()], &[], &cat()).unwrap_err();
    assert!(e.contains("did you mean latency_us?"), "{e}");
    let e = Columns::with_catalogue(&["frame".into()], &["quote=d".into()], &cat()).unwrap_err();
    assert!(e.contains("unknown option"), "{e}");
    assert!(Columns::with_catalogue(&[], &[], &cat()).is_err());
}
