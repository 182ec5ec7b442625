//! Statelessness (2026-07-28): a server must not rely on prior requests
//! over the same connection to establish context. Each malformed request
//! is followed, on the same connection (or process), by valid requests that
//! a fresh connection answered first; every answer after a malformed
//! request must have the shape it had on the fresh connection. Over HTTP
//! each malformed request and the valid ones after it get a connection of
//! their own, all malformed requests at once; over stdio one process takes
//! them in turn. A server that
//! takes a malformed request as a sign of another kind of client (and
//! answers differently from then on) breaks this rule: the case names the
//! request after which the answers changed.

use super::{Check, Cx, Outcome};
use crate::record::Exchange;
use crate::session::{Msg, SessionError};
use crate::wire::{self, MetaMode, Revision};
use serde::Deserialize;
use serde_json::{Value, json};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StatelessAfterMalformed {}

/// The shape of an answer (`Exchange::answer_shape`).
pub fn shape(ex: &Exchange) -> String {
    ex.answer_shape()
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
        let noun = cx.transport().noun();
        // Every request is made first (ids in order), then sent: the
        // baseline (the valid requests on a connection that saw nothing
        // else), and after each malformed request the valid ones again.
        let http = cx.transport() == crate::record::Transport::Http;
        // Over stdio the baseline is the main process's answers (it has
        // seen valid requests only): a process of its own would cost a start.
        let base_where = if http { format!("a fresh {noun}") } else { "the main process, which saw only valid requests".to_string() };
        let base: Vec<(String, Value)> = valid.iter().map(|(m, p)| (format!("{m} on {base_where}"), cx.request(m, p.clone()))).collect();
        // Each malformed request is followed by all the valid ones, on one
        // connection: over HTTP each malformed request on a connection of
        // its own, all at once; over stdio one process takes them all, one
        // after another (a process each would cost a start each, and a pipe
        // has no round trip to hide).
        let probes: Vec<(&str, Value, Vec<usize>)> =
            malformed.iter().map(|(what, bad)| (*what, bad.clone(), (0..valid.len()).collect())).collect();
        let after: Vec<Vec<(String, Value)>> = probes
            .iter()
            .map(|(what, bad, js)| {
                let mut chain = vec![(what.to_string(), bad.clone())];
                chain.extend(js.iter().map(|&j| {
                    let (m, p) = &valid[j];
                    (format!("{m}, after {what}"), cx.request(m, p.clone()))
                }));
                chain
            })
            .collect();
        // The baseline's requests likewise: over HTTP each on a fresh
        // connection of its own, at once.
        let (base_chains, after_chains): (Vec<Chain>, Vec<Chain>) = if http {
            (base.into_iter().map(|r| vec![r]).collect(), after)
        } else {
            (vec![base], vec![after.into_iter().flatten().collect()])
        };
        let never = |_: usize, _: &Exchange| false;
        let base_sent = futures_util::future::join_all(base_chains.iter().map(|c| send_chain(cx, c, &never)));
        let (base_sent, after_sent) = if http {
            futures_util::future::join(base_sent, futures_util::future::join_all(after_chains.iter().map(|c| send_chain(cx, c, &never))))
                .await
        } else {
            // The baseline on the main process; then the malformed requests,
            // each followed by the valid ones, one after another on the
            // process the negative probes share (its sentinel retires it
            // after them if they changed it).
            drop(base_sent);
            let mut base_ex = Vec::new();
            for (label, body) in base_chains.iter().flatten() {
                match cx.session.on_main(&Msg::new(cx.rev, label, body), cx.case).await {
                    Ok(ex) => base_ex.push(ex),
                    Err(e) => return Outcome::error(e.to_string()),
                }
            }
            // Sending stops at the first answer whose shape differs from
            // the baseline's: what follows would only repeat the finding.
            let shapes: Vec<String> = base_ex.iter().map(shape).collect();
            let expect: Vec<Option<usize>> =
                probes.iter().flat_map(|(_, _, js)| std::iter::once(None).chain(js.iter().map(|&j| Some(j)))).collect();
            let differs =
                |i: usize, ex: &Exchange| expect.get(i).copied().flatten().is_some_and(|j| shapes.get(j).is_some_and(|b| *b != shape(ex)));
            let chain: Vec<Msg> = after_chains.iter().flatten().map(|(l, b)| Msg::new(cx.rev, l, b)).collect();
            // On a probe process that has served no other probe: what a
            // process that saw only server/discover does after a malformed
            // request is the fact judged (earlier probes could have changed
            // it in ways server/discover does not show).
            let after = cx.session.isolated_until(&chain, cx.case, &differs, true).await.map(|exs| (Vec::new(), exs));
            (vec![Ok((Vec::new(), base_ex))], vec![after])
        };
        let mut out = Outcome::default();
        let mut baseline = Vec::new();
        for r in base_sent {
            match r {
                Ok((pre, exs)) => {
                    out.exchanges.extend(pre);
                    baseline.extend(exs);
                }
                Err(e) => return out.with_error(e.to_string()),
            }
        }
        let mut shapes = Vec::new();
        for ex in baseline {
            if let Some(e) = &ex.error {
                let why = format!("{}: {e}", ex.label);
                out.exchanges.push(ex);
                return out.with_error(why);
            }
            shapes.push(shape(&ex));
            out.exchanges.push(ex);
        }
        // The malformed requests' answers, then those after each, in order;
        // what brought a chain's process up is shown before its first.
        let mut rest: Vec<(Vec<Exchange>, Exchange)> = Vec::new();
        for r in after_sent {
            match r {
                Ok((pre, exs)) => {
                    let mut pre = Some(pre);
                    rest.extend(exs.into_iter().map(|ex| (pre.take().unwrap_or_default(), ex)));
                }
                Err(e) => return out.with_error(e.to_string()),
            }
        }
        let mut rest = rest.into_iter();
        'probes: for (what, _, js) in &probes {
            let Some(ex) = next_shown(&mut rest, &mut out) else { break };
            let stop = ex.error.clone();
            out.exchanges.push(ex);
            if let Some(e) = stop {
                // What the other chains got was sent too: shown, not judged.
                while let Some(ex) = next_shown(&mut rest, &mut out) {
                    out.exchanges.push(ex);
                }
                return out.with_error(format!("{what}: {e}"));
            }
            for &j in js {
                let (method, base) = (valid[j].0, &shapes[j]);
                let Some(ex) = next_shown(&mut rest, &mut out) else { break 'probes };
                if let Some(e) = &ex.error {
                    out.exchanges.push(ex.clone());
                    out.set_error(format!("{method} after {what}: {e}"));
                    break 'probes;
                }
                let now = shape(&ex);
                out.exchanges.push(ex);
                if &now != base {
                    out.fail(format!(
                        "after {what} on the same {noun}, {method} was answered differently than on {base_where}: the server relied on that earlier request (each request must stand on its own _meta)\n    before: {base}\n    after it: {now}"
                    ));
                    break 'probes;
                }
            }
        }
        // What was sent after the first finding is shown too (not judged):
        // the chains went out together.
        while let Some(ex) = next_shown(&mut rest, &mut out) {
            out.exchanges.push(ex);
        }
        out
    }
}

/// Requests (label, body) sent one after another on one connection.
type Chain = Vec<(String, Value)>;

/// The next exchange to judge; what brought its process up (if it is its
/// chain's first) goes into the transcript before it.
fn next_shown(rest: &mut impl Iterator<Item = (Vec<Exchange>, Exchange)>, out: &mut Outcome) -> Option<Exchange> {
    let (pre, ex) = rest.next()?;
    out.exchanges.extend(pre);
    Some(ex)
}

/// Send `reqs` one after another on a connection (process) of their own;
/// stops after a request that got no answer. The first is marked fresh
/// (a reproducer starts a new connection for it).
/// What brought the process up (stdio: its first request) comes apart.
/// Sending stops, too, after the request for which `stop` (its index in
/// `reqs`, its exchange) says so.
async fn send_chain(
    cx: &Cx<'_>,
    reqs: &[(String, Value)],
    stop: &(dyn Fn(usize, &Exchange) -> bool + Sync),
) -> Result<(Vec<Exchange>, Vec<Exchange>), SessionError> {
    let f = cx.session.fresh(cx.rev, true, cx.case).await?;
    let mut exs = Vec::new();
    let mut conn = f.conn;
    for (i, (label, body)) in reqs.iter().enumerate() {
        let mut ex = cx.exchange(&mut conn, &Msg::new(cx.rev, label, body)).await;
        ex.fresh = i == 0;
        let end = ex.error.is_some() || stop(i, &ex);
        exs.push(ex);
        if end {
            break;
        }
    }
    conn.shutdown().await;
    Ok((f.exchanges, exs))
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
