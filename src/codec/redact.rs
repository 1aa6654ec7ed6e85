//! Credentials on the wire: the text that replaces them, and the SASL user name,
//! which is the one part of an authentication exchange kwire shows.
#![cfg_attr(
    not(test),
    deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)
)]

use std::collections::HashMap;
use std::sync::{LazyLock, Mutex};

/// Distinct redaction texts kept. Each distinct length needs that many secret bytes on
/// the wire, so reaching this takes over 2 GiB of them; past it the length is left out.
const MAX_TEXTS: usize = 1 << 16;

static TEXTS: LazyLock<Mutex<HashMap<usize, &'static str>>> =
    LazyLock::new(|| Mutex::new(HashMap::new()));

/// `"<redacted N bytes>"`, made once per distinct N so that trees can borrow it.
pub fn redacted(n: usize) -> &'static str {
    let Ok(mut texts) = TEXTS.lock() else {
        return "<redacted>";
    };
    if let Some(t) = texts.get(&n) {
        return t;
    }
    if texts.len() >= MAX_TEXTS {
        return "<redacted>";
    }
    let t: &'static str = Box::leak(format!("<redacted {n} bytes>").into_boxed_str());
    texts.insert(n, t);
    t
}

/// Whether `s` is a text [`redacted`] made (the same allocation, so a wire string that
/// merely reads the same is not taken for one), and the number of bytes it hides.
pub fn redacted_len(s: &str) -> Option<usize> {
    let n: usize = s
        .strip_prefix("<redacted ")?
        .strip_suffix(" bytes>")?
        .parse()
        .ok()?;
    let texts = TEXTS.lock().ok()?;
    texts.get(&n).filter(|t| std::ptr::eq(**t, s)).map(|_| n)
}

/// The SASL mechanism family and user name in a client's first authentication
/// message, when it is PLAIN (`authzid NUL user NUL password`) or a SCRAM
/// client-first message (`gs2-header n=user,r=nonce`). The user name borrows from
/// `auth`, so its bytes are the wire's.
pub fn sasl_user(auth: &[u8]) -> Option<(&'static str, &[u8])> {
    // SCRAM: gs2 header ("n,," / "y,," / "p=cb,," with an optional a=authzid), then n=user.
    if matches!(auth.first(), Some(b'n' | b'y' | b'p')) {
        let mut parts = auth.splitn(3, |b| *b == b',');
        let cb = parts.next()?;
        let _authzid = parts.next()?;
        let rest = parts.next()?;
        let cb_ok = cb == b"n" || cb == b"y" || cb.starts_with(b"p=");
        if cb_ok {
            let user = rest.strip_prefix(b"n=")?;
            let end = user.iter().position(|b| *b == b',')?;
            let (user, after) = user.split_at(end);
            if after.starts_with(b",r=") && std::str::from_utf8(user).is_ok() {
                return Some(("SCRAM", user));
            }
        }
        return None;
    }
    // PLAIN: exactly two NULs.
    let mut parts = auth.split(|b| *b == 0);
    let _authzid = parts.next()?;
    let user = parts.next()?;
    let _password = parts.next()?;
    if parts.next().is_some() || user.is_empty() || std::str::from_utf8(user).is_err() {
        return None;
    }
    Some(("PLAIN", user))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn texts_are_shared() {
        assert_eq!(redacted(12), "<redacted 12 bytes>");
        assert!(std::ptr::eq(redacted(12), redacted(12)));
        assert_eq!(redacted_len(redacted(12)), Some(12));
        let lookalike = String::from("<redacted 12 bytes>");
        assert_eq!(redacted_len(&lookalike), None);
    }

    #[test]
    fn plain_and_scram_users() {
        assert_eq!(
            sasl_user(b"\0alice\0s3cret"),
            Some(("PLAIN", &b"alice"[..]))
        );
        assert_eq!(
            sasl_user(b"admin\0alice\0s3cret"),
            Some(("PLAIN", &b"alice"[..]))
        );
        assert_eq!(
            sasl_user(b"n,,n=bob,r=fyko+d2lbbFgONRv9qkxdawL"),
            Some(("SCRAM", &b"bob"[..]))
        );
        assert_eq!(
            sasl_user(b"n,a=x,n=bob,r=abc"),
            Some(("SCRAM", &b"bob"[..]))
        );
        // SCRAM's later messages and other mechanisms carry no user name.
        assert_eq!(sasl_user(b"c=biws,r=abc,p=proof"), None);
        assert_eq!(sasl_user(b"r=abc,s=salt,i=4096"), None);
        assert_eq!(sasl_user(b"n,,auth=Bearer xyz\x01\x01"), None);
        assert_eq!(sasl_user(b"\0\0pw"), None);
        assert_eq!(sasl_user(b""), None);
    }
}
