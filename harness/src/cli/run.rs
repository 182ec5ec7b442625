//! `mcpcert run`: cases against a live server, then the reports.

use super::setup::{beside, limits_from, masker_from, policy_from, rerun_command, target_from};
use super::signals::{signal_name, watch_signals};
use crate::{EXIT_FAILED, EXIT_OK, EXIT_UNREACHABLE, RunArgs, load_catalog, usage};
use mcpcert::certify::requirements;
use mcpcert::config;
use mcpcert::record::{CaseResult, Verdict};
use mcpcert::report::console::{self, Console};
use mcpcert::report::{self, RunReport, Summary};
use mcpcert::run::plan::Selection;
use mcpcert::run::{Ran, RunConfig, Runner};
use mcpcert::session::Probe;
use mcpcert::suite::Case;
use mcpcert::transport::TargetSpec;
use mcpcert::wire::Revision;

pub fn run(args: RunArgs) -> u8 {
    let run_clock = std::time::Instant::now();
    let catalog = match load_catalog(args.suites.as_ref()) {
        Ok(c) => c,
        Err(e) => return usage(e),
    };
    let revision = match args.revision.as_str() {
        "auto" => None,
        r => match Revision::parse(r) {
            Some(r) => Some(r),
            None => {
                return usage(format!(
                    "--revision must be auto or one of {} (got `{r}`)",
                    Revision::ALL.iter().map(|r| r.as_str()).collect::<Vec<_>>().join(", ")
                ));
            }
        },
    };
    // A requirement set fixes the revision and the cases: those that
    // answer its scenarios.
    let set = match args.requirements.as_deref().map(Revision::parse) {
        None => None,
        Some(Some(r)) if !r.has(mcpcert::wire::Feature::RequirementSet) => {
            return usage(format!(
                "{r} has no requirement set (only 2026-07-28 and 2025-11-25 do): it gets verdicts, not a certificate; run it with --revision {r}"
            ));
        }
        Some(None) => return usage("--requirements must be 2026-07-28 or 2025-11-25"),
        Some(Some(r)) if revision.is_some_and(|x| x != r) => {
            return usage(format!("--requirements {r} runs {r}; it cannot be combined with --revision {}", args.revision));
        }
        Some(Some(r)) => mcpcert::suite::requirements::builtin(r),
    };
    let revision = set.map(|s| s.revision).or(revision);
    let selection = Selection { revision, filter: args.filter.clone(), exact: args.exact, skip: args.skip.clone() };
    let mut cases = selection.apply(&catalog.cases);
    if let Some(set) = set {
        cases.retain(|c| requirements::selects(set, c));
    }
    let mut console = Console::new().with_color(args.color);
    console.quiet = args.quiet;
    if args.list {
        for c in &cases {
            console.line(format!("{}  [{}]", c.id, c.level));
        }
        return EXIT_OK;
    }
    if cases.is_empty() {
        return usage(format!("no case matches {} (`mcpcert list` prints every case id)", selection.describe()));
    }
    let baseline = match &args.expected_failures {
        Some(p) => {
            let known: Vec<&str> = catalog.cases.iter().map(|c| c.id.as_str()).collect();
            let scenarios: Vec<(&str, &str)> =
                catalog.cases.iter().flat_map(|c| c.answers.iter().map(move |a| (a.as_str(), c.id.as_str()))).collect();
            match config::baseline::load(p, &known, &scenarios) {
                Ok(b) => Some(b),
                Err(e) => return usage(format!("--expected-failures {}: {}", e.file, e.problem)),
            }
        }
        None => None,
    };
    let previous = match super::certify::previous_contract(&args) {
        Ok(p) => p,
        Err(e) => return usage(e),
    };
    let cfg_file = match &args.config {
        Some(p) => match config::load(p) {
            Ok(c) => Some((p.clone(), c)),
            Err(e) => return usage(e),
        },
        None => None,
    };
    let limits = limits_from(&args, cfg_file.as_ref().map(|(_, c)| c));
    let target = match target_from(&args, cfg_file.as_ref()) {
        Ok(t) => t,
        Err(e) => return usage(e),
    };
    let mut policy = match policy_from(&args, cfg_file.as_ref()) {
        Ok(p) => p,
        Err(e) => return usage(e),
    };
    let mut derived_origin = None;
    if set.is_some() {
        policy.requirements = true;
        // Certification judges DNS-rebinding protection: a loopback
        // server's own origin is the one it must accept.
        if policy.allowed_origin.is_none() {
            policy.allowed_origin = loopback_origin(&target);
            derived_origin = policy.allowed_origin.clone();
        }
    }
    let masker = masker_from(cfg_file.as_ref().map(|(_, c)| c), &target, &policy);
    let mut rerun_base = rerun_command(&args, &target);
    // A reproducer runs one case without --requirements: it needs the
    // Origin the requirement run chose.
    if let Some(o) = &derived_origin {
        rerun_base.push_str(&format!(" --allowed-origin {}", mcpcert::transport::shell_quote(o)));
    }
    // Only probe the revisions whose cases were selected: one revision of
    // an era is asked for exactly; several of the initialize era, the
    // newest (the server negotiates the one it speaks, and that is tested).
    let revs: std::collections::BTreeSet<Revision> = cases.iter().map(|c| c.revision).collect();
    let effective_rev = revision.or_else(|| {
        let init: Vec<Revision> = revs.iter().copied().filter(|r| !r.is_stateless()).collect();
        match (revs.iter().any(|r| r.is_stateless()), init.as_slice()) {
            (true, []) => Some(Revision::NEWEST_STATELESS),
            (false, [one]) => Some(*one),
            _ => None,
        }
    });

    let rt = match tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            console::err_line(format!("error: cannot start the async runtime: {e}"));
            return EXIT_FAILED;
        }
    };
    let interrupt = watch_signals(&rt);

    let started_unix = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_millis()).unwrap_or(0);
    let mut runner = Runner::new(RunConfig { target: target.clone(), limits, revision: effective_rev, rerun_base, policy });
    let probe = rt.block_on(async {
        let mut irq = interrupt.clone();
        tokio::select! {
            p = runner.prepare() => Some(p),
            _ = irq.wait_for(|s| *s != 0) => None,
        }
    });
    // When the target cannot be reached every case is an error with the
    // reason; it still goes through the same console and reports.
    let target_problem = match &probe {
        Some(Probe::Unreachable(why)) => {
            let why = format!("the target could not be started or reached: {}", masker.text(why));
            console::err_line(format!("error: {why}"));
            Some(why)
        }
        Some(Probe::Unsupported(why)) => {
            let why = format!("the target speaks no revision mcpcert tests: {}", masker.text(why));
            console::err_line(format!("error: {why}"));
            Some(why)
        }
        Some(Probe::Ready) => {
            let mut infos = runner.revision_infos();
            for info in infos.iter_mut() {
                masker.revision(info);
            }
            // Who the server is, first; then what each revision probe found.
            let named: Vec<String> =
                mcpcert::report::html::identities(&infos).iter().map(|(rev, w, n)| format!("{n} (to {w}, {rev})")).collect();
            if !named.is_empty() {
                console::err_line(format!("server: {}", named.join("; ")));
            }
            for info in &infos {
                console::err_line(format!(
                    "revision {}: {} ({})",
                    info.revision,
                    if info.supported { "served" } else { "not served" },
                    info.reason
                ));
            }
            None
        }
        None => None,
    };
    // Under --requirements, a server without the conformance fixtures is
    // told so before anything else: the set cannot be met by it.
    let fixtures_notice = match (&set, &target_problem, &probe) {
        (Some(set), None, Some(Probe::Ready)) => rt.block_on(runner.fixtures_notice(set)),
        _ => None,
    };
    if let Some(n) = &fixtures_notice {
        console::err_line(format!("notice: {n}"));
    }
    // The run tests the revisions probed: the initialize-era one the server
    // negotiated, not the others of that era that were selected.
    if target_problem.is_none() && probe.is_some() {
        let probed: Vec<Revision> = runner.revision_infos().iter().map(|i| i.revision).collect();
        let mut dropped: std::collections::BTreeMap<Revision, usize> = Default::default();
        cases.retain(|c| {
            let keep = probed.contains(&c.revision);
            if !keep {
                *dropped.entry(c.revision).or_default() += 1;
            }
            keep
        });
        // Said when the operator chose the cases (a default run always
        // leaves the other revisions of the era out).
        let chose = args.filter.is_some();
        if !dropped.is_empty() && chose {
            let said: Vec<String> = dropped.iter().map(|(r, n)| format!("{n} of {r}")).collect();
            console::err_line(format!(
                "not tested: {} case{} ({}): the run tests the revision the server negotiated; --revision REV tests another",
                dropped.values().sum::<usize>(),
                if dropped.values().sum::<usize>() == 1 { "" } else { "s" },
                said.join(", ")
            ));
        }
    }
    let strict = args.strict;
    console.line(format!("\nrunning {} case{}", cases.len(), if cases.len() == 1 { "" } else { "s" }));
    // Cases the console does not list one by one: all of them when the
    // target cannot be reached, those of a revision the server does not serve.
    let unserved: Vec<(Revision, String)> = match &target_problem {
        Some(_) => Vec::new(),
        None => runner
            .revision_infos()
            .into_iter()
            .filter(|i| !i.supported && i.unreachable.is_none())
            .map(|i| (i.revision, masker.text(&i.reason)))
            .collect(),
    };
    if let Some(why) = &target_problem {
        let first = why.lines().next().unwrap_or("");
        console.grouped(first, cases.len(), Verdict::Error);
    }
    for (rev, why) in &unserved {
        let n = cases.iter().filter(|c| c.revision == *rev).count();
        if n > 0 {
            console.grouped(&format!("revision {rev} is not served ({why})"), n, Verdict::NotApplicable);
        }
    }
    let progress = super::progress::Ticker::start(runner.waiting(), args.quiet);
    let mut results: Vec<CaseResult> = Vec::new();
    let jobs = args.jobs.unwrap_or_else(|| std::thread::available_parallelism().map_or(4, |n| n.get()).max(4)).max(1);
    // What the run does with each result, in catalogue order.
    let mut finish = |case: &Case, mut res: CaseResult, console: &mut Console| {
        masker.case(&mut res);
        if let Some(set) = set {
            requirements::mark_not_scored(set, &mut res);
        }
        if let Some(b) = &baseline {
            b.mark(&mut res, target.transport());
        }
        let grouped = target_problem.is_some() && res.message.starts_with("not run: the target")
            || (res.verdict == Verdict::NotApplicable && unserved.iter().any(|(r, _)| *r == case.revision));
        if !grouped {
            console.case(&res, strict);
        }
        results.push(res);
    };
    let sig = *interrupt.borrow();
    if sig != 0 {
        // Interrupted before any case ran (while the target started).
        for case in &cases {
            let res = runner.result_for(case, Verdict::Error, format!("not run: the run was interrupted ({})", signal_name(sig)));
            finish(case, res, &mut console);
        }
    } else if let Some(why) = &target_problem {
        for case in &cases {
            let res = runner.result_for(case, Verdict::Error, format!("not run: {why}"));
            finish(case, res, &mut console);
        }
    } else {
        let refs: Vec<&Case> = cases.iter().collect();
        rt.block_on(runner.run_cases(&refs, jobs, interrupt.clone(), |i, ran| {
            let case = refs[i];
            let res = match ran {
                Ran::Done(r) => *r,
                Ran::Stopped { started: true, signal } => {
                    runner.result_for(case, Verdict::Error, format!("interrupted ({}) while it ran", signal_name(signal)))
                }
                Ran::Stopped { started: false, signal } => {
                    runner.result_for(case, Verdict::Error, format!("not run: the run was interrupted ({})", signal_name(signal)))
                }
            };
            finish(case, res, &mut console);
        }));
    }
    drop(progress);
    // The contract, unless the run was cut short or reached nothing.
    let contract_path = args.contract.clone().unwrap_or_else(|| beside(&args.json, "contract.json"));
    let mut contract_failed = false;
    let mut since = None;
    let contract_written = if target_problem.is_none() && *interrupt.borrow() == 0 {
        let tested: Vec<Revision> = cases.iter().map(|c| c.revision).collect();
        let contract = rt.block_on(runner.contract(&tested, started_unix));
        since = previous.as_ref().map(|p| super::certify::since(&args, p, &contract));
        let text = masker.text(&serde_json::to_string_pretty(&contract).unwrap_or_default());
        match report::mkdirs(&contract_path).and_then(|_| std::fs::write(&contract_path, text)) {
            Ok(()) => true,
            Err(e) => {
                console::err_line(format!("error: could not write the contract {}: {e}", contract_path.display()));
                contract_failed = true;
                false
            }
        }
    } else {
        false
    };
    rt.block_on(runner.shutdown());
    let mut revisions = runner.revision_infos();
    revisions.iter_mut().for_each(|r| masker.revision(r));
    let run_warnings: Vec<String> = runner.config_warnings().iter().map(|w| masker.text(w)).collect();
    let notices: Vec<String> = fixtures_notice.iter().cloned().collect();

    // An unreachable target was said once, above; its cases were not run.
    let roots = if target_problem.is_none() { report::roots::root_causes(&results) } else { Vec::new() };
    if target_problem.is_none() {
        console.failures(&results, strict, &roots);
    }
    console.warnings(&results, strict);
    let baseline_summary = baseline.as_ref().map(|b| b.summary(&results));
    if let Some(b) = &baseline_summary {
        console.baseline(&results, b);
    }
    let summary = Summary::of(&results);
    let req_report = set.map(|s| requirements::aggregate(s, &catalog.cases, &results, strict));
    if let Some(q) = &req_report {
        console.requirements(q, strict);
    }
    let mut why: Vec<String> = Vec::new();
    // An interrupted run says so first; the cases the interrupt stopped or
    // kept from running are not counted as the server's failures.
    let sig_now = *interrupt.borrow();
    let by_interrupt = |r: &mcpcert::record::CaseResult| {
        sig_now != 0 && (r.message.starts_with("not run: the run was interrupted") || r.message.starts_with("interrupted ("))
    };
    if sig_now != 0 {
        why.push(format!("interrupted ({})", signal_name(sig_now)));
    }
    let unexpected = if target_problem.is_some() {
        0
    } else {
        results.iter().filter(|r| r.counts_as_failure(strict) && !r.stale_baseline() && !by_interrupt(r)).count()
    };
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
        if sig_now != 0 {
            w.push_str(" in the cases that finished");
        }
        why.push(w);
    }
    // A requirement set whose scored scenarios mcpcert cannot all judge
    // was not met, whatever the cases say.
    let unjudged = req_report.as_ref().map_or(0, |q| q.scenarios.iter().filter(|s| s.scored && s.cases.is_empty()).count());
    if unjudged > 0 {
        why.push(format!("{unjudged} scored scenario{} mcpcert has no case for", if unjudged == 1 { "" } else { "s" }));
    }
    if let Some(b) = baseline_summary.as_ref().filter(|b| !b.stale.is_empty()) {
        why.push(format!("{} stale baseline entr{}", b.stale.len(), if b.stale.len() == 1 { "y" } else { "ies" }));
    }
    if target_problem.is_some() {
        why.push(
            if matches!(probe, Some(Probe::Unsupported(_))) {
                "the target speaks no revision mcpcert tests"
            } else {
                "the target could not be reached"
            }
            .into(),
        );
    }
    if contract_failed {
        why.push("the contract could not be written".into());
    }
    let rep = RunReport {
        format: "mcpcert-run-report",
        format_version: report::JSON_FORMAT_VERSION,
        mcpcert_version: env!("CARGO_PKG_VERSION"),
        suite_digest: catalog.digest.clone(),
        started_at_unix_ms: started_unix,
        duration_ms: run_clock.elapsed().as_millis() as u64,
        peak_rss_kib: report::peak_rss_kib(),
        requests_sent: runner.requests_sent(),
        transport: target.transport(),
        target: target.describe(),
        revision_requested: set.map(|s| s.revision.as_str().to_string()).unwrap_or_else(|| args.revision.clone()),
        revisions,
        strict: args.strict,
        target_problem: target_problem.clone(),
        warnings: run_warnings.clone(),
        notices,
        baseline: baseline_summary.clone(),
        requirements: req_report.clone(),
        summary: summary.clone(),
        load: runner.load_stats(),
        outcome: report::Outcome { passed: why.is_empty(), why: why.clone() },
        roots,
        cases: results,
    };
    let mut write_err = false;
    // The three reports are written at once (the page takes longest).
    let written = std::thread::scope(|s| {
        let junit = s.spawn(|| report::write_junit(&rep, &args.junit, report::JunitStyle { warn: args.junit_warn, na: args.junit_na }));
        let json = s.spawn(|| report::write_json(&rep, &args.json));
        let html = report::write_html(&rep, &args.html);
        let joined = |h: std::thread::ScopedJoinHandle<'_, std::io::Result<()>>| {
            h.join().unwrap_or_else(|_| Err(std::io::Error::other("the writer stopped unexpectedly")))
        };
        [("JUnit", joined(junit)), ("JSON", joined(json)), ("HTML", html)]
    });
    for (what, res) in written {
        if let Err(e) = res {
            console::err_line(format!("error: could not write the {what} report: {e}"));
            write_err = true;
        }
    }
    for w in &run_warnings {
        console.line(format!("\nwarning: {w}"));
    }
    if let Some(path) = &args.write_baseline {
        write_baseline(path, &rep, &args, &mut console, &mut write_err);
    }
    let baseline_note = match &baseline_summary {
        Some(b) => format!(
            "; baseline: {} expected failure{}, {} stale entr{}",
            b.expected_failures,
            if b.expected_failures == 1 { "" } else { "s" },
            b.stale.len(),
            if b.stale.len() == 1 { "y" } else { "ies" }
        ),
        None => String::new(),
    };
    if write_err {
        why.push("a report could not be written".into());
    }
    // The run failed for exactly the reasons the last line gives.
    let failed = !why.is_empty();
    let verdict_word = if why.is_empty() { "ok".to_string() } else { format!("FAILED ({})", why.join("; ")) };
    console.line(format!(
        "\ntest result: {verdict_word}. {} pass, {} fail, {} warn, {} n/a, {} error{baseline_note}; finished in {:.2}s",
        summary.pass,
        summary.fail,
        summary.warn,
        summary.na,
        summary.error,
        run_clock.elapsed().as_secs_f64()
    ));
    console.line(format!("reports: {}, {}, {}", args.junit.display(), args.json.display(), args.html.display()));
    if contract_written {
        console.line(format!("contract: {}", contract_path.display()));
    }
    if *interrupt.borrow() == 0 {
        let recorded = since.as_ref().map(|(lines, s)| {
            for l in lines {
                console.line(masker.text(l));
            }
            s.clone()
        });
        for l in super::certify::finish(&args, &rep, &why, recorded) {
            console.line(l);
        }
    }
    let sig = *interrupt.borrow();
    if sig != 0 {
        return (128 + sig) as u8;
    }
    if target_problem.is_some() {
        return EXIT_UNREACHABLE;
    }
    if failed {
        return EXIT_FAILED;
    }
    EXIT_OK
}

/// `scheme://host:port` of an HTTP target on a loopback host (the origin a
/// local server must accept), None otherwise.
fn loopback_origin(target: &TargetSpec) -> Option<String> {
    let TargetSpec::Http(h) = target else { return None };
    let rest = h.url.split_once("://")?;
    let authority = rest.1.split(['/', '?', '#']).next()?;
    let host = authority.rsplit_once('@').map(|(_, h)| h).unwrap_or(authority);
    let name = host.rsplit_once(':').filter(|(_, p)| p.chars().all(|c| c.is_ascii_digit())).map(|(n, _)| n).unwrap_or(host);
    matches!(name, "localhost" | "127.0.0.1" | "[::1]").then(|| format!("{}://{host}", rest.0))
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
    let (text, n) = mcpcert::config::baseline::write(&rep.cases, rep.strict, &header);
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
