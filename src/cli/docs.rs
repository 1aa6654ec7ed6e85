//! `completions` and `man`: generated from the clap definition, so they never drift.

use crate::Cli;
use clap::CommandFactory;
use std::io::{self, Write};
use std::process::ExitCode;

pub(crate) fn completions(shell: clap_complete::Shell) -> ExitCode {
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), "kwire", &mut out);
    // A reader that went away (e.g. `| head`) is not an error.
    let _ = io::stdout().lock().write_all(&out);
    ExitCode::SUCCESS
}

/// One page for the whole program: kwire's own sections, then a COMMANDS section with
/// each command's synopsis, description and options as subsections.
pub(crate) fn man() -> ExitCode {
    let mut out = Vec::new();
    if let Err(e) = render_man(&mut out) {
        errln!("kwire: cannot render the man page: {e}");
        return ExitCode::from(1);
    }
    let _ = io::stdout().lock().write_all(&out);
    ExitCode::SUCCESS
}

fn render_man(out: &mut Vec<u8>) -> io::Result<()> {
    let cmd = Cli::command();
    let man = clap_mangen::Man::new(cmd.clone());
    man.render_title(out)?;
    man.render_name_section(out)?;
    man.render_synopsis_section(out)?;
    man.render_description_section(out)?;
    man.render_options_section(out)?;
    out.extend_from_slice(b".SH COMMANDS\n");
    for sub in cmd.get_subcommands().filter(|s| s.get_name() != "help") {
        let name = format!("kwire {}", sub.get_name());
        let page = clap_mangen::Man::new(sub.clone().bin_name(&name));
        let mut part = Vec::new();
        page.render_synopsis_section(&mut part)?;
        page.render_description_section(&mut part)?;
        if sub.get_arguments().any(|a| !a.is_hide_set()) {
            page.render_options_section(&mut part)?;
        }
        // The command's sections become paragraphs of one subsection of COMMANDS.
        let text = String::from_utf8_lossy(&part);
        let body: Vec<&str> = text
            .lines()
            .map(|l| if l.starts_with(".SH ") { ".PP" } else { l })
            .collect();
        out.extend_from_slice(format!(".SS \"{name}\"\n{}\n", body.join("\n")).as_bytes());
    }
    man.render_version_section(out)
}
