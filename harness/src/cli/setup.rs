//! A run's set-up from its arguments and config file: the target, limits,
//! call policy, secret masking, and the command that reruns it.

use crate::RunArgs;
use mcpcert::config::{self, ConfigFile, Policy};
use mcpcert::record::Masker;
use mcpcert::transport::{HttpSpec, Limits, StdioSpec, TargetSpec, redact_url, shell_quote, split_command};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The target the flags and the config name.
pub fn target_from(args: &RunArgs, cfg_file: Option<&(PathBuf, ConfigFile)>) -> Result<TargetSpec, String> {
    target_of(args.stdio.as_deref(), args.http.as_deref(), cfg_file)
}

/// The target a `--stdio` command, an `--http` URL, or the config names.
pub fn target_of(stdio: Option<&str>, http: Option<&str>, cfg_file: Option<&(PathBuf, ConfigFile)>) -> Result<TargetSpec, String> {
    let from_cfg = cfg_file.map(|(_, c)| (c.target.command.clone(), c.target.url.clone())).unwrap_or((None, None));
    match (stdio.map(String::from).or(from_cfg.0), http.map(String::from).or(from_cfg.1)) {
        (Some(_), Some(_)) => Err("give either a stdio command or an HTTP URL, not both".into()),
        (Some(cmd), None) => {
            let argv = split_command(&cmd).map_err(|e| format!("--stdio: {e}"))?;
            // A relative `cwd` is relative to the config file's folder.
            let (env, cwd) = cfg_file
                .map(|(p, c)| {
                    let cwd = c.target.cwd.as_ref().map(|d| p.parent().unwrap_or(Path::new(".")).join(d).display().to_string());
                    (c.target.env.iter().map(|(k, v)| (k.clone(), v.clone())).collect(), cwd)
                })
                .unwrap_or_default();
            Ok(TargetSpec::Stdio(StdioSpec { argv, env, cwd, clear_env: false }))
        }
        (None, Some(u)) => {
            let headers = match cfg_file {
                Some((p, c)) => config::resolve_headers(c, p).map_err(|e| e.to_string())?,
                None => Vec::new(),
            };
            let secret_headers = headers.iter().map(|(k, _)| k.to_ascii_lowercase()).collect();
            if !(u.starts_with("http://") || u.starts_with("https://")) {
                return Err(format!("--http needs an http:// or https:// URL (got `{u}`)"));
            }
            Ok(TargetSpec::Http(HttpSpec {
                url: u,
                headers,
                secret_headers,
                header_env: cfg_file.map(|(_, c)| config::header_envs(c)).unwrap_or_default(),
                client: Default::default(),
                sse: Default::default(),
                gate: Default::default(),
            }))
        }
        (None, None) => Err("say what to test: --stdio 'CMD ARG…', --http URL, --server-json FILE, or --config FILE".into()),
    }
}

/// Timeouts from the config, then the flags.
pub fn limits_from(args: &RunArgs, cfg: Option<&ConfigFile>) -> Limits {
    let mut limits = Limits::default();
    let ms = Duration::from_millis;
    if let Some(c) = cfg {
        limits.startup = c.timeouts.startup_ms.map(ms).unwrap_or(limits.startup);
        limits.request = c.timeouts.request_ms.map(ms).unwrap_or(limits.request);
        limits.ceiling = c.timeouts.ceiling_ms.map(ms).unwrap_or(limits.ceiling);
    }
    limits.startup = args.startup_timeout_ms.map(ms).unwrap_or(limits.startup);
    limits.request = args.request_timeout_ms.map(ms).unwrap_or(limits.request);
    limits.ceiling = args.request_ceiling_ms.map(ms).unwrap_or(limits.ceiling);
    limits
}

/// What to mask everywhere: the values of this process's environment
/// variables (and the configured `[target.env]` and role environments)
/// whose names look secret, and every configured header value.
pub fn masker_from(cfg: Option<&ConfigFile>, target: &TargetSpec, policy: &Policy) -> Masker {
    let names: Vec<String> = cfg
        .and_then(|c| c.redact.env_names.clone())
        .unwrap_or_else(|| mcpcert::record::SECRET_ENV_NAMES.iter().map(|s| s.to_string()).collect());
    let mut env: Vec<(String, String)> = std::env::vars().collect();
    let mut values: Vec<String> = Vec::new();
    match target {
        TargetSpec::Stdio(s) => env.extend(s.env.iter().cloned()),
        TargetSpec::Http(h) => values.extend(h.headers.iter().map(|(_, v)| v.clone())),
    }
    for r in &policy.roles {
        env.extend(r.env.iter().cloned());
        values.extend(r.headers.iter().map(|(_, v)| v.clone()));
    }
    if let Some(t) = &policy.auth {
        values.extend(t.secrets());
    }
    Masker::new(&names, env, &values)
}

/// The operator's policy: the config file's, then the flags.
pub fn policy_from(args: &RunArgs, cfg_file: Option<&(PathBuf, ConfigFile)>) -> Result<Policy, config::ConfigError> {
    let mut policy = match cfg_file {
        Some((p, c)) => Policy::from_file(c, p)?,
        None => Policy::default(),
    };
    if let Some(n) = args.max_pages {
        policy.max_pages = n;
    }
    if args.allowed_origin.is_some() {
        policy.allowed_origin = args.allowed_origin.clone();
    }
    policy.redact_params = args.redact_params;
    if let Some(n) = args.load {
        let keep = policy.load.unwrap_or(config::LoadSpec::new(n));
        policy.load = Some(config::LoadSpec { connections: n.clamp(1, 64), ..keep });
    }
    Ok(policy)
}

/// `name` in the folder of `path`.
pub fn beside(path: &Path, name: &str) -> PathBuf {
    path.parent().map(|d| d.join(name)).unwrap_or_else(|| PathBuf::from(name))
}

/// `server_json`: the options that name a server.json's entry, in place of
/// the target.
pub fn rerun_command(args: &RunArgs, target: &TargetSpec, server_json: Option<&str>) -> String {
    let mut s = String::from("mcpcert run");
    if let Some(c) = &args.config {
        s.push_str(&format!(" --config {}", shell_quote(&c.display().to_string())));
    }
    // The target, unless the config file names it.
    if let Some(o) = server_json {
        s.push_str(o);
    } else if args.config.is_none() || args.stdio.is_some() || args.http.is_some() {
        match target {
            TargetSpec::Stdio(_) => s.push_str(&format!(" --stdio {}", shell_quote(&target.shown()))),
            TargetSpec::Http(h) => s.push_str(&format!(" --http {}", shell_quote(&redact_url(&h.url)))),
        }
    }
    if let Some(d) = &args.suites {
        s.push_str(&format!(" --suites {}", shell_quote(&d.display().to_string())));
    }
    if let Some(o) = &args.allowed_origin {
        s.push_str(&format!(" --allowed-origin {}", shell_quote(o)));
    }
    if let Some(n) = args.max_pages {
        s.push_str(&format!(" --max-pages {n}"));
    }
    if args.redact_params {
        s.push_str(" --redact-params");
    }
    if let Some(n) = args.load {
        s.push_str(&format!(" --load {n}"));
    }
    s
}
