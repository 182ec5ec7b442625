//! Loading suite files: JSON, checked against the suite format's own JSON
//! Schema (suites/suite.schema.json), then turned into the model, which
//! resolves every action through the checks registry (typed arguments,
//! unknown keys rejected) and compiles every inline schema. Any problem is
//! a `LoadError` naming the file and the JSON path inside it. The built-in
//! suites skip the format check and compile their inline schemas when a
//! case first needs them: the same files, loaded from suites/ with every
//! check, pass the tests (`builtin_list_matches_the_suites_folder_and_loads`).

use super::{Applies, Assertion, Case, Catalog, Expectation, RawHttp, SchemaCell, SendStep, SpecRef, Step};
use crate::checks::{self, Need};
use crate::record::{Basis, Level};
use crate::wire::{Era, Revision};
use serde::Deserialize;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use std::collections::HashSet;
use std::path::Path;
use std::sync::Arc;

pub const FORMAT_SCHEMA: &str = include_str!("../../suites/suite.schema.json");

/// The suites shipped inside the binary, in run order.
pub const BUILTIN: &[(&str, &str)] = &[
    ("2026-07-28/10-lifecycle.json", include_str!("../../suites/2026-07-28/10-lifecycle.json")),
    ("2026-07-28/20-tools.json", include_str!("../../suites/2026-07-28/20-tools.json")),
    ("2026-07-28/30-lists.json", include_str!("../../suites/2026-07-28/30-lists.json")),
    ("2026-07-28/40-headers.json", include_str!("../../suites/2026-07-28/40-headers.json")),
    ("2026-07-28/45-auth.json", include_str!("../../suites/2026-07-28/45-auth.json")),
    ("2026-07-28/50-completion.json", include_str!("../../suites/2026-07-28/50-completion.json")),
    ("2026-07-28/55-resources.json", include_str!("../../suites/2026-07-28/55-resources.json")),
    ("2026-07-28/56-prompts.json", include_str!("../../suites/2026-07-28/56-prompts.json")),
    ("2026-07-28/57-roles.json", include_str!("../../suites/2026-07-28/57-roles.json")),
    ("2026-07-28/58-subscriptions.json", include_str!("../../suites/2026-07-28/58-subscriptions.json")),
    ("2026-07-28/60-input-required.json", include_str!("../../suites/2026-07-28/60-input-required.json")),
    ("2026-07-28/70-tasks.json", include_str!("../../suites/2026-07-28/70-tasks.json")),
    ("2026-07-28/71-skills.json", include_str!("../../suites/2026-07-28/71-skills.json")),
    ("2026-07-28/72-apps.json", include_str!("../../suites/2026-07-28/72-apps.json")),
    ("2026-07-28/85-conformance.json", include_str!("../../suites/2026-07-28/85-conformance.json")),
    ("2026-07-28/90-wire.json", include_str!("../../suites/2026-07-28/90-wire.json")),
    ("2026-07-28/95-load.json", include_str!("../../suites/2026-07-28/95-load.json")),
    ("2026-07-28/99-end.json", include_str!("../../suites/2026-07-28/99-end.json")),
    ("2025-11-25/10-lifecycle.json", include_str!("../../suites/2025-11-25/10-lifecycle.json")),
    ("2025-11-25/20-tools.json", include_str!("../../suites/2025-11-25/20-tools.json")),
    ("2025-11-25/30-lists.json", include_str!("../../suites/2025-11-25/30-lists.json")),
    ("2025-11-25/40-headers.json", include_str!("../../suites/2025-11-25/40-headers.json")),
    ("2025-11-25/45-auth.json", include_str!("../../suites/2025-11-25/45-auth.json")),
    ("2025-11-25/50-completion.json", include_str!("../../suites/2025-11-25/50-completion.json")),
    ("2025-11-25/55-resources.json", include_str!("../../suites/2025-11-25/55-resources.json")),
    ("2025-11-25/56-prompts.json", include_str!("../../suites/2025-11-25/56-prompts.json")),
    ("2025-11-25/70-tasks.json", include_str!("../../suites/2025-11-25/70-tasks.json")),
    ("2025-11-25/72-apps.json", include_str!("../../suites/2025-11-25/72-apps.json")),
    ("2025-11-25/85-conformance.json", include_str!("../../suites/2025-11-25/85-conformance.json")),
    ("2025-11-25/90-wire.json", include_str!("../../suites/2025-11-25/90-wire.json")),
    ("2025-11-25/95-load.json", include_str!("../../suites/2025-11-25/95-load.json")),
    ("2025-03-26/90-wire.json", include_str!("../../suites/2025-03-26/90-wire.json")),
    ("2024-11-05/40-transport.json", include_str!("../../suites/2024-11-05/40-transport.json")),
];

#[derive(Deserialize)]
struct RawSuite {
    revision: Revision,
    area: String,
    cases: Vec<RawCase>,
}

#[derive(Deserialize, Clone)]
struct RawCase {
    id: String,
    title: String,
    level: Level,
    spec: SpecRef,
    basis: Basis,
    #[serde(default)]
    applies: Applies,
    steps: Vec<RawStep>,
    expect: Vec<RawExpectation>,
    #[serde(default)]
    notes: Option<String>,
    #[serde(default)]
    answers: Vec<String>,
    #[serde(default)]
    beyond: Vec<String>,
    /// The oldest revision of the file's era whose text makes the same
    /// rule: the case is also a case of each revision from it to the
    /// file's (its id re-prefixed; no requirement-set scenarios).
    #[serde(default)]
    since: Option<Revision>,
    /// What differs in an older revision: its own sentence, anchor, title,
    /// level or applicability.
    #[serde(default)]
    older: std::collections::BTreeMap<Revision, Older>,
}

/// A case as an older revision states it (each field replaces the case's).
#[derive(Deserialize, Clone, Default)]
#[serde(deny_unknown_fields)]
struct Older {
    #[serde(default)]
    title: Option<String>,
    #[serde(default)]
    level: Option<Level>,
    #[serde(default)]
    spec: Option<SpecRef>,
    #[serde(default)]
    basis: Option<Basis>,
    #[serde(default)]
    applies: Option<Applies>,
    #[serde(default)]
    notes: Option<String>,
}

#[derive(Deserialize, Clone)]
struct RawStep {
    #[serde(default, rename = "as")]
    name: Option<String>,
    #[serde(default)]
    send: Option<SendStep>,
    #[serde(default)]
    http: Option<RawHttp>,
    #[serde(default)]
    action: Option<String>,
    #[serde(default)]
    with: Option<Value>,
}

#[derive(Deserialize, Clone)]
#[serde(untagged)]
enum OneOrMany {
    One(i64),
    Many(Vec<i64>),
}

impl OneOrMany {
    fn into_vec(self) -> Vec<i64> {
        match self {
            OneOrMany::One(x) => vec![x],
            OneOrMany::Many(v) => v,
        }
    }
}

#[derive(Deserialize, Clone)]
struct SchemaAt {
    #[serde(default)]
    pointer: String,
    #[serde(default)]
    name: String,
    schema: Value,
}

#[derive(Deserialize, Clone)]
struct RawExpectation {
    #[serde(default)]
    step: Option<String>,
    #[serde(default)]
    says: Option<String>,
    #[serde(default)]
    result: Option<String>,
    #[serde(default)]
    error: Option<OneOrMany>,
    #[serde(default)]
    http_status: Option<OneOrMany>,
    #[serde(default, rename = "match")]
    matches: Option<SchemaAt>,
    #[serde(default)]
    absent: Option<String>,
    #[serde(default)]
    header_absent: Option<String>,
    #[serde(default)]
    id_echoed: Option<bool>,
    #[serde(default)]
    header: Option<SchemaAt>,
}

/// A suite-file problem: the file and the JSON path inside it.
#[derive(Debug, Clone, thiserror::Error)]
#[error("suite file {file}: at {}: {problem}", if path.is_empty() { "(root)" } else { path })]
pub struct LoadError {
    pub file: String,
    pub path: String,
    pub problem: String,
}

fn format_validator() -> jsonschema::Validator {
    let schema: Value = serde_json::from_str(FORMAT_SCHEMA).expect("suite format schema is JSON");
    jsonschema::options().offline().build(&schema).expect("suite format schema compiles")
}

/// Parse one suite file's text, checking it against the suite format when
/// a validator is given (the built-in suites were checked when mcpcert's
/// tests ran: the same text, loaded from suites/, must pass the format).
fn parse_file(name: &str, text: &str, validator: Option<&jsonschema::Validator>) -> Result<(Revision, Vec<Case>), LoadError> {
    let err = |path: String, problem: String| LoadError { file: name.to_string(), path, problem };
    let suite: RawSuite = match validator {
        // Straight into the suite's types: no JSON tree in between.
        None => serde_json::from_str(text).map_err(|e| err(String::new(), e.to_string()))?,
        Some(validator) => {
            let doc: Value = serde_json::from_str(text).map_err(|e| err(String::new(), format!("not valid JSON: {e}")))?;
            // is_valid stops at the first problem and builds no error: the
            // common case (a valid file) costs far less than collecting errors.
            if !validator.is_valid(&doc)
                && let Some(e) = validator.iter_errors(&doc).next()
            {
                let path = e.instance_path().to_string();
                // An unknown action: name the close ones, not just "not one of".
                if let Some(Value::String(name)) = path.ends_with("/action").then(|| doc.pointer(&path)).flatten() {
                    return Err(err(path, unknown_action(name)));
                }
                return Err(err(path, e.to_string()));
            }
            serde_json::from_value(doc).map_err(|e| err(String::new(), e.to_string()))?
        }
    };
    let rev = suite.revision;
    let mut cases = Vec::new();
    for (i, raw) in suite.cases.into_iter().enumerate() {
        let at = |rest: &str| format!("/cases/{i}{rest}");
        // The revisions the case is a case of: the file's, and from
        // `since` on (same era, older) each one up to it.
        let mut revs = vec![rev];
        if let Some(since) = raw.since {
            if since.era() != rev.era() || !rev.at_least(since) {
                return Err(err(at("/since"), format!("`since` must be a revision of the {rev} era no newer than {rev} (got {since})")));
            }
            revs.extend(Revision::ALL.into_iter().filter(|r| *r != rev && r.era() == rev.era() && rev.at_least(*r) && r.at_least(since)));
        }
        for r in raw.older.keys() {
            if !revs.contains(r) || *r == rev {
                return Err(err(at(&format!("/older/{r}")), format!("{r} is not an older revision this case covers (`since`)")));
            }
        }
        for r in revs {
            let mut c = raw.clone();
            if r != rev {
                let o = raw.older.get(&r).cloned().unwrap_or_default();
                c.id = format!("{r}/{}", raw.id.strip_prefix(&format!("{rev}/")).unwrap_or(&raw.id));
                c.title = o.title.unwrap_or(c.title);
                c.level = o.level.unwrap_or(c.level);
                c.spec = o.spec.unwrap_or(c.spec);
                c.basis = o.basis.unwrap_or_else(|| Basis { source: c.basis.source.replace(rev.as_str(), r.as_str()), ..c.basis });
                c.applies = o.applies.unwrap_or(c.applies);
                c.notes = o.notes.or(c.notes);
                // Requirement sets belong to their own revision.
                c.answers.clear();
                c.beyond.clear();
            }
            let at = |rest: &str| if r == rev { at(rest) } else { format!("/cases/{i}{rest} (as a case of {r})") };
            cases.push(build_case(name, c, r, &suite.area, validator, &at)?);
        }
    }
    Ok((rev, cases))
}

/// One case of revision `rev` from its raw form (`at`: a JSON path in the file).
fn build_case(
    name: &str,
    raw: RawCase,
    rev: Revision,
    area: &str,
    validator: Option<&jsonschema::Validator>,
    at: &dyn Fn(&str) -> String,
) -> Result<Case, LoadError> {
    let err = |path: String, problem: String| LoadError { file: name.to_string(), path, problem };
    {
        let prefix = format!("{rev}/{area}/");
        if !raw.id.starts_with(&prefix) {
            return Err(err(at("/id"), format!("case id `{}` must start with `{prefix}`", raw.id)));
        }
        if let Some(why) = raw.basis.mismatch(raw.level) {
            return Err(err(at("/basis/keyword"), why));
        }
        if raw.steps.is_empty() {
            return Err(err(at("/steps"), "a case needs at least one step".into()));
        }
        let set = super::requirements::builtin(rev);
        if set.is_none() && !(raw.answers.is_empty() && raw.beyond.is_empty()) {
            return Err(err(at("/answers"), format!("{rev} has no requirement set: a case of it answers no scenario")));
        }
        for (j, a) in raw.answers.iter().enumerate() {
            if set.is_some_and(|s| s.scenario(a).is_none()) {
                return Err(err(at(&format!("/answers/{j}")), format!("`{a}` is not a server scenario of the {rev} requirement set")));
            }
        }
        for (j, a) in raw.beyond.iter().enumerate() {
            if set.is_some_and(|s| s.scenario(a).is_none()) {
                return Err(err(at(&format!("/beyond/{j}")), format!("`{a}` is not a server scenario of the {rev} requirement set")));
            }
            if raw.answers.contains(a) {
                return Err(err(at(&format!("/beyond/{j}")), format!("the case answers `{a}`; it cannot also go beyond it")));
            }
        }
        let mut fixtures = Vec::new();
        for (j, f) in raw.applies.fixtures.iter().enumerate() {
            fixtures.push(super::requirements::Fixture::parse(f).map_err(|e| err(at(&format!("/applies/fixtures/{j}")), e))?);
        }
        if raw.basis.keyword == crate::record::Keyword::Fixture && fixtures.is_empty() {
            return Err(err(
                at("/basis/keyword"),
                "a case resting on a fixture's definition must name the fixture in applies.fixtures".into(),
            ));
        }
        let mut steps = Vec::new();
        for (j, s) in raw.steps.into_iter().enumerate() {
            let step = match (s.send, s.http, s.action) {
                (Some(send), None, None) => {
                    if send.from_probe {
                        let alone = send.params.is_none()
                            && send.id.is_none()
                            && send.version.is_none()
                            && send.headers.is_empty()
                            && !send.fresh
                            && !send.negative
                            && !send.notification
                            && send.session == super::SessionHeader::Keep
                            && send.meta == crate::wire::MetaMode::default();
                        if send.method != "initialize" || rev.is_stateless() || !alone {
                            return Err(err(
                                at(&format!("/steps/{j}/send/from_probe")),
                                "`from_probe` stands for the revision probe's initialize (initialize era): `method` must be \"initialize\" and nothing else may be set".into(),
                            ));
                        }
                    }
                    Step::Send { name: s.name, send }
                }
                (None, Some(http), None) => Step::Http { name: s.name, http },
                (None, None, Some(action)) => {
                    let entry = checks::lookup(&action).ok_or_else(|| err(at(&format!("/steps/{j}/action")), unknown_action(&action)))?;
                    if !entry.revisions.contains(&rev) {
                        return Err(err(
                            at(&format!("/steps/{j}/action")),
                            format!(
                                "`{action}` judges rules of {:?} only, not of {rev}",
                                entry.revisions.iter().map(|r| r.as_str()).collect::<Vec<_>>()
                            ),
                        ));
                    }
                    let check =
                        entry.build(&s.with.unwrap_or(json!({}))).map_err(|e| err(at(&format!("/steps/{j}/with")), e.to_string()))?;
                    for n in check.needs() {
                        if let Need::Transport(t) = n
                            && raw.applies.transports != [t]
                        {
                            return Err(err(
                                at("/applies/transports"),
                                format!("`{action}` runs over {t} only; the case must say `\"transports\": [\"{t}\"]`"),
                            ));
                        }
                    }
                    Step::Action { action, check }
                }
                _ => return Err(err(at(&format!("/steps/{j}")), "a step is one of `send`, `http` or `action`".into())),
            };
            steps.push(step);
        }
        let mut expect = Vec::new();
        for (j, e) in raw.expect.into_iter().enumerate() {
            let here = |k: &str| at(&format!("/expect/{j}{k}"));
            if let Some(s) = &e.step
                && !steps.iter().any(|st| st.name() == Some(s.as_str()))
            {
                return Err(err(here("/step"), format!("no step is named `{s}`")));
            }
            // Checked files: compiled now, to name a bad schema's file and
            // path; built-in ones when a case first needs them.
            let compile = |s: &Value, k: &str| {
                let cell = SchemaCell::default();
                if validator.is_some()
                    && let Err(x) = cell.get(s)
                {
                    return Err(err(here(k), format!("not a usable JSON Schema: {x}")));
                }
                Ok(Arc::new(cell))
            };
            let assert = if let Some(t) = e.result {
                // Checked files only: a built-in `result` names a type of the
                // wire schema (checked when the suites folder loads, in tests).
                if validator.is_some() && !crate::wire::schema::schemas().has(rev, &t) {
                    return Err(err(here("/result"), format!("`{t}` is not a message type of the {rev} wire schema")));
                }
                Assertion::Result(t)
            } else if let Some(c) = e.error {
                Assertion::Error(c.into_vec())
            } else if let Some(c) = e.http_status {
                Assertion::HttpStatus(c.into_vec())
            } else if let Some(m) = e.matches {
                let validator = compile(&m.schema, "/match/schema")?;
                Assertion::Match { pointer: m.pointer, schema: m.schema, validator }
            } else if let Some(p) = e.absent {
                Assertion::Absent(p)
            } else if let Some(h) = e.header_absent {
                Assertion::HeaderAbsent(h)
            } else if e.id_echoed == Some(true) {
                Assertion::IdEchoed
            } else if let Some(h) = e.header {
                let validator = compile(&h.schema, "/header/schema")?;
                Assertion::Header { name: h.name, schema: h.schema, validator }
            } else {
                return Err(err(here(""), "an expectation needs one assertion".into()));
            };
            expect.push(Expectation { step: e.step, says: e.says, assert });
        }
        if !expect.is_empty() && !steps.iter().any(|s| matches!(s, Step::Send { .. } | Step::Http { .. })) {
            return Err(err(at("/expect"), "expectations need a `send` or `http` step to look at".into()));
        }
        Ok(Case {
            id: raw.id,
            title: raw.title,
            level: raw.level,
            spec: raw.spec,
            basis: raw.basis,
            applies: raw.applies,
            steps,
            expect,
            notes: raw.notes,
            revision: rev,
            source: name.to_string(),
            answers: raw.answers,
            beyond: raw.beyond,
            fixtures,
        })
    }
}

/// The message for an action name no check has, with the nearest names.
fn unknown_action(name: &str) -> String {
    let mut known: Vec<(usize, &str)> = checks::REGISTRY.iter().map(|e| (edit_distance(name, e.name), e.name)).collect();
    known.sort();
    let near: Vec<&str> = known.iter().take_while(|(d, _)| *d <= 3).map(|(_, n)| *n).take(3).collect();
    let hint = if near.is_empty() { String::new() } else { format!(" (did you mean `{}`?)", near.join("` or `")) };
    format!("unknown action `{name}`{hint}; `mcpcert list --checks` lists them all")
}

/// Levenshtein distance, for suggestions.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = if ca == *cb { prev } else { 1 + prev.min(row[j]).min(row[j + 1]) };
            prev = cur;
        }
    }
    row[b.len()]
}

/// `checked`: check each file against the suite format first (every file
/// but the built-in ones).
/// `era`: only the files of that era's revisions are parsed (the others
/// still count in the digest and the file list).
fn finish(files: Vec<(String, String)>, checked: bool, era: Option<Era>) -> Result<Catalog, LoadError> {
    let validator = checked.then(format_validator);
    let mut hasher = Sha256::new();
    let mut cases = Vec::new();
    let mut seen = HashSet::new();
    let mut names = Vec::new();
    for (name, text) in &files {
        hasher.update(name.as_bytes());
        hasher.update([0]);
        hasher.update(text.as_bytes());
        hasher.update([0]);
        let dir = name.split('/').next().and_then(Revision::parse);
        if era.is_some_and(|e| dir.is_some_and(|d| d.era() != e)) {
            names.push(name.clone());
            continue;
        }
        let (rev, file_cases) = parse_file(name, text, validator.as_ref())?;
        let expect_dir = name.split('/').next().unwrap_or("");
        if expect_dir != rev.as_str() {
            return Err(LoadError {
                file: name.clone(),
                path: "/revision".into(),
                problem: format!("file is under `{expect_dir}/` but declares revision {rev}"),
            });
        }
        for (i, c) in file_cases.iter().enumerate() {
            if !seen.insert(c.id.clone()) {
                return Err(LoadError {
                    file: name.clone(),
                    path: format!("/cases/{i}/id"),
                    problem: format!("duplicate case id `{}`", c.id),
                });
            }
        }
        names.push(name.clone());
        cases.extend(file_cases);
    }
    for (name, text) in super::requirements::BUILTIN_REQUIREMENTS {
        hasher.update(name.as_bytes());
        hasher.update([0]);
        hasher.update(text.as_bytes());
        hasher.update([0]);
    }
    // Run order: newest revision first, then file name, then position.
    // Cases that judge the whole run's traffic come after every other case
    // of their revision, so that they see all of it.
    // (A case an older revision takes from a newer file sorts by that file's name.)
    cases.sort_by_cached_key(|c| {
        let file = c.source.rsplit('/').next().unwrap_or(&c.source).to_string();
        (c.revision, c.checks().any(|k| k.scope() == checks::Scope::Run), file)
    });
    let digest = format!("sha256:{:x}", hasher.finalize());
    Ok(Catalog { cases, digest, files: names })
}

/// The suites built into mcpcert. They are not checked against the suite
/// format again at each run: `builtin_list_matches_the_suites_folder_and_loads`
/// loads the same files from suites/, checked, and compares their digest.
pub fn load_builtin() -> Result<Catalog, LoadError> {
    finish(BUILTIN.iter().map(|(n, t)| (n.to_string(), t.to_string())).collect(), false, None)
}

/// The built-in cases of `era`'s revisions only (a run of one revision
/// needs no others): the same digest and file list as `load_builtin`.
pub fn load_builtin_era(era: Era) -> Result<Catalog, LoadError> {
    finish(BUILTIN.iter().map(|(n, t)| (n.to_string(), t.to_string())).collect(), false, Some(era))
}

/// Load `DIR/<revision>/*.json`, sorted by name.
pub fn load_dir(dir: &Path) -> Result<Catalog, LoadError> {
    let mut files = Vec::new();
    for rev in Revision::ALL {
        let sub = dir.join(rev.as_str());
        let Ok(rd) = std::fs::read_dir(&sub) else { continue };
        let mut names: Vec<String> =
            rd.filter_map(|e| e.ok()).map(|e| e.file_name().to_string_lossy().into_owned()).filter(|n| n.ends_with(".json")).collect();
        names.sort();
        for n in names {
            let p = sub.join(&n);
            let text = std::fs::read_to_string(&p).map_err(|e| LoadError {
                file: p.display().to_string(),
                path: String::new(),
                problem: e.to_string(),
            })?;
            files.push((format!("{rev}/{n}"), text));
        }
    }
    if files.is_empty() {
        return Err(LoadError {
            file: dir.display().to_string(),
            path: String::new(),
            problem: format!(
                "no suite files found (expected <DIR>/<revision>/*.json, a revision being one of {})",
                Revision::ALL.iter().map(|r| r.as_str()).collect::<Vec<_>>().join(", ")
            ),
        });
    }
    finish(files, true, None)
}

#[cfg(test)]
#[path = "load_tests.rs"]
mod tests;
