//! A server as the MCP Registry describes it: a `server.json` (schema
//! 2025-12-11, and the 2025-09-29 and 2025-10-17 ones it extends), with
//! packages (npm, PyPI, OCI images, NuGet, MCPB) and remotes
//! (`streamable-http`, `sse`). This module reads one, lists its entries,
//! says which of them this machine can start or reach and why not, and
//! (`launch`) turns the chosen one into a target: the values its inputs
//! need come from the operator (the environment or the config), never
//! invented; (`install`) a package is installed once per name@version into
//! a cache folder and started from there, never through a shell.
//!
//! Nothing in a `server.json` is trusted: identifiers and versions that
//! could read as options are refused, and argument values reach the
//! server's argv as they are, one argument each.

pub mod install;
pub mod launch;
pub mod registry_api;
pub mod sandbox;
pub mod snapshot;

use serde::Deserialize;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// A `server.json` larger than this is refused (the registry's are a few KiB).
const MAX_BYTES: u64 = 4 << 20;

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ServerJson {
    pub name: String,
    #[serde(default)]
    pub version: String,
    #[serde(default)]
    pub title: Option<String>,
    #[serde(default)]
    pub description: String,
    #[serde(default)]
    pub packages: Vec<Package>,
    #[serde(default)]
    pub remotes: Vec<Remote>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Package {
    pub registry_type: String,
    #[serde(default)]
    pub registry_base_url: Option<String>,
    #[serde(default)]
    pub identifier: String,
    #[serde(default)]
    pub version: Option<String>,
    #[serde(default)]
    pub runtime_hint: Option<String>,
    pub transport: Remote,
    #[serde(default)]
    pub runtime_arguments: Vec<Argument>,
    #[serde(default)]
    pub package_arguments: Vec<Argument>,
    #[serde(default)]
    pub environment_variables: Vec<KeyValue>,
}

/// A remote, or a package's transport: `stdio`, `streamable-http` or `sse`
/// (the URL a template whose `{names}` are `variables`).
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Remote {
    #[serde(rename = "type")]
    pub kind: String,
    #[serde(default)]
    pub url: Option<String>,
    #[serde(default)]
    pub headers: Vec<KeyValue>,
    #[serde(default)]
    pub variables: BTreeMap<String, Input>,
}

/// A value the server needs: fixed (`value`, a template over `variables`),
/// or given by the operator, with a `default`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Input {
    #[serde(default)]
    pub description: Option<String>,
    #[serde(default)]
    pub is_required: bool,
    #[serde(default)]
    pub is_secret: bool,
    #[serde(default)]
    pub value: Option<String>,
    #[serde(default)]
    pub default: Option<String>,
    #[serde(default)]
    pub choices: Vec<String>,
    #[serde(default)]
    pub variables: BTreeMap<String, Input>,
}

/// A command-line argument: `positional` (its value) or `named` (`name`
/// and its value, two arguments).
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Argument {
    #[serde(rename = "type")]
    pub kind: String,
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub value_hint: Option<String>,
    #[serde(flatten)]
    pub input: Input,
}

/// An environment variable or a header.
#[derive(Debug, Clone, Deserialize)]
pub struct KeyValue {
    pub name: String,
    #[serde(flatten)]
    pub input: Input,
}

/// One way of running the server: a package or a remote.
#[derive(Debug, Clone, Copy)]
pub enum Entry<'a> {
    Package(usize, &'a Package),
    Remote(usize, &'a Remote),
}

impl Entry<'_> {
    /// `package:N` or `remote:N` (1-based, in the file's order): what
    /// `--pick` names.
    pub fn id(&self) -> String {
        match self {
            Entry::Package(i, _) => format!("package:{}", i + 1),
            Entry::Remote(i, _) => format!("remote:{}", i + 1),
        }
    }

    /// One line: what it is.
    pub fn describe(&self) -> String {
        match self {
            Entry::Package(_, p) => format!(
                "{} {}{} over {}",
                p.registry_type,
                p.identifier,
                p.version.as_deref().map(|v| format!("@{v}")).unwrap_or_default(),
                p.transport.kind
            ),
            Entry::Remote(_, r) => format!("remote {} {}", r.kind, r.url.as_deref().unwrap_or("(no url)")),
        }
    }

    /// `stdio` for a package mcpcert starts, `http` for a remote.
    pub fn is_remote(&self) -> bool {
        matches!(self, Entry::Remote(..))
    }
}

/// What this machine has: a program found on `PATH`, and a container
/// runtime that works.
pub trait Host {
    fn has(&self, program: &str) -> bool;
    /// docker, else podman, when one is there.
    fn container_runtime(&self) -> Option<&'static str> {
        ["docker", "podman"].into_iter().find(|p| self.has(p))
    }
}

/// The real machine: programs on `PATH`; a container runtime that answers
/// `info` within 10 s (a docker client with no daemon does not count).
pub struct ThisMachine;

impl Host for ThisMachine {
    fn has(&self, program: &str) -> bool {
        find_program(program).is_some()
    }
    fn container_runtime(&self) -> Option<&'static str> {
        static FOUND: std::sync::OnceLock<Option<&'static str>> = std::sync::OnceLock::new();
        *FOUND.get_or_init(|| ["docker", "podman"].into_iter().find(|p| self.has(p) && answers_info(p)))
    }
}

fn answers_info(runtime: &str) -> bool {
    let Ok(mut child) = std::process::Command::new(runtime)
        .arg("info")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
    else {
        return false;
    };
    let started = std::time::Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(st)) => return st.success(),
            Ok(None) if started.elapsed() < std::time::Duration::from_secs(10) => std::thread::sleep(std::time::Duration::from_millis(50)),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return false;
            }
        }
    }
}

/// `program`'s path on `PATH`, if it is there and executable.
pub fn find_program(program: &str) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(program))
        .find(|p| p.metadata().is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0))
}

impl ServerJson {
    /// Its packages, then its remotes, in the file's order.
    pub fn entries(&self) -> Vec<Entry<'_>> {
        let p = self.packages.iter().enumerate().map(|(i, p)| Entry::Package(i, p));
        p.chain(self.remotes.iter().enumerate().map(|(i, r)| Entry::Remote(i, r))).collect()
    }

    /// `name@version`.
    pub fn label(&self) -> String {
        if self.version.is_empty() { self.name.clone() } else { format!("{}@{}", self.name, self.version) }
    }
}

/// Why mcpcert cannot use this entry on this machine; None: it can.
pub fn unusable(e: &Entry<'_>, host: &dyn Host) -> Option<String> {
    match e {
        Entry::Remote(_, r) => match r.kind.as_str() {
            "streamable-http" | "sse" if r.url.as_deref().is_some_and(|u| !u.is_empty()) => None,
            "streamable-http" | "sse" => Some("the remote has no url".into()),
            k => Some(format!("remote type `{k}` is not one mcpcert speaks (streamable-http, sse)")),
        },
        Entry::Package(_, p) => {
            if p.transport.kind != "stdio" {
                return Some(format!(
                    "the package serves {} itself: mcpcert starts only stdio servers (start it, then run --http URL)",
                    p.transport.kind
                ));
            }
            let version = p.version.as_deref().filter(|v| !v.is_empty());
            let unpinned = || Some("the package names no version: mcpcert runs pinned versions only".to_string());
            match p.registry_type.as_str() {
                "npm" | "pypi" if version.is_none() => unpinned(),
                "npm" => {
                    if let Some(bad) = bad_name(&p.identifier, true).or_else(|| bad_version(version.unwrap_or_default())) {
                        return Some(bad);
                    }
                    (!host.has("npm")).then(|| "an npm package, and npm is not on PATH".into())
                }
                "pypi" => {
                    if let Some(bad) = bad_name(&p.identifier, false).or_else(|| bad_version(version.unwrap_or_default())) {
                        return Some(bad);
                    }
                    (!host.has("uv") && !host.has("python3")).then(|| "a PyPI package, and neither uv nor python3 is on PATH".into())
                }
                "oci" => match host.container_runtime() {
                    None => Some("an OCI image, and no working container runtime (docker or podman answering `info`) is here".into()),
                    Some(_) if p.identifier.starts_with('-') || p.identifier.chars().any(char::is_whitespace) => {
                        Some(format!("`{}` is not an image reference", p.identifier))
                    }
                    Some(_) => None,
                },
                "nuget" => Some("a NuGet package (dnx): mcpcert does not start those yet".into()),
                "mcpb" => Some("an MCPB bundle: mcpcert does not start those yet".into()),
                t => Some(format!("registry type `{t}` is not one mcpcert knows (npm, pypi, oci)")),
            }
        }
    }
}

/// An npm or PyPI name that could read as an option or leave a folder.
fn bad_name(name: &str, npm: bool) -> Option<String> {
    let body = if npm { name.strip_prefix('@').and_then(|s| s.split_once('/')).map(|(a, b)| vec![a, b]) } else { None };
    let parts = body.unwrap_or_else(|| vec![name]);
    let good = parts.iter().all(|p| {
        p.chars().next().is_some_and(|c| c.is_ascii_alphanumeric())
            && p.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | '~'))
    });
    (!good).then(|| format!("`{name}` is not a package name mcpcert installs"))
}

fn bad_version(v: &str) -> Option<String> {
    let good = v.chars().next().is_some_and(|c| c.is_ascii_alphanumeric())
        && v.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | '+' | '!'));
    (!good).then(|| format!("`{v}` is not a pinned version (a range or an odd string)"))
}

/// Reads a `server.json` (or one entry of a registry listing, the
/// `{"server": …, "_meta": …}` the registry's API gives).
pub fn load(path: &Path) -> Result<ServerJson, String> {
    let size = std::fs::metadata(path).map_err(|e| format!("{}: {e}", path.display()))?.len();
    if size > MAX_BYTES {
        return Err(format!("{}: {size} bytes; a server.json is at most {MAX_BYTES}", path.display()));
    }
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    parse(&text).map_err(|e| format!("{}: {e}", path.display()))
}

pub fn parse(text: &str) -> Result<ServerJson, String> {
    let v: Value = serde_json::from_str(text).map_err(|e| format!("not JSON: {e}"))?;
    let v = match (&v.get("name"), v.get("server"), v.get("servers")) {
        (None, Some(s), _) if s.is_object() => s.clone(),
        (None, _, Some(Value::Array(a))) => {
            return Err(format!(
                "a registry listing of {} servers: `run --server-json` takes one server.json (or one entry of a listing)",
                a.len()
            ));
        }
        _ => v,
    };
    serde_json::from_value(v).map_err(|e| format!("not a server.json: {e}"))
}

/// The entry `want` names (`package:N`, `remote:N`, or a kind — npm, pypi,
/// oci, nuget, mcpb, remote — for the first of that kind), or, when none
/// is named, the first this machine can use: packages before remotes.
pub fn pick<'a>(sj: &'a ServerJson, want: Option<&str>, host: &dyn Host) -> Result<Entry<'a>, String> {
    let all = sj.entries();
    if all.is_empty() {
        return Err(format!("{} lists no packages and no remotes: nothing to run", sj.label()));
    }
    let listing = || {
        all.iter()
            .map(|e| {
                let why = unusable(e, host).map(|w| format!(" — cannot: {w}")).unwrap_or_default();
                format!("\n  {}  {}{why}", e.id(), e.describe())
            })
            .collect::<String>()
    };
    let chosen = match want {
        None => {
            return all
                .iter()
                .find(|e| unusable(e, host).is_none())
                .copied()
                .ok_or_else(|| format!("{}: no entry this machine can run:{}", sj.label(), listing()));
        }
        Some(w) => all.iter().find(|e| {
            e.id() == w
                || match e {
                    Entry::Package(_, p) => p.registry_type == w,
                    Entry::Remote(..) => w == "remote",
                }
        }),
    };
    let Some(e) = chosen else {
        return Err(format!(
            "--pick {}: {} has no such entry (package:N, remote:N, or a kind: npm, pypi, oci, remote):{}",
            want.unwrap_or(""),
            sj.label(),
            listing()
        ));
    };
    match unusable(e, host) {
        Some(why) => Err(format!("{} {} ({}): {why}", sj.label(), e.id(), e.describe())),
        None => Ok(*e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    pub struct Has(pub Vec<&'static str>);
    impl Host for Has {
        fn has(&self, p: &str) -> bool {
            self.0.contains(&p)
        }
    }

    const SJ: &str = r#"{"$schema":"https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json",
      "name":"io.github.example/weather","description":"d","version":"1.2.0",
      "packages":[
        {"registryType":"oci","identifier":"docker.io/example/weather:1.2.0","transport":{"type":"stdio"}},
        {"registryType":"npm","identifier":"@example/weather","version":"1.2.0","transport":{"type":"stdio"}},
        {"registryType":"pypi","identifier":"weather-mcp","version":"1.2.0","transport":{"type":"stdio"}},
        {"registryType":"npm","identifier":"--registry=http://evil.invalid","version":"1.0.0","transport":{"type":"stdio"}},
        {"registryType":"npm","identifier":"weather-http","version":"^1.0","transport":{"type":"stdio"}},
        {"registryType":"npm","identifier":"weather-served","version":"1.0.0","transport":{"type":"streamable-http","url":"http://localhost:{port}/mcp"}}
      ],
      "remotes":[{"type":"streamable-http","url":"https://weather.example.invalid/mcp"}]}"#;

    #[test]
    fn entries_are_listed_and_the_first_usable_one_is_picked() {
        let sj = parse(SJ).unwrap();
        assert_eq!(sj.label(), "io.github.example/weather@1.2.0");
        let ids: Vec<String> = sj.entries().iter().map(Entry::id).collect();
        assert_eq!(ids, ["package:1", "package:2", "package:3", "package:4", "package:5", "package:6", "remote:1"]);
        // No docker: the npm package comes first.
        assert_eq!(pick(&sj, None, &Has(vec!["npm", "python3"])).unwrap().id(), "package:2");
        assert_eq!(pick(&sj, None, &Has(vec!["docker"])).unwrap().id(), "package:1");
        assert_eq!(pick(&sj, None, &Has(vec!["python3"])).unwrap().id(), "package:3");
        assert_eq!(pick(&sj, None, &Has(vec![])).unwrap().id(), "remote:1");
        assert_eq!(pick(&sj, Some("pypi"), &Has(vec!["uv"])).unwrap().id(), "package:3");
        assert_eq!(pick(&sj, Some("remote:1"), &Has(vec![])).unwrap().id(), "remote:1");
        let e = pick(&sj, Some("oci"), &Has(vec!["npm"])).unwrap_err();
        assert!(e.contains("no working container runtime"), "{e}");
        let e = pick(&sj, Some("package:4"), &Has(vec!["npm"])).unwrap_err();
        assert!(e.contains("not a package name"), "{e}");
        let e = pick(&sj, Some("package:5"), &Has(vec!["npm"])).unwrap_err();
        assert!(e.contains("not a pinned version"), "{e}");
        let e = pick(&sj, Some("package:6"), &Has(vec!["npm"])).unwrap_err();
        assert!(e.contains("mcpcert starts only stdio servers"), "{e}");
        let e = pick(&sj, Some("package:9"), &Has(vec!["npm"])).unwrap_err();
        assert!(e.contains("no such entry") && e.contains("package:6  npm weather-served@1.0.0 over streamable-http"), "{e}");
    }

    #[test]
    fn a_listing_entry_is_read_and_a_whole_listing_is_refused() {
        let one = format!(r#"{{"server":{SJ},"_meta":{{"io.modelcontextprotocol.registry/official":{{"status":"active"}}}}}}"#);
        assert_eq!(parse(&one).unwrap().name, "io.github.example/weather");
        let many = format!(r#"{{"servers":[{one},{one}],"metadata":{{"count":2}}}}"#);
        assert!(parse(&many).unwrap_err().contains("a registry listing of 2 servers"));
        assert!(parse("[]").unwrap_err().contains("not a server.json"));
        assert!(parse(r#"{"name":"a/b","packages":[{"registryType":"npm"}]}"#).unwrap_err().contains("transport"));
        let empty = parse(r#"{"name":"a/b","version":"1"}"#).unwrap();
        assert!(pick(&empty, None, &Has(vec![])).unwrap_err().contains("nothing to run"));
    }
}
