//! `mcpcert board`: a snapshot of server.json entries turned into a site —
//! each outcome what happened (pass, fail, needs-secret, install-failed,
//! crashed, hung, cannot-run), a server kept from the network by its
//! namespace, results reused while nothing changed, history across two
//! nights, and shards merged into the same site. The packages are fake
//! installs in the cache whose programs start the reference server (real
//! registry packages: scripts/board.sh).

mod common;
use common::*;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// A cache folder as an npm install leaves it, whose program runs `script`.
fn fake_npm(cache: &Path, name: &str, version: &str, script: &str) {
    let d = cache.join(format!("npm/{name}@{version}"));
    write(&d.join(format!("node_modules/{name}/package.json")), &format!(r#"{{"name":"{name}","bin":"cli.js"}}"#));
    let bin = d.join(format!("node_modules/.bin/{name}"));
    write(&bin, &format!("#!/bin/sh\n{script}\n"));
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o755)).unwrap();
    write(&d.join(".mcpcert-installed"), "");
}

fn npm_entry(name: &str, version: &str, extra: Value) -> Value {
    let mut p = json!({"registryType": "npm", "identifier": name, "version": version, "transport": {"type": "stdio"}});
    for (k, v) in extra.as_object().unwrap() {
        p[k] = v.clone();
    }
    json!({"server": {"name": format!("io.github.test/{name}"), "description": format!("{name} for the board test"), "version": version, "packages": [p]},
           "_meta": {"io.modelcontextprotocol.registry/official": {"status": "active", "isLatest": true}}})
}

struct Board {
    dir: PathBuf,
    cache: PathBuf,
    http: HttpServer,
    listener: std::net::TcpListener,
}

/// The snapshot (one listing page) and the cache of its fake installs.
fn setup(name: &str) -> Board {
    let dir = outdir(name);
    let cache = dir.join("cache");
    let refsrv = refserver().display().to_string();
    let http = start_http(&[]);
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    fake_npm(&cache, "clean-server", "1.0.0", &format!("exec {refsrv} --era modern"));
    // It tries to reach a listener of this test before it serves.
    fake_npm(
        &cache,
        "reaching-server",
        "1.0.0",
        &format!(
            "python3 -c \"import socket; s=socket.socket(); s.settimeout(1); s.connect(('127.0.0.1', {port}))\" 2>/dev/null\nexec {refsrv} --era modern"
        ),
    );
    fake_npm(&cache, "faulty-server", "1.0.0", &format!("exec {refsrv} --era modern"));
    // Its next version breaks a MUST of lifecycle/.
    fake_npm(&cache, "faulty-server", "1.0.1", &format!("exec {refsrv} --era modern --fault extension-id-unprefixed"));
    // The next one fixes it again.
    fake_npm(&cache, "faulty-server", "1.0.2", &format!("exec {refsrv} --era modern"));
    fake_npm(&cache, "crashing-server", "1.0.0", "echo 'cannot start: missing config' >&2; exit 1");
    // It is given a secret, and prints it as it crashes.
    fake_npm(&cache, "leaky-server", "1.0.0", "echo \"cannot start with token $LEAKY_TOKEN\" >&2; echo \"token $LEAKY_TOKEN\"; exit 1");
    fake_npm(&cache, "hanging-server", "1.0.0", "exec sleep 600");
    let b = Board { dir, cache, http, listener };
    snapshot(&b, "1.0.0", false);
    b
}

/// The snapshot, with the faulty server at `faulty_version`, and the
/// crashing server deleted from the registry when `crashing_deleted`.
fn snapshot(b: &Board, faulty_version: &str, crashing_deleted: bool) {
    let mut crashing = npm_entry("crashing-server", "1.0.0", json!({}));
    if crashing_deleted {
        crashing["_meta"]["io.modelcontextprotocol.registry/official"]["status"] = json!("deleted");
    }
    let page = json!({"servers": [
        npm_entry("clean-server", "1.0.0", json!({})),
        npm_entry("reaching-server", "1.0.0", json!({})),
        npm_entry("faulty-server", faulty_version, json!({})),
        crashing,
        npm_entry("leaky-server", "1.0.0", json!({"environmentVariables": [{"name": "LEAKY_TOKEN", "isRequired": true, "isSecret": true}]})),
        npm_entry("hanging-server", "1.0.0", json!({})),
        npm_entry("secret-server", "1.0.0", json!({"environmentVariables": [{"name": "SECRET_SERVER_KEY", "isRequired": true, "isSecret": true}]})),
        npm_entry("uninstallable-server", "1.0.0", json!({"registryBaseUrl": "http://127.0.0.1:9"})),
        {"server": {"name": "io.github.test/bundle-only", "description": "an MCPB bundle", "version": "2.0.0",
                    "packages": [{"registryType": "mcpb", "identifier": "https://example.invalid/x.mcpb", "version": "2.0.0", "fileSha256": "00", "transport": {"type": "stdio"}}]}},
        {"server": {"name": "io.github.test/remote-server", "description": "a remote", "version": "3.0.0",
                    "remotes": [{"type": "streamable-http", "url": b.http.url}]}},
    ], "metadata": {"count": 10}});
    write(&b.dir.join("snapshot/page1.json"), &page.to_string());
}

/// The secret the board is given for the leaky server.
const LEAKY: &str = "board-secret-6f1d2c";

/// Every file under `dir` whose text holds `needle`.
fn files_holding(dir: &Path, needle: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(files_holding(&p, needle));
        } else if std::fs::read(&p).is_ok_and(|b| String::from_utf8_lossy(&b).contains(needle)) {
            out.push(p);
        }
    }
    out
}

fn board(b: &Board, out: &str, extra: &[&str]) -> (i32, String) {
    let o = mcpcert()
        .arg("board")
        .arg(b.dir.join("snapshot"))
        .arg("--out")
        .arg(b.dir.join(out))
        .arg("--cache")
        .arg(&b.cache)
        .args(["--budget-s", "8"])
        .args(extra)
        .args(["--", "--revision", "2026-07-28", "lifecycle/"])
        .env("npm_config_fetch_retries", "0")
        .env_remove("SECRET_SERVER_KEY")
        .env_remove("MCPCERT_INPUT_SECRET_SERVER_KEY")
        .env("MCPCERT_INPUT_LEAKY_TOKEN", LEAKY)
        .output()
        .unwrap();
    (o.status.code().unwrap_or(-1), format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr)))
}

fn read(p: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))).unwrap()
}

/// name → outcome, from board.json.
fn outcomes(site: &Path) -> std::collections::BTreeMap<String, String> {
    read(&site.join("board.json"))["servers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["server"]["name"].as_str().unwrap().to_string(),
                s["_meta"]["io.github.mcpcert/conformance"]["outcome"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// board.json without what changes from run to run: times, and the
/// wording of a crash (whether the server's stdin or its stdout was found
/// closed first is a race).
fn stable(site: &Path) -> Value {
    let mut v = read(&site.join("board.json"));
    for s in v["servers"].as_array_mut().unwrap() {
        let m = &mut s["_meta"]["io.github.mcpcert/conformance"];
        m["checkedAt"] = Value::Null;
        if m["outcome"] == "crashed" {
            m["reason"] = Value::Null;
        }
    }
    v
}

#[test]
fn a_snapshot_becomes_a_site_with_each_outcome_said() {
    if mcpcert::packages::find_program("npm").is_none() {
        eprintln!("npm is not on PATH: the npm entries cannot be picked here; skipped");
        return;
    }
    let b = setup("board-main");
    let (code, console) = board(&b, "site", &["--night", "night-1"]);
    assert_eq!(code, 0, "{console}");
    let site = b.dir.join("site");
    let got = outcomes(&site);
    let want: Vec<(&str, &str)> = vec![
        ("io.github.test/clean-server", "pass"),
        ("io.github.test/crashing-server", "crashed"),
        ("io.github.test/leaky-server", "crashed"),
        ("io.github.test/faulty-server", "pass"),
        ("io.github.test/hanging-server", "hung"),
        ("io.github.test/bundle-only", "cannot-run"),
        ("io.github.test/reaching-server", "pass"),
        ("io.github.test/remote-server", "pass"),
        ("io.github.test/secret-server", "needs-secret"),
        ("io.github.test/uninstallable-server", "install-failed"),
    ];
    let want: std::collections::BTreeMap<String, String> = want.into_iter().map(|(a, b)| (a.into(), b.into())).collect();
    assert_eq!(got, want, "{console}");
    let result = |slug: &str| read(&site.join(format!("servers/io.github.test__{slug}/result.json")));
    assert_eq!(
        result("bundle-only")["reason"],
        "package:1 (mcpb https://example.invalid/x.mcpb@2.0.0 over stdio): an MCPB bundle: mcpcert does not start those yet"
    );
    assert!(result("secret-server")["reason"].as_str().unwrap().contains("SECRET_SERVER_KEY or MCPCERT_INPUT_SECRET_SERVER_KEY"));
    let crashed = result("crashing-server");
    assert!(crashed["reason"].as_str().unwrap().contains("process exited: exit status: 1"), "{crashed}");
    assert!(crashed["detail"].as_str().unwrap().contains("cannot start: missing config"), "{crashed}");
    // The secret reached the server (it printed it) and nothing the board
    // writes: not the site, not the board's console.
    let leaky = result("leaky-server");
    assert!(leaky["detail"].as_str().unwrap().contains("cannot start with token"), "{leaky}");
    assert_eq!(files_holding(&site, LEAKY), Vec::<PathBuf>::new());
    assert!(!console.contains(LEAKY), "{console}");
    // A version whose run never reached the server keeps its result, and
    // no verdict list of errors to diff against.
    let crashed_version = site.join("servers/io.github.test__crashing-server/versions/1.0.0");
    assert!(crashed_version.join("result.json").is_file() && !crashed_version.join("verdicts.txt").exists());
    assert!(result("uninstallable-server")["detail"].as_str().unwrap().contains("npm"), "{}", result("uninstallable-server"));
    // The index, a page, a badge.
    let index = std::fs::read_to_string(site.join("index.html")).unwrap();
    assert!(index.contains("servers/io.github.test__clean-server/index.html") && index.contains("id=\"outcome\""));
    let page = std::fs::read_to_string(site.join("servers/io.github.test__clean-server/index.html")).unwrap();
    assert!(page.contains("report/report.html") && page.contains("night-1"));
    let badge = std::fs::read_to_string(site.join("servers/io.github.test__hanging-server/badge.svg")).unwrap();
    assert!(badge.starts_with("<svg") && badge.contains("hung"));

    // The sandbox: where the machine gives a namespace, the server that
    // tries to reach this test's listener cannot, and its page says so.
    let sandbox = result("reaching-server")["sandbox"].as_str().unwrap().to_string();
    if sandbox.starts_with("network namespace") {
        assert!(b.listener.accept().is_err(), "the server reached the network from its namespace");
        let page = std::fs::read_to_string(site.join("servers/io.github.test__reaching-server/index.html")).unwrap();
        assert!(page.contains("no network during the run"));
    } else {
        eprintln!("no network namespace on this machine: {sandbox}");
    }

    // Night two: nothing changed but the faulty server's version, which
    // breaks a rule: only it runs again, and the history says it regressed.
    snapshot(&b, "1.0.1", false);
    let (code, console) = board(&b, "site", &["--night", "night-2"]);
    assert_eq!(code, 0, "{console}");
    // Those whose outcome came before any run (a secret missing, an install
    // that failed, no entry to run) are settled again, without a run.
    assert_eq!(console.matches("[unchanged: not run again]").count(), 6, "{console}");
    assert!(console.contains("board: 1 server(s) run, 3 settled without a run"), "{console}");
    assert_eq!(outcomes(&site)["io.github.test/faulty-server"], "fail");
    let changes = read(&site.join("board.json"))["changes"].clone();
    assert_eq!(changes.as_array().unwrap().len(), 1, "{changes}");
    assert_eq!(changes[0]["name"], "io.github.test/faulty-server");
    assert_eq!(changes[0]["regression"], true);
    assert!(changes[0]["change"].as_str().unwrap().contains("pass → fail (version 1.0.0 → 1.0.1)"), "{changes}");
    // Case by case, as mcpcert diff compares the two reports: the broken
    // rule's case regressed, and nothing else changed.
    let regressed = changes[0]["regressed"].clone();
    assert_eq!(regressed, json!(["2026-07-28/lifecycle/extension-identifiers"]), "{changes}");
    assert!(changes[0]["change"].as_str().unwrap().contains("regressed: 2026-07-28/lifecycle/extension-identifiers"), "{changes}");
    let faulty = result("faulty-server");
    assert_eq!(faulty["case_changes"].as_array().unwrap().len(), 1, "{faulty}");
    assert_eq!(faulty["case_changes"][0]["kind"], "regression");
    assert_eq!((faulty["case_changes"][0]["old"].as_str(), faulty["case_changes"][0]["new"].as_str()), (Some("pass"), Some("fail")));
    assert!(faulty["compared_with"].as_str().unwrap().starts_with("1.0.0 checked "), "{faulty}");
    let page = std::fs::read_to_string(site.join("servers/io.github.test__faulty-server/index.html")).unwrap();
    assert!(page.contains("night-1") && page.contains("night-2"));
    assert!(page.contains("id=\"case-changes\"") && page.contains("<code>2026-07-28/lifecycle/extension-identifiers</code>"), "{page}");
    assert!(page.contains("regressed: 2026-07-28/lifecycle/extension-identifiers"), "{page}");
    // Each version keeps its result and verdict list.
    for v in ["1.0.0", "1.0.1"] {
        let list = std::fs::read_to_string(site.join(format!("servers/io.github.test__faulty-server/versions/{v}/verdicts.txt"))).unwrap();
        let want = if v == "1.0.0" {
            "pass 2026-07-28/lifecycle/extension-identifiers"
        } else {
            "fail 2026-07-28/lifecycle/extension-identifiers"
        };
        assert!(list.lines().any(|l| l == want), "{v}: {list}");
        assert!(page.contains(&format!("versions/{v}/verdicts.txt")), "{page}");
    }
    assert!(std::fs::read_to_string(site.join("index.html")).unwrap().contains("regression <b>io.github.test/faulty-server</b>"));

    // Night three: the next version fixes it, and says which case; the
    // crashing server was deleted from the registry: off the board.
    snapshot(&b, "1.0.2", true);
    let (code, console) = board(&b, "site", &["--night", "night-3"]);
    assert_eq!(code, 0, "{console}");
    assert!(console.contains("io.github.test/crashing-server@1.0.0: deleted from the registry"), "{console}");
    let board_json = read(&site.join("board.json"));
    let changes = board_json["changes"].clone();
    assert_eq!(changes.as_array().unwrap().len(), 2, "{changes}");
    assert_eq!(changes[0]["name"], "io.github.test/faulty-server", "{changes}");
    assert_eq!(changes[1]["name"], "io.github.test/crashing-server", "{changes}");
    assert!(changes[1]["change"].as_str().unwrap().starts_with("off the board: deleted from the registry at version 1.0.0"), "{changes}");
    assert!(!outcomes(&site).contains_key("io.github.test/crashing-server"));
    assert_eq!(board_json["deleted"][0]["name"], "io.github.test/crashing-server");
    assert!(!std::fs::read_to_string(site.join("index.html")).unwrap().contains("servers/io.github.test__crashing-server/index.html"));
    assert_eq!(
        (changes[0]["regression"].clone(), changes[0]["fixed"].clone()),
        (json!(false), json!(["2026-07-28/lifecycle/extension-identifiers"]))
    );
    let page = std::fs::read_to_string(site.join("servers/io.github.test__faulty-server/index.html")).unwrap();
    assert!(
        page.contains("fixed: 2026-07-28/lifecycle/extension-identifiers")
            && page.contains("regressed: 2026-07-28/lifecycle/extension-identifiers"),
        "{page}"
    );
    assert_eq!(files_holding(&site, LEAKY), Vec::<PathBuf>::new());
}

#[test]
fn shards_merged_give_the_site_of_one_run() {
    if mcpcert::packages::find_program("npm").is_none() {
        eprintln!("npm is not on PATH; skipped");
        return;
    }
    let b = setup("board-shards");
    let (code, console) = board(&b, "whole", &["--night", "n1"]);
    assert_eq!(code, 0, "{console}");
    for k in 1..=3 {
        let (code, console) = board(&b, &format!("part{k}"), &["--night", "n1", "--shard", &format!("{k}/3")]);
        assert_eq!(code, 0, "{console}");
    }
    let o = mcpcert()
        .arg("board")
        .arg("--out")
        .arg(b.dir.join("merged"))
        .args(["--night", "n1", "--merge"])
        .args((1..=3).map(|k| b.dir.join(format!("part{k}"))))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(stable(&b.dir.join("merged")), stable(&b.dir.join("whole")));
}

/// A registry's API on loopback: two pages of saved listings, the second
/// reached by the first's cursor; every request's path and query kept.
fn registry_api(pages: Vec<Value>) -> (String, std::sync::Arc<std::sync::Mutex<Vec<String>>>) {
    use std::io::{BufRead, Write};
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", l.local_addr().unwrap());
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let log = seen.clone();
    std::thread::spawn(move || {
        for s in l.incoming().flatten() {
            let mut r = std::io::BufReader::new(s.try_clone().unwrap());
            let mut line = String::new();
            r.read_line(&mut line).unwrap();
            loop {
                let mut h = String::new();
                if r.read_line(&mut h).unwrap_or(0) == 0 || h == "\r\n" {
                    break;
                }
            }
            let target = line.split(' ').nth(1).unwrap_or("").to_string();
            log.lock().unwrap().push(target.clone());
            let i = if target.contains("cursor=page2") { 1 } else { 0 };
            let body = pages[i].to_string();
            let mut s = s;
            let _ = write!(
                s,
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    (url, seen)
}

#[test]
fn the_snapshot_can_come_from_a_registry_api() {
    let dir = outdir("board-api");
    let http = start_http(&[]);
    let remote = |name: &str| {
        json!({"server": {"name": format!("io.github.test/{name}"), "description": "a remote", "version": "1.0.0",
                          "remotes": [{"type": "streamable-http", "url": http.url}]},
               "_meta": {"io.modelcontextprotocol.registry/official": {"status": "active", "isLatest": true}}})
    };
    let pages = vec![
        json!({"servers": [remote("first")], "metadata": {"count": 1, "nextCursor": "page2"}}),
        json!({"servers": [remote("second")], "metadata": {"count": 1}}),
    ];
    let (url, seen) = registry_api(pages);
    let o = mcpcert()
        .arg("board")
        .args(["--registry", &url, "--updated-since", "2026-12-01T00:00:00Z", "--night", "n1", "--out"])
        .arg(dir.join("site"))
        .args(["--", "--revision", "2026-07-28", "lifecycle/discover"])
        .output()
        .unwrap();
    let console = format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    assert_eq!(o.status.code(), Some(0), "{console}");
    let got = outcomes(&dir.join("site"));
    assert_eq!(got.get("io.github.test/first").map(String::as_str), Some("pass"), "{console}");
    assert_eq!(got.get("io.github.test/second").map(String::as_str), Some("pass"), "{console}");
    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 2, "{seen:?}");
    assert!(
        seen[0].starts_with("/v0.1/servers?limit=100&version=latest&include_deleted=true&updated_since=2026-12-01T00%3A00%3A00Z"),
        "{seen:?}"
    );
    assert!(seen[1].contains("cursor=page2") && seen[1].contains("updated_since="), "{seen:?}");
}
