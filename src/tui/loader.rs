//! The loader thread: runs the pipeline over a source and sends compact
//! batches of rows to the UI, with progress, so the UI never waits on input.
//!
//! A capture file's analysis (elections, coordinators) is made after its list
//! has loaded, by reading the files again, as Wireshark's statistics do: the
//! list then needs only each message's header and error codes, and the
//! analyzer's work and memory come after the list is shown. Live capture and
//! standard input cannot be read again: their analysis is made while loading.

use super::store::Batch;
use crate::analysis::{Analysis, Analyzer, Limits};
use crate::capture::{CaptureError, LiveOptions, LiveStats, Packet, Source};
use crate::codec::Need;
use crate::dissect::Record;
use crate::pipeline::{self, Config, End, RunStats};
use std::io::Read;
use std::ops::ControlFlow;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, sync_channel};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Rows per batch at most.
const BATCH_ROWS: usize = 4096;
/// A batch is sent at least this often while messages arrive.
/// (A regular file's reads read the clock only every [`CLOCK_EVERY`] polls.)
const BATCH_EVERY: Duration = Duration::from_millis(40);
/// Polls of a regular file between readings of the clock.
const CLOCK_EVERY: u32 = 64;
/// The analysis is rebuilt and sent at most this often while loading (and once at the end).
const ANALYSIS_EVERY: Duration = Duration::from_secs(1);

/// How far loading has got.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Progress {
    pub packets: u64,
    /// Share of the file read, estimated from record sizes; `None` for live and stdin.
    pub fraction: Option<f64>,
    pub live: Option<LiveStats>,
}

/// What the loader sends.
#[derive(Debug)]
pub enum Update {
    Batch(Batch, Progress),
    /// The capture-wide analysis (elections, coordinators) of every message so far.
    Analysis(Box<Analysis>),
    /// The source ended (or was stopped); `error` when it ended damaged.
    Done {
        progress: Progress,
        stats: Box<RunStats>,
        error: Option<String>,
        /// The analysis is made next, from the files read again: an
        /// [`Update::Analysis`] or [`Update::NoAnalysis`] follows.
        analysis_follows: bool,
    },
    /// The files could not be read again for the analysis: why.
    NoAnalysis(String),
}

/// An opened source, ready to load.
pub struct Input {
    pub source: Source,
    /// What the status bar calls it: a file name or `live IFACE (BPF)`.
    pub label: String,
    pub live: bool,
    /// The capture files read (several are merged), so `w` can read them again.
    pub paths: Vec<std::path::PathBuf>,
    estimate: Option<Estimate>,
    stop: Arc<AtomicBool>,
    /// Set while the UI works for the user (a filter): background work waits.
    ui_busy: Arc<AtomicBool>,
}

impl Input {
    /// Whether the capture can be read again (regular files, not standard input or live).
    fn rereadable(&self) -> bool {
        !self.live && !self.paths.is_empty() && self.paths.iter().all(|p| p.is_file())
    }

    /// Opens a capture file (`-` for standard input).
    pub fn file(path: &str) -> Result<Input, CaptureError> {
        let source = Source::open_file(path)?;
        Ok(Input {
            source,
            label: if path == "-" {
                "standard input".to_string()
            } else {
                path.to_string()
            },
            live: false,
            paths: vec![path.into()],
            estimate: Estimate::of(path),
            stop: Arc::new(AtomicBool::new(false)),
            ui_busy: Arc::default(),
        })
    }

    /// Several capture files already opened and merged by time.
    pub fn merged(source: Source, paths: &[String]) -> Input {
        Input {
            source,
            label: paths.join(" + "),
            live: false,
            paths: paths.iter().map(Into::into).collect(),
            // Record sizes cannot say how far into which file loading is.
            estimate: None,
            stop: Arc::new(AtomicBool::new(false)),
            ui_busy: Arc::default(),
        }
    }

    /// Opens an interface for live capture.
    pub fn live(iface: &str, bpf: &str) -> Result<Input, CaptureError> {
        let mut opts = LiveOptions::new(iface);
        opts.filter = bpf.to_string();
        let mut source = Source::open_live(&opts)?;
        let stop = Arc::new(AtomicBool::new(false));
        source.stop_when(stop.clone());
        Ok(Input {
            source,
            label: format!("live {iface} ({bpf})"),
            live: true,
            paths: Vec::new(),
            estimate: None,
            stop,
            ui_busy: Arc::default(),
        })
    }
}

/// Estimates how much of a file has been read from the records returned.
#[derive(Clone, Copy, Debug)]
struct Estimate {
    size: u64,
    pcapng: bool,
}

impl Estimate {
    fn of(path: &str) -> Option<Estimate> {
        if path == "-" {
            return None;
        }
        let mut f = std::fs::File::open(path).ok()?;
        let size = f.metadata().ok()?.len();
        let mut magic = [0u8; 4];
        f.read_exact(&mut magic).ok()?;
        Some(Estimate {
            size: size.max(1),
            pcapng: magic == [0x0a, 0x0d, 0x0d, 0x0a],
        })
    }

    /// Bytes a record of `caplen` takes in the file.
    fn record(&self, caplen: u32) -> u64 {
        let caplen = u64::from(caplen);
        if self.pcapng {
            32 + caplen.div_ceil(4) * 4
        } else {
            16 + caplen
        }
    }
}

/// The running loader: its updates, and the means to stop it.
pub struct Loader {
    pub updates: Receiver<Update>,
    stop: Arc<AtomicBool>,
    ui_busy: Arc<AtomicBool>,
    handle: Option<JoinHandle<()>>,
}

impl Loader {
    /// Starts loading `input` on its own thread.
    pub fn spawn(input: Input, cfg: Config) -> std::io::Result<Loader> {
        // Batches in flight are memory too: a few suffice to keep the UI fed.
        let (tx, rx) = sync_channel(4);
        let stop = input.stop.clone();
        let ui_busy = input.ui_busy.clone();
        let handle = std::thread::Builder::new()
            .name("kwire-loader".into())
            .spawn(move || load(input, cfg, &mut |u| tx.send(u).is_ok()))?;
        Ok(Loader {
            updates: rx,
            stop,
            ui_busy,
            handle: Some(handle),
        })
    }

    /// Whether the UI is working for the user (scanning a filter): the analysis made
    /// after loading waits meanwhile, so the user's work has the CPU.
    pub fn ui_busy(&self, busy: bool) {
        self.ui_busy.store(busy, Ordering::Relaxed);
    }

    /// Asks the loader to stop and waits for it.
    pub fn stop(mut self) {
        self.stop.store(true, Ordering::Relaxed);
        // Unblock a loader waiting on a full channel.
        while self.updates.try_recv().is_ok() {}
        if let Some(h) = self.handle.take() {
            drop(self.updates);
            let _ = h.join();
        }
    }
}

/// Loads the whole input synchronously into batches (tests and tools).
pub fn load_all(input: Input, cfg: Config) -> Vec<Update> {
    let mut all = Vec::new();
    load(input, cfg, &mut |u| {
        all.push(u);
        true
    });
    all
}

/// The loader's side of [`pipeline::run_with`]: rows into batches, every message into the
/// analysis (unless it is made later), and a batch sent whenever one is full or due.
struct Load<'t> {
    tx: &'t mut dyn FnMut(Update) -> bool,
    // Fed every message in capture order, as `kwire stats` does; its memory is bounded.
    // `None` when the analysis is made after loading.
    analyzer: Option<Analyzer>,
    // Messages fed to the analyzer, and how many the last analysis sent covered.
    fed: u64,
    analysed: u64,
    last_analysis: Instant,
    batch: Batch,
    progress: Progress,
    read_bytes: u64,
    last_sent: Instant,
    /// Polls since the clock was last read.
    polls: u32,
    /// The input is regular files (never waits long for a read).
    regular: bool,
    gone: bool,
    stop: Arc<AtomicBool>,
    estimate: Option<Estimate>,
    live: bool,
}

impl Load<'_> {
    fn send(&mut self, source: &mut Source, analysis: Option<Analysis>) -> bool {
        if self.live {
            self.progress.live = source.live_stats();
        }
        // The next batch is likely as large: room for it now saves growing it row by row.
        let next = Batch::with_capacity(
            self.batch.len() + self.batch.len() / 8,
            self.batch.bytes.len() + self.batch.bytes.len() / 8,
        );
        let b = std::mem::replace(&mut self.batch, next);
        (self.tx)(Update::Batch(b, self.progress))
            && analysis.is_none_or(|a| (self.tx)(Update::Analysis(Box::new(a))))
    }
}

impl pipeline::Hooks for Load<'_> {
    fn message(&mut self, r: &Record<'_>) -> ControlFlow<()> {
        self.batch.push(r);
        if let Some(a) = &mut self.analyzer {
            a.record(r);
            self.fed += 1;
        }
        ControlFlow::Continue(())
    }

    fn poll(&mut self, source: &mut Source) -> ControlFlow<()> {
        if self.stop.load(Ordering::Relaxed) {
            return ControlFlow::Break(());
        }
        let full = self.batch.len() >= BATCH_ROWS;
        // Reading a file never waits long, so the clock need not be read before every packet.
        self.polls += 1;
        let due = (!self.regular || self.polls >= CLOCK_EVERY)
            && self.last_sent.elapsed() >= BATCH_EVERY;
        if self.polls >= CLOCK_EVERY {
            self.polls = 0;
        }
        if full || due {
            // Rebuilding the analysis copies it: only now and then, and only when it changed.
            let analysis = self.analyzer.as_ref().filter(|_| {
                self.fed != self.analysed && self.last_analysis.elapsed() >= ANALYSIS_EVERY
            });
            let analysis = analysis.map(Analyzer::analysis);
            if analysis.is_some() {
                self.analysed = self.fed;
                self.last_analysis = Instant::now();
            }
            if !self.send(source, analysis) {
                self.gone = true;
                return ControlFlow::Break(());
            }
            self.last_sent = Instant::now();
        }
        ControlFlow::Continue(())
    }

    /// The analyzer reads whole bodies; a row reads the header, the verdict and the error
    /// codes (its `error` flag), and the topic ids every projection builds.
    fn need(&self) -> Need {
        if self.analyzer.is_some() {
            Need::all()
        } else {
            row_need()
        }
    }

    fn packet(&mut self, number: u64, p: &Packet<'_>) {
        self.progress.packets = number;
        if let Some(e) = self.estimate {
            self.read_bytes += e.record(p.caplen);
            self.progress.fraction = Some((self.read_bytes as f64 / e.size as f64).min(0.99));
        }
    }
}

/// What of a body a row needs (see [`super::store::Batch::push`]).
pub(crate) fn row_need() -> Need {
    Need::header().with_error_codes()
}

/// The analysis tab shows the first and latest answer per key: it needs no more.
fn analyzer() -> Analyzer {
    Analyzer::with_limits(Limits::compact())
}

/// Runs the pipeline over the input, then (for files) again for the analysis; `tx`
/// returns false when nobody listens any more.
fn load(mut input: Input, cfg: Config, tx: &mut dyn FnMut(Update) -> bool) {
    let again = input.rereadable().then(|| (input.paths.clone(), cfg.clone()));
    let ui_busy = input.ui_busy.clone();
    let mut load = Load {
        tx,
        analyzer: again.is_none().then(analyzer),
        fed: 0,
        analysed: 0,
        last_analysis: Instant::now(),
        batch: Batch::default(),
        progress: Progress::default(),
        read_bytes: if input.estimate.is_some_and(|e| !e.pcapng) {
            24
        } else {
            0
        },
        last_sent: Instant::now(),
        polls: 0,
        regular: again.is_some(),
        gone: false,
        stop: input.stop.clone(),
        estimate: input.estimate,
        live: input.live,
    };
    let (stats, end) = pipeline::run_with(&mut input.source, cfg, &mut load);
    // Nobody listens, or the user quit: nothing more to send.
    if load.gone || load.stop.load(Ordering::Relaxed) {
        return;
    }
    let error = match end {
        End::Complete => None,
        End::Damaged(e) => Some(e.to_string()),
    };
    if load.estimate.is_some() && error.is_none() {
        load.progress.fraction = Some(1.0);
    }
    let analysis = load.analyzer.take().map(|a| a.analysis());
    if !load.send(&mut input.source, analysis) {
        return;
    }
    let sent = (load.tx)(Update::Done {
        progress: load.progress,
        stats: Box::new(stats),
        error,
        analysis_follows: again.is_some(),
    });
    drop(input);
    if let Some((paths, cfg)) = again.filter(|_| sent) {
        let waits = Waits {
            stop: &load.stop,
            ui_busy: &ui_busy,
        };
        analyse_again(&paths, cfg, waits, &mut *load.tx);
    }
}

/// The analysis of a capture file's messages, read again after its list has loaded.
struct Again<'s> {
    analyzer: Analyzer,
    waits: Waits<'s>,
}

/// What background work watches: a stop request, and the UI's work for the user.
#[derive(Clone, Copy)]
struct Waits<'s> {
    stop: &'s AtomicBool,
    ui_busy: &'s AtomicBool,
}

/// How long background work sleeps while the UI is busy, between looks.
const YIELD: Duration = Duration::from_millis(5);

impl pipeline::Hooks for Again<'_> {
    fn message(&mut self, r: &Record<'_>) -> ControlFlow<()> {
        self.analyzer.record(r);
        ControlFlow::Continue(())
    }

    fn poll(&mut self, _source: &mut Source) -> ControlFlow<()> {
        loop {
            if self.waits.stop.load(Ordering::Relaxed) {
                return ControlFlow::Break(());
            }
            if !self.waits.ui_busy.load(Ordering::Relaxed) {
                return ControlFlow::Continue(());
            }
            std::thread::sleep(YIELD);
        }
    }
}

/// Reads `paths` again (merged as the first time, so the messages are the same, in the
/// same order) and sends their analysis.
fn analyse_again(
    paths: &[std::path::PathBuf],
    cfg: Config,
    waits: Waits<'_>,
    tx: &mut dyn FnMut(Update) -> bool,
) {
    let mut source = match Source::open_files(paths) {
        Ok(s) => s,
        Err(e) => {
            tx(Update::NoAnalysis(format!(
                "no analysis: cannot read the capture again: {e}"
            )));
            return;
        }
    };
    let mut again = Again {
        analyzer: analyzer(),
        waits,
    };
    // Background work: one thread, leaving the other core to the UI (a filter, say).
    let cfg = Config { threads: 1, ..cfg };
    pipeline::run_with(&mut source, cfg, &mut again);
    drop(source);
    if !waits.stop.load(Ordering::Relaxed) {
        tx(Update::Analysis(Box::new(again.analyzer.analysis())));
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing)]
mod tests {
    use super::*;
    use crate::tui::store::Batch;

    /// Captures with every kind of traffic the repository has (groups, records, TLS, elections).
    fn captures() -> Vec<std::path::PathBuf> {
        let mut v: Vec<_> = ["captures", "captures/records", "captures/synthetic"]
            .iter()
            .flat_map(|d| std::fs::read_dir(d).unwrap())
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "pcap"))
            .collect();
        v.sort();
        assert!(v.len() > 5);
        v
    }

    /// Every message's row, as the loader makes it with `need`.
    fn rows(path: &std::path::Path, need: Need) -> Vec<String> {
        struct Rows(Vec<String>, Need);
        impl pipeline::Hooks for Rows {
            fn message(&mut self, r: &Record<'_>) -> ControlFlow<()> {
                let mut b = Batch::default();
                b.push(r);
                self.0.push(format!("{:?}", b.rows));
                ControlFlow::Continue(())
            }
            fn need(&self) -> Need {
                self.1.clone()
            }
        }
        let mut src = Source::open_file(path).unwrap();
        let mut h = Rows(Vec::new(), need);
        pipeline::run_with(&mut src, Config::default(), &mut h);
        h.0
    }

    #[test]
    fn rows_from_headers_and_error_codes_are_the_rows_of_whole_bodies() {
        let mut n = 0;
        for p in captures() {
            let all = rows(&p, Need::all());
            n += all.len();
            assert_eq!(all, rows(&p, row_need()), "{}", p.display());
        }
        assert!(n > 1000);
    }

    /// The analyses sent, and whether `Done` said one follows.
    fn analyses(input: Input) -> (Vec<String>, bool) {
        let mut out = Vec::new();
        let mut follows = false;
        for u in load_all(input, Config::default()) {
            match u {
                Update::Analysis(a) => out.push(format!("{a:?}")),
                Update::Done {
                    analysis_follows, ..
                } => follows = analysis_follows,
                Update::NoAnalysis(e) => panic!("{e}"),
                Update::Batch(..) => {}
            }
        }
        (out, follows)
    }

    #[test]
    fn the_analysis_made_after_loading_is_the_one_made_while_loading() {
        for p in captures() {
            let path = p.to_str().unwrap();
            let (after, follows) = analyses(Input::file(path).unwrap());
            assert!(follows, "{path}");
            assert_eq!(after.len(), 1, "{path}");
            // Without a path to read again, as for standard input: made while loading.
            let source = Source::open_file(path).unwrap();
            let (during, follows) = analyses(Input::merged(source, &[]));
            assert!(!follows, "{path}");
            assert_eq!(during.last(), after.last(), "{path}");
        }
    }

    #[test]
    fn a_capture_that_cannot_be_read_again_says_so() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("gone.pcap");
        std::fs::copy("captures/kraft-initial-election.pcap", &path).unwrap();
        let input = Input::file(path.to_str().unwrap()).unwrap();
        // The list loads from the file opened; what is at its path now is no capture.
        std::fs::remove_file(&path).unwrap();
        std::fs::write(&path, "not a capture").unwrap();
        let updates = load_all(input, Config::default());
        assert!(updates.iter().any(|u| matches!(u, Update::Batch(b, _) if !b.is_empty())));
        assert!(matches!(updates.last(), Some(Update::NoAnalysis(e)) if e.starts_with("no analysis")));
    }
}
