//! Why a server could not be judged, read from what it and its installer
//! wrote: the board's runner lacks the network (the sandbox closes it), a
//! service (a database, a cache), or something to run it with (a newer
//! Python, a browser, a config file); or the server crashed, and its last
//! meaningful stderr line says how. Everything shown is scrubbed of the
//! runner's own paths.

use std::path::Path;

/// What the runner lacked, as the board's outcome, with the line that
/// says so.
#[derive(Debug, Clone, PartialEq)]
pub struct Lack {
    /// `needs-network`, `needs-service` or `cannot-run`.
    pub outcome: &'static str,
    pub line: String,
}

/// Lines that say the server reached for the network and found none.
const NETWORK: &[&str] = &[
    "eai_again",
    "enotfound",
    "getaddrinfo",
    "temporary failure in name resolution",
    "name or service not known",
    "nodename nor servname",
    "no address associated with hostname",
    "network is unreachable",
    "enetunreach",
    "could not resolve host",
    "failed to resolve",
    "nameresolutionerror",
    "fetch failed",
    "und_err_connect",
    "connecttimeouterror",
];

/// Lines that say a service it was pointed at did not answer.
const SERVICE: &[&str] = &[
    "econnrefused",
    "connection refused",
    "could not connect to server",
    "is the server running",
    "connection lost, attempting to reconnect",
    "no connection could be made",
];

/// Lines that say the runner cannot run it at all.
const RUNTIME: &[&str] = &[
    "requires a different python",
    "requires-python",
    "executable doesn't exist",
    "could not find chrome",
    "failed to launch the browser",
    "unsupported engine",
    "command not found",
];

/// What the runner lacked, if a line of `text` (a server's stderr, an
/// installer's log) says so; the latest such line wins. A service named
/// by a host that cannot resolve (`*.invalid`: a placeholder given to the
/// server) is a service the runner lacks, not the network.
pub fn lack(text: &str) -> Option<Lack> {
    let kind = |l: &str| {
        let l = l.to_ascii_lowercase();
        if RUNTIME.iter().any(|p| l.contains(p)) {
            Some("cannot-run")
        } else if SERVICE.iter().any(|p| l.contains(p)) || (l.contains(".invalid") && NETWORK.iter().any(|p| l.contains(p))) {
            Some("needs-service")
        } else if NETWORK.iter().any(|p| l.contains(p)) {
            Some("needs-network")
        } else {
            None
        }
    };
    let lines: Vec<&str> = text.lines().map(unquote).map(str::trim).collect();
    let at = lines.iter().rposition(|l| kind(l).is_some())?;
    // The line that says it: an error line near the last sign (a stack's
    // `[cause]: Error: getaddrinfo EAI_AGAIN host`, not its `syscall:` or
    // its `at GetAddrInfoReqWrap…` frame), which also says which lack.
    let line = lines[at.saturating_sub(40)..=at]
        .iter()
        .rev()
        .find(|l| kind(l).is_some() && l.to_ascii_lowercase().contains("error") && !l.starts_with("at "))
        .unwrap_or(&lines[at]);
    let outcome = kind(line)?;
    let line = line.strip_prefix("[cause]: ").unwrap_or(line);
    Some(Lack { outcome, line: clip(line, 240) })
}

/// A line of a report's quoted stderr (`  | text`) as the server wrote it.
fn unquote(line: &str) -> &str {
    let t = line.trim_start();
    t.strip_prefix("| ").or_else(|| t.strip_prefix('|')).unwrap_or(line)
}

fn clip(s: &str, n: usize) -> String {
    if s.chars().count() <= n { s.to_string() } else { format!("{}…", s.chars().take(n).collect::<String>()) }
}

/// The line of a crash's stderr that says what went wrong: the last
/// exception line (`AttributeError: …`, `Error: Cannot find module …`),
/// else the last line that is not a stack frame, a code excerpt or a
/// runtime's banner.
pub fn crash_line(stderr: &str) -> Option<String> {
    let lines: Vec<&str> = stderr.lines().map(unquote).map(str::trim).filter(|l| !l.is_empty()).collect();
    let noise = |l: &str| {
        l.starts_with("at ")
            || l.starts_with("File \"")
            || l.starts_with("Traceback")
            || l.starts_with('[') && l.ends_with("earlier lines]")
            || l.starts_with("Node.js v")
            || l.starts_with("Require stack")
            || l.starts_with("- /")
            || l.starts_with("npm error A complete log")
            || l.starts_with("the server's stderr ended with")
            || l.starts_with("no answer to ")
            || l.chars().all(|c| matches!(c, '^' | '~' | ' ' | '{' | '}' | '|' | '-' | '+' | '='))
            || l.starts_with("code:")
            || l.starts_with("requireStack")
    };
    let exception = |l: &str| {
        let head = l.split([':', ' ']).next().unwrap_or("");
        (head.ends_with("Error") || head.ends_with("Exception") || head == "Error" || head == "panic")
            && head.chars().all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '_')
    };
    let pick = lines.iter().rev().find(|l| exception(l)).or_else(|| lines.iter().rev().find(|l| !noise(l)))?;
    Some(clip(pick, 240))
}

/// The installer's own reason from its log: pip's `ERROR:` line, npm's
/// `npm error` line that says what (not its code or where its log is).
pub fn installer_line(log: &str) -> Option<String> {
    let lines: Vec<&str> = log.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
    let npm = lines.iter().filter_map(|l| l.strip_prefix("npm error ").or_else(|| l.strip_prefix("npm ERR! "))).find(|l| {
        !l.starts_with("code ")
            && !l.starts_with("A complete log")
            && !l.starts_with("errno ")
            && !l.starts_with("syscall ")
            && !l.starts_with("path ")
            && !l.starts_with("command ")
            && !l.starts_with("cwd ")
            && !l.starts_with("In most cases")
    });
    if let Some(l) = npm {
        // npm's `notarget` line names the code first.
        let l = l.strip_prefix("notarget ").unwrap_or(l);
        return Some(clip(l, 240));
    }
    let pip = lines.iter().rev().find_map(|l| l.strip_prefix("ERROR: ").or_else(|| l.strip_prefix("error: ")));
    if let Some(l) = pip {
        return Some(clip(l, 240));
    }
    lines.iter().rev().find(|l| !l.starts_with('[') && !l.starts_with("at ")).map(|l| clip(l, 240))
}

/// Places on the runner that a page must not show, and what stands for
/// each: the package cache, the site, the working folder, the home folder.
pub struct Scrub {
    roots: Vec<(String, &'static str)>,
}

impl Scrub {
    pub fn new(cache: &Path, site: &Path) -> Scrub {
        let mut roots: Vec<(String, &'static str)> = Vec::new();
        let mut add = |p: Option<std::path::PathBuf>, stand: &'static str| {
            if let Some(p) = p {
                let p = std::fs::canonicalize(&p).unwrap_or(p);
                let s = p.display().to_string();
                if s.len() > 1 {
                    roots.push((s, stand));
                }
            }
        };
        add(Some(cache.to_path_buf()), "$CACHE");
        add(Some(site.to_path_buf()), "$SITE");
        add(std::env::current_dir().ok(), "$WORK");
        add(std::env::var_os("HOME").map(Into::into), "~");
        // The longest first: the cache may lie in the working folder.
        roots.sort_by_key(|(s, _)| std::cmp::Reverse(s.len()));
        Scrub { roots }
    }

    /// `text` with the runner's paths replaced: a path into an installed
    /// package keeps what follows `site-packages/`, `node_modules/` or
    /// `lib/pythonX.Y/` (what a vendor recognises), the runner's own
    /// folders become `$CACHE`, `$SITE`, `$WORK`, `~`.
    pub fn text(&self, text: &str) -> String {
        let mut out = String::with_capacity(text.len());
        let mut rest = text;
        while let Some(i) = rest.find('/') {
            // A path starts at a `/` that follows a separator.
            let before = rest[..i].chars().last();
            // (`\n` before it: a line break as JSON writes it.)
            let escaped = rest[..i].ends_with("\\n") || rest[..i].ends_with("\\t");
            if !escaped && !before.is_none_or(|c| c.is_whitespace() || "\"'(=:[<>;,`".contains(c)) {
                out.push_str(&rest[..=i]);
                rest = &rest[i + 1..];
                continue;
            }
            let end = rest[i..].find(|c: char| c.is_whitespace() || "\"'),]<>`;&\\".contains(c)).map_or(rest.len(), |e| i + e);
            out.push_str(&rest[..i]);
            out.push_str(&self.path(&rest[i..end]));
            rest = &rest[end..];
        }
        out.push_str(rest);
        out
    }

    fn path(&self, p: &str) -> String {
        for marker in ["/site-packages/", "/node_modules/", "/dist-packages/"] {
            if let Some(k) = p.rfind(marker) {
                return format!("…{}", &p[k..]);
            }
        }
        if let Some(k) = p.find("/lib/python3.") {
            return format!("…{}", &p[k..]);
        }
        for (root, stand) in &self.roots {
            if let Some(tail) = p.strip_prefix(root.as_str())
                && (tail.is_empty() || tail.starts_with('/'))
            {
                return format!("{stand}{tail}");
            }
        }
        p.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_environment_is_read_from_the_latest_line_that_names_it() {
        let svelte = "  | Error: fetch failed\n  |     at node:internal/deps/undici/undici:13510:13\n  | [cause]: Error: getaddrinfo EAI_AGAIN svelte.dev\n  |     errno: -3001,\n  |     syscall: 'getaddrinfo',\n  | }\n  | Node.js v20.20.2";
        let l = lack(svelte).unwrap();
        assert_eq!((l.outcome, l.line.as_str()), ("needs-network", "Error: getaddrinfo EAI_AGAIN svelte.dev"));
        let redis =
            "[Redis Error] Error: getaddrinfo EAI_AGAIN mcpcert.invalid\n[Redis Reconnecting] Connection lost, attempting to reconnect...";
        assert_eq!(lack(redis).unwrap().outcome, "needs-service");
        // The error line decides, not a stack frame after it.
        let redis = "[Redis Error] Stack: Error: getaddrinfo EAI_AGAIN mcpcert.invalid\n    at GetAddrInfoReqWrap.onlookupall [as oncomplete] (node:dns:122:26)";
        let l = lack(redis).unwrap();
        assert_eq!((l.outcome, l.line.as_str()), ("needs-service", "[Redis Error] Stack: Error: getaddrinfo EAI_AGAIN mcpcert.invalid"));
        let pg = "Error: connect ECONNREFUSED 127.0.0.1:5432";
        let l = lack(pg).unwrap();
        assert_eq!((l.outcome, l.line.as_str()), ("needs-service", pg));
        let py = "ERROR: Package 'x' requires a different Python: 3.11.7 not in '>=3.12'";
        assert_eq!(lack(py).unwrap().outcome, "cannot-run");
        assert_eq!(lack("AttributeError: 'Server' object has no attribute 'list_resources'"), None);
    }

    #[test]
    fn a_crash_is_told_by_its_exception_line() {
        let py = "Traceback (most recent call last):\n  File \"/x/server.py\", line 173, in main\n    @server.list_resources()\n     ^^^^^^^^^^^^^^^^^^^^^\nAttributeError: 'Server' object has no attribute 'list_resources'";
        assert_eq!(crash_line(py).unwrap(), "AttributeError: 'Server' object has no attribute 'list_resources'");
        let node = "node:internal/modules/cjs/loader:1228\n  throw err;\n  ^\n\nError: Cannot find module 'zod'\nRequire stack:\n- /c/npm/x/index.js\n    at Module._resolveFilename (node:internal)\n{\n  code: 'MODULE_NOT_FOUND',\n}\n\nNode.js v20.18.0";
        assert_eq!(crash_line(node).unwrap(), "Error: Cannot find module 'zod'");
        assert_eq!(
            crash_line("  | Credentials not found. Please run with 'auth' argument first.").unwrap(),
            "Credentials not found. Please run with 'auth' argument first."
        );
        assert_eq!(crash_line(""), None);
    }

    #[test]
    fn an_install_failure_is_told_by_the_installer() {
        let npm = "npm error code ETARGET\nnpm error notarget No matching version found for @x/y@0.0.0-none.\nnpm error notarget In most cases you or one of your dependencies are requesting\nnpm error A complete log of this run can be found in: /home/u/.npm/_logs/x.log";
        assert_eq!(installer_line(npm).unwrap(), "No matching version found for @x/y@0.0.0-none.");
        let pip = "Collecting x==1\nERROR: Could not find a version that satisfies the requirement x==9 (from versions: 1.0)\nERROR: No matching distribution found for x==9";
        assert_eq!(installer_line(pip).unwrap(), "No matching distribution found for x==9");
    }

    #[test]
    fn no_path_of_the_runner_is_shown() {
        let s = Scrub { roots: vec![("/w/site".into(), "$SITE"), ("/w/.cache/board".into(), "$CACHE"), ("/root".into(), "~")] };
        let t = "ImportError: cannot import name 'McpError' from 'mcp.shared.exceptions' (/w/.cache/board/pypi/x@1/venv/lib/python3.11/site-packages/mcp/shared/exceptions.py)";
        assert_eq!(
            s.text(t),
            "ImportError: cannot import name 'McpError' from 'mcp.shared.exceptions' (…/site-packages/mcp/shared/exceptions.py)"
        );
        assert_eq!(
            s.text("`/w/.cache/board/npm/x@1/venv/bin/pip install x==1` failed"),
            "`$CACHE/npm/x@1/venv/bin/pip install x==1` failed"
        );
        assert_eq!(
            s.text("File \"/root/.pyenv/versions/3.11.7/lib/python3.11/asyncio/base_events.py\""),
            "File \"…/lib/python3.11/asyncio/base_events.py\""
        );
        assert_eq!(s.text("see /w/site/servers/a/console.log and a/b"), "see $SITE/servers/a/console.log and a/b");
        assert_eq!(s.text("https://example.invalid/mcp"), "https://example.invalid/mcp");
        // A path after a line break, as JSON and the HTML report write it.
        assert_eq!(s.text(r#"{"content":"Allowed directories:\n/w/site/files"}"#), r#"{"content":"Allowed directories:\n$SITE/files"}"#);
        assert_eq!(s.text("notifications/roots/list_changed"), "notifications/roots/list_changed");
    }
}
