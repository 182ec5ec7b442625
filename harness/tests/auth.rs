//! Authorization (issue 25): the reference server behind mcpcert's built-in
//! test issuer (`--auth`, trusting what `mcpcert auth-setup --out` wrote).
//! The clean server passes every authorization case in both revisions and
//! keeps every other case green with the run's token; each `auth-*` fault
//! turns exactly its cases red; tokens given from outside the run (minted
//! by `mcpcert auth-token`) judge the same, n/a for a token not given; and
//! no token appears in any report, console line or reproducer.

mod common;

use common::{mcpcert, outdir, refserver, report, report_args, start_http};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

/// The test issuer, set up once: a fixed port and kept keys, as a server
/// team would configure it.
struct Issuer {
    dir: PathBuf,
    port: u16,
    /// Where mcpcert plays the servers' upstream API.
    upstream: u16,
    /// What `auth-setup --out` wrote (the server's `--auth FILE`).
    setup: PathBuf,
    keys: PathBuf,
}

/// A free port for the issuer or the upstream, below the kernel's range
/// of ephemeral ports (Linux: from 32768): they are bound only while a run
/// lasts, and a server started meanwhile on port 0 must not be handed one.
fn free_port() -> u16 {
    static NEXT: std::sync::atomic::AtomicU16 = std::sync::atomic::AtomicU16::new(0);
    let start = (std::process::id() % 6_000) as u16 * 2;
    loop {
        let p = 20_000 + (start + NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)) % 12_000;
        if std::net::TcpListener::bind(("127.0.0.1", p)).is_ok() {
            return p;
        }
    }
}

fn issuer() -> &'static Issuer {
    static I: OnceLock<Issuer> = OnceLock::new();
    I.get_or_init(|| {
        let dir = outdir("auth-issuer");
        let port = free_port();
        let (keys, setup) = (dir.join("keys.json"), dir.join("issuer.json"));
        let out = mcpcert()
            .args(["auth-setup", "--port", &port.to_string(), "--key-file", keys.to_str().unwrap(), "--out", setup.to_str().unwrap()])
            .output()
            .unwrap();
        assert!(out.status.success(), "auth-setup: {}", String::from_utf8_lossy(&out.stderr));
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(text.contains(&format!("http://127.0.0.1:{port}")) && text.contains("BEGIN PUBLIC KEY"), "{text}");
        Issuer { dir, port, setup, keys, upstream: free_port() }
    })
}

/// Runs with the built-in issuer listen on its fixed port: one at a time.
fn serial() -> std::sync::MutexGuard<'static, ()> {
    static M: Mutex<()> = Mutex::new(());
    M.lock().unwrap_or_else(|e| e.into_inner())
}

const TOOLS: &str = "[tools.echo]\ncall = true\n[tools.add]\ncall = true\n[tools.all_content]\ncall = true\n[tools.weather]\ncall = true\n\
[input_required]\ntool = \"confirm_order\"\narguments = { item = \"book\" }\n[subscriptions]\ntrigger_tool = \"toggle_beta\"\n";

const SCOPE_CHECK: &str = "[auth.scope_check]\nmethod = \"tools/call\"\nparams = { name = \"echo\", arguments = { text = \"mcpcert\" } }\nscope = \"mcp:tools\"\n";

/// The config of a run with the built-in issuer, written once (the tests
/// run at once: rewriting it while another run reads it would race).
fn builtin_config() -> PathBuf {
    static P: OnceLock<PathBuf> = OnceLock::new();
    P.get_or_init(|| {
        let i = issuer();
        let p = i.dir.join("builtin.toml");
        let text = format!(
            "{TOOLS}[auth]\nport = {}\nkey_file = {:?}\nupstream_port = {}\nscopes = [\"mcp:read\", \"mcp:tools\"]\n{SCOPE_CHECK}",
            i.port,
            i.keys.display().to_string(),
            i.upstream
        );
        std::fs::write(&p, text).unwrap();
        p
    })
    .clone()
}

struct Run {
    report: Value,
    /// Everything written: console, JSON, JUnit, HTML.
    texts: Vec<(String, String)>,
    verdicts: BTreeMap<String, (String, String)>,
}

fn run(name: &str, url: &str, cfg: &Path, env: &[(&str, String)], filter: Option<&str>) -> Run {
    let dir = outdir(name);
    let mut cmd = mcpcert();
    cmd.args(["run", "--http", url, "--config", cfg.to_str().unwrap(), "--allowed-origin", "http://localhost"]);
    if let Some(f) = filter {
        cmd.arg(f);
    }
    cmd.envs(env.iter().map(|(k, v)| (*k, v.as_str())));
    report_args(&mut cmd, &dir);
    let out = {
        let _one = serial();
        cmd.output().unwrap()
    };
    let console = String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(dir.join("report.json").exists(), "{name}: no report\n{console}");
    let report = report(&dir);
    let mut texts = vec![("console".to_string(), console)];
    for f in ["report.json", "junit.xml", "report.html"] {
        texts.push((f.to_string(), std::fs::read_to_string(dir.join(f)).unwrap()));
    }
    let verdicts = report["cases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["id"].as_str().unwrap().to_string(),
                (c["verdict"].as_str().unwrap().to_string(), c["message"].as_str().unwrap_or("").to_string()),
            )
        })
        .collect();
    Run { report, texts, verdicts }
}

fn server(faults: &[&str]) -> common::HttpServer {
    server_in("dual", faults)
}

fn server_in(era: &str, faults: &[&str]) -> common::HttpServer {
    let i = issuer();
    let mut args = vec!["--era".to_string(), era.into(), "--auth".into(), i.setup.display().to_string()];
    args.extend(["--auth-upstream".to_string(), format!("127.0.0.1:{}", i.upstream)]);
    for f in faults {
        args.push("--fault".into());
        args.push(f.to_string());
    }
    start_http(&args)
}

fn red(r: &Run) -> BTreeSet<String> {
    r.verdicts.iter().filter(|(_, (v, _))| matches!(v.as_str(), "fail" | "warn" | "error")).map(|(k, _)| k.clone()).collect()
}

/// No token (a JWT's base64url header starts `eyJ`), nor the malformed one.
fn assert_no_token(r: &Run, what: &str, more: &[String]) {
    for (f, text) in &r.texts {
        assert!(!text.contains("eyJ"), "{what}: {f} shows a token");
        assert!(!text.contains("mcpcert-malformed-token"), "{what}: {f} shows the malformed token");
        for m in more {
            assert!(!text.contains(m.as_str()), "{what}: {f} shows a given token");
        }
    }
}

#[test]
fn clean_server_passes_every_auth_case_and_keeps_the_rest_green() {
    let s = server(&[]);
    let r = run("auth-clean", &s.url, &builtin_config(), &[], None);
    assert!(
        red(&r).is_empty(),
        "clean server behind the test issuer: {:#?}",
        red(&r).iter().map(|k| (k, &r.verdicts[k])).collect::<Vec<_>>()
    );
    let auth: Vec<&String> = r.verdicts.keys().filter(|k| k.contains("/auth/") && !k.starts_with("2025-06-18/")).collect();
    assert_eq!(auth.len(), 27, "{auth:?}"); // 2026-07-28 and 2025-11-25
    for id in auth {
        assert_eq!(r.verdicts[id].0, "pass", "{id}: {:?}", r.verdicts[id]);
    }
    // The run's token reached every other case: the tools were walked and called.
    for id in ["2026-07-28/tools/list-walk", "2025-11-25/tools/call-content", "2026-07-28/tools/call-content"] {
        assert_eq!(r.verdicts[id].0, "pass", "{id}: {:?}", r.verdicts[id]);
    }
    assert_no_token(&r, "clean run", &[]);
    let older = server_in("2025-06-18", &[]);
    let r6 = run("auth-clean-2025-06-18", &older.url, &builtin_config(), &[], None);
    assert!(red(&r6).is_empty(), "clean 2025-06-18 server: {:?}", red(&r6));
    let auth6: Vec<&String> = r6.verdicts.keys().filter(|k| k.starts_with("2025-06-18/auth/")).collect();
    assert_eq!(auth6.len(), 10, "{auth6:?}");
    for id in auth6 {
        assert_eq!(r6.verdicts[id].0, "pass", "{id}: {:?}", r6.verdicts[id]);
    }
    // Each wrong token's claims are shown, never the token.
    let c = common::case(&r.report, "2026-07-28/auth/audience-validated");
    let labels: Vec<&str> = c["transcript"].as_array().unwrap().iter().filter_map(|e| e["label"].as_str()).collect();
    assert!(labels.iter().any(|l| l.contains("aud = https://mcpcert-other-resource.invalid/mcp")), "{labels:?}");
}

#[test]
fn each_auth_fault_turns_exactly_its_cases_red() {
    let out = std::process::Command::new(refserver()).args(["--list-faults", "--json"]).output().unwrap();
    let faults: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
    let auth: Vec<&Value> = faults.iter().filter(|f| f["auth"] == true).collect();
    assert!(auth.len() >= 13, "{auth:?}");
    // Every authorization case is some fault's target.
    let catalog = mcpcert::suite::load_builtin().unwrap();
    let cases: BTreeSet<String> = catalog.cases.iter().filter(|c| c.id.contains("/auth/")).map(|c| c.id.clone()).collect();
    let targeted: BTreeSet<String> =
        auth.iter().flat_map(|f| f["targets"].as_array().unwrap().iter().map(|t| t.as_str().unwrap().to_string())).collect();
    assert_eq!(cases, targeted, "authorization cases and the --auth faults' targets");
    let mut problems = Vec::new();
    // A static API key is judged with the key given (its own test below).
    for f in auth.into_iter().filter(|f| f["name"] != "auth-static-key") {
        let name = f["name"].as_str().unwrap();
        let want: BTreeSet<String> = f["targets"].as_array().unwrap().iter().map(|t| t.as_str().unwrap().to_string()).collect();
        // 2025-06-18 (a server of that revision only) keeps most of these rules.
        let older = server_in("2025-06-18", &[name]);
        let r = run(&format!("auth-{name}-2025-06-18"), &older.url, &builtin_config(), &[], None);
        let want_older: BTreeSet<String> = want.iter().filter(|t| t.starts_with("2025-06-18/")).cloned().collect();
        if red(&r) != want_older {
            problems.push(format!("fault {name} (2025-06-18): red {:?}, expected {want_older:?}", red(&r)));
        }
        drop(older);
        let s = server(&[name]);
        let r = run(&format!("auth-{name}"), &s.url, &builtin_config(), &[], None);
        let got = red(&r);
        let want: BTreeSet<String> = want.into_iter().filter(|t| !t.starts_with("2025-06-18/")).collect();
        if got != want {
            let detail: Vec<String> = got.symmetric_difference(&want).map(|k| format!("  {k}: {:?}", r.verdicts.get(k))).collect();
            problems.push(format!("fault {name}: red {got:?}, expected {want:?}\n{}", detail.join("\n")));
        }
        // What the failures say names no token; the echoing fault's
        // evidence shows the token masked.
        assert_no_token(&r, name, &[]);
        if name == "auth-echo-token" {
            let c = common::case(&r.report, "2026-07-28/auth/token-not-echoed");
            let bodies: Vec<&str> = c["transcript"].as_array().unwrap().iter().filter_map(|e| e["body"].as_str()).collect();
            assert!(bodies.iter().any(|b| b.contains("(token [masked])")), "the echoed token is shown masked: {bodies:?}");
        }
        // A failure's reproducer gives the same verdict.
        if name == "auth-ignores-aud" {
            let c = common::case(&r.report, "2026-07-28/auth/audience-validated");
            let repro = c["reproducer"].as_str().unwrap_or("");
            assert!(!repro.contains("eyJ"), "the reproducer shows a token: {repro}");
            // Its curl lines make the tokens again, each of its kind.
            assert!(
                repro.to_ascii_lowercase().contains("authorization: bearer $(mcpcert auth-token --config")
                    && repro.contains("--kind other-audience)"),
                "{repro}"
            );
            let _one = serial();
            let v = common::reproduce(repro, "2026-07-28/auth/audience-validated");
            assert_eq!(v.as_deref(), Ok("fail"), "{repro}");
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// One defect, one failure: a server that enforces no authorization at all
/// (the reference server without --auth) fails only the no-token case; the
/// cases that send wrong tokens or read the metadata do not apply.
#[test]
fn a_server_without_auth_fails_only_the_no_token_case() {
    let s = start_http(&["--era".to_string(), "dual".into()]);
    let r = run("auth-none", &s.url, &builtin_config(), &[], Some("auth/"));
    let want: BTreeSet<String> =
        ["2026-07-28/auth/no-token-unauthorized", "2025-11-25/auth/no-token-unauthorized"].iter().map(|s| s.to_string()).collect();
    assert_eq!(red(&r), want, "{:#?}", r.verdicts);
    for case in ["invalid-token-rejected", "audience-validated", "resource-metadata", "query-token-refused", "metadata-discoverable"] {
        let (v, msg) = &r.verdicts[&format!("2026-07-28/auth/{case}")];
        assert_eq!(v, "n/a", "{case}: {msg}");
    }
}

/// Tokens given from outside the run: minted beforehand by `mcpcert
/// auth-token` (as a real authorization server would have), handed over in
/// environment variables. Those the run can make from the valid one
/// (malformed, bad signature, unknown key, alg none) are judged; those only
/// a key holder could make are n/a unless given.
#[test]
fn given_tokens_judge_the_server_and_a_token_not_given_is_na() {
    let i = issuer();
    let s = server(&[]);
    let mint = |kind: &str| {
        let out = mcpcert()
            .args(["auth-token", "--port", &i.port.to_string(), "--key-file", i.keys.to_str().unwrap(), "--aud", &s.url, "--kind", kind])
            .output()
            .unwrap();
        assert!(out.status.success(), "auth-token --kind {kind}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap().trim().to_string()
    };
    let (valid, expired, early) = (mint("valid"), mint("expired"), mint("not-yet-valid"));
    assert!(valid.starts_with("eyJ") && expired.starts_with("eyJ") && valid != expired);
    let cfg = i.dir.join("given.toml");
    std::fs::write(
        &cfg,
        format!(
            "{TOOLS}[auth]\ntoken = {{ env = \"MCPCERT_TEST_VALID\" }}\nexpired_token = {{ env = \"MCPCERT_TEST_EXPIRED\" }}\nnot_yet_valid_token = {{ env = \"MCPCERT_TEST_EARLY\" }}\n{SCOPE_CHECK}"
        ),
    )
    .unwrap();
    let env = [
        ("MCPCERT_TEST_VALID", format!("Bearer {valid}")),
        ("MCPCERT_TEST_EXPIRED", expired.clone()),
        ("MCPCERT_TEST_EARLY", early.clone()),
    ];
    let r = run("auth-given", &s.url, &cfg, &env, Some("auth/"));
    for rev in ["2026-07-28", "2025-11-25"] {
        for (case, want) in [
            ("no-token-unauthorized", "pass"),
            ("metadata-discoverable", "pass"),
            ("resource-metadata", "pass"),
            ("invalid-token-rejected", "pass"),
            ("expired-token-rejected", "pass"),
            ("query-token-refused", "pass"),
            ("token-not-echoed", "pass"),
            ("audience-validated", "n/a"),
            ("issuer-validated", "n/a"),
            ("insufficient-scope", "n/a"),
            ("no-token-passthrough", "n/a"),
        ] {
            let id = format!("{rev}/auth/{case}");
            let (v, msg) = &r.verdicts[&id];
            assert_eq!(v, want, "{id}: {msg}");
        }
        let (_, msg) = &r.verdicts[&format!("{rev}/auth/audience-validated")];
        assert!(msg.contains("other_audience_token"), "the n/a names the key that gives the token: {msg}");
        let (_, msg) = &r.verdicts[&format!("{rev}/auth/insufficient-scope")];
        assert!(msg.contains("missing_scope_token"), "{msg}");
    }
    assert_no_token(&r, "given tokens", &[valid, expired, early]);
}

/// The built-in issuer signs with ES256 as well: a server that trusts its
/// JWKS is judged the same.
#[test]
fn es256_tokens_are_judged_alike() {
    let i = issuer();
    let cfg = i.dir.join("es256.toml");
    let text = format!(
        "{TOOLS}[auth]\nport = {}\nkey_file = {:?}\nalg = \"ES256\"\nscopes = [\"mcp:read\", \"mcp:tools\"]\n{SCOPE_CHECK}",
        i.port,
        i.keys.display().to_string()
    );
    std::fs::write(&cfg, text).unwrap();
    let s = server(&[]);
    let r = run("auth-es256", &s.url, &cfg, &[], Some("auth/"));
    assert!(red(&r).is_empty(), "{:?}", red(&r).iter().map(|k| (k, &r.verdicts[k])).collect::<Vec<_>>());
    let c = common::case(&r.report, "2026-07-28/auth/invalid-token-rejected");
    assert_eq!(c["verdict"], "pass");
    let s = server(&["auth-accepts-alg-none"]);
    let r = run("auth-es256-none", &s.url, &cfg, &[], Some("auth/"));
    assert_eq!(r.verdicts["2026-07-28/auth/invalid-token-rejected"].0, "fail");
}

/// Behind `[auth]` every request carries the run's valid token, so the curl
/// lines of any case's reproducer make it again (`mcpcert auth-token … --kind
/// valid`), the session-opening initialize of 2025-11-25 included: shown
/// redacted, as they were, the server answered them 401 instead of what
/// the run got.
#[test]
fn a_protected_servers_reproducers_send_the_runs_token_made_again() {
    let s = server(&["invalid-cursor-accepted"]);
    let r = run("auth-repro-token", &s.url, &builtin_config(), &[], Some("tools/list-invalid-cursor"));
    assert_no_token(&r, "a non-authorization case's reproducer", &[]);
    let bin = PathBuf::from(env!("CARGO_BIN_EXE_mcpcert"));
    let path = format!("export PATH={}:\"$PATH\"\n", bin.parent().unwrap().display());
    for rev in ["2026-07-28", "2025-11-25"] {
        let id = format!("{rev}/tools/list-invalid-cursor");
        let c = common::case(&r.report, &id);
        assert_eq!(c["verdict"], "warn", "{id}: {c}");
        let repro = c["reproducer"].as_str().unwrap_or("");
        let curls: Vec<&str> = repro.lines().filter(|l| l.contains("curl ")).collect();
        assert!(!curls.is_empty(), "{repro}");
        for l in &curls {
            assert!(!l.contains("[redacted]"), "{id}: a curl line sends the redacted header: {l}");
            assert!(l.contains("authorization: Bearer $(mcpcert auth-token --config") && l.contains("--kind valid)"), "{id}: {l}");
        }
        // Each request gets the status it got in the run (not 401).
        let sent: Vec<&Value> = c["transcript"].as_array().unwrap().iter().filter(|e| e["http_method"].is_string()).collect();
        let want: Vec<Option<u64>> = sent.iter().map(|e| e["status"].as_u64()).collect();
        let _one = serial();
        if let Some(got) = common::replay_statuses(&format!("{path}{repro}"), sent.len()) {
            let got: Vec<Option<u64>> = got.into_iter().map(|s| s.map(u64::from)).collect();
            assert_eq!(got, want, "{id}: the replayed curl lines' statuses\n{repro}");
        }
    }
}

/// A server that checks a static API key (given as [auth] token) instead of
/// MCP's OAuth: a bare 401, no protected resource metadata. That breaks the
/// authorization spec's SHOULD once (auth/oauth-conformance warns); the
/// metadata cases, whose MUSTs are for servers that use MCP's
/// authorization, do not apply. (Before, four of them failed at MUST.)
#[test]
fn a_static_api_key_server_breaks_one_should_not_the_oauth_musts() {
    let i = issuer();
    let s = server(&["auth-static-key"]);
    let cfg = i.dir.join("static-key.toml");
    std::fs::write(&cfg, format!("{TOOLS}[auth]\ntoken = {{ env = \"MCPCERT_TEST_STATIC_KEY\" }}\n")).unwrap();
    let key = "mcpcert-static-api-key".to_string();
    let r = run("auth-static-key", &s.url, &cfg, &[("MCPCERT_TEST_STATIC_KEY", key.clone())], None);
    let want: BTreeSet<String> =
        ["2026-07-28/auth/oauth-conformance", "2025-11-25/auth/oauth-conformance"].iter().map(|s| s.to_string()).collect();
    assert_eq!(red(&r), want, "{:#?}", red(&r).iter().map(|k| (k, &r.verdicts[k])).collect::<Vec<_>>());
    for rev in ["2026-07-28", "2025-11-25"] {
        let (v, msg) = &r.verdicts[&format!("{rev}/auth/oauth-conformance")];
        assert_eq!(v, "warn", "{msg}");
        assert!(msg.contains("no Bearer challenge") && msg.contains("SHOULD conform"), "{msg}");
        assert_eq!(r.verdicts[&format!("{rev}/auth/no-token-unauthorized")].0, "pass");
        for case in ["metadata-discoverable", "challenge-scope", "resource-metadata"] {
            let (v, msg) = &r.verdicts[&format!("{rev}/auth/{case}")];
            assert_eq!(v, "n/a", "{case}: {msg}");
            assert!(msg.contains("shows no sign of MCP's OAuth authorization"), "{case}: {msg}");
        }
    }
    assert_eq!(r.verdicts["2026-07-28/auth/no-offline-access"].0, "n/a");
    // The key reached every other case: the tools were walked and called.
    assert_eq!(r.verdicts["2026-07-28/tools/list-walk"].0, "pass");
    assert_no_token(&r, "static key", &[key]);
}

/// A protected server and no token in the config (one remote server in
/// five in the MCP registry answers 401 without one): met, not turned away.
/// The console's first line says so and shows the config that gives
/// mcpcert a token; the authorization cases that need no token are judged
/// (pass on a clean server, fail where the discovery breaks); everything
/// else is n/a "needs a token"; exit 4, never read as passed. (Before:
/// exit 3, "speaks no revision mcpcert tests", and every case ERROR.)
#[test]
fn a_protected_server_without_a_token_is_judged_on_what_needs_none() {
    let run_plain = |name: &str, faults: &[&str]| {
        let s = server(faults);
        let dir = outdir(name);
        let mut cmd = mcpcert();
        cmd.args(["run", "--http", &s.url]);
        report_args(&mut cmd, &dir);
        let out = {
            let _one = serial();
            cmd.output().unwrap()
        };
        (out.status.code(), String::from_utf8_lossy(&out.stderr).into_owned() + &String::from_utf8_lossy(&out.stdout), report(&dir))
    };
    let (code, console, rep) = run_plain("auth-protected-no-token", &[]);
    assert_eq!(code, Some(4), "{console}");
    let first = console.lines().next().unwrap_or("");
    assert!(first.starts_with("protected: the server answers HTTP 401"), "{console}");
    assert!(console.contains("[auth] token = { env = \"MCP_TOKEN\" }") && console.contains("[target.headers] Authorization"), "{console}");
    assert!(console.contains("test result: FAILED (protected: only what needs no token was judged"), "{console}");
    let verdict = |id: &str| common::case(&rep, id)["verdict"].as_str().unwrap().to_string();
    for case in
        ["no-token-unauthorized", "oauth-conformance", "metadata-discoverable", "challenge-scope", "resource-metadata", "no-offline-access"]
    {
        assert_eq!(verdict(&format!("2026-07-28/auth/{case}")), "pass", "{case}");
    }
    for id in [
        "2026-07-28/auth/invalid-token-rejected",
        "2026-07-28/auth/token-not-echoed",
        "2026-07-28/tools/list-walk",
        "2025-11-25/lifecycle/ping",
    ] {
        let c = common::case(&rep, id);
        assert_eq!(c["verdict"], "n/a", "{id}");
        assert!(c["message"].as_str().unwrap().contains("needs a token"), "{id}: {c}");
    }
    assert!(rep["cases"].as_array().unwrap().iter().all(|c| c["verdict"] != "error"), "nothing is ERROR");
    // A broken discovery fails, and the run fails.
    for (fault, id) in [
        ("auth-metadata-no-servers", "2026-07-28/auth/resource-metadata"),
        ("auth-metadata-wrong-resource", "2026-07-28/auth/resource-metadata"),
    ] {
        let (code, console, rep) = run_plain(&format!("auth-protected-{fault}"), &[fault]);
        assert_eq!(code, Some(1), "{fault}: {console}");
        assert_eq!(common::case(&rep, id)["verdict"], "fail", "{fault}");
    }
    // No metadata at all, a bare Bearer challenge: without a token that
    // is what a static API key server sends too, so it is judged as one
    // (the verdict rests on the server, not on whether a credential was
    // given): the OAuth MUSTs n/a, the SHOULD to conform a warning saying
    // what a client cannot discover, exit 4. With the built-in issuer's
    // tokens the same server fails metadata-discoverable (the fault matrix).
    for (name, faults) in [("no-discovery", &["auth-no-discovery"][..]), ("static-key", &["auth-static-key"][..])] {
        let (code, console, rep) = run_plain(&format!("auth-protected-{name}"), faults);
        assert_eq!(code, Some(4), "{name}: {console}");
        assert!(console.contains("give mcpcert a token to judge the rest"), "{name}: {console}");
        for rev in ["2026-07-28"] {
            let c = common::case(&rep, &format!("{rev}/auth/oauth-conformance"));
            assert_eq!(c["verdict"], "warn", "{name} {rev}: {c}");
            assert!(c["message"].as_str().unwrap().contains("clients cannot discover its authorization server"), "{name}: {c}");
            for case in ["metadata-discoverable", "resource-metadata"] {
                assert_eq!(common::case(&rep, &format!("{rev}/auth/{case}"))["verdict"], "n/a", "{name} {rev} {case}");
            }
        }
    }
}
