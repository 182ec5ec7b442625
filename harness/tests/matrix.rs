//! `mcpcert matrix`, `merge` and `diff` end to end on the reference server:
//! one report per target and the combined ones, the same verdicts whatever
//! `-j` or sharding, and a diff that fails on a regression only.

mod common;
use common::*;
use std::path::Path;

fn targets(dir: &Path, fault_in_b: bool) -> std::path::PathBuf {
    let r = refserver().display().to_string();
    let b = if fault_in_b { format!("{r} --stdio --era modern --fault discover-no-ttl") } else { format!("{r} --stdio --era modern") };
    let text = format!(
        "[[target]]\nname = \"a\"\ncommand = \"{r} --stdio --era dual\"\n\n[[target]]\nname = \"b\"\ncommand = \"{b}\"\n\n[[target]]\nname = \"gone\"\ncommand = \"/nonexistent/mcp-server\"\n\n[[target]]\nname = \"legacy\"\ncommand = \"{r} --stdio --era legacy\"\nargs = [\"--revision\", \"2025-11-25\"]\n"
    );
    std::fs::create_dir_all(dir).unwrap();
    let p = dir.join(if fault_in_b { "faulty.toml" } else { "clean.toml" });
    std::fs::write(&p, text).unwrap();
    p
}

fn mcp(args: &[&str]) -> (i32, String) {
    let out = mcpcert().args(args).output().unwrap();
    (out.status.code().unwrap_or(-1), format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr)))
}

fn json(p: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

#[test]
fn a_matrix_writes_every_target_and_the_combined_reports() {
    let dir = outdir("matrix-main");
    let t = targets(&dir, true);
    let out = dir.join("out");
    let (code, console) = mcp(&["matrix", t.to_str().unwrap(), "-j", "2", "--out", out.to_str().unwrap()]);
    assert_eq!(code, 1, "a target failed: {console}");
    assert!(console.contains("matrix result: FAILED. 4 targets, 2 passed, 2 failed (b, gone)"), "{console}");

    let m = json(&out.join("matrix.json"));
    assert_eq!(m["format"], "mcpcert-matrix");
    let names: Vec<&str> = m["targets"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["a", "b", "gone", "legacy"], "the targets file's order");
    let b = &m["targets"][1];
    assert_eq!((b["passed"].as_bool(), b["exit_code"].as_i64()), (Some(false), Some(1)));
    assert_eq!(b["summary"]["fail"], 2);
    assert_eq!(m["targets"][2]["why"][0], "the target could not be reached");
    assert_eq!(m["targets"][3]["summary"]["n/a"].as_u64(), json(&out.join("legacy/report.json"))["summary"]["n/a"].as_u64());
    for n in names {
        for f in ["report.json", "report.html", "junit.xml", "console.log", "verdicts.txt"] {
            assert!(out.join(n).join(f).is_file(), "{n}/{f}");
        }
    }
    // Each target's run sees only its own revision option.
    assert!(json(&out.join("legacy/report.json"))["revision_requested"] == "2025-11-25");

    let junit = std::fs::read_to_string(out.join("junit.xml")).unwrap();
    assert!(junit.contains("name=\"b: 2026-07-28/lifecycle\""), "suites carry the target's name");
    assert!(junit.contains("name=\"a: 2025-11-25/tools\""));
    let html = std::fs::read_to_string(out.join("matrix.html")).unwrap();
    assert!(html.contains("href=\"b/report.html#case-2026-07-28-lifecycle-discover-result-shape\""), "cells link to the target's page");
    assert!(html.contains("<a href=\"a/report.html\">a</a>"));

    // Failed targets first; rows with a failure first, then rows that
    // differ between targets, then the rest; rows n/a on every target
    // folded away; a filter by verdict and text.
    let targets_table = &html[html.find("id=targets").unwrap()..html.find("Cases × targets").unwrap()];
    let pos = |n: &str| targets_table.find(&format!("id=\"t-{n}\"")).unwrap();
    assert!(pos("b") < pos("a") && pos("gone") < pos("a") && pos("b") < pos("legacy"), "failed targets first");
    let cases_table = &html[html.find("id=cases").unwrap()..];
    let cases_table = &cases_table[..cases_table.find("</table>").unwrap()];
    let kinds: Vec<&str> =
        cases_table.match_indices("class=\"kind ").map(|(i, _)| cases_table[i + 12..].split('"').next().unwrap()).collect();
    let rank = |k: &&str| ["failing", "differing", "same"].iter().position(|x| x == k).unwrap();
    assert!(kinds.contains(&"failing") && kinds.contains(&"differing"), "{kinds:?}");
    assert!(kinds.windows(2).all(|w| rank(&w[0]) <= rank(&w[1])), "failing rows, then differing, then the same: {kinds:?}");
    assert!(!kinds.contains(&"na-everywhere"), "n/a-everywhere rows are not in the main table");
    let folded = &html[html.find("<details class=fold id=na-everywhere>").expect("n/a rows folded")..];
    assert!(folded.contains("class=\"kind na-everywhere\""));
    assert!(html.contains("<input type=search id=q") && html.contains("<input type=checkbox value=fail checked>"), "a filter");
}

#[test]
fn verdicts_do_not_depend_on_jobs_or_shards_and_diff_finds_regressions() {
    let dir = outdir("matrix-diff");
    let clean = targets(&dir, false);
    let faulty = targets(&dir, true);
    let run = |t: &Path, out: &str, extra: &[&str]| {
        let mut args = vec!["matrix", t.to_str().unwrap(), "--out"];
        let o = dir.join(out);
        let o = o.to_str().unwrap().to_string();
        args.push(&o);
        args.extend_from_slice(extra);
        mcp(&args)
    };
    let d = |name: &str| dir.join(name).to_str().unwrap().to_string();
    run(&clean, "j1", &["-j", "1"]);
    run(&clean, "j3", &["-j", "3"]);
    let (code, out) = mcp(&["diff", &d("j1"), &d("j3"), "--any-change"]);
    assert_eq!(code, 0, "the same verdicts with -j 1 and -j 3:\n{out}");

    // Two shards, merged, are the whole matrix.
    run(&clean, "s1", &["--shard", "1/2"]);
    run(&clean, "s2", &["--shard", "2/2"]);
    let s1 = json(&dir.join("s1/matrix.json"));
    assert_eq!(s1["shard"], "1/2");
    assert_eq!(s1["targets"].as_array().unwrap().len(), 2);
    let (code, out) = mcp(&["merge", &d("s1"), &d("s2"), "--out", &d("merged")]);
    assert_eq!(code, 1, "a target of the merged matrix fails (gone): {out}");
    let merged = json(&dir.join("merged/matrix.json"));
    let mut names: Vec<&str> = merged["targets"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    names.sort();
    assert_eq!(names, ["a", "b", "gone", "legacy"]);
    assert!(dir.join("merged/b/report.html").is_file(), "the shards' folders are copied");
    let (code, out) = mcp(&["diff", &d("j1"), &d("merged"), "--any-change"]);
    assert_eq!(code, 0, "merged shards equal one run:\n{out}");
    let (code, out) = mcp(&["merge", &d("s1"), &d("s1"), "--out", &d("twice")]);
    assert_eq!(code, 2, "a target in two matrices is refused: {out}");

    // An injected regression: b now breaks a MUST.
    run(&faulty, "faulty", &[]);
    let (code, out) = mcp(&["diff", &d("j1"), &d("faulty")]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("regressions (2):"), "{out}");
    assert!(out.contains("b  2026-07-28/lifecycle/discover-result-shape: pass → FAIL"), "{out}");
    // The other way round it is a fix, and that passes.
    let (code, out) = mcp(&["diff", &d("faulty"), &d("j1")]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("fixes (2):"), "{out}");

    // Single reports and verdict lists compare too.
    let (code, _) = mcp(&["diff", &format!("{}/b/report.json", d("j1")), &format!("{}/b/verdicts.txt", d("faulty"))]);
    assert_eq!(code, 1);
    let (code, out) = mcp(&["diff", &format!("{}/b/report.json", d("j1")), &d("faulty")]);
    assert_eq!(code, 2, "a report against a folder is refused: {out}");
}

#[test]
fn a_bad_targets_file_is_a_usage_error_naming_the_problem() {
    let dir = outdir("matrix-bad");
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join("t.toml");
    std::fs::write(&p, "[[target]]\nname = \"x\"\ncomand = \"typo\"\n").unwrap();
    let (code, out) = mcp(&["matrix", p.to_str().unwrap(), "--out", dir.join("o").to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(out.contains("unknown field `comand`"), "{out}");
}

/// The start-up timeout measures the server, not a machine mcpcert itself
/// crowds: four targets whose start-up takes CPU time run at once, each
/// with the load check, and none is called unreachable, and no case errs
/// for a start that timed out (the probes' processes start one at a time,
/// the pool waits for them, fresh processes start a few at a time, the
/// load check's processes are warmed before the replay).
#[test]
fn targets_that_start_slowly_are_not_unreachable_when_run_together() {
    let dir = outdir("matrix-slow-start");
    let hostile = workspace_root().join("fixtures/hostile/hostile.py");
    let mut text = String::new();
    for i in 0..4 {
        text.push_str(&format!("[[target]]\nname = \"slow{i}\"\ncommand = \"python3 {} slow-start 0.4\"\n\n", hostile.display()));
    }
    let t = dir.join("slow.toml");
    std::fs::write(&t, text).unwrap();
    let out = dir.join("out");
    let (_, console) = mcp(&[
        "matrix",
        t.to_str().unwrap(),
        "-j",
        "4",
        "--out",
        out.to_str().unwrap(),
        "--",
        "--startup-timeout-ms",
        "3000",
        "--load",
        "4",
    ]);
    let m = json(&out.join("matrix.json"));
    for target in m["targets"].as_array().unwrap() {
        assert_ne!(target["exit_code"], 3, "a slow start called unreachable: {target}\n{console}");
        let name = target["name"].as_str().unwrap();
        let r = json(&out.join(name).join("report.json"));
        let timed_out: Vec<String> = r["cases"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| c["verdict"] == "error")
            .map(|c| format!("{}: {}", c["id"], c["message"]))
            .collect();
        assert!(timed_out.is_empty(), "{name}: cases erred:\n{}", timed_out.join("\n"));
    }
}

/// `mcpcert diff A B` takes two `run` output folders; two runs of
/// different set-ups (here stdio, then HTTP) say so, and a case that did
/// not apply to the first (an HTTP-only rule) and fails in the second is a
/// change, not a regression. (Before, the folders were read as folders of
/// targets, and n/a → FAIL failed the diff.)
#[test]
fn diff_of_two_run_folders_of_different_set_ups_is_no_regression() {
    let a = outdir("diff-setup-stdio");
    let b = outdir("diff-setup-http");
    let mut run = mcpcert();
    run.args(["run", "--stdio", &format!("{} --stdio --era modern", refserver().display()), "--out"]).arg(&a);
    run.output().unwrap();
    let s = start_http(&["--era".into(), "modern".into(), "--fault".into(), "http-get-200".into()]);
    let mut run = mcpcert();
    run.args(["run", "--http", &s.url, "--allowed-origin", "http://localhost", "--out"]).arg(&b);
    run.output().unwrap();
    let (code, out) = mcp(&["diff", a.to_str().unwrap(), b.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("note: the two runs judged different set-ups (old: stdio, 2026-07-28; new: http, 2026-07-28)"), "{out}");
    assert!(out.contains("2026-07-28/lifecycle/http-get-405"), "the change is listed: {out}");
    // The same set-up: a case that starts warning (a SHOULD) is a new
    // warning, a regression under --strict.
    let c = outdir("diff-setup-http-2");
    let s2 = start_http(&["--era".into(), "modern".into()]);
    let mut run = mcpcert();
    run.args(["run", "--http", &s2.url, "--allowed-origin", "http://localhost", "--out"]).arg(&c);
    run.output().unwrap();
    let (code, out) = mcp(&["diff", "--strict", c.to_str().unwrap(), b.to_str().unwrap()]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("2026-07-28/lifecycle/http-get-405: pass → warn"), "{out}");
    assert!(!out.contains("note: the two runs"), "{out}");
}
