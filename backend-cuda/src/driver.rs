//! The few driver entry points this crate calls directly (allocation, copies, launches),
//! declared with a plain `i32` result so that any code a newer driver returns is a number we
//! can report, never an invalid enum value; and the load-time probe that tells whether a real
//! driver is present before cust is asked to initialise it.

use std::ffi::{c_char, c_int, c_uint, c_void, CStr};
use std::sync::OnceLock;

use crate::errors::code::{NO_DEVICE, STUB_LIBRARY, SUCCESS};

/// A device pointer.
pub(crate) type DevPtr = u64;
/// An opaque driver handle (stream, function, pool).
pub(crate) type Handle = *mut c_void;

/// `CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED`.
pub(crate) const ATTR_MEMORY_POOLS_SUPPORTED: c_int = 115;
/// `CU_MEMPOOL_ATTR_RELEASE_THRESHOLD`.
pub(crate) const MEMPOOL_ATTR_RELEASE_THRESHOLD: c_int = 4;

// Resolved against libcuda, which cust's build script links (-lcuda).
extern "C" {
    pub(crate) fn cuGetErrorName(error: i32, name: *mut *const c_char) -> i32;
    pub(crate) fn cuDeviceGetAttribute(value: *mut c_int, attribute: c_int, device: c_int) -> i32;
    pub(crate) fn cuDeviceGetDefaultMemPool(pool: *mut Handle, device: c_int) -> i32;
    pub(crate) fn cuMemPoolSetAttribute(pool: Handle, attribute: c_int, value: *mut c_void) -> i32;
    pub(crate) fn cuMemAlloc_v2(ptr: *mut DevPtr, bytes: usize) -> i32;
    pub(crate) fn cuMemFree_v2(ptr: DevPtr) -> i32;
    pub(crate) fn cuMemAllocAsync(ptr: *mut DevPtr, bytes: usize, stream: Handle) -> i32;
    pub(crate) fn cuMemFreeAsync(ptr: DevPtr, stream: Handle) -> i32;
    pub(crate) fn cuMemcpyHtoDAsync_v2(dst: DevPtr, src: *const c_void, bytes: usize, stream: Handle) -> i32;
    pub(crate) fn cuMemcpyDtoHAsync_v2(dst: *mut c_void, src: DevPtr, bytes: usize, stream: Handle) -> i32;
    pub(crate) fn cuMemcpyDtoDAsync_v2(dst: DevPtr, src: DevPtr, bytes: usize, stream: Handle) -> i32;
    pub(crate) fn cuStreamSynchronize(stream: Handle) -> i32;
    pub(crate) fn cuCtxSynchronize() -> i32;
    pub(crate) fn cuDevicePrimaryCtxReset_v2(device: c_int) -> i32;
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn cuLaunchKernel(
        function: Handle,
        grid_x: c_uint,
        grid_y: c_uint,
        grid_z: c_uint,
        block_x: c_uint,
        block_y: c_uint,
        block_z: c_uint,
        shared_bytes: c_uint,
        stream: Handle,
        params: *mut *mut c_void,
        extra: *mut *mut c_void,
    ) -> i32;
}

/// The driver's name for an error code (`CUDA_ERROR_ILLEGAL_ADDRESS`), or the number.
pub(crate) fn error_name(code: i32) -> String {
    let mut name: *const c_char = std::ptr::null();
    // SAFETY: cuGetErrorName only writes a pointer to a static string (or leaves it null for
    // an unknown code); it needs no context and no prior cuInit.
    let rc = unsafe { cuGetErrorName(code, &mut name) };
    if rc != SUCCESS || name.is_null() {
        return format!("CUDA error {code}");
    }
    // SAFETY: the driver returned a NUL-terminated static string.
    unsafe { CStr::from_ptr(name) }.to_string_lossy().into_owned()
}

/// The driver library's file name on this OS.
fn driver_library() -> Option<&'static str> {
    if cfg!(windows) {
        Some("nvcuda.dll")
    } else if cfg!(target_os = "macos") {
        None
    } else {
        Some("libcuda.so.1")
    }
}

/// What the load-time probe found: the driver version, or why CUDA cannot be used.
pub(crate) fn driver_status() -> Result<i32, String> {
    static STATUS: OnceLock<Result<i32, String>> = OnceLock::new();
    STATUS.get_or_init(probe_driver).clone()
}

/// Loads the driver library by name from the system (never from this repository's stub
/// folder unless the caller put it on the library path) and runs `cuInit` through it, so a
/// missing or stub driver becomes a reason instead of a crash.
fn probe_driver() -> Result<i32, String> {
    let Some(name) = driver_library() else {
        return Err("CUDA is not available on macOS".into());
    };
    // SAFETY: loading the NVIDIA driver runs its initialisers, which is what any CUDA program
    // does at start-up; we keep it loaded for the life of the process (leaked below).
    let lib = unsafe { libloading::Library::new(name) }.map_err(|e| format!("{name} not found ({e})"))?;
    let lib: &'static libloading::Library = Box::leak(Box::new(lib));
    type InitFn = unsafe extern "C" fn(c_uint) -> i32;
    type VersionFn = unsafe extern "C" fn(*mut c_int) -> i32;
    // SAFETY: cuInit and cuDriverGetVersion have these C signatures in every driver version.
    let (init, version) = unsafe {
        let init = lib.get::<InitFn>(b"cuInit\0").map_err(|e| format!("{name} has no cuInit ({e})"))?;
        let version = lib
            .get::<VersionFn>(b"cuDriverGetVersion\0")
            .map_err(|e| format!("{name} has no cuDriverGetVersion ({e})"))?;
        (*init, *version)
    };
    // SAFETY: cuInit(0) is the documented first call; it is safe to repeat.
    let rc = unsafe { init(0) };
    match rc {
        SUCCESS => {}
        STUB_LIBRARY => {
            return Err(format!(
                "{name} is a stub library (CUDA_ERROR_STUB_LIBRARY): no NVIDIA driver is installed; \
                 the stub only serves linking, keep it off the library path where a driver exists"
            ))
        }
        NO_DEVICE => return Err("no CUDA device (CUDA_ERROR_NO_DEVICE)".into()),
        code => return Err(format!("cuInit failed: {} ({code})", error_name(code))),
    }
    let mut v: c_int = 0;
    // SAFETY: writes one int.
    let rc = unsafe { version(&mut v) };
    if rc != SUCCESS {
        return Err(format!("cuDriverGetVersion failed: {} ({rc})", error_name(rc)));
    }
    Ok(v)
}
