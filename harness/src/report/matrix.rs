//! The combined reports of many targets (`mcpcert matrix`, `mcpcert
//! merge`): matrix.json (one entry per target), matrix.html (targets ×
//! cases) and one JUnit document holding every target's suites. Each
//! target's own reports stay in `<out>/<name>/`.

use super::html as page;
use super::{JunitStyle, Outcome, Summary, esc};
use crate::record::{CaseResult, Transport, Verdict};
use serde::{Deserialize, Serialize};
use std::path::Path;

pub const MATRIX_FORMAT: &str = "mcpcert-matrix";
pub const MATRIX_FORMAT_VERSION: u32 = 1;

/// One target of a matrix run, as matrix.json records it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct MatrixEntry {
    pub name: String,
    pub transport: Transport,
    /// The command or URL (as given in the targets file).
    pub target: String,
    /// mcpcert's exit code for this target (None: it was killed).
    pub exit_code: Option<i32>,
    pub duration_ms: u64,
    /// From the target's report.json; None when it wrote none.
    pub summary: Option<Summary>,
    pub passed: bool,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub why: Vec<String>,
    /// Why the target has no report, or was cut short.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub problem: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Matrix {
    pub format: String,
    pub format_version: u32,
    pub mcpcert_version: String,
    /// `K/N` when this is one shard's part of a split run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<String>,
    pub targets: Vec<MatrixEntry>,
}

/// What matrix, merge and diff read back from a target's report.json.
#[derive(Debug, Clone, Deserialize)]
pub struct ReadReport {
    pub transport: Transport,
    /// The target as the run recorded it (secrets masked).
    #[serde(default)]
    pub target: serde_json::Value,
    pub suite_digest: String,
    pub duration_ms: u64,
    pub strict: bool,
    pub summary: Summary,
    #[serde(default)]
    pub outcome: Option<Outcome>,
    pub cases: Vec<CaseResult>,
    /// What the revision probes found (`revision`, `supported`, …).
    #[serde(default)]
    pub revisions: Vec<serde_json::Value>,
}

impl ReadReport {
    /// The revisions the run found served.
    pub fn served(&self) -> Vec<String> {
        self.revisions
            .iter()
            .filter(|r| r.get("supported") == Some(&serde_json::Value::Bool(true)))
            .filter_map(|r| r.get("revision").and_then(|v| v.as_str()).map(String::from))
            .collect()
    }
}

pub fn read_report(path: &Path) -> Result<ReadReport, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    serde_json::from_str(&text).map_err(|e| format!("{}: not an mcpcert run report: {e}", path.display()))
}

pub fn read_matrix(dir: &Path) -> Result<Matrix, String> {
    let path = dir.join("matrix.json");
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let m: Matrix = serde_json::from_str(&text).map_err(|e| format!("{}: not a matrix: {e}", path.display()))?;
    if m.format != MATRIX_FORMAT {
        return Err(format!("{}: format is `{}`, not {MATRIX_FORMAT}", path.display(), m.format));
    }
    Ok(m)
}

/// A target's verdicts as text: `<verdict> <case id>` per line, by id (the
/// form of fixtures/interop/expected/, readable in a code review).
pub fn verdict_list(cases: &[CaseResult]) -> String {
    let mut lines: Vec<(&str, &str)> = cases.iter().map(|c| (c.id.as_str(), c.verdict.as_str())).collect();
    lines.sort();
    let mut out = String::from("# mcpcert verdicts, one case per line\n");
    for (id, v) in lines {
        out.push_str(&format!("{v} {id}\n"));
    }
    out
}

/// The combined JUnit: each target's suites, named `<target>: <area>`; a
/// target without a report is one errored testcase saying why.
pub fn junit(entries: &[(MatrixEntry, Option<ReadReport>)], style: JunitStyle) -> String {
    use super::junit::{Junit, Kind, Status, Suite, TestCase};
    let mut r = Junit { name: "mcpcert matrix".into(), time: None, suites: Vec::new() };
    for (e, rep) in entries {
        match rep {
            Some(rep) => {
                r.suites.extend(super::junit_suites(Some(&e.name), &rep.cases, rep.strict, rep.transport, &rep.suite_digest, style))
            }
            None => {
                let st = Status::of(Kind::Error).message(e.problem.clone().unwrap_or_else(|| "no report".into())).ty("no report");
                let mut tc = TestCase::new(format!("{}: run", e.name), st);
                tc.classname = Some(e.name.clone());
                r.suites.push(Suite { name: format!("{}: run", e.name), properties: Vec::new(), cases: vec![tc] });
            }
        };
    }
    r.to_xml()
}

/// matrix.html: the targets (failed ones first), then one row per case and
/// one column per target, each cell the verdict linking to that target's
/// page. Rows with a failure, error or warning come first, then rows whose
/// verdicts differ between targets, then the rest; rows that are n/a on
/// every target are folded away. A filter by verdict and by text, as on
/// report.html.
pub fn html(entries: &[(MatrixEntry, Option<ReadReport>)], shard: Option<&str>) -> String {
    let mut ids: Vec<&str> = Vec::new();
    for (_, rep) in entries {
        for c in rep.iter().flat_map(|r| &r.cases) {
            if !ids.contains(&c.id.as_str()) {
                ids.push(&c.id);
            }
        }
    }
    let failed = entries.iter().filter(|(e, _)| !e.passed).count();
    let mut out = format!(
        "<!doctype html><html lang=en><head><meta charset=utf-8><title>mcpcert matrix: {} targets, {failed} failed</title><style>{}{}</style></head><body>",
        entries.len(),
        page::STYLE,
        ".m td,.m th{padding:2px 6px;font-size:12.5px;white-space:nowrap}.m th{position:sticky;top:0;background:#fff;vertical-align:bottom}.m td.c{text-align:center}.m a{text-decoration:none}.m tr:hover td{background:#fafafa}.m tr.kind td:first-child{border-left:4px solid var(--line)}.m tr.failing td:first-child{border-left-color:var(--fail)}.m tr.differing td:first-child{border-left-color:var(--warn)}"
    );
    out.push_str(&format!(
        "<h1>mcpcert matrix</h1><p>{} targets{} · {failed} failed · {} cases</p>",
        entries.len(),
        shard.map(|s| format!(" (shard {s})")).unwrap_or_default(),
        ids.len()
    ));
    // Failed targets first, in their order.
    let mut order: Vec<&(MatrixEntry, Option<ReadReport>)> = entries.iter().collect();
    order.sort_by_key(|(e, _)| e.passed);
    out.push_str("<table class=m id=targets><tr><th>target</th><th>transport</th><th>result</th><th>pass</th><th>FAIL</th><th>warn</th><th>n/a</th><th>ERROR</th><th>time</th></tr>");
    for (e, _) in &order {
        let s = e.summary.clone().unwrap_or_default();
        let result = if e.passed {
            "<span class=t-pass>passed</span>".to_string()
        } else {
            let why = if e.why.is_empty() { e.problem.clone().unwrap_or_default() } else { e.why.join("; ") };
            format!("<span class=t-fail>FAILED</span> {}", esc(&why))
        };
        let name = if e.summary.is_some() { format!("<a href=\"{0}/report.html\">{0}</a>", esc(&e.name)) } else { esc(&e.name) };
        out.push_str(&format!(
            "<tr id=\"t-{}\"><td>{name}</td><td>{}</td><td>{result}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            esc(&e.name),
            e.transport,
            s.pass,
            s.fail,
            s.warn,
            s.na,
            s.error,
            page::duration(e.duration_ms)
        ));
    }
    out.push_str("</table>");

    // Each case's row, and what kind of row it is.
    let mut failing = Vec::new();
    let mut differing = Vec::new();
    let mut same = Vec::new();
    let mut all_na = Vec::new();
    for id in &ids {
        // A target that was not reached (its cases "not run") says nothing
        // about a row: its cells are shown, the row is sorted by the rest.
        let verdicts: Vec<Option<Verdict>> = order
            .iter()
            .filter(|(e, _)| e.problem.is_none() && !e.why.iter().any(|w| w == "the target could not be reached"))
            .map(|(_, rep)| {
                rep.as_ref()
                    .and_then(|r| r.cases.iter().find(|c| c.id == *id))
                    .filter(|c| !c.message.starts_with("not run: "))
                    .map(|c| c.verdict)
            })
            .collect();
        let seen: Vec<Verdict> = verdicts.iter().flatten().copied().collect();
        let row = |kind: &str| {
            let mut classes: Vec<&str> = seen.iter().map(|v| page::class(*v)).collect();
            classes.sort();
            classes.dedup();
            let mut r = format!(
                "<tr class=\"kind {kind}\" data-verdicts=\"{}\" data-text=\"{}\"><td><code>{}</code></td>",
                classes.join(" "),
                esc(&id.to_lowercase()),
                esc(id)
            );
            for (e, rep) in &order {
                match rep.as_ref().and_then(|r| r.cases.iter().find(|c| c.id == *id)) {
                    Some(c) => {
                        let cls = page::class(c.verdict);
                        let anchor = page::anchor(c);
                        let tip = c.reason();
                        r.push_str(&format!(
                            "<td class=c><a href=\"{}/report.html#{anchor}\" title=\"{}\"><span class=\"v {cls}\">{}</span></a></td>",
                            esc(&e.name),
                            esc(&tip),
                            c.verdict.word()
                        ));
                    }
                    None => r.push_str("<td class=c>–</td>"),
                }
            }
            r.push_str("</tr>");
            r
        };
        if seen.iter().any(|v| matches!(v, Verdict::Fail | Verdict::Error | Verdict::Warn)) {
            failing.push(row("failing"));
        } else if seen.iter().all(|v| *v == Verdict::NotApplicable) && seen.len() == verdicts.len() {
            all_na.push(row("na-everywhere"));
        } else if seen.windows(2).any(|w| w[0] != w[1]) || seen.len() != verdicts.len() {
            differing.push(row("differing"));
        } else {
            same.push(row("same"));
        }
    }
    let head: String = std::iter::once("<tr><th>case</th>".to_string())
        .chain(order.iter().map(|(e, _)| format!("<th>{}</th>", esc(&e.name))))
        .chain(std::iter::once("</tr>".to_string()))
        .collect();
    out.push_str(&format!(
        "<h2>Cases × targets</h2><p class=meta>{} with a failure, error or warning, {} that differ between targets, {} the same on every target, {} n/a on every target (folded)</p>",
        failing.len(),
        differing.len(),
        same.len(),
        all_na.len()
    ));
    out.push_str("<div id=filters role=search><span>show rows with:</span>");
    for (v, word) in [("fail", "FAIL"), ("error", "ERROR"), ("warn", "warn"), ("pass", "pass"), ("na", "n/a")] {
        out.push_str(&format!("<label><input type=checkbox value={v} checked> <span class=\"t-{v}\">{word}</span></label>"));
    }
    out.push_str("<input type=search id=q placeholder=\"filter by case id…\" aria-label=\"filter by text\"><span id=shown></span></div>");
    out.push_str(&format!("<table class=m id=cases>{head}{}{}{}</table>", failing.concat(), differing.concat(), same.concat()));
    if !all_na.is_empty() {
        out.push_str(&format!(
            "<details class=fold id=na-everywhere><summary>{} cases n/a on every target</summary><table class=m>{head}{}</table></details>",
            all_na.len(),
            all_na.concat()
        ));
    }
    out.push_str(&format!("<script>{MATRIX_SCRIPT}</script></body></html>"));
    out
}

/// The matrix page's filter: a row is shown when one of its verdicts is
/// checked and its case id holds the text; a text match among the folded
/// rows unfolds them.
const MATRIX_SCRIPT: &str = r#"
(function(){
  var boxes=[].slice.call(document.querySelectorAll('#filters input[type=checkbox]'));
  var text=document.getElementById('q');var shown=document.getElementById('shown');
  var rows=[].slice.call(document.querySelectorAll('tr.kind'));
  function apply(){
    var on={};boxes.forEach(function(b){on[b.value]=b.checked;});
    var q=text.value.trim().toLowerCase();var n=0;var folded=false;
    rows.forEach(function(r){
      var ok=r.dataset.verdicts.split(' ').some(function(v){return on[v];})&&(!q||r.dataset.text.indexOf(q)>=0);
      r.classList.toggle('hidden',!ok);if(ok){n++;if(r.closest('details'))folded=true;}
    });
    var d=document.getElementById('na-everywhere');if(d&&q&&folded)d.open=true;
    shown.textContent=n+' of '+rows.length+' cases shown';
  }
  boxes.forEach(function(b){b.addEventListener('change',apply);});
  text.addEventListener('input',apply);apply();
})();
"#;

/// Whether a target's run passed, from its report (or its exit code when
/// it wrote none).
pub fn entry_from(
    name: &str,
    transport: Transport,
    target: &str,
    exit_code: Option<i32>,
    duration_ms: u64,
    rep: Option<&ReadReport>,
    problem: Option<String>,
) -> MatrixEntry {
    let outcome = rep.and_then(|r| r.outcome.clone());
    let passed = exit_code == Some(0) && rep.is_some() && problem.is_none();
    let mut why = outcome.map(|o| o.why).unwrap_or_default();
    if !passed && why.is_empty() && problem.is_none() {
        why.push(format!("mcpcert exited {}", exit_code.map_or("by a signal".into(), |c| c.to_string())));
    }
    let recorded = rep.and_then(|r| r.target.get("command").or_else(|| r.target.get("url"))).and_then(|v| v.as_str());
    MatrixEntry {
        name: name.to_string(),
        transport,
        target: recorded.unwrap_or(target).to_string(),
        exit_code,
        duration_ms,
        summary: rep.map(|r| r.summary.clone()),
        passed,
        why,
        problem,
    }
}

/// Every verdict of a report, for `diff`.
pub fn verdicts(rep: &ReadReport) -> Vec<(String, Verdict)> {
    rep.cases.iter().map(|c| (c.id.clone(), c.verdict)).collect()
}
