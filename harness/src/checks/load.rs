//! The opt-in load check (`--load N`): the replay's answers judged (see
//! replay.rs), and several listen streams at once, one trigger: every change
//! a stream gets must carry its own subscription id.

use super::judge::listen::{notifications, refusal, sub_id};
use super::listen::{Trigger, listen_sessions, trigger};
use super::replay::{comparable, responses};
use super::{Check, Cx, Need, Outcome, PARTIAL};
use crate::record::Transport;
use crate::wire::Revision;
use serde::Deserialize;
use serde_json::{Value, json};

/// What a replay case judges.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LoadJudge {
    /// Every response carries its own request's id (none crossed over).
    Ids,
    /// Every request answered exactly once (none lost, none twice).
    Answered,
    /// Every answer is its serial answer; no error the serial pass lacked.
    SameAnswers,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LoadReplay {
    judge: LoadJudge,
}

impl Check for LoadReplay {
    const NAME: &'static str = "load_replay";
    const ABOUT: &'static str = "opt-in (--load N): the run's read-only requests replayed from N connections at once; `judge`: ids (each response carries its request's id), answered (each request answered exactly once), same-answers (each answer is its serial one)";

    fn needs(&self) -> Vec<Need> {
        vec![Need::Load]
    }

    fn exclusive(&self) -> bool {
        true
    }

    async fn run(&self, cx: &Cx<'_>) -> Outcome {
        let run = match cx.facts.load(cx).await {
            Ok(r) => r,
            Err(e) => return Outcome::error(e),
        };
        if run.templates.is_empty() {
            return Outcome::na(
                "the run found no read-only request to replay (no list advertised, nothing to read, no read-only tool the policy allows)",
            );
        }
        let mut out = Outcome::default();
        out.exchanges.push(run.summary(cx.rev));
        let mut shown = 0usize;
        // Requests that got no answer in time, or whose connection closed
        // first: under load that is no proof the server dropped them (the
        // machine, mcpcert's own load processes included, may have been
        // saturated), so they make the case `error`, not a failure.
        let mut unanswered: Vec<String> = Vec::new();
        for s in &run.shots {
            let t = &run.templates[s.template];
            let all = responses(s);
            let own: Vec<&Value> = all.iter().filter(|r| r.get("id") == Some(&s.id)).collect();
            // HTTP 429/503: the server shed load (with no body, plain text,
            // or a JSON-RPC error for this request). Not a lost answer, but
            // not the serial one either.
            let shed = s.ex.refused_as_busy() && all.iter().all(|r| r.get("id") == Some(&s.id) && r.get("error").is_some());
            // A request the transport got nothing for (a timeout, a closed
            // connection): no judge can say what its answer was.
            if !shed && own.is_empty() && all.is_empty() && s.ex.error.is_some() {
                unanswered.push(format!(
                    "request {} ({}, connection {}): {}",
                    s.id,
                    t.label,
                    s.conn + 1,
                    s.ex.error.as_ref().map(|e| e.to_string()).unwrap_or_default()
                ));
                continue;
            }
            let problem = match self.judge {
                LoadJudge::Answered | LoadJudge::Ids if shed => None,
                LoadJudge::SameAnswers if shed => Some(format!(
                    "request {} ({}) was refused under load with HTTP {} (sent alone it was answered)",
                    s.id,
                    t.label,
                    s.ex.status.unwrap_or(0)
                )),
                LoadJudge::Ids => all.iter().find(|r| r.get("id") != Some(&s.id)).map(|r| {
                    format!("request {} ({}) got a response carrying id {} instead", s.id, t.label, r.get("id").unwrap_or(&Value::Null))
                }),
                // The exchange ended (HTTP status, body read, other
                // answers) without this request's response.
                LoadJudge::Answered if own.is_empty() => {
                    Some(format!("request {} ({}, connection {}) got no response ({})", s.id, t.label, s.conn + 1, s.ex.summary()))
                }
                LoadJudge::Answered if own.len() > 1 => Some(format!("request {} ({}) was answered {} times", s.id, t.label, own.len())),
                LoadJudge::Answered => None,
                LoadJudge::SameAnswers => own.first().and_then(|r| {
                    let now = comparable(&t.method, r);
                    match &t.serial {
                        Some(serial) if *serial != now => Some(format!(
                            "request {} ({}) under load: {} — sent alone it was {}",
                            s.id,
                            t.label,
                            crate::wire::brief(&now),
                            crate::wire::brief(serial)
                        )),
                        _ => None,
                    }
                }),
            };
            if let Some(p) = problem {
                if shown < 5 {
                    out.exchanges.push(s.ex.clone());
                }
                shown += 1;
                if shown <= 10 {
                    out.fail(p);
                }
            }
        }
        if shown > 10 {
            out.fail(format!("… {} more such requests (of {})", shown - 10, run.shots.len()));
        }
        if out.failures.is_empty()
            && let Some(c) = &run.cut_short
        {
            out.set_error(format!("the replay did not finish: {c} ({PARTIAL})"));
        }
        if let Some(first) = unanswered.first()
            && out.failures.is_empty()
        {
            out.set_error(format!(
                "{} of {} requests got no answer within the request timeout while {} connections were loaded, e.g. {first}; that is no proof the server dropped them (the machine may have been saturated), so what they were answered cannot be judged ({PARTIAL})",
                unanswered.len(),
                run.shots.len(),
                run.connections
            ));
        }
        out
    }
}

/// Several listen streams at once, one trigger: every tool-list change a
/// stream gets carries its own subscription id, no other stream's.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LoadListens {}

impl Check for LoadListens {
    const NAME: &'static str = "load_listens";
    const ABOUT: &'static str = "opt-in (--load N): up to 4 subscriptions/listen streams (toolsListChanged) open at once on their own connections, one trigger: every tool-list change a stream gets carries its own subscriptionId only";
    const REVISIONS: &'static [Revision] = &Revision::STATELESS;

    fn needs(&self) -> Vec<Need> {
        vec![Need::Load, Need::Trigger, Need::Transport(Transport::Http)]
    }

    fn exclusive(&self) -> bool {
        true
    }

    async fn run(&self, cx: &Cx<'_>) -> Outcome {
        let Some(spec) = cx.policy.load else { return Outcome::na("the load check is off (--load N turns it on)") };
        let t = match trigger(cx).await {
            Trigger::Use(t) => t,
            Trigger::Forbidden(why) => return Outcome::na(format!("the trigger may not be called: {why}")),
            Trigger::None => {
                return Outcome::na(
                    "no tool that changes the tool set ([subscriptions] trigger_tool, or the fixture test_trigger_tool_change)",
                );
            }
        };
        let k = spec.connections.clamp(2, 4);
        let subs: Vec<(Value, Value)> =
            (0..k).map(|i| (json!(format!("mcpcert-load-listen-{i}")), json!({"toolsListChanged": true}))).collect();
        let listens = match listen_sessions(cx, subs, Some(&t)).await {
            Ok(l) => l,
            Err(e) => return Outcome::error(e),
        };
        let mut out = Outcome::default();
        if let Some(r) = listens.first().and_then(refusal) {
            return Outcome::na(format!("subscriptions/listen is refused: {}", crate::wire::brief(r)));
        }
        if !listens.iter().any(|l| l.triggered) {
            return Outcome::error(format!(
                "the trigger {} did not run{}",
                t.tool,
                listens
                    .iter()
                    .find_map(|l| l.trigger_error.clone().or_else(|| l.silent.clone()))
                    .map(|e| format!(": {e}"))
                    .unwrap_or_default()
            ));
        }
        // The rule judged is the subscription id each notification carries
        // (MUST); whether a change is delivered at all is a SHOULD that
        // subscriptions/list-changed-delivered judges.
        let mut quiet = Vec::new();
        let mut judged = 0usize;
        for l in &listens {
            out.exchanges.extend(l.exchanges.iter().cloned());
            let changes: Vec<&Value> = notifications(&l.frames)
                .filter(|n| n.get("method").and_then(|m| m.as_str()) == Some("notifications/tools/list_changed"))
                .collect();
            if changes.is_empty() {
                quiet.push(l.id.to_string());
            }
            for n in changes {
                judged += 1;
                match sub_id(n) {
                    Some(id) if id == &l.id => {}
                    other => out.fail(format!(
                        "the stream of subscription {} got a tool-list change carrying subscriptionId {} (another stream's, or none); each stream must carry its own",
                        l.id,
                        other.map(|v| v.to_string()).unwrap_or_else(|| "(none)".into())
                    )),
                }
            }
        }
        if judged == 0 {
            return Outcome::na(format!(
                "no notifications/tools/list_changed arrived on any of the {} streams after the trigger, so no subscription id can be judged (delivery itself is subscriptions/list-changed-delivered's rule)",
                listens.len()
            ));
        }
        if !quiet.is_empty() {
            out.exchanges.push(crate::record::Exchange::note(
                "streams without the change",
                format!("no tool-list change arrived on {} (not judged here: delivery is a SHOULD)", quiet.join(", ")),
            ));
        }
        out
    }
}
