//! Cross-implementation check against the kafka-protocol crate, generated from
//! Kafka's schemas independently of kwire. For random values at every version:
//! kafka-protocol's bytes decode in kwire to the same field values, and kwire's
//! encoder writes byte-identical frames.

use bytes::BytesMut;
use kafka_protocol::messages::{
    BrokerId, FindCoordinatorRequest, FindCoordinatorResponse, RequestHeader, ResponseHeader,
    TopicName, VoteRequest, VoteResponse, find_coordinator_response, vote_request, vote_response,
};
use kafka_protocol::protocol::{Encodable, HeaderVersion, StrBytes};
use kwire::codec::{Message, decode_request, decode_response, encode_request, encode_response};
use kwire::view::json::body_value;
use proptest::prelude::*;
use serde_json::{Value as Json, json};

fn sb(s: &str) -> StrBytes {
    StrBytes::from_string(s.to_string())
}

fn uuid_str(u: &[u8; 16]) -> String {
    uuid::Uuid::from_bytes(*u).hyphenated().to_string()
}

/// Size prefix + header + body, as kafka-protocol writes them.
fn frame(header: impl FnOnce(&mut BytesMut), body: impl FnOnce(&mut BytesMut)) -> Vec<u8> {
    let mut buf = BytesMut::new();
    header(&mut buf);
    body(&mut buf);
    let mut out = (buf.len() as i32).to_be_bytes().to_vec();
    out.extend_from_slice(&buf);
    out
}

fn kp_request<M: Encodable + HeaderVersion>(
    key: i16,
    v: i16,
    corr: i32,
    client: &Option<String>,
    msg: &M,
) -> Vec<u8> {
    let mut h = RequestHeader::default();
    h.request_api_key = key;
    h.request_api_version = v;
    h.correlation_id = corr;
    h.client_id = client.as_deref().map(sb);
    frame(
        |b| h.encode(b, M::header_version(v)).unwrap(),
        |b| msg.encode(b, v).unwrap(),
    )
}

fn kp_response<M: Encodable + HeaderVersion>(v: i16, corr: i32, msg: &M) -> Vec<u8> {
    let mut h = ResponseHeader::default();
    h.correlation_id = corr;
    frame(
        |b| h.encode(b, M::header_version(v)).unwrap(),
        |b| msg.encode(b, v).unwrap(),
    )
}

fn body_of(m: &Message<'_>) -> Json {
    assert_eq!(m.error, None, "kwire failed to decode");
    body_value(&m.tree, m.body.expect("a decoded body"))
}

fn text() -> impl Strategy<Value = String> {
    "\\PC{0,12}"
}

fn opt_text() -> impl Strategy<Value = Option<String>> {
    proptest::option::of(text())
}

// ---- Vote ----

#[derive(Debug, Clone)]
struct VotePart {
    index: i32,
    epoch: i32,
    replica: i32,
    replica_dir: [u8; 16],
    voter_dir: [u8; 16],
    last_epoch: i32,
    last_offset: i64,
    pre_vote: bool,
    error: i16,
    leader: i32,
    granted: bool,
}

fn vote_part() -> impl Strategy<Value = VotePart> {
    (
        (any::<i32>(), any::<i32>(), any::<i32>(), any::<[u8; 16]>()),
        (any::<[u8; 16]>(), any::<i32>(), any::<i64>(), any::<bool>()),
        (any::<i16>(), any::<i32>(), any::<bool>()),
    )
        .prop_map(
            |(
                (index, epoch, replica, replica_dir),
                (voter_dir, last_epoch, last_offset, pre_vote),
                (error, leader, granted),
            )| VotePart {
                index,
                epoch,
                replica,
                replica_dir,
                voter_dir,
                last_epoch,
                last_offset,
                pre_vote,
                error,
                leader,
                granted,
            },
        )
}

fn topics() -> impl Strategy<Value = Vec<(String, Vec<VotePart>)>> {
    prop::collection::vec((text(), prop::collection::vec(vote_part(), 0..3)), 0..3)
}

fn vote_request_case(
    v: i16,
    cluster: &Option<String>,
    voter: i32,
    topics: &[(String, Vec<VotePart>)],
) -> (VoteRequest, Json) {
    let mut m = VoteRequest::default();
    m.cluster_id = cluster.as_deref().map(sb);
    let mut j = serde_json::Map::new();
    j.insert("ClusterId".into(), json!(cluster));
    if v >= 1 {
        m.voter_id = BrokerId(voter);
        j.insert("VoterId".into(), json!(voter));
    }
    let mut jt = Vec::new();
    for (name, parts) in topics {
        let mut t = vote_request::TopicData::default();
        t.topic_name = TopicName(sb(name));
        let mut jp = Vec::new();
        for p in parts {
            let mut d = vote_request::PartitionData::default();
            d.partition_index = p.index;
            d.replica_epoch = p.epoch;
            d.replica_id = BrokerId(p.replica);
            d.last_offset_epoch = p.last_epoch;
            d.last_offset = p.last_offset;
            let mut o =
                json!({"PartitionIndex": p.index, "ReplicaEpoch": p.epoch, "ReplicaId": p.replica});
            if v >= 1 {
                d.replica_directory_id = uuid::Uuid::from_bytes(p.replica_dir);
                d.voter_directory_id = uuid::Uuid::from_bytes(p.voter_dir);
                o["ReplicaDirectoryId"] = json!(uuid_str(&p.replica_dir));
                o["VoterDirectoryId"] = json!(uuid_str(&p.voter_dir));
            }
            o["LastOffsetEpoch"] = json!(p.last_epoch);
            o["LastOffset"] = json!(p.last_offset);
            if v >= 2 {
                d.pre_vote = p.pre_vote;
                o["PreVote"] = json!(p.pre_vote);
            }
            t.partitions.push(d);
            jp.push(o);
        }
        m.topics.push(t);
        jt.push(json!({"TopicName": name, "Partitions": jp}));
    }
    j.insert("Topics".into(), Json::Array(jt));
    (m, Json::Object(j))
}

fn vote_response_case(
    v: i16,
    error: i16,
    topics: &[(String, Vec<VotePart>)],
    endpoints: &[(i32, String, u16)],
) -> (VoteResponse, Json) {
    let mut m = VoteResponse::default();
    m.error_code = error;
    let mut jt = Vec::new();
    for (name, parts) in topics {
        let mut t = vote_response::TopicData::default();
        t.topic_name = TopicName(sb(name));
        let mut jp = Vec::new();
        for p in parts {
            let mut d = vote_response::PartitionData::default();
            d.partition_index = p.index;
            d.error_code = p.error;
            d.leader_id = BrokerId(p.leader);
            d.leader_epoch = p.epoch;
            d.vote_granted = p.granted;
            t.partitions.push(d);
            jp.push(
                json!({"PartitionIndex": p.index, "ErrorCode": p.error, "LeaderId": p.leader,
                           "LeaderEpoch": p.epoch, "VoteGranted": p.granted}),
            );
        }
        m.topics.push(t);
        jt.push(json!({"TopicName": name, "Partitions": jp}));
    }
    let mut j = json!({"ErrorCode": error, "Topics": jt});
    // NodeEndpoints is tagged (v1+): on the wire, and so in kwire's JSON, only when non-empty.
    if v >= 1 && !endpoints.is_empty() {
        let mut je = Vec::new();
        for (id, host, port) in endpoints {
            let mut e = vote_response::NodeEndpoint::default();
            e.node_id = BrokerId(*id);
            e.host = sb(host);
            e.port = *port;
            m.node_endpoints.push(e);
            je.push(json!({"NodeId": id, "Host": host, "Port": port}));
        }
        j["NodeEndpoints"] = Json::Array(je);
    }
    (m, j)
}

// ---- FindCoordinator ----

fn fc_request_case(
    v: i16,
    key: &str,
    key_type: i8,
    keys: &[String],
) -> (FindCoordinatorRequest, Json) {
    let mut m = FindCoordinatorRequest::default();
    let mut j = serde_json::Map::new();
    if v <= 3 {
        m.key = sb(key);
        j.insert("Key".into(), json!(key));
    }
    if v >= 1 {
        m.key_type = key_type;
        j.insert("KeyType".into(), json!(key_type));
    }
    if v >= 4 {
        m.coordinator_keys = keys.iter().map(|k| sb(k)).collect();
        j.insert("CoordinatorKeys".into(), json!(keys));
    }
    (m, Json::Object(j))
}

type Coord = (String, i32, String, i32, i16, Option<String>);

fn fc_response_case(
    v: i16,
    throttle: i32,
    single: &Coord,
    many: &[Coord],
) -> (FindCoordinatorResponse, Json) {
    let mut m = FindCoordinatorResponse::default();
    let mut j = serde_json::Map::new();
    if v >= 1 {
        m.throttle_time_ms = throttle;
        j.insert("ThrottleTimeMs".into(), json!(throttle));
    }
    if v <= 3 {
        let (_, node, host, port, error, message) = single;
        m.error_code = *error;
        j.insert("ErrorCode".into(), json!(error));
        if v >= 1 {
            m.error_message = message.as_deref().map(sb);
            j.insert("ErrorMessage".into(), json!(message));
        }
        m.node_id = BrokerId(*node);
        m.host = sb(host);
        m.port = *port;
        j.insert("NodeId".into(), json!(node));
        j.insert("Host".into(), json!(host));
        j.insert("Port".into(), json!(port));
    } else {
        let mut jc = Vec::new();
        for (key, node, host, port, error, message) in many {
            let mut c = find_coordinator_response::Coordinator::default();
            c.key = sb(key);
            c.node_id = BrokerId(*node);
            c.host = sb(host);
            c.port = *port;
            c.error_code = *error;
            c.error_message = message.as_deref().map(sb);
            m.coordinators.push(c);
            jc.push(
                json!({"Key": key, "NodeId": node, "Host": host, "Port": port,
                           "ErrorCode": error, "ErrorMessage": message}),
            );
        }
        j.insert("Coordinators".into(), Json::Array(jc));
    }
    (m, Json::Object(j))
}

fn coord() -> impl Strategy<Value = Coord> {
    (
        text(),
        any::<i32>(),
        text(),
        any::<i32>(),
        any::<i16>(),
        opt_text(),
    )
}

/// Both directions of the check for one request frame.
fn check_request(key: i16, v: i16, corr: i32, client: &Option<String>, kp: Vec<u8>, expect: &Json) {
    let m = decode_request(&kp);
    assert_eq!(m.api_key, Some(key));
    assert_eq!(m.api_version, Some(v));
    assert_eq!(m.correlation_id, Some(corr));
    assert_eq!(m.client_id, client.as_deref());
    assert_eq!(&body_of(&m), expect, "v{v} body");
    let ours = encode_request(key, v, corr, client.as_deref(), expect).unwrap();
    assert_eq!(ours, kp, "v{v} bytes");
    // Round trip within kwire, and a clean error at every truncation point.
    assert_eq!(&body_of(&decode_request(&ours)), expect);
    for cut in 0..kp.len() {
        assert!(
            decode_request(&kp[..cut]).error.is_some(),
            "v{v} cut at {cut}"
        );
    }
}

fn check_response(key: i16, v: i16, corr: i32, kp: Vec<u8>, expect: &Json) {
    let m = decode_response(&kp, Some((key, v)));
    assert_eq!(m.correlation_id, Some(corr));
    assert_eq!(&body_of(&m), expect, "v{v} body");
    let ours = encode_response(key, v, corr, expect).unwrap();
    assert_eq!(ours, kp, "v{v} bytes");
    assert_eq!(&body_of(&decode_response(&ours, Some((key, v)))), expect);
    for cut in 0..kp.len() {
        assert!(
            decode_response(&kp[..cut], Some((key, v))).error.is_some(),
            "v{v} cut at {cut}"
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn vote_request_matches(v in 0i16..=2, corr in any::<i32>(), client in opt_text(),
                            cluster in opt_text(), voter in any::<i32>(), t in topics()) {
        let (m, j) = vote_request_case(v, &cluster, voter, &t);
        check_request(52, v, corr, &client, kp_request(52, v, corr, &client, &m), &j);
    }

    #[test]
    fn vote_response_matches(v in 0i16..=2, corr in any::<i32>(), error in any::<i16>(), t in topics(),
                             e in prop::collection::vec((any::<i32>(), text(), any::<u16>()), 0..3)) {
        let (m, j) = vote_response_case(v, error, &t, &e);
        check_response(52, v, corr, kp_response(v, corr, &m), &j);
    }

    #[test]
    fn find_coordinator_request_matches(v in 0i16..=6, corr in any::<i32>(), client in opt_text(),
                                        key in text(), key_type in any::<i8>(),
                                        keys in prop::collection::vec(text(), 0..4)) {
        let (m, j) = fc_request_case(v, &key, key_type, &keys);
        check_request(10, v, corr, &client, kp_request(10, v, corr, &client, &m), &j);
    }

    #[test]
    fn find_coordinator_response_matches(v in 0i16..=6, corr in any::<i32>(), throttle in any::<i32>(),
                                         single in coord(), many in prop::collection::vec(coord(), 0..3)) {
        // Before v1 the error message does not exist; kafka-protocol's default there is null.
        let mut single = single;
        if v == 0 { single.5 = None; }
        let (m, j) = fc_response_case(v, throttle, &single, &many);
        check_response(10, v, corr, kp_response(v, corr, &m), &j);
    }
}
