//! The pagination walker, shared by every list method: each cursor is sent
//! back exactly as received (`""` included); only an absent `nextCursor`
//! ends the list.

use super::Cx;
use super::judge::admission;
use crate::record::Exchange;
use crate::session::Connection;
use crate::session::Msg;
use crate::wire::brief;
use serde::Deserialize;
use serde_json::{Value, json};
use std::collections::{BTreeSet, HashMap};

/// The four paginated list methods.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
pub enum ListMethod {
    #[serde(rename = "tools/list")]
    Tools,
    #[serde(rename = "prompts/list")]
    Prompts,
    #[serde(rename = "resources/list")]
    Resources,
    #[serde(rename = "resources/templates/list")]
    Templates,
}

impl ListMethod {
    pub fn method(self) -> &'static str {
        match self {
            ListMethod::Tools => "tools/list",
            ListMethod::Prompts => "prompts/list",
            ListMethod::Resources => "resources/list",
            ListMethod::Templates => "resources/templates/list",
        }
    }
    /// The result member that holds the items.
    pub fn key(self) -> &'static str {
        match self {
            ListMethod::Tools => "tools",
            ListMethod::Prompts => "prompts",
            ListMethod::Resources => "resources",
            ListMethod::Templates => "resourceTemplates",
        }
    }
    /// The capability that offers it.
    pub fn capability(self) -> &'static str {
        match self {
            ListMethod::Tools => "tools",
            ListMethod::Prompts => "prompts",
            ListMethod::Resources | ListMethod::Templates => "resources",
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

/// How a walk ended.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum WalkEnd {
    /// A page without `nextCursor` ended the list.
    #[default]
    Complete,
    /// The list could not be walked to its end because the server broke a
    /// rule of pagination (a MUST): the items so far are partial.
    Broken(String),
    /// No usable answer at all (timeout, crash): the items so far are partial.
    Failed(String),
}

#[derive(Debug, Clone)]
pub struct Walk {
    pub list: ListMethod,
    /// Shared, not copied, with the contract and the cases that keep them.
    pub items: std::sync::Arc<Vec<Value>>,
    /// The page each item came from.
    pub item_page: Vec<usize>,
    pub pages: Vec<Page>,
    pub exchanges: Vec<Exchange>,
    pub end: WalkEnd,
    /// resources/templates/list answered -32601 (method not found): the
    /// server has no templates (what it answered). A server that declares
    /// resources need not have any.
    pub absent: Option<String>,
    /// The server cannot serve the list at all: its first page refused
    /// with the same internal error on the main connection and on a new
    /// one (`confirm_down`), said as one root cause.
    pub down: Option<String>,
}

impl Walk {
    fn new(list: ListMethod) -> Walk {
        Walk {
            list,
            items: Default::default(),
            item_page: Vec::new(),
            pages: Vec::new(),
            exchanges: Vec::new(),
            end: WalkEnd::Complete,
            absent: None,
            down: None,
        }
    }

    pub fn method(&self) -> &'static str {
        self.list.method()
    }

    /// The pagination rule the server broke, if it did.
    pub fn broken(&self) -> Option<&str> {
        match &self.end {
            WalkEnd::Broken(b) => Some(b),
            _ => None,
        }
    }

    /// Why the walk got no usable answer, if it did not.
    pub fn failed(&self) -> Option<&str> {
        match &self.end {
            WalkEnd::Failed(e) => Some(e),
            _ => None,
        }
    }

    /// Why the items are not the whole list, if they are not.
    pub fn partial(&self) -> Option<String> {
        if let Some(d) = &self.down {
            return Some(d.clone());
        }
        match &self.end {
            WalkEnd::Complete => None,
            WalkEnd::Broken(b) => Some(format!("the {} walk did not reach its end ({b})", self.method())),
            WalkEnd::Failed(e) => Some(format!("the {} walk got no answer ({e})", self.method())),
        }
    }

    pub fn names(&self) -> Vec<String> {
        self.items.iter().enumerate().map(|(i, t)| admission::display_name(t, i)).collect()
    }

    /// The page results, in order.
    pub fn page_results(&self) -> Vec<&Value> {
        self.pages.iter().map(|p| &p.result).collect()
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
            self.method(),
            self.pages.len(),
            self.items.len(),
            cursors.join(", ")
        );
        if out.len() < self.exchanges.len() {
            note.push_str(&format!("; {} of {} page exchanges are shown", out.len(), self.exchanges.len()));
        }
        out.push(Exchange::note(format!("{} walk", self.method()), note));
        out
    }
}

/// Walk `list` to its end on `conn`.
pub async fn walk_on(cx: &Cx<'_>, conn: &mut Connection, list: ListMethod) -> Walk {
    let method = list.method();
    let key = list.key();
    let mut w = Walk::new(list);
    let mut cursor: Option<String> = None;
    let mut sent_at: HashMap<String, usize> = HashMap::new();
    let max = cx.policy.max_pages.max(1);
    loop {
        let n = w.pages.len();
        if n >= max {
            w.end = WalkEnd::Broken(format!(
                "{method} had not ended after {max} pages ({} items so far; the last nextCursor was {:?}): a list must end with a page that has no nextCursor (the limit is [pagination] max_pages / --max-pages)",
                w.items.len(),
                cursor.as_deref().unwrap_or("")
            ));
            break;
        }
        let label = if n == 0 {
            format!("{method} page 1")
        } else {
            format!("{method} page {} (cursor {:?})", n + 1, cursor.as_deref().unwrap_or(""))
        };
        // A page refused as busy (HTTP 429/503 without a result) is asked
        // again, twice at most, after a pause: the walk is a fact other
        // cases judge, not a verdict on load (that is --load's).
        let mut tries = 0;
        let mut ex = loop {
            let body = cx.request(method, cursor.as_ref().map(|c| json!({"cursor": c})));
            let ex = cx.exchange(conn, &Msg::new(cx.rev, &label, &body)).await;
            let busy = ex.refused_as_busy();
            if !busy || tries == 2 {
                break ex;
            }
            tries += 1;
            w.exchanges.push(ex.lite());
            tokio::time::sleep(std::time::Duration::from_millis(300 * tries)).await;
        };
        let ex_i = w.exchanges.len();
        let summary = ex.summary();
        let transport_err = ex.error.clone();
        let not_found = ex.error_code() == Some(-32601);
        let response = ex.response.take();
        // The items are copied out below; the page itself is kept light.
        w.exchanges.push(ex.lite());
        if let Some(e) = transport_err {
            w.end = WalkEnd::Failed(format!("{label}: {e}"));
            break;
        }
        // The page is taken apart, not copied: lists can be large.
        let Some(mut result) = response.and_then(|mut r| r.get_mut("result").map(Value::take)).filter(|r| r.is_object()) else {
            if n == 0 && not_found && list == ListMethod::Templates {
                w.absent = Some(format!("{method} answered -32601 (method not found): the server has no resource templates ({summary})"));
                break;
            }
            w.end = WalkEnd::Broken(if n == 0 {
                format!("{method} did not return a result: {summary}")
            } else {
                format!("{label} was refused, although the server issued that cursor itself: {summary}")
            });
            break;
        };
        let items = match result.as_object_mut().and_then(|o| o.remove(key)) {
            Some(Value::Array(items)) => items,
            other => {
                w.end = WalkEnd::Broken(format!(
                    "{label}: `{key}` must be an array; got {}",
                    other.as_ref().map(brief).unwrap_or_else(|| "nothing".into())
                ));
                break;
            }
        };
        w.item_page.extend(std::iter::repeat_n(n, items.len()));
        std::sync::Arc::make_mut(&mut w.items).extend(items);
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
                    w.end = WalkEnd::Broken(format!(
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
                w.end = WalkEnd::Broken(format!(
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

/// A list walked on a new connection or process, its first page the first
/// request there (no `server/discover` before it): what `cold-request` and
/// `tools/list-same-on-fresh-connection` judge, on one process (stdio: a
/// start each would cost seconds on a Python or Node server).
pub struct ColdWalk {
    /// The list's method (tools/list when tools are advertised).
    pub method: &'static str,
    /// The first page's exchange: the cold request (its parsed answer
    /// let go, as every page's; `served` says whether it gave a page).
    pub first: Exchange,
    /// Whether the cold request gave a page of the list.
    pub served: bool,
    /// What a case shows of the walk (from the cold request on, or, when
    /// the server refused it, begun again after a `server/discover` on the
    /// same process, so that the tool set can still be compared; the
    /// refusal is cold-request's alone), after what came before it.
    pub transcript: Vec<Exchange>,
    /// The names of the items the walk listed: only the names are kept for
    /// the run (a second full list beside the shared walk would double the
    /// memory of a 10,000-tool run).
    pub names: Vec<String>,
    /// Why the walk got no usable answer, or did not reach its end.
    pub failed: Option<String>,
    pub broken: Option<String>,
}

/// The JSON-RPC error an exchange was answered with, parsed again from
/// the frames it kept (pages are kept light).
pub fn refusal(ex: &Exchange) -> Option<Value> {
    if let Some(e) = ex.response.as_ref().and_then(|r| r.get("error")) {
        return Some(e.clone());
    }
    ex.frames
        .iter()
        .rev()
        .find_map(|f| serde_json::from_str::<Value>(&f.raw).ok().filter(|v| v.get("id").is_some()))
        .and_then(|v| v.get("error").cloned())
        .or_else(|| ex.body.as_deref().and_then(|b| serde_json::from_str::<Value>(b).ok()).and_then(|v| v.get("error").cloned()))
}

/// An internal error: -32603, or one of the implementation's own server
/// errors (-32000 to -32099). What such an answer says is about the
/// server's inside (a backend it cannot reach), not about a protocol rule.
pub fn internal(err: &Value) -> bool {
    err.get("code").and_then(Value::as_i64).is_some_and(|c| c == -32603 || (-32099..=-32000).contains(&c))
}

/// A walk refused at its first page with an internal error: the same list
/// request, the first line of a new connection or process; the same error
/// there too means the server cannot serve the list at all — its
/// environment (a backend it cannot reach), not a protocol rule — and the
/// sentence that says so once. Costs a start only when the walk failed so.
pub async fn confirm_down(cx: &Cx<'_>, w: &Walk) -> Option<String> {
    if !w.pages.is_empty() || w.failed().is_some() || w.absent.is_some() {
        return None;
    }
    let method = w.method();
    let main = w.exchanges.iter().rev().find(|e| e.rpc_method.as_deref() == Some(method)).and_then(refusal)?;
    if !internal(&main) {
        return None;
    }
    let mut conn = cx.session.open().ok()?;
    let body = cx.request(method, None);
    let label = format!("{method}, the first request on a new {} (is the refusal the same there?)", cx.transport().noun());
    let ex = cx.exchange(&mut conn, &Msg::new(cx.rev, &label, &body)).await;
    conn.shutdown().await;
    let fresh = refusal(&ex)?;
    let same = main.get("code") == fresh.get("code") && main.get("message") == fresh.get("message");
    same.then(|| {
        format!(
            "the server cannot serve {method}: it answers {} on its main {noun} and on a new one alike, an internal error (most likely its environment, such as a backend it cannot reach), not a protocol rule; what needs {method} cannot be judged",
            brief(&main),
            noun = cx.transport().noun()
        )
    })
}

/// Walk the first advertised list cold on a new connection or process.
pub async fn cold_walk(cx: &Cx<'_>) -> Result<ColdWalk, String> {
    let list = [ListMethod::Tools, ListMethod::Prompts, ListMethod::Resources]
        .into_iter()
        .find(|l| cx.advertises(l.capability()))
        .unwrap_or(ListMethod::Tools);
    let mut conn = cx.session.open().map_err(|e| format!("could not open a fresh {}: {e}", cx.transport().noun()))?;
    // The process starts while the shared walk of the same list is made;
    // the cold request waits for that walk (it is still the first request
    // on its process), so that two full lists are not parsed at once (a
    // 10,000-tool list is about 8 MB parsed).
    let _ = cx.facts.list_walk(cx, list).await;
    let _room = cx.facts.list_room().await;
    let mut w = walk_on(cx, &mut conn, list).await;
    let mut first = w.exchanges.first().cloned().unwrap_or_default();
    first.fresh = true;
    if let Some(f) = w.exchanges.first_mut() {
        f.fresh = true;
    }
    let served = !w.pages.is_empty();
    // A refused cold request's answer parsed again from its text (the walk
    // keeps pages light), for the message that quotes it; a page that was
    // served is not kept parsed.
    if !served {
        first.response =
            first.frames.iter().rev().find_map(|f| serde_json::from_str::<Value>(&f.raw).ok().filter(|v| v.get("id").is_some()));
    }
    let mut before = Vec::new();
    // Refused cold: ask server/discover first on the same process, then
    // walk again, as a client that probes first would.
    if w.pages.is_empty() && w.failed().is_none() && cx.rev.is_stateless() {
        before = std::mem::take(&mut w.exchanges);
        let body = cx.request("server/discover", None);
        let ex =
            cx.exchange(&mut conn, &crate::session::Msg::new(cx.rev, "server/discover (after the cold request was refused)", &body)).await;
        before.push(ex);
        w = walk_on(cx, &mut conn, list).await;
    }
    conn.shutdown().await;
    let transcript = before.into_iter().chain(w.transcript(&[])).collect();
    Ok(ColdWalk {
        method: list.method(),
        first,
        served,
        transcript,
        names: w.names(),
        failed: w.failed().map(String::from),
        broken: w.broken().map(String::from),
    })
}
