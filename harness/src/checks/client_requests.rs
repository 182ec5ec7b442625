//! 2025-11-25 conformance fixtures that ask the client during a call
//! (sampling, elicitation): mcpcert answers on the call's stream, as a
//! client declaring those capabilities does, and judges what was asked.

use super::{Check, Cx, Outcome, result_of, schema_problems};
use crate::wire::{Revision, brief};
use serde::Deserialize;
use serde_json::{Value, json};

/// The form of an elicitation's requestedSchema a fixture must use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Form {
    /// A default of each primitive type (SEP-1034).
    Defaults,
    /// Each enum form: untitled and titled single and multi select, legacy enumNames (SEP-1330).
    Enums,
}

/// 2025-11-25: a fixture tool that, during the call, asks the client by
/// `method` (sampling or elicitation), gets `answer`, and then completes.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FixtureClientRequest {
    tool: String,
    #[serde(default)]
    arguments: Option<Value>,
    method: String,
    answer: Value,
    #[serde(default)]
    form: Option<Form>,
}

impl Check for FixtureClientRequest {
    const NAME: &'static str = "fixture_client_request";
    const ABOUT: &'static str = "2025-11-25: on a session declaring sampling and elicitation, a fixture `tool` asks the client by `method` during the call (the request well-formed; `form`: the elicitation schema's defaults or enum forms), gets `answer`, then completes";
    const REVISIONS: &'static [Revision] = &[Revision::R2025_11_25];

    async fn run(&self, cx: &Cx<'_>) -> Outcome {
        let mut out = Outcome::default();
        let mut conn = match cx.session.open() {
            Ok(c) => c,
            Err(e) => return Outcome::error(e.to_string()),
        };
        // A session of its own, declaring what the fixture needs.
        let init = crate::wire::request(
            &cx.session.next_id(),
            "initialize",
            Some(
                json!({"protocolVersion": cx.rev.as_str(), "capabilities": {"sampling": {}, "elicitation": {}}, "clientInfo": crate::wire::client_info()}),
            ),
        );
        let ex = cx.exchange(&mut conn, &crate::session::Msg::new(cx.rev, "initialize declaring sampling and elicitation", &init)).await;
        if ex.result().is_none() {
            out.set_error(format!("initialize declaring sampling and elicitation was not served ({})", ex.summary()));
            out.exchanges.push(ex);
            return out;
        }
        conn.set_session_id(ex.header("mcp-session-id").map(str::to_string));
        out.exchanges.push(ex);
        let note = crate::wire::notification("notifications/initialized", None);
        out.exchanges.push(cx.exchange(&mut conn, &crate::session::Msg::new(cx.rev, "notifications/initialized", &note).no_reply()).await);

        let seen: std::sync::Mutex<Vec<Value>> = std::sync::Mutex::new(Vec::new());
        let answer = |req: &Value| -> Value {
            if let Ok(mut s) = seen.lock() {
                s.push(req.clone());
            }
            let id = req.get("id").cloned().unwrap_or(Value::Null);
            if req.get("method").and_then(|m| m.as_str()) == Some(self.method.as_str()) {
                json!({"jsonrpc": "2.0", "id": id, "result": self.answer})
            } else {
                json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": "mcpcert answers only the request the fixture is for"}})
            }
        };
        let mut params = json!({"name": self.tool});
        if let Some(a) = &self.arguments {
            params["arguments"] = a.clone();
        }
        let body = cx.request("tools/call", Some(params));
        let what = format!("tools/call of the fixture {}", self.tool);
        // Not filed in the revision's frame log: the whole-run audits hold
        // mcpcert's own sessions, which declare no client capabilities, to
        // sending no requests; this session declared sampling and elicitation.
        let msg = crate::session::Msg::new(cx.rev, &what, &body).answering(&answer);
        // The server may send its request on the session's GET stream
        // instead of the call's (only a SHOULD says not to): it is read
        // meanwhile, and a request there is answered too.
        let sid = conn.session_id().map(str::to_string);
        let label = "GET stream of the session, read while the fixture runs";
        let call = cx.session.exchange(&mut conn, &msg, None);
        let (mut ex, get) = cx.session.with_get_stream(cx.rev, sid.as_deref(), label, Some(&answer), None, call).await;
        let asked: Vec<Value> = seen.lock().map(|s| s.clone()).unwrap_or_default();
        if !asked.is_empty() {
            ex.note = Some(format!("mcpcert answered {} request(s) the server sent during the call", asked.len()));
        }
        let result = result_of(&ex, &what, &mut out);
        out.exchanges.push(ex);
        out.exchanges.extend(get);
        conn.kill();
        let mine: Vec<&Value> = asked.iter().filter(|r| r.get("method").and_then(|m| m.as_str()) == Some(self.method.as_str())).collect();
        match mine.first() {
            None => out.fail(format!(
                "{what}: the fixture must ask the client by {} during the call (before its result, on the call's stream or the session's GET stream); it sent {}",
                self.method,
                if asked.is_empty() { "no request".into() } else { format!("{} other request(s)", asked.len()) }
            )),
            Some(req) => {
                for p in request_problems(&self.method, req) {
                    out.fail(format!("{what}: the {} request {p}", self.method));
                }
                if let Some(form) = self.form {
                    let props = req.pointer("/params/requestedSchema/properties").cloned().unwrap_or(json!({}));
                    for p in form_problems(form, &props) {
                        out.fail(format!("{what}: requestedSchema {p}"));
                    }
                }
            }
        }
        if let Some(r) = result {
            out.failures.extend(schema_problems(cx, "CallToolResult", &r));
            if r.get("content").and_then(|c| c.as_array()).is_none_or(|c| c.is_empty()) {
                out.fail(format!("{what}: once answered, the fixture must complete with content; got {}", brief(&r)));
            }
        }
        out
    }
}

/// What is wrong with a sampling or elicitation request's shape.
fn request_problems(method: &str, req: &Value) -> Vec<String> {
    let mut out = Vec::new();
    let p = req.get("params").cloned().unwrap_or(Value::Null);
    match method {
        "sampling/createMessage" => {
            let ok = p.get("messages").and_then(|m| m.as_array()).is_some_and(|m| {
                !m.is_empty()
                    && m.iter()
                        .all(|x| matches!(x.get("role").and_then(|r| r.as_str()), Some("user" | "assistant")) && x.get("content").is_some())
            });
            if !ok {
                out.push(format!("needs params.messages: a non-empty array of messages with a role and content; got {}", brief(&p)));
            }
            if p.get("maxTokens").is_none_or(|t| t.as_u64().is_none()) {
                out.push(format!("needs params.maxTokens, an integer; got {}", brief(&p)));
            }
        }
        _ => {
            if !p.get("message").is_some_and(|m| m.is_string()) {
                out.push(format!("needs params.message, a string; got {}", brief(&p)));
            }
            let s = p.get("requestedSchema");
            let ok = s.is_some_and(|s| s.get("type") == Some(&json!("object")) && s.get("properties").is_some_and(|x| x.is_object()));
            if !ok {
                out.push(format!(
                    "needs params.requestedSchema, an object schema with properties; got {}",
                    brief(s.unwrap_or(&Value::Null))
                ));
            }
        }
    }
    out
}

/// What the fixture's requestedSchema lacks of the form it must show.
fn form_problems(form: Form, props: &Value) -> Vec<String> {
    let mut out = Vec::new();
    let prop = |n: &str| props.get(n).cloned().unwrap_or(Value::Null);
    let ty = |v: &Value| v.get("type").and_then(|t| t.as_str()).unwrap_or("").to_string();
    match form {
        Form::Defaults => {
            for (name, want_ty, default) in [
                ("name", "string", json!("John Doe")),
                ("age", "integer", json!(30)),
                ("score", "number", json!(95.5)),
                ("status", "string", json!("active")),
                ("verified", "boolean", json!(true)),
            ] {
                let p = prop(name);
                let same = match (p.get("default"), &default) {
                    (Some(d), Value::Number(n)) => d.as_f64() == n.as_f64(),
                    (Some(d), w) => d == w,
                    (None, _) => false,
                };
                if ty(&p) != want_ty || !same {
                    out.push(format!("property `{name}` must be type {want_ty} with default {default}; got {}", brief(&p)));
                }
            }
            let status = prop("status");
            if !status.get("enum").and_then(|e| e.as_array()).is_some_and(|e| e.contains(&json!("active"))) {
                out.push(format!("property `status` must be an enum holding its default \"active\"; got {}", brief(&status)));
            }
        }
        Form::Enums => {
            let titled = |v: Option<&Value>| {
                v.and_then(|x| x.as_array()).is_some_and(|a| {
                    !a.is_empty()
                        && a.iter().all(|o| o.get("const").is_some_and(|c| c.is_string()) && o.get("title").is_some_and(|t| t.is_string()))
                })
            };
            let checks: [(&str, bool, &str); 5] = [
                (
                    "untitledSingle",
                    {
                        let p = prop("untitledSingle");
                        ty(&p) == "string"
                            && p.get("enum").is_some_and(|e| e.is_array())
                            && p.get("oneOf").is_none()
                            && p.get("enumNames").is_none()
                    },
                    "a string with an enum, no oneOf or enumNames",
                ),
                (
                    "titledSingle",
                    {
                        let p = prop("titledSingle");
                        ty(&p) == "string" && titled(p.get("oneOf")) && p.get("enum").is_none()
                    },
                    "a string with oneOf of {const, title}, no enum",
                ),
                (
                    "legacyEnum",
                    {
                        let p = prop("legacyEnum");
                        let n = p.get("enum").and_then(|e| e.as_array()).map(|e| e.len());
                        ty(&p) == "string" && n.is_some() && p.get("enumNames").and_then(|e| e.as_array()).map(|e| e.len()) == n
                    },
                    "a string with an enum and enumNames of the same length",
                ),
                (
                    "untitledMulti",
                    {
                        let p = prop("untitledMulti");
                        ty(&p) == "array"
                            && p.pointer("/items/type") == Some(&json!("string"))
                            && p.pointer("/items/enum").is_some_and(|e| e.is_array())
                            && p.pointer("/items/anyOf").is_none()
                    },
                    "an array whose items are a string enum, no anyOf",
                ),
                (
                    "titledMulti",
                    {
                        let p = prop("titledMulti");
                        ty(&p) == "array" && titled(p.pointer("/items/anyOf")) && p.pointer("/items/enum").is_none()
                    },
                    "an array whose items are anyOf {const, title}, no enum",
                ),
            ];
            for (name, ok, want) in checks {
                if !ok {
                    out.push(format!("property `{name}` must be {want}; got {}", brief(&prop(name))));
                }
            }
        }
    }
    out
}
