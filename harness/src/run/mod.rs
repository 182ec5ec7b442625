//! Execution: reach the target, detect which revisions it serves, run each
//! case's steps, judge its expectations, and keep a transcript.

mod actions;
mod completion;
mod expect;
mod headers;
pub mod mrtr;
pub mod roles;
mod subscriptions;
pub mod tools;

pub use tools::Contract;

use crate::suite::{Case, Step};
use crate::target::http::{HttpSpec, HttpTarget};
use crate::target::stdio::{StdioSpec, StdioTarget, shell_quote};
use crate::target::{Frame, Limits, TransportError};
use crate::wire::{self, LEGACY, MODERN, MetaMode};
use serde::Serialize;
use serde_json::{Value, json};
use std::collections::{BTreeMap, HashMap};
use std::time::Instant;

#[derive(Debug, Clone)]
pub enum TargetSpec {
    Stdio(StdioSpec),
    Http(HttpSpec),
}

impl TargetSpec {
    pub fn transport(&self) -> &'static str {
        match self {
            TargetSpec::Stdio(_) => "stdio",
            TargetSpec::Http(_) => "http",
        }
    }
    /// A description safe to put in reports.
    pub fn describe(&self) -> Value {
        match self {
            TargetSpec::Stdio(s) => json!({
                "transport": "stdio",
                "command": s.argv.iter().map(|a| shell_quote(a)).collect::<Vec<_>>().join(" "),
                "env": s.env.iter().map(|(k, _)| format!("{k}=[redacted]")).collect::<Vec<_>>(),
            }),
            TargetSpec::Http(h) => json!({
                "transport": "http",
                "url": redact_url(&h.url),
                "headers": h.headers.iter().map(|(k, _)| format!("{k}: [redacted]")).collect::<Vec<_>>(),
            }),
        }
    }
}

/// Strip userinfo and query values from a URL for reports.
pub fn redact_url(u: &str) -> String {
    match reqwest::Url::parse(u) {
        Ok(mut url) => {
            if !url.username().is_empty() || url.password().is_some() {
                let _ = url.set_username("redacted");
                let _ = url.set_password(None);
            }
            if url.query().is_some() {
                let keys: Vec<String> = url.query_pairs().map(|(k, _)| format!("{k}=[redacted]")).collect();
                url.set_query(Some(&keys.join("&")));
            }
            url.to_string()
        }
        Err(_) => u.to_string(),
    }
}

#[derive(Debug, Clone)]
pub struct RunConfig {
    pub target: TargetSpec,
    pub limits: Limits,
    /// None = detect.
    pub revision: Option<String>,
    pub strict: bool,
    /// The command that reruns this target, for reproducers (without
    /// `--revision`: reproducers add the case's own).
    pub rerun_base: String,
    /// Tool calling policy, admission policy and walk bounds.
    pub contract: Contract,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    Pass,
    Fail,
    Warn,
    #[serde(rename = "n/a")]
    NotApplicable,
    Error,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Pass => "pass",
            Verdict::Fail => "fail",
            Verdict::Warn => "warn",
            Verdict::NotApplicable => "n/a",
            Verdict::Error => "error",
        }
    }
}

/// One request/response (or raw HTTP call) as it went over the wire.
#[derive(Debug, Clone, Serialize, Default)]
pub struct Exchange {
    pub label: String,
    pub transport: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub http_method: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rpc_method: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub sent_headers: Vec<(String, String)>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sent: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub headers: Vec<(String, String)>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub body: Option<String>,
    pub frames: Vec<Frame>,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub stderr: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<TransportError>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    pub ms: u64,
    #[serde(skip)]
    pub response: Option<Value>,
    #[serde(skip)]
    pub request_id: Option<Value>,
    /// Lines a fresh stdio process got before this one (handshake).
    #[serde(skip)]
    pub preamble: Vec<String>,
    #[serde(skip)]
    pub fresh: bool,
    /// Not part of this revision's traffic (e.g. a 2025-11-25 probe sent
    /// while testing 2026-07-28): kept out of the wire-schema audit.
    #[serde(skip)]
    pub other_era: bool,
    /// Its frames are already in the frame log (shared walks and calls).
    #[serde(skip)]
    pub logged: bool,
}

impl Exchange {
    /// Take over what an HTTP reply brought.
    pub fn fill_from(&mut self, reply: crate::target::http::HttpReply) {
        self.status = reply.status;
        self.headers = reply.headers;
        self.body = reply.body;
        let mut frames = reply.frames;
        // Moved, not copied: the frame keeps its text.
        self.response = reply.response_index.and_then(|i| frames[i].value.take());
        self.frames = frames;
        self.error = reply.error;
        self.ms = reply.ms;
    }

    /// The exchange as reports keep it once it has been judged: frames and
    /// body clipped to 64 KiB, parsed values dropped.
    pub fn lite(mut self) -> Exchange {
        const KEEP: usize = 64 * 1024;
        self.frames = self.frames.iter().map(|f| f.lite(KEEP)).collect();
        self.response = None;
        if let Some(b) = &self.body {
            if b.len() > KEEP {
                self.body = Some(clip(b, KEEP));
            }
        }
        self
    }

    /// What was sent, without anything that came back: what a replay
    /// needs. Built field by field, so nothing large is copied on the way.
    pub fn request_only(&self) -> Exchange {
        Exchange {
            label: self.label.clone(),
            transport: self.transport.clone(),
            http_method: self.http_method.clone(),
            rpc_method: self.rpc_method.clone(),
            sent_headers: self.sent_headers.clone(),
            sent: self.sent.clone(),
            status: self.status,
            error: self.error.clone(),
            note: self.note.clone(),
            ms: self.ms,
            request_id: self.request_id.clone(),
            preamble: self.preamble.clone(),
            fresh: self.fresh,
            other_era: self.other_era,
            logged: self.logged,
            ..Default::default()
        }
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }
    /// What came back, in one line, for failure messages.
    pub fn summary(&self) -> String {
        let mut s = String::new();
        if let Some(st) = self.status {
            s.push_str(&format!("HTTP {st}"));
        }
        if let Some(r) = &self.response {
            if !s.is_empty() {
                s.push_str(", ");
            }
            if let Some(e) = r.get("error") {
                s.push_str(&format!("JSON-RPC error {}", wire::brief(e)));
            } else {
                s.push_str(&format!("result {}", wire::brief(r.get("result").unwrap_or(&Value::Null))));
            }
        } else if let Some(e) = &self.error {
            if !s.is_empty() {
                s.push_str(", ");
            }
            s.push_str(&e.to_string());
        } else {
            if !s.is_empty() {
                s.push_str(", ");
            }
            match &self.body {
                Some(b) if !b.is_empty() => s.push_str(&format!("no JSON-RPC response; body: {}", clip(b, 200))),
                _ => s.push_str("no JSON-RPC response"),
            }
        }
        s
    }
}

pub fn clip(s: &str, n: usize) -> String {
    if s.len() <= n {
        return s.to_string();
    }
    let mut end = n;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &s[..end])
}

#[derive(Debug, Clone, Serialize)]
pub struct CaseResult {
    pub id: String,
    pub title: String,
    pub level: String,
    pub revision: String,
    pub spec: String,
    pub transport: String,
    pub verdict: Verdict,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reproducer: Option<String>,
    pub duration_ms: u64,
    pub transcript: Vec<Exchange>,
}

impl CaseResult {
    /// A result for `case` with no transcript yet.
    pub fn new(case: &Case, transport: &str, verdict: Verdict, message: String) -> CaseResult {
        CaseResult {
            id: case.id.clone(),
            title: case.title.clone(),
            level: case.level.as_str().into(),
            revision: case.revision.clone(),
            spec: case.spec.render(&case.revision),
            transport: transport.into(),
            verdict,
            message,
            reproducer: None,
            duration_ms: 0,
            transcript: Vec::new(),
        }
    }

    /// The verdict that counts for the exit code.
    pub fn counts_as_failure(&self, strict: bool) -> bool {
        matches!(self.verdict, Verdict::Fail | Verdict::Error) || (strict && self.verdict == Verdict::Warn)
    }
}

/// A live connection for one revision.
pub enum Conn {
    Stdio(StdioTarget),
    Http { target: HttpTarget, session: Option<String> },
}

/// What the run learnt about one revision.
#[derive(Debug, Clone, Serialize)]
pub struct RevisionInfo {
    pub revision: String,
    pub supported: bool,
    pub reason: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub capabilities: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server_info: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session_id_issued: Option<bool>,
    #[serde(skip)]
    pub unreachable: Option<String>,
}

pub struct LoggedFrame {
    pub case: String,
    /// Kept as text only: parsed values can take many times the memory of
    /// the text, so audits parse again (`LoggedFrame::parsed`).
    pub frame: Frame,
    /// The exchange the frame arrived in, without its frames: what to
    /// replay to see the frame again. Shared by all frames of an exchange.
    pub origin: std::sync::Arc<Exchange>,
}

impl LoggedFrame {
    /// The frame with its parsed value, for an audit.
    pub fn parsed(&self) -> Frame {
        let mut f = Frame::from_bytes(self.frame.raw.as_bytes(), self.frame.at_ms);
        if self.frame.problem.is_some() {
            f.problem = self.frame.problem.clone();
            f.value = None;
        }
        f
    }
}

const FRAME_LOG_CAP: usize = 20_000;
/// And at most this much frame text (a hostile server can send huge frames).
const FRAME_LOG_BYTES: usize = 64 * 1024 * 1024;

/// Where probe traffic is filed in the frame log.
const PROBE: &str = "(revision probe)";

struct RevState {
    info: RevisionInfo,
    conn: Option<Conn>,
    frames: Vec<LoggedFrame>,
    frames_bytes: usize,
    frames_dropped: u64,
    /// Whether `initialize` also works (modern revision only).
    dual_era: Option<bool>,
    /// stdio lines needed to bring a fresh process to this revision's state.
    preamble: Vec<String>,
    /// The tools/list walk and the tool calls, made once and shared by cases.
    tools_walk: Option<std::sync::Arc<tools::Walk>>,
    calls: Option<std::sync::Arc<tools::Calls>>,
    tool_verdicts: Option<std::sync::Arc<Vec<crate::checks::admission::ToolVerdict>>>,
    /// The subscriptions with an empty filter and with `toolsListChanged`,
    /// watched together once (with the trigger, if any) and judged by three
    /// cases (nothing-unrequested; ids and list-changed).
    trigger_listens: Option<(std::sync::Arc<subscriptions::Session>, std::sync::Arc<subscriptions::Session>)>,
    /// Header probes' baselines that were served, by request (method and params).
    baselines: HashMap<String, Exchange>,
}

pub struct Engine {
    pub cfg: RunConfig,
    revs: BTreeMap<String, RevState>,
    next_id: i64,
    pub started: Instant,
    /// stdio: the next fresh process, started while the current case runs
    /// (a server's start-up can take seconds); it has been sent nothing.
    spare: std::sync::Mutex<Option<StdioTarget>>,
}

pub enum Probe {
    Ready,
    /// The target could not be started or reached at all.
    Unreachable(String),
}

impl Engine {
    pub fn new(cfg: RunConfig) -> Engine {
        Engine { cfg, revs: BTreeMap::new(), next_id: 1, started: Instant::now(), spare: std::sync::Mutex::new(None) }
    }

    pub fn revision_infos(&self) -> Vec<RevisionInfo> {
        wire::REVISIONS.iter().filter_map(|r| self.revs.get(*r).map(|s| s.info.clone())).collect()
    }

    /// A request with a new id; for 2026-07-28 the params get the full `_meta`.
    fn body_for(&mut self, rev: &str, method: &str, params: Option<Value>) -> Value {
        let id = self.fresh_id();
        let p = if rev == MODERN { wire::modern_params(params.as_ref(), MetaMode::Full, MODERN) } else { params };
        wire::request(&id, method, p)
    }

    fn fresh_id(&mut self) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        json!(id)
    }

    /// Open a new connection (its own HTTP client) or take a new process.
    /// stdio: the process started last time is taken, if any, and the next
    /// one is started at once, so start-up overlaps the case's work. Each
    /// process still gets its first line from the case that takes it.
    async fn open(&self) -> Result<Conn, String> {
        match &self.cfg.target {
            TargetSpec::Stdio(s) => {
                let spare = self.spare.lock().ok().and_then(|mut g| g.take());
                let conn = match spare {
                    Some(t) => t,
                    None => StdioTarget::spawn(s, &self.cfg.limits)?,
                };
                if let Ok(next) = StdioTarget::spawn(s, &self.cfg.limits) {
                    if let Ok(mut g) = self.spare.lock() {
                        *g = Some(next);
                    }
                }
                Ok(Conn::Stdio(conn))
            }
            TargetSpec::Http(h) => HttpTarget::new(h, &self.cfg.limits).map(|t| Conn::Http { target: t, session: None }),
        }
    }

    /// Detect what the target serves and keep one connection per revision.
    pub async fn prepare(&mut self) -> Probe {
        let want_modern = self.cfg.revision.as_deref().is_none_or(|r| r == MODERN);
        let want_legacy = self.cfg.revision.as_deref().is_none_or(|r| r == LEGACY);
        if want_modern {
            let st = self.probe_modern().await;
            self.revs.insert(MODERN.into(), st);
        }
        // The legacy probe also tells whether a 2026-07-28 server is
        // dual-era (which decides the modern-only rules), so it runs even
        // when only 2026-07-28 is tested; then its state is not kept.
        let modern_served = self.revs.get(MODERN).is_some_and(|m| m.info.supported);
        if want_legacy || modern_served {
            let mut st = self.probe_legacy().await;
            if let Some(m) = self.revs.get_mut(MODERN) {
                if m.info.supported {
                    m.dual_era = Some(st.info.supported);
                }
            }
            if want_legacy {
                self.revs.insert(LEGACY.into(), st);
            } else if let Some(Conn::Stdio(t)) = st.conn.as_mut() {
                t.shutdown().await;
            }
        }
        let states: Vec<&RevState> = self.revs.values().collect();
        if states.iter().all(|s| s.info.unreachable.is_some()) {
            let why: Vec<String> = states.iter().filter_map(|s| s.info.unreachable.clone()).collect();
            return Probe::Unreachable(why.join("; "));
        }
        if !states.iter().any(|s| s.info.supported) {
            let why: Vec<String> = states.iter().map(|s| format!("{}: {}", s.info.revision, s.info.reason)).collect();
            return Probe::Unreachable(format!("the target answered but speaks none of the revisions asked for ({})", why.join("; ")));
        }
        Probe::Ready
    }

    fn blank_state(rev: &str) -> RevState {
        RevState {
            info: RevisionInfo {
                revision: rev.into(),
                supported: false,
                reason: String::new(),
                capabilities: None,
                server_info: None,
                session_id_issued: None,
                unreachable: None,
            },
            conn: None,
            frames: Vec::new(),
            frames_bytes: 0,
            frames_dropped: 0,
            dual_era: None,
            preamble: Vec::new(),
            tools_walk: None,
            calls: None,
            tool_verdicts: None,
            trigger_listens: None,
            baselines: HashMap::new(),
        }
    }

    /// A blank state for `rev` and a new connection for its probe, or the
    /// state saying why none could be opened.
    async fn probe_start(&self, rev: &str) -> Result<(RevState, Conn), RevState> {
        let mut st = Self::blank_state(rev);
        match self.open().await {
            Ok(c) => Ok((st, c)),
            Err(e) => {
                st.info.reason = e.clone();
                st.info.unreachable = Some(e);
                Err(st)
            }
        }
    }

    async fn probe_modern(&mut self) -> RevState {
        let (mut st, mut conn) = match self.probe_start(MODERN).await {
            Ok(x) => x,
            Err(st) => return st,
        };
        let id = self.fresh_id();
        let body = wire::request(&id, "server/discover", wire::modern_params(None, MetaMode::Full, MODERN));
        let ex = self.exchange(&mut conn, "probe: server/discover", MODERN, &body, &[], true).await;
        log_frames(&mut st, PROBE, &ex);
        if let Some(err) = &ex.error {
            let why = format!("no answer to server/discover: {err}");
            st.info.reason = why.clone();
            st.info.unreachable = Some(why);
            st.conn = Some(conn);
            return st;
        }
        match &ex.response {
            Some(r) if r.get("result").is_some_and(|x| x.get("supportedVersions").is_some() || x.get("capabilities").is_some()) => {
                let res = &r["result"];
                st.info.supported = true;
                st.info.reason = "server/discover answered with a DiscoverResult".into();
                st.info.capabilities = Some(res.get("capabilities").cloned().unwrap_or(json!({})));
                st.info.server_info = res.pointer("/_meta").and_then(|m| m.get(wire::KEY_SERVER_INFO)).cloned();
            }
            Some(r) if r.pointer("/error/code").and_then(|c| c.as_i64()) == Some(-32022) => {
                st.info.reason = format!(
                    "server/discover for 2026-07-28 answered -32022 (unsupported version); the server lists {}",
                    r.pointer("/error/data/supported").map(wire::brief).unwrap_or_else(|| "no versions".into())
                );
            }
            _ => {
                st.info.reason = format!("server/discover did not return a DiscoverResult ({})", ex.summary());
            }
        }
        st.conn = Some(conn);
        st
    }

    async fn probe_legacy(&mut self) -> RevState {
        let (mut st, mut conn) = match self.probe_start(LEGACY).await {
            Ok(x) => x,
            Err(st) => return st,
        };
        match self.handshake(&mut conn).await {
            Ok((result, exs, lines)) => {
                for ex in &exs {
                    log_frames(&mut st, PROBE, ex);
                }
                let v = result.get("protocolVersion").and_then(|v| v.as_str()).unwrap_or("");
                if v == LEGACY {
                    st.info.supported = true;
                    st.info.reason = "initialize negotiated 2025-11-25".into();
                    st.info.capabilities = Some(result.get("capabilities").cloned().unwrap_or(json!({})));
                    st.info.server_info = result.get("serverInfo").cloned();
                    if let Conn::Http { session, .. } = &conn {
                        st.info.session_id_issued = Some(session.is_some());
                    }
                    st.preamble = lines;
                } else {
                    st.info.reason = format!("initialize for 2025-11-25 negotiated `{v}` instead");
                }
            }
            Err((why, exs, transport)) => {
                for ex in &exs {
                    log_frames(&mut st, PROBE, ex);
                }
                st.info.reason = why.clone();
                if transport {
                    st.info.unreachable = Some(why);
                }
            }
        }
        st.conn = Some(conn);
        st
    }

    /// initialize + notifications/initialized on `conn`. Returns the
    /// InitializeResult, the exchanges, and (stdio) the lines sent.
    async fn handshake(&mut self, conn: &mut Conn) -> Result<(Value, Vec<Exchange>, Vec<String>), (String, Vec<Exchange>, bool)> {
        let id = self.fresh_id();
        let body = wire::request(&id, "initialize", Some(wire::initialize_params(LEGACY)));
        let ex = self.exchange(conn, "handshake: initialize", LEGACY, &body, &[], true).await;
        let mut lines = vec![body.to_string()];
        if let Some(e) = &ex.error {
            return Err((format!("no answer to initialize: {e}"), vec![ex.clone()], true));
        }
        let Some(result) = ex.response.as_ref().and_then(|r| r.get("result")).cloned() else {
            return Err((format!("initialize was not accepted ({})", ex.summary()), vec![ex.clone()], false));
        };
        if let Conn::Http { session, .. } = conn {
            *session = ex.header("mcp-session-id").map(|s| s.to_string());
        }
        let note = wire::notification("notifications/initialized", None);
        let ex2 = self.exchange(conn, "handshake: notifications/initialized", LEGACY, &note, &[], false).await;
        lines.push(note.to_string());
        Ok((result, vec![ex, ex2], lines))
    }

    /// Send one JSON-RPC message (request or notification) and collect the
    /// reply. `headers` replace the standard ones for HTTP when non-empty
    /// entries of the same name are given (value None removes).
    async fn exchange(
        &mut self,
        conn: &mut Conn,
        label: &str,
        revision: &str,
        body: &Value,
        overrides: &[HeaderEdit],
        want_reply: bool,
    ) -> Exchange {
        let text = body.to_string();
        self.exchange_raw(conn, label, revision, "POST", Some(text), body, overrides, want_reply).await
    }

    #[allow(clippy::too_many_arguments)]
    async fn exchange_raw(
        &mut self,
        conn: &mut Conn,
        label: &str,
        revision: &str,
        http_method: &str,
        text: Option<String>,
        body: &Value,
        overrides: &[HeaderEdit],
        want_reply: bool,
    ) -> Exchange {
        let id = body.get("id").cloned();
        let rpc_method = body.get("method").and_then(|m| m.as_str()).map(String::from);
        let mut ex = Exchange {
            label: label.into(),
            rpc_method: rpc_method.clone(),
            request_id: id.clone(),
            sent: text.clone(),
            ..Default::default()
        };
        match conn {
            Conn::Stdio(t) => {
                ex.transport = "stdio".into();
                let wait = t.answer_timeout();
                let start = Instant::now();
                if let Some(line) = &text {
                    if let Err(e) = t.write_line(line.as_bytes()).await {
                        ex.error = Some(e);
                    }
                }
                if ex.error.is_none() {
                    match (&id, want_reply) {
                        (Some(id), true) => {
                            let (frames, idx, err) = t.read_until_response(id, wait).await;
                            // Moved, not copied: the frame keeps its text.
                            let mut frames = frames;
                            ex.response = idx.and_then(|i| frames[i].value.take());
                            ex.frames = frames;
                            ex.error = err;
                        }
                        _ => {
                            // No reply is due; what the message provokes soon
                            // is shown with it (anything later is still read,
                            // with the next exchange, and audited).
                            ex.frames = t.read_for(crate::target::stdio::GRACE).await;
                        }
                    }
                }
                ex.ms = start.elapsed().as_millis() as u64;
                ex.stderr = clip(&t.take_stderr(), 8 * 1024);
            }
            Conn::Http { target, session } => {
                ex.transport = "http".into();
                ex.http_method = Some(http_method.into());
                let mut headers: Vec<(String, String)> = if revision == MODERN {
                    if text.is_some() {
                        wire::modern_headers(body)
                    } else {
                        vec![("Accept".into(), "application/json, text/event-stream".into())]
                    }
                } else {
                    let initialized = rpc_method.as_deref() != Some("initialize");
                    let mut h = wire::legacy_headers(session.as_deref(), initialized);
                    if text.is_none() {
                        h.retain(|(k, _)| !k.eq_ignore_ascii_case("content-type"));
                    }
                    h
                };
                apply_edits(&mut headers, overrides);
                ex.sent_headers = self.shown_headers(target, &headers);
                let expect = if want_reply { id.as_ref() } else { None };
                let reply = if overrides.iter().any(|e| matches!(e, HeaderEdit::ExactNames)) {
                    target.send_exact(http_method, &headers, text.map(|t| t.into_bytes()), expect).await
                } else {
                    target.send(http_method, &headers, text.map(|t| t.into_bytes()), expect, false).await
                };
                ex.fill_from(reply);
                if !want_reply && ex.error.as_ref().is_some_and(|e| matches!(e, TransportError::Timeout(_))) && ex.status.is_some() {
                    ex.error = None;
                }
            }
        }
        ex
    }

    /// The headers of a request as reports show them: the target's own
    /// headers first, secrets (and, with --redact-params, Mcp-Param-*
    /// values) redacted.
    fn shown_headers(&self, target: &HttpTarget, headers: &[(String, String)]) -> Vec<(String, String)> {
        target
            .spec
            .headers
            .iter()
            .chain(headers.iter())
            .map(|(k, v)| {
                let param = self.cfg.contract.redact_params && k.to_ascii_lowercase().starts_with("mcp-param-");
                (k.clone(), if target.is_secret(k) || param { "[redacted]".into() } else { v.clone() })
            })
            .collect()
    }

    /// Run one case.
    pub async fn run_case(&mut self, case: &Case) -> CaseResult {
        let start = Instant::now();
        let transport = self.cfg.target.transport();
        let mut res = CaseResult::new(case, transport, Verdict::Pass, String::new());
        if let Some(why) = self.not_applicable(case) {
            res.verdict = Verdict::NotApplicable;
            res.message = why;
            return res;
        }
        // A probe that got no answer leaves the revision unreachable (never supported).
        if let Some(why) = self.revs.get(&case.revision).and_then(|s| s.info.unreachable.as_ref()) {
            res.verdict = Verdict::Error;
            res.message = format!("the target could not be reached for {}: {why}", case.revision);
            return res;
        }
        let mut failures: Vec<String> = Vec::new();
        let mut error: Option<String> = None;
        let mut na: Option<String> = None;
        let mut named: BTreeMap<String, usize> = BTreeMap::new();
        let mut last_msg: Option<usize> = None;
        for (i, step) in case.steps.iter().enumerate() {
            let out = self.run_step(case, i, step).await;
            for ex in &out.exchanges {
                if let Some(st) = self.revs.get_mut(&case.revision) {
                    log_frames(st, &case.id, ex);
                }
            }
            let base = res.transcript.len();
            res.transcript.extend(out.exchanges);
            if step.send.is_some() || step.http.is_some() {
                let idx = res.transcript.len().saturating_sub(1);
                if res.transcript.len() > base {
                    last_msg = Some(idx);
                    if let Some(n) = &step.name {
                        named.insert(n.clone(), idx);
                    }
                    if let Some(e) = &res.transcript[idx].error {
                        error.get_or_insert(format!("step {} ({}): {e}", i + 1, res.transcript[idx].label));
                    }
                }
            }
            failures.extend(out.failures);
            if let Some(e) = out.error {
                error.get_or_insert(e);
            }
            if let Some(n) = out.na {
                na = Some(n);
                break;
            }
            if error.is_some() {
                break;
            }
        }
        if na.is_none() && error.is_none() {
            for e in &case.expect {
                let idx = match &e.step {
                    Some(n) => named.get(n).copied(),
                    None => last_msg,
                };
                let Some(idx) = idx else {
                    error = Some("the step an expectation looks at did not run".into());
                    break;
                };
                if let Some(f) = expect::judge(e, &res.transcript[idx], &case.revision) {
                    failures.push(f);
                }
            }
        }
        if let Some(n) = na {
            res.verdict = Verdict::NotApplicable;
            res.message = n;
        } else if let Some(e) = error {
            res.verdict = Verdict::Error;
            res.message = e;
        } else if !failures.is_empty() {
            res.verdict = if case.level.is_advisory() { Verdict::Warn } else { Verdict::Fail };
            res.message = failures.join("\n");
        }
        if matches!(res.verdict, Verdict::Fail | Verdict::Warn | Verdict::Error) {
            res.reproducer = Some(self.reproducer(case, &res.transcript));
        }
        // Judged: keep what reports need, not every parsed value.
        res.transcript = std::mem::take(&mut res.transcript).into_iter().map(Exchange::lite).collect();
        res.duration_ms = start.elapsed().as_millis() as u64;
        res
    }

    fn not_applicable(&self, case: &Case) -> Option<String> {
        let transport = self.cfg.target.transport();
        if !case.applies.transports.is_empty() && !case.applies.transports.iter().any(|t| t == transport) {
            return Some(format!("applies to {} targets only; this target is {transport}", case.applies.transports.join("/")));
        }
        let st = self.revs.get(&case.revision)?;
        if !st.info.supported {
            if st.info.unreachable.is_some() {
                return None;
            }
            return Some(format!("the server does not serve {}: {}", case.revision, st.info.reason));
        }
        let caps = st.info.capabilities.clone().unwrap_or(json!({}));
        for c in &case.applies.capabilities {
            if caps.get(c).is_none() {
                return Some(format!("the server does not advertise capabilities.{c}"));
            }
        }
        match case.applies.era.as_deref() {
            Some("modern-only") if st.dual_era == Some(true) => {
                return Some("the server also serves 2025-11-25 through initialize (dual-era, allowed by versioning.mdx); the rule is for modern-only servers".into());
            }
            Some("session") if st.info.session_id_issued != Some(true) => {
                return Some("the server issued no Mcp-Session-Id, so session rules do not apply".into());
            }
            _ => {}
        }
        None
    }

    async fn run_step(&mut self, case: &Case, index: usize, step: &Step) -> actions::StepOut {
        if let Some(a) = &step.action {
            return self.run_action(case, a, step.with.as_ref()).await;
        }
        let mut out = actions::StepOut::default();
        let rev = case.revision.clone();
        let label = step.name.clone().unwrap_or_else(|| format!("step {}", index + 1));
        if let Some(s) = &step.send {
            let id = s.id.clone().unwrap_or_else(|| self.fresh_id());
            let params = if rev == MODERN {
                wire::modern_params(s.params.as_ref(), s.meta, s.version.as_deref().unwrap_or(MODERN))
            } else {
                s.params.clone()
            };
            let body = if s.notification { wire::notification(&s.method, params) } else { wire::request(&id, &s.method, params) };
            let mut overrides: Vec<HeaderEdit> = HeaderEdit::from_map(&s.headers);
            if s.session.as_deref() == Some("none") {
                overrides.push(HeaderEdit::Remove("Mcp-Session-Id".into()));
            }
            let want_reply = !s.notification;
            let mut ex = if s.fresh {
                let handshake = s.method != "initialize";
                match self.fresh_conn(&rev, handshake).await {
                    Ok((mut conn, pre, mut pre_ex)) => {
                        let mut ex = self.exchange(&mut conn, &label, &rev, &body, &overrides, want_reply).await;
                        ex.fresh = true;
                        ex.preamble = pre;
                        if let Conn::Stdio(t) = &mut conn {
                            t.shutdown().await;
                        }
                        out.exchanges.append(&mut pre_ex);
                        ex
                    }
                    Err(e) => {
                        out.error = Some(format!("could not open a fresh connection: {e}"));
                        return out;
                    }
                }
            } else {
                let Some(mut conn) = self.revs.get_mut(&rev).and_then(|s| s.conn.take()) else {
                    out.error = Some(format!("no connection for {rev}"));
                    return out;
                };
                let ex = self.exchange(&mut conn, &label, &rev, &body, &overrides, want_reply).await;
                if let Some(st) = self.revs.get_mut(&rev) {
                    st.conn = Some(conn);
                }
                ex
            };
            if ex.preamble.is_empty() && !s.fresh {
                ex.preamble = self.revs.get(&rev).map(|s| s.preamble.clone()).unwrap_or_default();
            }
            out.exchanges.push(ex);
        } else if let Some(h) = &step.http {
            let Some(mut conn) = self.revs.get_mut(&rev).and_then(|s| s.conn.take()) else {
                out.error = Some(format!("no connection for {rev}"));
                return out;
            };
            let overrides = HeaderEdit::from_map(&h.headers);
            let ex = self.exchange_raw(&mut conn, &label, &rev, &h.method, None, &Value::Null, &overrides, false).await;
            if let Some(st) = self.revs.get_mut(&rev) {
                st.conn = Some(conn);
            }
            out.exchanges.push(ex);
        }
        out
    }

    /// A new connection (HTTP) or process (stdio), brought to the
    /// revision's starting state: for 2025-11-25 the handshake is done,
    /// unless `handshake` is false (the step is itself an `initialize`,
    /// and a second one on the same session may rightly be refused).
    async fn fresh_conn(&mut self, rev: &str, handshake: bool) -> Result<(Conn, Vec<String>, Vec<Exchange>), String> {
        let mut conn = self.open().await?;
        if rev == LEGACY && handshake {
            match self.handshake(&mut conn).await {
                Ok((_, exs, lines)) => return Ok((conn, lines, exs)),
                Err((why, _, _)) => return Err(why),
            }
        }
        Ok((conn, Vec::new(), Vec::new()))
    }

    fn reproducer(&self, case: &Case, transcript: &[Exchange]) -> String {
        let whole_run = case.steps.iter().any(|s| s.action.as_deref().is_some_and(actions::judges_whole_run));
        let mut out = if whole_run {
            // Run alone, this check would see only its own traffic.
            vec![format!(
                "rerun (this check judges all traffic of the run, so rerun the revision): {} --revision {}",
                self.cfg.rerun_base, case.revision
            )]
        } else {
            vec![format!("rerun: {} --revision {} --exact {}", self.cfg.rerun_base, case.revision, shell_quote(&case.id))]
        };
        match &self.cfg.target {
            TargetSpec::Stdio(s) => {
                let cmd = s.argv.iter().map(|a| shell_quote(a)).collect::<Vec<_>>().join(" ");
                let mut lines: Vec<String> = Vec::new();
                for ex in transcript {
                    if ex.fresh || lines.is_empty() {
                        if !lines.is_empty() {
                            out.push(format!(
                                "printf '%s\\n' {} | {cmd}",
                                lines.iter().map(|l| shell_quote(l)).collect::<Vec<_>>().join(" ")
                            ));
                            lines.clear();
                        }
                        lines.extend(ex.preamble.iter().cloned());
                    }
                    if let Some(t) = &ex.sent {
                        lines.push(t.clone());
                    }
                }
                if !lines.is_empty() {
                    out.push(format!("printf '%s\\n' {} | {cmd}", lines.iter().map(|l| shell_quote(l)).collect::<Vec<_>>().join(" ")));
                } else if !out.iter().any(|l| l.starts_with("printf")) {
                    // A check over the whole session: show how to watch the raw output.
                    let starter = if case.revision == MODERN {
                        wire::request(&json!(1), "server/discover", wire::modern_params(None, MetaMode::Full, MODERN))
                    } else {
                        wire::request(&json!(1), "initialize", Some(wire::initialize_params(LEGACY)))
                    };
                    out.push(format!("printf '%s\\n' {} | {cmd}", shell_quote(&starter.to_string())));
                }
            }
            TargetSpec::Http(h) => {
                for ex in transcript.iter().filter(|e| e.http_method.is_some()) {
                    let mut c = format!("curl -sS -i -X {} {}", ex.http_method.as_deref().unwrap_or("POST"), shell_quote(&h.url));
                    for (k, v) in &ex.sent_headers {
                        c.push_str(&format!(" -H {}", shell_quote(&format!("{k}: {v}"))));
                    }
                    if let Some(b) = &ex.sent {
                        c.push_str(&format!(" --data-binary {}", shell_quote(b)));
                    }
                    out.push(c);
                }
            }
        }
        out.join("\n")
    }

    /// Close every connection (kills stdio process groups).
    pub async fn shutdown(&mut self) {
        for st in self.revs.values_mut() {
            if let Some(Conn::Stdio(t)) = st.conn.as_mut() {
                t.shutdown().await;
            }
            st.conn = None;
        }
    }
}

/// A change to the standard headers of one HTTP exchange.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HeaderEdit {
    /// Replace every header of this name (any case) by one, named as given.
    Set(String, String),
    /// Drop every header of this name (any case).
    Remove(String),
    /// Append one more header line, duplicates allowed.
    Add(String, String),
    /// Send header names with their exact letter case (own HTTP/1.1 client).
    ExactNames,
}

impl HeaderEdit {
    /// Suite-file form: name → value, or null to remove.
    pub fn from_map(m: &BTreeMap<String, Option<String>>) -> Vec<HeaderEdit> {
        m.iter()
            .map(|(k, v)| match v {
                Some(v) => HeaderEdit::Set(k.clone(), v.clone()),
                None => HeaderEdit::Remove(k.clone()),
            })
            .collect()
    }
}

pub fn apply_edits(headers: &mut Vec<(String, String)>, edits: &[HeaderEdit]) {
    for e in edits {
        match e {
            HeaderEdit::Set(name, v) => {
                let pos = headers.iter().position(|(k, _)| k.eq_ignore_ascii_case(name));
                headers.retain(|(k, _)| !k.eq_ignore_ascii_case(name));
                let at = pos.unwrap_or(headers.len()).min(headers.len());
                headers.insert(at, (name.clone(), v.clone()));
            }
            HeaderEdit::Remove(name) => headers.retain(|(k, _)| !k.eq_ignore_ascii_case(name)),
            HeaderEdit::Add(name, v) => headers.push((name.clone(), v.clone())),
            HeaderEdit::ExactNames => {}
        }
    }
}

fn log_frames(st: &mut RevState, case: &str, ex: &Exchange) {
    if ex.other_era || ex.logged {
        return;
    }
    if ex.frames.is_empty() {
        return;
    }
    // What to replay, not what came back (that can be large).
    let origin = std::sync::Arc::new(ex.request_only());
    for f in &ex.frames {
        if st.frames.len() >= FRAME_LOG_CAP || st.frames_bytes + f.raw.len() > FRAME_LOG_BYTES {
            st.frames_dropped += 1;
            continue;
        }
        st.frames_bytes += f.raw.len();
        st.frames.push(LoggedFrame { case: case.to_string(), frame: f.lite(usize::MAX), origin: origin.clone() });
    }
}

pub use actions::StepOut;
