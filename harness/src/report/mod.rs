//! Reports: JUnit XML (CI), a versioned JSON run report, a readable HTML
//! page, and the console summary.

pub mod console;

use crate::record::{BaselineOutcome, BaselineSummary, CaseResult, Exchange, RequirementsReport, RevisionInfo, Transport, Verdict, clip};
use serde::Serialize;
use serde_json::Value;
use std::path::Path;

pub const JSON_FORMAT_VERSION: u32 = 1;

#[derive(Debug, Clone, Serialize, Default)]
pub struct Summary {
    pub total: usize,
    pub pass: usize,
    pub fail: usize,
    pub warn: usize,
    #[serde(rename = "n/a")]
    pub na: usize,
    pub error: usize,
}

impl Summary {
    pub fn of(results: &[CaseResult]) -> Summary {
        let mut s = Summary { total: results.len(), ..Default::default() };
        for r in results {
            match r.verdict {
                Verdict::Pass => s.pass += 1,
                Verdict::Fail => s.fail += 1,
                Verdict::Warn => s.warn += 1,
                Verdict::NotApplicable => s.na += 1,
                Verdict::Error => s.error += 1,
            }
        }
        s
    }
}

/// Everything a report needs about the run.
#[derive(Debug, Clone, Serialize)]
pub struct RunReport {
    pub format: &'static str,
    pub format_version: u32,
    pub mcpcert_version: &'static str,
    pub suite_digest: String,
    pub started_at_unix_ms: u128,
    pub duration_ms: u64,
    /// mcpcert's own peak resident memory, in KiB (for benchmarks and
    /// the hostile-server tests).
    pub peak_rss_kib: u64,
    pub transport: Transport,
    pub target: Value,
    pub revision_requested: String,
    pub revisions: Vec<RevisionInfo>,
    pub strict: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target_problem: Option<String>,
    /// Things about the run itself the operator should know (a config
    /// naming a tool the server does not list).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// Set when the run used an expected-failures baseline.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub baseline: Option<BaselineSummary>,
    /// Set when the run was against a requirement set (`--requirements`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub requirements: Option<RequirementsReport>,
    pub summary: Summary,
    pub cases: Vec<CaseResult>,
}

/// The peak resident set size of this process, in KiB.
/// 0 where the platform does not tell.
#[cfg(unix)]
pub fn peak_rss_kib() -> u64 {
    // SAFETY: `rusage` is plain old data, so all-zero bytes are a valid
    // value; getrusage writes only into the struct whose address it is
    // given, which lives on this stack frame for the whole call.
    unsafe {
        let mut u: libc::rusage = std::mem::zeroed();
        if libc::getrusage(libc::RUSAGE_SELF, &mut u) == 0 { u.ru_maxrss.max(0) as u64 } else { 0 }
    }
}

#[cfg(not(unix))]
pub fn peak_rss_kib() -> u64 {
    0
}

/// Creates the folder `p` will be written in.
pub fn mkdirs(p: &Path) -> std::io::Result<()> {
    if let Some(d) = p.parent()
        && !d.as_os_str().is_empty()
    {
        std::fs::create_dir_all(d)?;
    }
    Ok(())
}

pub fn write_json(report: &RunReport, path: &Path) -> std::io::Result<()> {
    mkdirs(path)?;
    let text = serde_json::to_string_pretty(report).map_err(std::io::Error::other)?;
    std::fs::write(path, text)
}

/// How JUnit shows the verdicts it has no word for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JunitStyle {
    pub warn: JunitAs,
    /// n/a: `Skipped` (default) or `Pass`.
    pub na: JunitAs,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JunitAs {
    /// `<failure>` (dashboards count it).
    Failure,
    /// `<skipped>`.
    Skipped,
    /// A passed testcase (the text in system-out).
    Pass,
}

impl JunitStyle {
    pub fn standard() -> JunitStyle {
        JunitStyle { warn: JunitAs::Pass, na: JunitAs::Skipped }
    }
}

pub fn junit_xml(report: &RunReport) -> String {
    junit_xml_styled(report, JunitStyle::standard())
}

/// JUnit with warnings and n/a shown as `style` says (under --strict a
/// warning is a failure whatever the style).
pub fn junit_xml_styled(report: &RunReport, style: JunitStyle) -> String {
    use quick_junit::{NonSuccessKind, Property, Report, TestCase, TestCaseStatus, TestSuite};
    let mut r = Report::new("mcpcert");
    r.set_time(std::time::Duration::from_millis(report.duration_ms));
    let mut suites: Vec<(String, TestSuite)> = Vec::new();
    for c in &report.cases {
        let suite_name = c.id.splitn(3, '/').take(2).collect::<Vec<_>>().join("/");
        if !suites.iter().any(|(n, _)| *n == suite_name) {
            let mut s = TestSuite::new(suite_name.clone());
            s.add_property(Property::new("transport", report.transport.as_str()));
            s.add_property(Property::new("suite_digest", report.suite_digest.clone()));
            suites.push((suite_name.clone(), s));
        }
        let status = match (c.baseline.as_ref().map(|b| b.outcome), c.verdict) {
            // A known failure: skipped, as test runners show an expected
            // failure, so that dashboards count only what is new.
            (Some(BaselineOutcome::ExpectedFailure), _) => {
                let mut st = TestCaseStatus::skipped();
                let b = c.baseline.as_ref().map(|b| b.reason.as_str()).unwrap_or("");
                st.set_message(format!("expected failure ({}): {b}", c.verdict.as_str()))
                    .set_type("expected failure")
                    .set_description(failure_text(c));
                st
            }
            (Some(BaselineOutcome::Stale), _) => {
                let mut st = TestCaseStatus::non_success(NonSuccessKind::Failure);
                let key = c.baseline.as_ref().map(|b| b.entry.as_str()).unwrap_or("");
                st.set_message(format!("stale baseline entry: the case passes now; remove `{key}` from the expected failures"))
                    .set_type("stale baseline entry");
                st
            }
            (_, v) => match v {
                Verdict::Pass => TestCaseStatus::success(),
                Verdict::Warn if report.strict => {
                    let mut st = TestCaseStatus::non_success(NonSuccessKind::Failure);
                    st.set_message(first_line(&c.message)).set_type("warn (strict)").set_description(failure_text(c));
                    st
                }
                Verdict::Warn => match style.warn {
                    JunitAs::Pass => TestCaseStatus::success(),
                    JunitAs::Failure => {
                        let mut st = TestCaseStatus::non_success(NonSuccessKind::Failure);
                        st.set_message(first_line(&c.message))
                            .set_type(format!("warn ({} not met)", c.level))
                            .set_description(failure_text(c));
                        st
                    }
                    JunitAs::Skipped => {
                        let mut st = TestCaseStatus::skipped();
                        st.set_message(format!("warn ({} not met): {}", c.level, first_line(&c.message)))
                            .set_type("warn")
                            .set_description(failure_text(c));
                        st
                    }
                },
                Verdict::Fail => {
                    let mut st = TestCaseStatus::non_success(NonSuccessKind::Failure);
                    st.set_message(first_line(&c.message)).set_type(format!("{} violated", c.level)).set_description(failure_text(c));
                    st
                }
                Verdict::Error => {
                    let mut st = TestCaseStatus::non_success(NonSuccessKind::Error);
                    st.set_message(first_line(&c.message)).set_type("error").set_description(failure_text(c));
                    st
                }
                Verdict::NotApplicable if style.na == JunitAs::Pass => TestCaseStatus::success(),
                Verdict::NotApplicable => {
                    let mut st = TestCaseStatus::skipped();
                    st.set_message(format!("n/a: {}", c.message)).set_type("n/a");
                    st
                }
            },
        };
        let mut tc = TestCase::new(c.id.clone(), status);
        tc.set_classname(c.id.rsplit_once('/').map(|x| x.0).unwrap_or(&c.id).to_string());
        tc.set_time(std::time::Duration::from_millis(c.duration_ms));
        // Jenkins' schema (junit-10.xsd) has no properties on a testcase:
        // the verdict is in the element and its type; the rest is in report.json.
        if let Some(t) = &c.stderr_tail {
            tc.set_system_err(format!("the server's stderr ended with:\n{t}"));
        }
        if c.verdict == Verdict::NotApplicable && style.na == JunitAs::Pass {
            tc.set_system_out(format!("n/a: {}", c.message));
        }
        if c.verdict == Verdict::Warn && !report.strict && !c.expected_failure() && style.warn == JunitAs::Pass {
            tc.set_system_out(format!("WARNING ({} not met)\n{}", c.level, failure_text(c)));
        }
        if let Some((_, s)) = suites.iter_mut().find(|(n, _)| *n == suite_name) {
            s.add_test_case(tc);
        }
    }
    r.add_test_suites(suites.into_iter().map(|(_, s)| s));
    match r.to_string() {
        Ok(xml) => without_suites_skipped(xml),
        Err(e) => format!("<!-- junit serialisation failed: {e} -->"),
    }
}

/// Jenkins' schema has no `skipped` attribute on `<testsuites>` (each
/// `<testsuite>` keeps its own count).
fn without_suites_skipped(xml: String) -> String {
    let Some(start) = xml.find("<testsuites") else { return xml };
    let Some(len) = xml[start..].find('>') else { return xml };
    let tag = &xml[start..start + len];
    let Some(at) = tag.find(" skipped=\"") else { return xml };
    let Some(end) = tag[at + 10..].find('"') else { return xml };
    let cut = start + at..start + at + 10 + end + 1;
    let mut out = xml.clone();
    out.replace_range(cut, "");
    out
}

/// How reports name a baseline outcome.
pub fn baseline_word(o: BaselineOutcome) -> &'static str {
    match o {
        BaselineOutcome::ExpectedFailure => "expected failure",
        BaselineOutcome::Stale => "stale baseline entry",
        BaselineOutcome::NotApplicable => "baselined, n/a here",
    }
}

fn first_line(s: &str) -> String {
    s.lines().next().unwrap_or("").to_string()
}

/// Expected vs actual plus the reproducer.
pub fn failure_text(c: &CaseResult) -> String {
    let mut s = format!("{}\n\nspec: {} [{}]\nbasis: {}\n", c.message, c.spec, c.level, c.basis.render());
    if let Some(r) = &c.reproducer {
        s.push_str("\nreproduce:\n");
        s.push_str(r);
        s.push('\n');
    }
    s
}

pub fn write_junit(report: &RunReport, path: &Path, style: JunitStyle) -> std::io::Result<()> {
    mkdirs(path)?;
    std::fs::write(path, junit_xml_styled(report, style))
}

fn esc(s: &str) -> String {
    s.chars()
        .filter(|c| !c.is_control() || *c == '\n' || *c == '\t')
        .collect::<String>()
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// A single self-contained page for people.
pub fn html(report: &RunReport) -> String {
    let s = &report.summary;
    let mut out = String::new();
    out.push_str("<!doctype html><meta charset=utf-8><title>mcpcert report</title><style>body{font:14px system-ui,sans-serif;margin:2em;max-width:70em}table{border-collapse:collapse;width:100%}td,th{border-bottom:1px solid #ddd;padding:4px 8px;text-align:left;vertical-align:top}.pass{color:#176a1c}.fail,.error{color:#b00020;font-weight:bold}.warn{color:#9a6700}.na{color:#666}pre{white-space:pre-wrap;background:#f6f6f6;padding:6px;margin:4px 0}</style>");
    out.push_str(&format!(
        "<h1>mcpcert report</h1><p>target: <code>{}</code> ({}) · mcpcert {} · suites {}</p><p>{} cases: {} pass, {} fail, {} warn, {} n/a, {} error</p>",
        esc(&report.target.to_string()),
        report.transport,
        report.mcpcert_version,
        esc(&report.suite_digest),
        s.total,
        s.pass,
        s.fail,
        s.warn,
        s.na,
        s.error
    ));
    if let Some(p) = &report.target_problem {
        out.push_str(&format!("<p class=error>target problem: {}</p>", esc(p)));
    }
    for w in &report.warnings {
        out.push_str(&format!("<p class=warn>run warning: {}</p>", esc(w)));
    }
    if let Some(b) = &report.baseline {
        out.push_str(&format!(
            "<p>baseline <code>{}</code>: {} entries, {} expected failures, {} stale{}</p>",
            esc(&b.file),
            b.entries,
            b.expected_failures,
            b.stale.len(),
            if b.stale.is_empty() {
                String::new()
            } else {
                format!(" (<span class=fail>{}</span>: remove them)", esc(&b.stale.join(", ")))
            }
        ));
    }
    if let Some(q) = &report.requirements {
        out.push_str(&format!(
            "<h2>Requirement set {}</h2><p>{} of {} scored scenarios pass ({} apply to this target)</p><table><tr><th>verdict</th><th>scenario</th><th>why</th></tr>",
            esc(&q.revision),
            q.passed,
            q.scored,
            q.applicable
        ));
        for sc in &q.scenarios {
            let cls = if sc.verdict == Verdict::NotApplicable { "na" } else { sc.verdict.as_str() };
            let scored = if sc.scored {
                String::new()
            } else {
                format!(" <small>(not scored: {})</small>", esc(sc.reason.as_deref().unwrap_or("")))
            };
            out.push_str(&format!(
                "<tr><td class={cls}>{}{}</td><td><code>{}</code>{scored}</td><td>{}</td></tr>",
                sc.verdict.as_str(),
                if sc.expected { " (expected)" } else { "" },
                esc(&sc.name),
                esc(&sc.message)
            ));
        }
        out.push_str("</table>");
    }
    out.push_str("<ul>");
    for r in &report.revisions {
        out.push_str(&format!("<li>{}: {} — {}</li>", r.revision, if r.supported { "served" } else { "not served" }, esc(&r.reason)));
    }
    out.push_str("</ul><table><tr><th>verdict</th><th>case</th><th>level</th><th>details</th></tr>");
    for c in &report.cases {
        let cls = match c.verdict {
            Verdict::NotApplicable => "na",
            v => v.as_str(),
        };
        let mut detail = esc(&c.title);
        if let Some(b) = &c.baseline {
            detail.push_str(&format!("<p><b>{}</b> (baseline: {})</p>", baseline_word(b.outcome), esc(&b.reason)));
        }
        if !c.message.is_empty() {
            detail.push_str(&format!("<pre>{}</pre>", esc(&c.message)));
        }
        detail.push_str(&format!(
            "<details><summary>why {}</summary><blockquote>{}</blockquote></details>",
            esc(c.level.as_str()),
            esc(&c.basis.render())
        ));
        if let Some(t) = &c.stderr_tail {
            detail.push_str(&format!("<p>the server's stderr ended with:</p><pre>{}</pre>", esc(t)));
        }
        if let Some(r) = &c.reproducer {
            detail.push_str(&format!("<details><summary>reproduce</summary><pre>{}</pre></details>", esc(r)));
        }
        if !c.transcript.is_empty() {
            detail.push_str(&format!(
                "<details><summary>transcript ({} exchanges)</summary>{}</details>",
                c.transcript.len(),
                transcript_html(&c.transcript)
            ));
        }
        out.push_str(&format!(
            "<tr><td class={cls}>{}{}</td><td><code>{}</code><br><small>{}</small></td><td>{}</td><td>{detail}</td></tr>",
            c.verdict.as_str(),
            match c.baseline.as_ref().map(|b| b.outcome) {
                Some(BaselineOutcome::ExpectedFailure) => " (expected)",
                Some(BaselineOutcome::Stale) => " (stale baseline entry)",
                _ => "",
            },
            esc(&c.id),
            esc(&c.spec),
            esc(c.level.as_str())
        ));
    }
    out.push_str("</table>");
    out
}

/// The exchanges of a case for people: what was sent, what came back,
/// notes; each part clipped (the JSON report has them whole).
fn transcript_html(t: &[Exchange]) -> String {
    let clip = |s: &str| clip(s, 2000);
    let mut out = String::new();
    for ex in t.iter().take(30) {
        out.push_str(&format!("<p><b>{}</b>", esc(&ex.label)));
        if let Some(st) = ex.status {
            out.push_str(&format!(" · HTTP {st}"));
        }
        out.push_str(&format!(" · {} ms</p>", ex.ms));
        let mut lines = Vec::new();
        for (k, v) in &ex.sent_headers {
            lines.push(format!("> {k}: {v}"));
        }
        if let Some(b) = &ex.sent {
            lines.push(format!("> {}", clip(b)));
        }
        for f in ex.frames.iter().take(10) {
            lines.push(format!("< {}", clip(&f.raw)));
        }
        if ex.frames.is_empty()
            && let Some(b) = &ex.body
        {
            lines.push(format!("< {}", clip(b)));
        }
        if let Some(e) = &ex.error {
            lines.push(format!("! {e}"));
        }
        if let Some(n) = &ex.note {
            lines.push(clip(n));
        }
        if !lines.is_empty() {
            out.push_str(&format!("<pre>{}</pre>", esc(&lines.join("\n"))));
        }
    }
    if t.len() > 30 {
        out.push_str(&format!("<p>… {} more in report.json</p>", t.len() - 30));
    }
    out
}

pub fn write_html(report: &RunReport, path: &Path) -> std::io::Result<()> {
    mkdirs(path)?;
    std::fs::write(path, html(report))
}
