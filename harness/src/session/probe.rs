//! Revision detection: `server/discover` for 2026-07-28, the `initialize`
//! handshake for 2025-11-25, each on a connection or process of its own,
//! which is then kept as that revision's main connection.

use super::{FrameLog, Msg, PROBE, RevSession, Session};
use crate::record::{Exchange, RevisionInfo};
use crate::transport::{Connection, Transport};
use crate::wire::{self, MetaMode, Revision};
use serde_json::{Value, json};

pub enum Probe {
    Ready,
    /// The target could not be started or reached at all.
    Unreachable(String),
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
    /// Detect what the target serves (`wanted`: only that revision, or
    /// None for both) and keep one connection per revision.
    pub async fn prepare(&mut self, wanted: Option<Revision>) -> Probe {
        let want_modern = wanted.is_none_or(|r| r == Revision::Modern);
        let want_legacy = wanted.is_none_or(|r| r == Revision::Legacy);
        // The legacy probe also tells whether a 2026-07-28 server is
        // dual-era (which decides the modern-only rules), so it runs even
        // when only 2026-07-28 is tested; then its state is not kept. Each
        // probe has request ids of its own. Over HTTP the two go out
        // together; over stdio one after the other, each process started
        // alone (a server's start-up can take the machine for seconds, and
        // two starting at once have crashed servers with a persistent
        // store), and the pool of processes started ahead waits for them.
        let modern_probe =
            super::with_ids_from(super::MODERN_PROBE_IDS, async { if want_modern { Some(self.probe_modern_again().await) } else { None } });
        let (modern, legacy) = if self.transport() == Transport::Stdio {
            let modern = modern_probe.await;
            let answered = modern.as_ref().is_some_and(|m| m.info.unreachable.is_none());
            (modern, super::with_ids_from(super::LEGACY_PROBE_IDS, self.probe_legacy_again(answered)).await)
        } else {
            tokio::join!(modern_probe, super::with_ids_from(super::LEGACY_PROBE_IDS, self.probe_legacy_again(true)))
        };
        if let Some(st) = modern {
            self.revs.insert(Revision::Modern, st);
        }
        if let Some(m) = self.revs.get_mut(&Revision::Modern)
            && m.info.supported
        {
            m.dual_era = Some(legacy.info.supported);
        }
        if want_legacy {
            self.revs.insert(Revision::Legacy, legacy);
        } else {
            if let Some(c) = legacy.main.lock().await.as_mut() {
                c.shutdown().await;
            }
        }
        let infos: Vec<&RevisionInfo> = self.revs.values().map(|s| &s.info).collect();
        if infos.iter().all(|i| i.unreachable.is_some()) {
            let why: Vec<String> = infos.iter().filter_map(|i| i.unreachable.clone()).collect();
            return Probe::Unreachable(why.join("\n"));
        }
        if !infos.iter().any(|i| i.supported) {
            let why: Vec<String> = infos.iter().map(|i| format!("{}: {}", i.revision, i.reason)).collect();
            return Probe::Unreachable(format!("the target answered but speaks none of the revisions asked for ({})", why.join("; ")));
        }
        Probe::Ready
    }

    /// The 2026-07-28 probe; over stdio a process that did not answer at
    /// all (it died, or wrote nothing in time) is tried once more, on a
    /// process of its own, before the revision is called unreachable.
    async fn probe_modern_again(&self) -> RevSession {
        let first = self.probe_modern().await;
        let Some(why) = first.info.unreachable.clone().filter(|_| self.transport() == Transport::Stdio) else { return first };
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
    async fn probe_legacy_again(&self, other_answered: bool) -> RevSession {
        let first = self.probe_legacy().await;
        let died = first.info.unreachable.as_deref().is_some_and(|w| w.contains("connection closed"));
        let retry = self.transport() == Transport::Stdio && first.info.unreachable.is_some() && (died || !other_answered);
        if !retry {
            return first;
        }
        let why = first.info.unreachable.clone().unwrap_or_default();
        if let Some(c) = first.main.lock().await.as_mut() {
            c.shutdown().await;
        }
        let mut again = self.probe_legacy().await;
        again.info.reason = retried(&again, &why);
        again
    }

    async fn probe_modern(&self) -> RevSession {
        let mut st = blank(Revision::Modern);
        let Some(mut conn) = probe_conn(self, &mut st) else { return st };
        let body = wire::request(&self.next_id(), "server/discover", wire::modern_params(None, MetaMode::Full, wire::MODERN));
        let mut ex = self.exchange(&mut conn, &Msg::new(Revision::Modern, "probe: server/discover", &body), None).await;
        file(&st, &ex);
        // A header rejection of a correct request may be a server that
        // reads header names case-sensitively (reqwest sends them in lower
        // case): ask again with the spec's spelling, and if that is served,
        // carry on with it (the name-case cases say what happened).
        let rejected = ex.status == Some(400) || ex.error_code() == Some(-32020);
        if rejected && self.target.url().is_some_and(|u| u.starts_with("http://")) {
            let body = wire::request(&self.next_id(), "server/discover", wire::modern_params(None, MetaMode::Full, wire::MODERN));
            let msg = Msg::new(Revision::Modern, "probe: server/discover, header names spelt as the spec does", &body).exact_names(true);
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
        }
        *st.main.get_mut() = Some(conn);
        st
    }

    async fn probe_legacy(&self) -> RevSession {
        let mut st = blank(Revision::Legacy);
        let Some(mut conn) = probe_conn(self, &mut st) else { return st };
        match self.handshake(&mut conn, None).await {
            Ok((result, exs, lines)) => {
                for ex in &exs {
                    file(&st, ex);
                }
                let v = result.get("protocolVersion").and_then(|v| v.as_str()).unwrap_or("");
                // The server named itself, whichever version it negotiated.
                st.info.server_info = result.get("serverInfo").cloned();
                if v == wire::LEGACY {
                    st.info.supported = true;
                    st.info.reason = "initialize negotiated 2025-11-25".into();
                    st.info.capabilities = Some(result.get("capabilities").cloned().unwrap_or(json!({})));
                    if conn.transport() == crate::transport::Transport::Http {
                        st.info.session_id_issued = Some(conn.session_id().is_some());
                        st.session_id = conn.session_id().map(String::from);
                    }
                    st.preamble = lines;
                } else {
                    st.info.reason = format!("initialize for 2025-11-25 negotiated `{v}` instead");
                }
            }
            Err(e) => {
                for ex in &e.exchanges {
                    file(&st, ex);
                }
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
    pub(super) async fn handshake(&self, conn: &mut Connection, log: Option<&str>) -> Result<Handshake, Box<HandshakeError>> {
        let body = wire::request(&self.next_id(), "initialize", Some(wire::initialize_params(wire::LEGACY)));
        let ex = self.exchange(conn, &Msg::new(Revision::Legacy, "handshake: initialize", &body), log).await;
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
        let note = wire::notification("notifications/initialized", None);
        // Nothing is due back; whatever comes is read with the next exchange.
        let ex2 = self.exchange(conn, &Msg::new(Revision::Legacy, "handshake: notifications/initialized", &note).no_linger(), log).await;
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
        main: tokio::sync::Mutex::new(None),
        negative: tokio::sync::Mutex::new(None),
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
    format!(
        "\nit wrote on stdout, where only JSON-RPC messages may go:\n{}{}",
        bad.join("\n"),
        if more > 0 { format!("\n  | … and {more} more line(s)") } else { String::new() }
    )
}

/// File probe traffic in a revision's own log (it is not in the session yet).
fn file(st: &RevSession, ex: &Exchange) {
    super::log::file(&st.log, st.info.revision, PROBE, ex);
}
