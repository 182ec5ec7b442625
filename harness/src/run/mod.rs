//! Running cases: whether a case applies, its steps (messages sent through
//! the session, checks run with the revision's shared facts), its
//! expectations, and its verdict with a reproducer. Produces the record.

pub mod card;
mod coverage;
mod expect;
pub mod plan;
mod reproduce;
mod schedule;
mod steps;

pub use schedule::{Ran, waves};

use crate::checks::{End, Facts, ListMethod, Outcome, WalkEnd};
use crate::config::Policy;
use crate::record::contract::{CONTRACT_FORMAT, CONTRACT_FORMAT_VERSION, Contract, Listing, RevisionContract};
use crate::record::{CaseResult, Exchange, RevisionInfo, Verdict};
use crate::session::{Probe, Session};
use crate::suite::{Case, Era, Step};
use crate::transport::{Limits, TargetSpec};
use crate::wire::Revision;
use std::collections::BTreeMap;
use std::time::Instant;

#[derive(Debug, Clone)]
pub struct RunConfig {
    pub target: TargetSpec,
    pub limits: Limits,
    /// None = detect.
    pub revision: Option<Revision>,
    /// The command that reruns this target, for reproducers (without
    /// `--revision`: reproducers add the case's own).
    pub rerun_base: String,
    /// What the operator decided (config and flags).
    pub policy: Policy,
}

pub struct Runner {
    session: Session,
    facts: BTreeMap<Revision, Facts>,
    policy: Policy,
    revision: Option<Revision>,
    rerun_base: String,
}

impl Runner {
    pub fn new(cfg: RunConfig) -> Runner {
        // Generated paths lie in this folder (see `judge::egress`).
        let _ = std::fs::create_dir_all(crate::checks::judge::egress::scratch_dir());
        Runner {
            session: Session::new(cfg.target, cfg.limits, cfg.policy.redact_params),
            facts: Revision::ALL.into_iter().map(|r| (r, Facts::default())).collect(),
            policy: cfg.policy,
            revision: cfg.revision,
            rerun_base: cfg.rerun_base,
        }
    }

    /// Detect what the target serves and open a connection per revision.
    pub async fn prepare(&mut self) -> Probe {
        let p = self.session.prepare(self.revision).await;
        // A protected server and no token configured: the authorization
        // cases judge what needs none (every token is missing, so the rest
        // of them are n/a).
        if let (Probe::Protected(_), None, Some(url)) = (&p, &self.policy.auth, self.session.target().url()) {
            self.policy.auth = Some(std::sync::Arc::new(crate::auth::Tokens::without_token(url)));
        }
        p
    }

    pub fn revision_infos(&self) -> Vec<RevisionInfo> {
        self.session.infos()
    }

    /// What the session waits for now (for a live progress line).
    pub fn waiting(&self) -> crate::session::Waiting {
        self.session.waiting()
    }

    /// Requests the run has sent so far (see `Session::requests_sent`).
    pub fn requests_sent(&self) -> u64 {
        self.session.requests_sent()
    }

    pub fn started(&self) -> Instant {
        self.session.started()
    }

    /// Under `--requirements`: a notice when the server lists none of the
    /// set's fixture tools (a requirement set can only be met by a server
    /// that implements them); None when it lists some, or when its tools
    /// could not be walked to the end (nothing is said on partial data).
    pub async fn fixtures_notice(&self, set: &crate::suite::requirements::RequirementSet) -> Option<String> {
        use crate::suite::requirements::FixtureKind;
        let facts = self.facts.get(&set.revision)?;
        let cx = crate::checks::Cx { session: &self.session, facts, policy: &self.policy, rev: set.revision, case: "(requirement set)" };
        let mut wanted: Vec<&str> =
            set.scored().flat_map(|s| &s.fixtures).filter(|f| f.kind == FixtureKind::Tool).map(|f| f.name.as_str()).collect();
        wanted.sort();
        wanted.dedup();
        if wanted.is_empty() {
            return None;
        }
        let listed = if cx.advertises("tools") {
            let w = facts.list_walk(&cx, ListMethod::Tools).await.ok()?;
            if w.partial().is_some() {
                return None;
            }
            let names = w.names();
            wanted.iter().filter(|f| names.iter().any(|n| n == *f)).count()
        } else {
            0
        };
        (listed == 0).then(|| {
            format!(
                "this server lists none of the {} conformance fixture tools of the {} requirement set ({}, …): a requirement set can only be met by a server that implements them (SDK test servers do); the scenarios that need them fail. For an ordinary server run without --requirements: the verdicts are the same rules, judged on the server's own tools (see docs/certification.md)",
                wanted.len(),
                set.revision,
                wanted.iter().take(3).copied().collect::<Vec<_>>().join(", ")
            )
        })
    }

    /// Tools the config names that the server does not list (a typo in
    /// `[tools.NAME]`, `[input_required] tool` or `[subscriptions]
    /// trigger_tool` would otherwise pass silently), judged on the tools
    /// walks the run made.
    pub fn config_warnings(&self) -> Vec<String> {
        let mut named: Vec<(String, &str)> = self.policy.tools.keys().map(|k| (format!("[tools.{k}]"), k.as_str())).collect();
        if let Some(t) = &self.policy.input_tool {
            named.push(("[input_required] tool".into(), t.tool.as_str()));
        }
        if let Some(t) = &self.policy.task_tool {
            named.push(("[tasks] tool".into(), t.tool.as_str()));
        }
        if let Some(t) = &self.policy.task_input_tool {
            named.push(("[tasks] input_tool".into(), t.tool.as_str()));
        }
        if let Some(t) = &self.policy.listen_trigger {
            named.push(("[subscriptions] trigger_tool".into(), t.tool.as_str()));
        }
        let mut out = Vec::new();
        for (rev, facts) in &self.facts {
            let Some(w) = facts.tools_walk_gathered() else { continue };
            if w.end != crate::checks::WalkEnd::Complete {
                continue;
            }
            let names = w.names();
            for (place, tool) in &named {
                if !names.iter().any(|n| n == tool) {
                    let near = nearest_names(tool, &names);
                    let hint = if near.is_empty() {
                        "check the name".to_string()
                    } else {
                        format!("did you mean {}?", near.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(" or "))
                    };
                    out.push(format!(
                        "the config's {place} names `{tool}`, which the server does not list in {rev} ({} tools listed); {hint}",
                        names.len()
                    ));
                }
            }
        }
        out
    }

    /// The server's contract as this run saw it, for the revisions given
    /// (those the run tested) that the server serves: its capabilities and
    /// identity, and each list it advertises, walked once (the walks the
    /// cases made are reused; the others are made now).
    pub async fn contract(&self, revisions: &[Revision], started_at_unix_ms: u128) -> Contract {
        let mut out = Vec::new();
        for info in self.session.infos() {
            if !info.supported || !revisions.contains(&info.revision) {
                continue;
            }
            let Some(facts) = self.facts.get(&info.revision) else { continue };
            let cx = crate::checks::Cx { session: &self.session, facts, policy: &self.policy, rev: info.revision, case: "(contract)" };
            let mut lists = Vec::new();
            for list in [ListMethod::Tools, ListMethod::Prompts, ListMethod::Resources, ListMethod::Templates] {
                lists.push(if !info.advertises(list.capability()) {
                    None
                } else {
                    Some(match facts.list_walk(&cx, list).await {
                        Ok(w) => Listing { complete: w.end == WalkEnd::Complete, note: w.partial(), items: w.items.clone() },
                        Err(e) => Listing { complete: false, note: Some(e), items: Default::default() },
                    })
                });
            }
            let mut lists = lists.into_iter();
            out.push(RevisionContract {
                revision: info.revision.as_str().to_string(),
                server_info: info.server_info.clone(),
                capabilities: info.capabilities.clone().unwrap_or(serde_json::json!({})),
                tools: lists.next().flatten(),
                prompts: lists.next().flatten(),
                resources: lists.next().flatten(),
                resource_templates: lists.next().flatten(),
            });
        }
        Contract {
            format: CONTRACT_FORMAT.into(),
            format_version: CONTRACT_FORMAT_VERSION,
            mcpcert_version: env!("CARGO_PKG_VERSION").into(),
            started_at_unix_ms,
            target: self.session.target().describe(),
            revisions: out,
        }
    }

    /// The load replays' figures (`--load N`), per revision that made one.
    pub fn load_stats(&self) -> Vec<crate::checks::LoadStats> {
        self.facts.iter().filter_map(|(rev, f)| f.load_stats(*rev)).collect()
    }

    /// Close every connection (kills stdio process groups).
    pub async fn shutdown(&self) {
        self.session.shutdown().await;
    }

    /// The requests `shutdown` will send (see `Session::sessions_to_end`).
    pub fn sessions_to_end(&self) -> usize {
        self.session.sessions_to_end()
    }

    /// A result for `case` with no transcript yet.
    pub fn result_for(&self, case: &Case, verdict: Verdict, message: String) -> CaseResult {
        CaseResult {
            id: case.id.clone(),
            title: case.title.clone(),
            level: case.level,
            revision: case.revision,
            spec: case.spec.render(case.revision),
            basis: case.basis.clone(),
            transport: self.session.transport(),
            verdict,
            message,
            reproducer: None,
            duration_ms: 0,
            stderr_tail: None,
            baseline: None,
            answers: case.answers.clone(),
            beyond: case.beyond.clone(),
            not_scored: false,
            wave: None,
            transcript: Vec::new(),
        }
    }

    /// Run one case.
    pub async fn run_case(&self, case: &Case) -> CaseResult {
        let start = Instant::now();
        let mut res = self.result_for(case, Verdict::Pass, String::new());
        if let Some(why) = self.not_applicable(case) {
            res.verdict = Verdict::NotApplicable;
            res.message = why;
            return res;
        }
        // A probe that got no answer leaves the revision unreachable (never supported).
        if let Some(why) = self.session.info(case.revision).and_then(|i| i.unreachable.as_ref()) {
            res.verdict = Verdict::Error;
            res.message = format!("the target could not be reached for {}: {why}", case.revision);
            return res;
        }
        // What the case's checks need that the run lacks (config, transport).
        if let Some(why) = case.checks().flat_map(|c| c.needs()).find_map(|n| n.unmet(&self.policy, self.session.target())) {
            res.verdict = Verdict::NotApplicable;
            res.message = why;
            return res;
        }
        // Conformance fixtures the case needs the server to list.
        if !case.fixtures.is_empty()
            && let Some((verdict, why)) = self.fixtures_missing(case).await
        {
            res.verdict = verdict;
            res.message = why;
            res.duration_ms = start.elapsed().as_millis() as u64;
            return res;
        }
        let (end, failures) = self.run_steps(case, &mut res.transcript).await;
        match end {
            End::NotApplicable(n) => {
                res.verdict = Verdict::NotApplicable;
                res.message = n;
            }
            End::Error(e) => {
                res.verdict = Verdict::Error;
                res.message = e;
            }
            End::Judged if !failures.is_empty() => {
                res.verdict = if case.level.is_advisory() { Verdict::Warn } else { Verdict::Fail };
                res.message = failures.join("\n");
                // Under --requirements a fixture is used directly: one the
                // server refuses as unknown is said to be missing.
                // Said only when the first request that names the fixture
                // was refused (a later step may expect a refusal).
                let first_refused = |name: &str| {
                    let named = format!("\"{name}\"");
                    res.transcript
                        .iter()
                        .find(|e| e.sent.as_deref().is_some_and(|b| b.contains(&named)))
                        .is_some_and(|e| matches!(e.error_code(), Some(-32601 | -32602 | -32002)))
                };
                if self.policy.requirements
                    && let Some(f) = case.fixtures.first()
                    && first_refused(&f.name)
                {
                    // The cause on the first line (one for every fixture the
                    // server lacks), what the case saw beneath.
                    res.message = format!(
                        "the requirement set needs the conformance fixture {f}, and the server refused the request that uses it (it may not have it); the case found:\n{}",
                        res.message
                    );
                }
            }
            End::Judged => {}
        }
        if matches!(res.verdict, Verdict::Fail | Verdict::Warn | Verdict::Error) {
            // Over HTTP with [auth], every request carried the valid token.
            let identity = self.policy.auth.as_ref().and_then(|t| t.shell.get(&crate::auth::TokenKind::Valid)).map(String::as_str);
            res.reproducer = Some(reproduce::reproducer(
                case,
                &res.transcript,
                &self.rerun_base,
                self.session.target(),
                self.session.first_answer_ms(),
                identity,
            ));
        }
        // A case that got no usable answer shows what the server said on
        // stderr last (a crash's traceback).
        if res.verdict == Verdict::Error {
            res.stderr_tail = res.transcript.iter().rev().find_map(|e| crate::record::stderr_tail(&e.stderr));
        }
        // Judged: keep what reports need, not every parsed value.
        res.transcript = std::mem::take(&mut res.transcript).into_iter().map(Exchange::lite).collect();
        res.duration_ms = start.elapsed().as_millis() as u64;
        res
    }

    /// The steps in order, then (if nothing stopped them) the expectations.
    async fn run_steps(&self, case: &Case, transcript: &mut Vec<Exchange>) -> (End, Vec<String>) {
        let mut failures: Vec<String> = Vec::new();
        let mut named: BTreeMap<String, usize> = BTreeMap::new();
        let mut last_msg: Option<usize> = None;
        let facts = &self.facts[&case.revision];
        for (i, step) in case.steps.iter().enumerate() {
            let out: Outcome = match step {
                Step::Action { check, .. } => {
                    let cx = crate::checks::Cx { session: &self.session, facts, policy: &self.policy, rev: case.revision, case: &case.id };
                    check.run(&cx).await
                }
                Step::Send { name, send } => steps::send(&self.session, case, i, name.as_deref(), send).await,
                Step::Http { name, http } => steps::http(&self.session, case, i, name.as_deref(), http).await,
            };
            let base = transcript.len();
            transcript.extend(out.exchanges);
            let mut end = out.end;
            if !matches!(step, Step::Action { .. }) && transcript.len() > base {
                let idx = transcript.len() - 1;
                last_msg = Some(idx);
                if let Some(n) = step.name() {
                    named.insert(n.to_string(), idx);
                }
                if let (End::Judged, Some(e)) = (&end, &transcript[idx].error) {
                    end = End::Error(format!("step {} ({}): {e}", i + 1, transcript[idx].label));
                }
            }
            failures.extend(out.failures);
            if end != End::Judged {
                return (end, failures);
            }
        }
        for e in &case.expect {
            let idx = match &e.step {
                Some(n) => named.get(n).copied(),
                None => last_msg,
            };
            let Some(idx) = idx else {
                return (End::Error("the step an expectation looks at did not run".into()), failures);
            };
            if let Some(f) = expect::judge(e, &transcript[idx], case.revision) {
                failures.push(f);
            }
        }
        (End::Judged, failures)
    }

    /// Why the case does not apply to this target, if it does not.
    /// Whether the server lists the fixtures the case needs: None if it
    /// does; else n/a (no conformance fixtures) or, under
    /// `--requirements`, a failure of the requirement; error when a list
    /// could not be walked to its end.
    async fn fixtures_missing(&self, case: &Case) -> Option<(Verdict, String)> {
        use crate::suite::requirements::FixtureKind;
        let facts = self.facts.get(&case.revision)?;
        let cx = crate::checks::Cx { session: &self.session, facts, policy: &self.policy, rev: case.revision, case: &case.id };
        for f in &case.fixtures {
            let (list, key) = schedule::fixture_list(f.kind);
            if f.kind == FixtureKind::Tool && (!self.policy.call_fixtures || self.policy.forbids(&f.name).is_some()) {
                return Some((Verdict::NotApplicable, format!("calls to the conformance fixture {f} are turned off by the config")));
            }
            // Under --requirements the scenario's fixture is used directly,
            // as the scenario uses it (the spec does not require a server to
            // list everything it serves); a server that does not have it
            // answers the case's request with an error, which fails it.
            // Only the call policy may still need the tool's descriptor.
            // (Conformance fixtures do what the set defines, nothing that
            // leaves the machine: the open-world rule does not hold them back.)
            if self.policy.requirements {
                continue;
            }
            let advertised = cx.advertises(list.capability());
            let listed = if !advertised {
                false
            } else {
                match facts.list_walk(&cx, list).await {
                    Err(e) => {
                        return Some((
                            Verdict::Error,
                            format!("cannot tell whether the server lists the fixture {f}: {e} ({})", crate::checks::PARTIAL),
                        ));
                    }
                    Ok(w) => {
                        let item = w.items.iter().find(|i| i.get(key).and_then(|v| v.as_str()) == Some(f.name.as_str()));
                        let found = item.is_some();
                        if !found && let Some(p) = w.partial() {
                            return Some((
                                Verdict::Error,
                                format!("cannot tell whether the server lists the fixture {f}: {p} ({})", crate::checks::PARTIAL),
                            ));
                        }
                        found
                    }
                }
            };
            if !listed {
                let why = if advertised {
                    format!("the server does not list {f} (in {})", list.method())
                } else {
                    format!("the server does not advertise capabilities.{}, so it offers no {f}", list.capability())
                };
                return Some(if self.policy.requirements {
                    (Verdict::Fail, format!("the requirement set needs the conformance fixture {f}: {why}"))
                } else {
                    (Verdict::NotApplicable, format!("the server has no conformance fixtures: {why}"))
                });
            }
        }
        None
    }

    /// The revisions this run probed, for a message.
    fn probed(&self) -> String {
        self.revision_infos().iter().map(|i| i.revision.as_str()).collect::<Vec<_>>().join(" and ")
    }

    fn not_applicable(&self, case: &Case) -> Option<String> {
        let transport = self.session.transport();
        if !case.applies.transports.is_empty() && !case.applies.transports.contains(&transport) {
            let names: Vec<&str> = case.applies.transports.iter().map(|t| t.as_str()).collect();
            return Some(format!("applies to {} targets only; this target is {transport}", names.join("/")));
        }
        // HTTP-only cases judge the HTTP transport of their revision.
        if case.applies.transports == [crate::transport::Transport::Http] {
            let sse = matches!(self.session.target(), crate::transport::TargetSpec::Http(h) if h.sse.get());
            match (case.revision.http(), sse) {
                (crate::wire::HttpTransport::Streamable, true) => {
                    return Some(format!(
                        "a rule of {}'s Streamable HTTP; this server is reached over HTTP with SSE, 2024-11-05's transport",
                        case.revision
                    ));
                }
                (crate::wire::HttpTransport::SseStream, false) => {
                    return Some(format!("a rule of {}'s HTTP with SSE; this server answers over Streamable HTTP", case.revision));
                }
                _ => {}
            }
        }
        let Some(info) = self.session.info(case.revision) else {
            return Some(format!("the run did not probe {}: it tests {}", case.revision, self.probed()));
        };
        // A protected server judged without a token: its authorization
        // cases apply (each needs what it needs; a token is missing).
        if info.protected.is_some() && case.id.split('/').nth(1) == Some("auth") {
            return None;
        }
        if !info.supported {
            if info.unreachable.is_some() {
                return None;
            }
            return Some(format!("the server does not serve {}: {}", case.revision, info.reason));
        }
        // An extension's rules apply to a server that advertises it (and
        // only to it: digest §17.1), whatever --requirements says.
        for x in &case.applies.extensions {
            let listed = info.capabilities.as_ref().and_then(|c| c.get("extensions")).and_then(|e| e.get(x)).is_some();
            if !listed {
                return Some(format!(
                    "the server does not advertise the extension {x} (capabilities.extensions in {}); its rules apply only to a server that does",
                    if case.revision.is_stateless() { "server/discover" } else { "the initialize result" }
                ));
            }
        }
        // Under --requirements a case that answers a scenario is judged on
        // what the server answers, advertised or not, as the scenario
        // judges it (a method answered without its capability is the
        // capabilities case's own finding).
        let answering = self.policy.requirements && !case.answers.is_empty();
        for c in &case.applies.capabilities {
            if !info.advertises(c) && !answering {
                return Some(format!("the server does not advertise capabilities.{c}"));
            }
        }
        match case.applies.era {
            Era::ModernOnly if self.session.dual_era(case.revision) == Some(true) => Some(
                "the server also serves 2025-11-25 through initialize (dual-era, allowed by versioning.mdx); the rule is for modern-only servers"
                    .into(),
            ),
            Era::Session if info.session_id_issued != Some(true) => Some("the server issued no Mcp-Session-Id, so session rules do not apply".into()),
            _ => None,
        }
    }
}

/// Up to two listed names close to `name`: the same but for case, or a few
/// edits away (a typo), nearest first.
fn nearest_names(name: &str, listed: &[String]) -> Vec<String> {
    fn distance(a: &str, b: &str) -> usize {
        let b: Vec<char> = b.chars().collect();
        let mut prev: Vec<usize> = (0..=b.len()).collect();
        for (i, ca) in a.chars().enumerate() {
            let mut cur = vec![i + 1];
            for (j, cb) in b.iter().enumerate() {
                cur.push((prev[j] + usize::from(ca != *cb)).min(prev[j + 1] + 1).min(cur[j] + 1));
            }
            prev = cur;
        }
        prev[b.len()]
    }
    let lower = name.to_lowercase();
    let most = (name.chars().count() / 3).clamp(2, 3);
    let mut scored: Vec<(usize, &String)> = listed
        .iter()
        .map(|n| (if n.to_lowercase() == lower { 0 } else { distance(&lower, &n.to_lowercase()) }, n))
        .filter(|(d, _)| *d <= most)
        .collect();
    scored.sort();
    scored.into_iter().take(2).map(|(_, n)| n.clone()).collect()
}

#[cfg(test)]
mod nearest_tests {
    #[test]
    fn a_typo_finds_the_listed_name_and_a_stranger_finds_none() {
        let listed: Vec<String> = ["get_weather", "echo", "list_items"].iter().map(|s| s.to_string()).collect();
        assert_eq!(super::nearest_names("get_wether", &listed), ["get_weather"]);
        assert_eq!(super::nearest_names("Echo", &listed), ["echo"]);
        assert_eq!(super::nearest_names("ehco", &listed), ["echo"]);
        assert!(super::nearest_names("deploy_prod", &listed).is_empty());
    }
}
