//! `mcpcert run --server-json`: a registry server.json as the target — a
//! remote reached with the headers its inputs make, a package started from
//! the install cache with its arguments and environment, a required value
//! nobody gave named and nothing run, a package that cannot be installed
//! said so (exit 3), and a matrix target that is a server.json. Real npm and
//! PyPI installs of the interop servers are checked by scripts/interop.sh
//! (they need the registries).

mod common;
use common::*;
use std::path::Path;

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// Every file under `dir`, read as text.
fn all_text(dir: &Path) -> String {
    let mut out = String::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.push_str(&all_text(&p));
        } else {
            out.push_str(&String::from_utf8_lossy(&std::fs::read(&p).unwrap()));
        }
    }
    out
}

const SECRET: &str = "tenant-secret-5f1c9a";

#[test]
fn a_remote_entry_is_reached_with_its_headers_and_its_secret_stays_out_of_the_reports() {
    let server = start_http(&[]);
    let dir = outdir("sj-remote");
    let sj = dir.join("server.json");
    let url = server.url.replace("/mcp", "/{path}");
    write(
        &sj,
        &format!(
            r#"{{"name":"io.github.example/ref","version":"1.0.0","description":"d",
              "remotes":[{{"type":"streamable-http","url":"{url}","variables":{{"path":{{"default":"mcp"}}}},
                "headers":[{{"name":"X-Tenant","value":"t-{{tenant}}","variables":{{"tenant":{{"isRequired":true,"isSecret":true}}}}}}]}}]}}"#
        ),
    );
    // Nobody gave the tenant: named, nothing run.
    let out = mcpcert().arg("run").arg("--server-json").arg(&sj).arg("--out").arg(dir.join("r0")).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("variable `tenant` of header X-Tenant (required, secret): set MCPCERT_INPUT_TENANT"), "{err}");
    assert!(!dir.join("r0").exists());
    // Given: the run reaches the URL the template makes, sends the header,
    // and no report shows the value.
    let r = dir.join("r1");
    let out = mcpcert()
        .args(["run", "--revision", "2025-11-25", "lifecycle/ping", "--server-json"])
        .arg(&sj)
        .arg("--out")
        .arg(&r)
        .env("MCPCERT_INPUT_TENANT", SECRET)
        .output()
        .unwrap();
    let console = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "{console}");
    assert!(console.contains("server.json io.github.example/ref@1.0.0: remote:1 remote streamable-http"), "{console}");
    let rep = report(&r);
    assert_eq!(rep["target"]["url"], server.url.as_str());
    assert_eq!(rep["target"]["headers"], serde_json::json!(["X-Tenant: [redacted]"]));
    assert_eq!(rep["target"]["server_json"]["entry"], "remote:1");
    assert_eq!(case(&rep, "2025-11-25/lifecycle/ping")["verdict"], "pass");
    assert!(!all_text(&r).contains(SECRET) && !console.contains(SECRET));
}

/// A cache folder as an install leaves it: the package's program runs the
/// reference server (with the argument and environment it is given).
fn fake_install(cache: &Path) {
    let d = cache.join("npm/fake-ref-server@1.2.3");
    write(&d.join("node_modules/fake-ref-server/package.json"), r#"{"name":"fake-ref-server","bin":"cli.js"}"#);
    let bin = d.join("node_modules/.bin/fake-ref-server");
    write(&bin, &format!("#!/bin/sh\n[ \"$REF_TOKEN\" = \"{SECRET}\" ] || exit 7\nexec {} \"$@\"\n", refserver_in(&d).display()));
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o755)).unwrap();
    write(&d.join(".mcpcert-installed"), "");
}

const PACKAGE: &str = r#"{"name":"io.github.example/fake","version":"1.2.3","description":"d",
  "packages":[{"registryType":"npm","identifier":"fake-ref-server","version":"1.2.3","transport":{"type":"stdio"},
    "packageArguments":[{"type":"named","name":"--era","value":"modern"},{"type":"named","name":"--fault","value":"ping-alive"}],
    "environmentVariables":[{"name":"REF_TOKEN","isRequired":true,"isSecret":true}]}]}"#;

#[test]
fn a_package_entry_starts_from_the_cache_with_its_arguments_and_environment() {
    if mcpcert::packages::find_program("npm").is_none() {
        eprintln!("npm is not on PATH: the npm entry cannot be picked here; skipped");
        return;
    }
    let dir = outdir("sj-package");
    let cache = dir.join("cache");
    fake_install(&cache);
    let sj = dir.join("server.json");
    write(&sj, PACKAGE);
    let out = mcpcert()
        .args(["run", "--strict", "--revision", "2026-07-28", "lifecycle/removed-ping", "--cache"])
        .arg(&cache)
        .arg("--server-json")
        .arg(&sj)
        .arg("--out")
        .arg(dir.join("r"))
        .args(sandbox_args())
        .env("REF_TOKEN", SECRET)
        .output()
        .unwrap();
    let console = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    // The fault the arguments ask for is found: the arguments arrived.
    assert_eq!(out.status.code(), Some(1), "{console}");
    assert!(!console.contains("installing"), "the cached install is reused: {console}");
    let rep = report(&dir.join("r"));
    assert!(
        rep["target"]["command"].as_str().unwrap().ends_with("node_modules/.bin/fake-ref-server --era modern --fault ping-alive"),
        "{}",
        rep["target"]
    );
    let c = case(&rep, "2026-07-28/lifecycle/removed-ping");
    assert_eq!(c["verdict"], "warn");
    let repro = c["reproducer"].as_str().unwrap();
    assert!(repro.contains("--server-json") && repro.contains("--pick package:1 --cache"), "{repro}");
    assert!(rep["target"]["env"].as_array().unwrap().contains(&serde_json::json!("REF_TOKEN=[redacted]")), "{}", rep["target"]);
    assert!(!all_text(&dir.join("r")).contains(SECRET));

    // The same entry as a matrix target.
    write(
        &dir.join("m/targets.toml"),
        "[[target]]\nname = \"fake\"\nserver_json = \"../server.json\"\npick = \"npm\"\nargs = [\"--revision\", \"2026-07-28\", \"lifecycle/discover-result-shape\"]\n",
    );
    let out = mcpcert()
        .arg("matrix")
        .arg(dir.join("m/targets.toml"))
        .arg("--out")
        .arg(dir.join("m/out"))
        .arg("--")
        .arg("--cache")
        .arg(&cache)
        .args(sandbox_args())
        .env("REF_TOKEN", SECRET)
        .output()
        .unwrap();
    let console = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "{console}");
    let m: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(dir.join("m/out/matrix.json")).unwrap()).unwrap();
    assert_eq!(m["targets"][0]["transport"], "stdio");
    assert!(m["targets"][0]["target"].as_str().unwrap().ends_with("/.bin/fake-ref-server --era modern --fault ping-alive"), "{m}");
    assert_eq!(m["targets"][0]["summary"]["pass"], 1, "{m}");
}

#[test]
fn a_package_that_cannot_be_installed_is_said_so_and_nothing_runs() {
    if mcpcert::packages::find_program("npm").is_none() {
        eprintln!("npm is not on PATH; skipped");
        return;
    }
    let dir = outdir("sj-noinstall");
    let sj = dir.join("server.json");
    // A registry on a closed port of this machine: no host outside the test.
    write(
        &sj,
        r#"{"name":"io.github.example/none","version":"0.0.1","description":"d",
          "packages":[{"registryType":"npm","registryBaseUrl":"http://127.0.0.1:9","identifier":"mcpcert-no-such-package","version":"0.0.1","transport":{"type":"stdio"}}]}"#,
    );
    let out = mcpcert()
        .arg("run")
        .arg("--server-json")
        .arg(&sj)
        .arg("--cache")
        .arg(dir.join("cache"))
        .arg("--out")
        .arg(dir.join("r"))
        .args(sandbox_args())
        .env("npm_config_fetch_retries", "0")
        .env("npm_config_fetch_timeout", "3000")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert!(err.contains("io.github.example/none@0.0.1 package:1 could not be installed: `npm install"), "{err}");
    assert!(err.contains("the installer's last lines"), "{err}");
    assert!(!dir.join("cache/npm/mcpcert-no-such-package@0.0.1/.mcpcert-installed").exists());
}

#[test]
fn without_a_sandbox_a_package_is_not_started_unless_told() {
    if mcpcert::packages::find_program("npm").is_none() {
        eprintln!("npm is not on PATH; skipped");
        return;
    }
    let dir = outdir("sj-nosandbox");
    let cache = dir.join("cache");
    fake_install(&cache);
    let sj = dir.join("server.json");
    write(&sj, PACKAGE);
    // A PATH with npm and no sandbox tool.
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    for p in ["npm", "node"] {
        if let Some(found) = mcpcert::packages::find_program(p) {
            std::os::unix::fs::symlink(found, bin.join(p)).unwrap();
        }
    }
    let run = |extra: &[&str]| {
        let out = mcpcert()
            .args(["run", "--revision", "2026-07-28", "lifecycle/discover-result-shape", "--cache"])
            .arg(&cache)
            .arg("--server-json")
            .arg(&sj)
            .arg("--out")
            .arg(dir.join("r"))
            .args(extra)
            .env("PATH", &bin)
            .env("REF_TOKEN", SECRET)
            .output()
            .unwrap();
        (out.status.code(), format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr)))
    };
    let (code, console) = run(&[]);
    assert_eq!(code, Some(2), "{console}");
    assert!(console.contains("no sandbox for third-party code on this machine") && console.contains("--no-sandbox"), "{console}");
    assert!(!dir.join("r/report.json").exists(), "nothing ran");
    let (code, console) = run(&["--no-sandbox"]);
    assert_eq!(code, Some(0), "{console}");
    assert!(console.contains("sandbox: none (--no-sandbox)"), "{console}");
    let rep = report(&dir.join("r"));
    assert!(rep["target"]["server_json"]["sandbox"].as_str().unwrap().starts_with("none (--no-sandbox)"), "{}", rep["target"]);
}
