//! 2025-11-25's experimental tasks (`capabilities.tasks`, digest §17.4),
//! with the tool the config names in `[tasks]`: the task-augmented call
//! (`params.task`), its nested `CreateTaskResult`, `tasks/get` polled to a
//! terminal status (the shared fact `Facts::task_run`, followed as
//! `task_run::follow` does in this revision), `tasks/result`, `tasks/list`,
//! `tasks/cancel`, unknown ids and the related-task metadata. Cases apply
//! only to a server whose initialize result declares `capabilities.tasks`
//! (the suite's `applies.capabilities`); those of `tasks/list` and
//! `tasks/cancel` only when that part is declared.

use super::judge::tasks::{handle_task_id, is_task_handle, is_terminal, legacy_task_problems};
use super::task_run::{TaskRun, call_body, call_tool, ended, get_body, main_ex};
use super::{Check, Cx, Need, Outcome};
use crate::record::Exchange;
use crate::session::Msg;
use crate::wire::{Revision, brief};
use serde::Deserialize;
use serde_json::{Value, json};

/// The `_meta` key that ties a message to a task.
const RELATED: &str = "io.modelcontextprotocol/related-task";
/// A task id no server made.
const UNKNOWN: &str = "mcpcert-unknown-task-5b1f0c9e7a24";

/// Which rule a `legacy_task_probe` case judges.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LegacyCheck {
    CreateShape,
    GetShape,
    StatusOrder,
    Result,
    ResultRelatedTask,
    RelatedTaskIgnored,
    Listed,
    ListInvalidCursor,
    CancelWorking,
    CancelTerminal,
    UnknownId,
    RequiredWithoutTask,
    ForbiddenWithTask,
}

impl LegacyCheck {
    fn uses_tool(self) -> bool {
        !matches!(self, LegacyCheck::UnknownId | LegacyCheck::ListInvalidCursor | LegacyCheck::ForbiddenWithTask)
    }

    /// The part of `capabilities.tasks` the rule needs declared.
    fn needs_part(self) -> Option<&'static str> {
        match self {
            LegacyCheck::Listed | LegacyCheck::ListInvalidCursor => Some("list"),
            LegacyCheck::CancelWorking | LegacyCheck::CancelTerminal => Some("cancel"),
            _ => None,
        }
    }
}

/// One rule of 2025-11-25's experimental tasks.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LegacyTaskProbe {
    check: LegacyCheck,
}

impl Check for LegacyTaskProbe {
    const NAME: &'static str = "legacy_task_probe";
    const ABOUT: &'static str = "one rule (`check`) of 2025-11-25's experimental tasks, most with the tool the config names in [tasks], called with params.task and followed to its end";
    const REVISIONS: &'static [Revision] = &[Revision::R2025_11_25];

    fn needs(&self) -> Vec<Need> {
        if self.check.uses_tool() { vec![Need::TaskTool] } else { Vec::new() }
    }

    fn calls_task_tool(&self) -> bool {
        self.check.uses_tool()
    }

    async fn run(&self, cx: &Cx<'_>) -> Outcome {
        if let Some(part) = self.check.needs_part() {
            let caps = cx.session.info(cx.rev).and_then(|i| i.capabilities.clone()).unwrap_or_default();
            if caps.pointer(&format!("/tasks/{part}")).is_none() {
                return Outcome::na(format!(
                    "the server does not declare capabilities.tasks.{part}, so it does not offer tasks/{part} (2025-11-25: each part is declared on its own)"
                ));
            }
        }
        match self.check {
            LegacyCheck::UnknownId => return unknown(cx).await,
            LegacyCheck::ForbiddenWithTask => return forbidden_with_task(cx).await,
            LegacyCheck::ListInvalidCursor => return invalid_cursor(cx).await,
            _ => {}
        }
        let t = match cx.facts.task_tool(cx).await {
            Ok(t) => t,
            Err(why) => return Outcome::na(why),
        };
        if let Some(why) = cx.policy.forbids(&t.tool) {
            return Outcome::na(why);
        }
        match self.check {
            LegacyCheck::RequiredWithoutTask => return required_without_task(cx, &t).await,
            LegacyCheck::CancelWorking => return cancel_working(cx, &t).await,
            LegacyCheck::RelatedTaskIgnored => return related_ignored(cx, &t).await,
            _ => {}
        }
        let (run, mut out, id) = match super::task_run::shared(cx).await {
            Ok(r) => r,
            Err(out) => return out,
        };
        match self.check {
            LegacyCheck::CreateShape => create_shape(&run, &mut out),
            LegacyCheck::GetShape => get_shape(&run, &id, &mut out),
            LegacyCheck::StatusOrder => status_order(&run, &mut out),
            LegacyCheck::Result | LegacyCheck::ResultRelatedTask => result(&run, &id, self.check, &mut out),
            LegacyCheck::Listed => listed(cx, &id, &mut out).await,
            LegacyCheck::CancelTerminal => cancel_terminal(cx, &run, &mut out).await,
            _ => {}
        }
        out
    }
}

/// The handle: `{task: Task}`, the task's fields as 2025-11-25 has them.
fn create_shape(run: &TaskRun, out: &mut Outcome) {
    let r = run.create.result().cloned().unwrap_or_default();
    match r.get("task") {
        Some(t @ Value::Object(_)) => {
            for p in legacy_task_problems(t) {
                out.fail(format!("tools/call {} with params.task: CreateTaskResult.task: {p}", run.tool));
            }
        }
        _ => out.fail(format!(
            "tools/call {} with params.task answered a task without the `task` object 2025-11-25's CreateTaskResult requires (the flat handle is the 2026-07-28 extension's): {}",
            run.tool,
            brief(&r)
        )),
    }
}

/// Every `tasks/get` answer is the task itself (flat), for the id asked.
fn get_shape(run: &TaskRun, id: &str, out: &mut Outcome) {
    out.exchanges.extend(run.gets().cloned());
    for ex in run.gets() {
        let Some(r) = ex.result() else { continue };
        let mut problems = legacy_task_problems(r);
        if let Some(got) = r.get("taskId").and_then(Value::as_str)
            && got != id
        {
            problems.push(format!("tasks/get for {id:?} answered a task with taskId {got:?}"));
        }
        for p in problems {
            if !out.failures.iter().any(|f| f.ends_with(&p)) {
                out.fail(format!("{}: {p}", ex.label));
            }
        }
    }
    if out.failures.is_empty() {
        ended(run, out, false);
    }
}

/// The statuses seen, from the handle on: working ↔ input_required, then
/// one terminal status that never changes.
fn status_order(run: &TaskRun, out: &mut Outcome) {
    out.exchanges.extend(run.gets().cloned());
    let status =
        |r: Option<&Value>| r.and_then(|r| r.get("status").or_else(|| r.pointer("/task/status"))).and_then(Value::as_str).map(String::from);
    let mut seen: Vec<(String, String)> = Vec::new();
    let label = format!("tools/call {}", run.tool);
    seen.extend(status(run.create.result()).map(|s| (label, s)));
    seen.extend(run.gets().filter_map(|e| status(e.result()).map(|s| (e.label.clone(), s))));
    for w in seen.windows(2) {
        let ((_, a), (at, b)) = (&w[0], &w[1]);
        let legal = a == b
            || (!is_terminal(a)
                && (is_terminal(b) || matches!((a.as_str(), b.as_str()), ("working", "input_required") | ("input_required", "working"))));
        if !legal {
            let all: Vec<&str> = seen.iter().map(|(_, s)| s.as_str()).collect();
            out.fail(format!(
                "{at}: the task went from {a} to {b}, which is not a legal move{} (statuses seen: {})",
                if is_terminal(a) { " (a terminal status never changes)" } else { "" },
                all.join(" → ")
            ));
            break;
        }
    }
    if out.failures.is_empty() {
        ended(run, out, true);
    }
}

/// `tasks/result` of the finished task: the tool's result (a
/// CallToolResult) or its JSON-RPC error (`Result`), and, on a result,
/// `_meta["io.modelcontextprotocol/related-task"]` naming the task
/// (`ResultRelatedTask`).
fn result(run: &TaskRun, id: &str, check: LegacyCheck, out: &mut Outcome) {
    if !ended(run, out, true) {
        return;
    }
    let Some(ex) = run.result.clone() else {
        return out.set_error("tasks/result was not asked for");
    };
    let fin = run.terminal().and_then(|t| t.get("status")).and_then(Value::as_str).unwrap_or("").to_string();
    out.exchanges.extend(run.polls.last().cloned());
    if let Some(e) = &ex.error {
        out.set_error(format!("tasks/result: {e}"));
    } else if let Some(err) = ex.response.as_ref().and_then(|r| r.get("error")) {
        if check == LegacyCheck::Result && fin == "completed" {
            out.fail(format!(
                "tasks/result of a completed task must return the tool's result; it answered the JSON-RPC error {}",
                brief(err)
            ));
        } else if check == LegacyCheck::ResultRelatedTask {
            out.set_na(format!("tasks/result answered a JSON-RPC error ({}), which carries no _meta to judge", brief(err)));
        }
    } else if let Some(r) = ex.result() {
        match check {
            LegacyCheck::Result => {
                if fin == "cancelled" {
                    out.set_na(format!("the task {id} ended cancelled although mcpcert did not cancel it: no result to judge"));
                } else if !r.get("content").and_then(Value::as_array).is_some_and(|c| c.iter().all(|b| b.get("type").is_some_and(Value::is_string))) {
                    out.fail(format!(
                        "tasks/result of a {fin} tools/call task must return what the call would have: a CallToolResult with `content`, an array of content blocks; got {}",
                        brief(r)
                    ));
                }
            }
            _ => match r.pointer(&format!("/_meta/{}", RELATED.replace('/', "~1"))) {
                Some(m) if m.get("taskId").and_then(Value::as_str) == Some(id) => {}
                Some(m) => out.fail(format!("tasks/result's _meta[\"{RELATED}\"] must name the task ({{\"taskId\": {id:?}}}); got {}", brief(m))),
                None => out.fail(format!(
                    "tasks/result must carry _meta[\"{RELATED}\"] = {{\"taskId\": {id:?}}} (the result itself does not name the task); it has none"
                )),
            },
        }
    } else {
        out.set_error(format!("tasks/result: no answer ({})", ex.summary()));
    }
    out.exchanges.push(ex);
}

/// `tasks/get` whose `_meta` names another task: `params.taskId` decides.
/// On a connection (stdio: a process) of its own, with a task of its own:
/// a server that routes the answer by the metadata never answers it, and
/// must not take the run's main connection down with it.
async fn related_ignored(cx: &Cx<'_>, t: &crate::config::InputTool) -> Outcome {
    let mut out = Outcome::default();
    let fresh = match cx.session.fresh(cx.rev, true, cx.case).await {
        Ok(f) => f,
        Err(e) => return Outcome::error(e.to_string()),
    };
    let mut conn = fresh.conn;
    let mut preamble = fresh.preamble;
    let call = call_body(cx, t);
    let label = format!("tools/call {} with params.task, on a {} of its own", t.tool, conn.transport().noun());
    let mut create = cx.exchange(&mut conn, &Msg::new(cx.rev, &label, &call)).await;
    create.fresh = true;
    create.preamble = preamble.clone();
    preamble.push(call.to_string());
    let id = create.result().filter(|r| is_task_handle(r)).and_then(handle_task_id);
    let failed = create.error.clone();
    out.exchanges.push(create);
    let Some(id) = id else {
        conn.shutdown().await;
        return match failed {
            Some(e) => out.with_error(format!("tools/call {}: {e}", t.tool)),
            None => {
                out.set_na(format!("this call of {} gave no task", t.tool));
                out
            }
        };
    };
    let mut body = cx.request("tasks/get", Some(json!({"taskId": id})));
    body["params"]["_meta"] = json!({RELATED: {"taskId": UNKNOWN}});
    let mut ex =
        cx.exchange(&mut conn, &Msg::new(cx.rev, "tasks/get of the task, with related-task metadata naming another task", &body)).await;
    conn.shutdown().await;
    ex.fresh = true;
    ex.preamble = preamble;
    if let Some(e) = &ex.error {
        out.set_error(format!(
            "tasks/get with related-task metadata naming another task: {e}. A server that routes the answer by that metadata (to the task it names) instead of answering this request by params.taskId never answers it"
        ));
    } else if let Some(err) = ex.response.as_ref().and_then(|r| r.get("error")) {
        out.fail(format!(
            "tasks/get must identify the task by params.taskId ({id:?}) and ignore related-task metadata naming another task; it answered {}",
            brief(err)
        ));
    } else if let Some(r) = ex.result() {
        if r.get("taskId").and_then(Value::as_str) != Some(id.as_str()) {
            out.fail(format!(
                "tasks/get must identify the task by params.taskId ({id:?}) and ignore the related-task metadata (which named {UNKNOWN:?}); it answered {}",
                brief(r)
            ));
        }
    } else {
        out.set_error(format!("tasks/get: no result ({})", ex.summary()));
    }
    out.exchanges.push(ex);
    out
}

/// `tasks/list`, walked (at most 100 pages), lists the task.
async fn listed(cx: &Cx<'_>, id: &str, out: &mut Outcome) {
    let mut cursor: Option<String> = None;
    for page in 1..=100 {
        let mut p = json!({});
        if let Some(c) = &cursor {
            p["cursor"] = json!(c);
        }
        let ex = match main_ex(cx, &format!("tasks/list (page {page})"), &cx.request("tasks/list", Some(p))).await {
            Ok(e) => e,
            Err(e) => return out.set_error(e),
        };
        let r = super::result_of(&ex, "tasks/list", out);
        out.exchanges.push(ex);
        let Some(r) = r else { return };
        let Some(tasks) = r.get("tasks").and_then(Value::as_array) else {
            return out.fail(format!("tasks/list must answer {{tasks: [...]}}; got {}", brief(&r)));
        };
        if tasks.iter().any(|t| t.get("taskId").and_then(Value::as_str) == Some(id)) {
            return;
        }
        match r.get("nextCursor").and_then(Value::as_str) {
            Some(c) => cursor = Some(c.to_string()),
            None => {
                return out.fail(format!(
                    "tasks/list must list every task tasks/get can retrieve for this requestor; the task {id} (retrievable) is not among the {page} page(s)"
                ));
            }
        }
    }
    out.set_error(format!("tasks/list was still not at its end after 100 pages, and the task {id} was not yet listed"));
}

/// `tasks/list` with a cursor the server never issued: -32602.
async fn invalid_cursor(cx: &Cx<'_>) -> Outcome {
    let body = cx.request("tasks/list", Some(json!({"cursor": "mcpcert-not-a-cursor"})));
    let mut out = Outcome::default();
    let ex = match cx.negative(&Msg::new(cx.rev, "tasks/list with a cursor the server never issued", &body)).await {
        Ok(e) => e,
        Err(e) => return out.with_error(e.to_string()),
    };
    expect_32602(&ex, "tasks/list with a cursor the server never issued", &mut out);
    out.exchanges.push(ex);
    out
}

fn expect_32602(ex: &Exchange, what: &str, out: &mut Outcome) {
    if let Some(e) = &ex.error {
        out.set_error(format!("{what}: {e}"));
    } else if let Some(err) = ex.response.as_ref().and_then(|r| r.get("error")) {
        if err.get("code").and_then(Value::as_i64) != Some(-32602) {
            out.fail(format!("{what} must answer -32602 (Invalid params); got {}", brief(err)));
        }
    } else {
        out.fail(format!("{what} must answer the JSON-RPC error -32602 (Invalid params); got {}", ex.summary()));
    }
}

/// `tasks/get`, `tasks/result` and `tasks/cancel` of an id nobody made: -32602.
async fn unknown(cx: &Cx<'_>) -> Outcome {
    let mut out = Outcome::default();
    for m in ["tasks/get", "tasks/result", "tasks/cancel"] {
        let body = cx.request(m, Some(json!({"taskId": UNKNOWN})));
        let label = format!("{m} of a task id the server never made");
        let ex = match cx.negative(&Msg::new(cx.rev, &label, &body)).await {
            Ok(e) => e,
            Err(e) => return out.with_error(e.to_string()),
        };
        expect_32602(&ex, &label, &mut out);
        out.exchanges.push(ex);
    }
    out
}

/// A new task cancelled at once: the answer is the task, `cancelled`, and
/// it stays cancelled.
async fn cancel_working(cx: &Cx<'_>, t: &crate::config::InputTool) -> Outcome {
    let mut out = Outcome::default();
    let ex = match call_tool(cx, t, &format!("tools/call {} with params.task (a task to cancel)", t.tool)).await {
        Ok(e) => e,
        Err(e) => return Outcome::error(e),
    };
    let id = ex.result().filter(|r| is_task_handle(r)).and_then(handle_task_id);
    out.exchanges.push(ex);
    let Some(id) = id else {
        out.set_na(format!("this call of {} gave no task to cancel", t.tool));
        return out;
    };
    let body = cx.request("tasks/cancel", Some(json!({"taskId": id})));
    let cancel = match main_ex(cx, "tasks/cancel of the new task", &body).await {
        Ok(e) => e,
        Err(e) => return out.with_error(e),
    };
    let refused = cancel.response.as_ref().and_then(|r| r.get("error")).cloned();
    let answered = cancel.result().cloned();
    out.exchanges.push(cancel);
    let get = match main_ex(cx, "tasks/get after the cancel", &get_body(cx, &id, true)).await {
        Ok(e) => e,
        Err(e) => return out.with_error(e),
    };
    let now = get.result().and_then(|r| r.get("status")).and_then(Value::as_str).map(String::from);
    out.exchanges.push(get);
    match (refused, answered) {
        (Some(err), _) => {
            if now.as_deref().is_some_and(|s| is_terminal(s) && s != "cancelled") && err.get("code").and_then(Value::as_i64) == Some(-32602)
            {
                out.set_na(format!(
                    "the task had already ended ({}) when the cancel came, and the cancel was rightly refused with -32602: no working task was cancelled",
                    now.unwrap_or_default()
                ));
            } else {
                out.fail(format!("tasks/cancel of a working task must cancel it and answer the task; it answered {}", brief(&err)));
            }
        }
        (None, Some(r)) => {
            if r.get("status").and_then(Value::as_str) != Some("cancelled") {
                out.fail(format!(
                    "tasks/cancel must move the task to cancelled before answering, and answer the task (status \"cancelled\"); got {}",
                    brief(&r)
                ));
            } else if now.as_deref() != Some("cancelled") {
                out.fail(format!(
                    "a cancelled task must stay cancelled; tasks/get right after the cancel shows {}",
                    now.as_deref().unwrap_or("no task")
                ));
            }
        }
        (None, None) => out.set_error("tasks/cancel: no answer"),
    }
    out
}

/// Cancelling the finished task: -32602, and the task stays as it ended.
async fn cancel_terminal(cx: &Cx<'_>, run: &TaskRun, out: &mut Outcome) {
    if !ended(run, out, true) {
        return;
    }
    let id = run.id.clone().unwrap_or_default();
    let fin = run.terminal().and_then(|t| t.get("status")).cloned();
    if fin == Some(json!("cancelled")) {
        return out.set_na("the task ended cancelled although mcpcert did not cancel it; the rule is judged on a completed or failed task");
    }
    let body = cx.request("tasks/cancel", Some(json!({"taskId": id})));
    let ex = match main_ex(cx, "tasks/cancel of the finished task", &body).await {
        Ok(e) => e,
        Err(e) => return out.set_error(e),
    };
    expect_32602(&ex, "tasks/cancel of a task already in a terminal status", out);
    out.exchanges.push(ex);
    let after = match main_ex(cx, "tasks/get after cancelling the finished task", &get_body(cx, &id, true)).await {
        Ok(e) => e,
        Err(e) => return out.set_error(e),
    };
    let now = after.result().and_then(|r| r.get("status")).cloned();
    if now.is_some() && now != fin {
        out.fail(format!(
            "a terminal task must never change status; it was {} and after the cancel is {}",
            brief(&fin.unwrap_or_default()),
            brief(&now.unwrap_or_default())
        ));
    }
    out.exchanges.push(after);
}

/// A tool whose `execution.taskSupport` is `required`, called without
/// `params.task`: refused with -32601 (-32600 accepted: the text offers it too).
async fn required_without_task(cx: &Cx<'_>, t: &crate::config::InputTool) -> Outcome {
    let w = match cx.facts.tools_walk(cx).await {
        Ok(w) => w,
        Err(e) => return Outcome::error(e),
    };
    let Some(tool) = w.items.iter().find(|x| x.get("name").and_then(Value::as_str) == Some(t.tool.as_str())) else {
        return Outcome::na(format!("tools/list does not list the [tasks] tool {}", t.tool));
    };
    let support = tool.pointer("/execution/taskSupport").and_then(Value::as_str).unwrap_or("forbidden (absent)");
    if support != "required" {
        return Outcome::na(format!(
            "the [tasks] tool {} declares execution.taskSupport {support}, not required: it may be called without a task",
            t.tool
        ));
    }
    let body = cx.request("tools/call", Some(json!({"name": t.tool, "arguments": t.arguments})));
    let label = format!("tools/call {} without params.task (its taskSupport is required)", t.tool);
    let mut out = Outcome::default();
    let ex = match cx.negative(&Msg::new(cx.rev, &label, &body)).await {
        Ok(e) => e,
        Err(e) => return out.with_error(e.to_string()),
    };
    if let Some(e) = &ex.error {
        out.set_error(format!("{label}: {e}"));
    } else if let Some(err) = ex.response.as_ref().and_then(|r| r.get("error")) {
        if !matches!(err.get("code").and_then(Value::as_i64), Some(-32601 | -32600)) {
            out.fail(format!(
                "a call without params.task of a tool whose taskSupport is required must be refused with -32601 (Method not found; -32600 is also offered); got {}",
                brief(err)
            ));
        }
    } else if ex.result().is_some_and(|r| r.get("isError") == Some(&Value::Bool(true))) {
        out.fail(format!(
            "a call without params.task of a tool whose taskSupport is required must be refused with the JSON-RPC error -32601 (Method not found); it was answered with a tool result marked isError instead (a tool error, not a protocol error): {}",
            ex.summary()
        ));
    } else {
        out.fail(format!(
            "a call without params.task of a tool whose taskSupport is required must be refused with -32601; it was served: {}",
            ex.summary()
        ));
    }
    out.exchanges.push(ex);
    out
}

/// A tool that does not support tasks (`execution.taskSupport` absent or
/// `forbidden`), called with `params.task`: -32601. The tool is one the run
/// already called (the call policy allows it), with the same arguments.
async fn forbidden_with_task(cx: &Cx<'_>) -> Outcome {
    let caps = cx.session.info(cx.rev).and_then(|i| i.capabilities.clone()).unwrap_or_default();
    if caps.pointer("/tasks/requests/tools/call").is_none() {
        return Outcome::na(
            "the server does not declare capabilities.tasks.requests.tools.call, so a client must not ask any tool for a task",
        );
    }
    let (w, calls) = match (cx.facts.tools_walk(cx).await, cx.facts.tool_calls(cx).await) {
        (Ok(w), Ok(c)) => (w, c),
        (Err(e), _) | (_, Err(e)) => return Outcome::error(e),
    };
    let forbidden = |name: &str| {
        w.items
            .iter()
            .find(|t| t.get("name").and_then(Value::as_str) == Some(name))
            .is_some_and(|t| matches!(t.pointer("/execution/taskSupport").and_then(Value::as_str), None | Some("forbidden")))
    };
    let Some(call) =
        calls.records.iter().find(|r| r.kind == super::calls::CallKind::Valid && r.ex.result().is_some() && forbidden(&r.tool))
    else {
        return Outcome::na("no tool without task support was called by the run (the call policy allows none, or none answered a result)");
    };
    let Some(mut body) = call.ex.sent.as_deref().and_then(|s| serde_json::from_str::<Value>(s).ok()) else {
        return Outcome::error(format!("the call of {} could not be read back", call.tool));
    };
    body["id"] = json!(cx.session.next_id());
    body["params"]["task"] = json!({"ttl": super::task_run::LEGACY_TTL_MS});
    let label = format!("tools/call {} with params.task (its taskSupport is forbidden)", call.tool);
    let mut out = Outcome::default();
    let ex = match cx.negative(&Msg::new(cx.rev, &label, &body)).await {
        Ok(e) => e,
        Err(e) => return out.with_error(e.to_string()),
    };
    if let Some(e) = &ex.error {
        out.set_error(format!("{label}: {e}"));
    } else if ex.error_code() != Some(-32601) {
        let what = if ex.result().is_some_and(is_task_handle) { "made a task" } else { "answered" };
        out.fail(format!(
            "a call with params.task of a tool whose taskSupport is forbidden (absent) should be refused with -32601 (Method not found); it {what}: {}",
            ex.summary()
        ));
    }
    out.exchanges.push(ex);
    out
}
