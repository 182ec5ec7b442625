//! The call log: every `tools/call` the run sent, whatever case sent it
//! (report.json's `call_log`), and which tools each revision's run called
//! (the coverage line counts them).

use super::{Msg, Session};
use crate::record::Exchange;
use crate::wire::{self, Revision};
use serde_json::Value;

/// The call log, bounded (a run calls each tool a few times; a server with
/// a hundred thousand tools is not called that often, but the bound holds).
#[derive(Default)]
pub struct CallLog {
    pub entries: Vec<crate::record::CallLogEntry>,
    /// Calls sent and not kept because the log was full.
    pub dropped: u64,
}

const CALL_LOG_CAP: usize = 50_000;

impl Session {
    /// File each `tools/call` the message holds (a batch may hold several)
    /// in the call log.
    pub(super) fn note_calls(&self, msg: &Msg<'_>, log: Option<&str>, ex: &Exchange) {
        let name_of = |b: &Value| -> Option<String> {
            (b.get("method").and_then(Value::as_str) == Some("tools/call")).then(|| match b.pointer("/params/name") {
                Some(Value::String(s)) => s.clone(),
                Some(v) => wire::brief(v),
                None => "(no name)".into(),
            })
        };
        let names: Vec<String> = match msg.body {
            Value::Array(items) => items.iter().filter_map(name_of).collect(),
            b => name_of(b).into_iter().collect(),
        };
        if names.is_empty() {
            return;
        }
        let outcome = if msg.body.is_array() { "in a batch".to_string() } else { crate::record::CallLogEntry::outcome_of(ex) };
        let Ok(mut l) = self.call_log.lock() else { return };
        for tool in names {
            if l.entries.len() >= CALL_LOG_CAP {
                l.dropped += 1;
                continue;
            }
            let by = log.unwrap_or(msg.label).to_string();
            l.entries.push(crate::record::CallLogEntry { revision: msg.rev.as_str().to_string(), tool, by, outcome: outcome.clone() });
        }
    }

    /// Every `tools/call` sent so far (sorted: revision, tool, sender), and
    /// how many were not kept.
    pub fn call_log(&self) -> (Vec<crate::record::CallLogEntry>, u64) {
        let Ok(l) = self.call_log.lock() else { return (Vec::new(), 0) };
        let mut e = l.entries.clone();
        e.sort();
        (e, l.dropped)
    }

    /// The tools `rev`'s run called, by any case.
    pub fn tools_called(&self, rev: Revision) -> std::collections::BTreeSet<String> {
        let Ok(l) = self.call_log.lock() else { return Default::default() };
        l.entries.iter().filter(|e| e.revision == rev.as_str()).map(|e| e.tool.clone()).collect()
    }
}
