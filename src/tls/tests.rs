//! Whole-connection tests of the TLS layer: the RFC 8448 trace, TLS 1.2
//! connections built with the record sealer, and hostile input.
#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

use super::crypto::tests::*;
use super::crypto::{self, RecordKey};
use super::*;

#[derive(Debug, Default)]
struct Seen {
    plain: Vec<(Side, Vec<u8>, u64, RecordInfo)>,
    lost: Vec<(Side, Option<u64>)>,
}

impl Seen {
    fn sink(&mut self) -> impl FnMut(TlsEvent<'_>) + '_ {
        |e| match e {
            TlsEvent::Plaintext {
                side,
                data,
                frame,
                record,
                ..
            } => self.plain.push((side, data.to_vec(), frame, record)),
            TlsEvent::Lost { side, bytes } => self.lost.push((side, bytes)),
        }
    }
    fn side(&self, s: Side) -> Vec<u8> {
        self.plain
            .iter()
            .filter(|p| p.0 == s)
            .flat_map(|p| p.1.clone())
            .collect()
    }
}

const CR: &str = "cb34ecb1e78163ba1c38c6dacb196a6dffa21a8d9912ec18a2ef6283024dece7";

fn rfc8448_keylog(handshake: bool) -> KeyLog {
    let mut t = format!(
        "CLIENT_TRAFFIC_SECRET_0 {CR} {C_AP}\nSERVER_TRAFFIC_SECRET_0 {CR} {S_AP}\nEXPORTER_SECRET {CR} {C_AP}\n"
    );
    if handshake {
        t += &format!(
            "CLIENT_HANDSHAKE_TRAFFIC_SECRET {CR} {C_HS}\nSERVER_HANDSHAKE_TRAFFIC_SECRET {CR} {S_HS}\n"
        );
    }
    KeyLog::parse(&t)
}

/// The RFC 8448 section 3 connection, in packet order.
fn rfc8448_flow() -> Vec<(Side, Vec<u8>)> {
    vec![
        (Side::Client, hex(RFC8448_CH)),
        (
            Side::Server,
            [hex(RFC8448_SH), hex(RFC8448_S_FLIGHT)].concat(),
        ),
        (Side::Client, hex(RFC8448_C_FIN)),
        (Side::Server, hex(RFC8448_S_NST)),
        (Side::Client, hex(RFC8448_C_DATA)),
        (Side::Server, hex(RFC8448_S_DATA)),
        (Side::Client, hex(RFC8448_C_ALERT)),
        (Side::Server, hex(RFC8448_S_ALERT)),
    ]
}

fn run(flow: &[(Side, Vec<u8>)], keys: &mut dyn KeySource, chunk: usize) -> (TlsConn, Seen) {
    let cfg = TlsConfig::default();
    let mut c = TlsConn::new();
    let mut seen = Seen::default();
    for (i, (side, bytes)) in flow.iter().enumerate() {
        for piece in bytes.chunks(chunk) {
            c.data(&cfg, *side, piece, i as u64 + 1, 0, keys, &mut seen.sink());
        }
    }
    (c, seen)
}

fn payload() -> Vec<u8> {
    (0u8..50).collect()
}

#[test]
fn rfc8448_connection_decrypts_both_directions() {
    for chunk in [usize::MAX, 1, 7, 100] {
        let (c, seen) = run(&rfc8448_flow(), &mut rfc8448_keylog(true), chunk);
        assert_eq!(seen.side(Side::Client), payload(), "chunk {chunk}");
        assert_eq!(seen.side(Side::Server), payload(), "chunk {chunk}");
        assert!(seen.lost.is_empty());
        assert_eq!(c.outcome(), Outcome::Decrypted);
        assert_eq!(
            (c.version, c.suite_id),
            (Some(Version::Tls13), Some(0x1301))
        );
        // Server: flight, ticket, data, alert; client: Finished, data, alert.
        assert_eq!((c.stats.decrypted_records, c.stats.failed_records), (7, 0));
        // Each record is reported with the packet its last byte came in.
        let frames: Vec<u64> = seen.plain.iter().map(|p| p.2).collect();
        assert_eq!(frames, vec![5, 6]);
        assert_eq!(
            seen.plain[1].3.seq, 1,
            "the server's data is its second app record"
        );
    }
}

#[test]
fn rfc8448_without_handshake_secrets_still_decrypts_application_data() {
    let (c, seen) = run(&rfc8448_flow(), &mut rfc8448_keylog(false), usize::MAX);
    assert_eq!(seen.side(Side::Client), payload());
    assert_eq!(seen.side(Side::Server), payload());
    assert_eq!(c.outcome(), Outcome::Decrypted);
    assert_eq!(c.stats.failed_records, 0);
    assert_eq!(c.stats.undecrypted_records, 2, "the two handshake flights");
}

#[test]
fn no_key_yields_nothing_and_says_so() {
    let (c, seen) = run(&rfc8448_flow(), &mut KeyLog::new(), usize::MAX);
    assert!(seen.plain.is_empty() && seen.lost.is_empty());
    assert_eq!(c.outcome(), Outcome::NoKey);
}

#[test]
fn wrong_key_fails_authentication_and_passes_nothing_on() {
    let bad = |s: &str| {
        let mut b = hex(s);
        b[0] ^= 0x80;
        b.iter().map(|x| format!("{x:02x}")).collect::<String>()
    };
    let mut k = KeyLog::parse(&format!(
        "CLIENT_HANDSHAKE_TRAFFIC_SECRET {CR} {}\nSERVER_HANDSHAKE_TRAFFIC_SECRET {CR} {}\n\
         CLIENT_TRAFFIC_SECRET_0 {CR} {}\nSERVER_TRAFFIC_SECRET_0 {CR} {}\n",
        bad(C_HS),
        bad(S_HS),
        bad(C_AP),
        bad(S_AP)
    ));
    let (c, seen) = run(&rfc8448_flow(), &mut k, usize::MAX);
    assert!(seen.plain.is_empty());
    assert_eq!(c.outcome(), Outcome::AuthFailure);
    assert_eq!(c.stats.failed_records, 7);
}

#[test]
fn a_flipped_ciphertext_bit_drops_only_that_record() {
    let mut flow = rfc8448_flow();
    flow[4].1[20] ^= 1; // the client's data record
    let (c, seen) = run(&flow, &mut rfc8448_keylog(true), usize::MAX);
    assert!(seen.side(Side::Client).is_empty());
    assert_eq!(seen.side(Side::Server), payload());
    assert_eq!(c.stats.failed_records, 1);
    // TLS 1.3 may pad: the plaintext length lost is not known.
    assert_eq!(seen.lost, vec![(Side::Client, None)]);
}

#[test]
fn truncated_record_is_held_not_passed_on() {
    let mut flow = rfc8448_flow();
    flow.truncate(5);
    let cut = flow[4].1.len() - 3;
    flow[4].1.truncate(cut);
    let (c, seen) = run(&flow, &mut rfc8448_keylog(true), usize::MAX);
    assert!(seen.side(Side::Client).is_empty());
    assert_eq!(c.stats.failed_records, 0);
    assert!(c.halves[0].buf.len() < 80);
}

#[test]
fn record_longer_than_the_cap_stops_the_direction() {
    let cfg = TlsConfig::default();
    let mut c = TlsConn::new();
    let mut seen = Seen::default();
    let mut k = rfc8448_keylog(true);
    let len = (1u32 << 14) + 1000;
    let mut bytes = hex(RFC8448_CH);
    bytes.extend_from_slice(&[23, 3, 3, (len >> 8) as u8, len as u8]);
    bytes.extend(std::iter::repeat_n(0x41, len as usize));
    for piece in bytes.chunks(1460) {
        c.data(&cfg, Side::Client, piece, 1, 0, &mut k, &mut seen.sink());
        assert!(c.halves[0].buf.len() <= HEADER + cfg.max_record_len);
    }
    assert!(seen.plain.is_empty());
    assert_eq!(c.stats.desyncs, 1);
}

#[test]
fn garbage_that_starts_like_a_handshake_is_not_tls() {
    let cfg = TlsConfig::default();
    let mut k = rfc8448_keylog(true);
    // A seeded xorshift stream behind a handshake-like header.
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut garbage = vec![22, 3, 1, 0, 40];
    for _ in 0..200_000 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        garbage.push(x as u8);
    }
    for side in [Side::Client, Side::Server] {
        let mut c = TlsConn::new();
        let mut seen = Seen::default();
        for piece in garbage.chunks(1000) {
            c.data(&cfg, side, piece, 1, 0, &mut k, &mut seen.sink());
        }
        assert!(seen.plain.is_empty(), "{side:?}");
        assert!(
            c.halves
                .iter()
                .all(|h| h.buf.len() <= 2 * (HEADER + cfg.max_record_len))
        );
        assert_ne!(c.outcome(), Outcome::Decrypted);
    }
    // Garbage with no handshake at all, on a connection with keys: nothing either,
    // and the mid-stream key search stays within its budget.
    let mut c = TlsConn::new();
    let mut seen = Seen::default();
    for piece in garbage[5..].chunks(1000) {
        c.data(&cfg, Side::Server, piece, 1, 0, &mut k, &mut seen.sink());
    }
    assert!(seen.plain.is_empty());
    assert!(c.stats.trial_bytes <= cfg.trial_budget_bytes + (1 << 15));
    assert_eq!(c.outcome(), Outcome::HandshakeMissing);
}

#[test]
fn gap_inside_a_record_loses_that_record_only() {
    let cfg = TlsConfig::default();
    let mut k = rfc8448_keylog(true);
    let mut c = TlsConn::new();
    let mut seen = Seen::default();
    let flow = rfc8448_flow();
    for (i, (side, bytes)) in flow.iter().enumerate() {
        if i == 3 {
            // The ticket record loses 40 bytes in its middle.
            c.data(&cfg, *side, &bytes[..30], 4, 0, &mut k, &mut seen.sink());
            c.gap(&cfg, *side, 40, &mut seen.sink());
            c.data(&cfg, *side, &bytes[70..], 4, 0, &mut k, &mut seen.sink());
            continue;
        }
        c.data(
            &cfg,
            *side,
            bytes,
            i as u64 + 1,
            0,
            &mut k,
            &mut seen.sink(),
        );
    }
    assert_eq!(seen.side(Side::Server), payload());
    assert_eq!(seen.lost.len(), 1);
    assert_eq!(c.stats.resyncs, 0);
}

#[test]
fn gap_across_records_is_resynchronised_by_sequence_search() {
    let cfg = TlsConfig::default();
    let mut k = rfc8448_keylog(true);
    let mut c = TlsConn::new();
    let mut seen = Seen::default();
    let flow = rfc8448_flow();
    // The server's ticket and the head of its data record are lost together.
    let tail_of_nst = 10;
    for (i, (side, bytes)) in flow.iter().enumerate() {
        match i {
            3 => {
                let keep = bytes.len() - tail_of_nst;
                c.data(&cfg, *side, &bytes[..keep], 4, 0, &mut k, &mut seen.sink());
                // Lost: the ticket's tail and the whole data record.
                c.gap(
                    &cfg,
                    *side,
                    (tail_of_nst + flow[5].1.len()) as u64,
                    &mut seen.sink(),
                );
            }
            5 => {}
            _ => c.data(
                &cfg,
                *side,
                bytes,
                i as u64 + 1,
                0,
                &mut k,
                &mut seen.sink(),
            ),
        }
    }
    // The alert after the hole is found again at sequence 2 (it carries no data).
    assert!(seen.side(Side::Server).is_empty());
    assert_eq!(c.stats.resyncs, 1);
    assert_eq!(c.halves[1].seq, 3);
    assert_eq!(c.stats.failed_records, 0);
}

#[test]
fn midstream_tls13_finds_keys_and_sequence() {
    // The capture starts at the data records: no handshake at all.
    let flow = vec![
        (Side::Client, hex(RFC8448_C_DATA)),
        (Side::Server, hex(RFC8448_S_DATA)),
        (Side::Client, hex(RFC8448_C_ALERT)),
    ];
    let (c, seen) = run(&flow, &mut rfc8448_keylog(false), usize::MAX);
    assert_eq!(seen.side(Side::Client), payload());
    assert_eq!(seen.side(Side::Server), payload());
    assert!(c.stats.midstream_recovered);
    assert_eq!(c.outcome(), Outcome::Decrypted);
    // Without the key log the same connection is named as joined mid-stream.
    let (c, seen) = run(&flow, &mut KeyLog::new(), usize::MAX);
    assert!(seen.plain.is_empty());
    assert_eq!(c.outcome(), Outcome::HandshakeMissing);
}

fn hello(side: Side, version: u16, suite: u16, random: [u8; 32]) -> Vec<u8> {
    let mut body = vec![3, 3];
    body.extend_from_slice(&random);
    body.push(0); // session id
    match side {
        Side::Client => {
            body.extend_from_slice(&[0, 2]);
            body.extend_from_slice(&suite.to_be_bytes());
            body.extend_from_slice(&[1, 0, 0, 0]);
        }
        Side::Server => {
            body.extend_from_slice(&suite.to_be_bytes());
            body.push(0);
            if version == 0x0304 {
                body.extend_from_slice(&[0, 6, 0, 43, 0, 2, 3, 4]);
            } else {
                body.extend_from_slice(&[0, 0]);
            }
        }
    }
    let typ = if side == Side::Client { 1 } else { 2 };
    let mut msg = vec![typ, 0, (body.len() >> 8) as u8, body.len() as u8];
    msg.extend_from_slice(&body);
    let mut rec = vec![22, 3, 3, (msg.len() >> 8) as u8, msg.len() as u8];
    rec.extend_from_slice(&msg);
    rec
}

/// A TLS 1.2 connection with `suite`, sealed with keys from `master`.
fn tls12_flow(suite_id: u16, master: &[u8]) -> (Vec<(Side, Vec<u8>)>, [u8; 32]) {
    let cr = [7u8; 32];
    let sr = [9u8; 32];
    let suite = crypto::suite(suite_id).unwrap();
    let (ck, sk) = RecordKey::tls12_pair(suite, master, &cr, &sr).unwrap();
    let ccs = vec![20, 3, 3, 0, 1, 1];
    let fin = [20u8, 0, 0, 12]
        .iter()
        .copied()
        .chain([0xAA; 12])
        .collect::<Vec<_>>();
    let flow = vec![
        (Side::Client, hello(Side::Client, 0x0303, suite_id, cr)),
        (Side::Server, hello(Side::Server, 0x0303, suite_id, sr)),
        (Side::Client, [ccs.clone(), ck.seal(0, 22, &fin)].concat()),
        (Side::Server, [ccs, sk.seal(0, 22, &fin)].concat()),
        (
            Side::Client,
            [
                ck.seal(1, 23, b"request one"),
                ck.seal(2, 23, b"request two"),
            ]
            .concat(),
        ),
        (Side::Server, sk.seal(1, 23, b"response")),
    ];
    (flow, cr)
}

#[test]
fn tls12_gcm_and_chacha_from_the_master_secret() {
    let master = [0x5Au8; 48];
    for suite in [0xC02F, 0xC030, 0xCCA8, 0x009C, 0x009D] {
        let (flow, cr) = tls12_flow(suite, &master);
        let crh: String = cr.iter().map(|b| format!("{b:02x}")).collect();
        let mh: String = master.iter().map(|b| format!("{b:02x}")).collect();
        let mut k = KeyLog::parse(&format!("CLIENT_RANDOM {crh} {mh}\n"));
        let (c, seen) = run(&flow, &mut k, 3);
        assert_eq!(
            seen.side(Side::Client),
            b"request onerequest two",
            "{suite:04x}"
        );
        assert_eq!(seen.side(Side::Server), b"response");
        assert_eq!(c.version, Some(Version::Tls12));
        assert_eq!(c.outcome(), Outcome::Decrypted);
        // Another master secret: authentication fails, nothing passes.
        let mut k = KeyLog::parse(&format!("CLIENT_RANDOM {crh} {}\n", "11".repeat(48)));
        let (c, seen) = run(&flow, &mut k, usize::MAX);
        assert!(seen.plain.is_empty());
        assert_eq!(c.outcome(), Outcome::AuthFailure);
    }
}

#[test]
fn unsupported_suite_is_named() {
    let mut flow = vec![
        (Side::Client, hello(Side::Client, 0x0303, 0xC013, [1; 32])),
        (Side::Server, hello(Side::Server, 0x0303, 0xC013, [2; 32])),
        (Side::Client, vec![20, 3, 3, 0, 1, 1]),
    ];
    flow.push((
        Side::Client,
        vec![22, 3, 3, 0, 40].into_iter().chain([0; 40]).collect(),
    ));
    let mut k = KeyLog::parse(&format!(
        "CLIENT_RANDOM {} {}\n",
        "01".repeat(32),
        "22".repeat(48)
    ));
    let (c, seen) = run(&flow, &mut k, usize::MAX);
    assert!(seen.plain.is_empty());
    assert_eq!(
        c.outcome(),
        Outcome::UnsupportedCipher("TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA".into())
    );
}

#[test]
fn tls13_key_update_is_followed() {
    let suite = crypto::suite(0x1302).unwrap();
    let cr = [3u8; 32];
    let secrets: Vec<Vec<u8>> = (0..4).map(|i| vec![i as u8 + 1; 48]).collect();
    let key = |s: &[u8]| RecordKey::tls13(suite, s).unwrap();
    let (chs, shs, cap, sap) = (key(&secrets[0]), key(&secrets[1]), &secrets[2], &secrets[3]);
    let fin = [20u8, 0, 0, 48]
        .iter()
        .copied()
        .chain([0xAA; 48])
        .collect::<Vec<_>>();
    let cap1 = crypto::next_traffic_secret(suite.hash, cap).unwrap();
    let flow = vec![
        (Side::Client, hello(Side::Client, 0x0304, 0x1302, cr)),
        (
            Side::Server,
            [
                hello(Side::Server, 0x0304, 0x1302, [4; 32]),
                shs.seal(0, 22, &fin),
            ]
            .concat(),
        ),
        (
            Side::Client,
            [vec![20, 3, 3, 0, 1, 1], chs.seal(0, 22, &fin)].concat(),
        ),
        (
            Side::Client,
            [
                key(cap).seal(0, 23, b"before"),
                key(cap).seal(1, 22, &[24, 0, 0, 1, 0]),
                key(&cap1).seal(0, 23, b"after"),
            ]
            .concat(),
        ),
        (Side::Server, key(sap).seal(0, 23, b"reply")),
    ];
    let h = |b: &[u8]| b.iter().map(|x| format!("{x:02x}")).collect::<String>();
    let crh = h(&cr);
    let mut k = KeyLog::parse(&format!(
        "CLIENT_HANDSHAKE_TRAFFIC_SECRET {crh} {}\nSERVER_HANDSHAKE_TRAFFIC_SECRET {crh} {}\n\
         CLIENT_TRAFFIC_SECRET_0 {crh} {}\nSERVER_TRAFFIC_SECRET_0 {crh} {}\n",
        h(&secrets[0]),
        h(&secrets[1]),
        h(cap),
        h(sap)
    ));
    let (c, seen) = run(&flow, &mut k, 11);
    assert_eq!(seen.side(Side::Client), b"beforeafter");
    assert_eq!(seen.side(Side::Server), b"reply");
    assert_eq!(c.stats.key_updates, 1);
    assert_eq!(c.suite_id, Some(0x1302));
}

#[test]
fn stats_count_by_reason() {
    let mut st = TlsStats::default();
    let (c, _) = run(&rfc8448_flow(), &mut rfc8448_keylog(true), usize::MAX);
    st.add(&c);
    let (c, _) = run(&rfc8448_flow(), &mut KeyLog::new(), usize::MAX);
    st.add(&c);
    assert_eq!(st.outcomes.get(&Outcome::Decrypted), Some(&1));
    assert_eq!(st.outcomes.get(&Outcome::NoKey), Some(&1));
    assert_eq!(st.versions.get("TLSv1.3"), Some(&1));
    assert_eq!(st.suites.get("TLS_AES_128_GCM_SHA256"), Some(&1));
}

#[test]
fn tls13_without_the_client_hello_is_searched_like_mid_stream() {
    let mut flow = rfc8448_flow();
    flow.remove(0);
    let (c, seen) = run(&flow, &mut rfc8448_keylog(true), usize::MAX);
    assert_eq!(seen.side(Side::Client), payload());
    assert_eq!(seen.side(Side::Server), payload());
    assert!(c.stats.midstream_recovered);
    let (c, seen) = run(&flow, &mut KeyLog::new(), usize::MAX);
    assert!(seen.plain.is_empty());
    assert_eq!(c.outcome(), Outcome::HandshakeMissing);
}

#[test]
fn tls12_without_the_client_hello_is_handshake_missing() {
    let master = [0x5Au8; 48];
    let (mut flow, cr) = tls12_flow(0xC02F, &master);
    flow.remove(0);
    let crh: String = cr.iter().map(|b| format!("{b:02x}")).collect();
    let mut k = KeyLog::parse(&format!("CLIENT_RANDOM {crh} {}\n", "5a".repeat(48)));
    let (c, seen) = run(&flow, &mut k, usize::MAX);
    assert!(seen.plain.is_empty());
    assert_eq!(c.outcome(), Outcome::HandshakeMissing);
}

/// RFC 8448 section 5: a HelloRetryRequest, then a second ClientHello (same
/// random) and the real ServerHello. Only the hellos are checked: that section's
/// secrets are not used here, so the connection ends with no key.
#[test]
fn hello_retry_request_is_passed_over() {
    const CH1: &str = "16030100b4010000b00303b0b1c5a5aa37c5919f2ed1d5c6fff7fcb7849716945a2b8cee9258a346677b6f000006130113031302010000810000000b0009000006736572766572ff01000100000a00080006001d00170018003300260024001d0020e8e8e3f3b93a25ed97a14a7dcacb8a272c6288e585c6484d05262fcad062ad1f002b0003020304000d0020001e040305030603020308040805080604010501060102010402050206020202002d00020101001c00024001";
    const HRR: &str = "16030300b0020000ac0303cf21ad74e59a6111be1d8c021e65b891c2a211167abb8c5e079e09e2c8a8339c001301000084003300020017002c0074007271dcd04bb88bc3189119398a00000000eefafc76c146b823b096f8aacad365dd0030953f4edf625636e5f21bb2e23fcc654b1b5b40318d10d137abcbb87574e36e8a1f025f7dfa5d6e50781b5eda4aa15b0c8be778257d16aa3030e9e7841dd9e4c0342267e8ca0caf571fb2b7cff0f934b0002b00020304";
    const SH: &str = "160303007b020000770303bb341d847fd789c47c387172dc0c9bf147fccacb5043d86ca4c598d3ff571b9800130100004f003300450017004104583e054b7a66672ae020ad9d2686fcc85b5ad41a134a0f03ee72b893052bd85b4c8de6776f5b04ac07d83540eab3e3d9c547bc6528c4317d294686093a6cad7d002b00020304";
    let flow = vec![
        (Side::Client, hex(CH1)),
        (Side::Server, hex(HRR)),
        (Side::Server, hex(SH)),
    ];
    let (c, seen) = run(&flow, &mut KeyLog::new(), usize::MAX);
    assert!(seen.plain.is_empty());
    assert_eq!(
        (c.version, c.suite_id),
        (Some(Version::Tls13), Some(0x1301))
    );
    assert_eq!(
        c.client_random.unwrap().to_vec(),
        hex("b0b1c5a5aa37c5919f2ed1d5c6fff7fcb7849716945a2b8cee9258a346677b6f")
    );
    assert_eq!(
        c.server_random.unwrap().to_vec(),
        hex("bb341d847fd789c47c387172dc0c9bf147fccacb5043d86ca4c598d3ff571b98")
    );
}

mod prop {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        /// Any bytes, cut anywhere, with gaps anywhere, after a real handshake:
        /// no panic, nothing passed on that did not authenticate, bounded buffers.
        #[test]
        fn hostile_streams(
            junk in proptest::collection::vec(any::<u8>(), 0..4000),
            cuts in proptest::collection::vec(1usize..600, 1..20),
            gap_at in proptest::option::of(0usize..20),
            side_bits in any::<u32>(),
        ) {
            let cfg = TlsConfig { trial_budget_bytes: 1 << 20, ..TlsConfig::default() };
            let mut k = rfc8448_keylog(true);
            let mut c = TlsConn::new();
            let mut seen = Seen::default();
            c.data(&cfg, Side::Client, &hex(RFC8448_CH), 1, 0, &mut k, &mut seen.sink());
            c.data(&cfg, Side::Server, &hex(RFC8448_SH), 2, 0, &mut k, &mut seen.sink());
            let mut rest = &junk[..];
            for (i, n) in cuts.iter().enumerate() {
                let side = if side_bits >> (i % 32) & 1 == 1 { Side::Client } else { Side::Server };
                if gap_at == Some(i) {
                    c.gap(&cfg, side, *n as u64, &mut seen.sink());
                }
                let (a, b) = rest.split_at((*n).min(rest.len()));
                rest = b;
                c.data(&cfg, side, a, 3 + i as u64, 0, &mut k, &mut seen.sink());
                prop_assert!(c.buffered() <= 4 * (HEADER + cfg.max_record_len));
            }
            prop_assert!(seen.plain.is_empty());
        }
    }
}
