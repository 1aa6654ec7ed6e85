//! The filter's view of a dissected message, and the catalogue kwire compiles filters against.

use super::{BodyPath, Catalogue, Flag, Header, Subject, Value};
use crate::dissect::Record;
use crate::proto::{self, Kind};
use std::ops::ControlFlow;

/// The fields of the schemas kwire knows, and every API and error name.
pub fn catalogue() -> Catalogue {
    let mut c = Catalogue::new();
    // The process-wide codec's schemas: the built-in ones and whatever was loaded.
    c.add_schemas(crate::codec::current().schemas.all_messages());
    for a in proto::apis::all_apis() {
        c.add_api(a.key, a.name);
    }
    for code in -1..=i16::from(u8::MAX) {
        if let Some(n) = proto::error_name(code) {
            c.add_error(code, n);
        }
    }
    c
}

impl Subject for Record<'_> {
    fn header(&self, h: Header) -> Option<Value<'_>> {
        let m = &self.msg;
        let int = |v: i64| Some(Value::Int(v));
        match h {
            Header::Frame => int(self.packet as i64),
            Header::Ts => {
                // The NDJSON's decimal, so that a literal copied from it compares equal.
                let secs = self.ts_ns.div_euclid(1_000_000_000);
                let micros = self.ts_ns.rem_euclid(1_000_000_000) / 1000;
                format!("{secs}.{micros:06}").parse().ok().map(Value::Float)
            }
            Header::Src => Some(Value::Str(self.src.to_string().into())),
            Header::Dst => Some(Value::Str(self.dst.to_string().into())),
            Header::Kind => Some(Value::Str(m.kind.as_str().into())),
            Header::ApiKey => m.api_key.map(|k| Value::Int(k.into())),
            Header::ApiName => m.api_key.map(|k| Value::Str(proto::api_label(k).into())),
            Header::ApiVersion => m.api_version.map(|v| Value::Int(v.into())),
            Header::VersionSource => self.version_source.map(|s| Value::Str(s.as_str().into())),
            Header::CorrelationId => m.correlation_id.map(|c| Value::Int(c.into())),
            Header::ClientId => match m.kind {
                Kind::Request => m.client_id.map(|c| Value::Str(c.into())),
                Kind::Response => None,
            },
            Header::Size => int(self.wire_size as i64),
            Header::RequestFrame => self.request_packet.map(|f| Value::Int(f as i64)),
            Header::LatencyUs => self.latency_ns.map(|ns| Value::Int(ns / 1000)),
            Header::Tls => self.tls.as_ref().map(|t| Value::Str(t.version.into())),
            Header::SrcIp => Some(Value::Ip(self.src.ip())),
            Header::DstIp => Some(Value::Ip(self.dst.ip())),
            Header::SrcPort => int(self.src.port().into()),
            Header::DstPort => int(self.dst.port().into()),
        }
    }

    fn body(&self, path: &BodyPath, each: &mut dyn FnMut(Value<'_>) -> ControlFlow<()>) {
        // As the NDJSON: no body for a message that failed to decode.
        if self.msg.error.is_none() && self.msg.body.is_some() {
            super::tree::body_occurrences(&self.msg.tree, path, each);
        }
    }

    fn flag(&self, f: Flag) -> bool {
        match f {
            Flag::Malformed => self.msg.error.is_some(),
            Flag::Error => crate::select::has_error(self),
            Flag::Warn => self.has_warnings(),
        }
    }

    fn summary(&self) -> String {
        crate::view::summary::line(self)
    }
}
