//! `WWW-Authenticate` challenges (RFC 9110 §11.6.1, RFC 6750 §3) and the
//! protected resource metadata document (RFC 9728 §2), judged without I/O.

use serde_json::Value;
use std::collections::BTreeMap;

/// One challenge: its scheme (lower case) and parameters (names lower case,
/// quoted values unquoted).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Challenge {
    pub scheme: String,
    pub params: BTreeMap<String, String>,
}

/// The challenges of `WWW-Authenticate` header values (a header may hold
/// several, comma-separated; a parameter belongs to the scheme before it).
pub fn parse(values: &[&str]) -> Vec<Challenge> {
    let mut out: Vec<Challenge> = Vec::new();
    for v in values {
        let mut rest = v.trim();
        while !rest.is_empty() {
            rest = rest.trim_start_matches([',', ' ', '\t']);
            if rest.is_empty() {
                break;
            }
            // A token; then `=` makes it a parameter, else it is a scheme.
            let end = rest.find(|c: char| c == '=' || c == ',' || c.is_whitespace()).unwrap_or(rest.len());
            let (name, after) = rest.split_at(end);
            let after_ws = after.trim_start();
            if let Some(value_part) = after_ws.strip_prefix('=').filter(|_| !out.is_empty() && !name.is_empty()) {
                let value_part = value_part.trim_start();
                let (value, left) = if let Some(q) = value_part.strip_prefix('"') {
                    let mut val = String::new();
                    let mut chars = q.char_indices();
                    let mut stop = q.len();
                    while let Some((i, c)) = chars.next() {
                        match c {
                            '\\' => {
                                if let Some((_, n)) = chars.next() {
                                    val.push(n);
                                }
                            }
                            '"' => {
                                stop = i + 1;
                                break;
                            }
                            c => val.push(c),
                        }
                    }
                    (val, &q[stop.min(q.len())..])
                } else {
                    let e = value_part.find(',').unwrap_or(value_part.len());
                    (value_part[..e].trim().to_string(), &value_part[e..])
                };
                if let Some(last) = out.last_mut() {
                    last.params.insert(name.to_ascii_lowercase(), value);
                }
                rest = left;
            } else if name.is_empty() {
                // A stray character: skip it.
                rest = &rest[rest.chars().next().map_or(1, char::len_utf8)..];
            } else {
                out.push(Challenge { scheme: name.to_ascii_lowercase(), params: BTreeMap::new() });
                rest = after;
            }
        }
    }
    out
}

/// The Bearer challenge among them.
pub fn bearer(challenges: &[Challenge]) -> Option<&Challenge> {
    challenges.iter().find(|c| c.scheme == "bearer")
}

/// What a protected resource metadata document breaks: it must be a JSON
/// object whose `resource` is one of `resources` (the identifier the
/// client used) and whose `authorization_servers` lists at least one
/// issuer URL; `bearer_methods_supported`, if present, must allow the
/// `header` method the client uses.
pub fn metadata_problems(doc: &Value, resources: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    let Some(obj) = doc.as_object() else {
        return vec!["the protected resource metadata is not a JSON object".into()];
    };
    match obj.get("resource").and_then(Value::as_str) {
        None => out.push("the metadata has no `resource` (RFC 9728 §2: REQUIRED)".into()),
        Some(r) if !resources.iter().any(|x| same_resource(x, r)) => out.push(format!(
            "the metadata's `resource` is \"{r}\", not the identifier the client used ({}): RFC 9728 §3.3 makes a client refuse metadata whose resource differs",
            resources.iter().map(|x| format!("\"{x}\"")).collect::<Vec<_>>().join(" or ")
        )),
        Some(_) => {}
    }
    match obj.get("authorization_servers") {
        None => out.push("the metadata has no `authorization_servers`; it must list at least one authorization server".into()),
        Some(Value::Array(a)) if a.is_empty() => {
            out.push("`authorization_servers` is empty; it must list at least one authorization server".into())
        }
        Some(Value::Array(a)) if !a.iter().all(Value::is_string) => {
            out.push("`authorization_servers` must be an array of issuer URLs (strings)".into())
        }
        Some(Value::Array(_)) => {}
        Some(v) => out.push(format!("`authorization_servers` must be an array of issuer URLs; it is {v}")),
    }
    out
}

/// A note when `bearer_methods_supported` leaves out `header`, the only
/// way an MCP client sends its token (RFC 9728 makes the field optional and
/// the MCP text binds the client, so this is not a failure).
pub fn bearer_methods_note(doc: &Value) -> Option<String> {
    let m = doc.get("bearer_methods_supported")?;
    let allows = m.as_array().is_some_and(|a| a.iter().any(|x| x == "header"));
    (!allows)
        .then(|| format!("`bearer_methods_supported` is {m}: it does not list \"header\", the only way an MCP client may send its token"))
}

/// Whether two URLs name the same resource: identical once scheme and host
/// are lower case and a default port is left out (RFC 3986 §6.2.2–6.2.3);
/// the path as given.
pub fn same_resource(a: &str, b: &str) -> bool {
    match (reqwest::Url::parse(a), reqwest::Url::parse(b)) {
        (Ok(x), Ok(y)) => x.as_str() == y.as_str(),
        _ => a == b,
    }
}

/// Scopes named in a challenge or metadata: `scope` (space-separated) and
/// `scopes_supported` (array).
pub fn scopes(v: Option<&Value>) -> Vec<String> {
    match v {
        Some(Value::String(s)) => s.split_whitespace().map(String::from).collect(),
        Some(Value::Array(a)) => a.iter().filter_map(|x| x.as_str().map(String::from)).collect(),
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn challenges_parse() {
        let c = parse(&[
            r#"Bearer realm="mcp", error="invalid_token", resource_metadata="http://h/.well-known/oauth-protected-resource/mcp", scope="a b""#,
        ]);
        assert_eq!(c.len(), 1);
        assert_eq!(c[0].scheme, "bearer");
        assert_eq!(c[0].params["error"], "invalid_token");
        assert_eq!(c[0].params["scope"], "a b");
        assert!(c[0].params["resource_metadata"].ends_with("/mcp"));
        let two = parse(&[r#"Basic realm="x", Bearer scope=read, error="insufficient_scope""#]);
        assert_eq!(two.len(), 2);
        assert_eq!(bearer(&two).unwrap().params["scope"], "read");
        assert_eq!(bearer(&two).unwrap().params["error"], "insufficient_scope");
        assert!(parse(&[r#"Bearer realm="a \"q\" b""#])[0].params["realm"] == "a \"q\" b");
        assert!(bearer(&parse(&["Basic"])).is_none());
        assert!(parse(&[""]).is_empty());
    }

    #[test]
    fn metadata_is_judged() {
        let r = vec!["http://h/mcp".to_string()];
        assert!(metadata_problems(&json!({"resource": "http://h/mcp", "authorization_servers": ["http://as"]}), &r).is_empty());
        assert_eq!(metadata_problems(&json!({"resource": "http://h/mcp"}), &r).len(), 1);
        assert_eq!(metadata_problems(&json!({"resource": "http://h/mcp", "authorization_servers": []}), &r).len(), 1);
        assert!(
            metadata_problems(&json!({"resource": "http://other/mcp", "authorization_servers": ["x"]}), &r)[0]
                .contains("not the identifier")
        );
        let m = json!({"resource": "http://h/mcp", "authorization_servers": ["x"], "bearer_methods_supported": ["body"]});
        assert!(metadata_problems(&m, &r).is_empty() && bearer_methods_note(&m).unwrap().contains("header"));
        assert!(metadata_problems(&json!({"resource": "HTTP://H:80/mcp", "authorization_servers": ["x"]}), &r).is_empty());
        assert!(!metadata_problems(&json!({"resource": "http://h/mcp/", "authorization_servers": ["x"]}), &r).is_empty());
        assert_eq!(metadata_problems(&json!([1]), &r).len(), 1);
        assert_eq!(scopes(Some(&json!("a b"))), vec!["a", "b"]);
        assert_eq!(scopes(Some(&json!(["a"]))), vec!["a"]);
    }
}
