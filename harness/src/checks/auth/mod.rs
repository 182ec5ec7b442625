//! The server as an OAuth 2.1 protected resource (Streamable HTTP, with
//! `[auth]`): what it does with no token, a wrong token, a token in the
//! query string, or one that lacks a scope, and the metadata that tells a
//! client where to get a token. Every wrong token is sent on a connection
//! of its own, after a control request with the valid token showed the
//! same request served (else nothing can be judged); over 2025-11-25 in a
//! session opened with the valid token. Reports show each token's claims,
//! never the token.

mod metadata;

use super::judge::challenge::{self, Challenge};
use super::{Check, Cx, Need, Outcome};
use crate::auth::{TokenKind, Tokens};
use crate::record::{Exchange, Transport};
use crate::session::Msg;
use serde::Deserialize;
use serde_json::{Value, json};

/// Which rule an `auth_probe` case judges.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum AuthRule {
    /// No token: 401 for a request, a notification (and 2025-11-25's GET
    /// stream and DELETE are not served).
    NoToken,
    /// The 401 names the metadata (`resource_metadata`), or it is at a
    /// well-known URI.
    Discovery,
    /// The 401's challenge has `scope`.
    ChallengeScope,
    /// The metadata: `resource` is the server's URI, `authorization_servers`
    /// non-empty, `bearer_methods_supported` allows the header.
    ResourceMetadata,
    /// No `offline_access` in the challenge's scope or `scopes_supported`.
    NoOfflineAccess,
    /// Malformed, bad signature, unknown key, `alg: none`: 401.
    InvalidToken,
    /// Expired, not yet valid: 401.
    Expired,
    /// Another audience: 401.
    Audience,
    /// Another issuer: 401.
    Issuer,
    /// The token in the query string only: not served.
    QueryToken,
    /// A token lacking the operation's scope: 403 with insufficient_scope.
    InsufficientScope,
    /// No token comes back in a response.
    NotEchoed,
    /// The server's authorization is MCP's (OAuth 2.1: a Bearer challenge
    /// or discoverable protected resource metadata), not another scheme
    /// (a static API key): SHOULD.
    Conforms,
}

/// One authorization rule, with the run's tokens.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AuthProbe {
    check: AuthRule,
}

impl Check for AuthProbe {
    const NAME: &'static str = "auth_probe";
    const ABOUT: &'static str = "the server as an OAuth 2.1 protected resource: no token or a wrong one (signature, key, alg none, time, audience, issuer, query string) refused with 401, its challenge and protected resource metadata, insufficient scope answered 403, tokens never echoed";

    fn needs(&self) -> Vec<Need> {
        vec![Need::Transport(Transport::Http), Need::Auth]
    }

    /// The insufficient-scope case may call the tool the config names.
    fn calls_tools(&self) -> bool {
        self.check == AuthRule::InsufficientScope
    }

    async fn run(&self, cx: &Cx<'_>) -> Outcome {
        let Some(tokens) = cx.policy.auth.clone() else { return Outcome::na("no [auth] in the target config") };
        let mut p = Probe { cx, tokens: &tokens, out: Outcome::default(), session: None };
        // The metadata rules are those of a server that uses MCP's OAuth
        // authorization: one that shows no sign of it (another scheme, a
        // static API key) breaks the SHOULD that says to conform, once
        // (auth/oauth-conformance), not each MUST of what it does not use.
        if matches!(self.check, AuthRule::Discovery | AuthRule::ChallengeScope | AuthRule::ResourceMetadata | AuthRule::NoOfflineAccess)
            && let Some(other) = p.not_oauth().await
        {
            if !p.out.is_error() {
                p.out.set_na(format!(
                    "{other}; these rules are those of a server that uses it, and auth/oauth-conformance judges that it does not (SHOULD)"
                ));
            }
            return p.out;
        }
        match self.check {
            AuthRule::NoToken => p.no_token().await,
            AuthRule::Discovery => p.discovery().await,
            AuthRule::ChallengeScope => p.challenge_scope().await,
            AuthRule::ResourceMetadata => p.resource_metadata().await,
            AuthRule::NoOfflineAccess => p.no_offline_access().await,
            AuthRule::Conforms => p.conforms().await,
            AuthRule::InvalidToken => {
                p.refused(&[TokenKind::Malformed, TokenKind::BadSignature, TokenKind::UnknownKey, TokenKind::AlgNone]).await
            }
            AuthRule::Expired => p.refused(&[TokenKind::Expired, TokenKind::NotYetValid]).await,
            AuthRule::Audience => p.refused(&[TokenKind::OtherAudience]).await,
            AuthRule::Issuer => p.refused(&[TokenKind::OtherIssuer]).await,
            AuthRule::QueryToken => p.query_token().await,
            AuthRule::InsufficientScope => p.insufficient_scope().await,
            AuthRule::NotEchoed => p.not_echoed().await,
        }
        p.out
    }
}

struct Probe<'a, 'b> {
    cx: &'a Cx<'b>,
    tokens: &'a Tokens,
    out: Outcome,
    /// 2025-11-25: the session the case's requests go in (opened with the
    /// valid token).
    session: Option<String>,
}

/// What a sent request came to.
type Sent = Option<Exchange>;

impl Probe<'_, '_> {
    /// The request every probe sends: a list the server offers, else
    /// server/discover (2026-07-28) or ping.
    fn plain(&self) -> Value {
        let cx = self.cx;
        let method = ["tools", "prompts", "resources"]
            .iter()
            .find(|c| cx.advertises(c))
            .map(|c| format!("{c}/list"))
            .unwrap_or_else(|| if cx.rev.is_stateless() { "server/discover".into() } else { "ping".into() });
        cx.request(&method, Some(json!({})))
    }

    /// 2025-11-25: the id of a session opened with the valid token (its
    /// handshake shown), made once per case.
    async fn session_id(&mut self) -> Option<Option<String>> {
        if self.cx.rev.is_stateless() {
            return Some(None);
        }
        if self.session.is_none() {
            match self.cx.session.fresh(self.cx.rev, true, self.cx.case).await {
                Ok(f) => {
                    // Its reproducer lines carry the valid token, made again.
                    let valid = self.tokens.shell.get(&TokenKind::Valid).cloned().unwrap_or_default();
                    self.out.exchanges.extend(f.exchanges.into_iter().map(|mut e| {
                        e.shell_authorization = Some(valid.clone());
                        e
                    }));
                    self.session = f.conn.session_id().map(String::from);
                }
                Err(e) => {
                    self.out.set_error(format!("a session could not be opened with the valid token: {e}"));
                    return None;
                }
            }
        }
        Some(self.session.clone())
    }

    /// `msg` on a connection of its own to `url` (None: the server's),
    /// with `kind`'s token (None: no Authorization header), in the case's
    /// session; None when nothing could be sent (the error is set).
    async fn send(&mut self, url: Option<&str>, kind: Option<TokenKind>, msg: Msg<'_>) -> Sent {
        let bearer = match kind.map(|k| self.tokens.bearer(k)) {
            Some(Err(e)) => {
                self.out.set_error(e);
                return None;
            }
            Some(Ok(b)) => Some(b),
            None => None,
        };
        let shell_auth = kind.map(|k| self.tokens.shell.get(&k).cloned().unwrap_or_default()).unwrap_or_default();
        let shell_url = url.map(quote);
        self.send_as(url, shell_url, bearer.as_deref(), shell_auth, msg).await
    }

    /// `send`, with the URL and Authorization value given, and how a
    /// reproducer writes each.
    async fn send_as(
        &mut self,
        url: Option<&str>,
        shell_url: Option<String>,
        bearer: Option<&str>,
        shell_auth: String,
        msg: Msg<'_>,
    ) -> Sent {
        let sid = self.session_id().await?;
        let mut conn = match self.cx.session.open_authorized(url, bearer) {
            Ok(c) => c,
            Err(e) => {
                self.out.set_error(format!("{}: {e}", msg.label));
                return None;
            }
        };
        conn.set_session_id(sid);
        let mut ex = if msg.http_method == "GET" && url.is_none() {
            self.cx.session.get_head(&mut conn, self.cx.rev, msg.label, self.cx.case).await
        } else {
            self.cx.exchange(&mut conn, &msg).await
        };
        ex.fresh = true;
        ex.shell_url = shell_url;
        ex.shell_authorization = Some(shell_auth);
        Some(ex)
    }

    /// The plain request with `kind`'s token: its exchange.
    async fn with_token(&mut self, kind: TokenKind) -> Result<Sent, String> {
        let claims = self.tokens.get(kind)?.claims.clone();
        let body = self.plain();
        let label = format!("{} with {} ({claims})", method_of(&body), kind.describe());
        Ok(self.send(None, Some(kind), Msg::new(self.cx.rev, &label, &body)).await)
    }

    /// The control: the plain request with the valid token is served;
    /// false (an error set) when it is not, so a refusal of the others
    /// would show nothing.
    async fn control(&mut self) -> bool {
        let ex = match self.with_token(TokenKind::Valid).await {
            Ok(Some(ex)) => ex,
            Ok(None) => return false,
            // No valid token (a protected server judged without one):
            // nothing that needs one is judged.
            Err(why) => {
                self.out.set_na(why);
                return false;
            }
        };
        let served = ex.error.is_none() && ex.status.is_some_and(|s| (200..300).contains(&s)) && ex.response.is_some();
        let why = ex.summary();
        self.out.exchanges.push(ex);
        if !served {
            self.out.set_error(format!(
                "the server does not serve the request with the valid token either ({why}), so refusals of other tokens show nothing; it must trust the token's issuer and audience (`mcpcert auth-setup` prints them)"
            ));
        }
        served
    }

    /// Whether the server serves the plain request with no token at all
    /// (then the case is n/a: one defect, judged by no-token-unauthorized,
    /// not again by every case that sends a wrong token).
    async fn unprotected(&mut self) -> bool {
        let Some(ex) = self.no_token_request().await else { return true };
        let served = ex.error.is_none() && ex.status.is_some_and(|s| (200..300).contains(&s));
        let why = ex.summary();
        self.out.exchanges.push(ex);
        if served {
            self.out.set_na(format!(
                "the server serves a request without any token ({why}), so what it does with a wrong one shows nothing more; auth/no-token-unauthorized judges that"
            ));
        }
        served
    }

    /// Each of `kinds` sent must get 401. Every kind the title names is
    /// sent, or the case does not pass: a kind that cannot be made or was
    /// not given leaves it n/a when the others were refused.
    async fn refused(&mut self, kinds: &[TokenKind]) {
        let mut missing: Vec<String> = kinds.iter().filter_map(|k| self.tokens.get(*k).err()).collect();
        missing.dedup();
        if kinds.iter().all(|k| self.tokens.get(*k).is_err()) {
            self.out.set_na(missing.join("; "));
            return;
        }
        if !self.control().await || self.unprotected().await {
            return;
        }
        for k in kinds {
            let Ok(sent) = self.with_token(*k).await else { continue };
            let Some(ex) = sent else { return };
            self.expect_401(ex, &format!("a request with {}", k.describe()));
        }
        if !missing.is_empty() && self.out.failures.is_empty() && !self.out.is_error() {
            self.out.set_na(format!(
                "the tokens sent were refused, but not every token this case judges could be sent: {}",
                missing.join("; ")
            ));
        }
    }

    fn expect_401(&mut self, ex: Exchange, what: &str) {
        if let Some(e) = &ex.error {
            self.out.set_error(format!("{what}: {e}"));
        } else if ex.status != Some(401) {
            self.out.fail(format!(
                "{what} must be refused with HTTP 401 (an invalid or expired token, or a token not issued for this server, gets 401); got {}",
                ex.summary()
            ));
        }
        self.out.exchanges.push(ex);
    }

    /// The plain request without a token: its exchange.
    async fn no_token_request(&mut self) -> Sent {
        let body = self.plain();
        let label = format!("{} without an Authorization header", method_of(&body));
        self.send(None, None, Msg::new(self.cx.rev, &label, &body)).await
    }

    async fn no_token(&mut self) {
        let Some(ex) = self.no_token_request().await else { return };
        self.expect_401(ex, "a request without a token");
        let note = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
            "params": {"requestId": "mcpcert-no-such-request", "reason": "mcpcert authorization probe"}});
        let label = "notifications/cancelled without an Authorization header";
        let Some(ex) = self.send(None, None, Msg::new(self.cx.rev, label, &note).no_reply()).await else { return };
        self.expect_401(ex, "a notification without a token");
        if self.cx.rev.is_stateless() {
            return;
        }
        // 2025-11-25: the session's GET stream and its deletion, no token.
        for (method, what) in [("GET", "the session's GET stream"), ("DELETE", "the session's DELETE")] {
            let label = format!("{what} without an Authorization header");
            let Some(ex) = self.send(None, None, Msg::raw(self.cx.rev, &label, method)).await else { return };
            if let Some(e) = &ex.error {
                self.out.set_error(format!("{label}: {e}"));
            } else if ex.status.is_some_and(|s| (200..300).contains(&s)) {
                self.out.fail(format!(
                    "{what} without a token was served ({}): authorization is required on every HTTP request, and a request without it gets HTTP 401",
                    ex.summary()
                ));
            } else if ex.status != Some(401) {
                let n = format!("{what} without a token got {} rather than 401; it was not served, which is what is judged", ex.summary());
                self.out.exchanges.push(Exchange::note("not 401", n));
            }
            self.out.exchanges.push(ex);
        }
    }

    /// The Bearer challenge of a 401 to a request without a token; None
    /// (with the reason) when the request got no 401.
    async fn challenge(&mut self) -> Option<Result<Challenge, String>> {
        let ex = self.no_token_request().await?;
        if let Some(e) = &ex.error {
            self.out.set_error(format!("a request without a token: {e}"));
            self.out.exchanges.push(ex);
            return None;
        }
        let status = ex.status;
        let values: Vec<&str> =
            ex.headers.iter().filter(|(k, _)| k.eq_ignore_ascii_case("www-authenticate")).map(|(_, v)| v.as_str()).collect();
        let shown =
            if values.is_empty() { "no WWW-Authenticate header".to_string() } else { format!("WWW-Authenticate: {}", values.join(", ")) };
        let parsed = challenge::bearer(&challenge::parse(&values)).cloned();
        let summary = ex.summary();
        self.out.exchanges.push(ex);
        if status != Some(401) {
            self.out.set_na(format!(
                "a request without a token was not refused with 401 ({summary}), so there is no challenge to judge (the no-token case judges that)"
            ));
            return None;
        }
        Some(parsed.ok_or(format!("the 401 carries {shown}, with no Bearer challenge")))
    }

    async fn query_token(&mut self) {
        if !self.control().await || self.unprotected().await {
            return;
        }
        let Some((url, _, _)) = self.urls() else { return };
        let Ok(valid) = self.tokens.get(TokenKind::Valid) else { return };
        let sep = if url.contains('?') { '&' } else { '?' };
        let Ok(mut u) = reqwest::Url::parse(&url) else { return };
        u.query_pairs_mut().append_pair("access_token", &valid.value);
        let with_query = u.to_string();
        let shell = Some(match self.tokens.shell.get(&TokenKind::Valid) {
            Some(e) => format!("\"{url}{sep}access_token={e}\""),
            None => quote(&format!("{url}{sep}access_token=[the valid token]")),
        });
        let body = self.plain();
        let label = format!("{} with the valid token in the query string (?access_token=…), no Authorization header", method_of(&body));
        let Some(ex) = self.send_as(Some(&with_query), shell, None, String::new(), Msg::new(self.cx.rev, &label, &body)).await else {
            return;
        };
        if let Some(e) = &ex.error {
            self.out.set_error(format!("{label}: {e}"));
        } else if !ex.status.is_some_and(|s| (400..500).contains(&s)) {
            self.out.fail(format!(
                "a request whose token is only in the URI query string must be refused (HTTP 4xx, as a request without a token gets 401): an access token must not travel in the query string (it ends up in logs and browser history); got {}",
                ex.summary()
            ));
        }
        self.out.exchanges.push(ex);
    }

    async fn insufficient_scope(&mut self) {
        let Some(sc) = self.tokens.scope_check.clone() else {
            return self.out.set_na("no operation that needs a scope is configured ([auth.scope_check] method, params, scope)");
        };
        let reads = ["tools/list", "prompts/list", "resources/list", "resources/templates/list", "prompts/get", "resources/read"];
        if sc.method == "tools/call" {
            let name = sc.params.get("name").and_then(Value::as_str).unwrap_or("");
            if self.cx.policy.tool(name).call != Some(true) {
                return self.out.set_na(format!(
                    "[auth.scope_check] names tools/call of `{name}`, which the call policy does not allow ([tools.{name}] call = true allows it)"
                ));
            }
        } else if !reads.contains(&sc.method.as_str()) {
            return self.out.set_na(format!(
                "[auth.scope_check] names {}; mcpcert sends only list, get and read methods, or a tools/call the call policy allows",
                sc.method
            ));
        }
        let fewer = match self.tokens.get(TokenKind::MissingScope) {
            Ok(t) => t.clone(),
            Err(e) => return self.out.set_na(e),
        };
        if self.unprotected().await {
            return;
        }
        let params = Value::Object(sc.params.clone());
        let body = self.cx.request(&sc.method, Some(params.clone()));
        let label = format!("{} with the valid token", sc.method);
        let Some(ex) = self.send(None, Some(TokenKind::Valid), Msg::new(self.cx.rev, &label, &body)).await else { return };
        let served = ex.error.is_none() && ex.status.is_some_and(|s| (200..300).contains(&s));
        let why = ex.summary();
        self.out.exchanges.push(ex);
        if !served {
            return self.out.set_error(format!(
                "{} is not served with the valid token either ({why}), so a refusal for a missing scope shows nothing",
                sc.method
            ));
        }
        let body = self.cx.request(&sc.method, Some(params));
        let label = format!("{} with {} ({})", sc.method, TokenKind::MissingScope.describe(), fewer.claims);
        let Some(ex) = self.send(None, Some(TokenKind::MissingScope), Msg::new(self.cx.rev, &label, &body)).await else {
            return;
        };
        let values: Vec<&str> =
            ex.headers.iter().filter(|(k, _)| k.eq_ignore_ascii_case("www-authenticate")).map(|(_, v)| v.as_str()).collect();
        let ch = challenge::bearer(&challenge::parse(&values)).cloned();
        if let Some(e) = &ex.error {
            self.out.set_error(format!("{label}: {e}"));
        } else if ex.status != Some(403) {
            self.out.fail(format!(
                "{} with a token lacking `{}` must be answered HTTP 403 (insufficient scope); got {}",
                sc.method,
                sc.scope,
                ex.summary()
            ));
        } else {
            match ch {
                None => self
                    .out
                    .fail("the 403 carries no WWW-Authenticate Bearer challenge (error=\"insufficient_scope\", scope, resource_metadata)"),
                Some(c) => {
                    if c.params.get("error").map(String::as_str) != Some("insufficient_scope") {
                        self.out.fail(format!(
                            "the 403's challenge says error={:?}, not \"insufficient_scope\"",
                            c.params.get("error").map(String::as_str).unwrap_or("(none)")
                        ));
                    }
                    let scopes = c.params.get("scope").map(|s| challenge::scopes(Some(&json!(s)))).unwrap_or_default();
                    if !scopes.contains(&sc.scope) {
                        self.out.fail(format!(
                            "the 403's challenge scope ({}) does not name `{}`, the scope the operation needs",
                            scopes.join(" "),
                            sc.scope
                        ));
                    }
                    if !c.params.contains_key("resource_metadata") {
                        self.out.fail("the 403's challenge has no resource_metadata (as the 401 carries it)");
                    }
                }
            }
        }
        self.out.exchanges.push(ex);
    }

    async fn not_echoed(&mut self) {
        let mut exs = Vec::new();
        for k in [TokenKind::Valid, TokenKind::UnknownKey, TokenKind::Expired] {
            if let Ok(Some(ex)) = self.with_token(k).await {
                exs.push((k, ex));
            }
        }
        if exs.is_empty() {
            if let Err(why) = self.tokens.get(TokenKind::Valid) {
                self.out.set_na(why);
            }
            return;
        }
        let secrets: Vec<(TokenKind, String)> =
            [TokenKind::Valid, TokenKind::UnknownKey, TokenKind::Expired, TokenKind::BadSignature, TokenKind::AlgNone]
                .iter()
                .filter_map(|k| self.tokens.get(*k).ok().map(|t| (*k, t.value.clone())))
                .collect();
        for (sent, ex) in exs {
            if let Some(e) = &ex.error {
                self.out.set_error(format!("the request with {}: {e}", sent.describe()));
            }
            let mut texts: Vec<&str> = ex.headers.iter().map(|(_, v)| v.as_str()).collect();
            texts.extend(ex.body.as_deref());
            texts.extend(ex.frames.iter().map(|f| f.raw.as_str()));
            // The credential, or its signature alone (the part no one else knows).
            for (k, v) in &secrets {
                let sig = v.rsplit('.').next().filter(|s| s.len() >= 16).unwrap_or(v);
                if texts.iter().any(|t| t.contains(v.as_str()) || t.contains(sig)) {
                    self.out.fail(format!(
                        "the answer to the request with {} contains {} (shown [masked]): a token must never come back in a response, where logs and intermediaries keep it",
                        sent.describe(),
                        if *k == sent { "that token".to_string() } else { k.describe().to_string() }
                    ));
                }
            }
            self.out.exchanges.push(ex);
        }
    }
}

/// `s` as one shell word.
fn quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

fn method_of(body: &Value) -> &str {
    body.get("method").and_then(Value::as_str).unwrap_or("request")
}
