//! The contract a run writes (reports/contract.json) and `mcpcert
//! contract-diff` over two of them, end to end.

mod common;
use common::*;
use serde_json::{Value, json};

fn run_contract(name: &str) -> (std::path::PathBuf, Value) {
    let dir = outdir(name);
    let server = format!("{} --stdio --era dual", refserver().display());
    let mut cmd = mcpcert();
    // One case is enough: the contract is gathered whatever the selection.
    cmd.args(["run", "--stdio", &server, "2026-07-28/lifecycle/discover-result-shape", "--exact", "--contract"])
        .arg(dir.join("contract.json"));
    report_args(&mut cmd, &dir);
    let out = cmd.output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stdout));
    let path = dir.join("contract.json");
    let c: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    (path, c)
}

fn diff(old: &std::path::Path, new: &std::path::Path) -> (i32, String) {
    let out = mcpcert().arg("contract-diff").arg(old).arg(new).output().unwrap();
    (out.status.code().unwrap_or(-1), format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr)))
}

#[test]
fn a_run_writes_the_contract_of_the_revisions_it_tested() {
    let (_, c) = run_contract("contract-written");
    assert_eq!(c["format"], "mcpcert-contract");
    let revs = c["revisions"].as_array().unwrap();
    assert_eq!(revs.len(), 1, "only the revision of the selected case: {c}");
    let r = &revs[0];
    assert_eq!(r["revision"], "2026-07-28");
    assert_eq!(r["server_info"]["name"], "mcpcert-refserver");
    assert_eq!(r["tools"]["complete"], true);
    let tools: Vec<&str> = r["tools"]["items"].as_array().unwrap().iter().filter_map(|t| t["name"].as_str()).collect();
    assert!(tools.contains(&"echo"), "{tools:?}");
    assert!(r["tools"]["items"][0]["inputSchema"].is_object(), "descriptors are whole");
    assert!(r["prompts"]["items"].as_array().is_some_and(|p| !p.is_empty()));
    assert!(r["resource_templates"]["items"].as_array().is_some_and(|p| !p.is_empty()));
}

#[test]
fn contract_diff_exits_1_on_a_breaking_change_and_0_otherwise() {
    let (old, c) = run_contract("contract-diff");
    let dir = old.parent().unwrap().to_path_buf();
    let (code, out) = diff(&old, &old);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("0 breaking, 0 compatible"), "{out}");

    // A compatible release: one tool more.
    let mut added = c.clone();
    added["revisions"][0]["tools"]["items"].as_array_mut().unwrap().push(json!({"name": "new_tool", "inputSchema": {"type": "object"}}));
    let added_path = dir.join("added.json");
    std::fs::write(&added_path, added.to_string()).unwrap();
    let (code, out) = diff(&old, &added_path);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("compatible") && out.contains("tool new_tool: added"), "{out}");

    // A breaking one: the first tool gone.
    let mut removed = c.clone();
    let first = removed["revisions"][0]["tools"]["items"].as_array_mut().unwrap().remove(0);
    let removed_path = dir.join("removed.json");
    std::fs::write(&removed_path, removed.to_string()).unwrap();
    let (code, out) = diff(&old, &removed_path);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains(&format!("BREAKING                  tool {}: removed", first["name"].as_str().unwrap())), "{out}");

    // JSON output for machines.
    let o = mcpcert().args(["contract-diff", "--json"]).arg(&old).arg(&removed_path).output().unwrap();
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["changes"][0]["class"], "breaking");

    // What is not a contract is refused.
    let junk = dir.join("junk.json");
    std::fs::write(&junk, "{\"format\": \"something-else\"}").unwrap();
    let (code, out) = diff(&old, &junk);
    assert_eq!(code, 2, "{out}");
    assert!(out.contains("not an mcpcert contract") || out.contains("format"), "{out}");
}
