//! The protected resource metadata side of `auth_probe`: the 401's
//! challenge, finding the metadata document (the challenge's
//! `resource_metadata`, then the well-known URIs) and judging it.

use super::Probe;
use crate::checks::judge::challenge::{self, Challenge};
use crate::record::Exchange;
use crate::session::Msg;
use crate::wire::HeaderEdit;
use serde_json::{Value, json};

/// Why a metadata document was not had.
pub(super) enum Fetch {
    /// Not served there (a status, not JSON).
    Missing(String),
    /// No answer (a transport error).
    Broken(String),
}

impl Probe<'_, '_> {
    /// The target's URL, its origin, and the two well-known URIs of its
    /// protected resource metadata (path-inserted first, then root).
    pub(super) fn urls(&self) -> Option<(String, String, Vec<String>)> {
        let url = self.cx.session.target().url()?.to_string();
        let u = reqwest::Url::parse(&url).ok()?;
        let origin = u.origin().ascii_serialization();
        let path = u.path().trim_end_matches('/');
        let root = format!("{origin}/.well-known/oauth-protected-resource");
        let mut known = Vec::new();
        if !path.is_empty() {
            known.push(format!("{root}{path}"));
        }
        known.push(root);
        Some((url, origin, known))
    }

    /// GET `url` with no token, asking for JSON: the document; or why
    /// not, `Missing` (not served there) apart from `Broken` (no answer: a
    /// transport error, judged as `error`).
    pub(super) async fn fetch(&mut self, url: &str) -> Result<Value, Fetch> {
        let label = format!("GET {url} (protected resource metadata), no token");
        let accept = [HeaderEdit::Set("Accept".into(), "application/json".into())];
        let Some(ex) = self.send(Some(url), None, Msg::raw(self.cx.rev, &label, "GET").edits(&accept)).await else {
            return Err(Fetch::Broken("not sent".into()));
        };
        let r = match (&ex.error, ex.status) {
            (Some(e), _) => Err(Fetch::Broken(e.to_string())),
            (None, Some(200)) => {
                let text = ex.body.clone().or_else(|| ex.frames.first().map(|f| f.raw.clone())).unwrap_or_default();
                match serde_json::from_str::<Value>(&text) {
                    Ok(v) if v.is_object() => Ok(v),
                    Ok(_) => Err(Fetch::Missing("HTTP 200 but not a JSON object".into())),
                    Err(e) => Err(Fetch::Missing(format!("HTTP 200 but not JSON ({e})"))),
                }
            }
            (None, s) => Err(Fetch::Missing(s.map_or("no answer".into(), |s| format!("HTTP {s}")))),
        };
        self.out.exchanges.push(ex);
        r
    }

    /// Why the server shows no sign of MCP's OAuth authorization, if it
    /// does not: with tokens given from outside (the built-in issuer's are
    /// OAuth's own), a request without a token gets a 401 with no Bearer
    /// challenge, and no protected resource metadata is at the well-known
    /// URIs. None: it does (or nothing could be judged: the case ends as
    /// the probes left it).
    pub(super) async fn not_oauth(&mut self) -> Option<String> {
        if matches!(self.tokens.source, crate::auth::Source::Builtin { .. }) {
            return None;
        }
        let (_, _, known) = self.urls()?;
        let ex = self.no_token_request().await?;
        let shown = {
            let values: Vec<&str> =
                ex.headers.iter().filter(|(k, _)| k.eq_ignore_ascii_case("www-authenticate")).map(|(_, v)| v.as_str()).collect();
            if values.is_empty() { "no WWW-Authenticate header".to_string() } else { format!("WWW-Authenticate: {}", values.join(", ")) }
        };
        // A Bearer challenge that names the metadata is OAuth's sign; a
        // bare one ("Bearer", "Bearer realm=…") is what a static API key
        // server sends too, so without a token that OAuth's issuer made
        // (the built-in one's, above) it decides nothing alone: the
        // well-known URIs do. (Judged the same with the key as without.)
        let challenges = challenge::parse(
            &ex.headers.iter().filter(|(k, _)| k.eq_ignore_ascii_case("www-authenticate")).map(|(_, v)| v.as_str()).collect::<Vec<_>>(),
        );
        let bearer = challenge::bearer(&challenges);
        let names_metadata = bearer.as_ref().is_some_and(|c| c.params.contains_key("resource_metadata"));
        let (status, error) = (ex.status, ex.error.clone());
        self.out.exchanges.push(ex);
        if error.is_some() || status != Some(401) || names_metadata {
            return None;
        }
        let no_challenge = if bearer.is_some() { "a Bearer challenge that names no resource_metadata" } else { "no Bearer challenge" };
        for url in &known {
            match self.fetch(url).await {
                Ok(_) | Err(Fetch::Broken(_)) => return None,
                Err(Fetch::Missing(_)) => {}
            }
        }
        Some(format!(
            "the server shows no sign of MCP's OAuth authorization: a request without a token gets 401 with {shown} ({no_challenge}), and no protected resource metadata is at the well-known URIs ({}); it authenticates another way, such as a static API key (if it means to use OAuth, that is its finding: clients cannot discover its authorization server)",
            known.join(", ")
        ))
    }

    /// auth/oauth-conformance: the server's authorization is MCP's.
    pub(super) async fn conforms(&mut self) {
        if self.unprotected().await {
            return;
        }
        if let Some(other) = self.not_oauth().await {
            self.out.fail(format!(
                "{other}. The authorization specification says implementations using an HTTP-based transport SHOULD conform to it (an OAuth 2.1 resource server with RFC 9728 metadata); clients that follow it cannot get a token for this server"
            ));
        }
    }

    pub(super) async fn discovery(&mut self) {
        let Some((_, _, known)) = self.urls() else { return self.out.set_na("the target has no URL") };
        let Some(ch) = self.challenge().await else { return };
        // The header names the metadata's URL: present and an absolute URL
        // (that it serves the metadata, resource-metadata judges).
        let header: Result<(), String> = match &ch {
            Ok(c) => match c.params.get("resource_metadata") {
                Some(m) if reqwest::Url::parse(m).is_ok() => return,
                Some(m) => Err(format!("the 401's Bearer challenge names resource_metadata=\"{m}\", which is not an absolute URL")),
                None => Err("the 401's Bearer challenge has no resource_metadata".to_string()),
            },
            Err(e) => Err(e.clone()),
        };
        let mut tried = Vec::new();
        let mut broken = false;
        for url in &known {
            match self.fetch(url).await {
                Ok(_) => return,
                Err(Fetch::Missing(e)) => tried.push(format!("{url}: {e}")),
                Err(Fetch::Broken(e)) => {
                    broken = true;
                    tried.push(format!("{url}: {e}"))
                }
            }
        }
        if broken {
            return self.out.set_error(format!("the well-known URIs could not be fetched ({})", tried.join("; ")));
        }
        self.out.fail(format!(
            "a client cannot find the protected resource metadata: {}, and it is not at a well-known URI ({}); the server must offer one of the two",
            header.err().unwrap_or_default(),
            tried.join("; ")
        ));
    }

    pub(super) async fn challenge_scope(&mut self) {
        let Some(ch) = self.challenge().await else { return };
        match ch {
            Err(e) => self.out.fail(format!("{e}, so it names no scope for the client to ask for")),
            Ok(c) if c.params.get("scope").is_none_or(|s| s.trim().is_empty()) => {
                self.out.fail("the 401's Bearer challenge has no scope parameter naming the scopes the resource needs")
            }
            Ok(_) => {}
        }
    }

    /// The 401's challenge (None: no Bearer challenge, or no 401), and the
    /// metadata document as a client finds it: at the challenge's
    /// `resource_metadata` (which a client follows when present, so a dead
    /// one is the answer), else at the well-known URIs; with the `resource`
    /// values it may carry. `Err(None)`: the case already ended (error).
    pub(super) async fn metadata(&mut self) -> (Option<Challenge>, Result<(Value, Vec<String>), Option<String>>) {
        let Some((url, origin, known)) = self.urls() else { return (None, Err(Some("the target has no URL".into()))) };
        // Nothing is protected: no-token-unauthorized is the one failure.
        if self.unprotected().await {
            return (None, Err(None));
        }
        let ch = match self.challenge().await {
            Some(Ok(c)) => Some(c),
            Some(Err(_)) => None,
            None if self.out.is_error() => return (None, Err(None)),
            None => None,
        };
        // Judged again here on what this case finds.
        if self.out.is_na() {
            self.out.end = Default::default();
        }
        // The resource identifiers a client may hold: the URL it used, and
        // the configured canonical URI (a server behind a proxy).
        let mut ids = vec![url.clone()];
        if self.tokens.audience != url {
            ids.push(self.tokens.audience.clone());
        }
        if let Some(m) = ch.as_ref().and_then(|c| c.params.get("resource_metadata")).cloned() {
            match reqwest::Url::parse(&m) {
                Ok(u) if u.origin().ascii_serialization() == origin => {
                    return match self.fetch(&m).await {
                        Ok(doc) => (ch, Ok((doc, ids))),
                        Err(Fetch::Broken(e)) => {
                            self.out.set_error(format!("{m} could not be fetched: {e}"));
                            (ch, Err(None))
                        }
                        Err(Fetch::Missing(e)) => (
                            ch,
                            Err(Some(format!(
                                "the challenge's resource_metadata, {m}, does not serve it ({e}), and a client follows that URL"
                            ))),
                        ),
                    };
                }
                _ => {
                    self.out.set_na(format!(
                        "the challenge names the metadata at {m}, not on the server's origin ({origin}); mcpcert fetches only from the server under test"
                    ));
                    return (ch, Err(None));
                }
            }
        }
        let mut tried = Vec::new();
        for (i, k) in known.iter().enumerate() {
            let mut ok = ids.clone();
            if i + 1 == known.len() {
                ok.push(origin.clone());
            }
            match self.fetch(k).await {
                Ok(doc) => return (ch, Ok((doc, ok))),
                Err(Fetch::Missing(e)) => tried.push(format!("{k}: {e}")),
                Err(Fetch::Broken(e)) => {
                    self.out.set_error(format!("{k} could not be fetched: {e}"));
                    return (ch, Err(None));
                }
            }
        }
        (ch, Err(Some(format!("not named by a challenge, and not at the well-known URIs ({})", tried.join("; ")))))
    }

    pub(super) async fn resource_metadata(&mut self) {
        match self.metadata().await.1 {
            Ok((doc, resources)) => {
                for p in challenge::metadata_problems(&doc, &resources) {
                    self.out.fail(p);
                }
                if let Some(n) = challenge::bearer_methods_note(&doc) {
                    self.out.exchanges.push(Exchange::note("bearer_methods_supported", n));
                }
            }
            Err(None) => {}
            Err(Some(e)) => self.out.fail(format!(
                "no protected resource metadata was found: {e}; the server must implement RFC 9728 metadata naming its authorization servers"
            )),
        }
    }

    pub(super) async fn no_offline_access(&mut self) {
        let (ch, doc) = self.metadata().await;
        // What was found is judged, whatever else was not (unless nothing
        // is protected at all).
        if self.out.is_na() && ch.is_some() {
            self.out.end = Default::default();
        }
        let doc = doc.ok().map(|(d, _)| d);
        let mut seen = false;
        if let Some(c) = &ch {
            let s = c.params.get("scope").map(|s| challenge::scopes(Some(&json!(s)))).unwrap_or_default();
            seen |= c.params.contains_key("scope");
            if s.iter().any(|x| x == "offline_access") {
                self.out.fail("the 401's challenge asks for offline_access in scope; refresh tokens are not a resource requirement");
            }
        }
        if let Some(d) = &doc {
            seen |= d.get("scopes_supported").is_some();
            if challenge::scopes(d.get("scopes_supported")).iter().any(|x| x == "offline_access") {
                self.out.fail("the protected resource metadata lists offline_access in scopes_supported; refresh tokens are not a resource requirement");
            }
        }
        if !seen && self.out.failures.is_empty() && !self.out.is_error() {
            self.out.set_na("neither the challenge nor the metadata found names scopes, so there is no offline_access to find");
        }
    }
}
