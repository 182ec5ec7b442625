//! Request ids: each case, each shared fact and each part of a case that
//! goes at once sends ids from a block of its own, so that the requests are
//! the same whatever runs beside them (`-j`).

use crate::wire::Revision;
use std::sync::atomic::{AtomicI64, Ordering};

tokio::task_local! {
    /// The request ids of the case being polled.
    pub(crate) static CASE_IDS: std::sync::Arc<AtomicI64>;
}

/// Run a case's future with its own block of request ids: the `slot`-th
/// block of a million (ids below the first block are the session's own:
/// probes, handshakes outside cases).
pub fn with_case_ids<F: std::future::Future>(slot: usize, f: F) -> impl std::future::Future<Output = F::Output> {
    CASE_IDS.scope(std::sync::Arc::new(AtomicI64::new((slot as i64 + 1) * 1_000_000)), f)
}

/// How many parts a case's block holds, and the ids of each: a walk of
/// `max_pages` pages (10,000 by default) and its retries fit in one.
const PARTS: usize = 20;
const PART_IDS: i64 = 25_000;

/// Run `f`, one of several parts of a case (or bulk fact) that go at once,
/// with ids of its own: the `part`-th run of 25,000 from the middle of the
/// current block (parts 0..20), so the ids do not depend on which part
/// sends first. Parts never nest. A part beyond the last, or one outside a
/// case's or bulk fact's block, shares the current counter (ids stay
/// unique; their order may vary).
pub fn with_part_ids<F: std::future::Future>(part: usize, f: F) -> impl std::future::Future<Output = F::Output> {
    use futures_util::future::Either;
    match CASE_IDS.try_with(|c| c.clone()).ok() {
        Some(c) if part < PARTS && (1_000_000..1_500_000_000).contains(&c.load(Ordering::Relaxed)) => {
            let now = c.load(Ordering::Relaxed);
            let first = now / 1_000_000 * 1_000_000 + 500_000 + part as i64 * PART_IDS;
            Either::Left(CASE_IDS.scope(std::sync::Arc::new(AtomicI64::new(first)), f))
        }
        Some(c) => Either::Left(CASE_IDS.scope(c, f)),
        // Outside a case: the session's own counter.
        None => Either::Right(f),
    }
}

/// The probes' own ids, fixed whatever order they run in: the 2026-07-28
/// probe sends id 1 first (what a scripted server most likely expects), the
/// 2025-11-25 probe from 1000, and the session's own ids start after both.
pub(crate) const MODERN_PROBE_IDS: i64 = 1;
pub(crate) const LEGACY_PROBE_IDS: i64 = 1000;
pub(crate) const FIRST_SESSION_ID: i64 = 2000;

/// Run `f` with request ids counted from `first`.
pub(crate) fn with_ids_from<F: std::future::Future>(first: i64, f: F) -> impl std::future::Future<Output = F::Output> {
    CASE_IDS.scope(std::sync::Arc::new(AtomicI64::new(first)), f)
}

/// Run the gathering of a shared fact with a block of request ids of its
/// own, drawn from the fact's name (`"<revision> <fact>"`): the fact's
/// requests carry the same ids whichever case asks for it first, so reports
/// do not depend on `-j`. Every id stays below 2^31, for servers that keep
/// ids in 32-bit integers (see `fact_block`).
pub fn with_fact_ids<F: std::future::Future>(fact: &str, f: F) -> impl std::future::Future<Output = F::Output> + use<F> {
    let first = fact_block(fact);
    CASE_IDS.scope(std::sync::Arc::new(AtomicI64::new(first)), f)
}

/// The shared facts gathered in bulk (list walks, calls, listens, the load
/// replay, the cold walk, what the roles see), by the names `checks/facts.rs`
/// gives them (a test there holds the two together), each with a block of
/// five million ids per revision.
pub const BULK_FACTS: [&str; 11] = [
    "(shared: tools/list walk)",
    "(shared: prompts/list walk)",
    "(shared: resources/list walk)",
    "(shared: resources/templates/list walk)",
    "(shared: tool calls)",
    "(shared: listen streams)",
    "(shared: load replay)",
    "(shared: a list walked cold on a new connection or process)",
    "(shared: what each role sees)",
    "(shared: a task followed to its end)",
    "(shared: a task's input rounds answered)",
];
const BULK_IDS: i64 = 5_000_000;

/// The first id of a fact's block. Ids lie below 2^31 in four ranges: the
/// probes and the session's own (under 1,000,000); cases, a block of a
/// million each (from 1,000,000; under 1,000,000,000 for a catalogue of
/// fewer than 500 cases, each block used at most twice); the bulk facts
/// (from 1,200,000,000, five million each); and any other fact (a header
/// probe's baseline: one request), a block of a thousand picked by FNV-1a
/// of its name among 500,000 (from 1,500,000,000 to 2,000,000,000).
fn fact_block(fact: &str) -> i64 {
    let (rev, name) = fact.split_once(' ').unwrap_or(("", fact));
    let rev_index = Revision::ALL.iter().position(|r| r.as_str() == rev).unwrap_or(0) as i64;
    if let Some(k) = BULK_FACTS.iter().position(|f| *f == name) {
        return 1_200_000_000 + (rev_index * BULK_FACTS.len() as i64 + k as i64) * BULK_IDS;
    }
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in fact.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    1_500_000_000 + (h % 500_000) as i64 * 1_000
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fact_blocks_stay_apart_and_below_two_to_the_31() {
        let mut firsts = Vec::new();
        for rev in Revision::ALL {
            for f in BULK_FACTS {
                firsts.push((fact_block(&format!("{rev} {f}")), BULK_IDS));
            }
            firsts.push((fact_block(&format!("{rev} baseline tools/list {{}}")), 1_000));
        }
        firsts.sort();
        assert!(firsts[0].0 >= 1_000_000_000, "above every case's block");
        // The bulk blocks lie where a part of a fact takes ids of its own.
        let last_bulk = fact_block(&format!("{} {}", Revision::ALL[Revision::ALL.len() - 1], BULK_FACTS[BULK_FACTS.len() - 1]));
        assert!(last_bulk + BULK_IDS <= 1_500_000_000);
        for w in firsts.windows(2) {
            assert!(w[0].0 + w[0].1 <= w[1].0, "blocks overlap: {w:?}");
        }
        let (last, size) = firsts[firsts.len() - 1];
        assert!(last + size <= i64::from(i32::MAX), "below 2^31");
    }
}
