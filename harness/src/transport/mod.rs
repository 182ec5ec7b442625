//! Reaching a server: a stdio process, or a Streamable HTTP endpoint (over
//! reqwest, or over an own HTTP/1.1 sender when header names must keep
//! their exact letter case). The layers above use one interface,
//! [`Connection`], and never the concrete types, which stay private here;
//! the one exception is the fuzzer (the `fuzz` module), which writes bytes no
//! message could hold: it drives a [`StdioTarget`] itself, and sends whole
//! HTTP requests with [`send_raw_http`].
//!
//! Everything here records what went over the wire byte for byte (within size
//! caps) so that a check can quote it and a report can reproduce it.

mod command;
mod conn;
mod exact;
mod http;
mod legacy_sse;
mod pace;
mod process;
mod raw;
mod reply;
mod sse;
mod stdio;
mod target;

pub use command::{shell_quote, split_command};
pub use conn::{Connection, Incoming, Outgoing};
pub use http::{HttpSpec, SseCell, one_off_client};
pub use legacy_sse::{SeenEvent, StreamFacts};
pub use pace::{Gate, repeatable_method};
pub use process::kill_all_groups;
pub use raw::{RawReply, http_parts, send_raw_http};
pub use reply::Answer;
pub use stdio::{GRACE, StdioSpec};
pub use stdio::{StdioTarget, StdoutAudit};
pub use target::{TargetSpec, Transport, redact_url};

use serde::Serialize;
use serde_json::Value;
use std::time::Duration;

/// Hard limits that keep a hostile server from exhausting the harness.
#[derive(Debug, Clone)]
pub struct Limits {
    pub startup: Duration,
    pub request: Duration,
    /// How far progress notifications for a request may push its deadline
    /// out (each one restarts the request timeout, up to this, from the
    /// request's start).
    pub ceiling: Duration,
    /// Largest single stdout line or HTTP body kept, in bytes.
    pub max_message: usize,
    /// stdio: the longest a new process of the server took to answer its
    /// first request so far in the run (ms), shared by every clone: the
    /// start-up allowance grows with it (`Limits::startup_allowance`).
    pub seen_start_ms: std::sync::Arc<std::sync::atomic::AtomicU64>,
    /// stdio: how many server processes the run started (shared).
    pub processes_started: std::sync::Arc<std::sync::atomic::AtomicU64>,
    /// stdio: how many of them answered a first request (shared).
    pub processes_answered: std::sync::Arc<std::sync::atomic::AtomicU64>,
    /// stdio: the time from start to first answer, summed over them (ms).
    pub starts_total_ms: std::sync::Arc<std::sync::atomic::AtomicU64>,
}

/// How many times the longest start seen a new process is allowed.
pub const START_FACTOR: u64 = 10;

impl Default for Limits {
    fn default() -> Self {
        Limits {
            startup: Duration::from_secs(15),
            request: Duration::from_secs(10),
            ceiling: Duration::from_secs(60),
            max_message: 16 * 1024 * 1024,
            seen_start_ms: Default::default(),
            processes_started: Default::default(),
            processes_answered: Default::default(),
            starts_total_ms: Default::default(),
        }
    }
}

impl Limits {
    /// How long a new process may take to answer its first request: the
    /// configured start-up timeout, or `START_FACTOR` times the longest
    /// start the run has seen, whichever is longer (a loaded machine makes
    /// every start slower, not just one).
    pub fn startup_allowance(&self) -> Duration {
        let seen = self.seen_start_ms.load(std::sync::atomic::Ordering::Relaxed);
        self.startup.max(Duration::from_millis(seen.saturating_mul(START_FACTOR)))
    }

    /// A new process answered its first request after `ms`.
    pub fn saw_start(&self, ms: u64) {
        self.seen_start_ms.fetch_max(ms, std::sync::atomic::Ordering::Relaxed);
        self.processes_answered.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        self.starts_total_ms.fetch_add(ms, std::sync::atomic::Ordering::Relaxed);
    }

    /// How the start-up allowance was reached, for a timeout message.
    pub fn startup_basis(&self) -> String {
        let seen = self.seen_start_ms.load(std::sync::atomic::Ordering::Relaxed);
        let allowance = self.startup_allowance().as_millis();
        format!(
            "the start-up allowance of {allowance} ms is the larger of the start-up timeout ({} ms; --startup-timeout-ms) and {START_FACTOR} times the longest start this run saw ({seen} ms). A loaded machine makes starts slower: rerun with a larger --startup-timeout-ms or fewer cases at once (-j 1)",
            self.startup.as_millis()
        )
    }
}

/// One message (or one broken line) the server sent.
#[derive(Debug, Clone, Serialize)]
pub struct Frame {
    /// The text as received (lossy UTF-8 if the bytes were not UTF-8).
    pub raw: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub problem: Option<String>,
    #[serde(skip)]
    pub value: Option<Value>,
    pub at_ms: u64,
}

impl Frame {
    pub fn from_bytes(bytes: &[u8], at_ms: u64) -> Frame {
        let (raw, utf8_ok) = match std::str::from_utf8(bytes) {
            Ok(s) => (s.to_string(), true),
            Err(_) => (String::from_utf8_lossy(bytes).into_owned(), false),
        };
        let mut problem = None;
        let mut value = None;
        if !utf8_ok {
            problem = Some("line is not valid UTF-8".to_string());
        } else {
            match serde_json::from_str::<Value>(raw.trim_end_matches('\r')) {
                Ok(v) => {
                    if let Some(p) = jsonrpc_shape_problem(&v) {
                        problem = Some(p);
                    }
                    value = Some(v);
                }
                Err(e) => problem = Some(format!("not JSON: {e}")),
            }
        }
        Frame { raw, problem, value, at_ms }
    }

    /// The frame as reports keep it: the text clipped to `max` bytes and
    /// no parsed value (which may take many times the text's memory).
    pub fn lite(&self, max: usize) -> Frame {
        let raw = if self.raw.len() > max {
            let mut end = max;
            while !self.raw.is_char_boundary(end) {
                end -= 1;
            }
            format!("{}… [{} bytes in all; clipped in reports]", &self.raw[..end], self.raw.len())
        } else {
            self.raw.clone()
        };
        Frame { raw, problem: self.problem.clone(), value: None, at_ms: self.at_ms }
    }

    /// Let go of the parsed value of a well-formed message, keeping its
    /// text: a large line read by a background reader waits in a queue
    /// unparsed, so that lists read on several connections at once are not
    /// all in memory at once. `parsed` restores it.
    pub fn defer_parse(&mut self) {
        if self.problem.is_none() {
            self.value = None;
        }
    }

    /// The frame with its value again if `defer_parse` dropped it (a frame
    /// that has neither a value nor a problem); any other frame as it is.
    pub fn parsed(self) -> Frame {
        if self.value.is_some() || self.problem.is_some() {
            return self;
        }
        Frame::from_bytes(self.raw.as_bytes(), self.at_ms)
    }

    pub fn problem(msg: impl Into<String>, raw: String, at_ms: u64) -> Frame {
        Frame { raw, problem: Some(msg.into()), value: None, at_ms }
    }

    /// A JSON-RPC request sent by the server (it has `method` and `id`).
    pub fn is_server_request(&self) -> bool {
        matches!(&self.value, Some(Value::Object(m)) if m.contains_key("method") && m.contains_key("id"))
    }
    pub fn is_response(&self) -> bool {
        matches!(&self.value, Some(Value::Object(m)) if !m.contains_key("method") && (m.contains_key("result") || m.contains_key("error")))
    }
    pub fn is_notification(&self) -> bool {
        matches!(&self.value, Some(Value::Object(m)) if m.contains_key("method") && !m.contains_key("id"))
    }
    /// Whether this frame is the answer to the request with `id`: a
    /// response carrying that id, or an error response whose id is null or
    /// missing (JSON-RPC's form for "the id could not be read"; checks
    /// judge whether that was justified).
    pub fn answers(&self, id: &Value) -> bool {
        if !self.is_response() {
            return false;
        }
        match self.id() {
            Some(v) if v == id => true,
            None | Some(Value::Null) => self.value.as_ref().is_some_and(|v| v.get("error").is_some()),
            _ => false,
        }
    }

    pub fn id(&self) -> Option<&Value> {
        self.value.as_ref().and_then(|v| v.get("id"))
    }

    /// Whether this is a `notifications/progress` for `token`.
    pub fn is_progress_for(&self, token: &Value) -> bool {
        self.value.as_ref().is_some_and(|v| {
            v.get("method").and_then(|m| m.as_str()) == Some("notifications/progress") && v.pointer("/params/progressToken") == Some(token)
        })
    }
}

/// Whether a parsed JSON value is one JSON-RPC 2.0 message at all (not its
/// MCP-level schema, which the wire checks judge).
pub fn jsonrpc_shape_problem(v: &Value) -> Option<String> {
    match v {
        Value::Array(_) => Some("a JSON array (batch) where one JSON-RPC message was expected".into()),
        Value::Object(m) => {
            if m.get("jsonrpc") != Some(&Value::String("2.0".into())) {
                return Some("not a JSON-RPC 2.0 message: \"jsonrpc\" is not \"2.0\"".into());
            }
            let has_method = m.contains_key("method");
            let has_result = m.contains_key("result") || m.contains_key("error");
            if !has_method && !has_result {
                return Some("JSON-RPC message with neither \"method\" nor \"result\"/\"error\"".into());
            }
            None
        }
        _ => Some("a JSON value that is not an object where one JSON-RPC message was expected".into()),
    }
}

/// A deadline that progress notifications push out: each restarts the
/// request timeout, never past the ceiling (counted from the start).
#[derive(Debug, Clone, Copy)]
pub struct Deadline<'a> {
    start: tokio::time::Instant,
    timeout: Duration,
    ceiling: Duration,
    pub at: tokio::time::Instant,
    token: Option<&'a Value>,
    /// Whether progress moved it.
    pub moved: bool,
}

impl<'a> Deadline<'a> {
    pub fn new(timeout: Duration, ceiling: Duration, token: Option<&'a Value>) -> Deadline<'a> {
        let start = tokio::time::Instant::now();
        Deadline { start, timeout, ceiling: ceiling.max(timeout), at: start + timeout, token, moved: false }
    }

    /// Look at a frame that arrived: progress for this request moves the deadline.
    pub fn saw(&mut self, f: &Frame) {
        if let Some(t) = self.token
            && f.is_progress_for(t)
        {
            self.at = (tokio::time::Instant::now() + self.timeout).min(self.start + self.ceiling);
            self.moved = true;
        }
    }

    /// How the wait is described in a timeout message.
    pub fn describe(&self) -> String {
        if self.moved {
            format!("{} ms after its last progress notification (ceiling {} ms)", self.timeout.as_millis(), self.ceiling.as_millis())
        } else {
            format!("{} ms", self.timeout.as_millis())
        }
    }
}

/// Why an exchange produced no usable answer.
#[derive(Debug, Clone, Serialize, PartialEq, thiserror::Error)]
#[serde(tag = "kind", content = "detail", rename_all = "snake_case")]
pub enum TransportError {
    #[error("timeout: {0}")]
    Timeout(String),
    #[error("connection closed: {0}")]
    Closed(String),
    #[error("I/O error: {0}")]
    Io(String),
    #[error("message too large: {0}")]
    TooLarge(String),
}

/// Why a connection could not be opened or a process not started.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{0}")]
pub struct OpenError(pub String);

/// At most `n` bytes of `s` (cut at a character boundary), with `…` when cut.
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

/// Bytes to milliseconds since `start`.
pub fn ms_since(start: std::time::Instant) -> u64 {
    start.elapsed().as_millis() as u64
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn frame(v: Value) -> Frame {
        Frame::from_bytes(v.to_string().as_bytes(), 0)
    }

    #[test]
    fn a_deferred_frame_is_parsed_again_as_it_was() {
        let whole = frame(json!({"jsonrpc": "2.0", "id": 7, "result": {"tools": [{"name": "a"}]}}));
        let mut f = whole.clone();
        f.defer_parse();
        assert!(f.value.is_none() && !f.answers(&json!(7)));
        let back = f.parsed();
        assert_eq!(back.value, whole.value);
        assert!(back.answers(&json!(7)));
        // A frame with a problem keeps what it has: its value is never
        // dropped, and nothing is parsed again.
        let mut batch = frame(json!([{"jsonrpc": "2.0", "id": 1, "result": {}}]));
        batch.defer_parse();
        assert!(batch.value.is_some() && batch.problem.is_some());
        let broken = Frame::problem("not JSON", "{".into(), 0).parsed();
        assert!(broken.value.is_none() && broken.problem.as_deref() == Some("not JSON"));
    }

    #[test]
    fn what_counts_as_the_answer() {
        let id = json!(7);
        assert!(frame(json!({"jsonrpc": "2.0", "id": 7, "result": {}})).answers(&id));
        assert!(!frame(json!({"jsonrpc": "2.0", "id": 8, "result": {}})).answers(&id));
        assert!(!frame(json!({"jsonrpc": "2.0", "id": "7", "result": {}})).answers(&id), "the id's JSON type counts");
        // An error the server could not tie to a request is taken (and judged by checks)…
        assert!(frame(json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32600, "message": "x"}})).answers(&id));
        assert!(frame(json!({"jsonrpc": "2.0", "error": {"code": -32600, "message": "x"}})).answers(&id));
        // …but a result without an id is not an answer to anything.
        assert!(!frame(json!({"jsonrpc": "2.0", "id": null, "result": {}})).answers(&id));
        assert!(!frame(json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": {}})).answers(&id));
    }
}
