//! The protocol revisions mcpcert tests, as data: each is one row of
//! `TABLE`, with its era (stateless, or the initialize handshake) and what
//! it has. Code holds a `Revision` and asks it for a feature or its era,
//! never matches on names: a new revision is a new row.

/// How a revision's conversation starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Era {
    /// Every request carries its own `_meta`; `server/discover`.
    Stateless,
    /// `initialize` and `notifications/initialized`; a session (HTTP) or a
    /// process (stdio) holds what was negotiated.
    Initialize,
}

/// The HTTP transport a revision defines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HttpTransport {
    /// Streamable HTTP: every message a POST to one endpoint, replies as
    /// JSON or an SSE stream (2025-03-26 on).
    Streamable,
    /// HTTP with SSE (2024-11-05): a GET opens an SSE stream whose first
    /// event names the endpoint to POST messages to; replies come on the stream.
    SseStream,
}

/// What a revision has (or, for `Batching`, requires of a server).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Feature {
    /// Tools may declare an `outputSchema`; results carry `structuredContent` (2025-06-18).
    StructuredOutput,
    /// `resource_link` content blocks (2025-06-18).
    ResourceLinks,
    /// Tool `annotations` (`readOnlyHint`…) (2025-03-26).
    ToolAnnotations,
    /// `audio` content blocks (2025-03-26).
    Audio,
    /// The `completions` server capability (2025-03-26; `completion/complete` is older).
    CompletionsCapability,
    /// A server must accept JSON-RPC batches (2025-03-26 only).
    Batching,
    /// Elicitation, a client feature a server may use (2025-06-18).
    Elicitation,
    /// `MCP-Protocol-Version` on every HTTP request after initialization (2025-06-18).
    ProtocolVersionHeader,
    /// `title` on tools, prompts, resources (2025-06-18).
    Titles,
    /// A frozen requirement set defines conformance (2025-11-25, 2026-07-28).
    RequirementSet,
    /// A schema without `$schema` is JSON Schema 2020-12 (2025-11-25);
    /// before, the spec named no dialect.
    DefaultDialect,
    /// Tool name rules: length, characters, uniqueness (2025-11-25).
    ToolNames,
}

struct Row {
    date: &'static str,
    era: Era,
    http: HttpTransport,
    features: &'static [Feature],
}

use Feature::*;

/// Newest first: the order runs go in.
const TABLE: [Row; 5] = [
    Row {
        date: "2026-07-28",
        era: Era::Stateless,
        http: HttpTransport::Streamable,
        features: &[
            StructuredOutput,
            ResourceLinks,
            ToolAnnotations,
            Audio,
            CompletionsCapability,
            Elicitation,
            ProtocolVersionHeader,
            Titles,
            RequirementSet,
            DefaultDialect,
            ToolNames,
        ],
    },
    Row {
        date: "2025-11-25",
        era: Era::Initialize,
        http: HttpTransport::Streamable,
        features: &[
            StructuredOutput,
            ResourceLinks,
            ToolAnnotations,
            Audio,
            CompletionsCapability,
            Elicitation,
            ProtocolVersionHeader,
            Titles,
            RequirementSet,
            DefaultDialect,
            ToolNames,
        ],
    },
    Row {
        date: "2025-06-18",
        era: Era::Initialize,
        http: HttpTransport::Streamable,
        features: &[
            StructuredOutput,
            ResourceLinks,
            ToolAnnotations,
            Audio,
            CompletionsCapability,
            Elicitation,
            ProtocolVersionHeader,
            Titles,
        ],
    },
    Row {
        date: "2025-03-26",
        era: Era::Initialize,
        http: HttpTransport::Streamable,
        features: &[ToolAnnotations, Audio, CompletionsCapability, Batching],
    },
    Row { date: "2024-11-05", era: Era::Initialize, http: HttpTransport::SseStream, features: &[] },
];

/// One protocol revision (an index into the table).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Revision(u8);

impl Revision {
    pub const R2026_07_28: Revision = Revision(0);
    pub const R2025_11_25: Revision = Revision(1);
    pub const R2025_06_18: Revision = Revision(2);
    pub const R2025_03_26: Revision = Revision(3);
    pub const R2024_11_05: Revision = Revision(4);

    /// Every revision, newest first (the run order).
    pub const ALL: [Revision; 5] = [Revision(0), Revision(1), Revision(2), Revision(3), Revision(4)];
    /// The stateless revisions (for checks of their rules).
    pub const STATELESS: [Revision; 1] = [Revision(0)];
    /// The revisions of the initialize era, newest first.
    pub const INITIALIZE_ERA: [Revision; 4] = [Revision(1), Revision(2), Revision(3), Revision(4)];

    /// The newest revision of each era: what a probe asks for first.
    pub const NEWEST_STATELESS: Revision = Revision::R2026_07_28;
    pub const NEWEST_INITIALIZE: Revision = Revision::R2025_11_25;

    fn row(self) -> &'static Row {
        &TABLE[self.0 as usize]
    }

    pub fn as_str(self) -> &'static str {
        self.row().date
    }

    pub fn parse(s: &str) -> Option<Revision> {
        Revision::ALL.into_iter().find(|r| r.as_str() == s)
    }

    pub fn era(self) -> Era {
        self.row().era
    }

    /// 2026-07-28 and later: no handshake, per-request `_meta`.
    pub fn is_stateless(self) -> bool {
        self.era() == Era::Stateless
    }

    pub fn http(self) -> HttpTransport {
        self.row().http
    }

    pub fn has(self, f: Feature) -> bool {
        self.row().features.contains(&f)
    }

    /// Whether this revision is `other` or newer.
    pub fn at_least(self, other: Revision) -> bool {
        self.0 <= other.0
    }
}

impl std::fmt::Display for Revision {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl serde::Serialize for Revision {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> serde::Deserialize<'de> for Revision {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Revision, D::Error> {
        let s = String::deserialize(d)?;
        Revision::parse(&s).ok_or_else(|| serde::de::Error::custom(format!("unknown protocol revision `{s}`")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_is_newest_first_and_each_revision_knows_its_era() {
        let dates: Vec<&str> = Revision::ALL.iter().map(|r| r.as_str()).collect();
        let mut sorted = dates.clone();
        sorted.sort_by(|a, b| b.cmp(a));
        assert_eq!(dates, sorted);
        assert!(Revision::R2026_07_28.is_stateless());
        assert!(Revision::INITIALIZE_ERA.iter().all(|r| r.era() == Era::Initialize));
        assert!(Revision::STATELESS.iter().all(|r| r.is_stateless()));
        assert_eq!(Revision::ALL.len(), Revision::STATELESS.len() + Revision::INITIALIZE_ERA.len());
        assert_eq!(Revision::parse("2025-06-18"), Some(Revision::R2025_06_18));
        assert_eq!(Revision::parse("2024-10-07"), None);
        assert!(Revision::R2025_03_26.has(Feature::Batching) && !Revision::R2025_06_18.has(Feature::Batching));
        assert!(!Revision::R2024_11_05.has(Feature::ToolAnnotations));
        assert_eq!(Revision::R2024_11_05.http(), HttpTransport::SseStream);
        assert!(Revision::R2025_11_25.at_least(Revision::R2025_06_18) && !Revision::R2025_03_26.at_least(Revision::R2025_06_18));
        let json = serde_json::to_string(&Revision::R2025_06_18).unwrap();
        assert_eq!(json, "\"2025-06-18\"");
        assert_eq!(serde_json::from_str::<Revision>(&json).unwrap(), Revision::R2025_06_18);
    }
}
