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

fn esc(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;").replace('\'', "&#39;")
}

/// Better outcomes first: how a change between nights reads.
fn rank(outcome: &str) -> u8 {
    match outcome {
        "pass" => 0,
        "fail" => 1,
        "protected" | "needs-secret" | "needs-input" | "cannot-run" => 2,
        _ => 3,
    }
}

fn color(outcome: &str) -> &'static str {
    match outcome {
        "pass" => "#2e7d32",
        "fail" => "#c62828",
        "protected" | "needs-secret" | "needs-input" | "cannot-run" => "#6d6d6d",
        _ => "#b26a00",
    }
}

/// The badge: "mcpcert | passes", "3 failures", "crashed", ….
pub fn badge(r: &ServerResult) -> String {
    let c = r.counts.clone().unwrap_or_default();
    let value = match r.outcome.as_str() {
        "pass" if c.warn > 0 => format!("passes ({} warnings)", c.warn),
        "pass" => "passes".to_string(),
        "fail" => format!("{} failure{}", c.fail + c.error, if c.fail + c.error == 1 { "" } else { "s" }),
        o => o.replace('-', " "),
    };
    let label = "MCP conformance";
    let w = |s: &str| 10 + 7 * s.chars().count();
    let (lw, vw) = (w(label), w(&value));
    format!(
        r##"<svg xmlns="http://www.w3.org/2000/svg" width="{}" height="20" role="img" aria-label="{label}: {v}"><title>{label}: {v}</title><rect width="{lw}" height="20" fill="#555"/><rect x="{lw}" width="{vw}" height="20" fill="{}"/><g fill="#fff" text-anchor="middle" font-family="Verdana,DejaVu Sans,sans-serif" font-size="11"><text x="{}" y="14">{label}</text><text x="{}" y="14">{v}</text></g></svg>
"##,
        lw + vw,
        color(&r.outcome),
        lw / 2,
        lw + vw / 2,
        v = esc(&value),
    )
}

/// Every result in `site/servers`, by name.
fn results(site: &Path) -> Vec<(String, ServerResult)> {
    let mut out: Vec<(String, ServerResult)> = std::fs::read_dir(site.join("servers"))
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| last_result(&e.path()).map(|r| (e.file_name().to_string_lossy().to_string(), r)))
        .collect();
    out.sort_by(|a, b| a.1.name.cmp(&b.1.name));
    out
}

/// One server in one night of history.
#[derive(Debug, Clone, Default, PartialEq)]
struct Seen {
    version: String,
    outcome: String,
    failures: u64,
    /// When its result was checked: a server run again since the night
    /// before has a newer one.
    checked: u64,
    /// The suites that judged it (a change of suites is no regression of
    /// the server's).
    suite: String,
    /// The cases that regressed and were fixed in that run (only in the
    /// night it ran).
    regressed: Vec<String>,
    fixed: Vec<String>,
}

/// One night of history: name → what was seen of it.
type Night = BTreeMap<String, Seen>;

fn night_of(rs: &[(String, ServerResult)], before: Option<&Night>) -> Night {
    rs.iter()
        .map(|(_, r)| {
            let ran = before.and_then(|b| b.get(&r.name)).is_none_or(|s| s.checked != r.checked_at_ms);
            let seen = Seen {
                version: r.version.clone(),
                outcome: r.outcome.clone(),
                // Only a run that reached the server counts failures: one
                // that did not has every case an error saying so.
                failures: if history::judged(&r.outcome) { r.counts.as_ref().map_or(0, |c| c.fail + c.error) } else { 0 },
                checked: r.checked_at_ms,
                suite: r.suite_digest.clone(),
                regressed: if ran { history::cases(r, "regression") } else { Vec::new() },
                fixed: if ran { history::cases(r, "fix") } else { Vec::new() },
            };
            (r.name.clone(), seen)
        })
        .collect()
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array().into_iter().flatten().filter_map(|x| x.as_str().map(String::from)).collect()
}

fn read_history(site: &Path) -> Vec<(String, Night)> {
    // In the order they were written (labels need not sort).
    let mut nights: Vec<(u64, String, Night)> = std::fs::read_dir(site.join("history"))
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().strip_suffix(".json")?.to_string();
            let v: Value = serde_json::from_str(&std::fs::read_to_string(e.path()).ok()?).ok()?;
            let n: Night = v["servers"]
                .as_object()?
                .iter()
                .map(|(k, s)| {
                    let f = |x: &str| s[x].as_str().unwrap_or("").to_string();
                    let seen = Seen {
                        version: f("version"),
                        outcome: f("outcome"),
                        failures: s["failures"].as_u64().unwrap_or(0),
                        checked: s["checked"].as_u64().unwrap_or(0),
                        suite: f("suite"),
                        regressed: strings(&s["regressed"]),
                        fixed: strings(&s["fixed"]),
                    };
                    (k.clone(), seen)
                })
                .collect();
            let name = v["night"].as_str().map_or(name, String::from);
            Some((v["written_at"].as_u64().unwrap_or(0), name, n))
        })
        .collect();
    nights.sort_by(|a, b| (a.0, &a.1).cmp(&(b.0, &b.1)));
    nights.into_iter().map(|(_, n, s)| (n, s)).collect()
}

/// A list of cases for a line: the first few, then how many more.
fn few(cases: &[String]) -> String {
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

/// Write the site. `night`: the label of this night's history entry
/// (default: the UTC time); `keep_history`: record it (not for a shard).
/// Writes the site; with `fail_on_regression`, a night with a regression
/// exits 1 (each is said on its own line either way).
pub fn write(
    site: &Path,
    night: Option<&str>,
    keep_history: bool,
    digest: &str,
    problems: &[String],
    fail_on_regression: bool,
    console: &mut Console,
) -> u8 {
    // The servers the registry deleted are off the board.
    let (gone, rs): (Vec<_>, Vec<_>) = results(site).into_iter().partition(|(_, r)| r.outcome == history::DELETED);
    let mut nights = read_history(site);
    let this = night.map(String::from).unwrap_or_else(|| mcpcert::certify::certificate::rfc3339(super::now_ms() as u128).replace(':', ""));
    nights.retain(|(n, _)| *n != this);
    let before = nights.last().map(|(_, n)| n.clone());
    let now = night_of(&rs, before.as_ref());
    if keep_history {
        let _ = std::fs::create_dir_all(site.join("history"));
        let servers: serde_json::Map<String, Value> = now
            .iter()
            .map(|(k, s)| {
                let mut v =
                    json!({"version": s.version, "outcome": s.outcome, "failures": s.failures, "checked": s.checked, "suite": s.suite});
                if !s.regressed.is_empty() {
                    v["regressed"] = json!(s.regressed);
                }
                if !s.fixed.is_empty() {
                    v["fixed"] = json!(s.fixed);
                }
                (k.clone(), v)
            })
            .collect();
        let night = json!({ "night": this, "written_at": super::now_ms(), "servers": servers });
        let _ = std::fs::write(site.join(format!("history/{}.json", super::share::folder(&this))), night.to_string());
        nights.push((this.clone(), now.clone()));
    }
    let mut changes: Vec<(String, bool, String)> = match &before {
        Some(b) => now.iter().filter_map(|(k, n)| change(b.get(k), n).map(|(worse, t)| (k.clone(), worse, t))).collect(),
        None => Vec::new(),
    };
    for (name, _) in before.iter().flat_map(|b| b.iter()).filter(|(k, _)| !now.contains_key(*k)) {
        let why = gone.iter().find(|(_, r)| r.name == *name).map_or("not in this night's results".to_string(), |(_, r)| r.reason.clone());
        changes.push((name.clone(), false, format!("off the board: {why}")));
    }
    for (slug, r) in &rs {
        let dir = site.join("servers").join(slug);
        let _ = std::fs::write(dir.join("badge.svg"), badge(r));
        let _ = std::fs::write(dir.join("index.html"), server_page(slug, r, &nights, &history::versions(&dir)));
    }
    let entries: Vec<Value> = rs
        .iter()
        .map(|(slug, r)| {
            json!({
                "server": { "name": r.name, "version": r.version },
                "_meta": { META_KEY: {
                    "outcome": r.outcome, "reason": r.reason, "counts": r.counts, "revisions": r.revisions,
                    "entry": r.what, "transport": r.transport, "sandbox": r.sandbox,
                    "checkedAt": mcpcert::certify::certificate::rfc3339(r.checked_at_ms as u128),
                    "suiteDigest": r.suite_digest, "mcpcertVersion": r.mcpcert_version,
                    "page": format!("servers/{slug}/index.html"), "badge": format!("servers/{slug}/badge.svg"),
                    "report": r.report.then(|| format!("servers/{slug}/report/report.html")),
                    "comparedWith": r.compared_with, "caseChanges": r.case_changes,
                }}
            })
        })
        .collect();
    let board = json!({
        "format": "mcpcert-board", "format_version": 1, "night": this, "suite_digest": digest,
        "mcpcert_version": env!("CARGO_PKG_VERSION"), "servers": entries, "snapshot_problems": problems,
        "changes": changes.iter().map(|(n, worse, t)| {
            let s = now.get(n).cloned().unwrap_or_default();
            json!({"name": n, "regression": worse, "change": t, "regressed": s.regressed, "fixed": s.fixed})
        }).collect::<Vec<_>>(),
        "deleted": gone.iter().map(|(_, r)| json!({"name": r.name, "version": r.version, "reason": r.reason})).collect::<Vec<_>>(),
    });
    if let Err(e) = std::fs::write(site.join("board.json"), serde_json::to_string_pretty(&board).unwrap_or_default() + "\n") {
        console.line(format!("error: cannot write {}: {e}", site.join("board.json").display()));
        return crate::EXIT_FAILED;
    }
    let _ = std::fs::write(site.join("index.html"), index(&rs, &this, digest, &changes, problems));
    let mut by: BTreeMap<&str, usize> = BTreeMap::new();
    for (_, r) in &rs {
        *by.entry(r.outcome.as_str()).or_default() += 1;
    }
    // Each regression since the night before, on a line of its own (what a
    // nightly job's log must show even when the site is not read).
    let regressions: Vec<&(String, bool, String)> = changes.iter().filter(|(_, worse, _)| *worse).collect();
    for (name, _, text) in &regressions {
        console.line(format!("regression: {name}: {text}"));
    }
    console.line(format!(
        "board: {} server(s) — {}; {} regression{} since {}; site: {}",
        rs.len(),
        by.iter().map(|(k, v)| format!("{v} {k}")).collect::<Vec<_>>().join(", "),
        regressions.len(),
        if regressions.len() == 1 { "" } else { "s" },
        before.as_ref().map_or("no earlier night".to_string(), |_| "the night before".to_string()),
        site.join("index.html").display()
    ));
    if fail_on_regression && !regressions.is_empty() {
        console.line("board: FAILED (--fail-on-regression): a server regressed since the night before");
        return crate::EXIT_FAILED;
    }
    EXIT_OK
}

const STYLE: &str = "body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#222}table{border-collapse:collapse}td,th{padding:3px 8px;border-bottom:1px solid #ddd;text-align:left;vertical-align:top}.o{color:#fff;padding:1px 6px;border-radius:3px;white-space:nowrap}.small{color:#666;font-size:12px}input,select{margin-right:1em}";

fn outcome_cell(o: &str) -> String {
    format!("<span class=\"o\" style=\"background:{}\">{}</span>", color(o), esc(o))
}

fn index(rs: &[(String, ServerResult)], night: &str, digest: &str, changes: &[(String, bool, String)], problems: &[String]) -> String {
    let mut h = format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>MCP conformance board</title><style>{STYLE}</style></head><body>\n<h1>MCP conformance board</h1>\n<p class=\"small\">night {} · {} servers · mcpcert {} · suites <code>{}</code> · each server run by <code>mcpcert run --server-json</code>; <a href=\"board.json\">board.json</a></p>\n",
        esc(night),
        rs.len(),
        env!("CARGO_PKG_VERSION"),
        esc(digest)
    );
    let bare: Vec<&str> = rs.iter().filter(|(_, r)| r.sandbox.starts_with("none (--no-sandbox)")).map(|(_, r)| r.name.as_str()).collect();
    if !bare.is_empty() {
        h.push_str(&format!(
            "<p id=\"unsandboxed\"><b>{} server(s) ran with no sandbox</b> (<code>--no-sandbox</code>): they saw the files, network and environment of the machine that ran them: {}</p>\n",
            bare.len(),
            esc(&bare.join(", "))
        ));
    }
    if !changes.is_empty() {
        h.push_str("<h2>Since the night before</h2><ul id=\"changes\">");
        for (name, worse, t) in changes {
            h.push_str(&format!("<li>{} <b>{}</b>: {}</li>", if *worse { "regression" } else { "change" }, esc(name), esc(t)));
        }
        h.push_str("</ul>\n");
    }
    if !problems.is_empty() {
        h.push_str("<h2>Snapshot entries not read</h2><ul>");
        for p in problems {
            h.push_str(&format!("<li>{}</li>", esc(p)));
        }
        h.push_str("</ul>\n");
    }
    let mut outcomes: Vec<&str> = rs.iter().map(|(_, r)| r.outcome.as_str()).collect();
    outcomes.sort_by_key(|o| (rank(o), o.to_string()));
    outcomes.dedup();
    h.push_str("<p><input id=\"q\" type=\"search\" placeholder=\"search servers\"><select id=\"outcome\"><option value=\"\">every outcome</option>");
    for o in outcomes {
        h.push_str(&format!("<option>{}</option>", esc(o)));
    }
    h.push_str("</select><select id=\"transport\"><option value=\"\">every transport</option><option>stdio</option><option>http</option></select> <span id=\"shown\"></span></p>\n");
    h.push_str("<table id=\"servers\"><thead><tr><th>server</th><th>version</th><th>outcome</th><th>pass</th><th>fail</th><th>warn</th><th>error</th><th>revisions served</th><th>areas failing</th><th>entry</th><th>badge</th></tr></thead><tbody>\n");
    for (slug, r) in rs {
        // Counts only where the run reached the server: a run that could
        // not start has every case an error saying so.
        let judged = matches!(r.outcome.as_str(), "pass" | "fail");
        let n = |x: u64| if judged { x.to_string() } else { String::new() };
        let c = r.counts.clone().unwrap_or_default();
        let mut failing: Vec<String> = r.areas.iter().filter(|a| a.fail + a.error > 0).map(|a| esc(&a.area)).collect();
        if failing.len() > 6 {
            let more = failing.len() - 5;
            failing.truncate(5);
            failing.push(format!("and {more} more"));
        }
        h.push_str(&format!(
            "<tr data-outcome=\"{}\" data-transport=\"{}\" data-text=\"{}\"><td><a href=\"servers/{slug}/index.html\">{}</a><div class=\"small\">{}</div></td><td>{}</td><td>{}<div class=\"small\">{}</div></td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"small\">{}</td><td><img alt=\"badge\" src=\"servers/{slug}/badge.svg\"></td></tr>\n",
            esc(&r.outcome),
            esc(r.transport.as_deref().unwrap_or("")),
            esc(&format!("{} {} {}", r.name, r.title.clone().unwrap_or_default(), r.description).to_lowercase()),
            esc(&r.name),
            esc(&r.description),
            esc(&r.version),
            outcome_cell(&r.outcome),
            esc(&r.reason),
            n(c.pass),
            n(c.fail),
            n(c.warn),
            n(c.error),
            esc(&r.revisions.join(", ")),
            failing.join(", "),
            esc(r.what.as_deref().unwrap_or("")),
        ));
    }
    h.push_str("</tbody></table>\n<script>\n(function(){var q=document.getElementById('q'),o=document.getElementById('outcome'),t=document.getElementById('transport'),s=document.getElementById('shown');\nfunction f(){var n=0,rows=document.querySelectorAll('#servers tbody tr');rows.forEach(function(r){var ok=(!o.value||r.dataset.outcome===o.value)&&(!t.value||r.dataset.transport===t.value)&&(!q.value||r.dataset.text.indexOf(q.value.toLowerCase())>=0);r.style.display=ok?'':'none';if(ok)n++;});s.textContent=n+' of '+rows.length+' shown';}\n[q,o,t].forEach(function(e){e.addEventListener('input',f);});f();})();\n</script>\n</body></html>\n");
    h
}

fn server_page(folder: &str, r: &ServerResult, nights: &[(String, Night)], versions: &[(String, ServerResult, bool)]) -> String {
    let c = r.counts.clone().unwrap_or_default();
    let mut h = format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>{} — MCP conformance</title><style>{STYLE}</style></head><body>\n<p><a href=\"../../index.html\">← the board</a></p>\n<h1>{}</h1><p>{}</p>\n<p><img alt=\"badge\" src=\"badge.svg\"> {}</p>\n<table>",
        esc(&r.name),
        esc(&r.name),
        esc(&r.description),
        outcome_cell(&r.outcome)
    );
    let checked = mcpcert::certify::certificate::rfc3339(r.checked_at_ms as u128);
    let rows = [
        ("version", esc(&r.version)),
        ("outcome", format!("{} {}", esc(&r.outcome), esc(&r.reason))),
        ("entry run", esc(&format!("{} {}", r.entry.clone().unwrap_or_default(), r.what.clone().unwrap_or_default()))),
        ("transport", esc(r.transport.as_deref().unwrap_or("—"))),
        ("sandbox", esc(&r.sandbox)),
        ("revisions served", esc(&r.revisions.join(", "))),
        ("verdicts", format!("{} pass, {} fail, {} warn, {} n/a, {} error", c.pass, c.fail, c.warn, c.na, c.error)),
        (
            "checked",
            format!(
                "{} ({:.1} s) by mcpcert {}, suites <code>{}</code>",
                esc(&checked),
                r.duration_ms as f64 / 1000.0,
                esc(&r.mcpcert_version),
                esc(&r.suite_digest)
            ),
        ),
        (
            "report",
            if r.report {
                "<a href=\"report/report.html\">report.html</a> · <a href=\"report/report.json\">report.json</a> · <a href=\"report/junit.xml\">junit.xml</a>".into()
            } else {
                "none: the run did not start".into()
            },
        ),
        ("server.json", "<a href=\"server.json\">as the snapshot has it</a>".into()),
    ];
    for (k, v) in rows {
        h.push_str(&format!("<tr><th>{k}</th><td>{v}</td></tr>"));
    }
    h.push_str("</table>\n");
    if !r.detail.is_empty() {
        h.push_str(&format!("<h2>Detail</h2><pre>{}</pre>\n", esc(&r.detail)));
    }
    if !r.areas.is_empty() {
        h.push_str("<h2>Areas</h2><table><tr><th>area</th><th>pass</th><th>fail</th><th>warn</th><th>error</th></tr>");
        for a in &r.areas {
            h.push_str(&format!(
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                esc(&a.area),
                a.pass,
                a.fail,
                a.warn,
                a.error
            ));
        }
        h.push_str("</table>\n");
    }
    if let Some(w) = &r.compared_with {
        h.push_str(&format!(
            "<h2>Since the previous run</h2><p>compared with {} (as <code>mcpcert diff</code> compares two reports)",
            esc(w)
        ));
        if !history::judged(&r.outcome) {
            h.push_str(": this run did not reach the server, so no case is compared</p>\n");
        } else if r.case_changes.is_empty() {
            h.push_str(": no case changed its verdict, or the previous run did not reach the server</p>\n");
        } else {
            h.push_str("</p><table id=\"case-changes\"><tr><th>change</th><th>case</th><th>before</th><th>now</th><th>note</th></tr>");
            for c in &r.case_changes {
                h.push_str(&format!(
                    "<tr><td>{}</td><td><code>{}</code></td><td>{}</td><td>{}</td><td class=\"small\">{}</td></tr>",
                    esc(&c.kind.replace('_', " ")),
                    esc(&c.case),
                    esc(&c.old),
                    esc(&c.new),
                    esc(c.note.as_deref().unwrap_or(""))
                ));
            }
            h.push_str("</table>\n");
        }
    }
    h.push_str(
        "<h2>History</h2><table id=\"history\"><tr><th>night</th><th>version</th><th>outcome</th><th>failures</th><th>cases</th></tr>",
    );
    for (n, night) in nights.iter().rev() {
        if let Some(s) = night.get(&r.name) {
            let mut cases = Vec::new();
            if !s.regressed.is_empty() {
                cases.push(format!("regressed: {}", few(&s.regressed)));
            }
            if !s.fixed.is_empty() {
                cases.push(format!("fixed: {}", few(&s.fixed)));
            }
            h.push_str(&format!(
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"small\">{}</td></tr>",
                esc(n),
                esc(&s.version),
                outcome_cell(&s.outcome),
                s.failures,
                esc(&cases.join("; "))
            ));
        }
    }
    h.push_str("</table>\n<h2>Versions checked</h2><table id=\"versions\"><tr><th>version</th><th>outcome</th><th>verdicts</th><th>checked</th></tr>");
    for (folder, v, list) in versions {
        let c = v.counts.clone().unwrap_or_default();
        let counts = if history::judged(&v.outcome) {
            format!("{} pass, {} fail, {} warn, {} n/a, {} error", c.pass, c.fail, c.warn, c.na, c.error)
        } else {
            esc(&v.reason)
        };
        let link = if *list { format!(" · <a href=\"versions/{}/verdicts.txt\">verdict list</a>", esc(folder)) } else { String::new() };
        h.push_str(&format!(
            "<tr><td>{}</td><td>{}</td><td>{counts}{link}</td><td>{}</td></tr>",
            esc(&v.version),
            outcome_cell(&v.outcome),
            esc(&mcpcert::certify::certificate::rfc3339(v.checked_at_ms as u128))
        ));
    }
    h.push_str(&format!(
        "</table>\n<h2>Badge</h2><pre>![MCP conformance]({}/badge.svg)</pre>\n</body></html>\n",
        esc(&format!("servers/{folder}"))
    ));
    h
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
