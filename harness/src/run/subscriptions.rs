//! subscriptions/listen (2026-07-28): the acknowledgment, the
//! subscription id on every notification, nothing unrequested, and (with a
//! configured trigger) list changes delivered on the subscription.

use super::actions::StepOut;
use super::mrtr::InputTool;
use super::{Conn, Engine, Exchange, clip};
use crate::target::Frame;
use crate::target::http::HttpTarget;
use crate::wire::{self, KEY_SUBSCRIPTION_ID, MODERN, MetaMode, brief};
use serde_json::{Value, json};
use std::time::Duration;

/// How long a listen stream is watched before and after a trigger.
const WINDOW: Duration = Duration::from_millis(1500);

/// Notification kinds a filter key opts into.
fn kind_of(filter_key: &str) -> Option<&'static str> {
    match filter_key {
        "toolsListChanged" => Some("notifications/tools/list_changed"),
        "promptsListChanged" => Some("notifications/prompts/list_changed"),
        "resourcesListChanged" => Some("notifications/resources/list_changed"),
        _ => None,
    }
}

/// What one listen session saw.
pub struct Session {
    pub id: Value,
    pub filter: Value,
    /// Frames that arrived on the subscription's stream (HTTP) or on the
    /// process while it was open (stdio), in order.
    pub frames: Vec<Frame>,
    pub exchanges: Vec<Exchange>,
    /// Tool names before and after the trigger (when one ran).
    pub tools_before: Vec<String>,
    pub tools_after: Vec<String>,
    pub triggered: bool,
    /// HTTP: the frames came on the subscription's own stream. stdio: they
    /// came on the process, where other requests' notifications may mix in.
    pub own_stream: bool,
    /// How long the subscription was watched for its acknowledgment.
    pub watched_ms: u128,
}

fn sub_id(v: &Value) -> Option<&Value> {
    v.pointer("/params/_meta").and_then(|m| m.get(KEY_SUBSCRIPTION_ID))
}

/// The same id, or the same id written as another JSON type.
fn loosely_equal(a: &Value, b: &Value) -> bool {
    a == b || a.to_string().trim_matches('"') == b.to_string().trim_matches('"')
}

/// Whether an acknowledgment, the end of the subscription or a refusal has arrived.
fn acknowledged(frames: &[Frame]) -> bool {
    frames.iter().filter_map(|f| f.value.as_ref()).any(|v| {
        v.get("method").and_then(|m| m.as_str()) == Some("notifications/subscriptions/acknowledged")
            || (v.get("id").is_some() && (v.get("result").is_some() || v.get("error").is_some()))
    })
}

/// Notifications are the frames with a method and no id.
fn notifications(frames: &[Frame]) -> impl Iterator<Item = &Value> {
    frames.iter().filter_map(|f| f.value.as_ref()).filter(|v| v.get("method").is_some() && v.get("id").is_none())
}

/// The first message for the subscription is the acknowledgment, with the
/// id in the request's own JSON type and a filter the request allows; if
/// the server ended the subscription, how it did so is checked too.
pub fn judge_acknowledgment(s: &Session) -> (Vec<String>, Option<String>) {
    let mut out = Vec::new();
    let mut note = None;
    let mine = notifications(&s.frames).find(|v| {
        sub_id(v).is_some_and(|x| loosely_equal(x, &s.id))
            || v.get("method").and_then(|m| m.as_str()) == Some("notifications/subscriptions/acknowledged")
    });
    match mine {
        None => out.push(format!(
            "no notifications/subscriptions/acknowledged arrived within {} ms of subscriptions/listen (id {})",
            s.watched_ms,
            brief(&s.id)
        )),
        Some(v) => {
            let method = v.get("method").and_then(|m| m.as_str()).unwrap_or("");
            if method != "notifications/subscriptions/acknowledged" {
                out.push(format!("the first message for the subscription must be notifications/subscriptions/acknowledged; got {method}"));
            }
            match sub_id(v) {
                None => out.push(format!("the acknowledgment lacks params._meta[\"{KEY_SUBSCRIPTION_ID}\"]")),
                Some(x) if x != &s.id => out.push(format!(
                    "subscriptionId must equal the listen request's id with its JSON type kept: the request's id was {} ({}), the acknowledgment says {} ({})",
                    brief(&s.id),
                    type_name(&s.id),
                    brief(x),
                    type_name(x)
                )),
                Some(_) => {}
            }
            if method == "notifications/subscriptions/acknowledged" {
                match v.pointer("/params/notifications").and_then(|n| n.as_object()) {
                    None => out.push("the acknowledgment must list what the server will honour in params.notifications (an object)".into()),
                    Some(h) => {
                        for (k, val) in h {
                            let asked = s.filter.get(k).is_some_and(|a| a == &json!(true) || a.is_array());
                            if !asked && val != &json!(false) {
                                out.push(format!("the acknowledgment honours `{k}`, which the listen request did not ask for"));
                            }
                        }
                    }
                }
            }
        }
    }
    // The end, if the server ended the subscription during the window.
    for v in s.frames.iter().filter_map(|f| f.value.as_ref()) {
        if v.get("id") == Some(&s.id) && v.get("result").is_some() {
            let r = &v["result"];
            note = Some("the server ended the subscription with the listen result".to_string());
            if r.get("resultType").and_then(|t| t.as_str()) != Some("complete")
                || r.pointer("/_meta").and_then(|m| m.get(KEY_SUBSCRIPTION_ID)) != Some(&s.id)
            {
                out.push(format!("the listen result that ends a subscription must have resultType complete and _meta[\"{KEY_SUBSCRIPTION_ID}\"] equal to the id; got {}", brief(r)));
            }
        } else if v.get("method").and_then(|m| m.as_str()) == Some("notifications/cancelled")
            && v.pointer("/params/requestId") == Some(&s.id)
        {
            note = Some("the server ended the subscription with notifications/cancelled (accepted: the spec is inconsistent here, upstream issue #3348)".into());
        }
    }
    (out, note)
}

/// The error the server answered the listen request with, if it refused it.
fn refusal(s: &Session) -> Option<&Value> {
    s.frames.iter().filter_map(|f| f.value.as_ref()).find(|v| v.get("id") == Some(&s.id) && v.get("error").is_some())
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::String(_) => "a string",
        Value::Number(_) => "a number",
        _ => "neither string nor number",
    }
}

/// Nothing the filter did not ask for; no progress or log messages.
/// On stdio a progress or log message without this subscription's id may
/// belong to another request (the trigger call), so it is not counted.
pub fn judge_unrequested(s: &Session) -> Vec<String> {
    let mut out = Vec::new();
    for v in notifications(&s.frames) {
        let method = v.get("method").and_then(|m| m.as_str()).unwrap_or("");
        if method == "notifications/subscriptions/acknowledged" {
            continue;
        }
        let ours = sub_id(v).is_some_and(|x| loosely_equal(x, &s.id));
        if !s.own_stream && !ours && (method == "notifications/progress" || method == "notifications/message") {
            continue;
        }
        if method == "notifications/progress" || method == "notifications/message" {
            out.push(format!("{method} must not be sent on a subscription: {}", clip(&v.to_string(), 160)));
            continue;
        }
        let wanted = s.filter.as_object().into_iter().flatten().any(|(k, val)| val == &json!(true) && kind_of(k) == Some(method))
            || (method == "notifications/resources/updated" && s.filter.get("resourceSubscriptions").is_some());
        if !wanted {
            out.push(format!("{method} was sent although the listen filter {} did not ask for it", brief(&s.filter)));
        }
    }
    out
}

/// Every notification for the subscription after the acknowledgment
/// carries its id.
pub fn judge_ids(s: &Session) -> (Vec<String>, usize) {
    let mut out = Vec::new();
    let mut seen = 0;
    for v in notifications(&s.frames) {
        let method = v.get("method").and_then(|m| m.as_str()).unwrap_or("");
        if method == "notifications/subscriptions/acknowledged" || method == "notifications/cancelled" {
            continue;
        }
        // stdio: progress and log messages without the id may be another request's.
        if !s.own_stream && sub_id(v).is_none() && (method == "notifications/progress" || method == "notifications/message") {
            continue;
        }
        seen += 1;
        if sub_id(v) != Some(&s.id) {
            out.push(format!(
                "{method} on the subscription must carry params._meta[\"{KEY_SUBSCRIPTION_ID}\"] = {}; got {}",
                brief(&s.id),
                clip(&v.to_string(), 160)
            ));
        }
    }
    (out, seen)
}

impl Engine {
    /// Open a subscription on a new connection (HTTP: its own stream) or a
    /// new process (stdio), watch it, and with `trigger` call that tool
    /// once while it is open (and once more afterwards, on HTTP, to put the
    /// tool set back).
    /// One listen session per (id, filter). Over HTTP the streams are
    /// opened together and watched at once (each on its own connection); a
    /// trigger, if given, runs once, when every stream is acknowledged. Over
    /// stdio each gets a process of its own, one after another.
    pub(super) async fn listen_sessions(
        &mut self,
        rev: &str,
        subs: Vec<(Value, Value)>,
        trigger: Option<&InputTool>,
        case: &str,
    ) -> Result<Vec<Session>, String> {
        if matches!(self.cfg.target, super::TargetSpec::Stdio(_)) {
            let mut all = Vec::new();
            for (id, filter) in subs {
                let conn = self.open().await?;
                let s = self.listen_session(rev, id, filter, trigger, case, conn).await?;
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
        let super::TargetSpec::Http(spec) = self.cfg.target.clone() else { unreachable!() };
        let target = HttpTarget::new(&spec, &self.cfg.limits)?;
        let window = if trigger.is_some() { WINDOW * 2 } else { WINDOW };
        use std::sync::Arc;
        use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
        let mut tools_before = vec![];
        if trigger.is_some() {
            tools_before = self.walk_main(rev, "tools/list", "tools", case).await?.names();
        }
        // Done, per stream: acknowledged, and (with a trigger) the trigger has run.
        let trigger_ran = Arc::new(AtomicBool::new(trigger.is_none()));
        let acked = Arc::new(AtomicUsize::new(0));
        let mut started = Vec::new();
        for (id, filter) in &subs {
            let p = json!({"notifications": filter});
            let body = wire::request(id, "subscriptions/listen", wire::modern_params(Some(&p), MetaMode::Full, MODERN));
            let headers = wire::modern_headers(&body);
            let shown = self.shown_headers(&target, &headers);
            let (ran, count, t) = (trigger_ran.clone(), acked.clone(), target.clone());
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
                t.collect(&headers, text.into_bytes(), window, &done).await
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
            trigger_ex.push(self.call_named(rev, &format!("trigger: tools/call {} while the subscription is open", t.tool), t).await?);
            trigger_ran.store(true, Ordering::Relaxed);
        }
        let mut sessions = Vec::new();
        for (id, filter, body, shown, task) in started {
            let reply = task.await.map_err(|e| format!("listen task: {e}"))?;
            let mut ex = Exchange {
                label: format!("subscriptions/listen (stream watched for {} ms)", window.as_millis()),
                transport: "http".into(),
                http_method: Some("POST".into()),
                rpc_method: Some("subscriptions/listen".into()),
                sent_headers: shown,
                sent: Some(body.to_string()),
                request_id: Some(id.clone()),
                fresh: true,
                ..Default::default()
            };
            // The judges read every frame with its value; filling the
            // exchange moves the reply's value out of its frame, so they get
            // the frames as they came.
            let frames = reply.frames.clone();
            ex.fill_from(reply);
            if let Some(st) = self.revs.get_mut(rev) {
                super::log_frames(st, case, &ex);
            }
            ex.logged = true;
            let mut exchanges = vec![ex];
            exchanges.extend(trigger_ex.iter().cloned());
            sessions.push(Session {
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
            let after = self.walk_main(rev, "tools/list", "tools", case).await?.names();
            let restore = self.call_named(rev, &format!("restore: tools/call {} again", t.tool), t).await?;
            for s in sessions.iter_mut() {
                s.tools_after = after.clone();
                s.exchanges.push(restore.clone());
            }
        }
        Ok(sessions)
    }

    /// A listen session over stdio, on a process of its own (`conn`).
    async fn listen_session(
        &mut self,
        rev: &str,
        id: Value,
        filter: Value,
        trigger: Option<&InputTool>,
        case: &str,
        mut conn: Conn,
    ) -> Result<Session, String> {
        let p = json!({"notifications": filter});
        let body = wire::request(&id, "subscriptions/listen", wire::modern_params(Some(&p), MetaMode::Full, MODERN));
        let mut s = Session {
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
            s.tools_before = self.walk_main(rev, "tools/list", "tools", case).await?.names();
        }
        match self.cfg.target.clone() {
            super::TargetSpec::Http(_) => return Err("internal: listen_session is for stdio targets".into()),
            super::TargetSpec::Stdio(_) => {
                let text = body.to_string();
                let mut ex = Exchange {
                    label: "subscriptions/listen".into(),
                    transport: "stdio".into(),
                    rpc_method: Some("subscriptions/listen".into()),
                    sent: Some(text.clone()),
                    request_id: Some(id.clone()),
                    fresh: true,
                    ..Default::default()
                };
                if let Conn::Stdio(t) = &mut conn {
                    let started = std::time::Instant::now();
                    // A new process may take its start-up time to answer.
                    let window = t.answer_timeout();
                    s.watched_ms = window.as_millis();
                    match t.write_line(text.as_bytes()).await {
                        Ok(()) => ex.frames = t.read_until(window, acknowledged).await,
                        Err(e) => ex.error = Some(e),
                    }
                    ex.ms = started.elapsed().as_millis() as u64;
                    ex.stderr = clip(&t.take_stderr(), 8 * 1024);
                }
                s.frames = ex.frames.clone();
                s.exchanges.push(ex);
                if let Some(t) = trigger {
                    let tbody = self.body_for(rev, "tools/call", Some(json!({"name": t.tool, "arguments": t.arguments})));
                    let tid = tbody["id"].clone();
                    let mut tex = self
                        .exchange(&mut conn, &format!("trigger: tools/call {} on the same process", t.tool), rev, &tbody, &[], true)
                        .await;
                    if let Conn::Stdio(p) = &mut conn {
                        // Whatever the change brings arrives soon after the reply.
                        tex.frames.extend(p.read_for(super::super::target::stdio::GRACE).await);
                    }
                    // The trigger's own response is not subscription traffic.
                    s.frames.extend(tex.frames.iter().filter(|f| f.id() != Some(&tid)).cloned());
                    s.exchanges.push(tex);
                    s.triggered = true;
                    let w = self.walk_on(&mut conn, rev, "tools/list", "tools", case).await;
                    s.tools_after = w.names();
                }
                for ex in &s.exchanges {
                    if let Some(st) = self.revs.get_mut(rev) {
                        super::log_frames(st, case, ex);
                    }
                }
                if let Conn::Stdio(t) = &mut conn {
                    t.shutdown().await;
                }
            }
        }
        Ok(s)
    }

    /// tools/call of a configured tool on the main connection.
    async fn call_named(&mut self, rev: &str, label: &str, t: &InputTool) -> Result<Exchange, String> {
        let p = json!({"name": t.tool, "arguments": t.arguments});
        let body = self.body_for(rev, "tools/call", Some(p));
        let ex = self.on_main(rev, label, &body).await?;
        if let Some(e) = &ex.error {
            return Err(format!("{label}: {e}"));
        }
        Ok(ex)
    }

    pub(super) async fn subscription_action(&mut self, case: &crate::suite::Case, with: Option<&Value>) -> StepOut {
        let rev = case.revision.clone();
        let check = with.and_then(|w| w.get("check")).and_then(|c| c.as_str()).unwrap_or("").to_string();
        let mut out = StepOut::default();
        let trigger = self.cfg.contract.listen_trigger.clone();
        if !matches!(check.as_str(), "acknowledged" | "unrequested" | "ids" | "list-changed") {
            return StepOut { error: Some(format!("suite problem: unknown subscriptions check `{check}`")), ..Default::default() };
        }
        if check == "list-changed" && trigger.is_none() {
            out.na =
                Some("no tool that changes the tool set is named in the target config ([subscriptions] trigger_tool = \"NAME\")".into());
            return out;
        }
        // The two subscriptions a trigger serves (an empty filter, and
        // toolsListChanged) are watched together, once, and judged by three
        // cases; the acknowledgment case watches its own two.
        let sessions: Vec<std::sync::Arc<Session>> = if check == "acknowledged" {
            // Every kind asked for, with both JSON types of id: the
            // acknowledgment must keep each.
            let all = json!({"toolsListChanged": true, "promptsListChanged": true, "resourcesListChanged": true});
            let subs = vec![(self.fresh_id(), all.clone()), (json!(format!("mcpcert-listen-{}", self.fresh_id())), all)];
            match self.listen_sessions(&rev, subs, None, &case.id).await {
                Ok(all) => all.into_iter().map(std::sync::Arc::new).collect(),
                Err(e) => return StepOut { error: Some(e), ..out },
            }
        } else {
            let cached = self.revs.get(&rev).and_then(|st| st.trigger_listens.clone());
            let pair = match cached {
                Some(p) => p,
                None => {
                    let subs = vec![(self.fresh_id(), json!({})), (self.fresh_id(), json!({"toolsListChanged": true}))];
                    let mut all = match self.listen_sessions(&rev, subs, trigger.as_ref(), &case.id).await {
                        Ok(all) => all.into_iter().map(std::sync::Arc::new),
                        Err(e) => return StepOut { error: Some(e), ..out },
                    };
                    let Some(quiet) = all.next() else {
                        return StepOut { error: Some("internal: no listen session".into()), ..out };
                    };
                    // Only one when the first was refused as unimplemented.
                    let tools = all.next().unwrap_or_else(|| quiet.clone());
                    if let Some(st) = self.revs.get_mut(&rev) {
                        st.trigger_listens = Some((quiet.clone(), tools.clone()));
                    }
                    (quiet, tools)
                }
            };
            vec![if check == "unrequested" { pair.0 } else { pair.1 }]
        };
        for s in sessions {
            out.exchanges.extend(s.exchanges.iter().cloned());
            let refused = refusal(&s).cloned();
            if let Some(r) = &refused {
                if r.pointer("/error/code").and_then(|c| c.as_i64()) == Some(-32601) {
                    out.na = Some(
                        "the server does not implement subscriptions/listen (-32601); the spec never states that the method itself is required (digest 14.8), so its rules do not apply"
                            .into(),
                    );
                    return out;
                }
                out.failures.push(format!("subscriptions/listen was refused: {}", brief(r)));
                continue;
            }
            if s.exchanges.first().is_some_and(|e| e.error.is_some() && e.frames.is_empty()) {
                out.error = Some(format!("subscriptions/listen: {}", s.exchanges[0].summary()));
                return out;
            }
            match check.as_str() {
                "acknowledged" => {
                    let (f, note) = judge_acknowledgment(&s);
                    out.failures.extend(f);
                    if let Some(n) = note {
                        out.exchanges.push(Exchange { label: "end of subscription".into(), note: Some(n), ..Default::default() });
                    }
                }
                "unrequested" => {
                    out.failures.extend(judge_unrequested(&s));
                    let acked = notifications(&s.frames)
                        .any(|v| v.get("method").and_then(|m| m.as_str()) == Some("notifications/subscriptions/acknowledged"));
                    if out.failures.is_empty() && !acked {
                        out.na = Some("the subscription was never acknowledged (subscriptions/acknowledged says why), so there is nothing on it to judge".into());
                    }
                }
                "ids" => {
                    let (f, seen) = judge_ids(&s);
                    out.failures.extend(f);
                    if seen == 0 && out.failures.is_empty() {
                        out.na = Some(if trigger.is_none() {
                            "no notification arrived on the subscription to judge; name a tool that changes the tool set in the config ([subscriptions] trigger_tool) to cause one".into()
                        } else {
                            "no notification arrived on the subscription after the trigger (see subscriptions/list-changed)".into()
                        });
                    }
                }
                _ => {
                    let arrived = notifications(&s.frames)
                        .any(|v| v.get("method").and_then(|m| m.as_str()) == Some("notifications/tools/list_changed"));
                    if !arrived {
                        out.failures.push(format!(
                            "after {} changed the tool set, no notifications/tools/list_changed arrived on the subscription {}",
                            trigger.as_ref().map(|t| t.tool.as_str()).unwrap_or("?"),
                            if s.own_stream {
                                format!("before its stream was closed (at most {} ms after subscriptions/listen)", s.watched_ms)
                            } else {
                                format!("within {} ms of the trigger's reply", crate::target::stdio::GRACE.as_millis())
                            }
                        ));
                    }
                    if s.tools_before == s.tools_after {
                        out.failures.push(format!(
                            "tools/list is the same before and after {} ran, so the trigger changed nothing: {:?}",
                            trigger.as_ref().map(|t| t.tool.as_str()).unwrap_or("?"),
                            s.tools_after
                        ));
                    }
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn session(id: Value, filter: Value, frames: &[Value]) -> Session {
        Session {
            id,
            filter,
            frames: frames.iter().map(|v| Frame::from_bytes(v.to_string().as_bytes(), 0)).collect(),
            exchanges: vec![],
            tools_before: vec![],
            tools_after: vec![],
            triggered: false,
            own_stream: true,
            watched_ms: 1500,
        }
    }

    fn ack(id: Value, honoured: Value) -> Value {
        json!({"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged", "params": {"_meta": {KEY_SUBSCRIPTION_ID: id}, "notifications": honoured}})
    }

    #[test]
    fn acknowledgment_rules() {
        let f = json!({"toolsListChanged": true});
        assert!(judge_acknowledgment(&session(json!(5), f.clone(), &[ack(json!(5), json!({"toolsListChanged": true}))])).0.is_empty());
        assert_eq!(
            judge_acknowledgment(&session(json!(5), f.clone(), &[ack(json!("5"), json!({}))])).0.len(),
            1,
            "string id for a numeric request"
        );
        assert_eq!(judge_acknowledgment(&session(json!("a"), f.clone(), &[])).0.len(), 1, "no acknowledgment");
        assert_eq!(
            judge_acknowledgment(&session(json!(5), f.clone(), &[ack(json!(5), json!({"promptsListChanged": true}))])).0.len(),
            1,
            "honours more than asked"
        );
        let end_ok = json!({"jsonrpc": "2.0", "id": 5, "result": {"resultType": "complete", "_meta": {KEY_SUBSCRIPTION_ID: 5}}});
        let (f1, note) = judge_acknowledgment(&session(json!(5), f.clone(), &[ack(json!(5), json!({})), end_ok]));
        assert!(f1.is_empty() && note.is_some());
        let end_bad = json!({"jsonrpc": "2.0", "id": 5, "result": {"resultType": "complete"}});
        assert_eq!(judge_acknowledgment(&session(json!(5), f.clone(), &[ack(json!(5), json!({})), end_bad])).0.len(), 1);
        let cancelled = json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 5}});
        assert!(judge_acknowledgment(&session(json!(5), f, &[ack(json!(5), json!({})), cancelled])).1.is_some());
    }

    #[test]
    fn unrequested_and_ids() {
        let changed =
            json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed", "params": {"_meta": {KEY_SUBSCRIPTION_ID: 5}}});
        let progress = json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": 5, "progress": 1}});
        assert!(
            judge_unrequested(&session(json!(5), json!({"toolsListChanged": true}), &[ack(json!(5), json!({})), changed.clone()]))
                .is_empty()
        );
        assert_eq!(judge_unrequested(&session(json!(5), json!({}), &[changed.clone()])).len(), 1);
        assert_eq!(judge_unrequested(&session(json!(5), json!({}), &[progress.clone()])).len(), 1);
        let mut on_process = session(json!(5), json!({}), &[progress]);
        on_process.own_stream = false;
        assert!(judge_unrequested(&on_process).is_empty(), "stdio: another request's progress is not the subscription's");
        let bare = json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"});
        assert_eq!(judge_ids(&session(json!(5), json!({}), &[changed])), (vec![], 1));
        assert_eq!(judge_ids(&session(json!(5), json!({}), &[bare])).0.len(), 1);
    }
}
