//! The skills extension's `resources/directory/read` (SEP-2640, Directory
//! Listing), judged only on a server whose extension settings say
//! `directoryRead: true` (a client must not call it otherwise): every
//! directory of each listed skill, derived from its `resources` manifest,
//! lists its direct children; a file's URI is refused with -32602.

use super::skill_list::request;
use super::{Cx, Outcome};
use crate::record::Exchange;
use crate::session::Msg;
use crate::wire::brief;
use serde_json::{Value, json};
use std::collections::BTreeSet;

/// The most directories one case reads, and pages per directory.
const MAX_DIRS: usize = 16;
const MAX_PAGES: usize = 20;
/// A directory resource's MIME type.
pub const DIR_MIME: &str = "inode/directory";

/// Why the directory cases do not apply, if they do not: the extension's
/// settings must say `directoryRead: true`.
pub fn not_declared(cx: &Cx<'_>) -> Option<String> {
    let settings = cx.session.info(cx.rev).and_then(|i| {
        i.capabilities.as_ref()?.pointer(&format!("/extensions/{}", super::judge::skills::SKILLS_EXTENSION.replace('/', "~1"))).cloned()
    });
    match settings.as_ref().and_then(|s| s.get("directoryRead")) {
        Some(Value::Bool(true)) => None,
        other => Some(format!(
            "the skills extension's settings do not declare directoryRead: true ({}), so a client must not call resources/directory/read",
            other.map_or("absent".into(), brief)
        )),
    }
}

/// Each skill's root and every directory its manifest implies (a skill
/// with a "dynamic" manifest: its root only), with the direct children
/// the manifest implies for each (files and sub-directories).
fn directories(entries: &[&Value]) -> Vec<(String, BTreeSet<String>)> {
    let mut out: Vec<(String, BTreeSet<String>)> = Vec::new();
    let mut add = |dir: &str, child: Option<String>| match out.iter_mut().find(|(d, _)| d == dir) {
        Some((_, c)) => c.extend(child),
        None => out.push((dir.to_string(), child.into_iter().collect())),
    };
    for e in entries {
        let Some(root) = e.get("uri").and_then(Value::as_str).and_then(|u| u.strip_suffix("/SKILL.md")) else { continue };
        add(root, None);
        for f in e.get("resources").and_then(Value::as_array).into_iter().flatten().filter_map(|r| r.get("uri")?.as_str()) {
            let Some(rel) = f.strip_prefix(root).and_then(|r| r.strip_prefix('/')) else { continue };
            let mut dir = root.to_string();
            for seg in rel.split('/') {
                let child = format!("{dir}/{seg}");
                add(&dir, Some(child.clone()));
                dir = child;
            }
        }
    }
    out
}

/// Each directory of the listed skills read to its last page: a result of
/// resources whose URIs are its direct children (no trailing slash), the
/// sub-directories the manifest implies listed as `inode/directory`.
pub async fn directory_read(cx: &Cx<'_>, entries: &[&Value], out: &mut Outcome) {
    let dirs = directories(entries);
    let all: BTreeSet<&str> = dirs.iter().map(|(d, _)| d.as_str()).collect();
    let mut notes = Vec::new();
    for (dir, expected) in dirs.iter().take(MAX_DIRS) {
        let mut cursor: Option<String> = None;
        let mut seen: Vec<Value> = Vec::new();
        for page in 1..=MAX_PAGES {
            let mut p = json!({"uri": dir});
            if let Some(c) = &cursor {
                p["cursor"] = json!(c);
            }
            let label = format!("resources/directory/read {dir} (page {page})");
            let ex = match cx.on_main(&label, &request(cx, "resources/directory/read", p)).await {
                Ok(e) => e,
                Err(e) => return out.set_error(e.to_string()),
            };
            let r = super::result_of(&ex, &format!("resources/directory/read of {dir}, a directory of a listed skill"), out);
            out.exchanges.push(ex);
            let Some(r) = r else { break };
            let Some(items) = r.get("resources").and_then(Value::as_array) else {
                out.fail(format!("resources/directory/read {dir} must answer {{resources: [...]}}; got {}", brief(&r)));
                break;
            };
            seen.extend(items.iter().cloned());
            match r.get("nextCursor").and_then(Value::as_str) {
                Some(c) if page < MAX_PAGES => cursor = Some(c.to_string()),
                Some(_) => {
                    out.incomplete(&format!("resources/directory/read {dir} was not at its end after {MAX_PAGES} pages"));
                    break;
                }
                None => break,
            }
        }
        for item in &seen {
            let Some(uri) = item.get("uri").and_then(Value::as_str) else {
                out.fail(format!("resources/directory/read {dir}: every child is a Resource with a uri; got {}", brief(item)));
                continue;
            };
            let direct = uri
                .strip_prefix(dir.as_str())
                .and_then(|r| r.strip_prefix('/'))
                .is_some_and(|rest| !rest.is_empty() && !rest.contains('/'));
            if !direct {
                out.fail(format!(
                    "resources/directory/read {dir} lists {uri}, which is not a direct child of the directory (the listing is not recursive; a directory's URI has no trailing slash)"
                ));
            }
            if all.contains(uri) && item.get("mimeType").and_then(Value::as_str) != Some(DIR_MIME) {
                out.fail(format!(
                    "resources/directory/read {dir} lists the sub-directory {uri} with mimeType {}; a sub-directory is listed as a directory resource ({DIR_MIME})",
                    item.get("mimeType").map_or("none".into(), brief)
                ));
            }
        }
        let listed: BTreeSet<&str> = seen.iter().filter_map(|i| i.get("uri")?.as_str()).collect();
        let missing: Vec<&String> = expected.iter().filter(|c| !listed.contains(c.as_str())).collect();
        if !missing.is_empty() {
            notes.push(format!(
                "{dir}: the skill's manifest has {} that the directory read does not list (a snapshot difference, not judged)",
                missing.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(", ")
            ));
        }
    }
    if dirs.len() > MAX_DIRS {
        notes.push(format!("{} directories; the first {MAX_DIRS} were read", dirs.len()));
    }
    if !notes.is_empty() {
        out.exchanges.push(Exchange::note("directories against the manifests", notes.join("\n")));
    }
}

/// `resources/directory/read` of a skill's SKILL.md (a file, not a
/// directory): -32602.
pub async fn not_a_directory(cx: &Cx<'_>, entries: &[&Value], out: &mut Outcome) {
    let Some(uri) = entries.iter().find_map(|e| e.get("uri").and_then(Value::as_str)) else {
        return out.set_na("no listed skill has a SKILL.md URI to ask about");
    };
    let label = format!("resources/directory/read {uri} (a file, not a directory)");
    let ex = match cx.negative(&Msg::new(cx.rev, &label, &request(cx, "resources/directory/read", json!({"uri": uri})))).await {
        Ok(e) => e,
        Err(e) => return out.set_error(e.to_string()),
    };
    if let Some(e) = &ex.error {
        out.set_error(format!("{label}: {e}"));
    } else {
        match ex.response.as_ref().and_then(|r| r.get("error")) {
            Some(err) if err.get("code").and_then(Value::as_i64) == Some(-32602) => {}
            Some(err) => out.fail(format!(
                "resources/directory/read of a URI that is not a directory resource must answer -32602 (Invalid params); got {}",
                brief(err)
            )),
            None => out.fail(format!(
                "resources/directory/read of {uri}, a file, must answer -32602 (Invalid params): the method applies only to directory resources; it answered {}",
                ex.summary()
            )),
        }
    }
    out.exchanges.push(ex);
}
