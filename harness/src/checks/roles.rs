//! Authorization boundaries (2026-07-28): the server seen through one
//! configured identity at a time. Each role lists tools, prompts, resources
//! and templates, completes every argument it can, and calls the tools the
//! call policy allows; nothing the role must never see may show up.

use super::judge::leaks::forbidden_in;
use super::views::Seen;
use super::walk::Walk;
use super::{Check, Cx, Need, Outcome};
use crate::config::{Matcher, Role};
use crate::wire::Revision;
use serde::Deserialize;

/// Which rule a `roles_probe` case judges.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RolesCheck {
    /// Nothing a role must never see shows up in what it sees.
    Forbidden,
    /// Lists that differ between roles are not marked cacheScope public.
    PublicScope,
}

/// One authorization rule, over every configured role.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RolesProbe {
    check: RolesCheck,
}

impl Check for RolesProbe {
    const NAME: &'static str = "roles_probe";
    const ABOUT: &'static str = "one authorization rule (`check`) over what each configured role ([roles.NAME]) lists, completes and calls";
    const REVISIONS: &'static [Revision] = &Revision::STATELESS;

    fn calls_tools(&self) -> bool {
        // Each role calls the tools the policy allows. Its lists are
        // compared as sets, which no case that runs beside it changes (a
        // case that changes them runs alone).
        true
    }

    fn needs(&self) -> Vec<Need> {
        vec![Need::Roles(if self.check == RolesCheck::PublicScope { 2 } else { 1 })]
    }

    async fn run(&self, cx: &Cx<'_>) -> Outcome {
        let roles = &cx.policy.roles;
        let need = if self.check == RolesCheck::PublicScope { 2 } else { 1 };
        if roles.len() < need {
            return Outcome::na(if need == 1 {
                "no roles are configured ([roles.NAME] with the role's credentials and what it must never see)"
            } else {
                "comparing lists across identities needs at least two configured roles"
            });
        }
        // What the roles saw, once for every rule judged over it (over
        // stdio a process per role, not per role and rule).
        let seen = match cx.facts.roles_seen(cx).await {
            Ok(s) => s,
            Err(e) => return Outcome::error(e),
        };
        let views: Vec<(&Role, &Seen)> = roles.iter().zip(seen.iter()).collect();
        let mut out = Outcome::default();
        match self.check {
            RolesCheck::Forbidden => forbidden(&views, &mut out),
            RolesCheck::PublicScope => public_scope(&views, &mut out),
        }
        if let Some(p) = views.iter().flat_map(|(_, s)| s.partial.iter()).next()
            && !out.is_na()
        {
            out.incomplete(p);
        }
        out
    }
}

fn forbidden(views: &[(&Role, &Seen)], out: &mut Outcome) {
    let mut judged = 0;
    for (role, seen) in views {
        let matchers: Vec<Matcher> = match role.never_see.iter().map(|e| Matcher::new(e)).collect() {
            Ok(m) => m,
            Err(e) => return out.set_error(e.to_string()),
        };
        if matchers.is_empty() {
            continue;
        }
        judged += 1;
        let mut hits = Vec::new();
        for (method, w) in &seen.lists {
            for (i, item) in w.items.iter().enumerate() {
                forbidden_in(item, &format!("{method} {} #{i}", w.list.key()), &matchers, &mut hits);
            }
        }
        for (place, v) in &seen.results {
            forbidden_in(v, place, &matchers, &mut hits);
        }
        for h in hits.iter().take(15) {
            out.fail(format!("role {}: {h}", role.name));
        }
        out.exchanges.extend(seen.exchanges.iter().take(12).cloned());
    }
    if judged == 0 {
        out.set_na("no configured role lists anything it must never see (never_see)");
    }
}

fn public_scope(views: &[(&Role, &Seen)], out: &mut Outcome) {
    for method in ["tools/list", "prompts/list", "resources/list", "resources/templates/list"] {
        let per_role: Vec<(&str, Option<&Walk>)> = views.iter().map(|(r, s)| (r.name.as_str(), s.lists.get(method))).collect();
        let sets: Vec<Vec<String>> = per_role
            .iter()
            .map(|(_, w)| {
                let mut v: Vec<String> = w.map(|w| w.items.iter().map(|i| i.to_string()).collect()).unwrap_or_default();
                v.sort();
                v
            })
            .collect();
        if sets.windows(2).all(|p| p[0] == p[1]) {
            continue;
        }
        for (name, w) in &per_role {
            let public = w.is_some_and(|w| w.pages.iter().any(|p| p.result.get("cacheScope").and_then(|c| c.as_str()) == Some("public")));
            if public {
                out.fail(format!(
                    "{method} differs between roles, yet role {name} got it with cacheScope \"public\": a shared cache may serve one identity's list to another (use \"private\")"
                ));
            }
        }
    }
    for (_, seen) in views {
        out.exchanges.extend(seen.exchanges.iter().take(4).cloned());
    }
}
