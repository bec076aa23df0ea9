//! What a checked closure returns: one or several device arrays of any dtype, read back to
//! the host as [`HostArray`]s for comparison.
//!
//! [`IntoOutputs`] is implemented for a [`DeviceArray`] of any element type, a `Vec` of them,
//! [`Named`] arrays (so a failure names `"probs"` rather than `output 1`), a [`HostArray`],
//! and tuples of up to four of these.
//!
//! ```
//! use polycompute_testing::{named, IntoOutputs};
//! # fn demo(dev: &polycompute_core::Device) -> polycompute_core::Result<()> {
//! let x = dev.from_slice(&[1.0f32, 2.0], &[2])?;
//! let n = dev.from_slice(&[7u32], &[1])?;
//! let outs = (named("x", x), n).into_outputs()?;
//! assert_eq!(outs[0].name.as_deref(), Some("x"));
//! # Ok(()) }
//! ```

use polycompute_core::{DType, DeviceArray, Element, HostVec, Result};

/// One output, on the host: its name when it has one, dtype, shape and elements.
#[derive(Clone, Debug, PartialEq)]
pub struct HostArray {
    /// The name given with [`named`], if any.
    pub name: Option<String>,
    /// The shape.
    pub shape: Vec<usize>,
    /// The elements, row-major.
    pub data: HostVec,
}

impl HostArray {
    /// An unnamed host array.
    pub fn new(data: HostVec, shape: &[usize]) -> HostArray {
        HostArray { name: None, shape: shape.to_vec(), data }
    }

    /// The elements' dtype.
    pub fn dtype(&self) -> DType {
        self.data.dtype()
    }

    /// How a failure refers to output `index`: `"probs"` or `output 1`.
    pub fn label(&self, index: usize) -> String {
        match &self.name {
            Some(n) => format!("output {index} {n:?}"),
            None => format!("output {index}"),
        }
    }

    /// The multi-index of flat element `flat` (`[2, 5]`), for messages.
    pub fn index_of(&self, flat: usize) -> String {
        if self.shape.is_empty() {
            return "[]".into();
        }
        let mut rest = flat;
        let mut idx = vec![0; self.shape.len()];
        for (i, &d) in self.shape.iter().enumerate().rev() {
            if d > 0 {
                idx[i] = rest % d;
                rest /= d;
            }
        }
        let parts: Vec<String> = idx.iter().map(usize::to_string).collect();
        format!("[{}]", parts.join(", "))
    }
}

/// An array with the name a failure message uses for it.
#[derive(Clone, Debug)]
pub struct Named<T: Element> {
    /// The name.
    pub name: String,
    /// The array.
    pub array: DeviceArray<T>,
}

/// Names an output: `Ok((named("probs", p), named("hist", h)))`.
pub fn named<T: Element>(name: impl Into<String>, array: DeviceArray<T>) -> Named<T> {
    Named { name: name.into(), array }
}

/// Outputs of a checked closure, read back to the host in order.
pub trait IntoOutputs {
    /// Reads the outputs back (an error when a device cannot).
    fn into_outputs(self) -> Result<Vec<HostArray>>;
}

fn read<T: Element>(array: &DeviceArray<T>, name: Option<String>) -> Result<HostArray> {
    let data = T::host_slice(&array.to_vec()?).to_host_vec();
    Ok(HostArray { name, shape: array.shape().to_vec(), data })
}

impl<T: Element> IntoOutputs for DeviceArray<T> {
    fn into_outputs(self) -> Result<Vec<HostArray>> {
        Ok(vec![read(&self, None)?])
    }
}

impl<T: Element> IntoOutputs for &DeviceArray<T> {
    fn into_outputs(self) -> Result<Vec<HostArray>> {
        Ok(vec![read(self, None)?])
    }
}

impl<T: Element> IntoOutputs for Named<T> {
    fn into_outputs(self) -> Result<Vec<HostArray>> {
        Ok(vec![read(&self.array, Some(self.name))?])
    }
}

impl IntoOutputs for HostArray {
    fn into_outputs(self) -> Result<Vec<HostArray>> {
        Ok(vec![self])
    }
}

impl<O: IntoOutputs> IntoOutputs for Vec<O> {
    fn into_outputs(self) -> Result<Vec<HostArray>> {
        let mut out = Vec::new();
        for o in self {
            out.extend(o.into_outputs()?);
        }
        Ok(out)
    }
}

macro_rules! tuple_outputs {
    ($($t:ident),+) => {
        impl<$($t: IntoOutputs),+> IntoOutputs for ($($t,)+) {
            #[allow(non_snake_case)]
            fn into_outputs(self) -> Result<Vec<HostArray>> {
                let ($($t,)+) = self;
                let mut out = Vec::new();
                $(out.extend($t.into_outputs()?);)+
                Ok(out)
            }
        }
    };
}

tuple_outputs!(A);
tuple_outputs!(A, B);
tuple_outputs!(A, B, C);
tuple_outputs!(A, B, C, D);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn multi_indices_are_row_major() {
        let a = HostArray::new(HostVec::F32(vec![0.0; 24]), &[2, 3, 4]);
        assert_eq!(a.index_of(0), "[0, 0, 0]");
        assert_eq!(a.index_of(23), "[1, 2, 3]");
        assert_eq!(a.index_of(5), "[0, 1, 1]");
        assert_eq!(HostArray::new(HostVec::U32(vec![1]), &[]).index_of(0), "[]");
        let named = HostArray { name: Some("probs".into()), ..a };
        assert_eq!(named.label(1), "output 1 \"probs\"");
        let outs = (HostArray::new(HostVec::I32(vec![]), &[0]), vec![named]).into_outputs().unwrap();
        assert_eq!(outs.len(), 2);
    }
}
