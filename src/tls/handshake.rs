//! The few handshake messages kwire reads: ClientHello (client random) and
//! ServerHello (server random, version, cipher suite), parsed with nom; and
//! a bounded reassembler for handshake messages that span records.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use nom::bytes::complete::take;
use nom::multi::length_data;
use nom::number::complete::{be_u8, be_u16, be_u24};
use nom::{IResult, Parser};

pub const CLIENT_HELLO: u8 = 1;
pub const SERVER_HELLO: u8 = 2;
pub const FINISHED: u8 = 20;
pub const KEY_UPDATE: u8 = 24;

/// SHA-256("HelloRetryRequest"): the random of a HelloRetryRequest (RFC 8446 section 4.1.3).
const HRR_RANDOM: [u8; 32] = [
    0xCF, 0x21, 0xAD, 0x74, 0xE5, 0x9A, 0x61, 0x11, 0xBE, 0x1D, 0x8C, 0x02, 0x1E, 0x65, 0xB8, 0x91,
    0xC2, 0xA2, 0x11, 0x16, 0x7A, 0xBB, 0x8C, 0x5E, 0x07, 0x9E, 0x09, 0xE2, 0xC8, 0xA8, 0x33, 0x9C,
];

fn random(i: &[u8]) -> IResult<&[u8], [u8; 32]> {
    let (i, r) = take(32usize)(i)?;
    let mut out = [0u8; 32];
    out.copy_from_slice(r);
    Ok((i, out))
}

/// The client random of a ClientHello body.
pub fn client_hello_random(body: &[u8]) -> Option<[u8; 32]> {
    let r: IResult<&[u8], [u8; 32]> = (|i| {
        let (i, _version) = be_u16(i)?;
        random(i)
    })(body);
    r.ok().map(|(_, r)| r)
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServerHello {
    pub random: [u8; 32],
    /// The negotiated version: `supported_versions` when present, else legacy_version.
    pub version: u16,
    pub suite: u16,
    pub retry_request: bool,
}

fn server_hello_inner(i: &[u8]) -> IResult<&[u8], ServerHello> {
    let (i, legacy) = be_u16(i)?;
    let (i, random) = random(i)?;
    let (i, _session) = length_data(be_u8).parse(i)?;
    let (i, suite) = be_u16(i)?;
    let (mut i, _compression) = be_u8(i)?;
    let mut version = legacy;
    if !i.is_empty() {
        let (rest, mut exts) = length_data(be_u16).parse(i)?;
        i = rest;
        while !exts.is_empty() {
            let (rest, typ) = be_u16(exts)?;
            let (rest, data) = length_data(be_u16).parse(rest)?;
            exts = rest;
            if typ == 43 {
                let (_, v) = be_u16(data)?;
                version = v;
            }
        }
    }
    Ok((
        i,
        ServerHello {
            random,
            version,
            suite,
            retry_request: random == HRR_RANDOM,
        },
    ))
}

pub fn server_hello(body: &[u8]) -> Option<ServerHello> {
    server_hello_inner(body).ok().map(|(_, s)| s)
}

/// Reassembles handshake messages from record contents. Bodies of the types
/// asked for are kept up to `cap` bytes; all others are passed over unbuffered.
#[derive(Debug, Default)]
pub struct Reassembler {
    hdr: Vec<u8>,
    typ: u8,
    /// Body bytes still to come of the current message.
    want: usize,
    body: Vec<u8>,
    keep: bool,
    /// A kept message was larger than the cap.
    pub overflowed: bool,
}

impl Reassembler {
    /// Feeds record content; `out` gets (type, body) of each complete message whose
    /// type `keep` accepts, and (type, empty) for the others.
    pub fn feed(
        &mut self,
        mut data: &[u8],
        cap: usize,
        keep: impl Fn(u8) -> bool,
        out: &mut Vec<(u8, Vec<u8>)>,
    ) {
        while !data.is_empty() {
            if self.hdr.len() < 4 {
                let n = (4 - self.hdr.len()).min(data.len());
                let (h, rest) = data.split_at(n);
                self.hdr.extend_from_slice(h);
                data = rest;
                if self.hdr.len() < 4 {
                    return;
                }
                let len: IResult<&[u8], (u8, u32)> = (be_u8, be_u24).parse(&self.hdr);
                let Ok((_, (typ, len))) = len else {
                    return;
                };
                self.typ = typ;
                self.want = len as usize;
                self.keep = keep(typ) && self.want <= cap;
                if keep(typ) && !self.keep {
                    self.overflowed = true;
                }
                self.body.clear();
            }
            let n = self.want.min(data.len());
            let (b, rest) = data.split_at(n);
            if self.keep {
                self.body.extend_from_slice(b);
            }
            self.want -= n;
            data = rest;
            if self.want == 0 {
                out.push((self.typ, std::mem::take(&mut self.body)));
                self.hdr.clear();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::indexing_slicing)]
    use super::*;
    use crate::tls::crypto::tests::{RFC8448_CH, RFC8448_SH, hex};

    #[test]
    fn rfc8448_hellos() {
        let ch = hex(RFC8448_CH);
        let mut out = Vec::new();
        let mut r = Reassembler::default();
        // Fed byte by byte: messages split anywhere still come out whole.
        for b in &ch[5..] {
            r.feed(
                std::slice::from_ref(b),
                1 << 16,
                |t| t == CLIENT_HELLO,
                &mut out,
            );
        }
        assert_eq!(out.len(), 1);
        assert_eq!(
            client_hello_random(&out[0].1).unwrap().to_vec(),
            hex("cb34ecb1e78163ba1c38c6dacb196a6dffa21a8d9912ec18a2ef6283024dece7")
        );
        let sh = server_hello(&hex(RFC8448_SH)[9..]).unwrap();
        assert_eq!(
            (sh.version, sh.suite, sh.retry_request),
            (0x0304, 0x1301, false)
        );
    }

    #[test]
    fn truncated_hellos_are_none() {
        let sh = hex(RFC8448_SH);
        for n in 0..sh.len() - 9 {
            // Cut inside the extensions: the parse fails rather than guessing.
            let r = server_hello(&sh[9..9 + n]);
            if n < 38 {
                assert!(r.is_none(), "{n}");
            }
        }
        assert!(client_hello_random(&[3, 3, 1]).is_none());
    }

    #[test]
    fn oversized_messages_are_skipped_not_buffered() {
        let mut r = Reassembler::default();
        let mut out = Vec::new();
        r.feed(&[1, 0x00, 0x10, 0x00], 16, |t| t == 1, &mut out);
        r.feed(&[0u8; 0x1000], 16, |t| t == 1, &mut out);
        assert!(r.overflowed);
        assert_eq!(out, vec![(1, vec![])]);
        assert!(r.body.capacity() < 64);
    }
}
