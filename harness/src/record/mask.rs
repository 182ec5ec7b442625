//! Secrets out of everything a run shows: the values of environment
//! variables whose names look secret, and of every configured header, are
//! replaced by `[masked]` wherever they occur — in what mcpcert sent, in
//! what the server sent back (a tool that echoes its environment), in
//! stderr, messages and reproducers — as CI systems mask secrets in logs.
//! The spawned server's own environment is left as it is.

use super::{CaseResult, Exchange, RevisionInfo};
use serde_json::Value;

/// Substrings (any letter case) of environment variable names whose values
/// are masked, by default.
pub const SECRET_ENV_NAMES: [&str; 6] = ["TOKEN", "SECRET", "PASSWORD", "KEY", "CREDENTIAL", "AUTH"];

/// Shorter values are not masked (they would turn up in unrelated text).
const MIN_ENV_VALUE: usize = 6;
const MIN_HEADER_VALUE: usize = 4;

pub const MASK: &str = "[masked]";

#[derive(Debug, Clone, Default)]
pub struct Masker {
    /// Longest first, so a secret that contains another is masked whole.
    secrets: Vec<String>,
}

impl Masker {
    /// The secrets of this process's environment (by `name_patterns`), plus
    /// `values` (configured header values and the like).
    pub fn new(name_patterns: &[String], env: impl IntoIterator<Item = (String, String)>, values: &[String]) -> Masker {
        let mut m = Masker::default();
        let upper: Vec<String> = name_patterns.iter().map(|p| p.to_ascii_uppercase()).collect();
        for (k, v) in env {
            let name = k.to_ascii_uppercase();
            if v.len() >= MIN_ENV_VALUE && upper.iter().any(|p| !p.is_empty() && name.contains(p.as_str())) {
                m.add(&v);
            }
        }
        for v in values {
            if v.len() >= MIN_HEADER_VALUE {
                m.add(v);
            }
            // `Bearer abc…`: the credential alone may be echoed too.
            if let Some((_, cred)) = v.split_once(' ')
                && cred.len() >= MIN_HEADER_VALUE
            {
                m.add(cred);
            }
        }
        m
    }

    /// These values masked too (a server.json's secret inputs).
    pub fn also(mut self, values: &[String]) -> Masker {
        for v in values.iter().filter(|v| v.len() >= MIN_HEADER_VALUE) {
            self.add(v);
        }
        self
    }

    fn add(&mut self, secret: &str) {
        let mut forms = vec![secret.to_string()];
        // As it appears inside JSON text (frames, bodies, what was sent).
        if let Ok(quoted) = serde_json::to_string(secret) {
            let inner = &quoted[1..quoted.len() - 1];
            if inner != secret {
                forms.push(inner.to_string());
            }
        }
        for f in forms {
            if !self.secrets.contains(&f) {
                self.secrets.push(f);
            }
        }
        self.secrets.sort_by_key(|s| std::cmp::Reverse(s.len()));
    }

    pub fn is_empty(&self) -> bool {
        self.secrets.is_empty()
    }

    /// `text` with every secret replaced.
    pub fn text(&self, text: &str) -> String {
        let mut out = text.to_string();
        for s in &self.secrets {
            if out.contains(s.as_str()) {
                out = out.replace(s.as_str(), MASK);
            }
        }
        out
    }

    fn string(&self, s: &mut String) {
        if self.secrets.iter().any(|x| s.contains(x.as_str())) {
            *s = self.text(s);
        }
    }

    /// Every string (and key) of a JSON value.
    pub fn value(&self, v: &mut Value) {
        match v {
            Value::String(s) => self.string(s),
            Value::Array(a) => a.iter_mut().for_each(|x| self.value(x)),
            Value::Object(o) => {
                if o.keys().any(|k| self.secrets.iter().any(|x| k.contains(x.as_str()))) {
                    let old = std::mem::take(o);
                    for (k, mut x) in old {
                        self.value(&mut x);
                        o.insert(self.text(&k), x);
                    }
                } else {
                    o.values_mut().for_each(|x| self.value(x));
                }
            }
            _ => {}
        }
    }

    pub fn exchange(&self, ex: &mut Exchange) {
        self.string(&mut ex.label);
        for (_, v) in ex.sent_headers.iter_mut().chain(ex.headers.iter_mut()) {
            self.string(v);
        }
        for s in [&mut ex.sent, &mut ex.body, &mut ex.note].into_iter().flatten() {
            self.string(s);
        }
        for f in ex.frames.iter_mut() {
            self.string(&mut f.raw);
            if let Some(p) = &mut f.problem {
                self.string(p);
            }
        }
        self.string(&mut ex.stderr);
        if let Some(e) = &mut ex.error {
            let (super::TransportError::Timeout(s)
            | super::TransportError::Closed(s)
            | super::TransportError::Io(s)
            | super::TransportError::TooLarge(s)) = e;
            self.string(s);
        }
        if let Some(r) = &mut ex.response {
            self.value(r);
        }
    }

    pub fn case(&self, r: &mut CaseResult) {
        if self.is_empty() {
            return;
        }
        self.string(&mut r.message);
        for s in [&mut r.reproducer, &mut r.stderr_tail].into_iter().flatten() {
            self.string(s);
        }
        r.transcript.iter_mut().for_each(|e| self.exchange(e));
    }

    pub fn revision(&self, info: &mut RevisionInfo) {
        self.string(&mut info.reason);
        for v in [&mut info.capabilities, &mut info.server_info].into_iter().flatten() {
            self.value(v);
        }
        if let Some(u) = &mut info.unreachable {
            self.string(u);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn masker() -> Masker {
        let env = vec![
            ("CI_JOB_TOKEN".to_string(), "glpat-very-secret".to_string()),
            ("HOME".to_string(), "/home/runner".to_string()),
            ("MY_AUTH".to_string(), "short".to_string()),
            ("DB_PASSWORD".to_string(), "pa\"ss\\word".to_string()),
        ];
        Masker::new(&SECRET_ENV_NAMES.map(String::from), env, &["Bearer hdr-credential-1".to_string()])
    }

    #[test]
    fn secret_env_values_and_header_values_are_masked_in_any_text() {
        let m = masker();
        assert_eq!(m.text("token glpat-very-secret in /home/runner"), "token [masked] in /home/runner");
        assert_eq!(m.text("sent Bearer hdr-credential-1, echoed hdr-credential-1"), "sent [masked], echoed [masked]");
        assert_eq!(m.text("short"), "short", "values under 6 characters are left alone");
        // Inside JSON text a quote or backslash is escaped.
        assert_eq!(m.text(r#"{"env":"pa\"ss\\word"}"#), r#"{"env":"[masked]"}"#);
    }

    #[test]
    fn json_values_keep_their_shape() {
        let m = masker();
        let mut v = serde_json::json!({"glpat-very-secret": [1, "x glpat-very-secret"], "n": 5});
        m.value(&mut v);
        assert_eq!(v, serde_json::json!({"[masked]": [1, "x [masked]"], "n": 5}));
    }
}
