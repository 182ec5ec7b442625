//! The tool calls, a shared fact: every tool the call policy allows is
//! called once with valid arguments, once with arguments that break its
//! inputSchema (when such can be made safely), and once with configured
//! error arguments. Tools outside the policy are never named in a call.

use super::Cx;
use super::judge::admission::Rule;
use super::judge::args::{param_headers, synth_invalid, synth_valid};
use crate::record::Exchange;
use crate::session::{Msg, SessionError};
use crate::wire::HeaderEdit;
use futures_util::StreamExt;
use serde_json::{Value, json};

/// One tool call and why it was made.
#[derive(Debug, Clone)]
pub struct CallRecord {
    pub tool: String,
    pub kind: CallKind,
    pub output_schema: Option<Value>,
    /// The final answer (after any `input_required` rounds, 2026-07-28).
    pub ex: Exchange,
    /// The `input_required` rounds before it, and a note on them.
    pub before: Vec<Exchange>,
    /// What those rounds broke of the InputRequiredResult type.
    pub round_problems: Vec<String>,
    /// How many rounds answered `input_required`.
    pub asked: usize,
    /// The tool still asked for input after the last retry: `ex` is not a
    /// final result, so no rule about final results judges it.
    pub still_asking: bool,
    /// The arguments were made up by mcpcert from the inputSchema (not
    /// given in the config).
    pub made_up: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallKind {
    /// Arguments that satisfy the inputSchema.
    Valid,
    /// Arguments that break the inputSchema.
    Invalid,
    /// Configured arguments for which the tool reports an execution error.
    ErrorArgs,
}

#[derive(Debug, Clone, Default)]
pub struct Calls {
    pub records: Vec<CallRecord>,
    /// Tools not called, with the reason.
    /// Why each tool not called was not (shared, not copied: a list can
    /// hold thousands of tools).
    pub skipped: std::sync::Arc<Vec<String>>,
    /// How the tools walk ended, if not at its end.
    pub walk_problem: Option<String>,
}

impl Calls {
    /// A transcript note listing the tools not called and why.
    pub fn note(&self) -> Option<Exchange> {
        if self.skipped.is_empty() {
            return None;
        }
        let shown: Vec<String> = self.skipped.iter().take(20).map(|s| format!("  - {s}")).collect();
        let more = if self.skipped.len() > 20 { format!("\n  … and {} more", self.skipped.len() - 20) } else { String::new() };
        Some(Exchange::note("tools not called", format!("{}{more}", shown.join("\n"))))
    }
}

/// Make the calls (the `Facts::tool_calls` fact).
/// The valid calls (and configured error calls) of every tool the policy
/// allows, sent; the negative probes planned (their requests made), not
/// sent: `with_negatives` sends them. Cases that need a working call (the
/// header probes' targets) wait for this part only.
pub struct ValidCalls {
    calls: Calls,
    by_tool: Vec<Vec<CallRecord>>,
    planned: Vec<Vec<Planned>>,
    width: usize,
    walk_kept: bool,
}

impl ValidCalls {
    /// The records so far: every tool's valid and error calls.
    pub fn records(&self) -> impl Iterator<Item = &CallRecord> {
        self.by_tool.iter().flatten()
    }

    /// How many tools the policy called, and why each other listed tool
    /// was not.
    pub fn coverage(&self) -> (usize, std::sync::Arc<Vec<String>>) {
        // A name listed twice is one tool.
        let names: std::collections::HashSet<&str> = self.by_tool.iter().filter_map(|rs| rs.first().map(|r| r.tool.as_str())).collect();
        (names.len() + self.by_tool.iter().filter(|rs| rs.is_empty()).count(), self.calls.skipped.clone())
    }

    /// Whether these calls may be kept for the run: they rest on the kept
    /// tools walk, and none was refused as busy.
    pub fn kept(&self) -> bool {
        self.walk_kept && !self.records().any(|r| r.ex.refused_as_busy() || r.before.iter().any(|e| e.refused_as_busy()))
    }
}

pub async fn gather(cx: &Cx<'_>) -> Result<ValidCalls, String> {
    let w = cx.facts.tools_walk(cx).await?;
    let verdicts = cx.facts.tool_verdicts(cx, &w);
    let mut calls = Calls { walk_problem: w.partial(), ..Default::default() };
    let mut skipped = Vec::new();
    let mut called = 0usize;
    let max = cx.policy.max_tools_called;
    let mut planned: Vec<Vec<Planned>> = Vec::new();
    let mut read_only = true;
    for (i, tool) in w.items.iter().enumerate() {
        let Some(name) = tool.get("name").and_then(|n| n.as_str()).map(String::from) else { continue };
        if let Err(why) = cx.policy.call_allowed(tool, &name) {
            skipped.push(format!("{name}: {why}"));
            continue;
        }
        // 2025-11-25: a tool that runs only as a task is called as one by
        // the tasks cases alone ("clients MUST invoke the tool as a task").
        if tool.pointer("/execution/taskSupport").and_then(Value::as_str) == Some("required") {
            skipped.push(format!(
                "{name}: its execution.taskSupport is required, so it is called only as a task (the tasks cases, with [tasks] tool)"
            ));
            continue;
        }
        if called >= max {
            skipped.push(format!("{name}: over the limit of {max} tools called ([calls] max_tools)"));
            continue;
        }
        let Some(schema) = tool.get("inputSchema").filter(|s| s.is_object()) else {
            skipped.push(format!("{name}: no usable inputSchema"));
            continue;
        };
        if verdicts[i].findings.iter().any(|f| f.rule == Rule::XMcpHeader && f.weight.rejects()) {
            skipped.push(format!("{name}: a client must drop it (bad x-mcp-header), so it is not called"));
            continue;
        }
        called += 1;
        let conf = cx.policy.tool(&name);
        let output_schema = tool.get("outputSchema").cloned();
        let given = conf.arguments.is_some();
        let valid = match conf.arguments.clone() {
            Some(a) => Some(a),
            None => match synth_valid(schema) {
                Some(a) => Some(a),
                None => {
                    skipped.push(format!(
                        "{name}: no valid arguments could be made from its inputSchema; name them in the config ([tools.{name}] arguments)"
                    ));
                    None
                }
            },
        };
        let invalid_given = conf.invalid_arguments.is_some();
        let invalid = conf.invalid_arguments.clone().or_else(|| valid.as_ref().and_then(|v| synth_invalid(schema, v)));
        let plan = [(CallKind::Valid, valid), (CallKind::Invalid, invalid), (CallKind::ErrorArgs, conf.error_arguments.clone())];
        let mut calls_of_tool = Vec::new();
        for (kind, args) in plan {
            let Some(args) = args else { continue };
            let (label, made_up) = match kind {
                CallKind::Valid if given => (format!("tools/call {name} (arguments from the config)"), false),
                CallKind::Valid => (format!("tools/call {name} (arguments made from the schema)"), true),
                CallKind::Invalid if invalid_given => (format!("tools/call {name} (configured invalid_arguments)"), false),
                CallKind::Invalid => (format!("tools/call {name} (arguments that break its inputSchema)"), true),
                CallKind::ErrorArgs => (format!("tools/call {name} (configured error_arguments)"), false),
            };
            let (body, edits) = call_request(cx, &name, schema, &args);
            calls_of_tool.push(Planned { tool: name.clone(), kind, output_schema: output_schema.clone(), label, body, edits, made_up });
        }
        read_only &= tool.pointer("/annotations/readOnlyHint") == Some(&Value::Bool(true));
        planned.push(calls_of_tool);
    }
    // Every request (and id) is made first, in catalogue order. A tool's
    // calls go one after another (a call that got no answer ends its
    // tool's); when every tool called says it is read-only
    // (`readOnlyHint`), different tools are called at once, within the
    // run's limit on requests in flight (-j); otherwise one at a time.
    let width = if read_only { 8 } else { 1 };
    let runs: Vec<_> = planned
        .iter()
        .map(|calls_of_tool| async move {
            let mut records = Vec::new();
            for p in calls_of_tool {
                // A call's result may be an InputRequiredResult (2026-07-28):
                // valid calls are followed to their final result; a call with
                // invalid arguments is judged on its first answer.
                let mut rec = CallRecord {
                    tool: p.tool.clone(),
                    kind: p.kind,
                    output_schema: p.output_schema.clone(),
                    ex: Exchange::default(),
                    before: Vec::new(),
                    round_problems: Vec::new(),
                    asked: 0,
                    still_asking: false,
                    made_up: p.made_up,
                };
                if p.kind == CallKind::Invalid {
                    // A negative probe: sent below, after these, each on a
                    // connection or process of its own.
                    continue;
                } else {
                    let f = super::follow::follow(cx, &p.label, &p.body, &p.edits).await?;
                    rec.round_problems = f.problems.clone();
                    rec.asked = f.asked;
                    rec.still_asking = f.still_asking;
                    let note = f.note(&p.label);
                    let mut exs = f.exchanges;
                    rec.ex = exs.pop().unwrap_or_default();
                    rec.before = exs;
                    rec.before.extend(note);
                }
                let stop = rec.ex.error.is_some();
                records.push(rec);
                if stop {
                    break;
                }
            }
            Ok::<_, SessionError>(records)
        })
        .collect();
    let done: Vec<Result<Vec<CallRecord>, SessionError>> = futures_util::stream::iter(runs).buffered(width).collect().await;
    let mut by_tool = Vec::new();
    for records in done {
        by_tool.push(records.map_err(|e| e.to_string())?);
    }
    calls.skipped = std::sync::Arc::new(skipped);
    let walk_kept = cx.facts.tools_walk_gathered().is_some_and(|k| std::sync::Arc::ptr_eq(&k, &w));
    Ok(ValidCalls { calls, by_tool, planned, width, walk_kept })
}

/// Every call: the valid ones, then the negative probes sent.
pub async fn with_negatives(cx: &Cx<'_>, v: &ValidCalls) -> Result<Calls, String> {
    let (mut calls, mut by_tool, planned, width) = (v.calls.clone(), v.by_tool.clone(), &v.planned, v.width);
    // The calls with arguments that break the schema (negative probes), on
    // the connection the negative probes share, not the main one; not for a
    // tool whose valid call got no answer. Sent as the valid calls were (at
    // once when every tool called is read-only), judged in catalogue order.
    let negatives: Vec<(usize, &Planned)> = by_tool
        .iter()
        .zip(planned)
        .enumerate()
        .filter(|(_, (records, _))| records.last().is_none_or(|r| r.ex.error.is_none()))
        .flat_map(|(t, (_, calls_of_tool))| calls_of_tool.iter().filter(|p| p.kind == CallKind::Invalid).map(move |p| (t, p)))
        .collect();
    let sends: Vec<_> =
        negatives.iter().map(|(_, p)| async move { cx.negative(&Msg::new(cx.rev, &p.label, &p.body).edits(&p.edits)).await }).collect();
    let answers: Vec<Result<Exchange, SessionError>> = futures_util::stream::iter(sends).buffered(width).collect().await;
    for ((t, p), ex) in negatives.into_iter().zip(answers) {
        let ex = ex.map_err(|e| e.to_string())?;
        let rec = CallRecord {
            tool: p.tool.clone(),
            kind: p.kind,
            output_schema: p.output_schema.clone(),
            ex,
            before: Vec::new(),
            round_problems: Vec::new(),
            asked: 0,
            still_asking: false,
            made_up: p.made_up,
        };
        // In the tool's place: after its valid call.
        let records = &mut by_tool[t];
        let at = records.iter().position(|r| r.kind == CallKind::ErrorArgs).unwrap_or(records.len());
        records.insert(at, rec);
    }
    for records in by_tool {
        calls.records.extend(records);
    }
    Ok(calls)
}

/// A call planned before any is sent.
struct Planned {
    tool: String,
    kind: CallKind,
    output_schema: Option<Value>,
    label: String,
    body: Value,
    edits: Vec<HeaderEdit>,
    made_up: bool,
}

/// One tools/call request for the main connection, with the `Mcp-Param-*`
/// headers its inputSchema asks for (HTTP, 2026-07-28).
fn call_request(cx: &Cx<'_>, name: &str, schema: &Value, args: &Value) -> (Value, Vec<HeaderEdit>) {
    let mut body = cx.request("tools/call", Some(json!({"name": name, "arguments": args})));
    // A progressToken: a slow tool that reports progress gets its timeout
    // restarted by each report (up to the ceiling), as SDK clients do.
    let token = json!(format!("mcpcert-progress-{}", body["id"]));
    match body["params"].get_mut("_meta").and_then(|m| m.as_object_mut()) {
        Some(meta) => {
            meta.insert("progressToken".into(), token);
        }
        None => body["params"]["_meta"] = json!({"progressToken": token}),
    }
    let edits: Vec<HeaderEdit> = if cx.rev.is_stateless() {
        param_headers(schema, args).into_iter().map(|(k, v)| HeaderEdit::Set(k, v)).collect()
    } else {
        Vec::new()
    };
    (body, edits)
}
