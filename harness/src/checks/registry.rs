//! The one list of check types. Suite files name them (`action`); their
//! arguments (`with`) are deserialized into the type at load, so an unknown
//! name or key is a load error naming the file and JSON path. The suite
//! schema's list of action names is proven equal to this list by a test.

use super::{Check, DynCheck, Scope};
use super::{
    apps, audits, auth, client_requests, completion, extensions, fixtures, headers, input_required, legacy_tasks, lifecycle, lists, load,
    mrtr, older, passthrough, reads, roles, skills, stateless, subscriptions, task_eras, task_input, task_listen, task_roles, tasks, tools,
};
use crate::wire::Revision;
use serde_json::Value;
use std::sync::Arc;

/// One registered check type.
pub struct Entry {
    pub name: &'static str,
    pub about: &'static str,
    pub scope: Scope,
    pub revisions: &'static [Revision],
    build: fn(&Value) -> Result<Arc<dyn DynCheck>, serde_json::Error>,
}

impl Entry {
    /// The check with these arguments (`{}` when the suite gives none).
    pub fn build(&self, with: &Value) -> Result<Arc<dyn DynCheck>, ArgError> {
        (self.build)(with).map_err(|e| ArgError { check: self.name, problem: e.to_string() })
    }
}

/// Arguments a check cannot take.
#[derive(Debug, Clone, thiserror::Error)]
#[error("arguments of `{check}`: {problem}")]
pub struct ArgError {
    pub check: &'static str,
    pub problem: String,
}

const fn entry<T: Check>() -> Entry {
    Entry { name: T::NAME, about: T::ABOUT, scope: T::SCOPE, revisions: T::REVISIONS, build: build::<T> }
}

fn build<T: Check>(with: &Value) -> Result<Arc<dyn DynCheck>, serde_json::Error> {
    Ok(Arc::new(serde_json::from_value::<T>(with.clone())?))
}

pub static REGISTRY: &[Entry] = &[
    entry::<lifecycle::CapabilitiesMatchHandlers>(),
    entry::<lifecycle::ColdRequest>(),
    entry::<stateless::StatelessAfterMalformed>(),
    entry::<lifecycle::ExitOnStdinEof>(),
    entry::<lifecycle::InitializeOnModern>(),
    entry::<lifecycle::SessionTerminateThen404>(),
    entry::<lifecycle::SessionRequired>(),
    entry::<lifecycle::ConcurrentRequests>(),
    entry::<audits::StdoutOnlyJsonrpc>(),
    entry::<audits::NoServerRequests>(),
    entry::<audits::WireFramesValid>(),
    entry::<audits::InputRequiredAudit>(),
    entry::<audits::InputRequestsDeclaredAudit>(),
    entry::<audits::ResultTypesAudit>(),
    entry::<audits::NoTaskUnlessDeclaredAudit>(),
    entry::<audits::TaskStatusNotificationsAudit>(),
    entry::<extensions::ExtensionProbe>(),
    entry::<tasks::TaskProbe>(),
    entry::<task_input::TaskInputProbe>(),
    entry::<task_roles::OtherRoleRefused>(),
    entry::<task_listen::TaskListenProbe>(),
    entry::<legacy_tasks::LegacyTaskProbe>(),
    entry::<task_eras::ExtensionNotOptIn>(),
    entry::<skills::SkillProbe>(),
    entry::<apps::AppProbe>(),
    entry::<audits::LogMessagesAudit>(),
    entry::<audits::ProgressAudit>(),
    entry::<lists::ToolsWalk>(),
    entry::<lists::ListWalk>(),
    entry::<lists::ToolsCacheHints>(),
    entry::<lists::ToolsUniqueNames>(),
    entry::<lists::ToolsInvalidCursor>(),
    entry::<lists::ToolsOrderStable>(),
    entry::<lists::ToolsSameOnFresh>(),
    entry::<tools::ToolsAdmission>(),
    entry::<tools::ToolResults>(),
    entry::<headers::HeaderProbe>(),
    entry::<headers::DnsRebinding>(),
    entry::<completion::CompletionProbe>(),
    entry::<input_required::InputRequiredProbe>(),
    entry::<subscriptions::SubscriptionProbe>(),
    entry::<roles::RolesProbe>(),
    entry::<fixtures::FixtureCall>(),
    entry::<fixtures::FixtureRead>(),
    entry::<fixtures::FixturePrompt>(),
    entry::<fixtures::FixtureMissingCapability>(),
    entry::<client_requests::FixtureClientRequest>(),
    entry::<mrtr::FixtureInputRequired>(),
    entry::<reads::ReadListed>(),
    entry::<reads::ReadTemplate>(),
    entry::<reads::GetListed>(),
    entry::<load::LoadReplay>(),
    entry::<load::LoadListens>(),
    entry::<older::BatchAccepted>(),
    entry::<older::SseEndpoint>(),
    entry::<older::SseMessageEvents>(),
    entry::<auth::AuthProbe>(),
    entry::<passthrough::AuthPassthrough>(),
];

pub fn lookup(name: &str) -> Option<&'static Entry> {
    REGISTRY.iter().find(|e| e.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn names_are_unique_and_snake_case() {
        let mut names: Vec<&str> = REGISTRY.iter().map(|e| e.name).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), REGISTRY.len());
        assert!(names.iter().all(|n| n.chars().all(|c| c.is_ascii_lowercase() || c == '_' || c.is_ascii_digit())));
    }

    #[test]
    fn unknown_keys_and_values_are_rejected() {
        let e = lookup("header_probe").unwrap();
        assert!(e.build(&json!({"header": "version", "probe": "missing"})).is_ok());
        let err = e.build(&json!({"header": "version", "probe": "mising"})).unwrap_err();
        assert!(err.problem.contains("mising"), "{err}");
        let err = e.build(&json!({"header": "origin", "probe": "missing"})).unwrap_err();
        assert!(err.problem.contains("probe"), "{err}");
        let err = lookup("tools_walk").unwrap().build(&json!({"rule": "name"})).unwrap_err();
        assert!(err.problem.contains("rule"), "{err}");
        assert!(lookup("tools_walk").unwrap().build(&json!({})).is_ok());
    }
}
