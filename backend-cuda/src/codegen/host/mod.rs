//! Host emulation of the generated kernels: each file compiles the CUDA C of one family with
//! the system C++ compiler (`shim`: the host prelude that maps the CUDA intrinsics to exact
//! host equivalents), runs it with the grids and blocks the backend computes (`launch`), and
//! compares it with the CPU backend or a host reference. They are unit tests because they
//! need the generators and the launch plans, which the crate keeps to itself; the checks
//! through the public API (the fake driver, a real GPU) are the integration tests in `tests/`.

#[macro_use]
mod shim;
// The cases the device check (`tests/gpu_views.rs`) runs too.
#[path = "../../../tests/views_cases/mod.rs"]
mod views_cases;

mod blocks;
mod half;
mod kernels;
mod semantics;
mod views;
