//! Token passthrough (Streamable HTTP, `[auth] upstream_port`): mcpcert
//! plays the upstream API the server calls, and judges, after every other
//! case of the revision, whether any request that reached it carried a
//! token mcpcert gave the server. Without the upstream, or when nothing
//! reached it, there is nothing to see from outside: `n/a`, saying so.

use super::{Check, Cx, Need, Outcome, Scope};
use crate::record::{Exchange, Transport};
use serde::Deserialize;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AuthPassthrough {}

impl Check for AuthPassthrough {
    const NAME: &'static str = "auth_passthrough";
    const ABOUT: &'static str = "the server never passes a token it got from the client to the upstream API it calls (mcpcert plays that upstream, [auth] upstream_port)";
    const SCOPE: Scope = Scope::Run;

    fn needs(&self) -> Vec<Need> {
        vec![Need::Transport(Transport::Http), Need::Auth]
    }

    async fn run(&self, cx: &Cx<'_>) -> Outcome {
        let Some(tokens) = cx.policy.auth.clone() else { return Outcome::na("no [auth] in the target config") };
        let Some((url, log)) = &tokens.upstream else {
            return Outcome::na(
                "token passthrough can be seen only by playing the upstream the server calls: [auth] upstream_port = PORT makes mcpcert listen on 127.0.0.1:PORT for the run; point the server's upstream API there",
            );
        };
        let seen = log.lock().map(|s| s.clone()).unwrap_or_default();
        if seen.is_empty() {
            return Outcome::na(format!(
                "nothing reached the upstream mcpcert plays at {url} during the run, so what the server sends upstream cannot be judged (its calls there come from the tools the call policy allows)"
            ));
        }
        let secrets = tokens.secrets();
        let mut out = Outcome::default();
        let mut passed = 0;
        for s in &seen {
            let carried = secrets.iter().any(|t| s.head.contains(t.as_str()));
            passed += usize::from(carried);
            let what = match &s.authorization {
                None => "no Authorization header".to_string(),
                _ if carried => "a token mcpcert sent the server, in its request line or headers (shown [masked])".to_string(),
                Some(_) => "Authorization: a credential of the server's own, not one of the run's tokens".to_string(),
            };
            out.exchanges.push(Exchange::note(format!("the upstream at {url} got {}", s.line), what));
        }
        if passed > 0 {
            out.fail(format!(
                "{passed} of the {} requests that reached the upstream API carried the token the client sent the server: the server must use a token of its own upstream, never pass its caller's through",
                seen.len()
            ));
        }
        out
    }
}
