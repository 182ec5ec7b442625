//! Tasks that ask for input (the tasks extension, 2026-07-28), with the
//! tool the config names in `[tasks] input_tool`, judged on its task
//! followed through its input rounds (`task_input_run`). A response to a
//! key the task never issued goes to a task of its own, cancelled after.

use super::judge::input::all_capabilities;
use super::judge::tasks::{ack_problems, is_terminal};
use super::task_input_run::{BOGUS_KEY, InputRun, Seen, input_requests, poll, request_key, start, update_body};
use super::task_run::{RunEnd, main_ex, request};
use super::{Check, Cx, Need, Outcome};
use crate::config::InputTool;
use crate::record::Exchange;
use crate::wire::{Revision, brief};
use serde::Deserialize;
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;
use std::time::Instant;

/// Which rule a `task_input_probe` case judges.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TaskInputCheck {
    /// An `input_required` task carries its outstanding requests, each a
    /// well-formed request of a kind a client serves.
    InputShape,
    /// A key names one request over the task's life, and is not issued
    /// again once answered.
    KeysUnique,
    /// `tasks/update` answering the outstanding requests is acknowledged
    /// with an empty result.
    UpdateAck,
    /// A response to a key never issued changes nothing (SHOULD).
    UnknownKeyIgnored,
}

/// One rule of tasks that ask for input.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TaskInputProbe {
    check: TaskInputCheck,
}

/// What is wrong with one entry of `inputRequests`: a request of a kind
/// a client serves (elicitation, sampling, roots), with its params.
pub fn input_request_problems(key: &str, q: &Value) -> Vec<String> {
    let mut out = Vec::new();
    let p = q.get("params");
    let text = |v: Option<&Value>| v.is_some_and(Value::is_string);
    match q.get("method").and_then(Value::as_str) {
        Some("elicitation/create") => {
            let p = p.cloned().unwrap_or(Value::Null);
            if !text(p.get("message")) {
                out.push(format!("inputRequests.{key}: elicitation/create needs params.message, a string"));
            }
            if p.get("mode").and_then(Value::as_str) == Some("url") {
                if !text(p.get("url")) || !text(p.get("elicitationId")) {
                    out.push(format!("inputRequests.{key}: a URL-mode elicitation needs params.url and params.elicitationId, strings"));
                }
            } else if p.pointer("/requestedSchema/type").and_then(Value::as_str) != Some("object") {
                out.push(format!("inputRequests.{key}: a form elicitation needs params.requestedSchema, an object schema"));
            }
        }
        Some("sampling/createMessage") => {
            if !p.and_then(|p| p.get("messages")).is_some_and(Value::is_array)
                || !p.and_then(|p| p.get("maxTokens")).is_some_and(|m| m.is_i64())
            {
                out.push(format!(
                    "inputRequests.{key}: sampling/createMessage needs params.messages (an array) and params.maxTokens (an integer)"
                ));
            }
        }
        Some("roots/list") => {}
        other => out.push(format!(
            "inputRequests.{key}: method must be elicitation/create, sampling/createMessage or roots/list; got {}",
            other.map_or_else(|| q.get("method").map_or("none".into(), brief), |m| format!("{m:?}"))
        )),
    }
    if p.is_some_and(|p| !p.is_object()) {
        out.push(format!("inputRequests.{key}: params must be an object"));
    }
    out
}

impl Check for TaskInputProbe {
    const NAME: &'static str = "task_input_probe";
    const ABOUT: &'static str = "one rule (`check`) of tasks that ask for input, with the tool the config names in [tasks] input_tool, whose input requests are answered with tasks/update";
    const REVISIONS: &'static [Revision] = &Revision::STATELESS;

    fn needs(&self) -> Vec<Need> {
        vec![Need::TaskInputTool]
    }

    fn calls_task_tool(&self) -> bool {
        true
    }

    async fn run(&self, cx: &Cx<'_>) -> Outcome {
        let Some(t) = cx.policy.task_input_tool.clone() else {
            return Outcome::na("no [tasks] input_tool in the config");
        };
        if let Some(why) = cx.policy.forbids(&t.tool) {
            return Outcome::na(why);
        }
        if self.check == TaskInputCheck::UnknownKeyIgnored {
            return unknown_key(cx, &t).await;
        }
        let run = match cx.facts.task_input_run(cx).await {
            Ok(r) => r,
            Err(e) => return Outcome::error(e),
        };
        let mut out = Outcome::default();
        if let RunEnd::NotTask(why) = &run.end {
            out.exchanges.push(run.create.clone());
            out.set_na(why.clone());
            return out;
        }
        out.exchanges.extend(run.exchanges().cloned());
        if !run.asked() {
            match &run.end {
                RunEnd::Terminal(s) => out.set_na(format!(
                    "the task of {} went {} → {s} without asking for input (the server decides when a task needs input), so there was no input request to judge",
                    run.tool,
                    run.statuses.join(" → ")
                )),
                RunEnd::Budget(why) | RunEnd::Broken(why) => out.set_error(why.clone()),
                RunEnd::NotTask(_) => {}
            }
            return out;
        }
        match self.check {
            TaskInputCheck::InputShape => input_shape(&run, &mut out),
            TaskInputCheck::KeysUnique => keys_unique(&run, &mut out),
            TaskInputCheck::UpdateAck => update_ack(&run, &mut out),
            TaskInputCheck::UnknownKeyIgnored => {}
        }
        out
    }
}

fn polls(run: &InputRun) -> impl Iterator<Item = (&Exchange, &Value)> {
    run.seen.iter().filter_map(|s| match s {
        Seen::Poll(e) => e.result().map(|r| (e, r)),
        Seen::Update(..) => None,
    })
}

/// Every `input_required` poll carries a non-empty `inputRequests`, each
/// entry well-formed.
fn input_shape(run: &InputRun, out: &mut Outcome) {
    for (ex, r) in polls(run).filter(|(_, r)| r.get("status").and_then(Value::as_str) == Some("input_required")) {
        let mut found = Vec::new();
        match r.get("inputRequests") {
            Some(Value::Object(m)) if !m.is_empty() => {
                for (k, q) in m {
                    found.extend(input_request_problems(k, q));
                }
            }
            Some(Value::Object(_)) => {
                found.push("an input_required task's inputRequests is empty: it must hold every outstanding request".into())
            }
            Some(v) => found.push(format!("inputRequests must be an object (key → request); got {}", brief(v))),
            None => found.push("an input_required task must carry inputRequests: every outstanding request, keyed".into()),
        }
        for p in found {
            if !out.failures.iter().any(|f| f.ends_with(&p)) {
                out.fail(format!("{}: {p}", ex.label));
            }
        }
    }
}

/// A key names one request over the task's life; once answered it is
/// never issued again (an answered key still shown unchanged right after
/// the update is eventual consistency, not a reuse).
fn keys_unique(run: &InputRun, out: &mut Outcome) {
    let mut first: BTreeMap<String, (String, Value)> = BTreeMap::new();
    let mut answered: BTreeMap<String, bool> = BTreeMap::new(); // key → gone since answered
    for s in &run.seen {
        match s {
            Seen::Update(_, keys) => {
                for k in keys {
                    answered.insert(k.clone(), false);
                }
            }
            Seen::Poll(ex) => {
                let Some(r) = ex.result() else { continue };
                let reqs = if r.get("status").and_then(Value::as_str) == Some("input_required") { input_requests(r) } else { Map::new() };
                for (k, gone) in answered.iter_mut() {
                    if !reqs.contains_key(k) {
                        *gone = true;
                    } else if *gone {
                        out.fail(format!(
                            "{}: the key {k:?} was issued again after its response was delivered (and the task had stopped asking for it): {}",
                            ex.label,
                            brief(&reqs[k])
                        ));
                        *gone = false;
                    }
                }
                for (k, q) in &reqs {
                    match first.get(k) {
                        Some((label, was)) if *was != request_key(q) => {
                            out.fail(format!(
                                "{}: the key {k:?} names a different request than it did in {label}: {} then {}",
                                ex.label,
                                brief(was),
                                brief(&request_key(q))
                            ));
                            first.insert(k.clone(), (ex.label.clone(), request_key(q)));
                        }
                        Some(_) => {}
                        None => {
                            first.insert(k.clone(), (ex.label.clone(), request_key(q)));
                        }
                    }
                }
            }
        }
    }
    if !matches!(run.end, RunEnd::Terminal(_)) {
        let why = match &run.end {
            RunEnd::Budget(w) | RunEnd::Broken(w) => w.clone(),
            _ => String::new(),
        };
        out.incomplete(&format!("the task's input rounds were not followed to the end ({why})"));
    }
}

/// Each `tasks/update` answering the outstanding requests is acknowledged
/// with an empty result; then the task goes on to its end.
fn update_ack(run: &InputRun, out: &mut Outcome) {
    let mut sent = 0;
    for s in &run.seen {
        let Seen::Update(ex, _) = s else { continue };
        sent += 1;
        if let Some(err) = ex.response.as_ref().and_then(|r| r.get("error")) {
            out.fail(format!("{}: answering the outstanding inputRequests must be acknowledged; got the error {}", ex.label, brief(err)));
        } else if let Some(r) = ex.result() {
            for p in ack_problems("tasks/update", r) {
                out.fail(format!("{}: {p}", ex.label));
            }
        }
    }
    match &run.end {
        RunEnd::Terminal(_) => {}
        _ if !out.failures.is_empty() => {}
        RunEnd::Budget(why) | RunEnd::Broken(why) if sent > 0 => {
            out.set_error(format!("after the update the task did not reach its end, so the acknowledgement's effect was not seen: {why}"))
        }
        RunEnd::Budget(why) | RunEnd::Broken(why) => out.set_error(why.clone()),
        RunEnd::NotTask(_) => {}
    }
}

/// A task of its own: once it asks for input, a `tasks/update` with only a
/// key it never issued (ack or error both allowed); the next two polls must
/// still ask for the same requests. The task is cancelled after.
async fn unknown_key(cx: &Cx<'_>, t: &InputTool) -> Outcome {
    let mut out = Outcome::default();
    let (create, id) = match start(cx, t, &format!("tools/call {} declaring the tasks extension (a task of its own)", t.tool)).await {
        Ok(x) => x,
        Err(e) => return Outcome::error(e),
    };
    out.exchanges.push(create);
    let id = match id {
        Ok(id) => id,
        Err(RunEnd::NotTask(why)) => return out.tap_na(why),
        Err(RunEnd::Budget(why) | RunEnd::Broken(why) | RunEnd::Terminal(why)) => return out.with_error(why),
    };
    let started = Instant::now();
    let mut last: Option<Value> = None;
    let mut n = 0;
    let asked = loop {
        n += 1;
        let wait = (n > 1).then_some((t.tool.as_str(), n, started));
        let ex = match poll(cx, &id, format!("tasks/get (poll {n})"), last.as_ref(), wait).await {
            Ok(e) => e,
            Err(e) => return out.with_error(e),
        };
        let r = ex.result().cloned();
        let status = r.as_ref().and_then(|r| r.get("status")).and_then(Value::as_str).map(String::from);
        match status.as_deref() {
            Some("input_required") => {
                out.exchanges.push(ex);
                break r.unwrap_or_default();
            }
            Some(s) if is_terminal(s) => {
                out.exchanges.push(ex);
                return out.tap_na(format!(
                    "the task of {} ended {s} without asking for input, so there was no outstanding request to answer beside",
                    t.tool
                ));
            }
            Some(_) => {}
            None => {
                let s = ex.summary();
                out.exchanges.push(ex);
                return out.with_error(format!("tasks/get (poll {n}) gave no task: {s}"));
            }
        }
        if started.elapsed() >= cx.policy.task_budget {
            out.exchanges.push(ex);
            return out.with_error(format!(
                "the task {id} did not ask for input within the budget ([tasks] budget_seconds = {})",
                cx.policy.task_budget.as_secs()
            ));
        }
        last = r;
    };
    let want: Vec<(String, Value)> = input_requests(&asked).iter().map(|(k, q)| (k.clone(), request_key(q))).collect();
    let bogus = json!({BOGUS_KEY: {"action": "decline"}});
    match main_ex(cx, &format!("tasks/update answering only the key {BOGUS_KEY:?}, never issued"), &update_body(cx, &id, bogus)).await {
        Ok(e) => out.exchanges.push(e),
        Err(e) => return out.with_error(e),
    }
    let mut prev = Some(asked);
    for k in 1..=2 {
        let ex =
            match poll(cx, &id, format!("tasks/get after the update ({k} of 2)"), prev.as_ref(), Some((t.tool.as_str(), n + k, started)))
                .await
            {
                Ok(e) => e,
                Err(e) => return out.with_error(e),
            };
        if let Some(r) = ex.result() {
            let got: Vec<(String, Value)> = input_requests(r).iter().map(|(k, q)| (k.clone(), request_key(q))).collect();
            let status = r.get("status").and_then(Value::as_str).unwrap_or("none");
            if status != "input_required" || got != want {
                out.fail(format!(
                    "{}: a response to a key the task never issued must be ignored, but the task changed: it was input_required asking for {}, now {status}{}",
                    ex.label,
                    want.iter().map(|(k, _)| k.as_str()).collect::<Vec<_>>().join(", "),
                    if status == "input_required" { format!(" asking for {}", brief(&Value::Object(input_requests(r)))) } else { String::new() }
                ));
            }
            prev = Some(r.clone());
        } else {
            let s = ex.summary();
            out.exchanges.push(ex);
            return out.with_error(format!("tasks/get after the update gave no task: {s}"));
        }
        out.exchanges.push(ex);
        if !out.failures.is_empty() {
            break;
        }
    }
    let cancel = request(cx, "tasks/cancel", json!({"taskId": id}), true, Some(all_capabilities()));
    if let Ok(e) = main_ex(cx, "tasks/cancel of this task (clean-up)", &cancel).await {
        out.exchanges.push(e);
    }
    out
}

trait TapNa {
    fn tap_na(self, why: String) -> Outcome;
}

impl TapNa for Outcome {
    fn tap_na(mut self, why: String) -> Outcome {
        self.set_na(why);
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn input_requests_are_judged_by_kind() {
        let ok = |q: Value| assert!(input_request_problems("k", &q).is_empty(), "{q}");
        let bad = |q: Value| assert!(!input_request_problems("k", &q).is_empty(), "{q}");
        ok(json!({"method": "elicitation/create", "params": {"message": "m", "requestedSchema": {"type": "object", "properties": {}}}}));
        ok(
            json!({"method": "elicitation/create", "params": {"mode": "url", "message": "m", "url": "https://x.mcpcert.invalid", "elicitationId": "e"}}),
        );
        ok(json!({"method": "sampling/createMessage", "params": {"messages": [], "maxTokens": 10}}));
        ok(json!({"method": "roots/list"}));
        bad(json!({"method": "elicitation/create", "params": {"requestedSchema": {"type": "object"}}}));
        bad(json!({"method": "elicitation/create", "params": {"mode": "url", "message": "m"}}));
        bad(json!({"method": "sampling/createMessage", "params": {"messages": []}}));
        bad(json!({"method": "tools/call", "params": {}}));
        bad(json!({"method": "roots/list", "params": []}));
    }

    #[test]
    fn requests_compare_without_their_meta() {
        let a = json!({"method": "roots/list", "params": {"_meta": {"x": 1}}});
        let b = json!({"method": "roots/list", "params": {}});
        assert_eq!(request_key(&a), request_key(&b));
    }
}
