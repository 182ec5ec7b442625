//! Cases run concurrently (`-j`): the verdicts, the order of the console and
//! of the reports do not depend on it; cases that change the server's state
//! run alone; whole-run audits run after every other case of their revision.

mod common;
use common::*;
use mcpcert::run::waves;
use mcpcert::suite::{self, Case};

#[test]
fn waves_keep_state_changers_alone_and_audits_last() {
    let catalog = suite::load_builtin().unwrap();
    let cases: Vec<&Case> = catalog.cases.iter().collect();
    let w = waves(&cases, 8);
    // Every case once; in catalogue order but for those put off to the end
    // of their stretch (they run alone, and change nothing).
    let mut flat: Vec<usize> = w.iter().flatten().copied().collect();
    let put_off: Vec<usize> = flat.windows(2).filter(|p| p[1] < p[0]).map(|p| p[1]).collect();
    assert!(put_off.iter().all(|&i| cases[i].observes_alone()), "only observers run out of place");
    flat.sort_unstable();
    assert_eq!(flat, (0..cases.len()).collect::<Vec<_>>());
    for r in &w {
        let members: Vec<&Case> = r.iter().map(|&i| cases[i]).collect();
        if members.iter().any(|c| c.exclusive() || c.calls_tools() || c.calls_input_tool() || c.calls_trigger()) {
            assert_eq!(
                members.len(),
                1,
                "a case that changes the server's state runs alone: {:?}",
                members.iter().map(|c| &c.id).collect::<Vec<_>>()
            );
        }
        assert!(members.iter().all(|c| c.revision == members[0].revision), "a wave holds one revision");
        assert!(members.iter().all(|c| c.run_scoped() == members[0].run_scoped()), "audits do not share a wave with other cases");
    }
    // An observer runs after the cases it was put off past, before the next
    // case that changes state.
    let order: Vec<usize> = w.iter().flatten().copied().collect();
    let pos = |i: usize| order.iter().position(|&x| x == i).unwrap();
    let det = cases.iter().position(|c| c.id == "2026-07-28/tools/list-deterministic-order").unwrap();
    assert!(pos(det) > pos(det + 1), "the order check is put off past the case after it");
    let alone_static = |c: &Case| (c.exclusive() || c.calls_tools() || c.calls_input_tool() || c.calls_trigger()) && !c.observes_alone();
    let next_alone = (det + 1..cases.len()).find(|&j| alone_static(cases[j])).unwrap();
    assert!(pos(det) < pos(next_alone), "and no further than the next case that runs alone");
    // An audit's wave comes after every other case of its revision.
    for (i, c) in cases.iter().enumerate().filter(|(_, c)| c.run_scoped()) {
        assert!(cases[i..].iter().filter(|d| d.revision == c.revision).all(|d| d.run_scoped()), "{} runs last", c.id);
    }
    // Some waves really overlap, and the state changers are those expected.
    assert!(w.iter().any(|r| r.len() >= 8), "cases run concurrently");
    // (with no tools walk known, a case that calls tools runs alone too)
    let alone: Vec<&str> = cases
        .iter()
        .filter(|c| c.exclusive() || c.calls_tools() || c.calls_input_tool() || c.calls_trigger())
        .map(|c| c.id.as_str())
        .collect();
    for id in
        ["2026-07-28/subscriptions/list-changed-delivered", "2025-11-25/conformance/resources-subscribe", "2026-07-28/tools/call-content"]
    {
        assert!(alone.contains(&id), "{id} runs alone");
    }
    // logging/setLevel goes on a session (a process) of its own: it changes
    // nothing another case sees, so it need not run alone.
    assert!(!alone.contains(&"2025-11-25/conformance/logging-set-level"), "setLevel on its own session shares its wave");
    // The probe's initialize, judged again, sends nothing.
    for id in ["2025-11-25/lifecycle/initialize-result-shape", "2025-11-25/lifecycle/http-session-id-visible-ascii"] {
        assert!(!alone.contains(&id), "{id} judges the probe's initialize: it shares its wave");
    }
    assert!(waves(&cases, 1).iter().all(|r| r.len() == 1), "-j 1 is the serial run");
}

/// A report without what depends on timing: durations, times, memory, and
/// the wave a case ran in.
/// What a server wrote to stderr is left out too: stdout and stderr are two
/// pipes with no order between them, so whether a fresh process's start-up
/// line has been read when its first answer arrives is a matter of timing.
fn without_timings(v: serde_json::Value) -> serde_json::Value {
    match v {
        serde_json::Value::Object(m) => serde_json::Value::Object(
            m.into_iter()
                .filter(|(k, _)| {
                    ![
                        "duration_ms",
                        "ms",
                        "at_ms",
                        "sent_at_ms",
                        "started_at_unix_ms",
                        "peak_rss_kib",
                        "slowest_start_ms",
                        "starts_total_ms",
                        "wave",
                        "stderr",
                        "stderr_tail",
                    ]
                    .contains(&k.as_str())
                })
                .map(|(k, v)| (k, without_timings(v)))
                .collect(),
        ),
        serde_json::Value::Array(a) => serde_json::Value::Array(a.into_iter().map(without_timings).collect()),
        other => other,
    }
}

/// Where two JSON values first differ, and how (clipped).
fn first_difference(a: &serde_json::Value, b: &serde_json::Value, at: String) -> String {
    use serde_json::Value;
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            for (k, v) in x {
                match y.get(k) {
                    Some(w) if w != v => return first_difference(v, w, format!("{at}/{k}")),
                    None => return format!("{at}/{k} only with -j 1"),
                    _ => {}
                }
            }
            format!("{at}: keys only with -j 8")
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
            let i = x.iter().zip(y).position(|(v, w)| v != w).unwrap_or(0);
            first_difference(&x[i], &y[i], format!("{at}/{i}"))
        }
        _ => {
            let clip = |v: &Value| v.to_string().chars().take(400).collect::<String>();
            format!("{at}: -j 1 {} / -j 8 {}", clip(a), clip(b))
        }
    }
}

/// The reference server's own numbering (`sess-7`, `srv-3`) with the
/// numbers left out, and the content-length of the replies that carry them.
fn server_numbering(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    // A body that carries such a number is as long as its digits: its
    // content-length goes with it.
    while let Some(i) = ["sess-", "srv-", "\"content-length\",\""].iter().filter_map(|p| rest.find(p).map(|i| i + p.len())).min() {
        out.push_str(&rest[..i]);
        rest = rest[i..].trim_start_matches(|c: char| c.is_ascii_digit());
        out.push('N');
    }
    out.push_str(rest);
    out
}

fn verdicts(setup: &Setup) -> Vec<(String, String)> {
    run_all(setup).into_iter().map(|(id, r)| (id, format!("{:?}: {}", r.verdict, r.message))).collect()
}

#[test]
fn verdicts_are_the_same_with_one_case_at_a_time_and_eight() {
    for (transport, fixtures) in [("stdio", true), ("http", true), ("stdio", false)] {
        let mut one = Setup::new(transport, "dual");
        one.fixtures = fixtures;
        one.sse = transport == "http";
        one.jobs = 1;
        let mut eight = Setup::new(transport, "dual");
        eight.fixtures = fixtures;
        eight.sse = transport == "http";
        eight.jobs = 8;
        let (a, b) = (verdicts(&one), verdicts(&eight));
        let diff: Vec<String> = a
            .iter()
            .zip(&b)
            .filter(|(x, y)| x.1.split(':').next() != y.1.split(':').next())
            .map(|(x, y)| format!("{}: -j 1 {} / -j 8 {}", x.0, x.1, y.1))
            .collect();
        assert!(diff.is_empty(), "{transport} (fixtures {fixtures}): verdicts differ:\n{}", diff.join("\n"));
    }
}

#[test]
fn the_console_and_the_report_keep_catalogue_order() {
    // Each run gets a server of its own (an HTTP server numbers the
    // sessions it issues), so that what it answers does not depend on the
    // run before.
    // The third set-up breaks the wire schema: the audit that lists the
    // offending frames (and the case each arrived in) must list the same.
    for (transport, fault) in [("stdio", None), ("http", None), ("http", Some("tools-list-no-result-type"))] {
        let run = |j: &str| {
            let dir = outdir(&format!("concurrency-console-{transport}-{}-{j}", fault.unwrap_or("none")));
            let mut cmd = mcpcert();
            let server = if transport == "stdio" {
                cmd.args(["run", "--stdio", &format!("{} --stdio --era dual --fixtures", refserver().display())]);
                None
            } else {
                let mut args: Vec<String> = vec!["--era".into(), "dual".into(), "--fixtures".into(), "--sse".into()];
                if let Some(f) = fault {
                    args.extend(["--fault".into(), f.into()]);
                }
                let s = start_http(&args);
                cmd.args(["run", "--http", &s.url, "--allowed-origin", "http://localhost"]);
                Some(s)
            };
            // A task followed to its end is polled as often as its clock
            // says (and its id is the server's random one): the tasks areas
            // depend on time, not on the scheduler, and are left out here.
            cmd.args(["-j", j, "--color", "never", "--skip", "/tasks/", "--verbose"]);
            report_args(&mut cmd, &dir);
            let out = cmd.output().unwrap();
            let console = String::from_utf8_lossy(&out.stdout).into_owned();
            let lines: Vec<String> = console.lines().filter(|l| l.starts_with("test [")).map(String::from).collect();
            let mut rep = report(&dir);
            let ids: Vec<String> = rep["cases"].as_array().unwrap().iter().map(|c| c["id"].as_str().unwrap().to_string()).collect();
            // The server's address (a free port) differs; so do the numbers
            // an HTTP server hands out in the order requests reach it (its
            // session ids, the ids of the requests it sends): cases that
            // open sessions at the same time reach it in any order.
            rep["target"] = serde_json::Value::Null;
            // The processes line of the coverage says how long starts took
            // and the run's wall time: timings, kept to their first words.
            if let Some(lines) = rep["coverage"].as_array_mut() {
                for l in lines.iter_mut() {
                    if let Some(t) = l.as_str().filter(|t| t.starts_with("processes:")) {
                        *l = serde_json::Value::from(t.split("; the slowest").next().unwrap_or(t));
                    }
                }
            }
            let mut text = server_numbering(&serde_json::to_string(&without_timings(rep)).unwrap());
            if let Some(s) = &server {
                text = text.replace(&s.url, "URL");
                // The DNS-rebinding probe sends the server's own host:port.
                let authority = s.url.trim_start_matches("http://").split('/').next().unwrap_or("").to_string();
                text = text.replace(&authority, "HOST");
            }
            (lines, ids, serde_json::from_str::<serde_json::Value>(&text).unwrap())
        };
        let (l1, r1, full1) = run("1");
        let (l8, r8, full8) = run("8");
        assert!(l1.len() > 100, "{transport}");
        if fault.is_some() {
            let wire = full1["cases"].as_array().unwrap().iter().find(|c| c["id"] == "2026-07-28/wire/server-frames-valid").unwrap();
            assert_eq!(wire["verdict"], "fail", "the fault is seen: {wire}");
        }
        assert_eq!(l1, l8, "{transport}: the same console lines in the same order");
        assert_eq!(r1, r8, "{transport}: the same report order");
        // The whole report, timings and the wave each case ran in aside, is
        // the same: the same requests (ids included), answers and verdicts.
        for (a, b) in full1["cases"].as_array().unwrap().iter().zip(full8["cases"].as_array().unwrap()) {
            assert!(a == b, "{transport}: {} differs between -j 1 and -j 8: {}", a["id"], first_difference(a, b, String::new()));
        }
        assert_eq!(full1, full8, "{transport}");
        // The revisions the run tested (those it probed), in catalogue order.
        let tested: Vec<&str> = full8["revisions"].as_array().unwrap().iter().filter_map(|r| r["revision"].as_str()).collect();
        let catalogue: Vec<String> = suite::load_builtin()
            .unwrap()
            .cases
            .iter()
            .filter(|c| tested.contains(&c.revision.as_str()) && !c.id.contains("/tasks/"))
            .map(|c| c.id.clone())
            .collect();
        assert_eq!(r8, catalogue, "{transport}: catalogue order");
    }
}

/// The report of a run with `-j J` against the reference server over HTTP
/// (dual era, SSE replies) with one fault.
fn http_report(fault: &str, j: &str) -> serde_json::Value {
    let server = start_http(&["--era".into(), "dual".into(), "--sse".into(), "--fault".into(), fault.into()]);
    let dir = outdir(&format!("concurrency-{fault}-{j}"));
    let mut cmd = mcpcert();
    cmd.args(["run", "--http", &server.url, "--allowed-origin", "http://localhost", "-j", j]);
    report_args(&mut cmd, &dir);
    cmd.output().unwrap();
    report(&dir)
}

/// A server that refuses a request as busy (503) while another is in
/// flight: the cases refused under `-j 8` are rerun alone and get the
/// verdicts of `-j 1` (a refused shared baseline is not kept).
#[test]
fn busy_refusals_under_concurrency_leave_the_verdicts_of_a_serial_run() {
    let run = |j: &str| {
        let rep = http_report("fx-concurrent-refused", j);
        rep["cases"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| (c["id"].as_str().unwrap().to_string(), c["verdict"].as_str().unwrap().to_string()))
            .collect::<Vec<_>>()
    };
    let (one, eight) = (run("1"), run("8"));
    let diff: Vec<String> =
        one.iter().zip(&eight).filter(|(a, b)| a != b).map(|(a, b)| format!("{}: -j 1 {} / -j 8 {}", a.0, a.1, b.1)).collect();
    assert!(diff.is_empty(), "verdicts differ:\n{}", diff.join("\n"));
    assert!(one.iter().any(|(id, v)| id == "2026-07-28/conformance/concurrent-requests" && v == "fail"), "the fault is seen");
}

/// `-j N` bounds the whole run's requests in flight, those a check sends
/// together included (completion probes go several at a time). The
/// reference server's `load-dropped-response` drops a request whenever six
/// or more are in flight: with `-j 5` no case can see it, with `-j 8` the
/// catalogue's own traffic reaches it.
#[test]
fn minus_j_bounds_the_requests_in_flight_over_the_whole_run() {
    let run = |j: &str| {
        let rep = http_report("load-dropped-response", j);
        let red: Vec<String> = rep["cases"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| !["pass", "n/a"].contains(&c["verdict"].as_str().unwrap()))
            .map(|c| format!("{}: {}", c["id"], c["message"]))
            .collect();
        red
    };
    let five = run("5");
    assert!(five.is_empty(), "-j 5 keeps at most five requests in flight, yet:\n{}", five.join("\n"));
    assert!(!run("8").is_empty(), "-j 8 lets the run reach six requests in flight (the test's control)");
}

/// A request the load check sent that got no answer within its timeout is
/// no proof that the server dropped it (the machine may be saturated, by
/// mcpcert's own load processes too): the case is `error`, saying so, never
/// a failure. (A server that ends an exchange without the response is the
/// failure: fault load-dropped-response, in the fault matrix.)
#[test]
fn a_request_unanswered_in_time_under_load_is_an_error_not_a_failure() {
    let dir = outdir("load-timeout");
    let s = start_http(&["--era".into(), "modern".into(), "--slow-under-load".into(), "1500".into()]);
    let mut cmd = mcpcert();
    cmd.args(["run", "--http", &s.url, "--load", "8", "--request-timeout-ms", "700", "2026-07-28/load/every-request-answered-once"]);
    report_args(&mut cmd, &dir);
    cmd.output().unwrap();
    let c = case(&report(&dir), "2026-07-28/load/every-request-answered-once");
    assert_eq!(c["verdict"], "error", "{c}");
    assert!(c["message"].as_str().unwrap().contains("no proof the server dropped them"), "{c}");
}

/// A loopback proxy that adds `ms` to every round trip (scripts/delay-proxy.py),
/// killed when dropped; None when python3 cannot run it.
struct Delay(std::process::Child, String);

impl Drop for Delay {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn delay(target_url: &str, ms: u32) -> Option<Delay> {
    use std::io::BufRead;
    let authority = target_url.trim_start_matches("http://").split('/').next()?.to_string();
    let path = target_url.trim_start_matches("http://").split_once('/').map(|(_, p)| p).unwrap_or("");
    let mut child = std::process::Command::new("python3")
        .arg(workspace_root().join("scripts/delay-proxy.py"))
        .args(["0", &authority, &ms.to_string()])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .ok()?;
    let mut line = String::new();
    std::io::BufReader::new(child.stdout.take()?).read_line(&mut line).ok()?;
    let at = line.trim().strip_prefix("listening on ")?.to_string();
    Some(Delay(child, format!("http://{at}/{path}")))
}

/// A server 10 ms away gets the verdicts it gets on loopback, with the
/// default -j and with -j 1: the scheduler's waves and the checks' requests
/// sent together do not depend on how long answers take.
#[test]
fn verdicts_across_a_network_are_those_of_loopback() {
    let server = start_http(&["--era".into(), "dual".into(), "--fixtures".into(), "--sse".into()]);
    let Some(proxy) = delay(&server.url, 10) else {
        eprintln!("python3 could not start scripts/delay-proxy.py: skipped");
        return;
    };
    let run = |url: &str, j: Option<&str>, name: &str| {
        let dir = outdir(&format!("concurrency-delay-{name}"));
        let mut cmd = mcpcert();
        cmd.args(["run", "--http", url, "--allowed-origin", "http://localhost"]);
        if let Some(j) = j {
            cmd.args(["-j", j]);
        }
        report_args(&mut cmd, &dir);
        cmd.output().unwrap();
        report(&dir)["cases"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| (c["id"].as_str().unwrap().to_string(), c["verdict"].as_str().unwrap().to_string()))
            .collect::<Vec<_>>()
    };
    let here = run(&server.url, None, "loopback");
    let away = run(&proxy.1, None, "default");
    let away_one = run(&proxy.1, Some("1"), "j1");
    assert!(here.len() > 200 && here.iter().filter(|(_, v)| v == "pass").count() > 100, "the run judged the server");
    for (name, other) in [("10 ms away", &away), ("10 ms away, -j 1", &away_one)] {
        let diff: Vec<String> =
            here.iter().zip(other).filter(|(a, b)| a != b).map(|(a, b)| format!("{}: loopback {} / {name} {}", a.0, a.1, b.1)).collect();
        assert!(diff.is_empty(), "verdicts differ:\n{}", diff.join("\n"));
    }
}

/// The reference server's tools all say readOnlyHint (but the trigger and
/// the input tool): the cases that call them share a wave with the walk's
/// and the header cases, the order check runs after that wave (alone), and
/// the input_required cases (their tool is not read-only) each run alone.
#[test]
fn read_only_calls_share_a_wave_and_state_changers_do_not() {
    let server = start_http(&["--era".into(), "modern".into()]);
    let dir = outdir("concurrency-waves");
    let mut cmd = mcpcert();
    cmd.args(["run", "--http", &server.url, "--allowed-origin", "http://localhost", "--config"]);
    cmd.arg(workspace_root().join("fixtures/refserver/mcpcert.toml"));
    cmd.env("REFSERVER_ANALYST_TOKEN", "Bearer analyst-token").env("REFSERVER_OPERATOR_TOKEN", "Bearer operator-token");
    report_args(&mut cmd, &dir);
    cmd.output().unwrap();
    let rep = report(&dir);
    let wave = |id: &str| {
        let c = rep["cases"].as_array().unwrap().iter().find(|c| c["id"] == id).unwrap_or_else(|| panic!("{id}"));
        c["wave"].as_u64().unwrap_or_else(|| panic!("{id} has a wave: {c}"))
    };
    let walk = wave("2026-07-28/tools/list-walk");
    for id in ["2026-07-28/tools/call-content", "2026-07-28/headers/name-missing", "2026-07-28/headers/param-round-trip"] {
        assert_eq!(wave(id), walk, "{id} runs with the walk");
    }
    let order = wave("2026-07-28/tools/list-deterministic-order");
    assert!(order > walk, "the order check runs after the wave it sits in");
    let (a, b) = (wave("2026-07-28/input-required/retry"), wave("2026-07-28/input-required/tampered-state"));
    assert!(a > order && b > a, "each input_required case runs alone, after the order check");
    let alone = rep["cases"].as_array().unwrap().iter().filter(|c| c["wave"].as_u64() == Some(a)).count();
    assert_eq!(alone, 1, "alone");
}

/// A client that no longer needs a session should end it: after a run over
/// HTTP, every 2025-11-25 session the server issued (the main one, the
/// negative probes', each fresh and isolated one, and those of cases that
/// send `initialize` themselves) has been ended with a DELETE.
#[test]
fn a_run_over_http_ends_every_session_it_was_issued() {
    let (text, dir) = run_with_session_log("sessions-ended", &[]);
    let mut open: Vec<&str> = Vec::new();
    let mut issued = 0;
    for l in text.lines() {
        match l.split_once(' ') {
            Some(("opened", id)) => {
                issued += 1;
                open.push(id);
            }
            Some(("ended", id)) => open.retain(|o| *o != id),
            _ => panic!("unexpected line {l:?}"),
        }
    }
    assert!(issued > 3, "the run opened sessions of its own (the test's control): {text}");
    assert!(open.is_empty(), "sessions left open after the run: {open:?}\n{text}");
    assert_eq!(report(&dir)["summary"]["error"], 0);
}

/// A 2025-11-25 run against the reference server over HTTP (`extra`: more
/// `run` arguments), with the server's log of the sessions it opened and
/// ended: that log's text, and the run's report folder.
fn run_with_session_log(name: &str, extra: &[&str]) -> (String, std::path::PathBuf) {
    let log = std::env::temp_dir().join(format!("mcpcert-test-{}-{name}.log", std::process::id()));
    let _ = std::fs::remove_file(&log);
    let mut child = std::process::Command::new(refserver())
        .args(["--http", "0", "--era", "dual"])
        .env("MCPCERT_REF_SESSION_LOG", &log)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufRead::read_line(&mut std::io::BufReader::new(child.stdout.take().unwrap()), &mut line).unwrap();
    let url = line.trim().strip_prefix("listening on ").unwrap().to_string();
    let dir = outdir(name);
    let mut cmd = mcpcert();
    cmd.args(["run", "--http", &url, "--allowed-origin", "http://localhost", "--revision", "2025-11-25"]).args(extra);
    report_args(&mut cmd, &dir);
    cmd.output().unwrap();
    let _ = child.kill();
    let _ = child.wait();
    let text = std::fs::read_to_string(&log).unwrap_or_default();
    let _ = std::fs::remove_file(&log);
    (text, dir)
}

/// The cases that judge what `initialize` answers (its result, the session
/// id it issues) judge the revision probe's: run alone, each leaves the
/// server with the one session the probe opened (each opened another one
/// when it sent its own initialize).
#[test]
fn the_initialize_cases_judge_the_probes_handshake_not_a_session_of_their_own() {
    for id in ["2025-11-25/lifecycle/initialize-result-shape", "2025-11-25/lifecycle/http-session-id-visible-ascii"] {
        let (text, dir) = run_with_session_log("probe-initialize", &["--exact", id]);
        let rep = report(&dir);
        assert_eq!(case(&rep, id)["verdict"], "pass", "{id}: {}", case(&rep, id));
        let opened = text.lines().filter(|l| l.starts_with("opened ")).count();
        assert_eq!(opened, 1, "{id}: sessions the server opened:\n{text}");
    }
}

/// A reply that came as an SSE stream the server ends soon after the
/// response leaves its connection to the next request: a run against the
/// reference server answering every POST with a stream whose end comes 1 ms
/// after the response (quirk sse-ends-later) opens a few connections, not
/// one for each request (as it did while a stream was dropped as soon as
/// its response came).
#[test]
fn connections_whose_streams_end_are_used_again() {
    let log = std::env::temp_dir().join(format!("mcpcert-test-{}-connections.log", std::process::id()));
    let _ = std::fs::remove_file(&log);
    let mut child = std::process::Command::new(refserver())
        .args(["--http", "0", "--era", "modern", "--quirk", "sse-ends-later"])
        .env("MCPCERT_REF_CONNECTION_LOG", &log)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufRead::read_line(&mut std::io::BufReader::new(child.stdout.take().unwrap()), &mut line).unwrap();
    let url = line.trim().strip_prefix("listening on ").unwrap().to_string();
    let dir = outdir("connections-reused");
    let mut cmd = mcpcert();
    cmd.args(["run", "--http", &url, "--allowed-origin", "http://localhost", "--revision", "2026-07-28", "-j", "4"]);
    report_args(&mut cmd, &dir);
    cmd.output().unwrap();
    let _ = child.kill();
    let _ = child.wait();
    let accepted = std::fs::read_to_string(&log).unwrap_or_default().lines().count() as u64;
    let rep = report(&dir);
    let sent = rep["requests_sent"].as_u64().unwrap();
    assert!(sent > 100, "the run sent its requests (the test's control): {sent}");
    // Some go on a connection of their own on purpose (header names in
    // their exact letter case, watched listen streams), and a request sent
    // while the streams before it are still ending needs another; dropping
    // each stream once its response came cost a connection per request
    // (185 of 191 here), reading it to its end about half that.
    assert!(accepted > 0 && 3 * accepted < 2 * sent, "{accepted} connections for {sent} requests");
    assert_eq!(rep["summary"]["error"], 0);
    let _ = std::fs::remove_file(&log);
}

/// A small server's stack (Python's `http.server`: a listen backlog of 5,
/// connections handed to threads one at a time) resets connections that
/// come faster than it accepts them. mcpcert opens its own new connections
/// a few at a time and sends a read lost that way again, so the default
/// `-j` (32 over HTTP) gives the verdicts of `-j 1`, run after run. (Before,
/// the header-name-case probes were ERROR "Connection reset by peer" in
/// most runs at the default `-j`.)
#[test]
fn a_server_with_a_listen_backlog_of_five_gets_the_same_verdicts_at_any_j() {
    let server = start_http(&["--era".into(), "dual".into(), "--quirk".into(), "small-backlog".into()]);
    let run = |j: Option<&str>, round: usize| {
        let dir = outdir(&format!("concurrency-backlog-{}-{round}", j.unwrap_or("default")));
        let mut cmd = mcpcert();
        cmd.args(["run", "--http", &server.url, "--allowed-origin", "http://localhost"]);
        if let Some(j) = j {
            cmd.args(["-j", j]);
        }
        report_args(&mut cmd, &dir);
        cmd.output().unwrap();
        let rep = report(&dir);
        rep["cases"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| (c["id"].as_str().unwrap().to_string(), format!("{}: {}", c["verdict"].as_str().unwrap(), c["message"])))
            .collect::<Vec<_>>()
    };
    let serial = run(Some("1"), 0);
    assert!(serial.len() > 100 && serial.iter().all(|(_, v)| !v.starts_with("error")), "the serial run judges every case");
    for round in 1..=5 {
        for j in [None, Some("1")] {
            let got = run(j, round);
            let diff: Vec<String> = serial
                .iter()
                .zip(&got)
                .filter(|(a, b)| a.1.split(':').next() != b.1.split(':').next())
                .map(|(a, b)| format!("{}: -j 1 {} / -j {} {}", a.0, a.1, j.unwrap_or("default"), b.1))
                .collect();
            assert!(diff.is_empty(), "round {round}: verdicts differ:\n{}", diff.join("\n"));
        }
    }
}

/// Windows count from the answer, not the send: a listen stream whose
/// answer begins after the 1.5 s watch window (a server 0.9 s away, where
/// a new connection's answer begins after about 1.8 s, as a loaded server's
/// does) is watched for its whole window from then. The subscription cases
/// pass as on loopback; they were ERROR "no HTTP response within 10000 ms"
/// after 1.5 s.
#[test]
fn a_listen_whose_answer_begins_late_is_watched_from_its_answer() {
    let s = start_http(&["--era".into(), "modern".into()]);
    let Some(d) = delay(&s.url, 900) else {
        eprintln!("python3 cannot run the delay proxy; skipped");
        return;
    };
    let dir = outdir("late-listen");
    let mut cmd = mcpcert();
    cmd.args(["run", "--http", &d.1, "--revision", "2026-07-28", "subscriptions/"]);
    report_args(&mut cmd, &dir);
    let out = cmd.output().unwrap();
    let console = String::from_utf8_lossy(&out.stdout).to_string();
    for id in ["2026-07-28/subscriptions/acknowledged", "2026-07-28/subscriptions/nothing-unrequested"] {
        let c = case(&report(&dir), id);
        assert_eq!(c["verdict"], "pass", "{c}\n{console}");
    }
}
