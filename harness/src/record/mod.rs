//! What a run produced: every exchange as it went over the wire, each
//! case's result and verdict, what the run learnt about each revision.
//! Plain data; the reports read only this.

use serde::{Deserialize, Serialize};
use serde_json::Value;

mod draft;
mod exchange;
mod mask;

pub use crate::transport::{Frame, Transport, TransportError, clip};
pub use crate::wire::Revision;
pub use draft::DraftNote;
pub use exchange::{Exchange, run_clock_ms};
pub use mask::{MASK, Masker, SECRET_ENV_NAMES};

pub mod contract;

/// stdio: how many server processes a run started, and its slowest start
/// (the longest any took to answer its first request).
#[derive(Debug, Clone, Copy, serde::Serialize)]
pub struct ServerProcesses {
    pub started: u64,
    pub slowest_start_ms: u64,
    /// Whether any of them answered a request (when none did,
    /// `slowest_start_ms` is 0 and means nothing).
    pub answered: bool,
    /// From start to first answer, summed over the processes that
    /// answered (ms): the share of the wall time that went on starting
    /// servers.
    #[serde(default)]
    pub starts_total_ms: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    Pass,
    Fail,
    Warn,
    #[serde(rename = "n/a")]
    NotApplicable,
    Error,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Pass => "pass",
            Verdict::Fail => "fail",
            Verdict::Warn => "warn",
            Verdict::NotApplicable => "n/a",
            Verdict::Error => "error",
        }
    }

    /// The word people read (console, HTML page, diff): the failures in
    /// capitals.
    pub fn word(self) -> &'static str {
        match self {
            Verdict::Pass => "pass",
            Verdict::Fail => "FAIL",
            Verdict::Warn => "warn",
            Verdict::NotApplicable => "n/a",
            Verdict::Error => "ERROR",
        }
    }
}

/// The keyword level of a rule, as the spec states it (or POLICY, a rule
/// mcpcert adds where the spec is silent or only advises).
#[derive(Debug, Clone, Copy, Deserialize, Serialize, PartialEq, Eq)]
pub enum Level {
    #[serde(rename = "MUST")]
    Must,
    #[serde(rename = "MUST NOT")]
    MustNot,
    #[serde(rename = "SHOULD")]
    Should,
    #[serde(rename = "SHOULD NOT")]
    ShouldNot,
    #[serde(rename = "MAY")]
    May,
    #[serde(rename = "POLICY")]
    Policy,
}

impl std::fmt::Display for Level {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Level {
    pub fn as_str(self) -> &'static str {
        match self {
            Level::Must => "MUST",
            Level::MustNot => "MUST NOT",
            Level::Should => "SHOULD",
            Level::ShouldNot => "SHOULD NOT",
            Level::May => "MAY",
            Level::Policy => "POLICY",
        }
    }
    /// A broken rule of this level is a warning (unless --strict). POLICY is
    /// a rule mcpcert adds where the spec is silent or only advises (error
    /// results keep the output contract; no secret mirrored into a header),
    /// so it cannot weigh more than a SHOULD.
    pub fn is_advisory(self) -> bool {
        matches!(self, Level::Should | Level::ShouldNot | Level::May | Level::Policy)
    }
}

/// The word of the spec a case's level rests on.
#[derive(Debug, Clone, Copy, Deserialize, Serialize, PartialEq, Eq)]
pub enum Keyword {
    #[serde(rename = "MUST")]
    Must,
    #[serde(rename = "MUST NOT")]
    MustNot,
    #[serde(rename = "SHOULD")]
    Should,
    #[serde(rename = "SHOULD NOT")]
    ShouldNot,
    #[serde(rename = "MAY")]
    May,
    /// The spec describes the behaviour without a keyword.
    #[serde(rename = "none")]
    None,
    /// The spec says nothing: the rule is mcpcert's (POLICY).
    #[serde(rename = "silent")]
    Silent,
    /// What a conformance fixture does, as the requirement set's scenario
    /// defines it (the fixture exists to show a rule of the spec; that it
    /// behaves so is the requirement set's, not the spec's). Only for
    /// cases that apply to servers listing the fixture, or under
    /// `--requirements`.
    #[serde(rename = "fixture")]
    Fixture,
}

/// The sentence of the spec a case's level rests on, so that a vendor can
/// dispute a verdict with facts.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Basis {
    /// The sentence, quoted (white space folded).
    pub quote: String,
    /// Where it stands: `<revision>/<document>#<anchor>`.
    pub source: String,
    pub keyword: Keyword,
}

/// A quotation's Markdown as text, for people: `**MUST**` is MUST and
/// `[server/discover](…)` is server/discover (code spans keep their
/// backticks). The JSON report keeps the quotation as the spec writes it.
pub fn plain_markdown(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while !rest.is_empty() {
        if let Some(r) = rest.strip_prefix("**").or_else(|| rest.strip_prefix("__")) {
            rest = r;
            continue;
        }
        // A link: its text, not its target (inline `[t](u)`, reference
        // `[t][r]`, or a bare reference `[t]`).
        if rest.starts_with('[')
            && let Some(close) = rest.find(']')
            && !rest[1..close].contains('[')
        {
            let text = &rest[1..close];
            let after = &rest[close + 1..];
            let skip = if let Some(a) = after.strip_prefix('(') {
                a.find(')').map(|e| e + 2)
            } else if let Some(a) = after.strip_prefix('[') {
                a.find(']').map(|e| e + 2)
            } else {
                Some(0)
            };
            if let Some(skip) = skip {
                out.push_str(text);
                rest = &after[skip..];
                continue;
            }
        }
        // `_emphasis_` at a word's edge (never the `_` inside a name).
        if let Some(r) = rest.strip_prefix('_')
            && out.chars().last().is_none_or(|c| !c.is_alphanumeric())
            && r.chars().next().is_some_and(|c| c.is_alphanumeric())
            && let Some(end) = r.find('_')
            && r[end + 1..].chars().next().is_none_or(|c| !c.is_alphanumeric())
            && !r[..end].contains(' ')
        {
            out.push_str(&r[..end]);
            rest = &r[end + 1..];
            continue;
        }
        let mut chars = rest.chars();
        if let Some(c) = chars.next() {
            out.push(c);
        }
        rest = chars.as_str();
    }
    out
}

impl Basis {
    /// One line for messages and `mcpcert list`.
    pub fn render(&self) -> String {
        if self.keyword == Keyword::Fixture {
            // Not a quotation: what the scenario defines, in mcpcert's words.
            return format!(
                "FIXTURE: {} (what the requirement set's scenario {} defines the fixture to do, in mcpcert's words)",
                self.quote, self.source
            );
        }
        let kind = match self.keyword {
            Keyword::None => " (no keyword: described behaviour)",
            Keyword::Silent => " (POLICY: the spec is silent; the nearest text)",
            Keyword::Fixture => " (FIXTURE: the requirement set's scenario defines what this fixture does)",
            _ => "",
        };
        format!("“{}” ({}){kind}", plain_markdown(&self.quote), self.source)
    }

    /// Why a case of `level` cannot rest on this sentence, if it cannot: a
    /// case may be weaker than its sentence (a black box cannot see every
    /// condition of a MUST), never stronger, and a sentence that is silent
    /// or says MAY carries only POLICY.
    pub fn mismatch(&self, level: Level) -> Option<String> {
        let strong = matches!(level, Level::Must | Level::MustNot);
        match self.keyword {
            Keyword::Should | Keyword::ShouldNot if strong => Some(format!("level {level} rests on a {:?} sentence", self.keyword)),
            Keyword::May | Keyword::Silent if level != Level::Policy => {
                Some(format!("level {level}: a sentence that is silent or says MAY supports POLICY only"))
            }
            _ => None,
        }
    }
}

/// One case's result. Read back from a JSON report (by `matrix`, `merge`
/// and `diff`) without its transcript.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CaseResult {
    pub id: String,
    pub title: String,
    pub level: Level,
    pub revision: Revision,
    pub spec: String,
    /// The sentence of the spec the level rests on.
    pub basis: Basis,
    pub transport: Transport,
    pub verdict: Verdict,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub message: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reproducer: Option<String>,
    pub duration_ms: u64,
    /// The last lines the server wrote to stderr before a case ended in
    /// `error` (a crash's traceback), for the console, JUnit and HTML.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stderr_tail: Option<String>,
    /// Set when the expected-failures baseline names this case.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline: Option<BaselineMark>,
    /// The scenarios of the requirement set this case answers.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub answers: Vec<String>,
    /// Scenarios whose subject the case judges beyond what they require.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub beyond: Vec<String>,
    /// Under `--requirements`: the case answers only scenarios that do not
    /// count, or only goes beyond the set's scenarios, so it is reported
    /// but never fails the run.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub not_scored: bool,
    /// The wave of concurrent cases it ran in (`-j`; a case alone in its
    /// wave ran with nothing else in flight). None: it did not run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wave: Option<usize>,
    #[serde(default, skip_deserializing)]
    pub transcript: Vec<Exchange>,
}

/// What the expected-failures baseline made of a case.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct BaselineMark {
    /// The key of the baseline entry (a case id, maybe `@stdio`/`@http`).
    pub entry: String,
    pub reason: String,
    pub outcome: BaselineOutcome,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
pub enum BaselineOutcome {
    /// It fails (or errors, or warns) as the baseline says: the run does
    /// not fail for it.
    #[serde(rename = "expected failure")]
    ExpectedFailure,
    /// It passes: the entry is stale and the run fails until it is removed.
    #[serde(rename = "stale")]
    Stale,
    /// It does not apply here; tolerated.
    #[serde(rename = "n/a")]
    NotApplicable,
}

/// A run against a requirement set (`--requirements REV`): each scenario's
/// verdict from the cases that answer it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct RequirementsReport {
    pub revision: String,
    pub source: String,
    /// Scored scenarios in the set.
    pub scored: usize,
    /// Scored scenarios that apply to this target (not n/a).
    pub applicable: usize,
    /// Scored, applicable scenarios that pass (warnings allowed unless --strict).
    pub passed: usize,
    /// Scored scenarios that fail only by expected failures of the baseline.
    pub expected_failures: usize,
    pub scenarios: Vec<ScenarioResult>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ScenarioResult {
    pub name: String,
    pub scored: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    pub verdict: Verdict,
    /// Why, in one line: the first case that decided the verdict.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub message: String,
    /// Every answering case fails only as the baseline expects.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub expected: bool,
    pub cases: Vec<String>,
    /// Cases that judge the scenario's subject beyond what it requires
    /// (they never decide its verdict), with their verdicts.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub beyond: Vec<BeyondCase>,
}

/// A case beyond the requirement set: its id and verdict.
#[derive(Debug, Clone, Serialize, serde::Deserialize, PartialEq)]
pub struct BeyondCase {
    pub id: String,
    pub verdict: Verdict,
    /// Why it did not pass, in one line.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub message: String,
}

/// What the expected-failures baseline did to a run.
#[derive(Debug, Clone, Serialize, Default, PartialEq)]
pub struct BaselineSummary {
    pub file: String,
    pub entries: usize,
    pub expected_failures: usize,
    /// The entries whose case passes (each fails the run).
    pub stale: Vec<String>,
    /// Entries whose case did not apply to this set-up.
    pub not_applicable: usize,
    /// Entries no case of this run answered (another revision or
    /// transport, or not selected).
    pub not_in_run: Vec<String>,
}

impl CaseResult {
    /// Whether the verdict itself is a failure (fail, error; warn under
    /// --strict), baseline or not.
    pub fn is_failure(&self, strict: bool) -> bool {
        matches!(self.verdict, Verdict::Fail | Verdict::Error) || (strict && self.verdict == Verdict::Warn)
    }

    /// Whether the case fails the run: a failure the baseline does not
    /// expect, or a stale baseline entry.
    pub fn counts_as_failure(&self, strict: bool) -> bool {
        if self.not_scored {
            return false;
        }
        match self.baseline.as_ref().map(|b| b.outcome) {
            Some(BaselineOutcome::ExpectedFailure) => false,
            Some(BaselineOutcome::Stale) => true,
            _ => self.is_failure(strict),
        }
    }

    /// Whether the baseline expected this case to fail.
    pub fn expected_failure(&self) -> bool {
        self.baseline.as_ref().is_some_and(|b| b.outcome == BaselineOutcome::ExpectedFailure)
    }

    /// Whether the baseline names this case although it passes.
    pub fn stale_baseline(&self) -> bool {
        self.baseline.as_ref().is_some_and(|b| b.outcome == BaselineOutcome::Stale)
    }

    /// The one-line reason (JUnit's message, the step summary, the
    /// baseline, the console): see [`reason`].
    pub fn reason(&self) -> String {
        reason(&self.message)
    }
}

/// A message's one-line reason: its first line, whole. A first line that
/// introduces a list of findings ("2 of 45 server frames break …:") names
/// nothing by itself, so the reason is that line with the first finding
/// after its colon and how many more the message lists ("(+1 more)").
pub fn reason(message: &str) -> String {
    let mut lines = message.lines();
    let head = lines.next().unwrap_or("").trim_end();
    let Some(intro) = head.strip_suffix(':') else {
        return head.to_string();
    };
    let rest: Vec<&str> = lines.filter(|l| !l.trim().is_empty()).collect();
    let Some(first) = rest.first() else {
        return intro.to_string();
    };
    let indent = |l: &str| l.len() - l.trim_start().len();
    let level = indent(first);
    let item = |l: &str| {
        let t = l.trim_start();
        t.strip_prefix("- ").unwrap_or(t).trim_end().to_string()
    };
    // The findings are the lines at the first one's indentation (deeper
    // lines are its details); "… and N more" counts N.
    let mut more = 0usize;
    for l in &rest[1..] {
        if indent(l) < level || (level == 0 && !l.starts_with("- ") && first.starts_with("- ")) {
            break;
        }
        if indent(l) > level {
            continue;
        }
        let t = l.trim_start();
        let counted = t.strip_prefix("… and ").or_else(|| t.strip_prefix("and ")).and_then(|r| {
            let digits: String = r.chars().take_while(char::is_ascii_digit).collect();
            digits.parse::<usize>().ok().filter(|_| r[digits.len()..].starts_with(" more"))
        });
        more += counted.unwrap_or(1);
    }
    let tail = if more > 0 { format!(" (+{more} more)") } else { String::new() };
    format!("{intro}: {}{tail}", item(first))
}

/// The last lines of what a server wrote to stderr (each clipped), or None
/// if it wrote nothing.
pub fn stderr_tail(stderr: &str) -> Option<String> {
    const LINES: usize = 12;
    let lines: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
    if lines.is_empty() {
        return None;
    }
    let skip = lines.len().saturating_sub(LINES);
    let mut out: Vec<String> = lines[skip..].iter().map(|l| clip(l, 300)).collect();
    if skip > 0 {
        out.insert(0, format!("[{skip} earlier lines]"));
    }
    Some(out.join("\n"))
}

/// What the run learnt about one revision.
#[derive(Debug, Clone, Serialize)]
pub struct RevisionInfo {
    pub revision: Revision,
    pub supported: bool,
    pub reason: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub capabilities: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server_info: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session_id_issued: Option<bool>,
    /// HTTP: served only when the MCP header names had the spec's letter case.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub header_names_case_sensitive: Option<bool>,
    /// Initialize era: the version the server's `initialize` result named
    /// (that revision is served if mcpcert knows it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub negotiated: Option<String>,
    /// Why the target could not be reached at all for this revision.
    #[serde(skip)]
    pub unreachable: Option<String>,
    /// HTTP: the probe was turned away for want of credentials (401 or
    /// 403, with its challenge): the server is protected. Set on the
    /// revision whose authorization cases a run without a token judges.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub protected: Option<String>,
    /// HTTP: the probe was redirected (its status and where to).
    #[serde(skip)]
    pub redirect: Option<(u16, String)>,
    /// HTTP: the probe was refused, not for want of a token (a 403 without
    /// a Bearer challenge, a 421): its status and the body's first line.
    #[serde(skip)]
    pub refused: Option<(u16, String)>,
}

impl RevisionInfo {
    pub fn blank(revision: Revision) -> RevisionInfo {
        RevisionInfo {
            revision,
            supported: false,
            reason: String::new(),
            capabilities: None,
            server_info: None,
            session_id_issued: None,
            header_names_case_sensitive: None,
            negotiated: None,
            unreachable: None,
            protected: None,
            redirect: None,
            refused: None,
        }
    }

    /// Whether the server advertises `capabilities.<name>`.
    pub fn advertises(&self, name: &str) -> bool {
        self.capabilities.as_ref().is_some_and(|c| c.get(name).is_some())
    }
}

/// Throughput and latency of a replay, for the reports.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize, PartialEq)]
pub struct LoadStats {
    pub revision: Revision,
    pub connections: usize,
    pub requests: usize,
    pub answered: usize,
    pub wall_ms: u64,
    pub per_second: f64,
    pub p50_ms: u64,
    pub p90_ms: u64,
    pub p99_ms: u64,
    pub max_ms: u64,
}

#[cfg(test)]
mod tests {
    use super::{plain_markdown, reason};

    #[test]
    fn a_reason_names_the_first_finding_and_counts_the_rest() {
        assert_eq!(reason("expected id 7; got null\nframe: {}"), "expected id 7; got null");
        let wire = "3 of 45 server frames break the 2025-11-25 message schema:\n  - reply to tools/list: id null\n      frame: {}\n  - reply to ping: id null\n  … and 1 more, drawn by: a (1)\nthe server's stderr ended with:";
        assert_eq!(reason(wire), "3 of 45 server frames break the 2025-11-25 message schema: reply to tools/list: id null (+2 more)");
        assert_eq!(reason("1 concerns:\n  - echo: hidden\n"), "1 concerns: echo: hidden");
        assert_eq!(reason("nothing follows:"), "nothing follows");
        assert!(!reason("a: b:\n    detail").ends_with(':'));
    }

    #[test]
    fn quotations_lose_their_markdown_but_keep_their_words() {
        assert_eq!(
            plain_markdown("the server **MUST** answer [server/discover](../server/discover.mdx) with `-32602`"),
            "the server MUST answer server/discover with `-32602`"
        );
        assert_eq!(plain_markdown("a [b] c (d) and tools/* as __is__"), "a b c (d) and tools/* as is");
        assert_eq!(
            plain_markdown("on [`subscriptions/listen`][subscriptions-listen] the _requests_ of snake_case_name"),
            "on `subscriptions/listen` the requests of snake_case_name"
        );
    }
}

/// One `tools/call` the run sent, whatever sent it (report.json's
/// `call_log`): the record a safety review works from.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq, PartialOrd, Ord)]
pub struct CallLogEntry {
    pub revision: String,
    /// The tool named (`params.name`), as sent.
    pub tool: String,
    /// What sent it: a case id, a shared fact or a probe's label.
    pub by: String,
    /// What came back: `result`, `result (isError)`, `task`, `error CODE`,
    /// `HTTP STATUS`, `no answer`.
    pub outcome: String,
}

impl CallLogEntry {
    /// The outcome of an exchange, in a word or two.
    pub fn outcome_of(ex: &Exchange) -> String {
        if let Some(r) = ex.result() {
            if r.get("isError") == Some(&serde_json::Value::Bool(true)) {
                return "result (isError)".into();
            }
            if r.get("resultType").and_then(|t| t.as_str()).is_some_and(|t| t != "complete") {
                return format!("result ({})", r["resultType"].as_str().unwrap_or(""));
            }
            return "result".into();
        }
        if let Some(c) = ex.error_code() {
            return format!("error {c}");
        }
        match ex.status {
            Some(s) if !(200..300).contains(&s) => format!("HTTP {s}"),
            _ => "no answer".into(),
        }
    }
}
