//! The encoder: a JSON value tree (the shape of kwire's NDJSON `body`) to wire
//! bytes, driven by the same schemas as the walker. Used for round-trip tests
//! and synthetic fixtures.

use super::load::Schemas;
use super::schema::{Field, FieldType, MessageSchema, Prim};
use crate::proto::Kind;
use crate::proto::apis;
use serde_json::{Map, Value as Json};

/// Why a value could not be encoded, with the field path.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("cannot encode {path}: {reason}")]
pub struct EncodeError {
    pub path: String,
    pub reason: String,
}

fn fail(path: &str, reason: impl Into<String>) -> EncodeError {
    EncodeError {
        path: if path.is_empty() {
            "message".into()
        } else {
            path.into()
        },
        reason: reason.into(),
    }
}

/// Encodes a whole request frame with the process-wide codec's schemas.
pub fn encode_request(
    api_key: i16,
    version: i16,
    correlation_id: i32,
    client_id: Option<&str>,
    body: &Json,
) -> Result<Vec<u8>, EncodeError> {
    super::current().encode_request(api_key, version, correlation_id, client_id, body)
}

/// Encodes a whole response frame with the process-wide codec's schemas.
pub fn encode_response(
    api_key: i16,
    version: i16,
    correlation_id: i32,
    body: &Json,
) -> Result<Vec<u8>, EncodeError> {
    super::current().encode_response(api_key, version, correlation_id, body)
}

/// Encodes a whole request frame: size prefix, header and body.
pub(crate) fn encode_request_with(
    schemas: &Schemas,
    api_key: i16,
    version: i16,
    correlation_id: i32,
    client_id: Option<&str>,
    body: &Json,
) -> Result<Vec<u8>, EncodeError> {
    let hv = schemas
        .request_header_version(api_key, version)
        .or_else(|| apis::api_info(api_key).map(|a| a.request_header_version(version)))
        .unwrap_or(1);
    let mut header = Map::new();
    header.insert("request_api_key".into(), api_key.into());
    header.insert("request_api_version".into(), version.into());
    header.insert("correlation_id".into(), correlation_id.into());
    header.insert("client_id".into(), client_id.map_or(Json::Null, Json::from));
    frame(
        &schemas.request_header,
        hv,
        &header,
        schemas,
        (api_key, Kind::Request),
        version,
        body,
    )
}

/// Encodes a whole response frame: size prefix, header and body.
pub(crate) fn encode_response_with(
    schemas: &Schemas,
    api_key: i16,
    version: i16,
    correlation_id: i32,
    body: &Json,
) -> Result<Vec<u8>, EncodeError> {
    let hv = schemas
        .response_header_version(api_key, version)
        .or_else(|| apis::api_info(api_key).map(|a| a.response_header_version(version)))
        .unwrap_or(0);
    let mut header = Map::new();
    header.insert("correlation_id".into(), correlation_id.into());
    frame(
        &schemas.response_header,
        hv,
        &header,
        schemas,
        (api_key, Kind::Response),
        version,
        body,
    )
}

fn frame(
    hs: &MessageSchema,
    hv: i16,
    header: &Map<String, Json>,
    schemas: &Schemas,
    (key, kind): (i16, Kind),
    version: i16,
    body: &Json,
) -> Result<Vec<u8>, EncodeError> {
    let mut out = vec![0u8; 4];
    let mut e = Encoder {
        out: &mut out,
        path: String::new(),
    };
    e.fields(&hs.fields, hv, hs.is_flexible(hv), header)?;
    match (
        schemas.message(key, kind, version),
        schemas.newest(key, kind),
    ) {
        (Some(s), _) => {
            let obj = body
                .as_object()
                .ok_or_else(|| fail("", "the body must be an object"))?;
            e.fields(&s.fields, version, s.is_flexible(version), obj)?;
        }
        (None, Some(s)) => {
            return Err(fail("", format!("{} has no version {version}", s.name)));
        }
        // Without a schema the body is taken as raw hex bytes.
        (None, None) => {
            let hex = body.as_str().ok_or_else(|| {
                fail("", "an API without a schema takes its body as a hex string")
            })?;
            let bytes = parse_hex(hex).ok_or_else(|| fail("", "invalid hex body"))?;
            out.extend_from_slice(&bytes);
        }
    }
    let size = i32::try_from(out.len() - 4).map_err(|_| fail("", "frame too large"))?;
    if let Some(prefix) = out.get_mut(..4) {
        prefix.copy_from_slice(&size.to_be_bytes());
    }
    Ok(out)
}

struct Encoder<'o> {
    out: &'o mut Vec<u8>,
    path: String,
}

impl Encoder<'_> {
    fn at<T>(
        &mut self,
        name: &str,
        f: impl FnOnce(&mut Self) -> Result<T, EncodeError>,
    ) -> Result<T, EncodeError> {
        let len = self.path.len();
        if !self.path.is_empty() && !name.starts_with('[') {
            self.path.push('.');
        }
        self.path.push_str(name);
        let r = f(self);
        self.path.truncate(len);
        r
    }

    fn fields(
        &mut self,
        fields: &[Field],
        version: i16,
        flexible: bool,
        obj: &Map<String, Json>,
    ) -> Result<(), EncodeError> {
        let mut tagged: Vec<(u32, Vec<u8>)> = Vec::new();
        for f in fields {
            let given = obj.get(&f.name);
            if !f.versions.contains(version) {
                // Kafka refuses a non-default value in a field the version lacks, unless ignorable.
                if let Some(v) = given {
                    if !f.ignorable && !is_default(f, v) {
                        return Err(fail(
                            &self.path_with(&f.name),
                            format!("not in version {version} and not ignorable"),
                        ));
                    }
                }
                continue;
            }
            if flexible && f.is_tagged_at(version) {
                if let (Some(v), Some(tag)) = (given, f.tag) {
                    let mut buf = Vec::new();
                    let mut sub = Encoder {
                        out: &mut buf,
                        path: self.path_with(&f.name),
                    };
                    sub.value(f, v, version, true)?;
                    tagged.push((tag, buf));
                }
                continue;
            }
            let v = match given {
                Some(v) => v.clone(),
                None => default_value(f, version),
            };
            self.at(&f.name, |e| e.value(f, &v, version, flexible))?;
        }
        if flexible {
            if let Some(unknown) = obj.get("_unknown_tagged_fields") {
                for t in unknown
                    .as_array()
                    .ok_or_else(|| fail(&self.path, "_unknown_tagged_fields must be an array"))?
                {
                    let tag = t
                        .get("tag")
                        .and_then(Json::as_u64)
                        .and_then(|t| u32::try_from(t).ok())
                        .ok_or_else(|| fail(&self.path, "unknown tagged field needs a tag"))?;
                    let data = t
                        .get("data")
                        .and_then(Json::as_str)
                        .and_then(parse_hex)
                        .ok_or_else(|| fail(&self.path, "unknown tagged field needs hex data"))?;
                    tagged.push((tag, data));
                }
            }
            tagged.sort_by_key(|t| t.0);
            uvarint(self.out, tagged.len() as u32);
            for (tag, data) in tagged {
                uvarint(self.out, tag);
                uvarint(self.out, data.len() as u32);
                self.out.extend_from_slice(&data);
            }
        }
        Ok(())
    }

    fn path_with(&self, name: &str) -> String {
        if self.path.is_empty() {
            name.to_string()
        } else {
            format!("{}.{name}", self.path)
        }
    }

    fn value(
        &mut self,
        f: &Field,
        v: &Json,
        version: i16,
        flexible: bool,
    ) -> Result<(), EncodeError> {
        let compact = flexible && f.flexible.is_none_or(|fv| fv.contains(version));
        let nullable = f.nullable.contains(version);
        match &f.ty {
            FieldType::Prim(p) => self.prim(*p, v, compact, nullable),
            FieldType::Struct(sub) => {
                if nullable {
                    // A nullable struct's marker byte: -1 for null, 1 for a struct.
                    if v.is_null() {
                        self.out.push(0xff);
                        return Ok(());
                    }
                    self.out.push(1);
                }
                let obj = v
                    .as_object()
                    .ok_or_else(|| fail(&self.path, "expected an object"))?;
                self.fields(sub, version, flexible, obj)
            }
            FieldType::ArrayOfPrim(_) | FieldType::ArrayOfStruct(_) => {
                let items = match v {
                    Json::Null if nullable => {
                        self.count(None, compact);
                        return Ok(());
                    }
                    Json::Null => return Err(fail(&self.path, "null in a non-nullable array")),
                    Json::Array(items) => items,
                    _ => return Err(fail(&self.path, "expected an array")),
                };
                self.count(Some(items.len()), compact);
                for (i, item) in items.iter().enumerate() {
                    self.at(&format!("[{i}]"), |e| match &f.ty {
                        FieldType::ArrayOfPrim(p) => e.prim(*p, item, compact, false),
                        FieldType::ArrayOfStruct(sub) => {
                            let obj = item
                                .as_object()
                                .ok_or_else(|| fail(&e.path, "expected an object"))?;
                            e.fields(sub, version, flexible, obj)
                        }
                        _ => Ok(()),
                    })?;
                }
                Ok(())
            }
        }
    }

    fn count(&mut self, n: Option<usize>, compact: bool) {
        match (n, compact) {
            (None, true) => uvarint(self.out, 0),
            (Some(n), true) => uvarint(self.out, n as u32 + 1),
            (None, false) => self.out.extend_from_slice(&(-1i32).to_be_bytes()),
            (Some(n), false) => self.out.extend_from_slice(&(n as i32).to_be_bytes()),
        }
    }

    fn prim(
        &mut self,
        p: Prim,
        v: &Json,
        compact: bool,
        nullable: bool,
    ) -> Result<(), EncodeError> {
        let int = |lo: i64, hi: i64| -> Result<i64, EncodeError> {
            v.as_i64()
                .filter(|n| (lo..=hi).contains(n))
                .ok_or_else(|| fail(&self.path, format!("expected {} in {lo}..={hi}", p.name())))
        };
        match p {
            Prim::Bool => {
                let b = v
                    .as_bool()
                    .ok_or_else(|| fail(&self.path, "expected a bool"))?;
                self.out.push(u8::from(b));
            }
            Prim::Int8 => {
                let n = int(i8::MIN.into(), i8::MAX.into())?;
                self.out.extend_from_slice(&(n as i8).to_be_bytes());
            }
            Prim::Int16 => {
                let n = int(i16::MIN.into(), i16::MAX.into())?;
                self.out.extend_from_slice(&(n as i16).to_be_bytes());
            }
            Prim::Uint16 => {
                let n = int(0, u16::MAX.into())?;
                self.out.extend_from_slice(&(n as u16).to_be_bytes());
            }
            Prim::Int32 => {
                let n = int(i32::MIN.into(), i32::MAX.into())?;
                self.out.extend_from_slice(&(n as i32).to_be_bytes());
            }
            Prim::Int64 => {
                let n = int(i64::MIN, i64::MAX)?;
                self.out.extend_from_slice(&n.to_be_bytes());
            }
            Prim::Float64 => {
                let n = v
                    .as_f64()
                    .ok_or_else(|| fail(&self.path, "expected a number"))?;
                self.out.extend_from_slice(&n.to_be_bytes());
            }
            Prim::Uuid => {
                let s = v
                    .as_str()
                    .ok_or_else(|| fail(&self.path, "expected a uuid string"))?;
                let u = uuid::Uuid::parse_str(s).map_err(|e| fail(&self.path, e.to_string()))?;
                self.out.extend_from_slice(u.as_bytes());
            }
            Prim::String | Prim::Bytes | Prim::Records => {
                let data = match v {
                    Json::Null if nullable => None,
                    Json::Null => return Err(fail(&self.path, "null in a non-nullable field")),
                    Json::String(s) if p == Prim::String => Some(s.as_bytes().to_vec()),
                    Json::String(s) => {
                        Some(parse_hex(s).ok_or_else(|| fail(&self.path, "expected hex bytes"))?)
                    }
                    _ => return Err(fail(&self.path, "expected a string")),
                };
                match (data, compact) {
                    (None, true) => uvarint(self.out, 0),
                    (None, false) if p == Prim::String => {
                        self.out.extend_from_slice(&(-1i16).to_be_bytes())
                    }
                    (None, false) => self.out.extend_from_slice(&(-1i32).to_be_bytes()),
                    (Some(d), true) => {
                        uvarint(self.out, d.len() as u32 + 1);
                        self.out.extend_from_slice(&d);
                    }
                    (Some(d), false) => {
                        if p == Prim::String {
                            let n = i16::try_from(d.len())
                                .map_err(|_| fail(&self.path, "string longer than 32767 bytes"))?;
                            self.out.extend_from_slice(&n.to_be_bytes());
                        } else {
                            self.out.extend_from_slice(&(d.len() as i32).to_be_bytes());
                        }
                        self.out.extend_from_slice(&d);
                    }
                }
            }
        }
        Ok(())
    }
}

/// Unsigned LEB128, as Kafka writes compact lengths, counts and tags.
pub fn uvarint(out: &mut Vec<u8>, mut v: u32) {
    while v >= 0x80 {
        out.push((v as u8 & 0x7f) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// The value a missing field takes, from the schema's `default`.
fn default_value(f: &Field, version: i16) -> Json {
    let d = f.default.as_deref();
    match &f.ty {
        FieldType::Prim(p) => match p {
            Prim::Bool => Json::Bool(d.is_some_and(|d| d.eq_ignore_ascii_case("true"))),
            Prim::Int8 | Prim::Int16 | Prim::Int32 | Prim::Int64 | Prim::Uint16 => {
                Json::from(d.and_then(parse_int).unwrap_or(0))
            }
            Prim::Float64 => Json::from(d.and_then(|s| s.parse::<f64>().ok()).unwrap_or(0.0)),
            Prim::Uuid => Json::from("00000000-0000-0000-0000-000000000000"),
            Prim::String => match d {
                Some("null") if f.nullable.contains(version) => Json::Null,
                Some(s) => Json::from(s),
                None => Json::from(""),
            },
            Prim::Bytes | Prim::Records => match d {
                Some("null") if f.nullable.contains(version) => Json::Null,
                _ => Json::from(""),
            },
        },
        FieldType::Struct(_) if d == Some("null") && f.nullable.contains(version) => Json::Null,
        FieldType::Struct(_) => Json::Object(Map::new()),
        FieldType::ArrayOfPrim(_) | FieldType::ArrayOfStruct(_) => match d {
            Some("null") if f.nullable.contains(version) => Json::Null,
            _ => Json::Array(Vec::new()),
        },
    }
}

fn parse_int(s: &str) -> Option<i64> {
    match s.strip_prefix("0x") {
        Some(hex) => i64::from_str_radix(hex, 16).ok(),
        None => s.parse().ok(),
    }
}

/// Whether `v` equals the field's default, so leaving it out loses nothing.
fn is_default(f: &Field, v: &Json) -> bool {
    match (&f.ty, v) {
        (FieldType::ArrayOfPrim(_) | FieldType::ArrayOfStruct(_), Json::Array(a)) => a.is_empty(),
        (FieldType::Struct(_), Json::Object(o)) => o.is_empty(),
        _ => *v == default_value(f, f.nullable.lo),
    }
}

fn parse_hex(s: &str) -> Option<Vec<u8>> {
    if s.len() % 2 != 0 {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uvarint_encodes_leb128() {
        let mut v = Vec::new();
        uvarint(&mut v, 0);
        uvarint(&mut v, 127);
        uvarint(&mut v, 128);
        uvarint(&mut v, u32::MAX);
        assert_eq!(v, [0, 0x7f, 0x80, 0x01, 0xff, 0xff, 0xff, 0xff, 0x0f]);
    }

    #[test]
    fn non_ignorable_field_outside_version_is_refused() {
        // FindCoordinator v0 has no KeyType; a non-default one must not vanish silently.
        let err = encode_request(
            10,
            0,
            1,
            None,
            &serde_json::json!({"Key": "g", "KeyType": 1}),
        )
        .unwrap_err();
        assert_eq!(err.path, "KeyType");
        // The default value is fine.
        encode_request(
            10,
            0,
            1,
            None,
            &serde_json::json!({"Key": "g", "KeyType": 0}),
        )
        .unwrap();
    }

    #[test]
    fn ignorable_field_outside_version_is_dropped() {
        let with = encode_request(
            52,
            0,
            1,
            None,
            &serde_json::json!({"VoterId": 5, "Topics": []}),
        );
        let without = encode_request(52, 0, 1, None, &serde_json::json!({"Topics": []}));
        assert_eq!(with.unwrap(), without.unwrap());
    }
}
