//! [`DeviceId`]: which device, as a small `Copy` value — the backend kind and the ordinal.
//!
//! Errors, the registry's open devices and the pool's worker slots all name a device; a
//! `Copy` id keeps that naming cheap and typed (no string to parse back), while its text
//! form, `"{kind}:{ordinal}"`, stays the one users see in the CLI, in `--json` output and in
//! `POLYCOMPUTE_BACKEND`.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::backend::BackendKind;
use crate::error::Error;

/// One device: a backend kind and the device's index among that backend's devices.
///
/// Displays, serializes and parses as `"{kind}:{ordinal}"`; parsing also accepts a bare
/// kind (ordinal 0) and any letter case:
///
/// ```
/// use polycompute_core::{BackendKind, DeviceId};
///
/// let id: DeviceId = "cuda:1".parse()?;
/// assert_eq!(id, DeviceId::new(BackendKind::Cuda, 1));
/// assert_eq!(id.to_string(), "cuda:1");
/// assert_eq!(id, "cuda:1"); // compares with the text form
/// assert_eq!("WGPU".parse::<DeviceId>()?, DeviceId::new(BackendKind::Wgpu, 0));
/// # Ok::<(), polycompute_core::Error>(())
/// ```
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct DeviceId {
    /// The backend.
    pub kind: BackendKind,
    /// Index among the backend's devices.
    pub ordinal: usize,
}

impl DeviceId {
    /// The id of device `ordinal` of backend `kind`.
    pub const fn new(kind: BackendKind, ordinal: usize) -> DeviceId {
        DeviceId { kind, ordinal }
    }
}

impl fmt::Display for DeviceId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.kind, self.ordinal)
    }
}

impl FromStr for DeviceId {
    type Err = Error;

    /// `"{kind}"` or `"{kind}:{ordinal}"`; anything else is [`Error::UnknownDevice`].
    fn from_str(s: &str) -> Result<DeviceId, Error> {
        let unknown = || Error::UnknownDevice(s.to_string());
        let (kind, ordinal) = match s.trim().split_once(':') {
            Some((k, o)) => (k, o.trim().parse::<usize>().map_err(|_| unknown())?),
            None => (s.trim(), 0),
        };
        let kind = BackendKind::parse(kind).ok_or_else(unknown)?;
        Ok(DeviceId { kind, ordinal })
    }
}

impl PartialEq<str> for DeviceId {
    fn eq(&self, other: &str) -> bool {
        other.parse::<DeviceId>().is_ok_and(|o| o == *self)
    }
}

impl PartialEq<&str> for DeviceId {
    fn eq(&self, other: &&str) -> bool {
        *self == **other
    }
}

impl PartialEq<String> for DeviceId {
    fn eq(&self, other: &String) -> bool {
        *self == **other
    }
}

impl From<DeviceId> for String {
    fn from(id: DeviceId) -> String {
        id.to_string()
    }
}

impl Serialize for DeviceId {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for DeviceId {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<DeviceId, D::Error> {
        let text = String::deserialize(deserializer)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_displays_and_round_trips() {
        assert_eq!("cuda:1".parse::<DeviceId>().unwrap(), DeviceId::new(BackendKind::Cuda, 1));
        assert_eq!(" Wgpu ".parse::<DeviceId>().unwrap(), DeviceId::new(BackendKind::Wgpu, 0));
        assert!(matches!("tpu".parse::<DeviceId>(), Err(Error::UnknownDevice(_))));
        assert!(matches!("cpu:x".parse::<DeviceId>(), Err(Error::UnknownDevice(_))));
        assert!(matches!("cpu:-1".parse::<DeviceId>(), Err(Error::UnknownDevice(_))));
        let id = DeviceId::new(BackendKind::Cpu, 0);
        assert_eq!(id.to_string(), "cpu:0");
        assert_eq!(id, "cpu:0");
        assert_eq!(id, "cpu");
        assert_ne!(id, "cpu:1");
        assert_ne!(id, "nonsense");
    }

    #[test]
    fn serializes_as_its_text() {
        let id = DeviceId::new(BackendKind::Wgpu, 3);
        let json = serde_json::to_string(&id).unwrap();
        assert_eq!(json, "\"wgpu:3\"");
        assert_eq!(serde_json::from_str::<DeviceId>(&json).unwrap(), id);
        assert!(serde_json::from_str::<DeviceId>("\"gpu:0\"").is_err());
    }
}
