//! completion/complete: what to complete is discovered from the server's
//! own prompts (their arguments) and resource templates (their variables);
//! each is probed with an empty value and a few short prefixes.

use super::judge::completion::{CompletionTarget, completion_problems, targets_from};
use super::walk::ListMethod;
use super::{Check, Cx, Outcome};
use crate::record::Exchange;
use futures_util::StreamExt;
use serde::Deserialize;
use serde_json::json;

/// Prefixes tried after the empty value.
const PREFIXES: [&str; 3] = ["a", "e", "s"];

/// The items of a list the server offers (none if it does not advertise
/// it), and why they are partial, if they are.
async fn listed(cx: &Cx<'_>, list: ListMethod) -> Result<(Vec<serde_json::Value>, Option<String>), String> {
    if !cx.advertises(list.capability()) {
        return Ok((Vec::new(), None));
    }
    let w = cx.facts.list_walk(cx, list).await?;
    Ok(((*w.items).clone(), w.partial()))
}

/// Prompt arguments and template variables the server offers, and why the
/// lists they come from are partial, if they are.
async fn completion_targets(cx: &Cx<'_>) -> Result<(Vec<CompletionTarget>, Option<String>), String> {
    // The two walks do not depend on each other: gathered at once.
    let (p, t) = futures_util::future::join(listed(cx, ListMethod::Prompts), listed(cx, ListMethod::Templates)).await;
    let ((prompts, p1), (templates, p2)) = (p?, t?);
    Ok((targets_from(&prompts, &templates), p1.or(p2)))
}

/// Every prompt argument and template variable the server lists completes.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CompletionProbe {}

impl Check for CompletionProbe {
    const NAME: &'static str = "completion_probe";
    const ABOUT: &'static str = "completion/complete of each listed prompt argument and template variable (empty value, then short prefixes) gives a well-formed result";

    async fn run(&self, cx: &Cx<'_>) -> Outcome {
        let mut out = Outcome::default();
        let (targets, partial) = match completion_targets(cx).await {
            Ok(t) => t,
            Err(e) => return Outcome::error(e),
        };
        if targets.is_empty() {
            if let Some(p) = partial {
                return Outcome::partial(&format!("nothing to complete was listed, but {p}"));
            }
            return Outcome::na("nothing to complete: no prompt has arguments and no resource template has variables");
        }
        let per_arg = cx.policy.completion_probes.max(1);
        let mut judged = 0;
        // Every probe's request (and id) is made first, in order; they are
        // then sent several at a time (the run's limit on requests in
        // flight, -j, holds for them too) and judged in that order.
        let probes: Vec<(String, serde_json::Value)> = targets
            .iter()
            .take(50)
            .flat_map(|t| std::iter::once("").chain(PREFIXES).take(per_arg).map(move |value| (t, value)))
            .map(|(t, value)| {
                let p = json!({"ref": t.reference, "argument": {"name": t.argument, "value": value}});
                (format!("complete {} from {value:?}", t.what), cx.request("completion/complete", Some(p)))
            })
            .collect();
        let sends: Vec<_> = probes.iter().map(|(label, body)| cx.on_main(label, body)).collect();
        let mut sent = futures_util::stream::iter(sends).buffered(8);
        let mut labels = probes.iter().map(|(l, _)| l);
        while let (Some(ex), Some(label)) = (sent.next().await, labels.next()) {
            let ex = match ex {
                Ok(e) => e,
                Err(e) => return Outcome::error(e.to_string()),
            };
            if let Some(e) = &ex.error {
                out.set_error(format!("{label}: {e}"));
                out.exchanges.push(ex);
                return out;
            }
            // Without a `completions` capability (2024-11-05) a server says
            // it has no completion by answering "method not found".
            if judged == 0 && !cx.rev.has(crate::wire::Feature::CompletionsCapability) && ex.error_code() == Some(-32601) {
                let mut na = Outcome::na(format!(
                    "the server answers completion/complete with -32601 (method not found): it does not implement completion, which {} lets it leave out (there is no `completions` capability to say so)",
                    cx.rev
                ));
                na.exchanges.push(ex);
                return na;
            }
            judged += 1;
            match ex.result() {
                Some(res) => {
                    for p in completion_problems(res, cx.rev) {
                        if out.failures.len() < 20 {
                            out.fail(format!("{label}: {p}"));
                        }
                    }
                }
                None => out.fail(format!("{label}: an argument the server itself lists should complete; got {}", ex.summary())),
            }
            if out.exchanges.len() < 12 || !out.failures.is_empty() && out.exchanges.len() < 24 {
                out.exchanges.push(ex);
            }
        }
        out.exchanges.push(Exchange::note(
            "completion probes",
            format!("{judged} probes over {} argument(s), up to {per_arg} values each", targets.len().min(50)),
        ));
        if let Some(p) = partial {
            out.incomplete(&p);
        }
        out
    }
}
