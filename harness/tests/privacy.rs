//! Secrets never leave the run: Authorization (and headers the config
//! marks secret) are redacted everywhere, and `--redact-params` redacts
//! Mcp-Param-* values; header names stay.

mod common;

use common::{case, mcpcert, outdir, report, report_args, start_http, workspace_root};
use std::io::BufRead;

#[test]
fn secrets_and_param_values_are_redacted_everywhere() {
    let server = start_http(&["--era".into(), "modern".into()]);
    let token = "s3cret-token-value-7a1";
    for redact in [false, true] {
        let dir = outdir(&format!("privacy-{redact}"));
        let cfg = dir.join("target.toml");
        std::fs::write(
            &cfg,
            format!("[target]\nurl = {:?}\n[target.headers]\nAuthorization = {{ env = \"MCPCERT_TEST_TOKEN\" }}\n", server.url),
        )
        .unwrap();
        let mut cmd = mcpcert();
        cmd.env("MCPCERT_TEST_TOKEN", format!("Bearer {token}")).args([
            "run",
            "--config",
            cfg.to_str().unwrap(),
            "2026-07-28/headers/param-",
        ]);
        if redact {
            cmd.arg("--redact-params");
        }
        report_args(&mut cmd, &dir);
        let out = cmd.output().unwrap();
        let console = String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{console}");
        for f in ["junit.xml", "report.json", "report.html"] {
            let text = std::fs::read_to_string(dir.join(f)).unwrap();
            assert!(!text.contains(token), "{f} holds the token");
        }
        assert!(!console.contains(token), "the console shows the token");
        let r = report(&dir);
        let c = case(&r, "2026-07-28/headers/param-mismatch");
        let sent: Vec<(String, String)> = c["transcript"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|e| e["sent_headers"].as_array().cloned().unwrap_or_default())
            .map(|h| (h[0].as_str().unwrap().to_string(), h[1].as_str().unwrap().to_string()))
            .collect();
        let auth: Vec<&(String, String)> = sent.iter().filter(|(k, _)| k.eq_ignore_ascii_case("authorization")).collect();
        // Shown by the variable it came from, never by its value.
        assert!(!auth.is_empty() && auth.iter().all(|(_, v)| v == "[redacted: $MCPCERT_TEST_TOKEN]"), "{sent:?}");
        let params: Vec<&(String, String)> = sent.iter().filter(|(k, _)| k.to_ascii_lowercase().starts_with("mcp-param-")).collect();
        assert!(!params.is_empty(), "the probes send Mcp-Param headers: {sent:?}");
        assert_eq!(params.iter().all(|(_, v)| v == "[redacted]"), redact, "{params:?}");
    }
    // A failing probe's reproducer (curl lines) is redacted the same way.
    let server = start_http(&["--era".into(), "modern".into(), "--fault".into(), "param-not-validated".into()]);
    let dir = outdir("privacy-repro");
    let mut cmd = mcpcert();
    cmd.args(["run", "--http", &server.url, "--redact-params", "2026-07-28/headers/param-mismatch"]);
    report_args(&mut cmd, &dir);
    let out = cmd.output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let c = case(&report(&dir), "2026-07-28/headers/param-mismatch");
    let repro = c["reproducer"].as_str().unwrap();
    let lower = repro.to_ascii_lowercase();
    assert!(lower.contains("mcp-param-region: [redacted]") && !lower.contains("mcp-param-region: mcpcert"), "{repro}");
}

/// A 2025-11-25 HTTP reproducer opens a session of its own first: that
/// handshake line carries the target's headers too, a secret one masked.
#[test]
fn a_2025_reproducers_handshake_line_masks_the_targets_secret_header() {
    let server = start_http(&["--era".into(), "legacy".into(), "--fault".into(), "legacy-ping-error".into()]);
    let token = "s3cret-legacy-token-9c2";
    let dir = outdir("privacy-repro-2025");
    let cfg = dir.join("target.toml");
    std::fs::write(
        &cfg,
        format!("[target]\nurl = {:?}\n[target.headers]\nAuthorization = {{ env = \"MCPCERT_TEST_TOKEN\" }}\n", server.url),
    )
    .unwrap();
    let mut cmd = mcpcert();
    cmd.env("MCPCERT_TEST_TOKEN", format!("Bearer {token}")).args(["run", "--config", cfg.to_str().unwrap(), "2025-11-25/lifecycle/ping"]);
    report_args(&mut cmd, &dir);
    let out = cmd.output().unwrap();
    let console = String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{console}");
    assert!(!console.contains(token), "the console shows the token");
    for f in ["junit.xml", "report.json", "report.html"] {
        assert!(!std::fs::read_to_string(dir.join(f)).unwrap().contains(token), "{f} holds the token");
    }
    let repro = case(&report(&dir), "2025-11-25/lifecycle/ping")["reproducer"].as_str().unwrap().to_string();
    let handshake = repro.lines().find(|l| l.starts_with("sid=$(curl")).unwrap_or_else(|| panic!("no handshake line: {repro}"));
    // The value is read from its variable again, never written out.
    assert!(handshake.to_ascii_lowercase().contains("\"authorization: ${mcpcert_test_token}\""), "{handshake}");
}

fn hostile() -> String {
    workspace_root().join("fixtures/hostile/hostile.py").display().to_string()
}

/// Every report and the console: no secret, and the mask where it was.
fn assert_masked(dir: &std::path::Path, console: &str, secrets: &[&str]) {
    for f in ["junit.xml", "report.json", "report.html"] {
        let text = std::fs::read_to_string(dir.join(f)).unwrap();
        for s in secrets {
            assert!(!text.contains(s), "{f} holds {s}");
        }
        if f == "report.json" {
            assert!(text.contains("[masked]"), "{f} shows where a secret was masked");
        }
    }
    for s in secrets {
        assert!(!console.contains(s), "the console shows {s}:\n{console}");
    }
    report(dir);
}

#[test]
fn a_server_that_echoes_its_environment_leaks_no_secret_into_reports_or_console() {
    let dir = outdir("privacy-env");
    let mut cmd = mcpcert();
    // The server inherits mcpcert's environment (servers need theirs): a CI
    // token, a password with JSON-special characters, and a configured one.
    cmd.env("CI_JOB_TOKEN", "glpat-secret-ci-value-91")
        .env("DB_PASSWORD", "p\"w\\d-secret-22")
        .env("HOME_REGION", "not-a-secret-region")
        .args(["run", "--stdio", &format!("python3 {} echo-env", hostile()), "--revision", "2026-07-28", "2026-07-28/tools/call-content"]);
    report_args(&mut cmd, &dir);
    let out = cmd.output().unwrap();
    let console = String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert_masked(&dir, &console, &["glpat-secret-ci-value-91", "p\"w\\d-secret-22", "w\\\\d-secret"]);
    // What does not look secret stays readable.
    let text = std::fs::read_to_string(dir.join("report.json")).unwrap();
    assert!(text.contains("not-a-secret-region"), "only secret-looking names are masked");
}

#[test]
fn a_configured_header_value_echoed_by_the_server_is_masked() {
    let mut server =
        std::process::Command::new("python3").arg(hostile()).arg("echo-headers").stdout(std::process::Stdio::piped()).spawn().unwrap();
    let mut line = String::new();
    std::io::BufReader::new(server.stdout.take().unwrap()).read_line(&mut line).unwrap();
    let url = line.trim().strip_prefix("listening on ").unwrap().to_string();
    let dir = outdir("privacy-header");
    let cfg = dir.join("target.toml");
    // The variable's name does not look secret; the header value is masked
    // because the config sends it as a header.
    std::fs::write(&cfg, format!("[target]\nurl = {url:?}\n[target.headers]\nX-Api-Credential = {{ env = \"MCPCERT_HDR_VALUE\" }}\n"))
        .unwrap();
    let mut cmd = mcpcert();
    cmd.env("MCPCERT_HDR_VALUE", "Bearer hdr-secret-value-55").args([
        "run",
        "--config",
        cfg.to_str().unwrap(),
        "--revision",
        "2026-07-28",
        "2026-07-28/tools/",
    ]);
    report_args(&mut cmd, &dir);
    let out = cmd.output().unwrap();
    let _ = server.kill();
    let _ = server.wait();
    let console = String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert_masked(&dir, &console, &["hdr-secret-value-55"]);
}
