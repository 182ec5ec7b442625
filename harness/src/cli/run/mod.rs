//! `mcpcert run`: cases against a live server, then the reports. A pipeline
//! of stages, each its own function:
//!
//! 1. **plan** (`plan.rs`): the arguments resolved — catalogue, revision,
//!    requirement set, cases, baseline, target, policy; nothing started;
//! 2. **start** (`start.rs`): the runtime, the signal watch, the revision
//!    probes, and the header lines (who the server is, what it serves);
//! 3. **cases** (`start.rs`): every selected case, its result masked and
//!    marked (baseline, requirement set) and printed as it finishes;
//! 4. **contract** (`end.rs`): the server's contract as the run saw it;
//! 5. **judge** (`end.rs`): why the run failed, if it did;
//! 6. **report** (`end.rs`): the reports written while the run shuts down
//!    (sessions ended, connections and processes closed), the summary line,
//!    the baseline and certificate, and the exit code.

mod end;
mod plan;
mod start;

use crate::RunArgs;
use mcpcert::report::console::Console;

pub fn run(args: RunArgs) -> u8 {
    let clock = std::time::Instant::now();
    mcpcert::record::run_clock_ms();
    let mut console = Console::new().with_color(args.color);
    console.quiet = args.quiet;
    console.verbose = args.verbose;
    let plan = match plan::plan(&args, &mut console) {
        Ok(p) => p,
        Err(code) => return code,
    };
    let mut started = match start::start(&args, plan) {
        Ok(s) => s,
        Err(code) => return code,
    };
    let results = start::cases(&args, &mut started, &mut console);
    let contract = end::contract(&args, &started);
    let judged = end::judge(&args, &started, results, &contract, &mut console);
    end::report(&args, started, judged, contract, clock, &mut console)
}
