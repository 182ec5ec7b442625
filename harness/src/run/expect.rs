//! Judging one expectation against one exchange. Returns a failure text
//! (expected vs actual) or None when it holds.

use crate::record::{Exchange, clip};
use crate::suite::{Assertion, Expectation};
use crate::transport::Transport;
use crate::wire::{self, Revision, schema};
use serde_json::Value;

pub fn judge(e: &Expectation, ex: &Exchange, revision: Revision) -> Option<String> {
    let said = |default: String| -> String {
        match &e.says {
            Some(s) => format!("{s}: {default}"),
            None => default,
        }
    };
    let http = ex.transport == Some(Transport::Http);
    match &e.assert {
        Assertion::Result(def) => match ex.result() {
            Some(result) => {
                let v = schema::schemas().validate(revision, def, result);
                if v.is_empty() {
                    None
                } else {
                    let list: Vec<String> = v.iter().take(8).map(|x| format!("  - {}", at_result(x))).collect();
                    Some(said(format!("expected a result valid as {def}; it breaks the schema:\n{}", list.join("\n"))))
                }
            }
            None => Some(said(format!("expected a result valid as {def}; got {}", ex.summary()))),
        },
        Assertion::Error(codes) => match ex.error_code() {
            Some(c) if codes.contains(&c) => None,
            _ => {
                let want = codes.iter().map(|c| c.to_string()).collect::<Vec<_>>().join(" or ");
                Some(said(format!("expected JSON-RPC error {want}; got {}", ex.summary())))
            }
        },
        Assertion::HttpStatus(_) if !http => None,
        Assertion::HttpStatus(want) => match ex.status {
            Some(s) if want.contains(&(s as i64)) => None,
            _ => Some(said(format!(
                "expected HTTP status {}; got {}",
                want.iter().map(|c| c.to_string()).collect::<Vec<_>>().join(" or "),
                ex.summary()
            ))),
        },
        Assertion::Match { pointer, schema, validator } => {
            // "" is the whole reply; name it so the message reads well.
            let place = if pointer.is_empty() { "the reply".to_string() } else { pointer.clone() };
            let Some(r) = &ex.response else {
                return Some(said(format!("expected {place} to match {}; got {}", wire::brief(schema), ex.summary())));
            };
            let Some(val) = r.pointer(pointer) else {
                return Some(said(format!(
                    "expected a value at {place} matching {}; nothing is there (reply: {})",
                    wire::brief(schema),
                    ex.summary()
                )));
            };
            let validator = match validator.get(schema) {
                Ok(v) => v,
                Err(e) => return Some(said(format!("mcpcert's schema for {place} does not compile: {e}"))),
            };
            let errs: Vec<String> = validator.iter_errors(val).take(5).map(|x| x.to_string()).collect();
            if errs.is_empty() {
                None
            } else if pointer.is_empty() {
                // The reply is quoted once, not twice.
                Some(said(format!("got {} (it does not match {})", ex.summary(), wire::brief(schema))))
            } else {
                Some(said(format!("expected {place} to match {}; got {} ({})", wire::brief(schema), wire::brief(val), errs.join("; "))))
            }
        }
        Assertion::Absent(p) => {
            ex.response.as_ref().and_then(|r| r.pointer(p)).map(|v| said(format!("expected nothing at {p}; found {}", wire::brief(v))))
        }
        Assertion::HeaderAbsent(_) if !http => None,
        Assertion::HeaderAbsent(h) => {
            ex.header(h).map(|v| said(format!("expected no `{h}` response header; the server sent `{h}: {}`", clip(v, 120))))
        }
        Assertion::IdEchoed => {
            let got = ex.response.as_ref().and_then(|r| r.get("id")).cloned();
            match (&got, &ex.request_id) {
                (Some(a), Some(b)) if a == b => None,
                _ => Some(said(wire::id_mismatch(ex.request_id.as_ref(), got.as_ref()))),
            }
        }
        Assertion::Header { .. } if !http => None,
        Assertion::Header { name, schema, validator } => {
            let Some(val) = ex.header(name) else {
                return Some(said(format!("expected a `{name}` response header; there is none ({})", ex.summary())));
            };
            let validator = match validator.get(schema) {
                Ok(v) => v,
                Err(e) => return Some(said(format!("mcpcert's schema for header `{name}` does not compile: {e}"))),
            };
            if validator.is_valid(&Value::String(val.to_string())) {
                None
            } else {
                Some(said(format!("expected header `{name}` to match {}; got {:?}", wire::brief(schema), clip(val, 120))))
            }
        }
    }
}

fn at_result(v: &schema::Violation) -> String {
    let p = if v.path.is_empty() { "/result".to_string() } else { format!("/result{}", v.path) };
    format!("{} at {p}: {}", v.message_type, v.problem)
}
