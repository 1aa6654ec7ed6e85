//! `kwire tui` in a real terminal (a detached tmux pane on a private
//! server): `c` reaches the terminal's clipboard through OSC 52 (tmux keeps
//! it as a paste buffer), `w` writes the shown messages' packets, `f`
//! follows a connection, and `q` quits cleanly.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

const CAPTURE: &str = "captures/kraft-initial-election.pcap";

struct Tmux {
    socket: String,
}

impl Tmux {
    fn run(&self, args: &[&str]) -> String {
        let out = Command::new("tmux")
            .arg("-L")
            .arg(&self.socket)
            .args(args)
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    fn keys(&self, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", "kw"];
        args.extend_from_slice(keys);
        self.run(&args);
    }

    fn screen(&self) -> String {
        self.run(&["capture-pane", "-p", "-t", "kw"])
    }

    /// Waits until the screen shows `what`.
    fn wait_for(&self, what: &str) -> String {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let s = self.screen();
            if s.contains(what) {
                return s;
            }
            assert!(Instant::now() < deadline, "no {what:?} on screen:\n{s}");
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let socket = self.run(&["display", "-p", "#{socket_path}"]);
        self.run(&["kill-server"]);
        let socket = socket.trim();
        if !socket.is_empty() {
            let _ = std::fs::remove_file(socket);
        }
    }
}

#[test]
fn c_w_f_and_q_in_a_real_terminal() {
    if Command::new("tmux").arg("-V").output().is_err() {
        eprintln!("SKIP: needs tmux");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("shown.pcap");
    let tmux = Tmux {
        socket: format!("kwire-tui-term-{}", std::process::id()),
    };
    let script = format!(
        "'{}' tui {CAPTURE}; echo \"EXITED rc=$?\"; sleep 600",
        env!("CARGO_BIN_EXE_kwire")
    );
    tmux.run(&[
        "new-session",
        "-d",
        "-s",
        "kw",
        "-x",
        "160",
        "-y",
        "40",
        "-c",
        env!("CARGO_MANIFEST_DIR"),
        &script,
    ]);
    // tmux turns an application's OSC 52 into a paste buffer.
    tmux.run(&["set-option", "-s", "set-clipboard", "on"]);
    tmux.wait_for("loaded 476 packets");
    // The first message as NDJSON, on the clipboard.
    tmux.keys(&["c"]);
    tmux.wait_for("copied the message as NDJSON");
    let deadline = Instant::now() + Duration::from_secs(10);
    let buffer = loop {
        let b = tmux.run(&["show-buffer"]);
        if !b.is_empty() || Instant::now() > deadline {
            break b;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(
        buffer.starts_with("{\"frame\":25,"),
        "clipboard: {buffer:?}"
    );
    // Follow the first message's connection, and write its packets.
    tmux.keys(&["f"]);
    tmux.wait_for("following a connection");
    tmux.keys(&["w"]);
    tmux.wait_for("write shown packets to:");
    tmux.keys(&["C-u"]);
    tmux.keys(&["-l", out.to_str().unwrap()]);
    tmux.keys(&["Enter"]);
    tmux.wait_for("packets of 36 messages");
    assert!(Path::new(&out).metadata().unwrap().len() > 1000);
    tmux.keys(&["q"]);
    let s = tmux.wait_for("EXITED");
    assert!(s.contains("EXITED rc=0"), "{s}");
}
