//! Multi round-trip requests (2026-07-28): `resultType: input_required`,
//! the retry with `inputResponses` and `requestState`, tampering, and
//! which methods may ask for input at all.

use super::actions::StepOut;
use super::tools::synth_valid;
use super::{Engine, Exchange, clip};
use crate::wire::{self, KEY_CLIENT_CAPS, MODERN, MetaMode, brief};
use serde_json::{Map, Value, json};

/// The methods that may answer `input_required`.
pub const MAY_ASK: [&str; 3] = ["tools/call", "prompts/get", "resources/read"];

/// What the operator names for these checks (`[input_required]`).
#[derive(Debug, Clone, Default)]
pub struct InputTool {
    pub tool: String,
    pub arguments: Value,
}

/// Client capabilities declared when the server may ask for input.
fn all_capabilities() -> Value {
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
fn needed_capability(request: &Value) -> Option<&'static str> {
    match request.get("method").and_then(|m| m.as_str())? {
        "elicitation/create" => Some("elicitation"),
        "sampling/createMessage" => Some("sampling"),
        "roots/list" => Some("roots"),
        _ => None,
    }
}

/// Problems with an `input_required` result's shape.
pub fn input_required_problems(result: &Value) -> Vec<String> {
    let mut out = Vec::new();
    let reqs = result.get("inputRequests");
    let state = result.get("requestState");
    if reqs.is_none() && state.is_none() {
        out.push("an input_required result must carry inputRequests, requestState or both; it has neither".into());
    }
    if let Some(s) = state {
        if !s.is_string() {
            out.push(format!("requestState must be a string; got {}", brief(s)));
        }
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

fn is_input_required(r: Option<&Value>) -> bool {
    r.and_then(|r| r.pointer("/result/resultType")).and_then(|t| t.as_str()) == Some("input_required")
}

impl Engine {
    /// tools/call of the configured tool, declaring `caps`, with `extra`
    /// merged into the params (inputResponses, requestState).
    async fn input_call(
        &mut self,
        rev: &str,
        label: &str,
        t: &InputTool,
        caps: &Value,
        extra: &Map<String, Value>,
    ) -> Result<Exchange, String> {
        let mut p = json!({"name": t.tool, "arguments": t.arguments});
        for (k, v) in extra {
            p[k] = v.clone();
        }
        let mut params = wire::modern_params(Some(&p), MetaMode::Full, MODERN).unwrap_or(json!({}));
        params["_meta"][KEY_CLIENT_CAPS] = caps.clone();
        let id = self.fresh_id();
        let body = wire::request(&id, "tools/call", Some(params));
        self.on_main(rev, label, &body).await
    }

    pub(super) async fn mrtr_action(&mut self, case: &crate::suite::Case, with: Option<&Value>) -> StepOut {
        let rev = case.revision.clone();
        let check = with.and_then(|w| w.get("check")).and_then(|c| c.as_str()).unwrap_or("").to_string();
        let Some(t) = self.cfg.contract.input_tool.clone() else {
            return StepOut {
                na: Some(
                    "no tool that asks for input is named in the target config ([input_required] tool = \"NAME\"); these checks need one"
                        .into(),
                ),
                ..Default::default()
            };
        };
        let mut out = StepOut::default();
        let caps = all_capabilities();
        let first = match self
            .input_call(&rev, &format!("tools/call {} declaring elicitation, sampling and roots", t.tool), &t, &caps, &Map::new())
            .await
        {
            Ok(e) => e,
            Err(e) => return StepOut { error: Some(e), ..Default::default() },
        };
        if let Some(e) = &first.error {
            out.error = Some(format!("tools/call {}: {e}", t.tool));
            out.exchanges.push(first);
            return out;
        }
        let asked = is_input_required(first.response.as_ref());
        let result = first.response.as_ref().and_then(|r| r.get("result")).cloned().unwrap_or(Value::Null);
        out.exchanges.push(first.clone());
        if !asked {
            out.error = Some(format!(
                "the configured tool {} did not answer input_required ({}); check [input_required] in the config",
                t.tool,
                first.summary()
            ));
            return out;
        }
        match check.as_str() {
            "result-shape" => {
                for p in input_required_problems(&result) {
                    out.failures.push(format!("tools/call {}: {p}", t.tool));
                }
            }
            "undeclared-capability" => {
                let none = json!({});
                let ex = match self
                    .input_call(&rev, &format!("tools/call {} declaring no client capabilities", t.tool), &t, &none, &Map::new())
                    .await
                {
                    Ok(e) => e,
                    Err(e) => return StepOut { error: Some(e), ..Default::default() },
                };
                if let Some(e) = &ex.error {
                    out.error = Some(format!("tools/call {} without capabilities: {e}", t.tool));
                } else if let Some(err) = ex.response.as_ref().and_then(|r| r.get("error")) {
                    if err.get("code").and_then(|c| c.as_i64()) == Some(-32021)
                        && !err.pointer("/data/requiredCapabilities").is_some_and(|c| c.is_object())
                    {
                        out.failures.push(format!(
                            "-32021 (missing client capability) must carry data.requiredCapabilities as an object; got {}",
                            brief(err)
                        ));
                    }
                } else if is_input_required(ex.response.as_ref()) {
                    let reqs = ex
                        .response
                        .as_ref()
                        .and_then(|r| r.pointer("/result/inputRequests"))
                        .and_then(|r| r.as_object())
                        .cloned()
                        .unwrap_or_default();
                    for (k, v) in reqs {
                        if let Some(cap) = needed_capability(&v) {
                            out.failures.push(format!(
                                "inputRequests.{k} asks for {} although the request declared no `{cap}` capability (answer -32021 with data.requiredCapabilities instead)",
                                v.get("method").and_then(|m| m.as_str()).unwrap_or("?")
                            ));
                        }
                    }
                }
                out.exchanges.push(ex);
            }
            "retry" | "tampered-state" => {
                let mut state = result.get("requestState").cloned();
                let mut reqs = result.get("inputRequests").cloned();
                if check == "tampered-state" {
                    let Some(Value::String(s)) = state else {
                        out.na = Some(format!("{} gave no requestState, so there is nothing to tamper with", t.tool));
                        return out;
                    };
                    let tampered = tamper(&s);
                    let mut extra = Map::new();
                    extra.insert("inputResponses".into(), responses(reqs.as_ref()));
                    extra.insert("requestState".into(), json!(tampered));
                    let ex = match self
                        .input_call(&rev, &format!("retry of {} with a tampered requestState", t.tool), &t, &caps, &extra)
                        .await
                    {
                        Ok(e) => e,
                        Err(e) => return StepOut { error: Some(e), ..Default::default() },
                    };
                    if let Some(e) = &ex.error {
                        out.error = Some(format!("retry with a tampered requestState: {e}"));
                    } else if ex.response.as_ref().is_some_and(|r| r.get("result").is_some()) {
                        out.failures.push(format!(
                            "a retry whose requestState was altered ({:?} → {:?}) must be refused with a JSON-RPC error, as requestState is attacker-controlled; got {}",
                            clip(&s, 40),
                            clip(&tampered, 40),
                            ex.summary()
                        ));
                    }
                    out.exchanges.push(ex);
                    return out;
                }
                // Up to five rounds: each retry is a new request carrying the
                // original params, the answers and the state byte for byte.
                for round in 1..=5 {
                    let mut extra = Map::new();
                    extra.insert("inputResponses".into(), responses(reqs.as_ref()));
                    if let Some(s) = &state {
                        extra.insert("requestState".into(), s.clone());
                    }
                    let ex = match self
                        .input_call(&rev, &format!("retry {round} of {} with inputResponses and requestState", t.tool), &t, &caps, &extra)
                        .await
                    {
                        Ok(e) => e,
                        Err(e) => return StepOut { error: Some(e), ..Default::default() },
                    };
                    if let Some(e) = &ex.error {
                        out.error = Some(format!("retry {round}: {e}"));
                        out.exchanges.push(ex);
                        return out;
                    }
                    let r = ex.response.clone();
                    out.exchanges.push(ex.clone());
                    if is_input_required(r.as_ref()) {
                        state = r.as_ref().and_then(|r| r.pointer("/result/requestState")).cloned();
                        reqs = r.as_ref().and_then(|r| r.pointer("/result/inputRequests")).cloned();
                        continue;
                    }
                    match r.as_ref().and_then(|r| r.get("result")) {
                        Some(res) if res.get("resultType").and_then(|t| t.as_str()) == Some("complete") => return out,
                        Some(res) => {
                            out.failures.push(format!("retry {round}: the final result must have resultType complete; got {}", brief(res)))
                        }
                        None => out.failures.push(format!(
                            "retry {round} with the answers and the requestState given back byte for byte must be served; got {}",
                            ex.summary()
                        )),
                    }
                    return out;
                }
                out.failures.push("still input_required after five rounds of answers".into());
            }
            other => out.error = Some(format!("suite problem: unknown input_required check `{other}`")),
        }
        out
    }

    /// Every reply seen in this revision: input_required only from the
    /// three methods that may ask.
    pub(super) fn mrtr_only_allowed(&mut self, rev: &str) -> StepOut {
        let mut out = StepOut::default();
        let Some(st) = self.revs.get(rev) else { return out };
        let mut bad = Vec::new();
        let mut checked = 0;
        for lf in &st.frames {
            let parsed = lf.parsed();
            let Some(v) = &parsed.value else { continue };
            let Some(method) = lf.origin.rpc_method.as_deref() else { continue };
            if v.get("result").is_none() || !parsed.is_response() {
                continue;
            }
            checked += 1;
            if v.pointer("/result/resultType").and_then(|t| t.as_str()) == Some("input_required") && !MAY_ASK.contains(&method) {
                if bad.len() < 10 {
                    bad.push(format!("  - reply to {method} (in {}): {}", lf.case, clip(&lf.frame.raw, 160)));
                }
            }
        }
        out.exchanges.push(Exchange {
            label: "input_required audit".into(),
            note: Some(format!("{checked} results checked")),
            ..Default::default()
        });
        if !bad.is_empty() {
            out.failures
                .push(format!("only tools/call, prompts/get and resources/read may answer input_required; these did:\n{}", bad.join("\n")));
        }
        out
    }
}

/// Answers for every input request mcpcert can answer.
fn responses(reqs: Option<&Value>) -> Value {
    let mut m = Map::new();
    for (k, v) in reqs.and_then(|r| r.as_object()).into_iter().flatten() {
        if let Some(a) = answer_for(v) {
            m.insert(k.clone(), a);
        }
    }
    Value::Object(m)
}

/// The same state with one character changed (and still a plain string).
fn tamper(s: &str) -> String {
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
