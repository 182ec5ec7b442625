//! The project's own per-revision message schemas (harness/schemas/*.json)
//! and validation of every server-sent frame against them.

use serde::Serialize;
use serde_json::Value;
use std::collections::HashMap;
use std::sync::OnceLock;

use super::Revision;

/// Each revision's schema text, by revision.
const SCHEMA_TEXTS: [(Revision, &str); 5] = [
    (Revision::R2026_07_28, include_str!("../../schemas/2026-07-28.json")),
    (Revision::R2025_11_25, include_str!("../../schemas/2025-11-25.json")),
    (Revision::R2025_06_18, include_str!("../../schemas/2025-06-18.json")),
    (Revision::R2025_03_26, include_str!("../../schemas/2025-03-26.json")),
    (Revision::R2024_11_05, include_str!("../../schemas/2024-11-05.json")),
];

/// Each revision's schema is parsed when it is first asked for: a run of
/// one revision reads one of the five documents.
pub struct WireSchemas {
    revs: HashMap<Revision, (&'static str, OnceLock<Parsed>)>,
}

type Parsed = Result<RevSchema, String>;

/// One revision's schema: its message type names, known at once, and a
/// validator per message type, compiled the first time a frame of that type
/// is judged. A run judges a few dozen of the schema's types; compiling all
/// of them up front took about 10 ms, which the first frame judged waited for.
struct RevSchema {
    /// The schema's `$id` (or a name of mcpcert's own): each type's
    /// validator is a reference into it, so that references between types
    /// resolve.
    uri: String,
    /// Shared with the registry, not copied into it.
    doc: std::sync::Arc<Value>,
    defs: Vec<String>,
    /// The schema as a resource the validators refer into, prepared (once)
    /// when the first of them is compiled.
    registry: OnceLock<Result<jsonschema::Registry<'static>, String>>,
    compiled: HashMap<String, OnceLock<Result<jsonschema::Validator, String>>>,
}

impl RevSchema {
    fn new(rev: Revision, text: &str) -> Result<RevSchema, String> {
        let doc: Value = serde_json::from_str(text).map_err(|e| e.to_string())?;
        let uri = doc.get("$id").and_then(|i| i.as_str()).map(String::from).unwrap_or_else(|| format!("urn:mcpcert:wire-schema:{rev}"));
        let mut defs: Vec<String> = doc.get("$defs").and_then(|d| d.as_object()).map(|d| d.keys().cloned().collect()).unwrap_or_default();
        defs.sort();
        let compiled = defs.iter().map(|d| (d.clone(), OnceLock::new())).collect();
        Ok(RevSchema { uri, doc: std::sync::Arc::new(doc), defs, registry: OnceLock::new(), compiled })
    }

    /// The validator for message type `def`: None when the schema has no
    /// such type, an error when its schema does not compile.
    fn validator(&self, def: &str) -> Option<&Result<jsonschema::Validator, String>> {
        let cell = self.compiled.get(def)?;
        Some(cell.get_or_init(|| {
            let registry = self
                .registry
                .get_or_init(|| {
                    let draft = jsonschema::Draft::default().detect(&self.doc);
                    jsonschema::Registry::new()
                        .draft(draft)
                        .add(&self.uri, std::sync::Arc::clone(&self.doc))
                        .and_then(|b| b.prepare())
                        .map_err(|e| e.to_string())
                })
                .as_ref()
                .map_err(|e| e.clone())?;
            let root = serde_json::json!({ "$ref": format!("{}#/$defs/{def}", self.uri) });
            jsonschema::options().offline().with_registry(registry).build(&root).map_err(|e| e.to_string())
        }))
    }
}

/// One schema violation, named by message type and JSON path.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Violation {
    pub message_type: String,
    pub path: String,
    pub problem: String,
}

impl std::fmt::Display for Violation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let p = if self.path.is_empty() { "(root)" } else { &self.path };
        write!(f, "{} at {}: {}", self.message_type, p, self.problem)
    }
}

static SCHEMAS: OnceLock<WireSchemas> = OnceLock::new();

pub fn schemas() -> &'static WireSchemas {
    SCHEMAS.get_or_init(|| WireSchemas::load().expect("built-in wire schemas compile"))
}

impl WireSchemas {
    pub fn load() -> Result<WireSchemas, String> {
        Ok(WireSchemas { revs: SCHEMA_TEXTS.into_iter().map(|(rev, text)| (rev, (text, OnceLock::new()))).collect() })
    }

    /// Revision `rev`'s schema, parsed the first time. A built-in document
    /// that is not JSON is mcpcert's own defect (`compile_all`, in tests).
    fn rev(&self, rev: Revision) -> Option<&RevSchema> {
        let (text, cell) = self.revs.get(&rev)?;
        match cell.get_or_init(|| RevSchema::new(rev, text).map_err(|e| format!("schema {rev}: {e}"))) {
            Ok(r) => Some(r),
            Err(e) => panic!("built-in wire schema does not parse: {e}"),
        }
    }

    /// Compile every message type of every revision now (tests: a type
    /// whose schema does not compile is reported here instead of at the
    /// first frame of that type).
    pub fn compile_all(&self) -> Result<(), String> {
        for (rev, (text, _)) in &self.revs {
            let r = RevSchema::new(*rev, text).map_err(|e| format!("schema {rev}: {e}"))?;
            // Each type is compiled as a reference into the document, which
            // checks only the reference against the JSON Schema standard:
            // the document itself is checked here.
            jsonschema::meta::validate(&r.doc).map_err(|e| format!("schema {rev} is not a valid JSON Schema: {e}"))?;
            for def in &r.defs {
                if let Some(Err(e)) = r.validator(def) {
                    return Err(format!("schema {rev}, type {def}: {e}"));
                }
            }
        }
        Ok(())
    }

    pub fn has(&self, revision: Revision, def: &str) -> bool {
        self.rev(revision).is_some_and(|r| r.defs.binary_search_by(|d| d.as_str().cmp(def)).is_ok())
    }

    pub fn def_names(&self, revision: Revision) -> Vec<String> {
        self.rev(revision).map(|r| r.defs.clone()).unwrap_or_default()
    }

    /// Validate `value` as message type `def` of `revision`.
    pub fn validate(&self, revision: Revision, def: &str, value: &Value) -> Vec<Violation> {
        let v = match self.rev(revision).and_then(|r| r.validator(def)) {
            Some(Ok(v)) => v,
            Some(Err(e)) => {
                return vec![Violation {
                    message_type: def.into(),
                    path: String::new(),
                    problem: format!("mcpcert's schema for `{def}` in {revision} does not compile: {e}"),
                }];
            }
            None => {
                return vec![Violation {
                    message_type: def.into(),
                    path: String::new(),
                    problem: format!("mcpcert has no schema for `{def}` in {revision}"),
                }];
            }
        };
        let mut out: Vec<Violation> = v
            .iter_errors(value)
            .map(|e| Violation { message_type: def.to_string(), path: e.instance_path().to_string(), problem: e.to_string() })
            .collect();
        out.dedup();
        out
    }
}

/// Which message type a response to `method` must be, per revision.
pub fn result_type_for(revision: Revision, method: &str) -> &'static str {
    let modern = revision.is_stateless();
    match method {
        "server/discover" if modern => "DiscoverResultResponse",
        "initialize" if !modern => "InitializeResultResponse",
        "ping" if !modern => "EmptyResultResponse",
        "tools/list" => "ListToolsResultResponse",
        "tools/call" => "CallToolResultResponse",
        "prompts/list" => "ListPromptsResultResponse",
        "prompts/get" => "GetPromptResultResponse",
        "resources/list" => "ListResourcesResultResponse",
        "resources/templates/list" => "ListResourceTemplatesResultResponse",
        "resources/read" => "ReadResourceResultResponse",
        "completion/complete" => "CompleteResultResponse",
        "subscriptions/listen" if modern => "SubscriptionsListenResultResponse",
        _ => "JSONRPCResultResponse",
    }
}

/// Which message type a notification with `method` must be.
pub fn notification_type_for(revision: Revision, method: &str) -> &'static str {
    let modern = revision.is_stateless();
    match method {
        "notifications/tools/list_changed" => "ToolListChangedNotification",
        "notifications/progress" => "ProgressNotification",
        "notifications/message" => "LoggingMessageNotification",
        "notifications/prompts/list_changed" if modern => "PromptListChangedNotification",
        "notifications/resources/list_changed" if modern => "ResourceListChangedNotification",
        "notifications/resources/updated" if modern => "ResourceUpdatedNotification",
        "notifications/cancelled" if modern => "CancelledNotification",
        "notifications/subscriptions/acknowledged" if modern => "SubscriptionsAcknowledgedNotification",
        _ => "JSONRPCNotification",
    }
}

/// The message type(s) an error response must satisfy, by code.
pub fn error_types_for(revision: Revision, code: i64) -> Vec<&'static str> {
    let mut v = vec!["JSONRPCErrorResponse"];
    if revision.is_stateless() {
        match code {
            -32020 => v.push("HeaderMismatchError"),
            -32021 => v.push("MissingRequiredClientCapabilityError"),
            -32022 => v.push("UnsupportedProtocolVersionError"),
            _ => {}
        }
    }
    v
}

/// Validate one frame that arrived in answer to (or during) a request with
/// `method`. Returns the type it was checked as and the violations.
pub fn check_frame(revision: Revision, request_method: Option<&str>, frame: &Value) -> (String, Vec<Violation>) {
    let s = schemas();
    if frame.get("error").is_some() && frame.get("method").is_none() {
        let code = frame.pointer("/error/code").and_then(|c| c.as_i64()).unwrap_or(0);
        let types = error_types_for(revision, code);
        let mut all = Vec::new();
        for t in &types {
            all.extend(s.validate(revision, t, frame));
        }
        return (types.join("+"), all);
    }
    if frame.get("result").is_some() && frame.get("method").is_none() {
        let t = request_method.map(|m| result_type_for(revision, m)).unwrap_or("JSONRPCResultResponse");
        return (t.to_string(), s.validate(revision, t, frame));
    }
    if let Some(m) = frame.get("method").and_then(|m| m.as_str()) {
        if frame.get("id").is_some() {
            return (
                "JSONRPCRequest".into(),
                vec![Violation {
                    message_type: "JSONRPCRequest".into(),
                    path: String::new(),
                    problem: format!("the server sent a JSON-RPC request (`{m}`); servers must not send requests"),
                }],
            );
        }
        let t = notification_type_for(revision, m);
        return (t.to_string(), s.validate(revision, t, frame));
    }
    (
        "JSONRPCMessage".into(),
        vec![Violation { message_type: "JSONRPCMessage".into(), path: String::new(), problem: "not a JSON-RPC message".into() }],
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn schemas_compile_and_name_paths() {
        let s = schemas();
        s.compile_all().expect("both revisions' schemas compile");
        assert!(s.has(Revision::R2026_07_28, "DiscoverResult"));
        assert!(s.has(Revision::R2025_11_25, "InitializeResult"));
        let bad =
            json!({"resultType": "complete", "supportedVersions": ["2026-07-28"], "capabilities": {}, "ttlMs": -1, "cacheScope": "public"});
        let v = s.validate(Revision::R2026_07_28, "DiscoverResult", &bad);
        assert!(v.iter().any(|x| x.path == "/ttlMs"), "{v:?}");
    }

    #[test]
    fn null_id_error_is_a_violation() {
        let (_, v) = check_frame(
            Revision::R2026_07_28,
            Some("tools/list"),
            &json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32000, "message": "x"}}),
        );
        assert!(v.iter().any(|x| x.path == "/id"), "{v:?}");
    }

    #[test]
    fn server_request_is_flagged() {
        let (t, v) = check_frame(Revision::R2026_07_28, None, &json!({"jsonrpc": "2.0", "id": 1, "method": "roots/list"}));
        assert_eq!(t, "JSONRPCRequest");
        assert_eq!(v.len(), 1);
    }
}
