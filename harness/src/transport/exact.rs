//! An own HTTP/1.1 sender, for requests whose header names must go out
//! with their exact letter case (reqwest, like every HTTP/2-ready client,
//! lower-cases them). Plain `http://` URLs only. It sends the request and
//! reads the head; the caller reads the body (`RawBody`).

use super::reply::HttpReply;
use super::{TransportError, ms_since};
use std::time::{Duration, Instant};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt};

/// Where a request goes: the URL, the headers every request carries, and
/// the request timeout (for the message when none came).
pub(super) struct To<'a> {
    pub url: &'a str,
    pub fixed: &'a [(String, String)],
    pub timeout: Duration,
}

/// Sends over a plain HTTP/1.1 connection of our own, so header names go
/// out exactly as written, and reads the status line and headers by
/// `deadline`: the reply so far and the body still to read, or the reply
/// that says why there is none.
pub(super) async fn send_exact(
    to: &To<'_>,
    method: &str,
    headers: &[(String, String)],
    body: Option<Vec<u8>>,
    start: Instant,
    deadline: tokio::time::Instant,
) -> Result<(HttpReply, RawBody), HttpReply> {
    let mut reply = HttpReply::default();
    let url = match reqwest::Url::parse(to.url) {
        Ok(u) if u.scheme() == "http" => u,
        _ => {
            reply.error = Some(TransportError::Io("header names with exact letter case can only be sent to an http:// URL".into()));
            return Err(reply);
        }
    };
    let host = url.host_str().unwrap_or("127.0.0.1").to_string();
    let port = url.port_or_known_default().unwrap_or(80);
    let mut path = url.path().to_string();
    if let Some(q) = url.query() {
        path.push('?');
        path.push_str(q);
    }
    let body = body.unwrap_or_default();
    // A Host the caller gives (a DNS-rebinding probe) goes instead of the URL's.
    let own_host =
        if headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("host")) { String::new() } else { format!("Host: {host}:{port}\r\n") };
    let mut head = format!("{method} {path} HTTP/1.1\r\n{own_host}Content-Length: {}\r\nConnection: close\r\n", body.len());
    for (k, v) in to.fixed.iter().chain(headers.iter()) {
        if k.bytes().any(|b| b <= b' ' || b == b':' || b >= 0x7f) || v.bytes().any(|b| b == b'\r' || b == b'\n') {
            reply.error = Some(TransportError::Io(format!("header `{k}` cannot be sent as written")));
            return Err(reply);
        }
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    // Errors say whether the connection broke before a byte of the answer
    // came (the request may then be sent again, if it is safe to repeat).
    let io = async {
        let lost = |e: std::io::Error| (e.to_string(), super::pace::lost_io(e.kind()));
        let mut sock = tokio::net::TcpStream::connect((host.as_str(), port))
            .await
            .map_err(|e| (format!("connect to {host}:{port}: {e}"), super::pace::lost_io(e.kind())))?;
        sock.write_all(head.as_bytes()).await.map_err(lost)?;
        sock.write_all(&body).await.map_err(lost)?;
        let mut rd = tokio::io::BufReader::new(sock);
        if rd.fill_buf().await.map_err(lost)?.is_empty() {
            return Err(("the server closed the connection without answering".to_string(), true));
        }
        let status_line = read_line_capped(&mut rd).await.map_err(|e| (e, false))?;
        let status: u16 = status_line
            .split_whitespace()
            .nth(1)
            .and_then(|c| c.parse().ok())
            .ok_or_else(|| (format!("not an HTTP status line: {status_line:?}"), false))?;
        let mut hs = Vec::new();
        loop {
            let line = read_line_capped(&mut rd).await.map_err(|e| (e, false))?;
            if line.is_empty() {
                break;
            }
            if hs.len() > 200 {
                return Err(("more than 200 response headers".to_string(), false));
            }
            if let Some((k, v)) = line.split_once(':') {
                hs.push((k.trim().to_ascii_lowercase(), v.trim().to_string()));
            }
        }
        Ok::<_, (String, bool)>((status, hs, rd))
    };
    let (status, hs, rd) = match tokio::time::timeout_at(deadline, io).await {
        Err(_) => {
            reply.error = Some(TransportError::Timeout(format!("no HTTP response within {} ms", to.timeout.as_millis())));
            reply.ms = ms_since(start);
            return Err(reply);
        }
        Ok(Err((e, lost))) => {
            reply.error = Some(TransportError::Io(e));
            reply.lost = lost;
            reply.ms = ms_since(start);
            return Err(reply);
        }
        Ok(Ok(x)) => x,
    };
    reply.status = Some(status);
    let chunked = hs.iter().any(|(k, v)| k == "transfer-encoding" && v.to_ascii_lowercase().contains("chunked"));
    let length = hs.iter().find(|(k, _)| k == "content-length").and_then(|(_, v)| v.parse::<usize>().ok());
    reply.headers = hs;
    let framing = if chunked {
        RawFraming::Chunked
    } else if let Some(n) = length {
        RawFraming::Length(n)
    } else if status == 204 || status == 304 {
        RawFraming::Length(0)
    } else {
        RawFraming::UntilClose
    };
    Ok((reply, RawBody { rd, framing }))
}

/// A body read from an own HTTP/1.1 connection.
pub(super) struct RawBody {
    rd: tokio::io::BufReader<tokio::net::TcpStream>,
    framing: RawFraming,
}

impl RawBody {
    pub(super) async fn chunk(&mut self) -> Result<Option<Vec<u8>>, String> {
        let rd = &mut self.rd;
        match &mut self.framing {
            RawFraming::Length(0) => Ok(None),
            RawFraming::Length(left) => {
                let mut buf = vec![0u8; (*left).min(64 * 1024)];
                let n = rd.read(&mut buf).await.map_err(|e| e.to_string())?;
                if n == 0 {
                    return Err(format!("connection closed with {left} body bytes still due"));
                }
                *left -= n;
                buf.truncate(n);
                Ok(Some(buf))
            }
            RawFraming::UntilClose => {
                let mut buf = vec![0u8; 64 * 1024];
                let n = rd.read(&mut buf).await.map_err(|e| e.to_string())?;
                buf.truncate(n);
                Ok(if n == 0 { None } else { Some(buf) })
            }
            RawFraming::Chunked => {
                let line = read_line_capped(rd).await?;
                let size_text = line.split(';').next().unwrap_or("").trim();
                let size = usize::from_str_radix(size_text, 16).map_err(|_| format!("bad chunk size line {line:?}"))?;
                if size == 0 {
                    return Ok(None);
                }
                let mut buf = vec![0u8; size];
                rd.read_exact(&mut buf).await.map_err(|e| e.to_string())?;
                read_line_capped(rd).await?;
                Ok(Some(buf))
            }
        }
    }
}

enum RawFraming {
    Length(usize),
    Chunked,
    UntilClose,
}

/// One CRLF-terminated line (without the line end), at most 8 KiB.
async fn read_line_capped(rd: &mut tokio::io::BufReader<tokio::net::TcpStream>) -> Result<String, String> {
    let mut line = Vec::new();
    loop {
        let mut b = [0u8; 1];
        let n = rd.read(&mut b).await.map_err(|e| e.to_string())?;
        if n == 0 {
            return Err("connection closed in the middle of the response head".into());
        }
        if b[0] == b'\n' {
            break;
        }
        line.push(b[0]);
        if line.len() > 8192 {
            return Err("a response head line is longer than 8 KiB".into());
        }
    }
    if line.last() == Some(&b'\r') {
        line.pop();
    }
    Ok(String::from_utf8_lossy(&line).into_owned())
}
