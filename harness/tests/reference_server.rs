//! Every check proven: the clean reference server passes everything it can,
//! and each `--fault` turns exactly its target cases red.

mod common;

use common::{Setup, refserver, run_all};
use mcpcert::run::{CaseResult, Verdict};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};

fn setups() -> Vec<Setup> {
    let mut v = Vec::new();
    for t in ["stdio", "http"] {
        for era in ["modern", "dual", "legacy"] {
            v.push(Setup::new(t, era));
        }
    }
    // The HTTP server also answers as SSE (priming event, comments).
    let mut sse = Setup::new("http", "dual");
    sse.sse = true;
    v.push(sse);
    v
}

fn bad(results: &BTreeMap<String, CaseResult>) -> Vec<String> {
    results
        .values()
        .filter(|r| matches!(r.verdict, Verdict::Fail | Verdict::Warn | Verdict::Error))
        .map(|r| format!("{} [{}]: {}", r.id, r.verdict.as_str(), r.message))
        .collect()
}

#[test]
fn clean_server_passes_every_applicable_case_and_every_case_applies_somewhere() {
    let mut passed_somewhere: BTreeSet<String> = BTreeSet::new();
    let mut all: BTreeSet<String> = BTreeSet::new();
    for s in setups() {
        let res = run_all(&s);
        let b = bad(&res);
        assert!(b.is_empty(), "clean reference server ({s:?}) got:\n{}", b.join("\n"));
        for r in res.values() {
            all.insert(r.id.clone());
            if r.verdict == Verdict::Pass {
                passed_somewhere.insert(r.id.clone());
            }
            if r.verdict == Verdict::NotApplicable {
                assert!(!r.message.is_empty(), "n/a without a reason: {}", r.id);
            }
        }
    }
    let never: Vec<&String> = all.difference(&passed_somewhere).collect();
    assert!(never.is_empty(), "cases that never apply to the reference server: {never:?}");
}

#[derive(serde::Deserialize, Debug)]
struct FaultInfo {
    name: String,
    era: String,
    transport: String,
    targets: Vec<String>,
}

fn faults() -> Vec<FaultInfo> {
    let out = std::process::Command::new(refserver()).args(["--list-faults", "--json"]).output().expect("list faults");
    serde_json::from_slice(&out.stdout).expect("fault list is JSON")
}

#[test]
fn each_fault_turns_exactly_its_targets_red() {
    let catalog = mcpcert::suite::load_builtin().unwrap();
    let known: BTreeSet<String> = catalog.cases.iter().map(|c| c.id.clone()).collect();
    let mut baselines: BTreeMap<(String, String), BTreeMap<String, CaseResult>> = BTreeMap::new();
    let mut problems = Vec::new();
    let mut proven: BTreeSet<String> = BTreeSet::new();
    for f in faults() {
        for t in &f.targets {
            assert!(known.contains(t), "fault {} targets unknown case {t}", f.name);
        }
        let transports: Vec<&'static str> = match f.transport.as_str() {
            "stdio" => vec!["stdio"],
            "http" => vec!["http"],
            _ => vec!["stdio", "http"],
        };
        // "any": a rule of both revisions; run the server in each era and
        // expect the targets of the revision it then serves.
        let eras: Vec<&str> = if f.era == "any" { vec!["modern", "legacy"] } else { vec![f.era.as_str()] };
        for (era, t) in eras.iter().flat_map(|e| transports.iter().map(move |t| (*e, *t))) {
            let base = baselines.entry((t.to_string(), era.to_string())).or_insert_with(|| run_all(&Setup::new(t, era))).clone();
            let mut s = Setup::new(t, era);
            s.faults = vec![f.name.clone()];
            let res = run_all(&s);
            let changed: BTreeSet<String> = res.iter().filter(|(id, r)| base[*id].verdict != r.verdict).map(|(id, _)| id.clone()).collect();
            let served = if era == "legacy" { "2025-11-25/" } else { "2026-07-28/" };
            // Targets that do not apply to this set-up (e.g. HTTP-only cases
            // over stdio) cannot change; the final check still demands that
            // every case is turned red somewhere.
            let want: BTreeSet<String> =
                f.targets.iter().filter(|id| id.starts_with(served) && base.get(*id).is_some_and(|b| b.verdict != Verdict::NotApplicable)).cloned().collect();
            if changed != want {
                let detail: Vec<String> = changed
                    .symmetric_difference(&want)
                    .map(|id| format!("    {id}: {} -> {} {}", base[id].verdict.as_str(), res[id].verdict.as_str(), res[id].message.lines().next().unwrap_or("")))
                    .collect();
                problems.push(format!("fault {} over {t} ({era}): changed {changed:?}, expected {want:?}\n{}", f.name, detail.join("\n")));
                continue;
            }
            for id in &want {
                let r = &res[id];
                let expected = if matches!(r.level.as_str(), "SHOULD" | "SHOULD NOT" | "MAY") { Verdict::Warn } else { Verdict::Fail };
                if r.verdict != expected {
                    problems.push(format!("fault {} over {t}: {id} is {} (expected {}): {}", f.name, r.verdict.as_str(), expected.as_str(), r.message));
                } else {
                    assert!(r.reproducer.is_some(), "{id}: a failure must carry a reproducer");
                    assert!(!r.message.is_empty(), "{id}: a failure must say what was expected and what came back");
                    proven.insert(id.clone());
                }
            }
        }
    }
    assert!(problems.is_empty(), "fault matrix problems:\n{}", problems.join("\n"));
    let unproven: Vec<&String> = known.difference(&proven).collect();
    assert!(unproven.is_empty(), "cases no fault turns red: {unproven:?}");
}

#[test]
fn fault_list_names_each_fault_once() {
    let f = faults();
    let names: BTreeSet<&str> = f.iter().map(|x| x.name.as_str()).collect();
    assert_eq!(names.len(), f.len());
    let v: Value = serde_json::to_value(f.iter().map(|x| &x.name).collect::<Vec<_>>()).unwrap();
    assert!(v.as_array().unwrap().len() >= 20);
}
