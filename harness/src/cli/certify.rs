//! After a run against a requirement set: the badge, and the certificate
//! when the set was met (beside the JSON report).

use super::setup::beside;
use crate::RunArgs;
use mcpcert::certify::certificate;
use mcpcert::record::contract::Contract;
use mcpcert::report::RunReport;
use std::path::PathBuf;

/// Writes `badge.svg` (unless a filter narrowed the run), and
/// `certificate.json` if the run failed for no reason (`why` is empty) over
/// the whole set; a certificate left from an earlier run is removed
/// otherwise. Returns the lines for the console.
pub fn finish(args: &RunArgs, rep: &RunReport, why: &[String], since: Option<certificate::ContractSince>) -> Vec<String> {
    let Some(q) = &rep.requirements else { return Vec::new() };
    let mut lines = Vec::new();
    let narrowed = args.filter.is_some() || !args.skip.is_empty();
    let met = why.is_empty();
    if !narrowed {
        let badge_path: PathBuf = beside(&args.json, "badge.svg");
        match std::fs::write(&badge_path, certificate::badge(q, rep.strict, rep.transport.as_str())) {
            Ok(()) => lines.push(format!("badge: {}", badge_path.display())),
            Err(e) => lines.push(format!("error: could not write the badge {}: {e}", badge_path.display())),
        }
    }
    let cert_path = beside(&args.json, "certificate.json");
    let report_bytes = std::fs::read(&args.json).unwrap_or_default();
    let baseline = args.expected_failures.as_ref().and_then(|p| std::fs::read(p).ok().map(|b| (p.display().to_string(), b)));
    let cert = if met && !narrowed {
        certificate::issue(rep, &report_bytes, baseline.as_ref().map(|(f, b)| (f.as_str(), b.as_slice())), since)
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
            let reason = if narrowed {
                "the run was narrowed by a filter or --skip".to_string()
            } else if !met {
                why.join("; ")
            } else {
                "the requirement set was not met".to_string()
            };
            lines.push(format!("no certificate: {reason}"));
        }
    }
    lines
}

/// Reads `--previous-contract` (a usage error if it is not a contract).
pub fn previous_contract(args: &RunArgs) -> Result<Option<(Contract, Vec<u8>)>, String> {
    let Some(p) = &args.previous_contract else { return Ok(None) };
    let bytes = std::fs::read(p).map_err(|e| format!("--previous-contract {}: {e}", p.display()))?;
    let c: Contract =
        serde_json::from_slice(&bytes).map_err(|e| format!("--previous-contract {}: not an mcpcert contract ({e})", p.display()))?;
    if c.format != mcpcert::record::contract::CONTRACT_FORMAT {
        return Err(format!("--previous-contract {}: format is `{}`, not an mcpcert contract", p.display(), c.format));
    }
    Ok(Some((c, bytes)))
}

/// The changes from the previous contract to this run's, for the console
/// (breaking ones listed) and the certificate.
pub fn since(args: &RunArgs, prev: &(Contract, Vec<u8>), now: &Contract) -> (Vec<String>, certificate::ContractSince) {
    use mcpcert::certify::contract_diff::{self, Class};
    let changes = contract_diff::diff(&prev.0, now);
    let count = |k: Class| changes.iter().filter(|c| c.class == k).count();
    let file = args.previous_contract.as_ref().map(|p| p.display().to_string()).unwrap_or_default();
    let s = certificate::ContractSince {
        previous: file.clone(),
        previous_sha256: certificate::sha256_hex(&prev.1),
        breaking: count(Class::Breaking),
        compatible: count(Class::Compatible),
        unclassified: count(Class::Unclassified),
    };
    let mut lines = vec![format!(
        "contract since {file}: {} breaking, {} compatible, {} changed but not classified",
        s.breaking, s.compatible, s.unclassified
    )];
    for c in changes.iter().filter(|c| c.class == Class::Breaking) {
        lines.push(format!("  BREAKING {} {}: {}", c.revision, c.subject, c.what));
    }
    (lines, s)
}
