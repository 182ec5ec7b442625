//! Pure judges: functions over values the run has already received, each
//! with unit tests. No I/O here; the check types in `checks` gather the
//! values and call these.

pub mod admission;
pub mod args;
pub mod challenge;
pub mod completion;
pub mod content;
pub mod egress;
pub mod hints;
pub mod input;
pub mod leaks;
pub mod listen;
pub mod notify;
pub mod safety;
pub mod skills;
pub mod tasks;
pub mod xheader;

use serde::Serialize;

/// How much a finding weighs. `Note` never fails anything: it says what
/// mcpcert could not judge (an unknown `$schema` dialect, a remote `$ref`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, PartialOrd, Ord)]
#[serde(rename_all = "UPPERCASE")]
pub enum Weight {
    Note,
    Should,
    Policy,
    Must,
}

impl Weight {
    pub fn as_str(self) -> &'static str {
        match self {
            Weight::Note => "note",
            Weight::Should => "SHOULD",
            Weight::Policy => "POLICY",
            Weight::Must => "MUST",
        }
    }
    /// Whether a finding of this weight keeps a tool out (admission).
    pub fn rejects(self) -> bool {
        matches!(self, Weight::Must | Weight::Policy)
    }
}
