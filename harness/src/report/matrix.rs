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
    use quick_junit::{NonSuccessKind, Report, TestCase, TestCaseStatus, TestSuite};
    let mut r = Report::new("mcpcert matrix");
    for (e, rep) in entries {
        match rep {
            Some(rep) => {
                r.add_test_suites(super::junit_suites(Some(&e.name), &rep.cases, rep.strict, rep.transport, &rep.suite_digest, style))
            }
            None => {
                let mut s = TestSuite::new(format!("{}: run", e.name));
                let mut st = TestCaseStatus::non_success(NonSuccessKind::Error);
                st.set_message(e.problem.clone().unwrap_or_else(|| "no report".into())).set_type("no report");
                let mut tc = TestCase::new(format!("{}: run", e.name), st);
                tc.set_classname(e.name.clone());
                s.add_test_case(tc);
                r.add_test_suite(s)
            }
        };
    }
    super::junit_string(r)
}

/// matrix.html: one row per case (in the order the reports give them), one
/// column per target, each cell the verdict linking to that target's page.
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
        ".m td,.m th{padding:2px 6px;font-size:12.5px;white-space:nowrap}.m th{position:sticky;top:0;background:#fff;vertical-align:bottom}.m td.c{text-align:center}.m a{text-decoration:none}.m tr:hover td{background:#fafafa}"
    );
    out.push_str(&format!(
        "<h1>mcpcert matrix</h1><p>{} targets{} · {failed} failed · {} cases</p>",
        entries.len(),
        shard.map(|s| format!(" (shard {s})")).unwrap_or_default(),
        ids.len()
    ));
    out.push_str("<table class=m><tr><th>target</th><th>transport</th><th>result</th><th>pass</th><th>FAIL</th><th>warn</th><th>n/a</th><th>ERROR</th><th>time</th></tr>");
    for (e, _) in entries {
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
    out.push_str("</table><h2>Cases × targets</h2><table class=m><tr><th>case</th>");
    for (e, _) in entries {
        out.push_str(&format!("<th>{}</th>", esc(&e.name)));
    }
    out.push_str("</tr>");
    for id in &ids {
        out.push_str(&format!("<tr><td><code>{}</code></td>", esc(id)));
        for (e, rep) in entries {
            match rep.as_ref().and_then(|r| r.cases.iter().find(|c| c.id == *id)) {
                Some(c) => {
                    let cls = page::class(c.verdict);
                    let anchor = page::anchor(c);
                    let tip = c.message.lines().next().unwrap_or("");
                    out.push_str(&format!(
                        "<td class=c><a href=\"{}/report.html#{anchor}\" title=\"{}\"><span class=\"v {cls}\">{}</span></a></td>",
                        esc(&e.name),
                        esc(tip),
                        c.verdict.word()
                    ));
                }
                None => out.push_str("<td class=c>–</td>"),
            }
        }
        out.push_str("</tr>");
    }
    out.push_str("</table></body></html>");
    out
}

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
