//! Keeps the measuring thread on the CPUs next to the GPU.
//!
//! Host launch cost depends on where the issuing thread runs: on a multi-socket host, a core
//! on the GPU's own NUMA node writes the driver's command buffers and doorbells faster than a
//! core across the socket link. A process the scheduler happens to place far from the GPU
//! measures every eager launch slower, so two runs in a row disagree by more than their own
//! noise. The PCI device's `local_cpulist` in sysfs names the near CPUs; the thread is
//! restricted to them (all of them: the scheduler still picks among them).

use std::path::PathBuf;

/// Where the measuring thread may run after [`pin_near`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Placement {
    /// Restricted to these CPUs (sysfs list syntax, e.g. `0-31,64-95`).
    Pinned(String),
    /// Left as it was, and why.
    Unpinned(String),
}

impl std::fmt::Display for Placement {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Placement::Pinned(cpus) => write!(f, "host thread on the GPU's local CPUs {cpus}"),
            Placement::Unpinned(why) => write!(f, "host thread not pinned ({why})"),
        }
    }
}

/// Parses sysfs CPU list syntax (`0-3,8,10-11`) into CPU numbers.
pub fn parse_cpulist(s: &str) -> Option<Vec<usize>> {
    let mut out = Vec::new();
    for part in s.trim().split(',').filter(|p| !p.is_empty()) {
        match part.split_once('-') {
            Some((a, b)) => {
                let (a, b): (usize, usize) = (a.parse().ok()?, b.parse().ok()?);
                if a > b || b >= 1 << 16 {
                    return None;
                }
                out.extend(a..=b);
            }
            None => out.push(part.parse().ok()?),
        }
    }
    (!out.is_empty()).then_some(out)
}

/// The sysfs directory of a PCI device from the driver's `domain:bus:device` id.
fn sysfs_dir(pci_bus_id: &str) -> PathBuf {
    PathBuf::from("/sys/bus/pci/devices").join(format!("{}.0", pci_bus_id.to_lowercase()))
}

/// Restricts the calling thread to the CPUs local to the GPU at `pci_bus_id`.
pub fn pin_near(pci_bus_id: &str) -> Placement {
    let path = sysfs_dir(pci_bus_id).join("local_cpulist");
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) => return Placement::Unpinned(format!("cannot read {}: {e}", path.display())),
    };
    let Some(cpus) = parse_cpulist(&text) else {
        return Placement::Unpinned(format!("{} is not a CPU list", path.display()));
    };
    match set_affinity(&cpus) {
        Ok(()) => Placement::Pinned(text.trim().to_string()),
        Err(e) => Placement::Unpinned(format!("sched_setaffinity: {e}")),
    }
}

#[cfg(target_os = "linux")]
fn set_affinity(cpus: &[usize]) -> std::io::Result<()> {
    // SAFETY: cpu_set_t is plain data; CPU_ZERO/CPU_SET write inside it (CPU_SET ignores
    // numbers past its capacity), and sched_setaffinity reads it for the calling thread (0).
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_ZERO(&mut set);
        for &c in cpus {
            libc::CPU_SET(c, &mut set);
        }
        if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

#[cfg(not(target_os = "linux"))]
fn set_affinity(_: &[usize]) -> std::io::Result<()> {
    Err(std::io::Error::other("not supported on this OS"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_lists_parse_like_sysfs() {
        assert_eq!(
            parse_cpulist("0-3,8,10-11\n"),
            Some(vec![0, 1, 2, 3, 8, 10, 11])
        );
        assert_eq!(parse_cpulist("5"), Some(vec![5]));
        assert_eq!(parse_cpulist(""), None);
        assert_eq!(parse_cpulist("3-1"), None);
        assert_eq!(parse_cpulist("a-b"), None);
    }

    #[test]
    fn sysfs_path_follows_the_bus_id() {
        assert_eq!(
            sysfs_dir("0000:1B:00"),
            PathBuf::from("/sys/bus/pci/devices/0000:1b:00.0")
        );
    }

    #[test]
    fn a_missing_device_leaves_the_thread_alone() {
        match pin_near("ffff:ff:ff") {
            Placement::Unpinned(why) => assert!(why.contains("cannot read"), "{why}"),
            other => panic!("{other:?}"),
        }
    }
}
