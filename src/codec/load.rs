//! Kafka's own message schemas, loaded at run time from kafka-clients jars or
//! directories, merged into one [`Schemas`] set with kwire's built-in ones.
//!
//! Merging: for each API, direction and version, the definition with the highest
//! `validVersions` wins (a newer Kafka), then the source given first; versions only
//! an older jar still has (Produce v0–2 after Kafka 4.0) keep decoding from it.
//! Vote and FindCoordinator stay built in unless a loaded schema covers more versions.
#![cfg_attr(
    not(test),
    deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)
)]

use super::schema::{MessageSchema, SchemaKind, Versions, strip_comments};
use crate::proto::Kind;
use crate::proto::apis::{API_VERSIONS, CONTROLLED_SHUTDOWN};
use serde_json::value::RawValue;
use std::collections::BTreeMap;
use std::ffi::OsString;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The most bytes read from one schema file: Kafka's largest is under 40 KB.
const MAX_FILE: u64 = 4 << 20;
/// The most schema files read from one source.
const MAX_FILES: usize = 4096;

/// Every schema kwire can decode with: the built-in headers, plus per API key
/// the request and response definitions in priority order.
#[derive(Debug, Default)]
pub struct Schemas {
    pub request_header: MessageSchema,
    pub response_header: MessageSchema,
    apis: BTreeMap<i16, Api>,
    /// Data schemas (`LeaderChangeMessage`, `VotersRecord`, ...), by name, highest version first.
    data: Vec<Def>,
    /// What was loaded, one entry per source.
    sources: Vec<String>,
}

/// One definition: parsed, or its (comment-free) text, parsed on first use. Loading
/// reads only what merging needs (name, type, API key, versions), so start-up does not
/// pay for the hundreds of schemas a capture never uses.
#[derive(Debug)]
pub struct Def {
    name: String,
    kind: SchemaKind,
    api_key: Option<i16>,
    valid: Versions,
    text: Option<Box<str>>,
    /// A jar's file as the jar holds it, when only its head was read: inflated and
    /// parsed on first use.
    packed: Option<Packed>,
    parsed: OnceLock<Option<MessageSchema>>,
}

/// A jar entry's bytes, compressed as stored, with what the jar says they inflate to.
#[derive(Debug)]
struct Packed {
    raw: Raw,
    deflated: bool,
    crc: u32,
    /// Where the bytes are in the jar (offset, length), when known.
    at: Option<(u64, u64)>,
}

/// A jar entry's stored bytes: read, or where to read them (see [`cache`]).
#[derive(Debug)]
enum Raw {
    Held(Box<[u8]>),
    In(std::sync::Arc<PathBuf>),
}

impl Packed {
    /// The stored bytes, read from the jar if not held.
    fn raw(&self) -> Result<std::borrow::Cow<'_, [u8]>, String> {
        use std::os::unix::fs::FileExt;
        match &self.raw {
            Raw::Held(b) => Ok(std::borrow::Cow::Borrowed(b)),
            Raw::In(jar) => {
                let (offset, len) = self.at.ok_or("not located in the jar")?;
                if len > MAX_FILE {
                    return Err(format!("larger than {MAX_FILE} bytes"));
                }
                let file = std::fs::File::open(&**jar).map_err(|e| e.to_string())?;
                let mut b = vec![0; len as usize];
                file.read_exact_at(&mut b, offset)
                    .map_err(|e| e.to_string())?;
                Ok(std::borrow::Cow::Owned(b))
            }
        }
    }

    /// The whole file: inflated within [`MAX_FILE`], its checksum checked.
    fn text(&self) -> Result<String, String> {
        let raw = self.raw()?;
        let text = if self.deflated {
            read_capped(flate2::read::DeflateDecoder::new(&*raw), 64 << 10)?
        } else {
            read_capped(&*raw, raw.len() as u64)?
        };
        if crc32fast::hash(text.as_bytes()) != self.crc {
            return Err("Invalid checksum".to_string());
        }
        Ok(text)
    }

    /// The head of the file (see [`Def::head_of`]), inflating no more of it than that
    /// takes: a few steps of more bytes, through `inflater` (reused: setting one up
    /// costs more than a schema's head). `None` when the first [`HEAD_BYTES`] do not
    /// hold it.
    fn head(&self, inflater: &mut flate2::Decompress) -> Option<Head> {
        let raw = self.raw().ok()?;
        let mut out = Vec::new();
        if self.deflated {
            inflater.reset(false);
        }
        for limit in [HEAD_BYTES / 4, HEAD_BYTES] {
            let done = if self.deflated {
                out.reserve_exact(limit.saturating_sub(out.len()));
                let status = inflater
                    .decompress_vec(
                        raw.get(inflater.total_in() as usize..)?,
                        &mut out,
                        flate2::FlushDecompress::None,
                    )
                    .ok()?;
                status == flate2::Status::StreamEnd
            } else {
                out = raw.get(..limit.min(raw.len()))?.to_vec();
                out.len() == raw.len()
            };
            // A character cut at the end is left out.
            let text = match std::str::from_utf8(&out) {
                Ok(t) => t,
                Err(e) if e.error_len().is_none() => {
                    std::str::from_utf8(out.get(..e.valid_up_to())?).ok()?
                }
                Err(_) => return None,
            };
            // Comments between members are passed over; one inside a value takes the
            // whole text's comments out first.
            let head = members_before_fields(text)
                .or_else(|| members_before_fields(&strip_comments(text)));
            if let Some(head) = head {
                return Some(head);
            }
            if done {
                return None;
            }
        }
        None
    }
}

/// What merging needs of a schema: name, type, API key and versions.
type Head = (String, SchemaKind, Option<i16>, Versions);

impl Def {
    fn parsed(s: MessageSchema) -> Def {
        Def {
            name: s.name.clone(),
            kind: s.kind,
            api_key: s.api_key,
            valid: s.valid,
            text: None,
            packed: None,
            parsed: OnceLock::from(Some(s)),
        }
    }

    /// Reads a schema file's head: its name, type, API key and versions, checked as
    /// [`MessageSchema::parse`] checks them; the rest is parsed on first use.
    pub fn scan(src: &str) -> Result<Def, String> {
        let text = strip_comments(src);
        match Def::head(&text) {
            Some((name, kind, api_key, valid)) => Ok(Def {
                name,
                kind,
                api_key,
                valid,
                text: Some(text.into_boxed_str()),
                packed: None,
                parsed: OnceLock::new(),
            }),
            // The full parse says why, in its words.
            None => match MessageSchema::parse(src) {
                Ok(s) => Ok(Def::parsed(s)),
                Err(e) => Err(e.0),
            },
        }
    }

    /// A jar's file, from its first bytes when they hold its head (the whole file is
    /// inflated and parsed on first use); else read whole, as [`Def::scan`].
    fn scan_packed(packed: Packed, inflater: &mut flate2::Decompress) -> Result<Def, String> {
        if let Some((name, kind, api_key, valid)) = packed.head(inflater) {
            return Ok(Def {
                name,
                kind,
                api_key,
                valid,
                text: None,
                packed: Some(packed),
                parsed: OnceLock::new(),
            });
        }
        // Kept too, so that a cache can say where it is.
        let mut d = Def::scan(&packed.text()?)?;
        d.packed = Some(packed);
        Ok(d)
    }

    fn head(text: &str) -> Option<Head> {
        // The first JSON value, as MessageSchema::parse takes it; values stay unparsed.
        let top: BTreeMap<&str, &RawValue> = serde_json::Deserializer::from_str(text)
            .into_iter()
            .next()?
            .ok()?;
        Def::head_of(top)
    }

    /// The head's members checked as [`MessageSchema::parse`] checks them.
    fn head_of(top: BTreeMap<&str, &RawValue>) -> Option<Head> {
        let string = |key: &str| -> Option<String> {
            serde_json::from_str::<String>(top.get(key)?.get()).ok()
        };
        let name = string("name")?;
        let kind = match string("type")?.as_str() {
            "request" => SchemaKind::Request,
            "response" => SchemaKind::Response,
            "header" => SchemaKind::Header,
            "data" => SchemaKind::Data,
            _ => return None,
        };
        let api_key = match top.get("apiKey") {
            Some(raw) => {
                let k = match serde_json::from_str::<serde_json::Value>(raw.get()).ok()? {
                    serde_json::Value::Number(n) => n.as_i64(),
                    serde_json::Value::String(s) => s.trim().parse().ok(),
                    _ => None,
                };
                Some(k.and_then(|k| i16::try_from(k).ok()).filter(|k| *k >= 0)?)
            }
            None => None,
        };
        if matches!(kind, SchemaKind::Request | SchemaKind::Response) && api_key.is_none() {
            return None;
        }
        let valid = Versions::parse(&string("validVersions")?).ok()?;
        if let Some(raw) = top.get("flexibleVersions") {
            if let Ok(f) = serde_json::from_str::<String>(raw.get()) {
                Versions::parse(&f).ok()?;
            }
        }
        Some((name, kind, api_key, valid))
    }

    /// The parsed schema; `None` when its text turns out not to parse (it is then
    /// left out, as a file that fails at load is).
    fn get(&self) -> Option<&MessageSchema> {
        self.parsed
            .get_or_init(|| {
                if let Some(text) = self.text.as_deref() {
                    return MessageSchema::parse(text).ok();
                }
                // Indexed by its head alone: the whole file must say the same.
                let s = MessageSchema::parse(&self.packed.as_ref()?.text().ok()?).ok()?;
                (s.name == self.name
                    && s.kind == self.kind
                    && s.api_key == self.api_key
                    && s.valid == self.valid)
                    .then_some(s)
            })
            .as_ref()
    }
}

/// Bytes of a jar's schema file read to find its head: Kafka's files put the licence and
/// the head's members before `fields`, within 3 KB (most within 1.5 KB). A file whose
/// head is not there is read whole.
const HEAD_BYTES: usize = 6 << 10;

/// The head ([`Def::head_of`]) of the members of the top JSON object before its `fields`
/// (or all of them, when it ends first); `None` when the text ends first or is not such
/// an object. `//` comments between members are passed over. A later duplicate wins, as
/// in a whole-object parse.
fn members_before_fields(text: &str) -> Option<Head> {
    // Whitespace and comments.
    fn skip(mut s: &str) -> &str {
        loop {
            s = s.trim_start();
            match s.strip_prefix("//") {
                Some(c) => s = c.find('\n').and_then(|n| c.get(n..)).unwrap_or_default(),
                None => return s,
            }
        }
    }
    // A key, or a value left unparsed, and what follows it.
    fn key(s: &str) -> Option<(&str, &str)> {
        let mut it = serde_json::Deserializer::from_str(s).into_iter::<&str>();
        let v = it.next()?.ok()?;
        Some((v, skip(s.get(it.byte_offset()..)?)))
    }
    fn value(s: &str) -> Option<(&RawValue, &str)> {
        let mut it = serde_json::Deserializer::from_str(s).into_iter::<&RawValue>();
        let v = it.next()?.ok()?;
        Some((v, skip(s.get(it.byte_offset()..)?)))
    }
    let mut rest = skip(skip(text).strip_prefix('{')?);
    let mut top = BTreeMap::new();
    if rest.starts_with('}') {
        return Def::head_of(top);
    }
    loop {
        let (key, after) = key(rest)?;
        let after = skip(after.strip_prefix(':')?);
        if key == "fields" {
            return Def::head_of(top);
        }
        let (value, after) = value(after)?;
        top.insert(key, value);
        if let Some(after) = after.strip_prefix(',') {
            rest = skip(after);
        } else if after.starts_with('}') {
            return Def::head_of(top);
        } else {
            return None;
        }
    }
}

#[derive(Debug, Default)]
struct Api {
    requests: Vec<Def>,
    responses: Vec<Def>,
    /// Whether the definitions are kwire's built-in ones.
    builtin: bool,
}

impl Api {
    fn list(&self, kind: Kind) -> &[Def] {
        match kind {
            Kind::Request => &self.requests,
            Kind::Response => &self.responses,
        }
    }
}

/// How many versions a set of definitions covers.
fn coverage(list: &[Def]) -> usize {
    let mut n = 0usize;
    for v in 0..=list.iter().map(|s| s.valid.hi).max().unwrap_or(-1) {
        n += usize::from(list.iter().any(|s| s.valid.contains(v)));
    }
    n
}

impl Default for MessageSchema {
    fn default() -> Self {
        MessageSchema {
            name: String::new(),
            api_key: None,
            kind: SchemaKind::Header,
            valid: super::schema::Versions::NONE,
            flexible: super::schema::Versions::NONE,
            fields: Vec::new(),
        }
    }
}

impl Schemas {
    /// Every request and response definition, of every API, and the data schemas
    /// (parsing any not yet used).
    pub fn all_messages(&self) -> impl Iterator<Item = &MessageSchema> {
        self.apis
            .values()
            .flat_map(|a| a.requests.iter().chain(a.responses.iter()))
            .chain(self.data.iter())
            .filter_map(Def::get)
    }

    /// Only kwire's built-in schemas: the headers, Vote and FindCoordinator.
    pub fn builtin() -> Schemas {
        let r = super::registry();
        let mut s = Schemas {
            request_header: r.request_header.clone(),
            response_header: r.response_header.clone(),
            ..Schemas::default()
        };
        for m in &r.messages {
            if let Some(key) = m.api_key {
                let api = s.apis.entry(key).or_default();
                api.builtin = true;
                match m.kind {
                    SchemaKind::Request => api.requests.push(Def::parsed(m.clone())),
                    SchemaKind::Response => api.responses.push(Def::parsed(m.clone())),
                    _ => {}
                }
            }
        }
        s
    }

    /// Adds parsed schemas from one source (lower priority than those added before,
    /// for a version both define with the same `validVersions` top).
    pub fn add(&mut self, label: &str, schemas: Vec<MessageSchema>) {
        self.add_defs(label, schemas.into_iter().map(Def::parsed).collect());
    }

    /// As [`Schemas::add`], with definitions parsed on first use.
    pub fn add_defs(&mut self, label: &str, schemas: Vec<Def>) {
        let mut loaded: BTreeMap<i16, Api> = BTreeMap::new();
        for m in schemas {
            match (m.kind, m.api_key) {
                (SchemaKind::Request, Some(k)) => loaded.entry(k).or_default().requests.push(m),
                (SchemaKind::Response, Some(k)) => loaded.entry(k).or_default().responses.push(m),
                (SchemaKind::Data, _) => self.data.push(m),
                // Headers stay kwire's own: their field names are part of the output.
                _ => {}
            }
        }
        for (key, new) in loaded {
            let api = self.apis.entry(key).or_default();
            if api.builtin {
                // A built-in definition gives way only to one covering more versions.
                let wins = |old: &[Def], new: &[Def]| {
                    new.iter()
                        .any(|n| coverage(std::slice::from_ref(n)) > coverage(old))
                };
                if wins(&api.requests, &new.requests) || wins(&api.responses, &new.responses) {
                    *api = Api::default();
                } else {
                    continue;
                }
            }
            api.requests.extend(new.requests);
            api.responses.extend(new.responses);
            // Stable: among equal tops, the source added first keeps priority.
            api.requests.sort_by_key(|s| std::cmp::Reverse(s.valid.hi));
            api.responses.sort_by_key(|s| std::cmp::Reverse(s.valid.hi));
        }
        self.data.sort_by_key(|s| std::cmp::Reverse(s.valid.hi));
        self.sources.push(label.to_string());
    }

    /// The definition of `key` in direction `kind` that covers `version`.
    pub fn message(&self, key: i16, kind: Kind, version: i16) -> Option<&MessageSchema> {
        self.apis
            .get(&key)?
            .list(kind)
            .iter()
            .filter(|s| s.valid.contains(version))
            .find_map(Def::get)
    }

    /// The newest definition of `key` in direction `kind`, whatever the version.
    pub fn newest(&self, key: i16, kind: Kind) -> Option<&MessageSchema> {
        self.apis.get(&key)?.list(kind).iter().find_map(Def::get)
    }

    /// A data schema (no API key) by name, e.g. `"LeaderChangeMessage"`.
    pub fn data(&self, name: &str) -> Option<&MessageSchema> {
        self.data
            .iter()
            .filter(|s| s.name == name)
            .find_map(Def::get)
    }

    /// Every version of `key` that some definition covers, in direction `kind`.
    pub fn versions(&self, key: i16, kind: Kind) -> Vec<i16> {
        let Some(api) = self.apis.get(&key) else {
            return Vec::new();
        };
        let list = api.list(kind);
        let top = list.iter().map(|s| s.valid.hi).max().unwrap_or(-1);
        (0..=top)
            .filter(|v| list.iter().any(|s| s.valid.contains(*v)))
            .collect()
    }

    /// API keys with at least one definition.
    pub fn api_keys(&self) -> impl Iterator<Item = i16> + '_ {
        self.apis.keys().copied()
    }

    /// Every (key, version) with a response definition: the candidates for inference.
    pub fn response_candidates(&self) -> impl Iterator<Item = (i16, i16)> + '_ {
        self.apis.keys().flat_map(move |&k| {
            self.versions(k, Kind::Response)
                .into_iter()
                .map(move |v| (k, v))
        })
    }

    /// Kafka's name for the API (`"Produce"`), from its schema.
    pub fn api_name(&self, key: i16) -> Option<&str> {
        if let Some(s) = self.newest(key, Kind::Request) {
            return Some(s.name.strip_suffix("Request").unwrap_or(&s.name));
        }
        let s = self.newest(key, Kind::Response)?;
        Some(s.name.strip_suffix("Response").unwrap_or(&s.name))
    }

    /// Whether `version` of `key` is flexible, if some definition says.
    pub fn is_flexible(&self, key: i16, version: i16) -> Option<bool> {
        self.message(key, Kind::Request, version)
            .or_else(|| self.message(key, Kind::Response, version))
            .map(|s| s.is_flexible(version))
    }

    /// Request header version: 2 when flexible, else 1; ControlledShutdown v0 has 0.
    pub fn request_header_version(&self, key: i16, version: i16) -> Option<i16> {
        let flexible = self.is_flexible(key, version)?;
        Some(if key == CONTROLLED_SHUTDOWN && version == 0 {
            0
        } else if flexible {
            2
        } else {
            1
        })
    }

    /// Response header version: 1 when flexible, else 0; ApiVersions always has 0, so
    /// that a client that does not yet know the broker's versions can read it.
    pub fn response_header_version(&self, key: i16, version: i16) -> Option<i16> {
        let flexible = self.is_flexible(key, version)?;
        Some(if key == API_VERSIONS || !flexible {
            0
        } else {
            1
        })
    }

    /// The sources loaded, as given.
    pub fn sources(&self) -> &[String] {
        &self.sources
    }

    /// Number of APIs with a request or response definition.
    pub fn api_count(&self) -> usize {
        self.apis.len()
    }

    /// Makes the set live as long as the process, as decoded trees borrow names from it.
    pub fn leak(self) -> &'static Schemas {
        Box::leak(Box::new(self))
    }
}

/// The result of loading: the merged set, one line saying what was loaded, and one
/// line per file or source that was skipped.
#[derive(Debug)]
pub struct Loaded {
    pub schemas: Schemas,
    pub description: String,
    pub problems: Vec<String>,
}

/// Reads every `*.json` schema from a jar (its `common/message/`), a directory (or
/// its `common/message/`), or one `.json` file.
/// Returns the schemas and one line per file that could not be used.
pub fn read_source(path: &Path) -> Result<(Vec<MessageSchema>, Vec<String>), String> {
    let shown = path.display();
    let files = files_of(path)?;
    let mut schemas = Vec::with_capacity(files.len());
    let mut problems = Vec::new();
    for (name, text) in files {
        match text
            .map_err(|e| e.to_string())
            .and_then(|t| MessageSchema::parse(&t).map_err(|e| e.0))
        {
            Ok(s) => schemas.push(s),
            Err(e) => problems.push(format!("{shown}: skipped {name}: {e}")),
        }
    }
    if schemas.is_empty() {
        return Err(format!("{shown}: no Kafka message schemas in it"));
    }
    Ok((schemas, problems))
}

/// As [`read_source`], with each schema's fields parsed on first use ([`Def::scan`]);
/// a jar's files are inflated only as far as their heads.
pub fn scan_source(path: &Path) -> Result<(Vec<Def>, Vec<String>), String> {
    scan_source_cached(path, None)
}

/// As [`scan_source`], with a jar's index kept in `cache` (see [`cache`]).
pub fn scan_source_cached(
    path: &Path,
    cache: Option<&Path>,
) -> Result<(Vec<Def>, Vec<String>), String> {
    let shown = path.display();
    let mut schemas = Vec::new();
    let mut problems = Vec::new();
    if is_jar(path)? {
        for (name, def) in cache::scan_jar(path, cache)? {
            match def {
                Ok(s) => schemas.push(s),
                Err(e) => problems.push(format!("{shown}: skipped {name}: {e}")),
            }
        }
    } else {
        for (name, text) in files_of(path)? {
            match text.and_then(|t| Def::scan(&t)) {
                Ok(s) => schemas.push(s),
                Err(e) => problems.push(format!("{shown}: skipped {name}: {e}")),
            }
        }
    }
    if schemas.is_empty() {
        return Err(format!("{shown}: no Kafka message schemas in it"));
    }
    Ok((schemas, problems))
}

/// Whether `path` is read as a jar (not a directory, nor one `.json` file).
fn is_jar(path: &Path) -> Result<bool, String> {
    let meta = std::fs::metadata(path).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(!meta.is_dir() && path.extension().is_none_or(|x| x != "json"))
}

/// The schema files of a source, read (not parsed).
fn files_of(path: &Path) -> Result<Files, String> {
    let shown = path.display();
    let meta = std::fs::metadata(path).map_err(|e| format!("{shown}: {e}"))?;
    let files = if meta.is_dir() {
        read_dir(path)?
    } else if path.extension().is_some_and(|x| x == "json") {
        // One schema file on its own.
        let name = path
            .file_name()
            .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
        let text = std::fs::File::open(path)
            .map_err(|e| e.to_string())
            .and_then(|f| read_capped(f, 64 << 10));
        vec![(name, text)]
    } else {
        read_jar(path)?
            .into_iter()
            .map(|(name, packed)| (name, packed.and_then(|p| p.text())))
            .collect()
    };
    Ok(files)
}

type Files = Vec<(String, Result<String, String>)>;

/// Reads at most [`MAX_FILE`] bytes; `hint` is the expected size (capped, so a
/// declared size never drives the allocation).
fn read_capped(r: impl Read, hint: u64) -> Result<String, String> {
    let mut s = String::with_capacity(hint.min(MAX_FILE) as usize + 1);
    let mut r = r.take(MAX_FILE + 1);
    r.read_to_string(&mut s).map_err(|e| e.to_string())?;
    if s.len() as u64 > MAX_FILE {
        return Err(format!("larger than {MAX_FILE} bytes"));
    }
    Ok(s)
}

/// The largest jar read: kafka-clients is about 11 MB.
const MAX_JAR: u64 = 256 << 20;

/// A jar's schema files by name, as stored (see [`Packed`]), or why one cannot be read.
type Jar = Vec<(String, Result<Packed, String>)>;

/// A jar's schema files, as stored (see [`Packed`]).
fn read_jar(path: &Path) -> Result<Jar, String> {
    let shown = path.display();
    // Read through the file, not whole: only the central directory and the schema
    // entries are read (a few hundred KB of a 10 MB jar), which is most of start-up.
    let file = std::fs::File::open(path).map_err(|e| format!("{shown}: {e}"))?;
    let size = file.metadata().map_err(|e| format!("{shown}: {e}"))?.len();
    if size > MAX_JAR {
        return Err(format!("{shown}: larger than {MAX_JAR} bytes"));
    }
    // A jar starts at offset 0; not searching for an embedded archive saves time.
    let config = zip::read::Config {
        archive_offset: zip::read::ArchiveOffset::Known(0),
    };
    let reader = Blocks::new(file, size);
    let mut zip = zip::ZipArchive::with_config(config, reader)
        .map_err(|e| format!("{shown}: not a jar or directory ({e})"))?;
    let names: Vec<String> = zip
        .file_names()
        .filter(|n| {
            n.strip_prefix("common/message/")
                .is_some_and(|n| n.ends_with(".json") && !n.contains('/'))
        })
        .take(MAX_FILES)
        .map(str::to_string)
        .collect();
    let mut out = Vec::with_capacity(names.len());
    for name in names {
        let short = name.trim_start_matches("common/message/").to_string();
        out.push((short, packed_entry(&mut zip, &name)));
    }
    Ok(out)
}

/// One entry's stored bytes, read within [`MAX_FILE`].
fn packed_entry(zip: &mut zip::ZipArchive<Blocks>, name: &str) -> Result<Packed, String> {
    let index = zip
        .index_for_name(name)
        .ok_or_else(|| "not in the jar".to_string())?;
    let entry = zip.by_index_raw(index).map_err(|e| e.to_string())?;
    let deflated = match entry.compression() {
        zip::CompressionMethod::Deflated => true,
        zip::CompressionMethod::Stored => false,
        other => return Err(format!("unsupported compression method {other}")),
    };
    if entry.size() > MAX_FILE {
        return Err(format!("larger than {MAX_FILE} bytes"));
    }
    let crc = entry.crc32();
    let at = entry.data_start().map(|o| (o, entry.compressed_size()));
    let hint = entry.compressed_size().min(MAX_FILE);
    let mut raw = Vec::with_capacity(hint as usize);
    entry
        .take(MAX_FILE + 1)
        .read_to_end(&mut raw)
        .map_err(|e| e.to_string())?;
    if raw.len() as u64 > MAX_FILE {
        return Err(format!("larger than {MAX_FILE} bytes"));
    }
    Ok(Packed {
        raw: Raw::Held(raw.into_boxed_slice()),
        deflated,
        crc,
        at,
    })
}

/// A jar's index kept between runs, so that a run whose capture needs no schema of the
/// jar does not read it: per file of the jar, its head and where its bytes are, or why
/// it cannot be used. It is keyed by the jar's path, size and modification time; a
/// file's bytes are read, checksummed and parsed on first use, and must say what the
/// index said (see [`Def::get`]), so a stale or damaged index never decodes anything
/// wrongly. Writing it is best effort.
mod cache {
    use super::{Def, Jar, Packed, Raw, SchemaKind, Versions, read_jar};
    use serde_json::{Value, json};
    use std::path::{Path, PathBuf};
    use std::sync::{Arc, OnceLock};

    /// Changes whenever what is kept changes.
    const VERSION: u64 = 2;
    /// The largest index read (Kafka's jars need about 100 KB).
    const MAX_INDEX: u64 = 8 << 20;

    type Scanned = Vec<(String, Result<Def, String>)>;

    /// The jar's files, from the cache when it has them, else read (and kept there).
    pub(super) fn scan_jar(jar: &Path, cache: Option<&Path>) -> Result<Scanned, String> {
        let key = cache.and_then(|_| key(jar));
        if let (Some(dir), Some(key)) = (cache, &key) {
            if let Some(found) = read(&file(dir, key), jar, key) {
                return Ok(found);
            }
        }
        let mut inflater = flate2::Decompress::new(false);
        let files: Jar = read_jar(jar)?;
        let scanned: Scanned = files
            .into_iter()
            .map(|(name, packed)| (name, packed.and_then(|p| Def::scan_packed(p, &mut inflater))))
            .collect();
        if let (Some(dir), Some(key)) = (cache, key) {
            write(dir, &key, &scanned);
        }
        Ok(scanned)
    }

    /// What identifies the jar's contents: its path, size and modification time.
    fn key(jar: &Path) -> Option<Value> {
        let meta = std::fs::metadata(jar).ok()?;
        let mtime = meta
            .modified()
            .ok()?
            .duration_since(std::time::UNIX_EPOCH)
            .ok()?;
        Some(json!({
            "version": VERSION,
            "path": jar.to_str()?,
            "len": meta.len(),
            "mtime": [mtime.as_secs(), mtime.subsec_nanos()],
        }))
    }

    fn file(dir: &Path, key: &Value) -> PathBuf {
        use std::hash::{Hash, Hasher};
        let mut h = std::hash::DefaultHasher::new();
        key.to_string().hash(&mut h);
        dir.join(format!("schemas-{:016x}.json", h.finish()))
    }

    fn kind_name(k: SchemaKind) -> &'static str {
        match k {
            SchemaKind::Request => "request",
            SchemaKind::Response => "response",
            SchemaKind::Header => "header",
            SchemaKind::Data => "data",
        }
    }

    fn read(path: &Path, jar: &Path, key: &Value) -> Option<Scanned> {
        use std::io::Read;
        let mut text = String::new();
        std::fs::File::open(path)
            .ok()?
            .take(MAX_INDEX)
            .read_to_string(&mut text)
            .ok()?;
        let v: Value = serde_json::from_str(&text).ok()?;
        if v.get("key")? != key {
            return None;
        }
        let jar = Arc::new(jar.to_path_buf());
        let mut out = Vec::new();
        // Each file: [file, error], or [file, name, kind, api key, lo, hi, offset, size,
        // deflated, crc].
        for f in v.get("files")?.as_array()? {
            let f = f.as_array()?;
            let name = f.first()?.as_str()?.to_string();
            if let [_, e] = f.as_slice() {
                out.push((name, Err(e.as_str()?.to_string())));
                continue;
            }
            let int = |i: usize| f.get(i).and_then(Value::as_i64);
            let kind = match f.get(2)?.as_str()? {
                "request" => SchemaKind::Request,
                "response" => SchemaKind::Response,
                "header" => SchemaKind::Header,
                "data" => SchemaKind::Data,
                _ => return None,
            };
            let api_key = match f.get(3)? {
                Value::Null => None,
                k => Some(i16::try_from(k.as_i64()?).ok()?),
            };
            let valid = Versions {
                lo: i16::try_from(int(4)?).ok()?,
                hi: i16::try_from(int(5)?).ok()?,
            };
            let at = (u64::try_from(int(6)?).ok()?, u64::try_from(int(7)?).ok()?);
            let def = Def {
                name: f.get(1)?.as_str()?.to_string(),
                kind,
                api_key,
                valid,
                text: None,
                packed: Some(Packed {
                    raw: Raw::In(Arc::clone(&jar)),
                    deflated: f.get(8)?.as_bool()?,
                    crc: u32::try_from(int(9)?).ok()?,
                    at: Some(at),
                }),
                parsed: OnceLock::new(),
            };
            out.push((name, Ok(def)));
        }
        Some(out)
    }

    fn write(dir: &Path, key: &Value, scanned: &Scanned) {
        let mut files = Vec::with_capacity(scanned.len());
        for (name, def) in scanned {
            files.push(match def {
                Err(e) => json!([name, e]),
                Ok(d) => {
                    // A file not located in the jar cannot be kept: keep nothing.
                    let Some(p) = &d.packed else { return };
                    let Some((offset, size)) = p.at else { return };
                    json!([
                        name,
                        d.name,
                        kind_name(d.kind),
                        d.api_key,
                        d.valid.lo,
                        d.valid.hi,
                        offset,
                        size,
                        p.deflated,
                        p.crc
                    ])
                }
            });
        }
        let text = json!({"key": key, "files": files}).to_string();
        let path = file(dir, key);
        // Written aside and renamed, so a reader never sees half of it.
        static WRITES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = WRITES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let tmp = path.with_extension(format!("{}-{n}.tmp", std::process::id()));
        let ok = std::fs::create_dir_all(dir).is_ok() && std::fs::write(&tmp, text).is_ok();
        if !ok || std::fs::rename(&tmp, &path).is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
    }
}

/// A jar read in 64 KB blocks, each read once, on first touch: the zip reader seeks
/// for every central-directory record and entry, and through a plain (or buffered)
/// file each of those costs system calls. Only the blocks it touches are read: the
/// central directory and the schema entries, not the classes.
struct Blocks {
    file: std::fs::File,
    len: u64,
    pos: u64,
    blocks: BTreeMap<u64, Vec<u8>>,
}

const BLOCK: u64 = 64 << 10;

impl Blocks {
    fn new(file: std::fs::File, len: u64) -> Blocks {
        Blocks {
            file,
            len,
            pos: 0,
            blocks: BTreeMap::new(),
        }
    }
}

impl Read for Blocks {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        use std::os::unix::fs::FileExt;
        if self.pos >= self.len || buf.is_empty() {
            return Ok(0);
        }
        let index = self.pos / BLOCK;
        let block = match self.blocks.entry(index) {
            std::collections::btree_map::Entry::Occupied(b) => b.into_mut(),
            std::collections::btree_map::Entry::Vacant(v) => {
                let start = index * BLOCK;
                let mut data = vec![0; (self.len - start).min(BLOCK) as usize];
                self.file.read_exact_at(&mut data, start)?;
                v.insert(data)
            }
        };
        let at = (self.pos - index * BLOCK) as usize;
        let available = block.get(at..).unwrap_or_default();
        let n = available.len().min(buf.len());
        if let (Some(to), Some(from)) = (buf.get_mut(..n), available.get(..n)) {
            to.copy_from_slice(from);
        }
        self.pos += n as u64;
        Ok(n)
    }
}

impl std::io::Seek for Blocks {
    fn seek(&mut self, to: std::io::SeekFrom) -> std::io::Result<u64> {
        let pos = match to {
            std::io::SeekFrom::Start(p) => Some(p),
            std::io::SeekFrom::End(d) => self.len.checked_add_signed(d),
            std::io::SeekFrom::Current(d) => self.pos.checked_add_signed(d),
        };
        self.pos = pos.ok_or_else(|| {
            std::io::Error::new(std::io::ErrorKind::InvalidInput, "seek before the start")
        })?;
        Ok(self.pos)
    }

    fn stream_position(&mut self) -> std::io::Result<u64> {
        Ok(self.pos)
    }
}

fn read_dir(path: &Path) -> Result<Files, String> {
    let shown = path.display();
    // An unpacked jar or a Kafka source tree: look in common/message/ too.
    let nested = path.join("common/message");
    let dir = if nested.is_dir() {
        nested
    } else {
        path.to_path_buf()
    };
    let mut names: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map_err(|e| format!("{shown}: {e}"))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json") && p.is_file())
        .take(MAX_FILES)
        .collect();
    names.sort();
    Ok(names
        .into_iter()
        .map(|p| {
            let name = p
                .file_name()
                .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
            let text = std::fs::File::open(&p)
                .map_err(|e| e.to_string())
                .and_then(|f| read_capped(f, 64 << 10));
            (name, text)
        })
        .collect())
}

/// Where schemas come from, in the contract's order.
#[derive(Clone, Debug, Default)]
pub struct Search {
    /// `--schemas` paths, in the order given.
    pub explicit: Vec<PathBuf>,
    /// `KWIRE_SCHEMAS`: `:`-separated; set but empty turns discovery off.
    pub env: Option<OsString>,
    /// `$KAFKA_HOME`.
    pub kafka_home: Option<PathBuf>,
    /// The home directory, for `~/.m2/repository`.
    pub home: Option<PathBuf>,
    /// Where jars' indexes are kept between runs (see [`cache`]); `None` keeps none.
    pub cache: Option<PathBuf>,
}

impl Search {
    /// The search as the process environment describes it, plus `--schemas` paths.
    pub fn from_env(explicit: Vec<PathBuf>) -> Search {
        Search {
            explicit,
            env: std::env::var_os("KWIRE_SCHEMAS"),
            kafka_home: std::env::var_os("KAFKA_HOME").map(PathBuf::from),
            home: std::env::var_os("HOME").map(PathBuf::from),
            // The XDG cache directory, else ~/.cache.
            cache: std::env::var_os("XDG_CACHE_HOME")
                .filter(|d| !d.is_empty())
                .map(PathBuf::from)
                .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
                .map(|d| d.join("kwire")),
        }
    }

    /// The paths to load, in priority order, and whether they were discovered.
    /// `--schemas` wins over `KWIRE_SCHEMAS`; without either, kafka-clients jars in
    /// `$KAFKA_HOME/libs/` and `~/.m2/repository/org/apache/kafka/kafka-clients/*/`,
    /// newest version first.
    pub fn paths(&self) -> (Vec<PathBuf>, bool) {
        if !self.explicit.is_empty() {
            return (self.explicit.clone(), false);
        }
        if let Some(env) = &self.env {
            return (
                std::env::split_paths(env)
                    .filter(|p| !p.as_os_str().is_empty())
                    .collect(),
                false,
            );
        }
        let mut jars: Vec<(Vec<u64>, PathBuf)> = Vec::new();
        let mut add = |dir: &Path| {
            let Ok(entries) = std::fs::read_dir(dir) else {
                return;
            };
            for e in entries.flatten() {
                let p = e.path();
                let name = e.file_name().to_string_lossy().into_owned();
                if let Some(v) = name
                    .strip_prefix("kafka-clients-")
                    .and_then(|n| n.strip_suffix(".jar"))
                {
                    // Sources and javadoc jars hold no schemas.
                    if !v.ends_with("-sources") && !v.ends_with("-javadoc") && !v.ends_with("-test")
                    {
                        jars.push((version_key(v), p));
                    }
                }
            }
        };
        if let Some(home) = &self.kafka_home {
            add(&home.join("libs"));
        }
        if let Some(home) = &self.home {
            let repo = home.join(".m2/repository/org/apache/kafka/kafka-clients");
            if let Ok(entries) = std::fs::read_dir(&repo) {
                let mut dirs: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
                dirs.sort();
                for d in dirs {
                    add(&d);
                }
            }
        }
        // Newest first; one jar per version (KAFKA_HOME's copy if both have it).
        jars.sort_by(|a, b| b.0.cmp(&a.0));
        jars.dedup_by(|a, b| a.0 == b.0);
        (jars.into_iter().map(|(_, p)| p).collect(), true)
    }

    /// Loads every path in priority order. A source that cannot be read is one line in
    /// `problems` and is skipped; so is each file in it that is not a Kafka schema.
    pub fn load(&self) -> Loaded {
        let (paths, discovered) = self.paths();
        let mut schemas = Schemas::builtin();
        let mut problems = Vec::new();
        let mut names = Vec::new();
        for p in &paths {
            match scan_source_cached(p, self.cache.as_deref()) {
                Ok((list, skipped)) => {
                    problems.extend(skipped);
                    schemas.add_defs(&p.display().to_string(), list);
                    names.push(p.display().to_string());
                }
                Err(e) => problems.push(e),
            }
        }
        let description = if names.is_empty() {
            let why = if discovered {
                "no kafka-clients jar found in $KAFKA_HOME/libs or ~/.m2"
            } else if paths.is_empty() {
                "KWIRE_SCHEMAS is empty"
            } else {
                "none of the given paths could be read"
            };
            format!(
                "kwire: no Kafka schemas loaded ({why}); only Vote and FindCoordinator bodies are decoded; see --schemas"
            )
        } else {
            format!(
                "kwire: Kafka schemas from {} ({} APIs)",
                names.join(", "),
                schemas.api_count()
            )
        };
        Loaded {
            schemas,
            description,
            problems,
        }
    }
}

/// Orders versions like `4.4.0`, `3.9.1`, `3.10.0-rc1` numerically by their numeric parts.
fn version_key(v: &str) -> Vec<u64> {
    v.split(['.', '-'])
        .map_while(|p| p.parse::<u64>().ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(name: &str, key: i16, valid: &str, extra_field: &str) -> MessageSchema {
        MessageSchema::parse(&format!(
            r#"{{"apiKey":{key},"type":"request","name":"{name}Request","validVersions":"{valid}",
            "flexibleVersions":"none","fields":[{{"name":"{extra_field}","type":"int8","versions":"0+"}}]}}"#
        ))
        .unwrap()
    }

    #[test]
    fn newest_definition_wins_and_removed_versions_stay() {
        let mut s = Schemas::builtin();
        s.add("new", vec![req("Produce", 0, "3-13", "New")]);
        s.add("old", vec![req("Produce", 0, "0-11", "Old")]);
        assert_eq!(
            s.message(0, Kind::Request, 2).unwrap().fields[0].name,
            "Old"
        );
        assert_eq!(
            s.message(0, Kind::Request, 5).unwrap().fields[0].name,
            "New"
        );
        assert!(s.message(0, Kind::Request, 14).is_none());
        assert_eq!(s.versions(0, Kind::Request), (0..=13).collect::<Vec<_>>());
        assert_eq!(s.api_name(0), Some("Produce"));
        // Same top: the source added first keeps the version.
        s.add("later", vec![req("Produce", 0, "0-13", "Later")]);
        assert_eq!(
            s.message(0, Kind::Request, 5).unwrap().fields[0].name,
            "New"
        );
        assert_eq!(
            s.message(0, Kind::Request, 1).unwrap().fields[0].name,
            "Later"
        );
    }

    #[test]
    fn builtin_gives_way_only_to_more_versions() {
        let mut s = Schemas::builtin();
        s.add("same", vec![req("Vote", 52, "0-2", "Loaded")]);
        assert_ne!(
            s.message(52, Kind::Request, 1).unwrap().fields[0].name,
            "Loaded"
        );
        s.add("more", vec![req("Vote", 52, "0-3", "Loaded")]);
        assert_eq!(
            s.message(52, Kind::Request, 1).unwrap().fields[0].name,
            "Loaded"
        );
    }

    #[test]
    fn blocks_read_and_seek_as_the_file_does() {
        use std::io::{Seek, SeekFrom};
        let data: Vec<u8> = (0..200_000u32).map(|i| (i * 7 % 251) as u8).collect();
        let f = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(f.path(), &data).unwrap();
        let mut b = Blocks::new(std::fs::File::open(f.path()).unwrap(), data.len() as u64);
        let mut all = Vec::new();
        b.read_to_end(&mut all).unwrap();
        assert_eq!(all, data);
        for (to, at) in [
            (SeekFrom::Start(65_530), 65_530),
            (SeekFrom::End(-10), 199_990),
            (SeekFrom::Current(-100_000), 99_990),
        ] {
            assert_eq!(b.seek(to).unwrap(), at);
            let mut buf = [0u8; 20];
            let n = b.read(&mut buf).unwrap();
            assert_eq!(buf[..n], data[at as usize..at as usize + n]);
            b.seek(SeekFrom::Start(at)).unwrap();
        }
        assert!(b.seek(SeekFrom::Current(-300_000)).is_err());
        b.seek(SeekFrom::Start(500_000)).unwrap();
        assert_eq!(b.read(&mut [0u8; 4]).unwrap(), 0);
    }

    #[test]
    fn versions_order_numerically() {
        let mut v = vec!["3.9.1", "4.4.0", "3.10.0", "2.8.2"];
        v.sort_by_key(|s| std::cmp::Reverse(version_key(s)));
        assert_eq!(v, ["4.4.0", "3.10.0", "3.9.1", "2.8.2"]);
    }

    #[test]
    fn broken_and_foreign_files_are_one_line_each() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("VoteRequest.json"),
            include_str!("schemas/VoteRequest.json"),
        )
        .unwrap();
        std::fs::write(
            dir.path().join("package.json"),
            r#"{"name": "x", "version": "1"}"#,
        )
        .unwrap();
        std::fs::write(dir.path().join("Broken.json"), "{ \"name\": ").unwrap();
        std::fs::write(dir.path().join("README.md"), "not json").unwrap();
        let (list, problems) = read_source(dir.path()).unwrap();
        assert_eq!(list.len(), 1);
        assert_eq!(
            read_source(&dir.path().join("VoteRequest.json"))
                .unwrap()
                .0
                .len(),
            1
        );
        assert_eq!(problems.len(), 2, "{problems:?}");
        assert!(problems.iter().all(|p| !p.contains('\n')));
        let not_a_jar = dir.path().join("x.jar");
        std::fs::write(&not_a_jar, "PK nope").unwrap();
        assert!(read_source(&not_a_jar).unwrap_err().contains("not a jar"));
        let search = Search {
            explicit: vec![not_a_jar, dir.path().to_path_buf()],
            ..Search::default()
        };
        let loaded = search.load();
        assert_eq!(loaded.problems.len(), 3);
        assert!(
            loaded.description.contains("Kafka schemas from"),
            "{}",
            loaded.description
        );
    }

    #[test]
    fn a_head_is_the_members_before_fields() {
        let head = |t: &str| {
            members_before_fields(t).map(|(name, _, key, valid)| (name, key, valid.lo, valid.hi))
        };
        let x = Some(("X".to_string(), Some(7), 0, 2));
        assert_eq!(
            head("// licence\n { \"apiKey\": 7, // a comment\n \"type\" : \"request\", \"l\": [\"a\", {\"b\": 1}],\n  \"name\": \"X\", \"validVersions\": \"0-2\", \"fields\": [ {"),
            x
        );
        assert_eq!(
            head(r#"{"name": "Y", "apiKey": 7, "type": "request", "validVersions": "0-2", "name": "X"}"#),
            x
        );
        // Cut short, or not an object: read whole instead.
        for t in [
            r#"{"name": "X", "apiKey": 7, "type": "request", "validVersions": "0-2""#,
            r#"{"name": "X" "apiKey": 7, "type": "request", "validVersions": "0-2", "fields": []}"#,
            r#"{"name": "X", "apiKey": 7, "type": "request", "validVersions": "0-2","#,
            r#"{"apiKey": 7, "type": "request", "validVersions": "0-2", "fields": [], "name": "X"}"#,
            "[1]",
            "",
        ] {
            assert_eq!(head(t), None, "{t}");
        }
    }

    /// Every jar's files indexed by their heads say what reading them whole says.
    #[test]
    fn jar_heads_index_as_whole_files_do() {
        let jars = Search::from_env(Vec::new()).paths().0;
        if jars.is_empty() {
            if std::env::var("CI").is_ok_and(|v| v == "true") {
                panic!("CI=true: the kafka-clients jars are required");
            }
            eprintln!("SKIP: no kafka-clients jar found");
            return;
        }
        for jar in jars {
            let (whole, problems) = read_source(&jar).unwrap();
            let (scanned, scan_problems) = scan_source(&jar).unwrap();
            assert_eq!(problems, scan_problems);
            assert_eq!(whole.len(), scanned.len());
            let packed = scanned.iter().filter(|d| d.packed.is_some()).count();
            assert_eq!(packed, scanned.len(), "{}: every head within {HEAD_BYTES} bytes", jar.display());
            for (w, d) in whole.iter().zip(&scanned) {
                let s = d.get().unwrap_or_else(|| panic!("{}", d.name));
                assert_eq!((&s.name, s.kind, s.api_key, s.valid), (&w.name, w.kind, w.api_key, w.valid));
                assert_eq!(s.fields.len(), w.fields.len());
            }
        }
    }

    #[test]
    fn a_jar_index_kept_between_runs_says_what_reading_the_jar_says() {
        let Some(jar) = Search::from_env(Vec::new()).paths().0.into_iter().next() else {
            if std::env::var("CI").is_ok_and(|v| v == "true") {
                panic!("CI=true: the kafka-clients jars are required");
            }
            eprintln!("SKIP: no kafka-clients jar found");
            return;
        };
        let dir = tempfile::tempdir().unwrap();
        let (read, problems) = scan_source(&jar).unwrap();
        let written = scan_source_cached(&jar, Some(dir.path())).unwrap();
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
        let (kept, kept_problems) = scan_source_cached(&jar, Some(dir.path())).unwrap();
        let from_jar = |d: &Def| matches!(d.packed.as_ref().map(|p| &p.raw), Some(Raw::In(_)));
        assert!(kept.iter().all(from_jar));
        assert!(!written.0.iter().any(from_jar));
        assert_eq!(problems, kept_problems);
        assert_eq!(read.len(), kept.len());
        for (r, k) in read.iter().zip(&kept) {
            assert_eq!((&r.name, r.kind, r.api_key, r.valid), (&k.name, k.kind, k.api_key, k.valid));
            let (r, k) = (r.get().unwrap(), k.get().unwrap());
            assert_eq!((&r.name, r.fields.len()), (&k.name, k.fields.len()));
        }
        // A damaged index is read past, and written again.
        let file = std::fs::read_dir(dir.path()).unwrap().next().unwrap().unwrap().path();
        std::fs::write(&file, "{\"key\": 1, \"files\": [").unwrap();
        let (again, _) = scan_source_cached(&jar, Some(dir.path())).unwrap();
        assert!(!again.iter().any(from_jar));
        let fresh = scan_source_cached(&jar, Some(dir.path())).unwrap().0;
        assert!(fresh.iter().all(from_jar));
        // Bytes that are not the file's say so on first use, and decode nothing.
        let mut wrong = fresh.into_iter().find(|d| d.kind == SchemaKind::Request).unwrap();
        if let Some(p) = &mut wrong.packed {
            p.at = p.at.map(|(o, n)| (o + 1, n));
        }
        assert!(wrong.get().is_none());
    }

    #[test]
    fn empty_env_turns_discovery_off() {
        let s = Search {
            env: Some(OsString::new()),
            home: Some(PathBuf::from("/nonexistent")),
            ..Search::default()
        };
        assert_eq!(s.paths(), (vec![], false));
        let loaded = s.load();
        assert!(loaded.description.contains("KWIRE_SCHEMAS is empty"));
        assert_eq!(loaded.schemas.api_count(), 2);
    }
}
