//! Revision detection: `server/discover` for 2026-07-28, the `initialize`
//! handshake for 2025-11-25, each on a connection or process of its own,
//! which is then kept as that revision's main connection.

use super::refusal::{host_hint, redirected, refused, turned_away};
use super::{FrameLog, Msg, PROBE, RevSession, Session};
use crate::record::{Exchange, RevisionInfo};
use crate::transport::{Connection, Transport};
use crate::wire::{self, MetaMode, Revision};
use serde_json::{Value, json};

pub enum Probe {
    Ready,
    /// The target could not be started or reached at all.
    Unreachable(String),
    /// The target answered, in no revision mcpcert tests (a version it
    /// does not know, or none of those asked for), saying which.
    Unsupported(String),
    /// HTTP: every probe was turned away for want of credentials (401 or
    /// 403, what it said), and the config gives none: the revision's
    /// authorization cases that need no token are judged, the rest is n/a.
    Protected(String),
}

/// A failed handshake: why, what was exchanged, and whether there was no
/// answer at all (as opposed to a refusal).
pub(super) struct HandshakeError {
    pub why: String,
    pub exchanges: Vec<Exchange>,
    pub no_answer: bool,
}

pub(super) type Handshake = (Value, Vec<Exchange>, Vec<String>);

impl Session {
    /// stdio: the longest a probe's new process took to answer its first
    /// request, start-up included (0 over HTTP), in milliseconds.
    pub fn first_answer_ms(&self) -> u64 {
        self.first_answer_ms.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// stdio: how many server processes the run started, the longest a
    /// new one took to answer its first request (ms; None when none
    /// answered one), and those times summed (ms).
    pub fn starts(&self) -> (u64, Option<u64>, u64) {
        use std::sync::atomic::Ordering::Relaxed;
        let answered = self.limits.processes_answered.load(Relaxed);
        (
            self.limits.processes_started.load(Relaxed),
            (answered > 0).then(|| self.limits.seen_start_ms.load(Relaxed)),
            self.limits.starts_total_ms.load(Relaxed),
        )
    }

    /// A probe's first exchange on a process it started (stdio).
    fn note_first_answer(&self, ex: &Exchange) {
        if self.transport() == Transport::Stdio && ex.error.is_none() {
            self.first_answer_ms.fetch_max(ex.ms, std::sync::atomic::Ordering::Relaxed);
        }
        self.note_start(ex);
    }

    /// A new process's first exchange (a probe's or a case's): the longest
    /// start seen sets the start-up allowance of every later process.
    pub(super) fn note_start(&self, ex: &Exchange) {
        if self.transport() == Transport::Stdio && ex.error.is_none() {
            self.limits.saw_start(ex.ms);
        }
    }

    /// The `initialize` the revision probe sent for `rev` and the answer
    /// it got (initialize era, once `rev` is served): the first request on
    /// a connection or process of its own, with no session id.
    pub fn probe_initialize(&self, rev: Revision) -> Option<&Exchange> {
        self.revs.get(&rev).and_then(|s| s.initialize.as_ref())
    }

    /// The initialize probe's `initialize` and its answer (served or
    /// refused), if it was sent: what a 2025-11-25 client's first request
    /// on a new connection or process gets.
    pub fn initialize_probe(&self) -> Option<&Exchange> {
        self.initialize_probe.as_ref()
    }

    /// Detect what the target serves (`wanted`: only that revision, or
    /// None for the newest of each era) and keep one connection per
    /// revision served: the stateless one, and the initialize-era revision
    /// the server negotiates (asked for the newest, or for `wanted`).
    pub async fn prepare(&mut self, wanted: Option<Revision>) -> Probe {
        let want_stateless = wanted.is_none_or(|r| r.is_stateless());
        let want_initialize = wanted.is_none_or(|r| !r.is_stateless());
        let asked = wanted.filter(|r| !r.is_stateless()).unwrap_or(Revision::NEWEST_INITIALIZE);
        // The initialize probe also tells whether a 2026-07-28 server is
        // dual-era (which decides the modern-only rules), so it runs even
        // when only 2026-07-28 is tested; then its state is not kept. Each
        // probe has request ids of its own. Over HTTP the two go out
        // together; over stdio one after the other, each process started
        // alone (a server's start-up can take the machine for seconds, and
        // two starting at once have crashed servers with a persistent
        // store), and the pool of processes started ahead waits for them.
        let modern_probe = super::with_ids_from(super::MODERN_PROBE_IDS, async {
            if want_stateless { Some(self.probe_modern_again().await) } else { None }
        });
        let exact = wanted.is_some();
        let (modern, legacy) = if self.transport() == Transport::Stdio {
            let modern = modern_probe.await;
            let answered = modern.as_ref().is_some_and(|m| m.info.unreachable.is_none());
            // A process that answered nothing is stopped before the next
            // probe starts one: a program that holds something (a port, a
            // lock) would make the second copy fail for another reason.
            if let Some(m) = modern.as_ref().filter(|m| m.info.unreachable.is_some())
                && let Some(c) = m.main.lock().await.as_mut()
            {
                c.shutdown().await;
            }
            (modern, super::with_ids_from(super::LEGACY_PROBE_IDS, self.probe_legacy_again(asked, exact, answered, want_initialize)).await)
        } else {
            tokio::join!(
                modern_probe,
                super::with_ids_from(super::LEGACY_PROBE_IDS, self.probe_legacy_again(asked, exact, true, want_initialize))
            )
        };
        if let Some(st) = modern {
            self.revs.insert(Revision::NEWEST_STATELESS, st);
        }
        if let Some(m) = self.revs.get_mut(&Revision::NEWEST_STATELESS)
            && m.info.supported
        {
            m.dual_era = Some(legacy.info.supported);
        }
        // What the initialize probe found when only 2026-07-28 was asked
        // for (said if 2026-07-28 turns out not to be served).
        self.initialize_probe = legacy.first_initialize.clone();
        let other_era = (!want_initialize && legacy.info.supported)
            .then(|| format!("its initialize negotiates {}", legacy.info.negotiated.clone().unwrap_or_default()));
        // stdio, a modern-only server: the initialize probe's process (its
        // initialize refused) may serve as the 2026-07-28 probe process, if
        // a sentinel later shows it answering as a new one would (a start
        // saved).
        let modern_only = self.revs.get(&Revision::NEWEST_STATELESS).is_some_and(|m| m.info.supported)
            && !legacy.info.supported
            && legacy.info.unreachable.is_none()
            && self.transport() == Transport::Stdio;
        if modern_only
            && let Some(c) = legacy.main.lock().await.take()
            && let Some(m) = self.revs.get(&Revision::NEWEST_STATELESS)
            && let Ok(mut spare) = m.spare_probe.lock()
        {
            let lines: Vec<String> = legacy.first_initialize.as_ref().and_then(|e| e.sent.clone()).into_iter().collect();
            *spare = Some((c, lines));
        }
        if want_initialize {
            self.revs.insert(legacy.info.revision, legacy);
        } else if let Some(c) = legacy.main.lock().await.as_mut() {
            c.shutdown().await;
        }
        // One era answered, the other got nothing: the server does not
        // speak the other (older servers close or hang on a method they do
        // not know, such as server/discover), which is no reason to call
        // the target unreachable for it.
        let answered: Vec<Revision> = self.revs.values().filter(|s| s.info.supported).map(|s| s.info.revision).collect();
        if let Some(other) = answered.first() {
            for st in self.revs.values_mut().filter(|s| !s.info.supported) {
                if let Some(why) = st.info.unreachable.take() {
                    st.info.reason = format!("{why}; the server answers {other}, so it is taken not to speak {}", st.info.revision);
                }
            }
        }
        let infos: Vec<&RevisionInfo> = self.revs.values().map(|s| &s.info).collect();
        if infos.iter().all(|i| i.unreachable.is_some()) {
            let mut why: Vec<String> = infos.iter().filter_map(|i| i.unreachable.clone()).collect();
            // Two probes that failed alike (a command that cannot start) say it once.
            why.dedup();
            let mut all = why.join("\n");
            // Every probe's process talked, and none in JSON-RPC: most likely
            // not an MCP server on stdio.
            if self.transport() == Transport::Stdio && why.iter().all(|w| w.contains(STDOUT_NOISE)) {
                all.push_str("\nthe program wrote lines that are not JSON-RPC and answered no request: is it an MCP server speaking stdio? (one that serves HTTP is checked with --http URL; one that logs to stdout must log to stderr)");
            }
            return Probe::Unreachable(all);
        }
        // Every probe turned away for want of credentials: a protected
        // server. With none configured, what needs no token is judged (the
        // asked revision's authorization cases, else 2026-07-28's); with
        // some, they were refused.
        if self.transport() == Transport::Http && !infos.is_empty() && infos.iter().all(|i| !i.supported && i.protected.is_some()) {
            let how = infos.iter().find_map(|i| i.protected.clone()).unwrap_or_default();
            let sent = match &self.target {
                crate::transport::TargetSpec::Http(h) => {
                    h.headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("authorization") || k.eq_ignore_ascii_case("cookie"))
                }
                _ => false,
            };
            if sent {
                return Probe::Unreachable(format!(
                    "the server refused the credentials the config gives: {how} to every probe; check the token or API key, and that the server expects it where the config sends it"
                ));
            }
            let judged = wanted.unwrap_or(Revision::NEWEST_STATELESS);
            for st in self.revs.values_mut() {
                st.info.reason = format!("needs a token: the server answers {how} without one, so what it serves cannot be probed");
                if st.info.revision != judged {
                    st.info.protected = None;
                }
            }
            return Probe::Protected(how);
        }
        let infos: Vec<&RevisionInfo> = self.revs.values().map(|s| &s.info).collect();
        // Every probe redirected: the URL is not the endpoint; say where it
        // points (a client that follows redirects would go there).
        if let crate::transport::TargetSpec::Http(spec) = self.target()
            && !infos.is_empty()
            && infos.iter().all(|i| !i.supported && i.redirect.is_some())
            && let Some((status, location)) = infos.iter().find_map(|i| i.redirect.clone())
        {
            let to = reqwest::Url::parse(&spec.url).ok().and_then(|u| u.join(&location).ok()).map(|u| u.to_string()).unwrap_or(location);
            return Probe::Unreachable(format!(
                "the server redirects {} to {to} (HTTP {status}) instead of answering: MCP clients post to the endpoint itself; pass --http {to}",
                crate::transport::redact_url(&spec.url)
            ));
        }
        // Every probe refused, and not for want of a token: said as what it
        // is, never judged as authorization.
        if let crate::transport::TargetSpec::Http(spec) = self.target()
            && !infos.is_empty()
            && infos.iter().all(|i| !i.supported && i.refused.is_some())
            && let Some((status, body)) = infos.iter().find_map(|i| i.refused.clone())
        {
            let said = if body.is_empty() { String::from("with an empty body") } else { format!("\"{body}\"") };
            return Probe::Unreachable(format!(
                "the server refuses every probe with HTTP {status} {said}, with no Bearer challenge: a refusal, not authorization (mcpcert takes a server as protected only on a 401, or a 403 with WWW-Authenticate: Bearer), so nothing was judged.{}",
                host_hint(&spec.url)
            ));
        }
        if !infos.iter().any(|i| i.supported) {
            // Only one revision was asked for: say which the server serves.
            if let Some(asked) = wanted
                && let Some(other) = match other_era {
                    Some(o) => Some(o),
                    None => self.other_revision(asked).await,
                }
            {
                return Probe::Unsupported(format!(
                    "--revision {asked} was asked for, and the server does not serve it: {other}. A run without --revision judges what the server serves"
                ));
            }
            let infos: Vec<&RevisionInfo> = self.revs.values().map(|s| &s.info).collect();
            let why: Vec<String> = infos.iter().map(|i| format!("{}: {}", i.revision, i.reason)).collect();
            // Every probe got a 404 page: most likely not the MCP endpoint.
            if let crate::transport::TargetSpec::Http(spec) = self.target()
                && !infos.is_empty()
                && infos.iter().all(|i| i.reason.contains("HTTP 404, no JSON-RPC response"))
            {
                let path = reqwest::Url::parse(&spec.url).map(|u| u.path().to_string()).unwrap_or_else(|_| spec.url.clone());
                return Probe::Unreachable(format!(
                    "HTTP 404 at {path} for every probe, with no JSON-RPC answer: is the MCP endpoint path right? (often /mcp) — {}",
                    why.join("; ")
                ));
            }
            return Probe::Unsupported(format!(
                "the target answered, but in none of the revisions mcpcert tests that were asked for ({})",
                why.join("; ")
            ));
        }
        Probe::Ready
    }

    /// The revisions the probes found served (what the run tests).
    pub fn served(&self) -> Vec<Revision> {
        self.revs.values().filter(|s| s.info.supported).map(|s| s.info.revision).collect()
    }

    /// What the server serves when it does not serve `asked`: the version
    /// its `initialize` negotiated instead, or 2026-07-28 (asked of a
    /// server that was probed for the initialize era only).
    async fn other_revision(&self, asked: Revision) -> Option<String> {
        if let Some(v) = self.revs.values().find_map(|s| s.info.negotiated.clone().filter(|v| v != asked.as_str())) {
            return Some(format!("its initialize negotiates {v}"));
        }
        if let Some(m) = self.revs.get(&Revision::NEWEST_STATELESS).filter(|m| m.info.supported) {
            return Some(format!("it serves {} ({})", m.info.revision, m.info.reason));
        }
        // Only 2026-07-28 asked for: what the initialize probe negotiated.
        if let Some(v) = self
            .initialize_probe
            .as_ref()
            .and_then(|e| e.result())
            .and_then(|r| r.get("protocolVersion"))
            .and_then(serde_json::Value::as_str)
            .filter(|v| *v != asked.as_str())
        {
            return Some(format!("its initialize negotiates {v}"));
        }
        if asked.is_stateless() {
            return None;
        }
        let m = self.probe_modern().await;
        if let Some(c) = m.main.lock().await.as_mut() {
            c.shutdown().await;
        }
        m.info.supported.then(|| format!("it serves {} (server/discover answered with a DiscoverResult)", m.info.revision))
    }

    /// The 2026-07-28 probe; over stdio a process that did not answer at
    /// all (it died, or wrote nothing in time) is tried once more, on a
    /// process of its own, before the revision is called unreachable.
    async fn probe_modern_again(&self) -> RevSession {
        let first = self.probe_modern().await;
        // A process that talked (lines that are not JSON-RPC) was not slow
        // to start: a second copy would say the same.
        let Some(why) = first.info.unreachable.clone().filter(|w| self.transport() == Transport::Stdio && !w.contains(STDOUT_NOISE)) else {
            return first;
        };
        if let Some(c) = first.main.lock().await.as_mut() {
            c.shutdown().await;
        }
        let mut again = self.probe_modern().await;
        again.info.reason = retried(&again, &why);
        again
    }

    /// The 2025-11-25 probe; over stdio a process that died before
    /// answering initialize is tried once more, and so is one that gave no
    /// answer in time when the 2026-07-28 probe got none either (the target
    /// may be slow to start, not silent).
    async fn probe_legacy_again(&self, asked: Revision, exact: bool, other_answered: bool, keep: bool) -> RevSession {
        let first = self.probe_legacy(asked, exact, keep).await;
        let died = first.info.unreachable.as_deref().is_some_and(|w| w.contains("connection closed"));
        let talked = first.info.unreachable.as_deref().is_some_and(|w| w.contains(STDOUT_NOISE));
        let retry = self.transport() == Transport::Stdio && first.info.unreachable.is_some() && (died || (!other_answered && !talked));
        if !retry {
            return first;
        }
        let why = first.info.unreachable.clone().unwrap_or_default();
        if let Some(c) = first.main.lock().await.as_mut() {
            c.shutdown().await;
        }
        let mut again = self.probe_legacy(asked, exact, keep).await;
        again.info.reason = retried(&again, &why);
        again
    }

    async fn probe_modern(&self) -> RevSession {
        let mut st = blank(Revision::NEWEST_STATELESS);
        let Some(mut conn) = probe_conn(self, &mut st) else { return st };
        let body = wire::request(
            &self.next_id(),
            "server/discover",
            wire::modern_params(None, MetaMode::Full, Revision::NEWEST_STATELESS.as_str()),
        );
        let mut ex = self.exchange(&mut conn, &Msg::new(Revision::NEWEST_STATELESS, "probe: server/discover", &body), None).await;
        self.note_first_answer(&ex);
        file(&st, &ex);
        // A header rejection of a correct request may be a server that
        // reads header names case-sensitively (reqwest sends them in lower
        // case): ask again with the spec's spelling, and if that is served,
        // carry on with it (the name-case cases say what happened).
        let rejected = ex.status == Some(400) || ex.error_code() == Some(-32020);
        if rejected && self.target.url().is_some_and(|u| u.starts_with("http://")) {
            let body = wire::request(
                &self.next_id(),
                "server/discover",
                wire::modern_params(None, MetaMode::Full, Revision::NEWEST_STATELESS.as_str()),
            );
            let msg = Msg::new(Revision::NEWEST_STATELESS, "probe: server/discover, header names spelt as the spec does", &body)
                .exact_names(true);
            let retry = self.exchange(&mut conn, &msg, None).await;
            file(&st, &retry);
            if retry.result().is_some_and(|r| r.get("supportedVersions").is_some() || r.get("capabilities").is_some()) {
                st.exact_names = true;
                st.info.header_names_case_sensitive = Some(true);
                ex = retry;
            }
        }
        if let Some(err) = &ex.error {
            let why = format!("no answer to server/discover: {err}{}{}", said_on_stdout(&ex), said_on_stderr(&ex.stderr));
            st.info.reason = why.clone();
            st.info.unreachable = Some(why);
        } else {
            match &ex.response {
                Some(r) if r.get("result").is_some_and(|x| x.get("supportedVersions").is_some() || x.get("capabilities").is_some()) => {
                    let res = &r["result"];
                    st.info.supported = true;
                    st.info.reason = if st.exact_names {
                        "server/discover answered with a DiscoverResult, but only with the header names spelt as the spec does (MCP-Protocol-Version, Mcp-Method): the server reads HTTP header names case-sensitively; mcpcert carries on with that spelling".into()
                    } else {
                        "server/discover answered with a DiscoverResult".into()
                    };
                    st.info.capabilities = Some(res.get("capabilities").cloned().unwrap_or(json!({})));
                    st.info.server_info = res.pointer("/_meta").and_then(|m| m.get(wire::KEY_SERVER_INFO)).cloned();
                }
                Some(r) if r.pointer("/error/code").and_then(|c| c.as_i64()) == Some(-32022) => {
                    st.info.reason = format!(
                        "server/discover for 2026-07-28 answered -32022 (unsupported version); the server lists {}",
                        r.pointer("/error/data/supported").map(wire::brief).unwrap_or_else(|| "no versions".into())
                    );
                }
                _ => st.info.reason = format!("server/discover did not return a DiscoverResult ({})", ex.summary()),
            }
            st.info.protected = turned_away(&ex);
            st.info.redirect = redirected(&ex);
            st.info.refused = refused(&ex);
        }
        *st.main.get_mut() = Some(conn);
        st
    }

    /// `initialize` asking for `asked`: the revision the server negotiates
    /// is served if mcpcert knows it (`exact`: only `asked` itself, the
    /// revision the operator asked for). `keep`: the session is the run's
    /// main one; if not (only 2026-07-28 is tested, and the probe only
    /// tells whether the server is dual-era), `notifications/initialized`
    /// is not sent: nothing more goes on that session.
    async fn probe_legacy(&self, asked: Revision, exact: bool, keep: bool) -> RevSession {
        let mut st = blank(asked);
        let Some(mut conn) = probe_conn(self, &mut st) else { return st };
        let mut shaken = self.handshake_then(&mut conn, asked, None, self.next_id(), keep).await;
        match &shaken {
            Ok((_, exs, _)) => exs.first().into_iter().for_each(|ex| self.note_first_answer(ex)),
            Err(e) => e.exchanges.first().into_iter().for_each(|ex| self.note_first_answer(ex)),
        }
        st.first_initialize = match &shaken {
            Ok((_, exs, _)) => exs.first().cloned(),
            Err(e) => e.exchanges.first().cloned(),
        };
        // An HTTP target that refuses the POST may serve 2024-11-05's HTTP
        // with SSE: a GET stream names where messages go.
        let mut over_sse = None;
        if let Err(e) = &shaken
            && let Some(first) = e.exchanges.first()
            && first.response.is_none()
            && first.status.is_some_and(|s| s >= 400)
            && let Ok(mut sse) = Connection::open_sse(&self.target, &self.limits)
        {
            match self.handshake_then(&mut sse, asked, None, self.next_id(), keep).await {
                Ok(h) => {
                    for ex in &e.exchanges {
                        file(&st, ex);
                    }
                    let endpoint = sse.sse_facts().and_then(|f| f.endpoint_data.clone()).unwrap_or_default();
                    over_sse = Some(format!(
                        "; over HTTP with SSE, 2024-11-05's transport (the POST got HTTP {}; GET {} opened a stream whose endpoint event named {:?})",
                        first.status.unwrap_or(0),
                        crate::transport::redact_url(self.target.url().unwrap_or("")),
                        crate::record::clip(&endpoint, 120)
                    ));
                    if let crate::transport::TargetSpec::Http(h) = &self.target {
                        h.sse.set();
                    }
                    conn = sse;
                    shaken = Ok(h);
                }
                Err(e2) => {
                    let mut e = shaken.unwrap_err();
                    e.why = format!("{}; it does not serve HTTP with SSE there either ({})", e.why, e2.why);
                    e.exchanges.extend(e2.exchanges);
                    shaken = Err(e);
                }
            }
        }
        match shaken {
            Ok((result, exs, lines)) => {
                for ex in &exs {
                    file(&st, ex);
                }
                let v = result.get("protocolVersion").and_then(|v| v.as_str()).unwrap_or("").to_string();
                // The server named itself, whichever version it negotiated.
                st.info.server_info = result.get("serverInfo").cloned();
                st.info.negotiated = Some(v.clone());
                let served = Revision::parse(&v).filter(|r| !r.is_stateless() && (!exact || *r == asked));
                match served {
                    Some(rev) => {
                        st.info.revision = rev;
                        st.info.supported = true;
                        st.info.reason = if rev == asked {
                            format!("initialize negotiated {v}")
                        } else {
                            format!("answers initialize with {v} only (asked for {asked}, it negotiated {v}): mcpcert tests {v}")
                        };
                        if let Some(how) = &over_sse {
                            st.info.reason.push_str(how);
                        }
                        st.info.capabilities = Some(result.get("capabilities").cloned().unwrap_or(json!({})));
                        if conn.transport() == crate::transport::Transport::Http {
                            st.info.session_id_issued = Some(conn.session_id().is_some());
                            st.session_id = conn.session_id().map(String::from);
                        }
                        st.preamble = lines;
                        st.initialize = exs.into_iter().next();
                    }
                    None if Revision::parse(&v).is_none() => {
                        st.info.reason = format!(
                            "initialize for {asked} negotiated `{v}`, a protocol version mcpcert does not know (it tests {})",
                            Revision::ALL.iter().map(|r| r.as_str()).collect::<Vec<_>>().join(", ")
                        );
                    }
                    None => st.info.reason = format!("initialize for {asked} negotiated `{v}` instead"),
                }
            }
            Err(e) => {
                for ex in &e.exchanges {
                    file(&st, ex);
                }
                st.info.protected = e.exchanges.first().and_then(turned_away);
                st.info.redirect = e.exchanges.first().and_then(redirected);
                st.info.refused = e.exchanges.first().and_then(refused);
                st.info.reason = e.why.clone();
                if e.no_answer {
                    st.info.unreachable = Some(e.why);
                }
            }
        }
        *st.main.get_mut() = Some(conn);
        st
    }

    /// initialize + notifications/initialized on `conn` (its session id is
    /// kept). Returns the InitializeResult, the exchanges, and (stdio) the
    /// lines sent. The exchanges are filed under `log` (None: not at all).
    /// `id`: the initialize's (taken by the caller before anything waits,
    /// so that processes started together get their ids in a set order).
    pub(super) async fn handshake(
        &self,
        conn: &mut Connection,
        rev: Revision,
        log: Option<&str>,
        id: Value,
    ) -> Result<Handshake, Box<HandshakeError>> {
        self.handshake_then(conn, rev, log, id, true).await
    }

    /// `handshake`, with `notifications/initialized` only if `initialized`.
    async fn handshake_then(
        &self,
        conn: &mut Connection,
        rev: Revision,
        log: Option<&str>,
        id: Value,
        initialized: bool,
    ) -> Result<Handshake, Box<HandshakeError>> {
        let body = wire::request(&id, "initialize", Some(wire::initialize_params(rev.as_str())));
        let ex = self.exchange(conn, &Msg::new(rev, "handshake: initialize", &body), log).await;
        let mut lines = vec![body.to_string()];
        if let Some(e) = &ex.error {
            return Err(Box::new(HandshakeError {
                why: format!("no answer to initialize: {e}{}{}", said_on_stdout(&ex), said_on_stderr(&ex.stderr)),
                exchanges: vec![ex.clone()],
                no_answer: true,
            }));
        }
        let Some(result) = ex.result().cloned() else {
            return Err(Box::new(HandshakeError {
                why: format!("initialize was not accepted ({})", ex.summary()),
                exchanges: vec![ex],
                no_answer: false,
            }));
        };
        conn.set_session_id(ex.header("mcp-session-id").map(|s| s.to_string()));
        if !initialized {
            return Ok((result, vec![ex], lines));
        }
        let note = wire::notification("notifications/initialized", None);
        // From here on the session speaks the revision negotiated (its
        // MCP-Protocol-Version header, where the revision has one).
        let now =
            result.get("protocolVersion").and_then(|v| v.as_str()).and_then(Revision::parse).filter(|r| !r.is_stateless()).unwrap_or(rev);
        // Nothing is due back; whatever comes is read with the next exchange.
        let ex2 = self.exchange(conn, &Msg::new(now, "handshake: notifications/initialized", &note).no_linger(), log).await;
        lines.push(note.to_string());
        Ok((result, vec![ex, ex2], lines))
    }
}

/// A probe's reason after a second try, saying why there was one.
fn retried(again: &RevSession, first_why: &str) -> String {
    if again.info.unreachable.is_none() {
        format!("{} (on a second process: the first gave no answer: {first_why})", again.info.reason)
    } else {
        format!("{} (tried on two processes one after the other; the first gave no answer either: {first_why})", again.info.reason)
    }
}

fn blank(rev: Revision) -> RevSession {
    RevSession {
        info: RevisionInfo::blank(rev),
        dual_era: None,
        preamble: Vec::new(),
        exact_names: false,
        session_id: None,
        initialize: None,
        first_initialize: None,
        main: tokio::sync::Mutex::new(None),
        negative: tokio::sync::Mutex::new(None),
        probes: tokio::sync::Mutex::new(None),
        spare_probe: std::sync::Mutex::new(None),
        opening: std::sync::OnceLock::new(),
        log: std::sync::Mutex::new(FrameLog::default()),
    }
}

/// A new connection for a probe; if none can be opened, `st` says why.
fn probe_conn(session: &Session, st: &mut RevSession) -> Option<Connection> {
    match session.open() {
        Ok(c) => Some(c),
        Err(e) => {
            st.info.reason = e.to_string();
            st.info.unreachable = Some(e.to_string());
            None
        }
    }
}

/// What the server wrote on stderr last, to follow a reason it did not
/// answer (a start-up failure's traceback), or nothing.
fn said_on_stderr(stderr: &str) -> String {
    match crate::record::stderr_tail(stderr) {
        Some(t) => format!("\nthe server's stderr ended with:\n{}", t.lines().map(|l| format!("  | {l}")).collect::<Vec<_>>().join("\n")),
        None => String::new(),
    }
}

/// What the server wrote on stdout that was not a JSON-RPC message (the
/// first lines, clipped), to follow a reason it did not answer: a program
/// that is not an MCP server, or one that prints log lines on stdout.
/// How a probe's reason quotes the lines a process wrote on stdout that
/// are not JSON-RPC.
const STDOUT_NOISE: &str = "it wrote on stdout, where only JSON-RPC messages may go";

fn said_on_stdout(ex: &Exchange) -> String {
    let bad: Vec<String> = ex
        .frames
        .iter()
        .filter(|f| f.problem.is_some())
        .take(5)
        .map(|f| format!("  | {}", crate::record::clip(f.raw.trim_end(), 200)))
        .collect();
    if bad.is_empty() {
        return String::new();
    }
    let more = ex.frames.iter().filter(|f| f.problem.is_some()).count().saturating_sub(bad.len());
    format!("\n{STDOUT_NOISE}:\n{}{}", bad.join("\n"), if more > 0 { format!("\n  | … and {more} more line(s)") } else { String::new() })
}

/// File probe traffic in a revision's own log (it is not in the session yet).
fn file(st: &RevSession, ex: &Exchange) {
    super::log::file(&st.log, st.info.revision, PROBE, ex);
}
