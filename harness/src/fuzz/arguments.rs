//! The arguments class: calls of the tools the call policy allows, with
//! arguments made from each tool's `inputSchema` at and just beyond its
//! bounds (`maximum`/`minimum` and their exclusive forms, `maxLength`/
//! `minLength`, `enum`, `additionalProperties: false`). Each argument object
//! starts from valid arguments (`synth_valid`, which names no real host)
//! and changes one property; one beyond a bound is kept only when the
//! schema really rejects it, and one at a bound only when it accepts it.
//! "Servers MUST validate all tool inputs": arguments the schema forbids
//! must get an error or an `isError` result, never plain success.

use super::inputs::{Class, Due, Input, Payload, Want, request};
use crate::checks::judge::{args, egress};
use crate::config::Policy;
use crate::wire::Revision;
use serde_json::{Value, json};

/// One call: the tool, what changed, the arguments, whether the schema
/// accepts them.
pub struct Call {
    pub tool: String,
    pub what: String,
    pub arguments: Value,
    pub valid: bool,
}

/// Every call, in a fixed order (tools by name, then properties by name).
pub fn calls(tools: &[Value], policy: &Policy) -> Vec<Call> {
    let mut tools: Vec<&Value> = tools.iter().collect();
    tools.sort_by_key(|t| t.get("name").and_then(|n| n.as_str()).unwrap_or("").to_string());
    let mut out = Vec::new();
    for t in tools {
        let Some(name) = t.get("name").and_then(|n| n.as_str()) else { continue };
        let schema = t.get("inputSchema").cloned().unwrap_or(json!({"type": "object"}));
        if policy.call_allowed(t, name).is_err() {
            continue;
        }
        let Some(valid) = args::synth_valid(&schema) else { continue };
        let Ok(validator) = jsonschema::options().offline().build(&schema) else { continue };
        let mut props: Vec<(&String, &Value)> =
            schema.get("properties").and_then(|p| p.as_object()).map(|p| p.iter().collect()).unwrap_or_default();
        props.sort_by(|a, b| a.0.cmp(b.0));
        let mut push = |what: String, arguments: Value, want_valid: bool| {
            // Nothing made here may name a host outside the test.
            if !egress::reaching_values(&arguments).is_empty() {
                return;
            }
            let is_valid = validator.is_valid(&arguments);
            if is_valid == want_valid {
                out.push(Call { tool: name.to_string(), what, arguments, valid: is_valid });
            }
        };
        for (p, ps) in props {
            let with = |v: Value| {
                let mut a = valid.clone();
                a[p.as_str()] = v;
                a
            };
            let integer = ps.get("type").and_then(|t| t.as_str()) == Some("integer");
            let step = if integer { 1.0 } else { 0.5 };
            let num = |x: f64| if integer { json!(x as i64) } else { json!(x) };
            if let Some(m) = ps.get("maximum").and_then(|m| m.as_f64()) {
                push(format!("`{p}` at its maximum {m}"), with(num(m)), true);
                push(format!("`{p}` above its maximum {m}"), with(num(m + step)), false);
            }
            if let Some(m) = ps.get("minimum").and_then(|m| m.as_f64()) {
                push(format!("`{p}` at its minimum {m}"), with(num(m)), true);
                push(format!("`{p}` below its minimum {m}"), with(num(m - step)), false);
            }
            if let Some(m) = ps.get("exclusiveMaximum").and_then(|m| m.as_f64()) {
                push(format!("`{p}` at its exclusiveMaximum {m}"), with(num(m)), false);
            }
            if let Some(m) = ps.get("exclusiveMinimum").and_then(|m| m.as_f64()) {
                push(format!("`{p}` at its exclusiveMinimum {m}"), with(num(m)), false);
            }
            if let Some(l) = ps.get("maxLength").and_then(|m| m.as_u64()) {
                push(format!("`{p}` {} characters long (maxLength {l})", l + 1), with(json!("a".repeat(l as usize + 1))), false);
            }
            if let Some(l) = ps.get("minLength").and_then(|m| m.as_u64()).filter(|l| *l > 0) {
                push(format!("`{p}` {} characters long (minLength {l})", l - 1), with(json!("a".repeat(l as usize - 1))), false);
            }
            if let Some(first) = ps.get("enum").and_then(|e| e.as_array()).and_then(|e| e.iter().find_map(|x| x.as_str())) {
                push(format!("`{p}` a near miss of its enum (`{first}` with a letter more)"), with(json!(format!("{first}z"))), false);
            }
        }
        if schema.get("additionalProperties") == Some(&Value::Bool(false)) {
            let mut a = valid.clone();
            a["fuzz_unknown_argument"] = json!(1);
            push("an argument its schema does not have (additionalProperties: false)".into(), a, false);
        }
    }
    out
}

/// Input `index`: call `index % calls`, with its own id.
pub fn input(calls: &[Call], index: usize, rev: Revision) -> Option<Input> {
    let c = calls.get(index % calls.len().max(1))?;
    let id = json!(950_000 + index as i64);
    let body = request(rev, &id, "tools/call", Some(json!({"name": c.tool, "arguments": c.arguments})));
    let want = if c.valid { Want::Any } else { Want::Rejected };
    Some(Input {
        class: Class::Arguments,
        index,
        what: format!("tools/call {}: {}", c.tool, c.what),
        payload: Payload::Message(body.to_string().into_bytes()),
        due: Due::Response { id, want, null_ok: false, also: vec![] },
        json: Some(body),
    })
}
