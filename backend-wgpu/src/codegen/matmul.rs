//! Matmul kernels.
