//! TLS layer throughput: TLS 1.3 records (16 KiB of plaintext each) through
//! `TlsConn`, fed as 1460-byte segments, for each TLS 1.3 suite.

use aes_gcm::aead::{Aead, KeyInit, Payload};
use aes_gcm::{Aes128Gcm, Aes256Gcm};
use chacha20poly1305::ChaCha20Poly1305;
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use kwire::tls::crypto::{Hash, expand_label};
use kwire::tls::{KeyLog, Side, TlsConfig, TlsConn};
use std::hint::black_box;

const RECORDS: usize = 64;
const PLAIN: usize = 16 * 1024;

fn hello(typ: u8, suite: u16) -> Vec<u8> {
    let mut body = vec![3, 3];
    body.extend_from_slice(&[typ; 32]); // random
    body.push(0);
    if typ == 1 {
        body.extend_from_slice(&[0, 2]);
        body.extend_from_slice(&suite.to_be_bytes());
        body.extend_from_slice(&[1, 0]);
    } else {
        body.extend_from_slice(&suite.to_be_bytes());
        body.extend_from_slice(&[0, 0, 6, 0, 43, 0, 2, 3, 4]);
    }
    let mut rec = vec![22, 3, 3, 0, 0, typ, 0, 0, body.len() as u8];
    rec.extend_from_slice(&body);
    let len = (rec.len() - 5) as u16;
    rec[3..5].copy_from_slice(&len.to_be_bytes());
    rec
}

/// A client stream: ClientHello, then application records under `secret`.
fn stream(suite: u16, hash: Hash, secret: &[u8]) -> Vec<u8> {
    let key_len = if suite == 0x1301 { 16 } else { 32 };
    let key = expand_label(hash, secret, b"key", b"", key_len).unwrap();
    let iv = expand_label(hash, secret, b"iv", b"", 12).unwrap();
    let mut out = hello(1, suite);
    let mut inner = vec![0x42u8; PLAIN];
    inner.push(23);
    for seq in 0..RECORDS as u64 {
        let len = (inner.len() + 16) as u16;
        let header = [23, 3, 3, (len >> 8) as u8, len as u8];
        let mut nonce = [0u8; 12];
        nonce.copy_from_slice(&iv);
        for (n, s) in nonce[4..].iter_mut().zip(seq.to_be_bytes()) {
            *n ^= s;
        }
        let p = Payload {
            msg: &inner,
            aad: &header,
        };
        let ct = match suite {
            0x1301 => Aes128Gcm::new_from_slice(&key)
                .unwrap()
                .encrypt((&nonce).into(), p),
            0x1302 => Aes256Gcm::new_from_slice(&key)
                .unwrap()
                .encrypt((&nonce).into(), p),
            _ => ChaCha20Poly1305::new_from_slice(&key)
                .unwrap()
                .encrypt((&nonce).into(), p),
        }
        .unwrap();
        out.extend_from_slice(&header);
        out.extend_from_slice(&ct);
    }
    out
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("tls13_decrypt");
    g.throughput(Throughput::Bytes((RECORDS * PLAIN) as u64));
    for (name, suite, hash, n) in [
        ("aes128gcm", 0x1301u16, Hash::Sha256, 32),
        ("aes256gcm", 0x1302, Hash::Sha384, 48),
        ("chacha20poly1305", 0x1303, Hash::Sha256, 32),
    ] {
        let secret = vec![7u8; n];
        let hex: String = secret.iter().map(|b| format!("{b:02x}")).collect();
        let cr: String = [1u8; 32].iter().map(|b| format!("{b:02x}")).collect();
        let keys = KeyLog::parse(&format!(
            "CLIENT_TRAFFIC_SECRET_0 {cr} {hex}\nSERVER_TRAFFIC_SECRET_0 {cr} {hex}\n"
        ));
        let client = stream(suite, hash, &secret);
        let server = hello(2, suite);
        let cfg = TlsConfig::default();
        g.bench_function(name, |b| {
            b.iter(|| {
                let mut k = keys.clone();
                let mut conn = TlsConn::new();
                let mut total = 0usize;
                conn.data(
                    &cfg,
                    Side::Client,
                    &client[..client.len().min(64)],
                    1,
                    0,
                    &mut k,
                    &mut |_| {},
                );
                conn.data(&cfg, Side::Server, &server, 2, 0, &mut k, &mut |_| {});
                for seg in client[client.len().min(64)..].chunks(1460) {
                    conn.data(&cfg, Side::Client, seg, 3, 0, &mut k, &mut |e| {
                        if let kwire::tls::TlsEvent::Plaintext { data, .. } = e {
                            total += data.len();
                        }
                    });
                }
                assert_eq!(total, RECORDS * PLAIN);
                black_box(total)
            })
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
