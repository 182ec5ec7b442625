//! Reports: JUnit XML (CI), a versioned JSON run report, a readable HTML
//! page, and the console summary.

pub mod console;
pub mod diff;
pub mod html;
pub mod junit;
pub mod matrix;
pub mod roots;
pub mod summary;

pub use html::html;

use crate::record::{BaselineOutcome, BaselineSummary, CaseResult, RequirementsReport, RevisionInfo, Transport, Verdict};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::path::Path;

pub const JSON_FORMAT_VERSION: u32 = 1;

#[derive(Debug, Clone, Serialize, Deserialize, Default, PartialEq)]
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
    /// Requests (and notifications) the run sent, probes and load included:
    /// HTTP requests, or lines written to a stdio server.
    pub requests_sent: u64,
    /// stdio: the server processes the run started (probes included) and
    /// the longest any took to answer its first request.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server_processes: Option<crate::record::ServerProcesses>,
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
    /// What a reader must know first (a requirement set run against a
    /// server that has none of its fixtures).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notices: Vec<String>,
    /// What the run covered, said once: the tools the call policy did not
    /// call, and (stdio) the server processes it started.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub coverage: Vec<String>,
    /// What drafts of the spec say about the target, as notes (never a
    /// verdict): over Streamable HTTP, the server card.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub drafts: Vec<crate::record::DraftNote>,
    /// Set when the run used an expected-failures baseline.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub baseline: Option<BaselineSummary>,
    /// Set when the run was against a requirement set (`--requirements`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub requirements: Option<RequirementsReport>,
    pub summary: Summary,
    /// The load replays' throughput and latency (`--load N`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub load: Vec<crate::record::LoadStats>,
    /// Whether the run passed, and if not, why (as the console's last
    /// line says it).
    pub outcome: Outcome,
    /// Failing cases that share one cause, the cause said once (each case
    /// keeps its verdict).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub roots: Vec<roots::RootCause>,
    /// Every `tools/call` the run sent, whatever case sent it (by
    /// revision, tool and sender), and how many were left out of the log
    /// (it keeps 50,000).
    pub call_log: Vec<crate::record::CallLogEntry>,
    #[serde(skip_serializing_if = "is_zero")]
    pub call_log_dropped: u64,
    pub cases: Vec<CaseResult>,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// How a run ended: passed, or failed for the reasons given.
#[derive(Debug, Clone, Serialize, Deserialize, Default)]
pub struct Outcome {
    pub passed: bool,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub why: Vec<String>,
}

/// The peak resident set size of this process, in KiB.
/// 0 where the platform does not tell. On Linux from `VmHWM` in
/// /proc/self/status: getrusage's `ru_maxrss` is kept across exec, so a
/// large parent (a test runner, a CI agent) that started mcpcert would
/// show its own size at the fork as mcpcert's peak.
#[cfg(unix)]
pub fn peak_rss_kib() -> u64 {
    let hwm = std::fs::read_to_string("/proc/self/status").ok().and_then(|s| {
        s.lines().find_map(|l| l.strip_prefix("VmHWM:")).and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
    });
    if let Some(kib) = hwm {
        return kib;
    }
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
    // Written as it is made: the report is not held whole in memory.
    let mut out = std::io::BufWriter::with_capacity(256 * 1024, std::fs::File::create(path)?);
    serde_json::to_writer_pretty(&mut out, report).map_err(std::io::Error::other)?;
    std::io::Write::flush(&mut out)
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
    junit::Junit {
        name: "mcpcert".into(),
        time: Some(std::time::Duration::from_millis(report.duration_ms)),
        suites: junit_suites(None, &report.cases, report.strict, report.transport, &report.suite_digest, style),
    }
    .to_xml()
}

/// One testsuite per revision/area of `cases`, named `PREFIX: area` when a
/// prefix (a matrix target) is given.
pub fn junit_suites(
    prefix: Option<&str>,
    cases: &[CaseResult],
    strict: bool,
    transport: Transport,
    digest: &str,
    style: JunitStyle,
) -> Vec<junit::Suite> {
    use junit::{Kind, Status, Suite, TestCase};
    let mut suites: Vec<Suite> = Vec::new();
    for c in cases {
        let area = c.id.splitn(3, '/').take(2).collect::<Vec<_>>().join("/");
        let suite_name = match prefix {
            Some(p) => format!("{p}: {area}"),
            None => area,
        };
        if !suites.iter().any(|s| s.name == suite_name) {
            let properties = vec![("transport".into(), transport.as_str().into()), ("suite_digest".into(), digest.to_string())];
            suites.push(Suite { name: suite_name.clone(), properties, cases: Vec::new() });
        }
        let status = match (c.baseline.as_ref().map(|b| b.outcome), c.verdict) {
            // A known failure: skipped, as test runners show an expected
            // failure, so that dashboards count only what is new.
            (Some(BaselineOutcome::ExpectedFailure), _) => {
                let b = c.baseline.as_ref().map(|b| b.reason.as_str()).unwrap_or("");
                Status::of(Kind::Skipped)
                    .message(format!("expected failure ({}): {b}", c.verdict.as_str()))
                    .ty("expected failure")
                    .description(failure_text(c))
            }
            (Some(BaselineOutcome::Stale), _) => {
                let key = c.baseline.as_ref().map(|b| b.entry.as_str()).unwrap_or("");
                Status::of(Kind::Failure)
                    .message(format!("stale baseline entry: the case passes now; remove `{key}` from the expected failures"))
                    .ty("stale baseline entry")
            }
            (_, v) => match v {
                Verdict::Pass => Status::success(),
                Verdict::Warn if strict => Status::of(Kind::Failure).message(c.reason()).ty("warn (strict)").description(failure_text(c)),
                Verdict::Warn => match style.warn {
                    JunitAs::Pass => Status::success(),
                    JunitAs::Failure => {
                        Status::of(Kind::Failure).message(c.reason()).ty(format!("warn ({} not met)", c.level)).description(failure_text(c))
                    }
                    JunitAs::Skipped => Status::of(Kind::Skipped)
                        .message(format!("warn ({} not met): {}", c.level, c.reason()))
                        .ty("warn")
                        .description(failure_text(c)),
                },
                Verdict::Fail => {
                    Status::of(Kind::Failure).message(c.reason()).ty(format!("{} violated", c.level)).description(failure_text(c))
                }
                Verdict::Error => Status::of(Kind::Error).message(c.reason()).ty("error").description(failure_text(c)),
                Verdict::NotApplicable if style.na == JunitAs::Pass => Status::success(),
                Verdict::NotApplicable => Status::of(Kind::Skipped).message(format!("n/a: {}", c.message)).ty("n/a"),
            },
        };
        let mut tc = TestCase::new(c.id.clone(), status);
        tc.classname = Some(c.id.rsplit_once('/').map(|x| x.0).unwrap_or(&c.id).to_string());
        tc.time = Some(std::time::Duration::from_millis(c.duration_ms));
        // Jenkins' schema (junit-10.xsd) has no properties on a testcase:
        // the verdict is in the element and its type; the rest is in report.json.
        if let Some(t) = &c.stderr_tail {
            tc.system_err = Some(format!("the server's stderr ended with:\n{t}"));
        }
        if c.verdict == Verdict::NotApplicable && style.na == JunitAs::Pass {
            tc.system_out = Some(format!("n/a: {}", c.message));
        }
        if c.verdict == Verdict::Warn && !strict && !c.expected_failure() && style.warn == JunitAs::Pass {
            tc.system_out = Some(format!("WARNING ({} not met)\n{}", c.level, failure_text(c)));
        }
        if let Some(s) = suites.iter_mut().find(|s| s.name == suite_name) {
            s.cases.push(tc);
        }
    }
    suites
}

/// How reports name a baseline outcome.
pub fn baseline_word(o: BaselineOutcome) -> &'static str {
    match o {
        BaselineOutcome::ExpectedFailure => "expected failure",
        BaselineOutcome::Stale => "stale baseline entry",
        BaselineOutcome::NotApplicable => "baselined, n/a here",
    }
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

/// Text for HTML and XML: `& < > "` escaped, control characters other than
/// newline and tab dropped (a hostile server's output is quoted). One pass:
/// a report escapes some hundreds of kilobytes.
fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + s.len() / 16);
    esc_into(&mut out, s);
    out
}

/// `esc`, appended to `out` (no string of its own).
fn esc_into(out: &mut String, s: &str) {
    esc_bytes::<true>(out, s)
}

/// `esc_into` for element text (a transcript's `<pre>`), where `"` needs no
/// entity: JSON's many quotes stay one byte each.
fn esc_text_into(out: &mut String, s: &str) {
    esc_bytes::<false>(out, s)
}

fn esc_bytes<const QUOTE: bool>(out: &mut String, s: &str) {
    // By bytes: every character replaced or dropped is ASCII, or a C1
    // control (U+0080..U+009F: 0xC2 then 0x80..0x9F in UTF-8), so the text
    // between them is copied whole and stays valid UTF-8.
    let b = s.as_bytes();
    let mut plain = 0;
    let mut i = 0;
    while i < b.len() {
        let (with, len) = match b[i] {
            b'&' => ("&amp;", 1),
            b'<' => ("&lt;", 1),
            b'>' => ("&gt;", 1),
            b'"' if QUOTE => ("&quot;", 1),
            b'\n' | b'\t' => {
                i += 1;
                continue;
            }
            0..=0x1f | 0x7f => ("", 1),
            0xc2 if matches!(b.get(i + 1), Some(0x80..=0x9f)) => ("", 2),
            _ => {
                i += 1;
                continue;
            }
        };
        out.push_str(&s[plain..i]);
        out.push_str(with);
        i += len;
        plain = i;
    }
    out.push_str(&s[plain..]);
}

pub fn write_html(report: &RunReport, path: &Path) -> std::io::Result<()> {
    mkdirs(path)?;
    std::fs::write(path, html(report))
}

/// A draft's findings as one line of the HTML page (escaped).
pub fn drafts(d: &crate::record::DraftNote) -> String {
    let mut s = format!("draft (notes only, never a verdict): {} at <code>{}</code>: {}", esc(&d.name), esc(&d.url), esc(&d.found));
    if !d.notes.is_empty() {
        s.push_str(&format!(" ({}): {}", esc(&d.draft), d.notes.iter().map(|n| esc(n)).collect::<Vec<_>>().join("; ")));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::esc;

    #[test]
    fn esc_escapes_markup_and_drops_control_characters() {
        assert_eq!(esc(""), "");
        assert_eq!(esc("plain"), "plain");
        assert_eq!(esc(r#"<a href="x">&</a>"#), "&lt;a href=&quot;x&quot;&gt;&amp;&lt;/a&gt;");
        assert_eq!(esc("line\nnext\ttab\r\u{0}\u{1b}[31m\u{7f}\u{85}end"), "line\nnext\ttab[31mend");
        assert_eq!(esc("Zürich 東京 <é>"), "Zürich 東京 &lt;é&gt;");
        assert_eq!(esc("&amp;"), "&amp;amp;", "escaped once, not decoded");
        let mut text = String::new();
        super::esc_text_into(&mut text, "{\"a\":\"<b>\u{1b}\"}");
        assert_eq!(text, "{\"a\":\"&lt;b&gt;\"}", "quotes stay in element text");
    }
}
