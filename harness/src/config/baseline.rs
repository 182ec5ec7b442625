//! The expected-failures baseline (`--expected-failures FILE`): the cases a
//! team knows its server fails, each with the reason, so that CI fails on
//! what is new and on what has been fixed, not on what is known.
//!
//! ```toml
//! [expected]
//! "2026-07-28/tools/call-unknown-tool" = "tracked in #412"
//! "2026-07-28/http/origin-forbidden@http" = "the proxy in front answers Origin, not us"
//! ```
//!
//! A key is a case id, a case id without its revision (`tools/call-unknown-tool`:
//! that case in every revision), or the name of a requirement scenario (then
//! every case that answers it, as the official suite's baselines name
//! scenarios), optionally suffixed `@stdio` or `@http` to apply to one
//! transport only. `--write-baseline` writes each failure's id with the
//! transport it was seen on, so a baseline written from an HTTP run does not
//! expect the same failure of the stdio job.
//! Against a run, an entry whose case
//! - fails or errors (or warns) is an **expected failure**: it does not fail the run;
//! - passes is **stale**: it fails the run until the entry is removed;
//! - is n/a is tolerated and noted (the set-up cannot show the failure).
//!
//! Cases the run did not select (another revision, a filter, the other
//! transport) are left alone. A key that names no case at all is refused
//! when the file is loaded, with the nearest ids.

use super::ConfigError;
use crate::record::{BaselineMark, BaselineOutcome, BaselineSummary, CaseResult, Transport, Verdict};
use std::collections::BTreeMap;
use std::path::Path;

#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    /// The key as written in the file.
    pub key: String,
    pub case_id: String,
    /// `Some` when the key ends in `@stdio` or `@http`.
    pub transport: Option<Transport>,
    pub reason: String,
}

#[derive(Debug, Clone, Default)]
pub struct Baseline {
    /// The file as given, for reports.
    pub file: String,
    pub entries: Vec<Entry>,
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(default)]
    expected: BTreeMap<String, toml::Value>,
}

/// A baseline of a run's failures (`--write-baseline FILE`): every case that
/// fails it (fail, error; warn under `--strict`), keyed by its id, with its
/// verdict and one-line reason, so that adopting mcpcert on a server with
/// known failures takes one command. Cases the run could not judge (not
/// run) are left out. `header` lines become comments at the top.
pub fn write(results: &[CaseResult], strict: bool, transport: Transport, header: &[String]) -> (String, usize) {
    #[derive(serde::Serialize)]
    struct Out {
        expected: BTreeMap<String, String>,
    }
    let mut expected = BTreeMap::new();
    for r in results.iter().filter(|r| r.is_failure(strict) && !r.not_scored && !r.message.starts_with("not run: ")) {
        let reason = format!("{} when the baseline was written: {}", r.verdict.as_str(), crate::record::clip(&r.reason(), 600));
        expected.insert(format!("{}@{}", r.id, transport.as_str()), reason);
    }
    let n = expected.len();
    let mut text: String = header.iter().map(|h| format!("# {h}\n")).collect();
    text.push_str(&toml::to_string(&Out { expected }).unwrap_or_else(|_| "[expected]\n".into()));
    (text, n)
}

/// Reads a baseline file. `known` is every case id of the catalogue: a key
/// naming none of them is an error (a typo would otherwise hide nothing
/// and be noticed by no one).
pub fn load(path: &Path, known: &[&str], scenarios: &[(&str, &str)]) -> Result<Baseline, ConfigError> {
    let text = std::fs::read_to_string(path).map_err(|e| ConfigError::new(path, e.to_string()))?;
    parse(&text, path, known, scenarios)
}

/// `scenarios`: (scenario name, case id) for every case that answers one.
pub fn parse(text: &str, path: &Path, known: &[&str], scenarios: &[(&str, &str)]) -> Result<Baseline, ConfigError> {
    let file: File = toml::from_str(text).map_err(|e| ConfigError::new(path, e.to_string()))?;
    let mut entries: Vec<Entry> = Vec::new();
    for (key, value) in file.expected {
        let at = format!("at expected.\"{key}\"");
        let reason = match value {
            toml::Value::String(s) if !s.trim().is_empty() => s,
            toml::Value::String(_) => {
                return Err(ConfigError::new(path, format!("{at}: the reason is empty; say why the case is expected to fail")));
            }
            other => {
                return Err(ConfigError::new(path, format!("{at}: the value must be the reason, a string (got {})", other.type_str())));
            }
        };
        let (case_id, transport) = match key.rsplit_once('@') {
            Some((id, "stdio")) => (id.to_string(), Some(Transport::Stdio)),
            Some((id, "http")) => (id.to_string(), Some(Transport::Http)),
            Some((_, other)) => {
                return Err(ConfigError::new(path, format!("{at}: `@{other}` is not a transport; a key may end in `@stdio` or `@http`")));
            }
            None => (key.clone(), None),
        };
        // A case id without its revision: that case in every revision.
        let every_revision: Vec<String> =
            if case_id.contains('/') && !crate::wire::Revision::ALL.iter().any(|r| case_id.starts_with(&format!("{r}/"))) {
                known
                    .iter()
                    .filter(|k| k.split_once('/').is_some_and(|(rev, rest)| rest == case_id && crate::wire::Revision::parse(rev).is_some()))
                    .map(|k| k.to_string())
                    .collect()
            } else {
                Vec::new()
            };
        let ids: Vec<String> = if known.contains(&case_id.as_str()) {
            vec![case_id.clone()]
        } else if !every_revision.is_empty() {
            every_revision
        } else {
            let of: Vec<String> = scenarios.iter().filter(|(s, _)| *s == case_id).map(|(_, c)| c.to_string()).collect();
            if of.is_empty() {
                let near = nearest(&case_id, known);
                let hint = if near.is_empty() { String::new() } else { format!("; did you mean {}?", near.join(", ")) };
                return Err(ConfigError::new(
                    path,
                    format!(
                        "{at}: no case has the id `{case_id}`, and no requirement scenario has that name (`mcpcert list` prints them){hint}"
                    ),
                ));
            }
            of
        };
        for id in ids {
            if let Some(other) =
                entries.iter().find(|e| e.case_id == id && (e.transport.is_none() || transport.is_none() || e.transport == transport))
            {
                return Err(ConfigError::new(path, format!("{at}: `{}` already names the case {id}; keep one of the two", other.key)));
            }
            entries.push(Entry { key: key.clone(), case_id: id, transport, reason: reason.clone() });
        }
    }
    Ok(Baseline { file: path.display().to_string(), entries })
}

/// The ids nearest to `id` by edit distance: the nearest one, and any as
/// near (at most three), if near enough to be a typo of it.
fn nearest(id: &str, known: &[&str]) -> Vec<String> {
    let mut scored: Vec<(usize, &str)> = known.iter().map(|k| (strsim::levenshtein(id, k), *k)).collect();
    scored.sort();
    let Some(&(best, _)) = scored.first() else { return Vec::new() };
    // A typo is a few letters, not a different case of the same area.
    if best > (id.len() / 4).max(3) {
        return Vec::new();
    }
    scored.into_iter().take_while(|(d, _)| *d == best).take(3).map(|(_, k)| format!("`{k}`")).collect()
}

impl Baseline {
    /// Marks `r` if an entry names it; `transport` is the run's.
    pub fn mark(&self, r: &mut CaseResult, transport: Transport) {
        let Some(e) = self.entries.iter().find(|e| e.case_id == r.id && e.transport.is_none_or(|t| t == transport)) else {
            return;
        };
        let outcome = match r.verdict {
            Verdict::Fail | Verdict::Error | Verdict::Warn => BaselineOutcome::ExpectedFailure,
            Verdict::Pass => BaselineOutcome::Stale,
            Verdict::NotApplicable => BaselineOutcome::NotApplicable,
        };
        r.baseline = Some(BaselineMark { entry: e.key.clone(), reason: e.reason.clone(), outcome });
    }

    /// What the baseline did to a run whose results have been marked.
    pub fn summary(&self, results: &[CaseResult]) -> BaselineSummary {
        let marks: Vec<&BaselineMark> = results.iter().filter_map(|r| r.baseline.as_ref()).collect();
        let count = |o: BaselineOutcome| marks.iter().filter(|m| m.outcome == o).count();
        BaselineSummary {
            file: self.file.clone(),
            entries: self.entries.len(),
            expected_failures: count(BaselineOutcome::ExpectedFailure),
            stale: marks.iter().filter(|m| m.outcome == BaselineOutcome::Stale).map(|m| m.entry.clone()).collect(),
            not_applicable: count(BaselineOutcome::NotApplicable),
            not_in_run: {
                let mut v: Vec<String> =
                    self.entries.iter().filter(|e| !marks.iter().any(|m| m.entry == e.key)).map(|e| e.key.clone()).collect();
                v.dedup();
                v
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const KNOWN: &[&str] = &["2026-07-28/tools/call-unknown-tool", "2026-07-28/http/origin-forbidden", "2025-11-25/tools/list-order"];

    fn p(text: &str) -> Result<Baseline, ConfigError> {
        parse(
            text,
            Path::new("b.toml"),
            KNOWN,
            &[("tools-call-unknown", "2026-07-28/tools/call-unknown-tool"), ("tools-list", "2025-11-25/tools/list-order")],
        )
    }

    #[test]
    fn a_scenario_name_names_every_case_that_answers_it() {
        let b = p("[expected]\n\"tools-list@http\" = \"known\"\n").unwrap();
        assert_eq!(b.entries.len(), 1);
        assert_eq!(b.entries[0].case_id, "2025-11-25/tools/list-order");
        assert_eq!(b.entries[0].key, "tools-list@http");
        let e = p("[expected]\n\"tools-call-unknown\" = \"a\"\n\"2026-07-28/tools/call-unknown-tool\" = \"b\"\n").unwrap_err().to_string();
        assert!(e.contains("already names the case"), "{e}");
    }

    #[test]
    fn a_key_without_a_revision_names_the_case_in_every_revision() {
        let known = &["2026-07-28/tools/call-structured", "2025-11-25/tools/call-structured", "2026-07-28/tools/call-content"];
        let b = parse("[expected]\n\"tools/call-structured@http\" = \"known\"\n", Path::new("b.toml"), known, &[]).unwrap();
        let ids: Vec<&str> = b.entries.iter().map(|e| e.case_id.as_str()).collect();
        assert_eq!(ids, ["2026-07-28/tools/call-structured", "2025-11-25/tools/call-structured"]);
        assert!(b.entries.iter().all(|e| e.transport == Some(Transport::Http)));
    }

    #[test]
    fn a_typo_gets_the_nearest_key_only() {
        let known = &[
            "2026-07-28/tools/call-structured",
            "2026-07-28/tools/call-content",
            "2026-07-28/tools/call-text-mirror",
            "2026-07-28/tools/call-error-conforms",
        ];
        let e =
            parse("[expected]\n\"2026-07-28/tools/call-structurd\" = \"x\"\n", Path::new("b.toml"), known, &[]).unwrap_err().to_string();
        assert!(e.ends_with("did you mean `2026-07-28/tools/call-structured`?"), "{e}");
        let e =
            parse("[expected]\n\"2026-07-28/lists/nothing-like-it\" = \"x\"\n", Path::new("b.toml"), known, &[]).unwrap_err().to_string();
        assert!(!e.contains("did you mean"), "{e}");
    }

    #[test]
    fn a_written_baseline_names_the_transport_the_failure_was_seen_on() {
        let r: CaseResult = serde_json::from_value(serde_json::json!({
            "id": "2026-07-28/tools/call-structured", "title": "t", "level": "MUST", "revision": "2026-07-28", "spec": "s",
            "basis": {"quote": "q", "source": "s", "keyword": "MUST"}, "transport": "http", "verdict": "fail",
            "message": "broken", "duration_ms": 1
        }))
        .unwrap();
        let (text, n) = write(&[r], false, Transport::Http, &[]);
        assert_eq!(n, 1);
        assert!(text.contains("\"2026-07-28/tools/call-structured@http\""), "{text}");
    }

    #[test]
    fn keys_with_and_without_transport() {
        let b =
            p("[expected]\n\"2026-07-28/tools/call-unknown-tool\" = \"tracked\"\n\"2026-07-28/http/origin-forbidden@http\" = \"proxy\"\n")
                .unwrap();
        assert_eq!(b.entries.len(), 2);
        let origin = b.entries.iter().find(|e| e.case_id == "2026-07-28/http/origin-forbidden").unwrap();
        assert_eq!(origin.transport, Some(Transport::Http));
        assert_eq!(origin.reason, "proxy");
    }

    #[test]
    fn refusals_name_the_key_and_the_fix() {
        let e = p("[expected]\n\"2026-07-28/tools/call-unknwn-tool\" = \"x\"\n").unwrap_err().to_string();
        assert!(e.contains("no case has the id") && e.contains("2026-07-28/tools/call-unknown-tool"), "{e}");
        let e = p("[expected]\n\"2026-07-28/tools/call-unknown-tool@sse\" = \"x\"\n").unwrap_err().to_string();
        assert!(e.contains("`@sse` is not a transport"), "{e}");
        let e = p("[expected]\n\"2026-07-28/tools/call-unknown-tool\" = \"\"\n").unwrap_err().to_string();
        assert!(e.contains("reason is empty"), "{e}");
        let e = p("[expected]\n\"2026-07-28/tools/call-unknown-tool\" = true\n").unwrap_err().to_string();
        assert!(e.contains("must be the reason"), "{e}");
        let e = p("[expected]\n\"2026-07-28/tools/call-unknown-tool\" = \"a\"\n\"2026-07-28/tools/call-unknown-tool@stdio\" = \"b\"\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("already names the case"), "{e}");
        let e = p("[expectd]\n").unwrap_err().to_string();
        assert!(e.contains("expectd"), "{e}");
        // One entry per transport is fine.
        p("[expected]\n\"2026-07-28/tools/call-unknown-tool@http\" = \"a\"\n\"2026-07-28/tools/call-unknown-tool@stdio\" = \"b\"\n")
            .unwrap();
    }
}
