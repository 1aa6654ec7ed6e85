//! The HTML report (`kwire stats --html`): self-contained, wire strings
//! escaped (the hostile strings of tests/hostile_strings.rs, and HTML
//! injection), the same facts as the text report, and rendered by a real
//! browser (headless Chromium) without console errors, with its charts.

mod common;

use common::*;
use kwire::analysis::{Analysis, Analyzer, render_html, render_text};
use kwire::capture::Source;
use kwire::codec::encode_request;
use kwire::pipeline::{self, Config};
use serde_json::json;
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use std::process::Command;

const REELECTION: &str = "captures/kraft-reelection.pcap";
const TRANSACTIONS: &str = "captures/transactional-producer.pcap";

/// Terminal attacks, as in tests/hostile_strings.rs.
const HOSTILE: &str = "\x1b]0;pwned\x07\x1b[2J|\u{202e}gpj.exe|\u{9b}31m";
/// How the text views show it.
const SHOWN: &str = r"\x1b]0;pwned\x07\x1b[2J|\u{202e}gpj.exe|\u{9b}31m";
/// HTML injection.
const INJECT: &str = "<script>alert(1)</script><img src=x onerror=alert(2)>&amp;'\"";
const INJECT_SHOWN: &str =
    "&lt;script&gt;alert(1)&lt;/script&gt;&lt;img src=x onerror=alert(2)&gt;&amp;amp;&#39;\\&quot;";

fn analyse(path: &Path) -> Analysis {
    let mut src = Source::open_file(path).unwrap();
    let mut an = Analyzer::new();
    pipeline::run(&mut src, Config::default(), &mut |r| {
        an.record(r);
        ControlFlow::Continue(())
    });
    an.analysis()
}

fn report(path: &str) -> String {
    render_html(&analyse(Path::new(path)), path)
}

/// A capture whose client id, coordinator host, key, cluster id and topic are hostile.
fn hostile_capture() -> tempfile::NamedTempFile {
    let evil = format!("{HOSTILE}{INJECT}");
    let mut f = flow();
    f.syn_handshake()
        .client_send(&fc_req(4, 1, &format!("app{evil}"), &format!("g{evil}")))
        .server_send(&fc_resp(4, 1, &format!("g{evil}"), -1, "", -1, 15))
        .client_send(&fc_req(4, 2, &format!("app{evil}"), &format!("g{evil}")))
        .server_send(&fc_resp(
            4,
            2,
            &format!("g{evil}"),
            7,
            &format!("b{evil}"),
            9092,
            0,
        ));
    let body = json!({"ClusterId": format!("c{evil}"), "VoterId": 2, "Topics": [{
        "TopicName": format!("t{evil}"), "Partitions": [{"PartitionIndex": 0, "ReplicaEpoch": 5,
        "ReplicaId": 1, "LastOffsetEpoch": 4, "LastOffset": 100,
        "ReplicaDirectoryId": "00000000-0000-0000-0000-000000000001",
        "VoterDirectoryId": "00000000-0000-0000-0000-000000000002", "PreVote": false}]}]});
    let mut v = flow_between("10.0.0.1:50001", "10.0.0.2:9093");
    v.syn_handshake()
        .client_send(&encode_request(52, 2, 9, Some("ctl"), &body).unwrap())
        .server_send(&vote_resp(2, 9, false, 74));
    pcap(&[&f, &v])
}

#[test]
fn wire_strings_are_escaped_for_the_page() {
    let f = hostile_capture();
    let a = analyse(f.path());
    assert_eq!(a.coordinators.len(), 1);
    assert!(!a.elections.is_empty());
    let s = render_html(&a, &format!("x{INJECT}"));
    for c in ['\x1b', '\x07', '\u{202e}', '\u{9b}'] {
        assert!(!s.contains(c), "{c:?} passed through");
    }
    assert!(!s.contains("<script"), "a script tag got through");
    assert!(!s.contains("<img"), "an img tag got through");
    let esc = format!("{SHOWN}{INJECT_SHOWN}");
    for (what, want) in [
        ("title", format!("x{INJECT_SHOWN}")),
        ("key", format!("g{esc}")),
        ("host", format!("node 7 (b{esc}:9092)")),
        ("client", format!("app{esc} at 10.0.0.1:50000")),
        ("cluster", format!("cluster c{esc}")),
        ("topic", format!("t{esc}-0")),
    ] {
        assert!(s.contains(&want), "{what}: {want} not in the page");
    }
    // The error answer and the refused vote are in the error tables.
    assert!(s.contains("COORDINATOR_NOT_AVAILABLE"), "{s}");
    assert!(s.contains("FENCED_LEADER_EPOCH"), "{s}");
}

#[test]
fn reports_are_self_contained() {
    for path in [
        REELECTION,
        TRANSACTIONS,
        "captures/kraft-initial-election.pcap",
        "captures/consumer-group-java.pcap",
    ] {
        let s = report(path);
        let lower = s.to_lowercase();
        for bad in [
            "http:", "https:", "//", "src=", "url(", "@import", "<script", "<link", "<iframe",
            "<object", "<embed",
        ] {
            let hits: Vec<&str> = lower.matches(bad).collect();
            // `//` only as part of a closing comment-free page: none at all.
            assert!(hits.is_empty(), "{path}: {bad:?} in the report");
        }
        assert!(s.contains("Content-Security-Policy"));
        assert!(s.starts_with("<!DOCTYPE html>") && s.ends_with("</html>\n"));
    }
}

#[test]
fn the_elections_table_says_what_kwire_stats_says() {
    let a = analyse(Path::new(REELECTION));
    let text = render_text(&a, false);
    let html = render_html(&a, REELECTION);
    let mut rows = 0;
    for line in text.lines() {
        // "  epoch 3  node 1 won: majority at …"
        let Some(rest) = line.strip_prefix("  epoch ") else {
            continue;
        };
        let (epoch, what) = rest.split_once("  ").unwrap();
        let outcome = if what.contains(" won") {
            "won"
        } else if what.starts_with("failed") {
            "failed"
        } else if what.starts_with("undecided") {
            "undecided"
        } else if what.starts_with("no Vote") {
            "no_vote"
        } else {
            "not_captured"
        };
        let row = format!("<tr class=\"{outcome}\"><td class=\"n\">{epoch}</td><td>{outcome}</td>");
        assert!(html.contains(&row), "{row} missing for {line}");
        if let Some(l) = what.strip_prefix("node ").and_then(|w| w.split(' ').next()) {
            assert!(html.contains(&format!("{row}<td>node {l}</td>")), "{line}");
        }
        rows += 1;
    }
    assert!(rows >= 2, "{text}");
    assert_eq!(html.matches("<tr class=\"").count(), rows);
    // One dot per candidacy in the chart.
    let candidacies: usize = a.elections[0]
        .epochs
        .iter()
        .map(|e| e.candidacies.len())
        .sum();
    assert_eq!(
        html.matches("<circle class=\"candidate").count(),
        candidacies
    );
    // One histogram per API with latencies.
    let with_latency = a.apis.iter().filter(|s| s.latency.count > 0).count();
    assert_eq!(
        html.matches("<svg class=\"histogram\"").count(),
        with_latency
    );
}

#[test]
fn kwire_stats_html_writes_the_report_and_prints_as_before() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("report.html");
    let plain = kwire(&["stats", REELECTION]);
    let with = kwire(&["stats", REELECTION, "--html", out.to_str().unwrap()]);
    assert_eq!((with.code, plain.code), (0, 0), "{}", with.stderr);
    assert_eq!(with.stdout, plain.stdout);
    let page = std::fs::read_to_string(&out).unwrap();
    assert_eq!(page, report(REELECTION));
    // A file that cannot be created: exit 1 at once, with the reason.
    let bad = dir.path().join("no/such/dir/report.html");
    let r = kwire(&["stats", REELECTION, "--html", bad.to_str().unwrap()]);
    assert_eq!(r.code, 1);
    assert!(r.stderr.starts_with("kwire: cannot write "), "{}", r.stderr);
    assert!(r.stdout.is_empty());
}

// ---- in a real browser ----------------------------------------------------

/// Headless Chromium, or None (SKIP) when it is not installed outside CI.
fn chromium() -> Option<String> {
    for name in ["chromium", "chromium-browser", "google-chrome"] {
        if Command::new(name)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
        {
            return Some(name.to_string());
        }
    }
    assert!(
        std::env::var("CI").as_deref() != Ok("true"),
        "chromium is missing under CI (.ci/run installs the Debian package `chromium`)"
    );
    eprintln!("SKIP: chromium is not installed (apt-get install chromium)");
    None
}

struct Rendered {
    dom: String,
    /// What the page logged to the console: CSP refusals, script errors.
    console: Vec<String>,
}

/// Loads `page` in headless Chromium: its DOM, its console, and a screenshot if asked.
fn browse(chrome: &str, page: &Path, screenshot: Option<&Path>) -> Rendered {
    let profile = tempfile::tempdir().unwrap();
    let mut cmd = Command::new(chrome);
    cmd.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--enable-logging=stderr",
        "--v=0",
        "--window-size=1280,2200",
    ])
    .arg(format!("--user-data-dir={}", profile.path().display()));
    match screenshot {
        Some(p) => cmd.arg(format!("--screenshot={}", p.display())),
        None => cmd.arg("--dump-dom"),
    };
    let out = cmd
        .arg(format!("file://{}", page.canonicalize().unwrap().display()))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    Rendered {
        dom: String::from_utf8_lossy(&out.stdout).into_owned(),
        console: stderr
            .lines()
            .filter(|l| l.contains(":CONSOLE") || l.contains("Uncaught"))
            .map(str::to_string)
            .collect(),
    }
}

#[test]
fn chromium_renders_the_report_with_its_charts_and_no_console_errors() {
    let Some(chrome) = chromium() else { return };
    let dir = tempfile::tempdir().unwrap();
    // The check sees console errors: a page that breaks its own policy logs them.
    let probe = dir.path().join("probe.html");
    std::fs::write(
        &probe,
        "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'\"></head>\
         <body><script>console.error('kwire-probe')</script></body></html>",
    )
    .unwrap();
    let r = browse(&chrome, &probe, None);
    assert!(!r.console.is_empty(), "the console check sees nothing");

    let f = hostile_capture();
    for (name, html) in [
        ("reelection", report(REELECTION)),
        ("transactions", report(TRANSACTIONS)),
        (
            "hostile",
            render_html(&analyse(f.path()), &format!("x{INJECT}")),
        ),
    ] {
        let page = dir.path().join(format!("{name}.html"));
        std::fs::write(&page, &html).unwrap();
        let r = browse(&chrome, &page, None);
        assert!(r.console.is_empty(), "{name}: console: {:#?}", r.console);
        // The parsed page still holds what was written: charts, tables, no injected tags.
        let dom = &r.dom;
        assert!(dom.contains("<table class=\"apis\">"), "{name}");
        assert!(dom.contains("<section id=\"rebalances\">"), "{name}");
        assert!(!dom.contains("<script") && !dom.contains("<img"), "{name}");
        match name {
            "reelection" => {
                assert!(
                    dom.contains("<svg class=\"timeline\" id=\"timeline-0\""),
                    "{dom}"
                );
                assert!(dom.contains("<rect class=\"epoch won\""), "{dom}");
                assert!(dom.contains("<circle class=\"candidate vote\""), "{dom}");
                assert!(dom.contains("<polyline class=\"leader\""), "{dom}");
                assert!(
                    dom.contains("<svg class=\"histogram\" id=\"histogram-52\""),
                    "{dom}"
                );
                assert!(dom.contains("<rect class=\"bar\""), "{dom}");
            }
            "transactions" => {
                assert!(dom.contains("<table class=\"coordinators\">"), "{dom}");
                assert!(
                    dom.contains("<svg class=\"histogram\" id=\"histogram-10\""),
                    "{dom}"
                );
            }
            _ => {}
        }
    }
    // A screenshot of the election report, kept under target/ to look at.
    let shot = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("kwire-report-reelection.png");
    let _ = std::fs::remove_file(&shot);
    let r = browse(&chrome, &dir.path().join("reelection.html"), Some(&shot));
    assert!(
        r.console.is_empty(),
        "screenshot: console: {:#?}",
        r.console
    );
    let png = std::fs::read(&shot).unwrap();
    assert!(
        png.starts_with(b"\x89PNG") && png.len() > 20_000,
        "{} bytes",
        png.len()
    );
    eprintln!("screenshot: {}", shot.display());
}
