//! Checks over everything the server sent during a revision's run (the
//! frame log, or stdout as a whole), not over traffic of their own. Their
//! suite entries come last in a revision, so they see the whole run.

use super::judge::input::{MAY_ASK, undeclared_requests};
use super::judge::notify::{Seen, log_problems, progress_problems};
use super::judge::tasks::{TASKS_EXTENSION, declares_extension, is_task_handle};
use super::{Check, Cx, Need, Outcome, Scope};
use crate::record::Transport;
use crate::record::{Exchange, clip};
use crate::wire::Revision;
use serde::Deserialize;
use serde_json::Value;
use std::sync::Arc;

/// stdout holds nothing but JSON-RPC messages, one per line.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StdoutOnlyJsonrpc {}

impl Check for StdoutOnlyJsonrpc {
    const NAME: &'static str = "stdout_only_jsonrpc";
    const ABOUT: &'static str = "every line the main process wrote to stdout is one JSON-RPC message";
    const SCOPE: Scope = Scope::Run;

    fn needs(&self) -> Vec<Need> {
        vec![Need::Transport(Transport::Stdio)]
    }

    async fn run(&self, cx: &Cx<'_>) -> Outcome {
        let audit = match cx.session.main(cx.rev).await {
            Ok(conn) => conn.stdout_audit(),
            Err(_) => None,
        };
        let Some(a) = audit else {
            return Outcome::na("stdio framing applies to stdio targets");
        };
        if a.lines == 0 {
            return Outcome::na("the process wrote nothing on stdout, so there is nothing to judge");
        }
        let mut out = Outcome::default();
        if a.bad_count > 0 {
            let mut lines = vec![format!("{} of {} stdout lines were not one JSON-RPC message:", a.bad_count, a.lines)];
            for f in a.bad.iter().take(5) {
                lines.push(format!("  - {:?}: {}", clip(&f.raw, 160), f.problem.as_deref().unwrap_or("")));
            }
            out.fail(lines.join("\n"));
        }
        out
    }
}

/// A 2026-07-28 server sends no JSON-RPC requests.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NoServerRequests {}

impl Check for NoServerRequests {
    const NAME: &'static str = "no_server_requests";
    const ABOUT: &'static str = "the server sent no JSON-RPC requests during the run";
    const SCOPE: Scope = Scope::Run;
    const REVISIONS: &'static [Revision] = &Revision::STATELESS;

    async fn run(&self, cx: &Cx<'_>) -> Outcome {
        let mut out = Outcome::default();
        let mut seen: Vec<String> = Vec::new();
        let mut count = 0u64;
        let audit = match cx.session.main(cx.rev).await {
            Ok(conn) => conn.stdout_audit(),
            Err(_) => None,
        };
        let mut frames = 0u64;
        if let Some(a) = audit {
            count = a.request_count;
            frames = a.lines;
            seen = a.requests.iter().take(5).map(|f| clip(&f.raw, 160)).collect();
        } else if let Some(log) = cx.session.frame_log(cx.rev) {
            frames = log.frames.len() as u64;
            for lf in log.in_order() {
                if lf.shape.server_request {
                    count += 1;
                    if seen.len() < 5 {
                        seen.push(clip(&lf.frame.raw, 160));
                    }
                }
            }
        }
        if frames == 0 {
            return Outcome::na("the server sent nothing during the run, so there is nothing to judge");
        }
        if count > 0 {
            out.fail(format!(
                "the server sent {count} JSON-RPC request(s); 2026-07-28 servers must not send requests:\n  - {}",
                seen.join("\n  - ")
            ));
        }
        out
    }
}

/// Whether a logged reply is a task handle to a request carrying
/// `params.task` (2025-11-25's task-augmented call).
fn legacy_task_handle(lf: &crate::session::LoggedFrame) -> bool {
    let asked =
        lf.origin.sent.as_deref().and_then(|s| serde_json::from_str::<Value>(s).ok()).is_some_and(|r| r.pointer("/params/task").is_some());
    asked && lf.parsed().value.and_then(|v| v.get("result").cloned()).is_some_and(|r| is_task_handle(&r))
}

/// Every frame the server sent is valid against mcpcert's wire schema.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WireFramesValid {}

impl Check for WireFramesValid {
    const NAME: &'static str = "wire_frames_valid";
    const ABOUT: &'static str = "every server frame of the run is valid against mcpcert's message schema of the revision";
    const SCOPE: Scope = Scope::Run;

    async fn run(&self, cx: &Cx<'_>) -> Outcome {
        let mut out = Outcome::default();
        let Some(log) = cx.session.frame_log(cx.rev) else { return out };
        let mut bad: Vec<String> = Vec::new();
        let mut more: Vec<(String, usize)> = Vec::new();
        let mut count = 0usize;
        let mut checked = 0usize;
        // The exchanges that drew the first offending frames, to replay them.
        let mut replay: Vec<Arc<Exchange>> = Vec::new();
        // Error responses with "id": null to a request whose id could not
        // be read (JSON-RPC's rule there; the MCP schema leaves the member
        // out): not failed, counted for the note.
        let mut null_unread = 0usize;
        // Results of a resultType the core does not define (a task
        // handle, or a value of no extension): no core message; the
        // audits of result types judge them (which values, to whom), so that
        // one defect is one failure.
        let mut tasks = 0usize;
        for lf in log.in_order() {
            if matches!(&lf.shape.result, Some(Some(t)) if t != "complete" && t != "input_required") {
                tasks += 1;
                continue;
            }
            // Judged when it was filed.
            let Some((t, viol)) = &lf.schema else { continue };
            checked += 1;
            let method = lf.origin.rpc_method.as_deref();
            if viol.is_empty() {
                continue;
            }
            // 2025-11-25: a task handle answering a tools/call that asked
            // for a task (params.task) is no CallToolResult; the tasks
            // cases judge its shape (2025-11-25/tasks/create-shape).
            if !cx.rev.is_stateless() && method == Some("tools/call") && legacy_task_handle(lf) {
                tasks += 1;
                continue;
            }
            let (viol, said) = match null_id(lf) {
                NullId::No => (viol.iter().map(|x| x.to_string()).collect::<Vec<_>>(), None),
                NullId::Unreadable => {
                    null_unread += 1;
                    (viol.iter().filter(|x| x.path != "/id").map(|x| x.to_string()).collect(), None)
                }
                NullId::Readable(id) => (
                    viol.iter().filter(|x| x.path != "/id").map(|x| x.to_string()).collect(),
                    Some(format!(
                        "the error's id is null, but the request's id {id} could be read: \"Error responses MUST include the same ID as the request they correspond to (except in error cases where the ID could not be read due a malformed request)\" (basic#responses; JSON-RPC 2.0 too allows null only then)"
                    )),
                ),
            };
            if viol.is_empty() && said.is_none() {
                continue;
            }
            count += 1;
            if bad.len() >= 10 {
                // Past the tenth: counted per case, to say where they are.
                match more.iter_mut().find(|(c, _)| *c == lf.case) {
                    Some(m) => m.1 += 1,
                    None => more.push((lf.case.clone(), 1)),
                }
            }
            if bad.len() < 10 {
                let what = method.map(|m| format!(" (reply to {m}, in {})", lf.case)).unwrap_or_else(|| format!(" (in {})", lf.case));
                // The log keeps the first three, clipped.
                let first: Vec<String> = said.into_iter().chain(viol).collect();
                bad.push(format!("  - {t}{what}: {}\n      frame: {}", first.join("; "), clip(&lf.frame.raw, 200)));
            }
            if replay.len() < 3 && lf.origin.sent.is_some() && !replay.iter().any(|o| Arc::ptr_eq(o, &lf.origin)) {
                replay.push(lf.origin.clone());
            }
        }
        let mut note = format!("{checked} server frames checked against mcpcert's {} message schemas", cx.rev);
        if null_unread > 0 {
            note.push_str(&format!(
                "; {null_unread} error response(s) carry \"id\": null to a request whose id could not be read: JSON-RPC 2.0 requires null there (\"If there was an error in detecting the id in the Request object (e.g. Parse error/Invalid Request), it MUST be Null\"), while MCP's schema leaves the member out (its base protocol excepts such errors from the same-ID rule); neither form is failed"
            ));
        }
        if tasks > 0 && !cx.rev.is_stateless() {
            note.push_str(&format!(
                "; {tasks} task handle(s) answering a tools/call with params.task (2025-11-25's CreateTaskResult) left to the tasks cases (2025-11-25/tasks/create-shape)"
            ));
        } else if tasks > 0 {
            note.push_str(&format!(
                "; {tasks} result(s) whose resultType is neither complete nor input_required (a task handle, or an extension's value) left to the result-type audits (wire/result-types-advertised, wire/no-task-unless-declared)"
            ));
        }
        if log.dropped > 0 {
            note.push_str(&format!(" ({} later frames were not kept)", log.dropped));
        }
        drop(log);
        if checked == 0 {
            return Outcome::na("the server sent no JSON-RPC message during the run, so there is nothing to judge");
        }
        if count > 0 {
            let mut m = format!("{count} of {checked} server frames break the {} message schema:\n{}", cx.rev, bad.join("\n"));
            if !more.is_empty() {
                let n: usize = more.iter().map(|(_, n)| n).sum();
                let at: Vec<String> = more.iter().map(|(c, n)| format!("{c} ({n})")).collect();
                m.push_str(&format!(
                    "\n  … and {n} more, drawn by: {} (in report.json, each frame is in the transcript of the case named)",
                    at.join(", ")
                ));
            }
            out.fail(m);
        }
        out.exchanges.push(Exchange {
            label: "wire schema audit".into(),
            transport: Some(cx.transport()),
            note: Some(note),
            ..Default::default()
        });
        for o in replay {
            // A request on a session a DELETE had ended: the DELETE first,
            // or the replay asks a live session and gets another answer.
            for d in cx.session.ended_before(&o) {
                let mut del = (*d).clone();
                del.label = format!("replay: {} (it ended the session before the request below)", del.label);
                out.exchanges.push(del);
            }
            let mut ex = (*o).clone();
            ex.label = format!("replay: {} (drew an offending frame; it is quoted above)", ex.label);
            // Replays are separate runs: each starts a process or connection of its own.
            ex.fresh = true;
            out.exchanges.push(ex);
        }
        out
    }
}

/// What an error response's `"id": null` answers.
enum NullId {
    /// Not an error response with id null.
    No,
    /// The request's id could not be read (no JSON, no id, a batch).
    Unreadable,
    /// The request's id, which the response should have carried.
    Readable(String),
}

fn null_id(lf: &crate::session::LoggedFrame) -> NullId {
    if !lf.frame.raw.contains("null") {
        return NullId::No;
    }
    let Some(v) = lf.parsed().value else { return NullId::No };
    if v.get("id") != Some(&Value::Null) || v.get("error").is_none() {
        return NullId::No;
    }
    let id = lf.origin.sent.as_deref().and_then(|s| serde_json::from_str::<Value>(s).ok()).and_then(|r| r.get("id").cloned());
    match id {
        Some(i) if i.is_string() || i.is_i64() || i.is_u64() => NullId::Readable(crate::wire::brief(&i)),
        _ => NullId::Unreadable,
    }
}

/// Only tools/call, prompts/get and resources/read answer input_required.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InputRequiredAudit {}

impl Check for InputRequiredAudit {
    const NAME: &'static str = "input_required_audit";
    const ABOUT: &'static str = "no result of the run other than tools/call, prompts/get and resources/read is input_required";
    const SCOPE: Scope = Scope::Run;
    const REVISIONS: &'static [Revision] = &Revision::STATELESS;

    async fn run(&self, cx: &Cx<'_>) -> Outcome {
        let mut out = Outcome::default();
        let Some(log) = cx.session.frame_log(cx.rev) else { return out };
        let mut bad = Vec::new();
        let mut checked = 0;
        for lf in log.in_order() {
            let Some(result_type) = &lf.shape.result else { continue };
            let Some(method) = lf.origin.rpc_method.as_deref() else { continue };
            checked += 1;
            if result_type.as_deref() == Some("input_required") && !MAY_ASK.contains(&method) && bad.len() < 10 {
                bad.push(format!("  - reply to {method} (in {}): {}", lf.case, clip(&lf.frame.raw, 160)));
            }
        }
        drop(log);
        if checked == 0 {
            return Outcome::na("the server answered no request with a result during the run, so there is nothing to judge");
        }
        out.exchanges.push(Exchange::note("input_required audit", format!("{checked} results checked")));
        if !bad.is_empty() {
            out.fail(format!("only tools/call, prompts/get and resources/read may answer input_required; these did:\n{}", bad.join("\n")));
        }
        out
    }
}

/// No input request of the run asks for a kind its request did not declare.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InputRequestsDeclaredAudit {
    /// Cases that judge this rule on traffic of their own (they send
    /// requests declaring nothing, on purpose): their frames are theirs to
    /// judge, so that one defect is one failure.
    #[serde(default)]
    except: Vec<String>,
}

impl Check for InputRequestsDeclaredAudit {
    const NAME: &'static str = "input_requests_declared_audit";
    const ABOUT: &'static str = "every input_required result of the run asks only for kinds of input (elicitation and its mode, sampling, roots) that its request declared in its client capabilities";
    const SCOPE: Scope = Scope::Run;
    const REVISIONS: &'static [Revision] = &Revision::STATELESS;

    async fn run(&self, cx: &Cx<'_>) -> Outcome {
        let mut out = Outcome::default();
        let Some(log) = cx.session.frame_log(cx.rev) else { return out };
        let (mut bad, mut asked, mut count) = (Vec::new(), 0, 0);
        let caps = format!("/params/_meta/{}", crate::wire::KEY_CLIENT_CAPS.replace('~', "~0").replace('/', "~1"));
        for lf in log.in_order() {
            if lf.shape.result.as_ref().and_then(|t| t.as_deref()) != Some("input_required") || self.except.contains(&lf.case) {
                continue;
            }
            let Some(result) = lf.parsed().value.and_then(|v| v.get("result").cloned()) else { continue };
            asked += 1;
            let request = lf.origin.sent.as_deref().and_then(|s| serde_json::from_str::<Value>(s).ok());
            let declared = request.as_ref().and_then(|r| r.pointer(&caps));
            let problems = undeclared_requests(declared, &result);
            count += problems.len();
            let method = lf.origin.rpc_method.as_deref().unwrap_or("?");
            for p in problems.into_iter().take(10usize.saturating_sub(bad.len())) {
                bad.push(format!("  - reply to {method} ({}, in {}): {p}", lf.origin.label, lf.case));
            }
        }
        drop(log);
        if asked == 0 {
            return Outcome::na(
                "no reply of the run was input_required (outside the cases that judge this rule themselves), so no input request could ask for what its request did not declare",
            );
        }
        out.exchanges.push(Exchange::note("input request audit", format!("{asked} input_required results checked")));
        if !bad.is_empty() {
            out.fail(format!(
                "{count} input request(s) ask for what their request did not declare in its client capabilities; a server that needs it answers -32021 instead:\n{}",
                bad.join("\n")
            ));
        }
        out
    }
}

/// The notifications of the run that came with a request's reply, parsed,
/// with that request's body and where it was. Only what `keep` picks.
fn notifications_with_requests(cx: &Cx<'_>, keep: &[&str]) -> (Vec<(Value, Option<Value>, String)>, u64) {
    let mut out = Vec::new();
    let Some(log) = cx.session.frame_log(cx.rev) else { return (out, 0) };
    // A notification on a 2025-11-25 GET stream came with no request of
    // its own: it belongs to the request whose progressToken it names,
    // if one was sent (a progress report may come on any stream).
    let mut by_token: std::collections::HashMap<String, (Value, String)> = Default::default();
    let mut origins = std::collections::HashSet::new();
    for lf in log.in_order() {
        // Each request once, however many frames it drew.
        if !origins.insert(std::sync::Arc::as_ptr(&lf.origin)) {
            continue;
        }
        // Only a request that names a progress token is parsed (mcpcert
        // wrote it: a key is never escaped): parsing every request of the
        // run, twice (two audits), took a millisecond or more.
        if let Some(body) =
            lf.origin.sent.as_deref().filter(|s| s.contains("progressToken")).and_then(|s| serde_json::from_str::<Value>(s).ok())
            && let Some(t) = body.pointer("/params/_meta/progressToken")
        {
            let m = body.get("method").and_then(|m| m.as_str()).unwrap_or("?").to_string();
            by_token.entry(t.to_string()).or_insert((body.clone(), format!("{m}, in {}", lf.case)));
        }
    }
    for lf in log.in_order() {
        if !lf.shape.notification.as_deref().is_some_and(|m| keep.contains(&m)) {
            continue;
        }
        let Some(v) = lf.parsed().value else { continue };
        let mut request = lf.origin.sent.as_deref().and_then(|s| serde_json::from_str::<Value>(s).ok());
        let mut place = match lf.origin.rpc_method.as_deref() {
            Some(m) => format!("with the reply to {m}, in {}", lf.case),
            None => format!("in {}", lf.case),
        };
        if request.is_none()
            && lf.origin.http_method.as_deref() == Some("GET")
            && let Some((body, what)) = v.pointer("/params/progressToken").and_then(|t| by_token.get(&t.to_string()))
        {
            request = Some(body.clone());
            place = format!("on the session's GET stream, for {what}");
        }
        out.push((v, request, place));
    }
    (out, log.frames.len() as u64)
}

/// 2026-07-28: log messages only for a request that asked, at its level.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LogMessagesAudit {}

impl Check for LogMessagesAudit {
    const NAME: &'static str = "log_messages_audit";
    const ABOUT: &'static str = "every notifications/message of the run came with a request whose _meta set io.modelcontextprotocol/logLevel, at or above that level, from a server that declares capabilities.logging";
    const SCOPE: Scope = Scope::Run;
    const REVISIONS: &'static [Revision] = &Revision::STATELESS;

    async fn run(&self, cx: &Cx<'_>) -> Outcome {
        let (found, frames) = notifications_with_requests(cx, &["notifications/message"]);
        if frames == 0 {
            return Outcome::na("the server sent nothing during the run, so there is nothing to judge");
        }
        let seen: Vec<Seen<'_>> = found.iter().map(|(f, r, p)| Seen { frame: f, request: r.as_ref(), place: p.clone() }).collect();
        let (problems, count) = log_problems(&seen, cx.advertises("logging"));
        let mut out = Outcome::default();
        out.exchanges.push(Exchange::note("log message audit", format!("{count} notifications/message among {frames} server frames")));
        if !problems.is_empty() {
            let shown: Vec<String> = problems.iter().take(10).map(|p| format!("  - {p}")).collect();
            out.fail(format!("{} log message problem(s):\n{}", problems.len(), shown.join("\n")));
        }
        out
    }
}

/// Progress only for the token of the request it came with, increasing.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProgressAudit {}

impl Check for ProgressAudit {
    const NAME: &'static str = "progress_audit";
    const ABOUT: &'static str =
        "every notifications/progress of the run names the progressToken of the request it came with, and progress increases per token";
    const SCOPE: Scope = Scope::Run;

    async fn run(&self, cx: &Cx<'_>) -> Outcome {
        let (found, frames) = notifications_with_requests(cx, &["notifications/progress"]);
        if frames == 0 {
            return Outcome::na("the server sent nothing during the run, so there is nothing to judge");
        }
        let seen: Vec<Seen<'_>> = found.iter().map(|(f, r, p)| Seen { frame: f, request: r.as_ref(), place: p.clone() }).collect();
        let (problems, count) = progress_problems(&seen);
        let mut out = Outcome::default();
        out.exchanges.push(Exchange::note(
            "progress audit",
            format!("{count} notifications/progress among {frames} server frames (tool calls carry a progressToken)"),
        ));
        if !problems.is_empty() {
            let shown: Vec<String> = problems.iter().take(10).map(|p| format!("  - {p}")).collect();
            out.fail(format!("{} progress problem(s):\n{}", problems.len(), shown.join("\n")));
        }
        out
    }
}

/// 2025-11-25: a `notifications/tasks/status` (which a server MAY send)
/// carries no related-task `_meta`: the task id is in its params.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TaskStatusNotificationsAudit {}

impl Check for TaskStatusNotificationsAudit {
    const NAME: &'static str = "task_status_notifications_audit";
    const ABOUT: &'static str =
        "2025-11-25: no notifications/tasks/status of the run carries _meta[\"io.modelcontextprotocol/related-task\"]";
    const SCOPE: Scope = Scope::Run;
    const REVISIONS: &'static [Revision] = &[Revision::R2025_11_25];

    async fn run(&self, cx: &Cx<'_>) -> Outcome {
        let (found, frames) = notifications_with_requests(cx, &["notifications/tasks/status"]);
        if found.is_empty() {
            return Outcome::na(format!(
                "no notifications/tasks/status came among the run's {frames} server frames (a server MAY send them), so there is none to judge"
            ));
        }
        let mut out = Outcome::default();
        out.exchanges
            .push(Exchange::note("task status audit", format!("{} notifications/tasks/status among {frames} server frames", found.len())));
        let related: Vec<String> = found
            .iter()
            .filter(|(f, _, _)| f.pointer("/params/_meta").and_then(|m| m.get("io.modelcontextprotocol/related-task")).is_some())
            .map(|(f, _, place)| format!("  - {} (with {place})", crate::wire::brief(f)))
            .collect();
        if !related.is_empty() {
            let shown: Vec<String> = related.iter().take(10).cloned().collect();
            out.fail(format!(
                "{} notifications/tasks/status carry the related-task _meta, which they should not (the task id is already in their params):\n{}",
                related.len(),
                shown.join("\n")
            ));
        }
        out
    }
}

/// 2026-07-28: every result's `resultType` is a core value or one of an
/// extension the server advertises.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ResultTypesAudit {}

impl Check for ResultTypesAudit {
    const NAME: &'static str = "result_types_audit";
    const ABOUT: &'static str = "every result of the run has resultType complete or input_required, or a value of an extension the server advertises (task: the tasks extension, to a request that declared it)";
    const SCOPE: Scope = Scope::Run;
    const REVISIONS: &'static [Revision] = &Revision::STATELESS;

    async fn run(&self, cx: &Cx<'_>) -> Outcome {
        let mut out = Outcome::default();
        let Some(log) = cx.session.frame_log(cx.rev) else { return out };
        let tasks = cx.advertises_extension(TASKS_EXTENSION);
        let (mut bad, mut count, mut results) = (Vec::new(), 0usize, 0usize);
        for lf in log.in_order() {
            // A result without resultType breaks the message schema
            // (wire/server-frames-valid judges it).
            let Some(Some(rt)) = &lf.shape.result else { continue };
            results += 1;
            let ok = match rt.as_str() {
                "complete" | "input_required" => true,
                // A task handle to a request that did not declare the
                // extension is wire/no-task-unless-declared's finding; to one
                // that did, it is this rule's when the server does not
                // advertise tasks.
                "task" => {
                    tasks || {
                        let request = lf.origin.sent.as_deref().and_then(|s| serde_json::from_str::<Value>(s).ok());
                        !declares_extension(request.as_ref(), TASKS_EXTENSION)
                    }
                }
                _ => false,
            };
            if !ok {
                count += 1;
                if bad.len() < 10 {
                    let method = lf.origin.rpc_method.as_deref().unwrap_or("?");
                    bad.push(format!("  - reply to {method} ({}, in {}): resultType {rt:?}", lf.origin.label, lf.case));
                }
            }
        }
        drop(log);
        if results == 0 {
            return Outcome::na("the server sent no result during the run, so there is nothing to judge");
        }
        let advertised = cx
            .session
            .info(cx.rev)
            .and_then(|i| {
                i.capabilities
                    .as_ref()
                    .and_then(|c| c.get("extensions"))
                    .and_then(|e| e.as_object())
                    .map(|e| e.keys().cloned().collect::<Vec<_>>())
            })
            .unwrap_or_default();
        out.exchanges.push(Exchange::note(
            "result type audit",
            format!(
                "{results} results checked; extensions advertised in server/discover: {}",
                if advertised.is_empty() { "none".to_string() } else { advertised.join(", ") }
            ),
        ));
        if count > 0 {
            out.fail(format!(
                "{count} result(s) carry a resultType that is neither core (complete, input_required) nor defined by an extension the server advertises in capabilities.extensions:\n{}",
                bad.join("\n")
            ));
        }
        out
    }
}

/// 2026-07-28: no task handle to a request that did not declare the tasks
/// extension in its own client capabilities.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NoTaskUnlessDeclaredAudit {}

impl Check for NoTaskUnlessDeclaredAudit {
    const NAME: &'static str = "no_task_unless_declared_audit";
    const ABOUT: &'static str = "no result of the run is a task handle (resultType task, or a task's taskId and status) to a request that did not declare the io.modelcontextprotocol/tasks extension in its own client capabilities";
    const SCOPE: Scope = Scope::Run;
    const REVISIONS: &'static [Revision] = &Revision::STATELESS;

    async fn run(&self, cx: &Cx<'_>) -> Outcome {
        let mut out = Outcome::default();
        let Some(log) = cx.session.frame_log(cx.rev) else { return out };
        let (mut bad, mut count, mut results) = (Vec::new(), 0usize, 0usize);
        for lf in log.in_order() {
            let Some(rt) = &lf.shape.result else { continue };
            results += 1;
            // Only a result that may be a task handle is parsed: one marked
            // task, or one of tools/call (the method tasks augment) marked
            // otherwise or not at all.
            let call = lf.origin.rpc_method.as_deref() == Some("tools/call");
            if rt.as_deref() != Some("task") && !call {
                continue;
            }
            let Some(result) = lf.parsed().value.and_then(|v| v.get("result").cloned()) else { continue };
            if !is_task_handle(&result) {
                continue;
            }
            let request = lf.origin.sent.as_deref().and_then(|s| serde_json::from_str::<Value>(s).ok());
            if declares_extension(request.as_ref(), TASKS_EXTENSION) {
                continue;
            }
            count += 1;
            if bad.len() < 10 {
                let method = lf.origin.rpc_method.as_deref().unwrap_or("?");
                bad.push(format!("  - reply to {method} ({}, in {}): {}", lf.origin.label, lf.case, clip(&lf.frame.raw, 200)));
            }
        }
        drop(log);
        if results == 0 {
            return Outcome::na("the server sent no result during the run, so there is nothing to judge");
        }
        out.exchanges.push(Exchange::note(
            "task handle audit",
            format!("{results} results checked; no request of the run declared the tasks extension unless a tasks case sent it"),
        ));
        if count > 0 {
            out.fail(format!(
                "{count} task handle(s) answered a request that did not declare {TASKS_EXTENSION} in its client capabilities; such a request gets its ordinary result, or -32021 naming the extension when the server cannot serve it without a task:\n{}",
                bad.join("\n")
            ));
        }
        out
    }
}
