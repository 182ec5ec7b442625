//! Arguments for tool calls: made from an `inputSchema` (valid ones, and
//! ones that break it), and the `Mcp-Param-*` headers a call carries.

use super::{admission, egress};
use crate::wire::headerval;
use serde_json::{Map, Value, json};

/// `Mcp-Param-{Name}` headers for a call, from the tool's well-placed
/// `x-mcp-header` annotations and the argument values (absent or null
/// values get no header; numbers outside the safe range are left out).
pub fn param_headers(schema: &Value, args: &Value) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for h in admission::header_walk(schema).headers {
        let Some(v) = args.pointer(&h.pointer) else { continue };
        let text = match v {
            Value::String(s) => headerval::encode_str(s),
            Value::Bool(b) => headerval::encode_bool(*b).to_string(),
            Value::Number(n) => match n.as_i64().map(headerval::encode_int) {
                Some(Ok(s)) => s,
                _ => continue,
            },
            _ => continue,
        };
        out.push((format!("Mcp-Param-{}", h.value), text));
    }
    out
}

/// A minimal argument object that satisfies the inputSchema: required
/// properties only, each with the simplest value its schema allows.
/// Checked against the schema; None when no such object is found.
///
/// Nothing in it can make a server reach a host outside the test
/// (`egress`): strings for properties that name a URL, host or email are
/// made on `.invalid` names, paths lie in the scratch folder, and a
/// `const`, `enum`, `default` or example that names a real host is passed
/// over (None when the schema admits only such values).
pub fn synth_valid(schema: &Value) -> Option<Value> {
    let v = synth(schema, schema, 0, "")?;
    let validator = jsonschema::options().build(schema).ok()?;
    (validator.is_valid(&v) && egress::is_contained(&v)).then_some(v)
}

fn synth(s: &Value, root: &Value, depth: usize, name: &str) -> Option<Value> {
    if depth > 16 {
        return None;
    }
    let m = match s {
        Value::Bool(true) => return Some(json!({})),
        Value::Object(m) => m,
        _ => return None,
    };
    if let Some(c) = m.get("const") {
        return egress::is_contained(c).then(|| c.clone());
    }
    if let Some(e) = m.get("enum").and_then(|e| e.as_array()) {
        return e.iter().find(|x| egress::is_contained(x)).cloned();
    }
    if let Some(d) = m.get("default").filter(|d| egress::is_contained(d)) {
        return Some(d.clone());
    }
    if let Some(e) = m.get("examples").and_then(|e| e.as_array()).and_then(|a| a.iter().find(|x| egress::is_contained(x))) {
        return Some(e.clone());
    }
    if let Some(r) = m.get("$ref").and_then(|r| r.as_str()) {
        let target = r.strip_prefix('#').and_then(|p| root.pointer(p))?;
        return synth(target, root, depth + 1, name);
    }
    for k in ["anyOf", "oneOf"] {
        if let Some(list) = m.get(k).and_then(|l| l.as_array()) {
            return list.iter().find_map(|x| synth(x, root, depth + 1, name));
        }
    }
    let ty = match m.get("type") {
        Some(Value::String(t)) => t.clone(),
        Some(Value::Array(a)) => a.iter().filter_map(|x| x.as_str()).find(|t| *t != "null").unwrap_or("null").to_string(),
        _ if m.contains_key("properties") => "object".into(),
        _ => return None,
    };
    Some(match ty.as_str() {
        "object" => {
            let mut o = Map::new();
            let props = m.get("properties").and_then(|p| p.as_object());
            for r in m.get("required").and_then(|r| r.as_array()).into_iter().flatten() {
                let name = r.as_str()?;
                let sub = props.and_then(|p| p.get(name)).cloned().unwrap_or(json!({"type": "string"}));
                o.insert(name.to_string(), synth(&sub, root, depth + 1, name)?);
            }
            Value::Object(o)
        }
        "string" => {
            let min = m.get("minLength").and_then(|x| x.as_u64()).unwrap_or(0) as usize;
            let format = m.get("format").and_then(|f| f.as_str());
            Value::String(match format {
                Some("date-time") => "2026-01-01T00:00:00Z".to_string(),
                Some("date") => "2026-01-01".to_string(),
                _ => egress::string_for(egress::hint(name, format), min),
            })
        }
        "integer" | "number" => {
            let lo = m
                .get("minimum")
                .and_then(|x| x.as_f64())
                .or_else(|| m.get("exclusiveMinimum").and_then(|x| x.as_f64()).map(|x| x.floor() + 1.0));
            let hi = m.get("maximum").and_then(|x| x.as_f64());
            let mut v = lo.unwrap_or(1.0);
            if let Some(h) = hi
                && v > h
            {
                v = h;
            }
            json!(v.ceil() as i64)
        }
        "boolean" => Value::Bool(false),
        "array" => {
            let n = m.get("minItems").and_then(|x| x.as_u64()).unwrap_or(0) as usize;
            let item = m.get("items").cloned().unwrap_or(json!({"type": "string"}));
            let mut a = Vec::new();
            for _ in 0..n {
                a.push(synth(&item, root, depth + 1, name)?);
            }
            Value::Array(a)
        }
        "null" => Value::Null,
        _ => return None,
    })
}

/// Arguments that break the inputSchema, derived from valid ones: a
/// required property left out, or else a typed property given a value of
/// another type. Checked to be invalid; None when neither works.
pub fn synth_invalid(schema: &Value, valid: &Value) -> Option<Value> {
    let validator = jsonschema::options().build(schema).ok()?;
    let obj = valid.as_object()?;
    if let Some(first) = schema.get("required").and_then(|r| r.as_array()).and_then(|r| r.first()).and_then(|r| r.as_str()) {
        let mut o = obj.clone();
        o.remove(first);
        let v = Value::Object(o);
        if !validator.is_valid(&v) {
            return Some(v);
        }
    }
    for (name, sub) in schema.get("properties").and_then(|p| p.as_object()).into_iter().flatten() {
        let wrong = match sub.get("type").and_then(|t| t.as_str()) {
            Some("string") => json!(12345),
            Some("integer") | Some("number") | Some("boolean") => json!("mcpcert-wrong-type"),
            Some("object") | Some("array") => json!("mcpcert-wrong-type"),
            _ => continue,
        };
        let mut o = obj.clone();
        o.insert(name.clone(), wrong);
        let v = Value::Object(o);
        if !validator.is_valid(&v) {
            return Some(v);
        }
    }
    None
}

pub fn set_pointer(v: &mut Value, pointer: &str, value: Value) {
    let parts: Vec<String> = pointer.split('/').skip(1).map(|p| p.replace("~1", "/").replace("~0", "~")).collect();
    let mut cur = v;
    for (i, p) in parts.iter().enumerate() {
        if !cur.is_object() {
            *cur = json!({});
        }
        let m = cur.as_object_mut().expect("object");
        if i + 1 == parts.len() {
            m.insert(p.clone(), value);
            return;
        }
        cur = m.entry(p.clone()).or_insert_with(|| json!({}));
    }
}

pub fn remove_pointer(v: &mut Value, pointer: &str) {
    let (parent, last) = match pointer.rsplit_once('/') {
        Some(x) => x,
        None => return,
    };
    let target = if parent.is_empty() { Some(v) } else { v.pointer_mut(parent) };
    if let Some(Value::Object(m)) = target {
        m.remove(&last.replace("~1", "/").replace("~0", "~"));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn valid_arguments_are_minimal_and_valid() {
        let s = json!({"type": "object", "properties": {"a": {"type": "integer", "minimum": 3}, "b": {"type": "string", "minLength": 10}, "c": {"type": "boolean"},
            "d": {"enum": ["x", "y"]}, "e": {"$ref": "#/$defs/E"}, "opt": {"type": "string"}}, "required": ["a", "b", "c", "d", "e"],
            "$defs": {"E": {"type": "array", "minItems": 1, "items": {"type": "number"}}}});
        let v = synth_valid(&s).unwrap();
        assert_eq!(v, json!({"a": 3, "b": "mcpcertxxx", "c": false, "d": "x", "e": [1]}));
        assert_eq!(synth_valid(&json!({"type": "object"})).unwrap(), json!({}));
        assert!(
            synth_valid(&json!({"type": "object", "properties": {"p": {"type": "string", "pattern": "^[0-9]+$"}}, "required": ["p"]}))
                .is_none()
        );
    }

    #[test]
    fn made_up_arguments_name_no_real_host() {
        let s = json!({"type": "object", "required": ["page", "mirror", "contact", "file", "kind", "site"],
            "properties": {
                "page": {"type": "string", "format": "uri", "default": "https://example.com/"},
                "mirror": {"type": "string", "examples": ["docs.python.org", "mirror.mcpcert.invalid"]},
                "contact": {"type": "string", "format": "email"},
                "file": {"type": "string"},
                "kind": {"enum": ["https://api.example.com", "local"]},
                "site": {"type": "string", "minLength": 30}}});
        let v = synth_valid(&s).unwrap();
        assert_eq!(v["page"], json!(egress::URL), "a real default is passed over");
        assert_eq!(v["mirror"], json!("mirror.mcpcert.invalid"), "the first example that cannot resolve");
        assert_eq!(v["contact"], json!(egress::EMAIL));
        assert!(v["file"].as_str().unwrap().starts_with(egress::scratch_dir().to_str().unwrap()));
        assert_eq!(v["kind"], json!("local"));
        assert!(egress::is_contained(&v), "{v}");
        let only_real = json!({"type": "object", "required": ["u"], "properties": {"u": {"const": "https://example.com"}}});
        assert_eq!(synth_valid(&only_real), None, "a schema that admits only a real host gets no arguments");
    }

    #[test]
    fn invalid_arguments_break_the_schema() {
        let s = json!({"type": "object", "properties": {"q": {"type": "integer"}}, "required": ["q"]});
        assert_eq!(synth_invalid(&s, &json!({"q": 1})).unwrap(), json!({}));
        let s = json!({"type": "object", "properties": {"q": {"type": "integer"}}});
        assert_eq!(synth_invalid(&s, &json!({})).unwrap(), json!({"q": "mcpcert-wrong-type"}));
        assert!(synth_invalid(&json!({"type": "object"}), &json!({})).is_none());
    }

    #[test]
    fn param_headers_follow_annotations() {
        let s = json!({"type": "object", "properties": {"region": {"type": "string", "x-mcp-header": "Region"}, "days": {"type": "integer", "x-mcp-header": "Days"},
            "f": {"type": "boolean", "x-mcp-header": "F"}, "n": {"type": "string", "x-mcp-header": "N"}}});
        let h = param_headers(&s, &json!({"region": "Zürich", "days": 3, "f": true, "n": null}));
        assert_eq!(
            h,
            vec![
                ("Mcp-Param-Region".to_string(), headerval::encode_str("Zürich")),
                ("Mcp-Param-Days".into(), "3".into()),
                ("Mcp-Param-F".into(), "true".into())
            ]
        );
    }

    #[test]
    fn pointers() {
        let mut v = json!({"a": 1});
        set_pointer(&mut v, "/f/kind", json!("x"));
        assert_eq!(v, json!({"a": 1, "f": {"kind": "x"}}));
        remove_pointer(&mut v, "/f/kind");
        remove_pointer(&mut v, "/a");
        assert_eq!(v, json!({"f": {}}));
    }
}
