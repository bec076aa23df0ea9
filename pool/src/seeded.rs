//! [`Seeded`]: submissions under a random-stream key of their own ([`Pool::seeded`]).

use super::error::TaskError;
use super::handle::{JobHandle, MapResults};
use super::runtime::Pool;
use super::task::Task;

/// A pool whose submissions key their tasks' random streams by a key the caller chose, not
/// by how many submissions came before: from [`Pool::seeded`]. Each method is the pool's own
/// method of that name; input `p` of each submission draws
/// [`TaskRng::for_submission`](crate::TaskRng::for_submission)`(pool seed, key, p)`, so two
/// submissions under one key draw the same numbers.
///
/// ```
/// # extern crate polycompute_cpu; // links the CPU backend, as the facade does
/// use polycompute_pool::{BoxError, Pool, Task, Tasks, WorkerContext, WorkerMode};
///
/// struct Draw;
/// impl Task for Draw {
///     const NAME: &'static str = "draw";
///     type Input = ();
///     type Output = u64;
///     fn run(&self, ctx: &mut WorkerContext, _: ()) -> Result<u64, BoxError> {
///         Ok(ctx.rng().next_u64())
///     }
/// }
///
/// let tasks = Tasks::new().add(Draw);
/// let pool = Pool::builder(&tasks).mode(WorkerMode::Thread).build().unwrap();
/// let one = pool.seeded(5).submit::<Draw>(()).wait().unwrap();
/// assert_eq!(pool.seeded(5).map::<Draw>([()])[0].as_ref().unwrap(), &one);
/// ```
#[derive(Copy, Clone, Debug)]
pub struct Seeded<'a> {
    pub(crate) pool: &'a Pool,
    pub(crate) key: u64,
}

impl Seeded<'_> {
    /// The key this submitter's streams are keyed by.
    pub fn key(&self) -> u64 {
        self.key
    }

    /// [`Pool::submit`] under this key.
    pub fn submit<T: Task>(&self, input: T::Input) -> JobHandle<T> {
        self.pool.submit_keyed(Some(self.key), input)
    }

    /// [`Pool::submit_with`] under this key.
    pub fn submit_with<T: Task>(
        &self,
        input: T::Input,
        callback: impl FnOnce(Result<T::Output, TaskError>) + Send + 'static,
    ) -> u64 {
        self.pool.submit_with_keyed::<T>(Some(self.key), input, callback)
    }

    /// [`Pool::map`] under this key.
    pub fn map<T: Task>(&self, inputs: impl IntoIterator<Item = T::Input>) -> Vec<Result<T::Output, TaskError>> {
        self.pool.map_keyed::<T>(Some(self.key), inputs)
    }

    /// [`Pool::map_unordered`] under this key.
    pub fn map_unordered<T: Task>(&self, inputs: impl IntoIterator<Item = T::Input>) -> MapResults<T> {
        self.pool.map_unordered_keyed::<T>(Some(self.key), inputs)
    }
}
