//! The certificate a run against a requirement set earns (`certificate.json`
//! beside the JSON report), its badge (`badge.svg`), and the check that a
//! certificate and a JSON report belong together (`mcpcert
//! verify-certificate`).
//!
//! A certificate claims: this server (name and version as it reported
//! them), over this transport, was run by this mcpcert (version, suite
//! digest) against this revision's requirement set on this date, with these
//! scenario verdicts, and the JSON report with this sha256 holds every
//! exchange. It does not claim anything about another transport, another
//! version of the server, or what the set does not require.

use crate::record::{RequirementsReport, Verdict};
use crate::report::RunReport;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

pub const CERTIFICATE_FORMAT: &str = "mcpcert-certificate";

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Certificate {
    pub format: String,
    pub format_version: u32,
    /// `conformant`, or `conformant except expected failures` when the
    /// baseline excused a failure (that is not conformance).
    pub status: String,
    pub revision: String,
    pub requirement_set: String,
    /// The server as it named itself (server/discover `_meta` or the
    /// initialize result); null if it did not.
    pub server: Value,
    pub transport: String,
    /// The target as the report shows it (secrets redacted).
    pub target: Value,
    pub scored: usize,
    pub applicable: usize,
    pub passed: usize,
    pub scenarios: Vec<CertifiedScenario>,
    /// The expected-failures baseline, if one was used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline: Option<CertifiedBaseline>,
    pub strict: bool,
    pub mcpcert_version: String,
    pub suite_digest: String,
    /// When the run started (RFC 3339, UTC).
    pub issued_at: String,
    /// sha256 of the JSON report's bytes.
    pub report_sha256: String,
    /// With `--previous-contract`: what changed since that release.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub contract_since: Option<ContractSince>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ContractSince {
    pub previous: String,
    pub previous_sha256: String,
    pub breaking: usize,
    pub compatible: usize,
    pub unclassified: usize,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct CertifiedScenario {
    pub name: String,
    pub scored: bool,
    pub verdict: Verdict,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub expected_failure: bool,
    /// Cases beyond the requirement set (stricter than the scenario, by the
    /// letter of the spec) that did not pass: shown beside it, never part
    /// of what the certificate claims.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub beyond_not_passed: Vec<crate::record::BeyondCase>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct CertifiedBaseline {
    pub file: String,
    pub sha256: String,
    pub expected_failures: usize,
}

pub fn sha256_hex(bytes: &[u8]) -> String {
    format!("{:x}", Sha256::digest(bytes))
}

/// Whether the scenario verdicts meet the set: every scored scenario that
/// applies passes (warnings count as passes unless `strict`), and none
/// lacks a case. Expected failures are counted apart.
pub fn meets(q: &RequirementsReport, strict: bool) -> (bool, usize) {
    let mut expected = 0;
    for s in q.scenarios.iter().filter(|s| s.scored) {
        let ok = match s.verdict {
            Verdict::Pass | Verdict::NotApplicable => !s.cases.is_empty(),
            Verdict::Warn => !strict,
            _ => false,
        };
        if !ok {
            if s.expected {
                expected += 1;
            } else {
                return (false, expected);
            }
        }
    }
    (true, expected)
}

/// The certificate for a report whose run met its requirement set (None if
/// it did not, or ran no set). `report_bytes`: the JSON report as written.
pub fn issue(
    report: &RunReport,
    report_bytes: &[u8],
    baseline: Option<(&str, &[u8])>,
    since: Option<ContractSince>,
) -> Option<Certificate> {
    let q = report.requirements.as_ref()?;
    let (ok, expected) = meets(q, report.strict);
    if !ok || report.target_problem.is_some() {
        return None;
    }
    let server =
        report.revisions.iter().find(|r| r.revision.as_str() == q.revision).and_then(|r| r.server_info.clone()).unwrap_or(Value::Null);
    Some(Certificate {
        format: CERTIFICATE_FORMAT.into(),
        format_version: 1,
        status: if expected == 0 { "conformant".into() } else { "conformant except expected failures".into() },
        revision: q.revision.clone(),
        requirement_set: q.source.clone(),
        server,
        transport: report.transport.as_str().into(),
        target: report.target.clone(),
        scored: q.scored,
        applicable: q.applicable,
        passed: q.passed,
        scenarios: q
            .scenarios
            .iter()
            .map(|s| CertifiedScenario {
                name: s.name.clone(),
                scored: s.scored,
                verdict: s.verdict,
                expected_failure: s.expected,
                beyond_not_passed: s
                    .beyond
                    .iter()
                    .filter(|b| b.verdict != Verdict::Pass && b.verdict != Verdict::NotApplicable)
                    .cloned()
                    .collect(),
            })
            .collect(),
        baseline: baseline.map(|(file, bytes)| CertifiedBaseline {
            file: file.into(),
            sha256: sha256_hex(bytes),
            expected_failures: report.baseline.as_ref().map_or(0, |b| b.expected_failures),
        }),
        strict: report.strict,
        mcpcert_version: report.mcpcert_version.into(),
        suite_digest: report.suite_digest.clone(),
        issued_at: rfc3339(report.started_at_unix_ms),
        report_sha256: sha256_hex(report_bytes),
        contract_since: since,
    })
}

/// Unix milliseconds as RFC 3339 UTC (seconds precision).
pub fn rfc3339(unix_ms: u128) -> String {
    let secs = (unix_ms / 1000) as i64;
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + if m <= 2 { 1 } else { 0 };
    format!("{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z", rem / 3600, rem % 3600 / 60, rem % 60)
}

/// A flat badge: "MCP REV | conformant", or "n of N" scenarios passing.
pub fn badge(q: &RequirementsReport, strict: bool, transport: &str) -> String {
    let (ok, expected) = meets(q, strict);
    let label = format!("MCP {} ({transport})", q.revision);
    let (value, color) = if ok && expected == 0 {
        ("conformant".to_string(), "#2e7d32")
    } else if ok {
        (format!("{} of {} (baseline)", q.passed, q.scored), "#b26a00")
    } else {
        (format!("{} of {}", q.passed, q.scored), "#c62828")
    };
    // About 7 px a character at 11 px Verdana, plus padding.
    let w = |s: &str| 10 + 7 * s.chars().count();
    let (lw, vw) = (w(&label), w(&value));
    let total = lw + vw;
    format!(
        r##"<svg xmlns="http://www.w3.org/2000/svg" width="{total}" height="20" role="img" aria-label="{label}: {value}"><title>{label}: {value}</title><rect width="{lw}" height="20" fill="#555"/><rect x="{lw}" width="{vw}" height="20" fill="{color}"/><g fill="#fff" text-anchor="middle" font-family="Verdana,DejaVu Sans,sans-serif" font-size="11"><text x="{}" y="14">{label}</text><text x="{}" y="14">{value}</text></g></svg>
"##,
        lw / 2,
        lw + vw / 2
    )
}

/// What does not match between a certificate and a JSON report (empty:
/// they belong together).
pub fn verify(cert: &Certificate, report_bytes: &[u8]) -> Vec<String> {
    let mut out = Vec::new();
    if cert.format != CERTIFICATE_FORMAT {
        out.push(format!("the certificate's format is `{}`, not `{CERTIFICATE_FORMAT}`", cert.format));
    }
    let sha = sha256_hex(report_bytes);
    if sha != cert.report_sha256 {
        out.push(format!("the report's sha256 is {sha}; the certificate was issued for {}", cert.report_sha256));
    }
    let report: Value = match serde_json::from_slice(report_bytes) {
        Ok(v) => v,
        Err(e) => {
            out.push(format!("the report is not JSON: {e}"));
            return out;
        }
    };
    let same = |what: &str, got: &Value, want: &str, out: &mut Vec<String>| {
        if got.as_str() != Some(want) {
            out.push(format!("{what}: the report says {got}, the certificate {want:?}"));
        }
    };
    same("suite digest", &report["suite_digest"], &cert.suite_digest, &mut out);
    same("mcpcert version", &report["mcpcert_version"], &cert.mcpcert_version, &mut out);
    same("transport", &report["transport"], &cert.transport, &mut out);
    same("revision", &report["requirements"]["revision"], &cert.revision, &mut out);
    if report["target"] != cert.target {
        out.push(format!("target: the report says {}, the certificate {}", report["target"], cert.target));
    }
    let scenarios = report["requirements"]["scenarios"].as_array().cloned().unwrap_or_default();
    for s in &cert.scenarios {
        match scenarios.iter().find(|r| r["name"] == s.name.as_str()) {
            None => out.push(format!("scenario {}: not in the report", s.name)),
            Some(r) if r["verdict"] != serde_json::to_value(s.verdict).unwrap_or(Value::Null) => {
                out.push(format!("scenario {}: the report says {}, the certificate {}", s.name, r["verdict"], s.verdict.as_str()))
            }
            Some(_) => {}
        }
    }
    // Each scenario's verdict follows from its cases' verdicts in the report.
    let cases = report["cases"].as_array().cloned().unwrap_or_default();
    let verdict_of = |id: &str| cases.iter().find(|c| c["id"] == id).and_then(|c| c["verdict"].as_str().map(str::to_string));
    for s in &scenarios {
        let name = s["name"].as_str().unwrap_or("?");
        let ids: Vec<&str> = s["cases"].as_array().into_iter().flatten().filter_map(|c| c.as_str()).collect();
        let vs: Vec<String> = ids.iter().filter_map(|id| verdict_of(id)).collect();
        if vs.len() != ids.len() {
            out.push(format!("scenario {name}: the report lacks some of its cases"));
            continue;
        }
        let has = |v: &str| vs.iter().any(|x| x == v);
        let ok = match s["verdict"].as_str().unwrap_or("") {
            "pass" => has("pass") && !has("fail") && !has("error") && !has("warn"),
            "warn" => has("warn") && !has("fail") && !has("error"),
            "fail" => has("fail") || (!vs.is_empty() && vs.iter().all(|v| v == "n/a")),
            "error" => has("error") || ids.is_empty(),
            "n/a" => vs.iter().all(|v| v == "n/a"),
            _ => false,
        };
        if !ok {
            out.push(format!(
                "scenario {name}: the report says {}, which its cases' verdicts ({}) do not give",
                s["verdict"],
                vs.join(", ")
            ));
        }
    }
    if scenarios.len() != cert.scenarios.len() {
        out.push(format!("the report judges {} scenarios, the certificate {}", scenarios.len(), cert.scenarios.len()));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_are_utc_rfc3339() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339(951_782_400_000), "2000-02-29T00:00:00Z");
        assert_eq!(rfc3339(1_796_040_000_000), "2026-11-30T12:00:00Z");
    }
}
