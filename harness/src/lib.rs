//! mcpcert: a black-box conformance harness for MCP servers.
//!
//! Data flows one way: `target` (reaching a server) → `wire` (envelopes,
//! schemas) → `suite` (cases as data) → `run` (steps, expectations,
//! verdicts) → `report` (JUnit, JSON, HTML, console).

pub mod checks;
pub mod config;
pub mod report;
pub mod run;
pub mod suite;
pub mod target;
pub mod wire;
