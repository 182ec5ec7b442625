//! `mcpcert fuzz`: a seeded, bounded storm of malformed input, judged input
//! by input. Each class of input (`inputs::Class`) gives two cases: the rules
//! the spec states (every request answered with its own id, nothing
//! answering a notification, every frame JSON-RPC, the server alive) and
//! the conventions (the error code JSON-RPC names, a 4xx rather than a 5xx,
//! the same answers as before the class). The same seed gives the same
//! bytes; any input is sent again alone with `--case CLASS/INDEX`.

mod arguments;
pub mod inputs;
mod inputs_framing;
mod oracle;
mod report;
mod rng;
mod send;
mod shrink;

pub use inputs::Class;
pub use oracle::{Finding, Rule};

use crate::record::CaseResult;
use crate::transport::{Limits, TargetSpec, Transport};
use crate::wire::Revision;
use send::{Answer, Peer};
use std::time::{Duration, Instant};

pub struct FuzzOptions {
    pub seed: u64,
    /// Inputs per class.
    pub count: usize,
    pub classes: Vec<Class>,
    /// One input only (`--case CLASS/INDEX`).
    pub only: Option<(Class, usize)>,
    /// The whole run's time; classes not begun by then are `error`.
    pub budget: Duration,
    /// How long one input waits for its answer.
    pub timeout: Duration,
    /// Failing inputs shrunk (at most this many per class).
    pub shrink: usize,
    /// `mcpcert fuzz …` with the target and seed, for reproducers.
    pub rerun: String,
    /// The call policy: which tools the arguments class may call.
    pub policy: crate::config::Policy,
    /// stdio: JSON messages (the envelope and params classes) go this many
    /// at a time, each closed by a request of mcpcert's own; a window with
    /// any finding, or one not read with certainty, is sent again one input
    /// at a time, and that is what is judged. 1: always one at a time.
    pub window: usize,
}

/// One input that broke a rule, with what it got.
#[derive(Debug, Clone)]
pub struct Failed {
    pub input: inputs::Input,
    pub answer: Answer,
    pub findings: Vec<Finding>,
    /// The smallest input found that fails the same way, if smaller.
    pub shrunk: Option<(inputs::Input, Answer)>,
}

/// A class's outcome.
#[derive(Debug, Default)]
pub struct ClassRun {
    pub sent: usize,
    pub planned: usize,
    pub failed: Vec<Failed>,
    /// Findings of the class as a whole (liveness).
    pub after: Vec<Finding>,
    /// Why it could not be run (whole), if so.
    pub cut: Option<String>,
    /// What the class's inputs were, when they depend on the server (the
    /// arguments class: each call).
    pub about: Option<String>,
    pub ms: u64,
}

pub struct FuzzRun {
    pub results: Vec<CaseResult>,
    pub revision: Revision,
    pub inputs: usize,
    pub sent: u64,
    pub restarts: u32,
    /// Windows of inputs sent again one at a time (read without certainty).
    pub afresh: u32,
    /// Answers that came after a later request's (set aside, or given back
    /// to their input).
    pub late: u32,
    /// Why nothing could be fuzzed, if so.
    pub problem: Option<String>,
}

/// Which revision to fuzz: the one asked for, or the first the server
/// answers of 2026-07-28 (server/discover) and the initialize era.
pub async fn detect(target: &TargetSpec, limits: &Limits, timeout: Duration) -> Result<Revision, String> {
    let modern = Revision::NEWEST_STATELESS;
    if let Ok(mut p) = Peer::open(target, limits, modern, timeout.max(limits.startup)).await {
        let served = p.discover().await;
        p.shutdown().await;
        if served {
            return Ok(modern);
        }
    }
    let mut p = Peer::open(target, limits, Revision::NEWEST_INITIALIZE, timeout).await?;
    let got = p.negotiated.clone();
    p.shutdown().await;
    got.as_deref()
        .and_then(Revision::parse)
        .filter(|r| !r.is_stateless())
        .ok_or_else(|| format!("initialize negotiated {got:?}, a version mcpcert does not fuzz"))
}

pub async fn fuzz(target: &TargetSpec, limits: &Limits, rev: Revision, o: &FuzzOptions) -> FuzzRun {
    let start = Instant::now();
    let mut run = FuzzRun { results: Vec::new(), revision: rev, inputs: 0, sent: 0, restarts: 0, afresh: 0, late: 0, problem: None };
    let mut peer = match Peer::open(target, limits, rev, o.timeout).await {
        Ok(p) => p,
        Err(e) => {
            run.problem = Some(format!("the server could not be reached for {rev}: {e}"));
            return run;
        }
    };
    let Some(base) = peer.probe(0).await else {
        run.problem =
            Some("the server did not answer tools/list before any input was sent: nothing to compare the classes' aftermath with".into());
        peer.shutdown().await;
        return run;
    };
    let mut gone: Option<String> = None;
    for (n, class) in o.classes.iter().copied().enumerate() {
        let planned = match o.only {
            Some((c, _)) if c != class => continue,
            Some(_) => 1,
            None => o.count,
        };
        let mut cr = ClassRun { planned, ..Default::default() };
        let t0 = Instant::now();
        if class == Class::Descriptors {
            if o.only.is_none() {
                let judged = match &gone {
                    Some(g) => Err(g.clone()),
                    None => descriptors(&mut peer, n as u32).await,
                };
                run.results.push(report::descriptors(rev, peer.transport(), judged, t0.elapsed().as_millis() as u64, &o.rerun));
            }
            continue;
        }
        // The arguments class's inputs come from the tools walk.
        let calls = if class == Class::Arguments && gone.is_none() {
            match peer.list_tools(1000 + n as u32).await {
                Ok(tools) => arguments::calls(&tools, &o.policy),
                Err(e) => {
                    cr.cut = Some(format!("the tools could not be listed whole: {e}"));
                    Vec::new()
                }
            }
        } else {
            Vec::new()
        };
        if !calls.is_empty() {
            let each: Vec<String> = calls.iter().map(|c| format!("{}: {}", c.tool, c.what)).collect();
            cr.about = Some(format!("the calls, in turn: {}", each.join("; ")));
        }
        if class == Class::Arguments && calls.is_empty() && cr.cut.is_none() && gone.is_none() {
            let why = "no tool the call policy allows has a bound in its inputSchema to go beyond (or the server lists no tools)";
            run.results.extend(report::not_applicable(class, rev, peer.transport(), why));
            continue;
        }
        if class != Class::Arguments && class.templates(peer.transport()) == 0 {
            let why = format!("the {} class has no inputs over {}", class.as_str(), peer.transport());
            run.results.extend(report::not_applicable(class, rev, peer.transport(), &why));
            continue;
        }
        let (seed, transport, prev) = (o.seed, peer.transport(), peer.rev);
        let make = |i: usize| {
            if class == Class::Arguments { arguments::input(&calls, i, prev) } else { inputs::input(seed, class, i, transport, prev) }
        };
        if let Some(g) = &gone {
            cr.cut = Some(g.clone());
        } else if cr.cut.is_some() {
        } else if start.elapsed() >= o.budget {
            cr.cut = Some(format!("the time budget ({} s) was spent before this class began", o.budget.as_secs()));
        } else {
            run_class(&mut peer, class, &make, o, start, &mut cr, &base, n as u32 + 1, &mut gone).await;
        }
        run.inputs += cr.sent;
        cr.ms = t0.elapsed().as_millis() as u64;
        run.results.extend(report::cases(class, rev, peer.transport(), &cr, o, &peer));
    }
    run.sent = peer.sent;
    run.restarts = peer.restarts;
    run.afresh = peer.afresh;
    run.late = peer.late_count;
    peer.shutdown().await;
    run
}

/// The tools listed twice, and what the descriptor-safety judge says of
/// them (or why they could not be listed whole).
async fn descriptors(peer: &mut Peer, n: u32) -> Result<Vec<crate::checks::judge::safety::Concern>, String> {
    use crate::checks::judge::safety;
    let first = peer.list_tools(2 * n).await?;
    let second = peer.list_tools(2 * n + 1).await?;
    let mut c = safety::judge(&first);
    c.extend(safety::changed(&first, &second));
    Ok(c)
}

/// Late answers (a server that answers concurrently) go back to the
/// input whose id they carry, when that input was judged on what came
/// before a request of mcpcert's sent right after it (not on a timeout),
/// and it is judged again with them.
fn reattribute(peer: &mut Peer, cr: &mut ClassRun) {
    for f in peer.take_late() {
        let Some(id) = f.id().cloned() else { continue };
        let Some(k) = cr.failed.iter().position(|x| {
            send::due_ids(&x.input.due).contains(&id) && !matches!(x.input.due, inputs::Due::Response { null_ok: false, .. })
        }) else {
            continue;
        };
        let x = &mut cr.failed[k];
        x.answer.frames.push(f);
        x.answer.timed_out = !x.answer.frames.iter().flat_map(send::flatten).any(|f| f.is_response());
        x.findings = oracle::judge(&x.input, &x.answer);
        if x.findings.is_empty() {
            cr.failed.remove(k);
        }
    }
}

#[allow(clippy::too_many_arguments)]
async fn run_class(
    peer: &mut Peer,
    class: Class,
    make: &dyn Fn(usize) -> Option<inputs::Input>,
    o: &FuzzOptions,
    start: Instant,
    cr: &mut ClassRun,
    base: &serde_json::Value,
    probe_n: u32,
    gone: &mut Option<String>,
) {
    let indices: Vec<usize> = match o.only {
        Some((_, i)) => vec![i],
        None => (0..o.count).collect(),
    };
    let windowed =
        o.window > 1 && o.only.is_none() && peer.transport() == Transport::Stdio && matches!(class, Class::Envelope | Class::Params);
    let step = if windowed { o.window } else { 1 };
    let chunks: Vec<Vec<usize>> = indices.chunks(step).map(<[usize]>::to_vec).collect();
    // Windows are made on a thread of their own while the one before is in
    // flight (the same inputs `make` gives: the class's templates).
    let (tx, mut rx) = tokio::sync::mpsc::channel::<Vec<inputs::Input>>(2);
    if windowed {
        let (seed, t, rev, chunks) = (o.seed, peer.transport(), peer.rev, chunks.clone());
        std::thread::spawn(move || {
            for chunk in chunks {
                let batch = chunk.iter().filter_map(|&i| inputs::input(seed, class, i, t, rev)).collect();
                if tx.blocking_send(batch).is_err() {
                    break;
                }
            }
        });
    } else {
        drop(tx);
    }
    'inputs: for chunk in &chunks {
        if start.elapsed() >= o.budget {
            cr.cut = Some(format!("the time budget ({} s) ran out after {} of {} inputs", o.budget.as_secs(), cr.sent, cr.planned));
            break;
        }
        let mut batch: Vec<inputs::Input> = if windowed {
            let Some(b) = rx.recv().await else { break };
            b
        } else {
            chunk.iter().filter_map(|&i| make(i)).collect()
        };
        if windowed
            && peer.windows
            && let Some(answers) = peer.send_window(&batch).await
        {
            // Clean up to the first input with a finding; from it on, one
            // at a time.
            let judged: Vec<_> = answers.iter().zip(&batch).map(|(a, i)| oracle::judge(i, a)).collect();
            let clean = judged.iter().take_while(|f| f.is_empty()).count();
            cr.sent += clean;
            batch.drain(..clean);
            reattribute(peer, cr);
        }
        for input in batch {
            let i = input.index;
            let answer = peer.send(&input).await;
            cr.sent += 1;
            let findings = oracle::judge(&input, &answer);
            let died = answer.died.is_some();
            let hung = answer.hung;
            if !findings.is_empty() {
                cr.failed.push(Failed { input, answer, findings, shrunk: None });
            }
            reattribute(peer, cr);
            // A process that died or hung is started again, so that one
            // defect does not fail every later input; an HTTP server cannot
            // be.
            if died || hung {
                let back = peer.restart().await;
                if died && !back {
                    *gone = Some(format!("the server stopped taking connections on input {}/{i}", class.as_str()));
                    cr.cut = gone.clone();
                    break 'inputs;
                }
            }
        }
    }
    if gone.is_some() {
        return;
    }
    match peer.probe(probe_n).await {
        None => {
            cr.after.push(Finding {
                rule: Rule::Crashed,
                detail: "after the class, tools/list got no answer (it did before): the class left the server unable to serve".to_string(),
            });
            if !peer.restart().await {
                *gone = Some(format!("the server stopped answering after the {} class", class.as_str()));
            }
        }
        Some(v) if &v != base => cr.after.push(Finding {
            rule: Rule::ChangedAnswers,
            detail: format!(
                "after the class, tools/list answered {} (before it: {})",
                crate::record::clip(&v.to_string(), 200),
                crate::record::clip(&base.to_string(), 200)
            ),
        }),
        Some(_) => {}
    }
    for f in cr.failed.iter_mut().take(o.shrink) {
        if let Some(s) = shrink::shrink(peer, f).await {
            f.shrunk = Some(s);
        }
    }
}
