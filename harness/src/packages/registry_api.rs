//! The registry's read-only API as a snapshot: `GET {base}/v0.1/servers`
//! with `limit`, `version=latest` and `include_deleted=true`, then each page's `metadata.nextCursor` as `cursor` (and
//! `updated_since` when given), every page saved as it came
//! (`page-0001.json`, …) for `snapshot::read`. Bounded: at most
//! `MAX_PAGES` pages, 16 MiB a page, 60 s a request.

use std::path::{Path, PathBuf};
use std::time::Duration;

pub const MAX_PAGES: usize = 2000;
const MAX_PAGE_BYTES: usize = 16 << 20;

/// Fetch every page into `dir`; the files written.
pub fn fetch(base: &str, updated_since: Option<&str>, dir: &Path) -> Result<Vec<PathBuf>, String> {
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(|e| e.to_string())?;
    rt.block_on(fetch_pages(base, updated_since, dir))
}

async fn fetch_pages(base: &str, updated_since: Option<&str>, dir: &Path) -> Result<Vec<PathBuf>, String> {
    let root = reqwest::Url::parse(base).map_err(|e| format!("--registry `{base}`: {e}"))?;
    if !matches!(root.scheme(), "http" | "https") {
        return Err(format!("--registry `{base}` is not an http(s) URL"));
    }
    let client = crate::transport::one_off_client(root.scheme() == "https")?;
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut files = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        if files.len() >= MAX_PAGES {
            return Err(format!("the registry gave more than {MAX_PAGES} pages; stopped there"));
        }
        let mut url = root.join("v0.1/servers").map_err(|e| e.to_string())?;
        {
            let mut q = url.query_pairs_mut();
            q.append_pair("limit", "100");
            // The latest version of each server only: the board runs no
            // other; and the deleted ones, which the board takes off.
            q.append_pair("version", "latest");
            q.append_pair("include_deleted", "true");
            if let Some(c) = &cursor {
                q.append_pair("cursor", c);
            }
            if let Some(t) = updated_since {
                q.append_pair("updated_since", t);
            }
        }
        let resp = tokio::time::timeout(Duration::from_secs(60), client.get(url.clone()).header("Accept", "application/json").send())
            .await
            .map_err(|_| format!("GET {url}: no answer within 60 s"))?
            .map_err(|e| format!("GET {url}: {e}"))?;
        let status = resp.status();
        let body = tokio::time::timeout(Duration::from_secs(60), resp.bytes())
            .await
            .map_err(|_| format!("GET {url}: the body did not end within 60 s"))?
            .map_err(|e| format!("GET {url}: {e}"))?;
        if !status.is_success() {
            return Err(format!("GET {url}: HTTP {status}: {}", String::from_utf8_lossy(&body[..body.len().min(300)])));
        }
        if body.len() > MAX_PAGE_BYTES {
            return Err(format!("GET {url}: a page of {} bytes", body.len()));
        }
        let v: serde_json::Value = serde_json::from_slice(&body).map_err(|e| format!("GET {url}: not JSON: {e}"))?;
        if !v.get("servers").is_some_and(|s| s.is_array()) {
            return Err(format!("GET {url}: not a listing page (no `servers` array)"));
        }
        let file = dir.join(format!("page-{:04}.json", files.len() + 1));
        std::fs::write(&file, &body).map_err(|e| format!("{}: {e}", file.display()))?;
        files.push(file);
        match v["metadata"]["nextCursor"].as_str() {
            Some(c) if !c.is_empty() && Some(c) != cursor.as_deref() => cursor = Some(c.to_string()),
            _ => return Ok(files),
        }
    }
}
