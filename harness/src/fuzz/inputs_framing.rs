//! Framing and header inputs: bytes that are not one well-formed message on
//! stdio, and HTTP requests that break the transport's rules.

use super::inputs::{Due, HttpShape, Payload, Want, request, simple_method};
use super::rng::Rng;
use crate::wire::Revision;
use serde_json::{Value, json};

type Made = (String, Payload, Due, Option<Value>);

const PARSE_ERROR: &[i64] = &[-32700];

fn good(rev: Revision, id: &Value) -> Vec<u8> {
    request(rev, id, simple_method(rev), None).to_string().into_bytes()
}

fn line(mut b: Vec<u8>) -> Vec<u8> {
    b.push(b'\n');
    b
}

fn unreadable() -> Due {
    Due::Unreadable { want: Want::Error(PARSE_ERROR), also: vec![] }
}

/// An answer to `id`, or a parse error (a strict reader refuses the bytes,
/// a lenient one serves the request in them).
fn either(id: &Value) -> Due {
    Due::Response { id: id.clone(), want: Want::Any, null_ok: true, also: vec![] }
}

/// The largest line sent: 16 MiB.
pub const HUGE: usize = 16 * 1024 * 1024;

pub fn stdio(tpl: usize, rng: &mut Rng, id: &Value, rev: Revision) -> Made {
    let g = good(rev, id);
    match tpl {
        0 => {
            let words: Vec<String> = (0..1 + rng.below(5))
                .map(|_| {
                    let n = 1 + rng.below(8) as usize;
                    rng.word(n)
                })
                .collect();
            ("a line that is not JSON".into(), Payload::Bytes(line(words.join(" ").into_bytes())), unreadable(), None)
        }
        1 => {
            let cut = 1 + rng.below(g.len() as u64 - 2) as usize;
            (format!("a request cut after {cut} bytes"), Payload::Bytes(line(g[..cut].to_vec())), unreadable(), None)
        }
        2 => {
            let mut b = g.clone();
            let at = 1 + rng.below(b.len() as u64 - 2) as usize;
            b.insert(at, 0);
            (format!("a request with a NUL byte at {at}"), Payload::Bytes(line(b)), unreadable(), None)
        }
        3 => {
            let bad: &[u8] = rng.pick::<&[u8]>(&[&b"\xff\xfe"[..], &b"\xc3"[..], &b"\xed\xa0\x80"[..], &b"\xf8\x88\x80\x80\x80"[..]]);
            let text = String::from_utf8_lossy(&g).replace("\"method\"", "\"fuzz\":\"BAD\",\"method\"");
            let mut b = Vec::new();
            let (head, tail) = text.split_once("BAD").unwrap_or((&text, ""));
            b.extend_from_slice(head.as_bytes());
            b.extend_from_slice(bad);
            b.extend_from_slice(tail.as_bytes());
            ("a request with bytes that are not UTF-8 in a string".into(), Payload::Bytes(line(b)), either(id), None)
        }
        4 => {
            let mut b = b"\xef\xbb\xbf".to_vec();
            b.extend_from_slice(&g);
            ("a request after a byte-order mark".into(), Payload::Bytes(line(b)), either(id), None)
        }
        5 => {
            let mut b = g.clone();
            b.extend_from_slice(b"\r\n");
            (
                "a request ended by CRLF".into(),
                Payload::Bytes(b),
                Due::Response { id: id.clone(), want: Want::Any, null_ok: false, also: vec![] },
                None,
            )
        }
        6 => {
            let v = request(rev, id, simple_method(rev), Some(json!({"fuzz": "HUGE"})));
            let text = v.to_string().replace("HUGE", &"x".repeat(HUGE - 200));
            (format!("a request {} MiB long", HUGE / (1024 * 1024)), Payload::Bytes(line(text.into_bytes())), either(id), None)
        }
        7 => {
            let id2 = json!(id.as_i64().unwrap_or(0) + 5_000);
            let mut b = g.clone();
            b.extend_from_slice(&good(rev, &id2));
            (
                "two requests on one line".into(),
                Payload::Bytes(line(b)),
                Due::Unreadable { want: Want::Error(PARSE_ERROR), also: vec![id.clone(), id2] },
                None,
            )
        }
        _ => {
            let mut b = b"\n\n \r\n\t\n".to_vec();
            b.extend_from_slice(&line(g));
            (
                "blank lines, then a request".into(),
                Payload::Bytes(b),
                Due::Response { id: id.clone(), want: Want::Any, null_ok: false, also: vec![] },
                None,
            )
        }
    }
}

fn shape(rev: Revision, id: &Value) -> HttpShape {
    HttpShape { method: "POST", body: good(rev, id), ..Default::default() }
}

fn refusal() -> Due {
    Due::Refusal { close_ok: false, served_ok: false }
}

pub fn http(tpl: usize, rng: &mut Rng, id: &Value, rev: Revision) -> Made {
    let mut s = shape(rev, id);
    let what: String = match tpl {
        0 => {
            let ct = *rng.pick(&["text/plain", "application/x-www-form-urlencoded", "application/jsonx", "multipart/form-data"]);
            s.set.push(("Content-Type".into(), ct.as_bytes().to_vec()));
            format!("a request with Content-Type {ct}")
        }
        1 => {
            s.drop.push("content-type");
            "a request without Content-Type".into()
        }
        2 => {
            s.drop.push("accept");
            "a request without Accept".into()
        }
        3 => {
            s.body.clear();
            return ("an empty body".into(), Payload::Http(s), refusal(), None);
        }
        4 => {
            let cut = 1 + rng.below(s.body.len() as u64 - 2) as usize;
            s.body.truncate(cut);
            return (format!("a body cut after {cut} bytes (invalid JSON)"), Payload::Http(s), refusal(), None);
        }
        5 => {
            let mb = 4 + rng.below(5) as usize;
            let v = request(rev, id, simple_method(rev), Some(json!({"fuzz": "HUGE"})));
            s.body = v.to_string().replace("HUGE", &"x".repeat(mb * 1024 * 1024)).into_bytes();
            // Served, refused (413) or the connection closed: all fine; a
            // 5xx, a crash or a hang is not.
            return (format!("a {mb} MiB body"), Payload::Http(s), Due::Refusal { close_ok: true, served_ok: true }, None);
        }
        6 => {
            // Not OPTIONS: a CORS preflight is rightly answered 204.
            s.method = *rng.pick(&["PUT", "PATCH", "FUZZ"]);
            return (format!("a request with method {}", s.method), Payload::Http(s), refusal(), None);
        }
        _ => {
            s.chunked = true;
            // Sizes no reader can take (not a huge one: a server rightly
            // waits for the bytes a huge size promises).
            let bad = *rng.pick(&["zz\r\n{}\r\n0\r\n\r\n", "-5\r\nhello\r\n0\r\n\r\n", "0x2\r\n{}\r\n0\r\n\r\n", "3\r\n{}x\r\nq\r\n"]);
            s.body = bad.as_bytes().to_vec();
            return (
                "a chunked body with a bad chunk size".into(),
                Payload::Http(s),
                Due::Refusal { close_ok: true, served_ok: false },
                None,
            );
        }
    };
    // A well-formed request whose headers break a rule: refused, or served.
    (what, Payload::Http(s), Due::Response { id: id.clone(), want: Want::Any, null_ok: false, also: vec![] }, None)
}

pub fn headers(tpl: usize, rng: &mut Rng, id: &Value, rev: Revision) -> Made {
    let mut s = shape(rev, id);
    let name = if rev.is_stateless() { "Mcp-Method" } else { "MCP-Protocol-Version" };
    let what = match tpl {
        0 => {
            let c = 1 + rng.below(31) as u8;
            // Not tab, LF or CR: those would change the request's lines.
            let c = if matches!(c, b'\t' | b'\n' | b'\r') { 1 } else { c };
            let mut v = rev.as_str().as_bytes().to_vec();
            v.insert(4, c);
            s.set.push(("MCP-Protocol-Version".into(), v));
            format!("MCP-Protocol-Version with the control character 0x{c:02x}")
        }
        1 => {
            s.set.push((name.into(), rng.word(64 * 1024).into_bytes()));
            return (format!("{name} 64 KiB long"), Payload::Http(s), Due::Refusal { close_ok: true, served_ok: false }, None);
        }
        2 => {
            let n = 50 + rng.below(100) as usize;
            for _ in 0..n {
                s.add.push((name.into(), simple_method(rev).as_bytes().to_vec()));
            }
            format!("{name} {n} times more")
        }
        3 => {
            if rev.is_stateless() {
                s.set.push(("Mcp-Method".into(), simple_method(rev).to_ascii_uppercase().into_bytes()));
                "Mcp-Method in upper case (the body's method is lower case)".into()
            } else {
                s.set.push(("Mcp-Session-Id".into(), format!("fuzz-{}", rng.word(12)).into_bytes()));
                "an Mcp-Session-Id the server never issued".into()
            }
        }
        _ => {
            s.set.push(("MCP-Protocol-Version".into(), b"2025\xff\xfe-11".to_vec()));
            return (
                "MCP-Protocol-Version with bytes that are not ASCII".into(),
                Payload::Http(s),
                Due::Refusal { close_ok: true, served_ok: false },
                None,
            );
        }
    };
    (what, Payload::Http(s), refusal(), None)
}
