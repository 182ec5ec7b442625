//! The console, as a user reads it: one vocabulary, counts that agree with
//! the reports, a reason said once, real durations, why a run failed, and
//! the switches that change it (--quiet, --color, --help).

mod common;
use common::*;

fn run(name: &str, server_args: &str, extra: &[&str]) -> (i32, String, serde_json::Value) {
    let dir = outdir(name);
    let mut cmd = mcpcert();
    cmd.args(["run", "--stdio", &format!("{} --stdio {server_args}", refserver().display())]).args(extra);
    report_args(&mut cmd, &dir);
    let out = cmd.output().unwrap();
    (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stdout).into_owned(), report(&dir))
}

/// The counts of the summary line.
fn summary_counts(console: &str) -> Vec<u64> {
    let line = console.lines().find(|l| l.starts_with("test result:")).expect("a summary line");
    let after = line.split_once(". ").map(|x| x.1).unwrap_or("");
    after.split(", ").take(5).map(|p| p.split_whitespace().next().unwrap().parse().unwrap()).collect()
}

#[test]
fn one_vocabulary_and_counts_that_agree_with_every_line_and_the_report() {
    // order-varies breaks a SHOULD; ping-alive a POLICY rule.
    let (code, console, r) = run("console-words", "--era modern --fault order-varies --fault ping-alive", &["--verbose"]);
    assert_eq!(code, 0, "warnings do not fail the run: {console}");
    let case_lines: Vec<&str> = console.lines().filter(|l| l.starts_with("test [")).collect();
    assert!(case_lines.iter().all(|l| !l.ends_with(" ok")), "`ok` is never a verdict word");
    let warn_line = case_lines.iter().find(|l| l.contains("2026-07-28/tools/list-deterministic-order")).unwrap();
    assert!(warn_line.ends_with("warn (SHOULD not met)"), "{warn_line}");
    let policy = case_lines.iter().find(|l| l.contains("2026-07-28/lifecycle/removed-ping")).unwrap();
    assert!(policy.ends_with("warn (POLICY not met)"), "POLICY is named as such: {policy}");
    let count = |w: &str| case_lines.iter().filter(|l| l.split(" ... ").nth(1).is_some_and(|o| o.starts_with(w))).count() as u64;
    let grouped: u64 = console
        .lines()
        .filter(|l| l.contains(" cases n/a (each in the reports)"))
        .map(|l| l.rsplit_once(": ").unwrap().1.split_whitespace().next().unwrap().parse::<u64>().unwrap())
        .sum();
    let s = summary_counts(&console);
    assert_eq!(s, [count("pass"), count("FAIL"), count("warn"), count("n/a") + grouped, count("ERROR")], "{console}");
    let js = &r["summary"];
    assert_eq!(
        s,
        [
            js["pass"].as_u64().unwrap(),
            js["fail"].as_u64().unwrap(),
            js["warn"].as_u64().unwrap(),
            js["n/a"].as_u64().unwrap(),
            js["error"].as_u64().unwrap()
        ]
    );
    assert_eq!(console.lines().filter(|l| l.starts_with("test result:")).count(), 1, "one summary line");
}

#[test]
fn a_revision_the_server_does_not_serve_is_said_once_with_its_count() {
    let (code, console, r) = run("console-unserved", "--era legacy", &[]);
    assert_eq!(code, 0, "{console}");
    let lines: Vec<&str> = console.lines().filter(|l| l.contains("revision 2026-07-28 is not served")).collect();
    assert_eq!(lines.len(), 1, "{console}");
    let modern = r["cases"].as_array().unwrap().iter().filter(|c| c["id"].as_str().unwrap().starts_with("2026-07-28/")).count();
    assert!(lines[0].ends_with(&format!(": {modern} cases n/a (each in the reports)")), "{}", lines[0]);
    assert!(!console.lines().any(|l| l.starts_with("test [") && l.contains(" 2026-07-28/")), "no line per unserved case");
}

#[test]
fn an_unreachable_target_is_one_reason_not_a_block_per_case() {
    let dir = outdir("console-unreachable");
    let mut cmd = mcpcert();
    cmd.args(["run", "--stdio", "/nonexistent/mcp-server"]);
    report_args(&mut cmd, &dir);
    let out = cmd.output().unwrap();
    let console = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(3));
    assert!(console.lines().count() < 12, "{console}");
    assert_eq!(console.matches("could not start `/nonexistent/mcp-server`").count(), 1, "{console}");
    assert!(console.contains("test result: FAILED (the target could not be reached)"), "{console}");
    assert!(console.contains(" cases ERROR (each in the reports)"), "the verdict word of the other lines: {console}");
}

#[test]
fn a_startup_timeout_reports_the_time_it_took() {
    let dir = outdir("console-startup");
    let mut cmd = mcpcert();
    let silent = format!("python3 {} hang-after 0 console-startup", workspace_root().join("fixtures/hostile/hostile.py").display());
    cmd.args(["run", "--stdio", &silent, "--startup-timeout-ms", "1500", "--revision", "2026-07-28"]);
    report_args(&mut cmd, &dir);
    let out = cmd.output().unwrap();
    let console = String::from_utf8_lossy(&out.stdout);
    let line = console.lines().find(|l| l.starts_with("test result:")).unwrap_or_else(|| panic!("{console}"));
    let secs: f64 = line.rsplit_once("finished in ").unwrap().1.trim_end_matches('s').parse().unwrap();
    assert!(secs >= 1.4, "the run took at least the startup timeout: {line}");
}

#[test]
fn strict_says_why_the_run_failed() {
    let (code, console, _) = run("console-strict", "--era modern --fault order-varies", &["--strict"]);
    assert_eq!(code, 1);
    assert!(console.contains("FAIL (warn: SHOULD not met, --strict)"), "{console}");
    assert!(console.contains("test result: FAILED (1 failure, 1 of them warn under --strict)"), "{console}");
}

#[test]
fn quiet_and_color_change_only_what_they_say() {
    let (_, quiet, _) = run("console-quiet", "--era modern --fault order-varies", &["--quiet"]);
    assert!(!quiet.lines().any(|l| l.starts_with("test [")), "{quiet}");
    assert!(quiet.contains("warnings (SHOULD-level rules not met") && quiet.contains("test result: ok."), "{quiet}");
    let (_, colored, _) =
        run("console-color", "--era modern", &["--color", "always", "2026-07-28/lifecycle/discover-result-shape", "--exact"]);
    assert!(colored.contains("\u{1b}[32mpass\u{1b}[0m"), "{colored}");
    let (_, plain, _) = run("console-plain", "--era modern", &["2026-07-28/lifecycle/discover-result-shape", "--exact"]);
    assert!(!plain.contains('\u{1b}'), "no colour when stdout is not a terminal: {plain}");
}

#[test]
fn help_shows_examples_and_exit_codes() {
    let out = mcpcert().arg("--help").output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("Examples:") && text.contains("Exit codes (run):") && text.contains("143"), "{text}");
    assert!(text.contains("\n  4    the server needs a credential"), "exit code 4 is listed: {text}");
    assert!(text.contains("--stdio is not a shell"), "{text}");
    let out = mcpcert().args(["run", "--list", "2026-07-28/lifecycle/"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "run --list needs no target");
}

/// One bug, one cause: error responses with `"id": null` fail every case
/// that looks at an error's id, with the same finding, and the wire audit
/// for the same frames. The console's list, the JSON report and the
/// Markdown summary say the cause once, with those cases beneath; each
/// case keeps its own verdict.
#[test]
fn a_fault_several_cases_see_is_one_root_cause_with_its_cases_beneath() {
    let (code, console, r) = run("console-roots", "--era modern --fault error-id-null", &["--revision", "2026-07-28"]);
    assert_eq!(code, 1, "{console}");
    let roots = r["roots"].as_array().expect("roots in report.json");
    assert_eq!(roots.len(), 1, "{roots:#?}");
    let root = &roots[0];
    assert!(root["cause"].as_str().unwrap().contains("response id"), "{root}");
    let cases: Vec<&str> = root["cases"].as_array().unwrap().iter().map(|c| c.as_str().unwrap()).collect();
    let failing: Vec<&str> = r["cases"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["verdict"] == "fail" || c["verdict"] == "warn")
        .map(|c| c["id"].as_str().unwrap())
        .collect();
    // Every fail and warn of the run is explained by the one cause.
    let frames_of: Vec<&str> = root["frames_of"].as_array().unwrap().iter().map(|c| c.as_str().unwrap()).collect();
    assert_eq!(frames_of, ["2026-07-28/wire/server-frames-valid"], "{root}");
    let mut all: Vec<&str> = cases.iter().chain(&frames_of).copied().collect();
    all.sort();
    let mut want = failing.clone();
    want.sort();
    assert_eq!(all, want, "the cause explains every finding of the run");
    for id in &cases {
        assert!(case(&r, id)["message"].as_str().unwrap().contains("got null"), "{id} keeps its own message");
    }
    // The console: the cause once, its failing cases indented beneath it,
    // the warnings it also explains named, and no case listed twice.
    let list: Vec<&str> = console.rsplit("\nfailures:\n").next().unwrap().lines().take_while(|l| !l.is_empty()).collect();
    assert!(list[0].starts_with("    root cause (") && list[0].contains("response id"), "{list:#?}");
    let beneath: Vec<&str> = list.iter().filter(|l| l.starts_with("        2026-07-28/")).copied().collect();
    assert_eq!(beneath.len(), failing.iter().filter(|id| case(&r, id)["verdict"] == "fail").count(), "{list:#?}");
    assert!(list.iter().any(|l| l.contains("not failing the run") && l.contains("(warn)")), "{list:#?}");
    assert!(!list.iter().any(|l| l.starts_with("    2026-07-28/")), "a case under the cause is not listed again: {list:#?}");

    // The Markdown summary for CI says it the same way.
    let dir = std::env::temp_dir().join(format!("mcpcert-test-{}-console-roots", std::process::id()));
    let out = mcpcert().args(["summary"]).arg(dir.join("report.json")).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let md = String::from_utf8_lossy(&out.stdout);
    assert!(md.contains("- root cause ("), "{md}");
    assert_eq!(md.matches("\n  - `2026-07-28/").count(), beneath.len(), "{md}");
}

/// A call with arguments mcpcert made up is labelled so, and a finding
/// about it says how to give real ones; with the config's arguments, the
/// label says where they came from and no hint is needed.
#[test]
fn made_up_arguments_are_labelled_and_their_findings_say_how_to_give_real_ones() {
    let only = "2026-07-28/tools/call-structured";
    let (_, console, r) =
        run("console-made-up", "--era modern --fault structured-mismatch", &["--revision", "2026-07-28", only, "--exact"]);
    let c = case(&r, only);
    assert_eq!(c["verdict"], "fail", "{console}");
    let m = c["message"].as_str().unwrap();
    assert!(m.contains("tools/call add (arguments made from the schema)"), "{m}");
    assert!(m.contains("give them with [tools.add] arguments"), "{m}");

    let cfg = outdir("console-given-args-config").join("args.toml");
    std::fs::write(&cfg, "[tools.add]\narguments = { a = 2, b = 3 }\n").unwrap();
    let (_, console, r) = run(
        "console-given-args",
        "--era modern --fault structured-mismatch",
        &["--revision", "2026-07-28", only, "--exact", "--config", cfg.to_str().unwrap()],
    );
    let c = case(&r, only);
    assert_eq!(c["verdict"], "fail", "{console}");
    let m = c["message"].as_str().unwrap();
    assert!(m.contains("tools/call add (arguments from the config)") && !m.contains("made up"), "{m}");
}

/// Every finding of a run in `report.json`'s roots, if one cause explains
/// them all: (findings, the cases of the one root).
fn one_root(r: &serde_json::Value) -> (Vec<String>, Vec<String>) {
    let mut findings: Vec<String> = r["cases"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| ["fail", "error", "warn"].contains(&c["verdict"].as_str().unwrap()))
        .map(|c| c["id"].as_str().unwrap().to_string())
        .collect();
    let roots = r["roots"].as_array().expect("roots");
    assert_eq!(roots.len(), 1, "one cause: {roots:#?}");
    let mut all: Vec<String> = ["cases", "frames_of"]
        .iter()
        .flat_map(|k| roots[0][*k].as_array().cloned().unwrap_or_default())
        .map(|v| v.as_str().unwrap().to_string())
        .collect();
    findings.sort();
    all.sort();
    (findings, all)
}

/// One defect seen through different checks is still one cause: over HTTP
/// the header-rejection cases see the null ids too (said in the same
/// words), and a list walk that never ends explains every case that could
/// not judge the list (their messages quote the walk's finding).
#[test]
fn a_cause_that_other_cases_quote_or_word_alike_explains_them_all() {
    let server = start_http(&["--era".into(), "modern".into(), "--fault".into(), "error-id-null".into()]);
    let dir = outdir("console-roots-http");
    let mut cmd = mcpcert();
    cmd.args(["run", "--http", &server.url]);
    report_args(&mut cmd, &dir);
    cmd.output().unwrap();
    let r = report(&dir);
    let (findings, all) = one_root(&r);
    assert!(findings.iter().any(|id| id.contains("/headers/")), "header cases see it too: {findings:?}");
    assert_eq!(all, findings);

    // One revision: the cycle is found on another page of each revision's
    // list (their lengths differ), which words the cause differently.
    let (_, _, r) = run("console-roots-cursor", "--era modern --fault cursor-cycle", &[]);
    let (findings, all) = one_root(&r);
    assert!(findings.len() > 20 && r["roots"][0]["cause"].as_str().unwrap().contains("nextCursor"), "{findings:?}");
    assert_eq!(all, findings);
}

/// Coverage is said once: the tools the call policy did not call, grouped
/// by why, with the config lines that allow them; and over stdio how many
/// server processes the run started and how long a start took. On the
/// console, in report.json and on the page.
#[test]
fn coverage_is_said_once_with_the_config_that_widens_it() {
    let (code, console, rep) = run("coverage", "--era modern", &[]);
    let dir = std::env::temp_dir().join(format!("mcpcert-test-{}-coverage", std::process::id()));
    assert_eq!(code, 0, "{console}");
    let lines: Vec<&str> = console.lines().filter(|l| l.starts_with("coverage: ")).collect();
    assert_eq!(lines.len(), 2, "{console}");
    assert!(
        lines[0].starts_with("coverage: tools (2026-07-28): the call policy called ")
            && lines[0].contains("not marked readOnlyHint: true (toggle_beta, confirm_order)")
            && lines[0].contains("openWorldHint is true or absent")
            && lines[0].contains("(fetch_page)")
            && lines[0].contains("[tools.NAME] call = true allows one")
            && lines[0].contains("[calls] open_world = true"),
        "{}",
        lines[0]
    );
    assert!(
        lines[1].starts_with("coverage: processes: the run started ") && lines[1].contains("answered its first request after"),
        "{}",
        lines[1]
    );
    let cov = rep["coverage"].as_array().unwrap();
    assert_eq!(cov.len(), 2);
    let html = std::fs::read_to_string(dir.join("report.html")).unwrap();
    assert!(html.contains("<p class=coverage>coverage: tools (2026-07-28)"), "the page says it too");
}

/// A draft of the spec is noted, never judged: over Streamable HTTP the
/// server card is looked for, and what departs from the draft or from
/// the live server is listed (console, report.json, page) without a case,
/// a verdict or a count. Over stdio there is nothing to look for.
#[test]
fn the_server_card_of_a_draft_is_noted_never_judged() {
    let card = |name: &str, args: &[&str]| {
        let server = start_http(&args.iter().map(|a| a.to_string()).collect::<Vec<_>>());
        let dir = outdir(name);
        let mut cmd = mcpcert();
        cmd.args(["run", "--http", &server.url, "lifecycle/"]);
        report_args(&mut cmd, &dir);
        let out = cmd.output().unwrap();
        let console = String::from_utf8_lossy(&out.stdout).into_owned();
        (out.status.code(), console, report(&dir), std::fs::read_to_string(dir.join("report.html")).unwrap_or_default(), server.url.clone())
    };
    let (code, console, rep, html, url) = card("card-clean", &["--era", "dual"]);
    assert_eq!(code, Some(0), "{console}");
    let d = &rep["drafts"][0];
    assert_eq!((d["name"].as_str(), d["found"].as_str()), (Some("server card"), Some("published")), "{d}");
    assert_eq!(d["url"], format!("{url}/server-card"));
    assert_eq!(d["notes"].as_array().unwrap().len(), 0, "{d}");
    assert!(
        console.contains("draft (notes only, never a verdict): server card at") && console.contains("keeps every rule looked at"),
        "{console}"
    );

    let (code, console, rep, html2, _) = card("card-drift", &["--era", "modern", "--quirk", "card-drift"]);
    assert_eq!(code, Some(0), "a draft never fails a run: {console}");
    let notes: Vec<&str> = rep["drafts"][0]["notes"].as_array().unwrap().iter().filter_map(|n| n.as_str()).collect();
    for want in [
        "X121, draft SHOULD",
        "X123, draft SHOULD: the card's version",
        "X123, draft SHOULD: the remote for",
        "X124, draft MUST: Access-Control-Allow-Origin is absent",
        "X125, draft SHOULD: no ETag",
    ] {
        assert!(notes.iter().any(|n| n.starts_with(want)), "{want}: {notes:?}");
    }
    assert!(rep["cases"].as_array().unwrap().iter().all(|c| !c["id"].as_str().unwrap().contains("card")), "no case for a draft");
    assert!(html.contains("server card") && html2.contains("X124, draft MUST"), "the page says it too");

    let (_, _, rep) = run("card-stdio", "--era modern", &["lifecycle/"]);
    assert!(rep.get("drafts").is_none(), "stdio: {}", rep["drafts"]);
}

/// A clean run reads like cargo's: the failing cases as they finish (none
/// here), the passes and n/a counted by area, the n/a by reason with their
/// counts, one summary: at most about 100 lines. --verbose gives a line
/// per case; the reports keep every case either way.
#[test]
fn a_clean_run_is_as_quiet_as_cargo() {
    let (code, console, r) = run("console-clean", "--era dual", &[]);
    assert_eq!(code, 0, "{console}");
    let n = console.lines().count();
    assert!(n <= 100, "{n} lines:\n{console}");
    assert!(!console.lines().any(|l| l.starts_with("test [")), "no line per passing or n/a case:\n{console}");
    let cases = r["cases"].as_array().unwrap();
    let with = |why: &str| cases.iter().filter(|c| c["verdict"] == "n/a" && c["message"].as_str().unwrap().starts_with(why)).count();
    let http_only = with("applies to http targets only; this target is stdio");
    assert!(http_only > 50, "{http_only}");
    assert!(
        console.lines().any(|l| l.trim_start() == format!("{http_only} n/a: applies to http targets only; this target is stdio")),
        "one line with the count:\n{console}"
    );
    let fixtures = with("the server has no conformance fixtures: ");
    assert!(
        console
            .lines()
            .any(|l| l.trim_start()
                == format!("{fixtures} n/a: the server has no conformance fixtures (each case names its own: --verbose)")),
        "reasons that differ only in what they name are one group:\n{console}"
    );
    let tools_pass = cases.iter().filter(|c| c["verdict"] == "pass" && c["id"].as_str().unwrap().starts_with("2026-07-28/tools/")).count();
    assert!(
        console.lines().any(|l| l.trim_start().starts_with("2026-07-28/tools ") && l.trim_end().ends_with(&format!("{tools_pass} pass"))),
        "a line per area:\n{console}"
    );
    let (_, verbose, r) = run("console-clean-verbose", "--era dual", &["--verbose"]);
    assert_eq!(verbose.lines().filter(|l| l.starts_with("test [")).count(), r["cases"].as_array().unwrap().len(), "{verbose}");
}

/// A case with several findings: its one-line reason (JUnit's message,
/// the step summary, the baseline, the console) names the first finding
/// and counts the rest, never a bare "…:"; a root cause's heading names
/// what its first case names.
#[test]
fn a_reason_names_the_first_finding_wherever_it_goes() {
    let (code, console, r) = run("console-reason", "--era modern --fault error-id-null", &[]);
    assert_eq!(code, 1, "{console}");
    let dir = std::env::temp_dir().join(format!("mcpcert-test-{}-console-reason", std::process::id()));
    let c = case(&r, "2026-07-28/wire/server-frames-valid");
    let head = c["message"].as_str().unwrap().lines().next().unwrap().to_string();
    assert!(head.ends_with("message schema:"), "{head}");
    let reason = format!("{} JSONRPCErrorResponse (reply to ", head);
    let junit = std::fs::read_to_string(dir.join("junit.xml")).unwrap();
    let at = junit.find("name=\"2026-07-28/wire/server-frames-valid\"").expect("the testcase");
    let failure = &junit[at..junit[at..].find("</testcase>").unwrap() + at];
    let message = failure.split("message=\"").nth(1).unwrap().split('"').next().unwrap();
    assert!(
        message.starts_with(&reason) && message.contains("the error&apos;s id is null") || message.contains("the error's id is null"),
        "{message}"
    );
    assert!(message.contains(" more)"), "{message}");
    let out = mcpcert().arg("summary").arg(dir.join("report.json")).output().unwrap();
    let md = String::from_utf8_lossy(&out.stdout);
    let line = md.lines().find(|l| l.contains("`2026-07-28/wire/server-frames-valid`")).expect("listed");
    assert!(line.contains("JSONRPCErrorResponse (reply to") && line.contains(" more)") && !line.trim_end().ends_with(':'), "{line}");
    let base = dir.join("baseline.toml");
    let mut cmd = mcpcert();
    cmd.args(["run", "--stdio", &format!("{} --stdio --era modern --fault error-id-null", refserver().display()), "--write-baseline"])
        .arg(&base)
        .arg("--out")
        .arg(dir.join("again"));
    cmd.output().unwrap();
    let b = std::fs::read_to_string(&base).unwrap();
    let entry = b.lines().find(|l| l.contains("2026-07-28/wire/server-frames-valid")).expect("in the baseline");
    assert!(entry.contains("JSONRPCErrorResponse (reply to") && entry.contains(" more)"), "{entry}");
    // The root cause's heading names what its first case says, ids whole.
    let root = &r["roots"][0];
    assert!(root["cause"].as_str().unwrap().contains('…'), "{root}");
    assert!(!root["said"].as_str().unwrap().contains('…') && root["said"].as_str().unwrap().contains("got null"), "{root}");
}

/// A tool listed twice is one tool in the coverage line.
#[test]
fn coverage_counts_a_tool_listed_twice_once() {
    let (_, console, _) = run("console-duplicate-tool", "--era modern --fault duplicate-tool", &[]);
    let line = console.lines().find(|l| l.starts_with("coverage: tools (2026-07-28)")).expect("a coverage line");
    assert!(line.contains("called 10 of 13 tools"), "{line}");
    let processes = console.lines().find(|l| l.starts_with("coverage: processes")).expect("a processes line");
    assert!(processes.contains("in all, against") && processes.contains("of wall time"), "{processes}");
}

/// --revision (or a requirement set) naming a revision the server does not
/// serve: one sentence, the same words, with the way out.
#[test]
fn a_revision_asked_for_and_not_served_is_one_sentence() {
    for (args, flag) in [(&["--revision", "2026-07-28"][..], "--revision"), (&["--requirements", "2026-07-28"][..], "--requirements")] {
        let dir = outdir("console-not-served");
        let mut cmd = mcpcert();
        cmd.args(["run", "--stdio", &format!("{} --stdio --era 2025-06-18", refserver().display())]).args(args);
        report_args(&mut cmd, &dir);
        let out = cmd.output().unwrap();
        let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        assert_eq!(out.status.code(), Some(3), "{stdout}{stderr}");
        assert!(
            stderr.contains("and the server does not serve it: its initialize negotiates 2025-06-18")
                && stderr.contains(&format!("A run without {flag} judges what the server serves")),
            "{stderr}"
        );
        assert!(stdout.contains("test result: FAILED (the server does not serve the revision asked for)"), "{stdout}");
        if flag == "--revision" {
            assert!(stdout.lines().count() <= 12, "{stdout}");
        }
    }
}
