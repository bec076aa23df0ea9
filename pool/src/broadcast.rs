//! [`BroadcastData`]: the read-only value given to the pool builder (`shared_data`) and
//! sent once to every worker. (Not to be confused with [`crate::shared`], arrays in shared
//! memory, nor with [`super::state`], what the pool's own threads share.)

use std::any::Any;
use std::sync::Arc;

use serde::de::DeserializeOwned;

use super::task::BoxError;

/// The broadcast value: the value itself in thread workers, its encoding (decoded on first
/// use) in process workers.
#[derive(Clone, Default)]
pub(crate) struct BroadcastData {
    pub(crate) value: Option<Arc<dyn Any + Send + Sync>>,
    pub(crate) type_name: String,
    pub(crate) bytes: Option<Arc<Vec<u8>>>,
    /// For MPI ranks on rank 0's node, when the value holds a `SharedArray`: its encoding
    /// with the arrays as handles (`bytes` holds them as data, for the other nodes).
    pub(crate) near_bytes: Option<Arc<Vec<u8>>>,
}

impl BroadcastData {
    /// The value as type `S`, decoded and kept on first use in a process worker.
    pub(crate) fn get<S: DeserializeOwned + Send + Sync + 'static>(&mut self) -> Result<Arc<S>, BoxError> {
        let want = std::any::type_name::<S>();
        if self.value.is_none() && self.bytes.is_none() {
            return Err("the pool has no shared data; give it with PoolBuilder::shared_data".into());
        }
        if self.type_name != want {
            return Err(format!("the pool's shared data is a {}, not a {want}", self.type_name).into());
        }
        if let Some(v) = &self.value {
            return Arc::clone(v).downcast::<S>().map_err(|_| format!("the pool's shared data is not a {want}").into());
        }
        let bytes = self.bytes.as_deref().map(Vec::as_slice).unwrap_or_default();
        let value: Arc<S> =
            Arc::new(postcard::from_bytes(bytes).map_err(|e| format!("decoding the shared data: {e}"))?);
        self.value = Some(value.clone());
        Ok(value)
    }
}
