//! MCP Apps (`io.modelcontextprotocol/ui`, SEP-1865) on the server side in
//! 2026-07-28: the UI resources tools link (`_meta.ui.resourceUri`, or the
//! deprecated flat `_meta["ui/resourceUri"]`) use the `ui://` scheme, exist,
//! and are served as `text/html;profile=mcp-app` with their HTML; so are the
//! `ui://` resources `resources/list` shows. Nothing here needs a host to
//! render. A server none of whose tools links a UI and that lists no `ui://`
//! resource gets `n/a`.

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
    const REVISIONS: &'static [Revision] = &Revision::STATELESS;

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
