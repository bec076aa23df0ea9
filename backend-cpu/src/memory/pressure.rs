//! Whether the system is short of memory, so that cached blocks should go back to it.

/// True when less than a tenth of the machine's memory is available (Linux:
/// `MemAvailable` against `MemTotal` in `/proc/meminfo`). Elsewhere, or when the file
/// cannot be read, false: the cache then relies on its bound and on allocation failures.
pub(crate) fn memory_is_low() -> bool {
    match available_and_total() {
        Some((available, total)) => available < total / 10,
        None => false,
    }
}

/// The machine's memory in bytes, when known: the cache's default bound is a share of it.
pub(crate) fn total_memory() -> Option<u64> {
    available_and_total().map(|(_, total)| total)
}

#[cfg(target_os = "linux")]
fn available_and_total() -> Option<(u64, u64)> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let field = |name: &str| -> Option<u64> {
        let line = text.lines().find(|l| l.starts_with(name))?;
        let kib: u64 = line[name.len()..].trim().trim_end_matches("kB").trim().parse().ok()?;
        Some(kib * 1024)
    };
    Some((field("MemAvailable:")?, field("MemTotal:")?))
}

#[cfg(not(target_os = "linux"))]
fn available_and_total() -> Option<(u64, u64)> {
    None
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    #[test]
    fn meminfo_is_read_on_linux() {
        let (available, total) = super::available_and_total().expect("/proc/meminfo");
        assert!(available > 0 && available <= total, "{available} of {total}");
    }
}
