//! The fuzzer's own peer: a stdio process it starts (and starts again after
//! a crash), or an HTTP endpoint it sends raw requests to, each on a
//! connection of its own. Initialize-era revisions get their handshake
//! first (over HTTP, a session whose id every input carries).

use super::inputs::{HttpShape, Input, Payload, request, simple_method};
use crate::transport::{Frame, HttpSpec, Limits, StdioSpec, TargetSpec, Transport, http_parts, send_raw_http};
use crate::wire::{self, Revision};
use serde_json::{Value, json};
use std::time::Duration;

/// What one input got back.
#[derive(Debug, Default, Clone)]
pub struct Answer {
    pub frames: Vec<Frame>,
    pub status: Option<u16>,
    /// Nothing (or nothing whole) within the input's timeout.
    pub timed_out: bool,
    /// The server is gone: the process exited, or the endpoint refuses
    /// connections.
    pub died: Option<String>,
    /// HTTP: the connection closed without a reply.
    pub closed: bool,
    /// stdio: after the input the server answered nothing more (a request
    /// sent after it went unanswered too).
    pub hung: bool,
    pub ms: u64,
    pub stderr: String,
    /// The input's timeout when the wait for its answer was bounded by it
    /// (None: sent in a window, where the answer to mcpcert's next request
    /// ended the wait, stdin being read in order).
    pub timeout_ms: Option<u64>,
}

pub struct Peer {
    target: TargetSpec,
    limits: Limits,
    pub rev: Revision,
    /// How long an input waits for its answer.
    pub timeout: Duration,
    proc: Option<crate::transport::StdioTarget>,
    session: Option<String>,
    /// Requests and other messages sent (the handshakes' included).
    pub sent: u64,
    /// Lines a fresh stdio process needs before an input (the handshake),
    /// for reproducers.
    pub preamble: Vec<String>,
    /// Times the process was started again after it died.
    pub restarts: u32,
    /// The protocol version initialize negotiated (initialize era).
    pub negotiated: Option<String>,
    /// Times the process was started afresh because a window of inputs
    /// could not be read with certainty (its inputs then went one at a
    /// time).
    pub afresh: u32,
    /// Whether windows are still sent (not after one read without
    /// certainty).
    pub windows: bool,
    /// The ids of every input and request of mcpcert's sent so far (as
    /// JSON text): an answer carrying one while another input is out is
    /// late (a server that answers concurrently), not that input's.
    sent_ids: std::collections::HashSet<String>,
    /// Late answers, until the caller takes them.
    late: Vec<Frame>,
    /// Late answers seen in all.
    pub late_count: u32,
}

/// The id of the request a fresh stdio process of a stateless revision is
/// sent first.
const START_ID: &str = "fuzz-start";

/// Whether a frame is a JSON-RPC response (result or error).
pub fn is_response(f: &Frame) -> bool {
    f.is_response()
}

impl Peer {
    pub async fn open(target: &TargetSpec, limits: &Limits, rev: Revision, timeout: Duration) -> Result<Peer, String> {
        let mut p = Peer {
            target: target.clone(),
            limits: limits.clone(),
            rev,
            timeout,
            proc: None,
            session: None,
            sent: 0,
            preamble: Vec::new(),
            restarts: 0,
            negotiated: None,
            afresh: 0,
            windows: true,
            sent_ids: Default::default(),
            late: Vec::new(),
            late_count: 0,
        };
        if !rev.is_stateless() {
            let init = wire::request(&json!(1), "initialize", Some(wire::initialize_params(rev.as_str())));
            let done = wire::notification("notifications/initialized", None);
            p.preamble = vec![init.to_string(), done.to_string()];
        } else if target.transport() == Transport::Stdio {
            // A stdio process is first asked what the liveness probe asks
            // (tools/list), so that every process the inputs meet starts as
            // the first one did: some servers take the era from their first
            // requests and exit on a notification before them (rmcp 3.11
            // after server/discover alone).
            p.preamble = vec![request(rev, &json!(START_ID), "tools/list", None).to_string()];
        }
        p.start().await?;
        Ok(p)
    }

    pub fn transport(&self) -> Transport {
        self.target.transport()
    }

    /// Start (or start again) what serves the inputs, and shake hands.
    async fn start(&mut self) -> Result<(), String> {
        match &self.target {
            TargetSpec::Stdio(spec) => {
                let spec: StdioSpec = spec.clone();
                let mut t = crate::transport::StdioTarget::spawn(&spec, &self.limits).map_err(|e| e.0)?;
                if let [init, done] = &self.preamble[..] {
                    t.write_line(init.as_bytes()).await.map_err(|e| e.to_string())?;
                    let (frames, at, err) = t.read_until_response(&json!(1), self.limits.startup, None, None).await;
                    let Some(at) = at else {
                        return Err(format!("no answer to initialize: {}", err.map(|e| e.to_string()).unwrap_or_default()));
                    };
                    self.negotiated = negotiated(&frames[at]);
                    t.write_line(done.as_bytes()).await.map_err(|e| e.to_string())?;
                    self.sent += 2;
                } else if let [first] = &self.preamble[..] {
                    t.write_line(first.as_bytes()).await.map_err(|e| e.to_string())?;
                    // Answered or not: the inputs judge the server.
                    let _ = t.read_until_response(&json!(START_ID), self.limits.startup, None, None).await;
                    self.sent += 1;
                }
                self.proc = Some(t);
            }
            TargetSpec::Http(h) => {
                if let [init, done] = &self.preamble.clone()[..] {
                    let h: HttpSpec = h.clone();
                    let r = self.post(&h, init.as_bytes(), &[]).await;
                    let sid = r.headers.iter().find(|(k, _)| k == "mcp-session-id").map(|(_, v)| v.clone());
                    let Some(f) = r.frames.iter().find(|f| is_response(f)) else {
                        return Err(format!(
                            "no answer to initialize (HTTP {:?}{})",
                            r.status,
                            r.error.map(|e| format!(", {e}")).unwrap_or_default()
                        ));
                    };
                    self.negotiated = negotiated(f);
                    self.session = sid;
                    self.post(&h, done.as_bytes(), &[]).await;
                }
            }
        }
        Ok(())
    }

    /// A POST of `body` with the revision's standard headers.
    async fn post(&mut self, h: &HttpSpec, body: &[u8], shape_extra: &[(String, Vec<u8>)]) -> crate::transport::RawReply {
        let shape = HttpShape { method: "POST", set: shape_extra.to_vec(), body: body.to_vec(), ..Default::default() };
        self.http(h, &shape).await
    }

    async fn http(&mut self, h: &HttpSpec, s: &HttpShape) -> crate::transport::RawReply {
        let Ok((host, port, path)) = http_parts(&h.url) else {
            return crate::transport::RawReply { error: Some("not an http:// URL".into()), refused: true, ..Default::default() };
        };
        let bytes = request_bytes(self.rev, h, self.session.as_deref(), &host, port, &path, s, false);
        self.sent += 1;
        let deadline = tokio::time::Instant::now() + self.timeout;
        send_raw_http(&host, port, &bytes, deadline, self.limits.max_message).await
    }

    /// The bytes of `s` as they go out, for a reproducer: the configured
    /// headers' values `[redacted]` (a secret never reaches a report).
    pub fn http_bytes(&self, s: &HttpShape) -> Option<Vec<u8>> {
        let TargetSpec::Http(h) = &self.target else { return None };
        let (host, port, path) = http_parts(&h.url).ok()?;
        Some(request_bytes(self.rev, h, self.session.as_deref(), &host, port, &path, s, true))
    }

    /// The command line or URL (redacted), for reproducers.
    pub fn target_shown(&self) -> String {
        match &self.target {
            TargetSpec::Stdio(s) => s.shell_line(),
            TargetSpec::Http(h) => crate::transport::redact_url(&h.url),
        }
    }

    pub fn host_port(&self) -> Option<(String, u16)> {
        let TargetSpec::Http(h) = &self.target else { return None };
        http_parts(&h.url).ok().map(|(h, p, _)| (h, p))
    }

    pub fn session_id(&self) -> Option<&str> {
        self.session.as_deref()
    }

    /// Send one input and wait for what the rules call for.
    pub async fn send(&mut self, input: &Input) -> Answer {
        let mut a = self.send_one(input).await;
        a.timeout_ms = Some(self.timeout.as_millis() as u64);
        a
    }

    async fn send_one(&mut self, input: &Input) -> Answer {
        let wants_reply = !matches!(input.due, super::inputs::Due::Nothing { .. });
        match (&input.payload, self.target.clone()) {
            (Payload::Message(b) | Payload::Bytes(b), TargetSpec::Stdio(_)) => {
                let mut b = b.clone();
                if matches!(input.payload, Payload::Message(_)) {
                    b.push(b'\n');
                }
                self.stdio(&b, &input.due, wants_reply).await
            }
            (Payload::Message(b), TargetSpec::Http(h)) => {
                let s = HttpShape { method: "POST", body: b.clone(), ..Default::default() };
                let r = self.http(&h, &s).await;
                self.gone_after(from_raw(r)).await
            }
            (Payload::Http(s), TargetSpec::Http(h)) => {
                let r = self.http(&h, s).await;
                self.gone_after(from_raw(r)).await
            }
            (Payload::Bytes(_), TargetSpec::Http(_)) | (Payload::Http(_), TargetSpec::Stdio(_)) => {
                Answer { died: Some("input for the other transport".into()), ..Default::default() }
            }
        }
    }

    /// stdio: message inputs written back to back, each followed by a
    /// request of mcpcert's own; the frames before that request's answer
    /// (and after the one before) are the input's, as when it goes alone
    /// (stdin is read in order). None when that reading is not sure: a
    /// request of mcpcert's answered out of turn, or not every one answered
    /// within the timeout (the server is then started afresh, and the
    /// caller sends the inputs again one at a time).
    pub async fn send_window(&mut self, inputs: &[Input]) -> Option<Vec<Answer>> {
        let start = std::time::Instant::now();
        let mut buf = Vec::new();
        let mut marks = Vec::with_capacity(inputs.len());
        for input in inputs {
            let Payload::Message(b) = &input.payload else { return None };
            buf.extend_from_slice(b);
            buf.push(b'\n');
            self.sent += 2;
            let mark = json!(format!("fuzz-after-{}", self.sent));
            buf.extend_from_slice(request(self.rev, &mark, simple_method(self.rev), None).to_string().as_bytes());
            buf.push(b'\n');
            marks.push(mark);
        }
        let t = self.proc.as_mut()?;
        let last = marks.last()?.clone();
        let read = match t.write_raw(&buf).await {
            Ok(()) => Some(
                t.read_until_then(self.timeout, Duration::ZERO, |fs| fs.last().is_some_and(|f| f.is_response() && f.id() == Some(&last)))
                    .await,
            ),
            Err(_) => None,
        };
        t.take_stderr();
        let ms = start.elapsed().as_millis() as u64;
        let mut answers: Vec<Answer> = inputs.iter().map(|_| Answer { ms, ..Default::default() }).collect();
        let mut at = 0;
        let ids: Vec<Vec<Value>> = inputs.iter().map(|i| due_ids(&i.due)).collect();
        for f in read.unwrap_or_default() {
            // An answer with the id of an input before this one (here or
            // earlier) is late.
            let earlier = f.is_response()
                && f.id().is_some_and(|i| {
                    ours(i)
                        && (ids[..at.min(ids.len())].iter().any(|x| x.contains(i))
                            || (!ids.get(at).is_some_and(|x| x.contains(i)) && self.sent_ids.contains(&i.to_string())))
                });
            if f.is_response() && marks.get(at).is_some_and(|m| f.id() == Some(m)) {
                at += 1;
            } else if f.is_response() && marks.iter().any(|m| f.id() == Some(m)) {
                at = usize::MAX;
                break;
            } else if earlier {
                self.late_count += 1;
                self.late.push(f);
            } else if let Some(a) = answers.get_mut(at) {
                a.frames.push(f);
            }
        }
        self.sent_ids.extend(ids.iter().flatten().chain(&marks).map(|i| i.to_string()));
        let exited = t.exited_settled().await;
        if at != marks.len() || exited {
            // A server that answers out of turn (or that needed longer)
            // gets its inputs one at a time from here on; one that exited
            // is found so by them (and started again).
            if !exited {
                self.afresh += 1;
                self.windows = false;
            }
            if let Some(mut t) = self.proc.take() {
                t.kill();
            }
            // A server that cannot start again is found so by the inputs
            // sent one at a time.
            let _ = self.start().await;
            return None;
        }
        for a in &mut answers {
            a.timed_out = !a.frames.iter().flat_map(flatten).any(|f| f.is_response());
        }
        Some(answers)
    }

    async fn stdio(&mut self, bytes: &[u8], due: &super::inputs::Due, wants_reply: bool) -> Answer {
        let mut a = Answer::default();
        let Some(t) = self.proc.as_mut() else {
            a.died = Some("the server process is gone".into());
            return a;
        };
        let start = std::time::Instant::now();
        self.sent += 1;
        // The bytes go as written (their own line ends): write_line adds one.
        let (body, last) = match bytes.split_last() {
            Some((b'\n', rest)) => (rest, true),
            _ => (bytes, false),
        };
        let written = if last { t.write_line(body).await } else { t.write_raw(body).await };
        // A valid request is waited for; for anything else (input that may
        // rightly go unanswered, or be refused with an error) a request is
        // sent right after it: the server's word on the input comes before
        // that request's answer (stdin is read in order), so silence is
        // known without waiting out the timeout, and a server that answers
        // nothing more has hung.
        let valid = matches!(due, super::inputs::Due::Response { null_ok: false, .. });
        let follow = json!(format!("fuzz-after-{}", self.sent));
        let own = |f: &Frame| f.is_response() && f.id() == Some(&follow);
        let now = due_ids(due);
        let past = &self.sent_ids;
        let late = |f: &Frame| f.is_response() && f.id().is_some_and(|i| !now.contains(i) && ours(i) && past.contains(&i.to_string()));
        let mut set_aside = Vec::new();
        if let Err(e) = written {
            a.died = Some(e.to_string());
        } else if wants_reply && valid {
            // Inputs go one at a time: the first response is this input's
            // answer, whatever its id (the oracle judges the id); for a
            // batch, once every id it carried is answered.
            let ids = due_ids(due);
            let whole = |fs: &[Frame]| {
                let got: Vec<Frame> = fs.iter().filter(|f| !late(f)).flat_map(flatten).collect();
                got.iter().any(|f| f.is_response())
                    && (ids.len() < 2
                        || got.iter().any(|f| f.is_response() && !ids.iter().any(|i| f.id() == Some(i)))
                        || ids.iter().all(|i| got.iter().any(|f| f.id() == Some(i))))
            };
            let (gone, frames): (Vec<Frame>, Vec<Frame>) =
                t.read_until_then(self.timeout, Duration::ZERO, whole).await.into_iter().partition(late);
            set_aside.extend(gone);
            a.timed_out = !frames.iter().flat_map(flatten).any(|f| f.is_response());
            a.frames = frames;
            if a.timed_out && !t.exited_settled().await {
                // Unanswered: does it answer anything any more?
                let next = request(self.rev, &follow, simple_method(self.rev), None).to_string();
                self.sent += 1;
                let alive = t.write_line(next.as_bytes()).await.is_ok()
                    && t.read_until_then(self.timeout, Duration::ZERO, |fs| fs.iter().any(own)).await.iter().any(own);
                a.hung = !alive;
            }
        } else {
            let next = request(self.rev, &follow, simple_method(self.rev), None).to_string();
            self.sent += 1;
            if t.write_line(next.as_bytes()).await.is_ok() {
                // Its own id exactly (an error with a null id, which
                // `answers` would take, is what the input may have drawn).
                let frames = t.read_until_then(self.timeout, Duration::ZERO, |fs| fs.iter().any(own)).await;
                a.hung = !frames.iter().any(own);
                let (gone, kept): (Vec<Frame>, Vec<Frame>) = frames.into_iter().filter(|f| f.id() != Some(&follow)).partition(late);
                set_aside.extend(gone);
                a.frames = kept;
                a.timed_out = !a.frames.iter().flat_map(flatten).any(|f| f.is_response());
            }
        }
        self.late_count += set_aside.len() as u32;
        self.late.extend(set_aside);
        self.sent_ids.extend(now.iter().chain([&follow]).map(|i| i.to_string()));
        if t.exited_settled().await {
            a.died = Some(format!("the server process exited{}", t.exit_note_text()));
        }
        a.stderr = t.take_stderr();
        a.ms = start.elapsed().as_millis() as u64;
        a
    }

    /// HTTP: a connection closed without a reply may be a server that died
    /// on the input; it is if it takes no connection any more.
    async fn gone_after(&self, mut a: Answer) -> Answer {
        if a.closed
            && let Some((host, port)) = self.host_port()
        {
            // A moment for a process on its way out to close its listener.
            tokio::time::sleep(Duration::from_millis(5)).await;
            let refused = tokio::time::timeout(Duration::from_secs(2), tokio::net::TcpStream::connect((host.as_str(), port))).await;
            if !matches!(refused, Ok(Ok(_))) {
                a.died = Some("the server closed the connection without a reply and takes no connection any more".into());
            }
        }
        a
    }

    /// After a crash: a new process (stdio); false over HTTP, where mcpcert
    /// cannot start the server again.
    pub async fn restart(&mut self) -> bool {
        if self.transport() != Transport::Stdio {
            return false;
        }
        if let Some(mut t) = self.proc.take() {
            t.kill();
        }
        self.restarts += 1;
        self.start().await.is_ok()
    }

    /// The liveness probe: tools/list (with the revision's own framing),
    /// its answer made comparable (id and timing-dependent members left
    /// out); None when nothing answered.
    pub async fn probe(&mut self, n: u32) -> Option<Value> {
        let id = json!(format!("fuzz-alive-{n}"));
        let body = request(self.rev, &id, "tools/list", None).to_string();
        let input = Input {
            class: super::inputs::Class::Envelope,
            index: 0,
            what: "liveness probe".into(),
            payload: Payload::Message(body.into_bytes()),
            due: super::inputs::Due::Response { id: id.clone(), want: super::inputs::Want::Any, null_ok: false, also: vec![] },
            json: None,
        };
        let a = self.send(&input).await;
        let f = a.frames.iter().find(|f| f.is_response() && f.id() == Some(&id))?;
        let mut v = f.value.clone()?;
        if let Some(o) = v.as_object_mut() {
            o.remove("id");
        }
        Some(v)
    }

    /// Every page of tools/list, walked by its cursors (at most 100 pages).
    pub async fn list_tools(&mut self, n: u32) -> Result<Vec<Value>, String> {
        let mut tools = Vec::new();
        let mut cursor: Option<Value> = None;
        for page in 0..100 {
            let id = json!(format!("fuzz-walk-{n}-{page}"));
            let params = cursor.take().map(|c| json!({ "cursor": c }));
            let body = request(self.rev, &id, "tools/list", params).to_string();
            let input = Input {
                class: super::inputs::Class::Descriptors,
                index: 0,
                what: "tools/list walk".into(),
                payload: Payload::Message(body.into_bytes()),
                due: super::inputs::Due::Response { id: id.clone(), want: super::inputs::Want::Any, null_ok: false, also: vec![] },
                json: None,
            };
            let a = self.send(&input).await;
            let Some(v) = a.frames.iter().find(|f| f.is_response() && f.id() == Some(&id)).and_then(|f| f.value.clone()) else {
                return Err(format!("tools/list page {} got no answer", page + 1));
            };
            let Some(r) = v.get("result") else {
                return Err(format!("tools/list page {} was refused: {}", page + 1, crate::record::clip(&v.to_string(), 200)));
            };
            tools.extend(r.get("tools").and_then(|t| t.as_array()).cloned().unwrap_or_default());
            match r.get("nextCursor") {
                Some(c) if !c.is_null() => cursor = Some(c.clone()),
                _ => return Ok(tools),
            }
        }
        Err("tools/list gave more than 100 pages".into())
    }

    /// Whether server/discover is answered with a result (2026-07-28).
    pub async fn discover(&mut self) -> bool {
        let id = json!("fuzz-discover");
        let body = request(self.rev, &id, "server/discover", None).to_string();
        let input = Input {
            class: super::inputs::Class::Envelope,
            index: 0,
            what: "revision probe".into(),
            payload: Payload::Message(body.into_bytes()),
            due: super::inputs::Due::Response { id: id.clone(), want: super::inputs::Want::Any, null_ok: false, also: vec![] },
            json: None,
        };
        let a = self.send(&input).await;
        a.frames.iter().any(|f| f.answers(&id) && f.value.as_ref().is_some_and(|v| v.pointer("/result/supportedVersions").is_some()))
    }

    /// The late answers set aside since the last call.
    pub fn take_late(&mut self) -> Vec<Frame> {
        std::mem::take(&mut self.late)
    }

    pub async fn shutdown(&mut self) {
        if let Some(mut t) = self.proc.take() {
            t.shutdown().await;
        }
    }
}

fn negotiated(f: &Frame) -> Option<String> {
    f.value.as_ref()?.pointer("/result/protocolVersion")?.as_str().map(String::from)
}

/// Whether an id is one only mcpcert's numbering gives (an input's, from
/// 900000, or a request of its own, `fuzz-…`): only such an id marks an
/// answer as another input's. Odd ids (null, booleans, floats, small
/// numbers) recur and are what a server that mangles ids sends back.
fn ours(id: &Value) -> bool {
    id.as_i64().is_some_and(|n| n >= 900_000) || id.as_str().is_some_and(|s| s.starts_with("fuzz-"))
}

/// The ids an answer may carry for this input.
pub fn due_ids(due: &super::inputs::Due) -> Vec<Value> {
    use super::inputs::Due;
    match due {
        Due::Response { id, also, .. } => std::iter::once(id.clone()).chain(also.iter().cloned()).collect(),
        Due::Unreadable { also, .. } => also.clone(),
        _ => Vec::new(),
    }
}

/// A frame, or each member of a batch answer (a JSON array) as a frame.
pub fn flatten(f: &Frame) -> Vec<Frame> {
    match &f.value {
        Some(Value::Array(items)) => {
            items.iter().map(|v| Frame { raw: v.to_string(), problem: None, value: Some(v.clone()), at_ms: f.at_ms }).collect()
        }
        _ => vec![f.clone()],
    }
}

fn from_raw(r: crate::transport::RawReply) -> Answer {
    Answer {
        frames: r.frames,
        status: r.status,
        timed_out: r.timed_out,
        died: r.refused.then(|| r.error.clone().unwrap_or_else(|| "connection refused".into())),
        closed: r.status.is_none() && !r.timed_out && !r.refused,
        hung: false,
        ms: r.ms,
        stderr: String::new(),
        timeout_ms: None,
    }
}

/// A whole HTTP request: the shape's method, the target's configured
/// headers (`redact`: their values `[redacted]`), the standard headers
/// (minus what it drops, with what it sets instead), its added lines, and
/// its body.
#[allow(clippy::too_many_arguments)]
fn request_bytes(
    rev: Revision,
    h: &HttpSpec,
    session: Option<&str>,
    host: &str,
    port: u16,
    path: &str,
    s: &HttpShape,
    redact: bool,
) -> Vec<u8> {
    let body_json: Option<Value> = serde_json::from_slice(&s.body).ok();
    let mut std_headers = wire::standard_headers(rev, body_json.as_ref().or(Some(&json!({"method": simple_method(rev)}))), session);
    if rev.is_stateless() && body_json.is_none() {
        std_headers.retain(|(k, _)| !k.eq_ignore_ascii_case("mcp-method"));
    }
    let mut lines: Vec<(String, Vec<u8>)> = vec![("Host".into(), format!("{host}:{port}").into_bytes())];
    lines.extend(h.headers.iter().map(|(k, v)| (k.clone(), if redact { b"[redacted]".to_vec() } else { v.clone().into_bytes() })));
    for (k, v) in std_headers {
        let lk = k.to_ascii_lowercase();
        if s.drop.contains(&lk.as_str()) || s.set.iter().any(|(n, _)| n.eq_ignore_ascii_case(&k)) {
            continue;
        }
        lines.push((k, v.into_bytes()));
    }
    lines.extend(s.set.iter().cloned());
    lines.extend(s.add.iter().cloned());
    if s.chunked {
        lines.push(("Transfer-Encoding".into(), b"chunked".to_vec()));
    } else {
        lines.push(("Content-Length".into(), s.body.len().to_string().into_bytes()));
    }
    lines.push(("Connection".into(), b"close".to_vec()));
    let mut out = format!("{} {path} HTTP/1.1\r\n", s.method).into_bytes();
    for (k, v) in lines {
        out.extend_from_slice(k.as_bytes());
        out.extend_from_slice(b": ");
        out.extend_from_slice(&v);
        out.extend_from_slice(b"\r\n");
    }
    out.extend_from_slice(b"\r\n");
    out.extend_from_slice(&s.body);
    out
}
