//! The `[tasks] input_tool`'s task followed through its input rounds, once
//! per run (a shared fact the tasks extension's input cases judge): its
//! call declares the extension and every kind of input (elicitation,
//! sampling, roots); the task is polled, each set of outstanding
//! `inputRequests` is seen twice and then answered with `tasks/update`,
//! round after round, to the end, bounded like the `[tasks]` tool's run.

use super::Cx;
use super::judge::input::{all_capabilities, answer_for};
use super::judge::tasks::{handle_task_id, is_task_handle, is_terminal};
use super::task_run::{RunEnd, interval, main_ex, request};
use crate::config::InputTool;
use crate::record::Exchange;
use crate::wire::brief;
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;
use std::time::Instant;

/// Input rounds answered before the run stops as over budget.
const MAX_ROUNDS: usize = 8;
/// The key of the response no task ever asked for.
pub const BOGUS_KEY: &str = "mcpcert-never-issued";

/// The input tool's task, followed through its input rounds.
#[derive(Debug)]
pub struct InputRun {
    pub tool: String,
    pub create: Exchange,
    pub id: Option<String>,
    /// Each `tasks/get` that showed the task asking for input (at most
    /// two per set of outstanding requests), showed a new status, failed,
    /// or ended it; in order, with the updates between them.
    pub seen: Vec<Seen>,
    pub statuses: Vec<String>,
    pub end: RunEnd,
}

/// A step of the run.
#[derive(Debug)]
pub enum Seen {
    Poll(Exchange),
    /// A `tasks/update` and the keys it answered.
    Update(Exchange, Vec<String>),
}

impl InputRun {
    pub fn exchanges(&self) -> impl Iterator<Item = &Exchange> {
        std::iter::once(&self.create).chain(self.seen.iter().map(|s| match s {
            Seen::Poll(e) | Seen::Update(e, _) => e,
        }))
    }
    pub fn asked(&self) -> bool {
        self.statuses.iter().any(|s| s == "input_required")
    }
}

/// The call of the input tool declaring the extension and every kind of input.
pub fn call_body(cx: &Cx<'_>, t: &InputTool) -> Value {
    request(cx, "tools/call", json!({"name": t.tool, "arguments": t.arguments}), true, Some(all_capabilities()))
}

pub fn get_body(cx: &Cx<'_>, id: &str) -> Value {
    request(cx, "tasks/get", json!({"taskId": id}), true, Some(all_capabilities()))
}

pub fn update_body(cx: &Cx<'_>, id: &str, responses: Value) -> Value {
    request(cx, "tasks/update", json!({"taskId": id, "inputResponses": responses}), true, Some(all_capabilities()))
}

/// A request as compared across polls (its `_meta` aside).
pub fn request_key(r: &Value) -> Value {
    let mut r = r.clone();
    if let Some(p) = r.get_mut("params").and_then(Value::as_object_mut) {
        p.remove("_meta");
    }
    r
}

/// The task's `inputRequests` (empty when missing or not an object).
pub fn input_requests(t: &Value) -> Map<String, Value> {
    t.get("inputRequests").and_then(Value::as_object).cloned().unwrap_or_default()
}

/// Call the input tool and make the task; the create exchange and the
/// task id, or why there is no task (n/a).
pub async fn start(cx: &Cx<'_>, t: &InputTool, label: &str) -> Result<(Exchange, Result<String, RunEnd>), String> {
    let create = main_ex(cx, label, &call_body(cx, t)).await?;
    if let Some(e) = &create.error {
        return Err(format!("tools/call {}: {e}", t.tool));
    }
    let why = match create.result() {
        Some(r) if is_task_handle(r) => match handle_task_id(r) {
            Some(id) => return Ok((create, Ok(id))),
            None => RunEnd::Broken("the task handle has no taskId to poll".into()),
        },
        Some(r) => RunEnd::NotTask(format!(
            "the server answered tools/call {} without a task ({}) although the request declared the tasks extension: it decides per request whether to make one, so the input rounds of a task were not exercised",
            t.tool,
            r.get("resultType").map_or("no resultType".into(), brief)
        )),
        None => RunEnd::NotTask(format!("tools/call {} gave no result ({}), so no task to follow", t.tool, create.summary())),
    };
    Ok((create, Err(why)))
}

/// One poll, after the server's interval (shown on the console) unless first.
pub async fn poll(
    cx: &Cx<'_>,
    id: &str,
    label: String,
    last: Option<&Value>,
    wait: Option<(&str, usize, Instant)>,
) -> Result<Exchange, String> {
    if let Some((tool, n, started)) = wait {
        cx.session.show_waiting(Some((
            format!("task {} of {tool} (poll {n}; budget {} s)", crate::record::clip(id, 16), cx.policy.task_budget.as_secs()),
            started,
        )));
        tokio::time::sleep(interval(last)).await;
        cx.session.show_waiting(None);
    }
    main_ex(cx, &label, &get_body(cx, id)).await
}

/// Follow the input tool's task: poll, answer each set of outstanding
/// requests once it has been seen twice, until a terminal status, the
/// budget, or `MAX_ROUNDS` answered rounds.
pub async fn follow(cx: &Cx<'_>) -> Result<InputRun, String> {
    let t = cx.policy.task_input_tool.clone().ok_or("no [tasks] input_tool in the config")?;
    let (create, id) = start(cx, &t, &format!("tools/call {} declaring the tasks extension and every kind of input", t.tool)).await?;
    let mut run =
        InputRun { tool: t.tool.clone(), create, id: None, seen: Vec::new(), statuses: Vec::new(), end: RunEnd::NotTask(String::new()) };
    let id = match id {
        Ok(id) => id,
        Err(end) => {
            run.end = end;
            return Ok(run);
        }
    };
    run.id = Some(id.clone());
    let started = Instant::now();
    // What each (key, request) was answered with, and how often a set of
    // outstanding requests has been seen.
    let mut answered: Vec<(String, Value)> = Vec::new();
    let mut sightings: BTreeMap<String, usize> = BTreeMap::new();
    let (mut last, mut n, mut rounds) = (run.create.result().cloned(), 0usize, 0usize);
    loop {
        n += 1;
        let wait = (n > 1).then_some((t.tool.as_str(), n, started));
        let ex = poll(cx, &id, format!("tasks/get (poll {n})"), last.as_ref(), wait).await?;
        let result = ex.result().cloned();
        let status = result.as_ref().and_then(|r| r.get("status")).and_then(Value::as_str).map(String::from);
        let Some(status) = status else {
            let summary = ex.summary();
            run.seen.push(Seen::Poll(ex));
            run.end = RunEnd::Broken(format!("tasks/get (poll {n}) gave no task: {summary}"));
            return Ok(run);
        };
        let changed = run.statuses.last() != Some(&status);
        if changed {
            run.statuses.push(status.clone());
        }
        let r = result.unwrap_or_default();
        let mut ex = Some(ex);
        let mut keep = changed || is_terminal(&status);
        if status == "input_required" {
            let reqs = input_requests(&r);
            let open: Vec<(String, Value)> = reqs
                .iter()
                .filter(|(k, q)| !answered.iter().any(|(ak, aq)| ak == *k && *aq == request_key(q)))
                .map(|(k, q)| (k.clone(), q.clone()))
                .collect();
            let set = serde_json::to_string(&open.iter().map(|(k, q)| (k, request_key(q))).collect::<Vec<_>>()).unwrap_or_default();
            let count = sightings.entry(set).or_default();
            *count += 1;
            keep |= *count <= 2 && !open.is_empty();
            if keep && let Some(ex) = ex.take() {
                run.seen.push(Seen::Poll(ex));
            }
            if !open.is_empty() && *count >= 2 {
                let mut responses = Map::new();
                for (k, q) in &open {
                    match answer_for(q) {
                        Some(a) => {
                            responses.insert(k.clone(), a);
                        }
                        None => {
                            run.end = RunEnd::Broken(format!(
                                "mcpcert cannot answer inputRequests.{k} ({}): it answers elicitation/create, sampling/createMessage and roots/list",
                                brief(q)
                            ));
                            return Ok(run);
                        }
                    }
                }
                rounds += 1;
                if rounds > MAX_ROUNDS {
                    run.end =
                        RunEnd::Budget(format!("the task {id} asked for input more than {MAX_ROUNDS} rounds; mcpcert stopped answering"));
                    return Ok(run);
                }
                let keys: Vec<String> = open.iter().map(|(k, _)| k.clone()).collect();
                let label = format!("tasks/update answering {} (round {rounds})", keys.join(", "));
                let up = main_ex(cx, &label, &update_body(cx, &id, Value::Object(responses))).await?;
                let refused = up.result().is_none();
                let summary = up.summary();
                answered.extend(open.iter().map(|(k, q)| (k.clone(), request_key(q))));
                run.seen.push(Seen::Update(up, keys));
                if refused {
                    run.end = RunEnd::Broken(format!("tasks/update (round {rounds}) was not acknowledged: {summary}"));
                    return Ok(run);
                }
            }
        }
        if keep && let Some(ex) = ex.take() {
            run.seen.push(Seen::Poll(ex));
        }
        if is_terminal(&status) {
            run.end = RunEnd::Terminal(status);
            return Ok(run);
        }
        if started.elapsed() >= cx.policy.task_budget {
            run.end = RunEnd::Budget(format!(
                "the task {id} was still not terminal after {n} polls over {:.1} s, the budget ([tasks] budget_seconds = {}); statuses seen: {}",
                started.elapsed().as_secs_f64(),
                cx.policy.task_budget.as_secs(),
                run.statuses.join(" → ")
            ));
            return Ok(run);
        }
        last = Some(r);
    }
}
