//! `mcpcert run --server-json FILE`: the target a registry `server.json`
//! describes — the entry `--pick` names or the first this machine can use,
//! its inputs from the config and the environment, a package installed
//! into the cache first.

use crate::{EXIT_UNREACHABLE, RunArgs, usage};
use mcpcert::config::{self, ConfigFile};
use mcpcert::packages::launch::{Launch, Supplied, resolve};
use mcpcert::packages::sandbox::{self, Role};
use mcpcert::packages::{self, ThisMachine, install};
use mcpcert::report::console::{Console, err_line};
use mcpcert::transport::{HttpSpec, StdioSpec, TargetSpec, shell_quote};
use std::path::{Path, PathBuf};

/// The target, and the values the server.json marks secret (masked
/// everywhere), and the options that name it again (for reproducers).
pub struct FromServerJson {
    pub target: TargetSpec,
    pub secrets: Vec<String>,
    pub rerun: String,
    /// For the report's `target.server_json`: which server and entry.
    pub origin: serde_json::Value,
}

pub fn target(path: &Path, args: &RunArgs, cfg_file: Option<&(PathBuf, ConfigFile)>, console: &mut Console) -> Result<FromServerJson, u8> {
    let sj = packages::load(path).map_err(|e| usage(format!("--server-json {e}")))?;
    if let Some((p, c)) = cfg_file
        && (c.target.command.is_some() || c.target.url.is_some())
    {
        return Err(usage(format!(
            "config {}: [target] names a command or url, and --server-json names the server too: keep one",
            p.display()
        )));
    }
    let entry = packages::pick(&sj, args.pick.as_deref(), &ThisMachine).map_err(usage)?;
    let config_env: Vec<(String, String)> = cfg_file.map(|(_, c)| c.target.env.clone().into_iter().collect()).unwrap_or_default();
    let config_headers = match cfg_file {
        Some((p, c)) => config::resolve_headers(c, p).map_err(usage)?,
        None => Vec::new(),
    };
    let env = |k: &str| std::env::var(k).ok();
    let supplied = Supplied { config_env: &config_env, config_headers: &config_headers, env: &env };
    let resolved = resolve(&entry, &supplied, &ThisMachine).map_err(|missing| {
        usage(format!(
            "{} {} ({}) needs {} value(s) nobody gave; mcpcert never invents one:{}",
            sj.label(),
            entry.id(),
            entry.describe(),
            missing.len(),
            missing.iter().map(|m| format!("\n  - {m}")).collect::<String>()
        ))
    })?;
    console.line(format!("server.json {}: {} {}", sj.label(), entry.id(), entry.describe()));
    for n in &resolved.notes {
        console.line(format!("note: {n}"));
    }
    let mut rerun = format!(" --server-json {} --pick {}", shell_quote(&path.display().to_string()), entry.id());
    let mut isolation = "none: a remote is reached over the network".to_string();
    let target = match resolved.launch {
        Launch::Http { url, mut headers } => {
            if !(url.starts_with("http://") || url.starts_with("https://")) {
                return Err(usage(format!("{} {}: the URL `{url}` is not http(s)", sj.label(), entry.id())));
            }
            headers.extend(
                config_headers.iter().filter(|(k, _)| !headers.iter().any(|(h, _)| h.eq_ignore_ascii_case(k))).cloned().collect::<Vec<_>>(),
            );
            let secret_headers = headers.iter().map(|(k, _)| k.to_ascii_lowercase()).collect();
            TargetSpec::Http(HttpSpec {
                url,
                headers,
                secret_headers,
                // A value the config gave from the environment (not one the
                // server.json's own input resolved): its variable is named.
                header_env: cfg_file.map(|(_, c)| config::header_envs(c)).unwrap_or_default(),
                client: Default::default(),
                sse: Default::default(),
                gate: Default::default(),
            })
        }
        Launch::Stdio { install: what, args: tail, env: mut envs } => {
            let oci = matches!(what, mcpcert::packages::launch::Install::Oci { .. });
            // A package runs in the sandbox (an image in its container,
            // which `docker run`'s own options close): none here stops
            // the run before anything is installed, unless --no-sandbox.
            let sandbox = if args.no_sandbox || oci {
                None
            } else {
                match sandbox::find() {
                    Ok(sb) => Some(sb),
                    Err(remedy) => return Err(usage(format!("{} {}: {remedy}", sj.label(), entry.id()))),
                }
            };
            isolation = match (&sandbox, oci) {
                (Some(sb), _) => sb.describe(),
                (None, true) => "the container's: no network, a read-only root, no capabilities (docker/podman run options)".into(),
                (None, false) => "none (--no-sandbox): the package sees this machine's files, network and environment".into(),
            };
            console.line(format!("sandbox: {isolation}"));
            // Absolute: the sandbox starts a package by its path in the cache.
            let cache = args.cache.clone().unwrap_or_else(install::default_cache);
            let cache = std::path::absolute(&cache).unwrap_or(cache);
            if let Some(c) = &args.cache {
                rerun.push_str(&format!(" --cache {}", shell_quote(&c.display().to_string())));
            }
            if args.no_sandbox {
                rerun.push_str(" --no-sandbox");
            }
            if args.inherit_env {
                rerun.push_str(" --inherit-env");
            }
            for d in &args.share {
                rerun.push_str(&format!(" --share {}", shell_quote(&d.display().to_string())));
            }
            let mut say = |l: String| console.line(l);
            let got = match install::install(&what, &cache, sandbox.as_ref(), &mut say) {
                Ok(g) => g,
                Err(e) => {
                    err_line(format!("error: {} {} could not be installed: {e}", sj.label(), entry.id()));
                    return Err(EXIT_UNREACHABLE);
                }
            };
            if got.fresh {
                console.line(format!("installed in {:.1} s", got.seconds));
            }
            for (k, v) in config_env {
                if !envs.iter().any(|(e, _)| *e == k) {
                    envs.push((k, v));
                }
            }
            let cwd = cfg_file
                .and_then(|(p, c)| c.target.cwd.as_ref().map(|d| p.parent().unwrap_or(Path::new(".")).join(d).display().to_string()));
            let mut argv = got.program;
            argv.extend(tail);
            match (&sandbox, &got.dir) {
                (Some(sb), Some(dir)) => {
                    let mut shared = Vec::new();
                    for d in &args.share {
                        match std::fs::canonicalize(d) {
                            Ok(p) if p.is_dir() => shared.push(p),
                            _ => return Err(usage(format!("--share {}: not a folder", d.display()))),
                        }
                    }
                    if cwd.is_some() {
                        console.line("note: [target] cwd is not used in the sandbox: the server starts in its private HOME");
                    }
                    let w = sb.wrap(Role::Server, dir, &shared, &argv, &envs);
                    let mut env = w.env;
                    if args.inherit_env {
                        let declared: Vec<String> = env.iter().map(|(k, _)| k.clone()).collect();
                        env.extend(std::env::vars().filter(|(k, _)| !declared.contains(k)));
                    }
                    TargetSpec::Stdio(StdioSpec { argv: w.argv, env, cwd: w.cwd, clear_env: true })
                }
                _ => TargetSpec::Stdio(StdioSpec { argv, env: envs, cwd, clear_env: false }),
            }
        }
    };
    let origin = serde_json::json!({
        "file": path.display().to_string(),
        "name": sj.name,
        "version": sj.version,
        "entry": entry.id(),
        "what": entry.describe(),
        "sandbox": isolation,
    });
    Ok(FromServerJson { target, secrets: resolved.secrets, rerun, origin })
}
