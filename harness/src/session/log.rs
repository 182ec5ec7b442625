//! The frame log: every frame the server sent during a revision's run,
//! with the case it arrived in and the request that drew it (what to
//! replay). Whole-run audits (wire schema, server requests, input_required)
//! read it. Bounded, as a hostile server can send without end.

use crate::record::Exchange;
use crate::transport::Frame;
use std::sync::Arc;

const FRAME_LOG_CAP: usize = 20_000;
/// And at most this much frame text (a hostile server can send huge frames).
const FRAME_LOG_BYTES: usize = 64 * 1024 * 1024;

pub struct LoggedFrame {
    pub case: String,
    /// Kept as text only: parsed values can take many times the memory of
    /// the text, so audits parse again (`LoggedFrame::parsed`).
    pub frame: Frame,
    /// The exchange the frame arrived in, without its frames: what to
    /// replay to see the frame again. Shared by all frames of an exchange.
    pub origin: Arc<Exchange>,
}

impl LoggedFrame {
    /// The frame with its parsed value, for an audit.
    pub fn parsed(&self) -> Frame {
        let mut f = Frame::from_bytes(self.frame.raw.as_bytes(), self.frame.at_ms);
        if self.frame.problem.is_some() {
            f.problem = self.frame.problem.clone();
            f.value = None;
        }
        f
    }
}

#[derive(Default)]
pub struct FrameLog {
    pub frames: Vec<LoggedFrame>,
    bytes: usize,
    /// Frames not kept because the log was full.
    pub dropped: u64,
}

impl FrameLog {
    /// The frames in an order that does not depend on which request was
    /// answered first (`-j`): by the id of the request that drew them (the
    /// probes' ids, then each case's block in catalogue order, then the
    /// shared facts' blocks), the frames of one exchange as they came; an
    /// exchange without an id (a notification) stays after the one its
    /// case sent before it.
    pub fn in_order(&self) -> Vec<&LoggedFrame> {
        let mut last: std::collections::HashMap<&str, i64> = Default::default();
        let mut keyed: Vec<(i64, &LoggedFrame)> = self
            .frames
            .iter()
            .map(|lf| {
                let id = lf.origin.request_id.as_ref().and_then(|v| match v {
                    serde_json::Value::Number(n) => n.as_i64(),
                    serde_json::Value::String(s) => s.chars().filter(|c| c.is_ascii_digit()).collect::<String>().parse().ok(),
                    _ => None,
                });
                let key = match id {
                    Some(k) => k,
                    None => last.get(lf.case.as_str()).copied().unwrap_or(0),
                };
                last.insert(lf.case.as_str(), key);
                (key, lf)
            })
            .collect();
        keyed.sort_by_key(|(k, _)| *k);
        keyed.into_iter().map(|(_, lf)| lf).collect()
    }

    /// File the frames of `ex`, sent in `case`.
    pub fn add(&mut self, case: &str, ex: &Exchange) {
        if ex.frames.is_empty() {
            return;
        }
        // What to replay, not what came back (that can be large).
        let origin = Arc::new(ex.request_only());
        for f in &ex.frames {
            if self.frames.len() >= FRAME_LOG_CAP || self.bytes + f.raw.len() > FRAME_LOG_BYTES {
                self.dropped += 1;
                continue;
            }
            self.bytes += f.raw.len();
            self.frames.push(LoggedFrame { case: case.to_string(), frame: f.lite(usize::MAX), origin: origin.clone() });
        }
    }
}
