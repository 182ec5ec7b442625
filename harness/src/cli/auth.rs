//! `mcpcert auth-setup` and `mcpcert auth-token`: what a protected server
//! must trust to be judged with the built-in test issuer, and a token of
//! that issuer for a reproducer's curl line.

use crate::{EXIT_OK, usage};
use mcpcert::auth::{Alg, AuthConfig, Keys, TokenKind};
use mcpcert::report::console::Console;
use serde_json::json;
use std::path::PathBuf;

/// The issuer's settings: `[auth]` of `--config`, then the flags.
#[derive(clap::Args, Debug, Clone)]
pub struct IssuerArgs {
    /// A target config whose [auth] table gives the port, key file, scopes.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Keep the issuer's signing keys in this file (made when missing).
    #[arg(long, value_name = "FILE")]
    pub key_file: Option<PathBuf>,
    /// The issuer's port on 127.0.0.1 (its URL is the tokens' iss).
    #[arg(long, value_name = "PORT")]
    pub port: Option<u16>,
}

impl IssuerArgs {
    fn auth(&self) -> Result<AuthConfig, u8> {
        let mut a = match &self.config {
            Some(p) => mcpcert::config::load(p).map_err(usage)?.auth.unwrap_or_default(),
            None => AuthConfig::default(),
        };
        if self.key_file.is_some() {
            a.key_file = self.key_file.clone();
        }
        if self.port.is_some() {
            a.port = self.port;
        }
        if a.port.is_none() || a.key_file.is_none() {
            return Err(usage(
                "a server configured once keeps trusting the issuer only with a fixed port and kept keys: give --port and --key-file (or [auth] port and key_file)",
            ));
        }
        Ok(a)
    }
}

/// `auth-setup`: print (and with `out`, write as JSON) the issuer URL,
/// its metadata and JWKS URLs, the JWKS and the public keys.
pub fn setup(args: &IssuerArgs, out: Option<&PathBuf>) -> u8 {
    let a = match args.auth() {
        Ok(a) => a,
        Err(code) => return code,
    };
    let keys = match Keys::load_or_create(a.key_file.as_deref()) {
        Ok(k) => k,
        Err(e) => return usage(e),
    };
    let (Ok(jwks), Ok(rs), Ok(es)) = (keys.jwks(), keys.public_pem(Alg::RS256), keys.public_pem(Alg::ES256)) else {
        return usage("the keys could not be read back");
    };
    let iss = format!("http://127.0.0.1:{}", a.port.unwrap_or_default());
    let doc = json!({
        "issuer": iss,
        "jwks_uri": format!("{iss}/jwks.json"),
        "metadata": format!("{iss}/.well-known/oauth-authorization-server"),
        "audience": a.audience.clone().unwrap_or_else(|| "the target's URL (its canonical URI)".into()),
        "algorithms": [a.alg.unwrap_or_default().as_str()],
        "scopes": a.scopes,
        "jwks": jwks,
        "public_keys": {"RS256": rs, "ES256": es},
    });
    if let Some(p) = out
        && let Err(e) = std::fs::write(p, format!("{doc:#}\n"))
    {
        return usage(format!("--out {}: {e}", p.display()));
    }
    let alg = a.alg.unwrap_or_default();
    let pem = if alg == Alg::RS256 { &doc["public_keys"]["RS256"] } else { &doc["public_keys"]["ES256"] };
    Console::new().line(format!(
        "issuer (iss):  {iss}\njwks_uri:      {iss}/jwks.json   (served only while a run lasts)\nmetadata:      {iss}/.well-known/oauth-authorization-server\naudience (aud): {}\nalgorithm:     {}\nscopes:        {}\npublic key ({}):\n{}",
        doc["audience"].as_str().unwrap_or(""),
        alg.as_str(),
        if a.scopes.is_empty() { "(none)".into() } else { a.scopes.join(" ") },
        alg.as_str(),
        pem.as_str().unwrap_or("").trim_end()
    ));
    EXIT_OK
}

/// `auth-token`: one token of the built-in issuer, printed alone.
pub fn token(args: &IssuerArgs, aud: Option<&str>, kind: &str) -> u8 {
    let kind: TokenKind = match serde_json::from_value(json!(kind)) {
        Ok(k) => k,
        Err(_) => {
            return usage(format!(
                "--kind must be one of valid, malformed, bad-signature, unknown-key, alg-none, expired, not-yet-valid, other-audience, other-issuer, missing-scope (got `{kind}`)"
            ));
        }
    };
    let a = match args.auth() {
        Ok(a) => a,
        Err(code) => return code,
    };
    match a.offline(aud).and_then(|t| t.get(kind).map(|t| t.value.clone())) {
        Ok(t) => {
            Console::new().line(t);
            EXIT_OK
        }
        Err(e) => usage(e),
    }
}
