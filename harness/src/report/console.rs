//! The console: a line per case as it finishes, then the failures with
//! their reproducers, then the counts. Writing never panics: once stdout
//! is closed (`mcpcert … | head`), console output stops quietly and the run
//! goes on to write its reports.

use crate::record::{BaselineOutcome, BaselineSummary, CaseResult, RequirementsReport, Verdict};
use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicBool, Ordering};

/// Whether a live progress line is on stderr now (cleared before a line).
pub static PROGRESS_SHOWN: AtomicBool = AtomicBool::new(false);

/// Clear the live progress line, if one is shown.
pub fn clear_progress() {
    if PROGRESS_SHOWN.swap(false, Ordering::SeqCst) {
        let mut err = std::io::stderr().lock();
        let _ = write!(err, "\r\x1b[2K");
        let _ = err.flush();
    }
}

/// `--color`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ColorMode {
    /// On a terminal, unless NO_COLOR is set.
    #[default]
    Auto,
    Always,
    Never,
}

pub struct Console {
    closed: bool,
    color: bool,
    /// `--quiet`: no line per case.
    pub quiet: bool,
    /// `--verbose`: a line for every case, passes and n/a included.
    pub verbose: bool,
    /// Without `--verbose`: the passes and n/a, said grouped once the
    /// cases have run (by area, and the n/a by reason).
    held: Vec<Held>,
    /// Cases not run (an interrupt, a target that could not be tested):
    /// one line per reason.
    not_run: Vec<(String, usize)>,
}

/// A case the console says in a group.
struct Held {
    /// `REVISION/AREA`.
    area: String,
    verdict: Verdict,
    reason: String,
}

impl Default for Console {
    fn default() -> Self {
        Self::new()
    }
}

impl Console {
    pub fn new() -> Console {
        Console { closed: false, color: false, quiet: false, verbose: false, held: Vec::new(), not_run: Vec::new() }
    }

    pub fn with_color(mut self, mode: ColorMode) -> Console {
        self.color = match mode {
            ColorMode::Always => true,
            ColorMode::Never => false,
            ColorMode::Auto => std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none(),
        };
        self
    }

    /// `word` in the colour of `v` (when colour is on).
    fn paint(&self, v: Option<Verdict>, word: &str) -> String {
        let code = match v {
            _ if !self.color => return word.to_string(),
            Some(Verdict::Pass) => "32",
            Some(Verdict::Fail) | Some(Verdict::Error) => "1;31",
            Some(Verdict::Warn) => "33",
            Some(Verdict::NotApplicable) => "2",
            None => "36",
        };
        format!("\x1b[{code}m{word}\x1b[0m")
    }

    /// One line on stdout (nothing once stdout is closed).
    pub fn line(&mut self, text: impl AsRef<str>) {
        if self.closed {
            return;
        }
        clear_progress();
        let mut out = std::io::stdout().lock();
        if writeln!(out, "{}", text.as_ref()).and_then(|_| out.flush()).is_err() {
            self.closed = true;
        }
    }

    /// The line for a finished case: mcpcert's own words (pass, FAIL, warn,
    /// n/a, ERROR), never `ok` for anything but a pass.
    pub fn case(&mut self, r: &CaseResult, strict: bool) {
        if self.quiet {
            return;
        }
        if !self.verbose && !r.expected_failure() && !r.stale_baseline() {
            if let Some(why) = r.message.strip_prefix("not run: ") {
                let why = first_line(why).to_string();
                match self.not_run.iter_mut().find(|(w, _)| *w == why) {
                    Some(x) => x.1 += 1,
                    None => self.not_run.push((why, 1)),
                }
                return;
            }
            if matches!(r.verdict, Verdict::Pass | Verdict::NotApplicable) {
                let area = r.id.splitn(3, '/').take(2).collect::<Vec<_>>().join("/");
                self.held.push(Held { area, verdict: r.verdict, reason: first_line(&r.message).to_string() });
                return;
            }
        }
        let outcome = if r.expected_failure() {
            self.paint(None, &format!("expected failure ({})", r.verdict.as_str()))
        } else if r.stale_baseline() {
            self.paint(Some(Verdict::Fail), "pass, but the baseline expects a failure (stale entry)")
        } else {
            match r.verdict {
                Verdict::Warn if strict => self.paint(Some(Verdict::Fail), &format!("FAIL (warn: {} not met, --strict)", r.level)),
                Verdict::Warn => self.paint(Some(Verdict::Warn), &format!("warn ({} not met)", r.level)),
                Verdict::NotApplicable => {
                    format!("{}: {}", self.paint(Some(Verdict::NotApplicable), Verdict::NotApplicable.word()), first_line(&r.message))
                }
                v => self.paint(Some(v), v.word()),
            }
        };
        self.line(format!("test {:<12} {} ... {outcome}", format!("[{}]", r.level), r.id));
    }

    /// What the console held back without `--verbose`, once the cases have
    /// run: a line per area with its passes and n/a (the failing cases were
    /// said as they finished), the n/a by reason with their counts, and
    /// the cases not run, a line per reason. The reports keep every case.
    pub fn groups(&mut self) {
        let held = std::mem::take(&mut self.held);
        let not_run = std::mem::take(&mut self.not_run);
        if !held.is_empty() {
            let mut areas: Vec<(&str, usize, usize)> = Vec::new();
            for h in &held {
                let i = match areas.iter().position(|a| a.0 == h.area) {
                    Some(i) => i,
                    None => {
                        areas.push((&h.area, 0, 0));
                        areas.len() - 1
                    }
                };
                if h.verdict == Verdict::Pass { areas[i].1 += 1 } else { areas[i].2 += 1 }
            }
            let width = areas.iter().map(|a| a.0.len()).max().unwrap_or(0);
            self.line("\npassed and n/a, by area (--verbose prints each case; the reports keep them all):");
            for (area, pass, na) in &areas {
                let mut said = Vec::new();
                if *pass > 0 {
                    said.push(format!("{pass} {}", self.paint(Some(Verdict::Pass), "pass")));
                }
                if *na > 0 {
                    said.push(format!("{na} {}", self.paint(Some(Verdict::NotApplicable), "n/a")));
                }
                self.line(format!("    {area:<width$}  {}", said.join(", ")));
            }
            // (group, count, the first reason whole, whether all say it alike)
            let mut reasons: Vec<(String, usize, &str, bool)> = Vec::new();
            for h in held.iter().filter(|h| h.verdict == Verdict::NotApplicable) {
                let key = na_key(&h.reason);
                match reasons.iter_mut().find(|r| r.0 == key) {
                    Some(r) => {
                        r.1 += 1;
                        r.3 &= r.2 == h.reason;
                    }
                    None => reasons.push((key.to_string(), 1, &h.reason, true)),
                }
            }
            if !reasons.is_empty() {
                reasons.sort_by_key(|r| std::cmp::Reverse(r.1));
                self.line("\nn/a, by reason:");
                for (key, n, first, alike) in &reasons {
                    let said = if *alike { first.to_string() } else { format!("{key} (each case names its own: --verbose)") };
                    self.line(format!("    {n:>4} {}: {said}", self.paint(Some(Verdict::NotApplicable), "n/a")));
                }
            }
        }
        for (why, n) in &not_run {
            let word = self.paint(Some(Verdict::Error), Verdict::Error.word());
            self.line(format!("\n{n} case{} not run ({word} in the reports): {why}", if *n == 1 { "" } else { "s" }));
        }
    }

    /// The line for cases the console does not show one by one (a revision
    /// the server does not serve, a target that could not be reached).
    pub fn grouped(&mut self, what: &str, count: usize, verdict: Verdict) {
        let word = self.paint(Some(verdict), verdict.word());
        self.line(format!("{what}: {count} case{} {word} (each in the reports)", if count == 1 { "" } else { "s" }));
    }

    /// Every case that counts against the run, with its full text.
    pub fn failures(&mut self, results: &[CaseResult], strict: bool, roots: &[super::roots::RootCause]) {
        let all: Vec<&CaseResult> = results.iter().filter(|r| r.counts_as_failure(strict) && !r.stale_baseline()).collect();
        if all.is_empty() {
            return;
        }
        // Cases that were not run (an unreachable target, an interrupted
        // run) share one reason: said once, with their count.
        let (not_run, failed): (Vec<&CaseResult>, Vec<&CaseResult>) = all.iter().partition(|r| r.message.starts_with("not run: "));
        self.line("\nfailures:");
        let mut reasons: Vec<(&str, usize)> = Vec::new();
        for r in &not_run {
            match reasons.iter_mut().find(|(m, _)| *m == r.message) {
                Some(x) => x.1 += 1,
                None => reasons.push((&r.message, 1)),
            }
        }
        for (m, n) in &reasons {
            self.line(format!(
                "\n---- {n} case{} {} ----\n{m}",
                if *n == 1 { "" } else { "s" },
                if *n == 1 { "was not run" } else { "were not run" }
            ));
        }
        for r in &failed {
            self.line(format!("\n---- {} ({}) ----\n{}", r.id, r.verdict.as_str(), super::failure_text(r).trim_end()));
            if let Some(t) = &r.stderr_tail {
                self.line(format!("\nthe server's stderr ended with:\n{t}"));
            }
            if let Some(g) = super::roots::cause_of(roots, &r.id) {
                let n = g.all().count();
                self.line(format!(
                    "\nroot cause shared with {} other case{} (listed below): {}",
                    n - 1,
                    if n == 2 { "" } else { "s" },
                    g.heading()
                ));
            }
        }
        self.line("\nfailures:");
        // Causes first, each with the failing cases it explains beneath.
        let counted = |id: &String| failed.iter().find(|r| &r.id == id);
        let mut shown: Vec<&str> = Vec::new();
        for g in roots {
            let members: Vec<&&CaseResult> = g.all().filter_map(counted).collect();
            if members.is_empty() {
                continue;
            }
            self.line(format!("    root cause ({} case{}): {}", g.all().count(), if g.all().count() == 1 { "" } else { "s" }, g.heading()));
            for r in &members {
                let via = if g.frames_of.contains(&r.id) { ": reports the frames of these cases" } else { "" };
                self.line(format!("        {} ({}{via})", r.id, r.verdict.as_str()));
                shown.push(&r.id);
            }
            let rest: Vec<String> = results
                .iter()
                .filter(|r| g.all().any(|x| x == &r.id) && !members.iter().any(|m| m.id == r.id))
                .map(|r| format!("{} ({})", r.id, r.verdict.as_str()))
                .collect();
            if !rest.is_empty() {
                self.line(format!("        and, not failing the run: {}", rest.join(", ")));
            }
        }
        for r in failed.iter().filter(|r| !shown.contains(&r.id.as_str())) {
            self.line(format!("    {}", r.id));
        }
        if !not_run.is_empty() {
            self.line(format!("    ({} cases not run)", not_run.len()));
        }
    }

    /// SHOULD-level findings that do not fail the run.
    pub fn warnings(&mut self, results: &[CaseResult], strict: bool) {
        let warns: Vec<&CaseResult> = results.iter().filter(|r| r.verdict == Verdict::Warn && !r.expected_failure()).collect();
        if warns.is_empty() || strict {
            return;
        }
        self.line("\nwarnings (SHOULD-level rules not met; --strict makes them fail):");
        for w in &warns {
            self.line(format!("    {}: {}", w.id, w.reason()));
        }
    }
}

impl Console {
    /// Each scenario of the requirement set with its verdict.
    pub fn requirements(&mut self, q: &RequirementsReport, strict: bool) {
        self.line(format!(
            "\nrequirement set {}: {} of {} scored scenarios pass{} ({} apply to this target)",
            q.revision,
            q.passed,
            q.scored,
            if strict { " under --strict" } else { "" },
            q.applicable
        ));
        for s in &q.scenarios {
            let word = match s.verdict {
                Verdict::Pass => "pass",
                Verdict::Warn if !strict => "pass (warn)",
                Verdict::Warn => "FAIL (warn, --strict)",
                Verdict::Fail if s.expected => "fail (expected)",
                Verdict::Fail => "FAIL",
                Verdict::Error => "ERROR",
                Verdict::NotApplicable => "n/a",
            };
            let scored = if s.scored { String::new() } else { format!(" [not scored: {}]", s.reason.as_deref().unwrap_or("")) };
            let why = if s.message.is_empty() { String::new() } else { format!(": {}", s.message) };
            self.line(format!("  {word:<22} {}{scored}{why}", s.name));
            for b in s.beyond.iter().filter(|b| matches!(b.verdict, Verdict::Fail | Verdict::Warn | Verdict::Error)) {
                self.line(format!("  {:<22}   beyond the requirement set: {} ({}): {}", "", b.id, b.verdict.as_str(), b.message));
            }
        }
    }

    /// What the expected-failures baseline made of the run.
    pub fn baseline(&mut self, results: &[CaseResult], b: &BaselineSummary) {
        let expected: Vec<&CaseResult> = results.iter().filter(|r| r.expected_failure()).collect();
        if !expected.is_empty() {
            self.line(format!("\nexpected failures (in the baseline {}):", b.file));
            for r in &expected {
                let reason = r.baseline.as_ref().map(|m| m.reason.as_str()).unwrap_or("");
                self.line(format!("    {} ({}): {reason}", r.id, r.verdict.as_str()));
            }
        }
        if !b.stale.is_empty() {
            self.line("\nstale baseline entries (these cases pass now: remove the entries):");
            for key in &b.stale {
                self.line(format!("    {key}"));
            }
        }
        if b.not_applicable > 0 {
            let na: Vec<&str> = results
                .iter()
                .filter_map(|r| r.baseline.as_ref())
                .filter(|m| m.outcome == BaselineOutcome::NotApplicable)
                .map(|m| m.entry.as_str())
                .collect();
            self.line(format!("\nbaseline entries whose case does not apply here (kept): {}", na.join(", ")));
        }
    }
}

/// A line on stderr; a closed stderr is ignored.
pub fn err_line(text: impl AsRef<str>) {
    let mut err = std::io::stderr().lock();
    let _ = writeln!(err, "{}", text.as_ref());
}

fn first_line(s: &str) -> &str {
    s.lines().next().unwrap_or("")
}

/// An n/a reason's group: the words before its first colon, when what
/// follows only names the instance ("the server has no conformance
/// fixtures: the server does not list tool `test_sampling` …"); else the
/// whole reason.
fn na_key(reason: &str) -> &str {
    if let Some(i) = reason.find(": ") {
        let (head, detail) = (&reason[..i], &reason[i + 2..]);
        let plain = !head.contains(['(', '{', '[', '"', '`']);
        if plain && head.split_whitespace().count() >= 3 && (detail.contains('`') || detail.contains('"')) {
            return head;
        }
    }
    reason
}
