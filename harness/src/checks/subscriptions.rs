//! subscriptions/listen (2026-07-28): the acknowledgment, the subscription
//! id on every notification, nothing unrequested, and (with a configured
//! trigger) list changes delivered on the subscription.

use super::judge::listen::{Listen, acknowledged, judge_acknowledgment, judge_ids, judge_unrequested, notifications, refusal};
use super::walk::{ListMethod, walk_on};
use super::{Check, Cx, Need, Outcome};
use crate::config::InputTool;
use crate::record::Exchange;
use crate::session::Msg;
use crate::transport::{Connection, Frame, GRACE, Outgoing, Transport};
use crate::wire::{self, MetaMode, Revision, brief};
use serde::Deserialize;
use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

/// How long a listen stream is watched before and after a trigger (HTTP).
const WINDOW: Duration = Duration::from_millis(1500);

/// The two subscriptions a trigger serves: an empty filter, and
/// `toolsListChanged` (the same one when the first was refused as
/// unimplemented).
pub type ListenPair = (Arc<Listen>, Arc<Listen>);

/// Which rule a `subscription_probe` case judges.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ListenCheck {
    Acknowledged,
    Unrequested,
    Ids,
    ListChanged,
}

/// One rule of subscriptions/listen.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SubscriptionProbe {
    check: ListenCheck,
}

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
/// once more afterwards, to put the tool set back). Over stdio each gets a
/// process of its own, one after another.
async fn listen_sessions(cx: &Cx<'_>, subs: Vec<(Value, Value)>, trigger: Option<&InputTool>) -> Result<Vec<Listen>, String> {
    if cx.transport() == Transport::Stdio {
        let mut all = Vec::new();
        for (id, filter) in subs {
            let conn = cx.session.open().map_err(|e| e.to_string())?;
            let s = listen_on_process(cx, id, filter, trigger, conn).await?;
            // A server without the method refuses every listen alike:
            // the first refusal is the answer for all of them.
            let unimplemented = refusal(&s).is_some_and(|r| r.pointer("/error/code").and_then(|c| c.as_i64()) == Some(-32601));
            all.push(s);
            if unimplemented {
                break;
            }
        }
        return Ok(all);
    }
    let window = if trigger.is_some() { WINDOW * 2 } else { WINDOW };
    let mut tools_before = vec![];
    if trigger.is_some() {
        tools_before = cx.walk_main(ListMethod::Tools).await.map_err(|e| e.to_string())?.names();
    }
    // Done, per stream: acknowledged, and (with a trigger) the trigger has run.
    let trigger_ran = Arc::new(AtomicBool::new(trigger.is_none()));
    let acked = Arc::new(AtomicUsize::new(0));
    let mut started = Vec::new();
    for (id, filter) in &subs {
        let body = listen_body(id, filter);
        let headers = wire::modern_headers(&body);
        let mut conn = cx.session.open().map_err(|e| e.to_string())?;
        let shown = cx.session.shown_headers(&conn, &headers);
        let (ran, count) = (trigger_ran.clone(), acked.clone());
        let text = body.to_string();
        let task = tokio::spawn(async move {
            let seen = AtomicBool::new(false);
            let done = move |frames: &[Frame]| {
                let a = acknowledged(frames);
                if a && !seen.swap(true, Ordering::Relaxed) {
                    count.fetch_add(1, Ordering::Relaxed);
                }
                a && ran.load(Ordering::Relaxed)
            };
            conn.watch(&Outgoing::message(&text, &headers, None), window, &done).await
        });
        started.push((id.clone(), filter.clone(), body, shown, task));
    }
    let mut trigger_ex = Vec::new();
    if let Some(t) = trigger {
        // Trigger once every stream is acknowledged (or after a while).
        for _ in 0..50 {
            if acked.load(Ordering::Relaxed) >= subs.len() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        trigger_ex.push(call_named(cx, &format!("trigger: tools/call {} while the subscription is open", t.tool), t).await?);
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
            tools_before: tools_before.clone(),
            tools_after: vec![],
            triggered: trigger.is_some(),
            own_stream: true,
            watched_ms: window.as_millis(),
        });
    }
    if let Some(t) = trigger {
        let after = cx.walk_main(ListMethod::Tools).await.map_err(|e| e.to_string())?.names();
        let restore = call_named(cx, &format!("restore: tools/call {} again", t.tool), t).await?;
        for s in sessions.iter_mut() {
            s.tools_after = after.clone();
            s.exchanges.push(restore.clone());
        }
    }
    Ok(sessions)
}

/// A listen session over stdio, on a process of its own (`conn`).
async fn listen_on_process(
    cx: &Cx<'_>,
    id: Value,
    filter: Value,
    trigger: Option<&InputTool>,
    mut conn: Connection,
) -> Result<Listen, String> {
    let body = listen_body(&id, &filter);
    let mut s = Listen {
        id: id.clone(),
        filter,
        frames: vec![],
        exchanges: vec![],
        tools_before: vec![],
        tools_after: vec![],
        triggered: false,
        own_stream: false,
        watched_ms: 0,
    };
    if trigger.is_some() {
        s.tools_before = cx.walk_main(ListMethod::Tools).await.map_err(|e| e.to_string())?.names();
    }
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
    ex.fill_from(conn.watch(&Outgoing::message(&text, &[], None), window, &acknowledged).await);
    s.frames = ex.frames.clone();
    s.exchanges.push(ex);
    if let Some(t) = trigger {
        let tbody = cx.request("tools/call", Some(json!({"name": t.tool, "arguments": t.arguments})));
        let tid = tbody["id"].clone();
        let label = format!("trigger: tools/call {} on the same process", t.tool);
        let mut tex = cx.session.exchange(&mut conn, &Msg::new(cx.rev, &label, &tbody), None).await;
        // Whatever the change brings arrives soon after the reply.
        tex.frames.extend(conn.read_for(GRACE).await);
        // The trigger's own response is not subscription traffic.
        s.frames.extend(tex.frames.iter().filter(|f| f.id() != Some(&tid)).cloned());
        s.exchanges.push(tex);
        s.triggered = true;
        s.tools_after = walk_on(cx, &mut conn, ListMethod::Tools).await.names();
    }
    for ex in &s.exchanges {
        cx.session.log(cx.rev, cx.case, ex);
    }
    conn.shutdown().await;
    Ok(s)
}

/// The `Facts::trigger_listens` fact.
pub async fn trigger_pair(cx: &Cx<'_>) -> Result<ListenPair, String> {
    let subs = vec![(cx.session.next_id(), json!({})), (cx.session.next_id(), json!({"toolsListChanged": true}))];
    let mut all = listen_sessions(cx, subs, cx.policy.listen_trigger.as_ref()).await?.into_iter().map(Arc::new);
    let quiet = all.next().ok_or("internal: no listen session")?;
    // Only one when the first was refused as unimplemented.
    let tools = all.next().unwrap_or_else(|| quiet.clone());
    Ok((quiet, tools))
}

impl Check for SubscriptionProbe {
    const NAME: &'static str = "subscription_probe";
    const ABOUT: &'static str = "one rule (`check`) of subscriptions/listen; list-changed needs the trigger tool of [subscriptions]";
    const REVISIONS: &'static [Revision] = &[Revision::Modern];

    fn needs(&self) -> Vec<Need> {
        if self.check == ListenCheck::ListChanged { vec![Need::Trigger] } else { Vec::new() }
    }

    async fn run(&self, cx: &Cx<'_>) -> Outcome {
        let mut out = Outcome::default();
        let trigger = cx.policy.listen_trigger.clone();
        if self.check == ListenCheck::ListChanged && trigger.is_none() {
            return Outcome::na(
                "no tool that changes the tool set is named in the target config ([subscriptions] trigger_tool = \"NAME\")",
            );
        }
        // The two subscriptions a trigger serves (an empty filter, and
        // toolsListChanged) are watched together, once, and judged by three
        // cases; the acknowledgment case watches its own two.
        let sessions: Vec<Arc<Listen>> = if self.check == ListenCheck::Acknowledged {
            // Every kind asked for, with both JSON types of id: the
            // acknowledgment must keep each.
            let all = json!({"toolsListChanged": true, "promptsListChanged": true, "resourcesListChanged": true});
            let subs = vec![(cx.session.next_id(), all.clone()), (json!(format!("mcpcert-listen-{}", cx.session.next_id())), all)];
            match listen_sessions(cx, subs, None).await {
                Ok(all) => all.into_iter().map(Arc::new).collect(),
                Err(e) => return Outcome::error(e),
            }
        } else {
            let pair = match cx.facts.trigger_listens(cx).await {
                Ok(p) => p,
                Err(e) => return Outcome::error(e),
            };
            vec![if self.check == ListenCheck::Unrequested { pair.0.clone() } else { pair.1.clone() }]
        };
        let trigger_name = trigger.as_ref().map(|t| t.tool.as_str()).unwrap_or("?");
        for s in sessions {
            out.exchanges.extend(s.exchanges.iter().cloned());
            if let Some(r) = refusal(&s) {
                if r.pointer("/error/code").and_then(|c| c.as_i64()) == Some(-32601) {
                    out.set_na("the server does not implement subscriptions/listen (-32601); the spec never states that the method itself is required (digest 14.8), so its rules do not apply");
                    return out;
                }
                out.fail(format!("subscriptions/listen was refused: {}", brief(r)));
                continue;
            }
            if s.exchanges.first().is_some_and(|e| e.error.is_some() && e.frames.is_empty()) {
                out.set_error(format!("subscriptions/listen: {}", s.exchanges[0].summary()));
                return out;
            }
            match self.check {
                ListenCheck::Acknowledged => {
                    let (f, note) = judge_acknowledgment(&s);
                    out.failures.extend(f);
                    if let Some(n) = note {
                        out.exchanges.push(Exchange::note("end of subscription", n));
                    }
                }
                ListenCheck::Unrequested => {
                    out.failures.extend(judge_unrequested(&s));
                    let acked = notifications(&s.frames)
                        .any(|v| v.get("method").and_then(|m| m.as_str()) == Some("notifications/subscriptions/acknowledged"));
                    if out.failures.is_empty() && !acked {
                        out.set_na("the subscription was never acknowledged (subscriptions/acknowledged says why), so there is nothing on it to judge");
                    }
                }
                ListenCheck::Ids => {
                    let (f, seen) = judge_ids(&s);
                    out.failures.extend(f);
                    if seen == 0 && out.failures.is_empty() {
                        out.set_na(if trigger.is_none() {
                            "no notification arrived on the subscription to judge; name a tool that changes the tool set in the config ([subscriptions] trigger_tool) to cause one"
                        } else {
                            "no notification arrived on the subscription after the trigger (see subscriptions/list-changed)"
                        });
                    }
                }
                ListenCheck::ListChanged => {
                    let arrived = notifications(&s.frames)
                        .any(|v| v.get("method").and_then(|m| m.as_str()) == Some("notifications/tools/list_changed"));
                    if !arrived {
                        out.fail(format!(
                            "after {trigger_name} changed the tool set, no notifications/tools/list_changed arrived on the subscription {}",
                            if s.own_stream {
                                format!("before its stream was closed (at most {} ms after subscriptions/listen)", s.watched_ms)
                            } else {
                                format!("within {} ms of the trigger's reply", GRACE.as_millis())
                            }
                        ));
                    }
                    if s.tools_before == s.tools_after {
                        out.fail(format!(
                            "tools/list is the same before and after {trigger_name} ran, so the trigger changed nothing: {:?}",
                            s.tools_after
                        ));
                    }
                }
            }
        }
        out
    }
}
