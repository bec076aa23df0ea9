//! Loaded kernels of one device, keyed by the [`KernelKey`] they were generated for (for a
//! map, core's `MapSignature`): each distinct kernel is compiled (NVRTC caches per source and
//! architecture across devices) and loaded once per context.

use std::collections::HashMap;
use std::ffi::CStr;
use std::sync::{Arc, Mutex};

use cust::module::Module;
use polycompute_core::sync::LockUnpoisoned;
use polycompute_core::{DeviceId, Error, Result};

use crate::codegen::{Kernel, KernelKey};
use crate::driver::Handle;
use crate::errors::from_cust;
use crate::nvrtc::{Image, Nvrtc};

/// A loaded kernel: its module and the entry point's function handle.
pub(crate) struct Loaded {
    /// Kept alive while the function is in use.
    _module: Module,
    pub(crate) function: Handle,
}

// SAFETY: a CUfunction is a handle usable from any thread whose current context owns it;
// launches happen with the owning context made current.
unsafe impl Send for Loaded {}
// SAFETY: as above; the driver synchronises concurrent launches of one function.
unsafe impl Sync for Loaded {}

/// One device's loaded kernels.
#[derive(Default)]
pub(crate) struct ModuleCache {
    loaded: Mutex<HashMap<KernelKey, Arc<Loaded>>>,
}

impl ModuleCache {
    /// The loaded kernel, compiling and loading it on first use. The device's context must be
    /// current on this thread.
    pub(crate) fn get(&self, kernel: &Kernel, arch: u32, device: DeviceId) -> Result<Arc<Loaded>> {
        if let Some(l) = self.loaded.lock_unpoisoned().get(&kernel.key) {
            return Ok(l.clone());
        }
        let nvrtc = Nvrtc::get()
            .map_err(|reason| Error::BackendUnavailable { kind: polycompute_core::BackendKind::Cuda, reason })?;
        let image = nvrtc.compile(&kernel.source, arch).map_err(|e| Error::KernelCompile {
            device,
            code: kernel.source.clone(),
            log: e.log,
        })?;
        let module = match &*image {
            Image::Cubin(bytes) => Module::from_cubin(bytes, &[]),
            Image::Ptx(bytes) => {
                let text = CStr::from_bytes_until_nul(bytes).map_err(|_| Error::KernelCompile {
                    device,
                    code: kernel.source.clone(),
                    log: "NVRTC returned PTX without a terminating NUL".into(),
                })?;
                Module::from_ptx_cstr(text, &[])
            }
        }
        .map_err(|e| from_cust(e, device, "loading a compiled kernel"))?;
        let function = module
            .get_function(&kernel.entry)
            .map_err(|e| from_cust(e, device, "finding a kernel's entry point"))?
            .to_raw();
        let loaded = Arc::new(Loaded { _module: module, function: function.cast() });
        // Another thread may have loaded the same kernel meanwhile: keep the first one (which
        // that thread may already have launched asynchronously; replacing it would unload it
        // when that thread lets go) and drop ours, which nothing has launched.
        // (Ours is dropped, unloading its module, after the lock is released.)
        let kept = self.loaded.lock_unpoisoned().entry(kernel.key.clone()).or_insert_with(|| loaded.clone()).clone();
        Ok(kept)
    }
}
