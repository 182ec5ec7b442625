//! Packages installed once per name@version into a cache folder, and the
//! command that starts each: npm packages with `npm install` into a folder
//! of their own (the program is the package's `bin`, as `npx` picks it);
//! PyPI packages into a virtual environment of their own (made with `uv`
//! when it is on PATH, else `python3 -m venv` and pip; the program is the
//! console script named like the package, or its only one, as `uvx` picks
//! it). A folder is used only once its install finished (a marker file);
//! a failed or interrupted install is removed and made again next time.
//! Every command runs without a shell, its output kept in the folder's
//! `install.log`, and is stopped after a time limit.

use super::launch::Install;
use super::sandbox::{Role, Sandbox};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Marks a finished install.
const DONE: &str = ".mcpcert-installed";
/// Touched each time an installed package is used.
const USED: &str = ".mcpcert-used";
/// How long one install may take.
pub const INSTALL_LIMIT: Duration = Duration::from_secs(900);

/// The cache folder: `$MCPCERT_CACHE`, else `$XDG_CACHE_HOME/mcpcert`,
/// else `~/.cache/mcpcert`.
pub fn default_cache() -> PathBuf {
    if let Some(d) = std::env::var_os("MCPCERT_CACHE").filter(|d| !d.is_empty()) {
        return PathBuf::from(d);
    }
    if let Some(d) = std::env::var_os("XDG_CACHE_HOME").filter(|d| !d.is_empty()) {
        return PathBuf::from(d).join("mcpcert");
    }
    std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache/mcpcert")).unwrap_or_else(|| PathBuf::from(".mcpcert-cache"))
}

/// A package ready to start.
#[derive(Debug, Clone)]
pub struct Installed {
    /// The program and its first arguments.
    pub program: Vec<String>,
    /// Its folder in the cache (None for an image).
    pub dir: Option<PathBuf>,
    /// Installed by this call (false: found in the cache).
    pub fresh: bool,
    pub seconds: f64,
}

/// Why a package could not be installed.
#[derive(Debug, Clone)]
pub struct InstallError {
    pub problem: String,
    /// The last lines of the installer's output.
    pub log_tail: String,
}

impl std::fmt::Display for InstallError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.problem)?;
        if !self.log_tail.is_empty() {
            write!(f, "\n  the installer's last lines:\n{}", self.log_tail.lines().map(|l| format!("    {l}\n")).collect::<String>())?;
        }
        Ok(())
    }
}

fn err(problem: impl Into<String>) -> InstallError {
    InstallError { problem: problem.into(), log_tail: String::new() }
}

/// The cache folder of a package: `<cache>/<kind>/<name>@<version>`, the
/// name's `/` made `+` (the names were checked: no `..`, no leading `-`).
pub fn folder(cache: &Path, install: &Install) -> Option<PathBuf> {
    let (kind, name, version) = match install {
        Install::Npm { name, version, .. } => ("npm", name, version),
        Install::Pypi { name, version, .. } => ("pypi", name, version),
        Install::Oci { .. } => return None,
    };
    Some(cache.join(kind).join(format!("{}@{version}", name.replace('/', "+"))))
}

/// Install (unless the cache has it) and say what starts it. `say` gets a
/// line before a fresh install. With a sandbox, each installer command
/// runs in it (the network, its package folder writable, nothing else of
/// the machine's: install scripts run there).
pub fn install(install: &Install, cache: &Path, sandbox: Option<&Sandbox>, say: &mut dyn FnMut(String)) -> Result<Installed, InstallError> {
    let started = Instant::now();
    let Some(dir) = folder(cache, install) else {
        let Install::Oci { argv } = install else { unreachable!("only an image has no folder") };
        return Ok(Installed { program: argv.clone(), dir: None, fresh: false, seconds: 0.0 });
    };
    let fresh = !dir.join(DONE).is_file();
    if fresh {
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).map_err(|e| err(format!("cannot create {}: {e}", dir.display())))?;
        say(format!("installing {} into {} (once: later runs reuse it)", what(install), dir.display()));
        if let Some(sb) = sandbox {
            sb.prepare_folder(&dir).map_err(|e| err(format!("cannot give {} to the sandbox's user: {e}", dir.display())))?;
        }
        match install {
            Install::Npm { name, version, registry } => npm(&dir, name, version, registry.as_deref(), sandbox)?,
            Install::Pypi { name, version, index } => pypi(&dir, name, version, index.as_deref(), sandbox)?,
            Install::Oci { .. } => unreachable!(),
        }
    }
    let program = match install {
        Install::Npm { name, .. } => npm_program(&dir, name)?,
        Install::Pypi { name, .. } => pypi_program(&dir, name)?,
        Install::Oci { .. } => unreachable!(),
    };
    if fresh {
        std::fs::write(dir.join(DONE), "").map_err(|e| err(format!("cannot write {}: {e}", dir.join(DONE).display())))?;
    }
    // When it was last used: the cache is trimmed least recently used first.
    let _ = std::fs::write(dir.join(USED), "");
    Ok(Installed { program: vec![program.display().to_string()], dir: Some(dir), fresh, seconds: started.elapsed().as_secs_f64() })
}

/// What trimming the cache did.
#[derive(Debug, Default, PartialEq)]
pub struct Trimmed {
    pub packages: usize,
    pub bytes: u64,
    pub removed: usize,
    pub removed_bytes: u64,
}

/// Removes installed packages, least recently used first, until the
/// cache's packages take at most `max_bytes`; a package used since `keep`
/// (this run's) is never removed.
pub fn trim(cache: &Path, max_bytes: u64, keep: std::time::SystemTime) -> Trimmed {
    fn size(p: &Path) -> u64 {
        match std::fs::symlink_metadata(p) {
            Ok(m) if m.is_dir() => std::fs::read_dir(p).into_iter().flatten().flatten().map(|e| size(&e.path())).sum(),
            Ok(m) => m.len(),
            Err(_) => 0,
        }
    }
    let mut all: Vec<(std::time::SystemTime, u64, PathBuf)> = ["npm", "pypi"]
        .iter()
        .flat_map(|k| std::fs::read_dir(cache.join(k)).into_iter().flatten().flatten())
        .map(|e| e.path())
        .filter(|p| p.join(DONE).is_file())
        .map(|p| {
            let used = std::fs::metadata(p.join(USED)).or_else(|_| std::fs::metadata(p.join(DONE))).and_then(|m| m.modified());
            (used.unwrap_or(std::time::UNIX_EPOCH), size(&p), p)
        })
        .collect();
    all.sort();
    let mut t = Trimmed { packages: all.len(), bytes: all.iter().map(|x| x.1).sum(), ..Trimmed::default() };
    let mut total = t.bytes;
    for (used, bytes, p) in all {
        if total <= max_bytes || used >= keep {
            break;
        }
        if std::fs::remove_dir_all(&p).is_ok() {
            total -= bytes;
            t.removed += 1;
            t.removed_bytes += bytes;
        }
    }
    t
}

fn what(i: &Install) -> String {
    match i {
        Install::Npm { name, version, .. } => format!("npm {name}@{version}"),
        Install::Pypi { name, version, .. } => format!("PyPI {name}=={version}"),
        Install::Oci { argv } => format!("image {}", argv.last().cloned().unwrap_or_default()),
    }
}

/// Runs `argv` in `dir` (in the sandbox, when there is one), output
/// appended to `dir/install.log`, within the time limit.
fn step(dir: &Path, argv: &[String], sandbox: Option<&Sandbox>) -> Result<(), InstallError> {
    let log_path = dir.join("install.log");
    let tail = || {
        let text = std::fs::read_to_string(&log_path).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(12)..].join("\n")
    };
    let log =
        std::fs::OpenOptions::new().create(true).append(true).open(&log_path).map_err(|e| err(format!("{}: {e}", log_path.display())))?;
    let mut cmd = match sandbox {
        Some(sb) => {
            let w = sb.wrap(Role::Installer, dir, &[], argv, &[]);
            let mut c = Command::new(&w.argv[0]);
            c.args(&w.argv[1..]).env_clear().envs(w.env).current_dir(w.cwd.as_deref().map(Path::new).unwrap_or(dir));
            c
        }
        None => {
            let mut c = Command::new(&argv[0]);
            c.args(&argv[1..]).current_dir(dir);
            c
        }
    };
    cmd.stdin(Stdio::null()).process_group(0);
    cmd.stdout(log.try_clone().map(Stdio::from).unwrap_or(Stdio::null())).stderr(Stdio::from(log));
    let shown = argv.join(" ");
    let mut child = cmd.spawn().map_err(|e| err(format!("cannot run `{shown}`: {e}")))?;
    let started = Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(st)) if st.success() => return Ok(()),
            Ok(Some(st)) => return Err(InstallError { problem: format!("`{shown}` failed ({st})"), log_tail: tail() }),
            Ok(None) if started.elapsed() > INSTALL_LIMIT => {
                // The whole group: an install script's children too.
                // SAFETY: kill(2) on the group of our own child.
                unsafe { libc::kill(-(child.id() as i32), libc::SIGKILL) };
                let _ = child.kill();
                let _ = child.wait();
                return Err(InstallError {
                    problem: format!("`{shown}` did not finish in {} s", INSTALL_LIMIT.as_secs()),
                    log_tail: tail(),
                });
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(100)),
            Err(e) => return Err(err(format!("`{shown}`: {e}"))),
        }
    }
}

fn npm(dir: &Path, name: &str, version: &str, registry: Option<&str>, sandbox: Option<&Sandbox>) -> Result<(), InstallError> {
    std::fs::write(dir.join("package.json"), "{\"name\":\"mcpcert-install\",\"private\":true}\n").map_err(|e| err(e.to_string()))?;
    let mut argv: Vec<String> =
        ["npm", "install", "--no-audit", "--no-fund", "--no-save", "--prefix", "."].iter().map(|s| s.to_string()).collect();
    if let Some(r) = registry {
        argv.extend(["--registry".to_string(), r.to_string()]);
    }
    argv.push(format!("{name}@{version}"));
    step(dir, &argv, sandbox)
}

/// The package's program: its `bin` (one, or the one named like the
/// package without its scope).
fn npm_program(dir: &Path, name: &str) -> Result<PathBuf, InstallError> {
    let manifest = dir.join("node_modules").join(name).join("package.json");
    let text = std::fs::read_to_string(&manifest).map_err(|e| err(format!("{} after the install: {e}", manifest.display())))?;
    let v: serde_json::Value = serde_json::from_str(&text).map_err(|e| err(format!("{}: {e}", manifest.display())))?;
    let short = name.rsplit('/').next().unwrap_or(name);
    let bin = match v.get("bin") {
        Some(serde_json::Value::String(_)) => short.to_string(),
        Some(serde_json::Value::Object(m)) if m.len() == 1 => m.keys().next().cloned().unwrap_or_default(),
        Some(serde_json::Value::Object(m)) if m.contains_key(short) => short.to_string(),
        Some(serde_json::Value::Object(m)) => {
            return Err(err(format!(
                "npm {name} has {} programs ({}) and none is named {short}: which one serves MCP is not known",
                m.len(),
                m.keys().cloned().collect::<Vec<_>>().join(", ")
            )));
        }
        _ => return Err(err(format!("npm {name} has no program (no `bin` in its package.json): nothing to start"))),
    };
    let path = dir.join("node_modules/.bin").join(&bin);
    path.exists().then_some(path.clone()).ok_or_else(|| err(format!("{} is missing after the install", path.display())))
}

fn pypi(dir: &Path, name: &str, version: &str, index: Option<&str>, sandbox: Option<&Sandbox>) -> Result<(), InstallError> {
    let venv = dir.join("venv").display().to_string();
    let spec = format!("{name}=={version}");
    let index = index.map(|b| format!("{}/simple", b.trim_end_matches('/')));
    let mut install: Vec<String>;
    if super::find_program("uv").is_some() {
        step(dir, &["uv".into(), "venv".into(), "--quiet".into(), venv.clone()], sandbox)?;
        install = vec!["uv".into(), "pip".into(), "install".into(), "--python".into(), format!("{venv}/bin/python")];
    } else {
        step(dir, &["python3".into(), "-m".into(), "venv".into(), venv.clone()], sandbox)?;
        install = vec![format!("{venv}/bin/pip"), "install".into(), "--disable-pip-version-check".into(), "--no-input".into()];
    }
    if let Some(i) = index {
        install.extend(["--index-url".to_string(), i]);
    }
    install.push(spec);
    step(dir, &install, sandbox)
}

/// The console script of the installed distribution named like the
/// package, or its only one.
fn pypi_program(dir: &Path, name: &str) -> Result<PathBuf, InstallError> {
    let norm = |s: &str| s.to_ascii_lowercase().replace(['-', '.'], "_");
    let lib = dir.join("venv/lib");
    let site = std::fs::read_dir(&lib)
        .map_err(|e| err(format!("{}: {e}", lib.display())))?
        .flatten()
        .map(|e| e.path().join("site-packages"))
        .find(|p| p.is_dir())
        .ok_or_else(|| err(format!("no site-packages under {}", lib.display())))?;
    let dist = std::fs::read_dir(&site)
        .map_err(|e| err(format!("{}: {e}", site.display())))?
        .flatten()
        .map(|e| e.file_name().to_string_lossy().to_string())
        .find(|f| f.ends_with(".dist-info") && norm(f.split('-').next().unwrap_or("")) == norm(name))
        .ok_or_else(|| err(format!("the install of {name} left no {}-*.dist-info in {}", norm(name), site.display())))?;
    let text = std::fs::read_to_string(site.join(&dist).join("entry_points.txt")).unwrap_or_default();
    let scripts = console_scripts(&text);
    let chosen = match scripts.iter().find(|s| norm(s) == norm(name)) {
        Some(s) => s.clone(),
        None if scripts.len() == 1 => scripts[0].clone(),
        None if scripts.is_empty() => return Err(err(format!("PyPI {name} installs no command (no console_scripts): nothing to start"))),
        None => {
            return Err(err(format!(
                "PyPI {name} installs {} commands ({}) and none is named {name}: which one serves MCP is not known",
                scripts.len(),
                scripts.join(", ")
            )));
        }
    };
    let path = dir.join("venv/bin").join(&chosen);
    path.exists().then_some(path.clone()).ok_or_else(|| err(format!("{} is missing after the install", path.display())))
}

/// The names of an `entry_points.txt`'s `[console_scripts]`.
fn console_scripts(text: &str) -> Vec<String> {
    let mut inside = false;
    let mut out = Vec::new();
    for line in text.lines().map(str::trim) {
        if line.starts_with('[') {
            inside = line == "[console_scripts]";
        } else if inside && let Some((k, _)) = line.split_once('=') {
            out.push(k.trim().to_string());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn console_scripts_and_folders() {
        let t = "[console_scripts]\nmcp-server-time = mcp_server_time:main\n\n[other]\nx = y\n";
        assert_eq!(console_scripts(t), ["mcp-server-time"]);
        let i = Install::Npm { name: "@scope/srv".into(), version: "1.0.0".into(), registry: None };
        assert_eq!(folder(Path::new("/c"), &i), Some(PathBuf::from("/c/npm/@scope+srv@1.0.0")));
        assert_eq!(folder(Path::new("/c"), &Install::Oci { argv: vec!["docker".into()] }), None);
    }

    /// The cache is trimmed least recently used first, and never of what
    /// this run used.
    #[test]
    fn the_cache_is_trimmed_least_recently_used_first() {
        let cache = std::env::temp_dir().join(format!("mcpcert-trim-test-{}", std::process::id()));
        let t0 = std::time::SystemTime::now() - Duration::from_secs(3600);
        for (i, name) in ["old@1", "mid@1", "new@1"].iter().enumerate() {
            let d = cache.join("npm").join(name);
            std::fs::create_dir_all(&d).unwrap();
            std::fs::write(d.join("blob"), vec![0u8; 1000]).unwrap();
            std::fs::write(d.join(DONE), "").unwrap();
            let f = std::fs::File::create(d.join(USED)).unwrap();
            f.set_modified(t0 + Duration::from_secs(60 * i as u64)).unwrap();
        }
        let t = trim(&cache, 2100, t0 + Duration::from_secs(120));
        assert_eq!((t.packages, t.removed), (3, 1), "{t:?}");
        assert!(!cache.join("npm/old@1").exists() && cache.join("npm/mid@1").exists());
        // What this run used (since `keep`) stays, over the bound or not.
        let t = trim(&cache, 0, t0 + Duration::from_secs(60));
        assert_eq!(t.removed, 0, "{t:?}");
        let _ = std::fs::remove_dir_all(&cache);
    }

    /// A cached folder is used as it is; an unfinished one is made again.
    #[test]
    fn a_finished_install_is_reused() {
        let cache = std::env::temp_dir().join(format!("mcpcert-cache-test-{}", std::process::id()));
        let i = Install::Npm { name: "fake-srv".into(), version: "1.0.0".into(), registry: None };
        let dir = folder(&cache, &i).unwrap();
        std::fs::create_dir_all(dir.join("node_modules/fake-srv")).unwrap();
        std::fs::create_dir_all(dir.join("node_modules/.bin")).unwrap();
        std::fs::write(dir.join("node_modules/fake-srv/package.json"), r#"{"bin":{"fake-srv":"x.js","other":"y.js"}}"#).unwrap();
        std::fs::write(dir.join("node_modules/.bin/fake-srv"), "").unwrap();
        std::fs::write(dir.join(DONE), "").unwrap();
        let mut said = Vec::new();
        let got = install(&i, &cache, None, &mut |l| said.push(l)).unwrap();
        assert!(!got.fresh && said.is_empty());
        assert!(got.program[0].ends_with("node_modules/.bin/fake-srv"));
        std::fs::write(dir.join("node_modules/fake-srv/package.json"), r#"{"bin":{"a":"x.js","b":"y.js"}}"#).unwrap();
        let e = install(&i, &cache, None, &mut |_| {}).unwrap_err();
        assert!(e.problem.contains("has 2 programs (a, b) and none is named fake-srv"), "{e}");
        let _ = std::fs::remove_dir_all(&cache);
    }
}
