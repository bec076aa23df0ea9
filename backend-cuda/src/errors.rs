//! CUDA error codes as polycompute errors. Faults that poison the context (an illegal
//! address, a trap, a launch timeout, ...) are sticky: every later call fails the same way,
//! so the pool must replace the worker.

use polycompute_core::{DeviceId, Error};

use crate::driver::error_name;

/// The `CUresult` values this crate tells apart, by their driver names.
pub(crate) mod code {
    /// `CUDA_SUCCESS`.
    pub(crate) const SUCCESS: i32 = 0;
    /// `CUDA_ERROR_OUT_OF_MEMORY`.
    pub(crate) const OUT_OF_MEMORY: i32 = 2;
    /// `CUDA_ERROR_STUB_LIBRARY`: the library is a link stub, not a driver.
    pub(crate) const STUB_LIBRARY: i32 = 34;
    /// `CUDA_ERROR_NOT_FOUND` ("named symbol not found"): also what this repository's link stub
    /// (scripts/cuda-stub.sh) returns for an entry point the real `libcuda.so.1` lacks (an
    /// older driver), after naming it on stderr.
    pub(crate) const NOT_FOUND: i32 = 500;
    /// `CUDA_ERROR_NO_DEVICE`.
    pub(crate) const NO_DEVICE: i32 = 100;
    /// `CUDA_ERROR_ILLEGAL_ADDRESS`.
    pub(crate) const ILLEGAL_ADDRESS: i32 = 700;
    /// `CUDA_ERROR_LAUNCH_TIMEOUT`.
    pub(crate) const LAUNCH_TIMEOUT: i32 = 702;
    /// `CUDA_ERROR_ASSERT` (a device-side assert).
    pub(crate) const ASSERT: i32 = 710;
    /// `CUDA_ERROR_HARDWARE_STACK_ERROR`.
    pub(crate) const HARDWARE_STACK_ERROR: i32 = 714;
    /// `CUDA_ERROR_ILLEGAL_INSTRUCTION`.
    pub(crate) const ILLEGAL_INSTRUCTION: i32 = 715;
    /// `CUDA_ERROR_MISALIGNED_ADDRESS`.
    pub(crate) const MISALIGNED_ADDRESS: i32 = 716;
    /// `CUDA_ERROR_INVALID_ADDRESS_SPACE`.
    pub(crate) const INVALID_ADDRESS_SPACE: i32 = 717;
    /// `CUDA_ERROR_INVALID_PC`.
    pub(crate) const INVALID_PC: i32 = 718;
    /// `CUDA_ERROR_LAUNCH_FAILED`.
    pub(crate) const LAUNCH_FAILED: i32 = 719;
}

/// True for the codes after which the context is unusable: an illegal address, a launch
/// timeout, a device-side assert, a hardware stack error, an illegal instruction, a
/// misaligned address, an invalid address space, an invalid PC, a failed launch.
pub fn is_sticky(code: i32) -> bool {
    matches!(
        code,
        code::ILLEGAL_ADDRESS
            | code::LAUNCH_TIMEOUT
            | code::ASSERT
            | code::HARDWARE_STACK_ERROR
            | code::ILLEGAL_INSTRUCTION
            | code::MISALIGNED_ADDRESS
            | code::INVALID_ADDRESS_SPACE
            | code::INVALID_PC
            | code::LAUNCH_FAILED
    )
}

/// Turns a driver result into `Ok` or the typed error; `what` says which call failed.
pub(crate) fn check(code: i32, device: DeviceId, what: &str) -> Result<(), Error> {
    if code == code::SUCCESS {
        Ok(())
    } else {
        Err(fault(code, device, what))
    }
}

/// The typed error of a failed driver call.
pub(crate) fn fault(code: i32, device: DeviceId, what: &str) -> Error {
    let hint = if code == code::NOT_FOUND {
        " (a kernel or driver entry point is missing; where the driver lacks one, polycompute's link stub \
         names it on stderr: update the NVIDIA driver)"
    } else {
        ""
    };
    Error::DeviceFault {
        device,
        code: code as i64,
        message: format!("{what}: {}{hint}", error_name(code)),
        sticky: is_sticky(code),
    }
}

/// The typed error of a failed call into a CUDA library (cuBLAS), given the code the context
/// reported right after it (`context_code`, from synchronising the stream): a CUDA error there
/// is the cause and is mapped as the driver's own, with the same sticky rule (so a fault inside
/// a GEMM replaces the worker); a clean context leaves [`Error::Backend`] with the library's
/// message.
pub(crate) fn library_fault(what: &str, context_code: i32, device: DeviceId) -> Error {
    if context_code == code::SUCCESS {
        return Error::Backend { device, message: what.to_string() };
    }
    fault(context_code, device, &format!("{what}; the context then reported"))
}

/// Like [`check`], but out-of-memory becomes [`Error::OutOfMemory`] for `bytes`.
pub(crate) fn check_alloc(code: i32, device: DeviceId, bytes: usize) -> Result<(), Error> {
    if code == code::OUT_OF_MEMORY {
        return Err(Error::OutOfMemory { device, bytes: bytes as u64 });
    }
    check(code, device, "allocation")
}

/// The typed error of a failed cust call.
pub(crate) fn from_cust(e: cust::error::CudaError, device: DeviceId, what: &str) -> Error {
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

    #[test]
    fn a_library_failure_takes_the_contexts_error_and_its_stickiness() {
        let dev = DeviceId::new(polycompute_core::BackendKind::Cuda, 0);
        let what = "cuBLAS gemm failed with CUBLAS_STATUS_EXECUTION_FAILED (13)";
        match library_fault(what, code::ILLEGAL_ADDRESS, dev) {
            Error::DeviceFault { code: 700, sticky: true, message, .. } => {
                assert!(message.starts_with(what), "{message}")
            }
            e => panic!("{e:?}"),
        }
        assert!(matches!(library_fault(what, 1, dev), Error::DeviceFault { code: 1, sticky: false, .. }));
        assert!(matches!(library_fault(what, 0, dev), Error::Backend { ref message, .. } if message == what));
    }
}
