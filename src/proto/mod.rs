//! Kafka facts that need nothing else in kwire: the API table, error-code names, which way a
//! message travels, and big-endian peeks at the size prefix and the fixed start of the headers.
//!
//! Every layer above (framing in [`crate::kafka`], decoding in [`crate::codec`], the views)
//! takes these from here, so a fact about the protocol has one home.
#![cfg_attr(
    not(test),
    deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)
)]

pub mod apis;
pub mod errors;

pub use apis::{ApiInfo, FIND_COORDINATOR, VOTE, api_by_name, api_info, api_label, api_name};
pub use errors::error_name;

/// Which way a message travels.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    Request,
    Response,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Request => "request",
            Kind::Response => "response",
        }
    }
}

/// The big-endian `i16` at byte `at`, if the bytes are there.
pub fn peek_i16(b: &[u8], at: usize) -> Option<i16> {
    Some(i16::from_be_bytes(
        b.get(at..at.checked_add(2)?)?.try_into().ok()?,
    ))
}

/// The big-endian `i32` at byte `at`, if the bytes are there.
pub fn peek_i32(b: &[u8], at: usize) -> Option<i32> {
    Some(i32::from_be_bytes(
        b.get(at..at.checked_add(4)?)?.try_into().ok()?,
    ))
}

/// The size prefix: the first four bytes of every Kafka frame.
pub fn peek_size(frame: &[u8]) -> Option<i32> {
    peek_i32(frame, 0)
}

/// A response's correlation id: the first field after the size prefix.
pub fn peek_response_correlation(frame: &[u8]) -> Option<i32> {
    peek_i32(frame, 4)
}

/// The request header's fixed start, read without decoding the rest.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RequestStart {
    pub size: i32,
    pub api_key: i16,
    pub api_version: i16,
    pub correlation_id: i32,
}

/// Reads size, API key, version and correlation id from the first 12 bytes of a frame.
pub fn peek_request_header(frame: &[u8]) -> Option<RequestStart> {
    let b = frame.get(..12)?;
    Some(RequestStart {
        size: peek_size(b)?,
        api_key: peek_i16(b, 4)?,
        api_version: peek_i16(b, 6)?,
        correlation_id: peek_i32(b, 8)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn peeks_read_big_endian_and_stop_short() {
        let f = [0, 0, 0, 20, 0, 52, 0, 2, 0xff, 0xff, 0xff, 0xfe];
        assert_eq!(
            peek_request_header(&f),
            Some(RequestStart {
                size: 20,
                api_key: VOTE,
                api_version: 2,
                correlation_id: -2
            })
        );
        assert_eq!(peek_request_header(&f[..11]), None);
        assert_eq!(peek_response_correlation(&f), Some(0x0034_0002));
        assert_eq!(peek_size(&f[..3]), None);
        assert_eq!(peek_i16(&f, usize::MAX), None);
    }
}
