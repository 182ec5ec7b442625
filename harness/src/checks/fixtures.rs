//! Conformance fixtures: the tools, resources and prompts that SDK test
//! servers implement for the requirement sets (`test_simple_text`,
//! `test://static-text`, `test_prompt_with_arguments`, …), called and
//! judged against what their scenarios define. A case names the fixtures it
//! needs (`applies.fixtures`); the run makes it n/a, or under
//! `--requirements` a failure, when the server does not list them.

use super::judge::content::{base64_problem, content_problems};
use super::{Check, Cx, Outcome, result_of, schema_problems};
use crate::record::Exchange;
use crate::wire::{Revision, brief};
use serde::Deserialize;
use serde_json::{Value, json};
use std::collections::BTreeMap;

fn non_empty_str(v: Option<&Value>) -> bool {
    v.and_then(|s| s.as_str()).is_some_and(|s| !s.is_empty())
}

/// Problems if no block of `kind` in `blocks` is complete.
fn block_missing(blocks: &[Value], kind: &str, mime: Option<&String>) -> Option<String> {
    let of_kind: Vec<&Value> = blocks.iter().filter(|b| b.get("type").and_then(|t| t.as_str()) == Some(kind)).collect();
    if of_kind.is_empty() {
        let kinds: Vec<&str> = blocks.iter().filter_map(|b| b.get("type").and_then(|t| t.as_str())).collect();
        return Some(format!("no `{kind}` content block (got {})", if kinds.is_empty() { "none".into() } else { kinds.join(", ") }));
    }
    let complete = |b: &&Value| match kind {
        "text" => non_empty_str(b.get("text")),
        "image" | "audio" => {
            non_empty_str(b.get("data"))
                && b.get("data").and_then(|d| d.as_str()).is_some_and(|d| base64_problem(d).is_none())
                && non_empty_str(b.get("mimeType"))
                && mime.is_none_or(|m| b.get("mimeType").and_then(|x| x.as_str()) == Some(m.as_str()))
        }
        "resource" => {
            let r = b.get("resource");
            non_empty_str(r.and_then(|r| r.get("uri")))
                && non_empty_str(r.and_then(|r| r.get("mimeType")))
                && (non_empty_str(r.and_then(|r| r.get("text"))) || non_empty_str(r.and_then(|r| r.get("blob"))))
        }
        _ => true,
    };
    if of_kind.iter().any(complete) {
        return None;
    }
    let want = match kind {
        "text" => "a non-empty `text`".to_string(),
        "image" | "audio" => format!("non-empty base64 `data` and a `mimeType`{}", mime.map(|m| format!(" of {m}")).unwrap_or_default()),
        "resource" => "`resource` with a `uri`, a `mimeType` and non-empty `text` or `blob`".into(),
        _ => String::new(),
    };
    Some(format!("the `{kind}` block needs {want}; got {}", brief(of_kind[0])))
}

/// A conformance fixture tool called and its result judged: the content
/// blocks it must return, `isError`, and (`progress`) the progress it must
/// report for the call's token before its result.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FixtureCall {
    tool: String,
    /// Omitted: the request carries no `arguments` member.
    #[serde(default)]
    arguments: Option<Value>,
    /// Block types the content must hold (each complete).
    #[serde(default)]
    blocks: Vec<String>,
    /// The mimeType a block type must have (`{"audio": "audio/wav"}`).
    #[serde(default)]
    mime: BTreeMap<String, String>,
    #[serde(default)]
    is_error: bool,
    /// At least this many notifications/progress for the call's token,
    /// before the result, with increasing `progress`.
    #[serde(default)]
    progress: usize,
    /// 2025-11-25: after logging/setLevel debug, at least this many
    /// notifications/message on the call's stream before its result.
    #[serde(default)]
    logs: usize,
    /// Notifications that must not come with the call (it asked for
    /// nothing: `notifications/message` without a log level).
    #[serde(default)]
    silent: Vec<String>,
    /// No request may come on the call's stream.
    #[serde(default)]
    no_requests: bool,
    /// 2025-11-25 HTTP: judge only where the call's notifications came:
    /// on the call's own stream, not on the session's GET stream (SHOULD).
    #[serde(default)]
    on_call_stream: bool,
    /// Judge only what came with the call (`silent`, `no_requests`), and
    /// that it was not refused, not the result's shape (the wire audit
    /// judges that): what the requirement set's scenario judges.
    #[serde(default)]
    frames_only: bool,
    /// The client capabilities the request declares (default none).
    #[serde(default)]
    capabilities: Option<Value>,
}

impl Check for FixtureCall {
    const NAME: &'static str = "fixture_call";
    const ABOUT: &'static str = "tools/call of a conformance fixture (`tool`, `arguments` or none): the `blocks` its content must hold (with `mime`), `is_error`, and `progress` notifications for the call's token before the result";

    fn exclusive(&self) -> bool {
        // After logging/setLevel on the main connection (2025-11-25); and a
        // case that reads the session's GET stream while the fixture runs
        // hears only its own traffic when nothing else runs (else what
        // other cases draw lands in its transcript, and the report would
        // depend on -j).
        self.logs > 0 || self.progress > 0 || self.on_call_stream
    }

    async fn run(&self, cx: &Cx<'_>) -> Outcome {
        let mut params = json!({"name": self.tool});
        if let Some(a) = &self.arguments {
            params["arguments"] = a.clone();
        }
        let mut body = cx.request("tools/call", Some(params));
        if let Some(caps) = &self.capabilities
            && let Some(meta) = body.pointer_mut("/params/_meta").and_then(|m| m.as_object_mut())
        {
            meta.insert(crate::wire::KEY_CLIENT_CAPS.into(), caps.clone());
        }
        let token = json!(format!("mcpcert-fixture-progress-{}", body["id"]));
        match body["params"].get_mut("_meta").and_then(|m| m.as_object_mut()) {
            Some(meta) => {
                meta.insert("progressToken".into(), token.clone());
            }
            None => body["params"]["_meta"] = json!({"progressToken": token}),
        }
        let what = format!("tools/call of the fixture {}", self.tool);
        let mut out = Outcome::default();
        if self.logs > 0 {
            let set = cx.request("logging/setLevel", Some(json!({"level": "debug"})));
            match cx.on_main("logging/setLevel debug (so that every log message is sent)", &set).await {
                Ok(ex) => {
                    if ex.result().is_none() {
                        out.set_error(format!(
                            "logging/setLevel was not served ({}), so the fixture's log messages cannot be asked for",
                            ex.summary()
                        ));
                        out.exchanges.push(ex);
                        return out;
                    }
                    out.exchanges.push(ex);
                }
                Err(e) => return Outcome::error(e.to_string()),
            }
        }
        // 2025-11-25 over HTTP a server may send notifications on the
        // session's GET stream instead of the call's (only a SHOULD says
        // not to): it is read while the fixture runs, so they are heard.
        let hears = self.logs > 0 || self.progress > 0 || self.on_call_stream;
        let (call, get) = if hears {
            let label = "GET stream of the session, read while the fixture runs";
            cx.session.with_get_stream(cx.rev, None, label, None, Some(cx.case), sent(cx, &what, &body, &mut out)).await
        } else if self.no_requests && self.frames_only {
            // What the call's stream held is the fact judged: an
            // input_required answer (the 2026-07-28 way to ask the client,
            // instead of a request on the stream) is a stream that held only
            // the response.
            (cx.on_main(&what, &body).await.map(|e| (e, true)).map_err(|e| e.to_string()), None)
        } else {
            (sent(cx, &what, &body, &mut out).await, None)
        };
        let ex = match call {
            Ok((e, true)) => e,
            Ok((e, false)) => {
                out.exchanges.push(e);
                out.exchanges.extend(get);
                return out;
            }
            Err(e) => {
                out.exchanges.extend(get);
                return out.with_error(e);
            }
        };
        // Notifications that came on the GET stream, in order.
        let elsewhere: Vec<Value> =
            get.iter().flat_map(|g| g.frames.iter()).filter_map(|f| f.value.clone()).filter(|v| v.get("id").is_none()).collect();
        if self.on_call_stream {
            self.judge_placement(&what, &token, &ex, get.as_ref(), &mut out);
            out.exchanges.push(ex);
            out.exchanges.extend(get);
            return out;
        }
        // Judging only what came with the call: a fixture that answered with
        // an error result (an unknown tool, a failure) did not run, so
        // nothing it would send was seen.
        if self.frames_only
            && !self.is_error
            && let Some(r) = ex.result().filter(|r| r.get("isError") == Some(&Value::Bool(true)))
        {
            out.set_error(format!(
                "{what}: the fixture answered with an error result ({}), so it did not run and what it sends could not be observed{}",
                brief(r),
                if cx.policy.requirements {
                    "; under --requirements the fixture is called whether the server lists it or not, and this server may not have it"
                } else {
                    ""
                }
            ));
            out.exchanges.push(ex);
            out.exchanges.extend(get);
            return out;
        }
        let result = if self.is_error {
            // A tool's own failure is a result, not a JSON-RPC error.
            if let Some(err) = ex.response.as_ref().and_then(|r| r.get("error")) {
                out.fail(format!(
                    "{what}: the tool's failure must be reported as a result with isError: true (tools: tool execution errors), not as a JSON-RPC error; got {}",
                    brief(err)
                ));
                None
            } else {
                result_of(&ex, &what, &mut out)
            }
        } else {
            result_of(&ex, &what, &mut out)
        };
        if let Some(r) = result {
            if !self.frames_only {
                self.judge(cx, &r, &mut out);
            }
            if self.progress > 0 {
                progress(&ex, &elsewhere, &token, self.progress, &mut out);
            }
            for m in &self.silent {
                let n = ex
                    .frames
                    .iter()
                    .filter_map(|f| f.value.as_ref())
                    .filter(|v| v.get("method").and_then(|x| x.as_str()) == Some(m.as_str()))
                    .count();
                if n > 0 {
                    out.fail(format!("{what}: the request asked for no {m}, and {n} came with it"));
                }
            }
            if self.no_requests {
                let reqs: Vec<&Value> = ex.frames.iter().filter(|f| f.is_server_request()).filter_map(|f| f.value.as_ref()).collect();
                if let Some(r) = reqs.first() {
                    out.fail(format!(
                        "{what}: the server must not send requests on the call's stream; it sent {} ({})",
                        reqs.len(),
                        brief(r)
                    ));
                }
            }
            if self.logs > 0 {
                let n = ex
                    .frames
                    .iter()
                    .filter_map(|f| f.value.as_ref())
                    .chain(elsewhere.iter())
                    .filter(|v| v.get("method").and_then(|m| m.as_str()) == Some("notifications/message"))
                    .count();
                if n < self.logs {
                    out.fail(format!(
                        "{what}: the fixture must send at least {} log messages (notifications/message) while it runs, with the level set to debug; got {n}{}",
                        self.logs,
                        if get.is_some() { " (on the call's stream and the session's GET stream together)" } else { "" }
                    ));
                }
            }
        }
        out.exchanges.push(ex);
        out.exchanges.extend(get);
        out
    }
}

/// The call's own notifications: its log messages and its progress.
fn about_the_call(v: &Value, token: &Value) -> bool {
    match v.get("method").and_then(|m| m.as_str()) {
        Some("notifications/message") => true,
        Some("notifications/progress") => v.pointer("/params/progressToken") == Some(token),
        _ => false,
    }
}

impl FixtureCall {
    /// Where the call's notifications came: on its own stream (SHOULD:
    /// messages on a request's stream relate to it, and messages on the
    /// GET stream are unrelated to any running request).
    fn judge_placement(&self, what: &str, token: &Value, ex: &Exchange, get: Option<&Exchange>, out: &mut Outcome) {
        if let Some(e) = &ex.error {
            out.set_error(format!("{what}: {e}"));
            return;
        }
        let on_call = ex.frames.iter().filter_map(|f| f.value.as_ref()).filter(|v| about_the_call(v, token)).count();
        // Only what the GET stream brought while the call ran is the call's:
        // a server may hold earlier notifications (other calls' log
        // messages) for the stream and send them as it opens.
        let during: Vec<Value> = get
            .map(|g| g.frames.iter().skip(g.preceded).filter_map(|f| f.value.clone()).filter(|v| v.get("id").is_none()).collect())
            .unwrap_or_default();
        let misplaced: Vec<&Value> = during.iter().filter(|v| about_the_call(v, token)).collect();
        if let Some(first) = misplaced.first() {
            out.fail(format!(
                "{what}: {} of the call's notifications came on the session's GET stream instead of the call's own stream ({on_call} came there); the first: {}",
                misplaced.len(),
                brief(first)
            ));
        } else if on_call == 0 {
            let get_note = match get.and_then(|g| g.status) {
                Some(200) => "the session's GET stream was open and brought none either",
                Some(_) | None => "the server offers no GET stream (or it could not be opened)",
            };
            out.set_na(format!("the fixture sent no notifications about the call ({get_note}), so where they go cannot be judged"));
        }
    }
}

impl FixtureCall {
    fn judge(&self, cx: &Cx<'_>, r: &Value, out: &mut Outcome) {
        out.failures.extend(schema_problems(cx, "CallToolResult", r));
        out.failures.extend(content_problems(r, cx.rev));
        let blocks = r.get("content").and_then(|c| c.as_array()).cloned().unwrap_or_default();
        let flagged = r.get("isError") == Some(&Value::Bool(true));
        if self.is_error && !flagged {
            out.fail(format!("{} must report its failure with isError: true; got {}", self.tool, brief(r)));
        }
        if !self.is_error && flagged {
            out.fail(format!("{} must succeed; it answered isError: true ({})", self.tool, brief(r)));
        }
        if self.is_error
            && flagged
            && !blocks.first().is_some_and(|b| b.get("type") == Some(&json!("text")) && non_empty_str(b.get("text")))
        {
            out.fail(format!("{}: an error result must say what went wrong in a first text block; got {}", self.tool, brief(r)));
        }
        for kind in &self.blocks {
            if let Some(p) = block_missing(&blocks, kind, self.mime.get(kind)) {
                out.fail(format!("{}: {p}", self.tool));
            }
        }
    }
}

/// The progress the call's token got, before the result: at least
/// `min` notifications, each `progress` greater than the one before.
/// Progress for the call's token: on its own stream, then (2025-11-25
/// HTTP) what came on the session's GET stream.
fn progress(ex: &Exchange, elsewhere: &[Value], token: &Value, min: usize, out: &mut Outcome) {
    let values: Vec<Option<f64>> = ex
        .frames
        .iter()
        .filter_map(|f| f.value.as_ref())
        .chain(elsewhere.iter())
        .filter(|v| {
            v.get("method").and_then(|m| m.as_str()) == Some("notifications/progress") && v.pointer("/params/progressToken") == Some(token)
        })
        .map(|v| v.pointer("/params/progress").and_then(|p| p.as_f64()))
        .collect();
    if values.len() < min {
        out.fail(format!(
            "the fixture must report progress for the call's progressToken {token} at least {min} times before its result; got {}",
            values.len()
        ));
    }
    let nums: Vec<f64> = values.iter().flatten().copied().collect();
    if nums.len() != values.len() {
        out.fail("every notifications/progress needs a numeric `progress`".to_string());
    }
    if let Some(w) = nums.windows(2).find(|w| w[1] <= w[0]) {
        out.fail(format!("`progress` must increase with each notification; it went {} → {} (values: {nums:?})", w[0], w[1]));
    }
}

/// resources/read of a conformance fixture resource (or a URI a fixture
/// template makes): the contents it must hold.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FixtureRead {
    uri: String,
    /// `text` or `blob`.
    kind: String,
    /// The text must contain this (a filled template's parameter).
    #[serde(default)]
    contains: Option<String>,
}

impl Check for FixtureRead {
    const NAME: &'static str = "fixture_read";
    const ABOUT: &'static str = "resources/read of a conformance fixture `uri`: contents for that URI with a mimeType and non-empty `kind` (text or blob), the text `contains` a value";

    async fn run(&self, cx: &Cx<'_>) -> Outcome {
        let what = format!("resources/read of the fixture {}", self.uri);
        let body = cx.request("resources/read", Some(json!({"uri": self.uri})));
        let mut out = Outcome::default();
        let ex = match sent(cx, &what, &body, &mut out).await {
            Ok((e, true)) => e,
            Ok((e, false)) => {
                out.exchanges.push(e);
                return out;
            }
            Err(e) => return out.with_error(e),
        };
        if let Some(r) = result_of(&ex, &what, &mut out) {
            out.failures.extend(schema_problems(cx, "ReadResourceResult", &r));
            match r.get("contents").and_then(|c| c.as_array()).and_then(|c| c.first()) {
                None => out.fail(format!("{what}: `contents` must hold the resource; got {}", brief(&r))),
                Some(c) => {
                    if c.get("uri").and_then(|u| u.as_str()) != Some(self.uri.as_str()) {
                        out.fail(format!(
                            "{what}: contents[0].uri must be {}; got {}",
                            self.uri,
                            brief(c.get("uri").unwrap_or(&Value::Null))
                        ));
                    }
                    if !non_empty_str(c.get("mimeType")) {
                        out.fail(format!("{what}: contents[0] needs its mimeType; got {}", brief(c)));
                    }
                    match self.kind.as_str() {
                        "blob" => match c.get("blob").and_then(|b| b.as_str()) {
                            Some(b) if !b.is_empty() => {
                                if let Some(p) = base64_problem(b) {
                                    out.fail(format!("{what}: contents[0].blob must be base64: {p}"));
                                }
                            }
                            _ => out.fail(format!(
                                "{what}: contents[0] must carry the binary resource as a non-empty base64 `blob`; got {}",
                                brief(c)
                            )),
                        },
                        _ => match c.get("text").and_then(|t| t.as_str()) {
                            Some(t) if !t.is_empty() => {
                                if let Some(want) = self.contains.as_ref().filter(|w| !t.contains(w.as_str())) {
                                    out.fail(format!("{what}: the text must reflect the URI's parameter `{want}`; got {t:?}"));
                                }
                            }
                            _ => out.fail(format!("{what}: contents[0] must carry non-empty `text`; got {}", brief(c))),
                        },
                    }
                }
            }
        }
        out.exchanges.push(ex);
        out
    }
}

/// prompts/get of a conformance fixture prompt: its messages, the block
/// types they must hold and the argument values they must show.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FixturePrompt {
    name: String,
    #[serde(default)]
    arguments: Option<Value>,
    #[serde(default)]
    blocks: Vec<String>,
    #[serde(default)]
    contains: Vec<String>,
}

impl Check for FixturePrompt {
    const NAME: &'static str = "fixture_prompt";
    const ABOUT: &'static str = "prompts/get of a conformance fixture prompt (`name`, `arguments`): non-empty messages with valid roles and content, the `blocks` they must hold, the texts they must `contain`";

    async fn run(&self, cx: &Cx<'_>) -> Outcome {
        let what = format!("prompts/get of the fixture {}", self.name);
        let mut params = json!({"name": self.name});
        if let Some(a) = &self.arguments {
            params["arguments"] = a.clone();
        }
        let body = cx.request("prompts/get", Some(params));
        let mut out = Outcome::default();
        let ex = match sent(cx, &what, &body, &mut out).await {
            Ok((e, true)) => e,
            Ok((e, false)) => {
                out.exchanges.push(e);
                return out;
            }
            Err(e) => return out.with_error(e),
        };
        if let Some(r) = result_of(&ex, &what, &mut out) {
            out.failures.extend(schema_problems(cx, "GetPromptResult", &r));
            let messages = r.get("messages").and_then(|m| m.as_array()).cloned().unwrap_or_default();
            if messages.is_empty() {
                out.fail(format!("{what}: `messages` must hold the prompt's messages; got {}", brief(&r)));
            }
            let mut blocks = Vec::new();
            for (i, m) in messages.iter().enumerate() {
                if !matches!(m.get("role").and_then(|x| x.as_str()), Some("user" | "assistant")) {
                    out.fail(format!("{what}: messages[{i}].role must be user or assistant; got {}", brief(m)));
                }
                match m.get("content") {
                    Some(c) => {
                        for p in content_problems(&json!({"content": [c]}), cx.rev) {
                            out.fail(format!("{what}: messages[{i}].{}", p.replacen("content[0]", "content", 1)));
                        }
                        blocks.push(c.clone());
                    }
                    None => out.fail(format!("{what}: messages[{i}] has no content")),
                }
            }
            for kind in &self.blocks {
                if let Some(p) = block_missing(&blocks, kind, None) {
                    out.fail(format!("{what}: {p}"));
                }
            }
            let text = serde_json::to_string(&messages).unwrap_or_default();
            for want in &self.contains {
                if !text.contains(want.as_str()) {
                    out.fail(format!("{what}: the messages must use the argument value {want:?}; they do not contain it"));
                }
            }
        }
        out.exchanges.push(ex);
        out
    }
}

/// 2026-07-28: a tool that needs a client capability the request did not
/// declare is refused with -32021 naming it (HTTP 400), not run.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FixtureMissingCapability {
    tool: String,
    capability: String,
}

impl Check for FixtureMissingCapability {
    const NAME: &'static str = "fixture_missing_capability";
    const ABOUT: &'static str = "tools/call of a fixture `tool` that needs client `capability`, declaring none: -32021 with data.requiredCapabilities naming it, HTTP 400";
    const REVISIONS: &'static [Revision] = &Revision::STATELESS;

    async fn run(&self, cx: &Cx<'_>) -> Outcome {
        let what = format!("tools/call of the fixture {} declaring no client capabilities", self.tool);
        let mut body = cx.request("tools/call", Some(json!({"name": self.tool, "arguments": {}})));
        body["params"]["_meta"][crate::wire::KEY_CLIENT_CAPS] = json!({});
        // Its answer must be an error: a negative probe, on the connection
        // such probes share.
        let ex = match cx.negative(&crate::session::Msg::new(cx.rev, &what, &body)).await {
            Ok(e) => e,
            Err(e) => return Outcome::error(e.to_string()),
        };
        let mut out = Outcome::default();
        if let Some(e) = &ex.error {
            out.set_error(format!("{what}: {e}"));
        } else {
            let err = ex.response.as_ref().and_then(|r| r.get("error"));
            let code = err.and_then(|e| e.get("code")).and_then(|c| c.as_i64());
            if code != Some(-32021) {
                out.fail(format!(
                    "{what}: a request lacking a client capability the tool needs ({}) must be refused with -32021; got {}",
                    self.capability,
                    ex.summary()
                ));
            } else if !err
                .and_then(|e| e.pointer(&format!("/data/requiredCapabilities/{}", self.capability)))
                .is_some_and(|c| c.is_object())
            {
                out.fail(format!(
                    "{what}: -32021 must list the missing capability in data.requiredCapabilities.{}; got {}",
                    self.capability,
                    brief(err.unwrap_or(&Value::Null))
                ));
            }
            if cx.transport() == crate::record::Transport::Http && code == Some(-32021) && ex.status != Some(400) {
                out.fail(format!(
                    "{what}: on HTTP the status must be 400 Bad Request; got {}",
                    ex.status.map(|s| s.to_string()).unwrap_or("none".into())
                ));
            }
        }
        out.exchanges.push(ex);
        out
    }
}

/// A fixture's request sent on the main connection. The method's result
/// may be an InputRequiredResult in 2026-07-28, but the requirement set's
/// scenario defines what this fixture returns without asking (the official
/// suite fails it too): such an answer is that failure, said as such, and
/// is not judged as a broken result of the method. Returns the exchange
/// and whether its result is one to judge.
async fn sent(cx: &Cx<'_>, what: &str, body: &Value, out: &mut Outcome) -> Result<(Exchange, bool), String> {
    let ex = cx.on_main(what, body).await.map_err(|e| e.to_string())?;
    if cx.rev.is_stateless() && super::judge::input::is_input_required(ex.response.as_ref()) {
        out.fail(format!(
            "{what}: the scenario defines this fixture's result, returned at once; it answered input_required instead ({})",
            ex.result().map(brief).unwrap_or_default()
        ));
        return Ok((ex, false));
    }
    Ok((ex, true))
}
