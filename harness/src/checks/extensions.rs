//! Extension negotiation in 2026-07-28 (SEP-2133), whatever the
//! extension: the identifiers a server advertises in
//! `capabilities.extensions`, and a client extension the server does not
//! know, which it serves as if it were not there.

use super::{Check, Cx, Outcome};
use crate::session::Msg;
use crate::wire::{self, KEY_CLIENT_CAPS, MetaMode, Revision, brief};
use serde::Deserialize;
use serde_json::{Value, json};

/// The client extension no server knows (a reverse-DNS prefix of a name
/// that cannot resolve).
pub const UNKNOWN_EXTENSION: &str = "invalid.mcpcert/unknown-extension";

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ExtensionCheck {
    Identifiers,
    UnknownIgnored,
}

/// One rule of extension negotiation.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExtensionProbe {
    check: ExtensionCheck,
}

impl Check for ExtensionProbe {
    const NAME: &'static str = "extension_probe";
    const ABOUT: &'static str = "one rule (`check`) of extension negotiation: the identifiers in capabilities.extensions, or a client extension the server does not know";
    const REVISIONS: &'static [Revision] = &Revision::STATELESS;

    async fn run(&self, cx: &Cx<'_>) -> Outcome {
        match self.check {
            ExtensionCheck::Identifiers => identifiers(cx),
            ExtensionCheck::UnknownIgnored => unknown_ignored(cx).await,
        }
    }
}

/// Why an extension identifier breaks the `_meta` key grammar with its
/// prefix mandatory (`label(.label)*/name`: labels start with a letter and
/// end with a letter or digit, hyphens inside; the name starts and ends
/// alphanumeric, with `-`, `_` or `.` inside), or `None`.
pub fn identifier_problem(id: &str) -> Option<&'static str> {
    let Some((prefix, name)) = id.split_once('/') else {
        return Some("it has no prefix (label(.label)*/name)");
    };
    let label_ok = |l: &str| {
        let b = l.as_bytes();
        !b.is_empty()
            && b[0].is_ascii_alphabetic()
            && b[b.len() - 1].is_ascii_alphanumeric()
            && b.iter().all(|c| c.is_ascii_alphanumeric() || *c == b'-')
    };
    if !prefix.split('.').all(label_ok) {
        return Some("its prefix is not dot-separated labels that start with a letter and end with a letter or digit");
    }
    let n = name.as_bytes();
    if n.is_empty() {
        return Some("its name is empty");
    }
    if !(n[0].is_ascii_alphanumeric()
        && n[n.len() - 1].is_ascii_alphanumeric()
        && n.iter().all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.')))
    {
        return Some("its name does not start and end with a letter or digit, or holds a character other than letters, digits, -, _ and .");
    }
    None
}

fn identifiers(cx: &Cx<'_>) -> Outcome {
    let caps = cx.caps();
    let Some(ext) = caps.get("extensions") else {
        return Outcome::na("the server advertises no capabilities.extensions in server/discover");
    };
    let Some(ext) = ext.as_object() else {
        let mut out = Outcome::default();
        out.fail(format!("capabilities.extensions must be an object keyed by extension identifier; it is {}", brief(ext)));
        return out;
    };
    if ext.is_empty() {
        return Outcome::na("capabilities.extensions is empty: no identifier to judge");
    }
    let mut out = Outcome::default();
    for id in ext.keys() {
        if let Some(why) = identifier_problem(id) {
            out.fail(format!("capabilities.extensions key {id:?} is not an extension identifier: {why}"));
        }
    }
    if out.failures.is_empty() {
        let ids: Vec<&str> = ext.keys().map(String::as_str).collect();
        out.exchanges.push(crate::record::Exchange::note("identifiers", format!("advertised: {}", ids.join(", "))));
    }
    out
}

/// The same request twice on the main connection, the first declaring an
/// extension no server knows beside nothing else, the second declaring
/// nothing: both are served, as the same kind of result.
async fn unknown_ignored(cx: &Cx<'_>) -> Outcome {
    let method = if cx.advertises("tools") { "tools/list" } else { "server/discover" };
    let body = |caps: Value| {
        let mut params = wire::modern_params(None, MetaMode::Full, wire::MODERN).unwrap_or(json!({}));
        params["_meta"][KEY_CLIENT_CAPS] = caps;
        wire::request(&cx.session.next_id(), method, Some(params))
    };
    let mut out = Outcome::default();
    let mut answers = Vec::new();
    for (label, caps) in [
        (format!("{method} declaring {UNKNOWN_EXTENSION}"), json!({"extensions": {UNKNOWN_EXTENSION: {}}})),
        (format!("{method} declaring nothing"), json!({})),
    ] {
        let ex = match cx.session.on_main(&Msg::new(cx.rev, &label, &body(caps)), cx.case).await {
            Ok(x) => x,
            Err(e) => return Outcome::error(e.to_string()),
        };
        if let Some(e) = &ex.error {
            let why = format!("{label}: {e}");
            out.exchanges.push(ex);
            out.set_error(why);
            return out;
        }
        answers.push(ex.response.clone().unwrap_or(Value::Null));
        out.exchanges.push(ex);
    }
    let (with, without) = (&answers[0], &answers[1]);
    if let Some(err) = with.get("error") {
        if without.get("error").is_some() {
            out.set_error(format!("{method} is refused with or without the unknown extension, so there is no answer to compare"));
            return out;
        }
        out.fail(format!(
            "{method} declaring only the unknown extension {UNKNOWN_EXTENSION} was refused ({}), while the same request declaring nothing was served: an extension the server does not know must be ignored",
            brief(err)
        ));
        return out;
    }
    // Both served: what they list is not compared, since a server may
    // order or page a list differently from one request to the next, and
    // other cases may change the tool set meanwhile.
    let kind = |v: &Value| v.pointer("/result/resultType").cloned().unwrap_or(Value::Null);
    if kind(with) != kind(without) {
        out.fail(format!(
            "{method} declaring the unknown extension {UNKNOWN_EXTENSION} was answered with resultType {}, the same request declaring nothing with {}: an extension the server does not know must change nothing",
            brief(&kind(with)),
            brief(&kind(without))
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::identifier_problem;

    #[test]
    fn identifiers_follow_the_meta_key_grammar_with_a_prefix() {
        for ok in ["io.modelcontextprotocol/tasks", "com.example/x", "a/b", "com.example-co.v2/ui.app_1"] {
            assert_eq!(identifier_problem(ok), None, "{ok}");
        }
        for bad in ["tasks", "/tasks", "com..example/x", "1com/x", "com-/x", "com.example/", "com.example/-x", "com.example/x y"] {
            assert!(identifier_problem(bad).is_some(), "{bad}");
        }
    }
}
