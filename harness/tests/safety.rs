//! A run never sends a request that would run a tool the call policy does
//! not allow: not in header rejection probes, not in roles, not for the
//! input_required or trigger tools, over either transport. The reference
//! server logs every tool a call reaches (`--exec-log`), and the server is
//! weakened so that any probe naming a tool would reach it.

mod common;

use common::{mcpcert, outdir, refserver, report, report_args, start_http, workspace_root};
use std::path::Path;

/// Every tool the reference server can list.
const TOOLS: [&str; 14] = [
    "echo",
    "render_report",
    "fetch_page",
    "add",
    "list_items",
    "all_content",
    "weather",
    "validate_order",
    "pad_1",
    "pad_2",
    "pad_3",
    "confirm_order",
    "toggle_beta",
    "beta",
];

/// Faults that let header probes through to the tool.
const WEAK: [&str; 7] = [
    "name-header-not-required",
    "method-header-not-required",
    "version-header-not-required",
    "param-not-validated",
    "header-values-case-insensitive",
    "duplicate-first-wins",
    "no-base64-decoding",
];

/// The fixture profile (input tool, trigger, roles) with every tool
/// forbidden, plus `extra`.
fn config(dir: &Path, extra: &str) -> std::path::PathBuf {
    let mut text = without_tool_tables(&std::fs::read_to_string(workspace_root().join("fixtures/refserver/mcpcert.toml")).unwrap());
    for t in TOOLS {
        text.push_str(&format!("\n[tools.{t}]\ncall = false\n"));
    }
    text.push_str(extra);
    let p = dir.join("forbid-all.toml");
    std::fs::write(&p, text).unwrap();
    p
}

/// A config's text without its `[tools.NAME]` tables (to give its own).
fn without_tool_tables(text: &str) -> String {
    let mut keep = true;
    let mut out = String::new();
    for line in text.lines() {
        if line.starts_with('[') {
            keep = !line.starts_with("[tools.");
        }
        if keep {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

fn run(dir: &Path, target: &[&str], cfg: &Path) -> serde_json::Value {
    let mut cmd = mcpcert();
    cmd.arg("run").args(target).arg("--config").arg(cfg).arg("--allowed-origin").arg("http://localhost");
    cmd.env("REFSERVER_ANALYST_TOKEN", "Bearer analyst-token").env("REFSERVER_OPERATOR_TOKEN", "Bearer operator-token");
    report_args(&mut cmd, dir);
    cmd.output().unwrap();
    report(dir)
}

fn logged(log: &Path) -> Vec<String> {
    std::fs::read_to_string(log).unwrap_or_default().lines().map(String::from).collect()
}

fn server_args(log: &Path) -> Vec<String> {
    let mut a = vec!["--era".to_string(), "dual".into(), "--exec-log".into(), log.display().to_string()];
    for f in WEAK {
        a.push("--fault".into());
        a.push(f.into());
    }
    a
}

#[test]
fn no_forbidden_tool_runs_over_http_even_on_a_server_that_skips_header_checks() {
    let dir = outdir("safety-http");
    let log = dir.join("exec.log");
    let server = start_http(&server_args(&log));
    let r = run(&dir, &["--http", &server.url], &config(&dir, ""));
    assert_eq!(r["summary"]["total"], dual_era_cases(), "every case of the two revisions a dual-era server speaks");
    assert!(logged(&log).is_empty(), "forbidden tools ran: {:?}", logged(&log));
    // The Mcp-Name rejection probes still judge the rule, on two names no
    // server has; the Mcp-Param ones say why they cannot.
    let cases = r["cases"].as_array().unwrap();
    let case = |id: &str| cases.iter().find(|c| c["id"] == id).unwrap().clone();
    let name = case("2026-07-28/headers/name-mismatch");
    assert!(name["transcript"].to_string().contains("mcpcert-no-such-tool"), "{name}");
    let param = case("2026-07-28/headers/param-mismatch");
    assert_eq!(param["verdict"], "n/a", "{param}");
    assert!(param["message"].as_str().unwrap().contains("probe_uncallable"), "{param}");
    for id in ["2026-07-28/input-required/retry", "2026-07-28/subscriptions/list-changed-delivered"] {
        let c = case(id);
        assert_eq!(c["verdict"], "n/a", "{c}");
        assert!(c["message"].as_str().unwrap().contains("call = false"), "{c}");
    }

    // The opt-in is what lets a probe name a forbidden tool (and the log sees it).
    let dir = outdir("safety-http-optin");
    let log = dir.join("exec.log");
    let server = start_http(&server_args(&log));
    run(&dir, &["--http", &server.url, "2026-07-28/headers/name-"], &config(&dir, "\n[calls]\nprobe_uncallable = true\n"));
    assert!(!logged(&log).is_empty(), "with probe_uncallable the weakened server runs a named tool");
}

#[test]
fn no_forbidden_tool_runs_over_stdio() {
    let dir = outdir("safety-stdio");
    let log = dir.join("exec.log");
    let cmd = format!("{} --era dual --exec-log {}", refserver().display(), log.display());
    let r = run(&dir, &["--stdio", &cmd], &config(&dir, ""));
    assert_eq!(r["summary"]["total"], dual_era_cases(), "every case of the two revisions a dual-era server speaks");
    assert!(logged(&log).is_empty(), "forbidden tools ran: {:?}", logged(&log));

    // The same run with the default policy calls tools (the log works).
    let dir = outdir("safety-stdio-default");
    let log = dir.join("exec.log");
    let cmd = format!("{} --era dual --exec-log {}", refserver().display(), log.display());
    let cfg = workspace_root().join("fixtures/refserver/mcpcert.toml");
    run(&dir, &["--stdio", &cmd, "2026-07-28/tools/call-content"], &cfg);
    let ran = logged(&log);
    assert!(!ran.is_empty());
    let read_only =
        ["echo", "add", "list_items", "all_content", "weather", "render_report", "validate_order", "fetch_page", "pad_1", "pad_2", "pad_3"];
    assert!(ran.iter().all(|t| read_only.contains(&t.as_str())), "only read-only tools by default: {ran:?}");
}

#[test]
fn conformance_fixtures_run_only_when_listed_and_not_turned_off() {
    // Turned off: with every ordinary tool forbidden too, nothing runs,
    // and the fixture cases say why.
    let dir = outdir("safety-fixtures-off");
    let log = dir.join("exec.log");
    let cmd = format!("{} --era dual --fixtures --exec-log {}", refserver().display(), log.display());
    let r = run(&dir, &["--stdio", &cmd], &config(&dir, "\n[calls]\nfixtures = false\n"));
    assert!(logged(&log).is_empty(), "tools ran although fixtures = false and every other tool is forbidden: {:?}", logged(&log));
    let c = r["cases"].as_array().unwrap().iter().find(|c| c["id"] == "2026-07-28/conformance/tools-call-simple-text").unwrap().clone();
    assert_eq!(c["verdict"], "n/a", "{c}");
    assert!(c["message"].as_str().unwrap().contains("turned off by the config"), "{c}");

    // By default the conformance cases call the fixtures they name, and
    // only those (besides read-only tools).
    let dir = outdir("safety-fixtures-on");
    let log = dir.join("exec.log");
    let cmd = format!("{} --era dual --fixtures --exec-log {}", refserver().display(), log.display());
    let cfg = workspace_root().join("fixtures/refserver/mcpcert.toml");
    run(&dir, &["--stdio", &cmd, "/conformance/"], &cfg);
    let ran = logged(&log);
    assert!(ran.iter().any(|t| t == "test_simple_text"), "{ran:?}");
    assert!(ran.iter().all(|t| t.starts_with("test_")), "only fixtures are called by the conformance cases: {ran:?}");
}

/// What in a request mcpcert sent could make a server reach a host outside
/// the test: every string of its params (the protocol's own `_meta` and an
/// `initialize`'s capabilities, keyed by extension identifiers such as
/// `io.modelcontextprotocol/tasks`, aside) and every `Mcp-Param-*` header
/// value.
fn reaching(ex: &serde_json::Value) -> Vec<String> {
    use mcpcert::checks::judge::egress;
    let mut out = Vec::new();
    if let Some(mut body) = ex["sent"].as_str().and_then(|s| serde_json::from_str::<serde_json::Value>(s).ok()) {
        let initialize = body.get("method").and_then(|m| m.as_str()) == Some("initialize");
        if let Some(p) = body.get_mut("params").and_then(|p| p.as_object_mut()) {
            p.remove("_meta");
            if initialize {
                p.remove("capabilities");
            }
        }
        for (path, what) in egress::reaching_values(&body["params"]) {
            out.push(format!("{} {path}: {what}", ex["label"]));
        }
    }
    for h in ex["sent_headers"].as_array().into_iter().flatten() {
        let (name, value) = (h[0].as_str().unwrap_or(""), h[1].as_str().unwrap_or(""));
        if name.to_ascii_lowercase().starts_with("mcp-param-")
            && let Some(what) = egress::reaches_out(value)
        {
            out.push(format!("{} header {name}: {what}", ex["label"]));
        }
    }
    out
}

/// No value mcpcert makes up can make a server reach a host outside the
/// test: every request of full runs against the reference server (stdio
/// and HTTP, with the conformance fixtures), including the calls of its
/// open-world fetch tool, whose schema's own default and example are real
/// hosts, names only `.invalid` hosts and paths in the scratch folder.
#[test]
fn no_request_names_a_host_that_could_resolve() {
    use mcpcert::checks::judge::egress;
    for transport in ["stdio", "http"] {
        let dir = outdir(&format!("egress-{transport}"));
        // Open-world tools are called only when the config says so.
        let mut text = std::fs::read_to_string(workspace_root().join("fixtures/refserver/mcpcert.toml")).unwrap();
        text.push_str("\n[calls]\nopen_world = true\n");
        let cfg = dir.join("open-world.toml");
        std::fs::write(&cfg, text).unwrap();
        let args = ["--era", "dual", "--fixtures"];
        let server;
        let target: Vec<String> = if transport == "stdio" {
            vec!["--stdio".into(), format!("{} {}", refserver().display(), args.join(" "))]
        } else {
            server = start_http(&args.iter().map(|a| a.to_string()).collect::<Vec<_>>());
            vec!["--http".into(), server.url.clone()]
        };
        let target: Vec<&str> = target.iter().map(String::as_str).collect();
        let r = run(&dir, &target, &cfg);
        let mut found = Vec::new();
        let mut fetched = 0;
        for c in r["cases"].as_array().unwrap() {
            for ex in c["transcript"].as_array().into_iter().flatten() {
                found.extend(reaching(ex).into_iter().map(|f| format!("{}: {f}", c["id"])));
                let sent: serde_json::Value = ex["sent"].as_str().and_then(|s| serde_json::from_str(s).ok()).unwrap_or_default();
                if sent.pointer("/params/name") == Some(&serde_json::json!("fetch_page"))
                    && let Some(url) = sent.pointer("/params/arguments/url")
                {
                    fetched += 1;
                    assert_eq!(url, &serde_json::json!(egress::URL), "{sent}");
                    assert_eq!(sent.pointer("/params/arguments/contact"), Some(&serde_json::json!(egress::EMAIL)), "{sent}");
                }
            }
        }
        assert!(fetched > 0, "{transport}: the open-world fetch tool is called (with values that cannot resolve)");
        found.sort();
        found.dedup();
        assert!(found.is_empty(), "{transport}: requests name hosts that could resolve:\n{}", found.join("\n"));
    }
}

/// By default a read-only tool that may reach the world (`openWorldHint`
/// true or absent, as the reference server's fetch tool) is never called,
/// and the call cases say why; the closed-world ones are.
#[test]
fn open_world_tools_are_not_called_by_default() {
    let dir = outdir("open-world-default");
    let log = dir.join("exec.log");
    let cmd = format!("{} --era dual --exec-log {}", refserver().display(), log.display());
    let cfg = workspace_root().join("fixtures/refserver/mcpcert.toml");
    let r = run(&dir, &["--stdio", &cmd, "2026-07-28/tools/call-content"], &cfg);
    let ran = logged(&log);
    assert!(!ran.is_empty() && !ran.iter().any(|t| t == "fetch_page"), "closed-world tools only: {ran:?}");
    let c = common::case(&r, "2026-07-28/tools/call-content");
    assert_eq!(c["verdict"], "pass", "{c}");
    assert!(
        c["transcript"].to_string().contains("openWorldHint is true or absent"),
        "the transcript says why fetch_page is not called: {c}"
    );
}

/// How many cases the catalogue has for the two revisions a dual-era server
/// speaks (a run keeps the cases of the revisions it found).
fn dual_era_cases() -> usize {
    mcpcert::suite::load_builtin().unwrap().cases.iter().filter(|c| ["2026-07-28", "2025-11-25"].contains(&c.revision.as_str())).count()
}

/// Every request on the record: each tools/call the run sent, whatever
/// case sent it, is in report.json's call log by tool name; a tool that
/// another case called (the [input_required] tool, which is not read-only
/// and is called because the config names it) is not listed as "not
/// called" by the coverage line.
#[test]
fn every_tool_call_is_in_the_call_log_and_coverage_counts_them() {
    let dir = outdir("call-log");
    let cmd = format!("{} --stdio --era modern", refserver().display());
    let cfg = workspace_root().join("fixtures/refserver/mcpcert.toml");
    let r = run(&dir, &["--stdio", &cmd, "--revision", "2026-07-28"], &cfg);
    let log = r["call_log"].as_array().expect("report.json has a call_log");
    let logged: std::collections::BTreeSet<&str> = log.iter().filter_map(|e| e["tool"].as_str()).collect();
    // Every tools/call a case's transcript shows is in the log.
    let mut seen = std::collections::BTreeSet::new();
    for c in r["cases"].as_array().unwrap() {
        for ex in c["transcript"].as_array().into_iter().flatten() {
            if ex["rpc_method"] == "tools/call"
                && let Some(name) = ex["sent"]
                    .as_str()
                    .and_then(|s| serde_json::from_str::<serde_json::Value>(s).ok())
                    .and_then(|v| v["params"]["name"].as_str().map(String::from))
            {
                seen.insert(name);
            }
        }
    }
    for name in &seen {
        assert!(logged.contains(name.as_str()), "{name} was called (a transcript shows it) but is not in the call log: {logged:?}");
    }
    assert!(logged.contains("confirm_order"), "{logged:?}");
    assert!(log.iter().all(|e| e["by"].as_str().is_some_and(|b| !b.is_empty()) && e["outcome"].is_string()), "{log:?}");
    let coverage = r["coverage"].as_array().map(|c| c.iter().filter_map(|l| l.as_str()).collect::<Vec<_>>().join("\n")).unwrap_or_default();
    assert!(!coverage.contains("confirm_order"), "the [input_required] tool was called by its cases: {coverage}");
}
