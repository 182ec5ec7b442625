//! The HTTP transport of 2024-11-05, HTTP with SSE: a GET opens a stream
//! whose `endpoint` event names the URL the client POSTs its messages to;
//! everything the server sends, answers included, comes on that stream.
//! The stream is opened on first use and read by a task of its own; every
//! event it brings is kept (its type and data, clipped) for the
//! transport's own cases.

use super::http::HttpTarget;
use super::sse;
use super::{Deadline, Frame, TransportError, ms_since};
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use serde_json::Value;
use std::time::{Duration, Instant};
use tokio::sync::mpsc;

/// Events kept per connection (the rest are counted).
const KEEP_EVENTS: usize = 200;

/// One event the stream brought.
#[derive(Debug, Clone)]
pub struct SeenEvent {
    /// Its type: the `event:` field, or "message" when it has none.
    pub event: String,
    /// Its data, clipped.
    pub data: String,
    /// Whether the whole data is one JSON value.
    pub json: bool,
    pub at_ms: u64,
}

/// What the open stream tells.
#[derive(Debug, Clone, Default)]
pub struct StreamFacts {
    pub status: Option<u16>,
    pub content_type: Option<String>,
    /// The `endpoint` event's data as sent.
    pub endpoint_data: Option<String>,
    /// The URL POSTs go to (the data resolved against the stream's URL).
    pub endpoint: Option<String>,
    pub events: Vec<SeenEvent>,
    pub more_events: usize,
}

enum Item {
    Event(sse::Event, u64),
    End(Option<String>),
}

struct Open {
    endpoint: String,
    rx: mpsc::UnboundedReceiver<Item>,
    reader: tokio::task::JoinHandle<()>,
    /// Frames that came before they were waited for.
    early: Vec<Frame>,
    ended: Option<String>,
}

impl Drop for Open {
    fn drop(&mut self) {
        self.reader.abort();
    }
}

pub(super) struct SseClient {
    pub target: HttpTarget,
    open: Option<Open>,
    pub facts: StreamFacts,
    start: Instant,
}

/// The reply to one message: the POST's status and what the stream brought.
pub(super) struct SseReply {
    pub status: Option<u16>,
    pub headers: Vec<(String, String)>,
    pub body: Option<String>,
    pub frames: Vec<Frame>,
    pub response_index: Option<usize>,
    pub error: Option<TransportError>,
    pub ms: u64,
}

impl SseClient {
    pub fn new(target: HttpTarget) -> SseClient {
        SseClient { target, open: None, facts: StreamFacts::default(), start: Instant::now() }
    }

    fn headers(&self, extra: &[(String, String)]) -> Result<HeaderMap, String> {
        let mut map = HeaderMap::new();
        for (k, v) in self.target.spec.headers.iter().chain(extra.iter()) {
            let name = HeaderName::from_bytes(k.as_bytes()).map_err(|e| format!("header name `{k}` cannot be sent: {e}"))?;
            let val = HeaderValue::from_bytes(v.as_bytes()).map_err(|e| format!("header `{k}` value cannot be sent: {e}"))?;
            map.append(name, val);
        }
        Ok(map)
    }

    /// Open the stream and wait for its `endpoint` event.
    async fn connect(&mut self) -> Result<(), TransportError> {
        let client = self.target.client().map_err(TransportError::Io)?;
        let headers = self.headers(&[("Accept".into(), "text/event-stream".into())]).map_err(TransportError::Io)?;
        let wait = self.target.limits.request;
        let resp = match tokio::time::timeout(wait, client.get(&self.target.spec.url).headers(headers).send()).await {
            Err(_) => {
                return Err(TransportError::Timeout(format!("the SSE stream (GET) got no HTTP response within {} ms", wait.as_millis())));
            }
            Ok(Err(e)) => return Err(TransportError::Io(format!("the SSE stream (GET) could not be opened: {e}"))),
            Ok(Ok(r)) => r,
        };
        let status = resp.status().as_u16();
        self.facts.status = Some(status);
        self.facts.content_type = resp.headers().get("content-type").map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned());
        let is_sse = self.facts.content_type.as_deref().is_some_and(|c| c.to_ascii_lowercase().starts_with("text/event-stream"));
        if !(200..300).contains(&status) || !is_sse {
            return Err(TransportError::Io(format!(
                "GET {} is not an SSE stream (HTTP {status}, Content-Type {})",
                super::redact_url(&self.target.spec.url),
                self.facts.content_type.as_deref().unwrap_or("none")
            )));
        }
        let (tx, mut rx) = mpsc::unbounded_channel();
        let start = self.start;
        let max = self.target.limits.max_message;
        let reader = tokio::spawn(async move {
            let mut resp = resp;
            let mut parser = sse::Parser::new();
            loop {
                match resp.chunk().await {
                    Ok(Some(bytes)) => {
                        for ev in parser.feed(&bytes) {
                            let _ = tx.send(Item::Event(ev, ms_since(start)));
                        }
                        if parser.pending() > max {
                            let _ = tx.send(Item::End(Some(format!("an SSE line grew past {max} bytes without ending"))));
                            return;
                        }
                    }
                    Ok(None) => {
                        for ev in parser.finish() {
                            let _ = tx.send(Item::Event(ev, ms_since(start)));
                        }
                        let _ = tx.send(Item::End(None));
                        return;
                    }
                    Err(e) => {
                        let _ = tx.send(Item::End(Some(format!("the SSE stream broke: {e}"))));
                        return;
                    }
                }
            }
        });
        // The endpoint event; anything before it is kept.
        let until = tokio::time::Instant::now() + wait;
        let mut early = Vec::new();
        loop {
            match tokio::time::timeout_at(until, rx.recv()).await {
                Err(_) => {
                    return Err(TransportError::Timeout(format!("the SSE stream sent no `endpoint` event within {} ms", wait.as_millis())));
                }
                Ok(None) | Ok(Some(Item::End(_))) => {
                    return Err(TransportError::Closed("the SSE stream ended before its `endpoint` event".into()));
                }
                Ok(Some(Item::Event(ev, at))) => {
                    let kind = self.see(&ev, at);
                    if kind == "endpoint" {
                        let data = ev.data.trim().to_string();
                        let url = reqwest::Url::parse(&self.target.spec.url).and_then(|u| u.join(&data)).map_err(|e| {
                            TransportError::Io(format!(
                                "the `endpoint` event's data {:?} is not a URL mcpcert can POST to: {e}",
                                super::clip(&data, 200)
                            ))
                        })?;
                        self.facts.endpoint_data = Some(ev.data.clone());
                        self.facts.endpoint = Some(url.to_string());
                        self.open = Some(Open { endpoint: url.to_string(), rx, reader, early, ended: None });
                        return Ok(());
                    }
                    early.push(Frame::from_bytes(ev.data.as_bytes(), at));
                }
            }
        }
    }

    /// Keep an event; its type.
    fn see(&mut self, ev: &sse::Event, at_ms: u64) -> String {
        let kind = ev.event.clone().filter(|e| !e.is_empty()).unwrap_or_else(|| "message".into());
        if self.facts.events.len() < KEEP_EVENTS {
            let json = serde_json::from_str::<serde::de::IgnoredAny>(&ev.data).is_ok();
            self.facts.events.push(SeenEvent { event: kind.clone(), data: super::clip(&ev.data, 300), json, at_ms });
        } else {
            self.facts.more_events += 1;
        }
        kind
    }

    /// POST one message to the endpoint and read the stream until the
    /// response to `expect_id` (None: for a short grace, or not at all
    /// when `linger` is false). Requests the server sends meanwhile are
    /// answered with `answer`, when given.
    pub async fn exchange(
        &mut self,
        headers: &[(String, String)],
        body: Option<&str>,
        expect_id: Option<&Value>,
        progress: Option<&Value>,
        answer: Option<super::reply::Answer<'_>>,
        linger: bool,
    ) -> SseReply {
        let start = Instant::now();
        let mut reply =
            SseReply { status: None, headers: Vec::new(), body: None, frames: Vec::new(), response_index: None, error: None, ms: 0 };
        if self.open.is_none()
            && let Err(e) = self.connect().await
        {
            reply.error = Some(e);
            reply.ms = ms_since(start);
            return reply;
        }
        if let Some(b) = body {
            match self.post(headers, b.to_string()).await {
                Ok((status, hs, text)) => {
                    reply.status = Some(status);
                    reply.headers = hs;
                    reply.body = text.filter(|t| !t.trim().is_empty());
                    if !(200..300).contains(&status) {
                        reply.ms = ms_since(start);
                        return reply;
                    }
                }
                Err(e) => {
                    reply.error = Some(e);
                    reply.ms = ms_since(start);
                    return reply;
                }
            }
        }
        let limits = self.target.limits.clone();
        let window = match expect_id {
            Some(_) => limits.request,
            None if linger => super::GRACE,
            None => Duration::ZERO,
        };
        let mut deadline = Deadline::new(window, limits.ceiling.max(window), progress);
        let mut early = self.open.as_mut().map(|o| std::mem::take(&mut o.early)).unwrap_or_default();
        loop {
            // What came before it was waited for is looked at first.
            let next = if !early.is_empty() {
                Some(early.remove(0))
            } else {
                let Some(open) = self.open.as_mut() else { break };
                if let Some(why) = &open.ended {
                    if expect_id.is_some() {
                        reply.error = Some(TransportError::Closed(why.clone()));
                    }
                    break;
                }
                match tokio::time::timeout_at(deadline.at, open.rx.recv()).await {
                    Err(_) => {
                        if expect_id.is_some() {
                            reply.error = Some(TransportError::Timeout(format!("no response on the SSE stream {}", deadline.describe())));
                        }
                        break;
                    }
                    Ok(None) => {
                        open.ended = Some("the SSE stream ended".into());
                        continue;
                    }
                    Ok(Some(Item::End(why))) => {
                        open.ended = Some(why.unwrap_or_else(|| "the SSE stream ended".into()));
                        continue;
                    }
                    Ok(Some(Item::Event(ev, at))) => {
                        self.see(&ev, at);
                        Some(Frame::from_bytes(ev.data.as_bytes(), at))
                    }
                }
            };
            let Some(f) = next else { break };
            deadline.saw(&f);
            if let (Some(a), true, Some(v)) = (answer, f.is_server_request(), f.value.as_ref()) {
                let _ = self.post(headers, a(v).to_string()).await;
            }
            let answered = reply.response_index.is_none() && expect_id.is_some_and(|id| f.answers(id));
            reply.frames.push(f);
            if answered {
                reply.response_index = Some(reply.frames.len() - 1);
                break;
            }
        }
        reply.ms = ms_since(start);
        reply
    }

    async fn post(
        &self,
        headers: &[(String, String)],
        body: String,
    ) -> Result<(u16, Vec<(String, String)>, Option<String>), TransportError> {
        let Some(endpoint) = self.open.as_ref().map(|o| o.endpoint.clone()) else {
            return Err(TransportError::Closed("the SSE stream is not open".into()));
        };
        let client = self.target.client().map_err(TransportError::Io)?;
        let mut map = self.headers(headers).map_err(TransportError::Io)?;
        if !map.contains_key("content-type") {
            map.insert("content-type", HeaderValue::from_static("application/json"));
        }
        // Each POST on a connection of its own: a pooled connection the
        // server closed while idle (uvicorn keeps one 5 s) would fail the
        // next POST on it, a failure of neither the server nor the case.
        map.insert("connection", HeaderValue::from_static("close"));
        let wait = self.target.limits.request;
        let resp = match tokio::time::timeout(wait, client.post(&endpoint).headers(map).body(body).send()).await {
            Err(_) => {
                return Err(TransportError::Timeout(format!(
                    "the POST to the endpoint got no HTTP response within {} ms",
                    wait.as_millis()
                )));
            }
            Ok(Err(e)) => return Err(TransportError::Io(format!("the POST to the endpoint failed: {e}"))),
            Ok(Ok(r)) => r,
        };
        let status = resp.status().as_u16();
        let hs = resp.headers().iter().map(|(k, v)| (k.as_str().to_string(), String::from_utf8_lossy(v.as_bytes()).into_owned())).collect();
        let text = tokio::time::timeout(wait, resp.text()).await.ok().and_then(|r| r.ok()).map(|t| super::clip(&t, 64 * 1024));
        Ok((status, hs, text))
    }
}
