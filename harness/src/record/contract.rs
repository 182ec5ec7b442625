//! The server's contract as a run saw it (`reports/contract.json`): per
//! revision served, its capabilities and identity and everything it lists
//! (tools with their schemas and annotations, prompts, resources,
//! templates), as the server sent them. `mcpcert contract-diff` compares two.

use serde::{Deserialize, Serialize};
use serde_json::Value;

pub const CONTRACT_FORMAT: &str = "mcpcert-contract";
pub const CONTRACT_FORMAT_VERSION: u32 = 1;

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Contract {
    pub format: String,
    pub format_version: u32,
    pub mcpcert_version: String,
    pub started_at_unix_ms: u128,
    /// The target as reports show it (secrets redacted).
    pub target: Value,
    /// One entry per revision the server serves.
    pub revisions: Vec<RevisionContract>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct RevisionContract {
    pub revision: String,
    #[serde(default)]
    pub server_info: Option<Value>,
    #[serde(default)]
    pub capabilities: Value,
    /// `None`: the server does not advertise the capability that offers the list.
    #[serde(default)]
    pub tools: Option<Listing>,
    #[serde(default)]
    pub prompts: Option<Listing>,
    #[serde(default)]
    pub resources: Option<Listing>,
    #[serde(default)]
    pub resource_templates: Option<Listing>,
}

/// One list as walked.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Listing {
    /// Whether the walk reached the list's end; a partial list cannot show
    /// what was removed.
    pub complete: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// Shared with the walk that listed them (a list of 10,000 tools is
    /// not copied to be written).
    pub items: std::sync::Arc<Vec<Value>>,
}

impl RevisionContract {
    /// The listings by the name a diff uses for their items.
    pub fn listings(&self) -> [(&'static str, Option<&Listing>); 4] {
        [
            ("tool", self.tools.as_ref()),
            ("prompt", self.prompts.as_ref()),
            ("resource", self.resources.as_ref()),
            ("resource template", self.resource_templates.as_ref()),
        ]
    }
}
