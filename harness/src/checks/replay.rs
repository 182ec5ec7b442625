//! The replay behind the opt-in load check (`--load N`), a shared fact:
//! after the catalogue, the run's
//! read-only requests (discover, the first page of each advertised list, a
//! read of the first listed resource, prompts/get of a listed prompt that
//! needs no arguments, and valid calls of read-only tools the policy allows)
//! are sent once in a row for their serial answers, then replayed from N
//! connections (stdio: processes) at once, a bounded number of times and
//! for a bounded time. The cases judge what came back: every response
//! carries its own request's id, every request is answered exactly once,
//! and every answer is its serial one (fields that legitimately change
//! between two calls left aside).

use super::Cx;
use super::walk::ListMethod;
use crate::record::{Exchange, LoadStats};
use crate::session::Msg;
use crate::wire::Revision;
use serde_json::{Value, json};
use std::time::{Duration, Instant};

/// One request the replay repeats.
#[derive(Debug, Clone)]
pub struct Template {
    pub label: String,
    pub method: String,
    pub params: Option<Value>,
    /// Its serial answer: the result or error, as compared.
    pub serial: Option<Value>,
}

/// One replayed request and what came back.
#[derive(Debug, Clone)]
pub struct Shot {
    pub template: usize,
    pub conn: usize,
    pub id: Value,
    pub ex: Exchange,
}

/// The replay, a shared fact of the revision.
#[derive(Debug, Default)]
pub struct LoadRun {
    pub templates: Vec<Template>,
    pub shots: Vec<Shot>,
    pub connections: usize,
    pub planned: usize,
    pub wall_ms: u64,
    /// Why not every planned request was sent.
    pub cut_short: Option<String>,
    /// Requests not replayed, and why.
    pub left_out: Option<String>,
    /// The serial pass and the connections' set-up.
    pub setup: Vec<Exchange>,
}

impl LoadRun {
    pub fn stats(&self, revision: Revision) -> LoadStats {
        let mut ms: Vec<u64> = self.shots.iter().map(|s| s.ex.ms).collect();
        ms.sort_unstable();
        let pct = |p: f64| if ms.is_empty() { 0 } else { ms[((ms.len() - 1) as f64 * p).round() as usize] };
        let answered = self.shots.iter().filter(|s| own_responses(s).len() == 1).count();
        LoadStats {
            revision,
            connections: self.connections,
            requests: self.shots.len(),
            answered,
            wall_ms: self.wall_ms,
            per_second: if self.wall_ms == 0 {
                0.0
            } else {
                (self.shots.len() as f64 * 1000.0 / self.wall_ms as f64 * 10.0).round() / 10.0
            },
            p50_ms: pct(0.5),
            p90_ms: pct(0.9),
            p99_ms: pct(0.99),
            max_ms: ms.last().copied().unwrap_or(0),
        }
    }

    pub fn summary(&self, rev: Revision) -> Exchange {
        let s = self.stats(rev);
        Exchange::note(
            "load replay",
            format!(
                "{} requests ({} kinds) over {} connections at once in {} ms: {} per second; latency p50 {} ms, p90 {} ms, p99 {} ms, max {} ms{}",
                s.requests,
                self.templates.len(),
                s.connections,
                s.wall_ms,
                s.per_second,
                s.p50_ms,
                s.p90_ms,
                s.p99_ms,
                s.max_ms,
                [&self.cut_short, &self.left_out].iter().filter_map(|c| c.as_ref().map(|c| format!("; {c}"))).collect::<String>()
            ),
        )
    }
}

/// The response-shaped frames of a shot (a result or an error with an id).
pub fn responses(s: &Shot) -> Vec<Value> {
    let mut out: Vec<Value> = s.ex.response.iter().cloned().collect();
    for f in &s.ex.frames {
        let v = f.value.clone().or_else(|| serde_json::from_str::<Value>(&f.raw).ok());
        if let Some(v) = v
            && (v.get("result").is_some() || v.get("error").is_some())
            && v.get("method").is_none()
            && !out.contains(&v)
        {
            out.push(v);
        }
    }
    out
}

fn own_responses(s: &Shot) -> Vec<Value> {
    responses(s).into_iter().filter(|r| r.get("id") == Some(&s.id)).collect()
}

/// What of an answer must be the same on every call: a list's items, a
/// read's contents, a call's isError and block types, an error's code;
/// `_meta` (and with it cache hints and timestamps) left aside.
pub fn comparable(method: &str, response: &Value) -> Value {
    if let Some(e) = response.get("error") {
        return json!({"error": e.get("code")});
    }
    let mut r = response.get("result").cloned().unwrap_or(Value::Null);
    if let Some(o) = r.as_object_mut() {
        o.remove("_meta");
        o.remove("ttlMs");
        // A cursor is opaque (it may differ on every call); whether there
        // is one is compared. Items in any order: the order is another
        // rule's (tools/list-deterministic-order).
        if let Some(c) = o.get_mut("nextCursor") {
            *c = json!(true);
        }
        for key in ["tools", "prompts", "resources", "resourceTemplates"] {
            if let Some(Value::Array(items)) = o.get_mut(key) {
                items.sort_by_key(|v| v.to_string());
            }
        }
    }
    match method {
        "tools/call" => json!({
            "isError": r.get("isError").cloned().unwrap_or(json!(false)),
            "blocks": r.get("content").and_then(|c| c.as_array()).map(|a| a.iter().map(|b| b.get("type").cloned().unwrap_or(Value::Null)).collect::<Vec<_>>()),
        }),
        "resources/read" => json!(
            r.get("contents")
                .and_then(|c| c.as_array())
                .map(|a| a.iter().map(|c| json!({"uri": c.get("uri"), "mimeType": c.get("mimeType")})).collect::<Vec<_>>())
        ),
        _ => r,
    }
}

/// The requests to replay, from what the run already found.
async fn templates(cx: &Cx<'_>) -> Vec<Template> {
    let mut out = Vec::new();
    let mut add = |label: &str, method: &str, params: Option<Value>| {
        out.push(Template { label: label.into(), method: method.into(), params, serial: None })
    };
    if cx.rev.is_stateless() {
        add("server/discover", "server/discover", None);
    }
    for list in [ListMethod::Tools, ListMethod::Prompts, ListMethod::Resources, ListMethod::Templates] {
        if cx.advertises(list.capability()) {
            add(list.method(), list.method(), None);
        }
    }
    if cx.advertises("resources")
        && let Ok(w) = cx.facts.list_walk(cx, ListMethod::Resources).await
        && let Some(uri) = w.items.first().and_then(|r| r.get("uri")).and_then(|u| u.as_str())
    {
        add("resources/read (first listed)", "resources/read", Some(json!({"uri": uri})));
    }
    if cx.advertises("prompts")
        && let Ok(w) = cx.facts.list_walk(cx, ListMethod::Prompts).await
        && let Some(p) = w.items.iter().find(|p| {
            p.get("arguments").and_then(|a| a.as_array()).is_none_or(|a| a.iter().all(|x| x.get("required") != Some(&json!(true))))
        })
        && let Some(name) = p.get("name").and_then(|n| n.as_str())
    {
        add("prompts/get (no arguments)", "prompts/get", Some(json!({"name": name})));
    }
    // Valid calls of read-only tools whose arguments need no Mcp-Param
    // header (a replay repeats them, so only tools that change nothing).
    if let (Ok(w), Ok(calls)) = (cx.facts.tools_walk(cx).await, cx.facts.tool_calls(cx).await) {
        for r in calls.records.iter().filter(|r| r.kind == super::calls::CallKind::Valid && r.asked == 0).take(3) {
            let Some(tool) = w.items.iter().find(|t| t.get("name").and_then(|n| n.as_str()) == Some(r.tool.as_str())) else { continue };
            let read_only = tool.pointer("/annotations/readOnlyHint") == Some(&json!(true));
            let mirrored = tool.get("inputSchema").is_some_and(|s| s.to_string().contains("x-mcp-header"));
            let answered = r.ex.result().is_some();
            let args =
                r.ex.sent
                    .as_deref()
                    .and_then(|s| serde_json::from_str::<Value>(s).ok())
                    .and_then(|b| b.pointer("/params/arguments").cloned());
            if read_only && !mirrored && answered && cx.policy.call_allowed(tool, &r.tool).is_ok() {
                add(&format!("tools/call {}", r.tool), "tools/call", Some(json!({"name": r.tool, "arguments": args.unwrap_or(json!({}))})));
            }
        }
    }
    out
}

/// The `Facts::load` fact: the serial pass, then the replay.
pub async fn replay(cx: &Cx<'_>) -> Result<LoadRun, String> {
    let spec = cx.policy.load.ok_or("the load check is off (--load N turns it on)")?;
    let mut run = LoadRun { connections: spec.connections, planned: spec.requests, ..Default::default() };
    run.templates = templates(cx).await;
    if run.templates.is_empty() {
        // Nothing to replay: the cases say so (n/a).
        return Ok(run);
    }
    // The serial answers, one request after another on a connection of its own.
    let mut first = cx.session.fresh(cx.rev, true, cx.case).await.map_err(|e| e.to_string())?;
    run.setup.append(&mut first.exchanges);
    for t in run.templates.iter_mut() {
        let body = cx.request(&t.method, t.params.clone());
        let ex = cx.exchange(&mut first.conn, &Msg::new(cx.rev, &format!("serial: {}", t.label), &body)).await;
        t.serial = ex.response.as_ref().map(|r| comparable(&t.method, r));
        run.setup.push(ex);
    }
    first.conn.shutdown().await;
    // Its start permit too: the replay's connections need them.
    drop(first);
    // Only requests answered when sent alone are replayed: the others have
    // no answer to compare with (the catalogue's cases judge them).
    let unanswered: Vec<String> = run.templates.iter().filter(|t| t.serial.is_none()).map(|t| t.label.clone()).collect();
    run.templates.retain(|t| t.serial.is_some());
    if run.templates.is_empty() {
        return Err(format!("none of the requests to replay was answered when sent one at a time ({})", unanswered.join(", ")));
    }
    if !unanswered.is_empty() {
        run.left_out = Some(format!("not replayed, as they got no answer when sent alone: {}", unanswered.join(", ")));
    }
    // The connections, all open (and, over stdio, each process warmed by
    // its first answered message, the handshake or server/discover that
    // `fresh` sends, a few starting at once) before the first request of
    // the replay: the load is the server's, not its start-up's.
    let opened = futures_util::future::join_all((0..spec.connections).map(|_| async move {
        let mut f = cx.session.fresh(cx.rev, true, cx.case).await?;
        f.permit = None;
        Ok::<_, crate::session::SessionError>(f)
    }))
    .await;
    let mut conns = Vec::new();
    let mut first_error = None;
    for f in opened {
        match f {
            Ok(mut f) => {
                run.setup.append(&mut f.exchanges);
                conns.push(f.conn);
            }
            Err(e) => first_error = first_error.or(Some(e.to_string())),
        }
    }
    if let Some(e) = first_error {
        for mut c in conns {
            c.shutdown().await;
        }
        return Err(format!("opening {} connections at once: {e}", spec.connections));
    }
    let deadline = Instant::now() + Duration::from_secs(spec.seconds);
    let started = Instant::now();
    let n_templates = run.templates.len();
    let templates = &run.templates;
    let tasks = conns.iter_mut().enumerate().map(|(c, conn)| async move {
        let mut shots = Vec::new();
        let mut k = c;
        while k < spec.requests {
            if Instant::now() >= deadline {
                break;
            }
            let t = &templates[k % n_templates];
            let body = cx.request(&t.method, t.params.clone());
            let id = body.get("id").cloned().unwrap_or(Value::Null);
            let ex =
                cx.exchange(conn, &Msg::new(cx.rev, &format!("load {k}: {} (connection {})", t.label, c + 1), &body).on_purpose()).await;
            shots.push(Shot { template: k % n_templates, conn: c, id, ex });
            k += spec.connections;
        }
        shots
    });
    let mut shots: Vec<Shot> = futures_util::future::join_all(tasks).await.into_iter().flatten().collect();
    run.wall_ms = started.elapsed().as_millis() as u64;
    for mut c in conns {
        c.shutdown().await;
    }
    shots.sort_by_key(|s| s.id.as_i64().unwrap_or(0));
    if shots.len() < spec.requests {
        run.cut_short = Some(format!("stopped after {} s with {} of {} requests sent", spec.seconds, shots.len(), spec.requests));
    }
    run.shots = shots;
    Ok(run)
}
