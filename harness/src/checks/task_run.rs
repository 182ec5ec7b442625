//! The `[tasks]` tool's task followed to its end, once per run (a shared
//! fact the tasks extension's cases judge): the call declaring the
//! extension, `tasks/get` at once, then polls bounded by the server's
//! `pollIntervalMs` and the run's budget (the console shows the wait),
//! and two more polls after the terminal status. In a 2025-11-25 session
//! the same, with that revision's experimental tasks: the call carries
//! `params.task`, the handle nests the task, polls follow `pollInterval`,
//! and the finished task's `tasks/result` is asked for once.

use super::judge::tasks::{TASKS_EXTENSION, handle_task_id, is_task_handle, is_terminal};
use super::{Cx, Outcome};
use crate::config::InputTool;
use crate::record::Exchange;
use crate::wire::{self, KEY_CLIENT_CAPS, MetaMode};
use serde_json::{Value, json};
use std::time::{Duration, Instant};

/// How following the task ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunEnd {
    /// It reached this terminal status.
    Terminal(String),
    /// The call gave no task (the server decides; never creating one is
    /// allowed): why, for the n/a.
    NotTask(String),
    /// Still not terminal when the budget ran out: what was seen.
    Budget(String),
    /// A poll failed (no answer, or a JSON-RPC error): what happened.
    Broken(String),
}

/// The shared task run for a case that judges it: the run, the case's
/// outcome so far (the call's exchange) and the task id; or how the case
/// ends at once (`error` when it could not be gathered, `n/a` when the
/// call made no task).
pub async fn shared(cx: &Cx<'_>) -> Result<(std::sync::Arc<TaskRun>, Outcome, String), Outcome> {
    let run = cx.facts.task_run(cx).await.map_err(Outcome::error)?;
    let mut out = Outcome { exchanges: vec![run.create.clone()], ..Default::default() };
    if let RunEnd::NotTask(why) = &run.end {
        out.set_na(why.clone());
        return Err(out);
    }
    let id = run.id.clone().unwrap_or_default();
    Ok((run, out, id))
}

/// Whether the task reached a terminal status; if not (and `needed`),
/// the case is an `error` saying what was seen, never a pass.
pub fn ended(run: &TaskRun, out: &mut Outcome, needed: bool) -> bool {
    match &run.end {
        RunEnd::Terminal(_) => true,
        RunEnd::Budget(why) | RunEnd::Broken(why) => {
            if needed {
                out.set_error(why.clone());
            } else {
                out.exchanges.push(Exchange::note("the task did not end", why.clone()));
            }
            false
        }
        RunEnd::NotTask(_) => false,
    }
}

/// The `[tasks]` tool's call and its task, followed to the end.
#[derive(Debug)]
pub struct TaskRun {
    pub tool: String,
    pub create: Exchange,
    pub id: Option<String>,
    /// `tasks/get` right after the handle.
    pub first_get: Option<Exchange>,
    /// The later polls kept: each that showed a new status, or failed,
    /// and the one that reached the end.
    pub polls: Vec<Exchange>,
    /// Polls in all (first one included).
    pub poll_count: usize,
    /// Every status seen, in order (first poll included), repeats folded.
    pub statuses: Vec<String>,
    /// Two more polls after the terminal status.
    pub after: Vec<Exchange>,
    /// 2025-11-25: `tasks/result` of the finished task.
    pub result: Option<Exchange>,
    pub end: RunEnd,
}

impl TaskRun {
    /// Every `tasks/get` exchange kept, in order.
    pub fn gets(&self) -> impl Iterator<Item = &Exchange> {
        self.first_get.iter().chain(&self.polls).chain(&self.after)
    }

    /// The last `tasks/get` result before the extra polls (the terminal one).
    pub fn terminal(&self) -> Option<&Value> {
        self.first_get.iter().chain(&self.polls).last().and_then(|e| e.result())
    }
}

/// A request of 2026-07-28 whose client capabilities declare the tasks
/// extension (or none, `declare` false), with `extra` as its capabilities'
/// other members.
pub fn request(cx: &Cx<'_>, method: &str, p: Value, declare: bool, extra_caps: Option<Value>) -> Value {
    let mut params = wire::modern_params(Some(&p), MetaMode::Full, wire::MODERN).unwrap_or(json!({}));
    let mut caps = extra_caps.unwrap_or(json!({}));
    if declare {
        caps["extensions"] = json!({TASKS_EXTENSION: {}});
    }
    params["_meta"][KEY_CLIENT_CAPS] = caps;
    wire::request(&cx.session.next_id(), method, Some(params))
}

pub async fn main_ex(cx: &Cx<'_>, label: &str, body: &Value) -> Result<Exchange, String> {
    cx.on_main(label, body).await.map_err(|e| e.to_string())
}

/// Whether the case runs in a session of 2025-11-25's experimental tasks
/// (an initialize-era revision) rather than the extension's.
pub fn legacy(cx: &Cx<'_>) -> bool {
    !cx.rev.is_stateless()
}

/// The `ttl` a 2025-11-25 task-augmented call asks for.
pub const LEGACY_TTL_MS: u64 = 60_000;

/// The configured tool's call asking for a task: declaring the extension,
/// or (2025-11-25) with `params.task`.
pub async fn call_tool(cx: &Cx<'_>, t: &InputTool, label: &str) -> Result<Exchange, String> {
    main_ex(cx, label, &call_body(cx, t)).await
}

/// The request of `call_tool`.
pub fn call_body(cx: &Cx<'_>, t: &InputTool) -> Value {
    if legacy(cx) {
        cx.request("tools/call", Some(json!({"name": t.tool, "arguments": t.arguments, "task": {"ttl": LEGACY_TTL_MS}})))
    } else {
        request(cx, "tools/call", json!({"name": t.tool, "arguments": t.arguments}), true, None)
    }
}

/// What the call asking for a task is called in labels.
pub fn asking(cx: &Cx<'_>) -> &'static str {
    if legacy(cx) { "with params.task" } else { "declaring the tasks extension" }
}

pub fn get_body(cx: &Cx<'_>, id: &str, declare: bool) -> Value {
    if legacy(cx) {
        return cx.request("tasks/get", Some(json!({"taskId": id})));
    }
    request(cx, "tasks/get", json!({"taskId": id}), declare, None)
}

/// The wait before the next poll: the server's `pollIntervalMs`
/// (2025-11-25: `pollInterval`), at least 100 ms, at most 5 s; 500 ms
/// when it gives none.
pub fn interval(t: Option<&Value>) -> Duration {
    let ms = t.and_then(|t| t.get("pollIntervalMs").or_else(|| t.get("pollInterval"))).and_then(Value::as_u64).unwrap_or(500);
    Duration::from_millis(ms.clamp(100, 5_000))
}

/// Call the `[tasks]` tool declaring the extension and follow the task it
/// makes (if it makes one) with `tasks/get` until a terminal status or the
/// budget, then poll twice more.
pub async fn follow(cx: &Cx<'_>) -> Result<TaskRun, String> {
    let t = cx.facts.task_tool(cx).await?;
    let create = call_tool(cx, &t, &format!("tools/call {} {}", t.tool, asking(cx))).await?;
    let mut run = TaskRun {
        tool: t.tool.clone(),
        create,
        id: None,
        first_get: None,
        polls: Vec::new(),
        poll_count: 0,
        statuses: Vec::new(),
        after: Vec::new(),
        result: None,
        end: RunEnd::NotTask(String::new()),
    };
    if let Some(e) = &run.create.error {
        return Err(format!("tools/call {}: {e}", t.tool));
    }
    let handle = match run.create.result() {
        Some(r) if is_task_handle(r) => r.clone(),
        Some(_) if legacy(cx) => {
            run.end = RunEnd::NotTask(format!(
                "the server answered tools/call {} with params.task synchronously (2025-11-25: a server that does not take the request as a task processes it normally), so the task path was not exercised",
                t.tool
            ));
            return Ok(run);
        }
        Some(_) => {
            run.end = RunEnd::NotTask(format!(
                "the server answered tools/call {} synchronously although the request declared the tasks extension: it decides per request whether to make a task, and never making one is allowed, so the task path was not exercised",
                t.tool
            ));
            return Ok(run);
        }
        None => {
            run.end = RunEnd::NotTask(format!("tools/call {} gave no result ({}), so no task to follow", t.tool, run.create.summary()));
            return Ok(run);
        }
    };
    let Some(id) = handle_task_id(&handle) else {
        run.end = RunEnd::Broken("the task handle has no taskId to poll".into());
        return Ok(run);
    };
    run.id = Some(id.clone());
    let started = Instant::now();
    let budget = cx.policy.task_budget;
    // 2025-11-25 nests the task in the handle.
    let mut last = Some(handle.get("task").filter(|t| t.is_object()).cloned().unwrap_or(handle));
    let mut first = true;
    loop {
        if !first {
            let wait = interval(last.as_ref());
            let status = run.statuses.last().cloned().unwrap_or_default();
            cx.session.show_waiting(Some((
                format!(
                    "task {} of {} ({status}, poll {}; budget {} s)",
                    crate::record::clip(&id, 16),
                    t.tool,
                    run.poll_count,
                    budget.as_secs()
                ),
                started,
            )));
            tokio::time::sleep(wait).await;
            cx.session.show_waiting(None);
        }
        let label =
            if first { "tasks/get right after the task handle".to_string() } else { format!("tasks/get (poll {})", run.poll_count + 1) };
        let ex = main_ex(cx, &label, &get_body(cx, &id, true)).await?;
        run.poll_count += 1;
        let result = ex.result().cloned();
        let status = result.as_ref().and_then(|r| r.get("status")).and_then(Value::as_str).map(String::from);
        let changed = status.is_some() && run.statuses.last() != status.as_ref();
        let failed = ex.error.is_some() || result.is_none();
        let done = status.as_deref().is_some_and(is_terminal);
        let summary = ex.summary();
        if first {
            run.first_get = Some(ex);
        } else if changed || failed || done {
            run.polls.push(ex);
        }
        if let Some(s) = status.clone()
            && changed
        {
            run.statuses.push(s);
        }
        if failed && !first {
            run.end = RunEnd::Broken(format!("tasks/get (poll {}) gave no task: {summary}", run.poll_count));
            return Ok(run);
        }
        if done {
            run.end = RunEnd::Terminal(status.unwrap_or_default());
            break;
        }
        if started.elapsed() >= budget {
            run.end = RunEnd::Budget(format!(
                "the task {id} was still not terminal after {} polls over {:.1} s, the budget ([tasks] budget_seconds = {}); statuses seen: {}",
                run.poll_count,
                started.elapsed().as_secs_f64(),
                budget.as_secs(),
                run.statuses.join(" → ")
            ));
            return Ok(run);
        }
        first = false;
        if result.is_some() {
            last = result;
        }
    }
    // Watched long enough to see a change: two poll intervals, and at
    // least a second in all.
    for k in 1..=2 {
        tokio::time::sleep(interval(last.as_ref()).max(Duration::from_millis(500))).await;
        run.after.push(main_ex(cx, &format!("tasks/get again after the terminal status ({k} of 2)"), &get_body(cx, &id, true)).await?);
    }
    if legacy(cx) {
        let body = cx.request("tasks/result", Some(json!({"taskId": id})));
        run.result = Some(main_ex(cx, "tasks/result of the finished task", &body).await?);
    }
    Ok(run)
}
