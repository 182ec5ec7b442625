use clap::{Args, Parser, Subcommand};
use mcpcert::checks::{self, Scope};
use mcpcert::config::{self, ConfigFile, Policy};
use mcpcert::record::{CaseResult, Masker, Verdict};
use mcpcert::report::console::{self, Console};
use mcpcert::report::{self, RunReport, Summary};
use mcpcert::run::plan::Selection;
use mcpcert::run::{RunConfig, Runner};
use mcpcert::session::Probe;
use mcpcert::suite::{self, Case, Catalog};
use mcpcert::transport::{HttpSpec, Limits, StdioSpec, TargetSpec, kill_all_groups, redact_url, shell_quote, split_command};
use mcpcert::wire::Revision;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
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
// Parsed once; boxing the run arguments would buy nothing.
#[allow(clippy::large_enum_variant)]
enum Cmd {
    /// Run the suites against a live server.
    Run(RunArgs),
    /// Print every case id with its level and what it needs.
    List {
        #[arg(long, value_name = "DIR")]
        suites: Option<PathBuf>,
        /// Print the check types suite files can name (`action`) instead.
        #[arg(long)]
        checks: bool,
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
    /// How long a tool call that keeps reporting progress may take in all,
    /// in milliseconds (each progress notification restarts its timeout).
    #[arg(long, value_name = "MS")]
    request_ceiling_ms: Option<u64>,
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
    /// Known failures (TOML: `[expected]` maps a case id, optionally
    /// `@stdio`/`@http`, to the reason). They do not fail the run; a listed
    /// case that passes does ("stale baseline entry").
    #[arg(long, value_name = "FILE")]
    expected_failures: Option<PathBuf>,
}

fn main() -> ExitCode {
    // glibc gives each thread that allocates an arena of its own and seldom
    // returns their free memory; with the runtime's threads that made the
    // peak RSS of a 10,000-tool run about half again its heap. Two arenas
    // keep it close to the heap at no measurable cost in speed.
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only sets an allocator parameter; it is called before
    // any other thread exists, as glibc asks.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, 1);
    }
    let cli = Cli::parse();
    match cli.cmd {
        Cmd::List { checks: true, .. } => {
            let mut console = Console::new();
            for e in checks::REGISTRY {
                let scope = if e.scope == Scope::Run { ", judges the whole run" } else { "" };
                let revs: Vec<&str> = e.revisions.iter().map(|r| r.as_str()).collect();
                console.line(format!("{}  [{}{scope}]\n    {}", e.name, revs.join(", "), e.about));
            }
            ExitCode::from(EXIT_OK)
        }
        Cmd::List { suites, .. } => match load_catalog(suites.as_ref()) {
            Ok(cat) => {
                let mut console = Console::new();
                for c in &cat.cases {
                    console.line(format!("{}  [{}]  needs: {}\n    basis: {}", c.id, c.level.as_str(), needs(c), c.basis.render()));
                }
                console.line(format!("\n{} cases; suites {}", cat.cases.len(), cat.digest));
                ExitCode::from(EXIT_OK)
            }
            Err(e) => {
                console::err_line(format!("error: {e}"));
                ExitCode::from(EXIT_USAGE)
            }
        },
        Cmd::Run(args) => ExitCode::from(run(args)),
        Cmd::Lint { file, revision, config, json } => ExitCode::from(lint(&file, &revision, config.as_ref(), json)),
    }
}

fn lint(file: &Path, revision: &str, config: Option<&PathBuf>, as_json: bool) -> u8 {
    use mcpcert::checks::judge::admission;
    let Some(rev) = Revision::parse(revision) else {
        return usage(format!("--revision must be 2026-07-28 or 2025-11-25 (got `{revision}`)"));
    };
    let cfg = match config.map(|p| config::load(p)) {
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
    let mut policy = admission::Policy::default();
    if let Some(names) = cfg.as_ref().and_then(|c| c.admission.secret_names.clone()) {
        policy.secret_names = names;
    }
    let verdicts = admission::admit_all(&tools, rev, &policy);
    let rejected = verdicts.iter().filter(|v| !v.admitted).count();
    let mut console = Console::new();
    if as_json {
        console.line(serde_json::to_string_pretty(&serde_json::json!({"revision": revision, "tools": verdicts})).unwrap_or_default());
    } else {
        for v in &verdicts {
            console.line(format!("{} {}", if v.admitted { "admitted" } else { "REJECTED" }, v.name));
            for f in &v.findings {
                console.line(format!("    [{}] {}: {}", f.weight.as_str(), f.rule.as_str(), f.message));
            }
        }
        console.line(format!("\n{} tools: {} admitted, {rejected} rejected ({revision} rules)", verdicts.len(), verdicts.len() - rejected));
    }
    if rejected > 0 { EXIT_FAILED } else { EXIT_OK }
}

/// What a case needs to apply: its revision, transports, capabilities and
/// era, and what its checks need (from the registry).
fn needs(c: &Case) -> String {
    let mut parts = vec![format!("revision {}", c.revision)];
    if !c.applies.transports.is_empty() {
        parts.push(format!("transport {}", c.applies.transports.iter().map(|t| t.as_str()).collect::<Vec<_>>().join("|")));
    }
    for cap in &c.applies.capabilities {
        parts.push(format!("capabilities.{cap}"));
    }
    match c.applies.era {
        suite::Era::ModernOnly => parts.push("era modern-only".into()),
        suite::Era::Session => parts.push("era session".into()),
        suite::Era::Any => {}
    }
    for n in c.checks().flat_map(|k| k.needs()) {
        let d = n.describe();
        if !parts.contains(&d) {
            parts.push(d);
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
    console::err_line(format!("error: {msg}"));
    EXIT_USAGE
}

/// The target the flags and the config name.
fn target_from(args: &RunArgs, cfg_file: Option<&(PathBuf, ConfigFile)>) -> Result<TargetSpec, String> {
    let from_cfg = cfg_file.map(|(_, c)| (c.target.command.clone(), c.target.url.clone())).unwrap_or((None, None));
    match (args.stdio.clone().or(from_cfg.0), args.http.clone().or(from_cfg.1)) {
        (Some(_), Some(_)) => Err("give either a stdio command or an HTTP URL, not both".into()),
        (Some(cmd), None) => {
            let argv = split_command(&cmd).map_err(|e| format!("--stdio: {e}"))?;
            // A relative `cwd` is relative to the config file's folder.
            let (env, cwd) = cfg_file
                .map(|(p, c)| {
                    let cwd = c.target.cwd.as_ref().map(|d| p.parent().unwrap_or(Path::new(".")).join(d).display().to_string());
                    (c.target.env.iter().map(|(k, v)| (k.clone(), v.clone())).collect(), cwd)
                })
                .unwrap_or_default();
            Ok(TargetSpec::Stdio(StdioSpec { argv, env, cwd }))
        }
        (None, Some(u)) => {
            let headers = match cfg_file {
                Some((p, c)) => config::resolve_headers(c, p).map_err(|e| e.to_string())?,
                None => Vec::new(),
            };
            let secret_headers = headers.iter().map(|(k, _)| k.to_ascii_lowercase()).collect();
            if !(u.starts_with("http://") || u.starts_with("https://")) {
                return Err(format!("--http needs an http:// or https:// URL (got `{u}`)"));
            }
            Ok(TargetSpec::Http(HttpSpec { url: u, headers, secret_headers }))
        }
        (None, None) => Err("say what to test: --stdio 'CMD ARG…', --http URL, or --config FILE".into()),
    }
}

/// Timeouts from the config, then the flags.
fn limits_from(args: &RunArgs, cfg: Option<&ConfigFile>) -> Limits {
    let mut limits = Limits::default();
    let ms = Duration::from_millis;
    if let Some(c) = cfg {
        limits.startup = c.timeouts.startup_ms.map(ms).unwrap_or(limits.startup);
        limits.request = c.timeouts.request_ms.map(ms).unwrap_or(limits.request);
        limits.ceiling = c.timeouts.ceiling_ms.map(ms).unwrap_or(limits.ceiling);
    }
    limits.startup = args.startup_timeout_ms.map(ms).unwrap_or(limits.startup);
    limits.request = args.request_timeout_ms.map(ms).unwrap_or(limits.request);
    limits.ceiling = args.request_ceiling_ms.map(ms).unwrap_or(limits.ceiling);
    limits
}

/// What to mask everywhere: the values of this process's environment
/// variables (and the configured `[target.env]` and role environments)
/// whose names look secret, and every configured header value.
fn masker_from(cfg: Option<&ConfigFile>, target: &TargetSpec, policy: &Policy) -> Masker {
    let names: Vec<String> = cfg
        .and_then(|c| c.redact.env_names.clone())
        .unwrap_or_else(|| mcpcert::record::SECRET_ENV_NAMES.iter().map(|s| s.to_string()).collect());
    let mut env: Vec<(String, String)> = std::env::vars().collect();
    let mut values: Vec<String> = Vec::new();
    match target {
        TargetSpec::Stdio(s) => env.extend(s.env.iter().cloned()),
        TargetSpec::Http(h) => values.extend(h.headers.iter().map(|(_, v)| v.clone())),
    }
    for r in &policy.roles {
        env.extend(r.env.iter().cloned());
        values.extend(r.headers.iter().map(|(_, v)| v.clone()));
    }
    Masker::new(&names, env, &values)
}

/// The operator's policy: the config file's, then the flags.
fn policy_from(args: &RunArgs, cfg_file: Option<&(PathBuf, ConfigFile)>) -> Result<Policy, config::ConfigError> {
    let mut policy = match cfg_file {
        Some((p, c)) => Policy::from_file(c, p)?,
        None => Policy::default(),
    };
    if let Some(n) = args.max_pages {
        policy.max_pages = n;
    }
    if args.allowed_origin.is_some() {
        policy.allowed_origin = args.allowed_origin.clone();
    }
    policy.redact_params = args.redact_params;
    Ok(policy)
}

/// The signal that interrupted the run (0: none yet).
type Interrupt = tokio::sync::watch::Receiver<i32>;

/// Wait for SIGINT, SIGTERM or SIGHUP: kill the server processes at once
/// and tell the run, which stops, marks what is left `error: interrupted`
/// and writes its reports. A second signal ends the process at once.
fn watch_signals(rt: &tokio::runtime::Runtime) -> Interrupt {
    let (tx, rx) = tokio::sync::watch::channel(0);
    rt.spawn(async move {
        let mut first = true;
        loop {
            let sig = next_signal().await;
            kill_all_groups();
            if !first {
                std::process::exit(128 + sig);
            }
            first = false;
            console::err_line(format!("\ninterrupted ({}): server processes killed; writing the reports", signal_name(sig)));
            let _ = tx.send(sig);
        }
    });
    rx
}

#[cfg(unix)]
async fn next_signal() -> i32 {
    use tokio::signal::unix::{SignalKind, signal};
    let (Ok(mut term), Ok(mut hup)) = (signal(SignalKind::terminate()), signal(SignalKind::hangup())) else {
        return if tokio::signal::ctrl_c().await.is_ok() { 2 } else { std::future::pending().await };
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => 2,
        _ = term.recv() => 15,
        _ = hup.recv() => 1,
    }
}

#[cfg(not(unix))]
async fn next_signal() -> i32 {
    match tokio::signal::ctrl_c().await {
        Ok(()) => 2,
        Err(_) => std::future::pending().await,
    }
}

fn signal_name(sig: i32) -> &'static str {
    match sig {
        1 => "SIGHUP",
        15 => "SIGTERM",
        _ => "SIGINT",
    }
}

fn run(args: RunArgs) -> u8 {
    let catalog = match load_catalog(args.suites.as_ref()) {
        Ok(c) => c,
        Err(e) => return usage(e),
    };
    let revision = match args.revision.as_str() {
        "auto" => None,
        r => match Revision::parse(r) {
            Some(r) => Some(r),
            None => return usage(format!("--revision must be auto, 2026-07-28 or 2025-11-25 (got `{r}`)")),
        },
    };
    let selection = Selection { revision, filter: args.filter.clone(), exact: args.exact, skip: args.skip.clone() };
    let cases = selection.apply(&catalog.cases);
    let mut console = Console::new();
    if args.list {
        for c in &cases {
            console.line(format!("{}  [{}]", c.id, c.level));
        }
        return EXIT_OK;
    }
    if cases.is_empty() {
        return usage(format!("no case matches {} (`mcpcert list` prints every case id)", selection.describe()));
    }
    let baseline = match &args.expected_failures {
        Some(p) => {
            let known: Vec<&str> = catalog.cases.iter().map(|c| c.id.as_str()).collect();
            match config::baseline::load(p, &known) {
                Ok(b) => Some(b),
                Err(e) => return usage(format!("--expected-failures {}: {}", e.file, e.problem)),
            }
        }
        None => None,
    };
    let cfg_file = match &args.config {
        Some(p) => match config::load(p) {
            Ok(c) => Some((p.clone(), c)),
            Err(e) => return usage(e),
        },
        None => None,
    };
    let limits = limits_from(&args, cfg_file.as_ref().map(|(_, c)| c));
    let target = match target_from(&args, cfg_file.as_ref()) {
        Ok(t) => t,
        Err(e) => return usage(e),
    };
    let policy = match policy_from(&args, cfg_file.as_ref()) {
        Ok(p) => p,
        Err(e) => return usage(e),
    };
    let masker = masker_from(cfg_file.as_ref().map(|(_, c)| c), &target, &policy);
    let rerun_base = rerun_command(&args, &target);
    // Only probe the revisions whose cases were selected.
    let revs: std::collections::BTreeSet<Revision> = cases.iter().map(|c| c.revision).collect();
    let effective_rev = if revs.len() == 1 { revs.into_iter().next() } else { revision };

    let rt = match tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            console::err_line(format!("error: cannot start the async runtime: {e}"));
            return EXIT_FAILED;
        }
    };
    let interrupt = watch_signals(&rt);

    let started_unix = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_millis()).unwrap_or(0);
    let mut runner = Runner::new(RunConfig { target: target.clone(), limits, revision: effective_rev, rerun_base, policy });
    let probe = rt.block_on(async {
        let mut irq = interrupt.clone();
        tokio::select! {
            p = runner.prepare() => Some(p),
            _ = irq.wait_for(|s| *s != 0) => None,
        }
    });
    // When the target cannot be reached every case is an error with the
    // reason; it still goes through the same console and reports.
    let target_problem = match &probe {
        Some(Probe::Unreachable(why)) => {
            let why = masker.text(why);
            console::err_line(format!("error: the target could not be started or reached: {why}"));
            Some(why)
        }
        Some(Probe::Ready) => {
            for mut info in runner.revision_infos() {
                masker.revision(&mut info);
                console::err_line(format!(
                    "revision {}: {} ({})",
                    info.revision,
                    if info.supported { "served" } else { "not served" },
                    info.reason
                ));
            }
            None
        }
        None => None,
    };
    let strict = args.strict;
    console.line(format!("\nrunning {} case{}", cases.len(), if cases.len() == 1 { "" } else { "s" }));
    let mut results: Vec<CaseResult> = Vec::new();
    for case in &cases {
        let sig = *interrupt.borrow();
        let res = if sig != 0 {
            runner.result_for(case, Verdict::Error, format!("not run: the run was interrupted ({})", signal_name(sig)))
        } else if let Some(why) = &target_problem {
            runner.result_for(case, Verdict::Error, format!("not run: the target could not be started or reached: {why}"))
        } else {
            rt.block_on(async {
                let mut irq = interrupt.clone();
                tokio::select! {
                    r = runner.run_case(case) => r,
                    sig = irq.wait_for(|s| *s != 0) => {
                        let sig = sig.map(|s| *s).unwrap_or(2);
                        runner.result_for(case, Verdict::Error, format!("interrupted ({}) while it ran", signal_name(sig)))
                    }
                }
            })
        };
        let mut res = res;
        masker.case(&mut res);
        if let Some(b) = &baseline {
            b.mark(&mut res, target.transport());
        }
        console.case(&res, strict);
        results.push(res);
    }
    rt.block_on(runner.shutdown());
    let (mut revisions, run_started) = (runner.revision_infos(), runner.started());
    revisions.iter_mut().for_each(|r| masker.revision(r));
    let run_warnings: Vec<String> = runner.config_warnings().iter().map(|w| masker.text(w)).collect();

    console.failures(&results, strict);
    console.warnings(&results, strict);
    let baseline_summary = baseline.as_ref().map(|b| b.summary(&results));
    if let Some(b) = &baseline_summary {
        console.baseline(&results, b);
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
        transport: target.transport(),
        target: target.describe(),
        revision_requested: args.revision.clone(),
        revisions,
        strict: args.strict,
        target_problem: target_problem.clone(),
        warnings: run_warnings.clone(),
        baseline: baseline_summary.clone(),
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
            console::err_line(format!("error: could not write the {what} report: {e}"));
            write_err = true;
        }
    }
    for w in &run_warnings {
        console.line(format!("\nwarning: {w}"));
    }
    let failed = write_err || results.iter().any(|r| r.counts_as_failure(strict));
    let baseline_note = match &baseline_summary {
        Some(b) => format!(
            "; baseline: {} expected failure{}, {} stale entr{}",
            b.expected_failures,
            if b.expected_failures == 1 { "" } else { "s" },
            b.stale.len(),
            if b.stale.len() == 1 { "y" } else { "ies" }
        ),
        None => String::new(),
    };
    let mut why: Vec<String> = Vec::new();
    let unexpected = results.iter().filter(|r| r.counts_as_failure(strict) && !r.stale_baseline()).count();
    if unexpected > 0 {
        let strict_warns = results.iter().filter(|r| strict && r.verdict == Verdict::Warn && r.counts_as_failure(strict)).count();
        let mut w = format!(
            "{unexpected} {}failure{}",
            if baseline.is_some() { "unexpected " } else { "" },
            if unexpected == 1 { "" } else { "s" }
        );
        if strict_warns > 0 {
            w.push_str(&format!(", {strict_warns} of them warn under --strict"));
        }
        why.push(w);
    }
    if let Some(b) = baseline_summary.as_ref().filter(|b| !b.stale.is_empty()) {
        why.push(format!("{} stale baseline entr{}", b.stale.len(), if b.stale.len() == 1 { "y" } else { "ies" }));
    }
    if target_problem.is_some() {
        why.push("the target could not be reached".into());
    }
    if write_err {
        why.push("a report could not be written".into());
    }
    let verdict_word = if why.is_empty() { "ok".to_string() } else { format!("FAILED ({})", why.join("; ")) };
    console.line(format!(
        "\ntest result: {verdict_word}. {} pass, {} fail, {} warn, {} n/a, {} error{baseline_note}; finished in {:.2}s",
        summary.pass,
        summary.fail,
        summary.warn,
        summary.na,
        summary.error,
        run_started.elapsed().as_secs_f64()
    ));
    console.line(format!(
        "mcpcert: {} pass, {} fail, {} warn, {} n/a, {} error; reports: {}, {}, {}",
        summary.pass,
        summary.fail,
        summary.warn,
        summary.na,
        summary.error,
        args.junit.display(),
        args.json.display(),
        args.html.display()
    ));
    let sig = *interrupt.borrow();
    if sig != 0 {
        return (128 + sig) as u8;
    }
    if target_problem.is_some() {
        return EXIT_UNREACHABLE;
    }
    if failed {
        return EXIT_FAILED;
    }
    EXIT_OK
}

fn rerun_command(args: &RunArgs, target: &TargetSpec) -> String {
    let mut s = String::from("mcpcert run");
    if let Some(c) = &args.config {
        s.push_str(&format!(" --config {}", shell_quote(&c.display().to_string())));
    }
    // The target, unless the config file names it.
    if args.config.is_none() || args.stdio.is_some() || args.http.is_some() {
        match target {
            TargetSpec::Stdio(_) => s.push_str(&format!(" --stdio {}", shell_quote(&target.shown()))),
            TargetSpec::Http(h) => s.push_str(&format!(" --http {}", shell_quote(&redact_url(&h.url)))),
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
