//! [`backend_buffer!`](crate::backend_buffer): the one implementation of [`DeviceBuffer`]
//! and [`BackendBuffer`] that every backend's buffer type shares. Each backend used to
//! write the same four methods by hand; the macro keeps them identical (and `as_any`
//! returning the concrete type, which the blanket layer's downcast relies on).
//!
//! [`DeviceBuffer`]: crate::DeviceBuffer
//! [`BackendBuffer`]: crate::BackendBuffer

/// Implements [`DeviceBuffer`](crate::DeviceBuffer) and
/// [`BackendBuffer`](crate::BackendBuffer) for a backend's buffer type from its fields
/// `dtype: DType`, `len: usize` (elements) and `owner: DeviceToken` (the device instance
/// that made it); `as_any` returns the buffer itself, for the owning backend's downcast.
/// The type must also be `Debug + Send + Sync + 'static`, as `DeviceBuffer` requires.
///
/// ```
/// use polycompute_core::{BackendBuffer, DType, DeviceBuffer, DeviceToken};
///
/// /// A backend's buffer: its memory, and the three fields the macro reads.
/// #[derive(Debug)]
/// struct MyBuffer {
///     words: Vec<u32>,
///     dtype: DType,
///     len: usize,
///     owner: DeviceToken,
/// }
///
/// polycompute_core::backend_buffer!(MyBuffer);
///
/// let owner = DeviceToken::fresh();
/// let buffer = MyBuffer { words: vec![0; 4], dtype: DType::F32, len: 4, owner };
/// assert_eq!((buffer.dtype(), buffer.len(), buffer.owner()), (DType::F32, 4, owner));
/// assert_eq!(buffer.words.len(), buffer.len());
/// assert!(buffer.as_any().downcast_ref::<MyBuffer>().is_some());
/// ```
#[macro_export]
macro_rules! backend_buffer {
    ($buffer:ty) => {
        impl $crate::DeviceBuffer for $buffer {
            fn dtype(&self) -> $crate::DType {
                self.dtype
            }
            fn len(&self) -> usize {
                self.len
            }
            fn as_any(&self) -> &dyn ::std::any::Any {
                self
            }
        }

        impl $crate::BackendBuffer for $buffer {
            fn owner(&self) -> $crate::DeviceToken {
                self.owner
            }
        }
    };
}
