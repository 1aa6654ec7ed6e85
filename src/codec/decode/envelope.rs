//! Envelope (KIP-590): the request or response a broker forwards, decoded under `_inner`.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use super::*;

/// Envelope's API key.
pub(crate) const ENVELOPE: i16 = 58;

/// Where the walker stood, to undo a tentative decode.
struct Mark {
    nodes: usize,
    top: u32,
    depth: u16,
}

impl<'a> Walker<'a> {
    fn mark(&self) -> Mark {
        Mark {
            nodes: self.nodes.len(),
            top: self.top,
            depth: self.depth,
        }
    }

    fn undo(&mut self, m: &Mark) {
        self.nodes.truncate(m.nodes);
        // Containers opened since are forgotten; those before keep their chain.
        self.top = m.top;
        self.depth = m.depth;
    }

    /// Envelope's `RequestData` / `ResponseData`: the forwarded message, its header and
    /// body without a size prefix, decoded under `_inner`. A request names its API in
    /// its header; a response's API is the one candidate that decodes it whole (as for
    /// inference). When it does not decode whole, nothing is added: the bytes show.
    pub(super) fn envelope_inner(&mut self, data: &'a [u8], kind: Kind) {
        let apis: Vec<(i16, i16)> = match kind {
            Kind::Request => {
                let (Some(k), Some(v)) = (data.get(..2), data.get(2..4)) else {
                    return;
                };
                let k = i16::from_be_bytes([
                    k.first().copied().unwrap_or(0),
                    k.get(1).copied().unwrap_or(0),
                ]);
                let v = i16::from_be_bytes([
                    v.first().copied().unwrap_or(0),
                    v.get(1).copied().unwrap_or(0),
                ]);
                vec![(k, v)]
            }
            Kind::Response => self.codec.schemas.response_candidates().collect(),
        };
        self.in_envelope = true;
        let built = self.build;
        let mut fits = None;
        let mut several = false;
        for &api in &apis {
            let m = self.mark();
            let ok = self.inner_message(data, kind, api);
            self.undo(&m);
            self.build = built;
            if ok {
                several = fits.is_some();
                fits = Some(api);
                if several {
                    break;
                }
            }
        }
        if let (Some(api), false) = (fits, several) {
            self.inner_message(data, kind, api);
        }
        self.build = built;
        self.in_envelope = false;
    }

    /// Decodes header and body of an embedded message under `_inner`; false (with
    /// nodes left to undo) unless every byte decodes.
    fn inner_message(&mut self, data: &'a [u8], kind: Kind, (key, v): (i16, i16)) -> bool {
        let schemas: &'static crate::codec::Schemas = self.codec.schemas;
        let Some(body) = schemas.message(key, kind, v) else {
            return false;
        };
        let (hs, hv) = match kind {
            Kind::Request => (
                &schemas.request_header,
                schemas.request_header_version(key, v),
            ),
            Kind::Response => (
                &schemas.response_header,
                schemas.response_header_version(key, v),
            ),
        };
        let Some(hv) = hv else { return false };
        let name = crate::proto::api_name(key).or_else(|| schemas.api_name(key));
        let at = data.get(..0).unwrap_or_default();
        let saved_key = self.api_key.replace(key);
        self.open(
            at,
            const { &Label::new(
                "_inner",
                "envelope",
                "added by kwire: the message this envelope carries",
            ) },
            None,
            Value::None,
            Role::Field,
        );
        if let Some(name) = name {
            self.leaf(
                at,
                at,
                const { &Label::new("api_name", "string", "added by kwire") },
                None,
                Value::Str(Some(name)),
                Prefix::None,
                Role::Field,
            );
        }
        let result = (|| -> Res<'a, ()> {
            let header = super::super::tree::label("header", &hs.name, "");
            self.open(data, header, None, Value::None, Role::Field);
            let head = layout_of(&hs.fields, hv, hs.is_flexible(hv));
            let (rest, ()) = self.fields(data, &head, TAGS_IN_HEADER, None)?;
            self.close(rest);
            let label = super::super::tree::label("body", &body.name, "");
            self.open(rest, label, None, Value::None, Role::Field);
            let l = layout_of(&body.fields, v, body.is_flexible(v));
            let (rest, ()) = self.fields(rest, &l, TAGS_IN_STRUCT, None)?;
            self.close(rest);
            Ok((rest, ()))
        })();
        self.api_key = saved_key;
        match result {
            Ok((rest, ())) if rest.is_empty() => {
                self.close(rest);
                true
            }
            _ => false,
        }
    }
}
