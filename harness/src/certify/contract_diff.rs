//! `mcpcert contract-diff OLD NEW`: what changed between two releases'
//! contracts, judged for the clients that cached the old one.
//!
//! Breaking: a revision no longer served, a capability dropped, a tool,
//! prompt, resource or template removed, a required prompt argument added
//! or any argument removed, an `inputSchema` that accepts less, an
//! `outputSchema` that promises less (accepts more, or is gone), a
//! `readOnlyHint` dropped or a `destructiveHint` turned on, an
//! `x-mcp-header` renamed or added. Compatible: additions and widenings.
//! A schema keyword mcpcert cannot compare is "changed, not classified".

use super::schema_diff::{self, Direction};
use crate::record::contract::{Contract, Listing, RevisionContract};
use serde::Serialize;
use serde_json::Value;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Class {
    Breaking,
    Unclassified,
    Compatible,
}

impl Class {
    pub fn label(self) -> &'static str {
        match self {
            Class::Breaking => "BREAKING",
            Class::Unclassified => "changed, not classified",
            Class::Compatible => "compatible",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Change {
    pub revision: String,
    pub class: Class,
    /// What changed: `tool create_ticket`, `capabilities`, …
    pub subject: String,
    pub what: String,
}

/// Every change from `old` to `new`, breaking first.
pub fn diff(old: &Contract, new: &Contract) -> Vec<Change> {
    let mut out = Vec::new();
    for o in &old.revisions {
        match new.revisions.iter().find(|n| n.revision == o.revision) {
            None => out.push(change(&o.revision, Class::Breaking, "revision", format!("{} is no longer served", o.revision))),
            Some(n) => revision(o, n, &mut out),
        }
    }
    for n in new.revisions.iter().filter(|n| !old.revisions.iter().any(|o| o.revision == n.revision)) {
        out.push(change(&n.revision, Class::Compatible, "revision", format!("{} is now served", n.revision)));
    }
    out.sort_by_key(|a| a.class);
    out
}

fn change(rev: &str, class: Class, subject: impl Into<String>, what: impl Into<String>) -> Change {
    Change { revision: rev.to_string(), class, subject: subject.into(), what: what.into() }
}

fn revision(o: &RevisionContract, n: &RevisionContract, out: &mut Vec<Change>) {
    let rev = o.revision.as_str();
    capabilities(rev, &o.capabilities, &n.capabilities, "capabilities", out);
    for ((kind, lo), (_, ln)) in o.listings().into_iter().zip(n.listings()) {
        match (lo, ln) {
            (None, None) => {}
            (Some(_), None) => {} // the capability's removal is reported above
            (None, Some(_)) => {}
            (Some(a), Some(b)) => listing(rev, kind, a, b, out),
        }
    }
}

fn capabilities(rev: &str, o: &Value, n: &Value, at: &str, out: &mut Vec<Change>) {
    let (Some(om), Some(nm)) = (o.as_object(), n.as_object()) else {
        if o != n {
            let class = if n == &Value::Bool(false) || n.is_null() { Class::Breaking } else { Class::Unclassified };
            out.push(change(rev, class, at, format!("{o} → {n}")));
        }
        return;
    };
    for (k, v) in om {
        let here = format!("{at}.{k}");
        match nm.get(k) {
            None => out.push(change(rev, Class::Breaking, here, "no longer advertised")),
            Some(w) if v == w => {}
            Some(w) if v.is_object() && w.is_object() => capabilities(rev, v, w, &here, out),
            Some(w) if v == &Value::Bool(true) => out.push(change(rev, Class::Breaking, here, format!("true → {w}"))),
            Some(w) => out.push(change(rev, Class::Compatible, here, format!("{v} → {w}"))),
        }
    }
    for k in nm.keys().filter(|k| !om.contains_key(*k)) {
        out.push(change(rev, Class::Compatible, format!("{at}.{k}"), "now advertised"));
    }
}

/// The key an item is known by.
fn key(kind: &str, item: &Value) -> Option<String> {
    let field = match kind {
        "resource" => "uri",
        "resource template" => "uriTemplate",
        _ => "name",
    };
    item.get(field).and_then(|v| v.as_str()).map(str::to_string)
}

fn listing(rev: &str, kind: &str, a: &Listing, b: &Listing, out: &mut Vec<Change>) {
    if !a.complete || !b.complete {
        let which = if !a.complete { "old" } else { "new" };
        out.push(change(
            rev,
            Class::Unclassified,
            format!("{kind}s"),
            format!(
                "the {which} contract's {kind} list is partial ({}): removals cannot be judged",
                if !a.complete { a.note.clone() } else { b.note.clone() }.unwrap_or_default()
            ),
        ));
    }
    for item in a.items.iter() {
        let Some(k) = key(kind, item) else { continue };
        let subject = format!("{kind} {k}");
        match b.items.iter().find(|i| key(kind, i).as_deref() == Some(k.as_str())) {
            None if b.complete => out.push(change(rev, Class::Breaking, subject, "removed")),
            None => {}
            Some(n) => match kind {
                "tool" => tool(rev, &subject, item, n, out),
                "prompt" => prompt(rev, &subject, item, n, out),
                _ => other(rev, &subject, item, n, out),
            },
        }
    }
    for item in b.items.iter() {
        let Some(k) = key(kind, item) else { continue };
        if !a.items.iter().any(|i| key(kind, i).as_deref() == Some(k.as_str())) && a.complete {
            out.push(change(rev, Class::Compatible, format!("{kind} {k}"), "added"));
        }
    }
}

fn tool(rev: &str, subject: &str, o: &Value, n: &Value, out: &mut Vec<Change>) {
    let empty = Value::Object(Default::default());
    let (oi, ni) = (o.get("inputSchema").unwrap_or(&empty), n.get("inputSchema").unwrap_or(&empty));
    for c in schema_diff::compare(oi, ni) {
        let class = match c.direction {
            // A new optional argument: no client sent it before.
            Direction::Narrower if c.what.starts_with(schema_diff::NEW_PROPERTY) => Class::Compatible,
            Direction::Narrower => Class::Breaking,
            Direction::Wider => Class::Compatible,
            Direction::Unclassified => Class::Unclassified,
        };
        let sense = match c.direction {
            Direction::Narrower if c.what.starts_with(schema_diff::NEW_PROPERTY) => "gains an optional argument",
            Direction::Narrower => "accepts less",
            Direction::Wider => "accepts more",
            Direction::Unclassified => "changed",
        };
        out.push(change(rev, class, subject, format!("inputSchema {sense} at {}: {}", c.at, c.what)));
    }
    headers(rev, subject, oi, ni, out);
    match (o.get("outputSchema"), n.get("outputSchema")) {
        (None, None) => {}
        (None, Some(_)) => out.push(change(rev, Class::Compatible, subject, "outputSchema added")),
        (Some(_), None) => {
            out.push(change(rev, Class::Breaking, subject, "outputSchema removed: structured results are no longer promised"))
        }
        (Some(a), Some(b)) => {
            for c in schema_diff::compare(a, b) {
                let (class, sense) = match c.direction {
                    Direction::Narrower => (Class::Compatible, "promises more"),
                    Direction::Wider => (Class::Breaking, "promises less"),
                    Direction::Unclassified => (Class::Unclassified, "changed"),
                };
                out.push(change(rev, class, subject, format!("outputSchema {sense} at {}: {}", c.at, c.what)));
            }
        }
    }
    let hint = |v: &Value, h: &str| v.get("annotations").and_then(|a| a.get(h)).and_then(|b| b.as_bool());
    if hint(o, "readOnlyHint") == Some(true) && hint(n, "readOnlyHint") != Some(true) {
        out.push(change(
            rev,
            Class::Breaking,
            subject,
            "readOnlyHint dropped: clients that call it freely as read-only may now change state",
        ));
    }
    if hint(o, "readOnlyHint") != Some(true) && hint(n, "readOnlyHint") == Some(true) {
        out.push(change(rev, Class::Compatible, subject, "readOnlyHint added"));
    }
    // The spec's default for destructiveHint is true.
    let destructive = |v: &Value| hint(v, "readOnlyHint") != Some(true) && hint(v, "destructiveHint") != Some(false);
    if !destructive(o) && destructive(n) && hint(n, "readOnlyHint") != Some(true) {
        out.push(change(rev, Class::Breaking, subject, "now destructive (destructiveHint no longer false)"));
    }
    if o.get("name") == n.get("name") && (o.get("title") != n.get("title") || o.get("description") != n.get("description")) {
        out.push(change(rev, Class::Compatible, subject, "title or description changed"));
    }
}

/// `x-mcp-header` names of an input schema's top-level properties.
fn header_names(schema: &Value) -> Vec<(String, String)> {
    let mut v: Vec<(String, String)> = schema
        .get("properties")
        .and_then(|p| p.as_object())
        .into_iter()
        .flatten()
        .filter_map(|(prop, s)| s.get("x-mcp-header").and_then(|h| h.as_str()).map(|h| (prop.clone(), h.to_string())))
        .collect();
    v.sort();
    v
}

fn headers(rev: &str, subject: &str, o: &Value, n: &Value, out: &mut Vec<Change>) {
    let (a, b) = (header_names(o), header_names(n));
    for (prop, h) in &a {
        match b.iter().find(|(p, _)| p == prop) {
            Some((_, h2)) if !h2.eq_ignore_ascii_case(h) => out.push(change(
                rev,
                Class::Breaking,
                subject,
                format!("x-mcp-header of `{prop}` renamed {h} → {h2}: clients send Mcp-Param-{h}, the server expects Mcp-Param-{h2}"),
            )),
            Some((_, h2)) if h2 != h => out.push(change(
                rev,
                Class::Compatible,
                subject,
                format!("x-mcp-header of `{prop}` {h} → {h2}: letter case only (header names ignore case)"),
            )),
            Some(_) => {}
            None => out.push(change(rev, Class::Compatible, subject, format!("x-mcp-header {h} (of `{prop}`) removed"))),
        }
    }
    for (prop, h) in b.iter().filter(|(p, _)| !a.iter().any(|(q, _)| q == p)) {
        out.push(change(
            rev,
            Class::Breaking,
            subject,
            format!("x-mcp-header {h} added to `{prop}`: clients with the old contract do not send Mcp-Param-{h}"),
        ));
    }
}

fn prompt(rev: &str, subject: &str, o: &Value, n: &Value, out: &mut Vec<Change>) {
    let args = |v: &Value| -> Vec<(String, bool)> {
        v.get("arguments")
            .and_then(|a| a.as_array())
            .into_iter()
            .flatten()
            .filter_map(|a| Some((a.get("name")?.as_str()?.to_string(), a.get("required") == Some(&Value::Bool(true)))))
            .collect()
    };
    let (a, b) = (args(o), args(n));
    for (name, req) in &a {
        match b.iter().find(|(m, _)| m == name) {
            None => out.push(change(rev, Class::Breaking, subject, format!("argument `{name}` removed"))),
            Some((_, r2)) if !req && *r2 => out.push(change(rev, Class::Breaking, subject, format!("argument `{name}` is now required"))),
            Some((_, r2)) if *req && !r2 => {
                out.push(change(rev, Class::Compatible, subject, format!("argument `{name}` is no longer required")))
            }
            Some(_) => {}
        }
    }
    for (name, req) in b.iter().filter(|(m, _)| !a.iter().any(|(x, _)| x == m)) {
        let class = if *req { Class::Breaking } else { Class::Compatible };
        out.push(change(rev, class, subject, format!("{} argument `{name}` added", if *req { "required" } else { "optional" })));
    }
    if o.get("title") != n.get("title") || o.get("description") != n.get("description") {
        out.push(change(rev, Class::Compatible, subject, "title or description changed"));
    }
}

fn other(rev: &str, subject: &str, o: &Value, n: &Value, out: &mut Vec<Change>) {
    if o.get("mimeType") != n.get("mimeType") {
        out.push(change(
            rev,
            Class::Unclassified,
            subject,
            format!("mimeType {} → {}", o.get("mimeType").unwrap_or(&Value::Null), n.get("mimeType").unwrap_or(&Value::Null)),
        ));
    }
    let rest = |v: &Value| {
        let mut v = v.clone();
        if let Some(m) = v.as_object_mut() {
            m.remove("mimeType");
        }
        v
    };
    if rest(o) != rest(n) {
        out.push(change(rev, Class::Compatible, subject, "description, name or annotations changed"));
    }
}

/// The console text of a diff.
pub fn render(changes: &[Change]) -> String {
    let mut s = String::new();
    let mut rev = "";
    for c in changes.iter() {
        if c.revision != rev {
            rev = &c.revision;
            s.push_str(&format!("{rev}:\n"));
        }
        s.push_str(&format!("  {:<25} {}: {}\n", c.class.label(), c.subject, c.what));
    }
    let count = |k: Class| changes.iter().filter(|c| c.class == k).count();
    s.push_str(&format!(
        "{} breaking, {} compatible, {} changed but not classified\n",
        count(Class::Breaking),
        count(Class::Compatible),
        count(Class::Unclassified)
    ));
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::contract::CONTRACT_FORMAT;
    use serde_json::json;

    fn contract(tools: Value, prompts: Value, caps: Value) -> Contract {
        let listing =
            |v: &Value| Listing { complete: true, note: None, items: std::sync::Arc::new(v.as_array().cloned().unwrap_or_default()) };
        Contract {
            format: CONTRACT_FORMAT.into(),
            format_version: 1,
            mcpcert_version: "t".into(),
            started_at_unix_ms: 0,
            target: json!({}),
            revisions: vec![RevisionContract {
                revision: "2026-07-28".into(),
                server_info: None,
                capabilities: caps,
                tools: Some(listing(&tools)),
                prompts: Some(listing(&prompts)),
                resources: None,
                resource_templates: None,
            }],
        }
    }

    fn classes(old: &Contract, new: &Contract) -> Vec<(Class, String)> {
        diff(old, new).into_iter().map(|c| (c.class, format!("{}: {}", c.subject, c.what))).collect()
    }

    #[test]
    fn removals_narrowings_and_hints_are_breaking_additions_are_not() {
        let caps = json!({"tools": {"listChanged": true}, "prompts": {}});
        let search = json!({"name": "search", "inputSchema": {"type": "object", "properties": {"q": {"type": "string"}, "limit": {"type": "integer", "maximum": 100}}, "required": ["q"]}, "annotations": {"readOnlyHint": true}});
        let old = contract(
            json!([search, {"name": "drop", "inputSchema": {"type": "object"}}]),
            json!([{"name": "p", "arguments": [{"name": "a"}]}]),
            caps.clone(),
        );
        let mut s2 = search.clone();
        s2["inputSchema"]["properties"]["limit"]["maximum"] = json!(10);
        s2["annotations"] = json!({});
        let new = contract(
            json!([s2, {"name": "added", "inputSchema": {"type": "object"}}]),
            json!([{"name": "p", "arguments": [{"name": "a", "required": true}]}]),
            json!({"tools": {}, "prompts": {}}),
        );
        let c = classes(&old, &new);
        let breaking: Vec<&String> = c.iter().filter(|(k, _)| *k == Class::Breaking).map(|(_, s)| s).collect();
        assert!(breaking.iter().any(|s| s.starts_with("tool drop: removed")), "{c:?}");
        assert!(breaking.iter().any(|s| s.contains("inputSchema accepts less at /properties/limit/maximum")), "{c:?}");
        assert!(breaking.iter().any(|s| s.contains("readOnlyHint dropped")), "{c:?}");
        assert!(breaking.iter().any(|s| s.contains("argument `a` is now required")), "{c:?}");
        assert!(breaking.iter().any(|s| s.starts_with("capabilities.tools.listChanged")), "{c:?}");
        assert!(c.iter().any(|(k, s)| *k == Class::Compatible && s == "tool added: added"), "{c:?}");
        assert_eq!(c[0].0, Class::Breaking, "breaking changes come first");
    }

    #[test]
    fn output_schemas_and_headers() {
        let t = |out: Value, header: &str| json!({"name": "t", "inputSchema": {"type": "object", "properties": {"region": {"type": "string", "x-mcp-header": header}}}, "outputSchema": out});
        let old = contract(json!([t(json!({"type": "object", "required": ["a", "b"]}), "Region")]), json!([]), json!({"tools": {}}));
        let wider = contract(json!([t(json!({"type": "object", "required": ["a"]}), "Region")]), json!([]), json!({"tools": {}}));
        let c = classes(&old, &wider);
        assert_eq!(c, [(Class::Breaking, "tool t: outputSchema promises less at /required: `b` is no longer required".to_string())]);
        let narrower =
            contract(json!([t(json!({"type": "object", "required": ["a", "b", "c"]}), "Region")]), json!([]), json!({"tools": {}}));
        assert_eq!(classes(&old, &narrower)[0].0, Class::Compatible);
        let renamed = contract(json!([t(json!({"type": "object", "required": ["a", "b"]}), "Zone")]), json!([]), json!({"tools": {}}));
        let c = classes(&old, &renamed);
        assert!(c.iter().any(|(k, s)| *k == Class::Breaking && s.contains("renamed Region → Zone")), "{c:?}");
        assert!(diff(&old, &old).is_empty());
    }

    #[test]
    fn an_optional_argument_and_a_header_case_change_are_compatible() {
        let t = |props: Value| json!({"name": "t", "inputSchema": {"type": "object", "properties": props}});
        let old = contract(json!([t(json!({"q": {"type": "string", "x-mcp-header": "Region"}}))]), json!([]), json!({"tools": {}}));
        let new = contract(
            json!([t(json!({"q": {"type": "string", "x-mcp-header": "REGION"}, "limit": {"type": "integer"}}))]),
            json!([]),
            json!({"tools": {}}),
        );
        let c = classes(&old, &new);
        assert!(c.iter().all(|(k, _)| *k == Class::Compatible), "{c:?}");
        assert_eq!(c.len(), 2, "one change each, no unclassified echo of the header: {c:?}");
    }

    #[test]
    fn a_partial_list_cannot_show_removals() {
        let old = contract(json!([{"name": "a"}, {"name": "b"}]), json!([]), json!({"tools": {}}));
        let mut new = contract(json!([{"name": "a"}]), json!([]), json!({"tools": {}}));
        if let Some(t) = new.revisions[0].tools.as_mut() {
            t.complete = false;
            t.note = Some("the tools/list walk got no answer".into());
        }
        let c = classes(&old, &new);
        assert!(c.iter().all(|(k, _)| *k != Class::Breaking), "{c:?}");
        assert!(c.iter().any(|(k, s)| *k == Class::Unclassified && s.contains("partial")), "{c:?}");
    }
}
