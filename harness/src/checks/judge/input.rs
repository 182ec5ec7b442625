//! Multi round-trip requests (2026-07-28): the shape of an
//! `input_required` result, answers to its input requests, and the
//! tampered state a server must refuse.

use super::args::synth_valid;
use crate::wire::brief;
use serde_json::{Map, Value, json};

/// The methods that may answer `input_required`.
pub const MAY_ASK: [&str; 3] = ["tools/call", "prompts/get", "resources/read"];

/// Client capabilities declared when the server may ask for input.
pub fn all_capabilities() -> Value {
    json!({"elicitation": {"form": {}, "url": {}}, "sampling": {}, "roots": {}})
}

/// An answer for each input request, by kind; None for kinds mcpcert
/// cannot answer.
pub fn answer_for(request: &Value) -> Option<Value> {
    let params = request.get("params").cloned().unwrap_or(json!({}));
    match request.get("method").and_then(|m| m.as_str())? {
        "elicitation/create" => {
            if params.get("mode").and_then(|m| m.as_str()) == Some("url") {
                return Some(json!({"action": "accept"}));
            }
            let content = params.get("requestedSchema").and_then(synth_valid).unwrap_or(json!({}));
            Some(json!({"action": "accept", "content": content}))
        }
        "sampling/createMessage" => Some(json!({"role": "assistant", "content": {"type": "text", "text": "mcpcert"}, "model": "mcpcert"})),
        "roots/list" => Some(json!({"roots": []})),
        _ => None,
    }
}

/// Which client capability an input request needs.
pub fn needed_capability(request: &Value) -> Option<&'static str> {
    match request.get("method").and_then(|m| m.as_str())? {
        "elicitation/create" => Some("elicitation"),
        "sampling/createMessage" => Some("sampling"),
        "roots/list" => Some("roots"),
        _ => None,
    }
}

/// The input requests of an `input_required` result that ask for a kind
/// the request did not declare in its client capabilities (`declared`:
/// the request's `io.modelcontextprotocol/clientCapabilities`; None:
/// nothing declared). Elicitation counts by mode: `elicitation: {}`
/// declares form mode only; URL mode needs `elicitation.url`.
pub fn undeclared_requests(declared: Option<&Value>, result: &Value) -> Vec<String> {
    let has = |k: &str| declared.and_then(|d| d.get(k));
    let mut out = Vec::new();
    for (k, q) in result.get("inputRequests").and_then(|r| r.as_object()).into_iter().flatten() {
        let Some(cap) = needed_capability(q) else { continue };
        let (ok, what) = match cap {
            "elicitation" => {
                let mode = q.pointer("/params/mode").and_then(|m| m.as_str()).unwrap_or("form");
                let e = has("elicitation").and_then(|e| e.as_object());
                let ok = match mode {
                    "url" => e.is_some_and(|e| e.contains_key("url")),
                    _ => e.is_some_and(|e| e.is_empty() || e.contains_key("form")),
                };
                (ok, format!("elicitation/create in {mode} mode"))
            }
            _ => (has(cap).is_some(), q.get("method").and_then(|m| m.as_str()).unwrap_or(cap).to_string()),
        };
        if !ok {
            let said = match declared {
                Some(d) => format!("the request declared {}", brief(d)),
                None => "the request declared no client capabilities".into(),
            };
            out.push(format!("inputRequests.{k} asks by {what}; {said}"));
        }
    }
    out
}

/// Problems with an `input_required` result's shape.
pub fn input_required_problems(result: &Value) -> Vec<String> {
    let mut out = Vec::new();
    let reqs = result.get("inputRequests");
    let state = result.get("requestState");
    if reqs.is_none() && state.is_none() {
        out.push("an input_required result must carry inputRequests, requestState or both; it has neither".into());
    }
    if let Some(s) = state
        && !s.is_string()
    {
        out.push(format!("requestState must be a string; got {}", brief(s)));
    }
    if let Some(r) = reqs {
        match r.as_object() {
            None => out.push(format!("inputRequests must be an object (key → request); got {}", brief(r))),
            Some(m) => {
                for (k, v) in m {
                    match v.get("method").and_then(|x| x.as_str()) {
                        Some("elicitation/create" | "sampling/createMessage" | "roots/list") => {}
                        other => out.push(format!(
                            "inputRequests.{k}: method must be elicitation/create, sampling/createMessage or roots/list; got {}",
                            other.map(|o| format!("{o:?}")).unwrap_or_else(|| "none".into())
                        )),
                    }
                }
            }
        }
    }
    if result.get("ttlMs").is_some() || result.get("cacheScope").is_some() {
        out.push("an input_required result carries no caching hints (ttlMs, cacheScope)".into());
    }
    out
}

pub fn is_input_required(r: Option<&Value>) -> bool {
    r.and_then(|r| r.pointer("/result/resultType")).and_then(|t| t.as_str()) == Some("input_required")
}

/// Answers for every input request mcpcert can answer.
pub fn responses(reqs: Option<&Value>) -> Value {
    let mut m = Map::new();
    for (k, v) in reqs.and_then(|r| r.as_object()).into_iter().flatten() {
        if let Some(a) = answer_for(v) {
            m.insert(k.clone(), a);
        }
    }
    Value::Object(m)
}

/// The same state with one character changed (and still a plain string).
pub fn tamper(s: &str) -> String {
    let mut chars: Vec<char> = s.chars().collect();
    match chars.iter().rposition(|c| c.is_ascii_alphanumeric()) {
        Some(i) => {
            chars[i] = if chars[i] == 'A' { 'B' } else { 'A' };
            chars.into_iter().collect()
        }
        None => format!("{s}A"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes() {
        assert!(input_required_problems(&json!({"resultType": "input_required", "requestState": "x"})).is_empty());
        assert_eq!(input_required_problems(&json!({"resultType": "input_required"})).len(), 1);
        assert_eq!(input_required_problems(&json!({"resultType": "input_required", "inputRequests": {"a": {"method": "ping"}}})).len(), 1);
        assert_eq!(input_required_problems(&json!({"resultType": "input_required", "requestState": "x", "ttlMs": 5})).len(), 1);
    }

    #[test]
    fn input_requests_only_of_declared_kinds() {
        let ask = |m: &str, mode: Option<&str>| {
            let mut p = json!({"message": "?"});
            if let Some(mode) = mode {
                p["mode"] = json!(mode);
            }
            json!({"resultType": "input_required", "inputRequests": {"k": {"method": m, "params": p}}})
        };
        let form = ask("elicitation/create", None);
        assert_eq!(undeclared_requests(None, &form).len(), 1);
        assert_eq!(undeclared_requests(Some(&json!({})), &form).len(), 1);
        assert!(undeclared_requests(Some(&json!({"elicitation": {}})), &form).is_empty(), "{{}} declares form mode");
        assert!(undeclared_requests(Some(&json!({"elicitation": {"form": {}}})), &form).is_empty());
        assert_eq!(undeclared_requests(Some(&json!({"elicitation": {"url": {}}})), &form).len(), 1);
        let url = ask("elicitation/create", Some("url"));
        assert_eq!(undeclared_requests(Some(&json!({"elicitation": {}})), &url).len(), 1, "URL mode must be declared");
        assert!(undeclared_requests(Some(&json!({"elicitation": {"url": {}}})), &url).is_empty());
        let sampling = ask("sampling/createMessage", None);
        assert!(undeclared_requests(Some(&json!({"sampling": {}})), &sampling).is_empty());
        assert!(undeclared_requests(Some(&json!({"elicitation": {}})), &sampling)[0].contains("sampling/createMessage"));
        assert!(undeclared_requests(None, &json!({"resultType": "input_required", "requestState": "s"})).is_empty());
    }

    #[test]
    fn answers_and_tampering() {
        let e = json!({"method": "elicitation/create", "params": {"message": "ok?", "requestedSchema": {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}}});
        assert_eq!(answer_for(&e).unwrap(), json!({"action": "accept", "content": {"ok": false}}));
        assert_eq!(answer_for(&json!({"method": "roots/list"})).unwrap(), json!({"roots": []}));
        assert!(answer_for(&json!({"method": "other"})).is_none());
        assert_ne!(tamper("abc.def"), "abc.def");
        assert_eq!(tamper("abc.def").len(), 7);
        assert_eq!(tamper("..."), "...A");
    }
}
