//! [`TaskRng`]: the per-task random generator, a Philox4x32-10 stream chosen by the pool's
//! seed, the submission's key and the input's position in its submission, so a task draws the
//! same numbers whichever worker runs it, however many workers there are, in every worker kind,
//! and whatever was submitted before it when its submission has a key of its own
//! ([`Pool::seeded`](crate::Pool::seeded)).

use polycompute_core::philox;

/// Which stream a task's [`TaskRng`] reads: the pool's rule ([`PoolBuilder::streams`]).
///
/// [`PoolBuilder::streams`]: crate::PoolBuilder::streams
///
/// ```
/// use polycompute_pool::{Streams, TaskRng};
///
/// // The default: input 3 of a submission with key 2, under pool seed 7.
/// let mut a = TaskRng::for_submission(7, 2, 3);
/// let mut b = TaskRng::for_submission(7, 2, 3);
/// assert_eq!(a.next_u64(), b.next_u64());
/// assert_eq!(Streams::default(), Streams::PerSubmission);
/// ```
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub enum Streams {
    /// Input `p` of a submission reads stream `p` of the submission's key: the key given to
    /// [`Pool::seeded`](crate::Pool::seeded), else the number of submissions made on this
    /// pool before it (0 for the first). The same inputs under the same key draw the same
    /// numbers whatever ran before: [`TaskRng::for_submission`]`(pool seed, key, p)`.
    #[default]
    PerSubmission,
    /// Task `i` (its [`task_index`](crate::WorkerContext::task_index), counted over every
    /// submission to the pool) reads stream `i` of the pool seed: [`TaskRng::new`]`(seed, i)`.
    /// The rule before per-submission streams; the same batch then draws other numbers after
    /// other tasks were submitted. Submissions through `Pool::seeded` still use their key.
    ByTaskIndex,
}

/// Where one task's stream is: the 64-bit Philox key and the stream number (counter words 2
/// and 3). The pool computes it; a worker only reads it, so every worker kind agrees.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(crate) struct StreamId {
    pub(crate) key: u64,
    pub(crate) stream: u64,
}

impl StreamId {
    /// The stream `k` places further on: input `first + k` of the same submission.
    pub(crate) fn offset(self, k: u64) -> StreamId {
        StreamId { key: self.key, stream: self.stream.wrapping_add(k) }
    }

    /// Task `index`'s stream under the [`Streams::ByTaskIndex`] rule.
    pub(crate) fn by_task_index(seed: u64, index: u64) -> StreamId {
        StreamId { key: mix(seed), stream: index }
    }

    /// Input `position` of the submission keyed `key`, under the pool seed `seed`.
    pub(crate) fn per_submission(seed: u64, key: u64, position: u64) -> StreamId {
        // Mixed twice, with the key mixed on its own first: (seed, key) and (key, seed) or
        // (seed ^ key, 0) give unrelated streams, and no key gives the task-index rule's.
        StreamId { key: mix(mix(seed) ^ mix(!key)), stream: position }
    }
}

/// A counter-based generator for one task: block `b` of stream `t` under the 64-bit key `k`
/// is `philox4x32_10([b_lo, b_hi, t_lo, t_hi], [k_lo, k_hi])`. Keys are mixed from the pool
/// seed (SplitMix64's finalizer) so a task's stream never coincides with a device fill of the
/// same seed (those use counter words 2 and 3 = 0 and the seed itself as the key).
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
    /// The generator of task `index` under pool seed `seed` by the [`Streams::ByTaskIndex`]
    /// rule: what `ctx.rng()` gives task `index` of a pool built with that rule.
    ///
    /// ```
    /// use polycompute_pool::TaskRng;
    ///
    /// let (mut a, mut b) = (TaskRng::new(42, 7), TaskRng::new(42, 8));
    /// assert_ne!(a.next_u64(), b.next_u64());
    /// ```
    pub fn new(seed: u64, index: u64) -> TaskRng {
        TaskRng::at(StreamId::by_task_index(seed, index))
    }

    /// The generator of input `position` of a submission keyed `key` under pool seed `seed`,
    /// by the default [`Streams::PerSubmission`] rule: what `ctx.rng()` gives that task. The
    /// key is the one given to [`Pool::seeded`](crate::Pool::seeded), or else the number of
    /// submissions made on the pool before (0 for a fresh pool's first `map`).
    ///
    /// ```
    /// use polycompute_pool::TaskRng;
    ///
    /// let mut first = TaskRng::for_submission(42, 0, 5);
    /// let mut second = TaskRng::for_submission(42, 1, 5);
    /// assert_ne!(first.next_u64(), second.next_u64(), "another submission, another stream");
    /// ```
    pub fn for_submission(seed: u64, key: u64, position: u64) -> TaskRng {
        TaskRng::at(StreamId::per_submission(seed, key, position))
    }

    pub(crate) fn at(id: StreamId) -> TaskRng {
        TaskRng { key: philox::key(id.key), stream: id.stream, block: 0, words: [0; 4], used: 4 }
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
    fn submission_streams_depend_on_seed_key_and_position_only() {
        let draw = |mut r: TaskRng| (0..4).map(|_| r.next_u64()).collect::<Vec<_>>();
        let a = draw(TaskRng::for_submission(42, 3, 9));
        assert_eq!(a, draw(TaskRng::for_submission(42, 3, 9)));
        for other in [
            TaskRng::for_submission(43, 3, 9),
            TaskRng::for_submission(42, 4, 9),
            TaskRng::for_submission(42, 3, 10),
            // The rules never share a stream: same seed, key 0 and the task-index rule.
            TaskRng::new(42, 9),
            // Swapping seed and key is another stream.
            TaskRng::for_submission(3, 42, 9),
        ] {
            assert_ne!(a, draw(other));
        }
        assert_ne!(draw(TaskRng::for_submission(42, 0, 9)), draw(TaskRng::new(42, 9)));
        let id = StreamId::per_submission(42, 3, 5);
        assert_eq!(TaskRng::at(id.offset(4)).next_u64(), TaskRng::for_submission(42, 3, 9).next_u64());
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
