//! No egress: the values mcpcert makes up for a server (tool arguments,
//! elicitation answers) must never name a host that could resolve. A host
//! mcpcert generates ends in `.invalid` (RFC 2606 and RFC 6761: such names
//! never resolve), and a path lies in the run's scratch folder. This module
//! finds what in a value could send a server elsewhere: a URL whose host is
//! not `.invalid`, an email address at such a domain, a bare host name
//! (a dotted name ending in letters), an IP address, a `file:` URL, or an
//! absolute path outside the scratch folder.

use serde_json::Value;

/// The host every generated URL, host name and email address uses.
pub const HOST: &str = "mcpcert.invalid";
/// A generated URL.
pub const URL: &str = "https://mcpcert.invalid/";
/// A generated email address.
pub const EMAIL: &str = "mcpcert@mcpcert.invalid";

/// The folder every generated path lies in (created by the run).
pub fn scratch_dir() -> std::path::PathBuf {
    std::env::temp_dir().join("mcpcert-scratch")
}

/// Whether a host name can never resolve.
fn host_is_invalid(host: &str) -> bool {
    let h = host.trim_end_matches('.').to_ascii_lowercase();
    h == "invalid" || h.ends_with(".invalid")
}

/// What in `s` could make a server reach a host outside the test (or a path
/// outside the scratch folder), if anything: the first such piece.
pub fn reaches_out(s: &str) -> Option<String> {
    let scratch_path = scratch_dir();
    let scratch = scratch_path.to_string_lossy();
    // A path in the scratch folder (the folder itself, or below it).
    let in_scratch = |p: &str| std::path::Path::new(p).starts_with(&scratch_path);
    for token in s.split(|c: char| c.is_whitespace() || matches!(c, '"' | '\'' | '<' | '>' | '(' | ')' | ',' | ';' | '[' | ']')) {
        if token.is_empty() {
            continue;
        }
        let lower = token.to_ascii_lowercase();
        if lower.starts_with("file:") {
            // The path keeps its letter case (only the scheme is compared so).
            let path = token[5..].trim_start_matches("//");
            if !in_scratch(path) {
                return Some(token.to_string());
            }
            continue;
        }
        if let Some((scheme, rest)) = token.split_once("://")
            && !scheme.is_empty()
            && scheme.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
        {
            let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
            let host_port = authority.rsplit('@').next().unwrap_or("");
            let host = if let Some(v6) = host_port.strip_prefix('[') {
                v6.split(']').next().unwrap_or("")
            } else {
                host_port.split(':').next().unwrap_or("")
            };
            // `test://static-text`, `ref://items/1`: a server's own URI
            // scheme with a single-label name is not a network host unless
            // the scheme is one that reaches the network.
            let network =
                matches!(scheme.to_ascii_lowercase().as_str(), "http" | "https" | "ws" | "wss" | "ftp" | "ftps" | "ssh" | "git" | "sftp");
            if !host.is_empty() && !host_is_invalid(host) && (network || host.contains('.') || host.contains(':')) {
                return Some(token.to_string());
            }
            continue;
        }
        if let Some((_, domain)) = token.rsplit_once('@')
            && (domain.contains('.') || is_localhost(strip_port(domain)))
        {
            if !host_is_invalid(strip_port(domain.trim_end_matches(['.', ':']))) {
                return Some(token.to_string());
            }
            continue;
        }
        if token.starts_with('/') && token.len() > 1 && !in_scratch(token) && token[1..].contains('/') {
            // An absolute path of two or more parts outside the scratch folder.
            let _ = &scratch;
            return Some(token.to_string());
        }
        let bare = token.trim_end_matches(['.', ':', '!', '?']);
        let host = strip_port(bare.split('/').next().unwrap_or(bare));
        if looks_like_ip(host) || is_localhost(host) {
            return Some(token.to_string());
        }
        if looks_like_host(bare) && !host_is_invalid(host) {
            return Some(token.to_string());
        }
    }
    None
}

/// A dotted name whose last label is letters: `example.com`, `api.github.com/x`
/// (a file name such as `notes.md` counts too: it could be a host).
fn looks_like_host(s: &str) -> bool {
    let name = s.split(['/', ':']).next().unwrap_or(s);
    let labels: Vec<&str> = name.split('.').collect();
    labels.len() >= 2
        && labels.iter().all(|l| !l.is_empty() && l.chars().all(|c| c.is_alphanumeric() || c == '-'))
        && labels.last().is_some_and(|l| l.len() >= 2 && l.chars().all(|c| c.is_alphabetic()))
}

/// A host without its `:port` (`10.0.0.1:8080`, `[::1]:80`, `localhost:5432`).
fn strip_port(s: &str) -> &str {
    if let Some(v6) = s.strip_prefix('[') {
        return v6.split(']').next().unwrap_or(v6);
    }
    match s.rsplit_once(':') {
        Some((h, p)) if !h.contains(':') && !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()) => h,
        _ => s,
    }
}

/// The machine's own name: a server there is outside the test too.
fn is_localhost(s: &str) -> bool {
    let h = s.trim_end_matches('.').to_ascii_lowercase();
    h == "localhost" || h.ends_with(".localhost")
}

fn looks_like_ip(s: &str) -> bool {
    let v4 = s.split('.').count() == 4 && s.split('.').all(|p| !p.is_empty() && p.len() <= 3 && p.chars().all(|c| c.is_ascii_digit()));
    v4 || s.trim_matches(['[', ']']).parse::<std::net::Ipv6Addr>().is_ok()
}

/// Every string in `v` (keys too) that could reach out, with its JSON path.
pub fn reaching_values(v: &Value) -> Vec<(String, String)> {
    let mut out = Vec::new();
    walk(v, String::new(), &mut out);
    out
}

fn walk(v: &Value, path: String, out: &mut Vec<(String, String)>) {
    match v {
        Value::String(s) => {
            if let Some(t) = reaches_out(s) {
                out.push((if path.is_empty() { "/".into() } else { path }, t));
            }
        }
        Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                walk(x, format!("{path}/{i}"), out);
            }
        }
        Value::Object(m) => {
            for (k, x) in m {
                if let Some(t) = reaches_out(k) {
                    out.push((format!("{path}/{k} (key)"), t));
                }
                walk(x, format!("{path}/{}", k.replace('~', "~0").replace('/', "~1")), out);
            }
        }
        _ => {}
    }
}

/// Whether nothing in `v` could reach out.
pub fn is_contained(v: &Value) -> bool {
    reaching_values(v).is_empty()
}

/// What a property's name says its value is, for making up a value that
/// cannot reach out: compared in lower case with `_` and `-` removed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hint {
    Url,
    Host,
    Email,
    Path,
    Plain,
}

/// The hint of a property by its name and its schema's `format`.
pub fn hint(name: &str, format: Option<&str>) -> Hint {
    match format {
        Some("uri" | "url" | "iri" | "uri-reference" | "iri-reference" | "uri-template") => return Hint::Url,
        Some("email" | "idn-email") => return Hint::Email,
        Some("hostname" | "idn-hostname" | "ipv4" | "ipv6") => return Hint::Host,
        _ => {}
    }
    let n: String = name.to_lowercase().chars().filter(|c| *c != '_' && *c != '-').collect();
    let has = |parts: &[&str]| parts.iter().any(|p| n.contains(p));
    if has(&["email", "mail"]) {
        Hint::Email
    } else if has(&["url", "uri", "link", "href", "endpoint", "website", "webhook", "callback"]) {
        Hint::Url
    } else if has(&["host", "domain", "server", "address"]) || n == "ip" {
        Hint::Host
    } else if has(&["path", "file", "dir", "folder"]) || n == "cwd" || n == "root" {
        Hint::Path
    } else {
        Hint::Plain
    }
}

/// A string for a property with this hint, at least `min` characters long.
pub fn string_for(h: Hint, min: usize) -> String {
    let pad = |base: String, fill: char| {
        let n = base.chars().count();
        if n >= min { base } else { format!("{base}{}", fill.to_string().repeat(min - n)) }
    };
    match h {
        Hint::Url => pad(URL.to_string(), 'x'),
        Hint::Email => {
            let n = EMAIL.chars().count();
            if n >= min { EMAIL.to_string() } else { format!("{}{EMAIL}", "x".repeat(min - n)) }
        }
        Hint::Host => {
            let n = HOST.chars().count();
            if n >= min { HOST.to_string() } else { format!("{}.{HOST}", "x".repeat(min - n - 1)) }
        }
        Hint::Path => pad(scratch_dir().join("mcpcert.txt").to_string_lossy().into_owned(), 'x'),
        Hint::Plain => pad("mcpcert".to_string(), 'x'),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn real_hosts_are_found_and_invalid_ones_pass() {
        for s in [
            "https://example.com/",
            "see http://user:pw@api.github.com:443/x",
            "mcpcert@example.com",
            "docs.python.org",
            "192.0.2.1",
            "::1",
            "file:///etc/passwd",
            "/etc/passwd",
            "ftp://files",
            "notes.md",
            "10.0.0.1:8080",
            "[::1]:80",
            "localhost",
            "localhost:5432",
            "user@localhost",
            "/tmp/mcpcert-scratch-evil/x",
        ] {
            assert!(reaches_out(s).is_some(), "{s} should be found");
        }
        for s in [
            URL,
            EMAIL,
            HOST,
            "https://x.mcpcert.invalid:8080/a?b=c",
            "mcpcert",
            "Zürich",
            "東京",
            "2026-01-01T00:00:00Z",
            "1.5",
            "test://static-text",
            "ref://items/1",
            "a/b",
            "",
            "mcpcert-progress-12",
            "v1.2.3",
        ] {
            assert_eq!(reaches_out(s), None, "{s} should pass");
        }
        let inside = scratch_dir().join("a").join("b.txt");
        assert_eq!(reaches_out(&inside.to_string_lossy()), None);
    }

    #[test]
    fn paths_in_the_scratch_folder_pass() {
        let inside = scratch_dir().join("a/b.txt");
        assert_eq!(reaches_out(&inside.display().to_string()), None);
        assert_eq!(reaches_out(&format!("file://{}", inside.display())), None);
        assert!(reaches_out(&format!("{}-evil/a/b", scratch_dir().display())).is_some());
    }

    #[test]
    fn values_are_walked_with_their_paths() {
        let v = json!({"a": ["ok", {"u": "https://example.org"}], "example.net": 1});
        let found = reaching_values(&v);
        assert_eq!(found.len(), 2, "{found:?}");
        assert!(found.iter().any(|(p, _)| p == "/a/1/u"));
        assert!(found.iter().any(|(p, _)| p.contains("(key)")));
        assert!(is_contained(&json!({"url": URL, "n": 3})));
    }

    #[test]
    fn hints_pick_unresolvable_values() {
        assert_eq!(hint("target_url", None), Hint::Url);
        assert_eq!(hint("x", Some("uri")), Hint::Url);
        assert_eq!(hint("contactEmail", None), Hint::Email);
        assert_eq!(hint("hostname", None), Hint::Host);
        assert_eq!(hint("file_path", None), Hint::Path);
        assert_eq!(hint("city", None), Hint::Plain);
        for h in [Hint::Url, Hint::Host, Hint::Email, Hint::Path, Hint::Plain] {
            for min in [0, 3, 40] {
                let s = string_for(h, min);
                assert!(s.chars().count() >= min, "{h:?} {min}: {s}");
                assert_eq!(reaches_out(&s), None, "{h:?}: {s}");
            }
        }
    }
}
