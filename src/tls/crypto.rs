//! Cipher suites, the TLS 1.2 PRF, the TLS 1.3 key schedule and record
//! protection (AEAD only: AES-GCM and ChaCha20-Poly1305).
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use aes_gcm::aead::{Aead, KeyInit, Payload};
use aes_gcm::{Aes128Gcm, Aes256Gcm};
use chacha20poly1305::ChaCha20Poly1305;
use hkdf::Hkdf;
use hmac::{Hmac, Mac};
use sha2::{Sha256, Sha384};

/// AEAD tag length of every supported suite.
pub const TAG_LEN: usize = 16;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Hash {
    Sha256,
    Sha384,
}

impl Hash {
    pub fn output_len(self) -> usize {
        match self {
            Hash::Sha256 => 32,
            Hash::Sha384 => 48,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AeadKind {
    Aes128Gcm,
    Aes256Gcm,
    ChaCha20Poly1305,
}

impl AeadKind {
    pub fn key_len(self) -> usize {
        match self {
            AeadKind::Aes128Gcm => 16,
            AeadKind::Aes256Gcm | AeadKind::ChaCha20Poly1305 => 32,
        }
    }
}

/// A cipher suite kwire can decrypt.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Suite {
    pub id: u16,
    pub aead: AeadKind,
    pub hash: Hash,
    pub tls13: bool,
}

/// The suite with this id, when kwire can decrypt it.
pub fn suite(id: u16) -> Option<Suite> {
    use AeadKind::*;
    use Hash::*;
    let (aead, hash, tls13) = match id {
        0x1301 => (Aes128Gcm, Sha256, true),
        0x1302 => (Aes256Gcm, Sha384, true),
        0x1303 => (ChaCha20Poly1305, Sha256, true),
        // TLS 1.2 AEAD suites: RSA, DHE and ECDHE key exchange all end in the master secret.
        0x009C | 0x009E | 0x00A2 | 0xC02B | 0xC02F => (Aes128Gcm, Sha256, false),
        0x009D | 0x009F | 0x00A3 | 0xC02C | 0xC030 => (Aes256Gcm, Sha384, false),
        0xCCA8..=0xCCAA => (ChaCha20Poly1305, Sha256, false),
        _ => return None,
    };
    Some(Suite {
        id,
        aead,
        hash,
        tls13,
    })
}

/// IANA name of a cipher suite, for the statistics (`0x….` when not known here).
pub fn suite_name(id: u16) -> String {
    let name = match id {
        0x1301 => "TLS_AES_128_GCM_SHA256",
        0x1302 => "TLS_AES_256_GCM_SHA384",
        0x1303 => "TLS_CHACHA20_POLY1305_SHA256",
        0x1304 => "TLS_AES_128_CCM_SHA256",
        0x1305 => "TLS_AES_128_CCM_8_SHA256",
        0x002F => "TLS_RSA_WITH_AES_128_CBC_SHA",
        0x0035 => "TLS_RSA_WITH_AES_256_CBC_SHA",
        0x003C => "TLS_RSA_WITH_AES_128_CBC_SHA256",
        0x003D => "TLS_RSA_WITH_AES_256_CBC_SHA256",
        0x009C => "TLS_RSA_WITH_AES_128_GCM_SHA256",
        0x009D => "TLS_RSA_WITH_AES_256_GCM_SHA384",
        0x009E => "TLS_DHE_RSA_WITH_AES_128_GCM_SHA256",
        0x009F => "TLS_DHE_RSA_WITH_AES_256_GCM_SHA384",
        0x00A2 => "TLS_DHE_DSS_WITH_AES_128_GCM_SHA256",
        0x00A3 => "TLS_DHE_DSS_WITH_AES_256_GCM_SHA384",
        0xC009 => "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA",
        0xC00A => "TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA",
        0xC013 => "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA",
        0xC014 => "TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA",
        0xC023 => "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256",
        0xC024 => "TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA384",
        0xC027 => "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256",
        0xC028 => "TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA384",
        0xC02B => "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256",
        0xC02C => "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384",
        0xC02F => "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
        0xC030 => "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384",
        0xC09C => "TLS_RSA_WITH_AES_128_CCM",
        0xC09D => "TLS_RSA_WITH_AES_256_CCM",
        0xCCA8 => "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256",
        0xCCA9 => "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256",
        0xCCAA => "TLS_DHE_RSA_WITH_CHACHA20_POLY1305_SHA256",
        _ => return format!("0x{id:04X}"),
    };
    name.to_string()
}

fn hmac_into<M: Mac + KeyInit + Clone>(mac: &M, parts: &[&[u8]]) -> Vec<u8> {
    let mut m = mac.clone();
    for p in parts {
        m.update(p);
    }
    m.finalize().into_bytes().to_vec()
}

fn p_hash<M: Mac + KeyInit + Clone>(secret: &[u8], label: &[u8], seed: &[&[u8]], out: &mut [u8]) {
    let Ok(mac) = <M as KeyInit>::new_from_slice(secret) else {
        return; // HMAC takes keys of any length
    };
    let mut label_seed: Vec<u8> = label.to_vec();
    for s in seed {
        label_seed.extend_from_slice(s);
    }
    let mut a = hmac_into(&mac, &[&label_seed]);
    let mut done = 0;
    while done < out.len() {
        let block = hmac_into(&mac, &[&a, &label_seed]);
        for (o, b) in out.iter_mut().skip(done).zip(block.iter()) {
            *o = *b;
        }
        done += block.len();
        a = hmac_into(&mac, &[&a]);
    }
}

/// The TLS 1.2 PRF (RFC 5246 section 5) with the suite's hash.
pub fn prf(hash: Hash, secret: &[u8], label: &[u8], seed: &[&[u8]], out: &mut [u8]) {
    match hash {
        Hash::Sha256 => p_hash::<Hmac<Sha256>>(secret, label, seed, out),
        Hash::Sha384 => p_hash::<Hmac<Sha384>>(secret, label, seed, out),
    }
}

/// HKDF-Expand-Label (RFC 8446 section 7.1); `None` when the secret is shorter than the hash.
pub fn expand_label(
    hash: Hash,
    secret: &[u8],
    label: &[u8],
    context: &[u8],
    len: usize,
) -> Option<Vec<u8>> {
    let full_len = 6 + label.len();
    let mut info = Vec::with_capacity(4 + full_len + context.len());
    info.extend_from_slice(&u16::try_from(len).ok()?.to_be_bytes());
    info.push(u8::try_from(full_len).ok()?);
    info.extend_from_slice(b"tls13 ");
    info.extend_from_slice(label);
    info.push(u8::try_from(context.len()).ok()?);
    info.extend_from_slice(context);
    let mut out = vec![0u8; len];
    match hash {
        Hash::Sha256 => Hkdf::<Sha256>::from_prk(secret)
            .ok()?
            .expand(&info, &mut out)
            .ok()?,
        Hash::Sha384 => Hkdf::<Sha384>::from_prk(secret)
            .ok()?
            .expand(&info, &mut out)
            .ok()?,
    }
    Some(out)
}

/// The next application traffic secret after a KeyUpdate (RFC 8446 section 7.2).
pub fn next_traffic_secret(hash: Hash, secret: &[u8]) -> Option<Vec<u8>> {
    expand_label(hash, secret, b"traffic upd", b"", hash.output_len())
}

enum Cipher {
    Aes128(Box<Aes128Gcm>),
    Aes256(Box<Aes256Gcm>),
    ChaCha(Box<ChaCha20Poly1305>),
}

impl Cipher {
    fn new(kind: AeadKind, key: &[u8]) -> Option<Cipher> {
        Some(match kind {
            AeadKind::Aes128Gcm => Cipher::Aes128(Box::new(Aes128Gcm::new_from_slice(key).ok()?)),
            AeadKind::Aes256Gcm => Cipher::Aes256(Box::new(Aes256Gcm::new_from_slice(key).ok()?)),
            AeadKind::ChaCha20Poly1305 => {
                Cipher::ChaCha(Box::new(ChaCha20Poly1305::new_from_slice(key).ok()?))
            }
        })
    }

    fn open(&self, nonce: &[u8; 12], aad: &[u8], msg: &[u8]) -> Option<Vec<u8>> {
        let p = Payload { msg, aad };
        match self {
            Cipher::Aes128(c) => c.decrypt(nonce.into(), p).ok(),
            Cipher::Aes256(c) => c.decrypt(nonce.into(), p).ok(),
            Cipher::ChaCha(c) => c.decrypt(nonce.into(), p).ok(),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Layout {
    /// TLS 1.3: nonce = iv XOR seq, AAD = the record header.
    Tls13,
    /// TLS 1.2 AES-GCM: 4-byte salt + 8-byte explicit nonce carried in the record.
    Tls12Gcm,
    /// TLS 1.2 ChaCha20-Poly1305 (RFC 7905): nonce = iv XOR seq.
    Tls12ChaCha,
}

/// One direction's record protection key. Its Debug shows no key material.
pub struct RecordKey {
    cipher: Cipher,
    iv: [u8; 12],
    layout: Layout,
}

impl std::fmt::Debug for RecordKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "RecordKey({:?}, redacted)", self.layout)
    }
}

impl RecordKey {
    /// TLS 1.3 traffic key and IV from a traffic secret.
    pub fn tls13(suite: Suite, secret: &[u8]) -> Option<RecordKey> {
        let key = expand_label(suite.hash, secret, b"key", b"", suite.aead.key_len())?;
        let iv = expand_label(suite.hash, secret, b"iv", b"", 12)?;
        Some(RecordKey {
            cipher: Cipher::new(suite.aead, &key)?,
            iv: iv.try_into().ok()?,
            layout: Layout::Tls13,
        })
    }

    /// TLS 1.2 client and server keys from the master secret (RFC 5246 section 6.3).
    pub fn tls12_pair(
        suite: Suite,
        master: &[u8],
        client_random: &[u8; 32],
        server_random: &[u8; 32],
    ) -> Option<(RecordKey, RecordKey)> {
        let key_len = suite.aead.key_len();
        let (iv_len, layout) = match suite.aead {
            AeadKind::ChaCha20Poly1305 => (12, Layout::Tls12ChaCha),
            _ => (4, Layout::Tls12Gcm),
        };
        let mut block = vec![0u8; 2 * (key_len + iv_len)];
        prf(
            suite.hash,
            master,
            b"key expansion",
            &[server_random, client_random],
            &mut block,
        );
        let ck = block.get(..key_len)?;
        let sk = block.get(key_len..2 * key_len)?;
        let civ = block.get(2 * key_len..2 * key_len + iv_len)?;
        let siv = block.get(2 * key_len + iv_len..)?;
        let mk = |k: &[u8], iv: &[u8]| -> Option<RecordKey> {
            let mut full = [0u8; 12];
            for (d, s) in full.iter_mut().zip(iv) {
                *d = *s;
            }
            Some(RecordKey {
                cipher: Cipher::new(suite.aead, k)?,
                iv: full,
                layout,
            })
        };
        Some((mk(ck, civ)?, mk(sk, siv)?))
    }

    fn xor_nonce(&self, seq: u64) -> [u8; 12] {
        let mut n = self.iv;
        for (d, s) in n.iter_mut().skip(4).zip(seq.to_be_bytes()) {
            *d ^= s;
        }
        n
    }

    /// Encrypts one record (tests build connections with it).
    #[cfg(test)]
    #[allow(clippy::unwrap_used, clippy::indexing_slicing)]
    pub(crate) fn seal(&self, seq: u64, ctype: u8, content: &[u8]) -> Vec<u8> {
        use aes_gcm::aead::Aead as _;
        let (outer, inner, explicit) = match self.layout {
            Layout::Tls13 => (23u8, [content, &[ctype]].concat(), 0usize),
            Layout::Tls12Gcm => (ctype, content.to_vec(), 8),
            Layout::Tls12ChaCha => (ctype, content.to_vec(), 0),
        };
        let body_len = explicit + inner.len() + TAG_LEN;
        let mut header = vec![outer, 3, 3];
        header.extend_from_slice(&(body_len as u16).to_be_bytes());
        let (nonce, aad) = match self.layout {
            Layout::Tls13 => (self.xor_nonce(seq), header.clone()),
            _ => {
                let mut aad = seq.to_be_bytes().to_vec();
                aad.extend_from_slice(&header[..3]);
                aad.extend_from_slice(&(inner.len() as u16).to_be_bytes());
                let mut n = self.iv;
                if explicit > 0 {
                    n[4..].copy_from_slice(&seq.wrapping_mul(7).to_be_bytes());
                    (n, aad)
                } else {
                    (self.xor_nonce(seq), aad)
                }
            }
        };
        let p = Payload {
            msg: &inner,
            aad: &aad,
        };
        let ct = match &self.cipher {
            Cipher::Aes128(c) => c.encrypt((&nonce).into(), p),
            Cipher::Aes256(c) => c.encrypt((&nonce).into(), p),
            Cipher::ChaCha(c) => c.encrypt((&nonce).into(), p),
        }
        .unwrap();
        let mut rec = header;
        if explicit > 0 {
            rec.extend_from_slice(&nonce[4..]);
        }
        rec.extend_from_slice(&ct);
        rec
    }

    /// Decrypts one record body (`header` is its 5-byte header); `None` when it
    /// fails authentication or is too short. For TLS 1.3 the result still ends in
    /// the inner content type and padding.
    pub fn open(&self, seq: u64, header: &[u8; 5], body: &[u8]) -> Option<Vec<u8>> {
        match self.layout {
            Layout::Tls13 => {
                if body.len() < TAG_LEN + 1 {
                    return None;
                }
                self.cipher.open(&self.xor_nonce(seq), header, body)
            }
            Layout::Tls12Gcm | Layout::Tls12ChaCha => {
                let explicit = if self.layout == Layout::Tls12Gcm {
                    8
                } else {
                    0
                };
                let plain_len = body.len().checked_sub(explicit + TAG_LEN)?;
                let mut aad = [0u8; 13];
                let (s, rest) = aad.split_at_mut(8);
                s.copy_from_slice(&seq.to_be_bytes());
                let (t, l) = rest.split_at_mut(3);
                t.copy_from_slice(header.get(..3)?);
                l.copy_from_slice(&u16::try_from(plain_len).ok()?.to_be_bytes());
                let nonce = if explicit > 0 {
                    let mut n = self.iv;
                    let (_, tail) = n.split_at_mut(4);
                    tail.copy_from_slice(body.get(..8)?);
                    n
                } else {
                    self.xor_nonce(seq)
                };
                self.cipher.open(&nonce, &aad, body.get(explicit..)?)
            }
        }
    }
}

/// Splits a decrypted TLS 1.3 record into (content type, content): the last
/// non-zero byte is the type, zeros after it are padding.
pub fn inner_plaintext(mut p: Vec<u8>) -> Option<(u8, Vec<u8>)> {
    while let Some(&last) = p.last() {
        p.pop();
        if last != 0 {
            return Some((last, p));
        }
    }
    None
}

#[cfg(test)]
pub(crate) mod tests {
    #![allow(clippy::unwrap_used, clippy::indexing_slicing)]
    use super::*;
    use sha2::Digest;

    pub(crate) fn hex(s: &str) -> Vec<u8> {
        let s: String = s.chars().filter(|c| !c.is_whitespace()).collect();
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    }

    // TLS 1.2 PRF vectors posted to the IETF TLS list (msg03416); also what
    // `openssl kdf -kdfopt digest:SHA256 ... TLS1-PRF` prints.
    #[test]
    fn prf_sha256_vector() {
        let mut out = [0u8; 100];
        prf(
            Hash::Sha256,
            &hex("9bbe436ba940f017b17652849a71db35"),
            b"test label",
            &[&hex("a0ba9f936cda311827a6f796ffd5198c")],
            &mut out,
        );
        assert_eq!(
            out.to_vec(),
            hex(
                "e3f229ba727be17b8d122620557cd453c2aab21d07c3d495329b52d4e61edb5a\
                 6b301791e90d35c9c9a46b4e14baf9af0fa022f7077def17abfd3797c0564bab\
                 4fbc91666e9def9b97fce34f796789baa48082d122ee42c5a72e5a5110fff701\
                 87347b66"
            )
        );
    }

    #[test]
    fn prf_sha384_vector() {
        let mut out = [0u8; 148];
        let seed = hex("cd665cf6a8447dd6ff8b27555edb7465");
        // The seed in two parts must give the same bytes.
        prf(
            Hash::Sha384,
            &hex("b80b733d6ceefcdc71566ea48e5567df"),
            b"test label",
            &[&seed[..5], &seed[5..]],
            &mut out,
        );
        assert_eq!(
            out.to_vec(),
            hex(
                "7b0c18e9ced410ed1804f2cfa34a336a1c14dffb4900bb5fd7942107e81c83cd\
                 e9ca0faa60be9fe34f82b1233c9146a0e534cb400fed2700884f9dc236f80edd\
                 8bfa961144c9e8d792eca722a7b32fc3d416d473ebc2c5fd4abfdad05d918425\
                 9b5bf8cd4d90fa0d31e2dec479e4f1a26066f2eea9a69236a3e52655c9e9aee6\
                 91c8f3a26854308d5eaa3be85e0990703d73e56f"
            )
        );
    }

    fn derive_secret(secret: &[u8], label: &[u8], transcript: &[u8]) -> Vec<u8> {
        let h = Sha256::digest(transcript);
        expand_label(Hash::Sha256, secret, label, &h, 32).unwrap()
    }

    fn extract(salt: &[u8], ikm: &[u8]) -> Vec<u8> {
        Hkdf::<Sha256>::extract(Some(salt), ikm).0.to_vec()
    }

    /// RFC 8448 section 3 (simple 1-RTT): the whole key schedule from the
    /// (EC)DHE shared secret to the traffic keys.
    #[test]
    fn rfc8448_key_schedule() {
        let ch = hex(RFC8448_CH);
        let sh = hex(RFC8448_SH);
        let early = extract(&[0; 32], &[0; 32]);
        assert_eq!(
            early,
            hex("33ad0a1c607ec03b09e6cd9893680ce210adf300aa1f2660e1b22e10f170f92a")
        );
        let derived = derive_secret(&early, b"derived", b"");
        assert_eq!(
            derived,
            hex("6f2615a108c702c5678f54fc9dbab69716c076189c48250cebeac3576c3611ba")
        );
        let shared = hex("8bd4054fb55b9d63fdfbacf9f04b9f0d35e6d63f537563efd46272900f89492d");
        let hs = extract(&derived, &shared);
        assert_eq!(
            hs,
            hex("1dc826e93606aa6fdc0aadc12f741b01046aa6b99f691ed221a9f0ca043fbeac")
        );
        let ch_sh = [&ch[5..], &sh[5..]].concat();
        let c_hs = derive_secret(&hs, b"c hs traffic", &ch_sh);
        let s_hs = derive_secret(&hs, b"s hs traffic", &ch_sh);
        assert_eq!(c_hs, hex(C_HS));
        assert_eq!(s_hs, hex(S_HS));
        let master = extract(&derive_secret(&hs, b"derived", b""), &[0; 32]);
        assert_eq!(
            master,
            hex("18df06843d13a08bf2a449844c5f8a478001bc4d4c627984d5a41da8d0402919")
        );
        let s1301 = suite(0x1301).unwrap();
        let key = |s: &[u8], l: &[u8], n| expand_label(Hash::Sha256, s, l, b"", n).unwrap();
        assert_eq!(
            key(&s_hs, b"key", 16),
            hex("3fce516009c21727d0f2e4e86ee403bc")
        );
        assert_eq!(key(&s_hs, b"iv", 12), hex("5d313eb2671276ee13000b30"));
        assert_eq!(
            key(&c_hs, b"key", 16),
            hex("dbfaa693d1762c5b666af5d950258d01")
        );
        assert_eq!(key(&c_hs, b"iv", 12), hex("5bd3c71b836e0b76bb73265f"));
        let c_ap = hex(C_AP);
        let s_ap = hex(S_AP);
        assert_eq!(
            key(&s_ap, b"key", 16),
            hex("9f02283b6c9c07efc26bb9f2ac92e356")
        );
        assert_eq!(key(&s_ap, b"iv", 12), hex("cf782b88dd83549aadf1e984"));
        assert_eq!(
            key(&c_ap, b"key", 16),
            hex("17422dda596ed5d9acd890e3c63f5051")
        );
        assert_eq!(key(&c_ap, b"iv", 12), hex("5b78923dee08579033e523d9"));
        assert!(RecordKey::tls13(s1301, &c_ap).is_some());
    }

    /// RFC 8448 section 3: the client's first application record (seq 0) and
    /// the server's (seq 1, after its NewSessionTicket) decrypt to bytes 0..50.
    #[test]
    fn rfc8448_record_protection() {
        let s = suite(0x1301).unwrap();
        let want: Vec<u8> = (0u8..50).collect();
        for (secret, record, seq) in [(C_AP, RFC8448_C_DATA, 0), (S_AP, RFC8448_S_DATA, 1)] {
            let k = RecordKey::tls13(s, &hex(secret)).unwrap();
            let rec = hex(record);
            let header: [u8; 5] = rec[..5].try_into().unwrap();
            let p = k.open(seq, &header, &rec[5..]).unwrap();
            assert_eq!(inner_plaintext(p).unwrap(), (23, want.clone()));
            // Any other sequence number, or one flipped bit, fails authentication.
            assert!(k.open(seq + 1, &header, &rec[5..]).is_none());
            let mut bad = rec[5..].to_vec();
            bad[3] ^= 1;
            assert!(k.open(seq, &header, &bad).is_none());
        }
    }

    #[test]
    fn key_update_derives_a_different_secret() {
        let next = next_traffic_secret(Hash::Sha256, &hex(C_AP)).unwrap();
        assert_eq!(next.len(), 32);
        assert_ne!(next, hex(C_AP));
    }

    #[test]
    fn suites_and_names() {
        assert!(suite(0xC02F).is_some_and(|s| !s.tls13));
        assert!(suite(0xC013).is_none());
        assert_eq!(suite_name(0xC013), "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA");
        assert_eq!(suite_name(0xABCD), "0xABCD");
    }

    // RFC 8448 section 3 values, shared with the connection tests.
    pub(crate) const C_HS: &str =
        "b3eddb126e067f35a780b3abf45e2d8f3b1a950738f52e9600746a0e27a55a21";
    pub(crate) const S_HS: &str =
        "b67b7d690cc16c4e75e54213cb2d37b4e9c912bcded9105d42befd59d391ad38";
    pub(crate) const C_AP: &str =
        "9e40646ce79a7f9dc05af8889bce6552875afa0b06df0087f792ebb7c17504a5";
    pub(crate) const S_AP: &str =
        "a11af9f05531f856ad47116b45a950328204b4f44bfb6b3a4b4f1f3fcb631643";
    pub(crate) const RFC8448_CH: &str = "16030100c4010000c00303cb34ecb1e78163ba1c38c6dacb196a6dffa21a8d9912ec18a2ef6283024dece7000006130113031302010000910000000b0009000006736572766572ff01000100000a00140012001d0017001800190100010101020103010400230000003300260024001d002099381de560e4bd43d23d8e435a7dbafeb3c06e51c13cae4d5413691e529aaf2c002b0003020304000d0020001e040305030603020308040805080604010501060102010402050206020202002d00020101001c00024001";
    pub(crate) const RFC8448_SH: &str = "160303005a020000560303a6af06a4121860dc5e6e60249cd34c95930c8ac5cb1434dac155772ed3e2692800130100002e00330024001d0020c9828876112095fe66762bdbf7c672e156d6cc253b833df1dd69b1b04e751f0f002b00020304";
    pub(crate) const RFC8448_C_FIN: &str = "170303003575ec4dc238cce60b298044a71e219c56cc77b0517fe9b93c7a4bfc44d87f38f80338ac98fc46deb384bd1caeacab6867d726c40546";
    pub(crate) const RFC8448_S_NST: &str = "17030300de3a6b8f90414a97d6959c3487680de5134a2b240e6cffac116e95d41d6af8f6b580dcf3d11d63c758db289a015940252f55713e061dc13e078891a38efbcf5753ad8ef170ad3c7353d16d9da773b9ca7f2b9fa1b6c0d4a3d03f75e09c30ba1e62972ac46f75f7b981be63439b2999ce13064615139891d5e4c5b406f16e3fc181a77ca475840025db2f0a77f81b5ab05b94c01346755f69232c86519d86cbeeac87aac347d143f9605d64f650db4d023e70e952ca49fe5137121c74bc2697687e248746d6df353005f3bce18696129c8153556b3b6c6779b37bf15985684f";
    pub(crate) const RFC8448_C_DATA: &str = "1703030043a23f7054b62c94d0affafe8228ba55cbefacea42f914aa66bcab3f2b9819a8a5b46b395bd54a9a20441e2b62974e1f5a6292a2977014bd1e3deae63aeebb21694915e4";
    pub(crate) const RFC8448_S_DATA: &str = "17030300432e937e11ef4ac740e538ad36005fc4a46932fc3225d05f82aa1b36e30efaf97d90e6dffc602dcb501a59a8fcc49c4bf2e5f0a21c0047c2abf332540dd032e167c2955d";
    pub(crate) const RFC8448_C_ALERT: &str = "1703030013c9872760655666b74d7ff1153efd6db6d0b0e3";
    pub(crate) const RFC8448_S_ALERT: &str = "1703030013b58fd67166ebf599d24720cfbe7efa7a8864a9";
    pub(crate) const RFC8448_S_FLIGHT: &str = "17030302a2d1ff334a56f5bff6594a07cc87b580233f500f45e489e7f33af35edf7869fcf40aa40aa2b8ea73f848a7ca07612ef9f945cb960b4068905123ea78b111b429ba9191cd05d2a389280f526134aadc7fc78c4b729df828b5ecf7b13bd9aefb0e57f271585b8ea9bb355c7c79020716cfb9b1183ef3ab20e37d57a6b9d7477609aee6e122a4cf51427325250c7d0e509289444c9b3a648f1d71035d2ed65b0e3cdd0cbae8bf2d0b227812cbb360987255cc744110c453baa4fcd610928d809810e4b7ed1a8fd991f06aa6248204797e36a6a73b70a2559c09ead686945ba246ab66e5edd8044b4c6de3fcf2a89441ac66272fd8fb330ef8190579b3684596c960bd596eea520a56a8d650f563aad27409960dca63d3e688611ea5e22f4415cf9538d51a200c27034272968a264ed6540c84838d89f72c24461aad6d26f59ecaba9acbbb317b66d902f4f292a36ac1b639c637ce343117b659622245317b49eeda0c6258f100d7d961ffb138647e92ea330faeea6dfa31c7a84dc3bd7e1b7a6c7178af36879018e3f252107f243d243dc7339d5684c8b0378bf30244da8c87c843f5e56eb4c5e8280a2b48052cf93b16499a66db7cca71e4599426f7d461e66f99882bd89fc50800becca62d6c74116dbd2972fda1fa80f85df881edbe5a37668936b335583b599186dc5c6918a396fa48a181d6b6fa4f9d62d513afbb992f2b992f67f8afe67f76913fa388cb5630c8ca01e0c65d11c66a1e2ac4c85977b7c7a6999bbf10dc35ae69f5515614636c0b9b68c19ed2e31c0b3b66763038ebba42f3b38edc0399f3a9f23faa63978c317fc9fa66a73f60f0504de93b5b845e275592c12335ee340bbc4fddd502784016e4b3be7ef04dda49f4b440a30cb5d2af939828fd4ae3794e44f94df5a631ede42c1719bfdabf0253fe5175be898e750edc53370d2b";
}
