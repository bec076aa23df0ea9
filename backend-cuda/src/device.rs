//! One open CUDA device: opening it (its primary context, made current on whichever thread
//! calls, and its stream), buffers, launches of generated kernels, and core's typed
//! `BackendDevice` entry points (upload, download, execute, synchronize). Core's blanket
//! `DeviceBackend` implementation checks every buffer's owner, dtype and length and the op
//! before any of them runs.

use std::ffi::c_void;
use std::mem::ManuallyDrop;
use std::sync::{Arc, Mutex};

use cust::context::{Context, CurrentContext};
use cust::stream::{Stream, StreamFlags};
use polycompute_core::{
    BackendDevice, DType, DeviceId, DeviceInfo, DeviceToken, Error, HostSlice, HostVec, Op, Result,
};

use crate::buffer::CudaBuffer;
use crate::codegen::Kernel;
use crate::context::Ctx;
use crate::cublas::CublasHandle;
use crate::driver::{self, DevPtr, Handle};
use crate::errors::code::SUCCESS;
use crate::errors::{check, from_cust, is_sticky};
use crate::launch::{self, LaunchConfig, Limits};
use crate::module_cache::ModuleCache;

/// Kernel parameters, each stored in its own 8-byte-aligned slot that lives until the launch.
#[derive(Default)]
pub(crate) struct Params {
    slots: Vec<Vec<u64>>,
    /// The first size given to [`Params::len`] that a u32 cannot hold: the launch refuses it.
    too_large: Option<usize>,
}

impl Params {
    /// Appends raw bytes (a scalar, a pointer or a by-value struct).
    pub(crate) fn bytes(&mut self, bytes: &[u8]) -> &mut Self {
        let mut slot = vec![0u64; bytes.len().div_ceil(8).max(1)];
        for (i, b) in bytes.iter().enumerate() {
            slot[i / 8] |= (*b as u64) << (8 * (i % 8));
        }
        self.slots.push(slot);
        self
    }
    /// Appends a device pointer.
    pub(crate) fn ptr(&mut self, p: DevPtr) -> &mut Self {
        self.bytes(&p.to_le_bytes())
    }
    /// Appends a `u32`.
    pub(crate) fn u32(&mut self, v: u32) -> &mut Self {
        self.bytes(&v.to_le_bytes())
    }
    /// Appends a size (an element count or index bound) as the kernels' `u32`; one beyond
    /// `u32::MAX` makes the launch fail with `TooLarge` instead of truncating it.
    pub(crate) fn len(&mut self, v: usize) -> &mut Self {
        if u32::try_from(v).is_err() {
            self.too_large.get_or_insert(v);
        }
        self.u32(v as u32)
    }
    /// Appends a `u32` array (a by-value struct of u32 fields).
    pub(crate) fn u32s(&mut self, v: &[u32]) -> &mut Self {
        let bytes: Vec<u8> = v.iter().flat_map(|x| x.to_le_bytes()).collect();
        self.bytes(&bytes)
    }
}

/// An open CUDA device.
pub struct CudaDevice {
    info: DeviceInfo,
    /// This instance's identity, carried by every buffer it makes.
    token: DeviceToken,
    pub(crate) ctx: Arc<Ctx>,
    /// `sm_XX` as a number (90 for compute capability 9.0).
    pub(crate) arch: u32,
    /// Multiprocessors, for sizing grids.
    pub(crate) sms: u32,
    /// Launch limits, from the device's attributes.
    pub(crate) limits: Limits,
    modules: ManuallyDrop<ModuleCache>,
    pub(crate) cublas: Mutex<Option<CublasHandle>>,
}

impl CudaDevice {
    /// Opens device `ordinal` (the driver is initialised): retains its primary context, makes
    /// it current on this thread and creates the device's stream.
    pub(crate) fn open(ordinal: usize, info: DeviceInfo, arch: u32, sms: u32) -> Result<CudaDevice> {
        let id = info.id();
        let dev =
            cust::device::Device::get_device(ordinal as u32).map_err(|e| from_cust(e, id, "getting the device"))?;
        let mut context = Context::new(dev).map_err(|e| from_cust(e, id, "retaining the primary context"))?;
        CurrentContext::set_current(&context).map_err(|e| from_cust(e, id, "making the context current"))?;
        // The primary context is shared by the process: after a sticky fault it stays poisoned
        // while any old handle (a buffer, say) retains it. Reset it, so that reopening the
        // device after a fault (what the pool does) gives a working device.
        // SAFETY: no arguments; the context was just made current.
        let rc = unsafe { driver::cuCtxSynchronize() };
        if is_sticky(rc) {
            tracing::warn!(device = %id, code = rc, "resetting the primary context poisoned by an earlier fault");
            drop(context);
            // SAFETY: resets the device's primary context; the poisoned state's allocations are
            // unusable anyway, and every new handle is made after the reset.
            check(unsafe { driver::cuDevicePrimaryCtxReset_v2(dev.as_raw()) }, id, "resetting the primary context")?;
            context = Context::new(dev).map_err(|e| from_cust(e, id, "retaining the primary context"))?;
            CurrentContext::set_current(&context).map_err(|e| from_cust(e, id, "making the context current"))?;
        }
        let stream =
            Stream::new(StreamFlags::NON_BLOCKING, None).map_err(|e| from_cust(e, id, "creating the stream"))?;
        let raw = dev.as_raw();
        let mut pools = 0;
        // SAFETY: writes one int for a valid device.
        let rc = unsafe { driver::cuDeviceGetAttribute(&mut pools, driver::ATTR_MEMORY_POOLS_SUPPORTED, raw) };
        let async_alloc = rc == SUCCESS && pools != 0;
        if async_alloc {
            // Keep freed memory in the pool instead of returning it to the OS at each sync:
            // repeated ops of the same size then allocate in O(1).
            let mut pool: Handle = std::ptr::null_mut();
            let mut threshold = u64::MAX;
            // SAFETY: the default pool of a valid device; the attribute takes a u64.
            unsafe {
                if driver::cuDeviceGetDefaultMemPool(&mut pool, raw) == SUCCESS {
                    driver::cuMemPoolSetAttribute(
                        pool,
                        driver::MEMPOOL_ATTR_RELEASE_THRESHOLD,
                        (&mut threshold as *mut u64).cast(),
                    );
                }
            }
        }
        let limits = Limits::from_attributes(|attr| {
            let mut v = 0;
            // SAFETY: writes one int for a valid device.
            (unsafe { driver::cuDeviceGetAttribute(&mut v, attr, raw) } == SUCCESS).then_some(v)
        });
        let ctx = Arc::new(Ctx::new(id, context, stream, async_alloc));
        Ok(CudaDevice {
            info,
            token: DeviceToken::fresh(),
            ctx,
            arch,
            sms,
            limits,
            modules: ManuallyDrop::new(ModuleCache::default()),
            cublas: Mutex::new(None),
        })
    }

    /// The device id (`cuda:N`).
    pub(crate) fn id(&self) -> DeviceId {
        self.ctx.id
    }

    /// A new uninitialised buffer. The context must be current. The allocation is rounded up
    /// to whole 32-bit words, so a kernel may read-modify-write the word that holds a 16-bit
    /// element (scatter_add's compare-and-swap on halves) without leaving the allocation.
    pub(crate) fn new_buffer(&self, dtype: DType, len: usize) -> Result<CudaBuffer> {
        let ptr = self.ctx.alloc((len * dtype.size_bytes()).next_multiple_of(4))?;
        Ok(CudaBuffer { ptr, dtype, len, ctx: self.ctx.clone(), owner: self.token })
    }

    /// Launches `kernel` on the device's stream with `config` (from [`crate::launch`], which
    /// checked it against the device's limits), loading it the first time (the module cache
    /// keys on [`Kernel::key`]). A size parameter beyond u32 ([`Params::len`]) is `TooLarge`,
    /// and nothing is launched. The context must be current.
    pub(crate) fn launch(&self, kernel: &Kernel, config: &LaunchConfig, params: &mut Params) -> Result<()> {
        if let Some(v) = params.too_large {
            return Err(Error::TooLarge(format!(
                "{}: a size of {v} is beyond the CUDA kernels' 32-bit sizes (at most {}); split the array",
                kernel.entry,
                u32::MAX
            )));
        }
        let loaded = self.modules.get(kernel, self.arch, self.id())?;
        let mut ptrs: Vec<*mut c_void> = params.slots.iter_mut().map(|s| s.as_mut_ptr().cast()).collect();
        let ([gx, gy, gz], [bx, by, bz]) = (config.grid, config.block);
        // SAFETY: the function was loaded in this (current) context; `ptrs` holds one pointer
        // per kernel parameter, each to a slot at least as large as the parameter, alive for
        // the call (the driver copies the values before returning).
        let rc = unsafe {
            driver::cuLaunchKernel(
                loaded.function,
                gx,
                gy,
                gz,
                bx,
                by,
                bz,
                config.shared,
                self.ctx.stream(),
                ptrs.as_mut_ptr(),
                std::ptr::null_mut(),
            )
        };
        check(rc, self.id(), &format!("launching {}", kernel.entry))
    }

    /// The 1-D grid-stride launch of `op` over `n` items with `block`-thread blocks.
    pub(crate) fn strided(&self, op: &str, n: usize, block: u32) -> Result<LaunchConfig> {
        launch::strided_1d(op, n as u64, block, self.sms, &self.limits)
    }

    /// A device-to-device copy on the stream. The context must be current.
    pub(crate) fn copy(&self, dst: DevPtr, src: DevPtr, bytes: usize) -> Result<()> {
        if bytes == 0 {
            return Ok(());
        }
        // SAFETY: both ranges are live allocations of at least `bytes` bytes in this context.
        let rc = unsafe { driver::cuMemcpyDtoDAsync_v2(dst, src, bytes, self.ctx.stream()) };
        check(rc, self.id(), "copying on the device")
    }
}

impl Drop for CudaDevice {
    fn drop(&mut self) {
        let _ = self.ctx.make_current();
        if let Ok(mut c) = self.cublas.lock() {
            c.take();
        }
        // SAFETY: dropped once, with the context current, before the context can go.
        unsafe { ManuallyDrop::drop(&mut self.modules) };
    }
}

/// The dtypes (issue 29's) this backend has no kernels for yet: every op that touches one
/// answers `Unsupported` naming the op and the dtype (`ops::execute`, `upload`), so no
/// buffer of them exists here and the codegen's arms for them are never reached.
pub(crate) fn not_yet(dtype: DType) -> bool {
    matches!(dtype, DType::I64 | DType::U8 | DType::Bool)
}

impl BackendDevice for CudaDevice {
    type Buffer = CudaBuffer;

    fn info(&self) -> &DeviceInfo {
        &self.info
    }

    fn token(&self) -> DeviceToken {
        self.token
    }

    fn upload(&self, data: HostSlice<'_>) -> Result<CudaBuffer> {
        if not_yet(data.dtype()) {
            return Err(Error::Unsupported {
                op: "upload (CUDA has no kernels for this dtype yet)".into(),
                dtype: data.dtype(),
                device: Some(self.id()),
            });
        }
        self.ctx.make_current()?;
        let buf = self.new_buffer(data.dtype(), data.len())?;
        let src: *const c_void = match data {
            HostSlice::F32(s) => s.as_ptr().cast(),
            HostSlice::F64(s) => s.as_ptr().cast(),
            HostSlice::I32(s) => s.as_ptr().cast(),
            HostSlice::U32(s) => s.as_ptr().cast(),
            HostSlice::F16(s) => s.as_ptr().cast(),
            HostSlice::BF16(s) => s.as_ptr().cast(),
            HostSlice::I64(s) => s.as_ptr().cast(),
            HostSlice::U8(s) => s.as_ptr().cast(),
            HostSlice::Bool(s) => s.as_ptr().cast(),
        };
        if buf.bytes() > 0 {
            // SAFETY: `src` points to `bytes` readable bytes; from pageable memory the driver
            // stages the data before returning, so the borrow may end afterwards.
            let rc = unsafe { driver::cuMemcpyHtoDAsync_v2(buf.ptr, src, buf.bytes(), self.ctx.stream()) };
            check(rc, self.id(), "uploading")?;
        }
        Ok(buf)
    }

    fn download(&self, buf: &CudaBuffer) -> Result<HostVec> {
        self.ctx.make_current()?;
        let n = buf.len;
        let mut host = match buf.dtype {
            DType::F32 => HostVec::F32(vec![0.0; n]),
            DType::F64 => HostVec::F64(vec![0.0; n]),
            DType::I32 => HostVec::I32(vec![0; n]),
            DType::U32 => HostVec::U32(vec![0; n]),
            DType::F16 => HostVec::F16(vec![polycompute_core::f16::ZERO; n]),
            DType::BF16 => HostVec::BF16(vec![polycompute_core::bf16::ZERO; n]),
            DType::I64 => HostVec::I64(vec![0; n]),
            DType::U8 => HostVec::U8(vec![0; n]),
            // Never reached: no bool buffer exists on this backend (`not_yet`); a device's
            // bool bytes would need checking before they became `bool`s.
            DType::Bool => {
                return Err(Error::Unsupported { op: "download".into(), dtype: DType::Bool, device: Some(self.id()) })
            }
        };
        let dst: *mut c_void = match &mut host {
            HostVec::F32(v) => v.as_mut_ptr().cast(),
            HostVec::F64(v) => v.as_mut_ptr().cast(),
            HostVec::I32(v) => v.as_mut_ptr().cast(),
            HostVec::U32(v) => v.as_mut_ptr().cast(),
            HostVec::F16(v) => v.as_mut_ptr().cast(),
            HostVec::BF16(v) => v.as_mut_ptr().cast(),
            HostVec::I64(v) => v.as_mut_ptr().cast(),
            HostVec::U8(v) => v.as_mut_ptr().cast(),
            HostVec::Bool(_) => {
                return Err(Error::Unsupported { op: "download".into(), dtype: DType::Bool, device: Some(self.id()) })
            }
        };
        if buf.bytes() > 0 {
            // SAFETY: `dst` has room for exactly the buffer's bytes; the stream sync below
            // completes the copy before `host` is read or moved.
            let rc = unsafe { driver::cuMemcpyDtoHAsync_v2(dst, buf.ptr, buf.bytes(), self.ctx.stream()) };
            check(rc, self.id(), "downloading")?;
        }
        self.ctx.sync()?;
        Ok(host)
    }

    fn execute(&self, op: &Op, inputs: &[&CudaBuffer]) -> Result<CudaBuffer> {
        self.ctx.make_current()?;
        crate::ops::execute(self, op, inputs)
    }

    fn synchronize(&self) -> Result<()> {
        self.ctx.make_current()?;
        self.ctx.sync()
    }
}
