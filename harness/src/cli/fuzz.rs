//! `mcpcert fuzz`: the arguments, the run, the reports and the exit code.

use super::setup::{masker_from, target_of};
use mcpcert::config::{self, Policy};
use mcpcert::fuzz::{Class, FuzzOptions};
use mcpcert::record::Verdict;
use mcpcert::report::console::{self, Console};
use mcpcert::report::{self, JunitAs, JunitStyle, Outcome, RunReport, Summary};
use mcpcert::transport::{Limits, TargetSpec, shell_quote};
use mcpcert::wire::Revision;
use std::path::PathBuf;
use std::time::{Duration, Instant};

#[derive(clap::Args)]
pub struct FuzzArgs {
    /// Spawn this command and speak newline-delimited JSON-RPC on its stdio.
    #[arg(long, value_name = "'CMD ARG…'", conflicts_with = "http")]
    stdio: Option<String>,
    /// Streamable HTTP endpoint URL (http:// only: inputs go as raw bytes).
    #[arg(long, value_name = "URL")]
    http: Option<String>,
    /// TOML target file (command or URL, env, headers from env vars).
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// The revision to speak: auto (2026-07-28 if the server answers
    /// server/discover, else what initialize negotiates), or one by name.
    #[arg(long, default_value = "auto")]
    revision: String,
    /// The seed: the same seed sends the same bytes.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Inputs per class.
    #[arg(long, default_value_t = 60)]
    count: usize,
    /// Only these classes (framing, envelope, params, headers, arguments,
    /// descriptors; repeatable).
    #[arg(long = "class", value_name = "CLASS")]
    classes: Vec<String>,
    /// Send one input only: CLASS/INDEX, as a finding's reproducer names it.
    #[arg(long = "case", value_name = "CLASS/INDEX")]
    case: Option<String>,
    /// Stop starting inputs after this many seconds (classes cut short are
    /// `error` unless they already broke a rule).
    #[arg(long, value_name = "S", default_value_t = 300)]
    budget_s: u64,
    /// How long one input waits for its answer, in milliseconds.
    #[arg(long, value_name = "MS", default_value_t = 2000)]
    input_timeout_ms: u64,
    /// stdio: JSON-message inputs written this many at a time, each closed
    /// by a request of mcpcert's own; a window with any finding is sent
    /// again one input at a time, and that is what is judged (1: always one
    /// at a time).
    #[arg(long, value_name = "N", default_value_t = 32, value_parser = clap::value_parser!(u16).range(1..=100))]
    window: u16,
    /// How many failing inputs per class are shrunk (0: none).
    #[arg(long, value_name = "N", default_value_t = 3)]
    shrink: usize,
    /// The folder of the reports (junit.xml, report.json, report.html).
    #[arg(long, value_name = "DIR", default_value = "reports/fuzz")]
    out: PathBuf,
    /// Warnings (conventions) fail the run too.
    #[arg(long)]
    strict: bool,
}

fn usage(msg: impl AsRef<str>) -> u8 {
    console::err_line(format!("error: {}", msg.as_ref()));
    2
}

pub fn fuzz(args: FuzzArgs) -> u8 {
    let clock = Instant::now();
    let cfg_file = match &args.config {
        Some(p) => match config::load(p) {
            Ok(c) => Some((p.clone(), c)),
            Err(e) => return usage(e.to_string()),
        },
        None => None,
    };
    let target = match target_of(args.stdio.as_deref(), args.http.as_deref(), cfg_file.as_ref()) {
        Ok(t) => t,
        Err(e) => return usage(e),
    };
    if let TargetSpec::Http(h) = &target
        && !h.url.starts_with("http://")
    {
        return usage("mcpcert fuzz sends raw bytes, so it needs an http:// URL");
    }
    let mut classes: Vec<Class> = Vec::new();
    for c in &args.classes {
        match Class::parse(c) {
            Some(x) => classes.push(x),
            None => return usage(format!("unknown class `{c}` (framing, envelope, params, headers, arguments, descriptors)")),
        }
    }
    if classes.is_empty() {
        classes = Class::ALL.to_vec();
    }
    let only = match &args.case {
        None => None,
        Some(s) => match s.split_once('/').and_then(|(c, i)| Some((Class::parse(c)?, i.parse::<usize>().ok()?))) {
            Some(x) => Some(x),
            None => return usage(format!("--case takes CLASS/INDEX (e.g. framing/3), not `{s}`")),
        },
    };
    let asked = match args.revision.as_str() {
        "auto" => None,
        r => match Revision::parse(r) {
            Some(r) => Some(r),
            None => return usage(format!("unknown revision `{r}`")),
        },
    };
    let policy = match &cfg_file {
        Some((p, c)) => match Policy::from_file(c, p) {
            Ok(x) => x,
            Err(e) => return usage(e.to_string()),
        },
        None => Policy::default(),
    };
    let limits = Limits::default();
    let timeout = Duration::from_millis(args.input_timeout_ms.max(1));
    let masker = masker_from(cfg_file.as_ref().map(|(_, c)| c), &target, &policy);
    let rt = match tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build() {
        Ok(rt) => rt,
        Err(e) => return usage(format!("cannot start the async runtime: {e}")),
    };
    let rev = match asked {
        Some(r) => Ok(r),
        None => rt.block_on(mcpcert::fuzz::detect(&target, &limits, timeout)),
    };
    let mut console = Console::new();
    let rev = match rev {
        Ok(r) => r,
        Err(e) => {
            console::err_line(format!("error: the target could not be fuzzed: {}", masker.text(&e)));
            return 3;
        }
    };
    let mut rerun = "mcpcert fuzz".to_string();
    match (&args.config, &args.stdio, &args.http) {
        (Some(c), _, _) => rerun.push_str(&format!(" --config {}", shell_quote(&c.display().to_string()))),
        (_, Some(_), _) => rerun.push_str(&format!(" --stdio {}", shell_quote(&target.shown()))),
        _ => rerun.push_str(&format!(" --http {}", shell_quote(&target.shown()))),
    }
    rerun.push_str(&format!(" --revision {rev} --seed {}", args.seed));
    let opts = FuzzOptions {
        seed: args.seed,
        count: args.count,
        classes,
        only,
        budget: Duration::from_secs(args.budget_s),
        timeout,
        shrink: args.shrink,
        rerun,
        policy,
        window: args.window as usize,
    };
    console::err_line(format!(
        "fuzz: {} ({rev}, seed {}, {} inputs per class, each answer awaited up to {} ms: --input-timeout-ms)",
        masker.text(&target.shown()),
        args.seed,
        if only.is_some() { 1 } else { args.count },
        timeout.as_millis()
    ));
    let run = rt.block_on(mcpcert::fuzz::fuzz(&target, &limits, rev, &opts));
    rt.shutdown_timeout(Duration::from_secs(2));
    let mut results = run.results;
    for r in results.iter_mut() {
        masker.case(r);
    }
    for r in &results {
        let first = r.message.lines().next().unwrap_or("");
        console.line(format!("{:<5} {}  {}", r.verdict.word(), r.id, first));
    }
    let failing = results.iter().filter(|r| r.is_failure(args.strict)).count();
    let mut why = Vec::new();
    if let Some(p) = &run.problem {
        why.push(masker.text(p));
    }
    if failing > 0 {
        why.push(format!("{failing} class case(s) found a defect"));
    }
    let summary = Summary::of(&results);
    let rep = RunReport {
        format: "mcpcert-fuzz-report",
        format_version: report::JSON_FORMAT_VERSION,
        mcpcert_version: env!("CARGO_PKG_VERSION"),
        suite_digest: format!("fuzz:seed={};count={}", args.seed, args.count),
        started_at_unix_ms: std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_millis()).unwrap_or(0),
        duration_ms: clock.elapsed().as_millis() as u64,
        peak_rss_kib: report::peak_rss_kib(),
        requests_sent: run.sent,
        server_processes: None,
        transport: target.transport(),
        target: target.describe(),
        revision_requested: args.revision.clone(),
        revisions: Vec::new(),
        strict: args.strict,
        target_problem: run.problem.as_ref().map(|p| masker.text(p)),
        warnings: Vec::new(),
        coverage: Vec::new(),
        drafts: Vec::new(),
        notices: vec![format!(
            "{} inputs sent, {} server restarts{}{}",
            run.inputs,
            run.restarts,
            if run.late > 0 {
                format!(
                    ", {} answers came after a later request's (a server that answers concurrently): each judged with the input whose id it carries",
                    run.late
                )
            } else {
                String::new()
            },
            if run.afresh > 0 {
                ", a window of inputs not read with certainty (the server started afresh; its inputs and all later ones sent one at a time)"
                    .to_string()
            } else {
                String::new()
            }
        )],
        baseline: None,
        requirements: None,
        summary: summary.clone(),
        load: Vec::new(),
        outcome: Outcome { passed: why.is_empty(), why: why.clone() },
        roots: Vec::new(),
        call_log: Vec::new(),
        call_log_dropped: 0,
        cases: results,
    };
    let mut write_ok = true;
    let style = JunitStyle { warn: JunitAs::Pass, na: JunitAs::Skipped };
    for (what, res) in [
        ("JUnit", report::write_junit(&rep, &args.out.join("junit.xml"), style)),
        ("JSON", report::write_json(&rep, &args.out.join("report.json"))),
        ("HTML", report::write_html(&rep, &args.out.join("report.html"))),
    ] {
        if let Err(e) = res {
            console::err_line(format!("error: could not write the {what} report: {e}"));
            write_ok = false;
        }
    }
    for r in rep.cases.iter().filter(|r| matches!(r.verdict, Verdict::Fail | Verdict::Warn | Verdict::Error)) {
        console.line(format!("\n---- {} ({})\n{}", r.id, r.verdict.word(), r.message));
        if let Some(rep) = &r.reproducer {
            console.line(format!("reproduce:\n{rep}"));
        }
    }
    console.line(format!(
        "\nfuzz: {} inputs, {} pass, {} fail, {} warn, {} n/a, {} error; reports in {}",
        run.inputs,
        summary.pass,
        summary.fail,
        summary.warn,
        summary.na,
        summary.error,
        args.out.display()
    ));
    match (&run.problem, why.is_empty() && write_ok) {
        (Some(_), _) => 3,
        (None, true) => 0,
        (None, false) => 1,
    }
}
