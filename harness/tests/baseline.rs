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

/// `--write-baseline FILE` writes the run's failures and errors, each with
/// its reason; passed back as the expected failures, the same run passes,
/// and a case that fails anew still fails it. A run that could not reach
/// its target writes none.
#[test]
fn write_baseline_adopts_the_known_failures_in_one_command() {
    let dir = outdir("write-baseline");
    let file = dir.join("known.toml");
    let server = format!("{} --stdio --era modern --fault discover-no-ttl --fault error-id-null", refserver().display());
    let mut cmd = mcpcert();
    cmd.args(["run", "--stdio", &server, "--revision", "2026-07-28", "--write-baseline"]).arg(&file);
    report_args(&mut cmd, &dir);
    let out = cmd.output().unwrap();
    let console = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(out.status.code(), Some(1), "writing a baseline does not change the verdict: {console}");
    let r = report(&dir);
    let failing: Vec<String> = r["cases"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["verdict"] == "fail" || c["verdict"] == "error")
        .map(|c| c["id"].as_str().unwrap().to_string())
        .collect();
    assert!(console.contains(&format!("baseline: {} ({} entries", file.display(), failing.len())), "{console}");
    let text = std::fs::read_to_string(&file).unwrap();
    let parsed: toml::Value = toml::from_str(&text).unwrap();
    let expected = parsed["expected"].as_table().unwrap();
    let mut keys: Vec<&String> = expected.keys().collect();
    keys.sort();
    // Each key says where the failure was seen: the transport (the id holds the revision).
    let mut want: Vec<String> = failing.iter().map(|id| format!("{id}@stdio")).collect();
    want.sort();
    assert_eq!(keys, want.iter().collect::<Vec<_>>(), "exactly the failures and errors");
    assert!(expected[&format!("{SHAPE}@stdio")].as_str().unwrap().starts_with("fail when the baseline was written: "), "{text}");

    // Back in: the same run passes; with one more fault, the new failure fails it.
    let mut again = mcpcert();
    again.args(["run", "--stdio", &server, "--revision", "2026-07-28", "--expected-failures"]).arg(&file);
    report_args(&mut again, &outdir("write-baseline-again"));
    let out = again.output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stdout));
    let worse = format!("{server} --fault order-varies --fault ping-alive --fault structured-mismatch");
    let mut worse_run = mcpcert();
    worse_run.args(["run", "--stdio", &worse, "--revision", "2026-07-28", "--expected-failures"]).arg(&file);
    report_args(&mut worse_run, &outdir("write-baseline-worse"));
    assert_eq!(worse_run.output().unwrap().status.code(), Some(1));

    // Nothing judged, nothing written.
    let none = dir.join("none.toml");
    let out = mcpcert()
        .args(["run", "--stdio", "/nonexistent/server", "--write-baseline"])
        .arg(&none)
        .args(["--out"])
        .arg(outdir("write-baseline-unreachable"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3));
    assert!(!none.exists());
    assert!(String::from_utf8_lossy(&out.stdout).contains("baseline not written"), "{}", String::from_utf8_lossy(&out.stdout));
}

/// A baseline written from an HTTP run names the transport: the same file
/// in the stdio job of the same server does not expect (and so does not
/// find stale) failures that exist only over HTTP. Here the server answers
/// malformed _meta with HTTP 200 (meta-error-status-200): three failures
/// over HTTP, none over stdio. (Before, the keys had no `@http` and the
/// stdio run failed on three stale entries.)
#[test]
fn a_baseline_written_over_http_serves_the_stdio_job_too() {
    let dir = outdir("baseline-http-stdio");
    let file = dir.join("known.toml");
    let args = ["--era".to_string(), "modern".into(), "--fault".into(), "meta-error-status-200".into()];
    let s = start_http(&args);
    let mut cmd = mcpcert();
    cmd.args(["run", "--http", &s.url, "--revision", "2026-07-28", "--allowed-origin", "http://localhost", "--write-baseline"]).arg(&file);
    report_args(&mut cmd, &dir);
    assert_eq!(cmd.output().unwrap().status.code(), Some(1));
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(text.contains("\"2026-07-28/lifecycle/meta-missing-protocol-version@http\""), "{text}");
    let server = format!("{} --stdio --era modern --fault meta-error-status-200", refserver().display());
    let mut stdio = mcpcert();
    stdio.args(["run", "--stdio", &server, "--revision", "2026-07-28", "--expected-failures"]).arg(&file);
    report_args(&mut stdio, &outdir("baseline-http-stdio-2"));
    let out = stdio.output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stdout));
}
