//! Launch configurations. Every kernel launch of this backend gets its grid, block and
//! dynamic shared memory from [`plan`] (through the per-family helpers below), checked
//! against the device's limits: a launch either covers its whole problem or the op fails
//! with [`Error::TooLarge`] before anything runs. The driver refuses a launch beyond the
//! limits (`CUDA_ERROR_INVALID_VALUE`), but a grid clamped to fit them without a loop in the
//! kernel would silently leave work undone; so each grid axis says whether its kernel strides
//! over it ([`Axis::Strided`], any count from 1 covers the work) or needs one block per unit
//! of work ([`Axis::Exact`]).
//!
//! The helpers are pure functions of the sizes and the [`Limits`], so the host emulation
//! tests run kernels with exactly the grids the backend launches, and with small limits, to
//! prove the in-kernel loops cover everything.

use polycompute_core::{Error, Result};

/// A device's launch limits: CUDA's documented values ([`Limits::CUDA`]) unless the device
/// reports others.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Most blocks along x, y and z (`CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_*`).
    pub grid: [u32; 3],
    /// Most threads of a block along x, y and z (`CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_*`).
    pub block: [u32; 3],
    /// Most threads of a block in all (`CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK`).
    pub threads: u32,
    /// Most dynamic shared memory of a block without opting in, in bytes
    /// (`CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK`).
    pub shared: u32,
}

impl Limits {
    /// The limits of every CUDA device since compute capability 3.0.
    pub const CUDA: Limits =
        Limits { grid: [i32::MAX as u32, 65535, 65535], block: [1024, 1024, 64], threads: 1024, shared: 48 * 1024 };

    /// The limits from the device attributes `query` returns (in the order of
    /// [`Limits::ATTRIBUTES`]); an attribute the driver cannot report (an error, or not
    /// positive) keeps CUDA's documented value.
    pub fn from_attributes(mut query: impl FnMut(i32) -> Option<i32>) -> Limits {
        let mut values = [0u32; 8];
        let defaults = Self::CUDA.as_array();
        for ((v, attr), default) in values.iter_mut().zip(Self::ATTRIBUTES).zip(defaults) {
            *v = query(attr).filter(|&x| x > 0).map_or(default, |x| x as u32);
        }
        let [gx, gy, gz, bx, by, bz, threads, shared] = values;
        Limits { grid: [gx, gy, gz], block: [bx, by, bz], threads, shared }
    }

    /// The driver attributes read by [`Limits::from_attributes`]: `MAX_GRID_DIM_X/Y/Z` (5-7),
    /// `MAX_BLOCK_DIM_X/Y/Z` (2-4), `MAX_THREADS_PER_BLOCK` (1), `MAX_SHARED_MEMORY_PER_BLOCK` (8).
    pub const ATTRIBUTES: [i32; 8] = [5, 6, 7, 2, 3, 4, 1, 8];

    fn as_array(&self) -> [u32; 8] {
        let (g, b) = (self.grid, self.block);
        [g[0], g[1], g[2], b[0], b[1], b[2], self.threads, self.shared]
    }
}

/// How a kernel covers one axis of its grid.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Axis {
    /// Exactly this many blocks: the kernel does not loop along the axis, so fewer would
    /// leave work undone (more than the limit is [`Error::TooLarge`]).
    Exact(u64),
    /// `blocks` blocks' worth of work that the kernel strides over (`for (b = blockIdx;
    /// b < blocks; b += gridDim)`): any count from 1 covers it. At most `cap` are launched
    /// (fewer, larger trips fill the device as well), and never more than the limit.
    Strided {
        /// Units of work (blocks that would each do one trip).
        blocks: u64,
        /// The most blocks worth launching.
        cap: u64,
    },
}

/// A launch's configuration: what `cuLaunchKernel` gets.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct LaunchConfig {
    /// Blocks along x, y, z.
    pub grid: [u32; 3],
    /// Threads of a block along x, y, z.
    pub block: [u32; 3],
    /// Dynamic shared memory per block, in bytes.
    pub shared: u32,
}

/// The configuration of a launch of `op` whose grid covers `axes` with blocks of `block`
/// threads and `shared` bytes of dynamic shared memory, within `limits`; `TooLarge` (naming
/// `op`, the size and the limit) when no such launch covers the work.
pub fn plan(op: &str, axes: [Axis; 3], block: [u32; 3], shared: u32, limits: &Limits) -> Result<LaunchConfig> {
    const NAMES: [&str; 3] = ["x", "y", "z"];
    let threads = block.iter().map(|&b| b as u64).product::<u64>();
    if block.contains(&0) || threads > limits.threads as u64 {
        return Err(Error::TooLarge(format!(
            "{op}: a block of {}x{}x{} threads is beyond this device's {} threads per block",
            block[0], block[1], block[2], limits.threads
        )));
    }
    for (d, (&b, &max)) in block.iter().zip(&limits.block).enumerate() {
        if b > max {
            return Err(Error::TooLarge(format!(
                "{op}: a block of {b} threads along {} is beyond this device's blockDim.{} limit of {max}",
                NAMES[d], NAMES[d]
            )));
        }
    }
    if shared > limits.shared {
        return Err(Error::TooLarge(format!(
            "{op}: {shared} bytes of shared memory per block are beyond this device's {} bytes",
            limits.shared
        )));
    }
    let mut grid = [1u32; 3];
    for (d, axis) in axes.iter().enumerate() {
        let max = limits.grid[d].max(1) as u64;
        grid[d] = match *axis {
            Axis::Exact(n) if n <= max => n.max(1) as u32,
            Axis::Exact(n) => {
                return Err(Error::TooLarge(format!(
                    "{op} needs {n} blocks along {}, beyond the device's gridDim.{} limit of {max} \
                     (its kernel does not loop along that axis); split the operation into smaller calls",
                    NAMES[d], NAMES[d]
                )))
            }
            Axis::Strided { blocks, cap } => blocks.min(cap).min(max).max(1) as u32,
        };
    }
    Ok(LaunchConfig { grid, block, shared })
}

/// Blocks of a 1-D grid-stride launch per multiprocessor: enough to hide latency; past it
/// each thread just takes more trips.
pub const BLOCKS_PER_SM: u64 = 32;

/// A 1-D grid-stride launch of `op` over `items` with `block`-thread blocks on a device of
/// `sms` multiprocessors (the kernel loops, so the grid is capped at [`BLOCKS_PER_SM`] per
/// multiprocessor).
pub fn strided_1d(op: &str, items: u64, block: u32, sms: u32, limits: &Limits) -> Result<LaunchConfig> {
    let cap = (sms.max(1) as u64) * BLOCKS_PER_SM;
    let x = Axis::Strided { blocks: items.div_ceil(block as u64), cap };
    plan(op, [x, Axis::Exact(1), Axis::Exact(1)], [block, 1, 1], 0, limits)
}

/// The own matmul kernels' launch (`codegen::matmul`, `codegen::matmul_half`): one block per
/// `bm × bn` output tile of `threads` threads; x (the column tiles) is exact, the kernels
/// loop over row tiles along y and over batch entries along z. Sizes within
/// [`MATMUL_MARGIN`] of `u32::MAX` are `TooLarge`.
pub fn matmul(
    op: &str,
    (batch, m, k, n): (usize, usize, usize, usize),
    (bm, bn, threads): (u32, u32, u32),
    limits: &Limits,
) -> Result<LaunchConfig> {
    // The kernels' u32 loops (`m + bm - 1`, `k0 += BK`, `z += gridDim.z`) would wrap for
    // sizes within a tile or a grid of 2^32 (a 64-bit count costs registers, and spills);
    // such shapes (M = N = 1 edge cases of a u32::MAX-element array) are refused instead.
    let margin = u32::MAX as u64 - MATMUL_MARGIN;
    for (what, v) in [("m", m), ("n", n), ("k", k), ("batch", batch)] {
        if v as u64 > margin {
            return Err(Error::TooLarge(format!(
                "{op}: {what} = {v} is beyond the own matmul kernels' {margin} (their 32-bit loops); split the matmul"
            )));
        }
    }
    let x = Axis::Exact((n as u64).div_ceil(bn as u64));
    let y = Axis::Strided { blocks: (m as u64).div_ceil(bm as u64), cap: u64::MAX };
    let z = Axis::Strided { blocks: batch as u64, cap: u64::MAX };
    plan(op, [x, y, z], [threads, 1, 1], 0, limits)
}

/// The tiled transpose's launch (`codegen::layout`): `tiles` 32×32 tiles strided over by
/// 32×8-thread blocks, at most 64 per multiprocessor.
pub fn transpose_tiled(tiles: u64, sms: u32, limits: &Limits) -> Result<LaunchConfig> {
    let x = Axis::Strided { blocks: tiles, cap: sms.max(1) as u64 * 64 };
    plan("transpose", [x, Axis::Exact(1), Axis::Exact(1)], [32, 8, 1], 0, limits)
}

/// How far below `u32::MAX` the own matmul kernels' sizes must stay: their u32 loop steps
/// (a tile of 128, a K stage, the grid's 65,535 batch entries) must not pass 2^32.
pub const MATMUL_MARGIN: u64 = 65_536;

/// Most blocks of a reduction pass: the kernels stride over their (row, segment) blocks.
pub const REDUCE_BLOCKS: u64 = 1 << 20;

/// The row reduction kernel's launch (`codegen::reduce::rows_kernel`): one block of `block`
/// threads per (row, segment) of the `blocks`, strided over.
pub fn reduce_rows(op: &str, blocks: u64, block: u32, limits: &Limits) -> Result<LaunchConfig> {
    let x = Axis::Strided { blocks, cap: REDUCE_BLOCKS };
    plan(op, [x, Axis::Exact(1), Axis::Exact(1)], [block, 1, 1], 0, limits)
}

/// The column reduction kernel's launch (`codegen::reduce::cols_kernel`): one thread per
/// (output, segment) of the `threads`, 256 to a block, strided over.
pub fn reduce_cols(op: &str, threads: u64, limits: &Limits) -> Result<LaunchConfig> {
    let x = Axis::Strided { blocks: threads.div_ceil(256), cap: REDUCE_BLOCKS };
    plan(op, [x, Axis::Exact(1), Axis::Exact(1)], [256, 1, 1], 0, limits)
}

/// `value` as a kernel's u32 size parameter, or `TooLarge` naming `op` and `what`: the
/// kernels index with 32-bit words (core caps arrays at `u32::MAX` elements; this keeps a
/// size that slipped past from being truncated into a silently smaller problem).
#[cfg(test)]
pub fn word(op: &str, what: &str, value: usize) -> Result<u32> {
    u32::try_from(value).map_err(|_| {
        Error::TooLarge(format!(
            "{op}: {what} = {value} is beyond the CUDA kernels' 32-bit sizes (at most {}); split the array",
            u32::MAX
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const L: Limits = Limits::CUDA;

    #[test]
    fn strided_axes_clamp_to_the_limit_and_exact_axes_refuse_it() {
        let c = plan(
            "t",
            [Axis::Exact(3), Axis::Strided { blocks: 1 << 40, cap: u64::MAX }, Axis::Exact(1)],
            [256, 1, 1],
            0,
            &L,
        )
        .unwrap();
        assert_eq!(c.grid, [3, 65535, 1]);
        let c = plan("t", [Axis::Strided { blocks: 0, cap: 8 }, Axis::Exact(0), Axis::Exact(65535)], [1, 1, 1], 0, &L)
            .unwrap();
        assert_eq!(c.grid, [1, 1, 65535], "empty work still launches one block");
        match plan("matmul", [Axis::Exact(1), Axis::Exact(65536), Axis::Exact(1)], [256, 1, 1], 0, &L) {
            Err(Error::TooLarge(m)) => {
                assert!(m.contains("matmul") && m.contains("65536") && m.contains("gridDim.y limit of 65535"), "{m}")
            }
            other => panic!("{other:?}"),
        }
        let x = (i32::MAX as u64) + 1;
        assert!(matches!(
            plan("t", [Axis::Exact(x), Axis::Exact(1), Axis::Exact(1)], [1, 1, 1], 0, &L),
            Err(Error::TooLarge(_))
        ));
    }

    #[test]
    fn blocks_and_shared_memory_beyond_the_limits_are_refused() {
        let one = [Axis::Exact(1); 3];
        for block in [[1025, 1, 1], [32, 33, 1], [1, 1, 65], [0, 1, 1], [1, 1025, 1]] {
            assert!(matches!(plan("t", one, block, 0, &L), Err(Error::TooLarge(_))), "{block:?}");
        }
        assert!(plan("t", one, [1024, 1, 1], 48 * 1024, &L).is_ok());
        assert!(plan("t", one, [16, 16, 4], 0, &L).is_ok());
        assert!(matches!(plan("t", one, [256, 1, 1], 48 * 1024 + 1, &L), Err(Error::TooLarge(_))));
    }

    #[test]
    fn family_launches_cover_large_shapes_within_the_limits() {
        // Matmul: 70,000 row tiles along y and 70,000 batches along z are clamped (the kernel
        // loops); column tiles along x are exact.
        let c = matmul("matmul", (70_000, 128 * 70_000, 1, 129), (128, 128, 256), &L).unwrap();
        assert_eq!(c.grid, [2, 65535, 65535]);
        let small = Limits { grid: [4, 2, 3], ..L };
        let c = matmul("matmul", (7, 1000, 3, 4 * 128), (128, 128, 256), &small).unwrap();
        assert_eq!(c.grid, [4, 2, 3]);
        assert!(matches!(matmul("matmul", (1, 1, 1, 5 * 128), (128, 128, 256), &small), Err(Error::TooLarge(_))));
        // Within a margin of 2^32 the kernels' u32 loops would wrap: refused.
        let edge = u32::MAX as usize - 100;
        for sizes in [(1, edge, 1, 1), (1, 1, edge, 1), (1, 1, 1, edge), (edge, 1, 1, 1)] {
            assert!(matches!(matmul("matmul", sizes, (128, 128, 256), &L), Err(Error::TooLarge(_))), "{sizes:?}");
        }
        assert!(matmul("matmul", (1, u32::MAX as usize - 65_536, 1, 1), (128, 128, 256), &L).is_ok());
        let c = strided_1d("map", 65_536 * 256 + 1, 256, 132, &L).unwrap();
        assert_eq!(c.grid, [132 * 32, 1, 1]);
        assert_eq!(strided_1d("map", 5, 256, 0, &L).unwrap().grid, [1, 1, 1]);
        assert_eq!(reduce_rows("sum", 1 << 30, 256, &L).unwrap().grid, [1 << 20, 1, 1]);
        assert_eq!(transpose_tiled(1 << 30, 132, &L).unwrap().block, [32, 8, 1]);
    }

    #[test]
    fn limits_come_from_the_attributes_or_cudas_values() {
        assert_eq!(Limits::from_attributes(|_| None), L);
        let l = Limits::from_attributes(|a| {
            Some(if a == 6 {
                3
            } else if a == 8 {
                -1
            } else {
                0
            })
        });
        assert_eq!(l, Limits { grid: [i32::MAX as u32, 3, 65535], ..L });
    }

    #[test]
    fn sizes_beyond_u32_are_too_large() {
        assert_eq!(word("map", "n", u32::MAX as usize).unwrap(), u32::MAX);
        match word("map", "n", u32::MAX as usize + 1) {
            Err(Error::TooLarge(m)) => assert!(m.contains("map: n = 4294967296"), "{m}"),
            other => panic!("{other:?}"),
        }
    }
}
