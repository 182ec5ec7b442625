//! The report page for people: one self-contained HTML file (no network,
//! no external files) with a header that says what was checked and how it
//! went, failures first, an index, a filter and the evidence of each case.

use super::{RunReport, baseline_word, drafts, esc, esc_text_into};
use crate::record::{BaselineOutcome, CaseResult, Exchange, Verdict};
use std::fmt::Write as _;

/// The groups of the page, in the order a reader needs them.
const GROUPS: [(Verdict, &str, &str); 5] = [
    (Verdict::Fail, "fail", "Failures"),
    (Verdict::Error, "error", "Errors"),
    (Verdict::Warn, "warn", "Warnings"),
    (Verdict::Pass, "pass", "Passes"),
    (Verdict::NotApplicable, "na", "Not applicable"),
];

pub(crate) const STYLE: &str = include_str!("report.css");

/// The page's script: the filter (by verdict and by text) and the copy
/// buttons. Inline, so the page needs nothing but itself.
const SCRIPT: &str = include_str!("report.js");

/// The class a verdict is drawn with.
pub(crate) fn class(v: Verdict) -> &'static str {
    match v {
        Verdict::NotApplicable => "na",
        v => v.as_str(),
    }
}

/// The anchor of a case on the page.
pub(crate) fn anchor(c: &CaseResult) -> String {
    format!("case-{}", c.id.replace(['/', '@', ' '], "-"))
}

/// A spec reference (`2026-07-28/server/discover#discoverresult (D1, D2)`
/// or a basis source) as a link to the published page, when it names one.
pub(crate) fn spec_link(reference: &str) -> String {
    let (head, tail) = match reference.find(' ') {
        Some(i) => reference.split_at(i),
        None => (reference, ""),
    };
    match spec_url(head) {
        Some(url) => format!("<a href=\"{}\">{}</a>{}", esc(&url), esc(head), esc(tail)),
        None => esc(reference),
    }
}

/// The published page a spec reference's first word names (a revision's
/// page, an extension's file, a SEP), if it names one.
pub fn spec_url(head: &str) -> Option<String> {
    let head = head.split(' ').next().unwrap_or("");
    let (path, frag) = match head.split_once('#') {
        Some((p, f)) => (p, Some(f)),
        None => (head, None),
    };
    let frag_ok = frag.is_none_or(|f| f.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_".contains(&b)));
    if !frag_ok {
        return None;
    }
    let f = frag.map(|f| format!("#{f}")).unwrap_or_default();
    // An extension's file in its repository (`ext-tasks/specification/draft/tasks.md#…`).
    if let Some(rest) = path.strip_prefix("ext-")
        && let Some((repo, file)) = rest.split_once('/')
        && !repo.is_empty()
        && repo.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
        && file.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_/.".contains(&b))
        && !file.contains("..")
    {
        return Some(format!("https://github.com/modelcontextprotocol/ext-{repo}/blob/main/{file}{f}"));
    }
    // A SEP's text (`seps/2640-skills-extension.md#frontmatter`), in the spec's repository.
    if let Some(file) = path.strip_prefix("seps/").filter(|f| !f.is_empty() && !f.contains(".."))
        && file.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b))
    {
        return Some(format!("https://github.com/modelcontextprotocol/modelcontextprotocol/blob/main/seps/{file}{f}"));
    }
    let mut parts = path.splitn(2, '/');
    let (rev, doc) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
    let is_rev = rev.len() == 10 && rev.bytes().enumerate().all(|(i, b)| if i == 4 || i == 7 { b == b'-' } else { b.is_ascii_digit() });
    if !is_rev || doc.is_empty() || !doc.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_/.".contains(&b)) {
        return None;
    }
    Some(if doc.ends_with(".ts") || doc.ends_with(".json") {
        format!("https://github.com/modelcontextprotocol/modelcontextprotocol/blob/main/schema/{rev}/{doc}") // the schema's file
    } else {
        format!("https://modelcontextprotocol.io/specification/{rev}/{doc}{f}")
    })
}

/// Unix milliseconds as `YYYY-MM-DD HH:MM:SS UTC`.
pub(crate) fn utc(ms: u128) -> String {
    let secs = (ms / 1000) as i64;
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let z = days + 719_468; // civil date from days since 1970-01-01 (Howard Hinnant's algorithm)
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02} UTC", rem / 3600, rem % 3600 / 60, rem % 60)
}

/// A duration for people.
pub(crate) fn duration(ms: u64) -> String {
    if ms < 1000 {
        format!("{ms} ms")
    } else if ms < 120_000 {
        format!("{:.1} s", ms as f64 / 1000.0)
    } else {
        format!("{} min {} s", ms / 60_000, ms / 1000 % 60)
    }
}

/// The server's name and version as the run learnt them (from discover or
/// initialize; a served revision's first, else any), if it did.
pub fn server_name(report: &RunReport) -> Option<String> {
    let info = report
        .revisions
        .iter()
        .filter(|r| r.supported)
        .find_map(|r| r.server_info.as_ref())
        .or_else(|| report.revisions.iter().find_map(|r| r.server_info.as_ref()))?;
    named(info)
}

/// `name version` of an Implementation object (its title before its name).
pub fn named(info: &serde_json::Value) -> Option<String> {
    let name = info.get("title").or_else(|| info.get("name")).and_then(|v| v.as_str())?;
    Some(match info.get("version").and_then(|v| v.as_str()) {
        Some(v) => format!("{name} {v}"),
        None => name.to_string(),
    })
}

/// How the server named itself to each probe: `(revision, where, name)`.
pub fn identities(revisions: &[crate::record::RevisionInfo]) -> Vec<(String, &'static str, String)> {
    revisions
        .iter()
        .filter_map(|r| {
            let where_ = if r.revision.is_stateless() { "server/discover" } else { "initialize" };
            r.server_info.as_ref().and_then(named).map(|n| (r.revision.to_string(), where_, n))
        })
        .collect()
}

fn target_text(report: &RunReport) -> String {
    let t = &report.target;
    t.get("command").or_else(|| t.get("url")).and_then(|v| v.as_str()).map(str::to_string).unwrap_or_else(|| t.to_string())
}

/// A single self-contained page for people.
pub fn html(report: &RunReport) -> String {
    let s = &report.summary;
    let server = server_name(report);
    // One buffer, sized up front (most of it is the transcripts): a buffer
    // that grows by doubling copies the page several times over.
    let mut out = String::with_capacity(64 * 1024 + report.cases.iter().map(case_size).sum::<usize>());
    let failed = !report.outcome.passed;
    out.push_str(&format!(
        "<!doctype html><html lang=en><head><meta charset=utf-8><meta name=viewport content=\"width=device-width,initial-scale=1\"><title>mcpcert: {} — {}</title><style>{STYLE}</style></head><body>",
        esc(server.as_deref().unwrap_or("server")),
        if failed { "FAILED" } else { "passed" }
    ));
    out.push_str(&format!(
        "<header id=top><h1>mcpcert report: <span id=server>{}</span></h1><dl class=facts>",
        esc(server.as_deref().unwrap_or("(the server did not name itself)"))
    ));
    let served: Vec<String> = report
        .revisions
        .iter()
        .map(|r| if r.supported { format!("{} (served)", r.revision) } else { format!("{} (not served: {})", r.revision, esc(&r.reason)) })
        .collect();
    let named_as: Vec<String> = identities(&report.revisions).iter().map(|(rev, w, n)| format!("{} (to {w}, {rev})", esc(n))).collect();
    for (k, v) in [
        ("target", format!("<code>{}</code>", esc(&target_text(report)))),
        ("server", if named_as.is_empty() { "the server did not name itself".into() } else { named_as.join("<br>") }),
        ("transport", report.transport.to_string()),
        ("revisions", served.join("<br>")),
        ("requested", esc(&report.revision_requested)),
        ("date", utc(report.started_at_unix_ms)),
        ("duration", duration(report.duration_ms)),
        (
            "mode",
            if report.strict { "--strict (a warning fails the run)".into() } else { "default (a SHOULD not met is a warning)".into() },
        ),
        ("mcpcert", format!("{} · suites <code>{}</code>", esc(report.mcpcert_version), esc(&report.suite_digest))),
    ] {
        out.push_str(&format!("<dt>{k}</dt><dd id=fact-{k}>{v}</dd>"));
    }
    out.push_str("</dl>");
    for n in &report.notices {
        out.push_str(&format!("<p class=\"outcome notice\">notice: {}</p>", esc(n)));
    }
    out.push_str(&format!(
        "<p id=outcome class=\"outcome {}\">{}</p>",
        if failed { "failed" } else { "ok" },
        if failed {
            format!("FAILED: {}", esc(&report.outcome.why.join("; ")))
        } else {
            "passed: no failure counts against this run".into()
        }
    ));
    out.push_str("<div class=counts id=counts>");
    out.push_str(&format!("<span class=chip>{} cases</span>", s.total));
    for (v, cls, _) in GROUPS {
        let n = count(s, v);
        // A count of nothing is said plainly, not in its verdict's colour.
        let tone = if n == 0 { "zero" } else { cls };
        out.push_str(&format!("<a class=chip href=\"#g-{cls}\" data-only={cls}><span class=\"t-{tone}\">{n} {}</span></a>", v.word()));
    }
    out.push_str("</div></header>");

    if !report.load.is_empty() {
        out.push_str("<h2 id=load>Load replay</h2><table><tr><th>revision</th><th>connections</th><th>requests</th><th>answered</th><th>wall</th><th>per second</th><th>p50</th><th>p90</th><th>p99</th><th>max</th></tr>");
        for l in &report.load {
            out.push_str(&format!(
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{} ms</td><td>{} ms</td><td>{} ms</td><td>{} ms</td></tr>",
                l.revision,
                l.connections,
                l.requests,
                l.answered,
                duration(l.wall_ms),
                l.per_second,
                l.p50_ms,
                l.p90_ms,
                l.p99_ms,
                l.max_ms
            ));
        }
        out.push_str("</table>");
    }
    if let Some(p) = &report.target_problem {
        out.push_str(&format!("<p class=t-error>target problem: {}</p>", esc(p)));
    }
    for w in &report.warnings {
        out.push_str(&format!("<p class=t-warn>run warning: {}</p>", esc(w)));
    }
    for c in report.coverage.iter().map(|c| format!("coverage: {}", esc(c))).chain(report.drafts.iter().map(drafts)) {
        out.push_str(&format!("<p class=coverage>{c}</p>"));
    }
    if let Some(b) = &report.baseline {
        out.push_str(&format!(
            "<p id=baseline>baseline <code>{}</code>: {} entries, {} expected failures, {} stale{}</p>",
            esc(&b.file),
            b.entries,
            b.expected_failures,
            b.stale.len(),
            if b.stale.is_empty() {
                String::new()
            } else {
                format!(" (<span class=t-fail>{}</span>: remove them)", esc(&b.stale.join(", ")))
            }
        ));
    }
    if let Some(q) = &report.requirements {
        out.push_str(&format!(
            "<h2 id=requirements>Requirement set {}</h2><p>{} of {} scored scenarios pass ({} apply to this target)</p><table><tr><th>verdict</th><th>scenario</th><th>why</th></tr>",
            esc(&q.revision),
            q.passed,
            q.scored,
            q.applicable
        ));
        for sc in &q.scenarios {
            let scored = if sc.scored {
                String::new()
            } else {
                format!(" <small>(not scored: {})</small>", esc(sc.reason.as_deref().unwrap_or("")))
            };
            let cases: Vec<String> = sc
                .cases
                .iter()
                .filter_map(|id| report.cases.iter().find(|c| &c.id == id))
                .map(|c| format!("<a href=\"#{}\">{}</a>", anchor(c), esc(c.id.rsplit('/').next().unwrap_or(&c.id))))
                .collect();
            // Cases that judge the subject beyond what the scenario
            // requires: shown with it, never counted in its verdict.
            let beyond: Vec<String> = sc
                .beyond
                .iter()
                .filter_map(|b| report.cases.iter().find(|c| c.id == b.id).map(|c| (b, c)))
                .map(|(b, c)| {
                    format!(
                        "<a href=\"#{}\">{}</a> <span class=\"v {}\">{}</span>",
                        anchor(c),
                        esc(c.id.rsplit('/').next().unwrap_or(&c.id)),
                        class(b.verdict),
                        b.verdict.word()
                    )
                })
                .collect();
            let beyond = if beyond.is_empty() {
                String::new()
            } else {
                format!("<br><small>beyond the requirement set: {}</small>", beyond.join(", "))
            };
            out.push_str(&format!(
                "<tr><td><span class=\"v {}\">{}</span>{}</td><td><code>{}</code>{scored}<br><small>{}</small>{beyond}</td><td>{}</td></tr>",
                class(sc.verdict),
                sc.verdict.word(),
                if sc.expected { " (expected)" } else { "" },
                esc(&sc.name),
                cases.join(", "),
                esc(&sc.message)
            ));
        }
        out.push_str("</table>");
    }

    // By group, and within a group the failures that count before the expected ones.
    let grouped: Vec<(Verdict, &str, &str, Vec<&CaseResult>)> = GROUPS
        .iter()
        .map(|&(v, cls, title)| {
            let mut cs: Vec<&CaseResult> = report.cases.iter().filter(|c| c.verdict == v).collect();
            cs.sort_by_key(|c| !c.counts_as_failure(report.strict));
            (v, cls, title, cs)
        })
        .collect();

    if !report.roots.is_empty() {
        out.push_str(&super::roots::html(report));
    }
    out.push_str("<nav id=index><h2>Index</h2>");
    for (_, cls, title, cs) in &grouped {
        if cs.is_empty() {
            continue;
        }
        let items: String = cs.iter().map(|c| format!("<li><a href=\"#{}\">{}</a></li>", anchor(c), esc(&c.id))).collect();
        if matches!(*cls, "pass" | "na") {
            out.push_str(&format!("<details><summary><a href=\"#g-{cls}\">{title}</a> ({})</summary><ol>{items}</ol></details>", cs.len()));
        } else {
            out.push_str(&format!("<p><a href=\"#g-{cls}\">{title}</a> ({})</p><ol>{items}</ol>", cs.len()));
        }
    }
    out.push_str("</nav>");

    out.push_str("<div id=filters role=search><span>show:</span>");
    for (v, cls, _) in GROUPS {
        out.push_str(&format!("<label><input type=checkbox value={cls} checked> <span class=\"t-{cls}\">{}</span></label>", v.word()));
    }
    out.push_str(
        "<input type=search id=q placeholder=\"filter by id, title, message…\" aria-label=\"filter by text\"><span id=shown></span><a href=\"#top\">top</a></div>",
    );

    for (v, cls, title, cs) in &grouped {
        if cs.is_empty() {
            continue;
        }
        if *cls == "na" {
            let _ = write!(
                out,
                "<section class=group id=g-{cls}><details class=fold><summary><h2 style=display:inline>{title} ({})</h2> <span class=meta>each says why it does not apply</span></summary>",
                cs.len()
            );
        } else {
            let _ = write!(out, "<section class=group id=g-{cls}><h2>{title} ({})</h2>", cs.len());
        }
        for c in cs {
            case_html(&mut out, c, *v, &report.roots);
        }
        out.push_str(if *cls == "na" { "</details></section>" } else { "</section>" });
    }
    out.push_str(&format!("<script>{SCRIPT}</script></body></html>"));
    out
}

fn count(s: &super::Summary, v: Verdict) -> usize {
    match v {
        Verdict::Pass => s.pass,
        Verdict::Fail => s.fail,
        Verdict::Warn => s.warn,
        Verdict::NotApplicable => s.na,
        Verdict::Error => s.error,
    }
}

/// One case: what it checks, the verdict and why, and the evidence.
fn case_html(h: &mut String, c: &CaseResult, v: Verdict, roots: &[super::roots::RootCause]) {
    let id = anchor(c);
    let cls = class(v);
    let compact = matches!(v, Verdict::Pass | Verdict::NotApplicable);
    let search = format!("{} {} {} {}", c.id, c.title, c.message, c.spec).to_lowercase();
    let _ = write!(
        h,
        "<article class=\"case {cls}{}\" id=\"{id}\" data-verdict={cls} data-text=\"{}\"><h3><span class=\"v {cls}\">{}</span><a class=anchor href=\"#{id}\"><code>{}</code></a><span class=meta>{} · {}</span>",
        if compact { " compact" } else { "" },
        esc(&search),
        v.word(),
        esc(&c.id),
        esc(c.level.as_str()),
        c.transport,
    );
    match c.baseline.as_ref().map(|b| b.outcome) {
        Some(BaselineOutcome::ExpectedFailure) => h.push_str("<span class=meta>expected failure (baseline)</span>"),
        Some(BaselineOutcome::Stale) => h.push_str("<span class=t-fail>stale baseline entry: remove it</span>"),
        _ => {}
    }
    if c.not_scored {
        h.push_str("<span class=meta>not scored</span>");
    }
    h.push_str("</h3>");
    h.push_str(&format!("<p class=title>{}</p>", esc(&c.title)));
    if let Some((i, g)) = roots.iter().enumerate().find(|(_, g)| g.all().any(|x| x == &c.id)) {
        let n = g.all().count();
        h.push_str(&format!(
            "<p class=root-of>root cause, shared with {} other case{}: <a href=\"#root-{}\">{}</a></p>",
            n - 1,
            if n == 2 { "" } else { "s" },
            i + 1,
            esc(g.heading())
        ));
    }
    if compact {
        // A pass or n/a: one line, its reason, and the evidence folded
        // (`--evidence failing` keeps none for it: nothing to fold).
        if !c.message.is_empty() {
            h.push_str(&format!("<div class=meta>{}</div>", esc(&c.message)));
        }
        if !(c.spec.is_empty() && c.transcript.is_empty()) {
            h.push_str("<details><summary>details</summary>");
            evidence(h, c, &id);
            h.push_str("</details>");
        }
        h.push_str("</article>");
        return;
    }
    if !c.message.is_empty() {
        h.push_str(&format!("<pre class=message>{}</pre>", esc(&c.message)));
    }
    evidence(h, c, &id);
    h.push_str("</article>");
}

/// The basis, spec reference, baseline, stderr, reproducer and transcript.
fn evidence(h: &mut String, c: &CaseResult, id: &str) {
    h.push_str(&format!("<p class=meta>spec: {} · {} ms</p>", spec_link(&c.spec), c.duration_ms));
    h.push_str(&format!("<blockquote>why {}: {}</blockquote>", esc(c.level.as_str()), basis_html(c)));
    if let Some(b) = &c.baseline {
        h.push_str(&format!(
            "<p><b>{}</b> (baseline entry <code>{}</code>: {})</p>",
            baseline_word(b.outcome),
            esc(&b.entry),
            esc(&b.reason)
        ));
    }
    if !c.answers.is_empty() {
        h.push_str(&format!(
            "<p class=meta>answers requirement scenario{}: {}</p>",
            if c.answers.len() == 1 { "" } else { "s" },
            esc(&c.answers.join(", "))
        ));
    }
    if let Some(t) = &c.stderr_tail {
        h.push_str(&format!("<p>the server's stderr ended with:</p><pre>{}</pre>", esc(t)));
    }
    if let Some(r) = &c.reproducer {
        h.push_str(&format!(
            "<details class=repro open><summary>reproduce</summary><button class=copy data-copy=\"{id}-repro\">copy</button><pre id=\"{id}-repro\">{}</pre></details>",
            esc(r)
        ));
    }
    if !c.transcript.is_empty() {
        let _ = write!(
            h,
            "<details class=transcript><summary>transcript ({} exchange{})</summary><button class=copy data-copy=\"{id}-tx\">copy</button><div id=\"{id}-tx\">",
            c.transcript.len(),
            if c.transcript.len() == 1 { "" } else { "s" },
        );
        transcript_html(h, &c.transcript);
        h.push_str("</div></details>");
    }
}

/// About how many bytes a case takes on the page (its transcript clipped
/// as `transcript_html` clips it, and its texts), to size the page's buffer.
fn case_size(c: &CaseResult) -> usize {
    let texts =
        2 * c.message.len() + c.title.len() + c.reproducer.as_ref().map_or(0, |r| r.len()) + c.stderr_tail.as_ref().map_or(0, |t| t.len());
    let exchanges: usize = c
        .transcript
        .iter()
        .take(30)
        .map(|ex| {
            let headers: usize = ex.sent_headers.iter().map(|(k, v)| k.len() + v.len() + 8).sum();
            let frames: usize = ex.frames.iter().take(10).map(|f| f.raw.len().min(2000)).sum();
            let body = if ex.frames.is_empty() { ex.body.as_ref().map_or(0, |b| b.len().min(2000)) } else { 0 };
            headers + ex.sent.as_ref().map_or(0, |s| s.len().min(2000)) + frames + body + ex.label.len() + 64
        })
        .sum();
    1500 + texts + exchanges + exchanges / 4 // escaping lengthens JSON (a quote is six bytes)
}

/// The basis sentence, with its source as a link where it names a page.
fn basis_html(c: &CaseResult) -> String {
    let rendered = c.basis.render();
    let source = &c.basis.source;
    match rendered.find(source.as_str()) {
        Some(i) if !source.is_empty() => {
            format!("{}{}{}", code_spans(&rendered[..i]), spec_link(source), code_spans(&rendered[i + source.len()..]))
        }
        _ => code_spans(&rendered),
    }
}

/// Escaped text whose `code spans` are set as code (an unpaired backtick
/// stays as it is).
fn code_spans(text: &str) -> String {
    let parts: Vec<&str> = text.split('`').collect();
    if parts.len().is_multiple_of(2) {
        return esc(text);
    }
    parts.iter().enumerate().map(|(i, p)| if !i.is_multiple_of(2) { format!("<code>{}</code>", esc(p)) } else { esc(p) }).collect()
}

/// The exchanges of a case for people: what was sent, what came back,
/// notes; each part clipped (the JSON report has them whole). Escaped
/// straight into the page: transcripts are most of its size.
fn transcript_html(out: &mut String, t: &[Exchange]) {
    /// One line of a transcript block: `prefix`, then `text` clipped to
    /// 2,000 bytes (with an ellipsis), escaped.
    fn line(out: &mut String, first: &mut bool, prefix: &str, text: &str) {
        if !std::mem::take(first) {
            out.push('\n');
        }
        out.push_str(prefix);
        let mut end = text.len().min(2000);
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        esc_text_into(out, &text[..end]);
        if end < text.len() {
            out.push('…');
        }
    }
    for ex in t.iter().take(30) {
        out.push_str("<p><b>");
        esc_text_into(out, &ex.label);
        out.push_str("</b>");
        if let Some(st) = ex.status {
            let _ = write!(out, " · HTTP {st}");
        }
        let _ = write!(out, " · {} ms</p>", ex.ms);
        let block = out.len();
        out.push_str("<pre>");
        let mut first = true;
        for (k, v) in &ex.sent_headers {
            // Headers are not clipped.
            if !std::mem::take(&mut first) {
                out.push('\n');
            }
            out.push_str("&gt; ");
            esc_text_into(out, k);
            out.push_str(": ");
            esc_text_into(out, v);
        }
        if let Some(b) = &ex.sent {
            line(out, &mut first, "&gt; ", b);
        }
        for f in ex.frames.iter().take(10) {
            line(out, &mut first, "&lt; ", &f.raw);
        }
        if ex.frames.is_empty()
            && let Some(b) = &ex.body
        {
            line(out, &mut first, "&lt; ", b);
        }
        if let Some(e) = &ex.error {
            // Not clipped.
            if !std::mem::take(&mut first) {
                out.push('\n');
            }
            out.push_str("! ");
            esc_text_into(out, &e.to_string());
        }
        if let Some(n) = &ex.note {
            line(out, &mut first, "", n);
        }
        if first {
            // Nothing to show: no empty block.
            out.truncate(block);
        } else {
            out.push_str("</pre>");
        }
    }
    if t.len() > 30 {
        let _ = write!(out, "<p>… {} more in report.json</p>", t.len() - 30);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spec_references_become_links_only_when_they_name_a_page() {
        assert_eq!(
            spec_link("2026-07-28/server/discover#discoverresult (D1, D2)"),
            "<a href=\"https://modelcontextprotocol.io/specification/2026-07-28/server/discover#discoverresult\">2026-07-28/server/discover#discoverresult</a> (D1, D2)"
        );
        assert!(
            spec_link("2025-11-25/schema.ts#SetLevelRequest")
                .contains("github.com/modelcontextprotocol/modelcontextprotocol/blob/main/schema/2025-11-25/schema.ts")
        );
        assert_eq!(spec_link("tools-call-simple-text"), "tools-call-simple-text");
        assert_eq!(
            spec_link("ext-tasks/specification/draft/tasks.md#capability-negotiation (X14)"),
            "<a href=\"https://github.com/modelcontextprotocol/ext-tasks/blob/main/specification/draft/tasks.md#capability-negotiation\">ext-tasks/specification/draft/tasks.md#capability-negotiation</a> (X14)"
        );
        assert_eq!(spec_link("ext-tasks/a\"b#x"), "ext-tasks/a&quot;b#x");
        assert_eq!(spec_link("2026-07-28/x\"onmouseover=alert(1)"), "2026-07-28/x&quot;onmouseover=alert(1)");
    }

    #[test]
    fn transcripts_are_escaped_clipped_and_skip_empty_blocks() {
        use crate::record::{Frame, TransportError};
        let long = format!("{{\"x\":\"{}é\"}}", "a".repeat(1993));
        let ex = Exchange {
            label: "step <1>".into(),
            status: Some(400),
            ms: 3,
            sent_headers: vec![("Mcp-Name".into(), "a&b".into())],
            sent: Some("{\"q\":\"<\u{1b}>\"}".into()),
            frames: vec![Frame::from_bytes(long.as_bytes(), 0)],
            error: Some(TransportError::Timeout("no reply in 5 s".into())),
            note: Some("a note".into()),
            ..Default::default()
        };
        let bare = Exchange { label: "bare".into(), ms: 0, ..Default::default() };
        let clipped = format!("{{\"x\":\"{}…", "a".repeat(1993));
        let mut out = String::new();
        transcript_html(&mut out, &[ex, bare]);
        assert_eq!(
            out,
            format!(
                "<p><b>step &lt;1&gt;</b> · HTTP 400 · 3 ms</p><pre>&gt; Mcp-Name: a&amp;b\n&gt; {{\"q\":\"&lt;&gt;\"}}\n&lt; {clipped}\n! timeout: no reply in 5 s\na note</pre><p><b>bare</b> · 0 ms</p>"
            )
        );
    }

    #[test]
    fn dates_are_utc() {
        assert_eq!(utc(0), "1970-01-01 00:00:00 UTC");
        assert_eq!(utc(1_796_053_410_000), "2026-11-30 15:43:30 UTC");
        assert_eq!(utc(951_782_400_000), "2000-02-29 00:00:00 UTC");
    }
}
