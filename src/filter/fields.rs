//! `--format fields`: chosen fields, one tab-separated line per message, as tshark's `-T fields`.

use super::compile::Source;
use super::{BodyPath, Catalogue, Field, FilterError, Header, Subject, Value};
use std::fmt::Write;
use std::ops::ControlFlow;

/// The `-e` fields and the `-E` options.
#[derive(Clone, Debug)]
pub struct Columns {
    fields: Vec<Field>,
    separator: String,
    /// Between the occurrences of one field.
    aggregator: String,
    pub header: bool,
}

impl Columns {
    /// Resolves each `-e` name against the fields of the schemas kwire knows; `options`
    /// are the `-E` settings (`header=y`, `separator=,`).
    pub fn new(names: &[String], options: &[String]) -> Result<Columns, String> {
        Columns::with_catalogue(names, options, &super::record::catalogue())
    }

    /// As [`Columns::new`], against `cat`.
    pub fn with_catalogue(
        names: &[String],
        options: &[String],
        cat: &Catalogue,
    ) -> Result<Columns, String> {
        let mut c = Columns {
            fields: Vec::new(),
            separator: "\t".into(),
            aggregator: ",".into(),
            header: false,
        };
        for o in options {
            let (k, v) = o
                .split_once('=')
                .ok_or_else(|| format!("-E {o}: expected NAME=VALUE, e.g. -E header=y"))?;
            match k {
                "header" => {
                    c.header = match v {
                        "y" | "yes" | "1" | "true" => true,
                        "n" | "no" | "0" | "false" => false,
                        _ => return Err(format!("-E {o}: header takes y or n")),
                    }
                }
                "separator" => c.separator = special(v),
                "aggregator" => c.aggregator = special(v),
                _ => {
                    return Err(format!(
                        "-E {o}: unknown option {k:?}; kwire takes header, separator and aggregator"
                    ));
                }
            }
        }
        for n in names {
            c.fields
                .push(Field::new(n, cat).map_err(|e: FilterError| e.to_string())?);
        }
        if c.fields.is_empty() {
            return Err("--format fields needs at least one -e FIELD".into());
        }
        Ok(c)
    }

    /// The body paths the fields read.
    pub fn body_paths(&self) -> impl Iterator<Item = &BodyPath> {
        self.fields.iter().flat_map(|f| f.body_paths())
    }

    /// What of a body the fields read: their paths.
    pub fn need(&self) -> crate::codec::Need {
        crate::codec::Need::header().with_paths(self.body_paths().map(super::need_path))
    }

    pub fn needs_body(&self) -> bool {
        self.body_paths().next().is_some()
    }

    /// The field names, as given, separated like the values.
    pub fn header_line(&self) -> String {
        let names: Vec<&str> = self.fields.iter().map(|f| f.name()).collect();
        names.join(&self.separator)
    }

    /// One message's line, without the newline.
    pub fn line(&self, s: &dyn Subject) -> String {
        let mut out = String::new();
        for (i, f) in self.fields.iter().enumerate() {
            if i > 0 {
                out.push_str(&self.separator);
            }
            let ts = f.sources == [Source::Header(Header::Ts)];
            let mut first = true;
            f.each(s, &mut |v| {
                if matches!(v, Value::Present) {
                    return ControlFlow::Continue(());
                }
                if !first {
                    out.push_str(&self.aggregator);
                }
                first = false;
                text(&mut out, &v, ts);
                ControlFlow::Continue(())
            });
        }
        out
    }
}

/// tshark's spellings: `/t` tab, `/s` space, `/n` newline.
fn special(v: &str) -> String {
    match v {
        "/t" => "\t".into(),
        "/s" => " ".into(),
        "/n" => "\n".into(),
        other => other.into(),
    }
}

/// A value as the summary and NDJSON show it: strings escaped, bytes in hex.
fn text(out: &mut String, v: &Value<'_>, ts: bool) {
    match v {
        Value::Int(i) => {
            let _ = write!(out, "{i}");
        }
        Value::Float(x) if ts => {
            let _ = write!(out, "{x:.6}");
        }
        Value::Float(x) => out.push_str(
            &serde_json::Number::from_f64(*x).map_or_else(|| x.to_string(), |n| n.to_string()),
        ),
        Value::Bool(b) => {
            let _ = write!(out, "{b}");
        }
        Value::Str(s) => out.push_str(&crate::view::escape::escape(s)),
        Value::Bytes(b) => {
            for x in b.iter() {
                let _ = write!(out, "{x:02x}");
            }
        }
        Value::Uuid(u) => {
            let _ = write!(out, "{}", uuid::Uuid::from_bytes(*u).hyphenated());
        }
        Value::Ip(a) => {
            let _ = write!(out, "{a}");
        }
        Value::Present => {}
    }
}
