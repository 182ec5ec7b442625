//! What the operator decided for a run, resolved from the config file and
//! the flags: which tools may be called and with what, the admission
//! policy, bounds, and the fixtures some checks need (the tool that asks
//! for input, the trigger, the identities).

use super::{ConfigError, ConfigFile, ToolConfig};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::Path;

/// Parameter (or header) names that look like secrets, by default: compared
/// in lower case with `_` and `-` removed, as substrings.
pub const DEFAULT_SECRET_NAMES: [&str; 5] = ["password", "secret", "token", "api_key", "authorization"];

#[derive(Debug, Clone)]
pub struct Policy {
    /// `[tools.NAME]`: call or not, and with which arguments.
    pub tools: BTreeMap<String, ToolConfig>,
    /// `[admission] secret_names`.
    pub secret_names: Vec<String>,
    /// A list that has not ended after this many pages fails.
    pub max_pages: usize,
    /// Call at most this many tools (each gets one valid and one invalid call).
    pub max_tools_called: usize,
    /// Header rejection probes may name a tool the call policy does not
    /// allow (`[calls] probe_uncallable = true`): a server that skips the
    /// header check would run it. Off by default.
    pub probe_uncallable: bool,
    /// The Origin the server allows (HTTP); without it the Origin check is n/a.
    pub allowed_origin: Option<String>,
    /// Show `Mcp-Param-*` values as `[redacted]` in transcripts.
    pub redact_params: bool,
    /// completion/complete probes per argument (the empty value first).
    pub completion_probes: usize,
    /// A tool that answers input_required (`[input_required]`).
    pub input_tool: Option<InputTool>,
    /// A tool that may run as a task (`[tasks]`), and the polling budget.
    pub task_tool: Option<InputTool>,
    pub task_budget: std::time::Duration,
    /// A tool whose task asks for input (`[tasks] input_tool`).
    pub task_input_tool: Option<InputTool>,
    /// A tool whose call changes the tool set (`[subscriptions]`).
    pub listen_trigger: Option<InputTool>,
    /// Identities to see the server through (`[roles.NAME]`).
    pub roles: Vec<Role>,
    /// Certification against a requirement set (`--requirements`): a
    /// conformance fixture the server does not list fails its case
    /// instead of making it n/a.
    pub requirements: bool,
    /// `[prompts.NAME] arguments`: what prompts/get of a listed prompt sends.
    pub prompt_arguments: BTreeMap<String, serde_json::Map<String, Value>>,
    /// `[templates."T"] values`: what a template's variables are filled with.
    pub template_values: BTreeMap<String, BTreeMap<String, String>>,
    /// Conformance fixture tools (`test_*` named by a case) may be called
    /// when the server lists them (`[calls] fixtures = false` turns it off).
    pub call_fixtures: bool,
    /// The load check (`--load N`, `[load]`): off unless asked for.
    pub load: Option<LoadSpec>,
    /// Tools that may reach the world (`openWorldHint` true or absent, the
    /// spec's default) may be called (`[calls] open_world = false` refuses
    /// them). Made-up arguments never name a real host either way.
    pub open_world_calls: bool,
    /// `[auth]` over HTTP: the tokens the authorization cases send (the
    /// valid one is on every request of the run).
    pub auth: Option<std::sync::Arc<crate::auth::Tokens>>,
}

/// The opt-in load check: the run's read-only requests replayed from
/// `connections` connections (or processes) at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LoadSpec {
    pub connections: usize,
    /// Requests in all, spread over the connections.
    pub requests: usize,
    /// The most the replay may take; it stops by itself then.
    pub seconds: u64,
}

impl LoadSpec {
    pub fn new(connections: usize) -> LoadSpec {
        LoadSpec { connections: connections.clamp(1, 64), requests: 200, seconds: 30 }
    }
}

impl Default for Policy {
    fn default() -> Self {
        Policy {
            tools: BTreeMap::new(),
            secret_names: DEFAULT_SECRET_NAMES.iter().map(|s| s.to_string()).collect(),
            max_pages: 10_000,
            max_tools_called: 50,
            probe_uncallable: false,
            allowed_origin: None,
            redact_params: false,
            completion_probes: 4,
            input_tool: None,
            task_tool: None,
            task_budget: std::time::Duration::from_secs(60),
            task_input_tool: None,
            listen_trigger: None,
            roles: Vec::new(),
            requirements: false,
            prompt_arguments: BTreeMap::new(),
            template_values: BTreeMap::new(),
            call_fixtures: true,
            load: None,
            open_world_calls: false,
            auth: None,
        }
    }
}

/// The variable names of an RFC 6570 URI template (`{id}`, `{+path}`,
/// `{?q,lang}`, `{list*}`, `{name:3}`).
pub fn template_variables(t: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = t;
    while let Some(i) = rest.find('{') {
        let Some(j) = rest[i..].find('}') else { break };
        let expr = rest[i + 1..i + j].trim_start_matches(['+', '#', '.', '/', ';', '?', '&']);
        for v in expr.split(',') {
            let name = v.split(':').next().unwrap_or("").trim_end_matches('*').trim();
            if !name.is_empty() {
                out.push(name.to_string());
            }
        }
        rest = &rest[i + j + 1..];
    }
    out
}

impl Policy {
    /// The policy a config file sets (roles' credentials read from the
    /// environment); the defaults where it is silent.
    pub fn from_file(c: &ConfigFile, path: &Path) -> Result<Policy, ConfigError> {
        let mut p = Policy { tools: c.tools.clone(), roles: super::resolve_roles(c, path)?, ..Default::default() };
        if let Some(names) = &c.admission.secret_names {
            p.secret_names = names.clone();
        }
        if let Some(n) = c.pagination.max_pages {
            p.max_pages = n;
        }
        if let Some(n) = c.calls.max_tools {
            p.max_tools_called = n;
        }
        p.probe_uncallable = c.calls.probe_uncallable.unwrap_or(false);
        p.call_fixtures = c.calls.fixtures.unwrap_or(true);
        p.open_world_calls = c.calls.open_world.unwrap_or(false);
        p.prompt_arguments = c.prompts.iter().map(|(k, v)| (k.clone(), v.arguments.clone())).collect();
        for (t, v) in &c.templates {
            let vars = template_variables(t);
            if let Some(k) = v.values.keys().find(|k| !vars.contains(k)) {
                let has = if vars.is_empty() { "no variables".to_string() } else { format!("the variables {}", vars.join(", ")) };
                return Err(ConfigError::new(
                    path,
                    format!(
                        "at templates.\"{t}\".values.{k}: the template `{t}` has no variable `{k}` (it has {has}); the keys of values name its variables"
                    ),
                ));
            }
        }
        p.template_values = c.templates.iter().map(|(k, v)| (k.clone(), v.values.clone())).collect();
        if let Some(n) = c.completion.max_probes {
            p.completion_probes = n;
        }
        if let Some(sb) = &c.subscriptions {
            p.listen_trigger =
                Some(InputTool { tool: sb.trigger_tool.clone(), arguments: sb.trigger_arguments.clone().unwrap_or(json!({})) });
        }
        if let Some(ir) = &c.input_required {
            p.input_tool = Some(InputTool { tool: ir.tool.clone(), arguments: ir.arguments.clone().unwrap_or(json!({})) });
        }
        if let Some(t) = &c.tasks {
            p.task_tool = Some(InputTool { tool: t.tool.clone(), arguments: t.arguments.clone().unwrap_or(json!({})) });
            p.task_budget = std::time::Duration::from_secs(t.budget_seconds.unwrap_or(60).clamp(1, 3600));
            p.task_input_tool =
                t.input_tool.as_ref().map(|n| InputTool { tool: n.clone(), arguments: t.input_arguments.clone().unwrap_or(json!({})) });
        }
        p.allowed_origin = c.target.allowed_origin.clone();
        if let Some(l) = &c.load {
            let mut spec = LoadSpec::new(l.connections.unwrap_or(8));
            if let Some(n) = l.requests {
                spec.requests = n.clamp(1, 100_000);
            }
            if let Some(s) = l.seconds {
                spec.seconds = s.clamp(1, 3600);
            }
            p.load = Some(spec);
        }
        Ok(p)
    }

    /// Whether the operator lets mcpcert call this tool, and why not.
    /// By default only tools marked `readOnlyHint: true`; `[tools.NAME]
    /// call = true` allows one, `call = false` keeps any tool out.
    /// By default only tools marked `readOnlyHint: true` that also say
    /// `openWorldHint: false` (a tool that may reach the world would reach
    /// hosts outside the test, whatever its arguments); `[calls] open_world
    /// = true` lets read-only open-world tools be called too. `[tools.NAME]
    /// call = true` allows one tool (the operator's decision), `call =
    /// false` keeps any tool out.
    pub fn call_allowed(&self, tool: &Value, name: &str) -> Result<(), String> {
        match self.tools.get(name).and_then(|c| c.call) {
            Some(true) => Ok(()),
            Some(false) => Err("the config says call = false".into()),
            None => {
                if tool.pointer("/annotations/readOnlyHint") != Some(&Value::Bool(true)) {
                    return Err("not marked readOnlyHint: true and not allowed in the config ([tools.NAME] call = true)".into());
                }
                match self.refuses_open_world(tool) {
                    Some(why) => Err(why),
                    None => Ok(()),
                }
            }
        }
    }

    /// Why a read-only tool is not called: it may reach hosts outside the
    /// test (`openWorldHint` true, or absent: the spec's default is true)
    /// and the run does not allow that (`[calls] open_world`, off by default).
    pub fn refuses_open_world(&self, tool: &Value) -> Option<String> {
        let closed = tool.pointer("/annotations/openWorldHint") == Some(&Value::Bool(false));
        (!self.open_world_calls && !closed).then(|| {
            "read-only, but its openWorldHint is true or absent (the spec's default is true): it may reach hosts outside the test, which mcpcert never makes a server do unless the config allows it ([calls] open_world = true, or [tools.NAME] call = true)".into()
        })
    }

    /// Why a tool the config names for a purpose (`[input_required]`,
    /// `[subscriptions]`) may not be called after all: the config also says
    /// `[tools.NAME] call = false`.
    pub fn forbids(&self, name: &str) -> Option<String> {
        (self.tools.get(name).and_then(|c| c.call) == Some(false))
            .then(|| format!("the config names {name} for these checks but also says [tools.{name}] call = false, so it is not called"))
    }

    /// The operator's settings for one tool (all unset if none).
    pub fn tool(&self, name: &str) -> ToolConfig {
        self.tools.get(name).cloned().unwrap_or_default()
    }
}

/// A configured tool and the arguments to call it with (`[input_required]`,
/// `[subscriptions]`).
#[derive(Debug, Clone, Default)]
pub struct InputTool {
    pub tool: String,
    pub arguments: Value,
}

/// One identity from the target config (`[roles.NAME]`).
#[derive(Debug, Clone, Default)]
pub struct Role {
    pub name: String,
    /// HTTP: headers that authenticate the role (values from the environment).
    pub headers: Vec<(String, String)>,
    /// stdio: environment variables for the spawned process.
    pub env: Vec<(String, String)>,
    /// What the role must never see: literals (any letter case) or `/regex/`.
    pub never_see: Vec<String>,
}

/// A `/regex/` never-see entry that does not compile.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{0}")]
pub struct PatternError(pub String);

/// A compiled never-see entry: a literal (any letter case) or `/regex/`.
pub struct Matcher {
    text: String,
    regex: Option<jsonschema::Validator>,
}

impl Matcher {
    pub fn new(entry: &str) -> Result<Matcher, PatternError> {
        if entry.len() > 2 && entry.starts_with('/') && entry.ends_with('/') {
            let pattern = &entry[1..entry.len() - 1];
            let v = jsonschema::options()
                .build(&json!({"type": "string", "pattern": pattern}))
                .map_err(|e| PatternError(format!("never_see pattern {entry}: {e}")))?;
            return Ok(Matcher { text: entry.to_string(), regex: Some(v) });
        }
        Ok(Matcher { text: entry.to_lowercase(), regex: None })
    }

    pub fn matches(&self, s: &str) -> bool {
        match &self.regex {
            Some(v) => v.is_valid(&Value::String(s.to_string())),
            None => s.to_lowercase().contains(&self.text),
        }
    }

    pub fn shown(&self) -> &str {
        &self.text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matchers() {
        assert!(Matcher::new("production").unwrap().matches("ref://env/Production"));
        assert!(Matcher::new("/prod-[0-9]+/").unwrap().matches("prod-42"));
        assert!(!Matcher::new("/prod-[0-9]+/").unwrap().matches("prod-x"));
        assert!(Matcher::new("/(/").is_err());
    }

    #[test]
    fn a_template_value_naming_no_variable_is_refused() {
        let ok: ConfigFile = toml::from_str("[templates.\"ref://items/{id}\"]\nvalues = { id = \"1\" }\n").unwrap();
        assert!(Policy::from_file(&ok, Path::new("t.toml")).is_ok());
        let typo: ConfigFile = toml::from_str("[templates.\"ref://items/{id}\"]\nvalues = { idd = \"1\" }\n").unwrap();
        let e = Policy::from_file(&typo, Path::new("t.toml")).err().unwrap().to_string();
        assert!(
            e.contains("templates.\"ref://items/{id}\".values.idd") && e.contains("no variable `idd`") && e.contains("variables id"),
            "{e}"
        );
    }

    #[test]
    fn call_policy() {
        let mut p = Policy::default();
        let ro = json!({"name": "a", "annotations": {"readOnlyHint": true}});
        let closed = json!({"name": "c", "annotations": {"readOnlyHint": true, "openWorldHint": false}});
        let rw = json!({"name": "b"});
        assert!(p.call_allowed(&closed, "c").is_ok());
        assert!(p.call_allowed(&ro, "a").is_err(), "by default a read-only tool that may reach the world is not called");
        assert!(p.call_allowed(&rw, "b").is_err());
        p.open_world_calls = true;
        assert!(p.call_allowed(&ro, "a").is_ok(), "[calls] open_world = true lets it be called");
        assert!(p.call_allowed(&rw, "b").is_err(), "…but only if it is read-only");
        assert_eq!(template_variables("ref://items/{id}{?q,lang}{/path*}{name:3}"), ["id", "q", "lang", "path", "name"]);
        p.tools.insert("a".into(), ToolConfig { call: Some(false), ..Default::default() });
        p.tools.insert("b".into(), ToolConfig { call: Some(true), ..Default::default() });
        assert!(p.call_allowed(&ro, "a").is_err(), "call = false wins over readOnlyHint");
        p.open_world_calls = false;
        assert!(p.call_allowed(&rw, "b").is_ok(), "call = true is the operator's decision, open world or not");
    }
}
