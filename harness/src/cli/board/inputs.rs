//! `board --inputs FILE`: the values servers need, each given to one
//! server only, by its registry name. A value given for one server never
//! reaches another, whatever the other's server.json declares: a hostile
//! entry that names an input `GITHUB_TOKEN`, or another server's input,
//! gets nothing (the board reads no input from its own environment by the
//! input's name).
//!
//! ```toml
//! ["io.github.example/db"]
//! DB_PASSWORD = { env = "EXAMPLE_DB_PASSWORD" }   # from the board's environment
//! region = "eu-west-1"                            # as it is
//! allowed_directory = { path = "work/files" }     # a folder shared with the server (read and write)
//! ```
//!
//! An input's key is its name in the server.json (an environment
//! variable's name, a named argument's name or a positional's `valueHint`,
//! a variable's name), in any letter case and with `-` or `_` alike.

use mcpcert::packages::launch::input_var;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

#[derive(Debug, Default)]
pub struct Inputs {
    /// Server name → (`MCPCERT_INPUT_…` name → value).
    values: BTreeMap<String, BTreeMap<String, String>>,
    /// Server name → folders shared with it.
    shares: BTreeMap<String, Vec<PathBuf>>,
}

impl Inputs {
    pub fn load(path: &Path) -> Result<Inputs, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("--inputs {}: {e}", path.display()))?;
        let doc: toml::Table = toml::from_str(&text).map_err(|e| format!("--inputs {}: {e}", path.display()))?;
        let base = path.parent().unwrap_or(Path::new("."));
        let mut out = Inputs::default();
        for (server, table) in doc {
            let where_ = |k: &str| format!("--inputs {}: [\"{server}\"] {k}", path.display());
            let toml::Value::Table(table) = table else {
                return Err(format!("--inputs {}: `{server}` is not a table of one server's inputs", path.display()));
            };
            for (key, v) in table {
                let value = match &v {
                    toml::Value::String(s) => s.clone(),
                    toml::Value::Table(t) => match (t.get("env"), t.get("path")) {
                        (Some(toml::Value::String(var)), None) => match std::env::var(var) {
                            Ok(v) => v,
                            // Not given tonight: the input stays missing.
                            Err(_) => continue,
                        },
                        (None, Some(toml::Value::String(p))) => {
                            let dir = std::fs::canonicalize(base.join(p)).map_err(|e| format!("{}: the folder {p}: {e}", where_(&key)))?;
                            if !dir.is_dir() {
                                return Err(format!("{}: {p} is not a folder", where_(&key)));
                            }
                            out.shares.entry(server.clone()).or_default().push(dir.clone());
                            dir.display().to_string()
                        }
                        _ => return Err(format!("{}: give a string, {{ env = \"VAR\" }} or {{ path = \"DIR\" }}", where_(&key))),
                    },
                    _ => return Err(format!("{}: give a string, {{ env = \"VAR\" }} or {{ path = \"DIR\" }}", where_(&key))),
                };
                out.values.entry(server.clone()).or_default().insert(input_var(&key), value);
            }
        }
        Ok(out)
    }

    /// The value of one of `server`'s inputs, asked for by the input's own
    /// name or its `MCPCERT_INPUT_…` variable (as `launch::resolve` asks).
    pub fn lookup(&self, server: &str, name: &str) -> Option<String> {
        let key = if name.starts_with("MCPCERT_INPUT_") { name.to_string() } else { input_var(name) };
        self.values.get(server)?.get(&key).cloned()
    }

    /// Every value given to `server`, as `MCPCERT_INPUT_…` variables.
    pub fn env(&self, server: &str) -> Vec<(String, String)> {
        self.values.get(server).map(|m| m.iter().map(|(k, v)| (k.clone(), v.clone())).collect()).unwrap_or_default()
    }

    /// A digest of what `server` is given: the names of its values and
    /// its shares, never a value (a secret given since, or taken away,
    /// changes it; a new value of the same secret does not).
    pub fn digest(&self, server: &str) -> String {
        use sha2::Digest;
        let mut names: Vec<String> = self.values.get(server).map(|m| m.keys().cloned().collect()).unwrap_or_default();
        names.extend(self.shares(server).iter().map(|p| format!("share:{}", p.display())));
        if names.is_empty() {
            return String::new();
        }
        names.sort();
        let d = sha2::Sha256::digest(names.join("\0").as_bytes());
        d.iter().take(8).map(|b| format!("{b:02x}")).collect()
    }

    /// The folders shared with `server`.
    pub fn shares(&self, server: &str) -> &[PathBuf] {
        self.shares.get(server).map(Vec::as_slice).unwrap_or(&[])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_value_is_one_servers_own() {
        let dir = std::env::temp_dir().join(format!("mcpcert-inputs-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("files")).unwrap();
        let file = dir.join("inputs.toml");
        let var = format!("MCPCERT_TEST_INPUT_{}", std::process::id());
        std::fs::write(
            &file,
            format!(
                "[\"io.github.a/one\"]\nAPI_KEY = {{ env = \"{var}\" }}\nregion = \"eu\"\nallowed-directory = {{ path = \"files\" }}\nMISSING = {{ env = \"MCPCERT_TEST_NOT_SET_ANYWHERE\" }}\n[\"io.github.b/two\"]\nother = \"x\"\n"
            ),
        )
        .unwrap();
        // The variable is read when the file is loaded; without it the
        // input stays missing.
        let got = Inputs::load(&file).unwrap();
        assert_eq!(got.lookup("io.github.a/one", "API_KEY"), None);
        assert_eq!(got.lookup("io.github.a/one", "region"), Some("eu".into()));
        assert_eq!(got.lookup("io.github.a/one", "MCPCERT_INPUT_REGION"), Some("eu".into()));
        let shared = got.lookup("io.github.a/one", "ALLOWED_DIRECTORY").unwrap();
        assert!(shared.ends_with("/files") && Path::new(&shared).is_absolute(), "{shared}");
        assert_eq!(got.shares("io.github.a/one").len(), 1);
        // Another server's input is not this one's.
        assert_eq!(got.lookup("io.github.b/two", "region"), None);
        assert_eq!(got.lookup("io.github.c/three", "region"), None);
        assert_eq!(got.env("io.github.b/two"), [("MCPCERT_INPUT_OTHER".to_string(), "x".to_string())]);
        std::fs::write(&file, "[\"io.github.a/one\"]\nx = 3\n").unwrap();
        assert!(Inputs::load(&file).unwrap_err().contains("give a string"));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
