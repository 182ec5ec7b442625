//! The expected-failures baseline end to end: its four outcomes against the
//! reference server with one fault, in the exit code, the console, the JSON
//! report and JUnit.

mod common;
use common::*;

const SHAPE: &str = "2026-07-28/lifecycle/discover-result-shape";
const FRAMES: &str = "2026-07-28/wire/server-frames-valid";

/// Runs the 2026-07-28 lifecycle and wire cases against the reference server
/// with `fault` (over stdio), with `baseline` as the expected failures.
fn run(name: &str, fault: Option<&str>, baseline: &str) -> (i32, String, serde_json::Value, String) {
    let dir = outdir(name);
    let file = dir.join("expected.toml");
    std::fs::write(&file, baseline).unwrap();
    let mut server = format!("{} --stdio --era modern", refserver().display());
    if let Some(f) = fault {
        server.push_str(&format!(" --fault {f}"));
    }
    let mut cmd = mcpcert();
    cmd.args(["run", "--stdio", &server, "--revision", "2026-07-28", "--skip", "/tools/", "--skip", "/lists/", "--expected-failures"])
        .arg(&file);
    report_args(&mut cmd, &dir);
    let out = cmd.output().unwrap();
    let console = String::from_utf8_lossy(&out.stdout).into_owned();
    let junit = std::fs::read_to_string(dir.join("junit.xml")).unwrap();
    (out.status.code().unwrap_or(-1), console, report(&dir), junit)
}

#[test]
fn known_failures_do_not_fail_the_run_and_are_reported_as_expected() {
    let b = format!("[expected]\n\"{SHAPE}\" = \"ttlMs lands in 2.1\"\n\"{FRAMES}@stdio\" = \"the same missing ttlMs\"\n");
    let (code, console, r, junit) = run("expected", Some("discover-no-ttl"), &b);
    assert_eq!(code, 0, "every failure is in the baseline: {console}");
    assert!(console.contains(&format!("{SHAPE} ... expected failure (fail)")), "{console}");
    assert!(console.contains("expected failures (in the baseline"), "{console}");
    assert!(console.contains("baseline: 2 expected failures, 0 stale entries"), "{console}");
    let c = case(&r, SHAPE);
    assert_eq!(c["verdict"], "fail", "the verdict itself stays what it is");
    assert_eq!(c["baseline"]["outcome"], "expected failure");
    assert_eq!(c["baseline"]["reason"], "ttlMs lands in 2.1");
    assert_eq!(case(&r, FRAMES)["baseline"]["entry"], format!("{FRAMES}@stdio"));
    assert_eq!(r["baseline"]["expected_failures"], 2);
    assert!(junit.contains("type=\"expected failure\""), "JUnit shows them as expected failures, not as failures");
    assert!(!junit.contains("<failure"), "{junit}");
}

#[test]
fn a_failure_the_baseline_does_not_name_fails_the_run() {
    let b = format!("[expected]\n\"{SHAPE}\" = \"ttlMs lands in 2.1\"\n");
    let (code, console, r, junit) = run("unexpected", Some("discover-no-ttl"), &b);
    assert_eq!(code, 1, "{console}");
    assert!(console.contains("test result: FAILED (1 unexpected failure)"), "{console}");
    assert_eq!(case(&r, FRAMES)["verdict"], "fail");
    assert!(case(&r, FRAMES).get("baseline").is_none());
    assert!(junit.contains("<failure"), "{junit}");
}

#[test]
fn a_baselined_case_that_passes_is_a_stale_entry_and_fails_the_run() {
    let b = format!("[expected]\n\"{SHAPE}\" = \"ttlMs lands in 2.1\"\n");
    let (code, console, r, junit) = run("stale", None, &b);
    assert_eq!(code, 1, "{console}");
    assert!(console.contains("stale baseline entries (these cases pass now: remove the entries):"), "{console}");
    assert!(console.contains("test result: FAILED (1 stale baseline entry)"), "{console}");
    assert_eq!(case(&r, SHAPE)["verdict"], "pass");
    assert_eq!(case(&r, SHAPE)["baseline"]["outcome"], "stale");
    assert_eq!(r["baseline"]["stale"][0], SHAPE);
    assert!(junit.contains("type=\"stale baseline entry\""), "{junit}");
}

#[test]
fn a_baselined_case_that_does_not_apply_is_tolerated_and_noted() {
    // Over stdio the Origin check does not apply; an entry for the other
    // transport or the other revision is left alone.
    let b = "[expected]\n\"2026-07-28/headers/origin-forbidden\" = \"the proxy answers Origin\"\n\
             \"2025-11-25/tools/list-walk\" = \"another revision\"\n\
             \"2026-07-28/lifecycle/discover-result-shape@http\" = \"only over HTTP\"\n";
    let dir = outdir("baseline-na");
    let file = dir.join("expected.toml");
    std::fs::write(&file, b).unwrap();
    let server = format!("{} --stdio --era modern", refserver().display());
    let mut cmd = mcpcert();
    cmd.args(["run", "--stdio", &server, "--revision", "2026-07-28", "--skip", "/tools/", "--skip", "/lists/", "--expected-failures"])
        .arg(&file);
    report_args(&mut cmd, &dir);
    let out = cmd.output().unwrap();
    let console = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{console}");
    assert!(console.contains("baseline entries whose case does not apply here (kept): 2026-07-28/headers/origin-forbidden"), "{console}");
    let r = report(&dir);
    assert_eq!(case(&r, "2026-07-28/headers/origin-forbidden")["baseline"]["outcome"], "n/a");
    assert!(case(&r, SHAPE).get("baseline").is_none(), "an @http entry does not touch a stdio run");
    assert_eq!(r["baseline"]["not_applicable"], 1);
    let not_in_run: Vec<&str> = r["baseline"]["not_in_run"].as_array().unwrap().iter().filter_map(|v| v.as_str()).collect();
    assert_eq!(not_in_run, ["2025-11-25/tools/list-walk", "2026-07-28/lifecycle/discover-result-shape@http"]);
}

#[test]
fn a_baseline_naming_no_case_is_refused_before_any_server_starts() {
    let dir = outdir("baseline-typo");
    let file = dir.join("expected.toml");
    std::fs::write(&file, "[expected]\n\"2026-07-28/lifecycle/discover-result-shap\" = \"typo\"\n").unwrap();
    let out = mcpcert().args(["run", "--stdio", "/nonexistent/server", "--expected-failures"]).arg(&file).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no case has the id `2026-07-28/lifecycle/discover-result-shap`"), "{err}");
    assert!(err.contains(SHAPE), "the nearest id is offered: {err}");
    assert!(!err.contains("could not be started"), "{err}");
}
