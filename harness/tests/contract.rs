//! The tool contract end to end: `mcpcert lint` on descriptor samples, lint
//! and run agreeing on one server, the operator's call policy from the
//! config, and the walker following the empty-string cursor.

mod common;

use common::{case, mcpcert, outdir, refserver, report, report_args, workspace_root};
use std::io::Write;
use std::process::Stdio;

fn lint(args: &[&str], stdin: Option<&str>) -> (i32, String) {
    let mut cmd = mcpcert();
    cmd.arg("lint").args(args).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    if let Some(s) = stdin {
        child.stdin.take().unwrap().write_all(s.as_bytes()).unwrap();
    } else {
        drop(child.stdin.take());
    }
    let out = child.wait_with_output().unwrap();
    (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr))
}

fn sample(name: &str) -> String {
    workspace_root().join("fixtures/descriptors").join(name).display().to_string()
}

#[test]
fn lint_admits_good_descriptors_and_names_every_rejection() {
    let (code, out) = lint(&[&sample("admitted.json")], None);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("4 tools: 4 admitted, 0 rejected"), "{out}");

    let (code, out) = lint(&[&sample("rejected.json"), "--json"], None);
    assert_eq!(code, 1, "{out}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let verdicts = v["tools"].as_array().unwrap();
    let admitted: Vec<&str> = verdicts.iter().filter(|t| t["admitted"] == true).map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(admitted, ["ok_tool", "spaced name", "ok_tool"], "SHOULD-level findings warn but admit");
    for t in verdicts.iter().filter(|t| t["admitted"] == false) {
        let f = t["findings"].as_array().unwrap();
        assert_eq!(f.len(), 1, "one reason per broken sample: {t}");
        assert!(matches!(f[0]["weight"].as_str(), Some("MUST") | Some("POLICY")), "{t}");
    }
    assert_eq!(verdicts.iter().filter(|t| t["admitted"] == false).count(), 12);

    // Under 2025-11-25 rules there is no x-mcp-header rule.
    let (_, out) = lint(&[&sample("rejected.json"), "--revision", "2025-11-25", "--json"], None);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["tools"][1]["admitted"], true);

    // The secret-name list comes from the config.
    let dir = outdir("lint-policy");
    let cfg = dir.join("policy.toml");
    std::fs::write(&cfg, "[admission]\nsecret_names = [\"zone\"]\n").unwrap();
    let (code, out) = lint(&[&sample("admitted.json"), "--config", cfg.to_str().unwrap()], None);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("REJECTED get_time"), "{out}");
}

#[test]
fn lint_reads_pages_from_stdin_and_refuses_what_is_not_a_tool_list() {
    let pages = "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"tools\":[{\"name\":\"a\",\"inputSchema\":{\"type\":\"object\"}}],\"nextCursor\":\"\"}}\n\
                 {\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"tools\":[{\"name\":\"b\",\"inputSchema\":{\"type\":\"array\"}}]}}\n";
    let (code, out) = lint(&["-"], Some(pages));
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("admitted a") && out.contains("REJECTED b"), "{out}");
    let (code, out) = lint(&["-"], Some("{\"hello\": 1}"));
    assert_eq!(code, 2, "{out}");
    assert!(out.contains("expected a tools/list result"), "{out}");
}

/// The descriptors of a reference server with `fault`, as tools/list pages
/// read straight from its stdout.
fn raw_pages(fault: &str) -> String {
    let meta = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#;
    let input = format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\",\"params\":{{{meta}}}}}\n\
         {{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\",\"params\":{{\"cursor\":\"\",{meta}}}}}\n\
         {{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/list\",\"params\":{{\"cursor\":\"c2\",{meta}}}}}\n\
         {{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/list\",\"params\":{{\"cursor\":\"c3\",{meta}}}}}\n"
    );
    let mut child = std::process::Command::new(refserver())
        .args(["--stdio", "--era", "modern", "--fault", fault])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
    String::from_utf8(child.wait_with_output().unwrap().stdout).unwrap()
}

#[test]
fn lint_and_run_reject_the_same_tools() {
    // A POLICY finding keeps the tool out in both, but the run's verdict is
    // only a warning (exit 0), like a SHOULD.
    for (fault, case_id, tool, verdict, exit) in [
        ("x-mcp-header-in-items", "2026-07-28/tools/descriptor-x-mcp-header", "hdr_items", "fail", 1),
        ("input-schema-invalid", "2026-07-28/tools/descriptor-input-schema", "bad_schema", "fail", 1),
        ("x-mcp-header-secret", "2026-07-28/tools/descriptor-x-mcp-header-secret", "hdr_secret", "warn", 0),
    ] {
        let (code, out) = lint(&["-"], Some(&raw_pages(fault)));
        assert_eq!(code, 1, "{fault}: {out}");
        let rejected: Vec<&str> = out.lines().filter_map(|l| l.strip_prefix("REJECTED ")).collect();
        assert_eq!(rejected, [tool], "{fault}: {out}");

        let dir = outdir(&format!("agree-{fault}"));
        let server = format!("{} --stdio --era modern --fault {fault}", refserver().display());
        let mut cmd = mcpcert();
        cmd.args(["run", "--stdio", &server, "tools/descriptor"]);
        report_args(&mut cmd, &dir);
        let out = cmd.output().unwrap();
        assert_eq!(out.status.code(), Some(exit), "{}", String::from_utf8_lossy(&out.stdout));
        let r = report(&dir);
        let c = case(&r, case_id);
        assert_eq!(c["verdict"], verdict, "{c}");
        assert!(c["message"].as_str().unwrap().contains(&format!("- {tool}: ")), "{c}");
        let failing: Vec<&str> = r["cases"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| c["verdict"] == "fail" || c["verdict"] == "warn")
            .map(|c| c["id"].as_str().unwrap())
            .collect();
        assert_eq!(failing, [case_id], "{fault}: only its own rule");
    }
}

fn run_with_config(name: &str, toml: &str, filter: &str) -> serde_json::Value {
    let dir = outdir(name);
    let cfg = dir.join("target.toml");
    let command = format!("{} --stdio --era modern", refserver().display());
    std::fs::write(&cfg, format!("[target]\ncommand = {command:?}\n{toml}")).unwrap();
    let mut cmd = mcpcert();
    cmd.args(["run", "--config", cfg.to_str().unwrap(), filter]);
    report_args(&mut cmd, &dir);
    cmd.output().unwrap();
    report(&dir)
}

fn sent_tools(c: &serde_json::Value) -> Vec<String> {
    c["transcript"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|e| e["sent"].as_str())
        .filter_map(|s| serde_json::from_str::<serde_json::Value>(s).ok())
        .filter(|v| v["method"] == "tools/call")
        .map(|v| format!("{} {}", v["params"]["name"].as_str().unwrap(), v["params"]["arguments"]))
        .collect()
}

#[test]
fn the_config_decides_which_tools_are_called_and_with_what() {
    // echo is read-only but forbidden; validate_order gets error arguments.
    let toml = "[tools.echo]\ncall = false\n[tools.validate_order]\nerror_arguments = { quantity = 0 }\n";
    let r = run_with_config("config-calls", toml, "2026-07-28/tools/call-");
    let content = case(&r, "2026-07-28/tools/call-content");
    assert_eq!(content["verdict"], "pass", "{content}");
    let all: Vec<String> = r["cases"].as_array().unwrap().iter().flat_map(sent_tools).collect();
    assert!(!all.iter().any(|s| s.starts_with("echo ")), "echo must not be called: {all:?}");
    let note = content["transcript"].as_array().unwrap().iter().filter_map(|e| e["note"].as_str()).collect::<Vec<_>>().join("\n");
    assert!(note.contains("echo: the config says call = false"), "{note}");
    let err = case(&r, "2026-07-28/tools/call-error-conforms");
    assert_eq!(err["verdict"], "pass", "{err}");
    assert!(sent_tools(&err).iter().any(|s| s == "validate_order {\"quantity\":0}"), "{err}");

    // Nothing callable: every call check is n/a with the reason, never a pass.
    let names =
        ["echo", "add", "list_items", "all_content", "weather", "render_report", "validate_order", "fetch_page", "pad_1", "pad_2", "pad_3"];
    let toml: String = names.iter().map(|n| format!("[tools.{n}]\ncall = false\n")).collect();
    let r = run_with_config("config-none", &toml, "2026-07-28/tools/call-");
    for c in r["cases"].as_array().unwrap() {
        if c["id"] == "2026-07-28/tools/call-unknown-tool" {
            assert_eq!(c["verdict"], "pass", "no tool runs for this probe: {c}");
            continue;
        }
        assert_eq!(c["verdict"], "n/a", "{c}");
        assert!(c["message"].as_str().unwrap().contains("no tool may be called"), "{c}");
    }
}

#[test]
fn the_walker_follows_the_empty_string_cursor() {
    let r = run_with_config("walk", "", "2026-07-28/tools/list-walk");
    let c = case(&r, "2026-07-28/tools/list-walk");
    assert_eq!(c["verdict"], "pass", "{c}");
    let note = c["transcript"].as_array().unwrap().iter().filter_map(|e| e["note"].as_str()).collect::<Vec<_>>().join("\n");
    assert!(note.contains("4 page(s), 13 item(s); cursors sent back: [\"\", \"c2\", \"c3\"]"), "{note}");
}

/// The 2026-07-28 subscription cases against the reference server started
/// with `args` (plus `--era modern`), with the trigger configured.
fn subscription_cases(name: &str, http: bool, args: &[&str]) -> (Option<i32>, Vec<serde_json::Value>) {
    let dir = outdir(&format!("{name}-{http}"));
    let mut args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
    args.splice(0..0, ["--era".to_string(), "modern".into()]);
    let _server;
    let mut cmd = mcpcert();
    if http {
        let s = common::start_http(&args);
        cmd.args(["run", "--http", &s.url]);
        _server = Some(s);
    } else {
        cmd.args(["run", "--stdio", &format!("{} {}", refserver().display(), args.join(" "))]);
        _server = None;
    }
    let cfg = dir.join("trigger.toml");
    std::fs::write(&cfg, "[subscriptions]\ntrigger_tool = \"toggle_beta\"\n").unwrap();
    cmd.arg("--config").arg(&cfg).arg("2026-07-28/subscriptions/");
    report_args(&mut cmd, &dir);
    let out = cmd.output().unwrap();
    let r = report(&dir);
    (out.status.code(), r["cases"].as_array().unwrap().clone())
}

#[test]
fn a_server_without_subscriptions_listen_makes_those_cases_na_with_the_reason() {
    for http in [false, true] {
        let (code, cases) = subscription_cases("no-listen", http, &["--no-listen"]);
        assert_eq!(code, Some(0), "{cases:?}");
        assert_eq!(cases.len(), 4);
        for c in &cases {
            assert_eq!(c["verdict"], "n/a", "{c}");
            assert!(c["message"].as_str().unwrap().contains("-32601"), "{c}");
            // The acknowledgment case's refusal stands for the others: no
            // second subscription, and the trigger (a tool that changes the
            // tool set) is not called for nothing.
            let sent: Vec<&str> = c["transcript"].as_array().unwrap().iter().filter_map(|e| e["sent"].as_str()).collect();
            assert!(!sent.iter().any(|s| s.contains("toggle_beta")), "the trigger was called: {c}");
        }
        let listen_ids = |cs: &[&serde_json::Value]| -> std::collections::BTreeSet<String> {
            cs.iter()
                .flat_map(|c| c["transcript"].as_array().unwrap().iter())
                .filter(|e| e["rpc_method"] == "subscriptions/listen")
                .map(|e| serde_json::from_str::<serde_json::Value>(e["sent"].as_str().unwrap()).unwrap()["id"].to_string())
                .collect()
        };
        let ack: Vec<&serde_json::Value> = cases.iter().filter(|c| c["id"] == "2026-07-28/subscriptions/acknowledged").collect();
        let all: Vec<&serde_json::Value> = cases.iter().collect();
        // Both subscriptions the acknowledgment case sent (one id a number,
        // one a string) are shown, the second refused like the first.
        assert_eq!(listen_ids(&ack).len(), 2, "{ack:?}");
        assert_eq!(listen_ids(&all), listen_ids(&ack), "only the acknowledgment case's subscriptions are sent");
    }
}

#[test]
fn a_subscription_never_acknowledged_leaves_nothing_unrequested_na_not_passed() {
    // HTTP only: over stdio each unanswered listen waits out the start-up
    // timeout (15 s); the judgement over the frames is the same code.
    {
        let (code, cases) = subscription_cases("no-ack", true, &["--fault", "listen-no-ack"]);
        assert_eq!(code, Some(1), "{cases:?}");
        let verdict = |id: &str| cases.iter().find(|c| c["id"] == id).unwrap().clone();
        assert_eq!(verdict("2026-07-28/subscriptions/acknowledged")["verdict"], "fail");
        let c = verdict("2026-07-28/subscriptions/nothing-unrequested");
        assert_eq!(c["verdict"], "n/a", "{c}");
        assert!(c["message"].as_str().unwrap().contains("never acknowledged"), "{c}");
    }
}

#[test]
fn a_config_naming_a_tool_the_server_does_not_list_is_a_warning() {
    let dir = outdir("config-typo");
    let cfg = dir.join("target.toml");
    let command = format!("{} --stdio --era modern", refserver().display());
    std::fs::write(&cfg, format!("[target]\ncommand = {command:?}\n[tools.ehco]\ncall = false\n")).unwrap();
    let mut cmd = mcpcert();
    cmd.args(["run", "--config", cfg.to_str().unwrap(), "2026-07-28/tools/call-content"]);
    report_args(&mut cmd, &dir);
    let out = cmd.output().unwrap();
    let console = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "a warning about the config does not fail the run: {console}");
    assert!(
        console.contains("warning: the config's [tools.ehco] names `ehco`, which the server does not list in 2026-07-28")
            && console.contains("did you mean `echo`?"),
        "{console}"
    );
    let r = report(&dir);
    assert!(r["warnings"][0].as_str().unwrap().contains("[tools.ehco]"), "{r}");
}

#[test]
fn a_filter_that_matches_no_case_is_exit_2_before_any_server_starts() {
    let out = mcpcert().args(["run", "--stdio", "/nonexistent/server", "2026-07-28/tools/no-such-case"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no case matches `2026-07-28/tools/no-such-case`"), "{err}");
    assert!(!err.contains("could not start"), "the server was not started: {err}");
}

#[test]
fn the_config_gives_prompt_arguments_and_template_values() {
    let r = run_with_config(
        "config-prompts-templates",
        "[prompts.greet]\narguments = { name = \"Zed\" }\n[templates.\"ref://items/{id}\"]\nvalues = { id = \"42\" }\n",
        "2026-07-28/",
    );
    let get = case(&r, "2026-07-28/prompts/get-listed");
    assert_eq!(get["verdict"], "pass", "{get}");
    assert!(get["transcript"].to_string().contains("Zed"), "the configured argument was sent: {get}");
    let read = case(&r, "2026-07-28/resources/read-template");
    assert_eq!(read["verdict"], "pass", "{read}");
    assert!(read["transcript"].to_string().contains("ref://items/42"), "the configured value filled the template: {read}");
    assert!(!read["transcript"].to_string().contains("completion/complete"), "no completion needed: {read}");
}

#[test]
fn lint_and_run_raise_the_same_descriptor_safety_concern() {
    // Descriptor safety is POLICY: lint says it (a warning, no rejection),
    // the run's case warns, both naming the tool, from the same judge.
    let fault = "tool-description-hidden-instruction";
    let (_, out) = lint(&["-"], Some(&raw_pages(fault)));
    let said: Vec<&str> = out.lines().filter(|l| l.contains("descriptor safety")).collect();
    assert!(said.len() == 1 && said[0].contains("echo: ") && said[0].contains("<important>"), "{out}");
    let dir = outdir("agree-safety");
    let server = format!("{} --stdio --era modern --fault {fault}", refserver().display());
    let mut cmd = mcpcert();
    cmd.args(["run", "--stdio", &server, "tools/descriptor"]);
    report_args(&mut cmd, &dir);
    let out = cmd.output().unwrap();
    assert_eq!(out.status.code(), Some(0), "a warning only: {}", String::from_utf8_lossy(&out.stdout));
    let c = case(&report(&dir), "2026-07-28/tools/descriptor-safety");
    assert_eq!(c["verdict"], "warn", "{c}");
    let m = c["message"].as_str().unwrap();
    assert!(m.contains("- echo: ") && m.contains("<important>"), "{c}");
}
