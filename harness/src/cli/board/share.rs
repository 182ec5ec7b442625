//! How the board's work is shared out and brought together: each server's
//! folder, its shard, and the merge of the shards' parts.

use super::last_result;
use mcpcert::packages::snapshot::{Listed, slug};
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

/// Each server's folder under `servers/`: its name as `slug` writes it; a
/// name that another server's also becomes (`a/b c` and `a/b_c`) gets its
/// own with a digest of the name, from the whole listing, so that every
/// shard agrees.
pub fn folders(listed: &[Listed]) -> Vec<String> {
    let mut seen: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    for l in listed {
        *seen.entry(slug(&l.name)).or_default() += 1;
    }
    listed
        .iter()
        .map(|l| {
            let s = slug(&l.name);
            if seen[&s] > 1 {
                use sha2::Digest;
                let d = sha2::Sha256::digest(l.name.as_bytes());
                format!("{s}-{:02x}{:02x}{:02x}{:02x}", d[0], d[1], d[2], d[3])
            } else {
                s
            }
        })
        .collect()
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

    fn listed(name: &str) -> Listed {
        Listed { name: name.into(), version: "1".into(), server: serde_json::json!({}), official: None, source: "t".into() }
    }

    #[test]
    fn names_that_would_share_a_folder_each_get_their_own() {
        let got = folders(&[listed("io.x/a b"), listed("io.x/a_b"), listed("io.x/c")]);
        assert_eq!(got[2], "io.x__c");
        assert!(got[0].starts_with("io.x__a_b-") && got[1].starts_with("io.x__a_b-") && got[0] != got[1], "{got:?}");
        assert_eq!(got, folders(&[listed("io.x/a b"), listed("io.x/a_b"), listed("io.x/c")]));
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
