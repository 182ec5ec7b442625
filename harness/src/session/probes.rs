//! stdio: the one process a revision's negative probes share. A process
//! start costs a Python or Node server seconds, so the probes that must not
//! reach the main process (malformed requests, requests a server must
//! refuse) take turns on one probe process instead of a process each.
//! After each probe a sentinel request, answered when the process was new,
//! is sent again: an answer of the same shape shows the process unchanged,
//! and it serves the next probe; any other answer (or none) retires it, and
//! the next probe gets a new one. So a server that keeps state a probe left
//! costs one more start, and that change is the finding of
//! `stateless-after-malformed` alone, never a cascade over later probes.

use super::{Msg, Session, SessionError, with_fact_ids};
use crate::record::Exchange;
use crate::transport::{Connection, Transport};
use crate::wire::{self, MetaMode, Revision};
use serde_json::{Value, json};

/// The params of the `initialize` an initialize-era probe process opens
/// with: a version no server supports, so that its answer is also what
/// `lifecycle/version-negotiation-unknown` judges (a step that sends these
/// params fresh is given that exchange instead of a process of its own).
pub fn unknown_version_params() -> Value {
    json!({"protocolVersion": "1900-01-01", "capabilities": {}, "clientInfo": {"name": "mcpcert", "version": "0"}})
}

/// Whether to stop sending a chain of probes after the `i`-th exchange.
pub type Until<'a> = dyn Fn(usize, &Exchange) -> bool + Sync + 'a;

/// Where the probe process's own traffic (its start, the sentinels) is
/// filed in the frame log.
pub const PROBES: &str = "(the negative probes' process)";

/// The probe process of a revision, and what it answered when new.
pub(super) struct ProbeProcess {
    pub conn: Connection,
    /// The lines that brought it to the revision's state (its handshake).
    pub preamble: Vec<String>,
    /// The shape of its first answer to the sentinel.
    pub reference: String,
    /// How many probes (or chains of them) it has served.
    pub served: usize,
}

impl Session {
    /// The sentinel request: `server/discover` (2026-07-28), `ping` (the
    /// initialize era); asked of a new probe process, and after each probe.
    fn sentinel(&self, rev: Revision) -> serde_json::Value {
        if rev.is_stateless() {
            wire::request(&self.next_id(), "server/discover", wire::modern_params(None, MetaMode::Full, rev.as_str()))
        } else {
            wire::request(&self.next_id(), "ping", None)
        }
    }

    /// Send `msgs` in turn on the revision's probe process (opened if there
    /// is none, or the last one was retired), then the sentinel. Returns
    /// the exchanges (the first marked as a fresh process's, with the lines
    /// that bring one to this state, so its reproducer starts one) and, if
    /// the process was retired, why.
    /// With `as_new`, on a probe process that has served no probe yet (a
    /// new one if it has).
    pub(super) async fn on_probe_process(
        &self,
        msgs: &[Msg<'_>],
        case: &str,
        until: &Until<'_>,
        as_new: bool,
    ) -> Result<(Vec<Exchange>, Option<String>), SessionError> {
        let rev = msgs.first().map(|m| m.rev).ok_or(SessionError::Handshake("nothing to send".into()))?;
        let st = self.revs.get(&rev).ok_or(SessionError::NoConnection(rev))?;
        let mut g = st.probes.lock().await;
        if as_new
            && g.as_ref().is_some_and(|p| p.served > 0)
            && let Some(mut p) = g.take()
        {
            p.conn.shutdown().await;
        }
        // A probe that failed on a process an earlier probe left, and that
        // process has exited, is sent once more on a new one: the end is no
        // finding of this probe's unless it happens again.
        for attempt in 0..2 {
            if let Some(p) = g.as_mut()
                && p.conn.exited()
                && let Some(mut p) = g.take()
            {
                p.conn.kill();
            }
            let reused = g.is_some();
            if g.is_none() {
                *g = Some(with_fact_ids(&format!("{rev} negative probes"), self.open_probe_process(rev)).await?);
            }
            let Some(p) = g.as_mut() else { return Err(SessionError::NoConnection(rev)) };
            p.served += 1;
            let mut out = Vec::new();
            for (i, m) in msgs.iter().enumerate() {
                let mut ex = self.exchange(&mut p.conn, m, Some(case)).await;
                if i == 0 {
                    ex.fresh = true;
                    ex.preamble = p.preamble.clone();
                }
                let stop = ex.error.is_some() || until(i, &ex);
                out.push(ex);
                if stop {
                    break;
                }
            }
            let failed = out.iter().any(|e| e.error.is_some());
            if attempt == 0 && reused && failed && p.conn.exited() {
                if let Some(mut p) = g.take() {
                    p.conn.kill();
                }
                continue;
            }
            // The sentinel: the same answer as when the process was new, or
            // the process is retired.
            let retired = if failed {
                Some("a probe got no answer on it".to_string())
            } else {
                let body = self.sentinel(rev);
                let label = format!("sentinel: {} (is the probe process unchanged?)", body["method"].as_str().unwrap_or("?"));
                let ex = self.exchange(&mut p.conn, &Msg::new(rev, &label, &body), None).await;
                let now = ex.answer_shape();
                let changed = now != p.reference;
                // A changed process's answer is the finding of the probe
                // (or of stateless-after-malformed), not the wire audit's.
                if !changed {
                    self.log(rev, PROBES, &ex);
                }
                changed.then(|| {
                    format!("after it the process answered the sentinel {} ({now}), not as when new ({})", body["method"], p.reference)
                })
            };
            if retired.is_some()
                && let Some(mut p) = g.take()
            {
                p.conn.kill();
            }
            return Ok((out, retired));
        }
        Err(SessionError::NoConnection(rev))
    }

    /// A new probe process: brought to the revision's state, then asked the
    /// sentinel once for the shape every later answer must keep.
    async fn open_probe_process(&self, rev: Revision) -> Result<ProbeProcess, SessionError> {
        // A process the probes left (a modern-only server's initialize
        // probe): the probe process if it answers the sentinel.
        let spare = self.revs.get(&rev).and_then(|st| st.spare_probe.lock().ok().and_then(|mut g| g.take()));
        if let Some((mut conn, mut lines)) = spare {
            let body = self.sentinel(rev);
            let ex = self
                .exchange(&mut conn, &Msg::new(rev, "sentinel: server/discover (the probe process's reference)", &body), Some(PROBES))
                .await;
            if ex.error.is_none() && ex.result().is_some() {
                lines.push(body.to_string());
                return Ok(ProbeProcess { conn, preamble: lines, reference: ex.answer_shape(), served: 0 });
            }
            conn.kill();
        }
        if !rev.is_stateless()
            && let Some(p) = self.open_with_unknown_version(rev).await?
        {
            return Ok(p);
        }
        let f = self.fresh(rev, true, PROBES).await?;
        let mut conn = f.conn;
        let reference = match f.exchanges.first().filter(|e| rev.is_stateless() && e.result().is_some()) {
            // A 2026-07-28 process's first request is the sentinel itself.
            Some(first) => first.answer_shape(),
            None => {
                let body = self.sentinel(rev);
                let ex =
                    self.exchange(&mut conn, &Msg::new(rev, "sentinel: ping (the probe process's reference)", &body), Some(PROBES)).await;
                if let Some(e) = &ex.error {
                    return Err(SessionError::Handshake(format!("the probe process did not answer ping: {e}")));
                }
                ex.answer_shape()
            }
        };
        Ok(ProbeProcess { conn, preamble: f.preamble, reference, served: 0 })
    }
}

impl Session {
    /// An initialize-era probe process opened with an `initialize` asking
    /// for a version no server supports (kept as the revision's opening
    /// exchange): when the answer offers this revision, the handshake ends
    /// with `notifications/initialized` and the process serves the probes;
    /// otherwise (an error, another version) it is stopped and None says
    /// to open one the usual way.
    async fn open_with_unknown_version(&self, rev: Revision) -> Result<Option<ProbeProcess>, SessionError> {
        let st = self.revs.get(&rev).ok_or(SessionError::NoConnection(rev))?;
        let permit = self.starting.clone().acquire_owned().await.ok();
        let mut conn = self.open()?;
        let body = wire::request(&self.next_id(), "initialize", Some(unknown_version_params()));
        let ex = self
            .exchange(&mut conn, &Msg::new(rev, "first: initialize asking for a version no server supports", &body), Some(PROBES))
            .await;
        drop(permit);
        let _ = st.opening.set(ex.clone());
        if ex.error.is_none() {
            self.note_start(&ex);
        }
        let offered = ex.result().and_then(|r| r.get("protocolVersion")).and_then(|v| v.as_str());
        if offered != Some(rev.as_str()) {
            conn.shutdown().await;
            return Ok(None);
        }
        let note = wire::notification("notifications/initialized", None);
        let _ = self.exchange(&mut conn, &Msg::new(rev, "handshake: notifications/initialized", &note).no_linger(), Some(PROBES)).await;
        let ping = self.sentinel(rev);
        let pex = self.exchange(&mut conn, &Msg::new(rev, "sentinel: ping (the probe process's reference)", &ping), Some(PROBES)).await;
        if pex.error.is_some() {
            conn.shutdown().await;
            return Ok(None);
        }
        Ok(Some(ProbeProcess { conn, preamble: vec![body.to_string(), note.to_string()], reference: pex.answer_shape(), served: 0 }))
    }

    /// stdio, initialize era: the initialize the revision's probe process
    /// opened with (`unknown_version_params`), opening it if it is not yet.
    pub async fn probe_opening(&self, rev: Revision) -> Result<Exchange, SessionError> {
        let st = self.revs.get(&rev).ok_or(SessionError::NoConnection(rev))?;
        {
            let mut g = st.probes.lock().await;
            if g.is_none() && st.opening.get().is_none() {
                *g = Some(with_fact_ids(&format!("{rev} negative probes"), self.open_probe_process(rev)).await?);
            }
        }
        st.opening.get().cloned().ok_or(SessionError::NoConnection(rev))
    }

    /// stdio: a process of the revision that has answered requests, for
    /// the exit-on-end-of-input case at the end of the revision: the probe
    /// process (taken: nothing is sent to it after), else a new one brought
    /// to the revision's state. With the exchanges that opened it, if new.
    pub async fn process_for_eof(&self, rev: Revision, case: &str) -> Result<(Connection, Vec<Exchange>), SessionError> {
        let st = self.revs.get(&rev).ok_or(SessionError::NoConnection(rev))?;
        if let Some(mut p) = st.probes.lock().await.take() {
            if !p.conn.exited() {
                return Ok((p.conn, Vec::new()));
            }
            p.conn.kill();
        }
        let f = self.fresh(rev, true, case).await?;
        Ok((f.conn, f.exchanges))
    }
}

/// The note an exchange gets when the probe process it went on was
/// retired after it (see `probes.rs`).
pub(super) fn note_retired(ex: &mut Exchange, retired: Option<String>) {
    if let Some(why) = retired {
        let note = format!(
            "the probe process was retired after this ({why}): the next probe gets a new one; a server that changes with a malformed request fails lifecycle/stateless-after-malformed"
        );
        ex.note = Some(match ex.note.take() {
            Some(old) => format!("{old}; {note}"),
            None => note,
        });
    }
}

impl Session {
    /// Negative probes that must not reach the main connection (malformed
    /// requests, a chain of them): over stdio in turn on the probe process
    /// the revision's negative probes share, with a sentinel after them;
    /// otherwise (HTTP) on a new connection of their own, brought to the
    /// revision's starting state (2025-11-25: a handshake of its own) and
    /// closed afterwards. The handshake's exchanges come first; the last
    /// exchange answers the last message.
    pub async fn isolated(&self, msgs: &[Msg<'_>], case: &str) -> Result<Vec<Exchange>, SessionError> {
        self.isolated_until(msgs, case, &|_, _| false, false).await
    }

    /// `isolated`, stopping after the exchange for which `until` (given its
    /// index among `msgs`) is true; with `as_new`, over stdio on a probe
    /// process that has served no other probe (HTTP: always a new
    /// connection).
    pub async fn isolated_until(
        &self,
        msgs: &[Msg<'_>],
        case: &str,
        until: &Until<'_>,
        as_new: bool,
    ) -> Result<Vec<Exchange>, SessionError> {
        let Some(rev) = msgs.first().map(|m| m.rev) else { return Ok(Vec::new()) };
        if self.transport() == Transport::Stdio {
            let (mut exs, retired) = self.on_probe_process(msgs, case, until, as_new).await?;
            if let Some(last) = exs.last_mut() {
                note_retired(last, retired);
            }
            return Ok(exs);
        }
        let fresh = self.fresh(rev, true, case).await?;
        let mut conn = fresh.conn;
        let mut out = fresh.exchanges;
        for (i, m) in msgs.iter().enumerate() {
            let mut ex = self.exchange(&mut conn, m, Some(case)).await;
            if i == 0 {
                ex.fresh = true;
                ex.preamble = fresh.preamble.clone();
            }
            let stop = until(i, &ex);
            out.push(ex);
            if stop {
                break;
            }
        }
        conn.shutdown().await;
        Ok(out)
    }
}
