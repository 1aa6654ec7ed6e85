#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

use super::*;
use crate::codec::{encode_request, encode_response};
use serde_json::json;

/// The framer of connection `c` in direction A to B.
fn framer0(s: &Sessions, c: ConnId) -> &framer::Framer {
    match &s.conns[&c].0.stage {
        Stage::Kafka { framers, .. } => &framers[0],
        _ => panic!("not framing"),
    }
}

fn a() -> SocketAddr {
    "10.0.0.5:50000".parse().unwrap()
}
fn b() -> SocketAddr {
    "10.0.0.1:19392".parse().unwrap()
}

/// Runs events through a session on an odd port and returns (kind, src, corr) per frame.
fn run(syn: bool, events: &[(Dir, Vec<u8>)]) -> (Vec<(Kind, SocketAddr, Option<i32>)>, KafkaStats) {
    let mut s = Sessions::new(KafkaConfig::default());
    let mut got = Vec::new();
    let mut out = |f: &KafkaMessage<'_>| {
        let corr = f
            .data
            .get(4..8)
            .map(|c| i32::from_be_bytes(c.try_into().unwrap()));
        let corr = if f.kind == Kind::Request {
            f.data
                .get(8..12)
                .map(|c| i32::from_be_bytes(c.try_into().unwrap()))
        } else {
            corr
        };
        got.push((f.kind, f.src, corr));
    };
    let conn = ConnId(1);
    s.on_event(
        1,
        0,
        StreamEvent::Opened {
            conn,
            a: a(),
            b: b(),
            syn_seen: syn,
            packet: 1,
        },
        &mut out,
    );
    for (i, (dir, data)) in events.iter().enumerate() {
        let ev = StreamEvent::Data {
            conn,
            dir: *dir,
            data,
            stream_offset: 0,
            packet: 0,
            ts_ns: 0,
            file: 0,
        };
        s.on_event(i as u64 + 2, 0, ev, &mut out);
    }
    s.finish(99, 0, &mut out);
    (got, s.stats().clone())
}

/// ApiVersions v7 (newer than kwire's table knows) and its answer, which reads like Produce v17.
fn exchange() -> (Vec<u8>, Vec<u8>) {
    let mut req = vec![0, 0, 0, 0];
    req.extend_from_slice(&18i16.to_be_bytes());
    req.extend_from_slice(&7i16.to_be_bytes());
    req.extend_from_slice(&17i32.to_be_bytes());
    req.extend_from_slice(&[0, 3, b'c', b'l', b'i', 0, 0]);
    let n = (req.len() - 4) as i32;
    req[..4].copy_from_slice(&n.to_be_bytes());
    // Response header v0: corr 17 = 0x0000_0011, then error code 0 and an empty array.
    let mut resp = vec![0, 0, 0, 10];
    resp.extend_from_slice(&17i32.to_be_bytes());
    resp.extend_from_slice(&[0, 0, 1, 0, 0, 0, 0]);
    resp.truncate(14);
    (req, resp)
}

#[test]
fn a_large_frame_in_small_pieces_is_not_copied_with_each() {
    // Found by scripts/adversarial-rss.sh: every packet of a partial frame copied
    // the whole partial frame into a new buffer, so two 15 MiB requests took 35 s.
    // The buffer now grows in place: its capacity changes O(log n) times, not per packet.
    let (mut req, _) = exchange();
    req.resize(1 << 20, 0);
    let n = (req.len() - 4) as i32;
    req[..4].copy_from_slice(&n.to_be_bytes());
    let mut s = Sessions::new(KafkaConfig::default());
    let conn = ConnId(1);
    let opened = StreamEvent::Opened {
        conn,
        a: a(),
        b: b(),
        syn_seen: true,
        packet: 1,
    };
    let mut frames = Vec::new();
    let mut out = |f: &KafkaMessage<'_>| frames.push((f.data.len(), f.cut));
    s.on_event(1, 0, opened, &mut out);
    let mut capacities = Vec::new();
    // A small piece of the next request follows the large one.
    let mut pieces: Vec<&[u8]> = req.chunks(1024).collect();
    pieces.push(&req[..10]);
    for (i, data) in pieces.into_iter().enumerate() {
        let ev = StreamEvent::Data {
            conn,
            dir: Dir::AtoB,
            data,
            stream_offset: 0,
            packet: 0,
            ts_ns: 0,
            file: 0,
        };
        s.on_event(i as u64 + 2, 0, ev, &mut out);
        let cap = framer0(&s, conn).buf.capacity();
        if capacities.last() != Some(&cap) {
            capacities.push(cap);
        }
    }
    assert!(capacities.len() < 30, "{} reallocations", capacities.len());
    // What is left after the frame completes is held in a right-sized buffer.
    assert_eq!(framer0(&s, conn).buf.len(), 10);
    assert!(framer0(&s, conn).buf.capacity() < 4096);
    assert_eq!(frames, [(1 << 20, false)]);
}

#[test]
fn hunting_a_response_checks_correlation_ids_in_a_set() {
    // Found by scripts/adversarial-rss.sh (hunt-responses): each offset with a plausible
    // size scanned all pending requests, up to 4096 steps per byte (5 MB took 4.5 s, now
    // 0.06 s). The set must find the same boundary: a pending id, after sizes with others.
    let (req, resp) = exchange();
    let mut junk = (-1i32).to_be_bytes().to_vec();
    for _ in 0..16 {
        junk.extend_from_slice(&[0, 0x10, 0, 1]);
    }
    junk.extend_from_slice(&resp);
    let (got, stats) = run(true, &[(Dir::AtoB, req), (Dir::BtoA, junk)]);
    assert_eq!(
        got,
        [
            (Kind::Request, a(), Some(17)),
            (Kind::Response, b(), Some(17))
        ]
    );
    assert_eq!(
        (stats.desyncs, stats.resyncs, stats.skipped_bytes),
        (1, 1, 68)
    );
    assert_eq!(stats.paired, 1);
}

#[test]
fn bytes_held_while_hunting_are_skipped_at_close() {
    // Found by tests/adversarial.rs: the tail kept in case a frame starts in it
    // was dropped at close without being counted as skipped.
    let (mut req, _) = exchange();
    req.extend_from_slice(&[b'A'; 1000]);
    let (got, stats) = run(true, &[(Dir::AtoB, req)]);
    assert_eq!(got, [(Kind::Request, a(), Some(17))]);
    assert_eq!((stats.desyncs, stats.skipped_bytes), (1, 1000));
}

#[test]
fn handshake_names_the_client_even_for_newer_versions() {
    let (req, resp) = exchange();
    let (got, stats) = run(true, &[(Dir::AtoB, req), (Dir::BtoA, resp)]);
    assert_eq!(
        got,
        [
            (Kind::Request, a(), Some(17)),
            (Kind::Response, b(), Some(17))
        ]
    );
    assert_eq!((stats.connections, stats.paired), (1, 1));
}

#[test]
fn without_handshake_the_echoed_correlation_id_decides() {
    // Both directions start like requests (the answer reads as Produce v17);
    // only the client's request is echoed back.
    let (req, resp) = exchange();
    let (got, stats) = run(false, &[(Dir::AtoB, req), (Dir::BtoA, resp)]);
    assert_eq!(
        got,
        [
            (Kind::Request, a(), Some(17)),
            (Kind::Response, b(), Some(17))
        ]
    );
    assert_eq!(stats.paired, 1);
}

#[test]
fn mid_stream_answers_to_unseen_requests_do_not_block_detection() {
    // The first packet seen (so side A) is the server answering corr 16, asked before
    // the capture began; then B asks corr 17 and A answers it.
    let (req, resp) = exchange();
    let mut early = resp.clone();
    early[4..8].copy_from_slice(&16i32.to_be_bytes());
    let (got, stats) = run(
        false,
        &[(Dir::AtoB, early), (Dir::BtoA, req), (Dir::AtoB, resp)],
    );
    let (server, client) = (a(), b());
    assert_eq!(
        got,
        // In capture order, each at the packet that completed it.
        [
            (Kind::Response, server, Some(16)),
            (Kind::Request, client, Some(17)),
            (Kind::Response, server, Some(17))
        ]
    );
    assert_eq!((stats.paired, stats.unpaired_responses), (1, 1));
}

#[test]
fn one_sided_capture_is_recognised_at_close_only_when_strictly_plausible() {
    let body = json!({"Key": "g"});
    let req = encode_request(10, 0, 3, Some("c"), &body).unwrap();
    let (got, stats) = run(false, &[(Dir::AtoB, req)]);
    assert_eq!(got, [(Kind::Request, a(), Some(3))]);
    assert_eq!(stats.unanswered.get(&(10, 0)), Some(&1));
    // A lone response is not Kafka evidence: nothing is invented.
    let resp = encode_response(
        10,
        0,
        3,
        &json!({"ErrorCode": 0, "NodeId": 1, "Host": "h", "Port": 1}),
    )
    .unwrap();
    let (got, stats) = run(false, &[(Dir::BtoA, resp)]);
    assert!(got.is_empty());
    assert_eq!(stats.not_kafka, 1);
}

#[test]
fn partial_frames_are_capped_over_all_connections() {
    let cfg = KafkaConfig {
        max_buffered_total: 10_000,
        ..KafkaConfig::default()
    };
    let mut s = Sessions::new(cfg);
    let mut n = 0;
    let mut out = |_: &KafkaMessage<'_>| n += 1;
    // 100 connections, each holding the first 500 bytes of a 1000-byte request.
    let mut head = 996i32.to_be_bytes().to_vec();
    head.extend_from_slice(&[0, 10, 0, 0, 0, 0, 0, 1, 0, 1, b'c']);
    head.resize(500, 0);
    for i in 0..100u64 {
        let conn = ConnId(i);
        let server: SocketAddr = "10.0.0.1:9092".parse().unwrap();
        let client = SocketAddr::new(a().ip(), 40000 + i as u16);
        s.on_event(
            1,
            0,
            StreamEvent::Opened {
                conn,
                a: client,
                b: server,
                syn_seen: true,
                packet: 1,
            },
            &mut out,
        );
        let ev = StreamEvent::Data {
            conn,
            dir: Dir::AtoB,
            data: &head,
            stream_offset: 0,
            packet: 0,
            ts_ns: 0,
            file: 0,
        };
        s.on_event(2, 0, ev, &mut out);
        assert!(
            s.budget.held() <= 10_000,
            "held {} after {i}",
            s.budget.held()
        );
    }
    // Twenty fit under the cap; each later one gives up its 500 bytes.
    assert_eq!(s.stats().shed_bytes, 80 * 500);
    assert!(s.stats().peak_buffered <= 10_000);
    assert_eq!(n, 0);
}

#[test]
fn tls_on_a_kafka_port_is_named_not_desynced() {
    let mut s = Sessions::new(KafkaConfig::default());
    let mut n = 0;
    let mut out = |_: &KafkaMessage<'_>| n += 1;
    let conn = ConnId(1);
    let server: SocketAddr = "10.0.0.1:9093".parse().unwrap();
    s.on_event(
        1,
        0,
        StreamEvent::Opened {
            conn,
            a: a(),
            b: server,
            syn_seen: true,
            packet: 1,
        },
        &mut out,
    );
    let hello = [
        0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xfc, 0x03, 0x03,
    ];
    let ev = StreamEvent::Data {
        conn,
        dir: Dir::AtoB,
        data: &hello,
        stream_offset: 0,
        packet: 0,
        ts_ns: 0,
        file: 0,
    };
    s.on_event(2, 0, ev, &mut out);
    assert_eq!(n, 0);
    let st = s.stats();
    assert_eq!((st.tls, st.connections, st.desyncs), (1, 0, 0));
}

#[test]
fn text_protocols_are_not_kafka() {
    let (got, stats) = run(
        true,
        &[(Dir::AtoB, b"GET / HTTP/1.1\r\nHost: x\r\n\r\n".to_vec())],
    );
    assert!(got.is_empty());
    assert_eq!(stats.not_kafka, 1);
}

#[test]
fn a_hole_that_ends_a_frame_exactly_does_not_join_it_to_the_next() {
    // A hole covering exactly the rest of a frame left framing at the next
    // frame's start with the old head still buffered: the two were read as one.
    let key = "k".repeat(80);
    let r1 = encode_request(10, 0, 1, Some("c"), &json!({"Key": key})).unwrap();
    let r2 = encode_request(10, 0, 2, Some("c"), &json!({"Key": key})).unwrap();
    let mut s = Sessions::new(KafkaConfig::default());
    let mut got = Vec::new();
    let mut out = |f: &KafkaMessage<'_>| got.push((f.packet, f.data.to_vec(), f.cut));
    let conn = ConnId(1);
    let ev = StreamEvent::Opened {
        conn,
        a: a(),
        b: b(),
        syn_seen: true,
        packet: 1,
    };
    s.on_event(1, 0, ev, &mut out);
    let data = |data| StreamEvent::Data {
        conn,
        dir: Dir::AtoB,
        data,
        stream_offset: 0,
        packet: 0,
        ts_ns: 0,
        file: 0,
    };
    s.on_event(2, 0, data(&r1[..40]), &mut out);
    let gap = StreamEvent::Gap {
        conn,
        dir: Dir::AtoB,
        len: (r1.len() - 40) as u64,
    };
    s.on_event(3, 0, gap, &mut out);
    s.on_event(4, 0, data(&r2), &mut out);
    s.finish(9, 0, &mut out);
    assert_eq!(got, [(4, r1[..40].to_vec(), true), (4, r2, false)]);
    assert_eq!(s.stats().cut_frames, 1);
}

// Detection takes every legal request (issue 12).

/// A request frame with a raw header: `client` None is a null client id, and
/// `v0` leaves the client id out altogether (request header v0).
fn raw_request(
    key: i16,
    ver: i16,
    corr: i32,
    client: Option<&[u8]>,
    v0: bool,
    body: &[u8],
) -> Vec<u8> {
    let mut f = vec![0; 4];
    f.extend_from_slice(&key.to_be_bytes());
    f.extend_from_slice(&ver.to_be_bytes());
    f.extend_from_slice(&corr.to_be_bytes());
    if !v0 {
        match client {
            Some(c) => {
                f.extend_from_slice(&(c.len() as i16).to_be_bytes());
                f.extend_from_slice(c);
            }
            None => f.extend_from_slice(&(-1i16).to_be_bytes()),
        }
    }
    f.extend_from_slice(body);
    let n = (f.len() - 4) as i32;
    f[..4].copy_from_slice(&n.to_be_bytes());
    f
}

/// A response frame (header v0) with a raw body.
fn raw_response(corr: i32, body: &[u8]) -> Vec<u8> {
    let mut f = ((body.len() + 4) as i32).to_be_bytes().to_vec();
    f.extend_from_slice(&corr.to_be_bytes());
    f.extend_from_slice(body);
    f
}

/// FindCoordinator v0 asking for key "g", as `client`.
fn fc0(corr: i32, client: Option<&[u8]>) -> Vec<u8> {
    raw_request(10, 0, corr, client, false, &[0, 1, b'g'])
}

fn fc0_answer(corr: i32) -> Vec<u8> {
    raw_response(corr, &[0, 0, 0, 0, 0, 1, 0, 1, b'h', 0, 0, 0x23, 0x84])
}

#[test]
fn negative_and_wrapping_correlation_ids_are_requests() {
    for corr in [-5, i32::MIN, -1] {
        // Without the handshake: the echo decides.
        let (got, stats) = run(
            false,
            &[
                (Dir::AtoB, fc0(corr, Some(b"c"))),
                (Dir::BtoA, fc0_answer(corr)),
            ],
        );
        assert_eq!(
            got,
            [
                (Kind::Request, a(), Some(corr)),
                (Kind::Response, b(), Some(corr))
            ]
        );
        assert_eq!((stats.connections, stats.paired), (1, 1), "corr {corr}");
    }
    // A long-lived connection wraps from i32::MAX to i32::MIN.
    let events = [
        (Dir::AtoB, fc0(i32::MAX, Some(b"c"))),
        (Dir::BtoA, fc0_answer(i32::MAX)),
        (Dir::AtoB, fc0(i32::MIN, Some(b"c"))),
        (Dir::BtoA, fc0_answer(i32::MIN)),
    ];
    let (got, stats) = run(true, &events);
    assert_eq!(got.len(), 4);
    assert_eq!(stats.paired, 2);
}

#[test]
fn utf8_and_null_client_ids_are_requests() {
    let ids: [Option<&[u8]>; 4] = [
        Some("raft-client-ü-81".as_bytes()),
        Some("生产者-1".as_bytes()),
        Some(b""),
        None,
    ];
    for id in ids {
        for syn in [true, false] {
            let (got, stats) = run(syn, &[(Dir::AtoB, fc0(3, id)), (Dir::BtoA, fc0_answer(3))]);
            assert_eq!(got.len(), 2, "{id:?} syn={syn}");
            assert_eq!(stats.paired, 1);
        }
    }
}

#[test]
fn request_header_v0_is_a_request() {
    // ControlledShutdown v0 has no client id in its header: the body (broker id 7) follows.
    let req = raw_request(7, 0, 12, None, true, &7i32.to_be_bytes());
    for syn in [true, false] {
        let (got, stats) = run(
            syn,
            &[
                (Dir::AtoB, req.clone()),
                (Dir::BtoA, raw_response(12, &[0, 0, 0, 0, 0, 0])),
            ],
        );
        assert_eq!(got.len(), 2, "syn={syn}");
        assert_eq!(stats.paired, 1);
    }
}

#[test]
fn versions_up_to_the_slack_are_requests_and_past_it_are_not() {
    let newest = crate::proto::apis::api_info(10).unwrap().max_version;
    for (ver, kafka) in [
        (0, true),
        (newest, true),
        (newest + 8, true),
        (newest + 9, false),
        (-1, false),
    ] {
        let req = raw_request(10, ver, 3, Some(b"c"), false, &[0, 1, b'g']);
        let (got, stats) = run(true, &[(Dir::AtoB, req)]);
        assert_eq!(!got.is_empty(), kafka, "v{ver}");
        assert_eq!(stats.not_kafka, u64::from(!kafka), "v{ver}");
    }
}

#[test]
fn control_characters_and_broken_utf8_in_a_client_id_are_not_kafka() {
    let ids: [&[u8]; 5] = [
        b"cli\x01",
        b"\x1bc",
        "a\u{85}b".as_bytes(),
        b"a\xffb",
        b"\xc3",
    ];
    for id in ids {
        for syn in [true, false] {
            let (got, stats) = run(
                syn,
                &[(Dir::AtoB, fc0(3, Some(id))), (Dir::BtoA, fc0_answer(3))],
            );
            assert!(got.is_empty(), "{id:?} syn={syn}");
            assert_eq!(stats.not_kafka, 1);
        }
    }
}

#[test]
fn random_bytes_and_unknown_keys_are_not_kafka() {
    let mut rng = crate::synth::kafka::Rng::new(7);
    for _ in 0..200 {
        let mut side = || {
            (0..1 + rng.below(3000))
                .map(|_| rng.next_u64() as u8)
                .collect::<Vec<u8>>()
        };
        let (ab, ba) = (side(), side());
        for syn in [true, false] {
            let (got, _) = run(syn, &[(Dir::AtoB, ab.clone()), (Dir::BtoA, ba.clone())]);
            assert!(got.is_empty());
        }
    }
    // API key 999 does not exist, even with a perfect header and an echo.
    let req = raw_request(999, 0, 3, Some(b"c"), false, &[0, 1, b'g']);
    let (got, _) = run(false, &[(Dir::AtoB, req), (Dir::BtoA, fc0_answer(3))]);
    assert!(got.is_empty());
}

// Resync that does not invent (issue 12).

enum Ev {
    Data(Dir, Vec<u8>),
    Gap(Dir, u64),
}

/// What a session emitted: packet, kind, bytes, cut, request packet.
type Got = Vec<(u64, Kind, Vec<u8>, bool, Option<u64>)>;

/// Runs events (packet n+2 for event n) through a connection to port 9092.
fn drive(
    cfg: KafkaConfig,
    confirm: Option<Confirm>,
    syn: bool,
    events: &[Ev],
) -> (Got, KafkaStats) {
    let mut s = Sessions::new(cfg);
    if let Some(c) = confirm {
        s.set_confirm(c);
    }
    let mut got = Vec::new();
    let mut out = |f: &KafkaMessage<'_>| {
        got.push((f.packet, f.kind, f.data.to_vec(), f.cut, f.request_packet))
    };
    let conn = ConnId(1);
    let server: SocketAddr = "10.0.0.1:9092".parse().unwrap();
    let opened = StreamEvent::Opened {
        conn,
        a: a(),
        b: server,
        syn_seen: syn,
        packet: 1,
    };
    s.on_event(1, 0, opened, &mut out);
    for (i, e) in events.iter().enumerate() {
        let n = i as u64 + 2;
        let ev = match e {
            Ev::Data(dir, data) => StreamEvent::Data {
                conn,
                dir: *dir,
                data,
                stream_offset: 0,
                packet: 0,
                ts_ns: 0,
                file: 0,
            },
            Ev::Gap(dir, len) => StreamEvent::Gap {
                conn,
                dir: *dir,
                len: *len,
            },
        };
        s.on_event(n, n as i64 * 1000, ev, &mut out);
    }
    s.finish(999, 0, &mut out);
    (got, s.stats().clone())
}

/// The codec's own check, as the pipeline would pass it.
fn schema_confirm() -> Confirm {
    Confirm::new(|kind, api, frame| {
        let m = match kind {
            Kind::Request => crate::codec::decode_request(frame),
            Kind::Response => crate::codec::decode_response(frame, Some(api)),
        };
        m.error.is_none() && m.body.is_some()
    })
}

/// A fake request header inside payload bytes: plausible, but what follows its
/// declared end is not a frame.
fn payload_with_fake_header(size: i32) -> Vec<u8> {
    let mut p = vec![0xee; 37];
    // Another client's header: one carrying this client's own id and next
    // correlation id would be taken as the connection carrying on.
    let mut fake = raw_request(10, 0, 9000, Some(b"x"), false, &[]);
    fake[..4].copy_from_slice(&size.to_be_bytes());
    p.extend_from_slice(&fake);
    p.resize(p.len() + 200, 0xee);
    p
}

#[test]
fn a_header_inside_a_payload_is_rejected_and_the_true_frames_are_found() {
    let (r1, r2, r3) = (fc0(1, Some(b"c")), fc0(2, Some(b"c")), fc0(3, Some(b"c")));
    let mut after = payload_with_fake_header(60);
    let fake_at = 37;
    after.extend_from_slice(&r2);
    after.extend_from_slice(&r3);
    let events = [
        Ev::Data(Dir::AtoB, r1.clone()),
        Ev::Gap(Dir::AtoB, 500),
        Ev::Data(Dir::AtoB, after.clone()),
    ];
    let (got, stats) = drive(KafkaConfig::default(), None, true, &events);
    let frames: Vec<&[u8]> = got.iter().map(|g| g.2.as_slice()).collect();
    assert_eq!(frames, [&r1[..], &r2[..], &r3[..]]);
    assert!(stats.rejected_candidates >= 1);
    assert_eq!(
        stats.hunted_bytes,
        (after.len() - r2.len() - r3.len()) as u64
    );
    assert!(got[1].2.starts_with(&r2) && fake_at < after.len());
}

#[test]
fn a_candidate_is_confirmed_by_the_next_frame_the_data_end_or_its_schema() {
    let key = "k".repeat(30);
    let r2 = encode_request(10, 0, 2, Some("c"), &json!({"Key": key})).unwrap();
    // Ends exactly where the data ends.
    let (got, _) = drive(
        KafkaConfig::default(),
        None,
        false,
        &[Ev::Data(Dir::AtoB, r2.clone())],
    );
    assert_eq!(got.len(), 1);
    // Followed by junk: only its schema can confirm it.
    let mut junk = r2.clone();
    junk.extend_from_slice(&[0xee; 40]);
    let (got, stats) = drive(
        KafkaConfig::default(),
        None,
        false,
        &[Ev::Data(Dir::AtoB, junk.clone())],
    );
    assert!(got.is_empty());
    assert!(stats.rejected_candidates >= 1);
    let (got, _) = drive(
        KafkaConfig::default(),
        Some(schema_confirm()),
        false,
        &[Ev::Data(Dir::AtoB, junk)],
    );
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].2, r2);
}

#[test]
fn a_frame_confirmed_later_keeps_the_packet_of_its_last_byte() {
    let (r2, r3) = (fc0(2, Some(b"c")), fc0(3, Some(b"c")));
    let mut p1 = vec![0xee; 10];
    p1.extend_from_slice(&r2);
    p1.extend_from_slice(&r3[..3]);
    let events = [
        Ev::Data(Dir::AtoB, fc0(1, Some(b"c"))),
        Ev::Gap(Dir::AtoB, 100),
        Ev::Data(Dir::AtoB, p1),
        Ev::Data(Dir::AtoB, r3[3..].to_vec()),
    ];
    let (got, _) = drive(KafkaConfig::default(), None, true, &events);
    let at: Vec<(u64, &[u8])> = got.iter().map(|g| (g.0, g.2.as_slice())).collect();
    // Packet 2 is the first request, 3 the gap, 4 carries r2, 5 completes r3.
    assert_eq!(at[1], (4, &r2[..]));
    assert_eq!(at[2], (5, &r3[..]));
}

#[test]
fn a_candidate_too_large_to_hold_is_rejected_and_memory_stays_bounded() {
    let cfg = KafkaConfig {
        max_buffered_per_direction: 4096,
        ..KafkaConfig::default()
    };
    let r2 = fc0(2, Some(b"c"));
    let mut after = payload_with_fake_header(1 << 20);
    after.extend_from_slice(&r2);
    let events = [
        Ev::Data(Dir::AtoB, fc0(1, Some(b"c"))),
        Ev::Gap(Dir::AtoB, 7),
        Ev::Data(Dir::AtoB, after),
    ];
    let (got, stats) = drive(cfg, None, true, &events);
    assert_eq!(got.len(), 2);
    assert_eq!(got[1].2, r2);
    assert_eq!(stats.rejected_candidates, 1);
    assert!(stats.peak_buffered < 4096);
}

#[test]
fn responses_found_by_hunting_need_their_request() {
    // The answer to corr 5 was never asked on this connection; the one to corr 6 was.
    let mut resp = fc0_answer(5);
    resp.extend_from_slice(&fc0_answer(6));
    let events = [
        Ev::Data(Dir::AtoB, fc0(6, Some(b"c"))),
        Ev::Data(Dir::BtoA, vec![0xee; 3]),
        Ev::Gap(Dir::BtoA, 10),
        Ev::Data(Dir::BtoA, resp.clone()),
    ];
    let (got, stats) = drive(KafkaConfig::default(), None, true, &events);
    let kinds: Vec<(Kind, Option<u64>)> = got.iter().map(|g| (g.1, g.4)).collect();
    assert_eq!(kinds, [(Kind::Request, None), (Kind::Response, Some(2))]);
    assert_eq!(got[1].2, fc0_answer(6));
    assert_eq!(stats.unpaired_responses, 0);
}

/// A random exchange for [`framing_shortcut_matches_the_general_steps`]: per request, its
/// correlation id offset, whether garbage follows it or its answer, and where the bytes
/// are cut into packets.
type Exchange = (Vec<(u8, u8, u8)>, Vec<usize>, Vec<usize>, bool, usize, u8);

fn exchanges() -> impl proptest::strategy::Strategy<Value = Exchange> {
    use proptest::prelude::*;
    (
        prop::collection::vec((any::<u8>(), any::<u8>(), any::<u8>()), 1..30),
        prop::collection::vec(1usize..90, 1..40),
        prop::collection::vec(1usize..90, 1..40),
        any::<bool>(),
        0usize..4,
        any::<u8>(),
    )
}

proptest::proptest! {
    /// The framer's shortcut for whole frames does exactly what the general steps do:
    /// the same messages (packet, kind, bytes, cut, request) and the same counters,
    /// whatever the packet boundaries, garbage, gaps, limits and handshake.
    #[test]
    fn framing_shortcut_matches_the_general_steps((reqs, cuts_c, cuts_s, syn, limit, gap_at) in exchanges()) {
        let (mut client, mut server) = (Vec::new(), Vec::new());
        for (i, &(corr, junk, client_id)) in reqs.iter().enumerate() {
            let corr = i32::from(corr) + i as i32;
            let id: &[u8] = if client_id % 2 == 0 { b"c" } else { b"consumer-1" };
            client.extend(fc0(corr, Some(id)));
            // Now and then the answer is to another id, or garbage follows.
            let answered = if junk % 11 == 0 { corr + 1 } else { corr };
            server.extend(fc0_answer(answered));
            if junk % 13 == 1 {
                client.extend([0xff, 0xff, 0, 1, 2]);
            }
            if junk % 17 == 2 {
                server.extend([0, 0, 0, 1]);
            }
        }
        // Cut each direction into packets, and interleave them.
        let cut = |bytes: &[u8], cuts: &[usize]| {
            let mut out = Vec::new();
            let mut at = 0;
            for &n in cuts.iter().cycle() {
                if at >= bytes.len() {
                    break;
                }
                let end = (at + n).min(bytes.len());
                out.push(bytes[at..end].to_vec());
                at = end;
            }
            out
        };
        let (pc, ps) = (cut(&client, &cuts_c), cut(&server, &cuts_s));
        let mut events = Vec::new();
        for i in 0..pc.len().max(ps.len()) {
            if i == usize::from(gap_at) {
                events.push(Ev::Gap(Dir::BtoA, 7));
            }
            if let Some(p) = pc.get(i) {
                events.push(Ev::Data(Dir::AtoB, p.clone()));
            }
            if let Some(p) = ps.get(i) {
                events.push(Ev::Data(Dir::BtoA, p.clone()));
            }
        }
        let cfg = KafkaConfig {
            max_buffered_per_direction: [16 << 20, 20, 24, 200][limit],
            oversized_head: 10,
            ..KafkaConfig::default()
        };
        let fast = drive(cfg.clone(), Some(schema_confirm()), syn, &events);
        framer::GENERAL_ONLY.with(|g| g.set(true));
        let general = drive(cfg, Some(schema_confirm()), syn, &events);
        framer::GENERAL_ONLY.with(|g| g.set(false));
        proptest::prop_assert_eq!(&fast.0, &general.0);
        proptest::prop_assert_eq!(format!("{:?}", fast.1), format!("{:?}", general.1));
    }
}

#[test]
fn the_last_request_is_remembered_as_client_ids_alternate() {
    // Its buffer is reused when the client id changes: what it holds must be exactly
    // the newest request's correlation id and client id field, shorter or longer.
    let mut s = Sessions::new(KafkaConfig::default());
    let conn = ConnId(1);
    let opened = StreamEvent::Opened {
        conn,
        a: a(),
        b: "10.0.0.1:9092".parse().unwrap(),
        syn_seen: true,
        packet: 1,
    };
    let mut out = |_: &KafkaMessage<'_>| {};
    s.on_event(1, 0, opened, &mut out);
    let ids: [Option<&[u8]>; 6] = [
        Some(b"consumer-1"),
        Some(b"p"),
        Some(b"p"),
        None,
        Some(b"a-much-longer-client-id"),
        Some(b""),
    ];
    for (i, id) in ids.into_iter().enumerate() {
        let corr = i as i32 + 7;
        let req = fc0(corr, id);
        s.on_data(conn, Dir::AtoB, &req, i as u64 + 2, 0, &mut out);
        let (_, field) = detect::request_ident(&req).unwrap();
        let last = framer0(&s, conn).last.as_ref().unwrap();
        assert_eq!((last.0, last.1.as_slice()), (corr, field), "request {i}");
    }
}
