//! JSON-RPC envelopes and MCP request building per revision.

pub mod headerval;
pub mod schema;

use serde_json::{Map, Value, json};

/// The newest stateless revision's version string (what 2026-07-28 `_meta` names).
pub const MODERN: &str = "2026-07-28";

pub mod revision;

pub use revision::{Era, Feature, HttpTransport, Revision};

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
            // The tasks extension: routed by the task (its HTTP section).
            "tasks/get" | "tasks/update" | "tasks/cancel" => body.pointer("/params/taskId"),
            _ => None,
        };
        if let Some(Value::String(n)) = name {
            h.push(("Mcp-Name".into(), headerval::encode_str(n)));
        }
    }
    h
}

/// Headers for a request of an initialize-era revision `rev` inside a
/// session: `MCP-Protocol-Version` after initialization where the revision
/// has it (2025-06-18 on), and the session id.
pub fn session_headers(rev: Revision, session: Option<&str>, initialized: bool) -> Vec<(String, String)> {
    let mut h = vec![
        ("Content-Type".to_string(), "application/json".to_string()),
        ("Accept".to_string(), "application/json, text/event-stream".to_string()),
    ];
    if initialized && rev.has(Feature::ProtocolVersionHeader) {
        h.push(("MCP-Protocol-Version".into(), rev.as_str().to_string()));
    }
    if let Some(s) = session {
        h.push(("Mcp-Session-Id".into(), s.to_string()));
    }
    h
}

/// A change to the standard headers of one HTTP exchange.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HeaderEdit {
    /// Replace every header of this name (any case) by one, named as given.
    Set(String, String),
    /// Drop every header of this name (any case).
    Remove(String),
    /// Append one more header line, duplicates allowed.
    Add(String, String),
}

impl HeaderEdit {
    /// Suite-file form: name → value, or null to remove.
    pub fn from_map(m: &std::collections::BTreeMap<String, Option<String>>) -> Vec<HeaderEdit> {
        m.iter()
            .map(|(k, v)| match v {
                Some(v) => HeaderEdit::Set(k.clone(), v.clone()),
                None => HeaderEdit::Remove(k.clone()),
            })
            .collect()
    }
}

pub fn apply_edits(headers: &mut Vec<(String, String)>, edits: &[HeaderEdit]) {
    for e in edits {
        match e {
            HeaderEdit::Set(name, v) => {
                let pos = headers.iter().position(|(k, _)| k.eq_ignore_ascii_case(name));
                headers.retain(|(k, _)| !k.eq_ignore_ascii_case(name));
                let at = pos.unwrap_or(headers.len()).min(headers.len());
                headers.insert(at, (name.clone(), v.clone()));
            }
            HeaderEdit::Remove(name) => headers.retain(|(k, _)| !k.eq_ignore_ascii_case(name)),
            HeaderEdit::Add(name, v) => headers.push((name.clone(), v.clone())),
        }
    }
}

/// The standard HTTP headers of a message of revision `rev`: the stateless
/// headers that mirror the body, or the initialize era's session headers.
/// `body` is None for a bodiless request (GET, DELETE).
pub fn standard_headers(rev: Revision, body: Option<&Value>, session: Option<&str>) -> Vec<(String, String)> {
    match (rev.is_stateless(), body) {
        (true, Some(b)) => modern_headers(b),
        (true, None) => vec![("Accept".into(), "application/json, text/event-stream".into())],
        (false, _) => {
            let initialized = body.and_then(|b| b.get("method")).and_then(|m| m.as_str()) != Some("initialize");
            let mut h = session_headers(rev, session, initialized);
            if body.is_none() {
                h.retain(|(k, _)| !k.eq_ignore_ascii_case("content-type"));
            }
            h
        }
    }
}

/// Short text for a JSON value in a message (capped).
/// The one wording of a response whose id is not its request's, so that
/// every case that sees it says the same (and a reader sees one cause).
pub fn id_mismatch(request: Option<&Value>, got: Option<&Value>) -> String {
    format!(
        "expected the response id to equal the request id {}; got {}",
        request.map(brief).unwrap_or_else(|| "(none)".into()),
        got.map(brief).unwrap_or_else(|| "no id".into())
    )
}

pub fn brief(v: &Value) -> String {
    const SHOWN: usize = 300;
    // The first bytes and a count of the rest: a huge value is not
    // written out whole only to be cut.
    struct Head {
        kept: Vec<u8>,
        len: usize,
    }
    impl std::io::Write for Head {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            let room = (SHOWN + 4).saturating_sub(self.kept.len());
            self.kept.extend_from_slice(&b[..b.len().min(room)]);
            self.len += b.len();
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut head = Head { kept: Vec::new(), len: 0 };
    let _ = serde_json::to_writer(&mut head, v);
    let s = String::from_utf8_lossy(&head.kept);
    if head.len > SHOWN {
        let mut end = SHOWN;
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        format!("{}… ({} bytes)", &s[..end], head.len)
    } else {
        s.into_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::brief;
    use serde_json::{Value, json};

    /// What `brief` shows, worked out the long way: the whole text cut.
    fn cut(v: &Value) -> String {
        let s = v.to_string();
        if s.len() <= 300 {
            return s;
        }
        let mut end = 300;
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        format!("{}… ({} bytes)", &s[..end], s.len())
    }

    #[test]
    fn brief_is_the_text_cut_at_300_bytes_with_the_whole_length() {
        let tools: Vec<Value> = (0..2000).map(|i| json!({"name": format!("tool_{i}"), "description": "é→ü".repeat(i % 7)})).collect();
        for v in
            [json!(null), json!({"a": 1}), json!("x".repeat(300)), json!("x".repeat(299)), json!("é".repeat(400)), json!({"tools": tools})]
        {
            assert_eq!(brief(&v), cut(&v));
        }
    }
}
