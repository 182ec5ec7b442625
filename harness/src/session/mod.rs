//! A run's session with the target: the connections (one main connection or
//! process per served revision, a pool of processes started ahead, fresh
//! ones on request), request ids, the revision probes and handshakes, every
//! exchange, and the frame log that whole-run audits read.
//!
//! Everything here takes `&self`: a case may own a connection of its own
//! (`open`, `fresh`) while others use theirs, so cases can run
//! concurrently; the main connection of a revision is lent to one user at
//! a time (`main`).

mod call_log;
mod get_stream;
mod ids;
mod log;
mod msg;
mod probe;
mod probes;
mod refusal;
pub use probes::unknown_version_params;

/// What a check holds of the target, through the session: a connection or
/// process the session opened for it (`open`, `fresh`, `open_as`), what it
/// sends on one, how long a stream is read after its answer, and the
/// target's description. Checks name these from here, never from
/// `transport`.
pub use crate::transport::{Connection, GRACE, Outgoing, TargetSpec, redact_url};
pub use ids::{BULK_FACTS, with_case_ids, with_fact_ids, with_part_ids};
pub(crate) use ids::{CASE_IDS, FIRST_SESSION_ID, LEGACY_PROBE_IDS, MODERN_PROBE_IDS, with_ids_from};
pub use log::{FrameLog, LoggedFrame};
pub use msg::Msg;
pub use probe::Probe;

use crate::record::{Exchange, RevisionInfo};
use crate::transport::{Limits, OpenError, Transport};
use crate::wire::{self, MetaMode, Revision};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Instant;

/// Where probe traffic is filed in the frame log.
pub const PROBE: &str = "(revision probe)";
/// Where the handshake of the negative probes' connection is filed.
pub const NEGATIVE: &str = "(the negative probes' connection)";

/// Why a session could not provide what a check asked for.
#[derive(Debug, Clone, thiserror::Error)]
pub enum SessionError {
    #[error("no connection for {0}")]
    NoConnection(Revision),
    #[error("{0}")]
    Open(#[from] OpenError),
    /// The 2025-11-25 handshake on a new connection or process failed.
    #[error("{0}")]
    Handshake(String),
}

/// A new connection or process brought to a revision's starting state.
pub struct Fresh {
    pub conn: Connection,
    /// stdio: the lines that brought it there (the handshake), for reproducers.
    pub preamble: Vec<String>,
    /// The handshake's exchanges.
    pub exchanges: Vec<Exchange>,
    /// stdio: one of the few starts the run lets happen at once, held until
    /// this is dropped (or the permit is taken and dropped, once the
    /// process has answered): a server's start-up timeout measures the
    /// server, not a machine crowded by mcpcert's own starts.
    pub permit: Option<tokio::sync::OwnedSemaphorePermit>,
}

/// What the session keeps per revision served.
struct RevSession {
    info: RevisionInfo,
    /// Whether `initialize` also works (2026-07-28 only).
    dual_era: Option<bool>,
    /// stdio lines that bring a fresh process to this revision's state.
    preamble: Vec<String>,
    /// HTTP: the server accepts the MCP headers only with the spec's
    /// spelling, so every message goes with exact-case names.
    exact_names: bool,
    /// HTTP 2025-11-25: the session the probe's handshake opened (the main
    /// connection's).
    session_id: Option<String>,
    /// Initialize era: the probe's `initialize` (the first request on its
    /// connection or process, with no session id), once it was served.
    initialize: Option<crate::record::Exchange>,
    /// Initialize era: the probe's `initialize` and its answer, served or
    /// refused.
    first_initialize: Option<crate::record::Exchange>,
    main: tokio::sync::Mutex<Option<Connection>>,
    /// The connection (process) the well-formed negative probes share —
    /// requests a server must answer with an error (an unknown method,
    /// tool, prompt, URI or cursor…) — never the main one; opened when the
    /// first is sent, with the lines that brought it to the revision's
    /// state (reopened if the server closes it).
    negative: tokio::sync::Mutex<Option<(Connection, Vec<String>)>>,
    /// stdio: the process the negative probes share, malformed or not,
    /// checked after each by a sentinel (`probes.rs`).
    probes: tokio::sync::Mutex<Option<probes::ProbeProcess>>,
    /// stdio: a process the probes left that the probe process may be
    /// (the initialize probe's, on a modern-only server), with the lines
    /// it was sent.
    spare_probe: std::sync::Mutex<Option<(Connection, Vec<String>)>>,
    /// stdio, initialize era: the `initialize` asking for an unknown
    /// version that the first probe process opened with, and its answer.
    opening: std::sync::OnceLock<Exchange>,
    log: std::sync::Mutex<FrameLog>,
}

pub struct Session {
    target: TargetSpec,
    limits: Limits,
    redact_params: bool,
    ids: AtomicI64,
    revs: BTreeMap<Revision, RevSession>,
    /// The most requests in flight at once (`-j`), over every case and
    /// every connection, once the run sets it; requests sent at once on
    /// purpose are not counted.
    in_flight: std::sync::OnceLock<tokio::sync::Semaphore>,
    /// Requests and notifications sent (HTTP requests, stdio lines).
    sent: std::sync::atomic::AtomicU64,
    /// stdio: the longest a probe's new process took to answer its first
    /// request (start-up included), in milliseconds.
    first_answer_ms: std::sync::atomic::AtomicU64,
    started: Instant,
    /// What the session waits for now, and since when (for a live
    /// progress line).
    waiting: Waiting,
    /// stdio: processes that `fresh` may be starting at once (half the
    /// CPUs, at least one).
    starting: std::sync::Arc<tokio::sync::Semaphore>,
    /// HTTP: the sessions the server issued to the run's `initialize`
    /// requests and that no DELETE of the run has ended yet (revision, id),
    /// in the order issued: ended when the run shuts down.
    issued: std::sync::Mutex<Vec<(Revision, String)>>,
    /// HTTP: the DELETEs that ended a session (2xx), with the session id:
    /// a later request in that session depends on it, and a reproducer
    /// of that request must send it first.
    ended: std::sync::Mutex<Vec<(String, std::sync::Arc<Exchange>)>>,
    /// The initialize probe's `initialize` (as a 2025-11-25 client sends
    /// it, first on a connection or process of its own) and its answer,
    /// whatever the revisions tested.
    initialize_probe: Option<Exchange>,
    /// Every `tools/call` sent, by whatever case (report.json's call log).
    call_log: std::sync::Mutex<call_log::CallLog>,
}

/// How long the run waits, altogether, for the server to end the sessions
/// it issued (the DELETEs go at once).
const END_SESSIONS_WITHIN: std::time::Duration = std::time::Duration::from_secs(2);

/// The exchange a session is waiting on: its label and when it was sent.
pub type Waiting = std::sync::Arc<std::sync::Mutex<Option<(String, Instant)>>>;

/// The main connection of a revision, lent to one user at a time.
pub type Main<'a> = tokio::sync::MappedMutexGuard<'a, Connection>;

impl Session {
    pub fn new(target: TargetSpec, limits: Limits, redact_params: bool) -> Session {
        Session {
            target,
            limits,
            redact_params,
            ids: AtomicI64::new(FIRST_SESSION_ID),
            revs: BTreeMap::new(),
            in_flight: std::sync::OnceLock::new(),
            sent: std::sync::atomic::AtomicU64::new(0),
            first_answer_ms: std::sync::atomic::AtomicU64::new(0),
            started: Instant::now(),
            waiting: Waiting::default(),
            starting: std::sync::Arc::new(tokio::sync::Semaphore::new(
                (std::thread::available_parallelism().map_or(1, |n| n.get()) / 2).max(1),
            )),
            issued: std::sync::Mutex::new(Vec::new()),
            ended: Default::default(),
            call_log: Default::default(),
            initialize_probe: None,
        }
    }

    /// What the session waits for now (a label and since when).
    pub fn waiting(&self) -> Waiting {
        self.waiting.clone()
    }

    /// Say what the run waits for between requests (a task being polled),
    /// or nothing: the console's progress line shows it.
    pub fn show_waiting(&self, what: Option<(String, Instant)>) {
        if let Ok(mut w) = self.waiting.lock() {
            *w = what;
        }
    }

    pub fn target(&self) -> &TargetSpec {
        &self.target
    }

    pub fn transport(&self) -> Transport {
        self.target.transport()
    }

    pub fn started(&self) -> Instant {
        self.started
    }

    /// What the probes found, for every revision probed, newest first.
    pub fn infos(&self) -> Vec<RevisionInfo> {
        self.revs.values().map(|s| s.info.clone()).collect()
    }

    pub fn info(&self, rev: Revision) -> Option<&RevisionInfo> {
        self.revs.get(&rev).map(|s| &s.info)
    }

    /// Whether a 2026-07-28 server also answers `initialize` (None: unknown).
    pub fn dual_era(&self, rev: Revision) -> Option<bool> {
        self.revs.get(&rev).and_then(|s| s.dual_era)
    }

    /// Whether messages of `rev` go with exact-case header names (the server
    /// treats header names case-sensitively; found by the revision probe).
    pub fn exact_names(&self, rev: Revision) -> bool {
        self.revs.get(&rev).is_some_and(|s| s.exact_names)
    }

    /// The lines a fresh stdio process needs before a request of `rev`.
    pub fn preamble(&self, rev: Revision) -> Vec<String> {
        self.revs.get(&rev).map(|s| s.preamble.clone()).unwrap_or_default()
    }

    /// A new request id (numbers, unique within the run). Inside a case
    /// (`with_case_ids`) it comes from the case's own block, so a case sends
    /// the same ids whatever else runs at the same time (`-j`).
    pub fn next_id(&self) -> Value {
        json!(CASE_IDS.try_with(|c| c.fetch_add(1, Ordering::Relaxed)).unwrap_or_else(|_| self.ids.fetch_add(1, Ordering::Relaxed)))
    }

    /// A request with a new id; for 2026-07-28 the params get the full `_meta`.
    pub fn request(&self, rev: Revision, method: &str, params: Option<Value>) -> Value {
        let id = self.next_id();
        let p = if rev.is_stateless() { wire::modern_params(params.as_ref(), MetaMode::Full, rev.as_str()) } else { params };
        wire::request(&id, method, p)
    }

    /// Open a new connection (its own HTTP client) or start a new process.
    pub fn open(&self) -> Result<Connection, OpenError> {
        Connection::open(&self.target, &self.limits)
    }

    /// Count requests sent outside `exchange` (a listen stream watched).
    pub fn count_sent(&self, n: u64) {
        self.sent.fetch_add(n, Ordering::Relaxed);
    }

    /// Requests and notifications sent so far: HTTP requests, or lines
    /// written to a stdio server.
    pub fn requests_sent(&self) -> u64 {
        self.sent.load(Ordering::Relaxed)
    }

    /// HTTP 2025-11-25: the id of the session the run opened for the
    /// revision (its main connection's), if the server issued one.
    pub fn main_session_id(&self, rev: Revision) -> Option<&str> {
        self.revs.get(&rev).and_then(|s| s.session_id.as_deref())
    }

    /// At most `n` requests in flight at once over the whole run (cases
    /// sent together and requests a check sends together alike), so that
    /// concurrency inside a check does not add to `-j`. Set once.
    pub fn limit_in_flight(&self, n: usize) {
        let _ = self.in_flight.set(tokio::sync::Semaphore::new(n.max(1)));
    }

    /// Hold all but one of the run's permits for requests in flight, so
    /// that what runs meanwhile sends one request at a time, as `-j 1`
    /// would (a case run again alone after a busy refusal: its own
    /// requests that go together would crowd the server again). Call it
    /// only when nothing else is in flight.
    pub async fn one_at_a_time(&self) -> Option<tokio::sync::SemaphorePermit<'_>> {
        let limit = self.in_flight.get()?;
        let n = limit.available_permits().saturating_sub(1) as u32;
        if n == 0 {
            return None;
        }
        limit.acquire_many(n).await.ok()
    }

    /// A connection or process seen through another identity (HTTP headers,
    /// stdio environment).
    pub fn open_as(&self, headers: &[(String, String)], env: &[(String, String)]) -> Result<Connection, OpenError> {
        Connection::open(&self.target.with_identity(headers, env), &self.limits)
    }

    /// HTTP: a connection to `url` (None: the target's), sending
    /// `authorization` as its `Authorization` header (None: none at all)
    /// instead of the run's.
    pub fn open_authorized(&self, url: Option<&str>, authorization: Option<&str>) -> Result<Connection, OpenError> {
        Connection::open(&self.target.with_authorization(url, authorization), &self.limits)
    }

    /// A new connection (HTTP) or process (stdio), brought to the
    /// revision's starting state: for 2025-11-25 the handshake is done,
    /// unless `handshake` is false (the caller sends `initialize` itself,
    /// and a second one on the same session may rightly be refused).
    ///
    /// stdio: a process starts only when fewer than half the CPUs' worth of
    /// the run's fresh processes are starting; the permit in `Fresh` says
    /// it is one of them until the caller is done with it (or drops it
    /// once the process has answered).
    pub async fn fresh(&self, rev: Revision, handshake: bool, case: &str) -> Result<Fresh, SessionError> {
        // The first message's id is taken before anything waits: fresh
        // processes opened together get their ids in the order asked.
        let discover = rev.is_stateless() && handshake && self.transport() == Transport::Stdio;
        let first_id = (discover || (!rev.is_stateless() && handshake)).then(|| self.next_id());
        let permit = if self.transport() == Transport::Stdio { self.starting.clone().acquire_owned().await.ok() } else { None };
        let mut conn = self.open()?;
        if let (false, true, Some(id)) = (rev.is_stateless(), handshake, first_id.clone()) {
            return match self.handshake(&mut conn, rev, Some(case), id).await {
                Ok((_, exchanges, preamble)) => {
                    if let Some(first) = exchanges.first() {
                        self.note_start(first);
                    }
                    Ok(Fresh { conn, preamble, exchanges, permit })
                }
                Err(e) => Err(SessionError::Handshake(e.why)),
            };
        }
        // A 2026-07-28 process is first asked `server/discover`, as a client
        // probes before any other request (stdio.mdx, backward
        // compatibility): a server that serves both eras tells them apart
        // by the first message, so a probe that came first on a bare process
        // would be taken for older traffic.
        if let (true, Some(id)) = (discover, first_id) {
            let body = wire::request(&id, "server/discover", wire::modern_params(None, wire::MetaMode::Full, rev.as_str()));
            let ex = self.exchange(&mut conn, &Msg::new(rev, "first: server/discover", &body), Some(case)).await;
            if let Some(e) = &ex.error {
                return Err(SessionError::Handshake(format!("server/discover on a fresh process: {e}")));
            }
            self.note_start(&ex);
            return Ok(Fresh { conn, preamble: vec![body.to_string()], exchanges: vec![ex], permit });
        }
        Ok(Fresh { conn, preamble: Vec::new(), exchanges: Vec::new(), permit })
    }

    /// The revision's main connection, once no one else uses it.
    pub async fn main(&self, rev: Revision) -> Result<Main<'_>, SessionError> {
        let st = self.revs.get(&rev).ok_or(SessionError::NoConnection(rev))?;
        let guard = st.main.lock().await;
        tokio::sync::MutexGuard::try_map(guard, |c| c.as_mut()).map_err(|_| SessionError::NoConnection(rev))
    }

    /// One well-formed negative probe (a request the server must answer
    /// with an error) on the connection (process) such probes share, never
    /// the main one: state one leaves cannot reach the cases that judge
    /// normal behaviour. (A malformed request gets a connection of its
    /// own: `fresh`.) The exchange is marked as a fresh process's first,
    /// with the lines that bring one to the revision's state, so its
    /// reproducer starts one.
    pub async fn on_negative(&self, msg: &Msg<'_>, case: &str) -> Result<Exchange, SessionError> {
        // stdio: on the probe process, checked by a sentinel after it.
        if self.transport() == Transport::Stdio {
            let (mut exs, retired) = self.on_probe_process(std::slice::from_ref(msg), case, &|_, _| false, false).await?;
            let mut ex = exs.pop().ok_or(SessionError::NoConnection(msg.rev))?;
            probes::note_retired(&mut ex, retired);
            return Ok(ex);
        }
        let st = self.revs.get(&msg.rev).ok_or(SessionError::NoConnection(msg.rev))?;
        let mut g = st.negative.lock().await;
        // stdio: a probe that failed on a process an earlier probe left,
        // and that process has exited, is sent once more on a new one: the
        // end is no finding of this probe's unless it happens again.
        for attempt in 0..2 {
            // A process that exited after its last probe's answer is not reused.
            if let Some((c, _)) = g.as_mut()
                && c.exited()
                && let Some((mut c, _)) = g.take()
            {
                c.kill();
            }
            let reused = g.is_some();
            if g.is_none() {
                // Its handshake takes ids of its own, whichever case opens it.
                let f = with_fact_ids(&format!("{} negative probes", msg.rev), self.fresh(msg.rev, true, NEGATIVE)).await?;
                *g = Some((f.conn, f.preamble));
            }
            let Some((conn, pre)) = g.as_mut() else { return Err(SessionError::NoConnection(msg.rev)) };
            let pre = pre.clone();
            // HTTP: a handle of its own, so that probes can be in flight at once.
            if let Some(mut c) = conn.http_clone() {
                let sid = c.session_id().map(str::to_owned);
                drop(g);
                let mut ex = self.exchange(&mut c, msg, Some(case)).await;
                ex.fresh = true;
                ex.preamble = pre;
                // A session the server ended (404) is not reused: the next probe
                // opens another, so the end is this probe's finding only.
                if sid.is_some() && ex.status == Some(404) {
                    let mut g = st.negative.lock().await;
                    if g.as_ref().and_then(|(c, _)| c.session_id()) == sid.as_deref() {
                        *g = None;
                    }
                }
                return Ok(ex);
            }
            let mut ex = self.exchange(conn, msg, Some(case)).await;
            ex.fresh = true;
            ex.preamble = pre;
            let ended_before = attempt == 0 && reused && ex.error.is_some() && conn.exited();
            // A process that closed or stopped answering is not kept: the next
            // probe gets a new one (its failure is this probe's finding only).
            if ex.error.is_some()
                && let Some((mut c, _)) = g.take()
            {
                c.kill();
            }
            if !ended_before {
                return Ok(ex);
            }
        }
        Err(SessionError::NoConnection(msg.rev))
    }

    /// One message on the revision's main connection; the exchange carries
    /// the preamble a fresh process needs to see it again.
    pub async fn on_main(&self, msg: &Msg<'_>, case: &str) -> Result<Exchange, SessionError> {
        // HTTP: the exchange goes on a handle of its own (same client, same
        // session), so the main connection is not held while it is in flight.
        let shared = self.main(msg.rev).await?.http_clone();
        if let Some(mut conn) = shared {
            let mut ex = self.exchange(&mut conn, msg, Some(case)).await;
            ex.preamble = self.preamble(msg.rev);
            return Ok(ex);
        }
        let mut conn = self.main(msg.rev).await?;
        let mut ex = self.exchange(&mut conn, msg, Some(case)).await;
        ex.preamble = self.preamble(msg.rev);
        Ok(ex)
    }

    /// Send one JSON-RPC message (or a bodiless HTTP request) with the
    /// revision's standard headers, changed by `msg.edits`, and collect the
    /// reply. What the server sent is filed in the frame log of `msg.rev`
    /// under `log` (None: not this revision's traffic, e.g. a 2025-11-25
    /// probe while testing 2026-07-28).
    pub async fn exchange(&self, conn: &mut Connection, msg: &Msg<'_>, log: Option<&str>) -> Exchange {
        let text = (!msg.body.is_null()).then(|| msg.body.to_string());
        let id = msg.body.get("id").cloned();
        let mut ex = Exchange {
            label: msg.label.into(),
            transport: Some(conn.transport()),
            rpc_method: msg.body.get("method").and_then(|m| m.as_str()).map(String::from),
            request_id: id.clone(),
            sent: text.clone(),
            ..Default::default()
        };
        let mut headers = Vec::new();
        if conn.transport() == Transport::Http {
            headers = wire::standard_headers(msg.rev, text.is_some().then_some(msg.body), conn.session_id());
            wire::apply_edits(&mut headers, msg.edits);
            ex.http_method = Some(msg.http_method.into());
            ex.sent_headers = conn.shown_headers(&headers, self.redact_params, msg.exact_names || self.exact_names(msg.rev));
        }
        let expect = if msg.want_reply { id.as_ref() } else { None };
        let out = Outgoing {
            http_method: msg.http_method,
            body: text.as_deref(),
            headers: &headers,
            expect_id: expect,
            exact_names: msg.exact_names || self.exact_names(msg.rev),
            progress: msg.body.pointer("/params/_meta/progressToken"),
            answer: msg.answer,
            linger: msg.linger,
            repeatable: msg.repeatable || ex.rpc_method.as_deref().is_some_and(crate::transport::repeatable_method),
        };
        if let Ok(mut w) = self.waiting.lock() {
            *w = Some((msg.label.to_string(), Instant::now()));
        }
        let permit = match self.in_flight.get() {
            Some(limit) if !msg.on_purpose => limit.acquire().await.ok(),
            _ => None,
        };
        self.count_sent(1);
        ex.fill_from(conn.exchange(&out).await);
        drop(permit);
        if let Ok(mut w) = self.waiting.lock() {
            *w = None;
        }
        if conn.transport() == Transport::Http {
            self.note_session(msg, conn.session_id(), &ex);
        }
        self.note_calls(msg, log, &ex);
        if let Some(case) = log {
            self.log(msg.rev, case, &ex);
        }
        ex
    }

    /// HTTP: a session the server issued to an `initialize` is noted, and
    /// one a DELETE ended (2xx) or found gone (404) is struck off.
    fn note_session(&self, msg: &Msg<'_>, sent_with: Option<&str>, ex: &Exchange) {
        let Ok(mut issued) = self.issued.lock() else { return };
        let ok = ex.status.is_some_and(|s| (200..300).contains(&s));
        if ex.rpc_method.as_deref() == Some("initialize")
            && ok
            && let Some(id) = ex.header("mcp-session-id")
            && !issued.iter().any(|(_, i)| i == id)
        {
            issued.push((msg.rev, id.to_string()));
        }
        if msg.http_method == "DELETE"
            && let Some(id) = sent_with
            && (ok || ex.status == Some(404))
        {
            issued.retain(|(_, i)| i != id);
        }
        // (The connection may forget the id once the DELETE ends it: the
        // id is read from what was sent.)
        if msg.http_method == "DELETE"
            && ok
            && let Some(id) = ex.sent_headers.iter().find(|(k, _)| k.eq_ignore_ascii_case("mcp-session-id")).map(|(_, v)| v.clone())
            && let Ok(mut ended) = self.ended.lock()
        {
            ended.push((id, std::sync::Arc::new(ex.clone().lite())));
        }
    }

    /// HTTP: the DELETEs that ended `ex`'s session before `ex` was sent
    /// (a request on an ended session is answered as one; to see that
    /// answer again, the DELETE goes first).
    pub fn ended_before(&self, ex: &Exchange) -> Vec<std::sync::Arc<Exchange>> {
        let Some(sid) = ex.sent_headers.iter().find(|(k, _)| k.eq_ignore_ascii_case("mcp-session-id")).map(|(_, v)| v.as_str()) else {
            return Vec::new();
        };
        let Ok(ended) = self.ended.lock() else { return Vec::new() };
        ended.iter().filter(|(s, d)| s == sid && d.sent_at_ms <= ex.sent_at_ms).map(|(_, d)| d.clone()).collect()
    }

    /// HTTP: end every session the run was issued and did not end itself,
    /// as a client that no longer needs a session should (one DELETE each,
    /// all at once, `END_SESSIONS_WITHIN` at most altogether; a server that
    /// refuses with 405 keeps them, as it may). Not filed under any case.
    /// Returns how many the server ended.
    pub async fn end_sessions(&self) -> usize {
        let issued: Vec<(Revision, String)> = self.issued.lock().map(|mut g| std::mem::take(&mut *g)).unwrap_or_default();
        let ends = issued.iter().filter_map(|(rev, id)| {
            let mut conn = self.open().ok()?;
            conn.set_session_id(Some(id.clone()));
            Some(async move {
                let ex = self.exchange(&mut conn, &Msg::raw(*rev, "end the session", "DELETE").on_purpose(), None).await;
                ex.status.is_some_and(|s| (200..300).contains(&s))
            })
        });
        let all = futures_util::future::join_all(ends);
        match tokio::time::timeout(END_SESSIONS_WITHIN, all).await {
            Ok(done) => done.into_iter().filter(|ended| *ended).count(),
            Err(_) => 0,
        }
    }

    /// The headers a message would carry, as reports show them (for
    /// exchanges made outside `exchange`, such as listen streams).
    pub fn shown_headers(&self, conn: &Connection, headers: &[(String, String)], exact: bool) -> Vec<(String, String)> {
        conn.shown_headers(headers, self.redact_params, exact)
    }

    /// File what an exchange brought in the revision's frame log.
    pub fn log(&self, rev: Revision, case: &str, ex: &Exchange) {
        if let Some(st) = self.revs.get(&rev) {
            log::file(&st.log, rev, case, ex);
        }
    }

    /// The revision's frame log (whole-run audits read it).
    pub fn frame_log(&self, rev: Revision) -> Option<std::sync::MutexGuard<'_, FrameLog>> {
        self.revs.get(&rev).and_then(|s| s.log.lock().ok())
    }

    /// How many requests `shutdown` sends: one DELETE for each session the
    /// run was issued and did not end (HTTP), none over stdio.
    pub fn sessions_to_end(&self) -> usize {
        if self.transport() != Transport::Http {
            return 0;
        }
        self.issued.lock().map_or(0, |g| g.len())
    }

    /// Close every connection (kills stdio process groups, the pool's too).
    pub async fn shutdown(&self) {
        if self.transport() == Transport::Http {
            self.end_sessions().await;
        }
        for st in self.revs.values() {
            let mut g = st.main.lock().await;
            if let Some(c) = g.as_mut() {
                c.shutdown().await;
            }
            *g = None;
            if let Some((mut c, _)) = st.negative.lock().await.take() {
                c.shutdown().await;
            }
            if let Some(mut p) = st.probes.lock().await.take() {
                p.conn.shutdown().await;
            }
            // Kept for a later use that never came.
            let spare = st.spare_probe.lock().ok().and_then(|mut g| g.take());
            if let Some((mut c, _)) = spare {
                c.shutdown().await;
            }
        }
    }
}
