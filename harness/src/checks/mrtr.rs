//! Multi round-trip requests (2026-07-28) through the conformance fixtures
//! (`test_input_required_result_*`): each flow a requirement scenario
//! defines, from the first `input_required` result to the complete one.

use super::judge::input::{all_capabilities, answer_for, input_required_problems, is_input_required, needed_capability, responses};
use super::{Check, Cx, Outcome};
use crate::record::Exchange;
use crate::session::SessionError;
use crate::wire::schema::schemas;
use crate::wire::{KEY_CLIENT_CAPS, Revision, brief};
use serde::Deserialize;
use serde_json::{Map, Value, json};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Flow {
    /// Asks for `key` by `method`, then completes once answered.
    Basic,
    /// The first result carries a requestState, given back on the retry.
    RequestState,
    /// One round asks for elicitation, sampling and roots at once.
    Multiple,
    /// Asks twice, with a new requestState each round, then completes.
    MultiRound,
    /// A retry without the requested response is asked again (SHOULD).
    MissingResponse,
    /// The input_required result names its type.
    ResultType,
    /// A retry whose requestState was changed is refused (SHOULD).
    Tampered,
    /// Declaring only sampling, no input request needs another capability.
    Capabilities,
    /// Unrequested extra inputResponses are ignored (SHOULD).
    IgnoreExtra,
    /// Malformed inputResponses do not complete the call (SHOULD).
    ValidateInput,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FixtureInputRequired {
    /// A fixture tool (tools/call) …
    #[serde(default)]
    tool: Option<String>,
    /// … or a fixture prompt (prompts/get).
    #[serde(default)]
    prompt: Option<String>,
    flow: Flow,
    /// Basic: the inputRequests key and method the first round must hold
    /// (key "*": any, the first).
    #[serde(default)]
    key: Option<String>,
    #[serde(default)]
    method: Option<String>,
}

impl FixtureInputRequired {
    fn what(&self) -> String {
        match (&self.tool, &self.prompt) {
            (Some(t), _) => format!("tools/call of the fixture {t}"),
            (_, Some(p)) => format!("prompts/get of the fixture {p}"),
            _ => "the fixture".into(),
        }
    }

    /// The fixture's request, declaring `caps`, with `extra` in its params,
    /// on the main connection.
    async fn ask(&self, cx: &Cx<'_>, label: &str, caps: &Value, extra: &Map<String, Value>) -> Result<Exchange, SessionError> {
        self.send(cx, label, caps, extra, false).await
    }

    /// The same as a negative probe (a tampered, missing or malformed
    /// answer): on a connection of its own.
    async fn probe(&self, cx: &Cx<'_>, label: &str, caps: &Value, extra: &Map<String, Value>) -> Result<Exchange, SessionError> {
        self.send(cx, label, caps, extra, true).await
    }

    async fn send(
        &self,
        cx: &Cx<'_>,
        label: &str,
        caps: &Value,
        extra: &Map<String, Value>,
        isolated: bool,
    ) -> Result<Exchange, SessionError> {
        let (method, mut params) = match (&self.tool, &self.prompt) {
            (Some(t), _) => ("tools/call", json!({"name": t, "arguments": {}})),
            (_, Some(p)) => ("prompts/get", json!({"name": p})),
            _ => ("tools/call", json!({})),
        };
        for (k, v) in extra {
            params[k] = v.clone();
        }
        let mut body = cx.request(method, Some(params));
        body["params"]["_meta"][KEY_CLIENT_CAPS] = caps.clone();
        let label = format!("{} ({label})", self.what());
        if isolated {
            return Ok(cx.probe(&label, &body).await?.pop().unwrap_or_default());
        }
        cx.on_main(&label, &body).await
    }

    fn complete_def(&self) -> &'static str {
        if self.prompt.is_some() { "GetPromptResult" } else { "CallToolResult" }
    }
}

/// The result of an exchange, or why the case stops (a transport error is
/// `error`; a JSON-RPC error a failure of the fixture, unless `error_ok`).
fn result(ex: &Exchange, what: &str, out: &mut Outcome) -> Option<Value> {
    if let Some(e) = &ex.error {
        out.set_error(format!("{what}: {e}"));
        return None;
    }
    if let Some(err) = ex.response.as_ref().and_then(|r| r.get("error")) {
        out.fail(format!("{what} was answered with a JSON-RPC error: {}", brief(err)));
        return None;
    }
    let r = ex.result().cloned();
    if r.is_none() {
        out.set_error(format!("{what}: no result came back ({})", ex.summary()));
    }
    r
}

/// Answers to every input request of `result`, plus its requestState.
fn retry_params(result: &Value) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("inputResponses".into(), responses(result.get("inputRequests")));
    if let Some(s) = result.get("requestState") {
        m.insert("requestState".into(), s.clone());
    }
    m
}

fn judge_input_required(r: &Value, what: &str, out: &mut Outcome) {
    for v in schemas().validate(Revision::R2026_07_28, "InputRequiredResult", r).iter().take(4) {
        out.fail(format!("{what}: the result breaks the InputRequiredResult schema: {v}"));
    }
    for p in input_required_problems(r) {
        out.fail(format!("{what}: {p}"));
    }
}

fn judge_complete(def: &str, r: &Value, what: &str, out: &mut Outcome) {
    if is_input_required(Some(&json!({"result": r}))) {
        out.fail(format!("{what}: the retry with every requested answer must complete; it asked for input again ({})", brief(r)));
        return;
    }
    for v in schemas().validate(Revision::R2026_07_28, def, r).iter().take(4) {
        out.fail(format!("{what}: the final result breaks the {def} schema: {v}"));
    }
    let key = if def == "GetPromptResult" { "messages" } else { "content" };
    if r.get(key).and_then(|c| c.as_array()).is_none_or(|c| c.is_empty()) {
        out.fail(format!("{what}: the final result must carry its {key}; got {}", brief(r)));
    }
}

fn state_of(r: &Value) -> Option<&str> {
    r.get("requestState").and_then(|s| s.as_str()).filter(|s| !s.is_empty())
}

impl Check for FixtureInputRequired {
    const NAME: &'static str = "fixture_input_required";
    const ABOUT: &'static str = "a multi round-trip `flow` through a conformance fixture (`tool` or `prompt`): basic (asks for `key` by `method`, then completes), request-state, multiple, multi-round, missing-response, result-type, tampered, capabilities, ignore-extra, validate-input";
    const REVISIONS: &'static [Revision] = &Revision::STATELESS;

    async fn run(&self, cx: &Cx<'_>) -> Outcome {
        let mut out = Outcome::default();
        let what = self.what();
        let all = all_capabilities();
        match self.flow {
            Flow::MissingResponse | Flow::IgnoreExtra | Flow::ValidateInput => {
                self.one_shot(cx, &what, &all, &mut out).await;
                return out;
            }
            Flow::Capabilities => {
                self.capabilities(cx, &what, &mut out).await;
                return out;
            }
            _ => {}
        }
        // Round 1.
        let ex = match self.ask(cx, "round 1", &all, &Map::new()).await {
            Ok(e) => e,
            Err(e) => return Outcome::error(e.to_string()),
        };
        let r1 = result(&ex, &what, &mut out);
        out.exchanges.push(ex);
        let Some(r1) = r1 else { return out };
        if r1.get("resultType").and_then(|t| t.as_str()) != Some("input_required") {
            let shown = r1.get("resultType").map(brief).unwrap_or_else(|| "no resultType".into());
            out.fail(match self.flow {
                Flow::ResultType => {
                    format!("{what}: a result that asks for input must say resultType \"input_required\"; got {shown} ({})", brief(&r1))
                }
                _ => format!("{what}: the fixture must first ask for input (resultType input_required); got {shown} ({})", brief(&r1)),
            });
            return out;
        }
        judge_input_required(&r1, &what, &mut out);
        let reqs = r1.get("inputRequests").and_then(|r| r.as_object()).cloned().unwrap_or_default();
        match self.flow {
            Flow::ResultType => return out,
            Flow::Basic => {
                let found = match self.key.as_deref() {
                    None | Some("*") => reqs.iter().next(),
                    Some(k) => reqs.get_key_value(k),
                };
                let want = self.method.as_deref().unwrap_or("elicitation/create");
                match found {
                    None => out.fail(format!(
                        "{what}: inputRequests must hold {}; got {}",
                        self.key.as_deref().filter(|k| *k != "*").map(|k| format!("the key `{k}`")).unwrap_or("a request".into()),
                        brief(r1.get("inputRequests").unwrap_or(&Value::Null))
                    )),
                    Some((k, v)) if v.get("method").and_then(|m| m.as_str()) != Some(want) => {
                        out.fail(format!("{what}: inputRequests.{k} must ask by {want}; got {}", brief(v)))
                    }
                    Some(_) => {}
                }
            }
            Flow::RequestState | Flow::MultiRound => {
                if state_of(&r1).is_none() {
                    out.fail(format!("{what}: the first result must carry a non-empty string requestState; got {}", brief(&r1)));
                }
                if reqs.is_empty() {
                    out.fail(format!("{what}: the first result must carry inputRequests; got {}", brief(&r1)));
                }
            }
            Flow::Multiple => {
                if reqs.len() < 3 {
                    out.fail(format!("{what}: one round must ask for at least three inputs; got {}", reqs.len()));
                }
                for m in ["elicitation/create", "sampling/createMessage", "roots/list"] {
                    if !reqs.values().any(|v| v.get("method").and_then(|x| x.as_str()) == Some(m)) {
                        out.fail(format!("{what}: the round must include a {m} request; got {}", brief(&Value::Object(reqs.clone()))));
                    }
                }
                if state_of(&r1).is_none() {
                    out.fail(format!("{what}: the result must carry a non-empty string requestState; got {}", brief(&r1)));
                }
            }
            Flow::Tampered => {
                let Some(s) = state_of(&r1) else {
                    out.fail(format!("{what}: the fixture must carry a requestState to protect; got {}", brief(&r1)));
                    return out;
                };
                let mut extra = retry_params(&r1);
                let tampered = format!("{s}-TAMPERED");
                extra.insert("requestState".into(), json!(tampered));
                let ex = match self.probe(cx, "retry with the requestState changed", &all, &extra).await {
                    Ok(e) => e,
                    Err(e) => return out.with_error(e.to_string()),
                };
                if let Some(e) = &ex.error {
                    out.set_error(format!("{what}: {e}"));
                } else if ex.response.as_ref().and_then(|r| r.get("error")).is_none() {
                    out.fail(format!(
                        "{what}: a retry whose requestState was changed (\"-TAMPERED\" appended) must be refused with a JSON-RPC error; got {}",
                        ex.summary()
                    ));
                }
                out.exchanges.push(ex);
                return out;
            }
            _ => {}
        }
        if !out.failures.is_empty() {
            return out;
        }
        // Round 2 (and 3 for multi-round).
        let ex = match self.ask(cx, "round 2, with the answers", &all, &retry_params(&r1)).await {
            Ok(e) => e,
            Err(e) => return out.with_error(e.to_string()),
        };
        let r2 = result(&ex, &format!("{what}, round 2"), &mut out);
        out.exchanges.push(ex);
        let Some(r2) = r2 else { return out };
        if self.flow != Flow::MultiRound {
            judge_complete(self.complete_def(), &r2, &format!("{what}, round 2"), &mut out);
            return out;
        }
        if !is_input_required(Some(&json!({"result": r2}))) {
            out.fail(format!("{what}: round 2 must ask again (the fixture takes two rounds); got {}", brief(&r2)));
            return out;
        }
        judge_input_required(&r2, &format!("{what}, round 2"), &mut out);
        if state_of(&r2).is_none() || state_of(&r2) == state_of(&r1) {
            out.fail(format!(
                "{what}: round 2 must carry a new requestState (the state of the work so far); got {}",
                brief(r2.get("requestState").unwrap_or(&Value::Null))
            ));
            return out;
        }
        let ex = match self.ask(cx, "round 3, with the answers", &all, &retry_params(&r2)).await {
            Ok(e) => e,
            Err(e) => return out.with_error(e.to_string()),
        };
        let r3 = result(&ex, &format!("{what}, round 3"), &mut out);
        out.exchanges.push(ex);
        if let Some(r3) = r3 {
            judge_complete(self.complete_def(), &r3, &format!("{what}, round 3"), &mut out);
        }
        out
    }
}

impl FixtureInputRequired {
    /// One request with inputResponses from the start (no first round).
    async fn one_shot(&self, cx: &Cx<'_>, what: &str, caps: &Value, out: &mut Outcome) {
        let answer = |name: &str| json!({"action": "accept", "content": {"name": name}});
        let cases: Vec<(&str, Value)> = match self.flow {
            Flow::MissingResponse => vec![("a response under a key it did not ask for", json!({"wrong_key": answer("wrong")}))],
            Flow::IgnoreExtra => vec![(
                "the requested response plus two unrequested ones",
                json!({"user_name": answer("Alice"), "unknown_extra_key": {"action": "accept", "content": {"foo": "bar"}}, "another_unexpected": {"action": "accept", "content": {"baz": 123}}}),
            )],
            _ => vec![("a number where an elicitation answer belongs", json!({"user_name": 12345})), ("inputResponses: null", Value::Null)],
        };
        for (label, responses) in cases {
            let mut extra = Map::new();
            extra.insert("inputResponses".into(), responses);
            let ex = match self.probe(cx, label, caps, &extra).await {
                Ok(e) => e,
                Err(e) => return out.set_error(e.to_string()),
            };
            if let Some(e) = &ex.error {
                out.set_error(format!("{what} with {label}: {e}"));
                out.exchanges.push(ex);
                return;
            }
            let asked = is_input_required(ex.response.as_ref());
            let completed = ex.result().is_some() && !asked;
            match self.flow {
                Flow::MissingResponse if !asked => out.fail(format!(
                    "{what} with {label}: a request lacking the response asked for should be answered with a new input_required result asking again; got {}",
                    ex.summary()
                )),
                Flow::IgnoreExtra if !completed => out.fail(format!(
                    "{what} with {label}: information the server did not ask for should be ignored, and the call completed; got {}",
                    ex.summary()
                )),
                Flow::ValidateInput if completed => out.fail(format!(
                    "{what} with {label}: malformed inputResponses should not complete the call (a JSON-RPC error, or asking again); got {}",
                    ex.summary()
                )),
                _ => {}
            }
            out.exchanges.push(ex);
        }
    }

    /// Declaring only sampling: the fixture asks, and only for sampling.
    async fn capabilities(&self, cx: &Cx<'_>, what: &str, out: &mut Outcome) {
        let ex = match self.ask(cx, "declaring only the sampling capability", &json!({"sampling": {}}), &Map::new()).await {
            Ok(e) => e,
            Err(e) => return out.set_error(e.to_string()),
        };
        if let Some(r) = result(&ex, what, out) {
            if !is_input_required(Some(&json!({"result": r}))) {
                out.fail(format!(
                    "{what}: the fixture must ask for the input the request can give (sampling); it completed: {}",
                    brief(&r)
                ));
            } else {
                let reqs = r.get("inputRequests").and_then(|q| q.as_object()).cloned().unwrap_or_default();
                if reqs.is_empty() {
                    out.fail(format!("{what}: the fixture must ask for the input the request can give (sampling); inputRequests is empty"));
                }
                for (k, v) in &reqs {
                    if let Some(cap) = needed_capability(v).filter(|c| *c != "sampling") {
                        out.fail(format!(
                            "{what}: inputRequests.{k} asks by {} although the request declared no `{cap}` capability (only sampling)",
                            v.get("method").and_then(|m| m.as_str()).unwrap_or("?")
                        ));
                    }
                    if answer_for(v).is_none() {
                        out.fail(format!("{what}: inputRequests.{k} is not a request a client can answer: {}", brief(v)));
                    }
                }
            }
        }
        out.exchanges.push(ex);
    }
}
