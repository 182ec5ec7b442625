//! How many new connections mcpcert opens to one HTTP server at a time,
//! and which lost requests it sends again.
//!
//! A small server (Python's `http.server` listens with a backlog of 5, and
//! proxies cap their accept queues too) resets connections that arrive
//! faster than it accepts them. So a request on a connection of its own
//! (mcpcert's exact-case sender, a stream) waits for one of `OPENING`
//! places, held until the server's answer begins: no more than that many
//! new connections wait in the server's accept queue for mcpcert. And a
//! request whose connection was reset or closed before a byte of an
//! answer came is sent again (at most `RETRIES` times, after a pause), but
//! only when the caller says the request is safe to repeat: a read, never
//! a call that could change something, since the server may have read it
//! before the connection broke. A refused connection is never sent again:
//! nothing listens there.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

/// New connections of mcpcert's own waiting for their answer at once, per
/// target (below the 5 of Python's `http.server`, and below the 6 per
/// origin that browsers keep).
pub const OPENING: usize = 4;

/// How often a lost request is sent again, and the pause before each time.
pub const RETRIES: [Duration; 3] = [Duration::from_millis(50), Duration::from_millis(200), Duration::from_millis(800)];

/// A run's lost requests sent again, at most: a server that resets more
/// than this is not merely slow to accept, and what it does is judged.
const BUDGET: u32 = 64;

/// Shared by the clones of a target's spec (one run).
#[derive(Debug, Clone)]
pub struct Gate(Arc<Inner>);

#[derive(Debug)]
struct Inner {
    opening: tokio::sync::Semaphore,
    retried: AtomicU32,
}

impl Default for Gate {
    fn default() -> Gate {
        Gate(Arc::new(Inner { opening: tokio::sync::Semaphore::new(OPENING), retried: AtomicU32::new(0) }))
    }
}

impl Gate {
    /// A place for one new connection, to hold until its answer begins.
    pub async fn open(&self) -> Option<tokio::sync::SemaphorePermit<'_>> {
        self.0.opening.acquire().await.ok()
    }

    /// Whether one more lost request may be sent again (counts it).
    pub fn may_retry(&self) -> bool {
        self.0.retried.fetch_add(1, Ordering::Relaxed) < BUDGET
    }

    /// How many lost requests the run sent again.
    pub fn retried(&self) -> u32 {
        self.0.retried.load(Ordering::Relaxed).min(BUDGET)
    }
}

/// Whether an error of reqwest's means the connection was reset or closed
/// before any answer came (and not refused: nothing listened).
pub fn lost_reqwest(e: &reqwest::Error) -> bool {
    use std::error::Error;
    let mut src: Option<&(dyn Error + 'static)> = Some(e);
    while let Some(x) = src {
        if let Some(io) = x.downcast_ref::<std::io::Error>() {
            return lost_io(io.kind());
        }
        // hyper's "connection closed before message completed" (no io error beneath).
        if x.to_string().contains("connection closed before message completed") {
            return true;
        }
        src = x.source();
    }
    false
}

/// Whether an I/O error of a connection that was open means it was reset
/// or closed before any answer came.
pub fn lost_io(kind: std::io::ErrorKind) -> bool {
    use std::io::ErrorKind::*;
    matches!(kind, ConnectionReset | ConnectionAborted | BrokenPipe | UnexpectedEof)
}

/// The methods whose requests change nothing on a server, so that a lost
/// one may be sent again: discovery, lists, reads, gets, completion, ping.
/// A `tools/call` is repeatable only when its caller knows the tool is
/// read-only; `initialize` never is (each may open a session).
pub fn repeatable_method(method: &str) -> bool {
    matches!(
        method,
        "server/discover"
            | "ping"
            | "tools/list"
            | "prompts/list"
            | "prompts/get"
            | "resources/list"
            | "resources/templates/list"
            | "resources/read"
            | "completion/complete"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_repeat_and_calls_and_sessions_do_not() {
        assert!(repeatable_method("tools/list"));
        assert!(repeatable_method("server/discover"));
        assert!(!repeatable_method("tools/call"));
        assert!(!repeatable_method("initialize"));
        assert!(!repeatable_method("logging/setLevel"));
    }

    #[test]
    fn a_reset_is_lost_and_a_refusal_is_not() {
        assert!(lost_io(std::io::ErrorKind::ConnectionReset));
        assert!(lost_io(std::io::ErrorKind::UnexpectedEof));
        assert!(!lost_io(std::io::ErrorKind::ConnectionRefused));
        assert!(!lost_io(std::io::ErrorKind::TimedOut));
    }

    /// A server on 127.0.0.1 that resets its first `resets` connections
    /// before reading them, then answers every request with a result,
    /// holding each answer `hold` long; it counts connections, and the
    /// most it held at once.
    async fn server(resets: usize, hold: Duration) -> (String, Arc<AtomicU32>, Arc<AtomicU32>) {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/mcp", l.local_addr().unwrap());
        let (seen, most) = (Arc::new(AtomicU32::new(0)), Arc::new(AtomicU32::new(0)));
        let (s, m) = (seen.clone(), most.clone());
        let now = Arc::new(AtomicU32::new(0));
        tokio::spawn(async move {
            loop {
                let Ok((mut sock, _)) = l.accept().await else { return };
                if s.fetch_add(1, Ordering::SeqCst) < resets as u32 {
                    let _ = sock.set_zero_linger();
                    drop(sock);
                    continue;
                }
                let (now, m) = (now.clone(), m.clone());
                tokio::spawn(async move {
                    let n = now.fetch_add(1, Ordering::SeqCst) + 1;
                    m.fetch_max(n, Ordering::SeqCst);
                    let mut buf = Vec::new();
                    let mut chunk = [0u8; 4096];
                    while !String::from_utf8_lossy(&buf).contains("\r\n\r\n{") {
                        match sock.read(&mut chunk).await {
                            Ok(0) | Err(_) => return,
                            Ok(k) => buf.extend_from_slice(&chunk[..k]),
                        }
                    }
                    tokio::time::sleep(hold).await;
                    let body = r#"{"jsonrpc":"2.0","id":1,"result":{}}"#;
                    let head = format!(
                        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
                        body.len()
                    );
                    now.fetch_sub(1, Ordering::SeqCst);
                    let _ = sock.write_all(format!("{head}{body}").as_bytes()).await;
                });
            }
        });
        (url, seen, most)
    }

    fn target(url: &str) -> crate::transport::Connection {
        let spec = crate::transport::HttpSpec {
            url: url.into(),
            headers: vec![],
            secret_headers: vec![],
            header_env: vec![],
            client: Default::default(),
            sse: Default::default(),
            gate: Default::default(),
        };
        crate::transport::Connection::open(&crate::transport::TargetSpec::Http(spec), &Default::default()).unwrap()
    }

    const BODY: &str = r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_read_lost_before_its_answer_is_sent_again_and_a_call_is_not() {
        let id = serde_json::json!(1);
        for exact in [false, true] {
            let (url, seen, _) = server(2, Duration::ZERO).await;
            let mut c = target(&url);
            let out = crate::transport::Outgoing {
                exact_names: exact,
                repeatable: true,
                ..crate::transport::Outgoing::message(BODY, &[], Some(&id))
            };
            let got = c.exchange(&out).await;
            assert!(got.error.is_none() && got.response.is_some(), "exact {exact}: {:?}", got.error);
            assert_eq!(got.resent.len(), 2, "exact {exact}: two lost attempts: {:?}", got.resent);
            assert_eq!(seen.load(Ordering::SeqCst), 3);

            let (url, seen, _) = server(1, Duration::ZERO).await;
            let mut c = target(&url);
            let out = crate::transport::Outgoing { exact_names: exact, ..crate::transport::Outgoing::message(BODY, &[], Some(&id)) };
            let got = c.exchange(&out).await;
            assert!(got.error.is_some() && got.resent.is_empty(), "exact {exact}: not repeatable, not sent again");
            tokio::time::sleep(Duration::from_millis(100)).await;
            assert_eq!(seen.load(Ordering::SeqCst), 1);
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn no_more_than_opening_new_connections_wait_for_their_answer() {
        let (url, seen, most) = server(0, Duration::from_millis(50)).await;
        let c = target(&url);
        let id = serde_json::json!(1);
        let sends = (0..12).map(|_| {
            let mut c = c.http_clone().unwrap();
            let id = id.clone();
            async move {
                let out = crate::transport::Outgoing { exact_names: true, ..crate::transport::Outgoing::message(BODY, &[], Some(&id)) };
                c.exchange(&out).await.response.is_some()
            }
        });
        let answered = futures_util::future::join_all(sends).await;
        assert!(answered.iter().all(|a| *a));
        assert_eq!(seen.load(Ordering::SeqCst), 12);
        assert_eq!(most.load(Ordering::SeqCst), OPENING as u32, "new connections waiting at once");
    }

    #[test]
    fn the_budget_ends_retries() {
        let g = Gate::default();
        assert!((0..BUDGET).all(|_| g.may_retry()));
        assert!(!g.may_retry());
        assert_eq!(g.retried(), BUDGET);
    }
}
