//! One message a check or step sends through the session, and how.

use crate::wire::{HeaderEdit, Revision};
use serde_json::Value;

/// One message to send, and how.
#[derive(Clone, Copy)]
pub struct Msg<'a> {
    /// The revision whose standard headers it carries.
    pub rev: Revision,
    pub label: &'a str,
    /// The JSON-RPC message; `Value::Null` for a bodiless HTTP request.
    pub body: &'a Value,
    pub http_method: &'a str,
    /// Changes to the standard headers (HTTP).
    pub edits: &'a [HeaderEdit],
    /// Send header names in their exact letter case (HTTP).
    pub exact_names: bool,
    /// Wait for the response to the body's id.
    pub want_reply: bool,
    /// Answer the requests the server sends meanwhile (2025-11-25
    /// sampling, elicitation) with what this gives.
    pub answer: Option<crate::transport::Answer<'a>>,
    /// stdio, no reply due: watch for a moment what the message provokes.
    pub linger: bool,
    /// Sent at once with others on purpose (a check of concurrency): not
    /// held back by the run's limit on requests in flight.
    pub on_purpose: bool,
    /// HTTP: safe to send again if its connection breaks before an answer
    /// comes, whatever its method (a call of a tool known to be
    /// read-only); reads are, whoever sends them.
    pub repeatable: bool,
}

impl<'a> Msg<'a> {
    /// A request (or, with `no_reply`, a notification) POSTed or written.
    pub fn new(rev: Revision, label: &'a str, body: &'a Value) -> Msg<'a> {
        Msg {
            rev,
            label,
            body,
            http_method: "POST",
            edits: &[],
            exact_names: false,
            want_reply: true,
            answer: None,
            linger: true,
            on_purpose: false,
            repeatable: false,
        }
    }
    /// A request that changes nothing (a call of a read-only tool).
    pub fn repeatable(mut self, yes: bool) -> Msg<'a> {
        self.repeatable = yes;
        self
    }
    pub fn answering(mut self, answer: crate::transport::Answer<'a>) -> Msg<'a> {
        self.answer = Some(answer);
        self
    }
    pub fn edits(mut self, edits: &'a [HeaderEdit]) -> Msg<'a> {
        self.edits = edits;
        self
    }
    pub fn exact_names(mut self, on: bool) -> Msg<'a> {
        self.exact_names = on;
        self
    }
    pub fn no_reply(mut self) -> Msg<'a> {
        self.want_reply = false;
        self
    }
    /// Sent at once with others because the check is about that: the
    /// run's limit on requests in flight does not hold it back.
    pub fn on_purpose(mut self) -> Msg<'a> {
        self.on_purpose = true;
        self
    }
    /// No reply due, and none awaited: return as soon as it is sent.
    pub fn no_linger(mut self) -> Msg<'a> {
        self.want_reply = false;
        self.linger = false;
        self
    }
    /// A bodiless HTTP request (GET, DELETE…).
    pub fn raw(rev: Revision, label: &'a str, http_method: &'a str) -> Msg<'a> {
        Msg {
            rev,
            label,
            body: &Value::Null,
            http_method,
            edits: &[],
            exact_names: false,
            want_reply: false,
            answer: None,
            linger: true,
            on_purpose: false,
            repeatable: false,
        }
    }
}
