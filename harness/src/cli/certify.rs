//! After a run against a requirement set: the badge, and the certificate
//! when the set was met (beside the JSON report).

use super::setup::beside;
use crate::RunArgs;
use mcpcert::certify::certificate;
use mcpcert::report::RunReport;
use std::path::PathBuf;

/// Writes `badge.svg`, and `certificate.json` if `met` (the run passed with
/// no unexpected failure over the whole set); a certificate left from an
/// earlier run is removed otherwise. Returns the lines for the console.
pub fn finish(args: &RunArgs, rep: &RunReport, met: bool) -> Vec<String> {
    let Some(q) = &rep.requirements else { return Vec::new() };
    let mut lines = Vec::new();
    let badge_path: PathBuf = beside(&args.json, "badge.svg");
    match std::fs::write(&badge_path, certificate::badge(q, rep.strict)) {
        Ok(()) => lines.push(format!("badge: {}", badge_path.display())),
        Err(e) => lines.push(format!("error: could not write the badge {}: {e}", badge_path.display())),
    }
    let cert_path = beside(&args.json, "certificate.json");
    let narrowed = args.filter.is_some() || !args.skip.is_empty();
    let report_bytes = std::fs::read(&args.json).unwrap_or_default();
    let baseline = args.expected_failures.as_ref().and_then(|p| std::fs::read(p).ok().map(|b| (p.display().to_string(), b)));
    let cert = if met && !narrowed {
        certificate::issue(rep, &report_bytes, baseline.as_ref().map(|(f, b)| (f.as_str(), b.as_slice())))
    } else {
        None
    };
    match cert {
        Some(c) => {
            let text = serde_json::to_string_pretty(&c).unwrap_or_default();
            match std::fs::write(&cert_path, text) {
                Ok(()) => lines.push(format!(
                    "certificate: {} ({} for MCP {}: {} of {} scored scenarios pass, {} apply)",
                    cert_path.display(),
                    c.status,
                    c.revision,
                    c.passed,
                    c.scored,
                    c.applicable
                )),
                Err(e) => lines.push(format!("error: could not write the certificate {}: {e}", cert_path.display())),
            }
        }
        None => {
            let _ = std::fs::remove_file(&cert_path);
            let why = if narrowed { "the run was narrowed by a filter or --skip" } else { "the requirement set was not met" };
            lines.push(format!("no certificate: {why}"));
        }
    }
    lines
}
