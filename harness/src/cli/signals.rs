//! SIGINT, SIGTERM and SIGHUP during a run.

use mcpcert::report::console::{self};
use mcpcert::transport::kill_all_groups;

/// The signal that interrupted the run (0: none yet).
pub type Interrupt = tokio::sync::watch::Receiver<i32>;

/// Signals that come within this of the first are the same interruption:
/// `timeout -s INT` (what CI jobs run) signals mcpcert and then its
/// process group, so one interruption arrives twice.
const TOGETHER: std::time::Duration = std::time::Duration::from_secs(1);

/// How long a second interruption waits for the JSON and JUnit reports.
const LAST_WRITES: std::time::Duration = std::time::Duration::from_secs(5);

/// Which reports have been written (bits: `JSON`, `JUNIT`), for a second
/// interruption that ends the run before the rest.
static WRITTEN: std::sync::atomic::AtomicU8 = std::sync::atomic::AtomicU8::new(0);
pub const JSON: u8 = 1;
pub const JUNIT: u8 = 2;

/// A report has been written (`JSON` or `JUNIT`).
pub fn written(what: u8) {
    WRITTEN.fetch_or(what, std::sync::atomic::Ordering::SeqCst);
}

/// Wait for SIGINT, SIGTERM or SIGHUP: kill the server processes at once
/// and tell the run, which stops, marks what is left `error: interrupted`
/// and writes its reports. Signals within `TOGETHER` of the first are the
/// same interruption. A second interruption, later, ends the run as soon
/// as the JSON and JUnit reports are written (at most `LAST_WRITES`).
pub fn watch_signals(rt: &tokio::runtime::Runtime) -> Interrupt {
    let (tx, rx) = tokio::sync::watch::channel(0);
    rt.spawn(async move {
        let mut first: Option<std::time::Instant> = None;
        loop {
            let sig = next_signal().await;
            kill_all_groups();
            match first {
                Some(t) if t.elapsed() < TOGETHER => continue,
                Some(_) => {
                    console::err_line(format!(
                        "\ninterrupted again ({}): ending once the JSON and JUnit reports are written",
                        signal_name(sig)
                    ));
                    // On a thread: the runtime may be busy or blocked.
                    std::thread::spawn(move || {
                        let until = std::time::Instant::now() + LAST_WRITES;
                        while WRITTEN.load(std::sync::atomic::Ordering::SeqCst) != JSON | JUNIT && std::time::Instant::now() < until {
                            std::thread::sleep(std::time::Duration::from_millis(10));
                        }
                        std::process::exit(128 + sig);
                    });
                }
                None => {
                    first = Some(std::time::Instant::now());
                    console::err_line(format!("\ninterrupted ({}): server processes killed; writing the reports", signal_name(sig)));
                    let _ = tx.send(sig);
                }
            }
        }
    });
    rx
}

#[cfg(unix)]
pub async fn next_signal() -> i32 {
    use tokio::signal::unix::{SignalKind, signal};
    let (Ok(mut term), Ok(mut hup)) = (signal(SignalKind::terminate()), signal(SignalKind::hangup())) else {
        return if tokio::signal::ctrl_c().await.is_ok() { 2 } else { std::future::pending().await };
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => 2,
        _ = term.recv() => 15,
        _ = hup.recv() => 1,
    }
}

#[cfg(not(unix))]
pub async fn next_signal() -> i32 {
    match tokio::signal::ctrl_c().await {
        Ok(()) => 2,
        Err(_) => std::future::pending().await,
    }
}

pub fn signal_name(sig: i32) -> &'static str {
    match sig {
        1 => "SIGHUP",
        15 => "SIGTERM",
        _ => "SIGINT",
    }
}
