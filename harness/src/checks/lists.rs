//! Listing: the shared `tools/list` walk and what it shows (pagination,
//! cache hints, unique names, a stable order, the same set on a fresh
//! connection), an unknown cursor, and walks of the other three lists.

use super::judge::hints::cache_hint_problems;
use super::walk::ListMethod;
use super::{Check, Cx, Outcome};
use crate::record::clip;
use crate::session::Msg;
use crate::wire::Revision;
use serde::Deserialize;
use serde_json::json;
use std::collections::{BTreeSet, HashMap};

/// A cursor no server issues (never the empty string, which one may).
const BOGUS_CURSOR: &str = "mcpcert-cursor-never-issued-5f1c";

/// The shared `tools/list` walk reaches its end.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolsWalk {}

impl Check for ToolsWalk {
    const NAME: &'static str = "tools_walk";
    const ABOUT: &'static str = "tools/list is walked to its end, each nextCursor sent back exactly";

    async fn run(&self, cx: &Cx<'_>) -> Outcome {
        let w = match cx.facts.tools_walk(cx).await {
            Ok(w) => w,
            Err(e) => return Outcome::error(e),
        };
        let mut out = Outcome { exchanges: w.transcript(&[]), ..Default::default() };
        if let Some(e) = w.failed() {
            out.set_error(e);
        } else if let Some(b) = w.broken() {
            // A list no connection can get is the server's environment,
            // said once (`Facts::list_down`), not a broken walk.
            match &w.down {
                Some(down) => out.set_error(down.clone()),
                None => out.fail(b),
            }
        }
        out
    }
}

/// Another list walked to its end (with cache hints on 2026-07-28).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ListWalk {
    method: ListMethod,
}

impl Check for ListWalk {
    const NAME: &'static str = "list_walk";
    const ABOUT: &'static str =
        "a list (`method`: prompts/list, resources/list, resources/templates/list) is walked to its end; 2026-07-28: with cache hints";

    async fn run(&self, cx: &Cx<'_>) -> Outcome {
        let w = match cx.facts.list_walk(cx, self.method).await {
            Ok(w) => w,
            Err(e) => return Outcome::error(e),
        };
        let mut out = Outcome { exchanges: w.transcript(&[]), ..Default::default() };
        if let Some(e) = w.failed() {
            out.set_error(e);
            return out;
        }
        if let Some(a) = &w.absent {
            out.set_na(format!("{a}; there is no list to walk"));
            return out;
        }
        if let Some(b) = w.broken() {
            out.fail(b);
        }
        if cx.rev.is_stateless() {
            out.failures.extend(cache_hint_problems(w.method(), &w.page_results()));
        }
        out
    }
}

/// Cache hints on every page of the shared walk.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolsCacheHints {}

impl Check for ToolsCacheHints {
    const NAME: &'static str = "tools_cache_hints";
    const ABOUT: &'static str = "every tools/list page carries ttlMs and cacheScope, one scope per walk";
    const REVISIONS: &'static [Revision] = &Revision::STATELESS;

    async fn run(&self, cx: &Cx<'_>) -> Outcome {
        let w = match cx.facts.tools_walk(cx).await {
            Ok(w) => w,
            Err(e) => return Outcome::error(e),
        };
        let mut out = Outcome { exchanges: w.transcript(&(0..w.pages.len()).collect::<Vec<_>>()), ..Default::default() };
        if w.pages.is_empty() {
            out.set_error(format!("no tools/list page came back: {}", w.failed().or(w.broken()).unwrap_or_default()));
            return out;
        }
        out.failures.extend(cache_hint_problems(w.method(), &w.page_results()));
        if let Some(p) = w.partial() {
            out.incomplete(&p);
        }
        out
    }
}

/// No tool name is listed twice.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolsUniqueNames {}

impl Check for ToolsUniqueNames {
    const NAME: &'static str = "tools_unique_names";
    const ABOUT: &'static str = "tool names are unique across all pages of the shared walk";

    async fn run(&self, cx: &Cx<'_>) -> Outcome {
        let w = match cx.facts.listed_tools(cx).await {
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
        let mut out = Outcome { exchanges: w.transcript(&pages), ..Default::default() };
        if !dups.is_empty() {
            out.fail(format!("tool names should be unique within a server; listed more than once: {}", dups.join(", ")));
        }
        if let Some(p) = w.partial() {
            out.incomplete(&p);
        }
        out
    }
}

/// A cursor the server never issued gets -32602.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolsInvalidCursor {}

impl Check for ToolsInvalidCursor {
    const NAME: &'static str = "tools_invalid_cursor";
    const ABOUT: &'static str = "tools/list with a cursor the server never issued gets JSON-RPC error -32602";

    async fn run(&self, cx: &Cx<'_>) -> Outcome {
        let mut out = Outcome::default();
        let body = cx.request("tools/list", Some(json!({"cursor": BOGUS_CURSOR})));
        // A server that ignores the cursor answers with its first page,
        // which may be the whole list: it takes the room for one.
        let _room = cx.facts.list_room().await;
        // A negative probe: on the connection such probes share.
        let ex = match cx.negative(&Msg::new(cx.rev, "tools/list with a cursor the server never issued", &body)).await {
            Ok(e) => e,
            Err(e) => return Outcome::error(e.to_string()),
        };
        if let Some(e) = &ex.error {
            out.set_error(format!("tools/list with an unknown cursor: {e}"));
        } else if ex.error_code() != Some(-32602) {
            out.fail(format!(
                "a cursor the server never issued ({BOGUS_CURSOR:?}) should get JSON-RPC error -32602 (invalid params); got {}",
                ex.summary()
            ));
        }
        // Judged: a server that ignores the cursor may have sent a whole
        // list, which need not stay parsed while other cases run.
        out.exchanges.push(ex.lite());
        out
    }
}

/// Walks in a row list the tools in the same order.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolsOrderStable {}

impl Check for ToolsOrderStable {
    const NAME: &'static str = "tools_order_stable";
    const ABOUT: &'static str = "two tools/list walks in a row, with nothing else listing meanwhile, list the tools in the same order as each other and as the shared walk";
    const REVISIONS: &'static [Revision] = &Revision::STATELESS;

    fn exclusive(&self) -> bool {
        // Its two walks follow each other with nothing else listing
        // meanwhile (a server whose order changes from one walk to the next
        // shows it only on walks that follow each other).
        true
    }

    fn observes(&self) -> bool {
        true
    }

    async fn run(&self, cx: &Cx<'_>) -> Outcome {
        let first = match cx.facts.listed_tools(cx).await {
            Ok(w) => w,
            Err(stop) => return stop,
        };
        let mut out = Outcome::default();
        // The two walks go one after the other (each holds the room for a
        // full list beside the shared walk), each with ids of its own. Of
        // each, only its names and transcript are kept (a list can hold
        // thousands of tools).
        let seen = |part: usize| {
            crate::session::with_part_ids(part, async move {
                let _room = cx.facts.list_room().await;
                cx.walk_main(ListMethod::Tools).await.map(|w| (w.transcript(&[]), w.names(), w.partial()))
            })
        };
        let both = futures_util::future::join(seen(0), seen(1)).await;
        let mut walks = Vec::new();
        for w in [both.0, both.1] {
            match w {
                Ok((transcript, names, partial)) => {
                    out.exchanges.extend(transcript);
                    walks.push((names, partial));
                }
                Err(e) => return out.with_error(e.to_string()),
            }
        }
        // Orders compare only when the lists are whole.
        if let Some(p) = first.partial().or(walks[0].1.clone()).or(walks[1].1.clone()) {
            out.incomplete(&p);
            return out;
        }
        let shared = first.names();
        let pairs = [
            ("the shared walk and the first of this case's", &shared, &walks[0].0),
            ("this case's two walks, with nothing between them,", &walks[0].0, &walks[1].0),
        ];
        for (which, a, b) in pairs {
            if a == b {
                continue;
            }
            let at = a.iter().zip(b.iter()).position(|(x, y)| x != y).unwrap_or(a.len().min(b.len()));
            out.fail(format!(
                "tools/list walks with nothing changed should list tools in the same order; {which} first differ at position {at}: {:?} vs {:?}\n  first:  {}\n  second: {}",
                a.get(at).map(String::as_str).unwrap_or("(end)"),
                b.get(at).map(String::as_str).unwrap_or("(end)"),
                clip(&a.join(", "), 300),
                clip(&b.join(", "), 300)
            ));
            break;
        }
        out
    }
}

/// What `tools_same_on_fresh` keeps of its own walk.
struct FreshWalk {
    transcript: Vec<crate::record::Exchange>,
    names: Vec<String>,
    failed: Option<String>,
    broken: Option<String>,
}

/// A walk on a fresh connection or process lists the same tools.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolsSameOnFresh {}

impl Check for ToolsSameOnFresh {
    const NAME: &'static str = "tools_same_on_fresh";
    const ABOUT: &'static str = "a tools/list walk on a fresh connection or process lists the same set as the shared walk";
    const REVISIONS: &'static [Revision] = &Revision::STATELESS;

    async fn run(&self, cx: &Cx<'_>) -> Outcome {
        let noun = cx.transport().noun();
        // The walk on a new connection (process) is the one cold-request
        // judges the first page of; it goes while the shared one is awaited.
        let walk_fresh = async {
            let cold = cx.facts.cold_walk(cx).await?;
            if cold.method != ListMethod::Tools.method() {
                return Err(format!("the walk on a new {noun} is of {} (tools are not advertised)", cold.method));
            }
            let seen = FreshWalk {
                transcript: cold.transcript.clone(),
                names: cold.names.clone(),
                failed: cold.failed.clone(),
                broken: cold.broken.clone(),
            };
            Ok::<_, String>((Vec::new(), seen))
        };
        let (first, fresh) = futures_util::future::join(cx.facts.listed_tools(cx), walk_fresh).await;
        let first = match first {
            Ok(w) => w,
            Err(stop) => return stop,
        };
        let (opened, w) = match fresh {
            Ok(f) => f,
            Err(e) => return Outcome::error(format!("could not walk on a fresh {noun}: {e}")),
        };
        let mut out = Outcome { exchanges: opened, ..Default::default() };
        out.exchanges.extend(w.transcript);
        if let Some(e) = w.failed {
            out.set_error(format!("walk on a fresh {noun}: {e}"));
            return out;
        }
        // The shared walk must be whole to compare with; a fresh walk that
        // the server refused part of is itself evidence (said below).
        if let Some(p) = first.partial() {
            out.incomplete(&p);
            return out;
        }
        let a: BTreeSet<String> = first.names().into_iter().collect();
        let b: BTreeSet<String> = w.names.into_iter().collect();
        if a != b {
            let only_a: Vec<&String> = a.difference(&b).take(10).collect();
            let only_b: Vec<&String> = b.difference(&a).take(10).collect();
            let mut msg = format!(
                "the tool set must not depend on the {noun}: a walk on a fresh {noun} listed {} tools, the walk on the main {noun} {}",
                b.len(),
                a.len()
            );
            if !only_a.is_empty() {
                msg.push_str(&format!("; only on the main one: {only_a:?}"));
            }
            if !only_b.is_empty() {
                msg.push_str(&format!("; only on the fresh one: {only_b:?}"));
            }
            if let Some(bk) = w.broken {
                msg.push_str(&format!("; the fresh walk did not finish: {bk}"));
            }
            out.fail(msg);
        }
        out
    }
}
