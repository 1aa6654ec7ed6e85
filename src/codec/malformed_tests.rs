//! Bad input: every failure is a clean error naming the field path and offset.

use super::*;
use serde_json::json;

/// A request frame from raw header+body bytes (size prefix added).
fn framed(rest: &[u8]) -> Vec<u8> {
    let mut f = (rest.len() as i32).to_be_bytes().to_vec();
    f.extend_from_slice(rest);
    f
}

/// Request header v2 for (key, version), correlation 7, client id "c".
fn header_v2(key: i16, version: i16) -> Vec<u8> {
    let mut h = Vec::new();
    h.extend_from_slice(&key.to_be_bytes());
    h.extend_from_slice(&version.to_be_bytes());
    h.extend_from_slice(&7i32.to_be_bytes());
    h.extend_from_slice(&[0, 1, b'c', 0]);
    h
}

fn error_of(frame: &[u8]) -> DecodeError {
    decode_request(frame).error.expect("an error")
}

#[test]
fn huge_array_count_costs_nothing() {
    // FindCoordinator v6: KeyType, then CoordinatorKeys claiming 2^31 elements in 20 bytes.
    let mut b = header_v2(10, 6);
    b.push(0);
    b.extend_from_slice(&[0x81, 0x80, 0x80, 0x80, 0x08]);
    b.extend_from_slice(&[0u8; 20]);
    let e = error_of(&framed(&b));
    assert!(
        matches!(
            e.kind,
            ErrorKind::ImplausibleCount {
                count: 0x8000_0000,
                ..
            }
        ),
        "{e}"
    );
    assert_eq!(e.path, "CoordinatorKeys");
    assert_eq!(e.offset, 0x11);
}

#[test]
fn varint_longer_than_five_bytes() {
    let mut b = header_v2(10, 6);
    b.push(0);
    b.extend_from_slice(&[0xff, 0xff, 0xff, 0xff, 0xff, 0x01]);
    let e = error_of(&framed(&b));
    assert_eq!(e.kind, ErrorKind::VarintTooLong);
    assert_eq!((e.path.as_str(), e.offset), ("CoordinatorKeys", 0x11));
}

#[test]
fn compact_length_overflowing_u32() {
    let mut b = header_v2(10, 6);
    b.push(0);
    b.extend_from_slice(&[0xff, 0xff, 0xff, 0xff, 0x7f]);
    let e = error_of(&framed(&b));
    assert!(matches!(e.kind, ErrorKind::LengthOverflow(_)), "{e}");
}

#[test]
fn invalid_utf8_names_the_field() {
    // Vote v2: ClusterId compact, 2 bytes of invalid UTF-8.
    let mut b = header_v2(52, 2);
    b.extend_from_slice(&[3, 0xc3, 0x28]);
    let e = error_of(&framed(&b));
    assert_eq!(e.kind, ErrorKind::InvalidUtf8);
    assert_eq!((e.path.as_str(), e.offset), ("ClusterId", 0x10));
    assert_eq!(
        e.to_string(),
        "string is not valid UTF-8 at ClusterId (offset 0x0010)"
    );
}

#[test]
fn negative_and_null_lengths() {
    // FindCoordinator v0: header v1 (no tagged fields), then Key with int16 length.
    let mut h = header_v2(10, 0);
    h.pop();
    let mut b = h.clone();
    b.extend_from_slice(&(-5i16).to_be_bytes());
    let e = error_of(&framed(&b));
    assert_eq!(e.kind, ErrorKind::NegativeLength(-5));
    assert_eq!((e.path.as_str(), e.offset), ("Key", 0x0f));
    let mut b = h;
    b.extend_from_slice(&(-1i16).to_be_bytes());
    assert_eq!(error_of(&framed(&b)).kind, ErrorKind::UnexpectedNull);
}

#[test]
fn nested_path_in_errors() {
    // Vote v0 request cut inside the second topic's name.
    let body = json!({"ClusterId": "c", "Topics": [
        {"TopicName": "t", "Partitions": []}, {"TopicName": "abcdefgh", "Partitions": []}]});
    let f = encode_request(52, 0, 1, None, &body).unwrap();
    let e = error_of(&f[..f.len() - 6]);
    assert_eq!(e.path, "Topics[1].TopicName");
    assert!(
        matches!(e.kind, ErrorKind::Truncated { need: 8, have: 5 }),
        "{e}"
    );
    // A count that cannot fit in what is left fails at the array, before any element.
    let body = json!({"ClusterId": "c", "Topics": [{"TopicName": "t", "Partitions": [
        {"PartitionIndex": 0, "ReplicaEpoch": 1, "ReplicaId": 2, "LastOffsetEpoch": 3, "LastOffset": 4},
        {"PartitionIndex": 1, "ReplicaEpoch": 1, "ReplicaId": 2, "LastOffsetEpoch": 3, "LastOffset": 4}]}]});
    let f = encode_request(52, 0, 1, None, &body).unwrap();
    let e = error_of(&f[..f.len() - 6]);
    assert_eq!(e.path, "Topics[0].Partitions");
    assert!(
        matches!(e.kind, ErrorKind::ImplausibleCount { count: 2, .. }),
        "{e}"
    );
}

#[test]
fn element_paths_name_the_element() {
    // An element of a list of strings, and a field inside an element of a list of structs.
    let f = encode_request(10, 4, 1, None, &json!({"KeyType": 0, "CoordinatorKeys": ["a", "b"]}));
    let mut f = f.unwrap();
    let at = f.iter().rposition(|&b| b == b'b').unwrap();
    f[at] = 0xff;
    let e = error_of(&f);
    assert_eq!((e.path.as_str(), &e.kind), ("CoordinatorKeys[1]", &ErrorKind::InvalidUtf8));
    let c = |host: &str| json!({"Key": "k", "NodeId": 1, "Host": host, "Port": 9092,
        "ErrorCode": 0, "ErrorMessage": null});
    let body = json!({"ThrottleTimeMs": 0, "Coordinators": [c("h1"), c("zz")]});
    let mut f = encode_response(10, 4, 1, &body).unwrap();
    let at = f.iter().rposition(|&b| b == b'z').unwrap();
    f[at] = 0xff;
    let m = decode_response(&f, Some((10, 4)));
    let e = m.error.unwrap();
    assert_eq!((e.path.as_str(), &e.kind), ("Coordinators[1].Host", &ErrorKind::InvalidUtf8));
}

#[test]
fn trailing_bytes_are_a_warning() {
    let mut f = encode_request(10, 6, 0, Some(""), &json!({"CoordinatorKeys": [""]})).unwrap();
    f.extend_from_slice(&[0xaa, 0xbb]);
    let size = (f.len() - 4) as i32;
    f[..4].copy_from_slice(&size.to_be_bytes());
    let m = decode_request(&f);
    // Brokers ignore bytes after a complete body (contract): the body stays, a warning says so.
    assert_eq!(m.error, None);
    assert!(m.body.is_some());
    assert_eq!(m.trailing, 2);
    assert_eq!(m.warnings, ["2 bytes after the body"]);
    let last = m.tree.nodes.last().unwrap();
    assert_eq!((last.role, last.offset, last.len), (Role::Raw, 0x13, 2));
    // A response with bytes left over is never an inference candidate.
    let mut r = encode_response(
        10,
        0,
        1,
        &json!({"ErrorCode": 0, "NodeId": 2, "Host": "b2", "Port": 9092}),
    )
    .unwrap();
    assert_eq!(crate::codec::infer_response(&r), Some((10, 0)));
    r.push(0);
    let size = (r.len() - 4) as i32;
    r[..4].copy_from_slice(&size.to_be_bytes());
    assert_eq!(crate::codec::infer_response(&r), None);
}

#[test]
fn size_prefix_lies() {
    let f = encode_request(10, 6, 0, Some(""), &json!({"CoordinatorKeys": ["g"]})).unwrap();
    // Declared 2 GB, 16 bytes present: a truncation error, not an allocation.
    let mut big = f.clone();
    big[..4].copy_from_slice(&i32::MAX.to_be_bytes());
    let e = error_of(&big);
    assert_eq!(
        e.kind,
        ErrorKind::Truncated {
            need: i32::MAX as u64,
            have: 16
        }
    );
    assert_eq!(e.offset, 4);
    let mut neg = f;
    neg[..4].copy_from_slice(&(-1i32).to_be_bytes());
    assert!(matches!(
        error_of(&neg).kind,
        ErrorKind::SizeMismatch { declared: -1, .. }
    ));
    assert!(matches!(
        error_of(&[0, 0]).kind,
        ErrorKind::Truncated { need: 4, have: 2 }
    ));
}

#[test]
fn version_outside_schema_is_raw_with_a_warning() {
    let mut b = header_v2(52, 3);
    b.extend_from_slice(&[1, 2, 3]);
    let f = framed(&b);
    let m = decode_request(&f);
    assert_eq!(m.error, None);
    assert_eq!(m.body, None);
    assert_eq!(m.warnings, ["Vote v3 is outside the known range 0–2"]);
    assert_eq!((m.correlation_id, m.client_id), (Some(7), Some("c")));
    let raw = m.tree.nodes.last().unwrap();
    assert_eq!((raw.role, raw.offset, raw.len), (Role::Raw, 0x10, 3));
    // The encoder refuses it too: it never writes a version it does not know.
    assert!(encode_request(52, 3, 0, None, &json!({})).is_err());
}

#[test]
fn api_without_schema_decodes_its_header() {
    // ApiVersions v3 is flexible: header v2 with a tagged-field byte.
    let mut b = header_v2(18, 3);
    b.extend_from_slice(&[5, 5]);
    let f = framed(&b);
    let m = decode_request(&f);
    assert_eq!((m.error.clone(), m.body), (None, None));
    assert_eq!(m.api_name(), Some("ApiVersions"));
    assert!(m.warnings.is_empty());
    let raw = m.tree.nodes.last().unwrap();
    assert_eq!((raw.offset, raw.len), (0x10, 2));
}

#[test]
fn response_without_request_reads_only_the_correlation_id() {
    let f = encode_response(10, 6, 42, &json!({"Coordinators": []})).unwrap();
    let m = decode_response(&f, None);
    assert_eq!(
        (m.correlation_id, m.body, m.error.clone()),
        (Some(42), None, None)
    );
    let raw = m.tree.nodes.last().unwrap();
    assert_eq!((raw.role, raw.offset), (Role::Raw, 8));
}

#[test]
fn tagged_fields_known_and_unknown() {
    let body = json!({"ErrorCode": 0, "Topics": [],
        "NodeEndpoints": [{"NodeId": 1, "Host": "h", "Port": 9093}],
        "_unknown_tagged_fields": [{"tag": 7, "data": "beef"}]});
    let f = encode_response(52, 1, 3, &body).unwrap();
    let m = decode_response(&f, Some((52, 1)));
    assert_eq!(m.error, None);
    let j = crate::view::json::body_value(&m.tree, m.body.unwrap());
    assert_eq!(j, body);
    let node = m.tree.field(m.body.unwrap(), "NodeEndpoints").unwrap();
    assert_eq!(m.tree.nodes[node].value, Value::Array(Some(1)));
    // At v0 the field is not tagged yet and does not exist: refused, since it is not ignorable.
    assert!(encode_response(52, 0, 3, &body).is_err());
}

#[test]
fn a_projected_header_gives_the_ids_and_errors_of_a_full_one() {
    // A Vote v2 request (flexible header) and a FindCoordinator v0 one (client id
    // "zé"), whole, cut at every length, and with the client id's bytes broken.
    let mut vote = header_v2(52, 2);
    vote.extend_from_slice(&[3, b'c', b'1', 0, 0, 0, 0, 0]);
    let mut find = Vec::new();
    for v in [10i16, 0] {
        find.extend_from_slice(&v.to_be_bytes());
    }
    find.extend_from_slice(&(-9i32).to_be_bytes());
    find.extend_from_slice(&[0, 3, b'z', 0xc3, 0xa9, 0, 1, b'g']);
    let mut frames = Vec::new();
    for body in [vote, find] {
        for n in 0..=body.len() {
            frames.push(framed(body.get(..n).unwrap()));
        }
        let mut broken = body.clone();
        broken[11] = 0xff;
        frames.push(framed(&broken));
    }
    // As responses: a flexible header's tagged section with a tag, written with a
    // longer count than needed, and claiming more bytes than follow; with a
    // body after it.
    let mut more = Vec::new();
    for tags in [&[1, 5, 2, b'x', b'y'][..], &[0x80, 0], &[1, 5, 9, b'x'], &[0x80]] {
        let mut r = 7i32.to_be_bytes().to_vec();
        r.extend_from_slice(tags);
        r.extend_from_slice(&[0, 0, 0, 0, 0, 0]);
        more.push(framed(&r));
    }
    fn ids(m: &Message<'_>) -> (Option<i32>, Option<String>, Option<DecodeError>, bool) {
        let client = m.client_id.map(str::to_string);
        (m.correlation_id, client, m.error.clone(), m.body.is_some())
    }
    for f in frames.iter().chain(&more) {
        let full = decode_request(f);
        let lean = decode_request_with(f, &Need::header());
        assert_eq!(ids(&lean), ids(&full), "{f:02x?}");
        // A response: its header is the correlation id, then tags when flexible.
        for api in [None, Some((52, 2)), Some((10, 0))] {
            let full = decode_response(f, api);
            let lean = decode_response_with(f, api, &Need::header());
            assert_eq!(ids(&lean), ids(&full), "{api:?} {f:02x?}");
        }
    }
    let whole = decode_request_with(frames.last().unwrap(), &Need::header());
    assert_eq!(whole.error.map(|e| e.kind), Some(ErrorKind::InvalidUtf8));
    let find = decode_request_with(&frames[frames.len() - 2], &Need::header());
    assert_eq!((find.correlation_id, find.client_id), (Some(-9), Some("zé")));
}
