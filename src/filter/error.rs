//! Filter errors a person can fix: what is wrong, where, and what to write instead.

use std::fmt;
use std::ops::Range;

/// A filter that cannot be used. `Display` gives three lines: the reason with
/// its column, the filter with carets under the culprit, and a hint.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FilterError {
    message: String,
    hint: String,
    source: String,
    /// Byte range of the culprit in `source`; empty at the end of the text.
    span: Range<usize>,
}

impl FilterError {
    pub(crate) fn new(source: &str, span: Range<usize>, message: &str, hint: &str) -> Self {
        let end = span.end.min(source.len());
        FilterError {
            message: message.to_string(),
            hint: hint.to_string(),
            source: source.to_string(),
            span: span.start.min(end)..end,
        }
    }

    /// The reason, without position or hint.
    pub fn message(&self) -> &str {
        &self.message
    }

    pub fn hint(&self) -> &str {
        &self.hint
    }

    /// 1-based column (in characters) of the culprit.
    pub fn column(&self) -> usize {
        self.source
            .get(..self.span.start)
            .map_or(0, |s| s.chars().count())
            + 1
    }

    /// The culprit's byte range in the filter text.
    pub fn span(&self) -> Range<usize> {
        self.span.clone()
    }

    /// One line for a status bar: reason, column and hint.
    pub fn one_line(&self) -> String {
        format!(
            "{} at column {}; {}",
            self.message,
            self.column(),
            self.hint
        )
    }
}

impl fmt::Display for FilterError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Control characters would shift the caret: show each as one space.
        let shown: String = self
            .source
            .chars()
            .map(|c| if c.is_control() { ' ' } else { c })
            .collect();
        let width = self
            .source
            .get(self.span.clone())
            .map_or(0, |s| s.chars().count())
            .max(1);
        writeln!(f, "{} at column {}", self.message, self.column())?;
        writeln!(f, "  {shown}")?;
        writeln!(
            f,
            "  {}{}",
            " ".repeat(self.column() - 1),
            "^".repeat(width)
        )?;
        write!(f, "hint: {}", self.hint)
    }
}

impl std::error::Error for FilterError {}
