//! The built-in test issuer's signing keys: one RSA (RS256) and one P-256
//! (ES256) key, made fresh for a run or kept in a file (`[auth] key_file`)
//! so that a server configured once keeps trusting them. The signing is
//! `jsonwebtoken`'s; the keys are made by `rsa` and `p256`.

use jsonwebtoken::jwk::{Jwk, PublicKeyUse};
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde_json::{Value, json};
use sha2::Digest;
use std::path::Path;

/// A signing algorithm the issuer offers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Deserialize, serde::Serialize)]
pub enum Alg {
    #[default]
    RS256,
    ES256,
}

impl Alg {
    pub fn as_str(self) -> &'static str {
        match self {
            Alg::RS256 => "RS256",
            Alg::ES256 => "ES256",
        }
    }
    fn jwt(self) -> Algorithm {
        match self {
            Alg::RS256 => Algorithm::RS256,
            Alg::ES256 => Algorithm::ES256,
        }
    }
}

struct Key {
    alg: Alg,
    kid: String,
    pem: String,
    enc: EncodingKey,
}

impl Key {
    fn from_pem(alg: Alg, pem: &str) -> Result<Key, String> {
        let enc = match alg {
            Alg::RS256 => EncodingKey::from_rsa_pem(pem.as_bytes()),
            Alg::ES256 => EncodingKey::from_ec_pem(pem.as_bytes()),
        }
        .map_err(|e| format!("{} key: {e}", alg.as_str()))?;
        let digest = sha2::Sha256::digest(pem.as_bytes());
        let kid = format!("mcpcert-{}-{}", alg.as_str().to_ascii_lowercase(), hex(&digest[..6]));
        Ok(Key { alg, kid, pem: pem.to_string(), enc })
    }

    fn generate(alg: Alg) -> Result<Key, String> {
        use p256::pkcs8::EncodePrivateKey;
        let pem = match alg {
            Alg::RS256 => {
                let k = rsa::PrivateKey::new(&mut getrandom::SysRng, 2048).map_err(|e| format!("RSA key: {e}"))?;
                k.to_pkcs8_pem(p256::pkcs8::LineEnding::LF).map_err(|e| format!("RSA key: {e}"))?.to_string()
            }
            Alg::ES256 => {
                let mut seed = [0u8; 32];
                let k = loop {
                    getrandom::fill(&mut seed).map_err(|e| format!("P-256 key: {e}"))?;
                    if let Ok(k) = p256::SecretKey::from_slice(&seed) {
                        break k;
                    }
                };
                k.to_pkcs8_pem(p256::pkcs8::LineEnding::LF).map_err(|e| format!("P-256 key: {e}"))?.to_string()
            }
        };
        Key::from_pem(alg, &pem)
    }

    fn jwk(&self) -> Result<Value, String> {
        let mut jwk =
            Jwk::from_encoding_key(&self.enc, self.alg.jwt()).map_err(|e| format!("JWK of the {} key: {e}", self.alg.as_str()))?;
        jwk.common.key_id = Some(self.kid.clone());
        jwk.common.public_key_use = Some(PublicKeyUse::Signature);
        serde_json::to_value(jwk).map_err(|e| e.to_string())
    }
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// The issuer's keys (what its JWKS publishes), and one more of each kind
/// that it never publishes (tokens signed by a key the server cannot know).
pub struct Keys {
    published: Vec<Key>,
    unknown: Vec<Key>,
}

impl Keys {
    /// Fresh keys; with `file`, the published ones are read from it, or
    /// made and written there (mode 0600) when it does not exist yet.
    pub fn load_or_create(file: Option<&Path>) -> Result<Keys, String> {
        let unknown = vec![Key::generate(Alg::RS256)?, Key::generate(Alg::ES256)?];
        let published = match file {
            Some(p) if p.exists() => {
                let text = std::fs::read_to_string(p).map_err(|e| format!("key file {}: {e}", p.display()))?;
                let v: Value = serde_json::from_str(&text).map_err(|e| format!("key file {}: {e}", p.display()))?;
                let mut keys = Vec::new();
                for alg in [Alg::RS256, Alg::ES256] {
                    let pem = v.get(alg.as_str()).and_then(|x| x.as_str()).ok_or_else(|| {
                        format!("key file {}: no {} key (it holds {{\"RS256\": PEM, \"ES256\": PEM}})", p.display(), alg.as_str())
                    })?;
                    keys.push(Key::from_pem(alg, pem).map_err(|e| format!("key file {}: {e}", p.display()))?);
                }
                keys
            }
            _ => {
                let keys = vec![Key::generate(Alg::RS256)?, Key::generate(Alg::ES256)?];
                if let Some(p) = file {
                    let text = json!({"RS256": keys[0].pem, "ES256": keys[1].pem}).to_string();
                    write_private(p, &text).map_err(|e| format!("key file {}: {e}", p.display()))?;
                }
                keys
            }
        };
        Ok(Keys { published, unknown })
    }

    /// The JWKS document (RFC 7517) of the published keys.
    pub fn jwks(&self) -> Result<Value, String> {
        Ok(json!({"keys": self.published.iter().map(Key::jwk).collect::<Result<Vec<_>, _>>()?}))
    }

    /// The published public key of `alg` as PEM (SubjectPublicKeyInfo), for
    /// a server configured with a key instead of a JWKS URL.
    pub fn public_pem(&self, alg: Alg) -> Result<String, String> {
        use p256::pkcs8::{DecodePrivateKey, EncodePublicKey};
        let k = self.published.iter().find(|k| k.alg == alg).ok_or("no such key")?;
        let le = p256::pkcs8::LineEnding::LF;
        match alg {
            Alg::RS256 => {
                let sk = rsa::PrivateKey::from_pkcs8_pem(&k.pem).map_err(|e| e.to_string())?;
                rsa::PublicKey::from(&sk).to_public_key_pem(le).map_err(|e| e.to_string())
            }
            Alg::ES256 => {
                let sk = p256::SecretKey::from_pkcs8_pem(&k.pem).map_err(|e| e.to_string())?;
                sk.public_key().to_public_key_pem(le).map_err(|e| e.to_string())
            }
        }
    }

    /// `claims` signed with the published key of `alg` (or, `unknown`, with
    /// the key of that kind the JWKS does not hold), `kid` in the header.
    pub fn sign(&self, alg: Alg, claims: &Value, unknown: bool) -> Result<String, String> {
        let set = if unknown { &self.unknown } else { &self.published };
        let k = set.iter().find(|k| k.alg == alg).ok_or("no such key")?;
        let mut h = Header::new(alg.jwt());
        h.typ = Some("JWT".into());
        h.kid = Some(if unknown { format!("{}-unpublished", k.kid) } else { k.kid.clone() });
        jsonwebtoken::encode(&h, claims, &k.enc).map_err(|e| format!("signing a token: {e}"))
    }

    /// The kid of the published key of `alg`.
    pub fn kid(&self, alg: Alg) -> String {
        self.published.iter().find(|k| k.alg == alg).map(|k| k.kid.clone()).unwrap_or_default()
    }
}

fn write_private(p: &Path, text: &str) -> std::io::Result<()> {
    use std::io::Write;
    let mut o = std::fs::OpenOptions::new();
    o.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        o.mode(0o600);
    }
    o.open(p)?.write_all(text.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_verify_with_the_published_key_only() {
        let dir = std::env::temp_dir().join(format!("mcpcert-keys-{}", std::process::id()));
        let _ = std::fs::remove_file(&dir);
        let keys = Keys::load_or_create(Some(&dir)).unwrap();
        let again = Keys::load_or_create(Some(&dir)).unwrap();
        assert_eq!(keys.kid(Alg::RS256), again.kid(Alg::RS256), "the key file keeps the keys");
        let _ = std::fs::remove_file(&dir);
        let claims = json!({"sub": "x", "aud": "a", "exp": 4_000_000_000u64});
        for alg in [Alg::RS256, Alg::ES256] {
            let pem = keys.public_pem(alg).unwrap();
            let dec = match alg {
                Alg::RS256 => jsonwebtoken::DecodingKey::from_rsa_pem(pem.as_bytes()).unwrap(),
                Alg::ES256 => jsonwebtoken::DecodingKey::from_ec_pem(pem.as_bytes()).unwrap(),
            };
            let mut v = jsonwebtoken::Validation::new(alg.jwt());
            v.set_audience(&["a"]);
            let good = keys.sign(alg, &claims, false).unwrap();
            assert!(jsonwebtoken::decode::<Value>(&good, &dec, &v).is_ok(), "{alg:?}");
            let bad = keys.sign(alg, &claims, true).unwrap();
            assert!(jsonwebtoken::decode::<Value>(&bad, &dec, &v).is_err(), "{alg:?}: the unpublished key verifies");
            // The JWKS entry verifies too.
            let jwks: jsonwebtoken::jwk::JwkSet = serde_json::from_value(keys.jwks().unwrap()).unwrap();
            let jwk = jwks.find(&keys.kid(alg)).unwrap();
            assert!(jsonwebtoken::decode::<Value>(&good, &jsonwebtoken::DecodingKey::from_jwk(jwk).unwrap(), &v).is_ok());
        }
    }
}
