//! Tasks and identities (2026-07-28 tasks extension, §Security
//! Considerations): a task made by one configured role, asked for by
//! another. Over HTTP only: over stdio each role is a process of its own.

use super::judge::tasks::{handle_task_id, is_task_handle};
use super::task_run::{get_body, request};
use super::{Check, Cx, Need, Outcome};
use crate::record::{Exchange, Transport};
use crate::session::{Connection, Msg};
use crate::wire::{Revision, brief};
use serde::Deserialize;
use serde_json::{Value, json};

/// The `[tasks]` tool called as the first role; `tasks/get` of its task
/// as the second role is refused, never answered with the task.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OtherRoleRefused {}

impl Check for OtherRoleRefused {
    const NAME: &'static str = "task_other_role_refused";
    const ABOUT: &'static str = "HTTP: the [tasks] tool's task, made as the first configured role, is refused to tasks/get as the second role (an error or HTTP 401/403), never served";
    const REVISIONS: &'static [Revision] = &Revision::STATELESS;

    fn needs(&self) -> Vec<Need> {
        vec![Need::TaskTool, Need::Roles(2)]
    }

    fn calls_task_tool(&self) -> bool {
        true
    }

    async fn run(&self, cx: &Cx<'_>) -> Outcome {
        if cx.transport() == Transport::Stdio {
            return Outcome::na("over stdio each role is a process of its own, so no other identity can reach a role's tasks");
        }
        let roles = &cx.policy.roles;
        if roles.len() < 2 {
            return Outcome::na("this case compares identities: it needs at least 2 configured roles ([roles.NAME])");
        }
        let t = match cx.facts.task_tool(cx).await {
            Ok(t) => t,
            Err(why) => return Outcome::na(why),
        };
        if let Some(why) = cx.policy.forbids(&t.tool) {
            return Outcome::na(why);
        }
        let (maker, other) = (&roles[0], &roles[1]);
        let mut out = Outcome::default();
        let open = |r: &crate::config::Role| cx.session.open_as(&r.headers, &r.env).map_err(|e| e.to_string());
        let mut mine = match open(maker) {
            Ok(c) => c,
            Err(e) => return Outcome::error(e),
        };
        let label = format!("as {}: tools/call {} declaring the tasks extension", maker.name, t.tool);
        let body = request(cx, "tools/call", json!({"name": t.tool, "arguments": t.arguments}), true, None);
        let Some(made) = answer(cx, &mut mine, &label, &body, &mut out).await else { return out };
        let Some(id) = Some(&made).filter(|r| is_task_handle(r)).and_then(handle_task_id) else {
            out.set_na(format!("{label} was answered without a task ({}): no task to ask for as another role", brief(&made)));
            return out;
        };
        let own = format!("as {}: tasks/get {id}", maker.name);
        let Some(seen) = answer(cx, &mut mine, &own, &get_body(cx, &id, true), &mut out).await else { return out };
        if seen.get("taskId").and_then(Value::as_str) != Some(id.as_str()) {
            out.set_na(format!("{own} did not give the task to the role that made it ({}): there is nothing to withhold", brief(&seen)));
            return out;
        }
        let mut theirs = match open(other) {
            Ok(c) => c,
            Err(e) => {
                out.set_error(e);
                return out;
            }
        };
        let asked = format!("as {}: tasks/get {id}", other.name);
        let ex = cx.exchange(&mut theirs, &Msg::new(cx.rev, &asked, &get_body(cx, &id, true))).await;
        if let Some(e) = &ex.error {
            out.set_error(format!("{asked}: {e}"));
        } else if ex.result().is_some_and(|r| r.get("taskId").and_then(Value::as_str) == Some(id.as_str())) {
            out.fail(format!(
                "{asked}: the task {} made was served to {} ({}); each task request must be checked for the caller's permission to see that task",
                maker.name,
                other.name,
                ex.summary()
            ));
        }
        out.exchanges.push(ex);
        // The task is not left running.
        let cancel = request(cx, "tasks/cancel", json!({"taskId": id}), true, None);
        let _ = answer(cx, &mut mine, &format!("as {}: tasks/cancel {id} (clean-up)", maker.name), &cancel, &mut Outcome::default()).await;
        mine.kill();
        theirs.kill();
        out
    }
}

/// One request on `conn`: its result, or `None` with the outcome set.
async fn answer(cx: &Cx<'_>, conn: &mut Connection, label: &str, body: &Value, out: &mut Outcome) -> Option<Value> {
    let ex: Exchange = cx.exchange(conn, &Msg::new(cx.rev, label, body)).await;
    let got = if let Some(e) = &ex.error {
        out.set_error(format!("{label}: {e}"));
        None
    } else if let Some(err) = ex.response.as_ref().and_then(|r| r.get("error")) {
        out.set_na(format!("{label} was refused ({}): no task to judge", brief(err)));
        None
    } else {
        ex.result().cloned()
    };
    out.exchanges.push(ex);
    got
}
