//! [`TaskRng`]: the per-task random generator, a Philox4x32-10 stream keyed by the pool's
//! seed and numbered by the task index, so a task draws the same numbers whichever worker
//! runs it, however many workers there are and in either worker mode.

use polycompute_core::philox;

/// A counter-based generator for one task: block `b` of task `t` under seed `s` is
/// `philox4x32_10([b_lo, b_hi, t_lo, t_hi], key(mix(s)))`. The seed is mixed first so a
/// task's stream never coincides with a device fill of the same seed (those use counter
/// words 2 and 3 = 0).
#[derive(Clone, Debug)]
pub struct TaskRng {
    key: [u32; 2],
    stream: u64,
    block: u64,
    words: [u32; 4],
    used: usize,
}

/// SplitMix64's finalizer: spreads every seed bit over the whole key.
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl TaskRng {
    /// The generator of task `index` under pool seed `seed`.
    pub fn new(seed: u64, index: u64) -> TaskRng {
        TaskRng { key: philox::key(mix(seed)), stream: index, block: 0, words: [0; 4], used: 4 }
    }

    /// The next 32 random bits.
    pub fn next_u32(&mut self) -> u32 {
        if self.used == 4 {
            let b = self.block;
            self.words = philox::philox4x32_10(
                [b as u32, (b >> 32) as u32, self.stream as u32, (self.stream >> 32) as u32],
                self.key,
            );
            self.block += 1;
            self.used = 0;
        }
        let w = self.words[self.used];
        self.used += 1;
        w
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        let lo = self.next_u32() as u64;
        ((self.next_u32() as u64) << 32) | lo
    }

    /// A uniform `f64` in `[0, 1)` (53 random bits).
    pub fn next_f64(&mut self) -> f64 {
        philox::bits_to_unit_f64(self.next_u64())
    }

    /// A uniform `f32` in `[0, 1)` (24 random bits).
    pub fn next_f32(&mut self) -> f32 {
        philox::bits_to_unit_f32(self.next_u32())
    }

    /// A uniform integer in `0..n` without modulo bias (Lemire's method); 0 when `n` is 0.
    pub fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            return 0;
        }
        loop {
            let m = (self.next_u64() as u128) * (n as u128);
            if (m as u64) >= n.wrapping_neg() % n {
                return (m >> 64) as u64;
            }
        }
    }

    /// A seed for a device fill (`Device::uniform(seed, ..)`) drawn from this stream.
    pub fn seed(&mut self) -> u64 {
        self.next_u64()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_are_reproducible_and_distinct() {
        let a: Vec<u64> = (0..10)
            .map({
                let mut r = TaskRng::new(42, 7);
                move |_| r.next_u64()
            })
            .collect();
        let mut r = TaskRng::new(42, 7);
        assert_eq!(a, (0..10).map(|_| r.next_u64()).collect::<Vec<_>>());
        let mut other_task = TaskRng::new(42, 8);
        let mut other_seed = TaskRng::new(43, 7);
        assert_ne!(a[0], other_task.next_u64());
        assert_ne!(a[0], other_seed.next_u64());
        // Task 0's stream is not the device fill stream of the same seed.
        let mut t0 = TaskRng::new(5, 0);
        assert_ne!(t0.next_u32(), philox::uniform_u32(5, 0));
    }

    #[test]
    fn below_stays_in_range_and_covers_it() {
        let mut r = TaskRng::new(1, 1);
        let mut seen = [false; 7];
        for _ in 0..1000 {
            let v = r.below(7);
            assert!(v < 7);
            seen[v as usize] = true;
        }
        assert!(seen.iter().all(|&s| s));
        assert_eq!(r.below(0), 0);
        let f = r.next_f64();
        assert!((0.0..1.0).contains(&f));
    }
}
