//! `read` and `stats`: a capture file through the pipeline.

use super::{ended, open_failed, report};
use crate::{ReadArgs, StatsArgs, StatsFormat};
use kwire::Source;
use std::io::{self, Write};
use std::ops::ControlFlow;
use std::process::ExitCode;

pub(crate) fn read(args: &ReadArgs) -> ExitCode {
    let mut printer = match args.out.printer(false) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("kwire: {e}");
            return ExitCode::from(1);
        }
    };
    let mut source = match Source::open_file(&args.file) {
        Ok(s) => s,
        Err(e) => return open_failed(&args.file, e),
    };
    let mut notes = args.out.common.schemas();
    let (stats, end) = kwire::run(&mut source, args.out.common.config(false), &mut |r| {
        notes.see(r);
        printer.print(r)
    });
    printer.finish();
    if !args.out.quiet {
        report(&stats);
    }
    ended(end)
}

pub(crate) fn stats(args: &StatsArgs) -> ExitCode {
    let mut source = match Source::open_file(&args.file) {
        Ok(s) => s,
        Err(e) => return open_failed(&args.file, e),
    };
    // Created before the run, so a path that cannot be written fails at once.
    let mut html = match &args.html {
        Some(path) => match std::fs::File::create(path) {
            Ok(f) => Some((f, path)),
            Err(e) => {
                eprintln!("kwire: cannot write {}: {e}", path.display());
                return ExitCode::from(1);
            }
        },
        None => None,
    };
    let mut notes = args.common.schemas();
    let mut analyzer = kwire::Analyzer::new();
    let (run, end) = kwire::run(&mut source, args.common.config(false), &mut |r| {
        notes.see(r);
        analyzer.record(r);
        ControlFlow::Continue(())
    });
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
        let page = kwire::analysis_html(&a, &args.file);
        if let Err(e) = f.write_all(page.as_bytes()).and_then(|()| f.flush()) {
            eprintln!("kwire: cannot write {}: {e}", path.display());
            return ExitCode::from(1);
        }
    }
    if !args.quiet {
        report(&run);
    }
    ended(end)
}
