//! What each configured role ([roles.NAME]) sees of the server (2026-07-28),
//! gathered once for every authorization rule judged over it
//! (`Facts::roles_seen`): each role lists tools, prompts, resources and
//! templates, completes every argument it can, and calls the tools the call
//! policy allows. Over stdio a role is one process (its own environment).

use super::Cx;
use super::judge::args::{param_headers, synth_valid};
use super::judge::completion::targets_from;
use super::walk::{ListMethod, Walk, walk_on};
use crate::config::Role;
use crate::record::Exchange;
use crate::session::Connection;
use crate::session::Msg;
use crate::wire::HeaderEdit;
use serde_json::{Value, json};
use std::collections::BTreeMap;

/// What every configured role sees, in the config's order: the
/// `Facts::roles_seen` fact. The roles are seen at once, each with ids of
/// its own.
pub async fn see_all(cx: &Cx<'_>) -> Result<Vec<Seen>, String> {
    // The tools walk of the default identity gives the schemas for Mcp-Param headers.
    let schemas: std::sync::Arc<Vec<Value>> = cx.facts.tools_walk(cx).await.map(|w| w.items.clone()).unwrap_or_default();
    let seen = cx.policy.roles.iter().enumerate().map(|(k, r)| see_as(cx, r, k, &schemas));
    futures_util::future::join_all(seen).await.into_iter().collect()
}

/// What one role saw.
pub struct Seen {
    pub lists: BTreeMap<&'static str, Walk>,
    /// (where, value) of completion results and tool results.
    pub results: Vec<(String, Value)>,
    pub exchanges: Vec<Exchange>,
    /// Lists that did not reach their end (what the role sees is partial).
    pub partial: Vec<String>,
}

/// One request as a role, made before anything is sent (its id taken in
/// order); tools/call carries its Mcp-Param-* headers like any other call
/// (from the schemas of the default identity's walk).
struct RoleRequest {
    label: String,
    body: Value,
    edits: Vec<HeaderEdit>,
    /// Where its result is kept for judging.
    place: String,
}

fn role_request(cx: &Cx<'_>, schemas: &[Value], label: String, place: String, method: &str, p: Value) -> RoleRequest {
    let body = cx.request(method, Some(p.clone()));
    let mut edits = Vec::new();
    if method == "tools/call" {
        let schema = schemas.iter().find(|t| t.get("name") == p.get("name")).and_then(|t| t.get("inputSchema"));
        if let (Some(s), Some(a)) = (schema, p.get("arguments")) {
            edits = param_headers(s, a).into_iter().map(|(k, v)| HeaderEdit::Set(k, v)).collect();
        }
    }
    RoleRequest { label, body, edits, place }
}

/// How many connections a role's requests are spread over: over HTTP eight
/// (each request stands alone), over stdio one process (a process per
/// request would cost a start each, and a pipe has no round trip to hide).
fn width(cx: &Cx<'_>) -> usize {
    if cx.transport() == crate::record::Transport::Http { 8 } else { 1 }
}

/// Send `reqs` over `conns`: request i on connection i % n, each
/// connection's in turn, the connections at once. Exchanges in `reqs` order.
async fn spread(cx: &Cx<'_>, conns: &mut [Connection], reqs: &[RoleRequest]) -> Vec<Exchange> {
    let n = conns.len().max(1);
    let lanes = conns.iter_mut().enumerate().map(|(j, conn)| async move {
        let mut got = Vec::new();
        for (i, r) in reqs.iter().enumerate().filter(|(i, _)| i % n == j) {
            let mut ex = cx.exchange(conn, &Msg::new(cx.rev, &r.label, &r.body).edits(&r.edits)).await;
            ex.fresh = true;
            got.push((i, ex));
        }
        got
    });
    let mut all: Vec<(usize, Exchange)> = futures_util::future::join_all(lanes).await.into_iter().flatten().collect();
    all.sort_by_key(|(i, _)| *i);
    all.into_iter().map(|(_, ex)| ex).collect()
}

/// The role's lists, walked at once (over HTTP each on a connection of its
/// own, with ids of its own), in the order of `lists`.
/// Over stdio the one process the walks went on comes back, for the
/// role's requests after them (a start each would cost seconds).
async fn walks_as(cx: &Cx<'_>, role: &Role, part: usize, lists: &[ListMethod]) -> Result<(Vec<Walk>, Option<Connection>), String> {
    let open = || cx.session.open_as(&role.headers, &role.env).map_err(|e| e.to_string());
    if width(cx) == 1 {
        // One process, the walks in turn; with ids of the role's own (the
        // roles are seen at once).
        let mut conn = open()?;
        let out = crate::session::with_part_ids(part, async {
            let mut out = Vec::new();
            for list in lists {
                out.push(walk_on(cx, &mut conn, *list).await);
            }
            out
        })
        .await;
        return Ok((out, Some(conn)));
    }
    let mut conns = Vec::new();
    for _ in lists {
        conns.push(open()?);
    }
    let walks = conns.iter_mut().zip(lists).enumerate().map(|(k, (conn, list))| {
        crate::session::with_part_ids(part + k, async move {
            let w = walk_on(cx, conn, *list).await;
            conn.shutdown().await;
            w
        })
    });
    Ok((futures_util::future::join_all(walks).await, None))
}

/// What `role` sees. Roles are seen at once: the `k`-th role's requests
/// take ids from parts 5k to 5k+4 of the fact's block (a part per list
/// walk, one for the rest), whichever role sends first.
async fn see_as(cx: &Cx<'_>, role: &Role, k: usize, schemas: &[Value]) -> Result<Seen, String> {
    let mut seen = Seen { lists: BTreeMap::new(), results: Vec::new(), exchanges: Vec::new(), partial: Vec::new() };
    let lists: Vec<ListMethod> = [ListMethod::Tools, ListMethod::Prompts, ListMethod::Resources, ListMethod::Templates]
        .into_iter()
        .filter(|l| cx.advertises(l.capability()))
        .collect();
    let (walks, kept) = walks_as(cx, role, 5 * k, &lists).await?;
    for (list, mut w) in lists.iter().zip(walks) {
        for ex in w.exchanges.iter_mut() {
            ex.label = format!("as {}: {}", role.name, ex.label);
            ex.fresh = true;
        }
        if let Some(e) = w.failed() {
            return Err(format!("as {}: {e}", role.name));
        }
        if let Some(p) = w.partial() {
            seen.partial.push(format!("as {}, {p}", role.name));
        }
        seen.exchanges.extend(w.exchanges.iter().take(2).cloned());
        seen.lists.insert(list.method(), w);
    }
    let (reqs, skipped) = crate::session::with_part_ids(5 * k + 4, async { requests_as(cx, role, &seen, schemas) }).await;
    if !skipped.is_empty() {
        seen.exchanges.push(Exchange::note(
            format!("as {}: tools not called", role.name),
            format!(
                "{}: the role sees them without readOnlyHint: true and the default identity does not list them so, so this case may have shared the server with others while it ran",
                skipped.join(", ")
            ),
        ));
    }
    let mut conns: Vec<Connection> = kept.into_iter().collect();
    if reqs.is_empty() {
        for mut c in conns {
            c.shutdown().await;
        }
        return Ok(seen);
    }
    while conns.len() < width(cx).min(reqs.len()) {
        conns.push(cx.session.open_as(&role.headers, &role.env).map_err(|e| e.to_string())?);
    }
    for (r, ex) in reqs.iter().zip(spread(cx, &mut conns, &reqs).await) {
        if let Some(res) = ex.result() {
            seen.results.push((r.place.clone(), res.clone()));
        }
        seen.exchanges.push(ex);
    }
    for mut c in conns {
        c.shutdown().await;
    }
    Ok(seen)
}

/// The completions and calls a role makes, from what it listed.
/// Also the names of tools not called because only the role sees them as
/// not read-only.
fn requests_as(cx: &Cx<'_>, role: &Role, seen: &Seen, schemas: &[Value]) -> (Vec<RoleRequest>, Vec<String>) {
    let (mut reqs, mut skipped) = (Vec::new(), Vec::new());
    // Completion of every prompt argument and template variable the role sees.
    if cx.advertises("completions") {
        let items = |m: &str| seen.lists.get(m).map(|w| w.items.clone()).unwrap_or_default();
        let targets = targets_from(&items("prompts/list")[..], &items("resources/templates/list")[..]);
        for t in targets.into_iter().take(50) {
            let p = json!({"ref": t.reference, "argument": {"name": t.argument, "value": ""}});
            let label = format!("as {}: complete {}", role.name, t.what);
            reqs.push(role_request(cx, schemas, label, format!("completion/complete of {}", t.what), "completion/complete", p));
        }
    }
    // Calls of the tools the role sees and the call policy allows.
    let tools = seen.lists.get("tools/list").map(|w| w.items.clone()).unwrap_or_default();
    let mut called = 0;
    for t in tools.iter() {
        let Some(name) = t.get("name").and_then(|n| n.as_str()) else { continue };
        if cx.policy.call_allowed(t, name).is_err() || called >= cx.policy.max_tools_called {
            continue;
        }
        // The scheduler let this case share the server when every tool of
        // the default identity's walk it may call is read-only: a tool the
        // role sees that is not marked read-only is called only when the
        // default walk lists it so too (the case then ran alone).
        let read_only = |d: &Value| d.pointer("/annotations/readOnlyHint") == Some(&Value::Bool(true));
        if !read_only(t) && !schemas.iter().any(|d| d.get("name") == t.get("name") && !read_only(d)) {
            skipped.push(name.to_string());
            continue;
        }
        let Some(args) = cx.policy.tool(name).arguments.or_else(|| t.get("inputSchema").and_then(synth_valid)) else { continue };
        called += 1;
        let label = format!("as {}: tools/call {name}", role.name);
        reqs.push(role_request(
            cx,
            schemas,
            label,
            format!("tools/call {name} result"),
            "tools/call",
            json!({"name": name, "arguments": args}),
        ));
    }
    (reqs, skipped)
}
