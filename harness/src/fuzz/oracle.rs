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
    /// No answer at all to input that is not a valid request (JSON-RPC
    /// answers it with an error; the MCP spec leaves the reaction open).
    Silent,
    /// Plain success for input the rules call invalid.
    AcceptedInvalid,
    /// HTTP 5xx for the client's mistake.
    ServerError,
    /// Broken HTTP served as if it were fine, or a connection closed
    /// without a reply.
    NotRefused,
    /// A response to a response the server never asked for.
    RepliedToResponse,
    /// An integer id beyond 2^53 answered with a rounded one (a reader that
    /// holds numbers as doubles).
    RoundedId,
    /// The liveness probe answered otherwise than before the class.
    ChangedAnswers,
    /// A tool call with arguments its schema forbids succeeded.
    UnvalidatedArguments,
}

impl Rule {
    /// Whether the spec states the rule (the class's main case judges it);
    /// else it is a convention (the class's conventions case).
    pub fn stated(self) -> bool {
        matches!(
            self,
            Rule::Unanswered
                | Rule::Crashed
                | Rule::WrongId
                | Rule::RepliedToNotification
                | Rule::InvalidFrame
                | Rule::UnvalidatedArguments
        )
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Rule::Unanswered => "unanswered",
            Rule::Crashed => "crashed",
            Rule::WrongId => "wrong-id",
            Rule::RepliedToNotification => "replied-to-notification",
            Rule::InvalidFrame => "invalid-frame",
            Rule::ErrorCode => "error-code",
            Rule::Silent => "silent",
            Rule::AcceptedInvalid => "accepted-invalid",
            Rule::ServerError => "http-5xx",
            Rule::NotRefused => "not-refused",
            Rule::RepliedToResponse => "replied-to-response",
            Rule::RoundedId => "rounded-id",
            Rule::ChangedAnswers => "changed-answers",
            Rule::UnvalidatedArguments => "unvalidated-arguments",
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
    } else if a.hung {
        out.push(f(Rule::Crashed, "the server stopped answering on this input: a request sent after it got no answer either"));
    }
    // A server that died or hung on the input: that is the finding (its
    // silence is not a second one).
    if a.died.is_some() || a.hung {
        return out;
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
            // Over HTTP a server that cannot accept a notification or a
            // response answers an HTTP error status, and its body MAY be a
            // JSON-RPC error without an id (Streamable HTTP, sending
            // messages): only a response with an id, or one in a 2xx, is
            // an answer.
            let refused = a.status.is_some_and(|s| s >= 400);
            if let Some(r) = responses.iter().find(|r| !(refused && matches!(r.id(), None | Some(Value::Null)))) {
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
                let got = o.id().map(|v| v.to_string()).unwrap_or_default();
                if id.as_f64().is_some() && o.id().and_then(|x| x.as_f64()) == id.as_f64() {
                    out.push(f(Rule::RoundedId, format!("the id {id} came back rounded, as {got}: {}", brief(o))));
                } else {
                    out.push(f(Rule::WrongId, format!("an answer with another request's id ({got}): {}", brief(o))));
                }
            }
            let refused_http = a.status.is_some_and(|s| (400..500).contains(&s));
            match (mine, null) {
                (Some(r), _) => judge_kind(&mut out, r, want),
                // A request refused at the HTTP level (a 4xx) may carry an
                // id-less error, as the transport refuses other messages.
                (None, Some(r)) if *null_ok || refused_http => judge_kind(&mut out, r, want),
                (None, Some(r)) => out
                    .push(f(Rule::WrongId, format!("an error with a null id, although the request's id {id} could be read: {}", brief(r)))),
                // A 4xx without a JSON-RPC body still answers the request.
                (None, None) if refused_http => {}
                (None, None) if a.died.is_some() || a.status.is_some_and(|s| s >= 500) || !others.is_empty() => {}
                // Not a valid request (`null_ok`): an answer is the
                // convention, not a stated rule.
                (None, None) if *null_ok => out.push(f(
                    Rule::Silent,
                    no_answer(
                        a,
                        &format!(
                            "an error for id {} (JSON-RPC answers input it cannot take as a request; the MCP spec leaves it open)",
                            clip_id(id)
                        ),
                    ),
                )),
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
                    out.push(f(Rule::Silent, format!("HTTP {:?} without a JSON-RPC error for input that could not be read", a.status)))
                }
                (None, None) if a.timed_out => out.push(f(
                    Rule::Silent,
                    "no error for input that is not one JSON-RPC request (JSON-RPC answers it with -32700 or -32600 and id null; the MCP spec leaves it open)",
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
        (true, _) => match a.timeout_ms {
            Some(t) => format!("no answer within the input's timeout ({t} ms): {what} was due"),
            None => format!("no answer before the server answered mcpcert's next request (stdin is read in order): {what} was due"),
        },
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
        Want::Rejected => {
            let is_error = v.pointer("/result/isError") == Some(&Value::Bool(true));
            if code.is_none() && !is_error {
                out.push(f(
                    Rule::UnvalidatedArguments,
                    format!("success for arguments the tool's inputSchema forbids (an error or isError: true was due): {}", brief(r)),
                ));
            }
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unanswered_input_names_the_timeout_it_waited() {
        let a = Answer { timed_out: true, ms: 1, timeout_ms: Some(2000), ..Default::default() };
        assert_eq!(no_answer(&a, "a response"), "no answer within the input's timeout (2000 ms): a response was due");
        let w = Answer { timed_out: true, ms: 0, timeout_ms: None, ..Default::default() };
        assert!(no_answer(&w, "a response").contains("before the server answered mcpcert's next request"));
    }
}
