//! The `skills/list` walk of a server that advertises the skills
//! extension, once per run (a shared fact the skills cases judge), and the
//! requests those cases send: each declares the extension.

use super::Cx;
use super::judge::skills::SKILLS_EXTENSION;
use crate::record::Exchange;
use crate::wire::{self, KEY_CLIENT_CAPS, MetaMode};
use serde_json::{Value, json};

/// A list that has not ended after this many pages is not walked further.
const MAX_PAGES: usize = 100;

/// The pages of `skills/list` and the entries they held.
#[derive(Debug, Default)]
pub struct SkillList {
    pub pages: Vec<Exchange>,
    pub entries: Vec<Value>,
    /// Why the walk stopped before the list's end (no answer, an error, a
    /// cursor that is not a string, too many pages).
    pub cut: Option<String>,
}

/// A 2026-07-28 request whose client capabilities declare the skills
/// extension.
pub fn request(cx: &Cx<'_>, method: &str, p: Value) -> Value {
    let mut params = wire::modern_params(Some(&p), MetaMode::Full, wire::MODERN).unwrap_or(json!({}));
    params["_meta"][KEY_CLIENT_CAPS] = json!({"extensions": {SKILLS_EXTENSION: {}}});
    wire::request(&cx.session.next_id(), method, Some(params))
}

/// Walk `skills/list` from its first page to its last.
pub async fn walk(cx: &Cx<'_>) -> Result<SkillList, String> {
    let mut out = SkillList::default();
    let mut cursor: Option<String> = None;
    for page in 1..=MAX_PAGES {
        let p = cursor.as_ref().map_or(json!({}), |c| json!({"cursor": c}));
        let ex = cx.on_main(&format!("skills/list page {page}"), &request(cx, "skills/list", p)).await.map_err(|e| e.to_string())?;
        let result = ex.result().cloned();
        let summary = ex.summary();
        let failed = ex.error.is_some() || result.is_none();
        out.pages.push(ex);
        let Some(r) = result.filter(|_| !failed) else {
            out.cut = Some(format!("skills/list page {page} gave no result: {summary}"));
            return Ok(out);
        };
        out.entries.extend(r.get("skills").and_then(Value::as_array).cloned().unwrap_or_default());
        match r.get("nextCursor") {
            None => return Ok(out),
            Some(Value::String(c)) => cursor = Some(c.clone()),
            Some(v) => {
                out.cut = Some(format!("skills/list page {page}'s nextCursor is not a string ({v}), so the walk stopped there"));
                return Ok(out);
            }
        }
    }
    out.cut = Some(format!("skills/list had not ended after {MAX_PAGES} pages"));
    Ok(out)
}
