//! JUnit XML, written here: testsuites, testsuite (with properties),
//! testcase, failure / error / skipped, system-out and system-err, indented
//! by four spaces — the document quick-junit writes, byte for byte (a test
//! holds the two side by side), which Jenkins' schema accepts.
//!
//! Every text is first made fit for XML as quick-junit makes it: ANSI escape
//! sequences and the control characters XML 1.0 forbids removed. quick-junit
//! runs every string, however plain, through a terminal parser one character
//! at a time, which took about 1.5 ms of a 50 KB report; here only a string
//! holding a control character is (the same parser, so the same result).

use std::fmt::Write as _;
use std::time::Duration;

/// A whole document.
#[derive(Debug, Clone)]
pub struct Junit {
    pub name: String,
    pub time: Option<Duration>,
    pub suites: Vec<Suite>,
}

#[derive(Debug, Clone)]
pub struct Suite {
    pub name: String,
    pub properties: Vec<(String, String)>,
    pub cases: Vec<TestCase>,
}

#[derive(Debug, Clone)]
pub struct TestCase {
    pub name: String,
    pub classname: Option<String>,
    pub time: Option<Duration>,
    pub status: Status,
    pub system_out: Option<String>,
    pub system_err: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Failure,
    Error,
    Skipped,
}

/// A testcase's outcome: passed, or a `<failure>`, `<error>` or
/// `<skipped>` element with its attributes and text.
#[derive(Debug, Clone, Default)]
pub struct Status {
    /// None: passed.
    pub kind: Option<Kind>,
    pub message: Option<String>,
    pub ty: Option<String>,
    pub description: Option<String>,
}

impl Status {
    pub fn success() -> Status {
        Status::default()
    }

    pub fn of(kind: Kind) -> Status {
        Status { kind: Some(kind), ..Status::default() }
    }

    pub fn message(mut self, m: impl Into<String>) -> Status {
        self.message = Some(m.into());
        self
    }

    pub fn ty(mut self, t: impl Into<String>) -> Status {
        self.ty = Some(t.into());
        self
    }

    pub fn description(mut self, d: impl Into<String>) -> Status {
        self.description = Some(d.into());
        self
    }
}

impl TestCase {
    pub fn new(name: impl Into<String>, status: Status) -> TestCase {
        TestCase { name: name.into(), classname: None, time: None, status, system_out: None, system_err: None }
    }
}

impl Suite {
    fn count(&self, kind: Kind) -> usize {
        self.cases.iter().filter(|c| c.status.kind == Some(kind)).count()
    }
}

impl Junit {
    /// The document as text. `<testsuites>` carries no `skipped` count
    /// (Jenkins' schema has none there); each `<testsuite>` has its own.
    pub fn to_xml(&self) -> String {
        let size: usize = self.suites.iter().flat_map(|s| &s.cases).map(|c| c.name.len() * 2 + 64 + status_len(c)).sum();
        let mut w = Xml { out: String::with_capacity(1024 + size), depth: 0, line_break: false };
        w.out.push_str("<?xml version=\"1.0\" encoding=\"UTF-8\"?>");
        w.line_break = true;
        let tests: usize = self.suites.iter().map(|s| s.cases.len()).sum();
        let failures: usize = self.suites.iter().map(|s| s.count(Kind::Failure)).sum();
        let errors: usize = self.suites.iter().map(|s| s.count(Kind::Error)).sum();
        let mut attrs = vec![("name", text(&self.name)), ("tests", tests.to_string()), ("failures", failures.to_string())];
        attrs.push(("errors", errors.to_string()));
        if let Some(t) = self.time {
            attrs.push(("time", seconds(t)));
        }
        w.start("testsuites", &attrs);
        for s in &self.suites {
            suite(&mut w, s);
        }
        w.end("testsuites");
        w.out.push('\n');
        w.out
    }
}

fn status_len(c: &TestCase) -> usize {
    let s = &c.status;
    [&s.message, &s.ty, &s.description, &c.system_out, &c.system_err].iter().map(|x| x.as_ref().map_or(0, |t| t.len() + 32)).sum()
}

fn suite(w: &mut Xml, s: &Suite) {
    let attrs = [
        ("name", text(&s.name)),
        ("tests", s.cases.len().to_string()),
        ("skipped", s.count(Kind::Skipped).to_string()),
        ("errors", s.count(Kind::Error).to_string()),
        ("failures", s.count(Kind::Failure).to_string()),
    ];
    if s.properties.is_empty() && s.cases.is_empty() {
        w.empty("testsuite", &attrs);
        return;
    }
    w.start("testsuite", &attrs);
    if !s.properties.is_empty() {
        w.start("properties", &[]);
        for (k, v) in &s.properties {
            w.empty("property", &[("name", text(k)), ("value", text(v))]);
        }
        w.end("properties");
    }
    for c in &s.cases {
        case(w, c);
    }
    w.end("testsuite");
}

fn case(w: &mut Xml, c: &TestCase) {
    let mut attrs = vec![("name", text(&c.name))];
    if let Some(cl) = &c.classname {
        attrs.push(("classname", text(cl)));
    }
    if let Some(t) = c.time {
        attrs.push(("time", seconds(t)));
    }
    if c.status.kind.is_none() && c.system_out.is_none() && c.system_err.is_none() {
        w.empty("testcase", &attrs);
        return;
    }
    w.start("testcase", &attrs);
    if let Some(kind) = c.status.kind {
        let tag = match kind {
            Kind::Failure => "failure",
            Kind::Error => "error",
            Kind::Skipped => "skipped",
        };
        let mut attrs = Vec::new();
        if let Some(m) = &c.status.message {
            attrs.push(("message", text(m)));
        }
        if let Some(t) = &c.status.ty {
            attrs.push(("type", text(t)));
        }
        match &c.status.description {
            Some(d) => {
                w.start(tag, &attrs);
                w.text(d);
                w.end(tag);
            }
            None => w.empty(tag, &attrs),
        }
    }
    for (tag, out) in [("system-out", &c.system_out), ("system-err", &c.system_err)] {
        if let Some(o) = out {
            w.start(tag, &[]);
            w.text(o);
            w.end(tag);
        }
    }
    w.end("testcase");
}

/// Seconds to the millisecond, as JUnit times are written.
fn seconds(t: Duration) -> String {
    format!("{:.3}", t.as_secs_f64())
}

/// A string fit for XML: ANSI escape sequences and forbidden control
/// characters removed (tab, newline and carriage return stay where no escape
/// sequence parser had to look at the string: see the module's note).
pub fn text(s: &str) -> String {
    if plain(s) {
        return s.to_string();
    }
    strip_ansi_escapes::strip_str(s).replace(|c| matches!(c, '\x00'..='\x08' | '\x0b' | '\x0c' | '\x0e'..='\x1f'), "")
}

/// True when a terminal parser would give `s` back unchanged: no C0
/// control but newline, no DEL, no C1 control (U+0080..U+009F).
fn plain(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'\n' => {}
            0x00..=0x1f | 0x7f => return false,
            0xc2 if b.get(i + 1).is_some_and(|n| (0x80..=0x9f).contains(n)) => return false,
            _ => {}
        }
        i += 1;
    }
    true
}

/// The writer: one element per line, four spaces a level; text goes
/// inline, and the end tag after it on the same line.
struct Xml {
    out: String,
    depth: usize,
    line_break: bool,
}

impl Xml {
    fn open(&mut self, tag: &str, attrs: &[(&str, String)]) {
        if self.line_break {
            self.out.push('\n');
            for _ in 0..self.depth * 4 {
                self.out.push(' ');
            }
        }
        self.out.push('<');
        self.out.push_str(tag);
        for (k, v) in attrs {
            let _ = write!(self.out, " {k}=\"");
            escape(&mut self.out, v);
            self.out.push('"');
        }
    }

    fn start(&mut self, tag: &str, attrs: &[(&str, String)]) {
        self.open(tag, attrs);
        self.out.push('>');
        self.depth += 1;
        self.line_break = true;
    }

    fn empty(&mut self, tag: &str, attrs: &[(&str, String)]) {
        self.open(tag, attrs);
        self.out.push_str("/>");
        self.line_break = true;
    }

    fn end(&mut self, tag: &str) {
        self.depth -= 1;
        if self.line_break {
            self.out.push('\n');
            for _ in 0..self.depth * 4 {
                self.out.push(' ');
            }
        }
        let _ = write!(self.out, "</{tag}>");
        self.line_break = true;
    }

    fn text(&mut self, t: &str) {
        escape(&mut self.out, &text(t));
        self.line_break = false;
    }
}

/// `< > & ' "` as entities (attribute values and text alike).
fn escape(out: &mut String, s: &str) {
    let mut from = 0;
    for (i, b) in s.bytes().enumerate() {
        let with = match b {
            b'<' => "&lt;",
            b'>' => "&gt;",
            b'&' => "&amp;",
            b'\'' => "&apos;",
            b'"' => "&quot;",
            _ => continue,
        };
        out.push_str(&s[from..i]);
        out.push_str(with);
        from = i + 1;
    }
    out.push_str(&s[from..]);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The same document through quick-junit, the oracle for the format.
    fn via_quick_junit(j: &Junit) -> String {
        use quick_junit::{NonSuccessKind, Property, TestCaseStatus};
        let mut r = quick_junit::Report::new(j.name.as_str());
        if let Some(t) = j.time {
            r.set_time(t);
        }
        for s in &j.suites {
            let mut qs = quick_junit::TestSuite::new(s.name.as_str());
            for (k, v) in &s.properties {
                qs.add_property(Property::new(k.as_str(), v.as_str()));
            }
            for c in &s.cases {
                let mut st = match c.status.kind {
                    None => TestCaseStatus::success(),
                    Some(Kind::Failure) => TestCaseStatus::non_success(NonSuccessKind::Failure),
                    Some(Kind::Error) => TestCaseStatus::non_success(NonSuccessKind::Error),
                    Some(Kind::Skipped) => TestCaseStatus::skipped(),
                };
                if let Some(m) = &c.status.message {
                    st.set_message(m.as_str());
                }
                if let Some(t) = &c.status.ty {
                    st.set_type(t.as_str());
                }
                if let Some(d) = &c.status.description {
                    st.set_description(d.as_str());
                }
                let mut tc = quick_junit::TestCase::new(c.name.as_str(), st);
                if let Some(cl) = &c.classname {
                    tc.set_classname(cl.as_str());
                }
                if let Some(t) = c.time {
                    tc.set_time(t);
                }
                if let Some(o) = &c.system_out {
                    tc.set_system_out(o.as_str());
                }
                if let Some(e) = &c.system_err {
                    tc.set_system_err(e.as_str());
                }
                qs.add_test_case(tc);
            }
            r.add_test_suite(qs);
        }
        // As the report had it: no `skipped` on <testsuites>.
        let xml = r.to_string().unwrap();
        let start = xml.find("<testsuites").unwrap();
        let at = start + xml[start..].find(" skipped=\"").unwrap();
        let end = at + 10 + xml[at + 10..].find('"').unwrap() + 1;
        format!("{}{}", &xml[..at], &xml[end..])
    }

    const HOSTILE: [&str; 12] = [
        "",
        "plain text",
        "quotes \" and ' and <tags> & ampersands",
        "line\nnext\ttab\rreturn",
        "\u{1b}[31mred\u{1b}[0m and \u{1b}]0;title\u{7}",
        "nul \u{0} bell \u{7} vt \u{b} ff \u{c} us \u{1f} del \u{7f}",
        "c1 \u{85} \u{9b}31m csi",
        "Zürich 東京 \u{1F600} <é>",
        "trailing escape \u{1b}",
        "\u{1b}[",
        "a\r\nb",
        "∑ ≠ \u{200b} zero width",
    ];

    fn sample() -> Junit {
        let mut suites = Vec::new();
        for (n, h) in HOSTILE.iter().enumerate() {
            let mut cases = Vec::new();
            let statuses = [
                Status::success(),
                Status::of(Kind::Failure).message(*h).ty("MUST violated").description(format!("why: {h}\nmore")),
                Status::of(Kind::Error).message(*h),
                Status::of(Kind::Skipped).message(format!("n/a: {h}")).ty("n/a"),
                Status::of(Kind::Skipped).message("expected").ty("expected failure").description(""),
                Status::of(Kind::Failure),
            ];
            for (i, st) in statuses.into_iter().enumerate() {
                let mut c = TestCase::new(format!("{h}/case-{i}"), st);
                if i % 2 == 0 {
                    c.classname = Some(format!("area {h}"));
                    c.time = Some(Duration::from_millis(1234 + i as u64));
                }
                if i == 0 || i == 3 {
                    c.system_out = Some(format!("WARNING {h}"));
                }
                if i == 2 {
                    c.system_err = Some(format!("the server's stderr ended with:\n{h}"));
                }
                cases.push(c);
            }
            let properties =
                if n % 3 == 0 { Vec::new() } else { vec![("transport".into(), "http".into()), ("digest".into(), (*h).into())] };
            suites.push(Suite { name: format!("suite {h}"), properties, cases });
        }
        suites.push(Suite { name: "empty".into(), properties: Vec::new(), cases: Vec::new() });
        Junit { name: "mcpcert".into(), time: Some(Duration::from_millis(27)), suites }
    }

    #[test]
    fn the_document_is_the_one_quick_junit_writes() {
        let j = sample();
        assert_eq!(j.to_xml(), via_quick_junit(&j));
        let bare = Junit { name: "mcpcert matrix".into(), time: None, suites: Vec::new() };
        assert_eq!(bare.to_xml(), via_quick_junit(&bare));
    }

    #[test]
    fn texts_lose_escape_sequences_and_forbidden_characters_only() {
        for h in HOSTILE {
            assert_eq!(text(h), quick_junit::XmlString::new(h).as_str(), "{h:?}");
        }
        assert!(plain("a\nb é"));
        assert!(!plain("a\rb") && !plain("\u{1b}[0m") && !plain("\u{85}") && !plain("\u{7f}"));
        let mut out = String::new();
        escape(&mut out, "<a href='x'>\"&\"</a>");
        assert_eq!(out, "&lt;a href=&apos;x&apos;&gt;&quot;&amp;&quot;&lt;/a&gt;");
    }
}
