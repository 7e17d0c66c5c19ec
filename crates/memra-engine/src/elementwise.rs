//! The work-doing stand-in: an element-wise kernel over data the L2 keeps, then a wait, for
//! element-wise kernels that run beside other streams' work.
//!
//! Short element-wise kernels over data the L2 holds slow each other side by side by what
//! they move in their time: on an H100, PyTorch's own element-wise kernels over the recorded
//! bytes, as long alone as the real lanes, slowed each other by four fifths of what the real
//! lanes did; empty kernels of the same grids by a third, and stand-ins that read fewer bytes
//! in the same time by half (`scripts/stand_in_lanes_probe.py`). This one moves the bytes as
//! such a kernel does and then waits out the kernel's time.

use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::kernels::Kernel;
use crate::launch::LaunchShape;
use crate::memory::{DeviceBuffer, DeviceCopy};

impl Engine {
    /// An element-wise kernel over data the L2 keeps, then a wait: each of the first
    /// `result_bytes` of `dst` (whole 16-byte words) becomes the sum of the words at its index
    /// in each of `inputs` arrays packed one after another at the start of `src`, with every
    /// thread's loads for four results in flight before any sum; then the grid lasts until
    /// `ns` of GPU time have passed since it started, and records its span in `slots[slot]`
    /// like [`Engine::spin_grid`]. Stands in for an element-wise kernel beside other streams:
    /// what such kernels cost each other follows the bytes they move in their time, which a
    /// spin or an empty kernel does not move (`scripts/stand_in_lanes_probe.py`).
    #[allow(clippy::too_many_arguments)]
    pub fn elementwise_l2<T: DeviceCopy, U: DeviceCopy>(
        &self,
        src: &DeviceBuffer<T>,
        dst: &mut DeviceBuffer<U>,
        result_bytes: usize,
        inputs: u32,
        ns: u64,
        shape: LaunchShape,
        slots: &mut DeviceBuffer<u64>,
        slot: usize,
    ) -> Result<()> {
        const OP: &str = "elementwise_l2";
        let core = &self.inner.core;
        src.check_owner(core, OP, "src")?;
        dst.check_owner(core, OP, "dst")?;
        if result_bytes % 16 != 0 || inputs == 0 {
            return Err(Error::InvalidArgument {
                op: OP,
                what: format!(
                    "{result_bytes} result bytes must be whole 16-byte words and inputs ({inputs}) at least 1"
                ),
            });
        }
        let read =
            result_bytes
                .checked_mul(inputs as usize)
                .ok_or_else(|| Error::InvalidArgument {
                    op: OP,
                    what: format!("{inputs} inputs of {result_bytes} bytes overflow"),
                })?;
        core.check_len(OP, "src (bytes)", read, src.num_bytes())?;
        core.check_len(OP, "dst (bytes)", result_bytes, dst.num_bytes())?;
        shape.validate(OP)?;
        let offset = self.spin_grid_checked(OP, slots, slot)?;
        self.kernel(Kernel::ElementWiseL2)
            .buf(src)
            .buf(dst)
            .u64((result_bytes / 16) as u64)
            .u32(inputs)
            .u64(ns)
            .buf_at(slots, offset)
            .run(shape)
    }
}
