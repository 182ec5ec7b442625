//! Shared helpers: build and start the reference server, run every case.
#![allow(dead_code)]

use mcpcert::config::{InputTool, Policy, Role};
use mcpcert::record::CaseResult;
use mcpcert::run::{RunConfig, Runner};
use mcpcert::session::Probe;
use mcpcert::suite;
use mcpcert::transport::{HttpSpec, Limits, StdioSpec, TargetSpec};
use std::collections::BTreeMap;
use std::io::BufRead;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::Duration;

pub fn workspace_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

/// Path of the reference server binary, built once per test process.
pub fn refserver() -> PathBuf {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let st = Command::new(cargo)
            .args(["build", "-q", "-p", "mcpcert-refserver", "--bin", "mcpcert-refserver"])
            .current_dir(workspace_root())
            .status()
            .expect("cargo build of the reference server");
        assert!(st.success(), "building mcpcert-refserver failed");
        let exe = PathBuf::from(env!("CARGO_BIN_EXE_mcpcert"));
        exe.parent().unwrap().join("mcpcert-refserver")
    })
    .clone()
}

/// A reference server over HTTP; killed on drop.
pub struct HttpServer {
    child: Child,
    pub url: String,
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub fn start_http(args: &[String]) -> HttpServer {
    let mut child = Command::new(refserver())
        .arg("--http")
        .arg("0")
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start refserver");
    let mut line = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
    let url = line.trim().strip_prefix("listening on ").expect("refserver prints its URL").to_string();
    HttpServer { child, url }
}

#[derive(Clone, Debug)]
pub struct Setup {
    pub transport: &'static str,
    pub era: String,
    pub faults: Vec<String>,
    /// Conformant variations (`--quirk`).
    pub quirks: Vec<String>,
    pub sse: bool,
    /// `--fixtures`: the conformance fixtures are served too.
    pub fixtures: bool,
    /// How many cases run at once (mcpcert's default on a small machine).
    pub jobs: usize,
}

impl Setup {
    pub fn new(transport: &'static str, era: &str) -> Setup {
        Setup { transport, era: era.into(), faults: vec![], quirks: vec![], sse: false, fixtures: false, jobs: 4 }
    }
    pub fn with_fixtures(mut self) -> Setup {
        self.fixtures = true;
        self
    }
    fn server_args(&self) -> Vec<String> {
        let mut a = vec!["--era".to_string(), self.era.clone()];
        for f in &self.faults {
            a.push("--fault".into());
            a.push(f.clone());
        }
        for q in &self.quirks {
            a.push("--quirk".into());
            a.push(q.clone());
        }
        if self.sse {
            a.push("--sse".into());
        }
        if self.fixtures {
            a.push("--fixtures".into());
        }
        a
    }
}

/// The reference server's two identities: analysts must never see production.
pub fn roles() -> Vec<Role> {
    ["analyst", "operator"]
        .iter()
        .map(|name| Role {
            name: name.to_string(),
            headers: vec![("Authorization".into(), format!("Bearer {name}-token"))],
            env: vec![("MCPCERT_REF_ROLE".into(), name.to_string())],
            never_see: if *name == "analyst" { vec!["production".into()] } else { vec![] },
        })
        .collect()
}

/// Run every built-in case against the reference server set up this way.
pub fn run_all(setup: &Setup) -> BTreeMap<String, CaseResult> {
    run_all_kept(setup).0
}

/// The config file that gives `mcpcert run` the policy `run_all` uses (the
/// fixture profile, the load check's figures, the page limit), so that the
/// reproducers it prints rerun a case as the test ran it.
pub fn profile() -> PathBuf {
    static FILE: OnceLock<PathBuf> = OnceLock::new();
    FILE.get_or_init(|| {
        let mut text = std::fs::read_to_string(workspace_root().join("fixtures/refserver/mcpcert.toml")).unwrap();
        text.push_str("\n[load]\nconnections = 8\nrequests = 96\nseconds = 20\n\n[pagination]\nmax_pages = 200\n");
        let p = std::env::temp_dir().join(format!("mcpcert-test-{}-profile.toml", std::process::id()));
        std::fs::write(&p, text).unwrap();
        p
    })
    .clone()
}

/// The environment the fixture profile reads the roles' tokens from.
pub const PROFILE_ENV: [(&str, &str); 2] =
    [("REFSERVER_ANALYST_TOKEN", "Bearer analyst-token"), ("REFSERVER_OPERATOR_TOKEN", "Bearer operator-token")];

/// `run_all`, keeping the HTTP server (if any) alive for the caller, so
/// that the printed reproducers (which name `mcpcert run` with the same
/// target and `profile()`) can be run against it.
pub fn run_all_kept(setup: &Setup) -> (BTreeMap<String, CaseResult>, Option<HttpServer>) {
    let catalog = suite::load_builtin().expect("built-in suites load");
    let limits = Limits { startup: Duration::from_secs(10), request: Duration::from_secs(5), ..Limits::default() };
    let mut _guard = None;
    let quote = |s: &str| format!("'{}'", s.replace('\'', "'\\''"));
    let (target, rerun_base) = match setup.transport {
        "stdio" => {
            let mut argv = vec![refserver().display().to_string()];
            argv.extend(setup.server_args());
            let base = format!(
                "mcpcert run --config {} --stdio {} --max-pages 200 --load 8",
                quote(&profile().display().to_string()),
                quote(&argv.join(" "))
            );
            (TargetSpec::Stdio(StdioSpec { argv, env: vec![], cwd: None, clear_env: false }), base)
        }
        _ => {
            let s = start_http(&setup.server_args());
            let url = s.url.clone();
            _guard = Some(s);
            let base = format!(
                "mcpcert run --config {} --http {} --allowed-origin http://localhost --max-pages 200 --load 8",
                quote(&profile().display().to_string()),
                quote(&url)
            );
            (
                TargetSpec::Http(HttpSpec {
                    url,
                    headers: vec![],
                    secret_headers: vec![],
                    header_env: vec![],
                    client: Default::default(),
                    sse: Default::default(),
                    gate: Default::default(),
                }),
                base,
            )
        }
    };
    // The reference server allows local origins only.
    let allowed_origin = (setup.transport == "http").then(|| "http://localhost".to_string());
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let policy = Policy {
        max_pages: 200,
        allowed_origin,
        input_tool: Some(InputTool { tool: "confirm_order".into(), arguments: serde_json::json!({"item": "book"}) }),
        listen_trigger: Some(InputTool { tool: "toggle_beta".into(), arguments: serde_json::json!({}) }),
        task_tool: Some(InputTool { tool: "render_report".into(), arguments: serde_json::json!({"pages": 2}) }),
        task_input_tool: Some(InputTool { tool: "confirm_order".into(), arguments: serde_json::json!({"item": "book"}) }),
        roles: roles(),
        // As the fixture profile says: 2024-11-05 has no readOnlyHint.
        tools: ["echo", "add", "all_content", "weather"]
            .iter()
            .map(|t| (t.to_string(), mcpcert::config::ToolConfig { call: Some(true), ..Default::default() }))
            .collect(),
        // The load check runs in every set-up, so that its faults show.
        load: Some(mcpcert::config::LoadSpec { connections: 8, requests: 96, seconds: 20 }),
        ..Default::default()
    };
    let cfg = RunConfig { target, limits, revision: None, rerun_base, policy };
    let mut runner = Runner::new(cfg);
    let results = rt.block_on(async {
        match runner.prepare().await {
            Probe::Ready => {}
            Probe::Unreachable(w) => panic!("reference server unreachable ({setup:?}): {w}"),
            Probe::Unsupported(w) => panic!("reference server speaks no tested revision ({setup:?}): {w}"),
            Probe::Protected(w) => panic!("reference server turned mcpcert away ({setup:?}): {w}"),
        }
        let mut out = BTreeMap::new();
        let cases: Vec<&mcpcert::suite::Case> = catalog.cases.iter().collect();
        let (_keep, stop) = tokio::sync::watch::channel(0);
        runner
            .run_cases(&cases, setup.jobs, stop, |i, r| match r {
                mcpcert::run::Ran::Done(r) => {
                    out.insert(cases[i].id.clone(), *r);
                }
                mcpcert::run::Ran::Stopped { .. } => panic!("nothing stops this run"),
            })
            .await;
        runner.shutdown().await;
        out
    });
    (results, _guard)
}

/// Run a reproducer's `mcpcert run` line (its first line, after `rerun…: `)
/// in a folder of its own, and read the verdict it gives the case `id`.
pub fn reproduce(reproducer: &str, id: &str) -> Result<String, String> {
    let first = reproducer.lines().next().unwrap_or("");
    let line = first.split_once(": mcpcert run ").map(|(_, rest)| rest).ok_or_else(|| format!("no rerun line in {first:?}"))?;
    let dir = std::env::temp_dir().join(format!(
        "mcpcert-repro-{}-{}",
        std::process::id(),
        NEXT_DIR.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let cmd = format!("{} run {line} --quiet --json report.json", env!("CARGO_BIN_EXE_mcpcert"));
    let out = Command::new("sh")
        .arg("-c")
        .arg(&cmd)
        .current_dir(&dir)
        .envs(PROFILE_ENV)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    let text = std::fs::read_to_string(dir.join("report.json"))
        .map_err(|e| format!("{cmd}: no report ({e}): {}", String::from_utf8_lossy(&out.stderr)))?;
    let _ = std::fs::remove_dir_all(&dir);
    let report: serde_json::Value = serde_json::from_str(&text).map_err(|e| e.to_string())?;
    report["cases"]
        .as_array()
        .and_then(|cs| cs.iter().find(|c| c["id"] == id))
        .and_then(|c| c["verdict"].as_str().map(String::from))
        .ok_or_else(|| format!("{cmd}: the report has no case {id}"))
}

static NEXT_DIR: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

// Running the mcpcert binary and reading its reports.

pub fn mcpcert() -> std::process::Command {
    std::process::Command::new(env!("CARGO_BIN_EXE_mcpcert"))
}

pub fn outdir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("mcpcert-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// The three report paths inside `dir`, as mcpcert arguments.
pub fn report_args(cmd: &mut std::process::Command, dir: &std::path::Path) {
    cmd.arg("--junit").arg(dir.join("junit.xml")).arg("--json").arg(dir.join("report.json")).arg("--html").arg(dir.join("report.html"));
}

/// One case of a JSON report, by id.
pub fn case(report: &serde_json::Value, id: &str) -> serde_json::Value {
    report["cases"].as_array().unwrap().iter().find(|c| c["id"] == id).unwrap_or_else(|| panic!("no case {id} in the report")).clone()
}

pub fn report(dir: &std::path::Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join("report.json")).expect("json report written")).expect("json report parses")
}

/// The HTTP statuses a reproducer's curl lines get when run in turn, in one
/// bash (session ids are shell variables): the status of each of its last
/// `n` request lines (the case's own requests; the lines before them open
/// the sessions those use), None for a line that shows none (no `-i`).
/// Lines sent together (in the background, then `wait`) get the statuses
/// their group got, in ascending order. None when curl is not installed.
pub fn replay_statuses(repro: &str, n: usize) -> Option<Vec<Option<u16>>> {
    if Command::new("curl").arg("--version").output().is_err() {
        return None;
    }
    let lines: Vec<&str> = repro.lines().filter(|l| !l.is_empty() && !l.starts_with("rerun") && !l.starts_with('#')).collect();
    let script: Vec<String> = lines
        .iter()
        .enumerate()
        .flat_map(|(k, l)| [format!("printf '\\n@@{k}@@\\n'; printf '\\n@@{k}@@\\n' >&2"), l.to_string()])
        .chain(std::iter::once(format!("printf '\\n@@{0}@@\\n'; printf '\\n@@{0}@@\\n' >&2", lines.len())))
        .collect();
    let out = Command::new("bash").arg("-c").arg(script.join("\n")).output().unwrap();
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned());
    // Every status printed between the markers of lines `from` and `to`.
    let statuses = |from: usize, to: usize| -> Vec<u16> {
        let mut found = Vec::new();
        for text in [&stdout, &stderr] {
            let Some(seg) = text.split(&format!("@@{from}@@")).nth(1) else { continue };
            let seg = seg.split(&format!("@@{to}@@")).next().unwrap_or("");
            for (at, _) in seg.match_indices("HTTP/") {
                if let Some(code) = seg[at..].split_whitespace().nth(1).and_then(|c| c.parse::<u16>().ok()) {
                    found.push(code);
                }
            }
        }
        found
    };
    let mut got = Vec::new();
    let mut k = 0;
    while k < lines.len() {
        if lines[k].ends_with(" &") {
            let end = (k..lines.len()).find(|&j| lines[j] == "wait").unwrap_or(lines.len() - 1);
            let mut group = statuses(k, end + 1);
            group.sort_unstable();
            let size = end - k;
            got.extend((0..size).map(|i| group.get(i).copied()));
            k = end + 1;
        } else {
            got.push(statuses(k, k + 1).first().copied());
            k += 1;
        }
    }
    Some(got[got.len().saturating_sub(n)..].to_vec())
}

/// Replays an HTTP-with-SSE reproducer of `case` (2024-11-05: a stream kept
/// open, the lines POSTed to the endpoint it names) with
/// scripts/reproducers-check.py: Ok when every response the run got comes
/// back of the same kind, Err with what the script said otherwise; None
/// when python3 or curl is not installed, or the run got no answer to
/// compare.
pub fn replay_sse(case: &CaseResult, name: &str) -> Option<Result<(), String>> {
    for tool in ["python3", "curl"] {
        if Command::new(tool).arg("--version").output().is_err() {
            return None;
        }
    }
    let dir = outdir(&format!("sse-replay-{name}"));
    let path = dir.join("report.json");
    let report = serde_json::json!({ "transport": "http", "cases": [case] });
    std::fs::write(&path, report.to_string()).unwrap();
    let out = Command::new("python3")
        .arg(workspace_root().join("scripts/reproducers-check.py"))
        .arg(&path)
        .output()
        .expect("python3 runs reproducers-check.py");
    let _ = std::fs::remove_dir_all(&dir);
    let said = String::from_utf8_lossy(&out.stdout).into_owned();
    if !out.status.success() {
        return Some(Err(format!("{said}{}", String::from_utf8_lossy(&out.stderr))));
    }
    if said.contains(": 0 reproducers replayed") {
        // The run got no answer to compare (its requests errored).
        return None;
    }
    Some(if said.contains(": 1 reproducers replayed, 0 differ") { Ok(()) } else { Err(said) })
}

/// The reference server's binary inside a package folder `dir` (a hard
/// link, else a copy): a sandboxed package sees no folder but its own.
pub fn refserver_in(dir: &std::path::Path) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    let to = dir.join("mcpcert-refserver");
    let _ = std::fs::remove_file(&to);
    if std::fs::hard_link(refserver(), &to).is_err() {
        std::fs::copy(refserver(), &to).unwrap();
    }
    to
}

/// Whether this machine gives packages a sandbox; where it does not, the
/// tests that start packages say so and pass `--no-sandbox`.
pub fn sandboxed() -> bool {
    static OK: OnceLock<bool> = OnceLock::new();
    *OK.get_or_init(|| match mcpcert::packages::sandbox::find() {
        Ok(_) => true,
        Err(e) => {
            eprintln!("{e}: packages start with --no-sandbox here");
            false
        }
    })
}

/// `--no-sandbox` where this machine gives no sandbox.
pub fn sandbox_args() -> &'static [&'static str] {
    if sandboxed() { &[] } else { &["--no-sandbox"] }
}
