//! `read` and `stats`: a capture file through the pipeline.

use super::Notes;
use super::progress::{Progress, Sink, WithProgress};
use super::{ended, nothing_found, open_failed, report};
use crate::{ReadArgs, StatsArgs, StatsFormat};
use kwire::Printer;
use kwire::Source;
use std::io::{self, Write};
use std::ops::ControlFlow;
use std::process::ExitCode;

/// Opens the inputs (merged by time when several); a failure names its file.
pub(crate) fn open(files: &[String]) -> Result<Source, ExitCode> {
    Source::open_files(files).map_err(|e| {
        let what = match &e {
            kwire::CaptureError::Open { reason } => files
                .iter()
                .find(|f| reason.starts_with(&format!("{f}: ")))
                .or(files.first()),
            _ => files.first(),
        };
        open_failed(what.map_or("-", String::as_str), e)
    })
}

pub(crate) fn read(args: &ReadArgs) -> ExitCode {
    // Schemas first: the filter's field names come from them.
    let mut notes = args.out.common.schemas();
    let printer = match args.out.printer(false) {
        Ok(p) => p,
        Err(e) => {
            errln!("kwire: {e}");
            return ExitCode::from(1);
        }
    };
    let mut source = match open(&args.files) {
        Ok(s) => s,
        Err(e) => return e,
    };
    let mut printer = printer.with_files(&args.files);
    // Lines streaming to the terminal are progress enough, and a bar would break them up.
    let on_terminal = io::IsTerminal::is_terminal(&io::stdout());
    let mut progress = Progress::for_files(&args.files, args.out.quiet || on_terminal);
    let need = printer.need();
    // Messages are rendered on worker threads; the printer takes their bytes in order.
    let render = Render {
        look: printer.look().clone(),
        notes: notes.sayer(),
    };
    let mut hooks = WithProgress {
        progress: progress.as_mut(),
        sink: Take {
            printer: &mut printer,
            notes: &mut notes,
        },
        need,
    };
    let cfg = match super::configure(args.out.common.config(false), &args.files) {
        Ok(c) => c,
        Err(code) => return code,
    };
    let (stats, end) = kwire::run_rendered(&mut source, cfg.clone(), &mut hooks, &render);
    if let Some(p) = &progress {
        p.finish();
    }
    printer.finish();
    if !args.out.quiet {
        report(&stats);
        nothing_found(&stats, &cfg);
    }
    ended(end)
}

pub(crate) fn stats(args: &StatsArgs) -> ExitCode {
    let mut notes = args.common.schemas();
    let filter = match kwire::Filter::parse(args.filter.as_deref().unwrap_or("")) {
        Ok(f) => f,
        Err(e) => {
            errln!("kwire: {e}");
            return ExitCode::from(1);
        }
    };
    let mut source = match open(&args.files) {
        Ok(s) => s,
        Err(e) => return e,
    };
    let cfg = match super::configure(args.common.config(false), &args.files) {
        Ok(c) => c,
        Err(code) => return code,
    };
    // Created before the run, so a path that cannot be written fails at once.
    let mut html = match &args.html {
        Some(path) => match std::fs::File::create(path) {
            Ok(f) => Some((f, path)),
            Err(e) => {
                errln!("kwire: cannot write {}: {e}", path.display());
                return ExitCode::from(1);
            }
        },
        None => None,
    };
    let mut analyzer = kwire::Analyzer::new();
    let mut progress = Progress::for_files(&args.files, args.quiet);
    let mut hooks = WithProgress {
        progress: progress.as_mut(),
        sink: |r: &kwire::Record<'_>| {
            notes.see(r);
            // Only what the filter keeps is analysed.
            if filter.matches(r) {
                analyzer.record(r);
            }
            ControlFlow::Continue(())
        },
        need: kwire::Need::all(),
    };
    let (run, end) = kwire::run_with(&mut source, cfg.clone(), &mut hooks);
    if let Some(p) = &progress {
        p.finish();
    }
    let a = analyzer.analysis();
    let text = match args.format {
        StatsFormat::Text => kwire::analysis_text(&a, io::IsTerminal::is_terminal(&io::stdout())),
        StatsFormat::Json => {
            let mut s = kwire::analysis_json(&a).to_string();
            s.push('\n');
            s
        }
    };
    // A reader that went away (e.g. `| head`) is not an error.
    let _ = io::stdout().lock().write_all(text.as_bytes());
    if let Some((f, path)) = &mut html {
        let page = kwire::analysis_html(&a, &args.files.join(" + "));
        if let Err(e) = f.write_all(page.as_bytes()).and_then(|()| f.flush()) {
            errln!("kwire: cannot write {}: {e}", path.display());
            return ExitCode::from(1);
        }
    }
    if !args.quiet {
        report(&run);
        nothing_found(&run, &cfg);
    }
    ended(end)
}

/// `read`'s rendering of each message: what the printer makes of it, and the note on why
/// its body is not decoded.
struct Render {
    look: kwire::Look,
    notes: Notes,
}

impl kwire::Render for Render {
    fn render(&self, r: &kwire::Record<'_>, out: &mut Vec<u8>) -> Option<kwire::Rendered> {
        Some(kwire::Rendered {
            shown: self.look.render(r, out)?,
            note: self.notes.note(r),
        })
    }

    fn text(&self) -> bool {
        self.look.is_text()
    }

    fn render_text(&self, r: &kwire::Record<'_>, out: &mut String) -> Option<kwire::Rendered> {
        Some(kwire::Rendered {
            shown: self.look.render_text(r, out)?,
            note: self.notes.note(r),
        })
    }
}

/// `read`'s hooks on the caller's thread: rendered messages to the printer, in order.
struct Take<'a> {
    printer: &'a mut Printer,
    notes: &'a mut Notes,
}

impl Sink for Take<'_> {
    fn message(&mut self, r: &kwire::Record<'_>) -> ControlFlow<()> {
        self.notes.see(r);
        self.printer.print(r)
    }

    fn rendered(&mut self, bytes: &[u8], r: &kwire::Rendered) -> ControlFlow<()> {
        if let Some(note) = &r.note {
            self.notes.say(note);
        }
        self.printer.take(bytes, r.shown)
    }

    fn rendered_all(&mut self, bytes: &[u8]) -> Option<ControlFlow<()>> {
        self.printer.take_all(bytes)
    }
}
