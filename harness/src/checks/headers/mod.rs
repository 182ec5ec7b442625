//! Streamable HTTP header parity (2026-07-28): `MCP-Protocol-Version`,
//! `Mcp-Method`, `Mcp-Name` and `Mcp-Param-*` must match the body. Each
//! probe changes one thing about an otherwise correct request: a server
//! must reject every mismatch (HTTP 400 and JSON-RPC -32020, the request's
//! id echoed) and accept every correctly encoded match. Also the Origin
//! rule (both revisions) and the 202 for an accepted notification.

mod rebinding;
mod targets;

pub use rebinding::DnsRebinding;

use super::{Check, Cx, Need, Outcome};
use crate::record::Exchange;
use crate::record::Transport;
use crate::session::{Msg, SessionError};
use crate::wire::{self, HeaderEdit, MetaMode, headerval};
use base64::Engine as _;
use serde::Deserialize;
use serde_json::Value;
use targets::Target;

/// The header rule a `header_probe` case judges.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Header {
    Version,
    Method,
    Name,
    Param,
    Origin,
    Notification,
}

/// How a probe changes the correct request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ProbeKind {
    Missing,
    Mismatch,
    ValueCase,
    NameCase,
    Duplicate,
    Whitespace,
    Base64,
    BadBase64,
    UpperSentinel,
    Null,
    Absent,
    Integer,
    /// Hard string values (non-ASCII, spaces, a tab, empty, sentinel-like)
    /// in the encoding a client must use: each call is served.
    RoundTrip,
}

impl Header {
    /// The probes that apply to this header (none: it takes no `probe`).
    fn probes(self) -> &'static [ProbeKind] {
        use ProbeKind::*;
        match self {
            Header::Version => &[Missing, Mismatch, NameCase, Duplicate, Whitespace],
            Header::Method => &[Missing, Mismatch, ValueCase, NameCase, Duplicate, Whitespace],
            Header::Name => &[Missing, Mismatch, ValueCase, NameCase, Duplicate, Whitespace, Base64, BadBase64, UpperSentinel],
            Header::Param => &[
                Missing,
                Mismatch,
                ValueCase,
                NameCase,
                Duplicate,
                Whitespace,
                Base64,
                BadBase64,
                UpperSentinel,
                Null,
                Absent,
                Integer,
                RoundTrip,
            ],
            Header::Origin | Header::Notification => &[],
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct HeaderArgs {
    header: Header,
    #[serde(default)]
    probe: Option<ProbeKind>,
}

/// One header rule, probed (`header`, and `probe` for the four mirrored headers).
#[derive(Debug, Deserialize)]
#[serde(try_from = "HeaderArgs")]
pub struct HeaderProbe {
    header: Header,
    probe: Option<ProbeKind>,
}

impl TryFrom<HeaderArgs> for HeaderProbe {
    type Error = String;
    fn try_from(a: HeaderArgs) -> Result<HeaderProbe, String> {
        let allowed = a.header.probes();
        match a.probe {
            None if allowed.is_empty() => {}
            None => return Err(format!("header {:?} needs a `probe`, one of {allowed:?}", a.header)),
            Some(p) if allowed.contains(&p) => {}
            Some(p) if allowed.is_empty() => return Err(format!("header {:?} takes no `probe` (got {p:?})", a.header)),
            Some(p) => return Err(format!("probe {p:?} does not apply to header {:?}; one of {allowed:?}", a.header)),
        }
        Ok(HeaderProbe { header: a.header, probe: a.probe })
    }
}

impl Check for HeaderProbe {
    const NAME: &'static str = "header_probe";
    const ABOUT: &'static str =
        "HTTP header rules: a request changed one way (`header`, `probe`) is rejected with 400 and -32020, or served";

    fn calls_tools(&self) -> bool {
        // Mcp-Name and Mcp-Param probes target a tools/call (the round trip
        // once per hard value): the probes that must be served run the
        // tool, and picking it calls every tool the policy allows.
        self.probe == Some(ProbeKind::RoundTrip) || matches!(self.header, Header::Name | Header::Param)
    }

    fn needs(&self) -> Vec<Need> {
        let mut n = vec![Need::Transport(Transport::Http)];
        if self.header == Header::Origin {
            n.push(Need::AllowedOrigin);
        }
        if self.probe == Some(ProbeKind::NameCase) {
            n.push(Need::PlainHttp);
        }
        n
    }

    async fn run(&self, cx: &Cx<'_>) -> Outcome {
        let mut out = match (self.header, self.probe) {
            (Header::Version | Header::Method, Some(p)) => probe_standard(cx, self.header, p).await,
            (Header::Name, Some(p)) => targets::probe_name(cx, p).await,
            (Header::Param, Some(p)) => targets::probe_param(cx, p).await,
            (Header::Origin, _) => targets::probe_origin(cx).await,
            (Header::Notification, _) => targets::probe_notification(cx).await,
            (_, None) => Outcome::error("a header probe without a probe kind (rejected at load)"),
        };
        let case_sensitive = cx.session.info(cx.rev).and_then(|i| i.header_names_case_sensitive) == Some(true);
        if self.probe == Some(ProbeKind::NameCase) && case_sensitive && !out.failures.is_empty() {
            out.failures.insert(
                0,
                "the server served mcpcert only when the MCP header names were spelt as the spec does (MCP-Protocol-Version, Mcp-Method, Mcp-Name, Mcp-Param-…): its revision probe in lower case (as reqwest and every HTTP/2 client sends names) was refused, so mcpcert carried on with that spelling. HTTP field names are case-insensitive (RFC 9110 §5.1); the probes below show which spellings the server refuses".into(),
            );
        }
        out
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Want {
    Reject,
    /// A rejection where -32022 (unsupported version) may win over -32020.
    RejectVersion,
    Accept,
    /// The header must not be required: anything but a header rejection.
    NotRequired,
}

const OTHER: &str = "mcpcert-other-value";

/// One probe: a change to the headers (and maybe the arguments) of the
/// target request, and what the server must do with it.
struct Probe {
    label: String,
    /// `_meta` protocol version of the body, when not the suite's.
    body_version: Option<&'static str>,
    edits: Vec<HeaderEdit>,
    /// Header names go out in their exact letter case.
    exact: bool,
    want: Want,
    /// tools/call arguments for this probe instead of the target's.
    args: Option<Value>,
}

fn probe_of(label: String, edits: Vec<HeaderEdit>, want: Want) -> Probe {
    Probe { label, body_version: None, edits, exact: false, want, args: None }
}

fn b64(s: &str) -> String {
    base64::engine::general_purpose::STANDARD.encode(s.as_bytes())
}

fn flip_case(s: &str) -> String {
    s.chars().map(|c| if c.is_ascii_lowercase() { c.to_ascii_uppercase() } else { c.to_ascii_lowercase() }).collect()
}

/// `Mcp-Protocol-Version` → `mCP-pROTOCOL-vERSION`-style mixed case.
fn mixed_case(s: &str) -> String {
    s.chars().enumerate().map(|(i, c)| if i % 2 == 0 { c.to_ascii_lowercase() } else { c.to_ascii_uppercase() }).collect()
}

/// Send the target's method and params with the standard headers (plus
/// `Mcp-Param-*` for tools/call), changed by `edits`: on the main
/// connection, or (`isolated`: a probe that must be rejected, a negative
/// probe) on a connection of its own. The exchanges, the last the probe's
/// (an isolated 2025-11-25 probe's handshake comes first).
async fn probe_send(
    cx: &Cx<'_>,
    label: &str,
    t: &Target,
    body_version: Option<&str>,
    edits: Vec<HeaderEdit>,
    exact: bool,
    isolated: bool,
) -> Result<Vec<Exchange>, SessionError> {
    prepare(cx, label, t, body_version, edits, exact, isolated).send(cx).await
}

/// A probe's request, made (and its id taken) before anything is sent, so
/// that probes sent together keep the ids a serial run gives them.
struct Prepared {
    label: String,
    body: Value,
    edits: Vec<HeaderEdit>,
    exact: bool,
    isolated: bool,
    read_only: bool,
}

fn prepare(
    cx: &Cx<'_>,
    label: &str,
    t: &Target,
    body_version: Option<&str>,
    edits: Vec<HeaderEdit>,
    exact: bool,
    isolated: bool,
) -> Prepared {
    let body = match body_version {
        None => cx.request(&t.method, Some(t.params.clone())),
        // A probe whose `_meta` names another version than the header.
        Some(v) => wire::request(&cx.session.next_id(), &t.method, wire::modern_params(Some(&t.params), MetaMode::Full, v)),
    };
    let mut all: Vec<HeaderEdit> = Vec::new();
    if let (Some(schema), Some(args)) = (&t.schema, t.params.get("arguments")) {
        all.extend(super::judge::args::param_headers(schema, args).into_iter().map(|(k, v)| HeaderEdit::Set(k, v)));
    }
    all.extend(edits);
    Prepared { label: label.to_string(), body, edits: all, exact, isolated, read_only: t.read_only }
}

impl Prepared {
    async fn send(&self, cx: &Cx<'_>) -> Result<Vec<Exchange>, SessionError> {
        let msg = Msg::new(cx.rev, &self.label, &self.body).edits(&self.edits).exact_names(self.exact).repeatable(self.read_only);
        if self.isolated {
            return cx.isolated(&[msg]).await;
        }
        Ok(vec![cx.session.on_main(&msg, cx.case).await?])
    }
}

/// Judge one probe; a failure line names the target and the probe.
fn judge_probe(ex: &Exchange, want: Want, what: &str) -> Option<String> {
    let status = ex.status;
    let code = ex.error_code();
    let header_rejection = status == Some(400) || code == Some(-32020);
    match want {
        Want::Reject | Want::RejectVersion => {
            let mut wrong = Vec::new();
            if status != Some(400) {
                wrong.push(format!("HTTP status {}", status.map(|s| s.to_string()).unwrap_or_else(|| "none".into())));
            }
            let codes_ok = code == Some(-32020) || (want == Want::RejectVersion && code == Some(-32022));
            if !codes_ok {
                wrong.push(match code {
                    Some(c) => format!("JSON-RPC error {c}"),
                    None if ex.result().is_some() => "a result (the request was served)".into(),
                    None => "no JSON-RPC error".into(),
                });
            }
            let id = ex.response.as_ref().and_then(|r| r.get("id"));
            let id_wrong = code.is_some() && id != ex.request_id.as_ref();
            if wrong.is_empty() && id_wrong {
                // Only the id is wrong: said as every case says it.
                return Some(format!("{what}: {}", wire::id_mismatch(ex.request_id.as_ref(), id)));
            }
            if id_wrong {
                wrong.push(format!("an error whose id is not the request's ({})", wire::id_mismatch(ex.request_id.as_ref(), id)));
            }
            if wrong.is_empty() {
                return None;
            }
            let codes = if want == Want::RejectVersion {
                "-32020 (HeaderMismatch) or -32022 (UnsupportedProtocolVersion)"
            } else {
                "-32020 (HeaderMismatch)"
            };
            Some(format!(
                "{what}: expected HTTP 400 with JSON-RPC error {codes} and the request's id; got {} ({})",
                wrong.join(", "),
                ex.summary()
            ))
        }
        Want::Accept => match ex.result() {
            Some(_) => None,
            None => Some(format!("{what}: expected the request to be served (its headers match the body); got {}", ex.summary())),
        },
        Want::NotRequired => {
            if header_rejection && code.is_none_or(|c| c == -32020) {
                Some(format!("{what}: the server must not require the header here; got {}", ex.summary()))
            } else {
                None
            }
        }
    }
}

/// Run the probes of one case; an unusable baseline is an error.
async fn run_probes(cx: &Cx<'_>, t: &Target, probes: Vec<Probe>, out: &mut Outcome) {
    // The baseline of a target is sent once per revision, by the first
    // case that probes it; every case shows that one exchange.
    if t.callable {
        let key = format!("{} {}", t.method, t.params);
        let label = format!("{}: baseline with correct headers", t.what);
        match cx
            .facts
            .baseline(cx, &key, || async {
                probe_send(&cx.shared(crate::checks::facts::BASELINE), &label, t, None, vec![], false, false)
                    .await
                    .map(|mut e| e.pop().unwrap_or_default())
                    .map_err(|e| e.to_string())
            })
            .await
        {
            Ok(mut ex) => {
                ex.note = Some("the baseline, sent once for every header case that probes this request".into());
                let unusable = ex.error.is_some() || ex.result().is_none();
                if unusable {
                    out.set_error(format!(
                        "{} with correct headers was not served ({}), so the probes cannot be judged",
                        t.what,
                        ex.summary()
                    ));
                }
                out.exchanges.push(ex);
                if unusable {
                    return;
                }
            }
            Err(e) => {
                out.set_error(e);
                return;
            }
        }
    }
    // Each probe stands alone: all are made first (ids in order), then
    // sent several at a time (within -j) and judged in order.
    let mut made = Vec::new();
    for p in probes {
        if matches!(p.want, Want::Accept | Want::NotRequired) && !t.callable {
            continue;
        }
        let what = format!("{} {}", t.what, p.label);
        let mut pt = t.clone();
        if let Some(a) = p.args {
            pt.params["arguments"] = a;
        }
        let rejected = matches!(p.want, Want::Reject | Want::RejectVersion);
        made.push((p.want, prepare(cx, &what, &pt, p.body_version, p.edits, p.exact, rejected)));
    }
    use futures_util::StreamExt;
    let sends: Vec<_> = made.iter().map(|(_, m)| m.send(cx)).collect();
    let mut sent = futures_util::stream::iter(sends).buffered(8);
    for (want, m) in &made {
        let Some(r) = sent.next().await else { break };
        match r {
            Ok(mut exs) => {
                let ex = exs.pop().unwrap_or_default();
                out.exchanges.extend(exs);
                if let Some(e) = &ex.error {
                    out.set_error(format!("{}: {e}", m.label));
                } else if let Some(f) = judge_probe(&ex, *want, &m.label) {
                    out.fail(f);
                }
                out.exchanges.push(ex);
            }
            Err(e) => {
                out.set_error(e.to_string());
                return;
            }
        }
    }
}

/// The probes of one header rule for a header whose correct value is `v`.
fn probes_for(header: &str, v: &str, kind: ProbeKind, other: &str) -> Vec<Probe> {
    let set = |val: String| vec![HeaderEdit::Set(header.to_string(), val)];
    match kind {
        ProbeKind::Missing => vec![probe_of(format!("without {header}"), vec![HeaderEdit::Remove(header.into())], Want::Reject)],
        ProbeKind::Mismatch => vec![probe_of(format!("with {header} naming something else"), set(other.into()), Want::Reject)],
        ProbeKind::ValueCase => vec![probe_of(format!("with {header} differing only in letter case"), set(flip_case(v)), Want::Reject)],
        ProbeKind::NameCase => [header.to_ascii_lowercase(), header.to_ascii_uppercase(), mixed_case(header)]
            .into_iter()
            .map(|n| Probe {
                exact: true,
                ..probe_of(
                    format!("with the header name written `{n}`"),
                    vec![HeaderEdit::Remove(header.into()), HeaderEdit::Set(n, v.into())],
                    Want::Accept,
                )
            })
            .collect(),
        ProbeKind::Duplicate => vec![probe_of(
            format!("with {header} twice, the second naming something else"),
            vec![HeaderEdit::Set(header.into(), v.into()), HeaderEdit::Add(header.into(), other.into())],
            Want::Reject,
        )],
        ProbeKind::Whitespace => {
            vec![probe_of(format!("with spaces around the {header} value (HTTP strips them)"), set(format!("  {v}  ")), Want::Accept)]
        }
        ProbeKind::Base64 => {
            vec![probe_of(format!("with {header} in the base64 sentinel form"), set(format!("=?base64?{}?=", b64(v))), Want::Accept)]
        }
        ProbeKind::BadBase64 => vec![probe_of(
            format!("with {header} holding malformed base64 inside the sentinel"),
            set("=?base64?not*valid*base64?=".into()),
            Want::Reject,
        )],
        ProbeKind::UpperSentinel => vec![probe_of(
            format!("with {header} as =?BASE64?…?= (upper case: a literal, not the sentinel)"),
            set(format!("=?BASE64?{}?=", b64(v))),
            Want::Reject,
        )],
        ProbeKind::Null | ProbeKind::Absent | ProbeKind::Integer | ProbeKind::RoundTrip => vec![],
    }
}

/// `MCP-Protocol-Version` and `Mcp-Method`, probed on a list the server
/// offers (else server/discover).
async fn probe_standard(cx: &Cx<'_>, header: Header, probe: ProbeKind) -> Outcome {
    let mut out = Outcome::default();
    let t = targets::standard_target(cx);
    let (name, value, other) = if header == Header::Version {
        ("MCP-Protocol-Version", wire::MODERN.to_string(), "2025-06-18".to_string())
    } else {
        let other = if t.method == "prompts/list" { "tools/list" } else { "prompts/list" };
        ("Mcp-Method", t.method.clone(), other.to_string())
    };
    let mut probes = probes_for(name, &value, probe, &other);
    if header == Header::Version && probe == ProbeKind::Duplicate {
        for p in probes.iter_mut() {
            p.want = Want::RejectVersion;
        }
    }
    if header == Header::Version && probe == ProbeKind::Mismatch {
        // A supported header over a body naming another version. The body's
        // version may be one the server does not serve, and the spec sets no
        // order between the two checks: -32022 is a rightful answer too.
        probes = vec![Probe {
            body_version: Some("2025-06-18"),
            ..probe_of(
                "with MCP-Protocol-Version 2026-07-28 over a body whose _meta names 2025-06-18".into(),
                vec![HeaderEdit::Set(name.into(), wire::MODERN.into())],
                Want::RejectVersion,
            )
        }];
    }
    run_probes(cx, &t, probes, &mut out).await;
    out
}

/// The value of a header carrying `s`, as a conforming client encodes it.
fn encoded(s: &str) -> String {
    headerval::encode_str(s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn cases() {
        assert_eq!(flip_case("tools/list"), "TOOLS/LIST");
        assert_eq!(mixed_case("Mcp-Method"), "mCp-mEtHoD");
    }

    #[test]
    fn probe_kinds_are_checked_per_header() {
        let ok = |h: &str, p: Option<&str>| {
            let mut v = json!({"header": h});
            if let Some(p) = p {
                v["probe"] = json!(p);
            }
            serde_json::from_value::<HeaderProbe>(v).is_ok()
        };
        assert!(ok("version", Some("missing")));
        assert!(!ok("version", Some("base64")));
        assert!(ok("param", Some("integer")));
        assert!(!ok("name", Some("integer")));
        assert!(ok("origin", None));
        assert!(!ok("origin", Some("missing")));
        assert!(!ok("method", None));
    }
}
