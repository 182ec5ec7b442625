//! Shrinking: a failing message's `params` made smaller (members left out,
//! strings and arrays halved, nesting undone) while the server still breaks
//! the same rule with it, for the rules any params may break (a crash, a
//! hang, a wrong id, a broken frame, a 5xx). At most `TRIES` inputs are
//! sent per failure.

use super::Failed;
use super::inputs::{Input, Payload};
use super::oracle::{self, Rule};
use super::send::{Answer, Peer};
use serde_json::Value;
use std::collections::BTreeSet;

const TRIES: usize = 40;

const SHRINKABLE: [Rule; 5] = [Rule::Crashed, Rule::Unanswered, Rule::WrongId, Rule::InvalidFrame, Rule::ServerError];

pub async fn shrink(peer: &mut Peer, f: &Failed) -> Option<(Input, Answer)> {
    let start = f.input.json.clone()?;
    // Only rules any params may break: smaller params can make an invalid
    // request valid, and a rule about the answer to invalid input
    // (accepted-invalid, error-code) would then be judged on input that
    // is no longer what the rule is about.
    let rules: BTreeSet<Rule> = f.findings.iter().map(|x| x.rule).filter(|r| SHRINKABLE.contains(r)).collect();
    if rules.is_empty() {
        return None;
    }
    let mut best = start.clone();
    let mut found: Option<(Input, Answer)> = None;
    let mut tries = 0;
    'outer: while tries < TRIES {
        for cand in candidates(&best) {
            if tries >= TRIES {
                break 'outer;
            }
            tries += 1;
            let input = Input { payload: Payload::Message(cand.to_string().into_bytes()), json: Some(cand.clone()), ..f.input.clone() };
            let a = peer.send(&input).await;
            let same = oracle::judge(&input, &a).iter().any(|x| rules.contains(&x.rule));
            if a.died.is_some() || a.timed_out {
                peer.restart().await;
            }
            if same {
                best = cand;
                found = Some((input, a));
                continue 'outer;
            }
        }
        break;
    }
    found
}

/// Smaller versions of the message: only its `params` change (the id and
/// method decide what answer is due), `_meta` kept.
fn candidates(msg: &Value) -> Vec<Value> {
    let Some(params) = msg.get("params") else { return Vec::new() };
    smaller(params, 0)
        .into_iter()
        .map(|p| {
            let mut m = msg.clone();
            m["params"] = p;
            m
        })
        .collect()
}

fn smaller(v: &Value, depth: usize) -> Vec<Value> {
    let mut out = Vec::new();
    match v {
        Value::Object(o) => {
            for k in o.keys().filter(|k| *k != "_meta") {
                let mut c = o.clone();
                c.remove(k);
                out.push(Value::Object(c));
            }
            if depth < 3 {
                for (k, x) in o.iter().filter(|(k, _)| *k != "_meta") {
                    for s in smaller(x, depth + 1) {
                        let mut c = o.clone();
                        c.insert(k.clone(), s);
                        out.push(Value::Object(c));
                    }
                }
            }
        }
        Value::Array(a) if !a.is_empty() => {
            out.push(Value::Array(a[..a.len() / 2].to_vec()));
            if let Some(first) = a.first() {
                out.push(first.clone());
            }
        }
        Value::String(s) if s.len() > 8 => {
            let mut end = s.len() / 2;
            while !s.is_char_boundary(end) {
                end -= 1;
            }
            out.push(Value::String(s[..end].to_string()));
        }
        _ => {}
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn candidates_change_params_only_and_get_smaller() {
        let m = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"cursor": "abcdefghijklmnop", "_meta": {"k": 1}}});
        let c = candidates(&m);
        assert!(c.iter().all(|x| x["id"] == 1 && x["method"] == "tools/list" && x["params"]["_meta"] == json!({"k": 1})));
        assert!(c.iter().any(|x| x["params"].get("cursor").is_none()));
        assert!(c.iter().any(|x| x["params"]["cursor"] == "abcdefgh"));
    }
}
