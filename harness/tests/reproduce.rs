//! Reproducers run as given: the curl lines of a 2025-11-25 HTTP failure
//! open a session of their own (the run's is gone) and reach the same
//! answer.

mod common;
use common::*;

/// The reproducer's curl lines, run by bash against the server: (stdout,
/// stderr). None when curl is not installed. Lines that keep a session id
/// show their reply on stderr; the others print to stdout.
fn run_curl_lines(repro: &str) -> Option<(String, String)> {
    if std::process::Command::new("curl").arg("--version").output().is_err() {
        eprintln!("curl is not installed: the reproducer's curl lines are not run");
        return None;
    }
    let script: Vec<&str> = repro.lines().filter(|l| !l.starts_with("rerun")).collect();
    let out = std::process::Command::new("bash").arg("-c").arg(script.join("\n")).output().unwrap();
    Some((String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned()))
}

fn failing_case(fault: &str, id: &str) -> (HttpServer, String) {
    failing_case_with(&["--fault", fault], id)
}

fn failing_case_with(server_args: &[&str], id: &str) -> (HttpServer, String) {
    let mut a: Vec<String> = vec!["--era".into(), "dual".into()];
    a.extend(server_args.iter().map(|s| s.to_string()));
    let name: Vec<&str> = server_args.iter().map(|s| s.trim_start_matches('-')).collect();
    let server = start_http(&a);
    let dir = outdir(&format!("reproduce-{}", name.join("-")));
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
    assert!(repro.to_ascii_lowercase().contains("\"mcp-session-id: $sid\""), "later lines use its id:\n{repro}");
    if let Some((stdout, stderr)) = run_curl_lines(&repro) {
        assert!(stderr.contains("mcp-session-id") || stderr.contains("Mcp-Session-Id"), "the initialize's reply is shown:\n{stderr}");
        assert!(stdout.contains("\"code\":-32601"), "the ping reaches the server in that session and gets the same error:\n{stdout}");
    }
}

#[test]
fn a_session_id_echoed_on_every_reply_is_not_taken_for_a_session_the_line_opened() {
    // The TypeScript SDK's server sends Mcp-Session-Id back on every reply
    // in a session: the ping's reply names the run's session, which the run
    // has ended since. The reproducer must still open a session first.
    let (_server, repro) =
        failing_case_with(&["--fault", "legacy-ping-error", "--quirk", "session-id-echoed"], "2025-11-25/lifecycle/ping");
    assert!(
        repro.lines().any(|l| l.starts_with("sid=$(curl") && l.contains("\"initialize\"")),
        "an initialize opens the session first:\n{repro}"
    );
    assert!(repro.to_ascii_lowercase().contains("\"mcp-session-id: $sid\""), "the ping uses its id, not the run's:\n{repro}");
    assert!(!repro.to_ascii_lowercase().contains("mcp-session-id: sess-"), "no session id of the run is sent again:\n{repro}");
    if let Some((stdout, _)) = run_curl_lines(&repro) {
        assert!(stdout.contains("\"code\":-32601"), "the ping reaches the server in that session and gets the same error:\n{stdout}");
    }
}

#[test]
fn header_names_are_sent_again_as_the_run_sent_them() {
    // The fault: a server that matches header names letter for letter, in
    // lower case (as the HTTP client writes them). The baseline request of
    // the case was served in the run; its curl line wrote the names with
    // capitals, and was refused.
    let (_server, repro) = failing_case("header-names-case-sensitive", "2026-07-28/headers/version-name-case");
    assert!(repro.contains("-H 'mcp-protocol-version: 2026-07-28'"), "the baseline's names as sent:\n{repro}");
    assert!(repro.contains("-H 'MCP-PROTOCOL-VERSION: 2026-07-28'"), "a probe's names keep their letters:\n{repro}");
    if let Some((stdout, _)) = run_curl_lines(&repro) {
        let statuses: Vec<&str> = stdout.lines().filter(|l| l.starts_with("HTTP/")).collect();
        assert!(statuses.first().is_some_and(|s| s.contains(" 200")), "the baseline is served, as in the run:\n{stdout}");
        assert!(statuses[1..].iter().all(|s| s.contains(" 400")), "the probes are refused, as in the run:\n{stdout}");
    }
}

#[test]
fn a_session_the_case_opened_is_opened_again_and_its_id_kept() {
    let (_server, repro) = failing_case("ended-session-alive", "2025-11-25/lifecycle/http-ended-session-404");
    assert!(repro.lines().any(|l| l.starts_with("sid1=$(curl")), "the case's own initialize keeps its session id:\n{repro}");
    assert!(repro.contains("-X DELETE") && repro.contains("$sid1"), "the DELETE and the request after it use that id:\n{repro}");
    if let Some((stdout, _)) = run_curl_lines(&repro) {
        // stdout holds the replies to notifications/initialized, the DELETE
        // and the last request: the fault keeps the ended session alive, so
        // that request is served.
        let statuses: Vec<&str> = stdout.lines().filter(|l| l.starts_with("HTTP/")).collect();
        assert_eq!(statuses.len(), 3, "initialized, the DELETE and the request after it:\n{stdout}");
        assert!(statuses[2].contains(" 200"), "the request after the DELETE is served, as in the run:\n{stdout}");
        assert!(stdout.trim_end().ends_with('}') && stdout.contains("\"result\""), "with a result:\n{stdout}");
    }
}

#[test]
fn a_stdio_reproducer_keeps_the_input_open_until_the_server_has_answered() {
    // A server that stops at the end of its input drops the answers it has
    // not written yet (the Python SDK's does): a bare `printf … | CMD` got
    // no answer to the ping at all.
    let server = format!("{} --stdio --era legacy --fault legacy-ping-error --quirk eof-drops-pending", refserver().display());
    let dir = outdir("reproduce-stdio-eof");
    let mut cmd = mcpcert();
    cmd.args(["run", "--stdio", &server, "2025-11-25/lifecycle/ping", "--exact"]);
    report_args(&mut cmd, &dir);
    cmd.output().unwrap();
    let c = case(&report(&dir), "2025-11-25/lifecycle/ping");
    assert_eq!(c["verdict"], "fail", "{c}");
    let repro = c["reproducer"].as_str().unwrap();
    let pipe = repro.lines().find(|l| l.contains("printf '%s\\n'")).unwrap_or_else(|| panic!("no pipe line:\n{repro}"));
    let out = std::process::Command::new("bash").arg("-c").arg(pipe).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("\"code\":-32601"), "the ping gets the same error when the pipe is run:\n{pipe}\n{stdout}");
    assert!(pipe.starts_with("{ printf") && pipe.contains("; sleep "), "the input stays open a while after the last line:\n{pipe}");
}

#[test]
fn a_stdio_reproducer_keeps_the_input_open_as_long_as_the_server_takes_to_start() {
    // A server that reads nothing for 3.2 s and drops unwritten answers at
    // the end of its input: with 2 s for the start and twice the 20 ms the
    // run waited (3 s in all), the pipe closed before the server read it.
    let server =
        format!("{} --stdio --era legacy --fault legacy-ping-error --quirk eof-drops-pending --quirk slow-start", refserver().display());
    let dir = outdir("reproduce-stdio-slow-start");
    let mut cmd = mcpcert();
    cmd.args(["run", "--stdio", &server, "2025-11-25/lifecycle/ping", "--exact"]);
    report_args(&mut cmd, &dir);
    cmd.output().unwrap();
    let c = case(&report(&dir), "2025-11-25/lifecycle/ping");
    assert_eq!(c["verdict"], "fail", "{c}");
    let repro = c["reproducer"].as_str().unwrap();
    let pipe = repro.lines().find(|l| l.contains("printf '%s\\n'")).unwrap_or_else(|| panic!("no pipe line:\n{repro}"));
    let out = std::process::Command::new("bash").arg("-c").arg(pipe).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("\"code\":-32601"), "the ping gets the same error when the pipe is run:\n{pipe}\n{stdout}");
}

#[test]
fn a_stdio_reproducer_starts_the_server_in_its_folder_with_its_environment() {
    // A server that starts only in its folder (a script named relative to
    // it) and with a variable of `[target.env]`: the pipe of the old
    // reproducer ran the command where the reader stood, without the
    // variable, and got no answer.
    let dir = outdir("reproduce-stdio-env-cwd");
    let server_dir = dir.join("server dir");
    std::fs::create_dir_all(&server_dir).unwrap();
    let script = server_dir.join("start.sh");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\n[ \"$MCPCERT_REPRO_MODE\" = \"on purpose\" ] || exit 3\nexec {} --stdio --era legacy --fault legacy-ping-error\n",
            refserver().display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let cfg = dir.join("target.toml");
    std::fs::write(&cfg, "[target]\ncommand = \"./start.sh\"\ncwd = \"server dir\"\n[target.env]\nMCPCERT_REPRO_MODE = \"on purpose\"\n")
        .unwrap();
    let mut cmd = mcpcert();
    cmd.args(["run", "--config", cfg.to_str().unwrap(), "2025-11-25/lifecycle/ping", "--exact"]);
    report_args(&mut cmd, &dir);
    cmd.output().unwrap();
    let c = case(&report(&dir), "2025-11-25/lifecycle/ping");
    assert_eq!(c["verdict"], "fail", "{c}");
    let repro = c["reproducer"].as_str().unwrap();
    let pipe = repro.lines().find(|l| l.contains("printf '%s\\n'")).unwrap_or_else(|| panic!("no pipe line:\n{repro}"));
    // Run from elsewhere, as a reader would: the pipe says where and how.
    let out = std::process::Command::new("bash").arg("-c").arg(pipe).current_dir(std::env::temp_dir()).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("\"code\":-32601"), "the ping gets the same error when the pipe is run:\n{pipe}\n{stdout}");
    assert!(pipe.contains("env 'MCPCERT_REPRO_MODE=on purpose'"), "{pipe}");
}

/// A frame the wire audit quotes came back to a request sent after a
/// DELETE had ended its session (the server answered 404 with `"id":
/// null`). Its replay sends the DELETE first, or the request would reach a
/// live session and get another answer; scripts/reproducers-check.py
/// replays it and gets the run's statuses (and, without the DELETE line,
/// does not).
#[test]
fn a_request_sent_after_a_session_delete_is_replayed_after_it() {
    let server = start_http(&["--era".into(), "legacy".into(), "--fault".into(), "ended-session-id-null".into()]);
    let dir = outdir("reproduce-after-delete");
    let mut cmd = mcpcert();
    cmd.args(["run", "--http", &server.url]);
    report_args(&mut cmd, &dir);
    cmd.output().unwrap();
    let rep = report(&dir);
    let c = case(&rep, "2025-11-25/wire/server-frames-valid");
    assert_eq!(c["verdict"], "fail", "{c}");
    let repro = c["reproducer"].as_str().unwrap();
    let lines: Vec<&str> = repro.lines().collect();
    let delete = lines.iter().position(|l| l.contains("-X DELETE")).unwrap_or_else(|| panic!("the DELETE is sent:\n{repro}"));
    let ping = lines.iter().position(|l| l.contains("\"method\":\"ping\"")).unwrap_or_else(|| panic!("the ping is sent:\n{repro}"));
    assert!(
        delete < ping && lines[delete].contains("$sid") && lines[ping].contains("$sid"),
        "the DELETE first, in the same session:\n{repro}"
    );
    let Ok(py) = std::process::Command::new("python3").arg("--version").output() else { return };
    assert!(py.status.success());
    let check = |report: &std::path::Path| {
        let mcpcert_dir = std::path::Path::new(env!("CARGO_BIN_EXE_mcpcert")).parent().unwrap().to_path_buf();
        let path = format!("{}:{}", mcpcert_dir.display(), std::env::var("PATH").unwrap_or_default());
        let out = std::process::Command::new("python3")
            .arg(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/reproducers-check.py"))
            .arg(report)
            .env("PATH", path)
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let said = check(&dir.join("report.json"));
    assert!(said.contains("1 reproducers replayed, 0 differ"), "{said}");
    // Without the DELETE, the ping reaches a live session: it differs.
    let mut cut = rep.clone();
    for c in cut["cases"].as_array_mut().unwrap() {
        if c["id"] == "2025-11-25/wire/server-frames-valid" {
            let kept: Vec<&str> = repro.lines().filter(|l| !l.contains("-X DELETE")).collect();
            c["reproducer"] = serde_json::Value::String(kept.join("\n"));
            let t: Vec<serde_json::Value> =
                c["transcript"].as_array().unwrap().iter().filter(|e| e["http_method"] != "DELETE").cloned().collect();
            c["transcript"] = serde_json::Value::Array(t);
        }
    }
    let without = dir.join("report-without-delete.json");
    std::fs::write(&without, serde_json::to_string(&cut).unwrap()).unwrap();
    let said = check(&without);
    assert!(said.contains("1 differ"), "without the DELETE the replay gets another answer:\n{said}");
}

/// A secret header the config reads from a variable is shown by that
/// variable's name, and the reproducer reads the variable again.
#[test]
fn a_redacted_header_names_its_variable_and_the_reproducer_reads_it() {
    let dir = outdir("reproduce-header-env");
    let cfg = dir.join("key.toml");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(&cfg, "[target.headers]\nX-Api-Key = { env = \"MCPCERT_TEST_API_KEY\" }\n").unwrap();
    let server = start_http(&["--era".into(), "modern".into(), "--fault".into(), "unknown-method-wrong-code".into()]);
    let mut cmd = mcpcert();
    cmd.args(["run", "--http", &server.url, "--config", cfg.to_str().unwrap(), "2026-07-28/lifecycle/unknown-method", "--exact"]);
    cmd.env("MCPCERT_TEST_API_KEY", "value-that-must-not-show-7f3a");
    report_args(&mut cmd, &dir);
    cmd.output().unwrap();
    let c = case(&report(&dir), "2026-07-28/lifecycle/unknown-method");
    assert_eq!(c["verdict"], "fail", "{c}");
    let repro = c["reproducer"].as_str().unwrap();
    assert!(repro.contains("-H \"x-api-key: ${MCPCERT_TEST_API_KEY}\""), "{repro}");
    let sent = c["transcript"][0]["sent_headers"].to_string();
    assert!(sent.contains("[redacted: $MCPCERT_TEST_API_KEY]"), "{sent}");
    for f in ["report.json", "junit.xml", "report.html"] {
        assert!(!std::fs::read_to_string(dir.join(f)).unwrap().contains("value-that-must-not-show-7f3a"), "{f}");
    }
}
