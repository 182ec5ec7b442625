//! What the header probes are sent on: a list request, a tools/call of a
//! tool mcpcert may call, a prompts/get or resources/read of something the
//! server lists; and the probes that need a target of their own kind
//! (`Mcp-Name`, `Mcp-Param-*`, Origin, a notification).

use super::super::calls::CallKind;
use super::super::judge::admission;
use super::super::judge::args::{remove_pointer, set_pointer, synth_valid};
use super::super::walk::ListMethod;
use super::{OTHER, Probe, ProbeKind, Want, encoded, flip_case, prepare, probe_of, probes_for, run_probes};
use crate::checks::{Cx, Outcome};
use crate::record::Exchange;
use crate::session::Msg;
use crate::wire::{self, HeaderEdit, MetaMode, headerval};
use serde_json::{Value, json};

/// One request to probe: a method and params that, sent with correct
/// headers, the server accepts (or, for `callable: false`, that must never
/// reach a tool, so only rejection probes use it).
#[derive(Debug, Clone)]
pub(super) struct Target {
    pub method: String,
    pub params: Value,
    /// What it is, for messages ("tools/call of weather").
    pub what: String,
    /// The tool's inputSchema (tools/call), for `Mcp-Param-*` headers.
    pub schema: Option<Value>,
    /// Safe to let through: a read-only or allowed tool, a prompt, a resource.
    pub callable: bool,
    /// A tools/call of a tool that says it is read-only (`readOnlyHint`):
    /// safe to send again if its connection breaks before an answer comes.
    pub read_only: bool,
}

/// The request the version and method probes use: a list the server
/// offers, else server/discover.
pub(super) fn standard_target(cx: &Cx<'_>) -> Target {
    let method = ["tools", "prompts", "resources"]
        .iter()
        .find(|c| cx.advertises(c))
        .map(|c| format!("{c}/list"))
        .unwrap_or_else(|| if cx.rev.is_stateless() { "server/discover".into() } else { "ping".into() });
    Target { what: method.clone(), method, params: json!({}), schema: None, callable: true, read_only: false }
}

/// Targets for `Mcp-Name`: one tools/call, prompts/get and resources/read
/// each, where the server has something to name.
async fn name_targets(cx: &Cx<'_>) -> Result<(Vec<Target>, Vec<String>), String> {
    let mut targets = Vec::new();
    let mut notes = Vec::new();
    if cx.advertises("tools") {
        match tool_target(cx, false).await? {
            ToolPick::Target(t) => targets.push(t),
            // Two names no server has, body and header: a conforming server
            // refuses the mismatch (-32020 is a MUST; unknown tool only a
            // SHOULD), one that skips the check answers unknown tool, and
            // no tool runs either way.
            ToolPick::Forbidden(_) => targets.push(Target {
                method: "tools/call".into(),
                what: format!(
                    "tools/call of `{NO_SUCH_TOOL}`, a tool that does not exist (no listed tool may be called, so none is named)"
                ),
                params: json!({"name": NO_SUCH_TOOL, "arguments": {}}),
                schema: None,
                callable: false,
                read_only: false,
            }),
            ToolPick::None => notes.push("tools/call: the server lists no tools".to_string()),
        }
    }
    if cx.advertises("prompts") {
        let w = cx.facts.list_walk(cx, ListMethod::Prompts).await?;
        match w.items.iter().find_map(|p| p.get("name").and_then(|n| n.as_str()).map(|n| (n.to_string(), p))) {
            Some((name, p)) => {
                let mut args = serde_json::Map::new();
                for a in p.get("arguments").and_then(|a| a.as_array()).into_iter().flatten() {
                    if a.get("required") == Some(&Value::Bool(true))
                        && let Some(n) = a.get("name").and_then(|n| n.as_str())
                    {
                        args.insert(n.into(), json!("mcpcert"));
                    }
                }
                targets.push(Target {
                    method: "prompts/get".into(),
                    what: format!("prompts/get of {name}"),
                    params: json!({"name": name, "arguments": args}),
                    schema: None,
                    callable: true,
                    read_only: false,
                });
            }
            None => notes.push("prompts/get: the server lists no prompts".into()),
        }
    }
    if cx.advertises("resources") {
        let w = cx.facts.list_walk(cx, ListMethod::Resources).await?;
        match w.items.iter().find_map(|r| r.get("uri").and_then(|u| u.as_str())) {
            Some(uri) => targets.push(Target {
                method: "resources/read".into(),
                what: format!("resources/read of {uri}"),
                params: json!({"uri": uri}),
                schema: None,
                callable: true,
                read_only: false,
            }),
            None => notes.push("resources/read: the server lists no resources".into()),
        }
    }
    Ok((targets, notes))
}

/// A tool name no server has: what the `Mcp-Name` rejection probes name
/// when no listed tool may be called.
const NO_SUCH_TOOL: &str = "mcpcert-no-such-tool-5f1c";

/// What a tools/call probe may be sent on.
enum ToolPick {
    /// A tool to name (callable: one the policy allows, with arguments
    /// that worked; otherwise, with `[calls] probe_uncallable`, the first
    /// listed tool, for rejection probes only).
    Target(Target),
    /// Tools are listed, but none may be called; their names.
    Forbidden(Vec<String>),
    /// No listed tool fits.
    None,
}

/// A tools/call target. `annotated`: only tools with well-placed
/// `x-mcp-header` params. A tool outside the call policy is named only
/// when the operator opted in: a server that skips the header check would
/// run it.
async fn tool_target(cx: &Cx<'_>, annotated: bool) -> Result<ToolPick, String> {
    // The valid calls are enough: the negative probes need not be awaited.
    let calls = cx.facts.valid_calls(cx).await?;
    let w = cx.facts.tools_walk(cx).await?;
    let schema_of = |name: &str| {
        w.items.iter().find(|t| t.get("name").and_then(|n| n.as_str()) == Some(name)).and_then(|t| t.get("inputSchema")).cloned()
    };
    let has_params = |s: &Option<Value>| s.as_ref().is_some_and(|s| !admission::header_walk(s).headers.is_empty());
    for r in calls.records().filter(|r| r.kind == CallKind::Valid) {
        if r.ex.result().is_none() {
            continue;
        }
        let schema = schema_of(&r.tool);
        if annotated && !has_params(&schema) {
            continue;
        }
        let Some(args) =
            r.ex.sent.as_ref().and_then(|s| serde_json::from_str::<Value>(s).ok()).and_then(|b| b.pointer("/params/arguments").cloned())
        else {
            continue;
        };
        let read_only = w.items.iter().any(|t| {
            t.get("name").and_then(|n| n.as_str()) == Some(r.tool.as_str())
                && t.pointer("/annotations/readOnlyHint") == Some(&Value::Bool(true))
        });
        return Ok(ToolPick::Target(Target {
            method: "tools/call".into(),
            what: format!("tools/call of {}", r.tool),
            params: json!({"name": r.tool, "arguments": args}),
            schema,
            callable: true,
            read_only,
        }));
    }
    let fitting: Vec<&Value> = w
        .items
        .iter()
        .filter(|t| t.get("name").and_then(|n| n.as_str()).is_some() && (!annotated || has_params(&t.get("inputSchema").cloned())))
        .collect();
    let Some(first) = fitting.first() else { return Ok(ToolPick::None) };
    if !cx.policy.probe_uncallable {
        return Ok(ToolPick::Forbidden(fitting.iter().filter_map(|t| t.get("name").and_then(|n| n.as_str()).map(String::from)).collect()));
    }
    let name = first.get("name").and_then(|n| n.as_str()).unwrap_or_default();
    let schema = first.get("inputSchema").cloned();
    let args = schema.as_ref().and_then(synth_valid).unwrap_or(json!({}));
    Ok(ToolPick::Target(Target {
        method: "tools/call".into(),
        what: format!("tools/call of {name} (not callable; named by [calls] probe_uncallable: rejection probes only)"),
        params: json!({"name": name, "arguments": args}),
        schema,
        callable: false,
        read_only: false,
    }))
}

pub(super) async fn probe_name(cx: &Cx<'_>, probe: ProbeKind) -> Outcome {
    let mut out = Outcome::default();
    let (targets, mut notes) = match name_targets(cx).await {
        Ok(x) => x,
        Err(e) => return Outcome::error(e),
    };
    let mut probed = 0;
    let mut runs = Vec::new();
    for t in &targets {
        let v = t.params.get("name").or(t.params.get("uri")).and_then(|v| v.as_str()).unwrap_or("").to_string();
        let mut probes = probes_for("Mcp-Name", &encoded(&v), probe, OTHER);
        if probe == ProbeKind::ValueCase && flip_case(&v) == v {
            notes.push(format!("{}: the name has no letters to change", t.what));
            continue;
        }
        if matches!(probe, ProbeKind::Base64 | ProbeKind::UpperSentinel) {
            probes = probes_for("Mcp-Name", &v, probe, OTHER);
        }
        if !t.callable && probes.iter().all(|p| matches!(p.want, Want::Accept | Want::NotRequired)) {
            notes.push(format!("{}: no tool may be called, and this probe must be served", t.what));
            continue;
        }
        probed += 1;
        runs.push((t, probes));
    }
    // The targets are probed at once, each with ids of its own; what they
    // found is told in target order, up to the first that could not be judged.
    let sends = runs.into_iter().enumerate().map(|(k, (t, probes))| {
        crate::session::with_part_ids(k, async move {
            let mut o = Outcome::default();
            run_probes(cx, t, probes, &mut o).await;
            o
        })
    });
    for o in futures_util::future::join_all(sends).await {
        out.exchanges.extend(o.exchanges);
        out.failures.extend(o.failures);
        if let super::super::End::Error(why) = o.end {
            out.set_error(why);
            break;
        }
    }
    if !notes.is_empty() {
        out.exchanges.push(Exchange::note("targets not probed", notes.join("\n")));
    }
    if probed == 0 && !out.is_error() {
        out.set_na(format!(
            "nothing to name: {}",
            if notes.is_empty() { "the server offers no tools, prompts or resources".into() } else { notes.join("; ") }
        ));
    }
    out
}

pub(super) async fn probe_param(cx: &Cx<'_>, probe: ProbeKind) -> Outcome {
    let mut out = Outcome::default();
    let t = match tool_target(cx, true).await {
        Ok(ToolPick::Target(t)) => t,
        Ok(ToolPick::Forbidden(names)) => {
            return Outcome::na(format!(
                "the tools that mirror a parameter into a header ({}) may not be called, and a probe names its tool in a request that a server skipping the check would run; allow one with [tools.NAME] call = true, or opt in with [calls] probe_uncallable = true (see the README for the risk)",
                names.join(", ")
            ));
        }
        Ok(ToolPick::None) => return Outcome::na("no tool mirrors a parameter into a header (x-mcp-header)"),
        Err(e) => return Outcome::error(e),
    };
    let schema = t.schema.clone().unwrap_or(json!({}));
    let params = admission::header_walk(&schema).headers;
    let args = t.params.get("arguments").cloned().unwrap_or(json!({}));
    if probe == ProbeKind::RoundTrip {
        return round_trip(cx, &t, &schema, &params, &args).await;
    }
    // The parameter to probe: for `integer`, an integer one; otherwise
    // the first one, given a value if the arguments lack it.
    let pick = if probe == ProbeKind::Integer { params.iter().find(|h| h.ty == "integer") } else { params.first() };
    let Some(h) = pick.cloned() else {
        return Outcome::na(format!("{} has no integer parameter mirrored into a header", t.what));
    };
    let mut with_value = args.clone();
    let value = match (probe, args.pointer(&h.pointer)) {
        (ProbeKind::Integer, _) => json!(42),
        (_, Some(v)) if !v.is_null() => v.clone(),
        _ => match h.ty.as_str() {
            "integer" => json!(7),
            "boolean" => json!(true),
            _ => json!("mcpcert"),
        },
    };
    set_pointer(&mut with_value, &h.pointer, value.clone());
    let header = format!("Mcp-Param-{}", h.value);
    let text = match &value {
        Value::String(s) => s.clone(),
        Value::Bool(b) => headerval::encode_bool(*b).into(),
        other => other.to_string(),
    };
    let other = match &value {
        Value::String(_) => OTHER.to_string(),
        Value::Bool(b) => headerval::encode_bool(!b).into(),
        Value::Number(n) => (n.as_i64().unwrap_or(0) + 1).to_string(),
        _ => OTHER.to_string(),
    };
    let mut probes = match probe {
        ProbeKind::Null | ProbeKind::Absent => {
            let mut a = with_value.clone();
            let how = if probe == ProbeKind::Null {
                set_pointer(&mut a, &h.pointer, Value::Null);
                "null"
            } else {
                remove_pointer(&mut a, &h.pointer);
                "left out"
            };
            vec![Probe {
                args: Some(a),
                ..probe_of(
                    format!("with {} {how} and no {header} header", h.pointer),
                    vec![HeaderEdit::Remove(header.clone())],
                    Want::NotRequired,
                )
            }]
        }
        ProbeKind::Integer => vec![probe_of(
            format!("with {} = 42 in the body and {header}: 42", h.pointer),
            vec![HeaderEdit::Set(header.clone(), "42".into())],
            Want::Accept,
        )],
        ProbeKind::Base64 | ProbeKind::UpperSentinel => probes_for(&header, &text, probe, &other),
        p => probes_for(&header, &encoded(&text), p, &other),
    };
    if !t.callable && probes.iter().all(|p| matches!(p.want, Want::Accept | Want::NotRequired)) {
        return Outcome::na(format!(
            "the probe must be served, and no tool with an x-mcp-header parameter may be called ({}); allow one with [tools.NAME] call = true",
            t.what
        ));
    }
    // The probes carry the parameter's value; the baseline is the call as it was.
    for p in probes.iter_mut() {
        if p.args.is_none() {
            p.args = Some(with_value.clone());
        }
    }
    run_probes(cx, &t, probes, &mut out).await;
    out
}

/// String values a header carries only encoded (or exactly as written):
/// each must reach the server as the body's value.
const HARD_VALUES: [&str; 6] = ["Zürich", "東京", "  padded  ", "tab\there", "", "=?base64?abc?="];

/// The round trip of hard values through a string parameter mirrored into
/// a header: each call, with the value in the body and in the header as a
/// conforming client encodes it, must be served (a server that trims,
/// normalises or decodes twice refuses one of them as a mismatch).
async fn round_trip(cx: &Cx<'_>, t: &Target, schema: &Value, params: &[admission::HeaderParam], args: &Value) -> Outcome {
    let mut out = Outcome::default();
    if !t.callable {
        return Outcome::na(format!("each probe must be served, and no tool with an x-mcp-header parameter may be called ({})", t.what));
    }
    let Some(h) = params.iter().find(|h| h.ty == "string") else {
        return Outcome::na(format!("{} mirrors no string parameter into a header", t.what));
    };
    let header = format!("Mcp-Param-{}", h.value);
    let Ok(validator) = jsonschema::options().build(schema) else {
        return Outcome::na(format!("the inputSchema of {} does not compile, so no value can be checked against it", t.what));
    };
    let mut probes = Vec::new();
    let mut refused = Vec::new();
    for v in HARD_VALUES {
        let mut a = args.clone();
        set_pointer(&mut a, &h.pointer, json!(v));
        if !validator.is_valid(&a) {
            refused.push(format!("{v:?}"));
            continue;
        }
        let sent = encoded(v);
        probes.push(Probe {
            args: Some(a),
            ..probe_of(
                format!("with {} = {v:?} and {header}: {sent}", h.pointer),
                vec![HeaderEdit::Set(header.clone(), sent)],
                Want::Accept,
            )
        });
    }
    if probes.is_empty() {
        return Outcome::na(format!(
            "the inputSchema of {} admits none of the values to try at {} ({})",
            t.what,
            h.pointer,
            refused.join(", ")
        ));
    }
    if !refused.is_empty() {
        out.exchanges
            .push(Exchange::note("values not tried", format!("the inputSchema does not admit {} at {}", refused.join(", "), h.pointer)));
    }
    run_probes(cx, t, probes, &mut out).await;
    out
}

pub(super) async fn probe_origin(cx: &Cx<'_>) -> Outcome {
    let mut out = Outcome::default();
    let Some(allowed) = cx.policy.allowed_origin.clone() else {
        return Outcome::na("the target config names no allowed Origin ([target] allowed_origin), so mcpcert cannot tell a foreign one");
    };
    let t = standard_target(cx);
    let foreign = "http://mcpcert-foreign-origin.invalid";
    // Both made first (their ids taken in order), then sent together: the
    // foreign Origin must be refused, a negative probe on a connection of
    // its own, so neither waits for the other.
    let made: Vec<_> = [(allowed.as_str(), false), (foreign, true)]
        .into_iter()
        .map(|(origin, must_refuse)| {
            let edits = vec![HeaderEdit::Set("Origin".into(), origin.into())];
            (origin, must_refuse, prepare(cx, &format!("{} with Origin: {origin}", t.what), &t, None, edits, false, must_refuse))
        })
        .collect();
    let sent = futures_util::future::join_all(made.iter().map(|(_, _, m)| m.send(cx))).await;
    for ((origin, must_refuse, _), r) in made.iter().zip(sent) {
        let ex = match r {
            Ok(mut exs) => {
                let ex = exs.pop().unwrap_or_default();
                out.exchanges.extend(exs);
                ex
            }
            Err(e) => return Outcome::error(e.to_string()),
        };
        if let Some(e) = &ex.error {
            out.set_error(format!("Origin {origin}: {e}"));
        } else if *must_refuse && ex.status != Some(403) {
            out.fail(format!("a request with an Origin the server does not allow ({origin}) must get HTTP 403; got {}", ex.summary()));
        } else if !must_refuse && ex.status == Some(403) {
            out.set_error(format!("the server refused the Origin the config names as allowed ({origin}): check [target] allowed_origin"));
        }
        out.exchanges.push(ex);
    }
    out
}

pub(super) async fn probe_notification(cx: &Cx<'_>) -> Outcome {
    let mut out = Outcome::default();
    let body = wire::notification(
        "notifications/cancelled",
        wire::modern_params(Some(&json!({"requestId": "mcpcert-no-such-request"})), MetaMode::Full, wire::MODERN),
    );
    let ex = match cx.session.on_main(&Msg::new(cx.rev, "notification POST", &body).no_reply(), cx.case).await {
        Ok(e) => e,
        Err(e) => return Outcome::error(e.to_string()),
    };
    match ex.status {
        _ if ex.error.is_some() => out.set_error(format!("notification POST: {}", ex.summary())),
        Some(202) => {
            if ex.body.as_deref().is_some_and(|b| !b.trim().is_empty()) || !ex.frames.is_empty() {
                out.fail(format!("an accepted notification gets 202 with an empty body; the body was not empty ({})", ex.summary()));
            }
        }
        Some(s) if (400..600).contains(&s) => {
            out.exchanges.push(Exchange::note("note", format!("the server refused the notification with HTTP {s}, which the spec allows")));
        }
        _ => out.fail(format!(
            "a notification POST must get 202 with an empty body (accepted) or an HTTP error status (refused); got {}",
            ex.summary()
        )),
    }
    out.exchanges.insert(0, ex);
    out
}
