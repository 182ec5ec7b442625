//! The skills extension (SEP-2640): what a `skills/list` page, a skill
//! entry and a skill's files must be. Pure functions.

use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

/// The skills extension's identifier.
pub const SKILLS_EXTENSION: &str = "io.modelcontextprotocol/skills";

fn brief(v: &Value) -> String {
    crate::wire::brief(v)
}

/// What is wrong with one `skills/list` page (2026-07-28): `resultType`
/// complete, `skills` an array, `nextCursor` a string when present, and
/// the list caching attributes `ttlMs` (integer ≥ 0) and `cacheScope`
/// (`public` or `private`).
pub fn page_problems(r: &Value) -> Vec<String> {
    let mut out = Vec::new();
    if r.get("resultType").and_then(Value::as_str) != Some("complete") {
        out.push(format!("resultType must be \"complete\"; got {}", r.get("resultType").map_or("none".into(), brief)));
    }
    if !r.get("skills").is_some_and(Value::is_array) {
        out.push(format!("skills must be an array of skill entries; got {}", r.get("skills").map_or("nothing".into(), brief)));
    }
    if let Some(c) = r.get("nextCursor")
        && !c.is_string()
    {
        out.push(format!("nextCursor must be a string when present; got {}", brief(c)));
    }
    match r.get("ttlMs") {
        Some(v) if v.as_u64().is_some() => {}
        v => out.push(format!(
            "a skills/list result of 2026-07-28 carries ttlMs (integer ≥ 0), as tools/list does; got {}",
            v.map_or("nothing".into(), brief)
        )),
    }
    match r.get("cacheScope").and_then(Value::as_str) {
        Some("public" | "private") => {}
        _ => out.push(format!(
            "a skills/list result of 2026-07-28 carries cacheScope (\"public\" or \"private\"), as tools/list does; got {}",
            r.get("cacheScope").map_or("nothing".into(), brief)
        )),
    }
    out
}

/// What is wrong with a skill entry's shape: `uri` a string, `frontmatter`
/// an object with string `name` and `description`, `resources` an array
/// of `{uri, digest, size}` or the string `"dynamic"`.
pub fn entry_problems(e: &Value) -> Vec<String> {
    let mut out = Vec::new();
    let at = e.get("uri").and_then(Value::as_str).unwrap_or("(no uri)");
    if !e.get("uri").is_some_and(Value::is_string) {
        out.push(format!(
            "an entry's uri (its SKILL.md's resource URI) must be a string; got {}",
            e.get("uri").map_or("nothing".into(), brief)
        ));
    }
    match e.get("frontmatter") {
        Some(Value::Object(f)) => {
            for k in ["name", "description"] {
                if !f.get(k).is_some_and(Value::is_string) {
                    out.push(format!("{at}: frontmatter.{k} must be a string (SKILL.md's frontmatter has at least name and description)"));
                }
            }
        }
        v => out.push(format!(
            "{at}: frontmatter must be an object (SKILL.md's YAML frontmatter as JSON); got {}",
            v.map_or("nothing".into(), brief)
        )),
    }
    match e.get("resources") {
        Some(Value::String(s)) if s == "dynamic" => {}
        Some(Value::Array(items)) => {
            for item in items {
                let ok = item.get("uri").is_some_and(Value::is_string)
                    && item.get("digest").is_some_and(Value::is_string)
                    && item.get("size").and_then(Value::as_u64).is_some();
                if !ok {
                    out.push(format!(
                        "{at}: each resources item needs uri (string), digest (string) and size (integer bytes); got {}",
                        brief(item)
                    ));
                }
            }
        }
        None => out.push(format!("{at}: an entry without resources is invalid (an array of the skill's files, or \"dynamic\")")),
        Some(v) => out.push(format!("{at}: resources must be an array of the skill's files or the string \"dynamic\"; got {}", brief(v))),
    }
    out
}

/// The skill's root (its `uri` without `/SKILL.md`), if the uri ends so.
pub fn skill_root(e: &Value) -> Option<&str> {
    e.get("uri").and_then(Value::as_str).and_then(|u| u.strip_suffix("/SKILL.md"))
}

/// The final path segment must be the skill's name, and the uri that of
/// its `SKILL.md`.
pub fn path_problem(e: &Value) -> Option<String> {
    let uri = e.get("uri").and_then(Value::as_str)?;
    let name = e.pointer("/frontmatter/name").and_then(Value::as_str)?;
    let Some(root) = skill_root(e) else {
        return Some(format!("{uri}: an entry's uri is its SKILL.md's, so it ends in /SKILL.md"));
    };
    let last = root.rsplit('/').next().unwrap_or(root);
    (last != name).then(|| format!("{uri}: the last segment of the skill's path ({last:?}) must equal frontmatter.name ({name:?})"))
}

/// What is wrong with the completeness of an entry's `resources` array:
/// the SKILL.md itself listed, each file once, each within the skill's
/// directory.
pub fn resources_problems(e: &Value) -> Vec<String> {
    let mut out = Vec::new();
    let (Some(uri), Some(items)) = (e.get("uri").and_then(Value::as_str), e.get("resources").and_then(Value::as_array)) else {
        return out;
    };
    let uris: Vec<&str> = items.iter().filter_map(|i| i.get("uri").and_then(Value::as_str)).collect();
    if !uris.contains(&uri) {
        out.push(format!("{uri}: resources must list the skill's own SKILL.md (with its digest and size); it does not"));
    }
    let mut seen = std::collections::BTreeSet::new();
    for u in &uris {
        if !seen.insert(*u) {
            out.push(format!("{uri}: resources lists {u} more than once (each file exactly once)"));
        }
    }
    if let Some(root) = skill_root(e) {
        let prefix = format!("{root}/");
        for u in uris.iter().filter(|u| **u != uri && !u.starts_with(&prefix)) {
            out.push(format!("{uri}: {u} is not a file within the skill's directory {prefix}"));
        }
    }
    out
}

/// Why a skill name breaks the Agent Skills naming rules (1 to 64
/// characters: lower-case letters, digits and single hyphens, no hyphen
/// at either end), or `None`. Letters are taken as Unicode lower case, the
/// more lenient reading of the rules SEP-2640 delegates to.
pub fn name_rule_problem(name: &str) -> Option<&'static str> {
    let n = name.chars().count();
    if n == 0 || n > 64 {
        return Some("it must be 1 to 64 characters long");
    }
    if !name.chars().all(|c| c == '-' || c.is_numeric() || (c.is_alphabetic() && c.is_lowercase())) {
        return Some("it may hold only lower-case letters, digits and hyphens");
    }
    if name.starts_with('-') || name.ends_with('-') || name.contains("--") {
        return Some("a hyphen may not start or end it, nor follow another");
    }
    None
}

/// The most resources, and bytes in all, a skill should have (SEP-2640
/// §Limits): what every conforming host must accept.
pub const MAX_SKILL_RESOURCES: usize = 512;
pub const MAX_SKILL_BYTES: u64 = 16 * 1024 * 1024;

/// A skill above either limit, counted from its entry alone: the entries
/// of `resources` (SKILL.md included) and the sum of their `size`. A
/// `"dynamic"` entry offers nothing to count: `None` for it.
pub fn limit_problem(e: &Value) -> Option<Result<(), String>> {
    let uri = e.get("uri").and_then(Value::as_str).unwrap_or("?");
    let items = e.get("resources").and_then(Value::as_array)?;
    let bytes: u64 = items.iter().filter_map(|i| i.get("size").and_then(Value::as_u64)).sum();
    let mut over = Vec::new();
    if items.len() > MAX_SKILL_RESOURCES {
        over.push(format!("{} resources (the limit is {MAX_SKILL_RESOURCES}, SKILL.md included)", items.len()));
    }
    if bytes > MAX_SKILL_BYTES {
        over.push(format!("{bytes} bytes in all by the sum of size (the limit is {MAX_SKILL_BYTES}, 16 MiB)"));
    }
    Some(if over.is_empty() {
        Ok(())
    } else {
        Err(format!("{uri}: the skill has {}; a conforming host need not load it", over.join(" and ")))
    })
}

/// `sha256:` and the 64 lowercase hex digits of the bytes' SHA-256.
pub fn sha256_digest(bytes: &[u8]) -> String {
    let h = Sha256::digest(bytes);
    format!("sha256:{}", h.iter().map(|b| format!("{b:02x}")).collect::<String>())
}

/// The raw bytes of a `resources/read` content item: its `text` as
/// UTF-8, or its `blob` decoded from base64.
pub fn content_bytes(item: &Value) -> Result<Vec<u8>, String> {
    use base64::Engine;
    if let Some(t) = item.get("text").and_then(Value::as_str) {
        return Ok(t.as_bytes().to_vec());
    }
    if let Some(b) = item.get("blob").and_then(Value::as_str) {
        return base64::engine::general_purpose::STANDARD.decode(b).map_err(|e| format!("blob is not base64: {e}"));
    }
    Err(format!("the content has neither text nor blob: {}", brief(item)))
}

/// The top-level scalar fields of a SKILL.md's YAML frontmatter (the
/// block between the opening `---` line and the next): `key: value` lines,
/// values plain or quoted. Nested or multi-line values are left out and
/// named in the second list (mcpcert reads flat YAML only).
pub fn frontmatter_scalars(text: &str) -> Result<(Map<String, Value>, Vec<String>), String> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut lines = text.lines();
    if lines.next().map(str::trim_end) != Some("---") {
        return Err("SKILL.md does not begin with a YAML frontmatter block (a first line `---`)".into());
    }
    let mut out = Map::new();
    let mut skipped = Vec::new();
    let mut last: Option<String> = None;
    for line in lines {
        if line.trim_end() == "---" {
            return Ok((out, skipped));
        }
        if line.starts_with([' ', '\t']) || line.trim().is_empty() || line.trim_start().starts_with('#') {
            // A continuation or a nested block: the key above is not flat.
            if let Some(k) = last.take().filter(|_| !line.trim().is_empty() && !line.trim_start().starts_with('#')) {
                out.remove(&k);
                skipped.push(k);
            }
            continue;
        }
        let Some((k, v)) = line.split_once(':') else { continue };
        let (k, v) = (k.trim().to_string(), v.trim());
        last = Some(k.clone());
        if v.is_empty() || v.starts_with(['|', '>', '[', '{', '&', '*', '!']) {
            skipped.push(k);
            last = None;
            continue;
        }
        let value =
            if (v.starts_with('"') && v.ends_with('"') && v.len() >= 2) || (v.starts_with('\'') && v.ends_with('\'') && v.len() >= 2) {
                let inner = &v[1..v.len() - 1];
                if v.starts_with('"') {
                    serde_json::from_str::<String>(v).unwrap_or_else(|_| inner.to_string())
                } else {
                    inner.replace("''", "'")
                }
            } else {
                v.split(" #").next().unwrap_or(v).trim_end().to_string()
            };
        out.insert(k, Value::String(value));
    }
    Err("the frontmatter block of SKILL.md has no closing `---` line".into())
}

/// Where the entry's frontmatter and the file's flat fields disagree
/// (fields both carry, and flat fields only one of them has). The entry's
/// values are compared as YAML renders them (a number or boolean of the
/// file comes as its text).
pub fn frontmatter_differences(entry: &Map<String, Value>, file: &Map<String, Value>, nested: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    let scalar = |v: &Value| match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    };
    for (k, fv) in file {
        match entry.get(k) {
            None => out.push(format!("the file's frontmatter has {k}: {fv}, the entry's has no {k}")),
            Some(ev) if scalar(ev).as_ref() != fv.as_str().map(String::from).as_ref() => {
                out.push(format!("{k}: the entry says {}, the file says {fv}", brief(ev)))
            }
            Some(_) => {}
        }
    }
    for (k, ev) in entry {
        if !file.contains_key(k) && !nested.contains(k) && scalar(ev).is_some() {
            out.push(format!("the entry's frontmatter has {k}: {}, the file's has no {k}", brief(ev)));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn entry() -> Value {
        json!({"uri": "skill://acme/code-review/SKILL.md", "frontmatter": {"name": "code-review", "description": "d"},
               "resources": [{"uri": "skill://acme/code-review/SKILL.md", "digest": "sha256:00", "size": 3},
                             {"uri": "skill://acme/code-review/refs/a.md", "digest": "sha256:01", "size": 1}]})
    }

    #[test]
    fn an_entry_is_judged_on_shape_path_and_completeness() {
        let e = entry();
        assert!(entry_problems(&e).is_empty() && path_problem(&e).is_none() && resources_problems(&e).is_empty());
        let mut d = e.clone();
        d["resources"] = json!("dynamic");
        assert!(entry_problems(&d).is_empty());
        d.as_object_mut().unwrap().remove("resources");
        assert_eq!(entry_problems(&d).len(), 1);
        let mut n = e.clone();
        n["frontmatter"]["name"] = json!("review");
        assert!(path_problem(&n).unwrap().contains("\"code-review\""));
        let mut r = e.clone();
        r["resources"].as_array_mut().unwrap().remove(0);
        r["resources"].as_array_mut().unwrap().push(json!({"uri": "skill://other/x.md", "digest": "sha256:02", "size": 1}));
        assert_eq!(resources_problems(&r).len(), 2);
        assert_eq!(page_problems(&json!({"resultType": "complete", "skills": [], "ttlMs": 0, "cacheScope": "public"})).len(), 0);
        assert_eq!(page_problems(&json!({"resultType": "complete", "skills": []})).len(), 2);
    }

    #[test]
    fn digests_are_sha256_of_the_raw_bytes() {
        assert_eq!(sha256_digest(b"abc"), "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
        assert_eq!(content_bytes(&json!({"blob": "YWJj"})).unwrap(), b"abc");
        assert_eq!(content_bytes(&json!({"text": "abc"})).unwrap(), b"abc");
    }

    #[test]
    fn flat_frontmatter_is_read_and_compared() {
        let text = "---\nname: code-review\ndescription: \"Review: the diff\"\nmetadata:\n  version: 1\nlicense: 'MIT'\n---\n# Body\n";
        let (f, nested) = frontmatter_scalars(text).unwrap();
        assert_eq!(f["name"], "code-review");
        assert_eq!(f["description"], "Review: the diff");
        assert_eq!(f["license"], "MIT");
        assert_eq!(nested, ["metadata"]);
        let e = json!({"name": "code-review", "description": "Review: the diff", "license": "MIT", "metadata": {"version": 1}});
        assert!(frontmatter_differences(e.as_object().unwrap(), &f, &nested).is_empty());
        let e2 = json!({"name": "code-review", "description": "other", "license": "MIT"});
        assert_eq!(frontmatter_differences(e2.as_object().unwrap(), &f, &nested).len(), 1);
        assert!(frontmatter_scalars("# no frontmatter").is_err());
    }
}
