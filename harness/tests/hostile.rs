//! Broken and hostile servers: the run always ends, the reports are always
//! written and well-formed, and the exit code says what happened.

mod common;

use common::{case, mcpcert, outdir, report, report_args, workspace_root};

use std::path::Path;
use std::time::{Duration, Instant};

fn run_stdio(server: &str, dir: &Path, extra: &[&str]) -> (i32, String, Duration) {
    let start = Instant::now();
    let mut cmd = mcpcert();
    cmd.args(["run", "--stdio", server, "--startup-timeout-ms", "2000", "--request-timeout-ms", "2000"]).args(extra);
    report_args(&mut cmd, dir);
    let out = cmd.output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr),
        start.elapsed(),
    )
}

/// The JUnit file holds no character XML 1.0 forbids, parses as JUnit,
/// and has one testcase per case of the JSON report.
fn assert_junit_well_formed(dir: &Path) -> String {
    let xml = std::fs::read_to_string(dir.join("junit.xml")).expect("junit written");
    for c in xml.chars() {
        let ok = matches!(c, '\u{9}' | '\u{A}' | '\u{D}' | '\u{20}'..='\u{D7FF}' | '\u{E000}'..='\u{FFFD}' | '\u{10000}'..='\u{10FFFF}');
        assert!(ok, "JUnit holds a character XML forbids: {:?}", c);
    }
    let parsed = quick_junit::Report::deserialize_from_str(&xml).unwrap_or_else(|e| panic!("JUnit does not parse: {e}\n{xml}"));
    let cases: usize = parsed.test_suites.iter().map(|s| s.test_cases.len()).sum();
    assert_eq!(cases as u64, report(dir)["summary"]["total"].as_u64().unwrap(), "one testcase per case");
    xml
}

#[test]
fn garbage_on_stdout_and_no_answer_gives_exit_3_and_full_reports() {
    let dir = outdir("garbage");
    // ESC, NUL, BEL and a byte that is not UTF-8, then silence.
    let cmd = "sh -c 'printf \"\\033[31mgarbage\\000\\007 \\377\\376 <x>&\\n\"; sleep 30'";
    let (code, out, took) = run_stdio(cmd, &dir, &[]);
    assert_eq!(code, 3, "{out}");
    assert!(took < Duration::from_secs(25), "took {took:?}");
    let xml = assert_junit_well_formed(&dir);
    assert!(xml.contains("<error"), "{xml}");
    let r = report(&dir);
    assert!(r["target_problem"].as_str().unwrap().contains("no answer"), "{r}");
    assert_eq!(r["summary"]["error"].as_u64(), r["summary"]["total"].as_u64());
    assert!(dir.join("report.html").is_file());
}

#[test]
fn server_exiting_after_its_first_reply_gives_errors_not_a_hang() {
    let dir = outdir("exit-after-first");
    let reply = r#"{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{},"ttlMs":0,"cacheScope":"private"}}"#;
    let cmd = format!("sh -c 'read line; echo {}; exit 0'", mcpcert::transport::shell_quote(reply).replace('\'', "'\\''"));
    let (code, out, took) = run_stdio(&cmd, &dir, &["--revision", "2026-07-28"]);
    assert_eq!(code, 1, "{out}");
    assert!(took < Duration::from_secs(60), "took {took:?}");
    assert_junit_well_formed(&dir);
    let r = report(&dir);
    let cases = r["cases"].as_array().unwrap();
    assert!(cases.iter().any(|c| c["verdict"] == "error" && c["message"].as_str().unwrap().contains("closed")), "{out}");
    assert_eq!(cases.len() as u64, r["summary"]["total"].as_u64().unwrap());
}

#[test]
fn garbage_between_valid_replies_fails_the_stdout_check_with_quoted_evidence() {
    let dir = outdir("banner");
    let srv = common::refserver();
    let cmd = format!("{} --era modern --fault stdout-banner", srv.display());
    let (code, out, _) = run_stdio(&cmd, &dir, &[]);
    assert_eq!(code, 1, "{out}");
    let r = report(&dir);
    let c = case(&r, "2026-07-28/lifecycle/stdio-stdout-only-jsonrpc");
    assert_eq!(c["verdict"], "fail");
    assert!(c["message"].as_str().unwrap().contains("reference server ready"), "{c}");
    assert!(c["reproducer"].as_str().unwrap().contains("printf"), "{c}");
}

#[test]
fn unstartable_command_gives_exit_3() {
    let dir = outdir("nostart");
    let (code, out, _) = run_stdio("/nonexistent/mcp-server --x", &dir, &[]);
    assert_eq!(code, 3, "{out}");
    assert_junit_well_formed(&dir);
    assert!(report(&dir)["target_problem"].as_str().unwrap().contains("could not start"));
}

#[test]
fn unreachable_url_gives_exit_3() {
    let dir = outdir("nourl");
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    drop(l);
    let mut cmd = mcpcert();
    cmd.args(["run", "--http", &format!("http://127.0.0.1:{port}/mcp")]);
    report_args(&mut cmd, &dir);
    let out = cmd.output().unwrap();
    assert_eq!(out.status.code(), Some(3), "{}", String::from_utf8_lossy(&out.stderr));
    assert_junit_well_formed(&dir);
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("test result: FAILED"),
        "the console summary is printed for unreachable targets too"
    );
}

#[test]
fn usage_and_suite_errors_give_exit_2_naming_file_and_path() {
    let out = mcpcert().args(["run"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let dir = outdir("badsuite");
    std::fs::create_dir_all(dir.join("2026-07-28")).unwrap();
    std::fs::write(
        dir.join("2026-07-28/10-x.json"),
        r#"{"format":1,"revision":"2026-07-28","area":"x","title":"t","cases":[{"id":"2026-07-28/x/a","title":"t","level":"MUST","spec":{"document":"d","anchor":"a"},"basis":{"quote":"q","source":"s","keyword":"MUST"},"steps":[{"send":{"method":"m","metaa":"full"}}],"expect":[]}]}"#,
    )
    .unwrap();
    let out = mcpcert().args(["run", "--stdio", "true", "--suites"]).arg(&dir).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("2026-07-28/10-x.json") && err.contains("/cases/0/steps/0"), "{err}");
}

#[test]
fn clean_reference_server_exits_0_and_filters_work() {
    let dir = outdir("clean");
    let cmd = format!("{} --era modern", common::refserver().display());
    let (code, out, _) = run_stdio(&cmd, &dir, &["2026-07-28/lifecycle/unknown-method", "--exact"]);
    assert_eq!(code, 0, "{out}");
    let r = report(&dir);
    assert_eq!(r["cases"].as_array().unwrap().len(), 1);
    assert_eq!(r["format_version"], 1);
    assert!(out.contains("test result: ok. 1 pass, 0 fail, 0 warn, 0 n/a, 0 error"), "{out}");
}

#[test]
fn control_characters_and_invalid_utf8_quoted_from_the_server_keep_junit_well_formed() {
    let dir = outdir("ctrl");
    let cmd = format!(
        "sh -c 'printf \"\\033[31mred\\000nul\\007bell \\377\\376 <tag> & ]]>\\n\"; exec {} --era modern'",
        common::refserver().display()
    );
    let (code, out, _) = run_stdio(&cmd, &dir, &["stdio-stdout-only-jsonrpc"]);
    assert_eq!(code, 1, "{out}");
    let xml = assert_junit_well_formed(&dir);
    assert!(xml.contains("red") && xml.contains("&lt;tag&gt;"), "the hostile line must be quoted (sanitised), not dropped:\n{xml}");
    let r = report(&dir);
    let msg = r["cases"][0]["message"].as_str().unwrap();
    assert!(msg.contains("not valid UTF-8") || msg.contains("not JSON"), "{msg}");
}

#[test]
fn wire_audit_failure_replays_the_offending_request_and_reruns_the_revision() {
    let dir = outdir("wire-replay");
    let cmd = format!("{} --era modern --fault tools-list-no-result-type", common::refserver().display());
    let (code, out, _) = run_stdio(&cmd, &dir, &["--revision", "2026-07-28"]);
    assert_eq!(code, 1, "{out}");
    let r = report(&dir);
    let c = case(&r, "2026-07-28/wire/server-frames-valid");
    assert_eq!(c["verdict"], "fail");
    assert!(c["message"].as_str().unwrap().contains("ListToolsResultResponse at /result"), "{c}");
    let repro = c["reproducer"].as_str().unwrap();
    assert!(repro.contains("--revision 2026-07-28") && !repro.contains("--exact"), "a whole-run check reruns its revision: {repro}");
    assert!(
        repro.lines().any(|l| l.starts_with("{ printf") && l.contains("tools/list")),
        "the request that drew the bad frame is replayed: {repro}"
    );
}

#[test]
fn a_server_that_dies_at_start_shows_its_stderr_on_the_console_and_in_every_report() {
    let dir = outdir("start-traceback");
    let cmd = "sh -c 'echo \"Traceback (most recent call last):\" >&2; echo \"ModuleNotFoundError: No module named mcpcert_missing\" >&2; exit 1'";
    let (code, out, _) = run_stdio(cmd, &dir, &[]);
    assert_eq!(code, 3, "{out}");
    assert!(out.contains("ModuleNotFoundError: No module named mcpcert_missing"), "the console shows the traceback:\n{out}");
    // No process answered: no "slowest answered after 0.0 s".
    assert!(out.contains("none answered a request") && !out.contains("answered its first request after"), "{out}");
    for f in ["junit.xml", "report.html", "report.json"] {
        let text = std::fs::read_to_string(dir.join(f)).unwrap();
        assert!(text.contains("No module named mcpcert_missing"), "{f} shows the server's stderr");
    }
}

#[test]
fn a_config_cwd_is_relative_to_the_config_file() {
    let dir = outdir("cwd");
    std::fs::create_dir_all(dir.join("work")).unwrap();
    let script = dir.join("work/serve.sh");
    std::fs::write(&script, format!("#!/bin/sh\nexec {} --era modern\n", common::refserver().display())).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::write(dir.join("target.toml"), "[target]\ncommand = \"./serve.sh\"\ncwd = \"work\"\n").unwrap();
    let mut cmd = mcpcert();
    cmd.current_dir(std::env::temp_dir()).args(["run", "--config"]).arg(dir.join("target.toml")).arg("2026-07-28/lifecycle/unknown-method");
    report_args(&mut cmd, &dir);
    let out = cmd.output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn a_server_that_reads_header_names_case_sensitively_is_judged_not_declared_unreachable() {
    let server = common::start_http(&["--era".into(), "modern".into(), "--fault".into(), "header-names-canonical-only".into()]);
    let dir = outdir("canonical-names");
    let mut cmd = mcpcert();
    cmd.args(["run", "--http", &server.url, "--revision", "2026-07-28"]);
    report_args(&mut cmd, &dir);
    let out = cmd.output().unwrap();
    assert_eq!(out.status.code(), Some(1), "a finding, not exit 3: {}", String::from_utf8_lossy(&out.stderr));
    let r = report(&dir);
    assert_eq!(r["revisions"][0]["header_names_case_sensitive"], true, "{}", r["revisions"]);
    let c = case(&r, "2026-07-28/headers/method-name-case");
    assert_eq!(c["verdict"], "fail", "{c}");
    assert!(c["message"].as_str().unwrap().contains("HTTP field names are case-insensitive"), "{c}");
    let red: Vec<&str> = r["cases"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["verdict"] == "fail" || c["verdict"] == "error")
        .map(|c| c["id"].as_str().unwrap())
        .collect();
    assert!(red.iter().all(|id| id.ends_with("-name-case")), "the rest of the server is still judged: {red:?}");
}

#[test]
fn a_server_negotiating_a_revision_mcpcert_does_not_test_is_told_so_with_exit_3() {
    // Answers initialize with 2024-10-07 (a pre-release revision older SDKs
    // still list) and everything else with -32601.
    let dir = outdir("unknown-revision");
    let script = r#"import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if "id" not in m:
        continue
    if m.get("method") == "initialize":
        r = {"protocolVersion": "2024-10-07", "capabilities": {"tools": {}}, "serverInfo": {"name": "old-one", "version": "0"}}
        print(json.dumps({"jsonrpc": "2.0", "id": m["id"], "result": r}), flush=True)
    else:
        print(json.dumps({"jsonrpc": "2.0", "id": m["id"], "error": {"code": -32601, "message": "Method not found"}}), flush=True)
"#;
    let path = dir.join("old_server.py");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(&path, script).unwrap();
    let (code, out, _) = run_stdio(&format!("python3 {}", path.display()), &dir, &[]);
    assert_eq!(code, 3, "{out}");
    assert!(out.contains("the target speaks no revision mcpcert tests"), "{out}");
    assert!(out.contains("2024-10-07"), "the version it named is named: {out}");
    assert!(!out.contains("could not be started or reached"), "not called unreachable: {out}");
    assert_junit_well_formed(&dir);
    let r = report(&dir);
    assert!(r["target_problem"].as_str().unwrap().contains("2024-10-07"), "{r}");
}

#[test]
fn an_environment_assignment_as_the_command_gets_a_hint_to_the_config() {
    let dir = outdir("env-assignment");
    let (code, out, _) = run_stdio("TZ=UTC true", &dir, &[]);
    assert_eq!(code, 3, "{out}");
    assert!(out.contains("could not start `TZ=UTC`"), "{out}");
    assert!(out.contains("[target.env]") && out.contains("TZ = \"UTC\""), "the hint names the config table: {out}");
    // A program name that merely holds `=` elsewhere gets no such hint.
    let dir = outdir("env-assignment-not");
    let (_, out, _) = run_stdio("./no=such-program", &dir, &[]);
    assert!(!out.contains("[target.env]"), "{out}");
}

#[test]
fn a_wrong_http_path_is_named_with_a_hint() {
    let server = common::start_http(&["--era".to_string(), "dual".to_string()]);
    let url = server.url.trim_end_matches("/mcp").to_string() + "/wrong";
    let dir = outdir("wrong-path");
    let mut cmd = mcpcert();
    cmd.args(["run", "--http", &url]);
    report_args(&mut cmd, &dir);
    let out = cmd.output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{text}");
    assert!(text.contains("HTTP 404 at /wrong") && text.contains("often /mcp"), "{text}");
    assert!(report(&dir)["target_problem"].as_str().unwrap().contains("endpoint path"));
}

/// A command that is not an MCP server (it serves HTTP and holds a port):
/// the line it printed is quoted, with what to check, and no second copy is
/// started while the first holds the port (it would fail for another
/// reason: the port is taken).
#[test]
fn a_program_that_is_not_an_mcp_server_is_quoted_and_not_started_twice_at_once() {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let script = workspace_root().join("fixtures/hostile/hostile.py");
    let dir = outdir("hostile-not-mcp");
    let (code, out, _) = run_stdio(&format!("python3 {} not-mcp {port}", script.display()), &dir, &[]);
    assert_eq!(code, 3, "{out}");
    assert!(out.contains(&format!("| Serving HTTP on 127.0.0.1 port {port}")), "the line is quoted: {out}");
    assert!(out.contains("is it an MCP server speaking stdio?"), "{out}");
    assert!(!out.contains("Address already in use"), "a second copy ran while the first held the port: {out}");
}

#[test]
fn a_listen_met_with_total_silence_is_an_error_and_one_held_unacknowledged_fails() {
    // The process answers nothing after subscriptions/listen, not even a
    // ping: that is a timeout (error), not a broken acknowledgment rule.
    let case_id = "2026-07-28/subscriptions/acknowledged";
    let script = workspace_root().join("fixtures/hostile/hostile.py");
    let dir = outdir("listen-hangs");
    let (_, out, _) = run_stdio(&format!("python3 {} listen-hangs", script.display()), &dir, &[case_id]);
    let c = case(&report(&dir), case_id);
    assert_eq!(c["verdict"], "error", "{c}\n{out}");
    assert!(c["message"].as_str().unwrap().contains("did not answer a ping"), "{c}");
    // The reference server holding the subscription silently but answering
    // the ping breaks the rule: fail, as over HTTP.
    let dir = outdir("listen-no-ack-stdio");
    let cmd = format!("{} --era modern --fault listen-no-ack", common::refserver().display());
    let (code, out, _) = run_stdio(&cmd, &dir, &[case_id]);
    let c = case(&report(&dir), case_id);
    assert_eq!((code, c["verdict"].as_str()), (1, Some("fail")), "{c}\n{out}");
    assert!(c["message"].as_str().unwrap().contains("no notifications/subscriptions/acknowledged"), "{c}");
}

/// A loaded machine makes every start slower, not only the first: a new
/// process gets the larger of the start-up timeout and ten times the
/// longest start the run has seen. Here the probes' processes (the first
/// two) start in 0.3 s and every later one in 1.3 s, with a start-up
/// timeout of 1 s: the
/// run is slower, not red (each later start was ERROR "no response within
/// 1000 ms" before). And a start that still misses the allowance says how
/// the allowance was reached.
#[test]
fn later_starts_slower_than_the_start_up_timeout_get_an_allowance_from_the_first() {
    let refserver = common::refserver();
    let script = |first: &str, later: &str, name: &str| {
        let dir = outdir(name);
        let count = dir.join("starts");
        let _ = std::fs::remove_file(&count);
        let sh = dir.join("server.sh");
        std::fs::write(
            &sh,
            format!(
                "#!/bin/sh\necho >> '{c}'\nif [ \"$(wc -l < '{c}')\" -gt 2 ]; then sleep {later}; else sleep {first}; fi\nexec '{r}' --stdio --era modern\n",
                c = count.display(),
                r = refserver.display()
            ),
        )
        .unwrap();
        (dir, format!("sh {}", sh.display()))
    };
    let (dir, cmd) = script("0.3", "1.3", "slow-later-starts");
    let mut run = mcpcert();
    run.args(["run", "--stdio", &cmd, "--startup-timeout-ms", "1000", "--request-timeout-ms", "1000"]);
    report_args(&mut run, &dir);
    let out = run.output().unwrap();
    let rep = report(&dir);
    let errors: Vec<String> = rep["cases"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["verdict"] == "error")
        .map(|c| format!("{}: {}", c["id"], c["message"]))
        .collect();
    assert!(errors.is_empty(), "later starts within ten times the first are no error:\n{}", errors.join("\n"));
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stdout));
    // A start that misses even the allowance says how it was reached.
    let (dir, cmd) = script("0", "1.5", "slow-later-starts-missed");
    let mut run = mcpcert();
    run.args([
        "run",
        "--stdio",
        &cmd,
        "--startup-timeout-ms",
        "1000",
        "--request-timeout-ms",
        "1000",
        "2026-07-28/tools/list-same-on-fresh-connection",
        "--exact",
    ]);
    report_args(&mut run, &dir);
    run.output().unwrap();
    let c = case(&report(&dir), "2026-07-28/tools/list-same-on-fresh-connection");
    assert_eq!(c["verdict"], "error", "{c}");
    let m = c["message"].as_str().unwrap();
    assert!(m.contains("start-up allowance") && m.contains("--startup-timeout-ms"), "{m}");
}

/// Misaddressed servers are named: a URL whose server redirects it (a
/// trailing slash, 307 to …/mcp) says where to and what to pass instead;
/// --revision asking for a revision the server does not serve says which
/// it serves, and that a run without --revision judges it. (Both said "the
/// target speaks no revision mcpcert tests".)
#[test]
fn misaddressed_servers_are_named() {
    let s = common::start_http(&["--era".into(), "modern".into(), "--quirk".into(), "redirect-trailing-slash".into()]);
    let dir = outdir("misaddressed-redirect");
    let mut cmd = mcpcert();
    cmd.args(["run", "--http", &format!("{}/", s.url)]);
    report_args(&mut cmd, &dir);
    let out = cmd.output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert!(
        err.contains(&format!("redirects {}/ to {} (HTTP 307)", s.url, s.url)) && err.contains(&format!("pass --http {}", s.url)),
        "{err}"
    );
    let refserver = common::refserver().display().to_string();
    for (era, asked, said) in [
        ("modern", "2025-11-25", "it serves 2026-07-28"),
        ("2025-06-18", "2025-11-25", "its initialize negotiates 2025-06-18"),
        ("legacy", "2026-07-28", "its initialize negotiates 2025-11-25"),
    ] {
        let dir = outdir(&format!("misaddressed-{era}-{asked}"));
        let mut cmd = mcpcert();
        cmd.args(["run", "--stdio", &format!("{refserver} --stdio --era {era}"), "--revision", asked]);
        report_args(&mut cmd, &dir);
        let out = cmd.output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(3), "{err}");
        assert!(
            err.contains(&format!("--revision {asked} was asked for, and the server does not serve it: {said}"))
                && err.contains("A run without --revision judges what the server serves"),
            "{era}: {err}"
        );
    }
}

/// A server that answers every request 403 with a text body and no
/// challenge, as a Host check does (Playwright's HTTP mode at 127.0.0.1:
/// "Access is only allowed at localhost:…"). It was taken as protected,
/// and the authorization cases failed at MUST on a server with no
/// authorization at all; it is a refusal, said with its status, its body
/// and the host to try.
#[test]
fn a_host_check_is_a_refusal_never_an_authorization_failure() {
    use std::io::{BufRead, BufReader, Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for s in listener.incoming().flatten() {
            let mut rd = BufReader::new(s.try_clone().unwrap());
            let mut len = 0usize;
            let mut line = String::new();
            while rd.read_line(&mut line).is_ok_and(|n| n > 0) && line != "\r\n" {
                if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                    len = v.trim().parse().unwrap_or(0);
                }
                line.clear();
            }
            let mut body = vec![0; len];
            let _ = rd.read_exact(&mut body);
            let text = format!("Access is only allowed at localhost:{port}");
            let mut s = s;
            let _ = write!(
                s,
                "HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{text}",
                text.len()
            );
        }
    });
    let dir = outdir("host-check");
    let mut cmd = mcpcert();
    cmd.args(["run", "--http", &format!("http://127.0.0.1:{port}/mcp")]);
    report_args(&mut cmd, &dir);
    let out = cmd.output().unwrap();
    let console = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert_eq!(out.status.code(), Some(3), "{console}");
    assert!(
        console.contains(&format!("refuses every probe with HTTP 403 \"Access is only allowed at localhost:{port}\""))
            && console.contains("not authorization")
            && console.contains(&format!("try --http http://localhost:{port}/mcp")),
        "{console}"
    );
    assert!(!console.contains("protected: the server answers"), "{console}");
    let rep: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(dir.join("report.json")).unwrap()).unwrap();
    assert!(rep["cases"].as_array().unwrap().iter().all(|c| c["verdict"] != "fail"), "no case fails on a refusal");
}

/// Fresh means fresh: a stateless server's process whose first request is
/// a listen must serve it. A server that hangs then was hidden when the
/// subscriptions shared the cold walk's process (a list came first, and
/// the cases passed); each subscription's process now opens with it.
#[test]
fn a_server_that_hangs_on_a_first_listen_is_found_on_a_fresh_process() {
    let case_id = "2026-07-28/subscriptions/acknowledged";
    let script = workspace_root().join("fixtures/hostile/hostile.py");
    let dir = outdir("listen-first-hangs");
    let (_, out, _) =
        run_stdio(&format!("python3 {} listen-first-hangs", script.display()), &dir, &["--revision", "2026-07-28", "subscriptions/"]);
    let c = case(&report(&dir), case_id);
    assert_eq!(c["verdict"], "error", "{c}\n{out}");
    // The listen was the first line its process got.
    let first = c["transcript"].as_array().unwrap().iter().find_map(|e| e["sent"].as_str().map(String::from)).unwrap_or_default();
    assert!(first.contains("subscriptions/listen"), "{first}");
}

/// A server that offers nothing (no capability; every method but
/// server/discover -32601): no case about a feature passes, since there
/// was nothing to judge. Finds the cases that pass on nothing.
#[test]
fn nothing_offered_passes_no_case_about_a_feature() {
    let script = workspace_root().join("fixtures/hostile/hostile.py");
    let dir = outdir("offers-nothing");
    let (_, out, _) = run_stdio(&format!("python3 {} offers-nothing", script.display()), &dir, &["--revision", "2026-07-28"]);
    let rep = report(&dir);
    let features =
        ["tools/", "prompts/", "resources/", "completion/", "tasks/", "skills/", "apps/", "input-required/", "conformance/", "roles/"];
    let passed_on_nothing: Vec<String> = rep["cases"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["verdict"] == "pass")
        .filter_map(|c| c["id"].as_str().map(String::from))
        .filter(|id| features.iter().any(|f| id.starts_with(&format!("2026-07-28/{f}"))))
        // A rule about the answer to a request that was sent: the answer
        // (-32601) was judged, and it is no InputRequiredResult.
        .filter(|id| id != "2026-07-28/conformance/input-required-unsupported-methods")
        .collect();
    assert!(passed_on_nothing.is_empty(), "cases that passed on a server offering nothing: {passed_on_nothing:?}\n{out}");
}

/// One broken dependency, one finding: a server whose backend is down
/// answers tools/list with the same -32603 on every process. That was six
/// failures (a statelessness failure among them) and dozens of errors;
/// it is one root cause, said once, and every case that needs tools/list
/// is error with it. Against the same server with its backend up, no case
/// turns fail or warn.
#[test]
fn one_broken_dependency_is_one_root_cause_never_a_failure() {
    let script = workspace_root().join("fixtures/hostile/hostile.py");
    let up = outdir("backend-up");
    run_stdio(&format!("python3 {} plain", script.display()), &up, &["--revision", "2026-07-28"]);
    let down = outdir("backend-down");
    let (_, out, _) = run_stdio(&format!("python3 {} backend-down", script.display()), &down, &["--revision", "2026-07-28"]);
    let (a, b) = (report(&up), report(&down));
    let before: std::collections::BTreeMap<String, String> = a["cases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["id"].as_str().unwrap().to_string(), c["verdict"].as_str().unwrap().to_string()))
        .collect();
    let worse: Vec<String> = b["cases"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| {
            (c["verdict"] == "fail" || c["verdict"] == "warn") && before[c["id"].as_str().unwrap()] != c["verdict"].as_str().unwrap()
        })
        .map(|c| format!("{} {}: {}", c["id"], c["verdict"], c["message"]))
        .collect();
    assert!(worse.is_empty(), "an unreachable backend turned cases red:\n{}\n{out}", worse.join("\n"));
    for id in ["2026-07-28/lifecycle/cold-request", "2026-07-28/tools/list-walk", "2026-07-28/lifecycle/capabilities-match-handlers"] {
        let c = case(&b, id);
        assert_eq!(c["verdict"], "error", "{c}");
        assert!(c["message"].as_str().unwrap().starts_with("the server cannot serve tools/list: it answers {\"code\":-32603"), "{c}");
    }
    let roots: Vec<&serde_json::Value> =
        b["roots"].as_array().unwrap().iter().filter(|r| r["cause"].as_str().unwrap().contains("backend unreachable")).collect();
    assert_eq!(roots.len(), 1, "said once: {}", b["roots"]);
    assert!(roots[0]["cause"].as_str().unwrap().contains("on its main process and on a new one alike"), "{}", roots[0]);
}
