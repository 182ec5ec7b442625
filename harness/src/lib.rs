//! mcpcert: a black-box conformance harness for MCP servers.
//!
//! Data flows one way, and each module imports only those before it:
//! `transport` (reaching a server) → `wire` (envelopes, headers, schemas)
//! → `record` (what a run produced) and `config` (what the operator
//! decided) → `session` (connections, ids, probes, the frame log) →
//! `checks` (the vocabulary: check types in a registry, pure judges) →
//! `suite` (cases as data, resolved through the registry) → `run` (cases
//! to verdicts). `report` (JUnit, JSON, HTML) reads only `record`;
//! `certify` (contract diffs, requirement sets, certificates) comes last.

pub mod auth;
pub mod certify;
pub mod checks;
pub mod config;
pub mod fuzz;
pub mod packages;
pub mod record;
pub mod report;
pub mod run;
pub mod session;
pub mod suite;
pub mod transport;
pub mod wire;
