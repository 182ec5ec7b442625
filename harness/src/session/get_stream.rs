//! A 2025-11-25 session's GET stream (Streamable HTTP, "listening for
//! messages from the server"), read while a case does its work, so that
//! what a server sends there is heard: it may send notifications, and
//! requests (sampling, elicitation), on it rather than on a request's own
//! stream. Requests that come on it are answered with a POST, as a client
//! that reads the stream does.

use super::Session;
use crate::record::Exchange;
use crate::transport::{Answer, Frame, Outgoing, Transport};
use crate::wire::{self, Revision};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

impl Session {
    /// HTTP, 2025-11-25: run `work` while the GET stream of `session` (a
    /// session id; None: the revision's main one) is read, answering the
    /// requests that come on it with `answer`; what came is filed under
    /// `log` (None: not in the revision's frame log). `work` starts once the
    /// server has answered the GET (or after the request timeout); the
    /// stream is read until `work` is done, and a moment after. Returns
    /// what `work` gave, and the stream's exchange (its status and every
    /// frame that came on it; None over stdio, for 2026-07-28, which has no
    /// such stream, or without a session).
    pub async fn with_get_stream<T>(
        &self,
        rev: Revision,
        session: Option<&str>,
        label: &str,
        answer: Option<Answer<'_>>,
        log: Option<&str>,
        work: impl Future<Output = T>,
    ) -> (T, Option<Exchange>) {
        let sid = session.map(str::to_string).or_else(|| self.main_session_id(rev).map(str::to_string));
        let Some(sid) = sid.filter(|_| self.transport() == Transport::Http && !rev.is_stateless()) else {
            return (work.await, None);
        };
        let mut conn = match self.open() {
            Ok(c) => c,
            Err(_) => return (work.await, None),
        };
        conn.set_session_id(Some(sid.clone()));
        let headers = wire::standard_headers(rev, None, Some(&sid));
        let shown = self.shown_headers(&conn, &headers, self.exact_names(rev));
        let stop = AtomicBool::new(false);
        let opened = AtomicBool::new(false);
        let finished = AtomicBool::new(false);
        // Called first when the stream's head has come, then on every tick:
        // done once the work is.
        // The frames that came before the work began.
        let begun = AtomicBool::new(false);
        let preceded = std::sync::atomic::AtomicUsize::new(0);
        let done = |frames: &[Frame]| {
            if !begun.load(Ordering::SeqCst) {
                preceded.store(frames.len(), Ordering::SeqCst);
            }
            opened.store(true, Ordering::Relaxed);
            stop.load(Ordering::Relaxed)
        };
        let out = Outgoing {
            http_method: "GET",
            body: None,
            exact_names: self.exact_names(rev),
            answer,
            ..Outgoing::message("", &headers, None)
        };
        self.count_sent(1);
        let watch = async {
            let inc = conn.watch(&out, self.limits.ceiling, &done).await;
            finished.store(true, Ordering::Relaxed);
            inc
        };
        let work = async {
            let deadline = tokio::time::Instant::now() + self.limits.request;
            while !opened.load(Ordering::Relaxed) && !finished.load(Ordering::Relaxed) && tokio::time::Instant::now() < deadline {
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
            begun.store(true, Ordering::SeqCst);
            let r = work.await;
            stop.store(true, Ordering::Relaxed);
            r
        };
        let (r, inc) = tokio::join!(work, watch);
        let mut ex = Exchange {
            label: label.to_string(),
            transport: Some(Transport::Http),
            http_method: Some("GET".into()),
            sent_headers: shown,
            fresh: true,
            stream: true,
            ..Default::default()
        };
        let stream = inc.status == Some(200);
        ex.fill_from(inc);
        ex.preceded = preceded.load(Ordering::SeqCst).min(ex.frames.len());
        // The end of a window is not an error for a stream read on purpose.
        if stream {
            ex.error = None;
        }
        if let Some(case) = log {
            self.log(rev, case, &ex);
        }
        (r, Some(ex))
    }
}

impl Session {
    /// HTTP: a GET on `conn` (with its session id and the revision's
    /// headers, `edits` applied), read only until the answer's head has
    /// come (or the request timeout): whether the server opened a stream,
    /// refused it, and with which headers. Filed under `case`.
    pub async fn get_head(&self, conn: &mut super::Connection, rev: Revision, label: &str, case: &str) -> Exchange {
        let mut headers = wire::standard_headers(rev, None, conn.session_id());
        headers.retain(|(k, _)| !k.eq_ignore_ascii_case("accept"));
        headers.push(("Accept".into(), "text/event-stream".into()));
        let shown = self.shown_headers(conn, &headers, self.exact_names(rev));
        let out = Outgoing { http_method: "GET", body: None, exact_names: self.exact_names(rev), ..Outgoing::message("", &headers, None) };
        self.count_sent(1);
        let inc = conn.watch(&out, self.limits.request, &|_: &[Frame]| true).await;
        let mut ex = Exchange {
            label: label.to_string(),
            transport: Some(Transport::Http),
            http_method: Some("GET".into()),
            sent_headers: shown,
            fresh: true,
            stream: true,
            ..Default::default()
        };
        let stream = inc.status == Some(200);
        ex.fill_from(inc);
        if stream {
            ex.error = None;
        }
        self.log(rev, case, &ex);
        ex
    }
}
