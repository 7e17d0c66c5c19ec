//! Finding the driver and describing a device.
//!
//! The driver and NVRTC are loaded at run time, so a machine without them gets an error it can
//! print, not a crash at start-up.

use cudarc::driver::{result, sys, CudaContext, DriverError};

use crate::error::{Error, Result};

/// What a measurement needs to say about the device it ran on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceInfo {
    /// Ordinal among visible devices.
    pub ordinal: usize,
    /// Marketing name, e.g. `NVIDIA H200`.
    pub name: String,
    /// Compute capability (major, minor).
    pub compute_capability: (i32, i32),
    /// Streaming multiprocessors.
    pub sm_count: i32,
    /// Total device memory in bytes.
    pub total_memory: usize,
    /// Peak SM clock in kHz as the driver reports it (0 if it does not).
    pub sm_clock_khz: i32,
    /// Peak memory clock in kHz (0 if not reported).
    pub memory_clock_khz: i32,
    /// Width of the device-memory bus in bits (0 if not reported).
    pub memory_bus_bits: i32,
    /// L2 size in bytes.
    pub l2_bytes: i32,
    /// PCI bus id, `domain:bus:device`.
    pub pci_bus_id: String,
    /// Driver API version, e.g. 13000 for CUDA 13.0.
    pub driver_version: i32,
    /// NVRTC version (major, minor).
    pub nvrtc_version: (i32, i32),
}

impl DeviceInfo {
    /// The device memory's peak bandwidth in bytes per ns (= GB/s), from its memory clock and
    /// bus width (two transfers a clock): what no kernel's reads exceed. `None` where the
    /// driver reports either as 0.
    pub fn peak_memory_bytes_per_ns(&self) -> Option<f64> {
        (self.memory_clock_khz > 0 && self.memory_bus_bits > 0).then(|| {
            2.0 * self.memory_clock_khz as f64 * 1e3 * (self.memory_bus_bits as f64 / 8.0) / 1e9
        })
    }

    /// `13.0` from `13000`.
    pub fn driver_version_string(&self) -> String {
        format!(
            "{}.{}",
            self.driver_version / 1000,
            (self.driver_version % 1000) / 10
        )
    }
}

/// Loads and initialises the driver, or says why not.
pub(crate) fn init_driver() -> Result<()> {
    // SAFETY: only tries to dlopen the library; no driver function is called.
    if !unsafe { sys::is_culib_present() } {
        return Err(Error::DriverNotFound);
    }
    result::init().map_err(|source| match source.0 {
        sys::CUresult::CUDA_ERROR_NO_DEVICE => Error::NoDevice {
            detail: crate::error::describe(&source),
        },
        _ => Error::Driver {
            call: "cuInit",
            device: 0,
            source,
        },
    })
}

/// Number of visible CUDA devices. Errors when the driver cannot be loaded or initialised.
pub fn device_count() -> Result<usize> {
    init_driver()?;
    let n = result::device::get_count().map_err(|source| Error::Driver {
        call: "cuDeviceGetCount",
        device: 0,
        source,
    })?;
    Ok(n.max(0) as usize)
}

/// Checks that NVRTC can be loaded.
pub(crate) fn require_nvrtc() -> Result<()> {
    // SAFETY: only tries to dlopen the library.
    if unsafe { cudarc::nvrtc::sys::is_culib_present() } {
        Ok(())
    } else {
        Err(Error::NvrtcNotFound)
    }
}

pub(crate) fn describe_device(ctx: &CudaContext, ordinal: usize) -> Result<DeviceInfo> {
    let err = |call: &'static str| {
        move |source: DriverError| Error::Driver {
            call,
            device: ordinal,
            source,
        }
    };
    let attr = |a: sys::CUdevice_attribute| ctx.attribute(a).unwrap_or(0);
    use sys::CUdevice_attribute as A;
    let mut driver_version = 0;
    // SAFETY: a valid pointer to an int; the driver is initialised.
    unsafe { sys::cuDriverGetVersion(&mut driver_version) }
        .result()
        .map_err(err("cuDriverGetVersion"))?;
    Ok(DeviceInfo {
        ordinal,
        name: ctx.name().map_err(err("cuDeviceGetName"))?,
        compute_capability: ctx
            .compute_capability()
            .map_err(err("cuDeviceGetAttribute"))?,
        sm_count: attr(A::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT),
        total_memory: ctx.total_mem().map_err(err("cuDeviceTotalMem"))?,
        sm_clock_khz: attr(A::CU_DEVICE_ATTRIBUTE_CLOCK_RATE),
        memory_clock_khz: attr(A::CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE),
        memory_bus_bits: attr(A::CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH),
        l2_bytes: attr(A::CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE),
        pci_bus_id: format!(
            "{:04x}:{:02x}:{:02x}",
            attr(A::CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID),
            attr(A::CU_DEVICE_ATTRIBUTE_PCI_BUS_ID),
            attr(A::CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID)
        ),
        driver_version,
        nvrtc_version: crate::kernels::nvrtc_version(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h200(memory_clock_khz: i32, memory_bus_bits: i32) -> DeviceInfo {
        DeviceInfo {
            ordinal: 0,
            name: "x".into(),
            compute_capability: (9, 0),
            sm_count: 132,
            total_memory: 1,
            sm_clock_khz: 0,
            memory_clock_khz,
            memory_bus_bits,
            l2_bytes: 0,
            pci_bus_id: String::new(),
            driver_version: 13000,
            nvrtc_version: (13, 0),
        }
    }

    #[test]
    fn driver_version_reads_as_major_minor() {
        let info = h200(0, 0);
        assert_eq!(info.driver_version_string(), "13.0");
        let info = DeviceInfo {
            driver_version: 12080,
            ..info
        };
        assert_eq!(info.driver_version_string(), "12.8");
    }

    #[test]
    fn peak_memory_bandwidth_is_two_transfers_a_clock_over_the_bus() {
        // 2 × 3.201 GHz × 768 bytes.
        let peak = h200(3_201_000, 6144).peak_memory_bytes_per_ns().unwrap();
        assert!((peak - 4916.736).abs() < 1e-6, "{peak}");
        assert_eq!(h200(3_201_000, 0).peak_memory_bytes_per_ns(), None);
        assert_eq!(h200(0, 6144).peak_memory_bytes_per_ns(), None);
    }
}
