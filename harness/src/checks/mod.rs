//! The vocabulary that suite files call by name. Each check is one type:
//! its name, its typed arguments (the suite's `with`, deserialized when the
//! suite is loaded, unknown keys rejected), its scope (one case, or the
//! whole run's traffic), what it needs (transport, revision, config), and
//! `run`, which asks the session for exchanges and judges what came back.
//! `registry` lists them all. Facts several cases judge (the tools walk,
//! the tool calls, the listen streams) are gathered once per revision in
//! `Facts`. The judging itself is in `judge`: pure functions with unit
//! tests, no I/O.

pub mod judge;

mod apps;
mod audits;
mod auth;
mod calls;
mod client_requests;
mod completion;
mod extensions;
mod facts;
mod fixtures;
mod follow;
mod headers;
mod input_required;
mod legacy_tasks;
mod lifecycle;
pub(crate) mod listen;
mod lists;
mod load;
mod mrtr;
mod older;
mod passthrough;
mod reads;
mod registry;
mod replay;
mod roles;
mod skill_dirs;
mod skill_list;
mod skills;
mod stateless;
mod subscriptions;
mod task_eras;
mod task_input;
mod task_input_run;
mod task_listen;
mod task_listen_run;
mod task_roles;
mod task_run;
mod task_tool;
mod tasks;
mod tools;
mod views;
mod walk;

pub use crate::record::LoadStats;
pub use facts::Facts;
pub use judge::Weight;
pub use registry::{ArgError, Entry, REGISTRY, lookup};
pub use walk::{ListMethod, Walk, WalkEnd};

use crate::config::Policy;
use crate::record::Exchange;
use crate::record::Transport;
use crate::session::Connection;
use crate::session::{Msg, Session, SessionError};
use crate::wire::Revision;
use futures_util::future::BoxFuture;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use std::future::Future;

/// What a check judges: its own traffic, or everything the server sent
/// during the revision's run (such a check is reproduced by rerunning the
/// whole revision).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    Case,
    Run,
}

/// Something a check needs besides the revision and capabilities its case
/// names. Those the run knows before it starts make the case `n/a` with
/// the reason when they are missing; the others are judged while it runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Need {
    /// Only over this transport.
    Transport(Transport),
    /// An `http://` URL (header names in exact letter case).
    PlainHttp,
    /// `[input_required]`: a tool that asks for input.
    InputTool,
    /// `[subscriptions]`: a tool whose call changes the tool set.
    Trigger,
    /// `[roles.NAME]`: this many identities.
    Roles(usize),
    /// `--allowed-origin` / `[target] allowed_origin`.
    AllowedOrigin,
    /// `[tasks]`: a tool that may run as a task.
    TaskTool,
    /// `[tasks] input_tool`: a tool whose task asks for input.
    TaskInputTool,
    /// A tool the call policy allows (known once the tools are listed).
    CallableTool,
    /// `--load N` / `[load]`: the opt-in load check.
    Load,
    /// `[auth]`: tokens for a protected server.
    Auth,
}

impl Need {
    /// How `mcpcert list` names it.
    pub fn describe(self) -> String {
        match self {
            Need::Transport(t) => format!("transport {t}"),
            Need::PlainHttp => "an http:// URL".into(),
            Need::InputTool => "config [input_required]".into(),
            Need::TaskTool => "config [tasks]".into(),
            Need::TaskInputTool => "config [tasks] input_tool".into(),
            Need::Trigger => "config [subscriptions] (or the fixture test_trigger_tool_change)".into(),
            Need::Roles(1) => "config [roles.NAME]".into(),
            Need::Roles(n) => format!("config [roles.NAME] x{n}"),
            Need::AllowedOrigin => "--allowed-origin".into(),
            Need::CallableTool => "a callable tool (readOnlyHint and openWorldHint: false, or [tools.NAME] call = true)".into(),
            Need::Load => "--load N (or config [load])".into(),
            Need::Auth => "config [auth] (the built-in test issuer, or given tokens)".into(),
        }
    }

    /// Why the case does not apply, when the need is known to be unmet
    /// before the run (None: met, or only known while the case runs).
    pub fn unmet(self, policy: &Policy, target: &crate::session::TargetSpec) -> Option<String> {
        match self {
            Need::Transport(t) if target.transport() != t => Some(format!("applies to {t} targets only")),
            Need::PlainHttp if target.url().is_some_and(|u| !u.starts_with("http://")) => Some(
                "header names in upper and mixed case are sent over mcpcert's own plain HTTP/1.1 connection, which needs an http:// URL (over https mcpcert sends names in lower case only)".into(),
            ),
            Need::InputTool if policy.input_tool.is_none() => {
                Some("no tool that asks for input is named in the target config ([input_required] tool = \"NAME\"); these checks need one".into())
            }
            // The task tool is the config's or one found while the run goes
            // (`task_tool::find`): the cases say why when there is none.
            Need::TaskInputTool if policy.task_input_tool.is_none() => Some(
                "no tool whose task asks for input is named in the target config ([tasks] input_tool = \"NAME\", input_arguments = {…}); these checks answer its input requests with tasks/update".into(),
            ),
            Need::Roles(1) if policy.roles.is_empty() => {
                Some("no roles are configured ([roles.NAME] with the role's credentials and what it must never see)".into())
            }
            Need::Roles(n) if policy.roles.len() < n => Some(format!("this case compares identities: it needs at least {n} configured roles ([roles.NAME])")),
            Need::AllowedOrigin if policy.allowed_origin.is_none() => {
                Some("the target config names no allowed Origin ([target] allowed_origin), so mcpcert cannot tell a foreign one".into())
            }
            Need::Auth if policy.auth.is_none() => Some(
                "the server is not judged as a protected resource: [auth] in the target config gives the run its tokens (mcpcert's built-in test issuer, or tokens given); `mcpcert auth-setup` prints what the server must trust".into(),
            ),
            Need::Load if policy.load.is_none() => {
                Some("the load check is opt-in: --load N (or [load] in the config) replays the run's read-only requests from N connections at once".into())
            }
            _ => None,
        }
    }
}

/// Said by every `error` that stops a case because a fact it judges is
/// partial (the fault matrix lets a fault that breaks the fact take such
/// cases to `error`, never to a failure).
pub const PARTIAL: &str = "never a pass on partial data";

/// How a check ended, besides the failures it found. `NotApplicable` wins
/// over `Error`, and `Error` over failures.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum End {
    #[default]
    Judged,
    NotApplicable(String),
    Error(String),
}

/// What a check produced: the exchanges to show, the rule violations found
/// (expected vs actual, one per line), and how it ended.
#[derive(Debug, Default)]
pub struct Outcome {
    pub exchanges: Vec<Exchange>,
    pub failures: Vec<String>,
    pub end: End,
}

impl Outcome {
    pub fn na(why: impl Into<String>) -> Outcome {
        Outcome { end: End::NotApplicable(why.into()), ..Default::default() }
    }
    pub fn error(why: impl Into<String>) -> Outcome {
        Outcome { end: End::Error(why.into()), ..Default::default() }
    }
    /// The case does not apply (whatever else happened).
    pub fn set_na(&mut self, why: impl Into<String>) {
        self.end = End::NotApplicable(why.into());
    }
    /// No usable answer; the first error is the one reported.
    pub fn set_error(&mut self, why: impl Into<String>) {
        if self.end == End::Judged {
            self.end = End::Error(why.into());
        }
    }
    /// Stop with an error, keeping what was gathered so far.
    pub fn with_error(mut self, why: impl Into<String>) -> Outcome {
        self.set_error(why);
        self
    }
    pub fn fail(&mut self, what: impl Into<String>) {
        self.failures.push(what.into());
    }
    /// A case that stops because a fact it needs could not be gathered
    /// completely (`why`): `error`, never a pass or n/a on partial data.
    pub fn partial(why: &str) -> Outcome {
        let mut out = Outcome::default();
        out.incomplete(why);
        out
    }

    /// What was judged rests on a fact that could not be gathered
    /// completely (`why`): failures found stand (what was seen is wrong
    /// whatever the rest holds), but no failure is no pass: then the case is
    /// `error`, naming the fact and why.
    pub fn incomplete(&mut self, why: &str) {
        if self.failures.is_empty() {
            self.set_error(format!("{why}, so this cannot be judged on what was gathered ({PARTIAL})"));
        } else {
            self.exchanges.push(Exchange::note("judged on partial data", format!("{why}; the failures above are in what was gathered")));
        }
    }

    pub fn is_error(&self) -> bool {
        matches!(self.end, End::Error(_))
    }
    pub fn is_na(&self) -> bool {
        matches!(self.end, End::NotApplicable(_))
    }
}

/// What a check runs with: the session, the revision's shared facts, the
/// operator's policy, and which case and revision it serves.
pub struct Cx<'a> {
    pub session: &'a Session,
    pub facts: &'a Facts,
    pub policy: &'a Policy,
    pub rev: Revision,
    pub case: &'a str,
}

impl<'a> Cx<'a> {
    /// The same context for gathering a shared fact: its traffic is filed
    /// in the frame log under `label`, not under whichever case asked first.
    pub fn shared(&self, label: &'a str) -> Cx<'a> {
        Cx { session: self.session, facts: self.facts, policy: self.policy, rev: self.rev, case: label }
    }

    pub fn transport(&self) -> Transport {
        self.session.transport()
    }

    /// The capabilities the server advertised for this revision.
    pub fn caps(&self) -> Value {
        self.session.info(self.rev).and_then(|i| i.capabilities.clone()).unwrap_or(json!({}))
    }

    pub fn advertises(&self, cap: &str) -> bool {
        self.session.info(self.rev).is_some_and(|i| i.advertises(cap))
    }

    /// Whether the server advertises an extension
    /// (`capabilities.extensions.<id>` in `server/discover`).
    pub fn advertises_extension(&self, id: &str) -> bool {
        self.session
            .info(self.rev)
            .is_some_and(|i| i.capabilities.as_ref().and_then(|c| c.get("extensions")).and_then(|e| e.get(id)).is_some())
    }

    /// A request of this revision with a new id.
    pub fn request(&self, method: &str, params: Option<Value>) -> Value {
        self.session.request(self.rev, method, params)
    }

    /// One request on the revision's main connection.
    pub async fn on_main(&self, label: &str, body: &Value) -> Result<Exchange, SessionError> {
        self.session.on_main(&Msg::new(self.rev, label, body), self.case).await
    }

    /// A negative probe (a request whose answer must be an error, or that
    /// is out of contract), kept off the main connection so that state it
    /// leaves cannot reach the cases that judge normal behaviour: over
    /// stdio on the process the revision's negative probes share, checked
    /// by a sentinel after it; over HTTP on a connection of its own
    /// (`Session::isolated`). The last exchange answers the last message.
    pub async fn isolated(&self, msgs: &[Msg<'_>]) -> Result<Vec<Exchange>, SessionError> {
        self.session.isolated(msgs, self.case).await
    }

    /// One malformed request (see `isolated`): its exchanges, the last one
    /// the probe's.
    pub async fn probe(&self, label: &str, body: &Value) -> Result<Vec<Exchange>, SessionError> {
        self.isolated(&[Msg::new(self.rev, label, body)]).await
    }

    /// One well-formed request the server must answer with an error (an
    /// unknown name, cursor or method, a method of a capability not
    /// advertised, arguments that break a tool's schema): on the
    /// connection such probes share, never the main one.
    pub async fn negative(&self, msg: &Msg<'_>) -> Result<Exchange, SessionError> {
        self.session.on_negative(msg, self.case).await
    }

    /// One message on a connection the case owns; its frames are filed
    /// under the case.
    pub async fn exchange(&self, conn: &mut Connection, msg: &Msg<'_>) -> Exchange {
        self.session.exchange(conn, msg, Some(self.case)).await
    }

    /// A list walked on the revision's main connection (not shared).
    pub async fn walk_main(&self, list: ListMethod) -> Result<Walk, SessionError> {
        let mut main = self.session.main(self.rev).await?;
        // HTTP: on a handle of its own (same client, same session), so the
        // main connection is not held for the whole walk: other requests
        // (and other walks) go meanwhile.
        let mut w = match main.http_clone() {
            Some(mut handle) => {
                drop(main);
                walk::walk_on(self, &mut handle, list).await
            }
            None => walk::walk_on(self, &mut main, list).await,
        };
        // What a fresh stdio process needs before these lines (the handshake).
        let pre = self.session.preamble(self.rev);
        for ex in w.exchanges.iter_mut() {
            ex.preamble = pre.clone();
        }
        w.down = walk::confirm_down(self, &w).await;
        Ok(w)
    }
}

/// A check type. The suite names it (`NAME`) and gives its arguments
/// (`with`), which deserialize into the type itself.
pub trait Check: DeserializeOwned + std::fmt::Debug + Send + Sync + 'static {
    const NAME: &'static str;
    /// One line for `mcpcert list --checks` and the registry docs.
    const ABOUT: &'static str;
    const SCOPE: Scope = Scope::Case;
    /// The revisions whose rules it judges.
    const REVISIONS: &'static [Revision] = &Revision::ALL;

    /// What it needs; may depend on the arguments.
    fn needs(&self) -> Vec<Need> {
        Vec::new()
    }

    /// Whether a case running it must run alone (`-j` notwithstanding):
    /// it changes what other requests see (a tool set, a log level, a
    /// subscription, a session), calls tools that may, or judges timing.
    fn exclusive(&self) -> bool {
        false
    }

    /// Whether it calls the tools the call policy allows: such a case runs
    /// alone unless every one of them says `readOnlyHint: true` in the
    /// revision's shared tools walk (the scheduler reads it once a case has
    /// gathered it; before that, or without it, the case runs alone).
    fn calls_tools(&self) -> bool {
        false
    }

    /// Whether it calls the `[input_required]` tool: such a case runs alone
    /// unless that tool says `readOnlyHint: true` in the revision's shared
    /// tools walk (as for `calls_tools`).
    fn calls_input_tool(&self) -> bool {
        false
    }

    /// Whether it calls the `[tasks]` tool (as `calls_input_tool`).
    fn calls_task_tool(&self) -> bool {
        false
    }

    /// Whether it is `exclusive` only to observe (nothing else may send
    /// while it looks) and changes nothing: the scheduler may run it at the
    /// end of the stretch of cases it sits in, rather than split it.
    fn observes(&self) -> bool {
        false
    }

    /// Whether it may call the `[subscriptions]` trigger (or the fixture
    /// that changes the tool set): such a case runs alone when there is a
    /// trigger to call.
    fn calls_trigger(&self) -> bool {
        false
    }

    fn run(&self, cx: &Cx<'_>) -> impl Future<Output = Outcome> + Send;
}

/// A check with its arguments, as a suite step holds it.
pub trait DynCheck: std::fmt::Debug + Send + Sync {
    fn name(&self) -> &'static str;
    fn scope(&self) -> Scope;
    fn needs(&self) -> Vec<Need>;
    fn exclusive(&self) -> bool;
    fn calls_tools(&self) -> bool;
    fn calls_input_tool(&self) -> bool;
    fn calls_task_tool(&self) -> bool;
    fn observes(&self) -> bool;
    fn calls_trigger(&self) -> bool;
    fn run<'a>(&'a self, cx: &'a Cx<'a>) -> BoxFuture<'a, Outcome>;
}

impl<T: Check> DynCheck for T {
    fn name(&self) -> &'static str {
        T::NAME
    }
    fn scope(&self) -> Scope {
        T::SCOPE
    }
    fn needs(&self) -> Vec<Need> {
        Check::needs(self)
    }
    fn exclusive(&self) -> bool {
        Check::exclusive(self)
    }
    fn calls_tools(&self) -> bool {
        Check::calls_tools(self)
    }
    fn calls_input_tool(&self) -> bool {
        Check::calls_input_tool(self)
    }
    fn calls_task_tool(&self) -> bool {
        Check::calls_task_tool(self)
    }
    fn observes(&self) -> bool {
        Check::observes(self)
    }
    fn calls_trigger(&self) -> bool {
        Check::calls_trigger(self)
    }
    fn run<'a>(&'a self, cx: &'a Cx<'a>) -> BoxFuture<'a, Outcome> {
        Box::pin(Check::run(self, cx))
    }
}

/// Schema problems of a result, listed.
pub(crate) fn schema_problems(cx: &Cx<'_>, def: &str, result: &Value) -> Vec<String> {
    crate::wire::schema::schemas()
        .validate(cx.rev, def, result)
        .iter()
        .take(6)
        .map(|v| format!("the result breaks the {def} schema: {v}"))
        .collect()
}

/// The result of an exchange, or the failure/error that stops the case.
pub(crate) fn result_of(ex: &Exchange, what: &str, out: &mut Outcome) -> Option<Value> {
    if let Some(e) = &ex.error {
        out.set_error(format!("{what}: {e}"));
        return None;
    }
    if let Some(err) = ex.response.as_ref().and_then(|r| r.get("error")) {
        out.fail(format!("{what} was answered with a JSON-RPC error: {}", crate::wire::brief(err)));
        return None;
    }
    match ex.result() {
        Some(r) => Some(r.clone()),
        None => {
            out.set_error(format!("{what}: no result came back ({})", ex.summary()));
            None
        }
    }
}
