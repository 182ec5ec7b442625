//! The server card (SEP-2127, a draft): `GET <endpoint>/server-card`, the
//! location the draft reserves, looked at once after the catalogue over
//! Streamable HTTP and set against what the run saw. Notes only: a draft's
//! rules may still change, so nothing here is a case or a verdict.

use crate::record::{DraftNote, RevisionInfo};
use crate::transport::clip;
use serde_json::Value;
use std::time::Duration;

const DRAFT: &str = "SEP-2127 MCP Server Cards and the draft's Discovery page, a draft: notes only";
const MEDIA: &str = "application/mcp-server-card+json";
/// The most of a card read; a longer body is a note, not read on.
const CAP: usize = 256 * 1024;

/// What one GET brought.
struct Got {
    status: u16,
    headers: reqwest::header::HeaderMap,
    body: Vec<u8>,
    cut: bool,
}

impl Got {
    fn header(&self, name: &str) -> Option<String> {
        self.headers.get(name).and_then(|v| v.to_str().ok()).map(String::from)
    }
}

async fn fetch(client: &reqwest::Client, url: &str, etag: Option<&str>) -> Result<Got, String> {
    let mut req = client.get(url).header("Accept", MEDIA);
    if let Some(e) = etag {
        req = req.header("If-None-Match", e);
    }
    let mut resp = tokio::time::timeout(Duration::from_secs(10), req.send())
        .await
        .map_err(|_| "no answer within 10 s".to_string())?
        .map_err(|e| e.to_string())?;
    let (status, headers) = (resp.status().as_u16(), resp.headers().clone());
    let (mut body, mut cut) = (Vec::new(), false);
    let read = async {
        while let Some(c) = resp.chunk().await.map_err(|e| e.to_string())? {
            body.extend_from_slice(&c);
            if body.len() > CAP {
                body.truncate(CAP);
                cut = true;
                break;
            }
        }
        Ok::<(), String>(())
    };
    tokio::time::timeout(Duration::from_secs(10), read).await.map_err(|_| "the body did not end within 10 s".to_string())??;
    Ok(Got { status, headers, body, cut })
}

/// Look for the server card of the Streamable HTTP endpoint `endpoint`
/// and note how it departs from the draft and from what the run saw
/// (`revisions`: the server's identity and the revisions it serves).
pub async fn server_card(endpoint: &str, revisions: &[RevisionInfo]) -> DraftNote {
    let url = format!("{}/server-card", endpoint.trim_end_matches('/'));
    let mut note = DraftNote { name: "server card".into(), draft: DRAFT.into(), url: url.clone(), found: String::new(), notes: Vec::new() };
    let got = match crate::transport::one_off_client(url.starts_with("https:")) {
        Ok(c) => fetch(&c, &url, None).await.map(|g| (c, g)),
        Err(e) => Err(e),
    };
    let (client, got) = match got {
        Ok(x) => x,
        Err(e) => {
            note.found = format!("unreachable: {e}");
            return note;
        }
    };
    let ctype = got.header("content-type").unwrap_or_default();
    let card = (got.status == 200 && !got.cut).then(|| serde_json::from_slice::<Value>(&got.body).ok()).flatten();
    let Some(card) = card.filter(Value::is_object) else {
        note.found = match got.status {
            200 if got.cut => format!("not published (HTTP 200 with a body over {} KiB)", CAP / 1024),
            200 => {
                format!("not published (HTTP 200, but not a JSON object: {})", if ctype.is_empty() { "no Content-Type" } else { &ctype })
            }
            s => format!("not published (HTTP {s})"),
        };
        return note;
    };
    note.found = "published".into();
    let n = &mut note.notes;
    if ctype.split(';').next().map(str::trim) != Some(MEDIA) {
        n.push(format!("X121, draft SHOULD: served as {:?}, not {MEDIA}", ctype));
    }
    n.extend(shape(&card));
    n.extend(agreement(&card, endpoint, revisions));
    n.extend(cors_and_cache(&got));
    if let Some(tag) = got.header("etag") {
        match fetch(&client, &url, Some(&tag)).await {
            Ok(again) if again.status == 304 => {}
            Ok(again) => n.push(format!(
                "X125, draft SHOULD: a GET with If-None-Match: {tag} (the card's own ETag) got HTTP {}, not 304",
                again.status
            )),
            Err(e) => n.push(format!("X125, draft SHOULD: a GET with If-None-Match got no answer: {e}")),
        }
    }
    n.extend(secrets(&card, endpoint));
    note
}

/// X122: the card's fields.
fn shape(card: &Value) -> Vec<String> {
    let mut out = Vec::new();
    let s = |k: &str| card.get(k).and_then(Value::as_str);
    match s("$schema") {
        Some(u) if u.starts_with("https://static.modelcontextprotocol.io/schemas/") => {}
        Some(u) => out.push(format!("X122, draft MUST: $schema is {u:?}, not a schema URL of static.modelcontextprotocol.io")),
        None => out.push("X122, draft MUST: $schema (the card schema's URL) is missing".into()),
    }
    match s("name") {
        Some(v) if name_ok(v) => {}
        Some(v) => {
            out.push(format!("X122, draft MUST: name {:?} is not NAMESPACE/NAME in reverse-DNS form (3 to 200 characters)", clip(v, 80)))
        }
        None => out.push("X122, draft MUST: name is missing".into()),
    }
    if s("version").is_none() {
        out.push("X122, draft MUST: version (a string) is missing".into());
    }
    match s("description") {
        Some(d) if (1..=100).contains(&d.chars().count()) => {}
        Some(d) => out.push(format!("X122, draft MUST: description has {} characters (1 to 100)", d.chars().count())),
        None => out.push("X122, draft MUST: description is missing".into()),
    }
    for (i, r) in card.get("remotes").and_then(Value::as_array).into_iter().flatten().enumerate() {
        let t = r.get("type").and_then(Value::as_str);
        if !matches!(t, Some("streamable-http" | "sse")) || !r.get("url").is_some_and(Value::is_string) {
            out.push(format!("X122, draft MUST: remotes[{i}] needs type streamable-http or sse and a url; got {}", crate::wire::brief(r)));
        }
    }
    let listed: Vec<&str> =
        ["tools", "resources", "prompts", "capabilities", "extensions"].into_iter().filter(|k| card.get(*k).is_some()).collect();
    if !listed.is_empty() {
        out.push(format!(
            "X122: a card lists no primitives, capabilities or extensions (those come from the live server); it has {}",
            listed.join(", ")
        ));
    }
    out
}

fn name_ok(v: &str) -> bool {
    let Some((ns, rest)) = v.split_once('/') else { return false };
    let ok = |s: &str, extra: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || extra.contains(c));
    (3..=200).contains(&v.len()) && ok(ns, ".-") && ok(rest, "._-")
}

/// X123: the card against what the run saw.
fn agreement(card: &Value, endpoint: &str, revisions: &[RevisionInfo]) -> Vec<String> {
    let mut out = Vec::new();
    let seen = revisions.iter().find_map(|r| r.server_info.as_ref());
    if let (Some(v), Some(live)) =
        (card.get("version").and_then(Value::as_str), seen.and_then(|i| i.get("version")).and_then(Value::as_str))
        && v != live
    {
        out.push(format!("X123, draft SHOULD: the card's version {v:?} is not the server's ({live:?}, from its serverInfo)"));
    }
    if let (Some(t), Some(live)) = (card.get("title").and_then(Value::as_str), seen.and_then(|i| i.get("title")).and_then(Value::as_str))
        && t != live
    {
        out.push(format!("X123, draft SHOULD NOT: the card's title {t:?} contradicts the server's ({live:?})"));
    }
    let same = |u: &str| u.trim_end_matches('/') == endpoint.trim_end_matches('/');
    let remotes: Vec<&Value> = card.get("remotes").and_then(Value::as_array).into_iter().flatten().collect();
    let Some(this) = remotes.iter().find(|r| r.get("url").and_then(Value::as_str).is_some_and(same)) else {
        if !remotes.is_empty() {
            out.push(format!(
                "X123: no remote names the endpoint mcpcert reached ({endpoint}), so the card's transport and versions were not compared"
            ));
        }
        return out;
    };
    if this.get("type").and_then(Value::as_str) != Some("streamable-http") {
        out.push(format!(
            "X123, draft SHOULD: the remote for {endpoint} says type {}, but Streamable HTTP is served there",
            crate::wire::brief(&this["type"])
        ));
    }
    let served: Vec<&str> = revisions.iter().filter(|r| r.supported).map(|r| r.revision.as_str()).collect();
    let known: Vec<&str> = revisions.iter().map(|r| r.revision.as_str()).collect();
    if let Some(claimed) = this.get("supportedProtocolVersions").and_then(Value::as_array) {
        let claimed: Vec<&str> = claimed.iter().filter_map(Value::as_str).collect();
        for v in claimed.iter().filter(|v| known.contains(v) && !served.contains(v)) {
            out.push(format!("X123, draft SHOULD: the card claims protocol version {v}, which the run found not served"));
        }
        for v in served.iter().filter(|v| !claimed.contains(v)) {
            out.push(format!("X123, draft SHOULD: the server serves {v}, which the card's supportedProtocolVersions leave out"));
        }
    }
    out
}

/// X124 and X125: the CORS and caching headers.
fn cors_and_cache(got: &Got) -> Vec<String> {
    let mut out = Vec::new();
    let has = |name: &str, want: &str| got.header(name).is_some_and(|v| v.split(',').any(|p| p.trim().eq_ignore_ascii_case(want)));
    if got.header("access-control-allow-origin").as_deref() != Some("*") {
        let origin = got.header("access-control-allow-origin").map_or("absent".to_string(), |v| format!("{v:?}"));
        out.push(format!("X124, draft MUST: Access-Control-Allow-Origin is {origin}, not *"));
    }
    if !has("access-control-allow-methods", "GET") {
        out.push("X124, draft MUST: Access-Control-Allow-Methods does not name GET".into());
    }
    if !(has("access-control-allow-headers", "Content-Type") && has("access-control-allow-headers", "If-None-Match")) {
        out.push("X124, draft MUST: Access-Control-Allow-Headers does not name Content-Type and If-None-Match".into());
    }
    if !has("access-control-expose-headers", "ETag") {
        out.push("X124, draft MUST: Access-Control-Expose-Headers does not name ETag".into());
    }
    let cache = got.header("cache-control").unwrap_or_default().to_ascii_lowercase();
    if !(cache.contains("public") && cache.contains("max-age")) {
        let cache = if cache.is_empty() { "absent".to_string() } else { format!("{cache:?}") };
        out.push(format!("X125, draft SHOULD: Cache-Control is {cache}, not public with a max-age"));
    }
    if got.header("etag").is_none() {
        out.push("X125, draft SHOULD: no ETag".into());
    }
    out
}

/// X126: what looks like a credential in the card (its name only, never
/// its value), and plain HTTP away from loopback.
fn secrets(card: &Value, endpoint: &str) -> Vec<String> {
    let mut found = Vec::new();
    walk(card, "", &mut found);
    let mut out: Vec<String> = found
        .into_iter()
        .map(|k| format!("X126, draft MUST NOT: {k} looks like a credential (its value is not shown); a card is public"))
        .collect();
    let host = endpoint.split("://").nth(1).unwrap_or("").split(['/', ':']).next().unwrap_or("");
    if endpoint.starts_with("http://") && !matches!(host, "127.0.0.1" | "localhost" | "[::1]") {
        out.push("X126, draft MUST: the card is served over plain HTTP away from loopback (HTTPS in production)".into());
    }
    out
}

fn walk(v: &Value, path: &str, out: &mut Vec<String>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                let p = if path.is_empty() { k.clone() } else { format!("{path}.{k}") };
                let lk = k.to_ascii_lowercase();
                let secretish = ["token", "secret", "password", "apikey", "api_key", "authorization"].iter().any(|s| lk.contains(s));
                if secretish && x.as_str().is_some_and(|s| !s.is_empty()) {
                    out.push(p.clone());
                }
                walk(x, &p, out);
            }
        }
        Value::Array(a) => a.iter().enumerate().for_each(|(i, x)| walk(x, &format!("{path}[{i}]"), out)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn names_and_fields_follow_the_draft() {
        assert!(name_ok("io.github.mcpcert/refserver") && !name_ok("refserver") && !name_ok("a b/c"));
        let good = json!({"$schema": "https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json",
            "name": "com.example/weather", "version": "1.0.0", "description": "Weather"});
        assert!(shape(&good).is_empty());
        let mut bad = good.clone();
        bad["tools"] = json!([]);
        bad["description"] = json!("");
        assert_eq!(shape(&bad).len(), 2, "{:?}", shape(&bad));
    }

    #[test]
    fn credentials_are_named_never_shown() {
        let card = json!({"remotes": [{"headers": [{"name": "Authorization", "value": "Bearer s3cr3t"}], "apiKey": "k-123"}]});
        let notes = secrets(&card, "http://127.0.0.1:1/mcp");
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert!(notes[0].contains("remotes[0].apiKey") && !notes.iter().any(|n| n.contains("k-123")));
        assert_eq!(secrets(&json!({}), "http://mcp.example.invalid/mcp").len(), 1);
    }
}
