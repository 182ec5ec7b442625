//! Every check proven: the clean reference server passes everything it can,
//! and each `--fault` turns exactly its target cases red.

mod common;

use common::{Setup, refserver, reproduce, run_all, run_all_kept};
use mcpcert::record::{CaseResult, Verdict};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};

fn setups() -> Vec<Setup> {
    let mut v = Vec::new();
    for t in ["stdio", "http"] {
        for era in ["modern", "dual", "legacy"] {
            v.push(Setup::new(t, era));
        }
    }
    // The HTTP server also answers as SSE (priming event, comments).
    let mut sse = Setup::new("http", "dual");
    sse.sse = true;
    v.push(sse);
    // The older revisions, each spoken alone (2024-11-05 over HTTP: HTTP with SSE).
    for t in ["stdio", "http"] {
        for era in ["2025-06-18", "2025-03-26", "2024-11-05"] {
            v.push(Setup::new(t, era));
        }
    }
    // A server of tools alone (what an undeclared capability's methods
    // answer), in each revision of the initialize era.
    for era in ["legacy", "2025-06-18", "2025-03-26", "2024-11-05"] {
        let mut s = Setup::new("stdio", era);
        s.quirks = vec!["tools-only".into()];
        v.push(s);
    }
    // A tool that runs only as a task (2025-11-25's experimental tasks,
    // and the tasks extension).
    let mut s = Setup::new("http", "legacy");
    s.quirks = vec!["legacy-task-required".into()];
    v.push(s);
    let mut s = Setup::new("stdio", "modern");
    s.quirks = vec!["task-required".into()];
    v.push(s);
    // With the conformance fixtures, in each era.
    for t in ["stdio", "http"] {
        for era in ["modern", "legacy"] {
            v.push(Setup::new(t, era).with_fixtures());
        }
    }
    v
}

fn bad(results: &BTreeMap<String, CaseResult>) -> Vec<String> {
    results
        .values()
        .filter(|r| matches!(r.verdict, Verdict::Fail | Verdict::Warn | Verdict::Error))
        .map(|r| format!("{} [{}]: {}", r.id, r.verdict.as_str(), r.message))
        .collect()
}

#[test]
fn clean_server_passes_every_applicable_case_and_every_case_applies_somewhere() {
    let mut passed_somewhere: BTreeSet<String> = BTreeSet::new();
    let mut all: BTreeSet<String> = BTreeSet::new();
    for s in setups() {
        let res = run_all(&s);
        let b = bad(&res);
        assert!(b.is_empty(), "clean reference server ({s:?}) got:\n{}", b.join("\n"));
        for r in res.values() {
            all.insert(r.id.clone());
            if r.verdict == Verdict::Pass {
                passed_somewhere.insert(r.id.clone());
            }
            if r.verdict == Verdict::NotApplicable {
                assert!(!r.message.is_empty(), "n/a without a reason: {}", r.id);
            }
        }
    }
    // The authorization cases need a server behind the test issuer:
    // tests/auth.rs shows each of them pass (and fail) there.
    let never: Vec<&String> = all.difference(&passed_somewhere).filter(|id| !id.contains("/auth/")).collect();
    assert!(never.is_empty(), "cases that never apply to the reference server: {never:?}");
}

#[derive(serde::Deserialize, Debug)]
struct FaultInfo {
    name: String,
    era: String,
    transport: String,
    /// The oldest revision whose rules the fault breaks.
    since: String,
    targets: Vec<String>,
    /// A fault of `--auth`, run by tests/auth.rs.
    #[serde(default)]
    auth: bool,
}

/// The older revisions, each a server era of its own.
const OLDER: [&str; 3] = ["2025-06-18", "2025-03-26", "2024-11-05"];

fn faults() -> Vec<FaultInfo> {
    let out = std::process::Command::new(refserver()).args(["--list-faults", "--json"]).output().expect("list faults");
    let all: Vec<FaultInfo> = serde_json::from_slice(&out.stdout).expect("fault list is JSON");
    all.into_iter().filter(|f| !f.auth).collect()
}

#[test]
fn each_fault_turns_exactly_its_targets_red() {
    let catalog = mcpcert::suite::load_builtin().unwrap();
    let known: BTreeSet<String> = catalog.cases.iter().map(|c| c.id.clone()).collect();
    let faults = faults();
    // One job per fault and set-up it must be run in.
    let mut jobs: Vec<(usize, &'static str, &'static str)> = Vec::new();
    // Faults of the conformance fixtures run with the server serving them.
    let fixtures = |f: &FaultInfo| f.name.starts_with("fx-");
    for (i, f) in faults.iter().enumerate() {
        for t in &f.targets {
            assert!(known.contains(t), "fault {} targets unknown case {t}", f.name);
        }
        let transports: Vec<&'static str> = match f.transport.as_str() {
            "stdio" => vec!["stdio"],
            "http" => vec!["http"],
            _ => vec!["stdio", "http"],
        };
        // "any": a rule of every revision; run the server in each era and
        // expect the targets of the revision it then serves. A rule of the
        // initialize era ("legacy") holds in the older revisions too, whose
        // cases are those of 2025-11-25 under their own prefix (the
        // fixtures are 2025-11-25's and 2026-07-28's only).
        let mut eras: Vec<&'static str> = match f.era.as_str() {
            "any" => vec!["modern", "legacy"],
            "modern" => vec!["modern"],
            "legacy" => vec!["legacy"],
            // A rule of servers that serve both eras.
            "dual" => vec!["dual"],
            "older" => vec![],
            "2025-06-18" => vec!["2025-06-18"],
            "2025-03-26" => vec!["2025-03-26"],
            "2024-11-05" => vec!["2024-11-05"],
            other => panic!("fault {} has an unknown era {other}", f.name),
        };
        // A fixtures fault whose 2025-11-25 targets are all cases of an
        // older revision too breaks a rule that needs no fixture there.
        let older_has =
            |rev: &str| f.targets.iter().filter_map(|t| t.strip_prefix("2025-11-25/")).all(|rest| known.contains(&format!("{rev}/{rest}")));
        if matches!(f.era.as_str(), "any" | "legacy" | "older") {
            eras.extend(OLDER.into_iter().filter(|r| *r >= f.since.as_str() && (!fixtures(f) || older_has(r))));
        }
        for era in eras {
            for t in &transports {
                jobs.push((i, era, t));
            }
        }
    }
    let mut baselines: BTreeMap<(&str, &str, bool), BTreeMap<String, CaseResult>> = BTreeMap::new();
    let is_older = |era: &str| OLDER.contains(&era);
    for (i, era, t) in &jobs {
        let fx = fixtures(&faults[*i]) && !is_older(era);
        baselines.entry((t, era, fx)).or_insert_with(|| {
            let s = Setup::new(t, era);
            run_all(&if fx { s.with_fixtures() } else { s })
        });
    }
    // The set-ups are independent (each has its own server), so they run
    // on many threads: they mostly wait (on replies, listen windows, task
    // clocks). On 2 cores, 6 threads took 587 s and used a quarter of the
    // CPU; 10 took 373 s, 16 took 257 s (half the CPU), verdicts unchanged.
    let next = std::sync::atomic::AtomicUsize::new(0);
    let outcomes: std::sync::Mutex<Vec<(Vec<String>, BTreeSet<String>)>> = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for _ in 0..16 {
            scope.spawn(|| {
                loop {
                    let k = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    let Some(&(i, era, t)) = jobs.get(k) else { break };
                    let f = &faults[i];
                    let base = &baselines[&(t, era, fixtures(f) && !is_older(era))];
                    let out = judge_fault(f, era, t, base);
                    outcomes.lock().unwrap().push(out);
                }
            });
        }
    });
    let mut problems = Vec::new();
    let mut proven: BTreeSet<String> = BTreeSet::new();
    for (p, ok) in outcomes.into_inner().unwrap() {
        problems.extend(p);
        proven.extend(ok);
    }
    problems.sort();
    assert!(problems.is_empty(), "fault matrix problems:\n{}", problems.join("\n"));
    // The authorization cases are proven red by the `--auth` faults, in
    // tests/auth.rs.
    let unproven: Vec<&String> = known.difference(&proven).filter(|id| !id.contains("/auth/")).collect();
    assert!(unproven.is_empty(), "cases no fault turns red: {unproven:?}");
}

/// Run one fault in one set-up: exactly its targets of the revision served
/// there change verdict, each to fail (MUST, POLICY) or warn (SHOULD).
/// Returns the problems and the cases proven red.
fn judge_fault(f: &FaultInfo, era: &str, t: &'static str, base: &BTreeMap<String, CaseResult>) -> (Vec<String>, BTreeSet<String>) {
    let mut problems = Vec::new();
    let mut proven = BTreeSet::new();
    let mut s = Setup::new(t, era);
    s.faults = vec![f.name.clone()];
    s.fixtures = f.name.starts_with("fx-") && !OLDER.contains(&era);
    // The HTTP server stays up while the reproducers run against it.
    let (res, _server) = run_all_kept(&s);
    // A case the fault does not target may go n/a (the fault took away
    // what it judges, e.g. a subscription never acknowledged), or error
    // because a fact it judges is now partial (a list the fault cut short),
    // never red.
    let taken_away = |r: &CaseResult| {
        r.verdict == Verdict::NotApplicable || (r.verdict == Verdict::Error && r.message.contains(mcpcert::checks::PARTIAL))
    };
    let served = match era {
        "legacy" => "2025-11-25/".to_string(),
        "modern" => "2026-07-28/".to_string(),
        // Both revisions are served.
        "dual" => String::new(),
        older => format!("{older}/"),
    };
    // In an older revision, a 2025-11-25 target is the same rule under
    // that revision's prefix (where the revision has the case).
    // A fixtures fault runs there without the fixtures: what the load
    // check replays then holds no fixture, so its conformance cases are the
    // fault's targets.
    let older = OLDER.contains(&era);
    let targets: Vec<String> = f
        .targets
        .iter()
        .filter(|id| !(older && f.name.starts_with("fx-")) || id.contains("/conformance/"))
        .map(|id| match id.strip_prefix("2025-11-25/") {
            Some(rest) if !["legacy", "modern", "dual"].contains(&era) => format!("{served}{rest}"),
            _ => id.clone(),
        })
        .collect();
    let changed: BTreeSet<String> = res
        .iter()
        .filter(|(id, r)| base[*id].verdict != r.verdict && (!taken_away(r) || targets.iter().any(|t| t == *id)))
        .map(|(id, _)| id.clone())
        .collect();
    // Targets that do not apply to this set-up (e.g. HTTP-only cases over
    // stdio) cannot change; the final check still demands that every case
    // is turned red somewhere.
    // A target that the fault itself makes apply (a capability it stops
    // declaring) is wanted red too.
    let red = |id: &String| res.get(id).is_some_and(|r| matches!(r.verdict, Verdict::Fail | Verdict::Warn));
    let want: BTreeSet<String> = targets
        .iter()
        .filter(|id| id.starts_with(&served) && base.get(*id).is_some_and(|b| b.verdict != Verdict::NotApplicable || red(id)))
        .cloned()
        .collect();
    if changed != want {
        let detail: Vec<String> = changed
            .symmetric_difference(&want)
            .map(|id| {
                format!(
                    "    {id}: {} -> {} {}",
                    base[id].verdict.as_str(),
                    res[id].verdict.as_str(),
                    res[id].message.lines().next().unwrap_or("")
                )
            })
            .collect();
        problems.push(format!("fault {} over {t} ({era}): changed {changed:?}, expected {want:?}\n{}", f.name, detail.join("\n")));
        return (problems, proven);
    }
    for id in &want {
        let r = &res[id];
        let expected = if r.level.is_advisory() { Verdict::Warn } else { Verdict::Fail };
        if r.verdict != expected {
            problems.push(format!(
                "fault {} over {t}: {id} is {} (expected {}): {}",
                f.name,
                r.verdict.as_str(),
                expected.as_str(),
                r.message
            ));
        } else {
            assert!(r.reproducer.is_some(), "{id}: a failure must carry a reproducer");
            assert!(!r.message.is_empty(), "{id}: a failure must say what was expected and what came back");
            // Its curl lines get the statuses the run got (the load cases'
            // answers depend on the crowd; a whole-run check's lines replay
            // a sample).
            let repro = r.reproducer.as_deref().unwrap_or("");
            if t == "http" && !id.contains("/load/") && !repro.contains("judges all traffic of the run") && !repro.contains("HTTP with SSE")
            {
                let sent: Vec<&mcpcert::record::Exchange> = r.transcript.iter().filter(|e| e.http_method.is_some()).collect();
                // The statuses of requests sent together, in ascending order
                // (their replies come in any order).
                let mut want: Vec<Option<u16>> = sent.iter().map(|e| e.status).collect();
                let mut k = 0;
                while k < sent.len() {
                    let end = if sent[k].together { (k..sent.len()).find(|&j| !sent[j].together).unwrap_or(sent.len()) } else { k + 1 };
                    want[k..end].sort_unstable();
                    k = end;
                }
                if let Some(got) = common::replay_statuses(repro, sent.len()) {
                    for (i, (w, g)) in want.iter().zip(&got).enumerate() {
                        if let (Some(want), Some(g)) = (w, g)
                            && want != g
                        {
                            problems.push(format!(
                                "fault {} over {t} ({era}): {id}: request {} of its curl lines got HTTP {g}, the run HTTP {want}:\n    {}",
                                f.name,
                                i + 1,
                                repro.lines().nth(1).unwrap_or("")
                            ));
                        }
                    }
                }
            }
            // Over HTTP with SSE, its stream and POST lines bring back the
            // answers the run got (the load cases' depend on the crowd).
            if t == "http"
                && !id.contains("/load/")
                && repro.contains("# HTTP with SSE")
                && !repro.contains("judges all traffic of the run")
                && let Some(Err(said)) = common::replay_sse(r, &format!("{}-{}", f.name, id.replace('/', "_")))
            {
                problems.push(format!(
                    "fault {} over {t} ({era}): {id}: its SSE reproducer does not bring back the run's answers:\n{said}",
                    f.name
                ));
            }
            // The printed reproducer reproduces the verdict.
            match reproduce(r.reproducer.as_deref().unwrap_or(""), id) {
                Ok(v) if v == r.verdict.as_str() => {
                    proven.insert(id.clone());
                }
                Ok(v) => problems.push(format!(
                    "fault {} over {t} ({era}): {id} is {} in the run but {v} when its printed reproducer is run:\n    {}",
                    f.name,
                    r.verdict.as_str(),
                    r.reproducer.as_deref().unwrap_or("").lines().next().unwrap_or("")
                )),
                Err(e) => problems.push(format!("fault {} over {t} ({era}): {id}: the reproducer did not run: {e}", f.name)),
            }
        }
    }
    (problems, proven)
}

/// A server that ships no extension gets only n/a in the extensions'
/// areas, each saying why (digest §17.1: never a failure, never a pass),
/// over both transports, with the [tasks] tool configured all the same.
#[test]
fn a_server_without_extensions_gets_only_na_in_the_extension_areas() {
    for t in ["stdio", "http"] {
        let mut s = Setup::new(t, "modern");
        s.quirks = vec!["no-extensions".into()];
        let res = run_all(&s);
        // Apps apply wherever a tool links a UI: none does here.
        for (area, why, at_least) in [
            ("/tasks/", "does not advertise the extension io.modelcontextprotocol/tasks", 14),
            ("/skills/", "does not advertise the extension io.modelcontextprotocol/skills", 9),
            ("/apps/", "no tool links a", 5),
        ] {
            let cases: Vec<&CaseResult> = res.values().filter(|r| r.id.starts_with("2026-07-28/") && r.id.contains(area)).collect();
            assert!(cases.len() >= at_least, "the {area} cases ran: {}", cases.len());
            for r in cases {
                assert_eq!(r.verdict, Verdict::NotApplicable, "{t}: {} {}", r.id, r.message);
                // An HTTP-only case over stdio says so first.
                let other_transport = t == "stdio" && r.message.starts_with("applies to http targets only");
                assert!(r.message.contains(why) || other_transport, "{}: {}", r.id, r.message);
            }
        }
        assert!(bad(&res).is_empty(), "{t}: {:?}", bad(&res));
        // 2025-11-25: no capabilities.tasks, so its tasks cases are n/a.
        let mut s = Setup::new(t, "legacy");
        s.quirks = vec!["no-extensions".into()];
        let res = run_all(&s);
        let cases: Vec<&CaseResult> = res.values().filter(|r| r.id.starts_with("2025-11-25/tasks/")).collect();
        assert!(cases.len() >= 12, "the 2025-11-25 tasks cases ran: {}", cases.len());
        for r in cases {
            assert_eq!(r.verdict, Verdict::NotApplicable, "{t}: {} {}", r.id, r.message);
            // The one rule of servers of both eras says it needs the
            // 2026-07-28 extension.
            let why = if r.id.ends_with("/extension-not-opt-in") {
                "does not advertise io.modelcontextprotocol/tasks"
            } else {
                "does not advertise capabilities.tasks"
            };
            assert!(r.message.contains(why), "{}: {}", r.id, r.message);
        }
        assert!(bad(&res).is_empty(), "{t}: {:?}", bad(&res));
    }
}

/// Conformant behaviour real servers show: under each quirk the reference
/// server still keeps every rule, so no case may go red, and the case the
/// quirk is about gets the verdict named here.
#[test]
fn every_quirk_keeps_every_case_green() {
    let quirks: [(&str, &str, &str, &str, Verdict); 47] = [
        // The tasks extension: a server that never makes a task (allowed:
        // the task path is not exercised), one whose tasks end at once (a
        // cancel always comes too late), one without extensions (n/a).
        ("tasks-never", "stdio", "modern", "2026-07-28/tasks/durable", Verdict::NotApplicable),
        ("tasks-never", "http", "modern", "2026-07-28/tasks/legacy-hint-ignored", Verdict::Pass),
        ("tasks-instant", "http", "modern", "2026-07-28/tasks/cancel-terminal", Verdict::Pass),
        // A task asking for input: an update naming no outstanding key is
        // refused (allowed), and a server that never makes a task.
        ("task-update-bogus-refused", "stdio", "modern", "2026-07-28/tasks/update-unknown-key-ignored", Verdict::Pass),
        ("tasks-never", "http", "modern", "2026-07-28/tasks/input-request-shape", Verdict::NotApplicable),
        // A server card (a draft) that drifts from the live server: notes only.
        ("card-drift", "http", "modern", "2026-07-28/lifecycle/discover-server-info", Verdict::Pass),
        ("no-extensions", "stdio", "modern", "2026-07-28/tasks/capability", Verdict::NotApplicable),
        // 2025-11-25's experimental tasks: a tool that runs only as a task
        // (a call without params.task is refused, and no other case calls
        // it so), and a task that ends before the cancel comes.
        ("legacy-task-required", "stdio", "legacy", "2025-11-25/tasks/required-without-task", Verdict::Pass),
        ("legacy-task-required", "http", "legacy", "2025-11-25/tools/call-invalid-arguments", Verdict::Pass),
        ("tasks-instant", "stdio", "legacy", "2025-11-25/tasks/cancel-working", Verdict::NotApplicable),
        // A tool that runs only as a task refuses a call without the extension.
        ("task-required", "stdio", "modern", "2026-07-28/tasks/refusal-names-extension", Verdict::Pass),
        // Two skills, listed in another order every other time.
        ("skills-order-varies", "http", "modern", "2026-07-28/skills/get-matches-list", Verdict::Pass),
        ("skills-order-varies", "stdio", "modern", "2026-07-28/skills/digests-match", Verdict::Pass),
        ("trigger-no-change", "http", "modern", "2026-07-28/subscriptions/list-changed-delivered", Verdict::Pass),
        ("mrtr-ask-forever", "stdio", "modern", "2026-07-28/input-required/retry", Verdict::NotApplicable),
        ("session-optional", "http", "legacy", "2025-11-25/lifecycle/http-session-required", Verdict::NotApplicable),
        ("notification-500", "http", "modern", "2026-07-28/headers/notification-202", Verdict::Pass),
        // An error to what had no readable id carries "id": null, as JSON-RPC writes it.
        ("notification-400-id-null", "http", "modern", "2026-07-28/wire/server-frames-valid", Verdict::Pass),
        ("notification-400-id-null", "http", "legacy", "2025-11-25/wire/server-frames-valid", Verdict::Pass),
        ("version-mismatch-32022", "http", "modern", "2026-07-28/headers/version-mismatch", Verdict::Pass),
        ("serverinfo-also-top-level", "stdio", "modern", "2026-07-28/lifecycle/discover-server-info", Verdict::Pass),
        ("server-name-markup", "stdio", "modern", "2026-07-28/lifecycle/discover-server-info", Verdict::Pass),
        // A refused subscription delivers nothing: its rules are n/a, never failed.
        // Results that are InputRequiredResults are judged as such, and
        // the final results they lead to are judged as always.
        ("asks-for-input", "stdio", "modern", "2026-07-28/prompts/get-listed", Verdict::Pass),
        ("asks-for-input", "http", "modern", "2026-07-28/resources/read-listed", Verdict::Pass),
        ("asks-for-input", "stdio", "modern", "2026-07-28/tools/call-content", Verdict::Pass),
        // Fixtures served but not listed: without --requirements their
        // cases do not apply (certify.rs shows the set met with them).
        ("fixtures-unlisted", "stdio", "modern", "2026-07-28/conformance/tools-call-simple-text", Verdict::NotApplicable),
        ("fixtures-unlisted", "http", "legacy", "2025-11-25/conformance/tools-call-simple-text", Verdict::NotApplicable),
        // Streams that end a little after the response (their connections
        // used again: concurrency.rs).
        ("sse-ends-later", "http", "modern", "2026-07-28/tools/call-content", Verdict::Pass),
        // Every reply in a session names it (the TypeScript SDK's server).
        ("session-id-echoed", "http", "legacy", "2025-11-25/lifecycle/http-ended-session-404", Verdict::Pass),
        // A server that stops at the end of its input, answers unwritten.
        ("eof-drops-pending", "stdio", "legacy", "2025-11-25/lifecycle/ping", Verdict::Pass),
        // A server slow to start (its reproducers wait for it: reproduce.rs).
        ("slow-start", "stdio", "legacy", "2025-11-25/lifecycle/ping", Verdict::Pass),
        ("listen-limit-reached", "stdio", "modern", "2026-07-28/subscriptions/nothing-unrequested", Verdict::NotApplicable),
        ("listen-limit-reached", "http", "modern", "2026-07-28/subscriptions/notifications-carry-id", Verdict::NotApplicable),
        // A listen backlog of 5 (every -j: concurrency.rs).
        ("small-backlog", "http", "dual", "2026-07-28/headers/name-name-case", Verdict::Pass),
        // Tools alone: the other capabilities' methods are refused with -32601.
        ("tools-only", "http", "legacy", "2025-11-25/lifecycle/undeclared-method-not-found", Verdict::Pass),
        ("tools-only", "stdio", "2025-06-18", "2025-06-18/lifecycle/completion-undeclared-not-found", Verdict::Pass),
        // An error result without structuredContent keeps every rule; there is
        // then nothing to judge against the outputSchema.
        ("error-structured-missing", "stdio", "modern", "2026-07-28/tools/call-error-conforms", Verdict::NotApplicable),
        ("error-structured-missing", "http", "legacy", "2025-11-25/tools/call-error-conforms", Verdict::NotApplicable),
        // No templates (-32601): nothing to read or walk, never ERROR.
        ("no-templates", "stdio", "2025-06-18", "2025-06-18/resources/read-template", Verdict::NotApplicable),
        ("no-templates", "stdio", "2025-03-26", "2025-03-26/lists/resources-templates-list-walk", Verdict::NotApplicable),
        ("no-templates", "http", "modern", "2026-07-28/resources/read-template", Verdict::NotApplicable),
        // Lists answered empty without their capability declared: no
        // support to declare (not a MUST failure by inference).
        ("undeclared-lists-empty", "stdio", "legacy", "2025-11-25/lifecycle/capabilities-match-handlers", Verdict::Pass),
        // Messages held for the GET stream from before the call are not
        // the call's (they were counted as misplaced).
        ("get-stream-held-logs", "http", "legacy", "2025-11-25/conformance/notifications-on-call-stream", Verdict::Pass),
        // A listen that accepts no task id: the task stream's rules were
        // not exercised (it passed on nothing).
        ("task-ids-not-accepted", "stdio", "modern", "2026-07-28/tasks/listen-no-progress-or-message", Verdict::NotApplicable),
        // A trailing slash redirected: the endpoint itself answers.
        ("redirect-trailing-slash", "http", "modern", "2026-07-28/lifecycle/discover-server-info", Verdict::Pass),
        // Asking in a result is no request on the stream.
        ("streaming-elicitation-by-result", "http", "modern", "2026-07-28/conformance/no-requests-on-stream", Verdict::Pass),
        ("streaming-elicitation-by-result", "stdio", "modern", "2026-07-28/conformance/no-requests-on-stream", Verdict::Pass),
    ];
    let listed = std::process::Command::new(refserver()).arg("--list-quirks").output().unwrap();
    let listed = String::from_utf8_lossy(&listed.stdout);
    let tested: BTreeSet<&str> = quirks.iter().map(|q| q.0).collect();
    assert_eq!(listed.lines().count(), tested.len(), "every quirk has a test here:\n{listed}");
    for (quirk, transport, era, id, verdict) in quirks {
        let mut s = Setup::new(transport, era);
        s.quirks = vec![quirk.to_string()];
        s.fixtures = ["fixtures-unlisted", "streaming-elicitation-by-result", "get-stream-held-logs"].contains(&quirk);
        let res = run_all(&s);
        let b = bad(&res);
        assert!(b.is_empty(), "quirk {quirk} ({transport}, {era}) turned cases red:\n{}", b.join("\n"));
        assert_eq!(res[id].verdict, verdict, "quirk {quirk}: {id}: {}", res[id].message);
    }
}

#[test]
fn fault_list_names_each_fault_once() {
    let f = faults();
    let names: BTreeSet<&str> = f.iter().map(|x| x.name.as_str()).collect();
    assert_eq!(names.len(), f.len());
    let v: Value = serde_json::to_value(f.iter().map(|x| &x.name).collect::<Vec<_>>()).unwrap();
    assert!(v.as_array().unwrap().len() >= 20);
}

#[test]
fn fault_listing_survives_a_closed_pipe_and_names_each_faults_targets() {
    // `--list-faults | head`: the reader goes away early (here before the
    // first line, so that every write meets a closed pipe); no panic.
    let mut child = std::process::Command::new(refserver())
        .arg("--list-faults")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let status = child.wait().unwrap();
    let mut err = String::new();
    use std::io::Read;
    child.stderr.take().unwrap().read_to_string(&mut err).unwrap();
    assert!(!err.contains("panicked"), "{err}");
    assert!(status.success(), "exit {status:?}: {err}");
    // The text listing says which cases each fault turns red.
    let text = std::process::Command::new(refserver()).arg("--list-faults").output().unwrap();
    let text = String::from_utf8_lossy(&text.stdout);
    for f in faults() {
        assert!(text.contains(&f.targets.join(", ")), "{}: its targets are listed", f.name);
    }
}

/// With no configuration at all, a server that advertises tasks gets its
/// task path judged on a tool the call policy may call (render_report:
/// read-only, closed-world): each tasks fault of the reference server
/// fails a tasks case, as it does with `[tasks]` configured. Left out,
/// rightly: the faults of a task that asks for input (its tool,
/// confirm_order, is not read-only: nothing calls it unasked) and of a
/// task seen by another identity (that needs two configured roles).
#[test]
fn tasks_faults_are_found_with_no_configuration() {
    let needs_config = |t: &str| t.contains("/tasks/update-") || t.contains("/tasks/input-") || t.ends_with("/tasks/other-role-refused");
    let mut missed = Vec::new();
    let mut judged = 0;
    for f in faults() {
        let targets: Vec<&String> = f.targets.iter().filter(|t| t.contains("/tasks/") && !needs_config(t)).collect();
        if targets.is_empty() || OLDER.contains(&f.era.as_str()) || f.era == "legacy" {
            continue;
        }
        judged += 1;
        let era = if targets.iter().any(|t| t.starts_with("2025-11-25/")) { "dual" } else { "modern" };
        let dir = common::outdir(&format!("tasks-unconfigured-{}", f.name));
        let mut cmd = common::mcpcert();
        // The header cases are HTTP's.
        let _server = if f.transport == "http" || targets.iter().all(|t| t.ends_with("/tasks/name-header-mismatch")) {
            let s = common::start_http(&["--era".into(), era.into(), "--fault".into(), f.name.clone()]);
            cmd.args(["run", "--http", &s.url]);
            Some(s)
        } else {
            cmd.args(["run", "--stdio", &format!("{} --era {era} --fault {}", refserver().display(), f.name)]);
            None
        };
        cmd.args(["tasks/", "--quiet", "--color", "never"]);
        common::report_args(&mut cmd, &dir);
        cmd.output().unwrap();
        let rep = common::report(&dir);
        let red = targets.iter().any(|t| {
            rep["cases"].as_array().unwrap().iter().any(|c| c["id"] == t.as_str() && (c["verdict"] == "fail" || c["verdict"] == "warn"))
        });
        if !red {
            missed.push(format!("{} ({}): none of {targets:?} failed", f.name, f.transport));
        }
    }
    assert!(judged >= 20, "only {judged} tasks faults found");
    assert!(missed.is_empty(), "tasks faults not found without a [tasks] tool:\n{}", missed.join("\n"));
}
