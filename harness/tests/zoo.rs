//! The robustness zoo: servers that misbehave on purpose
//! (`fixtures/hostile/hostile.py`). For each, mcpcert finishes within its
//! bounds, writes complete reports, names the problem in `error` or `fail`
//! verdicts, keeps its memory bounded and leaves no process behind.

mod common;

use common::{case, mcpcert, outdir, report, report_args, workspace_root};
use std::time::{Duration, Instant};

struct Outcome {
    code: i32,
    elapsed: Duration,
    report: serde_json::Value,
}

/// Run mcpcert (2026-07-28, 3 s timeouts) against one hostile mode.
fn run_mode(mode: &str, arg: &str, filter: Option<&str>) -> Outcome {
    let tag = format!("zoo-{}-{mode}", std::process::id());
    let script = workspace_root().join("fixtures/hostile/hostile.py");
    let server = format!("python3 {} {mode} {} {tag}", script.display(), if arg.is_empty() { "-" } else { arg });
    let dir = outdir(&format!("zoo-{mode}"));
    let mut cmd = mcpcert();
    cmd.args(["run", "--stdio", &server, "--revision", "2026-07-28", "--startup-timeout-ms", "3000", "--request-timeout-ms", "3000"]);
    if let Some(f) = filter {
        cmd.arg(f);
    }
    report_args(&mut cmd, &dir);
    let start = Instant::now();
    let out = cmd.output().unwrap();
    let elapsed = start.elapsed();
    // Complete reports, whatever happened.
    let report = report(&dir);
    let junit = std::fs::read_to_string(dir.join("junit.xml")).unwrap();
    quick_junit::Report::deserialize_from_str(&junit).unwrap_or_else(|e| panic!("{mode}: JUnit does not parse: {e}"));
    assert!(std::fs::metadata(dir.join("report.html")).unwrap().len() > 0);
    assert_eq!(report["cases"].as_array().unwrap().len() as u64, report["summary"]["total"].as_u64().unwrap());
    // No process left behind.
    std::thread::sleep(Duration::from_millis(200));
    let left: Vec<String> = std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok())
        .filter_map(|e| std::fs::read(e.path().join("cmdline")).ok())
        .map(|c| String::from_utf8_lossy(&c).replace('\0', " "))
        .filter(|c| c.contains(&tag) && !c.contains("mcpcert run"))
        .collect();
    assert!(left.is_empty(), "{mode}: processes left behind: {left:?}");
    Outcome { code: out.status.code().unwrap_or(-1), elapsed, report }
}

fn peak_mib(o: &Outcome) -> u64 {
    o.report["peak_rss_kib"].as_u64().unwrap() / 1024
}

#[test]
fn half_a_line_then_silence_is_an_error_that_says_so() {
    let o = run_mode("partial-then-silence", "", None);
    assert_eq!(o.code, 3, "unreachable target");
    assert!(o.elapsed < Duration::from_secs(30), "{:?}", o.elapsed);
    let why = o.report["target_problem"].as_str().unwrap();
    assert!(why.contains("server/discover"), "{why}");
    assert!(peak_mib(&o) < 100);
}

#[test]
fn a_100_mb_reply_is_refused_at_the_line_cap_with_bounded_memory() {
    let o = run_mode("huge-reply", "", None);
    assert_eq!(o.code, 3);
    let why = o.report["target_problem"].as_str().unwrap();
    assert!(why.contains("exceeds") || why.contains("limit"), "the message names the size limit: {why}");
    assert!(peak_mib(&o) < 100, "peak {} MiB", peak_mib(&o));
    assert!(o.elapsed < Duration::from_secs(60), "{:?}", o.elapsed);
}

#[test]
fn json_nested_100000_deep_is_refused_without_a_crash() {
    let o = run_mode("deep-json", "", None);
    assert_eq!(o.code, 3);
    let why = o.report["target_problem"].as_str().unwrap();
    assert!(why.contains("recursion limit"), "{why}");
}

#[test]
fn a_crash_in_the_middle_gives_errors_and_a_full_report() {
    let o = run_mode("crash-mid-suite", "", None);
    assert_eq!(o.code, 1);
    let errors: Vec<&serde_json::Value> = o.report["cases"].as_array().unwrap().iter().filter(|c| c["verdict"] == "error").collect();
    assert!(!errors.is_empty());
    assert!(errors.iter().any(|c| c["message"].as_str().unwrap().contains("exit")), "an error names the exit");
    assert!(o.report["summary"]["pass"].as_u64().unwrap() > 0, "cases before the crash still count");
    // The traceback the server wrote as it died is shown with the error.
    assert!(
        errors.iter().any(|c| c["stderr_tail"].as_str().is_some_and(|t| t.contains("simulated crash on request 12"))),
        "the crash's stderr is shown: {errors:?}"
    );
}

#[test]
fn replies_trickled_a_byte_at_a_time_still_arrive() {
    let o = run_mode("trickle", "", Some("lifecycle/discover"));
    assert_eq!(o.code, 0, "{}", o.report["cases"]);
    let c = case(&o.report, "2026-07-28/lifecycle/discover-result-shape");
    assert_eq!(c["verdict"], "pass");
}

#[test]
fn a_deeply_nested_any_of_schema_is_judged_quickly() {
    let o = run_mode("slow-schema", "", Some("tools/"));
    assert!(o.elapsed < Duration::from_secs(30), "{:?}", o.elapsed);
    let c = case(&o.report, "2026-07-28/tools/descriptor-input-schema");
    assert_eq!(c["verdict"], "pass", "{c}");
    assert!(peak_mib(&o) < 200, "peak {} MiB", peak_mib(&o));
}

/// `n` tools in one page: walked, every descriptor judged, within bounds.
fn many_tools_are_walked_and_admitted(n: usize, max: Duration, max_mib: u64) -> Outcome {
    let o = run_mode("many-tools", &n.to_string(), Some("tools/"));
    let c = case(&o.report, "2026-07-28/tools/list-walk");
    assert_eq!(c["verdict"], "pass", "{c}");
    let adm = case(&o.report, "2026-07-28/tools/descriptor-input-schema");
    let note = adm["transcript"].as_array().unwrap().iter().filter_map(|e| e["note"].as_str()).collect::<Vec<_>>().join(" ");
    assert!(note.contains(&format!("{n} tools judged")), "{note}");
    assert!(o.elapsed < max, "{:?}", o.elapsed);
    assert!(peak_mib(&o) < max_mib, "peak {} MiB", peak_mib(&o));
    o
}

#[test]
fn ten_thousand_tools_are_walked_and_admitted() {
    // About 42 MiB in a debug build.
    let o = many_tools_are_walked_and_admitted(10_000, Duration::from_secs(60), 100);
    // The walk on a fresh process is kept as its names and transcript only,
    // and still compared whole; the server ignores an unknown cursor.
    let fresh = case(&o.report, "2026-07-28/tools/list-same-on-fresh-connection");
    assert_eq!(fresh["verdict"], "pass", "{fresh}");
    let notes: Vec<&str> = fresh["transcript"].as_array().unwrap().iter().filter_map(|e| e["note"].as_str()).collect();
    assert!(notes.iter().any(|n| n.contains("1 page(s), 10000 item(s)")), "{notes:?}");
    assert_eq!(case(&o.report, "2026-07-28/tools/list-invalid-cursor")["verdict"], "warn");
}

#[test]
fn a_hundred_thousand_tools_are_walked_and_admitted() {
    // About 270 MiB in a debug build (a 6 MB page parsed twice at once).
    many_tools_are_walked_and_admitted(100_000, Duration::from_secs(120), 500);
}

#[test]
fn a_remote_ref_is_never_fetched() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let url = format!("http://{}/schema.json", listener.local_addr().unwrap());
    let o = run_mode("remote-ref", &url, Some("tools/"));
    assert!(listener.accept().is_err(), "mcpcert connected to the remote $ref");
    let c = case(&o.report, "2026-07-28/tools/descriptor-input-schema");
    assert_eq!(c["verdict"], "pass", "a remote $ref is not judged, and not a failure: {c}");
    let note = c["transcript"].as_array().unwrap().iter().filter_map(|e| e["note"].as_str()).collect::<Vec<_>>().join(" ");
    assert!(note.contains("remote `$ref`"), "{note}");
}

#[test]
fn an_sse_stream_that_never_answers_ends_at_the_deadline() {
    use std::io::BufRead;
    let script = workspace_root().join("fixtures/hostile/hostile.py");
    let mut server =
        std::process::Command::new("python3").arg(&script).arg("sse-endless").stdout(std::process::Stdio::piped()).spawn().unwrap();
    let mut line = String::new();
    std::io::BufReader::new(server.stdout.take().unwrap()).read_line(&mut line).unwrap();
    let url = line.trim().strip_prefix("listening on ").unwrap().to_string();
    let dir = outdir("zoo-sse-endless");
    let mut cmd = mcpcert();
    cmd.args(["run", "--http", &url, "--revision", "2026-07-28", "--request-timeout-ms", "2000"]);
    report_args(&mut cmd, &dir);
    let start = Instant::now();
    let out = cmd.output().unwrap();
    let _ = server.kill();
    let _ = server.wait();
    assert!(start.elapsed() < Duration::from_secs(30), "{:?}", start.elapsed());
    assert_eq!(out.status.code(), Some(3));
    let r = report(&dir);
    let why = r["target_problem"].as_str().unwrap();
    assert!(why.contains("SSE stream gave no response"), "{why}");
}

#[test]
fn a_tools_walk_cut_short_leaves_the_cases_that_judge_it_error_never_pass() {
    for mode in ["tools-then-crash", "tools-page-hangs"] {
        let o = run_mode(mode, "", Some("2026-07-28/tools/"));
        let cases = o.report["cases"].as_array().unwrap();
        let walk = cases.iter().find(|c| c["id"] == "2026-07-28/tools/list-walk").unwrap();
        assert_eq!(walk["verdict"], "error", "{mode}: {walk}");
        for id in [
            "list-unique-names",
            "list-cache-hints",
            "descriptor-name",
            "descriptor-input-schema",
            "descriptor-output-schema",
            "descriptor-annotations",
            "list-deterministic-order",
        ] {
            let c = cases.iter().find(|c| c["id"] == format!("2026-07-28/tools/{id}")).unwrap();
            assert_eq!(c["verdict"], "error", "{mode}: {id} judged a partial list: {c}");
            assert!(c["message"].as_str().unwrap().contains("tools/list walk"), "{mode}: the message names the fact: {c}");
        }
        assert!(
            !cases.iter().any(|c| c["verdict"] == "pass" && c["id"] != "2026-07-28/tools/call-unknown-tool"),
            "{mode}: no pass on partial data"
        );
    }
}

#[test]
fn a_tool_call_that_times_out_is_error_in_every_case_that_judges_the_calls() {
    let o = run_mode("slow-tool", "", Some("2026-07-28/tools/call-"));
    for c in o.report["cases"].as_array().unwrap() {
        if c["id"] == "2026-07-28/tools/call-unknown-tool" {
            continue;
        }
        assert_eq!(c["verdict"], "error", "a timed-out call is no answer, never warn or n/a: {c}");
        assert!(c["message"].as_str().unwrap().contains("timeout"), "{c}");
    }
}

#[test]
fn a_trigger_that_times_out_is_error_not_a_missing_notification() {
    let tag = format!("zoo-{}-trigger-hangs", std::process::id());
    let script = workspace_root().join("fixtures/hostile/hostile.py");
    let dir = outdir("zoo-trigger-hangs");
    let cfg = dir.join("trigger.toml");
    std::fs::write(&cfg, "[subscriptions]\ntrigger_tool = \"toggle\"\n").unwrap();
    let mut cmd = mcpcert();
    cmd.args(["run", "--stdio", &format!("python3 {} trigger-hangs - {tag}", script.display()), "--revision", "2026-07-28"]).args([
        "--startup-timeout-ms",
        "3000",
        "--request-timeout-ms",
        "2000",
        "--config",
        cfg.to_str().unwrap(),
        "2026-07-28/subscriptions/",
    ]);
    report_args(&mut cmd, &dir);
    cmd.output().unwrap();
    let r = report(&dir);
    for id in ["list-changed-delivered", "notifications-carry-id"] {
        let c = case(&r, &format!("2026-07-28/subscriptions/{id}"));
        assert_eq!(c["verdict"], "error", "{c}");
        assert!(c["message"].as_str().unwrap().contains("the trigger got no answer"), "{c}");
    }
}

#[test]
fn progress_restarts_a_slow_calls_timeout_up_to_the_ceiling() {
    // 2.5 s of work, progress every 0.4 s, a 1 s request timeout: served.
    let script = workspace_root().join("fixtures/hostile/hostile.py");
    let run = |ceiling: &str| {
        let dir = outdir(&format!("zoo-progress-{ceiling}"));
        let mut cmd = mcpcert();
        cmd.args(["run", "--stdio", &format!("python3 {} progress-slow", script.display()), "--revision", "2026-07-28"]).args([
            "--request-timeout-ms",
            "1000",
            "--request-ceiling-ms",
            ceiling,
            "2026-07-28/tools/call-content",
        ]);
        report_args(&mut cmd, &dir);
        cmd.output().unwrap();
        case(&report(&dir), "2026-07-28/tools/call-content")
    };
    let c = run("20000");
    assert_eq!(c["verdict"], "pass", "{c}");
    // The ceiling still bounds it.
    let c = run("1500");
    assert_eq!(c["verdict"], "error", "{c}");
    assert!(c["message"].as_str().unwrap().contains("after its last progress notification (ceiling 1500 ms)"), "{c}");
}

#[test]
fn a_process_that_stopped_answering_fails_the_cases_that_need_it_at_once() {
    let start = Instant::now();
    let o = run_mode("hang-after", "3", None);
    let took = start.elapsed();
    // One request timeout (3 s), one late-answer wait, and the processes
    // started for cases of their own; not a timeout per case.
    assert!(took < Duration::from_secs(40), "took {took:?}");
    let cases = o.report["cases"].as_array().unwrap();
    let refused = cases.iter().filter(|c| c["message"].as_str().unwrap_or("").contains("stopped answering on this process")).count();
    assert!(refused > 10, "later cases on the hung process are refused at once ({refused})");
}

/// A server whose process exits after it answers a method it does not
/// know: the negative probes share a process, and its end after one probe
/// is no finding of the next one's (that one goes again on a new process).
/// Only the case that sends valid requests after an unknown one on the same
/// process sees the exit.
#[test]
fn a_negative_probes_process_that_exits_between_probes_fails_no_later_probe() {
    let o = run_mode("exit-after-unknown", "", None);
    let errors: Vec<String> = o.report["cases"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["verdict"] == "error")
        .map(|c| format!("{}: {}", c["id"], c["message"]))
        .collect();
    assert_eq!(errors.len(), 1, "{errors:#?}");
    assert!(errors[0].contains("stateless-after-malformed") && errors[0].contains("process exited"), "{errors:#?}");
    for id in ["2026-07-28/lifecycle/unknown-method", "2026-07-28/lifecycle/removed-logging-set-level"] {
        assert_eq!(case(&o.report, id)["verdict"], "pass", "{id}");
    }
}
