//! The tool contract over the shared facts: each listed descriptor judged
//! on its own (admission), and what the tool calls returned.

use super::calls::{CallKind, CallRecord};
use super::judge::admission::{self, Rule};
use super::judge::content::{self, Structured};
use super::{Check, Cx, Need, Outcome, Weight};
use crate::record::TransportError;
use crate::record::{Exchange, clip};
use crate::wire::brief;
use serde::Deserialize;
use serde_json::Value;

/// Which admission rule a `tools_admission` case judges.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum AdmissionRule {
    Name,
    InputSchema,
    OutputSchema,
    XMcpHeader,
    XMcpHeaderSecret,
    Annotations,
    /// Descriptor safety (POLICY): the judge of `mcpcert lint`.
    Safety,
}

impl AdmissionRule {
    fn as_str(self) -> &'static str {
        match self {
            AdmissionRule::Name => "name",
            AdmissionRule::InputSchema => "input-schema",
            AdmissionRule::OutputSchema => "output-schema",
            AdmissionRule::XMcpHeader => "x-mcp-header",
            AdmissionRule::XMcpHeaderSecret => "x-mcp-header-secret",
            AdmissionRule::Annotations => "annotations",
            AdmissionRule::Safety => "safety",
        }
    }
    /// The admission findings it covers.
    fn rules(self) -> &'static [Rule] {
        match self {
            AdmissionRule::Name => &[Rule::Name],
            AdmissionRule::InputSchema => &[Rule::InputSchema],
            AdmissionRule::OutputSchema => &[Rule::OutputSchema],
            AdmissionRule::XMcpHeader => &[Rule::XMcpHeader],
            AdmissionRule::XMcpHeaderSecret => &[Rule::XMcpHeaderSecret],
            AdmissionRule::Annotations => &[Rule::Shape, Rule::Annotations],
            AdmissionRule::Safety => &[],
        }
    }
}

/// Each listed tool is judged on its own against one admission rule.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolsAdmission {
    rule: AdmissionRule,
}

impl Check for ToolsAdmission {
    const NAME: &'static str = "tools_admission";
    const ABOUT: &'static str =
        "every listed tool descriptor keeps one admission rule (`rule`), each tool judged on its own; the same code as `mcpcert lint`";

    async fn run(&self, cx: &Cx<'_>) -> Outcome {
        let w = match cx.facts.listed_tools(cx).await {
            Ok(w) => w,
            Err(stop) => return stop,
        };
        let rule = self.rule.as_str();
        if self.rule == AdmissionRule::Safety {
            return safety(&w);
        }
        // Rules about optional features do not apply when no tool uses them.
        let uses = |pred: &dyn Fn(&Value) -> bool| w.items.iter().any(pred);
        let na = match self.rule {
            AdmissionRule::OutputSchema if !uses(&|t| t.get("outputSchema").is_some()) => Some("no tool declares an outputSchema"),
            AdmissionRule::XMcpHeader if !uses(&|t| t.to_string().contains("\"x-mcp-header\"")) => Some("no tool uses x-mcp-header"),
            AdmissionRule::XMcpHeaderSecret
                if !uses(&|t| t.get("inputSchema").is_some_and(|s| !admission::header_walk(s).headers.is_empty())) =>
            {
                Some("no tool mirrors a parameter into a header (x-mcp-header)")
            }
            _ => None,
        };
        if let Some(why) = na {
            // On a partial list, the tools not listed might use it.
            if let Some(p) = w.partial() {
                return Outcome::partial(&format!("{why} among the {} tools listed, but {p}", w.items.len()));
            }
            return Outcome::na(format!("{why} ({} tools listed)", w.items.len()));
        }
        let verdicts = cx.facts.tool_verdicts(cx, &w);
        let rules = self.rule.rules();
        let mut lines = Vec::new();
        let mut notes = Vec::new();
        let mut pages = Vec::new();
        let mut bad_tools = 0;
        for v in verdicts.iter() {
            let mut counted = false;
            for f in v.findings.iter().filter(|f| rules.contains(&f.rule)) {
                if f.weight == Weight::Note {
                    notes.push(format!("  - {}: {}", v.name, f.message));
                    continue;
                }
                if !counted {
                    bad_tools += 1;
                    counted = true;
                    pages.push(w.item_page[v.index]);
                }
                if lines.len() < 30 {
                    lines.push(format!("  - {}: {}", v.name, f.message));
                }
            }
        }
        let mut out = Outcome { exchanges: w.transcript(&pages), ..Default::default() };
        let mut note = format!("{} tools judged", w.items.len());
        if let Some(p) = w.partial() {
            note.push_str(&format!(" ({p})"));
        }
        if !notes.is_empty() {
            note.push_str(&format!("; not judged:\n{}", notes.join("\n")));
        }
        out.exchanges.push(Exchange::note(format!("admission: {rule}"), note));
        if bad_tools > 0 {
            out.fail(format!(
                "{bad_tools} of {} tools break this rule (each tool is judged on its own):\n{}",
                w.items.len(),
                lines.join("\n")
            ));
        }
        if let Some(p) = w.partial() {
            out.incomplete(&p);
        }
        out
    }
}

/// Descriptor safety over the listed tools: each concern of the judge
/// `mcpcert lint` uses, with the pages of the tools it names.
fn safety(w: &super::walk::Walk) -> Outcome {
    let concerns = super::judge::safety::judge(&w.items);
    let page: std::collections::HashMap<&str, usize> =
        w.items.iter().zip(&w.item_page).rev().map(|(t, p)| (t.get("name").and_then(Value::as_str).unwrap_or(""), *p)).collect();
    let mut pages: Vec<usize> = concerns.iter().filter_map(|c| page.get(c.tool.as_str()).copied()).collect();
    pages.sort_unstable();
    pages.dedup();
    let mut out = Outcome { exchanges: w.transcript(&pages), ..Default::default() };
    out.exchanges.push(Exchange::note("admission: safety", format!("{} tools judged", w.items.len())));
    if !concerns.is_empty() {
        let lines: Vec<String> = concerns.iter().take(30).map(|c| format!("  - {}: {}", c.tool, c.what)).collect();
        out.fail(format!("{} concerns in the tools' descriptors:\n{}", concerns.len(), lines.join("\n")));
    }
    if let Some(p) = w.partial() {
        out.incomplete(&p);
    }
    out
}

/// Which rule over the call results a `tool_results` case judges.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ResultCheck {
    /// Content blocks are well-formed.
    Content,
    /// A successful result of a tool with an outputSchema has conforming structuredContent.
    Structured,
    /// structuredContent is mirrored as JSON text (SHOULD).
    TextMirror,
    /// An isError result's structuredContent, where it carries one, conforms too.
    ErrorConforms,
    /// Arguments that break the inputSchema are refused.
    InvalidArguments,
}

impl ResultCheck {
    /// Whether a call is one this check judges (shown when all is well).
    fn relevant(self, r: &CallRecord) -> bool {
        match self {
            ResultCheck::InvalidArguments => r.kind == CallKind::Invalid,
            ResultCheck::Structured | ResultCheck::TextMirror => r.kind == CallKind::Valid && r.output_schema.is_some(),
            ResultCheck::ErrorConforms => r.output_schema.is_some() && r.kind != CallKind::Valid,
            ResultCheck::Content => true,
        }
    }

    /// Why nothing could be judged.
    fn nothing_judged(self, calls: &super::calls::Calls) -> String {
        match self {
            ResultCheck::Structured => {
                if calls.records.iter().any(|r| r.output_schema.is_some() && r.kind == CallKind::Valid) {
                    "every call of a tool with an outputSchema returned isError: true, so no successful result could be judged (mcpcert made up the arguments; give real ones with [tools.NAME] arguments)".into()
                } else {
                    "no called tool declares an outputSchema".into()
                }
            }
            ResultCheck::TextMirror => "no successful call returned structuredContent".into(),
            ResultCheck::ErrorConforms => {
                let errors = calls.records.iter().filter(|r| r.output_schema.is_some()).filter_map(|r| r.ex.result()).any(is_error_result);
                if errors {
                    "the isError results of tools with an outputSchema carried no structuredContent (an error result need not carry any), so none could be judged against the schema".into()
                } else {
                    "no call of a tool with an outputSchema returned an isError result (configure [tools.NAME] error_arguments to drive one)".into()
                }
            }
            ResultCheck::InvalidArguments => "no callable tool has an inputSchema that mcpcert can break safely (a required property or a typed one); configure [tools.NAME] invalid_arguments".into(),
            ResultCheck::Content => "no tool call returned a result".into(),
        }
    }
}

/// Judge what the shared tool calls returned.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolResults {
    check: ResultCheck,
}

fn is_error_result(res: &Value) -> bool {
    res.get("isError") == Some(&Value::Bool(true))
}

impl Check for ToolResults {
    const NAME: &'static str = "tool_results";
    const ABOUT: &'static str = "one rule (`check`) over the results of the tool calls the call policy allows";

    fn calls_tools(&self) -> bool {
        true
    }

    fn needs(&self) -> Vec<Need> {
        vec![Need::CallableTool]
    }

    async fn run(&self, cx: &Cx<'_>) -> Outcome {
        let calls = match cx.facts.tool_calls(cx).await {
            Ok(c) => c,
            Err(e) => return Outcome::error(e),
        };
        if calls.records.is_empty() {
            // The tools not listed might have been callable.
            if let Some(p) = &calls.walk_problem {
                return Outcome::partial(&format!("no listed tool may be called, but {p}"));
            }
            let mut why = if !cx.policy.open_world_calls {
                "no tool may be called: mcpcert calls only tools marked readOnlyHint: true and openWorldHint: false (a tool that may reach the world would reach hosts outside the test), or allowed in the target config ([tools.NAME] call = true; [calls] open_world = true for read-only open-world tools)".to_string()
            } else {
                "no tool may be called: mcpcert calls only tools marked readOnlyHint: true or allowed in the target config ([tools.NAME] call = true)".to_string()
            };
            if !calls.skipped.is_empty() {
                why.push_str(&format!("; {} tool(s) listed, none callable (the transcript says why each is not)", calls.skipped.len()));
            }
            let mut out = Outcome::na(why);
            out.exchanges.extend(calls.note());
            return out;
        }
        let check = self.check;
        let mut out = Outcome::default();
        let mut shown: Vec<usize> = Vec::new();
        let mut failed: Vec<usize> = Vec::new();
        // A finding about a call whose arguments mcpcert made up says so,
        // with how to give real ones (a tool may refuse made-up values).
        let made_up: Vec<Option<String>> =
            calls.records.iter().map(|r| (r.made_up && r.kind == CallKind::Valid).then(|| r.tool.clone())).collect();
        let mut fail = |out: &mut Outcome, i: usize, msg: String| {
            if !failed.contains(&i) {
                failed.push(i);
            }
            if out.failures.len() < 20 {
                match made_up.get(i).cloned().flatten() {
                    Some(t) => out.fail(format!(
                        "{msg}\n    (mcpcert made up these arguments from the inputSchema; if the tool needs real ones, give them with [tools.{t}] arguments)"
                    )),
                    None => out.fail(msg),
                }
            }
        };
        let mut judged = 0usize;
        // Calls that got no answer: the tools they stand for cannot be judged.
        let mut unanswered: Vec<String> = Vec::new();
        for (i, r) in calls.records.iter().enumerate() {
            if let Some(e) = &r.ex.error {
                let hint = if matches!(e, TransportError::Timeout(_)) {
                    format!(" (a slow tool? raise --request-timeout-ms, or leave it out with [tools.{}] call = false)", r.tool)
                } else {
                    String::new()
                };
                unanswered.push(format!("{}: {e}{hint}", r.ex.label));
                shown.push(i);
                continue;
            }
            if r.still_asking {
                // No final result: nothing a rule about results can judge
                // (the note among the call's exchanges says so).
                continue;
            }
            let res = r.ex.result().cloned();
            // A call with invalid arguments answered input_required: the
            // server asks before it validates; nothing to judge of it.
            let asks = res.as_ref().and_then(|x| x.get("resultType")).and_then(|t| t.as_str()) == Some("input_required");
            if asks {
                continue;
            }
            // A task handle is no CallToolResult: whether the server may
            // send one is wire/no-task-unless-declared's to judge.
            if res.as_ref().is_some_and(super::judge::tasks::is_task_handle) {
                continue;
            }
            match check {
                ResultCheck::Content => {
                    let Some(res) = res else { continue };
                    judged += 1;
                    for p in &r.round_problems {
                        fail(&mut out, i, p.clone());
                    }
                    for p in content::content_problems(&res, cx.rev) {
                        fail(&mut out, i, format!("{}: {p}", r.ex.label));
                    }
                }
                ResultCheck::Structured => {
                    let (Some(res), Some(os)) = (res, &r.output_schema) else { continue };
                    if r.kind != CallKind::Valid || is_error_result(&res) {
                        continue;
                    }
                    judged += 1;
                    match content::judge_structured(&res, os, cx.rev) {
                        Structured::Conforms => {}
                        Structured::Missing => fail(
                            &mut out,
                            i,
                            format!(
                                "{}: the tool declares an outputSchema, so a successful result must carry structuredContent; it has none",
                                r.ex.label
                            ),
                        ),
                        Structured::Breaks(e) => fail(
                            &mut out,
                            i,
                            format!(
                                "{}: structuredContent does not conform to the tool's outputSchema:\n    {}",
                                r.ex.label,
                                e.join("\n    ")
                            ),
                        ),
                        Structured::Unjudgeable(e) => {
                            judged -= 1;
                            out.exchanges.push(Exchange::note(
                                format!("{}: not judged", r.tool),
                                format!("outputSchema could not be compiled: {e}"),
                            ));
                        }
                    }
                }
                ResultCheck::TextMirror => {
                    let Some(res) = res else { continue };
                    if r.kind != CallKind::Valid || res.get("structuredContent").is_none() {
                        continue;
                    }
                    judged += 1;
                    if !content::has_text_mirror(&res) {
                        let first_text = res
                            .get("content")
                            .and_then(|c| c.as_array())
                            .and_then(|a| a.iter().find_map(|b| b.get("text").and_then(|t| t.as_str())))
                            .map(|t| format!("{:?}", clip(t, 120)));
                        fail(
                            &mut out,
                            i,
                            format!(
                                "{}: a result with structuredContent should also hold it serialized as JSON in a text block; structuredContent is {}, the first text block holds {}",
                                r.ex.label,
                                clip(&brief(&res["structuredContent"]), 120),
                                first_text.unwrap_or_else(|| "nothing (no text block)".into())
                            ),
                        );
                    }
                }
                ResultCheck::ErrorConforms => {
                    let (Some(res), Some(os)) = (res, &r.output_schema) else { continue };
                    if !is_error_result(&res) {
                        continue;
                    }
                    // An error result need not carry structuredContent (the
                    // spec's own example has none); one that does conforms.
                    match content::judge_structured(&res, os, cx.rev) {
                        Structured::Breaks(e) => {
                            judged += 1;
                            fail(
                                &mut out,
                                i,
                                format!(
                                    "{}: an isError result carries structuredContent that does not conform to the tool's outputSchema (the error flag does not exempt it):\n    {}",
                                    r.ex.label,
                                    e.join("\n    ")
                                ),
                            );
                        }
                        Structured::Conforms => judged += 1,
                        Structured::Missing => {}
                        Structured::Unjudgeable(e) => out
                            .exchanges
                            .push(Exchange::note(format!("{}: not judged", r.tool), format!("outputSchema could not be compiled: {e}"))),
                    }
                }
                ResultCheck::InvalidArguments => {
                    if r.kind != CallKind::Invalid {
                        continue;
                    }
                    judged += 1;
                    match (r.ex.error_code(), res) {
                        (Some(-32602), _) => {}
                        // Refused for a client capability the request did
                        // not declare (a tool that only runs as a task, say):
                        // the tool never ran for this client, so its
                        // argument validation cannot be seen.
                        (Some(-32021), _) => {
                            judged -= 1;
                            out.exchanges.push(Exchange::note(
                                format!("{}: not judged", r.tool),
                                "refused with -32021 (a client capability the request did not declare is required): the tool does not run for this client, so how it validates arguments cannot be seen",
                            ));
                        }
                        (None, Some(res)) if is_error_result(&res) => {}
                        (None, Some(_)) => fail(
                            &mut out,
                            i,
                            format!(
                                "{}: arguments that break the inputSchema must be refused (isError: true, or JSON-RPC -32602); the call succeeded: {}",
                                r.ex.label,
                                r.ex.summary()
                            ),
                        ),
                        (Some(c), _) => fail(
                            &mut out,
                            i,
                            format!(
                                "{}: arguments that break the inputSchema must give isError: true or JSON-RPC -32602; got error {c}{}",
                                r.ex.label,
                                if c == -32603 { " (internal error: the server did not validate its input)" } else { "" }
                            ),
                        ),
                        (None, None) => fail(&mut out, i, format!("{}: no JSON-RPC answer: {}", r.ex.label, r.ex.summary())),
                    }
                }
            }
        }
        shown.extend(failed);
        // Show the calls that failed, or (when all is well) the judged ones.
        let pool: Vec<usize> =
            if shown.is_empty() { (0..calls.records.len()).filter(|i| check.relevant(&calls.records[*i])).collect() } else { shown };
        let picks: Vec<usize> = pool.iter().take(10).copied().collect();
        let mut exs: Vec<Exchange> =
            picks.iter().flat_map(|i| calls.records[*i].before.iter().chain([&calls.records[*i].ex]).cloned()).collect();
        // Said, never dropped silently: the rest are in the call log.
        if pool.len() > picks.len() {
            exs.push(Exchange::note(
                "calls not shown here",
                format!(
                    "{} of the {} calls this case judged are shown above; every tools/call of the run, whatever case sent it, is listed in report.json's call_log",
                    picks.len(),
                    pool.len()
                ),
            ));
        }
        exs.append(&mut out.exchanges);
        out.exchanges = exs;
        if let Some(n) = calls.note() {
            out.exchanges.push(n);
        }
        if let Some(first) = unanswered.first() {
            let more = if unanswered.len() > 1 { format!(" (and {} more calls)", unanswered.len() - 1) } else { String::new() };
            out.incomplete(&format!("a tool call got no answer: {first}{more}"));
        } else if let Some(p) = &calls.walk_problem {
            out.incomplete(&format!("the tools were called from a partial list: {p}"));
        }
        if judged == 0 && out.failures.is_empty() && !out.is_error() {
            out.set_na(check.nothing_judged(&calls));
        }
        out
    }
}
