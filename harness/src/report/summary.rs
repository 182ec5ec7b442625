//! `mcpcert summary REPORT.json`: a Markdown summary of a run, built from
//! its JSON report (never from the console): the outcome and why, the
//! counts, the cases that fail the run with their one-line reasons (root
//! causes first), the warnings, and the certificate. The GitHub Action
//! writes it to the job's step summary.

use super::roots::RootCause;
use super::{Outcome, Summary};
use crate::record::{CaseResult, Verdict};
use serde::Deserialize;
use serde_json::Value;

/// What the summary reads of a report.
#[derive(Deserialize)]
struct View {
    format: String,
    summary: Summary,
    outcome: Outcome,
    strict: bool,
    #[serde(default)]
    target_problem: Option<String>,
    #[serde(default)]
    roots: Vec<RootCause>,
    #[serde(default)]
    notices: Vec<String>,
    #[serde(default)]
    requirements: Option<Value>,
    cases: Vec<CaseResult>,
}

/// How many lines the lists may take (a step summary is read, not searched).
const MAX_LISTED: usize = 50;

/// Markdown escaping for text inside a list item or table cell.
fn md(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if matches!(c, '\\' | '`' | '*' | '_' | '[' | ']' | '<' | '>' | '|' | '#') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// The one-line reason, whole (a finding names what broke), clipped only
/// when a server's own text makes it run on.
fn first_line(s: &str) -> String {
    crate::record::clip(&crate::record::reason(s), 1000)
}

/// The line of one case: its id, verdict and level, and why.
fn item(c: &CaseResult) -> String {
    format!("`{}` ({}, {}): {}", c.id, c.verdict.as_str(), c.level.as_str(), md(&first_line(&c.message)))
}

/// The summary of the report `json`; `certificate` is the
/// certificate.json beside it, if there is one.
pub fn markdown(json: &str, certificate: Option<&Value>) -> Result<String, String> {
    let v: View = serde_json::from_str(json).map_err(|e| format!("not an mcpcert run report: {e}"))?;
    if v.format != "mcpcert-run-report" {
        return Err(format!("format is `{}`, not an mcpcert run report", v.format));
    }
    let mut out = String::from("### mcpcert\n\n");
    if v.outcome.passed {
        out.push_str("**Passed**: no failure counts against this run.\n\n");
    } else {
        out.push_str(&format!("**FAILED**: {}.\n\n", md(&v.outcome.why.join("; "))));
    }
    for n in &v.notices {
        out.push_str(&format!("> **Notice**: {}\n\n", md(n)));
    }
    if let Some(p) = &v.target_problem {
        // Whole: its later lines say what to do (the hint, the quoted output).
        let fence = if p.contains("```") { "````" } else { "```" };
        out.push_str(&format!("{fence}text\n{}\n{fence}\n\n", p.trim_end()));
    }
    let s = &v.summary;
    out.push_str("| cases | pass | fail | warn | n/a | error |\n|---:|---:|---:|---:|---:|---:|\n");
    out.push_str(&format!("| {} | {} | {} | {} | {} | {} |\n\n", s.total, s.pass, s.fail, s.warn, s.na, s.error));

    // The cases that fail the run: each cause once, its cases beneath.
    // The server's failures: not the cases an interrupt stopped or kept
    // from running (the outcome says the run was interrupted).
    let stopped = |c: &CaseResult| c.message.starts_with("not run: ") || c.message.starts_with("interrupted (");
    let failing: Vec<&CaseResult> =
        v.cases.iter().filter(|c| c.counts_as_failure(v.strict) && !c.stale_baseline() && !stopped(c)).collect();
    let not_run = v.cases.iter().filter(|c| stopped(c)).count();
    if !failing.is_empty() {
        out.push_str(&format!("**Failing cases** ({}):\n\n", failing.len()));
        let mut lines: Vec<String> = Vec::new();
        let mut shown: Vec<&str> = Vec::new();
        for g in &v.roots {
            let members: Vec<&&CaseResult> = failing.iter().filter(|c| g.all().any(|x| x == &c.id)).collect();
            if members.is_empty() {
                continue;
            }
            lines.push(format!("- root cause ({} cases): {}", g.all().count(), md(g.heading())));
            for c in &members {
                let via = if g.frames_of.contains(&c.id) { " (reports the frames of these cases)" } else { "" };
                lines.push(format!("  - {}{via}", item(c)));
                shown.push(&c.id);
            }
            let rest: Vec<String> = v
                .cases
                .iter()
                .filter(|c| g.all().any(|x| x == &c.id) && !members.iter().any(|m| m.id == c.id))
                .map(|c| format!("`{}` ({})", c.id, c.verdict.as_str()))
                .collect();
            if !rest.is_empty() {
                lines.push(format!("  - and, not failing the run: {}", rest.join(", ")));
            }
        }
        for c in failing.iter().filter(|c| !shown.contains(&c.id.as_str())) {
            lines.push(format!("- {}", item(c)));
        }
        let more = lines.len().saturating_sub(MAX_LISTED);
        lines.truncate(MAX_LISTED);
        out.push_str(&lines.join("\n"));
        out.push('\n');
        if more > 0 {
            out.push_str(&format!("- … and {more} more lines: every case is in report.json and report.html\n"));
        }
        out.push('\n');
    }
    if not_run > 0 {
        out.push_str(&format!("{not_run} cases were not run or were stopped (each is `error` in the reports, with the reason).\n\n"));
    }
    let stale: Vec<&CaseResult> = v.cases.iter().filter(|c| c.stale_baseline()).collect();
    if !stale.is_empty() {
        out.push_str(&format!("**Stale baseline entries** ({}; these cases pass now, remove the entries):\n\n", stale.len()));
        for c in &stale {
            out.push_str(&format!("- `{}`\n", c.id));
        }
        out.push('\n');
    }
    if !v.strict {
        let warns: Vec<&CaseResult> = v.cases.iter().filter(|c| c.verdict == Verdict::Warn && !c.expected_failure()).collect();
        if !warns.is_empty() {
            out.push_str(&format!(
                "**Warnings** ({}; SHOULD-level rules not met, they do not fail the run unless `--strict`):\n\n",
                warns.len()
            ));
            for c in warns.iter().take(MAX_LISTED) {
                out.push_str(&format!("- {}\n", item(c)));
            }
            if warns.len() > MAX_LISTED {
                out.push_str(&format!("- … and {} more in report.json\n", warns.len() - MAX_LISTED));
            }
            out.push('\n');
        }
    }
    let expected = v.cases.iter().filter(|c| c.expected_failure()).count();
    if expected > 0 {
        out.push_str(&format!("{expected} expected failure{} (in the baseline).\n\n", if expected == 1 { "" } else { "s" }));
    }
    if let Some(q) = &v.requirements {
        let rev = q.get("revision").and_then(|r| r.as_str()).unwrap_or("?");
        let n = |k: &str| q.get(k).and_then(|x| x.as_u64()).unwrap_or(0);
        out.push_str(&format!(
            "Requirement set {rev}: {} of {} scored scenarios pass ({} apply to this target).\n\n",
            n("passed"),
            n("scored"),
            n("applicable")
        ));
        match certificate {
            Some(c) => {
                let f = |k: &str| c.get(k).map(|x| x.as_str().map(str::to_owned).unwrap_or_else(|| x.to_string())).unwrap_or_default();
                out.push_str(&format!("certificate: {} for MCP {}\n", md(&f("status")), md(&f("revision"))));
            }
            None => out.push_str("no certificate: the requirement set was not met by this run\n"),
        }
    }
    Ok(out)
}
