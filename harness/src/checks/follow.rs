//! A request whose method may answer `input_required` (2026-07-28:
//! `tools/call`, `prompts/get`, `resources/read`), followed to its final
//! result as a client does. Those methods' response types are unions (the
//! method's result, or an `InputRequiredResult`), so a check that judges
//! the result judges the final one, and each `input_required` round on the
//! way against its own type.
//!
//! The first request declares what the caller gives (usually no client
//! capabilities). A round that asks for something it did not declare is
//! started again once, from the original params, declaring elicitation,
//! sampling and roots; a round that asks for nothing undeclared is retried
//! with an answer to every input request (made from the requested schema,
//! never naming a real host) and its `requestState` byte for byte. At most
//! `ROUNDS` retries: a server still asking then is left there (`still_asking`).

use super::Cx;
use super::judge::input::{MAY_ASK, all_capabilities, input_required_problems, is_input_required, needed_capability, responses};
use crate::record::Exchange;
use crate::session::{Msg, SessionError};
use crate::wire::schema::schemas;
use crate::wire::{HeaderEdit, KEY_CLIENT_CAPS};
use serde_json::{Value, json};

/// Retries answered at most.
pub const ROUNDS: usize = 5;

/// What following a request brought.
pub struct Followed {
    /// Every exchange, in order; the last one holds the final answer.
    pub exchanges: Vec<Exchange>,
    /// What the `input_required` rounds on the way broke of their type.
    pub problems: Vec<String>,
    /// How many rounds answered `input_required`.
    pub asked: usize,
    /// The server still asked for input after `ROUNDS` retries.
    pub still_asking: bool,
}

impl Followed {
    /// The exchange with the final answer.
    pub fn last(&self) -> &Exchange {
        self.exchanges.last().expect("a followed request has at least one exchange")
    }

    /// A note for the transcript, when the server asked for input.
    pub fn note(&self, what: &str) -> Option<Exchange> {
        (self.asked > 0).then(|| {
            Exchange::note(
                format!("{what}: input_required"),
                if self.still_asking {
                    format!("the server answered input_required {} times and still asked after {ROUNDS} retries; the final result was not reached, so it is not judged", self.asked)
                } else {
                    format!(
                        "the server answered input_required {} time(s) (allowed: the method's result may be an InputRequiredResult); mcpcert answered as a client that declares elicitation, sampling and roots, and judges the final result",
                        self.asked
                    )
                },
            )
        })
    }
}

/// Send `body` (a request of this revision, with header `edits`) on the
/// main connection and follow any `input_required` answer to the final
/// result. Each retry is the same request with a new id (and a new
/// progress token, if it had one).
pub async fn follow(cx: &Cx<'_>, label: &str, body: &Value, edits: &[HeaderEdit]) -> Result<Followed, SessionError> {
    let send = |what: String, b: Value| async move { cx.session.on_main(&Msg::new(cx.rev, &what, &b).edits(edits), cx.case).await };
    let first = send(label.to_string(), body.clone()).await?;
    let mut f = Followed { exchanges: vec![first], problems: Vec::new(), asked: 0, still_asking: false };
    let method = body.get("method").and_then(|m| m.as_str()).unwrap_or("");
    if !cx.rev.is_stateless() || !MAY_ASK.contains(&method) {
        return Ok(f);
    }
    let caps_ptr = format!("/params/_meta/{}", KEY_CLIENT_CAPS.replace('~', "~0").replace('/', "~1"));
    let mut declared = body.pointer(&caps_ptr).cloned().unwrap_or(json!({}));
    let mut restarted = false;
    let mut retries = 0;
    loop {
        let Some(r) = f.last().result().filter(|_| is_input_required(f.last().response.as_ref())).cloned() else { return Ok(f) };
        f.asked += 1;
        for v in schemas().validate(cx.rev, "InputRequiredResult", &r).iter().take(4) {
            f.problems.push(format!("{label}: the input_required result breaks the InputRequiredResult schema: {v}"));
        }
        f.problems.extend(input_required_problems(&r).into_iter().map(|p| format!("{label}: {p}")));
        if retries >= ROUNDS {
            f.still_asking = true;
            return Ok(f);
        }
        retries += 1;
        let undeclared = r
            .get("inputRequests")
            .and_then(|q| q.as_object())
            .into_iter()
            .flatten()
            .filter_map(|(_, q)| needed_capability(q))
            .any(|c| declared.get(c).is_none());
        let mut next = again(cx, body, retries);
        let what = if undeclared && !restarted {
            // Asked for what the request did not declare (a rule of its own,
            // judged by the input_required cases): start again as a client
            // that has it.
            restarted = true;
            declared = all_capabilities();
            format!("{label} (again, declaring elicitation, sampling and roots)")
        } else {
            next["params"]["inputResponses"] = responses(r.get("inputRequests"));
            if let Some(s) = r.get("requestState") {
                next["params"]["requestState"] = s.clone();
            }
            format!("{label} (retry {retries}, answering what it asked)")
        };
        if let Some(c) = next.pointer_mut(&caps_ptr) {
            *c = declared.clone();
        }
        f.exchanges.push(send(what, next).await?);
    }
}

/// The first request again, with a new id (and progress token). The id is
/// the first one's plus 100,000 a round (inside the block of ids the case
/// or fact draws from, which uses far fewer), so that it does not depend
/// on what else is in flight.
fn again(cx: &Cx<'_>, body: &Value, round: usize) -> Value {
    let mut b = body.clone();
    b["id"] = match body.get("id").and_then(|i| i.as_i64()) {
        Some(i) => json!(i + 100_000 * round as i64),
        None => cx.session.next_id(),
    };
    if let Some(t) = b.pointer_mut("/params/_meta/progressToken") {
        *t = json!(format!("{}-retry-{round}", t.as_str().map(String::from).unwrap_or_else(|| t.to_string())));
    }
    b
}
