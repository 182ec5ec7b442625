//! SIGINT, SIGTERM and SIGHUP during a run.

use mcpcert::report::console::{self};
use mcpcert::transport::kill_all_groups;

/// The signal that interrupted the run (0: none yet).
pub type Interrupt = tokio::sync::watch::Receiver<i32>;

/// Wait for SIGINT, SIGTERM or SIGHUP: kill the server processes at once
/// and tell the run, which stops, marks what is left `error: interrupted`
/// and writes its reports. A second signal ends the process at once.
pub fn watch_signals(rt: &tokio::runtime::Runtime) -> Interrupt {
    let (tx, rx) = tokio::sync::watch::channel(0);
    rt.spawn(async move {
        let mut first = true;
        loop {
            let sig = next_signal().await;
            kill_all_groups();
            if !first {
                std::process::exit(128 + sig);
            }
            first = false;
            console::err_line(format!("\ninterrupted ({}): server processes killed; writing the reports", signal_name(sig)));
            let _ = tx.send(sig);
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
