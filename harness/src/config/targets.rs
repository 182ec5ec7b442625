//! The targets file of `mcpcert matrix`: many servers, one `[[target]]`
//! table each.
//!
//! ```toml
//! [[target]]
//! name = "time-server"
//! command = "mcp-server-time --local-timezone UTC"   # or: url = "http://127.0.0.1:8000/mcp"
//!                                                   # or: server_json = "server.json" (pick = "npm")
//! config = "time.toml"                              # optional, relative to this file; alone,
//!                                                   # its [target] names the command or url
//! args = ["--revision", "2026-07-28"]               # optional, more `mcpcert run` options
//! ```

use super::ConfigError;
use serde::Deserialize;
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(default)]
    target: Vec<Raw>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct Raw {
    name: String,
    command: Option<String>,
    url: Option<String>,
    server_json: Option<PathBuf>,
    pick: Option<String>,
    config: Option<PathBuf>,
    #[serde(default)]
    args: Vec<String>,
}

/// One server of the matrix.
#[derive(Debug, Clone, PartialEq)]
pub struct MatrixTarget {
    /// Unique in the file; names the target's report folder.
    pub name: String,
    pub how: How,
    /// The target's config file, resolved against the targets file's folder.
    pub config: Option<PathBuf>,
    /// More `mcpcert run` options for this target.
    pub args: Vec<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum How {
    /// A command to spawn over stdio (run in the current directory).
    Command(String),
    /// A Streamable HTTP URL of a server that is already running.
    Url(String),
    /// A registry server.json (resolved against the targets file's folder)
    /// and the entry to pick (`run --server-json FILE --pick ENTRY`).
    ServerJson(PathBuf, Option<String>),
    /// The target's config alone (`run --config FILE`): its `[target]`
    /// names the command (stdio) or the url (HTTP), read here.
    Config { stdio: bool, target: String },
}

/// Options `matrix` sets itself for each target; a target's `args` may not.
const OWN: [&str; 9] = ["--stdio", "--http", "--server-json", "--pick", "--config", "--out", "--junit", "--json", "--html"];

/// Reads and checks a targets file: every target has a unique name made of
/// letters, digits, `.`, `_` and `-`, and exactly one of `command`, `url`,
/// `server_json` (`pick` only with `server_json`).
pub fn load(path: &Path) -> Result<Vec<MatrixTarget>, ConfigError> {
    let text = std::fs::read_to_string(path).map_err(|e| ConfigError::new(path, e.to_string()))?;
    parse(&text, path)
}

pub fn parse(text: &str, path: &Path) -> Result<Vec<MatrixTarget>, ConfigError> {
    let file: File = toml::from_str(text).map_err(|e| ConfigError::new(path, e.to_string()))?;
    if file.target.is_empty() {
        return Err(ConfigError::new(path, "no [[target]] tables: nothing to run"));
    }
    let base = path.parent().map(Path::to_path_buf).unwrap_or_default();
    let mut out: Vec<MatrixTarget> = Vec::new();
    for (i, t) in file.target.into_iter().enumerate() {
        let at = format!("at target[{i}]");
        let good = !t.name.is_empty()
            && !t.name.starts_with('.')
            && t.name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'));
        if !good {
            return Err(ConfigError::new(
                path,
                format!("{at}: name `{}` must be letters, digits, `.`, `_` or `-` (it names a folder), not starting with `.`", t.name),
            ));
        }
        if out.iter().any(|o| o.name == t.name) {
            return Err(ConfigError::new(path, format!("{at}: the name `{}` is used twice", t.name)));
        }
        if t.pick.is_some() && t.server_json.is_none() {
            return Err(ConfigError::new(path, format!("{at} ({}): pick chooses an entry of a server_json", t.name)));
        }
        let config = t.config.map(|c| if c.is_absolute() { c } else { base.join(c) });
        let how = match (t.command, t.url, t.server_json) {
            (Some(c), None, None) if !c.trim().is_empty() => How::Command(c),
            (None, Some(u), None) if u.starts_with("http://") || u.starts_with("https://") => How::Url(u),
            (None, Some(u), None) => return Err(ConfigError::new(path, format!("{at} ({}): url `{u}` is not an http(s) URL", t.name))),
            (None, None, Some(j)) => How::ServerJson(if j.is_absolute() { j } else { base.join(j) }, t.pick),
            // A config alone, as `run --config FILE` takes it.
            (None, None, None) if let Some(c) = &config => {
                let cfg = super::load(c)
                    .map_err(|e| ConfigError::new(path, format!("{at} ({}): config {}: {}", t.name, c.display(), e.problem)))?;
                match (cfg.target.command, cfg.target.url) {
                    (Some(command), None) => How::Config { stdio: true, target: command },
                    (None, Some(url)) => How::Config { stdio: false, target: url },
                    _ => {
                        return Err(ConfigError::new(
                            path,
                            format!(
                                "{at} ({}): its config {} names no [target] command or url: give command, url or server_json here",
                                t.name,
                                c.display()
                            ),
                        ));
                    }
                }
            }
            (None, None, None) => {
                return Err(ConfigError::new(
                    path,
                    format!("{at} ({}): give command (stdio), url (HTTP), server_json, or a config whose [target] names one", t.name),
                ));
            }
            _ => return Err(ConfigError::new(path, format!("{at} ({}): give one of command, url, server_json, not two", t.name))),
        };
        if let Some(own) = t.args.iter().find(|a| OWN.contains(&a.split('=').next().unwrap_or(""))) {
            return Err(ConfigError::new(path, format!("{at} ({}): args may not hold `{own}`: matrix sets it", t.name)));
        }
        out.push(MatrixTarget { name: t.name, how, config, args: t.args });
    }
    Ok(out)
}

/// `K/N` (1 ≤ K ≤ N): this job's share of the targets.
pub fn parse_shard(s: &str) -> Result<(usize, usize), String> {
    let bad = || format!("--shard must be K/N with 1 <= K <= N, got `{s}`");
    let (k, n) = s.split_once('/').ok_or_else(bad)?;
    let (k, n): (usize, usize) = (k.trim().parse().map_err(|_| bad())?, n.trim().parse().map_err(|_| bad())?);
    if k == 0 || n == 0 || k > n {
        return Err(bad());
    }
    Ok((k, n))
}

/// The targets of shard K of N: every N-th, starting at the K-th, so that
/// the shards are disjoint and together hold every target.
pub fn shard(targets: Vec<MatrixTarget>, kn: (usize, usize)) -> Vec<MatrixTarget> {
    shard_of(targets, kn)
}

/// Shard K of N of any list: every N-th item, starting at the K-th.
pub fn shard_of<T>(items: Vec<T>, (k, n): (usize, usize)) -> Vec<T> {
    items.into_iter().enumerate().filter(|(i, _)| i % n == k - 1).map(|(_, t)| t).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(text: &str) -> Result<Vec<MatrixTarget>, String> {
        parse(text, Path::new("dir/targets.toml")).map_err(|e| e.problem)
    }

    #[test]
    fn targets_are_read_and_checked() {
        let t = p("[[target]]\nname = \"a\"\ncommand = \"srv --x\"\nconfig = \"a.toml\"\n[[target]]\nname = \"b\"\nurl = \"http://127.0.0.1:1/mcp\"\nargs = [\"--strict\"]\n").unwrap();
        assert_eq!(t[0].how, How::Command("srv --x".into()));
        assert_eq!(t[0].config, Some(PathBuf::from("dir/a.toml")));
        assert_eq!(t[1].how, How::Url("http://127.0.0.1:1/mcp".into()));
        assert_eq!(t[1].args, vec!["--strict".to_string()]);
        assert!(p("").unwrap_err().contains("no [[target]]"));
        assert!(
            p("[[target]]\nname = \"a\"\ncommand = \"x\"\n[[target]]\nname = \"a\"\ncommand = \"y\"\n").unwrap_err().contains("used twice")
        );
        assert!(p("[[target]]\nname = \"../up\"\ncommand = \"x\"\n").unwrap_err().contains("names a folder"));
        assert!(p("[[target]]\nname = \"a\"\n").unwrap_err().contains("give command"));
        // A config alone: its [target] says what to run.
        let dir = std::env::temp_dir().join(format!("mcpcert-targets-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("srv.toml"), "[target]\ncommand = \"srv --stdio\"\n").unwrap();
        std::fs::write(dir.join("none.toml"), "[target]\ncwd = \".\"\n").unwrap();
        let c = parse("[[target]]\nname = \"c\"\nconfig = \"srv.toml\"\n", &dir.join("targets.toml")).unwrap();
        assert_eq!(c[0].how, How::Config { stdio: true, target: "srv --stdio".into() });
        assert_eq!(c[0].config, Some(dir.join("srv.toml")));
        let none = parse("[[target]]\nname = \"n\"\nconfig = \"none.toml\"\n", &dir.join("targets.toml")).unwrap_err().problem;
        assert!(none.contains("names no [target] command or url"), "{none}");
        let _ = std::fs::remove_dir_all(&dir);
        assert!(p("[[target]]\nname = \"a\"\ncommand = \"x\"\nurl = \"http://h/\"\n").unwrap_err().contains("not two"));
        let j = p("[[target]]\nname = \"j\"\nserver_json = \"s/server.json\"\npick = \"npm\"\n").unwrap();
        assert_eq!(j[0].how, How::ServerJson(PathBuf::from("dir/s/server.json"), Some("npm".into())));
        assert!(p("[[target]]\nname = \"a\"\ncommand = \"x\"\npick = \"npm\"\n").unwrap_err().contains("pick chooses"));
        assert!(p("[[target]]\nname = \"a\"\ncommand = \"x\"\nargs = [\"--out=x\"]\n").unwrap_err().contains("matrix sets it"));
        assert!(p("[[target]]\nname = \"a\"\ncommand = \"x\"\ncomand = \"y\"\n").unwrap_err().contains("unknown field"));
    }

    #[test]
    fn shards_are_disjoint_and_cover_every_target() {
        let all: Vec<MatrixTarget> =
            (0..7).map(|i| MatrixTarget { name: format!("t{i}"), how: How::Command("x".into()), config: None, args: vec![] }).collect();
        let mut seen: Vec<String> = Vec::new();
        for k in 1..=3 {
            seen.extend(shard(all.clone(), (k, 3)).into_iter().map(|t| t.name));
        }
        seen.sort();
        let mut want: Vec<String> = all.iter().map(|t| t.name.clone()).collect();
        want.sort();
        assert_eq!(seen, want);
        assert_eq!(parse_shard("2/3"), Ok((2, 3)));
        assert!(parse_shard("0/3").is_err() && parse_shard("4/3").is_err() && parse_shard("x").is_err());
    }
}
