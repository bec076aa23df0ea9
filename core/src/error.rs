//! The one error type of polycompute.

use crate::backend::BackendKind;
use crate::device_id::DeviceId;
use crate::dtype::DType;
use std::path::PathBuf;

/// Every failure polycompute reports. Library code never panics on user input: each
/// mistake a caller can make is one of these variants, with a message that says what to do.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Two shapes that numpy's broadcasting rules cannot combine.
    #[error(
        "{op}: shapes {lhs:?} and {rhs:?} do not broadcast (numpy rules: aligned from the \
         right, each pair of dimensions must be equal or one of them 1); reshape or slice an input"
    )]
    ShapeMismatch {
        /// The operation that combined the shapes.
        op: &'static str,
        /// The left shape.
        lhs: Vec<usize>,
        /// The right shape.
        rhs: Vec<usize>,
    },
    /// `matmul` operands whose inner dimensions differ, or whose ranks are not 2 or 3.
    #[error("matmul: {lhs:?} @ {rhs:?} is not defined: {why}")]
    MatmulShape {
        /// Shape of the left operand.
        lhs: Vec<usize>,
        /// Shape of the right operand.
        rhs: Vec<usize>,
        /// What is wrong with them.
        why: String,
    },
    /// An axis the array does not have: outside `-ndim..ndim` (negative axes count from
    /// the end; for an inserted axis, as stack's, `ndim` is the result's rank).
    #[error(
        "{op}: axis {axis} is out of range for an array of {ndim} dimension(s); valid axes are \
         -{ndim}..{ndim} (negative ones count from the end)"
    )]
    AxisOutOfRange {
        /// The operation.
        op: &'static str,
        /// The axis asked for, as given (negative counts from the end).
        axis: isize,
        /// The array's number of dimensions.
        ndim: usize,
    },
    /// An axis named twice in a reduction's axes (numpy: "duplicate value in 'axis'"), after
    /// negative axes are resolved (`[1, -2]` of a 3-D array names axis 1 twice).
    #[error("{op}: duplicate value in 'axis': axis {axis} names an axis already given (array of {ndim} dimension(s))")]
    DuplicateAxis {
        /// The operation.
        op: &'static str,
        /// The second mention of the axis, as given.
        axis: isize,
        /// The array's number of dimensions.
        ndim: usize,
    },
    /// min, max, argmin or argmax of an empty array (or along an empty axis).
    #[error(
        "{op} of an empty array (or along an empty axis) has no value; check the length first \
         (sum and prod of an empty array are 0 and 1)"
    )]
    EmptyReduction {
        /// The reduction.
        op: &'static str,
    },
    /// Operands, or an array and its declared element type, of different dtypes.
    #[error("dtype mismatch in {context}: expected {expected}, found {found}; insert an explicit cast")]
    DTypeMismatch {
        /// Where the mismatch was found.
        context: String,
        /// The dtype that was needed.
        expected: DType,
        /// The dtype that was given.
        found: DType,
    },
    /// An `Expr` that uses an argument the call did not provide.
    #[error("expression uses argument {index} but the call provides only {available} input(s)")]
    MissingArgument {
        /// The argument index used by the expression.
        index: usize,
        /// How many inputs were given.
        available: usize,
    },
    /// An `Expr` that cannot be evaluated for its inputs' dtypes.
    #[error("invalid expression: {0}")]
    InvalidExpr(String),
    /// Host data whose length disagrees with the shape it is uploaded as.
    #[error("data has {len} element(s) but shape {shape:?} needs {expected}")]
    LengthMismatch {
        /// Elements given.
        len: usize,
        /// Shape asked for.
        shape: Vec<usize>,
        /// Elements the shape holds.
        expected: usize,
    },
    /// A shape that cannot be used (overflowing element count, bad permutation, ...).
    #[error("invalid shape: {0}")]
    InvalidShape(String),
    /// An array too large for the device or for 32-bit indexing.
    #[error("array too large: {0}")]
    TooLarge(String),
    /// An op/dtype pair a device cannot run. Never replaced by a silent fallback.
    #[error("{op} is not supported for {dtype} on {}", device.map_or_else(|| "any device".to_string(), |d| d.to_string()))]
    Unsupported {
        /// The operation.
        op: String,
        /// The dtype.
        dtype: DType,
        /// The device, e.g. `wgpu:0`; `None` when no device supports it (the op itself is
        /// not defined for the dtype).
        device: Option<DeviceId>,
    },
    /// A backend whose cargo feature was not enabled.
    #[error("backend {kind} is not compiled in; rebuild polycompute with `--features {kind}`")]
    BackendNotCompiled {
        /// The backend.
        kind: BackendKind,
    },
    /// A backend that is compiled in but cannot run here.
    #[error("backend {kind} is unavailable: {reason}")]
    BackendUnavailable {
        /// The backend.
        kind: BackendKind,
        /// Why, e.g. "libcuda.so.1 not found" or "no adapter".
        reason: String,
    },
    /// `POLYCOMPUTE_BACKEND` (or a device id) that names no backend.
    #[error("unknown device {0:?}: use cpu, wgpu or cuda, optionally followed by :ordinal (e.g. cuda:1)")]
    UnknownDevice(String),
    /// A device ordinal past the last device of its backend.
    #[error("device {kind}:{ordinal} does not exist: backend {kind} has {count} device(s)")]
    NoSuchDevice {
        /// The backend.
        kind: BackendKind,
        /// The ordinal asked for.
        ordinal: usize,
        /// How many devices the backend has.
        count: usize,
    },
    /// Arrays on two devices used in one operation.
    #[error("arrays live on different devices ({lhs} and {rhs}); move one with to_device()")]
    DeviceMismatch {
        /// One device id.
        lhs: DeviceId,
        /// The other device id.
        rhs: DeviceId,
    },
    /// A buffer handed to a device that did not make it: another device's, or another open
    /// instance's of the same device (reachable through `Device::backend()`).
    #[error(
        "{device} was given a buffer made by another device (or another open instance of it); \
         move the array to this device with to_device() first"
    )]
    ForeignBuffer {
        /// The device id of the device that refused the buffer.
        device: DeviceId,
    },
    /// A device allocation that did not fit.
    #[error("{device} is out of memory allocating {bytes} bytes; free arrays or split the work")]
    OutOfMemory {
        /// The device id.
        device: DeviceId,
        /// The size of the failed allocation.
        bytes: u64,
    },
    /// A generated kernel that did not compile; carries the source and the compiler's log.
    #[error("kernel compile failed on {device}:\n{log}\n--- generated source ---\n{code}")]
    KernelCompile {
        /// The device id.
        device: DeviceId,
        /// The generated source.
        code: String,
        /// The compiler's log.
        log: String,
    },
    /// A fault reported by the device. `sticky` faults poison the context: the device must
    /// be opened again (the pool replaces the worker).
    #[error("device fault on {device} (code {code}): {message}{}", if *sticky { "; the context is poisoned, open the device again" } else { "" })]
    DeviceFault {
        /// The device id.
        device: DeviceId,
        /// The driver's error code.
        code: i64,
        /// The driver's message.
        message: String,
        /// Whether the context is unusable from now on.
        sticky: bool,
    },
    /// A shared array's segment that cannot be created, found or trusted: a missing file (its
    /// creator dropped it or died), a handle of another process, a size or dtype that
    /// disagrees with the handle.
    #[error("shared array {segment}: {why}{}", os_reason(source))]
    SharedMemory {
        /// The segment's name.
        segment: String,
        /// What is wrong.
        why: String,
        /// The operating system's error, when a system call failed (also in the message).
        #[source]
        source: Option<std::io::Error>,
    },
    /// A system call that failed outside shared memory (starting a thread, say).
    #[error("{context}: {source}")]
    Io {
        /// What polycompute was doing.
        context: String,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
    /// A range past the end of an array (or with its start after its end).
    #[error("{op}: range {start}..{end} is out of bounds for length {len}")]
    OutOfRange {
        /// The operation.
        op: &'static str,
        /// The range's start.
        start: usize,
        /// The range's end.
        end: usize,
        /// The length of the indexed axis.
        len: usize,
    },
    /// An index (of `take`, `take_along_axis`, `scatter_add`, or an integer slice index)
    /// outside `-len..len` (negative indices count from the end) on the indexed axis.
    #[error("{op}: {argument} holds index {index}, out of range for an axis of length {len}; valid indices are -{len}..{len}")]
    IndexOutOfRange {
        /// The operation.
        op: &'static str,
        /// The argument that holds the index (`indices`, `slice`).
        argument: &'static str,
        /// The offending index (the smallest or largest one found).
        index: i64,
        /// The length of the indexed axis.
        len: usize,
    },
    /// An argument whose value the operation cannot accept (a zero slice step, `k` larger
    /// than the axis, concat of arrays whose other axes differ, ...).
    #[error("{op}: invalid {argument}: {why}")]
    InvalidArgument {
        /// The operation.
        op: &'static str,
        /// The argument's name.
        argument: &'static str,
        /// What is wrong and what to do.
        why: String,
    },
    /// A worker pool that cannot be built or started (what to change is in the message).
    #[error("worker pool: {0}")]
    Pool(String),
    /// A pool's result journal cannot be used: it belongs to another job, is not a
    /// journal, or cannot be read or written (`PoolBuilder::journal`).
    #[error("worker pool: {0}")]
    Journal(#[from] JournalError),
    /// Any other failure inside a backend, with the backend's own words.
    #[error("{device}: {message}")]
    Backend {
        /// The device id.
        device: DeviceId,
        /// What went wrong.
        message: String,
    },
}

impl Error {
    /// [`Error::Unsupported`] for an op a device cannot run because it lacks `capability` (an
    /// adapter feature such as `SHADER_F16`, or kernels a backend does not have for the dtype).
    /// The capability is named in the message, between the op and what to do instead; it is
    /// the one `Unsupported` variant, so code that reroutes on `Unsupported` (the pool) sees
    /// no difference.
    ///
    /// ```
    /// use polycompute_core::{DType, Error};
    /// let e = Error::missing_capability("matmul", DType::F16, None, "SHADER_F16");
    /// assert!(matches!(&e, Error::Unsupported { op, dtype: DType::F16, .. } if op.contains("SHADER_F16")));
    /// assert!(e.to_string().starts_with("matmul (missing capability: SHADER_F16"));
    /// ```
    pub fn missing_capability(op: &str, dtype: DType, device: Option<DeviceId>, capability: &str) -> Error {
        Error::Unsupported {
            op: format!("{op} (missing capability: {capability}; cast to f32 or run on cpu)"),
            dtype,
            device,
        }
    }
}

/// `": {error}"` for the OS error of a message that ends with one, else nothing.
fn os_reason(source: &Option<std::io::Error>) -> String {
    source.as_ref().map(|e| format!(": {e}")).unwrap_or_default()
}

/// `Result` with polycompute's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Why a pool's result journal cannot be used (the worker pool's `PoolBuilder::journal`;
/// defined here so that one [`Error`] covers it).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum JournalError {
    /// The journal was written by another job: another program, other tasks or another
    /// seed. Its results would be wrong for this one.
    #[error(
        "the journal {path} belongs to another job ({found}), not this one ({expected}); \
         give this job a journal of its own, or delete that file to start afresh"
    )]
    OtherJob {
        /// The journal's file.
        path: PathBuf,
        /// The job the journal names.
        found: String,
        /// This job.
        expected: String,
    },
    /// The file is not a polycompute journal.
    #[error("{path} is not a polycompute journal ({why}); name a new file, or delete that one")]
    NotAJournal {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        why: String,
    },
    /// The file cannot be created, read or written.
    #[error("journal {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The OS's error.
        source: std::io::Error,
    },
}
