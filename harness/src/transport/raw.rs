//! Bytes sent exactly as given: a whole HTTP/1.1 request (head and body,
//! malformed on purpose) over a connection of its own, for the fuzzer. The
//! reply is read within a deadline and a byte cap, and whatever came is
//! kept, however broken.

use super::Frame;
use std::time::Instant;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// What came back for one raw request.
#[derive(Debug, Default, Clone)]
pub struct RawReply {
    pub status: Option<u16>,
    /// Names lower-cased.
    pub headers: Vec<(String, String)>,
    /// The body as it came (clipped at the cap).
    pub body: Vec<u8>,
    /// JSON-RPC frames in the body (one for a JSON body; each SSE event's
    /// data for an event stream).
    pub frames: Vec<Frame>,
    /// The connection could not be made (the server is gone).
    pub refused: bool,
    /// No reply (or no whole one) by the deadline.
    pub timed_out: bool,
    /// Anything else that went wrong reading the reply.
    pub error: Option<String>,
    pub ms: u64,
}

/// Host and port of an `http://` URL, and its path (with the query).
pub fn http_parts(url: &str) -> Result<(String, u16, String), String> {
    let u = reqwest::Url::parse(url).map_err(|e| format!("invalid URL `{url}`: {e}"))?;
    if u.scheme() != "http" {
        return Err("raw requests go to http:// URLs only".into());
    }
    let host = u.host_str().unwrap_or("127.0.0.1").to_string();
    let port = u.port_or_known_default().unwrap_or(80);
    let mut path = u.path().to_string();
    if let Some(q) = u.query() {
        path.push('?');
        path.push_str(q);
    }
    Ok((host, port, path))
}

/// Send `request` (the whole HTTP request) to `host:port` and read the
/// reply until the connection closes, the body ends, an SSE event holds a
/// JSON-RPC response, `cap` body bytes came, or `deadline` passes.
pub async fn send_raw_http(host: &str, port: u16, request: &[u8], deadline: tokio::time::Instant, cap: usize) -> RawReply {
    let start = Instant::now();
    let mut r = RawReply::default();
    let io = async {
        let mut sock = match tokio::net::TcpStream::connect((host, port)).await {
            Ok(s) => s,
            Err(e) => {
                r.refused = true;
                r.error = Some(format!("connect to {host}:{port}: {e}"));
                return;
            }
        };
        // A server may answer (and close) before it has read a huge body:
        // the write may then fail, and the reply is still read.
        let (mut rd, mut wr) = sock.split();
        let write = async {
            let _ = wr.write_all(request).await;
            let _ = wr.flush().await;
        };
        let mut buf = Vec::new();
        let read = read_reply(&mut rd, &mut buf, cap, &mut r);
        tokio::pin!(read);
        tokio::select! {
            _ = write => {}
            _ = &mut read => return,
        }
        read.await;
    };
    if tokio::time::timeout_at(deadline, io).await.is_err() {
        r.timed_out = true;
    }
    r.ms = start.elapsed().as_millis() as u64;
    r.frames = frames_of(&r);
    r
}

async fn read_reply(rd: &mut tokio::net::tcp::ReadHalf<'_>, buf: &mut Vec<u8>, cap: usize, r: &mut RawReply) {
    let mut chunk = vec![0u8; 64 * 1024];
    let mut head_end = None;
    loop {
        if let Some(h) = head_end {
            let body = &buf[h..];
            if body_done(r, body) || body.len() >= cap {
                break;
            }
        }
        let n = match rd.read(&mut chunk).await {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) => {
                r.error = Some(format!("reading the reply: {e}"));
                break;
            }
        };
        buf.extend_from_slice(&chunk[..n]);
        if head_end.is_none()
            && let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n")
        {
            head_end = Some(i + 4);
            parse_head(&buf[..i], r);
        }
        if head_end.is_none() && buf.len() > 64 * 1024 {
            r.error = Some("the reply's head is longer than 64 KiB".into());
            break;
        }
    }
    match head_end {
        Some(h) => {
            let body = buf[h..].to_vec();
            r.body = if is_chunked(r) { dechunk(&body) } else { body };
            r.body.truncate(cap);
        }
        None if !buf.is_empty() => r.error = Some(format!("not an HTTP reply: {:?}", String::from_utf8_lossy(&buf[..buf.len().min(200)]))),
        None => {
            if r.error.is_none() {
                r.error = Some("the connection closed without a reply".into());
            }
        }
    }
}

fn parse_head(head: &[u8], r: &mut RawReply) {
    let text = String::from_utf8_lossy(head);
    let mut lines = text.split("\r\n");
    r.status = lines.next().and_then(|l| l.split_whitespace().nth(1)).and_then(|c| c.parse().ok());
    for l in lines {
        if let Some((k, v)) = l.split_once(':') {
            r.headers.push((k.trim().to_ascii_lowercase(), v.trim().to_string()));
        }
    }
}

fn header<'a>(r: &'a RawReply, name: &str) -> Option<&'a str> {
    r.headers.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
}

fn is_chunked(r: &RawReply) -> bool {
    header(r, "transfer-encoding").is_some_and(|v| v.to_ascii_lowercase().contains("chunked"))
}

fn is_sse(r: &RawReply) -> bool {
    header(r, "content-type").is_some_and(|v| v.to_ascii_lowercase().starts_with("text/event-stream"))
}

/// Whether the body read so far is whole: its length reached, its last
/// chunk read, or (an event stream) a JSON-RPC response among its events.
fn body_done(r: &RawReply, body: &[u8]) -> bool {
    if matches!(r.status, Some(204 | 304)) {
        return true;
    }
    if is_sse(r) {
        let text = if is_chunked(r) { dechunk(body) } else { body.to_vec() };
        return sse_data(&text).iter().any(|d| {
            serde_json::from_slice::<serde_json::Value>(d)
                .is_ok_and(|v| v.get("method").is_none() && (v.get("result").is_some() || v.get("error").is_some()))
        });
    }
    if is_chunked(r) {
        return body.ends_with(b"0\r\n\r\n");
    }
    header(r, "content-length").and_then(|v| v.parse::<usize>().ok()).is_some_and(|n| body.len() >= n)
}

/// A chunked body decoded (as far as it is well-formed).
fn dechunk(mut b: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    while let Some(i) = b.windows(2).position(|w| w == b"\r\n") {
        let size_text = String::from_utf8_lossy(&b[..i]);
        let Ok(size) = usize::from_str_radix(size_text.split(';').next().unwrap_or("").trim(), 16) else { break };
        b = &b[i + 2..];
        if size == 0 || b.len() < size {
            out.extend_from_slice(&b[..size.min(b.len())]);
            break;
        }
        out.extend_from_slice(&b[..size]);
        b = b.get(size + 2..).unwrap_or(&[]);
    }
    out
}

/// The `data` of each event of an event stream (lines joined by `\n`).
fn sse_data(text: &[u8]) -> Vec<Vec<u8>> {
    let text = String::from_utf8_lossy(text).replace("\r\n", "\n");
    let mut out = Vec::new();
    for event in text.split("\n\n") {
        let data: Vec<&str> = event.lines().filter_map(|l| l.strip_prefix("data:")).map(|d| d.strip_prefix(' ').unwrap_or(d)).collect();
        // An event with empty data primes the client (an id to resume
        // from): it holds no message.
        if !data.is_empty() && !data.iter().all(|d| d.is_empty()) {
            out.push(data.join("\n").into_bytes());
        }
    }
    out
}

fn frames_of(r: &RawReply) -> Vec<Frame> {
    if r.body.is_empty() {
        return Vec::new();
    }
    if is_sse(r) {
        return sse_data(&r.body).iter().map(|d| Frame::from_bytes(d, 0)).collect();
    }
    let json = header(r, "content-type").is_some_and(|v| v.to_ascii_lowercase().contains("json"));
    if json || r.body.first() == Some(&b'{') || r.body.first() == Some(&b'[') {
        return vec![Frame::from_bytes(&r.body, 0)];
    }
    Vec::new()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunked_bodies_and_event_streams_are_read() {
        assert_eq!(dechunk(b"3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n"), b"abcde");
        let d = sse_data(b"event: message\ndata: {\"a\":1}\n\ndata: x\r\ndata: y\r\n\r\n");
        assert_eq!(d, vec![b"{\"a\":1}".to_vec(), b"x\ny".to_vec()]);
    }
}
