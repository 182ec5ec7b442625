//! Which cases a run takes: the revision asked for, then the filters
//! (libtest-style: FILTER is a substring of the case id, or with `--exact`
//! the whole id; every `--skip` text leaves out the ids that contain it).

use crate::suite::Case;
use crate::wire::Revision;

#[derive(Debug, Clone, Default)]
pub struct Selection {
    pub revision: Option<Revision>,
    pub filter: Option<String>,
    pub exact: bool,
    pub skip: Vec<String>,
}

impl Selection {
    pub fn selects(&self, case: &Case) -> bool {
        let id = case.id.as_str();
        let hit = |pattern: &str| if self.exact { id == pattern } else { id.contains(pattern) };
        self.revision.is_none_or(|r| case.revision == r) && self.filter.as_deref().is_none_or(hit) && !self.skip.iter().any(|s| hit(s))
    }

    /// The selected cases, in catalogue order.
    pub fn apply(&self, cases: &[Case]) -> Vec<Case> {
        cases.iter().filter(|c| self.selects(c)).cloned().collect()
    }

    /// What was asked for, for a message when nothing matches.
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        if let Some(r) = self.revision {
            parts.push(format!("--revision {r}"));
        }
        if let Some(f) = &self.filter {
            parts.push(if self.exact { format!("`{f}` --exact") } else { format!("`{f}`") });
        }
        for s in &self.skip {
            parts.push(format!("--skip `{s}`"));
        }
        parts.join(" ")
    }
}
