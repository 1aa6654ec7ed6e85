//! Every Kafka API key, as data: name, newest request version, first flexible version.
//!
//! Source of truth is Kafka's own `clients/src/main/resources/common/message/*Request.json`
//! (`apiKey`, `name`, top of `validVersions`, start of `flexibleVersions`). The table follows
//! Kafka 4.3.0 plus what trunk has added since (noted per row), checked against the
//! ApiVersions answers of the Kafka 4.4.0 broker and controllers recorded in `captures/`. Kafka 4.0 dropped old versions
//! (KIP-896) but old clients still send them, so kwire treats `0..=max_version` as known.
#![cfg_attr(
    not(test),
    deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)
)]

/// Static facts about one Kafka API.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ApiInfo {
    pub key: i16,
    pub name: &'static str,
    pub max_version: i16,
    pub first_flexible: Option<i16>,
}

const fn api(
    key: i16,
    name: &'static str,
    max_version: i16,
    first_flexible: Option<i16>,
) -> ApiInfo {
    ApiInfo {
        key,
        name,
        max_version,
        first_flexible,
    }
}

/// Indexed by key: row `i` has `key == i` (a test holds us to it), so lookup is one bounds check.
static APIS: [ApiInfo; 95] = [
    api(0, "Produce", 13, Some(9)),
    api(1, "Fetch", 18, Some(12)),
    api(2, "ListOffsets", 11, Some(6)),
    api(3, "Metadata", 13, Some(9)),
    // Keys 4-7 are ZooKeeper-era broker RPCs; Kafka 4.0 set their validVersions to "none" but
    // keeps the keys reserved. 3.x clusters still speak them, so we keep their last (3.9) range.
    api(4, "LeaderAndIsr", 7, Some(4)),
    api(5, "StopReplica", 4, Some(2)),
    api(6, "UpdateMetadata", 8, Some(6)),
    api(7, "ControlledShutdown", 3, Some(3)),
    api(8, "OffsetCommit", 10, Some(8)),
    api(9, "OffsetFetch", 10, Some(6)),
    api(10, "FindCoordinator", 6, Some(3)),
    api(11, "JoinGroup", 9, Some(6)),
    api(12, "Heartbeat", 4, Some(4)),
    api(13, "LeaveGroup", 5, Some(4)),
    api(14, "SyncGroup", 5, Some(4)),
    api(15, "DescribeGroups", 6, Some(5)),
    api(16, "ListGroups", 5, Some(3)),
    api(17, "SaslHandshake", 1, None),
    api(18, "ApiVersions", 5, Some(3)),
    api(19, "CreateTopics", 7, Some(5)),
    api(20, "DeleteTopics", 6, Some(4)),
    api(21, "DeleteRecords", 2, Some(2)),
    api(22, "InitProducerId", 6, Some(2)),
    api(23, "OffsetForLeaderEpoch", 4, Some(4)),
    api(24, "AddPartitionsToTxn", 5, Some(3)),
    api(25, "AddOffsetsToTxn", 4, Some(3)),
    api(26, "EndTxn", 5, Some(3)),
    api(27, "WriteTxnMarkers", 2, Some(1)),
    api(28, "TxnOffsetCommit", 6, Some(3)),
    api(29, "DescribeAcls", 3, Some(2)),
    api(30, "CreateAcls", 3, Some(2)),
    api(31, "DeleteAcls", 3, Some(2)),
    api(32, "DescribeConfigs", 4, Some(4)),
    api(33, "AlterConfigs", 2, Some(2)),
    api(34, "AlterReplicaLogDirs", 2, Some(2)),
    api(35, "DescribeLogDirs", 5, Some(2)),
    api(36, "SaslAuthenticate", 2, Some(2)),
    api(37, "CreatePartitions", 3, Some(2)),
    api(38, "CreateDelegationToken", 3, Some(2)),
    api(39, "RenewDelegationToken", 2, Some(2)),
    api(40, "ExpireDelegationToken", 2, Some(2)),
    api(41, "DescribeDelegationToken", 3, Some(2)),
    api(42, "DeleteGroups", 3, Some(2)),
    api(43, "ElectLeaders", 2, Some(2)),
    api(44, "IncrementalAlterConfigs", 1, Some(1)),
    api(45, "AlterPartitionReassignments", 1, Some(0)),
    api(46, "ListPartitionReassignments", 0, Some(0)),
    api(47, "OffsetDelete", 0, None),
    api(48, "DescribeClientQuotas", 1, Some(1)),
    api(49, "AlterClientQuotas", 1, Some(1)),
    api(50, "DescribeUserScramCredentials", 0, Some(0)),
    api(51, "AlterUserScramCredentials", 0, Some(0)),
    api(52, "Vote", 2, Some(0)),
    api(53, "BeginQuorumEpoch", 1, Some(1)),
    api(54, "EndQuorumEpoch", 1, Some(1)),
    api(55, "DescribeQuorum", 2, Some(0)),
    api(56, "AlterPartition", 3, Some(0)),
    api(57, "UpdateFeatures", 2, Some(0)),
    api(58, "Envelope", 0, Some(0)),
    api(59, "FetchSnapshot", 1, Some(0)),
    api(60, "DescribeCluster", 2, Some(0)),
    api(61, "DescribeProducers", 0, Some(0)),
    api(62, "BrokerRegistration", 4, Some(0)),
    api(63, "BrokerHeartbeat", 2, Some(0)),
    api(64, "UnregisterBroker", 0, Some(0)),
    api(65, "DescribeTransactions", 0, Some(0)),
    api(66, "ListTransactions", 2, Some(0)),
    api(67, "AllocateProducerIds", 0, Some(0)),
    api(68, "ConsumerGroupHeartbeat", 1, Some(0)),
    api(69, "ConsumerGroupDescribe", 1, Some(0)),
    api(70, "ControllerRegistration", 0, Some(0)),
    api(71, "GetTelemetrySubscriptions", 0, Some(0)),
    api(72, "PushTelemetry", 0, Some(0)),
    api(73, "AssignReplicasToDirs", 0, Some(0)),
    // Named ListClientMetricsResources until Kafka 4.1 (KIP-1142); same key and wire format.
    api(74, "ListConfigResources", 1, Some(0)),
    api(75, "DescribeTopicPartitions", 0, Some(0)),
    api(76, "ShareGroupHeartbeat", 1, Some(0)),
    api(77, "ShareGroupDescribe", 1, Some(0)),
    api(78, "ShareFetch", 2, Some(0)),
    api(79, "ShareAcknowledge", 2, Some(0)),
    api(80, "AddRaftVoter", 1, Some(0)),
    api(81, "RemoveRaftVoter", 0, Some(0)),
    api(82, "UpdateRaftVoter", 0, Some(0)),
    api(83, "InitializeShareGroupState", 0, Some(0)),
    api(84, "ReadShareGroupState", 0, Some(0)),
    api(85, "WriteShareGroupState", 1, Some(0)),
    api(86, "DeleteShareGroupState", 0, Some(0)),
    api(87, "ReadShareGroupStateSummary", 1, Some(0)),
    // 88 and 89 are v0 in 4.3.0; trunk added v1 for KIP-1331.
    api(88, "StreamsGroupHeartbeat", 1, Some(0)),
    api(89, "StreamsGroupDescribe", 1, Some(0)),
    api(90, "DescribeShareGroupOffsets", 1, Some(0)),
    api(91, "AlterShareGroupOffsets", 0, Some(0)),
    api(92, "DeleteShareGroupOffsets", 0, Some(0)),
    // 93 and 94 exist only on trunk (after 4.3.0): KIP-1331 and UnregisterController.
    api(93, "StreamsGroupTopologyDescriptionUpdate", 0, Some(0)),
    api(94, "UnregisterController", 0, Some(0)),
];

/// The API with this key, if Kafka has ever assigned it.
pub fn api_info(key: i16) -> Option<&'static ApiInfo> {
    usize::try_from(key).ok().and_then(|index| APIS.get(index))
}

/// Kafka's name for the API (no `Request` suffix), e.g. `"FindCoordinator"`.
pub fn api_name(key: i16) -> Option<&'static str> {
    api_info(key).map(|info| info.name)
}

/// Kafka's name for an API key, or `Unknown(N)` for a key Kafka never assigned.
pub fn api_label(key: i16) -> String {
    api_name(key).map_or_else(|| format!("Unknown({key})"), str::to_string)
}

/// Looks up by Kafka name, case-insensitive, also accepting kebab/snake forms ("find-coordinator", "find_coordinator", "FindCoordinator").
pub fn api_by_name(name: &str) -> Option<&'static ApiInfo> {
    APIS.iter().find(|info| same_name_loosely(name, info.name))
}

/// All APIs, ordered by key.
pub fn all_apis() -> &'static [ApiInfo] {
    &APIS
}

/// Compares ignoring ASCII case and any `-`/`_` in `input`, without allocating:
/// Kafka names are plain CamelCase, so dropping separators is enough to line them up.
fn same_name_loosely(input: &str, kafka_name: &str) -> bool {
    let mut wanted = input.bytes().filter(|b| *b != b'-' && *b != b'_');
    let mut have = kafka_name.bytes();
    loop {
        match (wanted.next(), have.next()) {
            (None, None) => return true,
            (Some(a), Some(b)) if a.eq_ignore_ascii_case(&b) => {}
            _ => return false,
        }
    }
}

impl ApiInfo {
    /// Whether `version` of this API uses the flexible encoding (compact types, tagged fields).
    ///
    /// Kafka writes flexibility as an open range "N+", so versions past `max_version` count too.
    pub fn is_flexible(&self, version: i16) -> bool {
        self.first_flexible.is_some_and(|first| version >= first)
    }

    /// Request header version: 2 if flexible, else 1; but ControlledShutdown (key 7) v0 uses header 0.
    pub fn request_header_version(&self, version: i16) -> i16 {
        // ControlledShutdown v0 predates the client id field in the request header.
        if self.key == CONTROLLED_SHUTDOWN && version == 0 {
            0
        } else if self.is_flexible(version) {
            2
        } else {
            1
        }
    }

    /// Response header version: 1 if flexible, else 0; ApiVersions (key 18) responses always use 0.
    pub fn response_header_version(&self, version: i16) -> i16 {
        // A client may not know the broker's versions yet, so the ApiVersions response header
        // must stay parseable by everyone: it never carries tagged fields.
        if self.key == API_VERSIONS {
            0
        } else if self.is_flexible(version) {
            1
        } else {
            0
        }
    }

    /// Whether kwire knows how this version looks: `0..=max_version`.
    pub fn knows_version(&self, version: i16) -> bool {
        (0..=self.max_version).contains(&version)
    }
}

/// Key of FindCoordinator: which broker coordinates a group, transaction or share group.
pub const FIND_COORDINATOR: i16 = 10;
/// Key of ControlledShutdown.
pub const CONTROLLED_SHUTDOWN: i16 = 7;
/// Key of ApiVersions.
pub const API_VERSIONS: i16 = 18;
/// Key of Vote: KRaft leader elections.
pub const VOTE: i16 = 52;

#[cfg(test)]
mod tests {
    use super::*;
    use kafka_protocol::messages::ApiKey;

    /// Where kafka-protocol 0.18 (generated from Kafka 4.1.0) trails Kafka's newer schemas:
    /// (key, kafka-protocol's max, our max, the fact that settles it).
    const NEWER_THAN_KAFKA_PROTOCOL: &[(i16, i16, i16, &str)] = &[
        (2, 10, 11, "4.3.0 brokers advertise ListOffsets v11"),
        (
            18,
            4,
            5,
            "4.4.0 brokers and controllers advertise ApiVersions v5 (captures/)",
        ),
        (27, 1, 2, "WriteTxnMarkersRequest.json: validVersions 1-2"),
        (
            28,
            5,
            6,
            "4.4.0 brokers advertise TxnOffsetCommit v6 (captures/)",
        ),
        (35, 4, 5, "4.3.0 brokers advertise DescribeLogDirs v5"),
        (
            42,
            2,
            3,
            "4.4.0 brokers advertise DeleteGroups v3 (captures/)",
        ),
        (63, 1, 2, "BrokerHeartbeatRequest.json: validVersions 0-2"),
        (78, 1, 2, "ShareFetchRequest.json: validVersions 1-2"),
        (79, 1, 2, "4.3.0 brokers advertise ShareAcknowledge v2"),
        (80, 0, 1, "4.3.0 brokers advertise AddRaftVoter v1"),
        (85, 0, 1, "4.3.0 brokers advertise WriteShareGroupState v1"),
        (
            87,
            0,
            1,
            "4.3.0 brokers advertise ReadShareGroupStateSummary v1",
        ),
        (
            90,
            0,
            1,
            "4.3.0 brokers advertise DescribeShareGroupOffsets v1",
        ),
    ];

    /// Header versions where kafka-protocol answers for a version outside its own valid range
    /// and gets it wrong: (key, version, our request header, our response header, fact).
    const HEADER_DISAGREEMENTS: &[(i16, i16, i16, i16, &str)] = &[(
        27,
        0,
        1,
        0,
        // kafka-protocol only knows v1+ and says header 2 for everything.
        "WriteTxnMarkers flexibleVersions is 1+, so the v0 that 4.0 removed was not flexible",
    )];

    #[test]
    fn table_is_indexed_by_key() {
        for (index, info) in all_apis().iter().enumerate() {
            assert_eq!(usize::try_from(info.key).ok(), Some(index), "{info:?}");
        }
    }

    #[test]
    fn flexibility_never_starts_past_the_newest_version() {
        for info in all_apis() {
            if let Some(first) = info.first_flexible {
                assert!(first <= info.max_version, "{info:?}");
            }
        }
    }

    #[test]
    fn agrees_with_kafka_protocol() {
        for kp in ApiKey::iter() {
            let key = kp as i16;
            let ours = api_info(key).unwrap_or_else(|| panic!("missing key {key}"));
            assert_eq!(ours.name, format!("{kp:?}"), "name of key {key}");

            // valid_versions() counts versions 4.1 marked latestVersionUnstable (OffsetCommit
            // v10, InitProducerId v6), as we do; kafka-protocol's request structs stop below them.
            let kp_max = kp.valid_versions().max;
            match NEWER_THAN_KAFKA_PROTOCOL.iter().find(|row| row.0 == key) {
                Some(&(_, theirs, mine, fact)) => {
                    // If kafka-protocol catches up, this row should go.
                    assert_eq!(kp_max, theirs, "kafka-protocol moved for key {key}: {fact}");
                    assert_eq!(ours.max_version, mine, "{fact}");
                }
                None => assert_eq!(ours.max_version, kp_max, "max version of key {key}"),
            }

            for version in 0..=kp_max {
                let exception = HEADER_DISAGREEMENTS
                    .iter()
                    .find(|row| row.0 == key && row.1 == version);
                let (request, response) = match exception {
                    Some(&(_, _, request, response, fact)) => {
                        // A row kafka-protocol no longer contradicts should go.
                        assert_ne!(
                            (
                                kp.request_header_version(version),
                                kp.response_header_version(version)
                            ),
                            (request, response),
                            "{fact}"
                        );
                        (request, response)
                    }
                    None => (
                        kp.request_header_version(version),
                        kp.response_header_version(version),
                    ),
                };
                assert_eq!(
                    ours.request_header_version(version),
                    request,
                    "request header of key {key} v{version}"
                );
                assert_eq!(
                    ours.response_header_version(version),
                    response,
                    "response header of key {key} v{version}"
                );
            }
        }
    }

    #[test]
    fn known_facts() {
        assert_eq!(api_name(10), Some("FindCoordinator"));
        assert_eq!(api_name(52), Some("Vote"));
        assert_eq!(api_name(18), Some("ApiVersions"));
        assert_eq!(api_name(0), Some("Produce"));
        assert_eq!(api_name(-1), None);
        assert_eq!(api_name(95), None);
        assert_eq!(api_name(i16::MAX), None);

        let api_versions = api_info(18).expect("ApiVersions");
        for version in 0..=api_versions.max_version {
            assert_eq!(api_versions.response_header_version(version), 0);
        }
        assert_eq!(api_versions.request_header_version(3), 2);
        assert_eq!(api_versions.request_header_version(2), 1);

        let shutdown = api_info(7).expect("ControlledShutdown");
        assert_eq!(shutdown.request_header_version(0), 0);
        assert_eq!(shutdown.request_header_version(1), 1);
        assert_eq!(shutdown.request_header_version(3), 2);

        let handshake = api_info(17).expect("SaslHandshake");
        assert!(!handshake.is_flexible(1));
        assert_eq!(handshake.request_header_version(1), 1);
        assert_eq!(handshake.response_header_version(1), 0);

        let produce = api_info(0).expect("Produce");
        assert!(!produce.is_flexible(8));
        assert!(produce.is_flexible(9));
        assert!(produce.knows_version(0));
        assert!(produce.knows_version(13));
        assert!(!produce.knows_version(14));
        assert!(!produce.knows_version(-1));
    }

    #[test]
    fn lookup_by_name_is_loose_about_case_and_separators() {
        for spelling in [
            "FindCoordinator",
            "findcoordinator",
            "find-coordinator",
            "find_coordinator",
            "FIND_COORDINATOR",
        ] {
            assert_eq!(api_by_name(spelling).map(|a| a.key), Some(10), "{spelling}");
        }
        assert_eq!(api_by_name("api-versions").map(|a| a.key), Some(18));
        assert_eq!(api_by_name("vote").map(|a| a.key), Some(52));
        assert_eq!(api_by_name("find-coordinators"), None);
        assert_eq!(api_by_name("find"), None);
        assert_eq!(api_by_name(""), None);
        assert_eq!(api_by_name("-"), None);
        for info in all_apis() {
            assert_eq!(api_by_name(info.name), Some(info));
        }
    }
}
