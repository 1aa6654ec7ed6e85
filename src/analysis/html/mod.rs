//! `kwire stats --html`: the analysis as one self-contained HTML file to
//! share: the election timeline as SVG with its table, the coordinator map,
//! per-API latency histograms as SVG, and the error tables.
//!
//! Nothing is loaded from anywhere: no script, font, image or link leaves the
//! file, and a Content-Security-Policy says so to the browser too. Wire
//! strings are escaped twice: visibly, as in the text views (controls and
//! bidirectional overrides cannot disguise a name), then for HTML.

use super::coordinators::{CoordinatorAnswer, Endpoint, key_type_name};
use super::elections::{Epoch, Outcome, PartitionElections, Voter};
use super::{Analysis, ApiStats, At, CoordinatorKey, error_label};
use crate::view::escape::escape;
use crate::view::labels::api_label;
use crate::view::summary::latency;
use std::fmt::Write;
use tables::{coordinators, errors, latencies, rebalances};
use timeline::elections;

mod tables;
mod timeline;

/// Chart width in SVG units (the page scales it).
const W: f64 = 960.0;
/// Room left of a timeline for the epoch labels, and below for the time axis.
const LEFT: f64 = 70.0;
const RIGHT: f64 = 150.0;
const BOTTOM: f64 = 30.0;
/// Epoch rows drawn at most per timeline; the table lists them all.
const MAX_ROWS: usize = 60;

/// Renders the report. `title` names the capture (it is escaped).
pub fn render_html(a: &Analysis, title: &str) -> String {
    let mut out = String::with_capacity(64 << 10);
    let first = a.first_ts_ns.unwrap_or(0);
    let t = html(title);
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>kwire report: {t}</title>\n<style>{CSS}</style>\n</head>\n<body>\n\
         <header><h1>kwire report: <span class=\"capture\">{t}</span></h1>\n<p>{} messages",
        a.messages
    );
    if let (Some(f), Some(l)) = (a.first_ts_ns, a.last_ts_ns) {
        let _ = write!(out, " over {:.6} s", (l - f) as f64 / 1e9);
    }
    out.push_str(
        ". Times are seconds from the capture's first packet; [N] is a packet number.</p>\n\
         <nav><a href=\"#elections\">Elections</a> · <a href=\"#coordinators\">Coordinators</a> · \
         <a href=\"#latency\">Latency</a> · <a href=\"#errors\">Errors</a> · \
         <a href=\"#rebalances\">Rebalances</a></nav></header>\n<main>\n",
    );
    elections(&mut out, a, first);
    coordinators(&mut out, a, first);
    latencies(&mut out, a);
    errors(&mut out, a, first);
    rebalances(&mut out, a, first);
    let _ = write!(
        out,
        "</main>\n<footer>Written by kwire {}.</footer>\n</body>\n</html>\n",
        env!("CARGO_PKG_VERSION")
    );
    out
}

const CSS: &str = "
body{font:14px/1.4 system-ui,sans-serif;margin:0 auto;max-width:1100px;padding:0 16px;color:#1b1f24;background:#fff}
h1{font-size:20px}h2{font-size:17px;border-bottom:1px solid #ccd;padding-bottom:2px;margin-top:28px}h3{font-size:15px}
nav a{color:#0550ae}.capture{font-family:monospace}
table{border-collapse:collapse;margin:8px 0;font-size:13px}
th,td{border:1px solid #d0d7de;padding:2px 6px;text-align:left;vertical-align:top}
th{background:#f3f5f7}td.n{text-align:right;font-variant-numeric:tabular-nums}
.won{fill:#2da44e}.failed{fill:#cf222e}.undecided,.no_vote,.not_captured{fill:#8c959f}
tr.failed td:nth-child(2){color:#cf222e}tr.won td:nth-child(2){color:#1a7f37}
svg{display:block;max-width:100%;height:auto;margin:8px 0}
svg text{font:11px system-ui,sans-serif;fill:#57606a}
.axis{stroke:#8c959f;stroke-width:1}.grid{stroke:#eaeef2;stroke-width:1}
.leader{fill:none;stroke:#57606a;stroke-width:1.5}
circle.vote{fill:#0969da}circle.prevote{fill:#fff;stroke:#0969da;stroke-width:1.5}
rect.bar{fill:#0969da}.muted{color:#57606a}.err{color:#cf222e}
footer{margin:32px 0 16px;color:#57606a;font-size:12px}
";

/// A wire string for HTML: visibly escaped as in the text views, then HTML-escaped.
fn html(s: &str) -> String {
    let visible = escape(s);
    let mut out = String::with_capacity(visible.len());
    for c in visible.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

fn rel(at: At, first: i64) -> String {
    format!("{:.6}", (at.ts_ns - first) as f64 / 1e9)
}

fn at_cell(at: Option<At>, first: i64) -> String {
    at.map_or_else(
        || "<td class=\"muted\">-</td>".to_string(),
        |a| format!("<td class=\"n\">{} [{}]</td>", rel(a, first), a.packet),
    )
}

fn voter(v: Voter) -> String {
    match v {
        Voter::Node(n) => format!("node {n}"),
        Voter::Addr(a) => a.to_string(),
    }
}

fn endpoint(e: &Endpoint) -> String {
    format!("node {} ({}:{})", e.node, html(&e.host), e.port)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wire_strings_are_escaped_visibly_then_for_html() {
        assert_eq!(html("a<b>&\"'"), "a&lt;b&gt;&amp;\\&quot;&#39;");
        assert_eq!(html("x\u{1b}[2J\u{202e}y"), "x\\x1b[2J\\u{202e}y");
    }

    #[test]
    fn an_empty_analysis_is_a_whole_page() {
        let s = render_html(&Analysis::default(), "<none>");
        assert!(s.starts_with("<!DOCTYPE html>"));
        assert!(s.contains("kwire report: &lt;none&gt;"));
        assert!(s.contains("No Vote traffic"));
        assert!(s.ends_with("</html>\n"));
    }
}
