//! What the run covered, said once: the tools the call policy did not
//! call (with the config lines that allow them), and over stdio how many
//! server processes the run started and how long a start took, so that a
//! slow run explains itself.

use super::Runner;
use crate::transport::Transport;

impl Runner {
    /// stdio: the server processes started so far and the slowest start.
    pub fn server_processes(&self) -> Option<crate::record::ServerProcesses> {
        (self.session.transport() == Transport::Stdio).then(|| {
            let (started, slowest_start_ms, starts_total_ms) = self.session.starts();
            crate::record::ServerProcesses {
                started,
                slowest_start_ms: slowest_start_ms.unwrap_or(0),
                answered: slowest_start_ms.is_some(),
                starts_total_ms,
            }
        })
    }

    /// Every `tools/call` the run sent, and how many the log left out.
    pub fn call_log(&self) -> (Vec<crate::record::CallLogEntry>, u64) {
        self.session.call_log()
    }

    /// The coverage lines of the console and the page (none when the run
    /// called every tool it listed, or called none it could judge).
    /// `wall_ms`: the run's wall time so far, against which the time spent
    /// starting servers is said.
    pub fn coverage(&self, wall_ms: u64) -> Vec<String> {
        let mut out = Vec::new();
        let mut said: Vec<String> = Vec::new();
        for (rev, facts) in &self.facts {
            let Some(v) = facts.calls_gathered() else { continue };
            let (called, skipped) = v.coverage();
            // A tool listed twice (a duplicate name) is one tool.
            let mut seen = std::collections::HashSet::new();
            let skipped: Vec<String> =
                skipped.iter().filter(|s| seen.insert(s.split_once(": ").map_or(s.as_str(), |(n, _)| n).to_string())).cloned().collect();
            // A tool another case called (a [tasks] or [input_required]
            // tool, a fixture) was called: only the others were not.
            let elsewhere = self.session.tools_called(*rev);
            let (also, skipped): (Vec<String>, Vec<String>) =
                skipped.iter().cloned().partition(|s| elsewhere.contains(s.split_once(": ").map_or(s.as_str(), |(n, _)| n)));
            let called = called + also.len();
            if skipped.is_empty() {
                continue;
            }
            let text = tools_not_called(called, &skipped);
            // The same tools in another revision: said once.
            if said.contains(&text) {
                continue;
            }
            said.push(text.clone());
            out.push(format!("tools ({rev}): {text}"));
        }
        if self.session.transport() == Transport::Stdio {
            let (n, ms, total) = self.session.starts();
            if n > 0 {
                let slowest = match ms {
                    Some(ms) => format!(
                        "the slowest answered its first request after {:.1} s; from start to first answer they took {:.1} s in all, against {:.1} s of wall time for the whole run (they start while other cases run, so the run waited on part of it only)",
                        ms as f64 / 1000.0,
                        total as f64 / 1000.0,
                        wall_ms as f64 / 1000.0
                    ),
                    None => "none answered a request".to_string(),
                };
                out.push(format!(
                    "processes: the run started {n} server process{} (the revision probes, whose processes serve on as the main one of each revision served or for the negative probes, one for the negative probes where they did not, and one for each rule about a new process: a list walked cold, the subscriptions); {slowest}",
                    if n == 1 { "" } else { "es" },
                ));
            }
        }
        out
    }
}

/// The tools the policy did not call, grouped by why, with what allows them.
fn tools_not_called(called: usize, skipped: &[String]) -> String {
    const WHY: [&str; 4] = [
        "not marked readOnlyHint: true",
        "read-only, but openWorldHint is true or absent (they may reach hosts outside the test)",
        "call = false in the config",
        "for other reasons (in the tools/call cases' transcripts)",
    ];
    let mut groups: [Vec<&str>; 4] = Default::default();
    for s in skipped {
        let (name, why) = s.split_once(": ").unwrap_or((s.as_str(), ""));
        let g = if why.contains("not marked readOnlyHint") {
            0
        } else if why.contains("openWorldHint") {
            1
        } else if why.contains("call = false") {
            2
        } else {
            3
        };
        groups[g].push(name);
    }
    let parts: Vec<String> = groups
        .iter()
        .zip(WHY)
        .filter(|(names, _)| !names.is_empty())
        .map(|(names, why)| {
            let more = if names.len() > 8 { format!(", and {} more", names.len() - 8) } else { String::new() };
            format!("{} {why} ({}{more})", names.len(), names.iter().take(8).copied().collect::<Vec<_>>().join(", "))
        })
        .collect();
    let mut allow = vec!["[tools.NAME] call = true allows one"];
    if !groups[1].is_empty() {
        allow.push("[calls] open_world = true every read-only one");
    }
    format!(
        "the call policy called {called} of {} tools; not called: {}. The tools/call cases judge the calls made only. In the config, {} (docs/safety.md)",
        called + skipped.len(),
        parts.join("; "),
        allow.join(", ")
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn tools_not_called_are_grouped_with_what_allows_them() {
        let skipped = vec![
            "write: not marked readOnlyHint: true and not allowed in the config ([tools.NAME] call = true)".to_string(),
            "fetch: read-only, but its openWorldHint is true or absent (the spec's default is true): …".to_string(),
            "rm: the config says call = false".to_string(),
        ];
        let t = super::tools_not_called(2, &skipped);
        assert!(
            t.starts_with("the call policy called 2 of 5 tools; not called: 1 not marked readOnlyHint: true (write); 1 read-only"),
            "{t}"
        );
        assert!(t.contains("(fetch)") && t.contains("1 call = false in the config (rm)") && t.contains("[calls] open_world = true"), "{t}");
    }
}
