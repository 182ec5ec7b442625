//! Role leaks: string leaves (and keys) of what a role saw that match
//! something the role must never see.

use crate::config::Matcher;
use crate::record::clip;
use serde_json::Value;

/// Every string leaf of `v` that a matcher hits, with its JSON pointer.
pub fn forbidden_in(v: &Value, at: &str, matchers: &[Matcher], out: &mut Vec<String>) {
    match v {
        Value::String(s) => {
            if let Some(m) = matchers.iter().find(|m| m.matches(s)) {
                out.push(format!("{at}: {:?} (matches `{}`)", clip(s, 80), m.shown()));
            }
        }
        Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                forbidden_in(x, &format!("{at}/{i}"), matchers, out);
            }
        }
        Value::Object(o) => {
            for (k, x) in o {
                // Keys can leak too (e.g. a map keyed by environment).
                if let Some(m) = matchers.iter().find(|m| m.matches(k)) {
                    out.push(format!("{at}: key {:?} (matches `{}`)", clip(k, 80), m.shown()));
                }
                forbidden_in(x, &format!("{at}/{}", k.replace('~', "~0").replace('/', "~1")), matchers, out);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn scan_finds_values_and_keys() {
        let m = vec![Matcher::new("production").unwrap(), Matcher::new("/prod-[0-9]+/").unwrap()];
        let mut hits = Vec::new();
        forbidden_in(&json!({"uri": "ref://env/Production", "tags": ["ok", "prod-42"], "staging": 1}), "x", &m, &mut hits);
        assert_eq!(hits.len(), 2, "{hits:?}");
        assert!(hits[0].starts_with("x/uri: "));
        let mut hits = Vec::new();
        forbidden_in(&json!({"production": true}), "y", &m, &mut hits);
        assert_eq!(hits.len(), 1);
    }
}
