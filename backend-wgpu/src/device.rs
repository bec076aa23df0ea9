//! One open wgpu device: allocation, upload, readback, kernel launches, and the
//! `BackendDevice` implementation that routes each op to its runner in `ops` (core's blanket
//! `DeviceBackend` implementation has checked the buffers and the op before).

use polycompute_core::DeviceId;
use std::sync::{mpsc, Arc};

use polycompute_core::{
    BackendDevice, DType, DeviceBuffer, DeviceInfo, DeviceToken, Error, HostSlice, HostVec, Op, Result,
};
use wgpu::util::DeviceExt;

use crate::adapter;
use crate::buffer::{BufferPool, MemLimits, WgpuBuffer};
use crate::codegen::{Binding, KernelSource};
use crate::errors::{ErrorSink, FaultCode, Scope};
use crate::pipeline_cache::{compile, Kernel, KernelKey, PipelineCache};

/// Loop iterations one invocation may run in one launch, over all of its loops.
///
/// Mesa's llvmpipe (under lavapipe's Vulkan and its GL driver alike) ends every loop of a
/// shader invocation, silently, once the invocation has run 65,535 iterations in all
/// (gallivm's `LP_MAX_TGSI_LOOP_ITERATIONS`, shared between every loop of the shader): a
/// matmul summed only the first 52,429 terms of K (6,553 slices of 8, each ten iterations
/// of its two loops) and a scatter-add applied only the first 65,535 indices. So a kernel
/// whose loop grows with the problem is launched over ranges of at most this many
/// iterations ([`loop_ranges`]), each launch continuing from what the previous one wrote;
/// half the driver's budget is left for the kernel's fixed loops. On every adapter, so the
/// path CI runs is the one users run; on a real GPU it only adds a launch per 32,768 steps.
pub(crate) const LOOP_BUDGET: usize = 32_768;

/// The ranges of `0..total` that successive launches cover, `step` elements per loop
/// iteration: at most [`LOOP_BUDGET`] iterations each, every range but the last a whole
/// number of steps (one empty range when `total` is 0).
pub(crate) fn loop_ranges(total: usize, step: usize) -> impl Iterator<Item = std::ops::Range<usize>> {
    let per = LOOP_BUDGET * step.max(1);
    let launches = total.div_ceil(per).max(1);
    (0..launches).map(move |i| i * per..((i + 1) * per).min(total))
}

/// The variable that, set to `0`, makes [`WgpuDevice::open`] leave subgroups off.
///
/// ```no_run
/// // As a test run would: `POLYCOMPUTE_WGPU_SUBGROUPS=0 cargo test ...`.
/// std::env::set_var(polycompute_wgpu::SUBGROUPS_ENV, "0");
/// assert!(!polycompute_wgpu::WgpuDevice::open(0)?.has_subgroups());
/// # Ok::<(), polycompute_core::Error>(())
/// ```
pub const SUBGROUPS_ENV: &str = "POLYCOMPUTE_WGPU_SUBGROUPS";

/// One kernel launch: a kernel, its storage buffers (bindings 1..), its uniform words
/// (binding 0) and how many workgroups to run (spread over a 2-D grid when needed).
pub(crate) struct Launch {
    pub kernel: Arc<Kernel>,
    pub buffers: Vec<wgpu::Buffer>,
    pub params: Vec<u32>,
    pub groups: u64,
}

/// An open wgpu device.
pub struct WgpuDevice {
    pub(crate) info: DeviceInfo,
    pub(crate) id: DeviceId,
    token: DeviceToken,
    pub(crate) device: wgpu::Device,
    pub(crate) queue: wgpu::Queue,
    pub(crate) limits: wgpu::Limits,
    has_f64: bool,
    /// Workgroups per grid dimension: the adapter's limit, or less for tests.
    grid_max: u32,
    /// Subgroup operations (`Features::SUBGROUP`) requested, with the adapter's smallest size.
    subgroups: Option<u32>,
    pub(crate) pool: Arc<BufferPool>,
    cache: PipelineCache,
    sink: Arc<ErrorSink>,
}

impl std::fmt::Debug for WgpuDevice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "WgpuDevice({} {:?})", self.id, self.info.name)
    }
}

impl WgpuDevice {
    /// Opens adapter `ordinal` with the adapter's own limits (so arrays may be as large as
    /// its bindings allow), and `SHADER_F64` and `SUBGROUP` when it has them; subgroups are
    /// left off when the environment sets `POLYCOMPUTE_WGPU_SUBGROUPS=0` (so any test suite
    /// can run the barrier fallback on an adapter that has them).
    ///
    /// ```no_run
    /// let dev = polycompute_wgpu::WgpuDevice::open(0)?;
    /// println!("f64: {}, subgroups: {}", dev.has_f64(), dev.has_subgroups());
    /// # Ok::<(), polycompute_core::Error>(())
    /// ```
    pub fn open(ordinal: usize) -> Result<WgpuDevice> {
        let off = std::env::var(SUBGROUPS_ENV).is_ok_and(|v| v.trim() == "0");
        WgpuDevice::open_with_subgroups(ordinal, !off)
    }

    /// Opens adapter `ordinal` as [`WgpuDevice::open`] does, but requests subgroup
    /// operations only when `subgroups` is true (and the adapter has them): with `false`
    /// every reduction takes its workgroup-barrier fallback, the path of adapters without
    /// subgroups (GL), so it can be tested on one that has them.
    ///
    /// ```no_run
    /// let dev = polycompute_wgpu::WgpuDevice::open_with_subgroups(0, false)?;
    /// assert!(!dev.has_subgroups());
    /// # Ok::<(), polycompute_core::Error>(())
    /// ```
    pub fn open_with_subgroups(ordinal: usize, subgroups: bool) -> Result<WgpuDevice> {
        let instance = adapter::instance();
        let adapter = adapter::adapter(&instance, ordinal)?;
        let info = adapter::device_info(&adapter, ordinal);
        let id = info.id();
        let has_f64 = adapter.features().contains(wgpu::Features::SHADER_F64);
        let mut features = if has_f64 { wgpu::Features::SHADER_F64 } else { wgpu::Features::empty() };
        let subgroups = adapter::subgroup_min_size(&adapter).filter(|_| subgroups);
        if subgroups.is_some() {
            features |= wgpu::Features::SUBGROUP;
        }
        let desc = wgpu::DeviceDescriptor {
            label: Some("polycompute"),
            required_features: features,
            required_limits: adapter.limits(),
            experimental_features: wgpu::ExperimentalFeatures::disabled(),
            memory_hints: wgpu::MemoryHints::Performance,
            trace: wgpu::Trace::Off,
        };
        let (device, queue) = pollster::block_on(adapter.request_device(&desc))
            .map_err(|e| Error::Backend { device: id, message: format!("request_device failed: {e}") })?;
        let sink = ErrorSink::install(&device);
        let limits = device.limits();
        let grid_max = limits.max_compute_workgroups_per_dimension.max(1);
        if limits.max_compute_invocations_per_workgroup < 256 {
            return Err(Error::BackendUnavailable {
                kind: polycompute_core::BackendKind::Wgpu,
                reason: format!(
                    "{id} allows {} invocations per workgroup; polycompute's kernels need 256",
                    limits.max_compute_invocations_per_workgroup
                ),
            });
        }
        let mem = MemLimits { max_buffer: limits.max_buffer_size, max_binding: limits.max_storage_buffer_binding_size };
        let gl = adapter.get_info().backend == wgpu::Backend::Gl;
        let pool = BufferPool::new(device.clone(), id, mem, gl);
        tracing::debug!("opened {id}: {} (f64: {has_f64}, subgroups: {subgroups:?})", info.name);
        Ok(WgpuDevice {
            info,
            id,
            token: DeviceToken::fresh(),
            device,
            queue,
            limits,
            has_f64,
            grid_max,
            subgroups,
            pool,
            cache: PipelineCache::default(),
            sink,
        })
    }

    /// Whether the device runs f64 kernels (the adapter has `SHADER_F64`).
    pub fn has_f64(&self) -> bool {
        self.has_f64
    }

    /// Whether the device was opened with subgroup operations (the adapter has
    /// `Features::SUBGROUP` and [`WgpuDevice::open_with_subgroups`] asked for them): its
    /// reductions then combine within a subgroup without workgroup barriers.
    pub fn has_subgroups(&self) -> bool {
        self.subgroups.is_some()
    }

    /// Spreads launches of more than `max` workgroups over a 2-D grid, as launches past the
    /// adapter's limit per dimension (65,535 on most) are: for tests, which then reach the
    /// 2-D grid of every kernel with small inputs. `max` is capped at the adapter's limit.
    ///
    /// ```no_run
    /// let mut dev = polycompute_wgpu::WgpuDevice::open(0)?;
    /// dev.limit_grid_for_tests(64);
    /// # Ok::<(), polycompute_core::Error>(())
    /// ```
    #[doc(hidden)]
    pub fn limit_grid_for_tests(&mut self, max: u32) {
        self.grid_max = max.clamp(1, self.limits.max_compute_workgroups_per_dimension.max(1));
    }

    /// The adapter's smallest subgroup size when subgroups are in use.
    pub(crate) fn subgroup_min_size(&self) -> Option<u32> {
        self.subgroups
    }

    /// The limits the device was opened with.
    pub fn limits(&self) -> &wgpu::Limits {
        &self.limits
    }

    /// The underlying wgpu device and queue, for interoperation (sharing buffers with other
    /// wgpu code). Errors that such code causes outside polycompute's error scopes reach
    /// this device's handler and come back from its next operation as typed errors.
    pub fn wgpu(&self) -> (&wgpu::Device, &wgpu::Queue) {
        (&self.device, &self.queue)
    }

    /// How many kernels this device has compiled; a cached kernel is not compiled again.
    pub fn compiled_kernels(&self) -> usize {
        self.cache.compiles()
    }

    /// How many freed buffers wait in the pool for reuse.
    pub fn pooled_buffers(&self) -> usize {
        self.pool.free_count()
    }

    /// Compiles a WGSL compute shader with entry point `main` and no bindings, without
    /// caching it: a diagnostic for drivers, and the way tests check that a shader the
    /// device rejects is an [`Error::KernelCompile`] carrying the source and the log.
    pub fn compile_wgsl(&self, wgsl: &str) -> Result<()> {
        let src = KernelSource { wgsl: wgsl.to_string(), bindings: Vec::new() };
        compile(&self.device, self.id, &src).map(|_| ())
    }

    /// A new buffer for `len` elements of `dtype` (contents undefined), from the pool.
    pub fn alloc(&self, dtype: DType, len: usize) -> Result<WgpuBuffer> {
        let bytes = (len as u64)
            .checked_mul(dtype.size_bytes() as u64)
            .ok_or_else(|| Error::TooLarge(format!("{len} elements of {dtype} overflow a 64-bit byte count")))?;
        let buf = self.pool.storage(bytes, &format!("an array of {len} {dtype}"))?;
        Ok(WgpuBuffer::new(buf, dtype, len, self.token, self.pool.clone()))
    }

    /// `Unsupported` for f64 on a device without `SHADER_F64`.
    pub(crate) fn require(&self, dtype: DType, op: &str) -> Result<()> {
        if dtype == DType::F64 && !self.has_f64 {
            return Err(Error::Unsupported {
                op: format!("{op} (the adapter lacks SHADER_F64)"),
                dtype,
                device: Some(self.id),
            });
        }
        Ok(())
    }

    /// Closes `scope`; a failure on a device that has been lost is that loss (wgpu reports
    /// the loss itself only once the device is polled).
    fn finish(&self, scope: Scope, bytes: u64) -> Result<()> {
        scope.finish(self.id, bytes).map_err(|e| {
            let _ = self.device.poll(wgpu::PollType::Poll);
            match self.sink.lost() {
                Some(why) => FaultCode::DeviceLost.error(self.id, why),
                None => e,
            }
        })
    }

    /// The compiled kernel of `key` (generated by `build` on first use).
    pub(crate) fn kernel(&self, key: KernelKey, build: impl FnOnce() -> Result<KernelSource>) -> Result<Arc<Kernel>> {
        self.cache.get(&self.device, self.id, key, build)
    }

    /// The 2-D grid for `groups` workgroups: every launch's grid comes from here, and a
    /// kernel reads its linear workgroup index `g = wid.y * nwg.x + wid.x` (see
    /// `codegen::Builder::finish`), so no launch is cut at a dimension's limit; beyond
    /// `max²` workgroups it is a typed error.
    fn grid(&self, groups: u64) -> Result<(u32, u32)> {
        let max = u64::from(self.grid_max);
        if groups <= max {
            return Ok((groups as u32, 1));
        }
        let y = groups.div_ceil(max);
        if y > max {
            return Err(Error::TooLarge(format!(
                "{groups} workgroups exceed {max} x {max} (max_compute_workgroups_per_dimension on {})",
                self.id
            )));
        }
        Ok((max as u32, y as u32))
    }

    /// Runs launches in order, in one submission; wgpu errors during encoding and
    /// submission come back typed.
    pub(crate) fn launch(&self, launches: Vec<Launch>) -> Result<()> {
        self.sink.check(self.id)?;
        let scope = Scope::push(&self.device);
        let mut encoder =
            self.device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("polycompute") });
        {
            let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("polycompute"),
                timestamp_writes: None,
            });
            for l in &launches {
                let k = &l.kernel;
                if l.groups == 0 {
                    continue;
                }
                let (gx, gy) = self.grid(l.groups)?;
                // Four zero words (`params.zero`, read into `pz`), then the kernel's words.
                let mut words = vec![0u32; 4];
                words.extend_from_slice(&l.params);
                words.resize(4 + l.params.len().div_ceil(4).max(1) * 4, 0);
                let uniform = self.device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                    label: Some("polycompute params"),
                    contents: bytemuck::cast_slice(&words),
                    usage: wgpu::BufferUsages::UNIFORM,
                });
                let mut entries = vec![wgpu::BindGroupEntry { binding: 0, resource: uniform.as_entire_binding() }];
                for (i, b) in l.buffers.iter().enumerate() {
                    entries.push(wgpu::BindGroupEntry { binding: i as u32 + 1, resource: b.as_entire_binding() });
                }
                debug_assert_eq!(entries.len(), k.bindings.len());
                debug_assert!(k.bindings[0] == Binding::Uniform);
                let group = self.device.create_bind_group(&wgpu::BindGroupDescriptor {
                    label: Some("polycompute"),
                    layout: &k.layout,
                    entries: &entries,
                });
                pass.set_pipeline(&k.pipeline);
                pass.set_bind_group(0, &group, &[]);
                pass.dispatch_workgroups(gx, gy, 1);
            }
        }
        self.queue.submit([encoder.finish()]);
        self.finish(scope, 0)?;
        self.sink.check(self.id)
    }

    /// Copies `bytes` from the start of `src` to the start of `dst` on the device, rounded
    /// up to whole words (an odd count of halves ends mid-word; every buffer holds whole
    /// words, see `BufferPool::take`, and wgpu copies whole words only).
    pub(crate) fn copy(&self, src: &wgpu::Buffer, dst: &wgpu::Buffer, bytes: u64) -> Result<()> {
        if bytes == 0 {
            return Ok(());
        }
        let bytes = bytes.next_multiple_of(wgpu::COPY_BUFFER_ALIGNMENT);
        let scope = Scope::push(&self.device);
        let mut encoder =
            self.device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("polycompute copy") });
        encoder.copy_buffer_to_buffer(src, 0, dst, 0, bytes);
        self.queue.submit([encoder.finish()]);
        self.finish(scope, bytes)?;
        self.sink.check(self.id)
    }

    fn wait(&self) -> Result<()> {
        self.device
            .poll(wgpu::PollType::wait_indefinitely())
            .map_err(|e| FaultCode::WaitFailed.error(self.id, format!("waiting for the device failed: {e}")))?;
        self.sink.check(self.id)
    }

    /// Reads back the bytes of `buf` through a pooled staging buffer.
    fn read_bytes(&self, buf: &WgpuBuffer) -> Result<Vec<u8>> {
        let len = buf.bytes();
        if len == 0 {
            return Ok(Vec::new());
        }
        // Whole words (an odd count of halves ends mid-word); the tail is cut off below.
        let bytes = len.next_multiple_of(wgpu::COPY_BUFFER_ALIGNMENT);
        let staging = self.pool.staging(bytes)?;
        let scope = Scope::push(&self.device);
        let mut encoder =
            self.device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("polycompute readback") });
        encoder.copy_buffer_to_buffer(buf.raw(), 0, &staging, 0, bytes);
        self.queue.submit([encoder.finish()]);
        let (tx, rx) = mpsc::channel();
        staging.slice(..bytes).map_async(wgpu::MapMode::Read, move |r| {
            let _ = tx.send(r);
        });
        self.finish(scope, bytes)?;
        self.wait()?;
        let readback = |message: String| FaultCode::ReadbackFailed.error(self.id, message);
        let mapped = rx.recv().map_err(|_| readback("the readback never completed".into()))?;
        mapped.map_err(|e| readback(format!("mapping the readback buffer failed: {e}")))?;
        let data = staging
            .slice(..bytes)
            .get_mapped_range()
            .map_err(|e| readback(format!("reading the readback buffer failed: {e}")))?[..len as usize]
            .to_vec();
        staging.unmap();
        self.pool.give_back(staging);
        Ok(data)
    }
}

/// The dtypes (issue 29's) this backend has no kernels for yet: every op that touches one
/// answers `Unsupported` naming the op and the dtype (`ops::execute`, `upload`), so no
/// buffer of them ever exists here and the codegen's arms for them are never reached.
pub(crate) fn not_yet(dtype: DType) -> bool {
    matches!(dtype, DType::I64 | DType::U8 | DType::Bool)
}

fn host_vec(dtype: DType, bytes: &[u8]) -> HostVec {
    // `pod_collect_to_vec` copies, so the mapped range need not be aligned for f64.
    match dtype {
        DType::F32 => HostVec::F32(bytemuck::pod_collect_to_vec(bytes)),
        DType::F64 => HostVec::F64(bytemuck::pod_collect_to_vec(bytes)),
        DType::I32 => HostVec::I32(bytemuck::pod_collect_to_vec(bytes)),
        DType::U32 => HostVec::U32(bytemuck::pod_collect_to_vec(bytes)),
        DType::F16 => HostVec::F16(bytemuck::pod_collect_to_vec(bytes)),
        DType::BF16 => HostVec::BF16(bytemuck::pod_collect_to_vec(bytes)),
        DType::I64 => HostVec::I64(bytemuck::pod_collect_to_vec(bytes)),
        DType::U8 => HostVec::U8(bytemuck::pod_collect_to_vec(bytes)),
        // Never reached (`not_yet`); a byte other than 0 reads as true.
        DType::Bool => HostVec::Bool(bytes.iter().map(|&b| b != 0).collect()),
    }
}

impl BackendDevice for WgpuDevice {
    type Buffer = WgpuBuffer;

    fn info(&self) -> &DeviceInfo {
        &self.info
    }

    fn token(&self) -> DeviceToken {
        self.token
    }

    fn upload(&self, data: HostSlice<'_>) -> Result<WgpuBuffer> {
        let _gl = self.pool.serialize();
        self.sink.check(self.id)?;
        if not_yet(data.dtype()) {
            return Err(Error::Unsupported {
                op: "upload (wgpu has no kernels for this dtype yet)".into(),
                dtype: data.dtype(),
                device: Some(self.id),
            });
        }
        let bytes: &[u8] = match data {
            HostSlice::F32(s) => bytemuck::cast_slice(s),
            HostSlice::F64(s) => bytemuck::cast_slice(s),
            HostSlice::I32(s) => bytemuck::cast_slice(s),
            HostSlice::U32(s) => bytemuck::cast_slice(s),
            HostSlice::F16(s) => bytemuck::cast_slice(s),
            HostSlice::BF16(s) => bytemuck::cast_slice(s),
            // Refused above.
            HostSlice::I64(_) | HostSlice::U8(_) | HostSlice::Bool(_) => &[],
        };
        let buf = self.alloc(data.dtype(), data.len())?;
        if !bytes.is_empty() {
            // wgpu writes whole words: an odd count of halves gets a zero half appended.
            let padded;
            let bytes = if bytes.len().is_multiple_of(4) {
                bytes
            } else {
                padded = [bytes, &[0u8; 4][..4 - bytes.len() % 4]].concat();
                &padded[..]
            };
            let scope = Scope::push(&self.device);
            self.queue.write_buffer(buf.raw(), 0, bytes);
            self.finish(scope, bytes.len() as u64)?;
        }
        Ok(buf)
    }

    fn download(&self, buffer: &WgpuBuffer) -> Result<HostVec> {
        let _gl = self.pool.serialize();
        let bytes = self.read_bytes(buffer)?;
        Ok(host_vec(buffer.dtype(), &bytes))
    }

    fn execute(&self, op: &Op, inputs: &[&WgpuBuffer]) -> Result<WgpuBuffer> {
        let _gl = self.pool.serialize();
        self.sink.check(self.id)?;
        crate::ops::execute(self, op, inputs)
    }

    fn synchronize(&self) -> Result<()> {
        let _gl = self.pool.serialize();
        self.wait()
    }
}
