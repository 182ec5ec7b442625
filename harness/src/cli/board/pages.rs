//! The board's pages, from templates that escape what they insert (maud):
//! names, descriptions, reasons and case ids are strangers' text. The
//! index shows the night in numbers and pictures, then the servers as an
//! area × server grid: its first rows in the page, the rest in pages of
//! compact JSON (`data/servers-NNNN.json`) that the index's script fetches
//! when a visitor searches, filters or asks for more.

use super::charts::{self, Bar};
use super::site::{Night, Row, color, few, rank};
use super::{ServerResult, history};
use maud::{DOCTYPE, Markup, PreEscaped, html};

/// Rows in the index itself; the rest come from the data pages.
pub const FIRST_ROWS: usize = 100;

const STYLE: &str = "body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#222;max-width:1600px}table{border-collapse:collapse}td,th{padding:3px 8px;border-bottom:1px solid #ddd;text-align:left;vertical-align:top}.o{color:#fff;padding:1px 6px;border-radius:3px;white-space:nowrap}.small{color:#666;font-size:12px}input,select{margin-right:1em}.charts{display:flex;flex-wrap:wrap;gap:1.5em}figure.chart{margin:0}th.a{writing-mode:vertical-rl;transform:rotate(180deg);font-weight:normal;font-size:11px;padding:2px}td.g{padding:0 1px;width:14px}td.g span{display:inline-block;width:12px;height:12px;border-radius:2px}.gP{background:#2e7d32}.gW{background:#e0a000}.gF{background:#c62828}.gE{background:#ef6c00}.thin{color:#b26a00}";

/// The index's script: filters, search and more rows over every server,
/// from the data pages. It inserts text with textContent only.
const SCRIPT: &str = include_str!("index.js");

fn outcome(o: &str) -> Markup {
    html! { span.o style=(format!("background:{}", color(o))) { (o) } }
}

/// The judged line of a run: cases judged of all, tools called.
pub fn judged_text(r: &ServerResult) -> String {
    match &r.judged {
        Some(j) => format!("{} of {} cases judged · {} of {} tools called", j.cases, j.of, j.tools_called, j.tools_listed),
        None => String::new(),
    }
}

pub struct IndexFacts<'a> {
    pub night: &'a str,
    pub digest: &'a str,
    pub total: usize,
    pub pages: usize,
    pub areas: &'a [String],
    pub problems: &'a [String],
    pub changes: &'a [(String, bool, String)],
    pub bare: &'a [String],
    pub charts: Vec<Markup>,
}

pub fn index(f: &IndexFacts, first: &[Row]) -> String {
    let areas_json = serde_json::to_string(f.areas).unwrap_or_default();
    let mut outcomes: Vec<&str> = super::site::OUTCOMES.to_vec();
    outcomes.sort_by_key(|o| (rank(o), o.to_string()));
    let page = html! {
        (DOCTYPE)
        html lang="en" {
            head { meta charset="utf-8"; title { "MCP conformance board" } style { (STYLE) } }
            body {
                h1 { "MCP conformance board" }
                p.small {
                    "night " (f.night) " · " (f.total) " servers · mcpcert " (env!("CARGO_PKG_VERSION")) " · suites " code { (f.digest) }
                    " · each server run by " code { "mcpcert run --server-json" } "; " a href="board.json" { "board.json" }
                }
                @if !f.bare.is_empty() {
                    p #unsandboxed {
                        b { (f.bare.len()) " server(s) ran with no sandbox" } " (" code { "--no-sandbox" } "): they saw the files, network and environment of the machine that ran them: " (f.bare.join(", "))
                    }
                }
                h2 { "The night in numbers" }
                div.charts { @for c in &f.charts { (c) } }
                @if !f.changes.is_empty() {
                    h2 { "Since the night before" }
                    ul #changes {
                        @for (name, worse, t) in f.changes.iter().take(200) {
                            li { (if *worse { "regression" } else { "change" }) " " b { (name) } ": " (t) }
                        }
                    }
                    @if f.changes.len() > 200 { p.small { "and " (f.changes.len() - 200) " more: board.json lists every change" } }
                }
                @if !f.problems.is_empty() {
                    h2 { "Snapshot entries not read" }
                    ul { @for p in f.problems.iter().take(100) { li { (p) } } }
                    @if f.problems.len() > 100 { p.small { "and " (f.problems.len() - 100) " more (board.json)" } }
                }
                h2 { "Servers" }
                p {
                    input #q type="search" placeholder="search every server";
                    select #outcome { option value="" { "every outcome" } @for o in &outcomes { option { (o) } } }
                    select #transport { option value="" { "every transport" } option { "stdio" } option { "http" } }
                    select #depth {
                        option value="" { "every pass" }
                        option value="thin" { "thin passes only (no tool called, or 75 % or more n/a)" }
                        option value="full" { "passes that judged more" }
                    }
                    span #shown {}
                }
                table #servers data-pages=(f.pages) data-total=(f.total) data-areas=(areas_json) {
                    thead { tr {
                        th { "server" } th { "version" } th { "outcome" } th { "judged" }
                        th { "pass" } th { "fail" } th { "warn" } th { "error" } th { "revisions served" }
                        @for a in f.areas { th.a title=(a) { (a) } }
                    } }
                    tbody { @for r in first { (row(r, f.areas)) } }
                }
                p { button #more type="button" hidden { "more servers" } }
                script { (PreEscaped(SCRIPT)) }
            }
        }
    };
    page.into_string()
}

/// One server's row: the same cells the script makes from a data page.
fn row(r: &Row, areas: &[String]) -> Markup {
    let judged = r.reached;
    let n = |x: u64| if judged { x.to_string() } else { String::new() };
    html! {
        tr data-outcome=(r.outcome) data-transport=(r.transport) data-name=(r.name) data-text=(r.text) {
            td { a href=(format!("servers/{}/index.html", r.slug)) { (r.name) } div.small { (r.description) } }
            td { (r.version) }
            td { (outcome(&r.outcome)) div.small { (r.reason) } }
            td.small.thin[r.thin] { (r.judged) }
            td { (n(r.counts.pass)) } td { (n(r.counts.fail)) } td { (n(r.counts.warn)) } td { (n(r.counts.error)) }
            td { (r.revisions) }
            @for (i, a) in areas.iter().enumerate() {
                @let g = r.grid.as_bytes().get(i).copied().unwrap_or(b'.') as char;
                td.g title=(format!("{a}: {}", grid_word(g))) { @if g != '.' { span class=(format!("g{g}")) {} } }
            }
        }
    }
}

pub fn grid_word(g: char) -> &'static str {
    match g {
        'P' => "pass",
        'W' => "warnings",
        'F' => "failures",
        'E' => "errors",
        _ => "not judged",
    }
}

/// The bars of the outcomes, of the pass rates and of the changes.
pub fn night_charts(rows: &[Row], areas: &[String], changes: &[(String, bool, String)], before: Option<&Night>) -> Vec<Markup> {
    let mut by: std::collections::BTreeMap<&str, usize> = std::collections::BTreeMap::new();
    for r in rows {
        *by.entry(r.outcome.as_str()).or_default() += 1;
    }
    let mut outcomes: Vec<(&str, usize)> = by.into_iter().collect();
    outcomes.sort_by_key(|(o, _)| (rank(o), o.to_string()));
    let mut prev: std::collections::BTreeMap<&str, usize> = std::collections::BTreeMap::new();
    for s in before.into_iter().flat_map(|b| b.values()) {
        *prev.entry(s.outcome.as_str()).or_default() += 1;
    }
    let bars: Vec<Bar> = outcomes
        .iter()
        .map(|(o, n)| {
            let delta = before.map(|_| *n as i64 - *prev.get(o).unwrap_or(&0) as i64);
            let text = match delta {
                Some(d) if d != 0 => format!("{n} ({d:+} since the night before)"),
                _ => n.to_string(),
            };
            Bar { label: o.to_string(), value: *n as f64, color: color(o), text }
        })
        .collect();
    let mut out = vec![charts::bars("Outcomes", &bars, None)];
    // A revision's pass rate: of the judged servers serving it, those with
    // no failure or error in its areas.
    let judged: Vec<&Row> = rows.iter().filter(|r| r.reached).collect();
    let mut revs: Vec<String> = judged.iter().flat_map(|r| r.served.iter().cloned()).collect();
    revs.sort();
    revs.dedup();
    revs.reverse();
    let rate: Vec<Bar> = revs
        .iter()
        .map(|rev| {
            let serving: Vec<&&Row> = judged.iter().filter(|r| r.served.contains(rev)).collect();
            let clean = serving.iter().filter(|r| !r.failing_revisions.contains(rev)).count();
            charts::rate(rev.clone(), clean, serving.len())
        })
        .collect();
    if !rate.is_empty() {
        out.push(charts::bars("Judged servers with no failure, by revision", &rate, Some(1.0)));
    }
    let area_rate: Vec<Bar> = areas
        .iter()
        .enumerate()
        .filter_map(|(i, a)| {
            let cells: Vec<u8> = judged.iter().filter_map(|r| r.grid.as_bytes().get(i).copied()).filter(|g| *g != b'.').collect();
            (!cells.is_empty()).then(|| charts::rate(a.clone(), cells.iter().filter(|g| matches!(g, b'P' | b'W')).count(), cells.len()))
        })
        .collect();
    if !area_rate.is_empty() {
        out.push(charts::bars("Judged servers with no failure, by area", &area_rate, Some(1.0)));
    }
    if before.is_some() {
        let count = |f: &dyn Fn(&(String, bool, String)) -> bool| changes.iter().filter(|c| f(c)).count();
        let kinds = [
            ("regressions", count(&|c| c.1), "#c62828"),
            ("new on the board", count(&|c| c.2.starts_with("new on the board")), "#1565c0"),
            ("off the board", count(&|c| c.2.starts_with("off the board")), "#6d6d6d"),
            ("other changes", count(&|c| !c.1 && !c.2.starts_with("new on the board") && !c.2.starts_with("off the board")), "#2e7d32"),
        ];
        let bars: Vec<Bar> =
            kinds.iter().map(|(l, n, c)| Bar { label: l.to_string(), value: *n as f64, color: c, text: n.to_string() }).collect();
        out.push(charts::bars("Since the night before", &bars, None));
    }
    out
}

/// A server's page.
pub fn server_page(
    slug: &str,
    r: &ServerResult,
    nights: &[(String, Night)],
    versions: &[(String, ServerResult, bool)],
    base: &str,
) -> String {
    let c = r.counts.clone().unwrap_or_default();
    let checked = mcpcert::certify::certificate::rfc3339(r.checked_at_ms as u128);
    let badge_url = format!("{base}servers/{slug}/badge.svg");
    let page_url = format!("{base}servers/{slug}/index.html");
    let page = html! {
        (DOCTYPE)
        html lang="en" {
            head { meta charset="utf-8"; title { (r.name) " — MCP conformance" } style { (STYLE) } }
            body {
                p { a href="../../index.html" { "← the board" } }
                h1 { (r.name) }
                p { (r.description) }
                p { img alt="badge" src="badge.svg"; " " (outcome(&r.outcome)) }
                table {
                    tr { th { "version" } td { (r.version) } }
                    tr { th { "outcome" } td { (r.outcome) " " (r.reason) } }
                    tr { th { "entry run" } td { (r.entry.clone().unwrap_or_default()) " " (r.what.clone().unwrap_or_default()) } }
                    tr { th { "transport" } td { (r.transport.as_deref().unwrap_or("—")) } }
                    tr { th { "sandbox" } td { (r.sandbox) } }
                    tr { th { "revisions served" } td { (r.revisions.join(", ")) } }
                    tr { th { "verdicts" } td { (c.pass) " pass, " (c.fail) " fail, " (c.warn) " warn, " (c.na) " n/a, " (c.error) " error" } }
                    @if r.judged.is_some() { tr { th { "judged" } td #judged { (judged_text(r)) } } }
                    tr { th { "checked" } td { (checked) " (" (format!("{:.1}", r.duration_ms as f64 / 1000.0)) " s) by mcpcert " (r.mcpcert_version) ", suites " code { (r.suite_digest) } } }
                    tr { th { "report" } td {
                        @if r.report {
                            a href="report/report.html" { "report.html" }
                            span.small { " (the evidence of the cases that did not pass; "
                                a href="report/report.html.gz" { "gzipped" } ")" }
                        } @else if r.reached {
                            "none kept for a clean pass: its verdict list (below) has every case; "
                            code { "mcpcert run --server-json server.json" } " shows its transcripts"
                        } @else { "none: the run did not reach the server" }
                    } }
                    tr { th { "server.json" } td { a href="server.json" { "as the snapshot has it" } } }
                }
                @if !r.failing.is_empty() {
                    h2 { "Cases that failed, erred or warned" }
                    table #failing {
                        tr { th { "verdict" } th { "level" } th { "case" } th { "why" } th { "spec" } }
                        @for f in &r.failing {
                            tr {
                                td { (f.verdict) } td { (f.level) } td { code { (f.case) } } td { (f.reason) }
                                td.small { @match mcpcert::report::html::spec_url(&f.spec) {
                                    Some(u) => a href=(u) { (f.spec) },
                                    None => (f.spec),
                                } }
                            }
                        }
                    }
                }
                @if !r.detail.is_empty() { h2 { "Detail" } pre { (r.detail) } }
                @if !r.areas.is_empty() {
                    h2 { "Areas" }
                    table { tr { th { "area" } th { "pass" } th { "fail" } th { "warn" } th { "error" } }
                        @for a in &r.areas { tr { td { (a.area) } td { (a.pass) } td { (a.fail) } td { (a.warn) } td { (a.error) } } } }
                }
                @if let Some(w) = &r.compared_with {
                    h2 { "Since the previous run" }
                    p { "compared with " (w) " (as " code { "mcpcert diff" } " compares two reports)"
                        @if !history::judged(&r.outcome) { ": this run did not reach the server, so no case is compared" }
                        @else if r.case_changes.is_empty() { ": no case changed its verdict, or the previous run did not reach the server" } }
                    @if history::judged(&r.outcome) && !r.case_changes.is_empty() {
                        table #case-changes {
                            tr { th { "change" } th { "case" } th { "before" } th { "now" } th { "note" } }
                            @for c in &r.case_changes {
                                tr { td { (c.kind.replace('_', " ")) } td { code { (c.case) } } td { (c.old) } td { (c.new) } td.small { (c.note.clone().unwrap_or_default()) } }
                            }
                        }
                    }
                }
                h2 { "History" }
                table #history {
                    tr { th { "night" } th { "version" } th { "outcome" } th { "failures" } th { "cases" } }
                    @for (n, night) in nights.iter().rev() { @if let Some(s) = night.get(&r.name) {
                        tr { td { (n) } td { (s.version) } td { (outcome(&s.outcome)) } td { (s.failures) } td.small { (cases_text(&s.regressed, &s.fixed)) } }
                    } }
                }
                h2 { "Versions checked" }
                table #versions {
                    tr { th { "version" } th { "outcome" } th { "verdicts" } th { "checked" } }
                    @for (folder, v, list) in versions {
                        @let vc = v.counts.clone().unwrap_or_default();
                        tr {
                            td { (v.version) } td { (outcome(&v.outcome)) }
                            td { @if history::judged(&v.outcome) { (format!("{} pass, {} fail, {} warn, {} n/a, {} error", vc.pass, vc.fail, vc.warn, vc.na, vc.error)) } @else { (v.reason) }
                                @if *list { " · " a href=(format!("versions/{folder}/{}", history::LIST)) { "verdict list" } " (gzipped; " code { "mcpcert diff" } " reads it)" } }
                            td { (mcpcert::certify::certificate::rfc3339(v.checked_at_ms as u128)) }
                        }
                    }
                }
                h2 { "Badge" }
                pre #badge-snippet { "[![MCP conformance](" (badge_url) ")](" (page_url) ")" }
                @if base.is_empty() { p.small { "The board was written without " code { "--base-url" } ": put the site's address before these paths." } }
            }
        }
    };
    page.into_string()
}

fn cases_text(regressed: &[String], fixed: &[String]) -> String {
    let mut cases = Vec::new();
    if !regressed.is_empty() {
        cases.push(format!("regressed: {}", few(regressed)));
    }
    if !fixed.is_empty() {
        cases.push(format!("fixed: {}", few(fixed)));
    }
    cases.join("; ")
}
