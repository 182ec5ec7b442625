//! Suite files: the cases as data. The model here is what the run sees
//! once a file has been loaded and checked (`load`): steps and
//! expectations are enums, each action step holds its check with typed
//! arguments, and every inline schema is compiled once, when first needed
//! (`SchemaCell`; at load, for files under --suites).

mod load;
pub mod requirements;

pub use load::{BUILTIN, FORMAT_SCHEMA, LoadError, load_builtin, load_builtin_era, load_dir};

use crate::checks::DynCheck;
use crate::record::{Basis, Level};
use crate::transport::Transport;
use crate::wire::{HeaderEdit, MetaMode, Revision};
use serde::Deserialize;
use serde_json::Value;
use std::collections::BTreeMap;
use std::sync::Arc;

/// All loaded cases, in run order, with a digest of the files they came from.
#[derive(Debug, Clone)]
pub struct Catalog {
    pub cases: Vec<Case>,
    pub digest: String,
    pub files: Vec<String>,
}

#[derive(Debug, Clone)]
pub struct Case {
    pub id: String,
    pub title: String,
    pub level: Level,
    pub spec: SpecRef,
    /// The sentence of the spec the level rests on.
    pub basis: Basis,
    pub applies: Applies,
    pub steps: Vec<Step>,
    pub expect: Vec<Expectation>,
    pub notes: Option<String>,
    pub revision: Revision,
    /// The suite file it came from.
    pub source: String,
    /// The scenarios of the revision's requirement set this case answers.
    pub answers: Vec<String>,
    /// Scenarios whose subject this case judges more strictly than the
    /// scenario does (by the letter of the spec): it is run and shown with
    /// the requirement set, "beyond the requirement set", and never decides
    /// a scenario's verdict.
    pub beyond: Vec<String>,
    /// Conformance fixtures the server must list for the case to apply.
    pub fixtures: Vec<requirements::Fixture>,
}

impl Case {
    /// The action steps' checks.
    /// Whether the case must run alone: a check type says so, or a step
    /// sends a request that changes the session's state for everyone
    /// (`logging/setLevel`, `resources/subscribe`/`unsubscribe`,
    /// `initialize` on a shared connection or session) or a bodiless DELETE.
    pub fn exclusive(&self) -> bool {
        const STATEFUL: [&str; 4] = ["logging/setLevel", "resources/subscribe", "resources/unsubscribe", "initialize"];
        self.steps.iter().any(|s| match s {
            Step::Action { check, .. } => check.exclusive(),
            // An HTTP initialize without the session id opens a session of
            // its own: the shared one is not touched. The probe's
            // initialize (`from_probe`) is not sent again.
            Step::Send { send, .. } => {
                let own_session = send.method == "initialize"
                    && send.session == SessionHeader::None
                    && self.applies.transports == [crate::transport::Transport::Http];
                !send.fresh && !send.from_probe && !own_session && STATEFUL.contains(&send.method.as_str())
            }
            Step::Http { http, .. } => !http.method.eq_ignore_ascii_case("GET"),
        })
    }

    /// Whether a step calls the tools the call policy allows: the case runs
    /// alone unless each of them says `readOnlyHint: true` (see
    /// `Check::calls_tools`).
    pub fn calls_tools(&self) -> bool {
        self.checks().any(|k| k.calls_tools())
    }

    /// Whether the case must run alone only to observe: every step is a
    /// check that changes nothing, and one of them watches (see
    /// `Check::observes`).
    pub fn observes_alone(&self) -> bool {
        self.steps.iter().all(|s| matches!(s, Step::Action { check, .. } if !check.exclusive() || check.observes()))
            && self.checks().any(|k| k.observes())
    }

    /// Whether a step may call the tool-set trigger (see
    /// `Check::calls_trigger`).
    pub fn calls_trigger(&self) -> bool {
        self.checks().any(|k| k.calls_trigger())
    }

    /// Whether a step calls the `[input_required]` tool (see
    /// `Check::calls_input_tool`).
    pub fn calls_input_tool(&self) -> bool {
        self.checks().any(|k| k.calls_input_tool())
    }

    /// Whether a step calls the `[tasks]` tool.
    pub fn calls_task_tool(&self) -> bool {
        self.checks().any(|k| k.calls_task_tool())
    }

    /// Whether the case judges the whole run's traffic (it runs after every
    /// other case of its revision).
    pub fn run_scoped(&self) -> bool {
        self.checks().any(|k| k.scope() == crate::checks::Scope::Run)
    }

    pub fn checks(&self) -> impl Iterator<Item = &Arc<dyn DynCheck>> {
        self.steps.iter().filter_map(|s| match s {
            Step::Action { check, .. } => Some(check),
            _ => None,
        })
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SpecRef {
    pub document: String,
    pub anchor: String,
    #[serde(default)]
    pub digest: Option<String>,
}

impl SpecRef {
    pub fn render(&self, revision: Revision) -> String {
        // An extension's text lives in its own repository
        // (`ext-tasks/…`), a SEP's in the specification's `seps/`: not
        // under a revision's.
        let mut s = if self.document.starts_with("ext-") || self.document.starts_with("seps/") {
            format!("{}#{}", self.document, self.anchor)
        } else {
            format!("{revision}/{}#{}", self.document, self.anchor)
        };
        if let Some(d) = &self.digest {
            s.push_str(&format!(" ({d})"));
        }
        s
    }
}

/// Which servers a case is for; it is n/a, with the reason, for others.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Applies {
    /// Empty: both.
    #[serde(default)]
    pub transports: Vec<Transport>,
    /// Capabilities the server must advertise.
    #[serde(default)]
    pub capabilities: Vec<String>,
    #[serde(default)]
    pub era: Era,
    /// Extensions the server must advertise (`capabilities.extensions`).
    #[serde(default)]
    pub extensions: Vec<String>,
    /// Conformance fixtures (`tool test_simple_text`, …) the server must
    /// list; parsed into `Case::fixtures`.
    #[serde(default)]
    pub fixtures: Vec<String>,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Era {
    #[default]
    Any,
    /// A 2026-07-28 server that does not also serve 2025-11-25.
    ModernOnly,
    /// A server that issued an `Mcp-Session-Id`.
    Session,
}

#[derive(Debug, Clone)]
pub enum Step {
    /// A JSON-RPC request or notification.
    Send { name: Option<String>, send: SendStep },
    /// A bodiless HTTP request (GET, DELETE…).
    Http { name: Option<String>, http: RawHttp },
    /// A named check.
    Action { action: String, check: Arc<dyn DynCheck> },
}

impl Step {
    /// The `as` name a message step is referred to by.
    pub fn name(&self) -> Option<&str> {
        match self {
            Step::Send { name, .. } | Step::Http { name, .. } => name.as_deref(),
            Step::Action { .. } => None,
        }
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SendStep {
    pub method: String,
    #[serde(default)]
    pub params: Option<Value>,
    #[serde(default)]
    pub meta: MetaMode,
    /// Protocol version placed in `_meta` (and the header) instead of the suite's.
    #[serde(default)]
    pub version: Option<String>,
    #[serde(default)]
    pub id: Option<Value>,
    #[serde(default)]
    pub notification: bool,
    #[serde(default)]
    pub headers: BTreeMap<String, Option<String>>,
    /// A new connection (HTTP) or process (stdio): a malformed request,
    /// or one that must come first.
    #[serde(default)]
    pub fresh: bool,
    /// A well-formed request the server must refuse: on the connection the
    /// negative probes share, never the main one.
    #[serde(default)]
    pub negative: bool,
    /// 2025-11-25 HTTP: send the session id or not.
    #[serde(default)]
    pub session: SessionHeader,
    /// Initialize era, `initialize` only: the revision probe already sent
    /// it, first on a connection or process of its own and with no session
    /// id; that answer is judged instead of opening one more session.
    #[serde(default)]
    pub from_probe: bool,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SessionHeader {
    #[default]
    Keep,
    None,
}

impl SendStep {
    /// The header edits the step asks for.
    pub fn edits(&self) -> Vec<HeaderEdit> {
        let mut e = HeaderEdit::from_map(&self.headers);
        if self.session == SessionHeader::None {
            e.push(HeaderEdit::Remove("Mcp-Session-Id".into()));
        }
        e
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawHttp {
    pub method: String,
    #[serde(default)]
    pub headers: BTreeMap<String, Option<String>>,
    /// On a connection of its own (a negative probe).
    #[serde(default)]
    pub fresh: bool,
}

/// One assertion over one message step's exchange.
#[derive(Debug, Clone)]
pub struct Expectation {
    /// The step it looks at (`as`); None: the last message step.
    pub step: Option<String>,
    /// What the rule is about, put before the failure text.
    pub says: Option<String>,
    pub assert: Assertion,
}

#[derive(Debug, Clone)]
pub enum Assertion {
    /// A result valid as this message type of the wire schema.
    Result(String),
    /// A JSON-RPC error with one of these codes.
    Error(Vec<i64>),
    /// One of these HTTP statuses (HTTP only).
    HttpStatus(Vec<i64>),
    /// The value at `pointer` of the reply matches `schema`.
    Match { pointer: String, schema: Value, validator: Arc<SchemaCell> },
    /// Nothing at this pointer of the reply.
    Absent(String),
    /// No such response header (HTTP only).
    HeaderAbsent(String),
    /// The response id equals the request id.
    IdEchoed,
    /// A response header whose value matches `schema` (HTTP only).
    Header { name: String, schema: Value, validator: Arc<SchemaCell> },
}

/// An expectation's JSON Schema, compiled once, when a case first needs it.
/// A suite file under `--suites` has its schemas compiled as it loads (a
/// schema that does not compile is a load error, with file and path); the
/// built-in suites' schemas are compiled when `builtin_list_matches_the_suites_folder_and_loads`
/// loads the same files that way, so a run does not compile the schemas of
/// cases it does not select.
#[derive(Debug, Default)]
pub struct SchemaCell(std::sync::OnceLock<Result<jsonschema::Validator, String>>);

impl SchemaCell {
    /// The validator for `schema` (the schema this cell was made for).
    pub fn get(&self, schema: &Value) -> Result<&jsonschema::Validator, &str> {
        self.0.get_or_init(|| jsonschema::options().offline().build(schema).map_err(|e| e.to_string())).as_ref().map_err(|e| e.as_str())
    }
}
