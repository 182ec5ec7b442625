//! Streamable HTTP targets: POST JSON-RPC bodies with any header set, read
//! `application/json` or `text/event-stream` replies, record everything.

use super::sse;
use super::{Frame, Limits, TransportError, ms_since};
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use serde::Serialize;
use serde_json::Value;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

#[derive(Debug, Clone)]
pub struct HttpSpec {
    pub url: String,
    /// Extra headers sent on every request (e.g. Authorization).
    pub headers: Vec<(String, String)>,
    /// Lower-case names whose values never appear in reports.
    pub secret_headers: Vec<String>,
}

#[derive(Clone)]
pub struct HttpTarget {
    pub spec: HttpSpec,
    client: reqwest::Client,
    limits: Limits,
}

/// One HTTP exchange as seen on the wire.
#[derive(Debug, Clone, Serialize, Default)]
pub struct HttpReply {
    pub status: Option<u16>,
    pub headers: Vec<(String, String)>,
    pub content_type: Option<String>,
    /// Body text for non-SSE replies (lossy UTF-8, capped).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub body: Option<String>,
    pub frames: Vec<Frame>,
    #[serde(skip)]
    pub response_index: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<TransportError>,
    pub ms: u64,
}

impl HttpReply {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }
}

/// One client without an idle pool, shared by every `fresh` request: each
/// such request still opens its own connection, and the client (TLS set-up
/// included, tens of milliseconds) is built once per process.
fn fresh_client() -> Result<reqwest::Client, String> {
    static CLIENT: std::sync::OnceLock<Result<reqwest::Client, String>> = std::sync::OnceLock::new();
    CLIENT.get_or_init(|| build_client(true)).clone()
}

fn build_client(fresh: bool) -> Result<reqwest::Client, String> {
    let mut b = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).connect_timeout(Duration::from_secs(10));
    if fresh {
        b = b.pool_max_idle_per_host(0);
    }
    b.build().map_err(|e| format!("HTTP client: {e}"))
}

impl HttpTarget {
    pub fn new(spec: &HttpSpec, limits: &Limits) -> Result<HttpTarget, String> {
        reqwest::Url::parse(&spec.url).map_err(|e| format!("invalid URL `{}`: {e}", spec.url))?;
        Ok(HttpTarget { spec: spec.clone(), client: build_client(false)?, limits: limits.clone() })
    }

    pub fn is_secret(&self, name: &str) -> bool {
        let n = name.to_ascii_lowercase();
        n == "authorization" || n == "cookie" || n == "proxy-authorization" || self.spec.secret_headers.iter().any(|s| *s == n)
    }

    /// Send one request. `headers` are sent exactly as given (duplicates
    /// allowed), after the target's configured extra headers. `expect_id`
    /// says which response ends an SSE stream. `fresh` uses a new connection.
    pub async fn send(
        &self,
        method: &str,
        headers: &[(String, String)],
        body: Option<Vec<u8>>,
        expect_id: Option<&Value>,
        fresh: bool,
    ) -> HttpReply {
        self.send_within(method, headers, body, expect_id, fresh, self.limits.request, None).await
    }

    /// POST and read whatever the server streams for `window` (a
    /// subscriptions/listen stream stays open); no timeout error when the
    /// window ends, and the stream is then dropped (which ends it).
    /// Once `done` holds for the frames so far, reading goes on only for
    /// a short grace period.
    pub async fn collect(
        &self,
        headers: &[(String, String)],
        body: Vec<u8>,
        window: Duration,
        done: &(dyn Fn(&[Frame]) -> bool + Send + Sync),
    ) -> HttpReply {
        self.send_within("POST", headers, Some(body), None, true, window, Some(done)).await
    }

    async fn send_within(
        &self,
        method: &str,
        headers: &[(String, String)],
        body: Option<Vec<u8>>,
        expect_id: Option<&Value>,
        fresh: bool,
        within: Duration,
        done: Option<&(dyn Fn(&[Frame]) -> bool + Send + Sync)>,
    ) -> HttpReply {
        let start = Instant::now();
        let mut reply = HttpReply::default();
        let client = if fresh {
            match fresh_client() {
                Ok(c) => c,
                Err(e) => {
                    reply.error = Some(TransportError::Io(e));
                    return reply;
                }
            }
        } else {
            self.client.clone()
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
        let mut req = client.request(m, &self.spec.url).headers(map);
        if let Some(b) = body {
            req = req.body(b);
        }
        let deadline = tokio::time::Instant::now() + within;
        let resp = match tokio::time::timeout_at(deadline, req.send()).await {
            Err(_) => {
                reply.error = Some(TransportError::Timeout(format!("no HTTP response within {} ms", self.limits.request.as_millis())));
                reply.ms = ms_since(start);
                return reply;
            }
            Ok(Err(e)) => {
                reply.error = Some(TransportError::Io(describe_reqwest(&e)));
                reply.ms = ms_since(start);
                return reply;
            }
            Ok(Ok(r)) => r,
        };
        reply.status = Some(resp.status().as_u16());
        for (k, v) in resp.headers() {
            reply.headers.push((k.as_str().to_string(), String::from_utf8_lossy(v.as_bytes()).into_owned()));
        }
        self.read_body(&mut reply, Body::Reqwest(resp), expect_id, start, deadline, done).await;
        reply
    }

    /// Like `send`, but over a plain HTTP/1.1 connection of our own, so
    /// header names go out exactly as written (reqwest lower-cases them).
    /// Only for `http://` URLs.
    pub async fn send_exact(
        &self,
        method: &str,
        headers: &[(String, String)],
        body: Option<Vec<u8>>,
        expect_id: Option<&Value>,
    ) -> HttpReply {
        let start = Instant::now();
        let mut reply = HttpReply::default();
        let deadline = tokio::time::Instant::now() + self.limits.request;
        let url = match reqwest::Url::parse(&self.spec.url) {
            Ok(u) if u.scheme() == "http" => u,
            _ => {
                reply.error = Some(TransportError::Io("header names with exact letter case can only be sent to an http:// URL".into()));
                return reply;
            }
        };
        let host = url.host_str().unwrap_or("127.0.0.1").to_string();
        let port = url.port_or_known_default().unwrap_or(80);
        let mut path = url.path().to_string();
        if let Some(q) = url.query() {
            path.push('?');
            path.push_str(q);
        }
        let body = body.unwrap_or_default();
        let mut head =
            format!("{method} {path} HTTP/1.1\r\nHost: {host}:{port}\r\nContent-Length: {}\r\nConnection: close\r\n", body.len());
        for (k, v) in self.spec.headers.iter().chain(headers.iter()) {
            if k.bytes().any(|b| b <= b' ' || b == b':' || b >= 0x7f) || v.bytes().any(|b| b == b'\r' || b == b'\n') {
                reply.error = Some(TransportError::Io(format!("header `{k}` cannot be sent as written")));
                return reply;
            }
            head.push_str(&format!("{k}: {v}\r\n"));
        }
        head.push_str("\r\n");
        let io = async {
            let mut sock =
                tokio::net::TcpStream::connect((host.as_str(), port)).await.map_err(|e| format!("connect to {host}:{port}: {e}"))?;
            sock.write_all(head.as_bytes()).await.map_err(|e| e.to_string())?;
            sock.write_all(&body).await.map_err(|e| e.to_string())?;
            let mut rd = tokio::io::BufReader::new(sock);
            let status_line = read_line_capped(&mut rd).await?;
            let status: u16 = status_line
                .split_whitespace()
                .nth(1)
                .and_then(|c| c.parse().ok())
                .ok_or_else(|| format!("not an HTTP status line: {status_line:?}"))?;
            let mut hs = Vec::new();
            loop {
                let line = read_line_capped(&mut rd).await?;
                if line.is_empty() {
                    break;
                }
                if hs.len() > 200 {
                    return Err("more than 200 response headers".to_string());
                }
                if let Some((k, v)) = line.split_once(':') {
                    hs.push((k.trim().to_ascii_lowercase(), v.trim().to_string()));
                }
            }
            Ok::<_, String>((status, hs, rd))
        };
        let (status, hs, rd) = match tokio::time::timeout_at(deadline, io).await {
            Err(_) => {
                reply.error = Some(TransportError::Timeout(format!("no HTTP response within {} ms", self.limits.request.as_millis())));
                reply.ms = ms_since(start);
                return reply;
            }
            Ok(Err(e)) => {
                reply.error = Some(TransportError::Io(e));
                reply.ms = ms_since(start);
                return reply;
            }
            Ok(Ok(x)) => x,
        };
        reply.status = Some(status);
        let chunked = hs.iter().any(|(k, v)| k == "transfer-encoding" && v.to_ascii_lowercase().contains("chunked"));
        let length = hs.iter().find(|(k, _)| k == "content-length").and_then(|(_, v)| v.parse::<usize>().ok());
        reply.headers = hs;
        let framing = if chunked {
            RawFraming::Chunked
        } else if let Some(n) = length {
            RawFraming::Length(n)
        } else if status == 204 || status == 304 {
            RawFraming::Length(0)
        } else {
            RawFraming::UntilClose
        };
        self.read_body(&mut reply, Body::Raw(rd, framing), expect_id, start, deadline, None).await;
        reply
    }

    /// Read a reply body: SSE events until the response to `expect_id`,
    /// or a whole JSON body; capped and bounded by `deadline`.
    async fn read_body(
        &self,
        reply: &mut HttpReply,
        mut resp: Body,
        expect_id: Option<&Value>,
        start: Instant,
        deadline: tokio::time::Instant,
        done: Option<&(dyn Fn(&[Frame]) -> bool + Send + Sync)>,
    ) {
        reply.content_type = reply.header("content-type").map(|s| s.to_string());
        let is_sse = reply.content_type.as_deref().is_some_and(|c| c.to_ascii_lowercase().starts_with("text/event-stream"));
        if is_sse {
            let mut parser = sse::Parser::new();
            // With `done`, the stream is looked at every tick (reqwest's
            // chunk() may be dropped and polled again without loss).
            let mut stop_at = deadline;
            loop {
                // Judged on the frames read so far, before waiting again.
                if let Some(f) = done {
                    if stop_at == deadline && f(&reply.frames) {
                        stop_at = (tokio::time::Instant::now() + super::stdio::GRACE).min(deadline);
                    }
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
                            self.push_event(reply, ev, expect_id, start);
                        }
                        if reply.response_index.is_none() && expect_id.is_some() {
                            reply.error = Some(TransportError::Closed("SSE stream ended without the response".into()));
                        }
                        break;
                    }
                    Ok(Ok(Some(bytes))) => {
                        for ev in parser.feed(&bytes) {
                            self.push_event(reply, ev, expect_id, start);
                        }
                        if parser.pending() > self.limits.max_message {
                            reply.error = Some(TransportError::TooLarge(format!(
                                "an SSE line grew past {} bytes without ending",
                                self.limits.max_message
                            )));
                            break;
                        }
                        if reply.response_index.is_some() {
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

    fn push_event(&self, reply: &mut HttpReply, ev: sse::Event, expect_id: Option<&Value>, start: Instant) {
        let f = Frame::from_bytes(ev.data.as_bytes(), ms_since(start));
        let answer = reply.response_index.is_none() && expect_id.is_some_and(|id| f.answers(id));
        reply.frames.push(f);
        if answer {
            reply.response_index = Some(reply.frames.len() - 1);
        }
    }
}

/// Where body bytes come from: reqwest, or our own HTTP/1.1 connection.
enum Body {
    Reqwest(reqwest::Response),
    Raw(tokio::io::BufReader<tokio::net::TcpStream>, RawFraming),
}

enum RawFraming {
    Length(usize),
    Chunked,
    UntilClose,
}

impl Body {
    async fn chunk(&mut self) -> Result<Option<Vec<u8>>, String> {
        match self {
            Body::Reqwest(r) => r.chunk().await.map(|c| c.map(|b| b.to_vec())).map_err(|e| describe_reqwest(&e)),
            Body::Raw(rd, framing) => match framing {
                RawFraming::Length(0) => Ok(None),
                RawFraming::Length(left) => {
                    let mut buf = vec![0u8; (*left).min(64 * 1024)];
                    let n = rd.read(&mut buf).await.map_err(|e| e.to_string())?;
                    if n == 0 {
                        return Err(format!("connection closed with {left} body bytes still due"));
                    }
                    *left -= n;
                    buf.truncate(n);
                    Ok(Some(buf))
                }
                RawFraming::UntilClose => {
                    let mut buf = vec![0u8; 64 * 1024];
                    let n = rd.read(&mut buf).await.map_err(|e| e.to_string())?;
                    buf.truncate(n);
                    Ok(if n == 0 { None } else { Some(buf) })
                }
                RawFraming::Chunked => {
                    let line = read_line_capped(rd).await?;
                    let size_text = line.split(';').next().unwrap_or("").trim();
                    let size = usize::from_str_radix(size_text, 16).map_err(|_| format!("bad chunk size line {line:?}"))?;
                    if size == 0 {
                        return Ok(None);
                    }
                    let mut buf = vec![0u8; size];
                    rd.read_exact(&mut buf).await.map_err(|e| e.to_string())?;
                    read_line_capped(rd).await?;
                    Ok(Some(buf))
                }
            },
        }
    }
}

/// One CRLF-terminated line (without the line end), at most 8 KiB.
async fn read_line_capped(rd: &mut tokio::io::BufReader<tokio::net::TcpStream>) -> Result<String, String> {
    let mut line = Vec::new();
    loop {
        let mut b = [0u8; 1];
        let n = rd.read(&mut b).await.map_err(|e| e.to_string())?;
        if n == 0 {
            return Err("connection closed in the middle of the response head".into());
        }
        if b[0] == b'\n' {
            break;
        }
        line.push(b[0]);
        if line.len() > 8192 {
            return Err("a response head line is longer than 8 KiB".into());
        }
    }
    if line.last() == Some(&b'\r') {
        line.pop();
    }
    Ok(String::from_utf8_lossy(&line).into_owned())
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
