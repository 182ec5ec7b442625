//! How the process's heap is set up before anything else runs (Linux,
//! glibc): one arena, and its first megabytes in transparent huge pages.
//!
//! - glibc gives each thread that allocates an arena of its own and seldom
//!   returns their free memory; with the runtime's and the report writers'
//!   threads that made the peak RSS of a 10,000-tool run about half again
//!   its heap. One arena (`M_ARENA_MAX` 1) keeps it close to the heap.
//! - A run's heap grows by a few megabytes, and each 4 KiB page of it first
//!   touched was a page fault: about 900 of a run's 2,000 against rmcp on
//!   loopback, a tenth of its CPU. The first `REGION` of the heap is taken
//!   from the system at once, marked `MADV_HUGEPAGE` (where the system lets
//!   a process ask for transparent huge pages: `enabled` is `always` or
//!   `madvise`) and given back to the allocator, which then hands it out
//!   2 MiB at a time. Against rmcp, 30 alternating runs: page faults
//!   2,030 -> 650-900, CPU 28.5 -> 24.7 ms, wall 34.8 -> 30.6 ms; the
//!   10,000-tool run's peak RSS unchanged (46.6-47.4 MiB in both, a
//!   non-LTO build). Blocks up to `REGION` come from the heap too (glibc
//!   would map the larger ones anew each time, page by page), and the top of
//!   the heap is kept (not trimmed) up to twice that.

/// The part of the heap set up in huge pages.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const REGION: usize = 8 << 20;

#[cfg(all(target_os = "linux", target_env = "gnu"))]
pub fn prepare() {
    // SAFETY: mallopt only sets allocator parameters, malloc/free take and
    // give back one block, and madvise only advises on pages of that block
    // (whole 2 MiB pages inside it); all before any other thread exists, as
    // glibc asks of mallopt.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, 1);
        libc::mallopt(libc::M_MMAP_THRESHOLD, REGION as libc::c_int);
        libc::mallopt(libc::M_TRIM_THRESHOLD, (2 * REGION) as libc::c_int);
        let block = libc::malloc(REGION - 64);
        if block.is_null() {
            return;
        }
        let huge = 2usize << 20;
        let start = (block as usize).next_multiple_of(huge);
        let end = (block as usize + REGION - 64) & !(huge - 1);
        if end > start {
            // Advice only: refused (no THP in this kernel), nothing changes.
            libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE);
        }
        libc::free(block);
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
pub fn prepare() {}
