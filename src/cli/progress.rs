//! A progress bar on stderr for `read` and `stats` of a big file: bytes, messages/s, ETA.
//!
//! Shown only when stderr is a terminal, the file is over [`MIN_SIZE`], and neither `-q`
//! nor `CI` is set. libpcap does not say how far into the file it is, so the position is
//! counted from the packet records (header plus captured bytes), which is exact for pcap
//! and close for pcapng (options are not counted).

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use kwire::{Hooks, Need, Packet, Record, Rendered};
use std::io::IsTerminal;
use std::ops::ControlFlow;
use std::time::{Duration, Instant};

/// Files up to this size finish too fast for a bar to help.
pub(crate) const MIN_SIZE: u64 = 32 << 20;
/// The bar is redrawn at most this often.
const REDRAW: Duration = Duration::from_millis(100);
/// The clock is looked at once every this many packets.
const CHECK_EVERY: u64 = 256;

pub(crate) struct Progress {
    bar: ProgressBar,
    started: Instant,
    last_draw: Instant,
    /// Bytes of the file's own header before the first record.
    bytes: u64,
    /// Bytes each record adds beside its data: 16 (pcap), 32 (pcapng EPB).
    per_record: u64,
    pcapng: bool,
    packets: u64,
    messages: u64,
}

impl Progress {
    /// A bar for `path` if one should be shown.
    pub(crate) fn for_files(paths: &[String], quiet: bool) -> Option<Progress> {
        let ci = std::env::var_os("CI").is_some_and(|v| !v.is_empty());
        if quiet || ci || paths.iter().any(|p| p == "-") || !std::io::stderr().is_terminal() {
            return None;
        }
        let mut size = 0u64;
        let mut kinds = Vec::new();
        for path in paths {
            size += std::fs::metadata(path).ok()?.len();
            let mut magic = [0u8; 4];
            std::io::Read::read_exact(&mut std::fs::File::open(path).ok()?, &mut magic).ok()?;
            kinds.push(magic == [0x0a, 0x0d, 0x0d, 0x0a]);
        }
        if size <= MIN_SIZE {
            return None;
        }
        // Positions are counted from packet records, so every input must be of one
        // uncompressed format: a compressed capture's records outnumber its bytes.
        let pcap = |p: &String| {
            let mut m = [0u8; 4];
            std::fs::File::open(p)
                .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut m))
                .is_ok()
                && matches!(
                    m,
                    [0xd4, 0xc3, 0xb2, 0xa1]
                        | [0xa1, 0xb2, 0xc3, 0xd4]
                        | [0x4d, 0x3c, 0xb2, 0xa1]
                        | [0xa1, 0xb2, 0x3c, 0x4d]
                        | [0x0a, 0x0d, 0x0d, 0x0a]
                )
        };
        if !paths.iter().all(pcap) || kinds.iter().any(|k| Some(k) != kinds.first()) {
            return None;
        }
        let pcapng = kinds.first().copied().unwrap_or(false);
        let style = ProgressStyle::with_template(
            "{wide_bar} {binary_bytes}/{binary_total_bytes} {msg} ETA {eta}",
        )
        .ok()?
        .progress_chars("█▌ ");
        let bar = ProgressBar::with_draw_target(Some(size), ProgressDrawTarget::stderr_with_hz(10))
            .with_style(style);
        let now = Instant::now();
        Some(Progress {
            bar,
            started: now,
            // Draw at the first look, so the bar appears at once.
            last_draw: now.checked_sub(REDRAW).unwrap_or(now),
            bytes: if pcapng { 0 } else { 24 * paths.len() as u64 },
            per_record: if pcapng { 32 } else { 16 },
            pcapng,
            packets: 0,
            messages: 0,
        })
    }

    fn packet(&mut self, p: &Packet<'_>) {
        let data = u64::from(p.caplen);
        // pcapng pads packet data to 4 bytes.
        let data = if self.pcapng {
            data.div_ceil(4) * 4
        } else {
            data
        };
        self.bytes += self.per_record + data;
        self.packets += 1;
        if self.packets % CHECK_EVERY == 0 {
            let now = Instant::now();
            if now.duration_since(self.last_draw) >= REDRAW {
                self.last_draw = now;
                self.draw(now);
            }
        }
    }

    fn draw(&self, now: Instant) {
        let secs = now.duration_since(self.started).as_secs_f64().max(1e-3);
        let rate = self.messages as f64 / secs;
        self.bar.set_position(self.bytes);
        self.bar
            .set_message(format!("{} messages, {rate:.0}/s", self.messages));
    }

    /// Removes the bar, so the end-of-run report starts on a clean line.
    pub(crate) fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

/// A message sink with a progress bar beside it, for `kwire::run_with`.
pub(crate) struct WithProgress<'p, F> {
    pub(crate) progress: Option<&'p mut Progress>,
    pub(crate) sink: F,
    /// What the sink reads of each body.
    pub(crate) need: Need,
}

/// Where [`WithProgress`] hands each message: a function of the record, or a sink that
/// takes rendered messages too (`kwire::run_rendered`).
pub(crate) trait Sink {
    fn message(&mut self, r: &Record<'_>) -> ControlFlow<()>;

    fn rendered(&mut self, _bytes: &[u8], _r: &Rendered) -> ControlFlow<()> {
        ControlFlow::Continue(())
    }

    /// See [`Hooks::rendered_all`].
    fn rendered_all(&mut self, _bytes: &[u8]) -> Option<ControlFlow<()>> {
        None
    }
}

impl<F: FnMut(&Record<'_>) -> ControlFlow<()>> Sink for F {
    fn message(&mut self, r: &Record<'_>) -> ControlFlow<()> {
        self(r)
    }
}

impl<S: Sink> Hooks for WithProgress<'_, S> {
    fn message(&mut self, r: &Record<'_>) -> ControlFlow<()> {
        if let Some(p) = self.progress.as_deref_mut() {
            p.messages += 1;
        }
        self.sink.message(r)
    }

    fn rendered(&mut self, bytes: &[u8], r: &Rendered) -> ControlFlow<()> {
        if let Some(p) = self.progress.as_deref_mut() {
            p.messages += 1;
        }
        self.sink.rendered(bytes, r)
    }

    fn rendered_all(&mut self, bytes: &[u8], messages: u64) -> Option<ControlFlow<()>> {
        let flow = self.sink.rendered_all(bytes)?;
        if let Some(p) = self.progress.as_deref_mut() {
            p.messages += messages;
        }
        Some(flow)
    }

    fn need(&self) -> Need {
        self.need.clone()
    }

    fn packet(&mut self, _number: u64, p: &Packet<'_>) {
        if let Some(pr) = self.progress.as_deref_mut() {
            pr.packet(p);
        }
    }
}
