//! The tool the tasks cases follow a task on: the one `[tasks] tool`
//! names, else, on a server that advertises tasks, the first tool the call
//! policy may call (read-only and closed-world, or allowed in the config)
//! that answers with a task when called asking for one (2026-07-28:
//! declaring the tasks extension; 2025-11-25: a tool whose
//! `execution.taskSupport` allows it, called with `params.task`). A
//! server that advertises tasks gets its task path judged with no
//! configuration; `[tasks] tool` picks another tool.

use super::Cx;
use super::judge::args::synth_valid;
use super::judge::tasks::{TASKS_EXTENSION, is_task_handle};
use super::task_run::{call_tool, legacy};
use crate::config::InputTool;
use serde_json::Value;

/// At most this many tools are tried (each call may start work).
const TRIED: usize = 8;

/// The configured tool, or the first that answers with a task; why none,
/// when none does (the tasks cases are n/a with it).
pub async fn find(cx: &Cx<'_>) -> Result<InputTool, String> {
    if let Some(t) = &cx.policy.task_tool {
        return Ok(t.clone());
    }
    let advertised =
        if legacy(cx) { cx.caps().pointer("/tasks/requests/tools/call").is_some() } else { cx.advertises_extension(TASKS_EXTENSION) };
    if !advertised {
        return Err("no [tasks] tool in the config, and the server does not advertise tasks".into());
    }
    let w = cx.facts.tools_walk(cx).await?;
    let mut tried = Vec::new();
    for tool in w.items.iter() {
        let Some(name) = tool.get("name").and_then(Value::as_str) else { continue };
        if cx.policy.call_allowed(tool, name).is_err() || cx.policy.forbids(name).is_some() {
            continue;
        }
        // 2025-11-25: only a tool that says it may run as a task is asked.
        let support = tool.pointer("/execution/taskSupport").and_then(Value::as_str);
        if legacy(cx) && !matches!(support, Some("optional" | "required")) {
            continue;
        }
        let arguments = match cx.policy.tool(name).arguments.clone() {
            Some(a) => a,
            None => match tool.get("inputSchema").and_then(synth_valid) {
                Some(a) => a,
                None => continue,
            },
        };
        if tried.len() == TRIED {
            break;
        }
        tried.push(name.to_string());
        let t = InputTool { tool: name.to_string(), arguments };
        let label = format!("tools/call {name} {} (is it a tool that makes a task?)", super::task_run::asking(cx));
        let Ok(ex) = call_tool(cx, &t, &label).await else { continue };
        if ex.result().is_some_and(is_task_handle) {
            return Ok(t);
        }
    }
    Err(if tried.is_empty() {
        "no [tasks] tool in the config, and no tool the call policy may call could be asked for a task (a read-only, closed-world tool, or one allowed in the config); name one in [tasks] tool".into()
    } else {
        format!(
            "no [tasks] tool in the config, and none of the tools the call policy may call answered with a task when asked for one ({}); name one in [tasks] tool",
            tried.join(", ")
        )
    })
}
