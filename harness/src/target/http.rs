//! Streamable HTTP targets: POST JSON-RPC bodies with any header set, read
//! `application/json` or `text/event-stream` replies, record everything.

use super::sse;
use super::{Frame, Limits, TransportError, ms_since};
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use serde::Serialize;
use serde_json::Value;
use std::time::{Duration, Instant};

#[derive(Debug, Clone)]
pub struct HttpSpec {
    pub url: String,
    /// Extra headers sent on every request (e.g. Authorization).
    pub headers: Vec<(String, String)>,
    /// Lower-case names whose values never appear in reports.
    pub secret_headers: Vec<String>,
}

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
        let start = Instant::now();
        let mut reply = HttpReply::default();
        let client = if fresh {
            match build_client(true) {
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
        let deadline = tokio::time::Instant::now() + self.limits.request;
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
        reply.content_type = reply.header("content-type").map(|s| s.to_string());
        let is_sse = reply.content_type.as_deref().is_some_and(|c| c.to_ascii_lowercase().starts_with("text/event-stream"));
        let mut resp = resp;
        if is_sse {
            let mut parser = sse::Parser::new();
            loop {
                match tokio::time::timeout_at(deadline, resp.chunk()).await {
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
                        reply.error = Some(TransportError::Io(format!("SSE stream broke: {}", describe_reqwest(&e))));
                        break;
                    }
                    Ok(Ok(None)) => {
                        for ev in parser.finish() {
                            self.push_event(&mut reply, ev, expect_id, start);
                        }
                        if reply.response_index.is_none() && expect_id.is_some() {
                            reply.error = Some(TransportError::Closed("SSE stream ended without the response".into()));
                        }
                        break;
                    }
                    Ok(Ok(Some(bytes))) => {
                        for ev in parser.feed(&bytes) {
                            self.push_event(&mut reply, ev, expect_id, start);
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
                        reply.error = Some(TransportError::Timeout(format!("HTTP body not complete within {} ms", self.limits.request.as_millis())));
                        break;
                    }
                    Ok(Err(e)) => {
                        reply.error = Some(TransportError::Io(format!("reading the body failed: {}", describe_reqwest(&e))));
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
        reply
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
