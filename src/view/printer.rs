//! Printing messages to stdout as they complete (`kwire read` and `kwire live`).

use super::{json, summary, tree};
use crate::codec::Need;
use crate::dissect::Record;
use crate::filter::Columns;
use crate::select::Selection;
use std::cell::RefCell;
use std::io::{self, Write};
use std::ops::ControlFlow;
use std::rc::Rc;

type Stdout = io::BufWriter<io::StdoutLock<'static>>;

/// How each message is printed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// One line per message.
    Summary,
    /// The object tree with offsets and sizes.
    Tree,
    /// NDJSON, one object per message.
    Json,
    /// The -e fields, tab-separated, one line per message (as tshark's -T fields).
    Fields,
}

/// Bytes gathered before each write to stdout.
const OUT_BUFFER: usize = 1 << 18;

/// Prints messages as they complete; the end is reported on stderr.
pub struct Printer {
    format: Format,
    select: Selection,
    /// The `-e` fields, for `--format fields`.
    columns: Option<Columns>,
    limit: Option<u64>,
    printed: u64,
    /// Shared with the record batch writer, which passes on the start of a long
    /// NDJSON line while it writes the rest ([`crate::records::json::set_spill`]).
    out: Rc<RefCell<Stdout>>,
    /// Flush after every message, so a pipe sees each one at once.
    line_flush: bool,
    buf: Vec<u8>,
    line: String,
    broken: bool,
    /// ANSI colour in summary lines.
    color: bool,
    /// The inputs' paths when several are merged: NDJSON then names each message's file.
    files: Vec<String>,
    /// What a record handed to `print` must have decoded (see [`Printer::need`]).
    need: Need,
    /// When choosing reads less than the format shows: the decode for the chosen ones.
    full: Option<Need>,
}

impl Printer {
    /// Prints `format` to stdout, only what `select` keeps, at most `limit` messages;
    /// `line_flush` flushes after each one (live capture into a pipe).
    pub fn new(format: Format, select: Selection, limit: Option<u64>, line_flush: bool) -> Printer {
        let mut p = Printer {
            format,
            select,
            columns: None,
            limit,
            printed: 0,
            out: Rc::new(RefCell::new(io::BufWriter::with_capacity(
                OUT_BUFFER,
                io::stdout().lock(),
            ))),
            line_flush,
            buf: Vec::with_capacity(4096),
            line: String::with_capacity(256),
            broken: false,
            color: false,
            files: Vec::new(),
            need: Need::all(),
            full: None,
        };
        p.plan();
        p
    }

    /// What the records handed to [`Printer::print`] must have decoded: what the choice
    /// of messages reads, and what the format shows when that is not every field (a
    /// message the choice keeps is then decoded again in full for the tree and NDJSON,
    /// so one it drops never is).
    pub fn need(&self) -> Need {
        self.need.clone()
    }

    fn plan(&mut self) {
        let shows = match self.format {
            Format::Summary => crate::apis::summary_need(),
            Format::Tree | Format::Json => Need::all(),
            Format::Fields => self
                .columns
                .as_ref()
                .map_or_else(Need::header, |c| c.need()),
        };
        let chooses = self.select.need();
        (self.need, self.full) = if shows.is_all() && !self.select.is_empty() {
            (chooses, Some(shows))
        } else if self.select.is_empty() {
            (shows, None)
        } else {
            (chooses.union(&shows), None)
        };
    }

    /// Colours summary lines (requests, responses, errors, warnings, slow latency); tree
    /// and JSON stay plain.
    pub fn with_color(mut self, color: bool) -> Printer {
        self.color = color;
        self
    }

    /// The inputs being read, by index: with more than one, each NDJSON
    /// object carries `file`.
    pub fn with_files(mut self, files: &[String]) -> Printer {
        if files.len() > 1 {
            self.files = files.to_vec();
        }
        self
    }

    /// The fields `--format fields` prints; their names go out first with `-E header=y`,
    /// so that an empty result still names its columns.
    pub fn with_columns(mut self, columns: Columns) -> Printer {
        if columns.header {
            let _ = writeln!(self.out.borrow_mut(), "{}", columns.header_line());
        }
        self.columns = Some(columns);
        self.plan();
        self
    }

    /// Prints one message if selected; `Break` once the limit is reached or stdout is gone.
    pub fn print(&mut self, r: &Record<'_>) -> ControlFlow<()> {
        if self.broken || self.limit.is_some_and(|n| self.printed >= n) {
            return ControlFlow::Break(());
        }
        if !self.select.matches(r) {
            return ControlFlow::Continue(());
        }
        let whole;
        let r = match &self.full {
            Some(need) => {
                whole = r.redecoded(need);
                &whole
            }
            None => r,
        };
        // Text views write into `line`, NDJSON into `buf`; both are reused.
        self.buf.clear();
        self.line.clear();
        match self.format {
            Format::Summary => {
                if self.color {
                    summary::write_line_colored(&mut self.line, r);
                } else {
                    summary::write_line(&mut self.line, r);
                }
                self.line.push('\n');
            }
            Format::Tree => tree::write_record(&mut self.line, r),
            Format::Json => {
                let file = self.files.get(r.file as usize).map(String::as_str);
                let spill: crate::records::json::Spill = self.out.clone();
                crate::records::json::set_spill(Some(spill));
                json::write_record_in(&mut self.buf, r, file);
                crate::records::json::set_spill(None);
            }
            Format::Fields => {
                if let Some(c) = &self.columns {
                    self.line.push_str(&c.line(r));
                    self.line.push('\n');
                }
            }
        }
        let bytes = if self.format == Format::Json {
            self.buf.as_slice()
        } else {
            self.line.as_bytes()
        };
        let mut out = self.out.borrow_mut();
        let written = out.write_all(bytes).and_then(|()| {
            if self.line_flush {
                out.flush()
            } else {
                Ok(())
            }
        });
        drop(out);
        // A long line's buffer is not kept for the next message.
        if self.buf.capacity() > crate::records::json::SPILL_AT * 2 {
            self.buf = Vec::with_capacity(4096);
        }
        if written.is_err() {
            // The reader went away (e.g. `| head`): stop quietly.
            self.broken = true;
            return ControlFlow::Break(());
        }
        self.printed += 1;
        if self.limit.is_some_and(|n| self.printed >= n) {
            return ControlFlow::Break(());
        }
        ControlFlow::Continue(())
    }

    /// Flushes what is buffered.
    pub fn finish(&mut self) {
        let _ = self.out.borrow_mut().flush();
    }
}
