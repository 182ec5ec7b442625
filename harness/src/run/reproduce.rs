//! Reproducers: the `mcpcert run` line that reruns a case (or its whole
//! revision, for checks over the whole run), plus `curl` lines (HTTP) or a
//! `printf … | CMD` pipe (stdio) that send what the case sent.

use crate::checks::Scope;
use crate::record::Exchange;
use crate::suite::Case;
use crate::transport::{TargetSpec, shell_quote};
use crate::wire::{self, MetaMode};
use serde_json::json;

/// Shows a `curl -i` reply (on stderr) and keeps the session id it carries.
const SESSION_ID: &str = "tee /dev/stderr | sed -n 's/^[Mm][Cc][Pp]-[Ss][Ee][Ss][Ss][Ii][Oo][Nn]-[Ii][Dd]: *//p' | tr -d '\\r'";

/// The reproducer of a case. HTTP 2025-11-25: every session a line uses
/// that no line opens (the run's own, the negative probes') is opened by an
/// initialize put first.
/// `first_answer_ms`: stdio, how long a new process of the server took to
/// answer its first request in the run (start-up included). `identity`:
/// how the curl lines write the token the run sent on every request
/// (`[auth]`'s valid token, made again: `$(mcpcert auth-token …)`); the
/// header as shown (redacted) when None.
pub fn reproducer(
    case: &Case,
    transcript: &[Exchange],
    rerun_base: &str,
    target: &TargetSpec,
    first_answer_ms: u64,
    identity: Option<&str>,
) -> String {
    let whole_run = case.checks().any(|c| c.scope() == Scope::Run);
    let mut out = if whole_run {
        // Run alone, this check would see only its own traffic.
        vec![format!("rerun (this check judges all traffic of the run, so rerun the revision): {rerun_base} --revision {}", case.revision)]
    } else {
        vec![format!("rerun: {rerun_base} --revision {} --exact {}", case.revision, shell_quote(&case.id))]
    };
    match target {
        TargetSpec::Stdio(s) => {
            // Started as the run started it (its folder, its environment).
            let cmd = s.shell_line();
            // Standard input stays open a while after the last line: a
            // server may stop at the end of its input before it has answered
            // what it read (the Python SDK's does), so a bare `printf | CMD`
            // lost the last answers of a slow request.
            let pipe = |lines: &[String], ms: u64| {
                format!(
                    "{{ printf '%s\\n' {}; sleep {}; }} | {cmd}",
                    lines.iter().map(|l| shell_quote(l)).collect::<Vec<_>>().join(" "),
                    stdin_grace_s(first_answer_ms, ms)
                )
            };
            let mut lines: Vec<String> = Vec::new();
            // How long the run waited for the answers of the lines piped so far.
            let mut waited = 0u64;
            // A fresh process's handshake is shown in the transcript and
            // again as the preamble of its first exchange: piped once.
            let preambles: std::collections::HashSet<&str> =
                transcript.iter().filter(|e| e.fresh).flat_map(|e| e.preamble.iter().map(String::as_str)).collect();
            for ex in transcript {
                if !ex.fresh && ex.label.starts_with("handshake:") && ex.sent.as_deref().is_some_and(|t| preambles.contains(t)) {
                    continue;
                }
                if ex.fresh || lines.is_empty() {
                    if !lines.is_empty() {
                        out.push(pipe(&lines, waited));
                        lines.clear();
                        waited = 0;
                    }
                    lines.extend(ex.preamble.iter().cloned());
                }
                if let Some(t) = &ex.sent {
                    lines.push(t.clone());
                    waited += ex.ms;
                }
            }
            if !lines.is_empty() {
                out.push(pipe(&lines, waited));
            } else if !out.iter().any(|l| l.starts_with("{ printf")) {
                // A check over the whole session: show how to watch the raw output.
                let rev = case.revision;
                let starter = if rev.is_stateless() {
                    wire::request(&json!(1), "server/discover", wire::modern_params(None, MetaMode::Full, rev.as_str()))
                } else {
                    wire::request(&json!(1), "initialize", Some(wire::initialize_params(rev.as_str())))
                };
                out.push(pipe(&[starter.to_string()], 0));
            }
        }
        TargetSpec::Http(h) if h.sse.get() => {
            // HTTP with SSE (2024-11-05): messages go to the endpoint the
            // stream names; answers come on the stream.
            let own: String = h
                .headers
                .iter()
                .map(|(k, _)| match h.header_env.iter().find(|(n, _)| n.eq_ignore_ascii_case(k)) {
                    Some((_, var)) => header_arg(k, &format!("[redacted: ${var}]")),
                    None => format!(" -H {}", shell_quote(&format!("{k}: [as in the config]"))),
                })
                .collect();
            out.push(format!(
                "# HTTP with SSE: keep this stream open; its `endpoint` event names ENDPOINT, and the answers come on it\ncurl -sS -N -H 'Accept: text/event-stream'{own} {}",
                shell_quote(&h.url)
            ));
            out.push("# then, in another shell, with ENDPOINT set to that URL (resolved against the stream's):".into());
            let mut bodies: Vec<String> = transcript.iter().find(|e| e.sent.is_some()).map(|e| e.preamble.clone()).unwrap_or_default();
            bodies.extend(transcript.iter().filter(|e| e.http_method.is_some()).filter_map(|e| e.sent.clone()));
            for b in bodies {
                out.push(format!(
                    "curl -sS -i -X POST \"$ENDPOINT\" -H 'Content-Type: application/json'{own} --data-binary {}",
                    shell_quote(&b)
                ));
            }
        }
        TargetSpec::Http(h) => {
            let url = shell_quote(&h.url);
            // Sessions (2025-11-25) are the server's: the ids the run saw
            // are gone. Each session a line uses is opened again and its
            // id kept in a shell variable: the run's own (opened by its
            // probe) by an initialize put first; one a case opened, by that
            // case's own initialize line.
            let mut sessions: Vec<(String, String)> = Vec::new();
            let sent_session =
                |e: &Exchange| e.sent_headers.iter().find(|(k, _)| k.eq_ignore_ascii_case("mcp-session-id")).map(|(_, v)| v.clone());
            // The session an exchange opened: the id its reply carries, unless
            // the request itself was sent in that session (a server may echo
            // the id on every reply, as the TypeScript SDK's does).
            let opened_by = |e: &Exchange| e.header("mcp-session-id").map(String::from).filter(|v| sent_session(e).as_ref() != Some(v));
            // Sessions the lines use that none of them opens (the run's own,
            // opened by its probe, or the negative probes' session): each is
            // opened by an initialize put first, its id kept in a variable.
            let mut unopened: Vec<String> = Vec::new();
            for e in transcript {
                if let Some(v) = sent_session(e)
                    && !unopened.contains(&v)
                    && !transcript.iter().any(|o| opened_by(o).as_deref() == Some(v.as_str()))
                {
                    unopened.push(v);
                }
            }
            for v in unopened {
                let Some(first) = transcript.iter().find(|e| sent_session(e).as_deref() == Some(v.as_str())) else { continue };
                let var = if sessions.is_empty() { "sid".to_string() } else { format!("sid{}", sessions.len() + 1) };
                // The target's own headers (as shown: secrets redacted; they
                // come first in every exchange's) go with the handshake too.
                let own: String = first
                    .sent_headers
                    .iter()
                    .take(h.headers.len())
                    .map(|(k, v)| match authorization(k, first, identity) {
                        Some(token) => format!(" -H \"{k}: Bearer {token}\""),
                        None => header_arg(k, v),
                    })
                    .collect();
                // Header names written as the run wrote that session's
                // (the HTTP client in lower case, a server that needs them
                // exact with their letters).
                let lower = first.sent_headers.iter().all(|(k, _)| !k.bytes().any(|b| b.is_ascii_uppercase()));
                let name = |n: &str| if lower { n.to_ascii_lowercase() } else { n.to_string() };
                let (ct, accept) = (name("Content-Type"), name("Accept"));
                let init = wire::request(&json!(1), "initialize", Some(wire::initialize_params(case.revision.as_str())));
                out.push(format!(
                    "{var}=$(curl -sS -i -X POST {url} -H '{ct}: application/json' -H '{accept}: application/json, text/event-stream'{own} --data-binary {} | {SESSION_ID})",
                    shell_quote(&init.to_string())
                ));
                let note = wire::notification("notifications/initialized", None);
                let version = if case.revision.has(wire::Feature::ProtocolVersionHeader) {
                    format!(" -H '{}: {}'", name("MCP-Protocol-Version"), case.revision.as_str())
                } else {
                    String::new()
                };
                out.push(format!(
                    "curl -sS -X POST {url} -H '{ct}: application/json' -H '{accept}: application/json, text/event-stream'{version} -H \"{}: ${var}\"{own} --data-binary {}",
                    name("Mcp-Session-Id"),
                    shell_quote(&note.to_string())
                ));
                sessions.push((v, var));
            }
            let http: Vec<&Exchange> = transcript.iter().filter(|e| e.http_method.is_some()).collect();
            for (i, ex) in http.iter().enumerate() {
                let method = ex.http_method.as_deref().unwrap_or("POST");
                // An exchange that opened a session the later lines use.
                let opened = opened_by(ex)
                    .filter(|v| !sessions.iter().any(|(s, _)| s == v) && transcript.iter().any(|e| sent_session(e).as_deref() == Some(v)));
                let to = ex.shell_url.clone().unwrap_or_else(|| url.clone());
                // A stream the run read for a while, not to its end: curl
                // reads it about as long (a stream may never end).
                let max_time = if ex.stream { format!(" --max-time {}", ex.ms.div_ceil(1000) + 1) } else { String::new() };
                let mut c = match &opened {
                    Some(_) => format!("sid{}=$(curl -sS -i{max_time} -X {method} {to}", sessions.len() + 1),
                    None => format!("curl -sS -i{max_time} -X {method} {to}"),
                };
                for (k, v) in &ex.sent_headers {
                    match sessions.iter().find(|(s, _)| k.eq_ignore_ascii_case("mcp-session-id") && s == v) {
                        Some((_, var)) => c.push_str(&format!(" -H \"{k}: ${var}\"")),
                        // The token, made again (never shown).
                        None if let Some(token) = authorization(k, ex, identity) => c.push_str(&format!(" -H \"{k}: Bearer {token}\"")),
                        None => c.push_str(&header_arg(k, v)),
                    }
                }
                if let Some(b) = &ex.sent {
                    c.push_str(&format!(" --data-binary {}", shell_quote(b)));
                }
                // Requests the run sent at the same time go out together (in
                // the background), then `wait`.
                let together = ex.together && opened.is_none();
                if let Some(v) = opened {
                    c.push_str(&format!(" | {SESSION_ID})"));
                    sessions.push((v, format!("sid{}", sessions.len() + 1)));
                }
                if together {
                    c.push_str(" &");
                }
                out.push(c);
                if together && !http.get(i + 1).is_some_and(|n| n.together) {
                    out.push("wait".into());
                }
            }
        }
    }
    out.join("\n")
}

/// ` -H 'k: v'`; a secret header the config read from a variable (shown
/// `[redacted: $VAR]`) reads it again: ` -H "k: ${VAR}"`.
fn header_arg(k: &str, v: &str) -> String {
    match v.strip_prefix("[redacted: $").and_then(|r| r.strip_suffix(']')) {
        Some(var) if !var.is_empty() && var.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') => format!(" -H \"{k}: ${{{var}}}\""),
        _ => format!(" -H {}", shell_quote(&format!("{k}: {v}"))),
    }
}

/// How a curl line writes header `k` of `ex` when it is the Authorization
/// header: an authorization case's token (`shell_authorization`), or else
/// the run's own (`identity`), as shell words that make it again; None for
/// any other header, or a token the line cannot make (shown as the run
/// showed it).
fn authorization<'a>(k: &str, ex: &'a Exchange, identity: Option<&'a str>) -> Option<&'a str> {
    if !k.eq_ignore_ascii_case("authorization") {
        return None;
    }
    match ex.shell_authorization.as_deref() {
        Some("") => None,
        Some(token) => Some(token),
        None => identity,
    }
}

/// Seconds a stdio reproducer keeps the server's input open after its last
/// line: time to start (3 s, or four times the longest the run's new
/// processes took to give their first answer if that is more: a run starts
/// few processes, mostly on a quiet machine, while a Python server can take
/// several times as long to import on a busy one) and twice what the run
/// waited for those lines' answers, in whole seconds.
fn stdin_grace_s(first_answer_ms: u64, waited_ms: u64) -> u64 {
    (3000.max(4 * first_answer_ms) + 2 * waited_ms).div_ceil(1000)
}
