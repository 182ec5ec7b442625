//! Certification end to end: a run against a requirement set, the
//! scenario verdicts, the certificate and badge it earns (or not), the
//! baseline's part in it, and verify-certificate.

mod common;
use common::*;
use std::path::Path;

/// `mcpcert run --requirements REV` against the reference server over
/// stdio with `server_args`; returns the exit code, the console and the
/// report folder.
fn certify(name: &str, rev: &str, server_args: &str, extra: &[&str]) -> (i32, String, std::path::PathBuf) {
    let dir = outdir(name);
    let server = format!("{} --stdio {server_args}", refserver().display());
    let mut cmd = mcpcert();
    cmd.args(["run", "--stdio", &server, "--requirements", rev]).args(extra);
    report_args(&mut cmd, &dir);
    let out = cmd.output().unwrap();
    (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stdout).into_owned(), dir)
}

fn json(p: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))).unwrap()
}

fn verify(dir: &Path, report: &Path) -> (i32, String) {
    let out = mcpcert().arg("verify-certificate").arg(dir.join("certificate.json")).arg(report).output().unwrap();
    (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stdout).into_owned())
}

#[test]
fn a_server_with_the_fixtures_is_certified_and_the_certificate_verifies() {
    let (code, console, dir) = certify("cert-ok", "2026-07-28", "--era dual --fixtures", &[]);
    assert_eq!(code, 0, "{console}");
    assert!(console.contains("requirement set 2026-07-28: 35 of 37 scored scenarios pass (35 apply to this target)"), "{console}");
    assert!(
        console.lines().any(|l| l.trim_start().starts_with("n/a ") && l.contains(" dns-rebinding-protection:")),
        "HTTP-only scenarios do not apply over stdio: {console}"
    );
    assert!(json(&dir.join("report.json")).get("notices").is_none(), "a server with the fixtures gets no notice");
    let cert = json(&dir.join("certificate.json"));
    assert_eq!(cert["status"], "conformant");
    assert_eq!(cert["server"]["name"], "mcpcert-refserver");
    assert_eq!(cert["transport"], "stdio");
    assert_eq!(cert["revision"], "2026-07-28");
    let report = json(&dir.join("report.json"));
    assert_eq!(cert["suite_digest"], report["suite_digest"]);
    assert!(std::fs::read_to_string(dir.join("badge.svg")).unwrap().contains("conformant"));
    let (code, out) = verify(&dir, &dir.join("report.json"));
    assert_eq!(code, 0, "{out}");
    // Any change to the report breaks the link.
    let altered = dir.join("altered.json");
    std::fs::write(&altered, std::fs::read_to_string(dir.join("report.json")).unwrap().replacen("\"pass\"", "\"fail\"", 1)).unwrap();
    let (code, out) = verify(&dir, &altered);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("sha256"), "{out}");
}

#[test]
fn a_failing_fixture_fails_its_scenario_and_earns_no_certificate() {
    let (code, console, dir) = certify("cert-fail", "2026-07-28", "--era dual --fixtures --fault fx-audio-wrong-mime", &[]);
    assert_eq!(code, 1, "{console}");
    assert!(console.lines().any(|l| l.trim_start().starts_with("FAIL ") && l.contains(" tools-call-audio:")), "{console}");
    assert!(console.contains("no certificate: 1 failure"), "{console}");
    assert!(!dir.join("certificate.json").exists());
    assert!(std::fs::read_to_string(dir.join("badge.svg")).unwrap().contains("34 of 37"));
    let report = json(&dir.join("report.json"));
    let s = report["requirements"]["scenarios"].as_array().unwrap().iter().find(|s| s["name"] == "tools-call-audio").unwrap().clone();
    assert_eq!(s["verdict"], "fail", "{s}");
}

#[test]
fn baselined_failures_give_a_certificate_that_says_so() {
    let dir = outdir("cert-baseline-file");
    let b = dir.join("expected.toml");
    std::fs::write(&b, "[expected]\n\"2026-07-28/conformance/tools-call-audio\" = \"mp3 until 2.0\"\n").unwrap();
    let (code, console, dir) = certify(
        "cert-baseline",
        "2026-07-28",
        "--era dual --fixtures --fault fx-audio-wrong-mime",
        &["--expected-failures", b.to_str().unwrap()],
    );
    assert_eq!(code, 0, "{console}");
    assert!(console.lines().any(|l| l.trim_start().starts_with("fail (expected)") && l.contains(" tools-call-audio:")), "{console}");
    let cert = json(&dir.join("certificate.json"));
    assert_eq!(cert["status"], "conformant except expected failures", "{cert}");
    assert_eq!(cert["baseline"]["expected_failures"], 1);
    let (code, out) = verify(&dir, &dir.join("report.json"));
    assert_eq!(code, 0, "{out}");
}

#[test]
fn a_server_without_fixtures_fails_the_scenarios_that_need_them() {
    let (code, console, dir) = certify("cert-nofixtures", "2026-07-28", "--era modern", &[]);
    assert_eq!(code, 1, "{console}");
    let report = json(&dir.join("report.json"));
    // Said first, in the report and on the page: the set needs fixtures
    // this server does not have.
    let notice = report["notices"][0].as_str().unwrap_or_default();
    assert!(notice.contains("lists none of the") && notice.contains("test_"), "{report:#}");
    let html = std::fs::read_to_string(dir.join("report.html")).unwrap();
    let at = html.find("notice: this server lists none of the").expect("the page says it");
    assert!(at < html.find("id=outcome").unwrap(), "before the outcome");
    let case = common::case(&report, "2026-07-28/conformance/tools-call-simple-text");
    assert_eq!(case["verdict"], "fail");
    assert!(
        case["message"].as_str().unwrap().contains(
            "the requirement set needs the conformance fixture tool `test_simple_text`, and the server refused the request that uses it"
        ),
        "{case}"
    );
    // Without --requirements the same case does not apply.
    let d2 = outdir("cert-nofixtures-plain");
    let mut cmd = mcpcert();
    let server = format!("{} --stdio --era modern", refserver().display());
    cmd.args(["run", "--stdio", &server, "2026-07-28/conformance/tools-call-simple-text", "--exact"]);
    report_args(&mut cmd, &d2);
    assert_eq!(cmd.output().unwrap().status.code(), Some(0));
    let c = common::case(&report_of(&d2), "2026-07-28/conformance/tools-call-simple-text");
    assert_eq!(c["verdict"], "n/a");
    assert!(c["message"].as_str().unwrap().contains("the server has no conformance fixtures"), "{c}");
    // Only the set's cases run: those that answer a scenario, and those
    // shown beside one, beyond the set.
    let in_set = |c: &serde_json::Value| ["answers", "beyond"].iter().any(|k| c[*k].as_array().is_some_and(|a| !a.is_empty()));
    assert!(report["cases"].as_array().unwrap().iter().all(in_set));
}

fn report_of(dir: &Path) -> serde_json::Value {
    report(dir)
}

#[test]
fn list_requirements_maps_each_scenario_to_its_cases() {
    let out = mcpcert().args(["list", "--requirements", "2026-07-28"]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0));
    assert!(text.contains("tools-call-image  [scored]"), "{text}");
    assert!(text.contains("fixtures: tool `test_image_content`"), "{text}");
    assert!(text.contains("2026-07-28/conformance/tools-call-image"), "{text}");
    assert!(text.contains("tasks-lifecycle  [not scored: extension]"), "{text}");
    assert!(text.contains("37 scored scenarios, 37 answered by mcpcert cases"), "{text}");
}

#[test]
fn the_2025_set_is_met_over_stdio_with_sampling_and_elicitation_answered_during_the_call() {
    let (code, console, dir) = certify("cert-2025", "2025-11-25", "--era dual --fixtures", &[]);
    assert_eq!(code, 0, "{console}");
    assert!(console.contains("requirement set 2025-11-25: 28 of 30 scored scenarios pass (28 apply to this target)"), "{console}");
    let report = json(&dir.join("report.json"));
    let c = common::case(&report, "2025-11-25/conformance/tools-call-sampling");
    assert_eq!(c["verdict"], "pass", "{c}");
    assert!(c["transcript"].to_string().contains("sampling/createMessage"), "the server's request is in the transcript: {c}");
    assert_eq!(json(&dir.join("certificate.json"))["status"], "conformant");
}

#[test]
fn a_release_is_certified_against_the_previous_contract() {
    let (code, console, dir) = certify("cert-prev-1", "2026-07-28", "--era dual --fixtures", &[]);
    assert_eq!(code, 0, "{console}");
    // The previous release had one tool more.
    let mut prev = json(&dir.join("contract.json"));
    prev["revisions"][0]["tools"]["items"]
        .as_array_mut()
        .unwrap()
        .push(serde_json::json!({"name": "retired_tool", "inputSchema": {"type": "object"}}));
    let prev_path = dir.join("previous-contract.json");
    std::fs::write(&prev_path, prev.to_string()).unwrap();
    let (code, console, dir2) =
        certify("cert-prev-2", "2026-07-28", "--era dual --fixtures", &["--previous-contract", prev_path.to_str().unwrap()]);
    assert_eq!(code, 0, "a breaking change is reported, it does not fail the run: {console}");
    assert!(console.contains("1 breaking, 0 compatible"), "{console}");
    assert!(console.contains("BREAKING 2026-07-28 tool retired_tool: removed"), "{console}");
    let cert = json(&dir2.join("certificate.json"));
    assert_eq!(cert["contract_since"]["breaking"], 1, "{cert}");
    // A file that is not a contract is refused before anything runs.
    let junk = dir2.join("junk.json");
    std::fs::write(&junk, "[]").unwrap();
    let out = mcpcert().args(["run", "--stdio", "/nonexistent", "--previous-contract"]).arg(&junk).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
}

/// A scenario's fixture is used as the scenario uses it, directly: a server
/// that serves the fixtures without listing them (the spec does not
/// require a server to list everything it serves) meets the set.
#[test]
fn fixtures_the_server_serves_but_does_not_list_are_used_directly() {
    for rev in ["2026-07-28", "2025-11-25"] {
        let (code, console, dir) = certify(&format!("cert-unlisted-{rev}"), rev, "--era dual --fixtures --quirk fixtures-unlisted", &[]);
        assert_eq!(code, 0, "{rev}: {console}");
        let report = json(&dir.join("report.json"));
        let q = &report["requirements"];
        assert_eq!(q["passed"], q["applicable"], "{rev}: {q}");
        assert!(dir.join("certificate.json").exists(), "{rev}: {console}");
    }
}

fn scenario(report: &serde_json::Value, name: &str) -> serde_json::Value {
    report["requirements"]["scenarios"].as_array().unwrap().iter().find(|s| s["name"] == name).unwrap().clone()
}

/// A method the server answers although it did not advertise the
/// capability: the scenario is judged on what the server answers (as the
/// requirement set's scenario judges it), and the mismatch is the
/// capabilities cases' own finding.
#[test]
fn a_scenario_is_judged_on_what_the_server_answers_advertised_or_not() {
    let (code, console, dir) = certify("cert-unadvertised", "2026-07-28", "--era dual --fixtures --fault prompts-unadvertised-served", &[]);
    assert_eq!(code, 1, "{console}");
    let report = json(&dir.join("report.json"));
    for name in ["prompts-list", "prompts-get-simple", "prompts-get-with-args"] {
        assert_eq!(scenario(&report, name)["verdict"], "pass", "{name}: {console}");
    }
    // The mismatch: server-stateless judges tools/prompts against the
    // capabilities, and fails; the stricter all-capabilities case too.
    let s = scenario(&report, "server-stateless");
    assert_eq!(s["verdict"], "fail", "{s}");
    assert!(s["message"].as_str().unwrap().contains("capabilities-tools-prompts"), "{s}");
    assert_eq!(case(&report, "2026-07-28/lifecycle/capabilities-match-handlers")["verdict"], "fail");
}

/// Where mcpcert is stricter than the scenario by the letter of the spec,
/// the scenario verdict follows the scenario, and the stricter case is
/// shown beside it, "beyond the requirement set", without failing the
/// run: a server that refuses a foreign Host (no DNS rebinding) but does
/// not check Origin meets dns-rebinding-protection; origin-forbidden fails.
#[test]
fn a_stricter_case_is_shown_beyond_the_set_and_does_not_decide_the_scenario() {
    let s = start_http(&["--era".into(), "dual".into(), "--fixtures".into(), "--fault".into(), "host-checked-origin-not".into()]);
    let dir = outdir("cert-beyond");
    let mut cmd = mcpcert();
    cmd.args(["run", "--http", &s.url, "--requirements", "2026-07-28"]);
    report_args(&mut cmd, &dir);
    let out = cmd.output().unwrap();
    let console = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(out.status.code(), Some(0), "{console}");
    let report = json(&dir.join("report.json"));
    let sc = scenario(&report, "dns-rebinding-protection");
    assert_eq!(sc["verdict"], "pass", "{sc}");
    assert_eq!(sc["beyond"][0]["id"], "2026-07-28/headers/origin-forbidden", "{sc}");
    assert_eq!(sc["beyond"][0]["verdict"], "fail", "{sc}");
    assert!(console.contains("beyond the requirement set: 2026-07-28/headers/origin-forbidden (fail)"), "{console}");
    let cert = json(&dir.join("certificate.json"));
    let c = cert["scenarios"].as_array().unwrap().iter().find(|s| s["name"] == "dns-rebinding-protection").unwrap().clone();
    assert_eq!(c["beyond_not_passed"][0]["id"], "2026-07-28/headers/origin-forbidden", "{c}");
}

/// A fixture the server answers with an error result ("Unknown tool", as
/// FastMCP answers a tool it lacks) did not run: the cases that judge only
/// what a fixture sends while it runs saw nothing, which is `error`, never
/// a pass. (They passed before: no log message and no request came.)
#[test]
fn a_fixture_answered_with_an_error_result_is_not_a_pass_of_what_it_sends() {
    let (code, console, dir) = certify("cert-unknown-is-error", "2026-07-28", "--era modern --fault unknown-tool-is-error", &[]);
    assert_eq!(code, 1, "{console}");
    let report = json(&dir.join("report.json"));
    for id in ["2026-07-28/conformance/logging-only-when-asked", "2026-07-28/conformance/no-requests-on-stream"] {
        let c = common::case(&report, id);
        assert_eq!(c["verdict"], "error", "{c}");
        let m = c["message"].as_str().unwrap();
        assert!(m.contains("answered with an error result") && m.contains("could not be observed"), "{m}");
    }
}

/// `--requirements 2026-07-28+tasks`: the tasks extension's scenarios that
/// mcpcert judges count; a server that ships the extension and keeps its
/// rules earns the certificate, one that breaks a rule or does not ship
/// the extension does not.
#[test]
fn the_tasks_extension_set_certifies_a_server_that_keeps_its_rules() {
    let run = |name: &str, server_args: &str| {
        let dir = outdir(name);
        let server = format!("{} --stdio {server_args}", refserver().display());
        let mut cmd = mcpcert();
        cmd.args(["run", "--stdio", &server, "--requirements", "2026-07-28+tasks", "--config"]).arg(profile());
        cmd.envs(PROFILE_ENV);
        report_args(&mut cmd, &dir);
        let out = cmd.output().unwrap();
        (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stdout).into_owned(), json(&dir.join("report.json")))
    };
    let (code, console, report) = run("cert-tasks-ok", "--era dual --fixtures");
    assert_eq!(code, 0, "{console}");
    assert_eq!(report["requirements"]["revision"], "2026-07-28+tasks");
    for s in ["tasks-lifecycle", "tasks-capability-negotiation", "tasks-wire-fields", "tasks-dispatch-and-envelope", "tasks-mrtr-input"] {
        let sc = scenario(&report, s);
        assert_eq!((sc["scored"].as_bool(), sc["verdict"].as_str()), (Some(true), Some("pass")), "{sc}");
    }
    let pending = scenario(&report, "tasks-mrtr-composition");
    assert_eq!(pending["scored"], false, "{pending}");
    let (code, console, report) = run("cert-tasks-fault", "--era dual --fixtures --fault task-cancel-returns-task");
    assert_eq!(code, 1, "{console}");
    assert_eq!(scenario(&report, "tasks-lifecycle")["verdict"], "fail");
    // Without the extension nothing is shown: no certificate for it.
    let (code, console, report) = run("cert-tasks-none", "--era dual --fixtures --quirk no-extensions");
    assert_eq!(code, 1, "{console}");
    let sc = scenario(&report, "tasks-lifecycle");
    assert_eq!(sc["verdict"], "fail", "{sc}");
    assert!(sc["message"].as_str().unwrap().contains("does not advertise the extension"), "{sc}");
}
