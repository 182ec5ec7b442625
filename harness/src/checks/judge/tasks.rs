//! Task handles and extension declarations (digest §17): what a result
//! and the request it answered say about the tasks extension.

use serde_json::Value;

/// The tasks extension's identifier (digest §17.3).
pub const TASKS_EXTENSION: &str = "io.modelcontextprotocol/tasks";

/// Whether a request declared an extension in its own client capabilities
/// (`_meta`): only the request's own declaration counts.
pub fn declares_extension(request: Option<&Value>, id: &str) -> bool {
    let pointer = format!(
        "/params/_meta/{}/extensions/{}",
        crate::wire::KEY_CLIENT_CAPS.replace('~', "~0").replace('/', "~1"),
        id.replace('~', "~0").replace('/', "~1")
    );
    request.and_then(|r| r.pointer(&pointer)).is_some()
}

/// Whether a result is a task handle (`CreateTaskResult`): `resultType`
/// `task`, or a task's fields at its top (`taskId` and `status`), or the
/// nested `task` object of the drafts before the extension.
pub fn is_task_handle(result: &Value) -> bool {
    result.get("resultType").and_then(|t| t.as_str()) == Some("task")
        || (result.get("taskId").is_some_and(Value::is_string) && result.get("status").is_some())
        || result.pointer("/task/taskId").is_some_and(Value::is_string)
}

/// The statuses a task may have.
pub const STATUSES: [&str; 5] = ["working", "input_required", "completed", "failed", "cancelled"];

/// Whether a status is terminal (it never changes again).
pub fn is_terminal(status: &str) -> bool {
    matches!(status, "completed" | "failed" | "cancelled")
}

/// The task id of a handle: at its top, or in the drafts' nested `task`
/// (so that a wrongly shaped handle is still followed, and judged once).
pub fn handle_task_id(result: &Value) -> Option<String> {
    result.get("taskId").or_else(|| result.pointer("/task/taskId")).and_then(Value::as_str).map(String::from)
}

/// Whether a string is an ISO 8601 date-time (`YYYY-MM-DDTHH:MM:SS`, then
/// optional fraction and a zone).
fn iso_8601(s: &str) -> bool {
    let b = s.as_bytes();
    let digits = |r: std::ops::Range<usize>| r.clone().all(|i| b.get(i).is_some_and(u8::is_ascii_digit));
    b.len() >= 19
        && digits(0..4)
        && b[4] == b'-'
        && digits(5..7)
        && b[7] == b'-'
        && digits(8..10)
        && matches!(b[10], b'T' | b't' | b' ')
        && digits(11..13)
        && b[13] == b':'
        && digits(14..16)
        && b[16] == b':'
        && digits(17..19)
}

/// What is wrong with the `Task` fields of a handle or a `tasks/get`
/// result: `taskId`, `status`, `createdAt`, `lastUpdatedAt`, `ttlMs`
/// (required), `statusMessage`, `pollIntervalMs` (optional).
pub fn task_field_problems(t: &Value) -> Vec<String> {
    fields_problems(t, "ttlMs", "pollIntervalMs")
}

/// The same for a 2025-11-25 experimental task, whose durations are
/// `ttl` (required: a number, or null for unlimited) and `pollInterval`.
pub fn legacy_task_problems(t: &Value) -> Vec<String> {
    fields_problems(t, "ttl", "pollInterval")
}

fn fields_problems(t: &Value, ttl: &str, poll: &str) -> Vec<String> {
    let mut out = Vec::new();
    if !t.get("taskId").is_some_and(Value::is_string) {
        out.push(format!("taskId must be a string; got {}", t.get("taskId").map_or("nothing".into(), crate::wire::brief)));
    }
    match t.get("status").and_then(Value::as_str) {
        Some(s) if STATUSES.contains(&s) => {}
        _ => out.push(format!(
            "status must be one of {}; got {}",
            STATUSES.join(", "),
            t.get("status").map_or("nothing".into(), crate::wire::brief)
        )),
    }
    for k in ["createdAt", "lastUpdatedAt"] {
        match t.get(k) {
            Some(Value::String(s)) if iso_8601(s) => {}
            Some(v) => out.push(format!("{k} must be an ISO 8601 timestamp; got {}", crate::wire::brief(v))),
            None => out.push(format!("{k} (an ISO 8601 timestamp) is required")),
        }
    }
    match t.get(ttl) {
        Some(Value::Null) => {}
        Some(v) if v.is_i64() || v.is_u64() => {}
        Some(v) => out.push(format!("{ttl} must be integer milliseconds or null (unlimited); got {}", crate::wire::brief(v))),
        None => out.push(format!("{ttl} (integer milliseconds, or null for unlimited) is required on every task")),
    }
    if let Some(v) = t.get(poll)
        && !(v.is_i64() || v.is_u64())
    {
        out.push(format!("{poll} must be integer milliseconds; got {}", crate::wire::brief(v)));
    }
    if let Some(v) = t.get("statusMessage")
        && !v.is_string()
    {
        out.push(format!("statusMessage must be a string; got {}", crate::wire::brief(v)));
    }
    out
}

/// What is wrong with a `CreateTaskResult`: `resultType` `task`, the task's
/// fields flat at the top (no nested `task`), no `requestState`.
pub fn handle_problems(r: &Value) -> Vec<String> {
    let mut out = Vec::new();
    if r.get("resultType").and_then(Value::as_str) != Some("task") {
        out.push(format!(
            "a task handle must have resultType \"task\"; got {}",
            r.get("resultType").map_or("none".into(), crate::wire::brief)
        ));
    }
    if r.get("task").is_some_and(Value::is_object) && r.get("taskId").is_none() {
        out.push("the task is nested in a `task` object, as the drafts before the extension had it; CreateTaskResult is flat: the task's fields (taskId, status, …) are the result's own".into());
        return out;
    }
    out.extend(task_field_problems(r));
    if r.get("requestState").is_some() {
        out.push("a task handle carries no requestState (that belongs to input_required results of the original request)".into());
    }
    out
}

/// What is wrong with the result of `tasks/get` for task `id`: resultType
/// `complete` (never `task`), the Task fields, the same `taskId`, and
/// `inputRequests` (an object, not empty) on `input_required`.
pub fn get_problems(r: &Value, id: &str) -> Vec<String> {
    let mut out = Vec::new();
    match r.get("resultType").and_then(Value::as_str) {
        Some("complete") => {}
        other => out.push(format!(
            "tasks/get must answer resultType \"complete\" (the standard result of tasks/get; \"task\" is for CreateTaskResult only); got {}",
            other.map_or("none".into(), |s| format!("{s:?}"))
        )),
    }
    out.extend(task_field_problems(r));
    if let Some(got) = r.get("taskId").and_then(Value::as_str)
        && got != id
    {
        out.push(format!("tasks/get for {id:?} answered a task with taskId {got:?}"));
    }
    if r.get("requestState").is_some() {
        out.push("a task carries no requestState (that belongs to input_required results of the original request)".into());
    }
    if r.get("status").and_then(Value::as_str) == Some("input_required")
        && r.get("inputRequests").and_then(Value::as_object).is_none_or(|m| m.is_empty())
    {
        out.push("an input_required task must carry inputRequests: every outstanding request, keyed".into());
    }
    out
}

/// What is wrong with the acknowledgement of `tasks/cancel` or
/// `tasks/update`: an empty result with `resultType` `complete`, not the task.
pub fn ack_problems(method: &str, r: &Value) -> Vec<String> {
    let mut out = Vec::new();
    if r.get("resultType").and_then(Value::as_str) != Some("complete") {
        out.push(format!("{method} must be acknowledged with resultType \"complete\"; got {}", crate::wire::brief(r)));
    }
    let task_fields: Vec<&str> = ["taskId", "status", "createdAt", "lastUpdatedAt", "ttlMs", "result", "error", "inputRequests"]
        .into_iter()
        .filter(|k| r.get(*k).is_some())
        .collect();
    if !task_fields.is_empty() {
        out.push(format!(
            "{method} must be acknowledged with an empty result, not the task (2025-11-25 answered the task; the extension does not): it carries {}",
            task_fields.join(", ")
        ));
    }
    out
}

/// What is wrong with a terminal task's payload: `completed` carries
/// `result`, the original request's result (for tools/call a
/// CallToolResult: `content` an array of blocks); `failed` carries `error`,
/// a JSON-RPC error object (integer `code`, string `message`).
pub fn terminal_payload_problems(t: &Value) -> Vec<String> {
    let mut out = Vec::new();
    match t.get("status").and_then(Value::as_str) {
        Some("completed") => match t.get("result") {
            Some(r @ Value::Object(_)) => {
                if !r
                    .get("content")
                    .and_then(Value::as_array)
                    .is_some_and(|c| c.iter().all(|b| b.get("type").is_some_and(Value::is_string)))
                {
                    out.push(format!(
                        "a completed tools/call task's result must be the CallToolResult the call would have given: `content`, an array of content blocks; got {}",
                        crate::wire::brief(r)
                    ));
                }
            }
            Some(v) => out.push(format!("a completed task's result must be an object; got {}", crate::wire::brief(v))),
            None => out.push("a completed task must carry `result`: the result the original request would have given".into()),
        },
        Some("failed") => match t.get("error") {
            Some(e) if e.get("code").is_some_and(|c| c.is_i64()) && e.get("message").is_some_and(Value::is_string) => {}
            Some(e) => out.push(format!(
                "a failed task's error must be a JSON-RPC error (integer code, string message); got {}",
                crate::wire::brief(e)
            )),
            None => out.push("a failed task must carry `error`: the JSON-RPC error the execution ended with".into()),
        },
        _ => {}
    }
    out
}

/// The part of a task that must not change once it is terminal: its
/// status and its result or error.
/// (`_meta` aside: it is metadata about each answer, and may vary).
pub fn terminal_state(t: &Value) -> Value {
    let strip = |v: Option<&Value>| {
        v.cloned().map(|mut v| {
            if let Some(o) = v.as_object_mut() {
                o.remove("_meta");
            }
            v
        })
    };
    serde_json::json!({"status": t.get("status"), "result": strip(t.get("result")), "error": strip(t.get("error"))})
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn task(status: &str) -> Value {
        json!({"taskId": "a1b2", "status": status, "createdAt": "2026-07-28T10:00:00Z", "lastUpdatedAt": "2026-07-28T10:00:01.5Z", "ttlMs": 60000})
    }

    #[test]
    fn a_flat_handle_passes_and_each_broken_field_is_named() {
        let mut h = task("working");
        h["resultType"] = json!("task");
        assert!(handle_problems(&h).is_empty(), "{:?}", handle_problems(&h));
        assert_eq!(handle_problems(&json!({"resultType": "task", "task": task("working")})).len(), 1);
        for (k, v) in [("ttlMs", json!(1.5)), ("status", json!("done")), ("createdAt", json!("yesterday")), ("pollIntervalMs", json!("5"))]
        {
            let mut b = h.clone();
            b[k] = v;
            assert_eq!(handle_problems(&b).len(), 1, "{k}");
        }
        let mut b = h.clone();
        b.as_object_mut().unwrap().remove("ttlMs");
        assert!(handle_problems(&b)[0].contains("ttlMs"));
        b["ttlMs"] = Value::Null;
        assert!(handle_problems(&b).is_empty());
        b["resultType"] = json!("complete");
        assert_eq!(handle_problems(&b).len(), 1);
    }

    #[test]
    fn tasks_get_is_complete_and_names_the_same_task() {
        let mut t = task("working");
        t["resultType"] = json!("complete");
        assert!(get_problems(&t, "a1b2").is_empty());
        assert_eq!(get_problems(&t, "other").len(), 1);
        t["resultType"] = json!("task");
        assert_eq!(get_problems(&t, "a1b2").len(), 1);
        let mut i = task("input_required");
        i["resultType"] = json!("complete");
        assert_eq!(get_problems(&i, "a1b2").len(), 1);
        i["inputRequests"] = json!({"k": {"method": "elicitation/create", "params": {}}});
        assert!(get_problems(&i, "a1b2").is_empty());
    }

    #[test]
    fn a_2025_11_25_task_has_ttl_and_poll_interval() {
        let t = json!({"taskId": "a1", "status": "working", "createdAt": "2025-11-25T10:00:00Z", "lastUpdatedAt": "2025-11-25T10:00:00Z", "ttl": 60000, "pollInterval": 1000});
        assert!(legacy_task_problems(&t).is_empty(), "{:?}", legacy_task_problems(&t));
        let mut n = t.clone();
        n["ttl"] = Value::Null;
        assert!(legacy_task_problems(&n).is_empty());
        n.as_object_mut().unwrap().remove("ttl");
        assert!(legacy_task_problems(&n)[0].starts_with("ttl (integer"));
        // The extension's names are not 2025-11-25's.
        assert!(!task_field_problems(&t).is_empty());
        let mut p = t.clone();
        p["pollInterval"] = json!("1s");
        assert_eq!(legacy_task_problems(&p).len(), 1);
    }

    #[test]
    fn terminal_payloads() {
        let mut c = task("completed");
        assert_eq!(terminal_payload_problems(&c).len(), 1);
        c["result"] = json!({"content": [{"type": "text", "text": "x"}], "isError": true});
        assert!(terminal_payload_problems(&c).is_empty());
        c["result"] = json!({"structuredContent": {}});
        assert_eq!(terminal_payload_problems(&c).len(), 1);
        let mut f = task("failed");
        assert_eq!(terminal_payload_problems(&f).len(), 1);
        f["error"] = json!({"code": -32603, "message": "boom"});
        assert!(terminal_payload_problems(&f).is_empty());
        assert!(terminal_payload_problems(&task("cancelled")).is_empty());
        assert!(is_terminal("cancelled") && !is_terminal("input_required"));
        assert_eq!(handle_task_id(&json!({"task": {"taskId": "n"}})).as_deref(), Some("n"));
    }
}
