//! Named actions: checks that need more than one request and a fixed
//! expectation (the vocabulary that suite files call by name).

use super::expect::is_error_code;
use super::{Conn, Engine, Exchange, clip};
use crate::suite::Case;
use crate::wire::{self, LEGACY, MODERN, schema};
use serde_json::{Value, json};
use std::time::Duration;

#[derive(Default)]
pub struct StepOut {
    pub exchanges: Vec<Exchange>,
    pub failures: Vec<String>,
    pub na: Option<String>,
    pub error: Option<String>,
}

/// Actions that judge everything the server sent during the run, not
/// traffic of their own.
pub fn judges_whole_run(action: &str) -> bool {
    matches!(action, "wire_frames_valid" | "stdout_only_jsonrpc" | "no_server_requests" | "input_required_audit")
}

impl Engine {
    pub(super) async fn run_action(&mut self, case: &Case, name: &str, with: Option<&Value>) -> StepOut {
        match name {
            "capabilities_match_handlers" => self.capabilities_match_handlers(&case.revision).await,
            "cold_request" => self.cold_request(&case.revision).await,
            "stdout_only_jsonrpc" => self.stdout_only_jsonrpc(&case.revision),
            "no_server_requests" => self.no_server_requests(&case.revision),
            "exit_on_stdin_eof" => self.exit_on_stdin_eof(&case.revision).await,
            "wire_frames_valid" => self.wire_frames_valid(&case.revision),
            "initialize_on_modern" => self.initialize_on_modern().await,
            "session_terminate_then_404" => self.session_terminate_then_404().await,
            "header_probe" => self.header_action(case, with).await,
            "completion_probe" => self.completion_action(case).await,
            "input_required_probe" => self.mrtr_action(case, with).await,
            "input_required_audit" => self.mrtr_only_allowed(&case.revision),
            "subscription_probe" => self.subscription_action(case, with).await,
            "roles_probe" => self.roles_action(case, with).await,
            other => self.tools_action(case, other, with).await,
        }
    }

    pub(super) async fn on_main(&mut self, rev: &str, label: &str, body: &Value) -> Result<Exchange, String> {
        let Some(mut conn) = self.revs.get_mut(rev).and_then(|s| s.conn.take()) else {
            return Err(format!("no connection for {rev}"));
        };
        let mut ex = self.exchange(&mut conn, label, rev, body, &[], true).await;
        ex.preamble = self.revs.get(rev).map(|s| s.preamble.clone()).unwrap_or_default();
        if let Some(st) = self.revs.get_mut(rev) {
            st.conn = Some(conn);
        }
        Ok(ex)
    }

    /// Advertised capability ⇔ its methods work; not advertised ⇒ -32601.
    async fn capabilities_match_handlers(&mut self, rev: &str) -> StepOut {
        let mut out = StepOut::default();
        let caps = self.revs.get(rev).and_then(|s| s.info.capabilities.clone()).unwrap_or(json!({}));
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
        for (cap, method, params) in probes {
            let body = self.body_for(rev, method, params);
            let ex = match self.on_main(rev, method, &body).await {
                Ok(e) => e,
                Err(e) => {
                    out.error = Some(e);
                    return out;
                }
            };
            if let Some(e) = &ex.error {
                out.error = Some(format!("{method}: {e}"));
                out.exchanges.push(ex);
                return out;
            }
            let advertised = caps.get(cap).is_some();
            let not_found = is_error_code(ex.response.as_ref(), -32601);
            if advertised && not_found {
                out.failures
                    .push(format!("capabilities.{cap} is advertised, but {method} answered -32601 (method not found): {}", ex.summary()));
            } else if advertised && cap != "completions" && ex.response.as_ref().is_none_or(|r| r.get("result").is_none()) {
                out.failures.push(format!("capabilities.{cap} is advertised, but {method} gave no result: {}", ex.summary()));
            } else if !advertised && !not_found {
                out.failures.push(format!(
                    "capabilities.{cap} is not advertised, so {method} must answer -32601 (method not found); got {}",
                    ex.summary()
                ));
            }
            out.exchanges.push(ex);
        }
        out
    }

    /// A request on a brand-new connection/process with no discover first.
    async fn cold_request(&mut self, rev: &str) -> StepOut {
        let mut out = StepOut::default();
        let caps = self.revs.get(rev).and_then(|s| s.info.capabilities.clone()).unwrap_or(json!({}));
        let method = if caps.get("tools").is_some() {
            "tools/list"
        } else if caps.get("prompts").is_some() {
            "prompts/list"
        } else if caps.get("resources").is_some() {
            "resources/list"
        } else {
            "server/discover"
        };
        let body = self.body_for(rev, method, None);
        let mut conn = match self.open().await {
            Ok(c) => c,
            Err(e) => {
                out.error = Some(format!("could not open a fresh connection: {e}"));
                return out;
            }
        };
        let mut ex = self.exchange(&mut conn, &format!("cold {method}"), rev, &body, &[], true).await;
        ex.fresh = true;
        if let Conn::Stdio(t) = &mut conn {
            t.shutdown().await;
        }
        if let Some(e) = &ex.error {
            out.error = Some(format!("cold {method} on a new {}: {e}", self.cfg.target.transport_noun()));
        } else if ex.response.as_ref().is_none_or(|r| r.get("result").is_none()) {
            out.failures.push(format!(
                "a {method} sent first on a new {} (no server/discover before it) must succeed; got {}",
                self.cfg.target.transport_noun(),
                ex.summary()
            ));
        }
        out.exchanges.push(ex);
        out
    }

    fn stdout_only_jsonrpc(&mut self, rev: &str) -> StepOut {
        let mut out = StepOut::default();
        let Some(Conn::Stdio(t)) = self.revs.get(rev).and_then(|s| s.conn.as_ref()) else {
            out.na = Some("stdio framing applies to stdio targets".into());
            return out;
        };
        let a = t.audit();
        if a.bad_count > 0 {
            let mut lines = vec![format!("{} of {} stdout lines were not one JSON-RPC message:", a.bad_count, a.lines)];
            for f in a.bad.iter().take(5) {
                lines.push(format!("  - {:?}: {}", clip(&f.raw, 160), f.problem.as_deref().unwrap_or("")));
            }
            out.failures.push(lines.join("\n"));
        }
        out
    }

    fn no_server_requests(&mut self, rev: &str) -> StepOut {
        let mut out = StepOut::default();
        let Some(st) = self.revs.get(rev) else { return out };
        let mut seen: Vec<String> = Vec::new();
        let mut count = 0u64;
        if let Some(Conn::Stdio(t)) = st.conn.as_ref() {
            let a = t.audit();
            count = a.request_count;
            seen = a.requests.iter().take(5).map(|f| clip(&f.raw, 160)).collect();
        } else {
            for lf in &st.frames {
                if lf.parsed().is_server_request() {
                    count += 1;
                    if seen.len() < 5 {
                        seen.push(clip(&lf.frame.raw, 160));
                    }
                }
            }
        }
        if count > 0 {
            out.failures.push(format!(
                "the server sent {count} JSON-RPC request(s); 2026-07-28 servers must not send requests:\n  - {}",
                seen.join("\n  - ")
            ));
        }
        out
    }

    async fn exit_on_stdin_eof(&mut self, rev: &str) -> StepOut {
        let mut out = StepOut::default();
        if self.cfg.target.transport() != "stdio" {
            out.na = Some("applies to stdio targets only".into());
            return out;
        }
        let mut conn = match self.open().await {
            Ok(c) => c,
            Err(e) => {
                out.error = Some(format!("could not start a fresh process: {e}"));
                return out;
            }
        };
        let body = if rev == MODERN {
            self.body_for(rev, "server/discover", None)
        } else {
            self.body_for(rev, "initialize", Some(wire::initialize_params(LEGACY)))
        };
        let mut ex = self.exchange(&mut conn, "answer one request, then stdin EOF", rev, &body, &[], true).await;
        ex.fresh = true;
        if let Some(e) = &ex.error {
            out.error = Some(format!("the fresh process did not answer: {e}"));
            out.exchanges.push(ex);
            return out;
        }
        let Conn::Stdio(t) = &mut conn else { return out };
        match t.close_stdin_and_wait(Duration::from_secs(5)).await {
            Some(status) => ex.note = Some(format!("after stdin closed the process exited: {status}")),
            None => {
                ex.note = Some("still running 5 s after stdin closed; killed".into());
                out.failures.push("the server was still running 5 s after its stdin was closed (expected it to exit)".into());
            }
        }
        t.kill();
        out.exchanges.push(ex);
        out
    }

    fn wire_frames_valid(&mut self, rev: &str) -> StepOut {
        let mut out = StepOut::default();
        let Some(st) = self.revs.get(rev) else { return out };
        let mut bad: Vec<String> = Vec::new();
        let mut count = 0usize;
        let mut checked = 0usize;
        // The exchanges that drew the first offending frames, to replay them.
        let mut replay: Vec<std::sync::Arc<Exchange>> = Vec::new();
        for lf in &st.frames {
            let parsed = lf.parsed();
            let Some(v) = &parsed.value else { continue };
            if !v.is_object() {
                continue;
            }
            checked += 1;
            let method = lf.origin.rpc_method.as_deref();
            let (t, viol) = schema::check_frame(rev, method, v);
            if viol.is_empty() {
                continue;
            }
            count += 1;
            if bad.len() < 10 {
                let what = method.map(|m| format!(" (reply to {m}, in {})", lf.case)).unwrap_or_else(|| format!(" (in {})", lf.case));
                let first: Vec<String> = viol.iter().take(3).map(|x| x.to_string()).collect();
                bad.push(format!("  - {t}{what}: {}\n      frame: {}", first.join("; "), clip(&lf.frame.raw, 200)));
            }
            if replay.len() < 3 && lf.origin.sent.is_some() && !replay.iter().any(|o| std::sync::Arc::ptr_eq(o, &lf.origin)) {
                replay.push(lf.origin.clone());
            }
        }
        let mut note = format!("{checked} server frames checked against mcpcert's {rev} message schemas");
        if st.frames_dropped > 0 {
            note.push_str(&format!(" ({} later frames were not kept)", st.frames_dropped));
        }
        if count > 0 {
            out.failures.push(format!("{count} of {checked} server frames break the {rev} message schema:\n{}", bad.join("\n")));
        }
        out.exchanges.push(Exchange {
            label: "wire schema audit".into(),
            transport: self.cfg.target.transport().into(),
            note: Some(note),
            ..Default::default()
        });
        for o in replay {
            let mut ex = (*o).clone();
            ex.label = format!("replay: {} (drew an offending frame; it is quoted above)", ex.label);
            // Replays are separate runs: each starts a process or connection of its own.
            ex.fresh = true;
            out.exchanges.push(ex);
        }
        out
    }

    /// `initialize` sent to a 2026-07-28 server: a modern-only server
    /// refuses it and names its versions; a dual-era server answers it.
    async fn initialize_on_modern(&mut self) -> StepOut {
        let mut out = StepOut::default();
        let mut conn = match self.open().await {
            Ok(c) => c,
            Err(e) => {
                out.error = Some(format!("could not open a fresh connection: {e}"));
                return out;
            }
        };
        let id = self.fresh_id();
        let body = wire::request(&id, "initialize", Some(wire::initialize_params(LEGACY)));
        // Sent the way a 2025-11-25 client would: no 2026 headers.
        let mut ex = self.exchange(&mut conn, "initialize (as a 2025-11-25 client)", LEGACY, &body, &[], true).await;
        ex.fresh = true;
        ex.other_era = true;
        if let Conn::Stdio(t) = &mut conn {
            t.shutdown().await;
        }
        if let Some(e) = &ex.error {
            out.error = Some(format!("initialize: {e}"));
        } else if let Some(result) = ex.response.as_ref().and_then(|r| r.get("result")) {
            let v = result.get("protocolVersion").map(wire::brief).unwrap_or_else(|| "no protocolVersion".into());
            out.na = Some(format!(
                "the server answered initialize with a result ({v}): it also serves an initialize-era revision (dual-era, allowed by versioning.mdx), so the rule for modern-only servers does not apply"
            ));
        } else if let Some(err) = ex.response.as_ref().and_then(|r| r.get("error")) {
            let text = err.to_string();
            if !text.contains(MODERN) {
                out.failures.push(format!(
                    "the error for initialize should name the versions the server supports (e.g. {MODERN}); got {}",
                    wire::brief(err)
                ));
            }
        } else {
            out.failures.push(format!(
                "initialize got no JSON-RPC answer; a modern-only server should reply with an error naming its versions; got {}",
                ex.summary()
            ));
        }
        out.exchanges.push(ex);
        out
    }

    /// 2025-11-25 HTTP: after DELETE ends a session, that id gets 404.
    async fn session_terminate_then_404(&mut self) -> StepOut {
        let mut out = StepOut::default();
        let (mut conn, _, mut pre) = match self.fresh_conn(LEGACY, true).await {
            Ok(x) => x,
            Err(e) => {
                out.error = Some(format!("could not open a fresh session: {e}"));
                return out;
            }
        };
        out.exchanges.append(&mut pre);
        let Conn::Http { session, .. } = &conn else {
            out.na = Some("applies to HTTP targets only".into());
            return out;
        };
        if session.is_none() {
            out.na = Some("the server issued no Mcp-Session-Id".into());
            return out;
        }
        let del = self.exchange_raw(&mut conn, "DELETE the session", LEGACY, "DELETE", None, &Value::Null, &[], false).await;
        let status = del.status;
        out.exchanges.push(del);
        match status {
            Some(405) => {
                out.na = Some("the server does not let clients end sessions (DELETE answered 405, which the spec allows)".into());
                return out;
            }
            Some(s) if (200..300).contains(&s) => {}
            other => {
                out.failures.push(format!(
                    "DELETE with the session id should end the session (2xx) or be refused with 405; got {}",
                    other.map(|s| s.to_string()).unwrap_or_else(|| "no status".into())
                ));
                return out;
            }
        }
        let body = self.body_for(LEGACY, "ping", None);
        let ex = self.exchange(&mut conn, "request with the ended session id", LEGACY, &body, &[], true).await;
        if ex.status != Some(404) {
            out.failures.push(format!("a request carrying a session id the server has ended must get HTTP 404; got {}", ex.summary()));
        }
        out.exchanges.push(ex);
        out
    }
}

impl super::TargetSpec {
    pub fn transport_noun(&self) -> &'static str {
        match self {
            super::TargetSpec::Stdio(_) => "process",
            super::TargetSpec::Http(_) => "connection",
        }
    }
}
