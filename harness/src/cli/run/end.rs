//! Stages 4 to 6 of `mcpcert run`: the contract, the judgement (why the
//! run failed), and the reports with the summary line and exit code.

use super::start::Started;
use crate::cli::certify::since;
use crate::cli::setup::beside;
use crate::cli::signals::signal_name;
use crate::{EXIT_FAILED, EXIT_OK, EXIT_UNREACHABLE, RunArgs};
use mcpcert::certify::certificate::ContractSince;
use mcpcert::certify::requirements;
use mcpcert::config::baseline::Baseline;
use mcpcert::record::{BaselineSummary, CaseResult, RequirementsReport, Verdict};
use mcpcert::report::console::{self, Console};
use mcpcert::report::roots::{RootCause, root_causes};
use mcpcert::report::{self, RunReport, Summary};
use mcpcert::session::Probe;
use mcpcert::wire::Revision;
use std::path::PathBuf;

/// The contract file, if written, and the changes since the previous one.
pub(super) struct Contracted {
    path: PathBuf,
    written: bool,
    failed: bool,
    since: Option<(Vec<String>, ContractSince)>,
}

/// The contract, unless the run was cut short or reached nothing.
pub(super) fn contract(args: &RunArgs, s: &Started) -> Contracted {
    let path = args.contract.clone().unwrap_or_else(|| beside(&args.json, "contract.json"));
    let mut c = Contracted { path, written: false, failed: false, since: None };
    if s.target_problem.is_none() && s.signal() == 0 {
        let tested: Vec<Revision> = s.plan.cases.iter().map(|c| c.revision).collect();
        let contract = s.rt.block_on(s.runner.contract(&tested, s.started_unix_ms));
        c.since = s.plan.previous.as_ref().map(|p| since(args, p, &contract));
        let text = s.plan.masker.text(&serde_json::to_string_pretty(&contract).unwrap_or_default());
        match report::mkdirs(&c.path).and_then(|_| std::fs::write(&c.path, text)) {
            Ok(()) => c.written = true,
            Err(e) => {
                console::err_line(format!("error: could not write the contract {}: {e}", c.path.display()));
                c.failed = true;
            }
        }
    }
    c
}

/// What the run found, before the reports are written.
pub(super) struct Judged {
    results: Vec<CaseResult>,
    roots: Vec<RootCause>,
    baseline: Option<BaselineSummary>,
    requirements: Option<RequirementsReport>,
    summary: Summary,
    /// Why the run failed (empty: it passed), as the last line says it.
    why: Vec<String>,
}

/// The console's failures, warnings, baseline and requirement set, and why
/// the run failed.
pub(super) fn judge(args: &RunArgs, s: &Started, results: Vec<CaseResult>, c: &Contracted, console: &mut Console) -> Judged {
    let strict = args.strict;
    // An unreachable target was said once, above; its cases were not run.
    let roots = if s.target_problem.is_none() { root_causes(&results) } else { Vec::new() };
    if s.target_problem.is_none() {
        console.failures(&results, strict, &roots);
    }
    console.warnings(&results, strict);
    let baseline = s.plan.baseline.as_ref().map(|b| b.summary(&results));
    if let Some(b) = &baseline {
        console.baseline(&results, b);
    }
    let requirements = s.plan.set.map(|set| requirements::aggregate(set, &s.plan.catalog.cases, &results, strict));
    if let Some(q) = &requirements {
        console.requirements(q, strict);
    }
    let mut why = failures_why(s, &results, strict, s.plan.baseline.as_ref());
    // A requirement set whose scored scenarios mcpcert cannot all judge
    // was not met, whatever the cases say.
    let unjudged = requirements.as_ref().map_or(0, |q| q.scenarios.iter().filter(|s| s.scored && s.cases.is_empty()).count());
    if unjudged > 0 {
        why.push(format!("{unjudged} scored scenario{} mcpcert has no case for", if unjudged == 1 { "" } else { "s" }));
    }
    // A scored scenario no case of this server showed (every case n/a: an
    // extension it does not ship, a capability it does not advertise)
    // fails the set though no case failed.
    let unshown = requirements.as_ref().map_or(0, |q| {
        q.scenarios
            .iter()
            .filter(|sc| sc.scored && sc.verdict == mcpcert::record::Verdict::Fail)
            .filter(|sc| !results.iter().any(|r| sc.cases.contains(&r.id) && r.verdict == mcpcert::record::Verdict::Fail))
            .count()
    });
    if unshown > 0 {
        why.push(format!("{unshown} scored scenario{} not shown on this server", if unshown == 1 { "" } else { "s" }));
    }
    if let Some(b) = baseline.as_ref().filter(|b| !b.stale.is_empty()) {
        why.push(format!("{} stale baseline entr{}", b.stale.len(), if b.stale.len() == 1 { "y" } else { "ies" }));
    }
    if let Some(p) = &s.target_problem {
        why.push(match &s.probe {
            Some(Probe::Unsupported(w)) if w.starts_with("--revision") => "the server does not serve the revision asked for".into(),
            Some(Probe::Unsupported(_)) => "the target speaks no revision mcpcert tests".into(),
            _ if p.starts_with("the server redirects") => "the URL redirects elsewhere: pass the endpoint itself".into(),
            _ => "the target could not be reached".into(),
        });
    }
    if c.failed {
        why.push("the contract could not be written".into());
    }
    let summary = Summary::of(&results);
    Judged { results, roots, baseline, requirements, summary, why }
}

/// The interrupt first, then the failures that count against the run (not
/// those of cases the interrupt stopped or kept from running).
fn failures_why(s: &Started, results: &[CaseResult], strict: bool, baseline: Option<&Baseline>) -> Vec<String> {
    let mut why = Vec::new();
    let sig = s.signal();
    let by_interrupt =
        |r: &CaseResult| sig != 0 && (r.message.starts_with("not run: the run was interrupted") || r.message.starts_with("interrupted ("));
    if sig != 0 {
        why.push(format!("interrupted ({})", signal_name(sig)));
    }
    if s.target_problem.is_some() {
        return why;
    }
    let unexpected = results.iter().filter(|r| r.counts_as_failure(strict) && !r.stale_baseline() && !by_interrupt(r)).count();
    if unexpected > 0 {
        let strict_warns = results.iter().filter(|r| strict && r.verdict == Verdict::Warn && r.counts_as_failure(strict)).count();
        let mut w = format!(
            "{unexpected} {}failure{}",
            if baseline.is_some() { "unexpected " } else { "" },
            if unexpected == 1 { "" } else { "s" }
        );
        if strict_warns > 0 {
            w.push_str(&format!(", {strict_warns} of them warn under --strict"));
        }
        if sig != 0 {
            w.push_str(" in the cases that finished");
        }
        why.push(w);
    }
    why
}

/// The reports, the warnings, the baseline written, the summary line, the
/// certificate; then the exit code.
pub(super) fn report(args: &RunArgs, s: Started, j: Judged, c: Contracted, clock: std::time::Instant, console: &mut Console) -> u8 {
    let mut revisions = s.runner.revision_infos();
    revisions.iter_mut().for_each(|r| s.plan.masker.revision(r));
    let warnings: Vec<String> = s.runner.config_warnings().iter().map(|w| s.plan.masker.text(w)).collect();
    let mut why = j.why;
    // A protected server judged without a token: never shown as passed.
    let protected = matches!(s.probe, Some(mcpcert::session::Probe::Protected(_)));
    let drafts = drafts(&s, &revisions);
    let not_judged =
        protected.then(|| "protected: only what needs no token was judged; give mcpcert a token to judge the rest".to_string());
    let rep = RunReport {
        format: "mcpcert-run-report",
        format_version: report::JSON_FORMAT_VERSION,
        mcpcert_version: env!("CARGO_PKG_VERSION"),
        suite_digest: s.plan.catalog.digest.clone(),
        started_at_unix_ms: s.started_unix_ms,
        duration_ms: clock.elapsed().as_millis() as u64,
        peak_rss_kib: report::peak_rss_kib(),
        // With the DELETEs that end the run's sessions, sent while the
        // reports are written.
        requests_sent: s.runner.requests_sent() + s.runner.sessions_to_end() as u64,
        server_processes: s.runner.server_processes(),
        transport: s.plan.target.transport(),
        target: {
            let mut t = s.plan.target.describe();
            if let Some(o) = &s.plan.origin {
                t["server_json"] = o.clone();
            }
            // A secret argument (a server.json's isSecret positional) is in
            // the command line itself.
            s.plan.masker.value(&mut t);
            t
        },
        revision_requested: s.plan.set.map(|x| x.revision.as_str().to_string()).unwrap_or_else(|| args.revision.clone()),
        revisions,
        strict: args.strict,
        target_problem: s.target_problem.clone(),
        warnings: warnings.clone(),
        notices: s.notices.clone(),
        coverage: s.runner.coverage(clock.elapsed().as_millis() as u64).iter().map(|c| s.plan.masker.text(c)).collect(),
        drafts,
        baseline: j.baseline.clone(),
        requirements: j.requirements,
        summary: j.summary.clone(),
        load: s.runner.load_stats(),
        outcome: report::Outcome { passed: why.is_empty() && !protected, why: why.iter().cloned().chain(not_judged.clone()).collect() },
        roots: j.roots,
        call_log: {
            let (mut log, _) = s.runner.call_log();
            for e in &mut log {
                e.by = s.plan.masker.text(&e.by);
                e.tool = s.plan.masker.text(&e.tool);
            }
            log
        },
        call_log_dropped: s.runner.call_log().1,
        cases: j.results,
    };
    let mut rep = rep;
    // `--evidence failing`: the evidence of the cases that did not pass
    // only (a board's reports, kept for thousands of servers): a case that
    // passed or did not apply keeps its id, title, level and verdict (and
    // why it did not apply), not its transcript, spec section or basis
    // sentence (the catalogue's, the same for every server).
    if args.evidence == "failing" {
        for c in rep.cases.iter_mut().filter(|c| matches!(c.verdict, Verdict::Pass | Verdict::NotApplicable)) {
            c.transcript.clear();
            c.spec.clear();
            c.basis.quote.clear();
            c.basis.source.clear();
            c.answers.clear();
        }
    }
    let mut write_err = !write_reports(args, &rep, &s);
    for w in &warnings {
        console.line(format!("\nwarning: {w}"));
    }
    for c in &rep.coverage {
        console.line(format!("\ncoverage: {c}"));
    }
    for d in &rep.drafts {
        console.line(format!("\n{}", d.lines().join("\n")));
    }
    if let Some(path) = &args.write_baseline {
        write_baseline(path, &rep, args, console, &mut write_err);
    }
    if write_err {
        why.push("a report could not be written".into());
    }
    let shown: Vec<String> = why.iter().cloned().chain(not_judged).collect();
    summary_line(args, &rep, &shown, j.baseline.as_ref(), clock, console);
    if c.written {
        console.line(format!("contract: {}", c.path.display()));
    } else if s.signal() != 0 {
        // A contract is what a whole run saw: an interrupted one writes none.
        console.line(format!(
            "contract: not written ({} keeps the previous run's, if any): the run was interrupted, and a contract is written only for a whole run",
            c.path.display()
        ));
    }
    if s.signal() == 0 {
        let recorded = c.since.as_ref().map(|(lines, since)| {
            for l in lines {
                console.line(s.plan.masker.text(l));
            }
            since.clone()
        });
        for l in crate::cli::certify::finish(args, &rep, &why, recorded) {
            console.line(l);
        }
    }
    let code = match (s.signal(), &s.target_problem, why.is_empty()) {
        (sig, _, _) if sig != 0 => (128 + sig) as u8,
        (_, Some(_), _) => EXIT_UNREACHABLE,
        (_, None, false) => EXIT_FAILED,
        // Judged only what needs no token: never read as passed.
        (_, None, true) if protected => crate::EXIT_PROTECTED,
        (_, None, true) => EXIT_OK,
    };
    // The process ends next: the report and the catalogue (all of the run's
    // transcripts and cases) are not freed piece by piece first. The runtime
    // does not wait for its idle threads; the runner is dropped as before
    // (that ends the server processes).
    let Started { plan, rt, runner, .. } = s;
    rt.shutdown_background();
    drop(runner);
    std::mem::forget(rep);
    std::mem::forget(plan);
    code
}

/// Over Streamable HTTP, what the drafts of the spec say about the target
/// (the server card), as notes; masked like the rest of the report.
fn drafts(s: &Started, revisions: &[mcpcert::record::RevisionInfo]) -> Vec<mcpcert::record::DraftNote> {
    let streamable = revisions.iter().any(|r| r.supported && r.revision.as_str() != "2024-11-05");
    let (Some(url), true, 0) = (s.plan.target.url(), streamable, s.signal()) else { return Vec::new() };
    let mut d = s.rt.block_on(mcpcert::run::card::server_card(url, revisions));
    let m = &s.plan.masker;
    d.url = m.text(&d.url);
    d.found = m.text(&d.found);
    d.notes = d.notes.iter().map(|n| m.text(n)).collect();
    vec![d]
}

/// JUnit, JSON and HTML, written at once, each on a thread, while the run
/// shuts down (its sessions ended, its connections and processes closed);
/// false if one could not be written (said on stderr).
fn write_reports(args: &RunArgs, rep: &RunReport, started: &Started) -> bool {
    let written = std::thread::scope(|s| {
        let junit = s.spawn(|| {
            let r = report::write_junit(rep, &args.junit, report::JunitStyle { warn: args.junit_warn, na: args.junit_na });
            crate::cli::signals::written(crate::cli::signals::JUNIT);
            r
        });
        let json = s.spawn(|| {
            let r = report::write_json(rep, &args.json);
            crate::cli::signals::written(crate::cli::signals::JSON);
            r
        });
        let html = s.spawn(|| report::write_html(rep, &args.html));
        started.rt.block_on(started.runner.shutdown());
        let joined = |h: std::thread::ScopedJoinHandle<'_, std::io::Result<()>>| {
            h.join().unwrap_or_else(|_| Err(std::io::Error::other("the writer stopped unexpectedly")))
        };
        [("JUnit", joined(junit)), ("JSON", joined(json)), ("HTML", joined(html))]
    });
    let mut ok = true;
    for (what, res) in written {
        if let Err(e) = res {
            console::err_line(format!("error: could not write the {what} report: {e}"));
            ok = false;
        }
    }
    ok
}

/// The last lines: the run failed for exactly the reasons given.
fn summary_line(
    args: &RunArgs,
    rep: &RunReport,
    why: &[String],
    b: Option<&BaselineSummary>,
    clock: std::time::Instant,
    console: &mut Console,
) {
    let baseline_note = match b {
        Some(b) => format!(
            "; baseline: {} expected failure{}, {} stale entr{}",
            b.expected_failures,
            if b.expected_failures == 1 { "" } else { "s" },
            b.stale.len(),
            if b.stale.len() == 1 { "y" } else { "ies" }
        ),
        None => String::new(),
    };
    let verdict_word = if why.is_empty() { "ok".to_string() } else { format!("FAILED ({})", why.join("; ")) };
    let s = &rep.summary;
    console.line(format!(
        "\ntest result: {verdict_word}. {} pass, {} fail, {} warn, {} n/a, {} error{baseline_note}; finished in {:.2}s",
        s.pass,
        s.fail,
        s.warn,
        s.na,
        s.error,
        clock.elapsed().as_secs_f64()
    ));
    console.line(format!("reports: {}, {}, {}", args.junit.display(), args.json.display(), args.html.display()));
}

/// `--write-baseline FILE`: the run's failures and errors as a baseline
/// (never from a run that did not judge the server).
fn write_baseline(path: &std::path::Path, rep: &RunReport, args: &RunArgs, console: &mut Console, write_err: &mut bool) {
    let why_not = if rep.target_problem.is_some() {
        Some("the target could not be reached, so the run judged nothing")
    } else if rep.outcome.why.iter().any(|w| w.starts_with("interrupted (")) {
        Some("the run was interrupted, so it did not judge every case")
    } else {
        None
    };
    if let Some(why) = why_not {
        console.line(format!("baseline not written to {}: {why}", path.display()));
        return;
    }
    let target = rep.target.get("command").or_else(|| rep.target.get("url")).and_then(|v| v.as_str()).unwrap_or("the target");
    let mut header = vec![
        format!("Known failures of `{target}` ({}), written by mcpcert {} (--write-baseline).", rep.transport, rep.mcpcert_version),
        "Each entry: a case that failed, and why it failed then. Pass this file with --expected-failures:".into(),
        "these cases then do not fail the run; one that passes again does (a stale entry: remove it).".into(),
    ];
    if args.filter.is_some() || !args.skip.is_empty() {
        header.push("The run was narrowed by a filter or --skip: only its cases are here.".into());
    }
    let (text, n) = mcpcert::config::baseline::write(&rep.cases, rep.strict, rep.transport, &header);
    match report::mkdirs(path).and_then(|_| std::fs::write(path, text)) {
        Ok(()) => console.line(format!(
            "baseline: {} ({n} entr{}: the run's failures and errors; next time: --expected-failures {})",
            path.display(),
            if n == 1 { "y" } else { "ies" },
            path.display()
        )),
        Err(e) => {
            console::err_line(format!("error: could not write the baseline {}: {e}", path.display()));
            *write_err = true;
        }
    }
}
