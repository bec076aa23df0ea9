//! Transpose kernels.
