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
