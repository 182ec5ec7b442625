//! Tool descriptor admission: would a careful client accept this tool?
//! Each tool is judged on its own, so one bad tool never hides the others.
//! Used by the run (`tools/descriptor/*` cases) and by `mcpcert lint`.

use super::Weight;
use crate::wire::{Feature, Revision};
use serde::Serialize;
use serde_json::Value;

use super::xheader::find_keyword;
pub use super::xheader::{HeaderParam, HeaderWalk, header_value_problem, header_walk};
use std::collections::BTreeMap;

/// Which rule a finding is about; each maps to one suite case.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, PartialOrd, Ord)]
#[serde(rename_all = "kebab-case")]
pub enum Rule {
    /// The descriptor is a JSON object with a string name.
    Shape,
    Name,
    /// Another tool has the same name (judged over the whole list).
    Unique,
    InputSchema,
    OutputSchema,
    XMcpHeader,
    XMcpHeaderSecret,
    Annotations,
}

impl Rule {
    pub fn as_str(self) -> &'static str {
        match self {
            Rule::Shape => "shape",
            Rule::Name => "name",
            Rule::Unique => "unique",
            Rule::InputSchema => "input-schema",
            Rule::OutputSchema => "output-schema",
            Rule::XMcpHeader => "x-mcp-header",
            Rule::XMcpHeaderSecret => "x-mcp-header-secret",
            Rule::Annotations => "annotations",
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct Finding {
    pub rule: Rule,
    pub weight: Weight,
    pub message: String,
}

/// Deployment choices that are stricter than the spec.
#[derive(Debug, Clone)]
pub struct Policy {
    /// Parameter (or header) names that look like secrets: compared in
    /// lower case with `_` and `-` removed, as substrings.
    pub secret_names: Vec<String>,
}

impl Default for Policy {
    fn default() -> Self {
        Policy { secret_names: crate::config::DEFAULT_SECRET_NAMES.iter().map(|s| s.to_string()).collect() }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct ToolVerdict {
    pub index: usize,
    pub name: String,
    pub admitted: bool,
    pub findings: Vec<Finding>,
}

/// The name to show for a tool, even a broken one.
pub fn display_name(tool: &Value, index: usize) -> String {
    match tool.get("name") {
        Some(Value::String(s)) => s.clone(),
        _ => format!("(tool #{index} without a string name)"),
    }
}

/// Judge every tool, plus the uniqueness of names across the list.
pub fn admit_all(tools: &[Value], revision: Revision, policy: &Policy) -> Vec<ToolVerdict> {
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let mut out = Vec::new();
    for (i, t) in tools.iter().enumerate() {
        let mut findings = admit_tool(t, revision, policy);
        if let Some(Value::String(n)) = t.get("name") {
            if let Some(first) = seen.get(n) {
                findings.push(Finding {
                    rule: Rule::Unique,
                    weight: Weight::Should,
                    message: format!("name `{n}` is used again (first by tool #{first}); names should be unique within a server"),
                });
            } else {
                seen.insert(n.clone(), i);
            }
        }
        let admitted = !findings.iter().any(|f| f.weight.rejects());
        out.push(ToolVerdict { index: i, name: display_name(t, i), admitted, findings });
    }
    out
}

/// Everything wrong with one descriptor (uniqueness aside).
pub fn admit_tool(tool: &Value, revision: Revision, policy: &Policy) -> Vec<Finding> {
    let mut f = Vec::new();
    let mut add = |rule, weight, message: String| f.push(Finding { rule, weight, message });
    let Some(obj) = tool.as_object() else {
        add(Rule::Shape, Weight::Must, format!("a tool must be a JSON object; got {}", crate::wire::brief(tool)));
        return f;
    };
    match obj.get("name") {
        Some(Value::String(n)) => {
            if let Some(why) = name_problem(n).filter(|_| revision.has(Feature::ToolNames)) {
                add(Rule::Name, Weight::Should, format!("name `{}`: {why}", n.escape_debug()));
            }
        }
        Some(other) => add(Rule::Shape, Weight::Must, format!("`name` must be a string; got {}", crate::wire::brief(other))),
        None => add(Rule::Shape, Weight::Must, "`name` is missing".into()),
    }
    let keys: &[&str] = if revision.has(Feature::Titles) { &["title", "description"] } else { &["description"] };
    for key in keys {
        if let Some(v) = obj.get(*key)
            && !v.is_string()
        {
            add(Rule::Annotations, Weight::Must, format!("`{key}` must be a string; got {}", crate::wire::brief(v)));
        }
    }
    // inputSchema: present, an object, root type "object", valid for its dialect.
    match obj.get("inputSchema") {
        None => add(Rule::InputSchema, Weight::Must, "`inputSchema` is missing (it is required)".into()),
        Some(Value::Object(s)) => {
            if s.get("type") != Some(&Value::String("object".into())) {
                add(
                    Rule::InputSchema,
                    Weight::Must,
                    format!(
                        "`inputSchema` must have `\"type\": \"object\"` at its root; got type {}",
                        s.get("type").map(crate::wire::brief).unwrap_or_else(|| "(absent)".into())
                    ),
                );
            }
            for (w, m) in schema_problems(&Value::Object(s.clone()), "inputSchema", revision) {
                add(Rule::InputSchema, w, m);
            }
        }
        Some(other) => {
            add(Rule::InputSchema, Weight::Must, format!("`inputSchema` must be a JSON object; got {}", crate::wire::brief(other)))
        }
    }
    // outputSchema: optional; any valid schema (2025-11-25: root type object).
    // Before 2025-06-18 there was none: the member is not judged.
    match obj.get("outputSchema").filter(|_| revision.has(Feature::StructuredOutput)) {
        None => {}
        Some(s @ Value::Object(m)) => {
            if !revision.is_stateless() && m.get("type") != Some(&Value::String("object".into())) {
                add(
                    Rule::OutputSchema,
                    Weight::Must,
                    format!(
                        "in {revision} `outputSchema` must have `\"type\": \"object\"` at its root; got type {}",
                        m.get("type").map(crate::wire::brief).unwrap_or_else(|| "(absent)".into())
                    ),
                );
            }
            for (w, msg) in schema_problems(s, "outputSchema", revision) {
                add(Rule::OutputSchema, w, msg);
            }
        }
        Some(s @ Value::Bool(_)) if revision.is_stateless() => {
            for (w, msg) in schema_problems(s, "outputSchema", revision) {
                add(Rule::OutputSchema, w, msg);
            }
        }
        Some(other) => {
            add(Rule::OutputSchema, Weight::Must, format!("`outputSchema` must be a JSON Schema object; got {}", crate::wire::brief(other)))
        }
    }
    if let Some(a) = obj.get("annotations").filter(|_| revision.has(Feature::ToolAnnotations)) {
        for m in annotation_problems(a) {
            add(Rule::Annotations, Weight::Must, m);
        }
    }
    if revision.is_stateless() {
        if let Some(s) = obj.get("inputSchema") {
            let walk = header_walk(s);
            for m in walk.problems {
                add(Rule::XMcpHeader, Weight::Must, m);
            }
            for h in &walk.headers {
                if let Some(word) = secret_like(&h.property, &h.value, policy) {
                    add(
                        Rule::XMcpHeaderSecret,
                        Weight::Policy,
                        format!(
                            "property `{}` (mirrored as header Mcp-Param-{}) looks like a secret (`{word}`): header values are logged and seen by intermediaries",
                            h.pointer, h.value
                        ),
                    );
                }
            }
        }
        if let Some(s) = obj.get("outputSchema") {
            for p in find_keyword(s, "x-mcp-header", "") {
                add(
                    Rule::XMcpHeader,
                    Weight::Must,
                    format!("`x-mcp-header` in outputSchema at {p}: the annotation belongs only on inputSchema properties"),
                );
            }
        }
    }
    f
}

/// Why a tool name breaks the naming rule, if it does.
pub fn name_problem(n: &str) -> Option<String> {
    let len = n.chars().count();
    if len == 0 {
        return Some("is empty (1 to 128 characters expected)".into());
    }
    if len > 128 {
        return Some(format!("is {len} characters long (at most 128)"));
    }
    let bad: Vec<String> =
        n.chars().filter(|c| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))).map(|c| format!("{c:?}")).collect();
    if !bad.is_empty() {
        let mut uniq = bad.clone();
        uniq.dedup();
        return Some(format!("contains {} (only ASCII letters, digits, `_`, `-` and `.` are allowed)", uniq.join(", ")));
    }
    None
}

/// Meta-validation against the schema's own dialect, then a compile
/// without network (no remote `$ref` is ever fetched).
/// The dialect a schema without `$schema` is read in: 2020-12 where the
/// revision says so; before 2025-11-25 the spec named none, so a schema
/// that is valid draft-07 (the dialect of those revisions' own schema) but
/// not valid 2020-12 is read as draft-07.
pub fn default_draft(schema: &Value, revision: Revision) -> jsonschema::Draft {
    let undeclared = schema.get("$schema").is_none();
    if undeclared
        && !revision.has(Feature::DefaultDialect)
        && !jsonschema::meta::is_valid(schema)
        && jsonschema::draft7::meta::is_valid(schema)
    {
        jsonschema::Draft::Draft7
    } else {
        jsonschema::Draft::Draft202012
    }
}

pub fn schema_problems(schema: &Value, what: &str, revision: Revision) -> Vec<(Weight, String)> {
    let mut out = Vec::new();
    if default_draft(schema, revision) == jsonschema::Draft::Draft7 {
        if let Err(e) = jsonschema::draft7::options().build(schema) {
            if has_remote_ref(schema) {
                out.push((Weight::Note, format!("{what} uses a remote `$ref`, which mcpcert never fetches; it was not compiled ({e})")));
            } else {
                out.push((Weight::Must, format!("{what} (read as draft-07: {revision} names no dialect) does not compile: {e}")));
            }
        }
        return out;
    }
    let dialect = schema.get("$schema").and_then(|v| v.as_str());
    match jsonschema::meta::validate(schema) {
        Ok(()) => {}
        Err(e) => {
            let text = e.to_string();
            if dialect.is_some() && jsonschema::meta::validator_for(schema).is_err() {
                out.push((
                    Weight::Note,
                    format!(
                        "{what} declares `$schema` {:?}, a dialect mcpcert cannot check; its validity was not judged",
                        dialect.unwrap_or("")
                    ),
                ));
                return out;
            }
            let at = e.instance_path().to_string();
            let at = if at.is_empty() { String::new() } else { format!(" at {at}") };
            out.push((
                Weight::Must,
                format!(
                    "{what} is not a valid {} schema{at}: {text}",
                    dialect.map(dialect_name).unwrap_or(if revision.has(Feature::DefaultDialect) {
                        "JSON Schema 2020-12"
                    } else {
                        "JSON Schema (2020-12, nor draft-07)"
                    })
                ),
            ));
            return out;
        }
    }
    if let Err(e) = jsonschema::options().build(schema) {
        if has_remote_ref(schema) {
            out.push((Weight::Note, format!("{what} uses a remote `$ref`, which mcpcert never fetches; it was not compiled ({e})")));
        } else {
            out.push((Weight::Must, format!("{what} does not compile: {e}")));
        }
    }
    out
}

fn dialect_name(uri: &str) -> &'static str {
    if uri.contains("draft-07") {
        "draft-07"
    } else if uri.contains("draft-06") {
        "draft-06"
    } else if uri.contains("draft-04") {
        "draft-04"
    } else if uri.contains("2019-09") {
        "2019-09"
    } else {
        "2020-12"
    }
}

fn has_remote_ref(v: &Value) -> bool {
    match v {
        Value::Object(m) => m.iter().any(|(k, x)| (k == "$ref" && x.as_str().is_some_and(|r| !r.starts_with('#'))) || has_remote_ref(x)),
        Value::Array(a) => a.iter().any(has_remote_ref),
        _ => false,
    }
}

fn annotation_problems(a: &Value) -> Vec<String> {
    let Some(m) = a.as_object() else {
        return vec![format!("`annotations` must be an object; got {}", crate::wire::brief(a))];
    };
    let mut out = Vec::new();
    for key in ["readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"] {
        if let Some(v) = m.get(key)
            && !v.is_boolean()
        {
            out.push(format!("annotations.{key} must be a boolean; got {}", crate::wire::brief(v)));
        }
    }
    if let Some(v) = m.get("title")
        && !v.is_string()
    {
        out.push(format!("annotations.title must be a string; got {}", crate::wire::brief(v)));
    }
    out
}

fn squash(s: &str) -> String {
    s.chars().filter(|c| *c != '_' && *c != '-').flat_map(|c| c.to_lowercase()).collect()
}

/// The secret-like word a property or header name contains, if any.
fn secret_like(property: &str, header: &str, policy: &Policy) -> Option<String> {
    let p = squash(property);
    let h = squash(header);
    policy
        .secret_names
        .iter()
        .find(|w| {
            let w = squash(w);
            !w.is_empty() && (p.contains(&w) || h.contains(&w))
        })
        .cloned()
}

/// Tools from what `mcpcert lint` reads: a JSON-RPC response, a
/// `tools/list` result, an array of tools, or several of these in a row
/// (pages, e.g. a transcript of JSON lines).
/// Input `mcpcert lint` cannot read as tool descriptors.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{0}")]
pub struct NotDescriptors(String);

pub fn tools_from_documents(text: &str) -> Result<Vec<Value>, NotDescriptors> {
    let mut tools = Vec::new();
    let stream = serde_json::Deserializer::from_str(text).into_iter::<Value>();
    let mut docs = 0;
    for (i, doc) in stream.enumerate() {
        let doc = doc.map_err(|e| NotDescriptors(format!("document {}: not JSON: {e}", i + 1)))?;
        docs += 1;
        let list = if let Some(a) = doc.as_array() {
            Some(a.clone())
        } else if let Some(a) = doc.pointer("/result/tools").and_then(|t| t.as_array()) {
            Some(a.clone())
        } else {
            doc.get("tools").and_then(|t| t.as_array()).cloned()
        };
        match list {
            Some(l) => tools.extend(l),
            None if doc.get("method").is_some() || doc.pointer("/result").is_some() || doc.get("error").is_some() => {}
            None => {
                return Err(NotDescriptors(format!(
                    "document {}: expected a tools/list result (an object with `tools`), a JSON-RPC response holding one, or an array of tools",
                    i + 1
                )));
            }
        }
    }
    if docs == 0 {
        return Err(NotDescriptors("no JSON documents in the input".into()));
    }
    Ok(tools)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn rules(tool: Value) -> Vec<(Rule, Weight)> {
        admit_tool(&tool, Revision::R2026_07_28, &Policy::default()).into_iter().map(|f| (f.rule, f.weight)).collect()
    }

    fn with_input(schema: Value) -> Value {
        json!({"name": "t", "inputSchema": schema})
    }

    #[test]
    fn a_plain_tool_is_admitted() {
        assert!(rules(json!({"name": "get_time.v2-x", "inputSchema": {"type": "object"}})).is_empty());
        assert!(
            rules(
                json!({"name": "t", "inputSchema": {"type": "object", "additionalProperties": false}, "outputSchema": {"type": "array"}})
            )
            .is_empty()
        );
    }

    #[test]
    fn names() {
        assert!(name_problem("a").is_none());
        assert!(name_problem(&"a".repeat(128)).is_none());
        assert!(name_problem(&"a".repeat(129)).is_some());
        assert!(name_problem("").is_some());
        assert!(name_problem("has space").is_some());
        assert!(name_problem("a/b").is_some());
        assert!(name_problem("é").is_some());
        assert_eq!(rules(json!({"name": "a b", "inputSchema": {"type": "object"}})), vec![(Rule::Name, Weight::Should)]);
        let v = admit_all(
            &[json!({"name": "x", "inputSchema": {"type": "object"}}), json!({"name": "x", "inputSchema": {"type": "object"}})],
            Revision::R2026_07_28,
            &Policy::default(),
        );
        assert!(v[0].findings.is_empty());
        assert_eq!(v[1].findings[0].rule, Rule::Unique);
        assert!(v[1].admitted, "a duplicate name is a SHOULD: admitted with a warning");
    }

    #[test]
    fn input_schema_rules() {
        assert_eq!(rules(json!({"name": "t"})), vec![(Rule::InputSchema, Weight::Must)]);
        assert_eq!(rules(with_input(json!(null))), vec![(Rule::InputSchema, Weight::Must)]);
        assert_eq!(rules(with_input(json!({"type": "array"}))), vec![(Rule::InputSchema, Weight::Must)]);
        assert_eq!(
            rules(with_input(json!({"type": "object", "properties": {"x": {"type": "strng"}}}))),
            vec![(Rule::InputSchema, Weight::Must)]
        );
        assert_eq!(rules(with_input(json!({"type": "object", "properties": {"x": {"type": "string", "pattern": "(unclosed"}}}))).len(), 1);
    }

    #[test]
    fn dialects_are_honoured() {
        let d7 = json!({"$schema": "http://json-schema.org/draft-07/schema#", "type": "object",
            "properties": {"p": {"type": "array", "items": [{"type": "string"}], "additionalItems": false}},
            "definitions": {"x": {"type": "string"}}});
        assert!(rules(with_input(d7)).is_empty(), "draft-07 tuple items are valid draft-07");
        let bad7 = json!({"$schema": "http://json-schema.org/draft-07/schema#", "type": "object", "properties": {"p": {"minLength": -1}}});
        assert_eq!(rules(with_input(bad7)), vec![(Rule::InputSchema, Weight::Must)]);
        let unknown = json!({"$schema": "https://example.com/my-dialect", "type": "object"});
        assert_eq!(rules(with_input(unknown)), vec![(Rule::InputSchema, Weight::Note)]);
    }

    #[test]
    fn remote_refs_are_never_fetched() {
        let s = json!({"type": "object", "properties": {"a": {"$ref": "http://127.0.0.1:9/never.json"}}});
        assert_eq!(rules(with_input(s)), vec![(Rule::InputSchema, Weight::Note)]);
    }

    #[test]
    fn output_schema_rules() {
        let t = json!({"name": "t", "inputSchema": {"type": "object"}, "outputSchema": {"type": "array"}});
        assert!(admit_tool(&t, Revision::R2026_07_28, &Policy::default()).is_empty());
        assert_eq!(admit_tool(&t, Revision::R2025_11_25, &Policy::default())[0].rule, Rule::OutputSchema);
        assert_eq!(
            rules(json!({"name": "t", "inputSchema": {"type": "object"}, "outputSchema": {"type": 5}})),
            vec![(Rule::OutputSchema, Weight::Must)]
        );
    }

    #[test]
    fn header_placement() {
        let ok = json!({"type": "object", "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "n": {"type": "integer", "x-mcp-header": "N"},
            "flag": {"type": ["boolean", "null"], "x-mcp-header": "Flag"},
            "opt": {"anyOf": [{"type": "integer"}, {"type": "null"}], "default": null, "x-mcp-header": "Opt"},
            "filter": {"type": "object", "properties": {"kind": {"type": "string", "x-mcp-header": "Kind"}}}}});
        let w = header_walk(&ok);
        assert!(w.problems.is_empty(), "{:?}", w.problems);
        assert_eq!(w.headers.iter().map(|h| h.pointer.as_str()).collect::<Vec<_>>(), ["/region", "/n", "/flag", "/opt", "/filter/kind"]);
        let bad = [
            json!({"type": "object", "properties": {"a": {"type": "array", "items": {"type": "string", "x-mcp-header": "A"}}}}),
            json!({"type": "object", "properties": {"a": {"anyOf": [{"type": "string", "x-mcp-header": "A"}]}}}),
            json!({"type": "object", "oneOf": [{"properties": {"a": {"type": "string", "x-mcp-header": "A"}}}]}),
            json!({"type": "object", "allOf": [{"properties": {"a": {"type": "string", "x-mcp-header": "A"}}}]}),
            json!({"type": "object", "not": {"properties": {"a": {"type": "string", "x-mcp-header": "A"}}}}),
            json!({"type": "object", "if": {"properties": {"a": {"type": "string", "x-mcp-header": "A"}}}}),
            json!({"type": "object", "then": {"properties": {"a": {"type": "string", "x-mcp-header": "A"}}}}),
            json!({"type": "object", "else": {"properties": {"a": {"type": "string", "x-mcp-header": "A"}}}}),
            json!({"type": "object", "properties": {"a": {"$ref": "#/$defs/A"}}, "$defs": {"A": {"type": "string", "x-mcp-header": "A"}}}),
            json!({"type": "object", "additionalProperties": {"type": "string", "x-mcp-header": "A"}}),
            json!({"type": "object", "properties": {"a": {"type": "number", "x-mcp-header": "A"}}}),
            json!({"type": "object", "properties": {"a": {"type": "object", "x-mcp-header": "A"}}}),
            json!({"type": "object", "properties": {"a": {"x-mcp-header": "A"}}}),
            json!({"type": "object", "properties": {"a": {"anyOf": [{"type": "number"}, {"type": "null"}], "x-mcp-header": "A"}}}),
            json!({"type": "object", "properties": {"a": {"anyOf": [{"type": "string"}, {"type": "integer"}], "x-mcp-header": "A"}}}),
            json!({"type": "object", "properties": {"a": {"type": "string", "x-mcp-header": ""}}}),
            json!({"type": "object", "properties": {"a": {"type": "string", "x-mcp-header": "Has Space"}}}),
            json!({"type": "object", "properties": {"a": {"type": "string", "x-mcp-header": "A\r\nX"}}}),
            json!({"type": "object", "properties": {"a": {"type": "string", "x-mcp-header": 7}}}),
            json!({"type": "object", "properties": {"a": {"type": "string", "x-mcp-header": "Dup"}, "b": {"type": "string", "x-mcp-header": "dUP"}}}),
            json!({"type": "object", "x-mcp-header": "Root"}),
        ];
        for s in bad {
            let w = header_walk(&s);
            assert_eq!(w.problems.len(), 1, "{s}: {:?}", w.problems);
            assert_eq!(rules(with_input(s.clone())).iter().filter(|r| r.0 == Rule::XMcpHeader).count(), 1, "{s}");
        }
        let out = json!({"name": "t", "inputSchema": {"type": "object"}, "outputSchema": {"type": "object", "properties": {"a": {"type": "string", "x-mcp-header": "A"}}}});
        assert_eq!(rules(out), vec![(Rule::XMcpHeader, Weight::Must)]);
        // 2025-11-25 has no x-mcp-header rule.
        let legacy = json!({"name": "t", "inputSchema": {"type": "object", "properties": {"a": {"type": "number", "x-mcp-header": "A"}}}});
        assert!(admit_tool(&legacy, Revision::R2025_11_25, &Policy::default()).is_empty());
    }

    #[test]
    fn secret_headers_are_a_policy_rejection() {
        for (prop, hdr) in [("api_key", "Key"), ("apiKey", "K"), ("password", "P"), ("x", "Authorization"), ("access_token", "T")] {
            let s = json!({"type": "object", "properties": {prop: {"type": "string", "x-mcp-header": hdr}}});
            assert_eq!(rules(with_input(s)), vec![(Rule::XMcpHeaderSecret, Weight::Policy)], "{prop}/{hdr}");
        }
        let s = json!({"type": "object", "properties": {"region": {"type": "string", "x-mcp-header": "Region"}}});
        assert!(rules(with_input(s.clone())).is_empty());
        let strict = Policy { secret_names: vec!["region".into()] };
        assert_eq!(admit_tool(&with_input(s), Revision::R2026_07_28, &strict).len(), 1);
    }

    #[test]
    fn annotations_types() {
        let t = json!({"name": "t", "inputSchema": {"type": "object"}, "annotations": {"readOnlyHint": "yes", "title": 3}});
        assert_eq!(rules(t), vec![(Rule::Annotations, Weight::Must), (Rule::Annotations, Weight::Must)]);
        let t = json!({"name": "t", "inputSchema": {"type": "object"}, "annotations": {"readOnlyHint": true, "destructiveHint": false, "idempotentHint": true, "openWorldHint": false, "title": "T"}});
        assert!(rules(t).is_empty());
    }

    #[test]
    fn lint_input_forms() {
        let t = r#"{"name":"a","inputSchema":{"type":"object"}}"#;
        assert_eq!(tools_from_documents(&format!("[{t}]")).unwrap().len(), 1);
        assert_eq!(tools_from_documents(&format!(r#"{{"tools":[{t},{t}]}}"#)).unwrap().len(), 2);
        let pages = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{{\"tools\":[{t}],\"nextCursor\":\"\"}}}}\n{{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{{\"tools\":[{t}]}}}}\n"
        );
        assert_eq!(tools_from_documents(&pages).unwrap().len(), 2);
        assert!(tools_from_documents("{\"x\":1}").is_err());
        assert!(tools_from_documents("").is_err());
        assert!(tools_from_documents("{").is_err());
    }
}
