//! A server's history at case level. Before a server is run again, the
//! verdicts of its previous run are read from its report; after the run the
//! two are compared with `mcpcert diff`'s own comparison (regressions,
//! fixes, new warnings, other changes; a case that is n/a in one set-up
//! only is a change, not a regression), and the result keeps the changed
//! cases. Every version checked keeps its result and verdict list under
//! `versions/<version>/` (the reports are the newest run's only).

use super::ServerResult;
use mcpcert::record::Verdict;
use mcpcert::report::diff::{self, Kind, Side};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

/// The outcome of a server the registry deleted: its folder keeps this
/// mark and its versions; the site leaves it out.
pub const DELETED: &str = "deleted";

/// Marks the server in `dir` deleted, if the board had it; whether it did.
pub fn withdraw(dir: &Path, l: &mcpcert::packages::snapshot::Listed, digest: &str) -> bool {
    let Some(mut r) = super::last_result(dir).filter(|r| r.name == l.name) else { return false };
    if r.outcome == DELETED {
        return false;
    }
    clear(dir);
    r.reason = format!("deleted from the registry at version {} (last checked: {}, {})", l.version, r.version, r.outcome);
    r.outcome = DELETED.into();
    r.version = l.version.clone();
    r.detail.clear();
    r.counts = None;
    r.areas.clear();
    r.case_changes.clear();
    r.compared_with = None;
    r.report = false;
    r.suite_digest = digest.to_string();
    r.checked_at_ms = super::now_ms();
    if let Ok(text) = serde_json::to_string_pretty(&r) {
        let _ = std::fs::write(dir.join("result.json"), text + "\n");
    }
    true
}

/// One case whose verdict changed since the server's previous run.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct CaseChange {
    /// `regression`, `new_warning`, `fix` or `changed` (the kinds of
    /// `mcpcert diff`), or `new_case`: a case the previous run's suites did
    /// not have, listed when it fails, errs or warns.
    pub kind: String,
    pub case: String,
    pub old: String,
    pub new: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// What is kept of the previous run before the server's folder is cleared.
pub struct Previous {
    pub result: ServerResult,
    verdicts: Option<BTreeMap<String, Verdict>>,
    setup: Option<String>,
}

/// Whether a run reached the server, so that its verdicts judge it.
pub fn judged(outcome: &str) -> bool {
    matches!(outcome, "pass" | "fail")
}

/// The previous run of the server `name` whose folder is `dir`, if any.
pub fn previous(dir: &Path, name: &str) -> Option<Previous> {
    let result = super::last_result(dir).filter(|r| r.outcome != DELETED && r.name == name)?;
    // Its version's verdict list (the site keeps the report gzipped).
    let list = dir.join("versions").join(super::share::folder(&result.version)).join(LIST);
    let verdicts = if judged(&result.outcome) { diff::load_side(&list).ok().and_then(|mut s| s.remove("")).flatten() } else { None };
    let setup = Some(setup(&result));
    Some(Previous { result, verdicts, setup })
}

/// A run's set-up as `mcpcert diff` says it: transport, revisions served.
fn setup(r: &ServerResult) -> String {
    let served = if r.revisions.is_empty() { "no revision served".to_string() } else { r.revisions.join(" and ") };
    format!("{}, {served}", r.transport.as_deref().unwrap_or("stdio"))
}

/// Empties `dir` but for `versions/` (each version's result).
pub fn clear(dir: &Path) {
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        if e.file_name() == "versions" {
            continue;
        }
        let p = e.path();
        let _ = if p.is_dir() { std::fs::remove_dir_all(&p) } else { std::fs::remove_file(&p) };
    }
    let _ = std::fs::create_dir_all(dir);
}

/// The changed cases between the previous run and this one (both must
/// have reached the server), and what they compare with.
pub fn compare(prev: Option<&Previous>, dir: &Path, r: &mut ServerResult) {
    let Some(p) = prev else { return };
    r.compared_with =
        Some(format!("{} checked {}", p.result.version, mcpcert::certify::certificate::rfc3339(p.result.checked_at_ms as u128)));
    let (Some(old), true) = (&p.verdicts, judged(&r.outcome)) else { return };
    let report = dir.join("report");
    let Ok(mut new) = diff::load_side(&report) else { return };
    let Some(Some(new)) = new.remove("") else { return };
    let side = |v: &BTreeMap<String, Verdict>| Side::from([(String::new(), Some(v.clone()))]);
    let mut changes = diff::diff(&side(old), &side(&new));
    if let Some(a) = &p.setup
        && *a != setup(r)
    {
        diff::across_setups(&mut changes);
    }
    r.case_changes = changes
        .into_iter()
        .filter(|c| match c.kind {
            Kind::Regression | Kind::NewWarning | Kind::Fix | Kind::Changed => true,
            Kind::NewCase => matches!(c.new, Some(Verdict::Fail | Verdict::Error | Verdict::Warn)),
            _ => false,
        })
        .map(|c| CaseChange {
            kind: serde_json::to_value(c.kind).ok().and_then(|v| v.as_str().map(String::from)).unwrap_or_default(),
            case: c.case,
            old: c.old.map_or("–", Verdict::as_str).to_string(),
            new: c.new.map_or("–", Verdict::as_str).to_string(),
            note: c.note,
        })
        .collect();
}

/// A version's verdict list, gzipped (`mcpcert diff` reads it so).
pub const LIST: &str = "verdicts.txt.gz";

/// Keeps this run's result (without what its page lists: the failing
/// cases, the changes, the stderr) and verdict list as its version's.
pub fn archive(dir: &Path, r: &ServerResult) {
    let to = dir.join("versions").join(super::share::folder(&r.version));
    let _ = std::fs::create_dir_all(&to);
    let mut kept = r.clone();
    kept.failing.clear();
    kept.case_changes.clear();
    kept.detail.clear();
    if let Ok(text) = serde_json::to_string(&kept) {
        let _ = std::fs::write(to.join("result.json"), text + "\n");
    }
    let list = diff::load_side(&dir.join("report")).ok().and_then(|mut s| s.remove("")).flatten();
    match list {
        Some(v) if judged(&r.outcome) => {
            let text: String = v.iter().map(|(id, v)| format!("{} {id}\n", v.as_str())).collect();
            let _ = std::fs::remove_file(to.join("verdicts.txt"));
            if let Ok(f) = std::fs::File::create(to.join(LIST)) {
                use std::io::Write;
                let mut z = flate2::write::GzEncoder::new(f, flate2::Compression::best());
                let _ = z.write_all(text.as_bytes()).and_then(|_| z.finish().map(drop));
            }
        }
        _ => {
            let _ = std::fs::remove_file(to.join(LIST));
        }
    }
}

/// Every version kept for the server in `dir`, newest check first.
pub fn versions(dir: &Path) -> Vec<(String, ServerResult, bool)> {
    let mut out: Vec<(String, ServerResult, bool)> = std::fs::read_dir(dir.join("versions"))
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let r = super::last_result(&e.path())?;
            Some((e.file_name().to_string_lossy().into_owned(), r, e.path().join(LIST).is_file()))
        })
        .collect();
    out.sort_by_key(|v| std::cmp::Reverse(v.1.checked_at_ms));
    out
}

/// The changed cases of one kind, for a line of text.
pub fn cases(r: &ServerResult, kind: &str) -> Vec<String> {
    r.case_changes.iter().filter(|c| c.kind == kind).map(|c| c.case.clone()).collect()
}
