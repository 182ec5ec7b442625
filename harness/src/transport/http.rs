//! Streamable HTTP targets: POST JSON-RPC bodies with any header set, read
//! `application/json` or `text/event-stream` replies, record everything.

use super::exact::{self, RawBody};
use super::pace;
use super::reply::{Answer, HttpReply};
use super::sse;
use super::{Frame, Limits, OpenError, TransportError, ms_since};
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use serde_json::Value;
use std::time::{Duration, Instant};

#[derive(Debug, Clone)]
pub struct HttpSpec {
    pub url: String,
    /// Extra headers sent on every request (e.g. Authorization).
    pub headers: Vec<(String, String)>,
    /// Lower-case names whose values never appear in reports.
    pub secret_headers: Vec<String>,
    /// Lower-case names of the config's headers and the environment
    /// variable each value came from: a report shows the name
    /// (`[redacted: $VAR]`), and a reproducer reads the variable again.
    pub header_env: Vec<(String, String)>,
    /// The pooled client, built on first use and shared by every connection
    /// opened from this spec and its clones (one run), so that opening one
    /// (for a role, a load connection, a case's own) costs no client
    /// construction (tens of milliseconds, TLS set-up included).
    pub client: ClientCell,
    /// Set once the target turns out to serve 2024-11-05's HTTP with SSE:
    /// every connection opened from the spec and its clones then uses it.
    pub sse: SseCell,
    /// New connections of mcpcert's own at a time, and lost requests sent
    /// again (`pace.rs`), shared by the clones.
    pub gate: pace::Gate,
}

/// Whether a spec's connections use HTTP with SSE (shared by its clones).
#[derive(Debug, Clone, Default)]
pub struct SseCell(std::sync::Arc<std::sync::atomic::AtomicBool>);

impl SseCell {
    pub fn get(&self) -> bool {
        self.0.load(std::sync::atomic::Ordering::Relaxed)
    }
    pub fn set(&self) {
        self.0.store(true, std::sync::atomic::Ordering::Relaxed)
    }
}

/// A client shared by the clones of a spec.
#[derive(Debug, Clone, Default)]
pub struct ClientCell(std::sync::Arc<std::sync::OnceLock<Result<reqwest::Client, String>>>);

impl ClientCell {
    fn get(&self, tls: bool) -> Result<reqwest::Client, String> {
        self.0.get_or_init(|| build_client(false, tls)).clone()
    }
}

/// How a request is sent and its answer awaited.
#[derive(Clone, Copy, Default)]
pub struct Ask<'a> {
    /// The id of the response to wait for (an SSE stream ends with it).
    pub expect_id: Option<&'a Value>,
    /// The request's progressToken: progress for it pushes the deadline out.
    pub progress: Option<&'a Value>,
    /// Requests the server sends meanwhile are answered with what this
    /// gives (not over the exact-case sender).
    pub answer: Option<Answer<'a>>,
    /// Safe to send again if its connection breaks before an answer comes.
    pub repeatable: bool,
    /// Header names in their exact letter case: over mcpcert's own
    /// HTTP/1.1 sender, on a connection of its own.
    pub exact: bool,
}

/// Judges whether what a stream brought so far is what was awaited.
pub type Done<'a> = &'a (dyn Fn(&[Frame]) -> bool + Send + Sync);

/// When to stop reading a reply.
#[derive(Clone, Copy)]
pub(super) struct ReadUntil<'a> {
    /// The response that ends an SSE stream.
    pub expect_id: Option<&'a Value>,
    /// On a connection of its own.
    pub fresh: bool,
    pub within: Duration,
    /// Stop (after a short grace) once this holds.
    pub done: Option<Done<'a>>,
    /// The request's progressToken: progress for it pushes the deadline
    /// out (up to the ceiling).
    pub progress: Option<&'a Value>,
    /// Requests the server sends on the stream are answered with a POST of
    /// what this gives, with these headers (the session's).
    pub answer: Option<(Answer<'a>, &'a [(String, String)])>,
    /// Safe to send again if its connection breaks before an answer comes.
    pub repeatable: bool,
}

#[derive(Clone)]
pub(super) struct HttpTarget {
    pub spec: HttpSpec,
    pub(super) limits: Limits,
    /// `spec.url`, parsed once (not for each request).
    url: std::sync::Arc<reqwest::Url>,
}

/// One client without an idle pool, shared by every `fresh` request: each
/// such request still opens its own connection, and the client (TLS set-up
/// included, tens of milliseconds) is built once per process, one for
/// `https` targets and one for plain `http`.
fn fresh_client(tls: bool) -> Result<reqwest::Client, String> {
    static CLIENTS: [std::sync::OnceLock<Result<reqwest::Client, String>>; 2] = [std::sync::OnceLock::new(), std::sync::OnceLock::new()];
    CLIENTS[usize::from(tls)].get_or_init(|| build_client(true, tls)).clone()
}

/// A client; `tls` false for a plain `http` target, whose client needs no
/// root certificates (loading the system's takes milliseconds).
/// A client of its own, pooling nothing, for one look outside the run's
/// sessions (the server card); `tls` for an https URL.
pub fn one_off_client(tls: bool) -> Result<reqwest::Client, String> {
    build_client(true, tls)
}

fn build_client(fresh: bool, tls: bool) -> Result<reqwest::Client, String> {
    // rustls with ring (see Cargo.toml): installed once, before any client.
    static PROVIDER: std::sync::Once = std::sync::Once::new();
    PROVIDER.call_once(|| {
        // Err only when a provider is installed already: that one serves.
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
    let mut b = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).connect_timeout(Duration::from_secs(10));
    if fresh {
        b = b.pool_max_idle_per_host(0);
    }
    if !tls {
        b = b.tls_certs_only(Vec::<reqwest::Certificate>::new());
    }
    b.build().map_err(|e| format!("HTTP client: {e}"))
}

impl HttpTarget {
    pub fn new(spec: &HttpSpec, limits: &Limits) -> Result<HttpTarget, OpenError> {
        let url = reqwest::Url::parse(&spec.url).map_err(|e| OpenError(format!("invalid URL `{}`: {e}", spec.url)))?;
        Ok(HttpTarget { spec: spec.clone(), limits: limits.clone(), url: std::sync::Arc::new(url) })
    }

    /// The spec's pooled client.
    pub(super) fn client(&self) -> Result<reqwest::Client, String> {
        self.spec.client.get(self.tls())
    }

    /// Whether the target is `https` (anything else parsed as a URL here
    /// is plain `http`).
    fn tls(&self) -> bool {
        !self.spec.url.get(..5).is_some_and(|s| s.eq_ignore_ascii_case("http:"))
    }

    pub fn is_secret(&self, name: &str) -> bool {
        let n = name.to_ascii_lowercase();
        n == "authorization" || n == "cookie" || n == "proxy-authorization" || self.spec.secret_headers.contains(&n)
    }

    /// Send one request. `headers` are sent exactly as given (duplicates
    /// allowed), after the target's configured extra headers. `ask.expect_id`
    /// says which response ends an SSE stream; `ask.exact` sends the names
    /// in their letter case, on a connection of its own.
    pub async fn send(&self, method: &str, headers: &[(String, String)], body: Option<Vec<u8>>, ask: Ask<'_>) -> HttpReply {
        let until = ReadUntil {
            expect_id: ask.expect_id,
            fresh: ask.exact,
            within: self.limits.request,
            done: None,
            progress: ask.progress,
            answer: ask.answer.filter(|_| !ask.exact).map(|a| (a, headers)),
            repeatable: ask.repeatable,
        };
        self.send_retrying(method, headers, body, until, ask.exact).await
    }

    /// Send (a POST with a body, or a bodiless GET) and read whatever the
    /// server streams for `window` (a subscriptions/listen stream, or a
    /// 2025-11-25 GET stream, stays open); no timeout error when the
    /// window ends, and the stream is then dropped (which ends it).
    /// Once `done` holds for the frames so far, reading goes on only for
    /// a short grace period.
    /// Requests the server sends on it are answered with `ask.answer`, if given.
    pub async fn collect(
        &self,
        method: &str,
        headers: &[(String, String)],
        body: Option<Vec<u8>>,
        window: Duration,
        done: Done<'_>,
        ask: Ask<'_>,
    ) -> HttpReply {
        let until = ReadUntil {
            expect_id: None,
            fresh: true,
            within: window,
            done: Some(done),
            progress: None,
            answer: ask.answer.filter(|_| !ask.exact).map(|a| (a, headers)),
            repeatable: ask.repeatable,
        };
        self.send_retrying(method, headers, body, until, ask.exact).await
    }

    /// One request (`exact`: over mcpcert's own HTTP/1.1 sender), sent
    /// again after a pause while its connection breaks before an answer
    /// comes, if it is safe to repeat (`pace.rs`).
    async fn send_retrying(
        &self,
        method: &str,
        headers: &[(String, String)],
        mut body: Option<Vec<u8>>,
        until: ReadUntil<'_>,
        exact: bool,
    ) -> HttpReply {
        let mut resent = Vec::new();
        for pause in pace::RETRIES.iter().map(Some).chain([None]) {
            let b = if until.repeatable && pause.is_some() { body.clone() } else { body.take() };
            let mut reply =
                if exact { self.over_exact(method, headers, b, until).await } else { self.send_within(method, headers, b, until).await };
            match pause {
                Some(p) if reply.lost && until.repeatable && self.spec.gate.may_retry() => {
                    resent.push(reply.error.as_ref().map(|e| e.to_string()).unwrap_or_default());
                    tokio::time::sleep(*p).await;
                }
                _ => {
                    reply.resent = resent;
                    return reply;
                }
            }
        }
        unreachable!("the last attempt returns")
    }

    async fn send_within(&self, method: &str, headers: &[(String, String)], body: Option<Vec<u8>>, until: ReadUntil<'_>) -> HttpReply {
        let ReadUntil { fresh, within, .. } = until;
        let start = Instant::now();
        let mut reply = HttpReply::default();
        let client = if fresh {
            match fresh_client(self.tls()) {
                Ok(c) => c,
                Err(e) => {
                    reply.error = Some(TransportError::Io(e));
                    return reply;
                }
            }
        } else {
            match self.spec.client.get(self.tls()) {
                Ok(c) => c,
                Err(e) => {
                    reply.error = Some(TransportError::Io(e));
                    return reply;
                }
            }
        };
        let mut map = HeaderMap::new();
        for (k, v) in self.spec.headers.iter().chain(headers.iter()) {
            let name = match HeaderName::from_bytes(k.as_bytes()) {
                Ok(n) => n,
                Err(e) => {
                    reply.error = Some(TransportError::Io(format!("header name `{k}` cannot be sent: {e}")));
                    return reply;
                }
            };
            let val = match HeaderValue::from_bytes(v.as_bytes()) {
                Ok(v) => v,
                Err(e) => {
                    reply.error = Some(TransportError::Io(format!("header `{k}` value cannot be sent: {e}")));
                    return reply;
                }
            };
            map.append(name, val);
        }
        let m = reqwest::Method::from_bytes(method.as_bytes()).unwrap_or(reqwest::Method::POST);
        let mut req = client.request(m, (*self.url).clone()).headers(map);
        if let Some(b) = body {
            req = req.body(b);
        }
        // A watch (`done`: a stream looked at for a window) waits for the
        // answer to begin as any request does; its window counts from then,
        // so a server slow to send its headers (a loaded machine) is
        // watched as long as a quick one, not cut short.
        let watch = until.done.is_some();
        let begin_within = if watch { within.max(self.limits.request) } else { within };
        let mut deadline = tokio::time::Instant::now() + begin_within;
        // A connection of its own waits for a place (`pace.rs`) until its answer begins.
        let place = if fresh { self.spec.gate.open().await } else { None };
        let sent = tokio::time::timeout_at(deadline, req.send()).await;
        drop(place);
        let resp = match sent {
            Err(_) => {
                reply.error = Some(TransportError::Timeout(format!("no HTTP response within {} ms", begin_within.as_millis())));
                reply.ms = ms_since(start);
                return reply;
            }
            Ok(Err(e)) => {
                reply.error = Some(TransportError::Io(describe_reqwest(&e)));
                reply.lost = pace::lost_reqwest(&e);
                reply.ms = ms_since(start);
                return reply;
            }
            Ok(Ok(r)) => r,
        };
        reply.status = Some(resp.status().as_u16());
        for (k, v) in resp.headers() {
            reply.headers.push((k.as_str().to_string(), String::from_utf8_lossy(v.as_bytes()).into_owned()));
        }
        if watch {
            deadline = tokio::time::Instant::now() + within;
        }
        self.read_body(&mut reply, Body::Reqwest(resp), &until, start, deadline).await;
        reply
    }

    /// Read a reply body: SSE events until the response to `expect_id`,
    /// or a whole JSON body; capped and bounded by `deadline`.
    pub(super) async fn read_body(
        &self,
        reply: &mut HttpReply,
        mut resp: Body,
        until: &ReadUntil<'_>,
        start: Instant,
        mut deadline: tokio::time::Instant,
    ) {
        let (expect_id, done) = (until.expect_id, until.done);
        reply.content_type = reply.header("content-type").map(|s| s.to_string());
        let is_sse = reply.content_type.as_deref().is_some_and(|c| c.to_ascii_lowercase().starts_with("text/event-stream"));
        if is_sse {
            let mut parser = sse::Parser::new();
            // With `done`, the stream is looked at every tick (reqwest's
            // chunk() may be dropped and polled again without loss).
            let mut stop_at = deadline;
            loop {
                // Judged on the frames read so far, before waiting again.
                if let Some(f) = done
                    && stop_at == deadline
                    && f(&reply.frames)
                {
                    stop_at = (tokio::time::Instant::now() + super::GRACE).min(deadline);
                }
                let wake = match done {
                    Some(_) => stop_at.min(tokio::time::Instant::now() + Duration::from_millis(50)),
                    None => deadline,
                };
                let next = tokio::time::timeout_at(wake, resp.chunk()).await;
                match next {
                    Err(_) if tokio::time::Instant::now() < stop_at => continue,
                    Err(_) => {
                        if reply.response_index.is_none() && expect_id.is_some() {
                            reply.error = Some(TransportError::Timeout(format!(
                                "SSE stream gave no response within {} ms",
                                self.limits.request.as_millis()
                            )));
                        }
                        break;
                    }
                    Ok(Err(e)) => {
                        reply.error = Some(TransportError::Io(format!("SSE stream broke: {e}")));
                        break;
                    }
                    Ok(Ok(None)) => {
                        for ev in parser.finish() {
                            self.push_event(reply, ev, expect_id, None, start);
                        }
                        if reply.response_index.is_none() && expect_id.is_some() {
                            reply.error = Some(TransportError::Closed("SSE stream ended without the response".into()));
                        }
                        break;
                    }
                    Ok(Ok(Some(bytes))) => {
                        let mut moved = false;
                        for ev in parser.feed(&bytes) {
                            moved |= self.push_event(reply, ev, expect_id, until.progress, start);
                            // A request the server sends on the stream
                            // (2025-11-25 sampling, elicitation) is answered
                            // with a POST of its own.
                            if let (Some((answer, headers)), Some(f)) = (until.answer, reply.frames.last())
                                && let (true, Some(v)) = (f.is_server_request(), f.value.as_ref())
                            {
                                let body = answer(v).to_string();
                                self.post_answer(headers, body).await;
                                moved = true;
                            }
                        }
                        // Progress for the request restarts its timeout, up to the ceiling.
                        if moved && done.is_none() {
                            let ceiling = tokio::time::Instant::from_std(start) + self.limits.ceiling.max(self.limits.request);
                            deadline = (tokio::time::Instant::now() + self.limits.request).min(ceiling);
                            stop_at = deadline;
                        }
                        if parser.pending() > self.limits.max_message {
                            reply.error = Some(TransportError::TooLarge(format!(
                                "an SSE line grew past {} bytes without ending",
                                self.limits.max_message
                            )));
                            break;
                        }
                        if reply.response_index.is_some() {
                            if done.is_none() {
                                resp.finish_in_background();
                            }
                            break;
                        }
                    }
                }
            }
        } else {
            let mut body: Vec<u8> = Vec::new();
            loop {
                match tokio::time::timeout_at(deadline, resp.chunk()).await {
                    Err(_) => {
                        reply.error =
                            Some(TransportError::Timeout(format!("HTTP body not complete within {} ms", self.limits.request.as_millis())));
                        break;
                    }
                    Ok(Err(e)) => {
                        reply.error = Some(TransportError::Io(format!("reading the body failed: {e}")));
                        break;
                    }
                    Ok(Ok(None)) => break,
                    Ok(Ok(Some(b))) => {
                        if body.len() + b.len() > self.limits.max_message {
                            reply.error = Some(TransportError::TooLarge(format!("HTTP body exceeds {} bytes", self.limits.max_message)));
                            break;
                        }
                        body.extend_from_slice(&b);
                    }
                }
            }
            let text = String::from_utf8_lossy(&body[..body.len().min(64 * 1024)]).into_owned();
            if !body.is_empty() && reply.error.is_none() {
                let f = Frame::from_bytes(&body, ms_since(start));
                let matches = f.is_response();
                reply.frames.push(f);
                if matches {
                    reply.response_index = Some(0);
                }
            }
            if reply.frames.is_empty() || reply.frames[0].problem.is_some() {
                reply.body = Some(text);
            }
        }
        reply.ms = ms_since(start);
    }

    /// The exchange over mcpcert's own HTTP/1.1 sender (`exact.rs`): it
    /// sends and reads the head; the body is read here, as for reqwest.
    async fn over_exact(&self, method: &str, headers: &[(String, String)], body: Option<Vec<u8>>, until: ReadUntil<'_>) -> HttpReply {
        let start = Instant::now();
        // A watch's window counts from when its answer begins (`send_within`).
        let watch = until.done.is_some();
        let begin_within = if watch { until.within.max(self.limits.request) } else { until.within };
        let deadline = tokio::time::Instant::now() + begin_within;
        let to = exact::To { url: &self.spec.url, fixed: &self.spec.headers, timeout: begin_within };
        // Its connection waits for a place (`pace.rs`) until its answer begins.
        let place = self.spec.gate.open().await;
        let head = exact::send_exact(&to, method, headers, body, start, deadline).await;
        drop(place);
        match head {
            Ok((mut reply, raw)) => {
                let deadline = if watch { tokio::time::Instant::now() + until.within } else { deadline };
                self.read_body(&mut reply, Body::Raw(raw), &until, start, deadline).await;
                reply
            }
            Err(reply) => reply,
        }
    }

    /// Keep one event; true if it was progress for `progress`.
    /// POST a response to a request the server sent; what comes back is
    /// not waited for beyond the request timeout, nor judged.
    async fn post_answer(&self, headers: &[(String, String)], body: String) {
        let Ok(client) = self.spec.client.get(self.tls()) else { return };
        let mut req = client.post((*self.url).clone());
        // A GET stream's headers carry no Content-Type; the answer is JSON.
        if !headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("content-type")) {
            req = req.header("Content-Type", "application/json");
        }
        for (k, v) in self.spec.headers.iter().chain(headers.iter()) {
            req = req.header(k.as_str(), v.as_str());
        }
        let _ = tokio::time::timeout(self.limits.request, req.body(body).send()).await;
    }

    fn push_event(
        &self,
        reply: &mut HttpReply,
        ev: sse::Event,
        expect_id: Option<&Value>,
        progress: Option<&Value>,
        start: Instant,
    ) -> bool {
        let f = Frame::from_bytes(ev.data.as_bytes(), ms_since(start));
        let answer = reply.response_index.is_none() && expect_id.is_some_and(|id| f.answers(id));
        let moved = progress.is_some_and(|t| f.is_progress_for(t));
        reply.frames.push(f);
        if answer {
            reply.response_index = Some(reply.frames.len() - 1);
        }
        moved
    }
}

/// Where body bytes come from: reqwest, or our own HTTP/1.1 connection.
pub(super) enum Body {
    Reqwest(reqwest::Response),
    Raw(RawBody),
}

/// How long a stream that gave its response is read to its end in the
/// background, so that its connection can serve the next request.
const FINISH: Duration = Duration::from_secs(2);

impl Body {
    /// The response came on this stream: what follows is not read as part
    /// of the exchange. A stream that then ends at once (as the transport
    /// asks of a server) leaves its connection to the pool: read to its
    /// end in the background (at most `FINISH`, discarded), where dropping
    /// it now would close the connection, and the next request would pay
    /// for a new one. One the server keeps open is dropped after `FINISH`.
    fn finish_in_background(self) {
        if let Body::Reqwest(mut r) = self {
            use futures_util::FutureExt;
            // Ended already: nothing to wait for.
            if let Some(Ok(None)) = r.chunk().now_or_never() {
                return;
            }
            tokio::spawn(async move {
                let _ = tokio::time::timeout(FINISH, async move { while let Ok(Some(_)) = r.chunk().await {} }).await;
            });
        }
    }

    async fn chunk(&mut self) -> Result<Option<Vec<u8>>, String> {
        match self {
            Body::Reqwest(r) => r.chunk().await.map(|c| c.map(|b| b.to_vec())).map_err(|e| describe_reqwest(&e)),
            Body::Raw(r) => r.chunk().await,
        }
    }
}

fn describe_reqwest(e: &reqwest::Error) -> String {
    use std::error::Error;
    let mut s = e.to_string();
    let mut src = e.source();
    while let Some(x) = src {
        s.push_str(": ");
        s.push_str(&x.to_string());
        src = x.source();
    }
    s
}
