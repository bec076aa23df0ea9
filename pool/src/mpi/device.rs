//! The node-local device rule: a worker rank opens the device of its node-local rank.

use polycompute_core::backend::BackendKind;
use polycompute_core::DeviceId;

/// The device for node-local rank `local_rank`: the one GPU when exactly one is visible
/// (`CUDA_VISIBLE_DEVICES`, or a launcher's `--gpus-per-task=1`); otherwise GPU
/// `local_rank % count` of the first backend with GPUs (CUDA, then wgpu); the CPU on a
/// node without GPUs.
pub(crate) fn for_local_rank(local_rank: usize) -> DeviceId {
    if let Some(ordinal) = fake_gpus().map(|n| pick(&(0..n).collect::<Vec<_>>(), local_rank)) {
        return ordinal.map_or(DeviceId::new(BackendKind::Cpu, 0), |o| DeviceId::new(BackendKind::Cuda, o));
    }
    let gpus = |kind: BackendKind| -> Vec<usize> {
        polycompute_core::registry::backend(kind)
            .and_then(|b| b.devices())
            .map(|ds| ds.into_iter().filter(|d| !d.is_cpu).map(|d| d.ordinal).collect())
            .unwrap_or_default()
    };
    for kind in [BackendKind::Cuda, BackendKind::Wgpu] {
        let found = gpus(kind);
        if let Some(ordinal) = pick(&found, local_rank) {
            return DeviceId::new(kind, ordinal);
        }
    }
    DeviceId::new(BackendKind::Cpu, 0)
}

/// For tests of the rule on machines without GPUs (`scripts/mpi-two-node.sh`), compiled in
/// only with the test feature `mpi-fake-gpus`: the node's CUDA GPU count, instead of asking
/// the backends. Only the device a rank reports changes (as `probe` shows it); a pool on such
/// a rank would fail to open a GPU that is not there.
#[cfg(feature = "mpi-fake-gpus")]
fn fake_gpus() -> Option<usize> {
    std::env::var("POLYCOMPUTE_MPI_FAKE_GPUS").ok()?.trim().parse().ok()
}

/// Without the test feature: the backends are always asked.
#[cfg(not(feature = "mpi-fake-gpus"))]
fn fake_gpus() -> Option<usize> {
    None
}

/// The rule itself: one visible GPU is everyone's; otherwise local rank modulo the count.
fn pick(ordinals: &[usize], local_rank: usize) -> Option<usize> {
    match ordinals.len() {
        0 => None,
        n => Some(ordinals[local_rank % n]),
    }
}

#[cfg(test)]
mod tests {
    use super::pick;

    #[test]
    fn ranks_share_gpus_round_robin_and_one_visible_gpu_is_everyones() {
        assert_eq!(pick(&[], 3), None);
        assert_eq!(pick(&[0], 5), Some(0));
        assert_eq!((0..5).map(|r| pick(&[0, 1], r).unwrap()).collect::<Vec<_>>(), [0, 1, 0, 1, 0]);
    }
}
