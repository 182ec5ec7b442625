//! completion/complete: what can be completed (prompt arguments, template
//! variables) and what a completion result must look like.

use crate::wire::{Revision, brief};
use serde_json::{Value, json};

/// One thing to complete: a reference and an argument name.
#[derive(Debug, Clone)]
pub struct CompletionTarget {
    pub reference: Value,
    pub argument: String,
    pub what: String,
}

/// `{var}`, `{+var}`, `{?a,b}` … of an RFC 6570 template, in order.
pub fn template_variables(t: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = t;
    while let Some(start) = rest.find('{') {
        let Some(end) = rest[start..].find('}') else { break };
        let expr = &rest[start + 1..start + end];
        let expr = expr.trim_start_matches(['+', '#', '.', '/', ';', '?', '&']);
        for v in expr.split(',') {
            let v = v.trim_end_matches('*').split(':').next().unwrap_or("").trim();
            if !v.is_empty() && !out.iter().any(|x| x == v) {
                out.push(v.to_string());
            }
        }
        rest = &rest[start + end + 1..];
    }
    out
}

/// What can be completed: each prompt's arguments, each template's variables.
pub fn targets_from(prompts: &[Value], templates: &[Value]) -> Vec<CompletionTarget> {
    let mut out = Vec::new();
    for p in prompts {
        let Some(name) = p.get("name").and_then(|n| n.as_str()) else { continue };
        for a in p.get("arguments").and_then(|a| a.as_array()).into_iter().flatten() {
            if let Some(arg) = a.get("name").and_then(|n| n.as_str()) {
                out.push(CompletionTarget {
                    reference: json!({"type": "ref/prompt", "name": name}),
                    argument: arg.into(),
                    what: format!("prompt {name}, argument {arg}"),
                });
            }
        }
    }
    for t in templates {
        let Some(uri) = t.get("uriTemplate").and_then(|u| u.as_str()) else { continue };
        for var in template_variables(uri) {
            out.push(CompletionTarget {
                reference: json!({"type": "ref/resource", "uri": uri}),
                argument: var.clone(),
                what: format!("template {uri}, variable {var}"),
            });
        }
    }
    out
}

/// Everything wrong with one completion/complete result.
pub fn completion_problems(result: &Value, revision: Revision) -> Vec<String> {
    let mut out = Vec::new();
    if revision.is_stateless() {
        match result.get("resultType").and_then(|t| t.as_str()) {
            Some("complete") => {}
            Some(other) => out.push(format!("resultType must be \"complete\" (completion never asks for input); got {other:?}")),
            None => out.push("resultType is missing".into()),
        }
    }
    let Some(c) = result.get("completion").and_then(|c| c.as_object()) else {
        out.push(format!("`completion` (an object) is missing; got {}", brief(result)));
        return out;
    };
    match c.get("values").and_then(|v| v.as_array()) {
        None => out.push(format!(
            "completion.values must be an array of strings; got {}",
            c.get("values").map(brief).unwrap_or_else(|| "nothing".into())
        )),
        Some(values) => {
            if values.len() > 100 {
                out.push(format!("completion.values holds {} items; at most 100 are allowed", values.len()));
            }
            if let Some(bad) = values.iter().find(|v| !v.is_string()) {
                out.push(format!("completion.values must hold strings only; found {}", brief(bad)));
            }
            if let Some(t) = c.get("total") {
                match t.as_u64() {
                    Some(n) if (n as usize) < values.len() => {
                        out.push(format!("completion.total is {n}, fewer than the {} values returned", values.len()))
                    }
                    Some(_) => {}
                    None => out.push(format!("completion.total must be a non-negative integer; got {}", brief(t))),
                }
            }
        }
    }
    if let Some(h) = c.get("hasMore")
        && !h.is_boolean()
    {
        out.push(format!("completion.hasMore must be a boolean; got {}", brief(h)));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn template_variables_follow_rfc6570() {
        assert_eq!(template_variables("ref://items/{id}"), ["id"]);
        assert_eq!(template_variables("file:///{+path}{?q,lang}"), ["path", "q", "lang"]);
        assert_eq!(template_variables("x://{a:3}/{b*}/{a}"), ["a", "b"]);
        assert!(template_variables("x://plain").is_empty());
    }

    #[test]
    fn completion_shapes() {
        let ok = json!({"resultType": "complete", "completion": {"values": ["a"], "total": 3, "hasMore": true}});
        assert!(completion_problems(&ok, Revision::R2026_07_28).is_empty());
        let many: Vec<String> = (0..101).map(|i| i.to_string()).collect();
        assert_eq!(completion_problems(&json!({"resultType": "complete", "completion": {"values": many}}), Revision::R2026_07_28).len(), 1);
        assert_eq!(
            completion_problems(
                &json!({"resultType": "complete", "completion": {"values": ["a", "b"], "total": 1}}),
                Revision::R2026_07_28
            )
            .len(),
            1
        );
        assert_eq!(completion_problems(&json!({"resultType": "complete", "completion": {"values": [1]}}), Revision::R2026_07_28).len(), 1);
        assert_eq!(
            completion_problems(&json!({"resultType": "complete", "completion": {"values": [], "hasMore": "no"}}), Revision::R2026_07_28)
                .len(),
            1
        );
        assert_eq!(
            completion_problems(&json!({"resultType": "input_required", "completion": {"values": []}}), Revision::R2026_07_28).len(),
            1
        );
        assert!(completion_problems(&json!({"completion": {"values": []}}), Revision::R2025_11_25).is_empty());
    }
}
