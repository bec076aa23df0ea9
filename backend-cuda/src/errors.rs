//! CUDA error codes as polycompute errors. Faults that poison the context (an illegal
//! address, a trap, a launch timeout, ...) are sticky: every later call fails the same way,
//! so the pool must replace the worker.

use polycompute_core::Error;

use crate::driver::{error_name, SUCCESS};

/// `CUDA_ERROR_OUT_OF_MEMORY`.
const OUT_OF_MEMORY: i32 = 2;

/// True for the codes after which the context is unusable: 700 (illegal address), 702
/// (launch timeout), 710 (device-side assert), 714–719 (hardware stack error, illegal
/// instruction, misaligned address, invalid address space, invalid PC, launch failure).
pub fn is_sticky(code: i32) -> bool {
    matches!(code, 700 | 702 | 710 | 714..=719)
}

/// Turns a driver result into `Ok` or the typed error; `what` says which call failed.
pub(crate) fn check(code: i32, device: &str, what: &str) -> Result<(), Error> {
    if code == SUCCESS {
        Ok(())
    } else {
        Err(fault(code, device, what))
    }
}

/// The typed error of a failed driver call.
pub(crate) fn fault(code: i32, device: &str, what: &str) -> Error {
    Error::DeviceFault {
        device: device.to_string(),
        code: code as i64,
        message: format!("{what}: {}", error_name(code)),
        sticky: is_sticky(code),
    }
}

/// Like [`check`], but out-of-memory becomes [`Error::OutOfMemory`] for `bytes`.
pub(crate) fn check_alloc(code: i32, device: &str, bytes: usize) -> Result<(), Error> {
    if code == OUT_OF_MEMORY {
        return Err(Error::OutOfMemory { device: device.to_string(), bytes: bytes as u64 });
    }
    check(code, device, "allocation")
}

/// The typed error of a failed cust call.
pub(crate) fn from_cust(e: cust::error::CudaError, device: &str, what: &str) -> Error {
    fault(e as i32, device, what)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sticky_codes_are_the_context_poisoning_ones() {
        for code in [700, 702, 710, 714, 715, 716, 717, 718, 719] {
            assert!(is_sticky(code), "{code}");
        }
        for code in [0, 1, 2, 34, 100, 701, 709, 711, 720, 999] {
            assert!(!is_sticky(code), "{code}");
        }
    }
}
