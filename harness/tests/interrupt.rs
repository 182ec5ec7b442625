//! The run under a closed stdout and under signals: the console stops
//! quietly, an interrupt (SIGTERM, SIGHUP, as CI cancel buttons and
//! `timeout` send them) kills the server processes, marks what is left
//! `error: interrupted`, writes every report and exits 128 + the signal.

mod common;

use common::{mcpcert, outdir, refserver, report, report_args, workspace_root};
use std::io::{BufRead, BufReader, Read};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

/// Processes whose command line holds `tag` (mcpcert itself aside).
fn left_behind(tag: &str) -> Vec<String> {
    std::thread::sleep(Duration::from_millis(300));
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok())
        .filter_map(|e| std::fs::read(e.path().join("cmdline")).ok())
        .map(|c| String::from_utf8_lossy(&c).replace('\0', " "))
        .filter(|c| c.contains(tag) && !c.contains("mcpcert run"))
        .collect()
}

fn signal(child: &Child, sig: i32) {
    // SAFETY: kill takes two integers; the pid is our own child's, still
    // unreaped (we wait for it afterwards).
    unsafe {
        libc::kill(child.id() as i32, sig);
    }
}

#[test]
fn a_closed_stdout_ends_the_console_quietly_and_the_reports_are_written() {
    let mut child = mcpcert().arg("list").stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let mut first = String::new();
    BufReader::new(child.stdout.take().unwrap()).read_line(&mut first).unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(!String::from_utf8_lossy(&out.stderr).contains("panicked"));

    let dir = outdir("closed-stdout");
    let mut cmd = mcpcert();
    cmd.args(["run", "--stdio", &format!("{} --era modern", refserver().display())]).stdout(Stdio::piped()).stderr(Stdio::piped());
    report_args(&mut cmd, &dir);
    let mut child = cmd.spawn().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    while !line.contains("running") {
        line.clear();
        stdout.read_line(&mut line).unwrap();
    }
    drop(stdout);
    let mut err = String::new();
    child.stderr.take().unwrap().read_to_string(&mut err).unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(0), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    let r = report(&dir);
    assert_eq!(r["summary"]["total"], r["cases"].as_array().unwrap().len());
    assert_eq!(r["summary"]["error"], 0, "every case ran to its verdict");
}

fn hostile(mode: &str, tag: &str) -> String {
    format!("python3 {} {mode} - {tag}", workspace_root().join("fixtures/hostile/hostile.py").display())
}

#[test]
fn sigterm_mid_run_kills_the_servers_and_writes_every_report() {
    let tag = format!("sigterm-{}", std::process::id());
    let dir = outdir("sigterm");
    let mut cmd = mcpcert();
    // A server that answers one byte at a time: the run takes a while.
    cmd.args(["run", "--stdio", &hostile("trickle", &tag), "--revision", "2026-07-28", "--verbose"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    report_args(&mut cmd, &dir);
    let mut child = cmd.spawn().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    while !line.starts_with("test ") {
        line.clear();
        assert!(stdout.read_line(&mut line).unwrap() > 0, "the run ended before its first case");
    }
    let start = Instant::now();
    signal(&child, libc::SIGTERM);
    let rest = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = std::io::Read::read_to_string(&mut stdout, &mut s);
        s
    });
    let status = child.wait().unwrap();
    assert!(start.elapsed() < Duration::from_secs(5), "the run must stop at once, took {:?}", start.elapsed());
    assert_eq!(status.code(), Some(143));
    let console = rest.join().unwrap();
    let r = report(&dir);
    // The run says it was interrupted, and does not blame the server for
    // the cases the interrupt stopped.
    let why: Vec<&str> = r["outcome"]["why"].as_array().unwrap().iter().map(|w| w.as_str().unwrap()).collect();
    assert_eq!(why[0], "interrupted (SIGTERM)", "{why:?}");
    assert!(why.iter().skip(1).all(|w| w.ends_with("in the cases that finished")), "{why:?}");
    let last = console.lines().find(|l| l.starts_with("test result:")).unwrap_or_default();
    assert!(last.starts_with("test result: FAILED (interrupted (SIGTERM)"), "{console}");
    let cases = r["cases"].as_array().unwrap();
    assert_eq!(cases.len() as u64, r["summary"]["total"].as_u64().unwrap());
    let interrupted =
        cases.iter().filter(|c| c["verdict"] == "error" && c["message"].as_str().unwrap().contains("interrupted (SIGTERM)")).count();
    assert!(interrupted > 0, "the cases not finished say why");
    assert!(std::fs::read_to_string(dir.join("junit.xml")).unwrap().contains("interrupted"));
    assert!(dir.join("report.html").is_file());
    assert!(left_behind(&tag).is_empty(), "server processes left: {:?}", left_behind(&tag));
}

#[test]
fn sighup_while_the_target_starts_stops_the_run_too() {
    let tag = format!("sighup-{}", std::process::id());
    let dir = outdir("sighup");
    let mut cmd = mcpcert();
    // Half a line, then silence: the probe would wait out the start-up timeout.
    cmd.args(["run", "--stdio", &hostile("partial-then-silence", &tag), "--startup-timeout-ms", "20000"])
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    report_args(&mut cmd, &dir);
    let mut child = cmd.spawn().unwrap();
    std::thread::sleep(Duration::from_millis(700));
    let start = Instant::now();
    signal(&child, libc::SIGHUP);
    let status = child.wait().unwrap();
    assert!(start.elapsed() < Duration::from_secs(5), "took {:?}", start.elapsed());
    assert_eq!(status.code(), Some(129));
    let r = report(&dir);
    assert!(
        r["cases"].as_array().unwrap().iter().all(|c| c["verdict"] == "error" && c["message"].as_str().unwrap().contains("SIGHUP")),
        "{r}"
    );
    assert!(left_behind(&tag).is_empty(), "server processes left: {:?}", left_behind(&tag));
}

/// `timeout -s INT N mcpcert …` signals mcpcert and then its process group:
/// two SIGINTs at once. They are one interruption: every report and the
/// summary line are written, exit 130. (Before, the second ended the
/// process at once, and in 4 of 12 runs a report or the summary was
/// missing.)
#[test]
fn two_signals_at_once_are_one_interruption_and_every_report_is_written() {
    for round in 0..4 {
        let tag = format!("sigint-twice-{}-{round}", std::process::id());
        let dir = outdir(&format!("sigint-twice-{round}"));
        let mut cmd = mcpcert();
        cmd.args(["run", "--stdio", &hostile("trickle", &tag), "--revision", "2026-07-28", "--verbose"])
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        report_args(&mut cmd, &dir);
        let mut child = cmd.spawn().unwrap();
        let mut stdout = BufReader::new(child.stdout.take().unwrap());
        let mut line = String::new();
        while !line.starts_with("test ") {
            line.clear();
            assert!(stdout.read_line(&mut line).unwrap() > 0, "the run ended before its first case");
        }
        signal(&child, libc::SIGINT);
        signal(&child, libc::SIGINT);
        let rest = std::thread::spawn(move || {
            let mut s = String::new();
            let _ = std::io::Read::read_to_string(&mut stdout, &mut s);
            s
        });
        let status = child.wait().unwrap();
        let console = rest.join().unwrap();
        assert_eq!(status.code(), Some(130), "round {round}: {console}");
        assert!(console.lines().any(|l| l.starts_with("test result: FAILED (interrupted (SIGINT)")), "round {round}: {console}");
        for f in ["junit.xml", "report.json", "report.html"] {
            assert!(dir.join(f).is_file(), "round {round}: {f} missing");
        }
        assert!(report(&dir)["cases"].as_array().is_some_and(|c| !c.is_empty()));
        assert!(left_behind(&tag).is_empty(), "server processes left: {:?}", left_behind(&tag));
    }
}

/// An interrupt before the cases ran is one line with the count, not a
/// line per case (there were 284 to 422), and the console says the
/// contract was not written.
#[test]
fn an_interrupted_run_says_the_cases_not_run_in_one_line() {
    let dir = outdir("sigint-quiet");
    let mut cmd = mcpcert();
    // A server slow to start: the interrupt comes while the probes wait.
    cmd.args(["run", "--stdio", &format!("{} --era dual --start-delay 4000", refserver().display())])
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    report_args(&mut cmd, &dir);
    let mut child = cmd.spawn().unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    signal(&child, libc::SIGINT);
    let mut console = String::new();
    child.stdout.take().unwrap().read_to_string(&mut console).unwrap();
    assert_eq!(child.wait().unwrap().code(), Some(130), "{console}");
    let r = report(&dir);
    let total = r["summary"]["total"].as_u64().unwrap();
    assert!(total > 100 && r["summary"]["error"] == total, "{}", r["summary"]);
    assert!(console.lines().count() <= 30, "{} lines:\n{console}", console.lines().count());
    assert!(console.contains(&format!("{total} cases not run (ERROR in the reports): the run was interrupted (SIGINT)")), "{console}");
    assert!(!console.lines().any(|l| l.starts_with("test [")), "{console}");
    assert!(console.contains("contract: not written"), "{console}");
}
