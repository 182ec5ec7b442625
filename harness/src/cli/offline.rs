//! The commands that need no server: lint, contract-diff, and the case list's
//! "needs" column.

use crate::{EXIT_FAILED, EXIT_OK, usage};
use mcpcert::config;
use mcpcert::report::console::Console;
use mcpcert::suite::{self, Case};
use mcpcert::wire::Revision;
use std::path::{Path, PathBuf};

pub fn contract_diff(old: &Path, new: &Path, as_json: bool) -> u8 {
    use mcpcert::certify::contract_diff::{self, Class};
    use mcpcert::record::contract::{CONTRACT_FORMAT, Contract};
    let read = |p: &Path| -> Result<Contract, String> {
        let text = std::fs::read_to_string(p).map_err(|e| format!("{}: {e}", p.display()))?;
        let c: Contract = serde_json::from_str(&text).map_err(|e| format!("{}: not an mcpcert contract ({e})", p.display()))?;
        if c.format != CONTRACT_FORMAT {
            return Err(format!("{}: format is `{}`, not `{CONTRACT_FORMAT}`", p.display(), c.format));
        }
        Ok(c)
    };
    let (o, n) = match (read(old), read(new)) {
        (Ok(o), Ok(n)) => (o, n),
        (Err(e), _) | (_, Err(e)) => return usage(e),
    };
    let changes = contract_diff::diff(&o, &n);
    let mut console = Console::new();
    if as_json {
        console.line(serde_json::to_string_pretty(&serde_json::json!({"old": old, "new": new, "changes": changes})).unwrap_or_default());
    } else {
        console.line(format!("contract-diff {} → {}", old.display(), new.display()));
        console.line(contract_diff::render(&changes).trim_end());
    }
    if changes.iter().any(|c| c.class == Class::Breaking) { EXIT_FAILED } else { EXIT_OK }
}

pub fn lint(file: &Path, revision: &str, config: Option<&PathBuf>, as_json: bool) -> u8 {
    use mcpcert::checks::judge::admission;
    let Some(rev) = Revision::parse(revision) else {
        return usage(format!(
            "--revision must be one of {} (got `{revision}`)",
            Revision::ALL.iter().map(|r| r.as_str()).collect::<Vec<_>>().join(", ")
        ));
    };
    let cfg = match config.map(|p| config::load(p)) {
        Some(Ok(c)) => Some(c),
        Some(Err(e)) => return usage(e),
        None => None,
    };
    let text = if file.as_os_str() == "-" {
        let mut s = String::new();
        if let Err(e) = std::io::Read::read_to_string(&mut std::io::stdin(), &mut s) {
            return usage(format!("stdin: {e}"));
        }
        s
    } else {
        match std::fs::read_to_string(file) {
            Ok(s) => s,
            Err(e) => return usage(format!("{}: {e}", file.display())),
        }
    };
    let tools = match admission::tools_from_documents(&text) {
        Ok(t) => t,
        Err(e) => return usage(format!("{}: {e}", file.display())),
    };
    let mut policy = admission::Policy::default();
    if let Some(names) = cfg.as_ref().and_then(|c| c.admission.secret_names.clone()) {
        policy.secret_names = names;
    }
    let verdicts = admission::admit_all(&tools, rev, &policy);
    let rejected = verdicts.iter().filter(|v| !v.admitted).count();
    // Descriptor safety (POLICY): said, never a rejection.
    let concerns = mcpcert::checks::judge::safety::judge(&tools);
    let mut console = Console::new();
    if as_json {
        let safety: Vec<serde_json::Value> =
            concerns.iter().map(|c| serde_json::json!({"tool": c.tool, "concern": c.what, "level": "POLICY"})).collect();
        console.line(
            serde_json::to_string_pretty(&serde_json::json!({"revision": revision, "tools": verdicts, "safety": safety}))
                .unwrap_or_default(),
        );
    } else {
        for c in &concerns {
            console.line(format!("warning (POLICY, descriptor safety) {}: {}", c.tool, c.what));
        }
        for v in &verdicts {
            console.line(format!("{} {}", if v.admitted { "admitted" } else { "REJECTED" }, v.name));
            for f in &v.findings {
                console.line(format!("    [{}] {}: {}", f.weight.as_str(), f.rule.as_str(), f.message));
            }
        }
        console.line(format!("\n{} tools: {} admitted, {rejected} rejected ({revision} rules)", verdicts.len(), verdicts.len() - rejected));
    }
    if rejected > 0 { EXIT_FAILED } else { EXIT_OK }
}

/// What a case needs to apply: its revision, transports, capabilities and
/// era, and what its checks need (from the registry).
pub fn needs(c: &Case) -> String {
    let mut parts = vec![format!("revision {}", c.revision)];
    if !c.applies.transports.is_empty() {
        parts.push(format!("transport {}", c.applies.transports.iter().map(|t| t.as_str()).collect::<Vec<_>>().join("|")));
    }
    for cap in &c.applies.capabilities {
        parts.push(format!("capabilities.{cap}"));
    }
    for x in &c.applies.extensions {
        parts.push(format!("extension {x}"));
    }
    match c.applies.era {
        suite::Era::ModernOnly => parts.push("era modern-only".into()),
        suite::Era::Session => parts.push("era session".into()),
        suite::Era::Any => {}
    }
    for n in c.checks().flat_map(|k| k.needs()) {
        let d = n.describe();
        if !parts.contains(&d) {
            parts.push(d);
        }
    }
    parts.join(", ")
}

pub fn verify_certificate(cert: &Path, report: &Path) -> u8 {
    use mcpcert::certify::certificate::{self, Certificate};
    let c: Certificate =
        match std::fs::read_to_string(cert).map_err(|e| e.to_string()).and_then(|t| serde_json::from_str(&t).map_err(|e| e.to_string())) {
            Ok(c) => c,
            Err(e) => return usage(format!("{}: not an mcpcert certificate ({e})", cert.display())),
        };
    let bytes = match std::fs::read(report) {
        Ok(b) => b,
        Err(e) => return usage(format!("{}: {e}", report.display())),
    };
    let problems = certificate::verify(&c, &bytes);
    let mut console = Console::new();
    if problems.is_empty() {
        console.line(format!(
            "{} matches {}: {} for MCP {} ({} of {} scored scenarios pass, {} apply), {} over {}, issued {}",
            cert.display(),
            report.display(),
            c.status,
            c.revision,
            c.passed,
            c.scored,
            c.applicable,
            c.server.get("name").and_then(|n| n.as_str()).unwrap_or("the server"),
            c.transport,
            c.issued_at
        ));
        EXIT_OK
    } else {
        console.line(format!("{} does not belong to {}:", cert.display(), report.display()));
        for p in problems {
            console.line(format!("  - {p}"));
        }
        EXIT_FAILED
    }
}

/// `mcpcert summary REPORT.json`: the run's Markdown summary on stdout.
pub fn summary(report: &Path) -> u8 {
    let text = match std::fs::read_to_string(report) {
        Ok(t) => t,
        Err(e) => return usage(format!("{}: {e}", report.display())),
    };
    let cert_path = report.with_file_name("certificate.json");
    let cert: Option<serde_json::Value> = std::fs::read_to_string(&cert_path).ok().and_then(|t| serde_json::from_str(&t).ok());
    match mcpcert::report::summary::markdown(&text, cert.as_ref()) {
        Ok(md) => {
            let mut console = Console::new();
            console.line(md.trim_end());
            EXIT_OK
        }
        Err(e) => usage(format!("{}: {e}", report.display())),
    }
}
