//! Listen streams (2026-07-28 subscriptions/listen), gathered for the
//! subscription checks: opened on connections or processes of their own,
//! watched for a while, with the configured trigger run meanwhile.

use super::Cx;
use super::judge::listen::{Listen, acknowledged};
use crate::config::InputTool;
use crate::record::Exchange;
use crate::record::{Frame, Transport};
use crate::session::Msg;
use crate::session::{Connection, GRACE, Outgoing};
use crate::wire::{self, MetaMode};
use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

/// How long a listen stream is watched before and after a trigger (HTTP).
const WINDOW: Duration = Duration::from_millis(1500);

/// The two subscriptions a trigger serves: an empty filter (a number id),
/// and every list-changed kind (a string id; the same one when the first
/// was refused as unimplemented).
pub type ListenPair = (Arc<Listen>, Arc<Listen>);

fn listen_body(id: &Value, filter: &Value) -> Value {
    let p = json!({"notifications": filter});
    wire::request(id, "subscriptions/listen", wire::modern_params(Some(&p), MetaMode::Full, wire::MODERN))
}

/// tools/call of a configured tool on the main connection.
async fn call_named(cx: &Cx<'_>, label: &str, t: &InputTool) -> Result<Exchange, String> {
    let body = cx.request("tools/call", Some(json!({"name": t.tool, "arguments": t.arguments})));
    let ex = cx.on_main(label, &body).await.map_err(|e| e.to_string())?;
    match &ex.error {
        Some(e) => Err(format!("{label}: {e}")),
        None => Ok(ex),
    }
}

/// One listen session per (id, filter). Over HTTP the streams are opened
/// together, each on a connection of its own, and watched at once; a
/// trigger, if given, runs once, when every stream is acknowledged (and
/// once more afterwards, to put the tool set back). Over stdio they take
/// turns on one process (the cold walk's when it is idle), each ended
/// before the next, with the trigger run on it for each.
pub async fn listen_sessions(cx: &Cx<'_>, subs: Vec<(Value, Value)>, trigger: Option<&InputTool>) -> Result<Vec<Listen>, String> {
    if cx.transport() == Transport::Stdio {
        // One new process for every subscription, in turn, whose first
        // line is the first subscription: a stateless server serves a
        // listen as the first request a process gets (a server that hangs
        // then is found so, not hidden by a request sent before). Each
        // subscription is ended (notifications/cancelled) before the next
        // is opened, and what comes later for an ended one is not the next
        // one's traffic. A start costs a Python or Node server seconds; a
        // process each would cost one start per subscription.
        let mut conn = cx.session.open().map_err(|e| e.to_string())?;
        let mut all = Vec::new();
        let mut ended: Vec<Value> = Vec::new();
        for (id, filter) in subs {
            if conn.exited() {
                // The last subscription ended the process: a new one.
                conn.shutdown().await;
                conn = cx.session.open().map_err(|e| e.to_string())?;
                ended.clear();
            }
            let tbody = trigger.map(|t| (t, cx.request("tools/call", Some(json!({"name": t.tool, "arguments": t.arguments})))));
            let mut s = listen_on_process(cx, id.clone(), filter.clone(), tbody.clone(), &mut conn, &ended).await?;
            if s.silent.is_some() && !ended.is_empty() {
                // The process may have ended after an earlier subscription
                // (a server that exits on a method it does not know): this
                // one once more, on a new process.
                conn.shutdown().await;
                conn = cx.session.open().map_err(|e| e.to_string())?;
                ended.clear();
                s = listen_on_process(cx, id.clone(), filter, tbody, &mut conn, &ended).await?;
            }
            for ex in &s.exchanges {
                cx.session.log(cx.rev, cx.case, ex);
            }
            // The client ends a subscription with notifications/cancelled
            // naming its id (stdio).
            let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": id, "reason": "mcpcert: the subscription was watched"}});
            let label = "end the subscription: notifications/cancelled";
            let cex = cx.session.exchange(&mut conn, &Msg::new(cx.rev, label, &cancel).no_reply(), None).await;
            cx.session.log(cx.rev, cx.case, &cex);
            ended.push(id);
            // Every process was asked: each session is kept, a refused one
            // too (a server without the method refuses them all alike).
            all.push(s);
        }
        conn.shutdown().await;
        return Ok(all);
    }
    let window = if trigger.is_some() { WINDOW * 2 } else { WINDOW };
    // Done, per stream: acknowledged, and (with a trigger) the trigger has run.
    let trigger_ran = Arc::new(AtomicBool::new(trigger.is_none()));
    let acked = Arc::new(AtomicUsize::new(0));
    // Streams the server refused (an error for the listen request).
    let refused = Arc::new(AtomicUsize::new(0));
    let mut started = Vec::new();
    let exact = cx.session.exact_names(cx.rev);
    for (id, filter) in &subs {
        let body = listen_body(id, filter);
        let headers = wire::modern_headers(&body);
        let mut conn = cx.session.open().map_err(|e| e.to_string())?;
        cx.session.count_sent(1);
        let shown = cx.session.shown_headers(&conn, &headers, exact);
        let (ran, count, no) = (trigger_ran.clone(), acked.clone(), refused.clone());
        let text = body.to_string();
        let task = tokio::spawn(async move {
            let seen = AtomicBool::new(false);
            // The first answer for the stream: a refusal is counted before
            // the stream is, so whoever sees every stream answered sees the
            // refusals too.
            let answered = |frames: &[Frame]| {
                if !seen.swap(true, Ordering::SeqCst) {
                    if frames.iter().filter_map(|f| f.value.as_ref()).any(|v| v.get("id").is_some() && v.get("error").is_some()) {
                        no.fetch_add(1, Ordering::SeqCst);
                    }
                    count.fetch_add(1, Ordering::SeqCst);
                }
            };
            let done = |frames: &[Frame]| {
                let a = acknowledged(frames);
                if a {
                    answered(frames);
                }
                a && ran.load(Ordering::Relaxed)
            };
            let out = Outgoing { exact_names: exact, ..Outgoing::message(&text, &headers, None) };
            let inc = conn.watch(&out, window, &done).await;
            // A reply that is no stream (an error status with a JSON body)
            // ends the watch without a frame seen on the way.
            answered(&inc.frames);
            inc
        });
        started.push((id.clone(), filter.clone(), body, shown, task));
    }
    let mut trigger_ex = Vec::new();
    if let Some(t) = trigger {
        // Trigger once every stream is acknowledged (or after a while).
        for _ in 0..50 {
            if acked.load(Ordering::SeqCst) >= subs.len() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        // Every subscription refused: nothing to watch, the trigger is not
        // called for nothing.
        if refused.load(Ordering::SeqCst) < subs.len() {
            trigger_ex.push(call_named(cx, &format!("trigger: tools/call {} while the subscription is open", t.tool), t).await?);
        }
        trigger_ran.store(true, Ordering::Relaxed);
    }
    let mut sessions = Vec::new();
    for (id, filter, body, shown, task) in started {
        let inc = task.await.map_err(|e| format!("listen task: {e}"))?;
        let mut ex = Exchange {
            label: format!("subscriptions/listen (stream watched for {} ms)", window.as_millis()),
            transport: Some(Transport::Http),
            http_method: Some("POST".into()),
            rpc_method: Some("subscriptions/listen".into()),
            sent_headers: shown,
            sent: Some(body.to_string()),
            request_id: Some(id.clone()),
            fresh: true,
            stream: true,
            ..Default::default()
        };
        // The judges read every frame with its value, as it came.
        let frames = inc.frames.clone();
        ex.fill_from(inc);
        cx.session.log(cx.rev, cx.case, &ex);
        let mut exchanges = vec![ex];
        exchanges.extend(trigger_ex.iter().cloned());
        sessions.push(Listen {
            id,
            filter,
            frames,
            exchanges,
            triggered: !trigger_ex.is_empty(),
            trigger_error: None,
            silent: None,
            own_stream: true,
            watched_ms: window.as_millis(),
        });
    }
    if let Some(t) = trigger.filter(|_| !trigger_ex.is_empty()) {
        // The tool set as it was, for the cases that follow.
        let restore = call_named(cx, &format!("restore: tools/call {} again", t.tool), t).await?;
        for s in sessions.iter_mut() {
            s.exchanges.push(restore.clone());
        }
    }
    Ok(sessions)
}

/// A listen session over stdio on `conn`, where the subscriptions `ended`
/// were opened (and ended) before.
async fn listen_on_process(
    cx: &Cx<'_>,
    id: Value,
    filter: Value,
    trigger: Option<(&InputTool, Value)>,
    conn: &mut Connection,
    ended: &[Value],
) -> Result<Listen, String> {
    let body = listen_body(&id, &filter);
    let mut s = Listen {
        id: id.clone(),
        filter,
        frames: vec![],
        exchanges: vec![],
        triggered: false,
        trigger_error: None,
        silent: None,
        own_stream: false,
        watched_ms: 0,
    };
    let text = body.to_string();
    let mut ex = Exchange {
        label: "subscriptions/listen".into(),
        transport: Some(Transport::Stdio),
        rpc_method: Some("subscriptions/listen".into()),
        sent: Some(text.clone()),
        request_id: Some(id),
        fresh: true,
        ..Default::default()
    };
    // A new process may take its start-up time to answer.
    let window = conn.answer_timeout();
    s.watched_ms = window.as_millis();
    cx.session.count_sent(1);
    // An ended subscription's late traffic (its result, its notifications)
    // is not this one's.
    let theirs = |f: &Frame| {
        f.value.as_ref().is_some_and(|v| {
            ended
                .iter()
                .any(|e| v.get("id") == Some(e) || super::judge::listen::sub_id(v) == Some(e) || v.pointer("/params/requestId") == Some(e))
        })
    };
    let mine = |frames: &[Frame]| acknowledged(&frames.iter().filter(|f| !theirs(f)).cloned().collect::<Vec<_>>());
    ex.fill_from(conn.watch(&Outgoing::message(&text, &[], None), window, &mine).await);
    s.frames = ex.frames.iter().filter(|f| !theirs(f)).cloned().collect();
    s.exchanges.push(ex);
    if s.frames.is_empty() {
        // Nothing came from the process at all. A server that holds the
        // subscription without acknowledging it (the rule broken) looks the
        // same as one that answers nothing (a timeout), so ask it something
        // every server answers; a late answer to the listen is kept.
        let pid = json!(format!("mcpcert-ping-{}", s.id.to_string().trim_matches('"')));
        let pbody = wire::request(&pid, "ping", wire::modern_params(None, MetaMode::Full, wire::MODERN));
        let label = "liveness: ping on the same process (nothing came for the subscription)";
        let pex = cx.session.exchange(conn, &Msg::new(cx.rev, label, &pbody), None).await;
        s.frames.extend(pex.frames.iter().filter(|f| f.id() != Some(&pid) && !theirs(f)).cloned());
        if pex.error.is_some() && s.frames.is_empty() {
            s.silent = Some(format!(
                "the process sent nothing within {} ms of subscriptions/listen and did not answer a ping sent after it either: a server that holds the subscription without acknowledging it cannot be told from one that does not answer",
                s.watched_ms
            ));
        }
        s.exchanges.push(pex);
    }
    // A refused subscription has nothing to watch: the trigger is not run.
    let refused = super::judge::listen::refusal(&s).is_some();
    if let Some((t, tbody)) = trigger.filter(|_| s.silent.is_none() && !refused) {
        let tid = tbody["id"].clone();
        let label = format!("trigger: tools/call {} on the same process", t.tool);
        let mut tex = cx.session.exchange(conn, &Msg::new(cx.rev, &label, &tbody), None).await;
        s.trigger_error = tex.error.as_ref().map(|e| format!("{label}: {e}"));
        // Whatever the change brings arrives soon after the reply.
        tex.frames.extend(conn.read_for(GRACE).await);
        // The trigger's own response is not subscription traffic.
        s.frames.extend(tex.frames.iter().filter(|f| f.id() != Some(&tid) && !theirs(f)).cloned());
        s.exchanges.push(tex);
        s.triggered = true;
    }
    Ok(s)
}

/// The `Facts::trigger_listens` fact.
pub async fn trigger_pair(cx: &Cx<'_>) -> Result<ListenPair, String> {
    // A server that already answered -32601 has no subscriptions to watch:
    // its answer stands for both, and the trigger is not called.
    if let Some(refused) = cx.facts.listen_unimplemented() {
        return Ok((refused.clone(), refused));
    }
    // Both JSON types of id, and a filter that asks for every kind: the
    // acknowledgment case judges these two as well (two more listens would
    // cost two more processes over stdio).
    let all = json!({"toolsListChanged": true, "promptsListChanged": true, "resourcesListChanged": true});
    let subs = vec![(cx.session.next_id(), json!({})), (json!(format!("mcpcert-listen-{}", cx.session.next_id())), all)];
    let trigger = match trigger(cx).await {
        Trigger::Use(t) => Some(t),
        _ => None,
    };
    let mut all = listen_sessions(cx, subs, trigger.as_ref()).await?.into_iter().map(Arc::new);
    let quiet = all.next().ok_or("internal: no listen session")?;
    // One per subscription asked for; the same one if only one came back.
    let tools = all.next().unwrap_or_else(|| quiet.clone());
    Ok((quiet, tools))
}

/// The conformance fixture that changes the tool set.
pub const FIXTURE_TRIGGER: &str = "test_trigger_tool_change";

/// The tool that changes the tool set, if there is one to call.
pub enum Trigger {
    /// The configured `[subscriptions] trigger_tool`, or the conformance
    /// fixture the server lists.
    Use(InputTool),
    /// The configured one, which the config also forbids.
    Forbidden(String),
    None,
}

/// The configured trigger (unless the config also forbids it), else the
/// conformance fixture `test_trigger_tool_change` when the server lists it
/// and fixtures may be called.
pub async fn trigger(cx: &Cx<'_>) -> Trigger {
    if let Some(t) = &cx.policy.listen_trigger {
        return match cx.policy.forbids(&t.tool) {
            Some(why) => Trigger::Forbidden(why),
            None => Trigger::Use(t.clone()),
        };
    }
    if !cx.policy.call_fixtures || cx.policy.forbids(FIXTURE_TRIGGER).is_some() {
        return Trigger::None;
    }
    match cx.facts.tools_walk(cx).await {
        Ok(w) if w.items.iter().any(|t| t.get("name").and_then(|n| n.as_str()) == Some(FIXTURE_TRIGGER)) => {
            Trigger::Use(InputTool { tool: FIXTURE_TRIGGER.into(), arguments: json!({}) })
        }
        // Under --requirements the fixture is called as the scenario calls
        // it, listed or not.
        _ if cx.policy.requirements => Trigger::Use(InputTool { tool: FIXTURE_TRIGGER.into(), arguments: json!({}) }),
        _ => Trigger::None,
    }
}
