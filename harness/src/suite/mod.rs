//! Suite files: the model, the loader, and validation against the suite
//! format's own JSON Schema (suites/suite.schema.json).

use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, HashSet};
use std::path::Path;

pub const FORMAT_SCHEMA: &str = include_str!("../../../suites/suite.schema.json");

/// The suites shipped inside the binary, in run order.
pub const BUILTIN: &[(&str, &str)] = &[
    ("2026-07-28/10-lifecycle.json", include_str!("../../../suites/2026-07-28/10-lifecycle.json")),
    ("2026-07-28/20-tools.json", include_str!("../../../suites/2026-07-28/20-tools.json")),
    ("2026-07-28/30-lists.json", include_str!("../../../suites/2026-07-28/30-lists.json")),
    ("2026-07-28/40-headers.json", include_str!("../../../suites/2026-07-28/40-headers.json")),
    ("2026-07-28/50-completion.json", include_str!("../../../suites/2026-07-28/50-completion.json")),
    ("2026-07-28/55-resources.json", include_str!("../../../suites/2026-07-28/55-resources.json")),
    ("2026-07-28/56-prompts.json", include_str!("../../../suites/2026-07-28/56-prompts.json")),
    ("2026-07-28/60-input-required.json", include_str!("../../../suites/2026-07-28/60-input-required.json")),
    ("2026-07-28/70-subscriptions.json", include_str!("../../../suites/2026-07-28/70-subscriptions.json")),
    ("2026-07-28/80-roles.json", include_str!("../../../suites/2026-07-28/80-roles.json")),
    ("2026-07-28/90-wire.json", include_str!("../../../suites/2026-07-28/90-wire.json")),
    ("2025-11-25/10-lifecycle.json", include_str!("../../../suites/2025-11-25/10-lifecycle.json")),
    ("2025-11-25/20-tools.json", include_str!("../../../suites/2025-11-25/20-tools.json")),
    ("2025-11-25/30-lists.json", include_str!("../../../suites/2025-11-25/30-lists.json")),
    ("2025-11-25/40-headers.json", include_str!("../../../suites/2025-11-25/40-headers.json")),
    ("2025-11-25/50-completion.json", include_str!("../../../suites/2025-11-25/50-completion.json")),
    ("2025-11-25/56-prompts.json", include_str!("../../../suites/2025-11-25/56-prompts.json")),
    ("2025-11-25/90-wire.json", include_str!("../../../suites/2025-11-25/90-wire.json")),
];

#[derive(Debug, Clone, Deserialize, Serialize)]
pub struct SuiteFile {
    pub format: u32,
    pub revision: String,
    pub area: String,
    pub title: String,
    pub cases: Vec<Case>,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
pub struct Case {
    pub id: String,
    pub title: String,
    pub level: Level,
    pub spec: SpecRef,
    #[serde(default)]
    pub applies: Applies,
    pub steps: Vec<Step>,
    pub expect: Vec<Expectation>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notes: Option<String>,
    /// Filled by the loader.
    #[serde(skip_deserializing)]
    pub revision: String,
    #[serde(skip_deserializing)]
    pub source: String,
}

#[derive(Debug, Clone, Copy, Deserialize, Serialize, PartialEq, Eq)]
pub enum Level {
    #[serde(rename = "MUST")]
    Must,
    #[serde(rename = "MUST NOT")]
    MustNot,
    #[serde(rename = "SHOULD")]
    Should,
    #[serde(rename = "SHOULD NOT")]
    ShouldNot,
    #[serde(rename = "MAY")]
    May,
    #[serde(rename = "POLICY")]
    Policy,
}

impl Level {
    pub fn as_str(self) -> &'static str {
        match self {
            Level::Must => "MUST",
            Level::MustNot => "MUST NOT",
            Level::Should => "SHOULD",
            Level::ShouldNot => "SHOULD NOT",
            Level::May => "MAY",
            Level::Policy => "POLICY",
        }
    }
    /// A broken rule of this level is a warning (unless --strict). POLICY is
    /// a rule mcpcert adds where the spec is silent or only advises (error
    /// results keep the output contract; no secret mirrored into a header),
    /// so it cannot weigh more than a SHOULD.
    pub fn is_advisory(self) -> bool {
        matches!(self, Level::Should | Level::ShouldNot | Level::May | Level::Policy)
    }
}

#[derive(Debug, Clone, Deserialize, Serialize)]
pub struct SpecRef {
    pub document: String,
    pub anchor: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub digest: Option<String>,
}

impl SpecRef {
    pub fn render(&self, revision: &str) -> String {
        let mut s = format!("{revision}/{}#{}", self.document, self.anchor);
        if let Some(d) = &self.digest {
            s.push_str(&format!(" ({d})"));
        }
        s
    }
}

#[derive(Debug, Clone, Deserialize, Serialize, Default)]
pub struct Applies {
    #[serde(default)]
    pub transports: Vec<String>,
    #[serde(default)]
    pub capabilities: Vec<String>,
    #[serde(default)]
    pub era: Option<String>,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
pub struct Step {
    #[serde(default, rename = "as")]
    pub name: Option<String>,
    #[serde(default)]
    pub send: Option<Send>,
    #[serde(default)]
    pub http: Option<RawHttp>,
    #[serde(default)]
    pub action: Option<String>,
    /// The action's argument (e.g. which list to walk).
    #[serde(default)]
    pub with: Option<Value>,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
pub struct Send {
    pub method: String,
    #[serde(default)]
    pub params: Option<Value>,
    #[serde(default)]
    pub meta: crate::wire::MetaMode,
    #[serde(default)]
    pub version: Option<String>,
    #[serde(default)]
    pub id: Option<Value>,
    #[serde(default)]
    pub notification: bool,
    #[serde(default)]
    pub headers: BTreeMap<String, Option<String>>,
    #[serde(default)]
    pub fresh: bool,
    #[serde(default)]
    pub session: Option<String>,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
pub struct RawHttp {
    pub method: String,
    #[serde(default)]
    pub headers: BTreeMap<String, Option<String>>,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(untagged)]
pub enum OneOrMany {
    One(i64),
    Many(Vec<i64>),
}

impl OneOrMany {
    pub fn to_vec(&self) -> Vec<i64> {
        match self {
            OneOrMany::One(x) => vec![*x],
            OneOrMany::Many(v) => v.clone(),
        }
    }
}

#[derive(Debug, Clone, Deserialize, Serialize)]
pub struct Expectation {
    #[serde(default)]
    pub step: Option<String>,
    #[serde(default)]
    pub says: Option<String>,
    #[serde(default)]
    pub result: Option<String>,
    #[serde(default)]
    pub error: Option<OneOrMany>,
    #[serde(default)]
    pub http_status: Option<OneOrMany>,
    #[serde(default, rename = "match")]
    pub matches: Option<MatchAt>,
    #[serde(default)]
    pub absent: Option<String>,
    #[serde(default)]
    pub header_absent: Option<String>,
    #[serde(default)]
    pub id_echoed: Option<bool>,
    #[serde(default)]
    pub header: Option<HeaderMatch>,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
pub struct HeaderMatch {
    pub name: String,
    pub schema: Value,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
pub struct MatchAt {
    pub pointer: String,
    pub schema: Value,
}

/// All loaded cases, in run order, with a digest of the files they came from.
#[derive(Debug, Clone)]
pub struct Catalog {
    pub cases: Vec<Case>,
    pub digest: String,
    pub files: Vec<String>,
}

/// A suite-file problem: the file and the JSON path inside it.
#[derive(Debug, Clone)]
pub struct LoadError {
    pub file: String,
    pub path: String,
    pub problem: String,
}

impl std::fmt::Display for LoadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let p = if self.path.is_empty() { "(root)" } else { &self.path };
        write!(f, "suite file {}: at {}: {}", self.file, p, self.problem)
    }
}

fn format_validator() -> jsonschema::Validator {
    let schema: Value = serde_json::from_str(FORMAT_SCHEMA).expect("suite format schema is JSON");
    jsonschema::options().offline().build(&schema).expect("suite format schema compiles")
}

/// Parse and check one suite file's text.
pub fn parse_file(name: &str, text: &str, validator: &jsonschema::Validator) -> Result<SuiteFile, LoadError> {
    let err = |path: String, problem: String| LoadError { file: name.to_string(), path, problem };
    let doc: Value = serde_json::from_str(text).map_err(|e| err(String::new(), format!("not valid JSON: {e}")))?;
    if let Some(e) = validator.iter_errors(&doc).next() {
        return Err(err(e.instance_path().to_string(), e.to_string()));
    }
    let mut suite: SuiteFile = serde_json::from_value(doc).map_err(|e| err(String::new(), e.to_string()))?;
    let schemas = crate::wire::schema::schemas();
    for (i, case) in suite.cases.iter_mut().enumerate() {
        let at = |rest: &str| format!("/cases/{i}{rest}");
        let prefix = format!("{}/{}/", suite.revision, suite.area);
        if !case.id.starts_with(&prefix) {
            return Err(err(at("/id"), format!("case id `{}` must start with `{prefix}`", case.id)));
        }
        let names: Vec<Option<&String>> = case.steps.iter().map(|s| s.name.as_ref()).collect();
        for (j, e) in case.expect.iter().enumerate() {
            if let Some(s) = &e.step {
                if !names.iter().any(|n| n.as_deref() == Some(s)) {
                    return Err(err(at(&format!("/expect/{j}/step")), format!("no step is named `{s}`")));
                }
            }
            if let Some(t) = &e.result {
                if !schemas.has(&suite.revision, t) {
                    return Err(err(
                        at(&format!("/expect/{j}/result")),
                        format!("`{t}` is not a message type of the {} wire schema", suite.revision),
                    ));
                }
            }
            if let Some(m) = &e.matches {
                if let Err(x) = jsonschema::options().offline().build(&m.schema) {
                    return Err(err(at(&format!("/expect/{j}/match/schema")), format!("not a usable JSON Schema: {x}")));
                }
            }
        }
        if !case.expect.is_empty() && !case.steps.iter().any(|s| s.send.is_some() || s.http.is_some()) {
            return Err(err(at("/expect"), "expectations need a `send` or `http` step to look at".into()));
        }
        if case.steps.is_empty() {
            return Err(err(at("/steps"), "a case needs at least one step".into()));
        }
        case.revision = suite.revision.clone();
        case.source = name.to_string();
    }
    Ok(suite)
}

fn finish(files: Vec<(String, String)>) -> Result<Catalog, LoadError> {
    let validator = format_validator();
    let mut hasher = Sha256::new();
    let mut cases = Vec::new();
    let mut seen = HashSet::new();
    let mut names = Vec::new();
    for (name, text) in &files {
        hasher.update(name.as_bytes());
        hasher.update([0]);
        hasher.update(text.as_bytes());
        hasher.update([0]);
        let suite = parse_file(name, text, &validator)?;
        let expect_dir = name.split('/').next().unwrap_or("");
        if expect_dir != suite.revision {
            return Err(LoadError {
                file: name.clone(),
                path: "/revision".into(),
                problem: format!("file is under `{expect_dir}/` but declares revision {}", suite.revision),
            });
        }
        for (i, c) in suite.cases.iter().enumerate() {
            if !seen.insert(c.id.clone()) {
                return Err(LoadError {
                    file: name.clone(),
                    path: format!("/cases/{i}/id"),
                    problem: format!("duplicate case id `{}`", c.id),
                });
            }
        }
        names.push(name.clone());
        cases.extend(suite.cases);
    }
    // Run order: newest revision first, then file name, then position.
    let rank = |r: &str| crate::wire::REVISIONS.iter().position(|x| *x == r).unwrap_or(99);
    cases.sort_by_key(|c| (rank(&c.revision), c.source.clone()));
    let digest = format!("sha256:{:x}", hasher.finalize());
    Ok(Catalog { cases, digest, files: names })
}

pub fn load_builtin() -> Result<Catalog, LoadError> {
    finish(BUILTIN.iter().map(|(n, t)| (n.to_string(), t.to_string())).collect())
}

/// Load `DIR/<revision>/*.json`, sorted by name.
pub fn load_dir(dir: &Path) -> Result<Catalog, LoadError> {
    let mut files = Vec::new();
    for rev in crate::wire::REVISIONS {
        let sub = dir.join(rev);
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
            problem: "no suite files found (expected <DIR>/2026-07-28/*.json or <DIR>/2025-11-25/*.json)".into(),
        });
    }
    finish(files)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_list_matches_the_suites_folder_and_loads() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../suites");
        let from_dir = load_dir(&dir).expect("suites folder loads");
        let builtin = load_builtin().expect("built-in suites load");
        assert_eq!(from_dir.files, builtin.files, "suite::BUILTIN must list every file under suites/");
        assert_eq!(from_dir.digest, builtin.digest);
        assert!(builtin.cases.len() >= 30);
    }

    #[test]
    fn a_typo_is_an_error_naming_file_and_path() {
        let v = format_validator();
        let bad = r#"{"format":1,"revision":"2026-07-28","area":"a","title":"t","cases":[{"id":"2026-07-28/a/b","title":"t","level":"MUST","spec":{"document":"d","anchor":"x"},"steps":[{"send":{"method":"m"}}],"expect":[{"eror":-32601}]}]}"#;
        let e = parse_file("2026-07-28/x.json", bad, &v).unwrap_err();
        assert_eq!(e.file, "2026-07-28/x.json");
        assert!(e.path.starts_with("/cases/0/expect/0"), "{e}");
        let unknown_type = bad.replace(r#"{"eror":-32601}"#, r#"{"result":"NoSuchType"}"#);
        let e = parse_file("f", &unknown_type, &v).unwrap_err();
        assert_eq!(e.path, "/cases/0/expect/0/result");
    }
}
