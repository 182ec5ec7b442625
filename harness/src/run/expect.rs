//! Judging one expectation against one exchange. Returns a failure text
//! (expected vs actual) or None when it holds.

use super::Exchange;
use crate::suite::Expectation;
use crate::wire::{self, schema};
use serde_json::Value;

pub fn judge(e: &Expectation, ex: &Exchange, revision: &str) -> Option<String> {
    let said = |default: String| -> String {
        match &e.says {
            Some(s) => format!("{s}: {default}"),
            None => default,
        }
    };
    if let Some(def) = &e.result {
        return match &ex.response {
            Some(r) if r.get("result").is_some() => {
                let v = schema::schemas().validate(revision, def, &r["result"]);
                if v.is_empty() {
                    None
                } else {
                    let list: Vec<String> = v.iter().take(8).map(|x| format!("  - {}", at_result(x))).collect();
                    Some(said(format!("expected a result valid as {def}; it breaks the schema:\n{}", list.join("\n"))))
                }
            }
            _ => Some(said(format!("expected a result valid as {def}; got {}", ex.summary()))),
        };
    }
    if let Some(codes) = &e.error {
        let codes = codes.to_vec();
        let want = codes.iter().map(|c| c.to_string()).collect::<Vec<_>>().join(" or ");
        return match ex.response.as_ref().and_then(|r| r.pointer("/error/code")).and_then(|c| c.as_i64()) {
            Some(c) if codes.contains(&c) => None,
            _ => Some(said(format!("expected JSON-RPC error {want}; got {}", ex.summary()))),
        };
    }
    if let Some(st) = &e.http_status {
        if ex.transport != "http" {
            return None;
        }
        let want = st.to_vec();
        return match ex.status {
            Some(s) if want.contains(&(s as i64)) => None,
            _ => Some(said(format!(
                "expected HTTP status {}; got {}",
                want.iter().map(|c| c.to_string()).collect::<Vec<_>>().join(" or "),
                ex.summary()
            ))),
        };
    }
    if let Some(m) = &e.matches {
        // "" is the whole reply; name it so the message reads well.
        let place = if m.pointer.is_empty() { "the reply".to_string() } else { m.pointer.clone() };
        let Some(r) = &ex.response else {
            return Some(said(format!("expected {place} to match {}; got {}", wire::brief(&m.schema), ex.summary())));
        };
        let Some(val) = r.pointer(&m.pointer) else {
            return Some(said(format!(
                "expected a value at {place} matching {}; nothing is there (reply: {})",
                wire::brief(&m.schema),
                ex.summary()
            )));
        };
        let validator = match jsonschema::options().offline().build(&m.schema) {
            Ok(v) => v,
            Err(err) => return Some(format!("suite problem: schema at {place} does not compile: {err}")),
        };
        let errs: Vec<String> = validator.iter_errors(val).take(5).map(|x| x.to_string()).collect();
        return if errs.is_empty() {
            None
        } else if m.pointer.is_empty() {
            // The reply is quoted once, not twice.
            Some(said(format!("got {} (it does not match {})", ex.summary(), wire::brief(&m.schema))))
        } else {
            Some(said(format!("expected {place} to match {}; got {} ({})", wire::brief(&m.schema), wire::brief(val), errs.join("; "))))
        };
    }
    if let Some(p) = &e.absent {
        return match ex.response.as_ref().and_then(|r| r.pointer(p)) {
            Some(v) => Some(said(format!("expected nothing at {p}; found {}", wire::brief(v)))),
            None => None,
        };
    }
    if let Some(h) = &e.header_absent {
        if ex.transport != "http" {
            return None;
        }
        return ex.header(h).map(|v| said(format!("expected no `{h}` response header; the server sent `{h}: {}`", super::clip(v, 120))));
    }
    if e.id_echoed == Some(true) {
        let got = ex.response.as_ref().and_then(|r| r.get("id")).cloned();
        return match (&got, &ex.request_id) {
            (Some(a), Some(b)) if a == b => None,
            _ => Some(said(format!(
                "expected the response id to equal the request id {}; got {}",
                ex.request_id.as_ref().map(wire::brief).unwrap_or_else(|| "(none)".into()),
                got.as_ref().map(wire::brief).unwrap_or_else(|| "no id".into())
            ))),
        };
    }
    if let Some(h) = &e.header {
        if ex.transport != "http" {
            return None;
        }
        let Some(val) = ex.header(&h.name) else {
            return Some(said(format!("expected a `{}` response header; there is none ({})", h.name, ex.summary())));
        };
        let validator = match jsonschema::options().offline().build(&h.schema) {
            Ok(v) => v,
            Err(err) => return Some(format!("suite problem: header schema does not compile: {err}")),
        };
        let v = Value::String(val.to_string());
        return if validator.is_valid(&v) {
            None
        } else {
            Some(said(format!("expected header `{}` to match {}; got {:?}", h.name, wire::brief(&h.schema), super::clip(val, 120))))
        };
    }
    Some("suite problem: expectation with no assertion".into())
}

fn at_result(v: &schema::Violation) -> String {
    let p = if v.path.is_empty() { "/result".to_string() } else { format!("/result{}", v.path) };
    format!("{} at {p}: {}", v.message_type, v.problem)
}

/// Whether a reply is a JSON-RPC error with this code.
pub fn is_error_code(r: Option<&Value>, code: i64) -> bool {
    r.and_then(|r| r.pointer("/error/code")).and_then(|c| c.as_i64()) == Some(code)
}
