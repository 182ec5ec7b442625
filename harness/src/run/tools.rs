//! The tool contract: the pagination walker (shared by every list method),
//! descriptor admission over the listed tools, and the safe calling policy
//! with the checks over what the calls return.

use super::actions::StepOut;
use super::expect::is_error_code;
use super::{Conn, Engine, Exchange, clip, log_frames};
use crate::checks::Weight;
use crate::checks::admission::{self, Policy, Rule};
use crate::checks::content::{self, Structured};
use crate::config::ToolConfig;
use crate::wire::{MODERN, brief, headerval};
use serde_json::{Map, Value, json};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

/// What the operator decided about the tool contract (config and flags).
#[derive(Debug, Clone)]
pub struct Contract {
    pub tools: BTreeMap<String, ToolConfig>,
    pub admission: Policy,
    /// A list that has not ended after this many pages fails.
    pub max_pages: usize,
    /// Call at most this many tools (each gets one valid and one invalid call).
    pub max_tools_called: usize,
    /// The Origin the server allows (HTTP); without it the Origin check is n/a.
    pub allowed_origin: Option<String>,
    /// Show `Mcp-Param-*` values as `[redacted]` in transcripts.
    pub redact_params: bool,
    /// completion/complete probes per argument (the empty value first).
    pub completion_probes: usize,
    /// A tool that answers input_required (`[input_required]`).
    pub input_tool: Option<super::mrtr::InputTool>,
    /// A tool whose call changes the tool set (`[subscriptions]`).
    pub listen_trigger: Option<super::mrtr::InputTool>,
    /// Identities to see the server through (`[roles.NAME]`).
    pub roles: Vec<super::roles::Role>,
}

impl Default for Contract {
    fn default() -> Self {
        Contract {
            tools: BTreeMap::new(),
            admission: Policy::default(),
            max_pages: 10_000,
            max_tools_called: 50,
            allowed_origin: None,
            redact_params: false,
            completion_probes: 4,
            input_tool: None,
            listen_trigger: None,
            roles: Vec::new(),
        }
    }
}

/// One page of a list walk.
#[derive(Debug, Clone)]
pub struct Page {
    pub cursor: Option<String>,
    pub result: Value,
    /// Index into `Walk::exchanges`.
    pub ex: usize,
}

#[derive(Debug, Clone, Default)]
pub struct Walk {
    pub method: String,
    pub key: String,
    pub items: Vec<Value>,
    /// The page each item came from.
    pub item_page: Vec<usize>,
    pub pages: Vec<Page>,
    pub exchanges: Vec<Exchange>,
    /// The list could not be walked to its end (a MUST of pagination).
    pub broken: Option<String>,
    /// No answer at all (timeout, crash): the verdict is `error`.
    pub error: Option<String>,
}

impl Walk {
    pub fn names(&self) -> Vec<String> {
        self.items.iter().enumerate().map(|(i, t)| admission::display_name(t, i)).collect()
    }

    /// What a case shows of the walk: the first pages, the pages named,
    /// and the last page; a note says how many there were in all.
    pub fn transcript(&self, pages: &[usize]) -> Vec<Exchange> {
        let mut idx: BTreeSet<usize> = (0..self.exchanges.len().min(3)).collect();
        for p in pages.iter().take(12) {
            if let Some(pg) = self.pages.get(*p) {
                idx.insert(pg.ex);
            }
        }
        if let Some(last) = self.exchanges.len().checked_sub(1) {
            idx.insert(last);
        }
        let mut out: Vec<Exchange> = idx.into_iter().map(|i| self.exchanges[i].clone()).collect();
        let cursors: Vec<String> = self.pages.iter().skip(1).take(8).map(|p| format!("{:?}", p.cursor.as_deref().unwrap_or(""))).collect();
        let more = if self.pages.len() > 9 { ", …" } else { "" };
        let mut note = format!(
            "{}: {} page(s), {} item(s); cursors sent back: [{}{more}]",
            self.method,
            self.pages.len(),
            self.items.len(),
            cursors.join(", ")
        );
        if out.len() < self.exchanges.len() {
            note.push_str(&format!("; {} of {} page exchanges are shown", out.len(), self.exchanges.len()));
        }
        out.push(Exchange { label: format!("{} walk", self.method), note: Some(note), ..Default::default() });
        out
    }
}

/// One tool call and why it was made.
#[derive(Debug, Clone)]
pub struct CallRecord {
    pub tool: String,
    pub kind: CallKind,
    pub output_schema: Option<Value>,
    pub ex: Exchange,
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
    pub skipped: Vec<String>,
    pub walk_problem: Option<String>,
}

impl Calls {
    fn note(&self) -> Option<Exchange> {
        if self.skipped.is_empty() {
            return None;
        }
        let shown: Vec<&String> = self.skipped.iter().take(20).collect();
        let more = if self.skipped.len() > 20 { format!("\n  … and {} more", self.skipped.len() - 20) } else { String::new() };
        Some(Exchange {
            label: "tools not called".into(),
            note: Some(format!("{}{more}", shown.iter().map(|s| format!("  - {s}")).collect::<Vec<_>>().join("\n"))),
            ..Default::default()
        })
    }
}

const BOGUS_CURSOR: &str = "mcpcert-cursor-never-issued-5f1c";
const BOGUS_TOOL: &str = "mcpcert-no-such-tool-5f1c";

impl Engine {
    /// Walk a list method to its end on `conn`: every cursor is sent back
    /// exactly as received (`""` included); only an absent `nextCursor`
    /// ends the list.
    pub(super) async fn walk_on(&mut self, conn: &mut Conn, rev: &str, method: &str, key: &str, case: &str) -> Walk {
        let mut w = Walk { method: method.into(), key: key.into(), ..Default::default() };
        let mut cursor: Option<String> = None;
        let mut sent_at: HashMap<String, usize> = HashMap::new();
        let max = self.cfg.contract.max_pages.max(1);
        loop {
            let n = w.pages.len();
            if n >= max {
                w.broken = Some(format!(
                    "{method} had not ended after {max} pages ({} items so far; the last nextCursor was {:?}): a list must end with a page that has no nextCursor (the limit is [pagination] max_pages / --max-pages)",
                    w.items.len(),
                    cursor.as_deref().unwrap_or("")
                ));
                break;
            }
            let p = cursor.as_ref().map(|c| json!({"cursor": c}));
            let body = self.body_for(rev, method, p);
            let label = if n == 0 {
                format!("{method} page 1")
            } else {
                format!("{method} page {} (cursor {:?})", n + 1, cursor.as_deref().unwrap_or(""))
            };
            let mut ex = self.exchange(conn, &label, rev, &body, &[], true).await;
            if let Some(st) = self.revs.get_mut(rev) {
                log_frames(st, case, &ex);
            }
            ex.logged = true;
            let ex_i = w.exchanges.len();
            let summary = ex.summary();
            let transport_err = ex.error.clone();
            let response = ex.response.take();
            // The items are copied out below; the page itself is kept light.
            w.exchanges.push(ex.lite());
            if let Some(e) = transport_err {
                w.error = Some(format!("{label}: {e}"));
                break;
            }
            // The page is taken apart, not copied: lists can be large.
            let Some(mut result) = response.and_then(|mut r| r.get_mut("result").map(Value::take)).filter(|r| r.is_object()) else {
                w.broken = Some(if n == 0 {
                    format!("{method} did not return a result: {summary}")
                } else {
                    format!("{label} was refused, although the server issued that cursor itself: {summary}")
                });
                break;
            };
            let items = match result.as_object_mut().and_then(|o| o.remove(key)) {
                Some(Value::Array(items)) => items,
                other => {
                    w.broken = Some(format!(
                        "{label}: `{key}` must be an array; got {}",
                        other.as_ref().map(brief).unwrap_or_else(|| "nothing".into())
                    ));
                    break;
                }
            };
            for it in items {
                w.items.push(it);
                w.item_page.push(n);
            }
            w.pages.push(Page { cursor: cursor.clone(), result: result.clone(), ex: ex_i });
            match result.get("nextCursor") {
                None => break,
                Some(Value::String(c)) => {
                    if let Some(first) = sent_at.get(c) {
                        let hint = if c.is_empty() {
                            " (an empty string is a cursor, not the end: the last page must leave nextCursor out)"
                        } else {
                            ""
                        };
                        w.broken = Some(format!(
                            "page {} handed out nextCursor {c:?} again (it was already followed to page {}): the cursors go round in a cycle and the list never ends{hint}",
                            n + 1,
                            first + 1
                        ));
                        break;
                    }
                    sent_at.insert(c.clone(), n + 1);
                    cursor = Some(c.clone());
                }
                Some(other) => {
                    w.broken = Some(format!(
                        "page {}: nextCursor must be a string (an empty string is a cursor too) or absent at the end; got {}",
                        n + 1,
                        brief(other)
                    ));
                    break;
                }
            }
        }
        w
    }

    /// A walk over the revision's main connection (not cached).
    pub(super) async fn walk_main(&mut self, rev: &str, method: &str, key: &str, case: &str) -> Result<Walk, String> {
        let Some(mut conn) = self.revs.get_mut(rev).and_then(|s| s.conn.take()) else {
            return Err(format!("no connection for {rev}"));
        };
        let mut w = self.walk_on(&mut conn, rev, method, key, case).await;
        if let Some(st) = self.revs.get_mut(rev) {
            st.conn = Some(conn);
            // What a fresh stdio process needs before these lines (the handshake).
            for ex in w.exchanges.iter_mut() {
                ex.preamble = st.preamble.clone();
            }
        }
        Ok(w)
    }

    /// The `tools/list` walk of this revision, made once and shared.
    pub(super) async fn tools_walk(&mut self, rev: &str, case: &str) -> Result<Arc<Walk>, String> {
        if let Some(w) = self.revs.get(rev).and_then(|s| s.tools_walk.clone()) {
            return Ok(w);
        }
        let w = Arc::new(self.walk_main(rev, "tools/list", "tools", case).await?);
        if let Some(st) = self.revs.get_mut(rev) {
            st.tools_walk = Some(w.clone());
        }
        Ok(w)
    }

    /// The shared walk when it lists tools; otherwise how the case ends
    /// (error, or n/a when the server lists none).
    async fn listed_tools(&mut self, rev: &str, case: &str) -> Result<Arc<Walk>, StepOut> {
        let w = self.tools_walk(rev, case).await.map_err(|e| StepOut { error: Some(e), ..Default::default() })?;
        match no_tools(&w) {
            Some(na) => Err(StepOut { na: Some(na), ..Default::default() }),
            None => Ok(w),
        }
    }

    /// Admission verdicts for the shared walk's tools, judged once per
    /// revision (a list can hold thousands of tools).
    fn tool_verdicts(&mut self, rev: &str, w: &Walk) -> Arc<Vec<admission::ToolVerdict>> {
        if let Some(v) = self.revs.get(rev).and_then(|s| s.tool_verdicts.clone()) {
            return v;
        }
        let v = Arc::new(admission::admit_all(&w.items, rev, &self.cfg.contract.admission));
        if let Some(st) = self.revs.get_mut(rev) {
            st.tool_verdicts = Some(v.clone());
        }
        v
    }

    pub(super) async fn tools_action(&mut self, case: &crate::suite::Case, name: &str, with: Option<&Value>) -> StepOut {
        let rev = case.revision.clone();
        let arg = |k: &str| with.and_then(|w| w.get(k)).and_then(|v| v.as_str()).map(String::from);
        match name {
            "tools_walk" => self.act_tools_walk(&rev, &case.id).await,
            "list_walk" => {
                let (Some(m), Some(k)) = (arg("method"), arg("key")) else {
                    return StepOut { error: Some("suite problem: list_walk needs `with: {method, key}`".into()), ..Default::default() };
                };
                self.act_list_walk(&rev, &m, &k, &case.id).await
            }
            "tools_cache_hints" => self.act_tools_cache_hints(&rev, &case.id).await,
            "tools_unique_names" => self.act_unique_names(&rev, &case.id).await,
            "tools_invalid_cursor" => self.act_invalid_cursor(&rev).await,
            "tools_order_stable" => self.act_order_stable(&rev, &case.id).await,
            "tools_same_on_fresh" => self.act_same_on_fresh(&rev, &case.id).await,
            "tools_admission" => {
                let Some(r) = arg("rule") else {
                    return StepOut { error: Some("suite problem: tools_admission needs `with: {rule}`".into()), ..Default::default() };
                };
                self.act_admission(&rev, &r, &case.id).await
            }
            "tool_results" => {
                let Some(c) = arg("check") else {
                    return StepOut { error: Some("suite problem: tool_results needs `with: {check}`".into()), ..Default::default() };
                };
                self.act_tool_results(&rev, &c, &case.id).await
            }
            other => StepOut { error: Some(format!("unknown action `{other}`")), ..Default::default() },
        }
    }

    async fn act_tools_walk(&mut self, rev: &str, case: &str) -> StepOut {
        let mut out = StepOut::default();
        let w = match self.tools_walk(rev, case).await {
            Ok(w) => w,
            Err(e) => return StepOut { error: Some(e), ..Default::default() },
        };
        out.exchanges = w.transcript(&[]);
        if let Some(e) = &w.error {
            out.error = Some(e.clone());
        } else if let Some(b) = &w.broken {
            out.failures.push(b.clone());
        }
        out
    }

    async fn act_list_walk(&mut self, rev: &str, method: &str, key: &str, case: &str) -> StepOut {
        let mut out = StepOut::default();
        let w = match self.walk_main(rev, method, key, case).await {
            Ok(w) => w,
            Err(e) => return StepOut { error: Some(e), ..Default::default() },
        };
        out.exchanges = w.transcript(&[]);
        if let Some(e) = &w.error {
            out.error = Some(e.clone());
            return out;
        }
        if let Some(b) = &w.broken {
            out.failures.push(b.clone());
        }
        if rev == MODERN {
            out.failures.extend(cache_hint_problems(&w));
        }
        out
    }

    async fn act_tools_cache_hints(&mut self, rev: &str, case: &str) -> StepOut {
        let mut out = StepOut::default();
        let w = match self.tools_walk(rev, case).await {
            Ok(w) => w,
            Err(e) => return StepOut { error: Some(e), ..Default::default() },
        };
        out.exchanges = w.transcript(&(0..w.pages.len()).collect::<Vec<_>>());
        if w.pages.is_empty() {
            out.error = Some(format!("no tools/list page came back: {}", w.error.clone().or(w.broken.clone()).unwrap_or_default()));
            return out;
        }
        out.failures.extend(cache_hint_problems(&w));
        out
    }

    async fn act_unique_names(&mut self, rev: &str, case: &str) -> StepOut {
        let mut out = StepOut::default();
        let w = match self.listed_tools(rev, case).await {
            Ok(w) => w,
            Err(stop) => return stop,
        };
        let mut first: HashMap<String, usize> = HashMap::new();
        let mut dups = Vec::new();
        let mut pages = Vec::new();
        for (i, n) in w.names().into_iter().enumerate() {
            match first.get(&n) {
                Some(j) => {
                    dups.push(format!("`{n}` (page {} and page {})", w.item_page[*j] + 1, w.item_page[i] + 1));
                    pages.push(w.item_page[i]);
                }
                None => {
                    first.insert(n, i);
                }
            }
        }
        out.exchanges = w.transcript(&pages);
        if !dups.is_empty() {
            out.failures.push(format!("tool names should be unique within a server; listed more than once: {}", dups.join(", ")));
        }
        out
    }

    async fn act_invalid_cursor(&mut self, rev: &str) -> StepOut {
        let mut out = StepOut::default();
        let body = self.body_for(rev, "tools/list", Some(json!({"cursor": BOGUS_CURSOR})));
        let ex = match self.on_main(rev, "tools/list with a cursor the server never issued", &body).await {
            Ok(e) => e,
            Err(e) => return StepOut { error: Some(e), ..Default::default() },
        };
        if let Some(e) = &ex.error {
            out.error = Some(format!("tools/list with an unknown cursor: {e}"));
        } else if !is_error_code(ex.response.as_ref(), -32602) {
            out.failures.push(format!(
                "a cursor the server never issued ({BOGUS_CURSOR:?}) should get JSON-RPC error -32602 (invalid params); got {}",
                ex.summary()
            ));
        }
        out.exchanges.push(ex);
        out
    }

    async fn act_order_stable(&mut self, rev: &str, case: &str) -> StepOut {
        let mut out = StepOut::default();
        let first = match self.listed_tools(rev, case).await {
            Ok(w) => w,
            Err(stop) => return stop,
        };
        let second = match self.walk_main(rev, "tools/list", "tools", case).await {
            Ok(w) => w,
            Err(e) => return StepOut { error: Some(e), ..Default::default() },
        };
        out.exchanges = second.transcript(&[]);
        if let Some(e) = &second.error {
            out.error = Some(format!("second walk: {e}"));
            return out;
        }
        let (a, b) = (first.names(), second.names());
        if a != b {
            let at = a.iter().zip(b.iter()).position(|(x, y)| x != y).unwrap_or(a.len().min(b.len()));
            out.failures.push(format!(
                "two tools/list walks in a row, with nothing changed, should list tools in the same order; they first differ at position {at}: {:?} vs {:?}\n  first:  {}\n  second: {}",
                a.get(at).map(String::as_str).unwrap_or("(end)"),
                b.get(at).map(String::as_str).unwrap_or("(end)"),
                clip(&a.join(", "), 300),
                clip(&b.join(", "), 300)
            ));
        }
        out
    }

    async fn act_same_on_fresh(&mut self, rev: &str, case: &str) -> StepOut {
        let mut out = StepOut::default();
        let first = match self.listed_tools(rev, case).await {
            Ok(w) => w,
            Err(stop) => return stop,
        };
        let (mut conn, _, mut pre) = match self.fresh_conn(rev, true).await {
            Ok(x) => x,
            Err(e) => {
                return StepOut {
                    error: Some(format!("could not open a fresh {}: {e}", self.cfg.target.transport_noun())),
                    ..Default::default()
                };
            }
        };
        let mut w = self.walk_on(&mut conn, rev, "tools/list", "tools", case).await;
        if let Conn::Stdio(t) = &mut conn {
            t.shutdown().await;
        }
        for ex in w.exchanges.iter_mut() {
            ex.fresh = true;
        }
        if let Some(first_ex) = w.exchanges.first_mut() {
            first_ex.preamble = pre.iter().filter_map(|e| e.sent.clone()).collect();
        }
        out.exchanges.append(&mut pre);
        out.exchanges.extend(w.transcript(&[]));
        if let Some(e) = &w.error {
            out.error = Some(format!("walk on a fresh {}: {e}", self.cfg.target.transport_noun()));
            return out;
        }
        let a: BTreeSet<String> = first.names().into_iter().collect();
        let b: BTreeSet<String> = w.names().into_iter().collect();
        if a != b {
            let only_a: Vec<&String> = a.difference(&b).take(10).collect();
            let only_b: Vec<&String> = b.difference(&a).take(10).collect();
            let mut msg = format!(
                "the tool set must not depend on the {noun}: a walk on a fresh {noun} listed {} tools, the walk on the main {noun} {}",
                b.len(),
                a.len(),
                noun = self.cfg.target.transport_noun()
            );
            if !only_a.is_empty() {
                msg.push_str(&format!("; only on the main one: {only_a:?}"));
            }
            if !only_b.is_empty() {
                msg.push_str(&format!("; only on the fresh one: {only_b:?}"));
            }
            if let Some(bk) = &w.broken {
                msg.push_str(&format!("; the fresh walk did not finish: {bk}"));
            }
            out.failures.push(msg);
        }
        out
    }

    async fn act_admission(&mut self, rev: &str, rule: &str, case: &str) -> StepOut {
        let mut out = StepOut::default();
        let w = match self.listed_tools(rev, case).await {
            Ok(w) => w,
            Err(stop) => return stop,
        };
        let rules: Vec<Rule> = match rule {
            "name" => vec![Rule::Name],
            "input-schema" => vec![Rule::InputSchema],
            "output-schema" => vec![Rule::OutputSchema],
            "x-mcp-header" => vec![Rule::XMcpHeader],
            "x-mcp-header-secret" => vec![Rule::XMcpHeaderSecret],
            "annotations" => vec![Rule::Shape, Rule::Annotations],
            other => return StepOut { error: Some(format!("suite problem: unknown admission rule `{other}`")), ..Default::default() },
        };
        // Rules about optional features do not apply when no tool uses them.
        let uses = |pred: &dyn Fn(&Value) -> bool| w.items.iter().any(pred);
        let na = match rule {
            "output-schema" if !uses(&|t| t.get("outputSchema").is_some()) => Some("no tool declares an outputSchema"),
            "x-mcp-header" if !uses(&|t| t.to_string().contains("\"x-mcp-header\"")) => Some("no tool uses x-mcp-header"),
            "x-mcp-header-secret" if !uses(&|t| t.get("inputSchema").is_some_and(|s| !admission::header_walk(s).headers.is_empty())) => {
                Some("no tool mirrors a parameter into a header (x-mcp-header)")
            }
            _ => None,
        };
        if let Some(why) = na {
            out.na = Some(format!("{why} ({} tools listed)", w.items.len()));
            return out;
        }
        let verdicts = self.tool_verdicts(rev, &w);
        let mut lines = Vec::new();
        let mut notes = Vec::new();
        let mut pages = Vec::new();
        let mut bad_tools = 0;
        for v in verdicts.iter() {
            let mine: Vec<&admission::Finding> = v.findings.iter().filter(|f| rules.contains(&f.rule)).collect();
            let mut counted = false;
            for f in mine {
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
        out.exchanges = w.transcript(&pages);
        let mut note = format!("{} tools judged", w.items.len());
        if let Some(b) = &w.broken {
            note.push_str(&format!(" (the walk stopped early: {b})"));
        }
        if !notes.is_empty() {
            note.push_str(&format!("; not judged:\n{}", notes.join("\n")));
        }
        out.exchanges.push(Exchange { label: format!("admission: {rule}"), note: Some(note), ..Default::default() });
        if bad_tools > 0 {
            out.failures.push(format!(
                "{bad_tools} of {} tools break this rule (each tool is judged on its own):\n{}",
                w.items.len(),
                lines.join("\n")
            ));
        }
        out
    }

    /// Whether the operator lets mcpcert call this tool, and why not.
    pub(super) fn call_allowed(&self, tool: &Value, name: &str) -> Result<(), String> {
        match self.cfg.contract.tools.get(name).and_then(|c| c.call) {
            Some(true) => Ok(()),
            Some(false) => Err("the config says call = false".into()),
            None => {
                if tool.pointer("/annotations/readOnlyHint") == Some(&Value::Bool(true)) {
                    Ok(())
                } else {
                    Err("not marked readOnlyHint: true and not allowed in the config ([tools.NAME] call = true)".into())
                }
            }
        }
    }

    /// Every allowed tool called once with valid arguments, once with
    /// arguments that break its inputSchema, and once with configured
    /// error arguments; made once per revision and shared.
    pub(super) async fn tool_calls(&mut self, rev: &str, case: &str) -> Result<Arc<Calls>, String> {
        if let Some(c) = self.revs.get(rev).and_then(|s| s.calls.clone()) {
            return Ok(c);
        }
        let w = self.tools_walk(rev, case).await?;
        let verdicts = self.tool_verdicts(rev, &w);
        let mut calls = Calls { walk_problem: w.error.clone().or(w.broken.clone()), ..Default::default() };
        let mut called = 0usize;
        for (i, tool) in w.items.iter().enumerate() {
            let name = match tool.get("name").and_then(|n| n.as_str()) {
                Some(n) => n.to_string(),
                None => continue,
            };
            if let Err(why) = self.call_allowed(tool, &name) {
                calls.skipped.push(format!("{name}: {why}"));
                continue;
            }
            if called >= self.cfg.contract.max_tools_called {
                calls
                    .skipped
                    .push(format!("{name}: over the limit of {} tools called ([calls] max_tools)", self.cfg.contract.max_tools_called));
                continue;
            }
            let Some(schema) = tool.get("inputSchema").filter(|s| s.is_object()) else {
                calls.skipped.push(format!("{name}: no usable inputSchema"));
                continue;
            };
            if verdicts[i].findings.iter().any(|f| f.rule == Rule::XMcpHeader && f.weight.rejects()) {
                calls.skipped.push(format!("{name}: a client must drop it (bad x-mcp-header), so it is not called"));
                continue;
            }
            called += 1;
            let conf = self.cfg.contract.tools.get(&name).cloned().unwrap_or_default();
            let output_schema = tool.get("outputSchema").cloned();
            let valid = match conf.arguments.clone() {
                Some(a) => Some(a),
                None => match synth_valid(schema) {
                    Some(a) => Some(a),
                    None => {
                        calls.skipped.push(format!("{name}: no valid arguments could be made from its inputSchema; name them in the config ([tools.{name}] arguments)"));
                        None
                    }
                },
            };
            let invalid = conf.invalid_arguments.clone().or_else(|| valid.as_ref().and_then(|v| synth_invalid(schema, v)));
            let plan = [(CallKind::Valid, valid), (CallKind::Invalid, invalid), (CallKind::ErrorArgs, conf.error_arguments.clone())];
            for (kind, args) in plan {
                let Some(args) = args else { continue };
                let label = match kind {
                    CallKind::Valid => format!("tools/call {name} (valid arguments)"),
                    CallKind::Invalid => format!("tools/call {name} (arguments that break its inputSchema)"),
                    CallKind::ErrorArgs => format!("tools/call {name} (configured error_arguments)"),
                };
                let ex = self.call_tool(rev, &label, &name, schema, &args, case).await?;
                let stop = ex.error.is_some();
                calls.records.push(CallRecord { tool: name.clone(), kind, output_schema: output_schema.clone(), ex });
                if stop {
                    break;
                }
            }
        }
        let calls = Arc::new(calls);
        if let Some(st) = self.revs.get_mut(rev) {
            st.calls = Some(calls.clone());
        }
        Ok(calls)
    }

    /// One tools/call on the main connection, with the `Mcp-Param-*`
    /// headers its inputSchema asks for (HTTP, 2026-07-28).
    async fn call_tool(
        &mut self,
        rev: &str,
        label: &str,
        name: &str,
        schema: &Value,
        args: &Value,
        case: &str,
    ) -> Result<Exchange, String> {
        let body = self.body_for(rev, "tools/call", Some(json!({"name": name, "arguments": args})));
        let overrides: Vec<super::HeaderEdit> = if rev == MODERN {
            param_headers(schema, args).into_iter().map(|(k, v)| super::HeaderEdit::Set(k, v)).collect()
        } else {
            Vec::new()
        };
        let Some(mut conn) = self.revs.get_mut(rev).and_then(|s| s.conn.take()) else {
            return Err(format!("no connection for {rev}"));
        };
        let mut ex = self.exchange(&mut conn, label, rev, &body, &overrides, true).await;
        ex.preamble = self.revs.get(rev).map(|s| s.preamble.clone()).unwrap_or_default();
        if let Some(st) = self.revs.get_mut(rev) {
            st.conn = Some(conn);
            log_frames(st, case, &ex);
        }
        ex.logged = true;
        Ok(ex)
    }

    async fn act_tool_results(&mut self, rev: &str, check: &str, case: &str) -> StepOut {
        let mut out = StepOut::default();
        let calls = match self.tool_calls(rev, case).await {
            Ok(c) => c,
            Err(e) => return StepOut { error: Some(e), ..Default::default() },
        };
        if calls.records.is_empty() {
            let mut why = "no tool may be called: mcpcert calls only tools marked readOnlyHint: true or allowed in the target config ([tools.NAME] call = true)".to_string();
            if let Some(p) = &calls.walk_problem {
                why.push_str(&format!("; the tools/list walk also had a problem: {p}"));
            }
            if !calls.skipped.is_empty() {
                why.push_str(&format!("; {} tool(s) listed, none callable", calls.skipped.len()));
            }
            out.na = Some(why);
            return out;
        }
        let result_of = |r: &CallRecord| r.ex.response.as_ref().and_then(|x| x.get("result")).cloned();
        let is_error_result = |res: &Value| res.get("isError") == Some(&Value::Bool(true));
        let mut shown: Vec<usize> = Vec::new();
        let mut failed: Vec<usize> = Vec::new();
        let mut fail = |out: &mut StepOut, i: usize, msg: String| {
            if !failed.contains(&i) {
                failed.push(i);
            }
            if out.failures.len() < 20 {
                out.failures.push(msg);
            }
        };
        let mut judged = 0usize;
        for (i, r) in calls.records.iter().enumerate() {
            if let Some(e) = &r.ex.error {
                if check == "invalid-arguments" && r.kind == CallKind::Invalid || check == "content" {
                    let hint = if matches!(e, crate::target::TransportError::Timeout(_)) {
                        format!(" (a slow tool? raise --request-timeout-ms, or leave it out with [tools.{}] call = false)", r.tool)
                    } else {
                        String::new()
                    };
                    out.error.get_or_insert(format!("{}: {e}{hint}", r.ex.label));
                    shown.push(i);
                }
                continue;
            }
            let res = result_of(r);
            match check {
                "content" => {
                    let Some(res) = res else { continue };
                    if res.get("resultType").and_then(|t| t.as_str()) == Some("input_required") {
                        continue;
                    }
                    judged += 1;
                    for p in content::content_problems(&res) {
                        fail(&mut out, i, format!("{}: {p}", r.ex.label));
                    }
                }
                "structured" => {
                    let (Some(res), Some(os)) = (res, &r.output_schema) else { continue };
                    if r.kind != CallKind::Valid || is_error_result(&res) {
                        continue;
                    }
                    judged += 1;
                    match content::judge_structured(&res, os, rev) {
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
                            out.exchanges.push(Exchange {
                                label: format!("{}: not judged", r.tool),
                                note: Some(format!("outputSchema could not be compiled: {e}")),
                                ..Default::default()
                            });
                        }
                    }
                }
                "text-mirror" => {
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
                "error-conforms" | "error-structured" => {
                    let (Some(res), Some(os)) = (res, &r.output_schema) else { continue };
                    if !is_error_result(&res) {
                        continue;
                    }
                    match (check, content::judge_structured(&res, os, rev)) {
                        ("error-conforms", Structured::Breaks(e)) => {
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
                        // Absent structuredContent is the POLICY case's business.
                        ("error-conforms", Structured::Conforms | Structured::Missing) => judged += 1,
                        ("error-structured", Structured::Missing) => {
                            judged += 1;
                            fail(
                                &mut out,
                                i,
                                format!(
                                    "{}: the tool publishes an outputSchema, but its isError result has no structuredContent (policy: error results keep the published contract)",
                                    r.ex.label
                                ),
                            );
                        }
                        ("error-structured", Structured::Conforms | Structured::Breaks(_)) => judged += 1,
                        _ => {}
                    }
                }
                "invalid-arguments" => {
                    if r.kind != CallKind::Invalid {
                        continue;
                    }
                    judged += 1;
                    let reply = r.ex.response.as_ref();
                    let code = reply.and_then(|x| x.pointer("/error/code")).and_then(|c| c.as_i64());
                    match (code, res) {
                        (Some(-32602), _) => {}
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
                other => {
                    out.error = Some(format!("suite problem: unknown tool_results check `{other}`"));
                    return out;
                }
            }
        }
        shown.extend(failed);
        // Show the calls that failed, or (when all is well) the judged ones.
        let picks: Vec<usize> = if shown.is_empty() {
            (0..calls.records.len()).filter(|i| relevant(check, &calls.records[*i])).take(10).collect()
        } else {
            shown.into_iter().take(10).collect()
        };
        let mut exs: Vec<Exchange> = picks.iter().map(|i| calls.records[*i].ex.clone()).collect();
        exs.append(&mut out.exchanges);
        out.exchanges = exs;
        if let Some(n) = calls.note() {
            out.exchanges.push(n);
        }
        if judged == 0 && out.failures.is_empty() && out.error.is_none() {
            out.na = Some(match check {
                "structured" => {
                    if calls.records.iter().any(|r| r.output_schema.is_some() && r.kind == CallKind::Valid) {
                        "every call of a tool with an outputSchema returned isError: true, so no successful result could be judged (mcpcert made up the arguments; give real ones with [tools.NAME] arguments)".into()
                    } else {
                        "no called tool declares an outputSchema".into()
                    }
                }
                "text-mirror" => "no successful call returned structuredContent".into(),
                "error-conforms" => "no call of a tool with an outputSchema returned an isError result (configure [tools.NAME] error_arguments to drive one)".into(),
                "error-structured" => "no call of a tool with an outputSchema returned an isError result (configure [tools.NAME] error_arguments to drive one)".into(),
                "invalid-arguments" => "no callable tool has an inputSchema that mcpcert can break safely (a required property or a typed one); configure [tools.NAME] invalid_arguments".into(),
                _ => "no tool call returned a result".into(),
            });
        }
        out
    }
}

fn relevant(check: &str, r: &CallRecord) -> bool {
    match check {
        "invalid-arguments" => r.kind == CallKind::Invalid,
        "structured" | "text-mirror" => r.kind == CallKind::Valid && r.output_schema.is_some(),
        "error-conforms" | "error-structured" => r.output_schema.is_some() && r.kind != CallKind::Valid,
        _ => true,
    }
}

fn no_tools(w: &Walk) -> Option<String> {
    if w.items.is_empty() && w.error.is_none() && w.broken.is_none() { Some("the server lists no tools".into()) } else { None }
}

/// `ttlMs` (integer >= 0) and `cacheScope` on every page; one scope for all.
pub fn cache_hint_problems(w: &Walk) -> Vec<String> {
    let mut out = Vec::new();
    let mut scopes: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for (i, p) in w.pages.iter().enumerate() {
        let page = i + 1;
        match p.result.get("ttlMs") {
            None => out.push(format!("{} page {page}: ttlMs is missing (required: an integer >= 0)", w.method)),
            Some(v) => {
                // 60000.0 is an integer in JSON Schema's sense too.
                let ok = v.as_u64().is_some() || (v.is_f64() && v.as_f64().is_some_and(|f| f >= 0.0 && f.fract() == 0.0));
                if !ok {
                    out.push(format!("{} page {page}: ttlMs must be an integer >= 0; got {}", w.method, brief(v)));
                }
            }
        }
        match p.result.get("cacheScope") {
            Some(Value::String(s)) if s == "public" || s == "private" => scopes.entry(s.clone()).or_default().push(page),
            Some(v) => out.push(format!("{} page {page}: cacheScope must be \"public\" or \"private\"; got {}", w.method, brief(v))),
            None => out.push(format!("{} page {page}: cacheScope is missing (required)", w.method)),
        }
    }
    if scopes.len() > 1 {
        let parts: Vec<String> = scopes.iter().map(|(s, pages)| format!("{s:?} on page(s) {pages:?}")).collect();
        out.push(format!("all pages of one {} walk must share one cacheScope; got {}", w.method, parts.join(" and ")));
    }
    out
}

/// `Mcp-Param-{Name}` headers for a call, from the tool's well-placed
/// `x-mcp-header` annotations and the argument values (absent or null
/// values get no header; numbers outside the safe range are left out).
pub fn param_headers(schema: &Value, args: &Value) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for h in admission::header_walk(schema).headers {
        let Some(v) = args.pointer(&h.pointer) else { continue };
        let text = match v {
            Value::String(s) => headerval::encode_str(s),
            Value::Bool(b) => headerval::encode_bool(*b).to_string(),
            Value::Number(n) => match n.as_i64().map(headerval::encode_int) {
                Some(Ok(s)) => s,
                _ => continue,
            },
            _ => continue,
        };
        out.push((format!("Mcp-Param-{}", h.value), text));
    }
    out
}

/// A minimal argument object that satisfies the inputSchema: required
/// properties only, each with the simplest value its schema allows.
/// Checked against the schema; None when no such object is found.
pub fn synth_valid(schema: &Value) -> Option<Value> {
    let v = synth(schema, schema, 0)?;
    let validator = jsonschema::options().build(schema).ok()?;
    validator.is_valid(&v).then_some(v)
}

fn synth(s: &Value, root: &Value, depth: usize) -> Option<Value> {
    if depth > 16 {
        return None;
    }
    let m = match s {
        Value::Bool(true) => return Some(json!({})),
        Value::Object(m) => m,
        _ => return None,
    };
    if let Some(c) = m.get("const") {
        return Some(c.clone());
    }
    if let Some(e) = m.get("enum").and_then(|e| e.as_array()).and_then(|a| a.first()) {
        return Some(e.clone());
    }
    if let Some(d) = m.get("default") {
        return Some(d.clone());
    }
    if let Some(e) = m.get("examples").and_then(|e| e.as_array()).and_then(|a| a.first()) {
        return Some(e.clone());
    }
    if let Some(r) = m.get("$ref").and_then(|r| r.as_str()) {
        let target = r.strip_prefix('#').and_then(|p| root.pointer(p))?;
        return synth(target, root, depth + 1);
    }
    for k in ["anyOf", "oneOf"] {
        if let Some(list) = m.get(k).and_then(|l| l.as_array()) {
            return list.iter().find_map(|x| synth(x, root, depth + 1));
        }
    }
    let ty = match m.get("type") {
        Some(Value::String(t)) => t.clone(),
        Some(Value::Array(a)) => a.iter().filter_map(|x| x.as_str()).find(|t| *t != "null").unwrap_or("null").to_string(),
        _ if m.contains_key("properties") => "object".into(),
        _ => return None,
    };
    Some(match ty.as_str() {
        "object" => {
            let mut o = Map::new();
            let props = m.get("properties").and_then(|p| p.as_object());
            for r in m.get("required").and_then(|r| r.as_array()).into_iter().flatten() {
                let name = r.as_str()?;
                let sub = props.and_then(|p| p.get(name)).cloned().unwrap_or(json!({"type": "string"}));
                o.insert(name.to_string(), synth(&sub, root, depth + 1)?);
            }
            Value::Object(o)
        }
        "string" => {
            let min = m.get("minLength").and_then(|x| x.as_u64()).unwrap_or(0) as usize;
            let base = match m.get("format").and_then(|f| f.as_str()) {
                Some("date-time") => "2026-01-01T00:00:00Z".to_string(),
                Some("date") => "2026-01-01".to_string(),
                Some("uri") | Some("url") => "https://example.com/".to_string(),
                Some("email") => "mcpcert@example.com".to_string(),
                _ => "mcpcert".to_string(),
            };
            if base.len() >= min { Value::String(base) } else { Value::String("x".repeat(min)) }
        }
        "integer" | "number" => {
            let lo = m
                .get("minimum")
                .and_then(|x| x.as_f64())
                .or_else(|| m.get("exclusiveMinimum").and_then(|x| x.as_f64()).map(|x| x.floor() + 1.0));
            let hi = m.get("maximum").and_then(|x| x.as_f64());
            let mut v = lo.unwrap_or(1.0);
            if let Some(h) = hi {
                if v > h {
                    v = h;
                }
            }
            json!(v.ceil() as i64)
        }
        "boolean" => Value::Bool(false),
        "array" => {
            let n = m.get("minItems").and_then(|x| x.as_u64()).unwrap_or(0) as usize;
            let item = m.get("items").cloned().unwrap_or(json!({"type": "string"}));
            let mut a = Vec::new();
            for _ in 0..n {
                a.push(synth(&item, root, depth + 1)?);
            }
            Value::Array(a)
        }
        "null" => Value::Null,
        _ => return None,
    })
}

/// Arguments that break the inputSchema, derived from valid ones: a
/// required property left out, or else a typed property given a value of
/// another type. Checked to be invalid; None when neither works.
pub fn synth_invalid(schema: &Value, valid: &Value) -> Option<Value> {
    let validator = jsonschema::options().build(schema).ok()?;
    let obj = valid.as_object()?;
    if let Some(first) = schema.get("required").and_then(|r| r.as_array()).and_then(|r| r.first()).and_then(|r| r.as_str()) {
        let mut o = obj.clone();
        o.remove(first);
        let v = Value::Object(o);
        if !validator.is_valid(&v) {
            return Some(v);
        }
    }
    for (name, sub) in schema.get("properties").and_then(|p| p.as_object()).into_iter().flatten() {
        let wrong = match sub.get("type").and_then(|t| t.as_str()) {
            Some("string") => json!(12345),
            Some("integer") | Some("number") | Some("boolean") => json!("mcpcert-wrong-type"),
            Some("object") | Some("array") => json!("mcpcert-wrong-type"),
            _ => continue,
        };
        let mut o = obj.clone();
        o.insert(name.clone(), wrong);
        let v = Value::Object(o);
        if !validator.is_valid(&v) {
            return Some(v);
        }
    }
    None
}

pub const UNKNOWN_TOOL: &str = BOGUS_TOOL;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn valid_arguments_are_minimal_and_valid() {
        let s = json!({"type": "object", "properties": {"a": {"type": "integer", "minimum": 3}, "b": {"type": "string", "minLength": 10}, "c": {"type": "boolean"},
            "d": {"enum": ["x", "y"]}, "e": {"$ref": "#/$defs/E"}, "opt": {"type": "string"}}, "required": ["a", "b", "c", "d", "e"],
            "$defs": {"E": {"type": "array", "minItems": 1, "items": {"type": "number"}}}});
        let v = synth_valid(&s).unwrap();
        assert_eq!(v, json!({"a": 3, "b": "xxxxxxxxxx", "c": false, "d": "x", "e": [1]}));
        assert_eq!(synth_valid(&json!({"type": "object"})).unwrap(), json!({}));
        assert!(
            synth_valid(&json!({"type": "object", "properties": {"p": {"type": "string", "pattern": "^[0-9]+$"}}, "required": ["p"]}))
                .is_none()
        );
    }

    #[test]
    fn invalid_arguments_break_the_schema() {
        let s = json!({"type": "object", "properties": {"q": {"type": "integer"}}, "required": ["q"]});
        assert_eq!(synth_invalid(&s, &json!({"q": 1})).unwrap(), json!({}));
        let s = json!({"type": "object", "properties": {"q": {"type": "integer"}}});
        assert_eq!(synth_invalid(&s, &json!({})).unwrap(), json!({"q": "mcpcert-wrong-type"}));
        assert!(synth_invalid(&json!({"type": "object"}), &json!({})).is_none());
    }

    #[test]
    fn param_headers_follow_annotations() {
        let s = json!({"type": "object", "properties": {"region": {"type": "string", "x-mcp-header": "Region"}, "days": {"type": "integer", "x-mcp-header": "Days"},
            "f": {"type": "boolean", "x-mcp-header": "F"}, "n": {"type": "string", "x-mcp-header": "N"}}});
        let h = param_headers(&s, &json!({"region": "Zürich", "days": 3, "f": true, "n": null}));
        assert_eq!(
            h,
            vec![
                ("Mcp-Param-Region".to_string(), headerval::encode_str("Zürich")),
                ("Mcp-Param-Days".into(), "3".into()),
                ("Mcp-Param-F".into(), "true".into())
            ]
        );
    }

    fn walk_of(pages: Vec<Value>) -> Walk {
        let mut w = Walk { method: "tools/list".into(), key: "tools".into(), ..Default::default() };
        for (i, p) in pages.into_iter().enumerate() {
            w.pages.push(Page { cursor: None, result: p, ex: i });
        }
        w
    }

    #[test]
    fn cache_hints() {
        assert!(
            cache_hint_problems(&walk_of(vec![json!({"ttlMs": 0, "cacheScope": "public"}), json!({"ttlMs": 5, "cacheScope": "public"})]))
                .is_empty()
        );
        assert_eq!(
            cache_hint_problems(&walk_of(vec![json!({"ttlMs": 0, "cacheScope": "public"}), json!({"ttlMs": 5, "cacheScope": "private"})]))
                .len(),
            1
        );
        assert_eq!(cache_hint_problems(&walk_of(vec![json!({"ttlMs": -1, "cacheScope": "public"})])).len(), 1);
        assert_eq!(cache_hint_problems(&walk_of(vec![json!({"ttlMs": 1.5, "cacheScope": "public"})])).len(), 1);
        assert_eq!(cache_hint_problems(&walk_of(vec![json!({"cacheScope": "shared"})])).len(), 2);
    }
}
