//! A 2025-11-25 session's GET stream (Streamable HTTP, "listening for
//! messages from the server"), read in the background while a case does
//! its work, so that what a server sends there is heard: a server may send
//! notifications on it rather than on a request's own stream.

use super::Session;
use crate::record::Exchange;
use crate::transport::{Frame, Outgoing, Transport};
use crate::wire::{self, Revision};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// A GET stream being read; `finish` ends it and gives what it brought.
pub struct GetStream {
    stop: Arc<AtomicBool>,
    task: tokio::task::JoinHandle<crate::transport::Incoming>,
    ex: Exchange,
}

impl Session {
    /// HTTP, 2025-11-25: open a GET stream on the revision's main session
    /// and read it until `finish` (at most the request ceiling). Returns
    /// once the server has answered the GET (or after the request timeout),
    /// so that what the case sends next can be heard on it. None over stdio,
    /// for 2026-07-28 (which has no such stream), or without a session.
    pub async fn open_get_stream(&self, rev: Revision, label: &str) -> Option<GetStream> {
        if self.transport() != Transport::Http || rev != Revision::Legacy {
            return None;
        }
        let session = self.main_session_id(rev)?.to_string();
        let mut conn = self.open().ok()?;
        conn.set_session_id(Some(session.clone()));
        let headers = wire::standard_headers(rev, None, Some(&session));
        let shown = self.shown_headers(&conn, &headers);
        let stop = Arc::new(AtomicBool::new(false));
        let opened = Arc::new(AtomicBool::new(false));
        let window = self.limits.ceiling;
        let exact = self.exact_names(rev);
        self.count_sent(1);
        let (s, o) = (stop.clone(), opened.clone());
        let task = tokio::spawn(async move {
            // Called first when the stream's head has come, then on every
            // tick: done once the case is.
            let done = move |_: &[Frame]| {
                o.store(true, Ordering::Relaxed);
                s.load(Ordering::Relaxed)
            };
            let out = Outgoing { http_method: "GET", body: None, exact_names: exact, ..Outgoing::message("", &headers, None) };
            conn.watch(&out, window, &done).await
        });
        let deadline = tokio::time::Instant::now() + self.limits.request;
        while !opened.load(Ordering::Relaxed) && !task.is_finished() && tokio::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        let ex = Exchange {
            label: label.to_string(),
            transport: Some(Transport::Http),
            http_method: Some("GET".into()),
            sent_headers: shown,
            fresh: true,
            ..Default::default()
        };
        Some(GetStream { stop, task, ex })
    }
}

impl GetStream {
    /// Stop reading (after a short grace for what is still on its way) and
    /// give the exchange: the status, and every frame that came on it.
    pub async fn finish(self, session: &Session, rev: Revision, case: &str) -> Exchange {
        self.stop.store(true, Ordering::Relaxed);
        let mut ex = self.ex;
        match self.task.await {
            Ok(inc) => {
                let stream = inc.status == Some(200);
                ex.fill_from(inc);
                // The end of a window is not an error for a stream read on purpose.
                if stream {
                    ex.error = None;
                }
            }
            Err(e) => ex.note = Some(format!("the GET stream's reader failed: {e}")),
        }
        session.log(rev, case, &ex);
        ex
    }
}
