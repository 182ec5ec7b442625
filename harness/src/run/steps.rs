//! The message steps of a case: a JSON-RPC request or notification (on the
//! revision's main connection, or a fresh one), or a bodiless HTTP request.

use crate::checks::Outcome;
use crate::session::{Msg, Session};
use crate::suite::{Case, RawHttp, SendStep};
use crate::wire::{self, HeaderEdit};

fn label(name: Option<&str>, index: usize) -> String {
    name.map(String::from).unwrap_or_else(|| format!("step {}", index + 1))
}

pub async fn send(session: &Session, case: &Case, index: usize, name: Option<&str>, s: &SendStep) -> Outcome {
    let mut out = Outcome::default();
    let rev = case.revision;
    let label = label(name, index);
    if s.from_probe {
        // Not sent again: on a session-per-initialize server each one
        // costs the server a session (and a round trip to end it).
        let Some(probe) = session.probe_initialize(rev) else {
            return Outcome::error(format!("the revision probe kept no initialize for {rev} to judge"));
        };
        let mut ex = probe.clone();
        ex.label = "initialize (the revision probe's: the run's first request, on a connection of its own, with no session id)".into();
        ex.fresh = true;
        out.exchanges.push(ex);
        return out;
    }
    let id = s.id.clone().unwrap_or_else(|| session.next_id());
    let params = if rev.is_stateless() {
        wire::modern_params(s.params.as_ref(), s.meta, s.version.as_deref().unwrap_or(rev.as_str()))
    } else {
        s.params.clone()
    };
    let body = if s.notification { wire::notification(&s.method, params) } else { wire::request(&id, &s.method, params) };
    let edits: Vec<HeaderEdit> = s.edits();
    let mut msg = Msg::new(rev, &label, &body).edits(&edits);
    if s.notification {
        msg = msg.no_reply();
    }
    let ex = if s.fresh && rev.is_stateless() && session.transport() == crate::record::Transport::Stdio {
        // A malformed 2026-07-28 request: on the probe process the
        // negative probes share (a sentinel after it shows the process
        // unchanged, or retires it), not a process of its own.
        match session.isolated(std::slice::from_ref(&msg), &case.id).await {
            Ok(mut exs) => match exs.pop() {
                Some(ex) => ex,
                None => return Outcome::error("nothing was sent"),
            },
            Err(e) => return Outcome::error(format!("could not reach the probe process: {e}")),
        }
    } else if s.fresh
        && !rev.is_stateless()
        && session.transport() == crate::record::Transport::Stdio
        && s.method == "initialize"
        && s.params.as_ref() == Some(&crate::session::unknown_version_params())
    {
        // The initialize the probe process opened with (the same params,
        // first on a process of its own): a start saved.
        match session.probe_opening(rev).await {
            Ok(mut ex) => {
                ex.fresh = true;
                ex
            }
            Err(e) => return Outcome::error(format!("could not open the probe process: {e}")),
        }
    } else if s.fresh {
        // A step that is itself an `initialize` gets no handshake first (a
        // second one on the same session may rightly be refused).
        let fresh = match session.fresh(rev, s.method != "initialize", &case.id).await {
            Ok(f) => f,
            Err(e) => return Outcome::error(format!("could not open a fresh connection: {e}")),
        };
        let mut conn = fresh.conn;
        out.exchanges = fresh.exchanges;
        let mut ex = session.exchange(&mut conn, &msg, None).await;
        ex.fresh = true;
        ex.preamble = fresh.preamble;
        session.log(rev, &case.id, &ex);
        conn.shutdown().await;
        ex
    } else if s.negative {
        match session.on_negative(&msg, &case.id).await {
            Ok(ex) => ex,
            Err(e) => return Outcome::error(e.to_string()),
        }
    } else {
        match session.on_main(&msg, &case.id).await {
            Ok(ex) => ex,
            Err(e) => return Outcome::error(e.to_string()),
        }
    };
    out.exchanges.push(ex);
    out
}

pub async fn http(session: &Session, case: &Case, index: usize, name: Option<&str>, h: &RawHttp) -> Outcome {
    let label = label(name, index);
    let edits = HeaderEdit::from_map(&h.headers);
    let msg = Msg::raw(case.revision, &label, &h.method).edits(&edits);
    if h.fresh {
        let mut fresh = match session.fresh(case.revision, true, &case.id).await {
            Ok(f) => f,
            Err(e) => return Outcome::error(format!("could not open a fresh connection: {e}")),
        };
        let mut ex = session.exchange(&mut fresh.conn, &msg, Some(&case.id)).await;
        ex.fresh = true;
        fresh.conn.shutdown().await;
        let mut exchanges = fresh.exchanges;
        exchanges.push(ex);
        return Outcome { exchanges, ..Default::default() };
    }
    match session.on_main(&msg, &case.id).await {
        Ok(ex) => Outcome { exchanges: vec![ex], ..Default::default() },
        Err(e) => Outcome::error(e.to_string()),
    }
}
