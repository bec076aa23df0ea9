//! Element types: the runtime [`DType`], the compile-time [`Element`] trait, scalars and
//! typed host buffers that cross the backend boundary.

use std::fmt;
use std::hash::{Hash, Hasher};

pub use half::{bf16, f16};
use serde::{Deserialize, Serialize};

/// The element type of an array, known at run time.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum DType {
    /// IEEE 754 binary32.
    F32,
    /// IEEE 754 binary64.
    F64,
    /// Two's-complement 32-bit signed integer.
    I32,
    /// 32-bit unsigned integer.
    U32,
    /// IEEE 754 binary16 ([`half::f16`]): elementwise ops compute in f32 and round once to
    /// nearest even, as numpy's float16 does.
    F16,
    /// bfloat16 ([`half::bf16`]): the upper 16 bits of an f32; computed like [`DType::F16`].
    BF16,
    /// Two's-complement 64-bit signed integer (numpy's default integer).
    I64,
    /// 8-bit unsigned integer (bytes, images).
    U8,
    /// A truth value, one byte holding 0 or 1 (numpy's `bool_`): masks and comparisons.
    Bool,
}

impl DType {
    /// Every dtype, in a fixed order.
    pub const ALL: [DType; 9] =
        [DType::F32, DType::F64, DType::I32, DType::U32, DType::F16, DType::BF16, DType::I64, DType::U8, DType::Bool];

    /// Size of one element in bytes.
    pub const fn size_bytes(self) -> usize {
        match self {
            DType::F64 | DType::I64 => 8,
            DType::F32 | DType::I32 | DType::U32 => 4,
            DType::F16 | DType::BF16 => 2,
            DType::U8 | DType::Bool => 1,
        }
    }

    /// True for F32, F64, F16 and BF16.
    pub const fn is_float(self) -> bool {
        match self {
            DType::F32 | DType::F64 | DType::F16 | DType::BF16 => true,
            DType::I32 | DType::U32 | DType::I64 | DType::U8 | DType::Bool => false,
        }
    }

    /// True for the 16-bit floats F16 and BF16 (stored in 2 bytes, computed in f32).
    pub const fn is_half(self) -> bool {
        match self {
            DType::F16 | DType::BF16 => true,
            DType::F32 | DType::F64 | DType::I32 | DType::U32 | DType::I64 | DType::U8 | DType::Bool => false,
        }
    }

    /// True for the integers I32, U32, I64 and U8 (not [`DType::Bool`]).
    pub const fn is_int(self) -> bool {
        // Every dtype listed: a new one must say which it is.
        match self {
            DType::I32 | DType::U32 | DType::I64 | DType::U8 => true,
            DType::F32 | DType::F64 | DType::F16 | DType::BF16 | DType::Bool => false,
        }
    }

    /// True for [`DType::Bool`].
    ///
    /// ```
    /// use polycompute_core::DType;
    /// assert!(DType::Bool.is_bool() && !DType::U8.is_bool());
    /// ```
    pub const fn is_bool(self) -> bool {
        matches!(self, DType::Bool)
    }

    /// True for the signed integers I32 and I64.
    ///
    /// ```
    /// use polycompute_core::DType;
    /// assert!(DType::I64.is_signed_int() && !DType::U8.is_signed_int());
    /// ```
    pub const fn is_signed_int(self) -> bool {
        matches!(self, DType::I32 | DType::I64)
    }

    /// True for the dtypes an index array may have (`take`, `index_select`,
    /// `take_along_axis`, `scatter_add`): I32, U32 and I64.
    ///
    /// ```
    /// use polycompute_core::DType;
    /// assert!(DType::I64.is_index() && !DType::Bool.is_index());
    /// ```
    pub const fn is_index(self) -> bool {
        matches!(self, DType::I32 | DType::U32 | DType::I64)
    }

    /// The lower-case name used in docs, the CLI and JSON (`f32`, `i32`, ...).
    pub const fn name(self) -> &'static str {
        match self {
            DType::F32 => "f32",
            DType::F64 => "f64",
            DType::I32 => "i32",
            DType::U32 => "u32",
            DType::F16 => "f16",
            DType::BF16 => "bf16",
            DType::I64 => "i64",
            DType::U8 => "u8",
            DType::Bool => "bool",
        }
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One value of some [`DType`]. Equality and hashing are by bits, so `NaN == NaN` here and
/// `0.0 != -0.0`: a scalar is a key, not a number to compare.
#[derive(Copy, Clone, Debug, Serialize, Deserialize)]
pub enum Scalar {
    /// An f32 value.
    F32(f32),
    /// An f64 value.
    F64(f64),
    /// An i32 value.
    I32(i32),
    /// A u32 value.
    U32(u32),
    /// An f16 value.
    F16(f16),
    /// A bf16 value.
    BF16(bf16),
    /// An i64 value.
    I64(i64),
    /// A u8 value.
    U8(u8),
    /// A bool value.
    Bool(bool),
}

impl Scalar {
    /// The scalar's dtype.
    pub const fn dtype(self) -> DType {
        match self {
            Scalar::F32(_) => DType::F32,
            Scalar::F64(_) => DType::F64,
            Scalar::I32(_) => DType::I32,
            Scalar::U32(_) => DType::U32,
            Scalar::F16(_) => DType::F16,
            Scalar::BF16(_) => DType::BF16,
            Scalar::I64(_) => DType::I64,
            Scalar::U8(_) => DType::U8,
            Scalar::Bool(_) => DType::Bool,
        }
    }

    /// The value as f64 (exact for every dtype but i64, which rounds to nearest beyond
    /// 2^53; `true` is 1).
    pub fn to_f64(self) -> f64 {
        match self {
            Scalar::F32(v) => v as f64,
            Scalar::F64(v) => v,
            Scalar::I32(v) => v as f64,
            Scalar::U32(v) => v as f64,
            Scalar::F16(v) => v.to_f64(),
            Scalar::BF16(v) => v.to_f64(),
            Scalar::I64(v) => v as f64,
            Scalar::U8(v) => v as f64,
            Scalar::Bool(v) => v as u8 as f64,
        }
    }

    /// The raw bits, widened to 64.
    pub fn to_bits(self) -> u64 {
        match self {
            Scalar::F32(v) => v.to_bits() as u64,
            Scalar::F64(v) => v.to_bits(),
            Scalar::I32(v) => v as u32 as u64,
            Scalar::U32(v) => v as u64,
            Scalar::F16(v) => v.to_bits() as u64,
            Scalar::BF16(v) => v.to_bits() as u64,
            Scalar::I64(v) => v as u64,
            Scalar::U8(v) => v as u64,
            Scalar::Bool(v) => v as u64,
        }
    }

    /// Zero of `dtype`.
    pub fn zero(dtype: DType) -> Scalar {
        match dtype {
            DType::F32 => Scalar::F32(0.0),
            DType::F64 => Scalar::F64(0.0),
            DType::I32 => Scalar::I32(0),
            DType::U32 => Scalar::U32(0),
            DType::F16 => Scalar::F16(f16::ZERO),
            DType::BF16 => Scalar::BF16(bf16::ZERO),
            DType::I64 => Scalar::I64(0),
            DType::U8 => Scalar::U8(0),
            DType::Bool => Scalar::Bool(false),
        }
    }
}

impl PartialEq for Scalar {
    fn eq(&self, other: &Self) -> bool {
        self.dtype() == other.dtype() && self.to_bits() == other.to_bits()
    }
}

impl Eq for Scalar {}

impl Hash for Scalar {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.dtype().hash(state);
        self.to_bits().hash(state);
    }
}

impl fmt::Display for Scalar {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Scalar::F32(v) => write!(f, "{v:?}f32"),
            Scalar::F64(v) => write!(f, "{v:?}f64"),
            Scalar::I32(v) => write!(f, "{v}i32"),
            Scalar::U32(v) => write!(f, "{v}u32"),
            Scalar::F16(v) => write!(f, "{v:?}f16"),
            Scalar::BF16(v) => write!(f, "{v:?}bf16"),
            Scalar::I64(v) => write!(f, "{v}i64"),
            Scalar::U8(v) => write!(f, "{v}u8"),
            Scalar::Bool(v) => write!(f, "{v}"),
        }
    }
}

/// Borrowed host data of any dtype, as handed to [`crate::DeviceBackend::upload`].
#[derive(Copy, Clone, Debug)]
pub enum HostSlice<'a> {
    /// f32 elements.
    F32(&'a [f32]),
    /// f64 elements.
    F64(&'a [f64]),
    /// i32 elements.
    I32(&'a [i32]),
    /// u32 elements.
    U32(&'a [u32]),
    /// f16 elements.
    F16(&'a [f16]),
    /// bf16 elements.
    BF16(&'a [bf16]),
    /// i64 elements.
    I64(&'a [i64]),
    /// u8 elements.
    U8(&'a [u8]),
    /// bool elements.
    Bool(&'a [bool]),
}

impl HostSlice<'_> {
    /// The elements' dtype.
    pub fn dtype(&self) -> DType {
        match self {
            HostSlice::F32(_) => DType::F32,
            HostSlice::F64(_) => DType::F64,
            HostSlice::I32(_) => DType::I32,
            HostSlice::U32(_) => DType::U32,
            HostSlice::F16(_) => DType::F16,
            HostSlice::BF16(_) => DType::BF16,
            HostSlice::I64(_) => DType::I64,
            HostSlice::U8(_) => DType::U8,
            HostSlice::Bool(_) => DType::Bool,
        }
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        match self {
            HostSlice::F32(s) => s.len(),
            HostSlice::F64(s) => s.len(),
            HostSlice::I32(s) => s.len(),
            HostSlice::U32(s) => s.len(),
            HostSlice::F16(s) => s.len(),
            HostSlice::BF16(s) => s.len(),
            HostSlice::I64(s) => s.len(),
            HostSlice::U8(s) => s.len(),
            HostSlice::Bool(s) => s.len(),
        }
    }

    /// True when there are no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Copies the elements into an owned [`HostVec`].
    pub fn to_host_vec(self) -> HostVec {
        match self {
            HostSlice::F32(s) => HostVec::F32(s.to_vec()),
            HostSlice::F64(s) => HostVec::F64(s.to_vec()),
            HostSlice::I32(s) => HostVec::I32(s.to_vec()),
            HostSlice::U32(s) => HostVec::U32(s.to_vec()),
            HostSlice::F16(s) => HostVec::F16(s.to_vec()),
            HostSlice::BF16(s) => HostVec::BF16(s.to_vec()),
            HostSlice::I64(s) => HostVec::I64(s.to_vec()),
            HostSlice::U8(s) => HostVec::U8(s.to_vec()),
            HostSlice::Bool(s) => HostVec::Bool(s.to_vec()),
        }
    }
}

/// Owned host data of any dtype, as returned by [`crate::DeviceBackend::download`].
#[derive(Clone, Debug, PartialEq)]
pub enum HostVec {
    /// f32 elements.
    F32(Vec<f32>),
    /// f64 elements.
    F64(Vec<f64>),
    /// i32 elements.
    I32(Vec<i32>),
    /// u32 elements.
    U32(Vec<u32>),
    /// f16 elements.
    F16(Vec<f16>),
    /// bf16 elements.
    BF16(Vec<bf16>),
    /// i64 elements.
    I64(Vec<i64>),
    /// u8 elements.
    U8(Vec<u8>),
    /// bool elements.
    Bool(Vec<bool>),
}

impl HostVec {
    /// The elements' dtype.
    pub fn dtype(&self) -> DType {
        self.as_slice().dtype()
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.as_slice().len()
    }

    /// True when there are no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Borrows the elements.
    pub fn as_slice(&self) -> HostSlice<'_> {
        match self {
            HostVec::F32(v) => HostSlice::F32(v),
            HostVec::F64(v) => HostSlice::F64(v),
            HostVec::I32(v) => HostSlice::I32(v),
            HostVec::U32(v) => HostSlice::U32(v),
            HostVec::F16(v) => HostSlice::F16(v),
            HostVec::BF16(v) => HostSlice::BF16(v),
            HostVec::I64(v) => HostSlice::I64(v),
            HostVec::U8(v) => HostSlice::U8(v),
            HostVec::Bool(v) => HostSlice::Bool(v),
        }
    }
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for f32 {}
    impl Sealed for f64 {}
    impl Sealed for i32 {}
    impl Sealed for u32 {}
    impl Sealed for super::f16 {}
    impl Sealed for super::bf16 {}
    impl Sealed for i64 {}
    impl Sealed for u8 {}
    impl Sealed for bool {}
}

/// A Rust scalar type that polycompute arrays can hold: `f32`, `f64`, `i32`, `u32`, `i64`,
/// `u8`, `bool`, and the half types [`f16`](struct@f16) and [`bf16`] of the `half` crate
/// (re-exported here).
///
/// ```
/// use polycompute_core::{bf16, f16, DType, Element};
/// assert_eq!(<f32 as Element>::DTYPE, DType::F32);
/// assert_eq!(<f16 as Element>::DTYPE, DType::F16);
/// assert_eq!(bf16::from_f32(1.5).to_scalar().dtype(), DType::BF16);
/// assert_eq!(<bool as Element>::DTYPE, DType::Bool);
/// assert_eq!(7i64.to_scalar(), polycompute_core::Scalar::I64(7));
/// ```
pub trait Element:
    sealed::Sealed
    + Copy
    + Default
    + PartialEq
    + PartialOrd
    + fmt::Debug
    + fmt::Display
    + Send
    + Sync
    + Serialize
    + for<'de> Deserialize<'de>
    + 'static
{
    /// The runtime dtype of `Self`.
    const DTYPE: DType;
    /// The element type of `mean`: the type itself for floats (halves too: numpy's float16
    /// mean is float16), f64 for integers (as numpy).
    type Mean: Element;
    /// Wraps a value as a [`Scalar`].
    fn to_scalar(self) -> Scalar;
    /// Unwraps a [`Scalar`] of the same dtype.
    fn from_scalar(s: Scalar) -> Option<Self>;
    /// Views host elements as a [`HostSlice`].
    fn host_slice(data: &[Self]) -> HostSlice<'_>;
    /// Takes the elements out of a [`HostVec`] of the same dtype.
    fn from_host_vec(v: HostVec) -> Option<Vec<Self>>;
}

macro_rules! element {
    ($t:ty, $variant:ident, $mean:ty) => {
        impl Element for $t {
            const DTYPE: DType = DType::$variant;
            type Mean = $mean;
            fn to_scalar(self) -> Scalar {
                Scalar::$variant(self)
            }
            fn from_scalar(s: Scalar) -> Option<Self> {
                match s {
                    Scalar::$variant(v) => Some(v),
                    _ => None,
                }
            }
            fn host_slice(data: &[Self]) -> HostSlice<'_> {
                HostSlice::$variant(data)
            }
            fn from_host_vec(v: HostVec) -> Option<Vec<Self>> {
                match v {
                    HostVec::$variant(v) => Some(v),
                    _ => None,
                }
            }
        }
    };
}

element!(f32, F32, f32);
element!(f64, F64, f64);
element!(i32, I32, f64);
element!(u32, U32, f64);
element!(f16, F16, f16);
element!(bf16, BF16, bf16);
element!(i64, I64, f64);
element!(u8, U8, f64);
element!(bool, Bool, f64);
