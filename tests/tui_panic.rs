//! A panic while the TUI holds the terminal restores it (cooked mode, the
//! normal screen) before the message is printed. The test runs itself again
//! as a child in a real terminal, a detached tmux pane on a private server,
//! where the child draws the TUI and panics; tmux then shows how it ended.

use kwire::pipeline::Config;
use kwire::tui::{App, Input, TerminalGuard, load_all, ui};
use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;
use ratatui::layout::Rect;
use std::process::Command;
use std::time::{Duration, Instant};

const CHILD: &str = "KWIRE_TUI_PANIC_CHILD";
const TEST: &str = "a_panic_restores_the_terminal";
const MESSAGE: &str = "a deliberate panic to check the terminal is restored";

/// In the child: the TUI's terminal modes, a screen drawn, then a panic.
fn child() -> ! {
    let path = "captures/kraft-initial-election.pcap";
    let mut app = App::new(path, false);
    for u in load_all(Input::file(path).unwrap(), Config::default()) {
        app.update(u);
    }
    let _guard = TerminalGuard::enter().unwrap();
    let mut term = Terminal::new(CrosstermBackend::new(std::io::stdout())).unwrap();
    let size = term.size().unwrap();
    app.resize(Rect::new(0, 0, size.width, size.height));
    term.draw(|f| ui::draw(&app, f)).unwrap();
    panic!("{MESSAGE}");
}

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
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let socket = self.run(&["display", "-p", "#{socket_path}"]);
        self.run(&["kill-server"]);
        // The server leaves its socket behind when killed.
        let socket = socket.trim();
        if !socket.is_empty() {
            let _ = std::fs::remove_file(socket);
        }
    }
}

#[test]
fn a_panic_restores_the_terminal() {
    if std::env::var_os(CHILD).is_some() {
        child();
    }
    if Command::new("tmux").arg("-V").output().is_err() {
        eprintln!("skip: needs tmux");
        return;
    }
    let exe = std::env::current_exe().unwrap();
    let tmux = Tmux {
        socket: format!("kwire-tui-panic-{}", std::process::id()),
    };
    // After the child: its exit status, then the tty's modes as stty reports them.
    let script = format!(
        "{CHILD}=1 '{}' --exact {TEST} --nocapture; echo \"EXITED rc=$?\"; \
         stty -a | tr ' ;' '\\n\\n' | grep -E -x -- '-?(icanon|echo)' | tr '\\n' ' '; echo; sleep 600",
        exe.display()
    );
    tmux.run(&[
        "new-session",
        "-d",
        "-x",
        "100",
        "-y",
        "30",
        "-c",
        env!("CARGO_MANIFEST_DIR"),
        &script,
    ]);
    let deadline = Instant::now() + Duration::from_secs(60);
    let screen = loop {
        let s = tmux.run(&["capture-pane", "-p", "-S", "-100"]);
        if s.contains("EXITED") && s.contains("icanon") {
            break s;
        }
        assert!(Instant::now() < deadline, "the child did not end:\n{s}");
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(screen.contains("EXITED rc=101"), "{screen}");
    assert!(
        screen.contains(MESSAGE),
        "the panic message is not shown:\n{screen}"
    );
    assert!(
        screen.lines().any(|l| l.starts_with("icanon echo")),
        "the terminal was left in raw mode:\n{screen}"
    );
    let alternate = tmux.run(&["display", "-p", "#{alternate_on}"]);
    assert_eq!(alternate.trim(), "0", "still on the alternate screen");
}
