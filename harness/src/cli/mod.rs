//! The commands behind `main`: each file one command or one part of a run's
//! set-up. Only the binary uses them.

pub mod auth;
pub mod board;
pub mod certify;
pub mod fuzz;
pub mod matrix;
pub mod offline;
pub mod progress;
pub mod run;
pub mod server_json;
pub mod setup;
pub mod signals;
