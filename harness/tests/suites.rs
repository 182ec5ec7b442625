//! A suite file with a typo is refused at load: exit 2, with the file and
//! the JSON path in the message, before any server is started.

mod common;

use common::{mcpcert, outdir, refserver, workspace_root};
use std::path::Path;

/// A copy of the shipped suites with one text replaced in one file.
fn suites_with(name: &str, file: &str, from: &str, to: &str) -> std::path::PathBuf {
    let dir = outdir(name).join("suites");
    for rev in ["2026-07-28", "2025-11-25"] {
        std::fs::create_dir_all(dir.join(rev)).unwrap();
        for e in std::fs::read_dir(workspace_root().join("suites").join(rev)).unwrap().flatten() {
            std::fs::copy(e.path(), dir.join(rev).join(e.file_name())).unwrap();
        }
    }
    let p = dir.join(file);
    let text = std::fs::read_to_string(&p).unwrap();
    assert!(text.contains(from), "{file} has no {from:?}");
    std::fs::write(&p, text.replacen(from, to, 1)).unwrap();
    dir
}

fn refused(dir: &Path, file: &str, path: &str, words: &str) {
    let reports = dir.parent().unwrap().join("reports");
    let server = format!("{} --stdio --era modern", refserver().display());
    for args in [vec!["list", "--suites", dir.to_str().unwrap()], vec!["run", "--suites", dir.to_str().unwrap(), "--stdio", &server]] {
        let mut cmd = mcpcert();
        cmd.args(&args);
        if args[0] == "run" {
            cmd.arg("--json").arg(reports.join("report.json"));
        }
        let out = cmd.output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(&format!("suite file {file}: at {path}: ")), "{args:?}: {err}");
        assert!(err.contains(words), "{args:?}: {err}");
        assert!(!reports.join("report.json").exists(), "no reports for a suite that does not load");
    }
}

#[test]
fn a_misspelt_action_name_is_exit_2_naming_file_and_path() {
    let dir =
        suites_with("typo-action", "2026-07-28/20-tools.json", "\"action\": \"tools_cache_hints\"", "\"action\": \"tools_cache_hint\"");
    refused(
        &dir,
        "2026-07-28/20-tools.json",
        "/cases/1/steps/0/action",
        "unknown action `tools_cache_hint` (did you mean `tools_cache_hints`?)",
    );
}

#[test]
fn a_misspelt_with_key_is_exit_2_naming_file_and_path() {
    let dir = suites_with("typo-with", "2026-07-28/20-tools.json", "\"rule\": \"name\"", "\"rul\": \"name\"");
    refused(&dir, "2026-07-28/20-tools.json", "/cases/6/steps/0/with", "unknown field `rul`");
    // A known key whose value is not one the check takes.
    let dir = suites_with("typo-value", "2026-07-28/40-headers.json", "\"probe\": \"missing\"", "\"probe\": \"mising\"");
    refused(&dir, "2026-07-28/40-headers.json", "/cases/0/steps/0/with", "mising");
}

/// One defect, one failure: a negative probe (a step whose answer must be
/// a JSON-RPC error or an HTTP error status) never goes on the connection
/// the cases that judge normal behaviour share: a malformed one (another
/// `_meta`, version or headers than a conforming client sends, or a raw
/// HTTP request) on a connection or process of its own (`fresh`), a
/// well-formed one at least on the connection negative probes share
/// (`negative`), so that state it leaves in a server cannot fail the
/// other cases.
#[test]
fn negative_probes_are_sent_on_connections_of_their_own() {
    let mut problems = Vec::new();
    for rev in ["2026-07-28", "2025-11-25"] {
        for e in std::fs::read_dir(workspace_root().join("suites").join(rev)).unwrap().flatten() {
            let file: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(e.path()).unwrap()).unwrap();
            for c in file["cases"].as_array().unwrap() {
                let negative = c["expect"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|x| x.get("error").is_some() || x.get("http_status").and_then(|s| s.as_u64()).is_some_and(|s| s >= 400));
                if !negative {
                    continue;
                }
                for s in c["steps"].as_array().unwrap() {
                    let yes = |step: &serde_json::Value, k: &str| step.get(k) == Some(&serde_json::json!(true));
                    if let Some(step) = s.get("http") {
                        if !yes(step, "fresh") {
                            problems.push(format!("{}: a raw HTTP negative probe without \"fresh\": true", c["id"]));
                        }
                    } else if let Some(step) = s.get("send") {
                        let malformed = step.get("meta").is_some_and(|m| m != "full" && m != "no-client-info")
                            || step.get("version").is_some()
                            || step.get("headers").is_some();
                        if malformed && !yes(step, "fresh") {
                            problems.push(format!("{}: a malformed negative probe without \"fresh\": true", c["id"]));
                        } else if !malformed && !yes(step, "fresh") && !yes(step, "negative") {
                            problems.push(format!("{}: a negative probe on the main connection (give it \"negative\": true)", c["id"]));
                        }
                    }
                }
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// A whole-run audit leaves to the cases it names (`except`) the traffic
/// they judge themselves: each name must be a case of the catalogue, or the
/// audit would judge (and fail) that traffic a second time.
#[test]
fn an_audits_exceptions_name_cases_of_the_catalogue() {
    let catalog = mcpcert::suite::load_builtin().unwrap();
    let known: std::collections::BTreeSet<&str> = catalog.cases.iter().map(|c| c.id.as_str()).collect();
    let mut seen = 0;
    for dir in std::fs::read_dir(workspace_root().join("suites")).unwrap().flatten().filter(|d| d.path().is_dir()) {
        for f in std::fs::read_dir(dir.path()).unwrap().flatten() {
            let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(f.path()).unwrap()).unwrap();
            for case in v["cases"].as_array().into_iter().flatten() {
                for step in case["steps"].as_array().into_iter().flatten() {
                    for id in step.pointer("/with/except").and_then(|e| e.as_array()).into_iter().flatten() {
                        seen += 1;
                        assert!(known.contains(id.as_str().unwrap_or("")), "{}: except names no case: {id}", case["id"]);
                    }
                }
            }
        }
    }
    assert!(seen >= 2, "the input request audit leaves two cases their own traffic");
}

/// A basis that names a keyword quotes the sentence that carries it; and
/// the wire audit, whose findings quote MUSTs, rests on the MUST that
/// every message follows JSON-RPC (it quoted a sentence with no keyword).
#[test]
fn a_basis_quotes_the_sentence_that_carries_its_keyword() {
    use mcpcert::record::Keyword;
    let catalog = mcpcert::suite::load_builtin().unwrap();
    let mut problems = Vec::new();
    for c in &catalog.cases {
        let words: &[&str] = match c.basis.keyword {
            Keyword::Must => &["MUST", "REQUIRED", "SHALL"],
            Keyword::MustNot => &["MUST NOT", "SHALL NOT"],
            Keyword::Should => &["SHOULD", "RECOMMENDED"],
            Keyword::ShouldNot => &["SHOULD NOT", "NOT RECOMMENDED"],
            Keyword::May => &["MAY", "OPTIONAL"],
            _ => continue,
        };
        if !words.iter().any(|w| c.basis.quote.contains(w)) {
            problems.push(format!("{}: basis keyword {:?}, quote without it: {}", c.id, c.basis.keyword, c.basis.quote));
        }
        if c.id.ends_with("/wire/server-frames-valid") && c.basis.keyword != Keyword::Must {
            problems.push(format!("{}: rests on no MUST", c.id));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
