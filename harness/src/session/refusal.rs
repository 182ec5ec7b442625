//! How a probe was turned away, read from its answer: a redirect, a
//! refusal for want of credentials (OAuth's signal: 401, or 403 with a
//! Bearer challenge), or a refusal that is not authorization (a Host or
//! Origin check, a proxy's 403), which is said as what it is.

use crate::record::Exchange;

/// A redirect: its status and where to.
pub(super) fn redirected(ex: &Exchange) -> Option<(u16, String)> {
    let s = ex.status.filter(|s| (300..400).contains(s))?;
    Some((s, ex.header("location").unwrap_or("").to_string()))
}

/// A refusal for want of credentials, as OAuth signals it: HTTP 401, or
/// 403 with a Bearer challenge (insufficient scope); and its challenge.
/// Any other refusal (a Host or Origin check, a proxy's 403) is not
/// authorization: [`refused`].
pub(super) fn turned_away(ex: &Exchange) -> Option<String> {
    let s = ex.status?;
    let challenge: Vec<&str> =
        ex.headers.iter().filter(|(k, _)| k.eq_ignore_ascii_case("www-authenticate")).map(|(_, v)| v.as_str()).collect();
    let bearer = challenge.iter().any(|c| c.trim_start().get(..6).is_some_and(|b| b.eq_ignore_ascii_case("bearer")));
    if !(s == 401 || (s == 403 && bearer)) {
        return None;
    }
    Some(if challenge.is_empty() {
        format!("HTTP {s} with no WWW-Authenticate header")
    } else {
        format!("HTTP {s} with WWW-Authenticate: {}", crate::record::clip(&challenge.join(", "), 300))
    })
}

/// A refusal that is not authorization: 403 without a Bearer challenge,
/// or 421 (Misdirected Request, which servers checking the Host header
/// answer); its status and the first line of its body.
pub(super) fn refused(ex: &Exchange) -> Option<(u16, String)> {
    let s = ex.status.filter(|s| *s == 403 || *s == 421)?;
    if turned_away(ex).is_some() {
        return None;
    }
    let line = ex.body.as_deref().unwrap_or("").lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or("");
    Some((s, crate::record::clip(line, 200)))
}

/// What to try when every probe was refused by a Host check: the other
/// spelling of a loopback host.
pub(super) fn host_hint(url: &str) -> String {
    let Ok(u) = reqwest::Url::parse(url) else { return String::new() };
    let other = match u.host_str() {
        Some("127.0.0.1") | Some("[::1]") | Some("::1") => "localhost",
        Some("localhost") => "127.0.0.1",
        _ => return " Check the host names or origins the server is configured to accept.".into(),
    };
    let mut alt = u.clone();
    if alt.set_host(Some(other)).is_err() {
        return String::new();
    }
    format!(
        " A check of the Host header answers so when a server accepts only the host name it was configured with: try --http {}",
        crate::transport::redact_url(alt.as_str())
    )
}
