//! The one interface the layers above use: a connection (HTTP) or a
//! process (stdio), whatever the transport. Sending a message and reading
//! what comes back, watching a stream that stays open, and the few
//! transport-specific facts a check may ask about (stdout framing, the
//! process's exit), each answered for both transports.

use super::http::{Ask, Done, HttpTarget};
use super::legacy_sse::{SseClient, SseReply, StreamFacts};
use super::reply::{Answer, HttpReply};
use super::stdio::{GRACE, StdioTarget, StdoutAudit};
use super::{Frame, Limits, OpenError, TargetSpec, Transport, TransportError, clip};
use serde_json::Value;
use std::time::{Duration, Instant};

/// One message to send.
#[derive(Clone, Copy)]
pub struct Outgoing<'a> {
    /// The HTTP method (POST for JSON-RPC messages); stdio ignores it.
    pub http_method: &'a str,
    /// The message text; None for a bodiless HTTP request (GET, DELETE).
    pub body: Option<&'a str>,
    /// HTTP headers, sent as given (duplicates allowed) after the target's
    /// own; stdio ignores them.
    pub headers: &'a [(String, String)],
    /// The id of the response to wait for; None when no reply is due.
    pub expect_id: Option<&'a Value>,
    /// Send header names with their exact letter case (an own HTTP/1.1
    /// connection; `http://` URLs only).
    pub exact_names: bool,
    /// The request's `progressToken`: progress for it pushes the deadline.
    pub progress: Option<&'a Value>,
    /// Requests the server sends while the reply is read are answered with
    /// what this gives (the whole JSON-RPC response); None: not answered.
    pub answer: Option<Answer<'a>>,
    /// stdio, no reply due: read what the message provokes for a moment
    /// (`GRACE`) before returning; false returns at once (what comes is
    /// read with the next exchange).
    pub linger: bool,
    /// HTTP: safe to send again if its connection breaks before an answer
    /// comes (a read; a call only of a tool known to be read-only).
    pub repeatable: bool,
}

impl<'a> Outgoing<'a> {
    /// How HTTP sends it.
    fn ask(&self) -> Ask<'a> {
        Ask {
            expect_id: self.expect_id,
            progress: self.progress,
            answer: self.answer,
            repeatable: self.repeatable,
            exact: self.exact_names,
        }
    }

    /// A JSON-RPC message POSTed (HTTP) or written as one line (stdio).
    pub fn message(body: &'a str, headers: &'a [(String, String)], expect_id: Option<&'a Value>) -> Outgoing<'a> {
        Outgoing {
            http_method: "POST",
            body: Some(body),
            headers,
            expect_id,
            exact_names: false,
            progress: None,
            answer: None,
            linger: true,
            repeatable: false,
        }
    }
}

/// What came back.
#[derive(Debug, Default)]
pub struct Incoming {
    pub status: Option<u16>,
    pub headers: Vec<(String, String)>,
    /// The body as text when it was not one readable JSON-RPC message (HTTP).
    pub body: Option<String>,
    /// Every message (or broken line) the server sent meanwhile, in order.
    pub frames: Vec<Frame>,
    /// The response to the request, moved out of its frame (which keeps
    /// its text).
    pub response: Option<Value>,
    /// The frame `response` was moved out of (None: no response, or its
    /// frame kept the value too).
    pub response_frame: Option<usize>,
    pub error: Option<TransportError>,
    pub ms: u64,
    /// stdio: what the server wrote to stderr meanwhile (at most 8 KiB).
    pub stderr: String,
    /// HTTP: why earlier attempts were lost, when the request was sent again.
    pub resent: Vec<String>,
}

impl Incoming {
    fn from_sse(reply: SseReply) -> Incoming {
        let mut frames = reply.frames;
        let response = reply.response_index.and_then(|i| frames[i].value.take());
        Incoming {
            status: reply.status,
            headers: reply.headers,
            body: reply.body,
            response_frame: reply.response_index.filter(|_| response.is_some()),
            response,
            frames,
            error: reply.error,
            ms: reply.ms,
            stderr: String::new(),
            resent: Vec::new(),
        }
    }

    /// `keep_values`: the response's frame keeps its parsed value too (a
    /// watched stream's frames are judged as they came).
    fn from_http(reply: HttpReply, keep_values: bool) -> Incoming {
        let mut frames = reply.frames;
        let (response, response_frame) = match (reply.response_index, keep_values) {
            (Some(i), true) => (frames[i].value.clone(), None),
            (Some(i), false) => (frames[i].value.take(), Some(i)),
            (None, _) => (None, None),
        };
        Incoming {
            status: reply.status,
            headers: reply.headers,
            body: reply.body,
            frames,
            response,
            response_frame,
            error: reply.error,
            ms: reply.ms,
            stderr: String::new(),
            resent: reply.resent,
        }
    }
}

/// A live connection (HTTP) or process (stdio).
pub struct Connection(Inner);

enum Inner {
    Stdio(Box<StdioTarget>),
    Http {
        target: Box<HttpTarget>,
        session: Option<String>,
    },
    /// 2024-11-05's HTTP with SSE: one stream, POSTs to its endpoint.
    Sse(Box<SseClient>),
}

impl Connection {
    /// Open a new connection (its own HTTP client) or start a new process.
    pub fn open(spec: &TargetSpec, limits: &Limits) -> Result<Connection, OpenError> {
        Ok(Connection(match spec {
            TargetSpec::Stdio(s) => Inner::Stdio(Box::new(StdioTarget::spawn(s, limits)?)),
            TargetSpec::Http(h) if h.sse.get() => Inner::Sse(Box::new(SseClient::new(HttpTarget::new(h, limits)?))),
            TargetSpec::Http(h) => Inner::Http { target: Box::new(HttpTarget::new(h, limits)?), session: None },
        }))
    }

    /// A connection over 2024-11-05's HTTP with SSE, whatever the spec says
    /// (the probe that finds out whether the target serves it).
    pub fn open_sse(spec: &TargetSpec, limits: &Limits) -> Result<Connection, OpenError> {
        match spec {
            TargetSpec::Http(h) => Ok(Connection(Inner::Sse(Box::new(SseClient::new(HttpTarget::new(h, limits)?))))),
            TargetSpec::Stdio(_) => Err(OpenError("HTTP with SSE needs an HTTP target".into())),
        }
    }

    /// HTTP with SSE: what its stream told (None for other transports).
    pub fn sse_facts(&self) -> Option<&StreamFacts> {
        match &self.0 {
            Inner::Sse(c) => Some(&c.facts),
            _ => None,
        }
    }

    /// HTTP: a second handle on the same client and session, so that
    /// several exchanges can be in flight at once; None for stdio (one
    /// process, one reader).
    pub fn http_clone(&self) -> Option<Connection> {
        match &self.0 {
            Inner::Http { target, session } => Some(Connection(Inner::Http { target: target.clone(), session: session.clone() })),
            // One stream carries every answer: one reader.
            Inner::Stdio(_) | Inner::Sse(_) => None,
        }
    }

    /// stdio: whether the process has exited, so that nothing more should
    /// be sent to it (HTTP: never).
    pub fn exited(&mut self) -> bool {
        match &mut self.0 {
            Inner::Stdio(t) => t.exited(),
            Inner::Http { .. } | Inner::Sse(_) => false,
        }
    }

    pub fn transport(&self) -> Transport {
        match &self.0 {
            Inner::Stdio(_) => Transport::Stdio,
            Inner::Http { .. } | Inner::Sse(_) => Transport::Http,
        }
    }

    /// Send one message and collect the reply: until the response to
    /// `expect_id`, or (no reply due) what the message provokes soon
    /// (stdio; anything later is read with the next exchange).
    pub async fn exchange(&mut self, out: &Outgoing<'_>) -> Incoming {
        match &mut self.0 {
            Inner::Stdio(t) => {
                let mut inc = Incoming::default();
                let start = Instant::now();
                if let Some(why) = t.stopped_answering().await {
                    inc.error = Some(TransportError::Timeout(format!("not sent: {why}")));
                    inc.ms = start.elapsed().as_millis() as u64;
                    return inc;
                }
                let wait = t.answer_timeout();
                if let Some(line) = out.body
                    && let Err(e) = t.write_line(line.as_bytes()).await
                {
                    inc.error = Some(e);
                }
                if inc.error.is_none() {
                    match out.expect_id {
                        Some(id) => {
                            let (mut frames, idx, err) = t.read_until_response(id, wait, out.progress, out.answer).await;
                            // Moved, not copied: the frame keeps its text.
                            inc.response = idx.and_then(|i| frames[i].value.take());
                            inc.response_frame = idx.filter(|_| inc.response.is_some());
                            inc.frames = frames;
                            inc.error = err;
                        }
                        None if out.linger => inc.frames = t.read_for(GRACE).await,
                        None => {}
                    }
                }
                inc.ms = start.elapsed().as_millis() as u64;
                inc.stderr = clip(&t.take_stderr_settled().await, 8 * 1024);
                inc
            }
            Inner::Sse(c) => {
                Incoming::from_sse(c.exchange(out.headers, out.body, out.expect_id, out.progress, out.answer, out.linger).await)
            }
            Inner::Http { target, .. } => {
                let body = out.body.map(|b| b.as_bytes().to_vec());
                let reply = target.send(out.http_method, out.headers, body, out.ask()).await;
                let mut inc = Incoming::from_http(reply, false);
                // Nothing was awaited: a stream that stays open after its
                // status line is not a failure to answer.
                if out.expect_id.is_none() && matches!(inc.error, Some(TransportError::Timeout(_))) && inc.status.is_some() {
                    inc.error = None;
                }
                inc
            }
        }
    }

    /// Send a message that opens a stream (subscriptions/listen, or over
    /// HTTP a bodiless GET) and read what arrives for up to `window`; once `done` holds for what has
    /// arrived, reading goes on only for a short grace period. The end of
    /// the window is not an error. HTTP: the stream has a connection of its
    /// own. stdio: the frames are everything the process wrote meanwhile.
    pub async fn watch(&mut self, out: &Outgoing<'_>, window: Duration, done: Done<'_>) -> Incoming {
        match &mut self.0 {
            Inner::Stdio(t) => {
                let mut inc = Incoming::default();
                let start = Instant::now();
                match t.write_line(out.body.unwrap_or("").as_bytes()).await {
                    Ok(()) => inc.frames = t.read_until(window, done).await,
                    Err(e) => inc.error = Some(e),
                }
                inc.ms = start.elapsed().as_millis() as u64;
                inc.stderr = clip(&t.take_stderr_settled().await, 8 * 1024);
                inc
            }
            Inner::Sse(c) => {
                // What the stream brings for the window (no reply awaited).
                let start = Instant::now();
                let mut inc = Incoming::from_sse(c.exchange(out.headers, out.body, None, None, out.answer, true).await);
                while start.elapsed() < window && !done(&inc.frames) {
                    let more = Incoming::from_sse(c.exchange(out.headers, None, None, None, out.answer, true).await);
                    if more.error.is_some() {
                        inc.error = more.error;
                        break;
                    }
                    inc.frames.extend(more.frames);
                }
                inc
            }
            Inner::Http { target, .. } => {
                let body = out.body.map(|b| b.as_bytes().to_vec());
                let reply = target.collect(out.http_method, out.headers, body, window, done, out.ask()).await;
                Incoming::from_http(reply, true)
            }
        }
    }

    /// Frames that arrive within `window` without a request (stdio; over
    /// HTTP nothing arrives outside a reply).
    pub async fn read_for(&mut self, window: Duration) -> Vec<Frame> {
        match &mut self.0 {
            Inner::Stdio(t) => t.read_for(window).await,
            Inner::Sse(c) => {
                let start = Instant::now();
                let mut frames = Vec::new();
                while start.elapsed() < window {
                    let r = c.exchange(&[], None, None, None, None, true).await;
                    frames.extend(r.frames);
                    if r.error.is_some() {
                        break;
                    }
                }
                frames
            }
            Inner::Http { .. } => Vec::new(),
        }
    }

    /// How long an answer may take now: over stdio the start-up timeout
    /// until the process has written anything, then the request timeout.
    pub fn answer_timeout(&self) -> Duration {
        match &self.0 {
            Inner::Stdio(t) => t.answer_timeout(),
            Inner::Http { target, .. } => target.limits.request,
            Inner::Sse(c) => c.target.limits.request,
        }
    }

    /// The `Mcp-Session-Id` this connection carries (HTTP, 2025-11-25).
    pub fn session_id(&self) -> Option<&str> {
        match &self.0 {
            Inner::Http { session, .. } => session.as_deref(),
            Inner::Stdio(_) | Inner::Sse(_) => None,
        }
    }

    pub fn set_session_id(&mut self, id: Option<String>) {
        if let Inner::Http { session, .. } = &mut self.0 {
            *session = id;
        }
    }

    /// Evidence about stdout as a whole (stdio only).
    pub fn stdout_audit(&self) -> Option<StdoutAudit> {
        match &self.0 {
            Inner::Stdio(t) => Some(t.audit()),
            Inner::Http { .. } | Inner::Sse(_) => None,
        }
    }

    /// The headers of a request as reports show them: the target's own
    /// headers first; secret values (and, with `redact_params`,
    /// `Mcp-Param-*` values) as `[redacted]`. Empty over stdio.
    /// Names as they went out: with their letters as given when `exact`
    /// (mcpcert's own HTTP/1.1 writer), otherwise in lower case (the HTTP
    /// client writes every name so); a reproducer sends them the same way.
    pub fn shown_headers(&self, headers: &[(String, String)], redact_params: bool, exact: bool) -> Vec<(String, String)> {
        let target = match &self.0 {
            Inner::Http { target, .. } => target,
            Inner::Sse(c) => &c.target,
            Inner::Stdio(_) => return Vec::new(),
        };
        target
            .spec
            .headers
            .iter()
            .chain(headers.iter())
            .map(|(k, v)| {
                let param = redact_params && k.to_ascii_lowercase().starts_with("mcp-param-");
                let name = if exact { k.clone() } else { k.to_ascii_lowercase() };
                let shown = match target.spec.header_env.iter().find(|(n, _)| n.eq_ignore_ascii_case(k)) {
                    Some((_, var)) if target.is_secret(k) => format!("[redacted: ${var}]"),
                    _ if target.is_secret(k) || param => "[redacted]".into(),
                    _ => v.clone(),
                };
                (name, shown)
            })
            .collect()
    }

    /// stdio: close stdin and wait up to `grace` for the process to exit
    /// by itself. `Ok(Some(status))` once it exited, `Ok(None)` if it was
    /// still running; HTTP has no such thing (`Err`).
    pub async fn close_stdin_and_wait(&mut self, grace: Duration) -> Result<Option<String>, Transport> {
        match &mut self.0 {
            Inner::Stdio(t) => Ok(t.close_stdin_and_wait(grace).await),
            Inner::Http { .. } | Inner::Sse(_) => Err(Transport::Http),
        }
    }

    /// Kill a process (and its group) now; nothing for HTTP.
    pub fn kill(&mut self) {
        if let Inner::Stdio(t) = &mut self.0 {
            t.kill();
        }
    }

    /// End politely: a process gets its stdin closed and a short grace,
    /// then its group is killed. An HTTP connection is simply dropped.
    pub async fn shutdown(&mut self) {
        if let Inner::Stdio(t) = &mut self.0 {
            t.shutdown().await;
        }
    }
}
