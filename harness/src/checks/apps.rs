//! MCP Apps (`io.modelcontextprotocol/ui`, SEP-1865) on the server side, in
//! 2026-07-28 and 2025-11-25: the UI resources tools link (`_meta.ui.resourceUri`, or the
//! deprecated flat `_meta["ui/resourceUri"]`) use the `ui://` scheme, exist,
//! and are served as `text/html;profile=mcp-app` with their HTML; so are the
//! `ui://` resources `resources/list` shows. Nothing here needs a host to
//! render. The `_meta.ui` metadata of tools and UI resources has the
//! interface's shape, and a UI tool's result still carries content for a
//! host without a UI. A server none of whose tools links a UI and that
//! lists no `ui://` resource gets `n/a`.

use super::walk::ListMethod;
use super::{Check, Cx, Outcome};
use crate::record::Exchange;
use crate::wire::{Revision, brief};
use serde::Deserialize;
use serde_json::{Value, json};

/// The MIME type of an MCP App's HTML.
const APP_MIME: &str = "text/html;profile=mcp-app";
/// The most UI resources one case reads.
const MAX_READS: usize = 32;

/// Which rule an `app_probe` case judges.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum AppCheck {
    ResourceUriScheme,
    LinkedResourceExists,
    ResourceMimeType,
    MetaShape,
    ToolContent,
}

/// One server-side rule of MCP Apps.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AppProbe {
    check: AppCheck,
}

/// A tool's linked UI resource: `_meta.ui.resourceUri`, else the
/// deprecated `_meta["ui/resourceUri"]`.
fn linked_uri(tool: &Value) -> Option<&str> {
    tool.pointer("/_meta/ui/resourceUri").or_else(|| tool.pointer("/_meta/ui~1resourceUri")).and_then(Value::as_str)
}

impl Check for AppProbe {
    const NAME: &'static str = "app_probe";
    const ABOUT: &'static str = "one server-side rule (`check`) of MCP Apps: the ui:// resources tools link, and those listed";
    // Every revision whose tools carry _meta: the Apps servers in the wild
    // speak 2025-11-25 (with the deprecated flat key).
    const REVISIONS: &'static [Revision] = &[Revision::R2026_07_28, Revision::R2025_11_25];

    async fn run(&self, cx: &Cx<'_>) -> Outcome {
        let walk = match cx.facts.tools_walk(cx).await {
            Ok(w) => w,
            Err(e) => return Outcome::error(format!("tools/list: {e}")),
        };
        // A walk cut short: what it showed is judged, no failure is no pass.
        let cut = walk.partial();
        let links: Vec<(String, String)> = walk
            .items
            .iter()
            .filter_map(|t| Some((t.get("name").and_then(Value::as_str).unwrap_or("?").to_string(), linked_uri(t)?.to_string())))
            .collect();
        if let (true, Some(why)) = (links.is_empty(), &cut) {
            return Outcome::partial(why);
        }
        let mut out = Outcome::default();
        match self.check {
            AppCheck::ResourceUriScheme => {
                if links.is_empty() {
                    return Outcome::na("no tool links a UI resource (_meta.ui.resourceUri)");
                }
                for (tool, uri) in &links {
                    if !uri.starts_with("ui://") {
                        out.fail(format!("tool {tool} links the UI resource {uri:?}: a UI resource's URI starts with ui://"));
                    }
                }
                out.exchanges.push(Exchange::note(
                    "UI resources linked",
                    links.iter().map(|(t, u)| format!("{t} → {u}")).collect::<Vec<_>>().join("\n"),
                ));
            }
            AppCheck::LinkedResourceExists => {
                let ui: Vec<&(String, String)> = links.iter().filter(|(_, u)| u.starts_with("ui://")).collect();
                if ui.is_empty() {
                    return Outcome::na("no tool links a ui:// resource (a link of another scheme is apps/resource-uri-scheme's finding)");
                }
                for (tool, uri) in ui.into_iter().take(MAX_READS) {
                    let Some(ex) = read(cx, uri, &mut out).await else { return out };
                    if let Some(err) = ex.response.as_ref().and_then(|r| r.get("error")) {
                        out.fail(format!(
                            "tool {tool} links {uri}, which must exist on the server; resources/read answered {}",
                            brief(err)
                        ));
                    } else if ex.result().and_then(|r| r.get("contents")).and_then(Value::as_array).is_none_or(|c| c.is_empty()) {
                        out.fail(format!("tool {tool} links {uri}, which must exist on the server; resources/read gave no contents"));
                    }
                    out.exchanges.push(ex);
                }
            }
            AppCheck::ResourceMimeType => mime_types(cx, &links, &mut out).await,
            AppCheck::MetaShape => meta_shape(cx, &walk.items, &links, &mut out).await,
            AppCheck::ToolContent => tool_content(cx, &links, &mut out).await,
        }
        if let Some(why) = &cut
            && !out.is_na()
        {
            out.incomplete(why);
        }
        out
    }
}

/// `resources/read` of a UI resource (no extension declared: the server
/// serves its resources to any client).
async fn read(cx: &Cx<'_>, uri: &str, out: &mut Outcome) -> Option<Exchange> {
    let body = cx.request("resources/read", Some(json!({"uri": uri})));
    match cx.on_main(&format!("resources/read {uri}"), &body).await {
        Ok(ex) if ex.error.is_some() => {
            out.set_error(format!("resources/read {uri}: {}", ex.error.as_ref().map(|e| e.to_string()).unwrap_or_default()));
            out.exchanges.push(ex);
            None
        }
        Ok(ex) => Some(ex),
        Err(e) => {
            out.set_error(e.to_string());
            None
        }
    }
}

/// Every linked `ui://` resource that can be read, and every `ui://`
/// resource `resources/list` shows: each content item is the app's HTML,
/// `mimeType` exactly `text/html;profile=mcp-app`, with `text` or `blob`.
async fn mime_types(cx: &Cx<'_>, links: &[(String, String)], out: &mut Outcome) {
    let mut uris: Vec<String> = links.iter().map(|(_, u)| u.clone()).filter(|u| u.starts_with("ui://")).collect();
    if cx.advertises("resources")
        && let Ok(w) = cx.facts.list_walk(cx, ListMethod::Resources).await
    {
        for r in w.items.iter() {
            if let Some(u) = r.get("uri").and_then(Value::as_str).filter(|u| u.starts_with("ui://")) {
                if r.get("mimeType").and_then(Value::as_str).is_some_and(|m| m != APP_MIME) {
                    out.fail(format!(
                        "resources/list shows {u} with mimeType {:?}: a UI resource is text/html;profile=mcp-app",
                        r["mimeType"].as_str().unwrap_or("")
                    ));
                }
                uris.push(u.to_string());
            }
        }
    }
    uris.sort();
    uris.dedup();
    if uris.is_empty() {
        return out.set_na("no tool links a ui:// resource and resources/list shows none");
    }
    let mut judged = 0;
    for uri in uris.into_iter().take(MAX_READS) {
        let Some(ex) = read(cx, &uri, out).await else { return };
        let items = ex.result().and_then(|r| r.get("contents")).and_then(Value::as_array).cloned().unwrap_or_default();
        if !items.is_empty() {
            judged += 1;
        }
        for item in &items {
            let mime = item.get("mimeType").and_then(Value::as_str);
            if mime != Some(APP_MIME) {
                out.fail(format!(
                    "resources/read {uri}: a UI resource's mimeType must be {APP_MIME}; got {}",
                    item.get("mimeType").map_or("none".into(), brief)
                ));
            }
            let body = item.get("text").or_else(|| item.get("blob")).and_then(Value::as_str);
            if body.is_none_or(str::is_empty) {
                out.fail(format!("resources/read {uri}: a UI resource's content is given as text or a base64 blob; it has neither"));
            }
        }
        out.exchanges.push(ex);
    }
    if judged == 0 && out.failures.is_empty() {
        out.incomplete("no UI resource could be read (apps/linked-resource-exists judges that)");
    }
}

/// The members of a UI resource's `_meta.ui.csp`: each a list of origins.
const CSP_KEYS: [&str; 4] = ["connectDomains", "resourceDomains", "frameDomains", "baseUriDomains"];
/// The permissions a UI resource may ask for, each an object.
const PERMISSIONS: [&str; 4] = ["camera", "microphone", "geolocation", "clipboardWrite"];

/// Whether an origin is `scheme://host[:port]` (a `*.` subdomain wildcard
/// allowed where `wildcard`).
fn origin_ok(o: &str, wildcard: bool) -> bool {
    let Some((scheme, rest)) = o.split_once("://") else { return false };
    let host = rest.strip_prefix("*.").filter(|_| wildcard).unwrap_or(rest);
    let host = host.rsplit_once(':').filter(|(_, p)| p.parse::<u16>().is_ok()).map_or(host, |(h, _)| h);
    !scheme.is_empty()
        && scheme.chars().all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
        && !host.is_empty()
        && host.chars().all(|c| c.is_ascii_alphanumeric() || "-.[]:".contains(c))
}

/// What is wrong with a UI resource's `_meta.ui` (`at` names where it
/// sits); origins that do not parse are noted, not failed.
fn resource_meta_problems(ui: &Value, at: &str, notes: &mut Vec<String>) -> Vec<String> {
    let mut out = Vec::new();
    let Some(ui) = ui.as_object() else {
        return vec![format!("{at}: _meta.ui must be an object; got {}", brief(ui))];
    };
    if let Some(csp) = ui.get("csp") {
        match csp.as_object() {
            None => out.push(format!("{at}: _meta.ui.csp must be an object of origin lists; got {}", brief(csp))),
            Some(csp) => {
                for k in CSP_KEYS {
                    let Some(v) = csp.get(k) else { continue };
                    match v.as_array() {
                        Some(list) if list.iter().all(Value::is_string) => {
                            for o in list.iter().filter_map(Value::as_str) {
                                if !origin_ok(o, k == "resourceDomains") {
                                    notes.push(format!("{at}: csp.{k} lists {o:?}, which is not an origin (scheme://host[:port])"));
                                }
                            }
                        }
                        _ => out.push(format!("{at}: _meta.ui.csp.{k} must be a list of origins (strings); got {}", brief(v))),
                    }
                }
                for k in csp.keys().filter(|k| !CSP_KEYS.contains(&k.as_str())) {
                    notes.push(format!("{at}: csp.{k} is not a member the extension defines"));
                }
            }
        }
    }
    if let Some(p) = ui.get("permissions") {
        match p.as_object() {
            None => out.push(format!("{at}: _meta.ui.permissions must be an object; got {}", brief(p))),
            Some(p) => {
                for (k, v) in p {
                    if !PERMISSIONS.contains(&k.as_str()) {
                        notes.push(format!("{at}: permissions.{k} is not a permission the extension defines"));
                    } else if !v.is_object() {
                        out.push(format!("{at}: _meta.ui.permissions.{k} must be an object ({{}} to ask for it); got {}", brief(v)));
                    }
                }
            }
        }
    }
    if let Some(d) = ui.get("domain").filter(|d| !d.is_string()) {
        out.push(format!("{at}: _meta.ui.domain must be a string; got {}", brief(d)));
    }
    if let Some(b) = ui.get("prefersBorder").filter(|b| !b.is_boolean()) {
        out.push(format!("{at}: _meta.ui.prefersBorder must be a boolean; got {}", brief(b)));
    }
    out
}

/// The `_meta.ui` of each tool (`resourceUri` a string, `visibility` a
/// list of "model" and "app") and of each UI resource, in the listing and
/// in what `resources/read` gives.
async fn meta_shape(cx: &Cx<'_>, tools: &[Value], links: &[(String, String)], out: &mut Outcome) {
    let mut notes = Vec::new();
    let mut judged = 0;
    for t in tools {
        let Some(ui) = t.pointer("/_meta/ui") else { continue };
        let name = t.get("name").and_then(Value::as_str).unwrap_or("?");
        judged += 1;
        if !ui.is_object() {
            out.fail(format!("tool {name}: _meta.ui must be an object; got {}", brief(ui)));
            continue;
        }
        if let Some(u) = ui.get("resourceUri").filter(|u| !u.is_string()) {
            out.fail(format!("tool {name}: _meta.ui.resourceUri must be a string; got {}", brief(u)));
        }
        if let Some(v) = ui.get("visibility") {
            let ok = v.as_array().is_some_and(|a| a.iter().all(|x| matches!(x.as_str(), Some("model" | "app"))));
            if !ok {
                out.fail(format!("tool {name}: _meta.ui.visibility must be a list of \"model\" and \"app\"; got {}", brief(v)));
            }
        }
    }
    let mut uris: Vec<String> = links.iter().map(|(_, u)| u.clone()).filter(|u| u.starts_with("ui://")).collect();
    if cx.advertises("resources")
        && let Ok(w) = cx.facts.list_walk(cx, ListMethod::Resources).await
    {
        for r in w.items.iter() {
            let Some(u) = r.get("uri").and_then(Value::as_str).filter(|u| u.starts_with("ui://")) else { continue };
            if let Some(ui) = r.pointer("/_meta/ui") {
                judged += 1;
                for p in resource_meta_problems(ui, &format!("resources/list entry {u}"), &mut notes) {
                    out.fail(p);
                }
            }
            uris.push(u.to_string());
        }
    }
    uris.sort();
    uris.dedup();
    for uri in uris.into_iter().take(MAX_READS) {
        let Some(ex) = read(cx, &uri, out).await else { return };
        for item in ex.result().and_then(|r| r.get("contents")).and_then(Value::as_array).into_iter().flatten() {
            if let Some(ui) = item.pointer("/_meta/ui") {
                judged += 1;
                for p in resource_meta_problems(ui, &format!("resources/read {uri}"), &mut notes) {
                    out.fail(p);
                }
            }
        }
        out.exchanges.push(ex);
    }
    if !notes.is_empty() {
        out.exchanges.push(Exchange::note("not judged (the extension leaves the format to hosts)", notes.join("\n")));
    }
    if judged == 0 && out.failures.is_empty() && !out.is_error() {
        out.set_na("no tool links a UI resource with metadata of its own, and no tool or ui:// resource carries _meta.ui metadata");
    }
}

/// Each UI tool mcpcert called (the run's valid calls; no UI declared)
/// answered a result with content a host without a UI can show.
async fn tool_content(cx: &Cx<'_>, links: &[(String, String)], out: &mut Outcome) {
    if links.is_empty() {
        return out.set_na("no tool links a UI resource (_meta.ui.resourceUri)");
    }
    let calls = match cx.facts.tool_calls(cx).await {
        Ok(c) => c,
        Err(e) => return out.set_error(format!("the tool calls: {e}")),
    };
    let mut judged = 0;
    for (tool, _) in links {
        let Some(r) = calls.records.iter().find(|r| &r.tool == tool && r.kind == super::calls::CallKind::Valid) else { continue };
        let Some(res) = r.ex.result() else { continue };
        if res.get("resultType").and_then(Value::as_str).is_some_and(|t| t != "complete") {
            continue;
        }
        judged += 1;
        let blocks = res.get("content").and_then(Value::as_array).cloned().unwrap_or_default();
        let shown = blocks.iter().any(|b| {
            b.get("type").and_then(Value::as_str) != Some("text")
                || b.get("text").and_then(Value::as_str).is_some_and(|t| !t.trim().is_empty())
        });
        if !shown {
            out.fail(format!(
                "{}: a tool that links a UI must still return meaningful content (for a host without a UI, and for the model); its result's content is {}",
                r.ex.label,
                res.get("content").map_or("missing".into(), brief)
            ));
        }
        out.exchanges.push(r.ex.clone());
    }
    if judged == 0 {
        let mut why = "no tool that links a UI was called (the call policy allows none, or none answered a result)".to_string();
        if let Some(n) = calls.note() {
            why.push_str(&format!("; {}", n.note.unwrap_or_default()));
        }
        out.set_na(why);
    }
}
