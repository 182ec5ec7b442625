//! Process groups of spawned servers. Each server runs in a group of its
//! own, so that it is killed together with the children it starts (npx,
//! uv and shell wrappers start the real server as a child). Process groups
//! are a Unix notion; elsewhere only the direct child is killed (by tokio).

use std::sync::Mutex;

/// Process groups alive right now, so an interrupt can take them down.
static LIVE_GROUPS: Mutex<Vec<i32>> = Mutex::new(Vec::new());

pub(super) fn register(pgid: i32) {
    if let Ok(mut l) = LIVE_GROUPS.lock() {
        l.push(pgid);
    }
}

/// Kill one group now and forget it.
pub(super) fn kill_group(pgid: i32) {
    signal_group(pgid);
    if let Ok(mut l) = LIVE_GROUPS.lock() {
        l.retain(|x| *x != pgid);
    }
}

/// Kill every spawned server group (used by the interrupt handler).
pub fn kill_all_groups() {
    let groups = LIVE_GROUPS.lock().map(|g| g.clone()).unwrap_or_default();
    for g in groups {
        signal_group(g);
    }
}

#[cfg(unix)]
fn signal_group(pgid: i32) {
    // SAFETY: killpg takes two integers and touches no memory of this
    // process. The group id came from a child spawned with process_group(0)
    // (its pid is its group id); if the group is already gone the call
    // fails with ESRCH and nothing happens.
    unsafe {
        libc::killpg(pgid, libc::SIGKILL);
    }
}

#[cfg(not(unix))]
fn signal_group(_pgid: i32) {}
