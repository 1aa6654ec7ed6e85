//! SaslAuthenticate's auth bytes: the mechanism and user name kwire may show.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use super::*;

impl<'a> Walker<'a> {
    /// After SaslAuthenticate's `AuthBytes`: the mechanism and user name, when the bytes
    /// are a PLAIN message or a SCRAM client-first message. Added under `_` keys, as
    /// values kwire derives rather than fields the schema has.
    pub(super) fn sasl_user(&mut self, end: &'a [u8], auth: &'a [u8]) {
        let Some((mechanism, user)) = redact::sasl_user(auth) else {
            return;
        };
        let Ok(name) = std::str::from_utf8(user) else {
            return;
        };
        let user_end = user.get(user.len()..).unwrap_or_default();
        let at = end.get(..0).unwrap_or_default();
        self.leaf(
            at,
            at,
            const { &Label::new(
                "_sasl_mechanism",
                "string",
                "added by kwire: the SASL mechanism family these bytes follow",
            ) },
            None,
            Value::Str(Some(mechanism)),
            Prefix::None,
            Role::Field,
        );
        self.leaf(
            user,
            user_end,
            const { &Label::new(
                "_sasl_user",
                "string",
                "added by kwire: the user name inside the auth bytes",
            ) },
            None,
            Value::Str(Some(name)),
            Prefix::None,
            Role::Field,
        );
    }
}
