//! A snapshot of the MCP Registry: the pages `GET /v0.1/servers` gives
//! (`{"servers": [{"server": {…}, "_meta": {…}}], "metadata": {…}}`), one
//! file or several, or a folder of `server.json` files (bare, or one
//! `{"server": …}` entry each). Each server is kept once, at its latest
//! version (the registry's `isLatest`, else the last one read); a server
//! whose kept version is deleted is listed apart (a board takes it off its
//! site). What cannot be read is said, never skipped silently.

use serde_json::Value;
use std::path::{Path, PathBuf};

/// The registry's own `_meta` key on a listing entry.
pub const OFFICIAL: &str = "io.modelcontextprotocol.registry/official";

/// One server of the snapshot.
#[derive(Debug, Clone)]
pub struct Listed {
    pub name: String,
    pub version: String,
    /// The server.json as the snapshot has it (its compact text: a
    /// registry's snapshot is tens of thousands of them, held for a night).
    pub server: String,
    /// The registry's `_meta` for this version (status, dates, isLatest).
    pub official: Option<Value>,
    /// The file it came from.
    pub source: String,
}

impl Listed {
    fn is_latest(&self) -> bool {
        self.official.as_ref().and_then(|o| o.get("isLatest")).and_then(Value::as_bool).unwrap_or(false)
    }
    fn status(&self) -> &str {
        self.official.as_ref().and_then(|o| o.get("status")).and_then(Value::as_str).unwrap_or("active")
    }
}

/// What a snapshot holds.
#[derive(Debug, Default)]
pub struct Snapshot {
    /// One entry per server, by name.
    pub servers: Vec<Listed>,
    /// The servers whose latest version the registry marks deleted.
    pub deleted: Vec<Listed>,
    /// What could not be read.
    pub problems: Vec<String>,
}

/// The snapshot's servers, by name, and what could not be read.
pub fn read(paths: &[PathBuf]) -> Snapshot {
    let mut all = Vec::new();
    let mut problems = Vec::new();
    for p in paths {
        if p.is_dir() {
            let mut files: Vec<PathBuf> = match std::fs::read_dir(p) {
                Ok(rd) => rd.flatten().map(|e| e.path()).filter(|f| f.extension().is_some_and(|x| x == "json")).collect(),
                Err(e) => {
                    problems.push(format!("{}: {e}", p.display()));
                    continue;
                }
            };
            files.sort();
            for f in files {
                read_file(&f, &mut all, &mut problems);
            }
        } else {
            read_file(p, &mut all, &mut problems);
        }
    }
    let (servers, deleted) = latest(all).into_iter().partition(|l| l.status() != "deleted");
    Snapshot { servers, deleted, problems }
}

fn read_file(path: &Path, out: &mut Vec<Listed>, problems: &mut Vec<String>) {
    let shown = path.display().to_string();
    let text = match std::fs::metadata(path) {
        Ok(m) if m.len() > 256 << 20 => return problems.push(format!("{shown}: {} bytes, more than a snapshot file may have", m.len())),
        Ok(_) => match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) => return problems.push(format!("{shown}: {e}")),
        },
        Err(e) => return problems.push(format!("{shown}: {e}")),
    };
    match serde_json::from_str::<Value>(&text) {
        Ok(v) => entries(&v, &shown, out, problems),
        Err(e) => problems.push(format!("{shown}: not JSON: {e}")),
    }
}

/// The entries of one parsed file.
pub fn entries(v: &Value, source: &str, out: &mut Vec<Listed>, problems: &mut Vec<String>) {
    let list: Vec<&Value> = match v.get("servers") {
        Some(Value::Array(a)) => a.iter().collect(),
        _ => vec![v],
    };
    for (i, e) in list.into_iter().enumerate() {
        let (server, meta) = match e.get("server") {
            Some(s) if s.is_object() => (s, e.get("_meta")),
            _ => (e, None),
        };
        let name = server.get("name").and_then(Value::as_str).unwrap_or("");
        if name.is_empty() {
            problems.push(format!("{source}: entry {}: no server name", i + 1));
            continue;
        }
        out.push(Listed {
            name: name.to_string(),
            version: server.get("version").and_then(Value::as_str).unwrap_or("").to_string(),
            server: server.to_string(),
            official: meta.and_then(|m| m.get(OFFICIAL)).cloned(),
            source: source.to_string(),
        });
    }
}

/// One entry per name: the one marked latest, else the last read. Sorted
/// by name.
fn latest(all: Vec<Listed>) -> Vec<Listed> {
    let mut by: std::collections::BTreeMap<String, Listed> = std::collections::BTreeMap::new();
    for l in all {
        let keep_old = by.get(&l.name).is_some_and(|old| old.is_latest() && !l.is_latest());
        if !keep_old {
            by.insert(l.name.clone(), l);
        }
    }
    by.into_values().collect()
}

/// A name as a folder name: letters, digits, `.`, `_`, `-`; `/` becomes
/// `__`, anything else `_`.
pub fn slug(name: &str) -> String {
    let s: String =
        name.replace('/', "__").chars().map(|c| if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') { c } else { '_' }).collect();
    let s = s.trim_start_matches('.').to_string();
    if s.is_empty() { "_".into() } else { s }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listings_and_folders_are_read_once_per_server() {
        let page = r#"{"servers":[
          {"server":{"name":"io.github.a/one","version":"1.0.0"},"_meta":{"io.modelcontextprotocol.registry/official":{"status":"active","isLatest":false}}},
          {"server":{"name":"io.github.a/one","version":"1.1.0"},"_meta":{"io.modelcontextprotocol.registry/official":{"status":"active","isLatest":true}}},
          {"server":{"name":"io.github.a/gone","version":"2.0.0"},"_meta":{"io.modelcontextprotocol.registry/official":{"status":"deleted","isLatest":true}}},
          {"server":{"version":"0"}}
        ],"metadata":{"count":4}}"#;
        let dir = std::env::temp_dir().join(format!("mcpcert-snapshot-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("folder")).unwrap();
        std::fs::write(dir.join("page1.json"), page).unwrap();
        std::fs::write(dir.join("folder/b.json"), r#"{"name":"io.github.b/two","version":"0.3.0"}"#).unwrap();
        std::fs::write(dir.join("folder/c.json"), "not json").unwrap();
        // A later page with an older version that is not the latest: ignored.
        std::fs::write(dir.join("page2.json"), r#"{"servers":[{"server":{"name":"io.github.a/one","version":"0.9.0"}}]}"#).unwrap();
        let Snapshot { servers: got, deleted, problems } = read(&[dir.join("page1.json"), dir.join("page2.json"), dir.join("folder")]);
        let names: Vec<(String, String)> = got.iter().map(|l| (l.name.clone(), l.version.clone())).collect();
        assert_eq!(deleted.iter().map(|l| l.name.as_str()).collect::<Vec<_>>(), ["io.github.a/gone"]);
        assert_eq!(names, [("io.github.a/one".to_string(), "1.1.0".to_string()), ("io.github.b/two".into(), "0.3.0".into())]);
        assert_eq!(problems.len(), 2, "{problems:?}");
        assert!(problems[0].contains("entry 4: no server name") && problems[1].contains("c.json: not JSON"), "{problems:?}");
        assert_eq!(slug("io.github.a/one"), "io.github.a__one");
        assert_eq!(slug("../x y"), "__x_y");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
