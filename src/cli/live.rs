//! `live` and `tui`: commands that may capture from an interface.

use super::{nothing_found, open_failed, report};
use crate::{LiveArgs, TuiArgs};
use kwire::{End, Filter, Hooks, LiveOptions, Need, Record, Source};
use std::ops::ControlFlow;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// How long a live capture may see no packet at all before kwire says so.
const SILENT_AFTER: Duration = Duration::from_secs(10);

/// Prints each message, and says once on stderr when the capture filter has matched
/// no packet for [`SILENT_AFTER`].
struct LiveHooks<'a, F> {
    sink: F,
    started: Instant,
    warned: bool,
    iface: &'a str,
    bpf: &'a str,
    /// What the printer reads of each body.
    need: Need,
}

impl<F: FnMut(&Record<'_>) -> ControlFlow<()>> Hooks for LiveHooks<'_, F> {
    fn message(&mut self, r: &Record<'_>) -> ControlFlow<()> {
        (self.sink)(r)
    }

    fn need(&self) -> Need {
        self.need.clone()
    }

    fn poll(&mut self, source: &mut Source) -> ControlFlow<()> {
        if !self.warned && source.packets_read() == 0 && self.started.elapsed() >= SILENT_AFTER {
            self.warned = true;
            errln!(
                "kwire: no packet on {} has matched the capture filter {:?} in {} s; still capturing (see -i and -f)",
                self.iface,
                self.bpf,
                SILENT_AFTER.as_secs()
            );
        }
        ControlFlow::Continue(())
    }
}

pub(crate) fn live(args: &LiveArgs) -> ExitCode {
    // Schemas first: the filter's field names come from them.
    let mut notes = args.out.common.schemas();
    let mut printer = match args.out.printer(true) {
        Ok(p) => p,
        Err(e) => {
            errln!("kwire: {e}");
            return ExitCode::from(1);
        }
    };
    let mut opts = LiveOptions::new(&args.iface);
    opts.filter.clone_from(&args.bpf);
    opts.write.clone_from(&args.write);
    opts.buffer_size = i32::try_from(args.kernel_buffer).unwrap_or(i32::MAX);
    opts.snaplen = args.snaplen.max(1);
    opts.immediate = args.immediate;
    opts.latency = Duration::from_millis(args.latency);
    let mut source = match Source::open_live(&opts) {
        Ok(s) => s,
        Err(e) => return open_failed(&args.iface, e),
    };
    let stop = Arc::new(AtomicBool::new(false));
    let flag = stop.clone();
    if let Err(e) = ctrlc::set_handler(move || flag.store(true, Ordering::Relaxed)) {
        errln!("kwire: cannot catch Ctrl-C ({e}); stop with -c or --duration");
    }
    source.stop_when(stop);
    if let Some(secs) = args.duration {
        source.stop_after(Duration::from_secs_f64(secs.max(0.0)));
    }
    let cfg = match super::configure(args.out.common.config(true), &[]) {
        Ok(c) => c,
        Err(code) => return code,
    };
    errln!("kwire: capturing on {} (filter: {})", args.iface, args.bpf);
    let need = printer.need();
    let mut hooks = LiveHooks {
        need,
        sink: |r: &Record<'_>| {
            notes.see(r);
            printer.print(r)
        },
        started: Instant::now(),
        warned: false,
        iface: &args.iface,
        bpf: &args.bpf,
    };
    let (stats, end) = kwire::run_with(&mut source, cfg.clone(), &mut hooks);
    printer.finish();
    let flushed = source.flush();
    let pcap_stats = source.live_stats();
    if !args.out.quiet {
        report(&stats);
        nothing_found(&stats, &cfg);
        if let Some(p) = pcap_stats {
            errln!(
                "  libpcap: {} packets received, {} dropped by the kernel, {} dropped by the interface",
                p.received,
                p.dropped_by_kernel,
                p.dropped_by_interface
            );
        }
    }
    match (end, flushed) {
        (End::Damaged(e), _) | (End::Complete, Err(e)) => {
            errln!("kwire: {e}");
            ExitCode::from(2)
        }
        (End::Complete, Ok(())) => ExitCode::SUCCESS,
    }
}

pub(crate) fn tui(args: &TuiArgs) -> ExitCode {
    use kwire::{TuiInput, TuiOptions, run_tui};
    // The TUI takes the screen: what was loaded is said before it starts. Schemas come
    // before the filter, whose field names come from them.
    let _ = args.common.schemas();
    if let Err(e) = Filter::parse(args.filter.as_deref().unwrap_or("")) {
        errln!("kwire: {e}");
        return ExitCode::from(1);
    }
    let input = match (&args.iface, args.file.as_slice()) {
        (Some(iface), _) => match TuiInput::live(iface, &args.bpf) {
            Ok(i) => i,
            Err(e) => return open_failed(iface, e),
        },
        (None, [file]) => match TuiInput::file(file) {
            Ok(i) => i,
            Err(e) => return open_failed(file, e),
        },
        (None, files @ [_, ..]) => match super::files::open(files) {
            Ok(source) => TuiInput::merged(source, files),
            Err(code) => return code,
        },
        (None, []) => {
            errln!("kwire: name a capture file, or an interface with -i");
            return ExitCode::from(1);
        }
    };
    let config = match super::configure(
        args.common.config(args.iface.is_some()),
        if args.iface.is_none() {
            &args.file
        } else {
            &[]
        },
    ) {
        Ok(c) => c,
        Err(code) => return code,
    };
    let opts = TuiOptions {
        config,
        filter: args.filter.clone(),
    };
    match run_tui(input, opts) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            errln!("kwire: terminal: {e}");
            ExitCode::from(1)
        }
    }
}
