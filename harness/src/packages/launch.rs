//! An entry of a `server.json` made concrete: the values of its inputs,
//! then the install to make and the argv, environment, URL and headers.
//!
//! Where a value comes from, first to last:
//! 1. the entry's own `value` (its `{variables}` filled in the same way),
//!    which the registry's schema says the user does not configure;
//! 2. the operator: the config's `[target.env]` (environment variables) or
//!    `[target.headers]` (headers), then the environment — an environment
//!    variable input by its own name, and every input as
//!    `MCPCERT_INPUT_<NAME>` (upper case, other characters `_`);
//! 3. the input's `default`.
//!
//! A required input with none of these is missing: the run stops before
//! starting anything and names what to set. A header or URL value is never
//! taken from an environment variable of its own name (a hostile
//! `server.json` could name `GITHUB_TOKEN` and have it sent to its host):
//! only `MCPCERT_INPUT_…` and the config give those.

use super::{Argument, Entry, Input, KeyValue, Package, Remote};
use std::collections::BTreeMap;

/// How the server is started or reached.
#[derive(Debug, Clone, PartialEq)]
pub enum Launch {
    /// Install `install` (once), then run its program with `args`, with
    /// `env` added to mcpcert's environment.
    Stdio { install: Install, args: Vec<String>, env: Vec<(String, String)> },
    /// A remote: its URL and headers.
    Http { url: String, headers: Vec<(String, String)> },
}

/// What to install before the start.
#[derive(Debug, Clone, PartialEq)]
pub enum Install {
    Npm {
        name: String,
        version: String,
        registry: Option<String>,
    },
    Pypi {
        name: String,
        version: String,
        index: Option<String>,
    },
    /// An image a container runtime pulls itself; `argv` is the whole
    /// command (runtime, `run`, its options, the image).
    Oci {
        argv: Vec<String>,
    },
}

/// A required value nobody gave.
#[derive(Debug, Clone, PartialEq)]
pub struct Missing {
    /// What needs it: `environment variable API_KEY`, `header X-Key`, ….
    pub what: String,
    /// The variables that would give it.
    pub supply: Vec<String>,
    pub secret: bool,
    pub description: Option<String>,
}

impl std::fmt::Display for Missing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} (required{}): set {}", self.what, if self.secret { ", secret" } else { "" }, self.supply.join(" or "))?;
        if let Some(d) = &self.description {
            write!(f, " — \"{}\"", d.chars().take(120).collect::<String>())?;
        }
        Ok(())
    }
}

/// The entry made concrete.
#[derive(Debug, Clone)]
pub struct Resolved {
    pub launch: Launch,
    /// Values the server.json marks secret: masked in every report.
    pub secrets: Vec<String>,
    /// What mcpcert left out, and why (shown on the console).
    pub notes: Vec<String>,
}

/// What the operator gives: the config's `[target.env]` and resolved
/// `[target.headers]`, and a lookup of the environment.
pub struct Supplied<'a> {
    pub config_env: &'a [(String, String)],
    pub config_headers: &'a [(String, String)],
    pub env: &'a dyn Fn(&str) -> Option<String>,
}

/// `MCPCERT_INPUT_<NAME>`: the variable that gives the input `name`.
pub fn input_var(name: &str) -> String {
    let n: String =
        name.trim_start_matches('-').chars().map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_uppercase() } else { '_' }).collect();
    format!("MCPCERT_INPUT_{n}")
}

/// Where an input's operator value may come from.
#[derive(Clone, Copy)]
enum Source {
    /// An environment variable of the server: the config's `[target.env]`,
    /// the environment by its own name, `MCPCERT_INPUT_…`.
    EnvVar,
    /// A header: the config's `[target.headers]`, `MCPCERT_INPUT_…`.
    Header,
    /// An argument, a URL or value variable: `MCPCERT_INPUT_…` only.
    Plain,
}

struct Resolver<'a> {
    s: &'a Supplied<'a>,
    missing: Vec<Missing>,
    secrets: Vec<String>,
}

impl Resolver<'_> {
    /// The input's value, None when it has none (recorded as missing when
    /// it, or `required` from the input it fills, is required).
    fn value(&mut self, input: &Input, name: &str, what: &str, source: Source, required: bool) -> Option<String> {
        let required = required || input.is_required;
        let got = match &input.value {
            Some(template) => self.fill(template, &input.variables, what, required),
            None => self.operator(name, source).or_else(|| input.default.clone()),
        };
        match &got {
            Some(v) if input.is_secret && !v.is_empty() => self.secrets.push(v.clone()),
            Some(_) => {}
            None if required && input.value.is_none() => {
                let mut supply = Vec::new();
                if matches!(source, Source::EnvVar) {
                    supply.push(name.to_string());
                }
                supply.push(input_var(name));
                self.missing.push(Missing { what: what.into(), supply, secret: input.is_secret, description: input.description.clone() });
            }
            None => {}
        }
        got
    }

    fn operator(&self, name: &str, source: Source) -> Option<String> {
        let from = |list: &[(String, String)], ci: bool| {
            list.iter().find(|(k, _)| if ci { k.eq_ignore_ascii_case(name) } else { k == name }).map(|(_, v)| v.clone())
        };
        let own = match source {
            Source::EnvVar => from(self.s.config_env, false).or_else(|| (self.s.env)(name)),
            Source::Header => from(self.s.config_headers, true),
            _ => None,
        };
        own.or_else(|| (self.s.env)(&input_var(name))).filter(|v| !v.is_empty())
    }

    /// `template` with each `{name}` of `variables` replaced; None when a
    /// variable used has no value.
    fn fill(&mut self, template: &str, variables: &BTreeMap<String, Input>, what: &str, required: bool) -> Option<String> {
        let mut out = template.to_string();
        let mut whole = true;
        for (name, input) in variables {
            let token = format!("{{{name}}}");
            if !out.contains(&token) {
                continue;
            }
            match self.value(input, name, &format!("variable `{name}` of {what}"), Source::Plain, required) {
                Some(v) => out = out.replace(&token, &v),
                None => whole = false,
            }
        }
        whole.then_some(out)
    }

    fn args(&mut self, list: &[Argument], whose: &str, out: &mut Vec<String>) {
        for (i, a) in list.iter().enumerate() {
            let label = a.name.clone().or_else(|| a.value_hint.clone()).unwrap_or_else(|| format!("#{}", i + 1));
            let what = format!("{whose} argument `{label}`");
            let named = a.kind == "named";
            if let Some(v) = self.value(&a.input, &label, &what, Source::Plain, false) {
                if named {
                    out.push(a.name.clone().unwrap_or_default());
                }
                out.push(v);
            }
        }
    }

    fn pairs(&mut self, list: &[KeyValue], kind: &str, source: Source) -> Vec<(String, String)> {
        list.iter()
            .filter_map(|kv| self.value(&kv.input, &kv.name, &format!("{kind} {}", kv.name), source, false).map(|v| (kv.name.clone(), v)))
            .collect()
    }
}

/// The entry made concrete, or every required value that is missing.
pub fn resolve(entry: &Entry<'_>, s: &Supplied<'_>, host: &dyn super::Host) -> Result<Resolved, Vec<Missing>> {
    let mut r = Resolver { s, missing: Vec::new(), secrets: Vec::new() };
    let mut notes = Vec::new();
    let launch = match entry {
        Entry::Remote(_, remote) => remote_launch(&mut r, remote),
        Entry::Package(_, p) => package_launch(&mut r, p, host, &mut notes),
    };
    if !r.missing.is_empty() {
        return Err(r.missing);
    }
    Ok(Resolved { launch, secrets: r.secrets, notes })
}

fn remote_launch(r: &mut Resolver<'_>, remote: &Remote) -> Launch {
    let template = remote.url.clone().unwrap_or_default();
    let url = r.fill(&template, &remote.variables, &format!("the URL {template}"), true).unwrap_or(template);
    let headers = r.pairs(&remote.headers, "header", Source::Header);
    Launch::Http { url, headers }
}

fn package_launch(r: &mut Resolver<'_>, p: &Package, host: &dyn super::Host, notes: &mut Vec<String>) -> Launch {
    let version = p.version.clone().unwrap_or_default();
    let env = r.pairs(&p.environment_variables, "environment variable", Source::EnvVar);
    let mut args = Vec::new();
    let base = p.registry_base_url.clone().filter(|u| !is_default_registry(&p.registry_type, u));
    let install = match p.registry_type.as_str() {
        "oci" => {
            // The container closed as the sandbox closes a package: no
            // network, a read-only root, no capabilities, bounded.
            let mut argv: Vec<String> = [host.container_runtime().unwrap_or("docker"), "run", "-i", "--rm"]
                .into_iter()
                .chain(CONTAINER_LIMITS)
                .map(String::from)
                .collect();
            r.args(&p.runtime_arguments, "runtime", &mut argv);
            // The values go through the runtime's environment, not its argv.
            for (k, _) in &env {
                argv.extend(["-e".to_string(), k.clone()]);
            }
            argv.push(p.identifier.clone());
            Install::Oci { argv }
        }
        t => {
            if !p.runtime_arguments.is_empty() {
                notes.push(format!(
                    "runtimeArguments ({} of them) are options of the package's runtime ({}); mcpcert starts the installed package directly and leaves them out",
                    p.runtime_arguments.len(),
                    p.runtime_hint.as_deref().unwrap_or(if t == "npm" { "npx" } else { "uvx" })
                ));
            }
            if t == "npm" {
                Install::Npm { name: p.identifier.clone(), version, registry: base }
            } else {
                Install::Pypi { name: p.identifier.clone(), version, index: base }
            }
        }
    };
    r.args(&p.package_arguments, "package", &mut args);
    Launch::Stdio { install, args, env }
}

/// `docker run`/`podman run` options that isolate an image's server.
pub const CONTAINER_LIMITS: [&str; 12] = [
    "--network",
    "none",
    "--read-only",
    "--tmpfs",
    "/tmp",
    "--cap-drop",
    "ALL",
    "--security-opt",
    "no-new-privileges",
    "--pids-limit",
    "256",
    "--memory=2g",
];

/// The registry's own default, which needs no option.
fn is_default_registry(kind: &str, url: &str) -> bool {
    let u = url.trim_end_matches('/');
    matches!((kind, u), ("npm", "https://registry.npmjs.org") | ("pypi", "https://pypi.org"))
}

#[cfg(test)]
mod tests {
    use super::super::{parse, pick, tests::Has};
    use super::*;

    fn supplied<'a>(env: &'a dyn Fn(&str) -> Option<String>, cfg_env: &'a [(String, String)]) -> Supplied<'a> {
        Supplied { config_env: cfg_env, config_headers: &[], env }
    }

    const SJ: &str = r#"{"name":"io.github.example/db","version":"3.1.0",
      "packages":[{"registryType":"oci","identifier":"docker.io/example/db:3.1.0","transport":{"type":"stdio"},
        "runtimeArguments":[{"type":"named","name":"-e","value":"DB_TYPE={db_type}","variables":{"db_type":{"isRequired":true}}}],
        "packageArguments":[{"type":"named","name":"--host","default":"localhost","isRequired":true},
          {"type":"named","name":"--port","format":"number"},
          {"type":"positional","valueHint":"database_name","isRequired":true}],
        "environmentVariables":[{"name":"DB_PASSWORD","isRequired":true,"isSecret":true},{"name":"SSL_MODE","default":"prefer"}]},
       {"registryType":"npm","registryBaseUrl":"https://registry.npmjs.org","identifier":"@example/db","version":"3.1.0",
        "runtimeHint":"npx","runtimeArguments":[{"type":"positional","value":"-y"}],"transport":{"type":"stdio"},
        "packageArguments":[{"type":"positional","value":"serve"}]}],
      "remotes":[{"type":"streamable-http","url":"https://{tenant}.db.example.invalid/mcp",
        "variables":{"tenant":{"isRequired":true}},
        "headers":[{"name":"Authorization","value":"Bearer {api_key}","variables":{"api_key":{"isRequired":true,"isSecret":true}}},
                   {"name":"X-Trace","description":"optional"}]}]}"#;

    #[test]
    fn missing_values_are_named_and_never_invented() {
        let sj = parse(SJ).unwrap();
        let oci = pick(&sj, Some("oci"), &Has(vec!["podman"])).unwrap();
        let none = |_: &str| None;
        let miss = resolve(&oci, &supplied(&none, &[]), &Has(vec!["podman"])).unwrap_err();
        let said: Vec<String> = miss.iter().map(|m| m.to_string()).collect();
        assert_eq!(
            said,
            [
                "environment variable DB_PASSWORD (required, secret): set DB_PASSWORD or MCPCERT_INPUT_DB_PASSWORD",
                "variable `db_type` of runtime argument `-e` (required): set MCPCERT_INPUT_DB_TYPE",
                "package argument `database_name` (required): set MCPCERT_INPUT_DATABASE_NAME",
            ]
        );
        let remote = pick(&sj, Some("remote"), &Has(vec![])).unwrap();
        let miss = resolve(&remote, &supplied(&none, &[]), &Has(vec![])).unwrap_err();
        assert_eq!(miss.len(), 2, "{miss:?}");
        assert!(miss[1].supply == ["MCPCERT_INPUT_API_KEY"] && miss[1].secret);
    }

    #[test]
    fn given_values_make_the_argv_environment_and_headers() {
        let sj = parse(SJ).unwrap();
        let env = |k: &str| match k {
            "DB_PASSWORD" => Some("hunter2-long-secret".to_string()),
            "MCPCERT_INPUT_DB_TYPE" => Some("postgres".into()),
            "MCPCERT_INPUT_DATABASE_NAME" => Some("orders".into()),
            "MCPCERT_INPUT_TENANT" => Some("acme".into()),
            "MCPCERT_INPUT_API_KEY" => Some("k-123456789".into()),
            // Never read for a header: only MCPCERT_INPUT_… or the config.
            "Authorization" | "X-Trace" => Some("leaked".into()),
            _ => None,
        };
        let oci = pick(&sj, Some("oci"), &Has(vec!["podman"])).unwrap();
        let r = resolve(&oci, &supplied(&env, &[("SSL_MODE".into(), "require".into())]), &Has(vec!["podman"])).unwrap();
        let Launch::Stdio { install: Install::Oci { argv }, args, env: e } = &r.launch else { panic!("{:?}", r.launch) };
        assert_eq!(
            argv,
            &[
                "podman",
                "run",
                "-i",
                "--rm",
                "--network",
                "none",
                "--read-only",
                "--tmpfs",
                "/tmp",
                "--cap-drop",
                "ALL",
                "--security-opt",
                "no-new-privileges",
                "--pids-limit",
                "256",
                "--memory=2g",
                "-e",
                "DB_TYPE=postgres",
                "-e",
                "DB_PASSWORD",
                "-e",
                "SSL_MODE",
                "docker.io/example/db:3.1.0"
            ]
        );
        assert_eq!(args, &["--host", "localhost", "orders"]);
        assert_eq!(e, &[("DB_PASSWORD".to_string(), "hunter2-long-secret".to_string()), ("SSL_MODE".into(), "require".into())]);
        assert_eq!(r.secrets, ["hunter2-long-secret"]);

        let npm = pick(&sj, Some("npm"), &Has(vec!["npm"])).unwrap();
        let r = resolve(&npm, &supplied(&env, &[]), &Has(vec!["npm"])).unwrap();
        assert_eq!(
            r.launch,
            Launch::Stdio {
                install: Install::Npm { name: "@example/db".into(), version: "3.1.0".into(), registry: None },
                args: vec!["serve".into()],
                env: vec![]
            }
        );
        assert!(r.notes[0].contains("runtimeArguments (1 of them) are options of the package's runtime (npx)"), "{:?}", r.notes);

        let remote = pick(&sj, Some("remote"), &Has(vec![])).unwrap();
        let r = resolve(&remote, &supplied(&env, &[]), &Has(vec![])).unwrap();
        assert_eq!(
            r.launch,
            Launch::Http {
                url: "https://acme.db.example.invalid/mcp".into(),
                headers: vec![("Authorization".into(), "Bearer k-123456789".into())]
            }
        );
        assert_eq!(r.secrets, ["k-123456789"]);
        assert_eq!(input_var("--log-level"), "MCPCERT_INPUT_LOG_LEVEL");
    }
}
