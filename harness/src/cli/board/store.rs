//! What a server's folder keeps, at registry scale (issue 67: 15,000
//! judged servers in a static host's 1 GB): its page, result, badge,
//! server.json and each version's verdict list as they are; the run's
//! report gzipped (`report.html.gz`, `report.json.gz`), opened by a small
//! viewer page at `report/report.html` (the browser unzips it); the JUnit
//! file, the contract and the run's console log dropped (the console log
//! is kept when mcpcert itself failed). A run that never reached the
//! server keeps no report: its result holds the server's last stderr
//! lines. Every text kept is scrubbed of the runner's paths.

use super::ServerResult;
use super::cause::Scrub;
use std::io::Write;
use std::path::Path;

/// The viewer: fetches the gzipped report beside it, unzips it in the
/// browser (a host that already unzipped it is served as it is), and
/// shows it. No script from outside the site.
const VIEWER: &str = "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>mcpcert report</title></head><body><p id=\"loading\">Opening the report (report.html.gz)…</p><script>\n(async function(){try{var r=await fetch('report.html.gz');if(!r.ok)throw new Error(r.status+' '+r.statusText);var b=new Uint8Array(await r.arrayBuffer());var t;if(b[0]===0x1f&&b[1]===0x8b){t=await new Response(new Blob([b]).stream().pipeThrough(new DecompressionStream('gzip'))).text();}else{t=new TextDecoder().decode(b);}document.open();document.write(t);document.close();}catch(e){document.getElementById('loading').textContent='The report could not be opened here ('+e.message+'): download report.html.gz or report.json.gz beside this page.';}})();\n</script></body></html>\n";

/// Slims `dir` (a server's folder after its run) to what the site keeps.
pub fn keep(dir: &Path, r: &mut ServerResult, scrub: &Scrub) {
    for f in &mut r.failing {
        f.reason = scrub.text(&f.reason);
    }
    if r.outcome != "error" {
        let _ = std::fs::remove_file(dir.join("console.log"));
    } else if let Ok(t) = std::fs::read_to_string(dir.join("console.log")) {
        let _ = std::fs::write(dir.join("console.log"), scrub.text(&t));
    }
    let report = dir.join("report");
    // A run that did not reach the server: every case says so; the
    // result keeps the server's last lines.
    if !reached(r) {
        let _ = std::fs::remove_dir_all(&report);
        r.report = false;
        return;
    }
    if !report.is_dir() {
        return;
    }
    for f in ["junit.xml", "contract.json"] {
        let _ = std::fs::remove_file(report.join(f));
    }
    let mut kept = false;
    for f in ["report.html", "report.json"] {
        let p = report.join(f);
        let Ok(text) = std::fs::read_to_string(&p) else { continue };
        let _ = std::fs::remove_file(&p);
        kept |= gzip(&report.join(format!("{f}.gz")), scrub.text(&text).as_bytes()).is_ok();
    }
    if kept {
        let _ = std::fs::write(report.join("report.html"), VIEWER);
    }
    r.report = kept;
}

/// Whether the run reached the server: its verdicts say something of it.
fn reached(r: &ServerResult) -> bool {
    r.reached
}

fn gzip(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let f = std::fs::File::create(path)?;
    let mut z = flate2::write::GzEncoder::new(f, flate2::Compression::best());
    z.write_all(bytes)?;
    z.finish().map(drop)
}
