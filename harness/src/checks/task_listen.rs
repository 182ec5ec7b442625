//! The rules of a task's listen stream (tasks extension, §Task Status
//! Notifications), judged over the shared fact `task_listen_run`: task
//! notifications refused to a client that does not declare the extension,
//! no progress or log messages on a task's stream, and the
//! `notifications/tasks` a server may push.

use super::judge::listen::{loosely_equal, sub_id};
use super::judge::tasks::{TASKS_EXTENSION, task_field_problems};
use super::task_listen_run::{DECLARED_ID, UNDECLARED_ID, answer, frames_of};
use super::{Check, Cx, Need, Outcome};
use crate::record::Exchange;
use crate::wire::{Revision, brief};
use serde::Deserialize;
use serde_json::{Value, json};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ListenCheck {
    UndeclaredRefused,
    NoProgressOrMessage,
    NotificationShape,
}

/// One rule of a task's listen stream.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TaskListenProbe {
    check: ListenCheck,
}

impl Check for TaskListenProbe {
    const NAME: &'static str = "task_listen_probe";
    const ABOUT: &'static str =
        "one rule (`check`) of a task's subscriptions/listen stream, for the task of the tool the config names in [tasks]";
    const REVISIONS: &'static [Revision] = &Revision::STATELESS;

    fn needs(&self) -> Vec<Need> {
        vec![Need::TaskTool]
    }

    fn calls_task_tool(&self) -> bool {
        true
    }

    async fn run(&self, cx: &Cx<'_>) -> Outcome {
        let t = match cx.facts.task_tool(cx).await {
            Ok(t) => t,
            Err(why) => return Outcome::na(why),
        };
        if let Some(why) = cx.policy.forbids(&t.tool) {
            return Outcome::na(why);
        }
        let run = match cx.facts.task_listen(cx, &t).await {
            Ok(r) => r,
            Err(e) => return Outcome::error(e),
        };
        let mut out = Outcome { exchanges: vec![run.create.clone()], ..Default::default() };
        let id = match &run.task {
            Ok(id) => id.clone(),
            Err(why) => {
                out.set_na(why.clone());
                return out;
            }
        };
        let (sub, stream) = match self.check {
            ListenCheck::UndeclaredRefused => (UNDECLARED_ID, &run.undeclared),
            _ => (DECLARED_ID, &run.declared),
        };
        let Some(ex) = stream else {
            out.set_error("the listen was not sent");
            return out;
        };
        out.exchanges.push(ex.clone());
        if let Some(e) = &ex.error
            && answer(ex, sub).is_none()
        {
            out.set_error(format!("subscriptions/listen for task {id}: {e}"));
            return out;
        }
        match self.check {
            ListenCheck::UndeclaredRefused => undeclared(ex, &id, &mut out),
            _ => {
                if let Some(err) = answer(ex, sub).and_then(|v| v.get("error")) {
                    out.set_na(if err.get("code").and_then(Value::as_i64) == Some(-32601) {
                        format!("subscriptions/listen is not implemented (-32601): task {id} has no stream to judge")
                    } else {
                        format!(
                            "subscriptions/listen for task {id}, declaring the extension, was refused ({}): the server does not stream its tasks (pushing task notifications is a MAY), so there is no stream to judge",
                            brief(err)
                        )
                    });
                    return out;
                }
                if self.check == ListenCheck::NoProgressOrMessage {
                    no_progress(ex, &id, &mut out);
                } else {
                    shape(ex, &id, &mut out);
                }
            }
        }
        out
    }
}

/// -32021 naming the extension, to a client that does not declare it.
fn undeclared(ex: &Exchange, id: &str, out: &mut Outcome) {
    let label = format!("subscriptions/listen for task {id} declaring no extension");
    let acked =
        frames_of(ex, UNDECLARED_ID).any(|v| v.get("method").and_then(Value::as_str) == Some("notifications/subscriptions/acknowledged"));
    match answer(ex, UNDECLARED_ID).map(|v| v.get("error")) {
        Some(Some(err)) if err.get("code").and_then(Value::as_i64) == Some(-32601) => {
            out.set_na(format!("{label}: subscriptions/listen is not implemented (-32601), so the rule for task notifications cannot apply"));
        }
        Some(Some(err)) if err.get("code").and_then(Value::as_i64) == Some(-32021) => {
            if err.pointer("/data/requiredCapabilities/extensions").and_then(|x| x.get(TASKS_EXTENSION)).is_none() {
                out.fail(format!(
                    "{label}: -32021 must name the missing extension: data.requiredCapabilities = {{\"extensions\": {{\"{TASKS_EXTENSION}\": {{}}}}}}; got {}",
                    brief(err)
                ));
            }
        }
        Some(Some(err)) => out.fail(format!(
            "{label}: a client that asks for task notifications without declaring the tasks extension must get -32021 naming it; got {}",
            brief(err)
        )),
        Some(None) => out.fail(format!(
            "{label}: answered with a result, not refused; a client that asks for task notifications without declaring the tasks extension must get -32021 naming it"
        )),
        None if acked => out.fail(format!(
            "{label}: the subscription was acknowledged; a client that asks for task notifications without declaring the tasks extension must get -32021 naming it"
        )),
        None => out.set_error(format!("{label}: neither an answer nor an acknowledgment came within {} ms", ex.ms)),
    }
}

/// No `notifications/progress` or `notifications/message` on the task's
/// stream (over stdio: on the task's process while the stream was open).
fn no_progress(ex: &Exchange, id: &str, out: &mut Outcome) {
    // Only a stream the server agreed to notify the task on is the task's:
    // an acknowledgment that accepts no task id leaves the rule unexercised.
    let ack =
        frames_of(ex, DECLARED_ID).find(|v| v.get("method").and_then(Value::as_str) == Some("notifications/subscriptions/acknowledged"));
    let accepted = ack
        .and_then(|a| a.pointer("/params/notifications/taskIds"))
        .and_then(Value::as_array)
        .is_some_and(|ids| ids.iter().any(|x| x.as_str() == Some(id)));
    if !accepted {
        out.set_na(match ack {
            Some(a) => format!(
                "the subscription's acknowledgment accepted no notifications for task {id} (notifications.taskIds does not list it: {}): the stream is not the task's, so the rule was not exercised",
                brief(a.pointer("/params/notifications").unwrap_or(&Value::Null))
            ),
            None => format!("no acknowledgment came for the subscription to task {id} within {} ms: there is no task stream to judge", ex.ms),
        });
        return;
    }
    for v in ex.frames.iter().filter_map(|f| f.value.as_ref()) {
        let m = v.get("method").and_then(Value::as_str).unwrap_or("");
        if m == "notifications/progress" || m == "notifications/message" {
            out.fail(format!("the listen stream for task {id} carried {m}, which must not be sent on a task's stream: {}", brief(v)));
        }
    }
}

/// Each `notifications/tasks` carries the whole task (as `tasks/get` would
/// give it) and the subscription id, for a task the acknowledgment
/// accepted.
fn shape(ex: &Exchange, id: &str, out: &mut Outcome) {
    let frames: Vec<&Value> = frames_of(ex, DECLARED_ID).collect();
    let pushed: Vec<&&Value> = frames.iter().filter(|v| v.get("method").and_then(Value::as_str) == Some("notifications/tasks")).collect();
    if pushed.is_empty() {
        out.set_na(format!(
            "no notifications/tasks came for task {id} within {} ms of the subscription: a server MAY push them, and this one did not, so there is none to judge",
            ex.ms
        ));
        return;
    }
    // (No acknowledgment at all is the subscriptions cases' finding.)
    let ack = frames.iter().find(|v| v.get("method").and_then(Value::as_str) == Some("notifications/subscriptions/acknowledged"));
    let accepted = |ack: &&&Value| {
        ack.pointer("/params/notifications/taskIds").and_then(Value::as_array).is_some_and(|ids| ids.iter().any(|x| x.as_str() == Some(id)))
    };
    if ack.is_some_and(|a| !accepted(&a)) {
        out.fail(format!(
            "notifications/tasks came for task {id}, but the subscription's acknowledgment does not list it in notifications.taskIds (the task ids the server agreed to notify about)"
        ));
    }
    for v in pushed {
        let p = v.get("params").cloned().unwrap_or(json!({}));
        if !sub_id(v).is_some_and(|s| loosely_equal(s, &json!(DECLARED_ID))) {
            out.fail(format!("a notifications/tasks does not carry the subscription id {DECLARED_ID:?} in params._meta: {}", brief(v)));
        }
        if p.get("taskId").and_then(Value::as_str) != Some(id) {
            out.fail(format!("a notifications/tasks on the stream for task {id} names another task: {}", brief(v)));
            continue;
        }
        for problem in task_field_problems(&p) {
            out.fail(format!("notifications/tasks for task {id} must carry the whole task, as tasks/get gives it: {problem}"));
        }
    }
}
