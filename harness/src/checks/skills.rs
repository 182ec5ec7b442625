//! The skills extension (`io.modelcontextprotocol/skills`, SEP-2640) in
//! 2026-07-28: the `skills/list` walk and its entries, each skill's files
//! read and checked against their digests and sizes, SKILL.md's
//! frontmatter against the entry's, `skills/get` against the listing, and
//! an unknown skill refused. Cases apply only to a server that advertises
//! the extension; every request declares it.

use super::judge::skills::{
    content_bytes, entry_problems, frontmatter_differences, frontmatter_scalars, limit_problem, name_rule_problem, page_problems,
    path_problem, resources_problems, sha256_digest,
};
use super::skill_list::{SkillList, request};
use super::{Check, Cx, Outcome};
use crate::record::Exchange;
use crate::session::Msg;
use crate::wire::{Revision, brief};
use serde::Deserialize;
use serde_json::{Value, json};

/// The most skill files one case reads.
const MAX_FILES: usize = 64;
/// The most skills `get-matches-list` asks for by URI.
const MAX_GETS: usize = 10;

/// Which rule a `skill_probe` case judges.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SkillCheck {
    ListShape,
    NameMatchesPath,
    ResourcesComplete,
    DigestsMatch,
    FrontmatterMatchesFile,
    GetMatchesList,
    GetUnknown,
    DirectoryRead,
    DirectoryReadFile,
    WithinLimits,
    NameRules,
    NamesUnique,
}

/// One rule of the skills extension.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SkillProbe {
    check: SkillCheck,
}

impl Check for SkillProbe {
    const NAME: &'static str = "skill_probe";
    const ABOUT: &'static str =
        "one rule (`check`) of the skills extension: the skills/list walk, its entries, the skills' files and digests, skills/get";
    const REVISIONS: &'static [Revision] = &Revision::STATELESS;

    async fn run(&self, cx: &Cx<'_>) -> Outcome {
        if self.check == SkillCheck::GetUnknown {
            return get_unknown(cx).await;
        }
        let dirs = matches!(self.check, SkillCheck::DirectoryRead | SkillCheck::DirectoryReadFile);
        if let Some(why) = dirs.then(|| super::skill_dirs::not_declared(cx)).flatten() {
            return Outcome::na(why);
        }
        let list = match cx.facts.skill_list(cx).await {
            Ok(l) => l,
            Err(e) => return Outcome::error(e),
        };
        if self.check == SkillCheck::ListShape {
            return list_shape(&list);
        }
        let mut out = Outcome { exchanges: list.pages.clone(), ..Default::default() };
        if let Some(why) = &list.cut {
            out.incomplete(&format!("the skills/list walk is incomplete ({why})"));
            return out;
        }
        if list.entries.is_empty() {
            out.set_na("the server lists no skills (an empty listing is allowed), so there is no skill to judge");
            return out;
        }
        // Entries too broken to read are the list-shape case's finding.
        let entries: Vec<&Value> = list.entries.iter().filter(|e| entry_problems(e).is_empty()).collect();
        match self.check {
            SkillCheck::NameMatchesPath => {
                for p in entries.iter().filter_map(|e| path_problem(e)) {
                    out.fail(p);
                }
            }
            SkillCheck::ResourcesComplete => {
                for p in entries.iter().flat_map(|e| resources_problems(e)) {
                    out.fail(p);
                }
            }
            SkillCheck::DigestsMatch => digests(cx, &entries, &mut out).await,
            SkillCheck::FrontmatterMatchesFile => frontmatter(cx, &entries, &mut out).await,
            SkillCheck::GetMatchesList => get_matches(cx, &entries, &mut out).await,
            SkillCheck::DirectoryRead => super::skill_dirs::directory_read(cx, &entries, &mut out).await,
            SkillCheck::DirectoryReadFile => super::skill_dirs::not_a_directory(cx, &entries, &mut out).await,
            SkillCheck::NameRules => {
                for e in &entries {
                    let uri = e.get("uri").and_then(Value::as_str).unwrap_or("?");
                    let name = e.pointer("/frontmatter/name").and_then(Value::as_str).unwrap_or_default();
                    if let Some(why) = name_rule_problem(name) {
                        out.fail(format!("{uri}: the skill name {name:?} breaks the Agent Skills naming rules: {why}"));
                    }
                }
            }
            SkillCheck::NamesUnique => {
                let mut by_name: std::collections::BTreeMap<&str, Vec<&str>> = Default::default();
                for e in &entries {
                    let name = e.pointer("/frontmatter/name").and_then(Value::as_str).unwrap_or_default();
                    by_name.entry(name).or_default().push(e.get("uri").and_then(Value::as_str).unwrap_or("?"));
                }
                for (name, uris) in by_name.iter().filter(|(_, u)| u.len() > 1) {
                    out.fail(format!("{} skills of the listing share the name {name:?}: {}", uris.len(), uris.join(", ")));
                }
            }
            SkillCheck::WithinLimits => {
                let counted: Vec<Result<(), String>> = entries.iter().filter_map(|e| limit_problem(e)).collect();
                if counted.is_empty() {
                    out.set_na("every skill's resources are \"dynamic\": its entry offers nothing to count");
                }
                for p in counted.into_iter().filter_map(Result::err) {
                    out.fail(p);
                }
            }
            SkillCheck::ListShape | SkillCheck::GetUnknown => {}
        }
        out
    }
}

/// Each page: resultType, skills array, cursor, caching attributes; each
/// entry: uri, frontmatter (name, description), resources.
fn list_shape(list: &SkillList) -> Outcome {
    let mut out = Outcome { exchanges: list.pages.clone(), ..Default::default() };
    for ex in &list.pages {
        if let Some(e) = &ex.error {
            out.set_error(format!("{}: {e}", ex.label));
        } else if let Some(err) = ex.response.as_ref().and_then(|r| r.get("error")) {
            out.fail(format!(
                "{}: a server that advertises the skills extension must implement skills/list; it answered {}",
                ex.label,
                brief(err)
            ));
        } else if let Some(r) = ex.result() {
            for p in page_problems(r) {
                out.fail(format!("{}: {p}", ex.label));
            }
            for e in r.get("skills").and_then(Value::as_array).into_iter().flatten() {
                for p in entry_problems(e) {
                    out.fail(format!("{}: {p}", ex.label));
                }
            }
        }
    }
    if let Some(why) = list.cut.as_ref().filter(|_| out.failures.is_empty())
        && !out.is_error()
    {
        out.incomplete(&format!("the skills/list walk is incomplete ({why})"));
    }
    out
}

/// `resources/read` of a skill file, declaring the extension: its bytes.
async fn read_file(cx: &Cx<'_>, uri: &str, out: &mut Outcome) -> Option<Vec<u8>> {
    let body = request(cx, "resources/read", json!({"uri": uri}));
    let ex = match cx.on_main(&format!("resources/read {uri}"), &body).await {
        Ok(e) => e,
        Err(e) => {
            out.set_error(e.to_string());
            return None;
        }
    };
    let got = if let Some(e) = &ex.error {
        out.set_error(format!("resources/read {uri}: {e}"));
        None
    } else if let Some(err) = ex.response.as_ref().and_then(|r| r.get("error")) {
        out.fail(format!("{uri}: a file the skill's entry lists must be readable with resources/read; it answered {}", brief(err)));
        None
    } else {
        let items = ex.result().and_then(|r| r.get("contents")).and_then(Value::as_array).cloned().unwrap_or_default();
        match items.iter().find(|i| i.get("uri").and_then(Value::as_str) == Some(uri)).or(items.first()).map(content_bytes) {
            Some(Ok(b)) => Some(b),
            Some(Err(e)) => {
                out.fail(format!("{uri}: {e}"));
                None
            }
            None => {
                out.fail(format!("{uri}: resources/read gave no contents ({})", ex.summary()));
                None
            }
        }
    };
    out.exchanges.push(ex);
    got
}

/// Every listed file read: the SHA-256 of its bytes is its `digest`, its
/// length its `size`.
async fn digests(cx: &Cx<'_>, entries: &[&Value], out: &mut Outcome) {
    let files: Vec<&Value> = entries.iter().filter_map(|e| e.get("resources").and_then(Value::as_array)).flatten().collect();
    if files.is_empty() {
        return out.set_na("every skill listed declares its resources \"dynamic\": there are no digests to check");
    }
    if files.len() > MAX_FILES {
        out.exchanges.push(Exchange::note("files checked", format!("the first {MAX_FILES} of {} listed files are read", files.len())));
    }
    for f in files.into_iter().take(MAX_FILES) {
        let uri = f.get("uri").and_then(Value::as_str).unwrap_or_default();
        let Some(bytes) = read_file(cx, uri, out).await else { continue };
        let (want_digest, want_size) = (f.get("digest").and_then(Value::as_str).unwrap_or(""), f.get("size").and_then(Value::as_u64));
        let got = sha256_digest(&bytes);
        if got != want_digest {
            out.fail(format!(
                "{uri}: the entry's digest is {want_digest}, but the file served hashes to {got} (sha256: and 64 lowercase hex digits of the raw bytes)"
            ));
        }
        if want_size != Some(bytes.len() as u64) {
            out.fail(format!("{uri}: the entry's size is {want_size:?} bytes, the file served has {}", bytes.len()));
        }
    }
}

/// Each skill's SKILL.md read: its frontmatter holds what the entry's
/// `frontmatter` says (flat fields compared; nested ones left out, said so).
async fn frontmatter(cx: &Cx<'_>, entries: &[&Value], out: &mut Outcome) {
    for e in entries.iter().take(MAX_FILES) {
        let uri = e.get("uri").and_then(Value::as_str).unwrap_or_default();
        let Some(bytes) = read_file(cx, uri, out).await else { continue };
        let text = String::from_utf8_lossy(&bytes);
        match frontmatter_scalars(&text) {
            Err(why) => out.fail(format!("{uri}: {why}")),
            Ok((file, nested)) => {
                if !nested.is_empty() {
                    out.exchanges.push(Exchange::note(
                        format!("{uri}: not compared"),
                        format!(
                            "nested or multi-line frontmatter fields ({}) are not compared: mcpcert reads flat YAML",
                            nested.join(", ")
                        ),
                    ));
                }
                let entry = e.get("frontmatter").and_then(Value::as_object).cloned().unwrap_or_default();
                for d in frontmatter_differences(&entry, &file, &nested) {
                    out.fail(format!("{uri}: the entry's frontmatter must be identical in content to SKILL.md's: {d}"));
                }
            }
        }
    }
}

/// `skills/get` of listed skills: the same entry as the listing's.
async fn get_matches(cx: &Cx<'_>, entries: &[&Value], out: &mut Outcome) {
    for e in entries.iter().take(MAX_GETS) {
        let uri = e.get("uri").and_then(Value::as_str).unwrap_or_default();
        let ex = match cx.on_main(&format!("skills/get {uri}"), &request(cx, "skills/get", json!({"uri": uri}))).await {
            Ok(x) => x,
            Err(err) => return out.set_error(err.to_string()),
        };
        let code = ex.response.as_ref().and_then(|r| r.pointer("/error/code")).and_then(Value::as_i64);
        if let Some(err) = &ex.error {
            out.set_error(format!("skills/get {uri}: {err}"));
        } else if code == Some(-32601) {
            out.exchanges.push(ex);
            out.incomplete("skills/get is not served (-32601; skills/get-unknown judges that)");
            return;
        } else if let Some(err) = ex.response.as_ref().and_then(|r| r.get("error")) {
            out.fail(format!("skills/get of the listed skill {uri} must give its entry; it answered {}", brief(err)));
        } else {
            let got = ex.result().and_then(|r| r.get("skill")).cloned().unwrap_or(Value::Null);
            for k in ["uri", "frontmatter", "resources"] {
                if got.get(k) != e.get(k) {
                    out.fail(format!(
                        "skills/get {uri}: skill.{k} is {}, the listing's is {} (the same entry, unless the skill changed in between)",
                        got.get(k).map_or("nothing".into(), brief),
                        e.get(k).map_or("nothing".into(), brief)
                    ));
                }
            }
        }
        out.exchanges.push(ex);
    }
}

/// `skills/get` of a skill nobody serves: -32602.
async fn get_unknown(cx: &Cx<'_>) -> Outcome {
    let uri = "skill://mcpcert-no-such-skill-5f1c/SKILL.md";
    let body = request(cx, "skills/get", json!({"uri": uri}));
    let label = "skills/get of a skill the server does not serve";
    let ex = match cx.negative(&Msg::new(cx.rev, label, &body)).await {
        Ok(e) => e,
        Err(e) => return Outcome::error(e.to_string()),
    };
    let mut out = Outcome::default();
    if let Some(e) = &ex.error {
        out.set_error(format!("{label}: {e}"));
    } else {
        match ex.response.as_ref().and_then(|r| r.get("error")) {
            Some(err) if err.get("code").and_then(Value::as_i64) == Some(-32602) => {}
            Some(err) if err.get("code").and_then(Value::as_i64) == Some(-32601) => {
                out.fail(format!("a server that advertises the skills extension must implement skills/get; it answered {}", brief(err)))
            }
            Some(err) => {
                out.fail(format!("skills/get of a URI that names no skill the server serves must answer -32602; got {}", brief(err)))
            }
            None => out.fail(format!("skills/get of a URI that names no skill the server serves must answer -32602; got {}", ex.summary())),
        }
    }
    out.exchanges.push(ex);
    out
}
