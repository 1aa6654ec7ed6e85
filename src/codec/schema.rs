//! Kafka's JSON message schemas, parsed into a form the walker and encoder share.
//!
//! The schema files are Kafka's own format: JSON with `//` line comments.

use serde_json::Value as Json;
use std::fmt;

use super::tree::Label;

/// An inclusive range of versions, as written in a schema (`"0+"`, `"1-3"`, `"none"`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Versions {
    pub lo: i16,
    pub hi: i16,
}

impl Versions {
    pub const NONE: Versions = Versions { lo: 1, hi: 0 };
    pub const ALL: Versions = Versions {
        lo: 0,
        hi: i16::MAX,
    };

    pub fn contains(self, v: i16) -> bool {
        self.lo <= v && v <= self.hi
    }

    pub fn is_empty(self) -> bool {
        self.lo > self.hi
    }

    pub fn parse(s: &str) -> Result<Versions, SchemaError> {
        let s = s.trim();
        let bad = || SchemaError(format!("bad version range {s:?}"));
        let num = |t: &str| t.trim().parse::<i16>().map_err(|_| bad());
        if s.is_empty() || s == "none" {
            Ok(Versions::NONE)
        } else if let Some(lo) = s.strip_suffix('+') {
            Ok(Versions {
                lo: num(lo)?,
                hi: i16::MAX,
            })
        } else if let Some((lo, hi)) = s.split_once('-') {
            Ok(Versions {
                lo: num(lo)?,
                hi: num(hi)?,
            })
        } else {
            let v = num(s)?;
            Ok(Versions { lo: v, hi: v })
        }
    }
}

impl fmt::Display for Versions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_empty() {
            f.write_str("none")
        } else if self.hi == i16::MAX {
            write!(f, "{}+", self.lo)
        } else if self.lo == self.hi {
            write!(f, "{}", self.lo)
        } else {
            write!(f, "{}–{}", self.lo, self.hi)
        }
    }
}

/// A primitive wire type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Prim {
    Bool,
    Int8,
    Int16,
    Int32,
    Int64,
    Uint16,
    Uuid,
    Float64,
    String,
    Bytes,
    Records,
}

impl Prim {
    fn parse(s: &str) -> Option<Prim> {
        Some(match s {
            "bool" => Prim::Bool,
            "int8" => Prim::Int8,
            "int16" => Prim::Int16,
            "int32" => Prim::Int32,
            "int64" => Prim::Int64,
            "uint16" => Prim::Uint16,
            "uuid" => Prim::Uuid,
            "float64" => Prim::Float64,
            "string" => Prim::String,
            "bytes" => Prim::Bytes,
            "records" => Prim::Records,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            Prim::Bool => "bool",
            Prim::Int8 => "int8",
            Prim::Int16 => "int16",
            Prim::Int32 => "int32",
            Prim::Int64 => "int64",
            Prim::Uint16 => "uint16",
            Prim::Uuid => "uuid",
            Prim::Float64 => "float64",
            Prim::String => "string",
            Prim::Bytes => "bytes",
            Prim::Records => "records",
        }
    }

    /// Fixed wire size, or None for length-prefixed types.
    pub fn fixed_size(self) -> Option<usize> {
        match self {
            Prim::Bool | Prim::Int8 => Some(1),
            Prim::Int16 | Prim::Uint16 => Some(2),
            Prim::Int32 => Some(4),
            Prim::Int64 | Prim::Float64 => Some(8),
            Prim::Uuid => Some(16),
            Prim::String | Prim::Bytes | Prim::Records => None,
        }
    }
}

/// The shape of a field's value.
#[derive(Clone, Debug)]
pub enum FieldType {
    Prim(Prim),
    Struct(Vec<Field>),
    ArrayOfPrim(Prim),
    ArrayOfStruct(Vec<Field>),
}

/// One field of a message or struct.
#[derive(Clone, Debug)]
pub struct Field {
    pub name: String,
    /// The type as the schema writes it (`int32`, `[]TopicData`), for display.
    pub type_name: String,
    /// Element or struct type name (`TopicData`, `string`), for element nodes.
    pub elem_name: String,
    pub ty: FieldType,
    pub versions: Versions,
    pub nullable: Versions,
    pub tagged: Versions,
    pub tag: Option<u32>,
    /// A field-level override of the message's flexible versions (header client_id).
    pub flexible: Option<Versions>,
    pub ignorable: bool,
    pub default: Option<String>,
    pub about: String,
    /// Credentials: shown as `<redacted N bytes>` unless secrets are asked for.
    pub secret: bool,
    /// The labels of this field's nodes, made on first use (see [`Field::labels`]).
    pub labels: std::sync::OnceLock<FieldLabels>,
}

/// The labels of the nodes a field makes (see [`super::tree::Label`]).
#[derive(Clone, Debug)]
pub struct FieldLabels {
    /// The field's own node: its name, schema type and description.
    pub node: Label,
    /// An element of the field's array: named after its type, with no description.
    pub elem: Label,
    /// The field's tagged-field wrapper in a tagged section.
    pub tagged: Label,
}

impl Field {
    /// The labels of this field's nodes. Schemas live as long as the process, so these
    /// borrow the field's own strings; made once, then read with one check.
    #[inline]
    pub fn labels(&'static self) -> &'static FieldLabels {
        self.labels.get_or_init(|| FieldLabels {
            node: Label::new(&self.name, &self.type_name, &self.about),
            elem: Label::new(
                &self.elem_name,
                match &self.ty {
                    FieldType::ArrayOfPrim(p) => p.name(),
                    _ => &self.elem_name,
                },
                "",
            ),
            tagged: Label::new(&self.name, "tagged_field", ""),
        })
    }

    /// Whether this field travels in the tagged-field section at `version`.
    pub fn is_tagged_at(&self, version: i16) -> bool {
        self.tag.is_some() && self.tagged.contains(version)
    }
}

/// What a schema describes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SchemaKind {
    Request,
    Response,
    Header,
    /// A data schema with no API key (`LeaderChangeMessage`, `VotersRecord`, ...).
    Data,
}

/// One parsed message schema.
#[derive(Clone, Debug)]
pub struct MessageSchema {
    pub name: String,
    pub api_key: Option<i16>,
    pub kind: SchemaKind,
    pub valid: Versions,
    pub flexible: Versions,
    pub fields: Vec<Field>,
}

/// A schema file kwire cannot use.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("schema: {0}")]
pub struct SchemaError(pub String);

/// Removes `//` comments outside string literals, so serde_json can read the file.
pub fn strip_comments(src: &str) -> String {
    let b = src.as_bytes();
    let mut out = String::with_capacity(src.len());
    let mut in_str = false;
    let mut escaped = false;
    // Copies runs of kept text whole; every split point is an ASCII byte, so the
    // slices stay on char boundaries.
    let mut kept_from = 0;
    let mut i = 0;
    while let Some(&c) = b.get(i) {
        if in_str {
            if escaped {
                escaped = false;
            } else if c == b'\\' {
                escaped = true;
            } else if c == b'"' {
                in_str = false;
            }
        } else if c == b'"' {
            in_str = true;
        } else if c == b'/' && b.get(i + 1) == Some(&b'/') {
            out.push_str(src.get(kept_from..i).unwrap_or_default());
            // Drop up to (not including) the newline.
            i = b
                .iter()
                .skip(i)
                .position(|&c| c == b'\n')
                .map_or(b.len(), |n| i + n);
            kept_from = i;
            continue;
        }
        i += 1;
    }
    out.push_str(src.get(kept_from..).unwrap_or_default());
    out
}

impl MessageSchema {
    pub fn parse(src: &str) -> Result<MessageSchema, SchemaError> {
        // Like Kafka's own reader (Jackson), take the first JSON value and ignore what
        // follows: kafka-clients 2.8's DescribeProducersRequest.json has a stray `]}`.
        let stripped = strip_comments(src);
        let json: Json = serde_json::Deserializer::from_str(&stripped)
            .into_iter::<Json>()
            .next()
            .ok_or_else(|| SchemaError("empty file".into()))?
            .map_err(|e| SchemaError(format!("invalid JSON: {e}")))?;
        if !json.is_object() {
            return Err(SchemaError("not a JSON object".into()));
        }
        let name = str_of(&json, "name")?.to_string();
        let kind = match str_of(&json, "type")? {
            "request" => SchemaKind::Request,
            "response" => SchemaKind::Response,
            "header" => SchemaKind::Header,
            "data" => SchemaKind::Data,
            other => return Err(SchemaError(format!("{name}: unknown type {other:?}"))),
        };
        let api_key = match json.get("apiKey") {
            Some(k) => Some(
                int_of(k)
                    .and_then(|k| i16::try_from(k).ok())
                    .filter(|k| *k >= 0)
                    .ok_or_else(|| SchemaError(format!("{name}: bad apiKey")))?,
            ),
            None => None,
        };
        if matches!(kind, SchemaKind::Request | SchemaKind::Response) && api_key.is_none() {
            return Err(SchemaError(format!(
                "{name}: a {} needs an apiKey",
                str_of(&json, "type")?
            )));
        }
        let valid = Versions::parse(str_of(&json, "validVersions")?)?;
        let flexible = Versions::parse(
            json.get("flexibleVersions")
                .and_then(Json::as_str)
                .unwrap_or("none"),
        )?;
        let mut commons = Commons::default();
        if let Some(list) = json.get("commonStructs") {
            let list = list
                .as_array()
                .ok_or_else(|| SchemaError(format!("{name}: commonStructs is not an array")))?;
            for s in list {
                commons.raw.push((str_of(s, "name")?, s));
            }
        }
        let fields = parse_fields(&json, &mut commons)
            .map_err(|e| SchemaError(format!("{name}: {}", e.0)))?;
        Ok(MessageSchema {
            name,
            api_key,
            kind,
            valid,
            flexible,
            fields,
        })
    }

    /// Whether `version` uses the flexible encoding.
    pub fn is_flexible(&self, version: i16) -> bool {
        self.flexible.contains(version)
    }
}

/// A number, or a string holding one: Kafka's reader (Jackson) accepts both, and
/// kafka-clients 3.9's BrokerHeartbeatRequest.json writes `"tag": "0"`.
fn int_of(j: &Json) -> Option<i64> {
    match j {
        Json::Number(n) => n.as_i64(),
        Json::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

fn str_of<'j>(json: &'j Json, key: &str) -> Result<&'j str, SchemaError> {
    json.get(key)
        .and_then(Json::as_str)
        .ok_or_else(|| SchemaError(format!("missing string {key:?}")))
}

/// The file's `commonStructs`: raw until first used, then parsed once.
#[derive(Default)]
struct Commons<'j> {
    raw: Vec<(&'j str, &'j Json)>,
    parsed: Vec<(String, Vec<Field>)>,
    /// Names being parsed, to refuse a struct that contains itself.
    stack: Vec<String>,
}

impl Commons<'_> {
    fn resolve(&mut self, elem: &str) -> Result<Vec<Field>, SchemaError> {
        if let Some((_, fs)) = self.parsed.iter().find(|(n, _)| n == elem) {
            return Ok(fs.clone());
        }
        if self.stack.iter().any(|n| n == elem) {
            return Err(SchemaError(format!("struct {elem} contains itself")));
        }
        let raw = self
            .raw
            .iter()
            .find(|(n, _)| *n == elem)
            .map(|(_, j)| *j)
            .ok_or_else(|| SchemaError(format!("unknown struct type {elem}")))?;
        self.stack.push(elem.to_string());
        let fields = parse_fields(raw, self);
        self.stack.pop();
        let fields = fields?;
        self.parsed.push((elem.to_string(), fields.clone()));
        Ok(fields)
    }
}

fn parse_fields(parent: &Json, commons: &mut Commons<'_>) -> Result<Vec<Field>, SchemaError> {
    let Some(list) = parent.get("fields") else {
        return Ok(Vec::new());
    };
    let list = list
        .as_array()
        .ok_or_else(|| SchemaError("\"fields\" is not an array".into()))?;
    list.iter().map(|f| parse_field(f, commons)).collect()
}

/// Field names that hold credentials (the contract's "Secrets"); `AuthBytes` is SaslAuthenticate's.
fn is_secret_name(name: &str) -> bool {
    name == "AuthBytes"
        || ["Password", "Secret", "Salt", "Hmac"]
            .iter()
            .any(|w| name.contains(w))
}

fn parse_field(f: &Json, commons: &mut Commons<'_>) -> Result<Field, SchemaError> {
    let name = str_of(f, "name")?.to_string();
    let type_name = str_of(f, "type")?.to_string();
    let opt_versions = |key: &str| -> Result<Versions, SchemaError> {
        match f.get(key).and_then(Json::as_str) {
            Some(s) => Versions::parse(s),
            None => Ok(Versions::NONE),
        }
    };
    let versions = Versions::parse(str_of(f, "versions")?)?;
    let nullable = opt_versions("nullableVersions")?;
    let tag = match f.get("tag") {
        Some(t) => Some(
            int_of(t)
                .and_then(|t| u32::try_from(t).ok())
                .ok_or_else(|| SchemaError(format!("{name}: bad tag")))?,
        ),
        None => None,
    };
    let tagged = opt_versions("taggedVersions")?;
    if tag.is_some() == tagged.is_empty() {
        return Err(SchemaError(format!(
            "{name}: tag and taggedVersions go together"
        )));
    }
    let flexible = match f.get("flexibleVersions").and_then(Json::as_str) {
        Some(s) => Some(Versions::parse(s)?),
        None => None,
    };
    let elem = type_name.trim_start_matches("[]");
    let mut struct_fields = || -> Result<Vec<Field>, SchemaError> {
        // Inline fields define the struct; a bare type name refers to a common struct.
        if f.get("fields").is_some() {
            return parse_fields(f, commons);
        }
        commons
            .resolve(elem)
            .map_err(|e| SchemaError(format!("{name}: {}", e.0)))
    };
    let (ty, elem_name) = if let Some(elem) = type_name.strip_prefix("[]") {
        match Prim::parse(elem) {
            Some(p) => (FieldType::ArrayOfPrim(p), elem.to_string()),
            None => (FieldType::ArrayOfStruct(struct_fields()?), elem.to_string()),
        }
    } else {
        match Prim::parse(&type_name) {
            Some(p) => (FieldType::Prim(p), type_name.clone()),
            None => (FieldType::Struct(struct_fields()?), type_name.clone()),
        }
    };
    let default = match f.get("default") {
        Some(Json::String(s)) => Some(s.clone()),
        Some(Json::Bool(b)) => Some(b.to_string()),
        Some(Json::Number(n)) => Some(n.to_string()),
        _ => None,
    };
    Ok(Field {
        secret: is_secret_name(&name),
        name,
        type_name,
        elem_name,
        ty,
        versions,
        nullable,
        tagged,
        tag,
        flexible,
        ignorable: f.get("ignorable").and_then(Json::as_bool).unwrap_or(false),
        default,
        about: f
            .get("about")
            .and_then(Json::as_str)
            .unwrap_or_default()
            .to_string(),
        labels: std::sync::OnceLock::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_parse() {
        assert_eq!(Versions::parse("0+").unwrap(), Versions::ALL);
        assert_eq!(Versions::parse("1-3").unwrap(), Versions { lo: 1, hi: 3 });
        assert_eq!(Versions::parse("2").unwrap(), Versions { lo: 2, hi: 2 });
        assert!(Versions::parse("none").unwrap().is_empty());
        assert!(Versions::parse("x").is_err());
        assert_eq!(Versions { lo: 0, hi: 2 }.to_string(), "0–2");
    }

    #[test]
    fn comments_inside_strings_survive() {
        let s = strip_comments("{ \"a\": \"x // y\" } // gone\n");
        assert_eq!(s, "{ \"a\": \"x // y\" } \n");
    }

    #[test]
    fn struct_and_tagged_fields_parse() {
        let s = MessageSchema::parse(include_str!("schemas/VoteResponse.json")).unwrap();
        assert_eq!(s.api_key, Some(52));
        assert_eq!(s.kind, SchemaKind::Response);
        let ne = s.fields.iter().find(|f| f.name == "NodeEndpoints").unwrap();
        assert_eq!(ne.tag, Some(0));
        assert!(ne.is_tagged_at(1) && !ne.is_tagged_at(0));
        assert!(matches!(&ne.ty, FieldType::ArrayOfStruct(f) if f.len() == 3));
        assert_eq!(ne.elem_name, "NodeEndpoint");
    }

    #[test]
    fn nested_common_structs_and_trailing_junk() {
        // B refers to C, declared after it; the stray `]}` is what kafka-clients 2.8 ships.
        let src = r#"{"name":"X","type":"response","apiKey":1,"validVersions":"0","fields":[
            {"name":"A","type":"B","versions":"0+","nullableVersions":"0+"}],
            "commonStructs":[{"name":"B","versions":"0+","fields":[
            {"name":"Cs","type":"[]C","versions":"0+"}]},
            {"name":"C","versions":"0+","fields":[{"name":"Hmac","type":"bytes","versions":"0+"}]}]}
            ]}"#;
        let s = MessageSchema::parse(src).unwrap();
        let FieldType::Struct(b) = &s.fields[0].ty else {
            panic!()
        };
        let FieldType::ArrayOfStruct(c) = &b[0].ty else {
            panic!()
        };
        assert!(c[0].secret && !s.fields[0].secret);
        let cyclic = r#"{"name":"X","type":"data","validVersions":"0","fields":[
            {"name":"A","type":"B","versions":"0+"}],
            "commonStructs":[{"name":"B","versions":"0+","fields":[{"name":"A","type":"B","versions":"0+"}]}]}"#;
        assert!(
            MessageSchema::parse(cyclic)
                .unwrap_err()
                .0
                .contains("contains itself")
        );
        assert!(MessageSchema::parse("[1]").is_err());
        assert!(
            MessageSchema::parse(r#"{"name":"X","type":"request","validVersions":"0"}"#).is_err()
        );
    }

    #[test]
    fn common_structs_resolve() {
        let src = r#"{"name":"X","type":"request","apiKey":0,"validVersions":"0","fields":[
            {"name":"A","type":"[]S","versions":"0+"}],
            "commonStructs":[{"name":"S","versions":"0+","fields":[
            {"name":"B","type":"int8","versions":"0+"}]}]}"#;
        let s = MessageSchema::parse(src).unwrap();
        assert!(matches!(&s.fields[0].ty, FieldType::ArrayOfStruct(f) if f[0].name == "B"));
    }
}
