//! Request-scoped notifications over a whole run: log messages
//! (`notifications/message`, 2026-07-28) only for a request that asked
//! with a log level, at or above it; progress (`notifications/progress`)
//! only for the token of the request it arrived with, increasing.

use crate::wire::brief;
use serde_json::Value;
use std::collections::HashMap;

/// The log levels, lowest first.
pub const LOG_LEVELS: [&str; 8] = ["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"];

/// One notification the server sent, with the request it arrived with.
pub struct Seen<'a> {
    /// The parsed notification.
    pub frame: &'a Value,
    /// The request whose reply it came with (its body as sent), if any.
    pub request: Option<&'a Value>,
    /// Where, for messages: "reply to tools/call, in <case>".
    pub place: String,
}

fn meta<'a>(request: Option<&'a Value>, key: &str) -> Option<&'a Value> {
    request.and_then(|r| r.pointer("/params/_meta")).and_then(|m| m.get(key))
}

fn method(v: &Value) -> &str {
    v.get("method").and_then(|m| m.as_str()).unwrap_or("")
}

/// Log messages: none for a request without `io.modelcontextprotocol/logLevel`,
/// none below the level asked for, and (when any is sent) the logging
/// capability declared. Returns the problems and how many messages were seen.
pub fn log_problems(seen: &[Seen<'_>], logging_declared: bool) -> (Vec<String>, usize) {
    let mut out = Vec::new();
    let mut count = 0;
    for s in seen.iter().filter(|s| method(s.frame) == "notifications/message") {
        count += 1;
        let level = s.frame.pointer("/params/level").and_then(|l| l.as_str()).unwrap_or("");
        match meta(s.request, "io.modelcontextprotocol/logLevel").and_then(|l| l.as_str()) {
            None => out.push(format!(
                "notifications/message ({}) for a request without io.modelcontextprotocol/logLevel in its _meta ({}): {}",
                if level.is_empty() { "no level" } else { level },
                s.place,
                brief(s.frame)
            )),
            Some(asked) => {
                let rank = |l: &str| LOG_LEVELS.iter().position(|x| *x == l);
                if let (Some(got), Some(min)) = (rank(level), rank(asked))
                    && got < min
                {
                    out.push(format!("notifications/message at level {level}, below the {asked} the request asked for ({})", s.place));
                }
            }
        }
    }
    if count > 0 && !logging_declared {
        out.push(format!("the server sent {count} notifications/message but does not declare capabilities.logging"));
    }
    (out, count)
}

/// Progress: only for the progressToken of the request it arrived with,
/// and `progress` increasing per token. Returns the problems and how many
/// progress notifications were seen.
pub fn progress_problems(seen: &[Seen<'_>]) -> (Vec<String>, usize) {
    let mut out = Vec::new();
    let mut count = 0;
    let mut last: HashMap<String, f64> = HashMap::new();
    for s in seen.iter().filter(|s| method(s.frame) == "notifications/progress") {
        count += 1;
        let token = s.frame.pointer("/params/progressToken");
        let asked = meta(s.request, "progressToken");
        match (token, asked) {
            (_, None) => {
                out.push(format!("notifications/progress for a request that carried no progressToken ({}): {}", s.place, brief(s.frame)))
            }
            (Some(t), Some(a)) if t != a => out.push(format!(
                "notifications/progress names token {} but the request it came with carried {} ({})",
                brief(t),
                brief(a),
                s.place
            )),
            (None, Some(_)) => out.push(format!("notifications/progress without a progressToken ({}): {}", s.place, brief(s.frame))),
            (Some(t), Some(_)) => {
                if let Some(p) = s.frame.pointer("/params/progress").and_then(|p| p.as_f64()) {
                    let key = t.to_string();
                    if let Some(prev) = last.get(&key)
                        && p <= *prev
                    {
                        out.push(format!(
                            "progress for token {key} went from {prev} to {p}; it must increase with each notification ({})",
                            s.place
                        ));
                    }
                    last.insert(key, p);
                }
            }
        }
    }
    (out, count)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn seen<'a>(frame: &'a Value, request: &'a Value) -> Seen<'a> {
        Seen { frame, request: Some(request), place: "test".into() }
    }

    #[test]
    fn log_messages() {
        let plain = json!({"params": {"_meta": {}}});
        let asked = json!({"params": {"_meta": {"io.modelcontextprotocol/logLevel": "warning"}}});
        let info = json!({"method": "notifications/message", "params": {"level": "info", "data": "x"}});
        let error = json!({"method": "notifications/message", "params": {"level": "error", "data": "x"}});
        assert_eq!(log_problems(&[seen(&info, &plain)], true).0.len(), 1, "not asked for");
        assert_eq!(log_problems(&[seen(&info, &asked)], true).0.len(), 1, "below the level");
        assert!(log_problems(&[seen(&error, &asked)], true).0.is_empty());
        assert_eq!(log_problems(&[seen(&error, &asked)], false).0.len(), 1, "logging not declared");
        assert_eq!(log_problems(&[], false), (vec![], 0));
    }

    #[test]
    fn progress() {
        let with = json!({"params": {"_meta": {"progressToken": "t1"}}});
        let without = json!({"params": {}});
        let p = |tok: &str, n: f64| json!({"method": "notifications/progress", "params": {"progressToken": tok, "progress": n}});
        let (a, b, c) = (p("t1", 1.0), p("t1", 2.0), p("t1", 0.5));
        assert!(progress_problems(&[seen(&a, &with), seen(&b, &with)]).0.is_empty());
        assert_eq!(progress_problems(&[seen(&b, &with), seen(&c, &with)]).0.len(), 1, "decreasing");
        assert_eq!(progress_problems(&[seen(&a, &without)]).0.len(), 1, "no token asked");
        let other = p("other", 1.0);
        assert_eq!(progress_problems(&[seen(&other, &with)]).0.len(), 1, "another token");
    }
}
