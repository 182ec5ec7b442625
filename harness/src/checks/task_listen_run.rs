//! A task's listen streams (tasks extension, §Task Status Notifications),
//! gathered once for the cases that judge them: the `[tasks]` tool called
//! declaring the extension, then `subscriptions/listen` for its task id
//! (`notifications.taskIds`), first declaring the extension (watched while
//! the task runs), then declaring nothing (answered at once, or not).
//! Over stdio all of it happens on one new process, where the task lives;
//! over HTTP each subscription has a connection of its own. The streams
//! are not filed in the frame log: the cases that asked for them judge
//! them.

use super::Cx;
use super::judge::tasks::{TASKS_EXTENSION, handle_task_id, is_task_handle};
use super::task_run::request;
use crate::record::{Exchange, Transport};
use crate::session::{Connection, Msg, Outgoing};
use crate::wire::{self, KEY_CLIENT_CAPS, MetaMode, brief};
use serde_json::{Value, json};
use std::time::Duration;

/// How long the subscription that declares the extension is watched.
const WATCH: Duration = Duration::from_millis(2000);

/// The subscription ids mcpcert gives the two streams.
pub const DECLARED_ID: &str = "mcpcert-task-listen";
pub const UNDECLARED_ID: &str = "mcpcert-task-listen-undeclared";

pub struct TaskListen {
    /// The call that made the task, and the task's id (`None`: why the
    /// call made no task).
    pub create: Exchange,
    pub task: Result<String, String>,
    /// The listen declaring the extension, and the one declaring nothing.
    pub declared: Option<Exchange>,
    pub undeclared: Option<Exchange>,
}

/// The frames of a listen exchange that answer it or carry its
/// subscription id (over stdio other traffic of the process may mix in).
pub fn frames_of<'a>(ex: &'a Exchange, sub: &'a str) -> impl Iterator<Item = &'a Value> + 'a {
    ex.frames.iter().filter_map(|f| f.value.as_ref()).filter(move |v| {
        v.get("id").and_then(Value::as_str) == Some(sub)
            || super::judge::listen::sub_id(v).and_then(Value::as_str) == Some(sub)
            || ex.transport == Some(Transport::Http)
    })
}

/// The listen's own answer (a result or an error), if one came: the
/// response with its id, else an error whose id is null (a server that
/// could not read the id; nothing else was outstanding on the stream or,
/// over stdio, on the process meanwhile).
pub fn answer<'a>(ex: &'a Exchange, sub: &str) -> Option<&'a Value> {
    let mut values = ex.frames.iter().filter_map(|f| f.value.as_ref());
    let all: Vec<&Value> = values.by_ref().collect();
    all.iter()
        .find(|v| v.get("id").and_then(Value::as_str) == Some(sub))
        .or_else(|| all.iter().find(|v| v.get("id") == Some(&Value::Null) && v.get("error").is_some()))
        .copied()
}

fn listen_body(sub: &str, task: &str, declare: bool) -> Value {
    let p = json!({"notifications": {"taskIds": [task]}});
    let mut params = wire::modern_params(Some(&p), MetaMode::Full, wire::MODERN).unwrap_or(json!({}));
    params["_meta"][KEY_CLIENT_CAPS] = if declare { json!({"extensions": {TASKS_EXTENSION: {}}}) } else { json!({}) };
    wire::request(&json!(sub), "subscriptions/listen", Some(params))
}

/// One subscription on `conn`: its frames for up to `window`, or until
/// the listen is answered (a result or an error ends a subscription) or,
/// with `to_ack`, acknowledged.
async fn listen_on(cx: &Cx<'_>, conn: &mut Connection, sub: &str, body: &Value, window: Duration, to_ack: bool) -> Exchange {
    let text = body.to_string();
    let http = cx.transport() != Transport::Stdio;
    let headers = if http { wire::modern_headers(body) } else { Vec::new() };
    let exact = cx.session.exact_names(cx.rev);
    let shown = if http { cx.session.shown_headers(conn, &headers, exact) } else { Vec::new() };
    let mut ex = Exchange {
        label: format!("subscriptions/listen {sub} (watched for up to {} ms)", window.as_millis()),
        transport: Some(cx.transport()),
        http_method: http.then(|| "POST".into()),
        rpc_method: Some("subscriptions/listen".into()),
        sent_headers: shown,
        sent: Some(text.clone()),
        request_id: Some(json!(sub)),
        fresh: true,
        stream: true,
        ..Default::default()
    };
    cx.session.count_sent(1);
    let done = |frames: &[crate::record::Frame]| {
        frames.iter().filter_map(|f| f.value.as_ref()).any(|v| {
            v.get("id").and_then(Value::as_str) == Some(sub)
                || (to_ack
                    && v.get("method").and_then(Value::as_str) == Some("notifications/subscriptions/acknowledged")
                    && (http || super::judge::listen::sub_id(v).and_then(Value::as_str) == Some(sub)))
        })
    };
    let out = Outgoing { exact_names: exact, ..Outgoing::message(&text, &headers, None) };
    ex.fill_from(conn.watch(&out, window, &done).await);
    ex
}

/// The fact: see the module's comment.
pub async fn gather(cx: &Cx<'_>, tool: &crate::config::InputTool) -> Result<TaskListen, String> {
    let stdio = cx.transport() == Transport::Stdio;
    // stdio: one process for the task and both subscriptions.
    let mut proc = if stdio { Some(cx.session.fresh(cx.rev, true, cx.case).await.map_err(|e| e.to_string())?.conn) } else { None };
    let label = format!("tools/call {} declaring the tasks extension", tool.tool);
    let body = request(cx, "tools/call", json!({"name": tool.tool, "arguments": tool.arguments}), true, None);
    let create = match proc.as_mut() {
        Some(c) => cx.exchange(c, &Msg::new(cx.rev, &label, &body)).await,
        None => cx.on_main(&label, &body).await.map_err(|e| e.to_string())?,
    };
    if let Some(e) = &create.error {
        return Err(format!("{label}: {e}"));
    }
    let result = create.result().cloned();
    let task = match &result {
        Some(r) if is_task_handle(r) => handle_task_id(r).ok_or_else(|| format!("{label}: the task handle has no taskId ({})", brief(r))),
        Some(r) => Err(format!("{label} was answered without a task ({}): no task to listen for", brief(r))),
        None => Err(format!("{label} was refused ({}): no task to listen for", create.summary())),
    };
    let Ok(id) = task.clone() else {
        return Ok(TaskListen { create, task, declared: None, undeclared: None });
    };
    let mut streams = Vec::new();
    for (sub, declare, window) in [(DECLARED_ID, true, WATCH), (UNDECLARED_ID, false, Duration::from_secs(10))] {
        let body = listen_body(sub, &id, declare);
        let ex = match proc.as_mut() {
            Some(c) => listen_on(cx, c, sub, &body, window, !declare).await,
            None => {
                let mut c = cx.session.open().map_err(|e| e.to_string())?;
                let ex = listen_on(cx, &mut c, sub, &body, window, !declare).await;
                c.kill();
                ex
            }
        };
        streams.push(ex);
    }
    if let Some(mut c) = proc {
        c.shutdown().await;
    }
    let undeclared = streams.pop();
    let declared = streams.pop();
    Ok(TaskListen { create, task, declared, undeclared })
}
