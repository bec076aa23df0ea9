//! [`Task`], the unit of work, and [`Tasks`], the registry of the tasks a program offers
//! (the same registry is given to the pool and to `worker_main`).

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use super::context::WorkerContext;

/// The error a task returns.
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// A kind of work the pool runs. Inputs and outputs are serde types, so what Python finds
/// out at run time ("can't pickle") is a compile error here; thread workers move them,
/// process workers serialize them.
///
/// ```
/// use polycompute_pool::{Task, WorkerContext};
/// struct Square;
/// impl Task for Square {
///     const NAME: &'static str = "square";
///     type Input = f64;
///     type Output = f64;
///     fn run(&self, _ctx: &mut WorkerContext, x: f64) -> Result<f64, polycompute_pool::BoxError> {
///         Ok(x * x)
///     }
/// }
/// let tasks = polycompute_pool::Tasks::new().add(Square);
/// assert_eq!(tasks.names(), vec!["square"]);
/// ```
pub trait Task: Send + Sync + 'static {
    /// The task's name: unique within a [`Tasks`]; process workers look tasks up by it.
    const NAME: &'static str;
    /// What the task takes.
    type Input: Serialize + DeserializeOwned + Send + 'static;
    /// What the task returns.
    type Output: Serialize + DeserializeOwned + Send + 'static;

    /// Runs once per worker before the worker's first run of this task: compile kernels,
    /// load read-only data (keep it with [`WorkerContext::set_local`]). An error fails
    /// the task that triggered it; the next task on that worker tries again.
    fn init(&self, ctx: &mut WorkerContext) -> Result<(), BoxError> {
        let _ = ctx;
        Ok(())
    }

    /// Runs the task on one input.
    fn run(&self, ctx: &mut WorkerContext, input: Self::Input) -> Result<Self::Output, BoxError>;
}

/// Why one input failed inside a worker; crosses the process boundary.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) enum Failure {
    /// The task's error.
    Failed { message: String, sticky: bool },
    /// The task's error was an `Error::Unsupported` naming the worker's device: this
    /// device cannot run it, another may (see `PoolState::refused`).
    Unsupported { message: String, device: polycompute_core::DeviceId },
    /// A panic's message.
    Panicked(String),
    /// Input or output (de)serialization.
    Serialization(String),
    /// The worker has no task of that name.
    UnknownTask(Vec<String>),
}

/// A task's output, type-erased while it travels through the pool.
pub(crate) type Value = Box<dyn Any + Send>;

/// A [`Task`] with its types erased, as the pool and the workers hold it.
pub(crate) trait ErasedTask: Send + Sync {
    fn name(&self) -> &'static str;
    fn task_type(&self) -> TypeId;
    /// The task's type with its input and output types: parent and worker must agree on it
    /// (postcard is not self-describing: another type would decode into garbage).
    fn signature(&self) -> String;
    /// Takes the next input from `inputs` (a `std::vec::IntoIter<T::Input>`) and runs it.
    fn run_local(&self, ctx: &mut WorkerContext, inputs: &mut (dyn Any + Send)) -> Result<Value, Failure>;
    /// Takes the next input from `inputs` (as for `run_local`) as an iterator of its own,
    /// of that one input: a timed thread worker takes inputs one at a time, so a watchdog
    /// can move the rest of a batch elsewhere while a task overruns.
    fn take_one(&self, inputs: &mut (dyn Any + Send)) -> Option<Box<dyn Any + Send>>;
    /// The encoding of the one input of `one` (from [`ErasedTask::take_one`]): a thread
    /// worker keeps it while the input runs, to queue the input again should the device
    /// refuse it. `None` when it cannot be encoded.
    fn encode_one(&self, one: &(dyn Any + Send)) -> Option<Vec<u8>>;
    /// An input encoded by [`ErasedTask::encode_one`], as a one-input iterator again.
    fn decode_one(&self, bytes: &[u8]) -> Option<Box<dyn Any + Send>>;
    /// Decodes `input`, runs it and appends the output to `out` as an item of `wire`
    /// (through shared memory when its encoding is over `spill_over` bytes); answers the
    /// item's tag.
    fn run_encoded(
        &self,
        ctx: &mut WorkerContext,
        input: &[u8],
        out: &mut Vec<u8>,
        spill_over: usize,
    ) -> Result<u8, Failure>;
    /// Decodes an output sent by a process worker.
    fn decode_output(&self, bytes: &[u8]) -> Result<Value, String>;
    /// Encodes an output (for the result journal); `None` when it is not this task's or
    /// cannot be encoded.
    fn encode_output(&self, value: &(dyn Any + Send)) -> Option<Vec<u8>>;
}

struct Typed<T: Task>(T);

impl<T: Task> Typed<T> {
    fn call(&self, ctx: &mut WorkerContext, input: T::Input) -> Result<T::Output, Failure> {
        if !ctx.is_initialized(T::NAME) {
            match catch_unwind(AssertUnwindSafe(|| self.0.init(ctx))) {
                Ok(Ok(())) => ctx.mark_initialized(T::NAME),
                Ok(Err(e)) => return Err(failure_of(&*e, "init: ")),
                Err(p) => return Err(Failure::Panicked(format!("in init: {}", panic_message(&*p)))),
            }
        }
        match catch_unwind(AssertUnwindSafe(|| self.0.run(ctx, input))) {
            Ok(Ok(out)) => Ok(out),
            Ok(Err(e)) => Err(failure_of(&*e, "")),
            Err(p) => Err(Failure::Panicked(panic_message(&*p))),
        }
    }
}

impl<T: Task> ErasedTask for Typed<T> {
    fn name(&self) -> &'static str {
        T::NAME
    }

    fn task_type(&self) -> TypeId {
        TypeId::of::<T>()
    }

    fn signature(&self) -> String {
        use std::any::type_name;
        format!("{} ({} -> {})", type_name::<T>(), type_name::<T::Input>(), type_name::<T::Output>())
    }

    fn run_local(&self, ctx: &mut WorkerContext, inputs: &mut (dyn Any + Send)) -> Result<Value, Failure> {
        let input = inputs
            .downcast_mut::<std::vec::IntoIter<T::Input>>()
            .and_then(Iterator::next)
            .ok_or_else(|| Failure::Serialization(format!("internal: no input of task {} was queued", T::NAME)))?;
        self.call(ctx, input).map(|out| Box::new(out) as Value)
    }

    fn take_one(&self, inputs: &mut (dyn Any + Send)) -> Option<Box<dyn Any + Send>> {
        let next = inputs.downcast_mut::<std::vec::IntoIter<T::Input>>()?.next()?;
        Some(Box::new(vec![next].into_iter()))
    }

    fn encode_one(&self, one: &(dyn Any + Send)) -> Option<Vec<u8>> {
        let input = one.downcast_ref::<std::vec::IntoIter<T::Input>>()?.as_slice().first()?;
        postcard::to_allocvec(input).ok()
    }

    fn decode_one(&self, bytes: &[u8]) -> Option<Box<dyn Any + Send>> {
        let input: T::Input = postcard::from_bytes(bytes).ok()?;
        Some(Box::new(vec![input].into_iter()))
    }

    fn run_encoded(
        &self,
        ctx: &mut WorkerContext,
        input: &[u8],
        out: &mut Vec<u8>,
        spill_over: usize,
    ) -> Result<u8, Failure> {
        let _ = crate::shared::take_decode_error();
        let input: T::Input = postcard::from_bytes(input).map_err(|e| {
            let shared = crate::shared::take_decode_error().map(|m| format!(": {m}")).unwrap_or_default();
            Failure::Serialization(format!("decoding the input: {e}{shared}"))
        })?;
        let output = self.call(ctx, input)?;
        // A large output is handed over: the parent removes its segment after reading it.
        super::wire::encode_item(&output, out, spill_over, true)
            .map(|(tag, _handed_over)| tag)
            .map_err(|e| Failure::Serialization(format!("encoding the output: {e}")))
    }

    fn decode_output(&self, bytes: &[u8]) -> Result<Value, String> {
        postcard::from_bytes::<T::Output>(bytes)
            .map(|v| Box::new(v) as Value)
            .map_err(|e| format!("decoding the output: {e}"))
    }

    fn encode_output(&self, value: &(dyn Any + Send)) -> Option<Vec<u8>> {
        postcard::to_allocvec(value.downcast_ref::<T::Output>()?).ok()
    }
}

/// Appends the postcard encoding of `value` to `out`. On error, `out` keeps what it held
/// (plus, possibly, part of the failed encoding: callers truncate).
pub(crate) fn encode_into<V: Serialize + ?Sized>(value: &V, out: &mut Vec<u8>) -> Result<(), postcard::Error> {
    postcard::serialize_with_flavor(value, AppendTo(out))
}

/// A postcard output that appends to a borrowed vector.
struct AppendTo<'a>(&'a mut Vec<u8>);

impl postcard::ser_flavors::Flavor for AppendTo<'_> {
    type Output = ();

    fn try_push(&mut self, byte: u8) -> postcard::Result<()> {
        self.0.push(byte);
        Ok(())
    }

    fn try_extend(&mut self, bytes: &[u8]) -> postcard::Result<()> {
        self.0.extend_from_slice(bytes);
        Ok(())
    }

    fn finalize(self) -> postcard::Result<()> {
        Ok(())
    }
}

/// An error and its sources, joined by ": " (sources already quoted by the error are skipped).
fn chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut msg = e.to_string();
    let mut cur = e.source();
    while let Some(s) = cur {
        let text = s.to_string();
        if !msg.contains(&text) {
            msg.push_str(": ");
            msg.push_str(&text);
        }
        cur = s.source();
    }
    msg
}

/// The failure a task's error `e` stands for (`prefix` before its message).
fn failure_of(e: &(dyn std::error::Error + 'static), prefix: &str) -> Failure {
    let message = format!("{prefix}{}", chain(e));
    match refused_by(e) {
        Some(device) => Failure::Unsupported { message, device },
        None => Failure::Failed { message, sticky: is_sticky(e) },
    }
}

/// The device that refused the task: `e` or one of its sources is `Error::Unsupported`
/// naming a device (one naming none is unsupported everywhere: no other device helps).
fn refused_by(e: &(dyn std::error::Error + 'static)) -> Option<polycompute_core::DeviceId> {
    let mut cur = Some(e);
    while let Some(c) = cur {
        if let Some(polycompute_core::Error::Unsupported { device: Some(d), .. }) =
            c.downcast_ref::<polycompute_core::Error>()
        {
            return Some(*d);
        }
        cur = c.source();
    }
    None
}

/// Whether `e` or one of its sources is a sticky device fault (a poisoned context).
fn is_sticky(e: &(dyn std::error::Error + 'static)) -> bool {
    let mut cur = Some(e);
    while let Some(c) = cur {
        if let Some(polycompute_core::Error::DeviceFault { sticky: true, .. }) =
            c.downcast_ref::<polycompute_core::Error>()
        {
            return true;
        }
        cur = c.source();
    }
    false
}

/// The message of a panic payload.
pub(crate) fn panic_message(p: &(dyn Any + Send)) -> String {
    if let Some(s) = p.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = p.downcast_ref::<String>() {
        s.clone()
    } else {
        "a panic with a non-string payload".to_string()
    }
}

/// The tasks a program offers. Build it once, in a function both `main` (for
/// [`crate::worker_main`]) and the pool builder call, so parent and workers agree.
#[derive(Clone, Default)]
pub struct Tasks {
    by_name: HashMap<&'static str, Arc<dyn ErasedTask>>,
    order: Vec<&'static str>,
    duplicates: Vec<&'static str>,
}

impl Tasks {
    /// No tasks.
    pub fn new() -> Tasks {
        Tasks::default()
    }

    /// Adds a task. Two tasks of one name are reported when a pool is built.
    #[must_use]
    #[allow(clippy::should_implement_trait)] // a builder step, not arithmetic
    pub fn add<T: Task>(mut self, task: T) -> Tasks {
        if self.by_name.insert(T::NAME, Arc::new(Typed(task))).is_some() {
            self.duplicates.push(T::NAME);
        } else {
            self.order.push(T::NAME);
        }
        self
    }

    /// The names of the tasks, in the order they were added.
    pub fn names(&self) -> Vec<&'static str> {
        self.order.clone()
    }

    /// Whether a task of this name is registered.
    pub fn contains(&self, name: &str) -> bool {
        self.by_name.contains_key(name)
    }

    pub(crate) fn get(&self, name: &str) -> Option<&Arc<dyn ErasedTask>> {
        self.by_name.get(name)
    }

    /// Every task's name and signature.
    pub(crate) fn signatures(&self) -> Vec<(String, String)> {
        self.order.iter().filter_map(|n| self.by_name.get(n).map(|t| (n.to_string(), t.signature()))).collect()
    }

    /// Where these tasks and the parent's (`parent`: names and signatures) disagree.
    pub(crate) fn mismatches(&self, parent: &[(String, String)]) -> Vec<String> {
        parent
            .iter()
            .filter_map(|(name, theirs)| {
                let ours = self.by_name.get(name.as_str())?.signature();
                (ours != *theirs).then(|| format!("{name} is {theirs} in the pool but {ours} in the worker"))
            })
            .collect()
    }

    pub(crate) fn known(&self) -> Vec<String> {
        self.order.iter().map(|s| s.to_string()).collect()
    }

    /// An error message when the registry is not usable (duplicate names).
    pub(crate) fn check(&self) -> Result<(), String> {
        if self.duplicates.is_empty() {
            Ok(())
        } else {
            Err(format!(
                "task name(s) registered twice: {}; every Task::NAME must be unique",
                self.duplicates.join(", ")
            ))
        }
    }
}

impl std::fmt::Debug for Tasks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tasks").field("names", &self.order).finish()
    }
}
