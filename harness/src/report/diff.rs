//! `mcpcert diff OLD NEW`: what changed between two runs, per target and
//! case. Either side is a report.json, a verdict list (`<verdict> <case
//! id>` per line), a matrix folder (matrix.json with a folder per target),
//! or a folder of verdict lists `<target>.txt` and/or `<target>/report.json`.

use super::matrix::{read_matrix, read_report, verdicts};
use crate::record::Verdict;
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::Path;

/// The verdicts of one side: per target (`""` for a single report), the
/// verdict of each case, or None when the target wrote no report.
pub type Side = BTreeMap<String, Option<BTreeMap<String, Verdict>>>;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// Passed (or warned, or did not apply) and now fails or errors; or a
    /// target that wrote a report and now writes none.
    Regression,
    /// Passed and now warns (a regression under --strict).
    NewWarning,
    /// Failed or errored and now passes or warns.
    Fix,
    /// Any other change of verdict (pass ↔ n/a, fail ↔ error, warn → pass).
    Changed,
    NewCase,
    RemovedCase,
    NewTarget,
    RemovedTarget,
}

impl Kind {
    fn heading(self) -> &'static str {
        match self {
            Kind::Regression => "regressions",
            Kind::NewWarning => "new warnings",
            Kind::Fix => "fixes",
            Kind::Changed => "other changes",
            Kind::NewCase => "new cases",
            Kind::RemovedCase => "removed cases",
            Kind::NewTarget => "new targets",
            Kind::RemovedTarget => "removed targets",
        }
    }
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Change {
    pub kind: Kind,
    pub target: String,
    /// Empty for a change of a whole target.
    pub case: String,
    pub old: Option<Verdict>,
    pub new: Option<Verdict>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

fn bad(v: Verdict) -> bool {
    matches!(v, Verdict::Fail | Verdict::Error)
}

/// Reads one side of a diff.
pub fn load_side(path: &Path) -> Result<Side, String> {
    let mut side = Side::new();
    if path.is_file() {
        side.insert(String::new(), Some(load_file(path)?));
        return Ok(side);
    }
    if !path.is_dir() {
        return Err(format!("{}: no such file or folder", path.display()));
    }
    // A run's output folder (`mcpcert run --out DIR`): its report.
    if path.join("report.json").is_file() && !path.join("matrix.json").is_file() {
        side.insert(String::new(), Some(load_file(&path.join("report.json"))?));
        return Ok(side);
    }
    if path.join("matrix.json").is_file() {
        for e in read_matrix(path)?.targets {
            let rep = path.join(&e.name).join("report.json");
            let v = if rep.is_file() { Some(read_report(&rep)?).map(|r| verdicts(&r).into_iter().collect()) } else { None };
            side.insert(e.name, v);
        }
        return Ok(side);
    }
    let mut entries: Vec<_> = std::fs::read_dir(path).map_err(|e| format!("{}: {e}", path.display()))?.flatten().collect();
    entries.sort_by_key(|e| e.file_name());
    for e in entries {
        let p = e.path();
        let name = e.file_name().to_string_lossy().into_owned();
        if p.is_file() && name.ends_with(".txt") {
            side.insert(name.trim_end_matches(".txt").to_string(), Some(load_file(&p)?));
        } else if p.join("report.json").is_file() {
            side.insert(name, Some(load_file(&p.join("report.json"))?));
        }
    }
    if side.is_empty() {
        return Err(format!("{}: no matrix.json, no <target>.txt and no <target>/report.json in it", path.display()));
    }
    Ok(side)
}

fn load_file(path: &Path) -> Result<BTreeMap<String, Verdict>, String> {
    if path.extension().is_some_and(|x| x == "json") {
        return Ok(verdicts(&read_report(path)?).into_iter().collect());
    }
    let text = if path.extension().is_some_and(|x| x == "gz") {
        // A gzipped verdict list (as a board's site keeps it).
        use std::io::Read;
        let mut t = String::new();
        std::fs::File::open(path)
            .and_then(|f| flate2::read::GzDecoder::new(f).read_to_string(&mut t))
            .map_err(|e| format!("{}: {e}", path.display()))?;
        t
    } else {
        std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?
    };
    parse_verdict_list(&text).map_err(|e| format!("{}: {e}", path.display()))
}

/// `<verdict> <case id>` per line; blank lines and `#` comments skipped.
pub fn parse_verdict_list(text: &str) -> Result<BTreeMap<String, Verdict>, String> {
    let mut out = BTreeMap::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (v, id) = line.split_once(' ').ok_or_else(|| format!("line {}: expected `<verdict> <case id>`", n + 1))?;
        let v: Verdict = serde_json::from_value(serde_json::Value::String(v.to_string()))
            .map_err(|_| format!("line {}: `{v}` is not a verdict (pass, fail, warn, n/a, error)", n + 1))?;
        out.insert(id.trim().to_string(), v);
    }
    Ok(out)
}

/// Every difference between two sides, regressions first.
pub fn diff(old: &Side, new: &Side) -> Vec<Change> {
    let mut out = Vec::new();
    let whole = |kind, target: &str, note: &str| Change {
        kind,
        target: target.to_string(),
        case: String::new(),
        old: None,
        new: None,
        note: Some(note.to_string()),
    };
    for (t, o) in old {
        match (o, new.get(t)) {
            (_, None) => out.push(whole(Kind::RemovedTarget, t, "not in the new run")),
            (Some(_), Some(None)) => out.push(whole(Kind::Regression, t, "it wrote a report before and none now")),
            (None, Some(Some(_))) => out.push(whole(Kind::Fix, t, "it wrote no report before and does now")),
            (None, Some(None)) => {}
            (Some(o), Some(Some(n))) => {
                for (id, &ov) in o {
                    let kind = match n.get(id) {
                        None => Some(Kind::RemovedCase),
                        Some(&nv) if nv == ov => None,
                        Some(&nv) if bad(nv) && !bad(ov) => Some(Kind::Regression),
                        Some(&nv) if bad(ov) && matches!(nv, Verdict::Pass | Verdict::Warn) => Some(Kind::Fix),
                        Some(&Verdict::Warn) if ov == Verdict::Pass => Some(Kind::NewWarning),
                        Some(_) => Some(Kind::Changed),
                    };
                    if let Some(kind) = kind {
                        out.push(Change { kind, target: t.clone(), case: id.clone(), old: Some(ov), new: n.get(id).copied(), note: None });
                    }
                }
                for (id, &nv) in n.iter().filter(|(id, _)| !o.contains_key(*id)) {
                    out.push(Change { kind: Kind::NewCase, target: t.clone(), case: id.clone(), old: None, new: Some(nv), note: None });
                }
            }
        }
    }
    for t in new.keys().filter(|t| !old.contains_key(*t)) {
        out.push(whole(Kind::NewTarget, t, "not in the old run"));
    }
    out.sort_by(|a, b| (a.kind, &a.target, &a.case).cmp(&(b.kind, &b.target, &b.case)));
    out
}

/// The set-up a single run report judged (transport, revisions served), if
/// `path` is one (a report.json, or a run's output folder).
pub fn setup_of(path: &Path) -> Option<String> {
    let file = if path.is_dir() { path.join("report.json") } else { path.to_path_buf() };
    let r = read_report(&file).ok()?;
    let served = r.served();
    Some(format!("{}, {}", r.transport.as_str(), if served.is_empty() { "no revision served".into() } else { served.join(" and ") }))
}

/// Two runs of different set-ups (transport, revisions served): a case
/// that did not apply to one of them changed for that reason, not because
/// the server got better or worse. Such changes are `Changed`, never a
/// regression or a fix.
pub fn across_setups(changes: &mut [Change]) {
    for c in changes.iter_mut() {
        if matches!(c.kind, Kind::Regression | Kind::Fix | Kind::NewWarning)
            && (c.old == Some(Verdict::NotApplicable) || c.new == Some(Verdict::NotApplicable))
        {
            c.kind = Kind::Changed;
            c.note = Some("n/a in one set-up only".into());
        }
    }
    changes.sort_by(|a, b| (a.kind, &a.target, &a.case).cmp(&(b.kind, &b.target, &b.case)));
}

/// The changes for people, grouped, with a count line at the end.
pub fn render(changes: &[Change]) -> String {
    let word = |v: Option<Verdict>| v.map(Verdict::word).unwrap_or("–");
    let mut out = String::new();
    let mut kinds: Vec<Kind> = changes.iter().map(|c| c.kind).collect();
    kinds.dedup();
    for k in kinds {
        let these: Vec<&Change> = changes.iter().filter(|c| c.kind == k).collect();
        out.push_str(&format!("{} ({}):\n", k.heading(), these.len()));
        for c in these {
            let target = if c.target.is_empty() { String::new() } else { format!("{}  ", c.target) };
            if c.case.is_empty() {
                out.push_str(&format!("  {target}{}\n", c.note.as_deref().unwrap_or("")));
            } else {
                out.push_str(&format!("  {target}{}: {} → {}\n", c.case, word(c.old), word(c.new)));
            }
        }
    }
    let n = |k: Kind| changes.iter().filter(|c| c.kind == k).count();
    out.push_str(&format!(
        "diff: {} regressions, {} new warnings, {} fixes, {} other changes, {} new cases, {} removed cases{}\n",
        n(Kind::Regression),
        n(Kind::NewWarning),
        n(Kind::Fix),
        n(Kind::Changed),
        n(Kind::NewCase),
        n(Kind::RemovedCase),
        match (n(Kind::NewTarget), n(Kind::RemovedTarget)) {
            (0, 0) => String::new(),
            (a, r) => format!(", {a} new targets, {r} removed targets"),
        }
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn side(t: &str, list: &str) -> Side {
        let mut s = Side::new();
        s.insert(t.into(), Some(parse_verdict_list(list).unwrap()));
        s
    }

    #[test]
    fn changes_are_classified() {
        let old = side("a", "pass r\nwarn w\nfail f\npass nw\npass na\nfail gone\nn/a appl");
        let new = side("a", "fail r\nwarn w\npass f\nwarn nw\nn/a na\nerror appl\npass added");
        let d = diff(&old, &new);
        let kind = |id: &str| d.iter().find(|c| c.case == id).map(|c| c.kind);
        assert_eq!(kind("r"), Some(Kind::Regression));
        assert_eq!(kind("appl"), Some(Kind::Regression), "n/a → error is a regression");
        assert_eq!(kind("w"), None);
        assert_eq!(kind("f"), Some(Kind::Fix));
        assert_eq!(kind("nw"), Some(Kind::NewWarning));
        assert_eq!(kind("na"), Some(Kind::Changed));
        assert_eq!(kind("gone"), Some(Kind::RemovedCase));
        assert_eq!(kind("added"), Some(Kind::NewCase));
        assert_eq!(d[0].kind, Kind::Regression, "regressions first");
        assert!(render(&d).contains("diff: 2 regressions, 1 new warnings, 1 fixes, 1 other changes, 1 new cases, 1 removed cases"));
        assert!(diff(&old, &old).is_empty());
    }

    #[test]
    fn a_target_that_stops_reporting_is_a_regression() {
        let old = side("a", "pass r");
        let mut new = Side::new();
        new.insert("a".into(), None);
        new.insert("b".into(), None);
        let d = diff(&old, &new);
        assert_eq!(d.iter().map(|c| c.kind).collect::<Vec<_>>(), vec![Kind::Regression, Kind::NewTarget]);
        assert!(parse_verdict_list("maybe x").is_err());
    }
}
