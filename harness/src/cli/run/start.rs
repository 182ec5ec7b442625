//! Stages 2 and 3 of `mcpcert run`: start (runtime, signals, the revision
//! probes and the header lines) and the cases.

use super::plan::Plan;
use crate::cli::signals::{Interrupt, signal_name, watch_signals};
use crate::{EXIT_FAILED, RunArgs};
use mcpcert::certify::requirements;
use mcpcert::record::{CaseResult, Verdict};
use mcpcert::report::console::{self, Console};
use mcpcert::run::{Ran, RunConfig, Runner};
use mcpcert::session::Probe;
use mcpcert::suite::Case;
use mcpcert::wire::Revision;

/// A run whose target has been probed.
pub(super) struct Started {
    pub plan: Plan,
    pub rt: tokio::runtime::Runtime,
    pub interrupt: Interrupt,
    pub runner: Runner,
    /// None when interrupted while the target started.
    pub probe: Option<Probe>,
    /// Why no case can run: the target could not be reached, or speaks no
    /// revision mcpcert tests.
    pub target_problem: Option<String>,
    /// What a reader must know first (see `Runner::fixtures_notice`).
    pub notices: Vec<String>,
    /// Revisions the server does not serve, with why (their cases are one
    /// console line).
    pub unserved: Vec<(Revision, String)>,
    pub started_unix_ms: u128,
}

impl Started {
    /// The signal that interrupted the run, 0 if none.
    pub fn signal(&self) -> i32 {
        *self.interrupt.borrow()
    }
}

pub(super) fn start(args: &RunArgs, mut plan: Plan) -> Result<Started, u8> {
    // One thread: the run mostly waits on the server, and the work between
    // (parsing, judging) is short; a second worker only added wake-ups
    // between threads, and on a small machine took CPU from a local server.
    // The reports are written on threads of their own.
    let rt = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            console::err_line(format!("error: cannot start the async runtime: {e}"));
            return Err(EXIT_FAILED);
        }
    };
    let interrupt = watch_signals(&rt);
    if let Some(issuer) = plan.issuer.take() {
        console::err_line(format!("auth: mcpcert's test issuer at {} (JWKS {}) signs the run's tokens", issuer.url(), issuer.jwks_url()));
        rt.spawn(issuer.serve());
    }
    if let Some(up) = plan.upstream.take() {
        console::err_line(format!("auth: mcpcert plays the server's upstream at {}", up.url()));
        rt.spawn(up.serve());
    }
    let started_unix_ms = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_millis()).unwrap_or(0);
    let cfg = RunConfig {
        target: plan.target.clone(),
        limits: plan.limits.clone(),
        revision: plan.probe_revision,
        rerun_base: plan.rerun_base.clone(),
        policy: std::mem::take(&mut plan.policy),
    };
    let mut runner = Runner::new(cfg);
    let probe = rt.block_on(async {
        let mut irq = interrupt.clone();
        tokio::select! {
            p = runner.prepare() => Some(p),
            _ = irq.wait_for(|s| *s != 0) => None,
        }
    });
    let target_problem = header(&runner, &plan, probe.as_ref());
    // Under --requirements, a server without the conformance fixtures is
    // told so before anything else: the set cannot be met by it.
    let notice = match (plan.set, &target_problem, &probe) {
        (Some(set), None, Some(Probe::Ready)) => rt.block_on(runner.fixtures_notice(set)),
        _ => None,
    };
    if let Some(n) = &notice {
        console::err_line(format!("notice: {n}"));
    }
    if target_problem.is_none() && probe.is_some() {
        keep_probed(args, &runner, &mut plan.cases);
    }
    let unserved = match &target_problem {
        Some(_) => Vec::new(),
        None => runner
            .revision_infos()
            .into_iter()
            .filter(|i| !i.supported && i.unreachable.is_none())
            .map(|i| (i.revision, plan.masker.text(&i.reason)))
            .collect(),
    };
    let notices = notice.into_iter().collect();
    Ok(Started { plan, rt, interrupt, runner, probe, target_problem, notices, unserved, started_unix_ms })
}

/// The header lines on stderr: who the server is, then what each revision
/// probe found; or why the target cannot be tested (returned).
fn header(runner: &Runner, plan: &Plan, probe: Option<&Probe>) -> Option<String> {
    let masker = &plan.masker;
    match probe {
        // A URL that redirects names where to go: said as it is.
        Some(Probe::Unreachable(why)) if why.starts_with("the server redirects") => {
            let why = masker.text(why);
            console::err_line(format!("error: {why}"));
            Some(why)
        }
        Some(Probe::Unreachable(why)) => {
            let why = format!("the target could not be started or reached: {}", masker.text(why));
            console::err_line(format!("error: {why}"));
            Some(why)
        }
        // One revision asked for, another served: said as it is.
        Some(Probe::Unsupported(why)) if why.starts_with("--revision") => {
            let mut why = masker.text(why);
            // Asked for by a requirement set: said so, in the same words.
            if let Some(set) = plan.set {
                let rev = set.revision.as_str();
                why = why
                    .replacen(
                        &format!("--revision {rev} was asked for"),
                        &format!("--requirements {} asks for revision {rev}", set.name),
                        1,
                    )
                    .replace("A run without --revision", "A run without --requirements");
            }
            console::err_line(format!("error: {why}"));
            Some(why)
        }
        Some(Probe::Unsupported(why)) => {
            let why = format!("the target speaks no revision mcpcert tests: {}", masker.text(why));
            console::err_line(format!("error: {why}"));
            Some(why)
        }
        Some(Probe::Protected(how)) => {
            let rev = runner
                .revision_infos()
                .into_iter()
                .find(|i| i.protected.is_some())
                .map(|i| i.revision)
                .unwrap_or(Revision::NEWEST_STATELESS);
            console::err_line(format!(
                "protected: the server answers {} without a token, and the config gives none. mcpcert judges what needs no token (the authorization cases of {rev}: the 401, its challenge, the protected resource metadata); every other case needs a token and is n/a.\n  To judge it all, give mcpcert a token in a config file (--config FILE):\n    an OAuth access token:  [auth] token = {{ env = \"MCP_TOKEN\" }}\n    a static API key:       [target.headers] Authorization = {{ env = \"MCP_API_KEY\" }}  (the header your server reads)\n    or mcpcert's built-in test issuer, which the server must trust: README, Authorization",
                masker.text(how)
            ));
            None
        }
        Some(Probe::Ready) => {
            let mut infos = runner.revision_infos();
            for info in infos.iter_mut() {
                masker.revision(info);
            }
            let named: Vec<String> =
                mcpcert::report::html::identities(&infos).iter().map(|(rev, w, n)| format!("{n} (to {w}, {rev})")).collect();
            if !named.is_empty() {
                console::err_line(format!("server: {}", named.join("; ")));
            }
            for info in &infos {
                let served = if info.supported { "served" } else { "not served" };
                console::err_line(format!("revision {}: {served} ({})", info.revision, info.reason));
            }
            None
        }
        None => None,
    }
}

/// The run tests the revisions probed: the initialize-era one the server
/// negotiated, not the others of that era that were selected (said when
/// the operator chose the cases; a default run always leaves them out).
fn keep_probed(args: &RunArgs, runner: &Runner, cases: &mut Vec<Case>) {
    let probed: Vec<Revision> = runner.revision_infos().iter().map(|i| i.revision).collect();
    let mut dropped: std::collections::BTreeMap<Revision, usize> = Default::default();
    cases.retain(|c| {
        let keep = probed.contains(&c.revision);
        if !keep {
            *dropped.entry(c.revision).or_default() += 1;
        }
        keep
    });
    let n: usize = dropped.values().sum();
    if n > 0 && args.filter.is_some() {
        let said: Vec<String> = dropped.iter().map(|(r, n)| format!("{n} of {r}")).collect();
        console::err_line(format!(
            "not tested: {n} case{} ({}): the run tests the revision the server negotiated; --revision REV tests another",
            if n == 1 { "" } else { "s" },
            said.join(", ")
        ));
    }
}

/// Every case of the plan: run (or, when the target cannot be tested or
/// the run was interrupted first, recorded as not run), each result masked,
/// marked and printed in catalogue order.
pub(super) fn cases(args: &RunArgs, s: &mut Started, console: &mut Console) -> Vec<CaseResult> {
    let cases = &s.plan.cases;
    console.line(format!("\nrunning {} case{}", cases.len(), if cases.len() == 1 { "" } else { "s" }));
    // Cases the console does not list one by one: all of them when the
    // target cannot be reached, those of a revision the server does not serve.
    // (The cause itself was said on stderr above; this line counts.)
    if let Some(why) = &s.target_problem {
        let short = match &s.probe {
            Some(Probe::Unsupported(w)) if w.starts_with("--revision") => "the server does not serve the revision asked for (above)",
            _ => why.lines().next().unwrap_or(""),
        };
        console.grouped(&format!("not run: {short}"), cases.len(), Verdict::Error);
    }
    for (rev, why) in &s.unserved {
        let n = cases.iter().filter(|c| c.revision == *rev).count();
        if n > 0 && why.starts_with("needs a token") {
            console.grouped(&format!("{rev}: {why}"), n, Verdict::NotApplicable);
        } else if n > 0 {
            console.grouped(&format!("revision {rev} is not served ({why})"), n, Verdict::NotApplicable);
        }
    }
    let progress = crate::cli::progress::Ticker::start(s.runner.waiting(), args.quiet);
    let mut results: Vec<CaseResult> = Vec::new();
    let jobs = args.jobs.unwrap_or_else(|| default_jobs(s.plan.target.transport())).max(1);
    let (plan, runner, target_problem, unserved) = (&s.plan, &s.runner, &s.target_problem, &s.unserved);
    let mut finish = |case: &Case, mut res: CaseResult, console: &mut Console| {
        plan.masker.case(&mut res);
        if let Some(set) = plan.set {
            requirements::mark_not_scored(set, &mut res);
        }
        if let Some(b) = &plan.baseline {
            b.mark(&mut res, plan.target.transport());
        }
        let grouped = target_problem.is_some() && res.message.starts_with("not run: ")
            || (res.verdict == Verdict::NotApplicable && unserved.iter().any(|(r, _)| *r == case.revision));
        if !grouped {
            console.case(&res, args.strict);
        }
        results.push(res);
    };
    let sig = *s.interrupt.borrow();
    if sig != 0 || target_problem.is_some() {
        // Interrupted before any case ran (while the target started), or
        // nothing to run against.
        let why = match target_problem {
            Some(why) if sig == 0 => format!("not run: {why}"),
            _ => format!("not run: the run was interrupted ({})", signal_name(sig)),
        };
        for case in cases {
            finish(case, runner.result_for(case, Verdict::Error, why.clone()), console);
        }
    } else {
        let refs: Vec<&Case> = cases.iter().collect();
        s.rt.block_on(runner.run_cases(&refs, jobs, s.interrupt.clone(), |i, ran| {
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
            finish(case, res, console);
        }));
    }
    drop(progress);
    console.groups();
    results
}

/// The default `-j`: over HTTP 32 (a request in flight mostly waits on the
/// network, not on a CPU: at 40 ms a round trip, 4 at once left the run
/// waiting on the limit, and 16 still held back a wave of 60 header and
/// call cases); over stdio the number of CPUs, at least 4 (each
/// process of the pool is work on this machine).
fn default_jobs(transport: mcpcert::record::Transport) -> usize {
    match transport {
        mcpcert::record::Transport::Http => 32,
        mcpcert::record::Transport::Stdio => std::thread::available_parallelism().map_or(4, |n| n.get()).max(4),
    }
}
