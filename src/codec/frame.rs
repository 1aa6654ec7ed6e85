//! Whole frames: size prefix, header, then the body by schema or as raw bytes.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use super::decode::{Res, TAGS_IN_HEADER, TAGS_IN_STRUCT, Walker};
use super::error::{DecodeError, ErrorKind};
use super::schema::MessageSchema;
use super::tree::{Prefix, Role, Tree, Value};
use super::{registry, schema};
use crate::proto::apis::{self, ApiInfo};
use crate::proto::{Kind, peek_request_header, peek_size};

/// One decoded frame: its tree and the facts the pipeline and views need.
#[derive(Clone, Debug, PartialEq)]
pub struct Message<'a> {
    pub kind: Kind,
    pub tree: Tree<'a>,
    pub api_key: Option<i16>,
    pub api_version: Option<i16>,
    pub correlation_id: Option<i32>,
    /// Requests only; `None` for a null client id or a v0 header.
    pub client_id: Option<&'a str>,
    /// Node index of the decoded body; `None` when the body is raw or failed.
    pub body: Option<usize>,
    pub error: Option<DecodeError>,
    pub warnings: Vec<String>,
}

impl Message<'_> {
    fn new(kind: Kind) -> Self {
        Message {
            kind,
            tree: Tree::default(),
            api_key: None,
            api_version: None,
            correlation_id: None,
            client_id: None,
            body: None,
            error: None,
            warnings: Vec::new(),
        }
    }

    /// Kafka's name for the API, if known.
    pub fn api_name(&self) -> Option<&'static str> {
        self.api_key.and_then(apis::api_name)
    }
}

const RAW_NO_SCHEMA: &str = "not dissected: kwire has no schema for this API";
const RAW_OUT_OF_RANGE: &str = "not dissected: version outside the schema's range";
const RAW_NO_REQUEST: &str = "not dissected: the request is unknown";
const RAW_UNDECODED: &str = "not decoded: see the error";

/// Decodes a request frame (starting at its 4-byte size prefix).
pub fn decode_request(frame: &[u8]) -> Message<'_> {
    let mut m = Message::new(Kind::Request);
    let start = peek_request_header(frame);
    m.api_key = start.map(|s| s.api_key);
    m.api_version = start.map(|s| s.api_version);
    let info = m.api_key.and_then(apis::api_info);
    let schema = m.api_key.and_then(|k| schema(k, Kind::Request));
    let (name, ty) = root_name(schema, info, Kind::Request);
    let mut w = Walker::new(frame);
    w.open(
        frame,
        name,
        None,
        ty,
        m.api_version.map_or(Value::None, |v| Value::Int(v.into())),
        "",
        Role::Message,
    );
    let result = (|| -> Res<'_, Option<usize>> {
        let rest = size_prefix(&mut w, frame)?;
        // An unknown API's flexibility is unknowable: read the v1 header, which every such request starts with.
        let hv = match (info, m.api_version) {
            (Some(a), Some(v)) => a.request_header_version(v),
            _ => 1,
        };
        let hs = &registry().request_header;
        w.open(
            rest,
            &hs.name,
            None,
            "header",
            Value::Int(hv.into()),
            "common request header",
            Role::Header,
        );
        let (rest, ()) = w.fields(rest, &hs.fields, hv, hs.is_flexible(hv), TAGS_IN_HEADER)?;
        w.close(rest);
        body(&mut w, rest, schema, info, m.api_version, &mut m.warnings)
    })();
    finish(&mut m, w, frame, result);
    if let Some(h) = m.tree.child_with_role(0, Role::Header) {
        m.correlation_id = int_field(&m.tree, h, "correlation_id").map(|v| v as i32);
        m.client_id =
            m.tree
                .field(h, "client_id")
                .and_then(|c| match m.tree.nodes.get(c).map(|n| n.value) {
                    Some(Value::Str(s)) => s,
                    _ => None,
                });
    }
    m
}

/// Decodes a response frame. `api` is the (key, version) of its request, when known;
/// without it only the correlation id can be read.
pub fn decode_response(frame: &[u8], api: Option<(i16, i16)>) -> Message<'_> {
    let mut m = Message::new(Kind::Response);
    m.api_key = api.map(|a| a.0);
    m.api_version = api.map(|a| a.1);
    let info = m.api_key.and_then(apis::api_info);
    let schema = m.api_key.and_then(|k| schema(k, Kind::Response));
    let (name, ty) = root_name(schema, info, Kind::Response);
    let mut w = Walker::new(frame);
    w.open(
        frame,
        name,
        None,
        ty,
        m.api_version.map_or(Value::None, |v| Value::Int(v.into())),
        "",
        Role::Message,
    );
    let result = (|| -> Res<'_, Option<usize>> {
        let rest = size_prefix(&mut w, frame)?;
        let hs = &registry().response_header;
        let hv = match (info, m.api_version) {
            (Some(a), Some(v)) => Some(a.response_header_version(v)),
            // A known pairing with an API missing from the table: assume the common v0.
            (None, Some(_)) => Some(0),
            _ => None,
        };
        w.open(
            rest,
            &hs.name,
            None,
            "header",
            hv.map_or(Value::None, |v| Value::Int(v.into())),
            "common response header",
            Role::Header,
        );
        let Some(hv) = hv else {
            // Without the request, whether a tagged section follows is unknown: stop at correlation_id.
            let (rest, ()) = w.fields(rest, &hs.fields, 0, false, TAGS_IN_HEADER)?;
            w.close(rest);
            raw(&mut w, rest, RAW_NO_REQUEST);
            return Ok((end_of(rest), None));
        };
        let (rest, ()) = w.fields(rest, &hs.fields, hv, hs.is_flexible(hv), TAGS_IN_HEADER)?;
        w.close(rest);
        body(&mut w, rest, schema, info, m.api_version, &mut m.warnings)
    })();
    finish(&mut m, w, frame, result);
    if let Some(h) = m.tree.child_with_role(0, Role::Header) {
        m.correlation_id = int_field(&m.tree, h, "correlation_id").map(|v| v as i32);
    }
    m
}

fn root_name(
    schema: Option<&'static MessageSchema>,
    info: Option<&'static ApiInfo>,
    kind: Kind,
) -> (&'static str, &'static str) {
    match (schema, info) {
        (Some(s), _) => (&s.name, "message"),
        (None, Some(a)) => (a.name, kind.as_str()),
        (None, None) => ("Kafka", kind.as_str()),
    }
}

/// The Frame group with its int32 size.
fn size_prefix<'a>(w: &mut Walker<'a>, frame: &'a [u8]) -> Result<&'a [u8], DecodeError> {
    w.open(
        frame,
        "Frame",
        None,
        "",
        Value::None,
        "length-delimited framing",
        Role::Frame,
    );
    let (rest, size) = w.i32(frame)?;
    w.leaf(
        frame,
        rest,
        "size",
        None,
        "int32",
        Value::Int(size.into()),
        Prefix::None,
        "number of bytes that follow",
        Role::Size,
    );
    w.close(rest);
    let actual = rest.len() as u64;
    match u64::try_from(size) {
        // A frame cut short decodes as far as it goes; a longer one leaves trailing bytes.
        Ok(s) if s <= actual => Ok(rest.get(..s as usize).unwrap_or(rest)),
        Ok(_) => Ok(rest),
        Err(_) => Err(w.err(
            frame,
            ErrorKind::SizeMismatch {
                declared: size.into(),
                actual,
            },
        )),
    }
}

fn body<'a>(
    w: &mut Walker<'a>,
    rest: &'a [u8],
    schema: Option<&'static MessageSchema>,
    info: Option<&'static ApiInfo>,
    version: Option<i16>,
    warnings: &mut Vec<String>,
) -> Res<'a, Option<usize>> {
    let Some(s) = schema else {
        raw(w, rest, RAW_NO_SCHEMA);
        return Ok((end_of(rest), None));
    };
    let v = version.unwrap_or(-1);
    if !s.valid.contains(v) {
        let api = info.map_or(s.name.as_str(), |a| a.name);
        warnings.push(format!("{api} v{v} is outside the known range {}", s.valid));
        raw(w, rest, RAW_OUT_OF_RANGE);
        return Ok((end_of(rest), None));
    }
    let idx = w.open(
        rest,
        &s.name,
        None,
        "struct",
        Value::Int(v.into()),
        "",
        Role::Body,
    );
    let (after, ()) = w.fields(rest, &s.fields, v, s.is_flexible(v), TAGS_IN_STRUCT)?;
    w.close(after);
    Ok((after, Some(idx)))
}

/// The empty slice just past `s`, so offsets stay meaningful.
fn end_of(s: &[u8]) -> &[u8] {
    s.get(s.len()..).unwrap_or_default()
}

fn raw<'a>(w: &mut Walker<'a>, rest: &'a [u8], about: &'static str) {
    w.leaf(
        rest,
        end_of(rest),
        "body",
        None,
        "bytes",
        Value::Bytes(Some(rest)),
        Prefix::None,
        about,
        Role::Raw,
    );
}

/// Closes the tree; on error, keeps what decoded and shows the rest as raw bytes.
fn finish<'a>(
    m: &mut Message<'a>,
    mut w: Walker<'a>,
    frame: &'a [u8],
    result: Res<'a, Option<usize>>,
) {
    let end = end_of(frame);
    match result {
        Ok((after, body)) => {
            m.body = body;
            let declared = peek_request_header(frame)
                .map(|s| s.size)
                .or_else(|| peek_size(frame));
            let present = frame.len().saturating_sub(4) as u64;
            if let Some(d) = declared
                .and_then(|d| u64::try_from(d).ok())
                .filter(|&d| d > present)
            {
                // Everything present decoded, but the frame promised more.
                let at = frame.get(4..).unwrap_or_default();
                m.error = Some(DecodeError {
                    kind: ErrorKind::Truncated {
                        need: d,
                        have: present,
                    },
                    path: String::new(),
                    offset: w.off(at),
                });
                m.body = None;
            }
            // Bytes past the body, or past a size prefix that declared less than the frame holds.
            let tail = frame.get(w.off(after)..).unwrap_or_default();
            if !tail.is_empty() {
                m.error = Some(w.err(tail, ErrorKind::TrailingBytes(tail.len() as u64)));
                m.body = None;
                raw(&mut w, tail, RAW_UNDECODED);
            }
            w.close(end);
        }
        Err(e) => {
            w.close_to(1, e.offset);
            let tail = frame.get(e.offset.min(frame.len())..).unwrap_or_default();
            if !tail.is_empty() {
                raw(&mut w, tail, RAW_UNDECODED);
            }
            w.close(end);
            m.error = Some(e);
        }
    }
    m.tree = Tree { nodes: w.nodes };
}

fn int_field(tree: &Tree<'_>, parent: usize, name: &str) -> Option<i64> {
    match tree.nodes.get(tree.field(parent, name)?)?.value {
        Value::Int(v) => Some(v),
        _ => None,
    }
}
