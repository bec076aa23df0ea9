//! Ctrl-C for pools built with `PoolBuilder::shutdown_on_ctrl_c`: one process-wide handler
//! (the `ctrlc` crate: SIGINT on Unix, the console handler on Windows) shuts every such
//! pool down, so workers stop within a second and the program decides how to exit.

use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, OnceLock, Weak};

use super::state::PoolState;
use polycompute_core::sync::LockUnpoisoned;

/// The pools to shut down on Ctrl-C.
fn pools() -> &'static Mutex<Vec<Weak<PoolState>>> {
    static POOLS: OnceLock<Mutex<Vec<Weak<PoolState>>>> = OnceLock::new();
    POOLS.get_or_init(|| Mutex::new(Vec::new()))
}

/// Registers `inner` for Ctrl-C, installing the handler on first use.
pub(crate) fn register(inner: &Arc<PoolState>) -> Result<(), String> {
    static INSTALLED: OnceLock<Result<(), String>> = OnceLock::new();
    INSTALLED
        .get_or_init(|| {
            ctrlc::set_handler(|| {
                let pools: Vec<Arc<PoolState>> = {
                    let mut list = pools().lock_unpoisoned();
                    list.retain(|w| w.strong_count() > 0);
                    list.iter().filter_map(Weak::upgrade).collect()
                };
                for pool in pools {
                    pool.interrupted.store(true, Ordering::Release);
                    pool.shutdown();
                }
            })
            .map_err(|e| {
                format!("cannot install the Ctrl-C handler ({e}); another one is installed: shut the pool down from it")
            })
        })
        .clone()?;
    pools().lock_unpoisoned().push(Arc::downgrade(inner));
    Ok(())
}
