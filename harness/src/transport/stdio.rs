//! stdio targets: spawn the server in its own process group, write one
//! JSON-RPC message per line, read newline-delimited replies, keep stderr.

use super::{Deadline, Frame, Limits, OpenError, TransportError, ms_since};
use serde_json::Value;
use std::collections::VecDeque;
use std::process::Stdio;
use std::sync::{Arc, Mutex};

use super::process;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::process::{Child, ChildStdin, Command};
use tokio::sync::mpsc;

/// How often `read_until` looks at what has arrived, and how long it keeps
/// reading once it has what it waited for (also: how long frames that a
/// notification provokes are collected).
const TICK: Duration = Duration::from_millis(50);
pub const GRACE: Duration = Duration::from_millis(100);
/// How long a process that left a request unanswered gets to answer it
/// late before it counts as having stopped answering.
const LATE_ANSWER: Duration = Duration::from_millis(1000);

#[derive(Debug, Clone)]
pub struct StdioSpec {
    pub argv: Vec<String>,
    pub env: Vec<(String, String)>,
    pub cwd: Option<String>,
    /// Start it with `env` alone, nothing of mcpcert's environment (a
    /// sandboxed package).
    pub clear_env: bool,
}

/// What stderr said, bounded: the newest bytes are kept.
#[derive(Default)]
struct StderrLog {
    total: u64,
    tail: VecDeque<u8>,
    /// The pipe reached its end (the process closed it, or exited).
    closed: bool,
}

const STDERR_KEEP: usize = 256 * 1024;

/// Evidence about stdout as a whole, for the framing checks.
#[derive(Default, Clone, Debug)]
pub struct StdoutAudit {
    pub lines: u64,
    /// Lines that were not one JSON-RPC message (first few kept, with reason).
    pub bad: Vec<Frame>,
    pub bad_count: u64,
    /// JSON-RPC requests the server sent (first few kept).
    pub requests: Vec<Frame>,
    pub request_count: u64,
}

const AUDIT_KEEP: usize = 20;

pub struct StdioTarget {
    child: Option<Child>,
    pgid: Option<i32>,
    stdin: Option<ChildStdin>,
    frames: mpsc::Receiver<Frame>,
    stderr: Arc<Mutex<StderrLog>>,
    stderr_seen: u64,
    audit: Arc<Mutex<StdoutAudit>>,
    limits: Limits,
    exit_note: Option<String>,
    /// Whether the process has written anything to stdout yet; until it
    /// has, waits use the start-up timeout.
    heard_from: bool,
    /// A request that got no answer in time: its id, and what happened.
    stalled: Option<(Value, String)>,
    /// The process stopped answering for good (a stalled request's answer
    /// did not come late either): nothing more is sent to it.
    hung: Option<String>,
}

/// `--stdio` is not a shell: a first word `NAME=value` is an environment
/// assignment the user meant, and the config is where it goes.
fn env_hint(prog: &str) -> String {
    let Some((name, value)) = prog.split_once('=') else { return String::new() };
    let mut chars = name.chars();
    let is_name = chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_') && chars.all(|c| c.is_ascii_alphanumeric() || c == '_');
    if !is_name {
        return String::new();
    }
    format!(
        " (`{prog}` looks like an environment assignment, but --stdio is not a shell and runs no assignments: put it in a config file as `[target.env]` `{name} = {value:?}` and give --stdio the command alone)"
    )
}

impl StdioTarget {
    pub fn spawn(spec: &StdioSpec, limits: &Limits) -> Result<StdioTarget, OpenError> {
        let Some((prog, args)) = spec.argv.split_first() else {
            return Err(OpenError("empty command".into()));
        };
        let mut cmd = Command::new(prog);
        cmd.args(args).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).kill_on_drop(true).process_group(0);
        if spec.clear_env {
            cmd.env_clear();
        }
        for (k, v) in &spec.env {
            cmd.env(k, v);
        }
        if let Some(dir) = &spec.cwd {
            cmd.current_dir(dir);
        }
        let mut child = cmd.spawn().map_err(|e| OpenError(format!("could not start `{prog}`: {e}{}", env_hint(prog))))?;
        limits.processes_started.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let pgid = child.id().map(|p| p as i32);
        if let Some(g) = pgid {
            process::register(g);
        }
        let started = Instant::now();
        let stdout = child.stdout.take().expect("piped stdout");
        let stderr = child.stderr.take().expect("piped stderr");
        let stdin = child.stdin.take();
        let (tx, rx) = mpsc::channel(256);
        let audit = Arc::new(Mutex::new(StdoutAudit::default()));
        tokio::spawn(read_lines(stdout, tx, limits.max_message, started, audit.clone()));
        let log = Arc::new(Mutex::new(StderrLog::default()));
        tokio::spawn(read_stderr(stderr, log.clone()));
        Ok(StdioTarget {
            child: Some(child),
            pgid,
            stdin,
            frames: rx,
            stderr: log,
            stderr_seen: 0,
            audit,
            limits: limits.clone(),
            exit_note: None,
            heard_from: false,
            stalled: None,
            hung: None,
        })
    }

    pub fn audit(&self) -> StdoutAudit {
        self.audit.lock().map(|a| a.clone()).unwrap_or_default()
    }

    /// stderr written since the previous call (as lossy text); when the
    /// process has exited, once its stderr pipe has been read to the end
    /// (200 ms at most), so that what a dying server said is not lost.
    pub async fn take_stderr_settled(&mut self) -> String {
        if self.exited() {
            for _ in 0..40 {
                if self.stderr.lock().map_or(true, |l| l.closed) {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        }
        self.take_stderr()
    }

    /// stderr written since the previous call (as lossy text).
    pub fn take_stderr(&mut self) -> String {
        let Ok(log) = self.stderr.lock() else { return String::new() };
        let new = log.total.saturating_sub(self.stderr_seen) as usize;
        self.stderr_seen = log.total;
        let kept = new.min(log.tail.len());
        let start = log.tail.len() - kept;
        let bytes: Vec<u8> = log.tail.iter().skip(start).copied().collect();
        let mut s = String::from_utf8_lossy(&bytes).into_owned();
        if kept < new {
            s.insert_str(0, &format!("[{} earlier bytes of stderr not kept]\n", new - kept));
        }
        s
    }

    /// Write one line (a newline is added). Raw bytes let checks send
    /// malformed frames on purpose.
    pub async fn write_line(&mut self, line: &[u8]) -> Result<(), TransportError> {
        let Some(stdin) = self.stdin.as_mut() else {
            return Err(TransportError::Closed("stdin was already closed".into()));
        };
        let mut buf = Vec::with_capacity(line.len() + 1);
        buf.extend_from_slice(line);
        buf.push(b'\n');
        let res = tokio::time::timeout(self.limits.request, async {
            stdin.write_all(&buf).await?;
            stdin.flush().await
        })
        .await;
        match res {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) => Err(TransportError::Closed(format!("writing to the server's stdin failed: {e}{}", self.exit_suffix()))),
            Err(_) => Err(TransportError::Timeout("the server did not read its stdin".into())),
        }
    }

    /// Write bytes as they are (no newline added): the fuzzer's framing
    /// inputs carry their own line ends, or none.
    pub async fn write_raw(&mut self, bytes: &[u8]) -> Result<(), TransportError> {
        let Some(stdin) = self.stdin.as_mut() else {
            return Err(TransportError::Closed("stdin was already closed".into()));
        };
        let res = tokio::time::timeout(self.limits.request, async {
            stdin.write_all(bytes).await?;
            stdin.flush().await
        })
        .await;
        match res {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) => Err(TransportError::Closed(format!("writing to the server's stdin failed: {e}{}", self.exit_suffix()))),
            Err(_) => Err(TransportError::Timeout("the server did not read its stdin".into())),
        }
    }

    /// Read frames until a response whose id equals `id` arrives. Everything
    /// received on the way is returned too. An error response with a null or
    /// missing id is taken as the answer (and the caller can flag it).
    pub async fn read_until_response(
        &mut self,
        id: &Value,
        timeout: Duration,
        progress: Option<&Value>,
        answer: Option<super::reply::Answer<'_>>,
    ) -> (Vec<Frame>, Option<usize>, Option<TransportError>) {
        let mut deadline = Deadline::new(timeout, self.limits.ceiling, progress);
        let mut got = Vec::new();
        loop {
            match tokio::time::timeout_at(deadline.at, self.frames.recv()).await {
                Ok(Some(frame)) => {
                    let frame = frame.parsed();
                    self.heard_from = true;
                    deadline.saw(&frame);
                    let is_answer = frame.answers(id);
                    // A request the server sends meanwhile (2025-11-25
                    // sampling, elicitation) gets its answer on stdin.
                    if let (Some(a), true) = (answer, frame.is_server_request())
                        && let Some(v) = &frame.value
                    {
                        let line = a(v).to_string();
                        let _ = self.write_line(line.as_bytes()).await;
                    }
                    got.push(frame);
                    if is_answer {
                        let i = got.len() - 1;
                        return (got, Some(i), None);
                    }
                }
                Ok(None) => {
                    let note = self.wait_exit_note().await;
                    return (got, None, Some(TransportError::Closed(format!("the server closed stdout before answering{note}"))));
                }
                Err(_) => {
                    // A line that came but could not be read may have been the answer.
                    let unreadable: Vec<String> = got.iter().filter_map(|f| f.problem.clone()).take(2).collect();
                    let hint = if unreadable.is_empty() {
                        String::new()
                    } else {
                        format!(
                            "; meanwhile {} line(s) arrived that could not be read as JSON-RPC: {}",
                            got.iter().filter(|f| f.problem.is_some()).count(),
                            unreadable.join("; ")
                        )
                    };
                    let mut why = format!("no response with id {id} within {}{hint}", deadline.describe());
                    if !self.heard_from {
                        why.push_str(&format!(
                            "; the process had written nothing since it started, so this was its start-up: {}",
                            self.limits.startup_basis()
                        ));
                    }
                    self.stalled = Some((id.clone(), why.clone()));
                    return (got, None, Some(TransportError::Timeout(why)));
                }
            }
        }
    }

    /// Why nothing should be sent to this process any more, if so. After a
    /// request went unanswered, the next exchange first waits a moment for
    /// the late answer; if it does not come, the process has stopped
    /// answering, and every later exchange is refused at once instead of
    /// waiting out its timeout again.
    pub async fn stopped_answering(&mut self) -> Option<String> {
        if let Some(h) = &self.hung {
            return Some(h.clone());
        }
        let (id, why) = self.stalled.take()?;
        let late = self.read_until(LATE_ANSWER, |f| f.iter().any(|x| x.answers(&id))).await;
        if late.iter().any(|x| x.answers(&id)) {
            return None;
        }
        let h = format!(
            "the server stopped answering on this process (earlier: {why}; nothing came {} ms later either)",
            LATE_ANSWER.as_millis()
        );
        self.hung = Some(h.clone());
        Some(h)
    }

    /// Collect whatever arrives within `window` (for notifications, which get
    /// no reply).
    pub async fn read_for(&mut self, window: Duration) -> Vec<Frame> {
        self.read_until(window, |_| false).await
    }

    /// Read frames for up to `window`; once `done` holds for what has
    /// arrived, keep reading only for a short grace period.
    pub async fn read_until(&mut self, window: Duration, done: impl Fn(&[Frame]) -> bool) -> Vec<Frame> {
        self.read_until_then(window, GRACE, done).await
    }

    /// `read_until` with the grace period after `done` given (zero: return
    /// at once).
    pub async fn read_until_then(&mut self, window: Duration, grace: Duration, done: impl Fn(&[Frame]) -> bool) -> Vec<Frame> {
        let deadline = tokio::time::Instant::now() + window;
        let mut stop_at = deadline;
        let mut got = Vec::new();
        loop {
            let now = tokio::time::Instant::now();
            if now >= stop_at {
                break;
            }
            let wake = stop_at.min(now + TICK);
            match tokio::time::timeout_at(wake, self.frames.recv()).await {
                Ok(Some(f)) => {
                    self.heard_from = true;
                    got.push(f.parsed());
                }
                Ok(None) => break,
                Err(_) => {}
            }
            if stop_at == deadline && done(&got) {
                if grace.is_zero() {
                    break;
                }
                stop_at = (tokio::time::Instant::now() + grace).min(deadline);
            }
        }
        got
    }

    /// Close stdin and wait up to `grace` for the process to exit by itself.
    /// Returns the exit description, or None if it was still running.
    pub async fn close_stdin_and_wait(&mut self, grace: Duration) -> Option<String> {
        self.stdin = None;
        let child = self.child.as_mut()?;
        match tokio::time::timeout(grace, child.wait()).await {
            Ok(Ok(status)) => Some(status.to_string()),
            Ok(Err(e)) => Some(format!("wait failed: {e}")),
            Err(_) => None,
        }
    }

    /// How long to wait for an answer: the start-up timeout until the
    /// process has said anything, then the request timeout.
    pub fn answer_timeout(&self) -> Duration {
        if self.heard_from { self.limits.request } else { self.limits.startup_allowance().max(self.limits.request) }
    }

    /// Whether the process has exited; when its stdout is closed but it is
    /// not reaped yet, after up to 200 ms for it to be.
    pub async fn exited_settled(&mut self) -> bool {
        for _ in 0..40 {
            if self.exited() {
                return true;
            }
            if !self.frames.is_closed() {
                return false;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        self.exited()
    }

    /// Whether the process has exited (it is not waited for).
    pub fn exited(&mut self) -> bool {
        self.child.as_mut().is_some_and(|c| matches!(c.try_wait(), Ok(Some(_))))
    }

    /// ` (process exited: …)` once it has, else nothing.
    pub fn exit_note_text(&mut self) -> String {
        self.exit_suffix()
    }

    fn exit_suffix(&mut self) -> String {
        if let Some(n) = &self.exit_note {
            return format!(" ({n})");
        }
        if let Some(child) = self.child.as_mut()
            && let Ok(Some(st)) = child.try_wait()
        {
            let n = format!("process exited: {st}");
            self.exit_note = Some(n.clone());
            return format!(" ({n})");
        }
        String::new()
    }

    async fn wait_exit_note(&mut self) -> String {
        if let Some(child) = self.child.as_mut()
            && let Ok(Ok(st)) = tokio::time::timeout(Duration::from_millis(500), child.wait()).await
        {
            let n = format!("process exited: {st}");
            self.exit_note = Some(n.clone());
            return format!(" ({n})");
        }
        self.exit_suffix()
    }

    /// Kill the whole process group now.
    pub fn kill(&mut self) {
        if let Some(g) = self.pgid.take() {
            process::kill_group(g);
        }
        if let Some(mut c) = self.child.take() {
            let _ = c.start_kill();
            // Reap in the background so no zombie is left.
            tokio::spawn(async move {
                let _ = c.wait().await;
            });
        }
    }

    /// End politely (close stdin, short grace), then kill the group.
    pub async fn shutdown(&mut self) {
        let _ = self.close_stdin_and_wait(Duration::from_millis(1500)).await;
        self.kill();
    }
}

impl Drop for StdioTarget {
    fn drop(&mut self) {
        if let Some(g) = self.pgid.take() {
            process::kill_group(g);
        }
    }
}

/// The most a reader's line buffer keeps between lines.
const KEPT_LINE_BUFFER: usize = 256 * 1024;

/// A line longer than this waits in the reader's queue as text, parsed again
/// by whoever reads it: lists read on several processes at once (~0.6 MB of
/// text, ~8 MB parsed for 10,000 tools) do not all sit parsed in queues.
const DEFER_PARSE_OVER: usize = 128 * 1024;

async fn read_lines(
    mut out: tokio::process::ChildStdout,
    tx: mpsc::Sender<Frame>,
    max_line: usize,
    started: Instant,
    audit: Arc<Mutex<StdoutAudit>>,
) {
    let mut buf: Vec<u8> = Vec::new();
    let mut chunk = vec![0u8; 64 * 1024];
    let mut discarding = false;
    let mut discarded: u64 = 0;
    loop {
        let n = match out.read(&mut chunk).await {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        let mut rest = &chunk[..n];
        while let Some(pos) = rest.iter().position(|&b| b == b'\n') {
            let (line, tail) = rest.split_at(pos);
            rest = &tail[1..];
            if discarding {
                discarding = false;
                let f = Frame::problem(
                    format!("line of {} bytes exceeds the {max_line}-byte limit; it was not parsed", discarded + line.len() as u64),
                    excerpt(&buf),
                    ms_since(started),
                );
                buf.clear();
                if emit(&tx, f, &audit).await.is_err() {
                    return;
                }
                continue;
            }
            buf.extend_from_slice(line);
            let f = Frame::from_bytes(&buf, ms_since(started));
            buf.clear();
            // A huge line's buffer is not kept for the next (small) one.
            if buf.capacity() > KEPT_LINE_BUFFER {
                buf = Vec::new();
            }
            if emit(&tx, f, &audit).await.is_err() {
                return;
            }
        }
        if discarding {
            discarded += rest.len() as u64;
        } else {
            buf.extend_from_slice(rest);
            if buf.len() > max_line {
                discarding = true;
                discarded = buf.len() as u64;
                buf.truncate(200);
            }
        }
    }
    if discarding || !buf.is_empty() {
        let f = if discarding {
            Frame::problem(format!("unterminated line of {discarded} bytes exceeds the limit"), excerpt(&buf), ms_since(started))
        } else {
            let mut f = Frame::from_bytes(&buf, ms_since(started));
            f.problem = Some(format!(
                "output ended without a newline after this text{}",
                f.problem.as_ref().map(|p| format!(" ({p})")).unwrap_or_default()
            ));
            f.value = None;
            f
        };
        let _ = emit(&tx, f, &audit).await;
    }
}

fn excerpt(b: &[u8]) -> String {
    let s = String::from_utf8_lossy(&b[..b.len().min(200)]).into_owned();
    format!("{s}…")
}

/// Parsed by the reader for the audit (a request the server sent, a broken
/// line), then queued; a large well-formed line as text only.
async fn emit(tx: &mpsc::Sender<Frame>, mut f: Frame, audit: &Arc<Mutex<StdoutAudit>>) -> Result<(), ()> {
    if let Ok(mut a) = audit.lock() {
        a.lines += 1;
        if f.problem.is_some() {
            a.bad_count += 1;
            if a.bad.len() < AUDIT_KEEP {
                a.bad.push(f.clone());
            }
        } else if f.is_server_request() {
            a.request_count += 1;
            if a.requests.len() < AUDIT_KEEP {
                a.requests.push(f.clone());
            }
        }
    }
    if f.raw.len() > DEFER_PARSE_OVER {
        f.defer_parse();
    }
    tx.send(f).await.map_err(|_| ())
}

async fn read_stderr(mut err: tokio::process::ChildStderr, log: Arc<Mutex<StderrLog>>) {
    let mut chunk = vec![0u8; 16 * 1024];
    loop {
        let n = match err.read(&mut chunk).await {
            Ok(0) | Err(_) => {
                if let Ok(mut l) = log.lock() {
                    l.closed = true;
                }
                break;
            }
            Ok(n) => n,
        };
        if let Ok(mut l) = log.lock() {
            l.total += n as u64;
            l.tail.extend(&chunk[..n]);
            while l.tail.len() > STDERR_KEEP {
                l.tail.pop_front();
            }
        }
    }
}
