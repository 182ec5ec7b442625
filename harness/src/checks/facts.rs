//! Facts several cases judge, gathered once per revision and shared: the
//! `tools/list` walk, the admission verdicts of its tools, the tool calls,
//! the listen streams a trigger serves, and the header probes' baselines.
//! Each is gathered by the first case that needs it and awaited by the
//! others. A fact that could not be gathered at all is an `Err` with the
//! reason; one that was gathered carries its own outcome (a walk that
//! ended early says how), so a case can tell "could not find out" from
//! "found out, and it is wrong".

use super::calls::{self, Calls};
use super::judge::admission::{self, ToolVerdict};
use super::judge::listen::Listen;
use super::listen::{self, ListenPair};
use super::replay::{self, LoadRun};
use super::walk::{ListMethod, Walk};
use super::{Cx, Outcome};
use crate::record::Exchange;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};
use tokio::sync::OnceCell;

/// A header probe's baseline: the exchange once one was served, and
/// whether one was sent at all (the first goes with the fact's own ids).
#[derive(Default)]
struct BaselineState {
    served: Option<Exchange>,
    tried: bool,
}
type Baseline = tokio::sync::Mutex<BaselineState>;

/// A shared fact, or why it could not be gathered at all.
pub type Fact<T> = Result<Arc<T>, String>;

#[derive(Default)]
pub struct Facts {
    /// The walks of tools/list, prompts/list, resources/list and
    /// resources/templates/list, in `ListMethod` order.
    walks: [tokio::sync::Mutex<Slot<Walk>>; 4],
    /// Each walk once it is kept (read without waiting), in `ListMethod`
    /// order.
    kept: [OnceLock<Arc<Walk>>; 4],
    verdicts: OnceLock<Arc<Vec<ToolVerdict>>>,
    calls: tokio::sync::Mutex<Slot<Calls>>,
    valid_calls: tokio::sync::Mutex<Slot<calls::ValidCalls>>,
    listens: OnceCell<Fact<ListenPair>>,
    /// A subscriptions/listen the server answered -32601 (method not
    /// found): the other listen cases judge that answer instead of asking
    /// again (on stdio, two more processes and the trigger's tool call).
    listen_unimplemented: OnceLock<Arc<Listen>>,
    load: OnceCell<Fact<LoadRun>>,
    /// A list walked cold on a new connection or process (2026-07-28).
    cold: OnceCell<Fact<super::walk::ColdWalk>>,
    /// The `[tasks]` tool's task, followed to its end (tasks extension).
    task: OnceCell<Fact<super::task_run::TaskRun>>,
    /// The tool the tasks cases follow a task on (`task_tool::find`).
    task_tool: OnceCell<Result<crate::config::InputTool, String>>,
    /// The `[tasks] input_tool`'s task, its input answered to the end.
    task_input: OnceCell<Fact<super::task_input_run::InputRun>>,
    /// The `[tasks]` tool's task and its listen streams.
    task_listen: OnceCell<Fact<super::task_listen_run::TaskListen>>,
    /// The `skills/list` walk (skills extension).
    skills: OnceCell<Fact<super::skill_list::SkillList>>,
    /// What each configured role sees.
    roles: tokio::sync::Mutex<Slot<Vec<super::views::Seen>>>,
    /// Header probes' baselines, by request (method and params).
    baselines: Mutex<HashMap<String, Arc<Baseline>>>,
    /// Room for one full list beside the shared walks (see `list_room`).
    list_room: ListRoom,
}

/// One permit: a list asked for beside the shared walk (the
/// deterministic-order walks, the cold walk, the unknown cursor's answer)
/// holds it while its items are parsed.
struct ListRoom(tokio::sync::Semaphore);

impl Default for ListRoom {
    fn default() -> Self {
        ListRoom(tokio::sync::Semaphore::new(1))
    }
}

impl Facts {
    /// Wait until no other walk beside the shared ones holds its items: a
    /// 10,000-tool list is about 8 MB parsed, and three at once (the shared
    /// walk, the unknown cursor's answer, the cold walk) made a run's peak
    /// memory depend on how the cases happened to overlap.
    pub async fn list_room(&self) -> tokio::sync::SemaphorePermit<'_> {
        self.list_room.0.acquire().await.expect("the list room is never closed")
    }

    /// The `tools/list` walk of this revision on its main connection.
    pub async fn tools_walk(&self, cx: &Cx<'_>) -> Fact<Walk> {
        self.list_walk(cx, ListMethod::Tools).await
    }

    /// A list of this revision walked once on its main connection (its
    /// exchanges are filed under the walk, `(shared: tools/list walk)`).
    /// A walk that ended on a page the server refused as busy (HTTP 429 or
    /// 503, after the walker's own retries) is not kept: the next case that
    /// needs it walks again (a case rerun alone after a busy refusal
    /// included), with that case's own ids.
    pub async fn list_walk(&self, cx: &Cx<'_>, list: ListMethod) -> Fact<Walk> {
        let label = WALKS[list as usize];
        let mut slot = self.walks[list as usize].lock().await;
        if let Some(kept) = &slot.kept {
            return kept.clone();
        }
        let walk = async move { cx.shared(label).walk_main(list).await.map(Arc::new).map_err(|e| e.to_string()) };
        let got = if slot.tried {
            walk.await
        } else {
            slot.tried = true;
            fact_ids(cx, label, walk).await
        };
        let busy = got.as_ref().is_ok_and(|w| w.exchanges.last().is_some_and(|e| e.refused_as_busy()));
        if !busy {
            slot.kept = Some(got.clone());
            if let Ok(w) = &got {
                let _ = self.kept[list as usize].set(w.clone());
            }
        }
        got
    }

    /// The tools walk, if a case has gathered it (nothing is sent).
    pub fn tools_walk_gathered(&self) -> Option<Arc<Walk>> {
        self.walk_gathered(ListMethod::Tools)
    }

    /// A list's walk, if a case has gathered it (nothing is sent).
    pub fn walk_gathered(&self, list: ListMethod) -> Option<Arc<Walk>> {
        self.kept[list as usize].get().cloned()
    }

    /// The shared walk when it lists tools; otherwise how the case ends
    /// (error, or n/a when the server lists none).
    pub async fn listed_tools(&self, cx: &Cx<'_>) -> Result<Arc<Walk>, Outcome> {
        let w = self.tools_walk(cx).await.map_err(Outcome::error)?;
        if w.items.is_empty() && w.end == super::walk::WalkEnd::Complete {
            return Err(Outcome::na("the server lists no tools"));
        }
        Ok(w)
    }

    /// Admission verdicts for the shared walk's tools, judged once (a list
    /// can hold thousands of tools): for the walk that is kept; a walk that
    /// is not (it ended on a busy refusal) is judged for its asker alone.
    pub fn tool_verdicts(&self, cx: &Cx<'_>, w: &Arc<Walk>) -> Arc<Vec<ToolVerdict>> {
        let judge = || {
            let policy = admission::Policy { secret_names: cx.policy.secret_names.clone() };
            Arc::new(admission::admit_all(&w.items, cx.rev, &policy))
        };
        match self.kept[ListMethod::Tools as usize].get() {
            Some(kept) if Arc::ptr_eq(kept, w) => self.verdicts.get_or_init(judge).clone(),
            _ => judge(),
        }
    }

    /// Every tool the policy allows, called once with valid arguments, once
    /// with arguments that break its inputSchema, and once with configured
    /// error arguments. Kept unless the walk it rests on was not kept or a
    /// call was refused as busy (then the next case that needs it calls
    /// again, a case rerun after a busy refusal included).
    pub async fn tool_calls(&self, cx: &Cx<'_>) -> Fact<Calls> {
        let mut slot = self.calls.lock().await;
        if let Some(kept) = &slot.kept {
            return kept.clone();
        }
        let mut keep = true;
        let gather = async {
            let valid = self.valid_calls(cx).await?;
            keep = valid.kept();
            calls::with_negatives(&cx.shared(CALLS), &valid).await.map(Arc::new)
        };
        let got = if std::mem::replace(&mut slot.tried, true) { gather.await } else { fact_ids(cx, CALLS, gather).await };
        if keep && !got.as_ref().is_ok_and(|c| c.records.iter().any(|r| r.ex.refused_as_busy())) {
            slot.kept = Some(got.clone());
        }
        got
    }

    /// The valid calls, if a case has gathered them (nothing is sent).
    pub fn calls_gathered(&self) -> Option<Arc<calls::ValidCalls>> {
        self.valid_calls.try_lock().ok()?.kept.clone()?.ok()
    }

    /// The valid calls of `tool_calls` alone, before its negative probes
    /// are sent (a case that needs a working call waits for these only);
    /// kept as `tool_calls` is.
    pub async fn valid_calls(&self, cx: &Cx<'_>) -> Fact<calls::ValidCalls> {
        let mut slot = self.valid_calls.lock().await;
        if let Some(kept) = &slot.kept {
            return kept.clone();
        }
        let gather = async { calls::gather(&cx.shared(CALLS)).await.map(Arc::new) };
        let got = if std::mem::replace(&mut slot.tried, true) { gather.await } else { fact_ids(cx, CALLS, gather).await };
        if got.as_ref().is_ok_and(|v| v.kept()) || got.is_err() {
            slot.kept = Some(got.clone());
        }
        got
    }

    /// Whether the server cannot serve `list` at all (`Walk::down`): one
    /// root cause, said once, and the cases that need the list are error
    /// with it, never a failure of statelessness.
    pub async fn list_down(&self, cx: &Cx<'_>, list: ListMethod) -> Option<String> {
        self.list_walk(cx, list).await.ok().and_then(|w| w.down.clone())
    }

    /// The first advertised list walked on a new connection or process,
    /// its first page the first request there (`walk::cold_walk`), once.
    pub async fn cold_walk(&self, cx: &Cx<'_>) -> Fact<super::walk::ColdWalk> {
        self.cold.get_or_init(|| fact_ids(cx, COLD, async { super::walk::cold_walk(&cx.shared(COLD)).await.map(Arc::new) })).await.clone()
    }

    /// The tool the tasks cases follow a task on: `[tasks] tool`, else the
    /// first the call policy may call that answers with a task
    /// (`task_tool::find`), once; why none, when none does.
    pub async fn task_tool(&self, cx: &Cx<'_>) -> Result<crate::config::InputTool, String> {
        if let Some(t) = &cx.policy.task_tool {
            return Ok(t.clone());
        }
        self.task_tool.get_or_init(|| fact_ids(cx, TASK_TOOL, async { super::task_tool::find(&cx.shared(TASK_TOOL)).await })).await.clone()
    }

    /// The task tool, if it is known already (nothing is sent).
    pub fn task_tool_known(&self) -> Option<crate::config::InputTool> {
        self.task_tool.get().and_then(|r| r.as_ref().ok().cloned())
    }

    /// The `[tasks]` tool called declaring the tasks extension, and the
    /// task it made polled to its end (`tasks::follow`).
    pub async fn task_run(&self, cx: &Cx<'_>) -> Fact<super::task_run::TaskRun> {
        self.task.get_or_init(|| fact_ids(cx, TASK, async { super::task_run::follow(&cx.shared(TASK)).await.map(Arc::new) })).await.clone()
    }

    /// The `[tasks] input_tool` called declaring the tasks extension, and
    /// the task it made followed through its input rounds (`task_input::follow`).
    pub async fn task_input_run(&self, cx: &Cx<'_>) -> Fact<super::task_input_run::InputRun> {
        self.task_input
            .get_or_init(|| fact_ids(cx, TASK_INPUT, async { super::task_input_run::follow(&cx.shared(TASK_INPUT)).await.map(Arc::new) }))
            .await
            .clone()
    }

    /// The `[tasks]` tool's task and `subscriptions/listen` for it, declaring
    /// the extension and not (`task_listen_run::gather`).
    pub async fn task_listen(&self, cx: &Cx<'_>, tool: &crate::config::InputTool) -> Fact<super::task_listen_run::TaskListen> {
        self.task_listen
            .get_or_init(|| {
                fact_ids(cx, TASK_LISTEN, async { super::task_listen_run::gather(&cx.shared(TASK_LISTEN), tool).await.map(Arc::new) })
            })
            .await
            .clone()
    }

    /// The `skills/list` walk, declaring the skills extension.
    pub async fn skill_list(&self, cx: &Cx<'_>) -> Fact<super::skill_list::SkillList> {
        self.skills
            .get_or_init(|| fact_ids(cx, SKILLS, async { super::skill_list::walk(&cx.shared(SKILLS)).await.map(Arc::new) }))
            .await
            .clone()
    }

    /// What each configured role sees (`roles::see_all`), once for every
    /// rule judged over it.
    /// Kept once gathered with nothing refused as busy (a case rerun alone
    /// after a busy refusal sees the roles again).
    pub async fn roles_seen(&self, cx: &Cx<'_>) -> Fact<Vec<super::views::Seen>> {
        let mut slot = self.roles.lock().await;
        if let Some(kept) = &slot.kept {
            return kept.clone();
        }
        let gather = async { super::views::see_all(&cx.shared(ROLES)).await.map(Arc::new) };
        let got = if std::mem::replace(&mut slot.tried, true) { gather.await } else { fact_ids(cx, ROLES, gather).await };
        // An error (a walk refused as busy among them) is gathered again too.
        let busy = got.as_ref().map_or(true, |v| v.iter().any(|s| s.exchanges.iter().any(|e| e.refused_as_busy())));
        if !busy {
            slot.kept = Some(got.clone());
        }
        got
    }

    /// The subscriptions with an empty filter and with `toolsListChanged`,
    /// watched together once (with the trigger, if any).
    pub async fn trigger_listens(&self, cx: &Cx<'_>) -> Fact<ListenPair> {
        self.listens
            .get_or_init(|| fact_ids(cx, LISTENS, async { listen::trigger_pair(&cx.shared(LISTENS)).await.map(Arc::new) }))
            .await
            .clone()
    }

    /// Note that the server answered this subscriptions/listen with -32601
    /// (method not found). The first noted is kept.
    pub fn note_listen_unimplemented(&self, refused: Arc<Listen>) {
        let _ = self.listen_unimplemented.set(refused);
    }

    /// A subscriptions/listen the server already answered -32601, if one was.
    pub fn listen_unimplemented(&self) -> Option<Arc<Listen>> {
        self.listen_unimplemented.get().cloned()
    }

    /// The load replay (`--load N`), made once.
    pub async fn load(&self, cx: &Cx<'_>) -> Fact<LoadRun> {
        self.load.get_or_init(|| fact_ids(cx, LOAD, async { replay::replay(&cx.shared(LOAD)).await.map(Arc::new) })).await.clone()
    }

    /// The load replay's figures, if one was made.
    pub fn load_stats(&self, rev: crate::wire::Revision) -> Option<crate::record::LoadStats> {
        self.load.get().and_then(|r| r.as_ref().ok()).map(|r| r.stats(rev))
    }

    /// The baseline of a header probe's request (`key`: its method and
    /// params), sent by `send` by the first case that probes the request;
    /// the others wait for it and show the same exchange. Only a baseline
    /// that was served is kept: one that failed (no answer, refused as
    /// busy, an error) is sent again by the next case that needs it (a
    /// case rerun alone after a busy refusal included), with that case's
    /// own ids. `Err` when it could not be sent at all.
    pub async fn baseline<Fut>(&self, cx: &Cx<'_>, key: &str, send: impl FnOnce() -> Fut) -> Result<Exchange, String>
    where
        Fut: std::future::Future<Output = Result<Exchange, String>>,
    {
        let slot = match self.baselines.lock() {
            Ok(mut m) => m.entry(key.to_string()).or_default().clone(),
            Err(_) => Arc::default(),
        };
        let mut held = slot.lock().await;
        if let Some(ex) = &held.served {
            return Ok(ex.clone());
        }
        let sent = if held.tried {
            send().await
        } else {
            held.tried = true;
            fact_ids(cx, &format!("{BASELINE} {key}"), send()).await
        };
        if let Ok(ex) = &sent
            && ex.error.is_none()
            && ex.result().is_some()
        {
            held.served = Some(ex.clone());
        }
        sent
    }
}

/// A shared fact gathered in bulk: kept once nothing of it was refused as
/// busy; whether it was tried (a second gathering takes the asking case's
/// ids, not the fact's, so that no id is sent twice).
pub struct Slot<T> {
    kept: Option<Fact<T>>,
    tried: bool,
}

impl<T> Default for Slot<T> {
    fn default() -> Self {
        Slot { kept: None, tried: false }
    }
}

/// The shared facts' names: the frame log files their traffic under them,
/// and their request ids come from blocks named after them.
/// The list walks' names, in `ListMethod` order.
const WALKS: [&str; 4] = [
    "(shared: tools/list walk)",
    "(shared: prompts/list walk)",
    "(shared: resources/list walk)",
    "(shared: resources/templates/list walk)",
];
const CALLS: &str = "(shared: tool calls)";
const COLD: &str = "(shared: a list walked cold on a new connection or process)";
const TASK: &str = "(shared: a task followed to its end)";
const TASK_TOOL: &str = "(shared: a tool that makes a task)";
const TASK_INPUT: &str = "(shared: a task's input rounds answered)";
const TASK_LISTEN: &str = "(shared: a task's listen streams)";
const SKILLS: &str = "(shared: skills/list walk)";
const LISTENS: &str = "(shared: listen streams)";
const ROLES: &str = "(shared: what each role sees)";
const LOAD: &str = "(shared: load replay)";
pub(crate) const BASELINE: &str = "(shared: header probe baseline)";

/// A fact's gathering, with the request ids of its own block (see
/// `session::with_fact_ids`).
fn fact_ids<F: std::future::Future>(cx: &Cx<'_>, fact: &str, f: F) -> impl std::future::Future<Output = F::Output> + use<F> {
    crate::session::with_fact_ids(&format!("{} {fact}", cx.rev), f)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn facts_gathered_in_bulk_have_blocks_of_their_own() {
        // A name the id blocks do not know would get a block of a thousand
        // ids picked by hash, too few for a walk or the calls.
        for name in WALKS.into_iter().chain([CALLS, COLD, LISTENS, ROLES, LOAD, TASK, TASK_INPUT]) {
            assert!(crate::session::BULK_FACTS.contains(&name), "{name}");
        }
    }
}
