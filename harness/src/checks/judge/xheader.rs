//! The `x-mcp-header` tree walk (2026-07-28): where in a tool's
//! `inputSchema` the annotation may stand (reached through `properties`
//! alone, on a primitive property) and whether its value is a usable
//! header-name token.

use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// One `x-mcp-header` that is placed where it may be.
#[derive(Debug, Clone)]
pub struct HeaderParam {
    /// Property path from the root, e.g. `/region` or `/filter/kind`.
    pub pointer: String,
    /// The last property name.
    pub property: String,
    /// The annotation value (the `{Name}` of `Mcp-Param-{Name}`).
    pub value: String,
    /// `string`, `integer` or `boolean`.
    pub ty: String,
}

#[derive(Debug, Default)]
pub struct HeaderWalk {
    pub headers: Vec<HeaderParam>,
    pub problems: Vec<String>,
}

/// Keywords whose values are (maps of, arrays of) subschemas other than
/// `properties`. An annotation under any of them is misplaced.
const SUBSCHEMA_ONE: &[&str] = &[
    "items",
    "additionalProperties",
    "not",
    "if",
    "then",
    "else",
    "contains",
    "propertyNames",
    "unevaluatedProperties",
    "unevaluatedItems",
    "additionalItems",
];
const SUBSCHEMA_LIST: &[&str] = &["allOf", "anyOf", "oneOf", "prefixItems", "items"];
const SUBSCHEMA_MAP: &[&str] = &["$defs", "definitions", "patternProperties", "dependentSchemas", "dependencies"];

/// Walk the whole inputSchema: collect well-placed annotations and every
/// misplaced or malformed one.
pub fn header_walk(schema: &Value) -> HeaderWalk {
    let mut w = HeaderWalk::default();
    visit(schema, "", "", true, None, &mut w, 0);
    let mut seen: BTreeMap<String, String> = BTreeMap::new();
    for h in &w.headers {
        let key = h.value.to_ascii_lowercase();
        if let Some(first) = seen.get(&key) {
            w.problems.push(format!(
                "x-mcp-header {:?} at {} repeats the one at {first} (names must be unique, ignoring case)",
                h.value, h.pointer
            ));
        } else {
            seen.insert(key, h.pointer.clone());
        }
    }
    w
}

/// `via` names the keyword that made this node unreachable (None while
/// the chain from the root is `properties` alone).
fn visit(node: &Value, schema_path: &str, prop_path: &str, reachable: bool, via: Option<&str>, w: &mut HeaderWalk, depth: usize) {
    if depth > 200 {
        w.problems.push(format!("schema nesting deeper than 200 levels at {schema_path}; not walked further"));
        return;
    }
    let Some(m) = node.as_object() else { return };
    if let Some(v) = m.get("x-mcp-header") {
        let here = if schema_path.is_empty() { "the root".to_string() } else { schema_path.to_string() };
        if !reachable || prop_path.is_empty() {
            let why = match via {
                Some(k) => format!("it sits under `{k}`; only properties reached from the root through `properties` alone may carry it"),
                None => "the root schema itself cannot be mirrored; only its properties may".into(),
            };
            w.problems.push(format!("x-mcp-header {} at {here}: {why}", crate::wire::brief(v)));
        } else {
            match header_value_problem(v) {
                Some(p) => w.problems.push(format!("x-mcp-header at {here}: {p}")),
                None => match primitive_type(m) {
                    Ok(ty) => w.headers.push(HeaderParam {
                        pointer: prop_path.to_string(),
                        property: prop_path.rsplit('/').next().unwrap_or("").to_string(),
                        value: v.as_str().unwrap_or("").to_string(),
                        ty,
                    }),
                    Err(t) => w.problems.push(format!(
                        "x-mcp-header {} at {here}: the property is typed {t}; only integer, string or boolean may be mirrored",
                        crate::wire::brief(v)
                    )),
                },
            }
        }
    }
    for (k, v) in m {
        if k == "properties" {
            if let Some(props) = v.as_object() {
                for (name, sub) in props {
                    let sp = format!("{schema_path}/properties/{}", escape(name));
                    let pp = format!("{prop_path}/{}", escape(name));
                    visit(sub, &sp, &pp, reachable, via, w, depth + 1);
                }
            }
            continue;
        }
        if k == "$ref" {
            continue;
        }
        let sp = format!("{schema_path}/{}", escape(k));
        let via_here = Some(via.unwrap_or(k.as_str()));
        if SUBSCHEMA_LIST.contains(&k.as_str())
            && let Some(a) = v.as_array()
        {
            for (i, sub) in a.iter().enumerate() {
                visit(sub, &format!("{sp}/{i}"), prop_path, false, via_here, w, depth + 1);
            }
            continue;
        }
        if SUBSCHEMA_ONE.contains(&k.as_str()) {
            visit(v, &sp, prop_path, false, via_here, w, depth + 1);
        } else if SUBSCHEMA_MAP.contains(&k.as_str())
            && let Some(defs) = v.as_object()
        {
            for (name, sub) in defs {
                visit(sub, &format!("{sp}/{}", escape(name)), prop_path, false, via_here, w, depth + 1);
            }
        }
    }
}

fn escape(s: &str) -> String {
    s.replace('~', "~0").replace('/', "~1")
}

/// Why an annotation value is not a usable header-name suffix.
pub fn header_value_problem(v: &Value) -> Option<String> {
    let Some(s) = v.as_str() else {
        return Some(format!("the value must be a string; got {}", crate::wire::brief(v)));
    };
    if s.is_empty() {
        return Some("the value is empty".into());
    }
    let bad: Vec<String> = s.chars().filter(|c| !is_tchar(*c)).map(|c| format!("{c:?}")).collect();
    if !bad.is_empty() {
        return Some(format!("the value {s:?} is not an HTTP token (RFC 9110 tchar): it contains {}", bad.join(", ")));
    }
    None
}

fn is_tchar(c: char) -> bool {
    c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c)
}

/// The primitive type of an annotated property, or what it is instead.
/// A nullable primitive counts as that primitive, whether written
/// `"type": ["string", "null"]` or, as pydantic writes `Optional[str]`,
/// `"anyOf": [{"type": "string"}, {"type": "null"}]`: the spec expects
/// nullable mirrored parameters (a null value omits the header).
fn primitive_type(m: &Map<String, Value>) -> Result<String, String> {
    const OK: [&str; 3] = ["integer", "string", "boolean"];
    if !m.contains_key("type") {
        for k in ["anyOf", "oneOf"] {
            let Some(branches) = m.get(k).and_then(|b| b.as_array()) else { continue };
            let types: Vec<Option<&str>> = branches.iter().map(|b| b.get("type").and_then(|t| t.as_str())).collect();
            let non_null: Vec<&str> = types.iter().flatten().copied().filter(|t| *t != "null").collect();
            if types.iter().all(|t| t.is_some()) && non_null.len() == 1 && OK.contains(&non_null[0]) {
                return Ok(non_null[0].to_string());
            }
            return Err(format!("{k} {}", crate::wire::brief(&Value::Array(branches.clone()))));
        }
    }
    match m.get("type") {
        Some(Value::String(t)) if OK.contains(&t.as_str()) => Ok(t.clone()),
        Some(Value::Array(a)) => {
            let non_null: Vec<&str> = a.iter().filter_map(|x| x.as_str()).filter(|t| *t != "null").collect();
            if non_null.len() == 1 && OK.contains(&non_null[0]) {
                Ok(non_null[0].to_string())
            } else {
                Err(crate::wire::brief(&Value::Array(a.clone())))
            }
        }
        Some(other) => Err(crate::wire::brief(other)),
        None => Err("nothing (no `type`)".into()),
    }
}

/// Every JSON pointer (under `base`) where `key` appears as an object key.
pub(super) fn find_keyword(v: &Value, key: &str, base: &str) -> Vec<String> {
    let mut out = Vec::new();
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                let p = format!("{base}/{}", escape(k));
                if k == key {
                    out.push(if base.is_empty() { "the root".into() } else { base.to_string() });
                }
                out.extend(find_keyword(x, key, &p));
            }
        }
        Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                out.extend(find_keyword(x, key, &format!("{base}/{i}")));
            }
        }
        _ => {}
    }
    out
}
