use clap::{Args, Parser, Subcommand};
use mcpcert::report::{self, RunReport, Summary};
use mcpcert::run::{CaseResult, Engine, Probe, RunConfig, TargetSpec, Verdict};
use mcpcert::suite::{self, Case, Catalog};
use mcpcert::target::Limits;
use mcpcert::target::http::HttpSpec;
use mcpcert::target::stdio::{StdioSpec, kill_all_groups, shell_quote, split_command};
use mcpcert::wire;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Exit codes (see README).
const EXIT_OK: u8 = 0;
const EXIT_FAILED: u8 = 1;
const EXIT_USAGE: u8 = 2;
const EXIT_UNREACHABLE: u8 = 3;

#[derive(Parser)]
#[command(
    name = "mcpcert",
    version,
    about = "Conformance harness for MCP servers (2026-07-28 and 2025-11-25), over stdio and Streamable HTTP"
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Run the suites against a live server.
    Run(RunArgs),
    /// Print every case id with its level and what it needs.
    List {
        #[arg(long, value_name = "DIR")]
        suites: Option<PathBuf>,
    },
    /// Judge tool descriptors offline: reads a tools/list result, a JSON-RPC
    /// response holding one, an array of tools, or several of these in a row
    /// (pages); prints admitted and rejected tools. Exit 1 if any is rejected.
    Lint {
        /// The file to read (`-` for stdin).
        file: PathBuf,
        /// Revision whose rules apply.
        #[arg(long, default_value = "2026-07-28")]
        revision: String,
        /// TOML target file whose [admission] secret_names to use.
        #[arg(long, value_name = "FILE")]
        config: Option<PathBuf>,
        /// Print the verdicts as JSON.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Args)]
struct RunArgs {
    /// Spawn this command and speak newline-delimited JSON-RPC on its stdio.
    #[arg(long, value_name = "'CMD ARG…'", conflicts_with = "http")]
    stdio: Option<String>,
    /// Streamable HTTP endpoint URL.
    #[arg(long, value_name = "URL")]
    http: Option<String>,
    /// TOML target file (command or URL, env, headers from env vars, timeouts).
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Protocol revision to test: auto, 2026-07-28 or 2025-11-25.
    #[arg(long, default_value = "auto")]
    revision: String,
    /// Suite folder (default: the suites built into the binary).
    #[arg(long, value_name = "DIR")]
    suites: Option<PathBuf>,
    #[arg(long, value_name = "FILE", default_value = "reports/junit.xml")]
    junit: PathBuf,
    #[arg(long, value_name = "FILE", default_value = "reports/report.json")]
    json: PathBuf,
    #[arg(long, value_name = "FILE", default_value = "reports/report.html")]
    html: PathBuf,
    /// SHOULD violations fail the run.
    #[arg(long)]
    strict: bool,
    /// Time allowed for the server's first answer, in milliseconds.
    #[arg(long, value_name = "MS")]
    startup_timeout_ms: Option<u64>,
    /// Time allowed for each later answer, in milliseconds.
    #[arg(long, value_name = "MS")]
    request_timeout_ms: Option<u64>,
    /// Run only cases whose id contains FILTER.
    filter: Option<String>,
    /// FILTER must equal the whole case id.
    #[arg(long)]
    exact: bool,
    /// Skip cases whose id contains this text (repeatable).
    #[arg(long, value_name = "FILTER")]
    skip: Vec<String>,
    /// List the cases that would run, then exit.
    #[arg(long)]
    list: bool,
    /// A paginated list that has not ended after this many pages fails
    /// (default 10000; config [pagination] max_pages).
    #[arg(long, value_name = "N")]
    max_pages: Option<usize>,
    /// HTTP: an Origin the server allows; requests from another must get 403
    /// (config [target] allowed_origin). Without it that check is n/a.
    #[arg(long, value_name = "ORIGIN")]
    allowed_origin: Option<String>,
    /// Show Mcp-Param-* header values as [redacted] in reports and reproducers.
    #[arg(long)]
    redact_params: bool,
}

fn main() -> ExitCode {
    // glibc gives each thread that allocates an arena of its own and seldom
    // returns their free memory; with the runtime's threads that made the
    // peak RSS of a 10,000-tool run about half again its heap. Two arenas
    // keep it close to the heap at no measurable cost in speed.
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, 1);
    }
    let cli = Cli::parse();
    match cli.cmd {
        Cmd::List { suites } => match load_catalog(suites.as_ref()) {
            Ok(cat) => {
                for c in &cat.cases {
                    println!("{}  [{}]  needs: {}", c.id, c.level.as_str(), needs(c));
                }
                println!("\n{} cases; suites {}", cat.cases.len(), cat.digest);
                ExitCode::from(EXIT_OK)
            }
            Err(e) => {
                eprintln!("error: {e}");
                ExitCode::from(EXIT_USAGE)
            }
        },
        Cmd::Run(args) => ExitCode::from(run(args)),
        Cmd::Lint { file, revision, config, json } => ExitCode::from(lint(&file, &revision, config.as_ref(), json)),
    }
}

fn admission_policy(cfg: Option<&mcpcert::config::ConfigFile>) -> mcpcert::checks::admission::Policy {
    let mut p = mcpcert::checks::admission::Policy::default();
    if let Some(names) = cfg.and_then(|c| c.admission.secret_names.clone()) {
        p.secret_names = names;
    }
    p
}

fn lint(file: &PathBuf, revision: &str, config: Option<&PathBuf>, as_json: bool) -> u8 {
    use mcpcert::checks::admission;
    if !wire::REVISIONS.contains(&revision) {
        return usage(format!("--revision must be 2026-07-28 or 2025-11-25 (got `{revision}`)"));
    }
    let cfg = match config.map(|p| mcpcert::config::load(p)) {
        Some(Ok(c)) => Some(c),
        Some(Err(e)) => return usage(e),
        None => None,
    };
    let text = if file.as_os_str() == "-" {
        let mut s = String::new();
        if let Err(e) = std::io::Read::read_to_string(&mut std::io::stdin(), &mut s) {
            return usage(format!("stdin: {e}"));
        }
        s
    } else {
        match std::fs::read_to_string(file) {
            Ok(s) => s,
            Err(e) => return usage(format!("{}: {e}", file.display())),
        }
    };
    let tools = match admission::tools_from_documents(&text) {
        Ok(t) => t,
        Err(e) => return usage(format!("{}: {e}", file.display())),
    };
    let verdicts = admission::admit_all(&tools, revision, &admission_policy(cfg.as_ref()));
    let rejected = verdicts.iter().filter(|v| !v.admitted).count();
    if as_json {
        println!("{}", serde_json::to_string_pretty(&serde_json::json!({"revision": revision, "tools": verdicts})).unwrap_or_default());
    } else {
        for v in &verdicts {
            println!("{} {}", if v.admitted { "admitted" } else { "REJECTED" }, v.name);
            for f in &v.findings {
                println!("    [{}] {}: {}", f.weight.as_str(), f.rule.as_str(), f.message);
            }
        }
        println!("\n{} tools: {} admitted, {rejected} rejected ({revision} rules)", verdicts.len(), verdicts.len() - rejected);
    }
    if rejected > 0 { EXIT_FAILED } else { EXIT_OK }
}

fn needs(c: &Case) -> String {
    let mut parts = Vec::new();
    parts.push(format!("revision {}", c.revision));
    if !c.applies.transports.is_empty() {
        parts.push(format!("transport {}", c.applies.transports.join("|")));
    }
    for cap in &c.applies.capabilities {
        parts.push(format!("capabilities.{cap}"));
    }
    if let Some(e) = &c.applies.era {
        parts.push(format!("era {e}"));
    }
    // What the target config must name for the case to apply.
    for st in &c.steps {
        let arg = |k: &str| st.with.as_ref().and_then(|w| w.get(k)).and_then(|v| v.as_str()).unwrap_or("").to_string();
        match st.action.as_deref() {
            Some("input_required_probe") => parts.push("config [input_required]".into()),
            Some("subscription_probe") if arg("check") == "list-changed" => parts.push("config [subscriptions]".into()),
            Some("roles_probe") => parts.push("config [roles.NAME]".into()),
            Some("header_probe") if arg("header") == "origin" => parts.push("--allowed-origin".into()),
            Some("tool_results") => parts.push("a callable tool (readOnlyHint or [tools.NAME] call = true)".into()),
            _ => {}
        }
    }
    parts.join(", ")
}

fn load_catalog(dir: Option<&PathBuf>) -> Result<Catalog, String> {
    match dir {
        Some(d) => suite::load_dir(d).map_err(|e| e.to_string()),
        None => suite::load_builtin().map_err(|e| e.to_string()),
    }
}

fn usage(msg: impl std::fmt::Display) -> u8 {
    eprintln!("error: {msg}");
    EXIT_USAGE
}

fn run(args: RunArgs) -> u8 {
    let catalog = match load_catalog(args.suites.as_ref()) {
        Ok(c) => c,
        Err(e) => return usage(e),
    };
    let revision = match args.revision.as_str() {
        "auto" => None,
        r if wire::REVISIONS.contains(&r) => Some(r.to_string()),
        other => return usage(format!("--revision must be auto, 2026-07-28 or 2025-11-25 (got `{other}`)")),
    };
    let cfg_file = match &args.config {
        Some(p) => match mcpcert::config::load(p) {
            Ok(c) => Some((p.clone(), c)),
            Err(e) => return usage(e),
        },
        None => None,
    };
    let mut limits = Limits::default();
    if let Some((_, c)) = &cfg_file {
        if let Some(ms) = c.timeouts.startup_ms {
            limits.startup = Duration::from_millis(ms);
        }
        if let Some(ms) = c.timeouts.request_ms {
            limits.request = Duration::from_millis(ms);
        }
    }
    if let Some(ms) = args.startup_timeout_ms {
        limits.startup = Duration::from_millis(ms);
    }
    if let Some(ms) = args.request_timeout_ms {
        limits.request = Duration::from_millis(ms);
    }
    let (cmd_line, url) = {
        let from_cfg = cfg_file.as_ref().map(|(_, c)| (c.target.command.clone(), c.target.url.clone())).unwrap_or((None, None));
        (args.stdio.clone().or(from_cfg.0), args.http.clone().or(from_cfg.1))
    };
    let target = match (cmd_line, url) {
        (Some(_), Some(_)) => return usage("give either a stdio command or an HTTP URL, not both"),
        (Some(cmd), None) => {
            let argv = match split_command(&cmd) {
                Ok(a) => a,
                Err(e) => return usage(format!("--stdio: {e}")),
            };
            let (env, cwd) = cfg_file
                .as_ref()
                .map(|(_, c)| (c.target.env.iter().map(|(k, v)| (k.clone(), v.clone())).collect(), c.target.cwd.clone()))
                .unwrap_or_default();
            TargetSpec::Stdio(StdioSpec { argv, env, cwd })
        }
        (None, Some(u)) => {
            let headers = match &cfg_file {
                Some((p, c)) => match mcpcert::config::resolve_headers(c, p) {
                    Ok(h) => h,
                    Err(e) => return usage(e),
                },
                None => Vec::new(),
            };
            let secret_headers = headers.iter().map(|(k, _)| k.to_ascii_lowercase()).collect();
            if let Err(e) = reqwest_url_check(&u) {
                return usage(e);
            }
            TargetSpec::Http(HttpSpec { url: u, headers, secret_headers })
        }
        (None, None) => return usage("say what to test: --stdio 'CMD ARG…', --http URL, or --config FILE"),
    };

    let rerun_base = rerun_command(&args, &target);
    let cases: Vec<Case> = catalog.cases.iter().filter(|c| revision.as_deref().is_none_or(|r| c.revision == r)).cloned().collect();
    let lt_args = libtest_mimic::Arguments {
        filter: args.filter.clone(),
        exact: args.exact,
        skip: args.skip.clone(),
        list: args.list,
        test_threads: Some(1),
        ..Default::default()
    };
    if args.list {
        let trials = cases.iter().map(|c| libtest_mimic::Trial::test(c.id.clone(), || Ok(())).with_kind(c.level.as_str())).collect();
        let _ = libtest_mimic::run(&lt_args, trials);
        return EXIT_OK;
    }
    // Only probe the revisions whose cases survive the filters.
    let selected: Vec<Case> =
        cases.iter().filter(|c| !lt_args.is_filtered_out(&libtest_mimic::Trial::test(c.id.clone(), || Ok(())))).cloned().collect();
    let mut effective_rev = revision.clone();
    if effective_rev.is_none() {
        let revs: std::collections::BTreeSet<&str> = selected.iter().map(|c| c.revision.as_str()).collect();
        if revs.len() == 1 {
            effective_rev = revs.into_iter().next().map(String::from);
        }
    }

    let rt = match tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build() {
        Ok(rt) => Arc::new(rt),
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return EXIT_FAILED;
        }
    };
    rt.spawn(async {
        if tokio::signal::ctrl_c().await.is_ok() {
            kill_all_groups();
            eprintln!("\ninterrupted: server processes killed");
            std::process::exit(130);
        }
    });

    let started_unix = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_millis()).unwrap_or(0);
    let mut contract = mcpcert::run::Contract { admission: admission_policy(cfg_file.as_ref().map(|(_, c)| c)), ..Default::default() };
    if let Some((_, c)) = &cfg_file {
        contract.tools = c.tools.clone();
        if let Some(n) = c.pagination.max_pages {
            contract.max_pages = n;
        }
        if let Some(n) = c.calls.max_tools {
            contract.max_tools_called = n;
        }
        if let Some(n) = c.completion.max_probes {
            contract.completion_probes = n;
        }
        if let Some((p, _)) = &cfg_file {
            match mcpcert::config::resolve_roles(c, p) {
                Ok(r) => contract.roles = r,
                Err(e) => return usage(e),
            }
        }
        if let Some(sb) = &c.subscriptions {
            contract.listen_trigger = Some(mcpcert::run::mrtr::InputTool {
                tool: sb.trigger_tool.clone(),
                arguments: sb.trigger_arguments.clone().unwrap_or(serde_json::json!({})),
            });
        }
        if let Some(ir) = &c.input_required {
            contract.input_tool = Some(mcpcert::run::mrtr::InputTool {
                tool: ir.tool.clone(),
                arguments: ir.arguments.clone().unwrap_or(serde_json::json!({})),
            });
        }
    }
    if let Some(n) = args.max_pages {
        contract.max_pages = n;
    }
    contract.allowed_origin = args.allowed_origin.clone().or_else(|| cfg_file.as_ref().and_then(|(_, c)| c.target.allowed_origin.clone()));
    contract.redact_params = args.redact_params;
    let run_cfg = RunConfig { target: target.clone(), limits, revision: effective_rev, strict: args.strict, rerun_base, contract };
    let engine = Arc::new(Mutex::new(Engine::new(run_cfg)));
    let probe = rt.block_on(async { engine.lock().unwrap_or_else(|p| p.into_inner()).prepare().await });
    // When the target cannot be reached every case is an error with the
    // reason; it still goes through the same trials, console and reports.
    let target_problem = match probe {
        Probe::Unreachable(why) => {
            eprintln!("error: the target could not be started or reached: {why}");
            Some(why)
        }
        Probe::Ready => {
            for info in engine.lock().unwrap_or_else(|p| p.into_inner()).revision_infos() {
                eprintln!("revision {}: {} ({})", info.revision, if info.supported { "served" } else { "not served" }, info.reason);
            }
            None
        }
    };
    let results: Arc<Mutex<Vec<CaseResult>>> = Arc::new(Mutex::new(Vec::new()));
    let strict = args.strict;
    let transport = target.transport();
    let trials: Vec<libtest_mimic::Trial> = cases
        .iter()
        .map(|c| {
            let case = c.clone();
            let eng = engine.clone();
            let rt = rt.clone();
            let results = results.clone();
            let problem = target_problem.clone();
            libtest_mimic::Trial::ignorable_test(c.id.clone(), move || {
                let res = match &problem {
                    Some(why) => CaseResult::new(
                        &case,
                        transport,
                        Verdict::Error,
                        format!("not run: the target could not be started or reached: {why}"),
                    ),
                    None => {
                        let mut e = eng.lock().unwrap_or_else(|p| p.into_inner());
                        rt.block_on(e.run_case(&case))
                    }
                };
                let outcome = match res.verdict {
                    Verdict::Pass => Ok(libtest_mimic::Completion::Completed),
                    Verdict::Warn if !strict => Ok(libtest_mimic::Completion::Completed),
                    Verdict::NotApplicable => Ok(libtest_mimic::Completion::ignored_with(format!("n/a: {}", res.message))),
                    _ => Err(libtest_mimic::Failed::from(report::failure_text(&res))),
                };
                results.lock().unwrap_or_else(|p| p.into_inner()).push(res);
                outcome
            })
            .with_kind(c.level.as_str())
        })
        .collect();
    let _ = libtest_mimic::run(&lt_args, trials);
    let (revisions, run_started) = {
        let mut e = engine.lock().unwrap_or_else(|p| p.into_inner());
        rt.block_on(e.shutdown());
        (e.revision_infos(), e.started)
    };

    let results = results.lock().unwrap_or_else(|p| p.into_inner()).clone();
    let warns: Vec<&CaseResult> = results.iter().filter(|r| r.verdict == Verdict::Warn).collect();
    if !warns.is_empty() && !args.strict {
        println!("warnings (SHOULD-level rules not met; --strict makes them fail):");
        for w in &warns {
            println!("    {}: {}", w.id, w.message.lines().next().unwrap_or(""));
        }
        println!();
    }
    let summary = Summary::of(&results);
    let rep = RunReport {
        format: "mcpcert-run-report",
        format_version: report::JSON_FORMAT_VERSION,
        mcpcert_version: env!("CARGO_PKG_VERSION"),
        suite_digest: catalog.digest.clone(),
        started_at_unix_ms: started_unix,
        duration_ms: run_started.elapsed().as_millis() as u64,
        peak_rss_kib: report::peak_rss_kib(),
        transport: target.transport().into(),
        target: target.describe(),
        revision_requested: args.revision.clone(),
        revisions,
        strict: args.strict,
        target_problem: target_problem.clone(),
        summary: summary.clone(),
        cases: results.clone(),
    };
    let mut write_err = false;
    for (what, res) in [
        ("JUnit", report::write_junit(&rep, &args.junit)),
        ("JSON", report::write_json(&rep, &args.json)),
        ("HTML", report::write_html(&rep, &args.html)),
    ] {
        if let Err(e) = res {
            eprintln!("error: could not write the {what} report: {e}");
            write_err = true;
        }
    }
    println!(
        "mcpcert: {} pass, {} fail, {} warn, {} n/a, {} error; reports: {}, {}, {}",
        summary.pass,
        summary.fail,
        summary.warn,
        summary.na,
        summary.error,
        args.junit.display(),
        args.json.display(),
        args.html.display()
    );
    if target_problem.is_some() {
        return EXIT_UNREACHABLE;
    }
    if write_err || results.iter().any(|r| r.counts_as_failure(args.strict)) {
        return EXIT_FAILED;
    }
    EXIT_OK
}

fn reqwest_url_check(u: &str) -> Result<(), String> {
    if u.starts_with("http://") || u.starts_with("https://") {
        Ok(())
    } else {
        Err(format!("--http needs an http:// or https:// URL (got `{u}`)"))
    }
}

fn rerun_command(args: &RunArgs, target: &TargetSpec) -> String {
    let mut s = String::from("mcpcert run");
    if let Some(c) = &args.config {
        s.push_str(&format!(" --config {}", shell_quote(&c.display().to_string())));
    }
    // The target, unless the config file names it.
    if args.config.is_none() || args.stdio.is_some() || args.http.is_some() {
        match target {
            TargetSpec::Stdio(sp) => {
                s.push_str(&format!(" --stdio {}", shell_quote(&sp.argv.iter().map(|a| shell_quote(a)).collect::<Vec<_>>().join(" "))))
            }
            TargetSpec::Http(h) => s.push_str(&format!(" --http {}", shell_quote(&mcpcert::run::redact_url(&h.url)))),
        }
    }
    if let Some(d) = &args.suites {
        s.push_str(&format!(" --suites {}", shell_quote(&d.display().to_string())));
    }
    if let Some(o) = &args.allowed_origin {
        s.push_str(&format!(" --allowed-origin {}", shell_quote(o)));
    }
    if let Some(n) = args.max_pages {
        s.push_str(&format!(" --max-pages {n}"));
    }
    if args.redact_params {
        s.push_str(" --redact-params");
    }
    s
}
