//! Device memory: a pool that reuses freed storage buffers by size class, the buffer type
//! arrays hold, and pooled staging buffers for readback.

use polycompute_core::sync::LockUnpoisoned;
use polycompute_core::DeviceId;
use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex};

use polycompute_core::{DType, DeviceToken, Error, Result};

use crate::errors::Scope;

/// Allocations smaller than this share one class (binding a buffer of size 0 is invalid).
const MIN_CLASS: u64 = 256;

/// The size class of an allocation of `bytes`: powers of two split into eight steps, so a
/// class wastes less than a quarter of what it holds and a freed buffer fits many requests.
pub(crate) fn size_class(bytes: u64) -> u64 {
    if bytes <= MIN_CLASS {
        return MIN_CLASS;
    }
    let step = bytes.next_power_of_two() / 8;
    bytes.div_ceil(step) * step
}

/// The limits an allocation must respect.
#[derive(Copy, Clone, Debug)]
pub(crate) struct MemLimits {
    /// `max_buffer_size` of the device.
    pub max_buffer: u64,
    /// `max_storage_buffer_binding_size`: every array is bound whole to its kernels.
    pub max_binding: u64,
}

/// Free buffers by (usage, size class), shared by the device and every buffer it made.
pub(crate) struct BufferPool {
    device: wgpu::Device,
    device_id: DeviceId,
    limits: MemLimits,
    free: Mutex<Free>,
    /// Most bytes kept in free lists; past it, freed buffers are destroyed.
    cap: u64,
    /// On a GL adapter, held around every use of the device (see [`BufferPool::serialize`]).
    gl_serial: Option<parking_lot::ReentrantMutex<()>>,
}

#[derive(Default)]
struct Free {
    lists: HashMap<(u32, u64), Vec<wgpu::Buffer>>,
    bytes: u64,
}

impl BufferPool {
    /// The pool of `device`; `gl` when the adapter is wgpu's GL backend (its calls are then
    /// serialized, see [`BufferPool::serialize`]).
    pub(crate) fn new(device: wgpu::Device, device_id: DeviceId, limits: MemLimits, gl: bool) -> Arc<BufferPool> {
        let cap = (limits.max_buffer / 2).clamp(64 << 20, 1 << 30);
        let gl_serial = gl.then(|| parking_lot::ReentrantMutex::new(()));
        Arc::new(BufferPool { device, device_id, limits, free: Mutex::default(), cap, gl_serial })
    }

    /// On a GL adapter, a guard that one thread at a time holds while it uses the device.
    ///
    /// wgpu's GL backend has one context per device, taken for each GL call under a lock that
    /// panics after waiting 1 s ("Could not lock adapter context. This is most-likely a
    /// deadlock."). On llvmpipe one dispatch or readback of a large op holds it for longer,
    /// so another thread's op on the same device panicked inside wgpu (the conformance
    /// suite's size tier, run on parallel threads, hit it three times in 126 trials). Every
    /// entry point of the device (upload, download, an op, synchronize) and every buffer
    /// destruction holds this guard (reentrant: an op allocates and frees inside it), so a
    /// second thread waits here, without a time limit, instead. Other backends: no guard.
    pub(crate) fn serialize(&self) -> Option<parking_lot::ReentrantMutexGuard<'_, ()>> {
        self.gl_serial.as_ref().map(|m| m.lock())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Free> {
        self.free.lock_unpoisoned()
    }

    /// Number of buffers waiting in the free lists (for tests and reports).
    pub(crate) fn free_count(&self) -> usize {
        self.lock().lists.values().map(Vec::len).sum()
    }

    /// Checks that `bytes` fit in one buffer and one binding, naming the limit when not.
    pub(crate) fn check_size(&self, bytes: u64, what: &str) -> Result<()> {
        let (limit, name) = if self.limits.max_binding < self.limits.max_buffer {
            (self.limits.max_binding, "max_storage_buffer_binding_size")
        } else {
            (self.limits.max_buffer, "max_buffer_size")
        };
        if bytes > limit {
            return Err(Error::TooLarge(format!(
                "{what} needs {bytes} bytes but {} allows at most {limit} bytes per array ({name}); \
                 split the array into smaller pieces",
                self.device_id
            )));
        }
        Ok(())
    }

    /// A storage buffer of at least `bytes` (usable as kernel input and output and as a copy
    /// source and destination), from the free list when one of its class is there.
    pub(crate) fn storage(self: &Arc<Self>, bytes: u64, what: &str) -> Result<wgpu::Buffer> {
        self.check_size(bytes, what)?;
        let usage = wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST;
        // Kernels bind whole buffers, so the class may not outgrow a binding either.
        self.take(usage, bytes, self.limits.max_binding.min(self.limits.max_buffer))
    }

    /// A mappable staging buffer of at least `bytes` for readback.
    pub(crate) fn staging(self: &Arc<Self>, bytes: u64) -> Result<wgpu::Buffer> {
        self.take(wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST, bytes, self.limits.max_buffer)
    }

    /// A buffer of `bytes` rounded up to its class, but never past `max` (rounded down to a
    /// multiple of 4, which `bytes` is within).
    fn take(&self, usage: wgpu::BufferUsages, bytes: u64, max: u64) -> Result<wgpu::Buffer> {
        let class = size_class(bytes).min((max / 4 * 4).max(bytes.next_multiple_of(4)));
        {
            let mut free = self.lock();
            if let Some(buf) = free.lists.get_mut(&(usage.bits(), class)).and_then(Vec::pop) {
                free.bytes -= class;
                return Ok(buf);
            }
        }
        match self.create(usage, class) {
            Err(Error::OutOfMemory { .. }) => {
                // Freed buffers may be what stands in the way: drop them and try once more.
                self.trim();
                self.create(usage, class)
            }
            r => r,
        }
    }

    fn create(&self, usage: wgpu::BufferUsages, size: u64) -> Result<wgpu::Buffer> {
        let scope = Scope::push(&self.device);
        let buf = self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("polycompute"),
            size,
            usage,
            mapped_at_creation: false,
        });
        scope.finish(self.device_id, size)?;
        Ok(buf)
    }

    /// Returns a buffer to its free list (or destroys it when the pool is full).
    pub(crate) fn give_back(&self, buf: wgpu::Buffer) {
        let size = buf.size();
        let mut free = self.lock();
        if free.bytes + size > self.cap {
            drop(free);
            let _gl = self.serialize();
            buf.destroy();
            return;
        }
        free.bytes += size;
        free.lists.entry((buf.usage().bits(), size)).or_default().push(buf);
    }

    /// Destroys every free buffer.
    pub(crate) fn trim(&self) {
        let lists = std::mem::take(&mut *self.lock());
        let _gl = self.serialize();
        for buf in lists.lists.into_values().flatten() {
            buf.destroy();
        }
    }
}

/// A wgpu array buffer. Dropping it returns the memory to its device's pool.
pub struct WgpuBuffer {
    buffer: Option<wgpu::Buffer>,
    dtype: DType,
    len: usize,
    owner: DeviceToken,
    pool: Arc<BufferPool>,
}

impl WgpuBuffer {
    pub(crate) fn new(
        buffer: wgpu::Buffer,
        dtype: DType,
        len: usize,
        owner: DeviceToken,
        pool: Arc<BufferPool>,
    ) -> Self {
        WgpuBuffer { buffer: Some(buffer), dtype, len, owner, pool }
    }

    /// The wgpu buffer (at least `len * dtype.size_bytes()` bytes; its size class).
    pub fn raw(&self) -> &wgpu::Buffer {
        match &self.buffer {
            Some(b) => b,
            // `buffer` is only taken in `drop`.
            None => unreachable!("WgpuBuffer used after drop"),
        }
    }

    /// Bytes of the elements (not of the whole allocation).
    pub fn bytes(&self) -> u64 {
        (self.len * self.dtype.size_bytes()) as u64
    }
}

impl fmt::Debug for WgpuBuffer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "WgpuBuffer<{}>[{}]", self.dtype, self.len)
    }
}

impl Drop for WgpuBuffer {
    fn drop(&mut self) {
        if let Some(b) = self.buffer.take() {
            self.pool.give_back(b);
        }
    }
}

polycompute_core::backend_buffer!(WgpuBuffer);

#[cfg(test)]
mod tests {
    use super::size_class;

    #[test]
    fn size_classes_waste_under_a_quarter_and_are_reused() {
        assert_eq!(size_class(1), 256);
        assert_eq!(size_class(256), 256);
        assert_eq!(size_class(257), 320);
        for bytes in [300u64, 1000, 4097, 1 << 20, (1 << 20) + 1, 123_456_789] {
            let c = size_class(bytes);
            assert!(c >= bytes && (c - bytes) * 4 < bytes, "{bytes} -> {c}");
            assert_eq!(size_class(c), c, "a class is its own class");
        }
    }
}
