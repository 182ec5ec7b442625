//! The built-in test issuer's listener on 127.0.0.1: its authorization
//! server metadata (RFC 8414, also at the OpenID discovery path) and its
//! JWKS, for a server that fetches keys by URL. It issues no tokens over
//! HTTP (mcpcert mints them itself): the authorization and token endpoints
//! it names answer 400.

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

#[derive(Debug)]
pub struct Issuer {
    listener: std::net::TcpListener,
    url: String,
    metadata: Value,
    jwks: Value,
}

impl Issuer {
    /// Listen on 127.0.0.1:`port` (0: any free port).
    pub fn bind(port: u16, keys: &super::Keys) -> Result<Issuer, String> {
        let listener = std::net::TcpListener::bind(("127.0.0.1", port))
            .map_err(|e| format!("the built-in issuer cannot listen on 127.0.0.1:{port}: {e} ([auth] port names another)"))?;
        listener.set_nonblocking(true).map_err(|e| e.to_string())?;
        let addr = listener.local_addr().map_err(|e| e.to_string())?;
        let url = format!("http://{addr}");
        Ok(Issuer { listener, metadata: metadata(&url), jwks: keys.jwks()?, url })
    }

    /// Its URL: the `iss` of its tokens.
    pub fn url(&self) -> &str {
        &self.url
    }

    pub fn jwks_url(&self) -> String {
        format!("{}/jwks.json", self.url)
    }

    /// Serve until the runtime ends (spawn it).
    pub async fn serve(self) {
        let Ok(listener) = tokio::net::TcpListener::from_std(self.listener) else { return };
        let docs = std::sync::Arc::new((self.metadata, self.jwks));
        loop {
            let Ok((mut sock, _)) = listener.accept().await else { continue };
            let docs = docs.clone();
            tokio::spawn(async move {
                let mut buf = Vec::new();
                let mut chunk = [0u8; 2048];
                // The request head only (these are GETs); 16 KiB at most.
                while !buf.windows(4).any(|w| w == b"\r\n\r\n") && buf.len() < 16 * 1024 {
                    match tokio::time::timeout(std::time::Duration::from_secs(5), sock.read(&mut chunk)).await {
                        Ok(Ok(n)) if n > 0 => buf.extend_from_slice(&chunk[..n]),
                        _ => return,
                    }
                }
                let head = String::from_utf8_lossy(&buf);
                let path = head.split_whitespace().nth(1).unwrap_or("").split('?').next().unwrap_or("");
                let (status, body) = match path {
                    "/.well-known/oauth-authorization-server" | "/.well-known/openid-configuration" => (200, docs.0.to_string()),
                    "/jwks.json" => (200, docs.1.to_string()),
                    "/authorize" | "/token" => (
                        400,
                        json!({"error": "unsupported_grant_type", "error_description": "mcpcert's test issuer mints its tokens itself"})
                            .to_string(),
                    ),
                    _ => (404, json!({"error": "not_found"}).to_string()),
                };
                let reason = match status {
                    200 => "OK",
                    400 => "Bad Request",
                    _ => "Not Found",
                };
                let resp = format!(
                    "HTTP/1.1 {status} {reason}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = sock.write_all(resp.as_bytes()).await;
                let _ = sock.shutdown().await;
            });
        }
    }
}

/// RFC 8414 metadata of an issuer at `url`.
fn metadata(url: &str) -> Value {
    json!({
        "issuer": url,
        "authorization_endpoint": format!("{url}/authorize"),
        "token_endpoint": format!("{url}/token"),
        "jwks_uri": format!("{url}/jwks.json"),
        "response_types_supported": ["code"],
        "grant_types_supported": ["authorization_code", "client_credentials"],
        "code_challenge_methods_supported": ["S256"],
        "token_endpoint_auth_methods_supported": ["none"],
        "id_token_signing_alg_values_supported": ["RS256", "ES256"],
    })
}

/// `[auth] upstream_port`: mcpcert playing the upstream API a server
/// calls on 127.0.0.1, recording the `Authorization` each request carried
/// (to see whether the server passes its caller's token through). It
/// answers every request 200 with an empty JSON object.
#[derive(Debug)]
pub struct Upstream {
    listener: std::net::TcpListener,
    url: String,
    seen: std::sync::Arc<std::sync::Mutex<Vec<Seen>>>,
}

/// One request that reached the upstream: its request line and its
/// `Authorization` value (None: none).
#[derive(Debug, Clone)]
pub struct Seen {
    pub line: String,
    pub authorization: Option<String>,
    /// The whole request head (a token may travel in any header, or the
    /// request line's query).
    pub head: String,
}

/// What the upstream saw, shared with the cases.
pub type UpstreamLog = std::sync::Arc<std::sync::Mutex<Vec<Seen>>>;

impl Upstream {
    pub fn bind(port: u16) -> Result<Upstream, String> {
        let listener = std::net::TcpListener::bind(("127.0.0.1", port))
            .map_err(|e| format!("the upstream mcpcert plays cannot listen on 127.0.0.1:{port}: {e}"))?;
        listener.set_nonblocking(true).map_err(|e| e.to_string())?;
        let url = format!("http://{}", listener.local_addr().map_err(|e| e.to_string())?);
        Ok(Upstream { listener, url, seen: Default::default() })
    }

    pub fn url(&self) -> &str {
        &self.url
    }

    pub fn log(&self) -> UpstreamLog {
        self.seen.clone()
    }

    /// Serve until the runtime ends (spawn it).
    pub async fn serve(self) {
        let Ok(listener) = tokio::net::TcpListener::from_std(self.listener) else { return };
        loop {
            let Ok((mut sock, _)) = listener.accept().await else { continue };
            let seen = self.seen.clone();
            tokio::spawn(async move {
                let mut buf = Vec::new();
                let mut chunk = [0u8; 2048];
                while !buf.windows(4).any(|w| w == b"\r\n\r\n") && buf.len() < 16 * 1024 {
                    match tokio::time::timeout(std::time::Duration::from_secs(5), sock.read(&mut chunk)).await {
                        Ok(Ok(n)) if n > 0 => buf.extend_from_slice(&chunk[..n]),
                        _ => return,
                    }
                }
                let head = String::from_utf8_lossy(&buf).into_owned();
                let mut lines = head.lines();
                let line = lines.next().unwrap_or("").to_string();
                let authorization = lines
                    .filter_map(|l| l.split_once(':'))
                    .find(|(k, _)| k.trim().eq_ignore_ascii_case("authorization"))
                    .map(|(_, v)| v.trim().to_string());
                if let Ok(mut s) = seen.lock() {
                    s.push(Seen { line, authorization, head: head.clone() });
                }
                let _ = sock
                    .write_all(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}")
                    .await;
                let _ = sock.shutdown().await;
            });
        }
    }
}
