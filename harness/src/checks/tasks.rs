//! The tasks extension (`io.modelcontextprotocol/tasks`, 2026-07-28), with
//! the tool the config names in `[tasks]`: the task handle, `tasks/get`
//! polled to a terminal status (bounded by the server's `pollIntervalMs`
//! and the run's budget, shown on the console while it waits), the
//! result or error a terminal task carries, cancellation, unknown ids, a
//! request that does not declare the extension, and the legacy opt-ins.
//! Cases apply only to a server that advertises the extension (the suite's
//! `applies.extensions`).

use super::judge::tasks::{
    TASKS_EXTENSION, ack_problems, get_problems, handle_problems, handle_task_id, is_task_handle, is_terminal, terminal_payload_problems,
    terminal_state,
};
use super::task_run::{TaskRun, call_tool, ended, get_body, main_ex, request};
use super::{Check, Cx, Need, Outcome};
use crate::config::InputTool;
use crate::record::Exchange;
use crate::session::Msg;
use crate::wire::{Revision, brief};
use serde::Deserialize;
use serde_json::{Value, json};

/// Which rule a `task_probe` case judges.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TaskCheck {
    Capability,
    CreateShape,
    Durable,
    GetShape,
    CompletedResult,
    TerminalFinal,
    UnknownId,
    UnknownIdUpdateCancel,
    UndeclaredRefused,
    CancelAck,
    CancelTerminal,
    LegacyHintIgnored,
    NameHeaderMismatch,
    RefusalNamesExtension,
}

impl TaskCheck {
    /// Whether the check follows the `[tasks]` tool's task.
    fn uses_tool(self) -> bool {
        !matches!(self, TaskCheck::Capability | TaskCheck::UnknownId | TaskCheck::UnknownIdUpdateCancel)
    }
}

/// One rule of the tasks extension.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TaskProbe {
    check: TaskCheck,
}

impl Check for TaskProbe {
    const NAME: &'static str = "task_probe";
    const ABOUT: &'static str =
        "one rule (`check`) of the tasks extension, most with the tool the config names in [tasks], whose task is followed to its end";
    const REVISIONS: &'static [Revision] = &Revision::STATELESS;

    fn needs(&self) -> Vec<Need> {
        if self.check.uses_tool() { vec![Need::TaskTool] } else { Vec::new() }
    }

    fn calls_task_tool(&self) -> bool {
        self.check.uses_tool()
    }

    async fn run(&self, cx: &Cx<'_>) -> Outcome {
        match self.check {
            TaskCheck::Capability => return capability(cx).await,
            TaskCheck::UnknownId | TaskCheck::UnknownIdUpdateCancel => return unknown(cx, self.check).await,
            _ => {}
        }
        let t = match cx.facts.task_tool(cx).await {
            Ok(t) => t,
            Err(why) => return Outcome::na(why),
        };
        if let Some(why) = cx.policy.forbids(&t.tool) {
            return Outcome::na(why);
        }
        // These two make calls of their own (no shared task needed).
        let mut out = Outcome::default();
        match self.check {
            TaskCheck::CancelAck => {
                cancel_ack(cx, &t, &mut out).await;
                return out;
            }
            TaskCheck::LegacyHintIgnored => {
                legacy_hint(cx, &t, &mut out).await;
                return out;
            }
            TaskCheck::RefusalNamesExtension => {
                refusal_names(cx, &t, &mut out).await;
                return out;
            }
            _ => {}
        }

        let (run, mut out, id) = match super::task_run::shared(cx).await {
            Ok(r) => r,
            Err(out) => return out,
        };
        match self.check {
            TaskCheck::CreateShape => {
                for p in handle_problems(run.create.result().unwrap_or(&Value::Null)) {
                    out.fail(format!("tools/call {}: {p}", run.tool));
                }
            }
            TaskCheck::Durable => durable(&run, &mut out),
            TaskCheck::GetShape => {
                out.exchanges.extend(run.gets().cloned());
                for ex in run.gets() {
                    if let Some(r) = ex.result() {
                        for p in get_problems(r, &id) {
                            let line = format!("{}: {p}", ex.label);
                            if !out.failures.iter().any(|f| f.ends_with(&p)) {
                                out.fail(line);
                            }
                        }
                    }
                }
                if out.failures.is_empty() {
                    ended(&run, &mut out, false);
                }
            }
            TaskCheck::CompletedResult => {
                out.exchanges.extend(run.polls.last().cloned());
                if !ended(&run, &mut out, true) {
                    return out;
                }
                let t = run.terminal().cloned().unwrap_or_default();
                if t.get("status").and_then(Value::as_str) == Some("cancelled") {
                    out.set_na(format!(
                        "the task {id} ended cancelled although mcpcert did not cancel it: there is no result or error to judge"
                    ));
                    return out;
                }
                for p in terminal_payload_problems(&t) {
                    out.fail(p);
                }
            }
            TaskCheck::TerminalFinal => terminal_final(&run, &mut out),
            TaskCheck::UndeclaredRefused => undeclared(cx, &id, &mut out).await,
            TaskCheck::CancelTerminal => cancel_terminal(cx, &run, &mut out).await,
            TaskCheck::NameHeaderMismatch => name_mismatch(cx, &id, &mut out).await,
            _ => {}
        }
        out
    }
}

/// The first `tasks/get`, sent as soon as the handle came, must find the task.
fn durable(run: &TaskRun, out: &mut Outcome) {
    let Some(ex) = run.first_get.clone() else {
        return out.set_error("no tasks/get was sent after the handle");
    };
    if let Some(e) = &ex.error {
        out.set_error(format!("tasks/get right after the handle: {e}"));
    } else if let Some(err) = ex.response.as_ref().and_then(|r| r.get("error")) {
        out.fail(format!(
            "the task handle went out before the task could be found: tasks/get right after it answered {} (a server must not return CreateTaskResult until tasks/get for its taskId would resolve)",
            brief(err)
        ));
    } else if ex.result().is_none() {
        out.set_error(format!("tasks/get right after the handle: no result ({})", ex.summary()));
    }
    out.exchanges.push(ex);
}

/// Statuses move working ↔ input_required and on to one terminal status,
/// which never changes, and whose result or error stays the same.
fn terminal_final(run: &TaskRun, out: &mut Outcome) {
    out.exchanges.extend(run.polls.iter().rev().take(1).cloned());
    out.exchanges.extend(run.after.iter().cloned());
    if let Some(w) = run.statuses.windows(2).find(|w| is_terminal(&w[0])) {
        out.fail(format!("the task left the terminal status {} for {}: statuses seen {}", w[0], w[1], run.statuses.join(" → ")));
    }
    if !ended(run, out, out.failures.is_empty()) {
        return;
    }
    let Some(fin) = run.terminal().map(terminal_state) else {
        return out.set_error("the terminal tasks/get has no result");
    };
    for ex in &run.after {
        match ex.result() {
            Some(r) if terminal_state(r) == fin => {}
            Some(r) => out.fail(format!(
                "{}: a terminal task must stay as it ended; it was {} and is now {}",
                ex.label,
                brief(&fin),
                brief(&terminal_state(r))
            )),
            None => out.fail(format!("{}: the finished task could no longer be read ({}) within its ttlMs", ex.label, ex.summary())),
        }
    }
}

/// `server/discover`: the extension's settings are an object, and the
/// 2025-11-25 `capabilities.tasks` is not advertised beside it.
async fn capability(cx: &Cx<'_>) -> Outcome {
    let body = cx.request("server/discover", None);
    let ex = match main_ex(cx, "server/discover", &body).await {
        Ok(e) => e,
        Err(e) => return Outcome::error(e),
    };
    let mut out = Outcome::default();
    if let Some(caps) = super::result_of(&ex, "server/discover", &mut out).and_then(|r| r.get("capabilities").cloned()) {
        match caps.pointer(&format!("/extensions/{}", TASKS_EXTENSION.replace('/', "~1"))) {
            Some(Value::Object(_)) => {}
            Some(v) => out.fail(format!(
                "capabilities.extensions[\"{TASKS_EXTENSION}\"] must be an object (its settings; {{}} for none); got {}",
                brief(v)
            )),
            None => out.set_error("server/discover no longer advertises the tasks extension"),
        }
        if let Some(legacy) = caps.get("tasks") {
            out.fail(format!(
                "capabilities.tasks (2025-11-25's experimental tasks: {}) must not be advertised under a protocol version that has the tasks extension; the extension is declared as capabilities.extensions[\"{TASKS_EXTENSION}\"] alone",
                brief(legacy)
            ));
        }
    }
    out.exchanges.push(ex);
    out
}

/// `tasks/get` (or `tasks/update` and `tasks/cancel`) of a task id nobody
/// made, declaring the extension: -32602 (a JSON-RPC error for the two).
async fn unknown(cx: &Cx<'_>, check: TaskCheck) -> Outcome {
    let id = "mcpcert-unknown-task-7d3e9a41c2b8";
    let methods: &[(&str, Value)] = if check == TaskCheck::UnknownId {
        &[("tasks/get", json!({"taskId": id}))]
    } else {
        &[("tasks/update", json!({"taskId": id, "inputResponses": {}})), ("tasks/cancel", json!({"taskId": id}))]
    };
    let mut out = Outcome::default();
    for (m, p) in methods {
        let body = request(cx, m, p.clone(), true, None);
        let label = format!("{m} of a task id the server never made");
        let ex = match cx.negative(&Msg::new(cx.rev, &label, &body)).await {
            Ok(e) => e,
            Err(e) => return out.with_error(e.to_string()),
        };
        if let Some(e) = &ex.error {
            out.set_error(format!("{m}: {e}"));
        } else if let Some(err) = ex.response.as_ref().and_then(|r| r.get("error")) {
            let code = err.get("code").and_then(Value::as_i64);
            if *m == "tasks/get" && code != Some(-32602) {
                out.fail(format!("tasks/get of an unknown task id must answer -32602 (Invalid params); got {}", brief(err)));
            }
        } else {
            out.fail(format!("{m} of an unknown task id should answer a JSON-RPC error (-32602); got {}", ex.summary()));
        }
        out.exchanges.push(ex);
    }
    out
}

/// `tasks/get`, `tasks/update` and `tasks/cancel` of the live (finished)
/// task from a request that does not declare the extension: -32021 naming
/// it in `data.requiredCapabilities`.
async fn undeclared(cx: &Cx<'_>, id: &str, out: &mut Outcome) {
    let calls = [
        ("tasks/get", json!({"taskId": id})),
        ("tasks/update", json!({"taskId": id, "inputResponses": {}})),
        ("tasks/cancel", json!({"taskId": id})),
    ];
    for (m, p) in calls {
        let label = format!("{m} of the task, declaring no extension");
        let ex = match main_ex(cx, &label, &request(cx, m, p, false, None)).await {
            Ok(e) => e,
            Err(e) => return out.set_error(e),
        };
        if let Some(e) = &ex.error {
            out.set_error(format!("{m} without the extension: {e}"));
        } else if let Some(err) = ex.response.as_ref().and_then(|r| r.get("error")) {
            let named = err.pointer("/data/requiredCapabilities/extensions").and_then(|x| x.get(TASKS_EXTENSION)).is_some();
            if err.get("code").and_then(Value::as_i64) != Some(-32021) {
                out.fail(format!(
                    "{m} from a request that does not declare the tasks extension must answer -32021 (Missing Required Client Capability); got {}",
                    brief(err)
                ));
            } else if !named {
                out.fail(format!(
                    "{m}: -32021 must name the missing extension: data.requiredCapabilities = {{\"extensions\": {{\"{TASKS_EXTENSION}\": {{}}}}}}; got {}",
                    brief(err)
                ));
            }
        } else {
            out.fail(format!(
                "{m} from a request that does not declare the tasks extension must be refused with -32021; it was served: {}",
                ex.summary()
            ));
        }
        out.exchanges.push(ex);
    }
}

/// A new task cancelled at once: the acknowledgement is an empty result
/// (`resultType` `complete`), not the task.
async fn cancel_ack(cx: &Cx<'_>, t: &InputTool, out: &mut Outcome) {
    let ex = match call_tool(cx, t, &format!("tools/call {} declaring the tasks extension (a task to cancel)", t.tool)).await {
        Ok(e) => e,
        Err(e) => return out.set_error(e),
    };
    let id = ex.result().filter(|r| is_task_handle(r)).and_then(handle_task_id);
    out.exchanges.push(ex);
    let Some(id) = id else {
        return out.set_na(format!("this call of {} gave no task to cancel (the server decides per request)", t.tool));
    };
    let body = request(cx, "tasks/cancel", json!({"taskId": id}), true, None);
    let ex = match main_ex(cx, "tasks/cancel of the new task", &body).await {
        Ok(e) => e,
        Err(e) => return out.set_error(e),
    };
    if let Some(r) = super::result_of(&ex, "tasks/cancel", out) {
        for p in ack_problems("tasks/cancel", &r) {
            out.fail(p);
        }
    }
    out.exchanges.push(ex);
}

/// Cancelling the finished task changes nothing: it keeps its terminal
/// status and payload (the acknowledgement itself is `cancel-ack`'s).
async fn cancel_terminal(cx: &Cx<'_>, run: &TaskRun, out: &mut Outcome) {
    if !ended(run, out, true) {
        return;
    }
    let Some(id) = run.id.clone() else {
        return out.set_error("the task has no id");
    };
    // What the task is now, just before the cancel (compared with what
    // it is after: what changed is the cancel's doing).
    let before = match main_ex(cx, "tasks/get of the finished task, before cancelling it", &get_body(cx, &id, true)).await {
        Ok(e) => e,
        Err(e) => return out.set_error(e),
    };
    let fin = before.result().map(terminal_state);
    let ended_as = fin.as_ref().and_then(|f| f.get("status")).and_then(Value::as_str).map(String::from);
    out.exchanges.push(before);
    let Some(fin) = fin.filter(|_| ended_as.as_deref().is_some_and(is_terminal)) else {
        // A change seen is a finding: the task did not stay as it ended.
        return out.fail(format!(
            "the finished task is {} again before the cancel: a task in a terminal status must stay in it, so nothing could leave it unchanged",
            ended_as.as_deref().unwrap_or("in no status")
        ));
    };
    let body = request(cx, "tasks/cancel", json!({"taskId": id}), true, None);
    let ex = match main_ex(cx, "tasks/cancel of the finished task", &body).await {
        Ok(e) => e,
        Err(e) => return out.set_error(e),
    };
    if ex.response.as_ref().and_then(|r| r.get("error")).is_some() {
        out.exchanges.push(Exchange::note(
            "an error, not an acknowledgement",
            "cancelling a finished task is acknowledged by the official suite's reading; an error is noted, not judged here",
        ));
    }
    out.exchanges.push(ex);
    let after = match main_ex(cx, "tasks/get after cancelling the finished task", &get_body(cx, &id, true)).await {
        Ok(e) => e,
        Err(e) => return out.set_error(e),
    };
    match after.result() {
        Some(r) if terminal_state(r) == fin => {}
        Some(r) => out.fail(format!(
            "a task that had ended must stay as it ended when cancelled afterwards; it was {} and is now {}",
            brief(&fin),
            brief(&terminal_state(r))
        )),
        None => out.set_error(format!("tasks/get after the cancel: {}", after.summary())),
    }
    out.exchanges.push(after);
}

/// The 2025-11-25 opt-ins are no opt-in: `params.task` is an unknown field
/// to ignore (never an error), and a request declaring only the legacy
/// `tasks` capability is a non-declaring one (its answer is judged by the
/// whole-run audit `wire/no-task-unless-declared`).
async fn legacy_hint(cx: &Cx<'_>, t: &InputTool, out: &mut Outcome) {
    let p = json!({"name": t.tool, "arguments": t.arguments, "task": {"ttl": 60000}});
    let calls = [
        (format!("tools/call {} declaring the extension, with the legacy params.task", t.tool), true, None),
        (
            format!("tools/call {} declaring only the legacy capabilities.tasks, with params.task", t.tool),
            false,
            Some(json!({"tasks": {"requests": {"tools": {"call": {}}}}})),
        ),
    ];
    for (label, declare, caps) in calls {
        let body = request(cx, "tools/call", p.clone(), declare, caps);
        let ex = match main_ex(cx, &label, &body).await {
            Ok(e) => e,
            Err(e) => return out.set_error(e),
        };
        if let Some(e) = &ex.error {
            out.set_error(format!("{label}: {e}"));
        } else if let Some(err) = ex.response.as_ref().and_then(|r| r.get("error"))
            && declare
        {
            out.fail(format!(
                "{label}: the legacy `task` parameter must be ignored as an unknown field, not refused (the same call without it was served); got {}",
                brief(err)
            ));
        }
        out.exchanges.push(ex);
    }
}

/// HTTP: `tasks/get` of the task whose `Mcp-Name` names another task (the
/// header a client sets to `params.taskId`): HTTP 400 and -32020, the
/// request's id echoed.
async fn name_mismatch(cx: &Cx<'_>, id: &str, out: &mut Outcome) {
    let body = get_body(cx, id, true);
    let edits = [crate::wire::HeaderEdit::Set("Mcp-Name".into(), "mcpcert-other-task-0b7e".into())];
    let mut msg = Msg::new(cx.rev, "tasks/get of the task, its Mcp-Name naming another task", &body);
    msg.edits = &edits;
    let ex = match cx.negative(&msg).await {
        Ok(e) => e,
        Err(e) => return out.set_error(e.to_string()),
    };
    if let Some(e) = &ex.error {
        out.set_error(format!("{}: {e}", ex.label));
    } else {
        let code = ex.error_code();
        let echoed = ex.response.as_ref().and_then(|r| r.get("id")) == ex.request_id.as_ref();
        if ex.status == Some(400) && code == Some(-32020) && !echoed {
            // Refused as it should be, but under another id: the finding
            // every case that sees such an answer words alike.
            out.fail(crate::wire::id_mismatch(ex.request_id.as_ref(), ex.response.as_ref().and_then(|r| r.get("id"))));
        } else if ex.status != Some(400) || code != Some(-32020) || !echoed {
            out.fail(format!(
                "a tasks/get whose Mcp-Name header ({:?}) differs from params.taskId ({id:?}) must be rejected with HTTP 400 and JSON-RPC -32020 (HeaderMismatch), the request's id echoed; got {}",
                "mcpcert-other-task-0b7e",
                ex.summary()
            ));
        }
    }
    out.exchanges.push(ex);
}

/// The `[tasks]` tool called without declaring the extension: a server
/// that cannot serve the call without a task refuses it with -32021 naming
/// the extension in `data.requiredCapabilities`; a call it serves (or
/// refuses otherwise) is not this rule's.
async fn refusal_names(cx: &Cx<'_>, t: &InputTool, out: &mut Outcome) {
    let label = format!("tools/call {} declaring no extension", t.tool);
    let body = request(cx, "tools/call", json!({"name": t.tool, "arguments": t.arguments}), false, None);
    let ex = match main_ex(cx, &label, &body).await {
        Ok(e) => e,
        Err(e) => return out.set_error(e),
    };
    if let Some(e) = &ex.error {
        out.set_error(format!("{label}: {e}"));
    } else if let Some(err) = ex.response.as_ref().and_then(|r| r.get("error")) {
        if err.get("code").and_then(Value::as_i64) == Some(-32021) {
            if err.pointer("/data/requiredCapabilities/extensions").and_then(|x| x.get(TASKS_EXTENSION)).is_none() {
                out.fail(format!(
                    "{label}: a call refused for want of the tasks extension must name it: -32021 with data.requiredCapabilities = {{\"extensions\": {{\"{TASKS_EXTENSION}\": {{}}}}}}; got {}",
                    brief(err)
                ));
            }
        } else {
            out.set_na(format!(
                "{label} was refused with {}, not -32021: whether the tool can run without a task is not known from that, so the refusal's shape is not judged",
                brief(err)
            ));
        }
    } else {
        out.set_na(format!("{label} was served without a task ({}): there is no refusal to judge", ex.summary()));
    }
    out.exchanges.push(ex);
}
