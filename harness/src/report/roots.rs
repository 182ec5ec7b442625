//! Root causes: failing cases that share one cause, said once. A server
//! that answers every error with `"id": null` fails each case that looks
//! at an error's id, with the same finding, and the wire audit for the
//! same frames; a reader needs the one cause first, then the cases it
//! explains. Each case keeps its own verdict: grouping only orders and
//! names.
//!
//! Two cases share a cause when their findings say the same thing (the
//! first line of the message, with the run's request ids folded, since
//! each case numbers its own). A case that judges the run's traffic (the
//! wire audit, which names the case each offending frame came from) joins
//! the cause whose cases drew the frames it reports.

use crate::record::{CaseResult, Verdict};
use serde::{Deserialize, Serialize};

/// One cause and the cases it explains.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct RootCause {
    /// The finding the cases share, as they say it (request ids as `…`):
    /// how cases are grouped.
    pub cause: String,
    /// The cause as its first case says it, names and ids whole (what a
    /// heading shows), with a note when the other cases name others.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub said: String,
    /// The cases whose own finding this is, in the run's order.
    pub cases: Vec<String>,
    /// Cases judging the run's traffic whose offending frames came from
    /// those cases (the wire audit).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub frames_of: Vec<String>,
}

impl RootCause {
    /// The heading: the cause as a case says it, names whole.
    pub fn heading(&self) -> &str {
        if self.said.is_empty() { &self.cause } else { &self.said }
    }

    /// Every case the cause explains.
    pub fn all(&self) -> impl Iterator<Item = &String> {
        self.cases.iter().chain(&self.frames_of)
    }
}

/// Whether a case has a finding to group: fail, error or warn, and run
/// (the cases an unreachable target or an interrupt left are said once
/// elsewhere, and a case the interrupt stopped found nothing).
fn finding(c: &CaseResult) -> bool {
    matches!(c.verdict, Verdict::Fail | Verdict::Error | Verdict::Warn)
        && !c.message.starts_with("not run: ")
        && !c.message.starts_with("interrupted (")
}

/// A finding's first line with the request ids folded (mcpcert numbers
/// each case's requests apart: ids of six digits and more) and code spans
/// folded (`test_simple_text` and `test_image_content` are the same
/// finding about two fixtures), so the same finding in two cases differs
/// only there.
pub fn cause_key(message: &str) -> String {
    fold(message.lines().next().unwrap_or("").trim_end_matches(':').trim())
}

fn fold(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut digits = String::new();
    let flush = |digits: &mut String, out: &mut String| {
        if digits.len() >= 6 {
            out.push('…');
        } else {
            out.push_str(digits);
        }
        digits.clear();
    };
    let mut in_code = false;
    for ch in line.chars() {
        if ch == '`' {
            flush(&mut digits, &mut out);
            if !in_code {
                out.push_str("`…`");
            }
            in_code = !in_code;
        } else if in_code {
            continue;
        } else if ch.is_ascii_digit() {
            digits.push(ch);
        } else {
            flush(&mut digits, &mut out);
            out.push(ch);
        }
    }
    flush(&mut digits, &mut out);
    out
}

/// How long a finding must be before another case's message that quotes it
/// is taken to be explained by it (short ones are too common to tell).
const QUOTED: usize = 40;

/// The causes shared by two cases or more, largest first (then in the
/// order their first case ran).
pub fn root_causes(results: &[CaseResult]) -> Vec<RootCause> {
    let found: Vec<&CaseResult> = results.iter().filter(|c| finding(c)).collect();
    // Cases that say the same thing.
    let mut groups: Vec<RootCause> = Vec::new();
    for c in &found {
        let key = cause_key(&c.message);
        if key.is_empty() {
            continue;
        }
        match groups.iter_mut().find(|g| g.cause == key) {
            Some(g) => g.cases.push(c.id.clone()),
            None => groups.push(RootCause { cause: key, said: String::new(), cases: vec![c.id.clone()], frames_of: Vec::new() }),
        }
    }
    // A case whose message quotes another group's finding (a walk that
    // did not reach its end, "because: <the walk's finding>") is explained
    // by it: its group joins that one.
    let mut i = 0;
    while i < groups.len() {
        let key = groups[i].cause.clone();
        if key.chars().count() >= QUOTED {
            let mut j = 0;
            while j < groups.len() {
                let quotes = j != i
                    && groups[j]
                        .cases
                        .iter()
                        .any(|id| found.iter().any(|c| &c.id == id && fold(&c.message.replace('\n', " ")).contains(&key)));
                if quotes {
                    let g = groups.remove(j);
                    if j < i {
                        i -= 1;
                    }
                    groups[i].cases.extend(g.cases);
                } else {
                    j += 1;
                }
            }
        }
        i += 1;
    }
    groups.retain(|g| g.cases.len() >= 2);
    // A case of its own that reports frames (the wire audit names the case
    // each came from) joins a cause when every case it names that has a
    // finding of its own is one of that cause's: frames of another defect
    // keep it apart.
    for c in &found {
        if groups.iter().any(|g| g.cases.contains(&c.id)) {
            continue;
        }
        let named: Vec<&str> = found.iter().filter(|o| o.id != c.id && names_case(&c.message, &o.id)).map(|o| o.id.as_str()).collect();
        if named.is_empty() {
            continue;
        }
        if let Some(g) = groups.iter_mut().find(|g| named.iter().all(|id| g.cases.iter().any(|x| x == id))) {
            g.frames_of.push(c.id.clone());
        }
    }
    // In the run's order within each cause.
    let pos = |id: &String| results.iter().position(|c| &c.id == id).unwrap_or(usize::MAX);
    let reason_of = |id: &String| found.iter().find(|c| &c.id == id).map(|c| c.reason()).unwrap_or_default();
    for g in &mut groups {
        g.cases.sort_by_key(pos);
        let said: Vec<String> = g.cases.iter().map(reason_of).collect();
        g.said = match said.iter().skip(1).all(|s| s == &said[0]) {
            true => said[0].clone(),
            false => format!("{} (as {} says it; the others alike with their own ids or names)", said[0], g.cases[0]),
        };
    }
    groups.sort_by_key(|g| std::cmp::Reverse(g.cases.len() + g.frames_of.len()));
    groups
}

/// Whether `message` names the case `id` as where a frame came from
/// (`in ID)`, `in ID,` or `ID (N)` in a list), not merely a prefix of a
/// longer id.
fn names_case(message: &str, id: &str) -> bool {
    message.match_indices(id).any(|(i, _)| {
        let after = message[i + id.len()..].chars().next();
        !matches!(after, Some(c) if c.is_alphanumeric() || c == '-' || c == '/' || c == '_')
    })
}

/// The cause a case belongs to, if any.
pub fn cause_of<'a>(roots: &'a [RootCause], id: &str) -> Option<&'a RootCause> {
    roots.iter().find(|g| g.all().any(|x| x == id))
}

/// The causes several failing cases share, each with the cases beneath
/// (their own verdicts kept), before the cards.
pub(crate) fn html(report: &super::RunReport) -> String {
    use super::esc;
    use super::html::{anchor, class};
    let mut h = String::from(
        "<section id=roots><h2>Root causes</h2><p class=meta>cases whose findings say the same thing, the cause said once; each case keeps its own verdict below</p>",
    );
    for (i, g) in report.roots.iter().enumerate() {
        h.push_str(&format!("<div class=root id=root-{}><h3>{} cases: {}</h3><ul>", i + 1, g.all().count(), esc(g.heading())));
        for id in g.all() {
            let Some(c) = report.cases.iter().find(|c| &c.id == id) else { continue };
            let via = if g.frames_of.contains(id) { " <span class=meta>(reports the frames of these cases)</span>" } else { "" };
            h.push_str(&format!(
                "<li><span class=\"v {}\">{}</span> <a href=\"#{}\"><code>{}</code></a>{via}</li>",
                class(c.verdict),
                c.verdict.word(),
                anchor(c),
                esc(id)
            ));
        }
        h.push_str("</ul></div>");
    }
    h.push_str("</section>");
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_ids_fold_and_codes_stay() {
        assert_eq!(
            cause_key("expected the response id to equal the request id 7000000; got null\nmore"),
            "expected the response id to equal the request id …; got null"
        );
        assert_eq!(cause_key("expected JSON-RPC error -32602; got -32601"), "expected JSON-RPC error -32602; got -32601");
        assert_eq!(cause_key("needs the fixture tool `test_simple_text`, refused"), "needs the fixture tool `…`, refused");
    }

    #[test]
    fn an_id_is_named_only_whole() {
        assert!(names_case("(reply to x, in 2026-07-28/lifecycle/unknown-method): bad", "2026-07-28/lifecycle/unknown-method"));
        assert!(!names_case("in 2026-07-28/lifecycle/unknown-method-x)", "2026-07-28/lifecycle/unknown-method"));
    }
}
