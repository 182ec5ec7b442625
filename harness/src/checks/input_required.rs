//! Multi round-trip requests (2026-07-28), with the configured tool that
//! asks for input: the `input_required` result's shape, no input asked
//! for under undeclared capabilities, the retry with `inputResponses` and
//! `requestState`, and a tampered state refused.

use super::judge::input::{all_capabilities, input_required_problems, is_input_required, needed_capability, responses, tamper};
use super::{Check, Cx, Need, Outcome};
use crate::config::InputTool;
use crate::record::{Exchange, clip};
use crate::session::SessionError;
use crate::wire::{self, KEY_CLIENT_CAPS, MetaMode, Revision, brief};
use serde::Deserialize;
use serde_json::{Map, Value, json};

/// Which rule an `input_required_probe` case judges.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum InputCheck {
    ResultShape,
    UndeclaredCapability,
    Retry,
    TamperedState,
    /// A retry without the responses asked for is asked again (SHOULD).
    MissingResponse,
    /// A retry with an unrequested response besides the asked ones is
    /// served as if it were not there (SHOULD).
    ExtraResponse,
}

/// One rule of multi round-trip requests, with the configured tool.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InputRequiredProbe {
    check: InputCheck,
}

/// tools/call of the configured tool, declaring `caps`, with `extra`
/// merged into the params (inputResponses, requestState).
async fn input_call(cx: &Cx<'_>, label: &str, t: &InputTool, caps: &Value, extra: &Map<String, Value>) -> Result<Exchange, SessionError> {
    let mut p = json!({"name": t.tool, "arguments": t.arguments});
    for (k, v) in extra {
        p[k] = v.clone();
    }
    let mut params = wire::modern_params(Some(&p), MetaMode::Full, wire::MODERN).unwrap_or(json!({}));
    params["_meta"][KEY_CLIENT_CAPS] = caps.clone();
    let body = wire::request(&cx.session.next_id(), "tools/call", Some(params));
    cx.on_main(label, &body).await
}

/// The same as a negative probe (a tampered state, answers missing or
/// unasked for, no capabilities declared): on a connection of its own.
async fn input_probe(cx: &Cx<'_>, label: &str, t: &InputTool, caps: &Value, extra: &Map<String, Value>) -> Result<Exchange, SessionError> {
    let mut p = json!({"name": t.tool, "arguments": t.arguments});
    for (k, v) in extra {
        p[k] = v.clone();
    }
    let mut params = wire::modern_params(Some(&p), MetaMode::Full, wire::MODERN).unwrap_or(json!({}));
    params["_meta"][KEY_CLIENT_CAPS] = caps.clone();
    let body = wire::request(&cx.session.next_id(), "tools/call", Some(params));
    Ok(cx.probe(label, &body).await?.pop().unwrap_or_default())
}

impl Check for InputRequiredProbe {
    const NAME: &'static str = "input_required_probe";
    const ABOUT: &'static str = "one rule (`check`) of multi round-trip requests, driven by the tool the config names in [input_required]";
    const REVISIONS: &'static [Revision] = &Revision::STATELESS;

    fn calls_input_tool(&self) -> bool {
        true
    }

    fn needs(&self) -> Vec<Need> {
        vec![Need::InputTool]
    }

    async fn run(&self, cx: &Cx<'_>) -> Outcome {
        let Some(t) = cx.policy.input_tool.clone() else {
            return Outcome::na(
                "no tool that asks for input is named in the target config ([input_required] tool = \"NAME\"); these checks need one",
            );
        };
        if let Some(why) = cx.policy.forbids(&t.tool) {
            return Outcome::na(why);
        }
        let mut out = Outcome::default();
        let caps = all_capabilities();
        let first =
            match input_call(cx, &format!("tools/call {} declaring elicitation, sampling and roots", t.tool), &t, &caps, &Map::new()).await
            {
                Ok(e) => e,
                Err(e) => return Outcome::error(e.to_string()),
            };
        if let Some(e) = &first.error {
            out.set_error(format!("tools/call {}: {e}", t.tool));
            out.exchanges.push(first);
            return out;
        }
        let asked = is_input_required(first.response.as_ref());
        let result = first.result().cloned().unwrap_or(Value::Null);
        let summary = first.summary();
        out.exchanges.push(first);
        if !asked {
            out.set_error(format!(
                "the configured tool {} did not answer input_required ({summary}); check [input_required] in the config",
                t.tool
            ));
            return out;
        }
        match self.check {
            InputCheck::ResultShape => {
                for p in input_required_problems(&result) {
                    out.fail(format!("tools/call {}: {p}", t.tool));
                }
            }
            InputCheck::UndeclaredCapability => undeclared(cx, &t, &mut out).await,
            InputCheck::TamperedState => tampered(cx, &t, &result, &caps, &mut out).await,
            InputCheck::Retry => retry(cx, &t, &result, &caps, &mut out).await,
            InputCheck::MissingResponse | InputCheck::ExtraResponse => odd_retry(cx, &t, &result, &caps, self.check, &mut out).await,
        }
        out
    }
}

/// The same call declaring no client capabilities: no input request may
/// need one it did not declare (-32021 instead, with requiredCapabilities).
async fn undeclared(cx: &Cx<'_>, t: &InputTool, out: &mut Outcome) {
    let ex = match input_call(cx, &format!("tools/call {} declaring no client capabilities", t.tool), t, &json!({}), &Map::new()).await {
        Ok(e) => e,
        Err(e) => return out.set_error(e.to_string()),
    };
    if let Some(e) = &ex.error {
        out.set_error(format!("tools/call {} without capabilities: {e}", t.tool));
    } else if let Some(err) = ex.response.as_ref().and_then(|r| r.get("error")) {
        if err.get("code").and_then(|c| c.as_i64()) == Some(-32021)
            && !err.pointer("/data/requiredCapabilities").is_some_and(|c| c.is_object())
        {
            out.fail(format!("-32021 (missing client capability) must carry data.requiredCapabilities as an object; got {}", brief(err)));
        }
    } else if is_input_required(ex.response.as_ref()) {
        let reqs = ex.result().and_then(|r| r.get("inputRequests")).and_then(|r| r.as_object()).cloned().unwrap_or_default();
        for (k, v) in reqs {
            if let Some(cap) = needed_capability(&v) {
                out.fail(format!(
                    "inputRequests.{k} asks for {} although the request declared no `{cap}` capability (answer -32021 with data.requiredCapabilities instead)",
                    v.get("method").and_then(|m| m.as_str()).unwrap_or("?")
                ));
            }
        }
    }
    out.exchanges.push(ex);
}

/// A retry whose requestState was altered must be refused.
async fn tampered(cx: &Cx<'_>, t: &InputTool, result: &Value, caps: &Value, out: &mut Outcome) {
    let Some(Value::String(s)) = result.get("requestState") else {
        return out.set_na(format!("{} gave no requestState, so there is nothing to tamper with", t.tool));
    };
    let changed = tamper(s);
    let mut extra = Map::new();
    extra.insert("inputResponses".into(), responses(result.get("inputRequests")));
    extra.insert("requestState".into(), json!(changed));
    let ex = match input_probe(cx, &format!("retry of {} with a tampered requestState", t.tool), t, caps, &extra).await {
        Ok(e) => e,
        Err(e) => return out.set_error(e.to_string()),
    };
    if let Some(e) = &ex.error {
        out.set_error(format!("retry with a tampered requestState: {e}"));
    } else if ex.result().is_some() {
        out.fail(format!(
            "a retry whose requestState was altered ({:?} → {:?}) must be refused with a JSON-RPC error, as requestState is attacker-controlled; got {}",
            clip(s, 40),
            clip(&changed, 40),
            ex.summary()
        ));
    }
    out.exchanges.push(ex);
}

/// One retry with the responses changed: none of those asked for
/// (the server should ask again), or one more nobody asked for (the server
/// should ignore it, and answer as it would without it: not an error).
async fn odd_retry(cx: &Cx<'_>, t: &InputTool, result: &Value, caps: &Value, check: InputCheck, out: &mut Outcome) {
    let mut answers = responses(result.get("inputRequests"));
    let label = if check == InputCheck::MissingResponse {
        answers = json!({});
        format!("retry of {} without the responses it asked for", t.tool)
    } else {
        answers["mcpcert_unrequested"] = json!({"action": "accept", "content": {"note": "not asked for"}});
        format!("retry of {} with one response it did not ask for, besides those it did", t.tool)
    };
    let mut extra = Map::new();
    extra.insert("inputResponses".into(), answers);
    if let Some(s) = result.get("requestState") {
        extra.insert("requestState".into(), s.clone());
    }
    let ex = match input_probe(cx, &label, t, caps, &extra).await {
        Ok(e) => e,
        Err(e) => return out.set_error(e.to_string()),
    };
    if let Some(e) = &ex.error {
        out.set_error(format!("{label}: {e}"));
    } else if check == InputCheck::MissingResponse && !is_input_required(ex.response.as_ref()) {
        out.fail(format!(
            "{label}: a request lacking the information asked for should get a new input_required result asking for it again, rather than an error or a result; got {}",
            ex.summary()
        ));
    } else if check == InputCheck::ExtraResponse && ex.response.as_ref().and_then(|r| r.get("error")).is_some() {
        out.fail(format!("{label}: information the server does not recognize or need should be ignored; got {}", ex.summary()));
    }
    out.exchanges.push(ex);
}

/// Up to five rounds: each retry is a new request carrying the original
/// params, the answers and the state byte for byte.
async fn retry(cx: &Cx<'_>, t: &InputTool, result: &Value, caps: &Value, out: &mut Outcome) {
    let mut state = result.get("requestState").cloned();
    let mut reqs = result.get("inputRequests").cloned();
    for round in 1..=5 {
        let mut extra = Map::new();
        extra.insert("inputResponses".into(), responses(reqs.as_ref()));
        if let Some(s) = &state {
            extra.insert("requestState".into(), s.clone());
        }
        let ex = match input_call(cx, &format!("retry {round} of {} with inputResponses and requestState", t.tool), t, caps, &extra).await {
            Ok(e) => e,
            Err(e) => return out.set_error(e.to_string()),
        };
        if let Some(e) = &ex.error {
            out.set_error(format!("retry {round}: {e}"));
            out.exchanges.push(ex);
            return;
        }
        let r = ex.response.clone();
        let summary = ex.summary();
        out.exchanges.push(ex);
        if is_input_required(r.as_ref()) {
            state = r.as_ref().and_then(|r| r.pointer("/result/requestState")).cloned();
            reqs = r.as_ref().and_then(|r| r.pointer("/result/inputRequests")).cloned();
            continue;
        }
        match r.as_ref().and_then(|r| r.get("result")) {
            Some(res) if res.get("resultType").and_then(|t| t.as_str()) == Some("complete") => {}
            Some(res) => out.fail(format!("retry {round}: the final result must have resultType complete; got {}", brief(res))),
            None => out.fail(format!(
                "retry {round} with the answers and the requestState given back byte for byte must be served; got {summary}"
            )),
        }
        return;
    }
    out.set_na("the server still asked for input after five rounds of answers; mcpcert stops there (a server may ask again as often as it likes), so no final result was judged");
}
