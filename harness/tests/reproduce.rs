//! Reproducers run as given: the curl lines of a 2025-11-25 HTTP failure
//! open a session of their own (the run's is gone) and reach the same
//! answer.

mod common;
use common::*;

/// The reproducer's curl lines, run by bash against the server; stdout and
/// stderr together. None when curl is not installed.
fn run_curl_lines(repro: &str) -> Option<String> {
    if std::process::Command::new("curl").arg("--version").output().is_err() {
        eprintln!("curl is not installed: the reproducer's curl lines are not run");
        return None;
    }
    let script: Vec<&str> = repro.lines().filter(|l| !l.starts_with("rerun")).collect();
    let out = std::process::Command::new("bash").arg("-c").arg(script.join("\n")).output().unwrap();
    Some(format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr)))
}

fn failing_case(fault: &str, id: &str) -> (HttpServer, String) {
    let server = start_http(&["--era".into(), "dual".into(), "--fault".into(), fault.into()]);
    let dir = outdir(&format!("reproduce-{fault}"));
    let mut cmd = mcpcert();
    cmd.args(["run", "--http", &server.url, "--allowed-origin", "http://localhost", id, "--exact"]);
    report_args(&mut cmd, &dir);
    cmd.output().unwrap();
    let c = case(&report(&dir), id);
    assert_eq!(c["verdict"], "fail", "{c}");
    (server, c["reproducer"].as_str().unwrap().to_string())
}

#[test]
fn a_request_on_the_runs_session_is_reproduced_on_a_session_of_its_own() {
    let (_server, repro) = failing_case("legacy-ping-error", "2025-11-25/lifecycle/ping");
    assert!(
        repro.lines().any(|l| l.starts_with("sid=$(curl") && l.contains("\"initialize\"")),
        "an initialize opens the session first:\n{repro}"
    );
    assert!(repro.contains("\"Mcp-Session-Id: $sid\""), "later lines use its id:\n{repro}");
    if let Some(out) = run_curl_lines(&repro) {
        assert!(out.contains("\"code\":-32601"), "the ping reaches the server in that session and gets the same error:\n{out}");
    }
}

#[test]
fn a_session_the_case_opened_is_opened_again_and_its_id_kept() {
    let (_server, repro) = failing_case("ended-session-alive", "2025-11-25/lifecycle/http-ended-session-404");
    assert!(repro.lines().any(|l| l.starts_with("sid1=$(curl")), "the case's own initialize keeps its session id:\n{repro}");
    assert!(repro.contains("-X DELETE") && repro.contains("$sid1"), "the DELETE and the request after it use that id:\n{repro}");
    if let Some(out) = run_curl_lines(&repro) {
        // The fault: the ended session still answers (HTTP 200 after the DELETE).
        let after_delete = out.rsplit("HTTP/1.1").next().unwrap_or("");
        assert!(after_delete.starts_with(" 200"), "the request after the DELETE is served, as in the run:\n{out}");
    }
}
