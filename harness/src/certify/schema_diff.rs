//! Whether a JSON Schema accepts less or more than it did: compared on the
//! keywords whose meaning can be compared without a solver (`type`,
//! `required`, `enum`, `const`, `properties`, `additionalProperties`,
//! `items`, numeric, length and count bounds). Any other keyword that
//! changed is reported as changed, not classified — never guessed.

use serde_json::{Map, Value};

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Direction {
    /// The new schema rejects something the old one accepted.
    Narrower,
    /// The new schema accepts something the old one rejected.
    Wider,
    /// Changed in a way mcpcert does not compare.
    Unclassified,
}

#[derive(Debug, Clone, PartialEq)]
pub struct SchemaChange {
    /// JSON pointer into the schema.
    pub at: String,
    pub direction: Direction,
    pub what: String,
}

/// Keywords that carry no constraint; changes to them are ignored.
/// (`x-mcp-header` is judged by the contract diff itself.)
const ANNOTATIONS: &[&str] =
    &["title", "description", "examples", "default", "$comment", "deprecated", "readOnly", "writeOnly", "$id", "$schema", "x-mcp-header"];

/// Keywords compared here.
const COMPARED: &[&str] = &[
    "type",
    "required",
    "enum",
    "const",
    "properties",
    "additionalProperties",
    "items",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "minLength",
    "maxLength",
    "minItems",
    "maxItems",
    "minProperties",
    "maxProperties",
];

/// How a property newly described on an open object is named.
pub const NEW_PROPERTY: &str = "new property described";

/// The changes from `old` to `new`.
pub fn compare(old: &Value, new: &Value) -> Vec<SchemaChange> {
    let mut out = Vec::new();
    walk(old, new, "", &mut out);
    out
}

fn push(out: &mut Vec<SchemaChange>, at: &str, direction: Direction, what: String) {
    out.push(SchemaChange { at: if at.is_empty() { "/".into() } else { at.into() }, direction, what });
}

fn walk(old: &Value, new: &Value, at: &str, out: &mut Vec<SchemaChange>) {
    if old == new {
        return;
    }
    // Boolean schemas: true accepts all, false nothing.
    match (old, new) {
        (Value::Bool(a), Value::Bool(b)) => {
            push(out, at, if *a { Direction::Narrower } else { Direction::Wider }, format!("schema {a} became {b}"));
            return;
        }
        (Value::Bool(true), Value::Object(_)) => {
            push(out, at, Direction::Narrower, "an unconstrained schema became a constrained one".into());
            return;
        }
        (Value::Object(_), Value::Bool(true)) => {
            push(out, at, Direction::Wider, "a constrained schema became unconstrained (true)".into());
            return;
        }
        (Value::Bool(false), Value::Object(_)) => {
            push(out, at, Direction::Wider, "a schema that accepted nothing now accepts something".into());
            return;
        }
        (Value::Object(_), Value::Bool(false)) => {
            push(out, at, Direction::Narrower, "the schema now accepts nothing (false)".into());
            return;
        }
        _ => {}
    }
    let (Some(o), Some(n)) = (old.as_object(), new.as_object()) else {
        push(out, at, Direction::Unclassified, "not a schema object".into());
        return;
    };
    types(o, n, at, out);
    required(o, n, at, out);
    values(o, n, at, out);
    properties(o, n, at, out);
    additional(o, n, at, out);
    match (o.get("items"), n.get("items")) {
        (Some(a), Some(b)) => walk(a, b, &format!("{at}/items"), out),
        (None, Some(_)) => push(out, &format!("{at}/items"), Direction::Narrower, "array items are now constrained".into()),
        (Some(_), None) => push(out, &format!("{at}/items"), Direction::Wider, "array items are no longer constrained".into()),
        (None, None) => {}
    }
    for (kw, lower) in [
        ("minimum", true),
        ("exclusiveMinimum", true),
        ("minLength", true),
        ("minItems", true),
        ("minProperties", true),
        ("maximum", false),
        ("exclusiveMaximum", false),
        ("maxLength", false),
        ("maxItems", false),
        ("maxProperties", false),
    ] {
        bound(o, n, kw, lower, at, out);
    }
    // Anything else that changed.
    let mut keys: Vec<&String> = o.keys().chain(n.keys()).collect();
    keys.sort();
    keys.dedup();
    for k in keys {
        if COMPARED.contains(&k.as_str()) || ANNOTATIONS.contains(&k.as_str()) {
            continue;
        }
        if o.get(k) != n.get(k) {
            let what = match (o.get(k), n.get(k)) {
                (None, Some(_)) => format!("`{k}` added"),
                (Some(_), None) => format!("`{k}` removed"),
                _ => format!("`{k}` changed"),
            };
            push(out, &format!("{at}/{k}"), Direction::Unclassified, format!("{what}, not classified"));
        }
    }
}

/// The set of JSON types a schema allows (None: any).
fn type_set(m: &Map<String, Value>) -> Option<Vec<String>> {
    match m.get("type") {
        Some(Value::String(t)) => Some(vec![t.clone()]),
        Some(Value::Array(a)) => Some(a.iter().filter_map(|t| t.as_str().map(str::to_string)).collect()),
        _ => None,
    }
}

/// Whether type `t` is allowed by the set (integer is inside number).
fn allows(set: &[String], t: &str) -> bool {
    set.iter().any(|s| s == t || (s == "number" && t == "integer"))
}

fn types(o: &Map<String, Value>, n: &Map<String, Value>, at: &str, out: &mut Vec<SchemaChange>) {
    let at = format!("{at}/type");
    match (type_set(o), type_set(n)) {
        (None, None) => {}
        (None, Some(b)) => push(out, &at, Direction::Narrower, format!("now only {}", b.join(" or "))),
        (Some(a), None) => push(out, &at, Direction::Wider, format!("was only {}, now any type", a.join(" or "))),
        (Some(a), Some(b)) => {
            let lost: Vec<&String> = a.iter().filter(|t| !allows(&b, t)).collect();
            let gained: Vec<&String> = b.iter().filter(|t| !allows(&a, t)).collect();
            if !lost.is_empty() {
                push(out, &at, Direction::Narrower, format!("{} no longer accepted (type {} → {})", list(&lost), a.join("|"), b.join("|")));
            }
            if !gained.is_empty() {
                push(out, &at, Direction::Wider, format!("{} now accepted (type {} → {})", list(&gained), a.join("|"), b.join("|")));
            }
        }
    }
}

fn list(v: &[&String]) -> String {
    v.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(", ")
}

fn names(m: &Map<String, Value>, kw: &str) -> Vec<String> {
    m.get(kw).and_then(|r| r.as_array()).map(|a| a.iter().filter_map(|s| s.as_str().map(str::to_string)).collect()).unwrap_or_default()
}

fn required(o: &Map<String, Value>, n: &Map<String, Value>, at: &str, out: &mut Vec<SchemaChange>) {
    let (a, b) = (names(o, "required"), names(n, "required"));
    for r in b.iter().filter(|r| !a.contains(r)) {
        push(out, &format!("{at}/required"), Direction::Narrower, format!("`{r}` is now required"));
    }
    for r in a.iter().filter(|r| !b.contains(r)) {
        push(out, &format!("{at}/required"), Direction::Wider, format!("`{r}` is no longer required"));
    }
}

/// The values allowed by `enum`/`const` (None: not restricted).
fn allowed_values(m: &Map<String, Value>) -> Option<Vec<Value>> {
    let e = m.get("enum").and_then(|e| e.as_array()).cloned();
    match (m.get("const"), e) {
        (Some(c), Some(e)) => Some(e.into_iter().filter(|v| v == c).collect()),
        (Some(c), None) => Some(vec![c.clone()]),
        (None, e) => e,
    }
}

fn values(o: &Map<String, Value>, n: &Map<String, Value>, at: &str, out: &mut Vec<SchemaChange>) {
    let at = format!("{at}/enum");
    match (allowed_values(o), allowed_values(n)) {
        (None, None) => {}
        (None, Some(b)) => push(out, &at, Direction::Narrower, format!("now restricted to {}", Value::Array(b))),
        (Some(a), None) => push(out, &at, Direction::Wider, format!("no longer restricted to {}", Value::Array(a))),
        (Some(a), Some(b)) => {
            let lost: Vec<Value> = a.iter().filter(|v| !b.contains(v)).cloned().collect();
            let gained: Vec<Value> = b.iter().filter(|v| !a.contains(v)).cloned().collect();
            if !lost.is_empty() {
                push(out, &at, Direction::Narrower, format!("{} no longer allowed", Value::Array(lost)));
            }
            if !gained.is_empty() {
                push(out, &at, Direction::Wider, format!("{} now allowed", Value::Array(gained)));
            }
        }
    }
}

/// Whether the object admits properties it does not name.
fn open(m: &Map<String, Value>) -> bool {
    !matches!(m.get("additionalProperties"), Some(Value::Bool(false)))
}

fn properties(o: &Map<String, Value>, n: &Map<String, Value>, at: &str, out: &mut Vec<SchemaChange>) {
    let empty = Map::new();
    let po = o.get("properties").and_then(|p| p.as_object()).unwrap_or(&empty);
    let pn = n.get("properties").and_then(|p| p.as_object()).unwrap_or(&empty);
    for (name, a) in po {
        let here = format!("{at}/properties/{}", escape(name));
        match pn.get(name) {
            Some(b) => walk(a, b, &here, out),
            // Its values now fall to additionalProperties.
            None if open(n) && n.get("additionalProperties").is_none_or(|x| x == &Value::Bool(true)) => {
                push(out, &here, Direction::Wider, format!("property `{name}` is no longer described (any value now accepted)"))
            }
            None if open(n) => {
                push(out, &here, Direction::Unclassified, format!("property `{name}` now falls to additionalProperties, not classified"))
            }
            None => push(
                out,
                &here,
                Direction::Narrower,
                format!("property `{name}` removed (additionalProperties is false: it is now rejected)"),
            ),
        }
    }
    for name in pn.keys().filter(|k| !po.contains_key(*k)) {
        let here = format!("{at}/properties/{}", escape(name));
        // On an open object a new property narrows what it may hold (the old
        // schema left it free); the contract diff knows that a client of
        // an input schema never sent it (a new required one is reported
        // under `required`).
        if open(o) {
            push(out, &here, Direction::Narrower, format!("{NEW_PROPERTY} `{name}`"));
        } else {
            push(out, &here, Direction::Wider, format!("property `{name}` added (additionalProperties was false)"));
        }
    }
}

fn additional(o: &Map<String, Value>, n: &Map<String, Value>, at: &str, out: &mut Vec<SchemaChange>) {
    let here = format!("{at}/additionalProperties");
    let t = Value::Bool(true);
    let a = o.get("additionalProperties").unwrap_or(&t);
    let b = n.get("additionalProperties").unwrap_or(&t);
    walk(a, b, &here, out);
}

fn bound(o: &Map<String, Value>, n: &Map<String, Value>, kw: &str, lower: bool, at: &str, out: &mut Vec<SchemaChange>) {
    let here = format!("{at}/{kw}");
    // draft-04 booleans for exclusive bounds are not compared.
    let num = |v: Option<&Value>| v.and_then(|v| v.as_f64());
    match (o.get(kw), n.get(kw)) {
        (None, None) => {}
        (Some(a), Some(b)) if a == b => {}
        (a, b) => match (num(a), num(b)) {
            (None, Some(y)) if b.is_some() => push(out, &here, Direction::Narrower, format!("`{kw}` {y} added")),
            (Some(x), None) if b.is_none() => push(out, &here, Direction::Wider, format!("`{kw}` {x} removed")),
            (Some(x), Some(y)) => {
                let tighter = if lower { y > x } else { y < x };
                push(out, &here, if tighter { Direction::Narrower } else { Direction::Wider }, format!("`{kw}` {x} → {y}"));
            }
            _ => push(out, &here, Direction::Unclassified, format!("`{kw}` changed, not classified")),
        },
    }
}

fn escape(name: &str) -> String {
    name.replace('~', "~0").replace('/', "~1")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn dirs(old: Value, new: Value) -> Vec<Direction> {
        compare(&old, &new).into_iter().map(|c| c.direction).collect()
    }

    #[test]
    fn each_keyword_in_both_directions() {
        use Direction::*;
        let base = json!({"type": "object", "properties": {"q": {"type": "string"}}});
        assert_eq!(dirs(base.clone(), base.clone()), Vec::<Direction>::new());
        assert_eq!(dirs(json!({"type": "number"}), json!({"type": "integer"})), [Narrower]);
        assert_eq!(dirs(json!({"type": "integer"}), json!({"type": "number"})), [Wider]);
        assert_eq!(dirs(json!({"type": "string"}), json!({"type": ["string", "null"]})), [Wider]);
        assert_eq!(dirs(json!({"type": "string"}), json!({"type": "boolean"})), [Narrower, Wider]);
        assert_eq!(dirs(json!({"required": ["a"]}), json!({"required": ["a", "b"]})), [Narrower]);
        assert_eq!(dirs(json!({"required": ["a", "b"]}), json!({"required": ["a"]})), [Wider]);
        assert_eq!(dirs(json!({"enum": ["x", "y"]}), json!({"enum": ["x"]})), [Narrower]);
        assert_eq!(dirs(json!({"enum": ["x"]}), json!({"enum": ["x", "y"]})), [Wider]);
        assert_eq!(dirs(json!({}), json!({"const": 1})), [Narrower]);
        assert_eq!(dirs(json!({"maximum": 100}), json!({"maximum": 50})), [Narrower]);
        assert_eq!(dirs(json!({"maximum": 50}), json!({"maximum": 100})), [Wider]);
        assert_eq!(dirs(json!({"minLength": 1}), json!({})), [Wider]);
        assert_eq!(dirs(json!({}), json!({"minItems": 2})), [Narrower]);
        assert_eq!(dirs(json!({"additionalProperties": true}), json!({"additionalProperties": false})), [Narrower]);
        assert_eq!(dirs(json!({"additionalProperties": false}), json!({})), [Wider]);
        assert_eq!(dirs(json!({"items": {"type": "number"}}), json!({"items": {"type": "integer"}})), [Narrower]);
        // Nested: a property's own bounds.
        let c = compare(
            &json!({"properties": {"limit": {"type": "integer", "maximum": 100}}}),
            &json!({"properties": {"limit": {"type": "integer", "maximum": 10}}}),
        );
        assert_eq!(c.len(), 1);
        assert_eq!(c[0].at, "/properties/limit/maximum");
        assert_eq!(c[0].direction, Narrower);
    }

    #[test]
    fn properties_depend_on_additional_properties() {
        use Direction::*;
        let closed = |p: Value| json!({"type": "object", "properties": p, "additionalProperties": false});
        let open = |p: Value| json!({"type": "object", "properties": p});
        assert_eq!(dirs(closed(json!({"a": {}})), closed(json!({"a": {}, "b": {}}))), [Wider]);
        assert_eq!(dirs(closed(json!({"a": {}, "b": {}})), closed(json!({"a": {}}))), [Narrower]);
        assert_eq!(dirs(open(json!({"a": {}})), open(json!({"a": {}, "b": {"type": "string"}}))), [Narrower]);
        assert_eq!(dirs(open(json!({"a": {}, "b": {"type": "string"}})), open(json!({"a": {}}))), [Wider]);
    }

    #[test]
    fn what_cannot_be_compared_is_said_so_and_annotations_are_ignored() {
        use Direction::*;
        assert_eq!(dirs(json!({"pattern": "^a"}), json!({"pattern": "^b"})), [Unclassified]);
        assert_eq!(dirs(json!({"anyOf": [{}]}), json!({"anyOf": [{}, {"type": "null"}]})), [Unclassified]);
        assert_eq!(dirs(json!({"description": "old"}), json!({"description": "new", "title": "T"})), Vec::<Direction>::new());
    }
}
