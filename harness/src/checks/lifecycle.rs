//! Lifecycle checks that need more than one request: capabilities against
//! handlers, a cold request, exit on stdin EOF, `initialize` sent to a
//! 2026-07-28 server, and the end of a 2025-11-25 HTTP session.

use super::walk::ListMethod;
use super::{Check, Cx, Need, Outcome, Scope};
use crate::record::Transport;
use crate::session::Msg;
use crate::wire::{self, Revision};
use serde::Deserialize;
use serde_json::{Value, json};
use std::time::Duration;

/// Advertised capability ⇔ its methods work; not advertised ⇒ -32601.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CapabilitiesMatchHandlers {
    /// Only what the requirement set's server-stateless scenario judges:
    /// tools advertised exactly when tools/list works, and prompts/list
    /// -32601 when prompts are not advertised.
    #[serde(default)]
    scenario: bool,
    /// Which rule, where a revision's texts give them different levels
    /// (default both): `declared`, a capability's method works exactly
    /// when the capability is declared ("Servers that support tools MUST
    /// declare the tools capability"); `not-found`, a method of a
    /// capability not declared that is refused is refused with -32601
    /// (the completion text's "SHOULD return standard JSON-RPC errors …
    /// Method not found: -32601 (Capability not supported)"). A result
    /// to such a method is the `declared` rule's finding only.
    #[serde(default)]
    part: Part,
    /// The capabilities probed (default: tools, prompts, resources,
    /// completions), where a rule's sentence speaks of some only.
    #[serde(default)]
    caps: Vec<String>,
}

#[derive(Debug, Deserialize, Default, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum Part {
    #[default]
    Both,
    Declared,
    NotFound,
}

impl Check for CapabilitiesMatchHandlers {
    const NAME: &'static str = "capabilities_match_handlers";
    const ABOUT: &'static str = "each advertised capability's method works; each method of a capability not advertised answers -32601";

    async fn run(&self, cx: &Cx<'_>) -> Outcome {
        let mut out = Outcome::default();
        let probes: [(&str, &str, Option<Value>); 4] = [
            ("tools", "tools/list", None),
            ("prompts", "prompts/list", None),
            ("resources", "resources/list", None),
            (
                "completions",
                "completion/complete",
                Some(json!({"ref": {"type": "ref/prompt", "name": "mcpcert-no-such-prompt"}, "argument": {"name": "x", "value": ""}})),
            ),
        ];
        // The requests are made first (ids in order), then sent at once.
        let mut made = Vec::new();
        for (cap, method, params) in probes {
            let advertised = cx.advertises(cap);
            if self.scenario && (cap == "resources" || cap == "completions" || (cap == "prompts" && advertised)) {
                continue;
            }
            // 2024-11-05 has completion/complete but no capability for it.
            if cap == "completions" && !cx.rev.has(crate::wire::Feature::CompletionsCapability) {
                continue;
            }
            // The -32601 rule is about capabilities not declared only.
            if (self.part == Part::NotFound && advertised) || (!self.caps.is_empty() && !self.caps.iter().any(|c| c == cap)) {
                continue;
            }
            made.push((cap, method, advertised, cx.request(method, params)));
        }
        if made.is_empty() && self.part == Part::NotFound {
            return Outcome::na("the server declares every capability this case probes, so no method of an undeclared one can be refused");
        }
        let sends = made.iter().map(|(cap, method, advertised, body)| async move {
            // A probe whose answer must be an error (a method of a
            // capability not advertised; a completion of a prompt that
            // does not exist) is a negative probe: on the connection such
            // probes share, not the main one.
            if !advertised || *cap == "completions" {
                cx.negative(&Msg::new(cx.rev, method, body)).await
            } else {
                cx.on_main(method, body).await
            }
        });
        let answers = futures_util::future::join_all(sends).await;
        let mut refused = 0;
        for ((cap, method, advertised, _), ex) in made.into_iter().zip(answers) {
            let ex = match ex {
                Ok(e) => e,
                Err(e) => return out.with_error(e.to_string()),
            };
            if let Some(e) = &ex.error {
                out.set_error(format!("{method}: {e}"));
                out.exchanges.push(ex);
                return out;
            }
            let not_found = ex.error_code() == Some(-32601);
            let declared = self.part != Part::NotFound;
            refused += usize::from(ex.result().is_none());
            // The initialize era: each capability has its own sentence.
            let own = if self.part == Part::Declared { declare_sentence(cx.rev, cap) } else { String::new() };
            if advertised && not_found && declared {
                out.fail(format!(
                    "capabilities.{cap} is advertised, but {method} answered -32601 (method not found): {}{own}",
                    ex.summary()
                ));
            } else if advertised
                && cap != "completions"
                && ex.result().is_none()
                && declared
                && (self.part == Part::Declared || ex.response.as_ref().and_then(|r| r.get("error")).is_some_and(super::walk::internal))
            {
                // Another error is no proof the capability is not there (a
                // backend down answers -32603 as well).
                let down = if cap == "tools" { cx.facts.list_down(cx, ListMethod::Tools).await } else { None };
                out.set_error(down.unwrap_or_else(|| {
                    format!(
                        "capabilities.{cap} is advertised and {method} answered an error other than -32601, so whether the method is there cannot be told: {}",
                        ex.summary()
                    )
                }));
            } else if advertised && cap != "completions" && ex.result().is_none() && declared {
                out.fail(format!("capabilities.{cap} is advertised, but {method} gave no result: {}", ex.summary()));
            } else if !advertised && !not_found {
                match (self.part, ex.result().is_some()) {
                    (Part::Both, _) => out.fail(format!(
                        "capabilities.{cap} is not advertised, so {method} must answer -32601 (method not found); got {}",
                        ex.summary()
                    )),
                    // An empty answer is no sign of support: only a server
                    // that serves something supports it.
                    (Part::Declared, true) if serves_nothing(cap, &ex) => {}
                    (Part::Declared, true) => out.fail(format!(
                        "{method} serves {cap} ({}), so the server supports {cap}, yet capabilities.{cap} is not declared{own}",
                        ex.summary()
                    )),
                    (Part::NotFound, false) => out.fail(format!(
                        "capabilities.{cap} is not declared, so {method} should be refused with -32601 (method not found: capability not supported); got {}",
                        ex.summary()
                    )),
                    _ => {}
                }
            }
            out.exchanges.push(ex);
        }
        if self.part == Part::NotFound && refused == 0 {
            out.set_na("every method of a capability not declared was served, so no refusal could be judged (serving it undeclared is capabilities-match-handlers' finding)");
        }
        out
    }
}

/// Whether a method of a capability not declared answered with nothing in
/// it (an empty list, no completion values): no sign the server supports
/// the capability.
fn serves_nothing(cap: &str, ex: &crate::record::Exchange) -> bool {
    let Some(r) = ex.result() else { return false };
    let items = match cap {
        "completions" => r.pointer("/completion/values"),
        other => r.get(other),
    };
    items.and_then(Value::as_array).is_none_or(|a| a.is_empty())
}

/// The initialize era's own sentence for `cap` ("Servers that support X
/// MUST declare the X capability"), quoted after a finding about it.
fn declare_sentence(rev: Revision, cap: &str) -> String {
    let doc = match cap {
        "completions" => "server/utilities/completion",
        "tools" => "server/tools",
        "prompts" => "server/prompts",
        _ => "server/resources",
    };
    format!(" ({}/{doc}#capabilities: \"Servers that support {cap} MUST declare the `{cap}` capability\")", rev.as_str())
}

/// A request on a brand-new connection or process with no discover first.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ColdRequest {}

impl Check for ColdRequest {
    const NAME: &'static str = "cold_request";
    const ABOUT: &'static str = "a list request sent first on a new connection or process (no server/discover before it) succeeds";

    async fn run(&self, cx: &Cx<'_>) -> Outcome {
        let mut out = Outcome::default();
        // The walk tools/list-same-on-fresh-connection judges too: its first
        // page is this request (one process, not two).
        let cold = match cx.facts.cold_walk(cx).await {
            Ok(c) => c,
            Err(e) => return Outcome::error(e),
        };
        let (method, noun) = (cold.method, cx.transport().noun());
        let mut ex = cold.first.clone();
        ex.label = format!("cold {method}");
        if let Some(e) = &ex.error {
            out.set_error(format!("cold {method} on a new {noun}: {e}"));
        } else if !cold.served {
            let list = [ListMethod::Tools, ListMethod::Prompts, ListMethod::Resources].into_iter().find(|l| l.method() == method);
            let down = match list {
                Some(l) => cx.facts.list_down(cx, l).await,
                None => None,
            };
            match down {
                // Refused on the main connection too, alike: no sign of state.
                Some(down) => out.set_error(down),
                None => out.fail(format!(
                    "a {method} sent first on a new {noun} (no server/discover before it) must succeed; got {}",
                    ex.summary()
                )),
            }
        }
        out.exchanges.push(ex);
        out
    }
}

/// A stdio server exits by itself once its stdin is closed.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExitOnStdinEof {}

impl Check for ExitOnStdinEof {
    const NAME: &'static str = "exit_on_stdin_eof";
    const ABOUT: &'static str = "a process that has answered requests exits within 5 s of its stdin being closed (at the end of its revision, on the process its negative probes shared)";
    // At the end of the revision, with the audits: the process the negative
    // probes shared is done with then (a process of its own would cost a start).
    const SCOPE: Scope = Scope::Run;

    fn needs(&self) -> Vec<Need> {
        vec![Need::Transport(Transport::Stdio)]
    }

    async fn run(&self, cx: &Cx<'_>) -> Outcome {
        let mut out = Outcome::default();
        let (mut conn, opened) = match cx.session.process_for_eof(cx.rev, cx.case).await {
            Ok(c) => c,
            Err(e) => return Outcome::error(format!("could not reach a process of the server: {e}")),
        };
        out.exchanges.extend(opened);
        // One more request, answered, shows the process alive before its
        // stdin closes.
        let body = match cx.rev {
            r if r.is_stateless() => cx.request("server/discover", None),
            _ => cx.request("ping", None),
        };
        let mut ex = cx.exchange(&mut conn, &Msg::new(cx.rev, "answer one more request, then stdin EOF", &body)).await;
        // Its reproducer starts a process, brings it to the revision's
        // state, sends this, and closes the process's input.
        ex.fresh = true;
        ex.preamble = cx.session.preamble(cx.rev);
        if let Some(e) = &ex.error {
            out.set_error(format!("the process did not answer: {e}"));
            out.exchanges.push(ex);
            conn.kill();
            return out;
        }
        match conn.close_stdin_and_wait(Duration::from_secs(5)).await {
            Ok(Some(status)) => ex.note = Some(format!("after stdin closed the process exited: {status}")),
            Ok(None) => {
                ex.note = Some("still running 5 s after stdin closed; killed".into());
                out.fail("the server was still running 5 s after its stdin was closed (expected it to exit)");
            }
            Err(t) => return Outcome::na(format!("applies to stdio targets only; this target is {t}")),
        }
        conn.kill();
        out.exchanges.push(ex);
        out
    }
}

/// `initialize` sent to a 2026-07-28 server: a modern-only server refuses
/// it and names its versions; a dual-era server answers it.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InitializeOnModern {}

impl Check for InitializeOnModern {
    const NAME: &'static str = "initialize_on_modern";
    const ABOUT: &'static str =
        "initialize, sent as a 2025-11-25 client would, is refused with an error naming the supported versions (modern-only servers)";
    const REVISIONS: &'static [Revision] = &Revision::STATELESS;

    // Not alone: the initialize goes on a connection (process) of its own,
    // and a modern-only server keeps no session for it to change.

    async fn run(&self, cx: &Cx<'_>) -> Outcome {
        let mut out = Outcome::default();
        // The revision probe sent exactly this first, on a connection or
        // process of its own: judged again, not sent again (over stdio a
        // new process would cost a start).
        let ex = match cx
            .session
            .initialize_probe()
            .filter(|p| p.sent.as_deref().is_some_and(|s| s.contains(Revision::NEWEST_INITIALIZE.as_str())))
        {
            Some(p) => {
                let mut ex = p.clone();
                ex.label = "initialize (as a 2025-11-25 client: the revision probe's, first on a connection or process of its own)".into();
                ex.fresh = true;
                ex
            }
            None => {
                let mut conn = match cx.session.open() {
                    Ok(c) => c,
                    Err(e) => return Outcome::error(format!("could not open a fresh connection: {e}")),
                };
                let body =
                    wire::request(&cx.session.next_id(), "initialize", Some(wire::initialize_params(Revision::NEWEST_INITIALIZE.as_str())));
                // Sent the way a 2025-11-25 client would (no 2026 headers), and not
                // this revision's traffic, so kept out of its frame log.
                let msg = Msg::new(Revision::NEWEST_INITIALIZE, "initialize (as a 2025-11-25 client)", &body);
                let mut ex = cx.session.exchange(&mut conn, &msg, None).await;
                ex.fresh = true;
                conn.shutdown().await;
                ex
            }
        };
        if let Some(e) = &ex.error {
            out.set_error(format!("initialize: {e}"));
        } else if let Some(result) = ex.result() {
            let v = result.get("protocolVersion").map(wire::brief).unwrap_or_else(|| "no protocolVersion".into());
            out.set_na(format!(
                "the server answered initialize with a result ({v}): it also serves an initialize-era revision (dual-era, allowed by versioning.mdx), so the rule for modern-only servers does not apply"
            ));
        } else if let Some(err) = ex.response.as_ref().and_then(|r| r.get("error")) {
            if !err.to_string().contains(wire::MODERN) {
                out.fail(format!(
                    "the error for initialize should name the versions the server supports (e.g. {}); got {}",
                    wire::MODERN,
                    wire::brief(err)
                ));
            }
        } else {
            out.fail(format!(
                "initialize got no JSON-RPC answer; a modern-only server should reply with an error naming its versions; got {}",
                ex.summary()
            ));
        }
        out.exchanges.push(ex);
        out
    }
}

/// 2025-11-25 HTTP: after DELETE ends a session, that id gets 404.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SessionTerminateThen404 {}

impl Check for SessionTerminateThen404 {
    const NAME: &'static str = "session_terminate_then_404";
    const ABOUT: &'static str = "DELETE with the session id ends the session (or is refused with 405); the ended id then gets HTTP 404";
    const REVISIONS: &'static [Revision] = &Revision::INITIALIZE_ERA;

    fn needs(&self) -> Vec<Need> {
        vec![Need::Transport(Transport::Http)]
    }

    async fn run(&self, cx: &Cx<'_>) -> Outcome {
        let mut out = Outcome::default();
        let fresh = match cx.session.fresh(cx.rev, true, cx.case).await {
            Ok(f) => f,
            Err(e) => return Outcome::error(format!("could not open a fresh session: {e}")),
        };
        let mut conn = fresh.conn;
        out.exchanges.extend(fresh.exchanges);
        if conn.session_id().is_none() {
            out.set_na("the server issued no Mcp-Session-Id");
            return out;
        }
        let del = cx.exchange(&mut conn, &Msg::raw(cx.rev, "DELETE the session", "DELETE")).await;
        let status = del.status;
        out.exchanges.push(del);
        match status {
            Some(405) => {
                out.set_na("the server does not let clients end sessions (DELETE answered 405, which the spec allows)");
                return out;
            }
            Some(s) if (200..300).contains(&s) => {}
            other => {
                out.fail(format!(
                    "DELETE with the session id should end the session (2xx) or be refused with 405; got {}",
                    other.map(|s| s.to_string()).unwrap_or_else(|| "no status".into())
                ));
                return out;
            }
        }
        let body = cx.request("ping", None);
        let ex = cx.exchange(&mut conn, &Msg::new(cx.rev, "request with the ended session id", &body)).await;
        if ex.status != Some(404) {
            out.fail(format!("a request carrying a session id the server has ended must get HTTP 404; got {}", ex.summary()));
        }
        out.exchanges.push(ex);
        out
    }
}

/// 2025-11-25 HTTP: a server that requires a session id answers 400 to a
/// request without one. One that serves the request does not require it.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SessionRequired {}

impl Check for SessionRequired {
    const NAME: &'static str = "session_required";
    const ABOUT: &'static str = "a request without the Mcp-Session-Id the server issued gets HTTP 400, unless the server serves it (then it does not require one: n/a)";
    const REVISIONS: &'static [Revision] = &Revision::INITIALIZE_ERA;

    fn needs(&self) -> Vec<Need> {
        vec![Need::Transport(Transport::Http)]
    }

    async fn run(&self, cx: &Cx<'_>) -> Outcome {
        let mut out = Outcome::default();
        let body = cx.request("tools/list", None);
        let edits = [crate::wire::HeaderEdit::Remove("Mcp-Session-Id".into())];
        let ex = match cx.session.on_main(&Msg::new(cx.rev, "tools/list without the session id", &body).edits(&edits), cx.case).await {
            Ok(e) => e,
            Err(e) => return Outcome::error(e.to_string()),
        };
        if let Some(e) = &ex.error {
            out.set_error(format!("tools/list without the session id: {e}"));
        } else if ex.result().is_some() {
            out.set_na("the server served a request without the Mcp-Session-Id it issued, so it does not require one; the rule is for servers that do");
        } else if ex.status != Some(400) {
            out.fail(format!(
                "a server that requires its session id should answer a request without it with HTTP 400; got {}",
                ex.summary()
            ));
        }
        out.exchanges.push(ex);
        out
    }
}

/// HTTP: several requests in flight at once (a session's, on 2025-11-25)
/// are each answered, each on its own stream.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConcurrentRequests {
    #[serde(default = "three")]
    count: usize,
}

fn three() -> usize {
    3
}

impl Check for ConcurrentRequests {
    const NAME: &'static str = "concurrent_requests";
    const ABOUT: &'static str = "HTTP: `count` tools/list requests sent at once, each on its own connection (2025-11-25: in the run's session), are each answered 2xx with a result";

    fn exclusive(&self) -> bool {
        // Alone, so that `count` is how many are in flight: with other
        // cases' requests on top, a server that falters only when more are
        // crowded would fail it under -j N and pass it under -j 1.
        true
    }

    fn needs(&self) -> Vec<Need> {
        vec![Need::Transport(Transport::Http)]
    }

    async fn run(&self, cx: &Cx<'_>) -> Outcome {
        let mut out = Outcome::default();
        // 2025-11-25: the run's session, on every connection. (The run
        // itself sends it many requests at once under -j; a session of the
        // case's own cost the server one more, and the case two round
        // trips more while it runs alone.)
        let session = cx.session.main_session_id(cx.rev).map(str::to_string);
        let mut conns = Vec::new();
        for _ in 0..self.count.max(2) {
            match cx.session.open() {
                Ok(mut c) => {
                    c.set_session_id(session.clone());
                    conns.push(c);
                }
                Err(e) => return out.with_error(e.to_string()),
            }
        }
        let bodies: Vec<Value> = conns.iter().map(|_| cx.request("tools/list", None)).collect();
        let labels: Vec<String> = (1..=conns.len()).map(|i| format!("tools/list {i} of {}, sent at once", conns.len())).collect();
        let sends = conns.iter_mut().zip(bodies.iter()).zip(labels.iter()).map(|((c, b), l)| async move {
            let msg = Msg::new(cx.rev, l, b).on_purpose();
            cx.exchange(c, &msg).await
        });
        let exchanges = futures_util::future::join_all(sends).await;
        for mut ex in exchanges {
            ex.together = true;
            if let Some(e) = &ex.error {
                out.set_error(format!("{}: {e}", ex.label));
            } else if !ex.status.is_some_and(|s| (200..300).contains(&s)) || ex.result().is_none() {
                out.fail(format!("{}: each of several requests in flight at once must be answered; got {}", ex.label, ex.summary()));
            }
            out.exchanges.push(ex);
        }
        out
    }
}
