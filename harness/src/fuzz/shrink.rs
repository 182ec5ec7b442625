//! Shrinking: a failing message's `params` made smaller (members left out,
//! strings and arrays halved, nesting undone) while the server still breaks
//! the same rule with it, for the rules any params may break (a crash, a
//! hang, a wrong id, a broken frame, a 5xx). Input kept as text (bytes, a
//! value too deep for a JSON value) is shrunk by its size: the depth of its
//! deepest nesting, or the length of its longest run of one byte, searched
//! by halves for the smallest that still fails. At most `TRIES` inputs are
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
    // Only rules any params may break: smaller params can make an invalid
    // request valid, and a rule about the answer to invalid input
    // (accepted-invalid, error-code) would then be judged on input that
    // is no longer what the rule is about.
    let rules: BTreeSet<Rule> = f.findings.iter().map(|x| x.rule).filter(|r| SHRINKABLE.contains(r)).collect();
    if rules.is_empty() {
        return None;
    }
    let Some(start) = f.input.json.clone() else { return shrink_text(peer, f, &rules).await };
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
            if (a.died.is_some() || a.hung) && !peer.restart().await {
                break 'outer;
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

/// Text input made smaller by one size: the depth of its deepest run of
/// `[` (with the `]` that close it), or else its longest run of one byte;
/// the smallest size that still fails, searched by halves.
async fn shrink_text(peer: &mut Peer, f: &Failed, rules: &BTreeSet<Rule>) -> Option<(Input, Answer)> {
    let bytes = match &f.input.payload {
        Payload::Message(b) | Payload::Bytes(b) => b.clone(),
        Payload::Http(_) => return None,
    };
    let (at, n, kind) = longest_run(&bytes)?;
    let make = |size: usize| -> Vec<u8> { resize(&bytes, at, n, size, kind) };
    let (mut lo, mut hi) = (1usize, n);
    let mut found = None;
    let mut tries = 0;
    while lo < hi && tries < TRIES {
        tries += 1;
        let mid = lo + (hi - lo) / 2;
        let payload = match &f.input.payload {
            Payload::Bytes(_) => Payload::Bytes(make(mid)),
            _ => Payload::Message(make(mid)),
        };
        let input = Input { payload, what: format!("{} (shrunk to {mid} of {n})", f.input.what), ..f.input.clone() };
        let a = peer.send(&input).await;
        let same = oracle::judge(&input, &a).iter().any(|x| rules.contains(&x.rule));
        if (a.died.is_some() || a.hung) && !peer.restart().await {
            break;
        }
        if same {
            hi = mid;
            found = Some((input, a));
        } else {
            lo = mid + 1;
        }
    }
    found
}

/// Where the input's size lies: the longest run of `[` (nesting, closed by
/// as many `]` later), else the longest run of one other byte (64 or more).
fn longest_run(b: &[u8]) -> Option<(usize, usize, u8)> {
    let mut best: Option<(usize, usize, u8)> = None;
    let mut i = 0;
    while i < b.len() {
        let mut j = i;
        while j < b.len() && b[j] == b[i] {
            j += 1;
        }
        let (n, c) = (j - i, b[i]);
        let better = match best {
            None => true,
            Some((_, m, k)) => (c == b'[' && k != b'[') || ((c == b'[') == (k == b'[') && n > m),
        };
        if c != b']' && (n >= 64 || (c == b'[' && n >= 8)) && better {
            best = Some((i, n, c));
        }
        i = j;
    }
    best
}

/// The input with its run at `at` (`n` bytes of `c`) made `size` long; a
/// run of `[` takes its closing `]` run along.
fn resize(b: &[u8], at: usize, n: usize, size: usize, c: u8) -> Vec<u8> {
    let mut out = Vec::with_capacity(b.len());
    out.extend_from_slice(&b[..at]);
    out.extend(std::iter::repeat_n(c, size));
    let rest = &b[at + n..];
    if c == b'[' {
        // The matching run of `]`: the first run of at least n of them.
        let close = rest.windows(n).position(|w| w.iter().all(|x| *x == b']'));
        if let Some(k) = close {
            out.extend_from_slice(&rest[..k]);
            out.extend(std::iter::repeat_n(b']', size));
            out.extend_from_slice(&rest[k + n..]);
            return out;
        }
    }
    out.extend_from_slice(rest);
    out
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
    fn text_input_shrinks_by_its_nesting_or_its_longest_run() {
        let deep = format!("{{\"p\":{}1{}}}", "[".repeat(100), "]".repeat(100));
        let (at, n, c) = longest_run(deep.as_bytes()).unwrap();
        assert_eq!((n, c), (100, b'['));
        let small = String::from_utf8(resize(deep.as_bytes(), at, n, 3, c)).unwrap();
        assert_eq!(small, "{\"p\":[[[1]]]}");
        let long = format!("{{\"x\":\"{}\"}}", "x".repeat(200));
        let (at, n, c) = longest_run(long.as_bytes()).unwrap();
        assert_eq!(String::from_utf8(resize(long.as_bytes(), at, n, 2, c)).unwrap(), "{\"x\":\"xx\"}");
    }

    #[test]
    fn candidates_change_params_only_and_get_smaller() {
        let m = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"cursor": "abcdefghijklmnop", "_meta": {"k": 1}}});
        let c = candidates(&m);
        assert!(c.iter().all(|x| x["id"] == 1 && x["method"] == "tools/list" && x["params"]["_meta"] == json!({"k": 1})));
        assert!(c.iter().any(|x| x["params"].get("cursor").is_none()));
        assert!(c.iter().any(|x| x["params"]["cursor"] == "abcdefgh"));
    }
}
