//! The worker pool's behaviour, failure modes included, in thread and process mode.
//!
//! A `harness = false` test: process workers re-execute this binary, so its `main` must
//! call `worker_main` before anything else, which libtest's generated `main` cannot;
//! libtest-mimic runs the cases instead (same filters and output). With `POOL_SCENARIO`
//! set, the binary plays a parent program that the tests kill or interrupt from outside.

// Built by libtest instead (the `[[test]]` entry with `harness = false` lost from
// Cargo.toml), this file's main would never run: say so loudly rather than pass silently.
#![cfg_attr(test, allow(dead_code, unused_imports))]
#[cfg(test)]
#[test]
fn pool_tests_need_harness_false() {
    panic!("tests/tests/pool/main.rs must be a `[[test]] name = \"pool\" harness = false` target in tests/Cargo.toml");
}

mod batch_cases;
mod cases;
#[cfg(unix)]
mod crash_cases;
mod journal_cases;
mod large_cases;
mod logged;
mod reroute_cases;
mod scenario;
mod shared_cases;
mod support;
mod tasks;
#[cfg(unix)]
mod unix_cases;
#[cfg(windows)]
mod windows_cases;

use libtest_mimic::{Arguments, Trial};
use polycompute::WorkerMode::{Process, Thread};

fn main() -> std::process::ExitCode {
    // The cases panic on purpose by the hundred: keep those out of the output.
    let default_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let msg = info.payload().downcast_ref::<String>().map(String::as_str);
        let msg = msg.or_else(|| info.payload().downcast_ref::<&str>().copied()).unwrap_or("");
        if !msg.starts_with(tasks::DELIBERATE) {
            default_hook(info);
        }
    }));
    polycompute::worker_main(&tasks::worker_tasks());
    if let Ok(which) = std::env::var(shared_cases::ENV) {
        return shared_cases::scenario(&which);
    }
    if let Ok(which) = std::env::var(scenario::ENV) {
        return scenario::run(&which);
    }
    let mut args = Arguments::from_args();
    // One case at a time: several cases measure how fast something happens (a timeout,
    // a shutdown within a second), which other cases' processes would skew on 2 cores.
    args.test_threads.get_or_insert(1);
    let trials = cases_list()
        .into_iter()
        .map(|(name, case)| {
            Trial::test(name, move || {
                std::panic::catch_unwind(case).map_err(|p| {
                    p.downcast_ref::<String>()
                        .cloned()
                        .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                        .unwrap_or_default()
                        .into()
                })
            })
        })
        .collect();
    libtest_mimic::run(&args, trials).exit_code()
}

type Case = (&'static str, fn());
/// Every case; `both` ones run in thread and in process mode.
fn cases_list() -> Vec<Case> {
    macro_rules! both {
        ($f:ident) => {
            [
                (concat!("thread::", stringify!($f)), (|| cases::$f(Thread)) as fn()),
                (concat!("process::", stringify!($f)), (|| cases::$f(Process)) as fn()),
            ]
        };
    }
    macro_rules! one {
        ($mode:literal, $f:ident) => {
            [(concat!($mode, "::", stringify!($f)), cases::$f as fn())]
        };
    }
    [
        both!(results_in_order).as_slice(),
        &both!(many_threads_submit_at_once),
        &both!(task_error),
        &both!(panic_is_reported),
        &both!(timeout),
        &both!(cancellation),
        &both!(ten_thousand_with_one_percent_crashes),
        &one!("process", crashed_tasks_are_retried),
        &both!(unknown_task),
        &one!("both", same_seed_same_results),
        &one!("both", streams_do_not_depend_on_history),
        &both!(serialization),
        &one!("process", task_printing_does_not_corrupt_the_channel),
        &both!(sticky_device_fault_replaces_the_worker),
        &one!("thread", sticky_fault_gets_a_fresh_context_in_thread_mode),
        &both!(shared_data_and_init),
        &both!(drop_shuts_down_within_a_second),
        &both!(callback_runs_off_the_caller_thread),
        &both!(max_tasks_per_worker),
        &one!("process", worker_that_cannot_start),
        &one!("process", mismatched_task_types_are_refused),
        &one!("pool", bad_configuration),
        &one!("pool", backend_env_selects_the_devices),
        &both!(wait_timeout_and_is_finished),
        &batch_cases(),
        &[
            ("thread::dropped_failing_handle_is_logged", || logged::dropped_failing_handle_is_logged(Thread)),
            ("process::dropped_failing_handle_is_logged", || logged::dropped_failing_handle_is_logged(Process)),
        ],
        &shared_cases(),
        &[
            ("thread::journal::skips_finished_tasks", || journal_cases::journal_skips_finished_tasks(Thread)),
            ("process::journal::skips_finished_tasks", || journal_cases::journal_skips_finished_tasks(Process)),
            ("thread::journal::of_another_job_is_refused", || journal_cases::journal_of_another_job_is_refused(Thread)),
        ],
        #[cfg(unix)]
        &unix_cases(),
    ]
    .concat()
}

/// Per-task accounting inside batches, in both modes.
fn batch_cases() -> Vec<Case> {
    macro_rules! both {
        ($f:ident) => {
            [
                (concat!("thread::batch::", stringify!($f)), (|| batch_cases::$f(Thread)) as fn()),
                (concat!("process::batch::", stringify!($f)), (|| batch_cases::$f(Process)) as fn()),
            ]
        };
    }
    [
        both!(timeouts_are_per_task_inside_a_batch).as_slice(),
        &both!(shutdown_keeps_finished_results),
        &both!(random_failures_chunk_1),
        &both!(random_failures_chunk_4),
        &both!(random_failures_chunk_auto),
        &[
            ("thread::reroute::unsupported_everywhere", || {
                reroute_cases::unsupported_everywhere_ends_with_the_devices_tried(Thread)
            }),
            ("process::reroute::unsupported_everywhere", || {
                reroute_cases::unsupported_everywhere_ends_with_the_devices_tried(Process)
            }),
            ("thread::reroute::f64_tasks_leave_the_gpu_without_f64", || {
                reroute_cases::f64_tasks_leave_the_gpu_without_f64(Thread)
            }),
            ("process::reroute::f64_tasks_leave_the_gpu_without_f64", || {
                reroute_cases::f64_tasks_leave_the_gpu_without_f64(Process)
            }),
        ],
        #[cfg(unix)]
        &[(
            "process::batch::killed_between_tasks_charges_nobody",
            batch_cases::killed_between_tasks_charges_nobody as fn(),
        )],
    ]
    .concat()
}

/// Shared arrays: in both modes, then the cleanup cases.
fn shared_cases() -> Vec<Case> {
    macro_rules! both {
        ($f:ident) => {
            [
                (concat!("thread::shared::", stringify!($f)), (|| shared_cases::$f(Thread)) as fn()),
                (concat!("process::shared::", stringify!($f)), (|| shared_cases::$f(Process)) as fn()),
            ]
        };
    }
    [
        both!(workers_read_a_shared_input).as_slice(),
        &both!(workers_write_disjoint_rows),
        &both!(bad_handles),
        &both!(lock_serializes_workers),
        &[
            ("thread::large::values_travel_through_shared_memory", || {
                large_cases::large_values_travel_through_shared_memory(Thread)
            }),
            ("process::large::values_travel_through_shared_memory", || {
                large_cases::large_values_travel_through_shared_memory(Process)
            }),
            ("thread::large::ndarray_inputs_need_no_change", || {
                large_cases::large_ndarray_inputs_need_no_change(Thread)
            }),
            ("process::large::ndarray_inputs_need_no_change", || {
                large_cases::large_ndarray_inputs_need_no_change(Process)
            }),
            ("thread::large::temporary_shared_inputs_live_until_decoded", || {
                large_cases::temporary_shared_inputs_live_until_decoded(Thread)
            }),
            ("process::large::temporary_shared_inputs_live_until_decoded", || {
                large_cases::temporary_shared_inputs_live_until_decoded(Process)
            }),
        ],
        &[("pool::shared::upload_shared", shared_cases::upload_shared as fn())],
        &[("pool::shared::cleanup_after_exit", shared_cases::cleanup_after_exit as fn())],
        #[cfg(unix)]
        &[("process::shared::cleanup_after_parent_sigkill", shared_cases::cleanup_after_parent_sigkill as fn())],
        #[cfg(windows)]
        &[("process::parent_killed_leaves_no_worker", windows_cases::parent_killed_leaves_no_worker as fn())],
    ]
    .concat()
}

/// The cases that need Unix signals.
#[cfg(unix)]
fn unix_cases() -> Vec<Case> {
    let (thread, process): (fn(), fn()) =
        (|| unix_cases::ctrl_c_exits_cleanly(Thread), || unix_cases::ctrl_c_exits_cleanly(Process));
    vec![
        ("process::abort_and_exit", unix_cases::abort_and_exit),
        ("process::worker_killed_from_outside", unix_cases::worker_killed_from_outside),
        ("process::parent_sigkill_leaves_no_worker", unix_cases::parent_sigkill_leaves_no_worker),
        ("process::crash::finished_tasks_never_run_again_chunk_1", crash_cases::finished_tasks_never_run_again_chunk_1),
        ("process::crash::finished_tasks_never_run_again_chunk_4", crash_cases::finished_tasks_never_run_again_chunk_4),
        (
            "process::crash::finished_tasks_never_run_again_chunk_auto",
            crash_cases::finished_tasks_never_run_again_chunk_auto,
        ),
        ("thread::ctrl_c_exits_cleanly", thread),
        ("process::ctrl_c_exits_cleanly", process),
    ]
}
