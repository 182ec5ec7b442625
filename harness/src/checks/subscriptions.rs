//! subscriptions/listen (2026-07-28): the acknowledgment, the subscription
//! id on every notification, nothing unrequested, and (with a configured
//! trigger) list changes delivered on the subscription.

use super::judge::listen::{Listen, judge_acknowledgment, judge_ids, judge_unrequested, notifications, refusal};
use super::{Check, Cx, Need, Outcome};
use crate::record::Exchange;
use crate::session::GRACE;
use crate::wire::{Revision, brief};
use serde::Deserialize;
use std::sync::Arc;

/// Which rule a `subscription_probe` case judges.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ListenCheck {
    Acknowledged,
    Unrequested,
    Ids,
    ListChanged,
}

/// One rule of subscriptions/listen.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SubscriptionProbe {
    check: ListenCheck,
}

impl Check for SubscriptionProbe {
    const NAME: &'static str = "subscription_probe";
    const ABOUT: &'static str = "one rule (`check`) of subscriptions/listen; list-changed needs the trigger tool of [subscriptions]";
    const REVISIONS: &'static [Revision] = &Revision::STATELESS;

    fn calls_trigger(&self) -> bool {
        // The shared trigger listens run the trigger, which changes the
        // tool set; every case judges them.
        true
    }

    fn needs(&self) -> Vec<Need> {
        if self.check == ListenCheck::ListChanged { vec![Need::Trigger] } else { Vec::new() }
    }

    async fn run(&self, cx: &Cx<'_>) -> Outcome {
        let mut out = Outcome::default();
        // A trigger the config also forbids is never called.
        let trigger = match super::listen::trigger(cx).await {
            super::listen::Trigger::Use(t) => Some(t),
            super::listen::Trigger::Forbidden(why) if self.check == ListenCheck::ListChanged => return Outcome::na(why),
            _ => None,
        };
        if self.check == ListenCheck::ListChanged && trigger.is_none() {
            return Outcome::na(format!(
                "no tool that changes the tool set is named in the target config ([subscriptions] trigger_tool = \"NAME\"), and the server lists no conformance fixture `{}`",
                super::listen::FIXTURE_TRIGGER
            ));
        }
        // The two subscriptions a trigger serves (an empty filter with a
        // number id, every kind with a string id) are watched together,
        // once, and judged by four cases: the acknowledgment case both.
        let pair = match cx.facts.trigger_listens(cx).await {
            Ok(p) => p,
            Err(e) => return Outcome::error(e),
        };
        let sessions: Vec<Arc<Listen>> = match self.check {
            ListenCheck::Acknowledged if !Arc::ptr_eq(&pair.0, &pair.1) => vec![pair.0.clone(), pair.1.clone()],
            ListenCheck::Unrequested | ListenCheck::Acknowledged => vec![pair.0.clone()],
            _ => vec![pair.1.clone()],
        };
        if let Some(first) = sessions.first().filter(|s| unimplemented(s)) {
            cx.facts.note_listen_unimplemented(first.clone());
        }
        let trigger_name = trigger.as_ref().map(|t| t.tool.as_str()).unwrap_or("?");
        for (i, s) in sessions.iter().enumerate() {
            out.exchanges.extend(s.exchanges.iter().cloned());
            if let Some(r) = refusal(s) {
                if unimplemented(s) {
                    // The other subscriptions were sent too: shown as well.
                    for rest in &sessions[i + 1..] {
                        out.exchanges.extend(rest.exchanges.iter().cloned());
                    }
                    out.set_na("the server does not implement subscriptions/listen (-32601); the spec never states that the method itself is required (digest 14.8), so its rules do not apply");
                    return out;
                }
                // Refused with another error: no subscription was opened, so
                // the rules about what it delivers have nothing to judge
                // (the spec never requires a server to accept a listen).
                // Whatever did come on it before the refusal is still judged.
                let delivered = notifications(&s.frames).count();
                let why = format!(
                    "the server refused the subscription with {} (the spec does not require a server to accept subscriptions/listen), so no subscription was opened{}",
                    brief(r.get("error").unwrap_or(r)),
                    if delivered == 0 { " and nothing was delivered on it to judge" } else { "" }
                );
                match self.check {
                    ListenCheck::Unrequested if delivered > 0 => out.failures.extend(judge_unrequested(s)),
                    ListenCheck::Ids if delivered > 0 => out.failures.extend(judge_ids(s).0),
                    _ => {}
                }
                if out.failures.is_empty() {
                    for rest in &sessions[i + 1..] {
                        out.exchanges.extend(rest.exchanges.iter().cloned());
                    }
                    out.set_na(why);
                    return out;
                }
                continue;
            }
            if let Some(why) = &s.silent {
                out.set_error(why.clone());
                return out;
            }
            if s.exchanges.first().is_some_and(|e| e.error.is_some() && e.frames.is_empty()) {
                out.set_error(format!("subscriptions/listen: {}", s.exchanges[0].summary()));
                return out;
            }
            // What the trigger should have caused cannot be judged without it.
            if let (Some(e), ListenCheck::Ids | ListenCheck::ListChanged) = (&s.trigger_error, self.check) {
                out.set_error(format!("the trigger got no answer, so what it should have caused cannot be judged: {e}"));
                return out;
            }
            match self.check {
                ListenCheck::Acknowledged => {
                    let (f, note) = judge_acknowledgment(s);
                    out.failures.extend(f);
                    if let Some(n) = note {
                        out.exchanges.push(Exchange::note("end of subscription", n));
                    }
                }
                ListenCheck::Unrequested => {
                    out.failures.extend(judge_unrequested(s));
                    let acked = notifications(&s.frames)
                        .any(|v| v.get("method").and_then(|m| m.as_str()) == Some("notifications/subscriptions/acknowledged"));
                    if out.failures.is_empty() && !acked {
                        out.set_na("the subscription was never acknowledged (subscriptions/acknowledged says why), so there is nothing on it to judge");
                    }
                }
                ListenCheck::Ids => {
                    let (f, seen) = judge_ids(s);
                    out.failures.extend(f);
                    if seen == 0 && out.failures.is_empty() {
                        out.set_na(if trigger.is_none() {
                            "no notification arrived on the subscription to judge; name a tool that changes the tool set in the config ([subscriptions] trigger_tool) to cause one"
                        } else {
                            "no notification arrived on the subscription after the trigger (see subscriptions/list-changed)"
                        });
                    }
                }
                ListenCheck::ListChanged => {
                    let arrived = notifications(&s.frames)
                        .any(|v| v.get("method").and_then(|m| m.as_str()) == Some("notifications/tools/list_changed"));
                    if !arrived && let Some(how) = ended(s) {
                        out.set_na(format!("the server ended the subscription ({how}) before the trigger, so nothing could be delivered on it (the acknowledgment case judges how it ended)"));
                    } else if !arrived {
                        out.fail(format!(
                            "after {trigger_name} changed the tool set, no notifications/tools/list_changed arrived on the subscription {}",
                            if s.own_stream {
                                format!("before its stream was closed (at most {} ms after subscriptions/listen)", s.watched_ms)
                            } else {
                                format!("within {} ms of the trigger's reply", GRACE.as_millis())
                            }
                        ));
                    }
                }
            }
        }
        out
    }
}

/// How the server ended the subscription, if it did: the listen result,
/// or notifications/cancelled for it.
fn ended(s: &Listen) -> Option<&'static str> {
    s.frames.iter().filter_map(|f| f.value.as_ref()).find_map(|v| {
        if v.get("id") == Some(&s.id) && v.get("result").is_some() {
            Some("the listen result")
        } else if v.get("method").and_then(|m| m.as_str()) == Some("notifications/cancelled")
            && v.pointer("/params/requestId") == Some(&s.id)
        {
            Some("notifications/cancelled")
        } else {
            None
        }
    })
}

/// Whether the server answered the subscription -32601 (method not found).
fn unimplemented(s: &Listen) -> bool {
    refusal(s).and_then(|r| r.pointer("/error/code")).and_then(|c| c.as_i64()) == Some(-32601)
}
