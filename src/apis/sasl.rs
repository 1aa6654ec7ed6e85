//! SaslHandshake (key 17) and SaslAuthenticate (key 36): the mechanism, and for PLAIN
//! and SCRAM the user name. Credentials are never shown here, `--show-secrets` or not.

use super::fmt::{Body, join, kv};
use super::{Api, Fields, Track};
use crate::codec::{Kind, Prefix};
use crate::view::labels;

/// The body fields its summary line reads (each with what is inside it), at any depth.
const SUMMARY: Fields = Fields::Names(&["AuthBytes", "ErrorCode", "ErrorMessage", "Mechanism", "Mechanisms", "SessionLifetimeMs", "ThrottleTimeMs"]);

pub(crate) const HANDSHAKE: Api = Api {
    key: 17,
    details: |b, out| out.push_str(&handshake(b)),
    summary: SUMMARY,
    track: Track::SummaryOnly,
};
pub(crate) const AUTHENTICATE: Api = Api {
    key: 36,
    details: |b, out| out.push_str(&authenticate(b)),
    summary: SUMMARY,
    track: Track::SummaryOnly,
};

fn handshake(b: &Body<'_, '_>) -> String {
    match b.kind {
        Kind::Request => kv("mechanism", b.text(b.at, "Mechanism")).unwrap_or_default(),
        Kind::Response => join([
            b.error(b.at, "ErrorCode"),
            Some(format!(
                "mechanisms=[{}]",
                labels::list_strings(b.texts(b.at, "Mechanisms"))
            )),
        ]),
    }
}

/// How many bytes `AuthBytes` holds, from its length prefix (its value may be redacted).
fn auth_len(b: &Body<'_, '_>) -> Option<String> {
    let n = b.tree.nodes.get(b.tree.field(b.at, "AuthBytes")?)?;
    let len = match n.prefix {
        Prefix::Compact(c) => i64::from(c) - 1,
        Prefix::Int32(c) => i64::from(c),
        Prefix::Int16(c) => i64::from(c),
        Prefix::None => return None,
    };
    (len >= 0).then(|| format!("{len} auth bytes"))
}

fn authenticate(b: &Body<'_, '_>) -> String {
    match b.kind {
        // The codec adds `_sasl_mechanism` and `_sasl_user` when it recognises a
        // PLAIN or SCRAM client-first message.
        Kind::Request => join([
            b.text(b.at, "_sasl_mechanism"),
            kv("user", b.text(b.at, "_sasl_user")),
            auth_len(b),
        ]),
        Kind::Response => join([
            b.error(b.at, "ErrorCode"),
            b.text_set(b.at, "ErrorMessage").map(|m| format!("({m})")),
            kv(
                "session",
                b.int(b.at, "SessionLifetimeMs")
                    .filter(|&s| s > 0)
                    .map(|s| format!("{s}ms")),
            ),
            auth_len(b),
        ]),
    }
}
