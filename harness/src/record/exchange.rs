//! One exchange as it went over the wire (or a note in a transcript), and
//! the run's clock its times are read from.

use super::{Frame, Transport, TransportError, clip};
use crate::transport::Incoming;
use crate::wire;
use serde::Serialize;
use serde_json::Value;

/// Milliseconds since the run's clock started (the first call starts it;
/// the run calls it first thing).
pub fn run_clock_ms() -> u64 {
    static START: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
    START.get_or_init(std::time::Instant::now).elapsed().as_millis() as u64
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// One request/response (or raw HTTP call) as it went over the wire, or a
/// note (label and text only) that a case adds to its transcript.
#[derive(Debug, Clone, Serialize, Default)]
pub struct Exchange {
    pub label: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub transport: Option<Transport>,
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
    /// When the request went out, in milliseconds since the run began
    /// (`run_clock`): which of a case's requests overlapped, for the
    /// benchmark's floor.
    #[serde(skip_serializing_if = "is_zero")]
    pub sent_at_ms: u64,
    #[serde(skip)]
    pub response: Option<Value>,
    /// The frame `response` was moved out of (its text stays there).
    #[serde(skip)]
    pub response_frame: Option<usize>,
    #[serde(skip)]
    pub request_id: Option<Value>,
    /// Lines a fresh stdio process got before this one (handshake).
    #[serde(skip)]
    pub preamble: Vec<String>,
    /// Sent on a connection or process of its own (reproducers start a
    /// new one for it).
    #[serde(skip)]
    pub fresh: bool,
    /// HTTP, where it differs from the target's: the URL a reproducer's
    /// curl line uses, and its Authorization value (None: the target's
    /// own; Some(""): none was sent), as shell words that make or read the
    /// token again, never the token.
    #[serde(skip)]
    pub shell_url: Option<String>,
    #[serde(skip)]
    pub shell_authorization: Option<String>,
    /// Sent at the same time as the exchanges next to it that say so too
    /// (a reproducer sends them together).
    #[serde(skip)]
    pub together: bool,
    /// A stream the run read for `ms`, not to its end (a reproducer reads
    /// it about as long).
    #[serde(skip)]
    pub stream: bool,
    /// A stream read alongside other work (a session's GET stream): how
    /// many of its frames had come before that work began (messages held
    /// from before, which are not the work's).
    #[serde(skip)]
    pub preceded: usize,
}

impl Exchange {
    /// A note in a transcript: a label and a text, nothing sent.
    pub fn note(label: impl Into<String>, note: impl Into<String>) -> Exchange {
        Exchange { label: label.into(), note: Some(note.into()), ..Default::default() }
    }

    /// Take over what came back.
    pub fn fill_from(&mut self, inc: Incoming) {
        self.status = inc.status;
        self.headers = inc.headers;
        self.body = inc.body;
        self.frames = inc.frames;
        self.response = inc.response;
        self.response_frame = inc.response_frame;
        self.error = inc.error;
        self.ms = inc.ms;
        self.sent_at_ms = run_clock_ms().saturating_sub(inc.ms).max(1);
        self.stderr = inc.stderr;
        if !inc.resent.is_empty() {
            let n = inc.resent.len();
            let note = format!(
                "sent {} times: the connection broke before an answer came ({}); the request changes nothing on the server, so mcpcert sent it again after a pause (a small server resets connections that arrive faster than it accepts them)",
                n + 1,
                inc.resent[0]
            );
            self.note = Some(match self.note.take() {
                Some(old) => format!("{old}; {note}"),
                None => note,
            });
        }
    }

    /// The shape of an answer, which must not depend on earlier requests: the
    /// HTTP status, error code or result type and members, and for a list how
    /// many items the page holds (values such as times may differ; shapes may
    /// not).
    pub fn answer_shape(&self) -> String {
        let ex = self;
        let status = ex.status.map(|s| format!("HTTP {s}, ")).unwrap_or_default();
        if let Some(e) = &ex.error {
            return format!("{status}no answer ({e})");
        }
        if let Some(code) = ex.error_code() {
            return format!("{status}JSON-RPC error {code}");
        }
        let Some(r) = ex.result() else { return format!("{status}{}", ex.summary()) };
        let mut keys: Vec<&str> = r.as_object().map(|o| o.keys().map(String::as_str).collect()).unwrap_or_default();
        keys.sort();
        let mut s = format!(
            "{status}result {} with {}",
            r.get("resultType").map(crate::wire::brief).unwrap_or_else(|| "without resultType".into()),
            keys.join(", ")
        );
        for list in ["tools", "prompts", "resources", "resourceTemplates"] {
            // How many, not which: which items a page holds is another rule's
            // (tools/list-same-on-fresh-connection), and a list whose order
            // varies (tools/list-deterministic-order) puts others on a page.
            if let Some(items) = r.get(list).and_then(|l| l.as_array()) {
                s.push_str(&format!("; {} {list}", items.len()));
            }
        }
        s
    }

    /// Whether the server refused the request as busy: HTTP 429 or 503
    /// without a result, whatever the body (nothing, plain text, or a
    /// JSON-RPC error): the walker asks again, the scheduler reruns the case
    /// alone, the load check counts it as shed, not lost.
    pub fn refused_as_busy(&self) -> bool {
        matches!(self.status, Some(429) | Some(503)) && self.result().is_none()
    }

    /// The exchange as reports keep it once it has been judged: frames and
    /// body clipped to 64 KiB, parsed values dropped.
    pub fn lite(mut self) -> Exchange {
        const KEEP: usize = 64 * 1024;
        self.frames = self.frames.iter().map(|f| f.lite(KEEP)).collect();
        self.response = None;
        self.response_frame = None;
        if let Some(b) = &self.body
            && b.len() > KEEP
        {
            self.body = Some(clip(b, KEEP));
        }
        self
    }

    /// What was sent, without anything that came back: what a replay
    /// needs. Built field by field, so nothing large is copied on the way.
    pub fn request_only(&self) -> Exchange {
        Exchange {
            label: self.label.clone(),
            transport: self.transport,
            http_method: self.http_method.clone(),
            rpc_method: self.rpc_method.clone(),
            sent_headers: self.sent_headers.clone(),
            sent: self.sent.clone(),
            status: self.status,
            error: self.error.clone(),
            note: self.note.clone(),
            ms: self.ms,
            sent_at_ms: self.sent_at_ms,
            request_id: self.request_id.clone(),
            preamble: self.preamble.clone(),
            fresh: self.fresh,
            ..Default::default()
        }
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }

    /// The JSON-RPC result, if the reply was one.
    pub fn result(&self) -> Option<&Value> {
        self.response.as_ref().and_then(|r| r.get("result"))
    }

    /// The JSON-RPC error code, if the reply was an error.
    pub fn error_code(&self) -> Option<i64> {
        self.response.as_ref().and_then(|r| r.pointer("/error/code")).and_then(|c| c.as_i64())
    }

    /// What came back, in one line, for failure messages.
    pub fn summary(&self) -> String {
        let mut parts: Vec<String> = Vec::new();
        if let Some(st) = self.status {
            parts.push(format!("HTTP {st}"));
        }
        if let Some(r) = &self.response {
            match r.get("error") {
                Some(e) => parts.push(format!("JSON-RPC error {}", wire::brief(e))),
                None => parts.push(format!("result {}", wire::brief(r.get("result").unwrap_or(&Value::Null)))),
            }
        } else if let Some(e) = &self.error {
            parts.push(e.to_string());
        } else {
            match &self.body {
                Some(b) if !b.is_empty() => parts.push(format!("no JSON-RPC response; body: {}", clip(b, 200))),
                _ => parts.push("no JSON-RPC response".into()),
            }
        }
        parts.join(", ")
    }
}
