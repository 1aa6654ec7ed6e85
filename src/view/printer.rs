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
    look: Look,
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
    /// What a record handed to `print` must have decoded (see [`Printer::need`]).
    need: Need,
}

/// What a [`Printer`] makes of each message, apart from where it goes: the part that
/// may run on several threads at once (see [`Printer::look`]).
#[derive(Clone, Debug)]
pub struct Look {
    format: Format,
    select: Selection,
    /// The `-e` fields, for `--format fields`.
    columns: Option<Columns>,
    /// ANSI colour in summary lines.
    color: bool,
    /// The inputs' paths when several are merged: NDJSON then names each message's file.
    files: Vec<String>,
    /// When choosing reads less than the format shows: the decode for the chosen ones.
    full: Option<Need>,
    /// No choice of messages: every one is shown (see [`Printer::plan`]).
    keeps_all: bool,
}

thread_local! {
    /// A worker thread's line for the text formats, reused.
    static LINE: RefCell<String> = const { RefCell::new(String::new()) };
    /// A worker thread's NDJSON line, reused.
    static JSON: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
    static TOO_LONG: Rc<RefCell<TooLong>> = Rc::new(RefCell::new(TooLong::default()));
}

/// Where a worker's NDJSON writer passes on a line that grew past `SPILL_AT`: nowhere.
/// It notes that the line was too long to render here.
#[derive(Default)]
struct TooLong(bool);

impl Write for TooLong {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0 = true;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Look {
    /// Appends `r` as printed to `out` (on any thread); false, and nothing appended,
    /// when the choice of messages leaves it out. None, and nothing appended, when its
    /// output is longer than [`crate::records::json::SPILL_AT`]: [`Printer::print`]
    /// then prints it, streaming a long NDJSON line out as it is written.
    #[inline]
    pub fn render(&self, r: &Record<'_>, out: &mut Vec<u8>) -> Option<bool> {
        use crate::records::json::{SPILL_AT, Spill, set_spill};
        // The common case, a summary line into an empty buffer (one thread), without the
        // layers the other formats need: a summary never decodes again (`full` is None).
        if self.format == Format::Summary && out.is_empty() && self.full.is_none() {
            if !self.keeps_all && !self.select.matches(r) {
                return Some(false);
            }
            let mut line = String::from_utf8(std::mem::take(out)).unwrap_or_default();
            if self.color {
                summary::write_line_colored(&mut line, r);
            } else {
                summary::write_line(&mut line, r);
            }
            line.push('\n');
            if line.len() > SPILL_AT {
                return None;
            }
            *out = line.into_bytes();
            return Some(true);
        }
        let mut fits = true;
        let shown = self.chosen(r, |r| {
            if self.format == Format::Json {
                JSON.with(|line| {
                    let mut line = line.borrow_mut();
                    line.clear();
                    let too_long = TOO_LONG.with(Rc::clone);
                    too_long.borrow_mut().0 = false;
                    let spill: Spill = too_long.clone();
                    set_spill(Some(spill));
                    json::write_record_in(&mut line, r, self.file(r));
                    set_spill(None);
                    fits = !too_long.borrow().0 && line.len() <= SPILL_AT;
                    if fits {
                        out.extend_from_slice(&line);
                    }
                    // A long line's buffer is not kept for the next message.
                    if line.capacity() > SPILL_AT * 2 {
                        *line = Vec::new();
                    }
                });
            } else if out.is_empty() {
                // Nothing before it (one thread): written in place, not copied over.
                let mut line = String::from_utf8(std::mem::take(out)).unwrap_or_default();
                self.write_text(&mut line, r);
                fits = line.len() <= SPILL_AT;
                *out = line.into_bytes();
                if !fits {
                    *out = Vec::new();
                }
            } else {
                LINE.with(|line| {
                    let mut line = line.borrow_mut();
                    line.clear();
                    self.write_text(&mut line, r);
                    fits = line.len() <= SPILL_AT;
                    if fits {
                        out.extend_from_slice(line.as_bytes());
                    }
                    if line.capacity() > SPILL_AT * 2 {
                        *line = String::new();
                    }
                });
            }
        });
        fits.then_some(shown)
    }

    /// Whether its output is text (every format but NDJSON): then [`Look::render_text`]
    /// renders it.
    pub fn is_text(&self) -> bool {
        self.format != Format::Json
    }

    /// [`Look::render`] for a text format, appended to `out` in place (on any thread).
    /// NDJSON is not text here: nothing is appended, and it says the message is shown.
    #[inline]
    pub fn render_text(&self, r: &Record<'_>, out: &mut String) -> Option<bool> {
        use crate::records::json::SPILL_AT;
        let start = out.len();
        let shown = if self.format == Format::Summary && self.full.is_none() {
            // The common case, without the layers the other formats need: a summary
            // never decodes again (`full` is None).
            if !self.keeps_all && !self.select.matches(r) {
                return Some(false);
            }
            if self.color {
                summary::write_line_colored(out, r);
            } else {
                summary::write_line(out, r);
            }
            out.push('\n');
            true
        } else {
            self.chosen(r, |r| self.write_text(out, r))
        };
        if out.len() - start > SPILL_AT {
            out.truncate(start);
            return None;
        }
        Some(shown)
    }

    /// Runs `f` on `r` as shown (decoded again in full when the choice read less) if the
    /// choice of messages keeps it; whether it did.
    fn chosen(&self, r: &Record<'_>, f: impl FnOnce(&Record<'_>)) -> bool {
        if !self.keeps_all && !self.select.matches(r) {
            return false;
        }
        match &self.full {
            Some(need) => f(&r.redecoded(need)),
            None => f(r),
        }
        true
    }

    /// The input file NDJSON names, when several are read.
    fn file(&self, r: &Record<'_>) -> Option<&str> {
        self.files.get(r.file as usize).map(String::as_str)
    }

    /// The text formats' output for `r`.
    fn write_text(&self, line: &mut String, r: &Record<'_>) {
        match self.format {
            Format::Summary => {
                if self.color {
                    summary::write_line_colored(line, r);
                } else {
                    summary::write_line(line, r);
                }
                line.push('\n');
            }
            Format::Tree => tree::write_record(line, r),
            Format::Json => {}
            Format::Fields => {
                if let Some(c) = &self.columns {
                    line.push_str(&c.line(r));
                    line.push('\n');
                }
            }
        }
    }
}

impl Printer {
    /// Prints `format` to stdout, only what `select` keeps, at most `limit` messages;
    /// `line_flush` flushes after each one (live capture into a pipe).
    pub fn new(format: Format, select: Selection, limit: Option<u64>, line_flush: bool) -> Printer {
        let mut p = Printer {
            look: Look {
                format,
                select,
                columns: None,
                color: false,
                files: Vec::new(),
                full: None,
                keeps_all: false,
            },
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
            need: Need::all(),
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

    /// What it makes of each message, for rendering elsewhere (see [`Printer::take`]).
    pub fn look(&self) -> &Look {
        &self.look
    }

    fn plan(&mut self) {
        let look = &mut self.look;
        let shows = match look.format {
            Format::Summary => crate::apis::summary_need(),
            Format::Tree | Format::Json => Need::all(),
            Format::Fields => look
                .columns
                .as_ref()
                .map_or_else(Need::header, |c| c.need()),
        };
        look.keeps_all = look.select.is_empty();
        let chooses = look.select.need();
        (self.need, look.full) = if shows.is_all() && !look.select.is_empty() {
            (chooses, Some(shows))
        } else if look.select.is_empty() {
            (shows, None)
        } else {
            (chooses.union(&shows), None)
        };
    }

    /// Colours summary lines (requests, responses, errors, warnings, slow latency); tree
    /// and JSON stay plain.
    pub fn with_color(mut self, color: bool) -> Printer {
        self.look.color = color;
        self
    }

    /// The inputs being read, by index: with more than one, each NDJSON
    /// object carries `file`.
    pub fn with_files(mut self, files: &[String]) -> Printer {
        if files.len() > 1 {
            self.look.files = files.to_vec();
        }
        self
    }

    /// The fields `--format fields` prints; their names go out first with `-E header=y`,
    /// so that an empty result still names its columns.
    pub fn with_columns(mut self, columns: Columns) -> Printer {
        if columns.header {
            let _ = writeln!(self.out.borrow_mut(), "{}", columns.header_line());
        }
        self.look.columns = Some(columns);
        self.plan();
        self
    }

    /// Prints one message if selected; `Break` once the limit is reached or stdout is gone.
    pub fn print(&mut self, r: &Record<'_>) -> ControlFlow<()> {
        if self.done() {
            return ControlFlow::Break(());
        }
        let look = &self.look;
        // Text views write into `line`, NDJSON into `buf`; both are reused.
        self.buf.clear();
        self.line.clear();
        let (buf, line, out) = (&mut self.buf, &mut self.line, &self.out);
        let shown = look.chosen(r, |r| {
            if look.format == Format::Json {
                let spill: crate::records::json::Spill = out.clone();
                crate::records::json::set_spill(Some(spill));
                json::write_record_in(buf, r, look.file(r));
                crate::records::json::set_spill(None);
            } else {
                look.write_text(line, r);
            }
        });
        if !shown {
            return ControlFlow::Continue(());
        }
        let bytes = if look.format == Format::Json {
            self.buf.as_slice()
        } else {
            self.line.as_bytes()
        };
        let written = write(&self.out, self.line_flush, bytes);
        // A long line's buffer is not kept for the next message.
        if self.buf.capacity() > crate::records::json::SPILL_AT * 2 {
            self.buf = Vec::with_capacity(4096);
        }
        self.count(written)
    }

    /// Prints a message rendered elsewhere by [`Printer::look`] (`shown`: it was not left
    /// out); `Break` once the limit is reached or stdout is gone, as [`Printer::print`].
    #[inline]
    pub fn take(&mut self, bytes: &[u8], shown: bool) -> ControlFlow<()> {
        if self.done() {
            return ControlFlow::Break(());
        }
        if !shown {
            return ControlFlow::Continue(());
        }
        let written = write(&self.out, self.line_flush, bytes);
        self.count(written)
    }

    /// Messages rendered elsewhere, shown (or empty), one after the other: what
    /// [`Printer::take`] of each in turn prints, written at once and not copied when
    /// long. None when they must come one by one: to stop at a limit, or to flush after
    /// each.
    pub fn take_all(&mut self, bytes: &[u8]) -> Option<ControlFlow<()>> {
        if self.limit.is_some() || self.line_flush {
            return None;
        }
        if self.broken {
            return Some(ControlFlow::Break(()));
        }
        if write(&self.out, false, bytes).is_err() {
            self.broken = true;
            return Some(ControlFlow::Break(()));
        }
        Some(ControlFlow::Continue(()))
    }

    /// The limit is reached or stdout is gone.
    #[inline]
    fn done(&self) -> bool {
        self.broken || self.limit.is_some_and(|n| self.printed >= n)
    }

    /// Counts one message printed, or stdout gone.
    #[inline]
    fn count(&mut self, written: io::Result<()>) -> ControlFlow<()> {
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

/// A message this long (a tree of record batches) is written straight out, after what
/// is buffered: copying it into the buffer first would cost more than the write.
const DIRECT: usize = 8 << 10;

/// Writes one printed message, flushed with `flush`.
#[inline]
fn write(out: &RefCell<Stdout>, flush: bool, bytes: &[u8]) -> io::Result<()> {
    let mut out = out.borrow_mut();
    if bytes.len() >= DIRECT {
        out.flush()?;
        out.get_mut().write_all(bytes)?;
    } else {
        out.write_all(bytes)?;
    }
    if flush { out.flush() } else { Ok(()) }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A run of messages is written at once only where one by one would write the same
    /// and stop at the same point: never with a limit to stop at, nor a flush per message.
    #[test]
    fn runs_go_one_by_one_with_a_limit_or_a_flush_per_message() {
        let mut limited = Printer::new(Format::Summary, Selection::default(), Some(3), false);
        assert_eq!(limited.take_all(b"x\n"), None);
        let mut flushed = Printer::new(Format::Summary, Selection::default(), None, true);
        assert_eq!(flushed.take_all(b"x\n"), None);
        let mut gone = Printer::new(Format::Summary, Selection::default(), None, false);
        gone.broken = true;
        assert_eq!(gone.take_all(b"x\n"), Some(ControlFlow::Break(())));
        assert_eq!(gone.take(b"x\n", true), ControlFlow::Break(()));
    }
}
