//! The HTML report as a file: self-contained, in a reader's order, every
//! case once with an anchor the index links to, spec references as links,
//! and the header's facts. (scripts/html-check.sh drives the same page in a
//! real browser: the filter, the copy button, what is visible.)

mod common;
use common::*;

fn page(name: &str, server_args: &str) -> (String, serde_json::Value) {
    let dir = outdir(name);
    let mut cmd = mcpcert();
    cmd.args(["run", "--stdio", &format!("{} --stdio {server_args}", refserver().display())]);
    report_args(&mut cmd, &dir);
    cmd.output().unwrap();
    (std::fs::read_to_string(dir.join("report.html")).unwrap(), report(&dir))
}

/// The values of `attr="…"` (or unquoted) in the page, in order.
fn attrs(html: &str, attr: &str) -> Vec<String> {
    let mut out = Vec::new();
    let needle = format!(" {attr}=");
    let mut rest = html;
    while let Some(i) = rest.find(&needle) {
        rest = &rest[i + needle.len()..];
        let v = if let Some(r) = rest.strip_prefix('"') {
            r.split('"').next().unwrap_or("")
        } else {
            rest.split([' ', '>']).next().unwrap_or("")
        };
        out.push(v.to_string());
    }
    out
}

#[test]
fn the_page_puts_failures_first_links_every_case_and_needs_nothing_else() {
    // discover-no-ttl breaks MUSTs; order-varies a SHOULD.
    let (html, r) = page("html-failing", "--era modern --fault discover-no-ttl --fault order-varies");
    let cases = r["cases"].as_array().unwrap();

    // Self-contained: nothing loaded from elsewhere; the only addresses are
    // links a reader may follow to the spec.
    assert!(attrs(&html, "src").is_empty(), "no src= at all");
    for href in attrs(&html, "href") {
        assert!(
            href.starts_with('#')
                || href.starts_with("https://modelcontextprotocol.io/specification/")
                || href.starts_with("https://github.com/modelcontextprotocol/modelcontextprotocol/blob/main/schema/")
                || href.starts_with("https://github.com/modelcontextprotocol/modelcontextprotocol/blob/main/seps/")
                || href.starts_with("https://github.com/modelcontextprotocol/ext-"),
            "unexpected link {href}"
        );
    }
    assert!(!html.contains("<link") && !html.contains("@import") && !html.contains("url("), "no external style");

    // Every case once, in the reader's order.
    let verdicts = attrs(&html, "data-verdict");
    assert_eq!(verdicts.len(), cases.len(), "every case once");
    let rank = |v: &str| ["fail", "error", "warn", "pass", "na"].iter().position(|x| *x == v).unwrap();
    assert!(verdicts.windows(2).all(|w| rank(&w[0]) <= rank(&w[1])), "fail, error, warn, pass, n/a: {verdicts:?}");
    assert_eq!(verdicts[0], "fail");
    assert_eq!(verdicts.iter().filter(|v| *v == "fail").count() as u64, r["summary"]["fail"].as_u64().unwrap());
    assert_eq!(verdicts.iter().filter(|v| *v == "warn").count() as u64, r["summary"]["warn"].as_u64().unwrap());

    // The n/a group is folded; the index links each failure to its anchor.
    let na = html.find("id=g-na>").expect("an n/a group");
    assert!(html[na..].starts_with("id=g-na><details class=fold><summary>"), "n/a folded");
    let ids: Vec<String> = attrs(&html, "id").into_iter().filter(|i| i.starts_with("case-")).collect();
    for c in cases.iter().filter(|c| c["verdict"] == "fail") {
        let anchor = format!("case-{}", c["id"].as_str().unwrap().replace('/', "-"));
        assert!(ids.contains(&anchor), "{anchor} on the page");
        assert!(html.contains(&format!("<li><a href=\"#{anchor}\">")), "{anchor} in the index");
    }

    // The header: server and version, outcome with its reason, spec links.
    assert!(html.contains("<span id=server>mcpcert-refserver 0.1.0</span>"));
    let why = r["outcome"]["why"][0].as_str().unwrap();
    assert!(html.contains(&format!("FAILED: {why}")), "the outcome says why: {why}");
    assert!(html.contains("href=\"https://modelcontextprotocol.io/specification/2026-07-28/server/discover#discoverresult\""));
}

#[test]
fn a_passing_run_says_so_and_hostile_text_stays_text() {
    // The server's name is printed as text, never as markup.
    let (html, r) = page("html-passing", "--era modern --quirk server-name-markup");
    assert_eq!(r["outcome"]["passed"], true, "{}", r["outcome"]);
    assert!(html.contains("<p id=outcome class=\"outcome ok\">passed"));
    assert!(!html.contains("<img"), "markup from the server is escaped");
}
