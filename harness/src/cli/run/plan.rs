//! Stage 1 of `mcpcert run`: what the arguments ask for — the catalogue,
//! the revision and requirement set, the cases, the baseline, the previous
//! contract, the target and its config, the call policy and the masker.
//! Nothing is started; every mistake is a usage error (exit 2).

use super::super::setup::{limits_from, masker_from, policy_from, rerun_command, target_from};
use crate::{EXIT_OK, RunArgs, load_catalog, usage};
use mcpcert::certify::requirements;
use mcpcert::config::{self, Policy, baseline::Baseline};
use mcpcert::record::Masker;
use mcpcert::record::contract::Contract;
use mcpcert::report::console::Console;
use mcpcert::run::plan::Selection;
use mcpcert::suite::requirements::RequirementSet;
use mcpcert::suite::{Case, Catalog};
use mcpcert::transport::{Limits, TargetSpec};
use mcpcert::wire::Revision;

pub(super) struct Plan {
    pub catalog: Catalog,
    pub set: Option<&'static RequirementSet>,
    pub cases: Vec<Case>,
    pub baseline: Option<Baseline>,
    pub previous: Option<(Contract, Vec<u8>)>,
    pub target: TargetSpec,
    pub limits: Limits,
    pub policy: Policy,
    pub masker: Masker,
    /// The `mcpcert run …` line reproducers start from.
    pub rerun_base: String,
    /// The revision the probes ask for exactly, if the cases fix one.
    pub probe_revision: Option<Revision>,
    /// `[auth]`: the built-in test issuer, and the upstream mcpcert plays,
    /// to serve while the run lasts.
    pub issuer: Option<mcpcert::auth::Issuer>,
    pub upstream: Option<mcpcert::auth::Upstream>,
    /// `--server-json`: the server and entry the target came from.
    pub origin: Option<serde_json::Value>,
}

/// The plan, or the exit code to end with now (a usage error; `--list`).
pub(super) fn plan(args: &RunArgs, console: &mut Console) -> Result<Plan, u8> {
    let (revision, set) = revision_and_set(args)?;
    // One revision asked for, and no baseline whose keys may name the cases
    // of the other era: the built-in suites of that era are enough.
    let catalog = match (revision, &args.suites, &args.expected_failures) {
        (Some(r), None, None) => mcpcert::suite::load_builtin_era(r.era()).map_err(|e| e.to_string()),
        _ => load_catalog(args.suites.as_ref()),
    }
    .map_err(usage)?;
    let selection = Selection { revision, filter: args.filter.clone(), exact: args.exact, skip: args.skip.clone() };
    let mut cases = selection.apply(&catalog.cases);
    if let Some(set) = set {
        cases.retain(|c| requirements::selects(set, c));
    }
    if args.list {
        for c in &cases {
            console.line(format!("{}  [{}]", c.id, c.level));
        }
        return Err(EXIT_OK);
    }
    if cases.is_empty() {
        return Err(usage(format!("no case matches {} (`mcpcert list` prints every case id)", selection.describe())));
    }
    let baseline = baseline(args, &catalog)?;
    let previous = super::super::certify::previous_contract(args).map_err(usage)?;
    let cfg_file = match &args.config {
        Some(p) => Some((p.clone(), config::load(p).map_err(usage)?)),
        None => None,
    };
    let limits = limits_from(args, cfg_file.as_ref().map(|(_, c)| c));
    let (mut target, secrets, from_json, origin) = match &args.server_json {
        Some(p) => {
            let got = super::super::server_json::target(p, args, cfg_file.as_ref(), console)?;
            (got.target, got.secrets, Some(got.rerun), Some(got.origin))
        }
        None => (target_from(args, cfg_file.as_ref()).map_err(usage)?, Vec::new(), None, None),
    };
    let mut policy = policy_from(args, cfg_file.as_ref()).map_err(usage)?;
    let (issuer, upstream) = auth(cfg_file.as_ref(), &mut target, &mut policy)?;
    let mut derived_origin = None;
    if set.is_some() {
        policy.requirements = true;
        // Certification judges DNS-rebinding protection: a loopback
        // server's own origin is the one it must accept.
        if policy.allowed_origin.is_none() {
            policy.allowed_origin = loopback_origin(&target);
            derived_origin = policy.allowed_origin.clone();
        }
    }
    let masker = masker_from(cfg_file.as_ref().map(|(_, c)| c), &target, &policy).also(&secrets);
    let mut rerun_base = rerun_command(args, &target, from_json.as_deref());
    // A reproducer runs one case without --requirements: it needs the
    // Origin the requirement run chose.
    if let Some(o) = &derived_origin {
        rerun_base.push_str(&format!(" --allowed-origin {}", mcpcert::transport::shell_quote(o)));
    }
    let probe_revision = probe_revision(revision, &cases);
    Ok(Plan {
        catalog,
        set,
        cases,
        baseline,
        previous,
        target,
        limits,
        policy,
        masker,
        rerun_base,
        probe_revision,
        issuer,
        upstream,
        origin,
    })
}

/// `[auth]` over HTTP: the run's tokens (in the policy, for the
/// authorization cases), the valid one sent on every request, and the
/// built-in issuer to serve. Over stdio a server takes credentials from its
/// environment: `[auth]` is left aside (its cases are n/a).
type Served = (Option<mcpcert::auth::Issuer>, Option<mcpcert::auth::Upstream>);

fn auth(cfg: Option<&(std::path::PathBuf, config::ConfigFile)>, target: &mut TargetSpec, policy: &mut Policy) -> Result<Served, u8> {
    let Some((path, auth)) = cfg.and_then(|(p, c)| c.auth.as_ref().map(|a| (p, a))) else { return Ok((None, None)) };
    let Some(url) = target.url().map(String::from) else { return Ok((None, None)) };
    if let TargetSpec::Http(h) = &*target
        && h.headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("authorization"))
    {
        return Err(usage(format!(
            "config {}: [auth] gives the run its token; [target.headers] must not set Authorization too",
            path.display()
        )));
    }
    let (mut tokens, issuer) =
        auth.prepare(&url, |k| std::env::var(k).ok()).map_err(|e| usage(format!("config {}: {e}", path.display())))?;
    tokens.set_shell(auth, path);
    let upstream = match auth.upstream_port {
        Some(p) => Some(mcpcert::auth::Upstream::bind(p).map_err(|e| usage(format!("config {}: {e}", path.display())))?),
        None => None,
    };
    tokens.upstream = upstream.as_ref().map(|u| (u.url().to_string(), u.log()));
    let bearer = tokens.bearer(mcpcert::auth::TokenKind::Valid).map_err(usage)?;
    *target = target.with_identity(&[("Authorization".to_string(), bearer)], &[]);
    policy.auth = Some(std::sync::Arc::new(tokens));
    Ok((issuer, upstream))
}

/// `--revision` and `--requirements`: a requirement set fixes the revision
/// and the cases (those that answer its scenarios).
fn revision_and_set(args: &RunArgs) -> Result<(Option<Revision>, Option<&'static RequirementSet>), u8> {
    let revision = match args.revision.as_str() {
        "auto" => None,
        r => match Revision::parse(r) {
            Some(r) => Some(r),
            None => {
                return Err(usage(format!(
                    "--revision must be auto or one of {} (got `{r}`)",
                    Revision::ALL.iter().map(|r| r.as_str()).collect::<Vec<_>>().join(", ")
                )));
            }
        },
    };
    let Some(name) = args.requirements.as_deref() else {
        return Ok((revision, None));
    };
    let rev_part = name.split('+').next().unwrap_or("");
    let set = match Revision::parse(rev_part) {
        Some(r) if !r.has(mcpcert::wire::Feature::RequirementSet) => {
            return Err(usage(format!(
                "{r} has no requirement set (only 2026-07-28 and 2025-11-25 do): it gets verdicts, not a certificate; run it with --revision {r}"
            )));
        }
        None => return Err(usage("--requirements must be 2026-07-28, 2025-11-25 or a revision with extensions (2026-07-28+tasks)")),
        Some(r) if revision.is_some_and(|x| x != r) => {
            return Err(usage(format!("--requirements {name} runs {r}; it cannot be combined with --revision {}", args.revision)));
        }
        Some(_) => Some(mcpcert::suite::requirements::resolve(name).map_err(|e| usage(format!("--requirements: {e}")))?),
    };
    Ok((set.map(|s| s.revision).or(revision), set))
}

/// `--expected-failures`: its keys must name cases or scenarios.
fn baseline(args: &RunArgs, catalog: &Catalog) -> Result<Option<Baseline>, u8> {
    let Some(p) = &args.expected_failures else { return Ok(None) };
    let known: Vec<&str> = catalog.cases.iter().map(|c| c.id.as_str()).collect();
    let scenarios: Vec<(&str, &str)> =
        catalog.cases.iter().flat_map(|c| c.answers.iter().map(move |a| (a.as_str(), c.id.as_str()))).collect();
    match config::baseline::load(p, &known, &scenarios) {
        Ok(b) => Ok(Some(b)),
        Err(e) => Err(usage(format!("--expected-failures {}: {}", e.file, e.problem))),
    }
}

/// Only the revisions whose cases were selected are probed: one revision
/// of an era is asked for exactly; several of the initialize era, the
/// newest (the server negotiates the one it speaks, and that is tested).
fn probe_revision(revision: Option<Revision>, cases: &[Case]) -> Option<Revision> {
    let revs: std::collections::BTreeSet<Revision> = cases.iter().map(|c| c.revision).collect();
    revision.or_else(|| {
        let init: Vec<Revision> = revs.iter().copied().filter(|r| !r.is_stateless()).collect();
        match (revs.iter().any(|r| r.is_stateless()), init.as_slice()) {
            (true, []) => Some(Revision::NEWEST_STATELESS),
            (false, [one]) => Some(*one),
            _ => None,
        }
    })
}

/// `scheme://host:port` of an HTTP target on a loopback host (the origin a
/// local server must accept), None otherwise.
fn loopback_origin(target: &TargetSpec) -> Option<String> {
    let TargetSpec::Http(h) = target else { return None };
    let rest = h.url.split_once("://")?;
    let authority = rest.1.split(['/', '?', '#']).next()?;
    let host = authority.rsplit_once('@').map(|(_, h)| h).unwrap_or(authority);
    let name = host.rsplit_once(':').filter(|(_, p)| p.chars().all(|c| c.is_ascii_digit())).map(|(n, _)| n).unwrap_or(host);
    matches!(name, "localhost" | "127.0.0.1" | "[::1]").then(|| format!("{}://{host}", rest.0))
}
