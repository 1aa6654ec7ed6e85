//! Decoding errors: what failed, where in the message, and at which byte.

use std::fmt;

/// Why a decode failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    /// Fewer bytes remain than the field needs.
    Truncated { need: u64, have: u64 },
    /// A length below -1 (or -1 where null is not allowed by the encoding).
    NegativeLength(i64),
    /// Null on the wire for a field the schema says is not nullable at this version.
    UnexpectedNull,
    /// A uvarint that does not end within 5 bytes.
    VarintTooLong,
    /// A compact length or count that does not fit the protocol's limits.
    LengthOverflow(u64),
    /// A string that is not UTF-8.
    InvalidUtf8,
    /// Bytes left over after the body, or inside a tagged field.
    TrailingBytes(u64),
    /// An array whose claimed count cannot fit in the bytes that remain.
    ImplausibleCount { count: u64, remaining: u64 },
    /// The size prefix disagrees with the frame.
    SizeMismatch { declared: i64, actual: u64 },
}

/// A decode failure with the field path and byte offset (from the size prefix).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DecodeError {
    pub kind: ErrorKind,
    /// Dotted path, e.g. `Topics[0].Partitions[1].LastOffset`.
    pub path: String,
    pub offset: usize,
}

impl DecodeError {
    /// The error, under field `name`: the walker adds each field's name as the error
    /// passes out of it, so a walk that succeeds keeps no path at all.
    pub(crate) fn within(mut self: Box<Self>, name: &str) -> Box<DecodeError> {
        if !self.path.is_empty() && !self.path.starts_with('[') {
            self.path.insert(0, '.');
        }
        self.path.insert_str(0, name);
        self
    }

    /// The error, in element `index` of the list it passes out of.
    pub(crate) fn at_index(mut self: Box<Self>, index: u32) -> Box<DecodeError> {
        let mut at = format!("[{index}]");
        if !self.path.is_empty() {
            at.push('.');
        }
        self.path.insert_str(0, &at);
        self
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ErrorKind::Truncated { need, have } => {
                write!(f, "truncated: needs {need} bytes, {have} left")
            }
            ErrorKind::NegativeLength(n) => write!(f, "invalid length {n}"),
            ErrorKind::UnexpectedNull => f.write_str("null in a non-nullable field"),
            ErrorKind::VarintTooLong => f.write_str("uvarint longer than 5 bytes"),
            ErrorKind::LengthOverflow(n) => write!(f, "length {n} overflows"),
            ErrorKind::InvalidUtf8 => f.write_str("string is not valid UTF-8"),
            ErrorKind::TrailingBytes(n) => write!(f, "{n} trailing bytes"),
            ErrorKind::ImplausibleCount { count, remaining } => write!(
                f,
                "array claims {count} elements but only {remaining} bytes remain"
            ),
            ErrorKind::SizeMismatch { declared, actual } => {
                write!(f, "size prefix says {declared} bytes but {actual} follow")
            }
        }
    }
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let path = if self.path.is_empty() {
            "frame"
        } else {
            &self.path
        };
        write!(f, "{} at {path} (offset 0x{:04x})", self.kind, self.offset)
    }
}

impl std::error::Error for DecodeError {}
