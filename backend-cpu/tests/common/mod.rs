//! Helpers shared by the CPU backend's tests: the device. Special values, ULP comparison and
//! inputs come from the test kit (`polycompute_testing`).

#![allow(dead_code)]

// Linking the crate registers the CPU backend.
extern crate polycompute_cpu;

use polycompute_core::Device;

pub fn dev() -> Device {
    Device::cpu()
}
