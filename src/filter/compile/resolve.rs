//! Field names: the catalogue, header aliases, legacy spellings, and the
//! `did you mean` hint when a name is unknown.

use super::*;

impl Compiler<'_> {
    pub(super) fn header_field(&self, name: &str, h: Header) -> Field {
        Field {
            name: name.to_string(),
            sources: vec![Source::Header(h)],
            types: vec![header_ty(h)],
        }
    }

    /// Resolves a field name; `legacy` admits today's `corr`/`v` spellings.
    pub(super) fn lookup(&self, n: &Name, legacy: bool) -> Option<Field> {
        let name = n.text.as_str();
        if let Some(h) = Header::by_name(name) {
            return Some(self.header_field(name, h));
        }
        let alias = HEADER_ALIASES
            .iter()
            .chain(LEGACY.iter().filter(|_| legacy))
            .find(|(a, _)| *a == name);
        if let Some((_, h)) = alias {
            return Some(self.header_field(name, *h));
        }
        if let Some((_, paths, ty)) = BODY_ALIASES.iter().find(|(a, _, _)| *a == name) {
            let mut f = Field {
                name: name.to_string(),
                sources: Vec::new(),
                types: Vec::new(),
            };
            for segs in paths.iter() {
                let p = BodyPath {
                    segments: segs.iter().map(|s| s.to_string()).collect(),
                    anchored: false,
                };
                if self.body_types(&p).contains(ty) {
                    f.sources.push(Source::Body(p));
                }
            }
            if f.sources.is_empty() {
                return None;
            }
            let last = paths.first().and_then(|p| p.last()).copied().unwrap_or("");
            f.types.push(body_ty(*ty, last));
            return Some(f);
        }
        if !name.split('.').all(is_ident) {
            return None;
        }
        let p = BodyPath {
            segments: name.split('.').map(str::to_string).collect(),
            anchored: name.contains('.'),
        };
        let types = self.body_types(&p);
        if types.is_empty() {
            return None;
        }
        let last = p.segments.last().map_or("", String::as_str);
        Some(Field {
            name: name.to_string(),
            types: types.iter().map(|t| body_ty(*t, last)).collect(),
            sources: vec![Source::Body(p)],
        })
    }

    /// The types of the catalogue's fields that `p` names.
    fn body_types(&self, p: &BodyPath) -> Vec<FieldType> {
        let mut out = Vec::new();
        for (key, types) in &self.cat.fields {
            let chain: Vec<&str> = key.split('.').collect();
            if p.matches(&chain) {
                for t in types {
                    if !out.contains(t) {
                        out.push(*t);
                    }
                }
            }
        }
        out
    }

    pub fn unknown_field(&self, n: &Name, otherwise: &str) -> FilterError {
        let hint = match self.nearest_field(&n.text) {
            Some(s) => format!("did you mean {s}?"),
            None => format!(
                "fields are the NDJSON keys (frame, api_key, latency_us, …), src.ip, dst.port, api, \
                 kafka.* aliases and the body fields of the loaded schemas; {otherwise}"
            ),
        };
        self.err(
            n.span.clone(),
            &format!("unknown field {:?}", n.text),
            &hint,
        )
    }

    fn nearest_field(&self, name: &str) -> Option<String> {
        let mut names: Vec<String> = Header::ALL.iter().map(|h| h.name().to_string()).collect();
        names.extend(HEADER_ALIASES.iter().map(|(a, _)| a.to_string()));
        names.extend(BODY_ALIASES.iter().map(|(a, _, _)| a.to_string()));
        let dotted = name.contains('.');
        let last = name.rsplit('.').next().unwrap_or(name);
        let mut full = Vec::new();
        for key in self.cat.fields.keys() {
            full.push(key.clone());
            if let Some(l) = key.rsplit('.').next() {
                if !dotted && !names.iter().any(|n| n == l) {
                    names.push(l.to_string());
                }
            }
        }
        if dotted {
            names.extend(full.iter().cloned());
        }
        if let Some(n) = names.iter().find(|n| n.eq_ignore_ascii_case(name)) {
            return Some(n.clone());
        }
        // `Partitions.VoteGranted` for `Topics.Partitions.VoteGranted`.
        let suffix = format!(".{name}");
        if let Some(f) = full
            .iter()
            .filter(|f| f.ends_with(&suffix))
            .min_by_key(|f| f.len())
        {
            return Some(f.clone());
        }
        // The right last name under the wrong parents.
        if dotted {
            let tail = format!(".{last}");
            if let Some(f) = full
                .iter()
                .filter(|f| f.ends_with(&tail) || *f == last)
                .min_by_key(|f| strsim::levenshtein(f, name))
            {
                return Some(f.clone());
            }
        }
        let limit = (name.chars().count() / 4).max(2);
        names
            .iter()
            .map(|n| {
                (
                    strsim::levenshtein(&n.to_lowercase(), &name.to_lowercase()),
                    n,
                )
            })
            .filter(|(d, _)| *d <= limit)
            .min_by_key(|(d, _)| *d)
            .map(|(_, n)| n.clone())
    }

    pub(super) fn field(&mut self, n: &Name) -> Result<Field, FilterError> {
        let f = self
            .lookup(n, true)
            .ok_or_else(|| self.unknown_field(n, "see docs/contract.md, \"Display filters\""))?;
        self.note_paths(&f);
        Ok(f)
    }
}
