//! Each API file's summary on messages made by the encoder from Kafka's own schemas
//! (the kafka-clients jars found as users find them; SKIP without, fail under CI).

use super::write_details;
use crate::view::records;
use crate::codec::{Codec, DecodeOptions, Kind, Search};
use crate::topics::{IdNames, TopicNames, TopicNamesConfig};
use serde_json::{Value as Json, json};
use std::sync::OnceLock;

fn codec() -> Option<Codec> {
    static CODEC: OnceLock<Option<Codec>> = OnceLock::new();
    *CODEC.get_or_init(|| {
        let loaded = Search::from_env(Vec::new()).load();
        if loaded.schemas.sources().is_empty() {
            let msg = "SKIP: no kafka-clients jar; get one with \
                `mvn dependency:get -Dartifact=org.apache.kafka:kafka-clients:4.4.0`";
            assert!(std::env::var("CI").as_deref() != Ok("true"), "{msg}");
            eprintln!("\n*** {msg} ***\n");
            return None;
        }
        Some(Codec::new(loaded.schemas, DecodeOptions::default()))
    })
}

/// The summary details of an encoded message, decoded again.
fn summary(c: &Codec, frame: &[u8], kind: Kind, api: (i16, i16), names: &IdNames) -> String {
    let m = match kind {
        Kind::Request => c.decode_request(frame),
        Kind::Response => c.decode_response(frame, Some(api)),
    };
    assert_eq!(m.error, None, "{api:?} {kind:?}");
    // A message whose schema has no `records` field has no batches to scan for.
    if !m.records {
        assert!(!m.tree.nodes.iter().any(|n| records::data(n).is_some()), "{api:?}");
    }
    let mut out = String::new();
    write_details(&mut out, &m, m.body.unwrap(), names);
    out
}

fn req(key: i16, v: i16, body: Json) -> Option<String> {
    let c = codec()?;
    let f = c.encode_request(key, v, 1, Some("c"), &body).unwrap();
    Some(summary(
        &c,
        &f,
        Kind::Request,
        (key, v),
        &IdNames::default(),
    ))
}

fn resp(key: i16, v: i16, body: Json) -> Option<String> {
    let c = codec()?;
    let f = c.encode_response(key, v, 1, &body).unwrap();
    Some(summary(
        &c,
        &f,
        Kind::Response,
        (key, v),
        &IdNames::default(),
    ))
}

/// Asserts each (got, want) pair, unless the jars are missing.
fn check(cases: &[(Option<String>, &str)]) {
    for (got, want) in cases {
        if let Some(got) = got {
            assert_eq!(got, want);
        }
    }
}

/// A magic-2 batch header claiming `count` records, `len` bytes in all.
fn batch(count: i32, len: usize) -> String {
    let mut b = vec![0u8; len];
    b[8..12].copy_from_slice(&((len - 12) as i32).to_be_bytes());
    b[16] = 2;
    b[57..61].copy_from_slice(&count.to_be_bytes());
    b.iter().map(|x| format!("{x:02x}")).collect()
}

const ID: &str = "0b6f1d6e-7a3c-4c2e-9a54-3f1f0e1d2c3b";

#[test]
fn produce() {
    let two = format!("{}{}", batch(5, 100), batch(2, 70));
    check(&[
        (
            req(
                0,
                9,
                json!({"Acks": -1, "TimeoutMs": 30000, "TopicData": [
                {"Name": "orders", "PartitionData": [
                    {"Index": 0, "Records": two}, {"Index": 1, "Records": null}]}]}),
            ),
            "acks=all orders[p0 7 records in 2 batches 170B, p1]",
        ),
        (
            req(
                0,
                13,
                json!({"TransactionalId": "tx", "Acks": 1, "TimeoutMs": 1,
                "TopicData": [{"TopicId": ID, "PartitionData": [
                    {"Index": 3, "Records": batch(1, 61)[..100].to_string()}]}]}),
            ),
            &format!("acks=1 txn=tx {ID}[p3 0 records 50B +partial]"),
        ),
        (
            resp(
                0,
                9,
                json!({"Responses": [{"Name": "orders", "PartitionResponses": [
                {"Index": 0, "ErrorCode": 0, "BaseOffset": 1234},
                {"Index": 1, "ErrorCode": 6, "BaseOffset": -1}]}], "ThrottleTimeMs": 0}),
            ),
            "orders[p0 base=1234, p1 NOT_LEADER_OR_FOLLOWER]",
        ),
    ]);
}

#[test]
fn fetch() {
    check(&[
        (
            req(
                1,
                12,
                json!({"ReplicaId": -1, "MaxWaitMs": 500, "MinBytes": 1,
                "SessionId": 7, "SessionEpoch": 3, "IsolationLevel": 1, "Topics": [
                {"Topic": "orders", "Partitions": [{"Partition": 0, "FetchOffset": 42}]}]}),
            ),
            "maxwait=500ms read_committed session=7/3 orders[p0@42]",
        ),
        (
            resp(
                1,
                12,
                json!({"ErrorCode": 0, "SessionId": 0, "Responses": [
                {"Topic": "orders", "Partitions": [
                    {"PartitionIndex": 0, "ErrorCode": 0, "HighWatermark": 99,
                     "Records": batch(3, 80)},
                    {"PartitionIndex": 1, "ErrorCode": 1, "HighWatermark": -1,
                     "Records": null},
                    {"PartitionIndex": 2, "ErrorCode": 0, "HighWatermark": 5, "Records": ""},
                    {"PartitionIndex": 3, "ErrorCode": 0, "HighWatermark": 5, "Records": ""}]}]}),
            ),
            "orders[p0 3 records 80B hw=99, p1 OFFSET_OUT_OF_RANGE hw=-1, p2 no records hw=5, +1 more]",
        ),
    ]);
}

#[test]
fn metadata_and_api_versions() {
    check(&[
        (req(3, 12, json!({"Topics": null})), "all topics"),
        (req(3, 0, json!({"Topics": []})), "all topics"),
        (req(3, 12, json!({"Topics": []})), "no topics"),
        (
            req(
                3,
                12,
                json!({"Topics": [{"Name": "a"}, {"Name": "b"}, {"Name": "c"}, {"Name": "d"}]}),
            ),
            "topics=[a, b, c, +1 more]",
        ),
        (
            resp(
                3,
                12,
                json!({"Brokers": [{"NodeId": 1, "Host": "b1", "Port": 9092}],
                "ControllerId": 1, "Topics": [{"ErrorCode": 0, "Name": "orders", "TopicId": ID,
                "Partitions": [{"ErrorCode": 0, "PartitionIndex": 0, "LeaderId": 1,
                    "ReplicaNodes": [1], "IsrNodes": [1]},
                 {"ErrorCode": 5, "PartitionIndex": 1, "LeaderId": -1,
                    "ReplicaNodes": [1], "IsrNodes": []}]}]}),
            ),
            "controller=1 brokers=[1 b1:9092] orders[p0→1, p1→-1 LEADER_NOT_AVAILABLE]",
        ),
        (
            req(
                18,
                3,
                json!({"ClientSoftwareName": "apache-kafka-java", "ClientSoftwareVersion": "4.4.0"}),
            ),
            "software=apache-kafka-java 4.4.0",
        ),
        (req(18, 2, json!({})), ""),
        (
            resp(
                18,
                3,
                json!({"ErrorCode": 0, "ApiKeys": [
                {"ApiKey": 0, "MinVersion": 3, "MaxVersion": 13},
                {"ApiKey": 1, "MinVersion": 4, "MaxVersion": 18},
                {"ApiKey": 2, "MinVersion": 1, "MaxVersion": 11},
                {"ApiKey": 3, "MinVersion": 0, "MaxVersion": 13}]}),
            ),
            "4 APIs: Produce v3-13, Fetch v4-18, ListOffsets v1-11, +1 more",
        ),
    ]);
}

#[test]
fn groups() {
    check(&[
        (
            req(
                11,
                9,
                json!({"GroupId": "g", "SessionTimeoutMs": 45000, "RebalanceTimeoutMs": 300000,
                "MemberId": "", "ProtocolType": "consumer", "Protocols": [
                    {"Name": "range", "Metadata": ""}, {"Name": "cooperative-sticky", "Metadata": ""}]}),
            ),
            "group=g member=\"\" consumer=[range, cooperative-sticky] session=45000ms rebalance=300000ms",
        ),
        (
            resp(
                11,
                9,
                json!({"ErrorCode": 0, "GenerationId": 5, "ProtocolType": "consumer",
                "ProtocolName": "range", "Leader": "m1", "MemberId": "m1", "Members": [
                    {"MemberId": "m1", "Metadata": ""}, {"MemberId": "m2", "Metadata": ""}]}),
            ),
            "gen=5 protocol=range member=m1 (leader) members=2",
        ),
        (
            resp(
                11,
                9,
                json!({"ErrorCode": 79, "GenerationId": -1, "Leader": "", "MemberId": "m3", "Members": []}),
            ),
            "MEMBER_ID_REQUIRED gen=-1 member=m3 leader=\"\"",
        ),
        (
            req(
                14,
                5,
                json!({"GroupId": "g", "GenerationId": 5, "MemberId": "m1",
                "ProtocolType": "consumer", "ProtocolName": "range",
                "Assignments": [{"MemberId": "m1", "Assignment": "00"}]}),
            ),
            "group=g gen=5 member=m1 assignments=1",
        ),
        (
            resp(
                14,
                5,
                json!({"ErrorCode": 0, "ProtocolType": "consumer", "ProtocolName": "range", "Assignment": "0001"}),
            ),
            "NONE protocol=range assignment 2B",
        ),
        (
            req(
                12,
                4,
                json!({"GroupId": "g", "GenerationId": 5, "MemberId": "m1"}),
            ),
            "group=g gen=5 member=m1",
        ),
        (
            resp(12, 4, json!({"ErrorCode": 27})),
            "REBALANCE_IN_PROGRESS",
        ),
        (
            req(
                13,
                5,
                json!({"GroupId": "g", "Members": [{"MemberId": "m1", "Reason": "bye"}]}),
            ),
            "group=g members=[m1 reason=bye]",
        ),
        (
            req(13, 2, json!({"GroupId": "g", "MemberId": "m1"})),
            "group=g member=m1",
        ),
        (
            resp(
                13,
                5,
                json!({"ErrorCode": 0, "Members": [{"MemberId": "m1", "ErrorCode": 25}]}),
            ),
            "NONE members=[m1 UNKNOWN_MEMBER_ID]",
        ),
    ]);
}

#[test]
fn offsets() {
    check(&[
        (
            req(
                8,
                9,
                json!({"GroupId": "g", "GenerationIdOrMemberEpoch": 5, "MemberId": "m1",
                "Topics": [{"Name": "orders", "Partitions": [
                    {"PartitionIndex": 0, "CommittedOffset": 12, "CommittedMetadata": ""}]}]}),
            ),
            "group=g gen=5 member=m1 orders[p0@12]",
        ),
        (
            resp(
                8,
                9,
                json!({"Topics": [{"Name": "orders", "Partitions": [
                {"PartitionIndex": 0, "ErrorCode": 0}, {"PartitionIndex": 1, "ErrorCode": 22}]}]}),
            ),
            "orders[p0, p1 ILLEGAL_GENERATION]",
        ),
        (
            req(
                9,
                7,
                json!({"GroupId": "g", "Topics": [{"Name": "orders", "PartitionIndexes": [0, 1]}]}),
            ),
            "group=g orders[p0, p1]",
        ),
        (
            req(9, 7, json!({"GroupId": "g", "Topics": null})),
            "group=g all topics",
        ),
        (
            req(
                9,
                9,
                json!({"Groups": [{"GroupId": "g", "MemberId": null, "MemberEpoch": -1,
                "Topics": [{"Name": "orders", "PartitionIndexes": [2]}]}]}),
            ),
            "group=g orders[p2]",
        ),
        (
            resp(
                9,
                9,
                json!({"Groups": [{"GroupId": "g", "ErrorCode": 0, "Topics": [
                {"Name": "orders", "Partitions": [{"PartitionIndex": 2, "CommittedOffset": 40,
                    "CommittedLeaderEpoch": -1, "Metadata": "", "ErrorCode": 0}]}]}]}),
            ),
            "group=g orders[p2@40]",
        ),
        (
            req(
                2,
                9,
                json!({"ReplicaId": -1, "IsolationLevel": 0, "Topics": [{"Name": "orders",
                "Partitions": [{"PartitionIndex": 0, "Timestamp": -1}, {"PartitionIndex": 1, "Timestamp": -2}]}]}),
            ),
            "orders[p0@latest, p1@earliest]",
        ),
        (
            resp(
                2,
                9,
                json!({"Topics": [{"Name": "orders", "Partitions": [
                {"PartitionIndex": 0, "ErrorCode": 0, "Timestamp": -1, "Offset": 77, "LeaderEpoch": 0},
                {"PartitionIndex": 1, "ErrorCode": 3, "Timestamp": -1, "Offset": -1, "LeaderEpoch": -1}]}]}),
            ),
            "orders[p0→77, p1 UNKNOWN_TOPIC_OR_PARTITION]",
        ),
    ]);
}

#[test]
fn transactions() {
    check(&[
        (
            req(
                22,
                5,
                json!({"TransactionalId": "tx", "TransactionTimeoutMs": 60000, "ProducerId": -1, "ProducerEpoch": -1}),
            ),
            "txn=tx timeout=60000ms",
        ),
        (
            req(
                22,
                4,
                json!({"TransactionalId": null, "TransactionTimeoutMs": 2147483647}),
            ),
            "idempotent timeout=2147483647ms",
        ),
        (
            resp(
                22,
                5,
                json!({"ErrorCode": 0, "ProducerId": 1000, "ProducerEpoch": 0}),
            ),
            "pid=1000 epoch=0",
        ),
        (
            req(
                24,
                3,
                json!({"V3AndBelowTransactionalId": "tx", "V3AndBelowProducerId": 1000,
                "V3AndBelowProducerEpoch": 0, "V3AndBelowTopics": [{"Name": "orders", "Partitions": [0, 1]}]}),
            ),
            "txn=tx pid=1000 epoch=0 orders[p0, p1]",
        ),
        (
            resp(
                24,
                3,
                json!({"ResultsByTopicV3AndBelow": [{"Name": "orders", "ResultsByPartition": [
                {"PartitionIndex": 0, "PartitionErrorCode": 0},
                {"PartitionIndex": 1, "PartitionErrorCode": 51}]}]}),
            ),
            "orders[p0, p1 CONCURRENT_TRANSACTIONS]",
        ),
        (
            req(
                24,
                4,
                json!({"Transactions": [{"TransactionalId": "tx", "ProducerId": 1, "ProducerEpoch": 2,
                "VerifyOnly": true, "Topics": [{"Name": "orders", "Partitions": [4]}]}]}),
            ),
            "txn=tx pid=1 epoch=2 verify-only orders[p4]",
        ),
        (
            req(
                26,
                3,
                json!({"TransactionalId": "tx", "ProducerId": 1000, "ProducerEpoch": 0, "Committed": true}),
            ),
            "commit txn=tx pid=1000 epoch=0",
        ),
        (resp(26, 3, json!({"ErrorCode": 48})), "INVALID_TXN_STATE"),
    ]);
}

#[test]
fn topic_admin_and_sasl() {
    check(&[
        (
            req(
                19,
                7,
                json!({"Topics": [{"Name": "orders", "NumPartitions": 3, "ReplicationFactor": -1,
                "Assignments": [], "Configs": []}], "timeoutMs": 30000, "validateOnly": false}),
            ),
            "orders(partitions=3 rf=default)",
        ),
        (
            resp(
                19,
                7,
                json!({"Topics": [
                {"Name": "orders", "TopicId": ID, "ErrorCode": 0, "NumPartitions": 3, "ReplicationFactor": 1, "Configs": null},
                {"Name": "x", "ErrorCode": 36, "ErrorMessage": "exists", "NumPartitions": -1, "ReplicationFactor": -1, "Configs": null}]}),
            ),
            "orders(partitions=3 rf=1), x TOPIC_ALREADY_EXISTS",
        ),
        (
            req(20, 5, json!({"TopicNames": ["a", "b"], "TimeoutMs": 1})),
            "topics=[a, b]",
        ),
        (
            req(
                20,
                6,
                json!({"Topics": [{"Name": null, "TopicId": ID}], "TimeoutMs": 1}),
            ),
            &format!("topics=[{ID}]"),
        ),
        (
            resp(
                20,
                6,
                json!({"Responses": [{"Name": "a", "TopicId": ID, "ErrorCode": 0},
                {"Name": null, "TopicId": ID, "ErrorCode": 100}]}),
            ),
            &format!("a, {ID} UNKNOWN_TOPIC_ID"),
        ),
        (
            req(
                32,
                4,
                json!({"Resources": [{"ResourceType": 2, "ResourceName": "orders", "ConfigurationKeys": null},
                {"ResourceType": 4, "ResourceName": "1", "ConfigurationKeys": ["log.dirs"]}]}),
            ),
            "topic orders, broker 1 [log.dirs]",
        ),
        (
            resp(
                32,
                4,
                json!({"Results": [{"ErrorCode": 0, "ErrorMessage": null, "ResourceType": 2,
                "ResourceName": "orders", "Configs": [{"Name": "a", "Value": "1", "ReadOnly": false,
                "ConfigSource": 1, "IsSensitive": false, "Synonyms": [], "ConfigType": 0, "Documentation": null}]}]}),
            ),
            "topic orders: 1 config",
        ),
        (
            req(17, 1, json!({"Mechanism": "SCRAM-SHA-256"})),
            "mechanism=SCRAM-SHA-256",
        ),
        (
            resp(
                17,
                1,
                json!({"ErrorCode": 0, "Mechanisms": ["PLAIN", "SCRAM-SHA-256"]}),
            ),
            "mechanisms=[PLAIN, SCRAM-SHA-256]",
        ),
        (
            // "\0alice\0s3cret": the password never shows.
            req(36, 2, json!({"AuthBytes": "00616c69636500733363726574"})),
            "PLAIN user=alice 13 auth bytes",
        ),
        (
            resp(
                36,
                2,
                json!({"ErrorCode": 58, "ErrorMessage": "bad", "AuthBytes": "", "SessionLifetimeMs": 0}),
            ),
            "SASL_AUTHENTICATION_FAILED (bad) 0 auth bytes",
        ),
    ]);
}

#[test]
fn kraft() {
    let part = json!({"PartitionIndex": 0, "ErrorCode": 0, "LeaderId": 1, "LeaderEpoch": 5});
    check(&[
        (
            req(
                53,
                1,
                json!({"ClusterId": "c", "VoterId": 2, "Topics": [{"TopicName": "__cluster_metadata",
                "Partitions": [{"PartitionIndex": 0, "VoterDirectoryId": ID, "LeaderId": 1, "LeaderEpoch": 5}]}],
                "LeaderEndpoints": []}),
            ),
            "leader=1 epoch=5 → voter 2",
        ),
        (
            resp(
                53,
                1,
                json!({"ErrorCode": 0, "Topics": [{"TopicName": "__cluster_metadata", "Partitions": [part]}]}),
            ),
            "leader=1 epoch=5",
        ),
        (
            req(
                54,
                0,
                json!({"ClusterId": "c", "Topics": [{"TopicName": "__cluster_metadata",
                "Partitions": [{"PartitionIndex": 0, "LeaderId": 1, "LeaderEpoch": 5, "PreferredSuccessors": [2, 3]}]}]}),
            ),
            "leader=1 epoch=5 resigns successors=[2, 3]",
        ),
        (
            resp(
                55,
                2,
                json!({"ErrorCode": 0, "ErrorMessage": null, "Topics": [{"TopicName": "__cluster_metadata",
                "Partitions": [{"PartitionIndex": 0, "ErrorCode": 0, "ErrorMessage": null, "LeaderId": 1,
                "LeaderEpoch": 5, "HighWatermark": 100,
                "CurrentVoters": [{"ReplicaId": 1, "ReplicaDirectoryId": ID, "LogEndOffset": 100,
                    "LastFetchTimestamp": 0, "LastCaughtUpTimestamp": 0}], "Observers": []}]}], "Nodes": []}),
            ),
            "leader=1 epoch=5 hw=100 voters=[1@100] observers=[]",
        ),
        (
            req(
                59,
                0,
                json!({"ReplicaId": 2, "MaxBytes": 1000, "Topics": [{"Name": "__cluster_metadata",
                "Partitions": [{"Partition": 0, "CurrentLeaderEpoch": 5, "SnapshotId": {"EndOffset": 100, "Epoch": 4},
                "Position": 0}]}]}),
            ),
            "replica=2 __cluster_metadata[p0 snapshot=100/4 position=0]",
        ),
        (
            req(
                80,
                1,
                json!({"ClusterId": "c", "TimeoutMs": 1, "VoterId": 4, "VoterDirectoryId": ID,
                "Listeners": [{"Name": "CONTROLLER", "Host": "h", "Port": 9093}], "AckWhenCommitted": true}),
            ),
            "voter=4 listeners=[CONTROLLER h:9093]",
        ),
        (
            resp(81, 0, json!({"ErrorCode": 0, "ErrorMessage": null})),
            "NONE",
        ),
        (
            req(
                62,
                4,
                json!({"BrokerId": 1, "ClusterId": "c", "IncarnationId": ID, "Listeners": [],
                "Features": [], "Rack": null, "PreviousBrokerEpoch": -1}),
            ),
            "broker=1 listeners=[]",
        ),
        (
            resp(62, 4, json!({"ErrorCode": 0, "BrokerEpoch": 12})),
            "epoch=12",
        ),
        (
            req(
                63,
                1,
                json!({"BrokerId": 1, "BrokerEpoch": 12, "CurrentMetadataOffset": 300,
                "WantFence": false, "WantShutDown": true}),
            ),
            "broker=1 epoch=12 offset=300 want-shutdown",
        ),
        (
            resp(
                63,
                1,
                json!({"ErrorCode": 0, "IsCaughtUp": true, "IsFenced": false, "ShouldShutDown": false}),
            ),
            "caught-up",
        ),
    ]);
}

#[test]
fn generic_line() {
    check(&[(
        resp(
            37,
            3,
            json!({"ThrottleTimeMs": 0, "Results": [
            {"Name": "a", "ErrorCode": 0, "ErrorMessage": null},
            {"Name": "b", "ErrorCode": 37, "ErrorMessage": null},
            {"Name": "c", "ErrorCode": 37, "ErrorMessage": null}]}),
        ),
        "ThrottleTimeMs=0 Results[3] errors: INVALID_PARTITIONS ×2",
    )]);
}

#[test]
fn topic_ids_are_named_from_earlier_answers() {
    let Some(c) = codec() else { return };
    let meta = c
        .encode_response(
            3,
            12,
            1,
            &json!({"Brokers": [], "ControllerId": 1, "Topics": [
            {"ErrorCode": 0, "Name": "orders", "TopicId": ID, "Partitions": []}]}),
        )
        .unwrap();
    let fetch = c
        .encode_request(
            1,
            13,
            2,
            Some("c"),
            &json!({"MaxWaitMs": 500, "Topics": [
            {"TopicId": ID, "Partitions": [{"Partition": 0, "FetchOffset": 7}]}]}),
        )
        .unwrap();
    let mut names = TopicNames::new(TopicNamesConfig::default());
    let f = c.decode_request(&fetch);
    assert!(names.names_for(&f).is_empty(), "nothing learned yet");
    names.learn(&c.decode_response(&meta, Some((3, 12))));
    let known = names.names_for(&f);
    assert_eq!(
        summary(&c, &fetch, Kind::Request, (1, 13), &known),
        "maxwait=500ms orders[p0@7]"
    );
    // The JSON and the tree show the name beside the id.
    let named = known.nodes(&f.tree);
    let mut out = Vec::new();
    crate::view::json::write_body_named(&mut out, &f.tree, f.body.unwrap(), &named);
    let body: Json = serde_json::from_slice(&out).unwrap();
    assert_eq!(body["Topics"][0]["TopicId"], ID);
    assert_eq!(body["Topics"][0]["_topic_name"], "orders");
    let tree = crate::view::tree::render_named(&f.tree, &named);
    assert!(
        tree.contains(&format!("TopicId uuid = {ID} (topic \"orders\")")),
        "{tree}"
    );
    // A full map forgets its oldest id, and says so.
    let mut small = TopicNames::new(TopicNamesConfig { max_ids: 1 });
    small.learn(&c.decode_response(&meta, Some((3, 12))));
    let other = c
        .encode_response(3, 12, 1, &json!({"Brokers": [], "ControllerId": 1, "Topics": [
            {"ErrorCode": 0, "Name": "p", "TopicId": "00000000-0000-0000-0000-000000000002", "Partitions": []}]}))
        .unwrap();
    small.learn(&c.decode_response(&other, Some((3, 12))));
    assert_eq!(small.stats().evicted, 1);
    assert!(small.names_for(&f).is_empty());
}

#[test]
fn records_are_said_once() {
    // Produce says its records per partition: no `records:` part after them.
    let p = req(
        0,
        9,
        json!({"Acks": 1, "TimeoutMs": 1, "TopicData": [{"Name": "orders",
            "PartitionData": [{"Index": 0, "Records": batch(5, 100)}]}]}),
    );
    // An API without its own words (ShareFetch) ends with the batch headers' facts.
    let s = resp(
        78,
        1,
        json!({"ErrorCode": 0, "AcquisitionLockTimeoutMs": 1, "Responses": [{
            "TopicId": ID, "Partitions": [{"PartitionIndex": 2, "ErrorCode": 0,
            "AcknowledgeErrorCode": 0, "CurrentLeader": {"LeaderId": 1, "LeaderEpoch": 1},
            "Records": batch(5, 100), "AcquiredRecords": []}]}], "NodeEndpoints": []}),
    );
    check(&[
        (p, "acks=1 orders[p0 5 records 100B]"),
        (
            s,
            "ThrottleTimeMs=0 ErrorCode=NONE ErrorMessage=null AcquisitionLockTimeoutMs=1 \
             Responses[1] NodeEndpoints[0]  records: 0b6f1d6e…[2] 5 records in 1 batch, 100 B, none",
        ),
    ]);
}
