//! The run's cap on requests in flight: `-j` at most, and over HTTP fewer
//! while the server's answers show that requests wait in its queue.
//!
//! A server on the same machine serves 32 requests in flight no faster
//! than 8: the others wait in its queue (and so does every step of a chain
//! that depends on an answer), and each needs a connection of its own that
//! costs both sides a handshake and a close. Against server-everything on
//! loopback, `-j 32` opened 34 connections for 118 requests and the
//! adaptive cap 11 (same wall time: the Node process is the bottleneck);
//! against rmcp the run's median wall fell by about 1.5 ms of 40 (30 runs
//! each, alternating). Across a network the same 32 are what keeps the run
//! short. So the cap starts at `START`, grows by one for each answer that
//! came back about as fast as the fastest seen so far while requests wait
//! for a place, and shrinks by one for each that took more than twice as
//! long plus `SLACK` (requests waiting behind others), down to `LEAST`.
//! While a case runs alone (`all_but_one`) it holds still. Only the timing
//! of requests changes, never which ones are sent.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;
use tokio::sync::{Semaphore, SemaphorePermit};

/// Where an adaptive cap starts (or `-j`, when lower).
const START: usize = 8;
/// The least an adaptive cap falls to (or `-j`, when lower).
const LEAST: usize = 4;
/// Added to twice the fastest answer before an answer counts as slowed by
/// a queue (timer and scheduling noise on loopback).
const SLACK: Duration = Duration::from_millis(2);

pub struct InFlight {
    sem: Semaphore,
    /// Requests waiting for a permit: the cap holds them back.
    waiting: AtomicUsize,
    /// None: the cap is fixed at `-j`.
    adapt: Option<Mutex<Adapt>>,
    /// Set while `all_but_one` holds the cap: it must not grow then.
    alone: AtomicBool,
}

struct Adapt {
    /// The cap now, and its bounds.
    cap: usize,
    least: usize,
    most: usize,
    /// Permits to forget as they come back (the cap fell while they were
    /// out).
    owed: usize,
    /// The fastest answer seen.
    fastest: Option<Duration>,
}

/// A request's place within the cap; give it back with `InFlight::done`.
pub struct Slot<'a>(Option<SemaphorePermit<'a>>);

impl InFlight {
    /// A cap of `jobs`, fixed, or adaptive between `LEAST` and `jobs`.
    pub fn new(jobs: usize, adaptive: bool) -> InFlight {
        let most = jobs.max(1);
        if !adaptive || most <= LEAST {
            return InFlight { sem: Semaphore::new(most), waiting: AtomicUsize::new(0), adapt: None, alone: AtomicBool::new(false) };
        }
        let cap = START.min(most);
        let adapt = Adapt { cap, least: LEAST, most, owed: 0, fastest: None };
        let adapt = Some(Mutex::new(adapt));
        InFlight { sem: Semaphore::new(cap), waiting: AtomicUsize::new(0), adapt, alone: AtomicBool::new(false) }
    }

    pub async fn acquire(&self) -> Slot<'_> {
        struct Waiting<'a>(&'a AtomicUsize);
        impl Drop for Waiting<'_> {
            fn drop(&mut self) {
                self.0.fetch_sub(1, Ordering::SeqCst);
            }
        }
        self.waiting.fetch_add(1, Ordering::SeqCst);
        let _waiting = Waiting(&self.waiting);
        Slot(self.sem.acquire().await.ok())
    }

    /// Give `slot` back, with how long its request took to be answered
    /// (None: not a plain request and answer, e.g. a stream watched for a
    /// while, or no answer at all: it says nothing about the queue).
    pub fn done(&self, slot: Slot<'_>, took: Option<Duration>) {
        let Some(permit) = slot.0 else { return };
        let Some(adapt) = &self.adapt else { return };
        let Ok(mut a) = adapt.lock() else { return };
        // One request at a time (`all_but_one`): the cap holds still. Its
        // one free permit must come back, or the next request would wait
        // for a guard that waits for it.
        if self.alone.load(Ordering::SeqCst) {
            return;
        }
        if let Some(took) = took {
            let fastest = *a.fastest.get_or_insert(took);
            a.fastest = Some(fastest.min(took));
            if took > 2 * fastest + SLACK {
                if a.cap > a.least {
                    a.cap -= 1;
                    // One permit fewer: a free one now, or this one.
                    if self.sem.forget_permits(1) == 0 {
                        a.owed += 1;
                    }
                }
            } else if took * 2 < 3 * fastest + SLACK && self.waiting.load(Ordering::SeqCst) > 0 && a.cap < a.most {
                // Fast while the cap held requests back: room for one more
                // (one per answer: the cap doubles each round trip).
                a.cap += 1;
                if a.owed > 0 {
                    a.owed -= 1;
                } else {
                    self.sem.add_permits(1);
                }
            }
        }
        if a.owed > 0 {
            a.owed -= 1;
            permit.forget();
        }
    }

    /// The cap now (fixed: the permits free).
    #[cfg(test)]
    fn cap(&self) -> usize {
        match &self.adapt {
            Some(a) => a.lock().map_or(0, |a| a.cap),
            None => self.sem.available_permits(),
        }
    }

    /// Hold all but one of the permits free now, and keep the cap from
    /// growing until the guard is dropped (see `Session::one_at_a_time`).
    pub async fn all_but_one(&self) -> Alone<'_> {
        self.alone.store(true, Ordering::SeqCst);
        let n = self.sem.available_permits().saturating_sub(1) as u32;
        let held = if n == 0 { None } else { self.sem.acquire_many(n).await.ok() };
        Alone { _held: held, alone: &self.alone }
    }
}

/// One request at a time until dropped.
pub struct Alone<'a> {
    _held: Option<SemaphorePermit<'a>>,
    alone: &'a AtomicBool,
}

impl Drop for Alone<'_> {
    fn drop(&mut self) {
        self.alone.store(false, Ordering::SeqCst);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::future::Future;

    fn ms(n: u64) -> Option<Duration> {
        Some(Duration::from_millis(n))
    }

    #[tokio::test]
    async fn a_fixed_cap_stays_put() {
        let l = InFlight::new(32, false);
        assert_eq!(l.cap(), 32);
        let s = l.acquire().await;
        l.done(s, ms(500));
        assert_eq!(l.cap(), 32);
        // -j at or under the floor: fixed, even when asked to adapt.
        assert!(InFlight::new(1, true).adapt.is_none());
        assert!(InFlight::new(4, true).adapt.is_none());
    }

    #[tokio::test]
    async fn slow_answers_shrink_the_cap_to_its_floor_and_no_further() {
        let l = InFlight::new(32, true);
        assert_eq!(l.cap(), START);
        let s = l.acquire().await;
        l.done(s, ms(1));
        for _ in 0..20 {
            let s = l.acquire().await;
            l.done(s, ms(50));
        }
        assert_eq!(l.cap(), LEAST);
        assert_eq!(l.sem.available_permits(), LEAST);
    }

    #[tokio::test]
    async fn fast_answers_grow_the_cap_only_while_it_holds_requests_back_and_up_to_j() {
        let l = InFlight::new(12, true);
        // Nothing waiting: no reason to allow more.
        let s = l.acquire().await;
        l.done(s, ms(10));
        assert_eq!(l.cap(), START);
        for _ in 0..10 {
            let mut slots = Vec::new();
            for _ in 0..l.cap() {
                slots.push(l.acquire().await);
            }
            // One more asks and waits.
            let mut more = Box::pin(l.acquire());
            let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
            assert!(more.as_mut().poll(&mut cx).is_pending());
            for s in slots {
                l.done(s, ms(10));
            }
            l.done(more.await, ms(10));
        }
        assert_eq!(l.cap(), 12);
        assert_eq!(l.sem.available_permits(), 12);
        assert_eq!(l.waiting.load(Ordering::SeqCst), 0);
    }

    #[tokio::test]
    async fn slow_answers_one_at_a_time_keep_the_one_permit() {
        let l = InFlight::new(32, true);
        let s = l.acquire().await;
        l.done(s, ms(1));
        let alone = l.all_but_one().await;
        for _ in 0..10 {
            // Each must get the permit the one before gave back.
            let s = tokio::time::timeout(Duration::from_secs(1), l.acquire()).await.expect("a permit, not a wait");
            l.done(s, ms(500));
        }
        drop(alone);
        assert_eq!(l.cap(), START);
        assert_eq!(l.sem.available_permits(), START);
    }

    #[tokio::test]
    async fn the_cap_does_not_grow_while_one_request_goes_at_a_time() {
        let l = InFlight::new(32, true);
        let alone = l.all_but_one().await;
        assert_eq!(l.sem.available_permits(), 1);
        let s = l.acquire().await;
        let mut more = Box::pin(l.acquire());
        let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
        assert!(more.as_mut().poll(&mut cx).is_pending());
        l.done(s, ms(10));
        l.done(more.await, ms(10));
        assert_eq!(l.cap(), START);
        assert_eq!(l.sem.available_permits(), 1);
        drop(alone);
        assert_eq!(l.sem.available_permits(), START);
    }

    #[tokio::test]
    async fn permits_out_when_the_cap_falls_are_forgotten_as_they_return() {
        let l = InFlight::new(32, true);
        let slots: Vec<_> = futures_util::future::join_all((0..START).map(|_| l.acquire())).await;
        let mut slots = slots.into_iter();
        l.done(slots.next().unwrap(), ms(1));
        // Seven out, none free: each slow answer costs its own permit.
        for s in slots {
            l.done(s, ms(40));
        }
        assert_eq!(l.cap(), LEAST);
        assert_eq!(l.sem.available_permits(), LEAST);
        // Answers that say nothing about the queue change nothing.
        let s = l.acquire().await;
        l.done(s, None);
        assert_eq!(l.sem.available_permits(), LEAST);
    }
}
