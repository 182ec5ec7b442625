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

/// The waves of `cases`, as ranges of indices, in order.
pub fn waves(cases: &[&Case], jobs: usize) -> Vec<Range<usize>> {
    let mut out: Vec<Range<usize>> = Vec::new();
    let mut start = 0;
    for i in 0..cases.len() {
        let c = cases[i];
        let alone = jobs <= 1 || c.exclusive();
        let joins_previous = i > start && {
            let p = cases[i - 1];
            !alone && !p.exclusive() && p.revision == c.revision && p.run_scoped() == c.run_scoped()
        };
        if i > start && !joins_previous {
            out.push(start..i);
            start = i;
        }
    }
    if start < cases.len() {
        out.push(start..cases.len());
    }
    out
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
        'waves: for (n, wave) in waves(cases, jobs).into_iter().enumerate() {
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
                .buffer_unordered(jobs.max(1));
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
                    // A block of its own: ids are never sent twice.
                    let mut r = crate::session::with_case_ids(2 * i + 1, self.run_case(cases[i])).await;
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
