//! `mcpcert fuzz` against the reference server: the clean server gets no
//! finding at several seeds over both transports; each fuzz fault of the
//! reference server (`FUZZ_FAULTS` in fixtures/refserver/src/faults.rs)
//! turns exactly its target red; a finding's `--case` line gives it again.

mod common;
use common::*;
use std::collections::BTreeMap;

/// Fault, transport, the cases it turns red.
const FAULTS: &[(&str, &str, &[&str])] = &[
    ("fuzz-crash-deep-nesting", "stdio", &["2026-07-28/fuzz/params"]),
    ("fuzz-crash-deep-nesting", "http", &["2026-07-28/fuzz/params"]),
    ("fuzz-parse-error-wrong-id", "stdio", &["2026-07-28/fuzz/framing", "2026-07-28/fuzz/params"]),
    ("fuzz-parse-error-wrong-id", "http", &["2026-07-28/fuzz/framing", "2026-07-28/fuzz/params"]),
    ("fuzz-reply-to-notification", "stdio", &["2026-07-28/fuzz/envelope"]),
    ("fuzz-reply-to-notification", "http", &["2026-07-28/fuzz/envelope"]),
    ("fuzz-hang-invalid-utf8", "stdio", &["2026-07-28/fuzz/framing"]),
    ("fuzz-500-huge-body", "http", &["2026-07-28/fuzz/framing/conventions"]),
    ("fuzz-bidi-description", "stdio", &["2026-07-28/fuzz/descriptors"]),
    ("fuzz-accepts-beyond-maximum", "stdio", &["2026-07-28/fuzz/arguments"]),
    ("fuzz-accepts-beyond-maximum", "http", &["2026-07-28/fuzz/arguments"]),
];

fn fuzz(
    transport: &str,
    faults: &[&str],
    seed: u64,
    extra: &[&str],
    name: &str,
) -> (BTreeMap<String, serde_json::Value>, serde_json::Value, Option<HttpServer>) {
    let dir = outdir(name);
    let mut server_args: Vec<String> = Vec::new();
    for f in faults {
        server_args.push("--fault".into());
        server_args.push(f.to_string());
    }
    let mut cmd = mcpcert();
    cmd.arg("fuzz").args(["--seed", &seed.to_string(), "--count", "24", "--input-timeout-ms", "1500", "--out"]).arg(&dir);
    let server = if transport == "http" {
        let s = start_http(&server_args);
        cmd.args(["--http", &s.url]);
        Some(s)
    } else {
        let mut line = refserver().display().to_string();
        for a in &server_args {
            line.push(' ');
            line.push_str(a);
        }
        cmd.args(["--stdio", &line]);
        None
    };
    cmd.args(extra);
    let out = cmd.output().expect("mcpcert fuzz runs");
    let rep = report(&dir);
    let cases = rep["cases"].as_array().unwrap().iter().map(|c| (c["id"].as_str().unwrap().to_string(), c.clone())).collect();
    let mut rep = rep;
    rep["_stdout"] = String::from_utf8_lossy(&out.stdout).into();
    (cases, rep, server)
}

fn red(cases: &BTreeMap<String, serde_json::Value>) -> Vec<String> {
    cases
        .iter()
        .filter(|(_, c)| !matches!(c["verdict"].as_str(), Some("pass" | "n/a")))
        .map(|(k, c)| format!("{k}: {} {}", c["verdict"], c["message"]))
        .collect()
}

#[test]
fn the_clean_reference_server_gets_no_finding() {
    for seed in [1, 2, 3] {
        for t in ["stdio", "http"] {
            let (cases, _, _) = fuzz(t, &[], seed, &[], &format!("clean-{t}-{seed}"));
            assert_eq!(cases.len(), 11, "five classes of inputs, two cases each, and the descriptors");
            assert!(red(&cases).is_empty(), "seed {seed} over {t}: {:?}", red(&cases));
            let judged = cases.values().filter(|c| c["verdict"] == "pass").count();
            assert!(judged >= if t == "http" { 11 } else { 9 }, "classes were judged, not skipped");
        }
    }
}

#[test]
fn each_fuzz_fault_is_found_and_only_there() {
    let mut problems = Vec::new();
    for (fault, t, target) in FAULTS {
        let (cases, _, _) = fuzz(t, &[fault], 1, &[], &format!("{fault}-{t}"));
        let reds: Vec<String> =
            cases.iter().filter(|(_, c)| matches!(c["verdict"].as_str(), Some("fail" | "warn"))).map(|(k, _)| k.clone()).collect();
        if reds != target.iter().map(|x| x.to_string()).collect::<Vec<_>>() {
            problems.push(format!("{fault} over {t}: red {reds:?}, expected only {target:?}"));
        }
        // An HTTP server that died cannot be started again: the classes
        // after it are `error` (not judged), saying so; nothing else is.
        for (k, c) in cases.iter().filter(|(_, c)| c["verdict"] == "error") {
            let m = c["message"].as_str().unwrap_or("");
            if !(*t == "http" && m.contains("stopped")) {
                problems.push(format!("{fault} over {t}: {k} is error: {m}"));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn a_findings_case_line_finds_it_again_and_the_same_seed_sends_the_same_bytes() {
    let (cases, _, _) = fuzz("stdio", &["fuzz-parse-error-wrong-id"], 5, &[], "repro");
    let c = &cases["2026-07-28/fuzz/framing"];
    assert_eq!(c["verdict"], "fail");
    let repro = c["reproducer"].as_str().expect("a reproducer");
    let first = repro.lines().next().unwrap();
    let case = first.split("--case ").nth(1).expect("the --case line").trim();
    let (again, _, _) = fuzz("stdio", &["fuzz-parse-error-wrong-id"], 5, &["--case", case], "repro-again");
    let c2 = &again["2026-07-28/fuzz/framing"];
    assert_eq!(c2["verdict"], "fail", "{c2}");
    assert!(c2["message"].as_str().unwrap().contains(&format!("framing/{}", case.split('/').nth(1).unwrap())));
    // Deterministic: the same seed sent the same bytes for that input.
    let sent = |c: &serde_json::Value| c["transcript"][0]["sent"].as_str().map(String::from);
    assert_eq!(sent(c), sent(c2));
    // The printed shell line gives the wrong id too.
    let shell = repro.lines().find(|l| l.starts_with("{ ")).expect("a printf line");
    let out = std::process::Command::new("sh").arg("-c").arg(shell).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("\"id\":0") && text.contains("-32700"), "the printf line reproduces the wrong id: {text}");
}

#[test]
fn a_configured_header_value_reaches_no_report_or_reproducer() {
    let server = start_http(&["--fault".into(), "fuzz-reply-to-notification".into()]);
    let dir = outdir("fuzz-secret");
    let cfg = dir.join("target.toml");
    std::fs::write(
        &cfg,
        format!("[target]\nurl = \"{}\"\n[target.headers]\nX-Api-Key = {{ env = \"MCPCERT_FUZZ_TEST_SECRET\" }}\n", server.url),
    )
    .unwrap();
    let secret = "s3cr3t-fuzz-value-4711";
    let out = mcpcert()
        .args(["fuzz", "--config"])
        .arg(&cfg)
        .args(["--class", "envelope", "--count", "15", "--out"])
        .arg(dir.join("out"))
        .env("MCPCERT_FUZZ_TEST_SECRET", secret)
        .output()
        .unwrap();
    let rep = report(&dir.join("out"));
    assert_eq!(case(&rep, "2026-07-28/fuzz/envelope")["verdict"], "fail", "the fault is found through the configured target");
    let mut all = String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    for f in ["report.json", "junit.xml", "report.html"] {
        all.push_str(&std::fs::read_to_string(dir.join("out").join(f)).unwrap());
    }
    assert!(!all.contains(secret), "the header's value leaked");
    assert!(all.contains("[redacted]"), "the reproducer shows where the header goes");
}

#[test]
fn the_arguments_class_runs_only_the_tools_the_call_policy_allows() {
    let dir = outdir("fuzz-policy");
    let log = dir.join("exec.log");
    let server = format!("{} --exec-log {}", refserver().display(), log.display());
    // The default policy: the read-only, closed-world tools are called.
    let out = dir.join("allowed");
    mcpcert().args(["fuzz", "--stdio", &server, "--class", "arguments", "--count", "8", "--out"]).arg(&out).output().unwrap();
    assert_eq!(case(&report(&out), "2026-07-28/fuzz/arguments")["verdict"], "pass");
    let ran = std::fs::read_to_string(&log).unwrap_or_default();
    assert!(ran.contains("validate_order"), "the log sees the calls: {ran}");
    // Every tool forbidden: nothing runs, and the class does not apply.
    std::fs::remove_file(&log).unwrap();
    let tools = [
        "echo",
        "add",
        "list_items",
        "all_content",
        "weather",
        "toggle_beta",
        "confirm_order",
        "render_report",
        "validate_order",
        "fetch_page",
    ];
    let cfg = dir.join("forbid.toml");
    std::fs::write(&cfg, tools.iter().map(|t| format!("[tools.{t}]\ncall = false\n")).collect::<String>()).unwrap();
    let out = dir.join("forbidden");
    mcpcert().args(["fuzz", "--stdio", &server, "--config"]).arg(&cfg).args(["--count", "30", "--out"]).arg(&out).output().unwrap();
    let rep = report(&out);
    assert_eq!(case(&rep, "2026-07-28/fuzz/arguments")["verdict"], "n/a", "{}", case(&rep, "2026-07-28/fuzz/arguments"));
    assert!(std::fs::read_to_string(&log).unwrap_or_default().trim().is_empty(), "no tool ran in any class");
}

#[test]
fn inputs_sent_in_windows_are_judged_as_when_sent_one_at_a_time() {
    // The envelope and params classes over stdio go in windows by default;
    // a window with a finding is sent again one input at a time. The
    // verdicts, and the inputs each names, are the same as with --window 1.
    for faults in [&[][..], &["fuzz-crash-deep-nesting"], &["fuzz-parse-error-wrong-id"], &["fuzz-reply-to-notification"]] {
        let classes = ["--class", "envelope", "--class", "params"];
        let name = faults.first().copied().unwrap_or("clean");
        let (windowed, rep, _) = fuzz("stdio", faults, 2, &classes, &format!("window-{name}"));
        let one = [&classes[..], &["--window", "1"]].concat();
        let (alone, _, _) = fuzz("stdio", faults, 2, &one, &format!("alone-{name}"));
        let shown = |m: &BTreeMap<String, serde_json::Value>| -> Vec<(String, String, String)> {
            m.iter().map(|(k, c)| (k.clone(), c["verdict"].to_string(), c["message"].to_string())).collect()
        };
        assert_eq!(shown(&windowed), shown(&alone), "{name}");
        assert_eq!(windowed.len(), 4, "{name}");
        assert!(!rep["notices"][0].as_str().unwrap().contains("certainty"), "the reference server answers in turn: {}", rep["notices"]);
    }
}
