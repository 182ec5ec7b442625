//! Cases run concurrently, results in catalogue order.
//!
//! The catalogue is cut into waves: a run of consecutive cases of one
//! revision that may overlap, up to `jobs` at a time; a case that must run
//! alone (it changes what other requests see, or judges timing) is a wave of
//! its own; and the whole-run audits of a revision (which the catalogue puts
//! after its other cases) form a wave after all of them, so that they judge
//! all of its traffic. Waves run one after another, so the server's state
//! changes at the same points as in a serial run, and shared facts are
//! gathered once whichever case asks first. `jobs = 1` is the serial run.
//! A case that did not pass because the server refused a request as busy
//! (HTTP 429/503) while others ran is run again alone.

use super::Runner;
use crate::record::CaseResult;
use crate::suite::Case;
use futures_util::StreamExt;
use std::ops::Range;
use std::sync::Mutex;

/// What became of a case.
pub enum Ran {
    Done(Box<CaseResult>),
    /// The run was stopped (`stop` turned non-zero) before the case
    /// finished; `started` says whether it had begun.
    Stopped {
        started: bool,
        signal: i32,
    },
}

/// The waves of `cases`, as ranges of indices, in order, with no tools
/// walk known: a case that calls tools runs alone.
pub fn waves(cases: &[&Case], jobs: usize) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let mut start = 0;
    while start < cases.len() {
        let w = next_wave(cases, start, jobs, |c| c.exclusive() || c.calls_tools() || c.calls_input_tool());
        start = w.end;
        out.push(w);
    }
    out
}

/// The wave that starts at `start`: consecutive cases of one revision and
/// scope, none of which must run `alone`; a case that must is a wave of
/// its own.
pub fn next_wave(cases: &[&Case], start: usize, jobs: usize, alone: impl Fn(&Case) -> bool) -> Range<usize> {
    let first = cases[start];
    if jobs <= 1 || alone(first) {
        return start..start + 1;
    }
    let mut end = start + 1;
    while end < cases.len() {
        let c = cases[end];
        if alone(c) || c.revision != first.revision || c.run_scoped() != first.run_scoped() {
            break;
        }
        end += 1;
    }
    start..end
}

/// Whether a case did not pass and the server refused one of its requests
/// as busy (HTTP 429 or 503).
fn refused_as_busy(r: &CaseResult) -> bool {
    use crate::record::Verdict;
    !matches!(r.verdict, Verdict::Pass | Verdict::NotApplicable) && r.transcript.iter().any(|e| e.refused_as_busy())
}

/// The signal once `stop` turns non-zero; never, if no one can stop the run.
async fn stopped(stop: &mut tokio::sync::watch::Receiver<i32>) -> i32 {
    match stop.wait_for(|s| *s != 0).await {
        Ok(s) => *s,
        Err(_) => std::future::pending().await,
    }
}

impl Runner {
    /// Whether a case must run alone now: it says so, or it calls the
    /// tools the policy allows and the revision's tools walk (if gathered)
    /// does not show every one of them `readOnlyHint: true`.
    fn alone(&self, c: &Case) -> bool {
        // A case that will send nothing (it does not apply, or the run
        // lacks what it needs) may share any wave.
        if self.sends_nothing(c) {
            return false;
        }
        c.exclusive()
            || (c.calls_tools() && !self.calls_read_only(c.revision))
            || (c.calls_input_tool() && !self.input_tool_read_only(c.revision))
    }

    /// Whether `run_case` ends a case before it sends anything, on what
    /// the run knew before it started (the revision probes, the config,
    /// the transport).
    fn sends_nothing(&self, c: &Case) -> bool {
        self.not_applicable(c).is_some()
            || self.session.info(c.revision).is_some_and(|i| i.unreachable.is_some())
            || c.checks().flat_map(|k| k.needs()).any(|n| n.unmet(&self.policy, self.session.target()).is_some())
            || self.fixture_tool_missing(c)
    }

    /// Whether a fixture tool the case needs is missing from the
    /// revision's gathered tools walk (whole), so that the case is n/a
    /// without sending anything (not under `--requirements`, where
    /// fixtures are used directly).
    fn fixture_tool_missing(&self, c: &Case) -> bool {
        use crate::suite::requirements::FixtureKind;
        if self.policy.requirements {
            return false;
        }
        let Some(w) = self.facts.get(&c.revision).and_then(|f| f.tools_walk_gathered()) else { return false };
        if w.partial().is_some() {
            return false;
        }
        c.fixtures
            .iter()
            .filter(|f| f.kind == FixtureKind::Tool)
            .any(|f| !w.items.iter().any(|t| t.get("name").and_then(|n| n.as_str()) == Some(f.name.as_str())))
    }

    /// Whether the `[input_required]` tool says `readOnlyHint: true` in the
    /// revision's gathered tools walk; false before a case has gathered it.
    fn input_tool_read_only(&self, rev: crate::wire::Revision) -> bool {
        let (Some(t), Some(w)) = (&self.policy.input_tool, self.facts.get(&rev).and_then(|f| f.tools_walk_gathered())) else {
            return false;
        };
        w.items.iter().any(|d| {
            d.get("name").and_then(|n| n.as_str()) == Some(t.tool.as_str())
                && d.pointer("/annotations/readOnlyHint") == Some(&serde_json::Value::Bool(true))
        })
    }

    /// Whether every tool of the revision's gathered tools walk that the
    /// call policy allows says `readOnlyHint: true`; false before a case
    /// has gathered the walk.
    fn calls_read_only(&self, rev: crate::wire::Revision) -> bool {
        let Some(w) = self.facts.get(&rev).and_then(|f| f.tools_walk_gathered()) else { return false };
        w.items.iter().all(|t| {
            let name = t.get("name").and_then(|n| n.as_str()).unwrap_or("");
            self.policy.call_allowed(t, name).is_err() || t.pointer("/annotations/readOnlyHint") == Some(&serde_json::Value::Bool(true))
        })
    }

    /// Run `cases`, up to `jobs` at once within a wave, and hand each
    /// result to `each` in catalogue order as soon as it and those before
    /// it are done. When `stop` turns non-zero the cases in flight are
    /// dropped (their processes are killed with their connections) and
    /// every case not finished is reported as stopped.
    pub async fn run_cases(
        &self,
        cases: &[&Case],
        jobs: usize,
        mut stop: tokio::sync::watch::Receiver<i32>,
        mut each: impl FnMut(usize, Ran),
    ) {
        // stdio: processes started ahead, one per two cores (a server's
        // start-up keeps a core busy, and starts that crowd the cases' own
        // work slow the run: on 2 cores with a Python server, a pool of 2
        // made the run 5% slower and 4 made it 28% slower than 1), never
        // more than -j and at most four.
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        self.session.keep_started((cores / 2).clamp(1, 4).min(jobs.max(1)));
        self.session.limit_in_flight(jobs);
        let started: Mutex<Vec<bool>> = Mutex::new(vec![false; cases.len()]);
        let mut next = 0;
        let mut signal = 0;
        let (mut at, mut count) = (0, 0);
        'waves: while at < cases.len() {
            // Formed when it starts: what earlier waves gathered (the tools
            // walk) says whether a case that calls tools may share it.
            let wave = next_wave(cases, at, jobs, |c| self.alone(c));
            at = wave.end;
            let n = count;
            count += 1;
            let shared = wave.len() > 1;
            // Results held back (in order) once one of them must be run
            // again alone.
            let mut held: Vec<(usize, CaseResult, bool)> = Vec::new();
            // Cases start in catalogue order and finish in any; results
            // wait here until those before them are in.
            let mut ready: std::collections::BTreeMap<usize, CaseResult> = Default::default();
            let mut due = wave.start;
            let mut results = futures_util::stream::iter(wave)
                .map(|i| {
                    let started = &started;
                    async move {
                        if let Ok(mut s) = started.lock() {
                            s[i] = true;
                        }
                        let mut res = crate::session::with_case_ids(2 * i, self.run_case(cases[i])).await;
                        res.wave = Some(n);
                        (i, res)
                    }
                })
                .buffer_unordered(cases_at_once(jobs));
            loop {
                tokio::select! {
                    biased;
                    sig = stopped(&mut stop) => {
                        signal = sig;
                        break 'waves;
                    }
                    r = results.next() => match r {
                        Some((i, res)) => {
                            ready.insert(i, res);
                            while let Some(res) = ready.remove(&due) {
                                let i = due;
                                due += 1;
                                let again = shared && refused_as_busy(&res);
                                if again || !held.is_empty() {
                                    held.push((i, res, again));
                                } else {
                                    each(i, Ran::Done(Box::new(res)));
                                    next = i + 1;
                                }
                            }
                        }
                        None => break,
                    },
                }
            }
            drop(results);
            // A server that refused a request as busy (HTTP 429/503) while
            // other cases ran gets that case again with nothing else in
            // flight, so that the verdict does not depend on -j.
            for (i, res, again) in held {
                let res = if again {
                    // A block of its own: ids are never sent twice; and one
                    // request at a time, the case's own included.
                    let serial = self.session.one_at_a_time().await;
                    let mut r = crate::session::with_case_ids(2 * i + 1, self.run_case(cases[i])).await;
                    drop(serial);
                    r.wave = Some(n);
                    r
                } else {
                    res
                };
                each(i, Ran::Done(Box::new(res)));
                next = i + 1;
            }
        }
        let started = started.into_inner().unwrap_or_default();
        for (i, s) in started.iter().enumerate().skip(next) {
            each(i, Ran::Stopped { started: *s, signal });
        }
    }
}

/// How many cases of a wave run at once: `-j 1` one; otherwise four per
/// request allowed in flight, since most cases spend most of their time
/// waiting for a shared fact or an answer, not sending (the requests stay
/// within `-j`).
fn cases_at_once(jobs: usize) -> usize {
    if jobs <= 1 { 1 } else { jobs * 4 }
}
