//! What a server offers, fetched: `resources/read` of the resources it
//! lists and of a URI made from one of its templates, and `prompts/get` of
//! the prompts it lists, each result judged on its shape (any server, no
//! fixtures needed). Reads and gets are read-only by the protocol's design.

use super::follow::follow;
use super::judge::content::{base64_problem, content_problems};
use super::walk::ListMethod;
use super::{Check, Cx, Outcome, schema_problems};
use crate::record::Exchange;
use crate::wire::brief;
use serde::Deserialize;
use serde_json::{Value, json};

/// A read or a get sent and followed through any `input_required` rounds
/// (its result type is a union in 2026-07-28): the final exchange to judge,
/// with the rounds before it, their problems and a note in `out`; None
/// when the server was still asking at the end (nothing final to judge).
async fn fetch(cx: &Cx<'_>, label: &str, method: &str, params: Value, out: &mut Outcome) -> Result<Option<Exchange>, String> {
    let f = follow(cx, label, &cx.request(method, Some(params)), &[]).await.map_err(|e| e.to_string())?;
    out.failures.extend(f.problems.iter().cloned());
    let note = f.note(label);
    let still = f.still_asking;
    let mut exs = f.exchanges;
    let last = exs.pop();
    out.exchanges.extend(exs);
    out.exchanges.extend(note);
    if still {
        out.exchanges.extend(last);
        return Ok(None);
    }
    Ok(last)
}

/// How many listed items are fetched at most.
fn five() -> usize {
    5
}

/// Problems with one `resources/read` result for `uri`.
fn read_problems(cx: &Cx<'_>, uri: &str, r: &Value) -> Vec<String> {
    let mut out: Vec<String> = schema_problems(cx, "ReadResourceResult", r).into_iter().map(|p| format!("{uri}: {p}")).collect();
    for (i, c) in r.get("contents").and_then(|c| c.as_array()).into_iter().flatten().enumerate() {
        match (c.get("text"), c.get("blob")) {
            (Some(_), Some(_)) => {
                out.push(format!("{uri}: contents[{i}] holds both text and blob; a resource content is one or the other"))
            }
            (None, Some(Value::String(b))) => {
                if let Some(p) = base64_problem(b) {
                    out.push(format!("{uri}: contents[{i}].blob is not base64: {p}"));
                }
            }
            _ => {}
        }
    }
    out
}

/// `resources/read` of the resources the server lists (`max` of them).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReadListed {
    #[serde(default = "five")]
    max: usize,
    /// Judge only the caching hints (`ttlMs`, `cacheScope`) of the reads,
    /// as the requirement set's caching scenario does (2026-07-28).
    #[serde(default)]
    hints_only: bool,
    /// Judge only that each read is served (a listed resource is an
    /// available one: POLICY, the texts have no keyword for it); without
    /// it, a refused read is not judged, only the results that came.
    #[serde(default)]
    served: bool,
}

impl Check for ReadListed {
    const NAME: &'static str = "read_listed";
    const ABOUT: &'static str = "resources/read of the first `max` resources the server lists: results valid for the revision (2026-07-28: with cache hints), text or base64 blob";

    async fn run(&self, cx: &Cx<'_>) -> Outcome {
        let w = match cx.facts.list_walk(cx, ListMethod::Resources).await {
            Ok(w) => w,
            Err(e) => return Outcome::error(e),
        };
        let uris: Vec<String> =
            w.items.iter().filter_map(|r| r.get("uri").and_then(|u| u.as_str()).map(str::to_string)).take(self.max).collect();
        if uris.is_empty() {
            return match w.partial() {
                Some(p) => Outcome::partial(&p),
                None => Outcome::na("the server lists no resources"),
            };
        }
        let mut out = Outcome::default();
        let (mut judged, mut refused) = (0, 0);
        // The reads go at once, each with ids of its own; judged in order.
        let reads = uris.iter().enumerate().map(|(k, uri)| {
            crate::session::with_part_ids(k, async move {
                let mut o = Outcome::default();
                let r = fetch(cx, &format!("resources/read of the listed {uri}"), "resources/read", json!({"uri": uri}), &mut o).await;
                (o, r)
            })
        });
        for (uri, (o, r)) in uris.iter().zip(futures_util::future::join_all(reads).await) {
            out.exchanges.extend(o.exchanges);
            out.failures.extend(o.failures);
            let ex = match r {
                Ok(Some(e)) => e,
                Ok(None) => continue,
                Err(e) => return out.with_error(e),
            };
            judged += 1;
            let err = ex.response.as_ref().and_then(|r| r.get("error")).filter(|_| ex.error.is_none());
            if self.hints_only {
                judge_hints(uri, &ex, &mut out);
            } else if self.served {
                if let Some(e) = &ex.error {
                    out.set_error(format!("resources/read of {uri}: {e}"));
                } else if let Some(err) = err {
                    out.fail(format!("resources/read of {uri}, which the server lists as available, was refused: {}", brief(err)));
                }
            } else if err.is_some() {
                refused += 1;
            } else {
                judge_read(cx, uri, &ex, &mut out, false);
            }
            out.exchanges.push(ex);
        }
        if !self.hints_only && !self.served && refused > 0 && refused == judged && out.failures.is_empty() {
            out.set_na(format!(
                "the server refused every listed resource read ({refused}), so there are no contents to judge (a listed resource that is not served is the finding of read-listed-served)"
            ));
        }
        if judged == 0 && out.failures.is_empty() {
            out.set_na(format!(
                "every listed resource read still asked for input after {} retries, so no contents were reached",
                super::follow::ROUNDS
            ));
        }
        out
    }
}

/// The caching hints of one read: `ttlMs` (an integer of 0 or more) and
/// `cacheScope` (public or private). A read that was refused has no hints
/// to judge: the refusal is the read cases' finding, not this one's.
fn judge_hints(uri: &str, ex: &Exchange, out: &mut Outcome) {
    if let Some(e) = &ex.error {
        out.set_error(format!("resources/read of {uri}: {e}"));
    } else if let Some(err) = ex.response.as_ref().and_then(|r| r.get("error")) {
        out.set_error(format!(
            "resources/read of {uri} was refused ({}), so there are no caching hints to judge ({}); a listed resource that is not served is the finding of resources/read-listed-served",
            brief(err),
            super::PARTIAL
        ));
    } else if let Some(r) = ex.result() {
        for p in super::judge::hints::cache_hint_problems(&format!("resources/read of {uri}"), &[r]) {
            out.fail(p.replace(" page 1", ""));
        }
    }
}

/// One read judged: a listed resource must be served; a URI made from a
/// template may be refused (`may_refuse`), which leaves nothing to judge.
fn judge_read(cx: &Cx<'_>, uri: &str, ex: &Exchange, out: &mut Outcome, may_refuse: bool) {
    if let Some(e) = &ex.error {
        out.set_error(format!("resources/read of {uri}: {e}"));
    } else if let Some(err) = ex.response.as_ref().and_then(|r| r.get("error")) {
        if may_refuse {
            out.set_na(format!("the server refused to read {uri}, a URI made from its template and its own completion values ({}), so there is no result to judge", brief(err)));
        } else {
            out.fail(format!("resources/read of {uri}, which the server lists, must be served; got {}", brief(err)));
        }
    } else if let Some(r) = ex.result() {
        out.failures.extend(read_problems(cx, uri, r));
    }
}

/// A URI made from the first resource template whose every variable the
/// server's completion fills, then read.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReadTemplate {}

/// The simple `{name}` variables of an RFC 6570 template (None if it uses
/// operators mcpcert does not expand).
fn variables(t: &str) -> Option<Vec<String>> {
    let mut out = Vec::new();
    let mut rest = t;
    while let Some(i) = rest.find('{') {
        let j = rest[i..].find('}')? + i;
        let name = &rest[i + 1..j];
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return None;
        }
        out.push(name.to_string());
        rest = &rest[j + 1..];
    }
    Some(out)
}

impl Check for ReadTemplate {
    const NAME: &'static str = "read_template";
    const ABOUT: &'static str = "a URI made from a listed resource template (variables from [templates.\"T\"] values, else the server's first completion value) is read; a result is judged like a listed resource's, a refusal only when the config gave the values";

    async fn run(&self, cx: &Cx<'_>) -> Outcome {
        let w = match cx.facts.list_walk(cx, ListMethod::Templates).await {
            Ok(w) => w,
            Err(e) => return Outcome::error(e),
        };
        if let Some(a) = &w.absent {
            return Outcome::na(format!("{a}, so there is no template to read a URI from"));
        }
        let mut out = Outcome::default();
        let mut tried = Vec::new();
        // Templates the config gives values for come first.
        let mut templates: Vec<&str> = w.items.iter().filter_map(|t| t.get("uriTemplate").and_then(|u| u.as_str())).collect();
        templates.sort_by_key(|t| !cx.policy.template_values.contains_key(*t));
        for t in templates {
            let Some(vars) = variables(t) else {
                tried.push(format!("{t} (uses template operators mcpcert does not expand)"));
                continue;
            };
            let mut uri = t.to_string();
            let mut filled = true;
            let configured = cx.policy.template_values.get(t);
            for v in &vars {
                if let Some(x) = configured.and_then(|c| c.get(v)) {
                    uri = uri.replace(&format!("{{{v}}}"), x);
                    continue;
                }
                let body = cx.request(
                    "completion/complete",
                    Some(json!({"ref": {"type": "ref/resource", "uri": t}, "argument": {"name": v, "value": ""}})),
                );
                let ex = match cx.on_main(&format!("completion/complete of {t} variable {v}"), &body).await {
                    Ok(e) => e,
                    Err(e) => return out.with_error(e.to_string()),
                };
                let value = ex.result().and_then(|r| r.pointer("/completion/values/0")).and_then(|x| x.as_str()).map(str::to_string);
                out.exchanges.push(ex);
                match value {
                    Some(x) => uri = uri.replace(&format!("{{{v}}}"), &x),
                    None => {
                        filled = false;
                        tried.push(format!("{t} (completion offers no value for {v})"));
                        break;
                    }
                }
            }
            if !filled {
                continue;
            }
            let ex = match fetch(cx, &format!("resources/read of {uri}, made from {t}"), "resources/read", json!({"uri": uri}), &mut out)
                .await
            {
                Ok(Some(e)) => e,
                Ok(None) => {
                    if out.failures.is_empty() {
                        out.set_na(format!(
                            "the read of {uri} still asked for input after {} retries, so no contents were reached",
                            super::follow::ROUNDS
                        ));
                    }
                    return out;
                }
                Err(e) => return out.with_error(e),
            };
            // Values the operator gave name a resource that exists.
            judge_read(cx, &uri, &ex, &mut out, configured.is_none());
            out.exchanges.push(ex);
            return out;
        }
        if let Some(p) = w.partial() {
            return Outcome::partial(&p);
        }
        if tried.is_empty() {
            return Outcome::na("the server lists no resource templates");
        }
        out.set_na(format!("no template could be filled from the server's completion values: {}", tried.join("; ")));
        out
    }
}

/// `prompts/get` of the prompts the server lists (`max` of them), required
/// arguments from the server's completion, else a neutral value.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GetListed {
    #[serde(default = "five")]
    max: usize,
}

/// One listed prompt got: its required arguments completed (or given by
/// the config, or a neutral value), then prompts/get. None for an item
/// without a name; else its name, what was shown, and the get's answer.
async fn get_one(cx: &Cx<'_>, p: &Value) -> Option<(String, Outcome, Result<Option<Exchange>, String>)> {
    let name = p.get("name").and_then(|n| n.as_str())?;
    let mut out = Outcome::default();
    let configured = cx.policy.prompt_arguments.get(name);
    let mut args = configured.cloned().unwrap_or_default();
    for a in p.get("arguments").and_then(|a| a.as_array()).into_iter().flatten() {
        if a.get("required") != Some(&Value::Bool(true)) || configured.is_some() {
            continue;
        }
        let Some(an) = a.get("name").and_then(|n| n.as_str()) else { continue };
        let body = cx.request(
            "completion/complete",
            Some(json!({"ref": {"type": "ref/prompt", "name": name}, "argument": {"name": an, "value": ""}})),
        );
        let value = if cx.advertises("completions") {
            match cx.on_main(&format!("completion/complete of {name} argument {an}"), &body).await {
                Ok(ex) => {
                    let v = ex.result().and_then(|r| r.pointer("/completion/values/0")).and_then(|x| x.as_str()).map(str::to_string);
                    out.exchanges.push(ex);
                    v
                }
                Err(e) => return Some((name.to_string(), out, Err(e.to_string()))),
            }
        } else {
            None
        };
        args.insert(an.to_string(), json!(value.unwrap_or_else(|| "mcpcert".into())));
    }
    let label = format!("prompts/get of the listed {name}");
    let r = fetch(cx, &label, "prompts/get", json!({"name": name, "arguments": args}), &mut out).await;
    Some((name.to_string(), out, r))
}

impl Check for GetListed {
    const NAME: &'static str = "get_listed";
    const ABOUT: &'static str = "prompts/get of the first `max` prompts the server lists (arguments from [prompts.NAME], else required ones from completion or a neutral value): messages with valid roles and content blocks";

    async fn run(&self, cx: &Cx<'_>) -> Outcome {
        let w = match cx.facts.list_walk(cx, ListMethod::Prompts).await {
            Ok(w) => w,
            Err(e) => return Outcome::error(e),
        };
        let prompts: Vec<Value> = w.items.iter().take(self.max).cloned().collect();
        if prompts.is_empty() {
            return match w.partial() {
                Some(p) => Outcome::partial(&p),
                None => Outcome::na("the server lists no prompts"),
            };
        }
        let mut out = Outcome::default();
        let mut judged = 0;
        let mut refused = Vec::new();
        // The prompts are got at once (each its completions, then its get),
        // each with ids of its own; judged in order.
        let gets = prompts.iter().enumerate().map(|(k, p)| crate::session::with_part_ids(k, get_one(cx, p)));
        for (name, o, r) in futures_util::future::join_all(gets).await.into_iter().flatten() {
            out.exchanges.extend(o.exchanges);
            out.failures.extend(o.failures);
            let ex = match r {
                Ok(Some(e)) => e,
                Ok(None) => {
                    refused.push(format!("{name} (still asking for input after {} retries)", super::follow::ROUNDS));
                    continue;
                }
                Err(e) => return out.with_error(e),
            };
            if let Some(e) = &ex.error {
                out.set_error(format!("prompts/get of {name}: {e}"));
            } else if let Some(err) = ex.response.as_ref().and_then(|r| r.get("error")) {
                // Arguments made up by mcpcert may be refused; nothing to judge.
                refused.push(format!("{name} ({})", brief(err)));
            } else if let Some(r) = ex.result() {
                judged += 1;
                for pr in schema_problems(cx, "GetPromptResult", r) {
                    out.fail(format!("{name}: {pr}"));
                }
                for (i, m) in r.get("messages").and_then(|m| m.as_array()).into_iter().flatten().enumerate() {
                    if let Some(c) = m.get("content") {
                        for pr in content_problems(&json!({"content": [c]}), cx.rev) {
                            out.fail(format!("{name}: messages[{i}].{}", pr.replacen("content[0]", "content", 1)));
                        }
                    }
                }
            }
            out.exchanges.push(ex);
        }
        if judged == 0 && out.failures.is_empty() && !out.is_error() {
            out.set_na(format!("no prompts/get reached a result, with the arguments mcpcert could make: {}", refused.join("; ")));
        }
        out
    }
}
