//! subscriptions/listen (2026-07-28): what one listen session saw, and
//! the rules over it (the acknowledgment, the subscription id on every
//! notification, nothing unrequested).

use crate::record::Frame;
use crate::record::{Exchange, clip};
use crate::wire::{KEY_SUBSCRIPTION_ID, brief};
use serde_json::{Value, json};

/// Notification kinds a filter key opts into.
fn kind_of(filter_key: &str) -> Option<&'static str> {
    match filter_key {
        "toolsListChanged" => Some("notifications/tools/list_changed"),
        "promptsListChanged" => Some("notifications/prompts/list_changed"),
        "resourcesListChanged" => Some("notifications/resources/list_changed"),
        _ => None,
    }
}

/// What one listen session saw.
pub struct Listen {
    pub id: Value,
    pub filter: Value,
    /// Frames that arrived on the subscription's stream (HTTP) or on the
    /// process while it was open (stdio), in order.
    pub frames: Vec<Frame>,
    pub exchanges: Vec<Exchange>,
    pub triggered: bool,
    /// Why the trigger got no answer, if it did not (stdio: it runs on the
    /// listening process).
    pub trigger_error: Option<String>,
    /// stdio: why nothing on the process can be judged, when it answered
    /// nothing at all, not even a ping sent after the listen.
    pub silent: Option<String>,
    /// HTTP: the frames came on the subscription's own stream. stdio: they
    /// came on the process, where other requests' notifications may mix in.
    pub own_stream: bool,
    /// How long the subscription was watched for its acknowledgment.
    pub watched_ms: u128,
}

pub fn sub_id(v: &Value) -> Option<&Value> {
    v.pointer("/params/_meta").and_then(|m| m.get(KEY_SUBSCRIPTION_ID))
}

/// The same id, or the same id written as another JSON type.
pub fn loosely_equal(a: &Value, b: &Value) -> bool {
    a == b || a.to_string().trim_matches('"') == b.to_string().trim_matches('"')
}

/// Whether an acknowledgment, the end of the subscription or a refusal has arrived.
pub fn acknowledged(frames: &[Frame]) -> bool {
    frames.iter().filter_map(|f| f.value.as_ref()).any(|v| {
        v.get("method").and_then(|m| m.as_str()) == Some("notifications/subscriptions/acknowledged")
            || (v.get("id").is_some() && (v.get("result").is_some() || v.get("error").is_some()))
    })
}

/// Notifications are the frames with a method and no id.
pub fn notifications(frames: &[Frame]) -> impl Iterator<Item = &Value> {
    frames.iter().filter_map(|f| f.value.as_ref()).filter(|v| v.get("method").is_some() && v.get("id").is_none())
}

/// The first message for the subscription is the acknowledgment, with the
/// id in the request's own JSON type and a filter the request allows; if
/// the server ended the subscription, how it did so is checked too.
pub fn judge_acknowledgment(s: &Listen) -> (Vec<String>, Option<String>) {
    let mut out = Vec::new();
    let mut note = None;
    let mine = notifications(&s.frames).find(|v| {
        sub_id(v).is_some_and(|x| loosely_equal(x, &s.id))
            || v.get("method").and_then(|m| m.as_str()) == Some("notifications/subscriptions/acknowledged")
    });
    match mine {
        None => out.push(format!(
            "no notifications/subscriptions/acknowledged arrived within {} ms of subscriptions/listen (id {})",
            s.watched_ms,
            brief(&s.id)
        )),
        Some(v) => {
            let method = v.get("method").and_then(|m| m.as_str()).unwrap_or("");
            if method != "notifications/subscriptions/acknowledged" {
                out.push(format!("the first message for the subscription must be notifications/subscriptions/acknowledged; got {method}"));
            }
            match sub_id(v) {
                None => out.push(format!("the acknowledgment lacks params._meta[\"{KEY_SUBSCRIPTION_ID}\"]")),
                Some(x) if x != &s.id => out.push(format!(
                    "subscriptionId must equal the listen request's id with its JSON type kept: the request's id was {} ({}), the acknowledgment says {} ({})",
                    brief(&s.id),
                    type_name(&s.id),
                    brief(x),
                    type_name(x)
                )),
                Some(_) => {}
            }
            if method == "notifications/subscriptions/acknowledged" {
                match v.pointer("/params/notifications").and_then(|n| n.as_object()) {
                    None => out.push("the acknowledgment must list what the server will honour in params.notifications (an object)".into()),
                    Some(h) => {
                        for (k, val) in h {
                            let asked = s.filter.get(k).is_some_and(|a| a == &json!(true) || a.is_array());
                            if !asked && val != &json!(false) {
                                out.push(format!("the acknowledgment honours `{k}`, which the listen request did not ask for"));
                            }
                        }
                    }
                }
            }
        }
    }
    // The end, if the server ended the subscription during the window.
    for v in s.frames.iter().filter_map(|f| f.value.as_ref()) {
        if v.get("id") == Some(&s.id) && v.get("result").is_some() {
            let r = &v["result"];
            note = Some("the server ended the subscription with the listen result".to_string());
            if r.get("resultType").and_then(|t| t.as_str()) != Some("complete")
                || r.pointer("/_meta").and_then(|m| m.get(KEY_SUBSCRIPTION_ID)) != Some(&s.id)
            {
                out.push(format!("the listen result that ends a subscription must have resultType complete and _meta[\"{KEY_SUBSCRIPTION_ID}\"] equal to the id; got {}", brief(r)));
            }
        } else if v.get("method").and_then(|m| m.as_str()) == Some("notifications/cancelled")
            && v.pointer("/params/requestId") == Some(&s.id)
        {
            note = Some("the server ended the subscription with notifications/cancelled (accepted: the spec is inconsistent here, upstream issue #3348)".into());
        }
    }
    (out, note)
}

/// The error the server answered the listen request with, if it refused it.
pub fn refusal(s: &Listen) -> Option<&Value> {
    s.frames.iter().filter_map(|f| f.value.as_ref()).find(|v| v.get("id") == Some(&s.id) && v.get("error").is_some())
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::String(_) => "a string",
        Value::Number(_) => "a number",
        _ => "neither string nor number",
    }
}

/// Nothing the filter did not ask for; no progress or log messages.
/// On stdio a progress or log message without this subscription's id may
/// belong to another request (the trigger call), so it is not counted.
pub fn judge_unrequested(s: &Listen) -> Vec<String> {
    let mut out = Vec::new();
    for v in notifications(&s.frames) {
        let method = v.get("method").and_then(|m| m.as_str()).unwrap_or("");
        if method == "notifications/subscriptions/acknowledged" {
            continue;
        }
        let ours = sub_id(v).is_some_and(|x| loosely_equal(x, &s.id));
        if !s.own_stream && !ours && (method == "notifications/progress" || method == "notifications/message") {
            continue;
        }
        if method == "notifications/progress" || method == "notifications/message" {
            out.push(format!("{method} must not be sent on a subscription: {}", clip(&v.to_string(), 160)));
            continue;
        }
        let wanted = s.filter.as_object().into_iter().flatten().any(|(k, val)| val == &json!(true) && kind_of(k) == Some(method))
            || (method == "notifications/resources/updated" && s.filter.get("resourceSubscriptions").is_some());
        if !wanted {
            out.push(format!("{method} was sent although the listen filter {} did not ask for it", brief(&s.filter)));
        }
    }
    out
}

/// Every notification for the subscription after the acknowledgment
/// carries its id.
pub fn judge_ids(s: &Listen) -> (Vec<String>, usize) {
    let mut out = Vec::new();
    let mut seen = 0;
    for v in notifications(&s.frames) {
        let method = v.get("method").and_then(|m| m.as_str()).unwrap_or("");
        if method == "notifications/subscriptions/acknowledged" || method == "notifications/cancelled" {
            continue;
        }
        // stdio: progress and log messages without the id may be another request's.
        if !s.own_stream && sub_id(v).is_none() && (method == "notifications/progress" || method == "notifications/message") {
            continue;
        }
        seen += 1;
        if sub_id(v) != Some(&s.id) {
            out.push(format!(
                "{method} on the subscription must carry params._meta[\"{KEY_SUBSCRIPTION_ID}\"] = {}; got {}",
                brief(&s.id),
                clip(&v.to_string(), 160)
            ));
        }
    }
    (out, seen)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn session(id: Value, filter: Value, frames: &[Value]) -> Listen {
        Listen {
            id,
            filter,
            frames: frames.iter().map(|v| Frame::from_bytes(v.to_string().as_bytes(), 0)).collect(),
            exchanges: vec![],
            triggered: false,
            trigger_error: None,
            silent: None,
            own_stream: true,
            watched_ms: 1500,
        }
    }

    fn ack(id: Value, honoured: Value) -> Value {
        json!({"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged", "params": {"_meta": {KEY_SUBSCRIPTION_ID: id}, "notifications": honoured}})
    }

    #[test]
    fn acknowledgment_rules() {
        let f = json!({"toolsListChanged": true});
        assert!(judge_acknowledgment(&session(json!(5), f.clone(), &[ack(json!(5), json!({"toolsListChanged": true}))])).0.is_empty());
        assert_eq!(
            judge_acknowledgment(&session(json!(5), f.clone(), &[ack(json!("5"), json!({}))])).0.len(),
            1,
            "string id for a numeric request"
        );
        assert_eq!(judge_acknowledgment(&session(json!("a"), f.clone(), &[])).0.len(), 1, "no acknowledgment");
        assert_eq!(
            judge_acknowledgment(&session(json!(5), f.clone(), &[ack(json!(5), json!({"promptsListChanged": true}))])).0.len(),
            1,
            "honours more than asked"
        );
        let end_ok = json!({"jsonrpc": "2.0", "id": 5, "result": {"resultType": "complete", "_meta": {KEY_SUBSCRIPTION_ID: 5}}});
        let (f1, note) = judge_acknowledgment(&session(json!(5), f.clone(), &[ack(json!(5), json!({})), end_ok]));
        assert!(f1.is_empty() && note.is_some());
        let end_bad = json!({"jsonrpc": "2.0", "id": 5, "result": {"resultType": "complete"}});
        assert_eq!(judge_acknowledgment(&session(json!(5), f.clone(), &[ack(json!(5), json!({})), end_bad])).0.len(), 1);
        let cancelled = json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 5}});
        assert!(judge_acknowledgment(&session(json!(5), f, &[ack(json!(5), json!({})), cancelled])).1.is_some());
    }

    #[test]
    fn unrequested_and_ids() {
        let changed =
            json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed", "params": {"_meta": {KEY_SUBSCRIPTION_ID: 5}}});
        let progress = json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": 5, "progress": 1}});
        assert!(
            judge_unrequested(&session(json!(5), json!({"toolsListChanged": true}), &[ack(json!(5), json!({})), changed.clone()]))
                .is_empty()
        );
        assert_eq!(judge_unrequested(&session(json!(5), json!({}), std::slice::from_ref(&changed))).len(), 1);
        assert_eq!(judge_unrequested(&session(json!(5), json!({}), std::slice::from_ref(&progress))).len(), 1);
        let mut on_process = session(json!(5), json!({}), &[progress]);
        on_process.own_stream = false;
        assert!(judge_unrequested(&on_process).is_empty(), "stdio: another request's progress is not the subscription's");
        let bare = json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"});
        assert_eq!(judge_ids(&session(json!(5), json!({}), &[changed])), (vec![], 1));
        assert_eq!(judge_ids(&session(json!(5), json!({}), &[bare])).0.len(), 1);
    }
}
