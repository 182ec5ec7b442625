//! What a server's folder keeps, at registry scale (issue 67: 15,000
//! judged servers in a static host's 1 GB; docs/bench.md): its page,
//! result, badge, server.json and each version's verdict list as they
//! are; for a run with failures, errors or warnings, its HTML report
//! gzipped (`report.html.gz`: each case's verdict, the evidence of those
//! that did not pass, `run --evidence failing`), opened by a small viewer
//! page at `report/report.html` (the browser unzips it). A clean pass keeps
//! no report (its verdict list holds every case), nor does a run that
//! never reached the server (its result holds the server's last stderr
//! lines). The JSON report, the JUnit file, the contract and the run's
//! console log are dropped (the console log is kept when mcpcert itself
//! failed). Every text kept is scrubbed of the runner's paths.

use super::ServerResult;
use super::cause::Scrub;
use std::io::Write;
use std::path::Path;

/// The viewer: fetches the gzipped report beside it, unzips it in the
/// browser (a host that already unzipped it is served as it is), and
/// shows it. No script from outside the site.
const VIEWER: &str = "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>mcpcert report</title></head><body><p id=\"loading\">Opening the report (report.html.gz)…</p><script>\n(async function(){try{var r=await fetch('report.html.gz');if(!r.ok)throw new Error(r.status+' '+r.statusText);var b=new Uint8Array(await r.arrayBuffer());var t;if(b[0]===0x1f&&b[1]===0x8b){t=await new Response(new Blob([b]).stream().pipeThrough(new DecompressionStream('gzip'))).text();}else{t=new TextDecoder().decode(b);}document.open();document.write(t);document.close();}catch(e){document.getElementById('loading').textContent='The report could not be opened here ('+e.message+'): download report.html.gz beside this page.';}})();\n</script></body></html>\n";

/// Slims `dir` (a server's folder after its run) to what the site keeps;
/// with `all`, keeps every report file of the run as it is (scrubbed).
pub fn keep(dir: &Path, r: &mut ServerResult, scrub: &Scrub, all: bool) {
    for f in &mut r.failing {
        f.reason = scrub.text(&f.reason);
    }
    if r.outcome != "error" {
        let _ = std::fs::remove_file(dir.join("console.log"));
    } else if let Ok(t) = std::fs::read_to_string(dir.join("console.log")) {
        let _ = std::fs::write(dir.join("console.log"), scrub.text(&t));
    }
    let report = dir.join("report");
    if all {
        for e in std::fs::read_dir(&report).into_iter().flatten().flatten() {
            if let Ok(text) = std::fs::read_to_string(e.path()) {
                let _ = std::fs::write(e.path(), scrub.text(&text));
            }
        }
        r.report = report.join("report.html").is_file();
        return;
    }
    // A run that did not reach the server (every case says so), or a
    // clean pass (its verdict list says it all): no report.
    let html = std::fs::read_to_string(report.join("report.html")).ok().filter(|_| r.reached && !r.failing.is_empty());
    let _ = std::fs::remove_dir_all(&report);
    r.report = false;
    if let Some(text) = html
        && std::fs::create_dir_all(&report).is_ok()
        && gzip(&report.join("report.html.gz"), scrub.text(&text).as_bytes()).is_ok()
    {
        r.report = std::fs::write(report.join("report.html"), VIEWER).is_ok();
    }
}

fn gzip(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let f = std::fs::File::create(path)?;
    let mut z = flate2::write::GzEncoder::new(f, flate2::Compression::best());
    z.write_all(bytes)?;
    z.finish().map(drop)
}
