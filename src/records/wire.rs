//! Bounds-checked big-endian and varint reads over one buffer, with positions.
#![cfg_attr(
    not(test),
    deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)
)]

use std::fmt;

/// Why a batch, message or record could not be read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Fail {
    /// `need` bytes were wanted at `at` but only `have` remain.
    Truncated { at: usize, need: u64, have: u64 },
    /// A varint longer than Kafka allows (5 bytes, or 10 for a varlong).
    VarintTooLong { at: usize },
    /// A length or count below -1 (or below 0 where null is not allowed).
    Negative {
        at: usize,
        what: &'static str,
        value: i64,
    },
    /// Anything else, already worded.
    Other(String),
}

impl fmt::Display for Fail {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Fail::Truncated { at, need, have } => {
                write!(
                    f,
                    "truncated at byte {at}: need {need} bytes, {have} remain"
                )
            }
            Fail::VarintTooLong { at } => write!(f, "varint too long at byte {at}"),
            Fail::Negative { at, what, value } => {
                write!(f, "invalid {what} {value} at byte {at}")
            }
            Fail::Other(s) => f.write_str(s),
        }
    }
}

impl Fail {
    /// The same failure with its position `by` bytes further on.
    pub(crate) fn shifted(self, by: usize) -> Fail {
        match self {
            Fail::Truncated { at, need, have } => Fail::Truncated {
                at: at + by,
                need,
                have,
            },
            Fail::VarintTooLong { at } => Fail::VarintTooLong { at: at + by },
            Fail::Negative { at, what, value } => Fail::Negative {
                at: at + by,
                what,
                value,
            },
            Fail::Other(s) => Fail::Other(s),
        }
    }
}

/// A read position over one buffer; positions are absolute within it.
#[derive(Clone, Copy)]
pub(crate) struct Cur<'a> {
    buf: &'a [u8],
    pub pos: usize,
}

impl<'a> Cur<'a> {
    pub fn new(buf: &'a [u8], pos: usize) -> Self {
        Cur { buf, pos }
    }

    pub fn remaining(&self) -> usize {
        self.buf.len().saturating_sub(self.pos)
    }

    pub fn take(&mut self, n: usize) -> Result<&'a [u8], Fail> {
        let end = self.pos.checked_add(n);
        match end.and_then(|e| self.buf.get(self.pos..e)) {
            Some(s) => {
                self.pos += n;
                Ok(s)
            }
            None => Err(Fail::Truncated {
                at: self.pos,
                need: n as u64,
                have: self.remaining() as u64,
            }),
        }
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N], Fail> {
        let s = self.take(N)?;
        let mut a = [0u8; N];
        a.copy_from_slice(s);
        Ok(a)
    }

    pub fn u8(&mut self) -> Result<u8, Fail> {
        Ok(self.array::<1>()?[0])
    }
    pub fn i8(&mut self) -> Result<i8, Fail> {
        Ok(i8::from_be_bytes(self.array()?))
    }
    pub fn i16(&mut self) -> Result<i16, Fail> {
        Ok(i16::from_be_bytes(self.array()?))
    }
    pub fn i32(&mut self) -> Result<i32, Fail> {
        Ok(i32::from_be_bytes(self.array()?))
    }
    pub fn u32(&mut self) -> Result<u32, Fail> {
        Ok(u32::from_be_bytes(self.array()?))
    }
    pub fn i64(&mut self) -> Result<i64, Fail> {
        Ok(i64::from_be_bytes(self.array()?))
    }

    /// Kafka's zigzag varint: at most 5 bytes; bits past 32 are dropped as Java does.
    pub fn varint(&mut self) -> Result<i32, Fail> {
        let start = self.pos;
        let mut v: u32 = 0;
        for shift in (0..35).step_by(7) {
            let b = self.u8()?;
            v |= u32::from(b & 0x7f).wrapping_shl(shift);
            if b & 0x80 == 0 {
                return Ok(((v >> 1) as i32) ^ -((v & 1) as i32));
            }
        }
        Err(Fail::VarintTooLong { at: start })
    }

    /// Kafka's zigzag varlong: at most 10 bytes.
    pub fn varlong(&mut self) -> Result<i64, Fail> {
        let start = self.pos;
        let mut v: u64 = 0;
        for shift in (0..70).step_by(7) {
            let b = self.u8()?;
            v |= u64::from(b & 0x7f).wrapping_shl(shift);
            if b & 0x80 == 0 {
                return Ok(((v >> 1) as i64) ^ -((v & 1) as i64));
            }
        }
        Err(Fail::VarintTooLong { at: start })
    }
}

/// Appends Kafka's zigzag varint.
pub fn put_varint(out: &mut Vec<u8>, v: i32) {
    put_uvarlong(out, u64::from(((v << 1) ^ (v >> 31)) as u32));
}

/// Appends Kafka's zigzag varlong.
pub fn put_varlong(out: &mut Vec<u8>, v: i64) {
    put_uvarlong(out, ((v << 1) ^ (v >> 63)) as u64);
}

fn put_uvarlong(out: &mut Vec<u8>, mut u: u64) {
    while u >= 0x80 {
        out.push((u as u8) | 0x80);
        u >>= 7;
    }
    out.push(u as u8);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_round_trip_and_limits() {
        for v in [0, 1, -1, 63, -64, 64, i32::MAX, i32::MIN] {
            let mut b = Vec::new();
            put_varint(&mut b, v);
            assert!(b.len() <= 5);
            assert_eq!(Cur::new(&b, 0).varint().unwrap(), v);
        }
        for v in [0i64, -1, i64::MAX, i64::MIN, 1 << 40] {
            let mut b = Vec::new();
            put_varlong(&mut b, v);
            assert!(b.len() <= 10);
            assert_eq!(Cur::new(&b, 0).varlong().unwrap(), v);
        }
        // Six continuation bytes: too long for a varint, as Kafka says.
        let long = [0xffu8; 12];
        assert_eq!(
            Cur::new(&long, 0).varint(),
            Err(Fail::VarintTooLong { at: 0 })
        );
        // Eleven bytes for a varlong: too long.
        assert_eq!(
            Cur::new(&long, 0).varlong(),
            Err(Fail::VarintTooLong { at: 0 })
        );
        // A varint cut short by the end of the buffer.
        assert!(matches!(
            Cur::new(&[0x80, 0x80], 0).varint(),
            Err(Fail::Truncated { at: 2, .. })
        ));
        // Take past the end never panics, even with huge counts.
        let mut c = Cur::new(&[1, 2, 3], 1);
        assert!(c.take(usize::MAX).is_err());
        assert_eq!(c.take(2).unwrap(), &[2, 3]);
    }
}
