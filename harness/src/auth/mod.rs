//! Tokens for judging a protected server (`[auth]`): the valid token the
//! whole run sends, and the wrong ones the authorization cases send.
//!
//! Two sources. The **built-in test issuer** (the default) signs JWTs with
//! keys of its own and serves, on 127.0.0.1 for the length of the run, its
//! RFC 8414 metadata and JWKS (`issuer.rs`); the server under test is set
//! up to trust it (`mcpcert auth-setup` prints how). **Given tokens**
//! (`[auth] token = { env = "…" }`, and optionally an expired one, one for
//! another audience, one from another issuer, one lacking a scope) judge a
//! server tied to a real authorization server; tokens that only a key
//! holder could make are then `n/a` unless given. Every token is a secret:
//! the run masks each one wherever it could appear.

mod issuer;
mod keys;

pub use issuer::{Issuer, Seen, Upstream, UpstreamLog};
pub use keys::{Alg, Keys};

use base64::Engine;
use serde::Deserialize;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// `[auth]` in the target config.
#[derive(Debug, Deserialize, Default, Clone)]
#[serde(deny_unknown_fields)]
pub struct AuthConfig {
    /// The built-in issuer's port on 127.0.0.1 (default: any free one; a
    /// fixed port keeps its URL, the `iss` of its tokens, the same).
    pub port: Option<u16>,
    /// Keep the issuer's signing keys in this file (made when missing).
    pub key_file: Option<PathBuf>,
    /// RS256 (default) or ES256.
    pub alg: Option<Alg>,
    /// The `aud` of valid tokens (default: the target's URL, the server's
    /// canonical URI).
    pub audience: Option<String>,
    /// The `scope` of valid tokens (space-separated in the claim).
    #[serde(default)]
    pub scopes: Vec<String>,
    /// Play the upstream API the server calls, on 127.0.0.1 at this port,
    /// to see whether it passes the caller's token through.
    pub upstream_port: Option<u16>,
    /// The `sub` of the tokens (default "mcpcert").
    pub subject: Option<String>,
    /// An operation that needs a scope: the insufficient-scope case sends
    /// it with a token lacking that scope.
    pub scope_check: Option<ScopeCheck>,
    /// Given tokens: the valid one (this turns the built-in issuer off).
    pub token: Option<EnvRef>,
    pub expired_token: Option<EnvRef>,
    pub other_audience_token: Option<EnvRef>,
    pub other_issuer_token: Option<EnvRef>,
    pub not_yet_valid_token: Option<EnvRef>,
    pub missing_scope_token: Option<EnvRef>,
}

/// A value read from an environment variable.
#[derive(Debug, Deserialize, Clone)]
#[serde(deny_unknown_fields)]
pub struct EnvRef {
    pub env: String,
}

/// An operation that needs `scope`: `method` with `params` (a tools/call
/// is sent only for a tool the call policy allows).
#[derive(Debug, Deserialize, Clone)]
#[serde(deny_unknown_fields)]
pub struct ScopeCheck {
    pub method: String,
    #[serde(default)]
    pub params: serde_json::Map<String, Value>,
    pub scope: String,
}

/// The tokens a case can send.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TokenKind {
    Valid,
    /// Not a JWT at all.
    Malformed,
    /// The valid token with its signature changed.
    BadSignature,
    /// The valid token's claims signed by a key the issuer never published.
    UnknownKey,
    /// The valid token's claims with `alg: none` and no signature.
    AlgNone,
    Expired,
    NotYetValid,
    OtherAudience,
    OtherIssuer,
    MissingScope,
}

impl TokenKind {
    /// What a report says was sent (the claims, never the token).
    pub fn describe(self) -> &'static str {
        match self {
            TokenKind::Valid => "the valid token",
            TokenKind::Malformed => "a malformed token (not a JWT)",
            TokenKind::BadSignature => "the valid token with its signature changed",
            TokenKind::UnknownKey => "the valid token's claims signed by a key the issuer's JWKS does not hold",
            TokenKind::AlgNone => "the valid token's claims with header alg \"none\" and no signature",
            TokenKind::Expired => "a token whose exp is in the past",
            TokenKind::NotYetValid => "a token whose nbf is in the future",
            TokenKind::OtherAudience => "a token whose aud names another resource",
            TokenKind::OtherIssuer => "a token whose iss names another issuer",
            TokenKind::MissingScope => "a token lacking the scope the operation needs",
        }
    }

    /// Its name for `mcpcert auth-token --kind`.
    pub fn name(self) -> &'static str {
        match self {
            TokenKind::Valid => "valid",
            TokenKind::Malformed => "malformed",
            TokenKind::BadSignature => "bad-signature",
            TokenKind::UnknownKey => "unknown-key",
            TokenKind::AlgNone => "alg-none",
            TokenKind::Expired => "expired",
            TokenKind::NotYetValid => "not-yet-valid",
            TokenKind::OtherAudience => "other-audience",
            TokenKind::OtherIssuer => "other-issuer",
            TokenKind::MissingScope => "missing-scope",
        }
    }

    /// The `[auth]` key that gives it (given tokens).
    pub fn config_key(self) -> &'static str {
        match self {
            TokenKind::Valid => "token",
            TokenKind::Expired => "expired_token",
            TokenKind::NotYetValid => "not_yet_valid_token",
            TokenKind::OtherAudience => "other_audience_token",
            TokenKind::OtherIssuer => "other_issuer_token",
            TokenKind::MissingScope => "missing_scope_token",
            _ => "",
        }
    }
}

/// `s` with its first letter in upper case.
fn capitalized(s: &str) -> String {
    let mut c = s.chars();
    c.next().map(|f| f.to_uppercase().chain(c).collect()).unwrap_or_default()
}

/// One token and what can be shown of it.
#[derive(Debug, Clone)]
pub struct Token {
    pub value: String,
    /// Its claims as a report may show them (iss, aud, exp, nbf, scope).
    pub claims: String,
}

/// Where the tokens come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// The built-in issuer at this URL.
    Builtin {
        issuer: String,
    },
    Given,
    /// No token at all: the server turned mcpcert away (401) and the config
    /// gives none; only what needs no token is judged.
    None,
}

/// The run's tokens, by kind; a kind missing is `n/a` for its cases.
#[derive(Debug, Clone)]
pub struct Tokens {
    pub source: Source,
    tokens: BTreeMap<TokenKind, Token>,
    /// How a reproducer's curl line writes each token: a shell expression
    /// that makes it again (`$(mcpcert auth-token …)`) or reads it (`$VAR`),
    /// never the token itself.
    pub shell: BTreeMap<TokenKind, String>,
    pub scope_check: Option<ScopeCheck>,
    pub audience: String,
    /// `[auth] upstream_port`: where mcpcert plays the server's upstream,
    /// and what reached it.
    pub upstream: Option<(String, UpstreamLog)>,
}

impl Tokens {
    /// A protected server judged without a token (`target_url`: the
    /// resource's identifier): every token is missing.
    pub fn without_token(target_url: &str) -> Tokens {
        Tokens {
            source: Source::None,
            tokens: BTreeMap::new(),
            shell: BTreeMap::new(),
            scope_check: None,
            audience: target_url.to_string(),
            upstream: None,
        }
    }

    /// The token of `kind`, or why there is none (the case is n/a).
    pub fn get(&self, kind: TokenKind) -> Result<&Token, String> {
        self.tokens.get(&kind).ok_or_else(|| match (kind, &self.source) {
            (_, Source::None) => {
                "needs a token: the server answers 401 without one, and the config gives none (`token = { env = \"MCP_TOKEN\" }` in [auth])".into()
            }
            (TokenKind::MissingScope, Source::Builtin { .. }) => {
                "no operation that needs a scope is configured ([auth.scope_check] method, params, scope)".into()
            }
            (TokenKind::NotYetValid, Source::Given) => {
                "a token that is not yet valid can only be made by the authorization server's key; mcpcert's built-in issuer makes one"
                    .into()
            }
            (k, _) if k.config_key().is_empty() => format!(
                "mcpcert makes {} from the valid token, and the token given is not a JWT (a static key or an opaque token), so it could not be made",
                k.describe()
            ),
            (k, _) => format!(
                "{} was not given: `{} = {{ env = \"VARIABLE\" }}` in [auth] names the environment variable that holds it",
                capitalized(k.describe()),
                k.config_key()
            ),
        })
    }

    /// Every token value, and each JWT's signature alone (a server may
    /// echo that part), for the masker.
    pub fn secrets(&self) -> Vec<String> {
        let mut out: Vec<String> = self.tokens.values().map(|t| t.value.clone()).collect();
        for t in self.tokens.values() {
            if t.value.matches('.').count() == 2
                && let Some(sig) = t.value.rsplit('.').next().filter(|s| s.len() >= 16)
            {
                out.push(sig.to_string());
            }
        }
        out
    }

    /// The reproducers' way to write each token, for a run whose config is
    /// at `config`: the built-in issuer's (with a fixed port and kept keys)
    /// by `mcpcert auth-token`, given ones from their variables.
    pub fn set_shell(&mut self, cfg: &AuthConfig, config: &std::path::Path) {
        let q = |s: &str| format!("'{}'", s.replace('\'', "'\\''"));
        let kinds: Vec<TokenKind> = self.tokens.keys().copied().collect();
        for k in kinds {
            let given = match k {
                TokenKind::Valid => cfg.token.as_ref(),
                TokenKind::Expired => cfg.expired_token.as_ref(),
                TokenKind::OtherAudience => cfg.other_audience_token.as_ref(),
                TokenKind::OtherIssuer => cfg.other_issuer_token.as_ref(),
                TokenKind::NotYetValid => cfg.not_yet_valid_token.as_ref(),
                TokenKind::MissingScope => cfg.missing_scope_token.as_ref(),
                _ => None,
            };
            let expr = match (&self.source, given) {
                (Source::Given, Some(r)) => Some(format!("${{{}#Bearer }}", r.env)),
                (Source::Builtin { .. }, _) if cfg.port.is_some() && cfg.key_file.is_some() => Some(format!(
                    "$(mcpcert auth-token --config {} --aud {} --kind {})",
                    q(&config.display().to_string()),
                    q(&self.audience),
                    k.name()
                )),
                _ => None,
            };
            if let Some(e) = expr {
                self.shell.insert(k, e);
            }
        }
    }

    /// The `Authorization` header value of a token.
    pub fn bearer(&self, kind: TokenKind) -> Result<String, String> {
        Ok(format!("Bearer {}", self.get(kind)?.value))
    }
}

fn now() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0)
}

/// A host name that cannot resolve, for audiences and issuers that are not
/// the server's.
const OTHER_AUDIENCE: &str = "https://mcpcert-other-resource.invalid/mcp";
const OTHER_ISSUER: &str = "https://mcpcert-other-issuer.invalid";

/// What a report shows of a token: its iss, aud, exp, nbf and scope
/// (relative times), read from its payload without checking it.
pub fn shown_claims(token: &str) -> String {
    let Some(p) = payload(token) else { return "not a JWT".into() };
    let t = now() as i64;
    let mut out = Vec::new();
    for k in ["iss", "aud", "scope"] {
        if let Some(v) = p.get(k) {
            out.push(format!("{k} = {}", v.as_str().map(String::from).unwrap_or_else(|| v.to_string())));
        }
    }
    for k in ["exp", "nbf"] {
        if let Some(v) = p.get(k).and_then(|v| v.as_i64()) {
            let d = v - t;
            out.push(format!("{k} = now {} {} s", if d < 0 { "-" } else { "+" }, d.abs()));
        }
    }
    if out.is_empty() { "no iss, aud, scope, exp or nbf claim".into() } else { out.join(", ") }
}

fn b64() -> base64::engine::GeneralPurpose {
    base64::engine::general_purpose::URL_SAFE_NO_PAD
}

fn payload(token: &str) -> Option<Value> {
    let mut parts = token.split('.');
    let (_, p) = (parts.next()?, parts.next()?);
    serde_json::from_slice(&b64().decode(p).ok()?).ok()
}

/// The valid token with one byte of its signature changed.
fn bad_signature(valid: &str) -> Option<String> {
    let (head, sig) = valid.rsplit_once('.')?;
    let mut bytes = b64().decode(sig).ok()?;
    let last = bytes.last_mut()?;
    *last ^= 0x01;
    Some(format!("{head}.{}", b64().encode(bytes)))
}

/// `claims` under a header with `alg: none`, no signature (RFC 7519 §6).
fn alg_none(claims: &Value) -> String {
    let head = b64().encode(json!({"alg": "none", "typ": "JWT"}).to_string());
    format!("{head}.{}.", b64().encode(claims.to_string()))
}

fn token(value: String) -> Token {
    Token { claims: shown_claims(&value), value }
}

impl AuthConfig {
    /// The tokens of a run against `target_url`, and the built-in issuer
    /// to serve while it runs (None with given tokens). `env` reads a
    /// variable.
    pub fn prepare(&self, target_url: &str, env: impl Fn(&str) -> Option<String>) -> Result<(Tokens, Option<Issuer>), String> {
        let audience = self.audience.clone().unwrap_or_else(|| target_url.to_string());
        let alg = self.alg.unwrap_or_default();
        let mut tokens = BTreeMap::new();
        let given = |r: &Option<EnvRef>, key: &str| -> Result<Option<String>, String> {
            match r {
                None => Ok(None),
                Some(r) => env(&r.env)
                    .map(|v| Some(v.trim().trim_start_matches("Bearer ").to_string()))
                    .ok_or_else(|| format!("at auth.{key}: environment variable `{}` is not set", r.env)),
            }
        };
        let keys = Keys::load_or_create(self.key_file.as_deref())?;
        let (source, issuer) = match given(&self.token, "token")? {
            Some(valid) => {
                for (r, key, kind) in [
                    (&self.expired_token, "expired_token", TokenKind::Expired),
                    (&self.other_audience_token, "other_audience_token", TokenKind::OtherAudience),
                    (&self.other_issuer_token, "other_issuer_token", TokenKind::OtherIssuer),
                    (&self.not_yet_valid_token, "not_yet_valid_token", TokenKind::NotYetValid),
                    (&self.missing_scope_token, "missing_scope_token", TokenKind::MissingScope),
                ] {
                    if let Some(v) = given(r, key)? {
                        tokens.insert(kind, token(v));
                    }
                }
                tokens.insert(TokenKind::Valid, token(valid));
                (Source::Given, None)
            }
            None => {
                let issuer = Issuer::bind(self.port.unwrap_or(0), &keys)?;
                let iss = issuer.url().to_string();
                tokens = self.minted(&keys, &iss, &audience)?;
                (Source::Builtin { issuer: iss }, Some(issuer))
            }
        };
        derive(&mut tokens, &keys, alg)?;
        Ok((Tokens { source, tokens, shell: BTreeMap::new(), scope_check: self.scope_check.clone(), audience, upstream: None }, issuer))
    }

    /// The built-in issuer's tokens without serving it (`mcpcert
    /// auth-token`): its URL from the fixed `port`, its keys from
    /// `key_file`.
    pub fn offline(&self, audience: Option<&str>) -> Result<Tokens, String> {
        let port = self.port.ok_or("the issuer's URL needs a fixed port ([auth] port or --port)")?;
        let audience = audience.map(String::from).or_else(|| self.audience.clone()).ok_or("no audience: --aud URL (the server's URL)")?;
        if self.key_file.is_none() {
            return Err("the server trusts keys kept in a file: [auth] key_file or --key-file".into());
        }
        let keys = Keys::load_or_create(self.key_file.as_deref())?;
        let iss = format!("http://127.0.0.1:{port}");
        let mut tokens = self.minted(&keys, &iss, &audience)?;
        derive(&mut tokens, &keys, self.alg.unwrap_or_default())?;
        Ok(Tokens {
            source: Source::Builtin { issuer: iss },
            tokens,
            shell: BTreeMap::new(),
            scope_check: self.scope_check.clone(),
            audience,
            upstream: None,
        })
    }

    /// The tokens the built-in issuer at `iss` signs for `audience`.
    fn minted(&self, keys: &Keys, iss: &str, audience: &str) -> Result<BTreeMap<TokenKind, Token>, String> {
        let alg = self.alg.unwrap_or_default();
        let mut tokens = BTreeMap::new();
        let t = now();
        let scope = self.scopes.join(" ");
        let claims = |iss: &str, aud: &str, nbf: u64, exp: u64, scope: &str| {
            let mut c = json!({"iss": iss, "sub": self.subject.as_deref().unwrap_or("mcpcert"), "aud": aud,
                "iat": nbf, "nbf": nbf, "exp": exp, "client_id": "mcpcert", "jti": format!("mcpcert-{t}-{exp}")});
            if !scope.is_empty() {
                c["scope"] = json!(scope);
            }
            c
        };
        let sign = |c: &Value| keys.sign(alg, c, false).map(token);
        tokens.insert(TokenKind::Valid, sign(&claims(iss, audience, t - 60, t + 7200, &scope))?);
        tokens.insert(TokenKind::Expired, sign(&claims(iss, audience, t - 7200, t - 3600, &scope))?);
        tokens.insert(TokenKind::NotYetValid, sign(&claims(iss, audience, t + 3600, t + 10800, &scope))?);
        tokens.insert(TokenKind::OtherAudience, sign(&claims(iss, OTHER_AUDIENCE, t - 60, t + 7200, &scope))?);
        tokens.insert(TokenKind::OtherIssuer, sign(&claims(OTHER_ISSUER, audience, t - 60, t + 7200, &scope))?);
        if let Some(sc) = &self.scope_check {
            let fewer: Vec<&str> = self.scopes.iter().map(String::as_str).filter(|s| *s != sc.scope).collect();
            tokens.insert(TokenKind::MissingScope, sign(&claims(iss, audience, t - 60, t + 7200, &fewer.join(" ")))?);
        }
        Ok(tokens)
    }
}

/// The tokens made from the valid one's own claims, whatever its source.
fn derive(tokens: &mut BTreeMap<TokenKind, Token>, keys: &Keys, alg: Alg) -> Result<(), String> {
    {
        let valid = tokens[&TokenKind::Valid].value.clone();
        tokens.insert(TokenKind::Malformed, token("mcpcert-malformed-token".into()));
        if let Some(bad) = bad_signature(&valid) {
            tokens.insert(TokenKind::BadSignature, token(bad));
        }
        if let Some(p) = payload(&valid) {
            tokens.insert(TokenKind::AlgNone, token(alg_none(&p)));
            tokens.insert(TokenKind::UnknownKey, token(keys.sign(alg, &p, true)?));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_tokens_carry_the_claims_they_say() {
        let cfg = AuthConfig { scopes: vec!["mcp:read".into(), "mcp:tools".into()], ..Default::default() };
        let (t, issuer) = cfg.prepare("http://127.0.0.1:9/mcp", |_| None).unwrap();
        let Source::Builtin { issuer: iss } = &t.source else { panic!("built-in") };
        assert!(issuer.is_some() && iss.starts_with("http://127.0.0.1:"));
        let valid = payload(&t.get(TokenKind::Valid).unwrap().value).unwrap();
        assert_eq!(valid["aud"], "http://127.0.0.1:9/mcp");
        assert_eq!(valid["scope"], "mcp:read mcp:tools");
        assert!(valid["exp"].as_u64().unwrap() > now());
        assert!(payload(&t.get(TokenKind::Expired).unwrap().value).unwrap()["exp"].as_u64().unwrap() < now());
        assert!(payload(&t.get(TokenKind::NotYetValid).unwrap().value).unwrap()["nbf"].as_u64().unwrap() > now());
        assert_eq!(payload(&t.get(TokenKind::OtherAudience).unwrap().value).unwrap()["aud"], OTHER_AUDIENCE);
        assert_eq!(payload(&t.get(TokenKind::OtherIssuer).unwrap().value).unwrap()["iss"], OTHER_ISSUER);
        assert!(t.get(TokenKind::MissingScope).unwrap_err().contains("scope_check"));
        let none = &t.get(TokenKind::AlgNone).unwrap().value;
        assert!(none.ends_with('.') && b64().decode(none.split('.').next().unwrap()).unwrap().starts_with(b"{\"alg\":\"none\""));
        assert_ne!(t.get(TokenKind::BadSignature).unwrap().value, t.get(TokenKind::Valid).unwrap().value);
        assert!(t.get(TokenKind::Valid).unwrap().claims.contains("aud = http://127.0.0.1:9/mcp"));
        assert!(!t.get(TokenKind::Valid).unwrap().claims.contains(&t.get(TokenKind::Valid).unwrap().value));
    }

    #[test]
    fn given_tokens_name_what_is_missing() {
        let cfg = AuthConfig { token: Some(EnvRef { env: "T".into() }), ..Default::default() };
        let valid = alg_none(&json!({"iss": "https://as.invalid", "aud": "x"}));
        let (t, issuer) = cfg.prepare("http://127.0.0.1:9/mcp", |_| Some(format!("Bearer {valid}"))).unwrap();
        assert!(issuer.is_none() && t.source == Source::Given);
        assert_eq!(t.get(TokenKind::Valid).unwrap().value, valid);
        assert!(t.get(TokenKind::Expired).unwrap_err().contains("expired_token"), "{}", t.get(TokenKind::Expired).unwrap_err());
        assert!(t.get(TokenKind::UnknownKey).is_ok() && t.get(TokenKind::AlgNone).is_ok());
        // The n/a texts read as sentences with the real key names.
        assert_eq!(
            t.get(TokenKind::Expired).unwrap_err(),
            "A token whose exp is in the past was not given: `expired_token = { env = \"VARIABLE\" }` in [auth] names the environment variable that holds it"
        );
        let (k, _) = cfg.prepare("http://127.0.0.1:9/mcp", |_| Some("Bearer static-key".into())).unwrap();
        let e = k.get(TokenKind::BadSignature).unwrap_err();
        assert!(
            e.starts_with("mcpcert makes the valid token with its signature changed from the valid token") && e.contains("not a JWT"),
            "{e}"
        );
        let missing = AuthConfig { token: Some(EnvRef { env: "T".into() }), ..Default::default() }.prepare("u", |_| None);
        assert!(missing.unwrap_err().contains("`T` is not set"));
    }
}
