//! Tasks across the two eras of a server that serves both (SEP-2663's
//! backward compatibility): in a 2025-11-25 session, declaring the
//! 2026-07-28 tasks extension at `initialize` does not turn tasks on; only
//! 2025-11-25's own `params.task` asks for one.

use super::judge::tasks::{TASKS_EXTENSION, is_task_handle};
use super::{Check, Cx, Need, Outcome};
use crate::session::Msg;
use crate::wire::{self, Revision, brief};
use serde::Deserialize;
use serde_json::json;

/// A 2025-11-25 session whose `initialize` declares the extension (and no
/// `capabilities.tasks`): the `[tasks]` tool called without `params.task`
/// is answered as an ordinary call, never with a task.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExtensionNotOptIn {}

impl Check for ExtensionNotOptIn {
    const NAME: &'static str = "task_extension_not_opt_in";
    const ABOUT: &'static str = "2025-11-25, on a server that also serves the 2026-07-28 tasks extension: a session whose initialize declares the extension (no capabilities.tasks) gets the [tasks] tool's call without params.task answered without a task";
    const REVISIONS: &'static [Revision] = &[Revision::R2025_11_25];

    fn needs(&self) -> Vec<Need> {
        vec![Need::TaskTool]
    }

    fn calls_task_tool(&self) -> bool {
        true
    }

    async fn run(&self, cx: &Cx<'_>) -> Outcome {
        let mut out = Outcome::default();
        let serves = match cx.session.info(Revision::R2026_07_28) {
            Some(i) => i.capabilities.as_ref().and_then(|c| c.get("extensions")).and_then(|e| e.get(TASKS_EXTENSION)).is_some(),
            // 2026-07-28 was not probed in this run (--revision): asked here.
            None => match discover_advertises(cx, &mut out).await {
                Ok(b) => b,
                Err(e) => return Outcome::error(e),
            },
        };
        if !serves {
            out.set_na(format!(
                "the rule is for a server that serves both eras and the 2026-07-28 tasks extension; this one does not advertise {TASKS_EXTENSION} in a 2026-07-28 server/discover"
            ));
            return out;
        }
        let t = match cx.facts.task_tool(cx).await {
            Ok(t) => t,
            Err(why) => return Outcome::na(why),
        };
        if let Some(why) = cx.policy.forbids(&t.tool) {
            return Outcome::na(why);
        }
        let mut conn = match cx.session.open() {
            Ok(c) => c,
            Err(e) => return Outcome::error(e.to_string()),
        };
        let what = format!("initialize declaring capabilities.extensions[\"{TASKS_EXTENSION}\"] and no capabilities.tasks");
        let init = wire::request(
            &cx.session.next_id(),
            "initialize",
            Some(
                json!({"protocolVersion": cx.rev.as_str(), "capabilities": {"extensions": {TASKS_EXTENSION: {}}}, "clientInfo": wire::client_info()}),
            ),
        );
        let ex = cx.exchange(&mut conn, &Msg::new(cx.rev, &what, &init)).await;
        if ex.result().is_none() {
            out.set_error(format!("{what} was not served ({})", ex.summary()));
            out.exchanges.push(ex);
            conn.kill();
            return out;
        }
        conn.set_session_id(ex.header("mcp-session-id").map(str::to_string));
        out.exchanges.push(ex);
        let note = wire::notification("notifications/initialized", None);
        out.exchanges.push(cx.exchange(&mut conn, &Msg::new(cx.rev, "notifications/initialized", &note).no_reply()).await);
        let label = format!("tools/call {} without params.task, in that session", t.tool);
        let body = cx.request("tools/call", Some(json!({"name": t.tool, "arguments": t.arguments})));
        // Not filed in the revision's frame log: a task handle here is this
        // case's finding, not the whole-run audits'.
        let ex = cx.session.exchange(&mut conn, &Msg::new(cx.rev, &label, &body), None).await;
        conn.kill();
        if let Some(e) = &ex.error {
            out.set_error(format!("{label}: {e}"));
        } else if let Some(err) = ex.response.as_ref().and_then(|r| r.get("error")) {
            out.set_na(format!(
                "{label} was refused ({}): no ordinary answer to compare (a tool that runs only as a task is judged by tasks/required-without-task)",
                brief(err)
            ));
        } else if ex.result().is_some_and(is_task_handle) {
            out.fail(format!(
                "{label}: answered with a task ({}); in a 2025-11-25 session the 2026-07-28 extension's capability must not enable tasks: without params.task the call is an ordinary one",
                ex.summary()
            ));
        }
        out.exchanges.push(ex);
        out
    }
}

/// A 2026-07-28 `server/discover` on a connection (process) of its own:
/// whether it advertises the tasks extension (a server of one older era
/// answers with an error, or not at all: no).
async fn discover_advertises(cx: &Cx<'_>, out: &mut Outcome) -> Result<bool, String> {
    let mut conn = cx.session.open().map_err(|e| e.to_string())?;
    let body = wire::request(&cx.session.next_id(), "server/discover", wire::modern_params(None, wire::MetaMode::Full, wire::MODERN));
    let label = "server/discover (does the server also serve 2026-07-28's tasks extension?)";
    let ex = cx.session.exchange(&mut conn, &Msg::new(Revision::R2026_07_28, label, &body), None).await;
    conn.kill();
    let serves = ex.result().and_then(|r| r.pointer("/capabilities/extensions")).and_then(|e| e.get(TASKS_EXTENSION)).is_some();
    out.exchanges.push(ex);
    Ok(serves)
}
