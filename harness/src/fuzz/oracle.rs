//! The oracle: what each answer breaks. A rule is either one the spec states
//! (MUST: every request is answered, with its own id; nothing answers a
//! notification; every frame is JSON-RPC) or a convention (the error code
//! JSON-RPC names, a 4xx rather than a 5xx, the server still answering as
//! before), judged at POLICY level with the reason.

use super::inputs::{Due, Input, Want};
use super::send::Answer;
use crate::transport::Frame;
use serde_json::Value;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Rule {
    /// A request got no response (or the server died on it).
    Unanswered,
    /// The server exited or stopped taking connections.
    Crashed,
    /// An error response without the request's id, or an answer with
    /// another request's id.
    WrongId,
    /// A response to a notification.
    RepliedToNotification,
    /// A line or body that is not JSON-RPC.
    InvalidFrame,
    /// Not the error code JSON-RPC names for the input.
    ErrorCode,
    /// Plain success for input the rules call invalid.
    AcceptedInvalid,
    /// HTTP 5xx for the client's mistake.
    ServerError,
    /// Broken HTTP served as if it were fine, or a connection closed
    /// without a reply.
    NotRefused,
    /// A response to a response the server never asked for.
    RepliedToResponse,
    /// The liveness probe answered otherwise than before the class.
    ChangedAnswers,
}

impl Rule {
    /// Whether the spec states the rule (the class's main case judges it);
    /// else it is a convention (the class's conventions case).
    pub fn stated(self) -> bool {
        matches!(self, Rule::Unanswered | Rule::Crashed | Rule::WrongId | Rule::RepliedToNotification | Rule::InvalidFrame)
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Rule::Unanswered => "unanswered",
            Rule::Crashed => "crashed",
            Rule::WrongId => "wrong-id",
            Rule::RepliedToNotification => "replied-to-notification",
            Rule::InvalidFrame => "invalid-frame",
            Rule::ErrorCode => "error-code",
            Rule::AcceptedInvalid => "accepted-invalid",
            Rule::ServerError => "http-5xx",
            Rule::NotRefused => "not-refused",
            Rule::RepliedToResponse => "replied-to-response",
            Rule::ChangedAnswers => "changed-answers",
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Finding {
    pub rule: Rule,
    pub detail: String,
}

fn f(rule: Rule, detail: impl Into<String>) -> Finding {
    Finding { rule, detail: detail.into() }
}

fn brief(fr: &Frame) -> String {
    crate::record::clip(&fr.raw, 160)
}

/// What `a`, the answer to `input`, breaks.
pub fn judge(input: &Input, a: &Answer) -> Vec<Finding> {
    let mut out = Vec::new();
    for fr in &a.frames {
        if let Some(p) = &fr.problem {
            out.push(f(Rule::InvalidFrame, format!("the server sent something that is not JSON-RPC ({p}): {}", brief(fr))));
        }
    }
    let http = a.status.is_some() || a.closed;
    if let Some(why) = &a.died {
        out.push(f(Rule::Crashed, format!("the server died on this input: {why}")));
    }
    if let Some(s) = a.status.filter(|s| *s >= 500) {
        out.push(f(
            Rule::ServerError,
            format!("HTTP {s}: a server error for a client's malformed input (a 4xx says whose mistake it was)"),
        ));
    }
    let flat: Vec<Frame> = a.frames.iter().flat_map(super::send::flatten).collect();
    let responses: Vec<&Frame> = flat.iter().filter(|x| x.is_response()).collect();
    match &input.due {
        Due::Nothing { response } => {
            if let Some(r) = responses.first() {
                if *response {
                    out.push(f(Rule::RepliedToResponse, format!("the server answered a response it never asked for: {}", brief(r))));
                } else {
                    out.push(f(Rule::RepliedToNotification, format!("the server answered a notification: {}", brief(r))));
                }
            }
        }
        Due::Refusal { close_ok, served_ok } => {
            // The body's id, if it can be read: an error may carry it (or
            // null); any other id is another request's.
            let body_id = match &input.payload {
                super::inputs::Payload::Http(s) => serde_json::from_slice::<Value>(&s.body).ok().and_then(|v| v.get("id").cloned()),
                _ => None,
            };
            for r in responses.iter().filter(|r| !matches!(r.id(), None | Some(Value::Null)) && r.id() != body_id.as_ref()) {
                let why = if body_id.is_some() {
                    "an answer with another request's id"
                } else {
                    "an error with an id, for a body whose id could not be read (it must be null)"
                };
                out.push(f(Rule::WrongId, format!("{why}: {}", brief(r))));
            }
            refusal(&mut out, a, *close_ok, *served_ok);
        }
        Due::Response { id, want, null_ok, also } => {
            let mine = responses.iter().find(|r| r.id() == Some(id));
            let null = responses.iter().find(|r| matches!(r.id(), None | Some(Value::Null)));
            let others: Vec<&&Frame> = responses
                .iter()
                .filter(|r| r.id() != Some(id) && !matches!(r.id(), None | Some(Value::Null)) && !also.iter().any(|x| r.id() == Some(x)))
                .collect();
            if let Some(o) = others.first() {
                out.push(f(
                    Rule::WrongId,
                    format!("an answer with another request's id ({}): {}", o.id().map(|v| v.to_string()).unwrap_or_default(), brief(o)),
                ));
            }
            let refused_http = a.status.is_some_and(|s| (400..500).contains(&s));
            match (mine, null) {
                (Some(r), _) => judge_kind(&mut out, r, want),
                (None, Some(r)) if *null_ok => judge_kind(&mut out, r, want),
                (None, Some(r)) => out
                    .push(f(Rule::WrongId, format!("an error with a null id, although the request's id {id} could be read: {}", brief(r)))),
                // A 4xx without a JSON-RPC body still answers the request.
                (None, None) if refused_http => {}
                (None, None) if a.died.is_some() || a.status.is_some_and(|s| s >= 500) || !others.is_empty() => {}
                (None, None) => out.push(f(Rule::Unanswered, no_answer(a, &format!("a response with id {}", clip_id(id))))),
            }
        }
        Due::Unreadable { want, also } => {
            let null = responses.iter().find(|r| matches!(r.id(), None | Some(Value::Null)));
            let lenient = responses.iter().find(|r| also.iter().any(|x| r.id() == Some(x)));
            let refused_http = a.status.is_some_and(|s| (400..500).contains(&s));
            let stray = responses.iter().any(|r| !matches!(r.id(), None | Some(Value::Null)) && !also.iter().any(|x| r.id() == Some(x)));
            match (null, lenient) {
                (Some(r), _) => judge_kind(&mut out, r, want),
                (None, Some(_)) => {}
                // An answer with a stray id: judged below, once.
                (None, None) if stray => {}
                (None, None) if refused_http || a.died.is_some() || a.status.is_some_and(|s| s >= 500) => {}
                (None, None) if http => {
                    out.push(f(Rule::ErrorCode, format!("HTTP {:?} without a JSON-RPC error for input that could not be read", a.status)))
                }
                (None, None) if a.timed_out => out.push(f(
                    Rule::ErrorCode,
                    "no parse error for a line that is not a JSON-RPC message (JSON-RPC answers it with -32700 and id null)",
                )),
                (None, None) => {}
            }
            for r in responses.iter().filter(|r| !matches!(r.id(), None | Some(Value::Null)) && !also.iter().any(|x| r.id() == Some(x))) {
                out.push(f(Rule::WrongId, format!("an answer with an id the input did not carry: {}", brief(r))));
            }
        }
    }
    out
}

fn refusal(out: &mut Vec<Finding>, a: &Answer, close_ok: bool, served_ok: bool) {
    match a.status {
        _ if a.died.is_some() => {}
        None if a.timed_out => out.push(f(Rule::Unanswered, "no HTTP reply within the input's timeout")),
        None if !close_ok => out.push(f(Rule::NotRefused, "the connection closed without an HTTP reply (a 4xx says what was wrong)")),
        None => {}
        Some(s) if (400..500).contains(&s) => {}
        Some(s) if s >= 500 || served_ok => {}
        Some(s) => out.push(f(Rule::NotRefused, format!("HTTP {s}: served as if nothing were wrong (a 4xx was due)"))),
    }
}

fn clip_id(id: &Value) -> String {
    crate::record::clip(&id.to_string(), 60)
}

fn no_answer(a: &Answer, what: &str) -> String {
    match (a.timed_out, a.status) {
        (true, _) => format!("no answer within the input's timeout ({} ms): {what} was due", a.ms),
        (false, Some(s)) => format!("HTTP {s} without {what}"),
        (false, None) => format!("nothing came: {what} was due"),
    }
}

fn judge_kind(out: &mut Vec<Finding>, r: &Frame, want: &Want) {
    let Some(v) = &r.value else { return };
    let code = v.pointer("/error/code").and_then(|c| c.as_i64());
    match want {
        Want::Any => {}
        Want::Error(codes) => match code {
            Some(c) if codes.contains(&c) => {}
            Some(c) => out.push(f(Rule::ErrorCode, format!("error code {c}; JSON-RPC names {} for this input", names(codes)))),
            None => out.push(f(
                Rule::AcceptedInvalid,
                format!("success for an input JSON-RPC calls invalid ({} was due): {}", names(codes), brief(r)),
            )),
        },
        Want::NotSuccess => {
            let is_error = v.pointer("/result/isError") == Some(&Value::Bool(true));
            if code.is_none() && !is_error {
                out.push(f(
                    Rule::AcceptedInvalid,
                    format!("plain success for a call that cannot be served (an error, or isError: true, was due): {}", brief(r)),
                ));
            }
        }
    }
}

fn names(codes: &[i64]) -> String {
    codes.iter().map(|c| c.to_string()).collect::<Vec<_>>().join(" or ")
}
