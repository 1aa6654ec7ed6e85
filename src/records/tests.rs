//! Decoder tests: truth comes from the encoder (and, for real traffic, from
//! Kafka's own parser in tests/records_kafka.rs).

use super::encode::{BatchSpec, MessageSpec, RecordSpec};
use super::summary::{Kind, Totals, summaries};
use super::tree::decode_tree;
use super::*;
use serde_json::json;

const CODECS: [Compression; 5] = [
    Compression::None,
    Compression::Gzip,
    Compression::Snappy,
    Compression::Lz4,
    Compression::Zstd,
];

fn sample_records() -> Vec<RecordSpec> {
    vec![
        RecordSpec::new(0, Some(b"k0"), Some(b"v0")).header("h1", Some(b"x")),
        RecordSpec::new(1, None, Some(b"no key")),
        RecordSpec::new(2, Some(b"tombstone"), None)
            .header("null", None)
            .header("", Some(b"")),
    ]
}

fn opts() -> Options<'static> {
    Options::default()
}

fn one(field: &[u8], o: &Options<'_>) -> Entry {
    let v = decode(field, o);
    assert_eq!(v.len(), 1, "{v:?}");
    v.into_iter().next().unwrap()
}

fn batch_of(e: Entry) -> Batch {
    match e {
        Entry::Batch(b) => b,
        other => panic!("not a batch: {other:?}"),
    }
}

/// Checks the decoded records against the specs they were written from.
fn check_records(b: &Batch, field: &[u8], specs: &[RecordSpec]) {
    let data = b.data(field);
    assert_eq!(b.records.len(), specs.len());
    for (r, s) in b.records.iter().zip(specs) {
        assert_eq!(r.attributes, s.attributes);
        assert_eq!(r.timestamp_delta, s.timestamp_delta);
        assert_eq!(r.offset_delta, s.offset_delta);
        assert_eq!(r.key.map(|k| k.of(data).to_vec()), s.key);
        assert_eq!(r.value.map(|v| v.of(data).to_vec()), s.value);
        let h: Vec<_> = r
            .headers
            .iter()
            .map(|h| {
                (
                    h.key.of(data).to_vec(),
                    h.value.map(|v| v.of(data).to_vec()),
                )
            })
            .collect();
        assert_eq!(h, s.headers);
    }
}

#[test]
fn every_codec_decodes_what_the_encoder_wrote() {
    for codec in CODECS {
        for snappy in [SnappyForm::Xerial, SnappyForm::Raw] {
            let spec = BatchSpec {
                base_offset: 42,
                compression: codec,
                snappy,
                producer_id: 7,
                producer_epoch: 1,
                base_sequence: 5,
                partition_leader_epoch: 3,
                records: sample_records(),
                ..Default::default()
            };
            let field = spec.encode();
            let b = batch_of(one(&field, &opts()));
            assert!(b.crc_valid, "{codec:?}");
            assert_eq!(b.error, None, "{codec:?}");
            assert_eq!(b.bytes, field.len());
            assert_eq!(b.header.compression(), codec);
            assert_eq!(b.header.base_offset, 42);
            assert_eq!(b.header.record_count, 3);
            assert_eq!(b.header.last_offset_delta, 2);
            assert_eq!(b.payload.is_some(), codec != Compression::None);
            check_records(&b, &field, &spec.records);
        }
    }
}

#[test]
fn json_has_the_contract_shape() {
    let spec = BatchSpec {
        base_offset: 10,
        transactional: true,
        producer_id: 1000,
        producer_epoch: 2,
        base_sequence: 0,
        records: sample_records(),
        ..Default::default()
    };
    let field = spec.encode();
    let crc = u32::from_be_bytes(field[17..21].try_into().unwrap());
    let v = json::value(Some(&field), &opts());
    let want = json!([{
        "BaseOffset": 10, "BatchLength": field.len() - 12, "PartitionLeaderEpoch": -1,
        "Magic": 2, "Crc": crc, "CrcValid": true, "Attributes": 16, "Compression": "none",
        "TimestampType": "create", "IsTransactional": true, "IsControl": false,
        "LastOffsetDelta": 2, "BaseTimestamp": 1_700_000_000_000i64,
        "MaxTimestamp": 1_700_000_000_002i64, "ProducerId": 1000, "ProducerEpoch": 2,
        "BaseSequence": 0, "RecordCount": 3,
        "Records": [
            {"Attributes": 0, "TimestampDelta": 0, "OffsetDelta": 0, "Key": "6b30",
             "Value": "7630", "Headers": [{"Key": "h1", "Value": "78"}]},
            {"Attributes": 0, "TimestampDelta": 1, "OffsetDelta": 1, "Key": null,
             "Value": "6e6f206b6579", "Headers": []},
            {"Attributes": 0, "TimestampDelta": 2, "OffsetDelta": 2,
             "Key": "746f6d6273746f6e65", "Value": null,
             "Headers": [{"Key": "null", "Value": null}, {"Key": "", "Value": ""}]}
        ]
    }]);
    assert_eq!(v, want);
    // Key order as the contract lists it.
    let mut out = Vec::new();
    json::write(&mut out, Some(&field), &opts());
    let s = String::from_utf8(out).unwrap();
    let keys = [
        "BaseOffset",
        "BatchLength",
        "PartitionLeaderEpoch",
        "Magic",
        "\"Crc\"",
        "CrcValid",
        "Attributes",
        "Compression",
        "TimestampType",
        "IsTransactional",
        "IsControl",
        "LastOffsetDelta",
        "BaseTimestamp",
        "MaxTimestamp",
        "ProducerId",
        "ProducerEpoch",
        "BaseSequence",
        "RecordCount",
        "Records",
    ];
    let at: Vec<usize> = keys.iter().map(|k| s.find(k).unwrap()).collect();
    assert!(at.windows(2).all(|w| w[0] < w[1]), "{s}");
    // A null field is null; an empty one is an empty array.
    assert_eq!(json::value(None, &opts()), json!(null));
    assert_eq!(json::value(Some(&[]), &opts()), json!([]));
}

#[test]
fn log_append_batches_keep_deltas_as_written() {
    let spec = BatchSpec {
        log_append_time: true,
        max_timestamp: Some(5),
        records: sample_records(),
        ..Default::default()
    };
    let v = json::value(Some(&spec.encode()), &opts());
    assert_eq!(v[0]["TimestampType"], "log_append");
    assert_eq!(v[0]["MaxTimestamp"], 5);
    assert_eq!(v[0]["Records"][2]["TimestampDelta"], 2);
}

#[test]
fn several_batches_and_a_partial_one() {
    let a = BatchSpec {
        records: sample_records(),
        ..Default::default()
    }
    .encode();
    let b = BatchSpec {
        base_offset: 3,
        compression: Compression::Gzip,
        records: sample_records(),
        ..Default::default()
    }
    .encode();
    let whole = [a.clone(), b.clone()].concat();
    // Every cut: no panic; the first batch stays whole, the rest is partial.
    for cut in 0..whole.len() {
        let f = &whole[..cut];
        let v = json::value(Some(f), &opts());
        let arr = v.as_array().unwrap();
        if cut == 0 {
            assert!(arr.is_empty());
        } else if cut < a.len() {
            assert_eq!(arr, &vec![json!({"Partial": true, "Bytes": cut})]);
        } else if cut == a.len() {
            assert_eq!(arr.len(), 1);
        } else {
            assert_eq!(arr.len(), 2);
            assert_eq!(arr[0]["RecordCount"], 3);
            assert_eq!(arr[1], json!({"Partial": true, "Bytes": cut - a.len()}));
        }
        let _ = decode_tree(f, &opts()).nodes(f, 0, 0, 0);
        let _ = Totals::of(f);
    }
    let v = json::value(Some(&whole), &opts());
    assert_eq!(v[1]["BaseOffset"], 3);
    assert_eq!(v[1]["Compression"], "gzip");
}

#[test]
fn empty_batches_are_not_decompressed() {
    for codec in CODECS {
        let f = BatchSpec {
            compression: codec,
            ..Default::default()
        }
        .encode_with(&[]);
        let b = batch_of(one(&f, &opts()));
        assert_eq!(
            (b.records.len(), b.error, b.crc_valid),
            (0, None, true),
            "{codec:?}"
        );
    }
}

#[test]
fn crc_mismatch_is_a_warning_and_records_still_decode() {
    let spec = BatchSpec {
        bad_crc: true,
        records: sample_records(),
        ..Default::default()
    };
    let field = spec.encode();
    let b = batch_of(one(&field, &opts()));
    assert!(!b.crc_valid);
    assert_eq!(b.error, None);
    check_records(&b, &field, &spec.records);
    // A flipped payload byte too.
    let mut f = BatchSpec {
        records: sample_records(),
        ..Default::default()
    }
    .encode();
    let last = f.len() - 1;
    f[last] ^= 1;
    let b = batch_of(one(&f, &opts()));
    assert!(!b.crc_valid);
    assert_eq!(b.records.len(), 3);
}

#[test]
fn record_counts_that_lie() {
    // 2^31 reads as a negative int32: invalid, reported, no records.
    for count in [i32::MIN, -1] {
        let spec = BatchSpec {
            record_count: Some(count),
            records: sample_records(),
            ..Default::default()
        };
        let f = spec.encode();
        let b = batch_of(one(&f, &opts()));
        assert_eq!(
            b.error.as_deref(),
            Some(format!("invalid record count {count}").as_str())
        );
        assert!(b.records.is_empty());
        let v = json::value(Some(&f), &opts());
        assert_eq!(v[0]["RecordCount"], count);
        assert_eq!(v[0]["Bytes"], f.len());
    }
    // 2^31 - 1, with three records present: three decode, then a clear error.
    for codec in [Compression::None, Compression::Zstd] {
        let spec = BatchSpec {
            compression: codec,
            record_count: Some(i32::MAX),
            records: sample_records(),
            ..Default::default()
        };
        let f = spec.encode();
        let b = batch_of(one(&f, &opts()));
        assert_eq!(b.records.len(), 3);
        assert_eq!(
            b.error.as_deref(),
            Some("the batch says 2147483647 records but holds 3")
        );
        // The summary reads the count from the header, without decoding.
        assert_eq!(summaries(&f).next().unwrap().records, Some(i32::MAX as u64));
    }
    // Fewer claimed than present: trailing records are an error.
    let spec = BatchSpec {
        record_count: Some(1),
        records: sample_records(),
        ..Default::default()
    };
    let b = batch_of(one(&spec.encode(), &opts()));
    assert_eq!(b.records.len(), 1);
    assert!(b.error.unwrap().contains("bytes remain after the last"));
}

/// A batch whose records area is `data` (uncompressed), claiming `count` records.
fn raw_batch(data: &[u8], count: i32) -> Vec<u8> {
    BatchSpec {
        record_count: Some(count),
        ..Default::default()
    }
    .encode_with(data)
}

#[test]
fn hostile_records() {
    use super::wire::put_varint;
    // attributes, ts delta, offset delta, then the key length.
    let record_with = |tail: &[u8]| {
        let mut body = vec![0u8, 0, 0];
        body.extend_from_slice(tail);
        let mut r = Vec::new();
        put_varint(&mut r, body.len() as i32);
        r.extend_from_slice(&body);
        r
    };
    let mut neg_key = Vec::new();
    put_varint(&mut neg_key, -5);
    neg_key.extend_from_slice(&[0, 0]);
    let mut neg_hdrs = vec![2u8, b'k'];
    put_varint(&mut neg_hdrs, -1);
    put_varint(&mut neg_hdrs, -3);
    let mut neg_hkey = vec![0u8, 0, 2];
    put_varint(&mut neg_hkey, -2);
    neg_hkey.push(0);
    let mut huge_hdrs = vec![0u8, 0];
    put_varint(&mut huge_hdrs, i32::MAX);
    let long_key = vec![0x10u8, 1]; // key length 8 with one byte present
    let cases: Vec<(Vec<u8>, &str)> = vec![
        (record_with(&neg_key), "invalid length -5"),
        (record_with(&neg_hdrs), "invalid header count -3"),
        (record_with(&neg_hkey), "invalid header key length -2"),
        (
            record_with(&huge_hdrs),
            "header count 2147483647 cannot fit",
        ),
        (record_with(&long_key), "truncated"),
        // A record length of -1, and one past the end.
        (vec![0x01, 0, 0, 0], "invalid record length -1"),
        (vec![0xfe, 0xff, 0xff, 0xff, 0x0f, 0], "runs past the end"),
        // Varints of 10+ bytes: the record length, and a timestamp delta.
        ([vec![0xffu8; 10], vec![0]].concat(), "varint too long"),
        (
            [vec![0x18u8, 0], vec![0xff; 11]].concat(),
            "varint too long",
        ),
    ];
    for (data, want) in cases {
        for codec in [Compression::None, Compression::Gzip] {
            let spec = BatchSpec {
                compression: codec,
                record_count: Some(1),
                ..Default::default()
            };
            let f = spec.encode_with(&codec::compress(codec, &data, 2, SnappyForm::Xerial));
            let b = batch_of(one(&f, &opts()));
            let e = b.error.clone().unwrap_or_default();
            assert!(e.contains(want), "{codec:?} {data:02x?}: {e}");
            // The JSON still has the header and says what went wrong.
            let v = json::value(Some(&f), &opts());
            assert_eq!(v[0]["RecordCount"], 1);
            assert!(v[0]["Error"].as_str().unwrap().contains(want));
            let _ = decode_tree(&f, &opts()).nodes(&f, 0, 0, 0);
        }
    }
    // A record whose declared length leaves bytes unread.
    let mut r = RecordSpec::new(0, Some(b"k"), None);
    let mut buf = Vec::new();
    r.key = Some(b"k".to_vec());
    r.encode(&mut buf);
    buf[0] += 4; // zigzag: two more bytes than the fields use
    buf.extend_from_slice(&[0, 0]);
    let b = batch_of(one(&raw_batch(&buf, 1), &opts()));
    assert!(b.error.unwrap().contains("leaves 2 bytes unread"));
}

#[test]
fn bad_framing_is_reported_and_the_rest_decodes() {
    let good = BatchSpec {
        base_offset: 9,
        records: sample_records(),
        ..Default::default()
    }
    .encode();
    // Unknown magic: skipped by its length, then the next batch decodes.
    let mut bad = good.clone();
    bad[16] = 7;
    let v = json::value(Some(&[bad.clone(), good.clone()].concat()), &opts());
    assert_eq!(
        v[0],
        json!({"Error": "unknown magic 7", "Bytes": good.len()})
    );
    assert_eq!(v[1]["BaseOffset"], 9);
    // Negative and tiny lengths: nothing to skip by, so the rest is one error.
    for len in [-1i32, 0, 13, i32::MIN] {
        let mut f = good.clone();
        f[8..12].copy_from_slice(&len.to_be_bytes());
        let v = json::value(Some(&f), &opts());
        assert_eq!(v.as_array().unwrap().len(), 1);
        assert_eq!(v[0]["Bytes"], f.len());
        assert!(
            v[0]["Error"]
                .as_str()
                .unwrap()
                .contains("below the minimum")
        );
    }
    // A length past the field: the batch is partial.
    let mut f = good.clone();
    f[8..12].copy_from_slice(&i32::MAX.to_be_bytes());
    assert_eq!(
        json::value(Some(&f), &opts()),
        json!([{"Partial": true, "Bytes": f.len()}])
    );
    // A magic 2 length too short for the header.
    let mut f = good[..40].to_vec();
    f[8..12].copy_from_slice(&28i32.to_be_bytes());
    let v = json::value(Some(&f), &opts());
    assert!(
        v[0]["Error"]
            .as_str()
            .unwrap()
            .contains("below the magic 2 header size")
    );
    // Fewer than 12 bytes is partial too.
    assert_eq!(
        json::value(Some(&[0; 5]), &opts()),
        json!([{"Partial": true, "Bytes": 5}])
    );
}

#[test]
fn corrupt_compressed_data_is_reported() {
    for codec in [
        Compression::Gzip,
        Compression::Snappy,
        Compression::Lz4,
        Compression::Zstd,
    ] {
        let spec = BatchSpec {
            compression: codec,
            records: sample_records(),
            ..Default::default()
        };
        let mut f = spec.encode();
        // Garble the middle of the compressed data.
        let mid = 61 + (f.len() - 61) / 2;
        for b in &mut f[mid..] {
            *b ^= 0x5a;
        }
        let v = json::value(Some(&f), &opts());
        assert_eq!(v[0]["CrcValid"], false);
        assert!(v[0]["Error"].is_string(), "{codec:?}: {v}");
        // Unknown codec ids.
        let spec = BatchSpec {
            compression: Compression::Unknown(6),
            records: sample_records(),
            ..Default::default()
        };
        let v = json::value(Some(&spec.encode()), &opts());
        assert_eq!(v[0]["Compression"], "unknown");
        assert_eq!(
            v[0]["Error"],
            "unknown decompression failed: unknown compression codec 6"
        );
    }
}

#[test]
fn transaction_markers() {
    for commit in [true, false] {
        let spec = BatchSpec {
            control: true,
            transactional: true,
            producer_id: 5,
            producer_epoch: 0,
            records: vec![RecordSpec::marker(commit, 17)],
            ..Default::default()
        };
        let v = json::value(Some(&spec.encode()), &opts());
        let r = &v[0]["Records"][0];
        assert_eq!(v[0]["IsControl"], true);
        assert_eq!(r["Key"], if commit { "00000001" } else { "00000000" });
        assert_eq!(r["Value"], "000000000011");
        assert_eq!(
            r["Control"],
            json!({"KeyVersion": 0, "Type": if commit {"COMMIT"} else {"ABORT"},
                   "TypeId": i32::from(commit), "MarkerVersion": 0, "CoordinatorEpoch": 17})
        );
    }
}

/// LeaderChangeMessage v0, hand-encoded: Version, LeaderId, Voters, GrantingVoters, tags.
fn leader_change(leader: i32, voters: &[i32], granting: &[i32]) -> Vec<u8> {
    let mut v = 0i16.to_be_bytes().to_vec();
    v.extend_from_slice(&leader.to_be_bytes());
    for set in [voters, granting] {
        v.push(set.len() as u8 + 1);
        for id in set {
            v.extend_from_slice(&id.to_be_bytes());
            v.push(0);
        }
    }
    v.push(0);
    v
}

#[test]
fn kraft_control_records_go_to_the_callers_schemas() {
    let mut key = 0i16.to_be_bytes().to_vec();
    key.extend_from_slice(&2i16.to_be_bytes());
    let value = leader_change(2, &[1, 2, 3], &[2, 3]);
    let spec = BatchSpec {
        control: true,
        records: vec![RecordSpec {
            key: Some(key),
            value: Some(value.clone()),
            ..Default::default()
        }],
        ..Default::default()
    };
    let f = spec.encode();
    let schemas =
        |name: &str, version: i16, data: &[u8]| -> Option<Result<serde_json::Value, String>> {
            assert_eq!((name, version), ("LeaderChangeMessage", 0));
            assert_eq!(data, value.as_slice());
            Some(Ok(json!({"LeaderId": 2})))
        };
    let o = Options {
        schemas: Some(&schemas),
        ..Options::default()
    };
    let v = json::value(Some(&f), &o);
    assert_eq!(
        v[0]["Records"][0]["Control"],
        json!({"KeyVersion": 0, "Type": "LEADER_CHANGE", "TypeId": 2, "Data": {"LeaderId": 2}})
    );
    // Without schemas the record is still shown, type named, value in hex.
    let v = json::value(Some(&f), &opts());
    assert_eq!(
        v[0]["Records"][0]["Control"],
        json!({"KeyVersion": 0, "Type": "LEADER_CHANGE", "TypeId": 2})
    );
    // A control batch whose record has no key.
    let spec = BatchSpec {
        control: true,
        records: vec![RecordSpec::new(0, None, Some(b"x"))],
        ..Default::default()
    };
    let v = json::value(Some(&spec.encode()), &opts());
    assert_eq!(
        v[0]["Records"][0]["Control"]["Error"],
        "control record without a key"
    );
}

#[test]
fn legacy_message_sets() {
    for magic in [0i8, 1] {
        let msgs = [
            MessageSpec::new(magic, 0, Some(b"k"), Some(b"v")),
            MessageSpec::new(magic, 1, None, Some(b"no key")),
            MessageSpec::new(magic, 2, Some(b"t"), None),
        ];
        let mut f = Vec::new();
        for m in &msgs {
            m.encode(&mut f);
        }
        let v = json::value(Some(&f), &opts());
        assert_eq!(v.as_array().unwrap().len(), 3);
        assert_eq!(v[0]["Magic"], magic);
        assert_eq!(v[0]["CrcValid"], true);
        assert_eq!(v[0]["Key"], "6b");
        assert_eq!(v[1]["Key"], json!(null));
        assert_eq!(v[2]["Value"], json!(null));
        assert_eq!(v[2]["Offset"], 2);
        assert_eq!(v[0].get("Timestamp").is_some(), magic == 1);
        if magic == 1 {
            assert_eq!(v[0]["Timestamp"], 1_700_000_000_000i64);
        }
        let mut out = Vec::new();
        json::write(&mut out, Some(&f), &opts());
        let s = String::from_utf8(out).unwrap();
        let first = &s[..s.find('}').unwrap()];
        let mut want = vec![
            "Offset",
            "MessageSize",
            "\"Crc\"",
            "CrcValid",
            "Magic",
            "Attributes",
            "Compression",
        ];
        if magic == 1 {
            want.push("Timestamp");
        }
        want.extend(["Key", "Value"]);
        let at: Vec<usize> = want.iter().map(|k| first.find(k).unwrap()).collect();
        assert!(at.windows(2).all(|w| w[0] < w[1]), "{first}");
        assert_eq!(v[0].as_object().unwrap().len(), want.len());
        // Wrappers in every codec, inner offsets as written (relative for magic 1).
        for codec in CODECS.into_iter().skip(1) {
            for snappy in [SnappyForm::Xerial, SnappyForm::Raw] {
                let inner: Vec<_> = (0..3)
                    .map(|i| {
                        MessageSpec::new(
                            magic,
                            if magic == 1 { i } else { 100 + i },
                            Some(b"k"),
                            Some(format!("v{i}").as_bytes()),
                        )
                    })
                    .collect();
                let mut f = Vec::new();
                MessageSpec::wrapper(magic, codec, snappy, 102, &inner).encode(&mut f);
                let v = json::value(Some(&f), &opts());
                let w = &v[0];
                assert_eq!(w["Compression"], codec.name(), "{magic} {codec:?}");
                assert_eq!(w["Offset"], 102);
                assert!(w.get("Error").is_none(), "{w}");
                let m = w["Messages"].as_array().unwrap();
                assert_eq!(m.len(), 3);
                assert_eq!(m[2]["Value"], "7632");
                assert_eq!(m[2]["Offset"], if magic == 1 { 2 } else { 102 });
                assert_eq!(m[1]["CrcValid"], true);
                assert_eq!(super::record_count(&one(&f, &opts())), Some(3));
            }
        }
    }
    // A bad legacy CRC is a warning.
    let mut m = MessageSpec::new(1, 0, None, Some(b"v"));
    m.bad_crc = true;
    let mut f = Vec::new();
    m.encode(&mut f);
    assert_eq!(json::value(Some(&f), &opts())[0]["CrcValid"], false);
    // A wrapper inside a wrapper is not opened.
    let inner = MessageSpec::wrapper(
        1,
        Compression::Gzip,
        SnappyForm::Xerial,
        0,
        &[MessageSpec::new(1, 0, None, Some(b"v"))],
    );
    let mut f = Vec::new();
    MessageSpec::wrapper(1, Compression::Gzip, SnappyForm::Xerial, 0, &[inner]).encode(&mut f);
    let v = json::value(Some(&f), &opts());
    assert!(
        v[0]["Messages"][0]["Error"]
            .as_str()
            .unwrap()
            .contains("inside a compressed")
    );
}

#[test]
fn max_records_limits_what_is_shown_not_the_counts() {
    for codec in CODECS {
        let spec = BatchSpec {
            compression: codec,
            records: sample_records(),
            ..Default::default()
        };
        let f = spec.encode();
        for (max, shown) in [(0usize, 0usize), (1, 1), (2, 2), (3, 3), (9, 3)] {
            let o = Options {
                max_records: max,
                ..Options::default()
            };
            let v = json::value(Some(&f), &o);
            assert_eq!(v[0]["RecordCount"], 3);
            assert_eq!(v[0]["Records"].as_array().unwrap().len(), shown);
            if shown < 3 {
                assert_eq!(v[0]["RecordsOmitted"], 3 - shown);
            } else {
                assert!(v[0].get("RecordsOmitted").is_none());
            }
            // With nothing to show, nothing is decompressed.
            let b = batch_of(one(&f, &o));
            assert_eq!(b.payload.is_some(), max > 0 && codec != Compression::None);
        }
    }
}

/// `n` records, each a 1 MiB value of zeros, compressed one frame (or member) per record.
fn bomb(codec: Compression, n: usize) -> Vec<u8> {
    let rec = {
        let mut r = Vec::new();
        RecordSpec::new(0, None, Some(&vec![0u8; 1 << 20])).encode(&mut r);
        r
    };
    let one = codec::compress(codec, &rec, 2, SnappyForm::Xerial);
    let data = if codec == Compression::Lz4 {
        // Kafka reads one LZ4 frame: repeat the blocks inside it instead.
        let (head, rest) = one.split_at(7);
        let blocks = &rest[..rest.len() - 4];
        [head.to_vec(), blocks.repeat(n), vec![0; 4]].concat()
    } else {
        // gzip members and zstd frames may follow one another.
        one.repeat(n)
    };
    BatchSpec {
        compression: codec,
        record_count: Some(n as i32),
        ..Default::default()
    }
    .encode_with(&data)
}

#[test]
fn decompression_bombs_stop_at_the_cap() {
    // 10 240 records of 1 MiB: 10 GiB if decompressed whole.
    for codec in [Compression::Gzip, Compression::Zstd, Compression::Lz4] {
        let f = bomb(codec, 10 * 1024);
        assert!(f.len() < 64 << 20, "{codec:?}: {} B", f.len());
        let cap = if codec == Compression::Zstd {
            DEFAULT_MAX_DECOMPRESSED
        } else {
            8 << 20
        };
        let o = Options {
            max_decompressed: cap,
            ..Options::default()
        };
        let b = batch_of(one(&f, &o));
        assert_eq!(b.header.record_count, 10 * 1024);
        let e = b.error.clone().unwrap();
        assert!(
            e.contains(&format!("exceeds the cap of {cap} bytes")),
            "{codec:?}: {e}"
        );
        // The records that fit under the cap are shown; the payload kept is no bigger.
        assert!(b.records.len() < cap >> 20 && !b.records.is_empty());
        assert!(b.payload.as_ref().unwrap().len() <= cap);
        // The JSON keeps the header fields and says why it stopped.
        let v = json::value(Some(&f), &o);
        assert_eq!(v[0]["RecordCount"], 10 * 1024);
        assert_eq!(v[0]["Bytes"], f.len());
        // Summary reads the header only; max_records 1 reads one record only.
        assert_eq!(summaries(&f).next().unwrap().records, Some(10 * 1024));
        let o1 = Options {
            max_records: 1,
            ..o
        };
        let b = batch_of(one(&f, &o1));
        assert_eq!((b.records.len(), b.error), (1, None));
    }
    // A raw snappy block claiming 2 GiB, and a xerial block doing the same.
    let raw = [0xffu8, 0xff, 0xff, 0xff, 0x07, 0x00];
    let mut xerial = codec::XERIAL_MAGIC.to_vec();
    xerial.extend_from_slice(&[0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 6]);
    xerial.extend_from_slice(&raw);
    for data in [raw.to_vec(), xerial] {
        let f = BatchSpec {
            compression: Compression::Snappy,
            record_count: Some(1),
            ..Default::default()
        }
        .encode_with(&data);
        let b = batch_of(one(&f, &opts()));
        assert!(b.error.unwrap().contains("exceeds the cap"));
    }
}

#[test]
fn tiny_records_cannot_expand_into_unbounded_memory() {
    // 200 000 minimal records (9 bytes each) compress to almost nothing.
    let records: Vec<_> = (0..200_000)
        .map(|_| RecordSpec::new(0, None, None))
        .collect();
    let spec = BatchSpec {
        compression: Compression::Zstd,
        records,
        ..Default::default()
    };
    let f = spec.encode();
    assert!(f.len() < 8 << 10, "{}", f.len());
    // With a 1 MiB cap, at most 4096 records are held, and the batch says why.
    let o = Options {
        max_decompressed: 1 << 20,
        ..Options::default()
    };
    let b = batch_of(one(&f, &o));
    assert_eq!(b.records.len(), 4096);
    assert!(b.limited);
    assert!(
        b.error
            .unwrap()
            .contains("more than 4096 records in one batch")
    );
    // With the default cap they all fit (262 144 may be held).
    let b = batch_of(one(&f, &opts()));
    assert_eq!((b.records.len(), b.error), (200_000, None));
    // The tree shows 10 000 of them, and counts the rest.
    let t = decode_tree(&f, &opts());
    let nodes = t.nodes(&f, 0, 0, 0);
    assert_eq!(
        nodes.iter().filter(|n| n.node.name() == "Record").count(),
        tree::TREE_MAX_RECORDS
    );
    let om = nodes
        .iter()
        .find(|n| n.node.name() == "RecordsOmitted")
        .unwrap();
    assert_eq!(om.node.value, crate::codec::Value::Int(190_000));
}

#[test]
fn the_tree_caps_the_whole_field() {
    // Three batches of 3 MiB each: each fits a 4 MiB cap, all three do not.
    let one = bomb(Compression::Zstd, 3);
    let f = [one.clone(), one.clone(), one].concat();
    let o = Options {
        max_decompressed: 4 << 20,
        ..Options::default()
    };
    // JSON drops each payload in turn, so every batch decodes whole.
    let v = json::value(Some(&f), &o);
    assert!(
        v.as_array()
            .unwrap()
            .iter()
            .all(|b| b.get("Error").is_none())
    );
    let t = decode_tree(&f, &o);
    let kept: usize = t
        .entries
        .iter()
        .map(|e| match e {
            Entry::Batch(b) => b.payload.as_ref().map_or(0, Vec::len),
            _ => 0,
        })
        .sum();
    assert!(kept <= 4 << 20, "{kept}");
    match &t.entries[1] {
        Entry::Batch(b) => assert!(
            b.error.as_ref().unwrap().contains("for the whole field"),
            "{:?}",
            b.error
        ),
        e => panic!("{e:?}"),
    }
}

#[test]
fn legacy_wrapper_bomb_stops_at_the_cap() {
    let inner: Vec<_> = (0..64)
        .map(|i| MessageSpec::new(1, i, None, Some(&[0u8; 1 << 20])))
        .collect();
    let mut f = Vec::new();
    MessageSpec::wrapper(1, Compression::Gzip, SnappyForm::Xerial, 63, &inner).encode(&mut f);
    let o = Options {
        max_decompressed: 4 << 20,
        ..Options::default()
    };
    let v = json::value(Some(&f), &o);
    assert!(
        v[0]["Error"].as_str().unwrap().contains("exceeds the cap"),
        "{}",
        v[0]["Error"]
    );
    // Three whole messages fit under 4 MiB; the fourth is where the cap struck.
    let m = v[0]["Messages"].as_array().unwrap();
    assert_eq!(m.len(), 4);
    assert!(m[3]["Error"].as_str().unwrap().contains("exceeds the cap"));
}

#[test]
fn tree_nodes_are_byte_exact() {
    let spec = BatchSpec {
        base_offset: 5,
        records: sample_records(),
        ..Default::default()
    };
    let f = spec.encode();
    let base = 100;
    let t = decode_tree(&f, &opts());
    let nodes = t.nodes(&f, base, 3, 50);
    let root = &nodes[0].node;
    assert_eq!(
        (root.name(), root.index, root.offset, root.len as usize),
        ("RecordBatch", Some(0), base, f.len())
    );
    assert_eq!(root.depth, 3);
    assert_eq!(root.next as usize, 50 + nodes.len());
    // Every leaf's range holds exactly what its value says.
    for n in nodes.iter().map(|n| &n.node) {
        let bytes = &f[(n.offset - base) as usize..(n.offset - base + n.len) as usize];
        match n.value {
            crate::codec::Value::Bytes(Some(b)) => assert_eq!(b, bytes, "{}", n.name()),
            crate::codec::Value::Str(Some(s)) if n.name() == "Key" => assert_eq!(s.as_bytes(), bytes),
            _ => {}
        }
        assert!(n.next as usize > nodes.iter().position(|m| &m.node == n).unwrap() + 50);
    }
    let find = |name: &str, nth: usize| {
        nodes
            .iter()
            .map(|n| &n.node)
            .filter(|n| n.name() == name)
            .nth(nth)
            .unwrap()
            .clone()
    };
    let bo = find("BaseOffset", 0);
    assert_eq!(
        (bo.offset, bo.len, bo.value),
        (base, 8, crate::codec::Value::Int(5))
    );
    let rc = find("RecordCount", 0);
    assert_eq!((rc.offset, rc.len), (base + 57, 4));
    let rec2 = find("Record", 2);
    assert_eq!(rec2.offset + rec2.len, base + f.len() as u32);
    // Compressed: records are in the decompressed payload, and marked.
    let spec = BatchSpec {
        compression: Compression::Zstd,
        records: sample_records(),
        ..Default::default()
    };
    let f = spec.encode();
    let t = decode_tree(&f, &opts());
    let nodes = t.nodes(&f, base, 0, 0);
    let payload = match &t.entries[0] {
        Entry::Batch(b) => b.payload.clone().unwrap(),
        _ => unreachable!(),
    };
    let recs: Vec<_> = nodes.iter().filter(|n| n.node.name() == "Record").collect();
    assert_eq!(recs.len(), 3);
    assert!(
        recs.iter()
            .all(|r| r.decompressed && r.node.about().contains("decompressed"))
    );
    assert_eq!(recs[0].node.offset, 0);
    assert_eq!(
        (recs[2].node.offset + recs[2].node.len) as usize,
        payload.len()
    );
    let comp = nodes
        .iter()
        .find(|n| n.node.name() == "CompressedRecords")
        .unwrap();
    assert!(!comp.decompressed);
    assert_eq!(comp.node.offset, base + 61);
    assert_eq!(comp.node.len as usize, f.len() - 61);
    for n in nodes.iter().filter(|n| n.decompressed) {
        if let crate::codec::Value::Bytes(Some(b)) = n.node.value {
            assert_eq!(
                b,
                &payload[n.node.offset as usize..(n.node.offset + n.node.len) as usize]
            );
        }
    }
    // The tree's structure: `next` skips whole subtrees.
    let tree = crate::codec::Tree {
        nodes: nodes.iter().map(|n| n.node.clone()).collect(),
    };
    let top: Vec<_> = tree.children(0).map(|i| tree.nodes[i].name()).collect();
    assert_eq!(
        &top[..4],
        ["BaseOffset", "BatchLength", "PartitionLeaderEpoch", "Magic"]
    );
    assert_eq!(top.last(), Some(&"Records"));
}

#[test]
fn summary_reads_headers_only() {
    let a = BatchSpec {
        records: sample_records(),
        ..Default::default()
    }
    .encode();
    let b = BatchSpec {
        compression: Compression::Lz4,
        records: sample_records(),
        ..Default::default()
    }
    .encode();
    let mut m = Vec::new();
    MessageSpec::wrapper(
        1,
        Compression::Snappy,
        SnappyForm::Xerial,
        0,
        &[MessageSpec::new(1, 0, None, None)],
    )
    .encode(&mut m);
    let f = [a.clone(), b, m, vec![0, 0, 0]].concat();
    let s: Vec<_> = summaries(&f).collect();
    assert_eq!(
        s.iter().map(|s| s.kind).collect::<Vec<_>>(),
        [Kind::Batch, Kind::Batch, Kind::Message, Kind::Partial]
    );
    assert_eq!(s[1].compression, Compression::Lz4);
    assert_eq!(s[1].at, a.len());
    let t = Totals::of(&f);
    assert_eq!((t.batches, t.records, t.wrappers, t.partial), (3, 6, 1, 1));
    assert_eq!(t.bytes as usize, f.len());
    assert_eq!(
        t.describe(),
        "6 records in 3 batches, ".to_string()
            + &f.len().to_string()
            + " B (+1 compressed message sets), none+snappy+lz4, partial batch at end"
    );
}

mod props {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]
        #[test]
        fn arbitrary_bytes_never_panic(data in proptest::collection::vec(any::<u8>(), 0..300)) {
            let o = Options { max_decompressed: 1 << 16, ..Options::default() };
            let _ = json::value(Some(&data), &o);
            let _ = decode_tree(&data, &o).nodes(&data, 0, 0, 0);
            let _ = Totals::of(&data);
        }

        #[test]
        fn mutated_batches_never_panic(
            codec in 0usize..5, at in any::<proptest::sample::Index>(), byte in any::<u8>(),
            magic in 0i8..3,
        ) {
            let f = if magic == 2 {
                BatchSpec { compression: CODECS[codec], control: codec == 1, records: sample_records(), ..Default::default() }.encode()
            } else {
                let inner = [MessageSpec::new(magic, 0, Some(b"k"), Some(b"v")), MessageSpec::new(magic, 1, None, None)];
                let mut f = Vec::new();
                MessageSpec::wrapper(magic, CODECS[codec], SnappyForm::Xerial, 1, &inner).encode(&mut f);
                f
            };
            let mut g = f.clone();
            let i = at.index(g.len());
            g[i] = byte;
            let o = Options { max_decompressed: 1 << 16, ..Options::default() };
            let _ = json::value(Some(&g), &o);
            let _ = decode_tree(&g, &o).nodes(&g, 0, 0, 0);
            let _ = json::value(Some(&g[..i]), &o);
        }
    }
}

#[test]
fn a_long_line_is_passed_on_as_it_is_written() {
    // Four records of 1 MiB: 8 MiB of hex, which the spill takes in pieces.
    let value = vec![7u8; 1 << 20];
    let spec = BatchSpec {
        compression: Compression::Zstd,
        records: (0..4).map(|i| RecordSpec::new(i, None, Some(&value))).collect(),
        ..Default::default()
    };
    let f = spec.encode();
    let mut whole = b"{\"x\":".to_vec();
    json::write(&mut whole, Some(&f), &opts());
    let sink = std::rc::Rc::new(std::cell::RefCell::new(Vec::<u8>::new()));
    let spill: json::Spill = sink.clone();
    json::set_spill(Some(spill));
    let mut out = b"{\"x\":".to_vec();
    json::write(&mut out, Some(&f), &opts());
    json::set_spill(None);
    // What is left is under two records' hex; the two parts make the same line.
    assert!(out.len() < 2 * json::SPILL_AT + (2 << 20), "{}", out.len());
    let mut joined = sink.borrow().clone();
    assert!(joined.len() > 4 << 20);
    joined.extend_from_slice(&out);
    assert_eq!(joined, whole);
    // Without a spill set, nothing is passed on.
    let mut again = Vec::new();
    json::write(&mut again, Some(&f), &opts());
    assert_eq!(sink.borrow().len() + out.len(), whole.len());
}

/// The JSON of decoded entries, each written whole (what streaming must equal).
fn whole_json(field: &[u8], o: &Options<'_>) -> Vec<u8> {
    let mut out = b"[".to_vec();
    for (i, e) in batches(field, o).enumerate() {
        if i > 0 {
            out.push(b',');
        }
        json::entry(&mut out, field, &e);
    }
    out.push(b']');
    out
}

#[test]
fn streamed_json_equals_the_whole_batches() {
    let big = vec![3u8; 300 << 10];
    let mut fields = Vec::new();
    for codec in [
        Compression::None,
        Compression::Gzip,
        Compression::Snappy,
        Compression::Lz4,
        Compression::Zstd,
    ] {
        let spec = BatchSpec {
            compression: codec,
            records: sample_records(),
            ..Default::default()
        };
        // Records over 64 KiB (so bytes are dropped on the way), then a short batch.
        let large = BatchSpec {
            compression: codec,
            records: (0..5).map(|i| RecordSpec::new(i, None, Some(&big))).collect(),
            ..Default::default()
        };
        fields.push([spec.encode(), large.encode(), spec.encode()].concat());
        // Cut inside the large batch's records, and one record count too many.
        let mut bad = large.encode();
        bad.truncate(bad.len() - 100);
        fields.push([spec.encode(), bad].concat());
        let over = BatchSpec {
            record_count: Some(6),
            ..large.clone()
        };
        fields.push(over.encode());
    }
    fields.push(bomb(Compression::Zstd, 40));
    for (k, f) in fields.iter().enumerate() {
        for o in [
            opts(),
            Options {
                max_records: 2,
                ..opts()
            },
            Options {
                max_decompressed: 1 << 20,
                ..opts()
            },
            Options {
                max_records: 0,
                ..opts()
            },
        ] {
            let mut streamed = Vec::new();
            json::write(&mut streamed, Some(f), &o);
            let whole = whole_json(f, &o);
            assert!(
                streamed == whole,
                "field {k}, max_records {}, cap {}:\n{}\n{}",
                o.max_records,
                o.max_decompressed,
                String::from_utf8_lossy(&streamed[..streamed.len().min(600)]),
                String::from_utf8_lossy(&whole[..whole.len().min(600)])
            );
        }
    }
}

#[test]
fn hex_writes_every_byte_value_as_two_lowercase_digits() {
    let all: Vec<u8> = (0..=255).collect();
    let mut out = b"x".to_vec();
    super::json::hex(&mut out, &all);
    let want: String = std::iter::once("x".to_string())
        .chain(all.iter().map(|b| format!("{b:02x}")))
        .collect();
    assert_eq!(String::from_utf8(out).unwrap(), want);
}
