//! JSON-RPC envelopes and MCP request building per revision.

pub mod headerval;
pub mod schema;

use serde_json::{Map, Value, json};

pub const MODERN: &str = "2026-07-28";
pub const LEGACY: &str = "2025-11-25";
pub const REVISIONS: [&str; 2] = [MODERN, LEGACY];

pub const KEY_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
pub const KEY_CLIENT_CAPS: &str = "io.modelcontextprotocol/clientCapabilities";
pub const KEY_CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";
pub const KEY_SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";
pub const KEY_SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";

pub fn client_info() -> Value {
    json!({"name": "mcpcert", "version": env!("CARGO_PKG_VERSION")})
}

/// How the 2026-07-28 `_meta` envelope of a request is built. The variants
/// other than `Full` exist to probe the server's validation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize, serde::Serialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum MetaMode {
    #[default]
    Full,
    NoClientInfo,
    NoProtocolVersion,
    NoClientCapabilities,
    /// `params` has no `_meta` at all.
    NoMeta,
    /// The request has no `params` member.
    NoParams,
}

/// Build `params` for a modern request: the caller's params plus `_meta`.
pub fn modern_params(params: Option<&Value>, mode: MetaMode, version: &str) -> Option<Value> {
    if mode == MetaMode::NoParams {
        return None;
    }
    let mut p: Map<String, Value> = params.and_then(|v| v.as_object().cloned()).unwrap_or_default();
    if mode != MetaMode::NoMeta {
        let mut meta: Map<String, Value> = p.get("_meta").and_then(|m| m.as_object().cloned()).unwrap_or_default();
        if mode != MetaMode::NoProtocolVersion {
            meta.insert(KEY_VERSION.into(), json!(version));
        }
        if mode != MetaMode::NoClientCapabilities {
            meta.insert(KEY_CLIENT_CAPS.into(), json!({}));
        }
        if mode != MetaMode::NoClientInfo {
            meta.insert(KEY_CLIENT_INFO.into(), client_info());
        }
        p.insert("_meta".into(), Value::Object(meta));
    }
    Some(Value::Object(p))
}

pub fn request(id: &Value, method: &str, params: Option<Value>) -> Value {
    let mut m = Map::new();
    m.insert("jsonrpc".into(), json!("2.0"));
    m.insert("id".into(), id.clone());
    m.insert("method".into(), json!(method));
    if let Some(p) = params {
        m.insert("params".into(), p);
    }
    Value::Object(m)
}

pub fn notification(method: &str, params: Option<Value>) -> Value {
    let mut m = Map::new();
    m.insert("jsonrpc".into(), json!("2.0"));
    m.insert("method".into(), json!(method));
    if let Some(p) = params {
        m.insert("params".into(), p);
    }
    Value::Object(m)
}

pub fn initialize_params(version: &str) -> Value {
    json!({"protocolVersion": version, "capabilities": {}, "clientInfo": client_info()})
}

/// The standard 2026-07-28 HTTP headers that mirror a request body.
pub fn modern_headers(body: &Value) -> Vec<(String, String)> {
    let mut h = vec![
        ("Content-Type".to_string(), "application/json".to_string()),
        ("Accept".to_string(), "application/json, text/event-stream".to_string()),
    ];
    if let Some(v) = body.pointer("/params/_meta").and_then(|m| m.get(KEY_VERSION)).and_then(|v| v.as_str()) {
        h.push(("MCP-Protocol-Version".into(), v.to_string()));
    } else {
        h.push(("MCP-Protocol-Version".into(), MODERN.to_string()));
    }
    if let Some(m) = body.get("method").and_then(|m| m.as_str()) {
        if body.get("id").is_some() {
            h.push(("Mcp-Method".into(), m.to_string()));
        }
        let name = match m {
            "tools/call" | "prompts/get" => body.pointer("/params/name"),
            "resources/read" => body.pointer("/params/uri"),
            _ => None,
        };
        if let Some(Value::String(n)) = name {
            h.push(("Mcp-Name".into(), headerval::encode_str(n)));
        }
    }
    h
}

/// Headers for a 2025-11-25 request inside a session.
pub fn legacy_headers(session: Option<&str>, initialized: bool) -> Vec<(String, String)> {
    let mut h = vec![
        ("Content-Type".to_string(), "application/json".to_string()),
        ("Accept".to_string(), "application/json, text/event-stream".to_string()),
    ];
    if initialized {
        h.push(("MCP-Protocol-Version".into(), LEGACY.to_string()));
    }
    if let Some(s) = session {
        h.push(("Mcp-Session-Id".into(), s.to_string()));
    }
    h
}

/// Short text for a JSON value in a message (capped).
pub fn brief(v: &Value) -> String {
    let s = v.to_string();
    if s.len() > 300 {
        let mut end = 300;
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        format!("{}… ({} bytes)", &s[..end], s.len())
    } else {
        s
    }
}
