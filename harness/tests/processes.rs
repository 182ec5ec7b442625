//! stdio process economy (issue 53): a run starts only the server
//! processes the protocol makes necessary, whatever a start costs, and the
//! verdicts do not depend on how long the server takes to start. Times go
//! in the bench (`scripts/bench.sh`), never in a test.

mod common;
use common::*;

/// A full stdio run of the reference server with `extra` server arguments
/// (with its fixture profile, if `profiled`): the report.
fn stdio_run(name: &str, era: &str, extra: &str, profiled: bool) -> serde_json::Value {
    let dir = outdir(name);
    let server = format!("{} --stdio --era {era} {extra}", refserver().display());
    let mut cmd = mcpcert();
    cmd.arg("run").arg("--stdio").arg(server.trim());
    if profiled {
        cmd.arg("--config").arg(workspace_root().join("fixtures/refserver/mcpcert.toml")).envs(PROFILE_ENV);
    }
    report_args(&mut cmd, &dir);
    let out = cmd.output().expect("mcpcert runs");
    assert!(out.status.code().is_some_and(|c| c <= 1), "{name}: mcpcert exited {:?}\n{}", out.status, String::from_utf8_lossy(&out.stderr));
    report(&dir)
}

fn started(r: &serde_json::Value) -> u64 {
    r["server_processes"]["started"].as_u64().expect("report.json says how many server processes the run started")
}

fn verdicts(r: &serde_json::Value) -> Vec<(String, String)> {
    r["cases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["id"].as_str().unwrap().to_string(), c["verdict"].as_str().unwrap().to_string()))
        .collect()
}

fn differences(a: &serde_json::Value, b: &serde_json::Value) -> Vec<String> {
    let (va, vb) = (verdicts(a), verdicts(b));
    assert_eq!(va.len(), vb.len(), "the same cases in both runs");
    va.iter().zip(&vb).filter(|(x, y)| x != y).map(|(x, y)| format!("{}: {} / {}", x.0, x.1, y.1)).collect()
}

#[test]
fn a_slow_starting_server_costs_few_starts_and_the_same_verdicts() {
    // 2026-07-28 only: its main process (the revision probe's), the
    // initialize probe's (refused, it serves on for the negative probes),
    // and one for the rules about a new process (a list walked cold, then
    // the subscriptions on the same process).
    let quick = stdio_run("processes-modern-quick", "modern", "", false);
    let slow = stdio_run("processes-modern-slow", "modern", "--start-delay 1500", false);
    let diff = differences(&quick, &slow);
    assert!(diff.is_empty(), "a server that takes 1.5 s to start gets other verdicts:\n{}", diff.join("\n"));
    // The probes' two, the cold walk's, the subscriptions', and (the tasks
    // extension, judged with no configuration) the one a task lives in.
    assert!(started(&slow) <= 6, "2026-07-28 only: {} processes started (at most 6)", started(&slow));
    assert_eq!(started(&quick), started(&slow), "the same processes whatever a start costs");
    assert!(slow["server_processes"]["slowest_start_ms"].as_u64().unwrap() >= 1500, "the start time is measured");
    for r in [&quick, &slow] {
        let bad: Vec<_> = r["cases"].as_array().unwrap().iter().filter(|c| c["verdict"] == "fail" || c["verdict"] == "error").collect();
        assert!(bad.is_empty(), "the reference server is judged conformant: {bad:?}");
    }
    // Both eras: 2025-11-25 has a main process (the initialize probe's,
    // which 2026-07-28's probes can then not use) and a probe process
    // (opened with an initialize asking for an unknown version, what
    // version-negotiation-unknown judges).
    let dual = stdio_run("processes-dual-slow", "dual", "--start-delay 1500", false);
    let dual_quick = stdio_run("processes-dual-quick", "dual", "", false);
    let diff = differences(&dual_quick, &dual);
    assert!(diff.is_empty(), "dual era, 1.5 s to start: other verdicts:\n{}", diff.join("\n"));
    // (And 2025-11-25's experimental tasks, judged with no configuration
    // on a tool that makes a task: a process of its own for the task whose
    // _meta names another, and a session declaring the 2026-07-28
    // extension.)
    assert!(
        started(&dual) <= started(&slow) + 4,
        "dual era: {} processes, 2026-07-28 alone {} (at most the second revision's main process, its probe process and two of its tasks cases more)",
        started(&dual),
        started(&slow)
    );
}

#[test]
fn each_configured_identity_costs_one_process() {
    // The fixture profile names two roles (analyst, operator): each is
    // another identity (its own environment), so one process each, which
    // its walks and requests share. (The task's listen streams take one
    // process with or without its [tasks] tool: with none named, a tool
    // that makes a task is found.)
    let plain = stdio_run("processes-plain", "modern", "", false);
    let profiled = stdio_run("processes-profiled", "modern", "", true);
    assert_eq!(started(&profiled), started(&plain) + 2, "two roles, two processes more");
}
