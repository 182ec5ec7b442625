//! The board's site, written from every `servers/*/result.json`: an index
//! (one row per server: outcome, counts, revisions served, failing areas;
//! a filter by outcome and transport and a search, in a few lines of
//! script, no network), a page per server (its result, areas, history and
//! badge, a link to its report), an SVG badge per server, `board.json`
//! (each server as a registry listing entry with the board's own `_meta`
//! key, for an aggregator to publish), and the history: each night's
//! outcomes in `history/NIGHT.json`, the index and pages showing what
//! changed since the night before (regressions and fixes).

use super::{ServerResult, history, last_result};
use crate::EXIT_OK;
use mcpcert::report::console::Console;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::Path;

/// The `_meta` key the board's results go under in `board.json`.
pub const META_KEY: &str = "io.github.mcpcert/conformance";

/// Better outcomes first: how a change between nights reads.
pub fn rank(outcome: &str) -> u8 {
    match outcome {
        "pass" => 0,
        "fail" => 1,
        o if environment(o) => 2,
        _ => 3,
    }
}

/// Outcomes that say what the runner lacked, not what the server did.
pub fn environment(outcome: &str) -> bool {
    matches!(outcome, "protected" | "needs-secret" | "needs-input" | "needs-network" | "needs-service" | "cannot-run")
}

pub fn color(outcome: &str) -> &'static str {
    match outcome {
        "pass" => "#2e7d32",
        "fail" => "#c62828",
        o if environment(o) => "#6d6d6d",
        _ => "#b26a00",
    }
}

/// Every outcome a server can have on the site.
pub const OUTCOMES: &[&str] = &[
    "pass",
    "fail",
    "crashed",
    "no-answer",
    "unreachable",
    "protected",
    "hung",
    "needs-secret",
    "needs-input",
    "needs-network",
    "needs-service",
    "install-failed",
    "cannot-run",
    "invalid",
    "error",
];

/// The badge: "mcpcert | passes", "3 failures", "crashed", ….
pub fn badge(r: &ServerResult) -> String {
    let c = r.counts.clone().unwrap_or_default();
    let value = match r.outcome.as_str() {
        "pass" if c.warn > 0 => format!("passes ({} warnings)", c.warn),
        "pass" => "passes".to_string(),
        // Failures are the server's; errors (what mcpcert could not
        // judge) are said apart.
        "fail" => {
            let mut v = format!("{} failure{}", c.fail, if c.fail == 1 { "" } else { "s" });
            if c.error > 0 {
                v.push_str(&format!(", {} error{}", c.error, if c.error == 1 { "" } else { "s" }));
            }
            v
        }
        o => o.replace('-', " "),
    };
    let label = "MCP conformance";
    let w = |s: &str| 10 + 7 * s.chars().count();
    let (lw, vw) = (w(label), w(&value));
    let aria = format!("{label}: {value}");
    let svg = maud::html! {
        svg xmlns="http://www.w3.org/2000/svg" width=(lw + vw) height="20" role="img" aria-label=(aria) {
            title { (aria) }
            rect width=(lw) height="20" fill="#555" {}
            rect x=(lw) width=(vw) height="20" fill=(color(&r.outcome)) {}
            g fill="#fff" text-anchor="middle" font-family="Verdana,DejaVu Sans,sans-serif" font-size="11" {
                text x=(lw / 2) y="14" { (label) }
                text x=(lw + vw / 2) y="14" { (value) }
            }
        }
    };
    svg.into_string() + "\n"
}

/// One server in one night of history.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Seen {
    pub version: String,
    pub outcome: String,
    pub failures: u64,
    /// When its result was checked: a server run again since the night
    /// before has a newer one.
    pub checked: u64,
    /// The suites that judged it (a change of suites is no regression of
    /// the server's).
    pub suite: String,
    /// The cases that regressed and were fixed in that run (only in the
    /// night it ran).
    pub regressed: Vec<String>,
    pub fixed: Vec<String>,
}

/// One night of history: name → what was seen of it.
pub type Night = BTreeMap<String, Seen>;

/// A list of cases for a line: the first few, then how many more.
pub fn few(cases: &[String]) -> String {
    let mut s = cases.iter().take(5).cloned().collect::<Vec<_>>().join(", ");
    if cases.len() > 5 {
        s.push_str(&format!(" and {} more", cases.len() - 5));
    }
    s
}

/// A change between two nights, in words, and whether it is a regression;
/// None when nothing changed.
fn change(old: Option<&Seen>, new: &Seen) -> Option<(bool, String)> {
    let Some(old) = old else { return Some((false, format!("new on the board: {}", new.outcome))) };
    let (ro, rn) = (rank(&old.outcome), rank(&new.outcome));
    let suites = !old.suite.is_empty() && old.suite != new.suite;
    // More failures under new suites (even pass → fail), with no case of
    // the old ones regressed, are the suites' doing.
    let judged = history::judged(&old.outcome) && history::judged(&new.outcome);
    let suites_did = suites && judged && new.regressed.is_empty();
    let worse = if rn != ro {
        rn > ro && !suites_did
    } else if new.failures != old.failures {
        new.failures > old.failures && !suites_did
    } else if !new.regressed.is_empty() || !new.fixed.is_empty() {
        !new.regressed.is_empty()
    } else if new.outcome != old.outcome {
        false
    } else {
        return None;
    };
    let version = if old.version != new.version { format!(" (version {} → {})", old.version, new.version) } else { String::new() };
    let mut text = format!("{} → {}{}, failures {} → {}", old.outcome, new.outcome, version, old.failures, new.failures);
    if !new.regressed.is_empty() {
        text.push_str(&format!("; regressed: {}", few(&new.regressed)));
    }
    if !new.fixed.is_empty() {
        text.push_str(&format!("; fixed: {}", few(&new.fixed)));
    }
    if suites {
        text.push_str("; the suites changed since");
    }
    Some((worse, text))
}

use super::nights::{NIGHTS_KEPT, read_history, write_night};
/// Servers per page of `data/` and of `board/`.
const PAGE: usize = 1000;

/// What the index keeps of a server (the rest is read again, a server at
/// a time, when its page and `board.json` entry are written).
pub struct Row {
    pub name: String,
    pub slug: String,
    pub version: String,
    pub description: String,
    pub outcome: String,
    pub reason: String,
    pub transport: String,
    pub counts: super::Counts,
    pub reached: bool,
    pub judged: String,
    pub thin: bool,
    pub revisions: String,
    pub served: Vec<String>,
    /// The revisions with a failure or error in one of their areas.
    pub failing_revisions: Vec<String>,
    /// Per area (of the site's list): `P`ass, `W`arn, `F`ail, `E`rror, `.`.
    pub grid: String,
    pub text: String,
    /// Run with no sandbox (`--no-sandbox`).
    pub bare: bool,
    area_verdicts: Vec<(String, u8)>,
}

fn clip(s: &str, n: usize) -> String {
    if s.chars().count() <= n { s.to_string() } else { format!("{}…", s.chars().take(n).collect::<String>()) }
}

/// An area's name on the grid: the area across revisions (`tools`).
fn area_name(area: &str) -> &str {
    area.split_once('/').map_or(area, |(_, a)| a)
}

fn row(slug: &str, r: &ServerResult) -> Row {
    let mut area_verdicts: BTreeMap<String, u8> = BTreeMap::new();
    let mut failing_revisions: Vec<String> = Vec::new();
    for a in r.areas.iter() {
        let g = if a.error > 0 {
            b'E'
        } else if a.fail > 0 {
            b'F'
        } else if a.warn > 0 {
            b'W'
        } else {
            b'P'
        };
        if matches!(g, b'E' | b'F') {
            let rev = a.area.split('/').next().unwrap_or("").to_string();
            if !failing_revisions.contains(&rev) {
                failing_revisions.push(rev);
            }
        }
        let worst = |x: u8| match x {
            b'E' => 3,
            b'F' => 2,
            b'W' => 1,
            _ => 0,
        };
        let e = area_verdicts.entry(area_name(&a.area).to_string()).or_insert(g);
        if worst(g) > worst(*e) {
            *e = g;
        }
    }
    let thin = r.outcome == "pass"
        && r.judged.as_ref().is_some_and(|j| (j.tools_listed > 0 && j.tools_called == 0) || j.of > 0 && j.cases * 4 <= j.of);
    Row {
        name: r.name.clone(),
        slug: slug.to_string(),
        version: r.version.clone(),
        description: clip(&r.description, 160),
        outcome: r.outcome.clone(),
        reason: clip(&r.reason, 240),
        transport: r.transport.clone().unwrap_or_default(),
        counts: r.counts.clone().unwrap_or_default(),
        reached: r.reached || history::judged(&r.outcome),
        judged: match (&r.judged, r.reached) {
            (Some(j), true) => format!("{}/{} cases · {}/{} tools called", j.cases, j.of, j.tools_called, j.tools_listed),
            _ => String::new(),
        },
        thin,
        revisions: r.revisions.join(", "),
        served: r.revisions.clone(),
        failing_revisions,
        grid: String::new(),
        text: clip(&format!("{} {} {}", r.name, r.title.clone().unwrap_or_default(), r.description).to_lowercase(), 400),
        bare: r.sandbox.starts_with("none (--no-sandbox)"),
        area_verdicts: area_verdicts.into_iter().collect(),
    }
}

fn data_row(r: &Row) -> Value {
    let c = &r.counts;
    json!([
        r.name,
        r.slug,
        r.version,
        r.outcome,
        r.transport,
        r.reason,
        c.pass,
        c.fail,
        c.warn,
        c.error,
        r.judged,
        u8::from(r.thin),
        r.revisions,
        r.grid,
        r.text,
        r.description,
        u8::from(r.reached)
    ])
}

/// Writes a numbered page file (`DIR/servers-0001.json`), compact.
fn page_file(site: &Path, dir: &str, k: usize, v: &Value) -> std::io::Result<String> {
    let rel = format!("{dir}/servers-{k:04}.json");
    std::fs::write(site.join(&rel), serde_json::to_string(v).unwrap_or_default())?;
    Ok(rel)
}

/// The site's options.
pub struct Options<'a> {
    pub night: Option<&'a str>,
    /// Record this night in the history (not for a shard).
    pub keep_history: bool,
    pub digest: &'a str,
    pub problems: &'a [String],
    /// Exit 1 when a server regressed since the night before.
    pub fail_on_regression: bool,
    /// The site's public address, for badge snippets and `board.json`'s
    /// links (`https://…/`); empty: site-relative.
    pub base_url: &'a str,
}

/// Writes the site: a page and badge per server, the index with its data
/// pages, `board.json` with its pages, and this night's history. Each
/// regression is said on its own line; with `fail_on_regression`, a
/// night with one exits 1.
pub fn write(site: &Path, o: &Options, console: &mut Console) -> u8 {
    // The servers' folders, each result read once here for its row (the
    // servers the registry deleted are off the board).
    let mut rows: Vec<Row> = Vec::new();
    let mut gone: Vec<ServerResult> = Vec::new();
    let mut nights = read_history(site);
    let this =
        o.night.map(String::from).unwrap_or_else(|| mcpcert::certify::certificate::rfc3339(super::now_ms() as u128).replace(':', ""));
    nights.retain(|(n, _)| *n != this);
    let before = nights.last().map(|(_, n)| n.clone());
    let mut now: Night = BTreeMap::new();
    let mut folders: Vec<String> = std::fs::read_dir(site.join("servers"))
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().to_string())
        .collect();
    folders.sort();
    for slug in &folders {
        let Some(r) = last_result(&site.join("servers").join(slug)) else { continue };
        if r.outcome == history::DELETED {
            gone.push(r);
            continue;
        }
        now.insert(r.name.clone(), seen(&r, before.as_ref()));
        rows.push(row(slug, &r));
    }
    rows.sort_by(|a, b| a.name.cmp(&b.name));
    if o.keep_history {
        write_night(site, &this, &now);
        nights.push((this.clone(), now.clone()));
    }
    let skip = nights.len().saturating_sub(NIGHTS_KEPT);
    nights.drain(..skip);
    let mut changes: Vec<(String, bool, String)> = match &before {
        Some(b) => now.iter().filter_map(|(k, n)| change(b.get(k), n).map(|(worse, t)| (k.clone(), worse, t))).collect(),
        None => Vec::new(),
    };
    for (name, _) in before.iter().flat_map(|b| b.iter()).filter(|(k, _)| !now.contains_key(*k)) {
        let why = gone.iter().find(|r| r.name == *name).map_or("not in this night's results".to_string(), |r| r.reason.clone());
        changes.push((name.clone(), false, format!("off the board: {why}")));
    }
    // The grid's columns: every area judged, by name.
    let mut areas: Vec<String> = rows.iter().flat_map(|r| r.area_verdicts.iter().map(|(a, _)| a.clone())).collect();
    areas.sort();
    areas.dedup();
    for r in rows.iter_mut() {
        r.grid = areas.iter().map(|a| r.area_verdicts.iter().find(|(x, _)| x == a).map_or('.', |(_, g)| *g as char)).collect();
        r.area_verdicts = Vec::new();
    }
    // Each server's page, badge and board.json entry, a server at a time.
    let base = if o.base_url.is_empty() || o.base_url.ends_with('/') { o.base_url.to_string() } else { format!("{}/", o.base_url) };
    for dir in ["data", "board"] {
        let _ = std::fs::remove_dir_all(site.join(dir));
        let _ = std::fs::create_dir_all(site.join(dir));
    }
    let mut board_pages: Vec<String> = Vec::new();
    let mut entries: Vec<Value> = Vec::new();
    let mut failed_writes = 0;
    for (i, row) in rows.iter().enumerate() {
        let dir = site.join("servers").join(&row.slug);
        if let Some(r) = last_result(&dir) {
            let _ = std::fs::write(dir.join("badge.svg"), badge(&r));
            let page = super::pages::server_page(&row.slug, &r, &nights, &history::versions(&dir), &base);
            if std::fs::write(dir.join("index.html"), page).is_err() {
                failed_writes += 1;
            }
            entries.push(entry(&row.slug, &r, &base));
        }
        if entries.len() == PAGE || i + 1 == rows.len() {
            let k = board_pages.len() + 1;
            let v = json!({"servers": std::mem::take(&mut entries), "metadata": {"page": k}});
            match page_file(site, "board", k, &v) {
                Ok(rel) => board_pages.push(rel),
                Err(_) => failed_writes += 1,
            }
        }
    }
    let mut data_pages = 0;
    for (k, chunk) in rows.chunks(PAGE).enumerate() {
        let v = json!({"rows": chunk.iter().map(data_row).collect::<Vec<_>>()});
        if page_file(site, "data", k + 1, &v).is_err() {
            failed_writes += 1;
        }
        data_pages += 1;
    }
    let mut by: BTreeMap<&str, usize> = BTreeMap::new();
    for r in &rows {
        *by.entry(r.outcome.as_str()).or_default() += 1;
    }
    let board = json!({
        "format": "mcpcert-board", "format_version": 2, "night": this, "suite_digest": o.digest,
        "mcpcert_version": env!("CARGO_PKG_VERSION"), "base_url": base, "servers_total": rows.len(), "outcomes": by,
        "pages": board_pages, "snapshot_problems": o.problems,
        "changes": changes.iter().map(|(n, worse, t)| {
            let s = now.get(n).cloned().unwrap_or_default();
            json!({"name": n, "regression": worse, "change": t, "regressed": s.regressed, "fixed": s.fixed})
        }).collect::<Vec<_>>(),
        "deleted": gone.iter().map(|r| json!({"name": r.name, "version": r.version, "reason": r.reason})).collect::<Vec<_>>(),
    });
    if let Err(e) = std::fs::write(site.join("board.json"), serde_json::to_string_pretty(&board).unwrap_or_default() + "\n") {
        console.line(format!("error: cannot write {}: {e}", site.join("board.json").display()));
        return crate::EXIT_FAILED;
    }
    let bare: Vec<String> = rows.iter().filter(|r| r.bare).map(|r| r.name.clone()).collect();
    let facts = super::pages::IndexFacts {
        night: &this,
        digest: o.digest,
        total: rows.len(),
        pages: data_pages,
        areas: &areas,
        problems: o.problems,
        changes: &changes,
        bare: &bare,
        charts: super::pages::night_charts(&rows, &areas, &changes, before.as_ref()),
    };
    let first = &rows[..rows.len().min(super::pages::FIRST_ROWS)];
    let _ = std::fs::write(site.join("index.html"), super::pages::index(&facts, first));
    if failed_writes > 0 {
        console.line(format!("error: {failed_writes} file(s) of the site could not be written"));
    }
    // Each regression since the night before, on a line of its own (what a
    // nightly job's log must show even when the site is not read).
    let regressions: Vec<&(String, bool, String)> = changes.iter().filter(|(_, worse, _)| *worse).collect();
    for (name, _, text) in &regressions {
        console.line(format!("regression: {name}: {text}"));
    }
    console.line(format!(
        "board: {} server(s) — {}; {} regression{} since {}; site: {}",
        rows.len(),
        by.iter().map(|(k, v)| format!("{v} {k}")).collect::<Vec<_>>().join(", "),
        regressions.len(),
        if regressions.len() == 1 { "" } else { "s" },
        before.as_ref().map_or("no earlier night".to_string(), |_| "the night before".to_string()),
        site.join("index.html").display()
    ));
    if o.fail_on_regression && !regressions.is_empty() {
        console.line("board: FAILED (--fail-on-regression): a server regressed since the night before");
        return crate::EXIT_FAILED;
    }
    if failed_writes > 0 { crate::EXIT_FAILED } else { EXIT_OK }
}

/// A server in `board.json`: a registry listing entry with the board's
/// own `_meta` key.
fn entry(slug: &str, r: &ServerResult, base: &str) -> Value {
    json!({
        "server": { "name": r.name, "version": r.version },
        "_meta": { META_KEY: {
            "outcome": r.outcome, "reason": r.reason, "counts": r.counts, "revisions": r.revisions,
            "judged": r.judged, "failing": r.failing.iter().map(|f| json!({"case": f.case, "verdict": f.verdict, "reason": f.reason})).collect::<Vec<_>>(),
            "entry": r.what, "transport": r.transport, "sandbox": r.sandbox,
            "checkedAt": mcpcert::certify::certificate::rfc3339(r.checked_at_ms as u128),
            "suiteDigest": r.suite_digest, "mcpcertVersion": r.mcpcert_version,
            "page": format!("{base}servers/{slug}/index.html"), "badge": format!("{base}servers/{slug}/badge.svg"),
            "report": r.report.then(|| format!("{base}servers/{slug}/report/report.html")),
            "comparedWith": r.compared_with, "caseChanges": r.case_changes,
        }}
    })
}

fn seen(r: &ServerResult, before: Option<&Night>) -> Seen {
    let ran = before.and_then(|b| b.get(&r.name)).is_none_or(|s| s.checked != r.checked_at_ms);
    Seen {
        version: r.version.clone(),
        outcome: r.outcome.clone(),
        // Only a run that reached the server counts failures: one that did
        // not has every case an error saying so.
        failures: if history::judged(&r.outcome) { r.counts.as_ref().map_or(0, |c| c.fail + c.error) } else { 0 },
        checked: r.checked_at_ms,
        suite: r.suite_digest.clone(),
        regressed: if ran { history::cases(r, "regression") } else { Vec::new() },
        fixed: if ran { history::cases(r, "fix") } else { Vec::new() },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seen(outcome: &str, failures: u64, suite: &str) -> Seen {
        Seen { version: "1".into(), outcome: outcome.into(), failures, suite: suite.into(), ..Seen::default() }
    }

    #[test]
    fn changes_between_nights_read_truly() {
        // An outcome that changes within its rank is a change, not silence.
        let (worse, text) = change(Some(&seen("unreachable", 0, "s")), &seen("hung", 0, "s")).unwrap();
        assert!(!worse && text.starts_with("unreachable → hung"), "{text}");
        assert_eq!(change(Some(&seen("pass", 0, "s")), &seen("pass", 0, "s")), None);
        // More failures: a regression, unless new suites brought them.
        assert!(change(Some(&seen("fail", 1, "s")), &seen("fail", 2, "s")).unwrap().0);
        let (worse, text) = change(Some(&seen("fail", 1, "s")), &seen("fail", 2, "t")).unwrap();
        assert!(!worse && text.ends_with("the suites changed since"), "{text}");
        let (worse, text) = change(Some(&seen("pass", 0, "s")), &seen("fail", 1, "t")).unwrap();
        assert!(!worse && text.starts_with("pass → fail"), "{text}");
        // A crash is worse whatever the suites.
        assert!(change(Some(&seen("pass", 0, "s")), &seen("crashed", 0, "t")).unwrap().0);
        // A case that regressed under new suites is still a regression.
        let mut n = seen("fail", 2, "t");
        n.regressed = vec!["2026-07-28/tools/x".into()];
        assert!(change(Some(&seen("fail", 1, "s")), &n).unwrap().0);
        // The same failures, one case fixed and another regressed.
        let mut n = seen("fail", 1, "s");
        n.regressed = vec!["a".into()];
        n.fixed = vec!["b".into()];
        let (worse, text) = change(Some(&seen("fail", 1, "s")), &n).unwrap();
        assert!(worse && text.contains("regressed: a") && text.contains("fixed: b"), "{text}");
    }

    /// Strangers' text (a name, a description, a crash's line, a case's
    /// reason) is text on every page: the templates escape it.
    #[test]
    fn the_pages_escape_what_strangers_wrote() {
        let evil = "<script>alert(1)</script>\"'&";
        let r: ServerResult = serde_json::from_value(json!({
            "name": format!("io.github.x/{evil}"), "version": evil, "description": evil, "title": evil,
            "outcome": "fail", "reason": evil, "detail": evil, "entry": evil, "what": evil, "transport": "stdio",
            "sandbox": evil, "counts": {"pass": 1, "fail": 1, "warn": 0, "n/a": 0, "error": 0}, "suite_digest": evil,
            "mcpcert_version": evil, "checked_at_ms": 0, "duration_ms": 0, "report": true, "reached": true,
            "areas": [{"area": format!("2026-07-28/{evil}"), "pass": 1, "fail": 1, "warn": 0, "error": 0}],
            "failing": [{"case": evil, "verdict": "fail", "level": "MUST", "reason": evil, "spec": evil}],
            "case_changes": [{"kind": "regression", "case": evil, "old": "pass", "new": "fail", "note": evil}],
            "compared_with": evil,
        }))
        .unwrap();
        let page = super::super::pages::server_page("x", &r, &[], &[], "");
        let row = row("x", &r);
        let areas = vec![evil.to_string()];
        let facts = super::super::pages::IndexFacts {
            night: evil,
            digest: evil,
            total: 1,
            pages: 1,
            areas: &areas,
            problems: &[evil.to_string()],
            changes: &[(evil.to_string(), true, evil.to_string())],
            bare: &[evil.to_string()],
            charts: super::super::pages::night_charts(std::slice::from_ref(&row), &areas, &[], None),
        };
        let index = super::super::pages::index(&facts, std::slice::from_ref(&row));
        for (what, text) in [("page", &page), ("index", &index)] {
            assert!(!text.contains("<script>alert"), "{what}: {text}");
            assert!(text.contains("&lt;script&gt;alert(1)&lt;/script&gt;"), "{what}");
        }
        // The data pages are JSON, and the script inserts them as text.
        assert!(data_row(&row).to_string().contains("<script>alert(1)</script>"));
        assert!(!include_str!("index.js").contains("innerHTML"));
    }

    #[test]
    fn nights_are_read_in_the_order_they_were_written() {
        let dir = std::env::temp_dir().join(format!("mcpcert-board-history-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("history")).unwrap();
        for (label, at) in [("night10", 2000), ("night9", 1000)] {
            let v = json!({"night": label, "written_at": at, "servers": {"a": {"version": "1", "outcome": "pass", "failures": 0}}});
            std::fs::write(dir.join(format!("history/{label}.json")), v.to_string()).unwrap();
        }
        let nights: Vec<String> = read_history(&dir).into_iter().map(|(n, _)| n).collect();
        assert_eq!(nights, ["night9", "night10"]);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
