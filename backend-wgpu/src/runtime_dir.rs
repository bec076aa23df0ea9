//! A private `XDG_RUNTIME_DIR` for Mesa's GL driver when the environment has none.
//!
//! While wgpu enumerates adapters, its GL backend probes for a Wayland display, and
//! libwayland prints "error: XDG_RUNTIME_DIR is invalid or not set in the environment." on
//! every probe when the variable is unset or not an absolute path to a directory: the normal
//! state of an ssh session or a container, where it would land in the user's terminal from
//! every command. So before the first wgpu instance, such a process gets a private runtime
//! directory (`$TMPDIR/polycompute-runtime-{uid}`, mode 0700, owned by the user, reused by
//! later processes); with one it cannot make, it keeps its environment (and Mesa its noise).

#[cfg(all(unix, not(target_vendor = "apple")))]
mod imp {
    use std::ffi::OsStr;
    use std::fs::{self, DirBuilder};
    use std::io;
    use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
    use std::path::{Path, PathBuf};
    use std::sync::Once;

    const VAR: &str = "XDG_RUNTIME_DIR";

    /// Sets `XDG_RUNTIME_DIR` to a private directory when it is missing or invalid; once per
    /// process, before wgpu creates an instance (Mesa reads the variable only then).
    pub(crate) fn ensure() {
        static ONCE: Once = Once::new();
        ONCE.call_once(|| {
            if std::env::var_os(VAR).is_some_and(|v| usable(&v)) {
                return;
            }
            match private_dir() {
                // Every wgpu instance is made after this `Once` (adapter::instance), so no
                // thread is inside the driver reading the environment while it changes.
                Ok(dir) => std::env::set_var(VAR, dir),
                Err(e) => tracing::debug!("no private {VAR} for Mesa's GL driver: {e}"),
            }
        });
    }

    /// What libwayland accepts: an absolute path to a directory.
    pub(super) fn usable(v: &OsStr) -> bool {
        let p = Path::new(v);
        p.is_absolute() && p.is_dir()
    }

    /// `$TMPDIR/polycompute-runtime-{uid}`, created 0700, or reused only if it is a directory
    /// (not a link) of ours with exactly that mode.
    fn private_dir() -> io::Result<PathBuf> {
        // SAFETY: getuid takes no arguments, cannot fail and touches no memory of ours.
        let uid = unsafe { libc::getuid() };
        let dir = std::env::temp_dir().join(format!("polycompute-runtime-{uid}"));
        match DirBuilder::new().mode(0o700).create(&dir) {
            // The umask may have cleared bits: set the mode exactly.
            Ok(()) => fs::set_permissions(&dir, fs::Permissions::from_mode(0o700))?,
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(e),
        }
        let meta = fs::symlink_metadata(&dir)?;
        if !meta.is_dir() || meta.uid() != uid || meta.mode() & 0o777 != 0o700 {
            return Err(io::Error::other(format!("{} exists but is not a 0700 directory of uid {uid}", dir.display())));
        }
        Ok(dir)
    }
}

#[cfg(all(unix, not(target_vendor = "apple")))]
pub(crate) use imp::ensure;

/// No Wayland, no Mesa GL probe to quiet.
#[cfg(not(all(unix, not(target_vendor = "apple"))))]
pub(crate) fn ensure() {}

#[cfg(all(test, unix, not(target_vendor = "apple")))]
mod tests {
    use super::imp::usable;
    use std::ffi::OsStr;

    #[test]
    fn only_an_absolute_directory_is_usable() {
        assert!(usable(std::env::temp_dir().as_os_str()));
        assert!(!usable(OsStr::new("relative/dir")));
        assert!(!usable(OsStr::new("")));
        assert!(!usable(OsStr::new("/nonexistent/polycompute/runtime")));
    }
}
