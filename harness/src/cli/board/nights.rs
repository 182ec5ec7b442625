//! The site's history: each night's outcomes by server, in
//! `history/<night>.json.gz` (gzipped, the suite digest said once per
//! night: a night of a registry is tens of thousands of entries), the last
//! `NIGHTS_ON_DISK` kept; the pages show the last `NIGHTS_KEPT`.

use super::site::{Night, Seen};
use serde_json::{Value, json};
use std::io::{Read, Write};
use std::path::Path;

/// How many nights of history the pages show, and the site keeps.
pub const NIGHTS_KEPT: usize = 30;
const NIGHTS_ON_DISK: usize = 90;

/// A night file's text (gzipped or not).
fn text(path: &Path) -> Option<String> {
    let mut s = String::new();
    if path.extension().is_some_and(|x| x == "gz") {
        flate2::read::GzDecoder::new(std::fs::File::open(path).ok()?).read_to_string(&mut s).ok()?;
    } else {
        s = std::fs::read_to_string(path).ok()?;
    }
    Some(s)
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array().into_iter().flatten().filter_map(|x| x.as_str().map(String::from)).collect()
}

/// The last nights of history, in the order they were written (labels
/// need not sort); the files of nights older than the last
/// `NIGHTS_ON_DISK` are removed. Only the nights the pages show are read
/// whole (a night of a registry is tens of thousands of entries).
pub fn read_history(site: &Path) -> Vec<(String, Night)> {
    let stamp = |text: &str| -> u64 {
        let Some(i) = text.rfind("\"written_at\":") else { return 0 };
        text[i + 13..].trim_start().chars().take_while(|c| c.is_ascii_digit()).collect::<String>().parse().unwrap_or(0)
    };
    let mut files: Vec<(u64, std::path::PathBuf)> = std::fs::read_dir(site.join("history"))
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().ends_with(".json") || e.file_name().to_string_lossy().ends_with(".json.gz"))
        .map(|e| (text(&e.path()).map(|t| stamp(&t)).unwrap_or(0), e.path()))
        .collect();
    files.sort();
    let old = files.len().saturating_sub(NIGHTS_ON_DISK);
    for (_, p) in files.drain(..old) {
        let _ = std::fs::remove_file(p);
    }
    let skip = files.len().saturating_sub(NIGHTS_KEPT);
    let mut nights: Vec<(u64, String, Night)> = files[skip..]
        .iter()
        .filter_map(|(_, path)| {
            let file = path.file_name()?.to_string_lossy().to_string();
            let name = file.strip_suffix(".gz").unwrap_or(&file).strip_suffix(".json")?.to_string();
            let v: Value = serde_json::from_str(&text(path)?).ok()?;
            let suite = v["suite"].as_str().unwrap_or("").to_string();
            let n: Night = v["servers"]
                .as_object()?
                .iter()
                .map(|(k, s)| {
                    let f = |x: &str| s[x].as_str().unwrap_or("").to_string();
                    let seen = Seen {
                        version: f("version"),
                        outcome: f("outcome"),
                        failures: s["failures"].as_u64().unwrap_or(0),
                        checked: s["checked"].as_u64().unwrap_or(0),
                        suite: s["suite"].as_str().map_or(suite.clone(), String::from),
                        regressed: strings(&s["regressed"]),
                        fixed: strings(&s["fixed"]),
                    };
                    (k.clone(), seen)
                })
                .collect();
            let name = v["night"].as_str().map_or(name, String::from);
            Some((v["written_at"].as_u64().unwrap_or(0), name, n))
        })
        .collect();
    nights.sort_by(|a, b| (a.0, &a.1).cmp(&(b.0, &b.1)));
    nights.into_iter().map(|(_, n, s)| (n, s)).collect()
}

/// Records this night (`history/NIGHT.json.gz`): the suite digest once,
/// a server's own only when it differs.
pub fn write_night(site: &Path, this: &str, now: &Night) {
    let _ = std::fs::create_dir_all(site.join("history"));
    let mut suites: std::collections::BTreeMap<&str, usize> = std::collections::BTreeMap::new();
    for s in now.values() {
        *suites.entry(s.suite.as_str()).or_default() += 1;
    }
    let suite = suites.into_iter().max_by_key(|(_, n)| *n).map(|(s, _)| s.to_string()).unwrap_or_default();
    let servers: serde_json::Map<String, Value> = now
        .iter()
        .map(|(k, s)| {
            let mut v = json!({"version": s.version, "outcome": s.outcome, "failures": s.failures, "checked": s.checked});
            if s.suite != suite {
                v["suite"] = json!(s.suite);
            }
            if !s.regressed.is_empty() {
                v["regressed"] = json!(s.regressed);
            }
            if !s.fixed.is_empty() {
                v["fixed"] = json!(s.fixed);
            }
            (k.clone(), v)
        })
        .collect();
    let night = json!({ "night": this, "suite": suite, "servers": servers, "written_at": super::now_ms() });
    let name = format!("history/{}.json", super::share::folder(this));
    let _ = std::fs::remove_file(site.join(&name));
    if let Ok(f) = std::fs::File::create(site.join(format!("{name}.gz"))) {
        let mut z = flate2::write::GzEncoder::new(f, flate2::Compression::default());
        let _ = z.write_all(night.to_string().as_bytes()).and_then(|_| z.finish().map(drop));
    }
}
