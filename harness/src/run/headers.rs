//! Streamable HTTP header parity (2026-07-28): `MCP-Protocol-Version`,
//! `Mcp-Method`, `Mcp-Name` and `Mcp-Param-*` must match the body. Each
//! probe changes one thing about an otherwise correct request: a server
//! must reject every mismatch (HTTP 400 and JSON-RPC -32020, the request's
//! id echoed) and accept every correctly encoded match.

use super::actions::StepOut;
use super::tools::{CallKind, param_headers, synth_valid};
use super::{Engine, Exchange, HeaderEdit};
use crate::checks::admission;
use crate::wire::{self, MODERN, MetaMode, headerval};
use base64::Engine as _;
use serde_json::{Value, json};

/// One request to probe: a method and params that, sent with correct
/// headers, the server accepts (or, for `callable: false`, that must never
/// reach a tool, so only rejection probes use it).
#[derive(Debug, Clone)]
struct Target {
    method: String,
    params: Value,
    /// What it is, for messages ("tools/call of weather").
    what: String,
    /// The tool's inputSchema (tools/call), for `Mcp-Param-*` headers.
    schema: Option<Value>,
    /// Safe to let through: a read-only or allowed tool, a prompt, a resource.
    callable: bool,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Want {
    Reject,
    /// A rejection where -32022 (unsupported version) may win over -32020.
    RejectVersion,
    Accept,
    /// The header must not be required: anything but a header rejection.
    NotRequired,
}

const OTHER: &str = "mcpcert-other-value";

/// One probe: a change to the headers (and maybe the arguments) of the
/// target request, and what the server must do with it.
struct Probe {
    label: String,
    /// `_meta` protocol version of the body, when not the suite's.
    body_version: Option<&'static str>,
    edits: Vec<HeaderEdit>,
    want: Want,
    /// tools/call arguments for this probe instead of the target's.
    args: Option<Value>,
}

fn probe_of(label: String, edits: Vec<HeaderEdit>, want: Want) -> Probe {
    Probe { label, body_version: None, edits, want, args: None }
}

fn b64(s: &str) -> String {
    base64::engine::general_purpose::STANDARD.encode(s.as_bytes())
}

fn flip_case(s: &str) -> String {
    s.chars().map(|c| if c.is_ascii_lowercase() { c.to_ascii_uppercase() } else { c.to_ascii_lowercase() }).collect()
}

/// `Mcp-Protocol-Version` → `mCP-pROTOCOL-vERSION`-style mixed case.
fn mixed_case(s: &str) -> String {
    s.chars().enumerate().map(|(i, c)| if i % 2 == 0 { c.to_ascii_lowercase() } else { c.to_ascii_uppercase() }).collect()
}

impl Engine {
    pub(super) async fn header_action(&mut self, case: &crate::suite::Case, with: Option<&Value>) -> StepOut {
        let arg = |k: &str| with.and_then(|w| w.get(k)).and_then(|v| v.as_str()).unwrap_or("").to_string();
        let (header, probe) = (arg("header"), arg("probe"));
        if self.cfg.target.transport() != "http" {
            return StepOut { na: Some("header rules apply to HTTP targets only".into()), ..Default::default() };
        }
        let rev = case.revision.clone();
        if probe == "name-case" {
            if let super::TargetSpec::Http(h) = &self.cfg.target {
                if !h.url.starts_with("http://") {
                    return StepOut {
                        na: Some("header names in upper and mixed case are sent over mcpcert's own plain HTTP/1.1 connection, which needs an http:// URL (over https mcpcert sends names in lower case only)".into()),
                        ..Default::default()
                    };
                }
            }
        }
        match header.as_str() {
            "version" | "method" => self.probe_standard(&rev, &header, &probe, &case.id).await,
            "name" => self.probe_name(&rev, &probe, &case.id).await,
            "param" => self.probe_param(&rev, &probe, &case.id).await,
            "origin" => self.probe_origin(&rev).await,
            "notification" => self.probe_notification(&rev).await,
            other => StepOut { error: Some(format!("suite problem: unknown header `{other}`")), ..Default::default() },
        }
    }

    /// Send `method`/`params` on the main connection with the standard
    /// headers (plus `Mcp-Param-*` for tools/call), changed by `edits`.
    async fn probe_send(
        &mut self,
        rev: &str,
        label: &str,
        t: &Target,
        body_version: Option<&str>,
        edits: Vec<HeaderEdit>,
    ) -> Result<Exchange, String> {
        let body = match body_version {
            None => self.body_for(rev, &t.method, Some(t.params.clone())),
            // A probe whose `_meta` names another version than the header.
            Some(v) => {
                let id = self.fresh_id();
                wire::request(&id, &t.method, wire::modern_params(Some(&t.params), MetaMode::Full, v))
            }
        };
        let mut all: Vec<HeaderEdit> = Vec::new();
        if let (Some(schema), Some(args)) = (&t.schema, t.params.get("arguments")) {
            all.extend(param_headers(schema, args).into_iter().map(|(k, v)| HeaderEdit::Set(k, v)));
        }
        all.extend(edits);
        let Some(mut conn) = self.revs.get_mut(rev).and_then(|s| s.conn.take()) else {
            return Err(format!("no connection for {rev}"));
        };
        let ex = self.exchange(&mut conn, label, rev, &body, &all, true).await;
        if let Some(st) = self.revs.get_mut(rev) {
            st.conn = Some(conn);
        }
        Ok(ex)
    }

    /// Judge one probe; a failure line names the target and the probe.
    fn judge_probe(ex: &Exchange, want: Want, what: &str) -> Option<String> {
        let status = ex.status;
        let code = ex.response.as_ref().and_then(|r| r.pointer("/error/code")).and_then(|c| c.as_i64());
        let header_rejection = status == Some(400) || code == Some(-32020);
        match want {
            Want::Reject | Want::RejectVersion => {
                let mut wrong = Vec::new();
                if status != Some(400) {
                    wrong.push(format!("HTTP status {}", status.map(|s| s.to_string()).unwrap_or_else(|| "none".into())));
                }
                let codes_ok = code == Some(-32020) || (want == Want::RejectVersion && code == Some(-32022));
                if !codes_ok {
                    wrong.push(match code {
                        Some(c) => format!("JSON-RPC error {c}"),
                        None if ex.response.as_ref().is_some_and(|r| r.get("result").is_some()) => {
                            "a result (the request was served)".into()
                        }
                        None => "no JSON-RPC error".into(),
                    });
                }
                let id = ex.response.as_ref().and_then(|r| r.get("id"));
                if code.is_some() && id != ex.request_id.as_ref() {
                    wrong.push(format!(
                        "error id {} instead of the request's {}",
                        id.map(wire::brief).unwrap_or_else(|| "absent".into()),
                        ex.request_id.as_ref().map(wire::brief).unwrap_or_default()
                    ));
                }
                if wrong.is_empty() {
                    None
                } else {
                    let codes = if want == Want::RejectVersion {
                        "-32020 (HeaderMismatch) or -32022 (UnsupportedProtocolVersion)"
                    } else {
                        "-32020 (HeaderMismatch)"
                    };
                    Some(format!(
                        "{what}: expected HTTP 400 with JSON-RPC error {codes} and the request's id; got {} ({})",
                        wrong.join(", "),
                        ex.summary()
                    ))
                }
            }
            Want::Accept => {
                if ex.response.as_ref().is_some_and(|r| r.get("result").is_some()) {
                    None
                } else {
                    Some(format!("{what}: expected the request to be served (its headers match the body); got {}", ex.summary()))
                }
            }
            Want::NotRequired => {
                if header_rejection && code.is_none_or(|c| c == -32020) {
                    Some(format!("{what}: the server must not require the header here; got {}", ex.summary()))
                } else {
                    None
                }
            }
        }
    }

    /// The request the version and method probes use: a list the server
    /// offers, else server/discover.
    fn standard_target(&self, rev: &str) -> Target {
        let caps = self.revs.get(rev).and_then(|s| s.info.capabilities.clone()).unwrap_or(json!({}));
        let method = ["tools", "prompts", "resources"]
            .iter()
            .find(|c| caps.get(**c).is_some())
            .map(|c| format!("{c}/list"))
            .unwrap_or_else(|| if rev == wire::LEGACY { "ping".into() } else { "server/discover".into() });
        Target { what: method.clone(), method, params: json!({}), schema: None, callable: true }
    }

    /// Run the probes of one case; an unusable baseline is an error.
    async fn run_probes(&mut self, rev: &str, t: &Target, probes: Vec<Probe>, out: &mut StepOut) {
        // The baseline of a target is sent once per revision: cases that
        // probe the same request show the one exchange that was served.
        let key = format!("{} {}", t.method, t.params);
        if let Some(ex) = self.revs.get(rev).and_then(|st| st.baselines.get(&key)) {
            let mut ex = ex.clone();
            ex.note = Some("the baseline, served once for every header case that probes this request".into());
            out.exchanges.push(ex);
        } else if t.callable {
            match self.probe_send(rev, &format!("{}: baseline with correct headers", t.what), t, None, vec![]).await {
                Ok(ex) => {
                    let ok = ex.response.as_ref().is_some_and(|r| r.get("result").is_some());
                    if ex.error.is_some() || !ok {
                        out.error = Some(format!(
                            "{} with correct headers was not served ({}), so the probes cannot be judged",
                            t.what,
                            ex.summary()
                        ));
                        out.exchanges.push(ex);
                        return;
                    }
                    if let Some(st) = self.revs.get_mut(rev) {
                        st.baselines.insert(key, ex.clone().lite());
                    }
                    out.exchanges.push(ex);
                }
                Err(e) => {
                    out.error = Some(e);
                    return;
                }
            }
        }
        for p in probes {
            let want = p.want;
            if matches!(want, Want::Accept | Want::NotRequired) && !t.callable {
                continue;
            }
            let what = format!("{} {}", t.what, p.label);
            let mut pt = t.clone();
            if let Some(a) = p.args {
                pt.params["arguments"] = a;
            }
            match self.probe_send(rev, &what, &pt, p.body_version, p.edits).await {
                Ok(ex) => {
                    if let Some(e) = &ex.error {
                        if out.error.is_none() {
                            out.error = Some(format!("{what}: {e}"));
                        }
                    } else if let Some(f) = Self::judge_probe(&ex, want, &what) {
                        out.failures.push(f);
                    }
                    out.exchanges.push(ex);
                }
                Err(e) => {
                    out.error = Some(e);
                    return;
                }
            }
        }
    }

    /// The probes of one header rule for a header whose correct value is `v`.
    fn probes_for(header: &str, v: &str, kind: &str, other: &str) -> Vec<Probe> {
        let set = |val: String| vec![HeaderEdit::Set(header.to_string(), val)];
        match kind {
            "missing" => vec![probe_of(format!("without {header}"), vec![HeaderEdit::Remove(header.into())], Want::Reject)],
            "mismatch" => vec![probe_of(format!("with {header} naming something else"), set(other.into()), Want::Reject)],
            "value-case" => vec![probe_of(format!("with {header} differing only in letter case"), set(flip_case(v)), Want::Reject)],
            "name-case" => [header.to_ascii_lowercase(), header.to_ascii_uppercase(), mixed_case(header)]
                .into_iter()
                .map(|n| {
                    probe_of(
                        format!("with the header name written `{n}`"),
                        vec![HeaderEdit::Remove(header.into()), HeaderEdit::Set(n, v.into()), HeaderEdit::ExactNames],
                        Want::Accept,
                    )
                })
                .collect(),
            "duplicate" => vec![probe_of(
                format!("with {header} twice, the second naming something else"),
                vec![HeaderEdit::Set(header.into(), v.into()), HeaderEdit::Add(header.into(), other.into())],
                Want::Reject,
            )],
            "whitespace" => {
                vec![probe_of(format!("with spaces around the {header} value (HTTP strips them)"), set(format!("  {v}  ")), Want::Accept)]
            }
            "base64" => {
                vec![probe_of(format!("with {header} in the base64 sentinel form"), set(format!("=?base64?{}?=", b64(v))), Want::Accept)]
            }
            "bad-base64" => vec![probe_of(
                format!("with {header} holding malformed base64 inside the sentinel"),
                set("=?base64?not*valid*base64?=".into()),
                Want::Reject,
            )],
            "upper-sentinel" => vec![probe_of(
                format!("with {header} as =?BASE64?…?= (upper case: a literal, not the sentinel)"),
                set(format!("=?BASE64?{}?=", b64(v))),
                Want::Reject,
            )],
            _ => vec![],
        }
    }

    async fn probe_standard(&mut self, rev: &str, header: &str, probe: &str, _case: &str) -> StepOut {
        let mut out = StepOut::default();
        let t = self.standard_target(rev);
        let (name, value, other) = if header == "version" {
            ("MCP-Protocol-Version", MODERN.to_string(), "2025-06-18".to_string())
        } else {
            let other = if t.method == "prompts/list" { "tools/list" } else { "prompts/list" };
            ("Mcp-Method", t.method.clone(), other.to_string())
        };
        let mut probes = Self::probes_for(name, &value, probe, &other);
        if header == "version" && probe == "duplicate" {
            for p in probes.iter_mut() {
                p.want = Want::RejectVersion;
            }
        }
        if header == "version" && probe == "mismatch" {
            // A supported header over a body naming another version.
            probes = vec![Probe {
                label: "with MCP-Protocol-Version 2026-07-28 over a body whose _meta names 2025-06-18".into(),
                body_version: Some("2025-06-18"),
                edits: vec![HeaderEdit::Set(name.into(), MODERN.into())],
                want: Want::Reject,
                args: None,
            }];
        }
        if probes.is_empty() {
            out.error = Some(format!("suite problem: probe `{probe}` does not apply to {name}"));
            return out;
        }
        self.run_probes(rev, &t, probes, &mut out).await;
        out
    }

    /// Targets for `Mcp-Name`: one tools/call, prompts/get and resources/read
    /// each, where the server has something to name.
    async fn name_targets(&mut self, rev: &str, case: &str) -> Result<(Vec<Target>, Vec<String>), String> {
        let caps = self.revs.get(rev).and_then(|s| s.info.capabilities.clone()).unwrap_or(json!({}));
        let mut targets = Vec::new();
        let mut notes = Vec::new();
        if caps.get("tools").is_some() {
            match self.tool_target(rev, case, false).await? {
                Some(t) => targets.push(t),
                None => notes.push("tools/call: the server lists no tools".to_string()),
            }
        }
        if caps.get("prompts").is_some() {
            let w = self.walk_main(rev, "prompts/list", "prompts", case).await?;
            match w.items.iter().find_map(|p| p.get("name").and_then(|n| n.as_str()).map(|n| (n.to_string(), p))) {
                Some((name, p)) => {
                    let mut args = serde_json::Map::new();
                    for a in p.get("arguments").and_then(|a| a.as_array()).into_iter().flatten() {
                        if a.get("required") == Some(&Value::Bool(true)) {
                            if let Some(n) = a.get("name").and_then(|n| n.as_str()) {
                                args.insert(n.into(), json!("mcpcert"));
                            }
                        }
                    }
                    targets.push(Target {
                        method: "prompts/get".into(),
                        what: format!("prompts/get of {name}"),
                        params: json!({"name": name, "arguments": args}),
                        schema: None,
                        callable: true,
                    });
                }
                None => notes.push("prompts/get: the server lists no prompts".into()),
            }
        }
        if caps.get("resources").is_some() {
            let w = self.walk_main(rev, "resources/list", "resources", case).await?;
            match w.items.iter().find_map(|r| r.get("uri").and_then(|u| u.as_str())) {
                Some(uri) => targets.push(Target {
                    method: "resources/read".into(),
                    what: format!("resources/read of {uri}"),
                    params: json!({"uri": uri}),
                    schema: None,
                    callable: true,
                }),
                None => notes.push("resources/read: the server lists no resources".into()),
            }
        }
        Ok((targets, notes))
    }

    /// A tools/call target: a tool mcpcert may call, with arguments that
    /// worked; else (for rejection probes only) the first listed tool.
    /// `annotated`: only tools with well-placed `x-mcp-header` params.
    async fn tool_target(&mut self, rev: &str, case: &str, annotated: bool) -> Result<Option<Target>, String> {
        let calls = self.tool_calls(rev, case).await?;
        let w = self.tools_walk(rev, case).await?;
        let schema_of = |name: &str| {
            w.items.iter().find(|t| t.get("name").and_then(|n| n.as_str()) == Some(name)).and_then(|t| t.get("inputSchema")).cloned()
        };
        let has_params = |s: &Option<Value>| s.as_ref().is_some_and(|s| !admission::header_walk(s).headers.is_empty());
        for r in calls.records.iter().filter(|r| r.kind == CallKind::Valid) {
            if r.ex.response.as_ref().is_none_or(|x| x.get("result").is_none()) {
                continue;
            }
            let schema = schema_of(&r.tool);
            if annotated && !has_params(&schema) {
                continue;
            }
            let Some(args) =
                r.ex.sent
                    .as_ref()
                    .and_then(|s| serde_json::from_str::<Value>(s).ok())
                    .and_then(|b| b.pointer("/params/arguments").cloned())
            else {
                continue;
            };
            return Ok(Some(Target {
                method: "tools/call".into(),
                what: format!("tools/call of {}", r.tool),
                params: json!({"name": r.tool, "arguments": args}),
                schema,
                callable: true,
            }));
        }
        // Nothing callable: rejection probes may still name any tool, as a
        // conforming server refuses them before the tool runs.
        for t in &w.items {
            let Some(name) = t.get("name").and_then(|n| n.as_str()) else { continue };
            let schema = t.get("inputSchema").cloned();
            if annotated && !has_params(&schema) {
                continue;
            }
            let args = schema.as_ref().and_then(synth_valid).unwrap_or(json!({}));
            return Ok(Some(Target {
                method: "tools/call".into(),
                what: format!("tools/call of {name} (not callable: rejection probes only)"),
                params: json!({"name": name, "arguments": args}),
                schema,
                callable: false,
            }));
        }
        Ok(None)
    }

    async fn probe_name(&mut self, rev: &str, probe: &str, case: &str) -> StepOut {
        let mut out = StepOut::default();
        let (targets, mut notes) = match self.name_targets(rev, case).await {
            Ok(x) => x,
            Err(e) => return StepOut { error: Some(e), ..Default::default() },
        };
        let mut probed = 0;
        for t in &targets {
            let v = t.params.get("name").or(t.params.get("uri")).and_then(|v| v.as_str()).unwrap_or("").to_string();
            let mut probes = Self::probes_for("Mcp-Name", &headerval::encode_str(&v), probe, OTHER);
            if probe == "value-case" && flip_case(&v) == v {
                notes.push(format!("{}: the name has no letters to change", t.what));
                continue;
            }
            if matches!(probe, "base64" | "upper-sentinel") {
                probes = Self::probes_for("Mcp-Name", &v, probe, OTHER);
            }
            if !t.callable && probes.iter().all(|p| matches!(p.want, Want::Accept | Want::NotRequired)) {
                notes.push(format!("{}: no tool may be called, and this probe must be served", t.what));
                continue;
            }
            probed += 1;
            self.run_probes(rev, t, probes, &mut out).await;
            if out.error.is_some() {
                break;
            }
        }
        if !notes.is_empty() {
            out.exchanges.push(Exchange { label: "targets not probed".into(), note: Some(notes.join("\n")), ..Default::default() });
        }
        if probed == 0 && out.error.is_none() {
            out.na = Some(format!(
                "nothing to name: {}",
                if notes.is_empty() { "the server offers no tools, prompts or resources".into() } else { notes.join("; ") }
            ));
        }
        out
    }

    async fn probe_param(&mut self, rev: &str, probe: &str, case: &str) -> StepOut {
        let mut out = StepOut::default();
        let t = match self.tool_target(rev, case, true).await {
            Ok(Some(t)) => t,
            Ok(None) => {
                return StepOut { na: Some("no tool mirrors a parameter into a header (x-mcp-header)".into()), ..Default::default() };
            }
            Err(e) => return StepOut { error: Some(e), ..Default::default() },
        };
        let schema = t.schema.clone().unwrap_or(json!({}));
        let params = admission::header_walk(&schema).headers;
        let args = t.params.get("arguments").cloned().unwrap_or(json!({}));
        // The parameter to probe: for `integer`, an integer one; otherwise
        // the first one, given a value if the arguments lack it.
        let pick = if probe == "integer" { params.iter().find(|h| h.ty == "integer") } else { params.first() };
        let Some(h) = pick.cloned() else {
            return StepOut { na: Some(format!("{} has no integer parameter mirrored into a header", t.what)), ..Default::default() };
        };
        let mut with_value = args.clone();
        let value = match (probe, args.pointer(&h.pointer)) {
            ("integer", _) => json!(42),
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
            "null" | "absent" => {
                let mut a = with_value.clone();
                if probe == "null" {
                    set_pointer(&mut a, &h.pointer, Value::Null);
                } else {
                    remove_pointer(&mut a, &h.pointer);
                }
                let how = if probe == "null" { "null" } else { "left out" };
                vec![Probe {
                    args: Some(a),
                    ..probe_of(
                        format!("with {} {how} and no {header} header", h.pointer),
                        vec![HeaderEdit::Remove(header.clone())],
                        Want::NotRequired,
                    )
                }]
            }
            "integer" => vec![probe_of(
                format!("with {} = 42 in the body and {header}: 42", h.pointer),
                vec![HeaderEdit::Set(header.clone(), "42".into())],
                Want::Accept,
            )],
            p => Self::probes_for(&header, &headerval::encode_str(&text), p, &other),
        };
        if matches!(probe, "base64" | "upper-sentinel") {
            probes = Self::probes_for(&header, &text, probe, &other);
        }
        if probes.is_empty() {
            return StepOut { error: Some(format!("suite problem: unknown probe `{probe}`")), ..Default::default() };
        }
        if !t.callable && probes.iter().all(|p| matches!(p.want, Want::Accept | Want::NotRequired)) {
            return StepOut {
                na: Some(format!(
                    "the probe must be served, and no tool with an x-mcp-header parameter may be called ({}); allow one with [tools.NAME] call = true",
                    t.what
                )),
                ..Default::default()
            };
        }
        // The probes carry the parameter's value; the baseline is the call as it was.
        for p in probes.iter_mut() {
            if p.args.is_none() {
                p.args = Some(with_value.clone());
            }
        }
        self.run_probes(rev, &t, probes, &mut out).await;
        out
    }

    async fn probe_origin(&mut self, rev: &str) -> StepOut {
        let mut out = StepOut::default();
        let Some(allowed) = self.cfg.contract.allowed_origin.clone() else {
            out.na =
                Some("the target config names no allowed Origin ([target] allowed_origin), so mcpcert cannot tell a foreign one".into());
            return out;
        };
        let t = self.standard_target(rev);
        let foreign = "http://mcpcert-foreign-origin.invalid";
        for (origin, must_refuse) in [(allowed.as_str(), false), (foreign, true)] {
            let ex = match self
                .probe_send(
                    rev,
                    &format!("{} with Origin: {origin}", t.what),
                    &t,
                    None,
                    vec![HeaderEdit::Set("Origin".into(), origin.into())],
                )
                .await
            {
                Ok(e) => e,
                Err(e) => return StepOut { error: Some(e), ..Default::default() },
            };
            if let Some(e) = &ex.error {
                out.error = Some(format!("Origin {origin}: {e}"));
            } else if must_refuse && ex.status != Some(403) {
                out.failures
                    .push(format!("a request with an Origin the server does not allow ({origin}) must get HTTP 403; got {}", ex.summary()));
            } else if !must_refuse && ex.status == Some(403) {
                out.error =
                    Some(format!("the server refused the Origin the config names as allowed ({origin}): check [target] allowed_origin"));
            }
            out.exchanges.push(ex);
        }
        out
    }

    async fn probe_notification(&mut self, rev: &str) -> StepOut {
        let mut out = StepOut::default();
        let body = wire::notification(
            "notifications/cancelled",
            wire::modern_params(Some(&json!({"requestId": "mcpcert-no-such-request"})), MetaMode::Full, MODERN),
        );
        let Some(mut conn) = self.revs.get_mut(rev).and_then(|s| s.conn.take()) else {
            return StepOut { error: Some(format!("no connection for {rev}")), ..Default::default() };
        };
        let ex = self.exchange(&mut conn, "notification POST", rev, &body, &[], false).await;
        if let Some(st) = self.revs.get_mut(rev) {
            st.conn = Some(conn);
        }
        match ex.status {
            _ if ex.error.is_some() => out.error = Some(format!("notification POST: {}", ex.summary())),
            Some(202) => {
                if ex.body.as_deref().is_some_and(|b| !b.trim().is_empty()) || !ex.frames.is_empty() {
                    out.failures
                        .push(format!("an accepted notification gets 202 with an empty body; the body was not empty ({})", ex.summary()));
                }
            }
            Some(s) if (400..500).contains(&s) => {
                out.exchanges.push(Exchange {
                    label: "note".into(),
                    note: Some(format!("the server refused the notification with HTTP {s}, which the spec allows")),
                    ..Default::default()
                });
            }
            _ => out.failures.push(format!(
                "a notification POST must get 202 with an empty body (accepted) or an HTTP error status (refused); got {}",
                ex.summary()
            )),
        }
        out.exchanges.insert(0, ex);
        out
    }
}

fn set_pointer(v: &mut Value, pointer: &str, value: Value) {
    let parts: Vec<String> = pointer.split('/').skip(1).map(|p| p.replace("~1", "/").replace("~0", "~")).collect();
    let mut cur = v;
    for (i, p) in parts.iter().enumerate() {
        if !cur.is_object() {
            *cur = json!({});
        }
        let m = cur.as_object_mut().expect("object");
        if i + 1 == parts.len() {
            m.insert(p.clone(), value);
            return;
        }
        cur = m.entry(p.clone()).or_insert_with(|| json!({}));
    }
}

fn remove_pointer(v: &mut Value, pointer: &str) {
    let (parent, last) = match pointer.rsplit_once('/') {
        Some(x) => x,
        None => return,
    };
    let target = if parent.is_empty() { Some(v) } else { v.pointer_mut(parent) };
    if let Some(Value::Object(m)) = target {
        m.remove(&last.replace("~1", "/").replace("~0", "~"));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pointers() {
        let mut v = json!({"a": 1});
        set_pointer(&mut v, "/f/kind", json!("x"));
        assert_eq!(v, json!({"a": 1, "f": {"kind": "x"}}));
        remove_pointer(&mut v, "/f/kind");
        remove_pointer(&mut v, "/a");
        assert_eq!(v, json!({"f": {}}));
    }

    #[test]
    fn cases() {
        assert_eq!(flip_case("tools/list"), "TOOLS/LIST");
        assert_eq!(mixed_case("Mcp-Method"), "mCp-mEtHoD");
    }
}
