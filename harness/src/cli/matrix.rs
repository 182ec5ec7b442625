//! `mcpcert matrix`, `mcpcert merge` and `mcpcert diff`: many servers in
//! one run (each target one `mcpcert run` child process, up to `-j` at a
//! time), shards of it joined again, and two runs compared.

use crate::{EXIT_FAILED, EXIT_OK, usage};
use mcpcert::config::targets::{self, How, MatrixTarget};
use mcpcert::record::Transport;
use mcpcert::report::console::{self, Console};
use mcpcert::report::matrix::{self, MATRIX_FORMAT, MATRIX_FORMAT_VERSION, Matrix, MatrixEntry, ReadReport};
use mcpcert::report::{JunitStyle, diff};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// A target's entry and, when it wrote one, its report.
type Done = (MatrixEntry, Option<ReadReport>);

pub struct MatrixArgs {
    pub targets: PathBuf,
    pub jobs: usize,
    pub out: PathBuf,
    pub shard: Option<String>,
    pub timeout: Duration,
    pub style: JunitStyle,
    /// `--junit-warn`/`--junit-na` as given, for the runs.
    pub style_args: Vec<String>,
    /// Options for every run (after `--`).
    pub run_args: Vec<String>,
}

pub fn run_matrix(a: MatrixArgs) -> u8 {
    let all = match targets::load(&a.targets) {
        Ok(t) => t,
        Err(e) => return usage(e),
    };
    let (list, shard) = match a.shard.as_deref().map(targets::parse_shard) {
        None => (all, None),
        Some(Ok(s)) => (targets::shard(all, s), Some(format!("{}/{}", s.0, s.1))),
        Some(Err(e)) => return usage(e),
    };
    if let Err(e) = std::fs::create_dir_all(&a.out) {
        return usage(format!("cannot create {}: {e}", a.out.display()));
    }
    let jobs = a.jobs.max(1);
    let mut console = Console::new();
    console.line(format!(
        "matrix: {} targets{}, {} at a time; reports in {}",
        list.len(),
        shard.as_deref().map(|s| format!(" (shard {s})")).unwrap_or_default(),
        jobs.min(list.len().max(1)),
        a.out.display()
    ));
    let clock = Instant::now();
    let next = AtomicUsize::new(0);
    let done = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<Done>>> = Mutex::new(vec![None; list.len()]);
    let console_lock = Mutex::new(());
    std::thread::scope(|s| {
        for _ in 0..jobs.min(list.len()) {
            s.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::SeqCst);
                    let Some(t) = list.get(i) else { break };
                    let r = run_one(t, &a);
                    let n = done.fetch_add(1, Ordering::SeqCst) + 1;
                    {
                        let _g = console_lock.lock().unwrap_or_else(|e| e.into_inner());
                        console::Console::new().line(format!("[{n}/{}] {}", list.len(), line_for(&r.0)));
                    }
                    results.lock().unwrap_or_else(|e| e.into_inner())[i] = Some(r);
                }
            });
        }
    });
    let entries: Vec<(MatrixEntry, Option<ReadReport>)> =
        results.into_inner().unwrap_or_else(|e| e.into_inner()).into_iter().flatten().collect();
    let code = write_combined(&a.out, &entries, shard, a.style, &mut console);
    console.line(format!("matrix finished in {:.1}s", clock.elapsed().as_secs_f64()));
    code
}

/// A server.json target's transport (that of the entry its run will pick)
/// and how the matrix names it.
fn server_json_transport(p: &std::path::Path, pick: Option<&str>) -> (Transport, String) {
    let entry = mcpcert::packages::load(p)
        .ok()
        .and_then(|sj| mcpcert::packages::pick(&sj, pick, &mcpcert::packages::ThisMachine).ok().map(|e| (e.is_remote(), e.describe())));
    match entry {
        Some((true, d)) => (Transport::Http, format!("{} ({d})", p.display())),
        Some((false, d)) => (Transport::Stdio, format!("{} ({d})", p.display())),
        None => (Transport::Stdio, p.display().to_string()),
    }
}

/// One target: its own `mcpcert run`, console to `<out>/<name>/console.log`.
fn run_one(t: &MatrixTarget, a: &MatrixArgs) -> Done {
    let dir = a.out.join(&t.name);
    let _ = std::fs::remove_dir_all(&dir);
    let (transport, target) = match &t.how {
        How::Command(c) => (Transport::Stdio, c.clone()),
        How::Url(u) => (Transport::Http, u.clone()),
        How::ServerJson(p, pick) => server_json_transport(p, pick.as_deref()),
        How::Config { stdio, target } => (if *stdio { Transport::Stdio } else { Transport::Http }, target.clone()),
    };
    let fail = |problem: String| {
        let e = matrix::entry_from(&t.name, transport, &target, None, 0, None, Some(problem));
        (e, None)
    };
    if let Err(e) = std::fs::create_dir_all(&dir) {
        return fail(format!("cannot create {}: {e}", dir.display()));
    }
    let log = match std::fs::File::create(dir.join("console.log")) {
        Ok(f) => f,
        Err(e) => return fail(format!("cannot write {}: {e}", dir.join("console.log").display())),
    };
    let exe = match std::env::current_exe() {
        Ok(p) => p,
        Err(e) => return fail(format!("cannot find mcpcert's own binary: {e}")),
    };
    let mut cmd = Command::new(exe);
    cmd.arg("run");
    match &t.how {
        How::Command(c) => cmd.args(["--stdio", c]),
        How::Url(u) => cmd.args(["--http", u]),
        How::ServerJson(p, pick) => cmd.arg("--server-json").arg(p).args(pick.iter().flat_map(|k| ["--pick", k.as_str()])),
        // `--config` below names it.
        How::Config { .. } => &mut cmd,
    };
    if let Some(c) = &t.config {
        cmd.arg("--config").arg(c);
    }
    cmd.args(&t.args).args(&a.run_args).args(&a.style_args).arg("--out").arg(&dir).args(["--color", "never"]);
    cmd.stdin(Stdio::null()).stdout(log.try_clone().map(Stdio::from).unwrap_or(Stdio::null())).stderr(Stdio::from(log));
    let started = Instant::now();
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => return fail(format!("cannot start mcpcert run: {e}")),
    };
    let mut problem = None;
    let status = loop {
        match child.try_wait() {
            Ok(Some(st)) => break Some(st),
            Ok(None) if started.elapsed() > a.timeout => {
                problem = Some(format!("stopped after {} s (--timeout-s): the run did not finish", a.timeout.as_secs()));
                // SIGTERM first, so that the run stops its servers and
                // writes its reports; then a hard kill.
                #[cfg(unix)]
                // SAFETY: kill only sends a signal to the child's pid, which
                // this process owns and has not reaped yet.
                unsafe {
                    libc::kill(child.id() as libc::pid_t, libc::SIGTERM);
                }
                let grace = Instant::now();
                while grace.elapsed() < Duration::from_secs(10) {
                    if let Ok(Some(_)) = child.try_wait() {
                        break;
                    }
                    std::thread::sleep(Duration::from_millis(100));
                }
                let _ = child.kill();
                break child.wait().ok();
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(50)),
            Err(e) => {
                problem = Some(format!("lost the run: {e}"));
                let _ = child.kill();
                break None;
            }
        }
    };
    let ms = started.elapsed().as_millis() as u64;
    let code = status.and_then(|s| s.code());
    let rep = matrix::read_report(&dir.join("report.json"));
    let rep = match rep {
        Ok(r) => Some(r),
        Err(e) => {
            if problem.is_none() {
                let tail = std::fs::read_to_string(dir.join("console.log")).unwrap_or_default();
                let last: Vec<&str> = tail.lines().rev().take(3).collect();
                let last: Vec<&str> = last.into_iter().rev().collect();
                problem = Some(format!(
                    "no report (mcpcert exited {}): {}",
                    code.map_or("by a signal".into(), |c| c.to_string()),
                    if last.is_empty() { e } else { last.join(" / ") }
                ));
            }
            None
        }
    };
    if let Some(r) = &rep {
        let _ = std::fs::write(dir.join("verdicts.txt"), matrix::verdict_list(&r.cases));
    }
    (matrix::entry_from(&t.name, transport, &target, code, ms, rep.as_ref(), problem), rep)
}

fn line_for(e: &MatrixEntry) -> String {
    let counts = match &e.summary {
        Some(s) => format!("{} pass, {} fail, {} warn, {} n/a, {} error", s.pass, s.fail, s.warn, s.na, s.error),
        None => e.problem.clone().unwrap_or_default(),
    };
    let result = if e.passed {
        "passed".to_string()
    } else if e.why.is_empty() {
        "FAILED".to_string()
    } else {
        format!("FAILED ({})", e.why.join("; "))
    };
    format!("{}: {result}. {counts}; {:.1}s", e.name, e.duration_ms as f64 / 1000.0)
}

/// matrix.json, matrix.html and junit.xml in `out`; the summary line; the
/// exit code (1 if any target did not pass).
fn write_combined(
    out: &Path,
    entries: &[(MatrixEntry, Option<ReadReport>)],
    shard: Option<String>,
    style: JunitStyle,
    console: &mut Console,
) -> u8 {
    let m = Matrix {
        format: MATRIX_FORMAT.into(),
        format_version: MATRIX_FORMAT_VERSION,
        mcpcert_version: env!("CARGO_PKG_VERSION").into(),
        shard: shard.clone(),
        targets: entries.iter().map(|(e, _)| e.clone()).collect(),
    };
    let mut write_failed = false;
    for (name, text) in [
        ("matrix.json", serde_json::to_string_pretty(&m).unwrap_or_default()),
        ("matrix.html", matrix::html(entries, shard.as_deref())),
        ("junit.xml", matrix::junit(entries, style)),
    ] {
        if let Err(e) = std::fs::write(out.join(name), text) {
            console::err_line(format!("error: could not write {}: {e}", out.join(name).display()));
            write_failed = true;
        }
    }
    let failed: Vec<&str> = entries.iter().filter(|(e, _)| !e.passed).map(|(e, _)| e.name.as_str()).collect();
    console.line(format!(
        "\nmatrix result: {}. {} targets, {} passed, {} failed{}",
        if failed.is_empty() && !write_failed { "ok" } else { "FAILED" },
        entries.len(),
        entries.len() - failed.len(),
        failed.len(),
        if failed.is_empty() { String::new() } else { format!(" ({})", failed.join(", ")) }
    ));
    console.line(format!("reports: {0}/matrix.html, {0}/matrix.json, {0}/junit.xml, {0}/<target>/", out.display()));
    if failed.is_empty() && !write_failed { EXIT_OK } else { EXIT_FAILED }
}

/// `mcpcert merge DIR... --out OUT`: the matrices of several shards as one.
pub fn merge(dirs: &[PathBuf], out: &Path, style: JunitStyle) -> u8 {
    let mut entries: Vec<Done> = Vec::new();
    if let Err(e) = std::fs::create_dir_all(out) {
        return usage(format!("cannot create {}: {e}", out.display()));
    }
    let out_abs = out.canonicalize().unwrap_or_else(|_| out.to_path_buf());
    for d in dirs {
        let m = match matrix::read_matrix(d) {
            Ok(m) => m,
            Err(e) => return usage(e),
        };
        let same = d.canonicalize().map(|p| p == out_abs).unwrap_or(false);
        for e in m.targets {
            if entries.iter().any(|(x, _)| x.name == e.name) {
                return usage(format!("{}: target `{}` is in more than one of the matrices", d.display(), e.name));
            }
            let src = d.join(&e.name);
            if !same && src.is_dir() {
                let dst = out.join(&e.name);
                let _ = std::fs::remove_dir_all(&dst);
                if let Err(err) = copy_dir(&src, &dst) {
                    return usage(format!("cannot copy {} to {}: {err}", src.display(), dst.display()));
                }
            }
            let rep = matrix::read_report(&out.join(&e.name).join("report.json")).ok();
            entries.push((e, rep));
        }
    }
    let mut console = Console::new();
    console.line(format!("merge: {} matrices, {} targets into {}", dirs.len(), entries.len(), out.display()));
    write_combined(out, &entries, None, style, &mut console)
}

fn copy_dir(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for e in std::fs::read_dir(from)? {
        let e = e?;
        let p = e.path();
        if p.is_dir() {
            copy_dir(&p, &to.join(e.file_name()))?;
        } else {
            std::fs::copy(&p, to.join(e.file_name()))?;
        }
    }
    Ok(())
}

/// `mcpcert diff OLD NEW`: exit 1 on a regression (a new warning too under
/// --strict; any change at all under --any-change).
pub fn diff_cmd(old: &Path, new: &Path, as_json: bool, strict: bool, any_change: bool) -> u8 {
    let (o, n) = match (diff::load_side(old), diff::load_side(new)) {
        (Ok(o), Ok(n)) => (o, n),
        (Err(e), _) | (_, Err(e)) => return usage(e),
    };
    let single = |s: &diff::Side| s.len() == 1 && s.contains_key("");
    if single(&o) != single(&n) {
        return usage("compare like with like: two reports (or verdict lists), or two folders of targets");
    }
    let mut changes = diff::diff(&o, &n);
    let mut console = Console::new();
    // Two runs of different set-ups: said first, and a case n/a in one of
    // them is no regression.
    if let (true, Some(a), Some(b)) = (single(&o), diff::setup_of(old), diff::setup_of(new))
        && a != b
    {
        diff::across_setups(&mut changes);
        if !as_json {
            console.line(format!(
                "note: the two runs judged different set-ups (old: {a}; new: {b}): a case that applies to one only changed for that reason, so n/a ↔ another verdict is listed as a change, not a regression or a fix"
            ));
        }
    }
    if as_json {
        console.line(serde_json::to_string_pretty(&serde_json::json!({"old": old, "new": new, "changes": changes})).unwrap_or_default());
    } else {
        console.line(diff::render(&changes).trim_end());
    }
    let failing = changes.iter().any(|c| match c.kind {
        diff::Kind::Regression => true,
        diff::Kind::NewWarning => strict,
        _ => any_change,
    });
    if failing { EXIT_FAILED } else { EXIT_OK }
}
