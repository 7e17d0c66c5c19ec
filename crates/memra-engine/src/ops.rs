//! The engine's kernel launches: the element-wise `add`, the empty `noop`, and the timed spins
//! that stand in for recorded kernels.

use std::ffi::c_void;

use cudarc::driver::{result, sys};

use crate::engine::{Engine, LaunchShape};
use crate::error::{Error, Result};
use crate::memory::{DeviceBuffer, DeviceCopy};

/// Threads per block for element-wise kernels.
const BLOCK: u32 = 256;

impl Engine {
    /// `y[i] = a[i] + b[i]` for `i < n`, on the engine stream.
    pub fn add(
        &self,
        a: &DeviceBuffer<f32>,
        b: &DeviceBuffer<f32>,
        y: &mut DeviceBuffer<f32>,
        n: usize,
    ) -> Result<()> {
        let inner = &self.inner;
        inner.owns(a, "add", "a")?;
        inner.owns(b, "add", "b")?;
        inner.owns(y, "add", "y")?;
        inner.check_len("add", "a", n, a.len())?;
        inner.check_len("add", "b", n, b.len())?;
        inner.check_len("add", "y", n, y.len())?;
        if n == 0 {
            return Ok(());
        }
        let n32 = u32::try_from(n).map_err(|_| Error::InvalidArgument {
            op: "add",
            what: format!("{n} elements exceed the kernel's 32-bit index"),
        })?;
        let (mut pa, mut pb, mut py, mut pn) =
            (a.device_ptr()?, b.device_ptr()?, y.device_ptr()?, n32);
        let mut params: [*mut c_void; 4] = [
            (&mut pa as *mut sys::CUdeviceptr).cast(),
            (&mut pb as *mut sys::CUdeviceptr).cast(),
            (&mut py as *mut sys::CUdeviceptr).cast(),
            (&mut pn as *mut u32).cast(),
        ];
        let shape = LaunchShape {
            grid: (n32.div_ceil(BLOCK), 1, 1),
            block: (BLOCK, 1, 1),
        };
        // SAFETY: the parameters match add_f32(const float*, const float*, float*, unsigned);
        // all three buffers hold at least n elements and belong to this engine.
        unsafe { inner.launch(&inner.kernels.add_f32, "add_f32", shape, &mut params) }
    }

    /// Launches the empty kernel with one block of one thread: the cheapest possible launch.
    pub fn noop(&self) -> Result<()> {
        let shape = LaunchShape {
            grid: (1, 1, 1),
            block: (1, 1, 1),
        };
        // SAFETY: noop() takes no parameters.
        unsafe {
            self.inner
                .launch(&self.inner.kernels.noop, "noop", shape, &mut [])
        }
    }

    /// Launches a kernel that keeps every thread of `shape` busy for `ns` nanoseconds of the
    /// GPU clock, then writes the elapsed time to `sink[0]` if given. Stands in for a recorded
    /// kernel of known duration and launch shape.
    pub fn spin(
        &self,
        ns: u64,
        shape: LaunchShape,
        sink: Option<&mut DeviceBuffer<u32>>,
    ) -> Result<()> {
        shape.validate("spin")?;
        let mut p_sink: sys::CUdeviceptr = match sink {
            Some(s) => {
                self.inner.owns(s, "spin", "sink")?;
                self.inner.check_len("spin", "sink", 1, s.len())?;
                s.device_ptr()?
            }
            None => 0,
        };
        let mut p_ns = ns;
        let mut params: [*mut c_void; 2] = [
            (&mut p_ns as *mut u64).cast(),
            (&mut p_sink as *mut sys::CUdeviceptr).cast(),
        ];
        // SAFETY: matches spin_ns(unsigned long long, unsigned*); sink is null or holds ≥ 1.
        unsafe {
            self.inner
                .launch(&self.inner.kernels.spin_ns, "spin_ns", shape, &mut params)
        }
    }

    /// Words of a [`Engine::spin_grid`] slot.
    pub const SPIN_SLOT_WORDS: usize = 4;

    /// Launches a kernel of `shape` that runs for about `ns` nanoseconds as a whole, in however
    /// many waves its grid needs, and records its own span (first block start to last block
    /// end, ns) in `slots[slot * 4 + 2]`. Slots must start zeroed and are reset by the kernel,
    /// so one slot can serve the same op in every graph replay; two ops must not share a slot.
    pub fn spin_grid(
        &self,
        ns: u64,
        shape: LaunchShape,
        slots: &mut DeviceBuffer<u64>,
        slot: usize,
    ) -> Result<()> {
        shape.validate("spin_grid")?;
        self.inner.owns(slots, "spin_grid", "slots")?;
        let need = slot
            .checked_add(1)
            .and_then(|s| s.checked_mul(Self::SPIN_SLOT_WORDS))
            .unwrap_or(usize::MAX);
        self.inner
            .check_len("spin_grid", "slots", need, slots.len())?;
        let mut p_ns = ns;
        let mut p_slot = slots.device_ptr()? + (slot * Self::SPIN_SLOT_WORDS * 8) as u64;
        let mut params: [*mut c_void; 2] = [
            (&mut p_ns as *mut u64).cast(),
            (&mut p_slot as *mut sys::CUdeviceptr).cast(),
        ];
        // SAFETY: matches spin_grid_ns(unsigned long long, unsigned long long*); the slot's four
        // words lie inside `slots`, which belongs to this engine.
        unsafe {
            self.inner.launch(
                &self.inner.kernels.spin_grid_ns,
                "spin_grid_ns",
                shape,
                &mut params,
            )
        }
    }

    /// Sets the first `bytes` bytes of `dst` to zero on the engine stream (a memset node in a
    /// capture).
    pub fn memset_zero<T: DeviceCopy>(
        &self,
        dst: &mut DeviceBuffer<T>,
        bytes: usize,
    ) -> Result<()> {
        self.inner.owns(dst, "memset_zero", "dst")?;
        self.inner
            .check_len("memset_zero", "dst (bytes)", bytes, dst.num_bytes())?;
        if bytes == 0 {
            return Ok(());
        }
        self.inner.bind()?;
        // SAFETY: the range lies inside dst's allocation.
        unsafe {
            result::memset_d8_async(dst.device_ptr()?, 0, bytes, self.inner.stream.cu_stream())
        }
        .map_err(|source| self.inner.driver("cuMemsetD8Async", source))
    }

    /// The raw `CUfunction` of an engine kernel (`"add_f32"`, `"noop"`, `"spin_ns"`), for
    /// issuing launches outside the engine. Valid while the engine lives.
    pub fn cu_function(&self, name: &str) -> Option<sys::CUfunction> {
        let k = &self.inner.kernels;
        match name {
            "add_f32" => Some(k.add_f32.cu_function()),
            "noop" => Some(k.noop.cu_function()),
            "spin_ns" => Some(k.spin_ns.cu_function()),
            "spin_grid_ns" => Some(k.spin_grid_ns.cu_function()),
            _ => None,
        }
    }
}
