//! `mcpcert board SNAPSHOT… --out SITE`: every server of a registry
//! snapshot checked, and a site of the results. For each server (latest
//! version, by name; `--shard K/N` takes a share): its server.json kept,
//! the entry this machine can run picked, its required values looked up
//! (a missing one is the server's outcome, `needs-secret`), its package
//! installed into the cache (once per name@version), then one
//! `mcpcert run --server-json` with a time budget. Installers and servers
//! run in the sandbox (`packages::sandbox`: bubblewrap; the board refuses
//! to start packages without one unless `--no-sandbox`), and the child run
//! is given nothing of the board's environment but this server's own
//! values (`--inputs`, `inputs.rs`). The result
//! of each server is `servers/<slug>/result.json`, beside its reports; a
//! server whose version, suite digest and mcpcert version are those of its
//! last result is not run again; one run again is compared case by case
//! with its previous run (`history.rs`). Then the site (`site.rs`) is written from
//! every result in `servers/`: the shards of one night merged with
//! `board --merge PART… --out SITE`.

mod cause;
mod charts;
mod history;
mod inputs;
mod judge;
mod nights;
mod pages;
mod share;
mod site;
mod store;

use crate::EXIT_OK;
use mcpcert::config::targets::parse_shard;
use mcpcert::packages::install;
use mcpcert::packages::sandbox::{self, Sandbox};
use mcpcert::packages::snapshot::{self, Listed};
use mcpcert::report::console::Console;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

pub struct BoardArgs {
    pub snapshot: Vec<PathBuf>,
    pub out: PathBuf,
    pub cache: Option<PathBuf>,
    /// Trim the package cache to this many MB after the night.
    pub cache_max_mb: Option<u64>,
    /// Keep each run's reports whole (JSON, HTML, JUnit, contract): a
    /// larger site.
    pub keep_reports: bool,
    pub shard: Option<String>,
    pub budget: Duration,
    pub jobs: usize,
    pub merge: Vec<PathBuf>,
    pub night: Option<String>,
    pub force: bool,
    pub no_sandbox: bool,
    pub inputs: Option<PathBuf>,
    pub registry: Option<String>,
    pub updated_since: Option<String>,
    /// Exit 1 when a server regressed since the night before.
    pub fail_on_regression: bool,
    /// The site's public address: badge snippets and `board.json`'s links
    /// are absolute.
    pub base_url: Option<String>,
    pub run_args: Vec<String>,
}

impl BoardArgs {
    fn site<'a>(&'a self, keep_history: bool, digest: &'a str, problems: &'a [String]) -> site::Options<'a> {
        site::Options {
            night: self.night.as_deref(),
            keep_history,
            digest,
            problems,
            fail_on_regression: self.fail_on_regression,
            base_url: self.base_url.as_deref().unwrap_or(""),
        }
    }
}

/// What happened to one server.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ServerResult {
    pub name: String,
    pub version: String,
    #[serde(default)]
    pub title: Option<String>,
    #[serde(default)]
    pub description: String,
    /// pass, fail, crashed, no-answer, unreachable, protected, hung,
    /// needs-secret, needs-input, cannot-run, install-failed, invalid, error.
    pub outcome: String,
    /// One line: why (for every outcome but pass).
    pub reason: String,
    /// More lines (an installer's last lines).
    #[serde(default)]
    pub detail: String,
    pub entry: Option<String>,
    pub what: Option<String>,
    pub transport: Option<String>,
    /// How the run was isolated.
    pub sandbox: String,
    pub counts: Option<Counts>,
    /// The revisions the server served.
    #[serde(default)]
    pub revisions: Vec<String>,
    /// Per area (`2026-07-28/tools`): failures, errors, warnings.
    #[serde(default)]
    pub areas: Vec<Area>,
    pub suite_digest: String,
    pub mcpcert_version: String,
    pub checked_at_ms: u64,
    pub duration_ms: u64,
    /// Whether `report/` holds the run's reports.
    pub report: bool,
    /// The previous run this one is compared with (`VERSION checked TIME`).
    #[serde(default)]
    pub compared_with: Option<String>,
    /// The cases whose verdict changed since that run (both runs reached
    /// the server): regressions, fixes, new warnings, other changes.
    #[serde(default)]
    pub case_changes: Vec<history::CaseChange>,
    /// A digest of the run's budget and the `mcpcert run` options given
    /// after `--`: a result of other options is not reused.
    #[serde(default)]
    pub run_options: String,
    /// How much the run judged: cases that got a verdict other than n/a,
    /// of all; tools the call policy called, of those listed.
    #[serde(default)]
    pub judged: Option<Judged>,
    /// The cases that failed, erred or warned, each with its one-line
    /// reason and spec section (what the server's page lists).
    #[serde(default)]
    pub failing: Vec<Failing>,
    /// Nights this outcome was settled again in a row without a change
    /// (the backoff: it is settled again after 1, 2, 4, then every 8
    /// nights skipped), and the nights skipped since the last attempt.
    #[serde(default)]
    pub attempts: u32,
    #[serde(default)]
    pub waited: u32,
    /// A digest of what the board was given for this server (the names of
    /// its inputs and shares, never a value): a change settles it at once.
    #[serde(default)]
    pub inputs: String,
    /// Whether the run reached the server (its verdicts judge it, whatever
    /// the outcome says of its environment).
    #[serde(default)]
    pub reached: bool,
    /// Whether a child `mcpcert run` ran (this board run only).
    #[serde(skip)]
    pub ran: bool,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Judged {
    pub cases: u64,
    pub of: u64,
    pub tools_called: u64,
    pub tools_listed: u64,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Failing {
    pub case: String,
    pub verdict: String,
    pub level: String,
    pub reason: String,
    pub spec: String,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Counts {
    pub pass: u64,
    pub fail: u64,
    pub warn: u64,
    #[serde(rename = "n/a")]
    pub na: u64,
    pub error: u64,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Area {
    pub area: String,
    pub pass: u64,
    pub fail: u64,
    pub warn: u64,
    pub error: u64,
}

fn now_ms() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_millis() as u64).unwrap_or(0)
}

pub fn board(a: BoardArgs) -> u8 {
    let mut console = Console::new();
    let catalog = match crate::load_catalog(None) {
        Ok(c) => c,
        Err(e) => return crate::usage(e),
    };
    let digest = catalog.digest.clone();
    if let Err(e) = std::fs::create_dir_all(a.out.join("servers")) {
        return crate::usage(format!("--out {}: {e}", a.out.display()));
    }
    if !a.merge.is_empty() {
        let mut problems: Vec<String> = Vec::new();
        for part in &a.merge {
            if let Err(e) = share::copy_servers(&part.join("servers"), &a.out.join("servers")) {
                return crate::usage(format!("--merge {}: {e}", part.display()));
            }
            // The listings the parts read, and what they could not read.
            let _ = share::copy_new(&part.join("snapshot"), &a.out.join("snapshot"));
            for p in share::read_problems(part) {
                if !problems.contains(&p) {
                    problems.push(p);
                }
            }
        }
        return site::write(&a.out, &a.site(true, &digest, &problems), &mut console);
    }
    let mut paths = a.snapshot.clone();
    if let Some(url) = &a.registry {
        let dir = a.out.join("snapshot").join(mcpcert::certify::certificate::rfc3339(now_ms() as u128).replace(':', ""));
        match mcpcert::packages::registry_api::fetch(url, a.updated_since.as_deref(), &dir) {
            Ok(files) => {
                console.line(format!("registry: {} page(s) saved in {}", files.len(), dir.display()));
                paths.push(dir);
            }
            Err(e) => {
                mcpcert::report::console::err_line(format!("error: --registry: {e}"));
                return crate::EXIT_UNREACHABLE;
            }
        }
    }
    if paths.is_empty() {
        return crate::usage(
            "name a snapshot (registry listing pages or a folder of server.json files), --registry URL, or --merge the shards",
        );
    }
    let snapshot::Snapshot { servers, deleted, problems } = snapshot::read(&paths);
    for p in &problems {
        console.line(format!("snapshot: {p}"));
    }
    let _ = std::fs::write(a.out.join(share::PROBLEMS), serde_json::to_string_pretty(&problems).unwrap_or_default() + "\n");
    // Every shard takes deleted servers off (a merge keeps the newest
    // result, so the mark wins over last night's result).
    for l in &deleted {
        if history::withdraw(&a.out.join("servers").join(share::folder(&l.name)), l, &digest) {
            console.line(format!("{}@{}: deleted from the registry: taken off the board (its history stays)", l.name, l.version));
        }
    }
    let folders: Vec<String> = servers.iter().map(|l| share::folder(&l.name)).collect();
    let mut listed: Vec<(&Listed, &String)> = servers.iter().zip(folders.iter()).collect();
    if let Some(s) = &a.shard {
        match parse_shard(s) {
            Ok((k, n)) => listed.retain(|(l, _)| share::shard_by_name(&l.name, n) == k - 1),
            Err(e) => return crate::usage(e),
        }
    }
    // Fail closed: no package starts without a sandbox unless told.
    let sandbox = if a.no_sandbox {
        None
    } else {
        match sandbox::find() {
            Ok(sb) => Some(sb),
            Err(remedy) => {
                mcpcert::report::console::err_line(format!("error: the board starts third-party packages, and there is {remedy}"));
                return crate::EXIT_USAGE;
            }
        }
    };
    let given = match &a.inputs {
        Some(p) => match inputs::Inputs::load(p) {
            Ok(i) => i,
            Err(e) => return crate::usage(e),
        },
        None => inputs::Inputs::default(),
    };
    console.line(format!(
        "board: {} server(s){}; packages run in {}",
        listed.len(),
        a.shard.as_deref().map(|s| format!(" (shard {s})")).unwrap_or_default(),
        sandbox
            .as_ref()
            .map_or("no sandbox (--no-sandbox): they see this machine's files, network and environment".to_string(), |s| s.describe())
    ));
    // Absolute: the sandbox starts a package by its path in the cache.
    let cache = a.cache.clone().unwrap_or_else(install::default_cache);
    let cache = std::path::absolute(&cache).unwrap_or(cache);
    let night_started = std::time::SystemTime::now() - Duration::from_secs(1);
    let queue = std::sync::Mutex::new(listed.iter().enumerate().collect::<Vec<_>>().into_iter());
    let fates = std::sync::Mutex::new([0usize; 4]);
    let lines = std::sync::Mutex::new(&mut console);
    let total = listed.len();
    std::thread::scope(|s| {
        for _ in 0..a.jobs.max(1) {
            s.spawn(|| {
                loop {
                    let Some((i, (l, folder))) = queue.lock().unwrap_or_else(|e| e.into_inner()).next() else { break };
                    let dir = a.out.join("servers").join(folder);
                    let (r, fate) = one(l, &dir, &cache, &a, &digest, sandbox.as_ref(), &given);
                    fates.lock().unwrap_or_else(|e| e.into_inner())[fate as usize] += 1;
                    let line = format!(
                        "[{}/{total}] {}@{}: {}{}{}",
                        i + 1,
                        l.name,
                        l.version,
                        r.outcome,
                        if r.reason.is_empty() { String::new() } else { format!(" ({})", r.reason) },
                        match fate {
                            Fate::Reused => " [unchanged: not run again]",
                            Fate::Waiting => " [settled before: not due again yet]",
                            _ => "",
                        }
                    );
                    lines.lock().unwrap_or_else(|e| e.into_inner()).line(line);
                }
            });
        }
    });
    let [run, settled, reused, waiting] = fates.into_inner().unwrap_or_else(|e| e.into_inner());
    console.line(format!(
        "board: {run} server(s) run, {settled} settled without a run (a value missing, no entry to run, an install that failed), {reused} unchanged since their last result, {waiting} settled before and not due again yet (settled again after 1, 2, 4, then every 8 nights skipped)"
    ));
    if let Some(mb) = a.cache_max_mb {
        let t = install::trim(&cache, mb * 1_000_000, night_started);
        console.line(format!(
            "cache: {} package(s), {} MB; removed {} least recently used ({} MB) to stay under --cache-max-mb {mb}{}",
            t.packages,
            t.bytes / 1_000_000,
            t.removed,
            t.removed_bytes / 1_000_000,
            if t.bytes - t.removed_bytes > mb * 1_000_000 { " (still over: this night's own packages are kept)" } else { "" }
        ));
    }
    // The snapshot is not needed to write the site: its memory goes first.
    drop(queue);
    drop(listed);
    drop(servers);
    let keep_history = a.shard.is_none();
    let code = site::write(&a.out, &a.site(keep_history, &digest, &problems), &mut console);
    if code == EXIT_OK { EXIT_OK } else { code }
}

/// What the board did with a server.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Fate {
    /// A child `mcpcert run` judged it.
    Ran = 0,
    /// Its outcome was settled before any run (a value missing, no entry
    /// this machine can run, an install that failed, …).
    Settled = 1,
    /// Its last result still holds.
    Reused = 2,
    /// Settled before, and not due to be settled again yet (the backoff).
    Waiting = 3,
}

/// A digest of what every run is given: the budget (which decides what
/// `hung` means) and the options after `--` (never kept as they are: give
/// secrets through the environment or a config file, not as options).
fn options_digest(budget: Duration, args: &[String]) -> String {
    use sha2::Digest;
    let d = sha2::Sha256::digest(format!("{}\0{}", budget.as_secs(), args.join("\0")).as_bytes());
    d.iter().take(8).map(|b| format!("{b:02x}")).collect()
}

/// Whether a last result still holds while nothing changed: a run that
/// judged the server, or what its package did at that version (crashed,
/// never answered, hung, asked for a token). The others are settled again
/// each time, cheaply: a value given since, a machine that can run an
/// entry now, an install or a remote that failed for a while.
fn reusable(outcome: &str) -> bool {
    matches!(outcome, "pass" | "fail" | "crashed" | "no-answer" | "hung" | "protected" | "needs-network" | "needs-service")
}

/// Whether an outcome settled without judging the server is retried on a
/// backoff rather than every night: a value missing, nothing this machine
/// can run, an install that failed, an unreadable entry.
fn backs_off(outcome: &str) -> bool {
    matches!(outcome, "needs-secret" | "needs-input" | "cannot-run" | "install-failed" | "invalid")
}

/// The nights skipped before a settled outcome is settled again, after
/// `attempts` settles in a row: 1, 2, 4, then every 8 (a night is one run
/// of the board).
fn wait_for(attempts: u32) -> u32 {
    1u32 << attempts.saturating_sub(1).min(3)
}

/// Read a server's last result.
pub fn last_result(dir: &Path) -> Option<ServerResult> {
    serde_json::from_str(&std::fs::read_to_string(dir.join("result.json")).ok()?).ok()
}

/// One server: its result (written to `dir/result.json`), and what was
/// done.
fn one(
    l: &Listed,
    dir: &Path,
    cache: &Path,
    a: &BoardArgs,
    digest: &str,
    sandbox: Option<&Sandbox>,
    given: &inputs::Inputs,
) -> (ServerResult, Fate) {
    let version = env!("CARGO_PKG_VERSION");
    let options = options_digest(a.budget, &a.run_args);
    let inputs = given.digest(&l.name);
    let last = last_result(dir).filter(|old| {
        !a.force
            && old.name == l.name
            && old.version == l.version
            && old.suite_digest == digest
            && old.mcpcert_version == version
            && old.run_options == options
            && old.inputs == inputs
    });
    // A remote is judged every night: its version says nothing of what
    // is deployed behind its URL.
    let remote = last.as_ref().is_some_and(|o| o.transport.as_deref() == Some("http"));
    if let Some(old) = last.as_ref().filter(|o| reusable(&o.outcome) && !remote) {
        return (old.clone(), Fate::Reused);
    }
    if let Some(mut old) = last.clone().filter(|o| backs_off(&o.outcome) && o.waited < wait_for(o.attempts)) {
        old.waited += 1;
        if let Ok(text) = serde_json::to_string_pretty(&old) {
            let _ = std::fs::write(dir.join("result.json"), text + "\n");
        }
        return (old, Fate::Waiting);
    }
    let started = Instant::now();
    let server: serde_json::Value = serde_json::from_str(&l.server).unwrap_or_default();
    let mut r = ServerResult {
        name: l.name.clone(),
        version: l.version.clone(),
        title: server.get("title").and_then(|t| t.as_str()).map(String::from),
        description: server.get("description").and_then(|t| t.as_str()).unwrap_or("").to_string(),
        outcome: "error".into(),
        reason: String::new(),
        detail: String::new(),
        entry: None,
        what: None,
        transport: None,
        sandbox: "none".into(),
        counts: None,
        revisions: Vec::new(),
        areas: Vec::new(),
        suite_digest: digest.to_string(),
        mcpcert_version: version.to_string(),
        checked_at_ms: now_ms(),
        duration_ms: 0,
        report: false,
        compared_with: None,
        case_changes: Vec::new(),
        run_options: options,
        judged: None,
        failing: Vec::new(),
        attempts: 0,
        waited: 0,
        inputs,
        reached: false,
        ran: false,
    };
    // A folder is the name's alone (share::folder); one holding another
    // server's result is left as it is.
    if let Some(other) = last_result(dir).filter(|o| o.name != l.name) {
        judge::set(
            &mut r,
            "invalid",
            format!("its folder {} holds the result of {}: a digest collision; not run", dir.display(), other.name),
        );
        return (r, Fate::Settled);
    }
    let prev = history::previous(dir, &l.name);
    history::clear(dir);
    judge::judge(l, dir, cache, a, sandbox, given, &mut r);
    r.duration_ms = started.elapsed().as_millis() as u64;
    let scrub = cause::Scrub::new(cache, &a.out);
    r.reason = scrub.text(&r.reason);
    r.detail = scrub.text(&r.detail);
    // The same settled outcome again: one more attempt on the backoff.
    r.attempts = match &last {
        Some(old) if backs_off(&r.outcome) && old.outcome == r.outcome => old.attempts + 1,
        _ if backs_off(&r.outcome) => 1,
        _ => 0,
    };
    history::compare(prev.as_ref(), dir, &mut r);
    history::archive(dir, &r);
    store::keep(dir, &mut r, &scrub, a.keep_reports);
    if let Ok(text) = serde_json::to_string_pretty(&r) {
        let _ = std::fs::write(dir.join("result.json"), text + "\n");
    }
    let fate = if r.ran { Fate::Ran } else { Fate::Settled };
    (r, fate)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_options_are_kept_as_a_digest_and_some_outcomes_are_settled_again() {
        let args = vec!["--header".to_string(), "Authorization: Bearer s3cret-value".to_string()];
        let budget = Duration::from_secs(300);
        let d = options_digest(budget, &args);
        assert_eq!(d.len(), 16);
        assert!(!d.contains("s3cret"));
        assert_ne!(d, options_digest(budget, &args[..1]));
        assert_ne!(d, options_digest(Duration::from_secs(60), &args));
        for o in ["pass", "fail", "crashed", "no-answer", "hung", "protected"] {
            assert!(reusable(o), "{o}");
        }
        for o in ["needs-secret", "needs-input", "cannot-run", "invalid", "install-failed", "unreachable", "error", "deleted"] {
            assert!(!reusable(o), "{o}");
        }
        // Settled outcomes wait 1, 2, 4, then every 8 nights.
        assert_eq!((1..=6).map(wait_for).collect::<Vec<_>>(), [1, 2, 4, 8, 8, 8]);
        assert!(backs_off("install-failed") && !backs_off("unreachable") && !backs_off("pass"));
    }
}
