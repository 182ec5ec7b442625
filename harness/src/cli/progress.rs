//! A live progress line on a terminal while a case waits for the server:
//! what it waits for and for how long (on stderr; none when stderr is not a
//! terminal, or with --quiet).

use mcpcert::report::console::{PROGRESS_SHOWN, clear_progress};
use mcpcert::session::Waiting;
use std::io::{IsTerminal, Write};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

pub struct Ticker {
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Ticker {
    pub fn start(waiting: Waiting, quiet: bool) -> Ticker {
        let stop = Arc::new(AtomicBool::new(false));
        if quiet || !std::io::stderr().is_terminal() {
            return Ticker { stop, thread: None };
        }
        let flag = stop.clone();
        let thread = std::thread::spawn(move || {
            while !flag.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(200));
                let now = waiting.lock().ok().and_then(|w| w.clone());
                match now {
                    Some((label, since)) if since.elapsed() >= Duration::from_secs(1) => {
                        let mut err = std::io::stderr().lock();
                        let label: String = label.chars().take(90).collect();
                        let _ = write!(err, "\r\x1b[2K  waiting for {label} ({:.1} s)", since.elapsed().as_secs_f64());
                        let _ = err.flush();
                        PROGRESS_SHOWN.store(true, Ordering::SeqCst);
                    }
                    _ => clear_progress(),
                }
            }
            clear_progress();
        });
        Ticker { stop, thread: Some(thread) }
    }
}

impl Drop for Ticker {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}
