//! Compiled kernels, cached by their generated source: the source is a pure function of the
//! kernel's signature (op, dtypes, fused program, rank, variant), never of sizes, which
//! travel in a uniform buffer. So a repeated map compiles once, whatever its shape.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use polycompute_core::{Error, Result};

use crate::errors::{kernel_compile, Scope};

/// How a kernel binds one buffer; binding `i` of group 0 is entry `i` of [`KernelSource::bindings`].
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Binding {
    /// `var<storage, read>`.
    Read,
    /// `var<storage, read_write>`.
    Write,
    /// `var<uniform>`: the kernel's sizes.
    Uniform,
}

/// A generated kernel: WGSL with one entry point `main`, and its bindings.
#[derive(Clone, Debug)]
pub(crate) struct KernelSource {
    /// The WGSL source.
    pub wgsl: String,
    /// The bindings, in binding order.
    pub bindings: Vec<Binding>,
}

/// A compiled kernel.
#[derive(Debug)]
pub(crate) struct Kernel {
    pub pipeline: wgpu::ComputePipeline,
    pub layout: wgpu::BindGroupLayout,
    pub bindings: Vec<Binding>,
}

/// The device's kernels, compiled on first use.
#[derive(Default)]
pub(crate) struct PipelineCache {
    kernels: Mutex<HashMap<String, Arc<Kernel>>>,
    compiles: AtomicUsize,
}

impl PipelineCache {
    /// How many kernels have been compiled (a cache hit compiles nothing).
    pub(crate) fn compiles(&self) -> usize {
        self.compiles.load(Ordering::Relaxed)
    }

    /// The kernel of `src`, compiled now if it is not cached.
    pub(crate) fn get(&self, device: &wgpu::Device, device_id: &str, src: &KernelSource) -> Result<Arc<Kernel>> {
        let mut kernels = self.kernels.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(k) = kernels.get(&src.wgsl) {
            return Ok(k.clone());
        }
        if std::env::var_os("POLYCOMPUTE_WGPU_DUMP").is_some() {
            eprintln!("--- polycompute-wgpu kernel for {device_id} ---\n{}", src.wgsl);
        }
        let kernel = Arc::new(compile(device, device_id, src)?);
        self.compiles.fetch_add(1, Ordering::Relaxed);
        kernels.insert(src.wgsl.clone(), kernel.clone());
        Ok(kernel)
    }
}

/// Compiles `src`; a shader the device rejects is [`Error::KernelCompile`] with the source
/// and wgpu's log.
pub(crate) fn compile(device: &wgpu::Device, device_id: &str, src: &KernelSource) -> Result<Kernel> {
    let scope = Scope::push(device);
    let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some("polycompute"),
        source: wgpu::ShaderSource::Wgsl(src.wgsl.as_str().into()),
    });
    let entries: Vec<wgpu::BindGroupLayoutEntry> = src
        .bindings
        .iter()
        .enumerate()
        .map(|(i, b)| wgpu::BindGroupLayoutEntry {
            binding: i as u32,
            visibility: wgpu::ShaderStages::COMPUTE,
            ty: match b {
                Binding::Read => wgpu::BindingType::Buffer {
                    ty: wgpu::BufferBindingType::Storage { read_only: true },
                    has_dynamic_offset: false,
                    min_binding_size: None,
                },
                Binding::Write => wgpu::BindingType::Buffer {
                    ty: wgpu::BufferBindingType::Storage { read_only: false },
                    has_dynamic_offset: false,
                    min_binding_size: None,
                },
                Binding::Uniform => wgpu::BindingType::Buffer {
                    ty: wgpu::BufferBindingType::Uniform,
                    has_dynamic_offset: false,
                    min_binding_size: None,
                },
            },
            count: None,
        })
        .collect();
    let layout = device
        .create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor { label: Some("polycompute"), entries: &entries });
    let pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
        label: Some("polycompute"),
        bind_group_layouts: &[Some(&layout)],
        immediate_size: 0,
    });
    let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: Some("polycompute"),
        layout: Some(&pipeline_layout),
        module: &module,
        entry_point: Some("main"),
        compilation_options: wgpu::PipelineCompilationOptions {
            constants: &[],
            // Every kernel writes its workgroup memory before reading it.
            zero_initialize_workgroup_memory: false,
        },
        cache: None,
    });
    if let Some(e) = scope.pop() {
        return Err(match e {
            wgpu::Error::OutOfMemory { .. } => Error::OutOfMemory { device: device_id.to_string(), bytes: 0 },
            e => kernel_compile(&e, device_id, &src.wgsl),
        });
    }
    Ok(Kernel { pipeline, layout, bindings: src.bindings.clone() })
}
