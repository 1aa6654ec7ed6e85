//! Following a connection (`f`), exporting the shown messages' packets
//! (`w`) and copying to the clipboard (`c`).

use super::{App, Pane};
use crate::codec::Kind;
use crate::select::Filter;
use crate::tui::clipboard::MAX_COPY;
use crate::tui::export::{self, Reopen, Selection, Written};
use crate::tui::list::View;
use crate::view::escape::escape;
use crate::view::json;
use crate::view::summary::addr;
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::sync::mpsc::{TryRecvError, channel};

impl App {
    /// `f`: shows only the selected message's connection, or, when one is
    /// followed, every connection again (the filter stays).
    pub fn follow_stream(&mut self) {
        let filter = Filter::parse(self.list.view.filter().as_str()).unwrap_or_default();
        if self.list.view.conn().is_some() {
            self.set_view(View::new(filter));
            self.notice = Some(("showing every connection".into(), false));
            return;
        }
        let Some(r) = self.selected_row().and_then(|i| self.store.row(i)).copied() else {
            self.notice = Some(("f: select a message to follow its connection".into(), true));
            return;
        };
        let Some((src, dst)) = self.store.endpoints(&r) else {
            return;
        };
        let ends = match r.kind() {
            Kind::Request => (src, dst),
            Kind::Response => (dst, src),
        };
        self.followed = Some((r.conn(), ends));
        self.set_view(View::new(filter).following(Some(r.conn())));
        self.settle_some();
        let what = self
            .stream()
            .map(|(a, b)| format!("{} ↔ {}", addr(&a), addr(&b)))
            .unwrap_or_default();
        self.notice = Some((format!("following {what} (f again: all)"), false));
    }

    /// Filters a little now, so the followed connection shows at once.
    fn settle_some(&mut self) {
        self.scan_filter(std::time::Duration::from_millis(30));
    }

    /// The followed connection's endpoints, the client's first.
    pub fn stream(&self) -> Option<(SocketAddr, SocketAddr)> {
        let (conn, ends) = self.followed?;
        (self.list.view.conn() == Some(conn)).then_some(ends)
    }

    /// How `w` opens the capture again; without it `w` says it cannot.
    pub fn set_reopen(&mut self, reopen: Arc<Reopen>) {
        self.reopen = Some(reopen);
    }

    /// The path being typed after `w`.
    pub fn export_input(&self) -> Option<&str> {
        self.export.as_deref()
    }

    /// Whether an export is being written.
    pub fn exporting(&self) -> bool {
        self.job.is_some()
    }

    /// `w`: asks where to write the shown messages' packets.
    pub(super) fn start_export(&mut self) {
        if self.reopen.is_none() {
            self.notice = Some((
                "w: export reads the packets again from the capture file, and this is not one (live or standard input)".into(),
                true,
            ));
            return;
        }
        if self.job.is_some() {
            self.notice = Some(("w: an export is still being written".into(), true));
            return;
        }
        self.overwrite = None;
        self.notice = None;
        self.export = Some("kwire-export.pcap".into());
    }

    pub(super) fn export_key(&mut self, k: KeyEvent) {
        let Some(text) = &mut self.export else { return };
        match k.code {
            KeyCode::Enter => {
                let path = text.clone();
                self.write_export(&path);
            }
            KeyCode::Esc => {
                self.export = None;
                self.notice = None;
            }
            KeyCode::Backspace => {
                text.pop();
            }
            KeyCode::Char('u') if k.modifiers.contains(KeyModifiers::CONTROL) => text.clear(),
            KeyCode::Char(c) if !c.is_control() => text.push(c),
            _ => {}
        }
    }

    /// Enter in the `w` prompt: starts writing, on its own thread.
    fn write_export(&mut self, path: &str) {
        if path.is_empty() {
            self.notice = Some(("name a file to write".into(), true));
            return;
        }
        let p = Path::new(path);
        if p.exists() && self.overwrite.as_deref() != Some(path) {
            let same = match (
                p.canonicalize(),
                Path::new(&self.source.label).canonicalize(),
            ) {
                (Ok(a), Ok(b)) => a == b,
                _ => false,
            };
            if same {
                self.notice = Some(("that is the capture being read".into(), true));
                return;
            }
            self.overwrite = Some(path.to_string());
            self.notice = Some((
                format!("{} exists: Enter again to overwrite", escape(path)),
                true,
            ));
            return;
        }
        let Some(reopen) = self.reopen.clone() else {
            return;
        };
        let sel = Selection::of(&self.store, &self.list.view);
        if sel.is_empty() {
            self.notice = Some(("no message is shown: nothing to write".into(), true));
            return;
        }
        self.export = None;
        self.overwrite = None;
        let (tx, rx) = channel();
        let target = p.to_path_buf();
        let spawned = std::thread::Builder::new()
            .name("kwire-export".into())
            .spawn(move || {
                let r = reopen()
                    .map_err(|e| format!("opening the capture again: {e}"))
                    .and_then(|source| export::write(&sel, source, &target));
                let _ = tx.send(r);
            });
        match spawned {
            Ok(_) => {
                self.job = Some((rx, path.to_string()));
                self.notice = Some((format!("writing {}…", escape(path)), false));
            }
            Err(e) => self.notice = Some((format!("cannot start the export: {e}"), true)),
        }
    }

    /// Takes the result of a finished export; returns whether anything changed.
    pub fn poll_jobs(&mut self) -> bool {
        let Some((rx, _)) = &self.job else {
            return false;
        };
        let done = match rx.try_recv() {
            Ok(r) => r,
            Err(TryRecvError::Empty) => return false,
            Err(TryRecvError::Disconnected) => Err("the export stopped unexpectedly".into()),
        };
        self.job_done(done);
        true
    }

    /// Waits for the export being written (tests and tools).
    pub fn wait_jobs(&mut self) {
        if let Some((rx, _)) = &self.job {
            let done = rx
                .recv()
                .unwrap_or_else(|_| Err("the export stopped unexpectedly".into()));
            self.job_done(done);
        }
    }

    fn job_done(&mut self, done: Result<Written, String>) {
        let Some((_, path)) = self.job.take() else {
            return;
        };
        let path = escape(&path).into_owned();
        self.notice = Some(match done {
            Ok(w) => (
                format!(
                    "wrote {} packets of {} messages to {path}",
                    w.packets, w.messages
                ),
                false,
            ),
            Err(e) => (format!("export failed: {}", escape(&e)), true),
        });
    }

    /// `c`: in the tree, the selected field's value; elsewhere the selected
    /// message as an NDJSON line (as `kwire read --format json` prints it).
    pub(super) fn copy(&mut self) {
        let field = (self.focus == Pane::Tree)
            .then(|| {
                let d = self.detail.as_ref()?;
                let l = d.lines.get(self.tree.scroll.sel)?;
                Some(if let Some(b) = &l.raw {
                    (crate::tui::values::copy(b, self.tree.values), "value")
                } else if l.value.is_empty() {
                    (l.label.clone(), "field")
                } else {
                    (l.value.clone(), "value")
                })
            })
            .flatten();
        let (text, what) = match field {
            Some(f) => f,
            None => {
                let Some(row) = self.selected_row() else {
                    self.notice = Some(("c: no message is selected".into(), true));
                    return;
                };
                let mut out = Vec::new();
                if let Err(e) = self
                    .store
                    .with_record(row, |r| json::write_record(&mut out, r))
                {
                    self.notice = Some((format!("c: {e}"), true));
                    return;
                }
                (
                    String::from_utf8_lossy(&out).trim_end().to_string(),
                    "message as NDJSON",
                )
            }
        };
        if text.len() > MAX_COPY {
            self.notice = Some((
                format!(
                    "c: the {what} is {} bytes, more than terminals take ({MAX_COPY})",
                    text.len()
                ),
                true,
            ));
            return;
        }
        self.notice = Some((
            format!("copied the {what} ({} bytes) to the clipboard", text.len()),
            false,
        ));
        self.clipboard = Some(text);
    }

    /// Text to put on the terminal's clipboard, once.
    pub fn take_clipboard(&mut self) -> Option<String> {
        self.clipboard.take()
    }
}
