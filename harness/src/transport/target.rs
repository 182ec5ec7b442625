//! What to reach: a command to spawn or a URL, and how each is shown in
//! reports (secrets redacted).

use super::command::shell_quote;
use super::http::HttpSpec;
use super::stdio::StdioSpec;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// The two ways of reaching a server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Transport {
    Stdio,
    Http,
}

impl Transport {
    pub fn as_str(self) -> &'static str {
        match self {
            Transport::Stdio => "stdio",
            Transport::Http => "http",
        }
    }
    /// What one instance of the server is called over this transport.
    pub fn noun(self) -> &'static str {
        match self {
            Transport::Stdio => "process",
            Transport::Http => "connection",
        }
    }
}

impl std::fmt::Display for Transport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[derive(Debug, Clone)]
pub enum TargetSpec {
    Stdio(StdioSpec),
    Http(HttpSpec),
}

impl TargetSpec {
    pub fn transport(&self) -> Transport {
        match self {
            TargetSpec::Stdio(_) => Transport::Stdio,
            TargetSpec::Http(_) => Transport::Http,
        }
    }

    /// A description safe to put in reports.
    pub fn describe(&self) -> Value {
        match self {
            TargetSpec::Stdio(s) => json!({
                "transport": "stdio",
                "command": s.command_line(),
                "env": s.env.iter().map(|(k, _)| format!("{k}=[redacted]")).collect::<Vec<_>>(),
            }),
            TargetSpec::Http(h) => json!({
                "transport": "http",
                "url": redact_url(&h.url),
                "headers": h.headers.iter().map(|(k, _)| format!("{k}: [redacted]")).collect::<Vec<_>>(),
            }),
        }
    }

    /// The command (stdio) or URL with its secrets removed (HTTP), quoted
    /// for a shell: how a reproducer names the target.
    pub fn shown(&self) -> String {
        match self {
            TargetSpec::Stdio(s) => s.command_line(),
            TargetSpec::Http(h) => redact_url(&h.url),
        }
    }

    /// The URL of an HTTP target.
    pub fn url(&self) -> Option<&str> {
        match self {
            TargetSpec::Http(h) => Some(&h.url),
            TargetSpec::Stdio(_) => None,
        }
    }

    /// The same target seen through another identity: over HTTP its
    /// `headers` replace the target's headers of the same name (and are
    /// secret); over stdio `env` is added to the process environment.
    pub fn with_identity(&self, headers: &[(String, String)], env: &[(String, String)]) -> TargetSpec {
        match self {
            TargetSpec::Http(h) => {
                let mut spec = h.clone();
                spec.headers.retain(|(k, _)| !headers.iter().any(|(r, _)| r.eq_ignore_ascii_case(k)));
                spec.headers.extend(headers.iter().cloned());
                spec.secret_headers.extend(headers.iter().map(|(k, _)| k.to_ascii_lowercase()));
                TargetSpec::Http(spec)
            }
            TargetSpec::Stdio(s) => {
                let mut spec = s.clone();
                spec.env.retain(|(k, _)| !env.iter().any(|(r, _)| r == k));
                spec.env.extend(env.iter().cloned());
                TargetSpec::Stdio(spec)
            }
        }
    }
}

impl TargetSpec {
    /// HTTP: the same target at `url` (None: its own), its `Authorization`
    /// header replaced by `authorization` (None: sent without one); the
    /// authorization cases' way to send wrong tokens, or none. stdio: as is.
    pub fn with_authorization(&self, url: Option<&str>, authorization: Option<&str>) -> TargetSpec {
        match self {
            TargetSpec::Http(h) => {
                let mut spec = h.clone();
                if let Some(u) = url {
                    spec.url = u.to_string();
                }
                spec.headers.retain(|(k, _)| !k.eq_ignore_ascii_case("authorization"));
                if let Some(a) = authorization {
                    spec.headers.push(("Authorization".into(), a.to_string()));
                }
                TargetSpec::Http(spec)
            }
            TargetSpec::Stdio(_) => self.clone(),
        }
    }
}

impl StdioSpec {
    /// The command as one shell-quoted line.
    pub fn command_line(&self) -> String {
        self.argv.iter().map(|a| shell_quote(a)).collect::<Vec<_>>().join(" ")
    }

    /// A shell line that starts the server as a run does: in `[target]
    /// cwd`, with `[target.env]` (for reproducers; the values of
    /// secret-looking names come out masked there, as everywhere in the
    /// reports). The bare command line when the config sets neither.
    pub fn shell_line(&self) -> String {
        if self.cwd.is_none() && self.env.is_empty() && !self.clear_env {
            return self.command_line();
        }
        let cd = self.cwd.as_ref().map(|d| format!("cd {} && ", shell_quote(d))).unwrap_or_default();
        let env: String = self.env.iter().map(|(k, v)| format!(" {}", shell_quote(&format!("{k}={v}")))).collect();
        let env = match (self.clear_env, env.is_empty()) {
            (true, _) => format!("env -i{env} "),
            (false, true) => String::new(),
            (false, false) => format!("env{env} "),
        };
        format!("({cd}{env}{})", self.command_line())
    }
}

/// Strip userinfo and query values from a URL for reports.
pub fn redact_url(u: &str) -> String {
    match reqwest::Url::parse(u) {
        Ok(mut url) => {
            if !url.username().is_empty() || url.password().is_some() {
                let _ = url.set_username("redacted");
                let _ = url.set_password(None);
            }
            if url.query().is_some() {
                let keys: Vec<String> = url.query_pairs().map(|(k, _)| format!("{k}=[redacted]")).collect();
                url.set_query(Some(&keys.join("&")));
            }
            url.to_string()
        }
        Err(_) => u.to_string(),
    }
}
