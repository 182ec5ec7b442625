//! A class's outcome as two cases (the stated rules, the conventions), each
//! failing input as evidence with its reproducers: `mcpcert fuzz … --case
//! CLASS/INDEX`, and the exact bytes as a `printf | CMD` or `printf | nc`
//! line.

use super::inputs::{Class, Input, Payload};
use super::oracle::Finding;
use super::send::{Answer, Peer};
use super::{ClassRun, Failed, FuzzOptions};
use crate::record::{Basis, CaseResult, Exchange, Keyword, Level, Transport, Verdict, clip};
use crate::wire::Revision;

/// Failing inputs shown in a case's transcript.
const SHOWN: usize = 20;
/// A reproducer longer than this gives the `--case` line only.
const MAX_SHELL: usize = 8 * 1024;

fn case(class: Class, rev: Revision, t: Transport, conventions: bool) -> CaseResult {
    let c = class.as_str();
    let (id, title, level, basis) = if conventions {
        (
            format!("{rev}/fuzz/{c}/conventions"),
            format!("fuzz, {c}: the conventional answer (JSON-RPC's error code, a 4xx not a 5xx, the same answers after the class)"),
            Level::Policy,
            Basis {
                quote: "JSON-RPC 2.0 names the codes -32700 (parse error), -32600 (invalid request), -32601 (method not found) and -32602 (invalid params); the transport leaves the HTTP status for malformed input unspecified.".into(),
                source: format!("{rev}/basic/index#messages"),
                keyword: Keyword::Silent,
            },
        )
    } else {
        (
            format!("{rev}/fuzz/{c}"),
            format!("fuzz, {c}: every request answered with its own id, no notification answered, every frame JSON-RPC, the server alive"),
            Level::Must,
            Basis {
                quote: "All messages between MCP clients and servers **MUST** follow the … [JSON-RPC 2.0](https://www.jsonrpc.org/specification) specification.".into(),
                source: format!("{rev}/basic/index#messages"),
                keyword: Keyword::Must,
            },
        )
    };
    let (title, basis) = if class == Class::Arguments && !conventions {
        (
            "fuzz, arguments: a tool call whose arguments the inputSchema forbids gets an error or isError: true, never plain success; every call answered".into(),
            Basis { quote: "Servers **MUST**: - Validate all tool inputs".into(), source: format!("{rev}/server/tools#security-considerations"), keyword: Keyword::Must },
        )
    } else {
        (title, basis)
    };
    CaseResult {
        id,
        title,
        level,
        revision: rev,
        spec: format!("https://modelcontextprotocol.io/specification/{rev}/basic#messages"),
        basis,
        transport: t,
        verdict: Verdict::Pass,
        message: String::new(),
        reproducer: None,
        duration_ms: 0,
        stderr_tail: None,
        baseline: None,
        answers: Vec::new(),
        beyond: Vec::new(),
        not_scored: false,
        wave: None,
        transcript: Vec::new(),
    }
}

/// The descriptor-safety case (POLICY: the spec is silent).
pub fn descriptors(
    rev: Revision,
    t: Transport,
    judged: Result<Vec<crate::checks::judge::safety::Concern>, String>,
    ms: u64,
    rerun: &str,
) -> CaseResult {
    let mut r = case(Class::Descriptors, rev, t, true);
    r.id = format!("{rev}/fuzz/descriptors");
    r.title = "fuzz, descriptors: no hidden-instruction markers, invisible or bidi characters, names alike but for case or look-alike letters, or descriptions that change between listings".into();
    r.basis.quote = "The spec says nothing of what a descriptor may hold; what a person or a model reads in it should be what it does (tool poisoning, look-alike names).".into();
    r.duration_ms = ms;
    match judged {
        Err(why) => {
            r.verdict = Verdict::Error;
            r.message = format!("the tools could not be listed whole: {why}");
        }
        Ok(c) if c.is_empty() => r.message = "two listings of the tools: nothing to warn of".into(),
        Ok(c) => {
            r.verdict = Verdict::Warn;
            let lines: Vec<String> = c.iter().map(|x| format!("tool `{}`: {}", x.tool, x.what)).collect();
            r.message = format!("{} concern(s) in the tools' descriptors\n{}", c.len(), lines.join("\n"));
            r.reproducer = Some(format!("{rerun} --class descriptors"));
        }
    }
    r
}

pub fn not_applicable(class: Class, rev: Revision, t: Transport, why: &str) -> Vec<CaseResult> {
    [false, true]
        .into_iter()
        .map(|conv| {
            let mut r = case(class, rev, t, conv);
            r.verdict = Verdict::NotApplicable;
            r.message = why.to_string();
            r
        })
        .collect()
}

pub fn cases(class: Class, rev: Revision, t: Transport, cr: &ClassRun, o: &FuzzOptions, peer: &Peer) -> Vec<CaseResult> {
    [false, true].into_iter().map(|conv| one(class, rev, t, cr, o, peer, conv)).collect()
}

fn one(class: Class, rev: Revision, t: Transport, cr: &ClassRun, o: &FuzzOptions, peer: &Peer, conventions: bool) -> CaseResult {
    let mut r = case(class, rev, t, conventions);
    r.duration_ms = cr.ms;
    let mine = |fs: &[Finding]| fs.iter().filter(|f| f.rule.stated() != conventions).cloned().collect::<Vec<_>>();
    let failed: Vec<(&Failed, Vec<Finding>)> = cr.failed.iter().map(|f| (f, mine(&f.findings))).filter(|(_, fs)| !fs.is_empty()).collect();
    let after = mine(&cr.after);
    let sent = format!("{} of {} inputs sent (seed {})", cr.sent, cr.planned, o.seed);
    if failed.is_empty() && after.is_empty() {
        match &cr.cut {
            Some(why) => {
                r.verdict = Verdict::Error;
                r.message = format!("{why}: {sent}; none broke a rule, but the class was not sent whole, so it cannot pass");
            }
            None => r.message = format!("{sent}; every answer was as the rules call for"),
        }
        if let Some(a) = &cr.about {
            r.message.push('\n');
            r.message.push_str(a);
        }
        return r;
    }
    r.verdict = if conventions { Verdict::Warn } else { Verdict::Fail };
    let mut lines =
        vec![format!("{} of {} inputs sent broke {}", failed.len(), cr.sent, if conventions { "a convention" } else { "a rule" })];
    for (f, fs) in failed.iter().take(5) {
        lines.push(format!(
            "{}/{} ({}): {}",
            class.as_str(),
            f.input.index,
            f.input.what,
            fs.iter().map(|x| format!("{}: {}", x.rule.as_str(), x.detail)).collect::<Vec<_>>().join("; ")
        ));
    }
    if failed.len() > 5 {
        lines.push(format!("and {} more (in the transcript)", failed.len() - 5));
    }
    for a in &after {
        lines.push(format!("{}: {}", a.rule.as_str(), a.detail));
    }
    if let Some(why) = &cr.cut {
        lines.push(format!("({why}; {sent})"));
    }
    if let Some(a) = &cr.about {
        lines.push(a.clone());
    }
    r.message = lines.join("\n");
    if let Some((f, _)) = failed.first() {
        let (input, _) = f.shrunk.as_ref().map(|(i, a)| (i, a)).unwrap_or((&f.input, &f.answer));
        r.reproducer = Some(reproducer(o, peer, input, f.shrunk.is_some()));
        r.stderr_tail = failed.iter().map(|(f, _)| f.answer.stderr.trim()).find(|s| !s.is_empty()).map(|s| tail(s, 20));
    }
    for (f, fs) in failed.iter().take(SHOWN) {
        r.transcript.push(exchange(t, &f.input, &f.answer, fs, "input"));
        if let Some((i, a)) = &f.shrunk {
            r.transcript.push(exchange(t, i, a, fs, "shrunk"));
        }
    }
    r
}

fn tail(s: &str, n: usize) -> String {
    let lines: Vec<&str> = s.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

fn sent_text(input: &Input) -> String {
    let b: &[u8] = match &input.payload {
        Payload::Message(b) | Payload::Bytes(b) => b,
        Payload::Http(s) => &s.body,
    };
    clip(&String::from_utf8_lossy(b), 2000)
}

fn exchange(t: Transport, input: &Input, a: &Answer, fs: &[Finding], kind: &str) -> Exchange {
    Exchange {
        label: format!("{kind} {}/{}: {}", input.class.as_str(), input.index, input.what),
        transport: Some(t),
        http_method: matches!(t, Transport::Http).then(|| match &input.payload {
            Payload::Http(s) => s.method.to_string(),
            _ => "POST".into(),
        }),
        sent: Some(sent_text(input)),
        status: a.status,
        frames: a.frames.iter().map(|f| f.lite(2000)).collect(),
        stderr: clip(a.stderr.trim(), 2000),
        note: Some(fs.iter().map(|x| format!("{}: {}", x.rule.as_str(), x.detail)).collect::<Vec<_>>().join("\n")),
        ms: a.ms,
        ..Default::default()
    }
}

/// The `--case` line, then the bytes as a shell line.
fn reproducer(o: &FuzzOptions, peer: &Peer, input: &Input, shrunk: bool) -> String {
    let mut out = format!("{} --case {}/{}", o.rerun, input.class.as_str(), input.index);
    if shrunk {
        out.push_str("\n# shrunk (the --case line sends the input as generated; the line below sends the shrunk one):");
    }
    if let Some(line) = bytes_line(peer, input).filter(|l| l.len() <= MAX_SHELL) {
        out.push('\n');
        out.push_str(&line);
    } else {
        out.push_str("\n# (the input's bytes are too many to print: the --case line sends them again)");
    }
    out
}

fn bytes_line(peer: &Peer, input: &Input) -> Option<String> {
    let target = peer.target_shown();
    match (&input.payload, peer.transport()) {
        (Payload::Message(b) | Payload::Bytes(b), Transport::Stdio) => {
            let mut b = b.clone();
            if matches!(input.payload, Payload::Message(_)) {
                b.push(b'\n');
            }
            let pre: String = peer.preamble.iter().map(|l| format!("printf '%s\\n' '{}'; ", l.replace('\'', "'\\''"))).collect();
            Some(format!("{{ {pre}printf '{}'; sleep 2; }} | {target}", printf_escape(&b)))
        }
        (Payload::Message(b), Transport::Http) => {
            let s = super::inputs::HttpShape { method: "POST", body: b.clone(), ..Default::default() };
            raw_line(peer, &s)
        }
        (Payload::Http(s), Transport::Http) => raw_line(peer, s),
        _ => None,
    }
}

fn raw_line(peer: &Peer, s: &super::inputs::HttpShape) -> Option<String> {
    let bytes = peer.http_bytes(s)?;
    let (host, port) = peer.host_port()?;
    let session =
        peer.session_id().map(|_| " # (its Mcp-Session-Id is the session mcpcert opened: run the --case line for a new one)").unwrap_or("");
    Some(format!("printf '{}' | nc -q 5 {host} {port}{session}", printf_escape(&bytes)))
}

/// Bytes as a printf format inside single quotes: printable ASCII as is
/// (`%` and `\` doubled, `'` closed and reopened), the rest as octal.
pub fn printf_escape(b: &[u8]) -> String {
    let mut out = String::with_capacity(b.len());
    for &c in b {
        match c {
            b'%' => out.push_str("%%"),
            b'\\' => out.push_str("\\\\"),
            b'\'' => out.push_str("'\\''"),
            b'\n' => out.push_str("\\n"),
            b'\r' => out.push_str("\\r"),
            0x20..=0x7e => out.push(c as char),
            _ => out.push_str(&format!("\\{c:03o}")),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::printf_escape;

    #[test]
    fn printf_lines_keep_every_byte() {
        assert_eq!(printf_escape(b"a%b\\c'd\n\x00\xff"), "a%%b\\\\c'\\''d\\n\\000\\377");
    }
}
