//! Statelessness (2026-07-28): a server must not rely on prior requests
//! over the same connection to establish context. On one connection (or
//! process), each malformed request is followed by the same valid requests
//! that a fresh connection answered first; every answer after a malformed
//! request must have the shape it had on the fresh connection. A server
//! that takes a malformed request as a sign of another kind of client (and
//! answers differently from then on) breaks this rule: the case names the
//! request after which the answers changed.

use super::{Check, Cx, Outcome};
use crate::record::Exchange;
use crate::session::Connection;
use crate::session::{Msg, SessionError};
use crate::wire::{self, MetaMode, Revision};
use serde::Deserialize;
use serde_json::{Value, json};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StatelessAfterMalformed {}

/// The shape of an answer, which must not depend on earlier requests: the
/// HTTP status, error code or result type and members, and for a list how
/// many items the page holds (values such as times may differ; shapes may
/// not).
pub fn shape(ex: &Exchange) -> String {
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
        r.get("resultType").map(wire::brief).unwrap_or_else(|| "without resultType".into()),
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

impl Check for StatelessAfterMalformed {
    const NAME: &'static str = "stateless_after_malformed";
    const ABOUT: &'static str =
        "after each malformed request on one connection, valid requests are answered as on a fresh connection that saw none";
    const REVISIONS: &'static [Revision] = &Revision::STATELESS;

    async fn run(&self, cx: &Cx<'_>) -> Outcome {
        let mut valid: Vec<(&str, Option<Value>)> = vec![("server/discover", None)];
        for (cap, method) in [("tools", "tools/list"), ("prompts", "prompts/list"), ("resources", "resources/list")] {
            if cx.advertises(cap) {
                valid.push((method, Some(json!({}))));
            }
        }
        let malformed: Vec<(&str, Value)> = vec![
            ("server/discover without _meta protocolVersion", meta_request(cx, MetaMode::NoProtocolVersion, wire::MODERN)),
            ("server/discover without _meta clientCapabilities", meta_request(cx, MetaMode::NoClientCapabilities, wire::MODERN)),
            ("server/discover without params", meta_request(cx, MetaMode::NoParams, wire::MODERN)),
            ("server/discover naming an unsupported version", meta_request(cx, MetaMode::Full, "1900-01-01")),
            ("an unknown method", cx.request("mcpcert/no-such-method", None)),
        ];
        let mut out = Outcome::default();
        // The baseline: the valid requests on a connection that saw nothing else.
        let mut fresh = match open(cx, &mut out).await {
            Ok(c) => c,
            Err(e) => return out.with_error(e.to_string()),
        };
        let mut baseline = Vec::new();
        for (i, (method, params)) in valid.iter().enumerate() {
            let body = cx.request(method, params.clone());
            let mut ex = cx.exchange(&mut fresh, &Msg::new(cx.rev, &format!("{method} on a fresh {}", cx.transport().noun()), &body)).await;
            ex.fresh = i == 0;
            if let Some(e) = &ex.error {
                fresh.shutdown().await;
                out.exchanges.push(ex.clone());
                return out.with_error(format!("{method} on a fresh {}: {e}", cx.transport().noun()));
            }
            baseline.push(shape(&ex));
            out.exchanges.push(ex);
        }
        fresh.shutdown().await;
        // Each malformed request, then the valid ones, on one connection.
        let mut conn = match open(cx, &mut out).await {
            Ok(c) => c,
            Err(e) => return out.with_error(e.to_string()),
        };
        let mut first = true;
        'probes: for (what, bad) in &malformed {
            let mut ex = cx.exchange(&mut conn, &Msg::new(cx.rev, what, bad)).await;
            ex.fresh = std::mem::take(&mut first);
            let stop = ex.error.clone();
            out.exchanges.push(ex);
            if let Some(e) = stop {
                conn.shutdown().await;
                return out.with_error(format!("{what}: {e}"));
            }
            for ((method, params), base) in valid.iter().zip(&baseline) {
                let body = cx.request(method, params.clone());
                let ex = cx.exchange(&mut conn, &Msg::new(cx.rev, &format!("{method}, after {what}"), &body)).await;
                if let Some(e) = &ex.error {
                    out.exchanges.push(ex.clone());
                    out.set_error(format!("{method} after {what}: {e}"));
                    break 'probes;
                }
                let now = shape(&ex);
                out.exchanges.push(ex);
                if &now != base {
                    out.fail(format!(
                        "after {what} on the same {noun}, {method} was answered differently than on a fresh {noun}: the server relied on that earlier request (each request must stand on its own _meta)\n    fresh {noun}: {base}\n    after it:     {now}",
                        noun = cx.transport().noun()
                    ));
                    break 'probes;
                }
            }
        }
        conn.shutdown().await;
        out
    }
}

/// A connection (process) of the case's own.
async fn open(cx: &Cx<'_>, out: &mut Outcome) -> Result<Connection, SessionError> {
    let f = cx.session.fresh(cx.rev, true, cx.case).await?;
    out.exchanges.extend(f.exchanges);
    Ok(f.conn)
}

fn meta_request(cx: &Cx<'_>, mode: MetaMode, version: &str) -> Value {
    wire::request(&cx.session.next_id(), "server/discover", wire::modern_params(None, mode, version))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answered(v: Value) -> Exchange {
        Exchange { response: Some(v), ..Default::default() }
    }

    #[test]
    fn shapes_ignore_values_but_not_structure() {
        let a = answered(json!({"id": 1, "result": {"resultType": "complete", "tools": [{"name": "a"}], "ttlMs": 5}}));
        let b = answered(json!({"id": 2, "result": {"resultType": "complete", "tools": [{"name": "a"}], "ttlMs": 9}}));
        let c = answered(json!({"id": 3, "result": {"tools": [{"name": "a"}]}}));
        let d = answered(json!({"id": 4, "error": {"code": -32601, "message": "x"}}));
        assert_eq!(shape(&a), shape(&b), "values may differ");
        assert_ne!(shape(&a), shape(&c), "a lost resultType is a change");
        assert!(shape(&d).contains("-32601"));
        let e = answered(json!({"id": 5, "result": {"resultType": "complete", "tools": [{"name": "b"}, {"name": "a"}]}}));
        let f = answered(json!({"id": 6, "result": {"resultType": "complete", "tools": [{"name": "a"}, {"name": "b"}]}}));
        assert_eq!(shape(&e), shape(&f), "the order of a list is not its shape");
        let g = answered(json!({"id": 7, "result": {"resultType": "complete", "tools": [{"name": "a"}]}}));
        assert_ne!(shape(&e), shape(&g), "a page that holds fewer items is");
    }
}
