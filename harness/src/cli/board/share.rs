//! How the board's work is shared out and brought together: each server's
//! folder, its shard, and the merge of the shards' parts.

use super::last_result;
use mcpcert::packages::snapshot::slug;
use std::path::Path;

/// Where a shard keeps the snapshot entries it could not read, for the merge.
pub const PROBLEMS: &str = "snapshot-problems.json";

pub fn read_problems(part: &Path) -> Vec<String> {
    std::fs::read_to_string(part.join(PROBLEMS)).ok().and_then(|t| serde_json::from_str(&t).ok()).unwrap_or_default()
}

/// The shard (0-based) of a server: by a digest of its name, so that a
/// server falls in the same shard whatever else the listing holds (shards
/// that fetch the registry at different moments still agree).
pub fn shard_by_name(name: &str, n: usize) -> usize {
    use sha2::Digest;
    let d = sha2::Sha256::digest(name.as_bytes());
    (u64::from_be_bytes([d[0], d[1], d[2], d[3], d[4], d[5], d[6], d[7]]) % n.max(1) as u64) as usize
}

/// A server's folder under `servers/`, from its name alone (so that it
/// never moves, whatever a night's listing holds): the name with `/` as
/// `__` when that can be read back as exactly this name (letters, digits,
/// `.`, `_`, `-`, at most one `/`, no `__`, not starting with `.`); else
/// `slug` of it, `~`, and a digest of the name (no plain folder has a `~`).
pub fn folder(name: &str) -> String {
    let plain = !name.is_empty()
        && !name.starts_with('.')
        && !name.contains("__")
        && name.matches('/').count() <= 1
        && !name.starts_with('/')
        && !name.ends_with('/')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | '/'));
    if plain {
        return slug(name);
    }
    use sha2::Digest;
    let d = sha2::Sha256::digest(name.as_bytes());
    let tag: String = d.iter().take(6).map(|b| format!("{b:02x}")).collect();
    format!("{}~{tag}", slug(name))
}

/// Copies each entry of `from` absent from `to`.
pub fn copy_new(from: &Path, to: &Path) -> std::io::Result<()> {
    for e in std::fs::read_dir(from)?.flatten() {
        let dst = to.join(e.file_name());
        if !dst.exists() {
            if e.path().is_dir() {
                copy_dir(&e.path(), &dst)?;
            } else {
                std::fs::create_dir_all(to)?;
                std::fs::copy(e.path(), dst)?;
            }
        }
    }
    Ok(())
}

/// Each server folder of `from` into `to`, unless `to` holds a newer
/// result of that server (shards that started from last night's site all
/// carry its results; the one that ran a server again has the newest).
pub fn copy_servers(from: &Path, to: &Path) -> std::io::Result<()> {
    for e in std::fs::read_dir(from)?.flatten() {
        let dst = to.join(e.file_name());
        let when = |d: &Path| last_result(d).map_or(0, |r| r.checked_at_ms);
        if dst.exists() && when(&dst) >= when(&e.path()) {
            continue;
        }
        let _ = std::fs::remove_dir_all(&dst);
        copy_dir(&e.path(), &dst)?;
    }
    Ok(())
}

fn copy_dir(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for e in std::fs::read_dir(from)?.flatten() {
        let p = e.path();
        if p.is_dir() {
            copy_dir(&p, &to.join(e.file_name()))?;
        } else {
            std::fs::copy(&p, to.join(e.file_name()))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_folder_is_the_name_s_alone_and_never_shared() {
        assert_eq!(folder("io.github.x/server-1"), "io.github.x__server-1");
        let odd = ["io.x/a b", "io.x/a_b ", "io.x/a__b", "io.x__a/b", "a/b/c", "../x", ".x/y", "io.x/ünï", "/x", ""];
        let mut all: Vec<String> = odd.iter().map(|n| folder(n)).collect();
        all.push(folder("io.x/a_b"));
        for (n, f) in odd.iter().zip(&all) {
            assert!(f.contains('~') && !f.contains('/') && !f.starts_with('.'), "{n}: {f}");
        }
        let unique: std::collections::BTreeSet<&String> = all.iter().collect();
        assert_eq!(unique.len(), all.len(), "{all:?}");
    }

    #[test]
    fn a_server_keeps_its_shard_whatever_else_is_listed() {
        let names: Vec<String> = (0..300).map(|i| format!("io.github.t/server-{i}")).collect();
        let shards: Vec<usize> = names.iter().map(|n| shard_by_name(n, 3)).collect();
        // Every shard gets a share, and a name's shard is a function of the name alone.
        for k in 0..3 {
            let n = shards.iter().filter(|s| **s == k).count();
            assert!(n > 60, "shard {k}: {n} of 300");
        }
        assert!(names.iter().zip(&shards).all(|(n, s)| shard_by_name(n, 3) == *s));
        assert_eq!(shard_by_name("io.github.t/x", 1), 0);
    }
}
