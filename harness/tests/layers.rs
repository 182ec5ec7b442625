//! The shape of the crate, kept: each module imports only the modules
//! before it in the data's journey, the reports read only the record, the
//! check types inside `checks` are leaves, and no source file grows past
//! about 600 lines.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The layers in order; a module may import only modules listed before it.
const ORDER: [&str; 13] =
    ["transport", "wire", "record", "auth", "config", "packages", "session", "checks", "suite", "run", "fuzz", "report", "certify"];

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

fn src() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// `crate::NAME` paths a file refers to.
fn crate_refs(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for (i, _) in text.match_indices("crate::") {
        let name: String = text[i + 7..].chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
        out.insert(name);
    }
    out
}

#[test]
fn modules_import_only_earlier_layers() {
    let mut files = Vec::new();
    rust_files(&src(), &mut files);
    let mut problems = Vec::new();
    for f in &files {
        let rel = f.strip_prefix(src()).unwrap();
        let top = rel.iter().next().unwrap().to_string_lossy().trim_end_matches(".rs").to_string();
        let Some(rank) = ORDER.iter().position(|m| *m == top) else { continue };
        for r in crate_refs(&std::fs::read_to_string(f).unwrap()) {
            let allowed = if top == "report" { r == "record" } else { ORDER[..rank].contains(&r.as_str()) };
            if r != top && ORDER.contains(&r.as_str()) && !allowed {
                problems.push(format!("{} ({top}) imports crate::{r}", rel.display()));
            }
        }
    }
    assert!(problems.is_empty(), "imports against the layering:\n{}", problems.join("\n"));
}

#[test]
fn check_types_are_leaves_inside_checks() {
    // Services shared by the check types; every other file of checks/ holds
    // check types and is imported by nothing but the registry.
    let services = [
        "mod",
        "registry",
        "facts",
        "walk",
        "calls",
        "follow",
        "listen",
        "replay",
        "views",
        "task_run",
        "task_tool",
        "task_input_run",
        "task_listen_run",
        "skill_list",
        "skill_dirs",
        "judge",
    ];
    let dir = src().join("checks");
    let mut leaves = Vec::new();
    for e in std::fs::read_dir(&dir).unwrap().flatten() {
        let name = e.path().file_stem().unwrap().to_string_lossy().to_string();
        if !services.contains(&name.as_str()) {
            leaves.push(name);
        }
    }
    let mut files = Vec::new();
    rust_files(&dir, &mut files);
    let mut problems = Vec::new();
    for f in &files {
        let rel = f.strip_prefix(&dir).unwrap().display().to_string();
        if rel == "registry.rs" || rel == "mod.rs" {
            continue;
        }
        let text = std::fs::read_to_string(f).unwrap();
        for leaf in &leaves {
            if rel.starts_with(leaf.as_str()) {
                continue;
            }
            if text.contains(&format!("super::{leaf}::"))
                || text.contains(&format!("super::{{{leaf}"))
                || text.contains(&format!("checks::{leaf}::"))
            {
                problems.push(format!("checks/{rel} imports the check types of checks/{leaf}"));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn no_source_file_is_much_over_600_lines() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf();
    let mut files = Vec::new();
    rust_files(&src(), &mut files);
    rust_files(&root.join("fixtures/refserver/src"), &mut files);
    let long: BTreeMap<String, usize> = files
        .iter()
        .map(|f| (f.strip_prefix(&root).unwrap().display().to_string(), std::fs::read_to_string(f).unwrap().lines().count()))
        .filter(|(_, n)| *n > 650)
        .collect();
    assert!(long.is_empty(), "split these files: {long:?}");
}

/// The files of `transport/` import one another one way only: the shared
/// types live in `reply.rs`, below the transports, so no two files (and no
/// longer chain) import each other round.
#[test]
fn the_files_of_transport_import_one_another_without_a_circle() {
    let dir = src().join("transport");
    let mut files = Vec::new();
    rust_files(&dir, &mut files);
    let name = |p: &PathBuf| p.file_stem().unwrap().to_string_lossy().to_string();
    let names: BTreeSet<String> = files.iter().map(name).filter(|n| n != "mod").collect();
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for f in files.iter().filter(|f| name(f) != "mod") {
        let text = std::fs::read_to_string(f).unwrap();
        let mut to = BTreeSet::new();
        for (i, _) in text.match_indices("super::") {
            let m: String = text[i + 7..].chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
            if names.contains(&m) && m != name(f) {
                to.insert(m);
            }
        }
        edges.insert(name(f), to);
    }
    // Depth-first: a file reached again while on the path is a circle.
    fn visit(
        n: &str,
        edges: &BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(i) = path.iter().position(|p| p == n) {
            let mut c = path[i..].to_vec();
            c.push(n.to_string());
            return Some(c);
        }
        if done.contains(n) {
            return None;
        }
        path.push(n.to_string());
        for m in edges.get(n).into_iter().flatten() {
            if let Some(c) = visit(m, edges, path, done) {
                return Some(c);
            }
        }
        path.pop();
        done.insert(n.to_string());
        None
    }
    let mut done = BTreeSet::new();
    for n in edges.keys() {
        if let Some(c) = visit(n, &edges, &mut Vec::new(), &mut done) {
            panic!("transport/ files import one another round: {}", c.join(" → "));
        }
    }
}

/// Checks hold the target only through the session: nothing under
/// `checks/` names `transport` (a connection, a frame, a grace period come
/// from the session or the record).
#[test]
fn checks_import_nothing_from_transport() {
    let mut files = Vec::new();
    rust_files(&src().join("checks"), &mut files);
    let naming: Vec<String> = files
        .iter()
        .filter(|f| std::fs::read_to_string(f).unwrap().contains("crate::transport"))
        .map(|f| f.strip_prefix(src()).unwrap().display().to_string())
        .collect();
    assert!(naming.is_empty(), "checks/ files that import transport: {naming:?}");
}
