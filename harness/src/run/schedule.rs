//! Cases run concurrently, results in catalogue order.
//!
//! The catalogue is cut into waves: a run of consecutive cases of one
//! revision that may overlap (four cases per request allowed in flight; at
//! most `jobs` requests in flight over the whole run). A case runs alone, a
//! wave of its own, when it changes or may change what other requests see:
//! it says so (a trigger, `logging/setLevel` on a shared session, a DELETE,
//! a check that judges timing), or it calls tools and the tools walk does
//! not show every tool it may call `readOnlyHint: true`. A wave grows as it
//! runs: such a case waits, before it joins, for the walk a case of the wave
//! is gathering. A case alone only to observe (nothing else may list while
//! it walks twice) is put off to the end of its stretch, so that it does not
//! split it. The whole-run audits of a revision (which the catalogue puts
//! after its other cases) form a wave after all of them, so that they judge
//! all of its traffic. Waves run one after another, so the server's state
//! changes at the same points as in a serial run, and shared facts are
//! gathered once whichever case asks first. `jobs = 1` is the serial run.
//! A case that did not pass because the server refused a request as busy
//! (HTTP 429/503) is run again with one request in flight at a time.

use super::Runner;
use crate::checks::ListMethod;
use crate::record::CaseResult;
use crate::suite::Case;
use futures_util::StreamExt;
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

/// The waves of `cases` as indices, in the order they run, with no tools
/// walk known (a case that calls tools runs alone).
pub fn waves(cases: &[&Case], jobs: usize) -> Vec<Vec<usize>> {
    let mut out = Vec::new();
    let mut start = 0;
    while start < cases.len() {
        let w = next_wave(
            cases,
            start,
            jobs,
            |c| c.exclusive() || c.calls_tools() || c.calls_input_tool() || c.calls_task_tool() || c.calls_trigger(),
            |c| c.observes_alone(),
        );
        start = w.end;
        out.push(w.run);
        out.extend(w.deferred.into_iter().map(|i| vec![i]));
    }
    out
}

/// One wave, and the cases it put off.
pub struct Wave {
    /// Cases run together.
    pub run: Vec<usize>,
    /// Cases that must run alone but change nothing (they observe: two
    /// walks in a row), met inside the wave's stretch: each runs alone
    /// right after the wave, so that they do not split it.
    pub deferred: Vec<usize>,
    /// Where the next wave starts.
    pub end: usize,
}

/// The wave that starts at `start`: consecutive cases of one revision and
/// scope, none of which must run `alone`, passing over (and putting off)
/// those that are alone only to observe (`defer`); a case that must run
/// alone otherwise is a wave of its own. `-j 1` runs every case in place.
pub fn next_wave(cases: &[&Case], start: usize, jobs: usize, alone: impl Fn(&Case) -> bool, defer: impl Fn(&Case) -> bool) -> Wave {
    let first = cases[start];
    if jobs <= 1 || (alone(first) && !defer(first)) {
        return Wave { run: vec![start], deferred: Vec::new(), end: start + 1 };
    }
    let (mut run, mut deferred) = (Vec::new(), Vec::new());
    let mut end = start;
    while end < cases.len() {
        let c = cases[end];
        if c.revision != first.revision || c.run_scoped() != first.run_scoped() {
            break;
        }
        if alone(c) {
            if !defer(c) {
                break;
            }
            deferred.push(end);
        } else {
            run.push(end);
        }
        end += 1;
    }
    Wave { run, deferred, end }
}

/// A wave being fed: where it ends so far, the cases it put off, and how
/// many of its cases have been handed out and not finished.
struct Feed {
    start: usize,
    end: std::sync::atomic::AtomicUsize,
    deferred: Mutex<Vec<usize>>,
    running: std::sync::atomic::AtomicUsize,
}

impl Feed {
    fn new(start: usize) -> Feed {
        Feed { start, end: start.into(), deferred: Mutex::new(Vec::new()), running: 0.into() }
    }
}

/// Whether a case may join the wave that runs.
enum Join {
    Yes,
    /// It must run alone: the wave ends before it.
    No,
    /// Alone only to observe: it runs after the wave.
    Defer,
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
            || (c.calls_input_tool() && !self.tool_read_only(c.revision, self.policy.input_tool.as_ref()))
            || (c.calls_task_tool()
                && (!self.tool_read_only(
                    c.revision,
                    self.policy.task_tool.clone().or_else(|| self.facts.get(&c.revision).and_then(|f| f.task_tool_known())).as_ref(),
                ) || (self.policy.task_input_tool.is_some() && !self.tool_read_only(c.revision, self.policy.task_input_tool.as_ref()))))
            || (c.calls_trigger() && self.trigger_known(c.revision) != Some(false))
    }

    /// Whether there is a tool-set trigger to call: one in the config (not
    /// also forbidden by it), or the conformance fixture the gathered tools
    /// walk lists (or any, under `--requirements`); None while that depends
    /// on a walk not yet gathered.
    fn trigger_known(&self, rev: crate::wire::Revision) -> Option<bool> {
        use crate::checks::listen::FIXTURE_TRIGGER;
        if let Some(t) = &self.policy.listen_trigger {
            return Some(self.policy.forbids(&t.tool).is_none());
        }
        if !self.policy.call_fixtures || self.policy.forbids(FIXTURE_TRIGGER).is_some() {
            return Some(false);
        }
        if self.policy.requirements {
            return Some(true);
        }
        let w = self.facts.get(&rev).and_then(|f| f.tools_walk_gathered())?;
        Some(w.items.iter().any(|t| t.get("name").and_then(|n| n.as_str()) == Some(FIXTURE_TRIGGER)))
    }

    /// The cases of the wave that starts at `feed.start`, handed out in
    /// catalogue order as they may join it: the first always; then, while
    /// revision and scope stay the same, each case that need not run alone
    /// (a case that runs alone only to observe is put off until after the
    /// wave). A case that calls tools waits, before it joins, for the
    /// revision's tools walk that a case of the wave is gathering, so that
    /// it joins once the walk shows what it would call is read-only; if
    /// no case of the wave is left that could gather it, it runs alone.
    /// With `-j 1` every case is a wave of its own.
    fn feed<'a>(&'a self, cases: &'a [&'a Case], jobs: usize, feed: &'a Feed) -> impl futures_util::Stream<Item = usize> + 'a {
        use std::sync::atomic::Ordering::SeqCst;
        let first = cases[feed.start];
        futures_util::stream::unfold(Some(feed.start), move |next| async move {
            let mut i = next?;
            loop {
                let c = *cases.get(i)?;
                let join = if i == feed.start {
                    match self.join(c) {
                        Some(Join::No) | None if jobs > 1 && !self.deferrable(c) => Join::No,
                        _ if jobs <= 1 => Join::No,
                        Some(j) => j,
                        None => Join::No,
                    }
                } else if c.revision != first.revision || c.run_scoped() != first.run_scoped() {
                    return None;
                } else {
                    while self.join(c).is_none() && feed.running.load(SeqCst) > 0 {
                        tokio::time::sleep(std::time::Duration::from_millis(2)).await;
                    }
                    // Asked again once nothing runs: a walk gathered by the
                    // last case to finish is seen.
                    self.join(c).unwrap_or(Join::No)
                };
                match join {
                    // The first case of a wave runs, whatever it is; alone,
                    // the wave holds it only.
                    Join::No if i == feed.start => {
                        feed.end.store(i + 1, SeqCst);
                        feed.running.fetch_add(1, SeqCst);
                        return Some((i, None));
                    }
                    Join::No => return None,
                    Join::Defer => {
                        if let Ok(mut d) = feed.deferred.lock() {
                            d.push(i);
                        }
                        feed.end.store(i + 1, SeqCst);
                        i += 1;
                    }
                    Join::Yes => {
                        feed.end.store(i + 1, SeqCst);
                        feed.running.fetch_add(1, SeqCst);
                        return Some((i, Some(i + 1)));
                    }
                }
            }
        })
    }

    /// Whether a case may join the wave now: None while that depends on a
    /// tools walk not yet gathered.
    fn join(&self, c: &Case) -> Option<Join> {
        // Whether a case that needs a fixture tool sends anything depends
        // on the walk: undecided until it is known (so with a fixture
        // prompt, resource or template whose list the server advertises).
        let walk_known = self.facts.get(&c.revision).is_some_and(|f| f.tools_walk_gathered().is_some());
        if !self.policy.requirements && c.fixtures.iter().any(|f| self.fixture_undecided(c.revision, f.kind)) {
            return None;
        }
        if self.sends_nothing(c) {
            return Some(Join::Yes);
        }
        if c.exclusive() {
            return Some(if self.deferrable(c) { Join::Defer } else { Join::No });
        }
        if (c.calls_tools()
            || c.calls_input_tool()
            || c.calls_task_tool()
            || (c.calls_trigger() && self.trigger_known(c.revision).is_none()))
            && !walk_known
        {
            return None;
        }
        Some(if self.alone(c) { Join::No } else { Join::Yes })
    }

    /// Whether a case that must run alone only observes (it changes
    /// nothing), so that it may run at the end of its stretch of cases.
    fn deferrable(&self, c: &Case) -> bool {
        c.observes_alone() && !self.sends_nothing(c)
    }

    /// Whether `run_case` ends a case before it sends anything, on what
    /// the run knew before it started (the revision probes, the config,
    /// the transport).
    fn sends_nothing(&self, c: &Case) -> bool {
        self.not_applicable(c).is_some()
            || self.session.info(c.revision).is_some_and(|i| i.unreachable.is_some())
            || c.checks().flat_map(|k| k.needs()).any(|n| n.unmet(&self.policy, self.session.target()).is_some())
            || self.fixture_missing(c)
    }

    /// Whether a fixture the case needs is missing: its list is not
    /// advertised, or the list's gathered walk (whole) does not show it
    /// (not under `--requirements`, where fixtures are used directly).
    fn fixture_missing(&self, c: &Case) -> bool {
        if self.policy.requirements {
            return false;
        }
        let Some(facts) = self.facts.get(&c.revision) else { return false };
        c.fixtures.iter().any(|f| {
            let (list, key) = fixture_list(f.kind);
            if list != ListMethod::Tools && !self.session.info(c.revision).is_some_and(|i| i.advertises(list.capability())) {
                return true;
            }
            let Some(w) = facts.walk_gathered(list) else { return false };
            w.partial().is_none() && !w.items.iter().any(|t| t.get(key).and_then(|n| n.as_str()) == Some(f.name.as_str()))
        })
    }

    /// Whether knowing if the server lists a fixture of this kind depends on
    /// a walk not yet gathered: always for a tool; for the other kinds when
    /// the server advertises their list.
    fn fixture_undecided(&self, rev: crate::wire::Revision, kind: crate::suite::requirements::FixtureKind) -> bool {
        let (list, _) = fixture_list(kind);
        let advertised = list == ListMethod::Tools || self.session.info(rev).is_some_and(|i| i.advertises(list.capability()));
        advertised && self.facts.get(&rev).is_some_and(|f| f.walk_gathered(list).is_none())
    }

    /// Whether a configured tool (`[input_required]`, `[tasks]`) says
    /// `readOnlyHint: true` in the revision's gathered tools walk; false
    /// before a case has gathered it.
    fn tool_read_only(&self, rev: crate::wire::Revision, tool: Option<&crate::config::InputTool>) -> bool {
        let (Some(t), Some(w)) = (tool, self.facts.get(&rev).and_then(|f| f.tools_walk_gathered())) else {
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
        // stdio: no processes started ahead: the few a run needs (the
        // negative probes' process, a cold walk's, a listen's) start when
        // first asked for, while the other cases of their wave run; a pool
        // started ahead left processes started for nothing at the end.
        self.session.limit_in_flight(jobs);
        let started: Mutex<Vec<bool>> = Mutex::new(vec![false; cases.len()]);
        // Results wait here until every case before them (in catalogue
        // order) is in; `due` is the next to hand out.
        let mut ready: std::collections::BTreeMap<usize, CaseResult> = Default::default();
        let mut due = 0;
        let mut signal = 0;
        let (mut at, mut count) = (0, 0);
        'waves: while at < cases.len() {
            // The wave grows as it runs (`feed`); the cases it put off run
            // alone after it, each a wave of its own.
            let feed = Feed::new(at);
            let mut groups: Vec<Option<Vec<usize>>> = vec![None];
            let mut first_group = true;
            while let Some(group) = groups.pop() {
                let n = count;
                count += 1;
                let is_feed = group.is_none();
                // Cases refused as busy while others ran, to run again alone.
                let mut again: Vec<usize> = Vec::new();
                let indices: futures_util::stream::BoxStream<'_, usize> = match group {
                    None => Box::pin(self.feed(cases, jobs, &feed)),
                    Some(g) => Box::pin(futures_util::stream::iter(g)),
                };
                let mut results = indices
                    .map(|i| {
                        let (started, feed) = (&started, &feed);
                        async move {
                            if let Ok(mut s) = started.lock() {
                                s[i] = true;
                            }
                            let mut res = crate::session::with_case_ids(2 * i, self.run_case(cases[i])).await;
                            res.wave = Some(n);
                            if is_feed {
                                feed.running.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
                            }
                            (i, res)
                        }
                    })
                    .buffer_unordered(cases_at_once(jobs, self.session.transport()));
                loop {
                    tokio::select! {
                        biased;
                        sig = stopped(&mut stop) => {
                            signal = sig;
                            break 'waves;
                        }
                        r = results.next() => match r {
                            // With -j above 1 a case's own requests may go
                            // together too: one refused as busy runs again
                            // sending one at a time, as -j 1 would.
                            Some((i, res)) if jobs > 1 && refused_as_busy(&res) => again.push(i),
                            Some((i, res)) => {
                                ready.insert(i, res);
                                while let Some(res) = ready.remove(&due) {
                                    each(due, Ran::Done(Box::new(res)));
                                    due += 1;
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
                if std::mem::take(&mut first_group) {
                    at = feed.end.load(std::sync::atomic::Ordering::SeqCst);
                    let put_off = feed.deferred.lock().map(|d| d.clone()).unwrap_or_default();
                    groups.extend(put_off.into_iter().rev().map(|i| Some(vec![i])));
                }
                again.sort_unstable();
                for i in again {
                    // A block of its own: ids are never sent twice; and one
                    // request at a time, the case's own included.
                    let serial = self.session.one_at_a_time().await;
                    let rerun = crate::session::with_case_ids(2 * i + 1, self.run_case(cases[i]));
                    let mut r = tokio::select! {
                        biased;
                        sig = stopped(&mut stop) => {
                            signal = sig;
                            break 'waves;
                        }
                        r = rerun => r,
                    };
                    drop(serial);
                    r.wave = Some(n);
                    ready.insert(i, r);
                    while let Some(res) = ready.remove(&due) {
                        each(due, Ran::Done(Box::new(res)));
                        due += 1;
                    }
                }
            }
        }
        let started = started.into_inner().unwrap_or_default();
        for (i, s) in started.iter().enumerate().skip(due) {
            each(i, Ran::Stopped { started: *s, signal });
        }
    }
}

/// How many cases of a wave run at once: `-j 1` one; over HTTP four per
/// request allowed in flight, since most cases spend most of their time
/// waiting for a shared fact or an answer across the network, not sending
/// (the requests stay within `-j`); over stdio, where an answer is a pipe
/// away, `-j` (more cases at once would only hold more in memory).
fn cases_at_once(jobs: usize, transport: crate::record::Transport) -> usize {
    match transport {
        _ if jobs <= 1 => 1,
        crate::record::Transport::Http => jobs * 4,
        crate::record::Transport::Stdio => jobs,
    }
}

/// The list a fixture of this kind is listed in, and the key that names it.
pub(super) fn fixture_list(kind: crate::suite::requirements::FixtureKind) -> (ListMethod, &'static str) {
    use crate::suite::requirements::FixtureKind;
    match kind {
        FixtureKind::Tool => (ListMethod::Tools, "name"),
        FixtureKind::Prompt => (ListMethod::Prompts, "name"),
        FixtureKind::Resource => (ListMethod::Resources, "uri"),
        FixtureKind::Template => (ListMethod::Templates, "uriTemplate"),
    }
}
