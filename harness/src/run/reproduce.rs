//! Reproducers: the `mcpcert run` line that reruns a case (or its whole
//! revision, for checks over the whole run), plus `curl` lines (HTTP) or a
//! `printf … | CMD` pipe (stdio) that send what the case sent.

use crate::checks::Scope;
use crate::record::Exchange;
use crate::suite::Case;
use crate::transport::{TargetSpec, shell_quote};
use crate::wire::{self, MetaMode, Revision};
use serde_json::json;

pub fn reproducer(case: &Case, transcript: &[Exchange], rerun_base: &str, target: &TargetSpec) -> String {
    let whole_run = case.checks().any(|c| c.scope() == Scope::Run);
    let mut out = if whole_run {
        // Run alone, this check would see only its own traffic.
        vec![format!("rerun (this check judges all traffic of the run, so rerun the revision): {rerun_base} --revision {}", case.revision)]
    } else {
        vec![format!("rerun: {rerun_base} --revision {} --exact {}", case.revision, shell_quote(&case.id))]
    };
    match target {
        TargetSpec::Stdio(s) => {
            let cmd = s.command_line();
            let pipe =
                |lines: &[String]| format!("printf '%s\\n' {} | {cmd}", lines.iter().map(|l| shell_quote(l)).collect::<Vec<_>>().join(" "));
            let mut lines: Vec<String> = Vec::new();
            for ex in transcript {
                if ex.fresh || lines.is_empty() {
                    if !lines.is_empty() {
                        out.push(pipe(&lines));
                        lines.clear();
                    }
                    lines.extend(ex.preamble.iter().cloned());
                }
                if let Some(t) = &ex.sent {
                    lines.push(t.clone());
                }
            }
            if !lines.is_empty() {
                out.push(pipe(&lines));
            } else if !out.iter().any(|l| l.starts_with("printf")) {
                // A check over the whole session: show how to watch the raw output.
                let starter = match case.revision {
                    Revision::Modern => {
                        wire::request(&json!(1), "server/discover", wire::modern_params(None, MetaMode::Full, wire::MODERN))
                    }
                    Revision::Legacy => wire::request(&json!(1), "initialize", Some(wire::initialize_params(wire::LEGACY))),
                };
                out.push(pipe(&[starter.to_string()]));
            }
        }
        TargetSpec::Http(h) => {
            for ex in transcript.iter().filter(|e| e.http_method.is_some()) {
                let mut c = format!("curl -sS -i -X {} {}", ex.http_method.as_deref().unwrap_or("POST"), shell_quote(&h.url));
                for (k, v) in &ex.sent_headers {
                    c.push_str(&format!(" -H {}", shell_quote(&format!("{k}: {v}"))));
                }
                if let Some(b) = &ex.sent {
                    c.push_str(&format!(" --data-binary {}", shell_quote(b)));
                }
                out.push(c);
            }
        }
    }
    out.join("\n")
}
