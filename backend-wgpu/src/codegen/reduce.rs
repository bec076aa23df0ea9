//! Reduction kernels.
