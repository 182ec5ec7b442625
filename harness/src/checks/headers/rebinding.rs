//! DNS-rebinding protection as the requirement set's scenario judges it: a
//! server on a loopback address refuses a request whose `Host` and `Origin`
//! name a foreign host (any 4xx), and serves one whose `Host` and `Origin`
//! are its own. (That a foreign `Origin` alone gets exactly 403 is the
//! stricter `headers/origin-forbidden`.)

use super::targets::standard_target;
use crate::checks::{Check, Cx, Need, Outcome};
use crate::record::Transport;
use crate::session::Msg;
use crate::wire::HeaderEdit;
use serde::Deserialize;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DnsRebinding {}

/// A host name that can never resolve, for the foreign `Host` and `Origin`.
const FOREIGN: &str = "mcpcert-rebinding.invalid";

impl Check for DnsRebinding {
    const NAME: &'static str = "dns_rebinding";
    const ABOUT: &'static str = "a loopback HTTP server refuses a request whose Host and Origin name a foreign host (4xx) and serves one whose Host and Origin are its own";

    fn needs(&self) -> Vec<Need> {
        vec![Need::Transport(Transport::Http)]
    }

    async fn run(&self, cx: &Cx<'_>) -> Outcome {
        let Some((scheme, authority)) = cx.session.target().url().and_then(authority) else {
            return Outcome::na("the target's URL has no host this check can name");
        };
        let host = host_of(&authority).trim_matches(['[', ']']).to_string();
        if !matches!(host.as_str(), "localhost" | "127.0.0.1" | "::1") {
            // Under --requirements this n/a is "not shown": the set needs it.
            return Outcome::na(format!(
                "judged for a server on a loopback address (localhost, 127.0.0.1 or [::1]), which DNS rebinding reaches from a browser on the same machine; this one is at {host}"
            ));
        }
        let own = authority;
        let t = standard_target(cx);
        let mut out = Outcome::default();
        // Both made first (their ids taken in order), then sent together:
        // the foreign one must be refused, a negative probe on a connection
        // of its own, so neither waits for the other.
        let made: Vec<_> = [(FOREIGN.to_string(), true), (own, false)]
            .into_iter()
            .map(|(value, foreign)| {
                let edits =
                    vec![HeaderEdit::Set("Host".into(), value.clone()), HeaderEdit::Set("Origin".into(), format!("{scheme}://{value}"))];
                let body = cx.request(&t.method, Some(t.params.clone()));
                let label = match foreign {
                    true => format!("{} with Host and Origin naming a foreign host, {FOREIGN}", t.what),
                    false => format!("{} with Host and Origin naming the server's own host (its URL's)", t.what),
                };
                (value, foreign, label, body, edits)
            })
            .collect();
        let sends = made.iter().map(|(_, foreign, label, body, edits)| async move {
            // The client sends the Host given instead of the URL's.
            let msg = Msg::new(cx.rev, label, body).edits(edits);
            match foreign {
                true => cx.isolated(&[msg]).await,
                false => cx.session.on_main(&msg, cx.case).await.map(|e| vec![e]),
            }
        });
        let sent = futures_util::future::join_all(sends).await;
        for ((value, foreign, label, _, _), r) in made.iter().zip(sent) {
            let (value, foreign) = (value.clone(), *foreign);
            let ex = match r {
                Ok(mut exs) => {
                    let ex = exs.pop().unwrap_or_default();
                    out.exchanges.extend(exs);
                    ex
                }
                Err(e) => return out.with_error(e.to_string()),
            };
            let status = ex.status;
            if let Some(e) = &ex.error {
                out.set_error(format!("{label}: {e}"));
            } else if foreign && !status.is_some_and(|s| (400..500).contains(&s)) {
                out.fail(format!(
                    "a request whose Host and Origin name a foreign host ({FOREIGN}) must be refused with an HTTP 4xx status (protection against DNS rebinding); got {}",
                    ex.summary()
                ));
            } else if !foreign && !status.is_some_and(|s| (200..300).contains(&s)) {
                // Refusing its own origin too, the server shows no protection:
                // the requirement set's scenario fails that; otherwise the
                // case cannot judge it.
                // (Refused as busy, it is judged as before: the run reruns
                // a case refused so, alone.)
                if cx.policy.requirements || ex.refused_as_busy() {
                    out.fail(format!(
                        "a request whose Host and Origin are the server's own ({value}) must be served (HTTP 2xx); got {}",
                        ex.summary()
                    ));
                } else if !out.is_error() && out.failures.is_empty() {
                    let why = format!(
                        "the server refuses a request whose Host and Origin are its own ({value}) too ({}), so its refusing a foreign one shows no DNS-rebinding protection; --allowed-origin names the origin it serves",
                        ex.summary()
                    );
                    out.exchanges.push(ex);
                    out.set_na(why);
                    return out;
                }
            }
            out.exchanges.push(ex);
        }
        out
    }
}

/// The scheme and `host[:port]` of an `http://` or `https://` URL
/// (credentials left out).
fn authority(url: &str) -> Option<(&'static str, String)> {
    let lower = url.get(..8).unwrap_or(url).to_ascii_lowercase();
    let (scheme, rest) = if lower.starts_with("http://") {
        ("http", &url[7..])
    } else if lower.starts_with("https://") {
        ("https", &url[8..])
    } else {
        return None;
    };
    let a = rest.split(['/', '?', '#']).next()?;
    Some((scheme, a.rsplit('@').next().unwrap_or(a).to_string()))
}

/// The host of an authority, without its port.
fn host_of(authority: &str) -> &str {
    if authority.starts_with('[') {
        return authority.split(']').next().map(|h| &authority[..h.len() + 1]).unwrap_or(authority);
    }
    authority.rsplit_once(':').map(|(h, _)| h).unwrap_or(authority)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_of_urls() {
        assert_eq!(authority("http://127.0.0.1:8000/mcp"), Some(("http", "127.0.0.1:8000".to_string())));
        assert_eq!(authority("https://u:p@localhost/mcp"), Some(("https", "localhost".to_string())));
        assert_eq!(host_of("127.0.0.1:8000"), "127.0.0.1");
        assert_eq!(host_of("[::1]:9"), "[::1]");
        assert_eq!(host_of("localhost"), "localhost");
        assert_eq!(authority("ftp://x/mcp"), None);
    }
}
