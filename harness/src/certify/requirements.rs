//! A run against a requirement set: each scenario's verdict from the cases
//! that answer it, and the listing `mcpcert list --requirements` prints.

use crate::record::{BeyondCase, CaseResult, RequirementsReport, ScenarioResult, Verdict};
use crate::suite::Case;
use crate::suite::requirements::RequirementSet;

/// Marks a case that answers only scenarios that do not count, or that
/// only goes beyond the set's scenarios: it never fails a requirements run.
pub fn mark_not_scored(set: &RequirementSet, r: &mut CaseResult) {
    let beyond_only = r.answers.is_empty() && !r.beyond.is_empty();
    r.not_scored = beyond_only || (!r.answers.is_empty() && r.answers.iter().all(|a| set.scenario(a).is_some_and(|s| !s.scored)));
}

/// Each scenario's verdict: `fail` if an answering case fails, else
/// `error` if one errs, else `warn` if one warns, else `pass` if one
/// passes; `n/a` when every case is n/a (the reason of the first); `error`
/// ("mcpcert has no case for it") when no case answers it.
///
/// `catalog` is every case that could have run: a scenario whose cases the
/// run left out (a filter) is `n/a`, saying so. A scored scenario whose
/// every case is `n/a` for another reason than the transport (a capability
/// the server does not advertise, a list it leaves empty, a setting the
/// run lacks) was not shown: that is a failure of the set.
pub fn aggregate(set: &RequirementSet, catalog: &[Case], results: &[CaseResult], strict: bool) -> RequirementsReport {
    let mut scenarios = Vec::new();
    for s in &set.scenarios {
        let cases: Vec<&CaseResult> = results.iter().filter(|r| r.answers.contains(&s.name)).collect();
        let in_catalog = catalog.iter().any(|c| c.revision == set.revision && c.answers.contains(&s.name));
        if cases.is_empty() && in_catalog {
            scenarios.push(ScenarioResult {
                name: s.name.clone(),
                scored: s.scored,
                reason: s.reason.clone(),
                verdict: Verdict::NotApplicable,
                message: "not run: the filter or --skip left out every case that answers it".into(),
                expected: false,
                cases: Vec::new(),
                beyond: Vec::new(),
            });
            continue;
        }
        let first = |v: Verdict| cases.iter().find(|c| c.verdict == v).map(|c| format!("{}: {}", c.id, c.reason()));
        let (verdict, message) = if cases.is_empty() && !s.scored {
            (Verdict::NotApplicable, "mcpcert does not check this scenario, and the set does not score it".to_string())
        } else if cases.is_empty() {
            (Verdict::Error, "mcpcert has no case for this scenario yet".to_string())
        } else if let Some(m) = first(Verdict::Fail) {
            (Verdict::Fail, m)
        } else if let Some(m) = first(Verdict::Error) {
            (Verdict::Error, m)
        } else if let Some(m) = first(Verdict::Warn) {
            (Verdict::Warn, m)
        } else if cases.iter().any(|c| c.verdict == Verdict::Pass) {
            (Verdict::Pass, String::new())
        } else if s.scored && cases.iter().any(|c| !c.message.starts_with("applies to ")) {
            // Not shown on this server: the set needs it shown.
            (
                Verdict::Fail,
                format!(
                    "not shown on this server: every case that answers it is n/a ({}); the requirement set needs it shown",
                    first(Verdict::NotApplicable).unwrap_or_default()
                ),
            )
        } else {
            (Verdict::NotApplicable, first(Verdict::NotApplicable).unwrap_or_default())
        };
        let failing: Vec<&&CaseResult> = cases.iter().filter(|c| c.is_failure(strict)).collect();
        let expected = !failing.is_empty() && failing.iter().all(|c| c.expected_failure());
        scenarios.push(ScenarioResult {
            name: s.name.clone(),
            scored: s.scored,
            reason: s.reason.clone(),
            verdict,
            message,
            expected,
            cases: cases.iter().map(|c| c.id.clone()).collect(),
            beyond: results
                .iter()
                .filter(|r| r.beyond.contains(&s.name))
                .map(|r| BeyondCase { id: r.id.clone(), verdict: r.verdict, message: r.reason() })
                .collect(),
        });
    }
    let scored: Vec<&ScenarioResult> = scenarios.iter().filter(|s| s.scored).collect();
    let passes = |s: &ScenarioResult| s.verdict == Verdict::Pass || (!strict && s.verdict == Verdict::Warn);
    RequirementsReport {
        revision: set.name.clone(),
        source: set.source.clone(),
        scored: scored.len(),
        applicable: scored.iter().filter(|s| s.verdict != Verdict::NotApplicable).count(),
        passed: scored.iter().filter(|s| passes(s)).count(),
        expected_failures: scored.iter().filter(|s| s.expected).count(),
        scenarios,
    }
}

/// The cases of `cases` that answer a scenario of the set.
/// The cases that go beyond a scenario are run too, and shown beside it.
pub fn selects(set: &RequirementSet, case: &Case) -> bool {
    case.revision == set.revision && case.answers.iter().chain(&case.beyond).any(|a| set.scenario(a).is_some())
}

/// `mcpcert list --requirements REV`: each scenario, whether it counts,
/// what it asks, the fixtures it needs and the cases that answer it.
pub fn listing(set: &RequirementSet, cases: &[Case]) -> String {
    let mut out = format!("requirement set {} ({})\n", set.name, set.source);
    for s in &set.scenarios {
        let status = if s.scored { "scored".to_string() } else { format!("not scored: {}", s.reason.as_deref().unwrap_or("")) };
        out.push_str(&format!("\n{}  [{status}]\n    {}\n", s.name, s.about));
        if !s.fixtures.is_empty() {
            let f: Vec<String> = s.fixtures.iter().map(|f| f.to_string()).collect();
            out.push_str(&format!("    fixtures: {}\n", f.join(", ")));
        }
        let ids: Vec<&str> =
            cases.iter().filter(|c| c.revision == set.revision && c.answers.contains(&s.name)).map(|c| c.id.as_str()).collect();
        if ids.is_empty() {
            out.push_str("    (no mcpcert case yet)\n");
        }
        for id in ids {
            out.push_str(&format!("    {id}\n"));
        }
        for c in cases.iter().filter(|c| c.revision == set.revision && c.beyond.contains(&s.name)) {
            out.push_str(&format!("    {} (beyond the requirement set: shown, never counted)\n", c.id));
        }
    }
    let covered = set.scored().filter(|s| cases.iter().any(|c| c.revision == set.revision && c.answers.contains(&s.name))).count();
    out.push_str(&format!("\n{} scored scenarios, {covered} answered by mcpcert cases\n", set.scored().count()));
    out
}
