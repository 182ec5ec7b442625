//! Certification: what a release is measured against (requirements.rs:
//! the requirement sets' scenarios judged from their cases) and what it is
//! given. `contract_diff` compares two releases' contracts
//! (`reports/contract.json`), judged on `schema_diff`'s comparison of JSON
//! Schemas.

pub mod certificate;
pub mod contract_diff;
pub mod requirements;
pub mod schema_diff;
