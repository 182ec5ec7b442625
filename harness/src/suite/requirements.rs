//! The requirement sets: for each revision, the server scenarios that
//! conformance to it requires (frozen when the revision shipped), and those
//! that run but never count. Suite cases name the scenarios they answer
//! (`answers`); `mcpcert run --requirements REV` runs exactly those cases.

use crate::wire::Revision;
use serde::Deserialize;

/// The requirement sets shipped inside the binary.
pub const BUILTIN_REQUIREMENTS: &[(&str, &str)] = &[
    ("requirements/2026-07-28.json", include_str!("../../suites/requirements/2026-07-28.json")),
    ("requirements/2025-11-25.json", include_str!("../../suites/requirements/2025-11-25.json")),
];

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum FixtureKind {
    Tool,
    Prompt,
    Resource,
    Template,
}

impl FixtureKind {
    pub fn as_str(self) -> &'static str {
        match self {
            FixtureKind::Tool => "tool",
            FixtureKind::Prompt => "prompt",
            FixtureKind::Resource => "resource",
            FixtureKind::Template => "template",
        }
    }
}

/// A conformance fixture a case needs the server to list: `tool
/// test_simple_text`, `resource test://static-text`, `template
/// test://template/{id}/data`, `prompt test_simple_prompt`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Fixture {
    pub kind: FixtureKind,
    pub name: String,
}

impl Fixture {
    pub fn parse(s: &str) -> Result<Fixture, String> {
        let (kind, name) = s.split_once(' ').ok_or_else(|| format!("`{s}` is not `KIND NAME`"))?;
        let kind = match kind {
            "tool" => FixtureKind::Tool,
            "prompt" => FixtureKind::Prompt,
            "resource" => FixtureKind::Resource,
            "template" => FixtureKind::Template,
            other => return Err(format!("`{other}` is not a fixture kind (tool, prompt, resource, template)")),
        };
        if name.trim().is_empty() || name != name.trim() {
            return Err(format!("`{s}`: the name must be non-empty, without surrounding spaces"));
        }
        Ok(Fixture { kind, name: name.to_string() })
    }
}

impl std::fmt::Display for Fixture {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} `{}`", self.kind.as_str(), self.name)
    }
}

#[derive(Debug, Clone)]
pub struct Scenario {
    pub name: String,
    pub about: String,
    /// Counts toward conformance; otherwise run and reported only.
    pub scored: bool,
    /// Why it does not count (extension, pending, added-after-release).
    pub reason: Option<String>,
    pub fixtures: Vec<Fixture>,
    /// The extension whose set (`REV+NAME`) scores it (`tasks`).
    pub extension: Option<String>,
    /// Why mcpcert does not judge it yet, even in the extension's set.
    pub unjudged: Option<String>,
}

#[derive(Debug, Clone)]
pub struct RequirementSet {
    /// The revision, or the revision with extensions (`2026-07-28+tasks`).
    pub name: String,
    pub revision: Revision,
    pub source: String,
    pub scenarios: Vec<Scenario>,
}

impl RequirementSet {
    pub fn scenario(&self, name: &str) -> Option<&Scenario> {
        self.scenarios.iter().find(|s| s.name == name)
    }

    pub fn scored(&self) -> impl Iterator<Item = &Scenario> {
        self.scenarios.iter().filter(|s| s.scored)
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSet {
    format: u32,
    revision: Revision,
    source: String,
    scenarios: Vec<RawScenario>,
    not_scored: Vec<RawScenario>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawScenario {
    name: String,
    #[serde(default)]
    about: String,
    #[serde(default)]
    reason: Option<String>,
    #[serde(default)]
    fixtures: Vec<String>,
    #[serde(default)]
    extension: Option<String>,
    #[serde(default)]
    unjudged: Option<String>,
}

fn parse(file: &str, text: &str) -> Result<RequirementSet, String> {
    let raw: RawSet = serde_json::from_str(text).map_err(|e| format!("{file}: {e}"))?;
    if raw.format != 1 {
        return Err(format!("{file}: format {} is not 1", raw.format));
    }
    let mut scenarios = Vec::new();
    for (scored, list) in [(true, raw.scenarios), (false, raw.not_scored)] {
        for s in list {
            if scenarios.iter().any(|x: &Scenario| x.name == s.name) {
                return Err(format!("{file}: scenario `{}` is listed twice", s.name));
            }
            if !scored && s.reason.is_none() {
                return Err(format!("{file}: not-scored scenario `{}` needs a reason", s.name));
            }
            let fixtures =
                s.fixtures.iter().map(|f| Fixture::parse(f).map_err(|e| format!("{file}: {}: {e}", s.name))).collect::<Result<_, _>>()?;
            if (s.reason.as_deref() == Some("extension")) != s.extension.is_some() {
                return Err(format!("{file}: scenario `{}`: an extension's scenario names it (\"extension\"), and only one", s.name));
            }
            scenarios.push(Scenario {
                name: s.name,
                about: s.about,
                scored,
                reason: s.reason,
                fixtures,
                extension: s.extension,
                unjudged: s.unjudged,
            });
        }
    }
    Ok(RequirementSet { name: raw.revision.as_str().to_string(), revision: raw.revision, source: raw.source, scenarios })
}

/// A requirement set by name: a revision's (`2026-07-28`), or a revision's
/// with extensions (`2026-07-28+tasks`), where the scenarios of the named
/// extensions count too (all but those mcpcert does not judge yet, which
/// stay unscored, saying so).
pub fn resolve(name: &str) -> Result<&'static RequirementSet, String> {
    static DERIVED: std::sync::Mutex<Vec<&'static RequirementSet>> = std::sync::Mutex::new(Vec::new());
    let mut parts = name.split('+');
    let rev = parts.next().unwrap_or("");
    let Some(base) = Revision::parse(rev).and_then(builtin) else {
        return Err(format!("`{rev}` has no requirement set: only 2026-07-28 and 2025-11-25 do (with extensions: 2026-07-28+tasks)"));
    };
    let mut exts: Vec<&str> = parts.collect();
    if exts.is_empty() {
        return Ok(base);
    }
    exts.sort_unstable();
    exts.dedup();
    let known: std::collections::BTreeSet<&str> = base.scenarios.iter().filter_map(|s| s.extension.as_deref()).collect();
    if let Some(x) = exts.iter().find(|x| !known.contains(**x)) {
        let names: Vec<&str> = known.into_iter().collect();
        return Err(format!(
            "`{x}` is not an extension of the {rev} requirement set (it has: {})",
            if names.is_empty() { "none".into() } else { names.join(", ") }
        ));
    }
    let full = format!("{rev}+{}", exts.join("+"));
    let mut derived = DERIVED.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(s) = derived.iter().find(|s| s.name == full) {
        return Ok(s);
    }
    let mut set = base.clone();
    set.name = full;
    for s in set.scenarios.iter_mut().filter(|s| s.extension.as_deref().is_some_and(|x| exts.contains(&x))) {
        match &s.unjudged {
            None => {
                s.scored = true;
                s.reason = None;
            }
            Some(why) => s.reason = Some(format!("extension: mcpcert does not judge it yet ({why})")),
        }
    }
    let leaked: &'static RequirementSet = Box::leak(Box::new(set));
    derived.push(leaked);
    Ok(leaked)
}

/// The built-in requirement set of a revision (parsed once); None for a
/// revision that has none (the older ones: verdicts, no certificate).
pub fn builtin(rev: Revision) -> Option<&'static RequirementSet> {
    static SETS: std::sync::OnceLock<Vec<RequirementSet>> = std::sync::OnceLock::new();
    SETS.get_or_init(|| {
        BUILTIN_REQUIREMENTS.iter().map(|(f, t)| parse(f, t).unwrap_or_else(|e| panic!("built-in requirement set: {e}"))).collect()
    })
    .iter()
    .find(|s| s.revision == rev)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_builtin_sets_parse_and_name_their_fixtures() {
        let modern = builtin(Revision::R2026_07_28).unwrap();
        assert_eq!(modern.scored().count(), 37);
        assert!(modern.scenario("tasks-lifecycle").is_some_and(|s| !s.scored));
        let legacy = builtin(Revision::R2025_11_25).unwrap();
        assert_eq!(legacy.scored().count(), 30);
        let text = legacy.scenario("tools-call-simple-text").unwrap();
        assert_eq!(text.fixtures, [Fixture { kind: FixtureKind::Tool, name: "test_simple_text".into() }]);
    }

    #[test]
    fn an_extension_set_scores_the_extensions_judged_scenarios() {
        let base = resolve("2026-07-28").unwrap();
        assert_eq!(base.name, "2026-07-28");
        let tasks = resolve("2026-07-28+tasks").unwrap();
        assert_eq!(tasks.name, "2026-07-28+tasks");
        assert!(std::ptr::eq(tasks, resolve("2026-07-28+tasks+tasks").unwrap()));
        let added: Vec<&str> =
            tasks.scored().filter(|s| base.scenario(&s.name).is_some_and(|b| !b.scored)).map(|s| s.name.as_str()).collect();
        assert!(added.iter().all(|n| n.starts_with("tasks-")) && added.len() >= 4, "{added:?}");
        let pending = tasks.scenario("tasks-mrtr-composition").unwrap();
        assert!(!pending.scored && pending.reason.as_deref().unwrap().contains("does not judge it yet"));
        assert!(resolve("2026-07-28+skills").unwrap_err().contains("tasks"));
        assert!(resolve("2025-11-25+tasks").unwrap_err().contains("none"));
        assert!(resolve("2024-11-05").is_err());
    }

    #[test]
    fn fixtures_parse_strictly() {
        assert!(Fixture::parse("template test://template/{id}/data").is_ok());
        assert!(Fixture::parse("widget x").is_err());
        assert!(Fixture::parse("tool").is_err());
        assert!(Fixture::parse("tool  x").is_err());
    }
}
