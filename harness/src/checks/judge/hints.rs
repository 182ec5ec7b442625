//! Cache hints of a 2026-07-28 list walk: `ttlMs` and `cacheScope` on
//! every page, one scope for the whole walk.

use crate::wire::brief;
use serde_json::Value;
use std::collections::BTreeMap;

/// `ttlMs` (integer >= 0) and `cacheScope` on every page; one scope for all.
pub fn cache_hint_problems(method: &str, pages: &[&Value]) -> Vec<String> {
    let mut out = Vec::new();
    let mut scopes: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for (i, result) in pages.iter().enumerate() {
        let page = i + 1;
        match result.get("ttlMs") {
            None => out.push(format!("{} page {page}: ttlMs is missing (required: an integer >= 0)", method)),
            Some(v) => {
                // 60000.0 is an integer in JSON Schema's sense too.
                let ok = v.as_u64().is_some() || (v.is_f64() && v.as_f64().is_some_and(|f| f >= 0.0 && f.fract() == 0.0));
                if !ok {
                    out.push(format!("{} page {page}: ttlMs must be an integer >= 0; got {}", method, brief(v)));
                }
            }
        }
        match result.get("cacheScope") {
            Some(Value::String(s)) if s == "public" || s == "private" => scopes.entry(s.clone()).or_default().push(page),
            Some(v) => out.push(format!("{} page {page}: cacheScope must be \"public\" or \"private\"; got {}", method, brief(v))),
            None => out.push(format!("{} page {page}: cacheScope is missing (required)", method)),
        }
    }
    if scopes.len() > 1 {
        let parts: Vec<String> = scopes.iter().map(|(s, pages)| format!("{s:?} on page(s) {pages:?}")).collect();
        out.push(format!("all pages of one {} walk must share one cacheScope; got {}", method, parts.join(" and ")));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn problems(pages: Vec<Value>) -> Vec<String> {
        cache_hint_problems("tools/list", &pages.iter().collect::<Vec<_>>())
    }

    #[test]
    fn cache_hints() {
        assert!(problems(vec![json!({"ttlMs": 0, "cacheScope": "public"}), json!({"ttlMs": 5, "cacheScope": "public"})]).is_empty());
        assert_eq!(problems(vec![json!({"ttlMs": 0, "cacheScope": "public"}), json!({"ttlMs": 5, "cacheScope": "private"})]).len(), 1);
        assert_eq!(problems(vec![json!({"ttlMs": -1, "cacheScope": "public"})]).len(), 1);
        assert_eq!(problems(vec![json!({"ttlMs": 1.5, "cacheScope": "public"})]).len(), 1);
        assert_eq!(problems(vec![json!({"cacheScope": "shared"})]).len(), 2);
    }
}
