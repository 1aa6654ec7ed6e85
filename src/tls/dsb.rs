//! TLS key logs carried inside a pcapng file: its Decryption Secrets Blocks
//! (block type 0x0000000A, secrets type `TLSK`), as `editcap --inject-secrets`
//! writes them. A small block walker of its own, so that the keys are known
//! before the first packet is dissected; it reads block headers and skips
//! every other block's body.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use super::KeyLog;
use std::io::{Read, Seek, SeekFrom};

const SHB: u32 = 0x0A0D_0D0A;
const DSB: u32 = 0x0000_000A;
/// Secrets type of an NSS key log.
pub const TLS_KEY_LOG: u32 = 0x544C_534B;
/// Largest DSB read; bigger ones are skipped (a key log line is ~200 bytes).
const MAX_SECRETS: u32 = 64 << 20;

/// What a file's Decryption Secrets Blocks held.
#[derive(Debug, Default)]
pub struct Secrets {
    pub keys: KeyLog,
    /// TLS key-log blocks read.
    pub blocks: u64,
    /// Blocks of other secret types (SSH, WireGuard, …) or too large.
    pub skipped: u64,
}

/// Reads the TLS secrets of a pcapng file; `None` when it is not pcapng.
pub fn read(path: &std::path::Path) -> std::io::Result<Option<Secrets>> {
    let f = std::fs::File::open(path)?;
    read_from(std::io::BufReader::new(f))
}

/// As [`read`], from any seekable reader.
pub fn read_from<R: Read + Seek>(mut r: R) -> std::io::Result<Option<Secrets>> {
    let mut head = [0u8; 12];
    if r.read_exact(&mut head).is_err() {
        return Ok(None);
    }
    let [t0, t1, t2, t3, _, _, _, _, m0, m1, m2, m3] = head;
    if u32::from_le_bytes([t0, t1, t2, t3]) != SHB {
        return Ok(None);
    }
    let le = match u32::from_le_bytes([m0, m1, m2, m3]) {
        0x1A2B_3C4D => true,
        0x4D3C_2B1A => false,
        _ => return Ok(None),
    };
    let mut out = Secrets::default();
    let u32_of = |b: [u8; 4], le: bool| {
        if le {
            u32::from_le_bytes(b)
        } else {
            u32::from_be_bytes(b)
        }
    };
    r.seek(SeekFrom::Start(0))?;
    let mut le = le;
    loop {
        let mut bh = [0u8; 8];
        if r.read_exact(&mut bh).is_err() {
            break; // end of file, or a cut last block
        }
        let [a0, a1, a2, a3, b0, b1, b2, b3] = bh;
        let typ_raw = [a0, a1, a2, a3];
        if u32::from_le_bytes(typ_raw) == SHB {
            // Each section may change byte order.
            let mut m = [0u8; 4];
            if r.read_exact(&mut m).is_err() {
                break;
            }
            le = match u32::from_le_bytes(m) {
                0x1A2B_3C4D => true,
                0x4D3C_2B1A => false,
                _ => break,
            };
            r.seek(SeekFrom::Current(-4))?;
        }
        let typ = u32_of(typ_raw, le);
        let len = u32_of([b0, b1, b2, b3], le);
        if len < 12 || len % 4 != 0 {
            break; // damaged: stop, keep what was read
        }
        let body = u64::from(len) - 8;
        if typ == DSB && body >= 12 {
            let mut dh = [0u8; 8];
            if r.read_exact(&mut dh).is_err() {
                break; // a cut last block
            }
            let [s0, s1, s2, s3, l0, l1, l2, l3] = dh;
            let stype = u32_of([s0, s1, s2, s3], le);
            let slen = u32_of([l0, l1, l2, l3], le);
            if stype == TLS_KEY_LOG && slen <= MAX_SECRETS && u64::from(slen) + 12 <= body {
                let mut data = Vec::new();
                (&mut r).take(u64::from(slen)).read_to_end(&mut data)?;
                if data.len() < slen as usize {
                    break;
                }
                out.keys.add_text(&String::from_utf8_lossy(&data));
                out.blocks += 1;
                r.seek(SeekFrom::Current(body as i64 - 8 - i64::from(slen)))?;
            } else {
                out.skipped += 1;
                r.seek(SeekFrom::Current(body as i64 - 8))?;
            }
        } else {
            r.seek(SeekFrom::Current(body as i64))?;
        }
    }
    Ok(Some(out))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::indexing_slicing)]
    use super::*;
    use std::io::Cursor;

    fn block(typ: u32, body: &[u8]) -> Vec<u8> {
        let len = (12 + body.len().div_ceil(4) * 4) as u32;
        let mut b = typ.to_le_bytes().to_vec();
        b.extend_from_slice(&len.to_le_bytes());
        b.extend_from_slice(body);
        b.resize(len as usize - 4, 0);
        b.extend_from_slice(&len.to_le_bytes());
        b
    }

    fn shb() -> Vec<u8> {
        let mut body = 0x1A2B_3C4Du32.to_le_bytes().to_vec();
        body.extend_from_slice(&[1, 0, 0, 0]);
        body.extend_from_slice(&[0xFF; 8]);
        block(SHB, &body)
    }

    fn dsb(stype: u32, text: &str) -> Vec<u8> {
        let mut body = stype.to_le_bytes().to_vec();
        body.extend_from_slice(&(text.len() as u32).to_le_bytes());
        body.extend_from_slice(text.as_bytes());
        block(DSB, &body)
    }

    #[test]
    fn reads_tls_secrets_and_skips_the_rest() {
        let line = format!("CLIENT_RANDOM {} {}\n", "ab".repeat(32), "cd".repeat(48));
        let mut f = shb();
        f.extend(block(1, &[1, 0, 0, 0, 0, 0, 4, 0])); // an interface
        f.extend(dsb(0x5353_484B, "SSH secrets")); // SSHK
        f.extend(dsb(TLS_KEY_LOG, &line));
        f.extend(block(6, &[0; 20]));
        let s = read_from(Cursor::new(f)).unwrap().unwrap();
        assert_eq!((s.blocks, s.skipped, s.keys.len()), (1, 1, 1));
    }

    #[test]
    fn not_pcapng_or_damaged() {
        assert!(
            read_from(Cursor::new(vec![0xD4, 0xC3, 0xB2, 0xA1, 0, 0]))
                .unwrap()
                .is_none()
        );
        let mut f = shb();
        f.extend([0x0A, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0x7F, 1, 2]); // a DSB claiming 2 GB
        let s = read_from(Cursor::new(f)).unwrap().unwrap();
        assert_eq!(s.blocks, 0);
        // A secrets length past its block is not read.
        let mut f = shb();
        let mut bad = dsb(TLS_KEY_LOG, "CLIENT_RANDOM");
        bad[12..16].copy_from_slice(&1000u32.to_le_bytes());
        f.extend(bad);
        let s = read_from(Cursor::new(f)).unwrap().unwrap();
        assert_eq!((s.blocks, s.skipped), (0, 1));
        // Cut anywhere: never an error, never a panic.
        let mut f = shb();
        f.extend(dsb(TLS_KEY_LOG, &"CLIENT_RANDOM x y\n".repeat(10)));
        for n in 0..f.len() {
            assert!(read_from(Cursor::new(f[..n].to_vec())).is_ok(), "{n}");
        }
    }

    #[test]
    fn editcap_injected_secrets_when_available() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("dsb.pcapng");
        let ok = std::process::Command::new("editcap")
            .args(["--inject-secrets", "tls,captures/tls-resumption.keys"])
            .arg("captures/tls-resumption.pcap")
            .arg(&out)
            .status()
            .is_ok_and(|s| s.success());
        if !ok {
            eprintln!("skipped: editcap is missing");
            return;
        }
        let s = read(&out).unwrap().unwrap();
        let direct =
            KeyLog::from_file(std::path::Path::new("captures/tls-resumption.keys")).unwrap();
        assert_eq!((s.blocks, s.keys.len()), (1, direct.len()));
    }
}
