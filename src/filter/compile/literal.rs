//! Comparisons and sets: each literal read once for every type its field holds.

use super::*;

impl Compiler<'_> {
    pub(super) fn cmp(
        &mut self,
        n: &Name,
        op: Op,
        op_span: &Range<usize>,
        lit: &Lit,
    ) -> Result<Node, FilterError> {
        let f = self.field(n)?;
        // Today's `version_source=none`: the version came from nowhere.
        if f.sources == [Source::Header(Header::VersionSource)]
            && !lit.quoted
            && matches!(lit.text.as_str(), "none" | "null")
            && matches!(op, Op::Eq | Op::Ne)
        {
            let present = Node::Present(f);
            return Ok(if op == Op::Eq {
                Node::Not(Box::new(present))
            } else {
                present
            });
        }
        let fits: Vec<Ty> = f
            .types
            .iter()
            .copied()
            .filter(|t| match op {
                Op::Contains | Op::Matches => t.textual(),
                Op::Lt | Op::Le | Op::Gt | Op::Ge => t.ordered(),
                Op::Eq | Op::Ne => *t != Ty::Struct,
            })
            .collect();
        if fits.is_empty() {
            return Err(self.op_error(&f, op, op_span));
        }
        if op == Op::Matches {
            let re = RegexBuilder::new(&lit.text)
                .size_limit(1 << 20)
                .build()
                .map_err(|e| {
                    let why = e.to_string();
                    let last = why.lines().last().unwrap_or("").trim();
                    let last = last.strip_prefix("error: ").unwrap_or(last).to_string();
                    self.err(
                        lit.span.clone(),
                        &format!("this regular expression does not compile: {last}"),
                        "matches takes the regex crate's syntax; (?i) makes it case-insensitive",
                    )
                })?;
            return Ok(Node::Matches(f, Box::new(re)));
        }
        let c = self.literal(&f, &fits, op, lit)?;
        Ok(Node::Cmp(f, op, c))
    }

    pub(super) fn set(
        &mut self,
        n: &Name,
        op_span: &Range<usize>,
        items: &[Item],
    ) -> Result<Node, FilterError> {
        let f = self.field(n)?;
        let eq: Vec<Ty> = f
            .types
            .iter()
            .copied()
            .filter(|t| *t != Ty::Struct)
            .collect();
        if eq.is_empty() {
            return Err(self.op_error(&f, Op::Eq, op_span));
        }
        let mut out = Vec::new();
        for i in items {
            out.push(match i {
                Item::One(l) => CItem::One(self.literal(&f, &eq, Op::Eq, l)?),
                Item::Range(a, b) => {
                    let ord: Vec<Ty> = eq.iter().copied().filter(|t| t.ordered()).collect();
                    if ord.is_empty() {
                        return Err(self.err(
                            a.span.start..b.span.end,
                            &format!("a range needs an order, but {} is {}", f.name, f.describe()),
                            "list the values instead: in {true, false}",
                        ));
                    }
                    CItem::Range(
                        self.literal(&f, &ord, Op::Ge, a)?,
                        self.literal(&f, &ord, Op::Le, b)?,
                    )
                }
            });
        }
        Ok(Node::In(f, out))
    }

    fn op_error(&self, f: &Field, op: Op, span: &Range<usize>) -> FilterError {
        let (needs, hint) = match op {
            Op::Contains | Op::Matches => (
                "text or bytes",
                if f.types.iter().any(|t| matches!(t, Ty::Int(_) | Ty::Float)) {
                    format!(
                        "compare numbers with ==, !=, <, <=, >, >= or in {{…}}, e.g. {} == 3",
                        f.name
                    )
                } else {
                    format!("compare with == or !=, e.g. {} == …", f.name)
                },
            ),
            Op::Eq | Op::Ne => (
                "a value",
                format!(
                    "test {} alone for presence, or compare one of its fields{}",
                    f.name,
                    self.children_hint(f)
                ),
            ),
            _ => ("an order", format!("use == or != with {}", f.name)),
        };
        self.err(
            span.clone(),
            &format!(
                "{:?} needs {needs}, but {} is {}",
                op.as_str(),
                f.name,
                f.describe()
            ),
            &hint,
        )
    }

    /// `: Topics.Name, Topics.Partitions` for a struct field.
    fn children_hint(&self, f: &Field) -> String {
        let mut kids: Vec<String> = Vec::new();
        for p in f.body_paths() {
            for key in self.cat.fields.keys() {
                let chain: Vec<&str> = key.split('.').collect();
                if let Some((_, parent)) = chain.split_last() {
                    if p.matches(parent) && kids.len() < 4 {
                        let shown = format!("{}.{}", f.name, chain.last().unwrap_or(&""));
                        if !kids.contains(&shown) {
                            kids.push(shown);
                        }
                    }
                }
            }
        }
        if kids.is_empty() {
            String::new()
        } else {
            format!(", e.g. {}", kids.join(", "))
        }
    }

    /// Reads `lit` for every type in `types`; an error when it fits none.
    fn literal(&self, f: &Field, types: &[Ty], op: Op, lit: &Lit) -> Result<CLit, FilterError> {
        let mut c = CLit::default();
        let mut first_err: Option<(String, String)> = None;
        let mut read = false;
        // Read it for every type that fits: a field may hold several.
        for t in types {
            match self.read_as(*t, op, lit, &mut c) {
                Ok(()) => read = true,
                Err(e) => {
                    first_err.get_or_insert(e);
                }
            }
        }
        if read {
            return Ok(c);
        }
        let (why, hint) = first_err.unwrap_or_default();
        let shown = if lit.quoted {
            format!("{:?}", lit.text)
        } else {
            lit.text.clone()
        };
        Err(self.err(
            lit.span.clone(),
            &format!("{} is {}, but {shown} {why}", f.name, f.describe()),
            &hint,
        ))
    }

    /// Reads `lit` as type `t` into `c`; else (what the literal is not, a hint).
    fn read_as(&self, t: Ty, op: Op, lit: &Lit, c: &mut CLit) -> Result<(), (String, String)> {
        let text = lit.text.as_str();
        let quoted_number = || {
            (
                "is quoted text".to_string(),
                format!("drop the quotes: {text}"),
            )
        };
        match t {
            Ty::Int(names) => {
                if lit.quoted {
                    return Err(quoted_number());
                }
                if let Some(i) = parse_int(text) {
                    c.int = Some(i);
                    c.float = Some(i as f64);
                    return Ok(());
                }
                if let Some(x) = parse_float(text) {
                    c.float = Some(x);
                    return Ok(());
                }
                match names {
                    Names::Api => match self.cat.api(text) {
                        Some((k, _)) => {
                            c.int = Some(k.into());
                            c.float = Some(k.into());
                            Ok(())
                        }
                        None => Err((
                            "is not a number or an API name".into(),
                            nearest(
                                text,
                                self.cat.apis.iter().map(|(_, n)| n.as_str()),
                                "write an API key or Kafka's name for the API, e.g. Vote or 52",
                            ),
                        )),
                    },
                    Names::Error => match self.cat.error_code(text) {
                        Some(code) => {
                            c.int = Some(code.into());
                            c.float = Some(code.into());
                            Ok(())
                        }
                        None => Err((
                            "is not a number or an error name".into(),
                            nearest(
                                text,
                                self.cat.errors.iter().map(|(_, n)| n.as_str()),
                                "write a number (decimal or 0x hex) or an error name such as NOT_COORDINATOR",
                            ),
                        )),
                    },
                    Names::None => Err((
                        "is not a number".into(),
                        "write a decimal or 0x hex integer".into(),
                    )),
                }
            }
            Ty::Float => {
                if lit.quoted {
                    return Err(quoted_number());
                }
                match parse_int(text)
                    .map(|i| i as f64)
                    .or_else(|| parse_float(text))
                {
                    Some(x) => {
                        c.float = Some(x);
                        Ok(())
                    }
                    None => Err((
                        "is not a number".into(),
                        "write a number such as 1764441600.5".into(),
                    )),
                }
            }
            Ty::Bool => {
                let b = match text {
                    "true" | "True" | "TRUE" | "1" if !lit.quoted => true,
                    "false" | "False" | "FALSE" | "0" if !lit.quoted => false,
                    _ => {
                        return Err((
                            "is not true or false".into(),
                            "write true or false; the field alone tests for true".into(),
                        ));
                    }
                };
                c.bool = Some(b);
                Ok(())
            }
            Ty::Text(kind) => {
                let v = match kind {
                    TextKind::ApiName if !lit.quoted => self
                        .cat
                        .api(text)
                        .map_or(text.to_string(), |(_, n)| n.to_string()),
                    TextKind::OneOf(values) if matches!(op, Op::Eq | Op::Ne) => {
                        match values.iter().find(|v| v.eq_ignore_ascii_case(text)) {
                            Some(v) => v.to_string(),
                            None => {
                                return Err((
                                    "is none of them".into(),
                                    nearest(
                                        text,
                                        values.iter().copied(),
                                        &format!("write one of {}", values.join(", ")),
                                    ),
                                ));
                            }
                        }
                    }
                    _ => text.to_string(),
                };
                c.text = Some(v);
                Ok(())
            }
            Ty::Bytes => {
                let b = if lit.quoted {
                    Some(text.as_bytes().to_vec())
                } else {
                    parse_hex(text)
                };
                match b {
                    Some(b) => {
                        c.bytes = Some(b);
                        Ok(())
                    }
                    None => Err((
                        "is neither hex nor a quoted string".into(),
                        "write hex such as 01:02:ff or 0102ff, or a quoted string for its UTF-8 bytes"
                            .into(),
                    )),
                }
            }
            Ty::Uuid => match uuid::Uuid::parse_str(text) {
                Ok(u) => {
                    c.uuid = Some(*u.as_bytes());
                    c.text = Some(u.hyphenated().to_string());
                    Ok(())
                }
                Err(_) if matches!(op, Op::Contains) => {
                    c.text = Some(text.to_lowercase());
                    Ok(())
                }
                Err(_) => Err((
                    "is not a uuid".into(),
                    "write it as xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx".into(),
                )),
            },
            Ty::Ip => {
                let net = parse_net(text);
                match net {
                    Some((a, bits)) if bits == full_bits(a) || matches!(op, Op::Eq | Op::Ne) => {
                        c.net = Some((a, bits));
                        Ok(())
                    }
                    Some(_) => Err((
                        "is a CIDR block, which has no order".into(),
                        "use == or in with a block, e.g. src.ip in 10.0.0.0/8".into(),
                    )),
                    None => Err((
                        "is neither an address nor a CIDR block".into(),
                        "write e.g. 10.0.0.1, 10.0.0.0/8, ::1 or fd00::/8".into(),
                    )),
                }
            }
            Ty::Struct => Err((
                "cannot be compared with it".into(),
                "compare one of its fields".into(),
            )),
        }
    }
}
