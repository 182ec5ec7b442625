//! The frame log: every frame the server sent during a revision's run,
//! with the case it arrived in and the request that drew it (what to
//! replay). Whole-run audits (wire schema, server requests, input_required)
//! read it. Bounded, as a hostile server can send without end.

use crate::record::Exchange;
use crate::transport::Frame;
use crate::wire::Revision;
use crate::wire::schema::{self, Violation};
use std::sync::{Arc, Mutex};

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
    /// The frame judged against the revision's message schema when it was
    /// filed (the wire audit reads it, so the run does not end waiting for
    /// every frame to be judged): its message type and the first
    /// `KEPT_VIOLATIONS` things that break it, each clipped (a violation
    /// quotes the value it is about: a hostile server's frames must not be
    /// kept twice). None when the frame is not a JSON object.
    pub schema: Option<(String, Vec<Violation>)>,
    /// What the audits ask of every frame, read when it was filed: they
    /// parse again only the frames they look into.
    pub shape: Shape,
}

/// The kind of a frame, as the whole-run audits need it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Shape {
    /// A request (a method and an id).
    pub server_request: bool,
    /// A response with a `result` (no method), and its `resultType`.
    pub result: Option<Option<String>>,
    /// A notification's method (a method and no id).
    pub notification: Option<String>,
}

impl Shape {
    pub fn of(v: &serde_json::Value) -> Shape {
        let Some(m) = v.as_object() else { return Shape::default() };
        let method = m.get("method");
        Shape {
            server_request: method.is_some() && m.contains_key("id"),
            result: (method.is_none() && m.contains_key("result"))
                .then(|| v.pointer("/result/resultType").and_then(|t| t.as_str()).map(String::from)),
            notification: if m.contains_key("id") { None } else { method.and_then(|x| x.as_str()).map(String::from) },
        }
    }
}

impl LoggedFrame {
    /// The frame with its parsed value, for an audit.
    pub fn parsed(&self) -> Frame {
        reparse(&self.frame)
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

    /// File the frames of `ex`, sent in `case`, with what the schema said
    /// of each (`schema`, in the same order).
    fn add(&mut self, case: &str, ex: &Exchange, judged: Vec<Judged>) {
        // What to replay, not what came back (that can be large).
        let origin = Arc::new(ex.request_only());
        for (f, (shape, schema)) in ex.frames.iter().zip(judged) {
            if self.frames.len() >= FRAME_LOG_CAP || self.bytes + f.raw.len() > FRAME_LOG_BYTES {
                self.dropped += 1;
                continue;
            }
            self.bytes += f.raw.len();
            self.frames.push(LoggedFrame { case: case.to_string(), frame: f.lite(usize::MAX), origin: origin.clone(), schema, shape });
        }
    }
}

/// How many of a frame's schema violations the log keeps, and how much of
/// each one's text (the wire audit quotes the first three of a frame).
pub const KEPT_VIOLATIONS: usize = 3;
const KEPT_PROBLEM_BYTES: usize = 300;

/// File the frames of `ex`, sent in `case`, in `rev`'s log. Each is judged
/// against the revision's message schema first, outside the lock (that is
/// the costly part), so the audit at the end of the run only reads.
pub fn file(log: &Mutex<FrameLog>, rev: Revision, case: &str, ex: &Exchange) {
    if ex.frames.is_empty() {
        return;
    }
    // A full log keeps nothing more: nothing to judge.
    let full = log.lock().map_or(true, |l| l.frames.len() >= FRAME_LOG_CAP);
    let judged = ex
        .frames
        .iter()
        .enumerate()
        .map(|(i, f)| if full { Default::default() } else { judge(rev, ex, i, f) })
        .map(|(shape, schema)| (shape, schema.map(|(t, v)| (t, kept(v)))))
        .collect();
    if let Ok(mut l) = log.lock() {
        l.add(case, ex, judged);
    }
}

/// A frame's shape, and its message type and schema violations (None when
/// it is not a JSON object).
type Judged = (Shape, Option<(String, Vec<Violation>)>);

/// Frame `i` of `ex`, judged; nothing when it is not a JSON object (or was
/// not JSON at all).
fn judge(rev: Revision, ex: &Exchange, i: usize, f: &Frame) -> Judged {
    if f.problem.is_some() {
        return Default::default();
    }
    let reparsed;
    let v = match &f.value {
        Some(v) => v,
        // The response was moved out of its frame, which kept its text:
        // judged from there, not parsed again (a large list would be in
        // memory twice).
        None if ex.response_frame == Some(i) => match ex.response.as_ref() {
            Some(v) => v,
            None => return Default::default(),
        },
        None => {
            reparsed = reparse(f);
            match reparsed.problem.is_none().then_some(reparsed.value.as_ref()).flatten() {
                Some(v) => v,
                None => return Default::default(),
            }
        }
    };
    (Shape::of(v), v.is_object().then(|| schema::check_frame(rev, ex.rpc_method.as_deref(), v)))
}

/// A frame parsed again from its text; a frame that had a problem keeps it,
/// without a value.
fn reparse(f: &Frame) -> Frame {
    let mut again = Frame::from_bytes(f.raw.as_bytes(), f.at_ms);
    if f.problem.is_some() {
        again.problem = f.problem.clone();
        again.value = None;
    }
    again
}

/// The violations the log keeps of a frame (see `LoggedFrame::schema`).
fn kept(mut v: Vec<Violation>) -> Vec<Violation> {
    v.truncate(KEPT_VIOLATIONS);
    for x in &mut v {
        if x.problem.len() > KEPT_PROBLEM_BYTES {
            x.problem = crate::transport::clip(&x.problem, KEPT_PROBLEM_BYTES);
        }
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_frame_shape_is_what_the_audits_read() {
        use serde_json::json;
        let shape = |v: serde_json::Value| Shape::of(&v);
        let request = shape(json!({"jsonrpc": "2.0", "id": 1, "method": "sampling/createMessage"}));
        assert_eq!(request, Shape { server_request: true, ..Default::default() });
        let asked = shape(json!({"jsonrpc": "2.0", "id": 1, "result": {"resultType": "input_required"}}));
        assert_eq!(asked.result, Some(Some("input_required".into())));
        assert_eq!(shape(json!({"jsonrpc": "2.0", "id": 1, "result": {}})).result, Some(None));
        assert_eq!(shape(json!({"jsonrpc": "2.0", "id": 1, "error": {"code": 1}})), Shape::default());
        let note = shape(json!({"jsonrpc": "2.0", "method": "notifications/message", "params": {}}));
        assert_eq!(note, Shape { notification: Some("notifications/message".into()), ..Default::default() });
        assert_eq!(shape(json!([1, 2])), Shape::default());
        assert_eq!(shape(json!({"method": 3})), Shape::default());
    }

    #[test]
    fn the_log_keeps_three_violations_of_a_frame_each_clipped() {
        let v = |p: String| Violation { message_type: "T".into(), path: "/x".into(), problem: p };
        let kept = kept(vec![v("a".repeat(10_000)), v("short".into()), v("b".into()), v("dropped".into())]);
        assert_eq!(kept.len(), KEPT_VIOLATIONS);
        assert!(
            kept[0].problem.len() <= KEPT_PROBLEM_BYTES + '…'.len_utf8() && kept[0].problem.ends_with('…'),
            "{}",
            kept[0].problem.len()
        );
        assert_eq!(kept[1].problem, "short");
        assert_eq!(kept[2].problem, "b");
    }
}
