//! Rules only older revisions have: JSON-RPC batches (2025-03-26 servers
//! must accept them) and 2024-11-05's HTTP with SSE (the `endpoint` event,
//! messages as `message` events).

use super::{Check, Cx, Need, Outcome};
use crate::record::{Exchange, clip};
use crate::record::{Frame, Transport};
use crate::session::Msg;
use crate::session::Outgoing;
use crate::wire::{self, Revision};
use serde::Deserialize;
use serde_json::{Value, json};
use std::time::Duration;

/// The JSON-RPC messages in frames, batches taken apart.
fn messages(frames: &[Frame]) -> Vec<&Value> {
    frames
        .iter()
        .filter_map(|f| f.value.as_ref())
        .flat_map(|v| match v {
            Value::Array(items) => items.iter().collect::<Vec<_>>(),
            one => vec![one],
        })
        .collect()
}

/// A batch of requests (and a notification) is answered, each request once.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BatchAccepted {}

impl Check for BatchAccepted {
    const NAME: &'static str = "batch_accepted";
    const ABOUT: &'static str =
        "a JSON-RPC batch (two requests and a notification, on a connection or process of its own) gets one response per request";
    const REVISIONS: &'static [Revision] = &[Revision::R2025_03_26];

    async fn run(&self, cx: &Cx<'_>) -> Outcome {
        let mut out = Outcome::default();
        let first = cx.request("ping", None);
        let mut second = cx.request("tools/list", None);
        if !cx.advertises("tools") {
            second = cx.request("ping", None);
        }
        let ids = [first["id"].clone(), second["id"].clone()];
        // A notification the server may ignore: it needs no answer.
        let note =
            json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": "mcpcert-batch", "progress": 1}});
        let batch = Value::Array(vec![first, note, second]);
        let fresh = match cx.session.fresh(cx.rev, true, cx.case).await {
            Ok(f) => f,
            Err(e) => return Outcome::error(e.to_string()),
        };
        let mut conn = fresh.conn;
        let text = batch.to_string();
        let headers = wire::standard_headers(cx.rev, Some(&batch), conn.session_id());
        let mut ex = Exchange {
            label: "a batch: ping, a notification, and another request".into(),
            transport: Some(conn.transport()),
            rpc_method: Some("(batch)".into()),
            sent: Some(text.clone()),
            fresh: true,
            preamble: fresh.preamble.clone(),
            ..Default::default()
        };
        if conn.transport() == Transport::Http {
            ex.http_method = Some("POST".into());
            ex.sent_headers = cx.session.shown_headers(&conn, &headers, false);
        }
        let want = ids.clone();
        // Each request answered, or the batch refused as a whole.
        let done = move |frames: &[Frame]| {
            let got = messages(frames);
            want.iter().all(|id| got.iter().any(|m| m.get("id") == Some(id))) || got.iter().any(|m| m.get("id") == Some(&Value::Null))
        };
        cx.session.count_sent(1);
        let window = conn.answer_timeout().max(Duration::from_secs(1));
        ex.fill_from(conn.watch(&Outgoing::message(&text, &headers, None), window, &done).await);
        conn.shutdown().await;
        drop(fresh.permit);
        let got = messages(&ex.frames);
        let mut problems = Vec::new();
        for id in &ids {
            let answers: Vec<&&Value> = got.iter().filter(|m| m.get("id") == Some(id) && m.get("method").is_none()).collect();
            match answers.as_slice() {
                [] => problems.push(format!("request id {id} got no response")),
                // An error other than -32600 is the request's own answer
                // (e.g. a method the server lacks, judged by its own case):
                // the batch was taken apart and the request processed.
                [one] if one.get("result").is_some() => {}
                [one] if one.pointer("/error/code").and_then(|c| c.as_i64()).is_some_and(|c| c != -32600) => {}
                [one] => problems.push(format!("request id {id} got {}", clip(&one.to_string(), 200))),
                many => problems.push(format!("request id {id} got {} responses", many.len())),
            }
        }
        if !problems.is_empty() {
            // An error that answers none of the batch's requests (id null,
            // or an id of the server's own) refused the batch as a whole.
            let whole = got.iter().find(|m| m.get("error").is_some() && !m.get("id").is_some_and(|i| ids.contains(i)));
            let status = ex.status.map(|s| format!("HTTP {s}, ")).unwrap_or_default();
            let refused =
                whole.map(|m| format!(" (the whole batch was refused: {status}{})", clip(&m.to_string(), 200))).unwrap_or_default();
            let how = if ex.frames.is_empty() && ex.error.is_some() { format!("; {}", ex.summary()) } else { String::new() };
            out.fail(format!(
                "a 2025-03-26 server must accept a JSON-RPC batch and answer each request in it: {}{refused}{how}",
                problems.join("; ")
            ));
        }
        out.exchanges.extend(fresh.exchanges);
        out.exchanges.push(ex);
        out
    }
}

/// Characters no URI reference holds (RFC 3986): space, controls, and
/// `"<>\^`{|}`; and `%` only as `%XX`.
fn uri_problem(s: &str) -> Option<String> {
    if s.is_empty() {
        return Some("it is empty".into());
    }
    if let Some(c) = s.chars().find(|c| c.is_whitespace() || c.is_control() || "\"<>\\^`{|}".contains(*c) || !c.is_ascii()) {
        return Some(format!("it holds {c:?}, which a URI cannot (RFC 3986: it must be percent-encoded)"));
    }
    let b = s.as_bytes();
    for (i, _) in s.match_indices('%') {
        if !(b.len() > i + 2 && b[i + 1].is_ascii_hexdigit() && b[i + 2].is_ascii_hexdigit()) {
            return Some(format!("`%` at byte {i} does not start a percent-encoding (%XX)"));
        }
    }
    None
}

/// A new stream's `endpoint` event names a URI messages are POSTed to.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SseEndpoint {}

impl Check for SseEndpoint {
    const NAME: &'static str = "sse_endpoint";
    const ABOUT: &'static str = "HTTP with SSE: a new stream's `endpoint` event holds a URI (RFC 3986) the client POSTs its messages to";
    const REVISIONS: &'static [Revision] = &[Revision::R2024_11_05];

    fn needs(&self) -> Vec<Need> {
        vec![Need::Transport(Transport::Http)]
    }

    async fn run(&self, cx: &Cx<'_>) -> Outcome {
        let fresh = match cx.session.fresh(cx.rev, true, cx.case).await {
            Ok(f) => f,
            Err(e) => return Outcome::error(e.to_string()),
        };
        let mut conn = fresh.conn;
        let mut out = Outcome::default();
        let facts = conn.sse_facts().cloned().unwrap_or_default();
        conn.shutdown().await;
        out.exchanges.extend(fresh.exchanges);
        let Some(data) = facts.endpoint_data.as_deref() else {
            return out.with_error("the stream was not opened (no endpoint event was read)");
        };
        let first = facts.events.first().map(|e| e.event.as_str()).unwrap_or("");
        out.exchanges.push(Exchange::note(
            "the stream's endpoint event",
            format!(
                "data {:?}, resolved to {} (first event on the stream: `{first}`)",
                clip(data, 300),
                facts.endpoint.as_deref().map(crate::session::redact_url).unwrap_or_default()
            ),
        ));
        if let Some(p) = uri_problem(data.trim()) {
            out.fail(format!(
                "the `endpoint` event must contain a URI for the client's messages; its data {:?} is not one: {p}",
                clip(data, 200)
            ));
        }
        out
    }
}

/// Everything the server sends on the stream after `endpoint` is a
/// `message` event holding one JSON-RPC message.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SseMessageEvents {}

impl Check for SseMessageEvents {
    const NAME: &'static str = "sse_message_events";
    const ABOUT: &'static str =
        "HTTP with SSE: on a new stream, initialize, ping and a list request are answered as `message` events whose data is JSON";
    const REVISIONS: &'static [Revision] = &[Revision::R2024_11_05];

    fn needs(&self) -> Vec<Need> {
        vec![Need::Transport(Transport::Http)]
    }

    async fn run(&self, cx: &Cx<'_>) -> Outcome {
        let fresh = match cx.session.fresh(cx.rev, true, cx.case).await {
            Ok(f) => f,
            Err(e) => return Outcome::error(e.to_string()),
        };
        let mut conn = fresh.conn;
        let mut out = Outcome::default();
        out.exchanges.extend(fresh.exchanges);
        let list = ["tools", "prompts", "resources"].into_iter().find(|c| cx.advertises(c)).map(|c| format!("{c}/list"));
        for method in std::iter::once("ping".to_string()).chain(list) {
            let body = cx.request(&method, None);
            let ex = cx.exchange(&mut conn, &Msg::new(cx.rev, &method, &body)).await;
            let failed = ex.error.clone();
            out.exchanges.push(ex);
            if let Some(e) = failed {
                conn.shutdown().await;
                return out.with_error(format!("{method}: {e}"));
            }
        }
        let facts = conn.sse_facts().cloned().unwrap_or_default();
        conn.shutdown().await;
        let mut bad = Vec::new();
        let mut after_endpoint = facts.events.iter().skip_while(|e| e.event != "endpoint").skip(1).peekable();
        let judged = after_endpoint.peek().is_some();
        for e in after_endpoint {
            if e.event != "message" {
                bad.push(format!("a `{}` event (data {:?})", e.event, clip(&e.data, 120)));
            } else if !e.json {
                bad.push(format!("a `message` event whose data is not JSON: {:?}", clip(&e.data, 120)));
            }
        }
        out.exchanges.push(Exchange::note(
            "events on the stream",
            facts.events.iter().map(|e| format!("{} {}", e.event, clip(&e.data, 80))).collect::<Vec<_>>().join("\n"),
        ));
        if !judged {
            return out.with_error("no event came on the stream after `endpoint`, though requests were answered");
        }
        if !bad.is_empty() {
            out.fail(format!(
                "server messages go out as SSE `message` events with the message as JSON in the data; this stream also carried {}",
                bad.join(", ")
            ));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uri_references() {
        assert!(uri_problem("/messages?session=1").is_none());
        assert!(uri_problem("http://127.0.0.1:1/m?s=a%20b").is_none());
        assert!(uri_problem("/messages?session=1&from=a b").unwrap().contains("' '"));
        assert!(uri_problem("/m?x=%zz").is_some());
        assert!(uri_problem("").is_some());
    }
}
