//! Authorization boundaries (2026-07-28): the server seen through one
//! configured identity at a time. Each role lists tools, prompts, resources
//! and templates, completes every argument it can, and calls the tools the
//! call policy allows; nothing the role must never see may show up.

use super::actions::StepOut;
use super::tools::{Walk, synth_valid};
use super::{Conn, Engine, Exchange, TargetSpec, clip};
use crate::target::http::{HttpSpec, HttpTarget};
use crate::target::stdio::StdioTarget;
use serde_json::{Value, json};
use std::collections::BTreeMap;

/// One identity from the target config (`[roles.NAME]`).
#[derive(Debug, Clone, Default)]
pub struct Role {
    pub name: String,
    /// HTTP: headers that authenticate the role (values from the environment).
    pub headers: Vec<(String, String)>,
    /// stdio: environment variables for the spawned process.
    pub env: Vec<(String, String)>,
    /// What the role must never see: literals (any letter case) or `/regex/`.
    pub never_see: Vec<String>,
}

/// A compiled never-see entry.
pub struct Matcher {
    text: String,
    regex: Option<jsonschema::Validator>,
}

impl Matcher {
    pub fn new(entry: &str) -> Result<Matcher, String> {
        if entry.len() > 2 && entry.starts_with('/') && entry.ends_with('/') {
            let pattern = &entry[1..entry.len() - 1];
            let v = jsonschema::options()
                .build(&json!({"type": "string", "pattern": pattern}))
                .map_err(|e| format!("never_see pattern {entry}: {e}"))?;
            return Ok(Matcher { text: entry.to_string(), regex: Some(v) });
        }
        Ok(Matcher { text: entry.to_lowercase(), regex: None })
    }

    pub fn matches(&self, s: &str) -> bool {
        match &self.regex {
            Some(v) => v.is_valid(&Value::String(s.to_string())),
            None => s.to_lowercase().contains(&self.text),
        }
    }

    pub fn shown(&self) -> &str {
        &self.text
    }
}

/// Every string leaf of `v` that a matcher hits, with its JSON pointer.
pub fn forbidden_in(v: &Value, at: &str, matchers: &[Matcher], out: &mut Vec<String>) {
    match v {
        Value::String(s) => {
            if let Some(m) = matchers.iter().find(|m| m.matches(s)) {
                out.push(format!("{at}: {:?} (matches `{}`)", clip(s, 80), m.shown()));
            }
        }
        Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                forbidden_in(x, &format!("{at}/{i}"), matchers, out);
            }
        }
        Value::Object(o) => {
            for (k, x) in o {
                // Keys can leak too (e.g. a map keyed by environment).
                if let Some(m) = matchers.iter().find(|m| m.matches(k)) {
                    out.push(format!("{at}: key {:?} (matches `{}`)", clip(k, 80), m.shown()));
                }
                forbidden_in(x, &format!("{at}/{}", k.replace('~', "~0").replace('/', "~1")), matchers, out);
            }
        }
        _ => {}
    }
}

/// What one role saw.
struct Seen {
    lists: BTreeMap<String, Walk>,
    /// (where, value) of completion results and tool results.
    results: Vec<(String, Value)>,
    exchanges: Vec<Exchange>,
}

impl Engine {
    /// A connection (HTTP) or process (stdio) that authenticates as `role`.
    async fn open_as(&self, role: &Role) -> Result<Conn, String> {
        match &self.cfg.target {
            TargetSpec::Http(h) => {
                let mut spec: HttpSpec = h.clone();
                // The role's credentials replace the target's headers of the same name.
                spec.headers.retain(|(k, _)| !role.headers.iter().any(|(r, _)| r.eq_ignore_ascii_case(k)));
                spec.headers.extend(role.headers.iter().cloned());
                spec.secret_headers.extend(role.headers.iter().map(|(k, _)| k.to_ascii_lowercase()));
                HttpTarget::new(&spec, &self.cfg.limits).map(|t| Conn::Http { target: t, session: None })
            }
            TargetSpec::Stdio(s) => {
                let mut spec = s.clone();
                spec.env.retain(|(k, _)| !role.env.iter().any(|(r, _)| r == k));
                spec.env.extend(role.env.iter().cloned());
                StdioTarget::spawn(&spec, &self.cfg.limits).map(Conn::Stdio)
            }
        }
    }

    async fn see_as(&mut self, rev: &str, role: &Role, case: &str) -> Result<Seen, String> {
        let caps = self.revs.get(rev).and_then(|s| s.info.capabilities.clone()).unwrap_or(json!({}));
        let mut conn = self.open_as(role).await?;
        let mut seen = Seen { lists: BTreeMap::new(), results: Vec::new(), exchanges: Vec::new() };
        let lists = [
            ("tools", "tools/list", "tools"),
            ("prompts", "prompts/list", "prompts"),
            ("resources", "resources/list", "resources"),
            ("resources", "resources/templates/list", "resourceTemplates"),
        ];
        for (cap, method, key) in lists {
            if caps.get(cap).is_none() {
                continue;
            }
            let mut w = self.walk_on(&mut conn, rev, method, key, case).await;
            for ex in w.exchanges.iter_mut() {
                ex.label = format!("as {}: {}", role.name, ex.label);
                ex.fresh = true;
            }
            if let Some(e) = &w.error {
                return Err(format!("as {}: {e}", role.name));
            }
            seen.exchanges.extend(w.exchanges.iter().take(2).cloned());
            seen.lists.insert(method.to_string(), w);
        }
        // Completion of every prompt argument and template variable the role sees.
        if caps.get("completions").is_some() {
            let items = |m: &str| seen.lists.get(m).map(|w| w.items.clone()).unwrap_or_default();
            let targets = super::completion::targets_from(&items("prompts/list"), &items("resources/templates/list"));
            for t in targets.into_iter().take(50) {
                let p = json!({"ref": t.reference, "argument": {"name": t.argument, "value": ""}});
                let ex =
                    self.role_request(&mut conn, rev, &format!("as {}: complete {}", role.name, t.what), "completion/complete", p).await;
                if let Some(res) = ex.response.as_ref().and_then(|x| x.get("result")) {
                    seen.results.push((format!("completion/complete of {}", t.what), res.clone()));
                }
                seen.exchanges.push(ex);
            }
        }
        // Calls of the tools the role sees and the call policy allows.
        let tools = seen.lists.get("tools/list").map(|w| w.items.clone()).unwrap_or_default();
        let mut called = 0;
        for t in &tools {
            let Some(name) = t.get("name").and_then(|n| n.as_str()) else { continue };
            if self.call_allowed(t, name).is_err() || called >= self.cfg.contract.max_tools_called {
                continue;
            }
            let conf = self.cfg.contract.tools.get(name).cloned().unwrap_or_default();
            let Some(args) = conf.arguments.clone().or_else(|| t.get("inputSchema").and_then(synth_valid)) else { continue };
            called += 1;
            let ex = self
                .role_request(
                    &mut conn,
                    rev,
                    &format!("as {}: tools/call {name}", role.name),
                    "tools/call",
                    json!({"name": name, "arguments": args}),
                )
                .await;
            if let Some(res) = ex.response.as_ref().and_then(|x| x.get("result")) {
                seen.results.push((format!("tools/call {name} result"), res.clone()));
            }
            seen.exchanges.push(ex);
        }
        if let Conn::Stdio(t) = &mut conn {
            t.shutdown().await;
        }
        Ok(seen)
    }

    async fn role_request(&mut self, conn: &mut Conn, rev: &str, label: &str, method: &str, p: Value) -> Exchange {
        let body = self.body_for(rev, method, Some(p.clone()));
        let mut overrides = Vec::new();
        if method == "tools/call" {
            // Over HTTP the call carries its Mcp-Param-* headers like any other.
            let schema = self
                .revs
                .get(rev)
                .and_then(|s| s.tools_walk.clone())
                .and_then(|w| w.items.iter().find(|t| t.get("name") == p.get("name")).and_then(|t| t.get("inputSchema")).cloned());
            if let (Some(s), Some(a)) = (schema, p.get("arguments")) {
                overrides = super::tools::param_headers(&s, a).into_iter().map(|(k, v)| super::HeaderEdit::Set(k, v)).collect();
            }
        }
        let mut ex = self.exchange(conn, label, rev, &body, &overrides, true).await;
        ex.fresh = true;
        ex
    }

    pub(super) async fn roles_action(&mut self, case: &crate::suite::Case, with: Option<&Value>) -> StepOut {
        let rev = case.revision.clone();
        let check = with.and_then(|w| w.get("check")).and_then(|c| c.as_str()).unwrap_or("").to_string();
        let roles = self.cfg.contract.roles.clone();
        let mut out = StepOut::default();
        let need = if check == "public-scope" { 2 } else { 1 };
        if roles.len() < need {
            out.na = Some(if need == 1 {
                "no roles are configured ([roles.NAME] with the role's credentials and what it must never see)".into()
            } else {
                "comparing lists across identities needs at least two configured roles".into()
            });
            return out;
        }
        // The tools walk of the default identity gives the schemas for Mcp-Param headers.
        let _ = self.tools_walk(&rev, &case.id).await;
        let mut views: Vec<(Role, Seen)> = Vec::new();
        for r in &roles {
            match self.see_as(&rev, r, &case.id).await {
                Ok(s) => views.push((r.clone(), s)),
                Err(e) => return StepOut { error: Some(e), ..out },
            }
        }
        match check.as_str() {
            "forbidden" => {
                let mut judged = 0;
                for (role, seen) in &views {
                    let matchers: Vec<Matcher> = match role.never_see.iter().map(|e| Matcher::new(e)).collect() {
                        Ok(m) => m,
                        Err(e) => return StepOut { error: Some(e), ..out },
                    };
                    if matchers.is_empty() {
                        continue;
                    }
                    judged += 1;
                    let mut hits = Vec::new();
                    for (method, w) in &seen.lists {
                        for (i, item) in w.items.iter().enumerate() {
                            forbidden_in(item, &format!("{method} {} #{i}", w.key), &matchers, &mut hits);
                        }
                    }
                    for (place, v) in &seen.results {
                        forbidden_in(v, place, &matchers, &mut hits);
                    }
                    for h in hits.iter().take(15) {
                        out.failures.push(format!("role {}: {h}", role.name));
                    }
                    out.exchanges.extend(seen.exchanges.iter().take(12).cloned());
                }
                if judged == 0 {
                    out.na = Some("no configured role lists anything it must never see (never_see)".into());
                }
            }
            "public-scope" => {
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
                        let public = w
                            .is_some_and(|w| w.pages.iter().any(|p| p.result.get("cacheScope").and_then(|c| c.as_str()) == Some("public")));
                        if public {
                            out.failures.push(format!(
                                "{method} differs between roles, yet role {name} got it with cacheScope \"public\": a shared cache may serve one identity's list to another (use \"private\")"
                            ));
                        }
                    }
                }
                for (_, seen) in &views {
                    out.exchanges.extend(seen.exchanges.iter().take(4).cloned());
                }
            }
            other => out.error = Some(format!("suite problem: unknown roles check `{other}`")),
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matchers_and_scan() {
        let m = vec![Matcher::new("production").unwrap(), Matcher::new("/prod-[0-9]+/").unwrap()];
        let mut hits = Vec::new();
        forbidden_in(&json!({"uri": "ref://env/Production", "tags": ["ok", "prod-42"], "staging": 1}), "x", &m, &mut hits);
        assert_eq!(hits.len(), 2, "{hits:?}");
        assert!(hits[0].starts_with("x/uri: "));
        let mut hits = Vec::new();
        forbidden_in(&json!({"production": true}), "y", &m, &mut hits);
        assert_eq!(hits.len(), 1);
        assert!(Matcher::new("/(/").is_err());
    }
}
