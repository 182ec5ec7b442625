//! What mcpcert looked at under a draft of the spec, said as notes: never
//! a case, never a verdict, never counted (a draft's rules may still
//! change). The server card (SEP-2127, draft) is the one so far.

use serde::{Deserialize, Serialize};

/// One draft's findings for the run's target.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct DraftNote {
    /// What was looked at ("server card").
    pub name: String,
    /// The draft it is judged by, and that it is a draft.
    pub draft: String,
    /// Where it was looked for.
    pub url: String,
    /// "published", "not published (…)" or "unreachable: …".
    pub found: String,
    /// Each way what was found departs from the draft (its rule and level
    /// named), or nothing when it keeps every rule looked at.
    pub notes: Vec<String>,
}

impl DraftNote {
    /// The console's lines for it.
    pub fn lines(&self) -> Vec<String> {
        let mut out = vec![format!(
            "draft (notes only, never a verdict): {} at {}: {}{}",
            self.name,
            self.url,
            self.found,
            match self.notes.len() {
                0 if self.found == "published" => "; it keeps every rule looked at".to_string(),
                0 => String::new(),
                n => format!("; {n} note(s), {}:", self.draft),
            }
        )];
        out.extend(self.notes.iter().map(|n| format!("  - {n}")));
        out
    }
}
