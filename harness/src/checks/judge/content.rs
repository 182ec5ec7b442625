//! Tool results: content blocks, `structuredContent` against the tool's
//! `outputSchema`, and the serialized-JSON text mirror.

use crate::wire::{Feature, Revision, brief};
use base64::Engine as _;
use serde_json::Value;

/// The content block kinds, each with the feature that brought it (None:
/// every revision has it).
const KINDS: [(&str, Option<Feature>); 5] =
    [("text", None), ("image", None), ("audio", Some(Feature::Audio)), ("resource_link", Some(Feature::ResourceLinks)), ("resource", None)];

/// The block kinds a revision's tool results and prompt messages may hold.
pub fn kinds(rev: Revision) -> Vec<&'static str> {
    KINDS.iter().filter(|(_, f)| f.is_none_or(|f| rev.has(f))).map(|(k, _)| *k).collect()
}

/// Problems with a result's `content` (by `rev`'s block kinds), each naming the block index.
pub fn content_problems(result: &Value, rev: Revision) -> Vec<String> {
    let mut out = Vec::new();
    let Some(content) = result.get("content") else {
        out.push("`content` is missing (it is required, even when empty or when structuredContent is given)".into());
        return out;
    };
    let Some(blocks) = content.as_array() else {
        out.push(format!("`content` must be an array; got {}", brief(content)));
        return out;
    };
    for (i, b) in blocks.iter().enumerate() {
        for p in block_problems(b, rev) {
            out.push(format!("content[{i}]: {p}"));
        }
    }
    out
}

fn block_problems(b: &Value, rev: Revision) -> Vec<String> {
    let mut out = Vec::new();
    let Some(m) = b.as_object() else {
        return vec![format!("a content block must be an object; got {}", brief(b))];
    };
    let ty = m.get("type").and_then(|t| t.as_str()).unwrap_or("");
    if let Some((_, Some(f))) = KINDS.iter().find(|(k, _)| *k == ty)
        && !rev.has(*f)
    {
        let since = Revision::ALL.into_iter().rev().find(|r| r.has(*f)).map_or("a later revision", |r| r.as_str());
        return vec![format!(
            "a {ty} block, which {rev} does not have (it came with {since}); {rev} content may hold only {}",
            kinds(rev).join(", ")
        )];
    }
    let need_str = |key: &str, out: &mut Vec<String>| match m.get(key) {
        Some(Value::String(_)) => {}
        Some(v) => out.push(format!("{ty} block: `{key}` must be a string; got {}", brief(v))),
        None => out.push(format!("{ty} block: `{key}` is required")),
    };
    match ty {
        "text" => need_str("text", &mut out),
        "image" | "audio" => {
            need_str("data", &mut out);
            need_str("mimeType", &mut out);
            if let Some(Value::String(d)) = m.get("data")
                && let Some(p) = base64_problem(d)
            {
                out.push(format!("{ty} block: `data` is not base64: {p}"));
            }
        }
        "resource_link" => {
            need_str("uri", &mut out);
            need_str("name", &mut out);
            if let Some(s) = m.get("size")
                && s.as_u64().is_none()
            {
                out.push(format!("resource_link block: `size` must be a non-negative integer; got {}", brief(s)));
            }
        }
        "resource" => match m.get("resource").and_then(|r| r.as_object()) {
            None => out.push("resource block: `resource` (an object with uri and text or blob) is required".into()),
            Some(r) => {
                if !r.get("uri").is_some_and(|u| u.is_string()) {
                    out.push("resource block: resource.uri (a string) is required".into());
                }
                match (r.get("text"), r.get("blob")) {
                    (Some(Value::String(_)), None) => {}
                    (None, Some(Value::String(blob))) => {
                        if let Some(p) = base64_problem(blob) {
                            out.push(format!("resource block: resource.blob is not base64: {p}"));
                        }
                    }
                    (Some(_), Some(_)) => {
                        out.push("resource block: resource has both `text` and `blob`; it must be one or the other".into())
                    }
                    _ => out.push("resource block: resource needs a string `text` or a base64 `blob`".into()),
                }
            }
        },
        "" => out.push(format!("the block has no string `type`: {}", brief(b))),
        other => out.push(format!("unknown content block type {other:?}; {rev} content may hold only {}", kinds(rev).join(", "))),
    }
    if let Some(a) = m.get("annotations") {
        out.extend(annotation_problems(a).into_iter().map(|p| format!("{ty} block: {p}")));
    }
    out
}

fn annotation_problems(a: &Value) -> Vec<String> {
    let Some(m) = a.as_object() else {
        return vec![format!("`annotations` must be an object; got {}", brief(a))];
    };
    let mut out = Vec::new();
    if let Some(aud) = m.get("audience") {
        match aud.as_array() {
            Some(list) => {
                for x in list {
                    if !matches!(x.as_str(), Some("user") | Some("assistant")) {
                        out.push(format!("annotations.audience may hold only \"user\" and \"assistant\"; got {}", brief(x)));
                    }
                }
            }
            None => out.push(format!("annotations.audience must be an array; got {}", brief(aud))),
        }
    }
    if let Some(p) = m.get("priority") {
        match p.as_f64() {
            Some(x) if (0.0..=1.0).contains(&x) => {}
            _ => out.push(format!("annotations.priority must be a number from 0 to 1; got {}", brief(p))),
        }
    }
    if let Some(l) = m.get("lastModified")
        && !l.is_string()
    {
        out.push(format!("annotations.lastModified must be an ISO 8601 string; got {}", brief(l)));
    }
    out
}

/// Standard base64 with padding (what the schema's `byte` format means).
pub fn base64_problem(s: &str) -> Option<String> {
    match base64::engine::general_purpose::STANDARD.decode(s) {
        Ok(_) => None,
        Err(e) => Some(format!("{e} (value starts {:?})", s.chars().take(24).collect::<String>())),
    }
}

/// Outcome of judging `structuredContent` against an `outputSchema`.
pub enum Structured {
    Conforms,
    Missing,
    Breaks(Vec<String>),
    /// The schema could not be compiled (remote `$ref`, or invalid: the
    /// descriptor case reports that): nothing to judge against.
    Unjudgeable(String),
}

pub fn judge_structured(result: &Value, output_schema: &Value, revision: Revision) -> Structured {
    let Some(sc) = result.get("structuredContent") else {
        return Structured::Missing;
    };
    if !revision.is_stateless() && !sc.is_object() {
        return Structured::Breaks(vec![format!("in {revision} structuredContent must be a JSON object; got {}", brief(sc))]);
    }
    // An explicit draft overrides `$schema`: set only for one without it.
    let opts = match super::admission::default_draft(output_schema, revision) {
        jsonschema::Draft::Draft7 => jsonschema::draft7::options(),
        _ => jsonschema::options(),
    };
    let v = match opts.build(output_schema) {
        Ok(v) => v,
        Err(e) => return Structured::Unjudgeable(e.to_string()),
    };
    let errs: Vec<String> = v
        .iter_errors(sc)
        .take(5)
        .map(|e| {
            let at = e.instance_path().to_string();
            format!("at structuredContent{at}: {e}")
        })
        .collect();
    if errs.is_empty() { Structured::Conforms } else { Structured::Breaks(errs) }
}

/// Whether some text block holds the structured content serialized as JSON.
pub fn has_text_mirror(result: &Value) -> bool {
    let Some(sc) = result.get("structuredContent") else { return true };
    result.get("content").and_then(|c| c.as_array()).is_some_and(|blocks| {
        blocks.iter().any(|b| {
            b.get("type").and_then(|t| t.as_str()) == Some("text")
                && b.get("text").and_then(|t| t.as_str()).and_then(|t| serde_json::from_str::<Value>(t).ok()).is_some_and(|v| &v == sc)
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn each_revision_has_its_own_block_kinds() {
        let audio = json!({"content": [{"type": "audio", "data": "UklGRiQAAABXQVZF", "mimeType": "audio/wav"}]});
        let link = json!({"content": [{"type": "resource_link", "uri": "file:///a", "name": "a"}]});
        assert!(content_problems(&audio, Revision::R2025_03_26).is_empty());
        let p = content_problems(&audio, Revision::R2024_11_05);
        assert!(p.len() == 1 && p[0].contains("came with 2025-03-26") && p[0].contains("text, image, resource"), "{p:?}");
        assert!(content_problems(&link, Revision::R2025_06_18).is_empty());
        assert!(content_problems(&link, Revision::R2025_03_26)[0].contains("came with 2025-06-18"));
        assert_eq!(kinds(Revision::R2026_07_28).len(), 5);
    }

    #[test]
    fn the_five_kinds_pass() {
        let r = json!({"content": [
            {"type": "text", "text": "hi", "annotations": {"audience": ["user", "assistant"], "priority": 0.5, "lastModified": "2026-01-01T00:00:00Z"}},
            {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"},
            {"type": "audio", "data": "UklGRiQAAABXQVZF", "mimeType": "audio/wav"},
            {"type": "resource_link", "uri": "x://a", "name": "a", "size": 3},
            {"type": "resource", "resource": {"uri": "x://a", "text": "t"}},
            {"type": "resource", "resource": {"uri": "x://b", "blob": "AAEC"}}
        ]});
        assert!(content_problems(&r, Revision::R2025_11_25).is_empty(), "{:?}", content_problems(&r, Revision::R2025_11_25));
        assert!(content_problems(&json!({"content": []}), Revision::R2024_11_05).is_empty());
    }

    #[test]
    fn each_broken_block_is_named() {
        let cases = [
            json!({"type": "tool_use", "id": "x", "name": "y", "input": {}}),
            json!({"type": "html", "html": "<b>"}),
            json!({"text": "no type"}),
            json!({"type": "text"}),
            json!({"type": "image", "data": "not base64!!", "mimeType": "image/png"}),
            json!({"type": "image", "data": "iVBORw0KGgo="}),
            json!({"type": "audio", "data": 5, "mimeType": "audio/wav"}),
            json!({"type": "resource_link", "uri": "x://a"}),
            json!({"type": "resource_link", "uri": "x://a", "name": "a", "size": -1}),
            json!({"type": "resource", "resource": {"uri": "x://a"}}),
            json!({"type": "resource", "resource": {"uri": "x://a", "blob": "%%%"}}),
            json!({"type": "resource", "resource": {"uri": "x://a", "text": "t", "blob": "AA=="}}),
            json!({"type": "text", "text": "t", "annotations": {"audience": ["robot"]}}),
            json!({"type": "text", "text": "t", "annotations": {"priority": 2}}),
            json!({"type": "text", "text": "t", "annotations": {"lastModified": 5}}),
        ];
        for b in cases {
            let p = content_problems(&json!({"content": [b.clone()]}), Revision::R2026_07_28);
            assert_eq!(p.len(), 1, "{b}: {p:?}");
            assert!(p[0].starts_with("content[0]: "), "{}", p[0]);
        }
        assert_eq!(content_problems(&json!({}), Revision::R2026_07_28).len(), 1);
        assert_eq!(content_problems(&json!({"content": "x"}), Revision::R2026_07_28).len(), 1);
    }

    #[test]
    fn structured_content_any_json_value() {
        let arr = json!({"type": "array", "items": {"type": "string"}});
        assert!(matches!(judge_structured(&json!({"structuredContent": ["a"]}), &arr, Revision::R2026_07_28), Structured::Conforms));
        assert!(matches!(judge_structured(&json!({"structuredContent": {"a": 1}}), &arr, Revision::R2026_07_28), Structured::Breaks(_)));
        assert!(matches!(judge_structured(&json!({"content": []}), &arr, Revision::R2026_07_28), Structured::Missing));
        let obj = json!({"type": "object"});
        assert!(matches!(judge_structured(&json!({"structuredContent": ["a"]}), &json!({}), Revision::R2025_11_25), Structured::Breaks(_)));
        assert!(matches!(judge_structured(&json!({"structuredContent": {}}), &obj, Revision::R2025_11_25), Structured::Conforms));
        assert!(matches!(
            judge_structured(&json!({"structuredContent": {}}), &json!({"$ref": "http://127.0.0.1:9/x"}), Revision::R2026_07_28),
            Structured::Unjudgeable(_)
        ));
    }

    #[test]
    fn text_mirror() {
        assert!(has_text_mirror(&json!({"content": [{"type": "text", "text": "{\"a\": 1}"}], "structuredContent": {"a": 1}})));
        assert!(!has_text_mirror(&json!({"content": [{"type": "text", "text": "a is 1"}], "structuredContent": {"a": 1}})));
        assert!(has_text_mirror(&json!({"content": []})));
    }
}
