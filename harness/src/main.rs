use clap::{Args, Parser, Subcommand};
use mcpcert::checks::{self, Scope};
use mcpcert::report::console::{self, Console};
use mcpcert::suite::{self, Catalog};
use std::path::PathBuf;
use std::process::ExitCode;

mod cli;
use cli::offline::{contract_diff, lint, needs};
use cli::run::run;

/// Exit codes (see README).
const EXIT_OK: u8 = 0;
const EXIT_FAILED: u8 = 1;
const EXIT_USAGE: u8 = 2;
const EXIT_UNREACHABLE: u8 = 3;
/// The server turned mcpcert away for want of a token and the config gives
/// none: only what needs no token was judged, and nothing of it failed.
const EXIT_PROTECTED: u8 = 4;

const EXAMPLES: &str = "Examples:
  mcpcert run --stdio 'python -m my_server'             check a server it starts (stdio)
  mcpcert run --http http://127.0.0.1:8000/mcp           check a running server (Streamable HTTP)
  mcpcert run --config target.toml --strict             target, env, headers, call policy from a file
  mcpcert run --http URL --requirements 2026-07-28       exactly what the revision's requirement set asks
  mcpcert run --stdio CMD --expected-failures known.toml known failures do not fail the run
  mcpcert list                                           every case, its level and what it needs
  mcpcert contract-diff old/contract.json new/contract.json
  mcpcert run --http URL --load 8                        also replay the read-only requests from 8 connections at once
  mcpcert matrix targets.toml -j 4                       many servers; reports/matrix/ (matrix.html, junit.xml)
  mcpcert diff last-night/ reports/matrix/               regressions between two runs (exit 1 on one)
  mcpcert fuzz --stdio CMD --seed 7                      malformed input, every answer judged (reports/fuzz/)

--stdio is not a shell: `FOO=1 cmd` does not set FOO (use [target.env] in a config file).

Exit codes (run):
  0    no failure (warnings allowed unless --strict; expected failures in the baseline)
  1    a failure or error the baseline does not expect, a stale baseline entry, an unmet
       requirement set, or a report that could not be written (the last line says which)
  2    usage, config, baseline or suite-file error (nothing was run)
  3    the target could not be started or reached, or does not serve the revision asked for
  4    the server needs a credential the config does not give: only what needs none was
       judged and passed (give the token or key to judge the rest)
  129, 130, 143  interrupted by SIGHUP, SIGINT, SIGTERM (reports are still written)
  101  mcpcert itself crashed (a bug: please report it)";

#[derive(Parser)]
#[command(
    name = "mcpcert",
    version,
    about = "Conformance harness for MCP servers (revisions 2026-07-28, 2025-11-25, 2025-06-18, 2025-03-26 and 2024-11-05), over stdio, Streamable HTTP and 2024-11-05's HTTP+SSE",
    after_help = EXAMPLES
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
    #[command(after_help = EXAMPLES)]
    Run(RunArgs),
    /// Print every case id with its level and what it needs.
    List {
        #[arg(long, value_name = "DIR")]
        suites: Option<PathBuf>,
        /// Print the check types suite files can name (`action`) instead.
        #[arg(long)]
        checks: bool,
        /// Print a revision's requirement set instead (2026-07-28,
        /// 2025-11-25, 2026-07-28+tasks): each scenario, whether it counts,
        /// the fixtures it needs and the cases that answer it.
        #[arg(long, value_name = "REV")]
        requirements: Option<String>,
        /// Only this revision's catalogue (2026-07-28, 2025-11-25,
        /// 2025-06-18, 2025-03-26 or 2024-11-05).
        #[arg(long, value_name = "REV")]
        revision: Option<String>,
        /// Print the cases as JSON (id, revision, level, title, spec,
        /// basis, needs).
        #[arg(long)]
        json: bool,
        /// Only cases whose id contains FILTER (`tasks/`: the tasks
        /// extension's).
        filter: Option<String>,
    },
    /// Compare two releases' contracts (reports/contract.json of two runs):
    /// each change is breaking, compatible, or changed but not classified.
    /// Exit 1 if any change is breaking.
    ContractDiff {
        old: PathBuf,
        new: PathBuf,
        /// Print the changes as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Check that a certificate and a JSON report belong together (the
    /// report's sha256, suite digest, version, transport, target and every
    /// scenario verdict). Exit 1 if they do not.
    VerifyCertificate { certificate: PathBuf, report: PathBuf },
    /// Run many targets (a TOML file of [[target]] tables: name, command or
    /// url, config, args), up to -j at a time, each with its own reports in
    /// OUT/<name>/, plus matrix.html (targets × cases), matrix.json and one
    /// junit.xml. Exit 1 if any target did not pass.
    Matrix {
        targets: PathBuf,
        /// How many targets run at once (default: half the CPUs, at least
        /// one: each run starts processes of its own, a stdio target's two
        /// at a time, and the start-up timeout should measure the servers,
        /// not a crowded machine).
        #[arg(short = 'j', long, value_name = "N")]
        jobs: Option<usize>,
        #[arg(long, value_name = "DIR", default_value = "reports/matrix")]
        out: PathBuf,
        /// Run only this job's share of the targets, K of N (for a CI job
        /// matrix; `mcpcert merge` joins the shards' folders).
        #[arg(long, value_name = "K/N")]
        shard: Option<String>,
        /// Stop a target's run after this many seconds.
        #[arg(long, value_name = "S", default_value_t = 1800)]
        timeout_s: u64,
        /// How JUnit shows a warning (as `run`).
        #[arg(long, value_name = "AS", default_value = "as-pass", value_parser = parse_junit_as)]
        junit_warn: mcpcert::report::JunitAs,
        /// How JUnit shows n/a (as `run`).
        #[arg(long, value_name = "AS", default_value = "as-skipped", value_parser = parse_junit_na)]
        junit_na: mcpcert::report::JunitAs,
        /// `mcpcert run` options for every target, after `--` (e.g. -- --strict).
        #[arg(last = true)]
        run_args: Vec<String>,
    },
    /// A conformance board over a registry snapshot: every server (latest
    /// version) of SNAPSHOT (registry listing pages, or folders of
    /// server.json files) installed once into --cache, run with a time
    /// budget (each installer and server in a sandbox: bubblewrap, no
    /// network, no secret, no file but its own), its result kept in OUT/servers/<name>/ (not run again while its
    /// version and the suites are unchanged); then the site: index.html,
    /// a page and badge.svg per server, board.json, history/. Third-party
    /// packages are installed and started: run it where that is wanted.
    Board {
        snapshot: Vec<PathBuf>,
        #[arg(long, value_name = "DIR", default_value = "board")]
        out: PathBuf,
        /// Where packages are installed (default: $MCPCERT_CACHE, else
        /// ~/.cache/mcpcert).
        #[arg(long, value_name = "DIR")]
        cache: Option<PathBuf>,
        /// After the night, remove installed packages least recently used
        /// first until the cache holds at most this many MB (never one
        /// this night used).
        #[arg(long, value_name = "MB")]
        cache_max_mb: Option<u64>,
        /// Keep each run's reports whole (report.json, report.html with every
        /// transcript, junit.xml, contract.json): a site many times larger.
        #[arg(long)]
        keep_reports: bool,
        /// Only this job's share of the servers, K of N; `board --merge`
        /// joins the shards' folders into the site.
        #[arg(long, value_name = "K/N")]
        shard: Option<String>,
        /// Stop a server's run after this many seconds (outcome: hung).
        #[arg(long, value_name = "S", default_value_t = 300)]
        budget_s: u64,
        /// Servers checked at once.
        #[arg(short = 'j', long, value_name = "N", default_value_t = 2)]
        jobs: usize,
        /// Runs nothing: the site from these board folders (the shards).
        #[arg(long, value_name = "DIR", num_args = 1..)]
        merge: Vec<PathBuf>,
        /// This night's label in history/ (default: the UTC time).
        #[arg(long, value_name = "LABEL")]
        night: Option<String>,
        /// Run every server again, changed or not.
        #[arg(long)]
        force: bool,
        /// Start packages without a sandbox (where none can be had): they
        /// see this machine's files, network and environment; every page
        /// says so.
        #[arg(long)]
        no_sandbox: bool,
        /// The values servers need, each given to one server by its
        /// registry name (a TOML file: `["NAME"] INPUT = "value"`, `{ env =
        /// "VAR" }` or `{ path = "DIR" }`, a folder shared with it).
        #[arg(long, value_name = "FILE")]
        inputs: Option<PathBuf>,
        /// Read the snapshot from a registry's API (GET
        /// URL/v0.1/servers?version=latest, page after page), saved under
        /// OUT/snapshot/ first.
        #[arg(long, value_name = "URL")]
        registry: Option<String>,
        /// With --registry: only servers updated since this time (RFC 3339).
        #[arg(long, value_name = "TIME", requires = "registry")]
        updated_since: Option<String>,
        /// Exit 1 when a server regressed since the night before (each
        /// regression is printed on a line of its own either way).
        #[arg(long)]
        fail_on_regression: bool,
        /// The site's public address (https://…/): badge snippets and
        /// board.json's links are absolute.
        #[arg(long, value_name = "URL")]
        base_url: Option<String>,
        /// `mcpcert run` options for every server, after `--`.
        #[arg(last = true)]
        run_args: Vec<String>,
    },
    /// Fuzz a server: a seeded, bounded storm of malformed input (framing,
    /// JSON-RPC envelopes, params, HTTP headers), every answer judged; two
    /// cases per class (the stated rules, the conventions), the same
    /// reports as run. Exit 1 on a finding (a warning only under --strict)
    Fuzz(cli::fuzz::FuzzArgs),
    /// Print what a protected server must trust to be judged with
    /// mcpcert's built-in test issuer ([auth]): its issuer URL (the tokens'
    /// iss), JWKS and metadata URLs, the audience and the public key. Needs
    /// a fixed port and a key file, so that it stays the same across runs.
    AuthSetup {
        #[command(flatten)]
        issuer: cli::auth::IssuerArgs,
        /// Also write it all as JSON (with the JWKS) to this file: what
        /// the reference server's --auth reads.
        #[arg(long, value_name = "FILE")]
        out: Option<PathBuf>,
    },
    /// Print one token of the built-in test issuer (for a reproducer's
    /// curl line): --kind valid (default), expired, not-yet-valid,
    /// other-audience, other-issuer, unknown-key, bad-signature, alg-none,
    /// malformed or missing-scope.
    AuthToken {
        #[command(flatten)]
        issuer: cli::auth::IssuerArgs,
        /// The audience: the server's URL.
        #[arg(long, value_name = "URL")]
        aud: Option<String>,
        #[arg(long, value_name = "KIND", default_value = "valid")]
        kind: String,
    },
    /// Print a Markdown summary of a run from its report.json: the outcome,
    /// the counts, the cases that fail the run (root causes first) with
    /// their one-line reasons, the warnings and the certificate (read from
    /// certificate.json beside the report). For CI step summaries.
    Summary { report: PathBuf },
    /// Join the matrix folders of several shards (or runs) into one matrix.
    Merge {
        #[arg(required = true)]
        dirs: Vec<PathBuf>,
        #[arg(long, value_name = "DIR", default_value = "reports/matrix")]
        out: PathBuf,
    },
    /// Compare two runs: each side a report.json, a verdict list, a matrix
    /// folder, or a folder of <target>.txt verdict lists. Lists regressions
    /// (to fail or error), new warnings, fixes, other changes, new and
    /// removed cases. Exit 1 on a regression.
    Diff {
        old: PathBuf,
        new: PathBuf,
        /// A new warning is a regression too.
        #[arg(long)]
        strict: bool,
        /// Any change at all fails (for comparing with expected verdicts).
        #[arg(long)]
        any_change: bool,
        /// Print the changes as JSON.
        #[arg(long)]
        json: bool,
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
    /// The server a registry server.json describes (one of its npm or PyPI
    /// packages, installed into --cache first, or its remote); the values
    /// it needs come from the config and the environment
    /// (MCPCERT_INPUT_<NAME>), never invented.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["stdio", "http"])]
    server_json: Option<PathBuf>,
    /// Which entry of the server.json: package:N, remote:N, or a kind (npm,
    /// pypi, oci, remote); default: the first this machine can run.
    #[arg(long, value_name = "ENTRY", requires = "server_json")]
    pick: Option<String>,
    /// Where packages are installed, once per name@version (default:
    /// $MCPCERT_CACHE, else ~/.cache/mcpcert).
    #[arg(long, value_name = "DIR", requires = "server_json")]
    cache: Option<PathBuf>,
    /// Start the package without a sandbox (where none can be had: it sees
    /// this machine's files, network and environment; the report says so).
    #[arg(long, requires = "server_json")]
    no_sandbox: bool,
    /// Give the sandboxed package mcpcert's whole environment, not only the
    /// values its server.json declares (a vendor checking their own
    /// package; its files and network stay closed).
    #[arg(long, requires = "server_json")]
    inherit_env: bool,
    /// A folder the sandboxed package may read and write, at the same path
    /// (repeatable): a directory a filesystem server is given, a database
    /// file's folder.
    #[arg(long, value_name = "DIR", requires = "server_json")]
    share: Vec<PathBuf>,
    /// TOML target file (command or URL, env, headers from env vars, timeouts).
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Protocol revision to test: auto, 2026-07-28, 2025-11-25, 2025-06-18,
    /// 2025-03-26 or 2024-11-05.
    #[arg(long, default_value = "auto")]
    revision: String,
    /// Suite folder (default: the suites built into the binary).
    #[arg(long, value_name = "DIR")]
    suites: Option<PathBuf>,
    /// The folder the reports are written to: junit.xml, report.json,
    /// report.html and contract.json (certificate.json and badge.svg under
    /// --requirements).
    #[arg(long, value_name = "DIR", default_value = "reports")]
    out: PathBuf,
    /// The JUnit report (default: OUT/junit.xml).
    #[arg(long = "junit", value_name = "FILE")]
    junit_file: Option<PathBuf>,
    /// The JSON report (default: OUT/report.json); contract.json,
    /// certificate.json and badge.svg are written beside it.
    #[arg(long = "json", value_name = "FILE")]
    json_file: Option<PathBuf>,
    /// The HTML report (default: OUT/report.html).
    #[arg(long = "html", value_name = "FILE")]
    html_file: Option<PathBuf>,
    #[arg(skip)]
    junit: PathBuf,
    #[arg(skip)]
    json: PathBuf,
    #[arg(skip)]
    html: PathBuf,
    /// Where the server's contract as this run saw it is written (tools,
    /// prompts, resources, templates, capabilities; for `contract-diff`);
    /// default: contract.json beside the JSON report.
    #[arg(long, value_name = "FILE")]
    contract: Option<PathBuf>,
    /// SHOULD violations fail the run.
    #[arg(long)]
    strict: bool,
    /// After the catalogue, replay the run's read-only requests from N
    /// connections (stdio: processes) at once, and judge the answers (config
    /// [load]: connections, requests, seconds). Off by default.
    #[arg(long, value_name = "N")]
    load: Option<usize>,
    /// The most requests in flight at once (default: 32 over HTTP; over
    /// stdio the number of CPUs, at least 4); cases run four per request.
    /// Cases that change the server's state run alone; -j 1 is the serial
    /// run. Verdicts and report order do not depend on it.
    #[arg(short = 'j', long, value_name = "N")]
    jobs: Option<usize>,
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
    /// Write a baseline of this run's failures and errors (each with its
    /// verdict and one-line reason) to FILE, for `--expected-failures FILE`
    /// next time: adopting mcpcert on a server with known failures.
    #[arg(long, value_name = "FILE")]
    write_baseline: Option<PathBuf>,
    /// Run exactly what this revision's requirement set asks (2026-07-28 or
    /// 2025-11-25; 2026-07-28+tasks scores the tasks extension's scenarios
    /// too): the cases that answer its scenarios; a conformance fixture the
    /// server does not list fails its scenario.
    #[arg(long, value_name = "REV")]
    requirements: Option<String>,
    /// How JUnit shows a warning: as-pass (a passed testcase, the text in
    /// system-out; the default), as-skipped, or as-failure (dashboards count
    /// it). Under --strict a warning is a failure.
    #[arg(long, value_name = "AS", default_value = "as-pass", value_parser = parse_junit_as)]
    junit_warn: mcpcert::report::JunitAs,
    /// How JUnit shows n/a: as-skipped (the default) or as-pass.
    #[arg(long, value_name = "AS", default_value = "as-skipped", value_parser = parse_junit_na)]
    junit_na: mcpcert::report::JunitAs,
    /// Colour the verdicts: auto (on a terminal, unless NO_COLOR), always, never.
    #[arg(long, value_name = "WHEN", default_value = "auto", value_parser = parse_color)]
    color: mcpcert::report::console::ColorMode,
    /// Only the failures and the summary on the console (no line per case,
    /// no progress line).
    #[arg(long, short)]
    quiet: bool,
    /// A line for every case as it finishes, passes and n/a included (by
    /// default those are counted by area, and the n/a by reason).
    #[arg(long, short, conflicts_with = "quiet")]
    verbose: bool,
    /// Which cases' transcripts the reports keep: all (the default), or
    /// failing (only those that failed, erred or warned; what a board keeps
    /// for thousands of servers).
    #[arg(long, value_name = "WHICH", default_value = "all", value_parser = ["all", "failing"], overrides_with = "evidence")]
    evidence: String,
    /// The previous release's contract.json: the changes since it are shown
    /// (breaking first) and recorded in the certificate.
    #[arg(long, value_name = "FILE")]
    previous_contract: Option<PathBuf>,
}

fn junit_as_word(a: mcpcert::report::JunitAs) -> &'static str {
    use mcpcert::report::JunitAs;
    match a {
        JunitAs::Pass => "as-pass",
        JunitAs::Skipped => "as-skipped",
        JunitAs::Failure => "as-failure",
    }
}

fn parse_junit_as(s: &str) -> Result<mcpcert::report::JunitAs, String> {
    use mcpcert::report::JunitAs;
    match s {
        "as-pass" => Ok(JunitAs::Pass),
        "as-skipped" => Ok(JunitAs::Skipped),
        "as-failure" => Ok(JunitAs::Failure),
        other => Err(format!("`{other}` is not as-pass, as-skipped or as-failure")),
    }
}

fn parse_junit_na(s: &str) -> Result<mcpcert::report::JunitAs, String> {
    match parse_junit_as(s)? {
        mcpcert::report::JunitAs::Failure => Err("n/a is never a failure: as-skipped or as-pass".into()),
        x => Ok(x),
    }
}

fn parse_color(s: &str) -> Result<mcpcert::report::console::ColorMode, String> {
    use mcpcert::report::console::ColorMode;
    match s {
        "auto" => Ok(ColorMode::Auto),
        "always" => Ok(ColorMode::Always),
        "never" => Ok(ColorMode::Never),
        other => Err(format!("`{other}` is not auto, always or never")),
    }
}

fn main() -> ExitCode {
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
        Cmd::List { suites, requirements: Some(rev), .. } => {
            let set = match mcpcert::suite::requirements::resolve(&rev) {
                Ok(s) => s,
                Err(e) => return ExitCode::from(usage(format!("--requirements: {e}"))),
            };
            match load_catalog(suites.as_ref()) {
                Ok(cat) => {
                    Console::new().line(mcpcert::certify::requirements::listing(set, &cat.cases).trim_end());
                    ExitCode::from(EXIT_OK)
                }
                Err(e) => ExitCode::from(usage(e)),
            }
        }
        Cmd::List { suites, revision, json, filter, .. } => match load_catalog(suites.as_ref()) {
            Ok(cat) => {
                let rev = match revision.as_deref().map(|r| (r, mcpcert::wire::Revision::parse(r))) {
                    None => None,
                    Some((_, Some(r))) => Some(r),
                    Some((r, None)) => return ExitCode::from(usage(format!("--revision: `{r}` is not a revision mcpcert tests"))),
                };
                let cases: Vec<&mcpcert::suite::Case> = cat
                    .cases
                    .iter()
                    .filter(|c| rev.is_none_or(|r| c.revision == r) && filter.as_deref().is_none_or(|f| c.id.contains(f)))
                    .collect();
                let mut console = Console::new();
                if json {
                    let rows: Vec<serde_json::Value> = cases
                        .iter()
                        .map(|c| {
                            serde_json::json!({
                                "id": c.id, "revision": c.revision, "level": c.level.as_str(), "title": c.title,
                                "spec": c.spec.render(c.revision), "basis": c.basis, "needs": needs(c),
                            })
                        })
                        .collect();
                    console.line(serde_json::to_string_pretty(&rows).unwrap_or_default());
                    return ExitCode::from(EXIT_OK);
                }
                for c in &cases {
                    console.line(format!("{}  [{}]  needs: {}\n    basis: {}", c.id, c.level.as_str(), needs(c), c.basis.render()));
                }
                let scope = rev.map(|r| {
                    format!(
                        " of {r}{}",
                        if r.has(mcpcert::wire::Feature::RequirementSet) { "" } else { " (no requirement set: verdicts, no certificate)" }
                    )
                });
                console.line(format!("\n{} cases{}; suites {}", cases.len(), scope.unwrap_or_default(), cat.digest));
                ExitCode::from(EXIT_OK)
            }
            Err(e) => {
                console::err_line(format!("error: {e}"));
                ExitCode::from(EXIT_USAGE)
            }
        },
        Cmd::Run(mut args) => {
            args.junit = args.junit_file.take().unwrap_or_else(|| args.out.join("junit.xml"));
            args.json = args.json_file.take().unwrap_or_else(|| args.out.join("report.json"));
            args.html = args.html_file.take().unwrap_or_else(|| args.out.join("report.html"));
            ExitCode::from(run(args))
        }
        Cmd::Fuzz(args) => ExitCode::from(cli::fuzz::fuzz(args)),
        Cmd::Board {
            snapshot,
            out,
            cache,
            cache_max_mb,
            keep_reports,
            shard,
            budget_s,
            jobs,
            merge,
            night,
            force,
            no_sandbox,
            inputs,
            registry,
            updated_since,
            fail_on_regression,
            base_url,
            run_args,
        } => ExitCode::from(cli::board::board(cli::board::BoardArgs {
            snapshot,
            out,
            cache,
            cache_max_mb,
            keep_reports,
            shard,
            budget: std::time::Duration::from_secs(budget_s),
            jobs,
            merge,
            night,
            force,
            no_sandbox,
            inputs,
            registry,
            updated_since,
            fail_on_regression,
            base_url,
            run_args,
        })),
        Cmd::Lint { file, revision, config, json } => ExitCode::from(lint(&file, &revision, config.as_ref(), json)),
        Cmd::ContractDiff { old, new, json } => ExitCode::from(contract_diff(&old, &new, json)),
        Cmd::Matrix { targets, jobs, out, shard, timeout_s, junit_warn, junit_na, run_args } => {
            let jobs = jobs.unwrap_or_else(|| (std::thread::available_parallelism().map_or(1, |n| n.get()) / 2).max(1));
            let style_args =
                vec!["--junit-warn".into(), junit_as_word(junit_warn).into(), "--junit-na".into(), junit_as_word(junit_na).into()];
            ExitCode::from(cli::matrix::run_matrix(cli::matrix::MatrixArgs {
                targets,
                jobs,
                out,
                shard,
                timeout: std::time::Duration::from_secs(timeout_s),
                style: mcpcert::report::JunitStyle { warn: junit_warn, na: junit_na },
                style_args,
                run_args,
            }))
        }
        Cmd::Merge { dirs, out } => ExitCode::from(cli::matrix::merge(&dirs, &out, mcpcert::report::JunitStyle::standard())),
        Cmd::Diff { old, new, strict, any_change, json } => ExitCode::from(cli::matrix::diff_cmd(&old, &new, json, strict, any_change)),
        Cmd::AuthSetup { issuer, out } => ExitCode::from(cli::auth::setup(&issuer, out.as_ref())),
        Cmd::AuthToken { issuer, aud, kind } => ExitCode::from(cli::auth::token(&issuer, aud.as_deref(), &kind)),
        Cmd::Summary { report } => ExitCode::from(cli::offline::summary(&report)),
        Cmd::VerifyCertificate { certificate, report } => ExitCode::from(cli::offline::verify_certificate(&certificate, &report)),
    }
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
