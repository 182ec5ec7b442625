//! The TOML target file (`--config`).
//!
//! ```toml
//! [target]
//! command = "mcp-server-time --local-timezone UTC"   # or: url = "http://127.0.0.1:8000/mcp"
//! cwd = "."
//! allowed_origin = "http://localhost:3000"         # HTTP: an Origin the server accepts
//! [target.env]
//! TZ = "UTC"
//! [target.headers]
//! Authorization = { env = "MY_SERVER_TOKEN" }        # value read from the environment
//! [timeouts]
//! startup_ms = 15000
//! request_ms = 10000
//! [pagination]
//! max_pages = 10000          # a list that has not ended by then fails
//! [calls]
//! max_tools = 50             # call at most this many tools
//! [completion]
//! max_probes = 4             # values tried per prompt argument / template variable
//! [input_required]           # a tool that asks for input (multi round-trip checks)
//! tool = "confirm_order"
//! arguments = { item = "book" }
//! [tasks]                    # a tool that may run as a task (tasks extension)
//! tool = "render_report"
//! arguments = { pages = 3 }
//! budget_seconds = 60        # the most a task is polled before it is an error
//! input_tool = "confirm_order"  # a tool whose task asks for input (tasks/update)
//! input_arguments = { item = "book" }
//! [subscriptions]            # a tool whose call changes the tool set
//! trigger_tool = "toggle_beta"
//! [roles.analyst]           # an identity: its credentials and what it must never see
//! headers = { Authorization = { env = "ANALYST_TOKEN" } }   # HTTP
//! env = { APP_ROLE = "analyst" }                            # stdio
//! never_see = ["production", "/prod-[0-9]+/"]
//! [admission]
//! secret_names = ["password", "secret", "token", "api_key", "authorization"]
//! [auth]                     # a protected server (HTTP): tokens from the built-in test issuer
//! port = 9911                # its port on 127.0.0.1 (fixed: the same iss every run)
//! key_file = "issuer-keys.json"   # keep its signing keys (made when missing)
//! scopes = ["mcp:read", "mcp:tools"]
//! upstream_port = 9912       # play the server's upstream API (token passthrough)
//! [auth.scope_check]         # an operation that needs a scope
//! method = "tools/list"
//! scope = "mcp:read"
//! # or given tokens: token = { env = "MCP_TOKEN" }, expired_token = { env = "…" }, …
//! [tools.create_ticket]      # allow a tool that is not read-only
//! call = true
//! arguments = { title = "mcpcert probe" }
//! invalid_arguments = { title = 42 }
//! error_arguments = { title = "" }   # valid, but the tool reports isError
//! ```

pub mod baseline;
mod policy;
pub mod targets;

pub use policy::{DEFAULT_SECRET_NAMES, InputTool, LoadSpec, Matcher, Policy, Role};

use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::Path;

/// A config file that cannot be used; the message names the file and the
/// place in it.
#[derive(Debug, Clone, thiserror::Error)]
#[error("config {file}: {problem}")]
pub struct ConfigError {
    pub file: String,
    pub problem: String,
}

impl ConfigError {
    fn new(path: &Path, problem: impl Into<String>) -> ConfigError {
        ConfigError { file: path.display().to_string(), problem: problem.into() }
    }
}

#[derive(Debug, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct ConfigFile {
    #[serde(default)]
    pub target: TargetSection,
    #[serde(default)]
    pub timeouts: Timeouts,
    #[serde(default)]
    pub pagination: Pagination,
    #[serde(default)]
    pub calls: Calls,
    #[serde(default)]
    pub admission: Admission,
    #[serde(default)]
    pub completion: Completion,
    pub input_required: Option<InputRequired>,
    pub tasks: Option<TasksConfig>,
    pub subscriptions: Option<Subscriptions>,
    #[serde(default)]
    pub redact: Redact,
    #[serde(default)]
    pub roles: BTreeMap<String, RoleConfig>,
    #[serde(default)]
    pub tools: BTreeMap<String, ToolConfig>,
    /// `[prompts.NAME] arguments = {…}`: what prompts/get of a listed
    /// prompt sends.
    #[serde(default)]
    pub prompts: BTreeMap<String, PromptConfig>,
    /// `[templates."URI-TEMPLATE"] values = {…}`: what a template's
    /// variables are filled with before it is read.
    #[serde(default)]
    pub templates: BTreeMap<String, TemplateConfig>,
    /// `[load]`: the opt-in load check (as `--load N`).
    pub load: Option<LoadConfig>,
    /// `[auth]`: tokens for a protected server (HTTP), from the built-in
    /// test issuer or given.
    pub auth: Option<crate::auth::AuthConfig>,
}

#[derive(Debug, Deserialize, Default, Clone)]
#[serde(deny_unknown_fields)]
pub struct LoadConfig {
    /// Connections (HTTP) or processes (stdio) at once (default 8).
    pub connections: Option<usize>,
    /// Requests in all (default 200).
    pub requests: Option<usize>,
    /// The most the replay may take, in seconds (default 30).
    pub seconds: Option<u64>,
}

#[derive(Debug, Deserialize, Default, Clone)]
#[serde(deny_unknown_fields)]
pub struct PromptConfig {
    pub arguments: serde_json::Map<String, serde_json::Value>,
}

#[derive(Debug, Deserialize, Default, Clone)]
#[serde(deny_unknown_fields)]
pub struct TemplateConfig {
    pub values: BTreeMap<String, String>,
}

/// What is masked in reports and on the console besides configured header
/// values.
#[derive(Debug, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct Redact {
    /// Substrings (any letter case) of environment variable names whose
    /// values are masked; default TOKEN, SECRET, PASSWORD, KEY,
    /// CREDENTIAL, AUTH.
    pub env_names: Option<Vec<String>>,
}

#[derive(Debug, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct Pagination {
    pub max_pages: Option<usize>,
}

#[derive(Debug, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct Calls {
    pub max_tools: Option<usize>,
    /// Let header rejection probes name a tool the call policy does not
    /// allow (a server that skips the check would run it).
    pub probe_uncallable: Option<bool>,
    /// Call the conformance fixtures (`test_*` tools) the server lists
    /// (default true).
    pub fixtures: Option<bool>,
    /// Call tools whose `openWorldHint` is true or absent (default true;
    /// they get only values that cannot resolve): false refuses them.
    pub open_world: Option<bool>,
}

/// A tool that answers `input_required` (2026-07-28 multi round-trip checks).
#[derive(Debug, Deserialize, Clone)]
#[serde(deny_unknown_fields)]
pub struct InputRequired {
    pub tool: String,
    #[serde(default)]
    pub arguments: Option<serde_json::Value>,
}

/// A tool whose call may become a task (the tasks extension's checks),
/// and how long a task may take before it is an `error`.
#[derive(Debug, Deserialize, Clone)]
#[serde(deny_unknown_fields)]
pub struct TasksConfig {
    pub tool: String,
    #[serde(default)]
    pub arguments: Option<serde_json::Value>,
    #[serde(default)]
    pub budget_seconds: Option<u64>,
    /// A tool whose task asks for input (`input_required`, answered with
    /// `tasks/update`), and its arguments.
    #[serde(default)]
    pub input_tool: Option<String>,
    #[serde(default)]
    pub input_arguments: Option<serde_json::Value>,
}

/// One identity (`[roles.NAME]`): how it authenticates and what it must
/// never see (literals, any letter case, or `/regex/`).
#[derive(Debug, Deserialize, Clone, Default)]
#[serde(deny_unknown_fields)]
pub struct RoleConfig {
    /// HTTP: headers whose values come from environment variables.
    #[serde(default)]
    pub headers: BTreeMap<String, HeaderFrom>,
    /// stdio: extra environment for the spawned process.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    #[serde(default)]
    pub never_see: Vec<String>,
}

/// A tool whose call changes the tool set, to see list changes delivered.
#[derive(Debug, Deserialize, Clone)]
#[serde(deny_unknown_fields)]
pub struct Subscriptions {
    pub trigger_tool: String,
    #[serde(default)]
    pub trigger_arguments: Option<serde_json::Value>,
}

#[derive(Debug, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct Completion {
    /// completion/complete probes per argument (default 4).
    pub max_probes: Option<usize>,
}

#[derive(Debug, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct Admission {
    pub secret_names: Option<Vec<String>>,
}

/// What the operator allows for one tool (`[tools.NAME]`).
#[derive(Debug, Deserialize, Default, Clone)]
#[serde(deny_unknown_fields)]
pub struct ToolConfig {
    /// true: may be called even if not read-only; false: never called.
    pub call: Option<bool>,
    /// Arguments for a call that should succeed.
    pub arguments: Option<serde_json::Value>,
    /// Arguments that break the inputSchema (never sent to other tools).
    pub invalid_arguments: Option<serde_json::Value>,
    /// Valid arguments for which the tool reports an execution error.
    pub error_arguments: Option<serde_json::Value>,
}

#[derive(Debug, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct TargetSection {
    pub command: Option<String>,
    pub url: Option<String>,
    pub cwd: Option<String>,
    /// HTTP: an Origin the server allows (enables the 403 check for others).
    pub allowed_origin: Option<String>,
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    #[serde(default)]
    pub headers: BTreeMap<String, HeaderFrom>,
}

#[derive(Debug, Deserialize, Clone)]
#[serde(deny_unknown_fields)]
pub struct HeaderFrom {
    /// Name of the environment variable holding the value.
    pub env: String,
}

#[derive(Debug, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct Timeouts {
    pub startup_ms: Option<u64>,
    pub request_ms: Option<u64>,
    /// The most a request that keeps reporting progress may take.
    pub ceiling_ms: Option<u64>,
}

pub fn load(path: &Path) -> Result<ConfigFile, ConfigError> {
    let text = std::fs::read_to_string(path).map_err(|e| ConfigError::new(path, e.to_string()))?;
    let cfg: ConfigFile = toml::from_str(&text).map_err(|e| ConfigError::new(path, e.to_string()))?;
    if cfg.target.command.is_some() && cfg.target.url.is_some() {
        return Err(ConfigError::new(path, "at target: give either `command` (stdio) or `url` (HTTP), not both"));
    }
    Ok(cfg)
}

/// Resolve `[target.headers]` from the environment.
pub fn resolve_headers(cfg: &ConfigFile, path: &Path) -> Result<Vec<(String, String)>, ConfigError> {
    headers_from_env(&cfg.target.headers, path, "target.headers")
}

/// `[target.headers]`: each lower-case name and the variable it is read from.
pub fn header_envs(cfg: &ConfigFile) -> Vec<(String, String)> {
    cfg.target.headers.iter().map(|(k, from)| (k.to_ascii_lowercase(), from.env.clone())).collect()
}

/// Header values read from the environment variables the config names.
fn headers_from_env(headers: &BTreeMap<String, HeaderFrom>, path: &Path, at: &str) -> Result<Vec<(String, String)>, ConfigError> {
    headers
        .iter()
        .map(|(name, from)| {
            std::env::var(&from.env)
                .map(|v| (name.clone(), v))
                .map_err(|_| ConfigError::new(path, format!("at {at}.{name}: environment variable `{}` is not set", from.env)))
        })
        .collect()
}

/// Resolve the roles' headers from the environment and check their
/// never-see patterns.
pub fn resolve_roles(cfg: &ConfigFile, path: &Path) -> Result<Vec<Role>, ConfigError> {
    let mut out = Vec::new();
    for (name, r) in &cfg.roles {
        let headers = headers_from_env(&r.headers, path, &format!("roles.{name}.headers"))?;
        for p in &r.never_see {
            Matcher::new(p).map_err(|e| ConfigError::new(path, format!("at roles.{name}.never_see: {e}")))?;
        }
        out.push(Role {
            name: name.clone(),
            headers,
            env: r.env.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
            never_see: r.never_see.clone(),
        });
    }
    Ok(out)
}
